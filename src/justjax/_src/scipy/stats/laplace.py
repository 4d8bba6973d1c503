"""`jax.scipy.stats.laplace`: the Laplace (double exponential) distribution with location
`loc` and scale `scale`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.numpy import util
from justjax._src.scipy.stats.common import standardize

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `-|x - loc| / scale - log(2 scale)`.

    Args:
      x: where to evaluate.
      loc: the location (mean and median).
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("laplace.logpdf", x, loc, scale)
    linear = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear, lax.log(lax.mul(util.const(x, 2), scale))))


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
    """The cumulative distribution function: `exp(z) / 2` for `z <= 0`, else
    `1 - exp(-z) / 2`, with `z = (x - loc) / scale`.

    Args:
      x: where to evaluate.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("laplace.cdf", x, loc, scale)
    half = util.const(x, 0.5)
    one = util.const(x, 1)
    zero = util.const(x, 0)
    z = standardize(x, loc, scale)
    left = lax.le(z, zero)
    lower = lax.mul(half, lax.exp(z))
    upper = lax.sub(one, lax.mul(half, lax.exp(lax.neg(z))))
    return lax_selection.select(left, lower, upper)
