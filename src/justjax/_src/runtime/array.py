"""`justjax.Array`: an immutable array living on a (virtual CPU) device.

The buffer is a read-only NumPy array of the canonical dtype. Operators and methods shared with
tracers are installed by the numpy layer (`_src/numpy/array_methods.py`).
"""
from __future__ import annotations

import abc
import ctypes
import math
import sys
from typing import Any, Collection, Iterator, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.runtime.devices import (Device, default_device, default_device_override,
                                          is_local, start_backend)
from justjax._src.runtime.sharding import Sharding, SingleDeviceSharding, check_fits, type_sharding


# One aval per (shape, dtype, weak type) for the Arrays made from buffers: avals are
# immutable, and a jit call's fast path compares its arguments' avals by identity first.
_shared_avals: dict[tuple, ShapedArray] = {}
_SHARED_AVALS_MAX = 4096


def shared_aval(shape: tuple[int, ...], dtype: np.dtype, weak_type: bool) -> ShapedArray:
    """The ShapedArray of `shape`, `dtype` and `weak_type`, the same object each time (for
    the most recent few thousand kinds)."""
    key = (shape, dtype, weak_type)
    aval = _shared_avals.get(key)
    if aval is None:
        if len(_shared_avals) >= _SHARED_AVALS_MAX:
            _shared_avals.clear()
        aval = _shared_avals[key] = ShapedArray(shape, dtype, weak_type)
    return aval


def _writable_address(buffer: np.ndarray) -> int:
    """The address of `buffer`'s memory while it is still writable (the quick way: for a
    read-only buffer, or a dtype the buffer protocol cannot name, 0: asked when needed)."""
    if not buffer.flags.writeable:
        return 0
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    except (ValueError, TypeError):
        return 0


class Array(metaclass=abc.ABCMeta):
    """A concrete array: `Array([1., 2.], dtype=float32)`.

    As `jax.Array`, it is also the type of every array-like JAX value: tracers and key
    arrays are registered as virtual subclasses, so `isinstance(tracer, jax.Array)` holds,
    as in JAX. Code that needs a concrete array checks `type(x) is Array`.
    """

    # `_ready`: None, or the future of the program still computing the buffer (async
    # dispatch: the buffer exists, its contents are being written).
    # `_sharding`: None for an array on one device (`_device`, in device memory); else how
    # it is laid out (a pmap result's `NamedSharding`, an array `device_put` with a
    # sharding).
    # `_blocks`: for an array laid out over several devices, each device's own block (in
    # the order of the sharding's devices), the only memory it holds: a device holds its
    # shard's bytes. The whole value (`_buffer`) is then assembled from them when something
    # reads it (a host copy, as JAX's), and kept. Without blocks the buffer holds the whole
    # value and each device's shard is its block of it.
    # `_owner`: the buffer was allocated by justjax (a program's fresh result or a private
    # copy), never a caller's NumPy array adopted as it is, so donating the Array may give
    # its memory to a program's result once nothing else references it
    # (`donatable_buffer`).
    # `_address`: the buffer's address once a jit call's fast path has read it (0 before),
    # kept so that later calls do not ask NumPy again; it is reset with the buffer.
    __slots__ = ("_buffer", "aval", "_device", "_committed", "_ready", "_sharding", "_owner",
                 "_address", "_blocks")
    __array_priority__ = 100

    def __init__(self, value: np.ndarray, weak_type: bool = False, device: Device | None = None,
                 committed: bool = False, owned: bool = False) -> None:
        # Data put on a device (`jnp.asarray`, `jnp.array`, `device_put`) starts the backend,
        # as in JAX, so that the first compile does not pay for it.
        start_backend()
        if value.flags.c_contiguous and (owned or not value.flags.writeable):
            # Nobody else can write this buffer (a fresh result, or already read-only).
            buffer = value
            self._address = _writable_address(buffer)
            buffer.setflags(write=False)
            self._owner = owned and buffer.flags.owndata
        else:
            # A private C-ordered copy that nobody can write (np.ascontiguousarray would turn
            # 0-d values into 1-d ones).
            buffer = np.array(value, order="C", copy=True)
            self._address = _writable_address(buffer)
            buffer.setflags(write=False)
            self._owner = True
        self._buffer: np.ndarray | None = buffer
        self._ready: Any = None
        self.aval = shared_aval(buffer.shape, buffer.dtype, weak_type)
        # An array made without a device lives on the default device of the moment.
        self._device = device if device is not None else default_device_override()
        self._committed = committed
        self._sharding: Sharding | None = None
        self._blocks: tuple[np.ndarray, ...] | None = None

    @classmethod
    def adopt(cls, buffer: np.ndarray, aval: ShapedArray, ready: Any = None) -> Array:
        """An Array owning `buffer`, a fresh C-contiguous result of exactly `aval`'s dtype and
        shape that nothing else references (the caller guarantees it); no checks, no copy.
        `ready`: the future of the program writing it, when it was dispatched
        asynchronously (reading the Array waits for it)."""
        array = object.__new__(cls)
        buffer.setflags(write=False)
        array._buffer = buffer
        array._address = 0
        array._ready = ready
        array.aval = aval
        array._device = default_device_override()
        array._committed = False
        array._sharding = None
        array._owner = True
        array._blocks = None
        return array

    @classmethod
    def from_blocks(cls, blocks: Sequence[np.ndarray | None], aval: ShapedArray,
                    sharding: Sharding, ready: Any = None) -> Array:
        """An Array laid out as `sharding` says over several devices, holding only each
        device's block (`blocks`, in the order of the sharding's devices; fresh buffers
        nothing else references, of `aval`'s dtype; None for another process's device: a
        global array of a run of several processes). `ready`: the future of the SPMD run
        still writing the blocks (reading them waits for it; a later run on the same
        devices reads them after it, queued behind it on each device's thread)."""
        array = object.__new__(cls)
        for block in blocks:
            if block is not None:
                block.setflags(write=False)
        array._buffer = None
        array._blocks = tuple(blocks)
        array._address = 0
        array._ready = ready
        array.aval = aval
        array._owner = True
        set_sharding(array, sharding)
        return array

    @property
    def _value(self) -> np.ndarray:
        """The value as a NumPy array, once the program computing it has finished; a donated
        (deleted) array has none, as in JAX; a value of more dimensions than NumPy holds
        has none either (JAX's error)."""
        buffer = self._data
        if buffer.ndim != len(self.aval.shape):
            raise ValueError(f"number of dimensions must be within [0, {NUMPY_MAX_RANK}]")
        return buffer

    @property
    def _data(self) -> np.ndarray:
        """The buffer as it is stored (flat for a value of more dimensions than NumPy holds:
        `stored_shape`), once the program computing it has finished; what programs read."""
        self._wait()
        buffer = self._buffer
        if buffer is None:
            if self._blocks is None:
                raise RuntimeError(f"Array has been deleted with shape="
                                   f"{self.aval.str_short(short_dtypes=False)}.")
            if not _holds_whole_value(self._blocks, self.shape, self._sharding):
                raise RuntimeError(
                    "Fetching value for `jax.Array` that spans non-addressable (non process "
                    "local) devices is not possible. You can use "
                    "`jax.experimental.multihost_utils.process_allgather` to print the "
                    "global array or use `.addressable_shards` method of jax.Array to "
                    "inspect the addressable (process local) shards.")
            buffer = self._buffer = _assembled(self._blocks, self.aval, self._sharding)
        return buffer

    def _wait(self) -> None:
        """Waits for the program still computing the array, if any; raises its error."""
        ready = self._ready
        if ready is not None:
            ready.result()
            self._ready = None

    # -- metadata --------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> Any:
        """The array's device; for an array on several devices (a pmap result), its
        sharding, as JAX gives."""
        sharding = self._sharding
        if sharding is None:
            return self._device or default_device()
        if sharding.num_devices == 1:
            return sharding._device_assignment[0]
        return sharding

    @property
    def committed(self) -> bool:
        return self._committed

    @property
    def sharding(self) -> Sharding:
        """How the array is laid out over devices: a `SingleDeviceSharding` for an array on
        one device."""
        if self._sharding is not None:
            return self._sharding
        return SingleDeviceSharding(self.device)

    def devices(self) -> set[Device]:
        return set(self.sharding.device_set)

    @property
    def format(self) -> Any:
        """The array's memory layout (row-major, untiled) and sharding
        (`jax.experimental.layout.Format`)."""
        from justjax._src.layout import Format, row_major
        return Format(row_major(self.ndim), self.sharding)

    def unsafe_buffer_pointer(self) -> int:
        """The address of the array's buffer (a donated buffer reused for a result keeps
        its address)."""
        return self._value.__array_interface__["data"][0]

    @property
    def is_fully_addressable(self) -> bool:
        return self.sharding.is_fully_addressable

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def addressable_shards(self) -> list[Shard]:
        """The pieces of the array and their devices: each device's block, as its sharding
        lays it out (the whole array for an array on one device)."""
        if self._sharding is None:
            return [Shard(self.device, (slice(None),) * self.ndim, self)]
        return [shard for shard in self.global_shards if shard.data is not None]

    def addressable_data(self, index: int) -> Array:
        """The data of this process's `index`-th shard (an Array on its device)."""
        return self.addressable_shards[index].data

    def device_blocks(self) -> tuple[np.ndarray | None, ...]:
        """Each device's block, in the order of the sharding's devices (views of the whole
        value for an array that holds it; None for another process's device), once the
        program computing them has finished."""
        if self._blocks is not None:
            self._wait()
            return self._blocks
        value = self._value
        indices = self.sharding.devices_indices_map(self.shape)
        return tuple(value[indices[d]] for d in self.sharding._device_assignment)

    @property
    def global_shards(self) -> list[Shard]:
        """Every device's shard, in the order of the sharding's devices; those of other
        processes' devices (a global array of a run of several processes) without data."""
        if self._sharding is None:
            return self.addressable_shards
        indices = self._sharding.devices_indices_map(self.shape)
        replicas = replica_ids(indices)
        blocks = self.device_blocks()
        return [Shard(device, indices[device],
                      None if block is None else Array(block, self.aval.weak_type, device,
                                                       committed=True),
                      replica_id=replicas[device])
                for device, block in zip(self._sharding._device_assignment, blocks,
                                         strict=True)]

    # -- host interop ----------------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self._value
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[Any, int] | None = None, copy: bool | None = None) -> Any:
        """A DLPack capsule of the array's memory (the array API's `__dlpack__`).

        Args:
          stream: must be None on CPU.
          max_version: the highest DLPack version the consumer reads (>= 1.0: a
            read-only versioned capsule).
          dl_device: the `(DLDeviceType, id)` the consumer wants.
          copy: True: export a copy; False: never copy; None: copy only if needed.
        Returns:
          A PyCapsule.
        """
        from justjax._src.runtime import dlpack
        device_set = self.sharding.device_set
        if len(device_set) > 1:
            raise BufferError("to_dlpack can only pack a dlpack tensor from an array on a "
                              f"singular device, but an array with a Sharding over "
                              f"{len(device_set)} devices was provided.")
        device, = device_set
        return dlpack.to_dlpack(self, stream=stream, max_version=max_version,
                                src_device=device, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[Any, int]:
        """`(DLDeviceType.kDLCPU, 0)`: where the array's memory is, for DLPack."""
        from justjax._src.runtime import dlpack
        return dlpack.dlpack_device(self)

    def block_until_ready(self) -> Array:
        """Waits until the program computing this array has finished (async dispatch)."""
        if self._ready is not None and not self.is_deleted():
            self._wait()
        return self

    def is_ready(self) -> bool:
        """Whether the array's value has been computed."""
        return self._ready is None or self._ready.done()

    def copy_to_host_async(self) -> None:
        return None

    def is_deleted(self) -> bool:
        return self._buffer is None and self._blocks is None

    def delete(self) -> None:
        """Frees the buffer (the devices' blocks); any later use raises RuntimeError (what
        donation does)."""
        self._buffer = None
        self._blocks = None
        self._address = 0

    def tolist(self) -> Any:
        return self._value.tolist()

    def item(self, *args: Any) -> Any:
        return self._value.item(*args)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        self._check_scalar("float")
        return float(self._value)

    def __int__(self) -> int:
        self._check_scalar("int")
        return int(self._value)

    def __complex__(self) -> complex:
        self._check_scalar("complex")
        return complex(self._value)

    def __index__(self) -> int:
        if not dtypes.is_int(self.dtype) and not dtypes.is_bool(self.dtype):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return self._value.__index__()

    def _check_scalar(self, name: str) -> None:
        if self.ndim != 0:
            raise TypeError("Only scalar arrays can be converted to Python scalars; "
                            f"got arr.ndim={self.ndim}")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Array]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        # Each row its own buffer (a NumPy scalar row becomes a 0-d array), as JAX's slices.
        return (Array(np.array(row), device=self._device) for row in self._value)

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'Array'")

    def __setitem__(self, index: Any, value: Any) -> None:
        raise core.immutable_error(self)

    def __reduce__(self) -> tuple:
        return (_rebuild, (self._value, self.weak_type))

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._value[()], spec)
        return format(self._value, spec)

    def __str__(self) -> str:
        if not self._holds_value():
            return repr(self)
        return str(self._value)

    def _holds_value(self) -> bool:
        """Whether this process holds the whole value (not so for a global array of a run of
        several processes split over other processes' devices)."""
        blocks = self._blocks
        return (blocks is None or self._buffer is not None
                or _holds_whole_value(blocks, self.shape, self._sharding))

    def __repr__(self) -> str:
        prefix = "Array("
        dtype_str = f"dtype={dtypes.dtype_name(self.dtype)}"
        if self.weak_type:
            dtype_str += ", weak_type=True"
        line_width = np.get_printoptions()["linewidth"]
        if not self._holds_value():
            return f"{prefix}shape={self.shape}, {dtype_str})"
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self._value, prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=line_width)
        last_line_len = len(body) - body.rfind("\n") + 1
        # JAX pads with spaces (no newline) when the dtype would overflow the last line.
        separator = " " * len(prefix) if last_line_len + len(dtype_str) + 2 > line_width else " "
        return f"{prefix}{body},{separator}{dtype_str})"


def pending_runs(values: Sequence[Any]) -> list[Any]:
    """The futures of the runs still computing the Arrays among `values` (a run reading
    their blocks fails with their errors: `replicas.start_replicas`)."""
    return [v._ready for v in values if isinstance(v, Array) and v._ready is not None]


def donatable_buffer(array: Array) -> np.ndarray | None:
    """The buffer of `array`, if a program it is donated to may write its result there:
    justjax allocated it (`_owner`: never a caller's NumPy array) and nothing but `array`
    references it now (no NumPy view `np.asarray` handed out, no other Array over it, no
    program still reading it). Else None: the program then works on a copy. Waits for the
    program computing `array`, if it still runs."""
    if array._buffer is None or not array._owner:
        return None
    array._wait()  # a program still writing the buffer holds it until it is done
    if _references(array) != _SOLE_REFERENCES or not array._buffer.flags.owndata:
        return None
    return array._buffer


def donatable_blocks(array: Array) -> tuple[np.ndarray, ...] | None:
    """The devices' blocks `array` holds, if programs it is donated to may write their
    results over them: blocks of fresh results, referenced by nothing but `array`. Else
    None. Waits for the run computing `array`, if it still runs."""
    blocks = array._blocks
    if blocks is None or not array._owner:
        return None
    array._wait()  # a run still writing the blocks holds them until it is done
    if any(b is None for b in blocks):
        return None
    if _block_references(blocks) != [_SOLE_BLOCK_REFERENCES] * len(blocks) or \
            not all(b.flags.owndata for b in blocks):
        return None
    return blocks


def _block_references(blocks: tuple[np.ndarray, ...]) -> list[int]:
    return [sys.getrefcount(b) if hasattr(sys, "getrefcount") else -1 for b in blocks]


def _references(array: Array) -> int:
    """How many references the buffer of `array` has, counted from here."""
    buffer = array._buffer
    return sys.getrefcount(buffer) if hasattr(sys, "getrefcount") else -1


# `_references` of an Array that alone holds its buffer (measured, not assumed: how a call
# counts its own references depends on the interpreter). An interpreter without reference
# counts gets -2: no buffer is then ever taken over, programs work on copies.
# (`adopt`: an Array made at import must not start the backend.)
_SOLE_REFERENCES = (_references(Array.adopt(np.zeros(1), shared_aval((1,), np.dtype(np.float64),
                                                                     False)))
                    if hasattr(sys, "getrefcount") else -2)


# `_block_references` of a block only its Array's tuple holds (-2 without reference counts:
# no block is ever taken over).
_SOLE_BLOCK_REFERENCES = (_block_references((np.zeros(1),))[0]
                          if hasattr(sys, "getrefcount") else -2)


def _rebuild(value: np.ndarray, weak_type: bool) -> Array:
    return Array(value, weak_type)


class Shard:
    """One piece of an array: its device, its index in the whole, and its data."""

    def __init__(self, device: Device, index: tuple[slice, ...], data: Array,
                 replica_id: int = 0) -> None:
        self.device, self.index, self.data = device, index, data
        self.replica_id = replica_id

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def _holds_whole_value(blocks: Sequence[np.ndarray | None], shape: tuple[int, ...],
                       sharding: Sharding) -> bool:
    """Whether the blocks this process holds (all but in a run of several processes) make up
    the whole value: every distinct block of the sharding is among them."""
    if all(block is not None for block in blocks):
        return True
    indices = sharding.devices_indices_map(shape)
    pieces = [tuple(s.indices(n)[:2] for s, n in zip(indices[d], shape, strict=True))
              for d in sharding._device_assignment]
    held = {piece for piece, block in zip(pieces, blocks, strict=True) if block is not None}
    return held == set(pieces)


def _assembled(blocks: Sequence[np.ndarray | None], aval: ShapedArray,
               sharding: Sharding) -> np.ndarray:
    """The whole value of the devices' `blocks` laid out as `sharding` says (read-only; the
    blocks this process holds, which `_holds_whole_value` has checked cover it)."""
    first = next(block for block in blocks if block is not None)
    dtype = first.dtype
    # A key array's base array has trailing key dimensions no sharding splits.
    shape = aval.shape + first.shape[len(aval.shape):]
    whole = np.empty(shape, dtype)
    indices = sharding.devices_indices_map(aval.shape)
    # Where devices hold the same block, the first one's is the value (later ones written
    # first), as JAX reads a replicated array.
    for device, block in reversed(list(zip(sharding._device_assignment, blocks, strict=True))):
        if block is not None:
            whole[indices[device]] = block
    whole.setflags(write=False)
    return whole


def blocks_of(value: np.ndarray, shape: tuple[int, ...], sharding: Sharding
              ) -> tuple[np.ndarray, ...]:
    """Each device's own copy of its block of `value` (of logical `shape`), in the order of
    the sharding's devices."""
    indices = sharding.devices_indices_map(shape)
    return tuple(np.array(value[indices[d]], copy=True) if is_local(d) else None
                 for d in sharding._device_assignment)


def replica_ids(indices: dict[Device, tuple[slice, ...]]) -> dict[Device, int]:
    """Each device's replica number: how many devices before it (in order) hold the same
    block."""
    seen: dict[tuple, int] = {}
    out = {}
    for device, index in indices.items():
        key = tuple((s.start, s.stop) for s in index)
        out[device] = seen.get(key, 0)
        seen[key] = out[device] + 1
    return out


def set_sharding(array: Array, sharding: Sharding) -> None:
    """Lays `array` out as `sharding` says, committed to its devices (the caller has checked
    that the sharding fits the array's shape)."""
    array._device = sharding._device_assignment[0]
    plain = isinstance(sharding, SingleDeviceSharding) and sharding.memory_kind == "device"
    array._sharding = None if plain else sharding
    array._committed = True
    typed = type_sharding(sharding, array.aval.ndim)
    if typed is not None or array.aval._sharding is not None:
        array.aval = array.aval.update(sharding=typed)


def place(x: Array, sharding: Sharding) -> Array:
    """A new Array of `x`'s value laid out as `sharding` says: over several devices, each
    holding its own block (shared with `x` when it is laid out alike); on one device, the
    buffer is shared (both are read-only)."""
    if sharding.num_devices > 1:
        if x._blocks is not None and x.sharding == sharding:
            out = Array.from_blocks(x._blocks, x.aval, sharding, x._ready)
            out._owner = False  # the blocks are `x`'s too
            return out
        return Array.from_blocks(blocks_of(x._value, x.shape, sharding), x.aval, sharding)
    data = x._data
    out = Array(data, x.weak_type) if data.ndim == x.ndim else Array.adopt(data, x.aval)
    out._owner = x._owner  # the same memory: a donation takes it once `x` lets go of it
    set_sharding(out, sharding)
    return out


def put(x: Any, target: Device | Sharding) -> Array:
    """`x` (an Array, a NumPy value or a scalar) as an Array laid out as `target` (a device
    or a sharding) says, committed to it (`jax.device_put` of one concrete leaf)."""
    if isinstance(target, Device):
        target = SingleDeviceSharding(target)
    check_fits(target, np.shape(x), "device_put args")
    return place(to_array(x), target)


# NumPy holds arrays of at most this many dimensions. A value of more (JAX computes with them)
# is stored flat, its shape its aval's, as device memory is.
NUMPY_MAX_RANK = 64


def stored_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """The shape of the NumPy buffer holding a value of `shape`: `shape` itself, or one
    dimension of all its elements above NumPy's rank limit."""
    shape = tuple(shape)
    return shape if len(shape) <= NUMPY_MAX_RANK else (math.prod(shape),)


def to_array(x: Any) -> Array:
    """`x` (an Array, a NumPy value or a Python scalar) as an Array on the default device."""
    if type(x) is Array:
        return x
    start_backend()
    aval = core.get_aval(x)
    return from_numpy(np.array(dtypes.coerce_to_array(x, aval.dtype), copy=True), aval)


def _array_aval(x: Array) -> ShapedArray:
    return x.aval


core.pytype_aval_mappings[Array] = _array_aval
# Values being traced are arrays to users too (`isinstance(tracer, jax.Array)`).
Array.register(core.Tracer)


def to_numpy(x: Any, dtype: np.dtype | None = None, elementwise: bool = False) -> np.ndarray:
    """A concrete value as a NumPy array, cast to `dtype` when given. `elementwise`: the
    caller computes element by element (and wraps its result with `from_numpy`), so a value
    of more dimensions than NumPy holds may come as it is stored, flat."""
    if type(x) is Array:
        value = x._data if elementwise else x._value
        return value if dtype is None or value.dtype == dtype else value.astype(dtype)
    return dtypes.coerce_to_array(x, dtype)


def from_numpy(value: Any, aval: ShapedArray, input_ids: Collection[int] = ()) -> Array:
    """Wraps a NumPy result as an Array of exactly `aval`'s dtype and shape.

    A result that owns its memory and is none of the program's inputs (`input_ids`: the ids
    of their buffers) is adopted without a copy; anything else (a view, an input passed
    through) is copied, so no caller can mutate the Array.
    """
    value = np.asarray(value)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    if len(aval.shape) > NUMPY_MAX_RANK:
        # Stored flat (a program's buffer of such a value is flat already).
        flat = np.array(np.broadcast_to(value.reshape(-1), (aval.size,)), copy=True)
        return Array.adopt(flat, aval)
    if value.shape != aval.shape:
        value = np.broadcast_to(value, aval.shape)
    owned = value.base is None and id(value) not in input_ids
    return Array(value, aval.weak_type, owned=owned)
