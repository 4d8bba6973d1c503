"""`jax.scipy.stats.multinomial`: the multinomial distribution of `n` draws over the
categories of probabilities `p` (the categories along the last axis)."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import elementwise as lax
from justjax._src.numpy import dtype_ops, reductions, selection, ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF

__all__ = ["logpmf", "pmf"]


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """The log probability mass `gammaln(n + 1) + sum(x log p - gammaln(x + 1))`; `-inf`
    where the counts do not add up to `n`.

    Args:
      x: the counts per category (integers), categories along the last axis.
      n: the number of draws (an integer).
      p: the category probabilities.
    Returns:
      An array of `p`'s inexact dtype.
    Raises:
      ValueError: when `x` and `n` are not integers.
    """
    [p] = util.promote_args_inexact("multinomial.logpmf", p)
    x, n = util.promote_args_numeric("multinomial.logpmf", x, n)
    x_dtype = core.get_aval(x).dtype
    if not dtypes.issubdtype(x_dtype, np.integer):
        raise ValueError("x and n must be of integer type; got "
                         f"x.dtype={x_dtype}, n.dtype={core.get_aval(n).dtype}")
    p_dtype = core.get_aval(p).dtype
    x = dtype_ops.astype(x, p_dtype)
    n = dtype_ops.astype(n, p_dtype)
    per_category = ufuncs.subtract(special.xlogy(x, p), special.gammaln(ufuncs.add(x, 1)))
    log_probs = ufuncs.add(special.gammaln(ufuncs.add(n, 1)),
                           reductions.sum(per_category, axis=-1))
    # As JAX: the counts' total is taken over every axis of `x`.
    return selection.where(ufuncs.equal(reductions.sum(x), n), log_probs, NEG_INF)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """The probability mass, `exp(logpmf(x, n, p))`.

    Args:
      x: the counts per category (integers).
      n: the number of draws (an integer).
      p: the category probabilities.
    Returns:
      An array of `p`'s inexact dtype.
    """
    return lax.exp(logpmf(x, n, p))
