"""`jax.scipy.stats.chi2`: the chi-squared distribution with `df` degrees of freedom,
location `loc` and scale `scale`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.numpy import util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF, fill_where, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `(df/2 - 1) log(y) - y/2 - lgamma(df/2) - df log(2)/2 - log(scale)`,
    `y = (x - loc) / scale`; `-inf` below `loc`.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, df, loc, scale = util.promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    two = util.const(x, 2)
    y = standardize(x, loc, scale)
    half_df = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half_df, util.const(x, 1)), lax.log(y)), lax.div(y, two))
    log_norm = lax.neg(lax.add(lax.lgamma(half_df),
                               lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(log_norm, lax.log(scale)), kernel)
    return fill_where(lax.lt(x, loc), NEG_INF, log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, df, loc, scale))`.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, df, loc, scale))


def _half_y(x: Any, loc: Any, scale: Any) -> Any:
    """`(x - loc) / (2 scale)` clamped to `[0, inf]`: the incomplete gamma's argument."""
    half_y = lax.div(lax.sub(x, loc), lax.mul(scale, util.const(scale, 2)))
    return lax_selection.clamp(util.const(x, 0), half_y, util.const(x, np.inf))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function `gammainc(df/2, y/2)`.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, df, loc, scale = util.promote_args_inexact("chi2.cdf", x, df, loc, scale)
    half_df = lax.div(df, util.const(scale, 2))
    return special.gammainc(half_df, _half_y(x, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function `gammaincc(df/2, y/2)`.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, df, loc, scale = util.promote_args_inexact("chi2.sf", x, df, loc, scale)
    half_df = lax.div(df, util.const(scale, 2))
    return special.gammaincc(half_df, _half_y(x, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log(sf(x, df, loc, scale))
