"""Sorting primitives: the multi-operand `sort` and `top_k`.

`sort` orders lexicographically by its first `num_keys` operands, stably. Float keys use JAX's
comparator: -0.0 equals 0.0 and every NaN (of either sign) sorts after +inf; complex keys
compare (real, imag). `top_k` uses XLA's total order instead (-NaN < -inf < ... < -0.0 < 0.0 <
... < inf < NaN), largest first, ties in index order.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import exceeds
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import gather_scatter, sharding_rules, structural

__all__ = ["sort", "sort_key_val", "top_k", "sort_p", "top_k_p"]


def _canonicalize_axis(axis: int, ndim: int) -> int:
    """`axis` in `[0, ndim)`, negative axes counting from the end (JAX's `canonicalize_axis`)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


# -- sort ---------------------------------------------------------------------------------------

def _sort_abstract_eval(*avals: ShapedArray, dimension: int, is_stable: bool, num_keys: int
                        ) -> list[ShapedArray]:
    if any(a.shape != avals[0].shape for a in avals[1:]):
        shapes = " ".join(str(a.shape) for a in avals)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
    # JAX leaves these two to the XLA verifier; checking them here keeps the error early.
    if not 0 <= dimension < avals[0].ndim:
        raise ValueError(f"sort dimension {dimension} is out of bounds for array of dimension "
                         f"{avals[0].ndim}")
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(avals)}")
    return list(avals)








sort_p = Primitive("sort", multiple_results=True)
sort_p.def_abstract_eval(_sort_abstract_eval)
sharding_rules.register(sort_p, sharding_rules.unsplit_along(
    "dimension", lambda aval, dim: "Arguments to sort must be unsharded over the sorting "
    f"dimension. Got arg sharding={aval.sharding} and sorting dimension={dim}"))
dispatch.def_backend_impl(sort_p)

_UINT32_MAX = int(np.iinfo(np.uint32).max)


def _index_dtype_for(shape: tuple[int, ...]) -> np.dtype:
    """The unsigned index type JAX uses for positions in `shape`."""
    return np.dtype(np.uint64 if any(d > _UINT32_MAX for d in shape) else np.uint32)


def _sort_jvp(primals: list[Any], tangents: list[Any], *, dimension: int, is_stable: bool,
              num_keys: int) -> tuple[list[Any], list[Any]]:
    """JAX's rule: sort an iota along with the operands to learn the permutation, then gather
    each tangent through it (so tied keys keep their own tangents, in sorted order)."""
    shape = core.get_aval(primals[0]).shape
    iota = structural.broadcasted_iota(_index_dtype_for(shape), shape, dimension)
    *sorted_primals, permutation = sort_p.bind(*primals, iota, dimension=dimension,
                                               is_stable=is_stable, num_keys=num_keys)
    # np.int64 entries, as JAX computes them (they show in the printed jaxpr).
    batch_dims = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(dimension,), start_index_map=(dimension,),
        operand_batching_dims=batch_dims, start_indices_batching_dims=batch_dims)
    indices = structural.expand_dims(permutation, (len(shape),))
    tangents_out = [
        t if type(t) is ad.Zero else gather_scatter.gather(
            t, indices, dnums, (1,) * len(shape),
            mode=gather_scatter.GatherScatterMode.PROMISE_IN_BOUNDS)
        for t in tangents]
    return sorted_primals, tangents_out


ad.primitive_jvps[sort_p] = _sort_jvp


def _sort_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                  dims: Sequence[int | None], *, dimension: int, is_stable: bool,
                  num_keys: int) -> tuple[list[Any], list[int]]:
    """JAX's rule: the first mapped operand's batch axis is the batch axis of all; the
    other mapped operands move theirs there and unmapped ones are broadcast to its shape. The
    sorted dimension is renumbered around it."""
    prototype, bdim = next((v, d) for v, d in zip(vals, dims, strict=True) if d is not None)
    shape = core.get_aval(prototype).shape
    # Python ints here, as JAX builds them (they show in printed jaxprs).
    kept = tuple(int(d) for d in np.delete(np.arange(len(shape)), bdim))
    operands = [structural.broadcast_in_dim(v, shape, kept) if d is None
                else batching.moveaxis(v, d, bdim)
                for v, d in zip(vals, dims, strict=True)]
    new_dimension = dimension + (bdim <= dimension)
    outs = sort_p.bind(*operands, dimension=new_dimension, is_stable=is_stable,
                       num_keys=num_keys)
    return outs, [bdim] * len(outs)


batching.primitive_batchers[sort_p] = _sort_batcher


def _ndim(x: Any) -> int:
    return core.get_aval(x).ndim


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """XLA's Sort (StableHLO `sort` with a lexicographic less-than comparator).

    Float keys: -0.0 and 0.0 are equal and NaNs sort to the end; complex keys compare
    (real, imag) lexicographically.

    Args:
      operand: an array, or a sequence of arrays of one shape.
      dimension: the dimension to sort along.
      is_stable: whether equal keys keep their order.
      num_keys: how many leading operands are keys (lexicographic, the first primary); the
        rest follow the same permutation.
    Returns:
      The sorted array, or a tuple of the sorted operands.
    """
    if isinstance(operand, Sequence):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dimension = _canonicalize_axis(dimension, _ndim(operand[0]))
        return tuple(sort_p.bind(*operand, dimension=dimension, is_stable=is_stable,
                                 num_keys=num_keys))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dimension = _canonicalize_axis(dimension, _ndim(operand))
    return sort_p.bind(operand, dimension=dimension, is_stable=is_stable, num_keys=1)[0]


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Any, Any]:
    """Sorts `keys` along `dimension` and applies the same permutation to `values`."""
    dimension = _canonicalize_axis(dimension, _ndim(keys))
    sorted_keys, sorted_values = sort_p.bind(keys, values, dimension=dimension,
                                             is_stable=is_stable, num_keys=1)
    return sorted_keys, sorted_values


# -- top_k --------------------------------------------------------------------------------------

_INT32_MAX = int(np.iinfo(np.int32).max)


def _top_k_abstract_eval(operand: ShapedArray, *, k: int, axis: int) -> list[ShapedArray]:
    if dtypes.is_complex(operand.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if operand.ndim == 0:
        raise TypeError(f"top_k operand must have >= 1 dimension, got {operand.shape}")
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"axis argument out of range: axis={axis} for "
                         f"operand.shape={operand.shape}")
    shape = list(operand.shape)
    if shape[axis] < k:
        raise ValueError("k argument to top_k must be no larger than size along axis;"
                         f" got k={k} with shape={shape} and axis={axis}")
    if exceeds(shape[axis], _INT32_MAX + 1):
        raise ValueError("top_k returns int32 indices, which will overflow for array dimensions "
                         f"larger than the maximum int32 ({_INT32_MAX}). Got "
                         f"operand.shape={operand.shape}")
    shape[axis] = k
    # As in JAX, both outputs keep the operand's weak type, the int32 indices included.
    return [operand.update(shape=tuple(shape)),
            operand.update(shape=tuple(shape), dtype=dtypes.int32)]




top_k_p = Primitive("top_k", multiple_results=True)
top_k_p.def_abstract_eval(_top_k_abstract_eval)
sharding_rules.register(top_k_p, sharding_rules.unsplit_along(
    "axis", lambda aval, axis: "The input should be unsharded over the axis along which to "
    f"compute the top_k values. Got input type={aval} and axis={axis}"))
dispatch.def_backend_impl(top_k_p)


def _top_k_jvp(primals: list[Any], tangents: list[Any], *, k: int, axis: int
               ) -> tuple[list[Any], list[Any]]:
    """The tangent of each value is the operand's tangent gathered at its index; the indices
    have none."""
    operand, = primals
    tangent, = tangents
    values, indices = top_k_p.bind(operand, k=k, axis=axis)
    index_shape = core.get_aval(indices).shape
    rank = len(index_shape)
    batch_dims = tuple(i for i in range(rank) if i != axis)
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
        operand_batching_dims=batch_dims, start_indices_batching_dims=batch_dims)
    gather_indices = structural.reshape(indices, index_shape + (1,))
    tangent_out = gather_scatter.gather(tangent, gather_indices, dnums, (1,) * rank)
    return [values, indices], [tangent_out, ad.Zero.from_primal_value(indices)]


ad.primitive_jvps[top_k_p] = _top_k_jvp


def _top_k_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                   dims: Sequence[int | None], *, k: int, axis: int
                   ) -> tuple[list[Any], list[int]]:
    """The batch axis stays in place; the searched axis is renumbered around it."""
    operand, = vals
    bdim, = dims
    new_axis = axis + 1 if bdim <= axis else axis
    return top_k_p.bind(operand, k=k, axis=new_axis), [bdim, bdim]


batching.primitive_batchers[top_k_p] = _top_k_batcher


def top_k(operand: Any, k: int, *, axis: int = -1) -> list[Any]:
    """The `k` largest entries along `axis` and their int32 indices, largest first.

    Equal elements appear in index order (lower index first). Lowers to CHLO `top_k` (on the
    last axis, with transposes around it for other axes).

    Args:
      operand: an array of a non-complex type with at least one dimension.
      k: how many entries to return.
      axis: the axis to search (default the last).
    Returns:
      `[values, indices]`, each with `axis` of size `k`.
    """
    k = core.concrete_dim(k, "top_k k: ")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    axis = _canonicalize_axis(axis, _ndim(operand))
    # A list, as JAX returns it.
    return list(top_k_p.bind(operand, k=k, axis=axis))


# -- lowering -----------------------------------------------------------------------------------

def _key_compare(b: ir.Builder, x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    """A comparison in the order the sort comparator needs: floats by TOTALORDER (their
    canonical forms make it JAX's order), integers and bools as `lowering.compare`."""
    if not dtypes.is_float(x.type.dtype):
        return lowering.compare(b, x, y, direction)
    return b.one("stablehlo.compare", [x, y], ir.TensorType((), np.bool_),
                 comparison_direction=ir.Enum("comparison_direction", direction),
                 compare_type=ir.Enum("comparison_type", "TOTALORDER"))


def _canonical_float(b: ir.Builder, x: ir.Value) -> ir.Value:
    """`x` with -0.0 made 0.0 and every NaN the same NaN, so that TOTALORDER comparisons
    treat them as equal (JAX's `_canonicalize_float_for_sort`)."""
    dtype = x.type.dtype
    is_zero = lowering.compare(b, x, lowering.constant(b, np.zeros((), dtype)), "EQ")
    result = b.one("stablehlo.select", [is_zero, lowering.constant(b, np.zeros((), dtype)), x],
                   x.type)
    is_nan = lowering.compare(b, x, x, "NE")
    return b.one("stablehlo.select", [is_nan, lowering.constant(b, np.array(np.nan, dtype)),
                                      result], x.type)


def _comparator_keys(b: ir.Builder, x: ir.Value) -> list[ir.Value]:
    """The values the comparator orders one operand by, primary first."""
    dtype = x.type.dtype
    if dtypes.is_complex(dtype):
        part = ir.TensorType((), np.real(np.zeros((), dtype)).dtype)
        return [_canonical_float(b, b.one(f"stablehlo.{name}", [x], part))
                for name in ("real", "imag")]
    if dtypes.is_float(dtype):
        return [_canonical_float(b, x)]
    return [x]


def _sort_comparator(arg_types: Sequence[ir.TensorType], num_keys: int) -> ir.Region:
    """The region `(x0, y0, x1, y1, ...) -> x < y` comparing the first `num_keys` operands
    lexicographically (JAX's `_sort_lt_comparator`)."""
    region, b = ir.new_region([t for t in arg_types for _ in range(2)])
    args = region.block.args
    x_keys: list[ir.Value] = []
    y_keys: list[ir.Value] = []
    for i in range(num_keys):
        x_keys += _comparator_keys(b, args[2 * i])
        y_keys += _comparator_keys(b, args[2 * i + 1])
    less = None
    bool_type = ir.TensorType((), np.bool_)
    for x, y in zip(x_keys[::-1], y_keys[::-1], strict=True):
        key_less = _key_compare(b, x, y, "LT")
        if less is not None:
            tie = b.one("stablehlo.and", [_key_compare(b, x, y, "EQ"), less], bool_type)
            key_less = b.one("stablehlo.or", [key_less, tie], bool_type)
        less = key_less
    b.ret([less])
    return region


def _sort_lowering(ctx: lowering.LoweringRuleContext, *operands: ir.Value, dimension: int,
                   is_stable: bool, num_keys: int) -> list[ir.Value]:
    """`stablehlo.sort` with JAX's lexicographic less-than comparator."""
    scalar_types = [ir.TensorType((), v.type.dtype) for v in operands]
    op = ctx.builder.op("stablehlo.sort", list(operands),
                        [lowering.aval_to_type(a) for a in ctx.avals_out],
                        {"dimension": int(dimension), "is_stable": bool(is_stable)},
                        [_sort_comparator(scalar_types, num_keys)])
    return list(op.results)


lowering.register_lowering(sort_p, _sort_lowering)


def _top_k_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value, *, k: int,
                    axis: int) -> list[ir.Value]:
    """`chlo.top_k` (on the last axis), with transposes around it for another axis."""
    b = ctx.builder
    rank = operand.type.rank
    out_types = [lowering.aval_to_type(a) for a in ctx.avals_out]
    if axis == rank - 1:
        return list(b.op("chlo.top_k", [operand], out_types, {"k": int(k)}).results)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]

    def transpose(x: ir.Value) -> ir.Value:
        shape = tuple(x.type.shape[p] for p in perm)
        return b.one("stablehlo.transpose", [x], ir.TensorType(shape, x.type.dtype),
                     permutation=tuple(perm))

    moved = transpose(operand)
    moved_types = [ir.TensorType(tuple(t.shape[p] for p in perm), t.dtype) for t in out_types]
    results = b.op("chlo.top_k", [moved], moved_types, {"k": int(k)}).results
    return [transpose(r) for r in results]


lowering.register_lowering(top_k_p, _top_k_lowering)
