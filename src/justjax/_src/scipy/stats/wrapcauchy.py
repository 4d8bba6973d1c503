"""`jax.scipy.stats.wrapcauchy`: the wrapped Cauchy distribution on `[0, 2 pi]` with shape
`c` in (0, 1).

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import selection, util
from justjax._src.scipy.stats.common import NAN, NEG_INF

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Any:
    """The log density `log(1 - c**2) - log(2 pi) - log(1 + c**2 - 2 c cos(x))`; `-inf`
    outside `[0, 2 pi]`, NaN unless `0 < c < 1`.

    Args:
      x: the angle.
      c: the shape.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, c = util.promote_args_inexact("wrapcauchy.logpdf", x, c)
    one = util.const(c, 1)
    c_squared = lax.mul(c, c)
    denominator = lax.sub(lax.add(one, c_squared),
                          lax.mul(lax.mul(util.const(c, 2), c), lax.cos(x)))
    values = lax.sub(lax.sub(lax.log(lax.sub(one, c_squared)),
                             lax.log(util.const(x, 2 * np.pi))),
                     lax.log(denominator))
    in_support = lax.bitwise_and(lax.ge(x, util.const(x, 0)),
                                 lax.le(x, util.const(x, 2 * np.pi)))
    valid_c = lax.bitwise_and(lax.gt(c, util.const(c, 0)), lax.lt(c, one))
    return selection.where(valid_c, selection.where(in_support, values, NEG_INF), NAN)


def pdf(x: Any, c: Any) -> Any:
    """The density, `exp(logpdf(x, c))`.

    Args:
      x: the angle.
      c: the shape.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, c))
