"""`jax.scipy.stats.binom`: the binomial distribution of `n` trials with success
probability `p`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import selection, ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The log probability mass `log C(n, y) + y log(p) + (n - y) log1p(-p)`, `y = k - loc`
    (the binomial coefficient through `gammaln`, so `k` and `n` need not be integers);
    `-inf` outside `[loc, loc + n + 1)`.

    Args:
      k: the number of successes.
      n: the number of trials.
      p: the success probability.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    k, n, p, loc = util.promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = util.const(y, 0)
    log_comb = lax.sub(special.gammaln(ufuncs.add(n, 1)),
                       lax.add(special.gammaln(ufuncs.add(y, 1)),
                               special.gammaln(ufuncs.add(ufuncs.subtract(n, y), 1))))
    log_kernel = lax.add(special.xlogy(y, p), special.xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(log_comb, log_kernel)
    # A certain outcome (no trials, or a kernel of exactly 0 as at p in {0, 1}) has log
    # mass 0 exactly, not the rounding error of the gammaln terms.
    certain = ufuncs.logical_or(ufuncs.logical_and(lax.eq(y, zero), lax.eq(n, zero)),
                                lax.eq(log_kernel, zero))
    log_probs = selection.where(certain, 0.0, log_probs)
    in_support = lax.bitwise_and(lax.ge(k, loc), lax.lt(k, ufuncs.add(ufuncs.add(loc, n), 1)))
    return selection.where(in_support, log_probs, NEG_INF)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, `exp(logpmf(k, n, p, loc))`.

    Args:
      k: the number of successes.
      n: the number of trials.
      p: the success probability.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpmf(k, n, p, loc))
