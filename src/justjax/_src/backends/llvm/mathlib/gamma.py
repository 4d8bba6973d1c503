"""lgamma and digamma for the LLVM math library (see scalar.py for the conventions).

Both are evaluated in float64 (float32 inputs widened, rounded once):
- 0.4375 <= x < 8.0625: Taylor expansions around c = j/8 (|x - c| <= 1/16), one gathered coefficient
  row per element. The coefficients are polygamma values computed at import in 60-digit decimals
  (Hurwitz zeta by Euler-Maclaurin); within 1/8 of the zeros of lgamma (1, 2) and of digamma
  (1.4616...) the expansion around the zero is used, so results keep relative accuracy there.
- x < 0.4375: lgamma(x) = lgamma(x + 1) - log(x), digamma(x) = digamma(x + 1) - 1/x.
- x >= 8.0625: Stirling / the asymptotic series with Bernoulli numbers.
- x < 0: reflection (log|pi / (x sin(pi x))| - lgamma(-x); digamma(-x) + 1/(-x) - pi cot(pi x)),
  with sin/cos(pi r) by polynomials after an exact reduction of x.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Callable

from llvmlite import ir

from justjax._src.backends.llvm.mathlib import scalar
from justjax._src.backends.llvm.mathlib.scalar import _Emitter, _V

_DEGREE = 18
_FIRST_ROW = 4  # centre 4/8
_LAST_ROW = 64  # centre 8
_DIGAMMA_ROOT = Decimal("1.461632144968362341262659542325721325396246")


@functools.lru_cache(maxsize=None)
def _bernoulli(n: int) -> tuple[Fraction, ...]:
    """B_0 .. B_n (Akiyama-Tanigawa)."""
    a = [Fraction(0)] * (n + 1)
    out = []
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    return tuple(out)


def _dec(f: Fraction) -> Decimal:
    return Decimal(f.numerator) / Decimal(f.denominator)


def _hurwitz(s: int, c: Decimal, n: int = 40, terms: int = 25) -> Decimal:
    """zeta(s, c) for integer s >= 2 by Euler-Maclaurin (n direct terms, `terms` corrections)."""
    b = _bernoulli(2 * terms)
    total = sum(((c + k) ** -s for k in range(n)), Decimal(0))
    a = c + n
    total += a ** (1 - s) / (s - 1) + a ** -s / 2
    rising = Decimal(s)
    for j in range(1, terms + 1):
        total += _dec(b[2 * j]) / math.factorial(2 * j) * rising * a ** (-s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return total


def _digamma_dec(c: Decimal, n: int = 40, terms: int = 25) -> Decimal:
    b = _bernoulli(2 * terms)
    a = c + n
    total = a.ln() - 1 / (2 * a)
    for j in range(1, terms + 1):
        total -= _dec(b[2 * j]) / (2 * j) * a ** (-2 * j)
    return total - sum((1 / (c + k) for k in range(n)), Decimal(0))


def _lgamma_dec(c: Decimal, n: int = 40, terms: int = 25) -> Decimal:
    b = _bernoulli(2 * terms)
    a = c + n
    total = (a - Decimal("0.5")) * a.ln() - a + (2 * scalar._pi_decimal()).ln() / 2
    for j in range(1, terms + 1):
        total += _dec(b[2 * j]) / (2 * j * (2 * j - 1)) * a ** (1 - 2 * j)
    prod = Decimal(1)
    for k in range(n):
        prod *= c + k
    return total - prod.ln()


def _centres() -> list[Decimal]:
    return [Decimal(j) / 8 for j in range(_FIRST_ROW, _LAST_ROW + 1)]


@functools.lru_cache(maxsize=None)
def _lgamma_table() -> tuple[float, ...]:
    """Rows of Taylor coefficients of lgamma around j/8: lgamma(c), psi(c), (-1)^n zeta(n, c)/n."""
    out: list[float] = []
    with localcontext() as ctx:
        ctx.prec = 60
        for c in _centres():
            out += [float(_lgamma_dec(c)), float(_digamma_dec(c))]
            out += [float((-1) ** n * _hurwitz(n, c) / n) for n in range(2, _DEGREE + 1)]
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _digamma_table() -> tuple[float, ...]:
    """Rows of Taylor coefficients of digamma around j/8, then one row around its positive zero."""
    out: list[float] = []
    with localcontext() as ctx:
        ctx.prec = 60
        for c in _centres() + [Decimal(float(_DIGAMMA_ROOT))]:
            out.append(float(_digamma_dec(c)))
            out += [float((-1) ** (n + 1) * _hurwitz(n + 1, c)) for n in range(1, _DEGREE + 1)]
    return tuple(out)


def _taylor_rows(em: _Emitter, name: str, table: tuple[float, ...], row: ir.Value, t: _V) -> _V:
    """Evaluates the Taylor row `row` of `table` at offset t (Horner with FMAs, gathered coefficients)."""
    i64 = ir.IntType(64)
    base = em.b.mul(row, ir.Constant(i64, _DEGREE + 1))

    def coeff(n: int) -> _V:
        return scalar._table_load(em, name, table, em.b.add(base, ir.Constant(i64, n)))

    acc = coeff(_DEGREE)
    for n in range(_DEGREE - 1, -1, -1):
        acc = em.fma(acc, t, coeff(n))
    return acc


def _row_and_offset(em: _Emitter, a: _V) -> tuple[ir.Value, _V]:
    """Row of the centre nearest to a (clamped to the table) and a - centre."""
    j = em.call("llvm.rint", em.clamp(a * 8.0, float(_FIRST_ROW), float(_LAST_ROW)))
    j = em.select(em.isnan(j), float(_FIRST_ROW), j)
    row = em.b.fptosi((j - float(_FIRST_ROW)).v, ir.IntType(64))
    return row, a - j * 0.125


def _sincospi(em: _Emitter, x: _V) -> tuple[_V, _V]:
    """(sin(pi r), cos(pi r)) for r = x - rint(x) in [-1/2, 1/2] (exact); |sin(pi x)| = |sin(pi r)|."""
    r = x - em.call("llvm.rint", x)
    z = r * r
    with localcontext() as ctx:
        ctx.prec = 50
        pi = scalar._pi_decimal()
        s = [float((-1) ** n * pi ** (2 * n + 1) / math.factorial(2 * n + 1)) for n in range(13)]
        c = [float((-1) ** n * pi ** (2 * n) / math.factorial(2 * n)) for n in range(13)]
    return r * em.horner(z, s), em.horner(z, c)


_TABLE_LO = (_FIRST_ROW - 0.5) / 8  # 0.4375
_TABLE_HI = (_LAST_ROW + 0.5) / 8  # 8.0625


def _lgamma_pos(em: _Emitter, a: _V) -> _V:
    """lgamma(a) for a >= 0 (inf at 0)."""
    small = em.cmp("<", a, _TABLE_LO)
    u = em.select(small, a + 1.0, a)
    row, t = _row_and_offset(em, u)
    # Within 1/8 of the zeros 1 and 2 their own rows are used (relative accuracy, still convergent).
    for zero in (1.0, 2.0):
        near = em.cmp("<", em.call("llvm.fabs", u - zero), 0.125)
        row = em.b.select(near, ir.Constant(ir.IntType(64), int(zero * 8) - _FIRST_ROW), row)
        t = em.select(near, u - zero, t)
    mid = _taylor_rows(em, "justjax_lgamma_table", _lgamma_table(), row, t)
    mid = em.select(small, mid - scalar._log(em, a), mid)
    b = _bernoulli(20)
    w = 1.0 / a
    series = w * em.horner(w * w, [float(b[2 * j] / (2 * j * (2 * j - 1))) for j in range(1, 11)])
    half_log_2pi = float((2 * scalar._pi_decimal()).ln() / 2)
    big = em.fma(a - 0.5, scalar._log(em, a) - 1.0, half_log_2pi - 0.5 + series)
    y = em.select(em.cmp(">=", a, _TABLE_HI), big, mid)
    return em.select(em.cmp("==", a, 0.0), math.inf, y)


def _lgamma64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    pos = _lgamma_pos(em, a)
    sin_pi, _ = _sincospi(em, x)
    log_pi = float(scalar._pi_decimal().ln())
    # Gamma(x) Gamma(1 - x) = pi / sin(pi x) and Gamma(1 - x) = -x Gamma(-x).
    neg = log_pi - scalar._log(em, em.call("llvm.fabs", sin_pi) * a) - pos
    y = em.select(em.cmp("<", x, 0.0), neg, pos)
    y = em.select(em.cmp("==", a, math.inf), math.inf, y)
    return em.select(em.isnan(x), x, y)


def _lgamma(em: _Emitter, x: _V) -> _V:
    """lgamma(x) = log|Gamma(x)| (+inf at poles and at +-inf)."""
    return scalar._in_f64(em, x, _lgamma64)


def _digamma_pos(em: _Emitter, a: _V) -> _V:
    """digamma(a) for a > 0."""
    small = em.cmp("<", a, _TABLE_LO)
    u = em.select(small, a + 1.0, a)
    row, t = _row_and_offset(em, u)
    root = float(_DIGAMMA_ROOT)
    near_root = em.cmp("<", em.call("llvm.fabs", u - root), 0.125)
    row = em.b.select(near_root, ir.Constant(ir.IntType(64), _LAST_ROW - _FIRST_ROW + 1), row)
    t = em.select(near_root, u - root, t)
    mid = _taylor_rows(em, "justjax_digamma_table", _digamma_table(), row, t)
    mid = em.select(small, mid - 1.0 / a, mid)
    b = _bernoulli(20)
    w = 1.0 / a
    w2 = w * w
    series = w2 * em.horner(w2, [float(b[2 * j] / (2 * j)) for j in range(1, 11)])
    big = (scalar._log(em, a) - 0.5 * w) - series
    return em.select(em.cmp(">=", a, _TABLE_HI), big, mid)


def _digamma64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    pos = _digamma_pos(em, a)
    sin_pi, cos_pi = _sincospi(em, x)
    pi = float(scalar._pi_decimal())
    # digamma(1 - x) - digamma(x) = pi cot(pi x), digamma(1 + a) = digamma(a) + 1/a.
    neg = (pos + 1.0 / a) - pi * cos_pi / sin_pi
    is_int = em.cmp("==", em.call("llvm.rint", x), x)
    neg = em.select(is_int, math.nan, neg)
    y = em.select(em.cmp("<", x, 0.0), neg, pos)
    # JAX's conventions: nan at every pole (+-0 included) and at -inf, inf at inf.
    y = em.select(em.cmp("==", x, 0.0), math.nan, y)
    y = em.select(em.cmp("==", x, math.inf), math.inf, y)
    return em.select(em.isnan(x), x, y)


def _digamma(em: _Emitter, x: _V) -> _V:
    """digamma(x) (nan at the poles 0, -1, -2, ... and at -inf, as JAX)."""
    return scalar._in_f64(em, x, _digamma64)


FUNCTIONS: dict[str, Callable[..., _V]] = {"lgamma": _lgamma, "digamma": _digamma}
