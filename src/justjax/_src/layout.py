"""Memory layouts of arrays (`jax.experimental.layout`: `Layout`, `Format`).

justjax keeps every array in row-major order, with no tiling: an array's layout is
`Layout(major_to_minor=(0, 1, ..., ndim - 1), tiling=())`. The classes describe layouts as
JAX's do (libraries pass them around and test for them); asking for another layout is not
supported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class AutoLayout:
    """`Layout.AUTO`: let the compiler choose the layout."""

    _instance: AutoLayout | None = None

    def __new__(cls) -> AutoLayout:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "AUTO"


@dataclass(frozen=True)
class Layout:
    """Where an array's elements lie in memory: the dimensions from major to minor, the
    tiling, and the bits of a sub-byte element."""

    major_to_minor: tuple[int, ...]
    tiling: tuple[tuple[int, ...], ...] | None = None
    sub_byte_element_size_in_bits: int = 0

    AUTO = AutoLayout()

    def __post_init__(self) -> None:
        order = tuple(int(d) for d in self.major_to_minor)
        if sorted(order) != list(range(len(order))):
            raise ValueError(f"major_to_minor must be a permutation of the dimensions, "
                             f"got {self.major_to_minor}")
        object.__setattr__(self, "major_to_minor", order)
        if self.tiling is not None:
            object.__setattr__(self, "tiling", tuple(tuple(t) for t in self.tiling))


def row_major(ndim: int) -> Layout:
    """The layout of every justjax array of rank `ndim`."""
    return Layout(tuple(range(ndim)), tiling=())


class Format:
    """An array's layout together with its sharding."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout: Layout | AutoLayout | None = None, sharding: Any = None) -> None:
        from justjax._src.runtime.sharding import Sharding
        if isinstance(layout, Layout) and not isinstance(sharding, Sharding):
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. Please "
                "pass a `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` "
                f"to the sharding argument. Got sharding {sharding}")
        self.layout = layout
        self.sharding = sharding

    def __repr__(self) -> str:
        return f"Format(layout={self.layout!r}, sharding={self.sharding!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Format) and self.layout == other.layout
                and self.sharding == other.sharding)

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))
