"""How the compiler sees a value split over devices: a mesh of named axes and, per dimension of
the value, the mesh axes that split it (XLA's `HloSharding` in its named form, Shardy's
`#sdy.sharding`).

A `MeshShape` is a mesh without devices' objects: axis names and sizes, and the ids of the
devices in mesh order (row-major over the axes). A `TensorSharding` names, for each dimension of
a value, the axes splitting it, the first one major: dimension d of a value of shape S is cut in
`prod(sizes of dims[d])` blocks, and the device at mesh coordinates c holds the block whose index
along d is c's coordinates on those axes read as one mixed-radix number. Axes that split no
dimension replicate the value; `partial` axes hold partial sums (a contraction or reduction
over a dimension split along them), which an all-reduce over them completes.

Both of JAX's printed forms come from here: Shardy's, which JAX 0.10.2's lowering prints
(`sdy.mesh @mesh = <["a"=2, "b"=2]>`, `#sdy.sharding<@mesh, [{"a"}, {}]>`), and XLA's, which
its compiled modules print (`{devices=[2,1,2]<=[4] last_tile_dim_replicate}`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

__all__ = ["CONSTRAINT", "MANUAL", "ROTATE", "MeshShape", "SHARDING", "TensorSharding", "is_sharded",
           "manual_mesh", "replicated"]

# The key of a sharding (a `TensorSharding`) in an entry argument's or result's attributes,
# the opcode of a sharding constraint (its `sharding` attribute), and of a manual computation
# (`in_shardings`, `out_shardings`: tuples of `TensorSharding`; `manual_axes`: names), as Shardy
# names them.
SHARDING = "sdy.sharding"
CONSTRAINT = "sdy.sharding_constraint"
MANUAL = "sdy.manual_computation"
ROTATE = "spmd.rotate"


@dataclass(frozen=True)
class MeshShape:
    """Mesh axes (name, size), major first, and the device ids in mesh order."""

    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.device_ids) != math.prod(size for _, size in self.axes):
            raise ValueError(f"a mesh of axes {self.axes} holds "
                             f"{math.prod(size for _, size in self.axes)} devices, "
                             f"not {len(self.device_ids)}")

    @classmethod
    def iota(cls, axes: Sequence[tuple[str, int]]) -> MeshShape:
        """The mesh of `axes` over devices 0, 1, ... in order."""
        axes = tuple((str(name), int(size)) for name, size in axes)
        return cls(axes, tuple(range(math.prod(size for _, size in axes))))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.axes)

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.axes)

    @property
    def device_count(self) -> int:
        return len(self.device_ids)

    def coordinates(self, position: int) -> dict[str, int]:
        """The mesh coordinates (per axis) of the `position`-th device in mesh order."""
        out = {}
        for name, size in reversed(self.axes):
            position, out[name] = divmod(position, size)
        return out

    def groups(self, axes: Sequence[str]) -> np.ndarray:
        """Mesh positions grouped by what differs along `axes`: one row per group (devices
        agreeing on every other axis), ordered by their coordinates on `axes` (the first major):
        the `replica_groups` of a collective over `axes`."""
        names = self.names
        unknown = [a for a in axes if a not in names]
        if unknown:
            raise ValueError(f"axes {unknown} are not in the mesh {names}")
        grid = np.arange(self.device_count).reshape([size for _, size in self.axes])
        others = [i for i, name in enumerate(names) if name not in axes]
        order = others + [names.index(a) for a in axes]
        width = math.prod(self.sizes[a] for a in axes)
        return grid.transpose(order).reshape(-1, width)

    def sdy_text(self, name: str = "mesh") -> str:
        """`sdy.mesh @mesh = <["a"=2, "b"=2]> {stablehlo.mesh = {axes = [...]}}`, as JAX
        0.10.2 prints it (with `device_ids` when the devices are not in order)."""
        axes = ", ".join(f'"{axis}"={size}' for axis, size in self.axes)
        ids = "" if self.device_ids == tuple(range(self.device_count)) else (
            ", device_ids=[" + ", ".join(map(str, self.device_ids)) + "]")
        described = ", ".join(f'{{name = "{axis}", size = {size} : i64}}'
                              for axis, size in self.axes)
        return (f"sdy.mesh @{name} = <[{axes}]{ids}> "
                f"{{stablehlo.mesh = {{axes = [{described}]}}}}")


@dataclass(frozen=True)
class TensorSharding:
    """Per dimension of a value, the mesh axes splitting it (major first); axes in `partial`
    hold partial sums of the value."""

    mesh: MeshShape
    dims: tuple[tuple[str, ...], ...]
    partial: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        used = [a for axes in self.dims for a in axes] + list(self.partial)
        unknown = [a for a in used if a not in self.mesh.names]
        if unknown:
            raise ValueError(f"axes {unknown} are not in the mesh {self.mesh.names}")
        if len(set(used)) != len(used):
            raise ValueError(f"a mesh axis splits a value once at most: {self.dims} "
                             f"(partial {self.partial})")

    @property
    def rank(self) -> int:
        return len(self.dims)

    def tiles(self) -> tuple[int, ...]:
        """How many blocks each dimension is cut into."""
        sizes = self.mesh.sizes
        return tuple(math.prod(sizes[a] for a in axes) for axes in self.dims)

    @property
    def replicated_axes(self) -> tuple[str, ...]:
        """The mesh axes splitting no dimension and holding no partial sums (mesh order)."""
        used = {a for axes in self.dims for a in axes} | set(self.partial)
        return tuple(a for a in self.mesh.names if a not in used)

    @property
    def is_replicated(self) -> bool:
        return not self.partial and all(not axes for axes in self.dims)

    def shard_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of each device's block of a value of `shape` (dimensions that the
        blocks do not divide are padded up, as XLA pads uneven shards)."""
        if len(shape) != self.rank:
            raise ValueError(f"a sharding of rank {self.rank} for a value of shape {tuple(shape)}")
        return tuple(-(-size // tiles) for size, tiles in zip(shape, self.tiles(), strict=True))

    def block_index(self, position: int) -> tuple[int, ...]:
        """The block (per dimension) the device at mesh position `position` holds."""
        coordinates = self.mesh.coordinates(position)
        sizes = self.mesh.sizes
        index = []
        for axes in self.dims:
            block = 0
            for axis in axes:
                block = block * sizes[axis] + coordinates[axis]
            index.append(block)
        return tuple(index)

    def with_dims(self, dims: Sequence[Sequence[str]], partial: Sequence[str] = ()
                  ) -> TensorSharding:
        """A sharding over the same mesh."""
        return TensorSharding(self.mesh, tuple(tuple(axes) for axes in dims), tuple(partial))

    # -- printing ------------------------------------------------------------------------------

    def sdy_text(self, mesh_name: str = "mesh") -> str:
        """`#sdy.sharding<@mesh, [{"a"}, {}]>`, with Shardy's `unreduced={"b"}` for partial
        sums."""
        dims = ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in self.dims)
        unreduced = ("" if not self.partial else
                     ", unreduced={" + ", ".join(f'"{a}"' for a in self.partial) + "}")
        return f"#sdy.sharding<@{mesh_name}, [{dims}]{unreduced}>"

    def hlo_text(self) -> str:
        """XLA's text: `{replicated}`, or the tile assignment `{devices=[2,1,2]<=[4]
        last_tile_dim_replicate}` (a transposed iota `<=[2,2]T(1,0)` when the blocks do not
        take the devices in order, an explicit list when the mesh's devices are not in
        order).

        Raises:
          ValueError: for partial sums, which XLA's shardings cannot say (its partitioner
            completes them where they arise).
        """
        if self.partial:
            raise ValueError(f"partial sums over {self.partial} have no XLA sharding text")
        if self.is_replicated:
            return "{replicated}"
        names = self.mesh.names
        replicated_axes = self.replicated_axes
        groups = list(self.dims) + ([replicated_axes] if replicated_axes else [])
        tile_dims = [math.prod(self.mesh.sizes[a] for a in axes) for axes in groups]
        order = [names.index(a) for axes in groups for a in axes]
        if self.mesh.device_ids != tuple(range(self.mesh.device_count)):
            grid = np.asarray(self.mesh.device_ids).reshape(
                [size for _, size in self.mesh.axes]).transpose(order).reshape(-1)
            devices = ",".join(map(str, grid))
        elif order == sorted(order):
            devices = f"<=[{self.mesh.device_count}]"
        else:
            mesh_shape = ",".join(str(size) for _, size in self.mesh.axes)
            devices = f"<=[{mesh_shape}]T({','.join(map(str, order))})"
        text = f"devices=[{','.join(map(str, tile_dims))}]{devices}"
        if replicated_axes:
            text += " last_tile_dim_replicate"
        return "{" + text + "}"


def is_sharded(module: Any) -> bool:
    """Whether `module` (an `ir.Module`) is to be partitioned: its entry's arguments or
    results have shardings, or it holds sharding constraints or manual computations."""
    main = module.main
    return (any(SHARDING in a for a in (*(main.arg_attrs or ()), *(main.result_attrs or ())))
            or any(op.opcode in (CONSTRAINT, MANUAL) for op in module.walk()))


def manual_mesh(op: Any) -> MeshShape:
    """The mesh of a manual computation (an `ir.Op` of opcode `MANUAL`)."""
    return (*op.attributes["in_shardings"], *op.attributes["out_shardings"])[0].mesh


def replicated(mesh: MeshShape, rank: int) -> TensorSharding:
    """The sharding of a value of `rank` dimensions held whole by every device."""
    return TensorSharding(mesh, ((),) * rank)
