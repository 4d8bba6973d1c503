"""`jax.scipy.stats.cauchy`: the Cauchy distribution with location `loc` and scale `scale`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import util
from justjax._src.scipy.stats.common import standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `-log(pi scale) - log1p(z**2)`, `z = (x - loc) / scale`.

    Args:
      x: where to evaluate.
      loc: the location (median).
      scale: the half width at half maximum.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = standardize(x, loc, scale)
    log_normalizer = lax.log(lax.mul(util.const(x, np.pi), scale))
    return lax.neg(lax.add(log_normalizer, lax.log1p(lax.mul(z, z))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, loc, scale))`.

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function `1/2 + arctan(z) / pi`.

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("cauchy.cdf", x, loc, scale)
    z = standardize(x, loc, scale)
    inv_pi = lax.div(util.const(x, 1.0), util.const(x, np.pi))
    return lax.add(util.const(x, 0.5), lax.mul(inv_pi, lax.atan(z)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF.

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function `1 - cdf`, computed as `cdf(-x, -loc, scale)` (the
    distribution is symmetric).

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function, `logcdf(-x, -loc, scale)`.

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def _quantile(name: str, q: Any, loc: Any, scale: Any, sign: int) -> Any:
    """`loc + scale * tan(sign * (pi q - pi/2))`: the ppf (sign 1) or the isf (sign -1)."""
    q, loc, scale = util.promote_args_inexact(name, q, loc, scale)
    angle = lax.mul(util.const(q, np.pi), q)
    half_pi = util.const(q, np.pi / 2)
    angle = lax.sub(angle, half_pi) if sign > 0 else lax.sub(half_pi, angle)
    return lax.add(lax.mul(lax.tan(angle), scale), loc)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The percent point function (inverse CDF), `loc + scale tan(pi (q - 1/2))`.

    Args:
      q: probabilities.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return _quantile("cauchy.ppf", q, loc, scale, 1)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function, `loc + scale tan(pi (1/2 - q))`.

    Args:
      q: probabilities.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return _quantile("cauchy.isf", q, loc, scale, -1)
