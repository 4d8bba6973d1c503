"""Op records for justjax.scipy.stats: the normal distribution, with its location and scale
broadcast against `x`, and a log density (or CDF) of each family of the other continuous
distributions, with their parameters broadcast against `x`: against SciPy, jit against
eager, vmap against a loop, and derivatives to second order against finite differences.
The edges, dtypes and the rest of the functions are in tests/test_scipy_stats.py."""
from __future__ import annotations

import numpy as np
import scipy.stats

from justjax.scipy import stats
from justjax.scipy.stats import norm
from tests.harness import (BF16, F16, F32, OpRecord, rand_default, rand_not_small,
                           rand_positive)

# x, loc, scale: equal shapes, and loc/scale broadcast against x.
SHAPES = [[(), (), ()], [(5,), (5,), (5,)], [(3, 4), (4,), ()], [(2, 1), (1, 3), (2, 3)]]
ARGS = (rand_default, rand_default, rand_positive)
LOW = {F16: 5e-3, BF16: 4e-2}


def _wide(fn):
    """Reference computed in float64 (the harness casts back to the result dtype)."""
    return lambda *args: fn(*[np.asarray(a, np.float64) for a in args])


def _probability(rng, shape, dtype):
    """Inside (0, 1), away from the ends."""
    return rng.uniform(0.02, 0.98, shape).astype(dtype)


def _location(rng, shape, dtype):
    """A location in [-2, 2]."""
    return rng.uniform(-2, 2, shape).astype(dtype)


def _scale(rng, shape, dtype):
    """A scale in [0.5, 2]."""
    return rng.uniform(0.5, 2, shape).astype(dtype)


# The CDFs' arguments keep (x - loc) / scale moderate, so that finite differences (the
# gradient checks' reference) stay accurate.
CDF_ARGS = (rand_default, _location, _scale)


def _cdf_record(name: str) -> OpRecord:
    return OpRecord(f"norm.{name}", getattr(norm, name), _wide(getattr(scipy.stats.norm, name)),
                    SHAPES, (F32,), CDF_ARGS, grad_tol=1e-4)


RECORDS = [
    OpRecord("norm.logpdf", norm.logpdf, _wide(scipy.stats.norm.logpdf), SHAPES,
             (F32, F16, BF16), ARGS, tol=LOW),
    OpRecord("norm.pdf", norm.pdf, _wide(scipy.stats.norm.pdf), SHAPES, (F32, F16, BF16), ARGS,
             tol=LOW),
    _cdf_record("cdf"),
    _cdf_record("logcdf"),
    _cdf_record("sf"),
    _cdf_record("logsf"),
    OpRecord("norm.ppf", norm.ppf, _wide(scipy.stats.norm.ppf), SHAPES, (F32,),
             (_probability, _location, _scale), tol={F32: 2e-5}, grad_tol=1e-4),
    OpRecord("norm.isf", norm.isf, _wide(scipy.stats.norm.isf), SHAPES, (F32,),
             (_probability, _location, _scale), tol={F32: 2e-5}, grad_tol=1e-4),
]


# x and one or two shape parameters: equal shapes, and parameters broadcast against x.
SHAPES_2 = [[(), ()], [(5,), (5,)], [(3, 4), (4,)]]
SHAPES_3 = [[(), (), ()], [(5,), (5,), (5,)], [(3, 4), (4,), ()]]


def _shape(rng, shape, dtype):
    """A shape parameter in [1.5, 4] (densities smooth at their support's end)."""
    return rng.uniform(1.5, 4.0, shape).astype(dtype)


def _unit_interval(rng, shape, dtype):
    """Inside (0, 1), away from the ends."""
    return rng.uniform(0.1, 0.9, shape).astype(dtype)


def _angle(rng, shape, dtype):
    """An angle in (0.2, 6) (inside wrapcauchy's [0, 2 pi])."""
    return rng.uniform(0.2, 6.0, shape).astype(dtype)


def _record(name: str, shapes, make_args, tol=None, grad_tol=1e-4) -> OpRecord:
    dist, fn = name.split(".")
    return OpRecord(name, getattr(getattr(stats, dist), fn),
                    _wide(getattr(getattr(scipy.stats, dist), fn)), shapes, (F32,), make_args,
                    tol=tol or {}, grad_tol=grad_tol)


RECORDS += [
    _record("cauchy.logpdf", SHAPES, ARGS),
    _record("cauchy.cdf", SHAPES, CDF_ARGS),
    # Near the ends of (0, 1) tan is steep: finite differences of second order lose digits.
    _record("cauchy.ppf", SHAPES, (_probability, _location, _scale), tol={F32: 2e-5},
            grad_tol=1e-3),
    _record("logistic.logpdf", SHAPES, ARGS),
    _record("logistic.sf", SHAPES, CDF_ARGS),
    _record("laplace.cdf", SHAPES, (rand_not_small, _location, _scale)),
    _record("gumbel_r.logcdf", SHAPES, CDF_ARGS),
    _record("gumbel_l.logsf", SHAPES, CDF_ARGS),
    _record("t.logpdf", SHAPES_2, (rand_default, _shape)),
    _record("gamma.logpdf", SHAPES_2, (rand_positive, _shape)),
    _record("chi2.logpdf", SHAPES_2, (rand_positive, _shape)),
    _record("pareto.logsf", SHAPES_2, (lambda rng, shape, dtype: rand_positive(rng, shape, dtype)
                                        + np.asarray(1.1, dtype), _shape)),
    _record("beta.logpdf", SHAPES_3, (_unit_interval, _shape, _shape)),
    _record("gennorm.logpdf", SHAPES_2, (rand_not_small, _shape)),
    _record("vonmises.logpdf", SHAPES_2, (rand_default, _shape)),
    _record("wrapcauchy.logpdf", SHAPES_2, (_angle, _unit_interval)),
]
