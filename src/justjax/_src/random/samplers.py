"""`jax.random`'s discrete samplers, with JAX 0.10.2's algorithms so a key gives JAX's values:
`randint` (two words of bits reduced modulo the span), `bernoulli`, `rademacher`,
`geometric`, `gumbel` (three resolutions), `categorical` (Gumbel max / top-k), `choice` and
`permutation` (rounds of sorts on fresh random 32-bit keys).

Each sampler checks its arguments as JAX does, then calls a jitted function named as JAX names
it (`_randint`, `_bernoulli`, `_gumbel`, `_shuffle`, ...), with JAX's static arguments, so
jaxprs print the same nested `jit` equations.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise as lax
from justjax._src.lax import sorting, structural
from justjax._src.lax import selection as lax_selection
from justjax._src.lax.prng import UINT_DTYPES
from justjax._src.numpy import (array_creation, reductions, selection, shape_ops,
                                sorting as jnp_sorting, take, ufuncs, util)
from justjax._src.random.distributions import _uniform, check_shape, float_dtype, uniform
from justjax._src.random.keys import check_prng_key, random_bits, split_typed
from justjax._src.random.layout import lays_out

__all__ = ["bernoulli", "categorical", "choice", "geometric", "gumbel", "permutation",
           "rademacher", "randint"]


# ---------------------------------------------------------------------------------------------
# Argument checks shared by the samplers.

def check_broadcast_shapes(name: str, shape: Sequence[int] | None, *args: Any
                           ) -> tuple[int, ...]:
    """The result shape: `shape` checked against the parameters' shapes, or (None) their
    broadcast shape (JAX's `_check_broadcast_shapes`)."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return util.broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = core.canonicalize_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def check_all_safe_to_cast(name: str, dtype: np.dtype, *args: Any) -> None:
    """JAX's TypePromotionError for a parameter that `dtype` cannot hold without loss."""
    for arg in args:
        if not dtypes.safe_to_cast(arg, dtype):
            arg_dtype = core.get_aval(array_creation.asarray(arg)).dtype
            raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely cast "
                                            f"argument of type {arg_dtype} to {dtype}")


def int_dtype(dtype: Any) -> np.dtype:
    """The user's integer dtype (the default int when None), canonicalized."""
    return dtypes.check_user_dtype(int if dtype is None else dtype)


def _dtype_of(x: Any) -> np.dtype:
    """JAX's `lax.dtype`: the canonical dtype of a value (a TypeError for lists)."""
    return dtypes.canonicalize_dtype(dtypes.dtype_and_weak_type(x)[0])


def _aval(x: Any) -> Any:
    return core.get_aval(x)


# ---------------------------------------------------------------------------------------------
# randint.

def convert_and_clip_integer(val: Any, dtype: np.dtype) -> Any:
    """The integer array `val` as `dtype`, clipped to the values both dtypes hold rather than
    wrapped (JAX's `_convert_and_clip_integer`)."""
    val_dtype = _aval(val).dtype
    if not (dtypes.is_int(dtype) and dtypes.is_int(val_dtype)):
        raise TypeError("_convert_and_clip_integer only accepts integer dtypes.")
    target, source = dtypes.iinfo(dtype), dtypes.iinfo(val_dtype)
    min_val = util.const(val, max(int(target.min), int(source.min)))
    max_val = util.const(val, min(int(target.max), int(source.max)))
    return selection.clip(val, min_val, max_val).astype(dtype)


@lays_out
def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None, *,
            out_sharding: Any = None) -> Any:
    """Uniform random integers in [minval, maxval).

    Bounds outside the dtype are clipped to it (`maxval` one past its maximum is allowed, so
    `randint(k, s, 0, 256, 'uint8')` covers all of uint8). 8- and 16-bit results are sampled
    at 32 bits then cast. The value is `minval + (hi * 2**nbits + lo) % span` from two words
    of random bits, slightly biased unless the span is a power of two (as in JAX).

    Args:
      key: a PRNG key.
      shape: the result shape.
      minval, maxval: integer bounds broadcast-compatible with `shape`.
      dtype: an integer dtype (int32 by default, int64 under x64).
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("randint", key)
    dtype = int_dtype(dtype)
    shape = core.canonicalize_shape(shape)
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    dtype_for_sampling = dtype
    if info.bits < 32:
        # Sampled at 32 bits, whose modulo bias is far smaller.
        dtype_for_sampling = np.dtype("int32")
        # Keyword bounds, as JAX's `Array.clip` passes them (its jit orders them by name).
        minval = selection.clip(array_creation.asarray(minval).astype("int32"),
                                min=int(info.min), max=int(info.max))
        maxval = selection.clip(array_creation.asarray(maxval).astype("int32"),
                                min=int(info.min), max=int(info.max) + 1)
    return _randint(key, minval, maxval, shape, dtype_for_sampling).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _randint(key: Any, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: np.dtype
             ) -> Any:
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    util.check_arraylike("randint", minval, maxval)
    minval = _as_int_array(minval)
    maxval = _as_int_array(maxval)
    # `maxval` beyond the dtype's maximum (2**32 for uint32, under x64) means one more
    # value than the clipped span holds.
    dtype_max = array_creation.array(dtypes.iinfo(dtype).max, dtype)
    maxval_out_of_range = lax.gt(maxval, convert_and_clip_integer(dtype_max,
                                                                  _aval(maxval).dtype))
    minval = convert_and_clip_integer(minval, dtype)
    maxval = convert_and_clip_integer(maxval, dtype)
    minval = structural.broadcast_to_rank(minval, len(shape))
    maxval = structural.broadcast_to_rank(maxval, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    k1, k2 = split_typed(key)
    higher_bits = random_bits(k1, nbits, shape)
    lower_bits = random_bits(k2, nbits, shape)
    span = _randint_span(minval, maxval, maxval_out_of_range, UINT_DTYPES[nbits])
    # (hi * 2**nbits + lo) % span without overflow: 2**nbits % span is computed as
    # (2**(nbits/2) % span)**2 % span.
    multiplier = lax.rem(util.const(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier),
                            lax.rem(lower_bits, span))
    random_offset = lax.rem(random_offset, span)
    return lax.add(minval, structural.convert_element_type(random_offset, dtype))


def _as_int_array(x: Any) -> Any:
    x = array_creation.asarray(x)
    return x if dtypes.is_int(_aval(x).dtype) else x.astype(int)


def _randint_span(minval: Any, maxval: Any, maxval_out_of_range: Any, unsigned: np.dtype
                  ) -> Any:
    """maxval - minval as unsigned: 1 where maxval <= minval (minval is returned), one more
    where maxval lies beyond the dtype (wrapping to 0 = the whole range)."""
    span = structural.convert_element_type(maxval - minval, unsigned)
    span = lax_selection.select(maxval <= minval, array_creation.lax_full_like(span, 1), span)
    return lax_selection.select(maxval_out_of_range & (maxval > minval),
                                lax.add(span, util.const(span, 1)), span)


# ---------------------------------------------------------------------------------------------
# permutation and choice.

@lays_out
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False, *,
                out_sharding: Any = None) -> Any:
    """A random permutation of `arange(x)` (an integer `x`) or of `x` along `axis`.

    Args:
      key: a PRNG key.
      x: an integer, or an array of at least one dimension.
      axis: the axis to permute.
      independent: shuffle each slice along `axis` independently (else one permutation of
        the whole sub-arrays).
    Returns:
      The permuted array.
    """
    key, _ = check_prng_key("permutation", key)
    util.check_arraylike("permutation", x)
    axis = util.canonicalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.is_int(_dtype_of(x)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = core.concrete_or_error(int, x, "argument x of jax.random.permutation()")
        return _shuffle(key, array_creation.arange(r), axis)
    return _permutation(key, x, axis, independent)


def _permutation(key: Any, x: Any, axis: int, independent: bool) -> Any:
    if independent or np.ndim(x) == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, array_creation.arange(np.shape(x)[axis]), 0)
    return take.take(x, ind, axis, unique_indices=True)


@functools.partial(jit, static_argnums=(2,))
def _shuffle(key: Any, x: Any, axis: int) -> Any:
    # Sorting on random 32-bit keys is a perfect shuffle once no two elements tie in every
    # round; JAX's static round count, ceil(3 ln(n) / ln(2**32 - 1)), makes ties unlikely.
    exponent = 3
    uint32max = dtypes.iinfo(np.uint32).max
    size = _aval(x).size
    num_rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        key, subkey = split_typed(key)
        sort_keys = random_bits(subkey, 32, _aval(x).shape)
        _, x = sorting.sort_key_val(sort_keys, x, axis)
    return x


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """Random samples from `arange(a)` (an integer `a`) or from `a`'s entries along `axis`.

    With replacement and no `p`, indices come from `randint`; without replacement, from a
    `permutation` (no `p`) or the Gumbel top-k trick; with `p` and replacement, by inverting
    the cumulative sum at uniform draws.

    Args:
      key: a PRNG key.
      a: a positive integer or an array.
      shape: the shape of the draws (a sequence).
      replace: draw with replacement.
      p: optional probabilities of the entries, a 1-D array of length `a.shape[axis]`.
      axis: the axis of `a` to draw along.
      mode: "low" or "high" resolution of the Gumbel noise (no `p`, no replacement).
    Returns:
      The draws: `shape` for an integer `a`, else `a.shape` with `axis` replaced by `shape`.
    """
    key, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError("shape argument of jax.random.choice must be a sequence, "
                        f"got {shape}")
    util.check_arraylike("choice", a)
    arr = array_creation.asarray(a)
    arr_shape = _aval(arr).shape
    if not arr_shape:
        n_inputs = core.concrete_or_error(int, a, "The error occurred in jax.random.choice()")
    else:
        axis = util.canonicalize_axis(axis, len(arr_shape))
        n_inputs = arr_shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return array_creation.zeros(shape, dtype=_aval(arr).dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        result = _choice_uniform(key, a, arr, shape, replace, axis, n_inputs, n_draws)
    else:
        ind = _choice_weighted(key, p, shape, replace, mode, n_inputs, n_draws)
        result = ind if not arr_shape else take.take(arr, ind, axis)
    out_shape = shape if not arr_shape else arr_shape[:axis] + tuple(shape) + arr_shape[axis + 1:]
    return result.reshape(out_shape)


def _choice_uniform(key: Any, a: Any, arr: Any, shape: Sequence[int], replace: bool,
                    axis: int, n_inputs: int, n_draws: int) -> Any:
    """Equally likely draws: randint indices, or the head of a permutation."""
    scalar = not _aval(arr).shape
    if replace:
        ind = randint(key, shape, 0, n_inputs)
        return ind if scalar else take.take(arr, ind, axis)
    slices = (slice(None),) * axis + (slice(n_draws),)
    return permutation(key, n_inputs if scalar else arr, axis)[slices]


def _choice_weighted(key: Any, p: Any, shape: Sequence[int], replace: bool,
                     mode: str | None, n_inputs: int, n_draws: int) -> Any:
    """Indices drawn with probabilities `p`: inverse CDF with replacement, Gumbel top-k
    without."""
    util.check_arraylike("choice", p)
    p_arr, = util.promote_dtypes_inexact(p)
    p_shape = _aval(p_arr).shape
    if p_shape != (n_inputs,):
        raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                         f"p has shape {p_shape} and a.shape[axis] is {n_inputs}.")
    p_dtype = _aval(p_arr).dtype
    if replace:
        p_cuml = reductions.cumsum(p_arr)
        r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_dtype))
        return jnp_sorting.searchsorted(p_cuml, r).astype(int)
    # The Gumbel top-k trick: the k largest of log p + Gumbel noise are a draw without
    # replacement.
    g = gumbel(key, (n_inputs,), dtype=p_dtype, mode=mode) + ufuncs.log(p_arr)
    return sorting.top_k(g, k=n_draws)[1].astype(int)


# ---------------------------------------------------------------------------------------------
# bernoulli, rademacher, geometric.

@lays_out
def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None, mode: str = "low",
              *, out_sharding: Any = None) -> Any:
    """Random booleans, True with probability `p`.

    Args:
      key: a PRNG key.
      p: the mean, a float or float array broadcast-compatible with `shape`.
      shape: the result shape (default `p`'s shape).
      mode: "low" compares one uniform with `p` (wrong below p ~ 1e-7 in float32); "high"
        uses two uniforms for twice the resolution.
    Returns:
      A bool array.
    """
    if shape is not None:
        shape = core.canonicalize_shape(shape)
    if mode not in ["high", "low"]:
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    key, _ = check_prng_key("bernoulli", key)
    dtype = _dtype_of(p)
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = structural.convert_element_type(p, dtype)
    return _bernoulli(key, p, shape=shape, mode=mode)


@functools.partial(jit, static_argnames=["shape", "mode"])
def _bernoulli(key: Any, p: Any, shape: tuple[int, ...] | None, mode: str) -> Any:
    if shape is None:
        shape = np.shape(p)
    else:
        check_shape("bernoulli", shape, np.shape(p))
    dtype = _aval(p).dtype
    if mode == "high":
        u1, u2 = uniform(key, (2, *shape), dtype)
        # u2 refines u1 below the resolution of one uniform, 2**-nmant.
        u2 = u2 * 2 ** -dtypes.finfo(dtype).nmant
        return u2 < p - u1
    return uniform(key, shape, dtype) < p


@lays_out
def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
               out_sharding: Any = None) -> Any:
    """Random signs, -1 or 1 with equal probability.

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: the result dtype (int32 by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("rademacher", key)
    dtype = int_dtype(dtype)
    shape = core.canonicalize_shape(shape)
    return _rademacher(key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _rademacher(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    bernoulli_samples = bernoulli(key=key, p=0.5, shape=shape).astype(dtype)
    return (2 * bernoulli_samples - 1).astype(dtype)


@lays_out
def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None, *,
              out_sharding: Any = None) -> Any:
    """Geometric random integers: the number of Bernoulli(p) trials up to the first success
    (at least 1), `floor(log(u) / log1p(-p)) + 1`.

    Args:
      key: a PRNG key.
      p: the success probability, broadcast-compatible with `shape`.
      shape: the result shape (default `p`'s shape).
      dtype: an integer dtype (int32 by default).
    Returns:
      An integer array.
    """
    key, _ = check_prng_key("geometric", key)
    dtype = int_dtype(dtype)
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = check_broadcast_shapes("geometric", shape, p)
    return _geometric(key, p, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _geometric(key: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    util.check_arraylike("geometric", p)
    p, = util.promote_dtypes_inexact(p)
    u = uniform(key, shape, _aval(p).dtype)
    # u = 0 is mapped to 1 (JAX keeps this rather than log1p(u - 1), to keep its values).
    u = selection.where(u == 0, 1, u)
    log_u = lax.log(u)
    log_one_minus_p = shape_ops.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    return g.astype(dtype)


# ---------------------------------------------------------------------------------------------
# gumbel and categorical.

@lays_out
def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None,
           *, out_sharding: Any = None) -> Any:
    """Standard Gumbel random values, `-log(-log(u))`.

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float dtype (float32 by default).
      mode: "low" (one uniform: logits up to ~16 in float32), "high" (two uniforms, ~32) or
        "highest" (64 random bits converted exactly, float32 only); the default is "high"
        when `jax_high_dynamic_range_gumbel` is set, else "low".
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = core.canonicalize_shape(shape)
    if mode is None:
        mode = "high" if config.read("jax_high_dynamic_range_gumbel") else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return _gumbel(key, shape, dtype, mode)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    check_shape("gumbel", shape)
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        return _gumbel_highest(key, shape)
    if mode in ("high", "highest"):
        high, low = _uniform(key, minval=0., maxval=1., shape=(2,) + shape, dtype=dtype)
        # `low` fills the bits below `high`'s resolution; the condition keeps the sum from
        # rounding up to 1.
        x = selection.where(high >= 0.5, high, high + 2 ** -(info.nmant) * low + info.tiny)
        return -ufuncs.log(-ufuncs.log1p(-x))
    u = _uniform(key, minval=info.tiny, maxval=1., shape=shape, dtype=dtype)
    return -ufuncs.log(-ufuncs.log(u))


def _gumbel_highest(key: Any, shape: tuple[int, ...]) -> Any:
    """float32 Gumbel noise from a 64-bit fixed-point uniform converted exactly: u below 1/2
    through log1p(-u), 1 - u (its 64-bit complement) through log otherwise."""
    bits = random_bits(key, 32, (2,) + shape)
    neg = lax.bitwise_not(bits)
    lo_bits = neg[1]
    # 1 - bits in u64 fixed point: the complement plus one, carried into the high word.
    all_ones = np.array(0xFFFFFFFF, dtype=np.uint32)
    carry = array_creation.array([lo_bits == all_ones, array_creation.ones_like(lo_bits)],
                                 dtype=np.uint32)
    neg = neg + carry
    flip_mask = bits[0] < np.array(1 << 31, dtype=np.uint32)
    x = _safe_int_to_float(selection.where(flip_mask, bits, neg))
    return selection.where(flip_mask, -ufuncs.log(-ufuncs.log1p(-x)),
                           -ufuncs.log(-ufuncs.log(x)))


def _safe_int_to_float(bits: Any) -> Any:
    """u32[2, ...] words of a 64-bit fixed-point fraction as the float32 in (0, 1) it rounds
    down to: the leading one found by `clz` sets the exponent, the next 23 bits the
    mantissa."""
    finfo = dtypes.finfo(np.float32)
    hiclz, loclz = lax.clz(bits)
    hi, lo = bits
    u32 = np.uint32
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        selection.where(hiclz == 32, lax.shift_left(lo, loclz),
                        lax.shift_right_logical(lo, finfo.bits - hiclz)))
    mantissa = lax.shift_right_logical(mantissa,
                                       np.array(finfo.bits - finfo.nmant - 1, dtype=u32))
    mantissa = lax.bitwise_and(mantissa, np.array((1 << finfo.nmant) - 1, dtype=u32))
    exp = lax.shift_left(-finfo.minexp - selection.where(hiclz == 32, 32 + loclz, hiclz),
                         np.array(finfo.nmant, dtype=u32))
    exp = lax.bitwise_and(exp, np.array((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1)),
                                        dtype=u32))
    return lax.bitwise_or(exp, mantissa).view(np.float32)


@lays_out
def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None, *,
                out_sharding: Any = None) -> Any:
    """Random category indices with probabilities `softmax(logits, axis)`: the argmax of
    logits plus Gumbel noise (with replacement) or its top k (without).

    Args:
      key: a PRNG key.
      logits: unnormalized log probabilities; `axis` runs over the categories.
      axis: the categories' axis.
      shape: the result shape, ending in the logits' batch shape (`logits.shape` without
        `axis`, the default).
      replace: draw with replacement.
      mode: the Gumbel noise's resolution ("low" or "high").
    Returns:
      int32 indices of `shape`.
    """
    key, _ = check_prng_key("categorical", key)
    util.check_arraylike("categorical", logits)
    logits_arr = array_creation.asarray(logits)
    batch_shape = tuple(np.delete(_aval(logits_arr).shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = core.canonicalize_shape(shape)
        check_shape("categorical", shape, batch_shape)
    return _categorical(key, logits_arr, shape, batch_shape, axis, replace, mode)


def _categorical(key: Any, logits_arr: Any, shape: tuple[int, ...],
                 batch_shape: tuple[int, ...], axis: int, replace: bool, mode: str | None
                 ) -> Any:
    logits_shape = _aval(logits_arr).shape
    dtype = _aval(logits_arr).dtype
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= len(logits_shape)
        noise_shape = list(shape[len(shape) - len(batch_shape):])
        noise_shape.insert(axis % len(logits_shape), logits_shape[axis])
        noise = gumbel(key, (*shape_prefix, *noise_shape), dtype, mode=mode)
        expanded = structural.expand_dims(logits_arr, tuple(range(len(shape_prefix))))
        return reductions.argmax(noise + expanded, axis=axis)
    logits_arr = logits_arr + gumbel(key, logits_shape, dtype, mode=mode)
    k = math.prod(shape_prefix)
    if k > logits_shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits_shape[axis]}).")
    _, indices = sorting.top_k(shape_ops.moveaxis(logits_arr, axis, -1), k)
    # indices are batch_shape + (k,); the k draws lead the result.
    ndim = _aval(indices).ndim
    return structural.reshape(indices, shape, (ndim - 1, *range(ndim - 1)))
