"""Conversions with XLA CPU's semantics, shared by lax's eager rules, constant folding and the
backends: `convert_values` (StableHLO `convert`), and the float32 detour XLA CPU takes for
float16/bfloat16 (and narrower float) math: `widen_low_precision` then `round_from_float32`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import dtypes

__all__ = ["UNSIGNED_NAN_FLOATS", "convert_values", "round_from_float32", "widen_low_precision"]


def widen_low_precision(x: np.ndarray) -> np.ndarray:
    """float16/bfloat16 and narrower float values as float32 (XLA CPU computes their math in
    float32); other arrays unchanged."""
    x = np.asarray(x)
    if x.dtype in dtypes.FLOATS_COMPUTED_IN_FLOAT32:
        return x.astype(np.float32)
    return x


def round_from_float32(x: Any, dtype: np.dtype) -> np.ndarray:
    """A result computed in float32 as `dtype`, rounded as XLA CPU rounds it (narrow floats
    through float16, `dtypes.rounding_path`)."""
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        for step in dtypes.rounding_path(dtype):
            x = x.astype(step, copy=False)
    return x


# Narrow floats whose NaN has no sign bit.
UNSIGNED_NAN_FLOATS = (dtypes.float8_e4m3fnuz, dtypes.float8_e5m2fnuz, dtypes.float8_e4m3b11fnuz,
                        dtypes.float8_e8m0fnu)


def _float8_with_nans(x: np.ndarray, nans: np.ndarray) -> np.ndarray:
    """`x` with the NaN XLA gives converting between narrow floats where `nans`: positive,
    every other bit set (0x7F), or the one NaN of the types that have one."""
    if not nans.any():
        return x
    one_nan = {dtypes.float8_e8m0fnu: 0xFF}.get(
        x.dtype, 0x80 if x.dtype in UNSIGNED_NAN_FLOATS else 0x7F)
    bits = np.where(nans, np.uint8(one_nan), np.ascontiguousarray(x).view(np.uint8))
    return bits.astype(np.uint8).view(x.dtype)


def convert_values(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    """NumPy conversion with XLA's rules: complex -> real drops the imaginary part, float -> int
    truncates and saturates at the integer type's range with NaN -> 0, anything -> bool is
    `x != 0`, integer -> narrower integer wraps. Narrow types (ml_dtypes') convert through
    float32 or int32, which hold their values exactly; a narrow float's NaN becomes a positive
    NaN in another narrow float, and the NaN of the types whose NaN has no sign (fnuz,
    e8m0fnu) is positive everywhere."""
    new_dtype = np.dtype(new_dtype)
    if new_dtype == dtypes.bool_:
        return np.asarray(x != 0)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    if x.dtype in dtypes.NARROW_FLOAT_TYPES and x.dtype != new_dtype:
        wide = x.astype(np.float32)
        if new_dtype in dtypes.FLOAT8_TYPES:
            return _float8_with_nans(wide.astype(new_dtype), np.isnan(wide))
        if x.dtype in UNSIGNED_NAN_FLOATS:
            wide = np.where(np.isnan(wide), np.float32(np.nan), wide)
        x = wide
    elif x.dtype in dtypes.INTN_TYPES and x.dtype != new_dtype:
        x = x.astype(np.int32)
    if dtypes.is_inexact(x.dtype) and dtypes.is_int(new_dtype):
        info = dtypes.iinfo(new_dtype)
        wide = x.astype(np.float64)
        wide = np.where(np.isnan(wide), 0, np.clip(np.trunc(wide), info.min, info.max))
        # float64 cannot hold int64's max exactly; clamp again in the integer domain.
        out = np.where(wide >= float(info.max), info.max,
                       np.where(wide <= float(info.min), info.min, wide.astype(np.int64)
                                if dtypes.is_signed(new_dtype) else wide.astype(np.uint64)))
        return out.astype(new_dtype)
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(new_dtype)
