"""The elemental emitter: one LLVM function per loop fusion (`hlo.fusion` of kind kLoop).

For each root of the fused computation, the function holds a loop over the root's elements in
row-major order (one flat loop, or a loop over rows around a loop over a long minor dimension,
so that index arithmetic stays affine in the inner counter and LLVM vectorizes contiguous
reads); an element is computed by composing per-op element generators
(`_Emitter.gen(value, index)`) over the fused ops: index arithmetic for the structural ops
(broadcast_in_dim, reshape, transpose, slice, iota, concatenate, pad, reverse, gather, dynamic
slices), scalar arithmetic for the elementwise ops and the `mathlib` functions for
transcendental ones. No temporaries are materialized inside a fusion. Roots with a loop
structure of their own (dynamic_update_slice and scatter: copy, then the update window only)
have root emitters (`ROOT_EMITTERS`).

Dtypes: bool is i1 in registers and i8 in memory; float16 and bfloat16 are computed in float32
and every op producing them rounds its result to their precision (as the reference backend,
which rounds each op once), bfloat16 by round-to-nearest-even bit arithmetic, float16 by the
F16C conversions or, on hosts without them, by integer bit arithmetic (LLVM would otherwise
call compiler-rt helpers the JIT does not link); complex64/complex128 are `{re, im}` structs
in registers and in memory (`complexmath.py`). Semantics follow the reference backend's
kernels (XLA CPU's): see `backends/reference/kernels/elementwise.py`.

Other modules of this package register into the tables here (imported at the end):
`arithmetic.py` (conversions, comparisons, float and integer arithmetic), `structural.py`
(the structural ops' index arithmetic, iota, constants), `indexing.py` (gather, dynamic
slices, scatter), `complexmath.py`, `elementwise_extra.py` (bit ops, reduce_precision,
integer power, CHLO special functions), `reductions.py`.
"""
from __future__ import annotations

import ctypes
import functools
import importlib
from typing import Callable, Sequence

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.mathlib import link
from justjax._src.backends.llvm.runtime import host
from justjax._src.core import dtypes
from justjax._src.hlo import ir as hlo
from justjax._src.hlo import opcodes
from justjax._src.hlo.ir import Op, Value

__all__ = ["compile_fusion", "CompiledFusion", "compute_type", "emit_fusion", "emit_region",
           "memory_type", "new_module", "scalar_emitter", "Unsupported"]


class Unsupported(ValueError):
    """An op or dtype the emitter has no code for (the backend runs it another way)."""

_I1, _I8, _I16, _I32, _I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
_F16, _F32, _F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
_C64, _C128 = ir.LiteralStructType([_F32, _F32]), ir.LiteralStructType([_F64, _F64])
_LOW = (np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16))

# Whether float16 conversions use the host's F16C instructions (None: when the host has
# them). False emits them as integer bit arithmetic; tests set it to check that path.
F16C: bool | None = None


@functools.lru_cache(maxsize=1)
def _host_has_f16c() -> bool:
    host.host_target_machine()
    return "+f16c" in llvm.get_host_cpu_features().flatten().split(",")


def _native_f16() -> bool:
    return _host_has_f16c() if F16C is None else F16C

# StableHLO opcode -> mathlib function name.
_MATH = {
    "stablehlo.exponential": "exp", "stablehlo.exponential_minus_one": "expm1",
    "stablehlo.log": "log", "stablehlo.log_plus_one": "log1p", "stablehlo.tanh": "tanh",
    "stablehlo.logistic": "logistic", "stablehlo.sine": "sin", "stablehlo.cosine": "cos",
    "stablehlo.tan": "tan", "stablehlo.cbrt": "cbrt", "stablehlo.power": "pow",
    "stablehlo.rsqrt": "rsqrt",
    "stablehlo.atan2": "atan2", "chlo.erf": "erf", "chlo.erf_inv": "erf_inv",
    "chlo.atan": "atan", "chlo.asin": "asin", "chlo.acos": "acos", "chlo.sinh": "sinh",
    "chlo.cosh": "cosh", "chlo.lgamma": "lgamma", "chlo.digamma": "digamma",
}


# Emitters of elementwise ops that need the op itself (attributes, result dtype):
# `emit(em, op, args) -> element` given the operands' elements (`elementwise_extra.py`).
OP_EMITTERS: dict[str, Callable[..., ir.Value]] = {}
# The same for ops with a complex operand or result (`complexmath.py`).
COMPLEX_OPS: dict[str, Callable[..., ir.Value]] = {}
# Generators of ops with several results: `gen(em, op, which, index) -> element` of result
# `which` (`reductions.py`: reduce).
MULTI_RESULT_GENERATORS: dict[str, Callable[..., ir.Value]] = {}
# Root emitters: `emit(em, op, root, out_ptr) -> bool` writes the whole root `root` of `op` into
# `out_ptr` with a loop structure of its own (a column reduction, a scatter) and returns True,
# or returns False to leave it to the flat loop over the root's elements.
ROOT_EMITTERS: dict[str, Callable[..., bool]] = {}
# Scalar arithmetic by opcode, `fn(em, dtype, *operand elements) -> element`, for float and for
# integer or bool operands (`arithmetic.py`; `elementwise_extra.py` adds integer power).
_float_ops: dict[str, Callable[..., ir.Value]] = {}
_int_ops: dict[str, Callable[..., ir.Value]] = {}


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in _LOW


def _is_complex(dt: np.dtype) -> bool:
    return np.dtype(dt).kind == "c"


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
    if dt == np.complex64:
        return _C64
    if dt == np.complex128:
        return _C128
    raise Unsupported(f"llvm emitter: unsupported dtype {dt}")


def _memory_type(dt: np.dtype) -> ir.Type:
    """The in-memory type of an element of `dt` (bool as i8, bfloat16 as its i16 bits,
    complex as a `{re, im}` struct)."""
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
    if isinstance(ty, ir.LiteralStructType):
        z = complex(np.asarray(value).astype(np.complex128))
        return ir.Constant(ty, [ir.Constant(ty.elements[0], z.real),
                                ir.Constant(ty.elements[1], z.imag)])
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
        # Set by `emit_fusion`: the output pointer of each root, and the positions (in
        # operands + results) of pointers that may share memory (results in place).
        self.outputs: dict[Value, ir.Value] = {}
        self.shared: frozenset[int] = frozenset()
        self.done: set[Value] = set()
        # The fewest lanes (`link.full_width_lanes`) of the linked math functions called
        # since the innermost element loop opened (None: none called).
        self.linked_lanes: int | None = None
        self._block = block
        self._uses: dict[Value, int] | None = None

    def use_count(self, value: Value) -> int:
        """How many operands (of ops and terminators, in nested regions too) read `value`
        in the emitted block."""
        if self._uses is None:
            uses: dict[Value, int] = {}
            for op in self._block.walk():
                for v in op.operands:
                    uses[v] = uses.get(v, 0) + 1
            self._uses = uses
        return self._uses.get(value, 0)

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
            if not _native_f16():
                return self.f16_to_f32(self.f16_bits(x))
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

    def f16_bits(self, x: ir.Value) -> ir.Value:
        """The float16 bits (i16) of float32 `x` rounded to nearest even, by integer
        arithmetic: overflow to inf, subnormals rounded by one float addition, NaNs quiet
        keeping their sign and top payload bits."""
        b = self.b
        bits = b.bitcast(x, _I32)
        sign = b.and_(bits, ir.Constant(_I32, 0x80000000))
        mag = b.xor(bits, sign)
        # Normal results: rebias the exponent, round the 13 dropped bits to even.
        odd = b.and_(b.lshr(mag, ir.Constant(_I32, 13)), ir.Constant(_I32, 1))
        normal = b.lshr(b.add(b.add(mag, ir.Constant(_I32, (-0x38000000 + 0xFFF) & 0xFFFFFFFF)),
                              odd), ir.Constant(_I32, 13))
        # Below 2**-14: adding 0.5 leaves the float16 subnormal's bits in the low mantissa.
        magic = ir.Constant(_I32, 0x3F000000)
        shifted = b.fadd(b.bitcast(mag, _F32), b.bitcast(magic, _F32))
        subnormal = b.sub(b.bitcast(shifted, _I32), magic)
        payload = b.and_(b.lshr(mag, ir.Constant(_I32, 13)), ir.Constant(_I32, 0x3FF))
        nan = b.or_(payload, ir.Constant(_I32, 0x7E00))
        big = b.select(b.icmp_unsigned(">", mag, ir.Constant(_I32, 0x7F800000)), nan,
                       ir.Constant(_I32, 0x7C00))
        out = b.select(b.icmp_unsigned("<", mag, ir.Constant(_I32, 0x38800000)), subnormal,
                       normal)
        out = b.select(b.icmp_unsigned(">=", mag, ir.Constant(_I32, 0x47800000)), big, out)
        out = b.or_(out, b.lshr(sign, ir.Constant(_I32, 16)))
        return b.trunc(out, _I16)

    def f16_to_f32(self, h: ir.Value) -> ir.Value:
        """The float32 value of float16 bits `h` (i16), exactly, by integer arithmetic."""
        b = self.b
        h32 = b.zext(h, _I32)
        sign = b.shl(b.and_(h32, ir.Constant(_I32, 0x8000)), ir.Constant(_I32, 16))
        o = b.shl(b.and_(h32, ir.Constant(_I32, 0x7FFF)), ir.Constant(_I32, 13))
        exp = b.and_(o, ir.Constant(_I32, 0x0F800000))
        normal = b.add(o, ir.Constant(_I32, 0x38000000))
        special = b.add(o, ir.Constant(_I32, 0x70000000))
        # Subnormals: 2**-14 * (1 + m/1024) - 2**-14, exact in float32.
        magic = ir.Constant(_I32, 0x38800000)
        sub = b.fsub(b.bitcast(b.add(o, magic), _F32), b.bitcast(magic, _F32))
        out = b.select(b.icmp_unsigned("==", exp, ir.Constant(_I32, 0)),
                       b.bitcast(sub, _I32), normal)
        out = b.select(b.icmp_unsigned("==", exp, ir.Constant(_I32, 0x0F800000)), special, out)
        return b.bitcast(b.or_(out, sign), _F32)

    def select(self, cond: ir.Value, x: ir.Value, y: ir.Value) -> ir.Value:
        """`cond ? x : y`, complex structs part by part (so loops stay vectorizable)."""
        if isinstance(x.type, ir.LiteralStructType):
            parts = [self.b.select(cond, self.b.extract_value(x, k),
                                   self.b.extract_value(y, k)) for k in range(2)]
            return self.pack(x.type, parts)
        return self.b.select(cond, x, y)

    def pack(self, ty: ir.LiteralStructType, parts: Sequence[ir.Value]) -> ir.Value:
        """The struct of type `ty` holding `parts`."""
        out: ir.Value = ir.Constant(ty, ir.Undefined)
        for k, part in enumerate(parts):
            out = self.b.insert_value(out, part, k)
        return out

    def load(self, ptr: ir.Value, offset: ir.Value, dt: np.dtype) -> ir.Value:
        if _is_complex(dt):
            # Part by part: the loop vectorizer handles the interleaved loads.
            ty = _compute_type(dt)
            return self.pack(ty, [self.b.load(self.b.gep(ptr, [offset, ir.Constant(_I32, k)],
                                                         inbounds=True)) for k in range(2)])
        if dt == np.dtype(dtypes.float16) and not _native_f16():
            bits = self.b.load(self.b.gep(self.b.bitcast(ptr, _I16.as_pointer()), [offset],
                                          inbounds=True))
            return self.f16_to_f32(bits)
        raw = self.b.load(self.b.gep(ptr, [offset], inbounds=True))
        if dt == np.bool_:
            return self.b.icmp_unsigned("!=", raw, ir.Constant(_I8, 0))
        if dt == np.dtype(dtypes.float16):
            return self.b.fpext(raw, _F32)
        if dt == np.dtype(dtypes.bfloat16):
            return self.b.bitcast(self.b.shl(self.b.zext(raw, _I32), ir.Constant(_I32, 16)), _F32)
        return raw

    def store(self, x: ir.Value, ptr: ir.Value, offset: ir.Value, dt: np.dtype) -> None:
        if _is_complex(dt):
            for k in range(2):
                self.b.store(self.b.extract_value(x, k),
                             self.b.gep(ptr, [offset, ir.Constant(_I32, k)], inbounds=True))
            return
        if dt == np.dtype(dtypes.float16) and not _native_f16():
            self.b.store(self.f16_bits(x), self.b.gep(self.b.bitcast(ptr, _I16.as_pointer()),
                                                      [offset], inbounds=True))
            return
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
            multi = MULTI_RESULT_GENERATORS.get(op.opcode)
            if multi is not None:
                out = multi(self, op, op.results.index(value), list(index))
            else:
                out = _emit_op(self, op, list(index))
            if op.opcode not in _NO_ROUND and value not in self.exact:
                out = self.round_low(out, type_.dtype)
        self.cache[key] = out
        return out


def scalar_emitter(module: ir.Module, fn: ir.Function, builder: ir.IRBuilder,
                   block: hlo.Block | None = None) -> _Emitter:
    """An emitter writing at `builder` (inside `fn`), for code outside fusions: its `load`,
    `store`, `round_low` and `gen` (of `block`'s values, when given) are the fusions' own.
    Kernels of the backend use it so that their dtype handling is the emitter's."""
    em = _Emitter(module, fn, hlo.Block([], []), [])
    if block is not None:
        # Its arguments are bound as scalars (`emit_region`), not parameters.
        em.defining = {r: op for op in block.walk() for r in op.results}
        em._block = block
    em.b = builder
    return em


def emit_region(module: ir.Module, fn: ir.Function, builder: ir.IRBuilder, block: hlo.Block,
                args: Sequence[ir.Value]) -> list[ir.Value]:
    """Emits a scalar computation (the body of a reduce, sort comparator, scatter update:
    a block on 0-d tensors) at `builder`, with `args` (compute-type scalars) bound to the
    block's arguments.

    Returns:
      The compute-type scalars the block returns.
    """
    em = scalar_emitter(module, fn, builder, block)
    em.scalars.update(zip(block.args, args, strict=True))
    return [em.gen(v, []) for v in block.terminator.operands]


compute_type = _compute_type
memory_type = _memory_type


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


# Roots whose minor dimension has at least this many elements get a loop nest (rows, then
# the minor dimension) instead of one flat loop.
_MIN_INNER = 8


def _counted(em: _Emitter, count: int | ir.Value, name: str,
             start: ir.Value | None = None) -> tuple[ir.Value, ir.Block]:
    """Opens `for i in range(start, count)` (start defaults to 0; the range must not be
    empty) at the builder: returns the counter and the loop's exit block; `_close_counted`
    closes it."""
    pre = em.b.block
    body, done = em.fn.append_basic_block(name), em.fn.append_basic_block(f"{name}.done")
    em.b.branch(body)
    em.b.position_at_end(body)
    i = em.b.phi(_I64)
    i.add_incoming(start if start is not None else ir.Constant(_I64, 0), pre)
    return i, done


def _close_counted(em: _Emitter, i: ir.Value, count: int | ir.Value, done: ir.Block,
                   element_loop: bool = False) -> None:
    """Closes the loop `_counted` opened; an `element_loop` (`_open_element_loop`) is tagged
    with what LLVM is to do with it (`_loop_hints`)."""
    nxt = em.b.add(i, ir.Constant(_I64, 1), flags=["nsw", "nuw"])
    i.add_incoming(nxt, em.b.block)
    limit = count if isinstance(count, ir.Value) else ir.Constant(_I64, count)
    back_edge = em.b.cbranch(em.b.icmp_signed("<", nxt, limit), i.parent, done)
    em.b.position_at_end(done)
    if element_loop:
        hints = _loop_hints(em, count)
        if hints:
            _tag_loop(em.module, back_edge, hints)
        em.linked_lanes = None


def _open_element_loop(em: _Emitter, count: int | ir.Value,
                       start: ir.Value | None = None) -> tuple[ir.Value, ir.Block]:
    """`_counted` for a loop over a root's elements, closed by `_close_counted` with
    `element_loop=True`."""
    em.linked_lanes = None
    return _counted(em, count, "body", start)


def _loop_hints(em: _Emitter, count: int | ir.Value) -> list[tuple[str, int | None]]:
    """The loop metadata of an element loop of `count` iterations whose body was just emitted:
    - calling linked math, it is vectorized at the host's full width (`link.full_width_lanes`);
    - with a constant count (the minor dimension of a loop nest), it is not unrolled: LLVM
      would unroll a short one fully, then vectorize the loop around it across rows, with
      gathers and scatters (a 2x2 pool's gradient over (64, 28, 28, 32) took 0.68 ms so, 0.2
      ms as vectors along its 32 channels).
    """
    hints: list[tuple[str, int | None]] = []
    if em.linked_lanes is not None:
        hints.append(("llvm.loop.vectorize.width", em.linked_lanes))
    if not isinstance(count, ir.Value):
        hints.append(("llvm.loop.unroll.disable", None))
    return hints


def _tag_loop(module: ir.Module, back_edge: ir.Instruction,
              hints: Sequence[tuple[str, int | None]]) -> None:
    """Attaches loop metadata (`!llvm.loop`) holding `hints` (name, i32 value or None) to the
    loop closed by the branch `back_edge`."""
    nodes = [module.add_metadata([ir.MetaDataString(module, name)]
                                 + ([] if value is None else [ir.Constant(ir.IntType(32), value)]))
             for name, value in hints]
    # A loop's metadata starts with a reference to itself, which llvmlite cannot spell in
    # one step: a node unique to this loop (llvmlite merges equal nodes), then pointed at
    # itself. LLVM reads it back as `distinct`.
    loop = module.add_metadata([ir.MetaDataString(module, f"loop {len(module.metadata)}"),
                                *nodes])
    loop.operands = (loop, *nodes)
    back_edge.set_metadata("llvm.loop", loop)


# Transcendentals (the opcode registry's) this backend computes with a few instructions (rsqrt:
# the x86 estimate and two Newton steps, in a mathlib function), as cheap as a division.
_BY_INSTRUCTIONS = frozenset({"stablehlo.sqrt", "stablehlo.rsqrt"})


def is_transcendental(opcode: str) -> bool:
    """Whether `opcode` is a transcendental (the opcode registry's fact) that this backend
    computes by a math-library function (exp, log, sin, erf, ...), not by instructions."""
    entry = opcodes.lookup(opcode)
    return entry is not None and entry.transcendental and opcode not in _BY_INSTRUCTIONS


def parallel_units(type_: hlo.TensorType) -> int:
    """The iterations of the outer loop `_emit_root_loop` makes for a root of `type_`: the
    units a ranged fusion (`emit_fusion(ranged=True)`) splits into [begin, end) ranges."""
    inner = type_.shape[-1] if type_.rank >= 2 else 0
    return type_.size // inner if inner >= _MIN_INNER else type_.size


def _emit_root_loop(em: _Emitter, root: Value, out: ir.Value,
                    bounds: tuple[ir.Value, ir.Value] | None = None) -> None:
    """Appends to the function the loops computing every element of `root` into `out`:
    one flat loop, or for a long minor dimension a loop over the rows around a loop over
    it (index arithmetic then stays affine in the inner counter: slices, dynamic slices,
    pads and broadcasts read contiguous memory that LLVM vectorizes). `bounds`: only the
    outer iterations [begin, end) (`parallel_units`), a non-empty range."""
    t = root.type
    assert isinstance(t, hlo.TensorType)
    if t.size == 0:
        return
    begin, end = bounds if bounds is not None else (None, parallel_units(t))
    em.cache.clear()  # values of another loop do not dominate this one
    inner = t.shape[-1] if t.rank >= 2 else 0
    if inner < _MIN_INNER:
        i, done = _open_element_loop(em, end, begin)
        em.store(em.gen(root, em.delinear(i, t.shape)), out, i, t.dtype)
        _close_counted(em, i, end, done, element_loop=True)
        return
    r, rows_done = _counted(em, end, "rows", begin)
    row_index = em.delinear(r, t.shape[:-1])
    base = em.b.mul(r, ir.Constant(_I64, inner), flags=["nsw", "nuw"])
    j, done = _open_element_loop(em, inner)
    index = [*row_index, j]
    flat = em.b.add(base, j, flags=["nsw", "nuw"])
    # Elementwise reads of operands of the root's shape load at `flat` itself.
    em.alive.append(index)
    em.flat[tuple(id(v) for v in index)] = (flat, tuple(t.shape))
    em.store(em.gen(root, index), out, flat, t.dtype)
    _close_counted(em, j, inner, done, element_loop=True)
    em.cache.clear()  # values of the inner loop do not dominate the rows' latch
    _close_counted(em, r, end, rows_done)


def new_module(name: str) -> ir.Module:
    """An empty llvmlite module for the host CPU (triple and data layout set)."""
    module = ir.Module(name=name)
    module.triple = llvm.get_process_triple()
    module.data_layout = str(host.host_target_machine().target_data)
    return module


def emit_fusion(module: ir.Module, op: Op, name: str = "fused",
                shared: frozenset[int] = frozenset(), ranged: bool = False) -> ir.Function:
    """Defines in `module` the function `void name(ptr operands..., ptr results...)` computing
    the fusion `op` (kLoop): a loop (nest) over each root's elements, or the root's own
    loops for roots with a root emitter (`ROOT_EMITTERS`).

    Args:
      module: the llvmlite module to define the function in.
      op: the `hlo.fusion` op.
      name: the function's name.
      shared: indices (into operands + results) of pointers that may share memory with
        another pointer (a result computed in place over an operand): they are not marked
        `noalias`.
      ranged: the function takes two more arguments, `i64 begin, i64 end`, and computes
        only those outer iterations of its root (`parallel_units`), so that tasks on
        several cores can split it. Only a fusion with one root and no root emitter.

    Returns:
      The function. If the fusion holds an op the emitter does not support, it raises
      `Unsupported` and leaves `module` without the function.
    """
    types = [t.dtype for t in op.operand_types + op.result_types]
    ptrs = [_memory_type(dt).as_pointer() for dt in types]
    block = op.regions[0].block
    if ranged:
        roots = block.terminator.operands
        producer = next((o for o in block.ops if roots[0] in o.results), None)
        if len(roots) != 1 or (producer is not None and producer.opcode in ROOT_EMITTERS):
            raise Unsupported("llvm emitter: only a one-root loop fusion splits into ranges")
        ptrs = [*ptrs, _I64, _I64]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), ptrs), name=name)
    try:
        n_pointers = len(types)
        for i, arg in enumerate(fn.args[:n_pointers]):
            if i not in shared:
                # Buffers never overlap: noalias lets LLVM vectorize without runtime checks.
                arg.add_attribute("noalias")
        n_in = len(op.operands)
        em = _Emitter(module, fn, block, fn.args[:n_in])
        em.b.position_at_end(fn.append_basic_block("entry"))
        em.shared = shared
        outs = fn.args[n_in:n_pointers]
        em.outputs = dict(zip(block.terminator.operands, outs, strict=True))
        if ranged:
            _emit_root_loop(em, block.terminator.operands[0], outs[0],
                            (fn.args[n_pointers], fn.args[n_pointers + 1]))
            em.done.update(block.terminator.operands)
        for root, out in zip(block.terminator.operands, outs, strict=True):
            if root in em.done:
                continue  # written by the root emitter of another root of the same op
            producer = em.defining.get(root)
            special = ROOT_EMITTERS.get(producer.opcode) if producer is not None else None
            if special is None or not special(em, producer, root, out):
                _emit_root_loop(em, root, out)
        em.b.ret_void()
    except (Unsupported, TypeError, ValueError) as e:
        del module.globals[fn.name]
        raise Unsupported(str(e)) from e
    return fn


def build_module(op: Op) -> ir.Module:
    """The llvmlite module of fusion `op`: `void fused(ptr operands..., ptr results...)`."""
    module = new_module("fusion")
    emit_fusion(module, op)
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
    host.optimize(mod)
    # The engine takes ownership of its target machine and frees it with itself: give it a
    # fresh one, not host's shared cached machine.
    engine = llvm.create_mcjit_compiler(mod, host.host_target_machine.__wrapped__())
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
    if op.opcode in _CONTRACTIBLE and _operand_dtype(op) in _FMA_DTYPES:
        fused = _multiply_add(em, op, idx)
        if fused is not None:
            return fused
    args = [em.gen(v, idx) for v in op.operands]
    dt = _operand_dtype(op) if op.operands else op.result.type.dtype
    if _is_complex(dt) or _is_complex(op.result.type.dtype):
        complex_op = COMPLEX_OPS.get(op.opcode)
        if complex_op is None:
            raise Unsupported(f"llvm emitter: unsupported op {op.opcode} on {dt}")
        return complex_op(em, op, args)
    special = OP_EMITTERS.get(op.opcode)
    if special is not None:
        return special(em, op, args)
    if op.opcode in _MATH and _is_float(dt):
        math_dtype = "f64" if dt == np.float64 else "f32"
        f = link.function(em.module, _MATH[op.opcode], math_dtype)
        if link.is_linked(em.module):
            lanes = link.full_width_lanes(math_dtype)
            em.linked_lanes = lanes if em.linked_lanes is None else min(em.linked_lanes, lanes)
        return em.b.call(f, args)
    fn = _float_ops.get(op.opcode) if _is_float(dt) else _int_ops.get(op.opcode)
    if fn is None:
        raise Unsupported(f"llvm emitter: unsupported op {op.opcode} on {dt}")
    return fn(em, dt, *args)


_CONTRACTIBLE = frozenset({"stablehlo.add", "stablehlo.subtract"})
_FMA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _multiply_add(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value | None:
    """`x*y + z` (or `x*y - z`, `z - x*y`) as one fused multiply-add, when nothing else
    reads the product: XLA CPU lets LLVM contract such pairs (on FMA hosts), so its results
    have one rounding where NumPy's have two. When both operands are such products, the
    first is fused, as LLVM's combiner does."""
    for position, value in enumerate(op.operands):
        product = em.defining.get(value)
        if (product is None or product.opcode != "stablehlo.multiply"
                or value in em.params or value in em.scalars or em.use_count(value) != 1):
            continue
        x, y = (em.gen(v, idx) for v in product.operands)
        other = em.gen(op.operands[1 - position], idx)
        if op.opcode == "stablehlo.add":
            return em.intrinsic("llvm.fma", [x, y, other])
        if position == 0:
            return em.intrinsic("llvm.fma", [x, y, em.b.fneg(other)])
        return em.intrinsic("llvm.fma", [em.b.fneg(x), y, other])
    return None


def _select(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    pred = em.gen(op.operands[0], [] if op.operands[0].type.rank == 0 else idx)
    return em.select(pred, em.gen(op.operands[1], idx), em.gen(op.operands[2], idx))


def _clamp(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    # Scalar bounds broadcast (StableHLO allows rank-0 min/max).
    lo, x, hi = (em.gen(v, [] if v.type.rank == 0 else idx) for v in op.operands)
    dt = op.result.type.dtype
    ops = _float_ops if _is_float(dt) else _int_ops
    return ops["stablehlo.minimum"](em, dt, ops["stablehlo.maximum"](em, dt, x, lo), hi)


# Element generators registered by opcode: `gen(em, op, index) -> element` for ops whose
# element is not a function of their operands' elements at the same index (and for select and
# clamp, whose scalar operands broadcast). Other modules of this package add theirs
# (`structural.py`: broadcast, reshape, transpose, slices, iota, constants, concatenate, pad;
# `indexing.py`: gather, dynamic slices).
_STRUCTURAL: dict[str, Callable[[_Emitter, Op, list[ir.Value]], ir.Value]] = {
    "stablehlo.select": _select, "stablehlo.clamp": _clamp,
}


def _register_generators() -> None:
    # These modules add their generators to the tables above on import.
    for name in ("arithmetic", "structural", "reductions", "indexing", "complexmath",
                 "elementwise_extra"):
        importlib.import_module(f"justjax._src.backends.llvm.codegen.{name}")


_register_generators()
