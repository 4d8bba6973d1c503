"""`jax.numpy.linalg`'s norms, condition numbers, least squares and the array-API helpers
(`matrix_transpose`, `diagonal`, `trace`, `outer`, `cross`, `vecdot`, `matmul`,
`tensordot`, `tensorinv`, `tensorsolve`, `multi_dot`), written as JAX writes them."""
from __future__ import annotations

import itertools
import math
import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.lax import structural
from justjax._src.compilation.jit import jit
from justjax._src.numpy import (array_creation, diagonals, reductions, shape_ops, tensor,
                                ufuncs, util)
from justjax._src.numpy.linalg import inv, solve, svd, svdvals
from justjax._src.numpy.scalar_types import finfo

__all__ = ["cond", "cross", "diagonal", "lstsq", "matmul", "matrix_norm", "matrix_transpose",
           "multi_dot", "norm", "outer", "tensordot", "tensorinv", "tensorsolve", "trace",
           "vecdot", "vector_norm"]


def _sum_of_squares(x: Any, axis: Any, keepdims: bool) -> Any:
    """sqrt(sum |x|^2): the 2-norm of vectors and the Frobenius norm of matrices."""
    return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axis,
                                      keepdims=keepdims))


@util.jitted_as_in_jax(static_argnames=("ord", "axis", "keepdims"))
def norm(x: Any, ord: int | str | None = None, axis: None | tuple[int, ...] | int = None,
         keepdims: bool = False) -> Any:
    """Vector norms (one axis) or matrix norms (two axes) of `x`.

    Args:
      x: an array; integers are promoted to floats.
      ord: None (2-norm / Frobenius), an integer, +-inf, 'fro' or 'nuc'.
      axis: None (every axis: a vector norm of all elements when `ord` is None), an axis, or
        a pair of axes.
      keepdims: whether the reduced axes stay, with size 1.
    Returns:
      The real norms.
    """
    x = util.ensure_arraylike("jnp.linalg.norm", x)
    x, = util.promote_dtypes_inexact(x)
    ndim = x.ndim
    if axis is None:
        if ord is None:
            return _sum_of_squares(x, None, keepdims)
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(util.canonicalize_axis(a, ndim) for a in axis)
    else:
        axis = (util.canonicalize_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to compute "
                     "a vector-norm, or two axes to compute a matrix-norm.")


def _matrix_norm(x: Any, ord: Any, axis: tuple[int, int], keepdims: bool) -> Any:
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return _sum_of_squares(x, axis, keepdims)
    if ord in (1, -1):
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=row_axis, keepdims=keepdims)
        if ord == 1:
            return reductions.amax(sums, axis=col_axis, keepdims=keepdims, initial=0)
        return reductions.amin(sums, axis=col_axis, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=col_axis, keepdims=keepdims)
        if ord == np.inf:
            return reductions.amax(sums, axis=row_axis, keepdims=keepdims, initial=0)
        return reductions.amin(sums, axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        x = shape_ops.moveaxis(x, axis, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = reductions.amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = reductions.amin(s, axis=-1)
        else:
            y = reductions.sum(s, axis=-1)
        if keepdims:
            y = shape_ops.expand_dims(y, axis)
        return y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | str = 2) -> Any:
    """Vector norms of `x` over `axis` (all elements when None).

    Args:
      x: an array.
      axis: the axis or axes reduced.
      keepdims: whether they stay, with size 1.
      ord: 2 (None), +-inf, 0 (the count of nonzeros), 1, or any other number p
        (`sum(|x|^p)^(1/p)`).
    Returns:
      The norms.
    """
    x = util.ensure_arraylike("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return _sum_of_squares(x, axis, keepdims)
    if ord == np.inf:
        return reductions.amax(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.amin(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return reductions.sum(x != 0, dtype=finfo(x.dtype).dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = ufuncs.abs(x)
    ord_arr = util.const(abs_x, ord)
    ord_inv = util.const(abs_x, 1. / ord_arr)
    out = reductions.sum(abs_x ** ord_arr, axis=axis, keepdims=keepdims)
    return ufuncs.power(out, ord_inv)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: str | int = "fro") -> Any:
    """Matrix norms over the last two axes (`norm(x, ord, axis=(-2, -1))`)."""
    x = util.ensure_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


@util.jitted_as_in_jax(static_argnames=("p",))
def cond(x: Any, p: Any = None) -> Any:
    """The condition number of `x` in the norm `p` (None or 2: the ratio of the extreme
    singular values); inf where it is undefined but `x` has no NaN."""
    arr = util.ensure_arraylike("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={arr.shape}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got "
                             f"arr.shape={arr.shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    undefined = ufuncs.isnan(r) & ~ufuncs.isnan(x).any(axis=(-2, -1))
    return util.where(undefined, np.inf, r)


def _lstsq(a: Any, b: Any, rcond: Any, *, numpy_resid: bool = False
           ) -> tuple[Any, Any, Any, Any]:
    a, b = util.promote_dtypes_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = b.ndim
    if b_orig_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = array_creation.empty(0, dtype=a.dtype)
        rank = array_creation.array(0, dtype=int)
        x = array_creation.zeros((n, *b.shape[1:]), dtype=a.dtype)
    else:
        if rcond is None:
            rcond = float(finfo(dtype).eps) * max(n, m)
        else:
            rcond = util.where(rcond < 0, finfo(dtype).eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= array_creation.array(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = util.where(mask, s, 1).astype(a.dtype)
        s_inv = util.where(mask, 1 / safe_s, 0)[:, np.newaxis]
        highest = "highest"
        u_tb = tensor.matmul(u.conj().T, b, precision=highest)
        x = tensor.matmul(vt.conj().T, s_inv * u_tb, precision=highest)
    if numpy_resid and (rank < n or m <= n):
        resid = array_creation.asarray([])
    else:
        b_estimate = tensor.matmul(a, x, precision="highest")
        resid = norm(b - b_estimate, axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


_jit_lstsq = jit(_lstsq)


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False
          ) -> tuple[Any, Any, Any, Any]:
    """The least-squares solution of `a @ x = b` from the SVD of `a`.

    Args:
      a: an `(M, N)` matrix.
      b: `(M,)` or `(M, K)`.
      rcond: singular values below `rcond` times the largest count as zero (default: eps
        times max(M, N)).
      numpy_resid: whether to return NumPy's empty residuals where the system is not
        overdetermined of full rank (not jittable).
    Returns:
      `(x, residuals, rank, s)`.
    """
    a, b = util.ensure_arraylike("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _jit_lstsq(a, b, rcond)


# ---------------------------------------------------------------------------------------------
# The array API's linalg namespace.

def matrix_transpose(x: Any, /) -> Any:
    """`x` with its last two axes swapped."""
    x_arr = util.ensure_arraylike("jnp.linalg.matrix_transpose", x)
    ndim = x_arr.ndim
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim}")
    return structural.transpose(x_arr, (*range(ndim - 2), ndim - 1, ndim - 2))


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The `offset` diagonals of the matrices in the last two axes."""
    x = util.ensure_arraylike("jnp.linalg.diagonal", x)
    return diagonals.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The traces of the matrices in the last two axes."""
    x = util.ensure_arraylike("jnp.linalg.trace", x)
    return diagonals.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two vectors."""
    x1, x2 = util.ensure_arraylike("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} "
                         f"x2.ndim={x2.ndim}")
    return x1[:, None] * x2[None, :]


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Cross products of 3-vectors along `axis`."""
    x1, x2 = util.ensure_arraylike("jnp.linalg.outer", x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={x1.shape[axis]} and "
                         f"x2.shape[axis]={x2.shape[axis]}")
    return tensor.cross(x1, x2, axis=axis)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """The (conjugated) dot products of vectors along `axis`."""
    x1, x2 = util.ensure_arraylike("jnp.linalg.vecdot", x1, x2)
    return tensor.vecdot(x1, x2, axis=axis, precision=precision,
                         preferred_element_type=preferred_element_type)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """`x1 @ x2`."""
    x1, x2 = util.ensure_arraylike("jnp.linalg.matmul", x1, x2)
    return tensor.matmul(x1, x2, precision=precision,
                         preferred_element_type=preferred_element_type)


def tensordot(x1: Any, x2: Any, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2,
              precision: Any = None, preferred_element_type: Any = None,
              out_sharding: Any = None) -> Any:
    """`jnp.tensordot` with the array API's signature."""
    x1, x2 = util.ensure_arraylike("jnp.linalg.tensordot", x1, x2)
    return tensor.tensordot(x1, x2, axes=axes, precision=precision,
                            preferred_element_type=preferred_element_type,
                            out_sharding=out_sharding)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of `a` seen as a linear map from its last axes to its first `ind`."""
    arr = util.ensure_arraylike("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting_shape, batch_shape = arr.shape[:ind], arr.shape[ind:]
    flatshape = (math.prod(contracting_shape), math.prod(batch_shape))
    if flatshape[0] != flatshape[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={arr.shape} with ind={ind}.")
    return inv(arr.reshape(flatshape)).reshape(*batch_shape, *contracting_shape)


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """The `x` with `tensordot(a, x, x.ndim) = b`."""
    a_arr, b_arr = util.ensure_arraylike("tensorsolve", a, b)
    if axes is not None:
        a_arr = shape_ops.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
    out_shape = a_arr.shape[b_arr.ndim:]
    if a_arr.shape[:b_arr.ndim] != b_arr.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of b. "
                         f"got a.shape={a_arr.shape}, b.shape={b_arr.shape}")
    if b_arr.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == "
                         f"prod(a.shape[b.ndim:]); got a.shape={a_arr.shape}, "
                         f"b.ndim={b_arr.ndim}.")
    a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
    return solve(a_arr, b_arr.ravel()).reshape(out_shape)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of a chain of matrices (the first and last may be vectors), in the
    cheapest order."""
    arrs = list(util.ensure_arraylike("jnp.linalg.multi_dot", *arrays))
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {[a.shape for a in arrs]}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:], strict=True)):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of "
                         f"following array. Got array shapes {[a.shape for a in arrs]}")
    einsum_axes: list[tuple[int, ...]] = [(i, i + 1) for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        einsum_axes[0] = einsum_axes[0][1:]
    if arrs[-1].ndim == 1:
        einsum_axes[-1] = einsum_axes[-1][:1]
    return tensor.einsum(*itertools.chain(*zip(arrs, einsum_axes, strict=True)),
                         optimize="auto", precision=precision)

