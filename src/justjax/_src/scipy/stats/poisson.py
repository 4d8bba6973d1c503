"""`jax.scipy.stats.poisson`: the Poisson distribution with mean `mu`.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import core
from justjax._src.lax import elementwise as lax
from justjax._src.numpy import (array_creation, reductions, selection, shape_ops, ufuncs,
                                util)
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF, fill_where

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The log probability mass `y log(mu) - gammaln(y + 1) - mu`, `y = k - loc`; `-inf`
    where `y < 0` or `k` is not an integer.

    Args:
      k: the count.
      mu: the mean.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    k, mu, loc = util.promote_args_inexact("poisson.logpmf", k, mu, loc)
    y = lax.sub(k, loc)
    log_probs = ufuncs.subtract(ufuncs.subtract(special.xlogy(y, mu),
                                                special.gammaln(ufuncs.add(y, 1))), mu)
    outside = ufuncs.logical_or(lax.lt(y, util.const(k, 0)), lax.ne(ufuncs.round(k), k))
    return fill_where(outside, NEG_INF, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The probability mass, `exp(logpmf(k, mu, loc))`.

    Args:
      k: the count.
      mu: the mean.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return ufuncs.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The cumulative distribution function `gammaincc(floor(y + 1), mu)`; 0 for `y < 0`.

    Args:
      k: the count.
      mu: the mean.
      loc: a shift of `k`.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    # JAX names this function "poisson.logpmf" in its argument errors.
    k, mu, loc = util.promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = util.const(k, 0)
    y = lax.sub(k, loc)
    probs = special.gammaincc(ufuncs.floor(ufuncs.add(1, y)), mu)
    return fill_where(lax.lt(y, zero), zero, probs)


def _truncated_entropy(mu: Any, terms: int, upper: Any) -> Any:
    """`-sum p log p` over the counts `k < min(terms, upper)`, one column per mean."""
    dtype = core.get_aval(mu).dtype
    counts = array_creation.arange(terms, dtype=dtype)[:, None]
    probs = pmf(counts, mu, 0)
    upper = shape_ops.expand_dims(ufuncs.ceil(upper).astype(dtype), 0)
    probs = selection.where(ufuncs.less(counts, upper), probs, 0.0)
    return reductions.sum(special.entr(probs), axis=0)


def _entropy_small(mu: Any) -> Any:
    """Means below 10: the first 35 terms, up to `mu + 20`."""
    return _truncated_entropy(mu, 35, ufuncs.add(mu, 20))


def _entropy_medium(mu: Any) -> Any:
    """Means in [10, 100): the first 250 terms, up to `mu + 10 sqrt(mu) + 20`."""
    upper = ufuncs.add(ufuncs.add(mu, ufuncs.multiply(10, ufuncs.sqrt(mu))), 20)
    return _truncated_entropy(mu, 250, upper)


def _entropy_large(mu: Any) -> Any:
    """Means from 100 on: the normal approximation `log(2 pi e mu) / 2 - 1 / (12 mu)`."""
    log_term = ufuncs.log(ufuncs.multiply(2 * np.pi * np.e, mu))
    return ufuncs.subtract(ufuncs.multiply(0.5, log_term),
                           ufuncs.true_divide(1.0, ufuncs.multiply(12, mu)))


@util.jitted_as_in_jax
def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy `-sum_k p(k) log p(k)`, summed over the mass that matters for small and
    medium means and approximated for large ones; `loc` shifts nothing but the shape.

    Args:
      mu: the mean.
      loc: a shift (broadcast against `mu`).
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    mu, loc = util.ensure_arraylike("poisson.entropy", mu, loc)
    mu, loc = util.promote_dtypes_inexact(mu, loc)
    shape = util.broadcast_shapes(core.get_aval(mu).shape, core.get_aval(loc).shape)
    flat = shape_ops.ravel(mu)
    values = selection.where(
        ufuncs.equal(flat, 0), array_creation.zeros_like(flat),
        selection.where(ufuncs.less(flat, 10), _entropy_small(flat),
                        selection.where(ufuncs.less(flat, 100), _entropy_medium(flat),
                                        _entropy_large(flat))))
    return shape_ops.broadcast_to(shape_ops.reshape(values, core.get_aval(mu).shape), shape)
