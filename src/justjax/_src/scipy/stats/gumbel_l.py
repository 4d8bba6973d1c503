"""`jax.scipy.stats.gumbel_l`: the left-skewed Gumbel (extreme value type I, minima)
distribution with location `loc` and scale `scale`; every function is NaN where
`scale <= 0`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import selection, ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NAN, positive, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]



def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `-log(scale) + z - exp(z)`, `z = (x - loc) / scale`.

    Args:
      x: where to evaluate.
      loc: the mode.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    ok = positive(scale)
    z = standardize(x, loc, scale)
    values = lax.add(special.xlogy(-1, scale), lax.sub(z, lax.exp(z)))
    return selection.where(ok, values, NAN)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, loc, scale))`.

    Args:
      x: where to evaluate.
      loc: the mode.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF, `log(-expm1(-exp(z)))`.

    Args:
      x: where to evaluate.
      loc: the mode.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    ok = positive(scale)
    z = standardize(x, loc, scale)
    values = lax.log(lax.neg(lax.expm1(lax.neg(lax.exp(z)))))
    return selection.where(ok, values, NAN)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function `1 - exp(-exp(z))`.

    Args:
      x: where to evaluate.
      loc: the mode.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logcdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function, `-exp(z)`.

    Args:
      x: where to evaluate.
      loc: the mode.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    ok = positive(scale)
    z = standardize(x, loc, scale)
    return selection.where(ok, lax.neg(lax.exp(z)), NAN)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function `exp(-exp(z))`.

    Args:
      x: where to evaluate.
      loc: the mode.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return ufuncs.exp(logsf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The percent point function `loc + scale log(-log1p(-p))`; NaN outside (0, 1).

    Args:
      p: probabilities.
      loc: the mode.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    p, loc, scale = util.promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    inside = lax.bitwise_and(lax.gt(p, util.const(p, 0)), lax.lt(p, util.const(p, 1)))
    quantile = lax.add(loc, lax.mul(scale, lax.log(special.xlog1py(-1, lax.neg(p)))))
    return selection.where(inside, quantile, NAN)
