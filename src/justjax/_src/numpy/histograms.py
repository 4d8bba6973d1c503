"""Counting and binning: `bincount`, `histogram_bin_edges`, `histogram`, `histogram2d`,
`histogramdd`, and the statistics `cov` and `corrcoef`.

Bin counts are scatter-adds (`.at[...].add`) into a zero array whose length is static: a
bin count's length depends on the data only in `bincount` without `length=`, which then
needs concrete input, as in JAX.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import elementwise as lax
from justjax._src.numpy import (array_creation, diagonals, joining, reductions, selection,
                                shape_ops, sorting, tensor, ufuncs, util)

__all__ = ["bincount", "corrcoef", "cov", "histogram", "histogram2d", "histogram_bin_edges",
           "histogramdd"]


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None,
             out_sharding: Any = None) -> Any:
    """How many times each non-negative integer occurs in `x` (or the sum of its weights).

    Args:
      x: a 1-D integer array; negative values count into bin 0, values past `length` are
        dropped (JAX's behaviour).
      weights: optional weights, shaped like `x`.
      minlength: the least number of bins.
      length: the static number of bins (needed under `jit`); default `max(x) + 1`.
      out_sharding: how the counts are laid out (their type split over Explicit axes).
    Returns:
      The counts (int, or the weights' dtype).
    """
    x = util.ensure_arraylike("bincount", x)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = core.concrete_or_error(
        operator.index, minlength,
        "The error occurred because of argument 'minlength' of jnp.bincount.")
    if length is None:
        concrete = core.concrete_or_error(
            np.asarray, x, "The error occurred because of argument 'x' of jnp.bincount. "
            "To avoid this error, pass a static `length` argument.")
        length = max(minlength, int(concrete.max()) + 1 if concrete.size else 0)
    else:
        length = core.concrete_dim(length, "The error occurred because of argument 'length' "
                                   "of jnp.bincount.")
    if weights is None:
        weights = np.array(1, dtype=dtypes.default_int_dtype())
    else:
        weights = util.ensure_arraylike("bincount", weights)
        if weights.shape != x.shape:
            raise ValueError("shape of weights must match shape of x.")
    zeros = array_creation.zeros(length, dtype=array_creation.asarray(weights).dtype)
    return zeros.at[selection.clip(x, 0)].add(weights, mode="drop", out_sharding=out_sharding)


def _edges_for(a: Any, bins: Any, range_: Any) -> Any:
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    if np.ndim(bins) == 1:
        return array_creation.asarray(bins, dtype=a.dtype)
    bins = core.concrete_or_error(operator.index, bins,
                                  "bins argument of histogram_bin_edges")
    if range_ is None:
        range_ = (reductions.min(a), reductions.max(a))
    elif np.shape(range_) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range_}")
    low, high = (array_creation.asarray(r, dtype=a.dtype) for r in range_)
    # An empty range widens to one unit, as NumPy's.
    same = ufuncs.equal(low, high)
    low = selection.where(same, low - 0.5, low)
    high = selection.where(same, high + 0.5, high)
    return array_creation.linspace(low, high, bins + 1, dtype=a.dtype)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None
                        ) -> Any:
    """The edges `histogram` uses: `bins + 1` evenly spaced points over `range` (default
    the data's min and max), or `bins` itself when it is an array.

    Args:
      a: the data (flattened).
      bins: the number of bins or the edges.
      range: `(low, high)`.
      weights: unused (NumPy's signature).
    Returns:
      The edges (inexact dtype).
    """
    del weights
    a = util.ensure_arraylike("histogram_bin_edges", a)
    [a] = util.promote_dtypes_inexact(shape_ops.ravel(a))
    return _edges_for(a, bins, range)


def _bin_index(values: Any, edges: Any) -> Any:
    """1 + the bin of each value (0: below, len(edges): above); the last edge belongs to
    the last bin."""
    index = sorting.searchsorted(edges, values, side="right")
    return selection.where(ufuncs.equal(values, edges[-1]), edges.shape[0] - 1, index)


def _weights(name: str, a: Any, weights: Any) -> tuple[Any, Any]:
    if weights is None:
        [a] = util.promote_dtypes_inexact(a)
        return a, array_creation.ones_like(a)
    weights = util.ensure_arraylike(name, weights)
    if np.shape(a) != np.shape(weights):
        raise ValueError("weights should have the same shape as a.")
    a, weights = util.promote_dtypes_inexact(a, weights)
    return a, weights


def histogram(a: Any, bins: Any = 10, range: Sequence[Any] | None = None,
              weights: Any = None, density: bool | None = None) -> tuple[Any, Any]:
    """A histogram of `a`.

    Args:
      a: the data (flattened).
      bins: the number of bins or the edges.
      range: `(low, high)`; values outside are not counted.
      weights: per-value weights.
      density: normalize so the histogram integrates to 1.
    Returns:
      `(counts, edges)`, counts of the inexact dtype.
    """
    a = util.ensure_arraylike("histogram", a)
    a, weights = _weights("histogram", a, weights)
    a, weights = shape_ops.ravel(a), shape_ops.ravel(weights)
    edges = _edges_for(a, bins, range)
    index = _bin_index(a, edges)
    counts = array_creation.zeros(edges.shape[0] + 1, weights.dtype).at[index].add(weights)
    counts = counts[1:-1]
    if density:
        widths = edges[1:] - edges[:-1]
        counts = counts / widths / reductions.sum(counts)
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: Any = None, density: bool | None = None) -> tuple[Any, list[Any]]:
    """A multi-dimensional histogram of `N` points in `D` dimensions.

    Args:
      sample: the points, shaped `(N, D)`.
      bins: the number of bins (one int, or one per dimension) or per-dimension edges.
      range: per-dimension `(low, high)` (or None entries).
      weights: per-point weights, shaped `(N,)`.
      density: normalize so the histogram integrates to 1.
    Returns:
      `(counts, edges)`: counts shaped by the bins, and the list of edges per dimension.
    """
    sample = util.ensure_arraylike("histogramdd", sample)
    if weights is None:
        [sample] = util.promote_dtypes_inexact(sample)
        # Unweighted counts are integers, as JAX's.
        weights = array_creation.ones(sample.shape[:1], dtype=dtypes.default_int_dtype())
    else:
        weights = util.ensure_arraylike("histogramdd", weights)
        if weights.shape != sample.shape[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = util.promote_dtypes_inexact(sample, weights)
    if sample.ndim != 2:
        raise ValueError("sample must be a 2-dimensional array of shape (N, D)")
    num_dims = sample.shape[1]
    if range is not None and (len(range) != num_dims
                              or not all(r is None or len(r) == 2 for r in range)):
        raise ValueError(f"For sample.shape={sample.shape}, range must be a sequence of "
                         f"{num_dims} pairs or Nones; got range={range}")
    per_dim_bins = bins if (isinstance(bins, (list, tuple)) or np.ndim(bins) > 1) \
        else [bins] * num_dims
    if len(per_dim_bins) != num_dims:
        raise ValueError("should be a bin for each dimension.")
    edges, flat_index, shape = [], 0, []
    for d in builtins.range(num_dims):
        edges_d = _edges_for(sample[:, d], per_dim_bins[d], None if range is None else range[d])
        edges.append(edges_d)
        shape.append(edges_d.shape[0] + 1)
        flat_index = flat_index * shape[-1] + _bin_index(sample[:, d], edges_d)
    counts = array_creation.zeros(int(np.prod(shape)), weights.dtype).at[flat_index].add(weights)
    counts = counts.reshape(shape)[tuple(slice(1, -1) for _ in builtins.range(num_dims))]
    if density:
        counts = counts / reductions.sum(counts)
        for d, edges_d in enumerate(edges):
            widths = edges_d[1:] - edges_d[:-1]
            counts = counts / widths.reshape([-1 if i == d else 1 for i in builtins.range(num_dims)])
    return counts, edges



def histogram2d(x: Any, y: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: Any = None, density: bool | None = None) -> tuple[Any, Any, Any]:
    """A 2-D histogram of the points `(x[i], y[i])`.

    Args:
      x, y: the coordinates, 1-D of equal length.
      bins: an int, a pair of ints, edges, or a pair of edges.
      range: `[(xlow, xhigh), (ylow, yhigh)]`.
      weights, density: as for `histogramdd`.
    Returns:
      `(counts, xedges, yedges)`.
    """
    x, y = util.ensure_arraylike("histogram2d", x, y)
    try:
        num_bins = len(bins)
    except TypeError:
        num_bins = 1
    if num_bins != 1 and num_bins != 2:
        bins = [bins, bins]
    sample = joining.stack([x, y], axis=1)
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, dtype: Any = None) -> Any:
    """The covariance matrix of the variables in the rows (or columns) of `m` (and `y`).

    Args:
      m: observations, one variable per row (`rowvar=True`) or column.
      y: more variables, stacked after `m`'s.
      rowvar: whether rows are variables.
      bias: normalize by N instead of N - 1.
      ddof: the delta degrees of freedom (overrides `bias`).
      fweights: integer frequency weights per observation.
      aweights: observation weights.
      dtype: the computation dtype.
    Returns:
      The `(V, V)` covariance (a scalar for one variable).
    """
    if y is not None:
        m, y = util.promote_args_inexact("cov", m, y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        [m] = util.promote_args_inexact("cov", m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = shape_ops.atleast_2d(m)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return array_creation.array([]).reshape(0, 0)
    if y is not None:
        y = shape_ops.atleast_2d(y)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = joining.concatenate((x, y), axis=0)
    if dtype is not None:
        x = x.astype(dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    weights = None
    if fweights is not None:
        fweights = util.ensure_arraylike("cov", fweights)
        if fweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fweights.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        weights = fweights
    if aweights is not None:
        aweights = util.ensure_arraylike("cov", aweights)
        if aweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aweights.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        weights = aweights if weights is None else weights * aweights
    avg, w_sum = reductions.average(x, axis=1, weights=weights, returned=True)
    w_sum = w_sum[0]
    if weights is None:
        f = x.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * reductions.sum(weights * aweights) / w_sum
    x = x - avg[:, None]
    x_t = x.T if weights is None else (x * weights).T
    return shape_ops.squeeze(tensor.matmul(x, ufuncs.conj(x_t)) / f)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Any:
    """Pearson correlation coefficients: `cov` normalized by the standard deviations.

    Args:
      x, y, rowvar, dtype: as for `cov`.
    Returns:
      The correlation matrix, entries clipped to [-1, 1].
    """
    util.check_arraylike("corrcoef", x)
    c = cov(x, y, rowvar, dtype=dtype)
    if np.shape(c) == ():
        return c / c
    stddev = ufuncs.sqrt(ufuncs.real(diagonals.diagonal(c))).astype(c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real_part = selection.clip(ufuncs.real(c), -1, 1)
    if dtypes.issubdtype(c.dtype, np.complexfloating):
        return lax.complex(real_part, selection.clip(ufuncs.imag(c), -1, 1))
    return real_part
