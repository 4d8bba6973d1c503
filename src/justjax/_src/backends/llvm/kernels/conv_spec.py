"""A `stablehlo.convolution` as the llvm backend's convolution kernels see it (`ConvSpec`), and
the copy of its input zero-padded and dilated that the im2col and direct kernels read.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.kernels.dot import KernelEmit, row_major_strides
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op

__all__ = ["ConvSpec", "emit_padded_copy", "padded_extent"]


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


def padded_extent(spec: ConvSpec) -> list[int]:
    """Per spatial dimension, the extent of the padded, dilated input the windows read."""
    return [(p - 1) * ws + (k - 1) * rd + 1 if p > 0 else 0 for p, ws, k, rd in zip(
        spec.out_sizes[2:], spec.window_strides, spec.w_sizes[2:], spec.rhs_dilation,
        strict=True)]


def emit_padded_copy(e: KernelEmit, spec: ConvSpec, x: ir.Value, x_base: ir.Value,
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
    ext = padded_extent(spec)
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
