"""`jax.random`'s counting distributions, with JAX's algorithms (those of TensorFlow and
NumPy), so a key gives JAX's values: `poisson`, `binomial` and `multinomial`.

- `poisson`: Knuth's method (multiply uniforms until the product drops below e^-lam) where
  lam < 10 or is NaN, Hormann's transformed rejection (PTRS) elsewhere; both run as one
  `while_loop` over the whole array until every element is done, and a select picks each
  element's result (lam == 0 gives 0).
- `binomial`: the inversion of geometric waiting times where n * min(p, 1 - p) <= 10,
  Kachitvichyanukul and Schmeiser's BTRS rejection elsewhere, sampling with q = min(p, 1 - p)
  and reflecting (n - k) when p >= 1/2; NaN for invalid parameters, inf for infinite n.
- `multinomial`: a `scan` over the categories drawing each count as a binomial of what
  remains.

Samplers call jitted functions named as JAX names them (`_poisson`, `_poisson_knuth`,
`_poisson_rejection`; `_binomial`, `_binomial_inversion` and `_btrs` are inlined jits), so
jaxprs print the same.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise as lax
from justjax._src.lax import cumulative
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.lax.control_flow.scan import scan
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.lax.elementwise import _const
from justjax._src.lax.prng import threefry_prng_impl
from justjax._src.numpy import array_creation, selection, shape_ops, ufuncs
from justjax._src.numpy.util import broadcast_shapes, check_arraylike, promote_dtypes_inexact
from justjax._src.random.distributions import check_shape, float_dtype, uniform
from justjax._src.random.keys import check_prng_key, split, split_typed
from justjax._src.random.layout import lays_out

__all__ = ["binomial", "multinomial", "poisson"]

full_like = array_creation.lax_full_like


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


# ---------------------------------------------------------------------------------------------
# poisson

@lays_out
def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
            out_sharding: Any = None) -> Any:
    """Poisson(lam) random values.

    Args:
      key: a PRNG key (threefry2x32).
      lam: the rate, lam >= 0, broadcast-compatible with `shape`.
      shape: the result shape (default: `lam`'s shape).
      dtype: an integer dtype (int32 by default, int64 under x64).
    Returns:
      An array of `shape` and `dtype` (StableHLO: two `while` loops and selects).
    """
    key, _ = check_prng_key("poisson", key)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype)
    key_impl = core.get_aval(key).dtype._impl
    if key_impl is not threefry_prng_impl:
        raise NotImplementedError("`poisson` is only implemented for the threefry2x32 RNG, "
                                  f"not {key_impl}")
    shape = np.shape(lam) if shape is None else core.canonicalize_shape(shape)
    lam = shape_ops.broadcast_to(lam, shape)
    lam = structural.convert_element_type(lam, np.float32)
    return _poisson(key, lam, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_knuth(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype,
                   max_iters: Any) -> Any:
    def body_fn(carry: tuple) -> tuple:
        i, k, rng, log_prod = carry
        rng, subkey = split_typed(rng)
        k = lax_selection.select(log_prod > -lam, k + 1, k)
        u = uniform(subkey, shape, np.float32)
        return i + 1, k, rng, log_prod + ufuncs.log(u)

    def cond_fn(carry: tuple) -> Any:
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k_init = full_like(lam, 0, dtype, shape)
    log_rate_init = full_like(lam, 0, np.float32, shape)
    k = while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_rejection(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype,
                       max_iters: Any) -> Any:
    # Hormann, "The transformed rejection method for generating Poisson random variables".
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_typed(key, 3)
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = lax_selection.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: tuple) -> Any:
        i, _, accepted, _ = carry
        return (~accepted).any() & (i < max_iters)

    k_init = full_like(lam, -1, lam.dtype, shape)
    accepted = full_like(lam, False, np.dtype("bool"), shape)
    k = while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]
    return k.astype(dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _poisson(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = lax_selection.select(use_knuth, lam, full_like(lam, 0.0))
    # Rejection's acceptance rate tends to 89% as lam grows: a large dummy rate for the
    # elements Knuth handles.
    lam_rejection = lax_selection.select(use_knuth, full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)  # no practical bound
    result = lax_selection.select(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax_selection.select(lam == 0, array_creation.zeros_like(result), result)


# ---------------------------------------------------------------------------------------------
# binomial

def _stirling_approx_tail(k: Any) -> Any:
    """log(k!) minus its Stirling approximation: tabulated for k <= 9, else its series."""
    stirling_tail_vals = array_creation.array(
        [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287], dtype=k.dtype)
    use_tail_values = k <= 9
    k = lax_selection.clamp(_const(k, 0.0), k, _const(k, 9.0))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = ufuncs.floor(k)
    return lax_selection.select(use_tail_values,
                                stirling_tail_vals[array_creation.asarray(k, dtype="int32")],
                                approx)


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _binomial_inversion(key: Any, count: Any, prob: Any, shape: tuple[int, ...],
                        dtype: np.dtype, max_iters: Any) -> Any:
    log1minusprob = ufuncs.log1p(-prob)

    def body_fn(carry: tuple) -> tuple:
        i, num_geom, geom_sum, key = carry
        subkey, key = split(key)
        num_geom_out = lax_selection.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob.dtype)
        geom = ufuncs.ceil(ufuncs.log(u) / log1minusprob)
        geom_sum = geom_sum + geom
        return i + 1, num_geom_out, geom_sum, key

    def cond_fn(carry: tuple) -> Any:
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    num_geom_init = full_like(prob, 0, prob.dtype, shape)
    geom_sum_init = full_like(prob, 0, prob.dtype, shape)
    k = while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
    return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _btrs(key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype,
          max_iters: Any) -> Any:
    # Hormann, "The generation of binomial random variates" (1993): BTRS.
    stddev = ufuncs.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = ufuncs.floor((count + 1) * prob)

    def body_fn(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split(key, 3)
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - ufuncs.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = ufuncs.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = ufuncs.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * ufuncs.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * ufuncs.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * ufuncs.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | (~reject & accept2)
        k_out = lax_selection.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: tuple) -> Any:
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    k_init = full_like(prob, -1, prob.dtype, shape)
    carry = (0, k_init, array_creation.full(shape, False, bool), key)
    return while_loop(cond_fn, body_fn, carry)[1].astype(dtype)


@functools.partial(jit, static_argnums=(3, 4), inline=True)
def _binomial(key: Any, count: Any, prob: Any, shape: tuple[int, ...] | None,
              dtype: np.dtype) -> Any:
    if shape is None:
        shape = broadcast_shapes(np.shape(count), np.shape(prob))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    (prob,) = promote_dtypes_inexact(prob)
    # (A Python scalar stays one when promoted: read its dtype off its aval.)
    count = structural.convert_element_type(count, core.get_aval(prob).dtype)
    count = shape_ops.broadcast_to(count, shape)
    prob = shape_ops.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax_selection.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = ufuncs.isinf(count)
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax_selection.select(q_is_nan | q_l_0, full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    # A float count is floored, as NumPy's binomial does.
    count = ufuncs.floor(count)
    count_inv = lax_selection.select(use_inversion, count, full_like(count, 0.0))
    count_btrs = lax_selection.select(use_inversion, full_like(count, 1e4), count)
    q_btrs = lax_selection.select(use_inversion, full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax_selection.select(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
        _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    return _binomial_special_cases(samples, count, p_lt_half, count_nan_or_neg, count_inf,
                                   q_is_nan, q_l_0, dtype)


def _binomial_special_cases(samples: Any, count: Any, p_lt_half: Any, count_nan_or_neg: Any,
                            count_inf: Any, q_is_nan: Any, q_l_0: Any, dtype: np.dtype
                            ) -> Any:
    """NaN for a NaN or negative p or count, inf for an infinite count, and n - k where
    p >= 1/2 (the sample was drawn with 1 - p)."""
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax_selection.select(invalid, array_creation.full_like(samples, np.nan, dtype),
                                   samples)
    samples = lax_selection.select(count_inf & (~invalid),
                                   array_creation.full_like(samples, np.inf, dtype), samples)
    return lax_selection.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                                count.astype(dtype) - samples)


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Binomial(n, p) random values (as floats).

    Args:
      key: a PRNG key.
      n: the number of trials (floored), broadcast-compatible with `shape`.
      p: the success probability, broadcast-compatible with `shape`.
      shape: the result shape (default: `n` and `p` broadcast).
      dtype: a float dtype.
    Returns:
      An array of `shape` and `dtype` (StableHLO: two `while` loops and selects).
    """
    key, _ = check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = float_dtype("binomial", dtype)
    if shape is not None:
        shape = core.canonicalize_shape(shape)
    return _binomial(key, n, p, shape, dtype)


# ---------------------------------------------------------------------------------------------
# multinomial

def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None,
                dtype: Any = None, unroll: int | bool = 1) -> Any:
    """Multinomial(n, p) counts: category i's count is a binomial of the trials left over
    with probability p_i / (p_i + p_{i+1} + ...), drawn in a `scan` over the categories.

    Args:
      key: a PRNG key.
      n: the number of trials, broadcast-compatible with `p.shape[:-1]`.
      p: the probabilities, categories along the last axis.
      shape: the result shape (default: `p.shape`).
      dtype: a float dtype for the counts.
      unroll: the `scan`'s unroll.
    Returns:
      An array of `shape` (or `p.shape`) counts (StableHLO: a `while` loop over the
      categories, each step a binomial's loops).
    """
    key, _ = check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    if shape is None:
        shape = p.shape
    n = shape_ops.broadcast_to(n, shape[:-1])
    p = shape_ops.broadcast_to(p, shape)

    def f(remainder: Any, ratio_key: tuple) -> tuple:
        ratio, key = ratio_key
        count = binomial(key, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p = shape_ops.moveaxis(p, -1, 0)
    remaining_probs = cumulative.cumsum(p, 0, reverse=True)
    ratios = p / selection.where(remaining_probs == 0, 1, remaining_probs)
    keys = split(key, ratios.shape[0])
    _, counts = scan(f, n, (ratios, keys), unroll=unroll)
    return shape_ops.moveaxis(counts, 0, -1).astype(dtype)
