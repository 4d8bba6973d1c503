"""The register-blocked direct convolution kernels of the llvm backend (`conv.py` chooses).

out[b, g, o, p] = sum over (c, t) of xpad[b, g, c, p * stride + t * dilation] * w[g, o, c, t],
in one of two forms:
- vectorized over output features (`plan_features`, `emit_features`): a block of output rows
  (batch x positions) times a block of output features accumulates in vector registers over
  the whole reduction, each step one vector load of the kernel, one broadcast input element
  and one FMA per row. The kernel is read in place when its output features are unit-stride
  (else packed once, feature-minor); one larger than `_CHUNK_BYTES` is read in chunks of input
  features while the blocks' partial sums wait in memory. No patch matrix is built, and thin
  products (the kernel gradient: 3x3 positions over a long reduction of batch x space) run at
  the FMA units' speed where a BLAS gemm of 3 or 9 rows does not.
- vectorized over output positions (`plan_positions`, `emit_positions`): for channel-major
  outputs (NCHW) and single output features (an input gradient into one channel), a vector
  holds consecutive positions along the last spatial dim, read from the padded input
  (channel-major, spatial-minor) at unit stride; a block of output features are its rows,
  each step one broadcast kernel element per row.
Both read the input through one zero-padded, dilated copy in the accumulation dtype (float32
or float64), so the inner loops need no bounds checks; low-precision results accumulate in
float32 and are rounded once.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import emitter
from justjax._src.backends.llvm.kernels import dot
from justjax._src.backends.llvm.kernels.conv_spec import ConvSpec, emit_padded_copy, padded_extent
from justjax._src.backends.llvm.kernels.dot import (Accumulation, KernelEmit, row_major_strides,
                                                    to_float)
from justjax._src.backends.llvm.runtime import host

__all__ = ["emit_features", "emit_positions", "plan_features", "plan_positions", "row_blocks"]

# Fewer output features than this per group: no feature-vectorized kernel (depthwise).
_MIN_FEATURES = 4

# Accumulator vectors a block keeps in registers (of 32 with AVX-512, 16 below it).
_ACC_VECTORS_AVX512 = 24
_ACC_VECTORS = 12
# Kernels larger than this (per group) are read in chunks of input features, the output
# blocks visited for each chunk while it stays in cache (their partial sums kept in memory).
_CHUNK_BYTES = 1 << 18
# Elements of the kernel's unit-stride dim a packing copy reads at a time.
_PACK_TILE = 16
@functools.lru_cache(maxsize=1)
def _vector_bytes() -> int:
    """The width of the host's vector registers (64 with AVX-512F, else 32 with AVX)."""
    _, features = host.host_cpu()
    flags = features.split(",")
    if "+avx512f" in flags:
        return 64
    return 32 if "+avx" in flags else 16


@dataclass
class _DirectPlan:
    """How the direct kernel runs one convolution.

    Attributes:
      work: the accumulation dtype (float32 or float64).
      o_blocks: (first output feature, count) of each block of output features.
      red: the reduction dims (kernel logical dims: 1 = input feature, 2.. = taps), outermost
        first, in the kernel's memory order (or the packed kernel's).
      w_packed: whether the kernel is first copied into (group, red..., feature) order.
      xp_order: the padded input's dims (0 batch, 1 group, 2 feature, 3.. spatial), outermost
        first, in the input's memory order.
      rows_max: output rows (batch x positions) a block holds.
      chunk: input features per chunk of the reduction (a divisor of their count; all of
        them: no chunks). A packed kernel is packed chunk by chunk.
    """

    work: np.dtype
    o_blocks: list[tuple[int, int]]
    red: list[int]
    w_packed: bool
    xp_order: list[int]
    rows_max: int
    chunk: int


def plan_features(spec: ConvSpec, acc: Accumulation) -> _DirectPlan | None:
    """The direct kernel's plan, or None where it does not apply (not a real float product, or
    fewer than 4 output features per group)."""
    work = dot.blas_work(acc, *spec.dtypes[:2])
    og = spec.out_features_per_group
    if work is None or work.kind != "f" or og < _MIN_FEATURES:
        return None
    vbytes = _vector_bytes()
    lanes = vbytes // work.itemsize
    width = og if og <= 4 * lanes else 2 * lanes
    o_blocks = [(o, min(width, og - o)) for o in range(0, og, width)]
    vectors = -(-width // lanes)
    budget = _ACC_VECTORS_AVX512 if vbytes == 64 else _ACC_VECTORS
    d = len(spec.out_sizes) - 2
    xp_order = _input_order(spec)
    w_packed = spec.dtypes[1] != work or (og > 1 and spec.w_strides[0] != 1)
    if w_packed:
        # The packed kernel follows the input: features innermost when they are in the input.
        feature_inner = xp_order.index(2) > max(xp_order.index(3 + i) for i in range(d)) if d \
            else True
        red = [*range(2, 2 + d), 1] if feature_inner else [1, *range(2, 2 + d)]
    else:
        red = sorted(range(1, 2 + d), key=lambda i: -spec.w_strides[i])
    w_group_bytes = math.prod(spec.w_sizes[1:]) * og * work.itemsize
    c = spec.w_sizes[1]
    chunk = c
    if w_group_bytes > _CHUNK_BYTES:
        most = max(1, c * _CHUNK_BYTES // w_group_bytes)
        chunk = max(n for n in range(1, most + 1) if c % n == 0)  # equal chunks
    return _DirectPlan(work, o_blocks, red, w_packed, xp_order, max(1, budget // vectors), chunk)


def _input_order(spec: ConvSpec) -> list[int]:
    """The input's dims (0 batch, 1 group, 2 feature, 3.. spatial) in its memory order,
    outermost first: the padded copy reads it in this order (contiguously)."""
    x_src = [spec.x_strides[0], spec.group_strides()[0], spec.x_strides[1], *spec.x_strides[2:]]
    return sorted(range(len(x_src)), key=lambda i: -x_src[i])


def plan_positions(spec: ConvSpec, acc: Accumulation) -> _DirectPlan | None:
    """The position-vectorized plan, or None (not a real float product, no spatial dims,
    a strided last spatial dim, or fewer than 8 positions along it)."""
    work = dot.blas_work(acc, *spec.dtypes[:2])
    d = len(spec.out_sizes) - 2
    if work is None or work.kind != "f" or d == 0 or spec.window_strides[-1] != 1:
        return None
    last = spec.out_sizes[-1]
    if last < 8:
        return None
    vbytes = _vector_bytes()
    lanes = vbytes // work.itemsize
    # Whole vectors only (a <28 x float> is three registers); the last chunk of a dim that is
    # not a multiple of the width overlaps the one before it (`_chunks`).
    width = 2 * lanes if last >= 2 * lanes else lanes if last >= lanes else (
        1 << (last.bit_length() - 1))
    vectors = -(-width // lanes)
    budget = _ACC_VECTORS_AVX512 if vbytes == 64 else _ACC_VECTORS
    # A block: `rows` output features x `lines` indices of the next-to-last spatial dim (one
    # vector load each), near square: per step lines + rows loads for lines * rows FMAs.
    per = max(1, budget // vectors)
    rows = max(1, min(spec.out_features_per_group, math.isqrt(per)))
    lines = max(1, min(spec.out_sizes[-2] if d > 1 else 1, per // rows))
    rows = max(1, min(spec.out_features_per_group, per // lines))
    # o_blocks here: (positions per vector, feature rows per block); rows_max: lines.
    return _DirectPlan(work, [(width, rows)], list(range(1, 2 + d)), False,
                       list(range(3 + d)), lines, spec.w_sizes[1])


def _padded_input(e: KernelEmit, spec: ConvSpec, plan: Any, x: ir.Value,
                  order: Any) -> tuple[_DirectEmit, ir.Value]:
    """A kernel's emission state, its input `x` copied (padded, in `order`) into scratch
    memory `de.xp`; returns it and the scratch's allocation (the kernel frees it)."""
    de = _DirectEmit(e, spec, plan)
    xp_raw = e.malloc(de.xp_size * plan.work.itemsize)
    de.xp = e.typed(xp_raw, plan.work)
    _emit_padded_all(e, spec, x, de.xp, plan.work, order, de.xp_strides)
    return de, xp_raw


def emit_positions(e: KernelEmit, spec: ConvSpec, plan: _DirectPlan, x: ir.Value, w: ir.Value,
                   out: ir.Value, out_shared: bool) -> None:
    """The position-vectorized kernel (the module's docstring) of `plan_positions`'s plan."""
    b = e.b
    # Copied in the input's order: reads contiguous, writes to one stream per feature.
    de, xp_raw = _padded_input(e, spec, plan, x, _input_order(spec))
    work = plan.work
    og, groups = spec.out_features_per_group, spec.groups
    direct = (not out_shared and spec.dtypes[2] == work and spec.out_strides[-1] == 1)
    if direct:
        target, t_strides, scratch = out, spec.out_strides, None
    else:
        # (batch, group x feature, positions...) row-major, copied out at the end.
        t_strides = row_major_strides(spec.out_sizes)
        scratch = e.malloc(math.prod(spec.out_sizes) * work.itemsize)
        target = e.typed(scratch, work)
    d = len(spec.out_sizes) - 2
    sp = de.xp_strides[3:]
    x_pos = [ws * s for ws, s in zip(spec.window_strides, sp, strict=True)]
    t_group = og * t_strides[1]
    width, rows = plan.o_blocks[0]
    lines = plan.rows_max
    # Loops over batch, group and the spatial dims before the last two; then blocks of
    # `lines` along the next-to-last, chunks of `width` along the last, `rows` features.
    outer = max(0, d - 2)
    sizes = [spec.out_sizes[0], groups, *spec.out_sizes[2:2 + outer]]
    strides = [[de.xp_strides[0], de.xp_strides[1], *x_pos[:outer]],
               [0, de.w_group, *[0] * outer],
               [t_strides[0], t_group, *t_strides[2:2 + outer]]]
    x_line = x_pos[-2] if d > 1 else 0
    t_line = t_strides[-2] if d > 1 else 0
    w_dt = spec.dtypes[1]
    with e.nest(sizes, strides) as (xo, wo, to):
        x0 = b.add(xo, e.i64(de.tap_base))
        line_count = spec.out_sizes[-2] if d > 1 else 1
        for l_start, _, l_rows in _chunks(e, line_count, lines):
            xl = b.add(x0, b.mul(l_start, e.i64(x_line)))
            tl = b.add(to, b.mul(l_start, e.i64(t_line)))
            for p_start, _, p_width in _chunks(e, spec.out_sizes[-1], width, overlap=True):
                xv = b.add(xl, b.mul(p_start, e.i64(x_pos[-1])))
                tv = b.add(tl, b.mul(p_start, e.i64(t_strides[-1])))
                for o_start, _, o_rows in _chunks(e, og, rows):
                    slots = [e.entry_alloca(de.vector(p_width)) for _ in range(l_rows * o_rows)]
                    for slot in slots:
                        b.store(ir.Constant(de.vector(p_width), None), slot)
                    ws = b.add(wo, b.mul(o_start, e.i64(spec.w_strides[0])))
                    de.reduction((de.xp, xv, de.x_red), (w, ws, de.w_red, w_dt),
                                 spec.w_sizes[1], [k * x_line for k in range(l_rows)],
                                 [r * spec.w_strides[0] for r in range(o_rows)], slots,
                                 p_width)
                    t0 = b.add(tv, b.mul(o_start, e.i64(t_strides[1])))
                    cells = itertools.product(range(l_rows), range(o_rows))
                    for slot, (k, r) in zip(slots, cells, strict=True):
                        at = b.add(t0, e.i64(k * t_line + r * t_strides[1]))
                        de.store_vector(b.load(slot), target, at, p_width)
    e.free(xp_raw)
    if scratch is not None:
        e.copy_strided(target, work, t_strides, out, spec.dtypes[2], spec.out_sizes,
                       spec.out_strides)
        e.free(scratch)


def _chunks(e: KernelEmit, n: int, size: int, overlap: bool = False
            ) -> Iterator[tuple[ir.Value, int, int]]:
    """Covers range(n) in chunks of `size` (a loop over the full ones) and a last, shorter
    one, or with `overlap` (n >= size) a last full one ending at n: yields (start, 0 for
    the loop's chunks else 1, chunk size) inside the loop."""
    full, rest = divmod(n, size)
    if full:
        with e.loop(full, "conv.chunk") as k:
            yield e.b.mul(k, e.i64(size)), 0, size
    if rest:
        if overlap:
            yield e.i64(n - size), 1, size
        else:
            yield e.i64(full * size), 1, rest


def _row_space(spec: ConvSpec) -> list[int]:
    """The output rows of one group: (batch, spatial...)."""
    return [spec.out_sizes[0], *spec.out_sizes[2:]]


def row_blocks(dims: list[int], rows_max: int) -> tuple[int, int]:
    """(j, m): a block is `m` indices of row dim `j` times all of the dims after it (j = -1:
    the whole row space is one block)."""
    trailing, j = 1, len(dims) - 1
    while j >= 0 and trailing * dims[j] <= rows_max:
        trailing *= dims[j]
        j -= 1
    if j < 0:
        return -1, 1
    return j, max(1, rows_max // trailing)


def _box(dims: list[int], strides: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """The offsets (one per list of strides) of every index of the box `dims`, row-major."""
    points = []
    for index in itertools.product(*[range(n) for n in dims]):
        points.append(tuple(sum(i * s for i, s in zip(index, st, strict=True))
                            for st in strides))
    return points


def _emit_padded_all(e: KernelEmit, spec: ConvSpec, x: ir.Value, xpad: ir.Value,
                     work: np.dtype, order: list[int], strides: list[int]) -> None:
    """Writes the whole input zero-padded and dilated into `xpad` (dims batch, group,
    feature, spatial... at `strides`), copied in `order`."""
    lead = [(spec.out_sizes[0], spec.x_strides[0], strides[0]),
            (spec.groups, spec.group_strides()[0], strides[1]),
            (spec.w_sizes[1], spec.x_strides[1], strides[2])]
    emit_padded_copy(e, spec, x, e.i64(0), xpad, work, lead, strides[3:], order)


def _emit_packed_kernel(e: KernelEmit, spec: ConvSpec, plan: _DirectPlan, w: ir.Value,
                        packed: ir.Value, features: int) -> None:
    """Copies `features` input features of the kernel (from `w` on) into (group, reduction
    dims in `plan.red` order, feature) order in the work dtype. Where the kernel's
    unit-stride dim is a reduction dim, the copy runs in tiles of it (reads along it, writes
    along the features), so both sides stay in cache."""
    og, groups = spec.out_features_per_group, spec.groups
    red_sizes = [features if i == 1 else spec.w_sizes[i] for i in plan.red]
    src = [og * spec.w_strides[0], *[spec.w_strides[i] for i in plan.red], spec.w_strides[0]]
    dst = row_major_strides([groups, *red_sizes, og])
    sizes = [groups, *red_sizes, og]
    unit = [k for k in range(1, len(sizes) - 1) if src[k] == 1 and sizes[k] > 1]
    if not unit or og == 1:
        e.copy_strided(w, spec.dtypes[1], src, packed, plan.work, sizes, dst)
        return
    k = unit[0]
    tile = _PACK_TILE
    full, rest = divmod(sizes[k], tile)
    b = e.b
    # Loops: the dims other than k and the features, then tiles of k, features, within-tile.
    outer = [i for i in range(len(sizes) - 1) if i != k]
    with e.nest([sizes[i] for i in outer], [[src[i] for i in outer], [dst[i] for i in outer]]
                ) as (so, do):
        for start, count, n in ((0, tile, full), (full * tile, rest, 1 if rest else 0)):
            if not n:
                continue
            with e.loop(n, "pack.tile") as t:
                at = b.add(e.i64(start), b.mul(t, e.i64(tile)))
                s_ptr = b.gep(w, [b.add(so, b.mul(at, e.i64(src[k])))], inbounds=True)
                d_ptr = b.gep(packed, [b.add(do, b.mul(at, e.i64(dst[k])))], inbounds=True)
                e.copy_strided(s_ptr, spec.dtypes[1], [src[-1], src[k]], d_ptr, plan.work,
                               [og, count], [dst[-1], dst[k]])


class _DirectEmit:
    """The direct kernel's code for one convolution (see `emit_features`)."""

    def __init__(self, e: KernelEmit, spec: ConvSpec, plan: _DirectPlan) -> None:
        self.e, self.spec, self.plan = e, spec, plan
        self.ty = emitter.compute_type(plan.work)
        d = len(spec.out_sizes) - 2
        self.d = d
        sizes = [spec.out_sizes[0], spec.groups, spec.w_sizes[1], *padded_extent(spec)]
        in_order = row_major_strides([sizes[i] for i in plan.xp_order])
        self.xp_strides = [in_order[plan.xp_order.index(i)] for i in range(len(sizes))]
        self.xp_size = math.prod(sizes)
        og = spec.out_features_per_group
        # A chunked, packed kernel is packed one chunk at a time into a buffer of one chunk.
        self.w_chunked = plan.w_packed and plan.chunk < spec.w_sizes[1]
        if plan.w_packed:
            red_sizes = [plan.chunk if i == 1 else spec.w_sizes[i] for i in plan.red]
            packed = row_major_strides([spec.groups, *red_sizes, og])
            self.w_group = packed[0]
            self.w_red = dict(zip(plan.red, packed[1:-1], strict=True))
            self.w_o = 1
        else:
            self.w_group = spec.group_strides()[1]
            self.w_red = {i: spec.w_strides[i] for i in plan.red}
            self.w_o = spec.w_strides[0]
        # The padded input read by tap t of spatial dim i: + t * tap stride (negative when
        # the window is reversed, which then starts at its last tap).
        sp = self.xp_strides[3:]
        self.x_red = {1: self.xp_strides[2]}
        self.tap_base = 0
        for i in range(d):
            step = spec.rhs_dilation[i] * sp[i]
            self.x_red[2 + i] = -step if spec.reverse[i] else step
            if spec.reverse[i]:
                self.tap_base += (spec.w_sizes[2 + i] - 1) * step

    def vector(self, width: int) -> ir.VectorType:
        return ir.VectorType(self.ty, width)

    def load_vector(self, ptr: ir.Value, offset: ir.Value, width: int) -> ir.Value:
        b = self.e.b
        at = b.bitcast(b.gep(ptr, [offset], inbounds=True), self.vector(width).as_pointer())
        return b.load(at, align=self.plan.work.itemsize)

    def store_vector(self, value: ir.Value, ptr: ir.Value, offset: ir.Value,
                     width: int) -> None:
        b = self.e.b
        at = b.bitcast(b.gep(ptr, [offset], inbounds=True), self.vector(width).as_pointer())
        b.store(value, at, align=self.plan.work.itemsize)

    def splat(self, x: ir.Value, width: int) -> ir.Value:
        b = self.e.b
        vty = self.vector(width)
        one = b.insert_element(ir.Constant(vty, None), x, ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width)
        return b.shuffle_vector(one, ir.Constant(vty, None), mask)

    def reduction(self, vec: tuple[ir.Value, ir.Value, dict[int, int]],
                  scalar: tuple[ir.Value, ir.Value, dict[int, int], np.dtype],
                  count: int, vrows: list[int], srows: list[int], slots: list[ir.Value],
                  width: int) -> None:
        """acc[v, s] += scalar[srows[s]] * vector[vrows[v]] over `count` input features and
        every tap (`slots` in (v, s) order). `vec` and `scalar` are (pointer, offset of the
        first input feature and tap, element stride per reduction dim) (and the scalar
        operand's dtype); the rows are offsets added to them."""
        e, b = self.e, self.e.b
        fl = ("contract",)
        v_ptr, v_base, v_red = vec
        s_ptr, s_base, s_red, s_dt = scalar

        @contextlib.contextmanager
        def nest(level: int, vo: ir.Value, so: ir.Value) -> Iterator[tuple[ir.Value, ir.Value]]:
            if level == len(self.plan.red):
                yield vo, so
                return
            dim = self.plan.red[level]
            n = count if dim == 1 else self.spec.w_sizes[dim]
            if n == 1:
                with nest(level + 1, vo, so) as inner:
                    yield inner
                return
            with e.loop(n, "conv.red") as i:
                v_next = b.add(vo, b.mul(i, e.i64(v_red[dim])))
                s_next = b.add(so, b.mul(i, e.i64(s_red[dim])))
                with nest(level + 1, v_next, s_next) as inner:
                    yield inner

        with nest(0, v_base, s_base) as (vo, so):
            vectors = [self.load_vector(v_ptr, b.add(vo, e.i64(r)), width) for r in vrows]
            # Each broadcast is used as soon as it is loaded (all of them live at once would
            # spill the accumulators).
            for j, row in enumerate(srows):
                at = b.add(so, e.i64(row))
                if s_dt == self.plan.work:
                    xs = b.load(b.gep(s_ptr, [at], inbounds=True))
                else:
                    xs = to_float(b, e.em.load(s_ptr, at, s_dt), s_dt, self.plan.work)
                xs = self.splat(xs, width)
                for i, vv in enumerate(vectors):
                    slot = slots[i * len(srows) + j]
                    prod = b.fmul(xs, vv, flags=fl)
                    b.store(b.fadd(b.load(slot), prod, flags=fl), slot)


def emit_features(e: KernelEmit, spec: ConvSpec, plan: _DirectPlan, x: ir.Value, w: ir.Value,
                  out: ir.Value, out_shared: bool) -> None:
    """The feature-vectorized kernel (the module's docstring) of `plan_features`'s plan;
    `out_shared`: the result buffer may alias an operand (written through a scratch)."""
    b = e.b
    de, xp_raw = _padded_input(e, spec, plan, x, plan.xp_order)
    work = plan.work
    og, groups = spec.out_features_per_group, spec.groups
    w_ptr, w_raw = w, None
    packed_features = plan.chunk if de.w_chunked else spec.w_sizes[1]
    if plan.w_packed:
        w_raw = e.malloc(groups * packed_features * math.prod(spec.w_sizes[2:]) * og
                         * work.itemsize)
        w_ptr = e.typed(w_raw, work)
        if not de.w_chunked:
            _emit_packed_kernel(e, spec, plan, w, w_ptr, packed_features)
    chunks = spec.w_sizes[1] // plan.chunk
    direct = (chunks == 1 and not out_shared and spec.dtypes[2] == work
              and (og == 1 or spec.out_strides[1] == 1))
    rows = _row_space(spec)
    if direct:
        target, t_o = out, spec.out_strides[1]
        t_group = og * spec.out_strides[1]
        t_rows = [spec.out_strides[0], *spec.out_strides[2:]]
        scratch = None
    else:
        # Partial sums in (batch, group, positions..., feature) order, copied out at the end.
        s_strides = row_major_strides([rows[0], groups, *rows[1:], og])
        scratch = e.malloc(math.prod(spec.out_sizes) * work.itemsize)
        target, t_o, t_group = e.typed(scratch, work), 1, s_strides[1]
        t_rows = [s_strides[0], *s_strides[2:-1]]
        if chunks > 1:
            e.memset0(target, math.prod(spec.out_sizes) * work.itemsize)
    x_rows = [de.xp_strides[0], *[ws * s for ws, s in zip(spec.window_strides,
                                                           de.xp_strides[3:], strict=True)]]
    j, m = row_blocks(rows, plan.rows_max)
    chunk_loop = e.loop(chunks, "conv.chunk") if chunks > 1 else contextlib.nullcontext(0)
    with chunk_loop as ci:
        c0 = e.i64(0) if chunks == 1 else b.mul(ci, e.i64(plan.chunk))
        count = plan.chunk
        if de.w_chunked:
            w_chunk = b.gep(w, [b.mul(c0, e.i64(spec.w_strides[1]))], inbounds=True)
            _emit_packed_kernel(e, spec, plan, w_chunk, w_ptr, plan.chunk)
        strides = [[de.xp_strides[1]], [de.w_group], [t_group]]
        with e.nest([groups], strides) as (xg, wg, tg):
            for o0, width in plan.o_blocks:
                _emit_row_blocks(de, rows, j, m, x_rows, t_rows, xg, b.add(wg, e.i64(o0 * de.w_o)),
                                 b.add(tg, e.i64(o0 * t_o)), w_ptr, target, c0, count, width,
                                 first=chunks == 1, t_o=t_o)
    e.free(xp_raw)
    if w_raw is not None:
        e.free(w_raw)
    if scratch is not None:
        s_strides = row_major_strides([rows[0], groups, *rows[1:], og])
        src = [s_strides[0], s_strides[1], 1, *s_strides[2:-1]]
        sizes = [rows[0], groups, og, *rows[1:]]
        dst = [spec.out_strides[0], og * spec.out_strides[1], spec.out_strides[1],
               *spec.out_strides[2:]]
        e.copy_strided(target, work, src, out, spec.dtypes[2], sizes, dst)
        e.free(scratch)


def _emit_row_blocks(de: _DirectEmit, rows: list[int], j: int, m: int, x_rows: list[int],
                     t_rows: list[int], xg: ir.Value, wg: ir.Value, tg: ir.Value,
                     w_ptr: ir.Value, target: ir.Value, c0: ir.Value, count: int,
                     width: int, first: bool, t_o: int) -> None:
    """Every block of output rows of one group and block of features: the dims before `j`
    and the full blocks of `m` along dim `j` as loops, then the last, shorter block."""
    e, b = de.e, de.e.b
    if j < 0:
        _emit_block(de, rows, x_rows, t_rows, xg, tg, wg, w_ptr, target, c0, count, width,
                    first, t_o)
        return
    outer = rows[:j]
    with e.nest(outer, [x_rows[:j], t_rows[:j]], [xg, tg]) as (xo, to):
        box = [m, *rows[j + 1:]]
        full, tail = divmod(rows[j], m)
        if full:
            with e.loop(full, "conv.rows") as k:
                start = b.mul(k, e.i64(m))
                _emit_block(de, box, x_rows[j:], t_rows[j:], b.add(xo, b.mul(start, e.i64(x_rows[j]))),
                            b.add(to, b.mul(start, e.i64(t_rows[j]))), wg, w_ptr, target, c0,
                            count, width, first, t_o)
        if tail:
            start = e.i64(full * m)
            _emit_block(de, [tail, *rows[j + 1:]], x_rows[j:], t_rows[j:],
                        b.add(xo, b.mul(start, e.i64(x_rows[j]))),
                        b.add(to, b.mul(start, e.i64(t_rows[j]))), wg, w_ptr, target, c0,
                        count, width, first, t_o)


def _emit_block(de: _DirectEmit, box: list[int], x_rows: list[int], t_rows: list[int],
                x_base: ir.Value, t_base: ir.Value, w_base: ir.Value, w_ptr: ir.Value,
                target: ir.Value, c0: ir.Value, count: int, width: int,
                first: bool, t_o: int) -> None:
    """One block: its accumulators start at zero (or at the partial sums in `target`), run
    over the reduction and are stored."""
    e, b = de.e, de.e.b
    points = _box(box, [x_rows[-len(box):], t_rows[-len(box):]])
    vty = de.vector(width)
    slots = [e.entry_alloca(vty) for _ in points]
    for slot, (_, to) in zip(slots, points, strict=True):
        if first:
            b.store(ir.Constant(vty, None), slot)
        else:
            b.store(_load_features(de, target, b.add(t_base, e.i64(to)), width, t_o), slot)
    x0 = b.add(b.add(x_base, e.i64(de.tap_base)), b.mul(c0, e.i64(de.x_red[1])))
    if not de.w_chunked:  # a chunk-packed kernel starts at the chunk
        w_base = b.add(w_base, b.mul(c0, e.i64(de.w_red[1])))
    de.reduction((w_ptr, w_base, de.w_red), (de.xp, x0, de.x_red, de.plan.work), count, [0],
                 [xo for xo, _ in points], slots, width)
    for slot, (_, to) in zip(slots, points, strict=True):
        _store_features(de, b.load(slot), target, b.add(t_base, e.i64(to)), width, t_o)


def _load_features(de: _DirectEmit, ptr: ir.Value, offset: ir.Value, width: int,
                   stride: int) -> ir.Value:
    if stride == 1 or width == 1:
        return de.load_vector(ptr, offset, width)
    b = de.e.b
    value = ir.Constant(de.vector(width), None)
    for k in range(width):
        element = b.load(b.gep(ptr, [b.add(offset, de.e.i64(k * stride))], inbounds=True))
        value = b.insert_element(value, element, ir.Constant(ir.IntType(32), k))
    return value


def _store_features(de: _DirectEmit, value: ir.Value, ptr: ir.Value, offset: ir.Value,
                    width: int, stride: int) -> None:
    if stride == 1 or width == 1:
        de.store_vector(value, ptr, offset, width)
        return
    b = de.e.b
    for k in range(width):
        element = b.extract_element(value, ir.Constant(ir.IntType(32), k))
        b.store(element, b.gep(ptr, [b.add(offset, de.e.i64(k * stride))], inbounds=True))
