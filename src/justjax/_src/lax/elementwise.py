"""Elementwise primitives: arithmetic, comparison, logic, bit ops, transcendentals, conversion.

Each primitive is defined in one place with its abstract evaluation, its eager
implementation and its lowering to StableHLO (the ops JAX 0.10 emits: one StableHLO or CHLO
op each, or JAX's expansion); differentiation rules live in `elementwise_ad`. Integer
semantics follow XLA: division truncates toward zero, x / 0 is -1 and x % 0 is x, shifts by
the bit width or more give 0 (or the sign for arithmetic right shifts), overflow wraps. The
NumPy functions with these semantics are the reference backend's (`kernels.elementwise`).
"""
from __future__ import annotations

import builtins
import enum
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import JaxprEqn, PrettyContext, pp_eqn_default, pp_eqn_rules
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Builder, TensorType, Value
from justjax._src.interpreters import batching, lowering
from justjax._src.lax import structural, utils
from justjax._src.lax.utils import (ANY, COMPLEX, FLOAT, INEXACT, INT, INT_OR_BOOL, NUMERIC, standard_primitive)

__all__ = [
    "AccuracyMode", "RoundingMethod", "abs", "abs_p", "acos", "acos_p", "acosh", "acosh_p",
    "add", "add_p", "and_p", "asin", "asin_p", "asinh", "asinh_p", "atan", "atan2", "atan2_p",
    "atan_p", "atanh", "atanh_p", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "cbrt", "cbrt_p", "ceil", "ceil_p", "clz", "clz_p", "complex", "complex_p", "conj",
    "conj_p", "cos", "cos_p", "cosh", "cosh_p", "digamma", "digamma_p", "div", "div_p", "eq",
    "eq_p", "erf", "erf_inv", "erf_inv_p", "erf_p", "erfc", "erfc_p", "exp", "exp2", "exp2_p",
    "exp_p", "expm1", "expm1_p", "floor", "floor_p", "ge", "ge_p", "gt", "gt_p", "imag",
    "imag_p", "integer_pow", "integer_pow_p", "reciprocal", "is_finite", "is_finite_p", "le", "le_p",
    "lgamma", "lgamma_p", "log", "log1p", "log1p_p", "log_p", "logistic", "logistic_p", "lt",
    "lt_p", "max", "max_p", "min", "min_p", "mul", "mul_p", "ne", "ne_p", "neg", "neg_p",
    "nextafter", "nextafter_p", "not_p", "or_p",
    "polygamma", "polygamma_p", "population_count", "population_count_p", "pow", "pow_p",
    "real", "real_p",
    "reduce_precision", "reduce_precision_p", "rem", "rem_p", "round", "round_p", "rsqrt",
    "rsqrt_p", "shift_left", "shift_left_p", "shift_right_arithmetic",
    "shift_right_arithmetic_p", "shift_right_logical", "shift_right_logical_p", "sign",
    "sign_p", "sin", "sin_p", "sinh", "sinh_p", "sqrt", "sqrt_p", "square", "square_p", "sub",
    "sub_p", "tan", "tan_p", "tanh", "tanh_p", "xor_p",
]


def naryop(name: str, accepted: Sequence[Sequence[np.dtype]], *,
           result_dtype: Callable[[np.dtype], np.dtype] = lambda d: d,
           require_same_dtypes: bool = True, weak_type_rule: Callable | None = None
           ) -> Primitive:
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

    prim = standard_primitive(name, shape_rule, dtype_rule, weak_type_rule)
    dispatch.def_backend_impl(prim)
    if len(accepted) == 1:
        batching.defvectorized(prim)
    else:
        batching.defbroadcasting(prim)
    return prim


def unop(name: str, accepted: Sequence[np.dtype], **kwargs: Any) -> Primitive:
    return naryop(name, [accepted], **kwargs)


def binop(name: str, accepted: Sequence[np.dtype], **kwargs: Any) -> Primitive:
    return naryop(name, [accepted, accepted], **kwargs)


def _to_bool(dtype: np.dtype) -> np.dtype:
    return dtypes.bool_


def _to_real(dtype: np.dtype) -> np.dtype:
    return dtypes.real_dtype(dtype)


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

neg_p = unop("neg", NUMERIC)
sign_p = unop("sign", NUMERIC)
floor_p = unop("floor", FLOAT)
ceil_p = unop("ceil", FLOAT)
round_p = unop("round", FLOAT)
is_finite_p = unop("is_finite", FLOAT, result_dtype=_to_bool)
exp_p = unop("exp", INEXACT)
exp2_p = unop("exp2", INEXACT)
log_p = unop("log", INEXACT)
log1p_p = unop("log1p", INEXACT)
expm1_p = unop("expm1", INEXACT)
tanh_p = unop("tanh", INEXACT)
logistic_p = unop("logistic", INEXACT)
sin_p = unop("sin", INEXACT)
cos_p = unop("cos", INEXACT)
tan_p = unop("tan", INEXACT)
asin_p = unop("asin", INEXACT)
acos_p = unop("acos", INEXACT)
atan_p = unop("atan", INEXACT)
sinh_p = unop("sinh", INEXACT)
cosh_p = unop("cosh", INEXACT)
asinh_p = unop("asinh", INEXACT)
acosh_p = unop("acosh", INEXACT)
atanh_p = unop("atanh", INEXACT)
sqrt_p = unop("sqrt", INEXACT)
rsqrt_p = unop("rsqrt", INEXACT)
cbrt_p = unop("cbrt", FLOAT)
erf_p = unop("erf", FLOAT)
erfc_p = unop("erfc", FLOAT)
erf_inv_p = unop("erf_inv", FLOAT)
lgamma_p = unop("lgamma", FLOAT)
digamma_p = unop("digamma", FLOAT)
abs_p = unop("abs", NUMERIC, result_dtype=_to_real)
not_p = unop("not", INT_OR_BOOL)
population_count_p = unop("population_count", INT)
clz_p = unop("clz", INT)
real_p = unop("real", COMPLEX, result_dtype=_to_real)
imag_p = unop("imag", COMPLEX, result_dtype=_to_real)
conj_p = unop("conj", INEXACT,
              result_dtype=lambda d: d if dtypes.is_complex(d) else dtypes.to_complex_dtype(d))
square_p = unop("square", NUMERIC)
reduce_precision_p = unop("reduce_precision", FLOAT)
integer_pow_p = unop("integer_pow", NUMERIC)

add_p = binop("add", NUMERIC)
sub_p = binop("sub", NUMERIC)
mul_p = binop("mul", NUMERIC)
div_p = binop("div", NUMERIC)
rem_p = binop("rem", INT + FLOAT)
max_p = binop("max", ANY)
min_p = binop("min", ANY)
atan2_p = binop("atan2", INEXACT)
polygamma_p = binop("polygamma", FLOAT)
nextafter_p = binop("nextafter", FLOAT)
and_p = binop("and", INT_OR_BOOL)
or_p = binop("or", INT_OR_BOOL)
xor_p = binop("xor", INT_OR_BOOL)
shift_left_p = binop("shift_left", INT)
shift_right_logical_p = binop("shift_right_logical", INT)
shift_right_arithmetic_p = binop("shift_right_arithmetic", INT)
pow_p = naryop("pow", [INEXACT, INEXACT + INT], require_same_dtypes=False)
complex_p = binop("complex", (dtypes.float32, dtypes.float64),
                  result_dtype=dtypes.to_complex_dtype)

eq_p = binop("eq", ANY, result_dtype=_to_bool)
ne_p = binop("ne", ANY, result_dtype=_to_bool)
_ORDERED = utils.INT + utils.FLOAT + utils.BOOL
lt_p = binop("lt", _ORDERED, result_dtype=_to_bool)
le_p = binop("le", _ORDERED, result_dtype=_to_bool)
gt_p = binop("gt", _ORDERED, result_dtype=_to_bool)
ge_p = binop("ge", _ORDERED, result_dtype=_to_bool)


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


def reciprocal(x: Any) -> Any:
    """`1 / x` elementwise, as JAX stages it: `integer_pow[y=-1]`."""
    return integer_pow(x, -1)


# -- lowering to StableHLO ---------------------------------------------------------------------
# As JAX's rules: one StableHLO (or CHLO) op where JAX emits one, rank-0 operands broadcast to
# the result shape, and JAX's expansions elsewhere (logistic, exp2, conj, integer_pow, complex
# sin/cos/max/min, unsigned sign). A non-default `accuracy` is not attached to the op: JAX
# attaches a `#stablehlo.result_accuracy` attribute, which the IR cannot express yet; the op
# without it is valid and computes at default accuracy.

def _full_like_aval(b: Builder, value: Any, aval: ShapedArray) -> Value:
    """A scalar constant broadcast to `aval` even when `aval` is rank 0, as JAX's
    `mlir.full_like_aval` emits it (`lowering.full` skips the no-op broadcast, as
    `lax.full_like` traced through `lower_fun` does)."""
    scalar = lowering.constant(b, np.asarray(value).astype(aval.dtype))
    return lowering.broadcast_in_dim(b, scalar, aval.shape, ())


def _out_type(ctx: lowering.LoweringRuleContext) -> TensorType:
    return lowering.aval_to_type(ctx.avals_out[0])


def _unary_lowering(opcode: str, complex_fun: Callable | None = None) -> lowering.LoweringRule:
    """The rule of a one-op unary primitive; complex operands go through `complex_fun`
    (written with lax, lowered in place) when given, as JAX's sin and cos do."""
    real_rule = lowering.elementwise(opcode)
    if complex_fun is None:
        return real_rule
    complex_rule = lowering.lower_fun(complex_fun, multiple_results=False)

    def rule(ctx: lowering.LoweringRuleContext, x: Value, **params: Any) -> Value:
        if dtypes.is_complex(ctx.avals_in[0].dtype):
            return complex_rule(ctx, x)
        return real_rule(ctx, x)

    return rule


def _complex_trig_parts(x: Any) -> tuple[Any, ...]:
    """What complex sin and cos share: (zero, real(x) == 0, sin(real), cos(real),
    cosh(imag), sinh(imag)), the hyperbolic ones through expm1 as JAX expands them (expm1
    avoids cancellation where |imag(x)| is small)."""
    a, b = real(x), imag(x)
    zero = np.zeros((), a.dtype)
    two = np.full((), 2, a.dtype)
    a_is_zero = eq(a, zero)
    sn, cs = sin(a), cos(a)
    e1m, e2m = expm1(b), expm1(neg(b))
    sinh_b, cosh_b = div(sub(e1m, e2m), two), div(add(add(e1m, e2m), two), two)
    return zero, a_is_zero, sn, cs, cosh_b, sinh_b


def _complex_sin(x: Any) -> Any:
    """sin of a complex number through real sin, cos and expm1, exact for a zero real part."""
    zero, a_is_zero, sn, cs, cosh_b, sinh_b = _complex_trig_parts(x)
    re, im = mul(sn, cosh_b), mul(cs, sinh_b)
    return structural.select(a_is_zero, complex(zero, im), complex(re, im))


def _complex_cos(x: Any) -> Any:
    """cos of a complex number, as `_complex_sin`."""
    zero, a_is_zero, sn, cs, cosh_b, sinh_b = _complex_trig_parts(x)
    re, im = mul(cs, cosh_b), mul(neg(sn), sinh_b)
    return structural.select(a_is_zero, complex(re, zero), complex(re, im))


def _sign_lowering(ctx: lowering.LoweringRuleContext, x: Value) -> Value:
    """`stablehlo.sign`, except unsigned integers: `x == 0 ? 0 : 1`."""
    aval = ctx.avals_in[0]
    if not dtypes.is_unsigned(aval.dtype):
        return ctx.builder.one("stablehlo.sign", [x], _out_type(ctx))
    b = ctx.builder
    is_zero = lowering.compare(b, x, _full_like_aval(b, 0, aval), "EQ")
    zeros, ones = _full_like_aval(b, 0, aval), _full_like_aval(b, 1, aval)
    return b.one("stablehlo.select", [is_zero, zeros, ones], _out_type(ctx))


def _round_lowering(ctx: lowering.LoweringRuleContext, x: Value, *,
                    rounding_method: Any) -> Value:
    """`stablehlo.round_nearest_afz` or `stablehlo.round_nearest_even`."""
    if int(rounding_method) == int(RoundingMethod.TO_NEAREST_EVEN):
        opcode = "stablehlo.round_nearest_even"
    else:
        opcode = "stablehlo.round_nearest_afz"
    return ctx.builder.one(opcode, [x], _out_type(ctx))


def _exp2_lowering(ctx: lowering.LoweringRuleContext, x: Value, **params: Any) -> Value:
    """`exp(log(2) * x)`, as JAX lowers exp2."""
    b = ctx.builder
    log2 = _full_like_aval(b, np.log(2), ctx.avals_in[0])
    product = b.one("stablehlo.multiply", [log2, x], _out_type(ctx))
    return b.one("stablehlo.exponential", [product], _out_type(ctx))


def _logistic_lowering(ctx: lowering.LoweringRuleContext, x: Value, **params: Any) -> Value:
    """`1 / (1 + exp(-x))`: JAX lowers logistic by this formula rather than
    `stablehlo.logistic`."""
    b = ctx.builder
    out_type = _out_type(ctx)
    exp_neg = b.one("stablehlo.exponential", [b.one("stablehlo.negate", [x], out_type)], out_type)
    denominator = b.one("stablehlo.add", [lowering.full(b, 1, ctx.avals_out[0]), exp_neg],
                        out_type)
    return b.one("stablehlo.divide", [lowering.full(b, 1, ctx.avals_out[0]), denominator],
                 out_type)


def _conj_lowering(ctx: lowering.LoweringRuleContext, x: Value, **params: Any) -> Value:
    """`complex(real(x), -imag(x))`; a real `x` becomes `complex(x, 0)`."""
    b = ctx.builder
    aval = ctx.avals_in[0]
    if not dtypes.is_complex(aval.dtype):
        zeros = lowering.full(b, 0, aval)
        return b.one("stablehlo.complex", [x, zeros], _out_type(ctx))
    part_type = TensorType(aval.shape, dtypes.real_dtype(aval.dtype))
    re = b.one("stablehlo.real", [x], part_type)
    im = b.one("stablehlo.imag", [x], part_type)
    return b.one("stablehlo.complex", [re, b.one("stablehlo.negate", [im], part_type)],
                 _out_type(ctx))


def _square_lowering(ctx: lowering.LoweringRuleContext, x: Value) -> Value:
    """`x * x` for integers, `chlo.square` otherwise."""
    if dtypes.is_int(ctx.avals_in[0].dtype):
        return ctx.builder.one("stablehlo.multiply", [x, x], _out_type(ctx))
    return ctx.builder.one("chlo.square", [x], _out_type(ctx))


def _integer_pow_lowering(ctx: lowering.LoweringRuleContext, x: Value, *, y: int) -> Value:
    """Multiplications by binary exponentiation on |y| (then `1 / acc` for a negative y),
    with JAX's shortcuts for y in (1, 2, 3, -1)."""
    b = ctx.builder
    out_type = _out_type(ctx)

    def mul_(u: Value, v: Value) -> Value:
        return b.one("stablehlo.multiply", [u, v], out_type)

    if y == 1:
        return x
    if y == 2:
        return mul_(x, x)
    if y == 3:
        return mul_(mul_(x, x), x)
    if y == -1:
        return b.one("stablehlo.divide", [_full_like_aval(b, 1, ctx.avals_in[0]), x], out_type)
    # The general case is JAX's `lower_fun` of its lax expansion, whose constants skip the
    # broadcast for rank-0 operands (hence `lowering.full`).
    if y == 0:
        return lowering.full(b, 1, ctx.avals_out[0])
    acc, base, exponent = None, x, builtins.abs(y)
    while exponent:
        if exponent & 1:
            acc = base if acc is None else mul_(acc, base)
        exponent >>= 1
        if exponent:
            base = mul_(base, base)
    if y < 0:
        return b.one("stablehlo.divide", [lowering.full(b, 1, ctx.avals_out[0]), acc], out_type)
    return acc


def _reduce_precision_lowering(ctx: lowering.LoweringRuleContext, x: Value, *,
                               exponent_bits: int, mantissa_bits: int) -> Value:
    """`stablehlo.reduce_precision` with i32 bit counts (printed `format = e8m7`)."""
    return ctx.builder.one("stablehlo.reduce_precision", [x], _out_type(ctx),
                           exponent_bits=ir.IntegerAttr(exponent_bits, "i32"),
                           mantissa_bits=ir.IntegerAttr(mantissa_bits, "i32"))


def _broadcast_operands(ctx: lowering.LoweringRuleContext, *operands: Value) -> list[Value]:
    shape = ctx.avals_out[0].shape
    return [lowering.broadcast_to(ctx.builder, v, shape) for v in operands]


def _mul_lowering(ctx: lowering.LoweringRuleContext, x: Value, y: Value, *,
                  out_dtype: Any = None) -> Value:
    """`stablehlo.multiply`; with an `out_dtype`, the operands are converted to the result
    type first (a `stablehlo.convert` even when the types agree, as JAX emits it)."""
    x, y = _broadcast_operands(ctx, x, y)
    out_type = _out_type(ctx)
    if out_dtype is not None:
        x, y = (ctx.builder.one("stablehlo.convert", [v], out_type) for v in (x, y))
    return ctx.builder.one("stablehlo.multiply", [x, y], out_type)


def _pow_lowering(ctx: lowering.LoweringRuleContext, x: Value, y: Value) -> Value:
    """`stablehlo.power`, an integer exponent converted to the base's dtype first."""
    y = lowering.convert(ctx.builder, y, _out_type(ctx).dtype)
    x, y = _broadcast_operands(ctx, x, y)
    return ctx.builder.one("stablehlo.power", [x, y], _out_type(ctx))


def _minmax_lowering(opcode: str, direction: str) -> lowering.LoweringRule:
    """`stablehlo.maximum`/`minimum`; complex numbers compare lexicographically as (real,
    imag) pairs through compares and selects, as JAX lowers them."""
    def rule(ctx: lowering.LoweringRuleContext, x: Value, y: Value) -> Value:
        b = ctx.builder
        x, y = _broadcast_operands(ctx, x, y)
        out_type = _out_type(ctx)
        if not dtypes.is_complex(out_type.dtype):
            return b.one(opcode, [x, y], out_type)
        part_type = TensorType(out_type.shape, dtypes.real_dtype(out_type.dtype))
        rx, ry = (b.one("stablehlo.real", [v], part_type) for v in (x, y))
        real_eq = lowering.compare(b, rx, ry, "EQ")
        real_cmp = lowering.compare(b, rx, ry, direction)
        ix, iy = (b.one("stablehlo.imag", [v], part_type) for v in (x, y))
        imag_cmp = lowering.compare(b, ix, iy, direction)
        which = b.one("stablehlo.select", [real_eq, imag_cmp, real_cmp], real_eq.type)
        return b.one("stablehlo.select", [which, x, y], out_type)

    return rule


def _compare_lowering(direction: str) -> lowering.LoweringRule:
    """`stablehlo.compare <direction>` of the FLOAT, SIGNED or UNSIGNED type of the operands'
    dtype (bool compares UNSIGNED)."""
    def rule(ctx: lowering.LoweringRuleContext, x: Value, y: Value) -> Value:
        x, y = _broadcast_operands(ctx, x, y)
        return lowering.compare(ctx.builder, x, y, direction)

    return rule


_ONE_OP_LOWERINGS = {
    neg_p: "stablehlo.negate", floor_p: "stablehlo.floor", ceil_p: "stablehlo.ceil",
    is_finite_p: "stablehlo.is_finite", exp_p: "stablehlo.exponential",
    log_p: "stablehlo.log", log1p_p: "stablehlo.log_plus_one",
    expm1_p: "stablehlo.exponential_minus_one", tanh_p: "stablehlo.tanh",
    tan_p: "stablehlo.tan", asin_p: "chlo.asin", acos_p: "chlo.acos", atan_p: "chlo.atan",
    sinh_p: "chlo.sinh", cosh_p: "chlo.cosh", asinh_p: "chlo.asinh", acosh_p: "chlo.acosh",
    atanh_p: "chlo.atanh", sqrt_p: "stablehlo.sqrt", rsqrt_p: "stablehlo.rsqrt",
    cbrt_p: "stablehlo.cbrt", erf_p: "chlo.erf", erfc_p: "chlo.erfc",
    erf_inv_p: "chlo.erf_inv", lgamma_p: "chlo.lgamma", digamma_p: "chlo.digamma",
    abs_p: "stablehlo.abs", not_p: "stablehlo.not", population_count_p: "stablehlo.popcnt",
    clz_p: "stablehlo.count_leading_zeros", real_p: "stablehlo.real",
    imag_p: "stablehlo.imag",
    add_p: "stablehlo.add", sub_p: "stablehlo.subtract", div_p: "stablehlo.divide",
    rem_p: "stablehlo.remainder", atan2_p: "stablehlo.atan2", polygamma_p: "chlo.polygamma",
    nextafter_p: "chlo.next_after", and_p: "stablehlo.and", or_p: "stablehlo.or",
    xor_p: "stablehlo.xor", shift_left_p: "stablehlo.shift_left",
    shift_right_logical_p: "stablehlo.shift_right_logical",
    shift_right_arithmetic_p: "stablehlo.shift_right_arithmetic",
    complex_p: "stablehlo.complex",
}

for _prim, _opcode in _ONE_OP_LOWERINGS.items():
    lowering.register_lowering(_prim, lowering.elementwise(_opcode))
lowering.register_lowering(sin_p, _unary_lowering("stablehlo.sine", _complex_sin))
lowering.register_lowering(cos_p, _unary_lowering("stablehlo.cosine", _complex_cos))
lowering.register_lowering(sign_p, _sign_lowering)
lowering.register_lowering(round_p, _round_lowering)
lowering.register_lowering(exp2_p, _exp2_lowering)
lowering.register_lowering(logistic_p, _logistic_lowering)
lowering.register_lowering(conj_p, _conj_lowering)
lowering.register_lowering(square_p, _square_lowering)
lowering.register_lowering(integer_pow_p, _integer_pow_lowering)
lowering.register_lowering(reduce_precision_p, _reduce_precision_lowering)
lowering.register_lowering(mul_p, _mul_lowering)
lowering.register_lowering(pow_p, _pow_lowering)
lowering.register_lowering(max_p, _minmax_lowering("stablehlo.maximum", "GT"))
lowering.register_lowering(min_p, _minmax_lowering("stablehlo.minimum", "LT"))
for _prim, _direction in ((eq_p, "EQ"), (ne_p, "NE"), (lt_p, "LT"), (le_p, "LE"),
                          (gt_p, "GT"), (ge_p, "GE")):
    lowering.register_lowering(_prim, _compare_lowering(_direction))


# The jvp and transpose rules of every primitive above (they need reductions and structural
# ops, which import this module).
from justjax._src.lax import elementwise_ad  # noqa: E402,F401
