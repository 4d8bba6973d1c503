"""The elemental emitter: one LLVM function per loop fusion (`hlo.fusion` of kind kLoop).

For each root of the fused computation, the function holds one flat loop over the root's
elements in row-major order; an element is computed by composing per-op element generators
(`_Emitter.gen(value, index)`) over the fused ops: index arithmetic for the structural ops
(broadcast_in_dim, reshape, transpose, slice, iota, concatenate, pad, reverse), scalar
arithmetic for the elementwise ops and the `mathlib` functions for transcendental ones. No
temporaries are materialized inside a fusion.

Dtypes: bool is i1 in registers and i8 in memory; float16 and bfloat16 are computed in float32
and every op producing them rounds its result to their precision (as the reference backend,
which rounds each op once), bfloat16 by round-to-nearest-even bit arithmetic. Semantics follow
the reference backend's kernels (XLA CPU's): see `backends/reference/kernels/elementwise.py`.
"""
from __future__ import annotations

import ctypes
import math
from typing import Callable, Sequence

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm import jit, mathlib
from justjax._src.core import dtypes
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op, Value

__all__ = ["compile_fusion", "CompiledFusion"]

_I1, _I8, _I16, _I32, _I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
_F16, _F32, _F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
_LOW = (np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16))

# StableHLO opcode -> mathlib function name.
_MATH = {
    "stablehlo.exponential": "exp", "stablehlo.exponential_minus_one": "expm1",
    "stablehlo.log": "log", "stablehlo.log_plus_one": "log1p", "stablehlo.tanh": "tanh",
    "stablehlo.logistic": "logistic", "stablehlo.sine": "sin", "stablehlo.cosine": "cos",
    "stablehlo.tan": "tan", "stablehlo.cbrt": "cbrt", "stablehlo.power": "pow",
    "stablehlo.atan2": "atan2", "chlo.erf": "erf", "chlo.erf_inv": "erf_inv",
    "chlo.atan": "atan", "chlo.asin": "asin", "chlo.acos": "acos", "chlo.sinh": "sinh",
    "chlo.cosh": "cosh", "chlo.lgamma": "lgamma", "chlo.digamma": "digamma",
}
_UNARY_INTRINSICS = {"stablehlo.floor": "llvm.floor", "stablehlo.ceil": "llvm.ceil",
                     "stablehlo.round_nearest_afz": "llvm.round",
                     "stablehlo.round_nearest_even": "llvm.roundeven",
                     "stablehlo.sqrt": "llvm.sqrt"}


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in _LOW


def _compute_type(dt: np.dtype) -> ir.Type:
    """The register type of an element of `dt` (float16/bfloat16 computed in float32)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return _I1
    if dt.kind in "iu":
        return ir.IntType(dt.itemsize * 8)
    if dt in _LOW or dt == np.float32:
        return _F32
    if dt == np.float64:
        return _F64
    raise TypeError(f"llvm emitter: unsupported dtype {dt}")


def _memory_type(dt: np.dtype) -> ir.Type:
    """The in-memory type of an element of `dt` (bool as i8, bfloat16 as its i16 bits)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return _I8
    if dt == np.dtype(dtypes.float16):
        return _F16
    if dt == np.dtype(dtypes.bfloat16):
        return _I16
    return _compute_type(dt)


def _const(dt: np.dtype, value: object) -> ir.Constant:
    """A compute-type constant of element `value` of dtype `dt`."""
    ty = _compute_type(dt)
    if isinstance(ty, ir.IntType):
        v = int(np.asarray(value).astype(dt).item())
        return ir.Constant(ty, v & ((1 << ty.width) - 1))
    return ir.Constant(ty, float(np.asarray(value).astype(np.float64)))


class _Emitter:
    """Element generators for one fused computation at one builder position."""

    def __init__(self, module: ir.Module, fn: ir.Function, block: hlo.Block,
                 params: Sequence[ir.Value]) -> None:
        self.module, self.fn, self.b = module, fn, ir.IRBuilder()
        self.defining: dict[Value, Op] = {r: op for op in block.walk() for r in op.results}
        self.params = dict(zip(block.args, params, strict=True))
        self.cache: dict[tuple, ir.Value] = {}
        # Index lists made by `delinear`, with their flat offset and shape: re-linearizing
        # one in the same shape gives the offset back, so elementwise chains load at the loop
        # counter itself (which LLVM vectorizes) instead of through divisions.
        self.flat: dict[tuple[int, ...], tuple[ir.Value, tuple[int, ...]]] = {}
        # Keys hold `id`s of index values: keep the values alive so ids are never reused.
        self.alive: list[Sequence[ir.Value]] = []
        # Scalars bound to block arguments of reduce bodies while their loop is emitted.
        self.scalars: dict[Value, ir.Value] = {}
        # Reduce-body results kept unrounded: monoid reductions of float16/bfloat16
        # accumulate in float32 and round once (as the reference backend).
        self.exact: set[Value] = set()

    # -- helpers ---------------------------------------------------------------------------

    def intrinsic(self, name: str, args: Sequence[ir.Value], ret: ir.Type | None = None
                  ) -> ir.Value:
        ty = args[0].type
        ret = ret or ty
        fn = self.module.declare_intrinsic(name, [ty] if ret is ty else [ret, ty],
                                           ir.FunctionType(ret, [a.type for a in args]))
        return self.b.call(fn, list(args))

    def linear(self, index: Sequence[ir.Value], shape: Sequence[int]) -> ir.Value:
        """The row-major offset of `index` in `shape`."""
        known = self.flat.get(tuple(id(i) for i in index))
        if known is not None and known[1] == tuple(shape):
            return known[0]
        offset: ir.Value = ir.Constant(_I64, 0)
        for i, size in zip(index, shape, strict=True):
            offset = self.b.add(self.b.mul(offset, ir.Constant(_I64, size)), i)
        return offset

    def delinear(self, offset: ir.Value, shape: Sequence[int]) -> list[ir.Value]:
        """The index of row-major `offset` in `shape`."""
        index: list[ir.Value] = []
        flat = offset
        for size in reversed(shape):
            c = ir.Constant(_I64, size)
            index.append(self.b.urem(offset, c))
            offset = self.b.udiv(offset, c)
        index.reverse()
        self.alive.append(index)
        self.flat[tuple(id(i) for i in index)] = (flat, tuple(shape))
        return index

    def round_low(self, x: ir.Value, dt: np.dtype) -> ir.Value:
        """A float32 value rounded to `dt`'s precision (for float16/bfloat16), still float32."""
        if dt == np.dtype(dtypes.float16):
            return self.b.fpext(self.b.fptrunc(x, _F16), _F32)
        if dt == np.dtype(dtypes.bfloat16):
            return self.b.bitcast(self.b.shl(self.b.zext(self.bf16_bits(x), _I32),
                                             ir.Constant(_I32, 16)), _F32)
        return x

    def bf16_bits(self, x: ir.Value) -> ir.Value:
        """The bfloat16 bits of float32 `x`, rounded to nearest even; NaNs stay (quiet) NaNs."""
        b = self.b
        bits = b.bitcast(x, _I32)
        lsb = b.and_(b.lshr(bits, ir.Constant(_I32, 16)), ir.Constant(_I32, 1))
        rounded = b.add(bits, b.add(lsb, ir.Constant(_I32, 0x7FFF)))
        quiet = b.or_(bits, ir.Constant(_I32, 0x400000))
        out = b.select(b.fcmp_unordered("uno", x, x), quiet, rounded)
        return b.trunc(b.lshr(out, ir.Constant(_I32, 16)), _I16)

    def load(self, ptr: ir.Value, offset: ir.Value, dt: np.dtype) -> ir.Value:
        raw = self.b.load(self.b.gep(ptr, [offset], inbounds=True))
        if dt == np.bool_:
            return self.b.icmp_unsigned("!=", raw, ir.Constant(_I8, 0))
        if dt == np.dtype(dtypes.float16):
            return self.b.fpext(raw, _F32)
        if dt == np.dtype(dtypes.bfloat16):
            return self.b.bitcast(self.b.shl(self.b.zext(raw, _I32), ir.Constant(_I32, 16)), _F32)
        return raw

    def store(self, x: ir.Value, ptr: ir.Value, offset: ir.Value, dt: np.dtype) -> None:
        if dt == np.bool_:
            x = self.b.zext(x, _I8)
        elif dt == np.dtype(dtypes.float16):
            x = self.b.fptrunc(x, _F16)
        elif dt == np.dtype(dtypes.bfloat16):
            x = self.bf16_bits(x)
        self.b.store(x, self.b.gep(ptr, [offset], inbounds=True))

    # -- generators ------------------------------------------------------------------------

    def gen(self, value: Value, index: Sequence[ir.Value]) -> ir.Value:
        """The element of `value` at `index` (i64 values, one per dimension)."""
        self.alive.append(index)
        key = (value.id, tuple(id(i) for i in index))
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        type_ = value.type
        assert isinstance(type_, hlo.TensorType)
        if value in self.scalars:
            return self.scalars[value]
        if value in self.params:
            out = self.load(self.params[value], self.linear(index, type_.shape), type_.dtype)
        else:
            op = self.defining[value]
            if op.opcode == "stablehlo.reduce":
                out = _reduce(self, op, op.results.index(value), list(index))
            else:
                out = _emit_op(self, op, list(index))
            if op.opcode not in _NO_ROUND and value not in self.exact:
                out = self.round_low(out, type_.dtype)
        self.cache[key] = out
        return out


class CompiledFusion:
    """A fusion compiled to one native function `fused(operands..., results...)`.

    Attributes:
      llvm_ir: the module's LLVM IR after O3.
    """

    def __init__(self, op: Op, llvm_ir: str, engine: llvm.ExecutionEngine,
                 cfunc: Callable[..., None]) -> None:
        self.op, self.llvm_ir, self._engine, self._cfunc = op, llvm_ir, engine, cfunc

    def __call__(self, *operands: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
        """Runs the fusion on NumPy operands (of the fusion's operand dtypes and shapes).

        Returns:
          The result array, or a tuple of them for a multi-output fusion.
        """
        # (np.ascontiguousarray would make 0-d arrays 1-d.)
        args = [np.asarray(a, dtype=t.dtype, order="C")
                for a, t in zip(operands, self.op.operand_types, strict=True)]
        for a, t in zip(args, self.op.operand_types, strict=True):
            if a.shape != t.shape:
                raise ValueError(f"fusion operand of shape {a.shape}, expected {t.shape}")
        outs = [np.empty(t.shape, t.dtype) for t in self.op.result_types]
        self._cfunc(*[a.ctypes.data_as(ctypes.c_void_p) for a in args + outs])
        return outs[0] if len(outs) == 1 else tuple(outs)


def _emit_root_loop(em: _Emitter, root: Value, out: ir.Value) -> None:
    """Appends to the function a flat loop computing every element of `root` into `out`."""
    t = root.type
    assert isinstance(t, hlo.TensorType)
    fn = em.fn
    pre = em.b.block
    body, done = fn.append_basic_block("body"), fn.append_basic_block("done")
    if t.size == 0:
        em.b.branch(done)
        em.b.position_at_end(done)
        return
    em.b.branch(body)
    em.b.position_at_end(body)
    i = em.b.phi(_I64)
    i.add_incoming(ir.Constant(_I64, 0), pre)
    em.cache.clear()  # values of another loop do not dominate this one
    em.store(em.gen(root, em.delinear(i, t.shape)), out, i, t.dtype)
    nxt = em.b.add(i, ir.Constant(_I64, 1), flags=["nsw", "nuw"])
    i.add_incoming(nxt, em.b.block)
    em.b.cbranch(em.b.icmp_signed("<", nxt, ir.Constant(_I64, t.size)), body, done)
    em.b.position_at_end(done)


def build_module(op: Op) -> ir.Module:
    """The llvmlite module of fusion `op`: `void fused(ptr operands..., ptr results...)`."""
    module = ir.Module(name="fusion")
    module.triple = llvm.get_process_triple()
    module.data_layout = str(jit.host_target_machine().target_data)
    types = [t.dtype for t in op.operand_types + op.result_types]
    ptrs = [_memory_type(dt).as_pointer() for dt in types]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), ptrs), name="fused")
    for arg in fn.args:
        # Buffers never overlap: noalias lets LLVM vectorize without runtime overlap checks.
        arg.add_attribute("noalias")
    block = op.regions[0].block
    n_in = len(op.operands)
    em = _Emitter(module, fn, block, fn.args[:n_in])
    em.b.position_at_end(fn.append_basic_block("entry"))
    for root, out in zip(block.terminator.operands, fn.args[n_in:], strict=True):
        _emit_root_loop(em, root, out)
    em.b.ret_void()
    return module


def compile_fusion(op: Op) -> CompiledFusion:
    """Compiles an `hlo.fusion` op (kLoop) into one native function for the host CPU at O3.

    Args:
      op: the fusion; its region's block arguments are the parameters and its
        `stablehlo.return` the roots.

    Returns:
      A `CompiledFusion`, callable on NumPy operands, returning NumPy result(s).
    """
    mod = llvm.parse_assembly(str(build_module(op)))
    mod.verify()
    jit.optimize(mod)
    # The engine takes ownership of its target machine and frees it with itself: give it a
    # fresh one, not jit's shared cached machine.
    engine = llvm.create_mcjit_compiler(mod, jit.host_target_machine.__wrapped__())
    engine.finalize_object()
    n = len(op.operands) + len(op.results)
    proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * n))
    return CompiledFusion(op, str(mod), engine, proto(engine.get_function_address("fused")))



# ---------------------------------------------------------------------------------------------
# Per-op element generators.

# Ops whose float16/bfloat16 results are exact already (moves, selects, loads).
_NO_ROUND = frozenset("stablehlo." + n for n in (
    "broadcast_in_dim", "reshape", "transpose", "slice", "concatenate", "pad", "reverse",
    "select", "clamp", "negate", "abs", "maximum", "minimum", "constant"))


def _operand_dtype(op: Op, i: int = 0) -> np.dtype:
    t = op.operands[i].type
    assert isinstance(t, hlo.TensorType)
    return t.dtype


def _emit_op(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    """The element at `idx` of `op`'s single result."""
    handler = _STRUCTURAL.get(op.opcode)
    if handler is not None:
        return handler(em, op, idx)
    args = [em.gen(v, idx) for v in op.operands]
    dt = _operand_dtype(op) if op.operands else op.result.type.dtype
    if op.opcode in _MATH and _is_float(dt):
        f = mathlib.define(em.module, _MATH[op.opcode], "f64" if dt == np.float64 else "f32")
        return em.b.call(f, args)
    if op.opcode == "stablehlo.convert":
        return _convert(em, args[0], dt, op.result.type.dtype)
    if op.opcode == "stablehlo.compare":
        return _compare(em, op, args, dt)
    fn = _float_ops.get(op.opcode) if _is_float(dt) else _int_ops.get(op.opcode)
    if fn is None:
        raise ValueError(f"llvm emitter: unsupported op {op.opcode} on {dt}")
    return fn(em, dt, *args)


def _broadcast(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    shape = op.operands[0].type.shape
    dims = op.attributes["broadcast_dimensions"]
    sub = [ir.Constant(_I64, 0) if size == 1 else idx[d]
           for d, size in zip(dims, shape, strict=True)]
    return em.gen(op.operands[0], sub)


def _reshape(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    flat = em.linear(idx, op.result.type.shape)
    return em.gen(op.operands[0], em.delinear(flat, op.operands[0].type.shape))


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
    return _convert(em, i, np.dtype(np.int64), dt)


def _constant(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    t = op.result.type
    value = np.broadcast_to(np.asarray(op.attributes["value"], t.dtype), t.shape)
    flat = value.reshape(-1)
    if flat.size == 0 or (flat == flat[0]).all() and not (np.isnan(flat).any() if
                                                          _is_float(t.dtype) else False):
        return _const(t.dtype, flat[0] if flat.size else 0)
    # A non-splat constant becomes a global table in memory form.
    mem = _memory_type(t.dtype)
    if t.dtype == np.dtype(dtypes.bfloat16):
        items = [int(v) for v in flat.view(np.uint16)]
    elif t.dtype == np.bool_ or t.dtype.kind in "iu":
        items = [int(v) & ((1 << mem.width) - 1) for v in flat.astype(np.int64)
                 ] if t.dtype.kind != "u" else [int(v) for v in flat]
    else:
        items = [float(v) for v in flat.astype(np.float64)]
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
            result = em.b.select(em.b.icmp_signed(">=", local, ir.Constant(_I64, 0)), x, result)
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
    return em.b.select(inside, em.gen(op.operands[0], sub), em.gen(op.operands[1], []))


def _select(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    pred = em.gen(op.operands[0], [] if op.operands[0].type.rank == 0 else idx)
    return em.b.select(pred, em.gen(op.operands[1], idx), em.gen(op.operands[2], idx))


def _clamp(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    # Scalar bounds broadcast (StableHLO allows rank-0 min/max).
    lo, x, hi = (em.gen(v, [] if v.type.rank == 0 else idx) for v in op.operands)
    dt = op.result.type.dtype
    ops = _float_ops if _is_float(dt) else _int_ops
    return ops["stablehlo.minimum"](em, dt, ops["stablehlo.maximum"](em, dt, x, lo), hi)


_STRUCTURAL: dict[str, Callable[[_Emitter, Op, list[ir.Value]], ir.Value]] = {
    "stablehlo.broadcast_in_dim": _broadcast, "stablehlo.reshape": _reshape,
    "stablehlo.transpose": _transpose, "stablehlo.slice": _slice,
    "stablehlo.reverse": _reverse, "stablehlo.iota": _iota, "stablehlo.constant": _constant,
    "stablehlo.concatenate": _concatenate, "stablehlo.pad": _pad,
    "stablehlo.select": _select, "stablehlo.clamp": _clamp,
}


# -- conversions and comparisons ---------------------------------------------------------------

def _convert(em: _Emitter, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """`stablehlo.convert` with the reference's rules: float -> int truncates and saturates
    (NaN -> 0), anything -> bool is `x != 0`, integers wrap."""
    b = em.b
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
            return b.fpext(b.fptrunc(_to_f32_odd(em, x), _F16), _F32)
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


_float_ops: dict[str, Callable[..., ir.Value]] = {
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
    "stablehlo.rsqrt": lambda em, dt, x: em.b.fdiv(ir.Constant(x.type, 1.0),
                                                   em.intrinsic("llvm.sqrt", [x])),
    "chlo.square": lambda em, dt, x: em.b.fmul(x, x),
    **{k: _fun(v) for k, v in _UNARY_INTRINSICS.items()},
}


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


_int_ops: dict[str, Callable[..., ir.Value]] = {
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
}


# -- reductions --------------------------------------------------------------------------------

_MONOIDS = frozenset("stablehlo." + n for n in ("add", "multiply", "maximum", "minimum",
                                                 "and", "or"))


def _reduce(em: _Emitter, op: Op, which: int, idx: list[ir.Value]) -> ir.Value:
    """Result `which` of `stablehlo.reduce` at `idx`: a loop over the reduced elements (in
    row-major order) folding `acc = body(acc, x)` from the initial values."""
    b = em.b
    count = len(op.results)
    inputs, inits = op.operands[:count], op.operands[count:]
    dims = tuple(op.attributes["dimensions"])
    shape = inputs[0].type.shape
    kept = [d for d in range(len(shape)) if d not in dims]
    red_shape = [shape[d] for d in dims]
    total = math.prod(red_shape)
    start = [em.gen(v, []) for v in inits]
    if total == 0:
        return start[which]
    body = op.regions[0].block
    ret = body.terminator.operands
    if count == 1 and len(body.ops) == 2 and body.ops[0].opcode in _MONOIDS:
        em.exact.add(ret[0])
    pre = b.block
    loop, after = em.fn.append_basic_block("reduce"), em.fn.append_basic_block("reduced")
    b.branch(loop)
    b.position_at_end(loop)
    j = b.phi(_I64)
    j.add_incoming(ir.Constant(_I64, 0), pre)
    accs = [b.phi(s_.type) for s_ in start]
    for acc, s_ in zip(accs, start, strict=True):
        acc.add_incoming(s_, pre)
    saved = dict(em.cache)
    full: list[ir.Value] = [ir.Constant(_I64, 0)] * len(shape)
    for d, i in zip(kept, idx, strict=True):
        full[d] = i
    for d, i in zip(dims, em.delinear(j, red_shape), strict=True):
        full[d] = i
    xs = [em.gen(v, full) for v in inputs]
    em.scalars.update(zip(body.args, [*accs, *xs], strict=True))
    new = [em.gen(v, []) for v in ret]
    for v in body.args:
        del em.scalars[v]
    # Values emitted inside the loop do not dominate code after it.
    em.cache = saved
    latch = b.block
    nxt = b.add(j, ir.Constant(_I64, 1), flags=["nsw", "nuw"])
    j.add_incoming(nxt, latch)
    for acc, n in zip(accs, new, strict=True):
        acc.add_incoming(n, latch)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(_I64, total)), loop, after)
    b.position_at_end(after)
    return new[which]
