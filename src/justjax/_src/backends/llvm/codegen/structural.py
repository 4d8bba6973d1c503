"""Element generators of the structural ops for the elemental emitter: index arithmetic that
maps an element's index in the result to one in the operand (broadcast_in_dim, reshape,
transpose, slice, reverse, concatenate, pad), iota, and constants (a splat, or a table
indexed like the result). Registered into `emitter._STRUCTURAL`; the gathers and dynamic
slices are `indexing.py`'s.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

# The module, not its function: importing `arithmetic` first imports `emitter`, which
# imports this module before `arithmetic` has defined anything.
from justjax._src.backends.llvm.codegen import arithmetic
from justjax._src.backends.llvm.codegen.emitter import (
    _I1, _I16, _I64, _MIN_INNER, _STRUCTURAL, _const, _Emitter, _is_complex, _is_float,
    _memory_type, _native_f16)
from justjax._src.core import dtypes
from justjax._src.hlo.ir import Op

__all__: list[str] = []


def _broadcast(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    shape = op.operands[0].type.shape
    dims = op.attributes["broadcast_dimensions"]
    sub = [ir.Constant(_I64, 0) if size == 1 else idx[d]
           for d, size in zip(dims, shape, strict=True)]
    return em.gen(op.operands[0], sub)


def _reshape(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    result_shape, operand_shape = op.result.type.shape, op.operands[0].type.shape
    flat = em.linear(idx, result_shape)
    kept = _kept_minor_dims(result_shape, operand_shape)
    if kept == 0 or math.prod(result_shape[-kept:]) < _MIN_INNER:
        return em.gen(op.operands[0], em.delinear(flat, operand_shape))
    # The minor dimensions a reshape keeps index the operand as they index the result: only
    # the leading ones are split anew, from values a loop over the minor dimension does not
    # change (LLVM hoists them out of it, and the loop reads contiguous memory it vectorizes;
    # re-splitting the whole offset divided every element's, 2x slower on a 2x2 pool's
    # gradient (64, 14, 2, 14, 2, 32) -> (64, 28, 28, 32)).
    leading = em.delinear(em.linear(idx[:-kept], result_shape[:-kept]), operand_shape[:-kept])
    sub = [*leading, *idx[-kept:]]
    # A reshape keeps row-major offsets: the operand's element is at the result's offset.
    em.alive.append(sub)
    em.flat[tuple(id(i) for i in sub)] = (flat, tuple(operand_shape))
    return em.gen(op.operands[0], sub)


def _kept_minor_dims(result_shape: tuple[int, ...], operand_shape: tuple[int, ...]) -> int:
    """How many minor dimensions a reshape between these shapes leaves as they are."""
    kept = 0
    while (kept < min(len(result_shape), len(operand_shape))
           and result_shape[-1 - kept] == operand_shape[-1 - kept]):
        kept += 1
    return kept


def _transpose(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    perm = op.attributes["permutation"]
    sub: list[ir.Value] = [ir.Constant(_I64, 0)] * len(perm)
    for i, p in enumerate(perm):
        sub[p] = idx[i]
    return em.gen(op.operands[0], sub)


def _slice(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    starts, strides = op.attributes["start_indices"], op.attributes["strides"]
    sub = [em.b.add(em.b.mul(i, ir.Constant(_I64, st)), ir.Constant(_I64, s))
           for i, s, st in zip(idx, starts, strides, strict=True)]
    return em.gen(op.operands[0], sub)


def _reverse(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    shape = op.result.type.shape
    sub = [em.b.sub(ir.Constant(_I64, shape[d] - 1), i) if d in op.attributes["dimensions"]
           else i for d, i in enumerate(idx)]
    return em.gen(op.operands[0], sub)


def _iota(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    dt = op.result.type.dtype
    i = idx[op.attributes["iota_dimension"]]
    return arithmetic._convert(em, i, np.dtype(np.int64), dt)


def _constant(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    t = op.result.type
    value = np.broadcast_to(np.asarray(op.attributes["value"], t.dtype), t.shape)
    flat = value.reshape(-1)
    if flat.size == 0 or (flat == flat[0]).all() and not (np.isnan(flat).any() if
                                                          t.dtype.kind in "fcV" or
                                                          _is_float(t.dtype) else False):
        return _const(t.dtype, flat[0] if flat.size else 0)
    # A non-splat constant becomes a global table in memory form.
    mem = _memory_type(t.dtype)
    if t.dtype == np.dtype(dtypes.bfloat16):
        items = [int(v) for v in flat.view(np.uint16)]
    elif t.dtype == np.bool_ or t.dtype.kind in "iu":
        items = [int(v) & ((1 << mem.width) - 1) for v in flat.astype(np.int64)
                 ] if t.dtype.kind != "u" else [int(v) for v in flat]
    elif _is_complex(t.dtype):
        items = [_const(t.dtype, v) for v in flat]
    else:
        items = [float(v) for v in flat.astype(np.float64)]
    if t.dtype == np.dtype(dtypes.float16) and not _native_f16():
        # Stored as their bits: the `half` constants would need conversions.
        items = [int(v) for v in flat.view(np.uint16)]
        mem = _I16
    arr_ty = ir.ArrayType(mem, len(items))
    g = ir.GlobalVariable(em.module, arr_ty, name=em.module.get_unique_name("table"))
    g.global_constant, g.linkage = True, "internal"
    g.initializer = ir.Constant(arr_ty, items)
    ptr = em.b.gep(g, [ir.Constant(_I64, 0), ir.Constant(_I64, 0)], inbounds=True)
    return em.load(ptr, em.linear(idx, t.shape), t.dtype)


def _clamp_index(em: _Emitter, i: ir.Value, size: int) -> ir.Value:
    lo = em.b.select(em.b.icmp_signed("<", i, ir.Constant(_I64, 0)), ir.Constant(_I64, 0), i)
    hi = ir.Constant(_I64, size - 1)
    return em.b.select(em.b.icmp_signed(">", lo, hi), hi, lo)


def _concatenate(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    # Every piece is read at a clamped index and the right one selected: branch-free, so
    # the loop stays vectorizable (the reads are side-effect free).
    dim = op.attributes["dimension"]
    result: ir.Value | None = None
    offset = 0
    for v in op.operands:
        size = v.type.shape[dim]
        if size == 0:
            continue
        local = em.b.sub(idx[dim], ir.Constant(_I64, offset))
        sub = list(idx)
        sub[dim] = _clamp_index(em, local, size)
        x = em.gen(v, sub)
        if result is None:
            result = x
        else:
            result = em.select(em.b.icmp_signed(">=", local, ir.Constant(_I64, 0)), x, result)
        offset += size
    assert result is not None
    return result


def _pad(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    shape = op.operands[0].type.shape
    lows, interiors = op.attributes["edge_padding_low"], op.attributes["interior_padding"]
    inside: ir.Value = ir.Constant(_I1, 1)
    sub = []
    for i, size, lo, interior in zip(idx, shape, lows, interiors, strict=True):
        if size == 0:
            return em.gen(op.operands[1], [])
        rel = em.b.sub(i, ir.Constant(_I64, lo))
        step = ir.Constant(_I64, interior + 1)
        q = em.b.sdiv(rel, step)
        ok = em.b.and_(em.b.icmp_signed(">=", rel, ir.Constant(_I64, 0)),
                       em.b.icmp_signed("<", q, ir.Constant(_I64, size)))
        if interior:
            ok = em.b.and_(ok, em.b.icmp_signed("==", em.b.srem(rel, step), ir.Constant(_I64, 0)))
        inside = em.b.and_(inside, ok)
        sub.append(_clamp_index(em, q, size))
    return em.select(inside, em.gen(op.operands[0], sub), em.gen(op.operands[1], []))


_STRUCTURAL.update({
    "stablehlo.broadcast_in_dim": _broadcast, "stablehlo.reshape": _reshape,
    "stablehlo.transpose": _transpose, "stablehlo.slice": _slice,
    "stablehlo.reverse": _reverse, "stablehlo.iota": _iota, "stablehlo.constant": _constant,
    "stablehlo.concatenate": _concatenate, "stablehlo.pad": _pad,
})
