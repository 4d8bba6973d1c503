"""More elementwise ops for the elemental emitter, with the reference backend's semantics:

  stablehlo.power (integers)  binary powering over every exponent bit (wrapping); a negative
                              exponent gives 0, except for the bases 1 and -1
  stablehlo.popcnt, count_leading_zeros   llvm.ctpop / llvm.ctlz (the width for 0)
  stablehlo.bitcast_convert   the element's bits reinterpreted; between widths, the wider
                              element holds the narrower ones little-endian along a new minor
                              dimension (as the reference backend's bytes)
  stablehlo.reduce_precision  mantissa rounded to nearest even by integer arithmetic, the
                              exponent range clamped (overflow to inf, below normal to zero)
  stablehlo.real/imag         of real operands (the value, zero)
  chlo.next_after             one step of the operand's own format (float16 and bfloat16
                              step in theirs, not float32's)
  chlo.erfc, asinh, acosh, atanh, bessel_i1e, zeta, polygamma   `mathlib/special.py`; conj of
                              real operands is the value
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen.emitter import (
    _I1, _I16, _I32, _I64, _STRUCTURAL, OP_EMITTERS, Unsupported, _compute_type, _Emitter,
    _int_ops)
from justjax._src.backends.llvm.mathlib import special
from justjax._src.core import dtypes
from justjax._src.hlo.ir import Op

__all__: list[str] = []

_F16, _BF16 = np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16)


def _dtype(value) -> np.dtype:  # noqa: ANN001 -- an hlo.Value
    return value.type.dtype


# -- integer power ---------------------------------------------------------------------------

def _int_power(em: _Emitter, dt: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    """x^y for integers: repeated squaring over all bits of y (branch-free), wrapping."""
    b, t = em.b, x.type
    one = ir.Constant(t, 1)
    result: ir.Value = one
    base = x
    exponent = y
    if dt.kind == "i":
        negative = b.icmp_signed("<", y, ir.Constant(t, 0))
        exponent = b.select(negative, ir.Constant(t, 0), y)
    for k in range(t.width):
        bit = b.icmp_unsigned("!=", b.and_(exponent, ir.Constant(t, 1 << k)),
                              ir.Constant(t, 0))
        result = b.select(bit, b.mul(result, base), result)
        base = b.mul(base, base)
    if dt.kind != "i":
        return result
    # Negative exponents: 1 for base 1, +-1 for base -1 by parity, else 0.
    odd = b.trunc(y, _I1)
    minus_one = b.select(odd, ir.Constant(t, -1), one)
    negative_power = b.select(b.icmp_signed("==", x, one), one,
                              b.select(b.icmp_signed("==", x, ir.Constant(t, -1)), minus_one,
                                       ir.Constant(t, 0)))
    return b.select(negative, negative_power, result)


# -- bit ops -------------------------------------------------------------------------------

def _popcnt(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    return em.intrinsic("llvm.ctpop", args)


def _clz(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    x = args[0]
    fn = em.module.declare_intrinsic("llvm.ctlz", [x.type],
                                     ir.FunctionType(x.type, [x.type, _I1]))
    return em.b.call(fn, [x, ir.Constant(_I1, 0)])


def _to_bits(em: _Emitter, x: ir.Value, dt: np.dtype) -> ir.Value:
    """The in-memory bits of element `x` of dtype `dt`, as an integer of its width."""
    b = em.b
    if dt == np.bool_:
        return b.zext(x, ir.IntType(8))
    if dt.kind in "iu":
        return x
    if dt == _F16:
        return em.f16_bits(x)
    if dt == _BF16:
        # bfloat16 values are exact in float32 registers: their bits are the high half.
        return b.trunc(b.lshr(b.bitcast(x, _I32), ir.Constant(_I32, 16)), _I16)
    if dt.kind == "f":
        return b.bitcast(x, ir.IntType(dt.itemsize * 8))
    raise Unsupported(f"llvm emitter: bitcast_convert of {dt}")


def _from_bits(em: _Emitter, bits: ir.Value, dt: np.dtype) -> ir.Value:
    """The compute-type element of dtype `dt` with in-memory bits `bits`."""
    b = em.b
    if dt == np.bool_:
        return b.icmp_unsigned("!=", bits, ir.Constant(bits.type, 0))
    if dt.kind in "iu":
        return bits
    if dt == _F16:
        return em.f16_to_f32(bits)
    if dt == _BF16:
        return b.bitcast(b.shl(b.zext(bits, _I32), ir.Constant(_I32, 16)), _compute_type(dt))
    if dt.kind == "f":
        return b.bitcast(bits, _compute_type(dt))
    raise Unsupported(f"llvm emitter: bitcast_convert to {dt}")


def _bitcast_convert(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    """`stablehlo.bitcast_convert` at `idx` (an element generator: between widths, one
    result element is a part of, or gathers several, operand elements)."""
    src, dst = _dtype(op.operands[0]), _dtype(op.result)
    b = em.b
    if src.itemsize == dst.itemsize:
        return _from_bits(em, _to_bits(em, em.gen(op.operands[0], idx), src), dst)
    wide = ir.IntType(max(src.itemsize, dst.itemsize) * 8)
    if src.itemsize > dst.itemsize:
        bits = _to_bits(em, em.gen(op.operands[0], idx[:-1]), src)
        shift = b.mul(b.trunc(idx[-1], wide) if wide.width < 64 else idx[-1],
                      ir.Constant(wide, dst.itemsize * 8))
        part = b.trunc(b.lshr(bits, shift), ir.IntType(dst.itemsize * 8))
        return _from_bits(em, part, dst)
    total: ir.Value = ir.Constant(wide, 0)
    for k in range(dst.itemsize // src.itemsize):
        x = em.gen(op.operands[0], [*idx, ir.Constant(_I64, k)])
        piece = b.zext(_to_bits(em, x, src), wide)
        total = b.or_(total, b.shl(piece, ir.Constant(wide, k * src.itemsize * 8)))
    return _from_bits(em, total, dst)


def _attr_int(value: object) -> int:
    return int(getattr(value, "value", value))


def _reduce_precision(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    """As the reference: round the mantissa to `mantissa_bits` (nearest, ties to even), then
    clamp to the exponent range of `exponent_bits`; nan stays."""
    x = args[0]
    b = em.b
    exponent_bits = _attr_int(op.attributes["exponent_bits"])
    mantissa_bits = _attr_int(op.attributes["mantissa_bits"])
    is64 = x.type == ir.DoubleType()
    total_exp, total_man = (11, 52) if is64 else (8, 23)
    it = ir.IntType(64 if is64 else 32)
    bits = b.bitcast(x, it)
    if mantissa_bits < total_man:
        shift = ir.Constant(it, total_man - mantissa_bits)
        last = b.and_(b.lshr(bits, shift), ir.Constant(it, 1))
        bias = b.add(ir.Constant(it, (1 << (total_man - mantissa_bits - 1)) - 1), last)
        bits = b.shl(b.lshr(b.add(bits, bias), shift), shift)
    result = b.bitcast(bits, x.type)
    if exponent_bits < total_exp:
        max_exp = 2 ** (exponent_bits - 1) - 1
        largest = math.ldexp(2 - 2.0 ** -mantissa_bits, max_exp)
        smallest_normal = math.ldexp(1.0, 1 - max_exp)
        if not is64:
            largest = float(np.float32(largest))
        magnitude = em.intrinsic("llvm.fabs", [result])
        inf = em.intrinsic("llvm.copysign", [ir.Constant(x.type, math.inf), result])
        zero = em.intrinsic("llvm.copysign", [ir.Constant(x.type, 0.0), result])
        result = b.select(b.fcmp_ordered(">", magnitude, ir.Constant(x.type, largest)), inf,
                          result)
        result = b.select(b.fcmp_ordered("<", magnitude, ir.Constant(x.type, smallest_normal)),
                          zero, result)
    return b.select(b.fcmp_unordered("uno", x, x), x, result)


# -- real, imag, next_after ------------------------------------------------------------------

def _real(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    return args[0]


def _imag(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    return ir.Constant(args[0].type, 0.0)


def _format_bits(em: _Emitter, x: ir.Value, dt: np.dtype) -> tuple[ir.Value, ir.IntType]:
    """The bits of `x` in `dt`'s own format (exact: `x` holds a value of `dt`)."""
    if dt == _F16:
        return em.f16_bits(x), _I16
    if dt == _BF16:
        return _to_bits(em, x, dt), _I16
    it = ir.IntType(dt.itemsize * 8)
    return em.b.bitcast(x, it), it


def _next_after(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
    """The neighbour of x toward y in x's own format: y when they are equal, nan with a nan,
    the smallest subnormal (signed toward y) from zero, else the bits stepped by one."""
    x, y = args
    dt = _dtype(op.operands[0])
    b = em.b
    bits, it = _format_bits(em, x, dt)
    sign_bit = ir.Constant(it, 1 << (it.width - 1))
    x_negative = b.icmp_unsigned("!=", b.and_(bits, sign_bit), ir.Constant(it, 0))
    up = b.fcmp_ordered(">", y, x)
    # Away from zero (bits + 1) when moving up from a positive or down from a negative x.
    away = b.xor(up, x_negative)
    stepped = b.select(away, b.add(bits, ir.Constant(it, 1)), b.sub(bits, ir.Constant(it, 1)))
    tiny = b.select(b.fcmp_ordered(">", y, ir.Constant(y.type, 0.0)), ir.Constant(it, 1),
                    ir.Constant(it, (1 << (it.width - 1)) | 1))
    out_bits = b.select(b.fcmp_ordered("==", x, ir.Constant(x.type, 0.0)), tiny, stepped)
    out = _from_bits(em, out_bits, dt)
    out = b.select(b.fcmp_ordered("==", x, y), y, out)
    nan = b.or_(b.fcmp_unordered("uno", x, x), b.fcmp_unordered("uno", y, y))
    return b.select(nan, ir.Constant(x.type, math.nan), out)


# -- CHLO special functions ----------------------------------------------------------------

def _special(name: str) -> Callable[..., ir.Value]:
    def emit(em: _Emitter, op: Op, args: list[ir.Value]) -> ir.Value:
        ty = args[0].type
        if not isinstance(ty, (ir.FloatType, ir.DoubleType)):
            raise Unsupported(f"llvm emitter: {op.opcode} on {ty}")
        dtype = "f64" if ty == ir.DoubleType() else "f32"
        return em.b.call(special.define(em.module, name, dtype), list(args))
    return emit


_int_ops["stablehlo.power"] = _int_power
_STRUCTURAL["stablehlo.bitcast_convert"] = _bitcast_convert
OP_EMITTERS.update({
    "stablehlo.popcnt": _popcnt,
    "stablehlo.count_leading_zeros": _clz,
    "stablehlo.reduce_precision": _reduce_precision,
    "stablehlo.real": _real,
    "stablehlo.imag": _imag,
    "chlo.conj": _real,
    "chlo.next_after": _next_after,
    **{f"chlo.{name}": _special(name) for name in (
        "erfc", "asinh", "acosh", "atanh", "bessel_i1e", "zeta", "polygamma")},
})
