"""`justjax.scipy.signal`: convolutions and spectral analysis (`jax.scipy.signal`).
Re-exports only."""
from justjax._src.scipy.signal import (
    convolve as convolve,
    convolve2d as convolve2d,
    correlate as correlate,
    correlate2d as correlate2d,
    detrend as detrend,
    fftconvolve as fftconvolve,
)
from justjax._src.scipy.signal_spectral import (
    csd as csd,
    istft as istft,
    stft as stft,
    welch as welch,
)
