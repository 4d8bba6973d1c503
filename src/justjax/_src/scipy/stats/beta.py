"""`jax.scipy.stats.beta`: the beta distribution with shapes `a`, `b` on
`[loc, loc + scale]`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.numpy import ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NAN, NEG_INF, fill_where, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density `(a - 1) log(y) + (b - 1) log1p(-y) - betaln(a, b) - log(scale)`,
    `y = (x - loc) / scale`; `-inf` outside `[loc, loc + scale]`, NaN where `a`, `b` or
    `scale` is not positive.

    Args:
      x: where to evaluate.
      a, b: the shapes.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, b, loc, scale = util.promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    one = util.const(x, 1)
    zero = util.const(a, 0)
    y = standardize(x, loc, scale)
    log_kernel = lax.add(special.xlogy(lax.sub(a, one), y),
                         special.xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(lax.neg(special.betaln(a, b)), log_kernel), lax.log(scale))
    outside = ufuncs.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    log_probs = fill_where(outside, NEG_INF, log_probs)
    bad = ufuncs.logical_or(ufuncs.logical_or(lax.le(a, zero), lax.le(b, zero)),
                            lax.le(scale, zero))
    return fill_where(bad, NAN, log_probs)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, a, b, loc, scale))`.

    Args:
      x: where to evaluate.
      a, b: the shapes.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, a, b, loc, scale))


def _unit(x: Any, loc: Any, scale: Any) -> Any:
    """`(x - loc) / scale` clamped to [0, 1]."""
    return lax_selection.clamp(util.const(x, 0), standardize(x, loc, scale), util.const(x, 1))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function, the regularized incomplete beta function
    `betainc(a, b, y)`.

    Args:
      x: where to evaluate.
      a, b: the shapes.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, b, loc, scale = util.promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, _unit(x, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the CDF.

    Args:
      x: where to evaluate.
      a, b: the shapes.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function `betainc(b, a, 1 - y)`.

    Args:
      x: where to evaluate.
      a, b: the shapes.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, a, b, loc, scale = util.promote_args_inexact("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, ufuncs.subtract(1, _unit(x, loc, scale)))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the survival function.

    Args:
      x: where to evaluate.
      a, b: the shapes.
      loc: the left end.
      scale: the width.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.log(sf(x, a, b, loc, scale))
