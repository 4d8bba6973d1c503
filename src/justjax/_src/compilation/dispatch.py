"""Eager execution of primitives through the backend, as JAX's `apply_primitive`.

A primitive applied to concrete values runs as a one-equation program, lowered and compiled
like any jitted function and cached per (primitive, avals with weak types, params, config
that changes tracing). Eager results are therefore the compiled program's results: eager
and `jit` agree by construction.
"""
from __future__ import annotations

import collections
from typing import Any, Sequence

from justjax._src import errors, monitoring
from justjax._src.compilation import caches
from justjax._src.compilation import compiler
from justjax._src.compilation import execution
from justjax._src.compilation import spmd
from justjax._src.config import config
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from justjax._src.compilation.execution import CompiledCall
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime.array import Array

_CACHE_SIZE = 4096
# (primitive, avals, params, trace context) -> the executable and its fast runner on Arrays
# (`execution.fast_call`; None when the op was first run on anything else).
_cache: collections.OrderedDict[tuple, tuple[CompiledCall, Any]] = collections.OrderedDict()
caches.register_cache(_cache.clear)
# (config generation, whether the fast runners serve that config): `_fast_runs_now`.
_plain_config: list[Any] = [-1, False]


def _fast_runs_now() -> bool:
    """Whether the fast runners serve the config now: no thread overrides, and no flag asks
    for more than a run (checked again only when the config's generation changes)."""
    if config._local_count:
        return False
    generation = config._generation
    if _plain_config[0] != generation:
        _plain_config[:] = generation, execution.plain_config()
    return _plain_config[1]


def _one_equation_jaxpr(primitive: core.Primitive, avals: Sequence[ShapedArray],
                        params: dict[str, Any]) -> ClosedJaxpr:
    # Built directly rather than traced: tracing would apply forwarding and folding rules
    # and might stage no equation at all.
    out_avals = primitive.abstract_eval(*avals, **params)
    if not primitive.multiple_results:
        out_avals = [out_avals]
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    eqn = JaxprEqn(list(invars), outvars, primitive, dict(params))
    return ClosedJaxpr(Jaxpr([], invars, list(outvars), [eqn]), [])


def compile_primitive(primitive: core.Primitive, avals: Sequence[ShapedArray],
                      params: dict[str, Any], in_shardings: tuple[Any, ...] | None = None
                      ) -> CompiledCall:
    """The executable running `primitive` once on arguments of `avals` (partitioned over the
    mesh of `in_shardings`, when given: `spmd.py`)."""
    with monitoring.log_elapsed_time("Finished tracing {fun_name} for jit in "
                                     "{elapsed_time:.9f} sec", primitive.name,
                                     monitoring.JAXPR_TRACE_EVENT):
        closed = _one_equation_jaxpr(primitive, avals, params)
    return compiler.compile_jaxpr(closed, primitive.name, (False,) * len(avals), True, False,
                                  in_shardings)


@errors.allocation_failures_as_xla
def apply_primitive(primitive: core.Primitive, *args: Any, **params: Any) -> Any:
    """Runs `primitive` on concrete `args` through the backend: on the mesh the arguments
    are sharded over, if any (computation follows the data, as in JAX)."""
    avals = tuple([a.aval if type(a) is Array else core.get_aval(a) for a in args])
    key = (primitive, avals, tuple(params.items()), config.trace_context())
    try:
        cached = _cache.get(key)
    except TypeError:  # an unhashable param: compile without caching
        key, cached = None, None
    if cached is not None and cached[1] is not None and _fast_runs_now():
        out = cached[1](args)
        if out is not execution.MISS:
            return out
    in_shardings = spmd.mesh_shardings(args)
    if in_shardings is not None:
        return _apply_partitioned(primitive, args, params, avals, key, in_shardings)
    if cached is None:
        if config.read("jax_no_tracing"):
            raise RuntimeError(f"re-tracing function {primitive.name} for `jit`, but "
                               "'no_tracing' is set")
        call = compile_primitive(primitive, avals, params)
        arrays = all(type(a) is Array for a in args)
        cached = (call, execution.fast_call(call, avals, not primitive.multiple_results)
                  if arrays else None)
        _remember(key, cached)
        # A newly compiled op's runner serves this call too.
        if cached[1] is not None and _fast_runs_now():
            out = cached[1](args)
            if out is not execution.MISS:
                return out
    outs = cached[0].call_flat(args)
    return outs if primitive.multiple_results else outs[0]


def _remember(key: tuple | None, cached: tuple[CompiledCall, Any]) -> None:
    """Caches an op's executable and runner under `key` (None: uncacheable), least recently
    added first out."""
    if key is not None:
        _cache[key] = cached
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def _apply_partitioned(primitive: core.Primitive, args: Sequence[Any], params: dict[str, Any],
                       avals: tuple[ShapedArray, ...], key: tuple | None,
                       in_shardings: tuple[Any, ...]) -> Any:
    """`primitive` on arguments sharded over a mesh, as a program partitioned over it."""
    spmd.check_devices(args, in_shardings, lambda i: devices_lib.eager_arg_name(i, len(args)),
                       primitive.name)
    in_shardings = spmd.unify(in_shardings)
    key = None if key is None else (*key, in_shardings)
    cached = _cache.get(key) if key is not None else None
    if cached is None:
        cached = (compile_primitive(primitive, avals, params, in_shardings), None)
        _remember(key, cached)
    outs = cached[0].call_flat(args)
    return outs if primitive.multiple_results else outs[0]


def def_backend_impl(primitive: core.Primitive) -> None:
    """Makes `primitive`'s eager implementation the compiled one-op program."""
    def impl(*args: Any, **params: Any) -> Any:
        return apply_primitive(primitive, *args, **params)

    core.impl_rules[primitive] = impl
