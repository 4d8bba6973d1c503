"""Elementwise primitives: arithmetic, comparison, logic, bit ops, transcendentals, conversion.

Each primitive is declared in one block: the `unop`/`binop` call names its accepted dtypes, its
lowering (the StableHLO or CHLO op JAX 0.10 emits, or a rule for JAX's expansion) and its
derivative; the lines after it add what the factory does not say (a transpose, a special
abstract evaluation) and its public function. Adding an op is one such block, plus its
kernels and its op record.

Derivatives build JAX's equations in JAX's order, so `make_jaxpr(grad(f))` prints as JAX's
(`cos`' tangent is `neg(mul(g, sin(x)))`; `tanh`, `exp`, `sqrt`, `logistic`, `max`/`min` reuse
the primal output), with JAX's conventions at kinks (`abs` takes the `x >= 0` branch at zero,
`max(x, x)` splits the tangent half and half). Integer semantics follow XLA: division
truncates toward zero, x / 0 is -1 and x % 0 is x, shifts by the bit width or more give 0 (or
the sign for arithmetic right shifts), overflow wraps; the reference backend's kernels
(`backends/reference/kernels/elementwise.py`) are the NumPy functions with these semantics.
"""
from __future__ import annotations

import builtins
import enum
import operator
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import JaxprEqn, PrettyContext, pp_eqn_default, pp_eqn_rules
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Builder, TensorType, Value
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import selection, sharding_rules, structural, utils
from justjax._src.lax.utils import (ANY, COMPLEX, FLOAT, INEXACT, INT, INT_OR_BOOL, NUMERIC,
                                    standard_primitive)

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


# -- declaring an elementwise op ------------------------------------------------------------------

JvpRules = Callable | Sequence[Callable | None] | None
LowerSpec = str | lowering.LoweringRule | None

# The primitives with JAX's `accuracy` parameter (a requested precision; None is the default).
ACCURACY_PRIMITIVES: set[Primitive] = set()


def naryop(name: str, accepted: Sequence[Sequence[np.dtype]], *,
           result_dtype: Callable[[np.dtype], np.dtype] = lambda d: d,
           require_same_dtypes: bool = True, weak_type_rule: Callable | None = None,
           lower: LowerSpec = None, jvp: JvpRules = None, jvp2: JvpRules = None,
           zero_jvp: bool = False, accuracy: bool = False) -> Primitive:
    """An elementwise primitive over operands of equal shape (rank-0 operands broadcast),
    declared with its rules.

    Args:
      name: the primitive's name.
      accepted: per operand, the dtypes it accepts.
      result_dtype: the result's dtype from the first operand's.
      require_same_dtypes: whether all operands must share one dtype.
      weak_type_rule: the result's weak type (default: weak when every operand is).
      lower: a StableHLO/CHLO opcode lowered as one op, or a lowering rule.
      jvp: `ad.defjvp` rules (one callable, or one per operand).
      jvp2: `ad.defjvp2` rules (which also get the primal output).
      zero_jvp: the output does not vary smoothly with the inputs.
      accuracy: the primitive takes JAX's `accuracy` parameter (hidden in jaxprs while None).
    Returns:
      The primitive, with its abstract eval, eager impl, batching and the rules given.
    """
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

    prim = standard_primitive(name, shape_rule, dtype_rule, weak_type_rule,
                              sharding_rule=sharding_rules.broadcasting(name))
    dispatch.def_backend_impl(prim)
    if len(accepted) == 1:
        batching.defvectorized(prim)
    else:
        batching.defbroadcasting(prim)
        core.joins_varying.add(prim)
    _register_rules(prim, lower, jvp, jvp2, zero_jvp, accuracy)
    return prim


def _register_rules(prim: Primitive, lower: LowerSpec, jvp: JvpRules, jvp2: JvpRules,
                    zero_jvp: bool, accuracy: bool) -> None:
    if isinstance(lower, str):
        lowering.register_lowering(prim, lowering.elementwise(lower))
    elif lower is not None:
        lowering.register_lowering(prim, lower)
    if jvp is not None:
        ad.defjvp(prim, *(jvp if isinstance(jvp, (tuple, list)) else (jvp,)))
    if jvp2 is not None:
        ad.defjvp2(prim, *(jvp2 if isinstance(jvp2, (tuple, list)) else (jvp2,)))
    if zero_jvp:
        ad.defjvp_zero(prim)
    if accuracy:
        ACCURACY_PRIMITIVES.add(prim)
        pp_eqn_rules[prim] = _pp_hiding_none("accuracy")


def unop(name: str, accepted: Sequence[np.dtype], **kwargs: Any) -> Primitive:
    """A one-operand `naryop`."""
    return naryop(name, [accepted], **kwargs)


def binop(name: str, accepted: Sequence[np.dtype], **kwargs: Any) -> Primitive:
    """A two-operand `naryop` whose operands accept the same dtypes."""
    return naryop(name, [accepted, accepted], **kwargs)


def _to_bool(dtype: np.dtype) -> np.dtype:
    return dtypes.bool_


def _to_real(dtype: np.dtype) -> np.dtype:
    return dtypes.real_dtype(dtype)


def _pp_hiding_none(*names: str) -> Callable:
    def rule(eqn: JaxprEqn, context: PrettyContext) -> Any:
        params = {k: v for k, v in eqn.params.items() if not (k in names and v is None)}
        return pp_eqn_default(eqn, context, params)
    return rule


class RoundingMethod(enum.IntEnum):
    """How `lax.round` breaks ties."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class AccuracyMode(enum.Enum):
    """A transcendental's requested accuracy (its `accuracy` parameter); `HIGHEST` also makes
    the derivatives of tanh, logistic and expm1 use their most accurate formulas."""

    HIGHEST = 1
    DEFAULT = 2


# lax function names that differ from their primitive's name.
_PUBLIC_NAMES = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or",
                 "xor": "bitwise_xor"}


def _unary(prim: Primitive) -> Callable[[Any], Any]:
    """The public function of a unary primitive (with `accuracy` where it has one)."""
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
    """The public function of a binary primitive."""
    def op(x: Any, y: Any) -> Any:
        return prim.bind(x, y)
    op.__name__ = op.__qualname__ = _PUBLIC_NAMES.get(prim.name, prim.name)
    op.__doc__ = f"Elementwise `{prim.name}` of two arrays of one dtype and shape (or scalars)."
    return op


# -- helpers of the derivative rules -------------------------------------------------------------
# Constants shaped like their example, as JAX's lax helpers make them, and the implicit
# broadcasting of rank-0 operands.

def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _const(example: Any, value: Any) -> Any:
    """`value` in `example`'s dtype: a Python scalar when `example` is a weak scalar (so it
    stays weak), else a NumPy scalar; either is a literal in a jaxpr."""
    aval = core.get_aval(example)
    if aval.weak_type and aval.ndim == 0:
        python_type = {"b": bool, "i": int, "u": int, "f": float,
                       "c": builtins.complex}[dtypes.kind(aval.dtype)]
        scalar = python_type(value)
        if dtypes.dtype_of_value(scalar) == aval.dtype:
            return scalar
    return np.array(value, dtype=aval.dtype)


def _full_like(x: Any, value: Any, shape: Sequence[int] | None = None) -> Any:
    """`value` broadcast to `x`'s shape (or `shape`), with `x`'s dtype and weak type (and,
    of `x`'s shape, its type's split over Explicit mesh axes): a `broadcast_in_dim` of a
    scalar literal, as `lax.full_like`."""
    aval = core.get_aval(x)
    fill = structural.convert_element_type(value, aval.dtype, aval.weak_type)
    if shape is None and aval._sharding is not None:
        return structural.broadcast_in_dim_p.bind(fill, shape=aval.shape, broadcast_dimensions=(),
                                                  sharding=aval._sharding)
    return structural.broadcast(fill, aval.shape if shape is None else tuple(shape))


def _zeros(x: Any) -> Any:
    return _full_like(x, 0)


def _ones(x: Any) -> Any:
    return _full_like(x, 1)


def _twos(x: Any) -> Any:
    return _full_like(x, 2)


def _zero(x: Any) -> Any:
    return _full_like(x, 0, ())


def _one(x: Any) -> Any:
    return _full_like(x, 1, ())


def _replace_zero(x: Any) -> Any:
    """`x` with its zeros replaced by ones (keeps log and division finite where a factor
    multiplying them is zero)."""
    return selection.select(eq(x, _const(x, 0)), _ones(x), x)


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(_dtype(x))


def _unbroadcast(aval: ShapedArray, x: Any) -> Any:
    """Sums the cotangent `x` of a broadcasting elementwise op down to its operand's `aval`:
    over every dimension for a rank-0 operand, else over the dimensions where the operand
    has size 1, reshaped back to the operand's shape."""
    # Imported here: the reductions' own derivatives are written with this module's ops.
    from justjax._src.lax import reductions
    x_shape = core.get_aval(x).shape
    if x_shape == aval.shape:
        return x
    if not aval.shape:
        return reductions.reduce_sum(x, list(range(len(x_shape))))
    dims = [i for i, (a, b) in enumerate(zip(x_shape, aval.shape, strict=True)) if a != b]
    summed = reductions.reduce_sum(x, dims)
    return structural.reshape(summed, aval.shape)


def _maybe_broadcast(target_shape: Sequence[int], x: Any) -> Any:
    """Broadcasts a tangent `x` to the output shape of the elementwise op it feeds."""
    x_shape = core.get_aval(x).shape
    target_shape = tuple(target_shape)
    if x_shape == target_shape:
        return x
    if not x_shape:
        return structural.broadcast_in_dim(x, target_shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, target_shape, strict=True)) if a == b]
    squeezed = structural.reshape(x, [x_shape[i] for i in dims])
    return structural.broadcast_in_dim(squeezed, target_shape, dims)


def _broadcast_shapes(*values: Any) -> tuple[int, ...]:
    return tuple(utils.broadcast_shapes(*[core.get_aval(v).shape for v in values]))


def _operand_aval(x: Any) -> ShapedArray:
    return x.aval if ad.is_undefined_primal(x) else core.get_aval(x)


# -- helpers of the lowering rules ----------------------------------------------------------------
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


def _broadcast_operands(ctx: lowering.LoweringRuleContext, *operands: Value) -> list[Value]:
    shape = ctx.avals_out[0].shape
    return [lowering.broadcast_to(ctx.builder, v, shape) for v in operands]


def _unary_lowering(opcode: str, complex_fun: Callable) -> lowering.LoweringRule:
    """The rule of a one-op unary primitive whose complex operands go through `complex_fun`
    (written with lax, lowered in place), as JAX's sin and cos do."""
    real_rule = lowering.elementwise(opcode)
    complex_rule = lowering.lower_fun(complex_fun, multiple_results=False)

    def rule(ctx: lowering.LoweringRuleContext, x: Value, **params: Any) -> Value:
        if dtypes.is_complex(ctx.avals_in[0].dtype):
            return complex_rule(ctx, x)
        return real_rule(ctx, x)

    return rule


def _compare_lowering(direction: str) -> lowering.LoweringRule:
    """`stablehlo.compare <direction>` of the FLOAT, SIGNED or UNSIGNED type of the operands'
    dtype (bool compares UNSIGNED)."""
    def rule(ctx: lowering.LoweringRuleContext, x: Value, y: Value) -> Value:
        x, y = _broadcast_operands(ctx, x, y)
        return lowering.compare(ctx.builder, x, y, direction)

    return rule


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


# -- sign, rounding and predicates ----------------------------------------------------------------

neg_p = unop("neg", NUMERIC, lower="stablehlo.negate")
ad.deflinear2(neg_p, lambda t, operand: [neg(t)])
neg = _unary(neg_p)


def _sign_lowering(ctx: lowering.LoweringRuleContext, x: Value) -> Value:
    """`stablehlo.sign`, except unsigned integers: `x == 0 ? 0 : 1`."""
    aval = ctx.avals_in[0]
    if not dtypes.is_unsigned(aval.dtype):
        return ctx.builder.one("stablehlo.sign", [x], _out_type(ctx))
    b = ctx.builder
    is_zero = lowering.compare(b, x, _full_like_aval(b, 0, aval), "EQ")
    zeros, ones = _full_like_aval(b, 0, aval), _full_like_aval(b, 1, aval)
    return b.one("stablehlo.select", [is_zero, zeros, ones], _out_type(ctx))


sign_p = unop("sign", NUMERIC, lower=_sign_lowering, zero_jvp=True)
sign = _unary(sign_p)
floor_p = unop("floor", FLOAT, lower="stablehlo.floor", zero_jvp=True)
floor = _unary(floor_p)
ceil_p = unop("ceil", FLOAT, lower="stablehlo.ceil", zero_jvp=True)
ceil = _unary(ceil_p)
is_finite_p = unop("is_finite", FLOAT, result_dtype=_to_bool, lower="stablehlo.is_finite",
                   zero_jvp=True)
is_finite = _unary(is_finite_p)


def _round_lowering(ctx: lowering.LoweringRuleContext, x: Value, *,
                    rounding_method: Any) -> Value:
    """`stablehlo.round_nearest_afz` or `stablehlo.round_nearest_even`."""
    if int(rounding_method) == int(RoundingMethod.TO_NEAREST_EVEN):
        opcode = "stablehlo.round_nearest_even"
    else:
        opcode = "stablehlo.round_nearest_afz"
    return ctx.builder.one(opcode, [x], _out_type(ctx))


def _round_abstract(x: ShapedArray, *, rounding_method: Any) -> ShapedArray:
    utils.check_dtype("round", x, FLOAT)
    return x


round_p = unop("round", FLOAT, lower=_round_lowering, zero_jvp=True)
round_p.def_abstract_eval(_round_abstract)


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Rounds to the nearest integer; ties away from zero unless `TO_NEAREST_EVEN`."""
    return round_p.bind(x, rounding_method=RoundingMethod(int(rounding_method)))


def _abs_jvp(g: Any, ans: Any, x: Any) -> Any:
    if _is_complex(x):
        # d|z| = Re(conj(z) dz / |z|), with |z| = 0 replaced by 1 (derivative 0 there).
        conj_x = conj(x)
        magnitude = _replace_zero(structural.convert_element_type(ans, _dtype(x)))
        return real(mul(g, div(conj_x, magnitude)))
    # At 0 the derivative is +1 (the `x >= 0` branch), as in JAX.
    return selection.select(ge(x, _zero(x)), g, neg(g))


abs_p = unop("abs", NUMERIC, result_dtype=_to_real, lower="stablehlo.abs", jvp2=_abs_jvp)
abs = _unary(abs_p)


# -- complex numbers ------------------------------------------------------------------------------

real_p = unop("real", COMPLEX, result_dtype=_to_real, lower="stablehlo.real")
ad.deflinear2(real_p, lambda t, _: [complex(t, np.zeros((), _dtype(t)))])
real = _unary(real_p)
imag_p = unop("imag", COMPLEX, result_dtype=_to_real, lower="stablehlo.imag")
ad.deflinear2(imag_p, lambda t, _: [complex(np.zeros((), _dtype(t)), neg(t))])
imag = _unary(imag_p)


def _complex_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    """complex(x, y) = x + iy: the real part goes to x, minus the imaginary part to y."""
    x_ct = _unbroadcast(x.aval, real(t)) if ad.is_undefined_primal(x) else None
    y_ct = _unbroadcast(y.aval, imag(neg(t))) if ad.is_undefined_primal(y) else None
    return [x_ct, y_ct]


complex_p = binop("complex", (dtypes.float32, dtypes.float64),
                  result_dtype=dtypes.to_complex_dtype, lower="stablehlo.complex")
ad.deflinear2(complex_p, _complex_transpose)
complex = _binary(complex_p)


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


def _conj_transpose(t: Any, x: Any, *, input_dtype: np.dtype) -> list[Any]:
    if dtypes.is_complex(input_dtype):
        return [conj(t)]
    # A real input became complex: only the real part of the cotangent flows back.
    return [real(t)]


conj_p = unop("conj", INEXACT, lower=_conj_lowering,
              result_dtype=lambda d: d if dtypes.is_complex(d) else dtypes.to_complex_dtype(d))
ad.deflinear2(conj_p, _conj_transpose)


def conj(x: Any) -> Any:
    """Complex conjugate; real inputs become complex (StableHLO `complex(real, -imag)`)."""
    return conj_p.bind(x, input_dtype=core.get_aval(x).dtype)


# -- arithmetic -----------------------------------------------------------------------------------

def _add_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, y = primals
    x_dot, y_dot = tangents
    primal_out = add(x, y)
    out_shape = core.get_aval(primal_out).shape
    if type(x_dot) is ad.Zero and type(y_dot) is ad.Zero:
        return primal_out, ad.Zero.from_primal_value(primal_out)
    if type(x_dot) is ad.Zero:
        return primal_out, _maybe_broadcast(out_shape, y_dot)
    if type(y_dot) is ad.Zero:
        return primal_out, _maybe_broadcast(out_shape, x_dot)
    return primal_out, add(x_dot, y_dot)


def _add_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    x_aval, y_aval = _operand_aval(x), _operand_aval(y)
    if type(t) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x_aval)), ad.Zero(ad.tangent_aval(y_aval))]
    return [_unbroadcast(x_aval, t), _unbroadcast(y_aval, t)]


add_p = binop("add", NUMERIC, lower="stablehlo.add")
ad.primitive_jvps[add_p] = _add_jvp
ad.primitive_transposes[add_p] = _add_transpose
add = _binary(add_p)


def _sub_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, y = primals
    x_dot, y_dot = tangents
    primal_out = sub(x, y)
    out_shape = core.get_aval(primal_out).shape
    if type(x_dot) is ad.Zero and type(y_dot) is ad.Zero:
        return primal_out, ad.Zero.from_primal_value(primal_out)
    if type(x_dot) is ad.Zero:
        return primal_out, _maybe_broadcast(out_shape, neg(y_dot))
    if type(y_dot) is ad.Zero:
        return primal_out, _maybe_broadcast(out_shape, x_dot)
    return primal_out, sub(x_dot, y_dot)


def _sub_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    x_aval, y_aval = _operand_aval(x), _operand_aval(y)
    if type(t) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x_aval)), ad.Zero(ad.tangent_aval(y_aval))]
    return [_unbroadcast(x_aval, t), _unbroadcast(y_aval, neg(t))]


sub_p = binop("sub", NUMERIC, lower="stablehlo.subtract")
ad.primitive_jvps[sub_p] = _sub_jvp
ad.primitive_transposes[sub_p] = _sub_transpose
sub = _binary(sub_p)


def _mul_lowering(ctx: lowering.LoweringRuleContext, x: Value, y: Value, *,
                  out_dtype: Any = None) -> Value:
    """`stablehlo.multiply`; with an `out_dtype`, the operands are converted to the result
    type first (a `stablehlo.convert` even when the types agree, as JAX emits it)."""
    x, y = _broadcast_operands(ctx, x, y)
    out_type = _out_type(ctx)
    if out_dtype is not None:
        x, y = (ctx.builder.one("stablehlo.convert", [v], out_type) for v in (x, y))
    return ctx.builder.one("stablehlo.multiply", [x, y], out_type)


def _mul_transpose_lhs(ct: Any, x: Any, y: Any, *, out_dtype: Any) -> Any:
    product = mul_p.bind(ct, y, out_dtype=None if out_dtype is None else x.aval.dtype)
    return _unbroadcast(x.aval, product)


def _mul_transpose_rhs(ct: Any, x: Any, y: Any, *, out_dtype: Any) -> Any:
    product = mul_p.bind(x, ct, out_dtype=None if out_dtype is None else y.aval.dtype)
    return _unbroadcast(y.aval, product)


mul_p = binop("mul", NUMERIC, lower=_mul_lowering)
ad.defbilinear(mul_p, _mul_transpose_lhs, _mul_transpose_rhs)
# JAX gives mul an `out_dtype` parameter, hidden when printing jaxprs while it is None.
pp_eqn_rules[mul_p] = _pp_hiding_none("out_dtype")


def mul(x: Any, y: Any) -> Any:
    """Elementwise `mul` of two arrays of one dtype and shape (or scalars)."""
    return mul_p.bind(x, y, out_dtype=None)


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    """div is linear in its numerator only."""
    if ad.is_undefined_primal(y):
        raise RuntimeError("nonlinear div can't be transposed")
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval), None]
    return [_unbroadcast(x.aval, div(ct, y)), None]


div_p = binop("div", NUMERIC, lower="stablehlo.divide",
              jvp=(lambda g, x, y: div(g, y),
                   lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2))))
ad.primitive_transposes[div_p] = _div_transpose
div = _binary(div_p)


def _rem_jvp_rhs(g: Any, x: Any, y: Any) -> Any:
    # d/dy fmod(x, y) = -trunc(x / y), written as sign * floor(abs) as JAX does.
    return mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y)))))


rem_p = binop("rem", INT + FLOAT, lower="stablehlo.remainder",
              jvp=(lambda g, x, y: _maybe_broadcast(_broadcast_shapes(x, y), g), _rem_jvp_rhs))
rem = _binary(rem_p)


def _eq_meet(a: Any, b: Any) -> Any:
    a_dtype, b_dtype = _dtype(a), _dtype(b)
    if a_dtype != b_dtype:
        higher = dtypes.promote_types(a_dtype, b_dtype)
        if higher == a_dtype:
            a = structural.convert_element_type(a, b_dtype)
        else:
            b = structural.convert_element_type(b, a_dtype)
    return eq(a, b)


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where x alone attains z, 1/2 where x and y both do, else 0 (splits ties evenly)."""
    return div(selection.select(_eq_meet(x, z), _ones(z), _zeros(z)),
               selection.select(_eq_meet(y, z), _twos(z), _ones(z)))


_MINMAX_JVP = (lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
               lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
max_p = binop("max", ANY, lower=_minmax_lowering("stablehlo.maximum", "GT"), jvp2=_MINMAX_JVP)
max = _binary(max_p)
min_p = binop("min", ANY, lower=_minmax_lowering("stablehlo.minimum", "LT"), jvp2=_MINMAX_JVP)
min = _binary(min_p)


def _square_lowering(ctx: lowering.LoweringRuleContext, x: Value) -> Value:
    """`x * x` for integers, `chlo.square` otherwise."""
    if dtypes.is_int(ctx.avals_in[0].dtype):
        return ctx.builder.one("stablehlo.multiply", [x, x], _out_type(ctx))
    return ctx.builder.one("chlo.square", [x], _out_type(ctx))


square_p = unop("square", NUMERIC, lower=_square_lowering,
                jvp2=lambda g, ans, x: mul(g, mul(_const(x, 2), x)))
square = _unary(square_p)


def _pow_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    """`pow` takes an integer exponent of any width, or a float one of the base's dtype."""
    for position, (aval, accepted) in enumerate(((x, INEXACT), (y, INEXACT + INT))):
        utils.check_dtype("pow", aval, accepted, position)
    if dtypes.is_inexact(y.dtype):
        utils.check_same_dtypes("pow", x, y)
    return ShapedArray(utils.broadcasting_shape_rule("pow", x, y), x.dtype,
                       utils.standard_weak_type_rule(x, y))


def _pow_lowering(ctx: lowering.LoweringRuleContext, x: Value, y: Value) -> Value:
    """`stablehlo.power`, an integer exponent converted to the base's dtype first."""
    y = lowering.convert(ctx.builder, y, _out_type(ctx).dtype)
    x, y = _broadcast_operands(ctx, x, y)
    return ctx.builder.one("stablehlo.power", [x, y], _out_type(ctx))


def _pow_jvp_lhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    y_dtype = _dtype(y)
    result_dtype = dtypes.result_type(x, y)
    if result_dtype == dtypes.bool_:
        result_dtype = np.dtype(np.int32)
    x = structural.convert_element_type(x, result_dtype)
    y = structural.convert_element_type(y, result_dtype)
    if dtypes.is_int(y_dtype):
        x_shape, y_shape = core.get_aval(x).shape, core.get_aval(y).shape
        if x_shape != y_shape:
            shape = _broadcast_shapes(x, y)
            x = _maybe_broadcast(shape, x)
            y = _maybe_broadcast(shape, y)
        # An integer exponent of 0 has derivative 0 even at x = 0, where y x^(y-1) is NaN.
        jac = selection.select(eq(y, _const(y, 0)), _zeros(y),
                               mul(_replace_zero(y), pow(x, sub(y, _ones(y)))))
    else:
        jac = mul(y, pow(x, sub(y, _ones(y))))
    return mul(g, jac)


def _pow_jvp_rhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    y_dtype = _dtype(y)
    return structural.convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), y_dtype)


pow_p = naryop("pow", [INEXACT, INEXACT + INT], require_same_dtypes=False, lower=_pow_lowering,
               jvp2=(_pow_jvp_lhs, _pow_jvp_rhs))
pow_p.def_abstract_eval(_pow_abstract)
pow = _binary(pow_p)


def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    utils.check_dtype("integer_pow", x, NUMERIC)
    if y < 0 and dtypes.is_int(x.dtype):
        raise TypeError("Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short(short_dtypes=False)}, {y})")
    return x


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


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    if y == 0:
        return _zeros(g)
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_const(x, y), x))
    return mul(g, mul(_const(x, y), integer_pow(x, y - 1)))


integer_pow_p = unop("integer_pow", NUMERIC, lower=_integer_pow_lowering, jvp=_integer_pow_jvp)
integer_pow_p.def_abstract_eval(_integer_pow_abstract)


def integer_pow(x: Any, y: int) -> Any:
    """`x ** y` for a static integer `y`, by repeated multiplication."""
    return integer_pow_p.bind(x, y=int(y))


def reciprocal(x: Any) -> Any:
    """`1 / x` elementwise, as JAX stages it: `integer_pow[y=-1]`."""
    return integer_pow(x, -1)


def _reduce_precision_lowering(ctx: lowering.LoweringRuleContext, x: Value, *,
                               exponent_bits: int, mantissa_bits: int) -> Value:
    """`stablehlo.reduce_precision` with i32 bit counts (printed `format = e8m7`)."""
    return ctx.builder.one("stablehlo.reduce_precision", [x], _out_type(ctx),
                           exponent_bits=ir.IntegerAttr(exponent_bits, "i32"),
                           mantissa_bits=ir.IntegerAttr(mantissa_bits, "i32"))


reduce_precision_p = unop("reduce_precision", FLOAT, lower=_reduce_precision_lowering)
ad.deflinear(reduce_precision_p, lambda t, **params: [reduce_precision_p.bind(t, **params)])


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Rounds floats as if stored with the given exponent and mantissa widths
    (StableHLO `reduce_precision`); (8, 7) is bfloat16's precision, (5, 10) float16's."""
    exponent_bits = operator.index(exponent_bits)
    mantissa_bits = operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError("reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


# nextafter has no derivative rule in JAX either; differentiating it raises as in JAX.
nextafter_p = binop("nextafter", FLOAT, lower="chlo.next_after")
nextafter = _binary(nextafter_p)


# -- bitwise operations and comparisons (zero derivatives) ----------------------------------------

not_p = unop("not", INT_OR_BOOL, lower="stablehlo.not", zero_jvp=True)
bitwise_not = _unary(not_p)
and_p = binop("and", INT_OR_BOOL, lower="stablehlo.and", zero_jvp=True)
bitwise_and = _binary(and_p)
or_p = binop("or", INT_OR_BOOL, lower="stablehlo.or", zero_jvp=True)
bitwise_or = _binary(or_p)
xor_p = binop("xor", INT_OR_BOOL, lower="stablehlo.xor", zero_jvp=True)
bitwise_xor = _binary(xor_p)
# JAX registers no jvp for these two; their integer operands only ever have zero tangents,
# so a zero rule changes nothing but lets explicit float0 tangents through.
population_count_p = unop("population_count", INT, lower="stablehlo.popcnt", zero_jvp=True)
population_count = _unary(population_count_p)
clz_p = unop("clz", INT, lower="stablehlo.count_leading_zeros", zero_jvp=True)
clz = _unary(clz_p)
shift_left_p = binop("shift_left", INT, lower="stablehlo.shift_left", zero_jvp=True)
shift_left = _binary(shift_left_p)
shift_right_logical_p = binop("shift_right_logical", INT,
                              lower="stablehlo.shift_right_logical", zero_jvp=True)
shift_right_logical = _binary(shift_right_logical_p)
shift_right_arithmetic_p = binop("shift_right_arithmetic", INT,
                                 lower="stablehlo.shift_right_arithmetic", zero_jvp=True)
shift_right_arithmetic = _binary(shift_right_arithmetic_p)

_ORDERED = utils.INT + utils.FLOAT + utils.BOOL
eq_p = binop("eq", ANY, result_dtype=_to_bool, lower=_compare_lowering("EQ"), zero_jvp=True)
eq = _binary(eq_p)
ne_p = binop("ne", ANY, result_dtype=_to_bool, lower=_compare_lowering("NE"), zero_jvp=True)
ne = _binary(ne_p)
lt_p = binop("lt", _ORDERED, result_dtype=_to_bool, lower=_compare_lowering("LT"),
             zero_jvp=True)
lt = _binary(lt_p)
le_p = binop("le", _ORDERED, result_dtype=_to_bool, lower=_compare_lowering("LE"),
             zero_jvp=True)
le = _binary(le_p)
gt_p = binop("gt", _ORDERED, result_dtype=_to_bool, lower=_compare_lowering("GT"),
             zero_jvp=True)
gt = _binary(gt_p)
ge_p = binop("ge", _ORDERED, result_dtype=_to_bool, lower=_compare_lowering("GE"),
             zero_jvp=True)
ge = _binary(ge_p)


# -- exponentials and logarithms ------------------------------------------------------------------

exp_p = unop("exp", INEXACT, lower="stablehlo.exponential", accuracy=True,
             jvp2=lambda g, ans, x, **params: mul(g, ans))
exp = _unary(exp_p)


def _exp2_lowering(ctx: lowering.LoweringRuleContext, x: Value, **params: Any) -> Value:
    """`exp(log(2) * x)`, as JAX lowers exp2."""
    b = ctx.builder
    log2 = _full_like_aval(b, np.log(2), ctx.avals_in[0])
    product = b.one("stablehlo.multiply", [log2, x], _out_type(ctx))
    return b.one("stablehlo.exponential", [product], _out_type(ctx))


exp2_p = unop("exp2", INEXACT, lower=_exp2_lowering, accuracy=True,
              jvp2=lambda g, ans, x, **params: mul(log(_const(x, 2)), mul(g, ans)))
exp2 = _unary(exp2_p)
log_p = unop("log", INEXACT, lower="stablehlo.log", accuracy=True,
             jvp=lambda g, x, **params: div(g, x))
log = _unary(log_p)
log1p_p = unop("log1p", INEXACT, lower="stablehlo.log_plus_one", accuracy=True,
               jvp=lambda g, x, **params: div(g, add(x, _one(x))))
log1p = _unary(log1p_p)


def _expm1_jvp(g: Any, ans: Any, x: Any, *, accuracy: Any) -> Any:
    if accuracy is AccuracyMode.HIGHEST:
        return mul(g, exp(x, accuracy=accuracy))
    return mul(g, add(ans, _one(ans)))


expm1_p = unop("expm1", INEXACT, lower="stablehlo.exponential_minus_one", accuracy=True,
               jvp2=_expm1_jvp)
expm1 = _unary(expm1_p)


def _tanh_jvp(g: Any, ans: Any, x: Any, *, accuracy: Any) -> Any:
    if accuracy is AccuracyMode.HIGHEST:
        # 1 - tanh(x)^2 = 4 logistic(2x) logistic(-2x), without cancellation.
        product = mul(logistic(mul(_const(x, 2), x), accuracy=accuracy),
                      logistic(mul(_const(x, -2), x), accuracy=accuracy))
        return mul(g, mul(_const(x, 4), product))
    return mul(add(g, mul(g, ans)), sub(_one(x), ans))


tanh_p = unop("tanh", INEXACT, lower="stablehlo.tanh", accuracy=True, jvp2=_tanh_jvp)
tanh = _unary(tanh_p)


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


def _logistic_jvp(g: Any, ans: Any, x: Any, *, accuracy: Any) -> Any:
    if accuracy is AccuracyMode.HIGHEST:
        return mul(g, mul(ans, logistic(neg(x))))
    return mul(g, mul(ans, sub(_one(ans), ans)))


logistic_p = unop("logistic", INEXACT, lower=_logistic_lowering, accuracy=True,
                  jvp2=_logistic_jvp)
logistic = _unary(logistic_p)


# -- trigonometric and hyperbolic functions -------------------------------------------------------

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
    return selection.select(a_is_zero, complex(zero, im), complex(re, im))


def _complex_cos(x: Any) -> Any:
    """cos of a complex number, as `_complex_sin`."""
    zero, a_is_zero, sn, cs, cosh_b, sinh_b = _complex_trig_parts(x)
    re, im = mul(cs, cosh_b), mul(neg(sn), sinh_b)
    return selection.select(a_is_zero, complex(re, zero), complex(re, im))


sin_p = unop("sin", INEXACT, lower=_unary_lowering("stablehlo.sine", _complex_sin),
             accuracy=True, jvp=lambda g, x, *, accuracy: mul(g, cos(x, accuracy=accuracy)))
sin = _unary(sin_p)
cos_p = unop("cos", INEXACT, lower=_unary_lowering("stablehlo.cosine", _complex_cos),
             accuracy=True,
             jvp=lambda g, x, *, accuracy: neg(mul(g, sin(x, accuracy=accuracy))))
cos = _unary(cos_p)
tan_p = unop("tan", INEXACT, lower="stablehlo.tan", accuracy=True,
             jvp2=lambda g, ans, x, **params: mul(g, add(_const(x, 1), square(ans))))
tan = _unary(tan_p)
asin_p = unop("asin", INEXACT, lower="chlo.asin",
              jvp=lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
asin = _unary(asin_p)
acos_p = unop("acos", INEXACT, lower="chlo.acos",
              jvp=lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
acos = _unary(acos_p)
atan_p = unop("atan", INEXACT, lower="chlo.atan",
              jvp=lambda g, x: div(g, add(_const(x, 1), square(x))))
atan = _unary(atan_p)
atan2_p = binop("atan2", INEXACT, lower="stablehlo.atan2",
                jvp=(lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
                     lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y))))))
atan2 = _binary(atan2_p)
sinh_p = unop("sinh", INEXACT, lower="chlo.sinh", jvp=lambda g, x: mul(g, cosh(x)))
sinh = _unary(sinh_p)
cosh_p = unop("cosh", INEXACT, lower="chlo.cosh", jvp=lambda g, x: mul(g, sinh(x)))
cosh = _unary(cosh_p)
asinh_p = unop("asinh", INEXACT, lower="chlo.asinh",
               jvp=lambda g, x: mul(g, rsqrt(add(square(x), _one(x)))))
asinh = _unary(asinh_p)
# x^2 - 1 rather than (x + 1)(x - 1): the domain is x >= 1, away from where that matters.
acosh_p = unop("acosh", INEXACT, lower="chlo.acosh",
               jvp=lambda g, x: mul(g, rsqrt(sub(square(x), _one(x)))))
acosh = _unary(acosh_p)
atanh_p = unop("atanh", INEXACT, lower="chlo.atanh",
               jvp=lambda g, x: mul(integer_pow(add(_one(x), x), -1), div(g, sub(_one(x), x))))
atanh = _unary(atanh_p)


# -- roots ----------------------------------------------------------------------------------------

sqrt_p = unop("sqrt", INEXACT, lower="stablehlo.sqrt", accuracy=True,
              jvp2=lambda g, ans, x, **params: mul(g, div(_const(x, 0.5), ans)))
sqrt = _unary(sqrt_p)
rsqrt_p = unop("rsqrt", INEXACT, lower="stablehlo.rsqrt", accuracy=True,
               jvp2=lambda g, ans, x, **params: mul(g, mul(_const(x, -0.5), div(ans, x))))
rsqrt = _unary(rsqrt_p)
cbrt_p = unop("cbrt", FLOAT, lower="stablehlo.cbrt", accuracy=True,
              jvp2=lambda g, ans, x, **params: mul(g, mul(_const(x, 1 / 3),
                                                          integer_pow(ans, -2))))
cbrt = _unary(cbrt_p)


# -- special functions ----------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)

erf_p = unop("erf", FLOAT, lower="chlo.erf",
             jvp=lambda g, x: mul(_const(x, _TWO_OVER_SQRT_PI), mul(g, exp(neg(square(x))))))
erf = _unary(erf_p)
erfc_p = unop("erfc", FLOAT, lower="chlo.erfc",
              jvp=lambda g, x: mul(_const(x, -_TWO_OVER_SQRT_PI), mul(g, exp(neg(square(x))))))
erfc = _unary(erfc_p)
erf_inv_p = unop("erf_inv", FLOAT, lower="chlo.erf_inv",
                 jvp2=lambda g, ans, x: mul(_const(x, np.sqrt(np.pi) / 2.0),
                                            mul(g, exp(square(ans)))))
erf_inv = _unary(erf_inv_p)
lgamma_p = unop("lgamma", FLOAT, lower="chlo.lgamma", jvp=lambda g, x: mul(g, digamma(x)))
lgamma = _unary(lgamma_p)
digamma_p = unop("digamma", FLOAT, lower="chlo.digamma",
                 jvp=lambda g, x: mul(g, polygamma(_const(x, 1), x)))
digamma = _unary(digamma_p)


def _polygamma_jvp_m(g: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma gradient with respect to m is not supported")


polygamma_p = binop("polygamma", FLOAT, lower="chlo.polygamma",
                    jvp=(_polygamma_jvp_m,
                         lambda g, m, x: mul(g, polygamma(add(m, _const(m, 1)), x))))
polygamma = _binary(polygamma_p)
