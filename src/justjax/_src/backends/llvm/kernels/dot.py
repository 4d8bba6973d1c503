"""Native kernels of `stablehlo.dot_general` and of XLA CPU's output fusion (`kOutput`).

A dot is a batch of matrix products C[b] (M x N) = A[b] (M x K) B[b] (K x N), where M, N
and K collapse the lhs free, rhs free and contracting dimensions and the result is laid out
(batch, M, N) row-major. Two implementations:

- BLAS (`sgemm`/`dgemm`/`cgemm`/`zgemm` of SciPy's `cython_blas`, called by address): for
  float and complex results when M*N*K reaches `BLAS_MIN_WORK`. BLAS is column-major, so
  the row-major product is computed as C^T = B^T A^T: an operand whose free and
  contracting dimensions each collapse to one stride, one of them 1, is passed as it is
  with the 'N' or 'T' flag; any other layout (and any operand whose dtype is not the
  accumulation dtype: float16/bfloat16/integers into float32) is first copied by a native
  loop into a scratch buffer in (batch, M, K) / (batch, K, N) order. A float16/bfloat16
  result is computed in a float32 scratch and rounded once. Batch dimensions are a native
  loop around the BLAS calls.
- A loop kernel (integers, bools, integer results, mixed real/complex operands, small
  float and complex products): an inner loop
  vectorizable by LLVM, either a reduction over K (`reassoc` adds; when both operands are
  contiguous along K, or N is 1) or an axpy over N accumulating into the result row.

Accumulation follows the reference backend (`accumulate_in`): bools are any(x & y),
integers wrap in the result's width, floats accumulate in float32 (float16, bfloat16 and
integer operands) or float64, an integer result of float operands is the saturating
conversion of the float sum. `precision_config` is ignored (CPU).

The dot is also an element generator inside fusions (`MULTI_RESULT_GENERATORS`): a
matrix-vector dot that absorbed its producers (kLoop), and the output fusion `add(dot, x)`
(kOutput), whose kernel runs the dot through BLAS into the result when large and then adds
`x` in place.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import threading
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import emitter, program, stack
from justjax._src.backends.llvm.codegen.emitter import Unsupported
from justjax._src.backends.llvm.codegen.program import ProgramBuilder
from justjax._src.core import dtypes
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op

__all__ = ["Accumulation", "BLAS_MIN_WORK", "DotSpec", "KernelEmit", "blas_layout",
           "emit_gemm", "multiply_adds"]

_I1, _I8, _I32, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
_F32, _F64 = ir.FloatType(), ir.DoubleType()
_PTR = _I8.as_pointer()
_LOW = (np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16))
_FLOAT_FLAGS = ("reassoc", "contract")

# Below this many multiply-adds per matrix product the loop kernel is used. Measured on
# float32/float64 square products (ns per product, BLAS vs loop kernel at O3 / at O0):
# 4^3 43 vs 25 / 45 vs 175; 8^3 51 vs 51 / 54 vs 650; 12^3 114 vs 322 / 113 vs 2048.
BLAS_MIN_WORK = 256
# BLAS takes 32-bit sizes and strides.
_INT_MAX = 2**31 - 1

_GEMM = {np.dtype(np.float32): "sgemm", np.dtype(np.float64): "dgemm",
         np.dtype(np.complex64): "cgemm", np.dtype(np.complex128): "zgemm"}
_registered: set[str] = set()
_registry_lock = threading.Lock()


# ---------------------------------------------------------------------------------------------
# BLAS by address.

def _capsule_address(capsule: object) -> int:
    """The function pointer a Cython `__pyx_capi__` capsule holds."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return int(get_pointer(capsule, get_name(capsule)))


def _blas_function(program: ProgramBuilder, routine: str) -> ir.Function:
    """Declares BLAS `routine` (all 13 gemm arguments by pointer), registering its address
    from `scipy.linalg.cython_blas` with LLVM once per process."""
    symbol = f"justjax_blas_{routine}"
    with _registry_lock:
        if symbol not in _registered:
            from scipy.linalg import cython_blas
            llvm.add_symbol(symbol, _capsule_address(cython_blas.__pyx_capi__[routine]))
            _registered.add(symbol)
    return program.external(symbol, ir.FunctionType(ir.VoidType(), [_PTR] * 13))


# ---------------------------------------------------------------------------------------------
# Emission helpers shared with the convolution kernels.

class KernelEmit:
    """Code emission in one kernel function: loops, scratch memory, dtype-aware loads."""

    def __init__(self, module: ir.Module, fn: ir.Function, builder: ir.IRBuilder,
                 program: ProgramBuilder) -> None:
        self.module, self.fn, self.b, self.program = module, fn, builder, program
        self.em = emitter.scalar_emitter(module, fn, builder)
        self.indices: list[ir.Value] = []

    @classmethod
    def of(cls, ctx: program.KernelContext) -> KernelEmit:
        return cls(ctx.module, ctx.fn, ctx.builder, ctx.program)

    @staticmethod
    def i64(value: int) -> ir.Constant:
        return ir.Constant(_I64, value)

    def entry_alloca(self, ty: ir.Type) -> ir.Value:
        """A stack slot allocated once per call (in the entry block)."""
        return stack.entry_alloca(self.b, ty)

    @contextlib.contextmanager
    def loop(self, count: int | ir.Value, name: str = "loop") -> Iterator[ir.Value]:
        """`for i in range(count)`: the body is emitted inside the `with` (i64 `i`)."""
        b = self.b
        n = self.i64(count) if isinstance(count, int) else count
        pre = b.block
        body = self.fn.append_basic_block(name)
        done = self.fn.append_basic_block(name + ".end")
        b.cbranch(b.icmp_signed(">", n, self.i64(0)), body, done)
        b.position_at_end(body)
        i = b.phi(_I64)
        i.add_incoming(self.i64(0), pre)
        yield i
        nxt = b.add(i, self.i64(1), flags=["nsw", "nuw"])
        i.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_signed("<", nxt, n), body, done)
        b.position_at_end(done)

    @contextlib.contextmanager
    def nest(self, sizes: Sequence[int], strides: Sequence[Sequence[int]],
             bases: Sequence[ir.Value] | None = None) -> Iterator[list[ir.Value]]:
        """Loops over `sizes` (outermost first); yields, for each list of `strides` (one
        stride per dimension), the offset `base + sum(index[d] * stride[d])`. The loop
        indices are left in `self.indices` (a constant 0 for size-1 dimensions)."""
        offsets = list(bases) if bases is not None else [self.i64(0)] * len(strides)
        indices: list[ir.Value] = []
        with contextlib.ExitStack() as stack:
            for d, size in enumerate(sizes):
                if size == 1:
                    indices.append(self.i64(0))
                    continue
                i = stack.enter_context(self.loop(size))
                indices.append(i)
                offsets = [o if s[d] == 0 else self.b.add(o, self.b.mul(i, self.i64(s[d])))
                           for o, s in zip(offsets, strides, strict=True)]
            self.indices = indices
            yield offsets

    def malloc(self, nbytes: int) -> ir.Value:
        fn = self.program.external("malloc", ir.FunctionType(_PTR, [_I64]))
        return self.b.call(fn, [self.i64(max(nbytes, 1))])

    def free(self, ptr: ir.Value) -> None:
        fn = self.program.external("free", ir.FunctionType(ir.VoidType(), [_PTR]))
        self.b.call(fn, [self.b.bitcast(ptr, _PTR)])

    def memset0(self, ptr: ir.Value, nbytes: int) -> None:
        if nbytes <= 0:
            return
        fn = self.module.declare_intrinsic("llvm.memset", [_PTR, _I64])
        self.b.call(fn, [self.b.bitcast(ptr, _PTR), ir.Constant(_I8, 0), self.i64(nbytes),
                         ir.Constant(_I1, 0)])

    def memcpy(self, dst: ir.Value, src: ir.Value, nbytes: int) -> None:
        if nbytes <= 0:
            return
        fn = self.module.declare_intrinsic("llvm.memcpy", [_PTR, _PTR, _I64])
        self.b.call(fn, [self.b.bitcast(dst, _PTR), self.b.bitcast(src, _PTR),
                         self.i64(nbytes), ir.Constant(_I1, 0)])

    def typed(self, ptr: ir.Value, dt: np.dtype) -> ir.Value:
        return self.b.bitcast(ptr, emitter.memory_type(dt).as_pointer())

    def at(self, ptr: ir.Value, offset: ir.Value) -> ir.Value:
        """`ptr + offset` elements, as an `i8*` (for BLAS)."""
        return self.b.bitcast(self.b.gep(ptr, [offset], inbounds=True), _PTR)

    def copy_strided(self, src: ir.Value, src_dt: np.dtype, src_strides: Sequence[int],
                     dst: ir.Value, dst_dt: np.dtype, sizes: Sequence[int],
                     dst_strides: Sequence[int] | None = None) -> None:
        """Copies the array of `sizes` read at `src_strides` into `dst` (at `dst_strides`,
        row-major over `sizes` by default), converting `src_dt` to `dst_dt` (a float
        dtype, or the same dtype: then the elements are moved as they are; complex to
        real keeps the real part)."""
        dst_strides = _row_major(sizes) if dst_strides is None else dst_strides
        with self.nest(sizes, [src_strides, dst_strides]) as (so, do):
            if src_dt == dst_dt:
                value = self.b.load(self.b.gep(src, [so], inbounds=True))
                self.b.store(value, self.b.gep(dst, [do], inbounds=True))
            else:
                x, dt = self.em.load(src, so, src_dt), src_dt
                if dt.kind == "c":  # complex to real keeps the real part
                    x, dt = self.b.extract_value(x, 0), _real_dtype(dt)
                self.em.store(to_float(self.b, x, dt, dst_dt), dst, do, dst_dt)


def _row_major(sizes: Sequence[int]) -> list[int]:
    strides, acc = [], 1
    for size in reversed(sizes):
        strides.append(acc)
        acc *= size
    return strides[::-1]


def row_major_strides(shape: Sequence[int]) -> list[int]:
    """The element strides of a row-major array of `shape`."""
    return _row_major(shape)


def collapse(sizes: Sequence[int], strides: Sequence[int]) -> int | None:
    """The single stride of dimensions that can be walked as one (each dimension's stride
    the next one's times its size, size-1 dimensions ignored): 0 when there are none (any
    stride will do), None when they cannot be collapsed."""
    kept = [(n, s) for n, s in zip(sizes, strides, strict=True) if n != 1]
    if not kept:
        return 0
    for (_, outer), (n, inner) in zip(kept, kept[1:]):
        if outer != inner * n:
            return None
    return kept[-1][1]


# ---------------------------------------------------------------------------------------------
# Scalar conversions and the accumulation rules.

def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in _LOW


def _work_float(dt: np.dtype) -> np.dtype:
    if dt in _LOW or dt.kind in "biu":
        return np.dtype(np.float32)
    return np.dtype(dt)


def to_float(b: ir.IRBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """Compute-type `x` of dtype `src` converted to the compute type of float `dst`."""
    ty = emitter.compute_type(dst)
    if _is_float(src):
        if x.type == ty:
            return x
        return b.fpext(x, ty) if ty == _F64 else b.fptrunc(x, ty)
    if src == np.bool_ or src.kind == "u":
        return b.uitofp(x, ty)
    return b.sitofp(x, ty)


def _to_int(b: ir.IRBuilder, x: ir.Value, src: np.dtype, ty: ir.IntType) -> ir.Value:
    """Integer (or bool) `x` wrapped to `ty`'s width (sign-extended when `src` is signed)."""
    if x.type.width == ty.width:
        return x
    if x.type.width > ty.width:
        return b.trunc(x, ty)
    return b.sext(x, ty) if src.kind == "i" else b.zext(x, ty)


def _nonzero(b: ir.IRBuilder, x: ir.Value, src: np.dtype) -> ir.Value:
    if x.type == _I1:
        return x
    if _is_float(src):
        return b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
    return b.icmp_unsigned("!=", x, ir.Constant(x.type, 0))


def _parts(b: ir.IRBuilder, z: ir.Value) -> tuple[ir.Value, ir.Value]:
    return b.extract_value(z, 0), b.extract_value(z, 1)


def _pack(b: ir.IRBuilder, ty: ir.Type, re: ir.Value, im: ir.Value) -> ir.Value:
    return b.insert_value(b.insert_value(ir.Constant(ty, None), re, 0), im, 1)


def _real_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float64 if dt == np.complex128 else np.float32)


@dataclass(frozen=True)
class Accumulation:
    """How a contraction with result dtype `result` accumulates (the reference backend's
    `accumulate_in`): kind "bool" (or of ands), "int" (wrapping, in `work` = the result
    dtype), "float" (in `work`, float32 or float64; complex operands give their real
    part) or "complex" (a complex result, in its dtype)."""

    kind: str
    work: np.dtype
    result: np.dtype

    @staticmethod
    def of(result: np.dtype, *operands: np.dtype) -> Accumulation:
        result = np.dtype(result)
        if result == np.bool_:
            return Accumulation("bool", result, result)
        if result.kind in "iu":
            if not any(dtypes.is_inexact(d) for d in operands):
                return Accumulation("int", result, result)
            work = np.result_type(*[_work_float(np.dtype(d)) for d in operands])
            if work.kind == "c":
                raise Unsupported("llvm dot: integer result of complex operands")
            return Accumulation("float", work, result)
        if result.kind == "c":
            return Accumulation("complex", result, result)
        return Accumulation("float", _work_float(result), result)

    @property
    def type(self) -> ir.Type:
        return emitter.compute_type(self.work)

    def convert(self, b: ir.IRBuilder, x: ir.Value, src: np.dtype) -> ir.Value:
        """Compute-type operand element `x` of dtype `src` in the accumulation type."""
        if src.kind == "c":
            re, im = _parts(b, x)
            part = _real_dtype(src)
            if self.kind == "bool":
                return b.or_(_nonzero(b, re, part), _nonzero(b, im, part))
            if self.kind == "float":
                return to_float(b, re, part, self.work)
            target = _real_dtype(self.work)
            return _pack(b, self.type, to_float(b, re, part, target),
                         to_float(b, im, part, target))
        if self.kind == "bool":
            return _nonzero(b, x, src)
        if self.kind == "int":
            return _to_int(b, x, src, self.type)
        if self.kind == "float":
            return to_float(b, x, src, self.work)
        target = _real_dtype(self.work)
        re = to_float(b, x, src, target)
        return _pack(b, self.type, re, ir.Constant(re.type, 0.0))

    def zero(self) -> ir.Constant:
        ty = self.type
        if self.kind == "complex":
            return ir.Constant(ty, None)
        return ir.Constant(ty, 0.0 if self.kind == "float" else 0)

    def step(self, b: ir.IRBuilder, acc: ir.Value, x: ir.Value, y: ir.Value) -> ir.Value:
        """`acc + x * y`; float adds may be reassociated (vectorized reductions)."""
        if self.kind == "bool":
            return b.or_(acc, b.and_(x, y))
        if self.kind == "int":
            return b.add(acc, b.mul(x, y))
        if self.kind == "complex":
            (ar, ai), (xr, xi), (yr, yi) = _parts(b, acc), _parts(b, x), _parts(b, y)
            re = b.fsub(b.fmul(xr, yr), b.fmul(xi, yi))
            im = b.fadd(b.fmul(xr, yi), b.fmul(xi, yr))
            return _pack(b, self.type, b.fadd(ar, re, flags=_FLOAT_FLAGS),
                         b.fadd(ai, im, flags=_FLOAT_FLAGS))
        return b.fadd(acc, b.fmul(x, y, flags=_FLOAT_FLAGS), flags=_FLOAT_FLAGS)

    def finish(self, b: ir.IRBuilder, module: ir.Module, acc: ir.Value) -> ir.Value:
        """The accumulated value in the result's compute type (stores round float16 and
        bfloat16); an integer result of a float sum saturates, NaN giving 0."""
        if self.kind != "float" or _is_float(self.result):
            return acc
        ty = emitter.compute_type(self.result)
        name = "llvm.fptoui.sat" if self.result.kind == "u" else "llvm.fptosi.sat"
        fn = module.declare_intrinsic(name, [ty, acc.type], ir.FunctionType(ty, [acc.type]))
        return b.call(fn, [acc])

    @property
    def exact_in_result(self) -> bool:
        """Whether partial sums can live in the result's memory (no rounding between
        steps, the same dtype)."""
        return self.kind in ("bool", "int") or (self.kind in ("float", "complex")
                                                 and self.work == self.result)


# ---------------------------------------------------------------------------------------------
# The shape of a dot.

@dataclass
class DotSpec:
    """A dot_general as a batch of (M x K) @ (K x N): the sizes of each group of
    dimensions and each operand's element strides for them (the result is row-major
    (batch, M, N))."""

    batch: list[int]
    m: list[int]
    n: list[int]
    k: list[int]
    lhs_b: list[int]
    lhs_m: list[int]
    lhs_k: list[int]
    rhs_b: list[int]
    rhs_k: list[int]
    rhs_n: list[int]
    lhs_dtype: np.dtype
    rhs_dtype: np.dtype
    out_dtype: np.dtype

    @staticmethod
    def of(op: Op) -> DotSpec:
        dn: hlo.DotDimensionNumbers = op.attributes["dot_dimension_numbers"]
        lt, rt = op.operand_types
        ls, rs = _row_major(lt.shape), _row_major(rt.shape)
        lfree = _free(lt.rank, dn.lhs_contracting_dimensions, dn.lhs_batching_dimensions)
        rfree = _free(rt.rank, dn.rhs_contracting_dimensions, dn.rhs_batching_dimensions)
        return DotSpec(
            batch=[lt.shape[d] for d in dn.lhs_batching_dimensions],
            m=[lt.shape[d] for d in lfree], n=[rt.shape[d] for d in rfree],
            k=[lt.shape[d] for d in dn.lhs_contracting_dimensions],
            lhs_b=[ls[d] for d in dn.lhs_batching_dimensions], lhs_m=[ls[d] for d in lfree],
            lhs_k=[ls[d] for d in dn.lhs_contracting_dimensions],
            rhs_b=[rs[d] for d in dn.rhs_batching_dimensions],
            rhs_k=[rs[d] for d in dn.rhs_contracting_dimensions], rhs_n=[rs[d] for d in rfree],
            lhs_dtype=lt.dtype, rhs_dtype=rt.dtype, out_dtype=op.result.type.dtype)

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        """(batch, M, N, K) as products."""
        return (math.prod(self.batch), math.prod(self.m), math.prod(self.n),
                math.prod(self.k))

    def out_strides(self) -> tuple[list[int], list[int], list[int]]:
        """The result's strides for the batch, M and N dimensions."""
        s = _row_major([*self.batch, *self.m, *self.n])
        nb, nm = len(self.batch), len(self.m)
        return s[:nb], s[nb:nb + nm], s[nb + nm:]


def _free(rank: int, *used: Sequence[int]) -> list[int]:
    taken = {d for dims in used for d in dims}
    return [d for d in range(rank) if d not in taken]


# ---------------------------------------------------------------------------------------------
# BLAS gemm.

def blas_layout(rows: int, cols: int, s_rows: int | None, s_cols: int | None
                ) -> tuple[str, int] | None:
    """How BLAS (column-major) reads the transpose of the row-major-described matrix X
    (`rows` x `cols`, element (r, c) at r*s_rows + c*s_cols): ('N', ld) when columns are
    unit-stride, ('T', ld) when rows are; None when neither."""
    if s_rows is not None and s_cols is not None:
        if cols <= 1 or s_cols == 1:
            ld = s_rows if rows > 1 else max(cols, 1)
            if ld >= max(cols, 1):
                return "N", ld
        if rows <= 1 or s_rows == 1:
            ld = s_cols if cols > 1 else max(rows, 1)
            if ld >= max(rows, 1):
                return "T", ld
    return None


def _scalar_global(e: KernelEmit, ty: ir.Type, value: object, name: str) -> ir.Value:
    g = ir.GlobalVariable(e.module, ty, name=e.module.get_unique_name(name))
    g.global_constant, g.linkage = True, "internal"
    g.initializer = ir.Constant(ty, value)
    return e.b.bitcast(g, _PTR)


def emit_gemm(e: KernelEmit, work: np.dtype, m: int | ir.Value, n: int | ir.Value, k: int,
              a: ir.Value, a_layout: tuple[str, int], b: ir.Value,
              b_layout: tuple[str, int], c: ir.Value, ldc: int) -> None:
    """C (m x n, row-major with row stride `ldc`) = A (m x k) B (k x n) through BLAS, as
    the column-major product C^T = B^T A^T.

    Args:
      work: float32, float64, complex64 or complex128 (the routine).
      m, n: rows and columns of C (ints, or i64 values known only at run time).
      a, b, c: `i8*` to the first element of each matrix.
      a_layout, b_layout: `blas_layout` of A (m x k) and B (k x n).
    """
    known = [v for v in (m, n, k, ldc, a_layout[1], b_layout[1]) if isinstance(v, int)]
    if max(known) > _INT_MAX:
        raise Unsupported("llvm dot: sizes beyond 32-bit BLAS")
    routine = _blas_function(e.program, _GEMM[np.dtype(work)])
    real = _F64 if np.dtype(work) in (np.float64, np.complex128) else _F32
    pair = ir.ArrayType(real, 2 if np.dtype(work).kind == "c" else 1)
    values = [1.0, 0.0][:pair.count]
    one = _scalar_global(e, pair, values, "blas.one")
    zero = _scalar_global(e, pair, [0.0] * pair.count, "blas.zero")

    def char(flag: str) -> ir.Value:
        return _scalar_global(e, _I8, ord(flag), "blas.flag")

    def int_arg(value: int | ir.Value) -> ir.Value:
        if isinstance(value, int):
            return _scalar_global(e, _I32, value, "blas.int")
        slot = e.entry_alloca(_I32)
        e.b.store(e.b.trunc(value, _I32), slot)
        return e.b.bitcast(slot, _PTR)

    (ta, lda), (tb, ldb) = a_layout, b_layout
    e.b.call(routine, [char(tb), char(ta), int_arg(n), int_arg(m), int_arg(k), one,
                       b, int_arg(ldb), a, int_arg(lda), zero, c, int_arg(ldc)])


# ---------------------------------------------------------------------------------------------
# dot_general.

@dataclass
class _Operand:
    """An operand as BLAS reads it: its pointer, per-batch-dimension strides and layout."""

    ptr: ir.Value
    batch: list[int]
    layout: tuple[str, int]
    scratch: ir.Value | None = None


def _blas_operand(e: KernelEmit, ptr: ir.Value, dt: np.dtype, work: np.dtype,
                  batch: list[int], b_strides: list[int], rows: list[int], r_strides: list[int],
                  cols: list[int], c_strides: list[int]) -> _Operand:
    """The operand (batch, rows, cols) as BLAS reads it: in place when its dtype is `work`
    and its rows and columns each collapse with a unit stride on one side, else copied
    into a scratch buffer, (batch, rows, cols) row-major, in `work`."""
    nr, nc = math.prod(rows), math.prod(cols)
    if dt == work:
        layout = blas_layout(nr, nc, collapse(rows, r_strides), collapse(cols, c_strides))
        if layout is not None:
            return _Operand(ptr, list(b_strides), layout)
    sizes = [*batch, *rows, *cols]
    scratch = e.malloc(math.prod(sizes) * np.dtype(work).itemsize)
    typed = e.typed(scratch, work)
    e.copy_strided(ptr, dt, [*b_strides, *r_strides, *c_strides], typed, work, sizes)
    layout = blas_layout(nr, nc, nc, 1)
    assert layout is not None
    return _Operand(typed, _row_major(batch + [nr * nc])[:-1] if batch else [], layout,
                    scratch)


def blas_work(acc: Accumulation, lhs: np.dtype, rhs: np.dtype) -> np.dtype | None:
    """The BLAS dtype computing a contraction, or None (loop kernel only)."""
    if acc.kind == "float" and _is_float(acc.result):
        return acc.work
    if acc.kind == "complex" and acc.result.kind == "c" and lhs == rhs == acc.result:
        return acc.work
    return None


def _emit_blas_dot(e: KernelEmit, spec: DotSpec, work: np.dtype, lhs: ir.Value,
                   rhs: ir.Value, out: ir.Value, out_shared: bool) -> None:
    nb, m, n, k = spec.sizes
    a = _blas_operand(e, lhs, spec.lhs_dtype, work, spec.batch, spec.lhs_b, spec.m,
                      spec.lhs_m, spec.k, spec.lhs_k)
    b = _blas_operand(e, rhs, spec.rhs_dtype, work, spec.batch, spec.rhs_b, spec.k,
                      spec.rhs_k, spec.n, spec.rhs_n)
    direct = spec.out_dtype == work and not out_shared
    c_scratch = None if direct else e.malloc(nb * m * n * np.dtype(work).itemsize)
    c = out if direct else e.typed(c_scratch, work)
    c_batch = _row_major(spec.batch + [m * n])[:-1]
    with e.nest(spec.batch, [a.batch, b.batch, c_batch]) as (ao, bo, co):
        emit_gemm(e, work, m, n, k, e.at(a.ptr, ao), a.layout, e.at(b.ptr, bo), b.layout,
                  e.at(c, co), max(n, 1))
    if c_scratch is not None:
        if spec.out_dtype == work:
            e.memcpy(out, c, nb * m * n * np.dtype(work).itemsize)
        else:
            e.copy_strided(c, work, [1], out, spec.out_dtype, [nb * m * n])
        e.free(c_scratch)
    for operand in (a, b):
        if operand.scratch is not None:
            e.free(operand.scratch)


def _emit_loop_dot(e: KernelEmit, spec: DotSpec, acc: Accumulation, lhs: ir.Value,
                   rhs: ir.Value, out: ir.Value) -> None:
    """The native loop nest: an axpy over N accumulating into the result row when the
    result holds exact partial sums and B is contiguous along N (and A, B are not both
    contiguous along K), else a reduction over K per result element."""
    b, em = e.b, e.em
    out_b, out_m, out_n = spec.out_strides()
    zeros_m, zeros_n, zeros_k = [0] * len(spec.m), [0] * len(spec.n), [0] * len(spec.k)
    inner_k = [s for s, size in zip(spec.lhs_k, spec.k, strict=True) if size > 1][-1:]
    inner_kr = [s for s, size in zip(spec.rhs_k, spec.k, strict=True) if size > 1][-1:]
    inner_n = [s for s, size in zip(spec.rhs_n, spec.n, strict=True) if size > 1][-1:]
    both_k_contiguous = inner_k in ([], [1]) and inner_kr in ([], [1])
    axpy = (acc.exact_in_result and math.prod(spec.n) > 1 and inner_n == [1]
            and not both_k_contiguous)
    if axpy:
        e.memset0(out, math.prod([*spec.batch, *spec.m, *spec.n]) * spec.out_dtype.itemsize)
        sizes = [*spec.batch, *spec.m, *spec.k]
        strides = [[*spec.lhs_b, *spec.lhs_m, *spec.lhs_k], [*spec.rhs_b, *zeros_m, *spec.rhs_k],
                   [*out_b, *out_m, *zeros_k]]
        with e.nest(sizes, strides) as (lo, ro, oo):
            x = acc.convert(b, em.load(lhs, lo, spec.lhs_dtype), spec.lhs_dtype)
            with e.nest(spec.n, [spec.rhs_n, out_n], [ro, oo]) as (rn, on):
                y = acc.convert(b, em.load(rhs, rn, spec.rhs_dtype), spec.rhs_dtype)
                c = em.load(out, on, spec.out_dtype)
                em.store(acc.step(b, c, x, y), out, on, spec.out_dtype)
        return
    slot = e.entry_alloca(acc.type)
    sizes = [*spec.batch, *spec.m, *spec.n]
    strides = [[*spec.lhs_b, *spec.lhs_m, *zeros_n], [*spec.rhs_b, *zeros_m, *spec.rhs_n],
               [*out_b, *out_m, *out_n]]
    with e.nest(sizes, strides) as (lo, ro, oo):
        b.store(acc.zero(), slot)
        with e.nest(spec.k, [spec.lhs_k, spec.rhs_k], [lo, ro]) as (lk, rk):
            x = acc.convert(b, em.load(lhs, lk, spec.lhs_dtype), spec.lhs_dtype)
            y = acc.convert(b, em.load(rhs, rk, spec.rhs_dtype), spec.rhs_dtype)
            b.store(acc.step(b, b.load(slot), x, y), slot)
        em.store(acc.finish(b, e.module, b.load(slot)), out, oo, spec.out_dtype)


def _shared(fn: ir.Function) -> set[int]:
    """Argument positions the codegen left without `noalias` (overlapping buffers)."""
    return {i for i, arg in enumerate(fn.args) if "noalias" not in arg.attributes}


def emit_dot(e: KernelEmit, spec: DotSpec, lhs: ir.Value, rhs: ir.Value, out: ir.Value,
             out_shared: bool) -> None:
    """Emits C = dot(lhs, rhs) into `out` (typed pointers) by BLAS or the loop kernel."""
    nb, m, n, k = spec.sizes
    if nb * m * n == 0:
        return
    if k == 0:
        e.memset0(out, nb * m * n * spec.out_dtype.itemsize)
        return
    acc = Accumulation.of(spec.out_dtype, spec.lhs_dtype, spec.rhs_dtype)
    work = blas_work(acc, spec.lhs_dtype, spec.rhs_dtype)
    if work is not None and m * n * k >= BLAS_MIN_WORK:
        _emit_blas_dot(e, spec, work, lhs, rhs, out, out_shared)
    else:
        _emit_loop_dot_into(e, spec, acc, lhs, rhs, out, out_shared)


def _emit_loop_dot_into(e: KernelEmit, spec: DotSpec, acc: Accumulation, lhs: ir.Value,
                        rhs: ir.Value, out: ir.Value, out_shared: bool) -> None:
    nb, m, n, _ = spec.sizes
    if out_shared:
        # The loop kernel writes the result while reading the operands: never in place.
        scratch = e.typed(e.malloc(nb * m * n * spec.out_dtype.itemsize), spec.out_dtype)
        _emit_loop_dot(e, spec, acc, lhs, rhs, scratch)
        e.memcpy(out, scratch, nb * m * n * spec.out_dtype.itemsize)
        e.free(scratch)
    else:
        _emit_loop_dot(e, spec, acc, lhs, rhs, out)


def multiply_adds(op: Op) -> int:
    """The multiply-adds of a `stablehlo.dot_general` (batch x M x N x K): the work of
    its loop kernel, which at LLVM's -O0 runs 10 to 50 times slower than optimized."""
    nb, m, n, k = DotSpec.of(op).sizes
    return nb * m * n * k


@program.register("stablehlo.dot_general")
def _dot_general(ctx: program.KernelContext) -> None:
    """`stablehlo.dot_general`: BLAS gemm per batch, or a native loop kernel."""
    e = KernelEmit.of(ctx)
    shared = _shared(ctx.fn)
    emit_dot(e, DotSpec.of(ctx.op), ctx.operands[0], ctx.operands[1], ctx.results[0],
             bool(shared & {2}))


# ---------------------------------------------------------------------------------------------
# The dot inside fusions, and the output fusion.

def _dot_element(em: emitter._Emitter, op: Op, which: int, idx: list[ir.Value]) -> ir.Value:
    """Element `idx` of a dot inside a fusion: a loop over the contracting elements."""
    b = em.b
    dn: hlo.DotDimensionNumbers = op.attributes["dot_dimension_numbers"]
    lt, rt = op.operand_types
    acc = Accumulation.of(op.result.type.dtype, lt.dtype, rt.dtype)
    lfree = _free(lt.rank, dn.lhs_contracting_dimensions, dn.lhs_batching_dimensions)
    rfree = _free(rt.rank, dn.rhs_contracting_dimensions, dn.rhs_batching_dimensions)
    nb = len(dn.lhs_batching_dimensions)
    k_sizes = [lt.shape[d] for d in dn.lhs_contracting_dimensions]
    total = math.prod(k_sizes)
    if total == 0:
        return acc.finish(b, em.module, acc.zero())
    pre = b.block
    loop, after = em.fn.append_basic_block("dot"), em.fn.append_basic_block("dot.done")
    b.branch(loop)
    b.position_at_end(loop)
    j = b.phi(_I64)
    j.add_incoming(ir.Constant(_I64, 0), pre)
    partial = b.phi(acc.type)
    partial.add_incoming(acc.zero(), pre)
    saved = dict(em.cache)
    kidx = em.delinear(j, k_sizes) if len(k_sizes) > 1 else [j]
    lidx: list[ir.Value] = [ir.Constant(_I64, 0)] * lt.rank
    ridx: list[ir.Value] = [ir.Constant(_I64, 0)] * rt.rank
    for i, (ld, rd) in enumerate(zip(dn.lhs_batching_dimensions, dn.rhs_batching_dimensions,
                                     strict=True)):
        lidx[ld] = ridx[rd] = idx[i]
    for i, d in enumerate(lfree):
        lidx[d] = idx[nb + i]
    for i, d in enumerate(rfree):
        ridx[d] = idx[nb + len(lfree) + i]
    for i, (ld, rd) in enumerate(zip(dn.lhs_contracting_dimensions,
                                     dn.rhs_contracting_dimensions, strict=True)):
        lidx[ld] = ridx[rd] = kidx[i]
    x = acc.convert(b, em.gen(op.operands[0], lidx), lt.dtype)
    y = acc.convert(b, em.gen(op.operands[1], ridx), rt.dtype)
    new = acc.step(b, partial, x, y)
    # Values emitted inside the loop do not dominate code after it.
    em.cache = saved
    nxt = b.add(j, ir.Constant(_I64, 1), flags=["nsw", "nuw"])
    j.add_incoming(nxt, b.block)
    partial.add_incoming(new, b.block)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(_I64, total)), loop, after)
    b.position_at_end(after)
    return acc.finish(b, em.module, new)


emitter.MULTI_RESULT_GENERATORS["stablehlo.dot_general"] = _dot_element


def _output_fusion_parts(op: Op) -> tuple[Op, Op, int] | None:
    """(dot, add, index of the add's other operand among the fusion's operands) when the
    fused computation is `add(dot(p, q), r)` over parameters, else None."""
    block = op.regions[0].block
    ops = block.ops[:-1]
    if len(ops) != 2 or ops[0].opcode != "stablehlo.dot_general":
        return None
    dot, add = ops
    root = block.terminator.operands
    if add.opcode != "stablehlo.add" or len(root) != 1 or root[0] is not add.result:
        return None
    others = [v for v in add.operands if v is not dot.result]
    params = list(block.args)
    if len(others) != 1 or any(v not in params for v in [*dot.operands, *others]):
        return None
    return dot, add, params.index(others[0])


@program.register("hlo.fusion:kOutput")
def _output_fusion(ctx: program.KernelContext) -> None:
    """XLA CPU's output fusion `add(dot(p, q), r)`: a large float dot by BLAS into the
    result, then `r` added in place; otherwise the fusion's elemental loop (the dot an
    element generator)."""
    e = KernelEmit.of(ctx)
    parts = _output_fusion_parts(ctx.op)
    if parts is not None:
        dot, add, other = parts
        spec = DotSpec.of(dot)
        nb, m, n, k = spec.sizes
        acc = Accumulation.of(spec.out_dtype, spec.lhs_dtype, spec.rhs_dtype)
        work = blas_work(acc, spec.lhs_dtype, spec.rhs_dtype)
        if work == spec.out_dtype and acc.kind == "float" and m * n * k >= BLAS_MIN_WORK:
            _emit_blas_epilogue(e, ctx, dot, spec, work, other)
            return
    shared = frozenset(_shared(ctx.fn))
    fn = emitter.emit_fusion(ctx.module, ctx.op, ctx.program.fresh("output_fusion"), shared)
    fn.linkage = "internal"
    ctx.builder.call(fn, [*ctx.operands, *ctx.results])


def _emit_blas_epilogue(e: KernelEmit, ctx: program.KernelContext, dot: Op, spec: DotSpec,
                        work: np.dtype, other: int) -> None:
    """The dot through BLAS into the result (or a scratch when the result shares memory
    with an operand), then `result = dot + other` elementwise."""
    params = list(ctx.op.regions[0].block.args)
    lhs, rhs = (ctx.operands[params.index(v)] for v in dot.operands)
    out = ctx.results[0]
    size = math.prod(spec.sizes[:3])
    shared = bool(_shared(ctx.fn))
    dst = e.typed(e.malloc(size * work.itemsize), work) if shared else out
    _emit_blas_dot(e, spec, work, lhs, rhs, dst, False)
    with e.loop(size) as i:
        x = e.b.load(e.b.gep(dst, [i], inbounds=True))
        y = e.b.load(e.b.gep(ctx.operands[other], [i], inbounds=True))
        e.b.store(e.b.fadd(x, y), e.b.gep(out, [i], inbounds=True))
    if shared:
        e.free(dst)


program.MULTIPLY_ADDS["stablehlo.dot_general"] = multiply_adds


# ---------------------------------------------------------------------------------------------
# BLAS threads.

@functools.lru_cache(maxsize=None)
def _openblas_set_threads_local() -> Any:
    """OpenBLAS's `openblas_set_num_threads_local` in SciPy's bundled library (it sets the
    thread count for calls from the calling thread only), or None where it is absent."""
    import glob
    import os

    import scipy
    pattern = os.path.join(os.path.dirname(scipy.__file__) + ".libs", "libscipy_openblas*.so*")
    for path in sorted(glob.glob(pattern)):
        library = ctypes.CDLL(path)  # already loaded by cython_blas: the same handle
        function = getattr(library, "openblas_set_num_threads_local", None)
        if function is not None:
            function.argtypes = [ctypes.c_int]
            function.restype = ctypes.c_int
            return function
    return None


def use_one_blas_thread_here() -> None:
    """Makes BLAS calls from this thread single-threaded: the replicas of an SPMD run each
    have a core's worth of work, and OpenBLAS's own threads on top oversubscribed the cores
    (a 4-replica step on 2 cores: 0.45 of the one-device time with one BLAS thread, 0.68 to
    1.12 with OpenBLAS's default)."""
    function = _openblas_set_threads_local()
    if function is not None:
        function(1)
