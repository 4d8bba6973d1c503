"""`jax.scipy.stats.uniform`: the uniform distribution on `[loc, loc + scale]`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.core import core
from justjax._src.lax import elementwise as lax
from justjax._src.numpy import array_creation, selection, util
from justjax._src.scipy.stats.common import NAN, NEG_INF, fill_where, probability_outside

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def _outside(x: Any, loc: Any, scale: Any) -> Any:
    """Where `x` lies outside `[loc, loc + scale]`."""
    return lax.bitwise_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `-log(scale)` on the support, `-inf` outside it.

    Args:
      x: where to evaluate.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("uniform.logpdf", x, loc, scale)
    return fill_where(_outside(x, loc, scale), NEG_INF, lax.neg(lax.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, loc, scale))`.

    Args:
      x: where to evaluate.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function: 0 below `loc`, 1 above `loc + scale`,
    `(x - loc) / scale` between (and 0 where `x` is NaN, as in JAX).

    Args:
      x: where to evaluate.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, loc, scale = util.promote_args_inexact("uniform.cdf", x, loc, scale)
    dtype = core.get_aval(x).dtype
    zero = array_creation.array(0, dtype)
    one = array_creation.array(1, dtype)
    right = lax.add(loc, scale)
    inside = lax.bitwise_and(lax.ge(x, loc), lax.le(x, right))
    return selection.select([lax.lt(x, loc), lax.gt(x, right), inside],
                            [zero, one, lax.div(lax.sub(x, loc), scale)])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The percent point function `loc + scale q`; NaN for `q` outside [0, 1].

    Args:
      q: probabilities.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    q, loc, scale = util.promote_args_inexact("uniform.ppf", q, loc, scale)
    return fill_where(probability_outside(q), NAN, lax.add(loc, lax.mul(scale, q)))
