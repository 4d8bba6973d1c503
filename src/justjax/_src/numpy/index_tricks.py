"""Index helpers and functional array builders: `mgrid`, `ogrid`, `r_`, `c_`,
`tril_indices`/`triu_indices` (and `_from`), `mask_indices`, `fromfunction`,
`apply_along_axis`, `apply_over_axes` and `block`, as `jax.numpy` has them."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.config import numpy_dtype_promotion
from justjax._src.core import core
from justjax._src.interpreters import batching
from justjax._src.numpy import array_creation, joining, shape_ops, util

__all__ = ["apply_along_axis", "apply_over_axes", "block", "c_", "fromfunction", "mask_indices",
           "mgrid", "ogrid", "r_", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from"]


def _grid_from_slice(s: slice, op_name: str) -> Any:
    """`start:stop:step` as `arange`, or as `linspace` for an imaginary step (`0:1:5j`)."""
    def concrete(value: Any, part: str) -> Any:
        return core.concrete_or_error(lambda v: v, value, f"slice {part} of jnp.{op_name}")
    start = concrete(s.start, "start") or 0
    stop = concrete(s.stop, "stop")
    step = concrete(s.step, "step") or 1
    if np.iscomplex(step):
        return array_creation.linspace(start, stop, int(abs(step)))
    return array_creation.arange(start, stop, step)


def _grids(key: Any, op_name: str) -> list[Any]:
    grids = [_grid_from_slice(k, op_name) for k in key]
    with numpy_dtype_promotion("standard"):
        return util.promote_dtypes(*grids)


class _Mgrid:
    """A dense multi-dimensional grid (`jnp.mgrid[0:3, 0:4]`): `meshgrid(..., indexing="ij")`
    stacked along a new first axis; a complex step gives `linspace` points."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        grids = array_creation.meshgrid(*_grids(key, "mgrid"), indexing="ij", sparse=False)
        if not grids:
            return array_creation.arange(0)
        return joining.stack(grids, 0)


class _Ogrid:
    """An open multi-dimensional grid (`jnp.ogrid[0:3, 0:4]`): the sparse `meshgrid`."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        return array_creation.meshgrid(*_grids(key, "ogrid"), indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


def _directive(directive: str, params: list[int]) -> list[int]:
    """`"r"`/`"c"` or `"axis,ndmin,trans1d"` (NumPy's string directive of `r_`)."""
    if directive == "r":
        return params[:3] + [0]
    if directive == "c":
        return params[:3] + [1]
    parts: list[Any] = directive.split(",")
    parts = parts + params[len(parts):] if len(parts) < 4 else parts[:3] + [params[3]]
    try:
        return [int(p) for p in parts]
    except ValueError as err:
        raise ValueError(f"could not understand directive {directive!r}") from err


class _AxisConcat:
    """Concatenation of slices, scalars and arrays along an axis (`r_`, `c_`)."""

    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            params = _directive(items[0], params)
            items = items[1:]
        axis, ndmin, trans1d, matrix = params
        parts = []
        for item in items:
            if isinstance(item, slice):
                part, item_ndim = _grid_from_slice(item, self.op_name), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                part = array_creation.array(item, copy=False)
                item_ndim = part.ndim
            part = array_creation.array(part, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                # The item's own axes go where trans1d says among the ndmin axes.
                order = list(range(ndmin))
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                part = shape_ops.transpose(part, order[shift:] + order[:shift])
            parts.append(part)
        result = joining.concatenate(tuple(parts), axis=axis)
        if matrix != -1 and result.ndim == 1:
            result = shape_ops.expand_dims(result, matrix)
        return result

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """`jnp.r_`: concatenation along the first axis (`jnp.r_[0:3, 7, [8, 9]]`)."""

    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
    """`jnp.c_`: concatenation along the last axis, inputs made at least 2-D column-wise."""

    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


r_ = RClass()
c_ = CClass()


def _triangle_indices(name: str, n: Any, k: Any, m: Any, upper: bool) -> tuple[Any, Any]:
    n = core.concrete_dim(n, f"n argument of jnp.{name}")
    k = core.concrete_dim(k, f"k argument of jnp.{name}")
    m = n if m is None else core.concrete_dim(m, f"m argument of jnp.{name}")
    rows, cols = (np.triu_indices if upper else np.tril_indices)(n, k, m)
    return array_creation.asarray(rows), array_creation.asarray(cols)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """The indices of the lower triangle of an `(n, m)` array, diagonal `k` included.

    Args:
      n, m: the array's shape (`m` defaults to `n`); concrete integers.
      k: the diagonal offset.
    Returns:
      `(rows, cols)`, int32 arrays (int64 with x64).
    """
    return _triangle_indices("tril_indices", n, k, m, upper=False)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """The indices of the upper triangle of an `(n, m)` array, diagonal `k` included."""
    return _triangle_indices("triu_indices", n, k, m, upper=True)


def _shape_2d(name: str, arr: Any) -> tuple[int, ...]:
    # An array's (or tracer's) own shape; np.shape would convert the value.
    shape = tuple(arr.shape) if hasattr(arr, "shape") else np.shape(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """`tril_indices` for the shape of the 2-D `arr`."""
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k=k, m=m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """`triu_indices` for the shape of the 2-D `arr`."""
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k=k, m=m)


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """The indices where `mask_func(ones((n, n)), k)` is nonzero (e.g. `jnp.triu`).

    Args:
      n: the side of the square array.
      mask_func: a function like `jnp.triu` or `jnp.tril`.
      k: passed to `mask_func`.
      size: the static number of indices (needed under `jit`), as for `nonzero`.
    Returns:
      `(rows, cols)`.
    """
    from justjax._src.numpy import selection
    mask = mask_func(array_creation.ones((n, n), dtype=bool), k)
    return selection.nonzero(mask, size=size)


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """`function` applied to the index of every element of an array of `shape`.

    Unlike NumPy's, `function` is mapped with `vmap` over each axis, so it sees scalar
    indices (as JAX's does); a function of whole index arrays gives the same result when it
    is elementwise.

    Args:
      function: called as `function(i0, i1, ..., **kwargs)` with indices of `dtype`.
      shape: the output shape.
      dtype: the indices' dtype.
    Returns:
      The array of results.
    """
    shape = core.canonicalize_shape(shape)
    mapped = functools.partial(function, **kwargs)
    for axis in reversed(range(len(shape))):
        in_axes = [0 if a == axis else None for a in range(len(shape))]
        mapped = batching.vmap_positional(mapped, in_axes)
    ranges = [array_creation.arange(s, dtype=dtype) for s in shape]
    return mapped(*ranges)


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """`func1d` applied to every 1-D slice of `arr` along `axis` (mapped with `vmap`).

    Args:
      func1d: a function of a 1-D array (and `*args`, `**kwargs`).
      axis: the axis the slices run along.
      arr: the input.
    Returns:
      The results, with the axis replaced by the result's axes.
    """
    arr = util.ensure_arraylike("apply_along_axis", arr)
    num_dims = arr.ndim
    axis = util.canonicalize_axis(axis, num_dims)

    def fn(x: Any) -> Any:
        return func1d(x, *args, **kwargs)
    # The axes after `axis` are mapped innermost with their results put last, those before
    # it outermost, so the result's axes replace `axis` in place.
    for i in range(1, num_dims - axis):
        fn = _mapped_to_last(fn, i)
    for _ in range(axis):
        fn = batching.vmap_positional(fn, [0])
    return fn(arr)


def _mapped_to_last(fn: Callable[..., Any], in_axis: int) -> Callable[..., Any]:
    batched = batching.vmap_positional(fn, [in_axis])
    return lambda x: shape_ops.moveaxis(batched(x), 0, -1)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """`func(a, axis)` applied for each axis in turn, keeping the number of dimensions.

    Args:
      func: a reduction-like function of `(array, axis)`.
      a: the input.
      axes: the axes, in order.
    Returns:
      The result, with reduced axes kept as length 1.
    """
    a = util.ensure_arraylike("apply_over_axes", a)
    for axis in axes:
        b = func(a, axis)
        if b.ndim == a.ndim:
            a = b
        elif b.ndim == a.ndim - 1:
            a = shape_ops.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks (NumPy's `block`): the innermost
    lists are joined along the last axis, the next ones along the one before, and so on.

    Args:
      arrays: nested lists of arrays or scalars, all lists at the same depth.
    Returns:
      The assembled array.
    """
    depth, max_ndim = _block_depth(arrays)
    return _block(arrays, depth, max(depth, max_ndim))


def _block_depth(arrays: Any) -> tuple[int, int]:
    """The nesting depth of the lists and the largest block rank (JAX's errors)."""
    if isinstance(arrays, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {arrays}")
    if not isinstance(arrays, list):
        return 0, np.ndim(arrays)
    if not arrays:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    found = [_block_depth(a) for a in arrays]
    if len({d for d, _ in found}) != 1:
        raise ValueError("Mismatched list depths in jax.numpy.block")
    return found[0][0] + 1, max(n for _, n in found)


def _block(arrays: Any, depth: int, ndim: int) -> Any:
    if depth == 0:
        return array_creation.array(arrays, copy=False, ndmin=ndim)
    parts = [_block(a, depth - 1, ndim) for a in arrays]
    return joining.concatenate(parts, axis=-depth)

