"""Op records for the elementwise lax primitives."""
from __future__ import annotations

import numpy as np
import scipy.special

from justjax import lax
from justjax._src.lax import elementwise as lax_elementwise
from tests.harness import (BF16, BOOL, C64, F16, F32, FLOATS, I8, I32, INTS, U8, U32, OpRecord,
                           rand_default, rand_nonzero, rand_positive, rand_small_int,
                           rand_special, rand_unit)

UNARY_SHAPES = [[()], [(5,)], [(2, 3)]]
BINARY_SHAPES = [[(), ()], [(4,), (4,)], [(2, 3), (2, 3)], [(2, 3), ()], [(1, 3), (2, 3)]]


def _bool(dtype_in: np.dtype, *rest: np.dtype) -> np.dtype:
    return np.dtype(bool)


def unary(name, fun, reference, dtypes=FLOATS, make_args=rand_default, **kwargs) -> OpRecord:
    return OpRecord(name, fun, reference, UNARY_SHAPES, dtypes, make_args, **kwargs)


def binary(name, fun, reference, dtypes=FLOATS, make_args=rand_default, **kwargs) -> OpRecord:
    return OpRecord(name, fun, reference, BINARY_SHAPES, dtypes, make_args, **kwargs)


def _rand_far_from_zero(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Divisors: floats of magnitude in [0.5, 3] (near 0 a quotient's finite differences
    blow up, and fmod's jump), nonzero integers."""
    if np.dtype(dtype).kind in "iu":
        return rand_nonzero(rng, shape, dtype)
    magnitude = rng.uniform(0.5, 3.0, shape)
    return (np.where(rng.random(shape) < 0.5, -1, 1) * magnitude).astype(dtype)


def _rand_integral(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """polygamma's orders: whole numbers 0..3."""
    return rng.integers(0, 4, shape).astype(dtype)


def _xla_int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    quotient = np.trunc(x.astype(np.float64) / y.astype(np.float64))
    return quotient.astype(x.dtype)


RECORDS = [
    unary("neg", lax.neg, np.negative, FLOATS + (I32, I8)),
    unary("sign", lax.sign, np.sign, FLOATS + (I32,)),
    unary("floor", lax.floor, np.floor),
    unary("ceil", lax.ceil, np.ceil),
    unary("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.round,
          (F32,)),
    unary("round_away", lax.round,
          lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x), (F32,)),
    unary("is_finite", lax.is_finite, np.isfinite, (F32, F16), rand_special,
          expected_dtype=_bool),
    unary("exp", lax.exp, np.exp, FLOATS + (C64,)),
    unary("exp2", lax.exp2, np.exp2),
    unary("log", lax.log, np.log, FLOATS, rand_positive),
    unary("log1p", lax.log1p, np.log1p, FLOATS, rand_positive),
    unary("expm1", lax.expm1, np.expm1),
    unary("tanh", lax.tanh, np.tanh, FLOATS + (C64,)),
    unary("logistic", lax.logistic, scipy.special.expit),
    unary("sin", lax.sin, np.sin, FLOATS + (C64,)),
    unary("cos", lax.cos, np.cos, FLOATS + (C64,)),
    unary("tan", lax.tan, np.tan, FLOATS, rand_unit),
    unary("asin", lax.asin, np.arcsin, FLOATS, rand_unit),
    unary("acos", lax.acos, np.arccos, FLOATS, rand_unit),
    unary("atan", lax.atan, np.arctan),
    unary("sinh", lax.sinh, np.sinh),
    unary("cosh", lax.cosh, np.cosh),
    unary("asinh", lax.asinh, np.arcsinh),
    unary("acosh", lax.acosh, np.arccosh, FLOATS,
          lambda rng, shape, dtype: rand_positive(rng, shape, dtype) + np.array(1, dtype)),
    unary("atanh", lax.atanh, np.arctanh, FLOATS, rand_unit),
    unary("sqrt", lax.sqrt, np.sqrt, FLOATS, rand_positive),
    unary("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS, rand_positive),
    unary("cbrt", lax.cbrt, np.cbrt),
    unary("erf", lax.erf, scipy.special.erf),
    unary("erfc", lax.erfc, scipy.special.erfc),
    unary("erf_inv", lax.erf_inv, scipy.special.erfinv, (F32,), rand_unit),
    unary("lgamma", lax.lgamma, scipy.special.gammaln, (F32,), rand_positive),
    unary("digamma", lax.digamma, scipy.special.digamma, (F32,), rand_positive),
    unary("abs", lax.abs, np.abs, FLOATS + (I32,)),
    unary("abs_complex", lax.abs, np.abs, (C64,), expected_dtype=lambda d: np.dtype(np.float32)),
    unary("not", lax.bitwise_not, np.invert, (BOOL,) + INTS, differentiable=False),
    unary("population_count", lax.population_count,
          lambda x: np.bitwise_count(x.view(f"u{x.dtype.itemsize}")).astype(x.dtype), INTS,
          differentiable=False),
    unary("clz", lax.clz,
          lambda x: np.array([x.dtype.itemsize * 8 - int(v).bit_length()
                              for v in x.reshape(-1).view(f"u{x.dtype.itemsize}")],
                             dtype=x.dtype).reshape(x.shape), INTS, differentiable=False),
    unary("real", lax.real, np.real, (C64,), expected_dtype=lambda d: np.dtype(np.float32)),
    unary("imag", lax.imag, np.imag, (C64,), expected_dtype=lambda d: np.dtype(np.float32)),
    unary("conj", lax.conj, np.conj, (C64,)),
    unary("square", lax.square, np.square, FLOATS + (I32,)),
    unary("copy", lax.copy, np.copy, FLOATS + (I32, BOOL)),
    OpRecord("reduce_precision_bf16", lax.reduce_precision,
             lambda x, **kw: x.astype(BF16).astype(x.dtype), UNARY_SHAPES, (F32,),
             static={"exponent_bits": 8, "mantissa_bits": 7}, differentiable=False),
    OpRecord("reduce_precision_f16", lax.reduce_precision,
             lambda x, **kw: x.astype(F16).astype(x.dtype), UNARY_SHAPES, (F32,),
             static={"exponent_bits": 5, "mantissa_bits": 10}, differentiable=False),
    OpRecord("integer_pow", lax.integer_pow, lambda x, y: x.astype(np.float64) ** y,
             UNARY_SHAPES, (F32, I32), rand_small_int, static={"y": 3}),
    OpRecord("integer_pow_negative", lax.integer_pow, lambda x, y: x.astype(np.float64) ** y,
             UNARY_SHAPES, (F32,), rand_positive, static={"y": -2}),

    binary("add", lax.add, np.add, FLOATS + INTS + (C64,)),
    binary("sub", lax.sub, np.subtract, FLOATS + INTS),
    binary("mul", lax.mul, np.multiply, FLOATS + INTS + (C64,)),
    binary("div", lax.div, np.true_divide, FLOATS, (rand_default, _rand_far_from_zero)),
    binary("div_int", lax.div, _xla_int_div, (I32, I8), (rand_default, rand_nonzero),
           differentiable=False),
    binary("rem", lax.rem, np.fmod, FLOATS + (I32,), (rand_default, _rand_far_from_zero)),
    binary("max", lax.max, np.maximum, FLOATS + INTS),
    binary("min", lax.min, np.minimum, FLOATS + INTS),
    binary("atan2", lax.atan2, np.arctan2),
    binary("pow", lax.pow, np.power, (F32,), (rand_positive, rand_default)),
    # No derivative rule, as in JAX.
    binary("nextafter", lax.nextafter, np.nextafter, (F32,), differentiable=False),
    # Not differentiable in the order m (JAX raises); the x derivative is checked in
    # tests/test_ad_elementwise.py.
    binary("polygamma", lax_elementwise.polygamma, scipy.special.polygamma, (F32,),
           (_rand_integral, rand_positive), differentiable=False),
    binary("and", lax.bitwise_and, np.bitwise_and, (BOOL,) + INTS, differentiable=False),
    binary("or", lax.bitwise_or, np.bitwise_or, (BOOL,) + INTS, differentiable=False),
    binary("xor", lax.bitwise_xor, np.bitwise_xor, (BOOL,) + INTS, differentiable=False),
    binary("shift_left", lax.shift_left, np.left_shift, (I32, U8), rand_small_int,
           differentiable=False),
    binary("shift_right_logical", lax.shift_right_logical, np.right_shift, (U32, U8),
           rand_small_int, differentiable=False),
    binary("shift_right_arithmetic", lax.shift_right_arithmetic, np.right_shift, (I32, I8),
           (rand_default, rand_small_int), differentiable=False),
    binary("complex", lax.complex, lambda x, y: x + 1j * y, (F32,),
           expected_dtype=lambda a, b: np.dtype(np.complex64)),
    binary("eq", lax.eq, np.equal, (F32, I32, BOOL), expected_dtype=_bool, differentiable=False),
    binary("ne", lax.ne, np.not_equal, (F32, I32), expected_dtype=_bool, differentiable=False),
    binary("lt", lax.lt, np.less, (F32, I32, U8), expected_dtype=_bool, differentiable=False),
    binary("le", lax.le, np.less_equal, (F32, I32), expected_dtype=_bool, differentiable=False),
    binary("gt", lax.gt, np.greater, (F32, I32), expected_dtype=_bool, differentiable=False),
    binary("ge", lax.ge, np.greater_equal, (F32, BF16), expected_dtype=_bool,
           differentiable=False),
]

# `test_vmap` batches only a record's first case. These records lead with the shapes that
# matter to the batching rules: operands of different rank (a rank-0 operand beside a
# matrix, mapped or not), lax's size-1 broadcasting, an integer exponent of another dtype,
# and unary primitives with parameters on matrices (a batch axis inside or last).
RECORDS += [
    OpRecord("add_matrix_scalar", lax.add, np.add, [[(2, 3), ()]], (F32, I32)),
    OpRecord("sub_scalar_matrix", lax.sub, np.subtract, [[(), (2, 3)]], (F32,)),
    OpRecord("mul_unit_broadcast", lax.mul, np.multiply, [[(1, 3), (2, 3)], [(2, 1), (2, 3)]],
             (F32,)),
    OpRecord("max_matrices", lax.max, np.maximum, [[(2, 3), (2, 3)]], (F32, I32)),
    OpRecord("lt_matrix_scalar", lax.lt, np.less, [[(2, 3), ()]], (F32,),
             expected_dtype=_bool, differentiable=False),
    OpRecord("pow_int_exponent", lax.pow, lambda x, y: np.power(x, y.astype(x.dtype)),
             [[(2, 3), (2, 3)], [(2, 3), ()]], [(F32, I32)], (rand_positive, rand_small_int),
             differentiable=False),
    OpRecord("atan2_matrix_scalar", lax.atan2, np.arctan2, [[(2, 3), ()]], (F32,)),
    OpRecord("integer_pow_matrix", lax.integer_pow, lambda x, y: x.astype(np.float64) ** y,
             [[(2, 3)]], (F32, I32), rand_small_int, static={"y": 3}),
    OpRecord("reduce_precision_matrix", lax.reduce_precision,
             lambda x, **kw: x.astype(BF16).astype(x.dtype), [[(2, 3)]], (F32,),
             static={"exponent_bits": 8, "mantissa_bits": 7}, differentiable=False),
    OpRecord("round_even_matrix", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
             np.round, [[(2, 3)]], (F32,)),
    OpRecord("conj_real_matrix", lax.conj, lambda x: np.conj(x).astype(np.complex64),
             [[(2, 3)]], (F32,), expected_dtype=lambda d: np.dtype(np.complex64),
             differentiable=False),
    OpRecord("exp_matrix", lax.exp, np.exp, [[(2, 3)]], (F32,)),
]
