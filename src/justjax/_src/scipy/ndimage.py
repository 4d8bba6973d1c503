"""`jax.scipy.ndimage`: interpolation of N-d arrays at arbitrary coordinates.

`map_coordinates` of order 0 (nearest) and 1 (linear). The boundary modes are those SciPy
documents (JAX's reading of them): 'constant' is SciPy's 'grid-constant' and 'wrap' is
SciPy's 'grid-wrap'.
"""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise as lax
from justjax._src.numpy import array_creation, selection, ufuncs

__all__ = ["map_coordinates"]


def _mirror_index(index: Any, size: int) -> Any:
    """Mirror about the edge samples: ... 2 1 | 0 1 2 | 1 0 ... (period 2 (size - 1))."""
    if size == 1:
        return index * 0
    period = 2 * (size - 1)
    folded = index % period
    return ufuncs.minimum(folded, period - folded)


def _reflect_index(index: Any, size: int) -> Any:
    """Reflect about the edges: ... 1 0 | 0 1 2 | 2 1 ... (period 2 size)."""
    period = 2 * size
    folded = index % period
    return selection.where(folded < size, folded, period - 1 - folded)


# mode -> the in-bounds index that stands for an out-of-bounds one.
_INDEX_FIXERS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: selection.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


def _round_half_away(x: Any) -> Any:
    return x if dtypes.issubdtype(x.dtype, np.integer) else lax.round(x)


def _nearest_nodes(coordinate: Any) -> list[tuple[Any, Any]]:
    """The one sample (index, weight) that order-0 interpolation reads."""
    index = _round_half_away(coordinate).astype(np.int32)
    return [(index, coordinate.dtype.type(1))]


def _linear_nodes(coordinate: Any) -> list[tuple[Any, Any]]:
    """The two samples (index, weight) that order-1 interpolation reads."""
    lower = ufuncs.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def _interpolation_nodes(order: int) -> Callable[[Any], list[tuple[Any, Any]]]:
    if order == 0:
        return _nearest_nodes
    if order == 1:
        return _linear_nodes
    raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")


def _axis_nodes(coordinate: Any, size: int, order: int, mode: str) -> list[tuple[Any, Any, Any]]:
    """(fixed index, validity or True, weight) of each sample read along one axis."""
    fix = _INDEX_FIXERS[mode]
    nodes = []
    for index, weight in _interpolation_nodes(order)(coordinate):
        valid = ((index >= 0) & (index < size)) if mode == "constant" else True
        nodes.append((fix(index, size), valid, weight))
    return nodes


# As JAX's: order, mode and cval are static (so cval must be hashable).
@functools.partial(jit, static_argnums=(2, 3, 4))
def _map_coordinates(input: Any, coordinates: Sequence[Any], order: int, mode: str,
                     cval: Any) -> Any:
    image = array_creation.asarray(input)
    coordinate_arrays = [array_creation.asarray(c) for c in coordinates]
    fill = array_creation.asarray(cval, image.dtype)
    if len(coordinates) != image.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {image.ndim}")
    if mode not in _INDEX_FIXERS:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_INDEX_FIXERS)}.")
    per_axis = [_axis_nodes(c, size, order, mode)
                for c, size in zip(coordinate_arrays, image.shape, strict=True)]
    terms = []
    for corner in itertools.product(*per_axis):
        indices, validities, weights = zip(*corner, strict=True)
        value = image[tuple(indices)]
        if not all(v is True for v in validities):
            value = selection.where(functools.reduce(operator.and_, validities), value, fill)
        terms.append(functools.reduce(operator.mul, weights) * value)
    result = functools.reduce(operator.add, terms)
    if dtypes.issubdtype(image.dtype, np.integer):
        result = _round_half_away(result)
    return result.astype(image.dtype)


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,
                    mode: str = "constant", cval: Any = 0.0) -> Any:
    """`input` interpolated at `coordinates`.

    JAX's `jax.scipy.ndimage.map_coordinates` (SciPy's `scipy.ndimage.map_coordinates`,
    with the boundary modes as SciPy documents them).

    Args:
      input: the N-d array to interpolate.
      coordinates: N arrays (broadcast together), the coordinates along each axis.
      order: 0 (nearest sample) or 1 (linear).
      mode: 'constant' (`cval` outside), 'nearest', 'wrap', 'mirror' or 'reflect'.
      cval: the value outside the array with mode 'constant' (static, hashable).
    Returns:
      The interpolated values, of `input`'s dtype (integers rounded half away from zero).
    Raises:
      ValueError: when the number of coordinate arrays is not `input.ndim`.
      NotImplementedError: for an order above 1 or another mode, as JAX.
    """
    return _map_coordinates(input, coordinates, order, mode, cval)
