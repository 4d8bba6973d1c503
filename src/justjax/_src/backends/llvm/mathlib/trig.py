"""sin, cos, tan, atan, atan2, asin, acos for the LLVM math library (conventions in scalar.py).

sin/cos/tan: x = k pi/2 + r by a Cody-Waite reduction (three parts of pi/2, FMAs) for |x| below a
bound (float32 sin/cos: 2**16, evaluated in float32; float32 tan and float64: 2**50, in float64),
Taylor or fitted polynomials on [-pi/4, pi/4], the quadrant from k mod 4. Larger |x|, infinities
and nan take the rare path (`rare`): a Payne-Hanek reduction in float64 (table-free for
float32 inputs, with an exponent-indexed table for float64) and a result rounded once.
atan family: evaluated in float64 around centres i/8 (see `_atan_ratio`).
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Sequence

from llvmlite import ir

from justjax._src.backends.llvm.mathlib import rare, scalar
from justjax._src.backends.llvm.mathlib.coeffs import COEFFS
from justjax._src.backends.llvm.mathlib.scalar import (_PIO2, _Emitter, _in_f64, _in_f64_2,
                                                       _round_to, _signbit, _split, _table_load, _V)

__all__ = ["sin", "cos", "tan", "atan", "atan2", "asin", "acos"]

# ---------------------------------------------------------------- trigonometric

_PH_ROWS = 1000  # exponents f = row - 2 in [-2, 997]
_PH_MIN_EXP = 50  # |x| >= 2**50 takes the table-driven reduction


@functools.lru_cache(maxsize=None)
def _payne_hanek_table() -> tuple[tuple[float, ...], ...]:
    """For f in [-2, 997]: (2**f * 2/pi) mod 4 cut into 5 parts on fixed bit grids.

    Part 0 is a multiple of 2**-24 in [0, 4), parts 1-3 multiples of 2**-50, 2**-76, 2**-102 below the
    previous grid step, part 4 the rounded rest: each has at most 26 significant bits, so its product
    with a 26/27-bit integer is exact in float64.
    """
    parts: list[list[float]] = [[] for _ in range(5)]
    with localcontext() as ctx:
        ctx.prec = 440
        two_over_pi = 2 / scalar._pi_decimal()
        for row in range(_PH_ROWS):
            g = (Decimal(2) ** (row - 2) * two_over_pi) % 4
            for j, grid in enumerate((24, 50, 76, 102)):
                scale = Decimal(2) ** grid
                part = (g * scale).to_integral_value(rounding="ROUND_FLOOR") / scale
                parts[j].append(float(part))
                g -= part
            parts[4].append(float(g))
    return tuple(tuple(p) for p in parts)


def _mod4(v: _V) -> _V:
    return v - 4.0 * v.em.call("llvm.floor", v * 0.25)


def _reduce_large(em: _Emitter, x: _V) -> tuple[_V, _V]:
    """x = (k + fr) pi/2 for |x| >= 2**50 (float64), Payne-Hanek style; returns (r = fr pi/2, k mod 4).

    |x| = M 2**e with M = Mh 2**26 + Ml; x 2/pi mod 4 = Mh T[e+26] + Ml T[e] mod 4, where T[f] is
    (2**f 2/pi) mod 4 in parts: the big products are exact and reduced mod 4 exactly.
    """
    i64 = ir.IntType(64)
    ix = em.bits(em.call("llvm.fabs", x))
    exp = em.b.sub(em.b.lshr(ix, em.ci(52)), em.ci(1023))
    exp = em.b.select(em.b.icmp_signed("<", exp, em.ci(_PH_MIN_EXP)), em.ci(_PH_MIN_EXP), exp)
    exp = em.b.select(em.b.icmp_signed(">", exp, em.ci(1023)), em.ci(1023), exp)
    mant = em.b.or_(em.b.and_(ix, em.ci((1 << 52) - 1)), em.ci(1 << 52))
    m_hi = _V(em, em.b.sitofp(em.b.lshr(mant, em.ci(26)), em.fty))
    m_lo = _V(em, em.b.sitofp(em.b.and_(mant, em.ci((1 << 26) - 1)), em.fty))
    row_lo = em.b.sub(exp, ir.Constant(i64, 50))  # f = exp - 52, row = f + 2
    row_hi = em.b.add(row_lo, ir.Constant(i64, 26))
    table = _payne_hanek_table()

    def product(j: int) -> tuple[_V, _V]:
        name = f"justjax_payne_hanek_{j}"
        return (m_hi * _table_load(em, name, table[j], row_hi), m_lo * _table_load(em, name, table[j], row_lo))

    h0, l0 = product(0)
    h1, l1 = product(1)
    s = _mod4(_mod4(_mod4(h0) + _mod4(l0)) + _mod4(_mod4(h1) + _mod4(l1)))
    t = em.c(0.0)
    for j in (4, 3, 2):
        hj, lj = product(j)
        t = t + (hj + lj)
    k = em.call("llvm.rint", s)
    fr = (s - k) + t
    pio2_hi, pio2_lo = _split(_PIO2, "f64", 2)
    r = em.fma(fr, pio2_hi, fr * pio2_lo)
    neg = _signbit(em, x)
    return em.select(neg, -r, r), em.select(neg, -k, k)


@functools.lru_cache(maxsize=None)
def _two_over_pi_parts() -> tuple[float, ...]:
    """2/pi as 7 floats of 29 bits each on consecutive bit grids (2**1 down to 2**-202)."""
    out: list[float] = []
    with localcontext() as ctx:
        ctx.prec = 440
        g = 2 / scalar._pi_decimal()
        for j in range(7):
            scale = Decimal(2) ** (29 * (j + 1) - 1)
            part = (g * scale).to_integral_value(rounding="ROUND_FLOOR") / scale
            out.append(float(part))
            g -= part
    return tuple(out)


def _reduce_large_f32(em: _Emitter, x: _V) -> tuple[_V, _V]:
    """x 2/pi = k + fr for |x| >= 2**50 holding a float32 value (24 bits), without tables.

    Each product of x with a 29-bit part of 2/pi is exact; its integer part is split off exactly and
    summed mod 4 (products of 2**55 or more are multiples of 4 and vanish), the fractions are summed
    with the integer part removed after each step, so nothing rounds until the tiny last terms.
    """
    a = em.call("llvm.fabs", x)
    q = em.c(0.0)
    acc = em.c(0.0)
    for part in _two_over_pi_parts():
        v = _mod4(a * part)
        n = em.call("llvm.rint", v)
        acc = acc + (v - n)
        n2 = em.call("llvm.rint", acc)
        acc = acc - n2
        q = _mod4(q + n + n2)
    pio2_hi, pio2_lo = _split(_PIO2, "f64", 2)
    r = em.fma(acc, pio2_hi, acc * pio2_lo)
    neg = _signbit(em, x)
    return em.select(neg, -r, r), em.select(neg, -q, q)


def _sincos_f64(em: _Emitter, x: _V, from_f32: bool) -> tuple[_V, _V, ir.Value]:
    """Reduces x = k pi/2 + r; returns (sin r, cos r, k mod 4).

    3-part Cody-Waite (33-bit parts) below 2**50; above, a Payne-Hanek reduction: table-free for
    widened float32 inputs, with an exponent-indexed table (gathers) for float64.
    """
    p1, p2, p3 = _split(_PIO2, "f64", 3, hi_bits=33)
    k = em.call("llvm.rint", x * float(1 / _PIO2))
    r = em.fma(k, -p1, x)
    r = em.fma(k, -p2, r)
    r = em.fma(k, -p3, r)
    large = em.cmp(">=", em.call("llvm.fabs", x), 2.0**_PH_MIN_EXP)
    r_large, k_large = _reduce_large_f32(em, x) if from_f32 else _reduce_large(em, x)
    r = em.select(large, r_large, r)
    k = em.select(large, k_large, k)
    # k mod 4 through float arithmetic: exact for |k| < 2**53, and never poison for finite x.
    k4 = k - 4.0 * em.call("llvm.floor", k * 0.25)
    k4 = em.select(em.isnan(k4), 0.0, k4)
    q = em.b.fptosi(em.select(em.cmp(">", em.call("llvm.fabs", k4), 3.0), 0.0, k4).v, ir.IntType(64))
    sin_r, cos_r = _sincos_poly64(em, r)
    return sin_r, cos_r, q


def _trig_exact(em: _Emitter, x: _V, kind: str) -> _V:
    """sin/cos/tan for every x, evaluated in float64 (float32 inputs widened, the result rounded
    once): the rare path of `_trig` (|x| >= its bound, infinities, nan)."""
    em64 = _Emitter(em.b, "f64") if em.dtype == "f32" else em
    x64 = _V(em64, em.b.fpext(x.v, em64.fty)) if em.dtype == "f32" else x
    sin_r, cos_r, q = _sincos_f64(em64, x64, from_f32=em.dtype == "f32")
    y = _by_quadrant(em64, sin_r, cos_r, q, x64, kind)
    # inf and nan give nan (x - x is nan exactly for them).
    y = em64.select(em64.isnan(x64 - x64), x64 - x64, y)
    if em.dtype == "f32":
        return _V(em, em.b.fptrunc(y.v, em.fty))
    return y


def _by_quadrant(em: _Emitter, sin_r: _V, cos_r: _V, q: ir.Value, x: _V, kind: str) -> _V:
    """sin/cos/tan of x = k pi/2 + r from sin r, cos r and the integer q = k (mod 4 suffices)."""
    ity = q.type
    quadrant = em.b.add(q, ir.Constant(ity, 1)) if kind == "cos" else q
    swap = em.b.icmp_unsigned("!=", em.b.and_(quadrant, ir.Constant(ity, 1)), ir.Constant(ity, 0))
    if kind == "tan":
        # tan(r + k pi/2) = tan(r) for even k, -1/tan(r) for odd k: one division.
        y = em.select(swap, -cos_r, sin_r) / em.select(swap, sin_r, cos_r)
    else:
        neg = em.b.icmp_unsigned("!=", em.b.and_(quadrant, ir.Constant(ity, 2)), ir.Constant(ity, 0))
        y = em.select(swap, cos_r, sin_r)
        y = em.select(neg, -y, y)
    if kind != "cos":
        # sin(-0) = tan(-0) = -0 (the polynomial would give +0).
        y = em.select(em.cmp("==", x, 0.0), x, y)
    return y


# Below these magnitudes the Cody-Waite reduction is used (float32 evaluation in float32).
_FAST_BOUND = {"f32": 2.0**16, "f64": 2.0**_PH_MIN_EXP}


def _reduce_fast(em: _Emitter, x: _V) -> tuple[_V, ir.Value]:
    """x = k pi/2 + r for |x| < _FAST_BOUND (Cody-Waite); returns (r, k as an integer).

    float32: pi/2 in three float32 parts; x - k p1 is exact in the FMA (a multiple of 2**-24 below
    1), the other two steps round once each. float64: three 33-bit parts (as `_sincos_f64`).
    """
    if em.dtype == "f32":
        p1, p2, p3 = _split(_PIO2, "f32", 3)
    else:
        p1, p2, p3 = _split(_PIO2, "f64", 3, hi_bits=33)
    k, q = em.round_fma(x, _round_to(1 / _PIO2, em.dtype))
    r = em.fma(k, -p1, x)
    r = em.fma(k, -p2, r)
    return em.fma(k, -p3, r), q


def _sincos_fast(em: _Emitter, x: _V) -> tuple[_V, _V, ir.Value]:
    """(sin r, cos r, k) for x = k pi/2 + r, |x| < _FAST_BOUND."""
    r, q = _reduce_fast(em, x)
    if em.dtype == "f64":
        sin_r, cos_r = _sincos_poly64(em, r)
        return sin_r, cos_r, q
    z = r * r
    # Fitted degree 7 and 8 polynomials (errors 0.06 and 0.002 ULP before rounding).
    scoef, ccoef = COEFFS["sin_f32"], COEFFS["cos_f32"]
    sin_r = em.fma(r * z, em.horner(z, scoef), r)
    cos_r = em.fma(z, em.fma(z, em.horner(z, ccoef), -0.5), 1.0)
    return sin_r, cos_r, q


def _sincos_poly64(em: _Emitter, r: _V, terms: int = 9) -> tuple[_V, _V]:
    """sin r and cos r for |r| <= pi/4 in float64 (Taylor; 9 terms after the leading ones give
    degrees 19 and 20, float64 accuracy; 5 give float32 accuracy for widened float32 arguments)."""
    z = r * r
    scoef = [float(Fraction((-1) ** n, math.factorial(2 * n + 1))) for n in range(1, terms + 1)]
    sin_r = em.fma(r * z, em.horner(z, scoef), r)
    ccoef = [float(Fraction((-1) ** n, math.factorial(2 * n))) for n in range(2, terms + 2)]
    hz = 0.5 * z
    w = 1.0 - hz
    cos_r = w + (((1.0 - w) - hz) + z * z * em.horner(z, ccoef))
    return sin_r, cos_r


def _tan_f32(em: _Emitter, x: _V) -> _V:
    """float32 tan by the float64 Cody-Waite path (a float32 quotient of float32 sin and cos would
    be off by up to 3.4 ULP); accurate for |x| < 2**50."""
    em64 = _Emitter(em.b, "f64")
    x64 = _V(em64, em.b.fpext(x.v, em64.fty))
    r, q = _reduce_fast(em64, x64)
    sin_r, cos_r = _sincos_poly64(em64, r, terms=5)
    y = _by_quadrant(em64, sin_r, cos_r, q, x64, "tan")
    return _V(em, em.b.fptrunc(y.v, em.fty))


def _trig(em: _Emitter, x: _V, kind: str) -> _V:
    """sin/cos/tan: the Cody-Waite path for |x| < _FAST_BOUND, the rare path above."""
    if em.dtype == "f32" and kind == "tan":
        fast, bound = _tan_f32(em, x), _FAST_BOUND["f64"]
    else:
        sin_r, cos_r, q = _sincos_fast(em, x)
        fast, bound = _by_quadrant(em, sin_r, cos_r, q, x, kind), _FAST_BOUND[em.dtype]
    return rare.rare_path(em, x, fast, bound, kind, lambda e, v: _trig_exact(e, v, kind))


def sin(em: _Emitter, x: _V) -> _V:
    """sin(x) (stablehlo.sine)."""
    return _trig(em, x, "sin")


def cos(em: _Emitter, x: _V) -> _V:
    """cos(x) (stablehlo.cosine)."""
    return _trig(em, x, "cos")


def tan(em: _Emitter, x: _V) -> _V:
    """tan(x) (stablehlo.tan)."""
    return _trig(em, x, "tan")


# ---------------------------------------------------------------- inverse trigonometric

def _atan_decimal(t: Decimal) -> Decimal:
    """atan(t) for 0 <= t <= 1 in decimal: atan(t) = 2 atan(t / (1 + sqrt(1 + t^2))), then the series."""
    u = t / (1 + (1 + t * t).sqrt())
    total, k, power = Decimal(0), 0, u
    while abs(power) > Decimal("1e-70"):
        total += power / (2 * k + 1) * (-1) ** k
        power *= u * u
        k += 1
    return 2 * total


@functools.lru_cache(maxsize=None)
def _atan_centres() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """atan(i/8), i = 0..8, as (hi, lo) float64 pairs."""
    with localcontext() as ctx:
        ctx.prec = 80
        exact = [_atan_decimal(Decimal(i) / 8) for i in range(9)]
        hi = [float(v) for v in exact]
        lo = [float(v - Decimal(h)) for v, h in zip(exact, hi, strict=True)]
    return tuple(hi), tuple(lo)


def _pick(em: _Emitter, index: ir.Value, values: Sequence[float]) -> _V:
    """values[index] for a small table, as a chain of selects (vectorizes without gathers)."""
    out = em.c(values[0])
    for i, v in enumerate(values[1:], start=1):
        out = em.select(em.b.icmp_signed("==", index, ir.Constant(index.type, i)), v, out)
    return out


def _atan_ratio(em: _Emitter, ay: _V, ax: _V) -> _V:
    """atan(ay / ax) in [0, pi/2] for ay, ax >= 0 (float64), with atan2's zero/inf conventions.

    t = min/max in [0, 1], centre c = i/8 nearest, atan(t) = atan(c) + atan((t - c)/(1 + t c)) with a
    short odd series; pi/2 - . when ay > ax.
    """
    swap = em.cmp(">", ay, ax)
    num = em.select(swap, ax, ay)
    den = em.select(swap, ay, ax)
    t = num / den
    both_inf = em.b.and_(em.cmp("==", ay, math.inf), em.cmp("==", ax, math.inf))
    t = em.select(both_inf, 1.0, t)
    t = em.select(em.cmp("==", den, 0.0), 0.0, t)
    i = em.b.fptosi(em.call("llvm.rint", t * 8.0).v, ir.IntType(64))
    c = em.b.sitofp(i, em.fty)
    cv = _V(em, c) * 0.125
    tr = (t - cv) / em.fma(t, cv, 1.0)
    z = tr * tr
    poly = em.fma(tr * z, em.horner(z, [(-1) ** n / (2 * n + 1) for n in range(1, 9)]), tr)
    hi, lo = _atan_centres()
    theta_lo = _pick(em, i, lo) + poly
    pio2 = _split(_PIO2, "f64", 2)
    swapped = (pio2[0] - _pick(em, i, hi)) + (pio2[1] - theta_lo)
    return em.select(swap, swapped, _pick(em, i, hi) + theta_lo)


def _atan2_64(em: _Emitter, y: _V, x: _V) -> _V:
    theta = _atan_ratio(em, em.call("llvm.fabs", y), em.call("llvm.fabs", x))
    pi = _split(2 * _PIO2, "f64", 2)
    theta = em.select(_signbit(em, x), (pi[0] - theta) + pi[1], theta)
    theta = em.call("llvm.copysign", theta, y)
    return em.select(em.isnan(x), x, em.select(em.isnan(y), y, theta))


def atan2(em: _Emitter, y: _V, x: _V) -> _V:
    """atan2(y, x) with IEEE special cases (signed zeros, infinities), evaluated in float64."""
    return _in_f64_2(em, y, x, _atan2_64)


def atan(em: _Emitter, x: _V) -> _V:
    """atan(x) = copysign(atan(|x| / 1), x) through the atan2 core (float64)."""
    def body(e: _Emitter, v: _V) -> _V:
        theta = e.call("llvm.copysign", _atan_ratio(e, e.call("llvm.fabs", v), e.c(1.0)), v)
        return e.select(e.isnan(v), v, theta)
    return _in_f64(em, x, body)


def asin(em: _Emitter, x: _V) -> _V:
    """asin(x) = atan2(x, sqrt((1 - x)(1 + x))) (float64); nan outside [-1, 1]."""
    def body(e: _Emitter, v: _V) -> _V:
        return _atan2_64(e, v, e.call("llvm.sqrt", (1.0 - v) * (v + 1.0)))
    return _in_f64(em, x, body)


def acos(em: _Emitter, x: _V) -> _V:
    """acos(x) = atan2(sqrt((1 - x)(1 + x)), x) (float64); nan outside [-1, 1]."""
    def body(e: _Emitter, v: _V) -> _V:
        return _atan2_64(e, e.call("llvm.sqrt", (1.0 - v) * (v + 1.0)), v)
    return _in_f64(em, x, body)
