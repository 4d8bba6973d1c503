"""jax.scipy.special: the special functions that neural networks and samplers use."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.lax import structural
from justjax._src.numpy import reductions, selection, shape_ops, ufuncs, util

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammaln", "logit", "logsumexp",
           "ndtr", "xlog1py", "xlogy"]


def erf(x: Any) -> Any:
    """The error function."""
    [x] = util.promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """The complementary error function `1 - erf(x)`."""
    [x] = util.promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse of `erf`."""
    [x] = util.promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


def gammaln(x: Any) -> Any:
    """`log(|gamma(x)|)`."""
    [x] = util.promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of the gamma function."""
    [x] = util.promote_args_inexact("digamma", x)
    return lax.digamma(x)


def expit(x: Any) -> Any:
    """The logistic sigmoid `1 / (1 + exp(-x))`."""
    [x] = util.promote_args_inexact("expit", x)
    return lax.logistic(x)


def logit(x: Any) -> Any:
    """The inverse of `expit`: `log(x / (1 - x))`."""
    [x] = util.promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(structural.convert_element_type(1, x.dtype), x)))


def ndtr(x: Any) -> Any:
    """The standard normal CDF, `erfc(-x / sqrt(2)) / 2`."""
    [x] = util.promote_args_inexact("ndtr", x)
    half_sqrt2 = np.asarray(np.sqrt(0.5)).astype(x.dtype)
    return ufuncs.multiply(0.5, lax.erfc(ufuncs.multiply(ufuncs.negative(x), half_sqrt2)))


def xlogy(x: Any, y: Any) -> Any:
    """`x * log(y)`, defined as 0 where x == 0."""
    x, y = util.promote_args_inexact("xlogy", x, y)
    safe_y = selection.where(ufuncs.equal(x, 0), 1, y)
    return selection.where(ufuncs.equal(x, 0), 0, ufuncs.multiply(x, ufuncs.log(safe_y)))


def xlog1py(x: Any, y: Any) -> Any:
    """`x * log1p(y)`, defined as 0 where x == 0."""
    x, y = util.promote_args_inexact("xlog1py", x, y)
    safe_y = selection.where(ufuncs.equal(x, 0), 0, y)
    return selection.where(ufuncs.equal(x, 0), 0, ufuncs.multiply(x, ufuncs.log1p(safe_y)))


def entr(x: Any) -> Any:
    """`-x log(x)` for x > 0, 0 at 0, -inf below."""
    [x] = util.promote_args_inexact("entr", x)
    safe = selection.where(ufuncs.greater(x, 0), x, 1)
    value = ufuncs.negative(ufuncs.multiply(x, ufuncs.log(safe)))
    return selection.where(ufuncs.less(x, 0), -np.inf,
                           selection.where(ufuncs.equal(x, 0), 0, value))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """`log(sum(b * exp(a)))` along `axis`, computed stably.

    Args:
      a: the values.
      axis: axis or axes to reduce (all when None).
      b: optional scale factors, broadcast against `a`; may be negative (see `return_sign`).
      keepdims: keep the reduced axes as size 1.
      return_sign: also return the sign of the sum (and the log of its magnitude).
      where: elements to include.
    Returns:
      The reduction, or `(log|sum|, sign)` with `return_sign`.
    """
    if b is not None:
        a, b = util.promote_args_inexact("logsumexp", a, b)
        a = selection.where(ufuncs.not_equal(b, 0), a, -np.inf)
    else:
        [a] = util.promote_args_inexact("logsumexp", a)
    axes = util.canonicalize_axes(axis, a.ndim)
    amax = reductions.max(a, axis=axes, keepdims=True, where=where, initial=-np.inf)
    # Shifting by a non-finite max would give NaNs; such slices use a shift of 0.
    amax = structural.stop_gradient(selection.where(ufuncs.isfinite(amax), amax, 0))
    exp_a = ufuncs.exp(ufuncs.subtract(a, amax))
    if b is not None:
        exp_a = ufuncs.multiply(exp_a, b)
    sumexp = reductions.sum(exp_a, axis=axes, keepdims=keepdims, where=where)
    sign = ufuncs.sign(sumexp)
    if return_sign or not np.issubdtype(a.dtype, np.complexfloating):
        sumexp = ufuncs.absolute(sumexp)
    out = ufuncs.add(ufuncs.log(sumexp),
                     amax if keepdims else shape_ops.squeeze(amax, axis=axes))
    if return_sign:
        return out, sign
    if b is not None and not np.issubdtype(out.dtype, np.complexfloating):
        out = selection.where(ufuncs.less(sign, 0), np.nan, out)
    return out
