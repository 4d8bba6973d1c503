"""Native kernels of `stablehlo.convolution` (lax.conv_general_dilated).

Any dimension numbers (each operand is read through its strides: no transposes), window
strides, padding (negative crops), lhs (input) and rhs (kernel) dilation, window reversal,
feature_group_count and batch_group_count. Semantics are the reference backend's
(`convolution`): the input zero-padded and dilated with zeros, each output element the sum
over input features and taps of input * kernel, accumulated as dot_general accumulates
(`dot.Accumulation`).

Three implementations, for float products chosen by shape (`_prefer_direct`):
- a register-blocked direct kernel (`_emit_direct_conv`), for thin products (fewer than
  `_THIN_ROWS` output positions per batch and group: the kernel gradient of a convolution,
  whose "batch" is the input feature dim and whose reduction runs over batch x space) and
  short reductions with feature-minor outputs: the input is copied once zero-padded and
  dilated (in its own memory order), the kernel read in place when its output features are
  unit-stride (else packed once, feature-minor); a block of output rows (batch x positions)
  times a block of output features accumulates in vector registers over the whole reduction
  (per step one vector load of the kernel, one broadcast input element and one FMA per row),
  and a kernel larger than `_CHUNK_BYTES` is read in chunks of input features while the
  blocks' partial sums wait in memory.
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
import functools
import itertools
import math
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import emitter, program
from justjax._src.backends.llvm.kernels import dot
from justjax._src.backends.llvm.runtime import host
from justjax._src.backends.llvm.kernels.dot import (Accumulation, KernelEmit, blas_layout,
                                                    to_float,
                                                    collapse, emit_gemm, row_major_strides)
from justjax._src.core import dtypes
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op

__all__ = ["ConvSpec", "multiply_adds"]

_I1, _I64 = ir.IntType(1), ir.IntType(64)
_LOW = (np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16))
# Elements of one block of the patch matrix (its rows are output positions).
_BLOCK_ELEMENTS = 1 << 18
# Below these the matrix products are too thin for BLAS (depthwise convolutions).
_MIN_BLAS_FEATURES = 4


@dataclass
class ConvSpec:
    """A convolution's sizes and each operand's element strides, in logical order: input
    (batch, feature, spatial...), kernel (output feature, input feature, spatial...),
    output (batch, feature, spatial...)."""

    x_sizes: list[int]
    x_strides: list[int]
    w_sizes: list[int]
    w_strides: list[int]
    out_sizes: list[int]
    out_strides: list[int]
    window_strides: list[int]
    pad_lo: list[int]
    lhs_dilation: list[int]
    rhs_dilation: list[int]
    reverse: list[bool]
    feature_groups: int
    batch_groups: int
    dtypes: tuple[np.dtype, np.dtype, np.dtype]

    @staticmethod
    def of(op: Op) -> ConvSpec:
        attrs = op.attributes
        dn: hlo.ConvDimensionNumbers = attrs["dimension_numbers"]
        (xt, wt), ot = op.operand_types, op.result.type
        d = len(dn.input_spatial_dimensions)
        x_dims = [dn.input_batch_dimension, dn.input_feature_dimension,
                  *dn.input_spatial_dimensions]
        w_dims = [dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
                  *dn.kernel_spatial_dimensions]
        o_dims = [dn.output_batch_dimension, dn.output_feature_dimension,
                  *dn.output_spatial_dimensions]
        padding = np.asarray(attrs.get("padding", np.zeros((d, 2), np.int64))).reshape(d, 2)
        reverse = [bool(r) for r in attrs.get("window_reversal", ())] or [False] * d

        def logical(t: hlo.TensorType, dims: list[int]) -> tuple[list[int], list[int]]:
            strides = row_major_strides(t.shape)
            return [t.shape[i] for i in dims], [strides[i] for i in dims]

        (xs, xst), (ws, wst), (os_, ost) = (logical(xt, x_dims), logical(wt, w_dims),
                                            logical(ot, o_dims))
        ones = [1] * d
        return ConvSpec(xs, xst, ws, wst, os_, ost,
                        [int(s) for s in attrs.get("window_strides", ones)],
                        [int(p) for p in padding[:, 0]],
                        [int(s) for s in attrs.get("lhs_dilation", ones)],
                        [int(s) for s in attrs.get("rhs_dilation", ones)], reverse,
                        int(attrs.get("feature_group_count", 1)),
                        int(attrs.get("batch_group_count", 1)),
                        (xt.dtype, wt.dtype, ot.dtype))

    @property
    def groups(self) -> int:
        return max(self.feature_groups, self.batch_groups)

    @property
    def out_features_per_group(self) -> int:
        return self.w_sizes[0] // self.groups

    def group_strides(self) -> tuple[int, int, int]:
        """Element strides of one group step in the input, kernel and output."""
        og = self.out_features_per_group
        if self.batch_groups > 1:
            x_step = (self.x_sizes[0] // self.groups) * self.x_strides[0]
        else:
            x_step = self.w_sizes[1] * self.x_strides[1] if self.feature_groups > 1 else 0
        return x_step, og * self.w_strides[0], og * self.out_strides[1]


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


def _padded_extent(spec: ConvSpec) -> list[int]:
    """Per spatial dimension, the extent of the padded, dilated input the windows read."""
    return [(p - 1) * ws + (k - 1) * rd + 1 if p > 0 else 0 for p, ws, k, rd in zip(
        spec.out_sizes[2:], spec.window_strides, spec.w_sizes[2:], spec.rhs_dilation,
        strict=True)]


def _emit_padded_copy(e: KernelEmit, spec: ConvSpec, x: ir.Value, x_base: ir.Value,
                      xpad: ir.Value, work: np.dtype, lead: Sequence[tuple[int, int, int]],
                      spatial_strides: Sequence[int], order: Sequence[int]) -> None:
    """Writes input elements zero-padded and dilated into `xpad` in the `work` dtype: the
    `lead` dims (size, input stride, padded stride: batch, group, feature...) and the
    spatial dims (padded to the extent the windows read, at `spatial_strides`), from `x`
    at `x_base`. Zeros first, then one strided copy over `order` (indices into lead +
    spatial dims) of each spatial dim's range of input indices that land inside the
    extent, so the copy loops need no bounds checks and vectorize."""
    sizes = [n for n, _, _ in lead]
    src = [s for _, s, _ in lead]
    dst = [d for _, _, d in lead]
    x_off = xp_off = 0
    padded = False
    ext = _padded_extent(spec)
    dims = zip(ext, spec.x_sizes[2:], spec.x_strides[2:], spatial_strides, spec.pad_lo,
               spec.lhs_dilation, strict=True)
    for extent, size, x_stride, xp_stride, lo, ldil in dims:
        # Input index i sits at lo + i * ldil of the padded, dilated extent.
        first = -(lo // ldil) if lo < 0 else 0  # ceil(-lo / ldil)
        last = min(size, (extent - 1 - lo) // ldil + 1)
        count = max(0, last - first)
        padded |= count * ldil < extent or ldil > 1
        sizes.append(count)
        src.append(x_stride)
        dst.append(ldil * xp_stride)
        x_off += first * x_stride
        xp_off += (lo + first * ldil) * xp_stride
    if padded:
        total = math.prod([n for n, _, _ in lead]) * math.prod(ext)
        e.memset0(xpad, total * work.itemsize)
    if math.prod(sizes) == 0:
        return
    b = e.b
    x0 = b.gep(x, [b.add(x_base, e.i64(x_off))], inbounds=True)
    xp0 = b.gep(xpad, [e.i64(xp_off)], inbounds=True)
    e.copy_strided(x0, spec.dtypes[0], [src[i] for i in order], xp0, work,
                   [sizes[i] for i in order], [dst[i] for i in order])


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
    extent = [spec.w_sizes[1], *_padded_extent(spec)]
    in_order = row_major_strides([extent[d] for d in order])
    pad_strides = [in_order[order.index(d)] for d in range(len(extent))]
    xpad = e.typed(e.malloc(math.prod(extent) * work.itemsize), work)
    patches = e.typed(e.malloc(rows * ck * work.itemsize), work)
    strides = [[spec.x_strides[0], x_step], [0, kmat.group_stride], [o_strides[0], o_step]]
    with e.nest([nb, groups], strides) as (xo, wo, oo):
        feature = (extent[0], spec.x_strides[1], pad_strides[0])
        _emit_padded_copy(e, spec, x, xo, xpad, work, [feature], pad_strides[1:], order)
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


# ---------------------------------------------------------------------------------------------
# The register-blocked direct kernel.
#
# out[b, g, o, p] = sum over (c, t) of xpad[b, g, c, p * stride + t * dilation] * w[g, o, c, t]:
# a block of output rows (batch, positions) times a block of output features accumulates in
# vector registers (one vector of features per row) over the whole reduction, each step one
# vector load of the kernel, one broadcast input element per row and one FMA per row and
# vector. No patch matrix is built, and thin products (the kernel gradient: few positions, a
# long reduction over batch and space) run at the FMA units' speed where a BLAS gemm of 3 or 9
# rows does not.

# Accumulator vectors a block keeps in registers (of 32 with AVX-512, 16 below it).
_ACC_VECTORS_AVX512 = 24
_ACC_VECTORS = 12
# Kernels larger than this (per group) are read in chunks of input features, the output
# blocks visited for each chunk while it stays in cache (their partial sums kept in memory).
_CHUNK_BYTES = 1 << 18
# Elements of the kernel's unit-stride dim a packing copy reads at a time.
_PACK_TILE = 16
# Output positions per (batch, group) below which a gemm is too thin for BLAS.
_THIN_ROWS = 64
# The direct kernel's form float convolutions take where it applies ("features",
# "positions"; "im2col": none), or None: chosen by shape. Tests and benchmarks set it.
FORM: str | None = None


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
      chunk: input features per chunk of the reduction (all of them: no chunks).
    """

    work: np.dtype
    o_blocks: list[tuple[int, int]]
    red: list[int]
    w_packed: bool
    xp_order: list[int]
    rows_max: int
    chunk: int


def _plan_direct(spec: ConvSpec, acc: Accumulation) -> _DirectPlan | None:
    """The direct kernel's plan, or None where it does not apply (not a real float product, or
    fewer than 4 output features per group)."""
    work = dot.blas_work(acc, *spec.dtypes[:2])
    og = spec.out_features_per_group
    if work is None or work.kind != "f" or og < _MIN_BLAS_FEATURES:
        return None
    vbytes = _vector_bytes()
    lanes = vbytes // work.itemsize
    width = og if og <= 4 * lanes else 2 * lanes
    o_blocks = [(o, min(width, og - o)) for o in range(0, og, width)]
    vectors = -(-width // lanes)
    budget = _ACC_VECTORS_AVX512 if vbytes == 64 else _ACC_VECTORS
    d = len(spec.out_sizes) - 2
    x_src = [spec.x_strides[0], spec.group_strides()[0], spec.x_strides[1], *spec.x_strides[2:]]
    xp_order = sorted(range(3 + d), key=lambda i: -x_src[i])
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
        chunk = max(1, c * _CHUNK_BYTES // w_group_bytes)
    return _DirectPlan(work, o_blocks, red, w_packed, xp_order, max(1, budget // vectors), chunk)


# The direct kernel's other form, vectorized over output positions: for a channel-major output
# (NCHW) or a single output feature (an input gradient into one channel), a vector holds
# consecutive positions along the last spatial dim, read from the padded input (channel-major,
# spatial-minor) at unit stride; a block of output features are its rows, each step one
# broadcast kernel element per row.

def _plan_positions(spec: ConvSpec, acc: Accumulation) -> _DirectPlan | None:
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
    rows = max(1, min(spec.out_features_per_group, budget // vectors))
    # o_blocks here: (positions per vector, feature rows per block).
    return _DirectPlan(work, [(width, rows)], list(range(1, 2 + d)), False,
                       list(range(3 + d)), rows, spec.w_sizes[1])


def _emit_direct_positions(e: KernelEmit, spec: ConvSpec, plan: _DirectPlan,
                           x: ir.Value, w: ir.Value, out: ir.Value, out_shared: bool) -> None:
    """The position-vectorized direct kernel (see the comment above `_plan_positions`)."""
    b = e.b
    de = _DirectEmit(e, spec, plan)
    work = plan.work
    og, groups = spec.out_features_per_group, spec.groups
    xp_raw = e.malloc(de.xp_size * work.itemsize)
    de.xp = e.typed(xp_raw, work)
    _emit_padded_all(e, spec, x, de.xp, work, plan.xp_order, de.xp_strides)
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
    sizes = [spec.out_sizes[0], groups, *spec.out_sizes[2:-1]]
    strides = [[de.xp_strides[0], de.xp_strides[1], *x_pos[:-1]],
               [0, de.w_group, *[0] * (d - 1)],
               [t_strides[0], t_group, *t_strides[2:-1]]]
    w_dt = spec.dtypes[1]
    with e.nest(sizes, strides) as (xo, wo, to):
        x0 = b.add(xo, e.i64(de.tap_base))
        for p_start, _, p_width in _chunks(e, spec.out_sizes[-1], width, overlap=True):
            xv = b.add(x0, b.mul(p_start, e.i64(x_pos[-1])))
            tv = b.add(to, b.mul(p_start, e.i64(t_strides[-1])))
            for o_start, _, o_rows in _chunks(e, og, rows):
                slots = [e.entry_alloca(de.vector(p_width)) for _ in range(o_rows)]
                for slot in slots:
                    b.store(ir.Constant(de.vector(p_width), None), slot)
                ws = b.add(wo, b.mul(o_start, e.i64(spec.w_strides[0])))
                de.reduction((de.xp, xv, de.x_red), (w, ws, de.w_red, w_dt), e.i64(0),
                             spec.w_sizes[1], [r * spec.w_strides[0] for r in range(o_rows)],
                             slots, p_width)
                t0 = b.add(tv, b.mul(o_start, e.i64(t_strides[1])))
                for r, slot in enumerate(slots):
                    de.store_vector(b.load(slot), target, b.add(t0, e.i64(r * t_strides[1])),
                                    p_width)
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


def _direct_form(spec: ConvSpec, acc: Accumulation) -> str | None:
    """Which direct kernel runs a float convolution ("features", "positions"), or None
    (im2col + BLAS or the loop kernels). Measured on one core: the feature-vectorized form
    where the products per (batch, group) are thin (fewer than `_THIN_ROWS` output
    positions: a kernel gradient, 3x3 positions over a long reduction, runs 8-12x faster
    than BLAS), or feature-minor outputs; the position-vectorized form for fewer than 4
    output features (an input gradient into one channel) and channel-major outputs."""
    features = _plan_direct(spec, acc) is not None
    positions = _plan_positions(spec, acc) is not None
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


def _row_space(spec: ConvSpec) -> list[int]:
    """The output rows of one group: (batch, spatial...)."""
    return [spec.out_sizes[0], *spec.out_sizes[2:]]


def _row_blocks(dims: list[int], rows_max: int) -> tuple[int, int]:
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
    feature, spatial... at `strides`), copied in `order` (the input's memory order)."""
    lead = [(spec.out_sizes[0], spec.x_strides[0], strides[0]),
            (spec.groups, spec.group_strides()[0], strides[1]),
            (spec.w_sizes[1], spec.x_strides[1], strides[2])]
    _emit_padded_copy(e, spec, x, e.i64(0), xpad, work, lead, strides[3:], order)


def _emit_packed_kernel(e: KernelEmit, spec: ConvSpec, plan: _DirectPlan, w: ir.Value,
                        packed: ir.Value) -> None:
    """Copies the kernel into (group, reduction dims in `plan.red` order, feature) order in
    the work dtype. Where the kernel's unit-stride dim is a reduction dim, the copy runs in
    tiles of it (reads along it, writes along the features), so both sides stay in cache."""
    og, groups = spec.out_features_per_group, spec.groups
    red_sizes = [spec.w_sizes[i] for i in plan.red]
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
    """The direct kernel's code for one convolution (see `_emit_direct_conv`)."""

    def __init__(self, e: KernelEmit, spec: ConvSpec, plan: _DirectPlan) -> None:
        self.e, self.spec, self.plan = e, spec, plan
        self.ty = emitter.compute_type(plan.work)
        d = len(spec.out_sizes) - 2
        self.d = d
        sizes = [spec.out_sizes[0], spec.groups, spec.w_sizes[1], *_padded_extent(spec)]
        in_order = row_major_strides([sizes[i] for i in plan.xp_order])
        self.xp_strides = [in_order[plan.xp_order.index(i)] for i in range(len(sizes))]
        self.xp_size = math.prod(sizes)
        og = spec.out_features_per_group
        if plan.w_packed:
            red_sizes = [spec.w_sizes[i] for i in plan.red]
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
                  c0: ir.Value, count: ir.Value | int, rows: list[int],
                  slots: list[ir.Value], width: int) -> None:
        """acc[r] += scalar[row r] * vector over input features c0 .. c0+count and every
        tap. `vec` and `scalar` are (pointer, base offset, element stride per reduction dim)
        (and the scalar operand's dtype); `rows` are offsets into the scalar operand."""
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
            if isinstance(n, int) and n == 1:
                with nest(level + 1, vo, so) as inner:
                    yield inner
                return
            with e.loop(n, "conv.red") as i:
                v_next = b.add(vo, b.mul(i, e.i64(v_red[dim])))
                s_next = b.add(so, b.mul(i, e.i64(s_red[dim])))
                with nest(level + 1, v_next, s_next) as inner:
                    yield inner

        v0 = b.add(v_base, b.mul(c0, e.i64(v_red[1])))
        s0 = b.add(s_base, b.mul(c0, e.i64(s_red[1])))
        with nest(0, v0, s0) as (vo, so):
            vv = self.load_vector(v_ptr, vo, width)
            for slot, row in zip(slots, rows, strict=True):
                at = b.add(so, e.i64(row))
                if s_dt == self.plan.work:
                    xs = b.load(b.gep(s_ptr, [at], inbounds=True))
                else:
                    xs = to_float(b, e.em.load(s_ptr, at, s_dt), s_dt, self.plan.work)
                prod = b.fmul(self.splat(xs, width), vv, flags=fl)
                b.store(b.fadd(b.load(slot), prod, flags=fl), slot)


def _emit_direct_conv(e: KernelEmit, spec: ConvSpec, plan: _DirectPlan, acc: Accumulation,
                      x: ir.Value, w: ir.Value, out: ir.Value, out_shared: bool) -> None:
    """The register-blocked direct kernel (see the section's comment)."""
    b = e.b
    de = _DirectEmit(e, spec, plan)
    work = plan.work
    og, groups = spec.out_features_per_group, spec.groups
    xp_raw = e.malloc(de.xp_size * work.itemsize)
    de.xp = e.typed(xp_raw, work)
    _emit_padded_all(e, spec, x, de.xp, work, plan.xp_order, de.xp_strides)
    w_ptr, w_raw = w, None
    if plan.w_packed:
        w_raw = e.malloc(groups * math.prod(spec.w_sizes[1:]) * og * work.itemsize)
        w_ptr = e.typed(w_raw, work)
        _emit_packed_kernel(e, spec, plan, w, w_ptr)
    chunks = -(-spec.w_sizes[1] // plan.chunk)
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
    j, m = _row_blocks(rows, plan.rows_max)
    chunk_loop = e.loop(chunks, "conv.chunk") if chunks > 1 else contextlib.nullcontext(0)
    with chunk_loop as ci:
        c0 = e.i64(0) if chunks == 1 else b.mul(ci, e.i64(plan.chunk))
        count: ir.Value | int = spec.w_sizes[1]
        if chunks > 1:
            left = b.sub(e.i64(spec.w_sizes[1]), c0)
            count = b.select(b.icmp_signed("<", left, e.i64(plan.chunk)), left,
                             e.i64(plan.chunk))
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
                     w_ptr: ir.Value, target: ir.Value, c0: ir.Value, count: ir.Value | int,
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
                target: ir.Value, c0: ir.Value, count: ir.Value | int, width: int,
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
    x0 = b.add(x_base, e.i64(de.tap_base))
    de.reduction((w_ptr, w_base, de.w_red), (de.xp, x0, de.x_red, de.plan.work), c0, count,
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
        plan = _plan_direct(spec, acc)
        assert plan is not None
        _emit_direct_conv(e, spec, plan, acc, x, w, out, _shared_result(ctx.fn))
        return
    if form == "positions":
        plan = _plan_positions(spec, acc)
        assert plan is not None
        _emit_direct_positions(e, spec, plan, x, w, out, _shared_result(ctx.fn))
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
