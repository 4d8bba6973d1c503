"""Filled arrays, as JAX's `lax.full` and `lax.full_like`: a scalar broadcast to a shape.

A fill without `dtype` keeps the fill's dtype and weak type (`lax.full((2,), 1.0)` is a weakly
typed float32 array, as in JAX); a PRNG key dtype fills every data word of each key.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import prng, structural
from justjax._src.runtime.array import Array

__all__ = ["full", "full_like"]

_PYTHON_SCALARS = (int, float, complex)


def is_weakly_typed(x: Any) -> bool:
    """Python int/float/complex values and weakly typed arrays (Python bools are strong)."""
    if type(x) in _PYTHON_SCALARS:
        return True
    aval = getattr(x, "aval", None)
    return bool(getattr(aval, "weak_type", False))


def value_dtype(x: Any) -> np.dtype:
    """The canonical dtype `x` has as an array (`jax.dtypes.dtype` of a value)."""
    if isinstance(x, (Array, core.Tracer)):
        return x.dtype
    return core.get_aval(x).dtype


def _check_no_sharding(sharding: Any, fun_name: str) -> None:
    """Shardings need a mesh of several devices, which justjax's backend lacks."""
    if sharding is not None:
        raise ValueError(f"{fun_name}: sharding is not supported on justjax's single-device "
                         f"backend, got {sharding!r}")


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *,
         sharding: Any = None) -> Any:
    """`lax.full`: an array of `shape` filled with the scalar `fill_value`.

    Args:
      shape: the result shape (an int or a sequence of ints).
      fill_value: a scalar (Python number, NumPy scalar or 0-d array).
      dtype: the result dtype; by default `fill_value`'s dtype and weak type.
      sharding: must be None (justjax runs on one device).

    Returns:
      The filled array: StableHLO `broadcast_in_dim` of the converted scalar.
    """
    _check_no_sharding(sharding, "full")
    shape = core.canonicalize_shape(shape)
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if dtype is None:
        weak_type = is_weakly_typed(fill_value)
        fill_dtype = value_dtype(fill_value)
    else:
        weak_type = False
        fill_dtype = dtypes.check_user_dtype(dtype, "full")
    if dtypes.is_extended(fill_dtype):
        # Keys filled with the key whose every data word is `fill_value`.
        base = full((*shape, *fill_dtype.physical_shape), fill_value, fill_dtype.physical_dtype)
        return prng.random_wrap(base, impl=fill_dtype._impl)
    fill = structural.convert_element_type(fill_value, fill_dtype, weak_type)
    return structural.broadcast(fill, shape)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Any:
    """`lax.full_like`: an array like `x` (its shape, dtype and weak type) of `fill_value`.

    Args:
      x: the array (or scalar) whose shape and dtype the result takes.
      fill_value: a scalar.
      dtype: overrides `x`'s dtype (the result is then strongly typed).
      shape: overrides `x`'s shape.
      sharding: must be None (justjax runs on one device).

    Returns:
      The filled array.
    """
    _check_no_sharding(sharding, "full_like")
    fill_shape = np.shape(x) if shape is None else core.canonicalize_shape(shape)
    weak_type = dtype is None and is_weakly_typed(x)
    dtype = value_dtype(x) if dtype is None else dtypes.canonicalize_dtype(dtype)
    if dtypes.is_extended(dtype):
        return full(fill_shape, fill_value, dtype)
    return full(fill_shape, structural.convert_element_type(fill_value, dtype, weak_type))
