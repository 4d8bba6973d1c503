"""`jax.scipy.stats.gamma`: the gamma distribution with shape `a`, location `loc` and
scale `scale`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.numpy import selection, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF, fill_where, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `(a - 1) log(y) - y - gammaln(a) - log(scale)`,
    `y = (x - loc) / scale`; `-inf` below `loc`.

    Args:
      x: where to evaluate.
      a: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, loc, scale = util.promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    inside = lax.ge(x, loc)
    one = util.const(x, 1)
    # Outside the support y is 1, so that neither the value nor its gradient is NaN there.
    y = selection.where(inside, standardize(x, loc, scale), one)
    log_kernel = lax.sub(special.xlogy(lax.sub(a, one), y), y)
    log_probs = lax.sub(log_kernel, lax.add(special.gammaln(a), lax.log(scale)))
    return selection.where(inside, log_probs, NEG_INF)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, a, loc, scale))`.

    Args:
      x: where to evaluate.
      a: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function `gammainc(a, y)` (y clamped at 0).

    Args:
      x: where to evaluate.
      a: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, loc, scale = util.promote_args_inexact("gamma.cdf", x, a, loc, scale)
    y = lax_selection.clamp(util.const(x, 0), standardize(x, loc, scale), util.const(x, np.inf))
    return special.gammainc(a, y)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF.

    Args:
      x: where to evaluate.
      a: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function `gammaincc(a, y)`; 1 below `loc`.

    Args:
      x: where to evaluate.
      a: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, loc, scale = util.promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = standardize(x, loc, scale)
    return fill_where(lax.lt(y, util.const(y, 0)), 1, special.gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function.

    Args:
      x: where to evaluate.
      a: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log(sf(x, a, loc, scale))
