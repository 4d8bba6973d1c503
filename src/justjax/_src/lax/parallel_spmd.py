"""Collectives over the manual axes of a `shard_map` (or pmap), lowered to StableHLO
collective ops.

A shard_map's body is lowered as the program of one device of its mesh
(`lowering.ModuleContext.manual`: the mesh and its manual axes), whether it becomes a
`sdy.manual_computation` inside a jitted program or the program pmap runs on every device. A
collective over manual axes becomes the StableHLO op every device runs and the runtime
(`runtime/replicas.py`) synchronizes; its `replica_groups` are mesh positions, one group per
combination of the other axes' coordinates (`MeshShape.groups`):

| primitive | StableHLO |
| --- | --- |
| psum, pmax, pmin | `all_reduce` with an add / max / min region |
| all_gather | `all_gather` (untiled: along a new axis of size 1 first) |
| reduce_scatter (psum_scatter) | `reduce_scatter` (untiled: then the scattered axis dropped) |
| axis_index | `(partition_id / stride) % size`, converted to int32 (JAX's form) |
| ppermute (pshuffle) | `collective_permute`, its pairs in each group |
| all_to_all | `all_to_all` (`split_dimension`, `concat_dimension`, `split_count`) |

A collective over other axes (vmap's, already batched away, or positional ones) keeps the
rule registered in `parallel.py`, which this module wraps.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from justjax._src.hlo import ir
from justjax._src.interpreters import lowering
from justjax._src.lax import parallel, reductions

__all__: list[str] = []


def _replica_groups(ctx: lowering.LoweringRuleContext, names: tuple[Any, ...],
                    axis_index_groups: Any = None) -> np.ndarray:
    """The mesh positions meeting in a collective over `names` (with `axis_index_groups`:
    each group of indices along `names` within each combination of the other axes)."""
    groups = ctx.module_context.manual.groups(names)
    if axis_index_groups is None:
        return groups
    return np.asarray([[row[i] for i in group] for row in groups
                       for group in axis_index_groups], np.int64)


def _over_manual_axes(ctx: lowering.LoweringRuleContext, names: tuple[Any, ...]) -> bool:
    manual = ctx.module_context.manual
    return manual is not None and bool(names) and all(manual.has(n) for n in names)


def _wrap(primitive: Any, names_of: Callable[[dict[str, Any]], tuple[Any, ...]],
          emit: lowering.LoweringRule) -> None:
    """Lowers `primitive` with `emit` when its named axes are all manual axes, else with
    the rule registered before."""
    previous = lowering.lowerings.get(primitive)

    def rule(ctx: lowering.LoweringRuleContext, *operands: ir.Value, **params: Any) -> Any:
        names = names_of(params)
        named, positional = parallel._partition(names)
        if _over_manual_axes(ctx, named):
            if positional:
                # psum over (a manual axis, vmap's batch axis): the batch axis is reduced
                # here first, then the devices combine.
                assert previous is not None
                local = dict(params, axes=positional, axis_index_groups=None)
                operands = (previous(ctx, *operands, **local),)
                params = dict(params, axes=named)
            return emit(ctx, *operands, **params)
        if previous is None:
            raise parallel._named_axes_impl_error(names, primitive.name)
        return previous(ctx, *operands, **params)

    lowering.register_lowering(primitive, rule)


def _all_reduce(monoid: str) -> lowering.LoweringRule:
    def emit(ctx: lowering.LoweringRuleContext, x: ir.Value, *, axes: tuple[Any, ...],
             axis_index_groups: Any) -> ir.Value:
        region = reductions.monoid_region(monoid, x.type.dtype)
        groups = _replica_groups(ctx, tuple(axes), axis_index_groups)
        return ctx.builder.op("stablehlo.all_reduce", [x], [x.type],
                              {"replica_groups": groups}, [region]).result
    return emit


def _axis_index(ctx: lowering.LoweringRuleContext, *, axis_name: Any) -> ir.Value:
    b = ctx.builder
    u32 = np.dtype(np.uint32)
    stride, size = ctx.module_context.manual.stride_and_size(axis_name)
    scalar = ir.TensorType((), u32)
    stride_value, size_value = b.constant(stride, u32), b.constant(size, u32)
    position = b.one("stablehlo.partition_id", [], scalar)
    index = b.one("stablehlo.remainder",
                  [b.one("stablehlo.divide", [position, stride_value], scalar), size_value],
                  scalar)
    return b.one("stablehlo.convert", [index], ir.TensorType((), np.dtype(np.int32)))


def _all_gather(ctx: lowering.LoweringRuleContext, x: ir.Value, *, all_gather_dimension: int,
                axis_name: Any, axis_index_groups: Any, axis_size: int, tiled: bool
                ) -> ir.Value:
    b = ctx.builder
    if not tiled:
        shape = list(x.type.shape)
        shape.insert(all_gather_dimension, 1)
        x = b.one("stablehlo.reshape", [x], ir.TensorType(tuple(shape), x.type.dtype))
    out_type = lowering.aval_to_type(ctx.avals_out[0])
    return b.one("stablehlo.all_gather", [x], out_type,
                 all_gather_dim=ir.IntegerAttr(all_gather_dimension, "i64"),
                 replica_groups=_replica_groups(ctx, parallel._as_axes(axis_name),
                                                axis_index_groups))


def _reduce_scatter(ctx: lowering.LoweringRuleContext, x: ir.Value, *, axis_name: Any,
                    scatter_dimension: int, axis_index_groups: Any, axis_size: int,
                    tiled: bool) -> ir.Value:
    b = ctx.builder
    shape = list(x.type.shape)
    shape[scatter_dimension] //= axis_size
    region = reductions.monoid_region("add", x.type.dtype)
    out = b.op("stablehlo.reduce_scatter", [x], [ir.TensorType(tuple(shape), x.type.dtype)],
               {"scatter_dimension": ir.IntegerAttr(scatter_dimension, "i64"),
                "replica_groups": _replica_groups(ctx, parallel._as_axes(axis_name),
                                                  axis_index_groups)}, [region]).result
    if tiled:
        return out
    return b.one("stablehlo.reshape", [out], lowering.aval_to_type(ctx.avals_out[0]))


def _ppermute(ctx: lowering.LoweringRuleContext, x: ir.Value, *, axis_name: Any,
              perm: Any) -> ir.Value:
    pairs = np.asarray([(row[source], row[target])
                        for row in _replica_groups(ctx, parallel._as_axes(axis_name))
                        for source, target in perm], np.int64).reshape(-1, 2)
    return ctx.builder.one("stablehlo.collective_permute", [x], x.type,
                           source_target_pairs=pairs)


def _all_to_all(ctx: lowering.LoweringRuleContext, x: ir.Value, *, split_axis: int,
                concat_axis: int, axis_name: Any, axis_index_groups: Any, tiled: bool
                ) -> ir.Value:
    groups = _replica_groups(ctx, parallel._as_axes(axis_name), axis_index_groups)
    return ctx.builder.one("stablehlo.all_to_all", [x], lowering.aval_to_type(ctx.avals_out[0]),
                           split_dimension=ir.IntegerAttr(split_axis, "i64"),
                           concat_dimension=ir.IntegerAttr(concat_axis, "i64"),
                           split_count=ir.IntegerAttr(groups.shape[1], "i64"),
                           replica_groups=groups)


def _axes(params: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(params["axes"])


def _axis_name(params: dict[str, Any]) -> tuple[Any, ...]:
    return parallel._as_axes(params["axis_name"])


_wrap(parallel.psum_p, _axes, _all_reduce("add"))
_wrap(parallel.pmax_p, _axes, _all_reduce("max"))
_wrap(parallel.pmin_p, _axes, _all_reduce("min"))
_wrap(parallel.axis_index_p, _axis_name, _axis_index)
_wrap(parallel.all_gather_p, _axis_name, _all_gather)
_wrap(parallel.reduce_scatter_p, _axis_name, _reduce_scatter)
_wrap(parallel.ppermute_p, _axis_name, _ppermute)
_wrap(parallel.all_to_all_p, _axis_name, _all_to_all)
