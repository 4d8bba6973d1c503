"""`jax.pmap`: one program run on several devices at once, one slice of the mapped axis each.

As in JAX 0.10.2, `pmap(f)` is a `jit` of a `shard_map` over a one-axis mesh of the devices:
the per-device function takes its block of each mapped argument (a slice of size one along
`in_axes`), squeezes it, calls `f` with the axis name bound (so `psum` and friends over it are
legal) and gives each mapped result a dimension of size one at `out_axes` (`shard_map.py`).

A call on concrete arrays runs the per-device program on every device at once directly
(`shard_map.run_sharded`: one replica program, compiled once). Under a transformation
(`jit`, `grad`, `vmap` of a pmapped function) the call is the `jit` equation JAX's
`make_jaxpr` shows; the transformations keep its `shard_map`, and running the transformed
program runs it replicated on the devices. A pmap inside another's per-device function is
mapped with `vmap` (nested pmaps share no devices here).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import api, util
from justjax._src.transformations import shard_map
from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.interpreters import partial_eval as pe
from justjax._src.interpreters import staging
from justjax._src.compilation.jit_primitive import jit_p
from justjax._src.lax import structural
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import global_arrays, processes

__all__ = ["pmap"]


def pmap(fun: Callable, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Sequence[int] = (), devices: Any = None,
         backend: str | None = None, axis_size: int | None = None,
         donate_argnums: int | Sequence[int] = (), global_arg_shapes: Any = None) -> Callable:
    """Maps `fun` over an axis of its arguments, one slice per device, in parallel.

    Args:
      fun: the function; collectives over `axis_name` inside it (`lax.psum`, `pmean`,
        `pmax`, `pmin`, `all_gather`, `psum_scatter`, `all_to_all`, `ppermute`,
        `axis_index`) exchange values between the devices.
      axis_name: names the mapped axis for those collectives.
      in_axes, out_axes: as for `vmap` (keyword arguments are mapped over axis 0).
      static_broadcasted_argnums: positional arguments passed to every device as they are
        (hashable; a new value traces again).
      devices: the devices to run on (default the first `axis size` of `jax.devices()`).
      donate_argnums: positional arguments the call may reuse the buffers of, as JAX
        does: a donated Array already laid out as the pmap cuts it (a pmap result on the
        same devices, or any array when there is one device) is deleted and its memory
        holds a result of its type.
      backend, axis_size, global_arg_shapes: accepted as JAX does.
    Returns:
      The mapped function; its outputs gain the mapped axis at `out_axes`.
    """
    api.check_callable(fun)
    static = _argnums(static_broadcasted_argnums)
    donated_argnums = _argnums(donate_argnums)
    cache: dict[Any, _Mapped] = {}

    @util.wraps(fun)
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

        if shard_map.inside_body():
            name = axis_name if axis_name is not None else _fresh_axis_name()
            return api.vmap(call, in_axes=dyn_in_axes, out_axes=out_axes, axis_name=name,
                            axis_size=axis_size)(*dynamic, **kwargs)
        flat, in_tree = tree_util.tree_flatten((tuple(dynamic), kwargs))
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
        name = axis_name if axis_name is not None else _UNNAMED_AXIS
        # Under a transformation (jit, make_jaxpr, checkify ...) the call is staged even
        # when its operands are concrete; only plain evaluation runs it at once.
        eager = (isinstance(core.current_trace(), core.EvalTrace)
                 and not any(isinstance(x, core.Tracer) for x in flat))
        spanning = _processes_devices(devices, size) if eager else None
        if spanning is not None:
            # Each process maps its own values over its devices; together they are one
            # program over every process's devices, each process's values its part.
            mesh = shard_map.axis_mesh(spanning, name)
            flat = [_global_operand(x, d, mesh, name) for x, d in zip(flat, in_dims,
                                                                   strict=True)]
        else:
            mesh = shard_map.axis_mesh(_devices(devices, size), name)
        avals = tuple(core.get_aval(x) for x in flat)
        key = (in_tree, avals, tuple(in_dims), mesh, tuple(sorted(static_args.items())),
               config.trace_context())
        mapped = cache.get(key)
        if mapped is None:
            mapped = _Mapped(call, in_tree, avals, in_dims, mesh, out_axes, fun)
            if not any(isinstance(c, core.Tracer) for c in mapped.consts):
                cache[key] = mapped  # a body closing over a tracer belongs to one trace
        operands = [*mapped.consts, *flat]
        donated = [False] * len(mapped.consts) + _donated_leaves(dynamic, args, static_args,
                                                                 donated_argnums, kwargs)
        if (not isinstance(core.current_trace(), core.EvalTrace)
                or any(isinstance(x, core.Tracer) for x in operands)):
            outs = jit_p.bind(*operands, jaxpr=mapped.program, name="_fun",
                              donated_invars=tuple(donated), keep_unused=False,
                              inline=False)
        else:
            # Donated arrays laid out as the pmap cuts them are deleted, their buffers
            # reused (`run_sharded`); others are left as they are, as in JAX.
            outs = shard_map.run_sharded(mapped.body, mesh, mapped.in_specs,
                                         mapped.out_specs, operands,
                                         getattr(fun, "__name__", "fun"), donated)
            if spanning is not None:  # each process gets its devices' part, as JAX's
                outs = [_local_result(o, mesh, spec)
                        for o, spec in zip(outs, mapped.out_specs, strict=True)]
        return tree_util.tree_unflatten(mapped.out_tree, outs)

    def lower(*args: Any, **kwargs: Any) -> Any:
        """Ahead-of-time lowering, as `jax.pmap(f).lower(*args)`: the pmap is a jit of a
        shard_map, so this is the jit's `Lowered` (`as_text()`, `compile()`)."""
        from justjax._src.compilation.jit import jit
        return jit(pmapped, static_argnums=static).lower(*args, **kwargs)

    pmapped.lower = lower  # type: ignore[attr-defined]
    return pmapped


# JAX's name for the mesh axis of a pmap given no axis name.
_UNNAMED_AXIS = "_internal_pmap_axis_name"


def _argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _donated_leaves(dynamic: Sequence[Any], args: Sequence[Any], static_args: dict[int, Any],
                    donated_argnums: tuple[int, ...], kwargs: dict[str, Any]) -> list[bool]:
    """One flag per flattened dynamic argument: whether its positional argument is donated."""
    donated = {i % len(args) for i in donated_argnums if -len(args) <= i < len(args)}
    positions = [i for i in range(len(args)) if i not in static_args]
    flags: list[bool] = []
    for position, arg in zip(positions, dynamic, strict=True):
        flags.extend([position in donated] * len(tree_util.tree_leaves(arg)))
    return flags + [False] * len(tree_util.tree_leaves(kwargs))


_axis_names = iter(range(1 << 62))


def _fresh_axis_name() -> Any:
    return ("_pmap_axis", next(_axis_names))


class _Mapped:
    """One signature's per-device jaxpr (the `shard_map` body) and the `jit` program of the
    pmapped call. Constants the function closes over become leading replicated operands."""

    def __init__(self, call: Callable, in_tree: Any, avals: tuple[ShapedArray, ...],
                 in_dims: Sequence[int | None], mesh: shard_map.Mesh, out_axes: Any,
                 fun: Callable) -> None:
        name = shard_map.mesh_axis(mesh)
        block_avals = [shard_map.block_aval(a, shard_map.spec_for(d, name), mesh)
                       for a, d in zip(avals, in_dims, strict=True)]
        found: dict[str, Any] = {}

        def per_device(*blocks: Any) -> list[Any]:
            xs = [b if d is None else structural.squeeze(b, (d,))
                  for b, d in zip(blocks, in_dims, strict=True)]
            args, kwargs = tree_util.tree_unflatten(in_tree, xs)
            out_flat, out_tree = tree_util.tree_flatten(call(*args, **kwargs))
            out_dims = api.flatten_axes("pmap out_axes", out_tree, out_axes)
            out_dims = [None if d is None else d % (np.ndim(o) + 1)
                        for o, d in zip(out_flat, out_dims, strict=True)]
            found.update(out_tree=out_tree, out_dims=out_dims)
            return [o if d is None else _expand(o, d)
                    for o, d in zip(out_flat, out_dims, strict=True)]

        with shard_map.body_axis(mesh):
            closed = staging.trace_to_jaxpr(per_device, block_avals,
                                            staging.debug_info("pmap", fun))
        self.out_tree = found["out_tree"]
        self.consts = list(closed.consts)
        self.body = ClosedJaxpr(pe.name_unused_outputs(pe.convert_constvars_jaxpr(closed.jaxpr)),
                                [])
        self.in_specs = ([shard_map.PartitionSpec()] * len(self.consts)
                         + [shard_map.spec_for(d, name) for d in in_dims])
        self.out_specs = [shard_map.spec_for(d, name) for d in found["out_dims"]]
        global_avals = [*(core.get_aval(c) for c in self.consts), *avals]

        def program(*operands: Any) -> list[Any]:
            return shard_map.bind(operands, self.body, mesh, self.in_specs, self.out_specs)

        self.program = staging.trace_to_jaxpr(program, global_avals)


def _expand(x: Any, dim: int) -> Any:
    """`x` with a dimension of size one at `dim` (`broadcast_in_dim`, as JAX writes it)."""
    shape = list(np.shape(x))
    shape.insert(dim, 1)
    return structural.broadcast_in_dim(x, shape, [i for i in range(len(shape)) if i != dim])


def _processes_devices(devices: Any, size: int) -> list[devices_lib.Device] | None:
    """The devices a pmap of `size` per process runs on when it spans the processes of a
    multi-process run (no `devices` given): each process's first `size` devices; else
    None."""
    cluster = processes.cluster()
    if devices is not None or cluster is None or cluster.count == 1:
        return None
    local = devices_lib.local_devices()
    if size > len(local):
        _devices(local, size)  # JAX's error
    return [d for p in range(cluster.count) for d in devices_lib.local_devices(p)[:size]]


def _global_operand(x: Any, dim: int | None, mesh: shard_map.Mesh, name: Any) -> Any:
    """This process's operand `x` as its part of the global operand: mapped along `dim`
    (the processes' values side by side), or the same in every process (`dim` None). A key
    array moves with its base array (its key dimensions last, unsplit)."""
    spec = shard_map.spec_for(dim, name)
    if dtypes.is_extended(getattr(x, "dtype", None)):
        base = global_arrays.host_local_to_global(np.asarray(x._base_array), mesh, spec)
        return type(x)(x._impl, base)
    return global_arrays.host_local_to_global(np.asarray(x), mesh, spec)


def _local_result(out: Any, mesh: shard_map.Mesh, spec: Any) -> Any:
    """This process's part of a global result (a key array's: of its base array)."""
    if dtypes.is_extended(getattr(out, "dtype", None)):
        return type(out)(out._impl, global_arrays.global_to_host_local(out._base_array, mesh,
                                                                       spec))
    return global_arrays.global_to_host_local(out, mesh, spec)


def _devices(devices: Any, size: int) -> list[devices_lib.Device]:
    available = list(devices) if devices is not None else devices_lib.devices()
    if size > len(available):
        raise ValueError(f"compiling computation that requires {size} logical devices, but "
                         f"only {len(available)} XLA devices are available "
                         f"(num_replicas={size})")
    return available[:size]
