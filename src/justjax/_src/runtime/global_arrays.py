"""Arrays made from pieces (`jax.make_array_from_callback`,
`jax.make_array_from_single_device_arrays`, `jax.make_array_from_process_local_data`): the
ways a process of a multi-process run (`runtime/processes.py`) makes a global array from the
data it has. Each process gives only its own devices' blocks; the result is one Array over
every process's devices (`is_fully_addressable` false), of which this process holds its
devices' blocks.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.pytrees import tree_util
from justjax._src.pytrees.tree_errors import broadcast_prefix
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime import processes
from justjax._src.runtime.array import Array, put, set_sharding
from justjax._src.runtime.devices import is_local
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.runtime.sharding import (Index, NamedSharding, Sharding, SingleDeviceSharding,
                                          type_sharding)

__all__ = ["global_to_host_local", "host_local_to_global", "make_array_from_callback",
           "make_array_from_process_local_data", "make_array_from_single_device_arrays"]


def make_array_from_callback(shape: Sequence[int], sharding: Sharding,
                             data_callback: Callable[[Index], Any],
                             dtype: Any = None) -> Array:
    """The Array of `shape` laid out as `sharding` says whose devices (this process's) hold
    `data_callback(index)` for their block's index (a tuple of slices): called once per
    device, once in all when the sharding replicates the whole array.

    Raises:
      TypeError: `sharding` is not a sharding.
      ValueError: blocks of another shape or dtype than the sharding's (JAX's messages).
    """
    if not isinstance(sharding, Sharding):
        raise TypeError(f"sharding should be an instance of `jax.sharding`. Got {sharding} "
                        f"of type {type(sharding)}")
    shape = tuple(int(d) for d in shape)

    def get(index: Index) -> np.ndarray:
        value = data_callback(index)
        if isinstance(value, core.Tracer):
            raise errors.UnexpectedTracerError(
                "jax.make_array_from_callback cannot be called within a traced context.")
        return _host_value(value)

    indices = sharding.addressable_devices_indices_map(shape)
    if sharding.is_fully_replicated:
        whole = get((slice(None),) * len(shape)) if indices else None
        values = {device: whole for device in indices}
    else:
        values = {device: get(index) for device, index in indices.items()}
    dtype = _checked_dtype(list(values.values()), dtype, "make_array_from_callback")
    return _assembled(shape, dtype, sharding, values)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Sharding,
                                         arrays: Sequence[Any], *,
                                         dtype: Any = None) -> Array:
    """The Array of `shape` laid out as `sharding` says made of `arrays`: one Array per
    device of this process, each on its device holding that device's block.

    Raises:
      TypeError: `arrays` is not a list or tuple.
      ValueError: arrays of another shape, dtype or device, or of another count, than
        the sharding's blocks (JAX's messages).
    """
    if not isinstance(arrays, (list, tuple)):
        raise TypeError("jax.make_array_from_single_device_arrays `arrays` argument must "
                        f"be a list or tuple, but got {type(arrays)}.")
    if any(isinstance(a, core.Tracer) for a in arrays):
        raise ValueError("jax.make_array_from_single_device_arrays requires a list of "
                         f"concrete arrays as input, but got types {set(map(type, arrays))}")
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"Unsupported type for elements in `arrays`: {type(a)}")
        if len(a.sharding.device_set) > 1:
            raise ValueError("When making an array from single-device arrays the input arrays "
                             f"must have one shard each. An argument array had "
                             f"{len(a.sharding.device_set)} shard(s).")
    shape = tuple(int(d) for d in shape)
    addressable = list(sharding.addressable_devices_indices_map(shape))
    if len(arrays) != len(addressable):
        raise ValueError(
            f"Expected {len(addressable)} per-device arrays (this is how many "
            f"devices are addressable by the sharding), but got {len(arrays)}")
    given = [a.device for a in arrays]
    if len(set(given)) != len(given):
        raise ValueError("When making an array from single-device arrays, the input arrays "
                         "must be from distinct devices, but got device IDs "
                         f"{[d.id for d in given]}")
    if set(given) != set(addressable):
        missing = {d.id for d in addressable} - {d.id for d in given}
        extra = {d.id for d in given} - {d.id for d in addressable}
        raise ValueError(
            "Addressable devices and per-device arrays devices do not match. Sharding "
            f"contains devices {missing} that are not present in per-device arrays. "
            f"Per-device arrays contain devices {extra} that are not present in the "
            "sharding.")
    values = {a.device: np.asarray(a) for a in arrays}
    if dtype is None:
        dtype = values[addressable[0]].dtype if values else None
        if dtype is None:
            raise ValueError("If the Array has no addressable shards, `dtype` must be "
                             "provided via the `dtype` argument to "
                             "`jax.make_array_from_single_device_arrays`.")
    return _assembled(shape, np.dtype(dtype), sharding, values)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Any = None) -> Any:
    """The global Array (or pytree of them) of each process's `local_data`, laid out as
    `sharding` says: along a dimension the sharding splits over processes, each process
    gives the blocks its devices hold, in order; along the others, the whole dimension.
    `global_shape` (inferred when None) says which.

    Raises:
      ValueError: local data of a shape that fits neither (JAX's messages).
    """
    leaves, tree = tree_util.tree_flatten(local_data)
    shardings = [_sharding_of(s) for s in broadcast_prefix(sharding, local_data)]
    shapes = broadcast_prefix(global_shape, local_data,
                              is_leaf=lambda x: x is None or isinstance(x, tuple))
    cluster = processes.cluster()
    if cluster is None or cluster.count == 1:
        for shape, data in zip(shapes, leaves, strict=True):
            if shape is not None and tuple(shape) != np.shape(data):
                raise ValueError(
                    "When calling `make_array_from_process_local_data` on a single process, "
                    "global_shape should be None or equal to local_data.shape.Got "
                    f"global_shape={tuple(shape)} and local_data.shape={np.shape(data)}.")
        out = [put(data, s) for data, s in zip(leaves, shardings, strict=True)]
    else:
        out = [_from_process_local_data(np.asarray(data), s, shape)
               for data, s, shape in zip(leaves, shardings, shapes, strict=True)]
    return tree_util.tree_unflatten(tree, out)


def _sharding_of(given: Any) -> Sharding:
    """A sharding, or a PartitionSpec over the mesh in context (`jax.set_mesh`)."""
    if isinstance(given, PartitionSpec):
        mesh = mesh_lib.get_concrete_mesh()
        if mesh.empty:
            raise ValueError("make_array_from_process_local_data got a PartitionSpec "
                             f"{given} without a mesh in context: use jax.set_mesh(mesh) or "
                             "pass a NamedSharding")
        return NamedSharding(mesh, given)
    return given


def _from_process_local_data(local: np.ndarray, sharding: Sharding,
                             global_shape: Sequence[int] | None) -> Array:
    if global_shape is None:
        global_shape = local_to_global_shape(sharding, local.shape)
        if None in global_shape:
            raise ValueError("Unable to compute global_shape due to non-uniform sharding. "
                             "Specify global shape directly. Partially computed "
                             f"global_shape={tuple(global_shape)}.")
    global_shape = tuple(int(d) for d in global_shape)
    indices = sharding.addressable_devices_indices_map(global_shape)
    starts = [sorted({_start(index[d]) for index in indices.values()})
              for d in range(len(global_shape))]
    block = sharding.shard_shape(global_shape)
    for d, (size, whole) in enumerate(zip(local.shape, global_shape, strict=True)):
        held = len(starts[d]) * block[d]
        if size != whole and size != held:
            raise ValueError(
                "Invalid host data, each dimension should match either global or process "
                f"shape. In dimension {d}, the process data has {size} elements. Process "
                f"addresses {held} elements and global_shape={global_shape}.")
    values = {}
    for device, index in indices.items():
        local_index = tuple(
            s if size == whole else
            slice(starts[d].index(_start(s)) * block[d],
                  (starts[d].index(_start(s)) + 1) * block[d])
            for d, (s, size, whole) in enumerate(zip(index, local.shape, global_shape,
                                                     strict=True)))
        values[device] = local[local_index]
    return _assembled(global_shape, local.dtype, sharding, values)


def local_to_global_shape(sharding: Sharding, local_shape: Sequence[int]
                          ) -> tuple[int | None, ...]:
    """The global shape of which each process's data of `local_shape` is its part: along
    each dimension, its size times the number of distinct parts the processes hold (None
    where the processes hold parts of different sizes or overlapping unevenly)."""
    ndim = len(local_shape)
    counts = sharding._blocks(ndim)
    by_process: dict[int, list[set[int]]] = {}
    for device, where in sharding._device_blocks(ndim):
        held = by_process.setdefault(device.process_index, [set() for _ in range(ndim)])
        for d in range(ndim):
            held[d].add(where[d])
    out: list[int | None] = []
    for d in range(ndim):
        parts = {frozenset(held[d]) for held in by_process.values()}
        sizes = {len(p) for p in parts}
        disjoint = sum(len(p) for p in parts) == len(set().union(*parts))
        if len(sizes) != 1 or not disjoint:
            out.append(None)
            continue
        (per_process,) = sizes
        out.append(local_shape[d] * counts[d] // per_process)
    return tuple(out)


def _start(s: slice) -> int:
    return s.start or 0


def _host_value(value: Any) -> np.ndarray:
    """A callback's value as a NumPy array of its canonical dtype."""
    if isinstance(value, Array):
        return np.asarray(value)
    array = np.asarray(value)
    return array.astype(dtypes.canonicalize_dtype(array.dtype), copy=False)


def _checked_dtype(values: Sequence[np.ndarray | None], dtype: Any, name: str) -> np.dtype:
    """The dtype of the blocks (JAX's `_get_and_check_dtype`)."""
    first = next((v for v in values if v is not None), None)
    if dtype is None:
        if first is None:
            raise ValueError("If the Array has no addressable shards, `dtype` must be "
                             f"provided via the `dtype` argument to `jax.{name}`.")
        return first.dtype
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    if first is not None and first.dtype != dtype:
        raise ValueError(f"If `dtype` is provided to `jax.{name}`, it must match the dtype "
                         f"of the addressable shards. Got dtype={dtype} and shard "
                         f"dtype={first.dtype}`.")
    return dtype


def _assembled(shape: tuple[int, ...], dtype: np.dtype, sharding: Sharding,
               values: dict[Any, np.ndarray]) -> Array:
    """The Array whose local devices hold `values` (checked against the blocks' shape and
    dtype, as JAX's `_validate_shape_and_dtype_for_per_device_arrays`)."""
    aval = ShapedArray(shape, dtype)
    typed = type_sharding(sharding, len(shape))
    if typed is not None:
        aval = aval.update(sharding=typed)
    expected = tuple(sharding.shard_shape(shape))
    for value in values.values():
        if value.dtype != dtype:
            raise ValueError("Input buffers to `Array` must have matching dtypes. Got "
                             f"{value.dtype}, expected {dtype} for buffer: {value}")
        if value.shape != expected:
            raise ValueError(
                f"Expected shard shape {expected} doesn't match the single device array "
                f"shape {value.shape}. Shape of Array is "
                f"{aval.str_short(short_dtypes=False)} with sharding "
                f"{sharding}")
    if isinstance(sharding, SingleDeviceSharding) or sharding.num_devices == 1:
        (value,) = values.values()
        array = Array(np.array(value, copy=True))
        set_sharding(array, sharding)
        return array
    blocks = [np.array(values[d], order="C", copy=True) if is_local(d) else None
              for d in sharding._device_assignment]
    return Array.from_blocks(blocks, aval, sharding)


def _retiled(shape: Sequence[int], spec: PartitionSpec, from_sizes: dict[str, int],
             to_sizes: dict[str, int]) -> tuple[int, ...]:
    """`shape` cut into the blocks the mesh axes of `from_sizes` make along the dimensions
    `spec` splits, then grown by those of `to_sizes` (local to global and back)."""
    out = list(shape)
    for d, entry in enumerate(spec):
        if entry is None:
            continue
        axes = tuple(entry) if isinstance(entry, tuple) else (entry,)
        out[d] = out[d] // math.prod(from_sizes[a] for a in axes) \
            * math.prod(to_sizes[a] for a in axes)
    return tuple(out)


def host_local_to_global(value: np.ndarray, mesh: Any, spec: PartitionSpec) -> Array:
    """The global array laid out on `mesh` as `spec` says of which `value` is this
    process's part: cut over the process's devices (`mesh.local_mesh`) as `spec` cuts it,
    the processes' parts side by side along the dimensions `spec` splits over them."""
    value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
    local = mesh.local_mesh
    shape = _retiled(value.shape, spec, dict(local.shape), dict(mesh.shape))
    pieces = NamedSharding(local, spec).devices_indices_map(value.shape)
    sharding = NamedSharding(mesh, spec)
    values = {d: value[pieces[d]] for d in sharding.addressable_devices_indices_map(shape)}
    return _assembled(shape, value.dtype, sharding, values)


def global_to_host_local(x: Array, mesh: Any, spec: PartitionSpec) -> Array:
    """This process's part of the global array `x` (laid out on `mesh` as `spec` says): an
    array over the process's devices (`mesh.local_mesh`), laid out as `spec` says."""
    local = mesh.local_mesh
    shape = _retiled(x.shape, spec, dict(mesh.shape), dict(local.shape))
    blocks = {shard.device: np.asarray(shard.data) for shard in x.addressable_shards}
    return _assembled(shape, x.dtype, NamedSharding(local, spec), blocks)
