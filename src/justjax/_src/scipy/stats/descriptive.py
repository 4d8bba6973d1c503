"""`jax.scipy.stats.mode`, `rankdata` and `sem`: statistics of a sample, jitted as JAX
jits them (their options are static)."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.interpreters import batching
from justjax._src.lax import sorting as lax_sorting
from justjax._src.lax.control_flow import conditionals
from justjax._src.numpy import (array_creation, dtype_ops, joining, reductions,
                                selection, shape_ops, sorting, ufuncs, util)

__all__ = ["mode", "rankdata", "sem"]

NAN_POLICIES = ("propagate", "omit", "raise")
RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """`mode`'s result: the most frequent value and how often it occurs."""
    mode: Any
    count: Any


def _check_nan_policy(nan_policy: str, name: str) -> None:
    """JAX's errors: an unknown policy is a ValueError; 'omit' and 'raise' are not
    implemented (whether there are NaNs is not known while tracing)."""
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{name}` function.")


def _mode_shape(shape: tuple[int, ...], axis: int | None, keepdims: bool) -> tuple[int, ...]:
    """The result shape: `axis` (every axis when None) dropped, or kept as 1."""
    if keepdims:
        return tuple(1 if axis is None or i == axis else s for i, s in enumerate(shape))
    if axis is None:
        return ()
    return tuple(s for i, s in enumerate(shape) if i != axis)


def _mode_of_column(column: Any) -> tuple[Any, Any]:
    """The most frequent value of a 1-D array and its count (the smallest on ties)."""
    size = core.get_aval(column).shape[0]
    if size == 0:
        float_dtype = dtypes.default_float_dtype()
        return (array_creation.array(np.nan, dtype=float_dtype),
                array_creation.array(0, dtype=float_dtype))
    values, counts = sorting.unique(column, return_counts=True, size=size)
    return values[reductions.argmax(counts)], reductions.max(counts)


@util.jitted_as_in_jax(static_argnames=["axis", "nan_policy", "keepdims"])
def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along an axis (the smallest of those tied) and its count.

    Args:
      a: the sample.
      axis: the axis to reduce; None flattens first.
      nan_policy: only 'propagate' is supported.
      keepdims: keep the reduced axis as size 1.
    Returns:
      `ModeResult(mode, count)`; for an empty axis, NaN and 0 in the default float dtype.
    Raises:
      ValueError: for an unknown `nan_policy`.
      NotImplementedError: for 'omit' and 'raise'.
    """
    util.check_arraylike("mode", a)
    x = shape_ops.atleast_1d(a)
    _check_nan_policy(nan_policy, "mode")
    shape = core.get_aval(x).shape
    if axis is not None:
        axis = util.canonicalize_axis(axis, len(shape))
    out_shape = _mode_shape(shape, axis, keepdims)
    if axis is None:
        x = shape_ops.ravel(x)
        axis = 0
    x = shape_ops.moveaxis(x, axis, 0)
    moved = core.get_aval(x).shape
    x = shape_ops.reshape(x, (moved[0], math.prod(moved[1:])))
    values, counts = batching.vmap_positional(_mode_of_column, [1])(x)
    return ModeResult(shape_ops.reshape(values, out_shape), shape_ops.reshape(counts, out_shape))


def _invert_permutation(perm: Any) -> Any:
    """The inverse of a permutation of `0..n-1`."""
    size = core.get_aval(perm).shape[0]
    positions = array_creation.arange(size, dtype=core.get_aval(perm).dtype)
    return array_creation.empty_like(perm).at[perm].set(positions)


def _ranks(a: Any, method: str) -> Any:
    """The ranks of a 1-D array without NaNs, ties resolved by `method`."""
    size = core.get_aval(a).shape[0]
    out_dtype = dtypes.default_float_dtype()
    ordered, order = lax_sorting.sort_key_val(a, array_creation.arange(size))
    inverse = _invert_permutation(order)
    if method == "ordinal":
        return dtype_ops.astype(ufuncs.add(inverse, 1), out_dtype)
    # first[i]: whether the i-th smallest starts a run of equal values.
    first = joining.concatenate([array_creation.array([True]),
                                 ufuncs.not_equal(ordered[1:], ordered[:-1])])
    dense = reductions.cumsum(first)[inverse]
    if method == "dense":
        return dtype_ops.astype(dense, out_dtype)
    # starts[j]: how many values are smaller than the j-th distinct value (the last entry,
    # padded with `size`, is the total).
    starts = dtype_ops.astype(
        selection.nonzero(first, size=size + 1, fill_value=size)[0], out_dtype)
    if method == "max":
        return starts[dense]
    if method == "min":
        return ufuncs.add(starts[ufuncs.subtract(dense, 1)], 1)
    return ufuncs.multiply(0.5, ufuncs.add(ufuncs.add(starts[dense],
                                                      starts[ufuncs.subtract(dense, 1)]), 1))


@util.jitted_as_in_jax(static_argnames=["method", "axis", "nan_policy"])
def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """The ranks (from 1) of the values of `a`, as `scipy.stats.rankdata`.

    Args:
      a: the sample.
      method: how ties are ranked: 'average', 'min', 'max', 'dense' or 'ordinal'.
      axis: rank along this axis; None ranks the flattened array.
      nan_policy: only 'propagate' is supported (a slice with a NaN ranks as all NaN).
    Returns:
      An array of the default float dtype: `a`'s shape with an axis, else flat.
    Raises:
      ValueError: for an unknown `nan_policy` or `method`.
      NotImplementedError: for 'omit' and 'raise'.
    """
    util.check_arraylike("rankdata", a)
    _check_nan_policy(nan_policy, "rankdata")
    if method not in RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return _rank_along(a, method, axis)
    a = shape_ops.ravel(a)
    out_dtype = dtypes.default_float_dtype()
    return conditionals.cond(reductions.any(ufuncs.isnan(a)),
                             lambda v: array_creation.full_like(v, np.nan, out_dtype),
                             lambda v: _ranks(v, method), a)


def _rank_along(a: Any, method: str, axis: int) -> Any:
    """`rankdata` of every 1-D slice along `axis` (JAX's `apply_along_axis`)."""
    a = array_creation.asarray(a)
    shape = core.get_aval(a).shape
    axis = util.canonicalize_axis(axis, len(shape))
    moved = shape_ops.moveaxis(a, axis, -1)
    rows = shape_ops.reshape(moved, (-1, shape[axis]))
    ranked = batching.vmap_positional(lambda row: rankdata(row, method), [0])(rows)
    ranked = shape_ops.reshape(ranked, core.get_aval(moved).shape)
    return shape_ops.moveaxis(ranked, -1, axis)


@util.jitted_as_in_jax(static_argnames=["axis", "nan_policy", "keepdims"])
def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean, `std(a, ddof) / sqrt(count)`.

    Args:
      a: the sample.
      axis: the axis to reduce; None reduces all.
      ddof: the delta degrees of freedom of the standard deviation.
      nan_policy: 'propagate', or 'omit' to leave NaNs out (of the count too).
      keepdims: keep the reduced axis as size 1.
    Returns:
      An array of `a`'s promoted inexact dtype.
    Raises:
      ValueError: for another `nan_policy`.
    """
    [b] = util.promote_args_inexact("sem", a)
    dtype = core.get_aval(b).dtype
    if nan_policy == "propagate":
        shape = core.get_aval(b).shape
        size = math.prod(shape) if axis is None else shape[axis]
        std = reductions.std(b, axis, ddof=ddof, keepdims=keepdims)
        return ufuncs.true_divide(std, dtype_ops.astype(ufuncs.sqrt(size), dtype))
    if nan_policy == "omit":
        count = reductions.sum(ufuncs.logical_not(ufuncs.isnan(b)), axis, keepdims=keepdims)
        std = reductions.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
        return ufuncs.true_divide(std, dtype_ops.astype(ufuncs.sqrt(count), dtype))
    raise ValueError(f"{nan_policy} is not supported")
