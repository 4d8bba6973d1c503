"""`jax.scipy.stats.multivariate_normal`: the multivariate normal distribution with mean
`mean` and covariance `cov` (the dimension along the last axis)."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from justjax._src.core import core
from justjax._src.lax import linalg as lax_linalg
from justjax._src.lax import linalg_triangular
from justjax._src.numpy import diagonals, reductions, tensor, ufuncs, util, vectorize

__all__ = ["logpdf", "pdf"]


def _scalar_mean(x: Any, mean: Any, cov: Any) -> Any:
    """One dimension: the normal log density with variance `cov`."""
    quadratic = ufuncs.true_divide(ufuncs.multiply(-0.5, ufuncs.square(ufuncs.subtract(x, mean))),
                                   cov)
    return ufuncs.subtract(quadratic, ufuncs.multiply(0.5, ufuncs.add(ufuncs.log(2 * np.pi),
                                                                      ufuncs.log(cov))))


def _isotropic(x: Any, mean: Any, cov: Any, n: int) -> Any:
    """A scalar covariance: `cov` times the identity."""
    y = ufuncs.subtract(x, mean)
    quadratic = ufuncs.true_divide(
        ufuncs.multiply(-0.5, tensor.einsum("...i,...i->...", y, y)), cov)
    return ufuncs.subtract(quadratic, ufuncs.multiply(n / 2, ufuncs.add(ufuncs.log(2 * np.pi),
                                                                        ufuncs.log(cov))))


def _full(x: Any, mean: Any, cov: Any, n: int) -> Any:
    """A full covariance, through its Cholesky factor `L`: the quadratic form is
    `|L^-1 (x - mean)|^2` and the log determinant `2 sum(log diag L)`."""
    cov_shape = core.get_aval(cov).shape
    if len(cov_shape) < 2 or cov_shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax_linalg.cholesky(cov)
    solve = vectorize.vectorize(
        functools.partial(linalg_triangular.triangular_solve, lower=True, transpose_a=True),
        signature="(n,n),(n)->(n)")
    y = solve(factor, ufuncs.subtract(x, mean))
    log_det_half = reductions.sum(
        ufuncs.log(diagonals.diagonal(factor, axis1=-1, axis2=-2)), axis=-1)
    quadratic = ufuncs.multiply(-0.5, tensor.einsum("...i,...i->...", y, y))
    return ufuncs.subtract(ufuncs.subtract(quadratic, n / 2 * ufuncs.log(2 * np.pi)),
                           log_det_half)


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """The log density `-(x - mean)^T cov^-1 (x - mean) / 2 - log det(2 pi cov) / 2`.

    A scalar `mean` makes it one-dimensional; a scalar `cov` with a vector `mean` is `cov`
    times the identity; otherwise `cov` is a (batch of) positive-definite matrices.

    Args:
      x: where to evaluate; the dimension along the last axis.
      mean: the mean.
      cov: the covariance.
      allow_singular: must be None (JAX supports no singular covariances).
    Returns:
      An array of the arguments' promoted inexact dtype, shaped by the batch dimensions.
    Raises:
      NotImplementedError: for an `allow_singular` other than None.
      ValueError: for a covariance whose shape does not match the mean.
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = util.promote_dtypes_inexact(x, mean, cov)
    mean_shape = core.get_aval(mean).shape
    if not mean_shape:
        return _scalar_mean(x, mean, cov)
    n = mean_shape[-1]
    if not core.get_aval(cov).shape:
        return _isotropic(x, mean, cov, n)
    return _full(x, mean, cov, n)


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The density, `exp(logpdf(x, mean, cov))`.

    Args:
      x: where to evaluate; the dimension along the last axis.
      mean: the mean.
      cov: the covariance.
    Returns:
      An array of the arguments' promoted inexact dtype, shaped by the batch dimensions.
    """
    return ufuncs.exp(logpdf(x, mean, cov))
