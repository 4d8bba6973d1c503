"""Helpers the `jax.scipy.stats` distributions share: standardizing an argument and
replacing the values outside a distribution's support or parameter domain."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import selection, ufuncs, util

NEG_INF = -np.inf
NAN = np.nan


def standardize(x: Any, loc: Any, scale: Any) -> Any:
    """`(x - loc) / scale`, the argument of the standard distribution.

    Args:
      x: where to evaluate (already promoted with `loc` and `scale`).
      loc, scale: the location and scale.
    Returns:
      An array of the operands' dtype.
    """
    return lax.div(lax.sub(x, loc), scale)


def positive(value: Any) -> Any:
    """Where `value > 0` (a scale's domain; NaN fails).

    Args:
      value: an inexact array.
    Returns:
      A boolean array of `value`'s shape.
    """
    return lax.gt(value, util.const(value, 0))


def fill_where(condition: Any, fill: Any, values: Any) -> Any:
    """`values`, with `fill` where `condition` holds (a Python scalar fill is weak, so the
    values' dtype is kept).

    Args:
      condition: a boolean array.
      fill: the replacement, typically `-inf` (outside the support), `nan` (bad parameters)
        or 0.
      values: the computed values.
    Returns:
      `jnp.where(condition, fill, values)`.
    """
    return selection.where(condition, fill, values)


def probability_outside(q: Any) -> Any:
    """Where a probability argument is NaN or outside [0, 1].

    Args:
      q: an inexact array.
    Returns:
      A boolean array of `q`'s shape.
    """
    # `isnan(q) | (q < 0) | (q > 1)`, associated as JAX writes it (so jaxprs print alike).
    outside = lax.bitwise_or(lax.ne(q, q), ufuncs.less(q, 0))
    return lax.bitwise_or(outside, ufuncs.greater(q, 1))
