"""Reference kernels of StableHLO's and CHLO's elementwise ops, constants, conversions,
comparisons, `select` and `clamp`, and the NumPy functions with XLA CPU's semantics they run
(conversions and the float32 detour of narrow floats are `numerics.conversions`').

XLA CPU's semantics: integer division truncates toward zero, `x / 0` is -1 and `x % 0` is x
(`INT_MIN / -1` is INT_MIN), shifts by the bit width or more give 0 (or the sign for
arithmetic right shifts), integer overflow wraps, float -> integer conversion saturates with
NaN -> 0, and float16/bfloat16 math is computed in float32 and rounded once.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, KernelBuilder, register
from justjax._src.core import dtypes
from justjax._src.hlo.ir import Op
from justjax._src.numerics import polynomials
from justjax._src.numerics.conversions import (UNSIGNED_NAN_FLOATS, convert_values,
                                               round_from_float32, widen_low_precision)

__all__ = [
    "bessel_i1e", "clz", "digamma", "divide", "erf_inv", "int_div", "int_rem",
    "lgamma", "logistic", "make_complex", "maximum", "minimum", "nextafter", "polygamma",
    "population_count", "power", "reduce_precision", "remainder", "round_away_from_zero",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "total_order_keys",
    "zeta",
]


def _special(name: str) -> Callable[..., Any]:
    """SciPy's special function `name`, imported at first use: importing `scipy.special`
    takes a quarter of a second, which constant folding (these kernels' most common use)
    would otherwise add to the first compile of every process."""
    import scipy.special
    return getattr(scipy.special, name)


# ---------------------------------------------------------------------------------------------
# NumPy functions with XLA's semantics.

def int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero; `x / 0 == -1`, `INT_MIN / -1 == INT_MIN`."""
    x, y = np.broadcast_arrays(x, y)
    safe_y = np.where(y == 0, 1, y)
    if dtypes.is_signed(x.dtype):
        # INT_MIN / -1 overflows; XLA gives INT_MIN.
        overflow = (x == dtypes.iinfo(x.dtype).min) & (y == -1)
        safe_y = np.where(overflow, 1, safe_y)
        quotient = np.abs(x.astype(np.int64)) // np.abs(safe_y.astype(np.int64))
        quotient = np.where((x < 0) != (safe_y < 0), -quotient, quotient).astype(x.dtype)
    else:
        quotient = x // safe_y
    return np.where(y == 0, np.array(-1).astype(x.dtype), quotient)


def int_rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer remainder with the dividend's sign; `x % 0 == x`, `x % -1 == 0`."""
    x, y = np.broadcast_arrays(x, y)
    safe_y = np.where(y == 0, 1, y)
    if dtypes.is_signed(x.dtype):
        safe_y = np.where(safe_y == -1, 1, safe_y)  # x % -1 == 0, and avoids INT_MIN % -1
        result = np.fmod(x, safe_y)
    else:
        result = x % safe_y
    return np.where(y == 0, x, result).astype(x.dtype)


def divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`stablehlo.divide`: XLA's integer division for integers, true division otherwise."""
    if dtypes.is_int(x.dtype):
        return int_div(x, y)
    return np.true_divide(x, y)


def remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`stablehlo.remainder`: the remainder of truncated division (C's fmod)."""
    if dtypes.is_int(x.dtype):
        return int_rem(x, y)
    return np.fmod(x, y)


def _shift_operands(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                            np.dtype]:
    x, y = np.broadcast_arrays(x, y)
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    count = y.astype(unsigned)  # negative counts are huge, hence out of range, as in XLA
    in_range = count < x.dtype.itemsize * 8
    safe = np.where(in_range, count, 0).astype(unsigned)
    return x, safe, in_range, unsigned


def shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`x << y`; 0 where `y` is negative or at least the bit width."""
    x, safe, in_range, unsigned = _shift_operands(x, y)
    result = (x.view(unsigned) << safe).view(x.dtype)
    return np.where(in_range, result, 0).astype(x.dtype)


def shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`x >> y` filling with zeros; 0 where `y` is negative or at least the bit width."""
    x, safe, in_range, unsigned = _shift_operands(x, y)
    result = (x.view(unsigned) >> safe).view(x.dtype)
    return np.where(in_range, result, 0).astype(x.dtype)


def shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`x >> y` filling with the sign bit; the sign fill (0 or -1) where `y` is out of range."""
    x, safe, in_range, _ = _shift_operands(x, y)
    signed = np.dtype(f"i{x.dtype.itemsize}")
    result = (x.view(signed) >> safe.astype(signed)).view(x.dtype)
    fill = np.where(x.view(signed) < 0, -1, 0).astype(signed).view(x.dtype)
    return np.where(in_range, result, fill).astype(x.dtype)


def population_count(x: np.ndarray) -> np.ndarray:
    """The number of set bits of each element's two's-complement representation."""
    # np.bitwise_count counts the bits of |x| for signed ints, hence the unsigned view.
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.bitwise_count(unsigned).astype(x.dtype)


def clz(x: np.ndarray) -> np.ndarray:
    """The number of leading zero bits (the bit width for 0)."""
    bits = x.dtype.itemsize * 8
    remaining = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    width = np.zeros(x.shape, dtype=np.int64)
    while np.any(remaining):
        width = np.where(remaining != 0, width + 1, width)
        remaining = remaining >> np.uint64(1)
    return (bits - width).astype(x.dtype)


def sign(x: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 (NaN stays NaN, -0.0 stays -0.0); `x / |x|` for complex numbers."""
    if dtypes.is_complex(x.dtype):
        magnitude = np.abs(x)
        return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude))
    if dtypes.is_unsigned(x.dtype):
        return (x != 0).astype(x.dtype)
    if dtypes.is_float(x.dtype):
        return np.where(x == 0, x, np.sign(x))  # NumPy's sign(-0.0) is +0.0
    return np.sign(x)


def logistic(x: np.ndarray) -> np.ndarray:
    """`1 / (1 + exp(-x))`."""
    if dtypes.is_complex(x.dtype):
        return 1 / (1 + np.exp(-x))  # scipy's expit is real-only
    return _special('expit')(x)


def round_away_from_zero(x: np.ndarray) -> np.ndarray:
    """Rounds to the nearest integer, ties away from zero (`stablehlo.round_nearest_afz`)."""
    # Not floor(|x| + 0.5): for the float just below 0.5 that sum rounds up to 1.
    whole = np.trunc(x)
    away = (np.abs(x - whole) >= np.array(0.5, x.dtype)).astype(x.dtype)
    return whole + np.copysign(away, x)


def power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`stablehlo.power`: IEEE pow for floats and complex numbers; for integers, repeated
    multiplication that wraps, with negative exponents giving 0 (except for bases 1 and -1)."""
    if not dtypes.is_int(x.dtype):
        if dtypes.is_int(y.dtype):
            y = y.astype(x.dtype)
        return np.power(x, y)
    x, y = np.broadcast_arrays(x, y)
    result = np.ones(x.shape, x.dtype)
    base = x.copy()
    exponent = np.where(y < 0, 0, y).astype(np.uint64)
    while np.any(exponent):
        result = np.where(exponent & np.uint64(1), result * base, result)
        base = base * base
        exponent = exponent >> np.uint64(1)
    if dtypes.is_signed(x.dtype):
        odd = (y % 2) != 0
        negative_power = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
        result = np.where(y < 0, negative_power.astype(x.dtype), result)
    return result.astype(x.dtype)


def expm1(x: np.ndarray) -> np.ndarray:
    """`stablehlo.exponential_minus_one`: NumPy's expm1, with C99's special values for
    complex operands where NumPy's formula makes nans or -0: a zero imaginary part stays
    (expm1(inf + 0j) = inf + 0j), -1 at -inf (-1 + 0j with an infinite or nan imaginary
    part), inf + nan j at +inf with one."""
    out = np.expm1(x)
    if not dtypes.is_complex(np.asarray(x).dtype):
        return out
    # + 0.0: expm1(-0 + 0j) is +0 + 0j (e^z - 1 = 1 - 1), where NumPy's formula gives -0.
    out = np.array(out, copy=True)
    out.real = out.real + 0.0
    re, im = np.real(x), np.imag(x)
    zero_im = im == 0
    out.imag = np.where(zero_im, im, out.imag)
    bad_im = ~np.isfinite(im)
    at_minus_inf = (re == -np.inf) & bad_im
    at_plus_inf = (re == np.inf) & bad_im
    # At -inf the formula's -cos(y) - 2 sin(y/2)^2 is -1 up to rounding: -1 exactly.
    out.real = np.where(re == -np.inf, -1.0, np.where(at_plus_inf, np.inf, out.real))
    out.imag = np.where(at_minus_inf, 0.0, np.where(at_plus_inf, np.nan, out.imag))
    return out


def make_complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`x + i*y` built part by part, so infinite parts do not leak NaNs (as `x + 1j * y`
    would: `1j * inf` is `nan + inf*j`)."""
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, dtypes.to_complex_dtype(x.dtype))
    out.real = x
    out.imag = y
    return out


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function; NaN at its poles 0, -1, -2, ... (as XLA, where SciPy gives -inf
    at 0)."""
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, _special('digamma')(x))


def polygamma(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The m-th derivative of digamma as XLA decomposes `chlo.polygamma`, in the operands'
    dtype: digamma for m = 0, else (-1)^(m+1) exp(lgamma(m + 1)) zeta(m + 1, x) with XLA's
    zeta (so -inf or inf where zeta overflows near a pole, NaN at the poles of odd order
    and at x = +inf); NaN unless `m` is a non-negative integer."""
    m, x = np.broadcast_arrays(m, x)
    one = x.dtype.type(1)
    valid = (m >= 0) & (m == np.floor(m))
    with np.errstate(all="ignore"):
        sign = np.where(np.fmod(m, 2) == 0, -one, one)
        result = (sign * np.exp(lgamma(m + one))) * zeta(m + one, x)
    result = np.where(m == 0, digamma(x), result)
    return np.where(valid, result, np.nan).astype(x.dtype)


# (2k)! / B_2k for k = 12 down to 1: the Euler-Maclaurin coefficients of XLA's zeta.
_ZETA_COEFFICIENTS = (
    -7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
    1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
    -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0)


def zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta function as XLA computes it, in the operands' dtype: ten terms of
    sum (q + k)^-x, then the Euler-Maclaurin tail with twelve Bernoulli terms (always added,
    so an overflowing tail, as for x = inf, gives NaN). NaN for x < 1 and, where q <= 0, for
    non-integer x; at the poles (integer q <= 0) +inf for even x, NaN otherwise; +inf at x = 1."""
    x, q = np.broadcast_arrays(x, q)
    scalar = x.dtype.type
    with np.errstate(all="ignore"):
        neg_x = -x
        a = q
        head = np.power(q, neg_x)
        for _ in range(9):
            a = a + scalar(1)
            head = head + np.power(a, neg_x)
        a = a + scalar(1)
        neg_power = np.power(a, neg_x)
        inverse_square = scalar(1) / (a * a)
        horner = np.zeros_like(x)
        for i, coefficient in enumerate(_ZETA_COEFFICIENTS[:-1]):
            factor = (x + scalar(22 - 2 * i)) * (x + scalar(21 - 2 * i))
            horner = factor * inverse_square * (horner + scalar(1 / coefficient))
        tail = neg_power * (scalar(0.5) + x / a * (scalar(1 / _ZETA_COEFFICIENTS[-1]) + horner))
        result = head + neg_power * a / (x - scalar(1)) + tail
        x_is_int = x == np.floor(x)
        q_le_zero = q <= 0
        result = np.where(x < 1, scalar(np.nan), result)
        result = np.where(q_le_zero & ~x_is_int, scalar(np.nan), result)
        at_pole = q_le_zero & (q == np.floor(q))
        x_is_even = x_is_int & (np.fmod(x, scalar(2)) == 0)
        result = np.where(at_pole, np.where(x_is_even, scalar(np.inf), scalar(np.nan)), result)
        result = np.where(x == 1, scalar(np.inf), result)
    return result.astype(x.dtype, copy=False)


def bessel_i1e(x: np.ndarray) -> np.ndarray:
    """exp(-|x|) I1(x), keeping the sign of zero as XLA does (it is odd)."""
    return np.where(x == 0, x, _special('i1e')(x))


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|; +inf at -inf, as XLA (SciPy gives -inf there)."""
    return np.where(x == -np.inf, np.inf, _special('gammaln')(x))


def erf_inv(x: np.ndarray) -> np.ndarray:
    """The inverse error function as XLA computes it (Giles's polynomials), so samplers built
    on it (`random.normal`) give JAX's bits; the sign of zero is kept."""
    return polynomials.erf_inv(x)


def maximum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise maximum propagating NaN, with -0.0 < +0.0 (as XLA; NumPy returns its
    second operand for equal zeros)."""
    result = np.maximum(x, y)
    if not dtypes.is_float(np.result_type(x, y)):
        return result
    both_zero = (x == 0) & (y == 0)
    return np.where(both_zero, np.where(np.signbit(x) & np.signbit(y), x, np.abs(x)), result)


def minimum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise minimum propagating NaN, with -0.0 < +0.0 (as XLA)."""
    result = np.minimum(x, y)
    if not dtypes.is_float(np.result_type(x, y)):
        return result
    both_zero = (x == 0) & (y == 0)
    return np.where(both_zero, np.where(np.signbit(x) | np.signbit(y), -np.abs(x), x), result)


def nextafter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The next representable value after `x` toward `y`, in `x`'s own dtype."""
    if x.dtype == dtypes.bfloat16:
        bits = x.view(np.uint16).astype(np.int32)
        toward = np.where(np.isnan(x) | np.isnan(y), np.nan, 0)
        step = np.where(y > x, 1, -1) * np.where(x.astype(np.float32) >= 0, 1, -1)
        out = (bits + np.where(x == y, 0, step)).astype(np.uint16).view(dtypes.bfloat16)
        # The smallest bfloat16 subnormal (2**-133), signed toward y.
        out = np.where(x == 0, np.where(y > 0, 1, -1).astype(np.float32) * 9.18355e-41, out)
        return np.where(np.isnan(toward), np.nan, np.where(x == y, y, out)).astype(x.dtype)
    # Equal operands give y (C's nextafter(0.0, -0.0) is -0.0; NumPy's float16 gives x).
    return np.where(x == y, y, np.nextafter(x, y))


def reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
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


# ---------------------------------------------------------------------------------------------
# Kernel builders.

def _math(fn: Callable[..., Any], *, widen: bool = True) -> KernelBuilder:
    """The builder of a kernel computing `fn` on its operands, the result cast to the op's
    result dtype; with `widen`, float16/bfloat16 (and narrower float) operands are computed in
    float32 and the result rounded back, as XLA CPU does."""
    def build(op: Op, compiler: Compiler) -> Kernel:
        dtype = op.result.type.dtype
        if widen and any(t.dtype in dtypes.FLOATS_COMPUTED_IN_FLOAT32 for t in op.operand_types):
            def kernel(*args: np.ndarray) -> np.ndarray:
                return round_from_float32(fn(*[widen_low_precision(a) for a in args]), dtype)
        else:
            def kernel(*args: np.ndarray) -> np.ndarray:
                result = fn(*args)
                # Most results already have the op's dtype (and 0-d results are NumPy
                # scalars, which the interpreter accepts): convert only when needed.
                if getattr(result, "dtype", None) == dtype:
                    return result
                return np.asarray(result).astype(dtype, copy=False)
        return kernel

    return build


def _subtract(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # NumPy refuses `-` on bools; for one-bit integers it is xor (arithmetic mod 2).
    if x.dtype == np.bool_:
        return np.not_equal(x, y)
    return np.subtract(x, y)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


_MATH_OPS: dict[str, Callable[..., Any]] = {
    # binary arithmetic
    "stablehlo.add": np.add,
    "stablehlo.subtract": _subtract,
    "stablehlo.multiply": np.multiply,
    "stablehlo.divide": divide,
    "stablehlo.remainder": remainder,
    "stablehlo.maximum": maximum,
    "stablehlo.minimum": minimum,
    "stablehlo.power": power,
    "stablehlo.atan2": np.arctan2,
    "stablehlo.complex": make_complex,
    "chlo.polygamma": polygamma,
    "chlo.zeta": zeta,
    # bitwise (logical for booleans)
    "stablehlo.and": np.bitwise_and,
    "stablehlo.or": np.bitwise_or,
    "stablehlo.xor": np.bitwise_xor,
    "stablehlo.not": np.invert,
    "stablehlo.shift_left": shift_left,
    "stablehlo.shift_right_logical": shift_right_logical,
    "stablehlo.shift_right_arithmetic": shift_right_arithmetic,
    "stablehlo.popcnt": population_count,
    "stablehlo.count_leading_zeros": clz,
    # unary arithmetic and rounding
    "stablehlo.negate": np.negative,
    "stablehlo.abs": np.abs,
    "stablehlo.sign": sign,
    "stablehlo.floor": np.floor,
    "stablehlo.ceil": np.ceil,
    "stablehlo.round_nearest_afz": round_away_from_zero,
    "stablehlo.round_nearest_even": np.round,
    "stablehlo.is_finite": np.isfinite,
    "stablehlo.real": np.real,
    "stablehlo.imag": np.imag,
    "chlo.square": np.square,
    # transcendental
    "stablehlo.exponential": np.exp,
    "stablehlo.exponential_minus_one": expm1,
    "stablehlo.log": np.log,
    "stablehlo.log_plus_one": np.log1p,
    "stablehlo.logistic": logistic,
    "stablehlo.tanh": np.tanh,
    "stablehlo.sine": np.sin,
    "stablehlo.cosine": np.cos,
    "stablehlo.tan": np.tan,
    "stablehlo.sqrt": np.sqrt,
    "stablehlo.rsqrt": _rsqrt,
    "stablehlo.cbrt": np.cbrt,
    "chlo.asin": np.arcsin,
    "chlo.acos": np.arccos,
    "chlo.atan": np.arctan,
    "chlo.sinh": np.sinh,
    "chlo.cosh": np.cosh,
    "chlo.asinh": np.arcsinh,
    "chlo.acosh": np.arccosh,
    "chlo.atanh": np.arctanh,
    "chlo.erf": lambda x: _special("erf")(x),
    "chlo.erfc": lambda x: _special("erfc")(x),
    "chlo.erf_inv": erf_inv,
    "chlo.lgamma": lgamma,
    "chlo.digamma": digamma,
    "chlo.bessel_i1e": bessel_i1e,
}

for _opcode, _fn in _MATH_OPS.items():
    register(_opcode)(_math(_fn))

# nextafter steps in the operand's own precision, so it must not be computed in float32.
register("chlo.next_after")(_math(nextafter, widen=False))


@register("stablehlo.constant")
def _constant(op: Op, compiler: Compiler) -> Kernel:
    value = np.asarray(op.attributes["value"], dtype=op.result.type.dtype)
    value = np.broadcast_to(value, op.result.type.shape)
    value.setflags(write=False)
    return lambda: value


@register("stablehlo.convert")
def _convert(op: Op, compiler: Compiler) -> Kernel:
    dtype = op.result.type.dtype
    return lambda x: convert_values(np.asarray(x), dtype)


@register("stablehlo.bitcast_convert")
def _bitcast_convert(op: Op, compiler: Compiler) -> Kernel:
    result_type = op.result.type
    # Through bytes: the same bits whether the element type widens, narrows or keeps its size.
    return lambda x: np.frombuffer(np.ascontiguousarray(x).tobytes(),
                                   result_type.dtype).reshape(result_type.shape)


def _int_attr(value: Any) -> int:
    """An integer attribute's value (a plain int or an `ir.IntegerAttr`)."""
    return int(getattr(value, "value", value))


@register("stablehlo.reduce_precision")
def _reduce_precision(op: Op, compiler: Compiler) -> Kernel:
    exponent_bits = _int_attr(op.attributes["exponent_bits"])
    mantissa_bits = _int_attr(op.attributes["mantissa_bits"])
    dtype = op.result.type.dtype
    return lambda x: reduce_precision(np.asarray(x), exponent_bits, mantissa_bits).astype(
        dtype, copy=False)


@register("stablehlo.select")
def _select(op: Op, compiler: Compiler) -> Kernel:
    dtype = op.result.type.dtype
    return lambda pred, on_true, on_false: np.where(pred, on_true, on_false).astype(
        dtype, copy=False)


@register("stablehlo.clamp")
def _clamp(op: Op, compiler: Compiler) -> Kernel:
    dtype = op.result.type.dtype
    return lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi).astype(dtype, copy=False)


# -- compare -----------------------------------------------------------------------------------

_COMPARISONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal,
}


def total_order_keys(x: np.ndarray) -> np.ndarray:
    """Signed integers ordered as StableHLO's TOTALORDER orders floats:
    -NaN < -inf < ... < -0.0 < +0.0 < ... < inf < +NaN."""
    if x.dtype == dtypes.float8_e8m0fnu:
        # No sign bit: the bits order the values (NaN, 0xFF, last).
        return np.ascontiguousarray(x).view(np.uint8).astype(np.int16)
    if x.dtype in UNSIGNED_NAN_FLOATS:
        # Their NaN is the bit pattern of -0.0, which XLA's total order puts first.
        bits = np.ascontiguousarray(x).view(np.int8).astype(np.int16)
        return np.where(bits == -128, -129, np.where(bits < 0, bits ^ 0x7F, bits))
    if x.dtype in dtypes.FLOAT4_TYPES + dtypes.FLOAT6_TYPES:
        # The sign is not the top bit of their byte: order the float32 values they hold.
        x = x.astype(np.float32)
    signed = np.dtype(f"i{x.dtype.itemsize}")
    bits = np.ascontiguousarray(x).view(signed)
    # Negative floats order backwards by their bits: flip every bit but the sign.
    return np.where(bits < 0, bits ^ np.array(np.iinfo(signed).max, signed), bits)


@register("stablehlo.compare")
def _compare(op: Op, compiler: Compiler) -> Kernel:
    compare = _COMPARISONS[op.attributes["comparison_direction"].value]
    compare_type = op.attributes.get("compare_type")
    if compare_type is not None and compare_type.value == "TOTALORDER":
        return lambda x, y: np.asarray(compare(total_order_keys(np.asarray(x)),
                                               total_order_keys(np.asarray(y))))
    # NumPy compares floats (NaN unordered), signed and unsigned integers and bools as the
    # FLOAT, SIGNED and UNSIGNED comparison types prescribe for operands of those dtypes.
    return lambda x, y: np.asarray(compare(widen_low_precision(x), widen_low_precision(y)))
