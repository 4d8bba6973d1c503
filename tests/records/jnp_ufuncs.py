"""Op records for jax.numpy's elementwise functions (`justjax._src.numpy.ufuncs`).

References are NumPy computed in float64/complex128 (JAX computes float16/bfloat16 in float32
and rounds once, so a wide reference rounded to the result dtype is what JAX gives, within the
dtype's tolerance). Result dtypes are checked against JAX's promotion rules, which
`tests/test_promotion.py` checks against tables real JAX produced.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import justjax.numpy as jnp
from tests.harness import (BF16, BOOL, C64, F16, F32, I32, I8, U32, U8, OpRecord, rand_default,
                           rand_nonzero, rand_not_small, rand_positive, rand_small_int, rand_special, rand_unit,
                           widen)

UNARY_SHAPES = [[()], [(2, 3)]]
# Equal shapes, NumPy broadcasting (3,1)x(1,4), rank promotion, and scalar with array.
BINARY_SHAPES = [[(4,), (4,)], [(3, 1), (1, 4)], [(4,), (3, 4)], [(2, 3), ()]]
SHORT_BINARY_SHAPES = [[(4,), (4,)], [(3, 1), (1, 4)], [(), (2, 3)]]

FLOATS = (F32, F16, BF16)
FLOAT_AND_INT = (F32, F16, BF16, I32, U8, BOOL)
INTS = (I32, I8, U8, U32)
NUMERIC = (F32, F16, BF16, I32, I8, U8)
MIXED = ((I8, I32), (U8, I8), (BF16, F16), (I32, F16), (BOOL, I8), (U32, I32), (F32, C64))
MIXED_REAL = MIXED[:-1]
MIXED_INT = ((I8, I32), (U8, I8), (BOOL, I8), (U32, I32))


def _wide(x: np.ndarray) -> np.ndarray:
    return widen(x, integers_to=np.float64, bools_to=np.float64)

def wide(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` applied to float64 copies of the arguments."""
    return lambda *args, **kw: fn(*[_wide(a) for a in args], **kw)


def promoted(*dts: np.dtype) -> np.dtype:
    out = dts[0]
    for d in dts[1:]:
        out = jnp.promote_types(out, d)
    return np.dtype(out)


def inexact(*dts: np.dtype) -> np.dtype:
    out = promoted(*dts)
    return out if out.kind in "fc" or out == BF16 else np.dtype(np.float32)


def numeric(*dts: np.dtype) -> np.dtype:
    out = promoted(*dts)
    return np.dtype(np.int32) if out == BOOL else out


def boolean(*dts: np.dtype) -> np.dtype:
    return np.dtype(bool)


def real_of(*dts: np.dtype) -> np.dtype:
    out = inexact(*dts)
    return np.dtype(np.float32) if out == C64 else out


def rand_above_one(rng: np.random.Generator, shape: Any, dtype: np.dtype) -> np.ndarray:
    values = rand_positive(rng, shape, dtype)
    return (values.astype(np.complex64 if values.dtype.kind == "c" else np.float32)
            + 1).astype(dtype)


def rand_shift(rng: np.random.Generator, shape: Any, dtype: np.dtype) -> np.ndarray:
    """Shift amounts inside the bit width of the narrowest integer tested."""
    return rng.integers(0, 8, shape).astype(dtype)


def unary(name: str, fun: Callable, reference: Callable, dtypes: Any = FLOAT_AND_INT,
          make_args: Any = rand_default, expected: Callable | None = inexact,
          **kwargs: Any) -> OpRecord:
    return OpRecord(f"jnp_{name}", fun, reference, UNARY_SHAPES, dtypes, make_args,
                    expected_dtype=expected, **kwargs)


def binary(name: str, fun: Callable, reference: Callable, dtypes: Any = NUMERIC,
           make_args: Any = rand_default, expected: Callable | None = promoted,
           shapes: Any = BINARY_SHAPES, **kwargs: Any) -> OpRecord:
    return OpRecord(f"jnp_{name}", fun, reference, shapes, dtypes, make_args,
                    expected_dtype=expected, **kwargs)


def _int_ref(fn: Callable) -> Callable:
    """Integer references computed in int64 (cast back to the result dtype by the harness)."""
    return lambda *args: fn(*[np.asarray(a).astype(np.int64) for a in args])


def _shift_right(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.right_shift(x, y.astype(x.dtype))


def _shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.left_shift(x, y.astype(x.dtype))


_TRIG_UNIT = [("arcsin", np.arcsin), ("arccos", np.arccos), ("arctanh", np.arctanh),
              ("asin", np.arcsin), ("acos", np.arccos), ("atanh", np.arctanh)]
_INEXACT_UNARY = [
    ("exp", np.exp, rand_default, True), ("exp2", np.exp2, rand_default, False),
    ("expm1", np.expm1, rand_default, True), ("log", np.log, rand_positive, True),
    ("log1p", np.log1p, rand_positive, True), ("log2", np.log2, rand_positive, True),
    ("log10", np.log10, rand_positive, True), ("sqrt", np.sqrt, rand_positive, True),
    ("cbrt", np.cbrt, rand_default, False), ("sin", np.sin, rand_default, True),
    ("cos", np.cos, rand_default, True), ("tan", np.tan, rand_unit, True),
    ("arctan", np.arctan, rand_default, True), ("atan", np.arctan, rand_default, False),
    ("sinh", np.sinh, rand_default, True), ("cosh", np.cosh, rand_default, True),
    ("tanh", np.tanh, rand_default, True), ("arcsinh", np.arcsinh, rand_default, True),
    ("asinh", np.arcsinh, rand_default, False), ("arccosh", np.arccosh, rand_above_one, True),
    ("acosh", np.arccosh, rand_above_one, False), ("deg2rad", np.deg2rad, rand_default, False),
    ("rad2deg", np.rad2deg, rand_default, False), ("degrees", np.degrees, rand_default, False),
    ("radians", np.radians, rand_default, False), ("sinc", np.sinc, rand_default, False),
    ("reciprocal", np.reciprocal, rand_not_small, True), ("fabs", np.fabs, rand_default, False),
]

RECORDS = [
    *[unary(name, getattr(jnp, name), wide(ref), FLOAT_AND_INT + ((C64,) if cplx else ()),
            make_args) for name, ref, make_args, cplx in _INEXACT_UNARY],
    *[unary(name, getattr(jnp, name), wide(ref), FLOATS + (I32,), rand_unit)
      for name, ref in _TRIG_UNIT],
    unary("negative", jnp.negative, np.negative, NUMERIC + (C64,), expected=promoted),
    unary("positive", jnp.positive, lambda x: x, NUMERIC + (BOOL, C64), expected=promoted),
    unary("absolute", jnp.absolute, np.absolute, NUMERIC + (BOOL, U32), expected=promoted),
    unary("abs_complex", jnp.abs, wide(np.abs), (C64,), expected=real_of),
    unary("sign", jnp.sign, np.sign, NUMERIC + (U32,), expected=promoted),
    unary("square", jnp.square, _int_ref(np.square), (I32, I8, U8, BOOL), expected=numeric),
    unary("square_float", jnp.square, wide(np.square), FLOATS + (C64,), expected=promoted),
    unary("floor", jnp.floor, np.floor, NUMERIC + (BOOL,), expected=promoted),
    unary("ceil", jnp.ceil, np.ceil, NUMERIC + (BOOL,), expected=promoted),
    unary("trunc", jnp.trunc, np.trunc, NUMERIC + (BOOL,), expected=promoted),
    unary("rint", jnp.rint, wide(np.rint), NUMERIC + (BOOL, C64), expected=inexact),
    unary("round", jnp.round, np.round, (F32, F16, I32, C64), expected=promoted),
    unary("round_2", lambda x: jnp.round(x, 2), lambda x: np.round(_wide(x) * 100) / 100,
          (F32, F16, BF16), expected=promoted),
    unary("around_neg", lambda x: jnp.around(x * 10, -1),
          lambda x: np.round(_wide(x) * 10 / 10) * 10, (F32,), expected=promoted),
    unary("isfinite", jnp.isfinite, np.isfinite, (F32, F16, BF16, I32, C64), rand_special,
          expected=boolean),
    unary("isinf", jnp.isinf, np.isinf, (F32, F16, I32, C64), rand_special, expected=boolean),
    unary("isnan", jnp.isnan, np.isnan, (F32, BF16, I32, C64), rand_special, expected=boolean),
    unary("isposinf", jnp.isposinf, np.isposinf, (F32, F16, I32), rand_special,
          expected=boolean),
    unary("isneginf", jnp.isneginf, np.isneginf, (F32, F16, I32), rand_special,
          expected=boolean),
    unary("signbit", jnp.signbit, np.signbit, (F32, F16, BF16, I32, BOOL), rand_special,
          expected=boolean),
    unary("logical_not", jnp.logical_not, np.logical_not, (F32, I32, BOOL), expected=boolean),
    unary("bitwise_not", jnp.bitwise_not, np.invert, INTS + (BOOL,), expected=promoted),
    unary("invert", jnp.invert, np.invert, (I8, U8, BOOL), expected=promoted),
    unary("bitwise_invert", jnp.bitwise_invert, np.invert, (I32, U32), expected=promoted),
    unary("bitwise_count", jnp.bitwise_count, lambda x: np.bitwise_count(np.abs(x)), INTS,
          expected=lambda d: np.dtype(np.uint8)),
    unary("conjugate", jnp.conjugate, np.conjugate, (F32, I32, C64), expected=promoted),
    unary("conj", jnp.conj, np.conj, (F16, C64), expected=promoted),
    unary("real", jnp.real, np.real, (F32, I32, C64), expected=lambda d: np.real(
        np.zeros((), d)).dtype),
    unary("imag", jnp.imag, np.imag, (F32, I32, C64), expected=lambda d: np.real(
        np.zeros((), d)).dtype),
    unary("angle", jnp.angle, wide(np.angle), (F32, I32, C64), expected=real_of),
    unary("angle_deg", lambda z: jnp.angle(z, deg=True), wide(lambda z: np.angle(z, deg=True)),
          (C64,), expected=real_of),
    unary("iscomplex", jnp.iscomplex, np.iscomplex, (F32, C64), expected=boolean),
    unary("isreal", jnp.isreal, np.isreal, (F32, C64), expected=boolean),
    unary("nan_to_num", jnp.nan_to_num, np.nan_to_num, (F32, F16, I32), rand_special,
          expected=promoted),
    unary("nan_to_num_values", lambda x: jnp.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0),
          lambda x: np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0), (F32,), rand_special,
          expected=promoted),
    # JAX has no derivative for nextafter (spacing is built on it).
    unary("spacing", jnp.spacing, np.spacing, (F32,), expected=promoted, differentiable=False),
    unary("frexp", jnp.frexp, np.frexp, (F32, F16), expected=lambda d: (d, np.dtype(np.int32))),
    unary("modf", jnp.modf, wide(np.modf), (F32, F16, I32), expected=inexact),
    unary("power_int_3", lambda x: jnp.power(x, 3), _int_ref(lambda x: x ** 3), (I32, I8, BOOL),
          expected=numeric),
    unary("power_float_3", lambda x: x ** 3, wide(lambda x: x ** 3), FLOATS, expected=promoted),
    unary("power_neg_1", lambda x: x ** -1, wide(lambda x: x ** -1.0), FLOATS, rand_nonzero,
          expected=promoted),
    unary("rpow_2", lambda x: 2 ** x, wide(lambda x: 2.0 ** x), FLOATS, expected=promoted),

    binary("add", jnp.add, wide(np.add), NUMERIC + (BOOL, C64) + MIXED),
    binary("add_bool", jnp.add, np.logical_or, (BOOL,)),
    binary("subtract", jnp.subtract, wide(np.subtract), NUMERIC + (C64,) + MIXED[:4]),
    binary("multiply", jnp.multiply, wide(np.multiply), NUMERIC + (BOOL, C64) + MIXED),
    binary("divide", jnp.divide, wide(np.divide), (F32, F16, BF16, I32, BOOL, C64) + MIXED,
           rand_nonzero, inexact),
    binary("true_divide", jnp.true_divide, wide(np.true_divide), (F32, I8, U8), rand_nonzero,
           inexact, SHORT_BINARY_SHAPES),
    binary("floor_divide", jnp.floor_divide, np.floor_divide,
           (F32, F16, I32, I8, U8, U32) + MIXED_REAL[:4], rand_nonzero, numeric),
    binary("remainder", jnp.remainder, np.remainder, (F32, F16, I32, I8, U8) + MIXED_REAL[:4],
           rand_nonzero, numeric),
    binary("mod", jnp.mod, np.mod, (F32, I32), rand_nonzero, numeric, SHORT_BINARY_SHAPES),
    # Discontinuous wherever x/y crosses an integer, which random inputs land close to;
    # lax.rem's derivative is checked by its own record.
    binary("fmod", jnp.fmod, np.fmod, (F32, F16, I32, I8, U8) + MIXED_REAL[:2], rand_nonzero,
           numeric, differentiable=False),
    binary("divmod", jnp.divmod, np.divmod, (F32, I32, I8) + MIXED_REAL[:1], rand_nonzero,
           numeric, SHORT_BINARY_SHAPES),
    # A concrete 0-d exponent takes the integer_pow path eagerly but not when traced (as in
    # JAX), which changes mixed-dtype results; exponents here are never 0-d.
    binary("power_float", jnp.power, wide(np.power), (F32, F16, BF16, (F32, I32), (F16, I8)),
           [rand_positive, rand_small_int], promoted, SHORT_BINARY_SHAPES),
    binary("power_int", jnp.power, _int_ref(np.power), (I32, I8, U8, (I8, I32), (BOOL, I8)),
           [rand_default, rand_small_int], numeric, SHORT_BINARY_SHAPES),
    binary("pow", jnp.pow, wide(np.power), (F32,), [rand_positive, rand_default], promoted,
           SHORT_BINARY_SHAPES),
    binary("float_power", jnp.float_power, wide(np.float_power), (F32, I32, (I8, F16)),
           [rand_positive, rand_default], inexact),
    binary("arctan2", jnp.arctan2, wide(np.arctan2), (F32, F16, BF16, I32, (I32, F16)),
           expected=inexact),
    binary("atan2", jnp.atan2, wide(np.arctan2), (F32,), expected=inexact,
           shapes=SHORT_BINARY_SHAPES),
    binary("hypot", jnp.hypot, wide(np.hypot), (F32, F16, I32, (I8, F16)), expected=inexact),
    binary("maximum", jnp.maximum, np.maximum, NUMERIC + (BOOL,) + MIXED_REAL),
    binary("minimum", jnp.minimum, np.minimum, NUMERIC + (BOOL,) + MIXED_REAL),
    # The special-value records (NaN, inf, signed zeros) have no finite differences.
    binary("fmax", jnp.fmax, np.fmax, (F32, F16, I32), rand_special, differentiable=False),
    binary("fmin", jnp.fmin, np.fmin, (F32, BF16, I32), rand_special, differentiable=False),
    binary("logaddexp", jnp.logaddexp, wide(np.logaddexp), (F32, F16, I32, (I8, F16)),
           expected=inexact),
    binary("logaddexp2", jnp.logaddexp2, wide(np.logaddexp2), (F32, BF16, I32),
           expected=inexact),
    binary("copysign", jnp.copysign, wide(np.copysign), (F32, F16, I32), rand_special,
           inexact, differentiable=False),
    binary("nextafter", jnp.nextafter, np.nextafter, (F32,), expected=inexact,
           differentiable=False),
    binary("heaviside", jnp.heaviside, wide(np.heaviside), (F32, F16, I32), rand_special,
           inexact),
    binary("ldexp", jnp.ldexp, lambda x, e: np.ldexp(_wide(x), e), ((F32, I32), (F16, I8),
                                                                      (I32, I32)),
           [rand_default, rand_small_int], lambda a, b: inexact(a)),
    binary("gcd", jnp.gcd, _int_ref(np.gcd), INTS + MIXED_INT),
    binary("lcm", jnp.lcm, _int_ref(np.lcm), (I32, I8, U8, (I8, I32))),
    binary("left_shift", jnp.left_shift, _shift_left, INTS, [rand_default, rand_shift],
           numeric),
    binary("right_shift", jnp.right_shift, _shift_right, INTS, [rand_default, rand_shift],
           numeric),
    binary("bitwise_left_shift", jnp.bitwise_left_shift, _shift_left, (I32,),
           [rand_default, rand_shift], numeric, SHORT_BINARY_SHAPES),
    binary("bitwise_right_shift", jnp.bitwise_right_shift, _shift_right, (I8, U8),
           [rand_default, rand_shift], numeric, SHORT_BINARY_SHAPES),
    binary("bitwise_and", jnp.bitwise_and, np.bitwise_and, INTS + (BOOL,) + MIXED_INT),
    binary("bitwise_or", jnp.bitwise_or, np.bitwise_or, INTS + (BOOL,) + MIXED_INT),
    binary("bitwise_xor", jnp.bitwise_xor, np.bitwise_xor, INTS + (BOOL,) + MIXED_INT),
    *[binary(name, getattr(jnp, name), wide(getattr(np, name)), NUMERIC + (BOOL,) + MIXED_REAL,
             rand_small_int, boolean)
      for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")],
    binary("equal_complex", jnp.equal, np.equal, (C64,), rand_small_int, boolean,
           SHORT_BINARY_SHAPES),
    binary("less_complex", jnp.less, np.less, (C64,), rand_small_int, boolean,
           SHORT_BINARY_SHAPES),
    *[binary(name, getattr(jnp, name), getattr(np, name), (F32, I32, BOOL, (I8, F32)),
             rand_small_int, boolean)
      for name in ("logical_and", "logical_or", "logical_xor")],
    # Python scalars are weak: the array's dtype wins.
    unary("add_python_int", lambda x: x + 3, wide(lambda x: x + 3), (F16, BF16, I8, U8),
          expected=promoted),
    unary("multiply_python_float", lambda x: 2.5 * x, wide(lambda x: 2.5 * x), (F16, BF16, F32),
          expected=promoted),
    unary("subtract_python_float_from_int", lambda x: x - 0.5, wide(lambda x: x - 0.5),
          (I8, U8), expected=lambda d: np.dtype(np.float32)),
    unary("floordiv_python_int", lambda x: x // 2, lambda x: np.floor_divide(x, 2), (I32, F16),
          expected=promoted),
    unary("mod_python_int", lambda x: x % 3, lambda x: np.mod(x, 3), (I8, F32),
          expected=promoted),
]
