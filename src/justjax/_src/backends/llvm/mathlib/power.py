"""cbrt and pow for the LLVM math library (conventions in scalar.py).

cbrt and float64 pow are evaluated in float64 by justjax's own forms; float32 pow is glibc's powf
(`_powf_glibc`), whose bits XLA CPU gives.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext

from llvmlite import ir

from justjax._src.backends.llvm.mathlib.scalar import (_LN2, _Emitter, _exp, _in_f64, _in_f64_2,
                                                       _signbit, _split, _table_load, _two_sum, _V)

__all__ = ["cbrt", "pow_"]


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


def cbrt(em: _Emitter, x: _V) -> _V:
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


def pow_(em: _Emitter, x: _V, y: _V) -> _V:
    """pow(x, y) with C99's special cases: float32 as glibc's powf (`_powf_glibc`); float64 as
    exp(y log|x|) with log in double-double (256-entry table)."""
    if em.dtype == "f32":
        return _powf_glibc(em, x, y)
    return _in_f64_2(em, x, y, _pow64)


# ---------------------------------------------------------------- float32 pow as glibc's

# XLA CPU computes float32 pow by calling libm's powf, so its results are glibc's (2.36, its FMA
# build on x86-64; XLA's bits agree with it on every input). Its method, from glibc's
# sysdeps/ieee754/flt-32/e_powf.c: in float64, log2|x| = k + log2(c) + log1p(z/c - 1)/ln2 with
# z/c - 1 by one FMA (16 centres c chosen by z's leading bits), times y, then 2**t by
# 2**(k/32) (a table) times a cubic in the rest, with the FMAs of its machine code.
# Its tables and polynomials (e_powf_log2_data.c: 1/c and log2(c) per centre, and log1p(r)/ln2 =
# A0 r^5 + ... + A4 r; e_exp2f_data.c: 2**r = 1 + C2 r + C1 r^2 + C0 r^3), read as facts:
_POWF_INVC = tuple(float.fromhex(h) for h in (
    "0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0", "0x1.3c995b0b80385p+0",
    "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0", "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0",
    "0x1.0953f419900a7p+0", "0x1p+0", "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1",
    "0x1.b2036576afce6p-1", "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1"))
_POWF_LOGC = tuple(float.fromhex(h) for h in (
    "-0x1.efec65b963019p-2", "-0x1.b0b6832d4fca4p-2", "-0x1.7418b0a1fb77bp-2", "-0x1.39de91a6dcf7bp-2",
    "-0x1.01d9bf3f2b631p-2", "-0x1.97c1d1b3b7afp-3", "-0x1.2f9e393af3c9fp-3", "-0x1.960cbbf788d5cp-4",
    "-0x1.a6f9db6475fcep-5", "0x0p+0", "0x1.338ca9f24f53dp-4", "0x1.476a9543891bap-3",
    "0x1.e840b4ac4e4d2p-3", "0x1.40645f0c6651cp-2", "0x1.88e9c2c1b9ff8p-2", "0x1.ce0a44eb17bccp-2"))
_POWF_A = tuple(float.fromhex(h) for h in (
    "0x1.27616c9496e0bp-2", "-0x1.71969a075c67ap-2", "0x1.ec70a6ca7baddp-2", "-0x1.7154748bef6c8p-1",
    "0x1.71547652ab82bp0"))
_EXP2F_C = tuple(float.fromhex(h) for h in ("0x1.c6af84b912394p-5", "0x1.ebfce50fac4f3p-3",
                                            "0x1.62e42ff0c52d6p-1"))
_POWF_OFF = 0x3F330000  # z = x 2**-k lies in [_POWF_OFF, 2 _POWF_OFF) as bits
_EXP2F_SHIFT = 1.5 * 2.0**47  # adding it leaves round(32 t) in the low bits
_POWF_OVER = float.fromhex("0x1.fffffffd1d571p+6")  # y log2|x| beyond which the result is inf


@functools.lru_cache(maxsize=None)
def _exp2_32nds() -> tuple[float, ...]:
    """2**(i/32), i < 32, correctly rounded (the values of glibc's table)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return tuple(float(Decimal(2) ** (Decimal(i) / 32)) for i in range(32))


def _checkint(em: _Emitter, iy: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(y is an integer, y is an odd integer) for the bits `iy` of a finite nonzero float32."""
    b = em.b
    e = b.and_(b.lshr(iy, em.ci(23)), em.ci(0xFF))
    # Bits below the units place: those under 2**(0x96 - e) (none from e = 0x96 on).
    shift = b.sub(em.ci(0x96), e)
    shift = b.select(b.icmp_signed("<", shift, em.ci(0)), em.ci(0), b.select(
        b.icmp_signed(">", shift, em.ci(24)), em.ci(24), shift))
    unit = b.shl(em.ci(1), shift)
    frac = b.and_(iy, b.sub(unit, em.ci(1)))
    big_enough = b.icmp_signed(">=", e, em.ci(0x7F))
    integer = b.and_(big_enough, b.icmp_signed("==", frac, em.ci(0)))
    odd_bit = b.icmp_signed("!=", b.and_(iy, unit), em.ci(0))
    odd = b.and_(integer, b.and_(odd_bit, b.icmp_signed("<=", e, em.ci(0x96))))
    return integer, odd


def _powf_log2(em64: _Emitter, ix: ir.Value) -> _V:
    """log2 of the positive float32 with bits `ix` (a subnormal's bits pre-normalized, with a
    negative exponent), in float64."""
    b = em64.b
    i32 = ix.type
    tmp = b.sub(ix, ir.Constant(i32, _POWF_OFF))
    i = b.and_(b.lshr(tmp, ir.Constant(i32, 19)), ir.Constant(i32, 15))
    top = b.and_(tmp, ir.Constant(i32, 0xFF800000 - 2**32))
    z = _V(em64, b.fpext(b.bitcast(b.sub(ix, top), ir.FloatType()), em64.fty))
    k = _V(em64, b.sitofp(b.ashr(top, ir.Constant(i32, 23)), em64.fty))
    r = em64.fma(z, _table_load(em64, "justjax_powf_invc", _POWF_INVC, i), -1.0)
    y0 = _table_load(em64, "justjax_powf_logc", _POWF_LOGC, i) + k
    a = _POWF_A
    r2 = r * r
    q = em64.fma(r2, em64.fma(r, a[2], a[3]), em64.fma(r, a[4], y0))
    return em64.fma(em64.fma(r, a[0], a[1]), r2 * r2, q)


def _powf_exp2(em64: _Emitter, t: _V, negative: ir.Value) -> _V:
    """2**t (negated where `negative`) for |t| < 150 in float64: 2**(k/32) from the table (its
    exponent and sign added as integers) times a cubic in t - k/32."""
    b = em64.b
    i64 = ir.IntType(64)
    kd = t + _EXP2F_SHIFT
    ki = em64.bits(kd)
    r = t - (kd - _EXP2F_SHIFT)
    i = b.and_(ki, ir.Constant(i64, 31))
    # 2**(k/32) = 2**(i/32) * 2**((k - i)/32), (k - i)/32 added to the exponent field; the sign
    # bit as glibc sets it, by adding 2**16 to k before the shift by 47.
    whole = b.add(b.sub(ki, i), b.select(negative, ir.Constant(i64, 1 << 16), ir.Constant(i64, 0)))
    s_bits = b.add(em64.bits(_table_load(em64, "justjax_exp2_32nds", _exp2_32nds(), i)),
                   b.shl(whole, ir.Constant(i64, 47)))
    c = _EXP2F_C
    y = em64.fma(em64.fma(r, c[0], c[1]), r * r, em64.fma(r, c[2], 1.0))
    return y * em64.from_bits(s_bits)


def _powf_glibc(em: _Emitter, x: _V, y: _V) -> _V:
    """glibc's powf: log2|x| and 2**(y log2|x|) in float64 (above), the special cases decided
    on the bit patterns as glibc decides them."""
    b = em.b
    em64 = _Emitter(b, "f64")
    ix, iy = em.bits(x), em.bits(y)

    def u_ge(a: ir.Value, c: int) -> ir.Value:
        return b.icmp_unsigned(">=", a, em.ci(c if c < 2**31 else c - 2**32))

    def zeroinfnan(i: ir.Value) -> ir.Value:
        return u_ge(b.sub(b.shl(i, em.ci(1)), em.ci(1)), 2 * 0x7F800000 - 1)

    x_neg = b.icmp_signed("<", ix, em.ci(0))
    y_int, y_odd = _checkint(em, iy)
    negative = b.and_(x_neg, y_odd)
    ax = b.and_(ix, em.ci(0x7FFFFFFF))
    # A subnormal |x| is scaled by 2**23 (in float32, so flushed where denormals are) and its
    # exponent field lowered by 23.
    scaled = b.sub(b.and_(em.bits(em.from_bits(ax) * 2.0**23), em.ci(0x7FFFFFFF)), em.ci(23 << 23))
    ax = b.select(b.icmp_unsigned("<", ax, em.ci(0x00800000)), scaled, ax)
    t = _V(em64, b.fpext(y.v, em64.fty)) * _powf_log2(em64, ax)
    # Over- and underflow: inf, the smallest subnormal (2**-75 1.25 squared), 0.
    t_safe = em64.select(em64.cmp("<", em64.call("llvm.fabs", t), 150.0), t, 0.0)
    out = _V(em, b.fptrunc(_powf_exp2(em64, t_safe, negative).v, em.fty))
    sign = em.select(negative, -1.0, 1.0)
    tiny = em.c(float.fromhex("0x1.4p-75"))
    out = em.select(em64.cmp("<", t, -149.0), sign * tiny * tiny, out)
    out = em.select(em64.cmp("<=", t, -150.0), sign * 0.0, out)
    out = em.select(em64.cmp(">", t, _POWF_OVER), sign * math.inf, out)
    # A finite negative x to a non-integer power.
    out = em.select(b.and_(x_neg, b.not_(y_int)), math.nan, out)
    # x is +-0, +-inf or nan (y finite and nonzero): x^2 or 1/x^2, signed for odd y.
    x2 = x * x
    x2 = em.select(negative, -x2, x2)
    at_edge = em.select(b.icmp_signed("<", iy, em.ci(0)), 1.0 / x2, x2)
    out = em.select(zeroinfnan(ix), at_edge, out)
    # y is +-0, +-inf or nan: 1 for y = 0 or x = 1, nan, 1 for x = -1, then 0 or inf for y = +-inf.
    two_ix, two_iy = b.shl(ix, em.ci(1)), b.shl(iy, em.ci(1))
    below_one = b.icmp_unsigned("<", two_ix, em.ci(2 * 0x3F800000))
    y_edge = em.select(b.icmp_unsigned("==", below_one, b.icmp_signed(">=", iy, em.ci(0))), 0.0, y * y)
    y_edge = em.select(b.icmp_unsigned("==", two_ix, em.ci(2 * 0x3F800000)), 1.0, y_edge)
    either_nan = b.or_(u_ge(two_ix, 2 * 0x7F800000 + 1), u_ge(two_iy, 2 * 0x7F800000 + 1))
    y_edge = em.select(either_nan, x + y, y_edge)
    y_edge = em.select(b.icmp_unsigned("==", ix, em.ci(0x3F800000)), 1.0, y_edge)
    y_edge = em.select(b.icmp_unsigned("==", two_iy, em.ci(0)), 1.0, y_edge)
    return em.select(zeroinfnan(iy), y_edge, out)
