"""Op records for jax.numpy sorting and searching, and the order statistics built on them
(quantile, percentile, median and their NaN-ignoring forms)."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

import justjax.numpy as jnp
from tests.harness import (BF16, BOOL, C64, F16, F32, I8, I32, U8, U32, OpRecord, rand_default,
                           rand_special)
from tests.records.jnp_reductions import (F32_DT, I32_DT, _float, _int32, _same, _wide,
                                          rand_distinct, rand_with_nans, widened)

SHAPES_ANY = [[(5,)], [(2, 3)], [(2, 3, 4)]]
SHAPES_2D = [[(2, 3)], [(3, 4, 2)]]
SORTABLE = (F32, F16, BF16, I32, I8, U8, U32, BOOL)


def rec(name: str, fun: Callable, reference: Callable, shapes: list, dtypes: tuple,
        make_args: Any = rand_default, **kwargs: Any) -> OpRecord:
    return OpRecord(f"jnp_{name}", fun, reference, shapes, dtypes, make_args,
                    differentiable=False, **kwargs)


def rand_sorted(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Sorted values with repeats (NaNs last, as in JAX's and NumPy's total order)."""
    values = rand_default(rng, shape, dtype)
    if dtype in (F32, F16):
        values = np.round(values).astype(dtype)
    return np.sort(values, axis=-1)


def rand_special_sorted(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    return np.sort(rand_special(rng, shape, dtype), axis=-1)


def rand_queries(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Queries that often equal a sorted element (so left and right searches differ)."""
    values = rand_default(rng, shape, dtype)
    if dtype in (F32, F16):
        values = np.round(values * 2) / 2
    return values.astype(dtype)


def rand_quantiles(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Quantiles in [0, 1] whose positions never fall exactly half-way between elements."""
    return rng.choice(np.array([0.0, 0.13, 0.3, 0.62, 0.81, 1.0]), size=shape).astype(dtype)


def rand_percentiles(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    return (rand_quantiles(rng, shape, dtype) * 100).astype(dtype)


def _partition_reference(x: np.ndarray, kth: int, axis: int = -1) -> np.ndarray:
    """JAX's layout: the kth + 1 smallest in order, then the rest largest first."""
    s = np.moveaxis(np.sort(x, axis=axis), axis, -1)
    kth = kth % s.shape[-1]
    out = np.concatenate([s[..., :kth + 1], s[..., kth + 1:][..., ::-1]], axis=-1)
    return np.moveaxis(out, -1, axis)


def _argpartition_reference(x: np.ndarray, kth: int, axis: int = -1) -> np.ndarray:
    """JAX's layout: the indices of the kth + 1 smallest in order, then the other indices in
    increasing order."""
    order = np.moveaxis(np.argsort(x, axis=axis, kind="stable"), axis, -1)
    kth = kth % order.shape[-1]
    rest = np.sort(order[..., kth + 1:], axis=-1)
    return np.moveaxis(np.concatenate([order[..., :kth + 1], rest], axis=-1), -1, axis)


def _searchsorted(a: np.ndarray, v: np.ndarray, side: str = "left", **_: Any) -> np.ndarray:
    common = np.promote_types(a.dtype, v.dtype)
    return np.searchsorted(a.astype(common), v.astype(common), side=side).astype(np.int32)


def _quiet(fn: Callable) -> Callable:
    def reference(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args, **kwargs)
    return reference


def _nan_rows_to_nan(fn: Callable) -> Callable:
    """`fn` (a NumPy quantile) with NaN wherever the reduced input holds a NaN (JAX's rule)."""
    def reference(x: np.ndarray, *args: Any, axis: Any = None, keepdims: bool = False,
                  **kwargs: Any) -> np.ndarray:
        result = fn(_wide(x), *args, axis=axis, keepdims=keepdims, **kwargs)
        has_nan = np.any(np.isnan(_wide(x)), axis=axis, keepdims=keepdims)
        return np.where(has_nan, np.nan, result)
    return reference


def _sort_reference(x: np.ndarray, axis: Any = -1, stable: bool = True,
                    descending: bool = False) -> np.ndarray:
    result = np.sort(x, axis=axis)
    if descending:
        result = np.flip(result, axis=0 if axis is None else axis)
    return result


def _argsort_reference(x: np.ndarray, axis: Any = -1, stable: bool = True,
                       descending: bool = False) -> np.ndarray:
    if descending:
        # Stable descending keeps equal elements in their original order.
        return np.argsort(-_wide(x).astype(np.float64) if x.dtype != BOOL else ~x, axis=axis,
                          kind="stable")
    return np.argsort(x, axis=axis, kind="stable")


QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")

RECORDS = [
    rec("sort", jnp.sort, np.sort, SHAPES_ANY, SORTABLE + (C64,), expected_dtype=_same),
    rec("sort_special", jnp.sort, np.sort, SHAPES_ANY, (F32, F16), rand_special),
    rec("sort_axis0", jnp.sort, _sort_reference, SHAPES_2D, (F32, I32), static={"axis": 0}),
    rec("sort_axis_none", jnp.sort, _sort_reference, SHAPES_2D, (F32,), static={"axis": None}),
    rec("sort_descending", jnp.sort, _sort_reference, SHAPES_ANY, (F32, U8),
        static={"descending": True}),
    rec("sort_unstable", jnp.sort, _sort_reference, SHAPES_2D, (I32,),
        static={"stable": False, "axis": 1}),
    rec("argsort", jnp.argsort, _argsort_reference, SHAPES_ANY, SORTABLE,
        expected_dtype=_int32),
    rec("argsort_ties", jnp.argsort, _argsort_reference, SHAPES_2D, (I8, BOOL),
        static={"axis": 0}, expected_dtype=_int32),
    rec("argsort_descending", jnp.argsort, _argsort_reference, SHAPES_ANY, (F32, I8, BOOL),
        static={"descending": True}, expected_dtype=_int32),
    rec("argsort_axis_none", jnp.argsort, _argsort_reference, SHAPES_2D, (F32,),
        rand_distinct, static={"axis": None, "stable": False}, expected_dtype=_int32),
    rec("argsort_dtype", lambda x: jnp.argsort(x, dtype=jnp.int8),
        lambda x: np.argsort(x, kind="stable"), [[(6,)]], (F32,),
        expected_dtype=lambda d: np.dtype(np.int8)),
    rec("lexsort", lambda a, b: jnp.lexsort((a, b)), lambda a, b: np.lexsort((a, b)),
        [[(8,), (8,)], [(2, 6), (2, 6)]], [(I32, I32), (F32, I8)],
        lambda r, s, d: r.integers(0, 3, s).astype(d), expected_dtype=_int32),
    rec("lexsort_axis0", lambda a, b, c: jnp.lexsort((a, b, c), axis=0),
        lambda a, b, c: np.lexsort((a, b, c), axis=0), [[(6, 2), (6, 2), (6, 2)]], (I32,),
        lambda r, s, d: r.integers(0, 2, s).astype(d), expected_dtype=_int32),
    rec("sort_complex", jnp.sort_complex, np.sort_complex, SHAPES_ANY, (F32, C64),
        expected_dtype=lambda d: np.dtype(np.complex64)),
    rec("partition", jnp.partition, _partition_reference, [[(7,)], [(3, 5)]], (F32, I32, U8),
        rand_distinct, static={"kth": 2}, expected_dtype=_same),
    rec("partition_axis0", jnp.partition, _partition_reference, [[(5, 3)], [(4, 2, 3)]],
        (F32, U8), rand_distinct, static={"kth": -2, "axis": 0}),
    rec("argpartition", jnp.argpartition, _argpartition_reference, [[(7,)], [(3, 5)]],
        (F32, I32), rand_distinct, static={"kth": 3}, expected_dtype=_int32),
    rec("argpartition_axis", jnp.argpartition, _argpartition_reference,
        [[(5, 3)], [(2, 4, 3)]], (F32, U8), rand_distinct, static={"kth": 1, "axis": -2},
        expected_dtype=_int32),
    rec("argpartition_3d", jnp.argpartition, _argpartition_reference, [[(2, 3, 5)]], (F32,),
        rand_distinct, static={"kth": 0}, expected_dtype=_int32),

    *[rec(f"searchsorted_{method}_{side}",
          lambda a, v, side=side, method=method: jnp.searchsorted(a, v, side=side,
                                                                  method=method),
          lambda a, v, side=side: _searchsorted(a, v, side),
          [[(7,), (4,)], [(1,), (2, 3)], [(6,), ()], [(0,), (3,)]],
          [(F32, F32), (U8, U8), (I32, F32)], [rand_sorted, rand_queries],
          expected_dtype=_int32)
      for method in ("scan", "compare_all", "sort") for side in ("left", "right")],
    rec("searchsorted_scan_unrolled", lambda a, v: jnp.searchsorted(a, v, side="right",
                                                                    method="scan_unrolled"),
        lambda a, v: _searchsorted(a, v, "right"), [[(8,), (5,)]], [(F16, F16), (I32, I32)],
        [rand_sorted, rand_queries], expected_dtype=_int32),
    *[rec(f"searchsorted_special_{method}",
          lambda a, v, method=method: jnp.searchsorted(a, v, method=method),
          lambda a, v: _searchsorted(a, v), [[(9,), (12,)]], (F32,),
          [rand_special_sorted, rand_special], expected_dtype=_int32)
      for method in ("scan", "compare_all", "sort")],
    rec("searchsorted_sorter", lambda a, v: jnp.searchsorted(a, v, sorter=jnp.argsort(a)),
        lambda a, v: np.searchsorted(a, v, sorter=np.argsort(a, kind="stable")),
        [[(6,), (4,)]], (F32, I32), [rand_queries, rand_queries], expected_dtype=_int32),
    rec("searchsorted_complex", lambda a, v: jnp.searchsorted(a, v, method="compare_all"),
        _searchsorted, [[(6,), (4,)]], (C64,), [lambda r, s, d: np.sort_complex(
            np.round(rand_default(r, s, d))).astype(d), rand_default], expected_dtype=_int32),
    rec("digitize", jnp.digitize, np.digitize, [[(6,), (4,)], [(2, 3), (3,)]],
        [(F32, F32), (I32, I32)], [rand_queries, rand_sorted], expected_dtype=_int32),
    rec("digitize_right", jnp.digitize, np.digitize, [[(6,), (4,)]], (F32,),
        [rand_queries, rand_sorted], static={"right": True}, expected_dtype=_int32),
    rec("digitize_decreasing", lambda x, b: jnp.digitize(x, b[::-1], method="compare_all"),
        lambda x, b: np.digitize(x, b[::-1]), [[(6,), (4,)]], (F32,),
        [rand_queries, rand_sorted], expected_dtype=_int32),

    # Order statistics (NaN wherever a reduced input is NaN).
    *[rec(f"quantile_{method}", lambda x, q, method=method: jnp.quantile(x, q, method=method),
          lambda x, q, method=method: _nan_rows_to_nan(np.quantile)(x, q, method=method),
          [[(7,), ()], [(2, 5), (3,)]], [(F32, F32), (I32, F32)],
          [rand_default, rand_quantiles], expected_dtype=_float)
      for method in QUANTILE_METHODS],
    rec("quantile_axis", lambda x, q: jnp.quantile(x, q, axis=1, keepdims=True),
        lambda x, q: np.quantile(_wide(x), q, axis=1, keepdims=True), [[(3, 6), (2,)]],
        [(F32, F32), (F16, F32)], [rand_default, rand_quantiles], expected_dtype=_same),
    rec("quantile_axis_tuple", lambda x: jnp.quantile(x, 0.3, axis=(0, 2)),
        lambda x: np.quantile(_wide(x), 0.3, axis=(0, 2)), [[(2, 3, 4)]], (F32,)),
    rec("quantile_nan", lambda x: jnp.quantile(x, 0.62, axis=0),
        lambda x: _nan_rows_to_nan(np.quantile)(x, 0.62, axis=0), [[(6, 4)]], (F32,),
        rand_with_nans),
    rec("quantile_inverted_cdf_keepdims",
        lambda x, q: jnp.quantile(x, q, axis=0, method="inverted_cdf", keepdims=True),
        lambda x, q: np.quantile(x, q, axis=0, method="inverted_cdf", keepdims=True),
        [[(6, 3), (2,)]], (F32,), [rand_default, rand_quantiles]),
    rec("quantile_weights", lambda x, w: jnp.quantile(x, 0.62, axis=1, weights=w,
                                                      method="inverted_cdf"),
        lambda x, w: np.quantile(x, 0.62, axis=1, weights=w, method="inverted_cdf"),
        [[(3, 5), (3, 5)], [(3, 5), (5,)]], (F32,),
        [rand_default, lambda r, s, d: r.integers(1, 4, s).astype(d)]),
    rec("percentile", lambda x, q: jnp.percentile(x, q, axis=-1),
        lambda x, q: np.percentile(_wide(x), q, axis=-1), [[(2, 5), ()], [(4,), (3,)]],
        [(F32, F32), (I32, I32)], [rand_default, rand_percentiles], expected_dtype=_float),
    rec("median", jnp.median, widened(np.median), SHAPES_ANY, (F32, I32, BF16),
        expected_dtype=_float),
    rec("median_axis", jnp.median, widened(np.median), SHAPES_2D, (F32,),
        static={"axis": 0, "keepdims": True}),
    rec("median_nan", jnp.median, lambda x, axis: np.median(x, axis=axis), [[(5, 3)]], (F32,),
        rand_with_nans, static={"axis": 0}),
    rec("nanquantile", lambda x, q: jnp.nanquantile(x, q, axis=0),
        lambda x, q: _quiet(np.nanquantile)(_wide(x), q, axis=0), [[(6, 4), ()],
                                                                    [(7, 2), (3,)]],
        [(F32, F32)], [rand_with_nans, rand_quantiles]),
    *[rec(f"nanquantile_{method}",
          lambda x, method=method: jnp.nanquantile(x, 0.3, axis=1, method=method,
                                                   keepdims=True),
          lambda x, method=method: _quiet(np.nanquantile)(x, 0.3, axis=1, method=method,
                                                          keepdims=True),
          [[(4, 6)]], (F32,), rand_with_nans)
      for method in ("lower", "higher", "midpoint", "inverted_cdf")],
    rec("nanpercentile", lambda x: jnp.nanpercentile(x, 62.0),
        lambda x: _quiet(np.nanpercentile)(x, 62.0), [[(8,)], [(2, 4)]], (F32,),
        rand_with_nans),
    rec("nanmedian", jnp.nanmedian, _quiet(np.nanmedian), [[(7,)], [(3, 4)]], (F32,),
        rand_with_nans, static={"axis": -1}),
]



def _padded_unique(x: np.ndarray, size: int, fill: Any, **kwargs: Any) -> Any:
    """np.unique's values (and counts) padded with `fill` (counts with 0) or cut to `size`."""
    values, counts = np.unique(x, return_counts=True)
    pad = max(size - len(values), 0)
    values = np.concatenate([values, np.full(pad, fill, values.dtype)])[:size]
    if kwargs.get("return_counts"):
        return values, np.concatenate([counts, np.zeros(pad, counts.dtype)])[:size]
    return values


RECORDS += [
    rec("unique_size", lambda x: jnp.unique(x, size=6, fill_value=-9),
        lambda x: _padded_unique(x, 6, -9), [[(8,)], [(2, 5)], [(3,)]], (F32, I32, I8),
        lambda r, s, d: r.integers(0, 5, s).astype(d)),
    rec("unique_counts_size", lambda x: jnp.unique(x, size=4, fill_value=0,
                                                   return_counts=True),
        lambda x: _padded_unique(x, 4, 0, return_counts=True), [[(9,)]], (I32, U8),
        lambda r, s, d: r.integers(1, 4, s).astype(d),
        expected_dtype=lambda d: (d, I32_DT)),
]

del F32_DT
