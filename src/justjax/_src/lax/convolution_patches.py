"""Image patches and unshared (locally connected) convolution, as JAX's
`lax.conv_general_dilated_patches` and `lax.conv_general_dilated_local`.

Both are written with the `conv_general_dilated` and `dot_general` primitives, staging what JAX
stages: the patches are a grouped convolution (one group per input channel) with an identity
kernel that copies each position of the receptive window into its own output channel; the
local convolution contracts those patches with a kernel that has one set of weights per output
position (a `dot_general` batched over the spatial dimensions).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from justjax._src.lax import convolution, dot, structural
from justjax._src.lax.convolution import ConvGeneralDilatedDimensionNumbers
from justjax._src.lax.dot import Precision, PrecisionLike
from justjax._src.lax.linalg_common import eye

__all__ = ["conv_general_dilated_patches", "conv_general_dilated_local"]


def _move_axes(x: Any, sources: Sequence[int], destinations: Sequence[int]) -> Any:
    """`x` with axes `sources` moved to `destinations`, the other axes keeping their order
    (a transpose unless nothing moves)."""
    ndim = np.ndim(x)
    perm: list[int | None] = [None] * ndim
    for source, destination in zip(sources, destinations, strict=True):
        perm[destination % ndim] = source % ndim
    others = iter(i for i in range(ndim) if i not in perm)
    perm = [next(others) if p is None else p for p in perm]
    if perm == list(range(ndim)):
        return x
    return structural.transpose(x, perm)


def conv_general_dilated_patches(
        lhs: Any, filter_shape: Sequence[int], window_strides: Sequence[int],
        padding: str | Sequence[tuple[int, int]], lhs_dilation: Sequence[int] | None = None,
        rhs_dilation: Sequence[int] | None = None,
        dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
        precision: Precision | None = None, preferred_element_type: Any = None) -> Any:
    """The receptive-field patches of `conv_general_dilated`, flattened into the channels.

    Args:
      lhs: the rank n+2 input.
      filter_shape: the n spatial sizes of the window, in the order of the kernel spec's
        spatial dimensions.
      window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers: as for
        `conv_general_dilated`.
      precision: a `Precision` for the input (the identity kernel uses DEFAULT).
      preferred_element_type: the result dtype.

    Returns:
      A rank n+2 array in the output layout whose channel dimension has size
      `C * prod(filter_shape)`: channel `c` major, then the window positions in the kernel
      spec's spatial order.
    """
    lhs_aval = dot.operand_aval(lhs, "conv_general_dilated_patches", 0)
    filter_shape = tuple(filter_shape)
    dnums = convolution.conv_dimension_numbers(lhs_aval.shape, (1, 1) + filter_shape,
                                               dimension_numbers)
    window_size = math.prod(filter_shape)
    channels = lhs_aval.shape[dnums.lhs_spec[1]]
    # Kernel (C * window, 1, *filter_shape): output channel c * window + k copies window
    # position k of input channel c.
    kernel = eye(lhs_aval.dtype, window_size)
    kernel = structural.broadcast_in_dim(kernel, (channels, window_size, window_size), (1, 2))
    kernel = structural.reshape(kernel, (channels * window_size, 1, *filter_shape))
    kernel = _move_axes(kernel, (0, 1), (dnums.rhs_spec[0], dnums.rhs_spec[1]))
    return convolution.conv_general_dilated(
        lhs, kernel, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dnums,
        feature_group_count=channels,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        preferred_element_type=preferred_element_type)


def conv_general_dilated_local(
        lhs: Any, rhs: Any, window_strides: Sequence[int],
        padding: str | Sequence[tuple[int, int]], filter_shape: Sequence[int],
        lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
        dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
        precision: PrecisionLike = None) -> Any:
    """Unshared convolution: a separate kernel at every output position.

    Args:
      lhs: the rank n+2 input.
      rhs: the rank n+2 kernel. Its spatial dimensions are the *output* positions; its input
        feature dimension `I` holds the window of each input channel flattened (channel major,
        then the window in the kernel spec's spatial order), `C * prod(filter_shape)` long.
      window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers: as for
        `conv_general_dilated` (`rhs_dilation` dilates the window over the input).
      filter_shape: the n spatial sizes of the receptive window.
      precision: None, a `Precision` (or its name) or a pair of them.

    Returns:
      The result in the output layout of `dimension_numbers`.
    """
    lhs_aval = dot.operand_aval(lhs, "conv_general_dilated_local", 0)
    canonical = dot.canonicalize_precision(precision)
    if canonical is None:
        lhs_precision = None
    elif isinstance(canonical, tuple) and len(canonical) == 2:
        lhs_precision = canonical[0]
    else:
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(
        lhs, filter_shape=filter_shape, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, precision=lhs_precision)
    lhs_spec, rhs_spec, out_spec = convolution.conv_dimension_numbers(
        lhs_aval.shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    # Batch over the spatial dimensions, paired in spec order and sorted by the patches'
    # positions; contract the patch features with the kernel's input features.
    pairs = sorted(zip(out_spec[2:], rhs_spec[2:], strict=True))
    batch = ([p for p, _ in pairs], [r for _, r in pairs])
    dims = (([out_spec[1]], [rhs_spec[1]]), batch)
    out = dot.dot_general(patches, rhs, dims, precision=precision)
    return _move_axes(out, (-2, -1), (out_spec[0], out_spec[1]))
