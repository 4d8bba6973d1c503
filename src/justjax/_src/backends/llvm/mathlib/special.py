"""Elementwise special functions the math library (`scalar.py`) does not have, emitted as LLVM
IR in the same style: scalar `alwaysinline` functions without branches or libm calls, built on
the mathlib functions (called through `link`).

  hypot     sqrt(x^2 + y^2) with FMA-corrected rounding and scaling (no overflow/underflow)
  erfc      1 - erf(x) for |x| < 1/2 or x < 0; Taylor expansions of erfc around c = 1/2 + j/8
            on [1/2, 4) (coefficients from Hermite polynomials in 40-digit decimals); beyond,
            exp(-x^2) (x^2 split exactly) times a 24-term continued fraction of erfcx
  asinh, acosh, atanh   through log1p/log with the usual cancellation-free rearrangements
  bessel_i1e  exp(-|x|) I1(x): the power series of I1 (positive terms) up to |x| = 20,
            the asymptotic expansion of I1e beyond
  zeta      Hurwitz zeta by XLA's formula (the reference backend's): ten direct terms and an
            Euler-Maclaurin tail with twelve Bernoulli terms, in the operands' precision
  polygamma digamma for m = 0, else (-1)^(m+1) exp(lgamma(m+1)) zeta(m+1, x) in the
            operands' precision (XLA's decomposition), nan unless m is a non-negative
            integer, as the reference backend

float32 inputs are evaluated in float64 and rounded once (except zeta, which follows the
reference backend's float32 arithmetic). `Ctx`/`V` are the small float-arithmetic helpers the
complex functions (`complexmath.py`) use too.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from typing import Callable, Sequence

from llvmlite import ir

from justjax._src.backends.llvm.mathlib import link

__all__ = ["Ctx", "V", "define", "hypot", "NAMES"]

_Number = float | int


class V:
    """A float LLVM value with arithmetic operators (Python numbers become constants)."""

    __slots__ = ("ctx", "v")

    def __init__(self, ctx: "Ctx", v: ir.Value) -> None:
        self.ctx, self.v = ctx, v

    def _o(self, other: "V | _Number") -> ir.Value:
        return other.v if isinstance(other, V) else self.ctx.c(other).v

    def __add__(self, o: "V | _Number") -> "V":
        return V(self.ctx, self.ctx.b.fadd(self.v, self._o(o)))

    def __radd__(self, o: _Number) -> "V":
        return V(self.ctx, self.ctx.b.fadd(self._o(o), self.v))

    def __sub__(self, o: "V | _Number") -> "V":
        return V(self.ctx, self.ctx.b.fsub(self.v, self._o(o)))

    def __rsub__(self, o: _Number) -> "V":
        return V(self.ctx, self.ctx.b.fsub(self._o(o), self.v))

    def __mul__(self, o: "V | _Number") -> "V":
        return V(self.ctx, self.ctx.b.fmul(self.v, self._o(o)))

    def __rmul__(self, o: _Number) -> "V":
        return V(self.ctx, self.ctx.b.fmul(self._o(o), self.v))

    def __truediv__(self, o: "V | _Number") -> "V":
        return V(self.ctx, self.ctx.b.fdiv(self.v, self._o(o)))

    def __rtruediv__(self, o: _Number) -> "V":
        return V(self.ctx, self.ctx.b.fdiv(self._o(o), self.v))

    def __neg__(self) -> "V":
        return V(self.ctx, self.ctx.b.fneg(self.v))


class Ctx:
    """Float arithmetic of one precision ("f32" or "f64") at one builder position."""

    def __init__(self, builder: ir.IRBuilder, dtype: str) -> None:
        self.b, self.dtype = builder, dtype
        self.ty: ir.Type = ir.FloatType() if dtype == "f32" else ir.DoubleType()
        self.ity = ir.IntType(32 if dtype == "f32" else 64)
        self.module: ir.Module = builder.module

    def c(self, x: _Number) -> V:
        return V(self, ir.Constant(self.ty, float(x)))

    def v(self, x: "V | _Number") -> V:
        return x if isinstance(x, V) else self.c(x)

    def intrinsic(self, name: str, *args: "V | _Number") -> V:
        vals = [self.v(a).v for a in args]
        fn = self.module.declare_intrinsic(name, [self.ty],
                                           ir.FunctionType(self.ty, [self.ty] * len(vals)))
        return V(self, self.b.call(fn, vals))

    def fma(self, a: "V | _Number", b: "V | _Number", c: "V | _Number") -> V:
        return self.intrinsic("llvm.fma", a, b, c)

    def fmuladd(self, a: "V | _Number", b: "V | _Number", c: "V | _Number") -> V:
        """a * b + c, fused where the host has FMA (as NumPy's SIMD loops)."""
        return self.intrinsic("llvm.fmuladd", a, b, c)

    def sqrt(self, a: V) -> V:
        return self.intrinsic("llvm.sqrt", a)

    def fabs(self, a: V) -> V:
        return self.intrinsic("llvm.fabs", a)

    def floor(self, a: V) -> V:
        return self.intrinsic("llvm.floor", a)

    def copysign(self, a: "V | _Number", sign: V) -> V:
        return self.intrinsic("llvm.copysign", a, sign)

    def cmp(self, op: str, a: "V | _Number", b: "V | _Number") -> ir.Value:
        """Ordered comparison (false with a nan)."""
        return self.b.fcmp_ordered(op, self.v(a).v, self.v(b).v)

    def isnan(self, a: V) -> ir.Value:
        return self.b.fcmp_unordered("uno", a.v, a.v)

    def isinf(self, a: V) -> ir.Value:
        return self.cmp("==", self.fabs(a), math.inf)

    def select(self, cond: ir.Value, a: "V | _Number", b: "V | _Number") -> V:
        return V(self, self.b.select(cond, self.v(a).v, self.v(b).v))

    def and_(self, *conds: ir.Value) -> ir.Value:
        out = conds[0]
        for c in conds[1:]:
            out = self.b.and_(out, c)
        return out

    def or_(self, *conds: ir.Value) -> ir.Value:
        out = conds[0]
        for c in conds[1:]:
            out = self.b.or_(out, c)
        return out

    def math(self, name: str, *args: V) -> V:
        """Calls math function `name` (mathlib's or this module's) of this precision."""
        if name in _FUNCTIONS:
            fn = define(self.module, name, self.dtype)
        else:
            fn = link.function(self.module, name, self.dtype)
        return V(self, self.b.call(fn, [a.v for a in args]))

    def horner(self, x: V, coeffs: Sequence[float]) -> V:
        """coeffs[0] + coeffs[1] x + ... by Horner's rule with FMAs."""
        acc = self.c(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    def widen(self, x: V) -> V:
        """`x` as float64 (a float64 context's value)."""
        wide = Ctx(self.b, "f64")
        return V(wide, self.b.fpext(x.v, wide.ty)) if self.dtype == "f32" else V(wide, x.v)

    def narrow(self, x: V) -> V:
        """A float64 value rounded to this precision."""
        return V(self, self.b.fptrunc(x.v, self.ty)) if self.dtype == "f32" else V(self, x.v)

    def table(self, name: str, values: Sequence[float], index: ir.Value) -> V:
        """values[index] from an internal constant array of this precision."""
        g = self.module.globals.get(name)
        if g is None:
            arr = ir.ArrayType(self.ty, len(values))
            g = ir.GlobalVariable(self.module, arr, name=name)
            g.global_constant, g.linkage = True, "internal"
            g.initializer = ir.Constant(arr, [float(v) for v in values])
        zero = ir.Constant(ir.IntType(32), 0)
        return V(self, self.b.load(self.b.gep(g, [zero, index], inbounds=True)))


def hypot(ctx: Ctx, x: V, y: V) -> V:
    """sqrt(x^2 + y^2) without spurious overflow or underflow: float32 in float64 (exact
    squares, one rounding each for sum, sqrt and the final float32); float64 scaled by a power
    of two and corrected with FMAs (Borges' fused algorithm, within 1 ULP). inf if either
    part is infinite (even with a nan), else nan with a nan."""
    if ctx.dtype == "f32":
        w = Ctx(ctx.b, "f64")
        xw, yw = ctx.widen(x), ctx.widen(y)
        out = ctx.narrow(w.sqrt(w.fma(xw, xw, yw * yw)))
        return ctx.select(ctx.or_(ctx.isinf(x), ctx.isinf(y)), math.inf, out)
    ax, ay = ctx.fabs(x), ctx.fabs(y)
    a = ctx.select(ctx.cmp(">", ay, ax), ay, ax)
    b = ctx.select(ctx.cmp(">", ay, ax), ax, ay)
    scale = ctx.select(ctx.cmp(">", a, 2.0 ** 500), 2.0 ** -600,
                       ctx.select(ctx.cmp("<", a, 2.0 ** -500), 2.0 ** 600, 1.0))
    a, b = a * scale, b * scale
    h = ctx.sqrt(ctx.fma(a, a, b * b))
    h_sq, a_sq = h * h, a * a
    err = ctx.fma(-b, b, h_sq - a_sq) + ctx.fma(h, h, -h_sq) - ctx.fma(a, a, -a_sq)
    fixed = h - err / (h * 2.0)
    out = ctx.select(ctx.cmp("==", h, 0.0), h, fixed) / scale
    return ctx.select(ctx.or_(ctx.isinf(x), ctx.isinf(y)), math.inf, out)


# -- erfc ----------------------------------------------------------------------------------

_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640")
_ERFC_LO, _ERFC_HI, _ERFC_STEP, _ERFC_DEGREE = 0.5, 4.0, 0.125, 18
_ERFC_CF_TERMS = 24


@functools.lru_cache(maxsize=1)
def _erfc_taylor() -> tuple[float, ...]:
    """Taylor coefficients of erfc around c_j = 1/2 + (j + 1/2)/8, rows of _ERFC_DEGREE + 1:
    erfc^(n)(c) / n! = -2/sqrt(pi) (-1)^(n-1) H_(n-1)(c) exp(-c^2) / n! for n >= 1."""
    rows = int(round((_ERFC_HI - _ERFC_LO) / _ERFC_STEP))
    out: list[float] = []
    with localcontext() as ctx:
        ctx.prec = 60
        sqrt_pi = _PI.sqrt()
        for j in range(rows):
            c = Decimal(_ERFC_LO) + (Decimal(j) + Decimal("0.5")) * Decimal(_ERFC_STEP)
            # erf(c) by its Maclaurin series (c < 4: 60 digits are plenty).
            term, total, n = c, c, 0
            while abs(term) > Decimal(10) ** -55:
                n += 1
                term = -term * c * c / n
                total += term / (2 * n + 1)
            row = [1 - 2 / sqrt_pi * total]
            gauss = (-c * c).exp()
            h_prev, h = Decimal(0), Decimal(1)  # H_(-1) (unused), H_0
            for n in range(1, _ERFC_DEGREE + 1):
                row.append(-2 / sqrt_pi * (-1) ** (n - 1) * h * gauss / math.factorial(n))
                h_prev, h = h, 2 * c * h - 2 * (n - 1) * h_prev
            out.extend(float(v) for v in row)
    return tuple(out)


def _erfc64(ctx: Ctx, x: V) -> V:
    a = ctx.fabs(x)
    erf = ctx.math("erf", x)
    near = 1.0 - erf
    # [1/2, 4): the Taylor row of a's interval.
    row = ctx.b.fptosi(ctx.floor((ctx.select(ctx.cmp("<", a, _ERFC_HI), a, _ERFC_LO)
                                  - _ERFC_LO) * (1 / _ERFC_STEP)).v, ir.IntType(32))
    row = ctx.b.select(ctx.b.icmp_signed("<", row, ir.Constant(ir.IntType(32), 0)),
                       ir.Constant(ir.IntType(32), 0), row)
    centre = (V(ctx, ctx.b.sitofp(row, ctx.ty)) + 0.5) * _ERFC_STEP + _ERFC_LO
    t = a - centre
    table = _erfc_taylor()
    width = ir.Constant(ir.IntType(32), _ERFC_DEGREE + 1)
    base = ctx.b.mul(row, width)
    acc = ctx.table("justjax_erfc_taylor", table,
                    ctx.b.add(base, ir.Constant(ir.IntType(32), _ERFC_DEGREE)))
    for n in range(_ERFC_DEGREE - 1, -1, -1):
        coeff = ctx.table("justjax_erfc_taylor", table,
                          ctx.b.add(base, ir.Constant(ir.IntType(32), n)))
        acc = ctx.fma(acc, t, coeff)
    # [4, inf): exp(-a^2) erfcx(a), a^2 = hi + lo exactly, erfcx by its continued fraction.
    hi = a * a
    lo = ctx.fma(a, a, -hi)
    frac = ctx.v(a)
    for k in range(_ERFC_CF_TERMS, 0, -1):
        frac = a + (k / 2) / frac
    sqrt_pi = math.sqrt(math.pi)
    # exp(-hi) as exp(-hi/2)^2: its subnormal results are rounded once, at the end.
    half = ctx.math("exp", hi * -0.5)
    far = half * ((1.0 - lo) / (frac * sqrt_pi)) * half
    # Zero once a^2 exceeds -log of the smallest normal double, as the reference (Cephes).
    far = ctx.select(ctx.cmp(">", hi, 709.782712893384), 0.0, far)
    pos = ctx.select(ctx.cmp("<", a, _ERFC_HI), acc, far)
    out = ctx.select(ctx.cmp("<", a, _ERFC_LO), near, pos)
    # x <= -1/2: erfc(x) = 1 + erf(|x|), no cancellation.
    return ctx.select(ctx.cmp("<", x, 0.0), near, out)


# -- inverse hyperbolic functions ------------------------------------------------------------

_LN2 = math.log(2.0)


def _asinh64(ctx: Ctx, x: V) -> V:
    a = ctx.fabs(x)
    a2 = a * a
    small = ctx.math("log1p", a + a2 / (1.0 + ctx.sqrt(1.0 + a2)))
    mid = ctx.math("log", a * 2.0 + 1.0 / (ctx.sqrt(a2 + 1.0) + a))
    big = ctx.math("log", a) + _LN2
    r = ctx.select(ctx.cmp(">", a, 2.0 ** 28), big, ctx.select(ctx.cmp(">", a, 2.0), mid, small))
    return ctx.copysign(r, x)


def _acosh64(ctx: Ctx, x: V) -> V:
    t = x - 1.0
    small = ctx.math("log1p", t + ctx.sqrt(t * 2.0 + t * t))
    mid = ctx.math("log", x * 2.0 - 1.0 / (x + ctx.sqrt(x * x - 1.0)))
    big = ctx.math("log", x) + _LN2
    r = ctx.select(ctx.cmp(">", x, 2.0 ** 28), big, ctx.select(ctx.cmp(">", x, 2.0), mid, small))
    return ctx.select(ctx.cmp("<", x, 1.0), math.nan, r)


def _atanh64(ctx: Ctx, x: V) -> V:
    a = ctx.fabs(x)
    small = ctx.math("log1p", a * 2.0 + a * a * 2.0 / (1.0 - a)) * 0.5
    large = ctx.math("log1p", a * 2.0 / (1.0 - a)) * 0.5
    r = ctx.select(ctx.cmp("<", a, 0.5), small, large)
    r = ctx.select(ctx.cmp(">", a, 1.0), math.nan, r)
    return ctx.copysign(r, x)


# -- bessel_i1e ------------------------------------------------------------------------------

_I1E_SERIES_TERMS, _I1E_ASYMPTOTIC_TERMS, _I1E_SWITCH = 75, 25, 30.0


def _i1e64(ctx: Ctx, x: V) -> V:
    a = ctx.fabs(x)
    # I1(a) = (a/2) sum_k (a^2/4)^k / (k! (k+1)!), every term positive.
    series = ctx.horner(a * a * 0.25, [1.0 / (math.factorial(k) * math.factorial(k + 1))
                                        for k in range(_I1E_SERIES_TERMS)])
    near = a * 0.5 * series * ctx.math("exp", -a)
    # I1e(a) ~ 1/sqrt(2 pi a) sum_k (-1)^k prod_j (4 - (2j-1)^2) / (k! (8a)^k).
    coeffs, c = [], 1.0
    for k in range(_I1E_ASYMPTOTIC_TERMS):
        coeffs.append(c)
        c *= -(4.0 - (2 * k + 1) ** 2) / (k + 1)
    far = ctx.horner(1.0 / (a * 8.0), coeffs) / ctx.sqrt(a * (2 * math.pi))
    r = ctx.select(ctx.cmp("<", a, _I1E_SWITCH), near, far)
    r = ctx.select(ctx.cmp("==", a, math.inf), 0.0, r)
    # Odd, and the sign of zero kept (as the reference backend).
    return ctx.select(ctx.cmp("==", x, 0.0), x, ctx.copysign(r, x))


# -- zeta, polygamma -------------------------------------------------------------------------

# (2k)! / B_2k for k = 12 down to 1 (the reference backend's table: XLA's coefficients).
_ZETA_COEFFICIENTS = (
    -7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
    1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
    -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0)


def _zeta(ctx: Ctx, x: V, q: V) -> V:
    """zeta(x, q), step by step as the reference backend computes it (so float32 rounds as it
    does), with its conventions at the poles and outside the domain."""
    neg_x = -x
    a = ctx.v(q)
    head = ctx.math("pow", q, neg_x)
    for _ in range(9):
        a = a + 1.0
        head = head + ctx.math("pow", a, neg_x)
    a = a + 1.0
    neg_power = ctx.math("pow", a, neg_x)
    inverse_square = 1.0 / (a * a)
    horner = ctx.c(0.0)
    for i, coefficient in enumerate(_ZETA_COEFFICIENTS[:-1]):
        factor = (x + float(22 - 2 * i)) * (x + float(21 - 2 * i))
        horner = factor * inverse_square * (horner + 1 / coefficient)
    tail = neg_power * (0.5 + x / a * ((1 / _ZETA_COEFFICIENTS[-1]) + horner))
    result = head + neg_power * a / (x - 1.0) + tail
    x_is_int = ctx.cmp("==", x, ctx.floor(x))
    q_le_zero = ctx.cmp("<=", q, 0.0)
    result = ctx.select(ctx.cmp("<", x, 1.0), math.nan, result)
    result = ctx.select(ctx.and_(q_le_zero, ctx.b.not_(x_is_int)), math.nan, result)
    at_pole = ctx.and_(q_le_zero, ctx.cmp("==", q, ctx.floor(q)))
    half = x * 0.5
    # fmod(x, 2) == 0 in the reference: false for infinite x.
    x_is_even = ctx.and_(x_is_int, ctx.cmp("==", half, ctx.floor(half)),
                         ctx.cmp("<", ctx.fabs(x), math.inf))
    result = ctx.select(at_pole, ctx.select(x_is_even, math.inf, math.nan), result)
    return ctx.select(ctx.cmp("==", x, 1.0), math.inf, result)


def _polygamma(ctx: Ctx, m: V, x: V) -> V:
    """As XLA decomposes `chlo.polygamma` (and the reference backend computes it): digamma
    for m = 0, else (-1)^(m+1) exp(lgamma(m + 1)) zeta(m + 1, x) in the operands' precision,
    NaN unless m is a non-negative integer."""
    valid = ctx.and_(ctx.cmp(">=", m, 0.0), ctx.cmp("==", m, ctx.floor(m)))
    half = m * 0.5
    sign = ctx.select(ctx.cmp("==", half, ctx.floor(half)), -1.0, 1.0)
    m_plus_one = m + 1.0
    result = (sign * ctx.math("exp", ctx.math("lgamma", m_plus_one))) * _zeta(ctx, m_plus_one, x)
    result = ctx.select(ctx.cmp("==", m, 0.0), ctx.math("digamma", x), result)
    return ctx.select(valid, result, math.nan)


# -- definitions ---------------------------------------------------------------------------

def _in_f64(core: Callable[..., V]) -> Callable[..., V]:
    """`core` (written for float64) evaluated in float64 for float32 arguments."""
    def evaluate(ctx: Ctx, *args: V) -> V:
        if ctx.dtype == "f64":
            return core(ctx, *args)
        wide = Ctx(ctx.b, "f64")
        return ctx.narrow(core(wide, *[ctx.widen(a) for a in args]))
    return evaluate


_FUNCTIONS: dict[str, Callable[..., V]] = {
    "erfc": _in_f64(_erfc64), "asinh": _in_f64(_asinh64), "acosh": _in_f64(_acosh64),
    "atanh": _in_f64(_atanh64), "bessel_i1e": _in_f64(_i1e64), "zeta": _zeta,
    "polygamma": _polygamma, "hypot": hypot,
}
NAMES = tuple(_FUNCTIONS)
_ARITY = {"zeta": 2, "polygamma": 2, "hypot": 2}


def define(module: ir.Module, name: str, dtype: str) -> ir.Function:
    """Defines (once per module) the scalar function `name` (one of `NAMES`) for `dtype`
    ("f32"/"f64"): `justjax_extra_<name>_<dtype>`, internal and `alwaysinline`.

    It implements the CHLO op of that name (`chlo.erfc`, `chlo.asinh`, `chlo.acosh`,
    `chlo.atanh`, `chlo.bessel_i1e`, `chlo.zeta`, `chlo.polygamma`); `hypot` serves the
    complex functions.
    """
    fname = f"justjax_extra_{name}_{dtype}"
    existing = module.globals.get(fname)
    if existing is not None:
        return existing
    core = _FUNCTIONS[name]
    ty: ir.Type = ir.FloatType() if dtype == "f32" else ir.DoubleType()
    n = _ARITY.get(name, 1)
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * n), name=fname)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    ctx = Ctx(ir.IRBuilder(fn.append_basic_block("entry")), dtype)
    result = core(ctx, *[V(ctx, a) for a in fn.args])
    ctx.b.ret(result.v)
    return fn
