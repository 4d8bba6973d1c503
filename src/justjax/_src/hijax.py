"""The names of JAX's experimental high-level types (`jax.experimental.hijax`).

hijax lets a library define types that are not arrays (flax.nnx's hijax Variables, JAX's
Box), carried through jaxprs and lowered to arrays at compile time. justjax does not
implement that machinery. What is here is what a library needs to *define* such types at
import (flax.nnx does, whether or not it uses them): the base classes and the registries,
and the parts that are plain data. Binding a `HiPrimitive` raises NotImplementedError naming
hijax, so a program that reaches hijax fails clearly instead of computing wrongly (flax uses
hijax only with `flax_hijax_variable=True` or `Variable(..., hijax=True)`; both default off).
"""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Iterable

from justjax._src.core import core
from justjax._src.core.avals import AbstractValue

# A property and a method an aval type offers to the tracers of that type.
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


class EffectTypeSet:
    """A set of effect types (`control_flow_allowed_effects.add_type(MyEffect)`)."""

    def __init__(self) -> None:
        self._effect_types: set[type] = set()

    def __repr__(self) -> str:
        return f"EffectTypeSet({self._effect_types})"

    def add_type(self, effect_type: type) -> None:
        self._effect_types.add(effect_type)

    def contains(self, effect: Any) -> bool:
        return any(isinstance(effect, t) for t in self._effect_types)

    def filter_in(self, effects: Iterable[Any]) -> list[Any]:
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Iterable[Any]) -> list[Any]:
        return [e for e in effects if not self.contains(e)]


# The effects control-flow bodies may have. justjax's control flow does not restrict the
# effects of its bodies, so registering a type here changes nothing.
control_flow_allowed_effects = EffectTypeSet()


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{what}: justjax does not implement JAX's experimental high-level types "
        "(jax.experimental.hijax). With flax, leave flax_hijax_variable off (its default).")


class HiPrimitive(core.Primitive):
    """A primitive on high-level types: subclasses define `abstract_eval`, `to_lojax`,
    `jvp` and `transpose`. Binding one is not supported by justjax."""

    def __init__(self, name: str) -> None:
        super().__init__(name, multiple_results=type(self).multiple_results)

    def is_high(self, *avals: Any, **params: Any) -> bool:
        return True

    def is_effectful(self, params: dict) -> bool:
        return False

    def bind(self, *args: Any, **params: Any) -> Any:
        raise _unsupported(f"binding the hijax primitive '{self.name}'")


class VJPHiPrimitive(HiPrimitive):
    """A HiPrimitive differentiated by a vjp rule."""


class HiType(AbstractValue):
    """An immutable high-level type: subclasses say how it lowers to arrays (`lo_ty`,
    `lower_val`, `raise_val`)."""

    __slots__ = ()
    is_high = True
    has_qdd = False


class MutableHiType(AbstractValue):
    """A mutable high-level type whose quasi-dynamic data (QDD) may change under tracing."""

    __slots__ = ()
    is_high = True
    has_qdd = True


class HiPspec:
    """A partition spec for a high-level type (sharding of hijax values)."""


@dataclass(frozen=True)
class AvalQDD:
    """A mutable high-level type with its current quasi-dynamic data."""

    aval: Any
    qdd: Any
    is_high = True
    has_qdd = True


@dataclass(frozen=True)
class AvalMutableQDD:
    """A mutable high-level type with a reference to its changing quasi-dynamic data."""

    aval: Any
    mutable_qdd: Any


def register_hitype(value_type: type, typeof_fn: Any) -> None:
    """Registers `typeof_fn(value) -> HiType` as the type of `value_type`'s instances.
    justjax records it (so `jax.typeof` answers), but cannot trace such values."""
    core.pytype_aval_mappings[value_type] = typeof_fn
