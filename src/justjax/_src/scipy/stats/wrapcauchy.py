"""`jax.scipy.stats.wrapcauchy`: the wrapped Cauchy distribution on `[0, 2 pi]` with shape
`c` in (0, 1).

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import selection, ufuncs, util
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
    valid_c = lax.bitwise_and(lax.gt(c, util.const(c, 0)), lax.lt(c, util.const(c, 1)))
    in_support = lax.bitwise_and(lax.ge(x, util.const(x, 0)),
                                 lax.le(x, util.const(x, 2 * np.pi)))
    # Python scalars, as JAX writes them, so that weak types survive.
    c_squared = ufuncs.multiply(c, c)
    log_numerator = ufuncs.subtract(ufuncs.log(ufuncs.subtract(1, c_squared)),
                                    ufuncs.log(2 * np.pi))
    denominator = ufuncs.subtract(ufuncs.add(1, ufuncs.multiply(c, c)),
                                  ufuncs.multiply(ufuncs.multiply(2, c), ufuncs.cos(x)))
    values = ufuncs.subtract(log_numerator, ufuncs.log(denominator))
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
