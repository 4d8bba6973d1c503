"""Vectorizable elementwise math functions emitted as LLVM IR (llvmlite), float32 and float64.

Every function is a scalar LLVM function marked `alwaysinline`, built only from arithmetic, integer bit
manipulation, `select`, loads from constant tables and the fma/rint/floor/fabs/copysign/sqrt/ldexp
intrinsics, so a loop calling it is inlined and vectorized by LLVM's loop vectorizer; no libm calls.
Arguments that need an expensive method (sin/cos/tan of huge arguments) go through a "rare path"
(`rare.py`): a call the vectorizer widens to a vector function that returns at once unless
one of its lanes needs that method.

Algorithms: range reduction (by ln 2 or pi/2 with multi-part constants), polynomials evaluated with
FMAs (Taylor or fitted minimax coefficients from `coeffs.py`), exponents assembled by integer
shifts or `llvm.ldexp` (one `vscalef` instruction on AVX-512 hosts). Special values (nan, +-inf, +-0,
overflow, underflow to subnormals) follow IEEE/NumPy; the runtime flushes subnormals as XLA CPU
does (`codegen/fp_environment.py`). For float32,
atan/asin/acos, sinh, cosh, cbrt, lgamma and digamma are evaluated in float64 and rounded once;
sin, cos, atan2 and pow follow glibc's float32 functions (what XLA CPU calls), erf XLA's own form,
and exp, log, log1p, expm1, tanh, logistic and rsqrt are XLA CPU's own forms, bit for bit
(`explog.py`, `rsqrt.py`), so that results are JAX's; this module keeps the more accurate exp,
expm1, log and log1p that other functions build on (float64 pow, cosh, sinh, lgamma) and that
float64 log is (libm's in XLA).
Measured errors and speeds: docs/mathlib.md. Functions live in this module (exp2, log2, sinh,
cosh), `explog.py`, `rsqrt.py`, `trig.py`, `erf.py`, `power.py` and `gamma.py`.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.mathlib.coeffs import COEFFS
from justjax._src.backends.llvm.runtime import host

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
        """p * 2**k with one rounding: overflow gives inf, underflow correctly rounded subnormals.

        `llvm.ldexp` (one `vscalef` instruction) on AVX-512 hosts; elsewhere two multiplications by
        2**(k/2), both normal numbers, so that only the last one rounds.
        """
        if use_scalef():
            k32 = k if self.dtype == "f32" else self.b.trunc(k, ir.IntType(32))
            return _V(self, self.b.call(self._ldexp(), [p.v, k32]))
        k1 = self.b.ashr(k, self.ci(1))
        k2 = self.b.sub(k, k1)
        return p * self.pow2(k1) * self.pow2(k2)

    def _ldexp(self) -> ir.Function:
        name = f"llvm.ldexp.{'f32' if self.dtype == 'f32' else 'f64'}.i32"
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(self.fty, [self.fty, ir.IntType(32)]), name=name)
        return fn

    def round_fma(self, a: _V, b: float) -> tuple[_V, ir.Value]:
        """k = a * b rounded to the nearest integer, as a float and as an integer (|k| < 2**22 for
        float32, 2**51 for float64).

        Adding 1.5 * 2**mbits leaves k in the low bits of the sum (an FMA, no rounding of a * b
        first): cheaper than rint + fptosi, and never poison (nan gives some integer).
        """
        magic = 1.5 * 2.0**self.mbits
        t = self.fma(a, b, magic)
        k = t - magic
        return k, self.b.sub(self.bits(t), self.bits(self.c(magic)))


# Whether `_Emitter.scale` uses `llvm.ldexp` (None: when the host has AVX-512F, where it is one
# instruction; elsewhere LLVM would call libm's ldexp). Tests set it to check both paths.
SCALEF: bool | None = None


@functools.lru_cache(maxsize=1)
def _host_has_avx512f() -> bool:
    import llvmlite.binding as llvm

    host.host_target_machine()
    return "+avx512f" in llvm.get_host_cpu_features().flatten().split(",")


def use_scalef() -> bool:
    """Whether 2**k scaling is emitted as `llvm.ldexp` (see `SCALEF`)."""
    return _host_has_avx512f() if SCALEF is None else SCALEF


def _taylor(coeffs: Sequence[Fraction | Decimal], dtype: str) -> list[float]:
    return [_round_to(c, dtype) for c in coeffs]


def _inv_fact(n: int) -> Fraction:
    return Fraction(1, math.factorial(n))


# ---------------------------------------------------------------- exp family

def _exp_reduce(em: _Emitter, x: _V) -> tuple[_V, ir.Value, _V]:
    """x = k ln2 + r with |r| <= ln2/2; returns (k as float, k as integer, r).

    ln 2 in two parts: x - k hi is exact in an FMA (the difference is representable), one rounding
    in the second step.
    """
    hi, lo = _split(_LN2, em.dtype, 2)
    k, ki = em.round_fma(x, _round_to(1 / _LN2, em.dtype))
    r = em.fma(k, -hi, x)
    return k, ki, em.fma(k, -lo, r)


@functools.lru_cache(maxsize=None)
def _exp_coeffs(dtype: str, base2: bool = False) -> tuple[float, ...]:
    """Coefficients of exp(r) (exp2(r) with `base2`) for |r| <= ln2/2 (1/2): Taylor's degree 13
    for float64, a fitted degree-6 polynomial with 1 + r ln2 fixed for float32 exp2 (float32 exp
    is XLA's form, `explog.py`)."""
    if dtype == "f64":
        scale = _LN2 if base2 else Decimal(1)
        return tuple(_taylor([scale**n / math.factorial(n) for n in range(14)], dtype))
    assert base2, "float32 exp is explog.exp"
    return (1.0, _round_to(math.log(2.0), dtype), *COEFFS["exp2_f32"])


def _exp_parts(em: _Emitter, x: _V, margin: float = 0.0) -> tuple[_V, ir.Value]:
    """float64 exp(x) = p * 2**k for x clamped to where exp over/underflows; returns (p, k). nan
    gives a nan p (the clamp keeps it) and some k.

    `margin` raises the upper clamp for callers that scale the result down afterwards.
    """
    xc = em.clamp(x, -746.0, 710.0 + margin)
    _, k, r = _exp_reduce(em, xc)
    return em.horner(r, _exp_coeffs(em.dtype)), k


def _exp(em: _Emitter, x: _V) -> _V:
    """float64 exp(x), more accurate than XLA's (for pow and cosh): reduction by ln 2, Taylor
    degree 13, p * 2**k by `scale` (correctly rounded subnormals); nan propagates."""
    p, k = _exp_parts(em, x)
    return em.scale(p, k)


def _exp2(em: _Emitter, x: _V) -> _V:
    """exp2(x): k = rint(x), r = x - k exact, polynomial for 2**r."""
    lim = (129.0, -151.0) if em.dtype == "f32" else (1025.0, -1076.0)
    xc = em.clamp(x, lim[1], lim[0])
    k, ki = em.round_fma(xc, 1.0)
    r = xc - k
    return em.scale(em.horner(r, _exp_coeffs(em.dtype, base2=True)), ki)


def _expm1_coeffs(dtype: str) -> tuple[float, ...]:
    """P with expm1(r) = r + r^2 P(r) for |r| <= ln2/2: Taylor degree 11 (float64 sinh's; float32
    expm1 is XLA's form, `explog.py`)."""
    assert dtype == "f64", "float32 expm1 is explog.expm1"
    return tuple(_taylor([_inv_fact(n) for n in range(2, 14)], dtype))


def _expm1_small(em: _Emitter, u: _V) -> tuple[_V, ir.Value]:
    """u = k ln2 + r; returns (q = expm1(r) = r + r^2 P(r), k). Then expm1(u) = fma(2^k, q, 2^k - 1),
    relatively accurate near 0 (k = 0 gives q itself)."""
    _, ki, r = _exp_reduce(em, u)
    q = em.fma(r * r, em.horner(r, _expm1_coeffs(em.dtype)), r)
    return q, ki


def _expm1(em: _Emitter, x: _V) -> _V:
    """float64 expm1(x), more accurate than XLA's (for sinh) = 2^k (1 + q) - 1 = fma(2^k, q,
    2^k - 1), q = expm1(r) by polynomial; exp for large x."""
    xc = em.clamp(x, -40.0, 710.0)
    q, ki = _expm1_small(em, xc)
    big = em.b.icmp_signed(">", ki, em.ci(100))
    # Clamp the exponent of the small path so 2**k is a normal number when the big path is selected.
    ks = em.b.select(big, em.ci(0), ki)
    t = em.pow2(ks)
    y_small = em.fma(t, q, t - 1.0)
    y_big = em.scale(q + 1.0, ki)
    y = _V(em, em.b.select(big, y_big.v, y_small.v))
    # -0 stays -0; nan propagates (the clamp keeps it).
    return em.select(em.cmp("==", x, 0.0), x, y)


# ---------------------------------------------------------------- log family

def _log_coeffs(dtype: str) -> tuple[float, ...]:
    """R(z)/z for R(s^2) = (2 atanh(s) - 2s)/s, |s| <= (sqrt(2)-1)/(sqrt(2)+1): fitted with 3 terms
    for float32 (error 0.02 ULP), Taylor's 11 (2/(2n+1)) for float64."""
    if dtype == "f64":
        return tuple(_taylor([Fraction(2, 2 * n + 1) for n in range(1, 12)], dtype))
    return COEFFS["log_f32"]


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
    # Offsetting the bits by those of sqrt(1/2) before taking the exponent puts m in
    # [sqrt(1/2), sqrt(2)) directly: k = (ix - off) >> mbits, m has the bits ix - (k << mbits).
    off = int(np.array(math.sqrt(0.5), np.float32 if em.dtype == "f32" else np.float64)
              .view(np.int32 if em.dtype == "f32" else np.int64))
    k = em.b.ashr(em.b.sub(ix, em.ci(off)), em.ci(em.mbits))
    m = em.from_bits(em.b.sub(ix, em.b.shl(k, em.ci(em.mbits))))
    k = em.b.add(k, kadj)
    f = m - 1.0
    s = f / (f + 2.0)
    z = s * s
    big_r = z * em.horner(z, _log_coeffs(em.dtype))
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


def _log_positive(em: _Emitter, x: _V, subnormals: bool = True) -> _V:
    """log(x) for finite x > 0 (normal x only without `subnormals`); no special values."""
    k, f, hfsq, tail = _log_parts(em, x, subnormals)
    hi, lo = _ln2_parts(em)
    return k * hi + (((em.fma(k, lo, tail)) - hfsq) + f)


def _log(em: _Emitter, x: _V) -> _V:
    """log(x): exponent from bits, log(m) by the atanh series in s = f/(2+f) (fdlibm scheme)."""
    return _log_specials(em, x, _log_positive(em, x), 0.0)


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



# ---------------------------------------------------------------- hyperbolic / logistic

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


# ---------------------------------------------------------------- shared helpers

def _in_f64(em: _Emitter, x: _V, body: Callable[[_Emitter, _V], _V]) -> _V:
    """Evaluates `body` in float64 (widening float32 input, rounding the result once)."""
    if em.dtype == "f64":
        return body(em, x)
    em64 = _Emitter(em.b, "f64")
    y = body(em64, _V(em64, em.b.fpext(x.v, em64.fty)))
    return _V(em, em.b.fptrunc(y.v, em.fty))


def _in_f64_2(em: _Emitter, y: _V, x: _V, body: Callable[[_Emitter, _V, _V], _V]) -> _V:
    """Two-argument `_in_f64`."""
    if em.dtype == "f64":
        return body(em, y, x)
    em64 = _Emitter(em.b, "f64")
    out = body(em64, _V(em64, em.b.fpext(y.v, em64.fty)), _V(em64, em.b.fpext(x.v, em64.fty)))
    return _V(em, em.b.fptrunc(out.v, em.fty))


def _signbit(em: _Emitter, x: _V) -> ir.Value:
    return em.b.icmp_signed("<", em.bits(x), em.ci(0))


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


_PI = Decimal("3.141592653589793238462643383279502884197169399375105820974944592307816406286")


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


# ---------------------------------------------------------------- registry

def _registry() -> dict[str, Callable[..., _V]]:
    # The other mathlib modules build on this one (imported here, not at the top).
    from justjax._src.backends.llvm.mathlib import erf, explog, gamma, power, rsqrt, trig
    return {
        "exp": explog.exp, "exp2": _exp2, "expm1": explog.expm1, "log": explog.log,
        "log1p": explog.log1p, "log2": _log2,
        "sin": trig.sin, "cos": trig.cos, "tan": trig.tan,
        "tanh": explog.tanh, "logistic": explog.logistic, "rsqrt": rsqrt.rsqrt,
        "erf": erf.erf, "erf_inv": erf.erf_inv,
        "atan": trig.atan, "atan2": trig.atan2, "asin": trig.asin,
        "acos": trig.acos, "sinh": _sinh, "cosh": _cosh, "cbrt": power.cbrt,
        "pow": power.pow_, **gamma.FUNCTIONS,
    }


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
