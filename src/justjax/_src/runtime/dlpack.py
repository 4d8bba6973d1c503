"""DLPack exchange (`jax.dlpack`, `jnp.from_dlpack`, `Array.__dlpack__`) on CPU.

An Array's buffer is a read-only NumPy array, so NumPy's own DLPack producer and consumer do
the capsule work: exporting hands out the Array's memory without a copy, and importing a CPU
tensor adopts the producer's memory without a copy whenever it is C-contiguous (a read-only
view of it, as JAX shares the producer's buffer). As in JAX, the memory is shared both ways:
a producer that later writes its buffer changes the Array.

Capsules follow what the consumer asks for: a consumer announcing DLPack >= 1.0
(`max_version=(1, 0)`, as NumPy does) gets a versioned capsule flagged read-only; an older
consumer gets an unversioned one (DLPack before 1.0 cannot say "read-only"; JAX hands out
its buffers writable the same way).

NumPy's DLPack knows no bfloat16 or float8 types: those cross as unsigned integers of their
width, with the type code in the capsule's DLTensor set to (or read from) DLPack's own code
for them (kDLBfloat, kDLFloat8_*), as JAX exchanges them.
"""
from __future__ import annotations

import ctypes
import enum
from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.errors import JaxRuntimeError
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime.devices import Device
from justjax._src.runtime.sharding import Sharding


class DLDeviceType(enum.IntEnum):
    """DLPack's device types that JAX knows (`DLDeviceType` of dlpack.h)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


_DL_DEVICE_TO_PLATFORM = {
    DLDeviceType.kDLCPU: "cpu",
    DLDeviceType.kDLCUDA: "cuda",
    DLDeviceType.kDLCUDAHost: "cuda",
    DLDeviceType.kDLROCM: "rocm",
}

DLPACK_VERSION = (0, 8)
MIN_DLPACK_VERSION = (0, 5)
# The first DLPack version whose capsules can say that a tensor is read-only.
_VERSIONED = (1, 0)

SUPPORTED_DTYPES: frozenset[Any] = frozenset({
    dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
    dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64,
    dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
    dtypes.complex64, dtypes.complex128, dtypes.bool_})
_SUPPORTED_DTYPES_SET = frozenset(np.dtype(d) for d in SUPPORTED_DTYPES)


# ml_dtypes types by their DLPack type code (dlpack.h's DLDataTypeCode).
_EXTENSION_CODES = {
    dtypes.bfloat16: 4, dtypes.float8_e3m4: 7, dtypes.float8_e4m3: 8,
    dtypes.float8_e4m3b11fnuz: 9, dtypes.float8_e4m3fn: 10, dtypes.float8_e4m3fnuz: 11,
    dtypes.float8_e5m2: 12, dtypes.float8_e5m2fnuz: 13, dtypes.float8_e8m0fnu: 14,
}
_CODE_TO_EXTENSION = {code: np.dtype(dt) for dt, code in _EXTENSION_CODES.items()}
_KDL_UINT = 1
# Where DLDataType.code sits: after DLTensor's data pointer, DLDevice and ndim (20 bytes);
# a versioned capsule's DLTensor follows the version, manager context, deleter and flags.
_CODE_OFFSET = {b"dltensor": 20, b"dltensor_versioned": 32 + 20}

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _type_code(capsule: Any) -> ctypes.c_uint8:
    """The (writable) DLDataType.code of an unconsumed DLPack capsule."""
    name = _capsule_name(capsule)
    if name not in _CODE_OFFSET:
        raise BufferError(f"Expected a DLPack capsule, got a capsule named {name!r}")
    return ctypes.c_uint8.from_address(_capsule_pointer(capsule, name) + _CODE_OFFSET[name])


class _Capsule:
    """A capsule already taken from its producer, handed to NumPy's consumer."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return int(DLDeviceType.kDLCPU), 0


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` can be exchanged through DLPack (`jax.dlpack`).

    Args:
      dtype: a dtype-like (not None).
    Returns:
      True for the booleans, integers, floats (with bfloat16) and complex types.
    """
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in _SUPPORTED_DTYPES_SET


def _device_for(dl_device_type: Any, device_id: int) -> Device:
    """The device a DLPack device `(type, id)` names (JAX's errors for other types)."""
    try:
        platform = _DL_DEVICE_TO_PLATFORM[DLDeviceType(int(dl_device_type))]
    except ValueError:
        raise BufferError("The device specification passed to to_dlpack contains an"
                          f" unsupported device type (DLDeviceType: {dl_device_type})"
                          ) from None
    if platform != "cpu":
        raise RuntimeError(f"Unknown backend {platform}. Available backends are ['cpu']")
    for device in devices_lib.devices():
        if device.local_hardware_id == device_id:
            return device
    raise RuntimeError(f"INVALID_ARGUMENT: No matching device found for local_hardware_id "
                       f"{device_id}")


class _WritableAlias:
    """Presents a read-only buffer to NumPy as writable memory (and keeps it alive), for the
    unversioned capsules that cannot carry a read-only flag."""

    def __init__(self, buffer: np.ndarray) -> None:
        self._buffer = buffer
        interface = dict(buffer.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


def to_dlpack(x: Any, stream: Any = None, src_device: Device | None = None,
              dl_device: tuple[Any, int] | None = None,
              max_version: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
    """A DLPack capsule of the Array `x` (what `x.__dlpack__` returns).

    Args:
      x: an Array on one device.
      stream: must be None on CPU (JAX's error otherwise).
      src_device: the device `x` is on (its own by default).
      dl_device: `(DLDeviceType, id)` the consumer wants the tensor on.
      max_version: the highest DLPack version the consumer reads; versions below 0.5 are
        refused, 1.0 and above get a read-only versioned capsule.
      copy: True: export a copy; False: never copy (an error if another device is asked
        for); None: copy only if needed.
    Returns:
      A PyCapsule named "dltensor" or "dltensor_versioned".
    """
    from justjax._src.runtime.array import Array, put
    if type(x) is not Array:
        raise TypeError(f"Argument to to_dlpack must be a jax.Array, got {type(x)}")
    if src_device is None:
        src_device, = x.devices()
    target = _device_for(*dl_device) if dl_device else None
    if max_version is not None and tuple(max_version) < MIN_DLPACK_VERSION:
        raise BufferError(f"JAX does not support any version below {MIN_DLPACK_VERSION} but "
                          f"version ({max_version}) was requested.")
    if stream is not None:
        raise JaxRuntimeError("UNIMPLEMENTED: WaitUntilBufferReadyOnStream is only "
                              "implemented for GPU.")
    if target is not None and target != src_device:
        if copy is not None and not copy:
            raise ValueError(f"Specified device={target!r} which requires a copy since the "
                             f"source device is {src_device!r}, however copy=False. Set "
                             "copy=True or copy=None to perform the requested operation.")
        x = put(x, target)
    buffer = x._value
    if copy:
        buffer = buffer.copy()
        buffer.setflags(write=False)
    code = _EXTENSION_CODES.get(buffer.dtype)
    if code is not None:
        buffer = buffer.view(f"u{buffer.dtype.itemsize}")
    if max_version is not None and tuple(max_version) >= _VERSIONED:
        capsule = buffer.__dlpack__(max_version=_VERSIONED)
    else:
        capsule = np.asarray(_WritableAlias(buffer)).__dlpack__()
    if code is not None:
        _type_code(capsule).value = code
    return capsule


def dlpack_device(x: Any) -> tuple[DLDeviceType, int]:
    """`x.__dlpack_device__()`: `(kDLCPU, 0)` for an Array on one CPU device, as JAX gives."""
    if len(x.sharding.device_set) != 1:
        raise BufferError("__dlpack__ only supported for unsharded arrays.")
    return DLDeviceType.kDLCPU, 0


def _is_tensorflow_tensor(external_array: Any) -> bool:
    t = type(external_array)
    return t.__qualname__ == "EagerTensor" and t.__module__.endswith(
        "tensorflow.python.framework.ops")


def _single_device(device: Device | Sharding | None) -> Device | None:
    if isinstance(device, Sharding):
        device_set = device.device_set
        if len(device_set) > 1:
            raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular "
                             f"device, but a Sharding with {len(device_set)} devices was "
                             "provided.")
        device, = device_set
    return device


def _host_view(external_array: Any, copy: bool | None) -> np.ndarray:
    """The producer's tensor as a NumPy array (its memory when `copy` is not True)."""
    copied = False
    if _is_tensorflow_tensor(external_array):
        capsule = external_array.__dlpack__()  # TensorFlow takes no stream
    else:
        try:
            capsule = external_array.__dlpack__(stream=None, max_version=_VERSIONED,
                                                copy=copy)
            copied = bool(copy)
        except TypeError:
            # A producer from before DLPack 1.0 (no max_version or copy keywords).
            capsule = external_array.__dlpack__(stream=None)
    code = _type_code(capsule)
    extension = _CODE_TO_EXTENSION.get(code.value)
    if extension is not None:
        code.value = _KDL_UINT  # NumPy reads the bits as unsigned integers of their width
    value = np.from_dlpack(_Capsule(capsule))
    if extension is not None:
        value = value.view(extension)
    return value.copy() if copy and not copied else value


def from_dlpack(external_array: Any, device: Device | Sharding | None = None,
                copy: bool | None = None) -> Any:
    """An Array of a DLPack tensor (`jax.dlpack.from_dlpack`, `jnp.from_dlpack`).

    Args:
      external_array: an object with `__dlpack__` and `__dlpack_device__` (a NumPy array,
        a torch tensor, another Array ...) on the CPU.
      device: the device (or single-device sharding) the result is committed to; by
        default the producer's device.
      copy: True: always copy; False: never copy (a ValueError when a copy is needed: a
        non-contiguous tensor, another device, a 64-bit type without x64); None: copy
        only when needed.
    Returns:
      An Array sharing the producer's memory unless a copy was asked for or needed.
    """
    from justjax._src.runtime.array import Array, put
    device = _single_device(device)
    if (not hasattr(external_array, "__dlpack__")
            or not hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    dl_device_type, device_id = external_array.__dlpack_device__()
    try:
        DLDeviceType(int(dl_device_type))
    except ValueError:
        raise TypeError("Array passed to from_dlpack is on unsupported device type "
                        f"(DLDeviceType: {dl_device_type}, array: {external_array}") from None
    dlpack_device = _device_for(dl_device_type, device_id)
    moves = device is not None and device != dlpack_device
    if moves and copy is not None and not copy:
        raise ValueError(f"Specified device={device!r} which requires a copy since the source "
                         f"device is {dlpack_device!r}, however copy=False. Set copy=True or "
                         "copy=None to perform the requested operation.")
    value = _host_view(external_array, copy)
    canonical = dtypes.canonicalize_dtype(value.dtype)
    if copy is False and (not value.flags.c_contiguous or canonical != value.dtype):
        raise ValueError("Specified input which requires a copy since the source data buffer "
                         "is not a contiguous tensor of a JAX dtype. However copy=False. Set "
                         "copy=True or copy=None to perform the requested operation.")
    fresh = bool(copy) or canonical != value.dtype
    if canonical != value.dtype:
        value = value.astype(canonical)
    elif not copy and value.flags.c_contiguous:
        # The producer's memory itself, read-only to us (the Array adopts a read-only
        # buffer as it is).
        value = value.view()
        value.setflags(write=False)
    out = Array(value, owned=fresh)
    return put(out, device if device is not None else dlpack_device)
