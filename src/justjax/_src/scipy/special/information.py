"""Logistic and information-theoretic functions: expit, logit, xlogy, xlog1py, entr,
rel_entr, kl_div, logsumexp, softmax, log_softmax, boxcox, boxcox1p."""
from __future__ import annotations

import operator

from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.scipy.special._util import promote_inexact, reject_complex
from justjax._src.numpy import (array_creation, dtype_ops, reductions, selection, ufuncs,
                                util)

__all__ = ["boxcox", "boxcox1p", "entr", "expit", "kl_div", "log_softmax", "logit", "logsumexp",
           "rel_entr", "softmax", "xlog1py", "xlogy"]


def expit(x: Any) -> Any:
    """The logistic sigmoid `1 / (1 + exp(-x))`."""
    [x] = util.promote_args_inexact("expit", x)
    return lax.logistic(x)


@custom_jvp
def logit(x: Any) -> Any:
    """The inverse of `expit`: `log(x / (1 - x))`, with the derivative `1 / (x (1 - x))`."""
    [x] = util.promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(util.const(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(util.const(x, 1), x))))


@custom_jvp
def xlogy(x: Any, y: Any) -> Any:
    """`x * log(y)`, defined as 0 where x == 0 (unless y is NaN), with the derivatives
    `log(y)` and `x / y` everywhere (a `custom_jvp` function, as in JAX)."""
    x, y = util.promote_args_inexact("xlogy", x, y)
    x_ok = ufuncs.logical_or(ufuncs.not_equal(x, 0.0), ufuncs.isnan(y))
    return selection.where(x_ok, lax.mul(x, lax.log(y)), array_creation.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x, y = primals
    x_dot, y_dot = tangents
    result = xlogy(x, y)
    tangent = ufuncs.add(ufuncs.multiply(x_dot, lax.log(y)),
                         ufuncs.true_divide(ufuncs.multiply(y_dot, x), y))
    return result, dtype_ops.astype(tangent, result.dtype)


@custom_jvp
def xlog1py(x: Any, y: Any) -> Any:
    """`x * log1p(y)`, defined as 0 where x == 0 (unless y is NaN), with the derivatives
    `log1p(y)` and `x / (1 + y)` everywhere (a `custom_jvp` function, as in JAX)."""
    x, y = util.promote_args_inexact("xlog1py", x, y)
    x_ok = ufuncs.logical_or(ufuncs.not_equal(x, 0.0), ufuncs.isnan(y))
    return selection.where(x_ok, lax.mul(x, lax.log1p(y)), array_creation.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x, y = primals
    x_dot, y_dot = tangents
    result = xlog1py(x, y)
    tangent = ufuncs.add(ufuncs.multiply(x_dot, lax.log1p(y)),
                         ufuncs.true_divide(ufuncs.multiply(y_dot, x), ufuncs.add(1, y)))
    return result, dtype_ops.astype(tangent, result.dtype)


@custom_jvp
def _xlogx(x: Any) -> Any:
    """`x log(x)` (0 at 0) with the derivative `log(x) + 1`."""
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x, = primals
    x_dot, = tangents
    return _xlogx(x), ufuncs.multiply(x_dot, ufuncs.add(lax.log(x), 1))


def entr(x: Any) -> Any:
    """`-x log(x)` for x > 0, 0 at 0, -inf below."""
    [x] = util.promote_args_inexact("entr", x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax_selection.select(lax.lt(x, util.const(x, 0)),
                                array_creation.lax_full_like(x, -np.inf), lax.neg(_xlogx(x)))


def _reduction_dims(a: Any, axis: Any) -> tuple[int, ...]:
    ndim = np.ndim(a)
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (np.ndarray, tuple, list)) else (axis,)
    canonical = tuple(util.canonicalize_axis(operator.index(i), ndim) for i in axes)
    if len(canonical) != len(set(canonical)):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return canonical


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """`log(sum(b * exp(a)))` along `axis`, computed stably (the max is shifted out, its
    gradient stopped, as in JAX).

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
    if where is not None:
        a = selection.where(where, a, 0)
    if b is not None:
        a, b = util.promote_args_inexact("logsumexp", a, b)
        a = selection.where(ufuncs.not_equal(b, 0), a, -np.inf)
    else:
        [a] = util.promote_args_inexact("logsumexp", a)
    dims = _reduction_dims(a, axis)
    amax = reductions.max(ufuncs.real(a), axis=dims, keepdims=keepdims, where=where,
                          initial=-np.inf)
    # Shifting by a non-finite max would give NaNs; such slices use a shift of 0.
    amax = structural.stop_gradient(lax_selection.select(
        ufuncs.isfinite(amax), amax, array_creation.lax_full_like(amax, 0)))
    amax_with_dims = amax if keepdims else structural.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, dtype_ops.astype(amax_with_dims, a.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = reductions.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not dtypes.is_complex(a.dtype):
        sumexp = ufuncs.absolute(sumexp)
    out = lax.add(lax.log(sumexp), dtype_ops.astype(amax, sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not dtypes.is_complex(out.dtype):
        nan = array_creation.array(np.nan, dtype=out.dtype)
        out = selection.where(ufuncs.less(sign, 0), nan, out)
    return out


def rel_entr(p: Any, q: Any) -> Any:
    """The elementwise relative entropy `p log(p / q)`: 0 where p == 0 and q >= 0, inf where
    p or q is negative (or q == 0 < p).

    Args:
      p, q: real arrays.
    Returns:
      The relative entropy in the promoted inexact dtype.
    """
    p, q = promote_inexact("rel_entr", p, q)
    reject_complex("rel_entr", p)
    zero = util.const(p, 0.0)
    both_positive = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    p_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    # The logs read 1 where they are not used, so neither value nor gradient turns NaN.
    safe_p = selection.where(both_positive, p, 1)
    safe_q = selection.where(both_positive, q, 1)
    log_ratio = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return selection.where(both_positive, log_ratio, selection.where(p_zero, zero, np.inf))


def kl_div(p: Any, q: Any) -> Any:
    """The elementwise Kullback-Leibler divergence `p log(p / q) - p + q` (`rel_entr` plus
    `q - p`).

    Args:
      p, q: real arrays.
    Returns:
      The divergence in the promoted inexact dtype.
    """
    p, q = promote_inexact("kl_div", p, q)
    reject_complex("kl_div", p)
    return rel_entr(p, q) - p + q


def _boxcox_of_log(log: Any, x: Any, lmbda: Any) -> Any:
    """`(exp(lmbda log(x)) - 1) / lmbda`, `log(x)` itself where lmbda == 0 (`log` is log or
    log1p; the safe lambda first, as JAX orders it)."""
    lmbda_is_zero = lmbda == 0
    safe_lmbda = selection.where(lmbda_is_zero, array_creation.ones_like(lmbda), lmbda)
    log_x = log(x)
    power = ufuncs.expm1(safe_lmbda * log_x) / safe_lmbda
    return selection.where(lmbda_is_zero, log_x, power)


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transformation `(x**lmbda - 1) / lmbda` (`log(x)` at lmbda == 0).

    Args:
      x: real array.
      lmbda: the power parameter.
    Returns:
      The transform in the promoted inexact dtype.
    """
    x, lmbda = promote_inexact("boxcox", x, lmbda)
    return _boxcox_of_log(ufuncs.log, x, lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transformation of `1 + x`, accurate for small x.

    Args:
      x: real array.
      lmbda: the power parameter.
    Returns:
      The transform in the promoted inexact dtype.
    """
    x, lmbda = promote_inexact("boxcox1p", x, lmbda)
    return _boxcox_of_log(ufuncs.log1p, x, lmbda)


def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """`exp(x) / sum(exp(x))` over `axis` (every axis when None), as `jax.nn.softmax`.

    Args:
      x: array.
      axis: the axis or axes to normalize over.
    Returns:
      The softmax, of `x`'s shape.
    """
    # Imported here: jax.nn's functions import logsumexp from this package.
    from justjax._src.nn import functions as nn_functions
    return nn_functions.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """`x - logsumexp(x)` over `axis` (every axis when None), as `jax.nn.log_softmax`.

    Args:
      x: array.
      axis: the axis or axes to normalize over.
    Returns:
      The log-softmax, of `x`'s shape.
    """
    from justjax._src.nn import functions as nn_functions
    return nn_functions.log_softmax(x, axis=axis)
