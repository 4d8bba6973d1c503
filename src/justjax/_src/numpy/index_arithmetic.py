"""jax.numpy's index arithmetic, written with lax: `unravel_index`, `ravel_multi_index` and
`ix_`.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import array_creation, dtype_ops, reductions, selection, ufuncs, util
from justjax._src.numpy.shape_ops import (_asarray, _aval, _ndim, _shape, user_dtype)

__all__ = ["ix_", "ravel_multi_index", "unravel_index"]


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """Flat indices as coordinate arrays for `shape` (out-of-range indices are clipped)."""
    indices_arr = util.ensure_arraylike("unravel_index", indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out_indices: list[Any] = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        indices_arr, out_indices[i] = ufuncs.divmod(indices_arr, s)
    oob_pos = indices_arr > 0
    if dtypes.is_unsigned(_aval(indices_arr).dtype):
        oob_neg = array_creation.asarray(False)
    else:
        oob_neg = indices_arr < -1
    return tuple(selection.where(oob_pos, s - 1, selection.where(oob_neg, 0, i))
                 for s, i in zip(shape, out_indices, strict=True))


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:
    """Coordinate arrays as flat indices into an array of shape `dims`."""
    if len(multi_index) != len(dims):
        raise AssertionError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(core.concrete_or_error(operator.index, d,
                                        "in `dims` argument of ravel_multi_index().")
                 for d in dims)
    util.check_arraylike("ravel_multi_index", *multi_index)
    index_arrays = [_asarray(i) for i in multi_index]
    dtype = dtypes.result_type(int, *index_arrays) if dtype is None else \
        user_dtype(dtype, "ravel_multi_index")
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold "
                         f"flattened index for dims={dims}. Use the dtype argument to pass a "
                         "suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
    for index in index_arrays:
        if mode == "raise":
            core.concrete_or_error(_asarray, index, "The error occurred because "
                                   "ravel_multi_index was jit-compiled with mode='raise'. Use "
                                   "mode='wrap' or mode='clip' instead.")
        if not dtypes.is_int(_aval(index).dtype):
            raise TypeError("only int indices permitted")
    index_arrays = _ravel_mode(index_arrays, dims, mode)
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = array_creation.array(0, dtype=dtype)
    for i, s in zip(index_arrays, strides, strict=True):
        result = result + dtype_ops.astype(i, dtype) * int(s)
    return result


def _ravel_mode(index_arrays: list[Any], dims: tuple[int, ...], mode: str) -> list[Any]:
    if mode == "raise":
        if any(bool(reductions.any((i < 0) | (i >= d)))
               for i, d in zip(index_arrays, dims, strict=True)):
            raise ValueError("invalid entry in coordinates array")
        return index_arrays
    if mode == "clip":
        return [selection.clip(i, 0, d - 1) for i, d in zip(index_arrays, dims, strict=True)]
    if mode == "wrap":
        return [i % d for i, d in zip(index_arrays, dims, strict=True)]
    if mode == "ignore":
        return index_arrays
    raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-D sequences (each along its own axis)."""
    util.check_arraylike("ix", *args)
    args = [_asarray(a) for a in args]
    n = len(args)
    output = []
    for i, a in enumerate(args):
        if _ndim(a) != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{_shape(a)}")
        if _aval(a).dtype == dtypes.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = _shape(a)[0]
        if _aval(a).size == 0:
            zero = np.zeros((), dtypes.default_int_dtype())
            output.append(lax_struct.broadcast_in_dim(zero, shape, ()))
        else:
            output.append(lax_struct.broadcast_in_dim(a, shape, (i,)))
    return tuple(output)
