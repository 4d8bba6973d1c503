"""`jax.dlpack`: arrays from other libraries through the DLPack protocol.

On CPU an imported buffer is host memory: `np.from_dlpack` reads it (any producer with
`__dlpack__` and `__dlpack_device__`: NumPy, PyTorch, CuPy on host ...) and it becomes an
Array committed to the device asked for (the default device otherwise), its dtype
canonicalized as `jnp.asarray` would (float64 becomes float32 without x64, as in JAX).
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from justjax._src.api import device_put
from justjax._src.core import dtypes
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime.array import Array

__all__ = ["from_dlpack", "is_supported_dtype"]

# The element types DLPack exchanges with JAX (no 4-bit or 8-bit floats).
SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    np.bool_))


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` can be exchanged through DLPack (`jax.dlpack`).

    Args:
      dtype: a dtype-like.
    Returns:
      True for the integer, float (16 to 64 bits, bfloat16), complex and bool types.
    """
    return np.dtype(dtype) in SUPPORTED_DTYPES


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Array:
    """An Array of the data of `external_array`, any object implementing DLPack
    (`jax.dlpack.from_dlpack`, `jnp.from_dlpack`).

    Args:
      external_array: an object with `__dlpack__` and `__dlpack_device__`.
      device: the device (or sharding) to put the result on; the default device if None.
      copy: accepted as in JAX; the Array never shares memory a producer could write.
    Returns:
      The Array, committed to its device.
    Raises:
      TypeError: an object without the DLPack methods (JAX's message).
    """
    target = device if device is not None else (devices_lib.default_device_override()
                                                or devices_lib.default_device())
    if type(external_array) is Array:
        return device_put(external_array, target)
    if not (hasattr(external_array, "__dlpack__")
            and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    host = np.from_dlpack(external_array)
    value = np.array(host, dtype=dtypes.canonicalize_dtype(host.dtype), copy=True)
    return device_put(value, target)
