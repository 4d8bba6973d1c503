"""`jax.scipy.stats.gennorm`: the generalized normal (exponential power) distribution
with shape `beta`, density `beta / (2 gamma(1/beta)) exp(-|x|**beta)`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.numpy import ufuncs, util

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
    # Python scalars, as JAX writes them, so that weak types survive.
    log_norm = ufuncs.subtract(lax.log(ufuncs.multiply(0.5, beta)),
                               lax.lgamma(ufuncs.true_divide(1, beta)))
    return ufuncs.subtract(log_norm, ufuncs.power(lax.abs(x), beta))


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
    sign = lax.sign(x)
    mass = lax_special.igamma(ufuncs.true_divide(1, beta), ufuncs.power(lax.abs(x), beta))
    return ufuncs.multiply(0.5, ufuncs.add(1, ufuncs.multiply(sign, mass)))
