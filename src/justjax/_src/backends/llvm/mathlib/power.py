"""cbrt and pow for the LLVM math library (conventions in scalar.py), both in float64."""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext

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
    """pow(x, y) = exp(y log|x|) with log in double-double (256-entry table) and C99 special cases."""
    return _in_f64_2(em, x, y, _pow64)
