"""`jax.scipy.signal` against `scipy.signal`: convolutions and correlations (direct and FFT,
every mode), detrending, and the spectral estimators (stft, istft, csd, welch); errors and
warnings read off JAX 0.10.2; gradients, jit and vmap."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import scipy.signal as osp_signal

import justjax
import justjax.numpy as jnp
import justjax.scipy.signal as jsp_signal
from justjax.test_util import check_grads
from tests.harness import assert_close, x64_mode

RNG = np.random.default_rng(11)
MODES = ["full", "same", "valid"]


def _real(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _complex(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def _close(got: Any, want: Any, tol: float = 1e-4) -> None:
    want = np.asarray(want)
    assert_close(got, want, tol * max(1.0, float(np.abs(want).max()) if want.size else 1.0))


# ---------------------------------------------------------------------------------------------
# Convolutions and correlations.

SHAPE_PAIRS = [((7,), (3,)), ((3,), (7,)), ((6,), (6,)), ((5, 6), (2, 3)), ((2, 3), (5, 6)),
               ((4, 5, 6), (2, 2, 3))]


@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPE_PAIRS)
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_and_correlate(name: str, shapes: tuple, mode: str, method: str) -> None:
    a, b = _real(*shapes[0]), _real(*shapes[1])
    got = getattr(jsp_signal, name)(a, b, mode=mode, method=method)
    want = getattr(osp_signal, name)(a.astype(np.float64), b.astype(np.float64), mode=mode,
                                     method="direct")
    assert got.dtype == np.float32
    _close(got, want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_complex_inputs(name: str, mode: str) -> None:
    a, b = _complex(7), _complex(3)
    for method in ("direct", "fft"):
        got = getattr(jsp_signal, name)(a, b, mode=mode, method=method)
        assert got.dtype == np.complex64
        _close(got, getattr(osp_signal, name)(a.astype(np.complex128), b.astype(np.complex128),
                                              mode=mode))


@pytest.mark.parametrize("make", [_real, _complex], ids=["real", "complex"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((5, 6), (2, 3)), ((2, 3), (5, 6)), ((3, 3), (3, 3)),
                                    ((4, 4), (4, 2))])
@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_two_dimensional(name: str, shapes: tuple, mode: str, make: Callable) -> None:
    a, b = make(*shapes[0]), make(*shapes[1])
    got = getattr(jsp_signal, name)(a, b, mode=mode)
    assert got.dtype == a.dtype
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    _close(got, getattr(osp_signal, name)(a.astype(wide), b.astype(wide), mode=mode))


@pytest.mark.parametrize("mode", MODES)
def test_fftconvolve_over_axes(mode: str) -> None:
    cases = [((4, 9), (4, 2), 1), ((3, 4, 9), (3, 4, 2), -1), ((3, 4, 9), (3, 2, 2), (1, 2)),
             ((5, 3), (2, 3), 0)]
    for shape1, shape2, axes in cases:
        a, b = _real(*shape1), _real(*shape2)
        got = jsp_signal.fftconvolve(a, b, mode=mode, axes=axes)
        want = osp_signal.fftconvolve(a.astype(np.float64), b.astype(np.float64), mode=mode,
                                      axes=axes)
        _close(got, want)


def test_convolution_dtypes() -> None:
    ints = np.arange(7, dtype=np.int32), np.arange(3, dtype=np.int32)
    assert jsp_signal.convolve(*ints).dtype == np.float32
    assert jsp_signal.fftconvolve(*ints).dtype == np.float32
    _close(jsp_signal.convolve(*ints), np.convolve(*ints))
    with x64_mode(True):
        wide = RNG.standard_normal(7), RNG.standard_normal(3)
        assert jsp_signal.fftconvolve(*wide).dtype == np.float64
        assert_close(jsp_signal.convolve(*wide), np.convolve(*wide), 1e-12)


# ---------------------------------------------------------------------------------------------
# Detrending.

@pytest.mark.parametrize("kwargs", [{}, {"type": "constant"}, {"axis": 0}, {"bp": [3, 6]},
                                    {"bp": 5, "axis": 0}, {"type": "constant", "axis": 0}])
def test_detrend(kwargs: dict) -> None:
    x = _real(10, 12)
    _close(jsp_signal.detrend(x, **kwargs), osp_signal.detrend(x.astype(np.float64), **kwargs))


# ---------------------------------------------------------------------------------------------
# Spectral estimators.

STFT_CASES = [
    {"nperseg": 16},
    {"nperseg": 15, "noverlap": 5},
    {"fs": 10.0, "nperseg": 16, "nfft": 20},
    {"nperseg": 16, "return_onesided": False},
    {"nperseg": 16, "boundary": "even"},
    {"nperseg": 16, "boundary": "odd"},
    {"nperseg": 16, "boundary": "constant"},
    {"nperseg": 16, "boundary": None, "padded": False},
    {"nperseg": 16, "detrend": "linear"},
    {"nperseg": 16, "window": "hamming"},
    {"nperseg": 16, "window": ("tukey", 0.3)},
]


@pytest.mark.parametrize("kwargs", STFT_CASES)
def test_stft(kwargs: dict) -> None:
    x = _real(2, 64)
    got = jsp_signal.stft(x, **kwargs)
    want = osp_signal.stft(x.astype(np.float64), **kwargs)
    for g, w in zip(got, want, strict=True):
        _close(g, w)


def test_stft_along_another_axis_and_of_complex_input() -> None:
    x = _real(64, 3)
    for g, w in zip(jsp_signal.stft(x, nperseg=16, axis=0),
                    osp_signal.stft(x.astype(np.float64), nperseg=16, axis=0), strict=True):
        _close(g, w)
    z = _complex(64)
    with pytest.warns(UserWarning, match="Input data is complex, switching to "
                                         "return_onesided=False"):
        got = jsp_signal.stft(z, nperseg=16)
    _close(got[2], osp_signal.stft(z.astype(np.complex128), nperseg=16,
                                   return_onesided=False)[2])


# (An odd nperseg needs `nfft` given to istft: JAX's inverse transform takes the `nfft`
# argument as it is, so without it the segments come out one sample short, as in JAX.)
@pytest.mark.parametrize("kwargs", [{"nperseg": 16},
                                    {"nperseg": 15, "noverlap": 5, "nfft": 16},
                                    {"nperseg": 16, "window": "hamming"},
                                    {"nperseg": 16, "return_onesided": False}])
def test_istft_inverts_stft(kwargs: dict) -> None:
    x = _real(2, 64)
    onesided = kwargs.get("return_onesided", True)
    zxx = osp_signal.stft(x.astype(np.float64), **kwargs)[2]
    inverse_kwargs = {k: v for k, v in kwargs.items() if k != "return_onesided"}
    got = jsp_signal.istft(zxx.astype(np.complex64), input_onesided=onesided,
                           **inverse_kwargs)
    want = osp_signal.istft(zxx, input_onesided=onesided, **inverse_kwargs)
    for g, w in zip(got, want, strict=True):
        _close(np.real(g), np.real(w))
    _close(got[1][..., :64].real, x)


WELCH_CASES = [
    {"nperseg": 64},
    {"fs": 100.0, "nperseg": 64, "noverlap": 16, "nfft": 100},
    {"nperseg": 64, "scaling": "spectrum"},
    {"nperseg": 64, "average": "median"},
    {"nperseg": 64, "detrend": "linear"},
    {"nperseg": 64, "detrend": False},
    {"nperseg": 64, "return_onesided": False},
    {"nperseg": 63},
    {"nperseg": 64, "window": "blackman"},
]


@pytest.mark.parametrize("kwargs", WELCH_CASES)
def test_welch(kwargs: dict) -> None:
    x = _real(3, 256)
    for g, w in zip(jsp_signal.welch(x, **kwargs),
                    osp_signal.welch(x.astype(np.float64), **kwargs), strict=True):
        _close(g, w)


@pytest.mark.parametrize("kwargs", [{"nperseg": 64}, {"nperseg": 64, "average": "median"},
                                    {"nperseg": 32, "scaling": "spectrum", "axis": 0}])
def test_csd(kwargs: dict) -> None:
    x, y = _real(256, 2), _real(256, 2)
    if kwargs.get("axis") != 0:
        x, y = x.T, y.T
    got = jsp_signal.csd(x, y, **kwargs)
    want = osp_signal.csd(x.astype(np.float64), y.astype(np.float64), **kwargs)
    assert got[1].dtype == np.complex64
    for g, w in zip(got, want, strict=True):
        _close(g, w)


def test_csd_of_unequal_lengths_zero_pads_the_shorter() -> None:
    x, y = _real(256), _real(200)
    got = jsp_signal.csd(x, y, nperseg=64)
    want = osp_signal.csd(x.astype(np.float64), y.astype(np.float64), nperseg=64)
    _close(got[1], want[1])


def test_empty_inputs() -> None:
    """Zeros of JAX's shapes and dtypes."""
    with pytest.warns(UserWarning, match="nperseg=256 is greater than input_length=0"):
        f, t, zxx = jsp_signal.stft(np.zeros(0, np.float32))
    assert (f.shape, t.shape, zxx.shape, zxx.dtype) == ((0,), (0,), (0,), np.complex64)
    f, pxx = jsp_signal.welch(np.zeros((0, 4), np.float32))
    assert pxx.shape == (0, 4) and pxx.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Errors and warnings (JAX 0.10.2's).

X = np.ones(64, np.float32)
ERRORS = [
    (lambda: jsp_signal.convolve(X, X[:3], mode="bad"), ValueError,
     "mode must be one of ['full', 'same', 'valid']"),
    (lambda: jsp_signal.convolve(X, X[:3], method="weird"), ValueError,
     "Got method='weird'; expected 'auto', 'fft', or 'direct'."),
    (lambda: jsp_signal.convolve(_real(5, 2), _real(2, 3)), ValueError,
     "One input must be smaller than the other in every dimension."),
    (lambda: jsp_signal.convolve(_real(5, 6), _real(3)), ValueError,
     "in1 and in2 must have the same number of dimensions"),
    (lambda: jsp_signal.convolve(_real(0), _real(3)), ValueError,
     "zero-size arrays not supported in convolutions, got shapes (0,) and (3,)."),
    (lambda: jsp_signal.convolve2d(_real(5, 6), _real(2, 3), boundary="wrap"),
     NotImplementedError, "convolve2d() only supports boundary='fill', fillvalue=0"),
    (lambda: jsp_signal.convolve2d(_real(5), _real(2)), ValueError,
     "convolve2d() only supports 2-dimensional inputs."),
    (lambda: jsp_signal.correlate2d(_real(5, 6), _real(2, 3), fillvalue=1),
     NotImplementedError, "correlate2d() only supports boundary='fill', fillvalue=0"),
    (lambda: jsp_signal.fftconvolve(_real(9), _real(4), mode="x"), ValueError,
     "mode must be one of ['same', 'full', 'valid']"),
    (lambda: jsp_signal.fftconvolve(_real(9), _real(2, 4)), ValueError,
     "in1 and in2 should have the same dimensionality"),
    (lambda: jsp_signal.fftconvolve(_real(4, 2), _real(3, 9), mode="valid"), ValueError,
     "For 'valid' mode, One input must be at least as large as the other in every "
     "dimension."),
    (lambda: jsp_signal.fftconvolve(_real(3, 4, 9), _real(3, 1, 2), axes=-1), ValueError,
     "mapped axes must have same shape; got in1.shape=(3, 4, 9) in2.shape=(3, 1, 2) "
     "axes=(2,)"),
    (lambda: jsp_signal.detrend(X, type="quadratic"), ValueError,
     "Trend type must be 'linear' or 'constant'."),
    (lambda: jsp_signal.detrend(X, bp=70), ValueError,
     "Breakpoints must be non-negative and less than length of data along given axis."),
    (lambda: jsp_signal.detrend(X, overwrite_data=True), NotImplementedError,
     "overwrite_data argument not implemented."),
    (lambda: jsp_signal.stft(X, nperseg=16, boundary="bad"), ValueError,
     "Unknown boundary option 'bad', must be one of: ['even', 'odd', 'constant', 'zeros', "
     "None]"),
    (lambda: jsp_signal.stft(X, nperseg=0), ValueError, "nperseg must be a positive integer"),
    (lambda: jsp_signal.stft(X, nperseg=16, noverlap=16), ValueError,
     "noverlap must be less than nperseg."),
    (lambda: jsp_signal.stft(X, nperseg=16, nfft=8), ValueError,
     "nfft must be greater than or equal to nperseg."),
    (lambda: jsp_signal.welch(X, nperseg=16, scaling="bad"), ValueError,
     "Unknown scaling: bad"),
    (lambda: jsp_signal.welch(X, nperseg=16, average="bad"), ValueError,
     'average must be "median" or "mean", got bad'),
    (lambda: jsp_signal.welch(X, window=np.ones(16), nperseg=8), ValueError,
     "value specified for nperseg is different from length of window"),
    (lambda: jsp_signal.welch(X, window=np.ones((4, 4))), ValueError, "window must be 1-D"),
    (lambda: jsp_signal.csd(_real(2, 64), _real(3, 64), nperseg=16), ValueError,
     "x and y cannot be broadcast together."),
    (lambda: jsp_signal.istft(_real(5)), ValueError, "Input stft must be at least 2d!"),
    (lambda: jsp_signal.istft(_real(5, 6), time_axis=0, freq_axis=0), ValueError,
     "Must specify differing time and frequency axes!"),
    (lambda: jsp_signal.istft(_real(5, 6), nfft=3), ValueError,
     "FFT length (3) must be longer than nperseg (8)."),
    (lambda: jsp_signal.istft(_real(5, 6), noverlap=20), ValueError,
     "noverlap must be less than nperseg."),
    (lambda: jsp_signal.istft(_complex(9, 4), window=np.ones(15)), ValueError,
     "window must have length of 16"),
]


@pytest.mark.parametrize("call,error,message", ERRORS)
def test_errors(call: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_nperseg_longer_than_the_signal_warns() -> None:
    with pytest.warns(UserWarning, match="nperseg=200 is greater than input_length=64, "
                                         "using nperseg=64"):
        f, t, zxx = jsp_signal.stft(X, nperseg=200)
    assert zxx.shape == (33, 3)


# ---------------------------------------------------------------------------------------------
# Transformations.

def test_gradients_jit_and_vmap() -> None:
    # Inputs of its own: the module's generator's state depends on which tests ran before in
    # the worker, and some draws put |stft| next to zero, where its derivative jumps and the
    # finite differences disagree (a CI run drew one). This draw keeps every |stft| above 0.1.
    rng = np.random.default_rng(6)
    with x64_mode(True):
        x = rng.standard_normal(20)
        kernel = rng.standard_normal(3)
        check_grads(lambda a: jsp_signal.convolve(a, kernel), (x,), order=2)
        check_grads(lambda a: jsp_signal.fftconvolve(a, kernel, mode="same"), (x,), order=2)
        check_grads(lambda a: jsp_signal.welch(a, nperseg=8)[1], (x,), order=1)
        check_grads(lambda a: jnp.abs(jsp_signal.stft(a, nperseg=8)[2]), (x,), order=1)
    x = _real(64)
    jitted = justjax.jit(lambda a: jsp_signal.welch(a, nperseg=16))(x)
    for g, w in zip(jitted, jsp_signal.welch(x, nperseg=16), strict=True):
        assert_close(g, w, 1e-5)
    batch = _real(4, 9)
    mapped = justjax.vmap(lambda a: jsp_signal.convolve(a, np.ones(3, np.float32)))(batch)
    _close(mapped, np.stack([np.convolve(row, np.ones(3)) for row in batch]))
