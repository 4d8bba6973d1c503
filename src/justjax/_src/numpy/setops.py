"""Set operations on 1-D arrays: `isin`, `union1d`, `intersect1d`, `setdiff1d`, `setxor1d`.

Every result is sorted and unique. A set's size depends on the values, so under `jit` a
static `size=` is needed: the result is then padded with `fill_value` (or truncated), as in
JAX. Without `size` the inputs must be concrete, and the same code runs with the full
length and is cut to the count found.
"""
from __future__ import annotations

from typing import Any

from justjax._src.core import core
from justjax._src.numpy import (array_creation, joining, reductions, selection, shape_ops,
                                sorting, ufuncs, util)

__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d"]

_ISIN_METHODS = ("compare_all", "binary_search", "sort", "auto")
# Above this many comparisons, `isin(method="auto")` sorts instead of comparing all pairs.
_COMPARE_ALL_LIMIT = 1 << 16


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, method: str = "auto") -> Any:
    """Whether each element of `element` is in `test_elements`.

    Args:
      element: the values to look up (any shape).
      test_elements: the set (flattened).
      assume_unique: unused (the result is the same either way).
      invert: return the negation.
      method: `"compare_all"` (all pairs), `"binary_search"` / `"sort"` (sorted lookup) or
        `"auto"`; all give the same result.
    Returns:
      A boolean array shaped like `element`.
    """
    del assume_unique
    element, test_elements = util.ensure_arraylike("isin", element, test_elements)
    if method not in _ISIN_METHODS:
        raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                         "'binary_search', 'sort', and 'auto'")
    flat, tests = shape_ops.ravel(element), shape_ops.ravel(test_elements)
    if method == "auto":
        method = "compare_all" if flat.size * tests.size <= _COMPARE_ALL_LIMIT else "sort"
    if tests.size == 0:
        found = array_creation.zeros(flat.shape, dtype=bool)
    elif method == "compare_all":
        found = reductions.any(ufuncs.equal(flat[:, None], tests[None, :]), axis=-1)
    else:
        ordered = sorting.sort(tests)
        where = selection.clip(sorting.searchsorted(ordered, flat), 0, tests.size - 1)
        found = ufuncs.equal(ordered[where], flat)
    found = found.reshape(element.shape)
    return ufuncs.logical_not(found) if invert else found


def _concrete_inputs(name: str, *arrays: Any) -> list[Any]:
    hint = (f"The error arose in {name}(). When jit-compiling jnp.{name}(), the size "
            "argument must be specified statically.")
    return [core.concrete_or_error(lambda x: x, a, hint) for a in arrays]


def _sorted_firsts(arr: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    """`arr` sorted (stably), the permutation, and which entries start a run of equal ones."""
    perm = sorting.argsort(arr, stable=True)
    ordered = arr[perm]
    if assume_unique or arr.size == 0:
        return ordered, perm, array_creation.ones(arr.shape, dtype=bool)
    firsts = joining.concatenate([array_creation.ones((1,), dtype=bool),
                                  ufuncs.not_equal(ordered[1:], ordered[:-1])])
    return ordered, perm, firsts


def _select(values: Any, keep: Any, size: int | None, fill_value: Any,
            default_fill: Any) -> tuple[Any, Any]:
    """The kept entries of `values` (in order) padded to `size` with `fill_value` (or
    `default_fill`), and their positions (padded with `values.size`). Without `size`, the
    concrete count decides the length."""
    count = reductions.sum(keep)
    length = int(count) if size is None else size
    (positions,) = selection.nonzero(keep, size=length, fill_value=values.size)
    valid = array_creation.arange(length) < count
    picked = values[selection.clip(positions, 0, max(values.size - 1, 0))]
    fill = default_fill(picked) if fill_value is None else fill_value
    fill = array_creation.asarray(fill, dtype=values.dtype)
    return selection.where(valid, picked, fill), positions


def _first_or_zero(picked: Any) -> Any:
    return picked[0] if picked.size else 0


def _prepare(name: str, ar1: Any, ar2: Any, size: Any) -> tuple[Any, Any, int | None]:
    arr1, arr2 = util.ensure_arraylike(name, ar1, ar2)
    arr1, arr2 = util.promote_dtypes(shape_ops.ravel(arr1), shape_ops.ravel(arr2))
    if size is None:
        arr1, arr2 = _concrete_inputs(name, arr1, arr2)
    else:
        size = core.concrete_dim(size, f"size argument of jnp.{name}")
    return arr1, arr2, size


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values in either array.

    Args:
      ar1, ar2: the inputs (flattened).
      size: static length of the result; padded with `fill_value` (default: the smallest
        value) or truncated.
      fill_value: the padding.
    Returns:
      The union.
    """
    arr1, arr2, size = _prepare("union1d", ar1, ar2, size)
    both = joining.concatenate([arr1, arr2])
    return sorting.unique(both, size=size, fill_value=fill_value)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The sorted unique values of `ar1` that are not in `ar2`.

    Args:
      ar1, ar2: the inputs (flattened).
      assume_unique: `ar1` has no duplicates (its order is then kept).
      size: static length of the result, padded with `fill_value` (default 0).
      fill_value: the padding.
    Returns:
      The difference.
    """
    arr1, arr2, size = _prepare("setdiff1d", ar1, ar2, size)
    if assume_unique:
        values, firsts = arr1, array_creation.ones(arr1.shape, dtype=bool)
    else:
        values, _, firsts = _sorted_firsts(arr1, False)
    keep = ufuncs.logical_and(firsts, isin(values, arr2, invert=True))
    result, _ = _select(values, keep, size, fill_value, lambda _: 0)
    return result


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted unique values in exactly one of the arrays.

    Args:
      ar1, ar2: the inputs (flattened).
      assume_unique: both inputs have no duplicates.
      size: static length of the result, padded with `fill_value` (default: the smallest
        value of the result).
      fill_value: the padding.
    Returns:
      The symmetric difference.
    """
    arr1, arr2, size = _prepare("setxor1d", ar1, ar2, size)
    sorted1, _, firsts1 = _sorted_firsts(arr1, assume_unique)
    sorted2, _, firsts2 = _sorted_firsts(arr2, assume_unique)
    keep1 = ufuncs.logical_and(firsts1, isin(sorted1, arr2, invert=True))
    keep2 = ufuncs.logical_and(firsts2, isin(sorted2, arr1, invert=True))
    values = joining.concatenate([sorted1, sorted2])
    keep = joining.concatenate([keep1, keep2])
    # Kept values first, in sorted order.
    order = sorting.lexsort([values, ufuncs.logical_not(keep)])
    result, _ = _select(values[order], keep[order], size, fill_value, _first_or_zero)
    return result


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values in both arrays.

    Args:
      ar1, ar2: the inputs (flattened).
      assume_unique: both inputs have no duplicates.
      return_indices: also return where each value first occurs in `ar1` and `ar2`.
      size: static length of the result, padded with `fill_value` (default: the smallest
        value of the result); padded indices are the inputs' sizes.
      fill_value: the padding.
    Returns:
      The intersection, or `(values, indices1, indices2)`.
    """
    arr1, arr2, size = _prepare("intersect1d", ar1, ar2, size)
    sorted1, perm1, firsts1 = _sorted_firsts(arr1, assume_unique)
    keep = ufuncs.logical_and(firsts1, isin(sorted1, arr2))
    result, positions = _select(sorted1, keep, size, fill_value, _first_or_zero)
    if not return_indices:
        return result
    padded = positions >= sorted1.size
    in_ar1 = selection.where(padded, arr1.size,
                             perm1[selection.clip(positions, 0, max(arr1.size - 1, 0))])
    sorted2, perm2, _ = _sorted_firsts(arr2, assume_unique)
    # A stable sort puts the first occurrence first among equal values.
    first2 = selection.clip(sorting.searchsorted(sorted2, result), 0, max(arr2.size - 1, 0))
    in_ar2 = selection.where(padded, arr2.size, perm2[first2])
    return result, in_ar1, in_ar2

