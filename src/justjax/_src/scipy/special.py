"""jax.scipy.special: the special functions that neural networks and samplers use."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.lax import structural
from justjax._src.numpy import (array_creation, dtype_ops, reductions, selection, ufuncs,
                                util)

__all__ = ["betainc", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammainc",
           "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "logit", "logsumexp", "ndtr",
           "xlog1py", "xlogy"]


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


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (`lax.igamma`)."""
    a, x = util.promote_args_inexact("gammainc", a, x)
    return lax_special.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (`lax.igammac`)."""
    a, x = util.promote_args_inexact("gammaincc", a, x)
    return lax_special.igammac(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (`lax.betainc`); differentiable
    in x only, as in JAX."""
    a, b, x = util.promote_args_inexact("betainc", a, b, x)
    if dtypes.is_complex(core.get_aval(x).dtype):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax_special.betainc(a, b, x)


def i0e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x)."""
    [x] = util.promote_args_inexact("i0e", x)
    return lax_special.bessel_i0e(x)


def i0(x: Any) -> Any:
    """The modified Bessel function of order 0, as exp(|x|) i0e(x)."""
    [x] = util.promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i0e(x))


def i1e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x)."""
    [x] = util.promote_args_inexact("i1e", x)
    return lax_special.bessel_i1e(x)


def i1(x: Any) -> Any:
    """The modified Bessel function of order 1, as exp(|x|) i1e(x)."""
    [x] = util.promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i1e(x))


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


def ndtr(x: Any) -> Any:
    """The standard normal CDF `(1 + erf(x / sqrt(2))) / 2`, for float32/float64 `x` only
    (other dtypes raise TypeError, as in JAX).

    As JAX: `1 + erf(w)` near 0 and erfc of `|w|` in the tails (`2 - erfc(|w|)` above, `erfc(|w|)`
    below), so both tails keep their precision.
    """
    x = array_creation.asarray(x)
    dtype = np.dtype(x.dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported types.")
    scalar = dtype.type
    half_sqrt2 = scalar(0.5) * np.sqrt(2.0, dtype=dtype)
    w = ufuncs.multiply(x, half_sqrt2)
    z = lax.abs(w)
    # Built in JAX's order (its erfc(|w|) is computed twice, once per branch).
    near_zero = lax.lt(z, half_sqrt2)
    center = ufuncs.add(scalar(1.0), lax.erf(w))
    upper = lax.gt(w, scalar(0.0))
    upper_tail = ufuncs.subtract(scalar(2.0), lax.erfc(z))
    tails = structural.select(upper, upper_tail, lax.erfc(z))
    return ufuncs.multiply(scalar(0.5), structural.select(near_zero, center, tails))


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
    return structural.select(lax.lt(x, util.const(x, 0)),
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
    amax = structural.stop_gradient(structural.select(
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
