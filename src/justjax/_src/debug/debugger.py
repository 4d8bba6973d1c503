"""`jax.debug.breakpoint`: an interactive debugger entered from (possibly staged) code.

`breakpoint()` records the user's stack frames where it is called. Local variables that are
tracers become operands of a debug callback, so when the staged program runs, the debugger
sees their values; other locals are kept as they were. The debugger is the registered one of
highest priority, by default `jdb`, a command-line debugger reading `sys.stdin` (`p expr`,
`pp expr`, `u`/`d` to move between frames, `l`, `w`, `c` to continue, `q` to quit).
"""
from __future__ import annotations

import cmd
import dataclasses
import inspect
import pprint
import sys
import threading
import traceback
import warnings
from typing import IO, Any, Protocol

from justjax._src.pytrees import tree_util
from justjax._src import traceback_util
from justjax._src.core import core
from justjax._src.debug.callbacks import debug_callback, pure_callback
from justjax._src.lax import structural


class _CantFlatten:
    def __repr__(self) -> str:
        return "<cant_flatten>"


cant_flatten = _CantFlatten()


def _safe_value(value: Any) -> Any:
    """`value`, or a marker when it is not a pytree (flattening it raises)."""
    try:
        tree_util.tree_leaves(value)
    except Exception:  # any error of a user's flatten function: the value is just shown
        return cant_flatten
    return value


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One stack frame as the debugger shows it: its file, locals, source lines around it.
    A pytree whose leaves are the locals that are tracers (their values arrive at run
    time); every other local is kept as it is."""

    filename: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    code_context: Any
    source: list[str]
    lineno: int
    offset: int | None

    @classmethod
    def from_frameinfo(cls, frame_info: inspect.FrameInfo) -> DebuggerFrame:
        """The frame of `frame_info`, with its function's source (when it can be read)."""
        try:
            lines, start = inspect.getsourcelines(frame_info.frame)
            source = "".join(lines).split("\n")
            # `start` is 1-based, or 0 for a module's whole source.
            offset: int | None = frame_info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None  # code from exec() or eval(): no usable lines
        except (OSError, TypeError):
            source, offset = [], None
        return cls(frame_info.filename, dict(frame_info.frame.f_locals), {},
                   frame_info.code_context, source, frame_info.lineno, offset)


def _flatten_frame(frame: DebuggerFrame) -> tuple[list[Any], tuple]:
    keys = list(frame.locals)
    values = [_safe_value(frame.locals[k]) for k in keys]
    flat, tree = tree_util.tree_flatten(values)
    is_tracer = [isinstance(leaf, core.Tracer) for leaf in flat]
    dynamic = [leaf for leaf, t in zip(flat, is_tracer, strict=True) if t]
    static = [leaf for leaf, t in zip(flat, is_tracer, strict=True) if not t]
    aux = (keys, tree, tuple(is_tracer), _Static(static), frame.filename, frame.code_context,
           _Static(frame.source), frame.lineno, frame.offset)
    return dynamic, aux


def _unflatten_frame(aux: tuple, dynamic: list[Any]) -> DebuggerFrame:
    keys, tree, is_tracer, static, filename, code_context, source, lineno, offset = aux
    dyn_iter, static_iter = iter(dynamic), iter(static.value)
    flat = [next(dyn_iter) if t else next(static_iter) for t in is_tracer]
    values = tree_util.tree_unflatten(tree, flat)
    return DebuggerFrame(filename, dict(zip(keys, values, strict=True)), {}, code_context,
                         source.value, lineno, offset)


class _Static:
    """Static data compared by identity (locals need not be hashable or comparable)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


tree_util.register_pytree_node(DebuggerFrame, _flatten_frame, _unflatten_frame)


class Debugger(Protocol):
    def __call__(self, frames: list[DebuggerFrame], thread_id: int | None,
                 **kwargs: Any) -> None: ...


_debugger_registry: dict[str, tuple[int, Debugger]] = {}
debug_lock = threading.Lock()


def register_debugger(name: str, debugger: Debugger, priority: int) -> None:
    """Makes `debugger` available as `backend=name`; without a backend, the one of highest
    priority runs."""
    if name in _debugger_registry:
        raise ValueError(f'Debugger with name "{name}" already registered.')
    _debugger_registry[name] = (priority, debugger)


def get_debugger(backend: str | None = None) -> Debugger:
    """The debugger registered as `backend`, else the one of highest priority."""
    if backend is not None and backend in _debugger_registry:
        return _debugger_registry[backend][1]
    ranked = sorted(_debugger_registry.values(), key=lambda entry: -entry[0])
    if not ranked:
        raise ValueError("No debuggers registered!")
    return ranked[0][1]


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> Any:
    """Enters the debugger here when the program runs (`jax.debug.breakpoint`).

    Args:
      backend: the registered debugger to use (default: the one of highest priority, the
        command-line `jdb`).
      filter_frames: leave out the frames of JAX's (and registered libraries') files.
      num_frames: how many frames, innermost first, the debugger can inspect.
      ordered: keep program order with other ordered callbacks.
      token: an alternative to `ordered`: a pytree of arrays returned unchanged once the
        debugger has run; it must be used afterwards, or the breakpoint may be dropped.
      **kwargs: passed to the debugger (`stdin=`, `stdout=` for `jdb`).
    Returns:
      `token` unchanged if given, else None.
    Raises:
      ValueError: both `ordered` and `token` are given.
    """
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    frame_infos = inspect.stack()[1:]
    if filter_frames:
        frame_infos = [f for f in frame_infos if traceback_util.include_frame(f.frame)]
    frames = [DebuggerFrame.from_frameinfo(f) for f in frame_infos]
    del frame_infos
    if num_frames is not None:
        frames = frames[:num_frames]
    with warnings.catch_warnings():
        # Locals that are iterables (generators) are shown as they are: no warning.
        warnings.simplefilter("ignore", DeprecationWarning)
        flat_args, frames_tree = tree_util.tree_flatten(frames)

    def _breakpoint_callback(*flat: Any) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            shown = tree_util.tree_unflatten(frames_tree, list(flat))
        thread_id = None
        if threading.current_thread() is not threading.main_thread():
            thread_id = threading.get_ident()
        debugger = get_debugger(backend)
        # Breakpoints may be hit from several threads (replicas) at once.
        with debug_lock:
            debugger(shown, thread_id, **kwargs)

    if token is None:
        debug_callback(_breakpoint_callback, *flat_args, ordered=ordered)
        return None

    def _with_token(x: Any, *flat: Any) -> Any:
        _breakpoint_callback(*flat)
        return x

    token, flat_args = structural.stop_gradient((token, flat_args))
    return pure_callback(_with_token, token, token, *flat_args)


# ---------------------------------------------------------------------------------------------
# jdb: the command-line debugger.

class CliDebugger(cmd.Cmd):
    """A text debugger over the recorded frames (`(jdb)` prompt)."""

    prompt = "(jdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 completekey: str = "tab") -> None:
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def current_frame(self) -> DebuggerFrame:
        return self.frames[self.frame_index]

    def evaluate(self, expr: str) -> Any:
        frame = self.current_frame()
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _print(self, text: str) -> None:
        print(text, file=self.stdout)

    def _error_message(self) -> None:
        error_type, error = sys.exc_info()[:2]
        self._print("*** " + traceback.format_exception_only(error_type, error)[-1].strip())

    def default(self, line: str) -> None:
        """Evaluates an expression and prints its repr."""
        self.do_p(line)

    def do_p(self, arg: str) -> None:
        """p expression
        Evaluates and prints the value of an expression
        """
        try:
            self._print(repr(self.evaluate(arg)))
        except Exception:
            self._error_message()

    def do_pp(self, arg: str) -> None:
        """pp expression
        Evaluates and pretty-prints the value of an expression
        """
        try:
            self._print(pprint.pformat(self.evaluate(arg)))
        except Exception:
            self._error_message()

    def print_context(self, num_lines: int = 2) -> None:
        frame = self.current_frame()
        lines = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is not None:
            for i, line in enumerate(frame.source):
                if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                    lines.append(f"->  {line}" if i == frame.offset else f"    {line}")
        self._print("\n".join(lines))

    def print_backtrace(self) -> None:
        lines = ["Traceback:"]
        for frame in reversed(self.frames):
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            if frame.offset is None:
                lines.append("    <no source>")
            else:
                lines.append(f"    {frame.source[frame.offset].strip()}")
        self._print("\n".join(lines))

    def do_up(self, arg: str) -> None:
        """u(p)
        Move up a stack frame.
        """
        if self.frame_index == len(self.frames) - 1:
            self._print("At topmost frame.")
        else:
            self.frame_index += 1
        self.print_context()

    do_u = do_up

    def do_down(self, arg: str) -> None:
        """d(own)
        Move down a stack frame.
        """
        if self.frame_index == 0:
            self._print("At bottommost frame.")
        else:
            self.frame_index -= 1
        self.print_context()

    do_d = do_down

    def do_list(self, arg: str) -> None:
        """l(ist)
        List source code for the current file.
        """
        self.print_context(num_lines=5)

    do_l = do_list

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue))
        Continue the program's execution.
        """
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> None:
        """q(uit)
        (exit)
        Quit the debugger. The program is given an exit command.
        """
        sys.exit(0)

    do_q = do_EOF = do_exit = do_quit

    def do_where(self, arg: str) -> None:
        """w(here)
        Prints a stack trace with the most recent frame on the bottom.
        'bt' is an alias for this command.
        """
        self.print_backtrace()

    do_w = do_bt = do_where

    def run(self) -> None:
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def run_cli_debugger(frames: list[DebuggerFrame], thread_id: int | None,
                     **kwargs: Any) -> None:
    """Runs `jdb` on `frames` until `c` (or exits the program at `q` / end of input)."""
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", run_cli_debugger, -1)
