"""jnp.insert and jnp.delete: entries put in or taken out along an axis."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.numpy import array_creation, dtype_ops, reductions, selection, sorting, util
from justjax._src.numpy.joining import concatenate
from justjax._src.numpy.shape_ops import (_asarray, _atleast, _aval, _concrete, _ndim, _shape,
                                          broadcast_shapes, moveaxis, ravel)
from justjax._src.runtime.array import Array

__all__ = ["delete", "insert"]


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """`arr` without the entries `obj` (int, slice, index array or mask) along `axis`."""
    a = util.ensure_arraylike("delete", arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = util.canonicalize_axis(axis, _ndim(a))
    lead = (slice(None),) * axis
    try:
        index = operator.index(obj)
    except TypeError:
        pass
    else:
        index = util.canonicalize_axis(index, _shape(a)[axis])
        return concatenate([a[lead + (slice(0, index),)], a[lead + (slice(index + 1, None),)]],
                           axis=axis)
    if isinstance(obj, slice):
        obj = array_creation.arange(_shape(a)[axis])[obj]
        assume_unique_indices = True
    util.check_arraylike("delete", a, obj)
    if dtypes.is_int(_aval(obj).dtype) and assume_unique_indices:
        return a[lead + (_kept_indices(_asarray(obj), _shape(a)[axis]),)]
    obj_array = core.concrete_or_error(np.asarray, obj, "'obj' array argument of jnp.delete()")
    if np.issubdtype(obj_array.dtype, np.integer):
        mask = np.ones(_shape(a)[axis], dtype=bool)
        mask[obj_array] = False
    elif obj_array.dtype == bool:
        if obj_array.shape != (_shape(a)[axis],):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        mask = ~obj_array
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={obj_array.dtype}; must be "
                         "integer or bool.")
    return a[lead + (mask,)]


def _kept_indices(obj: Any, n: int) -> Any:
    """The positions left after deleting the unique indices `obj` from range(n) (traceable)."""
    obj = ravel(obj)
    obj = selection.clip(selection.where(obj < 0, obj + n, obj), 0, n)
    obj = sorting.sort(obj)
    obj = obj - array_creation.arange(_shape(obj)[0], dtype=_aval(obj).dtype)
    i = array_creation.arange(n - _aval(obj).size, dtype=_aval(obj).dtype)
    return i + reductions.sum(i[None, :] >= obj[:, None], axis=0, dtype=_aval(i).dtype)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """`values` inserted before the indices `obj` along `axis`."""
    util.check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    a, values_arr = _asarray(arr), _asarray(values)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = util.canonicalize_axis(_concrete(axis, "axis argument of jnp.insert()"),
                                  _ndim(a))
    if isinstance(obj, slice):
        indices = array_creation.arange(*obj.indices(_shape(a)[axis]))
    else:
        indices = _asarray(obj)
    if _ndim(indices) > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dtypes.is_int(_aval(indices).dtype):
        if _aval(indices).size == 0 and not isinstance(obj, (Array, core.Tracer)):
            indices = dtype_ops.astype(indices, int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values_arr = _atleast(dtype_ops.astype(values_arr, _aval(a).dtype), _ndim(a))
    if _aval(indices).size == 1:
        index = ravel(indices)[0]
        if _ndim(indices) == 0:
            values_arr = moveaxis(values_arr, 0, axis)
        indices = array_creation.full(_shape(values_arr)[axis], index)
    return _insert_at(a, indices, values_arr, axis)


def _insert_at(a: Any, indices: Any, values_arr: Any, axis: int) -> Any:
    n_input = _shape(a)[axis]
    n_insert = broadcast_shapes(_shape(indices), (_shape(values_arr)[axis],))[0]
    out_shape = list(_shape(a))
    out_shape[axis] += n_insert
    out = array_creation.zeros(tuple(out_shape), _aval(a).dtype)
    indices = selection.clip(selection.where(indices < 0, indices + n_input, indices), 0, n_input)
    values_ind = indices.at[sorting.argsort(indices)].add(
        array_creation.arange(n_insert, dtype=_aval(indices).dtype))
    arr_mask = array_creation.ones(n_input + n_insert, dtype=bool).at[values_ind].set(False)
    arr_ind = selection.where(arr_mask, size=n_input)[0]
    lead = (slice(None),) * axis
    out = out.at[lead + (values_ind,)].set(values_arr)
    return out.at[lead + (arr_ind,)].set(a)
