"""Bits packed into bytes and back: `packbits` and `unpackbits` (uint8 results)."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.numpy import array_creation, padding, reductions, shape_ops, ufuncs, util

__all__ = ["packbits", "unpackbits"]


def _bit_weights(bitorder: str) -> np.ndarray:
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    weights = (1 << np.arange(8)).astype(np.uint8)
    return weights if bitorder == "little" else weights[::-1]


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Groups of 8 truth values packed into the bits of bytes.

    Args:
      a: an integer or boolean array; nonzero entries are 1 bits.
      axis: the axis to pack (default: the flattened array).
      bitorder: `"big"` (first value in the most significant bit) or `"little"`.
    Returns:
      A uint8 array whose packed axis has length `ceil(n / 8)` (zero-padded).
    """
    arr = util.ensure_arraylike("packbits", a)
    if not (dtypes.issubdtype(arr.dtype, np.integer) or dtypes.issubdtype(arr.dtype, np.bool_)):
        raise TypeError("Expected an input array of integer or boolean data type")
    weights = _bit_weights(bitorder)
    if axis is None:
        arr, axis = shape_ops.ravel(arr), 0
    axis = util.canonicalize_axis(axis, arr.ndim)
    bits = ufuncs.not_equal(arr, 0).astype(np.uint8)
    moved = shape_ops.moveaxis(bits, axis, -1)
    remainder = moved.shape[-1] % 8
    if remainder:
        pad_width = [(0, 0)] * (moved.ndim - 1) + [(0, 8 - remainder)]
        moved = padding.pad(moved, pad_width)
    grouped = moved.reshape(moved.shape[:-1] + (moved.shape[-1] // 8, 8))
    packed = reductions.sum(grouped * array_creation.asarray(weights), axis=-1, dtype=np.uint8)
    return shape_ops.moveaxis(packed, -1, axis)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of uint8 values as 0/1 uint8 entries.

    Args:
      a: a uint8 array.
      axis: the axis to unpack (default: the flattened array).
      count: keep this many bits along the axis (negative: drop that many from the end).
      bitorder: `"big"` or `"little"`.
    Returns:
      The bits, the unpacked axis 8 times longer (then cut to `count`).
    """
    arr = util.ensure_arraylike("unpackbits", a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    weights = array_creation.asarray(_bit_weights(bitorder))
    bits = ufuncs.not_equal(ufuncs.bitwise_and(arr[..., None], weights), 0).astype(np.uint8)
    if axis is None:
        bits, axis = bits.reshape(-1), 0
    else:
        axis = util.canonicalize_axis(axis, arr.ndim)
        bits = shape_ops.swapaxes(bits, axis, -2)
        bits = bits.reshape(bits.shape[:-2] + (-1,))
        bits = shape_ops.swapaxes(bits, -1, axis)
    if count is not None:
        count = core.concrete_or_error(int, count, "count argument of jnp.unpackbits")
        bits = bits[(slice(None),) * axis + (slice(None, count),)]
    return bits
