"""`jnp.fft`: NumPy's discrete Fourier transforms on `lax.fft`.

Every transform moves the axes it works on to the end, crops or zero-pads them to the
requested sizes, and calls `lax.fft` over them (up to three axes per call: more are done
three or two at a time, since XLA's FFT takes at most three). `norm` scales the result:
"backward" (the default: the inverse transforms divide by n), "ortho" (both by sqrt(n)) or
"forward" (the forward transforms divide by n). Results, dtypes and error messages are
JAX's.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from justjax._src.core import core, dtypes
from justjax._src.lax import fft as lax_fft
from justjax._src.lax.fft import FftType
from justjax._src.numpy import (array_creation, padding, rearranging, reductions, shape_ops,
                                ufuncs, util)
from justjax._src.numpy.dtype_ops import astype
from justjax._src.runtime import array as array_lib
from justjax._src.runtime.devices import Device
from justjax._src.runtime.sharding import Sharding, SingleDeviceSharding

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]

Shape = Sequence[int]
_NORMS = ("backward", "ortho", "forward")


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _norm_factor(sizes: Any, func_name: str, norm: str) -> Any:
    """What the transform is multiplied by for `norm`, from the transformed sizes (an array
    of the result's dtype); the inverse transforms ("i...") scale the other way."""
    if norm == "backward":
        return array_creation.array(1)
    sizes, = util.promote_dtypes_inexact(sizes)
    inverse = func_name.startswith("i")
    if norm == "ortho":
        root = ufuncs.sqrt(reductions.prod(sizes))
        return root if inverse else 1 / root
    if norm == "forward":
        total = reductions.prod(sizes)
        return total if inverse else 1 / total
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _default_axes_and_sizes(arr: Any, fft_type: FftType, s: list[int] | None,
                            axes: Sequence[int]) -> tuple[Any, list[int]]:
    """`arr` cropped or zero-padded to the sizes `s` asks for along `axes` (the trailing
    ones by now), and the transform's lengths."""
    shape = list(_shape(arr))
    if s is None:
        if fft_type == FftType.IRFFT:
            sizes = [shape[axis] for axis in axes[:-1]]
            if len(axes):
                # A half spectrum of m bins comes from 2 (m - 1) real samples.
                sizes.append(max(0, 2 * (shape[axes[-1]] - 1)))
            return arr, sizes
        return arr, [shape[axis] for axis in axes]
    wanted = list(shape)
    for axis, size in zip(axes, s, strict=True):
        wanted[axis] = size
    if fft_type == FftType.IRFFT:
        wanted[-1] = wanted[-1] // 2 + 1
    arr = arr[tuple(slice(size) for size in wanted)]
    arr = padding.pad(arr, [(0, want - have)
                            for want, have in zip(wanted, _shape(arr), strict=True)])
    return arr, list(s)


def _fft_core(func_name: str, fft_type: FftType, a: Any, s: Shape | None,
              axes: Sequence[int] | None, norm: str | None) -> Any:
    """The n-dimensional transform `func_name` of `a` (see the module docstring)."""
    full_name = f"jax.numpy.fft.{func_name}"
    arr = util.ensure_arraylike(full_name, a)
    if s is not None:
        s = [operator.index(size) for size in s]
        if any(size <= 0 for size in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    given_axes = axes
    ndim = len(_shape(arr))
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if given_axes is not None:
        axes = tuple(range(ndim - len(axes), ndim))
        arr = shape_ops.moveaxis(arr, given_axes, axes)
    arr, sizes = _default_axes_and_sizes(arr, fft_type, s, axes)
    out = _fft_nd(arr, fft_type, sizes)
    if norm is not None:
        factor = _norm_factor(array_creation.array(sizes, dtype=out.dtype), func_name, norm)
        out = out * factor
    if given_axes is not None:
        out = shape_ops.moveaxis(out, axes, given_axes)
    return out


def _fft_nd(arr: Any, fft_type: FftType, sizes: Sequence[int]) -> Any:
    """`lax.fft` over the trailing `len(sizes)` axes, in calls of at most three axes: the
    innermost two or three first (forward) or last (inverse: the real axis is innermost)."""
    if len(sizes) <= 3:
        return lax_fft.fft(arr, fft_type, tuple(sizes))
    inner = 2 if len(sizes) == 4 else 3
    ndim = len(_shape(arr))
    outer = tuple(range(ndim - len(sizes), ndim - inner))
    moved = tuple(range(ndim - len(sizes) + inner, ndim))
    if fft_type in (FftType.FFT, FftType.RFFT):
        arr = lax_fft.fft(arr, fft_type, tuple(sizes)[-inner:])
        arr = shape_ops.moveaxis(arr, outer, moved)
        arr = _fft_nd(arr, FftType.FFT, sizes[:-inner])
        return shape_ops.moveaxis(arr, moved, outer)
    arr = shape_ops.moveaxis(arr, outer, moved)
    arr = _fft_nd(arr, FftType.IFFT, sizes[:-inner])
    arr = shape_ops.moveaxis(arr, moved, outer)
    return lax_fft.fft(arr, fft_type, tuple(sizes)[-inner:])


# ---------------------------------------------------------------------------------------------
# n-dimensional transforms.

def fftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """The n-dimensional discrete Fourier transform (`numpy.fft.fftn`).

    Args:
      a: the input (converted to complex).
      s: the length of the transform along each axis of `axes` (cropping or zero-padding);
        default the input's.
      axes: the axes to transform; default the last `len(s)`, or all.
      norm: "backward" (default), "ortho" or "forward".
    Returns:
      The complex transform.
    """
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The n-dimensional inverse discrete Fourier transform (`numpy.fft.ifftn`); arguments
    as `fftn`'s."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The n-dimensional transform of a real input (`numpy.fft.rfftn`): the last axis keeps
    its `n // 2 + 1` non-negative frequencies; arguments as `fftn`'s (complex input is a
    ValueError)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """The inverse of `rfftn` (`numpy.fft.irfftn`): a real result whose last transformed
    axis has `s[-1]` samples (default `2 * (m - 1)` for `m` bins); arguments as `fftn`'s."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


# ---------------------------------------------------------------------------------------------
# One-dimensional transforms.

def _check_single_axis(func_name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")


def _fft_1d(func_name: str, fft_type: FftType, a: Any, n: int | None, axis: int,
            norm: str | None) -> Any:
    _check_single_axis(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional discrete Fourier transform (`numpy.fft.fft`).

    Args:
      a: the input (converted to complex).
      n: the transform's length (cropping or zero-padding `a`); default `a`'s.
      axis: the axis to transform.
      norm: "backward" (default), "ortho" or "forward".
    Returns:
      The complex transform.
    """
    return _fft_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional inverse transform (`numpy.fft.ifft`); arguments as `fft`'s."""
    return _fft_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a real input (`numpy.fft.rfft`): `n // 2 + 1` bins; arguments as
    `fft`'s."""
    return _fft_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of `rfft` (`numpy.fft.irfft`): `n` real samples (default `2 * (m - 1)`);
    arguments as `fft`'s."""
    return _fft_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a Hermitian-symmetric signal given by its first half
    (`numpy.fft.hfft`): `irfft(conj(a), n) * n`, `norm` scaling it as a forward transform.

    Args:
      a: the first half of the signal.
      n: the length of the real result (default `2 * (m - 1)`).
      axis: the axis to transform.
      norm: "backward" (default), "ortho" or "forward".
    Returns:
      The real transform.
    """
    conj_a = ufuncs.conj(a)
    _check_single_axis("hfft", axis)
    length = (_shape(conj_a)[axis] - 1) * 2 if n is None else n
    return _fft_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * length


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of `hfft` (`numpy.fft.ihfft`): `conj(rfft(a, n)) / n`; arguments as
    `fft`'s."""
    _check_single_axis("ihfft", axis)
    arr = array_creation.asarray(a)
    length = _shape(arr)[axis] if n is None else n
    out = _fft_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return ufuncs.conj(out) * (1 / length)


# ---------------------------------------------------------------------------------------------
# Two-dimensional transforms.

def _fft_2d(func_name: str, fft_type: FftType, a: Any, s: Shape | None, axes: Sequence[int],
            norm: str | None) -> Any:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. "
                         f"Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """The two-dimensional transform (`numpy.fft.fft2`); arguments as `fftn`'s, `axes`
    exactly two."""
    return _fft_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """The two-dimensional inverse transform (`numpy.fft.ifft2`)."""
    return _fft_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """The two-dimensional transform of a real input (`numpy.fft.rfft2`)."""
    return _fft_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """The inverse of `rfft2` (`numpy.fft.irfft2`)."""
    return _fft_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


# ---------------------------------------------------------------------------------------------
# Frequencies and shifts.

def _check_freq_args(func_name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{func_name} only takes a single "
                         f"value. Got d = {list(d)}.")


def _on_device(x: Any, device: Device | Sharding | None) -> Any:
    """`x` placed on `device` (committed), when it is a concrete array and one is given."""
    if device is None or isinstance(x, core.Tracer):
        return x
    sharding = SingleDeviceSharding(device) if isinstance(device, Device) else device
    if not isinstance(sharding, Sharding):
        raise ValueError(f"device must be a jax.Device or a jax.sharding.Sharding, got "
                         f"{device!r}")
    return array_lib.place(array_lib.to_array(x), sharding)


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None,
            device: Device | Sharding | None = None) -> Any:
    """The sample frequencies of an `n`-point transform with sample spacing `d`
    (`numpy.fft.fftfreq`): `[0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d n)`.

    Args:
      n: the transform's length.
      d: the sample spacing.
      dtype: the result dtype (default float); computed in its float type.
      device: where to place the result.
    Returns:
      The `n` frequencies.
    """
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("fftfreq", n, d)
    compute = dtypes.finfo(dtypes.to_inexact_dtype(dtype)).dtype
    i = array_creation.arange(n, dtype=compute)
    k = ufuncs.remainder(i + n // 2, n) - n // 2
    out = astype(k, compute) / array_creation.array(d * n, dtype=compute)
    return _on_device(astype(out, dtype), device)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None,
             device: Device | Sharding | None = None) -> Any:
    """The non-negative sample frequencies of an `n`-point real transform
    (`numpy.fft.rfftfreq`): `[0, 1, ..., n//2] / (d n)`; arguments as `fftfreq`'s (the
    bins are counted in `dtype` itself)."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("rfftfreq", n, d)
    k = array_creation.arange(0, n // 2 + 1, dtype=dtype)
    out = k / array_creation.array(d * n, dtype=dtype)
    return _on_device(out, device)


def _shifts(x: Any, axes: None | int | Sequence[int], sign: int
            ) -> tuple[int | list[int], int | Sequence[int]]:
    shape = _shape(x)
    if axes is None:
        return [sign * (size // 2) for size in shape], tuple(range(len(shape)))
    if isinstance(axes, int):
        return sign * (shape[axes] // 2), axes
    return [sign * (shape[axis] // 2) for axis in axes], axes


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """Rolls the zero frequency to the middle (`numpy.fft.fftshift`).

    Args:
      x: the spectrum.
      axes: the axes to shift (default all).
    Returns:
      The shifted spectrum.
    """
    x = util.ensure_arraylike("fftshift", x)
    shift, axes = _shifts(x, axes, 1)
    return rearranging.roll(x, shift, axes)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """The inverse of `fftshift` (`numpy.fft.ifftshift`); arguments as `fftshift`'s."""
    x = util.ensure_arraylike("ifftshift", x)
    shift, axes = _shifts(x, axes, -1)
    return rearranging.roll(x, shift, axes)
