"""Abstract values: what a tracer knows about an array (shape, dtype, weak type)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from justjax._src.core import dtypes


class ShapedArray:
    """The abstract value of an array: `ShapedArray((2, 3), float32, weak_type=False)`."""

    __slots__ = ("shape", "dtype", "weak_type")
    array_abstraction_level = 1

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape: tuple[int, ...] | None = None, dtype: Any = None,
               weak_type: bool | None = None) -> ShapedArray:
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def str_short(self, short_dtypes: bool = True) -> str:
        """`f32[2,3]` (short dtypes, as in jaxprs) or `float32[2,3]`."""
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else dtypes.dtype_name(self.dtype)
        return f"{name}[{','.join(str(d) for d in self.shape)}]"

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


class AbstractToken:
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
