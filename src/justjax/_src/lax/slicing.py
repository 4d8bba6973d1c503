"""lax: slicing primitives: slice, dynamic_slice, dynamic_update_slice, pad, rev, gather and
the scatter family, with XLA's semantics.

Out-of-range start indices of `dynamic_slice`/`dynamic_update_slice` are clamped so the whole
window fits, as XLA does. `gather` clamps start indices (modes CLIP and PROMISE_IN_BOUNDS) or
fills whole out-of-bounds windows with `fill_value` (FILL_OR_DROP). Scatters drop whole
out-of-bounds update windows unless the mode is CLIP. Duplicate scatter indices accumulate for
the combining scatters; for plain `scatter` the last update in row-major update order wins, and
a custom `update_jaxpr` (from `scatter_apply`) is applied once per duplicate, in order.
"""
from __future__ import annotations

import builtins
import enum
import operator
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from justjax._src.numerics import shapes
from justjax._src.numerics.conversions import convert_values
from justjax._src import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import exceeds
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import Jaxpr, tracing_cache
from justjax._src.hlo import ir
from justjax._src.hlo.ir import TensorType, Value
from justjax._src.interpreters import lowering, staging
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import elementwise, reductions, structural, utils
from justjax._src.lax.utils import standard_primitive

__all__ = [
    "slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
    "dynamic_update_index_in_dim", "pad", "rev", "gather", "scatter", "scatter_add",
    "scatter_sub", "scatter_mul", "scatter_min", "scatter_max", "scatter_apply",
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
    "slice_p", "dynamic_slice_p", "dynamic_update_slice_p", "pad_p", "rev_p", "gather_p",
    "scatter_p", "scatter_add_p", "scatter_sub_p", "scatter_mul_p", "scatter_min_p",
    "scatter_max_p", "index_take",
]

_slice = builtins.slice


def _dim(d: Any) -> Any:
    """A dimension as an int, or as itself if symbolic."""
    return d if is_symbolic_dim(d) else int(d)


def _check_shapelike(fun_name: str, arg_name: str, obj: Any) -> None:
    """JAX's checks that a static parameter is a sequence of nonnegative integers."""
    if not isinstance(obj, (tuple, list, np.ndarray)):
        raise TypeError(f"{fun_name} {arg_name} must be of type tuple/list/ndarray, "
                        f"got {type(obj)}.")
    if not len(obj):
        return
    if any(not (isinstance(d, (int, np.integer)) or is_symbolic_dim(d)) or isinstance(d, bool)
           for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be an integer type, "
                        f"got {tuple(map(type, obj))}.")
    if not all(d >= 0 for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be nonnegative, "
                        f"got {obj}.")


def _dtype_of(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


# -- slice -------------------------------------------------------------------------------------

def _slice_shape(operand: ShapedArray, *, start_indices: tuple[int, ...],
                 limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                 ) -> tuple[int, ...]:
    _check_shapelike("slice", "start_indices", start_indices)
    _check_shapelike("slice", "limit_indices", limit_indices)
    if operand.ndim != len(start_indices):
        raise TypeError("slice start_indices must have length equal to the number of dimensions "
                        f"of the operand, got indices {start_indices} for operand shape "
                        f"{operand.shape}.")
    if len(start_indices) != len(limit_indices):
        raise TypeError("slice limit_indices must have the same length as start_indices, got "
                        f"start_indices {start_indices} and limit_indices {limit_indices}.")
    if not all(map(operator.ge, operand.shape, limit_indices)):
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                        f"limit_indices {limit_indices} for operand shape {operand.shape}.")
    if not all(map(operator.ge, limit_indices, start_indices)):
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, "
                        f"got start_indices {start_indices} and limit_indices {limit_indices}.")
    diff = tuple(_dim(l) - _dim(s) for s, l in zip(start_indices, limit_indices, strict=True))
    if strides is None or tuple(strides) == (1,) * operand.ndim:
        return diff
    _check_shapelike("slice", "strides", strides)
    if len(strides) != operand.ndim:
        raise TypeError("slice strides must have length equal to the number of dimensions of "
                        f"the operand, got strides {strides} for operand shape {operand.shape}.")
    if not all(s > 0 for s in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    return tuple(core.max_dim(0, (d - 1) // int(s) + 1) for d, s in zip(diff, strides, strict=True))




slice_p = standard_primitive("slice", _slice_shape, lambda x, **_: x.dtype)
dispatch.def_backend_impl(slice_p)


def _slice_lower(ctx: LoweringRuleContext, x: Value, *, start_indices: tuple[int, ...],
                 limit_indices: tuple[int, ...], strides: tuple[int, ...] | None) -> Value:
    return ctx.builder.one("stablehlo.slice", [x], lowering.aval_to_type(ctx.avals_out[0]),
                           start_indices=tuple(_dim(i) for i in start_indices),
                           limit_indices=tuple(_dim(i) for i in limit_indices),
                           strides=tuple(int(i) for i in strides or (1,) * x.type.rank))


lowering.register_lowering(slice_p, _slice_lower)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    """`operand[start:limit:stride]` per dimension, with static bounds (StableHLO `slice`)."""
    return slice_p.bind(operand, start_indices=tuple(start_indices),
                        limit_indices=tuple(limit_indices),
                        strides=None if strides is None else tuple(strides))


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """`lax.slice` along one `axis`; None bounds mean the whole axis, negatives count back."""
    shape = core.get_aval(operand).shape
    axis = int(axis)
    size = shape[axis]
    start = 0 if start_index is None else core.concrete_dim(start_index, "slice_in_dim: ")
    limit = size if limit_index is None else core.concrete_dim(limit_index, "slice_in_dim: ")
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """`operand[..., index]` along `axis` for a static `index` (a size-1 `slice`)."""
    index, axis = core.concrete_dim(index, "index_in_dim: "), int(axis)
    size = core.get_aval(operand).shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else structural.squeeze(result, (axis,))


# -- dynamic_slice / dynamic_update_slice ------------------------------------------------------

def _check_start_index_dtypes(name: str, starts: Sequence[ShapedArray]) -> None:
    if any(i.dtype != starts[0].dtype or not dtypes.is_int(i.dtype) for i in starts):
        sep = ": " if name == "dynamic_slice" else " "
        raise TypeError(f"index arguments to {name} must be integers of the same type, "
                        f"got{sep}{', '.join(i.dtype.name for i in starts)}")


def _dynamic_slice_shape(operand: ShapedArray, *starts: ShapedArray,
                         slice_sizes: tuple[int, ...]) -> tuple[int, ...]:
    if len(slice_sizes) != operand.ndim or len(starts) != operand.ndim:
        raise TypeError("dynamic_slice needs one start index and one slice size per operand "
                        f"dimension, got {len(starts)} indices and slice_sizes {slice_sizes} "
                        f"for operand shape {operand.shape}.")
    if not all(map(operator.ge, operand.shape, slice_sizes)):
        raise TypeError("slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    if not all(s >= 0 for s in slice_sizes):
        raise TypeError("slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes of {slice_sizes}.")
    if any(i.ndim != 0 for i in starts):
        raise TypeError("start_indices arguments to dynamic_slice must be scalars,  got "
                        f"indices {starts}")
    return tuple(slice_sizes)


def _dynamic_slice_dtype(operand: ShapedArray, *starts: ShapedArray, **_: Any) -> np.dtype:
    _check_start_index_dtypes("dynamic_slice", starts)
    return operand.dtype


dynamic_slice_p = standard_primitive("dynamic_slice", _dynamic_slice_shape, _dynamic_slice_dtype,
                                     utils.first_arg_weak)
dispatch.def_backend_impl(dynamic_slice_p)


def _dus_shape(operand: ShapedArray, update: ShapedArray, *starts: ShapedArray
               ) -> tuple[int, ...]:
    if operand.ndim != update.ndim:
        raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {operand.shape}.")
    if operand.ndim != len(starts):
        raise TypeError("dynamic_update_slice start_indices must have length equal to the rank "
                        f"of operand, got indices {starts} for operand shape "
                        f"{operand.shape}.")
    if not all(map(operator.ge, operand.shape, update.shape)):
        raise TypeError("dynamic_update_slice update shape must be smaller than operand shape, "
                        f"got update shape {update.shape} for operand shape {operand.shape}.")
    if any(i.ndim != 0 for i in starts):
        raise TypeError("start_indices arguments to dynamic_update_slice must be scalars, got "
                        f"indices {starts}")
    return operand.shape


def _dus_dtype(operand: ShapedArray, update: ShapedArray, *starts: ShapedArray) -> np.dtype:
    utils.check_same_dtypes("dynamic_update_slice", operand, update)
    _check_start_index_dtypes("dynamic_update_slice", starts)
    return operand.dtype


dynamic_update_slice_p = standard_primitive("dynamic_update_slice", _dus_shape, _dus_dtype)
dispatch.def_backend_impl(dynamic_update_slice_p)
# Start indices are clamped by StableHLO itself, exactly as the eager implementations do.
lowering.register_lowering(
    dynamic_slice_p, lambda ctx, x, *starts, slice_sizes: ctx.builder.one(
        "stablehlo.dynamic_slice", [x, *starts], lowering.aval_to_type(ctx.avals_out[0]),
        slice_sizes=tuple(int(d) for d in slice_sizes)))
lowering.register_lowering(
    dynamic_update_slice_p, lambda ctx, x, update, *starts: ctx.builder.one(
        "stablehlo.dynamic_update_slice", [x, update, *starts], x.type))


def _dynamic_slice_indices(operand: Any, start_indices: Any,
                           allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """Start indices with negative ones counted from the end, as JAX normalizes them."""
    shape = core.get_aval(operand).shape
    if len(start_indices) != len(shape):
        raise ValueError("Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shape})")
    if not isinstance(start_indices, Sequence):
        if core.get_aval(start_indices).ndim != 1:
            raise ValueError("Slice indices must be a 1D sequence, got "
                             f"{core.get_aval(start_indices).shape}")
        start_indices = list(start_indices)
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(start_indices)
    result = []
    for i, d, allow_negative in zip(start_indices, shape, allow_negative_indices, strict=True):
        dtype = _dtype_of(i)
        if dtypes.is_unsigned(dtype):
            result.append(i)
        elif isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            if not allow_negative and i < 0:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            static = int(i) + d if allow_negative and i < 0 else int(i)
            result.append(structural.convert_element_type(static, dtype))
        elif allow_negative:
            size = structural.convert_element_type(d, dtype)
            negative = elementwise.lt(i, np.zeros((), dtype))
            # JAX adds with `i + size`: a weak-typed index is made strong first.
            strong = structural.convert_element_type(i, dtype) if core.get_aval(i).weak_type \
                else i
            result.append(structural.select(negative, elementwise.add(strong, size), i))
        else:
            result.append(i)
    return result


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """A window of static `slice_sizes` at dynamic `start_indices`, clamped into bounds
    (StableHLO `dynamic_slice`)."""
    starts = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
    sizes = core.canonicalize_shape(slice_sizes)
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=tuple(sizes))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """`operand` with `update` written at `start_indices`, clamped so it fits
    (StableHLO `dynamic_update_slice`)."""
    starts = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _zero_index_like(index: Any) -> Any:
    # JAX's lax._const: a Python scalar stays one, anything else becomes a NumPy scalar.
    if dtypes.is_python_scalar(index):
        return 0
    return np.zeros((), _dtype_of(index))


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """`dynamic_slice` along one `axis` (other axes whole)."""
    shape = core.get_aval(operand).shape
    axis = int(axis)
    starts: list[Any] = [_zero_index_like(start_index)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = core.concrete_dim(slice_size, "dynamic_slice_in_dim: ")
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """`operand[..., index]` along `axis` for a possibly traced `index` (clamped)."""
    result = dynamic_slice_in_dim(operand, index, 1, axis,
                                  allow_negative_indices=allow_negative_indices)
    return result if keepdims else structural.squeeze(result, (int(axis),))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """`dynamic_update_slice` with a start index along one `axis` only."""
    ndim = core.get_aval(operand).ndim
    axis = int(axis)
    starts: list[Any] = [_zero_index_like(start_index)] * ndim
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """Writes `update` (with or without the size-1 `axis`) at `index` along `axis`."""
    axis = int(axis)
    if core.get_aval(update).ndim != core.get_aval(operand).ndim:
        update = structural.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# -- pad and rev -------------------------------------------------------------------------------

def _pad_shape(operand: ShapedArray, padding_value: ShapedArray, *,
               padding_config: tuple) -> tuple[int, ...]:
    if padding_value.ndim != 0:
        raise ValueError(f"padding_value must be a scalar; got np.shape(padding_value)="
                         f"{padding_value.shape}")
    if len(padding_config) != operand.ndim:
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape "
                         f"{operand.shape}")
    if not all(i >= 0 for _, _, i in padding_config):
        raise ValueError("interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    result = tuple(int(lo) + int(hi) + (builtins.max(0, 1 + (i + 1) * (d - 1)) if i else d)
                   for (lo, hi, i), d in zip(padding_config, operand.shape, strict=True))
    if not all(d >= 0 for d in result):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{result}, for padding_config {padding_config} and operand shape "
                         f"{operand.shape}")
    return result


def _pad_dtype(operand: ShapedArray, padding_value: ShapedArray, **_: Any) -> np.dtype:
    if operand.dtype != padding_value.dtype:
        raise TypeError("pad operand and padding_value must be same dtype: got "
                        f"{operand.dtype} and {padding_value.dtype}.")
    return operand.dtype


pad_p = standard_primitive("pad", _pad_shape, _pad_dtype)




def _pad_lower(ctx: LoweringRuleContext, x: Value, value: Value, *,
               padding_config: tuple) -> Value:
    low, high, interior = (tuple(int(c[i]) for c in padding_config) for i in range(3))
    return ctx.builder.one("stablehlo.pad", [x, value], lowering.aval_to_type(ctx.avals_out[0]),
                           edge_padding_low=low, edge_padding_high=high,
                           interior_padding=interior)


dispatch.def_backend_impl(pad_p)
lowering.register_lowering(pad_p, _pad_lower)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pads with `padding_value`: (low, high, interior) per dimension; negative low/high crop
    (StableHLO `pad`)."""
    return pad_p.bind(operand, padding_value, padding_config=tuple(padding_config))


def _rev_shape(operand: ShapedArray, *, dimensions: tuple[int, ...]) -> tuple[int, ...]:
    _check_shapelike("rev", "dimensions", dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not builtins.max(dimensions) < operand.ndim:
        raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                        f"{dimensions} for operand ndim {operand.ndim}.")
    return operand.shape


rev_p = standard_primitive("rev", _rev_shape, lambda x, **_: x.dtype)
dispatch.def_backend_impl(rev_p)
lowering.register_lowering(
    rev_p, lambda ctx, x, *, dimensions: ctx.builder.one(
        "stablehlo.reverse", [x], x.type, dimensions=tuple(int(d) for d in dimensions)))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverses `operand` along `dimensions` (StableHLO `reverse`)."""
    return rev_p.bind(operand, dimensions=tuple(dimensions))


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




gather_p = standard_primitive("gather", _gather_shape, _gather_dtype, utils.first_arg_weak)
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
    return structural.select(mask, out, fill)


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
            fill_value = _default_fill_value(_dtype_of(operand))
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=dimension_numbers,
                         slice_sizes=core.canonicalize_shape(slice_sizes),
                         unique_indices=bool(unique_indices),
                         indices_are_sorted=bool(indices_are_sorted), mode=parsed,
                         fill_value=fill_value)


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
    return structural.clamp(index_aval.dtype.type(0), indices, upper)


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
    prim = standard_primitive(name, _scatter_shape, _scatter_dtype, utils.first_arg_weak)
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
            jaxpr, consts = _reduction_jaxpr(computation, _dtype_of(operand))
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
    dtype = _dtype_of(operand)
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



def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """`src` indexed along `axes` by one index array per axis (`lax.index_take`): result
    row `i` is `src` at `idxs[0][i]` on `axes[0]`, `idxs[1][i]` on `axes[1]` ...; negative
    indices count from the end (indices wrap modulo the axis size, as in JAX).

    Args:
      src: the array.
      idxs: 1-D integer index arrays of one length, one per entry of `axes`.
      axes: the axes they index.
    Returns:
      The gathered array: the index length, then `src`'s other axes (StableHLO `gather`).
    """
    indices = structural.concatenate([structural.expand_dims(i, (1,)) for i in idxs], 1)
    shape = core.get_aval(src).shape
    sizes = structural.expand_dims(np.array([shape[ax] for ax in axes], indices.dtype),
                                   tuple(range(indices.ndim - 1)))
    sizes = structural.broadcast_in_dim(sizes, indices.shape, tuple(range(indices.ndim)))
    # Python's modulo (the sign of the divisor), as JAX's `indices % max_idx`.
    rem = elementwise.rem(indices, sizes)
    indices = structural.select(elementwise.lt(rem, np.array(0, rem.dtype)),
                                elementwise.add(rem, sizes), rem)
    slice_sizes = list(shape)
    for ax in axes:
        slice_sizes[ax] = 1
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - indices.shape[1] + 1)),
        collapsed_slice_dims=tuple(axes), start_index_map=tuple(axes))
    return gather(src, indices, dnums, tuple(slice_sizes),
                  mode=GatherScatterMode.PROMISE_IN_BOUNDS)


# The jvp and transpose rules live in their own module (this one is long enough); importing
# it registers them.
from justjax._src.lax import slicing_ad as _slicing_ad  # noqa: E402,F401
# The batching rules likewise (importing registers them).
from justjax._src.lax import slicing_batching as _slicing_batching  # noqa: E402,F401
