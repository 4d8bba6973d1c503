"""`jax.scipy.stats.betabinom`: the beta-binomial distribution: `n` trials whose success
probability is beta(`a`, `b`) distributed.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import selection, ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NAN, NEG_INF, fill_where

__all__ = ["logpmf", "pmf"]


@util.jitted_as_in_jax
def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """The log probability mass
    `-log1p(n) - betaln(n - y + 1, y + 1) + betaln(y + a, n - y + b) - betaln(a, b)`,
    `y = floor(k) - loc`; `-inf` outside the support, NaN where `n < 0`, `a <= 0` or
    `b <= 0`.

    Args:
      k: the number of successes.
      n: the number of trials.
      a, b: the shapes of the success probability's beta distribution.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    k, n, a, b, loc = util.promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one = util.const(y, 1)
    zero = util.const(y, 0)
    n_minus_y = lax.sub(n, y)
    log_comb = lax.neg(lax.add(lax.log1p(n),
                               special.betaln(lax.add(n_minus_y, one), lax.add(y, one))))
    log_beta_ratio = lax.sub(special.betaln(lax.add(y, a), lax.add(n_minus_y, b)),
                             special.betaln(a, b))
    log_probs = lax.add(log_comb, log_beta_ratio)
    log_probs = fill_where(lax.bitwise_and(lax.eq(y, zero), lax.eq(n, zero)), 0.0, log_probs)
    outside = ufuncs.logical_or(ufuncs.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)),
                                lax.le(lax.add(y, a), zero))
    log_probs = fill_where(outside, NEG_INF, log_probs)
    bad = ufuncs.logical_or(ufuncs.logical_or(lax.lt(n, zero), lax.le(a, zero)),
                            lax.le(b, zero))
    return selection.where(bad, NAN, log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """The probability mass, `exp(logpmf(k, n, a, b, loc))`.

    Args:
      k: the number of successes.
      n: the number of trials.
      a, b: the shapes of the success probability's beta distribution.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpmf(k, n, a, b, loc))
