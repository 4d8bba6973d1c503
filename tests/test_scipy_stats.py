"""justjax.scipy.stats, table-driven: every distribution function on a grid of points
(inside and outside the support, the support's ends, infinities, NaN, bad parameters)
against SciPy, with JAX's own answers where JAX and SciPy disagree; float64; jit and vmap
against eager; derivatives against finite differences; result dtypes and weak types as in
JAX. `mode`, `rankdata`, `sem` and `gaussian_kde` are in tests/test_scipy_stats_misc.py;
the normal distribution's tails in tests/test_scipy_stats_norm.py."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy import stats
from justjax.test_util import check_grads
from tests.harness import x64_mode

X = [-np.inf, -3.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 7.5, 30.0, np.inf, np.nan]
P = [-0.5, 0.0, 1e-6, 0.05, 0.3, 0.5, 0.9, 0.999, 1.0, 1.5, np.nan]
K = [-2.0, -1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 10.0, np.nan]
UNIT = [-0.5, 0.0, 1e-3, 0.1, 0.5, 0.9, 0.999, 1.0, 1.5, np.nan]
ANGLE = [-1.0, 0.0, 0.5, 1.5, 3.0, 2 * np.pi, 7.0, np.nan]

ALL = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
PMF = ("logpmf", "pmf")
# (distribution, functions, grid of the first argument, parameter tuples).
TABLE = [
    ("norm", ALL, X, [(), (0.5, 2.0)]),
    ("norm", ("ppf", "isf"), P, [(), (1.0, 3.0)]),
    ("cauchy", ALL, X, [(), (0.5, 2.0), (0.0, -1.0)]),
    ("cauchy", ("ppf", "isf"), P, [(), (1.0, 3.0)]),
    ("expon", ALL, X, [(), (0.5, 2.0)]),
    ("expon", ("ppf",), P, [(), (1.0, 3.0)]),
    ("laplace", ("logpdf", "pdf", "cdf"), X, [(), (0.5, 2.0)]),
    ("logistic", ("logpdf", "pdf", "cdf", "sf"), X, [(), (0.5, 2.0)]),
    ("logistic", ("ppf", "isf"), P, [(), (1.0, 3.0)]),
    ("uniform", ("logpdf", "pdf", "cdf"), X, [(), (0.5, 2.0), (-1.0, 0.5)]),
    ("uniform", ("ppf",), P, [(), (1.0, 3.0)]),
    ("gumbel_l", ALL, X, [(), (0.5, 2.0), (0.0, -1.0)]),
    ("gumbel_l", ("ppf",), P, [(), (1.0, 3.0)]),
    ("gumbel_r", ALL, X, [(), (0.5, 2.0), (0.0, -1.0)]),
    ("gumbel_r", ("ppf",), P, [(), (1.0, 3.0)]),
    ("pareto", ALL, X, [(0.5,), (3.0,), (2.0, -0.5, 1.5)]),
    ("pareto", ("ppf",), P, [(3.0,), (2.0, 1.0, 3.0)]),
    ("t", ("logpdf", "pdf"), X, [(0.5,), (3.0,), (30.0, 0.5, 2.0)]),
    ("chi2", ALL, X, [(1.0,), (3.0,), (10.0, -0.5, 1.5)]),
    ("gamma", ALL, X, [(0.5,), (3.0,), (10.0, -0.5, 1.5)]),
    ("beta", ALL, UNIT, [(0.5, 0.5), (2.0, 5.0), (5.0, 2.0), (10.0, 30.0), (2.0, 3.0, -0.5, 2.0),
                         (0.0, 1.0), (-1.0, 2.0)]),
    ("gennorm", ("logpdf", "pdf", "cdf"), X, [(0.5,), (1.0,), (2.0,), (5.0,)]),
    ("truncnorm", ALL, X, [(-1.0, 1.0), (0.5, 2.0), (-3.0, -1.0), (2.0, 8.0), (-20.0, -15.0),
                           (-np.inf, 0.5), (0.0, np.inf), (-1.0, 2.0, 0.5, 2.0), (2.0, 1.0)]),
    ("vonmises", ("logpdf", "pdf"), ANGLE, [(0.01,), (1.0,), (100.0,), (0.0,)]),
    ("wrapcauchy", ("logpdf", "pdf"), ANGLE, [(0.1,), (0.5,), (0.9,), (0.0,), (1.0,)]),
    ("bernoulli", PMF, K, [(0.0,), (0.3,), (1.0,), (0.3, 1.0)]),
    ("bernoulli", ("cdf",), K, [(0.0,), (0.3,), (1.0,), (1.5,)]),
    ("bernoulli", ("ppf",), P, [(0.0,), (0.3,), (1.0,), (1.5,)]),
    ("binom", PMF, K, [(5.0, 0.3), (10.0, 0.0), (10.0, 1.0), (0.0, 0.5), (3.5, 0.4),
                       (5.0, 0.3, 1.0)]),
    ("betabinom", PMF, K, [(5.0, 1.0, 1.0), (10.0, 2.0, 3.0), (0.0, 1.0, 1.0), (5.0, 0.0, 1.0),
                           (-1.0, 1.0, 1.0), (10.0, 2.0, 3.0, 1.0)]),
    ("geom", PMF, K, [(0.3,), (1.0,), (0.3, 1.0)]),
    ("nbinom", PMF, K, [(1.0, 0.3), (2.5, 0.9), (5.0, 1.0), (3.0, 0.5, 1.0)]),
    ("poisson", PMF + ("cdf",), K, [(0.0,), (0.5,), (3.0,), (20.0,), (3.0, 1.0)]),
]


def table_cases() -> list[tuple[str, str, list[float], tuple[float, ...]]]:
    """Every (distribution, function, grid, parameters) of the table."""
    return [(dist, fn, grid, params) for dist, fns, grid, param_sets in TABLE
            for fn in fns for params in param_sets]


CASES = table_cases()


def _case_id(case: tuple) -> str:
    dist, fn, _, params = case
    return f"{dist}.{fn}{params}"


# Recorded from JAX 0.10.2 (float32, the table's grid): where JAX's value differs from
# SciPy's (beyond rtol 2e-4, atol 1e-6), index in the grid -> JAX's value. Mostly NaN
# arguments and parameters (JAX answers without checking them), non-integer counts (the
# discrete distributions other than poisson do not check), and the ends of the supports.
NAN = np.nan
INF = np.inf
JAX_WHERE_SCIPY_DIFFERS = {
    ("norm", "isf", ()): {2: 4.7507577},
    ("norm", "isf", (1.0, 3.0)): {2: 15.252274},
    ("cauchy", "cdf", (0.0, -1.0)): {0: 1.0, 1: 0.8975836, 2: 0.75, 3: 0.6475836, 4: 0.5,
        5: 0.42202085, 6: 0.3524164, 7: 0.25, 8: 0.18716702, 9: 0.14758357, 10: 0.10241637,
        11: 0.04219246, 12: 0.010606408, 13: 0.0},
    ("cauchy", "logcdf", (0.0, -1.0)): {0: 0.0, 1: -0.10804901, 2: -0.2876821, 3: -0.43450737,
        4: -0.6931472, 5: -0.8627006, 6: -1.0429418, 7: -1.3862944, 8: -1.675754, 9: -1.9133607,
        10: -2.2787087, 11: -3.1655138, 12: -4.546297, 13: -INF},
    ("cauchy", "sf", (0.0, -1.0)): {0: 0.0, 1: 0.10241637, 2: 0.25, 3: 0.3524164, 4: 0.5,
        5: 0.57797915, 6: 0.6475836, 7: 0.75, 8: 0.81283295, 9: 0.8524164, 10: 0.8975836,
        11: 0.95780754, 12: 0.9893936, 13: 1.0},
    ("cauchy", "logsf", (0.0, -1.0)): {0: -INF, 1: -2.2787087, 2: -1.3862944, 3: -1.0429418,
        4: -0.6931472, 5: -0.5482175, 6: -0.43450737, 7: -0.2876821, 8: -0.20722966,
        9: -0.15968014, 10: -0.10804901, 11: -0.04310842, 12: -0.010663057, 13: 0.0},
    ("cauchy", "ppf", ()): {0: -8.742278e-08, 1: 22877334.0, 2: -327254.03, 8: -22877334.0,
        9: -1.509958e-07},
    ("cauchy", "ppf", (1.0, 3.0)): {0: 0.99999976, 1: 68632000.0, 2: -981761.1, 8: -68632000.0,
        9: 0.9999995},
    ("cauchy", "isf", ()): {0: 8.742278e-08, 1: -22877334.0, 2: 327254.03, 8: 22877334.0,
        9: 1.509958e-07},
    ("cauchy", "isf", (1.0, 3.0)): {0: 1.0000002, 1: -68632000.0, 2: 981763.1, 8: 68632000.0,
        9: 1.0000005},
    ("uniform", "logpdf", ()): {14: -0.0},
    ("uniform", "logpdf", (0.5, 2.0)): {14: -0.6931472},
    ("uniform", "logpdf", (-1.0, 0.5)): {14: 0.6931472},
    ("uniform", "pdf", ()): {14: 1.0},
    ("uniform", "pdf", (0.5, 2.0)): {14: 0.5},
    ("uniform", "pdf", (-1.0, 0.5)): {14: 2.0},
    ("uniform", "cdf", ()): {14: 0.0},
    ("uniform", "cdf", (0.5, 2.0)): {14: 0.0},
    ("uniform", "cdf", (-1.0, 0.5)): {14: 0.0},
    ("gumbel_l", "ppf", ()): {1: NAN, 8: NAN},
    ("gumbel_l", "ppf", (1.0, 3.0)): {1: NAN, 8: NAN},
    ("gumbel_r", "ppf", ()): {1: NAN, 8: NAN},
    ("gumbel_r", "ppf", (1.0, 3.0)): {1: NAN, 8: NAN},
    ("gamma", "logpdf", (0.5,)): {14: -INF},
    ("gamma", "logpdf", (3.0,)): {14: -INF},
    ("gamma", "logpdf", (10.0, -0.5, 1.5)): {14: -INF},
    ("gamma", "pdf", (0.5,)): {14: 0.0},
    ("gamma", "pdf", (3.0,)): {14: 0.0},
    ("gamma", "pdf", (10.0, -0.5, 1.5)): {14: 0.0},
    ("beta", "cdf", (0.0, 1.0)): {0: 0.0, 1: 0.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0, 6: 1.0, 7: 1.0,
        8: 1.0},
    ("beta", "logcdf", (0.0, 1.0)): {0: -INF, 1: -INF, 2: 0.0, 3: 0.0, 4: 0.0, 5: 0.0, 6: 0.0,
        7: 0.0, 8: 0.0},
    ("beta", "sf", (0.0, 1.0)): {0: 1.0, 1: 1.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 0.0, 6: 0.0, 7: 0.0,
        8: 0.0},
    ("beta", "logsf", (10.0, 30.0)): {6: -INF},
    ("beta", "logsf", (0.0, 1.0)): {0: 0.0, 1: 0.0, 2: -INF, 3: -INF, 4: -INF, 5: -INF, 6: -INF,
        7: -INF, 8: -INF},
    ("truncnorm", "cdf", (-1.0, 1.0)): {14: 1.0},
    ("truncnorm", "cdf", (0.5, 2.0)): {14: 1.0},
    ("truncnorm", "cdf", (-3.0, -1.0)): {14: 1.0},
    ("truncnorm", "cdf", (2.0, 8.0)): {14: 1.0},
    ("truncnorm", "cdf", (-20.0, -15.0)): {14: 1.0},
    ("truncnorm", "cdf", (-np.inf, 0.5)): {14: 1.0},
    ("truncnorm", "cdf", (0.0, np.inf)): {14: 1.0},
    ("truncnorm", "cdf", (-1.0, 2.0, 0.5, 2.0)): {14: 1.0},
    ("truncnorm", "logcdf", (-1.0, 1.0)): {14: 0.0},
    ("truncnorm", "logcdf", (0.5, 2.0)): {14: 0.0},
    ("truncnorm", "logcdf", (-3.0, -1.0)): {14: 0.0},
    ("truncnorm", "logcdf", (2.0, 8.0)): {14: 0.0},
    ("truncnorm", "logcdf", (-20.0, -15.0)): {14: 0.0},
    ("truncnorm", "logcdf", (-np.inf, 0.5)): {14: 0.0},
    ("truncnorm", "logcdf", (0.0, np.inf)): {14: 0.0},
    ("truncnorm", "logcdf", (-1.0, 2.0, 0.5, 2.0)): {14: 0.0},
    ("truncnorm", "sf", (-1.0, 1.0)): {14: 1.0},
    ("truncnorm", "sf", (0.5, 2.0)): {14: 1.0},
    ("truncnorm", "sf", (-3.0, -1.0)): {14: 1.0},
    ("truncnorm", "sf", (2.0, 8.0)): {14: 1.0},
    ("truncnorm", "sf", (-20.0, -15.0)): {14: 1.0},
    ("truncnorm", "sf", (-np.inf, 0.5)): {14: 1.0},
    ("truncnorm", "sf", (0.0, np.inf)): {14: 1.0},
    ("truncnorm", "sf", (-1.0, 2.0, 0.5, 2.0)): {14: 1.0},
    ("truncnorm", "logsf", (-1.0, 1.0)): {14: 0.0},
    ("truncnorm", "logsf", (0.5, 2.0)): {14: 0.0},
    ("truncnorm", "logsf", (-3.0, -1.0)): {14: 0.0},
    ("truncnorm", "logsf", (2.0, 8.0)): {14: 0.0},
    ("truncnorm", "logsf", (-20.0, -15.0)): {14: 0.0},
    ("truncnorm", "logsf", (-np.inf, 0.5)): {14: 0.0},
    ("truncnorm", "logsf", (0.0, np.inf)): {14: 0.0},
    ("truncnorm", "logsf", (-1.0, 2.0, 0.5, 2.0)): {14: 0.0},
    ("vonmises", "logpdf", (0.0,)): {0: NAN, 1: NAN, 2: NAN, 3: NAN, 4: NAN, 5: NAN, 6: NAN},
    ("vonmises", "pdf", (0.0,)): {0: NAN, 1: NAN, 2: NAN, 3: NAN, 4: NAN, 5: NAN, 6: NAN},
    ("wrapcauchy", "logpdf", (0.1,)): {5: -1.6372063, 7: -INF},
    ("wrapcauchy", "logpdf", (0.5,)): {5: -0.7392647, 7: -INF},
    ("wrapcauchy", "logpdf", (0.9,)): {5: 1.1065633, 7: -INF},
    ("wrapcauchy", "pdf", (0.1,)): {5: 0.19452272, 7: 0.0},
    ("wrapcauchy", "pdf", (0.5,)): {5: 0.47746485, 7: 0.0},
    ("wrapcauchy", "pdf", (0.9,)): {5: 3.0239482, 7: 0.0},
    ("bernoulli", "ppf", (0.0,)): {1: 0.0, 8: 0.0},
    ("bernoulli", "ppf", (0.3,)): {1: 0.0},
    ("bernoulli", "ppf", (1.0,)): {1: 0.0},
    ("binom", "logpmf", (5.0, 0.3)): {5: -1.5160742, 9: -INF},
    ("binom", "logpmf", (10.0, 0.0)): {9: -INF},
    ("binom", "logpmf", (10.0, 1.0)): {9: -INF},
    ("binom", "logpmf", (0.0, 0.5)): {9: -INF},
    ("binom", "logpmf", (3.5, 0.4)): {0: -INF, 1: -INF, 2: -1.7878902, 3: -0.9405904,
        4: -1.1229119, 5: -1.5487878, 6: -2.2215252, 7: -INF, 8: -INF, 9: -INF},
    ("binom", "logpmf", (5.0, 0.3, 1.0)): {5: -1.0052502, 9: -INF},
    ("binom", "pmf", (5.0, 0.3)): {5: 0.2195722, 9: 0.0},
    ("binom", "pmf", (10.0, 0.0)): {9: 0.0},
    ("binom", "pmf", (10.0, 1.0)): {9: 0.0},
    ("binom", "pmf", (0.0, 0.5)): {9: 0.0},
    ("binom", "pmf", (3.5, 0.4)): {0: 0.0, 1: 0.0, 2: 0.1673128, 3: 0.39039728, 4: 0.3253311,
        5: 0.21250542, 6: 0.10844359, 7: 0.0, 8: 0.0, 9: 0.0},
    ("binom", "pmf", (5.0, 0.3, 1.0)): {5: 0.36595306, 9: 0.0},
    ("betabinom", "logpmf", (5.0, 1.0, 1.0)): {5: -1.7917604},
    ("betabinom", "logpmf", (10.0, 2.0, 3.0)): {5: -2.0034804},
    ("betabinom", "logpmf", (10.0, 2.0, 3.0, 1.0)): {5: -2.208274},
    ("betabinom", "pmf", (5.0, 1.0, 1.0)): {5: 0.16666651},
    ("betabinom", "pmf", (10.0, 2.0, 3.0)): {5: 0.13486508},
    ("betabinom", "pmf", (10.0, 2.0, 3.0, 1.0)): {5: 0.10989017},
    ("geom", "logpmf", (0.3,)): {5: -1.7389853},
    ("geom", "logpmf", (0.3, 1.0)): {5: -1.3823103},
    ("geom", "pmf", (0.3,)): {5: 0.1756986},
    ("geom", "pmf", (0.3, 1.0)): {5: 0.25099802},
    ("nbinom", "logpmf", (1.0, 0.3)): {5: -2.0956607},
    ("nbinom", "logpmf", (2.5, 0.9)): {5: -4.3274655},
    ("nbinom", "logpmf", (3.0, 0.5, 1.0)): {5: -1.6432545},
    ("nbinom", "pmf", (1.0, 0.3)): {5: 0.12298896},
    ("nbinom", "pmf", (2.5, 0.9)): {5: 0.013200963},
    ("nbinom", "pmf", (3.0, 0.5, 1.0)): {5: 0.19334975},
    ("poisson", "logpmf", (0.0,)): {9: -INF},
    ("poisson", "logpmf", (0.5,)): {9: -INF},
    ("poisson", "logpmf", (3.0,)): {9: -INF},
    ("poisson", "logpmf", (20.0,)): {9: -INF},
    ("poisson", "logpmf", (3.0, 1.0)): {9: -INF},
    ("poisson", "pmf", (0.0,)): {9: 0.0},
    ("poisson", "pmf", (0.5,)): {9: 0.0},
    ("poisson", "pmf", (3.0,)): {9: 0.0},
    ("poisson", "pmf", (20.0,)): {9: 0.0},
    ("poisson", "pmf", (3.0, 1.0)): {9: 0.0},
}


def _function(dist: str, fn: str):
    return getattr(getattr(stats, dist), fn)


def _reference(dist: str, fn: str, args: list) -> np.ndarray:
    """SciPy's value in float64."""
    with np.errstate(all="ignore"):
        ref = getattr(getattr(scipy.stats, dist), fn)(*[np.asarray(a, np.float64) for a in args])
    return np.array(ref, np.float64)


def _args(grid: list[float], params: tuple, dtype: type) -> list:
    return [jnp.asarray(np.asarray(grid, dtype))] + [dtype(p) for p in params]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_float32_values_match_scipy_and_jax(case: tuple) -> None:
    dist, fn, grid, params = case
    args = _args(grid, params, np.float32)
    out = _function(dist, fn)(*args)
    assert out.dtype == np.float32 and out.shape == (len(grid),)
    expected = _reference(dist, fn, args)
    for index, value in JAX_WHERE_SCIPY_DIFFERS.get((dist, fn, params), {}).items():
        expected[index] = value
    np.testing.assert_allclose(np.asarray(out, np.float64), expected, rtol=2e-4, atol=1e-6)


# JAX's betaln (cdflib's algorithm, which justjax follows) is good to about 1e-7.
F64_RTOL = {"betabinom": 1e-6, "beta": 1e-6}


def _structural(value: float) -> bool:
    """NaN, an infinity or 0: values that do not depend on the float width."""
    return not np.isfinite(value) or value == 0


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_float64_values_match_scipy(case: tuple) -> None:
    dist, fn, grid, params = case
    with x64_mode(True):
        args = _args(grid, params, np.float64)
        out = np.asarray(_function(dist, fn)(*args))
    assert out.dtype == np.float64
    expected = _reference(dist, fn, args)
    rtol = F64_RTOL.get(dist, 1e-9)
    close = np.isclose(out, expected, rtol=rtol, atol=1e-14, equal_nan=True)
    # Where JAX differs from SciPy in float32, it does so in float64 too when its answer
    # is structural (NaN, an infinity, 0); other float32 differences are rounding.
    for index, value in JAX_WHERE_SCIPY_DIFFERS.get((dist, fn, params), {}).items():
        if _structural(value):
            close[index] |= np.array_equal(out[index], value, equal_nan=True)
        else:
            close[index] = True
    assert close.all(), (np.flatnonzero(~close), out[~close], expected[~close])


def _first_cases() -> list[tuple]:
    """One parameter set per function: the jit and vmap checks."""
    seen: set = set()
    firsts = []
    for case in CASES:
        if case[:2] not in seen:
            seen.add(case[:2])
            firsts.append(case)
    return firsts


@pytest.mark.parametrize("case", _first_cases(), ids=_case_id)
def test_jit_matches_eager(case: tuple) -> None:
    dist, fn, grid, params = case
    args = _args(grid, params, np.float32)
    f = _function(dist, fn)
    eager = np.asarray(f(*args))
    jitted = np.asarray(jax.jit(f)(*args))
    # A compiled multiply-add is fused (one rounding), as XLA fuses it: where the eager
    # value is an infinity from an exact cancellation, the compiled one may be finite.
    # Near its poles, tan magnifies that rounding difference.
    rtol, atol = (1e-4, 1e-6) if dist == "cauchy" else (1e-5, 1e-7)
    finite = ~np.isinf(eager)
    np.testing.assert_allclose(jitted[finite], eager[finite], rtol=rtol, atol=atol)


def test_compiled_cauchy_cdf_rounds_as_xla_does() -> None:
    # Recorded from JAX 0.10.2: 0.5 + atan(-inf) / pi is 0 eagerly, 6.257e-9 under jit.
    x = jnp.array([-np.inf, -3.0], jnp.float32)
    np.testing.assert_allclose(np.asarray(jax.jit(stats.cauchy.cdf)(x)),
                               [6.25726315e-09, 1.02416374e-01], rtol=1e-5)
    assert float(stats.cauchy.cdf(x)[0]) == 0.0


@pytest.mark.parametrize("case", _first_cases(), ids=_case_id)
def test_vmap_matches_a_loop(case: tuple) -> None:
    dist, fn, grid, params = case
    f = _function(dist, fn)
    x = jnp.asarray(np.asarray(grid[:6], np.float32))
    # The grid mapped, and each parameter mapped over a small batch of nearby values.
    batched_params = [jnp.asarray(np.float32(p) * np.array([1.0, 1.25, 1.5], np.float32))
                      for p in params]
    mapped = jax.vmap(lambda xi, *ps: f(xi, *ps), in_axes=(0,) + (None,) * len(params))
    np.testing.assert_allclose(np.asarray(mapped(x, *params)),
                               np.stack([np.asarray(f(xi, *params)) for xi in x]),
                               rtol=1e-6, atol=1e-7)
    if params:
        over_params = jax.vmap(lambda *ps: f(x, *ps))(*batched_params)
        loop = np.stack([np.asarray(f(x, *[p[i] for p in batched_params])) for i in range(3)])
        np.testing.assert_allclose(np.asarray(over_params), loop, rtol=1e-6, atol=1e-7)


# Interior points for the derivative checks: (distribution, function, arguments, argnums).
# JAX differentiates betainc in x only, and the incomplete gamma functions to first order.
ALL_ARGS = None
GRAD_CASES = [
    ("norm", "logcdf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("cauchy", "logpdf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("cauchy", "logcdf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("cauchy", "ppf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("cauchy", "isf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("expon", "logpdf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("expon", "logcdf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("expon", "sf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("expon", "ppf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("laplace", "logpdf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("laplace", "cdf", (-1.3, 0.5, 2.0), ALL_ARGS),
    ("logistic", "logpdf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("logistic", "sf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("logistic", "isf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("uniform", "logpdf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("uniform", "cdf", (1.3, 0.5, 2.0), ALL_ARGS),
    ("uniform", "ppf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("gumbel_l", "logcdf", (0.3, 0.5, 2.0), (0, 1, 2)),
    ("gumbel_l", "logpdf", (0.3, 0.5, 2.0), (0, 1)),
    # JAX's xlogy(-1, scale) and xlog1py(-1, -p) cannot be differentiated in scale and p
    # (the integer -1's tangent is float0): those arguments are left out.
    ("gumbel_l", "ppf", (0.3, 0.5, 2.0), (1, 2)),
    ("gumbel_r", "logsf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("gumbel_r", "sf", (0.3, 0.5, 2.0), ALL_ARGS),
    ("gumbel_r", "logpdf", (0.3, 0.5, 2.0), (0, 1)),
    ("gumbel_r", "ppf", (0.3, 0.5, 2.0), (1, 2)),
    ("pareto", "logpdf", (3.0, 2.5, 0.5, 1.5), ALL_ARGS),
    ("pareto", "logcdf", (3.0, 2.5, 0.5, 1.5), ALL_ARGS),
    ("pareto", "ppf", (0.3, 2.5, 0.5, 1.5), ALL_ARGS),
    ("t", "logpdf", (0.7, 3.5, 0.5, 2.0), ALL_ARGS),
    ("chi2", "logpdf", (2.5, 3.0, 0.5, 1.5), ALL_ARGS),
    ("chi2", "cdf", (2.5, 3.0, 0.5, 1.5), ALL_ARGS),
    ("chi2", "logsf", (2.5, 3.0, 0.5, 1.5), ALL_ARGS),
    ("gamma", "logpdf", (2.5, 3.0, 0.5, 1.5), ALL_ARGS),
    ("gamma", "cdf", (2.5, 3.0, 0.5, 1.5), ALL_ARGS),
    ("gamma", "sf", (2.5, 3.0, 0.5, 1.5), ALL_ARGS),
    ("beta", "logpdf", (0.4, 2.0, 3.5, -0.5, 2.0), ALL_ARGS),
    ("beta", "cdf", (0.4, 2.0, 3.5, -0.5, 2.0), (0, 3, 4)),
    ("beta", "logsf", (0.4, 2.0, 3.5, -0.5, 2.0), (0, 3, 4)),
    ("gennorm", "logpdf", (0.7, 1.5), ALL_ARGS),
    ("gennorm", "cdf", (0.7, 1.5), ALL_ARGS),
    ("truncnorm", "logpdf", (0.3, -1.0, 2.0, 0.5, 1.5), ALL_ARGS),
    ("truncnorm", "logcdf", (0.3, -1.0, 2.0, 0.5, 1.5), ALL_ARGS),
    ("truncnorm", "logsf", (0.3, -1.0, 2.0, 0.5, 1.5), ALL_ARGS),
    ("vonmises", "logpdf", (0.7, 2.5), ALL_ARGS),
    ("wrapcauchy", "logpdf", (0.7, 0.4), ALL_ARGS),
    ("bernoulli", "logpmf", (1.0, 0.3), (1,)),
    ("binom", "logpmf", (2.0, 5.0, 0.3), (1, 2)),
    ("betabinom", "logpmf", (2.0, 5.0, 1.5, 2.5), (1, 2, 3)),
    ("geom", "logpmf", (3.0, 0.3), (1,)),
    ("nbinom", "logpmf", (2.0, 3.5, 0.4), (1, 2)),
    ("poisson", "logpmf", (2.0, 3.5), (1,)),
    ("poisson", "cdf", (2.0, 3.5), (1,)),
]


@pytest.mark.parametrize("dist,fn,point,argnums", GRAD_CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in GRAD_CASES])
def test_derivatives_against_finite_differences(dist: str, fn: str, point: tuple,
                                                argnums: tuple | None) -> None:
    f = _function(dist, fn)
    argnums = tuple(range(len(point))) if argnums is None else argnums
    with x64_mode(True):
        args = [np.float64(p) for p in point]

        def partial(*free: float) -> object:
            full = list(args)
            for i, value in zip(argnums, free, strict=True):
                full[i] = value
            return f(*full)

        check_grads(partial, [args[i] for i in argnums], order=1, rtol=1e-5, atol=1e-7)


# Recorded from JAX 0.10.2: the result dtype ("*" = weak) for Python float arguments, an
# int32 array with Python-scalar parameters, and float16 and bfloat16 arrays throughout
# ("TypeError": JAX rejects that dtype). The parameters are the table's first set.
JAX_RESULT_DTYPES = {
    "norm.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "norm.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "norm.cdf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "norm.logcdf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "norm.sf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "norm.logsf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "norm.ppf": ('float32', 'TypeError', 'TypeError', 'TypeError'),
    "norm.isf": ('float32', 'TypeError', 'TypeError', 'TypeError'),
    "cauchy.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "cauchy.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "cauchy.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "cauchy.logcdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "cauchy.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "cauchy.logsf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "cauchy.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "cauchy.isf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "expon.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "expon.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "expon.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "expon.logcdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "expon.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "expon.logsf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "expon.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "laplace.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "laplace.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "laplace.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "logistic.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "logistic.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "logistic.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "logistic.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "logistic.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "logistic.isf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "uniform.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "uniform.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "uniform.cdf": ('float32', 'float32', 'float16', 'bfloat16'),
    "uniform.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_l.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_l.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_l.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_l.logcdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_l.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_l.logsf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_l.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_r.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_r.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_r.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_r.logcdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_r.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_r.logsf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gumbel_r.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "pareto.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "pareto.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "pareto.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "pareto.logcdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "pareto.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "pareto.logsf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "pareto.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "t.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "t.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "chi2.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "chi2.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "chi2.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "chi2.logcdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "chi2.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "chi2.logsf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gamma.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gamma.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gamma.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gamma.logcdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gamma.sf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "gamma.logsf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "beta.logpdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "beta.pdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "beta.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "beta.logcdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "beta.sf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "beta.logsf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "gennorm.logpdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "gennorm.pdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "gennorm.cdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "truncnorm.logpdf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "truncnorm.pdf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "truncnorm.cdf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "truncnorm.logcdf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "truncnorm.sf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "truncnorm.logsf": ('float32', 'float32', 'TypeError', 'TypeError'),
    "vonmises.logpdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "vonmises.pdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "wrapcauchy.logpdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "wrapcauchy.pdf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "bernoulli.logpmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "bernoulli.pmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "bernoulli.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "bernoulli.ppf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "binom.logpmf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "binom.pmf": ('float32*', 'float32*', 'float16', 'bfloat16'),
    "betabinom.logpmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "betabinom.pmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "geom.logpmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "geom.pmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "nbinom.logpmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "nbinom.pmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "poisson.logpmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "poisson.pmf": ('float32*', 'float32', 'float16', 'bfloat16'),
    "poisson.cdf": ('float32*', 'float32', 'float16', 'bfloat16'),
}


def _dtype_args(kind: str, params: tuple) -> list:
    if kind == "scalar":
        return [0.5] + [float(p) for p in params]
    if kind == "int":
        return [jnp.array([0, 1, 2])] + [int(p) if float(p).is_integer() else p for p in params]
    dtype = jnp.float16 if kind == "f16" else jnp.bfloat16
    return [jnp.array([0.25, 0.5], dtype)] + [jnp.array(p, dtype) for p in params]


@pytest.mark.parametrize("name", sorted(JAX_RESULT_DTYPES))
def test_result_dtypes_and_weak_types_as_in_jax(name: str) -> None:
    dist, fn = name.split(".")
    params = next(c[3] for c in CASES if c[:2] == (dist, fn))
    for kind, want in zip(("scalar", "int", "f16", "bf16"), JAX_RESULT_DTYPES[name],
                          strict=True):
        if want == "TypeError":
            with pytest.raises(TypeError):
                _function(dist, fn)(*_dtype_args(kind, params))
            continue
        out = _function(dist, fn)(*_dtype_args(kind, params))
        got = str(out.dtype) + ("*" if out.weak_type else "")
        assert got == want, (kind, got, want)


def test_every_jax_function_is_in_the_table() -> None:
    """The table covers every function of every univariate distribution module."""
    covered = {(c[0], c[1]) for c in CASES} | {("poisson", "entropy")}
    for dist in {c[0] for c in CASES}:
        module = getattr(stats, dist)
        for fn in dir(module):
            if not fn.startswith("_"):
                assert (dist, fn) in covered, (dist, fn)
