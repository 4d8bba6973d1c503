"""`PartitionSpec` (`jax.P`): how each dimension of an array is split over mesh axes.

As in JAX 0.10.2 it is not a tuple (so pytree utilities keep it whole as a leaf) but behaves
like one: indexing, iteration, `len`, `+` with tuples. Equality and hashing are by the
canonical partitions and the `unreduced` / `reduced` axis sets; `P('x')` and `P('x', None)`
differ.
"""
from __future__ import annotations

from typing import Any, Iterator

__all__ = ["P", "PartitionSpec", "UNCONSTRAINED", "canonicalize_partition"]


class _Unconstrained:
    """The sentinel of a dimension whose sharding the compiler may choose."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self) -> tuple:
        return (_unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _unconstrained() -> _Unconstrained:
    return UNCONSTRAINED


def canonicalize_partition(entry: Any) -> Any:
    """One entry as JAX keeps it: a list becomes a tuple, an empty tuple None and a
    one-name tuple that name (`('x',)` is `'x'`)."""
    if isinstance(entry, list):
        entry = tuple(entry)
    if isinstance(entry, tuple):
        if not entry:
            return None
        if len(entry) == 1:
            return entry[0]
    return entry


def _axis_set(value: Any, name: str) -> frozenset:
    if isinstance(value, frozenset):
        return value
    if not isinstance(value, set):
        raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or "
                        f"`set`. Got type {value}")
    return frozenset(value)


def _check(partitions: tuple, unreduced: frozenset, reduced: frozenset) -> None:
    for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
        if None in axes:
            raise ValueError(f"{name} cannot contain None. All elements in {name} should "
                             "refer to the mesh axes.")
    if unreduced & reduced:
        raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot "
                         f"overlap. Got unreduced: {unreduced} and reduced: {reduced}")
    for partition in partitions:
        for axis in partition if isinstance(partition, tuple) else (partition,):
            for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if axis in axes:
                    raise ValueError(f"partitions cannot overlap with {name} axes passed to "
                                     f"PartitionSpec. Got partitions: {partitions} and "
                                     f"{name} axes: {axes}")


class P:
    """How an array is split over a mesh: one entry per leading dimension, each None (not
    split), a mesh axis name, or a tuple of names (split over their product, the first
    major); `P.UNCONSTRAINED` leaves a dimension to the compiler.

    Args:
      *partitions: the entries.
      unreduced: mesh axes over which the value is a partial sum still to be reduced.
      reduced: mesh axes over which it has been reduced (set or frozenset).
    """

    __slots__ = ("_partitions", "unreduced", "reduced")
    UNCONSTRAINED = UNCONSTRAINED

    def __init__(self, *partitions: Any, unreduced: Any = frozenset(),
                 reduced: Any = frozenset()) -> None:
        parts = tuple(canonicalize_partition(p) for p in partitions)
        unreduced = _axis_set(unreduced, "unreduced")
        reduced = _axis_set(reduced, "reduced")
        _check(parts, unreduced, reduced)
        object.__setattr__(self, "_partitions", parts)
        object.__setattr__(self, "unreduced", unreduced)
        object.__setattr__(self, "reduced", reduced)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("Subclassing `jax.P` is prohibited.")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")

    @property
    def partitions(self) -> tuple:
        """The entries, one per leading dimension."""
        return self._partitions

    def _check_plain(self, use: str, instead: str) -> None:
        if self.unreduced or self.reduced:
            raise ValueError(f"Using {use} is dangerous when PartitionSpec has non-empty "
                             f"unreduced/reduced set. Please use {instead}")

    def __getitem__(self, index: Any) -> Any:
        self._check_plain("pspec[...]", "spec.partitions[...]")
        return self._partitions[index]

    def __iter__(self) -> Iterator[Any]:
        self._check_plain("*pspec", "*spec.partitions")
        return iter(self._partitions)

    def __len__(self) -> int:
        return len(self._partitions)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, P) and self._partitions == other._partitions
                and self.unreduced == other.unreduced and self.reduced == other.reduced)

    def __hash__(self) -> int:
        return hash((self._partitions, self.unreduced, self.reduced))

    def __add__(self, other: Any) -> P:
        if isinstance(other, P):
            return P(*self._partitions, *other._partitions,
                     unreduced={*self.unreduced, *other.unreduced},
                     reduced={*self.reduced, *other.reduced})
        if isinstance(other, tuple):
            self._check_tuple_add(other, "__add__")
            return P(*self._partitions, *other)
        return NotImplemented

    def __radd__(self, other: Any) -> P:
        if not isinstance(other, tuple):
            return NotImplemented
        self._check_tuple_add(other, "__radd__")
        return P(*other, *self._partitions)

    def _check_tuple_add(self, other: tuple, method: str) -> None:
        for name in ("unreduced", "reduced"):
            if getattr(self, name):
                raise TypeError(f"other {other} cannot be of instance `tuple` when self "
                                f"{self} has {name} in `{method}` of PartitionSpec.")

    def index(self, value: Any) -> int:
        return self._partitions.index(canonicalize_partition(value))

    def count(self, value: Any) -> int:
        return self._partitions.count(canonicalize_partition(value))

    def update(self, partitions: Any = None, unreduced: Any = None, reduced: Any = None) -> P:
        """A copy with the given fields replaced."""
        return P(*(self._partitions if partitions is None else partitions),
                 unreduced=self.unreduced if unreduced is None else unreduced,
                 reduced=self.reduced if reduced is None else reduced)

    def _normalized_spec_for_aval(self, ndim: int) -> P:
        """The spec padded with None to `ndim` entries, UNCONSTRAINED entries as None."""
        out = [None if p is UNCONSTRAINED else p for p in self._partitions]
        out.extend([None] * (ndim - len(out)))
        return self.update(partitions=out)

    def __repr__(self) -> str:
        text = repr(self._partitions)[1:-1]
        sets = []
        if self.unreduced:
            sets.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            sets.append(f"reduced={set(self.reduced)!r}")
        if not sets:
            return f"P({text})"
        text = "" if not text else f"{text} " if text.endswith(",") else f"{text}, "
        return f"P({text}{', '.join(sets)})"

    def __reduce__(self) -> tuple:
        return (_rebuild, (self._partitions, self.unreduced, self.reduced))


def _rebuild(partitions: tuple, unreduced: frozenset, reduced: frozenset) -> P:
    return P(*partitions, unreduced=unreduced, reduced=reduced)


PartitionSpec = P
