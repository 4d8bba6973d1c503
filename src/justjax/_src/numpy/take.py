"""jax.numpy's `take`, `take_along_axis` and its inverse `put_along_axis`: elements picked (or
written) at integer index arrays along one axis, each as one gather (or one `.at[].set`).
`x[idx]` and `x.at[idx]` themselves are in `indexing.py`."""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import exceeds, is_symbolic_dim
from justjax._src.lax import elementwise as lax
from justjax._src.lax import gather_scatter
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.numpy import array_creation, ufuncs, util
from justjax._src.numpy.indexing import (GatherScatterMode, IndexUpdateHelper, _full_like,
                                         _normalize_array_index)

__all__ = ["put_along_axis", "take", "take_along_axis"]


def _floor_mod(indices: Any, n: int) -> Any:
    dtype = core.get_aval(indices).dtype
    n_value = dtypes.coerce_to_array(n, dtype)
    r = lax.rem(indices, n_value)
    if dtypes.is_unsigned(dtype):
        return r
    return lax_selection.select(lax.lt(r, np.zeros((), dtype)), lax.add(r, n_value), r)


def take(a: Any, indices: Any, axis: int | None = None, out: None = None,
         mode: str | None = None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """`numpy.take` as one gather. Out-of-bounds indices give `fill_value` (mode 'fill', the
    default: NaN for inexact dtypes); 'clip' clamps and 'wrap' wraps around.

    Args:
      axis: the axis to take along; None flattens `a` first.
    """
    return _take(a, indices, None if axis is None else operator.index(axis), out, mode,
                 unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                 fill_value=fill_value)


@util.jitted_as_in_jax(static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted",
                                        "fill_value"))
def _take(a: Any, indices: Any, axis: int | None = None, out: None = None,
          mode: str | None = None, unique_indices: bool = False,
          indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """`take`, jitted as JAX jits it."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a, indices = util.ensure_arraylike("take", a, indices)
    if axis is None:
        a = structural.reshape(a, (core.get_aval(a).size,))
        axis_idx = 0
    else:
        axis_idx = util.canonicalize_axis(operator.index(axis), core.get_aval(a).ndim)
    a_shape = core.get_aval(a).shape
    idx_aval = core.get_aval(indices)
    if mode is None or mode == "fill":
        gather_mode = GatherScatterMode.FILL_OR_DROP
        # As JAX: negative indices wrap through `jnp.where` (a nested `_where` jit).
        indices = util._where(indices < 0, indices + a_shape[axis_idx], indices)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = ufuncs.remainder(indices, util.const(indices, a_shape[axis_idx]))
        gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    slice_sizes = list(a_shape)
    if slice_sizes[axis_idx] == 0:
        if idx_aval.size != 0:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if idx_aval.size == 0:
        return _full_like(a, 0, a_shape[:axis_idx] + idx_aval.shape + a_shape[axis_idx + 1:])
    slice_sizes[axis_idx] = 1
    index_dims = idx_aval.ndim
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=tuple(list(range(axis_idx))
                          + list(range(axis_idx + index_dims, len(a_shape) + index_dims - 1))),
        collapsed_slice_dims=(axis_idx,), start_index_map=(axis_idx,))
    return gather_scatter.gather(a, structural.expand_dims(indices, (index_dims,)), dnums,
                          tuple(slice_sizes), mode=gather_mode, unique_indices=unique_indices,
                          indices_are_sorted=indices_are_sorted, fill_value=fill_value)


@util.jitted_as_in_jax(static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"))
def take_along_axis(arr: Any, indices: Any, axis: int | None = -1,
                    mode: str | GatherScatterMode | None = None, fill_value: Any = None, *,
                    wrap_negative_indices: bool | None = None) -> Any:
    """`numpy.take_along_axis` as one gather with batching dims. Out-of-bounds indices give
    `fill_value` by default (mode 'fill'); `mode='one_hot'` gives 0 for them.

    Args:
      axis: the axis to take along; None flattens `arr` (then `indices` must be 1-D).
      wrap_negative_indices: whether negative indices count from the end (by default, unless
        mode is 'promise_in_bounds').
    """
    a, indices = util.ensure_arraylike("take_along_axis", arr, indices)
    idx_aval = core.get_aval(indices)
    if not dtypes.is_int(idx_aval.dtype):
        raise TypeError(f"take_along_axis indices must be of integer type, got "
                        f"{idx_aval.dtype}")
    if axis is None:
        if idx_aval.ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{idx_aval.shape}")
        a = structural.reshape(a, (core.get_aval(a).size,))
        axis = 0
    a_shape = core.get_aval(a).shape
    rank = len(a_shape)
    if rank != idx_aval.ndim:
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{idx_aval.ndim} vs. {rank}")
    axis_int = util.canonicalize_axis(axis, rank)
    axis_size = a_shape[axis_int]
    arr_shape = a_shape[:axis_int] + (1,) + a_shape[axis_int + 1:]
    out_shape = util.broadcast_shapes(idx_aval.shape, arr_shape)
    if axis_size == 0:
        return _full_like(structural.convert_element_type(0, core.get_aval(a).dtype), 0,
                          out_shape)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:
        wide = exceeds(axis_size, np.iinfo(np.int32).max) and config.read("jax_enable_x64")
        indices = structural.convert_element_type(indices, np.int64 if wide else np.int32)
        indices = _normalize_array_index(indices, axis_size)
    if mode == "one_hot":
        mode, fill_value = GatherScatterMode.FILL_OR_DROP, 0
    return _gather_along_axis(a, indices, axis_int, out_shape, arr_shape,
                              "fill" if mode is None else mode, fill_value)


def _gather_along_axis(a: Any, indices: Any, axis: int, out_shape: Sequence[int],
                       arr_shape: Sequence[int], mode: Any, fill_value: Any) -> Any:
    """Batches over the axes where `indices` is not 1; takes whole axes where it is 1."""
    idx_shape = core.get_aval(indices).shape
    index_dims = [i for i, n in enumerate(idx_shape) if i == axis or n != 1]
    gather_indices = structural.reshape(
        indices, tuple(out_shape[i] if is_symbolic_dim(out_shape[i]) else int(out_shape[i])
                       for i in index_dims) + (1,))
    slice_sizes, offset_dims, start_index_map, collapsed = [], [], [], []
    operand_batching, indices_batching, dims_to_squeeze = [], [], []
    new_i = j = 0
    for i in range(len(arr_shape)):
        if i == axis:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed.append(new_i)
            new_i += 1
            j += 1
        elif idx_shape[i] == 1:
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:
            dims_to_squeeze.append(i)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            operand_batching.append(new_i)
            indices_batching.append(j)
            new_i += 1
            j += 1
    a = structural.squeeze(a, dims_to_squeeze)
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching),
        start_indices_batching_dims=tuple(indices_batching))
    return gather_scatter.gather(a, gather_indices, dnums, tuple(slice_sizes), mode=mode,
                          fill_value=fill_value)


@util.jitted_as_in_jax(static_argnames=("axis", "inplace", "mode"))
def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Any:
    """`arr` with `values` written at `indices` along `axis` (the inverse of
    `take_along_axis`). JAX arrays are immutable, so `inplace=False` is required.

    Built in JAX's order: `values` is broadcast to the shape of `indices` first, the index
    tuple is `jnp.indices(shape, sparse=True)` with `indices` in place of the `axis` entry
    (the replaced grid is still computed, as in JAX), then one `.at[...].set`.
    """
    if inplace:
        # JAX's text lacks the space between "arrays" and "are".
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                         "arraysare immutable. Pass inplace=False to instead return an "
                         "updated array.")
    a, indices, values = util.ensure_arraylike("put_along_axis", arr, indices, values)
    original_shape = core.get_aval(a).shape
    if axis is None:
        a = structural.reshape(a, (core.get_aval(a).size,))
        axis = 0
    rank = core.get_aval(a).ndim
    idx_shape = core.get_aval(indices).shape
    if len(idx_shape) != rank:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                         f"arr.ndim={rank} and indices.ndim={len(idx_shape)}.")
    try:
        values = util.broadcast_to(values, idx_shape)
    except ValueError:
        raise ValueError("put_along_axis argument 'values' must be broadcastable to 'indices'. "
                         f"Got values.shape={core.get_aval(values).shape} and "
                         f"indices.shape={idx_shape}.") from None
    axis = util.canonicalize_axis(axis, rank)
    index = list(array_creation.indices(core.get_aval(a).shape, sparse=True))
    index[axis] = indices
    updated = IndexUpdateHelper(a)[tuple(index)].set(values, mode=mode)
    return structural.reshape(updated, original_shape)
