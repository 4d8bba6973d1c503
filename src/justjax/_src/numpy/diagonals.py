"""jax.numpy's triangle and diagonal functions, written with lax: `tril`, `triu`, `diagonal`,
`trace`, `diag`, `diagflat`, `diag_indices`, `diag_indices_from` and `fill_diagonal`.

The ones JAX wraps in `jit` are wrapped the same way (`util.jitted_as_in_jax`: same name,
static arguments and inline flag), so their jaxprs print JAX's `jit[name=...]` equations.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import slicing as lax_slicing
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import array_creation, rearranging, reductions, selection, util
from justjax._src.numpy.shape_ops import (_aval, _ndim, _shape, _zeros_like_scalar, moveaxis, ravel,
                                          user_dtype)

__all__ = ["diag", "diag_indices", "diag_indices_from", "diagflat", "diagonal", "fill_diagonal",
           "trace", "tril", "triu"]


# ---------------------------------------------------------------------------------------------
# Triangles.

@util.jitted_as_in_jax(static_argnames=("k",))
def tril(m: Any, k: int = 0) -> Any:
    """Zeroes the elements above the k-th diagonal of the last two axes."""
    m = util.ensure_arraylike("tril", m)
    m_shape = _shape(m)
    if len(m_shape) < 2:
        raise ValueError("Argument to jax.numpy.tril must be at least 2D")
    mask = array_creation.tri(*m_shape[-2:], k=k, dtype=bool)
    which = lax_struct.broadcast(mask, m_shape[:-2])
    return lax_selection.select(which, m, array_creation.zeros_like(m))


@util.jitted_as_in_jax(static_argnames=("k",))
def triu(m: Any, k: int = 0) -> Any:
    """Zeroes the elements below the k-th diagonal of the last two axes."""
    m = util.ensure_arraylike("triu", m)
    m_shape = _shape(m)
    if len(m_shape) < 2:
        raise ValueError("Argument to jax.numpy.triu must be at least 2D")
    mask = array_creation.tri(*m_shape[-2:], k=k - 1, dtype=bool)
    which = lax_struct.broadcast(mask, m_shape[:-2])
    return lax_selection.select(which, array_creation.zeros_like(m), m)


# ---------------------------------------------------------------------------------------------
# Diagonals.

@util.jitted_as_in_jax(static_argnames=("offset", "axis1", "axis2"))
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The `offset` diagonal of the plane (axis1, axis2), as the last axis (a gather)."""
    a = util.ensure_arraylike("diagonal", a)
    if _ndim(a) < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = core.concrete_or_error(operator.index, offset,
                                    "'offset' argument of jnp.diagonal()")
    a_shape = _shape(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    diag_size = builtins.max(0, builtins.min(a_shape[axis1] + builtins.min(offset, 0),
                                             a_shape[axis2] - builtins.max(offset, 0)))
    i = array_creation.arange(diag_size)
    j = array_creation.arange(abs(offset), abs(offset) + diag_size)
    return a[..., i, j] if offset >= 0 else a[..., j, i]


@util.jitted_as_in_jax(static_argnames=("axis1", "axis2", "dtype"))
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Any:
    """Sum along the `offset` diagonal of the plane (axis1, axis2)."""
    a = util.ensure_arraylike("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    nd = _ndim(a)
    if util.canonicalize_axis(axis1, nd) == util.canonicalize_axis(axis2, nd):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    if dtype is not None:
        dtype = user_dtype(dtype, "trace")
    a_shape = _shape(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    eye = array_creation.eye(a_shape[axis1], a_shape[axis2], k=offset, dtype=bool)
    a = selection.where(eye, a, array_creation.zeros_like(a))
    return reductions.sum(a, axis=(-2, -1), dtype=dtype)


def diag(v: Any, k: int = 0) -> Any:
    """The k-th diagonal of a 2-D array, or a 2-D array with 1-D `v` on its k-th diagonal."""
    v = util.ensure_arraylike("diag", v)
    return _diag(v, operator.index(k))


@util.jitted_as_in_jax(static_argnames=("k",))
def _diag(v: Any, k: int) -> Any:
    """`diag` of an array, jitted as JAX jits it."""
    v_shape = _shape(v)
    if len(v_shape) == 1:
        zero = _zeros_like_scalar(v)
        n = v_shape[0] + abs(k)
        v = lax_slicing.pad(v, zero, ((builtins.max(0, -k), builtins.max(0, k), 0),))
        return selection.where(array_creation.eye(n, k=k, dtype=bool), v[:, None], zero)
    if len(v_shape) == 2:
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-D array with the flattened `v` on its k-th diagonal."""
    util.check_arraylike("diagflat", v)
    v_ravel = ravel(v)
    v_length = _shape(v_ravel)[0]
    adj = v_length + abs(k)
    res = array_creation.zeros(adj * adj, dtype=_aval(v_ravel).dtype)
    i = array_creation.arange(0, adj - abs(k))
    fi = i + k + i * adj if k >= 0 else i + (i - k) * adj
    return res.at[fi].set(v_ravel).reshape(adj, adj)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Indices of the main diagonal of an n x n x ... array."""
    n = core.concrete_or_error(operator.index, n, "'n' argument of jnp.diag_indices()")
    ndim = core.concrete_or_error(operator.index, ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    index_dtype = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    if index_dtype == np.int32:
        index_dtype = dtypes.default_int_dtype()
    return (lax_struct.iota(index_dtype, n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """`diag_indices` for an array whose axes all have the same length."""
    arr = util.ensure_arraylike("diag_indices_from", arr)
    if _ndim(arr) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(_shape(arr))) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(_shape(arr)[0], ndim=_ndim(arr))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """A copy of `a` with its main diagonal set to `val` (JAX needs `inplace=False`)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a, val = util.ensure_arraylike("fill_diagonal", a, val)
    if _ndim(a) < 2:
        raise ValueError("array must be at least 2-d")
    if _ndim(a) > 2 and not all(d == _shape(a)[0] for d in _shape(a)[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = builtins.min(_shape(a))
    idx = diag_indices(n, _ndim(a))
    if _ndim(val) == 0:
        return a.at[idx].set(val)
    flat = ravel(val)
    if _aval(flat).size < n:
        flat = rearranging.tile(flat, int(np.ceil(n / _aval(flat).size)))
    return a.at[idx].set(flat[:n] if _aval(flat).size > n else flat)
