"""The types of mutable array references (`jax.Ref`, `jax._src.state.types.AbstractRef`).

justjax has no mutable array references: `jax.new_ref` does not exist here. These types
exist so that libraries can test values against them (flax.nnx asks whether a value is a
reference); no justjax value is an instance of either, which is the true answer.
"""
from __future__ import annotations

from justjax._src.core.avals import AbstractValue


class AbstractRef(AbstractValue):
    """The abstract value of a mutable array reference (no justjax value has it)."""

    __slots__ = ()


class TransformedRef:
    """A reference seen through indexing or reshaping transforms (no justjax value)."""


class MutableArray:
    """A mutable array reference (JAX's former name for `jax.Ref`; justjax makes none)."""
