"""Type annotations for JAX values (`jax.typing`): `ArrayLike` and `DTypeLike`.

`ArrayLike` is what JAX functions accept as an array: a `jax.Array` (concrete, a tracer or a
key array: all are `jax.Array` instances), a NumPy array or scalar, or a Python scalar. Both
are `typing.Union`s, so `isinstance(x, ArrayLike)` works too.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, Union, runtime_checkable

import numpy as np

from justjax._src.runtime.array import Array

DType = np.dtype

# Values that become arrays without a copy of their meaning.
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]


@runtime_checkable
class SupportsDType(Protocol):
    """Anything with a `dtype` (jnp's scalar types: `jnp.float32`)."""

    @property
    def dtype(self, /) -> DType: ...


DTypeLike = Union[
    str,            # 'float32', 'int32'
    type[Any],      # np.float32, float, int
    np.dtype,       # np.dtype('float32')
    SupportsDType,  # jnp.float32
]

DimSize = Union[int, Any]
Shape = Sequence[DimSize]


class DuckTypedArray(Protocol):
    """Anything with a dtype and a shape (what `jax.ShapeDtypeStruct` stands for)."""

    @property
    def dtype(self) -> DType: ...

    @property
    def shape(self) -> Shape: ...
