"""Elementwise primitives: arithmetic, comparison, logic, bit ops, transcendentals, conversion.

Each primitive is defined in one place with its abstract evaluation and its eager
implementation; other transforms register their rules beside these in later modules.
Integer semantics follow XLA: division truncates toward zero, x / 0 is -1 and x % 0 is x,
shifts by the bit width or more give 0 (or the sign for arithmetic right shifts), overflow wraps.
"""
from __future__ import annotations

import enum
from typing import Any, Callable, Sequence

import numpy as np
import scipy.special

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import JaxprEqn, PrettyContext, pp_eqn_default, pp_eqn_rules
from justjax._src.interpreters import batching
from justjax._src.lax import utils
from justjax._src.lax.utils import (ANY, COMPLEX, FLOAT, INEXACT, INT, INT_OR_BOOL, NUMERIC,
                                    def_numpy_impl, standard_primitive)

__all__ = [
    "AccuracyMode", "RoundingMethod", "abs", "abs_p", "acos", "acos_p", "acosh", "acosh_p",
    "add", "add_p", "and_p", "asin", "asin_p", "asinh", "asinh_p", "atan", "atan2", "atan2_p",
    "atan_p", "atanh", "atanh_p", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "cbrt", "cbrt_p", "ceil", "ceil_p", "clz", "clz_p", "complex", "complex_p", "conj",
    "conj_p", "cos", "cos_p", "cosh", "cosh_p", "digamma", "digamma_p", "div", "div_p", "eq",
    "eq_p", "erf", "erf_inv", "erf_inv_p", "erf_p", "erfc", "erfc_p", "exp", "exp2", "exp2_p",
    "exp_p", "expm1", "expm1_p", "floor", "floor_p", "ge", "ge_p", "gt", "gt_p", "imag",
    "imag_p", "integer_pow", "integer_pow_p", "is_finite", "is_finite_p", "le", "le_p",
    "lgamma", "lgamma_p", "log", "log1p", "log1p_p", "log_p", "logistic", "logistic_p", "lt",
    "lt_p", "max", "max_p", "min", "min_p", "mul", "mul_p", "ne", "ne_p", "neg", "neg_p",
    "nextafter", "nextafter_p", "not_p", "or_p",
    "polygamma", "polygamma_p", "population_count", "population_count_p", "pow", "pow_p", "real", "real_p",
    "reduce_precision", "reduce_precision_p", "rem", "rem_p", "round", "round_p", "rsqrt",
    "rsqrt_p", "shift_left", "shift_left_p", "shift_right_arithmetic",
    "shift_right_arithmetic_p", "shift_right_logical", "shift_right_logical_p", "sign",
    "sign_p", "sin", "sin_p", "sinh", "sinh_p", "sqrt", "sqrt_p", "square", "square_p", "sub",
    "sub_p", "tan", "tan_p", "tanh", "tanh_p", "xor_p",
]


def naryop(name: str, accepted: Sequence[Sequence[np.dtype]], numpy_fn: Callable, *,
           result_dtype: Callable[[np.dtype], np.dtype] = lambda d: d,
           require_same_dtypes: bool = True, low_precision_in_f32: bool = True,
           weak_type_rule: Callable | None = None) -> Primitive:
    """An elementwise primitive over operands of equal shape (rank-0 operands broadcast)."""
    def shape_rule(*avals: ShapedArray, **params: Any) -> tuple[int, ...]:
        return utils.broadcasting_shape_rule(name, *avals)

    def dtype_rule(*avals: ShapedArray, **params: Any) -> np.dtype:
        if len(avals) != len(accepted):
            raise TypeError(f"{name} takes {len(accepted)} operands, got {len(avals)}")
        for position, (aval, ok) in enumerate(zip(avals, accepted, strict=True)):
            utils.check_dtype(name, aval, ok, position if len(avals) > 1 else None)
        if require_same_dtypes:
            utils.check_same_dtypes(name, *avals)
        return result_dtype(avals[0].dtype)

    def impl(*values: np.ndarray, **params: Any) -> np.ndarray:
        # `accuracy` and `out_dtype` only matter to compiled code; NumPy computes in full.
        params.pop("accuracy", None)
        params.pop("out_dtype", None)
        return numpy_fn(*values, **params)

    prim = standard_primitive(name, shape_rule, dtype_rule, weak_type_rule)
    def_numpy_impl(prim, impl, low_precision_in_f32=low_precision_in_f32)
    if len(accepted) == 1:
        batching.defvectorized(prim)
    else:
        batching.defbroadcasting(prim)
    return prim


def unop(name: str, accepted: Sequence[np.dtype], numpy_fn: Callable, **kwargs: Any) -> Primitive:
    return naryop(name, [accepted], numpy_fn, **kwargs)


def binop(name: str, accepted: Sequence[np.dtype], numpy_fn: Callable, **kwargs: Any) -> Primitive:
    return naryop(name, [accepted, accepted], numpy_fn, **kwargs)


def _to_bool(dtype: np.dtype) -> np.dtype:
    return dtypes.bool_


def _to_real(dtype: np.dtype) -> np.dtype:
    return dtypes.real_dtype(dtype)


# -- integer arithmetic with XLA's edge cases --------------------------------------------------

def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    safe_y = np.where(y == 0, 1, y)
    if dtypes.is_signed(x.dtype):
        # INT_MIN / -1 overflows; XLA gives INT_MIN.
        overflow = (x == np.iinfo(x.dtype).min) & (y == -1)
        safe_y = np.where(overflow, 1, safe_y)
        quotient = np.abs(x.astype(np.int64)) // np.abs(safe_y.astype(np.int64))
        quotient = np.where((x < 0) != (safe_y < 0), -quotient, quotient).astype(x.dtype)
    else:
        quotient = x // safe_y
    return np.where(y == 0, np.array(-1).astype(x.dtype), quotient)


def _int_rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    safe_y = np.where(y == 0, 1, y)
    if dtypes.is_signed(x.dtype):
        safe_y = np.where(safe_y == -1, 1, safe_y)  # x % -1 == 0, and avoids INT_MIN % -1
        result = np.fmod(x, safe_y)
    else:
        result = x % safe_y
    return np.where(y == 0, x, result).astype(x.dtype)


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dtypes.is_int(x.dtype):
        return _int_div(x, y)
    return np.true_divide(x, y)


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dtypes.is_int(x.dtype):
        return _int_rem(x, y)
    return np.fmod(x, y)


def _shift(kind: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def shift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.broadcast_arrays(x, y)
        bits = x.dtype.itemsize * 8
        unsigned = np.dtype(f"u{x.dtype.itemsize}")
        count = y.astype(unsigned)  # negative counts are huge, hence out of range, as in XLA
        in_range = count < bits
        safe = np.where(in_range, count, 0).astype(unsigned)
        if kind == "left":
            result = (x.view(unsigned) << safe).view(x.dtype)
            return np.where(in_range, result, 0).astype(x.dtype)
        if kind == "right_logical":
            result = (x.view(unsigned) >> safe).view(x.dtype)
            return np.where(in_range, result, 0).astype(x.dtype)
        signed = np.dtype(f"i{x.dtype.itemsize}")
        result = (x.view(signed) >> safe.astype(signed)).view(x.dtype)
        fill = np.where(x.view(signed) < 0, -1, 0).astype(signed).view(x.dtype)
        return np.where(in_range, result, fill).astype(x.dtype)
    return shift


def _population_count(x: np.ndarray) -> np.ndarray:
    # Count the two's-complement bits: np.bitwise_count counts those of |x| for signed ints.
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.bitwise_count(unsigned).astype(x.dtype)


def _clz(x: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    count = np.full(x.shape, bits, dtype=np.int64)
    remaining = unsigned.copy()
    width = np.zeros(x.shape, dtype=np.int64)
    while np.any(remaining):
        nonzero = remaining != 0
        width = np.where(nonzero, width + 1, width)
        remaining = remaining >> np.uint64(1)
    return (count - width).astype(x.dtype)


def _sign(x: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        magnitude = np.abs(x)
        return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude))
    if dtypes.is_unsigned(x.dtype):
        return (x != 0).astype(x.dtype)
    return np.sign(x)


def _logistic(x: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        return 1 / (1 + np.exp(-x))  # scipy's expit is real-only
    return scipy.special.expit(x)


def _round(x: np.ndarray, rounding_method: Any) -> np.ndarray:
    if int(rounding_method) == int(RoundingMethod.TO_NEAREST_EVEN):
        return np.round(x)
    return np.copysign(np.floor(np.abs(x) + np.array(0.5, x.dtype)), x)


def _integer_pow(x: np.ndarray, y: int) -> np.ndarray:
    if y == 0:
        return np.ones_like(x)
    base = x if y > 0 else np.reciprocal(x) if dtypes.is_inexact(x.dtype) else x
    exponent = abs(y)
    # Binary exponentiation with the same multiplication order as XLA's expansion.
    result = None
    while exponent:
        if exponent & 1:
            result = base if result is None else result * base
        exponent >>= 1
        if exponent:
            base = base * base
    return result


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dtypes.is_int(y.dtype) and not dtypes.is_int(x.dtype):
        return np.power(x, y.astype(x.dtype))
    return np.power(x, y)


def _polygamma(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    # XLA's polygamma is NaN unless the order is a non-negative integer.
    valid = (m >= 0) & (m == np.floor(m))
    with np.errstate(all="ignore"):
        result = scipy.special.polygamma(np.where(valid, m, 0), x)
    return np.where(valid, result, np.nan).astype(x.dtype)


def _nextafter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype == dtypes.bfloat16:
        bits = x.view(np.uint16).astype(np.int32)
        toward = np.where(np.isnan(x) | np.isnan(y), np.nan, 0)
        step = np.where(y > x, 1, -1) * np.where(x.astype(np.float32) >= 0, 1, -1)
        out = (bits + np.where(x == y, 0, step)).astype(np.uint16).view(dtypes.bfloat16)
        out = np.where(x == 0, np.where(y > 0, 1, -1).astype(np.float32) * 9.18355e-41, out)
        return np.where(np.isnan(toward), np.nan, np.where(x == y, y, out)).astype(x.dtype)
    return np.nextafter(x, y)


def _reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """Rounds to `mantissa_bits` (nearest, ties to even) and clamps to the exponent range of
    `exponent_bits`: overflow becomes inf and values below the smallest normal become zero."""
    wide = x.astype(np.float64) if x.dtype == np.float64 else x.astype(np.float32)
    if wide.dtype == np.float32:
        total_exp, total_man, uint = 8, 23, np.uint32
    else:
        total_exp, total_man, uint = 11, 52, np.uint64
    bits = wide.view(uint).copy()
    if mantissa_bits < total_man:
        shift = uint(total_man - mantissa_bits)
        one = uint(1)
        last = (bits >> shift) & one
        bias = ((one << (shift - one)) - one) + last
        bits = ((bits + bias) >> shift) << shift
    result = bits.view(wide.dtype)
    if exponent_bits < total_exp:
        max_exp = 2 ** (exponent_bits - 1) - 1
        largest = np.ldexp(2 - 2.0 ** -mantissa_bits, max_exp)
        smallest_normal = np.ldexp(1.0, 1 - max_exp)
        result = np.where(np.abs(result) > largest, np.copysign(np.inf, result), result)
        result = np.where(np.abs(result) < smallest_normal, np.copysign(0.0, result), result)
    result = np.where(np.isnan(wide), wide, result)
    return result.astype(x.dtype)


class RoundingMethod(enum.IntEnum):
    """How `lax.round` breaks ties."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class AccuracyMode(enum.Enum):
    """A transcendental's requested accuracy (its `accuracy` parameter); `HIGHEST` also makes
    the derivatives of tanh, logistic and expm1 use their most accurate formulas."""

    HIGHEST = 1
    DEFAULT = 2


# -- the primitives ----------------------------------------------------------------------------

neg_p = unop("neg", NUMERIC, np.negative)
sign_p = unop("sign", NUMERIC, _sign)
floor_p = unop("floor", FLOAT, np.floor)
ceil_p = unop("ceil", FLOAT, np.ceil)
round_p = unop("round", FLOAT, _round)
is_finite_p = unop("is_finite", FLOAT, np.isfinite, result_dtype=_to_bool)
exp_p = unop("exp", INEXACT, np.exp)
exp2_p = unop("exp2", INEXACT, np.exp2)
log_p = unop("log", INEXACT, np.log)
log1p_p = unop("log1p", INEXACT, np.log1p)
expm1_p = unop("expm1", INEXACT, np.expm1)
tanh_p = unop("tanh", INEXACT, np.tanh)
logistic_p = unop("logistic", INEXACT, _logistic)
sin_p = unop("sin", INEXACT, np.sin)
cos_p = unop("cos", INEXACT, np.cos)
tan_p = unop("tan", INEXACT, np.tan)
asin_p = unop("asin", INEXACT, np.arcsin)
acos_p = unop("acos", INEXACT, np.arccos)
atan_p = unop("atan", INEXACT, np.arctan)
sinh_p = unop("sinh", INEXACT, np.sinh)
cosh_p = unop("cosh", INEXACT, np.cosh)
asinh_p = unop("asinh", INEXACT, np.arcsinh)
acosh_p = unop("acosh", INEXACT, np.arccosh)
atanh_p = unop("atanh", INEXACT, np.arctanh)
sqrt_p = unop("sqrt", INEXACT, np.sqrt)
rsqrt_p = unop("rsqrt", INEXACT, lambda x: 1 / np.sqrt(x))
cbrt_p = unop("cbrt", FLOAT, np.cbrt)
erf_p = unop("erf", FLOAT, scipy.special.erf)
erfc_p = unop("erfc", FLOAT, scipy.special.erfc)
erf_inv_p = unop("erf_inv", FLOAT, scipy.special.erfinv)
lgamma_p = unop("lgamma", FLOAT, scipy.special.gammaln)
def _digamma(x: np.ndarray) -> np.ndarray:
    # XLA's digamma is NaN at its poles (0, -1, -2, ...) where SciPy gives -inf at 0.
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, scipy.special.digamma(x))


digamma_p = unop("digamma", FLOAT, _digamma)
abs_p = unop("abs", NUMERIC, np.abs, result_dtype=_to_real)
not_p = unop("not", INT_OR_BOOL, np.invert)
population_count_p = unop("population_count", INT, _population_count)
clz_p = unop("clz", INT, _clz)
real_p = unop("real", COMPLEX, np.real, result_dtype=_to_real)
imag_p = unop("imag", COMPLEX, np.imag, result_dtype=_to_real)
conj_p = unop("conj", INEXACT, lambda x, input_dtype: np.conj(x),
              result_dtype=lambda d: d if dtypes.is_complex(d) else dtypes.to_complex_dtype(d))
square_p = unop("square", NUMERIC, np.square)
reduce_precision_p = unop("reduce_precision", FLOAT, _reduce_precision, low_precision_in_f32=False)
integer_pow_p = unop("integer_pow", NUMERIC, _integer_pow)

add_p = binop("add", NUMERIC, np.add)
sub_p = binop("sub", NUMERIC, np.subtract)
mul_p = binop("mul", NUMERIC, np.multiply)
div_p = binop("div", NUMERIC, _div)
rem_p = binop("rem", INT + FLOAT, _rem)
max_p = binop("max", ANY, np.maximum)
min_p = binop("min", ANY, np.minimum)
atan2_p = binop("atan2", INEXACT, np.arctan2)
polygamma_p = binop("polygamma", FLOAT, _polygamma)
nextafter_p = binop("nextafter", FLOAT, _nextafter, low_precision_in_f32=False)
and_p = binop("and", INT_OR_BOOL, np.bitwise_and)
or_p = binop("or", INT_OR_BOOL, np.bitwise_or)
xor_p = binop("xor", INT_OR_BOOL, np.bitwise_xor)
shift_left_p = binop("shift_left", INT, _shift("left"))
shift_right_logical_p = binop("shift_right_logical", INT, _shift("right_logical"))
shift_right_arithmetic_p = binop("shift_right_arithmetic", INT, _shift("right_arithmetic"))
pow_p = naryop("pow", [INEXACT, INEXACT + INT], _pow, require_same_dtypes=False)
complex_p = binop("complex", (dtypes.float32, dtypes.float64), lambda x, y: x + 1j * y,
                  result_dtype=dtypes.to_complex_dtype)

eq_p = binop("eq", ANY, np.equal, result_dtype=_to_bool)
ne_p = binop("ne", ANY, np.not_equal, result_dtype=_to_bool)
_ORDERED = utils.INT + utils.FLOAT + utils.BOOL
lt_p = binop("lt", _ORDERED, np.less, result_dtype=_to_bool)
le_p = binop("le", _ORDERED, np.less_equal, result_dtype=_to_bool)
gt_p = binop("gt", _ORDERED, np.greater, result_dtype=_to_bool)
ge_p = binop("ge", _ORDERED, np.greater_equal, result_dtype=_to_bool)


def _pow_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    """`pow` takes an integer exponent of any width, or a float one of the base's dtype."""
    for position, (aval, accepted) in enumerate(((x, INEXACT), (y, INEXACT + INT))):
        utils.check_dtype("pow", aval, accepted, position)
    if dtypes.is_inexact(y.dtype):
        utils.check_same_dtypes("pow", x, y)
    return ShapedArray(utils.broadcasting_shape_rule("pow", x, y), x.dtype,
                       utils.standard_weak_type_rule(x, y))


pow_p.def_abstract_eval(_pow_abstract)


def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    utils.check_dtype("integer_pow", x, NUMERIC)
    if y < 0 and dtypes.is_int(x.dtype):
        raise TypeError("Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short(short_dtypes=False)}, {y})")
    return x


integer_pow_p.def_abstract_eval(_integer_pow_abstract)


def _round_abstract(x: ShapedArray, *, rounding_method: Any) -> ShapedArray:
    utils.check_dtype("round", x, FLOAT)
    return x


round_p.def_abstract_eval(_round_abstract)


# JAX gives these an `accuracy` parameter (a requested precision; None is the default) and mul an
# `out_dtype`; both are hidden when printing jaxprs while they are None.
ACCURACY_PRIMITIVES = (exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p, sin_p, cos_p,
                       tan_p, sqrt_p, rsqrt_p, cbrt_p)


def _pp_hiding_none(*names: str) -> Callable:
    def rule(eqn: JaxprEqn, context: PrettyContext) -> Any:
        params = {k: v for k, v in eqn.params.items() if not (k in names and v is None)}
        return pp_eqn_default(eqn, context, params)
    return rule


for _prim in ACCURACY_PRIMITIVES:
    pp_eqn_rules[_prim] = _pp_hiding_none("accuracy")
pp_eqn_rules[mul_p] = _pp_hiding_none("out_dtype")


# -- public lax functions ----------------------------------------------------------------------

# lax function names that differ from their primitive's name.
_PUBLIC_NAMES = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or",
                 "xor": "bitwise_xor"}


def _unary(prim: Primitive) -> Callable[[Any], Any]:
    if prim in ACCURACY_PRIMITIVES:
        def op(x: Any, accuracy: Any = None) -> Any:
            return prim.bind(x, accuracy=accuracy)
    else:
        def op(x: Any) -> Any:
            return prim.bind(x)
    op.__name__ = op.__qualname__ = _PUBLIC_NAMES.get(prim.name, prim.name)
    op.__doc__ = f"Elementwise `{prim.name}` (lowers to the StableHLO op of the same meaning)."
    return op


def _binary(prim: Primitive) -> Callable[[Any, Any], Any]:
    if prim is mul_p:
        def op(x: Any, y: Any) -> Any:
            return prim.bind(x, y, out_dtype=None)
    else:
        def op(x: Any, y: Any) -> Any:
            return prim.bind(x, y)
    op.__name__ = op.__qualname__ = _PUBLIC_NAMES.get(prim.name, prim.name)
    op.__doc__ = f"Elementwise `{prim.name}` of two arrays of one dtype and shape (or scalars)."
    return op


neg = _unary(neg_p)
sign = _unary(sign_p)
floor = _unary(floor_p)
ceil = _unary(ceil_p)
is_finite = _unary(is_finite_p)
exp = _unary(exp_p)
exp2 = _unary(exp2_p)
log = _unary(log_p)
log1p = _unary(log1p_p)
expm1 = _unary(expm1_p)
tanh = _unary(tanh_p)
logistic = _unary(logistic_p)
sin = _unary(sin_p)
cos = _unary(cos_p)
tan = _unary(tan_p)
asin = _unary(asin_p)
acos = _unary(acos_p)
atan = _unary(atan_p)
sinh = _unary(sinh_p)
cosh = _unary(cosh_p)
asinh = _unary(asinh_p)
acosh = _unary(acosh_p)
atanh = _unary(atanh_p)
sqrt = _unary(sqrt_p)
rsqrt = _unary(rsqrt_p)
cbrt = _unary(cbrt_p)
erf = _unary(erf_p)
erfc = _unary(erfc_p)
erf_inv = _unary(erf_inv_p)
lgamma = _unary(lgamma_p)
digamma = _unary(digamma_p)
abs = _unary(abs_p)
bitwise_not = _unary(not_p)
population_count = _unary(population_count_p)
clz = _unary(clz_p)
real = _unary(real_p)
imag = _unary(imag_p)


def conj(x: Any) -> Any:
    """Complex conjugate; real inputs become complex (StableHLO `complex(real, -imag)`)."""
    return conj_p.bind(x, input_dtype=core.get_aval(x).dtype)


square = _unary(square_p)

add = _binary(add_p)
sub = _binary(sub_p)
mul = _binary(mul_p)
div = _binary(div_p)
rem = _binary(rem_p)
max = _binary(max_p)
min = _binary(min_p)
atan2 = _binary(atan2_p)
polygamma = _binary(polygamma_p)
nextafter = _binary(nextafter_p)
bitwise_and = _binary(and_p)
bitwise_or = _binary(or_p)
bitwise_xor = _binary(xor_p)
shift_left = _binary(shift_left_p)
shift_right_logical = _binary(shift_right_logical_p)
shift_right_arithmetic = _binary(shift_right_arithmetic_p)
pow = _binary(pow_p)
complex = _binary(complex_p)
eq = _binary(eq_p)
ne = _binary(ne_p)
lt = _binary(lt_p)
le = _binary(le_p)
gt = _binary(gt_p)
ge = _binary(ge_p)


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Rounds to the nearest integer; ties away from zero unless `TO_NEAREST_EVEN`."""
    return round_p.bind(x, rounding_method=RoundingMethod(int(rounding_method)))


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Rounds floats as if stored with the given exponent and mantissa widths
    (StableHLO `reduce_precision`); (8, 7) is bfloat16's precision, (5, 10) float16's."""
    return reduce_precision_p.bind(operand, exponent_bits=int(exponent_bits),
                                   mantissa_bits=int(mantissa_bits))


def integer_pow(x: Any, y: int) -> Any:
    """`x ** y` for a static integer `y`, by repeated multiplication."""
    return integer_pow_p.bind(x, y=int(y))


# The jvp and transpose rules of every primitive above (they need reductions and structural
# ops, which import this module).
from justjax._src.lax import elementwise_ad  # noqa: E402,F401
