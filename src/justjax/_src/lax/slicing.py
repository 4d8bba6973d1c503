"""lax: the slicing primitives slice, dynamic_slice, dynamic_update_slice, pad and rev, each
with its rules (abstract eval, lowering, jvp/transpose, batching), with XLA's semantics.

Out-of-range start indices of `dynamic_slice`/`dynamic_update_slice` are clamped so the whole
window fits, as XLA does. The rules follow JAX's formulas and equation order, so
`make_jaxpr(grad(f))` and `make_jaxpr(vmap(f))` print what JAX prints:

- `slice`, `dynamic_slice`, `pad` and `rev` are linear in their operand (and `pad` in its
  padding value); their transposes put the cotangent back: `pad` with zeros,
  `dynamic_update_slice` into zeros, a slice of the cotangent. `dynamic_update_slice` is
  linear in operand and update.
- Under vmap, `slice`, `rev` and `pad` keep the batch axis where it is and leave it whole. A
  batched padding value is applied by padding with zeros and selecting the per-example value
  where a mask padded with False says "padding". `dynamic_slice` and `dynamic_update_slice`
  with batched start indices are a gather and a scatter (mode CLIP, so the windows clamp as the
  dynamic ops do); the scalar start indices are stacked into one index vector, as JAX does
  even when they are not batched.

Gather and the scatters are `gather_scatter.py`'s.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.hlo.ir import Value
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters.batching import AxisData
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import (elementwise, gather_scatter, reductions, selection,
                              sharding_rules, structural, utils)
from justjax._src.lax.utils import standard_primitive
from justjax._src.lax.gather_scatter import (GatherDimensionNumbers, GatherScatterMode,
                                             ScatterDimensionNumbers)
# The small rule helpers both slicing families use; gather_scatter sits below slicing.
from justjax._src.lax.gather_scatter import _ct_zero_or_none, _full, _shape_of, _zero_scalar

__all__ = [
    "slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
    "dynamic_update_index_in_dim", "pad", "rev", "slice_p", "dynamic_slice_p",
    "dynamic_update_slice_p", "pad_p", "rev_p",
    "index_take",
]

Dims = Sequence[int | None]


# -- helpers -----------------------------------------------------------------------------------

def _dtype_of(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


# -- slice -------------------------------------------------------------------------------------

def _slice_shape(operand: ShapedArray, *, start_indices: tuple[int, ...],
                 limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                 ) -> tuple[int, ...]:
    utils.check_shapelike("slice", "start_indices", start_indices)
    utils.check_shapelike("slice", "limit_indices", limit_indices)
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
    diff = tuple(utils.static_dim(l) - utils.static_dim(s)
                 for s, l in zip(start_indices, limit_indices, strict=True))
    if strides is None or tuple(strides) == (1,) * operand.ndim:
        return diff
    utils.check_shapelike("slice", "strides", strides)
    if len(strides) != operand.ndim:
        raise TypeError("slice strides must have length equal to the number of dimensions of "
                        f"the operand, got strides {strides} for operand shape {operand.shape}.")
    if not all(s > 0 for s in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    return tuple(core.max_dim(0, (d - 1) // int(s) + 1) for d, s in zip(diff, strides, strict=True))


slice_p = standard_primitive("slice", _slice_shape, lambda x, **_: x.dtype,
                             sharding_rule=sharding_rules.varying_shape("slicing"))
dispatch.def_backend_impl(slice_p)


def _slice_lower(ctx: LoweringRuleContext, x: Value, *, start_indices: tuple[int, ...],
                 limit_indices: tuple[int, ...], strides: tuple[int, ...] | None) -> Value:
    return ctx.builder.one("stablehlo.slice", [x], lowering.aval_to_type(ctx.avals_out[0]),
                           start_indices=tuple(utils.static_dim(i) for i in start_indices),
                           limit_indices=tuple(utils.static_dim(i) for i in limit_indices),
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


def _slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
               ) -> tuple[Any, Any]:
    operand, = primals
    tangent, = tangents
    out = slice_p.bind(operand, **params)
    if type(tangent) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, slice_p.bind(tangent, **params)


def _slice_transpose(ct: Any, operand: Any, *, start_indices: tuple[int, ...],
                     limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                     ) -> list[Any]:
    # The slice taken back into place: pad low by the start, high by what lies past the last
    # element taken, and interior by stride - 1 (NumPy int64 values, as JAX's params hold).
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval)]
    operand_shape = np.asarray(operand.aval.shape, np.int64)
    rank = len(start_indices)
    if strides is None or all(int(s) == 1 for s in strides):
        high = operand_shape - np.asarray(limit_indices, np.int64).reshape(rank)
        interior: Sequence[Any] = (0,) * rank
    else:
        ct_shape = np.asarray(core.get_aval(ct).shape, np.int64)
        step = np.asarray(strides, np.int64)
        spans = np.where(ct_shape == 0, 0, (ct_shape - 1) * step + 1)
        high = operand_shape - (np.asarray(start_indices, np.int64) + spans)
        interior = step - 1
    config = list(zip(start_indices, high, interior, strict=True))
    return [pad(ct, _zero_scalar(ct), config)]


ad.primitive_jvps[slice_p] = _slice_jvp
ad.primitive_transposes[slice_p] = _slice_transpose


def _slice_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                   start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                   strides: tuple[int, ...] | None) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    starts = list(start_indices)
    starts.insert(bdim, 0)
    limits = list(limit_indices)
    limits.insert(bdim, np.shape(operand)[bdim])
    steps = None
    if strides is not None:
        steps = list(strides)
        steps.insert(bdim, 1)
    return slice(operand, starts, limits, steps), bdim


batching.primitive_batchers[slice_p] = _slice_batcher


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
                                     utils.first_arg_weak,
                                     sharding_rule=sharding_rules.varying_shape("dynamic_slice"))
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


dynamic_update_slice_p = standard_primitive("dynamic_update_slice", _dus_shape, _dus_dtype,
                                            sharding_rule=sharding_rules.updated_in_place)
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
            result.append(selection.select(negative, elementwise.add(strong, size), i))
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
    indices = selection.select(elementwise.lt(rem, np.array(0, rem.dtype)),
                               elementwise.add(rem, sizes), rem)
    slice_sizes = list(shape)
    for ax in axes:
        slice_sizes[ax] = 1
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - indices.shape[1] + 1)),
        collapsed_slice_dims=tuple(axes), start_index_map=tuple(axes))
    return gather_scatter.gather(src, indices, dnums, tuple(slice_sizes),
                  mode=gather_scatter.GatherScatterMode.PROMISE_IN_BOUNDS)


def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                       slice_sizes: tuple[int, ...]) -> tuple[Any, Any]:
    operand, *starts = primals
    tangent = tangents[0]
    if type(tangent) is not ad.Zero:
        tangent = dynamic_slice_p.bind(tangent, *starts, slice_sizes=slice_sizes)
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=slice_sizes), tangent


def _dynamic_slice_transpose(ct: Any, operand: Any, *starts: Any,
                             slice_sizes: tuple[int, ...]) -> list[Any]:
    # The window written into zeros at the same (clamped) start.
    unused = [None] * len(starts)
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), *unused]
    # The zeros have the operand's type (JAX's), as the update's rule asks.
    zeros = _full(operand.aval.shape, 0, operand.aval.dtype, sharding=operand.aval._sharding)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts), *unused]


ad.primitive_jvps[dynamic_slice_p] = _dynamic_slice_jvp
ad.primitive_transposes[dynamic_slice_p] = _dynamic_slice_transpose


def _dus_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    operand, update, *starts = primals
    g_operand, g_update = tangents[:2]
    out = dynamic_update_slice_p.bind(operand, update, *starts)
    if type(g_operand) is ad.Zero and type(g_update) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    g_operand = ad.instantiate_zeros(g_operand)
    g_update = ad.instantiate_zeros(g_update)
    return out, dynamic_update_slice_p.bind(g_operand, g_update, *starts)


def _dus_transpose(ct: Any, operand: Any, update: Any, *starts: Any) -> list[Any]:
    # The operand's cotangent is ct with the window zeroed; the update's is that window.
    unused = [None] * len(starts)
    if type(ct) is ad.Zero:
        return [_ct_zero_or_none(operand), _ct_zero_or_none(update), *unused]
    update_shape = _shape_of(update)
    ct_aval = core.get_aval(ct)
    zeros = _full(update_shape, 0, ct_aval.dtype, ct_aval.weak_type)
    operand_ct = update_ct = None
    if ad.is_undefined_primal(operand):
        operand_ct = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if ad.is_undefined_primal(update):
        update_ct = dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(update_shape))
    return [operand_ct, update_ct, *unused]


ad.primitive_jvps[dynamic_update_slice_p] = _dus_jvp
ad.primitive_transposes[dynamic_update_slice_p] = _dus_transpose


def _stacked_start_indices(starts: Sequence[Any], dims: Dims) -> tuple[Any, int | None]:
    """The scalar start indices as one index vector ([n]), or batched as [size, n]."""
    if not starts:
        return np.array([], np.int32), None
    size = next((np.shape(s)[d] for s, d in zip(starts, dims, strict=True) if d is not None),
                None)
    if size is None:
        return structural.concatenate([structural.broadcast(s, (1,)) for s in starts], 0), None
    columns = [structural.broadcast_in_dim(s, (size, 1), (0,) if d is not None else ())
               for s, d in zip(starts, dims, strict=True)]
    return structural.concatenate(columns, 1), 0


def _dynamic_slice_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                           slice_sizes: tuple[int, ...]) -> tuple[Any, int]:
    operand, *starts = vals
    operand_bdim, *start_dims = dims
    every_dim = tuple(range(len(starts)))
    dn = GatherDimensionNumbers(offset_dims=every_dim, collapsed_slice_dims=(),
                                start_index_map=every_dim)
    index, index_bdim = _stacked_start_indices(starts, start_dims)
    gather_rule = batching.primitive_batchers[gather_scatter.gather_p]
    return gather_rule(axis_data, [operand, index], [operand_bdim, index_bdim],
                           dimension_numbers=dn, slice_sizes=slice_sizes, unique_indices=True,
                           indices_are_sorted=True, mode=GatherScatterMode.CLIP,
                           fill_value=None)


batching.primitive_batchers[dynamic_slice_p] = _dynamic_slice_batcher


def _dynamic_update_slice_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims
                                  ) -> tuple[Any, int]:
    operand, update, *starts = vals
    operand_bdim, update_bdim, *start_dims = dims
    every_dim = tuple(range(len(starts)))
    dn = ScatterDimensionNumbers(update_window_dims=every_dim, inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=every_dim)
    index, index_bdim = _stacked_start_indices(starts, start_dims)
    params = dict(update_jaxpr=None, update_consts=(), indices_are_sorted=True,
                  unique_indices=True, mode=GatherScatterMode.CLIP)
    scatter_rule = batching.primitive_batchers[gather_scatter.scatter_p]
    return scatter_rule(axis_data, [operand, index, update],
                        [operand_bdim, index_bdim, update_bdim], dimension_numbers=dn, **params)


batching.primitive_batchers[dynamic_update_slice_p] = _dynamic_update_slice_batcher


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


pad_p = standard_primitive("pad", _pad_shape, _pad_dtype,
                           sharding_rule=sharding_rules.varying_shape("padding"))


def _pad_lower(ctx: LoweringRuleContext, x: Value, value: Value, *,
               padding_config: tuple) -> Value:
    low, high, interior = (tuple(int(c[i]) for c in padding_config) for i in range(3))
    return ctx.builder.one("stablehlo.pad", [x, value], lowering.aval_to_type(ctx.avals_out[0]),
                           edge_padding_low=low, edge_padding_high=high,
                           interior_padding=interior)


dispatch.def_backend_impl(pad_p)
core.joins_varying.add(pad_p)
lowering.register_lowering(pad_p, _pad_lower)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pads with `padding_value`: (low, high, interior) per dimension; negative low/high crop
    (StableHLO `pad`)."""
    return pad_p.bind(operand, padding_value, padding_config=tuple(padding_config))


def _rev_shape(operand: ShapedArray, *, dimensions: tuple[int, ...]) -> tuple[int, ...]:
    utils.check_shapelike("rev", "dimensions", dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not builtins.max(dimensions) < operand.ndim:
        raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                        f"{dimensions} for operand ndim {operand.ndim}.")
    return operand.shape


rev_p = standard_primitive("rev", _rev_shape, lambda x, **_: x.dtype,
                           sharding_rule=sharding_rules.same_as(0))
dispatch.def_backend_impl(rev_p)
lowering.register_lowering(
    rev_p, lambda ctx, x, *, dimensions: ctx.builder.one(
        "stablehlo.reverse", [x], x.type, dimensions=tuple(int(d) for d in dimensions)))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverses `operand` along `dimensions` (StableHLO `reverse`)."""
    return rev_p.bind(operand, dimensions=tuple(dimensions))


def _pad_transpose(ct: Any, operand: Any, padding_value: Any, *, padding_config: tuple
                   ) -> list[Any]:
    # The operand's cotangent: undo the low/high padding (negative padding pads back what was
    # cropped, with zeros), then take every (interior + 1)-th element. The padding value's
    # cotangent is everything else: the total minus what went to the operand.
    rank = len(padding_config)
    lows = np.asarray([c[0] for c in padding_config], np.int64).reshape(rank)
    highs = np.asarray([c[1] for c in padding_config], np.int64).reshape(rank)
    interiors = np.asarray([c[2] for c in padding_config], np.int64).reshape(rank)
    unpadded = pad(ct, _zero_scalar(ct),
                           list(zip(-lows, -highs, np.zeros_like(interiors), strict=True)))
    operand_ct = slice(unpadded, list(np.zeros_like(lows)),
                               core.get_aval(unpadded).shape, list(interiors + 1))
    value_ct = None
    if ad.is_undefined_primal(padding_value):
        axes = list(range(rank))
        # JAX's rule assumes the operand is linear too; the sum below is right either way.
        value_ct = elementwise.sub(reductions.reduce_sum(ct, axes),
                                   reductions.reduce_sum(operand_ct, axes))
    return [operand_ct if ad.is_undefined_primal(operand) else None, value_ct]


ad.deflinear2(pad_p, _pad_transpose)
ad.deflinear2(rev_p, lambda ct, operand, *, dimensions: [rev(ct, dimensions)])


def _rev_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                 dimensions: tuple[int, ...]) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    return rev(operand, [d + 1 if d >= bdim else d for d in dimensions]), bdim


batching.primitive_batchers[rev_p] = _rev_batcher


def _pad_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                 padding_config: tuple) -> tuple[Any, int]:
    operand, padding_value = vals
    operand_bdim, value_bdim = dims
    if operand_bdim is None:
        operand_bdim = 0
        operand = structural.broadcast(operand, (np.shape(padding_value)[value_bdim],))
    config = list(padding_config)
    config.insert(operand_bdim, (0, 0, 0))
    if value_bdim is None:
        return pad(operand, padding_value, config), operand_bdim
    # A per-example padding value: pad with zeros, then select the value wherever a mask
    # (True on the operand's elements, padded with False) is False.
    dtype = core.get_aval(operand).dtype
    padded = pad(operand, np.zeros((), dtype), config)
    ones = structural.broadcast_in_dim(np.array(True), np.shape(operand), ())
    mask = pad(ones, np.array(False), config)
    values = structural.broadcast_in_dim(padding_value, np.shape(padded), (operand_bdim,))
    return selection.select(mask, padded, values), operand_bdim


batching.primitive_batchers[pad_p] = _pad_batcher
