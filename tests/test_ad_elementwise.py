"""Differentiation of the elementwise primitives (issue #3).

The printed jaxprs of gradients (first and second order), the values of first and second
derivatives of every elementwise primitive, and the gradient conventions where JAX makes a
choice (ties of max/min, abs and sqrt at zero, pow at zero, rem, zero derivatives of rounding
and comparisons) are compared with golden text and values recorded from real JAX 0.10.2; the
`needs_jax` tests at the end recompute every golden with real JAX. Each case takes the `jax`,
`jnp` and `lax` modules, so the same code runs on both.
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.core.core import Primitive, get_aval
from justjax._src.interpreters import ad
from justjax._src.lax import elementwise
from justjax.test_util import check_grads
from tests.harness import x64_mode

X3 = np.array([0.5, -1.25, 2.0], np.float32)
ROW = np.array([[0.5, -1.0, 2.0]], np.float32)
GRID = np.array([[1.0, 2.0, -0.5], [0.25, -3.0, 1.5]], np.float32)


def grad_cases(jax, jnp, lax):
    x = X3
    return {
        "sin_cos_tanh_chain": (lambda x: jnp.tanh(jnp.cos(jnp.sin(x))).sum(), (x,)),
        "square_via_power": (lambda x: (x ** 2).sum(), (x,)),
        "mul_self": (lambda x: (x * x).sum(), (x,)),
        "div": (lambda x: (x / (x + 2.0)).sum(), (x,)),
        "div_denominator": (lambda x: (2.0 / x).sum(), (x,)),
        "pow": (lambda x: lax.pow(x, x).sum(), (x,)),
        "pow_int_exponent": (lambda x: lax.pow(x, np.int32(3)).sum(), (x,)),
        "atan2": (lambda x: jnp.arctan2(x, 2.0 * x).sum(), (x,)),
        "logistic": (lambda x: lax.logistic(x).sum(), (x,)),
        "abs": (lambda x: jnp.abs(x).sum(), (x,)),
        "maximum": (lambda x: jnp.maximum(x, 1.0).sum(), (x,)),
        "exp2_expm1_log1p": (lambda x: lax.log1p(lax.expm1(lax.exp2(x))).sum(), (x,)),
        "sqrt_rsqrt_cbrt": (lambda x: lax.cbrt(lax.rsqrt(lax.sqrt(x))).sum(), (x,)),
        "integer_pows": (lambda x: (lax.integer_pow(x, 5) + lax.integer_pow(x, -3)
                                    + lax.integer_pow(x, 1)).sum(), (x,)),
        "erf_family": (lambda x: lax.erf_inv(lax.erfc(lax.erf(x))).sum(), (x,)),
        "rem": (lambda x: (lax.rem(x, 3.0 * x) + lax.rem(3.0, x)).sum(), (x,)),
        "sub_neg": (lambda x: (lax.sub(x, 2.0 * x) - 1.0 - (-x)).sum(), (x,)),
        "tan_square": (lambda x: lax.square(lax.tan(x)).sum(), (x,)),
        "lgamma_digamma": (lambda x: lax.digamma(lax.lgamma(x + 3.0)).sum(), (x,)),
        "complex_abs": (lambda x: lax.abs(lax.complex(x, 2.0 * x)).sum(), (x,)),
        "real_imag_conj": (lambda x: (lax.real(lax.conj(lax.complex(x, x * x)))
                                      + lax.imag(lax.complex(x, 3.0 * x))).sum(), (x,)),
        "conj_of_real": (lambda x: lax.real(lax.conj(x)).sum(), (x,)),
        "broadcast_size_one": (lambda x, y: lax.mul(lax.add(x, y), lax.sub(y, x)).sum(),
                               (ROW, GRID)),
        "broadcast_scalar": (lambda s, y: (lax.sub(s, y) * lax.div(y, s)).sum(),
                             (np.float32(1.5), GRID)),
        "reduce_precision_sign_floor": (
            lambda x: (lax.reduce_precision(x, 5, 10) * lax.sign(x) + lax.floor(x)
                       + lax.round(x) + lax.ceil(x)).sum(), (x,)),
    }


def second_order_cases(jax, jnp, lax):
    """`make_jaxpr(grad(grad(fun)))(x)` at a scalar."""
    return {
        "tanh": (lambda x: jnp.tanh(x), 1.0),
        "logistic": (lambda x: lax.logistic(x), 1.0),
        "sqrt": (lambda x: jnp.sqrt(x), 1.0),
        "exp_log": (lambda x: jnp.log(jnp.exp(x) + 1.0), 1.0),
        "lgamma": (lambda x: lax.lgamma(x), 1.5),
        "rem": (lambda x: lax.rem(x, 0.7), 1.5),
        "expm1": (lambda x: lax.expm1(x), 1.5),
        "cbrt": (lambda x: lax.cbrt(x), 1.5),
        "erf_inv": (lambda x: lax.erf_inv(x), 0.5),
        "tan": (lambda x: lax.tan(x), 0.5),
    }


def derivative_cases(jax, jnp, lax, polygamma):
    """Scalar functions of one or two float64 scalars: first and second derivatives."""
    def cplx(x):
        return lax.complex(x, 0.5 * x + 0.25)

    unary = {
        "neg": lax.neg, "exp": lax.exp, "exp2": lax.exp2, "log": lax.log, "log1p": lax.log1p,
        "expm1": lax.expm1, "tanh": lax.tanh, "logistic": lax.logistic, "sin": lax.sin,
        "cos": lax.cos, "tan": lax.tan, "asin": lax.asin, "acos": lax.acos, "atan": lax.atan,
        "sinh": lax.sinh, "cosh": lax.cosh, "asinh": lax.asinh,
        "acosh": lambda x: lax.acosh(x + 1.0), "atanh": lax.atanh, "sqrt": lax.sqrt,
        "rsqrt": lax.rsqrt, "cbrt": lax.cbrt, "erf": lax.erf, "erfc": lax.erfc,
        "erf_inv": lax.erf_inv, "lgamma": lax.lgamma, "digamma": lax.digamma,
        "abs": lax.abs, "abs_negative": lambda x: lax.abs(-x), "square": lax.square,
        "integer_pow_3": lambda x: lax.integer_pow(x, 3),
        "integer_pow_-2": lambda x: lax.integer_pow(x, -2),
        "integer_pow_2": lambda x: lax.integer_pow(x, 2),
        "integer_pow_1": lambda x: lax.integer_pow(x, 1),
        "integer_pow_0": lambda x: lax.integer_pow(x, 0),
        "pow_int": lambda x: lax.pow(x, np.int32(4)),
        "polygamma_1": lambda x: polygamma(np.float64(1.0), x),
        "polygamma_2": lambda x: polygamma(np.float64(2.0), x),
        "tanh_highest": lambda x: lax.tanh(x, accuracy=lax.AccuracyMode.HIGHEST),
        "logistic_highest": lambda x: lax.logistic(x, accuracy=lax.AccuracyMode.HIGHEST),
        "expm1_highest": lambda x: lax.expm1(x, accuracy=lax.AccuracyMode.HIGHEST),
        "zero_derivatives": lambda x: (lax.sign(x) + lax.floor(x) + lax.ceil(x) + lax.round(x)
                                       + lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)) * x,
        "exp_complex": lambda x: lax.real(lax.exp(cplx(x))) + lax.imag(lax.exp(cplx(x))),
        "sin_cos_complex": lambda x: lax.real(lax.sin(cplx(x)) * lax.cos(cplx(x))),
        "tanh_complex": lambda x: lax.imag(lax.tanh(cplx(x))),
        "log_sqrt_complex": lambda x: lax.real(lax.log(cplx(x)) + lax.sqrt(cplx(x))),
        "abs_complex": lambda x: lax.abs(cplx(x)),
        "conj_complex": lambda x: lax.imag(lax.conj(cplx(x)) * cplx(x * x)),
        "div_complex": lambda x: lax.real(lax.div(cplx(x), cplx(x * x + 1.0))),
        "conj_of_real": lambda x: lax.real(lax.conj(x) * lax.conj(x)),
    }
    binary = {
        "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
        "max": lax.max, "min": lax.min, "atan2": lax.atan2, "pow": lax.pow,
        "complex": lambda x, y: lax.abs(lax.complex(x, y)) + lax.imag(lax.complex(x, y) ** 2),
    }
    cases = {}
    for name, f in unary.items():
        cases[name] = (f, (0.375,))
    for name, f in binary.items():
        cases[name] = (f, (0.75, 0.625))
    return cases


def convention_cases(jax, jnp, lax):
    """Gradients at kinks and ties, where JAX chooses."""
    grad = jax.grad
    both = (0, 1)
    t = np.array([1.0, 2.0, 3.0], np.float32)
    return {
        "max_tie": lambda: grad(lambda x, y: lax.max(x, y).sum(), both)(t, t),
        "max_self": lambda: grad(lambda x: lax.max(x, x).sum())(t),
        "min_partial_ties": lambda: grad(lambda x, y: lax.min(x, y).sum(), both)(
            t, np.array([1.0, 0.0, 3.0], np.float32)),
        "maximum_scalar_tie": lambda: grad(lambda x: jnp.maximum(x, 2.0).sum())(t),
        "abs_at_zero": lambda: grad(lambda x: lax.abs(x).sum())(
            np.array([0.0, -0.0, 1.0, -1.0], np.float32)),
        "abs_complex_at_zero": lambda: grad(lambda x: lax.abs(lax.complex(x, x)).sum())(
            np.array([0.0, 1.0], np.float32)),
        "sqrt_at_zero": lambda: grad(lambda x: lax.sqrt(x).sum())(
            np.array([0.0, 4.0], np.float32)),
        "pow_at_zero": lambda: grad(lambda x, y: lax.pow(x, y).sum(), both)(
            np.array([0.0, 0.0, 2.0], np.float32), np.array([0.0, 2.0, 0.0], np.float32)),
        "pow_int_at_zero": lambda: grad(
            lambda x: lax.pow(x, np.array([0, 1, 3], np.int32)).sum())(
            np.array([0.0, 0.0, 0.0], np.float32)),
        "integer_pow_0": lambda: grad(lambda x: lax.integer_pow(x, 0).sum())(t),
        "rem_both": lambda: grad(lambda x, y: lax.rem(x, y).sum(), both)(
            np.array([5.5, -5.5, 1.0], np.float32), np.array([2.0, 2.0, -3.0], np.float32)),
        "comparison_select": lambda: grad(
            lambda x: jnp.where(x > 1.5, x * x, -x).sum())(t),
        "round_floor_sign": lambda: grad(
            lambda x: (lax.round(x) + lax.floor(x) + lax.sign(x) + lax.ceil(x)).sum())(t),
    }


# Recorded from real JAX 0.10.2: make_jaxpr(grad(fun))(*args) of grad_cases.
GOLDEN_GRAD_JAXPRS = {
    "sin_cos_tanh_chain": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = cos a
    d:f32[3] = cos b
    e:f32[3] = sin b
    f:f32[3] = tanh d
    g:f32[3] = sub 1.0:f32[] f
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    h:f32[3] = broadcast_in_dim 1.0:f32[]
    i:f32[3] = mul h g
    j:f32[3] = mul i f
    k:f32[3] = add_any i j
    l:f32[3] = neg k
    m:f32[3] = mul l e
    n:f32[3] = mul m c
  in (n,) }""",
    "square_via_power": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = integer_pow[y=2] a
    c:f32[3] = mul 2.0:f32[] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = mul d c
  in (e,) }""",
    "mul_self": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul a a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[3] = mul a c
    e:f32[3] = mul c a
    f:f32[3] = add_any d e
  in (f,) }""",
    "div": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = add a 2.0:f32[]
    c:f32[3] = div a b
    d:f32[3] = integer_pow[y=-2] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = mul e d
    g:f32[3] = mul f a
    h:f32[3] = neg g
    i:f32[3] = div e b
    j:f32[3] = add_any h i
  in (j,) }""",
    "div_denominator": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = div 2.0:f32[] a
    c:f32[3] = integer_pow[y=-2] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = mul d c
    f:f32[3] = mul e 2.0:f32[]
    g:f32[3] = neg f
  in (g,) }""",
    "pow": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = pow a a
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[3] = sub a c
    e:f32[3] = pow a d
    f:f32[3] = mul a e
    g:bool[3] = eq a 0.0:f32[]
    h:f32[3] = broadcast_in_dim 1.0:f32[]
    i:f32[3] = select_n g a h
    j:f32[3] = log i
    k:f32[3] = mul j b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    l:f32[3] = broadcast_in_dim 1.0:f32[]
    m:f32[3] = mul l k
    n:f32[3] = mul l f
    o:f32[3] = add_any m n
  in (o,) }""",
    "pow_int_exponent": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = pow a 3:i32[]
    c:f32[3] = broadcast_in_dim 3.0:f32[]
    d:bool[3] = eq c 0.0:f32[]
    e:f32[3] = broadcast_in_dim 0.0:f32[]
    f:bool[3] = eq c 0.0:f32[]
    g:f32[3] = broadcast_in_dim 1.0:f32[]
    h:f32[3] = select_n f c g
    i:f32[3] = broadcast_in_dim 1.0:f32[]
    j:f32[3] = sub c i
    k:f32[3] = pow a j
    l:f32[3] = mul h k
    m:f32[3] = select_n d l e
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    n:f32[3] = broadcast_in_dim 1.0:f32[]
    o:f32[3] = mul n m
  in (o,) }""",
    "atan2": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul 2.0:f32[] a
    c:f32[3] = atan2 a b
    d:f32[3] = square a
    e:f32[3] = square b
    f:f32[3] = add d e
    g:f32[3] = div b f
    h:f32[3] = neg a
    i:f32[3] = square a
    j:f32[3] = square b
    k:f32[3] = add i j
    l:f32[3] = div h k
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    m:f32[3] = broadcast_in_dim 1.0:f32[]
    n:f32[3] = mul m l
    o:f32[3] = mul m g
    p:f32[3] = mul 2.0:f32[] n
    q:f32[3] = add_any o p
  in (q,) }""",
    "logistic": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = logistic a
    c:f32[3] = sub 1.0:f32[] b
    d:f32[3] = mul b c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = mul e d
  in (f,) }""",
    "abs": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = abs a
    c:bool[3] = ge a 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = broadcast_in_dim 0.0:f32[]
    f:f32[3] = select_n c d e
    g:f32[3] = select_n c e d
    h:f32[3] = neg f
    i:f32[3] = add_any g h
  in (i,) }""",
    "maximum": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = max a 1.0:f32[]
    c:bool[3] = eq a b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = broadcast_in_dim 0.0:f32[]
    f:f32[3] = select_n c e d
    g:bool[3] = eq 1.0:f32[] b
    h:f32[3] = broadcast_in_dim 2.0:f32[]
    i:f32[3] = broadcast_in_dim 1.0:f32[]
    j:f32[3] = select_n g i h
    k:f32[3] = div f j
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    l:f32[3] = broadcast_in_dim 1.0:f32[]
    m:f32[3] = mul l k
  in (m,) }""",
    "exp2_expm1_log1p": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = exp2 a
    c:f32[] = log 2.0:f32[]
    d:f32[3] = expm1 b
    e:f32[3] = add d 1.0:f32[]
    f:f32[3] = log1p d
    g:f32[3] = add d 1.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    h:f32[3] = broadcast_in_dim 1.0:f32[]
    i:f32[3] = div h g
    j:f32[3] = mul i e
    k:f32[3] = mul c j
    l:f32[3] = mul k b
  in (l,) }""",
    "sqrt_rsqrt_cbrt": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = sqrt a
    c:f32[3] = div 0.5:f32[] b
    d:f32[3] = rsqrt b
    e:f32[3] = div d b
    f:f32[3] = mul -0.5:f32[] e
    g:f32[3] = cbrt d
    h:f32[3] = integer_pow[y=-2] g
    i:f32[3] = mul 0.3333333432674408:f32[] h
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
    j:f32[3] = broadcast_in_dim 1.0:f32[]
    k:f32[3] = mul j i
    l:f32[3] = mul k f
    m:f32[3] = mul l c
  in (m,) }""",
    "integer_pows": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = integer_pow[y=5] a
    c:f32[3] = integer_pow[y=4] a
    d:f32[3] = mul 5.0:f32[] c
    e:f32[3] = integer_pow[y=-3] a
    f:f32[3] = integer_pow[y=-4] a
    g:f32[3] = mul -3.0:f32[] f
    h:f32[3] = add b e
    i:f32[3] = integer_pow[y=1] a
    j:f32[3] = add h i
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] j
    k:f32[3] = broadcast_in_dim 1.0:f32[]
    l:f32[3] = mul k g
    m:f32[3] = add_any k l
    n:f32[3] = mul k d
    o:f32[3] = add_any m n
  in (o,) }""",
    "erf_family": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = erf a
    c:f32[3] = square a
    d:f32[3] = neg c
    e:f32[3] = exp d
    f:f32[3] = erfc b
    g:f32[3] = square b
    h:f32[3] = neg g
    i:f32[3] = exp h
    j:f32[3] = erf_inv f
    k:f32[3] = square j
    l:f32[3] = exp k
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] j
    m:f32[3] = broadcast_in_dim 1.0:f32[]
    n:f32[3] = mul 0.8862269520759583:f32[] m
    o:f32[3] = mul n l
    p:f32[3] = mul -1.128379225730896:f32[] o
    q:f32[3] = mul p i
    r:f32[3] = mul 1.128379225730896:f32[] q
    s:f32[3] = mul r e
  in (s,) }""",
    "rem": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul 3.0:f32[] a
    c:f32[3] = rem a b
    d:f32[3] = div a b
    e:f32[3] = sign d
    f:f32[3] = div a b
    g:f32[3] = abs f
    h:f32[3] = floor g
    i:f32[3] = mul e h
    j:f32[3] = rem 3.0:f32[] a
    k:f32[3] = div 3.0:f32[] a
    l:f32[3] = sign k
    m:f32[3] = div 3.0:f32[] a
    n:f32[3] = abs m
    o:f32[3] = floor n
    p:f32[3] = mul l o
    q:f32[3] = add c j
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] q
    r:f32[3] = broadcast_in_dim 1.0:f32[]
    s:f32[3] = mul r p
    t:f32[3] = neg s
    u:f32[3] = add_any t r
    v:f32[3] = mul r i
    w:f32[3] = neg v
    x:f32[3] = mul 3.0:f32[] w
    y:f32[3] = add_any u x
  in (y,) }""",
    "sub_neg": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul 2.0:f32[] a
    c:f32[3] = sub a b
    d:f32[3] = sub c 1.0:f32[]
    e:f32[3] = neg a
    f:f32[3] = sub d e
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    g:f32[3] = broadcast_in_dim 1.0:f32[]
    h:f32[3] = neg g
    i:f32[3] = neg h
    j:f32[3] = neg g
    k:f32[3] = add_any i g
    l:f32[3] = mul 2.0:f32[] j
    m:f32[3] = add_any k l
  in (m,) }""",
    "tan_square": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = tan a
    c:f32[3] = square b
    d:f32[3] = add 1.0:f32[] c
    e:f32[3] = square b
    f:f32[3] = mul 2.0:f32[] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    g:f32[3] = broadcast_in_dim 1.0:f32[]
    h:f32[3] = mul g f
    i:f32[3] = mul h d
  in (i,) }""",
    "lgamma_digamma": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = add a 3.0:f32[]
    c:f32[3] = lgamma b
    d:f32[3] = digamma b
    e:f32[3] = digamma c
    f:f32[3] = polygamma 1.0:f32[] c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    g:f32[3] = broadcast_in_dim 1.0:f32[]
    h:f32[3] = mul g f
    i:f32[3] = mul h d
  in (i,) }""",
    "complex_abs": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul 2.0:f32[] a
    c:c64[3] = complex a b
    d:f32[3] = abs c
    e:c64[3] = conj[input_dtype=complex64] c
    f:c64[3] = convert_element_type[new_dtype=complex64 weak_type=False] d
    g:bool[3] = eq f 0j:c64[]
    h:c64[3] = broadcast_in_dim (1+0j):c64[]
    i:c64[3] = select_n g f h
    j:c64[3] = div e i
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    k:f32[3] = broadcast_in_dim 1.0:f32[]
    l:c64[3] = complex k 0.0:f32[]
    m:c64[3] = mul l j
    n:f32[3] = real m
    o:c64[3] = neg m
    p:f32[3] = imag o
    q:f32[3] = mul 2.0:f32[] p
    r:f32[3] = add_any n q
  in (r,) }""",
    "real_imag_conj": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul a a
    c:c64[3] = complex a b
    d:c64[3] = conj[input_dtype=complex64] c
    e:f32[3] = real d
    f:f32[3] = mul 3.0:f32[] a
    g:c64[3] = complex a f
    h:f32[3] = imag g
    i:f32[3] = add e h
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] i
    j:f32[3] = broadcast_in_dim 1.0:f32[]
    k:f32[3] = neg j
    l:c64[3] = complex 0.0:f32[] k
    m:f32[3] = real l
    n:c64[3] = neg l
    o:f32[3] = imag n
    p:f32[3] = mul 3.0:f32[] o
    q:f32[3] = add_any m p
    r:c64[3] = complex j 0.0:f32[]
    s:c64[3] = conj[input_dtype=complex64] r
    t:f32[3] = real s
    u:c64[3] = neg s
    v:f32[3] = imag u
    w:f32[3] = add_any q t
    x:f32[3] = mul a v
    y:f32[3] = add_any w x
    z:f32[3] = mul v a
    ba:f32[3] = add_any y z
  in (ba,) }""",
    "conj_of_real": """\
{ lambda ; a:f32[3]. let
    b:c64[3] = conj[input_dtype=float32] a
    c:f32[3] = real b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:c64[3] = complex d 0.0:f32[]
    f:f32[3] = real e
  in (f,) }""",
    "broadcast_size_one": """\
{ lambda ; a:f32[1,3] b:f32[2,3]. let
    c:f32[2,3] = add a b
    d:f32[2,3] = sub b a
    e:f32[2,3] = mul c d
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] e
    f:f32[2,3] = broadcast_in_dim 1.0:f32[]
    g:f32[2,3] = mul c f
    h:f32[2,3] = mul f d
    i:f32[2,3] = neg g
    j:f32[3] = reduce_sum[axes=(0,) out_sharding=None] i
    k:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] j
    l:f32[3] = reduce_sum[axes=(0,) out_sharding=None] h
    m:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] l
    n:f32[1,3] = add_any k m
    o:f32[2,3] = add_any g h
  in (n, o) }""",
    "broadcast_scalar": """\
{ lambda ; a:f32[] b:f32[2,3]. let
    c:f32[2,3] = sub a b
    d:f32[2,3] = div b a
    e:f32[] = integer_pow[y=-2] a
    f:f32[2,3] = mul c d
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] f
    g:f32[2,3] = broadcast_in_dim 1.0:f32[]
    h:f32[2,3] = mul c g
    i:f32[2,3] = mul g d
    j:f32[2,3] = mul h e
    k:f32[2,3] = mul j b
    l:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] k
    m:f32[] = neg l
    n:f32[2,3] = div h a
    o:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] i
    p:f32[2,3] = neg i
    q:f32[] = add_any m o
    r:f32[2,3] = add_any n p
  in (q, r) }""",
    "reduce_precision_sign_floor": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = reduce_precision[exponent_bits=5 mantissa_bits=10] a
    c:f32[3] = sign a
    d:f32[3] = mul b c
    e:f32[3] = floor a
    f:f32[3] = add d e
    g:f32[3] = round[rounding_method=0] a
    h:f32[3] = add f g
    i:f32[3] = ceil a
    j:f32[3] = add h i
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] j
    k:f32[3] = broadcast_in_dim 1.0:f32[]
    l:f32[3] = mul k c
    m:f32[3] = reduce_precision[exponent_bits=5 mantissa_bits=10] l
  in (m,) }""",
}

# Recorded from real JAX 0.10.2: make_jaxpr(grad(grad(fun)))(x) of second_order_cases.
GOLDEN_SECOND_ORDER_JAXPRS = {
    "lgamma": """\
{ lambda ; a:f32[]. let
    _:f32[] = lgamma a
    _:f32[] = digamma a
    b:f32[] = digamma a
    c:f32[] = polygamma 1.0:f32[] a
    _:f32[] = mul 1.0:f32[] b
    d:f32[] = mul 1.0:f32[] 1.0:f32[]
    e:f32[] = mul d c
  in (e,) }""",
    "tanh": """\
{ lambda ; a:f32[]. let
    b:f32[] = tanh a
    c:f32[] = sub 1.0:f32[] b
    d:f32[] = sub 1.0:f32[] b
    e:f32[] = mul 1.0:f32[] d
    f:f32[] = mul e b
    _:f32[] = add_any e f
    g:f32[] = mul e 1.0:f32[]
    h:f32[] = mul 1.0:f32[] b
    i:f32[] = add_any 1.0:f32[] h
    j:f32[] = mul 1.0:f32[] i
    k:f32[] = neg j
    l:f32[] = add_any g k
    m:f32[] = mul l c
    n:f32[] = mul m b
    o:f32[] = add_any m n
  in (o,) }""",
    "logistic": """\
{ lambda ; a:f32[]. let
    b:f32[] = logistic a
    c:f32[] = sub 1.0:f32[] b
    d:f32[] = mul b c
    e:f32[] = sub 1.0:f32[] b
    f:f32[] = mul b e
    _:f32[] = mul 1.0:f32[] f
    g:f32[] = mul 1.0:f32[] 1.0:f32[]
    h:f32[] = mul b g
    i:f32[] = mul g e
    j:f32[] = neg h
    k:f32[] = add_any i j
    l:f32[] = mul k d
  in (l,) }""",
    "sqrt": """\
{ lambda ; a:f32[]. let
    b:f32[] = sqrt a
    c:f32[] = div 0.5:f32[] b
    d:f32[] = div 0.5:f32[] b
    e:f32[] = integer_pow[y=-2] b
    _:f32[] = mul 1.0:f32[] d
    f:f32[] = mul 1.0:f32[] 1.0:f32[]
    g:f32[] = mul f e
    h:f32[] = mul g 0.5:f32[]
    i:f32[] = neg h
    j:f32[] = mul i c
  in (j,) }""",
    "exp_log": """\
{ lambda ; a:f32[]. let
    b:f32[] = exp a
    c:f32[] = add b 1.0:f32[]
    _:f32[] = log c
    d:f32[] = div 1.0:f32[] c
    e:f32[] = integer_pow[y=-2] c
    _:f32[] = mul d b
    f:f32[] = mul d 1.0:f32[]
    g:f32[] = mul 1.0:f32[] b
    h:f32[] = mul g e
    i:f32[] = mul h 1.0:f32[]
    j:f32[] = neg i
    k:f32[] = add_any f j
    l:f32[] = mul k b
  in (l,) }""",
    "rem": """\
{ lambda ; a:f32[]. let _:f32[] = rem a 0.7:f32[] in (0.0:f32[],) }""",
    "expm1": """\
{ lambda ; a:f32[]. let
    b:f32[] = expm1 a
    c:f32[] = add b 1.0:f32[]
    d:f32[] = add b 1.0:f32[]
    _:f32[] = mul 1.0:f32[] d
    e:f32[] = mul 1.0:f32[] 1.0:f32[]
    f:f32[] = mul e c
  in (f,) }""",
    "cbrt": """\
{ lambda ; a:f32[]. let
    b:f32[] = cbrt a
    c:f32[] = integer_pow[y=-2] b
    d:f32[] = mul 0.3333333333333333:f32[] c
    e:f32[] = integer_pow[y=-2] b
    f:f32[] = integer_pow[y=-3] b
    g:f32[] = mul -2.0:f32[] f
    h:f32[] = mul 0.3333333333333333:f32[] e
    _:f32[] = mul 1.0:f32[] h
    i:f32[] = mul 1.0:f32[] 1.0:f32[]
    j:f32[] = mul 0.3333333333333333:f32[] i
    k:f32[] = mul j g
    l:f32[] = mul k d
  in (l,) }""",
    "erf_inv": """\
{ lambda ; a:f32[]. let
    b:f32[] = erf_inv a
    c:f32[] = square b
    d:f32[] = exp c
    e:f32[] = square b
    f:f32[] = mul 2.0:f32[] b
    g:f32[] = exp e
    h:f32[] = mul 0.8862269254527579:f32[] 1.0:f32[]
    _:f32[] = mul h g
    i:f32[] = mul h 1.0:f32[]
    j:f32[] = mul i g
    k:f32[] = mul j f
    l:f32[] = mul 0.8862269254527579:f32[] k
    m:f32[] = mul l d
  in (m,) }""",
    "tan": """\
{ lambda ; a:f32[]. let
    b:f32[] = tan a
    c:f32[] = square b
    d:f32[] = add 1.0:f32[] c
    e:f32[] = square b
    f:f32[] = mul 2.0:f32[] b
    g:f32[] = add 1.0:f32[] e
    _:f32[] = mul 1.0:f32[] g
    h:f32[] = mul 1.0:f32[] 1.0:f32[]
    i:f32[] = mul h f
    j:f32[] = mul i d
  in (j,) }""",
}

# Recorded from real JAX 0.10.2 in float64: d/dx_i, then d/dx_j (d/dx_i) for each i, j.
EXPECTED_DERIVATIVES = {
    "neg": [-1.0, 0.0],
    "exp": [1.4549914146182013, 1.4549914146182013],
    "exp2": [0.8989006809449624, 0.6230704726004156],
    "log": [2.6666666666666665, -7.111111111111111],
    "log1p": [0.7272727272727273, -0.5289256198347108],
    "expm1": [1.4549914146182013, 1.4549914146182013],
    "tanh": [0.8715799750472562, -0.6246742646251553],
    "logistic": [0.24141290125295242, -0.04474182548831734],
    "sin": [0.9305076219123143, -0.36627252908604757],
    "cos": [-0.36627252908604757, -0.9305076219123143],
    "tan": [1.154941881274938, 0.9092316362387249],
    "asin": [1.0787197799411874, 0.47071408579251817],
    "acos": [-1.0787197799411874, -0.47071408579251817],
    "atan": [0.8767123287671232, -0.5764683805592044],
    "sinh": [1.0711403467045866, 0.3838510679136145],
    "cosh": [0.3838510679136145, 1.0711403467045866],
    "asinh": [0.9363291775690445, -0.3078342501596859],
    "acosh": [1.059625885652035, -1.6359136480241945],
    "atanh": [1.1636363636363636, 1.0155371900826444],
    "sqrt": [0.8164965809277261, -1.088662107903635],
    "rsqrt": [-2.1773242158072694, 8.709296863229078],
    "cbrt": [0.6409998090255151, -1.1395552160453608],
    "erf": [0.9803528095459079, -0.7352646071594309],
    "erfc": [-0.9803528095459079, 0.7352646071594309],
    "erf_inv": [0.9986698378467824, 0.6893965453664529],
    "lgamma": [-2.75399904914514, 8.161777632761506],
    "digamma": [8.161777632761506, -38.9621184970341],
    "abs": [1.0, 0.0],
    "abs_negative": [1.0, 0.0],
    "square": [0.75, 2.0],
    "integer_pow_3": [0.421875, 2.25],
    "integer_pow_-2": [-37.925925925925924, 303.4074074074074],
    "integer_pow_2": [0.75, 2.0],
    "integer_pow_1": [1.0, 0.0],
    "integer_pow_0": [0.0, 0.0],
    "pow_int": [0.2109375, 1.6875],
    "polygamma_1": [-38.9621184970341, 305.3540950613545],
    "polygamma_2": [305.3540950613545, -3241.6264619437165],
    "tanh_highest": [0.8715799750472562, -0.6246742646251553],
    "logistic_highest": [0.2414129012529524, -0.044741825488317344],
    "expm1_highest": [1.4549914146182013, 1.4549914146182013],
    "zero_derivatives": [2.0, 0.0],
    "exp_complex": [2.2851493573472914, 2.152303152897421],
    "sin_cos_complex": [1.3678760926925482, 0.010730282488497167],
    "tanh_complex": [0.15147631623609964, -1.4633519179098],
    "log_sqrt_complex": [2.524272866234341, -3.2979954018077313],
    "abs_complex": [1.0304196746386167, 0.3266717482445647],
    "conj_complex": [0.0625, -0.5],
    "div_complex": [0.541610853210844, -1.2612463281541901],
    "conj_of_real": [0.75, 2.0],
    "add": [1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    "sub": [1.0, -1.0, 0.0, 0.0, 0.0, 0.0],
    "mul": [0.625, 0.75, 0.0, 1.0, 1.0, 0.0],
    "div": [1.6, -1.92, 0.0, -2.56, -2.56, 6.144],
    "rem": [1.0, -1.0, 0.0, 0.0, 0.0, 0.0],
    "max": [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    "min": [0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    "atan2": [
        0.6557377049180327, -0.7868852459016393, -1.0319806503628055, 0.18919645256651452,
        0.18919645256651418, 1.0319806503628057,
    ],
    "pow": [
        0.69619683336133, -0.2403400174269055, -0.34809841668066505, 0.9136315855223733,
        0.9136315855223736, 0.06914151430646931,
    ],
    "complex": [
        2.018221279597376, 2.14018439966448, 0.41979304896031466, 1.4962483412476224,
        1.4962483412476222, 0.604501990502853,
    ],
}

# Recorded from real JAX 0.10.2 (float32): one list per differentiated argument.
EXPECTED_CONVENTIONS = {
    "max_tie": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]],
    "max_self": [[1.0, 1.0, 1.0]],
    "min_partial_ties": [[0.5, 0.0, 0.5], [0.5, 1.0, 0.5]],
    "maximum_scalar_tie": [[0.0, 0.5, 1.0]],
    "abs_at_zero": [[1.0, 1.0, 1.0, -1.0]],
    "abs_complex_at_zero": [[0.0, 1.4142135381698608]],
    "sqrt_at_zero": [[np.inf, 0.25]],
    "pow_at_zero": [[np.nan, 0.0, 0.0], [0.0, 0.0, 0.6931471824645996]],
    "pow_int_at_zero": [[0.0, 1.0, 0.0]],
    "integer_pow_0": [[0.0, 0.0, 0.0]],
    "rem_both": [[1.0, 1.0, 1.0], [-2.0, 2.0, 0.0]],
    "comparison_select": [[-1.0, 4.0, 6.0]],
    "round_floor_sign": [[0.0, 0.0, 0.0]],
}


def _lax_with_extras(lax_module):
    """justjax.lax plus the names this session added to `elementwise` (AccuracyMode), in case
    the public module does not re-export them yet."""
    if hasattr(lax_module, "AccuracyMode"):
        return lax_module

    class Extended:
        def __getattr__(self, name):
            if name == "AccuracyMode":
                return elementwise.AccuracyMode
            return getattr(lax_module, name)
    return Extended()


LAX = _lax_with_extras(lax)


def _grad_all(jax, fun, nargs):
    return jax.grad(fun, argnums=tuple(range(nargs)) if nargs > 1 else 0)


def _derivatives(jax, fun, point):
    """First derivatives, then each first derivative's gradient, as floats."""
    nums = tuple(range(len(point)))
    values = list(jax.grad(fun, argnums=nums)(*point))
    for i in nums:
        values += list(jax.grad(lambda *a, i=i: jax.grad(fun, argnums=i)(*a), argnums=nums)(*point))
    return [float(v) for v in values]


@pytest.mark.parametrize("name", sorted(GOLDEN_GRAD_JAXPRS))
def test_grad_jaxpr_is_jaxs(name):
    fun, args = grad_cases(justjax, jnp, LAX)[name]
    text = str(justjax.make_jaxpr(_grad_all(justjax, fun, len(args)))(*args))
    assert text == GOLDEN_GRAD_JAXPRS[name]


@pytest.mark.parametrize("name", sorted(GOLDEN_SECOND_ORDER_JAXPRS))
def test_second_order_jaxpr_is_jaxs(name):
    fun, x = second_order_cases(justjax, jnp, LAX)[name]
    text = str(justjax.make_jaxpr(justjax.grad(justjax.grad(fun)))(x))
    assert text == GOLDEN_SECOND_ORDER_JAXPRS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_DERIVATIVES))
def test_first_and_second_derivatives_are_jaxs(name):
    with x64_mode(True):
        fun, point = derivative_cases(justjax, jnp, LAX, elementwise.polygamma)[name]
        got = _derivatives(justjax, fun, tuple(np.float64(p) for p in point))
    np.testing.assert_allclose(got, EXPECTED_DERIVATIVES[name], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(EXPECTED_CONVENTIONS))
def test_gradient_conventions_are_jaxs(name):
    result = convention_cases(justjax, jnp, LAX)[name]()
    result = result if isinstance(result, tuple) else (result,)
    assert len(result) == len(EXPECTED_CONVENTIONS[name])
    for got, want in zip(result, EXPECTED_CONVENTIONS[name], strict=True):
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want, np.float32))


# ---------------------------------------------------------------------------------------------
# Against finite differences, where the op records do not reach: broadcasting operands,
# complex intermediates and the accurate-mode formulas.

def _positive(shape, seed):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


BROADCAST_SHAPES = [((1, 3), (2, 3)), ((2, 3), (1, 3)), ((), (2, 3)), ((2, 3), ())]
BINARY = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "max": lax.max,
          "min": lax.min, "atan2": lax.atan2, "pow": lax.pow, "rem": lax.rem,
          "complex": lambda x, y: lax.abs(lax.complex(x, y) * lax.complex(y, x))}


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_broadcasting_operands_against_finite_differences(name, shapes):
    x = _positive(shapes[0], 0)
    y = _positive(shapes[1], 1) + 0.1  # distinct from x: no max/min ties
    with x64_mode(True):
        check_grads(BINARY[name], (x, y), order=2, modes=("fwd", "rev"))


def _through_complex(f):
    return lambda x: lax.real(f(lax.complex(x, 0.5 * x + 0.25))) + \
        lax.imag(f(lax.complex(0.25 - x, x)))


COMPLEX_UNARY = {"exp": lax.exp, "log": lax.log, "sin": lax.sin, "cos": lax.cos,
                 "tanh": lax.tanh, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "square": lax.square,
                 "neg": lax.neg, "conj": lax.conj, "abs": lambda z: lax.complex(lax.abs(z), 0.0),
                 "logistic": lax.logistic, "expm1": lax.expm1, "log1p": lax.log1p,
                 "div": lambda z: lax.div(z, z * z + 2.0),
                 "integer_pow": lambda z: lax.integer_pow(z, 3)}


@pytest.mark.parametrize("name", sorted(COMPLEX_UNARY))
def test_complex_rules_against_finite_differences(name):
    with x64_mode(True):
        check_grads(_through_complex(COMPLEX_UNARY[name]), (_positive((3,), 2),), order=2,
                    modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["tanh", "logistic", "expm1"])
def test_highest_accuracy_formulas_against_finite_differences(name):
    fun = getattr(lax, name)
    with x64_mode(True):
        check_grads(lambda x: fun(x, accuracy=elementwise.AccuracyMode.HIGHEST),
                    (np.array([-1.5, 0.25, 2.0]),), order=2, modes=("fwd", "rev"))


def test_polygamma_derivative_in_x_against_finite_differences():
    with x64_mode(True):
        check_grads(lambda x: elementwise.polygamma(np.full((3,), 2.0), x),
                    (np.array([0.75, 1.5, 3.0]),), order=2, modes=("fwd", "rev"))


# ---------------------------------------------------------------------------------------------
# Rules JAX lacks or refuses, linear primitives and zero tangents.

def test_polygamma_order_is_not_differentiable():
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        justjax.grad(lambda m: elementwise.polygamma(m, 2.0))(1.0)


def test_nextafter_has_no_derivative_as_in_jax():
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'nextafter'"):
        justjax.grad(lambda x: lax.nextafter(x, 2.0))(1.0)


def test_div_is_linear_in_its_numerator_only():
    ct = np.ones(3, np.float32)
    x, y = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
    transpose = ad.primitive_transposes[elementwise.div_p]
    aval = get_aval(x)
    x_ct, y_ct = transpose(ct, ad.UndefinedPrimal(aval), y)
    np.testing.assert_array_equal(np.asarray(x_ct), np.full(3, 0.5, np.float32))
    assert y_ct is None
    with pytest.raises(RuntimeError, match="nonlinear div can't be transposed"):
        transpose(ct, x, ad.UndefinedPrimal(aval))


def test_reduce_precision_is_linear():
    x = np.array([1.0001, 2.0002], np.float32)
    t = np.array([1.00390625 + 2 ** -12, 3.0], np.float32)
    _, tangent = justjax.jvp(lambda v: lax.reduce_precision(v, 8, 7), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), np.asarray(lax.reduce_precision(t, 8, 7)))
    _, pullback = justjax.vjp(lambda v: lax.reduce_precision(v, 8, 7), x)
    np.testing.assert_array_equal(np.asarray(pullback(t)[0]),
                                  np.asarray(lax.reduce_precision(t, 8, 7)))


ZERO_DERIVATIVE = {
    "sign": lax.sign, "floor": lax.floor, "ceil": lax.ceil, "round": lax.round,
    "is_finite": lax.is_finite, "eq": lambda x: lax.eq(x, 1.0), "ne": lambda x: lax.ne(x, 1.0),
    "lt": lambda x: lax.lt(x, 1.0), "le": lambda x: lax.le(x, 1.0),
    "gt": lambda x: lax.gt(x, 1.0), "ge": lambda x: lax.ge(x, 1.0),
}


@pytest.mark.parametrize("name", sorted(ZERO_DERIVATIVE))
def test_zero_derivatives_are_symbolic(name):
    x = np.array([0.5, 1.0, 2.5], np.float32)
    _, linear = ad.linearize_flat(lambda v: [ZERO_DERIVATIVE[name](v)], [x])
    # Nothing is staged: the tangent is a symbolic zero until it is instantiated.
    assert all(eqn.primitive.name in ("broadcast_in_dim",) for eqn in linear.jaxpr.eqns)
    _, (tangent,) = ad.jvp_flat(lambda v: [ZERO_DERIVATIVE[name](v)], [x], [x], instantiate=False)
    assert type(tangent) is ad.Zero


@pytest.mark.parametrize("prim", [elementwise.population_count_p, elementwise.clz_p,
                                  elementwise.not_p, elementwise.and_p, elementwise.or_p,
                                  elementwise.xor_p, elementwise.shift_left_p,
                                  elementwise.shift_right_logical_p,
                                  elementwise.shift_right_arithmetic_p], ids=lambda p: p.name)
def test_integer_primitives_have_float0_tangents(prim):
    n = np.array([3, 5], np.int32)
    args = [n] * (2 if prim.name not in ("population_count", "clz", "not") else 1)
    tangents = [np.zeros(2, justjax.dtypes.float0)] * len(args)
    out, tangent = ad.primitive_jvps[prim](args, tangents)
    assert type(tangent) is ad.Zero and tangent.aval.dtype == justjax.dtypes.float0
    np.testing.assert_array_equal(np.asarray(out), np.asarray(prim.bind(*args)))


def test_every_elementwise_primitive_has_its_rules():
    prims = [v for v in vars(elementwise).values() if isinstance(v, Primitive)]
    linear = {"neg", "reduce_precision", "real", "imag", "complex", "conj", "add", "sub",
              "mul", "div"}
    assert {p.name for p in prims} >= linear
    for prim in prims:
        if prim.name == "nextafter":
            assert prim not in ad.primitive_jvps  # JAX has no rule either
            continue
        assert prim in ad.primitive_jvps, prim.name
        assert (prim in ad.primitive_transposes) == (prim.name in linear), prim.name


# ---------------------------------------------------------------------------------------------
# Directly against real JAX.

def _real_jax():
    return pytest.importorskip("jax")


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_GRAD_JAXPRS))
def test_grad_goldens_are_real_jax(name):
    jax = _real_jax()
    fun, args = grad_cases(jax, jax.numpy, jax.lax)[name]
    assert str(jax.make_jaxpr(_grad_all(jax, fun, len(args)))(*args)) == GOLDEN_GRAD_JAXPRS[name]


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_SECOND_ORDER_JAXPRS))
def test_second_order_goldens_are_real_jax(name):
    jax = _real_jax()
    fun, x = second_order_cases(jax, jax.numpy, jax.lax)[name]
    assert str(jax.make_jaxpr(jax.grad(jax.grad(fun)))(x)) == GOLDEN_SECOND_ORDER_JAXPRS[name]


@pytest.mark.needs_jax
def test_expected_values_are_real_jax():
    jax = _real_jax()
    jax.config.update("jax_enable_x64", True)
    try:
        for name, (fun, point) in derivative_cases(jax, jax.numpy, jax.lax,
                                                   jax.lax.polygamma).items():
            got = _derivatives(jax, fun, tuple(np.float64(p) for p in point))
            np.testing.assert_allclose(got, EXPECTED_DERIVATIVES[name], rtol=1e-14, err_msg=name)
    finally:
        jax.config.update("jax_enable_x64", False)
    for name, case in convention_cases(jax, jax.numpy, jax.lax).items():
        result = case()
        result = result if isinstance(result, tuple) else (result,)
        for got, want in zip(result, EXPECTED_CONVENTIONS[name], strict=True):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want, np.float32))


def test_reciprocal():
    # JAX stages lax.reciprocal as integer_pow[y=-1].
    assert str(justjax.make_jaxpr(lax.reciprocal)(1.0)) == (
        "{ lambda ; a:f32[]. let b:f32[] = integer_pow[y=-1] a in (b,) }")
    np.testing.assert_allclose(np.asarray(lax.reciprocal(X3)), 1 / X3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(justjax.grad(lax.reciprocal)(2.0)), -0.25)
