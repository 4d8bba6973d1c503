"""`jax.scipy.stats.pareto`: the Pareto distribution with shape `b` on
`[loc + scale, inf)`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import util
from justjax._src.scipy.stats.common import (NAN, NEG_INF, fill_where, probability_outside,
                                             standardize)

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _below(x: Any, loc: Any, scale: Any) -> Any:
    """Where `x` lies left of the support's end `loc + scale`."""
    return lax.lt(x, lax.add(loc, scale))


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `log(b / scale) - (b + 1) log(z)`, `z = (x - loc) / scale`;
    `-inf` below `loc + scale`.

    Args:
      x: where to evaluate.
      b: the shape (tail index).
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, b, loc, scale = util.promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = standardize(x, loc, scale)
    log_normalizer = lax.log(lax.div(scale, b))
    tail = lax.mul(lax.add(b, util.const(x, 1)), lax.log(z))
    return fill_where(_below(x, loc, scale), NEG_INF, lax.neg(lax.add(log_normalizer, tail)))


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, b, loc, scale))`.

    Args:
      x: where to evaluate.
      b: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function `1 - z**-b`; 0 below the support.

    Args:
      x: where to evaluate.
      b: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, b, loc, scale = util.promote_args_inexact("pareto.cdf", x, b, loc, scale)
    z = standardize(x, loc, scale)
    values = lax.sub(util.const(x, 1), lax.pow(z, lax.neg(b)))
    return fill_where(_below(x, loc, scale), util.const(x, 0), values)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF, `log1p(-z**-b)`; `-inf` below the support.

    Args:
      x: where to evaluate.
      b: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, b, loc, scale = util.promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    z = standardize(x, loc, scale)
    values = lax.log1p(lax.neg(lax.pow(z, lax.neg(b))))
    return fill_where(_below(x, loc, scale), NEG_INF, values)


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function, `-b log(z)`; 0 below the support.

    Args:
      x: where to evaluate.
      b: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, b, loc, scale = util.promote_args_inexact("pareto.logsf", x, b, loc, scale)
    z = standardize(x, loc, scale)
    values = lax.neg(lax.mul(b, lax.log(z)))
    return fill_where(_below(x, loc, scale), util.const(x, 0), values)


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function, `exp(logsf(x, b, loc, scale))`.

    Args:
      x: where to evaluate.
      b: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The percent point function `loc + scale (1 - q)**(-1/b)`; NaN for `q` outside
    [0, 1].

    Args:
      q: probabilities.
      b: the shape.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    q, b, loc, scale = util.promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = util.const(q, 1)
    values = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return fill_where(probability_outside(q), NAN, values)
