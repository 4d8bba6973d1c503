"""erf and erf_inv for the LLVM math library (conventions in scalar.py).

float32 erf: XLA CPU's rational approximation (`_erf32`), for its bits.
float64 erf (XLA calls libm's erf there): a table of 48 Taylor expansions of erfc (gathers).
erf_inv (both): XLA's algorithm (Giles's polynomials), bit for bit where log1p agrees, as the
reference backend (`numerics/polynomials.py`, whose coefficients it uses): random.normal is
sqrt(2) erf_inv(uniform) and must give JAX's numbers.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext

from llvmlite import ir

from justjax._src.backends.llvm.mathlib import explog
from justjax._src.backends.llvm.mathlib.scalar import _PI, _Emitter, _erf_at, _in_f64, _V
from justjax._src.numerics import polynomials

__all__ = ["erf", "erf_inv"]

_ERFC_WIDTH = 0.125
_ERFC_COUNT = 48
_ERFC_DEGREE = 17


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


def _erf64(em: _Emitter, x: _V) -> _V:
    a = em.call("llvm.fabs", x)
    big = em.call("llvm.copysign", 1.0 - _erfc_pos(em, a), x)
    y = em.select(em.cmp("<=", a, 0.5), _erf_small(em, x), big)
    return em.select(em.isnan(x), x, y)


def erf(em: _Emitter, x: _V) -> _V:
    """erf(x) (chlo.erf): float32 by XLA's rational form; float64 by the Maclaurin series for |x| <= 1/2,
    else 1 - erfc(|x|) from the Taylor table."""
    if em.dtype == "f32":
        return _erf32(em, x)
    return _in_f64(em, x, _erf64)


def erf_inv(em: _Emitter, x: _V) -> _V:
    """erf_inv(x) (chlo.erf_inv) as XLA computes it, so that samplers built on it (random.normal)
    give JAX's bits, as the reference backend: M. Giles's polynomials in w = -log1p(-x^2) (float32:
    w - 2.5 below w = 5, sqrt(w) - 3 above; float64: three pieces split at 6.25 and 16), Horner
    steps fused into FMAs, the coefficients chosen per element by selects; x * p; +-1 give +-inf."""
    x2 = x * x
    w = -explog.log1p(em, -x2)  # XLA's log1p (float64: glibc's log beyond |x| > 0.41)
    if em.dtype == "f32":
        small = em.cmp("<", w, 5.0)
        t = em.select(small, w - 2.5, em.call("llvm.sqrt", w) - 3.0)
        tables = [(polynomials._F32_W_GREATER_THAN_5, None), (polynomials._F32_W_LESS_THAN_5, small)]
    else:
        below_16 = em.cmp("<", w, 16.0)
        below_6_25 = em.cmp("<", w, 6.25)
        root = em.call("llvm.sqrt", w) - em.select(below_16, 3.25, 5.0)
        t = em.select(below_6_25, w - 3.125, root)
        tables = [(polynomials._F64_W_GREATER_THAN_16, None), (polynomials._F64_W_LESS_THAN_16, below_16),
                  (polynomials._F64_W_LESS_THAN_6_25, below_6_25)]
    p = _giles_horner(em, t, tables)
    y = p * x
    # x * inf: +-inf at +-1 (nan for |x| > 1 and nan comes from the log).
    return em.select(em.cmp("==", em.call("llvm.fabs", x), 1.0), x * math.inf, y)


def _giles_horner(em: _Emitter, t: _V, tables: list[tuple[tuple[float, ...], ir.Value | None]]) -> _V:
    """Horner's rule over polynomials of different lengths (highest power first), each chosen
    where its condition holds (later tables override earlier ones), as XLA evaluates them: a
    step of a longer polynomial leaves p unchanged where a shorter one is chosen."""
    def coefficient(i: int) -> _V:
        c = em.c(tables[0][0][i]) if i < len(tables[0][0]) else em.c(0.0)
        for values, cond in tables[1:]:
            if i < len(values):
                c = em.select(cond, values[i], c)
        return c
    p = coefficient(0)
    longest = max(len(values) for values, _ in tables)
    for i in range(1, longest):
        step = em.fma(p, t, coefficient(i))
        # The tables holding an i-th coefficient (the shortest first in `tables`).
        holders = [cond for values, cond in tables if i < len(values)]
        if len(holders) < len(tables):
            # Only the longer polynomials take this step.
            keep = holders[0]
            for cond in holders[1:]:
                keep = em.b.or_(keep, cond)
            step = em.select(keep, step, p)
        p = step
    return p


# ---------------------------------------------------------------- float32 erf

# XLA CPU's float32 erf (its `xla.erf` intrinsic, xla/codegen/intrinsic/erf.cc), read off the LLVM
# IR real JAX 0.10.2 generates: erf(x) = x P(x^2) / Q(x^2) in float32, Horner steps as FMAs, one
# IEEE division; +-1 from |x| >= _XLA_ERF_ONE. Coefficients highest power first.
_XLA_ERF_ONE = float.fromhex("0x1.ea8f96p+1")  # 3.8325069
_XLA_ERF_P = tuple(float.fromhex(h) for h in (
    "0x1.e05aa2p-13", "0x1.bebb44p-9", "0x1.a16dd6p-5", "0x1.7b4e80p-3", "0x1.20dd74p+0"))
_XLA_ERF_Q = tuple(float.fromhex(h) for h in (
    "-0x1.fa720cp-24", "0x1.8b11bep-16", "0x1.0ada50p-10", "0x1.cd0fa8p-7", "0x1.c69842p-4",
    "0x1.fd6894p-2", "0x1p+0"))


def _erf32(em: _Emitter, x: _V) -> _V:
    """XLA's float32 erf (above): nan propagates through the division, +-inf give +-1."""
    x2 = x * x
    num = x * em.horner(x2, _XLA_ERF_P[::-1])
    den = em.horner(x2, _XLA_ERF_Q[::-1])
    one = em.call("llvm.copysign", em.c(1.0), x)
    return em.select(em.cmp(">=", em.call("llvm.fabs", x), _XLA_ERF_ONE), one, num / den)
