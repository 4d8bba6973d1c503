"""Op records for lax's special functions (`_src/lax/special.py`) and the
jax.scipy.special functions built on them."""
from __future__ import annotations

import numpy as np
import scipy.special

import justjax.numpy as jnp
import justjax.scipy.special as special
from justjax import lax
from tests.harness import BF16, F16, F32, FLOATS, OpRecord, rand_not_small, rand_positive

BINARY_SHAPES = [[(), ()], [(4,), (4,)], [(2, 3), (2, 3)], [(2, 3), ()], [(1, 3), (2, 3)]]
TERNARY_SHAPES = [[(), (), ()], [(4,), (4,), (4,)], [(2, 3), (), (2, 3)]]
UNARY_SHAPES = [[()], [(5,)], [(2, 3)]]
LOW = {F16: 5e-3, BF16: 3e-2}


def _wide(fn):
    """Reference computed in float64 (the harness casts back to the result dtype)."""
    return lambda *args, **kw: fn(*[np.asarray(a, np.float64) for a in args], **kw)


def _unit(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """betainc's x: inside (0, 1), away from the ends."""
    return rng.uniform(0.05, 0.95, shape).astype(dtype)


def _zeta_x(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    return rng.uniform(1.5, 5.0, shape).astype(dtype)


def _dp_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dP(a, x)/da by central differences of SciPy (of Q where P is close to 1)."""
    h = 1e-6 * np.maximum(a, 1e-3)
    lower = (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)
    upper = -(scipy.special.gammaincc(a + h, x) - scipy.special.gammaincc(a - h, x)) / (2 * h)
    return np.where(x > a, upper, lower)


def _sample_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/da of a Gamma(a, 1) sample: -(dP/da) / (dP/dx)."""
    dp_dx = np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a))
    return -_dp_da(a, x) / dp_dx


def _igamma_in_x(x):
    return lax.igamma(jnp.full_like(x, 1.7), x)


def _betainc_in_x(x):
    return lax.betainc(jnp.full_like(x, 1.5), jnp.full_like(x, 2.5), x)


# igamma and co. are differentiable once in a (JAX has no rule for igamma_grad_a) and
# betainc only in x: the second-order record checks run on functions of x alone.
RECORDS = [
    OpRecord("lax.igamma", lax.igamma, _wide(scipy.special.gammainc), BINARY_SHAPES, FLOATS,
             rand_positive, tol=LOW, differentiable=False),
    OpRecord("lax.igammac", lax.igammac, _wide(scipy.special.gammaincc), BINARY_SHAPES, FLOATS,
             rand_positive, tol=LOW, differentiable=False),
    OpRecord("lax.igamma_grad_a", lax.igamma_grad_a, _wide(_dp_da), BINARY_SHAPES, FLOATS,
             rand_positive, tol={F32: 1e-4, **LOW}, differentiable=False),
    OpRecord("lax.random_gamma_grad", lax.random_gamma_grad, _wide(_sample_grad),
             BINARY_SHAPES, FLOATS, rand_positive, tol={F32: 1e-4, **LOW},
             differentiable=False),
    OpRecord("lax.igamma_in_x", _igamma_in_x, _wide(lambda x: scipy.special.gammainc(1.7, x)),
             UNARY_SHAPES, (F32,), rand_positive),
    OpRecord("lax.betainc", lax.betainc, _wide(scipy.special.betainc), TERNARY_SHAPES, FLOATS,
             (rand_positive, rand_positive, _unit), tol={F32: 1e-4, **LOW},
             differentiable=False),
    OpRecord("lax.betainc_in_x", _betainc_in_x,
             _wide(lambda x: scipy.special.betainc(1.5, 2.5, x)), UNARY_SHAPES, (F32,), _unit),
    OpRecord("lax.zeta", lax.zeta, _wide(scipy.special.zeta), BINARY_SHAPES, FLOATS,
             (_zeta_x, rand_positive), tol=LOW, differentiable=False),
    OpRecord("lax.bessel_i0e", lax.bessel_i0e, _wide(scipy.special.i0e), UNARY_SHAPES, FLOATS,
             rand_not_small, tol=LOW),
    OpRecord("lax.bessel_i1e", lax.bessel_i1e, _wide(scipy.special.i1e), UNARY_SHAPES, FLOATS,
             tol=LOW),
    OpRecord("special.gammainc", special.gammainc, _wide(scipy.special.gammainc),
             [[(3,), (3,)], [(2, 3), (3,)]], (F32,), rand_positive, differentiable=False),
    OpRecord("special.gammaincc", special.gammaincc, _wide(scipy.special.gammaincc),
             [[(3,), (3,)], [(2, 3), (3,)]], (F32,), rand_positive, differentiable=False),
    OpRecord("special.betainc", special.betainc, _wide(scipy.special.betainc),
             [[(3,), (3,), (3,)]], (F32,), (rand_positive, rand_positive, _unit),
             tol={F32: 1e-4}, differentiable=False),
    OpRecord("special.i0e", special.i0e, _wide(scipy.special.i0e), UNARY_SHAPES, (F32,),
             rand_not_small),
    OpRecord("special.i0", special.i0, _wide(scipy.special.i0), UNARY_SHAPES, (F32,),
             rand_not_small),
    OpRecord("special.i1e", special.i1e, _wide(scipy.special.i1e), UNARY_SHAPES, (F32,)),
    OpRecord("special.i1", special.i1, _wide(scipy.special.i1), UNARY_SHAPES, (F32,),
             rand_not_small),
]
