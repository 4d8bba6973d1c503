"""Op records for jax.numpy's reductions, argmax/argmin, NaN-ignoring and cumulative reductions.

References run in NumPy at full precision (float64) on the same inputs; integer sums use
the result dtype JAX gives (so overflow wraps alike). `expected_dtype` states JAX's result
dtype for each input dtype (checked against real JAX, see tests/test_jnp_reductions.py).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import justjax.numpy as jnp
from tests.harness import (BF16, BOOL, C64, F16, F32, I32, I8, U32, U8, OpRecord, rand_default,
                           rand_positive, widen)

SHAPES_ANY = [[(5,)], [(2, 3, 4)]]
SHAPES_2D = [[(2, 3)], [(2, 3, 4)]]
SHAPES_3D = [[(2, 3, 4)]]
ALL_DTYPES = (F32, F16, BF16, I32, I8, U8, U32, BOOL)
NUMERIC = (F32, F16, BF16, I32, I8, U8)
FLOATS = (F32, F16, BF16)

I32_DT = np.dtype(np.int32)
U32_DT = np.dtype(np.uint32)
F32_DT = np.dtype(np.float32)


def _sum_dtype(dtype: np.dtype, *rest: np.dtype) -> np.dtype:
    """jnp.sum/prod: bool and narrow ints widen to the default (u)int; others keep theirs."""
    if dtype == BOOL or dtype in (I8,):
        return I32_DT
    if dtype == U8:
        return U32_DT
    return np.dtype(dtype)


def _same(dtype: np.dtype, *rest: np.dtype) -> np.dtype:
    return np.dtype(dtype)


def _float(dtype: np.dtype, *rest: np.dtype) -> np.dtype:
    """Means and variances: floats keep their type, integers and bools become float32."""
    return np.dtype(dtype) if dtype in (F32, F16, BF16, C64) else F32_DT


def _real_float(dtype: np.dtype, *rest: np.dtype) -> np.dtype:
    return F32_DT if dtype == C64 else _float(dtype)


def _int32(*dtypes: np.dtype) -> np.dtype:
    return I32_DT


def _bool(*dtypes: np.dtype) -> np.dtype:
    return np.dtype(bool)


def _cumsum_dtype(dtype: np.dtype, *rest: np.dtype) -> np.dtype:
    """jnp.cumsum keeps narrow integer types; only bool widens."""
    return I32_DT if dtype == BOOL else np.dtype(dtype)


def _wide(x: np.ndarray) -> np.ndarray:
    return widen(x)

def widened(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` applied to the inputs in full precision (integers and bools unchanged)."""
    return lambda *args, **kwargs: fn(*[_wide(a) for a in args], **kwargs)


def _integer_sum(fn: Callable, promote: Callable = _sum_dtype) -> Callable:
    """NumPy's sum/prod computed in JAX's result dtype, so integer overflow wraps alike."""
    def reference(x: np.ndarray, **kwargs: Any) -> np.ndarray:
        if x.dtype.kind in "biu":
            return fn(x, dtype=promote(x.dtype), **kwargs)
        return fn(_wide(x), **kwargs)
    return reference


def rand_mask(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A boolean `where=` mask, about two thirds True."""
    return rng.random(shape) < 0.67


def rand_with_nans(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Default values with about a third replaced by NaN (floats only)."""
    values = rand_default(rng, shape, dtype)
    if dtype in (F32, F16, BF16):
        values = np.where(rng.random(shape) < 0.35, np.array(np.nan, dtype), values)
    return values


def rand_distinct(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Distinct values (a permutation), so arg-reductions have one answer."""
    size = int(np.prod(shape))
    return (rng.permutation(size) - size // 2).reshape(shape).astype(dtype)


def rec(name: str, fun: Callable, reference: Callable, shapes: list, dtypes: tuple,
        make_args: Any = rand_default, **kwargs: Any) -> OpRecord:
    return OpRecord(f"jnp_{name}", fun, reference, shapes, dtypes, make_args, **kwargs)


def _masked_max(x: np.ndarray, m: np.ndarray, axis: Any = None) -> np.ndarray:
    return np.max(_wide(x), axis=axis, where=m, initial=-1.0 if x.dtype != BOOL else False)


RECORDS = [
    # sum / prod with every dtype and axis form.
    rec("sum", jnp.sum, _integer_sum(np.sum), SHAPES_ANY, ALL_DTYPES,
        expected_dtype=_sum_dtype),
    rec("sum_axis0", jnp.sum, _integer_sum(np.sum), SHAPES_ANY, NUMERIC,
        static={"axis": 0}, expected_dtype=_sum_dtype),
    rec("sum_axis_neg_keepdims", jnp.sum, _integer_sum(np.sum), SHAPES_2D, ALL_DTYPES,
        static={"axis": -1, "keepdims": True}, expected_dtype=_sum_dtype),
    rec("sum_axis_tuple", jnp.sum, _integer_sum(np.sum), SHAPES_3D, NUMERIC,
        static={"axis": (0, -1)}, expected_dtype=_sum_dtype),
    rec("sum_no_promote", lambda x: jnp.sum(x, axis=1, promote_integers=False),
        lambda x: np.sum(x, axis=1, dtype=x.dtype), SHAPES_2D, (I8, U8, I32),
        expected_dtype=_same),
    # A float16 result is far too coarse for finite differences.
    rec("sum_dtype", lambda x: jnp.sum(x, axis=0, dtype=jnp.float16),
        lambda x: np.sum(_wide(x), axis=0), SHAPES_2D, (F32, I32),
        expected_dtype=lambda d: np.dtype(np.float16), differentiable=False),
    rec("sum_where", lambda x, m: jnp.sum(x, axis=0, where=m),
        lambda x, m: _integer_sum(np.sum)(x, axis=0, where=m), [[(2, 3), (2, 3)], [(4,), (4,)]],
        [(F32, BOOL), (I8, BOOL), (BOOL, BOOL)], [rand_default, rand_mask],
        expected_dtype=_sum_dtype),
    rec("sum_where_broadcast", lambda x, m: jnp.sum(x, where=m),
        lambda x, m: np.sum(_wide(x), where=m), [[(2, 3), (3,)]], [(F32, BOOL)],
        [rand_default, rand_mask]),
    rec("sum_initial", jnp.sum, lambda x, **kw: _integer_sum(np.sum)(x, **kw), SHAPES_2D,
        (F32, I32), static={"axis": 1, "initial": 3}, expected_dtype=_sum_dtype),
    rec("sum_complex", jnp.sum, np.sum, SHAPES_2D, (C64,), static={"axis": 0}),
    rec("prod", jnp.prod, _integer_sum(np.prod), SHAPES_ANY, ALL_DTYPES,
        expected_dtype=_sum_dtype),
    rec("prod_axis_keepdims", jnp.prod, _integer_sum(np.prod), SHAPES_2D, (F32, I8, BOOL),
        static={"axis": 0, "keepdims": True}, expected_dtype=_sum_dtype),
    rec("prod_where", lambda x, m: jnp.prod(x, axis=1, where=m),
        lambda x, m: _integer_sum(np.prod)(x, axis=1, where=m), [[(2, 3), (2, 3)]],
        [(F32, BOOL), (I32, BOOL)], [rand_default, rand_mask], expected_dtype=_sum_dtype),

    # Extrema keep the input dtype.
    rec("max", jnp.max, widened(np.max), SHAPES_ANY, ALL_DTYPES, expected_dtype=_same),
    rec("max_axis", jnp.max, widened(np.max), SHAPES_2D, ALL_DTYPES,
        static={"axis": -1, "keepdims": True}, expected_dtype=_same),
    rec("max_axis_tuple", jnp.max, widened(np.max), SHAPES_3D, NUMERIC,
        static={"axis": (1, 2)}, expected_dtype=_same),
    rec("max_nan", jnp.max, np.max, SHAPES_2D, (F32,), rand_with_nans, static={"axis": 0}),
    rec("max_initial", jnp.max, widened(np.max), SHAPES_2D, (F32, I32),
        static={"axis": 1, "initial": 1}, expected_dtype=_same),
    rec("max_where", lambda x, m: jnp.max(x, axis=0, where=m, initial=-1),
        lambda x, m: _masked_max(x, m, axis=0), [[(2, 3), (2, 3)]], [(F32, BOOL), (I8, BOOL)],
        [rand_default, rand_mask], expected_dtype=_same),
    rec("min", jnp.min, widened(np.min), SHAPES_ANY, ALL_DTYPES, expected_dtype=_same),
    rec("min_axis", jnp.min, widened(np.min), SHAPES_2D, NUMERIC, static={"axis": 0},
        expected_dtype=_same),
    rec("min_where", lambda x, m: jnp.min(x, where=m, initial=9),
        lambda x, m: np.min(_wide(x), where=m, initial=9), [[(2, 3), (2, 3)]],
        [(F32, BOOL), (U8, BOOL)], [rand_default, rand_mask], expected_dtype=_same),
    rec("amax", jnp.amax, widened(np.max), SHAPES_2D, (F32, I32), static={"axis": 1}),
    rec("amin", jnp.amin, widened(np.min), SHAPES_2D, (F32, I32), static={"axis": 0}),
    rec("ptp", jnp.ptp, widened(np.ptp), SHAPES_ANY, (F32, I32, F16), expected_dtype=_same),
    rec("ptp_axis", jnp.ptp, widened(np.ptp), SHAPES_2D, (F32,),
        static={"axis": 1, "keepdims": True}),

    # Logical reductions.
    rec("all", jnp.all, np.all, SHAPES_ANY, (BOOL, F32, I32, C64), expected_dtype=_bool),
    rec("all_axis", jnp.all, np.all, SHAPES_2D, (BOOL, I8), static={"axis": 0},
        expected_dtype=_bool),
    rec("any", jnp.any, np.any, SHAPES_ANY, (BOOL, F32, U8, C64), expected_dtype=_bool),
    rec("any_axis_keepdims", jnp.any, np.any, SHAPES_2D, (BOOL, F16),
        static={"axis": -1, "keepdims": True}, expected_dtype=_bool),
    rec("any_where", lambda x, m: jnp.any(x, where=m), lambda x, m: np.any(x, where=m),
        [[(2, 3), (2, 3)]], [(BOOL, BOOL)], [rand_mask, rand_mask], expected_dtype=_bool),
    rec("count_nonzero", jnp.count_nonzero, np.count_nonzero, SHAPES_ANY, (F32, I8, BOOL),
        expected_dtype=_int32),
    rec("count_nonzero_axis", jnp.count_nonzero, np.count_nonzero, SHAPES_2D, (F32, BOOL),
        static={"axis": 1, "keepdims": True}, expected_dtype=_int32),

    # Means and variances.
    rec("mean", jnp.mean, widened(np.mean), SHAPES_ANY, ALL_DTYPES + (C64,),
        expected_dtype=_float),
    rec("mean_axis", jnp.mean, widened(np.mean), SHAPES_3D, (F32, I32, F16),
        static={"axis": (0, 2), "keepdims": True}, expected_dtype=_float),
    rec("mean_dtype", lambda x: jnp.mean(x, axis=0, dtype=jnp.float16),
        lambda x: np.mean(_wide(x), axis=0), SHAPES_2D, (F32, I32),
        expected_dtype=lambda d: np.dtype(np.float16), differentiable=False),
    rec("mean_where", lambda x, m: jnp.mean(x, axis=1, where=m),
        lambda x, m: np.mean(_wide(x), axis=1, where=m), [[(2, 3), (2, 3)]],
        [(F32, BOOL), (I32, BOOL)], [rand_default, lambda r, s, d: np.ones(s, bool)],
        expected_dtype=_float),
    rec("mean_where_partial", lambda x, m: jnp.mean(x, where=m),
        lambda x, m: np.mean(_wide(x), where=m), [[(3, 4), (3, 4)]], [(F32, BOOL)],
        [rand_default, lambda r, s, d: np.arange(12).reshape(s) % 3 != 0]),
    rec("var", jnp.var, widened(np.var), SHAPES_ANY, (F32, F16, BF16, I32, BOOL, C64),
        expected_dtype=_real_float, tol={F16: 5e-3}),
    rec("var_ddof_axis", jnp.var, widened(np.var), SHAPES_2D, (F32, I32),
        static={"axis": 0, "ddof": 1}, expected_dtype=_float),
    rec("var_correction_keepdims", jnp.var, lambda x, axis, correction, keepdims: np.var(
        _wide(x), axis=axis, ddof=correction, keepdims=keepdims), SHAPES_3D, (F32,),
        static={"axis": (1, 2), "correction": 1.5, "keepdims": True}),
    rec("var_too_few", jnp.var, lambda x, axis, ddof: np.full(x.shape[1], np.nan), [[(2, 3)]],
        (F32,), static={"axis": 0, "ddof": 2}, differentiable=False),  # NaN everywhere
    rec("var_where", lambda x, m: jnp.var(x, axis=1, where=m),
        lambda x, m: np.var(_wide(x), axis=1, where=m), [[(3, 5), (3, 5)]], [(F32, BOOL)],
        [rand_default, lambda r, s, d: np.arange(15).reshape(s) % 4 != 1]),
    rec("std", jnp.std, widened(np.std), SHAPES_ANY, (F32, I32, C64),
        expected_dtype=_real_float),
    rec("std_ddof_axis", jnp.std, widened(np.std), SHAPES_2D, (F32, F16),
        static={"axis": -1, "ddof": 1, "keepdims": True}, expected_dtype=_float,
        tol={F16: 5e-3}),
    rec("average", jnp.average, widened(np.average), SHAPES_ANY, (F32, I32),
        expected_dtype=_float),
    rec("average_weights", lambda x, w: jnp.average(x, axis=1, weights=w),
        lambda x, w: np.average(_wide(x), axis=1, weights=_wide(w)), [[(2, 3), (2, 3)],
                                                                       [(2, 3), (3,)]],
        [(F32, F32), (I32, F32)], [rand_default, rand_positive],
        expected_dtype=lambda d, w: F32_DT),
    rec("average_returned", lambda x, w: jnp.average(x, axis=0, weights=w, returned=True),
        lambda x, w: np.average(_wide(x), axis=0, weights=_wide(w), returned=True),
        [[(4, 3), (4,)]], [(F32, F32)], [rand_default, rand_positive]),

    # argmax / argmin and their NaN-ignoring forms.
    rec("argmax", jnp.argmax, np.argmax, SHAPES_ANY, (F32, I32, U8, F16), rand_distinct,
        expected_dtype=_int32),
    rec("argmax_axis", jnp.argmax, np.argmax, SHAPES_2D, (F32, I8), rand_distinct,
        static={"axis": 1}, expected_dtype=_int32),
    rec("argmax_keepdims", jnp.argmax, np.argmax, SHAPES_2D, (F32,), rand_distinct,
        static={"axis": -2, "keepdims": True}, expected_dtype=_int32),
    rec("argmax_flat_keepdims", jnp.argmax, np.argmax, SHAPES_2D, (F32,), rand_distinct,
        static={"keepdims": True}, expected_dtype=_int32),
    rec("argmax_ties_bool", jnp.argmax, np.argmax, SHAPES_2D, (BOOL,), static={"axis": 0},
        expected_dtype=_int32),
    rec("argmax_nan", jnp.argmax, np.argmax, SHAPES_2D, (F32,), rand_with_nans,
        static={"axis": 0}, expected_dtype=_int32),
    rec("argmin", jnp.argmin, np.argmin, SHAPES_ANY, (F32, I32, BF16), rand_distinct,
        expected_dtype=_int32),
    rec("argmin_axis", jnp.argmin, np.argmin, SHAPES_2D, (F32, U8), rand_distinct,
        static={"axis": 0, "keepdims": True}, expected_dtype=_int32),
    rec("nanargmax", jnp.nanargmax, lambda x, **kw: _nanarg(np.nanargmax, x, **kw), SHAPES_2D,
        (F32,), rand_with_nans, static={"axis": 1}, expected_dtype=_int32),
    rec("nanargmin", jnp.nanargmin, lambda x, **kw: _nanarg(np.nanargmin, x, **kw), SHAPES_2D,
        (F32,), rand_with_nans, static={"axis": 0, "keepdims": True}, expected_dtype=_int32),
    rec("nanargmax_int", jnp.nanargmax, np.argmax, SHAPES_2D, (I32,), rand_distinct,
        expected_dtype=_int32),

    # NaN-ignoring reductions.
    rec("nansum", jnp.nansum, widened(np.nansum), SHAPES_ANY, (F32, F16), rand_with_nans),
    rec("nansum_int", jnp.nansum, _integer_sum(np.sum), SHAPES_2D, (I8, BOOL),
        expected_dtype=_sum_dtype),
    rec("nansum_axis_where", lambda x, m: jnp.nansum(x, axis=0, where=m),
        lambda x, m: np.nansum(_wide(x), axis=0, where=m), [[(3, 4), (3, 4)]], [(F32, BOOL)],
        [rand_with_nans, rand_mask]),
    rec("nanprod", jnp.nanprod, widened(np.nanprod), SHAPES_2D, (F32,), rand_with_nans,
        static={"axis": 1, "keepdims": True}),
    rec("nanmax", jnp.nanmax, lambda x, **kw: _all_nan_ok(np.nanmax, x, **kw), SHAPES_2D,
        (F32, F16), rand_with_nans, static={"axis": 0}),
    rec("nanmin", jnp.nanmin, lambda x, **kw: _all_nan_ok(np.nanmin, x, **kw), SHAPES_ANY,
        (F32,), rand_with_nans),
    rec("nanmin_initial", jnp.nanmin, lambda x, **kw: np.fmin(
        np.nanmin(np.where(np.isnan(x), np.inf, _wide(x)), axis=kw["axis"]), kw["initial"]),
        SHAPES_2D, (F32,), rand_with_nans, static={"axis": 1, "initial": 0.5}),
    rec("nanmax_int", jnp.nanmax, np.max, SHAPES_2D, (I32,), static={"axis": 1}),
    rec("nanmean", jnp.nanmean, lambda x, **kw: _all_nan_ok(np.nanmean, _wide(x), **kw),
        SHAPES_ANY, (F32,), rand_with_nans),
    rec("nanmean_axis", jnp.nanmean, lambda x, **kw: _all_nan_ok(np.nanmean, _wide(x), **kw),
        SHAPES_2D, (F32,), rand_with_nans, static={"axis": 1, "keepdims": True}),
    rec("nanmean_int", jnp.nanmean, widened(np.mean), SHAPES_2D, (I32, BOOL),
        expected_dtype=_float),
    rec("nanvar", jnp.nanvar, lambda x, **kw: _all_nan_ok(np.nanvar, _wide(x), **kw),
        SHAPES_2D, (F32,), rand_with_nans, static={"axis": 0}),
    rec("nanvar_ddof", jnp.nanvar, lambda x, **kw: _all_nan_ok(np.nanvar, _wide(x), **kw),
        [[(3, 6)]], (F32,), rand_with_nans, static={"axis": 1, "ddof": 1}),
    rec("nanstd", jnp.nanstd, lambda x, **kw: _all_nan_ok(np.nanstd, _wide(x), **kw),
        SHAPES_ANY, (F32,), rand_with_nans),

    # Cumulative reductions.
    rec("cumsum", jnp.cumsum, lambda x, **kw: np.cumsum(x, dtype=_cumsum_dtype(x.dtype), **kw)
        if x.dtype.kind in "biu" else np.cumsum(_wide(x), **kw), SHAPES_ANY, ALL_DTYPES,
        expected_dtype=_cumsum_dtype, tol={F16: 5e-3, BF16: 5e-2}),
    rec("cumsum_axis", jnp.cumsum, lambda x, axis: np.cumsum(_wide(x), axis=axis), SHAPES_2D,
        (F32, I32), static={"axis": -1}, expected_dtype=_same),
    rec("cumsum_dtype", lambda x: jnp.cumsum(x, axis=0, dtype=jnp.float32),
        lambda x: np.cumsum(_wide(x), axis=0), SHAPES_2D, (I32, BOOL),
        expected_dtype=lambda d: F32_DT),
    rec("cumsum_dtype_bool", lambda x: jnp.cumsum(x, dtype=bool),
        lambda x: np.cumsum(x != 0) > 0, SHAPES_ANY, (F32, I32), expected_dtype=_bool),
    rec("cumprod", jnp.cumprod, lambda x, axis: np.cumprod(_wide(x), axis=axis), SHAPES_2D,
        (F32, I32), static={"axis": 0}, expected_dtype=_same),
    rec("cumprod_flat", jnp.cumprod, lambda x: np.cumprod(x, dtype=_cumsum_dtype(x.dtype)),
        SHAPES_ANY, (I8, U8, BOOL), expected_dtype=_cumsum_dtype),
    rec("nancumsum", jnp.nancumsum, lambda x, axis: np.nancumsum(_wide(x), axis=axis),
        SHAPES_2D, (F32,), rand_with_nans, static={"axis": 1}),
    rec("nancumprod", jnp.nancumprod, widened(np.nancumprod), SHAPES_ANY, (F32,),
        rand_with_nans),
    rec("nancumsum_int", jnp.nancumsum, np.cumsum, [[(5,)]], (I32,)),
    rec("cumulative_sum", jnp.cumulative_sum,
        lambda x, **kw: np.cumulative_sum(x, dtype=_sum_dtype(x.dtype), **kw)
        if x.dtype.kind in "biu" else np.cumulative_sum(_wide(x), **kw), [[(5,)]],
        (F32, I8, U8, BOOL), expected_dtype=_sum_dtype),
    rec("cumulative_sum_initial", jnp.cumulative_sum,
        lambda x, **kw: np.cumulative_sum(_wide(x), **kw), SHAPES_2D, (F32, I32),
        static={"axis": 1, "include_initial": True}, expected_dtype=_same),
    rec("cumulative_prod", jnp.cumulative_prod,
        lambda x, **kw: np.cumulative_prod(_wide(x), **kw), SHAPES_2D, (F32, I32),
        static={"axis": 0, "include_initial": True}, expected_dtype=_same),
]


def _nanarg(fn: Callable, x: np.ndarray, axis: Any = None, keepdims: bool = False
            ) -> np.ndarray:
    """NumPy's nanargmax/nanargmin, with -1 where a whole line is NaN (as JAX gives)."""
    all_nan = np.all(np.isnan(x), axis=axis, keepdims=keepdims)
    filled = np.where(np.isnan(x), np.nan, x)
    safe = np.where(np.all(np.isnan(filled), axis=axis, keepdims=True), 0, filled)
    return np.where(all_nan, -1, fn(safe, axis=axis, keepdims=keepdims))


def _all_nan_ok(fn: Callable, x: np.ndarray, **kwargs: Any) -> np.ndarray:
    """A NumPy nan-function without its all-NaN warnings (the result there is NaN anyway)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(x, **kwargs)
