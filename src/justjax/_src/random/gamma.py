"""`jax.random`'s Gamma family, with JAX's algorithms, so a key gives JAX's values: the
`random_gamma` primitive and `gamma`, `loggamma`, `beta`, `dirichlet`, `chisquare`, `f`, `t`,
`generalized_normal` and `ball`, which build on it.

`random_gamma` (param `log_space`) draws Gamma(a, 1) by Marsaglia and Tsang's method: every
element of `a` gets its own key (the key split once per element) and runs `_gamma_one`, two
nested `while_loop`s of rejection sampling, vmapped over the elements. For a < 1 it samples
Gamma(a + 1) and multiplies by U^(1/a) (in log space, adds log(U)/a, which keeps tiny samples
representable). Its derivative is implicit, `random_gamma_grad` (dx/da of the CDF held fixed),
mapped element by element as JAX does on CPU. The primitive lowers by tracing the vmapped
sampler (`lower_fun`); batching moves the batch axes of key and `a` to the front.

Samplers check their arguments and call jitted functions named as JAX names them (`_gamma`,
`_beta`, `_dirichlet`, `_chisquare`, `_f`, `_t`, `_generalized_normal`, `_ball`), so jaxprs
print the same nested `jit` equations.
"""
from __future__ import annotations

import functools
import math
from operator import index
from typing import Any, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.lax.control_flow.library import map as lax_map
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.lax.elementwise import _const
from justjax._src.lax.prng import threefry_prng_impl
from justjax._src.nn.functions import softmax
from justjax._src.numpy import array_creation, shape_ops, ufuncs
from justjax._src.numpy.util import broadcast_shapes
from justjax._src.random.continuous import exponential
from justjax._src.random.distributions import check_shape, float_dtype, normal, uniform
from justjax._src.random.keys import check_prng_key, split, split_typed
from justjax._src.random.layout import lays_out
from justjax._src.random.samplers import (check_all_safe_to_cast, check_broadcast_shapes,
                                          rademacher)

__all__ = ["ball", "beta", "chisquare", "dirichlet", "f", "gamma", "generalized_normal",
           "loggamma", "random_gamma_p", "t"]


# ---------------------------------------------------------------------------------------------
# One Gamma(alpha, 1) sample: Marsaglia and Tsang, "A simple method for generating gamma
# variables" (2000).

def _gamma_one(key: Any, alpha: Any, log_space: bool) -> Any:
    zero = _const(alpha, 0)
    one = _const(alpha, 1)
    two = _const(alpha, 2)
    minus_one = _const(alpha, -1)
    one_over_two = _const(alpha, 0.5)
    one_over_three = _const(alpha, 1.0 / 3.0)
    squeeze_const = _const(alpha, 0.0331)
    dtype = core.get_aval(alpha).dtype

    # alpha < 1 samples Gamma(alpha + 1) and multiplies by U^(1/alpha) below.
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax_selection.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kXVU: tuple) -> Any:
        _, X, V, U = kXVU
        # Both tests are evaluated (a select would not skip the logs under vmap either).
        squeeze = lax.ge(U, lax.sub(one, lax.mul(squeeze_const, lax.mul(X, X))))
        full = lax.ge(lax.log(U), lax.add(lax.mul(X, one_over_two),
                                          lax.mul(d, lax.add(lax.sub(one, V), lax.log(V)))))
        return lax.bitwise_and(squeeze, full)

    def next_kxv(kxv: tuple) -> tuple:
        key, subkey = split_typed(kxv[0])
        x = normal(subkey, (), dtype=dtype)
        v = lax.add(one, lax.mul(x, c))
        return key, x, v

    def body_fn(kXVU: tuple) -> tuple:
        key, x_key, U_key = split_typed(kXVU[0], 3)
        _, x, v = while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                             (x_key, zero, minus_one))
        X = lax.mul(x, x)
        V = lax.mul(lax.mul(v, v), v)
        U = uniform(U_key, (), dtype=dtype)
        return key, X, V, U

    # The initial state makes `cond_fn` true, so the body runs at least once.
    key, subkey = split_typed(key)
    _, _, V, _ = while_loop(cond_fn, body_fn, (key, zero, one, two))
    if log_space:
        # log(U) ~ -Exponential, drawn as log(1 - U) so both spaces use the same U.
        log_samples = lax.neg(exponential(subkey, (), dtype=dtype))
        log_boost = lax_selection.select(boost_mask | (log_samples == 0), zero,
                                         lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = 1 - uniform(subkey, (), dtype=dtype)
    boost = lax_selection.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _gamma_impl(key: Any, a: Any, *, log_space: bool, use_vmap: bool = False) -> Any:
    """Samples for every element of `a`; `key` has a prefix of `a`'s shape (batched keys)."""
    a_shape = np.shape(a)
    key_shape = core.get_aval(key).shape
    split_count = math.prod(a_shape[len(key_shape):])
    keys = structural.reshape(key, (math.prod(key_shape),))
    keys = batching.vmap_positional(lambda k: split_typed(k, split_count), (0,))(keys)
    keys = structural.reshape(keys, (math.prod(a_shape),))
    alphas = structural.reshape(a, (math.prod(a_shape),))
    if use_vmap and core.get_aval(key).dtype._impl is threefry_prng_impl:
        samples = batching.vmap_positional(functools.partial(_gamma_one, log_space=log_space),
                                           (0, 0))(keys, alphas)
    else:
        samples = lax_map(lambda args: _gamma_one(*args, log_space=log_space), (keys, alphas))
    return shape_ops.reshape(samples, a_shape)


def _gamma_grad(sample: Any, a: Any, *, log_space: bool) -> Any:
    """d sample / d a, elementwise (`random_gamma_grad` mapped over the elements)."""
    samples = shape_ops.reshape(sample, -1)
    alphas = shape_ops.reshape(a, -1)
    if log_space:
        # d log(x) = dx / x; exp(log x) may round to 0, so use the smallest normal instead.
        samples = lax.exp(samples)
        zero = _const(sample, 0)
        tiny_value = dtypes.finfo(core.get_aval(samples).dtype).tiny
        tiny = array_creation.lax_full_like(samples, tiny_value)
        samples = lax_selection.select(lax.eq(samples, zero), tiny, samples)

        def gamma_grad(alpha: Any, x: Any) -> Any:
            return lax.div(lax_special.random_gamma_grad(alpha, x), x)
    else:
        gamma_grad = lax_special.random_gamma_grad
    # JAX maps (rather than vmaps) on CPU: one element's while loops at a time.
    grads = lax_map(lambda args: gamma_grad(*args), (alphas, samples))
    return shape_ops.reshape(grads, np.shape(a))


random_gamma_p = core.Primitive("random_gamma")


def _random_gamma_abstract_eval(key: ShapedArray, a: ShapedArray, *, log_space: bool
                                ) -> ShapedArray:
    return a


def _random_gamma_jvp(g: Any, ans: Any, key: Any, a: Any, *, log_space: bool) -> Any:
    return lax.mul(g, _gamma_grad(ans, a, log_space=log_space))


def _random_gamma_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                          dims: Sequence[int | None], *, log_space: bool) -> tuple[Any, int]:
    key, a = (batching.bdim_at_front(x, d, axis_data.size)
              for x, d in zip(vals, dims, strict=True))
    return random_gamma_p.bind(key, a, log_space=log_space), 0


random_gamma_p.def_abstract_eval(_random_gamma_abstract_eval)
dispatch.def_backend_impl(random_gamma_p)
ad.defjvp2(random_gamma_p, None, _random_gamma_jvp)
batching.primitive_batchers[random_gamma_p] = _random_gamma_batcher
lowering.register_lowering(random_gamma_p, lowering.lower_fun(
    functools.partial(_gamma_impl, use_vmap=True), multiple_results=False))


# ---------------------------------------------------------------------------------------------
# gamma and loggamma

@lays_out
def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
          out_sharding: Any = None) -> Any:
    """Gamma(a, 1) random values (density proportional to x^(a-1) e^(-x), x >= 0).

    Args:
      key: a PRNG key.
      a: the shape parameter, broadcast-compatible with `shape`.
      shape: the result shape (default: `a`'s shape).
      dtype: a float dtype (float32 by default, float64 under x64).
    Returns:
      An array of `shape` and `dtype`, one `random_gamma` equation in a jaxpr (StableHLO:
      the vmapped rejection sampler's `while` loops).
    """
    key, _ = check_prng_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    if shape is not None:
        shape = core.canonicalize_shape(shape)
    return _gamma(key, a, shape=shape, dtype=dtype)


@lays_out
def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
             out_sharding: Any = None) -> Any:
    """The logarithm of Gamma(a, 1) random values, computed in log space (accurate where
    samples underflow, for small `a`): `exp(loggamma(...))` matches `gamma(...)`.

    Args:
      key: a PRNG key.
      a: the shape parameter, broadcast-compatible with `shape`.
      shape: the result shape (default: `a`'s shape).
      dtype: a float dtype.
    Returns:
      An array of `shape` and `dtype` (StableHLO as `gamma`).
    """
    key, _ = check_prng_key("loggamma", key)
    dtype = float_dtype("gamma", dtype)  # JAX's message names `gamma` here too
    if shape is not None:
        shape = core.canonicalize_shape(shape)
    return _gamma(key, a, shape=shape, dtype=dtype, log_space=True)


@functools.partial(jit, static_argnames=("shape", "dtype", "log_space"))
def _gamma(key: Any, a: Any, shape: tuple[int, ...] | None, dtype: np.dtype,
           log_space: bool = False) -> Any:
    if shape is None:
        shape = np.shape(a)
    else:
        check_shape("gamma", shape, np.shape(a))
    a = structural.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = shape_ops.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space)


# ---------------------------------------------------------------------------------------------
# Distributions built on Gamma

@lays_out
def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
         out_sharding: Any = None) -> Any:
    """Beta(a, b) random values on [0, 1]: G_a / (G_a + G_b) of two Gamma samples, formed
    from their logarithms so that small parameters keep their precision.

    Args:
      key: a PRNG key.
      a, b: the parameters, broadcast-compatible with `shape`.
      shape: the result shape (default: `a` and `b` broadcast).
      dtype: a float dtype.
    Returns:
      An array of `shape` and `dtype` (StableHLO: two `random_gamma` samplers, `exponential`).
    """
    key, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_all_safe_to_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    return _beta(key, a, b, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _beta(key: Any, a: Any, b: Any, shape: tuple[int, ...] | None, dtype: np.dtype) -> Any:
    if shape is None:
        shape = broadcast_shapes(np.shape(a), np.shape(b))
    else:
        check_shape("beta", shape, np.shape(a), np.shape(b))
    a = structural.convert_element_type(a, dtype)
    b = structural.convert_element_type(b, dtype)
    key_a, key_b = split_typed(key)
    a = shape_ops.broadcast_to(a, shape)
    b = shape_ops.broadcast_to(b, shape)
    log_gamma_a = loggamma(key_a, a, shape, dtype)
    log_gamma_b = loggamma(key_b, b, shape, dtype)
    # G_a / (G_a + G_b), both scaled by the larger so neither underflows.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = ufuncs.exp(log_gamma_a - log_max)
    gamma_b_scaled = ufuncs.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


@lays_out
def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
              out_sharding: Any = None) -> Any:
    """Dirichlet(alpha) random values: points of the simplex (the last axis sums to 1), the
    softmax of log-Gamma samples.

    Args:
      key: a PRNG key.
      alpha: the concentrations, shape `(..., n)`.
      shape: the batch shape, broadcast-compatible with `alpha.shape[:-1]` (default: it).
      dtype: a float dtype.
    Returns:
      An array of shape `shape + (n,)` and `dtype`.
    """
    key, _ = check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    if shape is not None:
        shape = core.canonicalize_shape(shape)
    return _dirichlet(key, alpha, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _dirichlet(key: Any, alpha: Any, shape: tuple[int, ...] | None, dtype: np.dtype) -> Any:
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    if shape is None:
        shape = np.shape(alpha)[:-1]
    else:
        check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    alpha = structural.convert_element_type(alpha, dtype)
    # Log space: small concentrations give Gamma samples that underflow.
    log_gamma_samples = loggamma(key, alpha, shape + np.shape(alpha)[-1:], dtype)
    return softmax(log_gamma_samples, -1)


@lays_out
def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
              out_sharding: Any = None) -> Any:
    """Chi-square random values with `df` degrees of freedom: 2 Gamma(df / 2).

    Args:
      key: a PRNG key.
      df: the degrees of freedom, broadcast-compatible with `shape`.
      shape: the result shape (default: `df`'s shape).
      dtype: a float dtype.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = check_broadcast_shapes("chisquare", shape, df)
    check_all_safe_to_cast("chisquare", dtype, df)
    return _chisquare(key, df, shape, dtype, out_sharding)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _chisquare(key: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype,
               out_sharding: Any) -> Any:
    df = structural.convert_element_type(df, dtype)
    two = _const(df, 2)
    half_df = lax.div(df, two)
    log_g = loggamma(key, a=half_df, shape=shape, dtype=dtype, out_sharding=out_sharding)
    return lax.mul(ufuncs.exp(log_g), two)


@lays_out
def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None, dtype: Any = None,
      *, out_sharding: Any = None) -> Any:
    """F-distribution random values: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden).

    Args:
      key: a PRNG key.
      dfnum, dfden: the numerator's and denominator's degrees of freedom.
      shape: the result shape (default: the parameters' shapes broadcast).
      dtype: a float dtype.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = check_broadcast_shapes("f", shape, dfnum, dfden)
    check_all_safe_to_cast("f", dtype, dfnum, dfden)
    return _f(key, dfnum, dfden, shape, dtype, out_sharding)


@functools.partial(jit, static_argnums=(3, 4, 5))
def _f(key: Any, dfnum: Any, dfden: Any, shape: tuple[int, ...], dtype: np.dtype,
       out_sharding: Any) -> Any:
    dfden = structural.convert_element_type(dfden, dtype)
    dfnum = structural.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = split_typed(key)
    chi2_dfn = chisquare(key_dfn, dfnum, shape, dtype, out_sharding=out_sharding)
    chi2_dfd = chisquare(key_dfd, dfden, shape, dtype, out_sharding=out_sharding)
    num = lax.div(chi2_dfn, dfnum)
    den = lax.div(chi2_dfd, dfden)
    return lax.div(num, den)


@lays_out
def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
      out_sharding: Any = None) -> Any:
    """Student's t random values with `df` degrees of freedom: N * sqrt((df / 2) / G) with
    N standard normal and G ~ Gamma(df / 2).

    Args:
      key: a PRNG key.
      df: the degrees of freedom, broadcast-compatible with `shape`.
      shape: the result shape (default: `df`'s shape).
      dtype: a float dtype.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = check_broadcast_shapes("t", shape, df)
    check_all_safe_to_cast("t", dtype, df)
    return _t(key, df, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _t(key: Any, df: Any, shape: tuple[int, ...] | None, dtype: np.dtype) -> Any:
    if shape is None:
        shape = np.shape(df)
    else:
        check_shape("t", shape, np.shape(df))
    df = structural.convert_element_type(df, dtype)
    key_n, key_g = split_typed(key)
    n = normal(key_n, shape, dtype)
    two = _const(n, 2)
    half_df = lax.div(df, two)
    g = gamma(key_g, half_df, shape, dtype)
    return n * ufuncs.sqrt(half_df / g)


@lays_out
def generalized_normal(key: Any, p: float, shape: Sequence[int] = (), dtype: Any = None, *,
                       out_sharding: Any = None) -> Any:
    """Generalized normal random values (density proportional to exp(-|x|^p)): a random
    sign times Gamma(1/p)^(1/p).

    Args:
      key: a PRNG key.
      p: the shape parameter, p > 0.
      shape: the result shape.
      dtype: a float dtype.
    Returns:
      An array of `shape` and `dtype`.
    """
    shape = core.canonicalize_shape(shape)
    key, _ = check_prng_key("generalized_normal", key)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    check_shape("generalized_normal", shape)
    return _generalized_normal(key, p, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _generalized_normal(key: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    keys = split(key)
    g = gamma(keys[0], 1 / p, shape, dtype)
    r = rademacher(keys[1], shape, dtype)
    return r * g ** (1 / p)


@lays_out
def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None, *,
         out_sharding: Any = None) -> Any:
    """Points uniform in the unit Lp ball of dimension `d` (Barthe, Guedon, Mendelson and
    Naor): generalized normal coordinates over (||g||_p^p + E)^(1/p), E exponential.

    Args:
      key: a PRNG key.
      d: the dimension, a nonnegative int.
      p: the norm's p.
      shape: the batch shape.
      dtype: a float dtype.
    Returns:
      An array of shape `shape + (d,)` and `dtype`.
    """
    shape = core.canonicalize_shape(shape)
    key, _ = check_prng_key("ball", key)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    check_shape("ball", shape)
    d = core.concrete_or_error(index, d, "The error occurred in jax.random.ball()")
    return _ball(key, p, d, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _ball(key: Any, p: Any, d: int, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    k1, k2 = split(key)
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    return g / (((ufuncs.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
