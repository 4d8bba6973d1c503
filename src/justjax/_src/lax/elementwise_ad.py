"""Differentiation rules of the elementwise primitives (`elementwise.py`).

Each rule builds the same equations as JAX's, in the same order, so `make_jaxpr(grad(f))`
prints as JAX prints it: e.g. `cos`' tangent is `neg(mul(g, sin(x)))`, `tanh`, `exp`, `sqrt`,
`logistic` and `max`/`min` reuse the primal output (`ans`), `mul` transposes to `mul(ct, y)`
for its left operand and `mul(x, ct)` for its right one. Conventions at kinks are JAX's:
`abs` takes the `x >= 0` branch at zero, `max(x, x)` splits the tangent half and half, and
rounding, comparison, bitwise and integer-valued primitives have zero derivatives.

The rules live in their own module because they need reductions and structural ops, which
themselves import `elementwise`; `elementwise` imports this module once it is complete.
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.interpreters import ad
from justjax._src.lax import reductions, structural
from justjax._src.lax.elementwise import abs as lax_abs
from justjax._src.lax.elementwise import (
    AccuracyMode, abs_p, acos_p, acosh_p, add, add_p, and_p, asin_p, asinh_p, atan2_p,
    atan_p, atanh_p, cbrt_p, ceil_p, clz_p, complex, complex_p, conj, conj_p, cos, cos_p,
    cosh, cosh_p, digamma, digamma_p, div, div_p, eq, eq_p, erf_inv_p, erf_p, erfc_p, exp,
    exp2_p, exp_p, expm1_p, floor, floor_p, ge, ge_p, gt_p, imag, imag_p, integer_pow,
    integer_pow_p, is_finite_p, le_p, lgamma_p, log, log1p_p, log_p, logistic, logistic_p,
    lt_p, max_p, min_p, mul, mul_p, ne_p, neg, neg_p, not_p, or_p, polygamma, polygamma_p,
    population_count_p, pow, pow_p, real, real_p, reduce_precision_p, rem_p, round_p, rsqrt,
    rsqrt_p, shift_left_p, shift_right_arithmetic_p, shift_right_logical_p, sign, sign_p, sin,
    sin_p, sinh, sinh_p, sqrt_p, square, square_p, sub, sub_p, tan_p, tanh_p, xor_p)

__all__: list[str] = []  # rules only: registering them is this module's whole effect

# -- constants shaped like their example, as JAX's lax helpers make them -----------------------


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
    """`value` broadcast to `x`'s shape (or `shape`), with `x`'s dtype and weak type: a
    `broadcast_in_dim` of a scalar literal, as `lax.full_like`."""
    aval = core.get_aval(x)
    fill = structural.convert_element_type(value, aval.dtype, aval.weak_type)
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
    return structural.select(eq(x, _const(x, 0)), _ones(x), x)


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(_dtype(x))


# -- implicit broadcasting of rank-0 and size-1 operands ---------------------------------------

def _unbroadcast(aval: ShapedArray, x: Any) -> Any:
    """Sums the cotangent `x` of a broadcasting elementwise op down to its operand's `aval`:
    over every dimension for a rank-0 operand, else over the dimensions where the operand
    has size 1, reshaped back to the operand's shape."""
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
    return tuple(np.broadcast_shapes(*[core.get_aval(v).shape for v in values]))


# -- zero derivatives ---------------------------------------------------------------------------

for _prim in (sign_p, floor_p, ceil_p, round_p, is_finite_p, not_p, and_p, or_p, xor_p,
              shift_left_p, shift_right_arithmetic_p, shift_right_logical_p, eq_p, ne_p, ge_p,
              gt_p, le_p, lt_p):
    ad.defjvp_zero(_prim)
# JAX registers no rule for these two; their integer operands only ever have zero tangents,
# so a zero rule changes nothing but lets explicit float0 tangents through.
ad.defjvp_zero(population_count_p)
ad.defjvp_zero(clz_p)

# nextafter has no derivative rule in JAX either; differentiating it raises as in JAX.


# -- linear primitives ----------------------------------------------------------------------------

ad.deflinear2(neg_p, lambda t, operand: [neg(t)])
ad.deflinear(reduce_precision_p, lambda t, **params: [reduce_precision_p.bind(t, **params)])
ad.deflinear2(real_p, lambda t, _: [complex(t, np.zeros((), _dtype(t)))])
ad.deflinear2(imag_p, lambda t, _: [complex(np.zeros((), _dtype(t)), neg(t))])


def _complex_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    """complex(x, y) = x + iy: the real part goes to x, minus the imaginary part to y."""
    x_ct = _unbroadcast(x.aval, real(t)) if ad.is_undefined_primal(x) else None
    y_ct = _unbroadcast(y.aval, imag(neg(t))) if ad.is_undefined_primal(y) else None
    return [x_ct, y_ct]


ad.deflinear2(complex_p, _complex_transpose)


def _conj_transpose(t: Any, x: Any, *, input_dtype: np.dtype) -> list[Any]:
    if dtypes.is_complex(input_dtype):
        return [conj(t)]
    # A real input became complex: only the real part of the cotangent flows back.
    return [real(t)]


ad.deflinear2(conj_p, _conj_transpose)


# -- add, sub, mul, div ------------------------------------------------------------------------

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


def _operand_aval(x: Any) -> ShapedArray:
    return x.aval if ad.is_undefined_primal(x) else core.get_aval(x)


def _add_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    x_aval, y_aval = _operand_aval(x), _operand_aval(y)
    if type(t) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x_aval)), ad.Zero(ad.tangent_aval(y_aval))]
    return [_unbroadcast(x_aval, t), _unbroadcast(y_aval, t)]


ad.primitive_jvps[add_p] = _add_jvp
ad.primitive_transposes[add_p] = _add_transpose


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


ad.primitive_jvps[sub_p] = _sub_jvp
ad.primitive_transposes[sub_p] = _sub_transpose


def _mul_transpose_lhs(ct: Any, x: Any, y: Any, *, out_dtype: Any) -> Any:
    product = mul_p.bind(ct, y, out_dtype=None if out_dtype is None else x.aval.dtype)
    return _unbroadcast(x.aval, product)


def _mul_transpose_rhs(ct: Any, x: Any, y: Any, *, out_dtype: Any) -> Any:
    product = mul_p.bind(x, ct, out_dtype=None if out_dtype is None else y.aval.dtype)
    return _unbroadcast(y.aval, product)


ad.defbilinear(mul_p, _mul_transpose_lhs, _mul_transpose_rhs)


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    """div is linear in its numerator only."""
    if ad.is_undefined_primal(y):
        raise RuntimeError("nonlinear div can't be transposed")
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval), None]
    return [_unbroadcast(x.aval, div(ct, y)), None]


ad.defjvp(div_p,
          lambda g, x, y: div(g, y),
          lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))
ad.primitive_transposes[div_p] = _div_transpose


def _rem_jvp_rhs(g: Any, x: Any, y: Any) -> Any:
    # d/dy fmod(x, y) = -trunc(x / y), written as sign * floor(abs) as JAX does.
    return mul(neg(g), mul(sign(div(x, y)), floor(lax_abs(div(x, y)))))


ad.defjvp(rem_p,
          lambda g, x, y: _maybe_broadcast(_broadcast_shapes(x, y), g),
          _rem_jvp_rhs)


# -- max and min ---------------------------------------------------------------------------------

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
    return div(structural.select(_eq_meet(x, z), _ones(z), _zeros(z)),
               structural.select(_eq_meet(y, z), _twos(z), _ones(z)))


for _prim in (max_p, min_p):
    ad.defjvp2(_prim,
               lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
               lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))


# -- exponentials and logarithms ----------------------------------------------------------------

ad.defjvp2(exp_p, lambda g, ans, x, **params: mul(g, ans))
ad.defjvp2(exp2_p, lambda g, ans, x, **params: mul(log(_const(x, 2)), mul(g, ans)))
ad.defjvp(log_p, lambda g, x, **params: div(g, x))
ad.defjvp(log1p_p, lambda g, x, **params: div(g, add(x, _one(x))))


def _expm1_jvp(g: Any, ans: Any, x: Any, *, accuracy: Any) -> Any:
    if accuracy is AccuracyMode.HIGHEST:
        return mul(g, exp(x, accuracy=accuracy))
    return mul(g, add(ans, _one(ans)))


ad.defjvp2(expm1_p, _expm1_jvp)


def _tanh_jvp(g: Any, ans: Any, x: Any, *, accuracy: Any) -> Any:
    if accuracy is AccuracyMode.HIGHEST:
        # 1 - tanh(x)^2 = 4 logistic(2x) logistic(-2x), without cancellation.
        product = mul(logistic(mul(_const(x, 2), x), accuracy=accuracy),
                      logistic(mul(_const(x, -2), x), accuracy=accuracy))
        return mul(g, mul(_const(x, 4), product))
    return mul(add(g, mul(g, ans)), sub(_one(x), ans))


ad.defjvp2(tanh_p, _tanh_jvp)


def _logistic_jvp(g: Any, ans: Any, x: Any, *, accuracy: Any) -> Any:
    if accuracy is AccuracyMode.HIGHEST:
        return mul(g, mul(ans, logistic(neg(x))))
    return mul(g, mul(ans, sub(_one(ans), ans)))


ad.defjvp2(logistic_p, _logistic_jvp)


# -- trigonometric and hyperbolic functions -------------------------------------------------------

ad.defjvp(sin_p, lambda g, x, *, accuracy: mul(g, cos(x, accuracy=accuracy)))
ad.defjvp(cos_p, lambda g, x, *, accuracy: neg(mul(g, sin(x, accuracy=accuracy))))
ad.defjvp2(tan_p, lambda g, ans, x, **params: mul(g, add(_const(x, 1), square(ans))))
ad.defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
ad.defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
ad.defjvp(atan_p, lambda g, x: div(g, add(_const(x, 1), square(x))))
ad.defjvp(atan2_p,
          lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
          lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))
ad.defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
ad.defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
ad.defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(square(x), _one(x)))))
# x^2 - 1 rather than (x + 1)(x - 1): the domain is x >= 1, away from where that matters.
ad.defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(square(x), _one(x)))))
ad.defjvp(atanh_p,
          lambda g, x: mul(integer_pow(add(_one(x), x), -1), div(g, sub(_one(x), x))))


# -- roots and powers --------------------------------------------------------------------------

ad.defjvp2(sqrt_p, lambda g, ans, x, **params: mul(g, div(_const(x, 0.5), ans)))
ad.defjvp2(rsqrt_p, lambda g, ans, x, **params: mul(g, mul(_const(x, -0.5), div(ans, x))))
ad.defjvp2(cbrt_p,
           lambda g, ans, x, **params: mul(g, mul(_const(x, 1 / 3), integer_pow(ans, -2))))
ad.defjvp2(square_p, lambda g, ans, x: mul(g, mul(_const(x, 2), x)))


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
        jac = structural.select(eq(y, _const(y, 0)), _zeros(y),
                                mul(_replace_zero(y), pow(x, sub(y, _ones(y)))))
    else:
        jac = mul(y, pow(x, sub(y, _ones(y))))
    return mul(g, jac)


def _pow_jvp_rhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    y_dtype = _dtype(y)
    return structural.convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), y_dtype)


ad.defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    if y == 0:
        return _zeros(g)
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_const(x, y), x))
    return mul(g, mul(_const(x, y), integer_pow(x, y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)


def _abs_jvp(g: Any, ans: Any, x: Any) -> Any:
    if _is_complex(x):
        # d|z| = Re(conj(z) dz / |z|), with |z| = 0 replaced by 1 (derivative 0 there).
        conj_x = conj(x)
        magnitude = _replace_zero(structural.convert_element_type(ans, _dtype(x)))
        return real(mul(g, div(conj_x, magnitude)))
    # At 0 the derivative is +1 (the `x >= 0` branch), as in JAX.
    return structural.select(ge(x, _zero(x)), g, neg(g))


ad.defjvp2(abs_p, _abs_jvp)


# -- special functions ------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)

ad.defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))
ad.defjvp(digamma_p, lambda g, x: mul(g, polygamma(_const(x, 1), x)))
ad.defjvp(erf_p, lambda g, x: mul(_const(x, _TWO_OVER_SQRT_PI), mul(g, exp(neg(square(x))))))
ad.defjvp(erfc_p,
          lambda g, x: mul(_const(x, -_TWO_OVER_SQRT_PI), mul(g, exp(neg(square(x))))))
ad.defjvp2(erf_inv_p,
           lambda g, ans, x: mul(_const(x, np.sqrt(np.pi) / 2.0), mul(g, exp(square(ans)))))


def _polygamma_jvp_m(g: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma gradient with respect to m is not supported")


ad.defjvp(polygamma_p,
          _polygamma_jvp_m,
          lambda g, m, x: mul(g, polygamma(add(m, _const(m, 1)), x)))
