"""`jax.nn.initializers`: functions that build parameter arrays from a key, a shape and a dtype.

Each builder returns an `Initializer`, called as `init(key, shape, dtype=None,
out_sharding=None)`. The samplers are `jax.random`'s, called in JAX's order with JAX's
arguments, so a key gives the same values as in JAX.
"""
from __future__ import annotations

import math
import typing
from typing import Any, Literal, Protocol, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.numpy import array_creation, shape_ops, ufuncs
from justjax._src.random import continuous, distributions, keys, multivariate

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]

# Where the names live publicly (for repr and pickle), as JAX sets its own to jax.nn.initializers.
_PUBLIC_MODULE = "justjax.nn.initializers"

Axes = int | Sequence[int]

# The standard deviation of a standard normal truncated to (-2, 2), and of a complex
# standard normal whose modulus is truncated to 2: dividing by them makes the truncated
# samples' standard deviation the one asked for.
_TRUNCATED_STDDEV = .87962566103423978
_COMPLEX_TRUNCATED_STDDEV = .95311164380491208


@typing.runtime_checkable
class Initializer(Protocol):
    """Protocol for initializers returned by `jax.nn.initializers` APIs: a callable
    `(key, shape, dtype=None, out_sharding=None) -> Array`."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None,
                 out_sharding: Any = None) -> Any:
        ...


def _dtype_or_default(dtype: Any) -> Any:
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An initializer that returns an array of zeros (the key is ignored).

    Args:
      key: a PRNG key (unused).
      shape: the result shape.
      dtype: the result dtype (the default float dtype when None).
      out_sharding: how the result is laid out (a Sharding or PartitionSpec), or None.
    Returns:
      `jnp.zeros(shape, dtype)`.
    """
    return array_creation.zeros(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An initializer that returns an array of ones (the key is ignored).

    Args:
      key: a PRNG key (unused).
      shape: the result shape.
      dtype: the result dtype (the default float dtype when None).
      out_sharding: how the result is laid out (a Sharding or PartitionSpec), or None.
    Returns:
      `jnp.ones(shape, dtype)`.
    """
    return array_creation.ones(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def constant(value: Any, dtype: Any = None) -> Initializer:
    """Builds an initializer that returns arrays full of `value`.

    Args:
      value: the fill value.
      dtype: the initializer's default dtype.
    Returns:
      An initializer.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        return array_creation.full(shape, value, dtype=_dtype_or_default(dtype),
                                   out_sharding=out_sharding)
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Builds an initializer of values uniform in `[0, scale)`.

    Args:
      scale: the upper bound.
      dtype: the initializer's default dtype.
    Returns:
      An initializer.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype_or_default(dtype)
        values = distributions.uniform(key, shape, dtype, out_sharding=out_sharding)
        return ufuncs.multiply(values, array_creation.array(scale, dtype))
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Builds an initializer of normal values with mean 0 and standard deviation `stddev`.

    Args:
      stddev: the standard deviation.
      dtype: the initializer's default dtype.
    Returns:
      An initializer.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype_or_default(dtype)
        values = distributions.normal(key, shape, dtype, out_sharding=out_sharding)
        return ufuncs.multiply(values, array_creation.array(stddev, dtype))
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """Builds an initializer of standard normal values truncated to `(lower, upper)`, then
    multiplied by `stddev` (no correction of the truncation's smaller spread is applied).

    Args:
      stddev: the standard deviation of the untruncated distribution.
      dtype: the initializer's default dtype.
      lower, upper: the truncation bounds, before scaling by `stddev`.
    Returns:
      An initializer.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype_or_default(dtype)
        values = continuous.truncated_normal(key, lower, upper, shape, dtype,
                                             out_sharding=out_sharding)
        return ufuncs.multiply(values, array_creation.array(stddev, dtype))
    return init


def _size(shape: Sequence[int], axes: Axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape: Sequence[int], in_axis: Axes = -2, out_axis: Axes = -1,
                  batch_axis: Axes = ()) -> tuple[float, float]:
    """The effective input and output sizes of a dense or convolutional kernel: the axes in
    none of `in_axis`, `out_axis`, `batch_axis` form the receptive field, whose size
    multiplies both.

    Args:
      shape: the kernel's shape.
      in_axis, out_axis, batch_axis: an axis or axes of each kind.
    Returns:
      `(fan_in, fan_out)` as floats.
    """
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size = _size(shape, in_axis)
    out_size = _size(shape, out_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_dtype(dtype: Any) -> tuple[np.dtype, np.dtype]:
    """The real dtype under `dtype` and the complex dtype over that."""
    real = np.array(0, dtype).real.dtype
    return real, dtypes.to_complex_dtype(real)


def _unit_phase(key: Any, shape: Sequence[int], real: np.dtype, dtype: np.dtype) -> Any:
    """`exp(i theta)` for theta uniform in [0, 2 pi)."""
    uniform01 = distributions.uniform(key, shape, real).astype(dtype)
    theta = ufuncs.multiply(2 * np.pi, uniform01)
    return ufuncs.exp(ufuncs.multiply(1j, theta))


def _complex_uniform(key: Any, shape: Sequence[int], dtype: Any) -> Any:
    """Values uniform on a disk of the complex plane, with mean 0 and variance 1."""
    key_r, key_theta = keys.split(key)
    real, dtype = _complex_dtype(dtype)
    r = ufuncs.sqrt(ufuncs.multiply(2, distributions.uniform(key_r, shape, real)))
    return ufuncs.multiply(r.astype(dtype), _unit_phase(key_theta, shape, real, dtype))


def _complex_truncated_normal(key: Any, upper: Any, shape: Sequence[int], dtype: Any) -> Any:
    """Complex normal values (variance 1 before truncation) whose modulus is below `upper`:
    the modulus by inverting its CDF `1 - exp(-r**2)` on a uniform."""
    key_r, key_theta = keys.split(key)
    real, dtype = _complex_dtype(dtype)
    mass = ufuncs.subtract(1, ufuncs.exp(array_creation.array(-(upper ** 2), dtype)))
    t = ufuncs.multiply(mass, distributions.uniform(key_r, shape, real).astype(dtype))
    r = ufuncs.sqrt(ufuncs.negative(ufuncs.log(ufuncs.subtract(1, t))))
    return ufuncs.multiply(r, _unit_phase(key_theta, shape, real, dtype))


def _denominator(mode: str, fan_in: float, fan_out: float) -> float:
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    if mode == "fan_avg":
        return (fan_in + fan_out) / 2
    if mode == "fan_geo_avg":
        return (fan_in * fan_out) ** 0.5
    raise ValueError(f"invalid mode for variance scaling initializer: {mode}")


def _scaled_sample(key: Any, shape: tuple[int, ...], dtype: Any, variance: Any,
                   distribution: str, out_sharding: Any) -> Any:
    """Samples of `distribution` with mean 0 and the given variance."""
    is_float = dtypes.issubdtype(dtype, np.floating)
    if distribution == "truncated_normal":
        if is_float:
            stddev = ufuncs.true_divide(ufuncs.sqrt(variance),
                                        array_creation.array(_TRUNCATED_STDDEV, dtype))
            values = continuous.truncated_normal(key, -2, 2, shape, dtype,
                                                 out_sharding=out_sharding)
            return ufuncs.multiply(values, stddev)
        stddev = ufuncs.true_divide(ufuncs.sqrt(variance),
                                    array_creation.array(_COMPLEX_TRUNCATED_STDDEV, dtype))
        return ufuncs.multiply(_complex_truncated_normal(key, 2, shape, dtype), stddev)
    if distribution == "normal":
        values = distributions.normal(key, shape, dtype, out_sharding=out_sharding)
        return ufuncs.multiply(values, ufuncs.sqrt(variance))
    if distribution == "uniform":
        if is_float:
            values = distributions.uniform(key, shape, dtype, -1, out_sharding=out_sharding)
            return ufuncs.multiply(values, ufuncs.sqrt(ufuncs.multiply(3, variance)))
        return ufuncs.multiply(_complex_uniform(key, shape, dtype), ufuncs.sqrt(variance))
    raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")


def variance_scaling(scale: Any, mode: Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"],
                     distribution: Literal["truncated_normal", "normal", "uniform"],
                     in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                     dtype: Any = None) -> Initializer:
    """Builds an initializer whose samples have mean 0 and variance `scale / n`, `n` being
    the kernel's fan given by `mode`: `fan_in`, `fan_out`, their mean (`fan_avg`) or
    geometric mean (`fan_geo_avg`).

    `truncated_normal` samples a normal truncated at two standard deviations (rescaled so
    the variance after truncation is the target; for complex dtypes, the modulus is
    truncated); `uniform` samples an interval for real dtypes and a disk for complex ones.
    Errors for a bad `mode` or `distribution` are raised when the initializer is called, as
    in JAX.

    Args:
      scale: the variance's scaling factor (positive).
      mode: "fan_in", "fan_out", "fan_avg" or "fan_geo_avg".
      distribution: "truncated_normal", "normal" or "uniform".
      in_axis, out_axis: the kernel's input and output axis or axes.
      batch_axis: axis or axes to leave out of the fans.
      dtype: the initializer's default dtype.
    Returns:
      An initializer.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        shape = core.canonicalize_shape(shape)
        dtype = _dtype_or_default(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = _denominator(mode, fan_in, fan_out)
        variance = array_creation.array(scale / denominator, dtype=dtype)
        return _scaled_sample(key, shape, dtype, variance, distribution, out_sharding)
    return init


def _specialization(name: str, scale: float, mode: str, distribution: str, alias: str = ""
                    ) -> Any:
    """One of the named `variance_scaling` presets (Glorot, LeCun, He)."""
    def builder(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    builder.__name__ = builder.__qualname__ = name
    also = f" (aka {alias})" if alias else ""
    builder.__doc__ = (
        f"Builds the {name} initializer{also}: `variance_scaling({scale}, {mode!r}, "
        f"{distribution!r})`.\n\n"
        "    Args:\n"
        "      in_axis, out_axis: the kernel's input and output axis or axes.\n"
        "      batch_axis: axis or axes to leave out of the fans.\n"
        "      dtype: the initializer's default dtype.\n"
        "    Returns:\n"
        "      An initializer.\n")
    return builder


glorot_uniform = _specialization("glorot_uniform", 1.0, "fan_avg", "uniform", "xavier_uniform")
glorot_normal = _specialization("glorot_normal", 1.0, "fan_avg", "truncated_normal",
                                "xavier_normal")
lecun_uniform = _specialization("lecun_uniform", 1.0, "fan_in", "uniform")
lecun_normal = _specialization("lecun_normal", 1.0, "fan_in", "truncated_normal")
he_uniform = _specialization("he_uniform", 2.0, "fan_in", "uniform", "kaiming_uniform")
he_normal = _specialization("he_normal", 2.0, "fan_in", "truncated_normal", "kaiming_normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Builds an initializer of (Haar) uniformly distributed orthogonal matrices: the
    `column_axis` holds the columns, the other axes are flattened into rows, and the
    smaller side is orthonormal when the shape is not square.

    Args:
      scale: a factor applied to the orthogonal matrix.
      column_axis: the axis of the columns.
      dtype: the initializer's default dtype.
    Returns:
      An initializer (its shape must be at least 2D).
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        if out_sharding is not None:
            # As JAX 0.10.2.
            raise NotImplementedError
        dtype = _dtype_or_default(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return array_creation.zeros(shape, dtype=dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = multivariate.orthogonal(key, n_rows, (), dtype, n_cols)
        q = shape_ops.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = shape_ops.moveaxis(q, -1, column_axis)
        return ufuncs.multiply(array_creation.array(scale, dtype), q)
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None
                     ) -> Initializer:
    """Builds an initializer of delta-orthogonal convolution kernels: zero everywhere but
    at the spatial centre, which holds an orthogonal matrix over the last two axes
    (Xiao et al., 2018).

    Args:
      scale: a factor applied to the orthogonal matrix.
      column_axis: the axis of the columns of that matrix.
      dtype: the initializer's default dtype.
    Returns:
      An initializer (its shape must be 3D, 4D or 5D, with `shape[-1] >= shape[-2]`).
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        if out_sharding is not None:
            # As JAX 0.10.2.
            raise NotImplementedError
        dtype = _dtype_or_default(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(
            key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return array_creation.zeros(shape, dtype=dtype).at[centre].set(ortho_matrix)
    return init


for _name in __all__:
    globals()[_name].__module__ = _PUBLIC_MODULE
