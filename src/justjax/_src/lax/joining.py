"""Primitives that join, split and tile whole arrays: `tile`, `stack`, `split` and `unstack`.

JAX defines these in `lax.py` beside `concatenate`; jax.numpy's `tile`, `stack`, `split` (and
its variants) and `unstack` bind them, so their jaxprs print as JAX's do. No param of these
primitives is hidden when printing, so none needs a pp rule.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.hlo.ir import TensorType, Value
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import reductions, sharding_rules, structural, utils
from justjax._src.lax.utils import standard_primitive
from justjax._src.runtime.array import Array

__all__ = ["split", "stack", "tile", "unstack", "split_p", "stack_p", "tile_p", "unstack_p"]


# ---------------------------------------------------------------------------------------------
# Argument helpers. They repeat jax.numpy's (`_src/numpy/util.py`) so the ops layer never
# imports the library layer.

def as_operand(x: Any) -> Any:
    """Tracers and Arrays unchanged; NumPy values and Python scalars as Arrays."""
    if isinstance(x, (core.Tracer, Array)):
        return x
    aval = core.get_aval(x)
    if dtypes.is_extended(aval.dtype):  # a key array
        return x
    return structural.convert_element_type(x, aval.dtype, aval.weak_type)


def _canonicalize_axis(axis: int, ndim: int) -> int:
    """A possibly negative axis as a non-negative one; numpy's AxisError message otherwise."""
    axis = core.concrete_dim(axis, "axis argument: ")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _check_integer_shape(shape: tuple[Any, ...]) -> None:
    """JAX's TypeError when an output shape has non-integer (or traced) entries."""
    try:
        for d in shape:
            if isinstance(d, core.Tracer):
                raise TypeError("traced dimension")
            if not is_symbolic_dim(d):
                operator.index(d)
        return
    except TypeError:
        pass
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    if any(isinstance(d, core.Tracer) for d in shape):
        msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                "subfunctions.")
    raise TypeError(msg)


# ---------------------------------------------------------------------------------------------
# tile

def _tile_shape(x: ShapedArray, *, reps: tuple[int, ...]) -> tuple[int, ...]:
    if x.ndim != len(reps):
        raise TypeError("reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={x.ndim}.")
    return tuple(d * r for d, r in zip(x.shape, reps, strict=True))


tile_p = standard_primitive("tile", _tile_shape, lambda x, **_: x.dtype, utils.first_arg_weak,
                            sharding_rule=sharding_rules.tiled)
dispatch.def_backend_impl(tile_p)


def _tile_transpose(ct: Any, operand: Any, *, reps: tuple[int, ...]) -> list[Any]:
    """Views the cotangent as (reps[0], shape[0], reps[1], shape[1], ...) and sums the
    repetitions."""
    if not ad.is_undefined_primal(operand):
        return [None]
    shape = operand.aval.shape
    interleaved = tuple(k for pair in zip(reps, shape, strict=True) for k in pair)
    repeat_axes = tuple(2 * i for i in range(len(shape)))
    return [reductions.reduce_sum(structural.reshape(ct, interleaved), repeat_axes)]


ad.deflinear2(tile_p, _tile_transpose)


def _tile_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                     dims: Sequence[int | None], *, reps: tuple[int, ...]) -> tuple[Any, int]:
    """The batch axis is tiled once: it stays where it is."""
    operand, = vals
    bdim, = dims
    new_reps = list(reps)
    new_reps.insert(bdim, 1)
    return tile_p.bind(operand, reps=tuple(new_reps)), bdim


batching.primitive_batchers[tile_p] = _tile_batch_rule


def _tile_lower(ctx: LoweringRuleContext, x: Value, *, reps: tuple[int, ...]) -> Value:
    """Each dim d becomes (1, d), is broadcast to (reps, d), and the pairs are merged."""
    b = ctx.builder
    shape = x.type.shape
    expanded = tuple(k for d in shape for k in (1, d))
    x = b.one("stablehlo.reshape", [x], TensorType(expanded, x.type.dtype))
    tiled = tuple(k for pair in zip(reps, shape, strict=True) for k in pair)
    x = lowering.broadcast_in_dim(b, x, tiled, range(len(tiled)))
    return b.one("stablehlo.reshape", [x], lowering.aval_to_type(ctx.avals_out[0]))


lowering.register_lowering(tile_p, _tile_lower)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """`lax.tile`: repeats `operand` `reps[i]` times along dimension i.

    Lowers to a StableHLO `broadcast_in_dim` between two `reshape`s.

    Args:
      operand: the array to tile.
      reps: one repeat count per dimension of `operand`.

    Returns:
      An array of shape `(operand.shape[0] * reps[0], ..., operand.shape[-1] * reps[-1])`.
    """
    if len(reps) == core.get_aval(operand).ndim:
        # Non-integer reps fail as the output shape they would give, as in JAX.
        _check_integer_shape(tuple(np.multiply(core.get_aval(operand).shape, reps)))
    return tile_p.bind(operand, reps=tuple(reps))


# ---------------------------------------------------------------------------------------------
# stack

def _stack_shape(*operands: ShapedArray, axis: int) -> tuple[int, ...]:
    if not operands:
        raise ValueError("stack expects at least one operand, got 0.")
    if len({op.ndim for op in operands}) != 1:
        raise ValueError("Cannot stack arrays with different numbers of dimensions: got "
                         f"{', '.join(str(o.shape) for o in operands)}.")
    if len({op.shape for op in operands}) != 1:
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(o.shape) for o in operands)}.")
    shape = list(operands[0].shape)
    shape.insert(axis, len(operands))
    return tuple(shape)


def _stack_dtype(*operands: ShapedArray, axis: int) -> np.dtype:
    utils.check_same_dtypes("stack", *operands)
    return operands[0].dtype


stack_p = standard_primitive("stack", _stack_shape, _stack_dtype,
                             sharding_rule=sharding_rules.stacked)
dispatch.def_backend_impl(stack_p)
# Each operand's cotangent is its slice of the stacked cotangent.
ad.deflinear2(stack_p, lambda ct, *operands, axis: unstack_p.bind(ct, axis=axis))


def _stack_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                      dims: Sequence[int | None], *, axis: int) -> tuple[Any, int]:
    """Operands batched alike stack around their batch axis; otherwise every batch axis
    goes to the front (unmapped operands broadcast there)."""
    bdim = dims[0]
    if bdim is not None and all(d == bdim for d in dims):
        if axis <= bdim:
            return stack_p.bind(*vals, axis=axis), bdim + 1
        return stack_p.bind(*vals, axis=axis + 1), bdim
    size = axis_data.size
    operands = [structural.broadcast(op, (size,)) if d is None else batching.moveaxis(op, d, 0)
                for op, d in zip(vals, dims, strict=True)]
    return stack_p.bind(*operands, axis=axis + 1), 0


batching.primitive_batchers[stack_p] = _stack_batch_rule


def _stack_lower(ctx: LoweringRuleContext, *xs: Value, axis: int) -> Value:
    """Each operand gets a unit dim at `axis` (`broadcast_in_dim`); those concatenate."""
    shape = list(xs[0].type.shape)
    shape.insert(axis, 1)
    dims = [i for i in range(len(shape)) if i != axis]
    expanded = [lowering.broadcast_in_dim(ctx.builder, x, shape, dims) for x in xs]
    return structural.concatenate_hlo(ctx.builder, expanded, axis)


lowering.register_lowering(stack_p, _stack_lower)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """`lax.stack`: joins equal-shaped arrays of one dtype along a new axis.

    Lowers to StableHLO `broadcast_in_dim` of each operand + `concatenate`.

    Args:
      operands: the arrays to stack (same shape and dtype).
      axis: position of the new axis in the result.

    Returns:
      An array with one more dimension than the operands, of size `len(operands)` at `axis`.
    """
    arrays = [as_operand(op) for op in operands]
    axis = _canonicalize_axis(axis, arrays[0].ndim + 1)
    return stack_p.bind(*arrays, axis=axis)


# ---------------------------------------------------------------------------------------------
# split

def _split_abstract(x: ShapedArray, *, sizes: tuple[int, ...], axis: int) -> list[ShapedArray]:
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != sum(sizes):
        raise ValueError(f"Sum of sizes {np.sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}")
    shapes = []
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = size
        shapes.append(ShapedArray(tuple(shape), x.dtype, x.weak_type))
    return shapes




split_p = Primitive("split", multiple_results=True)
split_p.def_abstract_eval(_split_abstract)
sharding_rules.register(split_p, sharding_rules.varying_shape("split"))
dispatch.def_backend_impl(split_p)


def _split_transpose(cts: Sequence[Any], operand: Any, *, sizes: tuple[int, ...], axis: int
                     ) -> list[Any]:
    # Pieces that got no cotangent contribute explicit zeros to the concatenation.
    if all(type(ct) is ad.Zero for ct in cts):
        return [ad.Zero(operand.aval)]
    pieces = [ad.instantiate_zeros(ct) for ct in cts]
    return [structural.concatenate(pieces, dimension=axis)]


ad.deflinear2(split_p, _split_transpose)


def _split_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                      dims: Sequence[int | None], *, sizes: tuple[int, ...], axis: int
                      ) -> tuple[list[Any], list[int]]:
    operand, = vals
    bdim, = dims
    outs = split_p.bind(operand, sizes=sizes, axis=axis + 1 if axis >= bdim else axis)
    return outs, [bdim] * len(sizes)


batching.primitive_batchers[split_p] = _split_batch_rule


def _slice_along(ctx: LoweringRuleContext, x: Value, axis: int, start: int, size: int) -> Value:
    """`stablehlo.slice` of `size` elements from `start` along `axis` (others whole)."""
    starts = [0] * x.type.rank
    limits = list(x.type.shape)
    starts[axis], limits[axis] = start, start + size
    shape = tuple(limits[i] - starts[i] for i in range(x.type.rank))
    return ctx.builder.one("stablehlo.slice", [x], TensorType(shape, x.type.dtype),
                           start_indices=tuple(starts), limit_indices=tuple(limits),
                           strides=(1,) * x.type.rank)


def _split_lower(ctx: LoweringRuleContext, x: Value, *, sizes: tuple[int, ...],
                 axis: int) -> list[Value]:
    starts = np.cumsum((0,) + tuple(sizes))[:-1]
    return [_slice_along(ctx, x, axis, int(start), size)
            for start, size in zip(starts, sizes, strict=True)]


lowering.register_lowering(split_p, _split_lower)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """`lax.split`: consecutive chunks of the given sizes along `axis`.

    Lowers to one StableHLO `slice` per chunk.

    Args:
      operand: the array to split.
      sizes: the chunk sizes; they must sum to `operand.shape[axis]`.
      axis: the axis to split along.

    Returns:
      `len(sizes)` arrays, the i-th of size `sizes[i]` along `axis`.
    """
    operand = as_operand(operand)
    return split_p.bind(operand, sizes=tuple(sizes),
                        axis=_canonicalize_axis(axis, operand.ndim))


# ---------------------------------------------------------------------------------------------
# unstack

def _unstack_abstract(x: ShapedArray, *, axis: int) -> list[ShapedArray]:
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type)] * x.shape[axis]


unstack_p = Primitive("unstack", multiple_results=True)
unstack_p.def_abstract_eval(_unstack_abstract)
sharding_rules.register(unstack_p, sharding_rules.unstacked)
dispatch.def_backend_impl(unstack_p)


def _unstack_transpose(cts: Sequence[Any], operand: Any, *, axis: int) -> list[Any]:
    if all(type(ct) is ad.Zero for ct in cts):
        return [ad.Zero(operand.aval)]
    return [stack_p.bind(*[ad.instantiate_zeros(ct) for ct in cts], axis=axis)]


ad.deflinear2(unstack_p, _unstack_transpose)


def _unstack_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, axis: int
                        ) -> tuple[list[Any], list[int]]:
    """Unstacks around the batch axis, which stays in every piece."""
    operand, = vals
    bdim, = dims
    if axis < bdim:
        outs = unstack_p.bind(operand, axis=axis)
        return outs, [bdim - 1] * len(outs)
    outs = unstack_p.bind(operand, axis=axis + 1)
    return outs, [bdim] * len(outs)


batching.primitive_batchers[unstack_p] = _unstack_batch_rule


def _unstack_lower(ctx: LoweringRuleContext, x: Value, *, axis: int) -> list[Value]:
    """One size-1 `slice` per index along `axis`, reshaped to drop that axis."""
    out_type = lowering.aval_to_type(ctx.avals_out[0]) if ctx.avals_out else None
    return [ctx.builder.one("stablehlo.reshape", [_slice_along(ctx, x, axis, i, 1)], out_type)
            for i in range(x.type.shape[axis])]


lowering.register_lowering(unstack_p, _unstack_lower)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """`lax.unstack`: the slices of `x` along `axis`, that axis removed.

    Lowers to one StableHLO `slice` + `reshape` per slice.

    Args:
      x: the array to unstack.
      axis: the axis to unstack along.

    Returns:
      A tuple of `x.shape[axis]` arrays.
    """
    arr = as_operand(x)
    return tuple(unstack_p.bind(arr, axis=_canonicalize_axis(axis, arr.ndim)))
