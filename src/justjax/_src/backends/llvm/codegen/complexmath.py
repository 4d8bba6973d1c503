"""Complex numbers in the elemental emitter: complex64 and complex128 elements are `{re, im}`
structs of float32/float64 in registers and in memory (`emitter.compute_type`).

Semantics are the reference backend's, i.e. NumPy's:
  - add, subtract, negate, multiply (`re = fma(ar, br, -ai bi)`, as NumPy's SIMD loop where
    the host has FMA), divide (Smith's algorithm as NumPy's loop), square, conj;
  - abs (hypot), sign (z / |z|, 0 at 0), expm1 and log1p by NumPy's formulas in the
    operands' precision; logistic as 1 / (1 + exp(-z)) and rsqrt as 1 / sqrt(z);
  - exp, log, sqrt, sin, cos, tan, tanh, sinh, cosh as C99's cexp, clog, ... (the libm
    functions NumPy calls): evaluated in float64 for complex64, rounded part by part,
    with C99's special values where noted;
  - power as NumPy: 1 for a zero exponent, 0 or nan for a zero base, binary powering for
    integer exponents below 100 in magnitude, else exp(b log a);
  - asin, acos, acosh (and asinh, atan through them) by Kahan's formulas from complex
    square roots and real atan2/asinh (accurate, with the principal branch cuts); atanh as
    log((1 + z)/(1 - z))/2 rearranged without cancellation;
  - compare EQ/NE part by part; convert between complex, float, integer and bool types
    (complex to real keeps the real part, anything to bool is `!= 0`); real, imag, complex.
Ordering comparisons of complex numbers are `Unsupported` (StableHLO has none).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import arithmetic, emitter
from justjax._src.backends.llvm.codegen.emitter import COMPLEX_OPS, Unsupported, _Emitter
from justjax._src.backends.llvm.mathlib.special import Ctx, V, hypot
from justjax._src.hlo.ir import Op

__all__ = ["convert"]

_Z = tuple[V, V]


def _ctx(em: _Emitter, z: ir.Value) -> Ctx:
    """The float context of complex value `z`'s parts."""
    return Ctx(em.b, "f64" if z.type.elements[0] == ir.DoubleType() else "f32")


def _parts(em: _Emitter, z: ir.Value) -> _Z:
    ctx = _ctx(em, z)
    return V(ctx, em.b.extract_value(z, 0)), V(ctx, em.b.extract_value(z, 1))


def _pack(em: _Emitter, z: _Z) -> ir.Value:
    re, im = z
    ty = ir.LiteralStructType([re.v.type, re.v.type])
    return em.pack(ty, [re.v, im.v])


def _widen(z: _Z) -> _Z:
    return z[0].ctx.widen(z[0]), z[0].ctx.widen(z[1])


def _narrow(ctx: Ctx, z: _Z) -> _Z:
    return ctx.narrow(z[0]), ctx.narrow(z[1])


# -- arithmetic (in the operands' precision) ------------------------------------------------

def _mul(a: _Z, b: _Z) -> _Z:
    ctx = a[0].ctx
    return (ctx.fmuladd(a[0], b[0], -(a[1] * b[1])), ctx.fmuladd(a[0], b[1], a[1] * b[0]))


def _mul_plain(a: _Z, b: _Z) -> _Z:
    """(ar br - ai bi, ar bi + ai br) without fusing (NumPy's scalar `nc_prod`)."""
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def _div(a: _Z, b: _Z) -> _Z:
    """Smith's algorithm, as NumPy's complex divide loop (a zero divisor gives inf/nan)."""
    ctx = a[0].ctx
    (ar, ai), (br, bi) = a, b
    abs_br, abs_bi = ctx.fabs(br), ctx.fabs(bi)
    real_big = ctx.cmp(">=", abs_br, abs_bi)
    zero = ctx.and_(ctx.cmp("==", abs_br, 0.0), ctx.cmp("==", abs_bi, 0.0))
    rat1 = bi / br
    scl1 = 1.0 / (br + bi * rat1)
    rat2 = br / bi
    scl2 = 1.0 / (bi + br * rat2)
    re = ctx.select(real_big, (ar + ai * rat1) * scl1, (ar * rat2 + ai) * scl2)
    im = ctx.select(real_big, (ai - ar * rat1) * scl1, (ai * rat2 - ar) * scl2)
    re = ctx.select(zero, ar / abs_br, re)
    im = ctx.select(zero, ai / abs_br, im)
    return re, im


def _one(ctx: Ctx) -> _Z:
    return ctx.c(1.0), ctx.c(0.0)


# -- elementary functions (float64 cores) ----------------------------------------------------

def _exp64(z: _Z) -> _Z:
    ctx = z[0].ctx
    x, y = z
    cos, sin = ctx.math("cos", y), ctx.math("sin", y)
    e = ctx.math("exp", x)
    # exp(x) overflows before exp(x) cos(y) does: exp(x/2) twice.
    big = ctx.cmp(">", x, 709.0)
    h = ctx.math("exp", x * 0.5)
    re = ctx.select(big, h * cos * h, e * cos)
    im = ctx.select(big, h * sin * h, e * sin)
    # C99: a zero imaginary part stays (exp(x) + 0i even for x = inf or nan);
    # exp(-inf + i y) = +-0 +-0i and exp(+inf + i y) = inf + nan i for y inf or nan.
    im = ctx.select(ctx.cmp("==", y, 0.0), y, im)
    re = ctx.select(ctx.cmp("==", y, 0.0), e, re)
    y_bad = ctx.b.not_(ctx.cmp("<", ctx.fabs(y), math.inf))
    at_minus_inf = ctx.and_(ctx.cmp("==", x, -math.inf), y_bad)
    at_plus_inf = ctx.and_(ctx.cmp("==", x, math.inf), y_bad)
    re = ctx.select(at_minus_inf, 0.0, ctx.select(at_plus_inf, math.inf, re))
    im = ctx.select(at_minus_inf, ctx.copysign(0.0, y),
                    ctx.select(at_plus_inf, math.nan, im))
    return re, im


def _log_abs64(ctx: Ctx, x: V, y: V) -> V:
    """log|x + iy|: near |z| = 1 as log1p(x^2 + y^2 - 1)/2 with exact squares (no
    cancellation), elsewhere log(hypot) with a scaling for huge values."""
    ax, ay = ctx.fabs(x), ctx.fabs(y)
    a = ctx.select(ctx.cmp(">", ay, ax), ay, ax)
    b = ctx.select(ctx.cmp(">", ay, ax), ax, ay)
    a2, b2 = a * a, b * b
    a2e, b2e = ctx.fma(a, a, -a2), ctx.fma(b, b, -b2)
    # x^2 + y^2 - 1 = (a2 - 1) + b2 + a2e + b2e with the rounding errors of a2 - 1 (Fast2Sum)
    # and of the sum with b2 (which may cancel: TwoSum) kept, the small terms added last.
    head = a2 - 1.0
    head_err = a2 - (head + 1.0)
    s = head + b2
    back = s - head
    err = (head - (s - back)) + (b2 - back)
    d = s + (((a2e + b2e) + head_err) + err)
    near = ctx.math("log1p", d) * 0.5
    huge = ctx.cmp(">", a, 1e300)
    scale = ctx.select(huge, 0.25, 1.0)
    far = ctx.math("log", hypot(ctx, x * scale, y * scale)) - ctx.math("log", scale)
    close = ctx.and_(ctx.cmp(">=", a, 0.7), ctx.cmp("<=", a, 1.5))
    return ctx.select(close, near, far)


def _log64(z: _Z) -> _Z:
    ctx = z[0].ctx
    x, y = z
    return _log_abs64(ctx, x, y), ctx.math("atan2", y, x)


def _sqrt64(z: _Z) -> _Z:
    """Kahan's csqrt: t = sqrt((|x| + |z|)/2), then (t, y/2t) or (|y|/2t, +-t)."""
    ctx = z[0].ctx
    x, y = z
    big = ctx.cmp(">", ctx.select(ctx.cmp(">", ctx.fabs(y), ctx.fabs(x)), ctx.fabs(y),
                                  ctx.fabs(x)), 2.0 ** 1020)
    scale = ctx.select(big, 0.25, 1.0)
    xs, ys = x * scale, y * scale
    t = ctx.sqrt((ctx.fabs(xs) + hypot(ctx, xs, ys)) * 0.5)
    unscale = ctx.select(big, 2.0, 1.0)
    pos = ctx.cmp(">=", x, 0.0)
    re = ctx.select(pos, t, ctx.fabs(ys) / (t * 2.0))
    im = ctx.select(pos, ys / (t * 2.0), ctx.copysign(t, y))
    re, im = re * unscale, im * unscale
    zero = ctx.and_(ctx.cmp("==", x, 0.0), ctx.cmp("==", y, 0.0))
    re = ctx.select(zero, 0.0, re)
    im = ctx.select(zero, y, im)
    inf_y = ctx.isinf(y)
    return ctx.select(inf_y, math.inf, re), ctx.select(inf_y, y, im)


def _sinh_cosh(ctx: Ctx, x: V) -> tuple[V, V]:
    return ctx.math("sinh", x), ctx.math("cosh", x)


def _sinh64(z: _Z) -> _Z:
    """sinh x cos y + i cosh x sin y, with C99's values for zero and non-finite parts."""
    ctx = z[0].ctx
    x, y = z
    sh, ch = _sinh_cosh(ctx, x)
    re, im = sh * ctx.math("cos", y), ch * ctx.math("sin", y)
    finite_y = ctx.cmp("<", ctx.fabs(y), math.inf)
    # sinh(+-0 + iy) keeps the zero (nan y too); sinh(x + i0) = sinh x + i0; with x = +-inf
    # and y inf or nan: +-inf + nan i.
    re = ctx.select(ctx.and_(ctx.cmp("==", x, 0.0), ctx.b.not_(finite_y)), x, re)
    y_zero = ctx.cmp("==", y, 0.0)
    re = ctx.select(y_zero, sh, re)
    im = ctx.select(y_zero, y, im)
    x_inf_y_bad = ctx.and_(ctx.isinf(x), ctx.b.not_(finite_y))
    return ctx.select(x_inf_y_bad, ctx.fabs(x), re), ctx.select(x_inf_y_bad, math.nan, im)


def _cosh64(z: _Z) -> _Z:
    """cosh x cos y + i sinh x sin y, with C99's values for zero and non-finite parts."""
    ctx = z[0].ctx
    x, y = z
    sh, ch = _sinh_cosh(ctx, x)
    re, im = ch * ctx.math("cos", y), sh * ctx.math("sin", y)
    finite_y = ctx.cmp("<", ctx.fabs(y), math.inf)
    # cosh(x + i0) = cosh x + i0 sinh x (the zero's sign from both; +0 for a nan x);
    # cosh(+-0 + iy) with y inf or nan: nan + 0i; cosh(+-inf + iy) likewise: inf + nan i.
    y_zero = ctx.cmp("==", y, 0.0)
    zero_im = ctx.select(ctx.isnan(x), y, y * ctx.copysign(1.0, x))
    re = ctx.select(y_zero, ch, re)
    im = ctx.select(y_zero, zero_im, im)
    im = ctx.select(ctx.and_(ctx.cmp("==", x, 0.0), ctx.b.not_(finite_y)), 0.0, im)
    x_inf_y_bad = ctx.and_(ctx.isinf(x), ctx.b.not_(finite_y))
    return ctx.select(x_inf_y_bad, math.inf, re), ctx.select(x_inf_y_bad, math.nan, im)


def _sin64(z: _Z) -> _Z:
    """sin(z) = -i sinh(iz) (+inf imaginary part for an infinite y and non-finite x)."""
    ctx = z[0].ctx
    a, b = _sinh64((-z[1], z[0]))
    bad = ctx.and_(ctx.isinf(z[1]), ctx.b.not_(ctx.cmp("<", ctx.fabs(z[0]), math.inf)))
    return b, ctx.select(bad, math.inf, -a)


def _cos64(z: _Z) -> _Z:
    """cos(z) = cosh(iz)."""
    return _cosh64((-z[1], z[0]))


def _tanh64(z: _Z) -> _Z:
    """(sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y) (no cancellation); for
    |x| > 20, copysign(1, x) + i 4 sin y cos y exp(-2|x|)."""
    ctx = z[0].ctx
    x, y = z
    sh, ch = _sinh_cosh(ctx, x)
    sin, cos = ctx.math("sin", y), ctx.math("cos", y)
    den = sh * sh + cos * cos
    re = sh * ch / den
    im = sin * cos / den
    big = ctx.cmp(">", ctx.fabs(x), 20.0)
    far_im = sin * cos * 4.0 * ctx.math("exp", ctx.fabs(x) * -2.0)
    far_im = ctx.select(ctx.isinf(x), ctx.copysign(0.0, y), far_im)
    re = ctx.select(big, ctx.copysign(1.0, x), re)
    im = ctx.select(big, far_im, im)
    # C99: a zero imaginary part stays (tanh(x) + 0i).
    im = ctx.select(ctx.cmp("==", y, 0.0), y, im)
    # C99's (glibc's) values when a part is not finite: +-1 +-0i for x = +-inf; x + 0i for
    # y = 0; else nan + nan i, keeping a zero real part.
    finite_y = ctx.cmp("<", ctx.fabs(y), math.inf)
    special = ctx.b.not_(ctx.and_(ctx.cmp("<", ctx.fabs(x), math.inf), finite_y))
    inf_im = ctx.select(ctx.and_(finite_y, ctx.cmp(">", ctx.fabs(y), 1.0)),
                        ctx.copysign(0.0, sin * cos), ctx.copysign(0.0, y))
    y_zero = ctx.cmp("==", y, 0.0)
    other_re = ctx.select(y_zero, x, ctx.select(ctx.cmp("==", x, 0.0), x, math.nan))
    other_im = ctx.select(y_zero, y, math.nan)
    x_inf = ctx.isinf(x)
    re = ctx.select(special, ctx.select(x_inf, ctx.copysign(1.0, x), other_re), re)
    im = ctx.select(special, ctx.select(x_inf, inf_im, other_im), im)
    return re, im


def _tan64(z: _Z) -> _Z:
    """tan(z) = -i tanh(iz)."""
    a, b = _tanh64((-z[1], z[0]))
    return b, -a


def _sqrt_pair(z: _Z, shift: float, flip: bool) -> _Z:
    """sqrt(shift + z), or sqrt(shift - z) with `flip` (the imaginary part negated, not
    subtracted from zero, so its zero keeps the right sign on the branch cut)."""
    x, y = z
    return _sqrt64((shift - x, -y) if flip else (x + shift, y))


def _asin64(z: _Z) -> _Z:
    """Kahan's casin: s1 = sqrt(1 - z), s2 = sqrt(1 + z); atan(x / Re(s1 s2)) +
    i asinh(Im(conj(s1) s2)) (no cancellation, the branch cuts from the square roots)."""
    ctx = z[0].ctx
    s1, s2 = _sqrt_pair(z, 1.0, True), _sqrt_pair(z, 1.0, False)
    re = ctx.math("atan2", z[0], s1[0] * s2[0] - s1[1] * s2[1])
    return re, ctx.math("asinh", s1[0] * s2[1] - s1[1] * s2[0])


def _acos64(z: _Z) -> _Z:
    """Kahan's cacos: 2 atan2(Re s1, Re s2) + i asinh(Im(conj(s2) s1))."""
    ctx = z[0].ctx
    s1, s2 = _sqrt_pair(z, 1.0, True), _sqrt_pair(z, 1.0, False)
    re = ctx.math("atan2", s1[0], s2[0]) * 2.0
    return re, ctx.math("asinh", s2[0] * s1[1] - s2[1] * s1[0])


def _acosh64(z: _Z) -> _Z:
    """Kahan's cacosh: s1 = sqrt(z - 1), s2 = sqrt(z + 1); asinh(Re(conj(s1) s2)) +
    2i atan2(Im s1, Re s2)."""
    ctx = z[0].ctx
    s1, s2 = _sqrt_pair(z, -1.0, False), _sqrt_pair(z, 1.0, False)
    re = ctx.math("asinh", s1[0] * s2[0] + s1[1] * s2[1])
    return re, ctx.math("atan2", s1[1], s2[0]) * 2.0


def _asinh64(z: _Z) -> _Z:
    """asinh(z) = -i asin(iz)."""
    a, b = _asin64((-z[1], z[0]))
    return b, -a


def _atanh64(z: _Z) -> _Z:
    """atanh(z) = log((1 + z)/(1 - z))/2 for x >= 0 (odd symmetry otherwise):
    log1p(4x / ((1 - x)^2 + y^2))/4 + i atan2(2y, (1 - x)(1 + x) - y^2)/2; for huge |z|,
    Re(1/z) + i copysign(pi/2, y)."""
    ctx = z[0].ctx
    x0, y0 = z
    beta = ctx.copysign(1.0, x0)
    x, y = x0 * beta, y0 * beta
    re = ctx.math("log1p", x * 4.0 / ((1.0 - x) * (1.0 - x) + y * y)) * 0.25
    im = ctx.math("atan2", y * 2.0, (1.0 - x) * (1.0 + x) - y * y) * 0.5
    big = ctx.or_(ctx.cmp(">", x, 1e150), ctx.cmp(">", ctx.fabs(y), 1e150))
    m = hypot(ctx, x, y)
    re = ctx.select(big, x / m / m, re)
    im = ctx.select(big, ctx.copysign(math.pi / 2, y), im)
    return re * beta, im * beta


def _atan64(z: _Z) -> _Z:
    """atan(z) = -i atanh(iz)."""
    a, b = _atanh64((-z[1], z[0]))
    return b, -a


# -- C99's special values (Annex G, as NumPy's npy_cacos ... give them) ----------------------
# The cores above are for finite operands; these give the results at infinities and nans
# (selected in where either part is not finite), so the llvm backend answers as the
# reference backend (NumPy) does.

def _select_z(cond: ir.Value, a: _Z, b: _Z) -> _Z:
    ctx = a[0].ctx
    return ctx.select(cond, a[0], b[0]), ctx.select(cond, a[1], b[1])


def _nonfinite(z: _Z) -> ir.Value:
    ctx = z[0].ctx
    return ctx.b.not_(ctx.and_(ctx.cmp("<", ctx.fabs(z[0]), math.inf),
                               ctx.cmp("<", ctx.fabs(z[1]), math.inf)))


def _special_parts(z: _Z) -> tuple[ir.Value, ...]:
    """(x inf, x nan, y inf, y nan) of z = x + iy."""
    ctx = z[0].ctx
    return ctx.isinf(z[0]), ctx.isnan(z[0]), ctx.isinf(z[1]), ctx.isnan(z[1])


def _acos_special(z: _Z) -> _Z:
    """cacos at non-finite z: pi/2 - i inf for y infinite (pi/4, 3pi/4 when x is +-inf
    too, nan when x is nan), +0 or pi - i inf for x = +-inf, nan +- i inf, nans else; the
    imaginary part's sign opposite to y's."""
    ctx = z[0].ctx
    x, y = z
    x_inf, x_nan, y_inf, y_nan = _special_parts(z)
    corner = ctx.select(ctx.cmp(">", x, 0.0), math.pi / 4, 3 * math.pi / 4)
    re_y_inf = ctx.select(x_inf, corner, ctx.select(x_nan, math.nan, math.pi / 2))
    re_y_nan = ctx.select(ctx.cmp("==", x, 0.0), math.pi / 2, math.nan)
    re_x_inf = ctx.select(ctx.cmp(">", x, 0.0), 0.0, math.pi)
    re = ctx.select(y_inf, re_y_inf, ctx.select(y_nan, re_y_nan,
                                                ctx.select(x_inf, re_x_inf, math.nan)))
    minus_inf = -ctx.copysign(math.inf, y)
    im_y_nan = ctx.select(x_inf, -math.inf, math.nan)
    im = ctx.select(y_nan, im_y_nan, ctx.select(ctx.and_(x_nan, ctx.b.not_(y_inf)),
                                                 math.nan, minus_inf))
    return re, im


def _acosh_from_acos(z: _Z, w: _Z) -> _Z:
    """cacosh(z) from w = cacos(z), as NumPy's npy_cacosh derives it: (|Im w|, +-Re w)
    with the nans moved as C99 says."""
    ctx = z[0].ctx
    rx, ry = w
    rx_nan, ry_nan = ctx.isnan(rx), ctx.isnan(ry)
    re = ctx.select(ry_nan, ry, ctx.fabs(ry))
    im = ctx.select(ry_nan, ry, ctx.select(rx_nan, rx, ctx.copysign(rx, z[1])))
    # glibc's choice where C99 leaves it open: cacosh(+-0 + i nan) = nan + i pi/2.
    zero_nan = ctx.and_(ctx.cmp("==", z[0], 0.0), ctx.isnan(z[1]))
    return re, ctx.select(zero_nan, math.pi / 2, im)


def _asinh_special(z: _Z) -> _Z:
    """casinh at non-finite z (odd, conjugate-symmetric): +inf + i pi/2 for y infinite
    (pi/4 when x is infinite too), +inf + i0 for x infinite, nan + i0 at (nan, 0)."""
    ctx = z[0].ctx
    x, y = z
    x_inf, x_nan, y_inf, y_nan = _special_parts(z)
    re_y_inf = ctx.c(math.inf)
    im_y_inf = ctx.select(x_inf, math.pi / 4, ctx.select(x_nan, math.nan, math.pi / 2))
    re_y_nan = ctx.select(x_inf, math.inf, math.nan)
    re_fin = ctx.select(x_inf, math.inf, math.nan)
    im_fin = ctx.select(x_inf, 0.0, ctx.select(ctx.cmp("==", y, 0.0), 0.0, math.nan))
    re = ctx.select(y_inf, re_y_inf, ctx.select(y_nan, re_y_nan, re_fin))
    im = ctx.select(y_inf, im_y_inf, ctx.select(y_nan, math.nan, im_fin))
    return ctx.copysign(re, x), ctx.copysign(im, y)


def _atanh_special(z: _Z) -> _Z:
    """catanh at non-finite z (odd, conjugate-symmetric): +0 + i pi/2 for an infinite
    part (+0 + i nan at (inf, nan)), +-0 + i nan at (0, nan), nans else."""
    ctx = z[0].ctx
    x, y = z
    x_inf, x_nan, y_inf, y_nan = _special_parts(z)
    re_y_nan = ctx.select(ctx.or_(x_inf, ctx.cmp("==", x, 0.0)), 0.0, math.nan)
    re = ctx.select(y_inf, 0.0, ctx.select(y_nan, re_y_nan,
                                           ctx.select(x_inf, 0.0, math.nan)))
    im = ctx.select(y_inf, math.pi / 2, ctx.select(y_nan, math.nan,
                                                   ctx.select(x_inf, math.pi / 2, math.nan)))
    return ctx.copysign(re, x), ctx.copysign(im, y)


def _times_minus_i(w: _Z) -> _Z:
    """-i w, for the functions defined through their hyperbolic twins at iz."""
    return w[1], -w[0]


def _acos_c99(z: _Z) -> _Z:
    return _select_z(_nonfinite(z), _acos_special(z), _acos64(z))


def _acosh_c99(z: _Z) -> _Z:
    return _select_z(_nonfinite(z), _acosh_from_acos(z, _acos_special(z)), _acosh64(z))


def _asinh_c99(z: _Z) -> _Z:
    return _select_z(_nonfinite(z), _asinh_special(z), _asinh64(z))


def _asin_c99(z: _Z) -> _Z:
    """casin(z) = -i casinh(iz)."""
    iz = (-z[1], z[0])
    return _select_z(_nonfinite(z), _times_minus_i(_asinh_special(iz)), _asin64(z))


def _atanh_c99(z: _Z) -> _Z:
    return _select_z(_nonfinite(z), _atanh_special(z), _atanh64(z))


def _atan_c99(z: _Z) -> _Z:
    """catan(z) = -i catanh(iz)."""
    iz = (-z[1], z[0])
    return _select_z(_nonfinite(z), _times_minus_i(_atanh_special(iz)), _atan64(z))


def _pow64(a: _Z, b: _Z) -> _Z:
    """exp(b log a) (C's cpow)."""
    return _exp64(_mul_plain(b, _log64(a)))


def _in_f64(core: Callable[..., _Z]) -> Callable[..., _Z]:
    """`core` evaluated in float64 (complex64 operands widened, the parts rounded once)."""
    def evaluate(*zs: _Z) -> _Z:
        ctx = zs[0][0].ctx
        if ctx.dtype == "f64":
            return core(*zs)
        return _narrow(ctx, core(*[_widen(z) for z in zs]))
    return evaluate


# -- NumPy's formulas --------------------------------------------------------------------------

def _abs(z: _Z) -> V:
    return hypot(z[0].ctx, z[0], z[1])


def _sign(z: _Z) -> _Z:
    ctx = z[0].ctx
    m = _abs(z)
    q = _div(z, (m, ctx.c(0.0)))
    zero = ctx.cmp("==", m, 0.0)
    return ctx.select(zero, 0.0, q[0]), ctx.select(zero, 0.0, q[1])


def _expm1(z: _Z) -> _Z:
    """NumPy's formula, with the reference backend's special values (C99's): a zero
    imaginary part stays, -1 at -inf (-1 + 0j with an inf or nan imaginary part),
    inf + nan j at (+inf, inf or nan)."""
    ctx = z[0].ctx
    x, y = z
    a = ctx.math("sin", y * 0.5)
    # + 0.0: expm1(-0 + 0j) is +0 + 0j (e^z - 1 = 1 - 1), where the formula gives -0.
    re = ctx.math("expm1", x) * ctx.math("cos", y) - a * a * 2.0 + 0.0
    im = ctx.math("exp", x) * ctx.math("sin", y)
    im = ctx.select(ctx.cmp("==", y, 0.0), y, im)
    bad_y = ctx.b.not_(ctx.cmp("<", ctx.fabs(y), math.inf))
    at_minus_inf = ctx.and_(ctx.cmp("==", x, -math.inf), bad_y)
    at_plus_inf = ctx.and_(ctx.cmp("==", x, math.inf), bad_y)
    # At -inf the formula's -cos(y) - 2 sin(y/2)^2 is -1 up to rounding: -1 exactly.
    re = ctx.select(ctx.cmp("==", x, -math.inf), -1.0, ctx.select(at_plus_inf, math.inf, re))
    im = ctx.select(at_minus_inf, 0.0, ctx.select(at_plus_inf, math.nan, im))
    return re, im


def _log1p(z: _Z) -> _Z:
    ctx = z[0].ctx
    x1 = z[0] + 1.0
    return ctx.math("log", hypot(ctx, x1, z[1])), ctx.math("atan2", z[1], x1)


def _logistic(z: _Z) -> _Z:
    ctx = z[0].ctx
    e = _in_f64(_exp64)((-z[0], -z[1]))
    return _div(_one(ctx), (e[0] + 1.0, e[1] + 0.0))


def _rsqrt(z: _Z) -> _Z:
    return _div(_one(z[0].ctx), _in_f64(_sqrt64)(z))


def _int_power(a: _Z, n: ir.Value, negative: ir.Value) -> _Z:
    """a^|n| by binary powering over 7 bits (|n| < 100, products unfused), then 1/that
    (Smith) for n < 0, with NumPy's unrolled cases for n = 1, 2, 3."""
    ctx = a[0].ctx
    b = ctx.b
    acc, p = _one(ctx), a
    for k in range(7):
        bit = b.icmp_unsigned("!=", b.and_(n, ir.Constant(n.type, 1 << k)),
                              ir.Constant(n.type, 0))
        stepped = _mul_plain(acc, p)
        acc = ctx.select(bit, stepped[0], acc[0]), ctx.select(bit, stepped[1], acc[1])
        p = _mul_plain(p, p)
    inv = _div(_one(ctx), acc)
    acc = ctx.select(negative, inv[0], acc[0]), ctx.select(negative, inv[1], acc[1])
    square = _mul_plain(a, a)
    cube = _mul_plain(a, square)
    for k, special in ((1, a), (2, square), (3, cube)):
        is_k = ctx.and_(b.not_(negative), b.icmp_signed("==", n, ir.Constant(n.type, k)))
        acc = ctx.select(is_k, special[0], acc[0]), ctx.select(is_k, special[1], acc[1])
    return acc


def _power(a: _Z, b: _Z) -> _Z:
    ctx = a[0].ctx
    (ar, ai), (br, bi) = a, b
    general = _in_f64(_pow64)(a, b)
    # Integer exponents with |n| < 100.
    small = ctx.and_(ctx.cmp("==", bi, 0.0), ctx.cmp("==", br, ctx.floor(br)),
                     ctx.cmp("<", ctx.fabs(br), 100.0))
    n = ctx.b.fptosi(ctx.select(small, ctx.fabs(br), 0.0).v, ir.IntType(32))
    powered = _int_power(a, n, ctx.cmp("<", br, 0.0))
    re = ctx.select(small, powered[0], general[0])
    im = ctx.select(small, powered[1], general[1])
    base_zero = ctx.and_(ctx.cmp("==", ar, 0.0), ctx.cmp("==", ai, 0.0))
    to_zero = ctx.and_(ctx.cmp(">", br, 0.0), ctx.cmp("==", bi, 0.0))
    re = ctx.select(base_zero, ctx.select(to_zero, 0.0, math.nan), re)
    im = ctx.select(base_zero, ctx.select(to_zero, 0.0, math.nan), im)
    exponent_zero = ctx.and_(ctx.cmp("==", br, 0.0), ctx.cmp("==", bi, 0.0))
    return ctx.select(exponent_zero, 1.0, re), ctx.select(exponent_zero, 0.0, im)


# -- conversions, comparisons ------------------------------------------------------------------

def _part_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float64 if np.dtype(dt) == np.complex128 else np.float32)


def convert(em: _Emitter, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """`stablehlo.convert` from or to a complex dtype (the reference's rules: complex to
    real keeps the real part, to bool is `re != 0 or im != 0`, real to complex has a zero
    imaginary part)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if emitter._is_complex(src):
        re, im = _parts(em, x)
        if dst == np.bool_:
            return em.b.or_(em.b.fcmp_unordered("!=", re.v, ir.Constant(re.v.type, 0.0)),
                            em.b.fcmp_unordered("!=", im.v, ir.Constant(im.v.type, 0.0)))
        if emitter._is_complex(dst):
            part = _part_dtype(dst)
            return em.pack(emitter.compute_type(dst), [
                arithmetic._convert(em, re.v, _part_dtype(src), part),
                arithmetic._convert(em, im.v, _part_dtype(src), part)])
        return arithmetic._convert(em, re.v, _part_dtype(src), dst)
    part = _part_dtype(dst)
    re_v = arithmetic._convert(em, x, src, part)
    return em.pack(emitter.compute_type(dst), [re_v, ir.Constant(re_v.type, 0.0)])


def _compare(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    direction = op.attributes["comparison_direction"].value
    (ar, ai), (br, bi) = (_parts(em, a) for a in args)
    b = em.b
    if direction == "EQ":
        return b.and_(b.fcmp_ordered("==", ar.v, br.v), b.fcmp_ordered("==", ai.v, bi.v))
    if direction == "NE":
        return b.or_(b.fcmp_unordered("!=", ar.v, br.v), b.fcmp_unordered("!=", ai.v, bi.v))
    raise Unsupported(f"llvm emitter: complex comparison {direction}")


# -- registration --------------------------------------------------------------------------

def _unary(fn: Callable[[_Z], _Z]) -> Callable[..., ir.Value]:
    return lambda em, op, args: _pack(em, fn(_parts(em, args[0])))


def _binary(fn: Callable[[_Z, _Z], _Z]) -> Callable[..., ir.Value]:
    return lambda em, op, args: _pack(em, fn(_parts(em, args[0]), _parts(em, args[1])))


def _convert_op(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    return convert(em, args[0], op.operands[0].type.dtype, op.result.type.dtype)


def _complex_op(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    return em.pack(emitter.compute_type(op.result.type.dtype), args)


def _part(k: int) -> Callable[..., ir.Value]:
    return lambda em, op, args: em.b.extract_value(args[0], k)


COMPLEX_OPS.update({
    "stablehlo.add": _binary(lambda a, b: (a[0] + b[0], a[1] + b[1])),
    "stablehlo.subtract": _binary(lambda a, b: (a[0] - b[0], a[1] - b[1])),
    "stablehlo.multiply": _binary(_mul),
    "stablehlo.divide": _binary(_div),
    "stablehlo.power": _binary(_power),
    "stablehlo.negate": _unary(lambda z: (-z[0], -z[1])),
    "chlo.conj": _unary(lambda z: (z[0], -z[1])),
    "chlo.square": _unary(lambda z: _mul(z, z)),
    "stablehlo.abs": lambda em, op, args: _abs(_parts(em, args[0])).v,
    "stablehlo.sign": _unary(_sign),
    "stablehlo.exponential": _unary(_in_f64(_exp64)),
    "stablehlo.exponential_minus_one": _unary(_expm1),
    "stablehlo.log": _unary(_in_f64(_log64)),
    "stablehlo.log_plus_one": _unary(_log1p),
    "stablehlo.logistic": _unary(_logistic),
    "stablehlo.sqrt": _unary(_in_f64(_sqrt64)),
    "stablehlo.rsqrt": _unary(_rsqrt),
    "stablehlo.sine": _unary(_in_f64(_sin64)),
    "stablehlo.cosine": _unary(_in_f64(_cos64)),
    "stablehlo.tan": _unary(_in_f64(_tan64)),
    "stablehlo.tanh": _unary(_in_f64(_tanh64)),
    "chlo.sinh": _unary(_in_f64(_sinh64)),
    "chlo.cosh": _unary(_in_f64(_cosh64)),
    "chlo.asin": _unary(_in_f64(_asin_c99)),
    "chlo.acos": _unary(_in_f64(_acos_c99)),
    "chlo.atan": _unary(_in_f64(_atan_c99)),
    "chlo.asinh": _unary(_in_f64(_asinh_c99)),
    "chlo.acosh": _unary(_in_f64(_acosh_c99)),
    "chlo.atanh": _unary(_in_f64(_atanh_c99)),
    "stablehlo.compare": _compare,
    "stablehlo.convert": _convert_op,
    "stablehlo.real": _part(0),
    "stablehlo.imag": _part(1),
    "stablehlo.complex": _complex_op,
})
