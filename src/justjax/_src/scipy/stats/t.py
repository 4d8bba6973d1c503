"""`jax.scipy.stats.t`: Student's t distribution with `df` degrees of freedom, location
`loc` and scale `scale`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import util
from justjax._src.scipy.stats.common import standardize

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density
    `lgamma((df + 1) / 2) - lgamma(df / 2) - log(pi df scale**2) / 2
    - (df + 1) / 2 log1p(z**2 / df)`, `z = (x - loc) / scale`.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, df, loc, scale = util.promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = util.const(x, 2)
    z = standardize(x, loc, scale)
    half_df = lax.div(df, two)
    half_df_plus_half = lax.add(half_df, util.const(x, 0.5))
    scale_term = lax.mul(lax.mul(scale, scale), util.const(x, np.pi))
    log_norm = lax.sub(lax.add(lax.lgamma(half_df),
                               lax.div(lax.log(lax.mul(scale_term, df)), two)),
                       lax.lgamma(half_df_plus_half))
    quadratic = lax.div(lax.mul(z, z), df)
    return lax.neg(lax.add(log_norm, lax.mul(half_df_plus_half, lax.log1p(quadratic))))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, `exp(logpdf(x, df, loc, scale))`.

    Args:
      x: where to evaluate.
      df: the degrees of freedom.
      loc: the location.
      scale: the scale.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, df, loc, scale))
