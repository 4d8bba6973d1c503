"""`jax.scipy.interpolate`: interpolation on a regular grid (`RegularGridInterpolator`).

As JAX's: every grid axis must be strictly increasing (not checked: under jit it cannot be),
points outside the grid get `fill_value` (NaN by default; None extrapolates), and
`bounds_error=True` is refused, since no data-dependent error can be raised under jit.
"""
from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.numpy import array_creation, selection, shape_ops, sorting, util

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method: str) -> None:
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _points_array(xi: Any, ndim: int) -> Any:
    """The query points as one (..., ndim) array: a tuple of coordinate arrays is broadcast
    and stacked on a last axis; a 1-D array is a list of points."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        coords = shape_ops.broadcast_arrays(*xi)
        points = array_creation.empty(coords[0].shape + (len(xi),), dtype=float)
        for j, coord in enumerate(coords):
            points = points.at[..., j].set(coord)
        return points
    util.check_arraylike("_ndim_coords_from_arrays", xi)
    points = array_creation.asarray(xi)
    return points.reshape(-1, ndim) if points.ndim == 1 else points


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid in N dimensions.

    JAX's `jax.scipy.interpolate.RegularGridInterpolator` (SciPy's class of that name,
    methods "linear" and "nearest"). A pytree: the grid, values and fill value are its
    leaves; the method and `bounds_error` are static.

    Args:
      points: N 1-D arrays, the strictly increasing grid coordinates of each axis.
      values: the values on the grid, shape (len(points[0]), ..., len(points[N-1]), ...);
        promoted to an inexact dtype.
      method: "linear" or "nearest".
      bounds_error: must be False (JAX raises NotImplementedError for True).
      fill_value: the value for points outside the grid; None extrapolates.
    Raises:
      ValueError: for an unknown method, more point arrays than `values` has axes, or a
        fill value of a kind `values` cannot hold.
    """

    def __init__(self, points: Sequence[Any], values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan) -> None:
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        util.check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        values, = util.promote_dtypes_inexact(values)
        if fill_value is not None:
            util.check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = array_creation.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        util.check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(array_creation.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """The interpolated values at the points `xi`.

        Args:
          xi: points, shape (..., N), or a tuple of N coordinate arrays.
          method: overrides the interpolator's method.
        Returns:
          The values, shape `xi`'s leading shape + `values`' trailing (non-grid) shape.
        """
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        leading = xi.shape[:-1]
        indices, distances, outside = self._find_indices(xi.reshape(-1, ndim).T)
        if method == "linear":
            result = self._evaluate_linear(indices, distances)
        else:
            result = self._evaluate_nearest(indices, distances)
        if self.fill_value is not None:
            mask = outside.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
            result = selection.where(mask, self.fill_value, result)
        return result.reshape(leading + self.values.shape[ndim:])

    def _find_indices(self, xi: Any) -> tuple[list[Any], list[Any], Any]:
        """Per axis, the cell (lower grid index) holding each point and the point's
        distance into it (0 at the lower edge, 1 at the upper); and which points are out."""
        indices, distances = [], []
        outside = array_creation.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid, strict=True):
            i = selection.clip(sorting.searchsorted(g, x) - 1, 0, g.size - 2)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, distances, outside

    def _evaluate_linear(self, indices: list[Any], distances: list[Any]) -> Any:
        # Trailing (non-grid) axes of `values` broadcast against the per-point weights.
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        result = array_creation.asarray(0.)
        # Each corner of the cell: 0 takes the lower edge (weight 1 - y), 1 the upper (y).
        for corner in itertools.product((0, 1), repeat=len(indices)):
            weight = array_creation.asarray(1.)
            for upper, y in zip(corner, distances, strict=True):
                weight = weight * (y if upper else 1 - y)
            edge = tuple(i + upper for i, upper in zip(indices, corner, strict=True))
            result = result + self.values[edge] * weight[trailing]
        return result

    def _evaluate_nearest(self, indices: list[Any], distances: list[Any]) -> Any:
        nearest = tuple(selection.where(y <= .5, i, i + 1)
                        for i, y in zip(indices, distances, strict=True))
        return self.values[nearest]


def _flatten(interp: RegularGridInterpolator) -> tuple[tuple[Any, ...], tuple[str, bool]]:
    return (interp.grid, interp.values, interp.fill_value), (interp.method, interp.bounds_error)


def _unflatten(aux: tuple[str, bool], children: Sequence[Any]) -> RegularGridInterpolator:
    # Not through __init__: the leaves may be tracers or placeholders that its checks refuse.
    interp = object.__new__(RegularGridInterpolator)
    interp.method, interp.bounds_error = aux
    interp.grid, interp.values, interp.fill_value = children
    return interp


tree_util.register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
