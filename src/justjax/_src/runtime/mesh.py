"""Meshes: devices laid out on named axes (`jax.sharding.Mesh`), their device-free form
(`AbstractMesh`), the axis types, and the mesh in context (`jax.set_mesh`).

As in JAX 0.10.2: two meshes are equal when they hold the same devices in the same layout
with the same axis names and types; `str(mesh)` is `Mesh('a': 2, 'b': 2, axis_types=(Auto,
Auto))` and `repr(mesh)` is `Mesh(axis_sizes=(2, 2), axis_names=('a', 'b'), axis_types=(Auto,
Auto))`. `jax.make_mesh` lays the devices out in order and makes `Explicit` axes by default.
"""
from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import math
import warnings
from typing import Any, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.core import core
from justjax._src.runtime import devices as devices_lib

__all__ = ["AbstractDevice", "AbstractMesh", "AxisType", "Mesh", "empty_abstract_mesh",
           "empty_concrete_mesh", "get_abstract_mesh", "get_concrete_mesh", "get_mesh",
           "make_mesh", "set_mesh", "use_abstract_mesh"]


class AxisType(enum.Enum):
    """How a mesh axis is used: `Auto` (the compiler chooses the shardings along it),
    `Explicit` (shardings are part of array types) or `Manual` (inside shard_map)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


def _normalize_axis_types(axis_names: tuple, axis_types: Any, name: str) -> tuple:
    if axis_types is None:
        axis_types = (AxisType.Auto,) * len(axis_names)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if not all(isinstance(a, AxisType) for a in axis_types):
        raise TypeError(f"axis_types passed to {name} must be of type "
                        f"`jax.sharding.AxisType`. Got {axis_types} of type "
                        f"{tuple(type(a) for a in axis_types)}")
    if len(axis_names) != len(axis_types):
        raise ValueError("Number of axis names should match the number of axis_types. Got "
                         f"axis_names={axis_names} and axis_types={axis_types}")
    return axis_types


class _BaseMesh:
    """What meshes and abstract meshes share: queries on the axis types."""

    axis_names: tuple
    axis_types: tuple

    def _all(self, kind: AxisType) -> bool:
        return bool(self.axis_types) and all(t == kind for t in self.axis_types)

    def _names_of(self, kind: AxisType) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True)
                     if t == kind)

    @property
    def are_all_axes_auto(self) -> bool:
        return self._all(AxisType.Auto)

    @property
    def are_all_axes_explicit(self) -> bool:
        return self._all(AxisType.Explicit)

    @property
    def are_all_axes_manual(self) -> bool:
        return self._all(AxisType.Manual)

    @property
    def auto_axes(self) -> tuple:
        return self._names_of(AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple:
        return self._names_of(AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple:
        return self._names_of(AxisType.Manual)

    @property
    def _any_axis_explicit(self) -> bool:
        return AxisType.Explicit in self.axis_types

    @property
    def _any_axis_manual(self) -> bool:
        return AxisType.Manual in self.axis_types

    @property
    def _name_to_type(self) -> dict:
        return dict(zip(self.axis_names, self.axis_types, strict=True))

    @property
    def shape(self) -> collections.OrderedDict:
        """Axis name -> size, in axis order."""
        return collections.OrderedDict(self.shape_tuple)

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def empty(self) -> bool:
        return self.size == 0

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")

    def _set(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def _set_key(self, key: tuple) -> None:
        """What equality compares; its hash is kept (a mesh in context keys every jit
        call)."""
        self._set(_key=key, _hash=hash(key))

    def __hash__(self) -> int:
        return self._hash


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
    """What an abstract mesh knows of its devices."""

    device_kind: str
    num_cores: int | None
    platform: str

    def _repr(self) -> str:
        return (f"device_kind={self.device_kind}, num_cores={self.num_cores}, "
                f"platform={self.platform}")

    def __repr__(self) -> str:
        return f"AbstractDevice({self._repr()})"


class Mesh(_BaseMesh):
    """Devices laid out on named axes (`jax.sharding.Mesh`).

    Args:
      devices: an array (or nested sequence) of devices; its rank is the number of axes.
      axis_names: one name per axis (a single string names a one-axis mesh).
      axis_types: one `AxisType` per axis (default all `Auto`).
    """

    devices: np.ndarray
    axis_names: tuple
    axis_types: tuple
    size: int

    def __init__(self, devices: Any, axis_names: Any, axis_types: Any = None) -> None:
        if not isinstance(devices, np.ndarray):
            devices = np.array(devices)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if any(name is None for name in axis_names):
            raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
        if devices.ndim != len(axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length "
                "of its second argument (`axis_names`), but got "
                f"devices.ndim == {devices.ndim} and len(axis_names) == {len(axis_names)}.")
        axis_types = _normalize_axis_types(axis_names, axis_types, "Mesh")
        flat = tuple(devices.flat)
        devices = np.array(flat, dtype=object).reshape(devices.shape)
        devices.flags.writeable = False
        empty = not axis_names and flat[0] is None
        self._set(devices=devices, axis_names=axis_names, axis_types=axis_types,
                  size=0 if empty else math.prod(devices.shape),
                  _flat_devices_tuple=flat)
        self._set_key((flat, devices.shape, axis_names, axis_types))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return self.devices.shape

    @property
    def is_scalar(self) -> bool:
        return self.size == 1 and not self.axis_names

    @property
    def device_ids(self) -> np.ndarray:
        """The ids of the devices, in the mesh's layout."""
        assert not self.empty
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def _flat_devices_set(self) -> set:
        return set(self._flat_devices_tuple)

    @property
    def local_devices(self) -> list:
        """The mesh's devices this process drives."""
        me = devices_lib.this_process()
        return [d for d in self._flat_devices_tuple if d.process_index == me]

    @property
    def _local_devices_set(self) -> set:
        return set(self.local_devices)

    @property
    def is_multi_process(self) -> bool:
        return self.devices.size != len(self.local_devices)

    @property
    def local_mesh(self) -> Mesh:
        """The part of the mesh this process drives: the smallest block of the device grid
        holding its devices, which must hold no other process's (a mesh of Auto axes)."""
        if self.empty:
            return self
        me = devices_lib.this_process()
        mine = np.vectorize(lambda d: d.process_index == me, otypes=[bool])(self.devices)
        hull = []
        for axis in range(mine.ndim):
            others = tuple(a for a in range(mine.ndim) if a != axis)
            present = np.flatnonzero(mine.any(axis=others))
            hull.append(slice(int(present.min()), int(present.max()) + 1))
        if not mine[tuple(hull)].all():
            raise ValueError("When passing host local inputs to pjit, devices connected to a "
                             "single host must form a contiguous subcube of the global "
                             "device mesh")
        local = Mesh(self.devices[tuple(hull)], self.axis_names)
        return self if local == self else local

    @functools.cached_property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh without its devices: axis sizes, names and types."""
        if not self.axis_names:
            return empty_abstract_mesh
        first = self._flat_devices_tuple[0]
        device = AbstractDevice(first.device_kind, None, first.platform)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                            abstract_device=device)

    def update(self, devices: Any = None, axis_names: Any = None,
               axis_types: Any = None) -> Mesh:
        """A mesh with the given fields replaced."""
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self._key == other._key

    __hash__ = _BaseMesh.__hash__

    def __reduce__(self) -> tuple:
        return (Mesh, (self.devices, self.axis_names, self.axis_types))

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        sizes = ", ".join(f"'{k}': {v}" for k, v in self.shape.items())
        return f"Mesh({sizes}, axis_types={self.axis_types})"

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
                f"axis_types={self.axis_types})")

    def __enter__(self) -> Mesh:
        """The deprecated `with mesh:`: a bare PartitionSpec is read against this mesh."""
        warnings.warn("`with mesh:` context manager has been deprecated. Please use `with "
                      "jax.set_mesh(mesh):` instead.", category=DeprecationWarning,
                      stacklevel=2)
        _resource_stack.append(config.read("justjax_resource_mesh"))
        config.update("justjax_resource_mesh", self)
        return self

    def __exit__(self, *exc: Any) -> bool:
        config.update("justjax_resource_mesh", _resource_stack.pop())
        return False


# The meshes the nested `with mesh:` blocks replaced.
_resource_stack: list[Mesh | None] = []


class AbstractMesh(_BaseMesh):
    """A mesh's axis sizes, names and types, without devices.

    Args:
      axis_sizes: the size of each axis.
      axis_names: one name per axis.
      axis_types: one `AxisType` per axis (default all `Auto`).
      abstract_device: the kind of device (`AbstractDevice`), if known.
    """

    def __init__(self, axis_sizes: tuple[int, ...], axis_names: Any, axis_types: Any = None,
                 *, abstract_device: AbstractDevice | None = None) -> None:
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        axis_sizes = tuple(axis_sizes)
        axis_types = _normalize_axis_types(axis_names, axis_types, "AbstractMesh")
        self._set(axis_sizes=axis_sizes, axis_names=axis_names, axis_types=axis_types,
                  abstract_device=abstract_device,
                  size=math.prod(axis_sizes) if axis_sizes else 0)
        self._set_key((axis_sizes, axis_names, axis_types, abstract_device))

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def update(self, axis_sizes: Any = None, axis_names: Any = None, axis_types: Any = None,
               **kwargs: Any) -> AbstractMesh:
        """An abstract mesh with the given fields replaced."""
        kwargs.setdefault("abstract_device", self.abstract_device)
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types, **kwargs)

    def update_axis_types(self, name_to_type: dict) -> AbstractMesh:
        """The mesh with the named axes given new types."""
        return self.update(axis_types=tuple(name_to_type.get(n, t) for n, t in zip(
            self.axis_names, self.axis_types, strict=True)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and self._key == other._key

    __hash__ = _BaseMesh.__hash__

    def __reduce__(self) -> tuple:
        return (_rebuild_abstract, self._key)

    def __repr__(self) -> str:
        sizes = ", ".join(f"'{n}': {v}" for n, v in self.shape_tuple) or "()"
        device = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
        return f"AbstractMesh({sizes}, axis_types={self.axis_types}{device})"

    def _no(self, name: str) -> Any:
        raise ValueError(f"AbstractMesh does not implement {name}")

    devices = property(lambda self: self._no("devices"))
    device_ids = property(lambda self: self._no("device_ids"))
    is_multi_process = property(lambda self: self._no("is_multi_process"))
    local_devices = property(lambda self: self._no("local_devices"))
    local_mesh = property(lambda self: self._no("local_mesh"))

    def __enter__(self) -> Any:
        return self._no("__enter__")

    def __exit__(self, *exc: Any) -> Any:
        return self._no("__exit__")


def _rebuild_abstract(axis_sizes: tuple, axis_names: tuple, axis_types: tuple,
                      abstract_device: AbstractDevice | None) -> AbstractMesh:
    return AbstractMesh(axis_sizes, axis_names, axis_types, abstract_device=abstract_device)


empty_abstract_mesh = AbstractMesh((), ())
empty_concrete_mesh = Mesh(np.empty((), dtype=object), ())


# ---------------------------------------------------------------------------------------------
# The mesh in context.

def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context (`jax.set_mesh`, `use_abstract_mesh`), else the empty
    one."""
    mesh = config.read("justjax_abstract_mesh")
    return empty_abstract_mesh if mesh is None else mesh


def get_concrete_mesh() -> Mesh:
    """The mesh set by `jax.set_mesh`, else the empty mesh."""
    mesh = config.read("justjax_concrete_mesh")
    return empty_concrete_mesh if mesh is None else mesh


def get_resource_mesh() -> Mesh:
    """The mesh of the innermost (deprecated) `with mesh:`, else the empty mesh."""
    mesh = config.read("justjax_resource_mesh")
    return empty_concrete_mesh if mesh is None else mesh


def _tracing() -> bool:
    return core.trace_state.trace is not core.eval_trace


def get_mesh() -> Mesh:
    """The mesh set by `jax.set_mesh` (`jax.sharding.get_mesh`); outside jit only."""
    if _tracing():
        raise ValueError("`get_mesh` can only be used outside of `jax.jit`. Maybe you want "
                         "`jax.sharding.get_abstract_mesh()`?")
    return get_concrete_mesh()


class set_mesh:
    """Sets the mesh in context (`jax.set_mesh`): called, it sets it until changed; as a
    context manager, for the `with` block. A bare PartitionSpec given to sharding APIs is
    read against it. Outside jit only.

    Args:
      mesh: a `Mesh`, or None for no mesh.
    """

    __slots__ = ("prev_abstract_mesh", "prev_mesh")

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        if _tracing():
            raise ValueError("`set_mesh` can only be used outside of `jax.jit`.")
        if mesh is not None and mesh._any_axis_manual:
            raise ValueError(f"mesh {mesh} contains manual axes which is not allowed when "
                             "using `jax.set_mesh`. Please use `jax.shard_map` to enter into "
                             "`Manual` mode instead.")
        self.prev_abstract_mesh = config.read("justjax_abstract_mesh")
        self.prev_mesh = config.read("justjax_concrete_mesh")
        config.update("justjax_abstract_mesh", None if mesh is None else mesh.abstract_mesh)
        config.update("justjax_concrete_mesh", mesh)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        config.update("justjax_abstract_mesh", self.prev_abstract_mesh)
        config.update("justjax_concrete_mesh", self.prev_mesh)


class use_abstract_mesh:
    """Sets the abstract mesh in context for a `with` block
    (`jax.sharding.use_abstract_mesh`).

    Args:
      mesh: an `AbstractMesh` of the same size as the one in context, if any.
    """

    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: AbstractMesh) -> None:
        if not isinstance(mesh, AbstractMesh):
            raise ValueError("Expected mesh of type `jax.sharding.AbstractMesh`. Got type: "
                             f"{type(mesh)}")
        self.mesh = mesh

    def __enter__(self) -> None:
        self.prev = config.read("justjax_abstract_mesh")
        if (self.prev is not None and not self.prev.empty and not self.mesh.empty
                and self.prev.size != self.mesh.size):
            raise ValueError(
                "use_abstract_mesh cannot change the size of the mesh. Got new mesh: "
                f"{self.mesh} with size={self.mesh.size} and prev mesh: {self.prev} with "
                f"size={self.prev.size}")
        config.update("justjax_abstract_mesh", self.mesh)

    def __exit__(self, *exc: Any) -> None:
        config.update("justjax_abstract_mesh", self.prev)


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str],
              axis_types: tuple[AxisType, ...] | None = None, *,
              devices: Sequence[devices_lib.Device] | None = None) -> Mesh:
    """A mesh of the given shape over the first devices, in order (`jax.make_mesh`).

    Args:
      axis_shapes: the size of each axis.
      axis_names: the name of each axis.
      axis_types: one `AxisType` per axis; `Explicit` for all by default.
      devices: the devices to use (default `jax.devices()`); the first
        `prod(axis_shapes)` are taken.
    Returns:
      The `Mesh`.
    """
    if devices is None:
        devices = devices_lib.devices()
    try:
        shape = tuple(int(s) for s in axis_shapes)
    except (TypeError, ValueError) as e:
        if not hasattr(axis_shapes, "__iter__"):
            raise
        raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence of ints. "
                         f"Got {axis_shapes}") from e
    size = math.prod(shape)
    if size > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                         f"mesh_shape {shape}")
    layout = np.array(list(devices)[:size], dtype=object).reshape(shape)
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(shape)
    return Mesh(layout, axis_names, axis_types=axis_types)
