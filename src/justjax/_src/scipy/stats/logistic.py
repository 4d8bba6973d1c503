"""`jax.scipy.stats.logistic`: the logistic distribution with location `loc` and scale
`scale`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import standardize

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `-2 logaddexp(z/2, -z/2) - log(scale)`, `z = (x - loc) / scale`
    (the symmetric form does not overflow in either tail).

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("logistic.logpdf", x, loc, scale)
    z = standardize(x, loc, scale)
    two = util.const(z, 2)
    half_z = lax.div(z, two)
    log_cosh_term = ufuncs.logaddexp(half_z, lax.neg(half_z))
    return lax.sub(lax.mul(lax.neg(two), log_cosh_term), lax.log(scale))


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
    """The cumulative distribution function `expit((x - loc) / scale)`.

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("logistic.cdf", x, loc, scale)
    return special.expit(standardize(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function `expit(-(x - loc) / scale)`.

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("logistic.sf", x, loc, scale)
    return special.expit(lax.neg(standardize(x, loc, scale)))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The percent point function `loc + scale logit(x)` (JAX names the probability `x`).

    Args:
      x: probabilities.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(special.logit(x), scale), loc)


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function `loc - scale logit(x)`.

    Args:
      x: probabilities.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(special.logit(x)), scale), loc)
