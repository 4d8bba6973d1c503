"""`jax.pmap`: one program run on several devices at once, one slice of the mapped axis each.

A call with concrete arguments traces `fun` once per signature on one slice's avals, with
the named axis bound (so `psum` and friends over it are legal), lowers it as one replica's
program (`lowering.lower_jaxpr_to_module(replica_axes=...)`: collectives become StableHLO
`all_reduce`, `all_gather`, ... by `lax/parallel_spmd.py`), compiles it once, and runs it
as N replicas concurrently, each on its device's executor thread
(`runtime/replicas.run_replicas`). The results are stacked along `out_axes`.

Under another transformation (`jit`, `grad`, `vmap` of a pmapped function) the arguments
are tracers and there is nothing to put on devices: pmap is then `vmap` with the same axis
name, which computes the same values (its collectives batched instead of exchanged).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import api, stages, tree_util
from justjax._src.backends import get_backend
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.interpreters import batching, lowering, staging
from justjax._src.lax import parallel_spmd  # noqa: F401  (registers the SPMD lowerings)
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import replicas
from justjax._src.runtime.array import Array, NamedSharding

__all__ = ["pmap"]


def pmap(fun: Callable, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Sequence[int] = (), devices: Any = None,
         backend: str | None = None, axis_size: int | None = None,
         donate_argnums: int | Sequence[int] = (), global_arg_shapes: Any = None) -> Callable:
    """Maps `fun` over an axis of its arguments, one slice per device, in parallel.

    Args:
      fun: the function; collectives over `axis_name` inside it (`lax.psum`, `pmean`,
        `pmax`, `pmin`, `all_gather`, `psum_scatter`, `axis_index`) exchange values between
        the devices.
      axis_name: names the mapped axis for those collectives.
      in_axes, out_axes: as for `vmap` (keyword arguments are mapped over axis 0).
      static_broadcasted_argnums: positional arguments passed to every device as they are
        (hashable; a new value traces again).
      devices: the devices to run on (default the first `axis size` of `jax.devices()`).
      backend, axis_size, donate_argnums, global_arg_shapes: accepted as JAX does; donation
        is not done (the arguments stay valid).
    Returns:
      The mapped function; its outputs gain the mapped axis at `out_axes`.
    """
    api.check_callable(fun)
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    cache: dict[Any, _Program] = {}

    @functools.wraps(fun)
    def pmapped(*args: Any, **kwargs: Any) -> Any:
        static_args = {i % len(args): args[i] for i in static if -len(args) <= i < len(args)}
        dynamic = [a for i, a in enumerate(args) if i not in static_args]
        dyn_in_axes = in_axes
        if isinstance(in_axes, (tuple, list)) and len(in_axes) == len(args) and static_args:
            dyn_in_axes = tuple(a for i, a in enumerate(in_axes) if i not in static_args)

        def call(*dyn: Any, **kw: Any) -> Any:
            full = list(dyn)
            for i in sorted(static_args):
                full.insert(i, static_args[i])
            return fun(*full, **kw)

        flat, in_tree = tree_util.tree_flatten((tuple(dynamic), kwargs))
        if any(isinstance(x, core.Tracer) for x in flat):
            name = axis_name if axis_name is not None else _fresh_axis_name()
            return api.vmap(call, in_axes=dyn_in_axes, out_axes=out_axes, axis_name=name,
                            axis_size=axis_size)(*dynamic, **kwargs)
        if isinstance(dyn_in_axes, list):
            dyn_in_axes = tuple(dyn_in_axes)
        if dyn_in_axes is None or type(dyn_in_axes) is int:
            args_tree, kwargs_tree = tree_util.treedef_children(in_tree)
            in_dims = [dyn_in_axes] * args_tree.num_leaves + [0] * kwargs_tree.num_leaves
        else:
            in_dims = api.flatten_axes("pmap in_axes", in_tree, (dyn_in_axes, 0), kws=True)
        size = api._mapped_axis_size(fun, in_tree, flat, in_dims, "pmap", axis_size)
        in_dims = [None if d is None else d % max(np.ndim(x), 1)
                   for x, d in zip(flat, in_dims, strict=True)]
        chosen = _devices(devices, size)
        avals = tuple(_slice_aval(core.get_aval(x), d) for x, d in zip(flat, in_dims,
                                                                        strict=True))
        key = (in_tree, avals, tuple(in_dims), size, tuple(d.id for d in chosen),
               tuple(sorted(static_args.items())))
        program = cache.get(key)
        if program is None:
            program = cache[key] = _Program(call, in_tree, avals, axis_name, size, fun)
        per_replica = [[_slice(x, d, i, aval) for x, d, aval in zip(flat, in_dims, avals,
                                                                     strict=True)]
                       for i in range(size)]
        outs = replicas.run_replicas(program.call.executable, per_replica,
                                     [d.id for d in chosen], program.thread_setup)
        out_dims = api.flatten_axes("pmap out_axes", program.out_tree, out_axes)
        results = [_stack([outs[i][k] for i in range(size)], d, aval, program.axis_name,
                          chosen)
                   for k, (d, aval) in enumerate(zip(out_dims, program.out_avals, strict=True))]
        return tree_util.tree_unflatten(program.out_tree, results)

    return pmapped


_axis_names = iter(range(1 << 62))


def _fresh_axis_name() -> Any:
    return ("_pmap_axis", next(_axis_names))


class _Program:
    """One signature's traced, lowered and compiled replica program."""

    def __init__(self, call: Callable, in_tree: Any, avals: tuple[ShapedArray, ...],
                 axis_name: Any, size: int, fun: Callable) -> None:
        name = axis_name if axis_name is not None else _fresh_axis_name()
        # The mesh axis of the results' sharding (JAX's name for an unnamed pmap axis).
        self.axis_name = axis_name if axis_name is not None else "_internal_pmap_axis_name"
        debug = staging.debug_info("pmap", fun)
        with core.extend_axis_env(name, size):
            closed, self.out_tree = api.trace_flat(call, in_tree, avals, debug)
        self.out_avals = closed.out_avals
        count = len(closed.out_avals)
        infos = ["result"] if count == 1 else [f"result[{i}]" for i in range(count)]
        module = lowering.lower_jaxpr_to_module(closed, getattr(fun, "__name__", "fun"),
                                                infos, replica_axes={name: size},
                                                prefix="pmap")
        info = stages.ModuleInfo(module, tuple(range(len(avals))), avals,
                                 tuple(closed.out_avals), (False,) * len(avals))
        self.call = stages.CompiledCall(info, getattr(fun, "__name__", "fun"), closed)
        self.thread_setup = getattr(get_backend(), "prepare_replica_thread", None)


def _devices(devices: Any, size: int) -> list[devices_lib.Device]:
    available = list(devices) if devices is not None else devices_lib.devices()
    if size > len(available):
        raise ValueError(f"compiling computation that requires {size} logical devices, but "
                         f"only {len(available)} XLA devices are available "
                         f"(num_replicas={size})")
    return available[:size]


def _slice_aval(aval: ShapedArray, axis: int | None) -> ShapedArray:
    return aval if axis is None else batching.remove_axis(aval, axis)


def _slice(x: Any, axis: int | None, index: int, aval: ShapedArray) -> np.ndarray:
    """Replica `index`'s buffer of argument `x` (a key array's base array keeps its key
    dimensions last, so slicing along `axis` is the same)."""
    value = stages.host_buffer(x, aval.dtype)
    if axis is None:
        return value
    return np.ascontiguousarray(np.take(value, index, axis=axis))


def _stack(outs: Sequence[np.ndarray], axis: int | None, aval: ShapedArray, axis_name: Any,
           devices: Sequence[devices_lib.Device]) -> Array:
    """One output of every replica as one Array whose slices along `axis` live on
    `devices` (its `sharding`, `devices()` and `addressable_shards` say so)."""
    if axis is None:
        # An unmapped output is the same on every device (JAX returns device 0's).
        return stages.result_array(np.array(outs[0], copy=True), aval)
    stacked = np.stack([np.asarray(o) for o in outs], axis=axis)
    shape = aval.shape[:axis] + (len(outs),) + aval.shape[axis:]
    out = stages.result_array(stacked, ShapedArray(shape, aval.dtype, weak_type=aval.weak_type))
    array = getattr(out, "_base_array", out)  # a key array's sharding is its base array's
    array._sharding = NamedSharding(axis_name, devices, axis)
    array._committed = True
    return out
