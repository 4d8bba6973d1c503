"""`jax.scipy.stats.truncnorm`: the normal distribution with location `loc` and scale
`scale` truncated to the standardized interval `[a, b]`.

Arguments are promoted to a common inexact dtype and broadcast together; every function
is NaN where `a >= b`."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import array_creation, joining, selection, ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats import norm
from justjax._src.scipy.stats.common import NAN, NEG_INF, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(log_x: Any, log_y: Any) -> Any:
    """`log(exp(log_x) - exp(log_y))`, computed stably."""
    values = joining.stack([log_x, log_y])
    signs = joining.stack([array_creation.ones_like(log_x),
                           ufuncs.negative(array_creation.ones_like(log_y))])
    return special.logsumexp(values, b=signs, axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """The log of the standard normal's mass on `[a, b]`, accurate in both tails: an
    interval in a tail is the difference of two `log_ndtr`s (mirrored into the left tail),
    one around 0 is `log1p` of the two tails' masses."""
    a, b = util.broadcast_arrays(array_creation.array(a), array_creation.array(b))
    left = lax.le(b, util.const(b, 0))
    right = lax.gt(a, util.const(a, 0))
    central = ufuncs.logical_not(ufuncs.logical_or(left, right))
    a_tail = selection.where(right, ufuncs.negative(b), a)
    b_tail = selection.where(right, ufuncs.negative(a), b)
    mass_tail = _log_diff(special.log_ndtr(b_tail), special.log_ndtr(a_tail))
    tails = ufuncs.add(special.ndtr(a), special.ndtr(ufuncs.negative(b)))
    mass_central = ufuncs.log1p(ufuncs.negative(tails))
    return selection.where(central, mass_central, mass_tail)


@util.jitted_as_in_jax
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density: the normal's, less the log of its mass on `[a, b]`; `-inf` where
    the standardized `x` lies outside `[a, b]`.

    Args:
      x: where to evaluate.
      a, b: the truncation interval, in standard deviations from `loc`.
      loc: the untruncated mean.
      scale: the untruncated standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, b, loc, scale = util.promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    values = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    z = standardize(x, loc, scale)
    values = selection.where(ufuncs.logical_or(ufuncs.less(z, a), ufuncs.greater(z, b)),
                             NEG_INF, values)
    return selection.where(ufuncs.greater_equal(a, b), NAN, values)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, a, b, loc, scale))`.

    Args:
      x: where to evaluate.
      a, b: the truncation interval, in standard deviations from `loc`.
      loc: the untruncated mean.
      scale: the untruncated standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, a, b, loc, scale))


@util.jitted_as_in_jax
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF: `log mass[a, z] - log mass[a, b]`, or `log1p(-sf)` near 1
    (where the first loses digits); 0 from `b` on, `-inf` up to `a`.

    Args:
      x: where to evaluate.
      a, b: the truncation interval, in standard deviations from `loc`.
      loc: the untruncated mean.
      scale: the untruncated standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, b, loc, scale = util.promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = util.broadcast_arrays(x, a, b)
    z = standardize(x, loc, scale)
    log_mass = _log_gauss_mass(a, b)
    log_lower = ufuncs.subtract(_log_gauss_mass(a, z), log_mass)
    log_upper = ufuncs.subtract(_log_gauss_mass(z, b), log_mass)
    near_one = ufuncs.log1p(ufuncs.negative(ufuncs.exp(log_upper)))
    values = selection.select(
        [ufuncs.greater_equal(z, b), ufuncs.less_equal(z, a), ufuncs.greater(log_lower, -0.1),
         ufuncs.greater(z, a)],
        [0, NEG_INF, near_one, log_lower])
    return selection.where(ufuncs.greater_equal(a, b), NAN, values)


@util.jitted_as_in_jax
def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function, `exp(logcdf(x, a, b, loc, scale))`.

    Args:
      x: where to evaluate.
      a, b: the truncation interval, in standard deviations from `loc`.
      loc: the untruncated mean.
      scale: the untruncated standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logcdf(x, a, b, loc, scale))


@util.jitted_as_in_jax
def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function: the mirrored distribution's log CDF,
    `logcdf(-x, -b, -a, -loc, scale)`.

    Args:
      x: where to evaluate.
      a, b: the truncation interval, in standard deviations from `loc`.
      loc: the untruncated mean.
      scale: the untruncated standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, b, loc, scale = util.promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(lax.neg(x), lax.neg(b), lax.neg(a), lax.neg(loc), scale)


@util.jitted_as_in_jax
def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function, `exp(logsf(x, a, b, loc, scale))`.

    Args:
      x: where to evaluate.
      a, b: the truncation interval, in standard deviations from `loc`.
      loc: the untruncated mean.
      scale: the untruncated standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logsf(x, a, b, loc, scale))
