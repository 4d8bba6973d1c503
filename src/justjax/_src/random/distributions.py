"""`jax.random`'s basic distributions, with JAX's algorithms, so the same key gives the same
bits and values: `uniform` (random mantissa bits with exponent 0, i.e. [1, 2), minus 1) and
`normal` (sqrt(2) * erf_inv of a uniform in (-1, 1)).

Each sampler checks its arguments, then calls a jitted function named as JAX names it
(`_uniform`, `_normal`, `_normal_real`), so jaxprs print the same nested `jit` equations.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise as lax
from justjax._src.lax import structural
from justjax._src.lax.prng import UINT_DTYPES
from justjax._src.numpy import array_creation
from justjax._src.numpy.util import broadcast_shapes
from justjax._src.random.keys import check_prng_key, random_bits, split_typed
from justjax._src.random.layout import lays_out

__all__ = ["normal", "uniform"]


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: Sequence[int]) -> None:
    """JAX's ValueError when parameter shapes do not broadcast to exactly `shape`."""
    if param_shapes:
        broadcast = broadcast_shapes(shape, *param_shapes)
        if broadcast != shape:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal "
                             f"the shape argument, but got result {broadcast} for shape "
                             f"argument {shape}.")


def float_dtype(name: str, dtype: Any, kinds: str = "floating") -> np.dtype:
    """The user's dtype (float by default), canonicalized; ValueError unless it is a float
    (or, with `kinds="inexact"`, a complex) dtype."""
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    ok = dtypes.is_float(dtype) or (kinds == "inexact" and dtypes.is_complex(dtype))
    if not ok:
        what = "a float" if kinds == "floating" else "a float or complex"
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got "
                         f"{dtypes.dtype_name(dtype)}")
    return dtype


@lays_out
def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0, *, out_sharding: Any = None) -> Any:
    """Uniform random values in [minval, maxval).

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float dtype (float32 by default, float64 under x64).
      minval, maxval: bounds broadcast-compatible with `shape`.
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = core.canonicalize_shape(shape)
    return _uniform(key, minval, maxval, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _uniform(key: Any, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: np.dtype
             ) -> Any:
    check_shape("uniform", shape)
    minval = structural.convert_element_type(minval, dtype)
    maxval = structural.convert_element_type(maxval, dtype)
    minval = structural.broadcast_to_rank(minval, len(shape))
    maxval = structural.broadcast_to_rank(maxval, len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = UINT_DTYPES[nbits]
    bits = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = structural.convert_element_type(bits, uint_dtype)
    # Random mantissa bits under the exponent of 1.0 give a float in [1, 2).
    float_bits = lax.shift_right_logical(bits, np.array(rng_bits - nmant, uint_dtype))
    one_bits = np.array(1.0, dtype).view(uint_dtype)
    float_bits = lax.bitwise_or(float_bits, array_creation.asarray(one_bits, dtype=uint_dtype))
    floats = lax.sub(structural.bitcast_convert_type(float_bits, dtype),
                     array_creation.array(1.0, dtype))
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return lax.max(minval, structural.reshape(scaled, shape))


@lays_out
def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
           out_sharding: Any = None) -> Any:
    """Standard normal random values (complex dtypes: real and imaginary parts each of
    variance 1/2).

    Args:
      key: a PRNG key.
      shape: the result shape.
      dtype: a float or complex dtype (float32 by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    key, _ = check_prng_key("normal", key)
    shape = core.canonicalize_shape(shape)
    dtype = float_dtype("normal", dtype, "inexact")
    return _normal(key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    if dtypes.is_complex(dtype):
        sqrt2 = np.array(np.sqrt(2), dtype)
        key_re, key_im = split_typed(key)
        real_dtype = dtypes.real_dtype(dtype)
        re = structural.convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
        im = structural.convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
        return lax.div(lax.add(re, lax.mul(np.array(1j, dtype), im)), sqrt2)
    return _normal_real(key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal_real(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    check_shape("normal", shape)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    hi = np.array(1.0, dtype)
    u = uniform(key, shape, dtype, lo, hi)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))
