"""Vectorizable elementwise math functions emitted as LLVM IR (llvmlite), float32 and float64.

Every function is a scalar LLVM function marked `alwaysinline`, built only from arithmetic, integer bit
manipulation, `select`, loads from constant tables and the fma/rint/floor/fabs/copysign/sqrt intrinsics:
no branches and no libm calls, so a loop calling it is inlined and vectorized by LLVM's loop vectorizer.

Algorithms: range reduction (by ln 2 or pi/2 with multi-part constants), polynomials evaluated with FMAs,
exponents assembled by integer shifts. Special values (nan, +-inf, +-0, overflow, underflow to
subnormals) follow IEEE/NumPy; subnormals are never flushed (as XLA). For float32, the trigonometric
functions, erf, erf_inv, sinh, cosh, cbrt and pow are evaluated in float64 and rounded once.
Measured errors: docs/mathlib.md.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

_LN2 = Decimal("0.693147180559945309417232121458176568075500134360255254120680009493")
_PIO2 = Decimal("1.570796326794896619231321691639751442098584699687552910487472296153")

_Number = float | int


def _round_to(value: Decimal | Fraction | float, dtype: str) -> float:
    """Rounds a high-precision value to the nearest float of `dtype` (returned as a Python float)."""
    as_f64 = float(value)
    return float(np.float32(as_f64)) if dtype == "f32" else as_f64


def _split(value: Decimal, dtype: str, parts: int, hi_bits: int | None = None) -> list[float]:
    """Splits `value` into `parts` floats summing to it; all but the last keep `hi_bits` mantissa bits.

    With few bits, k * part is exact for small integers k (Cody-Waite reduction).
    """
    out: list[float] = []
    rest = value
    for i in range(parts):
        part = _round_to(rest, dtype)
        if hi_bits is not None and i < parts - 1:
            mant, exp = math.frexp(part)
            part = math.ldexp(math.floor(mant * 2.0**hi_bits), exp - hi_bits)
        out.append(part)
        rest = rest - Decimal(part)
    return out


class _V:
    """An LLVM float value with arithmetic operators (Python numbers become constants)."""

    def __init__(self, em: "_Emitter", v: ir.Value) -> None:
        self.em = em
        self.v = v

    def _o(self, other: "_V | _Number") -> ir.Value:
        return other.v if isinstance(other, _V) else self.em.c(other).v

    def __add__(self, o: "_V | _Number") -> "_V":
        return _V(self.em, self.em.b.fadd(self.v, self._o(o)))

    def __radd__(self, o: _Number) -> "_V":
        return _V(self.em, self.em.b.fadd(self._o(o), self.v))

    def __sub__(self, o: "_V | _Number") -> "_V":
        return _V(self.em, self.em.b.fsub(self.v, self._o(o)))

    def __rsub__(self, o: _Number) -> "_V":
        return _V(self.em, self.em.b.fsub(self._o(o), self.v))

    def __mul__(self, o: "_V | _Number") -> "_V":
        return _V(self.em, self.em.b.fmul(self.v, self._o(o)))

    def __rmul__(self, o: _Number) -> "_V":
        return _V(self.em, self.em.b.fmul(self._o(o), self.v))

    def __truediv__(self, o: "_V | _Number") -> "_V":
        return _V(self.em, self.em.b.fdiv(self.v, self._o(o)))

    def __rtruediv__(self, o: _Number) -> "_V":
        return _V(self.em, self.em.b.fdiv(self._o(o), self.v))

    def __neg__(self) -> "_V":
        return _V(self.em, self.em.b.fneg(self.v))


class _Emitter:
    """Emission helpers for one float dtype at one IRBuilder position."""

    def __init__(self, builder: ir.IRBuilder, dtype: str) -> None:
        self.b = builder
        self.dtype = dtype
        self.fty: ir.Type = ir.FloatType() if dtype == "f32" else ir.DoubleType()
        self.ity = ir.IntType(32 if dtype == "f32" else 64)
        self.mbits = 23 if dtype == "f32" else 52
        self.bias = 127 if dtype == "f32" else 1023
        self.module: ir.Module = builder.module

    def c(self, x: _Number) -> _V:
        """A float constant."""
        return _V(self, ir.Constant(self.fty, float(x)))

    def ci(self, x: int) -> ir.Constant:
        """An integer constant of the dtype's width."""
        return ir.Constant(self.ity, x)

    def _intrinsic(self, name: str, nargs: int) -> ir.Function:
        full = f"{name}.{'f32' if self.dtype == 'f32' else 'f64'}"
        fn = self.module.globals.get(full)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(self.fty, [self.fty] * nargs), name=full)
        return fn

    def call(self, name: str, *args: _V) -> _V:
        """Calls an LLVM intrinsic such as `llvm.fma` on float arguments."""
        return _V(self, self.b.call(self._intrinsic(name, len(args)), [a.v for a in args]))

    def fma(self, a: _V, b: "_V | _Number", c: "_V | _Number") -> _V:
        """a * b + c with one rounding (llvm.fma)."""
        return self.call("llvm.fma", a, b if isinstance(b, _V) else self.c(b),
                         c if isinstance(c, _V) else self.c(c))

    def horner(self, x: _V, coeffs: Sequence[float]) -> _V:
        """Evaluates coeffs[0] + coeffs[1] x + ... by Horner's rule with FMAs."""
        acc = self.c(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    def cmp(self, op: str, a: _V, b: "_V | _Number") -> ir.Value:
        """Ordered comparison (false when either side is nan)."""
        return self.b.fcmp_ordered(op, a.v, a._o(b))

    def isnan(self, a: _V) -> ir.Value:
        """True where `a` is nan."""
        return self.b.fcmp_unordered("uno", a.v, a.v)

    def select(self, cond: ir.Value, a: "_V | _Number", b: "_V | _Number") -> _V:
        """cond ? a : b (branch-free, vectorizable)."""
        av = a if isinstance(a, _V) else self.c(a)
        bv = b if isinstance(b, _V) else self.c(b)
        return _V(self, self.b.select(cond, av.v, bv.v))

    def clamp(self, x: _V, lo: float, hi: float) -> _V:
        """Clamps to [lo, hi]; nan stays nan (the comparisons are false)."""
        x = self.select(self.cmp(">", x, hi), hi, x)
        return self.select(self.cmp("<", x, lo), lo, x)

    def bits(self, x: _V) -> ir.Value:
        """The IEEE bit pattern of `x` as an integer."""
        return self.b.bitcast(x.v, self.ity)

    def from_bits(self, i: ir.Value) -> _V:
        """The float with bit pattern `i`."""
        return _V(self, self.b.bitcast(i, self.fty))

    def to_int(self, x: _V) -> ir.Value:
        """fptosi (x must be integral and in range, else poison)."""
        return self.b.fptosi(x.v, self.ity)

    def to_float(self, i: ir.Value) -> _V:
        """sitofp."""
        return _V(self, self.b.sitofp(i, self.fty))

    def pow2(self, k: ir.Value) -> _V:
        """2**k for an integer k in the normal exponent range, built from bits."""
        biased = self.b.add(k, self.ci(self.bias))
        return self.from_bits(self.b.shl(biased, self.ci(self.mbits)))

    def scale(self, p: _V, k: ir.Value) -> _V:
        """p * 2**k in two steps, so 2**(k/2) stays normal and the only rounding is the last (subnormal)."""
        k1 = self.b.ashr(k, self.ci(1))
        k2 = self.b.sub(k, k1)
        return p * self.pow2(k1) * self.pow2(k2)


def _taylor(coeffs: Sequence[Fraction | Decimal], dtype: str) -> list[float]:
    return [_round_to(c, dtype) for c in coeffs]


def _inv_fact(n: int) -> Fraction:
    return Fraction(1, math.factorial(n))


# ---------------------------------------------------------------- exp family

def _exp_reduce(em: _Emitter, x: _V) -> tuple[_V, _V]:
    """x = k ln2 + r with |r| <= ln2/2; returns (k as float, r). ln2 in two parts for an exact k*hi."""
    hi, lo = _split(_LN2, em.dtype, 2)
    k = em.call("llvm.rint", x * _round_to(1 / _LN2, em.dtype))
    r = em.fma(k, -hi, x)
    return k, em.fma(k, -lo, r)


def _exp_degree(dtype: str) -> int:
    return 7 if dtype == "f32" else 13


def _exp_parts(em: _Emitter, x: _V, margin: float = 0.0) -> tuple[_V, ir.Value]:
    """exp(x) = p * 2**k for x clamped to where exp over/underflows; returns (p, k). Poison for nan.

    `margin` raises the upper clamp for callers that scale the result down afterwards.
    """
    lim = (89.0 + margin, -104.0) if em.dtype == "f32" else (710.0 + margin, -746.0)
    xc = em.clamp(x, lim[1], lim[0])
    k, r = _exp_reduce(em, xc)
    p = em.horner(r, _taylor([_inv_fact(n) for n in range(_exp_degree(em.dtype) + 1)], em.dtype))
    return p, em.to_int(k)


def _exp(em: _Emitter, x: _V) -> _V:
    """exp(x): reduction by ln 2, Taylor polynomial (degree 7 / 13), exponent by integer shift."""
    p, k = _exp_parts(em, x)
    return em.select(em.isnan(x), x, em.scale(p, k))


def _exp2(em: _Emitter, x: _V) -> _V:
    """exp2(x): k = rint(x), r = x - k exact, polynomial in r with coefficients ln2^n/n!."""
    lim = (129.0, -151.0) if em.dtype == "f32" else (1025.0, -1076.0)
    xc = em.clamp(x, lim[1], lim[0])
    k = em.call("llvm.rint", xc)
    r = xc - k
    coeffs = [_LN2**n / math.factorial(n) for n in range(_exp_degree(em.dtype) + 1)]
    y = em.scale(em.horner(r, _taylor(coeffs, em.dtype)), em.to_int(k))
    return em.select(em.isnan(x), x, y)


def _expm1(em: _Emitter, x: _V) -> _V:
    """expm1(x) = 2^k (1 + q) - 1 = fma(2^k, q, 2^k - 1), q = expm1(r) by polynomial; exp for large x."""
    lo = -20.0 if em.dtype == "f32" else -40.0
    hi = 89.0 if em.dtype == "f32" else 710.0
    xc = em.clamp(x, lo, hi)
    k, r = _exp_reduce(em, xc)
    deg = 8 if em.dtype == "f32" else 13
    pcoef = _taylor([_inv_fact(n) for n in range(2, deg + 1)], em.dtype)
    q = em.fma(r * r, em.horner(r, pcoef), r)
    ki = em.to_int(k)
    big = em.b.icmp_signed(">", ki, em.ci(100))
    # Clamp the exponent of the small path so 2**k is a normal number when the big path is selected.
    ks = em.b.select(big, em.ci(0), ki)
    t = em.pow2(ks)
    y_small = em.fma(t, q, t - 1.0)
    y_big = em.scale(q + 1.0, ki)
    y = _V(em, em.b.select(big, y_big.v, y_small.v))
    y = em.select(em.cmp("==", x, 0.0), x, y)
    return em.select(em.isnan(x), x, y)


# ---------------------------------------------------------------- log family

def _log_parts(em: _Emitter, u: _V, subnormals: bool) -> tuple[_V, _V, _V, _V]:
    """Writes u = 2^k m, m in [sqrt(1/2), sqrt(2)); returns (k as float, f = m - 1, hfsq, s*(hfsq+R)).

    log(m) = log1p(f) = f - hfsq + s*(hfsq + R), s = f/(2+f), R = sum 2 s^(2n)/(2n+1) (n >= 1).
    """
    kadj: ir.Value = em.ci(0)
    if subnormals:
        is_sub = em.cmp("<", u, float(np.finfo(np.float32 if em.dtype == "f32" else np.float64).tiny))
        factor = em.mbits + 2
        u = em.select(is_sub, u * float(2**factor), u)
        kadj = em.b.select(is_sub, em.ci(-factor), em.ci(0))
    ix = em.bits(u)
    k = em.b.sub(em.b.lshr(ix, em.ci(em.mbits)), em.ci(em.bias))
    mant = em.b.and_(ix, em.ci((1 << em.mbits) - 1))
    m = em.from_bits(em.b.or_(mant, em.ci(em.bias << em.mbits)))
    big = em.cmp(">", m, math.sqrt(2.0))
    m = em.select(big, m * 0.5, m)
    k = em.b.add(em.b.add(k, em.b.zext(big, em.ity)), kadj)
    f = m - 1.0
    s = f / (f + 2.0)
    z = s * s
    nterms = 5 if em.dtype == "f32" else 11
    rcoef = _taylor([Fraction(2, 2 * n + 1) for n in range(1, nterms + 1)], em.dtype)
    big_r = z * em.horner(z, rcoef)
    hfsq = 0.5 * f * f
    return em.to_float(k), f, hfsq, s * (hfsq + big_r)


def _ln2_parts(em: _Emitter) -> tuple[float, float]:
    # ln2_hi has few bits so k * ln2_hi is exact for every exponent k.
    hi, lo = _split(_LN2, em.dtype, 2, hi_bits=12 if em.dtype == "f32" else 40)
    return hi, lo


def _log_specials(em: _Emitter, x: _V, y: _V, pole: float) -> _V:
    """nan below the pole, -inf at it, +inf at +inf, nan in nan out."""
    y = em.select(em.cmp("==", x, pole), -math.inf, y)
    y = em.select(em.cmp("<", x, pole), math.nan, y)
    y = em.select(em.cmp("==", x, math.inf), math.inf, y)
    return em.select(em.isnan(x), x, y)


def _log(em: _Emitter, x: _V) -> _V:
    """log(x): exponent from bits, log(m) by the atanh series in s = f/(2+f) (fdlibm scheme)."""
    k, f, hfsq, tail = _log_parts(em, x, subnormals=True)
    hi, lo = _ln2_parts(em)
    y = k * hi + (((em.fma(k, lo, tail)) - hfsq) + f)
    return _log_specials(em, x, y, 0.0)


def _log2(em: _Emitter, x: _V) -> _V:
    """log2(x) = k + log(m) * log2(e)."""
    k, f, hfsq, tail = _log_parts(em, x, subnormals=True)
    lnm = (tail - hfsq) + f
    y = em.fma(lnm, _round_to(1 / _LN2, em.dtype), k)
    return _log_specials(em, x, y, 0.0)


def _log1p(em: _Emitter, x: _V) -> _V:
    """log1p(x) = log(u) + c/u, u = 1 + x rounded, c the rounding error of u."""
    u = x + 1.0
    k, f, hfsq, tail = _log_parts(em, u, subnormals=False)
    c_big = 1.0 - (u - x)
    c_small = x - (u - 1.0)
    c = em.select(em.cmp(">=", k, 2.0), c_big, c_small) / u
    hi, lo = _ln2_parts(em)
    y = k * hi + (((em.fma(k, lo, c) + tail) - hfsq) + f)
    y = em.select(em.cmp("==", x, 0.0), x, y)
    return _log_specials(em, x, y, -1.0)


# ---------------------------------------------------------------- trigonometric

_PH_ROWS = 1000  # exponents f = row - 2 in [-2, 997]
_PH_MIN_EXP = 50  # |x| >= 2**50 takes the table-driven reduction


@functools.lru_cache(maxsize=None)
def _pi_decimal() -> Decimal:
    """pi to 420 digits (Machin's formula)."""
    def arctan_inv(n: int) -> Decimal:
        total, term, k, sign = Decimal(0), Decimal(1) / n, 0, 1
        while term > Decimal(10) ** -430:
            total += sign * term / (2 * k + 1)
            term /= n * n
            k += 1
            sign = -sign
        return total
    with localcontext() as ctx:
        ctx.prec = 440
        return 16 * arctan_inv(5) - 4 * arctan_inv(239)


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
        two_over_pi = 2 / _pi_decimal()
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
        g = 2 / _pi_decimal()
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
    z = r * r
    scoef = [float(Fraction((-1) ** n, math.factorial(2 * n + 1))) for n in range(1, 10)]
    sin_r = em.fma(r * z, em.horner(z, scoef), r)
    ccoef = [float(Fraction((-1) ** n, math.factorial(2 * n))) for n in range(2, 11)]
    hz = 0.5 * z
    w = 1.0 - hz
    cos_r = w + (((1.0 - w) - hz) + z * z * em.horner(z, ccoef))
    return sin_r, cos_r, q


def _trig(em: _Emitter, x: _V, kind: str) -> _V:
    """sin/cos/tan: evaluated in float64 (float32 inputs are widened, the result rounded once)."""
    em64 = _Emitter(em.b, "f64") if em.dtype == "f32" else em
    x64 = _V(em64, em.b.fpext(x.v, em64.fty)) if em.dtype == "f32" else x
    sin_r, cos_r, q = _sincos_f64(em64, x64, from_f32=em.dtype == "f32")
    i64 = ir.IntType(64)
    quadrant = em.b.add(q, ir.Constant(i64, 1)) if kind == "cos" else q
    swap = em.b.icmp_unsigned("!=", em.b.and_(quadrant, ir.Constant(i64, 1)), ir.Constant(i64, 0))
    if kind == "tan":
        # tan(r + k pi/2) = tan(r) for even k, -1/tan(r) for odd k.
        y = em64.select(swap, -cos_r / sin_r, sin_r / cos_r)
    else:
        neg = em.b.icmp_unsigned("!=", em.b.and_(quadrant, ir.Constant(i64, 2)), ir.Constant(i64, 0))
        y = em64.select(swap, cos_r, sin_r)
        y = em64.select(neg, -y, y)
    if kind != "cos":
        y = em64.select(em64.cmp("==", x64, 0.0), x64, y)
    # inf and nan give nan (x - x is nan exactly for them).
    y = em64.select(em64.isnan(x64 - x64), x64 - x64, y)
    if em.dtype == "f32":
        return _V(em, em.b.fptrunc(y.v, em.fty))
    return y


def _sin(em: _Emitter, x: _V) -> _V:
    return _trig(em, x, "sin")


def _cos(em: _Emitter, x: _V) -> _V:
    return _trig(em, x, "cos")


def _tan(em: _Emitter, x: _V) -> _V:
    return _trig(em, x, "tan")


# ---------------------------------------------------------------- hyperbolic / logistic

def _tanh(em: _Emitter, x: _V) -> _V:
    """tanh(|x|) = t/(t+2) (|x| <= log(3)/2) or 1 - 2/(t+2), t = expm1(2|x|); sign restored."""
    a = em.call("llvm.fabs", x)
    t = _expm1(em, a * 2.0)
    y_mid = t / (t + 2.0)
    y_big = 1.0 - 2.0 / (t + 2.0)
    y = em.select(em.cmp(">", a, 0.5493061443340549), y_big, y_mid)
    return em.call("llvm.copysign", y, x)


def _logistic(em: _Emitter, x: _V) -> _V:
    """1/(1+e) for x >= 0, e/(1+e) for x < 0, e = exp(-|x|) (no overflow, tiny results stay relative)."""
    e = _exp(em, -em.call("llvm.fabs", x))
    d = e + 1.0
    return em.select(em.cmp("<", x, 0.0), e / d, 1.0 / d)


# ---------------------------------------------------------------- erf family

_PI = Decimal("3.141592653589793238462643383279502884197169399375105820974944592307816406286")
_ERFC_WIDTH = 0.125
_ERFC_COUNT = 48
_ERFC_DEGREE = 17


def _erf_at(c: Decimal) -> Decimal:
    """erf(c) by its Maclaurin series (call with a high enough context precision)."""
    term, total, k = c, Decimal(0), 0
    while True:
        t = term / (2 * k + 1)
        total += t
        if abs(t) < Decimal("1e-90"):
            return 2 / _PI.sqrt() * total
        k += 1
        term = -term * c * c / k


@functools.lru_cache(maxsize=None)
def _erfc_table() -> tuple[float, ...]:
    """Taylor coefficients of erfc around the centres of [j w, (j+1) w), j < 48, row-major.

    erfc^(n)(c) = -2/sqrt(pi) (-1)^(n-1) H_(n-1)(c) exp(-c^2) with Hermite polynomials H; computed in
    110-digit decimal arithmetic, so the truncation (< 2e-18 relative) is the only approximation.
    """
    out: list[float] = []
    with localcontext() as ctx:
        ctx.prec = 110
        for j in range(_ERFC_COUNT):
            c = (Decimal(j) + Decimal("0.5")) * Decimal(_ERFC_WIDTH)
            gauss = 2 / _PI.sqrt() * (-c * c).exp()
            h_prev, h = Decimal(0), Decimal(1)
            out.append(float(1 - _erf_at(c)))
            for n in range(1, _ERFC_DEGREE + 1):
                out.append(float(-gauss * (-1) ** (n - 1) * h / math.factorial(n)))
                h_prev, h = h, 2 * c * h - 2 * (n - 1) * h_prev
    return tuple(out)


def _erfc_pos(em: _Emitter, a: _V) -> _V:
    """erfc(a) for 0 <= a (float64 only), relative accuracy; 0 beyond the table (a >= 6).

    A table of Taylor expansions: one gathered coefficient row per element (vectorizes as gathers).
    """
    name = "justjax_erfc_table"
    table = em.module.globals.get(name)
    values = _erfc_table()
    if table is None:
        arr = ir.ArrayType(ir.DoubleType(), len(values))
        table = ir.GlobalVariable(em.module, arr, name=name)
        table.global_constant = True
        table.linkage = "internal"
        table.initializer = ir.Constant(arr, list(values))
    last = float(_ERFC_COUNT - 1)
    jf = em.call("llvm.floor", em.clamp(a * (1 / _ERFC_WIDTH), 0.0, last))
    j = em.b.fptosi(em.select(em.isnan(jf), 0.0, jf).v, ir.IntType(64))
    t = a - (jf + 0.5) * _ERFC_WIDTH
    base = em.b.mul(j, ir.Constant(ir.IntType(64), _ERFC_DEGREE + 1))
    zero = ir.Constant(ir.IntType(32), 0)

    def coeff(n: int) -> _V:
        idx = em.b.add(base, ir.Constant(ir.IntType(64), n))
        return _V(em, em.b.load(em.b.gep(table, [zero, idx], inbounds=True)))

    acc = coeff(_ERFC_DEGREE)
    for n in range(_ERFC_DEGREE - 1, -1, -1):
        acc = em.fma(acc, t, coeff(n))
    return em.select(em.cmp(">=", a, _ERFC_COUNT * _ERFC_WIDTH), 0.0, acc)


def _erf_small(em: _Emitter, x: _V) -> _V:
    """erf(x) for |x| <= 0.5 (float64): odd Maclaurin series, relative accuracy."""
    coeffs = [float(2 / _PI.sqrt() * Decimal((-1) ** k) / (math.factorial(k) * (2 * k + 1)))
              for k in range(16)]
    return x * em.horner(x * x, coeffs)


def _in_f64(em: _Emitter, x: _V, body: Callable[[_Emitter, _V], _V]) -> _V:
    """Evaluates `body` in float64 (widening float32 input, rounding the result once)."""
    if em.dtype == "f64":
        return body(em, x)
    em64 = _Emitter(em.b, "f64")
    y = body(em64, _V(em64, em.b.fpext(x.v, em64.fty)))
    return _V(em, em.b.fptrunc(y.v, em.fty))


def _erf64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    big = em.call("llvm.copysign", 1.0 - _erfc_pos(em, a), x)
    y = em.select(em.cmp("<=", a, 0.5), _erf_small(em, x), big)
    return em.select(em.isnan(x), x, y)


def _erf(em: _Emitter, x: _V) -> _V:
    """erf(x): Maclaurin series for |x| <= 1/2, else 1 - erfc(|x|) from the Taylor table (in float64)."""
    return _in_f64(em, x, _erf64)


def _erf_inv64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    one_minus = 1.0 - a
    # Winitzki's closed form (relative error ~1e-3) as the starting point.
    lg = _log(em, one_minus * (a + 1.0))
    w = 2.0 / (math.pi * 0.147) + 0.5 * lg
    y = em.call("llvm.sqrt", em.call("llvm.sqrt", w * w - lg * (1 / 0.147)) - w)
    y = em.select(em.isnan(y), 0.0, y)
    for _ in range(3):
        # Halley steps on f(y) = erf(y) - a, residual from erfc when a > 1/2 (relative accuracy
        # in the tail, where 1 - a is exact).
        f_small = _erf_small(em, y) - a
        f_big = one_minus - _erfc_pos(em, y)
        f = em.select(em.cmp("<=", a, 0.5), f_small, f_big)
        deriv = _exp(em, -(y * y)) * float(2 / _PI.sqrt())
        y = y - f / em.fma(y, f, deriv)
    y = em.select(em.cmp("==", a, 1.0), math.inf, y)
    y = em.select(em.cmp(">", a, 1.0), math.nan, y)
    y = em.call("llvm.copysign", y, x)
    return em.select(em.isnan(x), x, y)


def _erf_inv(em: _Emitter, x: _V) -> _V:
    """erf_inv(x): Winitzki's approximation refined by three Halley steps using erf/erfc (float64)."""
    return _in_f64(em, x, _erf_inv64)


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


def _signbit(em: _Emitter, x: _V) -> ir.Value:
    return em.b.icmp_signed("<", em.bits(x), em.ci(0))


def _atan2_64(em: _Emitter, y: _V, x: _V) -> _V:
    theta = _atan_ratio(em, em.call("llvm.fabs", y), em.call("llvm.fabs", x))
    pi = _split(2 * _PIO2, "f64", 2)
    theta = em.select(_signbit(em, x), (pi[0] - theta) + pi[1], theta)
    theta = em.call("llvm.copysign", theta, y)
    return em.select(em.isnan(x), x, em.select(em.isnan(y), y, theta))


def _in_f64_2(em: _Emitter, y: _V, x: _V, body: Callable[[_Emitter, _V, _V], _V]) -> _V:
    """Two-argument `_in_f64`."""
    if em.dtype == "f64":
        return body(em, y, x)
    em64 = _Emitter(em.b, "f64")
    out = body(em64, _V(em64, em.b.fpext(y.v, em64.fty)), _V(em64, em.b.fpext(x.v, em64.fty)))
    return _V(em, em.b.fptrunc(out.v, em.fty))


def _atan2(em: _Emitter, y: _V, x: _V) -> _V:
    """atan2(y, x) with IEEE special cases (signed zeros, infinities), evaluated in float64."""
    return _in_f64_2(em, y, x, _atan2_64)


def _atan(em: _Emitter, x: _V) -> _V:
    """atan(x) = copysign(atan(|x| / 1), x) through the atan2 core (float64)."""
    def body(e: _Emitter, v: _V) -> _V:
        theta = e.call("llvm.copysign", _atan_ratio(e, e.call("llvm.fabs", v), e.c(1.0)), v)
        return e.select(e.isnan(v), v, theta)
    return _in_f64(em, x, body)


def _asin(em: _Emitter, x: _V) -> _V:
    """asin(x) = atan2(x, sqrt((1 - x)(1 + x))) (float64); nan outside [-1, 1]."""
    def body(e: _Emitter, v: _V) -> _V:
        return _atan2_64(e, v, e.call("llvm.sqrt", (1.0 - v) * (v + 1.0)))
    return _in_f64(em, x, body)


def _acos(em: _Emitter, x: _V) -> _V:
    """acos(x) = atan2(sqrt((1 - x)(1 + x)), x) (float64); nan outside [-1, 1]."""
    def body(e: _Emitter, v: _V) -> _V:
        return _atan2_64(e, e.call("llvm.sqrt", (1.0 - v) * (v + 1.0)), v)
    return _in_f64(em, x, body)


# ---------------------------------------------------------------- sinh, cosh, cbrt

def _half_exp(em: _Emitter, a: _V) -> _V:
    """exp(a) / 2 without intermediate overflow (the halving goes into the exponent)."""
    p, k = _exp_parts(em, a, margin=2.0)
    return em.scale(p, em.b.sub(k, em.ci(1)))


def _sinh64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    t = _expm1(em, a)
    # sinh(a) = (t + t / (t + 1)) / 2 with t = expm1(a): accurate near 0; exp(a)/2 once e^-a is negligible.
    small = 0.5 * (t + t / (t + 1.0))
    y = em.select(em.cmp(">", a, 40.0), _half_exp(em, a), small)
    y = em.call("llvm.copysign", y, x)
    return em.select(em.isnan(x), x, y)


def _cosh64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    e = _exp(em, a)
    small = 0.5 * e + 0.5 / e
    y = em.select(em.cmp(">", a, 40.0), _half_exp(em, a), small)
    return em.select(em.isnan(x), a, y)


def _sinh(em: _Emitter, x: _V) -> _V:
    """sinh(x) from expm1 (small |x|) or exp(|x|)/2 (large), in float64."""
    return _in_f64(em, x, _sinh64)


def _cosh(em: _Emitter, x: _V) -> _V:
    """cosh(x) = (e + 1/e)/2, e = exp(|x|), or exp(|x|)/2 for large |x|, in float64."""
    return _in_f64(em, x, _cosh64)


def _cbrt64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    # Subnormals are scaled by 2**54 (cube root 2**18) so the exponent trick sees a normal number,
    # huge numbers by 2**-54 so that t**3 cannot overflow.
    is_sub = em.cmp("<", a, 2.0**-1022)
    is_huge = em.cmp(">", a, 2.0**1000)
    a_n = em.select(is_sub, a * 2.0**54, em.select(is_huge, a * 2.0**-54, a))
    # Dividing the bit pattern by 3 divides the exponent by 3: a starting point within ~6%.
    bits = em.b.add(em.b.udiv(em.bits(a_n), em.ci(3)), em.ci(682 << 52))
    t = em.from_bits(bits)
    for _ in range(3):
        # Halley: t * (t^3 + 2a) / (2 t^3 + a) = t + t (a - t^3) / (2 t^3 + a), cubic convergence;
        # dividing first keeps every intermediate near a in magnitude.
        t3 = t * t * t
        t = em.fma(t, (a_n - t3) / (2.0 * t3 + a_n), t)
    # One Newton step with an FMA residual polishes the last bit.
    t2 = t * t
    t = t - em.fma(t2, t, -a_n) / (3.0 * t2)
    t = em.select(is_sub, t * 2.0**-18, em.select(is_huge, t * 2.0**18, t))
    special = em.b.or_(em.cmp("==", a, 0.0), em.b.fcmp_unordered("uno", a.v, a.v))
    special = em.b.or_(special, em.cmp("==", a, math.inf))
    return em.select(special, x, em.call("llvm.copysign", t, x))


def _cbrt(em: _Emitter, x: _V) -> _V:
    """cbrt(x): exponent/3 by an integer trick, 3 Halley steps and one Newton step (float64)."""
    return _in_f64(em, x, _cbrt64)


# ---------------------------------------------------------------- pow

_LOG_TABLE_BITS = 8


@functools.lru_cache(maxsize=None)
def _log_table() -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """For m in [1 + i/256, 1 + (i+1)/256): invc (a multiple of 1/512 near 1/centre) and
    -log(invc) as (hi, lo). With 9 fractional bits in invc, m * invc - 1 is exact in an FMA."""
    invc, hi, lo = [], [], []
    with localcontext() as ctx:
        ctx.prec = 60
        for i in range(1 << _LOG_TABLE_BITS):
            centre = 1 + (Decimal(i) + Decimal("0.5")) / (1 << _LOG_TABLE_BITS)
            inv = float(round(512 / centre)) / 512
            value = -Decimal(inv).ln()
            invc.append(inv)
            hi.append(float(value))
            lo.append(float(value - Decimal(float(value))))
    return tuple(invc), tuple(hi), tuple(lo)


def _table_load(em: _Emitter, name: str, values: Sequence[float], index: ir.Value) -> _V:
    """values[index] from an internal constant array (a gather when vectorized)."""
    table = em.module.globals.get(name)
    if table is None:
        arr = ir.ArrayType(em.fty, len(values))
        table = ir.GlobalVariable(em.module, arr, name=name)
        table.global_constant = True
        table.linkage = "internal"
        table.initializer = ir.Constant(arr, list(values))
    zero = ir.Constant(ir.IntType(32), 0)
    return _V(em, em.b.load(em.b.gep(table, [zero, index], inbounds=True)))


def _two_sum(a: _V, b: _V) -> tuple[_V, _V]:
    """s + e == a + b exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _log_dd(em: _Emitter, a: _V) -> tuple[_V, _V]:
    """log(a) for a > 0 (float64) as hi + lo with about 2**-68 relative error (table + short series)."""
    is_sub = em.cmp("<", a, 2.0**-1022)
    a = em.select(is_sub, a * 2.0**54, a)
    ix = em.bits(a)
    k = em.b.sub(em.b.lshr(ix, em.ci(52)), em.ci(1023))
    k = em.b.add(k, em.b.select(is_sub, em.ci(-54), em.ci(0)))
    m = em.from_bits(em.b.or_(em.b.and_(ix, em.ci((1 << 52) - 1)), em.ci(1023 << 52)))
    i = em.b.and_(em.b.lshr(ix, em.ci(52 - _LOG_TABLE_BITS)), em.ci((1 << _LOG_TABLE_BITS) - 1))
    invc, logc_hi, logc_lo = _log_table()
    r = em.fma(m, _table_load(em, "justjax_log_invc", invc, i), -1.0)
    kf = em.to_float(k)
    ln2_hi, ln2_lo = _split(_LN2, "f64", 2, hi_bits=40)
    half_r = r * -0.5
    q_hi = half_r * r
    q_lo = em.fma(half_r, r, -q_hi)
    tail = r * r * r * em.horner(r, [(-1) ** n / (n + 3) for n in range(7)])
    s1, e1 = _two_sum(kf * ln2_hi, _table_load(em, "justjax_log_logc_hi", logc_hi, i))
    s2, e2 = _two_sum(s1, r)
    s3, e3 = _two_sum(s2, q_hi)
    lo = (e1 + e2) + (e3 + em.fma(kf, ln2_lo, _table_load(em, "justjax_log_logc_lo", logc_lo, i)))
    lo = lo + (q_lo + tail)
    hi = s3 + lo
    return hi, lo - (hi - s3)


def _pow64(em: _Emitter, x: _V, y: _V) -> _V:
    ax = em.call("llvm.fabs", x)
    l_hi, l_lo = _log_dd(em, ax)
    l_hi = em.select(em.cmp("==", ax, 0.0), -math.inf, em.select(em.cmp("==", ax, math.inf), math.inf, l_hi))
    p_hi = y * l_hi
    p_lo = em.fma(y, l_hi, -p_hi) + y * l_lo
    # inf * log or log = +-inf makes the low part nan; it carries nothing then.
    finite = em.cmp("<", em.call("llvm.fabs", p_hi), math.inf)
    p_lo = em.select(finite, p_lo, 0.0)
    e = _exp(em, p_hi)
    # e * (1 + p_lo); an overflowed or vanished e stays as it is.
    z = em.select(em.cmp("<", e, math.inf), em.fma(e, p_lo, e), e)
    z = em.select(em.cmp("==", ax, 1.0), 1.0, z)
    y_int = em.b.and_(em.cmp("==", em.call("llvm.rint", y), y), em.cmp("<", em.call("llvm.fabs", y), math.inf))
    half = y * 0.5
    y_odd = em.b.and_(y_int, em.cmp("!=", em.call("llvm.floor", half), half))
    neg_x = _signbit(em, x)
    z = em.select(em.b.and_(neg_x, y_odd), -z, z)
    # A negative finite base to a non-integer finite power is nan.
    bad = em.b.and_(em.b.and_(em.cmp("<", x, 0.0), em.cmp(">", x, -math.inf)), em.b.not_(y_int))
    bad = em.b.and_(bad, em.cmp("<", em.call("llvm.fabs", y), math.inf))
    z = em.select(bad, math.nan, z)
    z = em.select(em.b.fcmp_unordered("uno", x.v, y.v), math.nan, z)
    z = em.select(em.cmp("==", x, 1.0), 1.0, z)
    return em.select(em.cmp("==", y, 0.0), 1.0, z)


def _pow(em: _Emitter, x: _V, y: _V) -> _V:
    """pow(x, y) = exp(y log|x|) with log in double-double (256-entry table) and C99 special cases."""
    return _in_f64_2(em, x, y, _pow64)


FUNCTIONS: dict[str, Callable[..., _V]] = {
    "exp": _exp,
    "exp2": _exp2,
    "expm1": _expm1,
    "log": _log,
    "log1p": _log1p,
    "log2": _log2,
    "sin": _sin,
    "cos": _cos,
    "tan": _tan,
    "tanh": _tanh,
    "logistic": _logistic,
    "erf": _erf,
    "erf_inv": _erf_inv,
    "atan": _atan,
    "atan2": _atan2,
    "asin": _asin,
    "acos": _acos,
    "sinh": _sinh,
    "cosh": _cosh,
    "cbrt": _cbrt,
    "pow": _pow,
}


def _registry() -> dict[str, Callable[..., _V]]:
    # lgamma/digamma live in mathlib_gamma, which builds on this module (imported here, not at the top).
    from justjax._src.backends.llvm import mathlib_gamma
    return {**FUNCTIONS, **mathlib_gamma.FUNCTIONS}


def names() -> list[str]:
    """Names of all math functions, in the order of the issue's list."""
    return list(_registry())


def arity(name: str) -> int:
    """Number of float arguments of math function `name`."""
    return _registry()[name].__code__.co_argcount - 1


def define(module: ir.Module, name: str, dtype: str) -> ir.Function:
    """Defines (once per module) the scalar math function `name` for `dtype`.

    Args:
      module: the llvmlite module to add the function to.
      name: one of `names()` (e.g. "exp").
      dtype: "f32" or "f64".

    Returns:
      The `ir.Function` `justjax_<name>_<dtype>` (internal, alwaysinline, nounwind), taking and
      returning `float`/`double`. It implements the StableHLO op of the same name
      (e.g. stablehlo.exponential, stablehlo.log_plus_one, stablehlo.logistic).
    """
    fname = f"justjax_{name}_{dtype}"
    existing = module.globals.get(fname)
    if existing is not None:
        return existing
    fty: ir.Type = ir.FloatType() if dtype == "f32" else ir.DoubleType()
    n = arity(name)
    fn = ir.Function(module, ir.FunctionType(fty, [fty] * n), name=fname)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    em = _Emitter(builder, dtype)
    with localcontext() as ctx:
        # Constants (split pi/2, ln 2, series coefficients) are derived in 80-digit decimals.
        ctx.prec = 80
        result = _registry()[name](em, *[_V(em, a) for a in fn.args])
    builder.ret(result.v)
    return fn
