"""Shardings: how an array's elements are laid out over devices (`jax.sharding`).

A `Sharding` cuts every dimension into equal blocks and names the block each device holds:
`_blocks(ndim)` gives the number of blocks per dimension and `_device_blocks(ndim)` each
device's block coordinates, and everything else (`shard_shape`, `devices_indices_map`,
`is_equivalent_to`, an Array's shards) is computed from them. `SingleDeviceSharding` holds the whole array on one
device; `NamedSharding(mesh, spec)` splits dimension `i` over the mesh axes `spec[i]` (the
first major) and replicates it over the other axes.

Reprs, equality and errors are JAX 0.10.2's: `SingleDeviceSharding(device=CpuDevice(id=0),
memory_kind=device)`, `NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), spec=P('x',),
memory_kind=device)`; two NamedShardings are equal when their meshes, specs and memory kinds
are.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from justjax._src.core.avals import ShapedArray
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime.devices import Device, is_local
from justjax._src.runtime.mesh import AbstractMesh, AxisType, Mesh, empty_abstract_mesh
from justjax._src.runtime.partition_spec import UNCONSTRAINED, P, PartitionSpec

__all__ = ["DuplicateSpecError", "IndivisibleError", "NamedSharding", "Sharding",
           "SingleDeviceSharding", "make_single_device_sharding"]

Index = tuple[slice, ...]
# Each device's block coordinates, in device order.
DeviceBlocks = tuple[tuple[Device, tuple[int, ...]], ...]

# The memory kinds a CPU device addresses (JAX's list); "device" is the default.
MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


class IndivisibleError(ValueError):
    """A dimension is not divisible by the number of blocks a sharding cuts it into."""


class DuplicateSpecError(Exception):
    """A PartitionSpec names one mesh axis for two dimensions."""

    def __init__(self, message: str, mesh: Any, pspec: PartitionSpec) -> None:
        super().__init__(message)
        self.message, self.mesh, self.pspec = message, mesh, pspec

    def __str__(self) -> str:
        return self.message


def _check_memory_kind(kind: str | None) -> str:
    if kind is None:
        return "device"
    if kind not in MEMORY_KINDS:
        raise ValueError("Could not find memory addressable by device cpu. Device cpu can "
                         f"address the following memory kinds: {', '.join(MEMORY_KINDS)}. "
                         f"Got memory kind: {kind}")
    return kind


class Sharding:
    """How an array is laid out over devices (the base of every sharding)."""

    # -- what each kind of sharding defines -------------------------------------------------
    @property
    def device_set(self) -> set[Device]:
        """The devices holding a part of the array."""
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process drives every device of the sharding."""
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def num_devices(self) -> int:
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def memory_kind(self) -> str | None:
        raise NotImplementedError("Subclasses should implement this method.")

    def with_memory_kind(self, kind: str) -> Sharding:
        """The same layout in memory of another kind."""
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        raise NotImplementedError("Subclasses should implement this method.")

    def _blocks(self, ndim: int) -> tuple[int, ...]:
        """The number of blocks each dimension of a rank-`ndim` array is cut into."""
        raise NotImplementedError("Subclasses should implement this method.")

    def _device_blocks(self, ndim: int) -> DeviceBlocks:
        """Each device and the coordinates of the block it holds."""
        raise NotImplementedError("Subclasses should implement this method.")

    # -- computed from those ----------------------------------------------------------------
    @property
    def _is_concrete(self) -> bool:
        return True

    @property
    def addressable_devices(self) -> set[Device]:
        """The devices of the sharding that this process drives."""
        return {d for d in self.device_set if is_local(d)}

    @property
    def has_addressable_devices(self) -> bool:
        return bool(self.addressable_devices)

    @property
    def _addressable_device_assignment(self) -> tuple[Device, ...]:
        return tuple(d for d in self._device_assignment if d in self.addressable_devices)

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of each device's block of an array of `global_shape`.

        Raises:
          IndivisibleError: a dimension is not divisible by its number of blocks.
        """
        global_shape = tuple(global_shape)
        blocks = self._blocks(len(global_shape))
        out = []
        for dim, (size, count) in enumerate(zip(global_shape, blocks, strict=True)):
            if size % count:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {dim} is partitioned {count} "
                    f"times, but the dimension size is {size} (full shape: {global_shape}, "
                    f"per-dimension tiling factors: {list(blocks)} should evenly divide the "
                    "shape)")
            out.append(size // count)
        return tuple(out)

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> Mapping[Device, Index]:
        """Each device's block of an array of `global_shape`, as slices of the whole."""
        block_shape = self.shard_shape(global_shape)
        blocks = self._blocks(len(block_shape))
        return {device: tuple(slice(None) if count == 1 else slice(i * size, (i + 1) * size)
                              for i, size, count in zip(where, block_shape, blocks, strict=True))
                for device, where in self._device_blocks(len(block_shape))}

    def addressable_devices_indices_map(self, global_shape: tuple[int, ...]
                                        ) -> Mapping[Device, Index]:
        """`devices_indices_map` restricted to the devices this process drives."""
        mine = self.addressable_devices
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if d in mine}

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether the two shardings lay out an array of rank `ndim` the same way over the
        same devices (in the same order) and memory kind."""
        return (self._device_assignment == other._device_assignment
                and self.memory_kind == other.memory_kind
                and self._blocks(ndim) == other._blocks(ndim)
                and self._device_blocks(ndim) == other._device_blocks(ndim))


class SingleDeviceSharding(Sharding):
    """The whole array on one device.

    Args:
      device: the device.
      memory_kind: "device" (default), "pinned_host" or "unpinned_host".
    """

    def __init__(self, device: Device, *, memory_kind: str | None = None) -> None:
        self._device = device
        self._memory_kind = _check_memory_kind(memory_kind)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SingleDeviceSharding) and self._device == other._device
                and self._memory_kind == other._memory_kind)

    def __hash__(self) -> int:
        return hash((self._device, self._memory_kind))

    def __reduce__(self) -> tuple:
        return (_single_device, (self._device, self._memory_kind))

    @property
    def device_set(self) -> set[Device]:
        return {self._device}

    @property
    def num_devices(self) -> int:
        return 1

    @property
    def memory_kind(self) -> str:
        return self._memory_kind

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        return SingleDeviceSharding(self._device, memory_kind=kind)

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return is_local(self._device)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    def _blocks(self, ndim: int) -> tuple[int, ...]:
        return (1,) * ndim

    def _device_blocks(self, ndim: int) -> DeviceBlocks:
        return ((self._device, (0,) * ndim),)

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
        return None


def _single_device(device: Device, memory_kind: str) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def make_single_device_sharding(device: Device, *, memory_kind: str | None = None
                                ) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def _entry_axes(entry: Any) -> tuple:
    """The mesh axes one spec entry splits its dimension over."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


class NamedSharding(Sharding):
    """An array split over a mesh's named axes: dimension `i` over the axes `spec[i]`.

    Args:
      mesh: a `Mesh` (or an `AbstractMesh`, resolved against the mesh in context where an
        array is placed).
      spec: a `PartitionSpec`.
      memory_kind: "device" (default), "pinned_host" or "unpinned_host".
    """

    def __init__(self, mesh: Mesh | AbstractMesh, spec: PartitionSpec, *,
                 memory_kind: str | None = None) -> None:
        self.mesh = mesh
        self.spec = spec
        # JAX settles the memory kind of a sharding over devices, not of an abstract one.
        self._memory_kind = (memory_kind if isinstance(mesh, AbstractMesh)
                             else _check_memory_kind(memory_kind))
        _check_spec(mesh, spec)

    def __repr__(self) -> str:
        memory = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec}{memory})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NamedSharding) and self.spec == other.spec
                and self._memory_kind == other._memory_kind and self.mesh == other.mesh)

    def __hash__(self) -> int:
        return hash((self.mesh, self._memory_kind, self.spec))

    def __reduce__(self) -> tuple:
        return (_named, (self.mesh, self.spec, self._memory_kind))

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    def with_memory_kind(self, kind: str) -> NamedSharding:
        return self.update(memory_kind=kind)

    def update(self, **kwargs: Any) -> NamedSharding:
        """A copy with `mesh`, `spec` or `memory_kind` replaced."""
        spec = kwargs.pop("spec", self.spec)
        if not isinstance(spec, PartitionSpec):
            spec = P(*spec)
        return NamedSharding(kwargs.pop("mesh", self.mesh), spec,
                             memory_kind=kwargs.pop("memory_kind", self._memory_kind))

    def _concrete_mesh(self, what: str) -> Mesh:
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError(f"{what} is not implemented for `jax.sharding.AbstractMesh`.")
        return self.mesh

    @property
    def _is_concrete(self) -> bool:
        return not isinstance(self.mesh, AbstractMesh)

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def device_set(self) -> set[Device]:
        return self._concrete_mesh("device_set")._flat_devices_set

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self._concrete_mesh("_device_assignment")._flat_devices_tuple

    @property
    def is_fully_addressable(self) -> bool:
        mesh = self._concrete_mesh("is_fully_addressable")
        return not mesh.is_multi_process

    @property
    def addressable_devices(self) -> set[Device]:
        return self._concrete_mesh("addressable_devices")._local_devices_set

    @property
    def is_fully_replicated(self) -> bool:
        if self.mesh.size == 1:
            return True
        if self.spec.unreduced:
            return False
        sizes = self.mesh.shape
        return all(sizes[a] == 1 for entry in self.spec.partitions for a in _entry_axes(entry))

    @property
    def replicated_axes(self) -> frozenset:
        """The mesh axes the array is replicated over."""
        used = {a for entry in self.spec.partitions for a in _entry_axes(entry)}
        return frozenset(self.mesh.axis_names) - (used | self.spec.unreduced
                                                  | self.spec.reduced)

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
        """Raises ValueError if the spec has more entries than `aval_shape` dimensions."""
        if len(aval_shape) < len(self.spec):
            extra = " For scalars the PartitionSpec should be P()" if not aval_shape else ""
            raise ValueError(f"Sharding {self} is only valid for values of rank at least "
                             f"{len(self.spec)}, but was applied to a value of rank "
                             f"{len(aval_shape)}.{extra}")

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        self.check_compatible_aval(tuple(global_shape))
        return super().shard_shape(global_shape)

    def _entries(self, ndim: int) -> list:
        entries = list(self.spec.partitions[:ndim])
        return entries + [None] * (ndim - len(entries))

    def _blocks(self, ndim: int) -> tuple[int, ...]:
        sizes = self.mesh.shape
        return tuple(math.prod(sizes[a] for a in _entry_axes(e)) for e in self._entries(ndim))

    def _device_blocks(self, ndim: int) -> DeviceBlocks:
        sizes = self.mesh.shape
        position = {name: i for i, name in enumerate(self.mesh.axis_names)}
        axes = [_entry_axes(e) for e in self._entries(ndim)]
        out = []
        for flat, device in enumerate(self._device_assignment):
            where = _unravel(flat, self.mesh.axis_sizes)
            out.append((device, tuple(_block_of(where, a, sizes, position) for a in axes)))
        return tuple(out)


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The mesh coordinates of the `flat`-th device (row-major)."""
    out = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        out.append(rest)
    return tuple(reversed(out))


def _block_of(where: tuple[int, ...], axes: tuple, sizes: dict, position: dict) -> int:
    """The block of a dimension split over `axes` (the first major) that the device at
    mesh coordinates `where` holds."""
    index = 0
    for axis in axes:
        index = index * sizes[axis] + where[position[axis]]
    return index


def _named(mesh: Any, spec: PartitionSpec, memory_kind: str | None) -> NamedSharding:
    return NamedSharding(mesh, spec, memory_kind=memory_kind)


def _check_spec(mesh: Mesh | AbstractMesh, spec: PartitionSpec) -> None:
    """JAX's checks of a NamedSharding's spec against its mesh."""
    seen: dict[Any, int] = {}
    for entry in spec.partitions:
        for axis in _entry_axes(entry):
            seen[axis] = seen.get(axis, 0) + 1
    duplicates = sorted(f"`{a}`" for a, count in seen.items() if count > 1)
    if duplicates:
        raise DuplicateSpecError(
            "A single NamedSharding spec specification can map every mesh axis to at most "
            f"one positional dimension, but {spec} has duplicate entries for "
            f"{', '.join(duplicates)}", mesh, spec)
    for axis in seen:
        if axis not in mesh.axis_names:
            raise ValueError(f"Resource axis: {axis} of {spec} is not found in mesh: "
                             f"{tuple(mesh.shape.keys())}.")
    if AxisType.Auto not in mesh.axis_types and UNCONSTRAINED in spec.partitions:
        raise ValueError(f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh axis_types "
                         f"are `Auto`. Got mesh axis_types: {mesh.axis_types}")
    for name, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
        for axis in axes:
            if axis not in mesh.axis_names:
                raise ValueError(f"{name} axes {axis} is not found in "
                                 f"mesh.axis_names={mesh.axis_names}. Got pspec={spec}")
            if mesh._name_to_type[axis] in (AxisType.Auto, AxisType.Manual):
                raise ValueError(f"{name} axes can only refer to mesh axes that is of type "
                                 f"`Explicit`. Got {name.lower()} axes: {axes} and mesh: "
                                 f"{mesh}")


# ---------------------------------------------------------------------------------------------
# The sharding in an abstract value's type (JAX's sharding in types, over Explicit axes).

def _aval_sharding(aval: ShapedArray) -> NamedSharding:
    """`jax.typeof(x).sharding`: the type's sharding over Explicit axes, or for a type split
    over none `NamedSharding(<the abstract mesh in context>, P(None, ...))`, one None per
    dimension."""
    if aval._sharding is not None:
        return aval._sharding
    return NamedSharding(mesh_lib.get_abstract_mesh(), P(*[None] * aval.ndim))


def type_sharding(sharding: Any, ndim: int) -> NamedSharding | None:
    """The part of a value's layout its type records: a NamedSharding over the abstract mesh
    whose spec (one entry per dimension) keeps only the Explicit axes; None when it names
    none (other shardings, Auto and Manual axes are the compiler's business)."""
    if type(sharding) is not NamedSharding:
        return None
    mesh = sharding.mesh.abstract_mesh
    if not mesh._any_axis_explicit:
        return None
    types = mesh._name_to_type
    entries = []
    for entry in sharding.spec._normalized_spec_for_aval(ndim):
        entries.append(tuple(n for n in _entry_axes(entry) if types[n] == AxisType.Explicit))
    unreduced = sharding.spec.unreduced
    spec = P(*entries, unreduced=unreduced)
    if all(e is None for e in spec) and not unreduced:
        return None
    return NamedSharding(mesh, spec)


ShapedArray.sharding = property(_aval_sharding)


def without_axes(sharding: NamedSharding | None, axes: Any) -> NamedSharding | None:
    """A type's sharding no longer split over `axes` (made Manual inside shard_map); None
    when nothing is left split."""
    if sharding is None:
        return None
    entries = [tuple(n for n in _entry_axes(e) if n not in axes) for e in sharding.spec]
    spec = P(*entries, unreduced=sharding.spec.unreduced - frozenset(axes))
    if all(e is None for e in spec) and not spec.unreduced:
        return None
    return NamedSharding(sharding.mesh, spec)


def check_fits(sharding: Sharding, shape: tuple[int, ...], what: str,
               uneven: bool = False) -> None:
    """Raises JAX's errors when `sharding` cannot lay out an array of `shape`.

    Args:
      sharding: the sharding.
      shape: the array's shape.
      what: the arguments named in the message ("device_put args").
      uneven: allow dimensions not divisible by their number of blocks (inside programs).
    Raises:
      ValueError: the spec has more entries than the array dimensions.
      IndivisibleError: a dimension does not divide evenly (unless `uneven`).
    """
    if isinstance(sharding, NamedSharding):
        try:
            sharding.check_compatible_aval(tuple(shape))
        except ValueError as e:
            raise ValueError(f"One of {what} is incompatible with its sharding annotation "
                             f"{sharding}: {e}") from None
    if not uneven and sharding._is_concrete:
        sharding.shard_shape(tuple(shape))


def device_put_target(value: Any) -> Device | Sharding | None:
    """What `device_put` moves a leaf to, from what it was given for it."""
    if value is None or isinstance(value, Device):
        return value
    if isinstance(value, PartitionSpec):
        mesh = mesh_lib.get_concrete_mesh()
        if mesh.empty:
            raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec is "
                             "passed to device_put")
        return NamedSharding(mesh, value)
    if isinstance(value, Sharding):
        if not value._is_concrete:
            # JAX's error: it first asks whether this process drives the devices.
            raise ValueError("is_fully_addressable is not implemented for "
                             "`jax.sharding.AbstractMesh`.")
        return value
    raise ValueError("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, "
                     "`jax.Device`, `Format`, `jax.memory.Space` or a pytree of these values. "
                     f"Received invalid value: {value}")
