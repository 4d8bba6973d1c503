"""Abstract values: what a tracer knows about an array (shape, dtype, weak type)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.core.shape_poly import canonicalize_shape


class AbstractValue:
    """What a tracer knows about the value it stands for (`jax.core.AbstractValue`)."""

    __slots__ = ()


class ShapedArray(AbstractValue):
    """The abstract value of an array: `ShapedArray((2, 3), float32, weak_type=False)`.

    `sharding` is the type's sharding over `Explicit` mesh axes (JAX's "sharding in types"):
    a `NamedSharding` over an abstract mesh whose spec has one entry per dimension naming
    only Explicit axes, or None for a type split over no Explicit axis (most types). Read
    as `aval.sharding`, None is the unsplit sharding over the mesh in context
    (`runtime/sharding.py` installs the property). `vma` is the manual mesh axes the
    value varies along inside a `shard_map` body checked with `check_vma` (`f32[3]{V:i}`),
    a tuple in the mesh's axis order; as JAX's they are part of the printed type, but types
    are compared without them (loops and branches in bodies are not retyped here).
    """

    __slots__ = ("shape", "dtype", "weak_type", "_sharding", "vma")
    array_abstraction_level = 1

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False, *,
                 sharding: Any = None, vma: Any = (), **_: Any) -> None:
        self.shape = canonicalize_shape(shape)
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._sharding = sharding if sharding is not None and _splits(sharding) else None
        self.vma = tuple(vma)

    def to_tangent_aval(self) -> ShapedArray:
        """The type of this value's tangents: float0 for integers and booleans."""
        tangent_dtype = dtypes.primal_dtype_to_tangent_dtype(self.dtype)
        if tangent_dtype == self.dtype:
            return self
        return ShapedArray(self.shape, tangent_dtype, weak_type=False, sharding=self._sharding,
                           vma=self.vma)

    def to_cotangent_aval(self) -> ShapedArray:
        return self.to_tangent_aval()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape: tuple[int, ...] | None = None, dtype: Any = None,
               weak_type: bool | None = None, sharding: Any = ..., vma: Any = None
               ) -> ShapedArray:
        """This type with the fields given changed; its sharding is kept while the rank
        is."""
        shape = self.shape if shape is None else shape
        if sharding is ...:
            sharding = self._sharding if len(shape) == self.ndim else None
        return ShapedArray(shape, self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           sharding=sharding, vma=self.vma if vma is None else vma)

    @property
    def manual_axis_type(self) -> ManualAxisType:
        """The manual mesh axes this value varies along (`.varying`), as JAX's."""
        return ManualAxisType(frozenset(self.vma))

    @property
    def type_spec(self) -> tuple | None:
        """The entries of this type's sharding over Explicit axes, one per dimension (None:
        not split over any)."""
        sharding = self._sharding
        return None if sharding is None else tuple(sharding.spec)

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self._sharding == other._sharding)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type, self._sharding))

    def str_short(self, short_dtypes: bool = True) -> str:
        """`f32[2,3]` (short dtypes, as in jaxprs) or `float32[2,3]`; a dimension split over
        Explicit mesh axes shows them, as JAX's: `f32[8@X,4@(Y,Z)]`, and the manual axes
        the value varies along follow: `f32[3]{V:i}`, `f32[2]{V:(i,j)}`."""
        text = shape_text(self, self.type_spec, short_dtypes)
        return f"{text}{{V:{_axes_text(self.vma if len(self.vma) > 1 else self.vma[0])}}}" \
            if self.vma else text

    def __str__(self) -> str:
        # JAX marks a weak type with `~`: `~float32[]` for the aval of a Python float.
        weak = "~" if self.weak_type else ""
        return weak + self.str_short(short_dtypes=False)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]


class ManualAxisType:
    """`aval.manual_axis_type`: the manual mesh axes a value varies along (JAX's)."""

    __slots__ = ("varying", "unreduced", "reduced")

    def __init__(self, varying: frozenset) -> None:
        self.varying = varying
        self.unreduced: frozenset = frozenset()
        self.reduced: frozenset = frozenset()

    def __repr__(self) -> str:
        return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
                f"reduced={self.reduced})")


def _splits(sharding: Any) -> bool:
    """Whether a type's sharding names any mesh axis (an unsplit one is kept as None)."""
    return any(entry is not None for entry in sharding.spec) or bool(sharding.spec.unreduced)


def _axes_text(entry: Any) -> str:
    return f"({','.join(entry)})" if isinstance(entry, tuple) else str(entry)


def shape_text(aval: ShapedArray, spec: tuple | None, short_dtypes: bool = True) -> str:
    """`aval`'s dtype and shape, each dimension with the axes `spec` splits it over:
    `f32[8@X,4]`."""
    dtype = aval.dtype
    name = dtypes.short_dtype_name(dtype) if short_dtypes else dtypes.dtype_name(dtype)
    if spec is None:
        return f"{name}[{','.join(str(d) for d in aval.shape)}]"
    dims = [str(d) if entry is None else f"{d}@{_axes_text(entry)}"
            for d, entry in zip(aval.shape, spec, strict=True)]
    return f"{name}[{','.join(dims)}]"


class AbstractToken(AbstractValue):
    """The abstract value of an effect token."""

    shape = ()
    dtype = None
    weak_type = False

    def str_short(self, short_dtypes: bool = True) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "AbstractToken()"


abstract_token = AbstractToken()


def raise_to_shaped(aval: ShapedArray, weak_type: bool | None = None) -> ShapedArray:
    return aval if weak_type is None else aval.update(weak_type=weak_type)


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """One example of a batch of `size` along `axis`: `aval` without that axis (unchanged
    when `axis` is None)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} is not of size {size}")
    sharding = aval._sharding
    if sharding is not None:
        spec = tuple(sharding.spec)
        sharding = sharding.update(spec=sharding.spec.update(
            partitions=spec[:axis] + spec[axis + 1:]))
    return ShapedArray(aval.shape[:axis] + aval.shape[axis + 1:], aval.dtype, aval.weak_type,
                       sharding=sharding, vma=aval.vma)


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray,
                  explicit_mesh_axis: Any = None) -> ShapedArray:
    """A batch of `size` values of type `aval` stacked along `axis` (unchanged when `axis`
    is None)."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    sharding = aval._sharding
    if sharding is not None:
        spec = list(sharding.spec)
        spec.insert(axis, explicit_mesh_axis)
        sharding = sharding.update(spec=sharding.spec.update(partitions=spec))
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type, sharding=sharding,
                       vma=aval.vma)
