"""The tracer leak checker (`jax.checking_leaks()`, `jax_check_tracer_leaks`).

When a trace for jit (or a vmap) ends, none of its tracers should outlive it: a tracer stored
in a global or an object escapes its transformation. With the flag on, the trace's creator
drops its own references and calls `check_no_leaks`: if garbage collection cannot free the
trace, the tracers still pointing at it are reported with the chain of references keeping
each alive, in JAX's words.
"""
from __future__ import annotations

import gc
import inspect
import types
import weakref
from typing import Any

from justjax._src.core.core import Tracer


def check_no_leaks(trace_ref: weakref.ref) -> None:
    """Raises JAX's leak error if tracers of the (finished) trace behind `trace_ref` are
    still referenced. The caller holds no reference to the trace or its tracers any more.

    Raises:
      Exception: "Leaked trace <Trace>. Leaked tracer(s): ..." (JAX's class and message).
    """
    if trace_ref() is None:
        return
    # Cycles (a trace and the tracers in its own tables) are not leaks: collect them first.
    gc.collect()
    trace = trace_ref()
    if trace is None:
        return
    tracers = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer)]
    if tracers:
        raise leaked_tracer_error(trace, tracers)


def leaked_tracer_error(trace: Any, tracers: list[Tracer]) -> Exception:
    """JAX's error naming each leaked tracer, where it came from and what holds it."""
    ignore = {id(tracers)}
    parts = [f"{t}{_origin(t)}{_why_alive(ignore, t)}" for t in tracers]
    listed = "\n\n".join(parts)
    return Exception(f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n\n{listed}\n")


def _origin(tracer: Tracer) -> str:
    debug = getattr(tracer._trace, "debug", None)
    if debug is not None:
        # A finished jit trace names the traced function (JAX says no more).
        return (f"\nThe error occurred while tracing the function {debug.func_src_info} "
                f"for {debug.traced_for}. ")
    origin = tracer._origin_msg()
    return f"\n{origin}" if origin else ""


def _parents(ignore: set[int], x: Any) -> list[Any]:
    """What refers to `x`, leaving out frames (the checker's own locals and its callers',
    never what keeps a leak alive) and the lists this search itself makes."""
    found = gc.get_referrers(x)
    parents = [r for r in found if id(r) not in ignore and not isinstance(r, types.FrameType)]
    ignore.add(id(found))
    ignore.add(id(parents))
    return parents


def _why_alive(ignore: set[int], x: Any) -> str:
    """Lines following one chain of referrers from `x` up to a module (or a root)."""
    lines = []
    seen: set[int] = set()
    child = x
    while id(child) not in seen and not isinstance(child, types.ModuleType):
        parents = _parents(ignore, child)
        if not parents:
            break
        parent = parents[0]
        owner = _namespace_owner(ignore, parent)
        if owner is not None:
            parent = owner
        lines.append(f"<{type(child).__name__} {id(child)}> is referred to by "
                     f"{_container_info(parent, child)}")
        seen.add(id(child))
        child = parent
    return "\n" + "\n".join(lines) if lines else ""


def _namespace_owner(ignore: set[int], parent: Any) -> Any:
    """The module, object or function whose namespace (`__dict__`, closure cell) `parent`
    is, so a chain reads `module.name` rather than going through the dictionary."""
    if isinstance(parent, dict):
        for grand in _parents(ignore, parent):
            if getattr(grand, "__dict__", None) is parent:
                return grand
    elif isinstance(parent, types.CellType):
        for holder in _parents(ignore, parent):
            if isinstance(holder, tuple):
                for function in _parents(ignore, holder):
                    if isinstance(function, types.FunctionType):
                        return function
    return None


def _container_info(container: Any, child: Any) -> str:
    """How `container` refers to `child`: `module.name`, `<list 1234>[0]`, ..."""
    name = f"<{type(container).__name__} {id(container)}>"
    if isinstance(container, types.ModuleType):
        keys = [k for k, v in vars(container).items() if v is child]
        return f"{container.__name__}.{keys[0]}" if keys else container.__name__
    if isinstance(container, types.FunctionType):
        closure = inspect.getclosurevars(container)
        keys = [k for k, v in {**closure.nonlocals, **closure.globals}.items() if v is child]
        if keys:
            return f"{name} ({container.__name__}) closed-over variable {keys[0]}"
    if hasattr(container, "__dict__") and not isinstance(container, type):
        keys = [k for k, v in vars(container).items() if v is child]
        if keys:
            return f"{name}.{keys[0]}"
    if isinstance(container, (list, tuple)):
        indices = [i for i, v in enumerate(container) if v is child]
        if indices:
            return f"{name}[{indices[0]}]"
    if isinstance(container, dict):
        keys = [k for k, v in container.items() if v is child]
        if keys:
            return f"{name}[{keys[0]!r}]"
    return name
