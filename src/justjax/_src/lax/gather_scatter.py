"""lax: gather and the scatter family (scatter, scatter-add/sub/mul/min/max), each with its
rules (abstract eval, lowering, jvp/transpose, batching), with XLA's semantics.

`gather` clamps start indices (modes CLIP and PROMISE_IN_BOUNDS) or fills whole out-of-bounds
windows with `fill_value` (FILL_OR_DROP). Scatters drop whole out-of-bounds update windows
unless the mode is CLIP. Duplicate scatter indices accumulate for the combining scatters; for
plain `scatter` the last update in row-major update order wins, and a custom `update_jaxpr`
(from `scatter_apply`) is applied once per duplicate, in order.

The derivative and batching rules follow JAX's, so printed jaxprs match: `gather` transposes
to `scatter-add`; `scatter-add`/`scatter-sub` are linear, `scatter-mul` is linear in its
operand (its update derivative needs unique indices); `scatter-min`/`scatter-max` split the
tangent evenly between ties; `scatter` with possibly repeated indices tags each update with an
id to find which one won each slot, and builds the result with `scatter-add` of the winners.
A transposed gather keeps its mode (a filled window gets no cotangent); a transposed scatter
gathers with the scatter's mode and a fill of zero, so dropped updates get no cotangent. Under
vmap, the batch axis is folded into the dimension numbers (an operand window, a leading batch
dim of the indices, or `operand_batching_dims`/`start_indices_batching_dims` when both are
batched); unmapped operands and updates of a scatter are broadcast first.
"""
from __future__ import annotations

import builtins
import enum
import math
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from justjax._src.numerics import shapes
from justjax._src.numerics.conversions import convert_values
from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import exceeds
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import Jaxpr, tracing_cache
from justjax._src.hlo import ir
from justjax._src.hlo.ir import TensorType, Value
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters.batching import AxisData
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import (elementwise, reductions, selection, sharding_rules, structural,
                              utils)
from justjax._src.lax.utils import standard_primitive

__all__ = [
    "gather", "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
    "scatter_apply", "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
    "gather_p", "scatter_p", "scatter_add_p", "scatter_sub_p", "scatter_mul_p", "scatter_min_p",
    "scatter_max_p",
]

Dims = Sequence[int | None]


# -- dimension numbers and modes ---------------------------------------------------------------

class GatherDimensionNumbers(NamedTuple):
    """XLA's gather dimension numbers; the index vector is always the last index dimension.

    offset_dims: output dims holding the (non-collapsed) slice window, ascending.
    collapsed_slice_dims: operand dims with slice size 1 that are dropped, ascending.
    start_index_map: operand dim addressed by each entry of the index vector.
    operand_batching_dims / start_indices_batching_dims: paired batch dims of operand and
    indices (operand slice size 1), gathered elementwise.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """XLA's scatter dimension numbers (the transpose of gather's); the index vector is the
    last index dimension."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """How out-of-bounds gather/scatter indices behave.

    CLIP clamps start indices so the whole window is in bounds. FILL_OR_DROP fills a gathered
    window that is not entirely in bounds with the fill value, and drops such scatter windows.
    PROMISE_IN_BOUNDS makes no promise; in practice gathers clamp and scatters drop.
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """Parses 'clip', 'fill'/'drop'/None, 'promise_in_bounds', 'one_hot' or a mode."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


def _is_sorted(dims: Sequence[int], op: str, name: str) -> None:
    if any(dims[i] < dims[i - 1] for i in range(1, len(dims))):
        raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _dims_in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    for dim in dims:
        if dim < 0 or dim >= rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); "
                            f"got: {dim}.")


def _no_duplicate_dims(dims: Sequence[int], op: str, name: str) -> None:
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _disjoint_dims(dims1: Sequence[int], dims2: Sequence[int], op: str, name1: str,
                   name2: str) -> None:
    if not set(dims1).isdisjoint(dims2):
        raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; got: {dims1} and "
                        f"{dims2}.")


def _check_sorted_unique_in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    _is_sorted(dims, op, name)
    _no_duplicate_dims(dims, op, name)
    _dims_in_range(dims, rank, op, name)


def _check_batching_dims(op: str, operand: ShapedArray, indices: ShapedArray,
                         operand_dims: Sequence[int], index_dims: Sequence[int],
                         index_name: str) -> None:
    _no_duplicate_dims(index_dims, op, index_name)
    _dims_in_range(index_dims, indices.ndim, op, index_name)
    Op = op.capitalize()
    if indices.ndim - 1 in index_dims:
        raise TypeError(f"{Op} op cannot have the index vector dimension as a batching "
                        f"dimension; got {index_dims}.")
    if len(operand_dims) != len(index_dims):
        raise TypeError(f"{Op} op requires equal numbers of operand_batching_dims and "
                        f"{index_name}, got {operand_dims} and"
                        f"{'' if op == 'gather' else ' '}{index_dims}.")
    operand_batch = tuple(operand.shape[i] for i in operand_dims)
    index_batch = tuple(indices.shape[i] for i in index_dims)
    if operand_batch != index_batch:
        raise TypeError(f"{Op} op requires operand batching dimensions and indices batching "
                        f"dimensions to have the same shape, got {operand_batch} and "
                        f"{index_batch}.")


# -- helpers -----------------------------------------------------------------------------------

def _full(shape: Sequence[int], value: Any, dtype: np.dtype, weak_type: bool = False,
          sharding: Any = None) -> Any:
    """`lax.full`: a broadcast scalar constant (the scalar itself for shape ()), its type
    split as `sharding` (a type's sharding over Explicit axes) says."""
    if weak_type:
        scalar = structural.convert_element_type(value, dtype, weak_type=True)
    else:
        scalar = np.array(value, dtype)
    if not tuple(shape):
        return scalar
    return structural.broadcast_in_dim_p.bind(scalar, shape=tuple(shape), broadcast_dimensions=(),
                                              sharding=sharding)


def _full_like(x: Any, value: Any, dtype: Any = None) -> Any:
    """`lax.full_like`: keeps `x`'s weak type unless a dtype is given."""
    aval = core.get_aval(x)
    if dtype is None:
        return _full(aval.shape, value, aval.dtype, aval.weak_type)
    return _full(aval.shape, value, np.dtype(dtype))


def _scalar_like(x: Any, value: Any) -> np.ndarray:
    """A constant scalar of `x`'s dtype (a literal in jaxprs, like JAX's Python scalars)."""
    return np.array(value, core.get_aval(x).dtype)


def _zero_scalar(x: Any) -> np.ndarray:
    return _scalar_like(x, 0)


def _ct_zero_or_none(arg: Any) -> Any:
    """The cotangent of `arg` for a symbolic-zero output cotangent."""
    return ad.Zero(arg.aval) if ad.is_undefined_primal(arg) else None


def _shape_of(x: Any) -> tuple[int, ...]:
    return x.aval.shape if ad.is_undefined_primal(x) else core.get_aval(x).shape


def _inverse_gather_dnums(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    """The gather reading back exactly the places a scatter with `dn` writes."""
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)


def _inverse_scatter_dnums(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    """The scatter writing to exactly the places a gather with `dn` reads."""
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)


def _inverse_slice_sizes(operand_ndim: int, dn: ScatterDimensionNumbers,
                         updates_shape: Sequence[int]) -> list[int]:
    """Slice sizes of the inverse gather: 1 on inserted and batching dims, the update window
    sizes (in order) on the others."""
    window_sizes = iter(updates_shape[d] for d in dn.update_window_dims)
    singular = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    return [1 if d in singular else next(window_sizes) for d in range(operand_ndim)]


def _gather_back(x: Any, indices: Any, dn: ScatterDimensionNumbers,
                 updates_shape: Sequence[int], **kwargs: Any) -> Any:
    """The windows of `x` a scatter with `dn` and updates of `updates_shape` writes."""
    sizes = _inverse_slice_sizes(core.get_aval(x).ndim, dn, updates_shape)
    return gather(x, indices, _inverse_gather_dnums(dn), sizes, **kwargs)


# -- gather ------------------------------------------------------------------------------------

def _gather_shape(operand: ShapedArray, indices: ShapedArray, *,
                  dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                  **_: Any) -> tuple[int, ...]:
    dn = dimension_numbers
    if indices.ndim < 1:
        raise TypeError(f"Gather index leaf dimension must be within [0, rank(indices) + 1). "
                        f"rank(indices) is {indices.ndim} and gather index leaf dimension is "
                        f"{indices.ndim - 1}.")
    _is_sorted(dn.offset_dims, "gather", "offset_dims")
    _no_duplicate_dims(dn.offset_dims, "gather", "offset_dims")
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    for i, dim in enumerate(dn.offset_dims):
        if dim < 0 or dim >= out_rank:
            raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {dim}, "
                            f"but should have been in [0, {out_rank})")
    if len(dn.start_index_map) != indices.shape[-1]:
        raise TypeError(f"Gather op has {len(dn.start_index_map)} elements in start_index_map "
                        f"and the bound of dimension index_vector_dim={indices.ndim - 1} of "
                        f"indices is {indices.shape[-1]}. These two numbers must be equal.")
    for i, dim in enumerate(dn.start_index_map):
        if dim < 0 or dim >= operand.ndim:
            raise TypeError(f"Invalid start_index_map; domain is [0, {operand.ndim}), got: "
                            f"{i}->{dim}.")
    _no_duplicate_dims(dn.start_index_map, "gather", "start_index_map")
    _check_sorted_unique_in_range(dn.collapsed_slice_dims, operand.ndim, "gather",
                                  "collapsed_slice_dims")
    _check_sorted_unique_in_range(dn.operand_batching_dims, operand.ndim, "gather",
                                  "operand_batching_dims")
    _disjoint_dims(dn.collapsed_slice_dims, dn.operand_batching_dims, "gather",
                   "collapsed_slice_dims", "operand_batching_dims")
    _disjoint_dims(dn.start_index_map, dn.operand_batching_dims, "gather", "start_index_map",
                   "operand_batching_dims")
    _check_batching_dims("gather", operand, indices, dn.operand_batching_dims,
                         dn.start_indices_batching_dims, "start_indices_batching_dims")
    if operand.ndim != len(slice_sizes):
        raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim}")
    if len(slice_sizes) != (len(dn.offset_dims) + len(dn.collapsed_slice_dims)
                            + len(dn.operand_batching_dims)):
        raise TypeError("All components of the offset index in a gather op must either be a "
                        f"offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes="
                        f"{dn.offset_dims}, collapsed_slice_dims={dn.collapsed_slice_dims}, "
                        f"operand_batching_dims={dn.operand_batching_dims}.")
    for i, (size, bound) in enumerate(zip(slice_sizes, operand.shape, strict=True)):
        if indices.size and not 0 <= size <= bound:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {bound} + 1), got {size}.")
    for i, dim in enumerate(dn.collapsed_slice_dims):
        if slice_sizes[dim] != 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound is "
                            f"{slice_sizes[dim]} for index {dim} at position {i}.")
    for i, dim in enumerate(dn.operand_batching_dims):
        if slice_sizes[dim] > 1:
            raise TypeError(f"Gather op can only have operand batching dims with bound 0/1, but "
                            f"bound is {slice_sizes[dim]} for index {dim} at position {i}.")
    return _gather_out_shape(indices.shape, dn, slice_sizes)


def _gather_out_shape(indices_shape: Sequence[int], dn: GatherDimensionNumbers,
                      slice_sizes: Sequence[int]) -> tuple[int, ...]:
    return shapes.gather_out_shape(indices_shape, dn.offset_dims, dn.collapsed_slice_dims,
                                   dn.operand_batching_dims, slice_sizes)


def _gather_dtype(operand: ShapedArray, indices: ShapedArray, **_: Any) -> np.dtype:
    if not dtypes.is_int(indices.dtype):
        raise ValueError("indices must have an integer type")
    return operand.dtype


def _fill_scalar(fill_value: Any, dtype: np.dtype) -> np.ndarray:
    return convert_values(np.asarray(fill_value), dtype)


gather_p = standard_primitive("gather", _gather_shape, _gather_dtype, utils.first_arg_weak,
                              sharding_rule=sharding_rules.gather)
dispatch.def_backend_impl(gather_p)


def _gather_lower(ctx: LoweringRuleContext, operand: Value, indices: Value, *,
                  dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                  unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                  fill_value: Any) -> Value:
    """`stablehlo.gather`, which clamps start indices; the fill mode masks the windows that
    were out of bounds afterwards (`_gather_fill`), as JAX lowers it."""
    if mode == GatherScatterMode.FILL_OR_DROP:
        fill = lowering.lower_fun(_gather_fill, multiple_results=False)
        return fill(ctx, operand, indices, dimension_numbers=dimension_numbers,
                    slice_sizes=slice_sizes, indices_are_sorted=indices_are_sorted,
                    fill_value=fill_value)
    aval_out, = ctx.avals_out
    if aval_out.size == 0:
        return lowering.broadcast_in_dim(
            ctx.builder, lowering.constant(ctx.builder, 0, aval_out.dtype), aval_out.shape, ())
    dn = dimension_numbers
    ir_dn = ir.GatherDimensionNumbers(
        offset_dims=tuple(dn.offset_dims), collapsed_slice_dims=tuple(dn.collapsed_slice_dims),
        operand_batching_dims=tuple(dn.operand_batching_dims),
        start_indices_batching_dims=tuple(dn.start_indices_batching_dims),
        start_index_map=tuple(dn.start_index_map), index_vector_dim=indices.type.rank - 1)
    return ctx.builder.one("stablehlo.gather", [operand, indices],
                           lowering.aval_to_type(aval_out), dimension_numbers=ir_dn,
                           indices_are_sorted=bool(indices_are_sorted),
                           slice_sizes=tuple(d if core.is_symbolic_dim(d) else int(d)
                                             for d in slice_sizes))


def _index_dtype(shape: Sequence[int]) -> np.dtype:
    """int32, or int64 for a dimension int32 cannot index (JAX's `int_dtype_for_shape`)."""
    if any(exceeds(d, np.iinfo(np.int32).max) for d in shape):
        return np.dtype(np.int64)
    return np.dtype(np.int32)


def _gather_fill(operand: Any, indices: Any, *, dimension_numbers: GatherDimensionNumbers,
                 slice_sizes: tuple[int, ...], indices_are_sorted: bool,
                 fill_value: Any) -> Any:
    """A fill-mode gather as a clamping gather whose windows that were not entirely in
    bounds are replaced by `fill_value`."""
    dn = dimension_numbers
    shape = core.get_aval(operand).shape
    index_dtype = _index_dtype(shape)
    indices = structural.convert_element_type(indices, index_dtype)
    index_shape = core.get_aval(indices).shape
    batch_rank = len(index_shape) - 1
    zero = structural.broadcast_in_dim(np.zeros((), index_dtype), index_shape, ())
    above = elementwise.ge(indices, zero)
    bounds = [shape[d] - slice_sizes[d] for d in dn.start_index_map]
    if any(is_symbolic_dim(v) for v in bounds):
        upper = structural.concatenate(
            [structural.reshape(structural.convert_element_type(v, index_dtype), (1,))
             for v in bounds], 0)
    else:
        upper = np.array(bounds, index_dtype)
    upper = structural.broadcast_in_dim(structural.expand_dims(upper, range(batch_rank)),
                                        index_shape, range(len(index_shape)))
    mask = elementwise.bitwise_and(above, elementwise.le(indices, upper))
    mask = reductions.reduce_and(mask, (batch_rank,))
    out = gather_p.bind(operand, indices, dimension_numbers=dn, slice_sizes=slice_sizes,
                        unique_indices=False, indices_are_sorted=indices_are_sorted,
                        mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)
    out_aval = core.get_aval(out)
    batch_dims = [i for i in range(out_aval.ndim) if i not in dn.offset_dims]
    mask = structural.broadcast_in_dim(mask, out_aval.shape, batch_dims)
    fill = structural.broadcast_in_dim(_fill_scalar(fill_value, out_aval.dtype),
                                       out_aval.shape, ())
    return selection.select(mask, out, fill)


lowering.register_lowering(gather_p, _gather_lower)


def _default_fill_value(dtype: np.dtype) -> Any:
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_signed(dtype):
        return int(dtypes.iinfo(dtype).min)
    if dtypes.is_unsigned(dtype):
        return int(dtypes.iinfo(dtype).max)
    return True


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value: Any = None) -> Any:
    """XLA's gather: windows of `slice_sizes` taken at `start_indices` (StableHLO `gather`).

    Args:
      mode: 'clip' or 'promise_in_bounds' (the default) clamp the start indices;
        'fill'/'drop' give `fill_value` for any window not entirely in bounds.
      fill_value: defaults to NaN for inexact dtypes, the minimum of signed and the maximum of
        unsigned integers, and True for bools.
    """
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                        else mode)
    if parsed == GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = _default_fill_value(core.get_aval(operand).dtype)
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=dimension_numbers,
                         slice_sizes=core.canonicalize_shape(slice_sizes),
                         unique_indices=bool(unique_indices),
                         indices_are_sorted=bool(indices_are_sorted), mode=parsed,
                         fill_value=fill_value)


def _gather_jvp(g: Any, operand: Any, indices: Any, *, dimension_numbers: Any,
                slice_sizes: tuple[int, ...], unique_indices: bool, indices_are_sorted: bool,
                mode: Any, fill_value: Any) -> Any:
    # Filled windows are constants: their tangent is 0.
    return gather(g, indices, dimension_numbers, slice_sizes,
                          unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                          mode=mode, fill_value=0)


def _gather_transpose(ct: Any, operand: Any, indices: Any, *, dimension_numbers: Any,
                      slice_sizes: tuple[int, ...], unique_indices: bool,
                      indices_are_sorted: bool, mode: Any, fill_value: Any) -> list[Any]:
    # scatter-add with the same mode: filled (out-of-bounds) windows are dropped, clipped
    # ones accumulate where the gather read them.
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), None]
    # The zeros have the operand's type (JAX's), so that its splits resolve the scatter's.
    zeros = _full(operand.aval.shape, 0, core.get_aval(ct).dtype,
                  sharding=operand.aval._sharding)
    out = scatter_add(zeros, indices, ct, _inverse_scatter_dnums(dimension_numbers),
                              unique_indices=unique_indices,
                              indices_are_sorted=indices_are_sorted, mode=mode)
    return [out, None]


ad.defjvp(gather_p, _gather_jvp, None)
ad.primitive_transposes[gather_p] = _gather_transpose


def _gather_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                    dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                    unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                    fill_value: Any) -> tuple[Any, int]:
    operand, indices = vals
    operand_bdim, indices_bdim = dims
    dn = dimension_numbers
    kwargs = dict(mode=mode, fill_value=fill_value)
    if indices_bdim is None:
        # The batch axis is one more window dimension, taken whole: output axis 0.
        operand = batching.moveaxis(operand, operand_bdim, 0)
        new_dn = GatherDimensionNumbers(
            offset_dims=(0, *_shifted(dn.offset_dims)),
            collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
            start_index_map=_shifted(dn.start_index_map),
            operand_batching_dims=_shifted(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        sizes = (np.shape(operand)[0], *slice_sizes)
        return gather(operand, indices, new_dn, sizes, unique_indices=unique_indices,
                              indices_are_sorted=indices_are_sorted, **kwargs), 0
    if operand_bdim is None:
        indices = batching.moveaxis(indices, indices_bdim, 0)
        # The batch axis is one more leading batch dimension of the indices. Indices of
        # different examples may now repeat or be out of order.
        new_dn = GatherDimensionNumbers(
            offset_dims=tuple(1 + d for d in dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_shifted(dn.start_indices_batching_dims))
        return gather(operand, indices, new_dn, slice_sizes, unique_indices=False,
                              indices_are_sorted=False, **kwargs), 0
    # Both batched: the two leading axes are paired batching dims.
    operand = batching.moveaxis(operand, operand_bdim, 0)
    indices = batching.moveaxis(indices, indices_bdim, 0)
    size = np.shape(operand)[0]
    new_dn = GatherDimensionNumbers(
        offset_dims=_shifted(dn.offset_dims),
        collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
        start_index_map=_shifted(dn.start_index_map),
        operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
        start_indices_batching_dims=(0, *_shifted(dn.start_indices_batching_dims)))
    sizes = (0 if size == 0 else 1, *slice_sizes)
    return gather(operand, indices, new_dn, sizes, unique_indices=unique_indices,
                          indices_are_sorted=indices_are_sorted, **kwargs), 0


batching.primitive_batchers[gather_p] = _gather_batcher


# -- scatter -----------------------------------------------------------------------------------

def _scatter_shape(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
                   dimension_numbers: ScatterDimensionNumbers, **_: Any) -> tuple[int, ...]:
    dn = dimension_numbers
    if indices.ndim < 1:
        raise TypeError(f"Scatter index leaf dimension must be within [0, rank(indices) + 1). "
                        f"rank(indices) is {indices.ndim} and scatter index leaf dimension is "
                        f"{indices.ndim - 1}.")
    expected_rank = indices.ndim - 1 + len(dn.update_window_dims)
    if updates.ndim != expected_rank:
        raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}.")
    _check_sorted_unique_in_range(dn.update_window_dims, updates.ndim, "scatter",
                                  "update_window_dims")
    _check_sorted_unique_in_range(dn.inserted_window_dims, operand.ndim, "scatter",
                                  "inserted_window_dims")
    _check_sorted_unique_in_range(dn.operand_batching_dims, operand.ndim, "scatter",
                                  "operand_batching_dims")
    _disjoint_dims(dn.inserted_window_dims, dn.operand_batching_dims, "scatter",
                   "inserted_window_dims", "operand_batching_dims")
    _disjoint_dims(dn.scatter_dims_to_operand_dims, dn.operand_batching_dims, "scatter",
                   "scatter_dims_to_operand_dims", "operand_batching_dims")
    _check_batching_dims("scatter", operand, indices, dn.operand_batching_dims,
                         dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
    scatter_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    update_batch = tuple(updates.shape[scatter_axes[i]] for i in dn.scatter_indices_batching_dims)
    operand_batch = tuple(operand.shape[i] for i in dn.operand_batching_dims)
    if operand_batch != update_batch:
        raise TypeError("Scatter op requires operand batching dimensions and updates batching "
                        f"dimensions to have the same shape, got {operand_batch} and "
                        f"{update_batch}.")
    window_size = (len(dn.update_window_dims) + len(dn.inserted_window_dims)
                   + len(dn.operand_batching_dims))
    if operand.ndim != window_size:
        raise TypeError(f"Scatter op has window of size {window_size}; doesn't match operand "
                        f"of rank {operand.ndim}.")
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
        raise TypeError(f"Scatter op has {len(dn.scatter_dims_to_operand_dims)} elements in "
                        "scatter_dims_to_operand_dims and the bound of dimension "
                        f"index_vector_dim={indices.ndim - 1} of indices is "
                        f"{indices.shape[-1]}. These two numbers must be equal")
    for i, dim in enumerate(dn.scatter_dims_to_operand_dims):
        if dim < 0 or dim >= operand.ndim:
            raise TypeError(f"Invalid scatter_dims_to_operand_dims mapping; domain is "
                            f"[0, {operand.ndim}), got: {i}->{dim}.")
    _no_duplicate_dims(dn.scatter_dims_to_operand_dims, "scatter",
                       "scatter_dims_to_operand_dims")
    window_bounds = [operand.shape[i] for i in range(operand.ndim)
                     if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
    for bound, dim in zip(window_bounds, dn.update_window_dims, strict=True):
        if bound < updates.shape[dim]:
            raise TypeError("Bounds of the window dimensions of updates must not exceed the "
                            "bounds of the corresponding dimensions of operand. For dimension "
                            f"{dim}, updates bound is {updates.shape[dim]}, operand bound is "
                            f"{bound}.")
    for axis, bound in zip(scatter_axes, indices.shape[:-1], strict=True):
        if updates.shape[axis] != bound:
            raise TypeError("Bounds of the scatter dimensions of updates must be the same as "
                            "the bounds of the corresponding dimensions of scatter indices. For "
                            f"scatter dimension {axis}, updates bound is {updates.shape[axis]}, "
                            f"indices bound is {bound}.")
    return operand.shape


def _scatter_dtype(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray,
                   **_: Any) -> np.dtype:
    if not dtypes.is_int(indices.dtype):
        raise ValueError("indices must have an integer type")
    utils.check_same_dtypes("scatter", operand, updates)
    return operand.dtype


def _clamp_scatter_indices(operand: Any, indices: Any, updates: Any, *,
                           dn: ScatterDimensionNumbers) -> Any:
    """`indices` clamped so every update window is in bounds (JAX's CLIP mode)."""
    operand_shape = core.get_aval(operand).shape
    index_aval = core.get_aval(indices)
    window_sizes = iter(core.get_aval(updates).shape[d] for d in dn.update_window_dims)
    slice_sizes = [1 if d in dn.inserted_window_dims or d in dn.operand_batching_dims
                   else next(window_sizes) for d in range(len(operand_shape))]
    bound_dtype = _index_dtype(operand_shape)
    upper = np.array([operand_shape[d] - slice_sizes[d] for d in dn.scatter_dims_to_operand_dims],
                     bound_dtype)
    # Bounds beyond what the index type holds are never reached.
    largest = builtins.min(np.iinfo(bound_dtype).max, np.iinfo(index_aval.dtype).max)
    upper = elementwise.min(upper, bound_dtype.type(largest))
    upper = structural.convert_element_type(upper, index_aval.dtype)
    upper = structural.broadcast_in_dim(upper, index_aval.shape, (index_aval.ndim - 1,))
    return selection.clamp(index_aval.dtype.type(0), indices, upper)


def _scatter_lower(ctx: LoweringRuleContext, operand: Value, indices: Value, updates: Value, *,
                   update_jaxpr: Jaxpr | None, update_consts: Sequence[Any],
                   dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                   unique_indices: bool, mode: GatherScatterMode) -> Value:
    """`stablehlo.scatter` with the update computation as its region (returning the update
    when there is none); StableHLO skips out-of-bounds windows, CLIP clamps indices first."""
    dn = dimension_numbers
    if mode == GatherScatterMode.CLIP:
        clip = lowering.lower_fun(_clamp_scatter_indices, multiple_results=False)
        indices = clip(ctx, operand, indices, updates, dn=dn)
    scalar = TensorType((), operand.type.dtype)
    region, rb = ir.new_region([scalar, scalar])
    if update_jaxpr is None:
        outs = [region.block.args[1]]
    else:
        consts = [lowering.constant(rb, c) for c in update_consts]
        outs = lowering.jaxpr_subcomp(ctx.module_context, rb, update_jaxpr, consts,
                                      region.block.args)
    rb.ret(outs)
    ir_dn = ir.ScatterDimensionNumbers(
        update_window_dims=tuple(dn.update_window_dims),
        inserted_window_dims=tuple(dn.inserted_window_dims),
        input_batching_dims=tuple(dn.operand_batching_dims),
        scatter_indices_batching_dims=tuple(dn.scatter_indices_batching_dims),
        scatter_dims_to_operand_dims=tuple(dn.scatter_dims_to_operand_dims),
        index_vector_dim=indices.type.rank - 1)
    attributes = {"indices_are_sorted": bool(indices_are_sorted),
                  "scatter_dimension_numbers": ir_dn, "unique_indices": bool(unique_indices)}
    return ctx.builder.op("stablehlo.scatter", [operand, indices, updates], [operand.type],
                          attributes, [region]).result


def _scatter_primitive(name: str) -> Primitive:
    prim = standard_primitive(name, _scatter_shape, _scatter_dtype, utils.first_arg_weak,
                              sharding_rule=sharding_rules.scatter)
    dispatch.def_backend_impl(prim)
    lowering.register_lowering(prim, _scatter_lower)
    return prim


scatter_p = _scatter_primitive("scatter")
scatter_add_p = _scatter_primitive("scatter-add")
scatter_sub_p = _scatter_primitive("scatter-sub")
scatter_mul_p = _scatter_primitive("scatter-mul")
scatter_min_p = _scatter_primitive("scatter-min")
scatter_max_p = _scatter_primitive("scatter-max")


@tracing_cache
def _reduction_jaxpr(computation: Callable, dtype: np.dtype) -> tuple[Jaxpr, tuple]:
    """The jaxpr of `computation` on two scalars of `dtype` (a scatter's `update_jaxpr`)."""
    aval = ShapedArray((), dtype)
    closed = staging.trace_to_jaxpr(lambda x, y: [computation(x, y)], [aval, aval])
    if any(isinstance(c, core.Tracer) for c in closed.consts):
        # As in JAX: the computation becomes a static parameter, so it cannot hold tracers.
        raise NotImplementedError("Reduction computations can't close over Tracers. Please "
                                  "open an issue at https://github.com/jax-ml/jax.")
    return closed.jaxpr, tuple(closed.consts)


def _scatter_with(prim: Primitive, computation: Callable | None) -> Callable:
    def scatter_fn(operand: Any, scatter_indices: Any, updates: Any,
                   dimension_numbers: ScatterDimensionNumbers, *,
                   indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode: str | GatherScatterMode | None = None) -> Any:
        if computation is None:
            jaxpr, consts = None, ()
        else:
            jaxpr, consts = _reduction_jaxpr(computation, core.get_aval(operand).dtype)
        return prim.bind(operand, scatter_indices, updates, update_jaxpr=jaxpr,
                         update_consts=consts, dimension_numbers=dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=GatherScatterMode.from_any(mode))
    scatter_fn.__name__ = prim.name.replace("-", "_")
    scatter_fn.__doc__ = (f"XLA's scatter combining with `{prim.name}` (StableHLO `scatter`). "
                          "`mode` 'clip' clamps windows into bounds; 'fill'/'drop' (the "
                          "default) and 'promise_in_bounds' drop out-of-bounds windows.")
    return scatter_fn


scatter = _scatter_with(scatter_p, None)
scatter_add = _scatter_with(scatter_add_p, elementwise.add)
scatter_sub = _scatter_with(scatter_sub_p, elementwise.sub)
scatter_mul = _scatter_with(scatter_mul_p, elementwise.mul)
scatter_min = _scatter_with(scatter_min_p, elementwise.min)
scatter_max = _scatter_with(scatter_max_p, elementwise.max)
scatter.__doc__ = ("XLA's scatter overwriting with `updates` (StableHLO `scatter`); with "
                   "duplicate indices the last update in row-major order wins.")


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None) -> Any:
    """Replaces `operand` at the indices by `func(operand)`; `func` is applied once per
    duplicate index (a `scatter` whose update computation ignores the update)."""
    dtype = core.get_aval(operand).dtype
    unused = structural.broadcast_in_dim(structural.convert_element_type(0, dtype),
                                         tuple(update_shape), ())
    jaxpr, consts = _apply_jaxpr(func, dtype)
    return scatter_p.bind(operand, scatter_indices, unused, update_jaxpr=jaxpr,
                          update_consts=consts, dimension_numbers=dimension_numbers,
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                          mode=GatherScatterMode.from_any(mode))


@tracing_cache
def _apply_jaxpr(func: Callable, dtype: np.dtype) -> tuple[Jaxpr, tuple]:
    """The update jaxpr `(x, _) -> func(x)` of `scatter_apply`, cached per function (an
    unhashable one is traced afresh)."""
    return _reduction_jaxpr.__wrapped__(lambda x, _: func(x), dtype)


def _scatter_batcher(prim: core.Primitive) -> Any:
    def rule(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
             dimension_numbers: ScatterDimensionNumbers, **params: Any) -> tuple[Any, int]:
        return _batched_scatter(prim, axis_data.size, vals, dims, dimension_numbers, params)
    return rule


def _batched_scatter(prim: core.Primitive, size: int, vals: Sequence[Any], dims: Dims,
                     dn: ScatterDimensionNumbers, params: dict) -> tuple[Any, int]:
    """`prim` on operand and updates batched first (broadcast there when unmapped): the
    batch axis is a leading update window when the indices are unmapped, else paired
    batching dims of operand and indices."""
    operand, indices, updates = vals
    operand_bdim, indices_bdim, updates_bdim = dims
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    updates = batching.bdim_at_front(updates, updates_bdim, size)
    if indices_bdim is None:
        new_dn = ScatterDimensionNumbers(
            update_window_dims=(0, *_shifted(dn.update_window_dims)),
            inserted_window_dims=_shifted(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shifted(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shifted(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    else:
        indices = batching.bdim_at_front(indices, indices_bdim, size)
        new_dn = ScatterDimensionNumbers(
            update_window_dims=_shifted(dn.update_window_dims),
            inserted_window_dims=_shifted(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shifted(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shifted(dn.scatter_indices_batching_dims)))
    return prim.bind(operand, indices, updates, dimension_numbers=new_dn, **params), 0


for _prim in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
              scatter_max_p):
    batching.primitive_batchers[_prim] = _scatter_batcher(_prim)


# -- scatter-add / scatter-sub -----------------------------------------------------------------

def _scatter_linear_jvp(prim: core.Primitive) -> Any:
    """The jvp of a scatter linear in operand and updates: the same scatter on tangents."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.from_primal_value(out)
        g_operand = ad.instantiate_zeros(g_operand)
        g_updates = ad.instantiate_zeros(g_updates)
        return out, prim.bind(g_operand, indices, g_updates, **params)
    return jvp


def _scatter_addsub_transpose(negate: bool) -> Any:
    def transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                  dimension_numbers: ScatterDimensionNumbers, mode: Any, **_: Any
                  ) -> list[Any]:
        if type(ct) is ad.Zero:
            return [_ct_zero_or_none(operand), None, _ct_zero_or_none(updates)]
        operand_ct = ct if ad.is_undefined_primal(operand) else None
        updates_ct = None
        if ad.is_undefined_primal(updates):
            # Dropped (out-of-bounds) updates read the fill value 0.
            updates_ct = _gather_back(ct, indices, dimension_numbers, _shape_of(updates),
                                      mode=mode, fill_value=0)
            if negate:
                updates_ct = elementwise.neg(updates_ct)
        return [operand_ct, None, updates_ct]
    return transpose


ad.primitive_jvps[scatter_add_p] = _scatter_linear_jvp(scatter_add_p)
ad.primitive_transposes[scatter_add_p] = _scatter_addsub_transpose(negate=False)
ad.primitive_jvps[scatter_sub_p] = _scatter_linear_jvp(scatter_sub_p)
ad.primitive_transposes[scatter_sub_p] = _scatter_addsub_transpose(negate=True)


# -- scatter-mul -------------------------------------------------------------------------------

_SCATTER_MUL_UNIQUE = "scatter_mul gradients are only implemented if `unique_indices=True`"


def _scatter_mul_jvp_operand(g: Any, operand: Any, indices: Any, updates: Any, **params: Any
                             ) -> Any:
    return scatter_mul_p.bind(g, indices, updates, **params)


def _scatter_mul_jvp_updates(g: Any, operand: Any, indices: Any, updates: Any, *,
                             dimension_numbers: ScatterDimensionNumbers,
                             indices_are_sorted: bool, unique_indices: bool, mode: Any,
                             **_: Any) -> Any:
    # With unique indices each slot is multiplied by at most one update: d(x*u) = x*du there.
    if not unique_indices:
        raise NotImplementedError(_SCATTER_MUL_UNIQUE)
    scattered = scatter_add(_full_like(operand, 0), indices, g, dimension_numbers,
                                    indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
    return elementwise.mul(operand, scattered)


def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers,
                           indices_are_sorted: bool, unique_indices: bool, mode: Any,
                           **_: Any) -> list[Any]:
    if type(ct) is ad.Zero:
        return [_ct_zero_or_none(operand), None, _ct_zero_or_none(updates)]
    operand_ct = updates_ct = None
    if ad.is_undefined_primal(operand):
        operand_ct = scatter_mul(ct, indices, updates, dimension_numbers,
                                         indices_are_sorted=indices_are_sorted,
                                         unique_indices=unique_indices, mode=mode)
    if ad.is_undefined_primal(updates):
        if not unique_indices:
            raise NotImplementedError(_SCATTER_MUL_UNIQUE)
        updates_ct = _gather_back(elementwise.mul(ct, operand), indices, dimension_numbers,
                                  _shape_of(updates), mode=mode, fill_value=0)
    return [operand_ct, None, updates_ct]


ad.defjvp(scatter_mul_p, _scatter_mul_jvp_operand, None, _scatter_mul_jvp_updates)
ad.primitive_transposes[scatter_mul_p] = _scatter_mul_transpose


# -- scatter-min / scatter-max -----------------------------------------------------------------

def _scatter_extremal_jvp(prim: core.Primitive) -> Any:
    """JAX's tie convention: every value equal to the result (the original operand value and
    each update reaching the slot) gets an equal share of the tangent."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
            dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
            unique_indices: bool, mode: Any, **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        dn = dimension_numbers
        out = prim.bind(operand, indices, updates, dimension_numbers=dn,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode, **params)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.from_primal_value(out)
        g_operand = ad.instantiate_zeros(g_operand)
        g_updates = ad.instantiate_zeros(g_updates)
        shape = core.get_aval(updates).shape
        # JAX gathers and counts with the default modes, which disagree with a CLIP scatter
        # about out-of-bounds indices (NaN tangents, wrong transposes); CLIP itself agrees.
        clip = mode if mode == GatherScatterMode.CLIP else None

        def back(x: Any) -> Any:
            return _gather_back(x, indices, dn, shape, mode=clip)

        def count(x: Any, ones: Any) -> Any:
            return back(scatter_add(x, indices, ones, dn, mode=clip))

        initial = back(operand)
        target = back(out)
        won = elementwise.eq(updates, target)
        retained = elementwise.eq(initial, target)
        zeros = _full_like(operand, 0)
        num_updates = count(zeros, selection.select(won, _full_like(updates, 1),
                                                    _full_like(updates, 0)))
        num_refs = count(_full_like(operand, 0), _full_like(updates, 1))
        one = _scalar_like(num_updates, 1)
        updates_share = selection.select(
            retained, elementwise.div(one, elementwise.add(num_updates, one)),
            elementwise.div(one, num_updates))
        updates_coef = selection.select(won, updates_share, _full_like(updates, 0))
        operand_share = selection.select(
            retained, elementwise.div(one, elementwise.add(num_updates, one)),
            _full_like(num_updates, 0))
        # Each of the num_refs updates aimed at a slot removes its share of the operand's
        # tangent there (added back by scatter-add below), leaving the retained share.
        operand_coef = elementwise.div(
            elementwise.add(_scalar_like(operand_share, -1), operand_share), num_refs)
        g_target = back(g_operand)
        g_scattered = elementwise.add(elementwise.mul(g_target, operand_coef),
                                      elementwise.mul(g_updates, updates_coef))
        g_out = scatter_add(g_operand, indices, g_scattered, dn,
                                    indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
        return out, g_out
    return jvp


ad.primitive_jvps[scatter_min_p] = _scatter_extremal_jvp(scatter_min_p)
ad.primitive_jvps[scatter_max_p] = _scatter_extremal_jvp(scatter_max_p)


# -- scatter: derivatives -----------------------------------------------------------------------

def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, update_jaxpr: Any,
                 update_consts: Any, dimension_numbers: ScatterDimensionNumbers,
                 indices_are_sorted: bool, unique_indices: bool, mode: Any
                 ) -> tuple[Any, Any]:
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dn = dimension_numbers
    params = dict(update_jaxpr=update_jaxpr, update_consts=update_consts, dimension_numbers=dn,
                  indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode)
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, ad.Zero.from_primal_value(out)
    g_operand = ad.instantiate_zeros(g_operand)
    g_updates = ad.instantiate_zeros(g_updates)
    if unique_indices:
        # No slot is written twice: scatter is linear in (operand, updates).
        return (scatter_p.bind(operand, indices, updates, **params),
                scatter_p.bind(g_operand, indices, g_updates, **params))
    # Which update wins a slot written several times is up to the scatter, so ask it: give
    # every update (window) an id from 1, scatter the ids into zeros, and read them back. A
    # slot left 0 keeps the operand; an update whose id came back won. The primal and the
    # tangent are then scatter-adds of the masked operand and the winning updates.
    updates_shape = core.get_aval(updates).shape
    ids_shape = list(updates_shape)
    for d in dn.update_window_dims:
        ids_shape[d] = 1
    num_ids = math.prod(ids_shape)
    id_dtype = np.dtype(np.uint64) if num_ids > np.iinfo(np.uint32).max else np.dtype(np.uint32)
    id_dtype = dtypes.canonicalize_dtype(id_dtype)
    update_ids = elementwise.add(
        structural.reshape(structural.iota(id_dtype, num_ids), ids_shape),
        _full_like(updates, 1, id_dtype))
    scattered_ids = scatter(_full(core.get_aval(operand).shape, 0, id_dtype), indices,
                                    update_ids, dn, indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
    gathered_ids = _gather_back(scattered_ids, indices, dn, updates_shape)

    def keep_operand(x: Any) -> Any:
        untouched = elementwise.eq(scattered_ids, _full_like(scattered_ids, 0))
        return selection.select(untouched, x, _full_like(x, 0))

    def keep_winners(x: Any) -> Any:
        return selection.select(elementwise.eq(update_ids, gathered_ids), x, _full_like(x, 0))

    masked_operand = keep_operand(operand)
    masked_updates = keep_winners(updates)
    masked_g_operand = keep_operand(g_operand)
    masked_g_updates = keep_winners(g_updates)
    add_params = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      mode=mode)
    out = scatter_add(masked_operand, indices, masked_updates, dn, **add_params)
    g_out = scatter_add(masked_g_operand, indices, masked_g_updates, dn, **add_params)
    return out, g_out


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                       update_jaxpr: Any, update_consts: Any,
                       dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                       unique_indices: bool, mode: Any) -> list[Any]:
    # Only the unique-indices scatter is linear (the jvp never stages another one).
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    if type(ct) is ad.Zero:
        return [_ct_zero_or_none(operand), None, _ct_zero_or_none(updates)]
    updates_shape = _shape_of(updates)
    operand_ct = updates_ct = None
    if ad.is_undefined_primal(operand):
        # The overwritten slots pass nothing back to the operand.
        zeros = _full(updates_shape, 0, core.get_aval(ct).dtype)
        operand_ct = scatter(ct, indices, zeros, dimension_numbers,
                                     indices_are_sorted=indices_are_sorted,
                                     unique_indices=True, mode=mode)
    if ad.is_undefined_primal(updates):
        updates_ct = _gather_back(ct, indices, dimension_numbers, updates_shape, mode=mode,
                                  fill_value=0)
    return [operand_ct, None, updates_ct]


ad.primitive_jvps[scatter_p] = _scatter_jvp
ad.primitive_transposes[scatter_p] = _scatter_transpose


def _shifted(dims: Sequence[int]) -> tuple[Any, ...]:
    """`dims` renumbered past a new leading axis (NumPy integers, as JAX's rules build them:
    they show in printed dimension numbers)."""
    return tuple(np.add(1, dims))
