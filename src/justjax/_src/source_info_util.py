"""Where operations come from: name stacks and the user's frames.

- Name stacks: the scopes an operation was staged in (`jax.named_scope`, `jax.named_call`).
  A thread keeps the current `NameStack`; `named_scope("layer")` extends it for its body.
  Each equation staged into a jaxpr records it as `eqn.source_info.name_stack`
  (`layer/dense`), relative to the function being traced (tracing starts from an empty
  stack, as JAX's does). Names do not change values or programs: they label operations for
  people and profilers.
- User frames: the innermost frame outside justjax and the files libraries register as their
  own (`jax.extend.source_info_util.register_exclusion`), for messages that point at the
  user's line.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, TypeVar

# justjax's own source folder, then the paths libraries register.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_exclude_paths: list[str] = [PACKAGE_DIR]


def register_exclusion(path: str) -> None:
    """Frames of files under `path` are not user frames."""
    _exclude_paths.append(path)


def is_user_file(filename: str) -> bool:
    return not any(filename.startswith(path) for path in _exclude_paths)


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
class SourceInfo:
    """Where an equation comes from (`eqn.source_info`): its name stack."""

    name_stack: NameStack = NameStack()

    def replace(self, *, name_stack: NameStack | None = None) -> SourceInfo:
        return SourceInfo(self.name_stack if name_stack is None else name_stack)


_EMPTY = SourceInfo()


class _State(threading.local):
    def __init__(self) -> None:
        self.source_info = _EMPTY


_state = _State()


def current() -> SourceInfo:
    """The source info operations staged now get."""
    return _state.source_info


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
