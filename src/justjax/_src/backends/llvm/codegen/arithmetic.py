"""Scalar arithmetic of the elemental emitter, with the reference backend's semantics: dtype
conversions, comparisons, and the float and integer/bool arithmetic tables (`_float_ops`,
`_int_ops`, declared in `emitter.py` and filled here). Transcendental functions are the
`mathlib`'s; complex operands are `complexmath.py`'s.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen.emitter import (
    _F32, _F64, _I32, OP_EMITTERS, _compute_type, _Emitter, _float_ops, _int_ops, _is_complex,
    _is_float, _operand_dtype)
from justjax._src.core import dtypes
from justjax._src.hlo.ir import Op

__all__: list[str] = []


# -- conversions and comparisons ---------------------------------------------------------------

def _convert(em: _Emitter, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """`stablehlo.convert` with the reference's rules: float -> int truncates and saturates
    (NaN -> 0), anything -> bool is `x != 0`, integers wrap."""
    b = em.b
    if _is_complex(src) or _is_complex(dst):
        from justjax._src.backends.llvm.codegen import complexmath
        return complexmath.convert(em, x, src, dst)
    src_t, dst_t = _compute_type(src), _compute_type(dst)
    if dst == np.bool_:
        if _is_float(src):
            return b.fcmp_unordered("!=", x, ir.Constant(src_t, 0.0))
        return b.icmp_unsigned("!=", x, ir.Constant(src_t, 0))
    src_unsigned = src == np.bool_ or src.kind == "u"
    if _is_float(src) and _is_float(dst):
        if src_t == dst_t:
            return x
        if src_t == _F64 and dst == np.dtype(dtypes.float16):
            # Rounded once (as NumPy): float32 rounded to odd keeps the sticky bit, so the
            # float32 -> float16 rounding is exact. (A direct fptrunc would be a libcall.)
            return em.round_low(_to_f32_odd(em, x), dst)
        return b.fpext(x, dst_t) if dst_t == _F64 else b.fptrunc(x, dst_t)
    if _is_float(src):
        name = "llvm.fptoui.sat" if dst.kind == "u" else "llvm.fptosi.sat"
        return em.intrinsic(name, [x], dst_t)
    if _is_float(dst):
        return b.uitofp(x, dst_t) if src_unsigned else b.sitofp(x, dst_t)
    if src_t.width == dst_t.width:
        return x
    if src_t.width > dst_t.width:
        return b.trunc(x, dst_t)
    return b.zext(x, dst_t) if src_unsigned else b.sext(x, dst_t)


def _to_f32_odd(em: _Emitter, x: ir.Value) -> ir.Value:
    """float64 `x` rounded to float32 toward zero, with the last bit set when inexact."""
    b = em.b
    f = b.fptrunc(x, _F32)
    back = b.fpext(f, _F64)
    bits = b.bitcast(f, _I32)
    fabs = em.intrinsic("llvm.fabs", [back])
    too_big = b.fcmp_ordered(">", fabs, em.intrinsic("llvm.fabs", [x]))
    toward_zero = b.select(too_big, b.sub(bits, ir.Constant(_I32, 1)), bits)
    odd = b.or_(toward_zero, ir.Constant(_I32, 1))
    return b.select(b.fcmp_ordered("==", back, x), f, b.bitcast(odd, _F32))


_CMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _compare(em: _Emitter, op: Op, args: list[ir.Value], dt: np.dtype) -> ir.Value:
    pred = _CMP[op.attributes["comparison_direction"].value]
    ctype = op.attributes.get("compare_type")
    x, y = args
    if _is_float(dt) and ctype is not None and ctype.value == "TOTALORDER":
        width = x.type.width if isinstance(x.type, ir.IntType) else (64 if x.type == _F64 else 32)
        it = ir.IntType(width)
        keys = []
        for v in (x, y):
            bits = em.b.bitcast(v, it)
            flipped = em.b.xor(bits, ir.Constant(it, (1 << (width - 1)) - 1))
            keys.append(em.b.select(em.b.icmp_signed("<", bits, ir.Constant(it, 0)),
                                    flipped, bits))
        return em.b.icmp_signed(pred, *keys)
    if _is_float(dt):
        return (em.b.fcmp_unordered(pred, x, y) if pred == "!="
                else em.b.fcmp_ordered(pred, x, y))
    if dt == np.bool_ or dt.kind == "u":
        return em.b.icmp_unsigned(pred, x, y)
    return em.b.icmp_signed(pred, x, y)


# -- float arithmetic --------------------------------------------------------------------------

def _fmax_min(em: _Emitter, x: ir.Value, y: ir.Value, is_max: bool) -> ir.Value:
    """NaN-propagating max/min with -0.0 < +0.0: equal operands combine their bits (and for
    max, or for min), which orders the zeros and keeps equal nonzero values."""
    b = em.b
    it = ir.IntType(64 if x.type == _F64 else 32)
    bx, by = b.bitcast(x, it), b.bitcast(y, it)
    eq = b.bitcast(b.and_(bx, by) if is_max else b.or_(bx, by), x.type)
    pick = b.select(b.fcmp_ordered(">" if is_max else "<", x, y), x, y)
    out = b.select(b.fcmp_ordered("==", x, y), eq, pick)
    out = b.select(b.fcmp_unordered("uno", y, y), y, out)
    return b.select(b.fcmp_unordered("uno", x, x), x, out)


def _fsign(em: _Emitter, dt: np.dtype, x: ir.Value) -> ir.Value:
    one = em.intrinsic("llvm.copysign", [ir.Constant(x.type, 1.0), x])
    return em.b.select(em.b.fcmp_unordered("ueq", x, ir.Constant(x.type, 0.0)), x, one)


def _is_finite(em: _Emitter, dt: np.dtype, x: ir.Value) -> ir.Value:
    return em.b.fcmp_ordered("<", em.intrinsic("llvm.fabs", [x]), ir.Constant(x.type, math.inf))


def _fun(name: str) -> Callable[..., ir.Value]:
    return lambda em, dt, x: em.intrinsic(name, [x])


_UNARY_INTRINSICS = {"stablehlo.floor": "llvm.floor", "stablehlo.ceil": "llvm.ceil",
                     "stablehlo.round_nearest_afz": "llvm.round",
                     "stablehlo.round_nearest_even": "llvm.roundeven",
                     "stablehlo.sqrt": "llvm.sqrt"}

_float_ops.update({
    "stablehlo.add": lambda em, dt, x, y: em.b.fadd(x, y),
    "stablehlo.subtract": lambda em, dt, x, y: em.b.fsub(x, y),
    "stablehlo.multiply": lambda em, dt, x, y: em.b.fmul(x, y),
    "stablehlo.divide": lambda em, dt, x, y: em.b.fdiv(x, y),
    "stablehlo.remainder": lambda em, dt, x, y: em.b.frem(x, y),
    "stablehlo.maximum": lambda em, dt, x, y: _fmax_min(em, x, y, True),
    "stablehlo.minimum": lambda em, dt, x, y: _fmax_min(em, x, y, False),
    "stablehlo.negate": lambda em, dt, x: em.b.fneg(x),
    "stablehlo.abs": _fun("llvm.fabs"),
    "stablehlo.sign": _fsign,
    "stablehlo.is_finite": _is_finite,
    "chlo.square": lambda em, dt, x: em.b.fmul(x, x),
    **{k: _fun(v) for k, v in _UNARY_INTRINSICS.items()},
})


# -- integer and boolean arithmetic ------------------------------------------------------------

def _signed(dt: np.dtype) -> bool:
    return dt.kind == "i"


def _idiv(em: _Emitter, dt: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    """x / 0 == -1, INT_MIN / -1 == INT_MIN, truncating."""
    b, t = em.b, x.type
    zero, one, minus = ir.Constant(t, 0), ir.Constant(t, 1), ir.Constant(t, -1)
    by_zero = b.icmp_unsigned("==", y, zero)
    if _signed(dt):
        overflow = b.and_(b.icmp_signed("==", x, ir.Constant(t, 1 << (t.width - 1))),
                          b.icmp_signed("==", y, minus))
        q = b.sdiv(x, b.select(b.or_(by_zero, overflow), one, y))
    else:
        q = b.udiv(x, b.select(by_zero, one, y))
    return b.select(by_zero, minus, q)


def _irem(em: _Emitter, dt: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    """x % 0 == x, x % -1 == 0, with the dividend's sign."""
    b, t = em.b, x.type
    zero, one = ir.Constant(t, 0), ir.Constant(t, 1)
    by_zero = b.icmp_unsigned("==", y, zero)
    if _signed(dt):
        unsafe = b.or_(by_zero, b.icmp_signed("==", y, ir.Constant(t, -1)))
        r = b.srem(x, b.select(unsafe, one, y))
    else:
        r = b.urem(x, b.select(by_zero, one, y))
    return b.select(by_zero, x, r)


def _shift(kind: str) -> Callable[..., ir.Value]:
    """Shifts with out-of-range counts (unsigned >= width) giving 0, or the sign fill."""
    def emit(em: _Emitter, dt: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        b, t = em.b, x.type
        in_range = b.icmp_unsigned("<", y, ir.Constant(t, t.width))
        safe = b.select(in_range, y, ir.Constant(t, 0))
        if kind == "shl":
            return b.select(in_range, b.shl(x, safe), ir.Constant(t, 0))
        if kind == "lshr":
            return b.select(in_range, b.lshr(x, safe), ir.Constant(t, 0))
        fill = b.ashr(x, ir.Constant(t, t.width - 1))
        return b.select(in_range, b.ashr(x, safe), fill)
    return emit


def _imax_min(is_max: bool) -> Callable[..., ir.Value]:
    def emit(em: _Emitter, dt: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        pred = ">" if is_max else "<"
        cmp = (em.b.icmp_signed if _signed(dt) else em.b.icmp_unsigned)(pred, x, y)
        return em.b.select(cmp, x, y)
    return emit


def _iabs(em: _Emitter, dt: np.dtype, x: ir.Value) -> ir.Value:
    if not _signed(dt):
        return x
    neg = em.b.icmp_signed("<", x, ir.Constant(x.type, 0))
    return em.b.select(neg, em.b.neg(x), x)


def _isign(em: _Emitter, dt: np.dtype, x: ir.Value) -> ir.Value:
    b, t = em.b, x.type
    pos = b.zext(b.icmp_signed(">", x, ir.Constant(t, 0)) if _signed(dt)
                 else b.icmp_unsigned("!=", x, ir.Constant(t, 0)), t) if t.width > 1 else x
    if not _signed(dt):
        return pos
    return b.sub(pos, b.zext(b.icmp_signed("<", x, ir.Constant(t, 0)), t))


def _bool_or_int(for_bool: Callable[..., ir.Value], for_int: Callable[..., ir.Value]
                 ) -> Callable[..., ir.Value]:
    # NumPy's bool arithmetic is logical: add is or, multiply is and, subtract is xor.
    return lambda em, dt, *a: (for_bool if dt == np.bool_ else for_int)(em, dt, *a)


_int_ops.update({
    "stablehlo.add": _bool_or_int(lambda em, dt, x, y: em.b.or_(x, y),
                                  lambda em, dt, x, y: em.b.add(x, y)),
    "stablehlo.subtract": _bool_or_int(lambda em, dt, x, y: em.b.xor(x, y),
                                       lambda em, dt, x, y: em.b.sub(x, y)),
    "stablehlo.multiply": _bool_or_int(lambda em, dt, x, y: em.b.and_(x, y),
                                       lambda em, dt, x, y: em.b.mul(x, y)),
    "stablehlo.divide": _idiv,
    "stablehlo.remainder": _irem,
    "stablehlo.maximum": _imax_min(True),
    "stablehlo.minimum": _imax_min(False),
    "stablehlo.and": lambda em, dt, x, y: em.b.and_(x, y),
    "stablehlo.or": lambda em, dt, x, y: em.b.or_(x, y),
    "stablehlo.xor": lambda em, dt, x, y: em.b.xor(x, y),
    "stablehlo.not": lambda em, dt, x: em.b.not_(x),
    "stablehlo.negate": lambda em, dt, x: em.b.neg(x),
    "stablehlo.abs": _iabs,
    "stablehlo.sign": _isign,
    "stablehlo.shift_left": _shift("shl"),
    "stablehlo.shift_right_logical": _shift("lshr"),
    "stablehlo.shift_right_arithmetic": _shift("ashr"),
    "chlo.square": lambda em, dt, x: em.b.mul(x, x),
})


OP_EMITTERS.update({
    "stablehlo.convert": lambda em, op, args: _convert(em, args[0], _operand_dtype(op),
                                                       op.result.type.dtype),
    "stablehlo.compare": lambda em, op, args: _compare(em, op, args, _operand_dtype(op)),
})
