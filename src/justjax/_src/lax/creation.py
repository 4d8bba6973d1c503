"""Filled arrays, as JAX's `lax.full` and `lax.full_like`: a scalar broadcast to a shape.

A fill without `dtype` keeps the fill's dtype and weak type (`lax.full((2,), 1.0)` is a weakly
typed float32 array, as in JAX); a PRNG key dtype fills every data word of each key.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, lowering
from justjax._src.lax import prng, sharding_rules, structural
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime.array import Array, put
from justjax._src.runtime.mesh import Mesh
from justjax._src.runtime.sharding import NamedSharding

__all__ = ["broadcast_like", "empty", "full", "full_like"]

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


def _placed(out: Any, sharding: Any) -> Any:
    """A filled result laid out as `sharding` (a NamedSharding over a mesh of devices, or a
    PartitionSpec of the mesh in context) says; a traced one's type takes its split over
    Explicit axes (the `sharding` of its `broadcast_in_dim`)."""
    if sharding is None or isinstance(out, core.Tracer) or not isinstance(out, Array):
        return out
    concrete = sharding if isinstance(sharding, NamedSharding) and isinstance(
        sharding.mesh, Mesh) else None
    if concrete is None:
        mesh = mesh_lib.get_concrete_mesh()
        if mesh.empty:
            return out
        concrete = NamedSharding(mesh, sharding_rules.user_out_sharding(sharding).spec)
    return put(out, concrete)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *,
         sharding: Any = None) -> Any:
    """`lax.full`: an array of `shape` filled with the scalar `fill_value`.

    Args:
      shape: the result shape (an int or a sequence of ints).
      fill_value: a scalar (Python number, NumPy scalar or 0-d array).
      dtype: the result dtype; by default `fill_value`'s dtype and weak type.
      sharding: a NamedSharding or PartitionSpec the result is laid out by (its type split
        over the Explicit mesh axes it names).

    Returns:
      The filled array: StableHLO `broadcast_in_dim` of the converted scalar.
    """
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
    if sharding is None:
        return structural.broadcast(fill, shape)
    typed = sharding_rules.user_out_sharding(sharding)
    out = structural.broadcast_in_dim_p.bind(fill, shape=shape, broadcast_dimensions=(),
                                             sharding=typed)
    return _placed(out, sharding)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Any:
    """`lax.full_like`: an array like `x` (its shape, dtype and weak type) of `fill_value`.

    Args:
      x: the array (or scalar) whose shape and dtype the result takes.
      fill_value: a scalar.
      dtype: overrides `x`'s dtype (the result is then strongly typed).
      shape: overrides `x`'s shape.
      sharding: how the result is laid out; by default as `x` is (when `shape` is not
        given), as JAX's.

    Returns:
      The filled array.
    """
    if sharding is None and shape is None:
        sharding = _layout_of(x)
    fill_shape = np.shape(x) if shape is None else core.canonicalize_shape(shape)
    weak_type = dtype is None and is_weakly_typed(x)
    dtype = value_dtype(x) if dtype is None else dtypes.canonicalize_dtype(dtype)
    if dtypes.is_extended(dtype):
        return full(fill_shape, fill_value, dtype, sharding=sharding)
    return full(fill_shape, structural.convert_element_type(fill_value, dtype, weak_type),
                sharding=sharding)


def _layout_of(x: Any) -> NamedSharding | None:
    """The layout `full_like` copies from `x`: a concrete array's NamedSharding over several
    devices, a traced one's type's split over Explicit axes; None for others."""
    if type(x) is Array:
        current = x.sharding
        return current if x._sharding is not None and type(current) is NamedSharding else None
    if isinstance(x, core.Tracer):
        return x.aval._sharding
    return None


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """NumPy broadcasting of `x` to `shape` (leading axes added, size-1 axes stretched) as one
    `broadcast_in_dim` (JAX's `lax.broadcast_to`); `x` itself when the shape matches.

    Raises:
      ValueError: a shape of lower rank, or incompatible sizes (JAX's messages).
    """
    aval = core.get_aval(x)
    shape = tuple(shape)
    if aval.shape == shape:
        return x
    lead = len(shape) - aval.ndim
    if lead < 0:
        raise ValueError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={aval.shape} shape={shape}")
    if any(d not in (1, s) for d, s in zip(aval.shape, shape[lead:], strict=True)):
        requested = aval.update(shape=shape, weak_type=False).str_short(short_dtypes=False)
        raise ValueError("Incompatible types for broadcasting: input type="
                         f"{aval.str_short(short_dtypes=False)} and requested type={requested}")
    return structural.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """`arr` broadcast (NumPy rules) to the shape of `like_arr` (`lax.broadcast_like`).

    Args:
      arr: the array to broadcast.
      like_arr: the array whose shape the result takes.
    Returns:
      The broadcast array (`arr` itself when the shapes agree).
    """
    return broadcast_to(arr, core.get_aval(like_arr).shape)


# -- empty -------------------------------------------------------------------------------------

empty_p = Primitive("empty")


def _empty_abstract_eval(*, shape: tuple[int, ...], dtype: Any, out_sharding: Any
                         ) -> ShapedArray:
    return ShapedArray(shape, dtypes.canonicalize_dtype(dtype),
                       sharding=sharding_rules.param_type_sharding(out_sharding, len(shape)))


empty_p.def_abstract_eval(_empty_abstract_eval)
dispatch.def_backend_impl(empty_p)
ad.defjvp_zero(empty_p)


def _empty_lowering(ctx: lowering.LoweringRuleContext, *, shape: tuple[int, ...], dtype: Any,
                    out_sharding: Any) -> ir.Value:
    """Zeros, as JAX lowers `empty` on CPU (a broadcast scalar constant)."""
    return lowering.full(ctx.builder, 0, ctx.avals_out[0])


lowering.register_lowering(empty_p, _empty_lowering)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array whose values are unspecified (`lax.empty`); on CPU they are zeros, as JAX's.

    Args:
      shape: an int or a sequence of ints.
      dtype: the dtype (kept in the equation as given, as JAX keeps it).
      out_sharding: a NamedSharding or PartitionSpec the result is laid out by.
    Returns:
      The array.
    """
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    out = empty_p.bind(shape=tuple(shape), dtype=dtype,
                       out_sharding=sharding_rules.user_out_sharding(out_sharding))
    return _placed(out, out_sharding)
