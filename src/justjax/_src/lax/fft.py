"""The fast Fourier transform: `fft_p` and its wrapper `lax.fft`.

One primitive covers XLA's four transforms over the trailing `len(fft_lengths)` axes:

    FFT    complex -> complex, same shape
    IFFT   complex -> complex, same shape (scaled by 1/prod(fft_lengths))
    RFFT   real -> complex, the last axis n -> n // 2 + 1 (the non-negative frequencies)
    IRFFT  complex -> real, the last axis becomes fft_lengths[-1]

It is linear in its operand. The transposes: FFT's is FFT and IFFT's is IFFT (the DFT
matrix is symmetric); RFFT's and IRFFT's are each other's, with the half-spectrum's
duplicated bins (all but DC and, for even lengths, Nyquist) weighted twice. Lowers to
`stablehlo.fft`; the backends run it through pocketfft (`numpy.fft`).
"""
from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.hlo import ir, verifier
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.compilation.jit import jit
from justjax._src.lax import creation, elementwise, slicing, structural

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
    """Which FFT to perform (XLA's `FftType`)."""

    FFT = 0
    "Forward complex-to-complex FFT."
    IFFT = 1
    "Inverse complex-to-complex FFT."
    RFFT = 2
    "Forward real-to-complex FFT."
    IRFFT = 3
    "Inverse complex-to-real FFT."


# The names `lax.fft` accepts for a type: lower or upper case, as JAX's.
_NAMES = {name: typ for typ in FftType for name in (typ.name, typ.name.lower())}


def _fft_type(value: Any) -> FftType:
    """The `FftType` a user's `fft_type` names (an `FftType`, or its name in either case)."""
    if isinstance(value, str):
        if value not in _NAMES:
            raise ValueError(f"Unknown FFT type '{value}'")
        return _NAMES[value]
    if isinstance(value, FftType):
        return value
    raise TypeError(f"Unknown FFT type value '{value}'")


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex type of the same precision (float32 -> complex64, float64 -> complex128)."""
    return np.result_type(dtype, np.complex64)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.finfo(dtype).dtype


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


# -- fft_p --------------------------------------------------------------------------------------

def _fft_abstract_eval(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                       ) -> ShapedArray:
    """JAX's shape and dtype rules, with its messages."""
    rank = len(fft_lengths)
    if rank > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    minor = x.shape[x.ndim - rank:]
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        shape = x.shape[:x.ndim - rank] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return x.update(shape=shape, dtype=_complex_dtype(x.dtype))
    if not dtypes.is_complex(x.dtype):
        name = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{name} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got fft_lengths={fft_lengths}")
        shape = x.shape[:x.ndim - rank] + fft_lengths
        return x.update(shape=shape, dtype=_real_dtype(x.dtype))
    if minor != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {fft_lengths}")
    return x.update(shape=x.shape, dtype=x.dtype)


fft_p = Primitive("fft")
fft_p.def_abstract_eval(_fft_abstract_eval)
dispatch.def_backend_impl(fft_p)


def _half_spectrum_weights(like: Any, length: int, size: int, dtype: Any) -> Any:
    """`[1, 2, 2, ..., 2, 1]` of `size` entries (the last 2 when `length` is odd), shaped to
    broadcast along the last axis of a rank-`ndim(like)` array: how often each bin of a
    half spectrum stands for a bin of the full one."""
    weights = creation.full_like(like, 2.0, shape=(size,), dtype=dtype)
    weights = slicing.dynamic_update_slice(
        weights, creation.full_like(like, 1.0, shape=(1,), dtype=dtype), (0,))
    if length % 2 == 0:
        weights = slicing.dynamic_update_slice(
            weights, creation.full_like(like, 1.0, shape=(1,), dtype=dtype), (size - 1,))
    return structural.expand_dims(weights, tuple(range(np.ndim(like) - 1)))


@jit(static_argnums=(1,))
def _rfft_transpose(t: Any, fft_lengths: tuple[int, ...]) -> Any:
    """RFFT's transpose: an IRFFT of the conjugated cotangent with the duplicated bins halved,
    scaled back by the transform's size (IRFFT divides by it)."""
    weights = _half_spectrum_weights(t, fft_lengths[-1], np.shape(t)[-1], None)
    scaled = elementwise.div(elementwise.conj(t), weights)
    return math.prod(fft_lengths) * fft(scaled, FftType.IRFFT, fft_lengths)


def _irfft_transpose(t: Any, fft_lengths: tuple[int, ...]) -> Any:
    """IRFFT's transpose: the RFFT of the cotangent with the duplicated bins doubled, divided
    by the transform's size, conjugated (JAX's convention for complex cotangents)."""
    x = fft(t, FftType.RFFT, fft_lengths)
    weights = _half_spectrum_weights(t, fft_lengths[-1], np.shape(x)[-1], _dtype(x))
    return elementwise.conj(1 / math.prod(fft_lengths) * weights * x)


def _fft_transpose(t: Any, operand: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                   ) -> list[Any]:
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(t, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(t, fft_lengths)]
    return [fft(t, fft_type, fft_lengths)]


ad.deflinear2(fft_p, _fft_transpose)


def _fft_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                 dims: Sequence[int | None], *, fft_type: FftType,
                 fft_lengths: tuple[int, ...]) -> tuple[Any, int]:
    """The batch axis goes first, out of the transformed trailing axes."""
    x, = vals
    bdim, = dims
    return fft(batching.moveaxis(x, bdim, 0), fft_type, fft_lengths), 0


batching.primitive_batchers[fft_p] = _fft_batcher


def _fft_lowering(ctx: lowering.LoweringRuleContext, x: ir.Value, *, fft_type: FftType,
                  fft_lengths: tuple[int, ...]) -> list[ir.Value]:
    """`stablehlo.fft %x, type = <T>, length = [...]`. What StableHLO rejects (more than three
    lengths, an RFFT of length 0, ...) fails here, as MLIR's verifier fails it in JAX."""
    out_type = lowering.aval_to_type(ctx.avals_out[0])
    name = FftType(fft_type).name
    inferred = verifier.fft_result_type(x.type, name, fft_lengths)
    if inferred != out_type:
        raise ValueError(f"Cannot lower jaxpr with verifier errors: type of the fft result "
                         f"({inferred}) does not match the one JAX computed ({out_type})")
    return [ctx.builder.one("stablehlo.fft", [x], out_type,
                            fft_type=ir.Enum("fft_type", name),
                            fft_length=tuple(int(n) for n in fft_lengths))]


lowering.register_lowering(fft_p, _fft_lowering)


# -- the wrapper --------------------------------------------------------------------------------

@jit(static_argnums=(1, 2))
def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """XLA's FFT over the trailing `len(fft_lengths)` axes of `x` (StableHLO `fft`).

    Args:
      x: the operand: converted to a complex type for FFT, IFFT and IRFFT, and to a float
        type for RFFT (which rejects complex input).
      fft_type: an `FftType`, or its name (`"fft"`, `"IRFFT"`, ...).
      fft_lengths: the transform's length along each trailing axis (a hashable sequence).
    Returns:
      The transform: same shape for FFT and IFFT; the last axis `n // 2 + 1` for RFFT and
      `fft_lengths[-1]` for IRFFT.
    """
    typ = _fft_type(fft_type)
    in_dtype = dtypes.dtype(x)
    if typ == FftType.RFFT:
        if dtypes.is_complex(in_dtype):
            raise ValueError("only real valued inputs supported for rfft")
        x = structural.convert_element_type(x, dtypes.to_inexact_dtype(in_dtype))
    else:
        x = structural.convert_element_type(x, dtypes.to_complex_dtype(in_dtype))
    if len(fft_lengths) == 0:
        # XLA has no rank-0 FFT: the empty transform is the identity.
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=tuple(int(n) for n in fft_lengths))
