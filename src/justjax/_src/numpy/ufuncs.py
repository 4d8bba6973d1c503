"""jax.numpy's elementwise functions, written with lax in the order JAX emits its equations.

Arguments are array-likes (Python scalars, NumPy values, Arrays, tracers; lists raise JAX's
TypeError) promoted along JAX's lattice, Python scalars weakly, so `x_f16 * 2` stays float16
and `x + 1` prints as `add a 1.0:f32[]`.

JAX wraps some of these in a non-inlined `jax.jit`, which shows in jaxprs as a
`jit[name=floor_divide ...]` equation; they are wrapped the same way (`@_jitted_in_jax`). logaddexp, logaddexp2 and sinc's value at zero are `custom_jvp` functions
(in `custom_ufuncs`), as in JAX; so is frexp, whose rule lives beside it.
"""
from __future__ import annotations

import inspect
import operator
from typing import Any, Callable

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.numpy import custom_ufuncs, util
from justjax._src.numpy.array_creation import array, asarray, lax_full_like
from justjax._src.numpy.scalar_types import finfo

__all__ = [
    "abs", "absolute", "acos", "acosh", "add", "angle", "arccos", "arccosh", "arcsin",
    "arcsinh", "arctan", "arctan2", "arctanh", "around", "asin", "asinh", "atan", "atan2",
    "atanh", "bitwise_and", "bitwise_count", "bitwise_invert", "bitwise_left_shift",
    "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "cbrt", "ceil", "conj",
    "conjugate", "copysign", "cos", "cosh", "deg2rad", "degrees", "divide", "divmod", "equal",
    "exp", "exp2", "expm1", "fabs", "float_power", "floor", "floor_divide", "fmax", "fmin",
    "fmod", "frexp", "gcd", "greater", "greater_equal", "heaviside", "hypot", "imag", "invert",
    "iscomplex", "isfinite", "isinf", "isnan", "isneginf", "isposinf",
    "isreal", "lcm", "ldexp", "left_shift", "less", "less_equal", "log", "log10",
    "log1p", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or",
    "logical_xor", "maximum", "minimum", "mod", "modf", "multiply", "nan_to_num", "negative",
    "nextafter", "not_equal", "positive", "pow", "power", "rad2deg", "radians", "real",
    "reciprocal", "remainder", "right_shift", "rint", "round", "sign", "signbit", "sin", "sinc",
    "sinh", "spacing", "sqrt", "square", "subtract", "tan", "tanh", "true_divide", "trunc",
]

_jitted_in_jax = util.jitted_as_in_jax


_INT_FOR_BITS = {16: dtypes.int16, 32: dtypes.int32, 64: dtypes.int64}


# ---------------------------------------------------------------------------------------------
# Helpers shared by the functions below (JAX's lax._const, lax._zero, jnp's _where ...).

_const = util.const  # JAX's lax._const


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _constant_like(x: Any, value: Any) -> Any:
    """`jnp.array(value, dtype=x.dtype)`: a strongly typed constant Array."""
    return array(value, dtype=_dtype(x))


def _zero(x: Any) -> Any:
    return lax_full_like(x, 0, shape=())


def _ones(x: Any) -> Any:
    return lax_full_like(x, 1)


def _to_bool(x: Any) -> Any:
    return x if _dtype(x) == dtypes.bool_ else lax.ne(x, _const(x, 0))


_where = util._where


def _is_int(x: Any) -> bool:
    return dtypes.is_int(_dtype(x))


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(_dtype(x))


def _full_bool(x: Any, value: bool) -> Any:
    return lax_full_like(x, value, dtype=dtypes.bool_)


def _named(name: str, doc: str, fun: Callable) -> Callable:
    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = doc
    return fun


def _inexact_unary(name: str, lax_fn: Callable, hlo: str) -> Callable:
    """A function of one argument computed in floating point (integers become float32)."""
    def fun(x: Any, /) -> Any:
        return lax_fn(*util.promote_args_inexact(name, x))
    return _named(name, f"Elementwise `{name}`; integer and bool inputs are promoted to the "
                        f"default float type (StableHLO `{hlo}`).", fun)


def _alias(name: str, target: Callable) -> Callable:
    """Another name for `target` (NumPy's and the array API's spellings), with its
    signature."""
    def fun(*args: Any, **kwargs: Any) -> Any:
        return target(*args, **kwargs)
    fun.__signature__ = inspect.signature(target)
    return _named(name, f"Alias of `{target.__name__}`.", fun)


# ---------------------------------------------------------------------------------------------
# Arithmetic.

def add(x: Any, y: Any, /) -> Any:
    """Elementwise `x + y` (StableHLO `add`); for bools, logical or."""
    x, y = util.promote_args("add", x, y)
    return lax.bitwise_or(x, y) if _dtype(x) == dtypes.bool_ else lax.add(x, y)


def subtract(x: Any, y: Any, /) -> Any:
    """Elementwise `x - y` (StableHLO `subtract`)."""
    return lax.sub(*util.promote_args("subtract", x, y))


def multiply(x: Any, y: Any, /) -> Any:
    """Elementwise `x * y` (StableHLO `multiply`); for bools, logical and."""
    x, y = util.promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if _dtype(x) == dtypes.bool_ else lax.mul(x, y)


def true_divide(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 / x2` (StableHLO `divide`); integers divide as floats."""
    return lax.div(*util.promote_args_inexact("true_divide", x1, x2))


divide = _alias("divide", true_divide)


@_jitted_in_jax
def floor_divide(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 // x2`, rounding toward negative infinity.

    Integers: XLA's truncating division, minus one where the signs differ and the division is
    inexact (division by zero gives XLA's -1, corrected likewise). Floats: the quotient of
    `divmod`.
    """
    x1, x2 = util.promote_args_numeric("floor_divide", x1, x2)
    dtype = _dtype(x1)
    if dtypes.is_unsigned(dtype):
        return lax.div(x1, x2)
    if dtypes.is_int(dtype):
        quotient = lax.div(x1, x2)
        select = logical_and(not_equal(lax.sign(x1), lax.sign(x2)),
                             not_equal(lax.rem(x1, x2), 0))
        return _where(select, subtract(quotient, 1), quotient)
    if dtypes.is_complex(dtype):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    mod = lax.rem(x1, x2)
    x1_corrected = _where(equal(x2, 0), x1, lax.sub(x1, mod))
    div = lax.div(x1_corrected, x2)
    ind = lax.bitwise_and(not_equal(mod, 0), not_equal(lax.sign(x2), lax.sign(mod)))
    mod = lax_selection.select(ind, add(mod, x2), mod)
    div = lax_selection.select(ind, subtract(div, 1.0), div)
    return lax.round(div), mod


@_jitted_in_jax
def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:
    """`(x1 // x2, x1 % x2)` elementwise."""
    x1, x2 = util.promote_args_numeric("divmod", x1, x2)
    if _is_int(x1):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


@_jitted_in_jax
def remainder(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 % x2` with the sign of `x2` (Python's modulo).

    Integer division by zero gives `x1 % 1`, i.e. 0, as in JAX.
    """
    x1, x2 = util.promote_args_numeric("remainder", x1, x2)
    zero = _constant_like(x1, 0)
    if _is_int(x2):
        x2 = _where(equal(x2, 0), _ones(x2), x2)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)),
                              trunc_mod_not_zero)
    return lax_selection.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


mod = _alias("mod", remainder)


@_jitted_in_jax
def fmod(x1: Any, x2: Any, /) -> Any:
    """Elementwise C `fmod`: the remainder with the sign of `x1` (StableHLO `remainder`)."""
    x1, x2 = util.ensure_arraylike("fmod", x1, x2)
    if dtypes.is_int(dtypes.result_type(x1, x2)):
        x2 = _where(equal(x2, 0), _ones(x2), x2)
    return lax.rem(*util.promote_args_numeric("fmod", x1, x2))


def negative(x: Any, /) -> Any:
    """Elementwise `-x` (StableHLO `negate`)."""
    return lax.neg(*util.promote_args("negative", x))


def positive(x: Any, /) -> Any:
    """Elementwise `+x`: the argument as an array."""
    return util.promote_args("positive", x)[0]


def absolute(x: Any, /) -> Any:
    """Elementwise `|x|` (StableHLO `abs`); complex inputs give their real magnitude, bools
    and unsigned integers are returned as they are."""
    x = util.ensure_arraylike("absolute", x)
    dtype = _dtype(x)
    if dtype == dtypes.bool_ or dtypes.is_unsigned(dtype):
        return x
    return lax.abs(x)


abs = _alias("abs", absolute)


def fabs(x: Any, /) -> Any:
    """Elementwise `|x|` as a float (integers promote); complex inputs are an error."""
    x = util.ensure_arraylike("fabs", x)
    if _is_complex(x):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(*util.promote_args_inexact("fabs", x))


def sign(x: Any, /) -> Any:
    """Elementwise sign: -1, 0 or 1 (`x / |x|` for complex; StableHLO `sign`)."""
    return lax.sign(*util.promote_args("sign", x))


def reciprocal(x: Any, /) -> Any:
    """Elementwise `1 / x` in floating point (`integer_pow[y=-1]`)."""
    x = util.ensure_arraylike("reciprocal", x)
    x, = util.promote_dtypes_inexact(x)
    return lax.integer_pow(x, -1)


def square(x: Any, /) -> Any:
    """Elementwise `x * x` (bools become integers)."""
    x = util.ensure_arraylike("square", x)
    x, = util.promote_dtypes_numeric(x)
    return lax.square(x)


def power(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 ** x2`.

    A concrete integer exponent gives `integer_pow` (so `x ** 2` is `integer_pow[y=2]`, and
    an integer base with a negative exponent is an error, as in JAX). Integer bases with
    array exponents use exponentiation by squaring over six bits; a float base keeps an
    integer exponent array as it is.
    """
    util.check_arraylike("power", x1, x2)
    if not isinstance(x2, core.Tracer):
        try:
            exponent = operator.index(x2)
        except TypeError:
            pass
        else:
            x1, = util.promote_dtypes_numeric(x1)
            return lax.integer_pow(x1, exponent)
    return _power(x1, x2)


pow = _alias("pow", power)


def _power(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_shapes("power", x1, x2)
    x1_, x2_ = util.promote_args_numeric("power", x1, x2)
    if _is_int(x1_) or _dtype(x1_) == dtypes.bool_:
        return _pow_int_int(x1_, x2_)
    if dtypes.is_inexact(_dtype(x1)) and dtypes.is_int(_dtype(x2)):
        return lax.pow(x1, x2)
    return lax.pow(x1_, x2_)


def _pow_int_int(x1: Any, x2: Any) -> Any:
    # Exponents beyond 2**6 overflow every integer type but 1 and -1 bases, as in JAX.
    bits = 6
    zero = _constant_like(x2, 0)
    one = _constant_like(x2, 1)
    acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(bits):
        acc = _where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def float_power(x: Any, y: Any, /) -> Any:
    """Elementwise `x ** y` in floating point (StableHLO `power`)."""
    return lax.pow(*util.promote_args_inexact("float_power", x, y))


# ---------------------------------------------------------------------------------------------
# Exponentials, logarithms, trigonometry.

exp = _inexact_unary("exp", lax.exp, "exponential")
exp2 = _inexact_unary("exp2", lax.exp2, "exponential of x * log 2")
expm1 = _inexact_unary("expm1", lax.expm1, "exponential_minus_one")
log = _inexact_unary("log", lax.log, "log")
log1p = _inexact_unary("log1p", lax.log1p, "log_plus_one")
sqrt = _inexact_unary("sqrt", lax.sqrt, "sqrt")
cbrt = _inexact_unary("cbrt", lax.cbrt, "cbrt")
sin = _inexact_unary("sin", lax.sin, "sine")
cos = _inexact_unary("cos", lax.cos, "cosine")
tan = _inexact_unary("tan", lax.tan, "tan")
arcsin = _inexact_unary("arcsin", lax.asin, "asin (chlo)")
arccos = _inexact_unary("arccos", lax.acos, "acos (chlo)")
arctan = _inexact_unary("arctan", lax.atan, "atan (chlo)")
sinh = _inexact_unary("sinh", lax.sinh, "sinh (chlo)")
cosh = _inexact_unary("cosh", lax.cosh, "cosh (chlo)")
tanh = _inexact_unary("tanh", lax.tanh, "tanh")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "asinh (chlo)")
arctanh = _inexact_unary("arctanh", lax.atanh, "atanh (chlo)")


@_jitted_in_jax
def arccosh(x: Any, /) -> Any:
    """Elementwise inverse hyperbolic cosine; complex results are taken with a non-negative
    real part."""
    result = lax.acosh(*util.promote_args_inexact("arccosh", x))
    if _is_complex(result):
        result = _where(less(real(result), 0), lax.neg(result), result)
    return result


def _array_api_alias(name: str, target: Callable) -> Callable:
    """The array API spelling of a NumPy name (`acos` for `arccos`)."""
    def fun(*args: Any) -> Any:
        return target(*util.promote_args(name, *args))
    fun.__signature__ = inspect.signature(target)
    return _named(name, f"Alias of `{target.__name__}` (array API name).", fun)


acos = _array_api_alias("acos", arccos)
acosh = _array_api_alias("acosh", arccosh)
asin = _array_api_alias("asin", arcsin)
asinh = _array_api_alias("asinh", arcsinh)
atan = _array_api_alias("atan", arctan)
atanh = _array_api_alias("atanh", arctanh)


def arctan2(x1: Any, x2: Any, /) -> Any:
    """Elementwise `atan(x1 / x2)` in the right quadrant (StableHLO `atan2`)."""
    return lax.atan2(*util.promote_args_inexact("arctan2", x1, x2))


atan2 = _array_api_alias("atan2", arctan2)


def log2(x: Any, /) -> Any:
    """Elementwise base-2 logarithm: `log(x) / log(2)`."""
    x, = util.promote_args_inexact("log2", x)
    if _is_complex(x):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(_constant_like(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(lax.log(x), lax.log(_constant_like(x, 2)))


def log10(x: Any, /) -> Any:
    """Elementwise base-10 logarithm: `log(x) * (1 / log(10))`."""
    x, = util.promote_args_inexact("log10", x)
    one_over_log10 = np.array(0.4342944819032518, dtype=dtypes.real_dtype(_dtype(x)))
    if _is_complex(x):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        return lax.complex(lax.mul(re, one_over_log10), lax.mul(im, one_over_log10))
    return lax.mul(lax.log(x), one_over_log10)


def logaddexp(x1: Any, x2: Any, /) -> Any:
    """`log(exp(x1) + exp(x2))` without overflow; its derivative stays finite at -inf
    (a `custom_jvp` function, as in JAX)."""
    x1, x2 = util.promote_args_inexact("logaddexp", x1, x2)
    return custom_ufuncs.logaddexp(x1, x2)


def logaddexp2(x1: Any, x2: Any, /) -> Any:
    """`log2(2**x1 + 2**x2)` without overflow; its derivative stays finite at -inf
    (a `custom_jvp` function, as in JAX)."""
    x1, x2 = util.promote_args_inexact("logaddexp2", x1, x2)
    return custom_ufuncs.logaddexp2(x1, x2)


def deg2rad(x: Any, /) -> Any:
    """Degrees to radians: `x * (pi / 180)`."""
    x, = util.promote_args_inexact("deg2rad", x)
    return lax.mul(x, _const(x, np.pi / 180))


def rad2deg(x: Any, /) -> Any:
    """Radians to degrees: `x * (180 / pi)`."""
    x, = util.promote_args_inexact("rad2deg", x)
    return lax.mul(x, _const(x, 180 / np.pi))


degrees = _alias("degrees", rad2deg)
radians = _alias("radians", deg2rad)


@_jitted_in_jax
def hypot(x1: Any, x2: Any, /) -> Any:
    """`sqrt(x1**2 + x2**2)` without overflow: `max * sqrt(1 + (min / max)**2)`."""
    x1, x2 = util.promote_args_inexact("hypot", x1, x2)
    if _is_complex(x1):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    x1, x2 = lax.abs(x1), lax.abs(x2)
    idx_inf = lax.bitwise_or(isposinf(x1), isposinf(x2))
    x1, x2 = maximum(x1, x2), minimum(x1, x2)
    is_zero = equal(x1, 0)
    safe_x1 = _where(equal(x1, 0), _ones(x1), x1)
    x = _where(is_zero, x1,
               multiply(x1, lax.sqrt(add(1, lax.square(lax.div(x2, safe_x1))))))
    return _where(idx_inf, _const(x, np.inf), x)


@_jitted_in_jax
def sinc(x: Any, /) -> Any:
    """Normalized sinc, `sin(pi x) / (pi x)`, with the value 1 at 0."""
    x = util.ensure_arraylike("sinc", x)
    x, = util.promote_dtypes_inexact(x)
    eq_zero = lax.eq(x, _const(x, 0))
    pi_x = lax.mul(_const(x, np.pi), x)
    safe_pi_x = _where(eq_zero, _const(x, 1), pi_x)
    # At zero: 1, with a custom rule giving every derivative there (the quotient has NaNs).
    return _where(eq_zero, custom_ufuncs.sinc_at_zero(pi_x),
                  lax.div(lax.sin(safe_pi_x), safe_pi_x))


# ---------------------------------------------------------------------------------------------
# Rounding.

def floor(x: Any, /) -> Any:
    """Elementwise floor (StableHLO `floor`); integers and bools are returned as they are."""
    x = util.ensure_arraylike("floor", x)
    if _is_int(x) or _dtype(x) == dtypes.bool_:
        return x
    return lax.floor(*util.promote_args_inexact("floor", x))


def ceil(x: Any, /) -> Any:
    """Elementwise ceiling (StableHLO `ceil`); integers and bools are returned as they are."""
    x = util.ensure_arraylike("ceil", x)
    if _is_int(x) or _dtype(x) == dtypes.bool_:
        return x
    return lax.ceil(*util.promote_args_inexact("ceil", x))


@_jitted_in_jax
def trunc(x: Any) -> Any:
    """Rounds toward zero: `ceil` below zero, `floor` above."""
    x = util.ensure_arraylike("trunc", x)
    if _is_int(x) or _dtype(x) == dtypes.bool_:
        return x
    return _where(lax.lt(x, _const(x, 0)), ceil(x), floor(x))


@_jitted_in_jax
def rint(x: Any, /) -> Any:
    """Rounds to the nearest integer, ties to even; integers and bools become floats."""
    x = util.ensure_arraylike("rint", x)
    dtype = _dtype(x)
    if dtype == dtypes.bool_ or dtypes.is_int(dtype):
        return structural.convert_element_type(x, dtypes.default_float_dtype())
    if dtypes.is_complex(dtype):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@_jitted_in_jax(static_argnames=("decimals",))
def round(a: Any, decimals: int = 0, out: None = None) -> Any:
    """Rounds to `decimals` decimal places, ties to even (`x * 10**d` rounded, then divided;
    float16 is scaled in float32). Integers are returned as they are."""
    a = util.ensure_arraylike("round", a)
    decimals = core.concrete_or_error(operator.index, decimals,
                                      "'decimals' argument of jnp.round")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dtype = _dtype(a)
    if dtypes.is_int(dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if decimals > np.log10(finfo(dtype).max):
        return a

    def round_float(x: Any) -> Any:
        if decimals == 0:
            return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
        if dtype == dtypes.float16:
            x = structural.convert_element_type(x, dtypes.float32)
        factor = _const(x, 10 ** decimals)
        scaled = lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN)
        result = lax.div(scaled, factor)
        return structural.convert_element_type(result, dtype) if dtype == dtypes.float16 \
            else result

    if dtypes.is_complex(dtype):
        return lax.complex(round_float(lax.real(a)), round_float(lax.imag(a)))
    return round_float(a)


@_jitted_in_jax(static_argnames=("decimals",))
def around(a: Any, decimals: int = 0, out: None = None) -> Any:
    """Alias of `round`."""
    return round(a, decimals, out)


# ---------------------------------------------------------------------------------------------
# Comparisons and logic.

def equal(x: Any, y: Any, /) -> Any:
    """Elementwise `x == y` (StableHLO `compare EQ`)."""
    return lax.eq(*util.promote_args("equal", x, y))


def not_equal(x: Any, y: Any, /) -> Any:
    """Elementwise `x != y` (StableHLO `compare NE`)."""
    return lax.ne(*util.promote_args("not_equal", x, y))


def _complex_comparison(lax_op: Callable, x: Any, y: Any) -> Any:
    """Orders complex numbers lexicographically (real part, then imaginary), as JAX."""
    if _is_complex(x):
        return lax_selection.select(lax.eq(lax.real(x), lax.real(y)),
                                    lax_op(lax.imag(x), lax.imag(y)),
                                    lax_op(lax.real(x), lax.real(y)))
    return lax_op(x, y)


def greater(x: Any, y: Any, /) -> Any:
    """Elementwise `x > y` (StableHLO `compare GT`)."""
    return _complex_comparison(lax.gt, *util.promote_args("greater", x, y))


def greater_equal(x: Any, y: Any, /) -> Any:
    """Elementwise `x >= y` (StableHLO `compare GE`)."""
    return _complex_comparison(lax.ge, *util.promote_args("greater_equal", x, y))


def less(x: Any, y: Any, /) -> Any:
    """Elementwise `x < y` (StableHLO `compare LT`)."""
    return _complex_comparison(lax.lt, *util.promote_args("less", x, y))


def less_equal(x: Any, y: Any, /) -> Any:
    """Elementwise `x <= y` (StableHLO `compare LE`)."""
    return _complex_comparison(lax.le, *util.promote_args("less_equal", x, y))


def maximum(x: Any, y: Any, /) -> Any:
    """Elementwise maximum; NaN if either is NaN (StableHLO `maximum`)."""
    return lax.max(*util.promote_args("maximum", x, y))


def minimum(x: Any, y: Any, /) -> Any:
    """Elementwise minimum; NaN if either is NaN (StableHLO `minimum`)."""
    return lax.min(*util.promote_args("minimum", x, y))


@_jitted_in_jax
def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum ignoring NaNs (NaN only where both are NaN)."""
    return _where(bitwise_or(greater(x1, x2), isnan(x2)), x1, x2)


@_jitted_in_jax
def fmin(x1: Any, x2: Any) -> Any:
    """Elementwise minimum ignoring NaNs (NaN only where both are NaN)."""
    return _where(bitwise_or(less(x1, x2), isnan(x2)), x1, x2)


def logical_and(x: Any, y: Any, /) -> Any:
    """Elementwise `x and y` of truth values (nonzero is true)."""
    return lax.bitwise_and(*map(_to_bool, util.promote_args("logical_and", x, y)))


def logical_or(x: Any, y: Any, /) -> Any:
    """Elementwise `x or y` of truth values."""
    return lax.bitwise_or(*map(_to_bool, util.promote_args("logical_or", x, y)))


def logical_xor(x: Any, y: Any, /) -> Any:
    """Elementwise `x xor y` of truth values."""
    return lax.bitwise_xor(*map(_to_bool, util.promote_args("logical_xor", x, y)))


def logical_not(x: Any, /) -> Any:
    """Elementwise `not x` of truth values."""
    return lax.bitwise_not(*map(_to_bool, util.promote_args("logical_not", x)))


# ---------------------------------------------------------------------------------------------
# Bit operations.

def bitwise_and(x: Any, y: Any, /) -> Any:
    """Elementwise `x & y` (StableHLO `and`)."""
    return lax.bitwise_and(*util.promote_args("bitwise_and", x, y))


def bitwise_or(x: Any, y: Any, /) -> Any:
    """Elementwise `x | y` (StableHLO `or`)."""
    return lax.bitwise_or(*util.promote_args("bitwise_or", x, y))


def bitwise_xor(x: Any, y: Any, /) -> Any:
    """Elementwise `x ^ y` (StableHLO `xor`)."""
    return lax.bitwise_xor(*util.promote_args("bitwise_xor", x, y))


def bitwise_not(x: Any, /) -> Any:
    """Elementwise `~x` (StableHLO `not`)."""
    return lax.bitwise_not(*util.promote_args("bitwise_not", x))


def bitwise_invert(x: Any, /) -> Any:
    """Alias of `bitwise_not` (array API name)."""
    return lax.bitwise_not(*util.promote_args("bitwise_invert", x))


def invert(x: Any, /) -> Any:
    """Alias of `bitwise_not`."""
    return lax.bitwise_not(*util.promote_args("invert", x))


def left_shift(x: Any, y: Any, /) -> Any:
    """Elementwise `x << y`; shifts by the bit width or more give 0 (StableHLO
    `shift_left`)."""
    return lax.shift_left(*util.promote_args_numeric("left_shift", x, y))


def bitwise_left_shift(x: Any, y: Any, /) -> Any:
    """Alias of `left_shift` (array API name)."""
    return lax.shift_left(*util.promote_args_numeric("bitwise_left_shift", x, y))


def right_shift(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 >> x2`: arithmetic for signed, logical for unsigned integers."""
    x1, x2 = util.promote_args_numeric("right_shift", x1, x2)
    if dtypes.is_unsigned(_dtype(x1)):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_right_shift = _alias("bitwise_right_shift", right_shift)


@_jitted_in_jax
def bitwise_count(x: Any, /) -> Any:
    """The number of one bits in `|x|`, as uint8 (StableHLO `popcnt`)."""
    x, = util.promote_args_numeric("bitwise_count", x)
    return structural.convert_element_type(lax.population_count(absolute(x)), dtypes.uint8)


# ---------------------------------------------------------------------------------------------
# Floating point classification and decomposition.

def isfinite(x: Any, /) -> Any:
    """Elementwise: neither infinite nor NaN (always true for integers)."""
    x = util.ensure_arraylike("isfinite", x)
    dtype = _dtype(x)
    if dtypes.is_float(dtype):
        return lax.is_finite(x)
    if dtypes.is_complex(dtype):
        return lax.bitwise_and(lax.is_finite(real(x)), lax.is_finite(imag(x)))
    return _full_bool(x, True)


@_jitted_in_jax
def isinf(x: Any, /) -> Any:
    """Elementwise: positive or negative infinity (either part, for complex)."""
    x = util.ensure_arraylike("isinf", x)
    dtype = _dtype(x)
    if dtypes.is_float(dtype):
        return lax.eq(lax.abs(x), _constant_like(x, np.inf))
    if dtypes.is_complex(dtype):
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_or(lax.eq(lax.abs(re), _constant_like(re, np.inf)),
                              lax.eq(lax.abs(im), _constant_like(im, np.inf)))
    return _full_bool(x, False)


def _isposneginf(infinity: float, x: Any, out: Any) -> Any:
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    dtype = _dtype(x)
    if dtypes.is_float(dtype):
        return lax.eq(x, _constant_like(x, infinity))
    if dtypes.is_complex(dtype):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return _full_bool(x, False)


def isposinf(x: Any, /, out: None = None) -> Any:
    """Elementwise `x == +inf`."""
    return _isposneginf(np.inf, util.ensure_arraylike("isposinf", x), out)


def isneginf(x: Any, /, out: None = None) -> Any:
    """Elementwise `x == -inf`."""
    return _isposneginf(-np.inf, util.ensure_arraylike("isneginf", x), out)


def isnan(x: Any, /) -> Any:
    """Elementwise `x != x`."""
    x = util.ensure_arraylike("isnan", x)
    return lax.ne(x, x)


@_jitted_in_jax
def signbit(x: Any, /) -> Any:
    """Elementwise: the sign bit is set (true for -0.0 and negative NaNs)."""
    x, = util.promote_args("signbit", x)
    dtype = _dtype(x)
    if dtypes.is_int(dtype):
        return lax.lt(x, _constant_like(x, 0))
    if dtype == dtypes.bool_:
        return _full_bool(x, False)
    if not dtypes.is_float(dtype):
        raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
    info = finfo(dtype)
    if info.bits not in _INT_FOR_BITS:
        raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
    bits = structural.bitcast_convert_type(x, _INT_FOR_BITS[info.bits])
    return structural.convert_element_type(right_shift(bits, info.nexp + info.nmant),
                                           dtypes.bool_)


@_jitted_in_jax
def copysign(x1: Any, x2: Any, /) -> Any:
    """`|x1|` with the sign bit of `x2`."""
    x1, x2 = util.promote_args_inexact("copysign", x1, x2)
    if _is_complex(x1):
        raise TypeError("copysign does not support complex-valued inputs")
    negative_sign = structural.convert_element_type(signbit(x2), dtypes.bool_)
    return _where(negative_sign, negative(lax.abs(x1)), lax.abs(x1))


def nextafter(x: Any, y: Any, /) -> Any:
    """The next representable float after `x` toward `y` (`nextafter`)."""
    return lax.nextafter(*util.promote_args_inexact("nextafter", x, y))


def spacing(x: Any, /) -> Any:
    """The distance from `x` to the next float away from zero."""
    arr, = util.promote_args_inexact("spacing", x)
    if _is_complex(arr):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = _const(arr, np.inf)
    if _dtype(arr) == dtypes.float16:
        return subtract(lax.nextafter(arr, inf), arr)
    result = subtract(lax.nextafter(arr, copysign(inf, arr)), arr)
    smallest_subnormal = finfo(_dtype(arr)).smallest_subnormal
    return _where(equal(result, 0), copysign(smallest_subnormal, arr), result)


def _normalize_float(x: Any) -> tuple[Any, Any]:
    """Subnormals scaled into the normal range, as integer bits plus an exponent offset."""
    info = finfo(_dtype(x))
    int_type = _INT_FOR_BITS[info.bits]
    cond = less(lax.abs(x), info.tiny)
    x1 = _where(cond, multiply(x, _const(x, 1 << info.nmant)), x)
    x2 = _where(cond, int_type.type(-info.nmant), int_type.type(0))
    return structural.bitcast_convert_type(x1, int_type), x2


@_jitted_in_jax
def frexp(x: Any, /) -> tuple[Any, Any]:
    """Mantissa in [0.5, 1) and int32 exponent with `x == m * 2**e` (0, inf, NaN: `(x, 0)`)."""
    x = util.ensure_arraylike("frexp", x)
    x, = util.promote_dtypes_inexact(x)
    if _is_complex(x):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


@custom_jvp
def _frexp(x: Any) -> tuple[Any, Any]:
    # Built from bit operations, whose derivative is zero: the rule below gives the mantissa
    # its true derivative 2**-e (ldexp, built on frexp, inherits it), as JAX's does.
    dtype = _dtype(x)
    info = finfo(dtype)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    x1, x2 = _normalize_float(x)
    exponent_bits = bitwise_and(right_shift(x1, info.nmant), mask)
    x2 = add(x2, add(subtract(exponent_bits, bias), 1))
    x1 = bitwise_and(x1, ~(mask << info.nmant))
    x1 = bitwise_or(x1, (bias - 1) << info.nmant)
    x1 = structural.bitcast_convert_type(x1, dtype)
    cond = bitwise_or(bitwise_or(isinf(x), isnan(x)), equal(x, 0))
    x2 = _where(cond, lax_full_like(x2, 0), x2)
    return _where(cond, x, x1), structural.convert_element_type(x2, dtypes.int32)


@_frexp.defjvp
def _frexp_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    x, = primals
    t, = tangents
    mantissa, exponent = frexp(x)
    mantissa_dot = multiply(t, exp2(negative(structural.convert_element_type(exponent,
                                                                               _dtype(t)))))
    exponent_dot = np.zeros(np.shape(exponent), dtypes.float0)
    return (mantissa, exponent), (mantissa_dot, exponent_dot)


@_jitted_in_jax
def ldexp(x1: Any, x2: Any, /) -> Any:
    """`x1 * 2**x2` for an integer `x2`, exact through subnormals."""
    x1, x2 = util.ensure_arraylike("ldexp", x1, x2)
    x1_dtype, x2_dtype = _dtype(x1), _dtype(x2)
    if dtypes.is_complex(x1_dtype) or dtypes.is_inexact(x2_dtype):
        raise ValueError(f"ldexp not supported for input types {(x1_dtype, x2_dtype)}")
    x1, = util.promote_args_inexact("ldexp", x1)
    x2 = structural.convert_element_type(x2, _dtype(x1))
    m, e = frexp(x1)
    e = structural.convert_element_type(
        add(structural.convert_element_type(e, _dtype(x2)), x2), _dtype(x1))
    m = _where(greater(e, 0), multiply(m, 2), m)
    e = _where(greater(e, 0), subtract(e, 1), e)
    x = multiply(m, power(2, structural.convert_element_type(e, _dtype(m))))
    return _where(bitwise_or(isinf(x1), equal(x1, 0)), x1, x)


@_jitted_in_jax
def modf(x: Any, /, out: None = None) -> tuple[Any, Any]:
    """The fractional and integral parts of `x`, both with `x`'s sign."""
    x = util.ensure_arraylike("modf", x)
    x, = util.promote_dtypes_inexact(x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = _where(lax.ge(x, _zero(x)), floor(x), ceil(x))
    return subtract(x, whole), whole


@_jitted_in_jax
def heaviside(x1: Any, x2: Any, /) -> Any:
    """Step function: 0 below zero, 1 above, `x2` at zero (NaN stays NaN)."""
    x1, x2 = util.ensure_arraylike("heaviside", x1, x2)
    x1, x2 = util.promote_dtypes_inexact(x1, x2)
    zero = _const(x1, 0)
    return _where(lax.lt(x1, zero), zero,
                  _where(lax.gt(x1, zero), _const(x1, 1), _where(lax.ne(x1, x1), x1, x2)))


@_jitted_in_jax
def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """NaN -> `nan`, +inf -> `posinf` (default: the largest float), -inf -> `neginf`."""
    del copy
    x = util.ensure_arraylike("nan_to_num", x)
    dtype = _dtype(x)
    if not dtypes.is_inexact(dtype):
        return x
    if dtypes.is_complex(dtype):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = _where(isnan(x), asarray(nan, dtype=dtype), x)
    out = _where(isposinf(out), asarray(posinf, dtype=dtype), out)
    return _where(isneginf(out), asarray(neginf, dtype=dtype), out)


# ---------------------------------------------------------------------------------------------
# Complex numbers.

def conjugate(x: Any, /) -> Any:
    """Complex conjugate (real inputs are returned as they are)."""
    x = util.ensure_arraylike("conjugate", x)
    return lax.conj(x) if _is_complex(x) else x


conj = _alias("conj", conjugate)


def real(val: Any, /) -> Any:
    """Real part (real inputs are returned as they are)."""
    val = util.ensure_arraylike("real", val)
    return lax.real(val) if _is_complex(val) else val


def imag(val: Any, /) -> Any:
    """Imaginary part (zeros for real inputs)."""
    val = util.ensure_arraylike("imag", val)
    return lax.imag(val) if _is_complex(val) else lax_full_like(val, 0)


@_jitted_in_jax(static_argnames=("deg",))
def angle(z: Any, deg: bool = False) -> Any:
    """The complex argument `atan2(imag, real)`, in radians or degrees."""
    z = util.ensure_arraylike("angle", z)
    re, im = real(z), imag(z)
    dtype = _dtype(re)
    if not dtypes.is_inexact(dtype) or (dtypes.is_float(_dtype(z)) and np.ndim(z) == 0):
        dtype = dtypes.default_float_dtype()
        re = structural.convert_element_type(re, dtype)
        im = structural.convert_element_type(im, dtype)
    result = lax.atan2(im, re)
    return degrees(result) if deg else result


@_jitted_in_jax
def iscomplex(x: Any) -> Any:
    """Elementwise: the imaginary part is nonzero."""
    i = imag(x)
    return lax.ne(i, _const(i, 0))


@_jitted_in_jax
def isreal(x: Any) -> Any:
    """Elementwise: the imaginary part is zero."""
    i = imag(x)
    return lax.eq(i, _const(i, 0))


# ---------------------------------------------------------------------------------------------
# Integer number theory.

def _euclid_steps(dtype: np.dtype) -> int:
    """An upper bound on Euclid's algorithm's steps for `dtype`'s values (Lamé's theorem:
    the Fibonacci numbers grow by the golden ratio)."""
    bits = dtype.itemsize * 8
    return int(np.ceil(bits * np.log(2) / np.log((1 + np.sqrt(5)) / 2))) + 2


@_jitted_in_jax
def gcd(x1: Any, x2: Any) -> Any:
    """Greatest common divisor of `|x1|` and `|x2|` (Euclid's algorithm, elementwise).

    JAX iterates with a `while_loop` until every remainder is zero. Here the iterations are
    unrolled: on concrete values they stop at the same point; on traced values they run to
    the bound Lamé's theorem gives for the dtype, which leaves finished elements unchanged.
    """
    x1, x2 = util.ensure_arraylike("gcd", x1, x2)
    x1, x2 = util.promote_dtypes(x1, x2)
    if not _is_int(x1):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = util.broadcast_arrays(x1, x2)
    a, b = absolute(x1), absolute(x2)
    for _ in range(_euclid_steps(_dtype(a))):
        b_nonzero = not_equal(b, 0)
        if not isinstance(b_nonzero, core.Tracer) and not np.any(np.asarray(b_nonzero)):
            break
        a, b = _where(b_nonzero, b, a), _where(b_nonzero, lax.rem(a, b), _const(b, 0))
        a, b = _where(less(a, b), b, a), _where(less(a, b), a, b)
    return a


@_jitted_in_jax
def lcm(x1: Any, x2: Any) -> Any:
    """Least common multiple of `|x1|` and `|x2|` (0 if either is 0)."""
    x1, x2 = util.ensure_arraylike("lcm", x1, x2)
    x1, x2 = util.promote_dtypes(x1, x2)
    x1, x2 = absolute(x1), absolute(x2)
    if not _is_int(x1):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return _where(equal(d, 0), _const(d, 0), multiply(x1, floor_divide(x2, d)))
