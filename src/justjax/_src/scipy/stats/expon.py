"""`jax.scipy.stats.expon`: the exponential distribution on `[loc, inf)` with scale `scale`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import array_creation, util
from justjax._src.scipy.stats.common import NAN, NEG_INF, fill_where, probability_outside

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `-(x - loc) / scale - log(scale)`; `-inf` below `loc`.

    Args:
      x: where to evaluate.
      loc: the left end of the support.
      scale: the mean of `x - loc`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return fill_where(lax.lt(x, loc), NEG_INF, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, loc, scale))`.

    Args:
      x: where to evaluate.
      loc: the left end of the support.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function `-expm1(-(x - loc) / scale)`; 0 below `loc`.

    Args:
      x: where to evaluate.
      loc: the left end of the support.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("expon.cdf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return fill_where(lax.lt(x, loc), array_creation.zeros_like(neg_z),
                      lax.neg(lax.expm1(neg_z)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function, `-(x - loc) / scale`; 0 below `loc`.

    Args:
      x: where to evaluate.
      loc: the left end of the support.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    # JAX names this function "expon.sf" in its argument errors.
    x, loc, scale = util.promote_args_inexact("expon.sf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return fill_where(lax.lt(x, loc), array_creation.zeros_like(neg_z), neg_z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function, `exp(logsf(x, loc, scale))`.

    Args:
      x: where to evaluate.
      loc: the left end of the support.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF, `log1p(-sf)`.

    Args:
      x: where to evaluate.
      loc: the left end of the support.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The percent point function `loc - scale log1p(-q)`; NaN for `q` outside [0, 1].

    Args:
      q: probabilities.
      loc: the left end of the support.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    q, loc, scale = util.promote_args_inexact("expon.ppf", q, loc, scale)
    quantile = lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q))))
    return fill_where(probability_outside(q), NAN, quantile)
