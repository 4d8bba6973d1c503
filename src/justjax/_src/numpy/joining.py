"""jax.numpy's joining and splitting functions, written with lax: `concatenate`, `stack` and
its variants, `split` and its variants, `unstack`, and `append`/`insert`/`delete`.

`stack`, `split` and `unstack` bind the lax primitives of the same names (`_src/lax/joining.py`),
so their jaxprs print as JAX's do.

The ones JAX wraps in `jit` are wrapped the same way (`util.jitted_as_in_jax`: same name,
static arguments and inline flag), so their jaxprs print JAX's `jit[name=...]` equations.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core
from justjax._src.lax import joining as lax_joining
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import array_creation, util
from justjax._src.numpy.shape_ops import (_asarray, _aval, _is_array, _ndim, _shape, atleast_1d,
                                          atleast_2d, atleast_3d, expand_dims, ravel, transpose)
from justjax._src.runtime.array import Array

__all__ = ["append", "array_split", "column_stack", "concat", "concatenate", "dsplit",
           "dstack", "hsplit", "hstack", "split", "stack", "unstack", "vsplit", "vstack"]


# ---------------------------------------------------------------------------------------------
# Joining.

def _concatenate_array(arr: Any, axis: int | None, dtype: Any = None) -> Any:
    """Concatenation of the rows of one array: a single reshape, as in JAX."""
    arr = array_creation.asarray(arr, dtype=dtype)
    aval = _aval(arr)
    if aval.ndim == 0 or aval.shape[0] == 0:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return lax_struct.reshape(arr, (aval.size,))
    if aval.ndim == 1:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = util.canonicalize_axis(axis, aval.ndim - 1)
    s = aval.shape
    new_shape = s[1:axis + 1] + (s[0] * s[axis + 1],) + s[axis + 2:]
    dimensions = (*range(1, axis + 1), 0, *range(axis + 1, aval.ndim))
    return lax_struct.reshape(arr, new_shape, dimensions)


def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> Any:
    """Joins arrays along an existing axis (`axis=None` joins them flattened)."""
    if isinstance(arrays, (np.ndarray, Array, core.Tracer)):
        return _concatenate_array(arrays, axis, dtype)
    util.check_arraylike("concatenate", *arrays)
    arrays = [_asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
    if _ndim(arrays[0]) == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = util.canonicalize_axis(axis, _ndim(arrays[0]))
    if dtype is None:
        arrays = util.promote_dtypes(*arrays)
    else:
        arrays = [array_creation.asarray(a, dtype=dtype) for a in arrays]
    return lax_struct.concatenate(arrays, axis)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """Array-API spelling of `concatenate`."""
    util.check_arraylike("concat", *arrays)
    return concatenate(arrays, axis=axis)


def stack(arrays: Any, axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """Joins equal-shaped arrays along a new axis."""
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if isinstance(arrays, (np.ndarray, Array, core.Tracer)):
        axis = util.canonicalize_axis(axis, arrays.ndim)
        return concatenate(expand_dims(arrays, axis + 1), axis=axis, dtype=dtype)
    util.check_arraylike("stack", *arrays)
    if dtype is not None:
        arrays = [array_creation.asarray(a, dtype=dtype) for a in arrays]
    else:
        arrays = util.promote_dtypes(*arrays)
    return lax_joining.stack(arrays, axis=axis)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis` (the `unstack` primitive, as in JAX)."""
    x = util.ensure_arraylike("unstack", x)
    return lax_joining.unstack(x, axis=axis)


def _rows_expanded(tup: Any, rank: int, trailing: bool = False) -> Any:
    """Each row of `tup` raised to `rank` dimensions, kept stacked (JAX vmaps atleast_nd)."""
    aval = _aval(tup)
    row = aval.shape[1:]
    missing = rank - len(row)
    if missing <= 0:
        return tup
    if trailing:
        new_row = (1,) * (missing - 1 if row else missing) + row + ((1,) if row else ())
        dims = tuple(range(missing - (1 if row else 0), missing - (1 if row else 0) + len(row)))
    else:
        new_row = (1,) * missing + row
        dims = tuple(range(missing, rank))
    # Bound directly: JAX's vmap of atleast_nd leaves NumPy integers in the params.
    return lax_struct.broadcast_in_dim_p.bind(
        tup, shape=(aval.shape[0], *new_row),
        broadcast_dimensions=(0, *(np.int64(d + 1) for d in dims)), sharding=None)


def vstack(tup: Any, dtype: Any = None) -> Any:
    """Stacks arrays row-wise (along axis 0, after raising them to 2-D)."""
    if isinstance(tup, (np.ndarray, Array, core.Tracer)):
        arrs = _rows_expanded(_asarray(tup), 2)
    else:
        util.check_arraylike("vstack", *tup)
        arrs = [atleast_2d(m) for m in tup]
    return concatenate(arrs, axis=0, dtype=dtype)


def hstack(tup: Any, dtype: Any = None) -> Any:
    """Stacks arrays column-wise (axis 1, or axis 0 for 1-D inputs)."""
    if isinstance(tup, (np.ndarray, Array, core.Tracer)):
        arrs = _rows_expanded(_asarray(tup), 1)
        arr0_ndim = _ndim(arrs) - 1
    else:
        util.check_arraylike("hstack", *tup)
        arrs = [atleast_1d(m) for m in tup]
        arr0_ndim = _ndim(arrs[0])
    return concatenate(arrs, axis=0 if arr0_ndim == 1 else 1, dtype=dtype)


def dstack(tup: Any, dtype: Any = None) -> Any:
    """Stacks arrays depth-wise (axis 2, after raising them to 3-D)."""
    if isinstance(tup, (np.ndarray, Array, core.Tracer)):
        arrs = _rows_expanded(_asarray(tup), 3, trailing=True)
    else:
        util.check_arraylike("dstack", *tup)
        arrs = [atleast_3d(m) for m in tup]
    return concatenate(arrs, axis=2, dtype=dtype)


def column_stack(tup: Any) -> Any:
    """Stacks 1-D arrays as columns of a 2-D array (2-D arrays as they are)."""
    if isinstance(tup, (np.ndarray, Array, core.Tracer)):
        arr = _asarray(tup)
        if _ndim(arr) < 3:
            arr = transpose(_rows_expanded(arr, 2), (0, 2, 1))
        return concatenate(arr, axis=1)
    util.check_arraylike("column_stack", *tup)
    arrs = [_asarray(a) for a in tup]
    arrs = [transpose(atleast_2d(a)) if _ndim(a) < 2 else a for a in arrs]
    return concatenate(arrs, axis=1)


# ---------------------------------------------------------------------------------------------
# Splitting.

def _split(op: str, ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    ary = util.ensure_arraylike(op, ary)
    axis = core.concrete_or_error(operator.index, axis, f"in jax.numpy.{op} argument `axis`")
    length = _shape(ary)[util.canonicalize_axis(axis, _ndim(ary))]
    if isinstance(indices_or_sections, (tuple, list)) or (
            _is_array(indices_or_sections) and np.ndim(indices_or_sections) > 0):
        points = [core.concrete_or_error(operator.index, i, f"in jax.numpy.{op} argument 1")
                  for i in indices_or_sections]
        sizes = list(np.diff(np.asarray([0] + points + [length])))
    else:
        sections = core.concrete_or_error(int, indices_or_sections, f"in jax.numpy.{op} argument 1")
        part, rest = divmod(length, sections)
        if rest == 0:
            sizes = [part] * sections
        elif op == "array_split":
            sizes = [part + 1] * rest + [part] * (sections - rest)
        else:
            raise ValueError(f"array split does not result in an equal division: rest is {rest}")
    return list(lax_joining.split(ary, [np.int64(s) for s in sizes], axis=axis))


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Splits into equal sections, or at the given indices, along `axis`."""
    return _split("split", ary, indices_or_sections, axis=axis)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like `split`, but sections may differ in size by one."""
    return _split("array_split", ary, indices_or_sections, axis=axis)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """`split` along axis 0."""
    return _split("vsplit", ary, indices_or_sections, axis=0)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """`split` along axis 1 (axis 0 for 1-D arrays)."""
    a = util.ensure_arraylike("hsplit", ary)
    return _split("hsplit", a, indices_or_sections, axis=0 if _ndim(a) == 1 else 1)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """`split` along axis 2."""
    return _split("dsplit", ary, indices_or_sections, axis=2)


# ---------------------------------------------------------------------------------------------
# Appending (inserting and deleting are in insertion.py).

@util.jitted_as_in_jax(static_argnames=("axis",))
def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """`values` appended along `axis` (both flattened when `axis` is None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)
