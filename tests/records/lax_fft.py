"""Op records for `fft` (`lax.fft`): the four transform types over one to three trailing axes,
odd and even lengths, empty arrays, complex and real operands.

The references are NumPy's pocketfft in double precision. Complex operands are built from
two real arguments (`lax.complex(re, im)`), so that the gradient checks (which run on real
arguments) differentiate through complex transforms too.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from justjax import lax
from tests.harness import C64, F32, OpRecord

# complex64 transforms against double-precision NumPy: errors grow with the length.
_TOL = {C64: 1e-4, F32: 1e-4}

_NUMPY = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn,
          "IRFFT": np.fft.irfftn}


def _complex_dtype(*_: np.dtype) -> np.dtype:
    return C64


def _real_dtype(*_: np.dtype) -> np.dtype:
    return F32


def _numpy_fft(kind: str, x: np.ndarray, lengths: tuple[int, ...]) -> np.ndarray:
    """NumPy's transform of the trailing `len(lengths)` axes; zeros of the result's shape for
    an empty one (pocketfft rejects those)."""
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if x.size == 0 or 0 in lengths:
        shape = list(x.shape[:x.ndim - len(lengths)]) + list(lengths)
        if kind == "RFFT":
            shape[-1] = shape[-1] // 2 + 1 if shape[-1] else 0
        return np.zeros(shape, np.float64 if kind == "IRFFT" else np.complex128)
    return _NUMPY[kind](x, s=lengths, axes=axes)


def _of_complex(kind: str, lengths: tuple[int, ...]) -> tuple[Callable, Callable]:
    """(fun, reference) transforming the complex array `re + i im`."""
    def fun(re: Any, im: Any) -> Any:
        return lax.fft(lax.complex(re, im), kind, lengths)

    def reference(re: np.ndarray, im: np.ndarray) -> np.ndarray:
        return _numpy_fft(kind, re.astype(np.float64) + 1j * im.astype(np.float64), lengths)
    return fun, reference


def _of_real(kind: str, lengths: tuple[int, ...]) -> tuple[Callable, Callable]:
    """(fun, reference) transforming a real array (converted to complex but by RFFT)."""
    def fun(x: Any) -> Any:
        return lax.fft(x, kind, lengths)

    def reference(x: np.ndarray) -> np.ndarray:
        wide = np.complex128 if x.dtype.kind == "c" else np.float64
        return _numpy_fft(kind, x.astype(wide), lengths)
    return fun, reference


def _complex_records() -> list[OpRecord]:
    """FFT, IFFT and IRFFT of complex operands; shapes list the operand's shape twice (the
    real and imaginary parts)."""
    cases = [
        ("FFT", (8,), [(8,)], [(3, 8)]),
        ("FFT", (7,), [(7,)], [(2, 7)]),
        ("FFT", (3, 5), [(3, 5)], [(2, 3, 5)]),
        ("FFT", (2, 3, 4), [(2, 3, 4)]),
        ("IFFT", (6,), [(6,)], [(4, 6)]),
        ("IFFT", (5, 3), [(5, 3)], [(2, 5, 3)]),
        ("IFFT", (2, 2, 3), [(2, 2, 3)]),
        # IRFFT reads n // 2 + 1 bins of the last axis.
        ("IRFFT", (8,), [(5,)], [(3, 5)]),
        ("IRFFT", (9,), [(5,)], [(2, 5)]),
        ("IRFFT", (4, 6), [(4, 4)], [(2, 4, 4)]),
        ("IRFFT", (3, 2, 7), [(3, 2, 4)]),
    ]
    records = []
    for kind, lengths, *shape_lists in cases:
        fun, reference = _of_complex(kind, lengths)
        name = f"fft_{kind.lower()}_{'x'.join(map(str, lengths))}"
        records.append(OpRecord(
            name, fun, reference, [[s, s] for shapes in shape_lists for s in shapes],
            [F32], expected_dtype=_real_dtype if kind == "IRFFT" else _complex_dtype,
            tol=_TOL))
    return records


def _real_records() -> list[OpRecord]:
    """RFFT of real operands, and the complex transforms of real operands (which `lax.fft`
    converts to complex first)."""
    cases = [
        ("RFFT", (8,), [[(8,)], [(3, 8)]]),
        ("RFFT", (7,), [[(7,)], [(2, 7)]]),
        ("RFFT", (4, 6), [[(4, 6)], [(2, 4, 6)]]),
        ("RFFT", (3, 2, 5), [[(3, 2, 5)]]),
        ("FFT", (6,), [[(6,)], [(2, 6)]]),
        ("IFFT", (4, 3), [[(4, 3)]]),
    ]
    records = []
    for kind, lengths, shapes in cases:
        fun, reference = _of_real(kind, lengths)
        records.append(OpRecord(
            f"fft_{kind.lower()}_real_{'x'.join(map(str, lengths))}", fun, reference,
            shapes, [F32], expected_dtype=_complex_dtype, tol=_TOL))
    return records


def _empty_records() -> list[OpRecord]:
    """Transforms with nothing to transform: an empty batch, or a zero length."""
    fft_fun, fft_ref = _of_real("FFT", (4,))
    empty_fun, empty_ref = _of_real("FFT", (0,))
    irfft_fun, irfft_ref = _of_complex("IRFFT", (0,))
    rfft_fun, rfft_ref = _of_real("RFFT", (6,))
    return [
        OpRecord("fft_empty_batch", fft_fun, fft_ref, [[(0, 4)]], [F32, C64],
                 expected_dtype=_complex_dtype, differentiable=False),
        OpRecord("fft_zero_length", empty_fun, empty_ref, [[(0,)], [(3, 0)]], [F32, C64],
                 expected_dtype=_complex_dtype, differentiable=False),
        OpRecord("fft_irfft_zero_length", irfft_fun, irfft_ref, [[(1,), (1,)], [(0,), (0,)]],
                 [F32], expected_dtype=_real_dtype, differentiable=False),
        OpRecord("fft_rfft_empty_batch", rfft_fun, rfft_ref, [[(0, 6)], [(2, 0, 6)]], [F32],
                 expected_dtype=_complex_dtype, differentiable=False),
    ]


RECORDS = _complex_records() + _real_records() + _empty_records()
