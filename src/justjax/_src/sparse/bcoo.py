"""`jax.experimental.sparse.BCOO`: a sparse array in coordinate form.

`data[k]` is the value at `indices[k]` (one row of `n_sparse` coordinates); entries past the
array's bounds are padding (`fromdense` with a larger `nse` pads with the index `shape` and
zeros, as JAX does) and are dropped when densifying. Duplicate indices add up.

This is JAX's BCOO without batch or dense dimensions (`n_batch == n_dense == 0`); those
raise a ValueError here. numpyro imports the class.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import justjax.numpy as jnp
from justjax import tree_util
from justjax._src.core import core

__all__ = ["BCOO", "bcoo_fromdense", "bcoo_todense", "fromdense", "todense"]


def _only_sparse_dims(n_batch: int, n_dense: int) -> None:
    if n_batch or n_dense:
        raise ValueError("justjax's BCOO has no batch or dense dimensions: n_batch and "
                         f"n_dense must be 0, got n_batch={n_batch}, n_dense={n_dense}")


@tree_util.register_pytree_node_class
class BCOO:
    """A sparse array: `data` (nse,) and `indices` (nse, ndim) of a dense array of `shape`.

    Args:
      args: `(data, indices)`.
      shape: the dense shape.
      indices_sorted: whether the indices are in row-major order.
      unique_indices: whether no index repeats.
    """

    __array_priority__ = 2000  # `ndarray @ BCOO` defers to `BCOO.__rmatmul__`

    def __init__(self, args: tuple[Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False) -> None:
        self.data, self.indices = map(jnp.asarray, args)
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        if self.indices.ndim != 2 or self.indices.shape[1] != len(self.shape):
            raise ValueError(f"BCOO indices of shape {self.indices.shape} do not index an "
                             f"array of shape {self.shape} (justjax's BCOO has no batch or "
                             "dense dimensions)")

    # -- structure -----------------------------------------------------------------------
    def tree_flatten(self) -> tuple[tuple[Any, Any], dict]:
        return (self.data, self.indices), {"shape": self.shape,
                                           "indices_sorted": self.indices_sorted,
                                           "unique_indices": self.unique_indices}

    @classmethod
    def tree_unflatten(cls, aux: dict, children: tuple[Any, Any]) -> BCOO:
        out = object.__new__(cls)
        out.data, out.indices = children
        out.shape = aux["shape"]
        out.indices_sorted = aux["indices_sorted"]
        out.unique_indices = aux["unique_indices"]
        return out

    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nse = property(lambda self: self.indices.shape[0])
    n_batch = property(lambda self: 0)
    n_dense = property(lambda self: 0)
    n_sparse = property(lambda self: len(self.shape))

    def __repr__(self) -> str:
        dims = ", ".join(map(str, self.shape))
        return f"BCOO({np.dtype(self.dtype).name}[{dims}], nse={self.nse})"

    # -- conversion ----------------------------------------------------------------------
    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCOO:
        """The BCOO of a dense array's nonzeros, in row-major order.

        Args:
          mat: the dense array.
          nse: how many entries to store (default: the number of nonzeros, which needs a
            concrete `mat`); more pad, fewer keep the first.
          index_dtype: the indices' dtype.

        Returns:
          The sparse array (sorted, unique indices).
        """
        _only_sparse_dims(n_batch, n_dense)
        mat = jnp.asarray(mat)
        if nse is None:
            nse = int(core.concrete_or_error(int, jnp.sum(mat != 0),
                                             "The error arose for the nse argument of "
                                             "bcoo_fromdense"))
        # Padding entries point one past the end (`shape`), where todense drops them.
        coords = jnp.nonzero(mat, size=nse, fill_value=mat.shape)
        indices = jnp.stack(coords, axis=1).astype(index_dtype) if mat.ndim else \
            jnp.zeros((nse, 0), index_dtype)
        data = mat.at[coords].get(mode="fill", fill_value=0)  # padding reads zeros
        return cls((data, indices), shape=mat.shape, indices_sorted=True,
                   unique_indices=True)

    def todense(self) -> Any:
        """The dense array (duplicates summed, padding dropped)."""
        dense = jnp.zeros(self.shape, self.dtype)
        return dense.at[tuple(self.indices.T)].add(self.data, mode="drop")

    # -- operations ----------------------------------------------------------------------
    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """The transposed sparse array (its indices' columns permuted)."""
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        return BCOO((self.data, self.indices[:, list(axes)]),
                    shape=[self.shape[a] for a in axes], indices_sorted=False,
                    unique_indices=self.unique_indices)

    T = property(transpose)

    def astype(self, dtype: Any) -> BCOO:
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def __neg__(self) -> BCOO:
        return BCOO((-self.data, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def __mul__(self, other: Any) -> BCOO:
        if np.ndim(other) != 0:
            return NotImplemented  # only scaling by a scalar keeps the sparsity here
        return BCOO((self.data * other, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    __rmul__ = __mul__

    def __matmul__(self, other: Any) -> Any:
        """`self @ dense`: each stored entry adds `data * other[column]` to its row."""
        other = jnp.asarray(other)
        if self.ndim != 2 or other.ndim not in (1, 2):
            return self.todense() @ other
        rows, cols = self.indices[:, 0], self.indices[:, 1]
        terms = self.data.reshape((-1,) + (1,) * (other.ndim - 1)) * other[cols]
        out = jnp.zeros((self.shape[0],) + other.shape[1:], terms.dtype)
        return out.at[rows].add(terms, mode="drop")

    def __rmatmul__(self, other: Any) -> Any:
        """`dense @ self`, as `(self.T @ dense.T).T`."""
        other = jnp.asarray(other)
        return (self.T @ other.T).T

    def block_until_ready(self) -> BCOO:
        self.data.block_until_ready()
        self.indices.block_until_ready()
        return self


def bcoo_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCOO:
    """`BCOO.fromdense(mat, ...)`."""
    return BCOO.fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                          index_dtype=index_dtype)


def bcoo_todense(mat: BCOO) -> Any:
    """`mat.todense()`."""
    return mat.todense()


def fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> BCOO:
    """A dense array as a BCOO (`BCOO.fromdense`)."""
    return BCOO.fromdense(mat, nse=nse, index_dtype=index_dtype)


def todense(arr: Any) -> Any:
    """A sparse array densified; a dense array as it is."""
    return arr.todense() if isinstance(arr, BCOO) else jnp.asarray(arr)
