"""`jax.scipy.stats.gennorm`: the generalized normal (exponential power) distribution
with shape `beta`, density `beta / (2 gamma(1/beta)) exp(-|x|**beta)`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.numpy import util

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, beta: Any) -> Any:
    """The log density `log(beta / 2) - lgamma(1 / beta) - |x|**beta`.

    Args:
      x: where to evaluate.
      beta: the shape (2 is a normal distribution of variance 1/2, 1 a Laplace one).
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, beta = util.promote_args_inexact("gennorm.logpdf", x, beta)
    log_norm = lax.sub(lax.log(lax.mul(util.const(beta, 0.5), beta)),
                       lax.lgamma(lax.div(util.const(beta, 1), beta)))
    return lax.sub(log_norm, lax.pow(lax.abs(x), beta))


def pdf(x: Any, beta: Any) -> Any:
    """The density, `exp(logpdf(x, beta))`.

    Args:
      x: where to evaluate.
      beta: the shape.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, beta))


def cdf(x: Any, beta: Any) -> Any:
    """The cumulative distribution function `(1 + sign(x) gammainc(1/beta, |x|**beta)) / 2`.

    Args:
      x: where to evaluate.
      beta: the shape.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, beta = util.promote_args_inexact("gennorm.cdf", x, beta)
    mass = lax_special.igamma(lax.div(util.const(beta, 1), beta), lax.pow(lax.abs(x), beta))
    return lax.mul(util.const(x, 0.5), lax.add(util.const(x, 1), lax.mul(lax.sign(x), mass)))
