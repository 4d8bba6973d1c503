"""`jax.scipy.stats.geom`: the geometric distribution (trials up to the first success,
on 1, 2, ...) with success probability `p`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF, fill_where

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The log probability mass `(y - 1) log1p(-p) + log(p)`, `y = k - loc`; `-inf` for
    `y <= 0`.

    Args:
      k: the number of trials.
      p: the success probability.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    k, p, loc = util.promote_args_inexact("geom.logpmf", k, p, loc)
    y = lax.sub(k, loc)
    log_probs = ufuncs.add(special.xlog1py(lax.sub(y, util.const(k, 1)), ufuncs.negative(p)),
                           lax.log(p))
    return fill_where(lax.le(y, util.const(k, 0)), NEG_INF, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, `exp(logpmf(k, p, loc))`.

    Args:
      k: the number of trials.
      p: the success probability.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return ufuncs.exp(logpmf(k, p, loc))
