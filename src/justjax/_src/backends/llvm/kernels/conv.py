"""Native kernels of `stablehlo.convolution` (lax.conv_general_dilated).

Any dimension numbers (each operand is read through its strides: no transposes), window
strides, padding (negative crops), lhs (input) and rhs (kernel) dilation, window reversal,
feature_group_count and batch_group_count. Semantics are the reference backend's
(`convolution`): the input zero-padded and dilated with zeros, each output element the sum
over input features and taps of input * kernel, accumulated as dot_general accumulates
(`dot.Accumulation`).

Three implementations, for float products chosen by shape (`_direct_form`):
- the register-blocked direct kernels of `conv_direct.py`, vectorized over output features
  (for thin products, fewer than `_THIN_ROWS` output positions per batch and group: the
  kernel gradient of a convolution, whose "batch" is the input feature dim and whose
  reduction runs over batch x space; and for feature-minor outputs, NHWC) or over output
  positions (for channel-major outputs, NCHW, and fewer than 4 output features: the input
  gradient into one channel).
- im2col + BLAS, for the other float results with real matrix products (per group at least
  `dot.BLAS_MIN_WORK` multiply-adds, and at least 4 output features and 4
  features x taps): for each (output batch, group) the input is copied once zero-padded
  and dilated (in the float accumulation dtype, channel-minor or channel-major like the
  input); then for each block of output positions a native loop writes the patch matrix
  P (positions x features*taps, or its transpose for channel-major inputs, so the copy
  loops run contiguously) and one gemm multiplies it with the kernel seen as a
  (features*taps x output features) matrix — in place when the kernel's feature and tap
  dimensions collapse to one stride (OIHW, HWIO...), else copied once. The result is
  written in place when its spatial dimensions collapse and the output features or the
  positions are unit-stride (NHWC, NCHW...), else into a scratch then copied.
- direct loop kernels for every other case (integers, bools, float-to-integer results,
  depthwise and small convolutions): with output features innermost (an axpy over them)
  when the kernel and the output are feature-minor (HWIO -> NHWC), else per output element
  a loop over taps and input features; taps falling in padding or between dilated input
  elements read zero.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import program
from justjax._src.backends.llvm.kernels import conv_direct, dot
from justjax._src.backends.llvm.kernels.conv_spec import (ConvSpec, emit_padded_copy,
                                                          padded_extent)
from justjax._src.backends.llvm.kernels.dot import (Accumulation, KernelEmit, blas_layout,
                                                    collapse, emit_gemm, row_major_strides)
from justjax._src.core import dtypes
from justjax._src.hlo.ir import Op

__all__ = ["ConvSpec", "multiply_adds"]

_I1, _I64 = ir.IntType(1), ir.IntType(64)
_LOW = (np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16))
# Output positions per (batch, group) below which a gemm is too thin for BLAS.
_THIN_ROWS = 64
# The direct kernel's form float convolutions take where it applies ("features",
# "positions"; "im2col": none), or None: chosen by shape. Tests and benchmarks set it.
FORM: str | None = None
# Elements of one block of the patch matrix (its rows are output positions).
_BLOCK_ELEMENTS = 1 << 18
# Below these the matrix products are too thin for BLAS (depthwise convolutions).
_MIN_BLAS_FEATURES = 4


class _Taps:
    """Where output position `pos` and kernel tap `tap` read the input: for each spatial
    dimension the input index (clamped in bounds) and whether the tap falls on an input
    element (not on padding or between dilated elements)."""

    def __init__(self, e: KernelEmit, spec: ConvSpec) -> None:
        self.e, self.spec = e, spec

    def offset(self, pos: Sequence[ir.Value], tap: Sequence[ir.Value]
               ) -> tuple[ir.Value, ir.Value]:
        """(valid, input element offset of the spatial coordinates)."""
        b, spec, i64 = self.e.b, self.spec, self.e.i64
        valid: ir.Value = ir.Constant(_I1, 1)
        offset: ir.Value = i64(0)
        dims = zip(pos, tap, spec.x_sizes[2:], spec.x_strides[2:], spec.w_sizes[2:],
                   spec.window_strides, spec.pad_lo, spec.lhs_dilation, spec.rhs_dilation,
                   spec.reverse, strict=True)
        for p, t, size, stride, k, ws, lo, ldil, rdil, rev in dims:
            if rev:
                t = b.sub(i64(k - 1), t)
            q = b.add(b.mul(p, i64(ws)), b.mul(t, i64(rdil)))
            if lo:
                q = b.sub(q, i64(lo))
            last = (size - 1) * ldil
            ok = b.and_(b.icmp_signed(">=", q, i64(0)), b.icmp_signed("<=", q, i64(last)))
            if ldil > 1:
                ok = b.and_(ok, b.icmp_signed("==", b.srem(q, i64(ldil)), i64(0)))
                q = b.sdiv(q, i64(ldil))
            valid = b.and_(valid, ok)
            safe = b.select(ok, q, i64(0))
            offset = b.add(offset, b.mul(safe, i64(stride)))
        return valid, offset


def _load_input(e: KernelEmit, acc: Accumulation, spec: ConvSpec, x: ir.Value,
                offset: ir.Value, valid: ir.Value) -> ir.Value:
    """The input element at `offset` in the accumulation type, or zero where not `valid`
    (the address is in bounds either way: the load needs no branch)."""
    dt = spec.dtypes[0]
    value = acc.convert(e.b, e.em.load(x, offset, dt), dt)
    return e.b.select(valid, value, acc.zero())


# ---------------------------------------------------------------------------------------------
# The direct loop kernel.

def _emit_loop_conv(e: KernelEmit, spec: ConvSpec, acc: Accumulation, x: ir.Value,
                    w: ir.Value, out: ir.Value) -> None:
    """The direct kernel, one output element at a time: a loop over taps and an inner
    (reduction) loop over input features."""
    b, em = e.b, e.em
    _, w_dt, out_dt = spec.dtypes
    groups, og = spec.groups, spec.out_features_per_group
    x_step, w_step, o_step = spec.group_strides()
    nb, space = spec.out_sizes[0], spec.out_sizes[2:]
    d = len(space)
    taps = _Taps(e, spec)
    slot = e.entry_alloca(acc.type)
    sizes = [nb, groups, og, *space]
    strides = [[spec.x_strides[0], x_step, 0, *[0] * d],
               [0, w_step, spec.w_strides[0], *[0] * d],
               [spec.out_strides[0], o_step, spec.out_strides[1], *spec.out_strides[2:]]]
    with e.nest(sizes, strides) as (xo, wo, oo):
        pos = e.indices[3:]
        b.store(acc.zero(), slot)
        with e.nest(spec.w_sizes[2:], [spec.w_strides[2:]], [wo]) as (wt,):
            valid, xs = taps.offset(pos, e.indices)
            x_base = b.add(xo, xs)
            with e.nest([spec.w_sizes[1]], [[spec.x_strides[1]], [spec.w_strides[1]]],
                        [x_base, wt]) as (xc, wc):
                xv = _load_input(e, acc, spec, x, xc, valid)
                wv = acc.convert(b, em.load(w, wc, w_dt), w_dt)
                b.store(acc.step(b, b.load(slot), xv, wv), slot)
        em.store(acc.finish(b, e.module, b.load(slot)), out, oo, out_dt)


def _axpy_form(spec: ConvSpec, acc: Accumulation) -> bool:
    """Whether the output-features-innermost loop suits (kernel and output feature-minor,
    as HWIO -> NHWC), accumulating in the result or a float scratch."""
    result = spec.dtypes[2]
    return (spec.out_features_per_group > 1 and spec.w_strides[0] == 1
            and spec.out_strides[1] == 1
            and (acc.kind != "float" or result.kind == "f" or result in _LOW))


def _emit_axpy_conv(e: KernelEmit, spec: ConvSpec, acc: Accumulation, x: ir.Value,
                    w: ir.Value, out: ir.Value) -> None:
    """The direct kernel with output features innermost: out[n, pos, o] += x * w[.., o]
    over taps and input features (a vectorizable loop over o); float16/bfloat16 results
    accumulate in a float32 scratch rounded once."""
    b, em = e.b, e.em
    _, w_dt, out_dt = spec.dtypes
    total = math.prod(spec.out_sizes)
    target, t_dt, scratch = out, out_dt, None
    if not acc.exact_in_result:
        scratch = e.malloc(total * acc.work.itemsize)
        target, t_dt = e.typed(scratch, acc.work), acc.work
    e.memset0(target, total * t_dt.itemsize)
    x_step, w_step, o_step = spec.group_strides()
    space = spec.out_sizes[2:]
    taps = _Taps(e, spec)
    zeros = [0] * len(space)
    sizes = [spec.out_sizes[0], spec.groups, *space]
    strides = [[spec.x_strides[0], x_step, *zeros], [0, w_step, *zeros],
               [spec.out_strides[0], o_step, *spec.out_strides[2:]]]
    with e.nest(sizes, strides) as (xo, wo, oo):
        pos = e.indices[2:]
        with e.nest(spec.w_sizes[2:], [spec.w_strides[2:]], [wo]) as (wt,):
            valid, xs = taps.offset(pos, e.indices)
            with e.nest([spec.w_sizes[1]], [[spec.x_strides[1]], [spec.w_strides[1]]],
                        [b.add(xo, xs), wt]) as (xc, wc):
                xv = _load_input(e, acc, spec, x, xc, valid)
                with e.nest([spec.out_features_per_group],
                            [[spec.w_strides[0]], [spec.out_strides[1]]], [wc, oo]) as (wf, of):
                    wv = acc.convert(b, em.load(w, wf, w_dt), w_dt)
                    partial = em.load(target, of, t_dt)
                    em.store(acc.step(b, partial, xv, wv), target, of, t_dt)
    if scratch is not None:
        e.copy_strided(target, t_dt, [1], out, out_dt, [total])
        e.free(scratch)


# ---------------------------------------------------------------------------------------------
# im2col + BLAS.

@dataclass
class _KernelMatrix:
    """The kernel of one group as a (features*taps x output features) matrix."""

    ptr: ir.Value
    group_stride: int
    ck_sizes: list[int]       # its rows: (input feature, taps...) dims in `ck_order`
    ck_order: list[int]       # indices into the kernel's logical dims 1..
    layout: tuple[str, int]   # blas_layout as (CK x Og)
    layout_t: tuple[str, int]  # blas_layout as (Og x CK)
    scratch: ir.Value | None = None


def _kernel_matrix(e: KernelEmit, spec: ConvSpec, work: np.dtype, w: ir.Value
                   ) -> _KernelMatrix:
    """The kernel read in place when its input-feature and tap dimensions, in memory
    order, collapse to one stride and one side is unit-stride; else copied (G, CK, Og)."""
    og, groups = spec.out_features_per_group, spec.groups
    dims = list(range(1, len(spec.w_sizes)))
    order = sorted(dims, key=lambda i: -spec.w_strides[i])
    ck_sizes = [spec.w_sizes[i] for i in order]
    ck = math.prod(ck_sizes)
    s_ck = collapse(ck_sizes, [spec.w_strides[i] for i in order])
    s_o = spec.w_strides[0] if og > 1 else 0
    if spec.dtypes[1] == work and s_ck is not None:
        layout = blas_layout(ck, og, s_ck, s_o)
        layout_t = blas_layout(og, ck, s_o, s_ck)
        if layout is not None and layout_t is not None:
            return _KernelMatrix(w, og * spec.w_strides[0], ck_sizes, order, layout, layout_t)
    order = dims
    ck_sizes = [spec.w_sizes[i] for i in order]
    scratch = e.malloc(groups * ck * og * work.itemsize)
    typed = e.typed(scratch, work)
    src = [og * spec.w_strides[0], *[spec.w_strides[i] for i in order], spec.w_strides[0]]
    e.copy_strided(w, spec.dtypes[1], src, typed, work, [groups, *ck_sizes, og])
    layout, layout_t = blas_layout(ck, og, og, 1), blas_layout(og, ck, 1, og)
    assert layout is not None and layout_t is not None
    return _KernelMatrix(typed, ck * og, ck_sizes, order, layout, layout_t, scratch)


def _output_layout(spec: ConvSpec, rows: int) -> tuple[str, int, int] | None:
    """How a block of `rows` output positions of one group is written by gemm in place:
    ("rows", ldc, position stride) for C (positions x Og) with unit-stride features,
    ("cols", ldc, position stride) for C^T (Og x positions) with unit-stride positions."""
    og, space = spec.out_features_per_group, spec.out_sizes[2:]
    s_p = collapse(space, spec.out_strides[2:])
    if s_p is None:
        return None
    s_o = spec.out_strides[1]
    npos = math.prod(space)
    if (og <= 1 or s_o == 1) and (npos <= 1 or s_p >= og):
        return "rows", s_p if npos > 1 else max(og, 1), s_p
    if (npos <= 1 or s_p == 1) and (og <= 1 or s_o >= rows):
        return "cols", s_o if og > 1 else max(rows, 1), s_p
    return None


@dataclass
class _Blocks:
    """Output positions in blocks of whole slices of the first spatial dimension (so that
    the patch loops run over the spatial dimensions themselves)."""

    first: int          # the first spatial dimension's size (1 without spatial dims)
    inner: list[int]    # the other spatial sizes
    slices: int         # slices of the first dimension per block

    @property
    def per_slice(self) -> int:
        return math.prod(self.inner)

    @property
    def rows(self) -> int:
        """Positions in a full block (a partial last block has fewer)."""
        return self.slices * self.per_slice

    @property
    def count(self) -> int:
        return -(-self.first // self.slices)


def _emit_patches(e: KernelEmit, spec: ConvSpec, kmat: _KernelMatrix, xpad: ir.Value,
                  pad_strides: list[int], p: ir.Value, h0: ir.Value, cnt: ir.Value,
                  blocks: _Blocks, by_column: bool) -> None:
    """Writes the patch matrix of the block whose first-dimension slices start at `h0`
    (`cnt` of them): element (r, ck) = the padded input output position r and (feature,
    taps) ck read, at r*CK + ck, or at ck*rows + r `by_column` (positions innermost).

    Args:
      pad_strides: the padded input's strides for (feature, spatial...).
    """
    b = e.b
    space_strides = [ws * s for ws, s in zip(spec.window_strides, pad_strides[1:],
                                             strict=True)]
    tap_strides = [(-rd if rev else rd) * s for rd, rev, s in zip(
        spec.rhs_dilation, spec.reverse, pad_strides[1:], strict=True)]
    # A reversed window starts at its last tap.
    tap_base = sum((k - 1) * rd * s for k, rd, rev, s in zip(
        spec.w_sizes[2:], spec.rhs_dilation, spec.reverse, pad_strides[1:], strict=True)
        if rev)
    col_x = [pad_strides[0] if dim == 1 else tap_strides[dim - 2] for dim in kmat.ck_order]
    row_unit = 1 if by_column else math.prod(kmat.ck_sizes)
    col_p = [s * (blocks.rows if by_column else 1)
             for s in row_major_strides(kmat.ck_sizes)]
    inner_p = [s * row_unit for s in row_major_strides(blocks.inner)]
    first_x = space_strides[0] if space_strides else 0

    @contextlib.contextmanager
    def positions(p_base: ir.Value, x_base: ir.Value) -> Iterator[list[ir.Value]]:
        x1 = b.add(x_base, b.mul(h0, e.i64(first_x)))
        with e.loop(cnt, "patch.slice") as hh:
            p1 = b.add(p_base, b.mul(hh, e.i64(blocks.per_slice * row_unit)))
            x2 = b.add(x1, b.mul(hh, e.i64(first_x)))
            with e.nest(blocks.inner, [inner_p, space_strides[1:]], [p1, x2]) as offsets:
                yield offsets

    @contextlib.contextmanager
    def columns(p_base: ir.Value, x_base: ir.Value) -> Iterator[list[ir.Value]]:
        with e.nest(kmat.ck_sizes, [col_p, col_x], [p_base, x_base]) as offsets:
            yield offsets

    def copy(p_off: ir.Value, x_off: ir.Value) -> None:
        value = b.load(b.gep(xpad, [x_off], inbounds=True))
        b.store(value, b.gep(p, [p_off], inbounds=True))

    if by_column:
        with columns(e.i64(0), e.i64(tap_base)) as (pc, xc):
            with positions(pc, xc) as (po, xo):
                copy(po, xo)
    else:
        with positions(e.i64(0), e.i64(tap_base)) as (po, xo):
            with columns(po, xo) as (pc, xc):
                copy(pc, xc)


def _use_blas(spec: ConvSpec, acc: Accumulation) -> np.dtype | None:
    work = dot.blas_work(acc, *spec.dtypes[:2])
    if work is None:
        return None
    og = spec.out_features_per_group
    ck = math.prod(spec.w_sizes[1:])
    npos = math.prod(spec.out_sizes[2:])
    if min(og, ck) < _MIN_BLAS_FEATURES or og * ck * npos < dot.BLAS_MIN_WORK:
        return None
    return work


def _emit_blas_conv(e: KernelEmit, spec: ConvSpec, work: np.dtype, acc: Accumulation,
                    x: ir.Value, w: ir.Value, out: ir.Value, out_shared: bool) -> None:
    b = e.b
    og, groups = spec.out_features_per_group, spec.groups
    nb, space = spec.out_sizes[0], spec.out_sizes[2:]
    ck = math.prod(spec.w_sizes[1:])
    first, inner = (space[0], space[1:]) if space else (1, [])
    slices = max(1, min(first, _BLOCK_ELEMENTS // max(ck * math.prod(inner), 1)))
    blocks = _Blocks(first, list(inner), slices)
    rows = blocks.rows
    kmat = _kernel_matrix(e, spec, work, w)
    x_step, _, o_step = spec.group_strides()
    layout = None if out_shared or spec.dtypes[2] != work else _output_layout(spec, rows)
    scratch_out = None
    o_strides = spec.out_strides
    if layout is None:
        # Canonical (batch, feature, positions) scratch, copied out at the end.
        scratch_out = e.malloc(math.prod(spec.out_sizes) * work.itemsize)
        o_strides = row_major_strides(spec.out_sizes)
        o_step = og * o_strides[1]
        layout = ("cols", o_strides[1], 1)
    c_ptr = out if scratch_out is None else e.typed(scratch_out, work)
    kind, ldc, s_pos = layout
    # Positions innermost when the input is channel-major (its last spatial dim contiguous).
    by_column = bool(space) and space[-1] > 1 and spec.x_strides[-1] == 1
    if by_column:
        p_as_a, p_as_b = blas_layout(rows, ck, 1, rows), blas_layout(ck, rows, rows, 1)
        order = list(range(len(space) + 1))
    else:
        p_as_a, p_as_b = blas_layout(rows, ck, ck, 1), blas_layout(ck, rows, 1, ck)
        order = [*range(1, len(space) + 1), 0]
    assert p_as_a is not None and p_as_b is not None
    extent = [spec.w_sizes[1], *padded_extent(spec)]
    in_order = row_major_strides([extent[d] for d in order])
    pad_strides = [in_order[order.index(d)] for d in range(len(extent))]
    xpad = e.typed(e.malloc(math.prod(extent) * work.itemsize), work)
    patches = e.typed(e.malloc(rows * ck * work.itemsize), work)
    strides = [[spec.x_strides[0], x_step], [0, kmat.group_stride], [o_strides[0], o_step]]
    with e.nest([nb, groups], strides) as (xo, wo, oo):
        feature = (extent[0], spec.x_strides[1], pad_strides[0])
        emit_padded_copy(e, spec, x, xo, xpad, work, [feature], pad_strides[1:], order)
        with e.loop(blocks.count, "conv.block") as block:
            h0 = b.mul(block, e.i64(slices))
            cnt = b.sub(e.i64(first), h0)
            cnt = b.select(b.icmp_signed("<", cnt, e.i64(slices)), cnt, e.i64(slices))
            _emit_patches(e, spec, kmat, xpad, pad_strides, patches, h0, cnt, blocks,
                          by_column)
            m = b.mul(cnt, e.i64(blocks.per_slice))
            c_off = b.add(oo, b.mul(block, e.i64(rows * s_pos)))
            a_w, c, pm = e.at(kmat.ptr, wo), e.at(c_ptr, c_off), e.at(patches, e.i64(0))
            if kind == "rows":
                emit_gemm(e, work, m, og, ck, pm, p_as_a, a_w, kmat.layout, c, ldc)
            else:
                emit_gemm(e, work, og, m, ck, a_w, kmat.layout_t, pm, p_as_b, c, ldc)
    for scratch in (patches, xpad):
        e.free(scratch)
    if scratch_out is not None:
        e.copy_strided(c_ptr, work, o_strides, out, spec.dtypes[2], spec.out_sizes,
                       spec.out_strides)
        e.free(scratch_out)
    if kmat.scratch is not None:
        e.free(kmat.scratch)


def _direct_form(spec: ConvSpec, acc: Accumulation) -> str | None:
    """Which direct kernel runs a float convolution ("features", "positions"), or None
    (im2col + BLAS or the loop kernels). Measured on one core: the feature-vectorized form
    where the products per (batch, group) are thin (fewer than `_THIN_ROWS` output
    positions: a kernel gradient, 3x3 positions over a long reduction, runs 8-12x faster
    than BLAS), or feature-minor outputs; the position-vectorized form for fewer than 4
    output features (an input gradient into one channel) and channel-major outputs."""
    features = conv_direct.plan_features(spec, acc) is not None
    positions = conv_direct.plan_positions(spec, acc) is not None
    if FORM is not None:
        return FORM if {"features": features, "positions": positions}.get(FORM) else None
    npos = math.prod(spec.out_sizes[2:])
    if (spec.out_features_per_group * math.prod(spec.w_sizes[1:]) * npos
            < dot.BLAS_MIN_WORK):
        return None  # small enough for the loop kernels
    if features and (npos < _THIN_ROWS or spec.out_strides[1] == 1):
        return "features"
    if positions and (spec.out_features_per_group < _MIN_BLAS_FEATURES
                      or spec.out_strides[-1] == 1):
        return "positions"
    return None


def multiply_adds(op: Op) -> int:
    """The multiply-adds of a `stablehlo.convolution` (output elements x input features
    per group x taps): the work of its loop kernels."""
    spec = ConvSpec.of(op)
    return math.prod(spec.out_sizes) * math.prod(spec.w_sizes[1:])


def _shared_result(fn: ir.Function) -> bool:
    return "noalias" not in fn.args[2].attributes


@program.register("stablehlo.convolution")
def _convolution(ctx: program.KernelContext) -> None:
    """`stablehlo.convolution`: im2col + BLAS gemm for float products, else a direct
    loop kernel."""
    spec = ConvSpec.of(ctx.op)
    e = KernelEmit.of(ctx)
    x, w = ctx.operands
    out = ctx.results[0]
    total = math.prod(spec.out_sizes)
    if total == 0:
        return
    out_dt = spec.dtypes[2]
    ck = math.prod(spec.w_sizes[1:])
    if ck == 0 or math.prod(spec.x_sizes) == 0:
        # Nothing to sum, or only padding to read (a zero-size input has no buffer).
        e.memset0(out, total * out_dt.itemsize)
        return
    acc = Accumulation.of(out_dt, *spec.dtypes[:2])
    form = _direct_form(spec, acc)
    if form == "features":
        plan = conv_direct.plan_features(spec, acc)
        assert plan is not None
        conv_direct.emit_features(e, spec, plan, x, w, out, _shared_result(ctx.fn))
        return
    if form == "positions":
        plan = conv_direct.plan_positions(spec, acc)
        assert plan is not None
        conv_direct.emit_positions(e, spec, plan, x, w, out, _shared_result(ctx.fn))
        return
    work = _use_blas(spec, acc)
    if work is not None:
        _emit_blas_conv(e, spec, work, acc, x, w, out, _shared_result(ctx.fn))
        return
    loop = _emit_axpy_conv if _axpy_form(spec, acc) else _emit_loop_conv
    if _shared_result(ctx.fn):
        scratch = e.malloc(total * out_dt.itemsize)
        typed = e.typed(scratch, out_dt)
        loop(e, spec, acc, x, w, typed)
        e.memcpy(out, typed, total * out_dt.itemsize)
        e.free(scratch)
    else:
        loop(e, spec, acc, x, w, out)


program.MULTIPLY_ADDS["stablehlo.convolution"] = multiply_adds
