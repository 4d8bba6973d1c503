"""Op records for the jax.scipy.special functions built in `_src/scipy/special/` (beyond the
lax-backed ones in `lax_special.py` and `nn_special.py`): values against SciPy, jit vs eager,
vmap vs a loop and, where JAX differentiates them to second order, check_grads."""
from __future__ import annotations

import numpy as np
import scipy.special

import justjax.scipy.special as special
from tests.harness import BF16, F16, F32, OpRecord, rand_default, rand_positive

UNARY = [[()], [(5,)], [(2, 3)]]
BINARY = [[(), ()], [(4,), (4,)], [(2, 3), (3,)]]
LOW = {F16: 5e-3, BF16: 4e-2}


def _wide(fn):
    """Reference computed in float64 (the harness casts back to the result dtype)."""
    return lambda *args, **kw: fn(*[np.asarray(a, np.float64) for a in args], **kw)


def _uniform(low: float, high: float):
    def make(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
        return rng.uniform(low, high, shape).astype(dtype)
    return make


def _integers(low: int, high: int):
    def make(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
        return rng.integers(low, high, shape).astype(dtype)
    return make


def _non_integer(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Values in (-4, 4) away from the poles of gamma at the non-positive integers."""
    return (rng.integers(-4, 4, shape) + rng.uniform(0.15, 0.85, shape)).astype(dtype)


def _first(fn):
    return lambda *args: fn(*args)[0]


def _second(fn):
    return lambda *args: fn(*args)[1]


I32 = np.dtype(np.int32)

RECORDS = [
    OpRecord("special.gamma", special.gamma, _wide(scipy.special.gamma), UNARY, (F32,),
             _non_integer, tol={F32: 1e-4}),
    OpRecord("special.gammasgn", special.gammasgn, _wide(scipy.special.gammasgn), UNARY,
             (F32, F16), _non_integer, differentiable=False),
    OpRecord("special.loggamma", special.loggamma, _wide(scipy.special.loggamma), UNARY,
             (F32,), rand_positive),
    OpRecord("special.betaln", special.betaln, _wide(scipy.special.betaln), BINARY, (F32,),
             _uniform(0.2, 20.0), tol={F32: 1e-4}),
    OpRecord("special.beta", special.beta, _wide(scipy.special.beta), BINARY, (F32,),
             _uniform(0.3, 4.0), tol={F32: 1e-4}),
    OpRecord("special.factorial", special.factorial, _wide(scipy.special.factorial), UNARY,
             (F32,), _uniform(0.0, 6.0), tol={F32: 1e-4}),
    OpRecord("special.comb", special.comb, _wide(scipy.special.comb), [[(4,), (4,)]], (F32,),
             (_uniform(4.0, 9.0), _uniform(0.5, 3.5)), tol={F32: 1e-4}),
    OpRecord("special.poch", special.poch, _wide(scipy.special.poch), BINARY, (F32,),
             (_uniform(0.5, 3.0), _uniform(-0.4, 2.0)), tol={F32: 1e-4}),
    OpRecord("special.multigammaln", lambda a: special.multigammaln(a, 3),
             _wide(lambda a: scipy.special.multigammaln(a, 3)), [[()], [(4,)]], (F32,),
             _uniform(1.2, 6.0), tol={F32: 1e-4}),
    OpRecord("special.polygamma", lambda x: special.polygamma(2, x),
             _wide(lambda x: scipy.special.polygamma(2, x)), UNARY, (F32,),
             _uniform(0.5, 5.0), tol={F32: 1e-4}),
    OpRecord("special.polygamma_orders", special.polygamma, scipy.special.polygamma,
             [[(4,), (4,)]], [(I32, F32)], (_integers(0, 4), _uniform(0.5, 5.0)),
             tol={F32: 1e-4}, expected_dtype=lambda n, x: x, differentiable=False),
    OpRecord("special.zeta", special.zeta, _wide(scipy.special.zeta), BINARY, (F32,),
             (_uniform(1.5, 6.0), _uniform(0.5, 4.0)), tol={F32: 1e-4}, grad_tol=1e-4),
    OpRecord("special.rel_entr", special.rel_entr, _wide(scipy.special.rel_entr), BINARY,
             (F32,), rand_positive),
    OpRecord("special.kl_div", special.kl_div, _wide(scipy.special.kl_div), BINARY, (F32,),
             rand_positive),
    OpRecord("special.boxcox", special.boxcox, _wide(scipy.special.boxcox), BINARY, (F32,),
             (rand_positive, rand_default), tol={F32: 1e-4}),
    OpRecord("special.boxcox1p", special.boxcox1p, _wide(scipy.special.boxcox1p), BINARY,
             (F32,), (rand_positive, rand_default), tol={F32: 1e-4}),
    OpRecord("special.softmax", lambda x: special.softmax(x, axis=-1),
             _wide(lambda x: scipy.special.softmax(x, axis=-1)), [[(5,)], [(2, 3)]], (F32,)),
    OpRecord("special.log_softmax", lambda x: special.log_softmax(x, axis=0),
             _wide(lambda x: scipy.special.log_softmax(x, axis=0)), [[(5,)], [(2, 3)]],
             (F32,)),
    # Between 9.1 and the switch to the asymptotic series (9.4), erfc(x) is subnormal in
    # float32: XLA CPU and the native backend flush it to zero, so erfcx is 0 there, as in JAX.
    OpRecord("special.erfcx", special.erfcx, _wide(scipy.special.erfcx), UNARY, (F32, F16),
             _uniform(-3.0, 9.1), tol={F32: 1e-5, **LOW}),
    OpRecord("special.erfcx_tail", special.erfcx, _wide(scipy.special.erfcx), [[(5,)]], (F32,),
             _uniform(9.5, 1e3), tol={F32: 1e-5}),
    OpRecord("special.dawsn", special.dawsn, _wide(scipy.special.dawsn), UNARY, (F32, BF16),
             _uniform(-9.0, 9.0), tol=LOW),
    OpRecord("special.wofz", special.wofz, scipy.special.wofz, [[(5,)]], (np.dtype(np.complex64),),
             rand_default, differentiable=False),
    OpRecord("special.fresnel_s", _first(special.fresnel), _wide(_first(scipy.special.fresnel)),
             UNARY, (F32,), _uniform(-6.0, 6.0), tol={F32: 1e-5}),
    OpRecord("special.fresnel_c", _second(special.fresnel),
             _wide(_second(scipy.special.fresnel)), UNARY, (F32,), _uniform(-6.0, 6.0),
             tol={F32: 1e-5}),
    OpRecord("special.expi", special.expi, _wide(scipy.special.expi), UNARY, (F32,),
             _uniform(-8.0, 60.0), tol={F32: 1e-5}),
    OpRecord("special.exp1", special.exp1, _wide(scipy.special.exp1), UNARY, (F32,),
             _uniform(0.05, 8.0), tol={F32: 1e-5}, differentiable=False),
    OpRecord("special.expn", lambda x: special.expn(3, x),
             _wide(lambda x: scipy.special.expn(3, x)), UNARY, (F32,), _uniform(0.05, 8.0),
             tol={F32: 1e-5}, differentiable=False),
    OpRecord("special.si", _first(special.sici), _wide(_first(scipy.special.sici)), UNARY,
             (F32,), _uniform(-20.0, 20.0), tol={F32: 1e-5}),
    OpRecord("special.ci", _second(special.sici), _wide(_second(scipy.special.sici)), UNARY,
             (F32,), _uniform(0.1, 20.0), tol={F32: 1e-5}),
    OpRecord("special.spence", special.spence, _wide(scipy.special.spence), UNARY, (F32,),
             _uniform(0.05, 6.0), tol={F32: 1e-5}),
    OpRecord("special.hyp1f1", special.hyp1f1, _wide(scipy.special.hyp1f1),
             [[(), (), ()], [(3,), (3,), (3,)]], (F32,),
             (_uniform(0.2, 3.0), _uniform(0.5, 3.0), _uniform(-4.0, 4.0)), tol={F32: 1e-4},
             differentiable=False),
    OpRecord("special.hyp2f1", special.hyp2f1, _wide(scipy.special.hyp2f1),
             [[(), (), (), ()], [(3,), (3,), (3,), (3,)]], (F32,),
             (_uniform(0.2, 2.0), _uniform(0.2, 2.0), _uniform(2.5, 4.0), _uniform(-0.8, 0.8)),
             tol={F32: 1e-4}, differentiable=False),
    OpRecord("special.owens_t", special.owens_t, _wide(scipy.special.owens_t), BINARY, (F32,),
             (rand_default, rand_default), tol={F32: 1e-5}),
]
