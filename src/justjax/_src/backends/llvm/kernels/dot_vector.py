"""Small float dots as explicitly vectorized LLVM loops (as XLA CPU emits its small dots).

A float32/float64 dot whose operands and result share the dtype, and whose dimension groups
each collapse to one stride, is computed without BLAS when it is a matrix-vector or
vector-matrix product, or a matrix product of at most `SMALL_MATMUL_WORK` multiply-adds:
BLAS's threading and per-call tuning cost more than such products (a 128x128 vector-matrix
step took 6.5 us and more through a Haswell-pinned OpenBLAS, 0.6 us here). Two loop nests:

- `axpy`: C[r, :] = sum_k X[r, k] * Y[k, :], when one operand is contiguous along the
  result's minor dimension (vector-matrix, matrix products with a row-major rhs, and the
  matrix-vector product of a column-major matrix). A register tile of `rows` x `vectors`
  accumulators runs over k: each step broadcasts X[r, k] and multiply-adds it into the
  accumulators with the vectors of Y's row k.
- `dot`: C[m, n] = sum_k A[m, k] * B[k, n] when both operands are contiguous along k and
  M or N is 1 (the matrix-vector product of a row-major matrix, `h @ w.T`). Four result
  elements are computed together, each by two vector accumulators taking alternate vectors
  of k.

The order of every sum is fixed by the IR, not left to `reassoc` (the result must not
depend on LLVM's optimization level): in `axpy` each result element is the sequential sum
over k, by fused multiply-adds; in `dot` lane j of accumulator a sums the products of
k = (2 i + a) L + j (L lanes) sequentially over i, the two accumulators are added, the lanes
summed as a tree (halves added until one is left), then the products of the last K mod L
elements added one by one. Tails of the vector dimension use masked loads and stores.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.runtime import host

__all__ = ["SMALL_MATMUL_WORK", "VectorPlan", "emit_vector_dot", "plan_vector_dot"]

_I1, _I32, _I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
_TYPES = {np.dtype(np.float32): ir.FloatType(), np.dtype(np.float64): ir.DoubleType()}

# Matrix products (neither M nor N 1) up to this many multiply-adds run here, larger ones
# through BLAS. Measured with `benchmarks/bench_control_flow.py --dots` (in a 200-trip loop
# on a loaded 2-core AVX-512 host), float32, ns per product here / OpenBLAS unpinned /
# OpenBLAS pinned to Haswell: 16^3 229-347 / 313 / 553; 32^3 916-1087 / 1128 / 1876;
# 48^3 2499-2801 / 2974 / 4402; 64^3 3732-3921 / 4336 / 7844; 16x128 @ 128x128
# 3784-4749 / 5221 / 12421; a batch of 8 16^3 1307-1435 / 1832 / 3109.
SMALL_MATMUL_WORK = 1 << 18
# Matrix-vector products up to this many multiply-adds run here (ns: 128x128
# vector-matrix 640-751 / 1126 / 7665, matrix-vector 685-724 / 842 / 4208; 512x512
# vector-matrix 7985-11934 / 9472 / 505294, matrix-vector 8025-12247 / 31309 / 189209);
# beyond, the product is bound by memory bandwidth either way.
MATVEC_WORK = 1 << 24


@functools.lru_cache(maxsize=1)
def _registers() -> int:
    return 32 if "+avx512f" in host.host_cpu()[1].split(",") else 16


@dataclass(frozen=True)
class VectorPlan:
    """How a dot runs as vector loops.

    `kind` is "axpy" or "dot". For "axpy": C[r, c] (at out + r*out_r + c) = sum_k
    X[r, k] Y[k, c], X[r, k] at x + r*x_r + k*x_k, Y[k, c] at y + k*y_k + c; `x_is_lhs` says
    which operand X is. For "dot": C[m, n] (at out + m*out_r + n) = sum_k A[m, k] B[k, n],
    A[m, k] at lhs + m*x_r + k, B[k, n] at rhs + n*y_k + k. Batch strides are per batch
    dimension: (lhs, rhs, out).
    """

    kind: str
    rows: int
    cols: int
    depth: int
    x_r: int
    x_k: int
    y_k: int
    out_r: int
    x_is_lhs: bool
    batch: tuple[int, ...]
    batch_strides: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    dtype: np.dtype


def plan_vector_dot(spec: Any) -> VectorPlan | None:
    """The vector loops computing `spec` (a `dot.DotSpec`), or None when BLAS or the
    scalar loop kernel should (other dtypes, layouts, or a large matrix product)."""
    # Imported here: `dot` imports this module for its kernels.
    from justjax._src.backends.llvm.kernels.dot import collapse
    dt = np.dtype(spec.out_dtype)
    if dt not in _TYPES or spec.lhs_dtype != dt or spec.rhs_dtype != dt:
        return None
    nb, m, n, k = spec.sizes
    if nb * m * n * k == 0:
        return None
    matvec = m == 1 or n == 1
    if m * n * k > (MATVEC_WORK if matvec else SMALL_MATMUL_WORK):
        return None
    strides = [collapse(spec.m, spec.lhs_m), collapse(spec.k, spec.lhs_k),
               collapse(spec.k, spec.rhs_k), collapse(spec.n, spec.rhs_n)]
    if any(s is None for s in strides):
        return None
    a_m, a_k, b_k, b_n = strides
    if m == 1:
        a_m = 0
    if n == 1:
        b_n = 0
    if k == 1:
        a_k = b_k = 0
    out_b = spec.out_strides()[0]
    batch = (tuple(spec.batch), (tuple(spec.lhs_b), tuple(spec.rhs_b), tuple(out_b)))
    if n > 1 and b_n == 1:
        return VectorPlan("axpy", m, n, k, a_m, a_k, b_k, n, True, *batch, dt)
    swapped = (tuple(spec.batch), (tuple(spec.rhs_b), tuple(spec.lhs_b), tuple(out_b)))
    if n == 1 and m > 1 and a_m == 1:
        # C^T = B^T A^T: the columns of A are the vectors, B's elements the scalars.
        return VectorPlan("axpy", 1, m, k, 0, b_k, a_k, m, False, *swapped, dt)
    if not ((a_k == 1 or k == 1) and (b_k == 1 or k == 1)) or (m > 1 and n > 1):
        # Products of matrices contiguous along k: one lane sum per element costs more
        # than BLAS's packing (32x32 @ (32x32).T: 2376 ns against 1785).
        return None
    if m == 1 and n > 1:
        # C^T = B^T A^T: B's rows are grouped four at a time, A's vector shared.
        return VectorPlan("dot", n, 1, k, b_n, 1, 0, 1, False, *swapped, dt)
    return VectorPlan("dot", m, n, k, a_m, 1, b_n, n, True, *batch, dt)


class _Vec:
    """Vector helpers on one builder: loads, masked loads and stores, broadcasts, fma."""

    def __init__(self, module: ir.Module, b: ir.IRBuilder, dtype: np.dtype) -> None:
        self.module, self.b = module, b
        self.scalar = _TYPES[dtype]
        self.lanes = host.vector_bits() // (8 * dtype.itemsize)
        self.vec = ir.VectorType(self.scalar, self.lanes)
        self.align = dtype.itemsize
        self.zero = ir.Constant(self.vec, [0.0] * self.lanes)
        scalar_name = "f32" if dtype.itemsize == 4 else "f64"
        suffix = f"v{self.lanes}{scalar_name}"
        self.fma = _intrinsic(module, f"llvm.fma.{suffix}", ir.FunctionType(
            self.vec, [self.vec] * 3))
        self.fma1 = _intrinsic(module, f"llvm.fma.{scalar_name}", ir.FunctionType(
            self.scalar, [self.scalar] * 3))
        mask_ty = ir.VectorType(_I1, self.lanes)
        ptr = self.vec.as_pointer()
        self.masked_load = _intrinsic(module, f"llvm.masked.load.{suffix}.p0", ir.FunctionType(
            self.vec, [ptr, _I32, mask_ty, self.vec]))
        self.masked_store = _intrinsic(module, f"llvm.masked.store.{suffix}.p0",
                                       ir.FunctionType(ir.VoidType(), [self.vec, ptr, _I32,
                                                                       mask_ty]))

    def mask(self, count: int) -> ir.Constant:
        return ir.Constant(ir.VectorType(_I1, self.lanes),
                           [int(i < count) for i in range(self.lanes)])

    def ptr(self, base: ir.Value, offset: ir.Value) -> ir.Value:
        return self.b.bitcast(self.b.gep(base, [offset], inbounds=True), self.vec.as_pointer())

    def load(self, base: ir.Value, offset: ir.Value, count: int | None = None) -> ir.Value:
        """`count` (all lanes when None) elements from base + offset; others 0."""
        if count is None or count == self.lanes:
            return self.b.load(self.ptr(base, offset), align=self.align)
        return self.b.call(self.masked_load, [self.ptr(base, offset),
                                              ir.Constant(_I32, self.align), self.mask(count),
                                              self.zero])

    def store(self, value: ir.Value, base: ir.Value, offset: ir.Value,
              count: int | None = None) -> None:
        if count is None or count == self.lanes:
            self.b.store(value, self.ptr(base, offset), align=self.align)
            return
        self.b.call(self.masked_store, [value, self.ptr(base, offset),
                                        ir.Constant(_I32, self.align), self.mask(count)])

    def splat(self, x: ir.Value) -> ir.Value:
        v = self.b.insert_element(ir.Constant(self.vec, ir.Undefined), x, ir.Constant(_I32, 0))
        index = ir.Constant(ir.VectorType(_I32, self.lanes), [0] * self.lanes)
        return self.b.shuffle_vector(v, ir.Constant(self.vec, ir.Undefined), index)

    def lane_sum(self, v: ir.Value) -> ir.Value:
        """The lanes of `v` summed as a tree: the upper half added to the lower half until
        one lane is left."""
        width = self.lanes
        while width > 1:
            half = width // 2
            ty = ir.VectorType(_I32, half)
            lo = self.b.shuffle_vector(v, v, ir.Constant(ty, list(range(half))))
            hi = self.b.shuffle_vector(v, v, ir.Constant(ty, list(range(half, width))))
            v, width = self.b.fadd(lo, hi), half
        return self.b.extract_element(v, ir.Constant(_I32, 0))


def _intrinsic(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    found = module.globals.get(name)
    return found if found is not None else ir.Function(module, fnty, name=name)


def _i64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _offset(b: ir.IRBuilder, base: ir.Value, index: ir.Value | int, stride: int) -> ir.Value:
    """`base + index * stride` (i64)."""
    if stride == 0:
        return base
    if isinstance(index, int):
        return base if index == 0 else b.add(base, _i64(index * stride))
    return b.add(base, b.mul(index, _i64(stride)))


def _carried_loop(e, count: int, init: list[ir.Value],
                  body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]]) -> list[ir.Value]:
    """`for i in range(count)` (count >= 1) carrying `init` through `body(i, values)`;
    returns the final values. The carried values are phis: no memory round trips."""
    b = e.b
    pre = b.block
    loop = e.fn.append_basic_block("vdot.k")
    done = e.fn.append_basic_block("vdot.k.end")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(_I64)
    i.add_incoming(_i64(0), pre)
    phis = []
    for value in init:
        phi = b.phi(value.type)
        phi.add_incoming(value, pre)
        phis.append(phi)
    new = body(i, list(phis))
    nxt = b.add(i, _i64(1), flags=["nsw", "nuw"])
    end = b.block
    i.add_incoming(nxt, end)
    for phi, value in zip(phis, new, strict=True):
        phi.add_incoming(value, end)
    b.cbranch(b.icmp_signed("<", nxt, _i64(count)), loop, done)
    b.position_at_end(done)
    return new


def _tiles(total: int, size: int) -> list[tuple[int, int, int]]:
    """(first index, tile count, tile size) of the full tiles of `size` covering `total`,
    then of the partial tile left over."""
    full = total // size
    tiles = [(0, full, size)] if full else []
    if total % size:
        tiles.append((full * size, 1, total % size))
    return tiles


def emit_vector_dot(e, plan: VectorPlan, lhs: ir.Value, rhs: ir.Value, out: ir.Value,
                    addend: ir.Value | None = None) -> None:
    """Emits the planned dot into `out` (typed pointers; `out` must not overlap the
    operands). With `addend` (the result's shape, row-major), `out = dot + addend`: each
    result vector is added to the addend's before it is stored (`out` may be `addend`)."""
    x, y = (lhs, rhs) if plan.x_is_lhs else (rhs, lhs)
    v = _Vec(e.module, e.b, plan.dtype)
    if host.vector_bits() > 256:
        # LLVM splits 512-bit vectors in two on hosts that prefer 256 bits unless the
        # function asks for them (a string attribute, which llvmlite does not list).
        set.add(e.fn.attributes, f'"min-legal-vector-width"="{host.vector_bits()}"')
    with e.nest(list(plan.batch), list(plan.batch_strides)) as (xo, yo, oo):
        if plan.kind == "axpy":
            _emit_axpy(e, v, plan, x, y, out, addend, xo, yo, oo)
        else:
            _emit_dots(e, v, plan, x, y, out, addend, xo, yo, oo)


def _axpy_tile(plan: VectorPlan, lanes: int) -> tuple[int, int]:
    """(rows, vectors) of the register tile: as many accumulators as leave registers for
    the loaded vectors and the broadcast scalars."""
    vectors_needed = -(-plan.cols // lanes)
    budget = _registers() - 8
    rows = min(plan.rows, 4)
    vectors = max(1, min(vectors_needed, budget // rows))
    return rows, vectors


def _emit_axpy(e, v: _Vec, plan: VectorPlan, x: ir.Value, y: ir.Value, out: ir.Value,
               addend: ir.Value | None, xo: ir.Value, yo: ir.Value, oo: ir.Value) -> None:
    b = e.b
    rows_tile, vectors = _axpy_tile(plan, v.lanes)
    width = vectors * v.lanes
    for r_first, r_count, nrows in _tiles(plan.rows, rows_tile):
        with e.loop(r_count, "vdot.rows") as rt:
            r0 = b.add(_i64(r_first), b.mul(rt, _i64(rows_tile)))
            xr = _offset(b, xo, r0, plan.x_r)
            orow = _offset(b, oo, r0, plan.out_r)
            for c_first, c_count, ncols in _tiles(plan.cols, width):
                with e.loop(c_count, "vdot.cols") as ct:
                    c0 = b.add(_i64(c_first), b.mul(ct, _i64(width)))
                    _axpy_block(e, v, plan, x, y, out, addend, xr, b.add(yo, c0),
                                b.add(orow, c0), nrows, ncols)


def _axpy_block(e, v: _Vec, plan: VectorPlan, x: ir.Value, y: ir.Value, out: ir.Value,
                addend: ir.Value | None, xr: ir.Value, yc: ir.Value, oc: ir.Value,
                nrows: int, ncols: int) -> None:
    """One register tile: `nrows` result rows x `ncols` columns, summed over all k."""
    b = e.b
    counts = [min(v.lanes, ncols - j * v.lanes) for j in range(-(-ncols // v.lanes))]

    def step(k: ir.Value, acc: list[ir.Value]) -> list[ir.Value]:
        yk = _offset(b, yc, k, plan.y_k)
        ys = [v.load(y, b.add(yk, _i64(j * v.lanes)), c) for j, c in enumerate(counts)]
        xk = _offset(b, xr, k, plan.x_k)
        new = []
        for r in range(nrows):
            s = v.splat(b.load(b.gep(x, [_offset(b, xk, r, plan.x_r)], inbounds=True)))
            new.extend(b.call(v.fma, [s, yv, acc[r * len(counts) + j]])
                       for j, yv in enumerate(ys))
        return new

    acc = _carried_loop(e, plan.depth, [v.zero] * (nrows * len(counts)), step)
    for r in range(nrows):
        row = _offset(b, oc, r, plan.out_r)
        for j, c in enumerate(counts):
            at = b.add(row, _i64(j * v.lanes))
            value = acc[r * len(counts) + j]
            if addend is not None:
                value = b.fadd(value, v.load(addend, at, c))
            v.store(value, out, at, c)


_DOT_ROWS = 4


def _emit_dots(e, v: _Vec, plan: VectorPlan, a: ir.Value, bm: ir.Value, out: ir.Value,
               addend: ir.Value | None, ao: ir.Value, bo: ir.Value, oo: ir.Value) -> None:
    """C[m, n] for both operands contiguous along k: `_DOT_ROWS` rows of A at a time
    against one column of B."""
    b = e.b
    with e.loop(plan.cols, "vdot.n") as n:
        bn = _offset(b, bo, n, plan.y_k)
        on = b.add(oo, n)
        for m_first, m_count, nrows in _tiles(plan.rows, _DOT_ROWS):
            with e.loop(m_count, "vdot.m") as mt:
                m0 = b.add(_i64(m_first), b.mul(mt, _i64(_DOT_ROWS)))
                sums = _dot_rows(e, v, plan, a, bm, _offset(b, ao, m0, plan.x_r), bn, nrows)
                for r, total in enumerate(sums):
                    at = _offset(b, on, b.add(m0, _i64(r)), plan.out_r)
                    ptr = b.gep(out, [at], inbounds=True)
                    if addend is not None:
                        total = b.fadd(total, b.load(b.gep(addend, [at], inbounds=True)))
                    b.store(total, ptr)


def _dot_rows(e, v: _Vec, plan: VectorPlan, a: ir.Value, bm: ir.Value, am: ir.Value,
              bn: ir.Value, nrows: int) -> list[ir.Value]:
    """sum_k A[m0 + r, k] B[k, n] for r < nrows, in the order the module docstring gives."""
    b = e.b
    lanes = v.lanes
    pairs, rest = divmod(plan.depth, 2 * lanes)
    single = rest >= lanes            # one more full vector, into accumulator 0
    tail = rest % lanes
    acc = [v.zero] * (2 * nrows)
    if pairs:
        def step(i: ir.Value, acc: list[ir.Value]) -> list[ir.Value]:
            k = b.mul(i, _i64(2 * lanes))
            new = list(acc)
            for half in range(2):
                kk = b.add(k, _i64(half * lanes))
                bv = v.load(bm, b.add(bn, kk))
                for r in range(nrows):
                    av = v.load(a, b.add(_offset(b, am, r, plan.x_r), kk))
                    new[2 * r + half] = b.call(v.fma, [av, bv, acc[2 * r + half]])
            return new
        acc = _carried_loop(e, pairs, acc, step)
    k_next = pairs * 2 * lanes
    if single:
        bv = v.load(bm, b.add(bn, _i64(k_next)))
        for r in range(nrows):
            av = v.load(a, b.add(_offset(b, am, r, plan.x_r), _i64(k_next)))
            acc[2 * r] = b.call(v.fma, [av, bv, acc[2 * r]])
        k_next += lanes
    sums = []
    for r in range(nrows):
        total = v.lane_sum(b.fadd(acc[2 * r], acc[2 * r + 1]))
        row = _offset(b, am, r, plan.x_r)
        for k in range(k_next, k_next + tail):
            av = b.load(b.gep(a, [b.add(row, _i64(k))], inbounds=True))
            bv = b.load(b.gep(bm, [b.add(bn, _i64(k))], inbounds=True))
            total = b.call(v.fma1, [av, bv, total])
        sums.append(total)
    return sums
