"""Image resampling (`jax.image`): `resize` and `scale_and_translate`.

Each spatial axis is resampled by a weight matrix `W[input, output]`: output pixel `j`
samples the input at `(j + 0.5) / scale - translation / scale - 0.5`, weighting input pixels
by a kernel (triangle for linear, Keys cubic, Lanczos, box for area) of the distance,
stretched by `1 / scale` when downsampling with antialiasing. Columns are normalized to sum
to 1, and samples outside the image get no weight. The axes are then contracted one matrix
each with a single `einsum`, as in JAX (TensorFlow's `scale_and_translate` is the model).
"""
from __future__ import annotations

import enum
import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax.dot import Precision
from justjax._src.numpy import array_creation, reductions, selection, tensor, ufuncs, util

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The interpolation kernels `resize` knows."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for (`"bilinear"`, `"lanczos3"`, `"bicubic"` ...)."""
        method = _METHOD_NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_METHOD_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    **dict.fromkeys(["linear", "bilinear", "trilinear", "triangle"], ResizeMethod.LINEAR),
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    **dict.fromkeys(["cubic", "bicubic", "tricubic"], ResizeMethod.CUBIC),
    **dict.fromkeys(["cubic-pytorch", "bicubic-pytorch"], ResizeMethod.CUBIC_PYTORCH),
    "area": ResizeMethod.AREA,
}


def _triangle(x: Any) -> Any:
    return ufuncs.maximum(0, 1 - ufuncs.abs(x))


def _keys_cubic(x: Any, a: float = -0.5) -> Any:
    """Keys' cubic convolution kernel (a = -0.5; OpenCV and PyTorch use a = -0.75)."""
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return selection.where(x >= 2.0, 0.0, selection.where(x >= 1.0, far, near))


def _lanczos(radius: float) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        y = radius * ufuncs.sin(np.pi * x) * ufuncs.sin(np.pi * x / radius)
        # sinc(x) sinc(x / radius) -> 1 as x -> 0.
        value = selection.where(
            x > 1e-3, ufuncs.divide(y, selection.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
        return selection.where(x > radius, 0.0, value)
    return kernel


# The area kernel is the overlap of pixel footprints, not a function of the distance.
_AREA = object()

# method -> (the kernel's support radius, the kernel)
_KERNELS: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, lambda x: _keys_cubic(x, -0.75)),
    ResizeMethod.AREA: (1, _AREA),
}

# Columns whose weights sum to less than this are left empty.
_MIN_TOTAL_WEIGHT = 1000.0 * float(np.finfo(np.float32).eps)


def _normalized(weights: Any) -> Any:
    total = reductions.sum(weights, axis=0, keepdims=True)
    safe = selection.where(total != 0, total, 1)
    return selection.where(ufuncs.abs(total) > _MIN_TOTAL_WEIGHT, weights / safe, 0)


def _weight_matrix(input_size: int, output_size: int, scale: Any, translation: Any,
                   kernel: Any, antialias: bool, edge_padding: bool, radius: int) -> Any:
    """`W[i, j]`: the weight of input pixel i in output pixel j along one axis."""
    dtype = dtypes.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = ufuncs.maximum(inv_scale, 1.0) if antialias else 1.0
    samples = ((array_creation.arange(output_size, dtype=dtype) + 0.5) * inv_scale
               - translation * inv_scale - 0.5)
    margin = 0
    if edge_padding:
        margin = radius
        if antialias:
            static_scale = core.concrete_or_error(
                float, scale, "Antialiasing with edge padding requires a static scale.")
            margin = math.ceil(radius * max(1.0 / static_scale, 1.0))
    positions = array_creation.arange(-margin, input_size + margin, dtype=dtype)
    if kernel is _AREA:
        left = array_creation.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right = left + inv_scale
        pixel = array_creation.arange(input_size, dtype=dtype)
        weights = ufuncs.maximum(0.0, ufuncs.minimum(right[None, :], pixel[:, None] + 1.0)
                                 - ufuncs.maximum(left[None, :], pixel[:, None]))
    else:
        weights = kernel(ufuncs.abs(samples[None, :] - positions[:, None]) / kernel_scale)
    if edge_padding:
        # Weights of positions past the edge go to the edge pixel (replicate padding).
        source = selection.clip(positions.astype(np.int32), 0, input_size - 1)
        columns = util.broadcast_to(array_creation.arange(output_size)[None, :],
                                    (positions.shape[0], output_size))
        folded = array_creation.zeros((input_size, output_size), dtype=dtype)
        folded = folded.at[source[:, None], columns].add(weights)
        return _normalized(folded)
    weights = _normalized(weights)
    inside = ufuncs.logical_and(samples >= -0.5, samples <= input_size - 0.5)
    return selection.where(inside[None, :], weights, 0)


def _scale_and_translate(x: Any, output_shape: Sequence[int], spatial_dims: Sequence[int],
                         scale: Sequence[Any], translation: Sequence[Any], method: ResizeMethod,
                         antialias: bool, precision: Any) -> Any:
    if not spatial_dims:
        return x
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    operands: list[Any] = []
    out_indices = list(range(x.ndim))
    for i, d in enumerate(spatial_dims):
        d = util.canonicalize_axis(d, x.ndim)
        w = _weight_matrix(x.shape[d], output_shape[d], scale[i], translation[i], kernel,
                           antialias, edge_padding, radius).astype(x.dtype)
        operands += [w, [d, x.ndim + i]]
        out_indices[d] = x.ndim + i
    return tensor.einsum(x, list(range(x.ndim)), *operands, out_indices, precision=precision)


def _method(method: str | ResizeMethod) -> ResizeMethod:
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_rank(shape: Sequence[int], image: Any) -> None:
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod,
                        antialias: bool = True, precision: Any = Precision.HIGHEST) -> Any:
    """Resamples `image` to `shape` by scaling and translating its `spatial_dims`:
    output pixel `j` (centre `j + 0.5`) comes from input position
    `(j + 0.5 - translation) / scale`.

    Args:
      image: the image (any rank).
      shape: the output shape (same rank).
      spatial_dims: the axes to resample.
      scale, translation: one value per spatial axis (may be traced).
      method: a `ResizeMethod` or its name, except nearest.
      antialias: widen the kernel when downsampling.
      precision: the contraction's precision.
    Returns:
      The resampled image (inexact dtype).
    """
    shape = core.canonicalize_shape(shape)
    _check_rank(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    [image] = util.promote_dtypes_inexact(image)
    scale, translation = util.promote_dtypes_inexact(scale, translation)
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                                antialias, precision)


def _resize_nearest(x: Any, output_shape: Sequence[int]) -> Any:
    for d, (m, n) in enumerate(zip(x.shape, output_shape, strict=True)):
        if m == n:
            continue
        offsets = (array_creation.arange(n, dtype=np.float32) + 0.5) * m / n
        offsets = ufuncs.floor(offsets.astype(np.float32)).astype(np.int32)
        x = x[(slice(None),) * d + (offsets,)]
    return x


@jit(static_argnums=(1, 2, 3, 4))
def _resize(image: Any, shape: tuple[int, ...], method: str | ResizeMethod, antialias: bool,
            precision: Any) -> Any:
    _check_rank(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    [image] = util.promote_dtypes_inexact(image)
    spatial_dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _scale_and_translate(image, shape, spatial_dims, scale, [0.0] * len(spatial_dims),
                                method, antialias, precision)


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = Precision.HIGHEST) -> Any:
    """`image` resampled to `shape`: each axis whose size changes is scaled to fit, pixel
    centres aligned (TensorFlow's `half_pixel_centers`).

    Args:
      image: the image (any rank; batch and channel axes keep their size).
      shape: the output shape.
      method: `"nearest"`, `"linear"`/`"bilinear"`, `"lanczos3"`, `"lanczos5"`,
        `"cubic"`, `"cubic-pytorch"`, `"area"`, or a `ResizeMethod`.
      antialias: widen the kernel when downsampling (not for nearest).
      precision: the contraction's precision.
    Returns:
      The resized image (inexact dtype; nearest keeps the dtype).
    """
    return _resize(image, core.canonicalize_shape(shape), method, antialias, precision)
