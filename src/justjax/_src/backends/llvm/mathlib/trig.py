"""sin, cos, tan, atan, atan2, asin, acos for the LLVM math library (conventions in scalar.py).

float32 sin/cos: glibc's sinf/cosf, whose bits XLA CPU gives (it calls them): see `_glibc_fast`;
|y| >= 120, infinities and nan take the rare path (`rare`).
float32 tan and float64 sin/cos/tan: x = k pi/2 + r by a Cody-Waite reduction (three parts of
pi/2, FMAs) below 2**50, in float64, Taylor polynomials on [-pi/4, pi/4], the quadrant from
k mod 4. Larger |x|, infinities and nan take the rare path: a Payne-Hanek reduction in float64
(table-free for float32 inputs, with an exponent-indexed table for float64) and a result
rounded once.
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
from justjax._src.backends.llvm.mathlib.scalar import (_PIO2, _Emitter, _in_f64,
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


# ---------------------------------------------------------------- float32 sin/cos as glibc's

# XLA CPU computes float32 sin and cos by calling libm's sinf/cosf, so their results are glibc's
# (2.36, its FMA build on x86-64; XLA's own bits agree with it on every normal input). Its method,
# from glibc's sysdeps/ieee754/flt-32 (s_sinf.c, s_cosf.c, s_sincosf.h, s_sincosf_data.c), with the
# FMAs its x86-64 machine code uses: in float64, |y| < 2**-12 gives y (sin) or 1 (cos); below 120,
# n = round(y 2/pi) through a truncating conversion of y 2**24 2/pi, r = fma(-n, pi/2, y); from 120
# on, n and r by a 32 x 96-bit fixed-point product with 4/pi (`_glibc_reduce_large`); then one of
# two short polynomials in r, the sign from n, and one rounding to float32.
_GLIBC_HPI_INV_2P24 = float.fromhex("0x1.45F306DC9C883p+23")  # 2/pi * 2**24
_GLIBC_HPI = float.fromhex("0x1.921FB54442D18p0")  # pi/2
_GLIBC_PI63 = float.fromhex("0x1.921FB54442D18p-62")  # pi/2 * 2**-62: one unit of the 2.62 remainder
# cos r = C0 + C1 r^2 + ... + C4 r^8, sin r = r + S1 r^3 + S2 r^5 + S3 r^7 (glibc's __sincosf_table).
_GLIBC_COS = tuple(float.fromhex(h) for h in (
    "0x1p0", "-0x1.ffffffd0c621cp-2", "0x1.55553e1068f19p-5", "-0x1.6c087e89a359dp-10",
    "0x1.99343027bf8c3p-16"))
_GLIBC_SIN = tuple(float.fromhex(h) for h in (
    "-0x1.555545995a603p-3", "0x1.1107605230bc4p-7", "-0x1.994eb3774cf24p-13"))
_GLIBC_FAST_LIMIT = 120.0


@functools.lru_cache(maxsize=None)
def _inv_pio4_words() -> tuple[int, ...]:
    """Word k holds the bits of 4/pi from 2**-(8k+7) up to 2**24 - 8k (floor(4/pi 2**(8k+7)) mod 2**32),
    k < 24: windows of 4/pi overlapping by 24 bits, as glibc's table."""
    with localcontext() as ctx:
        ctx.prec = 120
        four_over_pi = 4 / scalar._pi_decimal()
        return tuple(int((four_over_pi * 2 ** (8 * k + 7)).to_integral_value(rounding="ROUND_FLOOR"))
                     % 2**32 for k in range(24))


def _int_table(em: _Emitter, name: str, values: Sequence[int], index: ir.Value) -> ir.Value:
    """values[index] (i32) from an internal constant array (a gather when vectorized)."""
    i32 = ir.IntType(32)
    table = em.module.globals.get(name)
    if table is None:
        arr = ir.ArrayType(i32, len(values))
        table = ir.GlobalVariable(em.module, arr, name=name)
        table.global_constant = True
        table.linkage = "internal"
        table.initializer = ir.Constant(arr, [ir.Constant(i32, v if v < 2**31 else v - 2**32) for v in values])
    return em.b.load(em.b.gep(table, [ir.Constant(i32, 0), index], inbounds=True))


def _glibc_reduce_large(em64: _Emitter, xi: ir.Value) -> tuple[_V, ir.Value]:
    """|y| = n pi/2 + r for a finite float32 y >= 120 in magnitude (bits `xi`; the sign is ignored):
    the mantissa times 96 bits of 4/pi chosen by the exponent, kept mod 2**64 as a 2.62 fixed-point
    number, n its rounded integer part (0..3), r = the rest * pi/2 2**-62. Returns (r, n as i64)."""
    b = em64.b
    i32, i64 = ir.IntType(32), ir.IntType(64)

    def c32(v: int) -> ir.Constant:
        return ir.Constant(i32, v)

    def c64(v: int) -> ir.Constant:
        return ir.Constant(i64, v)

    idx = b.and_(b.lshr(xi, c32(26)), c32(15))
    shift = b.and_(b.lshr(xi, c32(23)), c32(7))
    m = b.shl(b.or_(b.and_(xi, c32(0xFFFFFF)), c32(0x800000)), shift)
    words = _inv_pio4_words()
    name = "justjax_glibc_inv_pio4"
    w0 = _int_table(em64, name, words, idx)
    w4 = _int_table(em64, name, words, b.add(idx, c32(4)))
    w8 = _int_table(em64, name, words, b.add(idx, c32(8)))
    m64 = b.zext(m, i64)
    top = b.zext(b.mul(m, w0), i64)  # only its low 32 bits matter (the rest are multiples of 4)
    mid = b.mul(m64, b.zext(w4, i64))
    low = b.mul(m64, b.zext(w8, i64))
    res = b.add(b.or_(b.lshr(low, c64(32)), b.shl(top, c64(32))), mid)
    n = b.lshr(b.add(res, c64(1 << 61)), c64(62))
    res = b.sub(res, b.shl(n, c64(62)))
    return _V(em64, b.sitofp(res, em64.fty)) * _GLIBC_PI63, n


def _glibc_poly(em64: _Emitter, r: _V, n: ir.Value, kind: str) -> _V:
    """sin or cos of n pi/2 + r from glibc's polynomials (FMAs where its machine code has them)."""
    x2 = r * r
    x3 = x2 * r
    s = em64.fma(em64.fma(x2, _GLIBC_SIN[2], _GLIBC_SIN[1]), x2 * x3, em64.fma(x3, _GLIBC_SIN[0], r))
    x4 = x2 * x2
    c = em64.fma(em64.fma(x2, _GLIBC_COS[4], _GLIBC_COS[3]), x2 * x4,
                 em64.fma(x4, _GLIBC_COS[2], em64.fma(x2, _GLIBC_COS[1], _GLIBC_COS[0])))
    ity = n.type
    quadrant = em64.b.add(n, ir.Constant(ity, 1)) if kind == "cos" else n
    odd = em64.b.trunc(quadrant, ir.IntType(1))
    neg = em64.b.icmp_unsigned("!=", em64.b.and_(quadrant, ir.Constant(ity, 2)), ir.Constant(ity, 0))
    y = em64.select(odd, c, s)
    return em64.select(neg, -y, y)


def _glibc_fast(em: _Emitter, y: _V, kind: str) -> _V:
    """glibc's sinf/cosf for |y| < 120 (any value elsewhere)."""
    em64 = _Emitter(em.b, "f64")
    ay = em.call("llvm.fabs", y)
    # Arguments beyond the limit (taken by the rare path) are replaced: no out-of-range conversion.
    x = _V(em64, em.b.fpext(em.select(em.cmp("<", ay, _GLIBC_FAST_LIMIT), y, 0.0).v, em64.fty))
    i32 = ir.IntType(32)
    t = em.b.fptosi((x * _GLIBC_HPI_INV_2P24).v, i32)
    n = em.b.ashr(em.b.add(t, ir.Constant(i32, 0x800000)), ir.Constant(i32, 24))
    r = em64.fma(-_V(em64, em.b.sitofp(n, em64.fty)), _GLIBC_HPI, x)
    out = _V(em, em.b.fptrunc(_glibc_poly(em64, r, n, kind).v, em.fty))
    return em.select(em.cmp("<", ay, 2.0**-12), y if kind == "sin" else em.c(1.0), out)


def _glibc_large(em: _Emitter, y: _V, kind: str) -> _V:
    """glibc's sinf/cosf for |y| >= 120, infinities and nan: the rare path."""
    em64 = _Emitter(em.b, "f64")
    xi = em.bits(y)
    r, n = _glibc_reduce_large(em64, xi)
    out = _glibc_poly(em64, r, n, kind)
    if kind == "sin":
        out = em64.select(_signbit(em, y), -out, out)
    out = _V(em, em.b.fptrunc(out.v, em.fty))
    # inf and nan give nan (y - y is nan exactly for them).
    return em.select(em.isnan(y - y), y - y, out)




def _reduce_fast(em: _Emitter, x: _V) -> tuple[_V, ir.Value]:
    """x = k pi/2 + r for |x| < 2**50 (float64, Cody-Waite with three 33-bit parts of pi/2, as
    `_sincos_f64`); returns (r, k as an integer)."""
    p1, p2, p3 = _split(_PIO2, "f64", 3, hi_bits=33)
    k, q = em.round_fma(x, _round_to(1 / _PIO2, em.dtype))
    r = em.fma(k, -p1, x)
    r = em.fma(k, -p2, r)
    return em.fma(k, -p3, r), q


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
    """sin/cos/tan: a fast path for common magnitudes, the rare path above its bound (float32
    sin/cos: glibc's forms, from 120; float32 tan and float64: Cody-Waite below 2**50)."""
    if em.dtype == "f32" and kind != "tan":
        fast = _glibc_fast(em, x, kind)
        return rare.rare_path(em, x, fast, _GLIBC_FAST_LIMIT, kind, lambda e, v: _glibc_large(e, v, kind))
    if em.dtype == "f32":
        fast = _tan_f32(em, x)
    else:
        r, q = _reduce_fast(em, x)
        sin_r, cos_r = _sincos_poly64(em, r)
        fast = _by_quadrant(em, sin_r, cos_r, q, x, kind)
    return rare.rare_path(em, x, fast, 2.0**_PH_MIN_EXP, kind, lambda e, v: _trig_exact(e, v, kind))


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
    """atan2(y, x) with IEEE special cases (signed zeros, infinities): float32 as glibc's atan2f
    (`_atan2f_glibc`), float64 by `_atan_ratio` in float64."""
    if em.dtype == "f32":
        return _atan2f_glibc(em, y, x)
    return _atan2_64(em, y, x)


# XLA CPU computes float32 atan2 by calling libm's atan2f, so its results are glibc's (2.36, whose
# atan2f and atanf are fdlibm's float code, compiled without FMAs; XLA's bits agree with it).
# Its constants, as in glibc's sysdeps/ieee754/flt-32/s_atanf.c and e_atan2f.c:
# atan(i/2 + 1/2)-ish centres (atan(0.5), atan(1), atan(1.5), atan(inf)) in two parts,
_FDLIBM_ATANHI = tuple(float.fromhex(h) for h in ("0x1.dac670p-2", "0x1.921fb4p-1", "0x1.f730bcp-1",
                                                  "0x1.921fb4p+0"))
_FDLIBM_ATANLO = tuple(float.fromhex(h) for h in ("0x1.586ed2p-28", "0x1.4442d0p-25", "0x1.281f68p-25",
                                                  "0x1.4442d0p-24"))
# and atan(x) = x - x (z aT0 + z^2 aT1 + ... + z^11 aT10), z = x^2, summed as odd and even parts.
_FDLIBM_AT = tuple(float.fromhex(h) for h in (
    "0x1.555556p-2", "-0x1.99999ap-3", "0x1.24924ap-3", "-0x1.c71c70p-4", "0x1.745cdcp-4",
    "-0x1.3b0f2ap-4", "0x1.10d66ap-4", "-0x1.dde2d6p-5", "0x1.97b4b2p-5", "-0x1.2b4442p-5",
    "0x1.0ad3aep-6"))
_F32_PI = float.fromhex("0x1.921fb6p+1")  # pi rounded to float32
_PIO2_F32 = _F32_PI / 2
_PIO4_F32 = _F32_PI / 4
_3PIO4_F32 = float.fromhex("0x1.2d97c8p+1")  # 3 * _PIO4_F32 rounded to float32
_F32_PI_LO = float.fromhex("-0x1.777a5cp-24")  # pi - _F32_PI


def _atanf_abs(em: _Emitter, a: _V) -> _V:
    """glibc's atanf for a >= 0 (float32 operations, each rounded): a centre by range, the reduced
    argument by one division, the odd polynomial."""
    bits = em.bits(a)

    def below(limit: int) -> ir.Value:
        return em.b.icmp_signed("<", bits, em.ci(limit))

    # Ranges by bit pattern: [0, 7/16) no centre, [7/16, 11/16) 0.5, [11/16, 19/16) 1, [19/16, 39/16) 1.5.
    r0, r1, r2, r3 = below(0x3EE00000), below(0x3F300000), below(0x3F980000), below(0x401C0000)
    num = em.select(r3, a - 1.5, em.c(-1.0))
    den = em.select(r3, a * 1.5 + 1.0, a)
    num = em.select(r2, a - 1.0, num)
    den = em.select(r2, a + 1.0, den)
    num = em.select(r1, (a + a) - 1.0, num)
    den = em.select(r1, a + 2.0, den)
    xr = em.select(r0, a, num / den)
    z = xr * xr
    w = z * z
    at = _FDLIBM_AT

    def chain(coeffs: Sequence[float]) -> _V:
        acc = em.c(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = acc * w + c
        return acc

    s = z * chain(at[0::2]) + w * chain(at[1::2])
    p = s * xr

    def centre(values: Sequence[float]) -> _V:
        out = em.c(values[3])
        for cond, v in zip((r3, r2, r1), values[2::-1], strict=True):
            out = em.select(cond, v, out)
        return out

    y = centre(_FDLIBM_ATANHI) - ((p - centre(_FDLIBM_ATANLO)) - xr)
    y = em.select(r0, xr - p, y)
    # Below 2**-29 atan(a) rounds to a; from 2**25 (infinity included) to atan(inf); nan stays.
    y = em.select(below(0x31000000), a, y)
    y = em.select(below(0x4C000000), y, em.c(_FDLIBM_ATANHI[3]) + _FDLIBM_ATANLO[3])
    return em.select(em.isnan(a), a, y)


def _atan2f_glibc(em: _Emitter, y: _V, x: _V) -> _V:
    """glibc's atan2f: atanf(|y/x|) placed in the quadrant of (x, y) with pi in two parts; the
    special cases decided on the bit patterns, as glibc does."""
    b = em.b
    hx, hy = em.bits(x), em.bits(y)
    mask = em.ci(0x7FFFFFFF)
    ix, iy = b.and_(hx, mask), b.and_(hy, mask)
    x_neg, y_neg = b.icmp_signed("<", hx, em.ci(0)), b.icmp_signed("<", hy, em.ci(0))
    k = b.ashr(b.sub(iy, ix), em.ci(23))
    # glibc takes atanf(y) itself for x = 1: y / 1 is y, except where a flushed denormal y becomes 0.
    x_is_one = b.icmp_signed("==", hx, em.ci(0x3F800000))
    z = _atanf_abs(em, em.call("llvm.fabs", em.select(x_is_one, y, y / x)))
    z = em.select(b.and_(x_neg, b.icmp_signed("<", k, em.ci(-60))), 0.0, z)
    z = em.select(b.icmp_signed(">", k, em.ci(60)), em.c(_PIO2_F32) + 0.5 * _F32_PI_LO, z)
    lower = (z - _F32_PI_LO) - _F32_PI
    out = em.select(x_neg, em.select(y_neg, lower, _F32_PI - (z - _F32_PI_LO)), em.select(y_neg, -z, z))
    inf = em.ci(0x7F800000)
    half_pi = em.select(y_neg, -_PIO2_F32, _PIO2_F32)
    out = em.select(b.icmp_signed("==", iy, inf), half_pi, out)
    # x = +-inf: towards 0 or pi, or a multiple of pi/4 when y is infinite too.
    at_inf = em.select(x_neg, _F32_PI, 0.0)
    at_inf = em.select(b.icmp_signed("==", iy, inf), em.select(x_neg, _3PIO4_F32, _PIO4_F32), at_inf)
    out = em.select(b.icmp_signed("==", ix, inf), em.call("llvm.copysign", at_inf, y), out)
    out = em.select(b.icmp_signed("==", ix, em.ci(0)), half_pi, out)
    on_axis = em.select(x_neg, em.call("llvm.copysign", em.c(_F32_PI), y), y)
    out = em.select(b.icmp_signed("==", iy, em.ci(0)), on_axis, out)
    nan = b.or_(b.icmp_signed(">", ix, inf), b.icmp_signed(">", iy, inf))
    return em.select(nan, x + y, out)


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
