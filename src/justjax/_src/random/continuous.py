"""`jax.random`'s continuous samplers built on `uniform` and `normal`, with JAX 0.10.2's
algorithms so a key gives JAX's values: `truncated_normal` (inverse erf between the bounds'
erfs), the inverse-CDF transforms `exponential`, `laplace`, `logistic`, `cauchy`, `pareto`,
`weibull_min`, `rayleigh`, `triangular`, and `lognormal`, `maxwell`,
`double_sided_maxwell` and `wald` (inverse Gaussian, Michael-Schucany-Haas).

Each sampler checks its arguments as JAX does, then calls a jitted function named as JAX names
it (`_exponential`, `_truncated_normal`, ...; `_triangular` and `_lognormal` inlined, as in
JAX), so jaxprs print the same nested `jit` equations.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.numpy import linalg_extra, selection, shape_ops, ufuncs, util
from justjax._src.random.distributions import check_shape, float_dtype, normal, uniform
from justjax._src.random.keys import check_prng_key, split_typed
from justjax._src.random.layout import lays_out
from justjax._src.random.samplers import (check_all_safe_to_cast, check_broadcast_shapes,
                                          rademacher)

__all__ = ["cauchy", "double_sided_maxwell", "exponential", "laplace", "logistic",
           "lognormal", "maxwell", "pareto", "rayleigh", "triangular", "truncated_normal",
           "wald", "weibull_min"]


def _standard(name: str, jitted: Any, key: Any, shape: Sequence[int], dtype: Any) -> Any:
    """The common front of the parameterless samplers: key, float dtype and shape checked
    in JAX's order, then `jitted(key, shape, dtype)`."""
    key, _ = check_prng_key(name, key)
    dtype = float_dtype(name, dtype)
    shape = core.canonicalize_shape(shape)
    return jitted(key, shape, dtype)


# ---------------------------------------------------------------------------------------------
# truncated_normal.

@lays_out
def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Standard normal values truncated to the open interval (lower, upper):
    `sqrt(2) * erf_inv(u)` for u uniform between `erf(lower / sqrt(2))` and
    `erf(upper / sqrt(2))`, clamped inside the bounds.

    Args:
      key: a PRNG key.
      lower, upper: the bounds, broadcast-compatible with each other and `shape`.
      shape: the result shape (default the bounds' broadcast shape).
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape` and `dtype`; differentiable in `lower` and `upper`.
    """
    if shape is not None:
        shape = core.canonicalize_shape(shape)
    key, _ = check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    return _truncated_normal(key, lower, upper, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _truncated_normal(key: Any, lower: Any, upper: Any, shape: tuple[int, ...] | None,
                      dtype: np.dtype) -> Any:
    if shape is None:
        shape = util.broadcast_shapes(np.shape(lower), np.shape(upper))
    else:
        check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = structural.convert_element_type(lower, dtype)
    upper = structural.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, minval=a, maxval=b)
    out = sqrt2 * lax.erf_inv(u)
    # Rounding (or u = a exactly) could land on a bound: clamp into the open interval.
    inf = np.array(np.inf, dtype=dtype)
    return selection.clip(out, lax.nextafter(structural.stop_gradient(lower), inf),
                          lax.nextafter(structural.stop_gradient(upper), -inf))


# ---------------------------------------------------------------------------------------------
# Inverse-CDF transforms of one uniform.

@lays_out
def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
                out_sharding: Any = None) -> Any:
    """Standard exponential values, `-log1p(-u)`.

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    return _standard("exponential", _exponential, key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _exponential(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    check_shape("exponential", shape)
    u = uniform(key, shape, dtype)
    # 1 - u lies in (0, 1], where log is finite.
    return lax.neg(lax.log1p(lax.neg(u)))


@lays_out
def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
            out_sharding: Any = None) -> Any:
    """Standard Laplace values (density exp(-|x|) / 2), `sign(u) * log1p(-|u|)` for u
    uniform in (-1, 1).

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    return _standard("laplace", _laplace, key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _laplace(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    check_shape("laplace", shape)
    u = uniform(key, shape, dtype, minval=-1. + dtypes.finfo(dtype).epsneg, maxval=1.)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@lays_out
def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
             out_sharding: Any = None) -> Any:
    """Standard logistic values, `log(u) - log1p(-u)`.

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    return _standard("logistic", _logistic, key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _logistic(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    check_shape("logistic", shape)
    x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


@lays_out
def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
           out_sharding: Any = None) -> Any:
    """Standard Cauchy values, `tan(pi * (u - 1/2))`.

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    return _standard("cauchy", _cauchy, key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _cauchy(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    check_shape("cauchy", shape)
    u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.)
    pi = util.const(u, np.pi)
    return lax.tan(lax.mul(pi, lax.sub(u, util.const(u, 0.5))))


@lays_out
def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
           out_sharding: Any = None) -> Any:
    """Pareto values with shape parameter `b` (density b / x**(b + 1) on x >= 1),
    `exp(e / b)` for e standard exponential.

    Args:
      key: a PRNG key.
      b: the shape parameter, broadcast-compatible with `shape`.
      shape: the result shape (default `b`'s shape).
      dtype: a float dtype (float32 by default) that `b` casts to safely.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = check_broadcast_shapes("pareto", shape, b)
    check_all_safe_to_cast("pareto", dtype, b)
    return _pareto(key, b, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _pareto(key: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    b = structural.convert_element_type(b, dtype)
    e = exponential(key, shape, dtype)
    return lax.exp(e / b)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Any:
    """Weibull values (density ~ x**(c-1) exp(-(x/scale)**c)),
    `(-log1p(-u))**(1/c) * scale`.

    Args:
      key: a PRNG key.
      scale: the scale parameter.
      concentration: the concentration parameter c.
      shape: the result shape.
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape` (broadcast with the parameters).
    """
    key, _ = check_prng_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    shape = core.canonicalize_shape(shape)
    return _weibull_min(key, scale, concentration, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _weibull_min(key: Any, scale: Any, concentration: Any, shape: tuple[int, ...],
                 dtype: np.dtype) -> Any:
    random_uniform = uniform(key=key, shape=shape, minval=0, maxval=1, dtype=dtype)
    # The inverse of the Weibull CDF.
    return ufuncs.power(-ufuncs.log1p(-random_uniform), 1.0 / concentration) * scale


@lays_out
def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
             out_sharding: Any = None) -> Any:
    """Rayleigh values, `scale * sqrt(-2 log(u))`.

    Args:
      key: a PRNG key.
      scale: the scale parameter, broadcast-compatible with `shape`.
      shape: the result shape (default `scale`'s shape).
      dtype: a float dtype (float32 by default) that `scale` casts to safely.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    shape = check_broadcast_shapes("rayleigh", shape, scale)
    check_all_safe_to_cast("rayleigh", dtype, scale)
    return _rayleigh(key, scale, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _rayleigh(key: Any, scale: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform(key, shape, dtype)
    scale = shape_ops.broadcast_to(scale.astype(dtype), shape)
    log_u = lax.log(u)
    n_two = util.const(scale, -2)
    sqrt_u = lax.sqrt(lax.mul(log_u, n_two))
    return lax.mul(scale, sqrt_u)


@lays_out
def triangular(key: Any, left: Any, mode: Any, right: Any,
               shape: Sequence[int] | None = None, dtype: Any = None, *,
               out_sharding: Any = None) -> Any:
    """Triangular values on [left, right] peaking at `mode`, by inverting the CDF on each
    side of `(mode - left) / (right - left)`.

    Args:
      key: a PRNG key.
      left, mode, right: the limits and the peak (left <= mode <= right, left < right),
        broadcast-compatible with `shape`.
      shape: the result shape (default the parameters' broadcast shape).
      dtype: a float dtype (float32 by default) the parameters cast to safely.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = check_broadcast_shapes("triangular", shape, left, mode, right)
    check_all_safe_to_cast("triangular", dtype, left, mode, right)
    return _triangular(key, left, mode, right, shape, dtype)


@functools.partial(jit, static_argnums=(4, 5), inline=True)
def _triangular(key: Any, left: Any, mode: Any, right: Any, shape: tuple[int, ...],
                dtype: np.dtype) -> Any:
    left = shape_ops.broadcast_to(structural.convert_element_type(left, dtype), shape)
    right = shape_ops.broadcast_to(structural.convert_element_type(right, dtype), shape)
    mode = shape_ops.broadcast_to(structural.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax_selection.select(u < fc, out1, out2)


# ---------------------------------------------------------------------------------------------
# Transforms of normals.

@lays_out
def lognormal(key: Any, sigma: Any = np.float32(1), shape: Sequence[int] | None = None,
              dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Lognormal values, `exp(sigma * normal)`.

    Args:
      key: a PRNG key.
      sigma: the standard deviation of the underlying normal (default 1).
      shape: the result shape (default `sigma`'s shape).
      dtype: a float or complex dtype (float32 by default) `sigma` casts to safely.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype, "inexact")
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    check_all_safe_to_cast("lognormal", dtype, sigma)
    return _lognormal(key, sigma, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3), inline=True)
def _lognormal(key: Any, sigma: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    sigma = structural.convert_element_type(sigma, dtype)
    scaled_norm = normal(key, shape, dtype) * sigma
    return lax.exp(scaled_norm)


@lays_out
def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
            out_sharding: Any = None) -> Any:
    """One-sided Maxwell values (density ~ x**2 exp(-x**2 / 2)): the length of a standard
    normal 3-vector.

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    return _standard("maxwell", _maxwell, key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _maxwell(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    norm_rvs = normal(key=key, shape=shape + (3,), dtype=dtype)
    return linalg_extra.norm(norm_rvs, axis=-1)


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Any:
    """Double-sided Maxwell values: a Maxwell value with a random sign, times `scale`, plus
    `loc`.

    Args:
      key: a PRNG key.
      loc, scale: the location and scale.
      shape: the shape of the draws, to which the parameters' broadcast shape is appended
        (as in JAX; the empty shape means the parameters' shape, so scalar parameters give
        `shape` and array ones `params_shape + params_shape`).
      dtype: a float dtype (float32 by default).
    Returns:
      An array of `shape + params_shape`.
    """
    key, _ = check_prng_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    shape = core.canonicalize_shape(shape)
    return _double_sided_maxwell(key, loc, scale, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: tuple[int, ...],
                          dtype: np.dtype) -> Any:
    params_shapes = util.broadcast_shapes(np.shape(loc), np.shape(scale))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = split_typed(key)
    maxwell_rvs = maxwell(maxwell_key, shape=shape, dtype=dtype)
    random_sign = rademacher(rademacher_key, shape=shape, dtype=dtype)
    return random_sign * maxwell_rvs * scale + loc


@lays_out
def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
         out_sharding: Any = None) -> Any:
    """Wald (inverse Gaussian, unit shape) values with mean `mean`: a root of the quadratic
    from a squared normal, chosen by a uniform (Michael, Schucany and Haas).

    Args:
      key: a PRNG key.
      mean: the mean, broadcast-compatible with `shape`.
      shape: the result shape (default `mean`'s shape).
      dtype: a float dtype (float32 by default) `mean` casts to safely.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("wald", key)
    dtype = float_dtype("wald", dtype)
    shape = check_broadcast_shapes("wald", shape, mean)
    check_all_safe_to_cast("wald", dtype, mean)
    return _wald(key, mean, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _wald(key: Any, mean: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    k1, k2 = split_typed(key, 2)
    mean = shape_ops.broadcast_to(mean.astype(dtype), shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax_selection.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)
