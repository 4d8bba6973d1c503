"""jax.numpy sorting and searching: sort, argsort, lexsort, partition, searchsorted, digitize,
and what is built on sorting: quantile, percentile, median (and their NaN forms) and unique.

Written with lax (`sort`, `top_k`, `rev`, `gather`, `scatter`) in the order JAX emits its
equations. Sorts are stable by default and order floats totally: -inf < ... < -0 = 0 < ... <
inf < NaN, so NaNs sort to the end.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import exceeds
from justjax._src.lax import elementwise as lax
from justjax._src.lax import slicing as lax_slicing
from justjax._src.lax import gather_scatter
from justjax._src.lax import sorting as lax_sorting
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.numpy import reductions, take, ufuncs, util
from justjax._src.numpy.reductions import (_broadcast_in_dim, _const, _expand_dims, _full,
                                           _isnan, _reduction_dims)
from justjax._src.numpy.scalar_types import check_and_canonicalize_user_dtype
from justjax._src.runtime.array import Array

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "sort_complex",
           "searchsorted", "digitize", "median", "nanmedian", "quantile", "nanquantile",
           "percentile", "nanpercentile", "unique", "unique_all", "unique_counts",
           "unique_inverse", "unique_values"]

_INT32_MAX = int(np.iinfo(np.int32).max)


def _index_dtype_for(size: int) -> np.dtype:
    """The signed index type for an axis of `size` (JAX's int_dtype_for_dim)."""
    if exceeds(size, _INT32_MAX):
        return dtypes.canonicalize_dtype(dtypes.int64)
    return dtypes.default_int_dtype()


def _check_kind_order(name: str, kind: Any, order: Any) -> None:
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _flatten_for_axis(arr: Any, axis: int | None) -> tuple[Any, int]:
    if axis is None:
        return structural.reshape(arr, (arr.size,)), 0
    return arr, util.canonicalize_axis(axis, arr.ndim)


@util.jitted_as_in_jax(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Any:
    """Sorted copy of `a` along `axis` (of the flattened array when None); StableHLO `sort`.

    Args:
      a: the array.
      axis: the axis to sort along (default: the last).
      stable: keep equal elements in their original order.
      descending: sort from largest to smallest (the ascending sort reversed).
    Returns:
      The sorted array.
    """
    arr = util.ensure_arraylike("sort", a)
    _check_kind_order("sort", kind, order)
    arr, dimension = _flatten_for_axis(arr, axis)
    result = lax_sorting.sort(arr, dimension=dimension, is_stable=stable)
    return lax_slicing.rev(result, (dimension,)) if descending else result


@util.jitted_as_in_jax(static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Any:
    """Indices that sort `a` along `axis` (of the flattened array when None).

    Args:
      a: the array.
      axis: the axis to sort along (default: the last).
      stable: equal elements keep their original order (for `descending` too).
      descending: indices of the largest element first.
      dtype: the index dtype (default: the default integer type).
    Returns:
      Integer indices with `a`'s shape (flattened when `axis` is None).
    """
    arr = util.ensure_arraylike("argsort", a)
    _check_kind_order("argsort", kind, order)
    arr, dimension = _flatten_for_axis(arr, axis)
    if dtype is not None:
        index_dtype = check_and_canonicalize_user_dtype(dtype, "argsort")
    else:
        index_dtype = _index_dtype_for(arr.shape[dimension])
    iota = structural.broadcasted_iota(index_dtype, arr.shape, dimension)
    if descending and stable:
        # Reversing first keeps equal elements in their original order once reversed back.
        arr = lax_slicing.rev(arr, (dimension,))
        iota = lax_slicing.rev(iota, (dimension,))
    _, indices = lax_sorting.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return lax_slicing.rev(indices, (dimension,)) if descending else indices


@util.jitted_as_in_jax(static_argnames=("axis",))
def lexsort(keys: Sequence[Any], axis: int = -1) -> Any:
    """Indices that sort by several keys, the last key being the primary one.

    Args:
      keys: a sequence of arrays of one shape (or a 2-D array, its rows being the keys).
      axis: the axis to sort along.
    Returns:
      Indices of the default integer type.
    """
    if isinstance(keys, (core.Tracer, Array)):
        # Rows of an array, split as iterating over a JAX tracer does.
        keys = [lax_slicing.index_in_dim(keys, i, keepdims=False) for i in range(len(keys))]
    key_arrays = tuple(util.ensure_arraylike("lexsort", k) for k in keys)
    if not key_arrays:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in key_arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = key_arrays[0].shape
    if not shape:
        return _full((), 0, dtypes.default_int_dtype())
    axis = util.canonicalize_axis(axis, len(shape))
    iota = structural.broadcasted_iota(_index_dtype_for(shape[axis]), shape, axis)
    sorted_ = lax_sorting.sort((*key_arrays[::-1], iota), dimension=axis,
                               num_keys=len(key_arrays))
    return sorted_[-1]


@util.jitted_as_in_jax
def sort_complex(a: Any) -> Any:
    """`a` sorted along its last axis (real part first, then imaginary), as complex."""
    a = util.ensure_arraylike("sort_complex", a)
    a = lax_sorting.sort(a)
    return structural.convert_element_type(a, dtypes.to_complex_dtype(a.dtype))


# ---------------------------------------------------------------------------------------------
# Partitions, built on top_k.

def _partition_setup(name: str, a: Any, kth: int, axis: int) -> tuple[Any, int, int]:
    arr = util.ensure_arraylike("partition", a)
    if dtypes.is_complex(arr.dtype):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = util.canonicalize_axis(axis, arr.ndim)
    kth = util.canonicalize_axis(kth, arr.shape[axis])
    return _swap_last(arr, axis), axis, kth


def _swap_last(arr: Any, axis: int) -> Any:
    """`arr` with `axis` and the last axis exchanged (its own inverse)."""
    perm = list(range(arr.ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return structural.transpose(arr, perm)


def _negated_for_bottom(arr: Any) -> Any:
    """An array whose top_k are `arr`'s smallest elements; unsigned values are shifted by one
    so that zero does not negate to itself."""
    if dtypes.is_unsigned(arr.dtype):
        return lax.neg(lax.add(arr, _const(arr, 1)))
    return lax.neg(arr)


@util.jitted_as_in_jax(static_argnames=("kth", "axis"))
def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """A partial sort: the element at index `kth` along `axis` is where a full sort puts it,
    smaller elements before it (sorted) and the rest after it (largest first)."""
    arr, axis, kth = _partition_setup("partition", a, kth, axis)
    bottom = lax.neg(lax_sorting.top_k(_negated_for_bottom(arr), kth + 1)[0])
    if dtypes.is_unsigned(arr.dtype):
        bottom = lax.sub(bottom, _const(bottom, 1))
    top = lax_sorting.top_k(arr, arr.shape[-1] - kth - 1)[0]
    out = structural.concatenate([bottom, top], arr.ndim - 1)
    return _swap_last(out, axis)


@util.jitted_as_in_jax(static_argnames=("kth", "axis"))
def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """Indices that `partition` `a`: the first `kth + 1` indices along `axis` are those of the
    smallest elements (in order), the rest those of the others."""
    arr, axis, kth = _partition_setup("argpartition", a, kth, axis)
    bottom_ind = lax_sorting.top_k(_negated_for_bottom(arr), kth + 1)[1]
    # Zero out the chosen positions of an all-ones proxy so top_k picks the others.
    proxy = _set_zero_at(_full(arr.shape, 1.0, dtypes.default_float_dtype()),
                         bottom_ind)
    top_ind = lax_sorting.top_k(proxy, arr.shape[-1] - kth - 1)[1]
    out = structural.concatenate([bottom_ind, top_ind], arr.ndim - 1)
    return _swap_last(out, axis)


def _set_zero_at(proxy: Any, indices: Any) -> Any:
    """`proxy` with zeros at `indices` along its last axis, row by row (a scatter whose
    leading dimensions are batch dimensions, as `vmap` of `x.at[i].set(0)` gives)."""
    n = proxy.shape[-1]
    batch = indices.ndim - 1
    in_range = lax_selection.select(lax.lt(indices, _const(indices, 0)),
                                    lax.add(indices, _const(indices, n)), indices)
    in_range = structural.broadcast_in_dim(in_range, (*indices.shape, 1),
                                           tuple(range(indices.ndim)))
    updates = _full((indices.shape[-1],), 0, proxy.dtype)
    for depth in range(batch):
        shape = indices.shape[batch - depth - 1:]
        updates = structural.broadcast_in_dim(updates, shape, tuple(range(1, len(shape))))
    dnums = gather_scatter.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(batch,),
        scatter_dims_to_operand_dims=(batch,), operand_batching_dims=tuple(range(batch)),
        scatter_indices_batching_dims=tuple(range(batch)))
    return gather_scatter.scatter(proxy, in_range, updates, dnums, indices_are_sorted=False,
                               unique_indices=False,
                               mode=gather_scatter.GatherScatterMode.FILL_OR_DROP)


# ---------------------------------------------------------------------------------------------
# searchsorted and digitize.

def _canonicalize_float_for_sort(x: Any) -> Any:
    """-0 as 0 and every NaN as the canonical NaN, so comparisons give a total order."""
    zero = _const(x, 0)
    result = util.where(lax.eq(x, zero), zero, x)
    return util.where(_isnan(x), _const(x, np.nan), result)


def _total_order_keys(x: Any) -> list[Any]:
    if dtypes.is_complex(x.dtype):
        return [_canonicalize_float_for_sort(lax.real(x)),
                _canonicalize_float_for_sort(lax.imag(x))]
    if dtypes.is_float(x.dtype):
        return [_canonicalize_float_for_sort(x)]
    return [x]


def _lt_to(x: Any, y: Any) -> Any:
    """`x < y` in the total order (NaN above everything), for canonicalized keys."""
    if not dtypes.is_float(core.get_aval(x).dtype):
        return lax.lt(x, y)
    return lax.bitwise_or(lax.lt(x, y),
                          lax.bitwise_and(lax.bitwise_not(_isnan(x)),
                                          _isnan(y)))


def _le_to(x: Any, y: Any) -> Any:
    if not dtypes.is_float(core.get_aval(x).dtype):
        return lax.le(x, y)
    return lax.bitwise_or(lax.le(x, y), _isnan(y))


def _eq_to(x: Any, y: Any) -> Any:
    if not dtypes.is_float(core.get_aval(x).dtype):
        return lax.eq(x, y)
    return lax.bitwise_or(lax.eq(x, y),
                          lax.bitwise_and(_isnan(x), _isnan(y)))


def _sort_compare(x: Any, y: Any, or_equal: bool, align: Any = None) -> Any:
    """`x < y` (or `x <= y`) in sort's lexicographic total order; `align` (if given)
    reshapes each pair of keys so they broadcast against each other."""
    result = None
    for xk, yk in zip(_total_order_keys(x)[::-1], _total_order_keys(y)[::-1], strict=True):
        if align is not None:
            xk, yk = align(xk, yk)
        if result is None:
            result = _le_to(xk, yk) if or_equal else _lt_to(xk, yk)
        else:
            result = lax.bitwise_or(_lt_to(xk, yk), lax.bitwise_and(_eq_to(xk, yk), result))
    return result


def _outer_align(sorted_key: Any, query_key: Any) -> tuple[Any, Any]:
    """The sorted keys along a new leading axis, the queries along the others (size-1 axes
    broadcast in the comparison)."""
    query_key = structural.broadcast_in_dim(query_key, (1, *query_key.shape),
                                            tuple(range(1, query_key.ndim + 1)))
    n = sorted_key.shape[0]
    sorted_key = _broadcast_in_dim(sorted_key, (n, *([1] * (query_key.ndim - 1))), (0,))
    return sorted_key, query_key


def _searchsorted_compare_all(sorted_arr: Any, query: Any, side: str, dtype: np.dtype) -> Any:
    """Counts, for each query, the sorted elements before it: an n x m comparison."""
    comparisons = _sort_compare(sorted_arr, query, or_equal=side == "right",
                                align=_outer_align)
    return reductions.sum(comparisons, axis=0, dtype=dtype)


def _searchsorted_scan(sorted_arr: Any, query: Any, side: str, dtype: np.dtype) -> Any:
    """Binary search of every query at once: ceil(log2(n + 1)) halvings of [low, high)."""
    n = sorted_arr.shape[0]
    if n == 0:
        return _full(query.shape, 0, dtype)
    unsigned = dtypes.uint64 if np.dtype(dtype).itemsize == 8 else dtypes.uint32
    unsigned = dtypes.canonicalize_dtype(unsigned)
    low = _full(query.shape, 0, unsigned)
    high = _full(query.shape, n, unsigned)
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = lax.add(low, lax.div(lax.sub(high, low), _const(low, 2)))
        go_left = _sort_compare(query, _take_clipped(sorted_arr, mid), or_equal=side == "left")
        low, high = (lax_selection.select(go_left, low, mid),
                     lax_selection.select(go_left, mid, high))
    return structural.convert_element_type(high, dtype)


def _take_clipped(arr: Any, indices: Any) -> Any:
    """`arr[indices]` for a 1-D `arr`, indices clamped into range (a StableHLO `gather`)."""
    starts = structural.broadcast_in_dim(indices, (*indices.shape, 1),
                                         tuple(range(indices.ndim)))
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=(indices.ndim,), collapsed_slice_dims=(), start_index_map=(0,),
        operand_batching_dims=(), start_indices_batching_dims=())
    gathered = gather_scatter.gather(arr, starts, dnums, (1,), indices_are_sorted=False,
                                  unique_indices=False,
                                  mode=gather_scatter.GatherScatterMode.CLIP, fill_value=None)
    return structural.squeeze(gathered, (indices.ndim,))


def _rank(x: Any, index_dtype: np.dtype) -> Any:
    """Each element's position in the stable sort of the 1-D `x`."""
    idx = structural.iota(index_dtype, x.shape[0])
    zeros = _full(x.shape, 0, index_dtype)
    order = lax_sorting.sort_key_val(x, idx)[1]
    return zeros.at[order].set(idx)


def _searchsorted_sort(sorted_arr: Any, query: Any, side: str, dtype: np.dtype) -> Any:
    """Ranks of the queries among the sorted elements, from one joint sort."""
    total = sorted_arr.size + query.size
    index_dtype = dtypes.int64 if exceeds(total, _INT32_MAX) else dtypes.int32
    flat_query = structural.reshape(query, (query.size,))
    if side == "left":
        joint = _rank(structural.concatenate([flat_query, sorted_arr], 0), index_dtype)
        index = joint[:query.size]
    else:
        joint = _rank(structural.concatenate([sorted_arr, flat_query], 0), index_dtype)
        index = joint[sorted_arr.size:]
    own = _rank(structural.reshape(query, (query.size,)), index_dtype)
    result = structural.reshape(lax.sub(index, own), query.shape)
    return structural.convert_element_type(result, dtype)


_SEARCHSORTED_METHODS = {"scan": _searchsorted_scan, "scan_unrolled": _searchsorted_scan,
                         "compare_all": _searchsorted_compare_all, "sort": _searchsorted_sort}


@util.jitted_as_in_jax(static_argnames=("side", "method"))
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Where to insert `v` into the sorted 1-D `a` to keep it sorted.

    Args:
      a: a sorted 1-D array (or any 1-D array with `sorter` the indices sorting it).
      v: the values to look up, any shape.
      side: 'left' gives the first suitable index, 'right' the last.
      sorter: optional indices that sort `a`.
      method: 'scan' (a binary search, the default), 'scan_unrolled', 'compare_all' (all
        pairwise comparisons) or 'sort' (one joint sort).
    Returns:
      int32 indices with `v`'s shape.
    """
    if sorter is None:
        a, v = util.ensure_arraylike("searchsorted", a, v)
    else:
        a, v, sorter = util.ensure_arraylike("searchsorted", a, v, sorter)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = util.promote_dtypes(a, v)
    if sorter is not None:
        a = a[sorter]
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _SEARCHSORTED_METHODS:
        raise ValueError(f"invalid argument method={method!r}, expected one of "
                         f"{['compare_all', 'scan', 'scan_unrolled', 'sort']}")
    dtype = _index_dtype_for(a.shape[0])
    return _SEARCHSORTED_METHODS[method](a, v, side, dtype)


@util.jitted_as_in_jax(static_argnames=("right", "method"))
def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """Index of the bin each element of `x` falls in, for monotonic `bins`.

    Args:
      x: the values.
      bins: 1-D, increasing or decreasing bin edges.
      right: whether bins include their right edge instead of their left.
      method: the `searchsorted` method.
    Returns:
      int32 bin indices with `x`'s shape.
    """
    x, bins_arr = util.ensure_arraylike("digitize", x, bins)
    right = core.concrete_or_error(bool, right, "right argument of jnp.digitize()")
    if bins_arr.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins!r}")
    if bins_arr.shape[0] == 0:
        return _full(x.shape, 0, dtypes.int32)
    side = "right" if not right else "left"
    kwargs = {} if method is None else {"method": method}
    increasing = lax.ge(bins_arr[-1], bins_arr[0])
    forward = searchsorted(bins_arr, x, side=side, **kwargs)
    n = bins_arr.shape[0]
    backward = searchsorted(lax_slicing.rev(bins_arr, (0,)), x, side=side, **kwargs)
    backward = lax.sub(_const(backward, n), backward)
    return util.where(increasing, forward, backward)


# ---------------------------------------------------------------------------------------------
# Order statistics: quantiles, percentiles and medians.

_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


@util.jitted_as_in_jax(static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def quantile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: None = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
             *, weights: Any = None) -> Any:
    """The `q`-th quantiles of `a` along `axis`; NaN wherever an input is NaN.

    Args:
      a: the array.
      q: a quantile in [0, 1], or a 1-D array of them (leading the result's shape).
      axis: None (flattened), an axis or a tuple of axes.
      method: 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'.
      keepdims: keep reduced axes as size 1.
      weights: per-element weights (only with 'inverted_cdf').
    Returns:
      Floats of `a`'s (inexact) dtype.
    """
    a, q = util.ensure_arraylike("quantile", a, q)
    if weights is not None:
        weights = util.ensure_arraylike("quantile", weights)
    if overwrite_input or out is not None:
        raise ValueError("jax.numpy.quantile does not support overwrite_input=True or "
                         "out != None")
    return _quantile(a, q, axis, method, keepdims, False, weights)


@util.jitted_as_in_jax(static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def nanquantile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None) -> Any:
    """`quantile` of the non-NaN elements."""
    a, q = util.ensure_arraylike("nanquantile", a, q)
    if weights is not None:
        weights = util.ensure_arraylike("nanquantile", weights)
    if overwrite_input or out is not None:
        raise ValueError("jax.numpy.nanquantile does not support overwrite_input=True or "
                         "out != None")
    return _quantile(a, q, axis, method, keepdims, True, weights)


@util.jitted_as_in_jax(static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def percentile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None) -> Any:
    """`quantile` with `q` in percent (0 to 100)."""
    a, q = util.ensure_arraylike("percentile", a, q)
    if weights is not None:
        weights = util.ensure_arraylike("percentile", weights)
    q, = util.promote_dtypes_inexact(q)
    return quantile(a, lax.div(q, _const(q, 100)), axis=axis, out=out,
                    overwrite_input=overwrite_input, method=method, keepdims=keepdims,
                    weights=weights)


@util.jitted_as_in_jax(static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def nanpercentile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None) -> Any:
    """`nanquantile` with `q` in percent (0 to 100)."""
    a, q = util.ensure_arraylike("nanpercentile", a, q)
    if weights is not None:
        weights = util.ensure_arraylike("nanpercentile", weights)
    q, = util.promote_dtypes_inexact(q)
    return nanquantile(a, lax.div(q, _const(q, 100)), axis=axis, out=out,
                       overwrite_input=overwrite_input, method=method, weights=weights,
                       keepdims=keepdims)


@util.jitted_as_in_jax(static_argnames=("axis", "overwrite_input", "keepdims"))
def median(a: Any, axis: int | tuple[int, ...] | None = None, out: None = None,
           overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """The median along `axis` (the mean of the two middle elements for even counts)."""
    a = util.ensure_arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


@util.jitted_as_in_jax(static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(a: Any, axis: int | tuple[int, ...] | None = None, out: None = None,
              overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """The median of the non-NaN elements along `axis`."""
    a = util.ensure_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, squash_nans: bool,
              weights: Any) -> Any:
    if method not in _QUANTILE_METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    if weights is not None:
        a, weights = _quantile_weights(a, weights, axis, method)
    else:
        a, = util.promote_dtypes_inexact(a)
    if dtypes.is_complex(a.dtype):
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    a, weights, axis, keepdim = _quantile_move_axes(a, weights, axis, keepdims)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    q_orig = q
    if squash_nans:
        a, weights, values = _nan_order_values(a, q, weights, axis, keepdims)
    else:
        a, weights, values = _order_values(a, q, weights, axis, keepdims)
    if method == "inverted_cdf":
        result = _inverted_cdf(a, q_orig, weights, axis, keepdims, squash_nans)
    else:
        result = _interpolate(method, q, *values)
    if keepdims and keepdim:
        if q.ndim > 0:
            keepdim = [q.shape[0], *keepdim]
        result = structural.reshape(result, tuple(keepdim))
    return structural.convert_element_type(result, a.dtype)


def _quantile_weights(a: Any, weights: Any, axis: Any, method: str) -> tuple[Any, Any]:
    if dtypes.is_complex(weights.dtype):
        raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                  "'inverted_cdf' supports weights.")
    a, weights = util.promote_dtypes_inexact(a, weights)
    if weights.shape != a.shape:
        if axis is None:
            raise ValueError("Weights shape must match 'a' shape when axis is None.")
        axes = _reduction_dims(a.ndim, axis)
        expected = tuple(a.shape[ax] for ax in axes)
        if weights.shape != expected:
            raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                             f"{expected}")
        weights = structural.broadcast_in_dim(weights, a.shape, axes)
    return a, weights


def _quantile_move_axes(a: Any, weights: Any, axis: Any, keepdims: bool
                        ) -> tuple[Any, Any, int, list[int]]:
    """Brings the reduced axes together as one axis; returns the keepdims shape too."""
    keepdim: list[int] = []
    if axis is None:
        if keepdims:
            keepdim = [1] * a.ndim
        a = structural.reshape(a, (a.size,))
        if weights is not None:
            weights = structural.reshape(weights, (weights.size,))
        return a, weights, 0, keepdim
    if not isinstance(axis, tuple):
        return a, weights, util.canonicalize_axis(axis, a.ndim), keepdim
    nd = a.ndim
    axis = tuple(util.canonicalize_axis(ax, nd) for ax in axis)
    if len(set(axis)) != len(axis):
        raise ValueError("repeated axis")
    keepdim = [1 if i in axis else d for i, d in enumerate(a.shape)]
    dimensions = list(range(nd))
    for i, s in enumerate(sorted(set(range(nd)) - set(axis))):
        dimensions[i], dimensions[s] = dimensions[s], dimensions[i]
    kept = tuple(d for i, d in enumerate(a.shape) if i not in axis)
    shape = kept + (math.prod(d for i, d in enumerate(a.shape) if i in axis),)
    a = structural.reshape(a, shape, dimensions)
    if weights is not None:
        weights = structural.reshape(weights, shape, dimensions)
    return a, weights, a.ndim - 1, keepdim


def _sort_along(a: Any, weights: Any, axis: int) -> tuple[Any, Any]:
    if weights is not None:
        return lax_sorting.sort_key_val(a, weights, dimension=axis)
    return lax_sorting.sort(a, dimension=axis), None


def _interp_indices(q: Any, limit: Any, clamp: Callable) -> tuple[Any, ...]:
    """floor/ceil positions (clamped into [0, limit]) and their interpolation weights."""
    low = lax.floor(q)
    high = lax.ceil(q)
    high_weight = lax.sub(q, low)
    low_weight = lax.sub(_const(high_weight, 1), high_weight)
    low = clamp(low, limit())
    high = clamp(high, limit())
    index_dtype = dtypes.default_int_dtype()
    low = structural.convert_element_type(low, index_dtype)
    high = structural.convert_element_type(high, index_dtype)
    return low, high, low_weight, high_weight


def _order_values(a: Any, q: Any, weights: Any, axis: int, keepdims: bool
                  ) -> tuple[Any, Any, tuple[Any, ...]]:
    """Sorts (NaN everywhere along `axis` if any is NaN) and gathers the neighbours."""
    a_shape = a.shape
    a = util.where(reductions.any(_isnan(a), axis=axis, keepdims=True), np.nan, a)
    a, weights = _sort_along(a, weights, axis)
    n = structural.convert_element_type(a_shape[axis], q.dtype)
    q = lax.mul(q, ufuncs.subtract(n, 1))
    low, high, low_weight, high_weight = _interp_indices(
        q, lambda: ufuncs.subtract(n, 1),
        lambda x, hi: lax_selection.clamp(_const(x, 0), x, hi))
    q_ndim = q.ndim
    slice_sizes = list(a_shape)
    slice_sizes[axis] = 1
    offset_end = len(a_shape) + q_ndim if keepdims else len(a_shape) + q_ndim - 1
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=tuple(range(q_ndim, offset_end)),
        collapsed_slice_dims=() if keepdims else (axis,), start_index_map=(axis,),
        operand_batching_dims=(), start_indices_batching_dims=())
    low_value = _gather_at(a, low, dnums, slice_sizes)
    high_value = _gather_at(a, high, dnums, slice_sizes)
    if q_ndim == 1:
        low_weight = _broadcast_in_dim(low_weight, low_value.shape, (0,))
        high_weight = _broadcast_in_dim(high_weight, high_value.shape, (0,))
    return a, weights, (low_value, high_value, low_weight, high_weight)


def _gather_at(a: Any, index: Any, dnums: Any, slice_sizes: Sequence[int]) -> Any:
    starts = structural.broadcast_in_dim(index, (*index.shape, 1), tuple(range(index.ndim)))
    return gather_scatter.gather(a, starts, dnums, tuple(slice_sizes), indices_are_sorted=False,
                              unique_indices=False,
                              mode=gather_scatter.GatherScatterMode.PROMISE_IN_BOUNDS,
                              fill_value=None)


def _nan_order_values(a: Any, q: Any, weights: Any, axis: int, keepdims: bool
                      ) -> tuple[Any, Any, tuple[Any, ...]]:
    """Sorts (NaNs last) and picks neighbours among each line's non-NaN count."""
    a = util.where(_isnan(a), np.nan, a)
    a, weights = _sort_along(a, weights, axis)
    counts = reductions.sum(lax.bitwise_not(_isnan(a)), axis=axis, dtype=q.dtype,
                            keepdims=keepdims)
    reduced_shape = counts.shape
    q_shape, q_ndim = q.shape, q.ndim
    q = _expand_dims(q, tuple(range(q_ndim, len(reduced_shape) + q_ndim)))
    counts = _expand_dims(counts, tuple(range(q_ndim)))
    q = lax.mul(q, lax.sub(counts, _const(q, 1)))
    low, high, low_weight, high_weight = _interp_indices(
        q, lambda: ufuncs.subtract(counts, 1),
        lambda x, hi: lax.max(_const(x, 0), lax.min(x, hi)))
    out_shape = q_shape + reduced_shape
    index_dtype = dtypes.default_int_dtype()
    index = [structural.broadcasted_iota(index_dtype, out_shape, dim + q_ndim)
             for dim in range(len(reduced_shape))]
    if keepdims:
        index[axis] = low
    else:
        index.insert(axis, low)
    low_value = a[tuple(index)]
    index[axis] = high
    high_value = a[tuple(index)]
    return a, weights, (low_value, high_value, low_weight, high_weight)


def _interpolate(method: str, q: Any, low_value: Any, high_value: Any, low_weight: Any,
                 high_weight: Any) -> Any:
    if method == "linear":
        return lax.add(lax.mul(structural.convert_element_type(low_value, q.dtype), low_weight),
                       lax.mul(structural.convert_element_type(high_value, q.dtype),
                               high_weight))
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        pred = lax.le(high_weight, _const(high_weight, 0.5))
        return lax_selection.select(pred, low_value, high_value)
    return lax.mul(lax.add(low_value, high_value), _const(low_value, 0.5))


def _inverted_cdf(a: Any, q: Any, weights: Any, axis: int, keepdims: bool,
                  squash_nans: bool) -> Any:
    """The smallest sorted element whose cumulative weight reaches `q` of the total."""
    q_ndim = q.ndim
    if weights is None:
        weights = _full(a.shape, 1.0, a.dtype)
    zeros = _full(weights.shape, 0, weights.dtype)
    bad_weights = lax.bitwise_or(lax.lt(weights, zeros), _isnan(weights))
    nan_data = _isnan(a)
    clean_weights = lax_selection.select(lax.bitwise_or(bad_weights, nan_data), zeros, weights)
    cum_weights = reductions.cumsum(clean_weights, axis=axis)
    total_weight = lax_slicing.index_in_dim(cum_weights, -1, axis=axis, keepdims=keepdims)
    total_expanded = _expand_dims(total_weight, tuple(range(q_ndim)))
    target = lax.mul(structural.reshape(q, q.shape + (1,) * total_weight.ndim), total_expanded)
    if not keepdims:
        target = _expand_dims(target, (axis + q_ndim,))
    is_less = lax.lt(_expand_dims(cum_weights, tuple(range(q_ndim))), target)
    idx = reductions.sum(structural.convert_element_type(is_less, dtypes.default_int_dtype()),
                         axis=axis + q_ndim, keepdims=keepdims)
    if squash_nans:
        valid_counts = reductions.sum(lax.bitwise_not(nan_data), axis=axis, dtype=q.dtype,
                                      keepdims=keepdims)
    else:
        valid_counts = _full(total_weight.shape, a.shape[axis], q.dtype)
    limit = lax.sub(valid_counts, _const(valid_counts, 1))
    max_idx = structural.convert_element_type(limit, dtypes.default_int_dtype())
    max_idx = _expand_dims(max_idx, tuple(range(q_ndim)))
    max_idx = structural.convert_element_type(max_idx, idx.dtype)
    idx = lax.max(_const(idx, 0), lax.min(idx, max_idx))
    result = _take_positions(a, idx, axis, keepdims, q_ndim)
    all_nan = lax.eq(valid_counts, _full(valid_counts.shape, 0, valid_counts.dtype))
    any_bad_weight = reductions.any(bad_weights, axis=axis, keepdims=keepdims)
    if squash_nans:
        force_nan = lax.bitwise_or(any_bad_weight, all_nan)
    else:
        any_nan = reductions.any(nan_data, axis=axis, keepdims=keepdims)
        force_nan = lax.bitwise_or(any_bad_weight, any_nan)
    force_nan = _expand_dims(force_nan, tuple(range(q_ndim)))
    return util.where(force_nan, _full(result.shape, np.nan, result.dtype), result)


def _take_positions(a: Any, idx: Any, axis: int, keepdims: bool, q_ndim: int) -> Any:
    """`a`'s elements at positions `idx` along `axis` (quantiles leading `idx`'s shape)."""
    if keepdims:
        idx = structural.squeeze(idx, (q_ndim + axis,))
    if q_ndim == 0:
        picked = take.take_along_axis(a, _expand_dims(idx, (axis,)), axis=axis)
        result = structural.squeeze(picked, (axis,))
    else:
        perm = [*range(q_ndim, q_ndim + axis), *range(q_ndim), *range(q_ndim + axis, idx.ndim)]
        picked = take.take_along_axis(a, structural.transpose(idx, perm), axis=axis)
        result = structural.transpose(picked, [perm.index(i) for i in range(len(perm))])
    if keepdims:
        result = _expand_dims(result, (q_ndim + axis,))
    return result


# ---------------------------------------------------------------------------------------------
# Unique elements (sort, then keep the first of each run).

_UNIQUE_SIZE_HINT = ("To make jnp.unique() compatible with JIT and other transforms, you can "
                     "specify a concrete value for the size argument, which will determine the "
                     "output size.")


class UniqueAllResult(NamedTuple):
    """`unique_all`'s result."""

    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """`unique_counts`'s result."""

    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """`unique_inverse`'s result."""

    values: Any
    inverse_indices: Any


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """The sorted unique elements of `ar` (or unique slices along `axis`).

    Args:
      ar: the array (flattened when `axis` is None).
      return_index / return_inverse / return_counts: also return the index of each unique
        element's first occurrence, the indices rebuilding `ar` from the result, and counts.
      equal_nan: treat NaNs as equal to each other.
      size: a static result length, needed when `ar` is traced: the result is padded (with
        `fill_value`, by default the smallest element) or truncated.
      fill_value: the padding value when `size` exceeds the number of unique elements.
    Returns:
      The unique values, or a tuple with the requested extra arrays.
    """
    del sorted  # the result is always sorted
    arr = util.ensure_arraylike("unique", ar)
    if size is None:
        arr = core.concrete_or_error(lambda x: x, arr, "The error arose for the first argument "
                                     "of jnp.unique(). " + _UNIQUE_SIZE_HINT)
    else:
        size = core.concrete_or_error(operator.index, size, "The error arose for the size "
                                      "argument of jnp.unique(). " + _UNIQUE_SIZE_HINT)
    arr_shape = arr.shape
    if axis is None:
        axis_int = 0
        arr = structural.reshape(arr, (arr.size,))
    else:
        axis_int = util.canonicalize_axis(axis, arr.ndim)
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan=equal_nan, size=size, fill_value=fill_value)
    if return_inverse and axis is None:
        position = 2 if return_index else 1
        inverse = structural.reshape(result[position], arr_shape)
        result = (*result[:position], inverse, *result[position + 1:])
    return result


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None
               ) -> UniqueAllResult:
    """Array API: unique values with first indices, inverse indices and counts (NaNs
    distinct)."""
    x = util.ensure_arraylike("unique_all", x)
    values, indices, inverse, counts = unique(
        x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
        size=size, fill_value=fill_value)
    return UniqueAllResult(values, indices, inverse, counts)


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None
                  ) -> UniqueCountsResult:
    """Array API: unique values and their counts (NaNs distinct)."""
    x = util.ensure_arraylike("unique_counts", x)
    values, counts = unique(x, return_counts=True, equal_nan=False, size=size,
                            fill_value=fill_value)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None
                   ) -> UniqueInverseResult:
    """Array API: unique values and the indices that rebuild `x` (NaNs distinct)."""
    x = util.ensure_arraylike("unique_inverse", x)
    values, inverse = unique(x, return_inverse=True, equal_nan=False, size=size,
                             fill_value=fill_value)
    return UniqueInverseResult(values, inverse)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Array API: the unique values (NaNs distinct)."""
    x = util.ensure_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


@util.jitted_as_in_jax(static_argnames=("axis", "equal_nan"))
def _unique_sorted_mask(ar: Any, axis: int, equal_nan: bool) -> tuple[Any, Any, Any]:
    """The slices along `axis` sorted lexicographically, a mask of the first of each run of
    equal slices, and the sorting permutation."""
    # Imported here: these modules import this one.
    from justjax._src.numpy import array_creation, shape_ops
    aux = shape_ops.moveaxis(ar, axis, 0)
    if dtypes.is_complex(aux.dtype):
        aux = util.where(ufuncs.isnan(aux), _const(aux, np.nan), aux)
    size, *out_shape = aux.shape
    if math.prod(out_shape) == 0:
        size = 1
        perm = array_creation.zeros(1, dtype=dtypes.default_int_dtype())
    else:
        keys = structural.transpose(structural.reshape(aux, (size, math.prod(out_shape))),
                                    (1, 0))
        perm = lexsort(keys[::-1])
    aux = aux[perm]
    if not aux.size:
        return aux, array_creation.zeros(size, dtype=dtypes.bool_), perm
    if dtypes.is_inexact(aux.dtype) and equal_nan:
        def neq(x: Any, y: Any) -> Any:
            different = lax.ne(x, y)
            both_nan = lax.bitwise_and(ufuncs.isnan(x), ufuncs.isnan(y))
            return lax.bitwise_and(different, lax.bitwise_not(both_nan))
    else:
        neq = lax.ne
    ones = array_creation.ones(size, dtype=dtypes.bool_)
    changed = reductions.any(neq(aux[1:], aux[:-1]), tuple(range(1, aux.ndim)))
    return aux, ones.at[1:].set(changed), perm


def _unique(ar: Any, axis: int, return_index: bool, return_inverse: bool,
            return_counts: bool, *, equal_nan: bool, size: int | None,
            fill_value: Any) -> Any:
    # Imported here: these modules import this one.
    from justjax._src.numpy import array_creation, selection, shape_ops
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    if size is None:
        ind = core.concrete_or_error(lambda x: x, mask,
                                     "The error arose in jnp.unique(). " + _UNIQUE_SIZE_HINT)
    else:
        ind = selection.nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        result = _fill_unique(result, mask, size, fill_value)
    ret: tuple[Any, ...] = (shape_ops.moveaxis(result, 0, axis),)
    int_dtype = dtypes.default_int_dtype()
    if return_index:
        ret += (perm[ind] if aux.size else perm,)
    if return_inverse:
        if aux.size:
            imask = ufuncs.subtract(reductions.cumsum(mask), 1)
            inverse = array_creation.zeros(mask.shape, dtype=int_dtype).at[perm].set(imask)
        else:
            inverse = array_creation.zeros(ar.shape[axis], dtype=int_dtype)
        ret += (inverse,)
    if return_counts:
        ret += (_unique_counts(ar, axis, aux, mask, size),)
    return ret[0] if len(ret) == 1 else ret


def _fill_unique(result: Any, mask: Any, size: int, fill_value: Any) -> Any:
    """Positions past the number of unique elements set to `fill_value`."""
    from justjax._src.numpy import array_creation
    fill = structural.convert_element_type(util.ensure_arraylike("unique", fill_value),
                                           result.dtype)
    if not result.shape[0]:
        return array_creation.full_like(result, fill, shape=(size, *result.shape[1:]))
    valid = ufuncs.less(array_creation.arange(size), reductions.sum(mask))
    valid = _expand_dims(valid, tuple(range(1, result.ndim)))
    return util.where(valid, result, fill)


def _unique_counts(ar: Any, axis: int, aux: Any, mask: Any, size: int | None) -> Any:
    # Imported here: these modules import this one.
    from justjax._src.numpy import array_creation, joining, numeric, selection
    int_dtype = dtypes.default_int_dtype()
    if aux.size:
        if size is None:
            idx = joining.append(selection.nonzero(mask)[0], mask.size)
        else:
            idx = selection.nonzero(mask, size=size + 1)[0]
            idx = idx.at[1:].set(util.where(idx[1:], idx[1:], mask.size))
        return numeric.diff(idx)
    if ar.shape[axis]:
        return array_creation.full((1,), ar.shape[axis], dtype=int_dtype)
    return array_creation.empty(0, dtype=int_dtype)
