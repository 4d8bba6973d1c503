"""`jax.scipy.stats.norm`: the normal distribution with location `loc` and scale `scale`.

Arguments are promoted to a common inexact dtype and broadcast together (as
`promote_args_inexact` does); the CDF-based functions take float32 and float64 only, as
`jax.scipy.special.ndtr` does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import array_creation, util
from justjax._src.scipy import special

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `-((x - loc) / scale)**2 / 2 - log(sqrt(2 pi) scale)`.

    Args:
      x: where to evaluate.
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(util.const(x, 2 * np.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), util.const(x, -2))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, loc, scale))`.

    Args:
      x: where to evaluate.
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function, `ndtr((x - loc) / scale)`.

    Args:
      x: where to evaluate.
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array (float32 or float64; other dtypes raise TypeError).
    """
    x, loc, scale = util.promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF, `log_ndtr((x - loc) / scale)`, accurate in both tails.

    Args:
      x: where to evaluate.
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array (float32 or float64; other dtypes raise TypeError).
    """
    x, loc, scale = util.promote_args_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The percent point function (inverse CDF), `ndtri(q) * scale + loc`.

    Args:
      q: probabilities (float32 or float64; other dtypes raise TypeError).
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array of the default float dtype.
    """
    return array_creation.asarray(special.ndtri(q) * scale + loc, float)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function `1 - cdf`, computed as `cdf(-x, -loc, scale)`.

    Args:
      x: where to evaluate.
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array (float32 or float64; other dtypes raise TypeError).
    """
    x, loc, scale = util.promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function, `logcdf(-x, -loc, scale)`.

    Args:
      x: where to evaluate.
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array (float32 or float64; other dtypes raise TypeError).
    """
    x, loc, scale = util.promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function, `ppf(1 - q, loc, scale)`.

    Args:
      q: probabilities (float32 or float64; other dtypes raise TypeError).
      loc: the mean.
      scale: the standard deviation.
    Returns:
      An array of the default float dtype.
    """
    return ppf(lax.sub(util.const(q, 1), q), loc, scale)
