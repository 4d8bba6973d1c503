"""`jax.scipy.stats.gaussian_kde`: a Gaussian kernel density estimate of a (weighted)
sample, a pytree (its arrays are leaves), so it passes through `jit` and `vmap`."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.interpreters import batching
from justjax._src.numpy import (array_creation, diagonals, histograms, linalg, reductions,
                                shape_ops, tensor, ufuncs, util)
from justjax._src.random import keys, multivariate, samplers
from justjax._src.scipy import linalg as scipy_linalg
from justjax._src.scipy import special

__all__ = ["gaussian_kde"]

BandwidthMethod = None | str | Any | Callable[[Any], Any]


@tree_util.register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:  # noqa: N801 -- JAX's (and SciPy's) name
    """A Gaussian kernel density estimate, as `scipy.stats.gaussian_kde`.

    Attributes:
      neff: the effective sample size `1 / sum(weights**2)`.
      dataset: the sample, shape (d, n).
      weights: the normalized weights, shape (n,).
      covariance: the kernel covariance (the data's, times the bandwidth factor squared).
      inv_cov: its inverse.
    """

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: BandwidthMethod = None,
                 weights: Any = None) -> None:
        """Fits the estimate.

        Args:
          dataset: the sample: shape (n,) for one dimension, (d, n) for d.
          bw_method: 'scott' (the default), 'silverman', a scalar factor, or a callable
            taking the estimate and returning the factor.
          weights: optional weights of the points, shape (n,).
        Raises:
          NotImplementedError: for complex data.
          ValueError: for fewer than two elements, bad weights or a bad `bw_method`.
        """
        util.check_arraylike("gaussian_kde", dataset)
        dataset = shape_ops.atleast_2d(dataset)
        if dtypes.issubdtype(core.get_aval(dataset).dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not core.get_aval(dataset).size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = core.get_aval(dataset).shape
        dataset, weights = _normalized_weights(dataset, weights, n)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", ufuncs.true_divide(1, reductions.sum(ufuncs.square(weights))))
        factor = self._bandwidth_factor(bw_method, neff, d)
        data_covariance = shape_ops.atleast_2d(
            histograms.cov(dataset, rowvar=True, bias=False, aweights=weights))
        factor_squared = ufuncs.square(factor)
        self._set("covariance", ufuncs.multiply(data_covariance, factor_squared))
        self._set("inv_cov", ufuncs.true_divide(linalg.inv(data_covariance), factor_squared))

    def _set(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)
        return value

    def _bandwidth_factor(self, bw_method: BandwidthMethod, neff: Any, d: int) -> Any:
        """The factor scaling the data covariance's square root into the kernel's."""
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            return ufuncs.power(neff, -1.0 / (d + 4))
        if isinstance(bw_method, str) and bw_method == "silverman":
            return ufuncs.power(ufuncs.true_divide(ufuncs.multiply(neff, d + 2), 4.0),
                                -1.0 / (d + 4))
        if shape_ops.isscalar(bw_method) and not isinstance(bw_method, str):
            return bw_method
        if callable(bw_method):
            return bw_method(self)
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        """The five arrays are the leaves."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> gaussian_kde:
        """Rebuilds an estimate from its leaves without refitting."""
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                               children, strict=True):
            kde._set(name, value)
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions."""
        return core.get_aval(self.dataset).shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return core.get_aval(self.dataset).shape[1]

    def evaluate(self, points: Any) -> Any:
        """The estimated density at `points`.

        Args:
          points: shape (d, m), or (m,) for one dimension (or (d,) for one point).
        Returns:
          The densities, shape (m,).
        """
        util.check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        result = _gaussian_kernel_eval(False, self.dataset.T, self.weights[:, None], points.T,
                                       self.inv_cov)
        return result[:, 0]

    def __call__(self, points: Any) -> Any:
        """`evaluate(points)`."""
        return self.evaluate(points)

    def pdf(self, x: Any) -> Any:
        """`evaluate(x)`.

        Args:
          x: the points, as for `evaluate`.
        Returns:
          The densities.
        """
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log of the estimated density, summed in log space (no underflow far out).

        Args:
          x: the points, as for `evaluate`.
        Returns:
          The log densities, shape (m,).
        """
        util.check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        result = _gaussian_kernel_eval(True, self.dataset.T, self.weights[:, None], x.T,
                                       self.inv_cov)
        return result[:, 0]

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the estimate times a Gaussian density.

        Args:
          mean: the Gaussian's mean, shape (d,).
          cov: its covariance, shape (d, d).
        Returns:
          A scalar.
        Raises:
          ValueError: for a mean or covariance of the wrong dimension.
        """
        mean = shape_ops.atleast_1d(shape_ops.squeeze(mean))
        cov = shape_ops.atleast_2d(cov)
        if core.get_aval(mean).shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if core.get_aval(cov).shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        factor, norm = _convolution_factor(ufuncs.add(self.covariance, cov), self.d)
        return _convolve(factor, norm, self.dataset, self.weights, mean)

    @util.jitted_as_in_jax
    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The estimate's mass on `[low, high]` (one dimension only; jitted, as in JAX).

        Args:
          low, high: the interval's ends, scalars.
        Returns:
          A scalar.
        Raises:
          ValueError: for more than one dimension or non-scalar limits.
        """
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = shape_ops.squeeze(ufuncs.sqrt(self.covariance))
        low = shape_ops.squeeze(ufuncs.true_divide(ufuncs.subtract(low, self.dataset), sigma))
        high = shape_ops.squeeze(ufuncs.true_divide(ufuncs.subtract(high, self.dataset), sigma))
        mass = ufuncs.subtract(special.ndtr(high), special.ndtr(low))
        return reductions.sum(ufuncs.multiply(self.weights, mass))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of two estimates.

        Args:
          other: an estimate of the same dimension.
        Returns:
          A scalar.
        Raises:
          ValueError: for estimates of different dimensions.
        """
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        factor, norm = _convolution_factor(ufuncs.add(self.covariance, other.covariance),
                                           self.d)
        small, large = (self, other) if self.n < other.n else (other, self)
        convolve = functools.partial(_convolve, factor, norm, large.dataset, large.weights)
        values = batching.vmap_positional(convolve, [1])(small.dataset)
        return reductions.sum(ufuncs.multiply(values, small.weights))

    @functools.partial(util.jitted_as_in_jax, static_argnames=("shape",))
    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """Draws from the estimate: a data point picked by weight, plus kernel noise
        (jitted, as in JAX).

        Args:
          key: a PRNG key.
          shape: the batch shape of the draws.
        Returns:
          An array of shape (d, *shape).
        """
        index_key, noise_key = keys.split(key)
        index = samplers.choice(index_key, self.n, shape=shape, p=self.weights)
        dtype = core.get_aval(self.dataset).dtype
        noise = multivariate.multivariate_normal(
            noise_key, array_creation.zeros(self.d, core.get_aval(self.covariance).dtype),
            self.covariance, shape=shape, dtype=dtype).T
        return ufuncs.add(self.dataset[:, index], noise)

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not supported (JAX supports 1-D boxes only): raises NotImplementedError."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: BandwidthMethod = None) -> None:
        """Not supported (the estimate is immutable): raises NotImplementedError."""
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Any:
        """Points as (d, m); a (1, d) row is read as one point."""
        if dtypes.issubdtype(util.asarray_lite(points).dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = shape_ops.atleast_2d(points)
        d, m = core.get_aval(points).shape
        if d != self.d:
            if d == 1 and m == self.d:
                return shape_ops.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _normalized_weights(dataset: Any, weights: Any, n: int) -> tuple[Any, Any]:
    """The dataset promoted to inexact, and weights summing to 1 (uniform by default)."""
    if weights is None:
        [dataset] = util.promote_dtypes_inexact(dataset)
        dtype = core.get_aval(dataset).dtype
        return dataset, array_creation.full(n, 1.0 / n, dtype=dtype)
    util.check_arraylike("gaussian_kde", weights)
    dataset, weights = util.promote_dtypes_inexact(dataset, weights)
    weights = shape_ops.atleast_1d(weights)
    weights = ufuncs.true_divide(weights, reductions.sum(weights))
    if core.get_aval(weights).ndim != 1:
        raise ValueError("`weights` input should be one-dimensional.")
    if core.get_aval(weights).shape[0] != n:
        raise ValueError("`weights` input should be of length n")
    return dataset, weights


def _convolution_factor(covariance: Any, d: int) -> tuple[Any, Any]:
    """The Cholesky factorization of a summed covariance (`cho_factor`'s pair) and the
    Gaussian normalizer `1 / ((2 pi)^(d/2) det(L))`."""
    factor = scipy_linalg.cho_factor(covariance)
    det = reductions.prod(diagonals.diag(factor[0]))
    norm = ufuncs.multiply(ufuncs.power(ufuncs.sqrt(2 * np.pi), d), det)
    return factor, ufuncs.true_divide(1.0, norm)


def _convolve(factor: Any, norm: Any, target: Any, weights: Any, mean: Any) -> Any:
    """`sum_j w_j N(mean; target_j, C)` for `cho_factor(C)`."""
    diff = ufuncs.subtract(target, mean[:, None])
    alpha = scipy_linalg.cho_solve(factor, diff)
    quadratic = ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(diff, alpha), axis=0))
    return ufuncs.multiply(norm, reductions.sum(ufuncs.multiply(ufuncs.exp(
        ufuncs.negative(quadratic)), weights)))


@functools.partial(util.jitted_as_in_jax, static_argnums=0)
def _gaussian_kernel_eval(in_log: bool, points: Any, values: Any, xi: Any,
                          precision: Any) -> Any:
    """`sum_j values_j N(xi_i; points_j, precision^-1)` for every row `xi_i` (or its log,
    through logsumexp), shape (m, 1) for values of shape (n, 1): the points are whitened by
    the precision's Cholesky factor, so each kernel is an isotropic Gaussian."""
    points, values, xi, precision = util.promote_dtypes_inexact(points, values, xi, precision)
    d = core.get_aval(points).shape[1]
    if core.get_aval(xi).shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if core.get_aval(precision).shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = scipy_linalg.cholesky(precision, lower=True)
    points = tensor.dot(points, whitening)
    xi = tensor.dot(xi, whitening)
    log_norm = ufuncs.subtract(reductions.sum(ufuncs.log(diagonals.diag(whitening))),
                               ufuncs.multiply(0.5 * d, ufuncs.log(2 * np.pi)))

    def kernel(x_test: Any, x_train: Any, y_train: Any) -> Any:
        arg = ufuncs.subtract(log_norm, ufuncs.multiply(
            0.5, reductions.sum(ufuncs.square(ufuncs.subtract(x_train, x_test)))))
        if in_log:
            return ufuncs.add(ufuncs.log(y_train), arg)
        return ufuncs.multiply(y_train, ufuncs.exp(arg))

    reduce = special.logsumexp if in_log else reductions.sum

    def reduced_kernel(x: Any) -> Any:
        per_point = batching.vmap_positional(kernel, [None, 0, 0])(x, points, values)
        return reduce(per_point, axis=0)

    return batching.vmap_positional(reduced_kernel, [0])(xi)
