"""Op records for justjax.nn and justjax.scipy.special."""
from __future__ import annotations

import numpy as np
import scipy.special

import justjax.nn as nn
import justjax.scipy.special as special
from tests.harness import (BF16, F16, F32, OpRecord, rand_default, rand_positive, rand_unit)

SHAPES = [[()], [(5,)], [(3, 4)]]
FLOATS = (F32, F16, BF16)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _wide(fn):
    """Reference computed in float64 (the harness casts back to the result dtype)."""
    return lambda *args, **kw: fn(*[np.asarray(a, np.float64) for a in args], **kw)


def _standardize(x, axis=-1):
    mean = x.mean(axis=axis, keepdims=True)
    var = np.maximum((x * x).mean(axis=axis, keepdims=True) - mean * mean, 0)
    return (x - mean) / np.sqrt(var + 1e-5)


def _logmeanexp(x, axis=None):
    return scipy.special.logsumexp(x, axis=axis) - np.log(np.size(x) if axis is None
                                                          else x.shape[axis])


def _glu(x, axis=-1):
    first, second = np.split(x, 2, axis=axis)
    return first * scipy.special.expit(second)


def _probability(rng, shape, dtype):
    """Inside (0, 1), away from the ends (inverse CDFs)."""
    return rng.uniform(0.02, 0.98, shape).astype(dtype)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


LOW = {F16: 5e-3, BF16: 4e-2}

RECORDS = [
    OpRecord("nn.relu", nn.relu, _wide(lambda x: np.maximum(x, 0)), SHAPES, FLOATS),
    OpRecord("nn.relu6", nn.relu6, _wide(lambda x: np.clip(x, 0, 6)), SHAPES, FLOATS),
    OpRecord("nn.sigmoid", nn.sigmoid, _wide(scipy.special.expit), SHAPES, FLOATS, tol=LOW),
    OpRecord("nn.log_sigmoid", nn.log_sigmoid, _wide(lambda x: -np.logaddexp(0, -x)), SHAPES,
             FLOATS, tol=LOW),
    OpRecord("nn.softplus", nn.softplus, _wide(lambda x: np.logaddexp(x, 0)), SHAPES, FLOATS,
             tol=LOW),
    OpRecord("nn.silu", nn.silu, _wide(lambda x: x * scipy.special.expit(x)), SHAPES, FLOATS,
             tol=LOW),
    OpRecord("nn.elu", nn.elu, _wide(lambda x: np.where(x > 0, x, np.expm1(x))), SHAPES, FLOATS,
             tol=LOW),
    OpRecord("nn.leaky_relu", nn.leaky_relu, _wide(lambda x: np.where(x >= 0, x, 0.01 * x)),
             SHAPES, FLOATS, tol=LOW),
    OpRecord("nn.hard_tanh", nn.hard_tanh, _wide(lambda x: np.clip(x, -1, 1)), SHAPES, FLOATS),
    OpRecord("nn.celu", nn.celu, _wide(lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0))),
             SHAPES, (F32,)),
    OpRecord("nn.selu", nn.selu, _wide(lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))), SHAPES, (F32,)),
    OpRecord("nn.gelu_tanh", nn.gelu, _wide(_gelu_tanh), SHAPES, FLOATS, tol=LOW),
    OpRecord("nn.gelu_exact", lambda x: nn.gelu(x, approximate=False),
             _wide(lambda x: 0.5 * x * scipy.special.erfc(-x / np.sqrt(2))), SHAPES, FLOATS,
             tol=LOW),
    OpRecord("nn.softmax", nn.softmax, _wide(_softmax), [[(5,)], [(3, 4)]], FLOATS, tol=LOW),
    OpRecord("nn.softmax_axis0", lambda x: nn.softmax(x, axis=0),
             _wide(lambda x: _softmax(x, axis=0)), [[(3, 4)]], (F32,)),
    OpRecord("nn.log_softmax", nn.log_softmax,
             _wide(lambda x: np.log(_softmax(x))), [[(5,)], [(3, 4)]], FLOATS, tol=LOW),
    OpRecord("nn.logsumexp", nn.logsumexp, _wide(scipy.special.logsumexp), SHAPES, (F32,)),
    OpRecord("nn.standardize", nn.standardize, _wide(_standardize), [[(3, 4)]], (F32,),
             tol={F32: 1e-4}),
    OpRecord("nn.sparse_sigmoid", nn.sparse_sigmoid, _wide(lambda x: np.clip((x + 1) / 2, 0, 1)),
             SHAPES, FLOATS),
    OpRecord("nn.sparse_plus", nn.sparse_plus,
             _wide(lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
             SHAPES, FLOATS, tol=LOW),
    OpRecord("nn.log1mexp", nn.log1mexp, _wide(lambda x: np.log(-np.expm1(-x))), SHAPES,
             (F32,), rand_positive),
    OpRecord("nn.logmeanexp", nn.logmeanexp, _wide(_logmeanexp), SHAPES, (F32,)),
    OpRecord("nn.logmeanexp_axis", lambda x, axis: nn.logmeanexp(x, axis=axis),
             _wide(_logmeanexp), [[(3, 4)]], (F32,), static={"axis": 1}),
    OpRecord("nn.mish", nn.mish, _wide(lambda x: x * np.tanh(np.logaddexp(x, 0))), SHAPES,
             FLOATS, tol=LOW),
    OpRecord("nn.squareplus", nn.squareplus, _wide(lambda x: (x + np.sqrt(x * x + 4)) / 2),
             SHAPES, FLOATS, tol=LOW),
    OpRecord("nn.soft_sign", nn.soft_sign, _wide(lambda x: x / (np.abs(x) + 1)), SHAPES, FLOATS,
             tol=LOW),
    OpRecord("nn.hard_sigmoid", nn.hard_sigmoid, _wide(lambda x: np.clip(x + 3, 0, 6) / 6),
             SHAPES, FLOATS, tol=LOW),
    OpRecord("nn.hard_silu", nn.hard_silu, _wide(lambda x: x * np.clip(x + 3, 0, 6) / 6),
             SHAPES, FLOATS, tol=LOW),
    OpRecord("nn.glu", nn.glu, _wide(_glu), [[(6,)], [(3, 4)]], FLOATS, tol=LOW),
    OpRecord("nn.glu_axis0", lambda x, axis: nn.glu(x, axis=axis), _wide(_glu), [[(4, 3)]],
             (F32,), static={"axis": 0}),
    OpRecord("nn.tanh", nn.tanh, _wide(np.tanh), SHAPES, FLOATS, tol=LOW),
    OpRecord("special.logsumexp_axis", lambda x: special.logsumexp(x, axis=1),
             _wide(lambda x: scipy.special.logsumexp(x, axis=1)), [[(3, 4)]], (F32,)),
    OpRecord("special.logsumexp_keepdims", lambda x: special.logsumexp(x, axis=0, keepdims=True),
             _wide(lambda x: scipy.special.logsumexp(x, axis=0, keepdims=True)), [[(3, 4)]],
             (F32,)),
    OpRecord("special.logsumexp_b", lambda x, b: special.logsumexp(x, b=b),
             _wide(lambda x, b: scipy.special.logsumexp(x, b=b)), [[(5,), (5,)]], (F32,),
             (rand_default, rand_positive)),
    OpRecord("special.erf", special.erf, _wide(scipy.special.erf), SHAPES, FLOATS, tol=LOW),
    OpRecord("special.erfc", special.erfc, _wide(scipy.special.erfc), SHAPES, FLOATS, tol=LOW),
    OpRecord("special.erfinv", special.erfinv, _wide(scipy.special.erfinv), SHAPES, (F32,),
             rand_unit, tol={F32: 1e-4}),
    OpRecord("special.gammaln", special.gammaln, _wide(scipy.special.gammaln), SHAPES, (F32,),
             rand_positive),
    OpRecord("special.digamma", special.digamma, _wide(scipy.special.digamma), SHAPES, (F32,),
             rand_positive, tol={F32: 1e-4}),
    OpRecord("special.expit", special.expit, _wide(scipy.special.expit), SHAPES, FLOATS, tol=LOW),
    OpRecord("special.logit", special.logit, _wide(scipy.special.logit), SHAPES, (F32,),
             lambda rng, shape, dtype: rng.uniform(0.05, 0.95, shape).astype(dtype),
             tol={F32: 1e-4}),
    OpRecord("special.xlogy", special.xlogy, _wide(scipy.special.xlogy), [[(5,), (5,)]], (F32,),
             (rand_default, rand_positive)),
    OpRecord("special.xlog1py", special.xlog1py, _wide(scipy.special.xlog1py), [[(5,), (5,)]],
             (F32,), (rand_default, rand_positive)),
    OpRecord("special.ndtr", special.ndtr, _wide(scipy.special.ndtr), SHAPES, (F32,)),
    OpRecord("special.log_ndtr", special.log_ndtr, _wide(scipy.special.log_ndtr), SHAPES, (F32,)),
    OpRecord("special.log_ndtr_tails", special.log_ndtr, _wide(scipy.special.log_ndtr),
             SHAPES, (F32,), lambda rng, shape, dtype: (rng.uniform(4, 30, shape)
                                                        * rng.choice([-1, 1], shape)
                                                        ).astype(dtype)),
    OpRecord("special.ndtri", special.ndtri, _wide(scipy.special.ndtri), SHAPES, (F32,),
             _probability, tol={F32: 2e-5}),
    OpRecord("special.ndtri_tails", special.ndtri, _wide(scipy.special.ndtri), SHAPES, (F32,),
             lambda rng, shape, dtype: np.exp(-rng.uniform(3, 60, shape)).astype(dtype),
             tol={F32: 2e-5}, differentiable=False),  # finite differences step below 0
    OpRecord("special.entr", special.entr, _wide(scipy.special.entr), SHAPES, (F32,),
             rand_positive),
]
