"""Op records for justjax.scipy.stats: the normal distribution, with its location and scale
broadcast against `x`."""
from __future__ import annotations

import numpy as np
import scipy.stats

from justjax.scipy.stats import norm
from tests.harness import BF16, F16, F32, OpRecord, rand_default, rand_positive

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
