"""`jax.scipy.stats.nbinom`: the negative binomial distribution (failures before the
`n`-th success) with success probability `p`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF, fill_where

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The log probability mass
    `gammaln(y + n) - gammaln(n) - gammaln(y + 1) + n log(p) + y log(1 - p)`, `y = k - loc`;
    `-inf` below `loc`.

    Args:
      k: the number of failures.
      n: the number of successes (need not be an integer).
      p: the success probability.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    k, n, p, loc = util.promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = util.const(k, 1)
    y = lax.sub(k, loc)
    log_comb = lax.sub(lax.sub(special.gammaln(lax.add(y, n)), special.gammaln(n)),
                       special.gammaln(lax.add(y, one)))
    log_kernel = lax.add(special.xlogy(n, p), special.xlogy(y, lax.sub(one, p)))
    return fill_where(lax.lt(k, loc), NEG_INF, lax.add(log_comb, log_kernel))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, `exp(logpmf(k, n, p, loc))`.

    Args:
      k: the number of failures.
      n: the number of successes.
      p: the success probability.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpmf(k, n, p, loc))
