"""`jax.flatten_util.ravel_pytree`: a pytree of arrays as one flat vector, and back.

The leaves are raveled and concatenated in tree order. Leaves of several dtypes are promoted
to their common dtype (`result_type` of the leaves' canonical dtypes, so Python scalars count
as their default dtypes); the unravel function then checks the vector's dtype and casts each
piece back. When every leaf has one dtype, nothing is converted and unravel takes a vector of
any dtype (as in JAX, JAX's issue #7809).

The unravel function is a hashable value (equal for equal tree structures, shapes and
dtypes), so it can be a static argument of `jit`.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.core import dtypes
from justjax._src.lax import joining, structural
from justjax._src.lax.creation import full

__all__ = ["ravel_pytree"]


@dataclasses.dataclass(frozen=True)
class _UnravelList:
    """Splits a flat vector into leaves of `shapes`; with `from_dtypes`, checks that the
    vector has `to_dtype` and casts each leaf back to its own dtype."""

    sizes: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    from_dtypes: tuple[np.dtype, ...] | None = None
    to_dtype: np.dtype | None = None

    def __call__(self, flat: Any) -> list[Any]:
        if not self.sizes:
            return []
        if self.from_dtypes is not None:
            flat_dtype = dtypes.dtype(flat)
            if flat_dtype != self.to_dtype:
                raise TypeError(f"unravel function given array of dtype {flat_dtype}, but "
                                f"expected dtype {self.to_dtype}")
        pieces = joining.split(flat, self.sizes)
        if self.from_dtypes is None:
            return [structural.reshape(piece, shape)
                    for piece, shape in zip(pieces, self.shapes, strict=True)]
        return [structural.convert_element_type(structural.reshape(piece, shape), dtype)
                for piece, shape, dtype in zip(pieces, self.shapes, self.from_dtypes,
                                               strict=True)]


@dataclasses.dataclass(frozen=True)
class _UnravelPytree:
    """The unravel function `ravel_pytree` returns: a flat vector back to the pytree."""

    treedef: tree_util.PyTreeDef
    unravel_list: _UnravelList

    def __call__(self, flat: Any) -> Any:
        return tree_util.tree_unflatten(self.treedef, self.unravel_list(flat))


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Ravels a pytree of arrays and scalars into one 1-D array.

    Args:
      pytree: a pytree whose leaves are arrays or scalars.

    Returns:
      `(flat, unravel)`: the leaves raveled and concatenated (in the promoted dtype of the
      leaves; an empty float32 vector when there are none), and a function taking a vector
      of that length back to a pytree like `pytree` (leaves of their original dtypes).
    """
    leaves, treedef = tree_util.tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, _UnravelPytree(treedef, unravel_list)


def _ravel_list(leaves: list[Any]) -> tuple[Any, _UnravelList]:
    if not leaves:
        return full((0,), 0, "float32"), _UnravelList((), ())
    from_dtypes = tuple(dtypes.dtype(leaf) for leaf in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(leaf)) for leaf in leaves)
    shapes = tuple(tuple(np.shape(leaf)) for leaf in leaves)
    if all(dtype == to_dtype for dtype in from_dtypes):
        raveled = [structural.reshape(leaf, (size,))
                   for leaf, size in zip(leaves, sizes, strict=True)]
        return structural.concatenate(raveled, 0), _UnravelList(sizes, shapes)
    raveled = [structural.reshape(structural.convert_element_type(leaf, to_dtype), (size,))
               for leaf, size in zip(leaves, sizes, strict=True)]
    unravel = _UnravelList(sizes, shapes, from_dtypes, to_dtype)
    return structural.concatenate(raveled, 0), unravel
