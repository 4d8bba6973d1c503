"""`jax.random`'s matrix-valued samplers, with JAX's algorithms: `multivariate_normal` (a
factor of the covariance, by Cholesky, eigendecomposition or SVD, times standard normals)
and `orthogonal` (Mezzadri's method: the Q of a Gaussian matrix's QR, its columns' signs
fixed by R's diagonal, which makes it Haar-distributed).

Both call jitted functions named as JAX names them (`_multivariate_normal`, `_orthogonal`),
so jaxprs print the same nested `jit` equations.
"""
from __future__ import annotations

import functools
from operator import index
from typing import Any, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.compilation.jit import jit
from justjax._src.numpy import linalg as jnp_linalg
from justjax._src.numpy import linalg_extra, shape_ops, tensor, ufuncs
from justjax._src.numpy.util import broadcast_shapes, promote_dtypes_inexact
from justjax._src.random.distributions import check_shape, normal
from justjax._src.random.keys import check_prng_key
from justjax._src.random.layout import lays_out

__all__ = ["multivariate_normal", "orthogonal"]


@lays_out
def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky", *,
                        out_sharding: Any = None) -> Any:
    """Multivariate normal random vectors with the given mean and covariance.

    Args:
      key: a PRNG key.
      mean: the mean vectors, shape `(..., n)`.
      cov: the positive (semi)definite covariance matrices, shape `(..., n, n)`.
      shape: the batch shape, broadcast-compatible with `mean.shape[:-1]` and
        `cov.shape[:-2]` (default: those broadcast together).
      dtype: a float dtype (default: the promoted dtype of `mean` and `cov`).
      method: how to factor `cov`: "cholesky" (default), "eigh" or "svd" (the last two
        accept singular covariances).
    Returns:
      An array of shape `shape + (n,)` (StableHLO: the factorization's custom calls or
      loops, a `dot_general` and an `add`).
    """
    key, _ = check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if dtype is None:
        dtype = mean.dtype
    else:
        dtype = dtypes.check_user_dtype(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError("dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtypes.dtype_name(dtype)}")
    if shape is not None:
        shape = core.canonicalize_shape(shape)
    return _multivariate_normal(key, mean, cov, shape, dtype, method)


def _check_mean_and_cov(mean: Any, cov: Any) -> None:
    if not np.ndim(mean) >= 1:
        raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{np.ndim(mean)}")
    if not np.ndim(cov) >= 2:
        raise ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{np.ndim(cov)}")
    n = np.shape(mean)[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {np.shape(cov)}.")


@functools.partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(key: Any, mean: Any, cov: Any, shape: tuple[int, ...] | None,
                         dtype: np.dtype, method: str) -> Any:
    _check_mean_and_cov(mean, cov)
    if shape is None:
        shape = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = jnp_linalg.svd(cov)
        factor = u * ufuncs.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp_linalg.eigh(cov)
        factor = v * ufuncs.sqrt(w[..., None, :])
    else:
        factor = jnp_linalg.cholesky(cov)
    normal_samples = normal(key, shape + mean.shape[-1:], dtype)
    with config.override("jax_numpy_rank_promotion", "allow"):
        return mean + tensor.einsum("...ij,...j->...i", factor, normal_samples)


@lays_out
def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None, *, out_sharding: Any = None) -> Any:
    """Random matrices uniform (Haar) on the orthogonal group O(n), or the unitary group for
    complex dtypes; semi-orthogonal `n x m` ones when `m` differs from `n`.

    Args:
      key: a PRNG key.
      n: the number of rows.
      shape: the batch shape.
      dtype: a float or complex dtype.
      m: the number of columns (default `n`).
    Returns:
      An array of shape `shape + (n, m)` (StableHLO: a QR factorization and multiplies).
    """
    _m = n if m is None else m
    shape = core.canonicalize_shape(shape)
    key, _ = check_prng_key("orthogonal", key)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    check_shape("orthogonal", shape)
    n = core.concrete_or_error(index, n, "The error occurred in jax.random.orthogonal()")
    _m = core.concrete_or_error(index, _m, "The error occurred in jax.random.orthogonal()")
    return _orthogonal(key, n, _m, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(key: Any, n: int, _m: int, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    z = normal(key, (*shape, max(n, _m), min(n, _m)), dtype)
    q, r = jnp_linalg.qr(z)
    d = linalg_extra.diagonal(r)
    x = q * shape_ops.expand_dims(ufuncs.sign(d), -2)
    if n < _m:
        return x.mT
    return x
