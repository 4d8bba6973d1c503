"""The reference kernel of `stablehlo.fft`: pocketfft through `scipy.fft`.

XLA's CPU backend runs FFTs through a compiled library (DUCC); here SciPy's compiled
pocketfft does the work, in the operand's own precision (complex64 stays single precision),
over the trailing `len(fft_length)` axes:

    FFT    fftn                       IFFT   ifftn (scaled by 1/prod(fft_length))
    RFFT   rfftn (last axis n//2 + 1)  IRFFT  irfftn (only the last axis is Hermitian)

The native backend runs the op through its fallback into this kernel, on its buffers.
"""
from __future__ import annotations

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.hlo.ir import Op

# `scipy.fft`'s transform of each kind (SciPy is imported when an FFT is first run).
_TRANSFORMS = {"FFT": "fftn", "IFFT": "ifftn", "RFFT": "rfftn", "IRFFT": "irfftn"}


@register("stablehlo.fft")
def _fft(op: Op, compiler: Compiler) -> Kernel:
    kind = op.attributes["fft_type"].value
    lengths = tuple(int(n) for n in op.attributes["fft_length"])
    import scipy.fft
    transform = getattr(scipy.fft, _TRANSFORMS[kind])
    result_type = op.results[0].type
    axes = tuple(range(result_type.rank - len(lengths), result_type.rank))

    def kernel(x: np.ndarray) -> np.ndarray:
        if x.size == 0 or result_type.size == 0:
            # pocketfft rejects empty transforms; an empty input transforms to zeros.
            return np.zeros(result_type.shape, result_type.dtype)
        out = transform(x, s=lengths, axes=axes)
        return np.asarray(out, dtype=result_type.dtype)

    return kernel
