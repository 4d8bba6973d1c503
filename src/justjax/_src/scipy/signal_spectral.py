"""`jax.scipy.signal`'s spectral estimators: `stft`, `istft`, `csd` and `welch`.

All four cut the signal into overlapping windowed segments of `nperseg` samples (`nperseg -
noverlap` apart), detrend each and transform it with `rfft` (real input, one-sided) or `fft`
(two-sided). `stft` returns the scaled segment spectra; `csd` the averaged cross spectra
`conj(X) * Y` (mean or bias-corrected median over segments); `welch` the real power
spectral density of one signal. `istft` inverts `stft` by overlap-add, normalised by the
summed squared window. Windows: "hann" built here; other names and tuples through
`scipy.signal.get_window`; or an array. Results, dtypes, warnings and errors are JAX
0.10.2's.
"""
from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import slicing, structural
from justjax._src.numpy import (array_creation, dtype_ops, joining, padding, rearranging,
                                reductions, selection, shape_ops, sorting, ufuncs, util)
from justjax._src.numpy import fft as jnp_fft
from justjax._src.scipy.signal import detrend, inexact_arrays

__all__ = ["csd", "istft", "stft", "welch"]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _concrete_int(value: Any, what: str) -> int:
    return core.concrete_or_error(int, value, what)


# ---------------------------------------------------------------------------------------------
# Windows and segments.

def _hann(n: int) -> Any:
    """The periodic Hann window of `n` points (`scipy.signal.get_window("hann", n)`)."""
    if n == 1:
        return array_creation.array([1.0])
    return ufuncs.sin(array_creation.linspace(0, np.pi, n, endpoint=False)) ** 2


def _named_window(window: str | tuple, n: int) -> Any:
    if isinstance(window, str) and window == "hann":
        return _hann(n)
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return get_window(window, n)


def _window_and_length(window: Any, nperseg: int | None, input_length: int, dtype: Any
                       ) -> tuple[Any, int]:
    """The window array and the segment length, from a window name (or tuple) and an optional
    `nperseg`, or from a window array (whose length `nperseg` must equal)."""
    if isinstance(window, (str, tuple)):
        length = input_length if nperseg is None else int(nperseg)
        if length > input_length:
            warnings.warn(f"nperseg={length} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}")
            length = input_length
        return array_creation.array(_named_window(window, length), dtype=dtype), length
    win = array_creation.asarray(window, dtype=dtype)
    length = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if length != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, length


def _segments(x: Any, nperseg: int, noverlap: int) -> Any:
    """The segments of `x` along its last axis, stacked on a new second-to-last axis."""
    length = _shape(x)[-1]
    if nperseg == 1 and noverlap == 0:
        return x[..., np.newaxis]
    starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
    # A static index array: segment i, sample j reads x[..., starts[i] + j].
    return x[..., starts[:, None] + np.arange(nperseg)[None, :]]


def _segment_spectra(x: Any, win: Any, detrend_func: Callable[[Any], Any], nperseg: int,
                     noverlap: int, nfft: int, sides: str) -> Any:
    """The FFT of each detrended, windowed segment of `x` (last axis)."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    batch_rank = len(_shape(x)) - 1
    result = detrend_func(_segments(x, nperseg, noverlap))
    if dtype_ops.iscomplexobj(win):
        result, = util.promote_dtypes_complex(result)
    result = win.reshape((1,) * batch_rank + (1, nperseg)) * result
    if sides == "twosided":
        return jnp_fft.fft(result, n=nfft)
    return jnp_fft.rfft(ufuncs.real(result), n=nfft)


def _odd_extension(x: Any, n: int, axis: int = -1) -> Any:
    """`x` extended by `n` samples at each end, point-reflected about the end values."""
    if n < 1:
        return x
    if n > _shape(x)[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {_shape(x)[axis] - 1}.")
    first = slicing.slice_in_dim(x, 0, 1, axis=axis)
    after_first = slicing.slice_in_dim(x, 1, n + 1, axis=axis)
    last = slicing.slice_in_dim(x, -1, None, axis=axis)
    before_last = slicing.slice_in_dim(x, -(n + 1), -1, axis=axis)
    return joining.concatenate((2 * first - slicing.rev(after_first, (axis % x.ndim,)), x,
                                2 * last - slicing.rev(before_last, (axis % x.ndim,))),
                               axis=axis)


def _padder(mode: str, **kwargs: Any) -> Callable[..., Any]:
    def pad(x: Any, n: int, axis: int = -1) -> Any:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (n, n)
        return padding.pad(x, widths, mode, **kwargs)
    return pad


_BOUNDARIES: dict[Any, Callable[..., Any]] = {
    "even": _padder("reflect"),
    "odd": _odd_extension,
    "constant": _padder("edge"),
    "zeros": _padder("constant", constant_values=0.0),
    None: lambda x, *args, **kwargs: x,
}


# ---------------------------------------------------------------------------------------------
# The shared estimator.

def _zero_pad_to(x: Any, length: int) -> Any:
    """`x` with zeros appended along its last axis up to `length` samples."""
    extra = length - _shape(x)[-1]
    if extra <= 0:
        return x
    return joining.concatenate((x, array_creation.zeros_like(x, shape=(*_shape(x)[:-1],
                                                                          extra))), -1)


def _detrend_function(detrend_type: Any, axis: int) -> Callable[[Any], Any]:
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, type=detrend_type, axis=-1)
    if callable(detrend_type):
        if axis == -1:
            return detrend_type

        def moved(d: Any) -> Any:
            return shape_ops.moveaxis(detrend_type(shape_ops.moveaxis(d, axis, -1)), -1, axis)
        return moved
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _spectral_helper(x: Any, y: Any | None, fs: Any = 1.0, window: Any = "hann",
                     nperseg: int | None = None, noverlap: int | None = None,
                     nfft: int | None = None, detrend_type: Any = "constant",
                     return_onesided: bool = True, scaling: str = "density", axis: int = -1,
                     mode: str = "psd", boundary: str | None = None, padded: bool = False
                     ) -> tuple[Any, Any, Any]:
    """(frequencies, segment times, spectra) of `x` (`mode="stft"` or "psd") or the cross
    spectra of `x` and `y` ("psd"); the segment axis is last, the frequencies at `axis`."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES.keys())}")
    axis = core.concrete_or_error(operator.index, axis, "axis of windowed-FFT")
    axis = util.canonicalize_axis(axis, np.ndim(x))
    if y is None:
        util.check_arraylike("spectral_helper", x)
        x, = inexact_arrays(x)
        y_arr = x
        outer_shape = tuple(d for i, d in enumerate(_shape(x)) if i != axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        util.check_arraylike("spectral_helper", x, y)
        x, y_arr = inexact_arrays(x, y)
        if x.ndim != y_arr.ndim:
            # JAX's message, unformatted as JAX leaves it.
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outer_shape = util.broadcast_shapes(
                tuple(d for i, d in enumerate(_shape(x)) if i != axis),
                tuple(d for i, d in enumerate(_shape(y_arr)) if i != axis))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = dtypes.to_complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None:
        nperseg = _concrete_int(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window_and_length(window, nperseg, _shape(x)[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else _concrete_int(
        noverlap, "noverlap of windowed-FFT")
    nfft = nperseg if nfft is None else _concrete_int(nfft, "nfft of windowed-FFT")

    empty = _empty_result(x, y, y_arr, outer_shape, axis, freq_dtype, result_dtype)
    if empty is not None:
        return empty
    x = shape_ops.moveaxis(x, axis, -1)
    if y is not None and y_arr.ndim > 1:
        y_arr = shape_ops.moveaxis(y_arr, axis, -1)
    if y is not None and _shape(x)[-1] != _shape(y_arr)[-1]:
        longest = max(_shape(x)[-1], _shape(y_arr)[-1])
        x, y_arr = _zero_pad_to(x, longest), _zero_pad_to(y_arr, longest)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if boundary is not None:
        extend = _BOUNDARIES[boundary]
        x = extend(x, nperseg // 2, axis=-1)
        if y is not None:
            y_arr = extend(y_arr, nperseg // 2, axis=-1)
    if padded:
        # Zeros so that the last segment is complete.
        extra = (-(_shape(x)[-1] - nperseg) % step) % nperseg
        x = _zero_pad_to(x, _shape(x)[-1] + extra)
        if y is not None:
            y_arr = _zero_pad_to(y_arr, _shape(y_arr)[-1] + extra)
    detrend_func = _detrend_function(detrend_type, axis)

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = ufuncs.sqrt(scale)
    scale, = util.promote_dtypes_complex(scale)
    sides = "twosided"
    if return_onesided:
        sides = "onesided"
        if dtype_ops.iscomplexobj(x) or dtype_ops.iscomplexobj(y):
            sides = "twosided"
            warnings.warn("Input data is complex, switching to return_onesided=False")
    if sides == "twosided":
        freqs = jnp_fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp_fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype)

    result = _segment_spectra(x, win, detrend_func, nperseg, noverlap, nfft, sides)
    if y is not None:
        result_y = _segment_spectra(y_arr, win, detrend_func, nperseg, noverlap, nfft, sides)
        result = ufuncs.conjugate(result) * result_y
    elif mode == "psd":
        result = ufuncs.conjugate(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        # The negative frequencies folded onto the positive ones (not DC, nor an even
        # transform's Nyquist bin).
        end = None if nfft % 2 else -1
        result = result.at[..., 1:end].mul(2)
    time = array_creation.arange(nperseg / 2, _shape(x)[-1] - nperseg / 2 + 1, step,
                                 dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = ufuncs.real(result)
    return freqs, time, shape_ops.moveaxis(result, -1, axis)


def _empty_result(x: Any, y: Any, y_arr: Any, outer_shape: tuple[int, ...], axis: int,
                  freq_dtype: Any, result_dtype: Any) -> tuple[Any, Any, Any] | None:
    """JAX's zeros for an empty input (None when neither input is empty)."""
    if y is None:
        if x.size != 0:
            return None
        shape = _shape(x)
    else:
        if x.size != 0 and y_arr.size != 0:
            return None
        length = min(_shape(x)[axis], _shape(y_arr)[axis])
        shape = (*outer_shape[:axis], length, *outer_shape[axis:])
    zeros = array_creation.zeros
    return zeros(shape, freq_dtype), zeros(shape, freq_dtype), zeros(shape, result_dtype)


# ---------------------------------------------------------------------------------------------
# The public estimators.

def stft(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: Any = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform (`scipy.signal.stft`).

    Args:
      x: the signal.
      fs: the sampling frequency.
      window: a window name ("hann" ...), a `get_window` tuple, or an array.
      nperseg: the segment length (at most the signal's).
      noverlap: the overlap of consecutive segments (default `nperseg // 2`).
      nfft: the FFT length (default `nperseg`).
      detrend: False, "constant", "linear" or a function of one segment.
      return_onesided: one-sided spectra for real input.
      boundary: how the signal is extended at both ends ("zeros", "even", "odd",
        "constant" or None).
      padded: whether zeros complete the last segment.
      axis: the time axis.
    Returns:
      `(frequencies, segment times, Zxx)`, Zxx with the frequencies at `axis` and the
      segments last.
    """
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling="spectrum", axis=axis, mode="stft",
                            boundary=boundary, padded=padded)


def _median_bias(n: int) -> Any:
    """How much the median of `n` periodograms underestimates their mean."""
    evens = array_creation.arange(2.0, n, 2)
    return 1 + reductions.sum(1.0 / (evens + 1) - 1.0 / evens)


def csd(x: Any, y: Any | None, fs: Any = 1.0, window: Any = "hann",
        nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None,
        detrend: Any = "constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean") -> tuple[Any, Any]:
    """The cross power spectral density of `x` and `y` by Welch's method
    (`scipy.signal.csd`).

    Args:
      x, y: the signals (`y` None: the power spectrum of `x`).
      fs, window, nperseg, noverlap, nfft, detrend, return_onesided, axis: as `stft`'s
        (`nperseg` defaults to the signal's length).
      scaling: "density" (V**2/Hz) or "spectrum" (V**2).
      average: "mean" or "median" (bias-corrected) over segments.
    Returns:
      `(frequencies, Pxy)`.
    """
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if _shape(pxy)[-1] > 1:
            if average == "median":
                bias = _median_bias(_shape(pxy)[-1]).astype(pxy.dtype)
                if dtype_ops.iscomplexobj(pxy):
                    pxy = (sorting.median(ufuncs.real(pxy), axis=-1)
                           + 1j * sorting.median(ufuncs.imag(pxy), axis=-1))
                else:
                    pxy = sorting.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = pxy.reshape(_shape(pxy)[:-1])
    return freqs, pxy


def welch(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """The power spectral density of `x` by Welch's method (`scipy.signal.welch`);
    arguments as `csd`'s.

    Returns:
      `(frequencies, Pxx)`, Pxx real.
    """
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, ufuncs.real(pxx)


# ---------------------------------------------------------------------------------------------
# The inverse STFT.

def _overlap_and_add(x: Any, step: int) -> Any:
    """Frames `x[..., frames, frame_length]` summed into one signal, frame i starting at
    `i * step`: the frames are cut into step-sized pieces and the pieces of equal offset
    added with reshapes and one sum (no scatter)."""
    step = _concrete_int(step, "step_size for overlap_and_add")
    if x.ndim < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")
    *batch_shape, nframes, frame_length = _shape(x)
    batch = math.prod(batch_shape)
    x = x.reshape((batch, nframes, frame_length))
    out_length = step * (nframes - 1) + frame_length
    pieces = 1 + (frame_length - 1) // step
    x = padding.pad(x, ((0, 0), (0, 0), (0, pieces * step - frame_length)))
    x = x.reshape((batch, nframes, pieces, step)).transpose((0, 2, 1, 3))
    # Piece p of frame i lands at offset (i + p) * step: pad each piece row with nframes
    # rows of zeros and drop one row, so that row p shifts by p.
    x = padding.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))
    shifted_rows = _shape(x)[2] - 1
    x = x.reshape((batch, -1))[:, :pieces * shifted_rows * step]
    x = x.reshape((batch, pieces, shifted_rows * step))
    x = x.sum(axis=1)[:, :out_length]
    return x.reshape(tuple(batch_shape) + (-1,))


def _istft_window(window: Any, nperseg: int, dtype: Any) -> Any:
    if isinstance(window, (str, tuple)):
        return array_creation.asarray(_named_window(window, nperseg)).astype(dtype)
    win = array_creation.asarray(window)
    if len(win.shape) != 1:
        raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
        raise ValueError(f"window must have length of {nperseg}")
    return win


def istft(Zxx: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2
          ) -> tuple[Any, Any]:
    """The inverse short-time Fourier transform (`scipy.signal.istft`).

    Args:
      Zxx: the STFT (at least 2-D).
      fs: the sampling frequency.
      window: the window `stft` used.
      nperseg: the segment length (default from the number of frequencies).
      noverlap: the overlap (default `nperseg // 2`).
      nfft: the FFT length (default from the number of frequencies).
      input_onesided: whether `Zxx` holds one-sided spectra.
      boundary: whether `stft` extended the signal at its ends (which is cut off).
      time_axis, freq_axis: the segment and frequency axes of `Zxx`.
    Returns:
      `(times, x)`.
    """
    Zxx = util.ensure_arraylike("istft", Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = util.canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = util.canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = array_creation.asarray(Zxx, dtype=dtypes.to_complex_dtype(Zxx.dtype))
    n_freqs = _shape(Zxx)[freq_axis]
    n_default = 2 * (n_freqs - 1) if input_onesided else n_freqs
    nperseg = _concrete_int(nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg == n_default + 1:
            nfft_int += 1  # an odd nperseg: no FFT padding
    else:
        nfft_int = _concrete_int(nfft, "nfft of STFT")
    if nfft_int < nperseg:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg}).")
    noverlap = _concrete_int(noverlap or nperseg // 2, "noverlap of STFT")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
        Zxx = Zxx.transpose(outer + (freq_axis, time_axis))
    inverse = jnp_fft.irfft if input_onesided else jnp_fft.ifft
    # As in JAX, the transform length is the `nfft` given (None: from the spectrum).
    segments = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg, :]
    win = _istft_window(window, nperseg, segments.dtype)
    segments = segments * win.sum()  # undoes stft's "spectrum" scaling
    win = structural.expand_dims(win, (*range(segments.ndim - 2), segments.ndim - 1))
    x = _overlap_and_add((segments * win).swapaxes(-2, -1), step)
    win_squared = rearranging.repeat(win * win, _shape(segments)[-1], axis=-1)
    norm = _overlap_and_add(win_squared.swapaxes(-2, -1), step)
    if boundary:
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / selection.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = shape_ops.moveaxis(x, -1, time_axis)
    time = array_creation.arange(_shape(x)[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
