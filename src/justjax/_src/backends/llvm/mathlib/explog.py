"""XLA CPU's own forms of exp, log, log1p, expm1, tanh and logistic, float32 and float64.

Real JAX on CPU computes these with polynomial and rational forms of its own (XLA's intrinsic
rewriter and elemental emitter), compiled by LLVM with FMA contraction allowed: a product
whose only use is an addition becomes one fused multiply-add. Users compare results with
values recorded from JAX, so the StableHLO ops use these forms, bit for bit: the same
constants, the same order of evaluation, the same FMAs (explicit `llvm.fma` here, where
LLVM contracts XLA's code; a product used twice is rounded on its own), the same clamps and
special-value selects. The constants are facts read from XLA's generated LLVM IR (dumped
with `--xla_dump_to`): Cephes' expf/logf/log1p coefficients, Eigen's float32 tanh rational,
XLA's float64 exp (a Cody-Waite reduction and a Pade form) and float64 tanh rational.

XLA's forms assume the runtime's denormal flushing (FTZ/DAZ): log of a subnormal is -inf
there because the subnormal compares equal to zero. They are not emulated here.

float64 log (and log1p beyond |x| < sqrt(2) - 1) is libm's in XLA: it uses the more accurate
fdlibm-style form of `scalar` instead, as do the other functions built on exp and log (pow,
lgamma, erf_inv, sinh).
"""
from __future__ import annotations

import math
import struct

from llvmlite import ir

from justjax._src.backends.llvm.mathlib.scalar import _Emitter, _log, _V

__all__ = ["exp", "log", "log1p", "expm1", "tanh", "logistic"]


def _f32(bits: int) -> float:
    """The float32 with IEEE bit pattern `bits` (as a Python float, exactly)."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _r32(value: float) -> float:
    """`value` rounded to float32 (XLA's IR prints these constants in decimal)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _f64(bits: int) -> float:
    """The float64 with IEEE bit pattern `bits`."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


# ------------------------------------------------------------- constants (XLA CPU's IR)

# float32 exp (Cephes expf): clamp, log2(e), ln 2 in two parts, degree-5 polynomial P with
# exp(r) = 1 + r + r^2 P(r) (highest degree first), 2^k for k clamped to [-127, 127].
_EXP32_LO, _EXP32_HI = _r32(-87.8), _r32(88.8)
_EXP32_LOG2E = _f32(0x3FB8AA3B)
_EXP32_C1, _EXP32_C2 = _f32(0x3F318000), _f32(0xB95E8083)
_EXP32_P = (_f32(0x39506967), _f32(0x3AB743CE), _f32(0x3C088908), _f32(0x3D2AA9C1),
            _f32(0x3E2AAAAA), 0.5)

# float32 log (Cephes logf as in Eigen): mantissa in [sqrt(1/2), sqrt(2)), three degree-2
# polynomials in x combined with x^3 (Estrin-like), ln 2 in the two parts of exp.
_LOG32_SQRTHF = _f32(0x3F3504F3)
_LOG32_P = ((_f32(0x3D9021BB), _f32(0xBDEBD1B8), _f32(0x3DEF251A)),
            (_f32(0xBDFE5D4F), _f32(0x3E11E9BF), _f32(0xBE2AAE50)),
            (_f32(0x3E4CCEAC), _f32(0xBE7FFFFC), _f32(0x3EAAAAAA)))
_FLT_MIN = _f32(0x00800000)

# log1p (Cephes): x - x^2/2 + x^3 N(x)/D(x) for |x| < sqrt(2) - 1, else log(1 + x).
_LOG1P_BOUND = {"f32": _f32(0x3ED413CD), "f64": _f64(0x3FDA827999FCEF32)}
_LOG1P_NUM = {
    "f32": (_r32(4.527e-05), _f32(0x3EFF40C5),
            _f32(0x40D284FA), _f32(0x41EF4B9C), _f32(0x4273CC76), _f32(0x426473AD),
            _f32(0x41A05101)),
    "f64": (_f64(0x3F07BC0962B395CA), _f64(0x3FDFE818A0FE1A83), _f64(0x401A509F46F4FA53),
            _f64(0x403DE9738B8CB9C9), _f64(0x404E798EB86C3351), _f64(0x404C8E7597479A10),
            _f64(0x40340A202D99830A)),
}
_LOG1P_DEN = {
    "f32": (1.0, _f32(0x417101AD), _f32(0x42A6185B), _f32(0x435DC32D), _f32(0x439A8CA3),
            _f32(0x43586D8A), _f32(0x42707982)),
    "f64": (1.0, _f64(0x402E20359E903E37), _f64(0x4054C30B52213498), _f64(0x406BB86590FCFB56),
            _f64(0x407351945DC908A5), _f64(0x406B0DB13E48E066), _f64(0x404E0F304466448E)),
}

# tanh: x P(x^2) / Q(x^2) for x clamped where tanh rounds to +-1 (Eigen's float32 rational;
# XLA's float64 one). float32 returns x itself for |x| < 0.0004.
_TANH_CLAMP = {"f32": _f32(0x40FFF644), "f64": _f64(0x4031B6D58F246197)}
_TANH_SMALL32 = _r32(0.0004)
_TANH_P = {
    "f32": (_f32(0xA59F25C0), _f32(0x2A61337E), _f32(0xAEBD37FF), _f32(0x335C0041),
            _f32(0x3779434A), _f32(0x3A270DED), _f32(0x3BA059DC)),
    "f64": (_f64(0x3B3F9F82E5D782DF), _f64(0x3C2C3C836C04B4C8), _f64(0x3CEC3379F905E662),
            _f64(0x3D929AFF6C8EDD96), _f64(0x3E2525A389DCE7C2), _f64(0x3EA708819BE51CD9),
            _f64(0x3F18996F4026A7FA), _f64(0x3F787F80B957ED00), _f64(0x3FC36FBA9B450E5A), 1.0),
}
_TANH_Q = {
    "f32": (_f32(0x35A0D3D8), _f32(0x38F895D6), _f32(0x3B14AA05), _f32(0x3BA059DD)),
    "f64": (_f64(0x3BBE8630CF903250), _f64(0x3C90AABCA9A5FEA0), _f64(0x3D4232981AA2BBA8),
            _f64(0x3DDEE2F015EA8065), _f64(0x3E681F1947C52304), _f64(0x3EE26C82AB46D140),
            _f64(0x3F4B2E7C4D488C04), _f64(0x3FA1998830265B50), _f64(0x3FDF0D32A2F7DC79), 1.0),
}

# float64 exp: x clamped to [LO, HI] (exp(x) is 0 below LO, inf above HI), n = floor(x log2(e)
# + 1/2), g = x - n ln 2 (two parts), exp(g) = 1 + 2 g P(g^2) / (Q(g^2) - g P(g^2)).
_EXP64_LO, _EXP64_HI = _f64(0xC086232BDD7ABCD2), _f64(0x40862E42FEFA39EF)
_EXP64_LOG2E = _f64(0x3FF71547652B82FE)
_EXP64_C1, _EXP64_C2 = _f64(0x3FE62E4000000000), _f64(0x3EB7F7D1CF79ABCA)
_EXP64_P = (_f64(0x3F2089CDD5E44BE8), _f64(0x3F9F06D10CCA2C7E), 1.0)
_EXP64_Q = (_f64(0x3EC92EB6BC365FA0), _f64(0x3F64AE39B508B6C0), _f64(0x3FCD17099887E074), 2.0)


# ------------------------------------------------------------- helpers

def _horner(em: _Emitter, x: _V, coeffs: tuple[float, ...]) -> _V:
    """c0 x^n + ... + cn (highest degree first), each step one FMA: fma(acc, x, c)."""
    acc = em.fma(x, coeffs[0], coeffs[1])
    for c in coeffs[2:]:
        acc = em.fma(acc, x, c)
    return acc


def _magic_int(em: _Emitter, k: _V) -> ir.Value:
    """An integral float k (|k| < 2**22 for float32, 2**51 for float64) as an integer.

    Adding 1.5 * 2**mbits puts k in the low bits of the sum: exact, and unlike fptosi never
    poison (nan gives some integer; callers' results are nan then anyway).
    """
    magic = 1.5 * 2.0**em.mbits
    return em.b.sub(em.bits(k + magic), em.bits(em.c(magic)))


# ------------------------------------------------------------- exp

def _exp32_parts(em: _Emitter, x: _V) -> tuple[_V, _V]:
    """(y, 2^k) with exp(x) = y * 2^k (XLA's float32 exp before its last multiplication)."""
    xc = em.clamp(x, _EXP32_LO, _EXP32_HI)
    k = em.call("llvm.floor", em.fma(xc, _EXP32_LOG2E, 0.5))
    # XLA clamps k to [-127, 127]; from x >= -87.8 it is -127 at least already.
    k = em.select(em.cmp(">", k, 127.0), 127.0, k)
    r = em.fma(k, -_EXP32_C1, xc)
    r = em.fma(k, -_EXP32_C2, r)
    p = _horner(em, r, _EXP32_P)
    y = em.fma(p, r * r, r) + 1.0
    # 2^k from its bits, (k + 127) << 23: the low 9 bits of the magic sum are k + 127.
    biased = em.bits(k + (1.5 * 2.0**23 + 127.0))
    return y, em.from_bits(em.b.shl(biased, em.ci(23)))


def _exp64_parts(em: _Emitter, x: _V) -> tuple[_V, _V]:
    """(y, s) with exp(x) = y * s for x in XLA's clamped range, y rounded after 3 of its 4
    scalings (XLA splits 2^n in 2^b 2^b 2^b 2^(n-3b), b = n >> 2)."""
    xc = em.clamp(x, _EXP64_LO, _EXP64_HI)
    n = em.call("llvm.floor", em.fma(xc, _EXP64_LOG2E, 0.5))
    g = em.fma(n, -_EXP64_C1, xc)
    g = em.fma(n, -_EXP64_C2, g)
    g2 = g * g
    p = _horner(em, g2, _EXP64_P) * g
    q = _horner(em, g2, _EXP64_Q)
    e = em.fma(p / (q - p), 2.0, 1.0)
    ni = _magic_int(em, n)
    b = em.b.ashr(ni, em.ci(2))
    one = em.ci(1023 << 52)
    s1 = em.from_bits(em.b.add(em.b.shl(b, em.ci(52)), one))
    rest = em.b.sub(ni, em.b.mul(b, em.ci(3)))
    s2 = em.from_bits(em.b.add(em.b.shl(rest, em.ci(52)), one))
    return e * s1 * s1 * s1, s2


def _exp_limits64(em: _Emitter, x: _V, y: _V) -> _V:
    """XLA's float64 exp: 0 below its range, inf above (nan stays nan)."""
    y = em.select(em.cmp("<", x, _EXP64_LO), 0.0, y)
    return em.select(em.cmp(">", x, _EXP64_HI), math.inf, y)


def _exp_value(em: _Emitter, x: _V) -> _V:
    if em.dtype == "f32":
        y, scale = _exp32_parts(em, x)
        return y * scale
    y, scale = _exp64_parts(em, x)
    return _exp_limits64(em, x, y * scale)


def exp(em: _Emitter, x: _V) -> _V:
    """XLA's exp: float32 Cephes expf (k clamped to [-127, 127]: 0 from -87.8 down, inf from
    88.8 up), float64 Cody-Waite reduction and Pade form."""
    return _exp_value(em, x)


def logistic(em: _Emitter, x: _V) -> _V:
    """XLA's logistic: 1 / (1 + exp(-x)), the addition fused with exp's last multiplication."""
    if em.dtype == "f32":
        y, scale = _exp32_parts(em, -x)
        return 1.0 / em.fma(y, scale, 1.0)
    y, scale = _exp64_parts(em, -x)
    out = 1.0 / em.fma(y, scale, 1.0)
    out = em.select(em.cmp(">", x, -_EXP64_LO), 1.0, out)
    return em.select(em.cmp("<", x, -_EXP64_HI), 0.0, out)


# ------------------------------------------------------------- log

def _log32(em: _Emitter, x: _V) -> _V:
    """XLA's float32 log (Cephes logf), special values included."""
    xm = em.select(em.b.fcmp_unordered(">=", em.c(_FLT_MIN).v, x.v), _FLT_MIN, x)
    ix = em.bits(xm)
    e = em.to_float(em.b.sub(em.b.lshr(ix, em.ci(23)), em.ci(127))) + 1.0
    m = em.from_bits(em.b.or_(em.b.and_(ix, em.ci(0x807FFFFF - (1 << 32))), em.ci(0x3F000000)))
    below = em.cmp("<", m, _LOG32_SQRTHF)
    u = (m - 1.0) + em.select(below, m, 0.0)
    e = e - em.select(below, 1.0, 0.0)
    z = u * u
    u3 = z * u
    y0, y1, y2 = (em.fma(em.fma(u, p[0], p[1]), u, p[2]) for p in _LOG32_P)
    y = em.fma(em.fma(y0, u3, y1), u3, y2)
    y = em.fma(y, u3, e * _EXP32_C2)
    y = em.fma(e, _EXP32_C1, em.fma(z, -0.5, u) + y)
    y = em.select(em.b.fcmp_unordered("<=", x.v, em.c(0.0).v), math.nan, y)
    y = em.select(em.cmp("==", x, 0.0), -math.inf, y)
    return em.select(em.cmp("==", x, math.inf), math.inf, y)


def log(em: _Emitter, x: _V) -> _V:
    """XLA's float32 log; float64 (libm's in XLA) by `scalar._log`."""
    return _log32(em, x) if em.dtype == "f32" else _log(em, x)


def log1p(em: _Emitter, x: _V) -> _V:
    """XLA's log1p: x - x^2/2 + x^3 N(x)/D(x) (Cephes) for |x| < sqrt(2) - 1, else log(1 + x)."""
    x2 = x * x
    ratio = _horner(em, x, _LOG1P_NUM[em.dtype]) / _horner(em, x, _LOG1P_DEN[em.dtype])
    small = x + em.fma(x2, -0.5, x * x2 * ratio)
    big = log(em, x + 1.0)
    return em.select(em.cmp("<", em.call("llvm.fabs", x), _LOG1P_BOUND[em.dtype]), small, big)


# ------------------------------------------------------------- tanh, expm1

def _tanh_rational(em: _Emitter, x: _V, clamp: bool = True) -> _V:
    """XLA's x P(x^2) / Q(x^2), x clamped first (with `clamp`) where tanh rounds to +-1;
    float32 gives x itself for |x| < 0.0004."""
    lim = _TANH_CLAMP[em.dtype]
    xc = em.clamp(x, -lim, lim) if clamp else x
    s = xc * xc
    t = xc * _horner(em, s, _TANH_P[em.dtype]) / _horner(em, s, _TANH_Q[em.dtype])
    if em.dtype == "f32":
        t = em.select(em.cmp("<", em.call("llvm.fabs", x), _TANH_SMALL32), x, t)
    return t


def tanh(em: _Emitter, x: _V) -> _V:
    """XLA's tanh: x P(x^2) / Q(x^2), x clamped where tanh rounds to +-1; float32 gives x for
    |x| < 0.0004; +-1 from |x| >= 20."""
    t = _tanh_rational(em, x)
    if em.dtype == "f32":
        # XLA's select of +-1 from |x| >= 20 changes nothing: the rational is +-1 exactly at
        # the clamp.
        return t
    a = em.call("llvm.fabs", x)
    return em.select(em.cmp(">=", a, 20.0), em.call("llvm.copysign", em.c(1.0), x), t)


def expm1(em: _Emitter, x: _V) -> _V:
    """XLA's expm1: exp(x) - 1 for |x| > 1/2, else tanh(x/2) (exp(x) + 1); x where x/2 == 0."""
    e = _exp_value(em, x)
    h = x * 0.5
    # Taken for |x| <= 1/2 only, where tanh's clamp and its +-1 select do nothing.
    small = _tanh_rational(em, h, clamp=False) * (e + 1.0)
    y = em.select(em.cmp(">", em.call("llvm.fabs", x), 0.5), e - 1.0, small)
    return em.select(em.cmp("==", h, 0.0), x, y)
