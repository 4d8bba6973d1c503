"""`jax.scipy.stats.bernoulli`: the Bernoulli distribution with success probability `p`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import selection, ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NAN, NEG_INF, fill_where, probability_outside

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The log probability mass `y log(p) + (1 - y) log1p(-p)`, `y = k - loc`; `-inf`
    where `y` lies outside [0, 1].

    Args:
      k: the outcome.
      p: the probability of 1.
      loc: a shift of the outcomes.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    k, p, loc = util.promote_args_inexact("bernoulli.logpmf", k, p, loc)
    one = util.const(k, 1)
    y = lax.sub(k, loc)
    log_probs = ufuncs.add(special.xlogy(y, p),
                           special.xlog1py(lax.sub(one, y), ufuncs.negative(p)))
    outside = ufuncs.logical_or(lax.lt(y, util.const(k, 0)), lax.gt(y, one))
    return fill_where(outside, NEG_INF, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, `exp(logpmf(k, p, loc))`.

    Args:
      k: the outcome.
      p: the probability of 1.
      loc: a shift of the outcomes.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return ufuncs.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    """The cumulative distribution function: 0 below 0, `1 - p` on [0, 1), 1 from 1 on;
    NaN where `k` is NaN or `p` is not a probability.

    Args:
      k: the outcome.
      p: the probability of 1.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    k, p = util.promote_args_inexact("bernoulli.cdf", k, p)
    zero = util.const(k, 0)
    one = util.const(k, 1)
    invalid = ufuncs.logical_or(ufuncs.isnan(k), probability_outside(p))
    between = ufuncs.logical_and(lax.ge(k, zero), lax.lt(k, one))
    return selection.select([invalid, lax.lt(k, zero), between, lax.ge(k, one)],
                            [NAN, zero, lax.sub(one, p), one])


def ppf(q: Any, p: Any) -> Any:
    """The percent point function: 0 where `q <= 1 - p`, else 1; NaN where `q` or `p` is
    not a probability.

    Args:
      q: probabilities.
      p: the probability of 1.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    q, p = util.promote_args_inexact("bernoulli.ppf", q, p)
    zero = util.const(q, 0)
    one = util.const(q, 1)
    quantile = selection.where(lax.le(q, lax.sub(one, p)), zero, one)
    return fill_where(ufuncs.logical_or(probability_outside(p), probability_outside(q)), NAN, quantile)
