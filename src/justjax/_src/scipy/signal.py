"""`jax.scipy.signal`: convolutions, correlations and detrending.

`convolve` / `correlate` (any rank) and their 2-D forms lower to one
`conv_general_dilated` with the smaller input flipped as the kernel; `fftconvolve` (and
`method="fft"`) multiplies spectra (`rfftn` for real inputs, `fftn` for complex) of the full
output size and slices the requested part out. The spectral estimators (`stft`, `istft`,
`csd`, `welch`) are in `signal_spectral.py`. Results, dtypes and errors are JAX 0.10.2's.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from justjax._src.core import core
from justjax._src.interpreters import batching
from justjax._src.lax import convolution, slicing
from justjax._src.lax.dot import Precision
from justjax._src.numpy import (array_creation, dtype_ops, joining, linalg_extra, rearranging,
                                shape_ops, tensor, ufuncs, util)
from justjax._src.numpy import fft as jnp_fft

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]

ModeString = Literal["full", "same", "valid"]
_MODES = ("full", "same", "valid")


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _ndim(x: Any) -> int:
    return len(_shape(x))


def _size(x: Any) -> int:
    return int(np.prod(_shape(x), dtype=np.int64))


def inexact_arrays(*args: Any) -> list[Any]:
    """The arguments promoted to one inexact type, as Arrays (host values included, so
    that arithmetic on them is traced and not done by NumPy in float64)."""
    return [array_creation.asarray(a) for a in util.promote_dtypes_inexact(*args)]


def _pairs(in1: Any, in2: Any) -> list[tuple[int, int]]:
    return list(zip(_shape(in1), _shape(in2), strict=True))


# ---------------------------------------------------------------------------------------------
# FFT convolution.

def fftconvolve(in1: Any, in2: Any, mode: ModeString = "full",
                axes: Sequence[int] | None = None) -> Any:
    """The convolution of two N-dimensional arrays through FFTs (`scipy.signal.fftconvolve`).

    Args:
      in1, in2: the inputs, of one rank.
      mode: "full" (the whole convolution), "same" (centred, `in1`'s size) or "valid"
        (only where the inputs overlap completely).
      axes: the axes to convolve over (default all); along the others the inputs must have
        one size and are treated as a batch.
    Returns:
      The convolution (of the inputs' inexact type).
    """
    util.check_arraylike("fftconvolve", in1, in2)
    in1, in2 = inexact_arrays(in1, in2)
    if _ndim(in1) != _ndim(in2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")

    def convolve_all(a: Any, b: Any) -> Any:
        return _fftconvolve_unbatched(a, b, mode)

    if axes is None:
        return convolve_all(in1, in2)
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    axes = tuple(util.canonicalize_axis(operator.index(ax), _ndim(in1)) for ax in axes)
    batch_axes = sorted(set(range(_ndim(in1))) - set(axes))
    if any(_shape(in1)[i] != _shape(in2)[i] for i in batch_axes):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={_shape(in1)} "
                         f"in2.shape={_shape(in2)} axes={axes}")
    fun = convolve_all
    # The innermost map takes the lowest batch axis: each outer map removes a higher one,
    # so the axis numbers of the inner maps stay right.
    for ax in batch_axes:
        fun = _map_along(fun, ax)
    return fun(in1, in2)


def _map_along(fun: Any, axis: int) -> Any:
    """`vmap(fun, in_axes=axis, out_axes=axis)` for a function of two arrays."""
    batched = batching.vmap_positional(fun, (axis, axis))
    return lambda a, b: shape_ops.moveaxis(batched(a, b), 0, axis)


def _fftconvolve_unbatched(in1: Any, in2: Any, mode: str) -> Any:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in _pairs(in1, in2))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in _pairs(in1, in2))
        swap = all(s1 <= s2 for s1, s2 in _pairs(in1, in2))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in _pairs(in1, in2)):
        # Nothing to sum over: the convolution is the broadcast product.
        conv = in1 * in2
    elif dtype_ops.iscomplexobj(in1):
        conv = jnp_fft.ifftn(jnp_fft.fftn(in1, full_shape) * jnp_fft.fftn(in2, full_shape),
                             full_shape)
    else:
        conv = jnp_fft.irfftn(jnp_fft.rfftn(in1, full_shape) * jnp_fft.rfftn(in2, full_shape),
                              full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = _shape(in1)
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in _pairs(in1, in2))
    starts = tuple((full - out) // 2 for full, out in zip(full_shape, out_shape, strict=True))
    return slicing.dynamic_slice(conv, starts, out_shape)


# ---------------------------------------------------------------------------------------------
# Direct convolution.

def _convolve_nd(in1: Any, in2: Any, mode: str, *, precision: Any) -> Any:
    """The N-dimensional convolution as one `conv_general_dilated` (batch and feature
    dimensions of size one), the smaller input flipped as the kernel."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = util.ensure_arraylike("convolve", in1, in2)
    if _ndim(in1) != _ndim(in2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if _size(in1) == 0 or _size(in2) == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{_shape(in1)} and {_shape(in2)}.")
    in1, in2 = inexact_arrays(in1, in2)
    no_swap = all(s1 >= s2 for s1, s2 in _pairs(in1, in2))
    swap = all(s1 <= s2 for s1, s2 in _pairs(in1, in2))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    # "same" centres on the second input's original shape, whichever becomes the kernel.
    shape_o = _shape(in2)
    if swap:
        in1, in2 = in2, in1
    shape = _shape(in2)
    kernel = rearranging.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2)
                   for s, s_o in zip(shape, shape_o, strict=True)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    result = convolution.conv_general_dilated(in1[None, None], kernel[None, None],
                                              (1,) * len(shape), padding, precision=precision)
    return result[0, 0]


def convolve(in1: Any, in2: Any, mode: ModeString = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """The convolution of two N-dimensional arrays (`scipy.signal.convolve`).

    Args:
      in1, in2: the inputs, of one rank; one no smaller than the other in every dimension.
      mode: "full", "same" (`in1`'s size) or "valid".
      method: "auto" or "direct" (one `conv_general_dilated`), or "fft" (`fftconvolve`).
      precision: the precision of the direct convolution (`lax.Precision`).
    Returns:
      The convolution.
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1: Any, in2: Any, mode: ModeString = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Any:
    """The convolution of two 2-D arrays (`scipy.signal.convolve2d`).

    Args:
      in1, in2: 2-D inputs.
      mode: "full", "same" or "valid".
      boundary, fillvalue: only "fill" with 0 is supported (NotImplementedError otherwise).
      precision: the convolution's precision.
    Returns:
      The convolution.
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1: Any, in2: Any, mode: ModeString = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """The cross-correlation of two N-dimensional arrays (`scipy.signal.correlate`): the
    convolution with `in2` conjugated and flipped; arguments as `convolve`'s."""
    in2 = util.ensure_arraylike("correlate", in2)
    return convolve(in1, rearranging.flip(ufuncs.conj(in2)), mode, precision=precision,
                    method=method)


def correlate2d(in1: Any, in2: Any, mode: ModeString = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Any:
    """The cross-correlation of two 2-D arrays (`scipy.signal.correlate2d`); arguments as
    `convolve2d`'s. Which input is flipped follows SciPy's rules for each mode, so "same" and
    "valid" outputs line up as SciPy's."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = util.ensure_arraylike("correlate2d", in1, in2)
    swap = all(s1 <= s2 for s1, s2 in _pairs(in1, in2))
    same_shape = all(s1 == s2 for s1, s2 in _pairs(in1, in2))
    flip, conj = rearranging.flip, ufuncs.conj

    def flipped_first() -> Any:
        return flip(_convolve_nd(flip(in1), conj(in2), mode, precision=precision))

    if mode == "same":
        return flipped_first()
    if mode == "valid":
        if swap and not same_shape:
            return _convolve_nd(flip(in2), conj(in1), mode, precision=precision)
        return flipped_first()
    if swap:
        return conj(_convolve_nd(flip(in2), conj(in1), mode, precision=precision))
    return flipped_first()


# ---------------------------------------------------------------------------------------------
# Detrending.

def detrend(data: Any, axis: int = -1, type: str = "linear",
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Any:
    """`data` less its trend along `axis` (`scipy.signal.detrend`).

    Args:
      data: the input.
      axis: the axis along which to detrend.
      type: "linear" (a least-squares line per segment) or "constant" (the mean).
      bp: breakpoints (static): the line is fitted separately between them.
      overwrite_data: not supported (must be None).
    Returns:
      The detrended data (of an inexact type).
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data_arr, = inexact_arrays(data)
    if type == "constant":
        return data_arr - data_arr.mean(axis, keepdims=True)
    n = _shape(data_arr)[axis]
    breaks = np.sort(np.unique(np.r_[0, bp, n]))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    data_arr = shape_ops.moveaxis(data_arr, axis, 0)
    shape = _shape(data_arr)
    data_arr = data_arr.reshape(n, -1)
    dtype = data_arr.dtype
    for start, stop in zip(breaks[:-1], breaks[1:], strict=True):
        count = stop - start
        design = joining.vstack([array_creation.ones(count, dtype=dtype),
                                 array_creation.arange(1, count + 1, dtype=dtype)
                                 / count.astype(dtype)]).T
        segment = slice(start, stop)
        coef, *_ = linalg_extra.lstsq(design, data_arr[segment])
        fit = tensor.matmul(design, coef, precision=Precision.HIGHEST)
        data_arr = data_arr.at[segment].add(-fit)
    return shape_ops.moveaxis(data_arr.reshape(shape), 0, axis)
