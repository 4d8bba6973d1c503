"""Where operations come from: name stacks and the user's frames.

- Name stacks: the scopes an operation was staged in (`jax.named_scope`, `jax.named_call`).
  A thread keeps the current `NameStack`; `named_scope("layer")` extends it for its body.
  Each equation staged into a jaxpr records it as `eqn.source_info.name_stack`
  (`layer/dense`), relative to the function being traced (tracing starts from an empty
  stack, as JAX's does). Names do not change values or programs: they label operations for
  people and profilers.
- User frames: the innermost frame outside justjax and the files libraries register as their
  own (`jax.extend.source_info_util.register_exclusion`), for messages that point at the
  user's line. Each staged equation keeps the user frame it was staged from (its code object
  and instruction offset: cheap to take, resolved to file, line and column only when shown),
  which `summarize` prints as JAX does: `file.py:7:9 (g)`.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Callable, TypeVar

# justjax's own source folder, then the paths libraries register.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_exclude_paths: list[str] = [PACKAGE_DIR]


# Whether a file is a user file, per file name: asked for every staged equation.
_user_file_cache: dict[str, bool] = {}


def register_exclusion(path: str) -> None:
    """Frames of files under `path` are not user frames."""
    _exclude_paths.append(path)
    _user_file_cache.clear()


def is_user_file(filename: str) -> bool:
    known = _user_file_cache.get(filename)
    if known is None:
        known = not any(filename.startswith(path) for path in _exclude_paths)
        _user_file_cache[filename] = known
    return known


def user_frame(depth: int = 1) -> FrameType | None:
    """The innermost frame, starting `depth` frames above the caller, of a user file."""
    frame: FrameType | None = sys._getframe(depth + 1)
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True)
class NameStack:
    """The enclosing scope names, outermost first; prints as `outer/inner`."""

    stack: tuple[str, ...] = ()

    def extend(self, name: str) -> NameStack:
        return NameStack((*self.stack, name))

    def __getitem__(self, index: slice) -> NameStack:
        return NameStack(self.stack[index])

    def __len__(self) -> int:
        return len(self.stack)

    def __add__(self, other: NameStack) -> NameStack:
        return NameStack(self.stack + other.stack)

    def __str__(self) -> str:
        return "/".join(self.stack)


def new_name_stack(name: str = "") -> NameStack:
    """An empty name stack, or one holding `name`."""
    return NameStack((name,)) if name else NameStack()


@dataclass(frozen=True)
class Frame:
    """A resolved user frame (JAX's `source_info_util.Frame`)."""

    file_name: str
    function_name: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class SourceInfo:
    """Where an equation comes from (`eqn.source_info`): its name stack and the user frame it
    was staged from, as the frame's code object and instruction offset (`None`: unknown)."""

    name_stack: NameStack = NameStack()
    user_code: tuple[CodeType, int] | None = None

    def replace(self, *, name_stack: NameStack | None = None) -> SourceInfo:
        return SourceInfo(self.name_stack if name_stack is None else name_stack, self.user_code)

    @property
    def frame(self) -> Frame | None:
        """The user frame, resolved (None when unknown)."""
        return None if self.user_code is None else _resolve(*self.user_code)


@functools.lru_cache(maxsize=4096)
def _resolve(code: CodeType, lasti: int) -> Frame:
    positions = list(code.co_positions())
    start_line, end_line, start_col, end_col = positions[lasti // 2]
    return Frame(code.co_filename, code.co_qualname, start_line or code.co_firstlineno,
                 start_col or 0, end_line or 0, end_col or 0)


def summarize(source_info: SourceInfo) -> str:
    """The user frame of `source_info` as JAX prints it: `file:line:column (function)` (no
    column when it is 0); empty when there is none.

    Args:
      source_info: an equation's `source_info`.
    Returns:
      The summary.
    """
    frame = source_info.frame
    if frame is None:
        return ""
    if frame.start_column:
        return f"{frame.file_name}:{frame.start_line}:{frame.start_column} ({frame.function_name})"
    return f"{frame.file_name}:{frame.start_line} ({frame.function_name})"


_EMPTY = SourceInfo()


class _State(threading.local):
    def __init__(self) -> None:
        self.source_info = _EMPTY


_state = _State()


def current() -> SourceInfo:
    """The current name stack and, inside `user_context`, the user frame it sets."""
    return _state.source_info


def staged_here() -> SourceInfo:
    """The source info an equation staged now gets: the current name stack and the innermost
    user frame."""
    context = _state.source_info
    if context.user_code is not None:
        return context
    frame = user_frame(1)
    if frame is None:
        return context
    return SourceInfo(context.name_stack, (frame.f_code, frame.f_lasti))


class user_context:  # noqa: N801 (JAX's name)
    """Equations staged in the `with` body come from the user frame of `source_info` (when it
    has one): re-binding a jaxpr's equations keeps where they were first written."""

    __slots__ = ("user_code", "prev")

    def __init__(self, source_info: SourceInfo | None) -> None:
        self.user_code = None if source_info is None else source_info.user_code

    def __enter__(self) -> None:
        self.prev = previous = _state.source_info
        if self.user_code is not None:
            _state.source_info = SourceInfo(previous.name_stack, self.user_code)

    def __exit__(self, *exc: Any) -> None:
        _state.source_info = self.prev


def current_name_stack() -> NameStack:
    return _state.source_info.name_stack


class ExtendNameStackContextManager:
    """Adds `name` to the name stack for a `with` body, or around calls of a decorated
    function."""

    __slots__ = ("name", "prev")

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> NameStack:
        self.prev = previous = _state.source_info
        name_stack = previous.name_stack.extend(self.name)
        _state.source_info = previous.replace(name_stack=name_stack)
        return name_stack

    def __exit__(self, *exc: Any) -> None:
        _state.source_info = self.prev

    def __call__(self, fun: _F) -> _F:
        name = self.name

        @functools.wraps(fun)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with ExtendNameStackContextManager(name):
                return fun(*args, **kwargs)
        return wrapper  # type: ignore[return-value]


extend_name_stack = ExtendNameStackContextManager


class reset_name_stack:  # noqa: N801 (JAX's name)
    """Starts from an empty name stack for a `with` body (a new function being traced)."""

    __slots__ = ("prev",)

    def __enter__(self) -> None:
        self.prev = _state.source_info
        _state.source_info = _EMPTY

    def __exit__(self, *exc: Any) -> None:
        _state.source_info = self.prev


def named_scope(name: str) -> ExtendNameStackContextManager:
    """A context manager (or decorator) adding `name` to the name stack of the operations
    staged in its body (`jax.named_scope`).

    Args:
      name: the scope's name.
    Returns:
      The context manager; entering it gives the new name stack.
    Raises:
      TypeError: `name` is not a string (JAX's message).
    """
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return ExtendNameStackContextManager(name)


def named_call(fun: _F, *, name: str | None = None) -> _F:
    """`fun` running under `named_scope(name)` (default: its `__name__`) at every call
    (`jax.named_call`).

    Args:
      fun: the function to wrap.
      name: the scope's name.
    Returns:
      The wrapped function (`functools.wraps` of `fun`).
    """
    if name is None:
        name = fun.__name__
    return ExtendNameStackContextManager(name)(fun)
