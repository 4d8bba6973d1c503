"""jax.numpy array creation: `array`/`asarray`, filled arrays, ranges, grids and identity-like
matrices, written with lax in the order JAX emits its equations.

Constants built from Python or NumPy values are Arrays even inside a trace, so the trace sees
them as constants: a scalar prints as a literal (`2.0:f32[]`), a larger one as a constvar.
Python scalars are weakly typed (`jnp.asarray(1.0)` is a weak float32), Python bools are not.
"""
from __future__ import annotations

import operator
import types
import warnings
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import exceeds, is_symbolic_dim
from justjax._src.lax import elementwise as lax
from justjax._src.lax import structural
from justjax._src.lax.creation import full as lax_full
from justjax._src.lax.creation import full_like as lax_full_like
from justjax._src.lax.creation import is_weakly_typed
from justjax._src.lax.creation import value_dtype as _value_dtype
from justjax._src.numpy import util
from justjax._src.numpy.scalar_types import check_and_canonicalize_user_dtype, result_type
from justjax._src.runtime import transfer_guard
from justjax._src.runtime.array import Array
from justjax._src.runtime.devices import default_device, default_device_override
from justjax._src.runtime.sharding import SingleDeviceSharding

__all__ = [
    "array", "asarray", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
    "empty_like", "full_like", "arange", "linspace", "logspace", "geomspace", "eye", "identity",
    "tri", "meshgrid", "indices", "copy",
]

_PYTHON_SCALARS = (int, float, complex)
# jnp.array stacks at most this many rows per concatenate (as JAX does, to keep ops small).
_CONCAT_CHUNK = 16


def _is_array(x: Any) -> bool:
    return isinstance(x, (Array, core.Tracer))


def stage(x: Any) -> Any:
    """A Python scalar or NumPy value as an Array of its canonical dtype; arrays unchanged.

    Inside a trace the result is a constant of the trace (a literal or a constvar).
    """
    if _is_array(x):
        return x
    return structural.convert_element_type(x, core.get_aval(x).dtype, is_weakly_typed(x))


def _guard_host_data(x: Any) -> None:
    """`jnp.array` of host data outside a trace is an implicit host-to-device transfer."""
    if not transfer_guard.guarded("host_to_device") or not isinstance(core.current_trace(),
                                                                       core.EvalTrace):
        return
    leaves = _flatten_nested(x) if isinstance(x, (list, tuple)) else [x]
    if leaves and not any(isinstance(leaf, (core.Tracer, Array)) for leaf in leaves):
        device = default_device_override() or default_device()
        transfer_guard.host_to_device(core.get_aval(np.asarray(x) if isinstance(
            x, (list, tuple)) else x), SingleDeviceSharding(device))


def canonicalize_shape(shape: Any, context: str = "") -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple; JAX's TypeError otherwise."""
    if not isinstance(shape, (tuple, list)) and (getattr(shape, "ndim", None) == 0
                                                 or np.ndim(shape) == 0):
        return core.canonicalize_shape((shape,), context)
    return core.canonicalize_shape(shape, context)


# ---------------------------------------------------------------------------------------------
# array and asarray.

def array(object: Any, dtype: Any = None, *args: Any, copy: bool = True,
          order: str | None = "K", ndmin: int = 0, device: Any = None,
          out_sharding: Any = None) -> Any:
    """`jnp.array`: an Array from an array, scalar, or nested lists/tuples of them.

    Args:
      object: the value. Lists and tuples holding Arrays or tracers are stacked with lax
        (`broadcast_in_dim` + `concatenate`); otherwise the value is converted on the host.
      dtype: the result dtype (canonicalized; 64-bit types need x64). By default the
        promotion of all leaves; Python scalars alone give weakly typed results.
      copy: whether an Array argument is copied (a `copy` equation inside a trace).
      order: only 'K' (or None) is supported.
      ndmin: the minimum number of dimensions; leading size-1 axes are added.
      args: `copy, order, ndmin` passed positionally (deprecated, as in JAX).
      device, out_sharding: where the result is committed (at most one of them).
    Returns:
      An Array (a tracer inside a trace when `object` holds tracers).
    """
    if args:
        copy, order, ndmin = _positional_array_args(args, copy, order, ndmin)
    out = _array(object, dtype, copy, order, ndmin)
    return util.place(out, device, out_sharding, "jnp.array")


def _positional_array_args(args: tuple, copy: bool, order: str | None,
                           ndmin: int) -> tuple[bool, str | None, int]:
    """`jnp.array(x, dtype, copy, order, ndmin)`: JAX's checks and deprecation warning."""
    if len(args) > 3:
        raise TypeError(f"array() takes at most 5 positional arguments but {len(args) + 2} "
                        "were given")
    for i, name in enumerate(["copy", "order", "ndmin"]):
        if i < len(args) and [copy, order, ndmin][i] != [True, "K", 0][i]:
            raise TypeError(f"array() got multiple values for argument '{name}'")
    copy, order, ndmin = (list(args) + [copy, order, ndmin][len(args):])[:3]
    warnings.warn("Passing the copy, order, and ndmin arguments to jnp.array positionally is "
                  "deprecated. Use keyword arguments instead.", DeprecationWarning,
                  stacklevel=3)
    return copy, order, ndmin


def _array(object: Any, dtype: Any, copy: bool, order: str | None, ndmin: int) -> Any:
    """`array` without placement."""
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    aval = getattr(object, "aval", None)
    if aval is not None and dtypes.is_extended(aval.dtype) and dtype is None and ndmin == 0:
        # A key array stays what it is (its dtype converts to no other).
        return object
    _guard_host_data(object)
    if dtype is None and ndmin == 0:
        if isinstance(object, core.Tracer):
            return structural.copy(object) if copy else object
        if isinstance(object, (*_PYTHON_SCALARS, np.number, np.bool_, np.ndarray)):
            return stage(object)
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "array")
    weak_type = dtype is None and is_weakly_typed(object)
    if isinstance(object, (bool, *_PYTHON_SCALARS)):
        # JAX's OverflowErrors for out-of-range ints: its own text for the default dtype,
        # NumPy's for a requested one.
        if dtype is None:
            dtypes.coerce_to_array(object)
        else:
            np.asarray(object, dtype)
    elif not _is_array(object) and hasattr(object, "__jax_array__"):
        object = object.__jax_array__()
    leaves = _flatten_nested(object)
    if any(leaf is None for leaf in leaves):
        raise ValueError("None is not a valid value for jnp.array")
    if dtype is None:
        dtype = _leaves_dtype(leaves)
    out = _build(object, leaves, dtype, copy)
    out = structural.convert_element_type(out, dtype, weak_type)
    if ndmin > np.ndim(out):
        out = structural.expand_dims(out, tuple(range(ndmin - np.ndim(out))))
    return out


def _flatten_nested(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _flatten_nested(item)]
    if not _is_array(x) and hasattr(x, "__jax_array__"):
        return [x.__jax_array__()]
    return [x]


def _leaves_dtype(leaves: Sequence[Any]) -> np.dtype:
    if not leaves:
        return dtypes.default_float_dtype()
    try:
        return result_type(*leaves)
    except TypeError:
        return result_type(*[_asarray_if_no_dtype(leaf) for leaf in leaves])


def _asarray_if_no_dtype(x: Any) -> Any:
    try:
        result_type(x)
    except TypeError:
        return np.asarray(x)
    return x


def _build(object: Any, leaves: Sequence[Any], dtype: np.dtype, copy: bool) -> Any:
    """The value of `object` (before the final conversion to `dtype`)."""
    if not any(_is_array(leaf) for leaf in leaves):
        value = np.asarray(_replace_jax_arrays(object), dtype=dtype)
        _check_valid_dtype(object, value)
        return value
    if _is_array(object):
        return structural.copy(object) if copy else object
    if isinstance(object, (list, tuple)):
        if not object:
            return np.array([], dtype=dtype)
        rows = [structural.expand_dims(array(item, dtype=dtype, copy=False), (0,))
                for item in object]
        while len(rows) > _CONCAT_CHUNK:
            rows = [structural.concatenate(rows[i:i + _CONCAT_CHUNK], 0)
                    for i in range(0, len(rows), _CONCAT_CHUNK)]
        return structural.concatenate(rows, 0)
    raise TypeError(f"Unexpected input type for array: {type(object)}")


def _replace_jax_arrays(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        # A plain list or tuple (NumPy reads either as a sequence): a namedtuple's type
        # cannot be rebuilt from one iterable.
        items = [_replace_jax_arrays(item) for item in x]
        return items if isinstance(x, list) else tuple(items)
    if not _is_array(x) and hasattr(x, "__jax_array__"):
        return np.asarray(x.__jax_array__())
    return x


def _check_valid_dtype(object: Any, value: np.ndarray) -> None:
    if value.dtype not in dtypes.ALL_TYPES:
        raise TypeError(f"Value {object!r} with dtype {value.dtype} is not a valid JAX array "
                        "type. Only arrays of numeric types are supported by JAX.")


def asarray(a: Any, dtype: Any = None, order: str | None = None, *,
            copy: bool | None = None, device: Any = None, out_sharding: Any = None) -> Any:
    """`jnp.asarray`: like `array`, but Arrays and tracers are not copied by default.

    Args:
      a: the value.
      dtype: the result dtype (by default `a`'s).
      order: only 'K' (or None).
      copy: True copies, otherwise an Array is returned as it is.
      device, out_sharding: where the result is committed (at most one of them).
    Returns:
      An Array (or the tracer).
    """
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "asarray")
    out = _array(a, dtype, bool(copy), order, 0)
    return util.place(out, device, out_sharding, "jnp.asarray")


def copy(a: Any, order: str | None = None) -> Any:
    """`jnp.copy`: a copy of `a` (a `copy` equation inside a trace)."""
    util.check_arraylike("copy", a)
    return array(a, copy=True, order=order)


# ---------------------------------------------------------------------------------------------
# Filled arrays.

def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """NumPy broadcasting of `x` to `shape` (a `broadcast_in_dim`; nothing when equal)."""
    x = util.ensure_arraylike("broadcast_to", x)
    return util.broadcast_to(x, canonicalize_shape(shape))


def _check_forgot_shape_tuple(name: str, shape: Any, dtype: Any) -> None:
    if isinstance(dtype, int) and isinstance(shape, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally "
                        f"write `jax.numpy.{name}({shape}, {dtype})` when you meant "
                        f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple "
                        "argument for the shape?")


def _filled(name: str, shape: Any, value: int, dtype: Any) -> Any:
    if isinstance(shape, types.GeneratorType):
        raise TypeError("expected sequence object with len >= 0 or a single integer")
    _check_forgot_shape_tuple(name, shape, dtype)
    dtype = check_and_canonicalize_user_dtype(float if dtype is None else dtype, name)
    shape = canonicalize_shape(shape)
    if any(d < 0 for d in shape):
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got "
                        f"{shape}.")
    return lax_full(shape, value, dtype)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None,
          out_sharding: Any = None) -> Any:
    """`jnp.zeros`: an array of zeros (float32 by default), committed to `device` (or laid
    out as `out_sharding`) when one is given."""
    out = _filled("zeros", shape, 0, dtype)
    return util.place(out, device, out_sharding, "jnp.zeros")


def ones(shape: Any, dtype: Any = None, *, device: Any = None,
         out_sharding: Any = None) -> Any:
    """`jnp.ones`: an array of ones (float32 by default), committed to `device` (or laid
    out as `out_sharding`) when one is given."""
    out = _filled("ones", shape, 1, dtype)
    return util.place(out, device, out_sharding, "jnp.ones")


def empty(shape: Any, dtype: Any = None, *, device: Any = None,
          out_sharding: Any = None) -> Any:
    """`jnp.empty`: as `zeros` (XLA has no uninitialized memory to hand out)."""
    _check_forgot_shape_tuple("empty", shape, dtype)
    dtype = check_and_canonicalize_user_dtype(float if dtype is None else dtype, "empty")
    return zeros(shape, dtype, device=device, out_sharding=out_sharding)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None,
         out_sharding: Any = None) -> Any:
    """`jnp.full`: `shape` filled with `fill_value` (broadcast when it is an array).

    Without `dtype` a Python scalar fill gives a weakly typed result. `device` or
    `out_sharding` (at most one) says where the result is committed.
    """
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "full")
    util.check_arraylike("full", fill_value)
    if np.ndim(fill_value) == 0:
        out = lax_full(canonicalize_shape(shape), fill_value, dtype)
    else:
        out = broadcast_to(asarray(fill_value, dtype=dtype), shape)
    return util.place(out, device, out_sharding, "jnp.full")


def _like(name: str, a: Any, dtype: Any, shape: Any, value: int, device: Any = None,
          out_sharding: Any = None) -> Any:
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):
        if hasattr(a, "__jax_array__"):
            a = a.__jax_array__()
        util.check_arraylike(name, a)
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, name)
    if shape is not None:
        shape = canonicalize_shape(shape)
    out = lax_full_like(a, value, dtype, shape)
    return util.place(out, device, out_sharding, f"jnp.{name}")


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
               out_sharding: Any = None) -> Any:
    """`jnp.zeros_like`: zeros with `a`'s shape and dtype (and weak type), committed to
    `device` (or laid out as `out_sharding`) when one is given."""
    return _like("zeros_like", a, dtype, shape, 0, device, out_sharding)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
              out_sharding: Any = None) -> Any:
    """`jnp.ones_like`: ones with `a`'s shape and dtype (and weak type), committed to
    `device` (or laid out as `out_sharding`) when one is given."""
    return _like("ones_like", a, dtype, shape, 1, device, out_sharding)


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *,
               device: Any = None) -> Any:
    """`jnp.empty_like`: as `zeros_like`."""
    # JAX names ones_like in this function's errors; kept for identical messages.
    return _like("ones_like", prototype, dtype, shape, 0, device)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *,
              device: Any = None, out_sharding: Any = None) -> Any:
    """`jnp.full_like`: `fill_value` with `a`'s shape and dtype (unless given), committed
    to `device` (or laid out as `out_sharding`) when one is given."""
    out = _full_like(a, fill_value, dtype, shape)
    return util.place(out, device, out_sharding, "jnp.full_like")


def _full_like(a: Any, fill_value: Any, dtype: Any, shape: Any) -> Any:
    """`full_like` without placement."""
    if hasattr(a, "dtype") and hasattr(a, "shape"):
        util.check_arraylike("full_like", 0, fill_value)
    else:
        util.check_arraylike("full_like", a, fill_value)
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "full_like")
    if shape is not None:
        shape = canonicalize_shape(shape)
    if np.ndim(fill_value) == 0:
        return lax_full_like(a, fill_value, dtype, shape)
    shape = np.shape(a) if shape is None else shape
    dtype = result_type(a) if dtype is None else dtype
    return broadcast_to(asarray(fill_value, dtype=dtype), shape)


# ---------------------------------------------------------------------------------------------
# Ranges.

def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None, out_sharding: Any = None) -> Any:
    """`jnp.arange`: evenly spaced values in `[start, stop)` (an `iota`, scaled and shifted).

    All arguments must be concrete scalars. The dtype is the promotion of the arguments
    (int32 for Python ints, float32 once any is a float); float16/bfloat16 ranges are
    computed in float32. `device` or `out_sharding` (at most one) says where the result
    is committed.
    """
    out = _arange(start, stop, step, dtype)
    return util.place(out, device, out_sharding, "jnp.arange")


def _arange(start: Any, stop: Any, step: Any, dtype: Any) -> Any:
    """`arange` without placement."""
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "arange")
    if any(is_symbolic_dim(v) for v in (start, stop, step)):
        return _arange_symbolic(start, stop, step, dtype)
    _check_arraylike_or_none("arange", start, stop, step)
    start_name = "stop" if stop is None and step is None else "start"
    start = _concrete_arg(start, start_name)
    stop = _concrete_arg(stop, "stop")
    step = _concrete_arg(step, "step")
    for name, value in ((start_name, start), ("stop", stop), ("step", step)):
        if value is not None and np.ndim(value) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={value}")
    if dtype is None:
        dtype = result_type(start, *(x for x in (stop, step) if x is not None))
    if any(x is not None and _is_complex_value(x) for x in (start, stop, step)):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                         "supported starting in JAX v0.10.0.")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = dtype
        if dtypes.is_float(dtype) and dtype.itemsize < 4:
            working = dtypes.float32
        size = max(0, int(np.ceil((_to_python(stop) - _to_python(start)) / _to_python(step))))
        iota = structural.broadcasted_iota(working, (size,), 0)
        scaled = lax.mul(structural.convert_element_type(step, working), iota)
        shifted = lax.add(structural.convert_element_type(start, working), scaled)
        return structural.convert_element_type(shifted, dtype)
    if _to_python(start) == 0:
        size = max(0, int(np.ceil(_to_python(stop))))
        return structural.broadcasted_iota(dtype, (size,), 0)
    size = max(0, int(np.ceil(_to_python(stop) - _to_python(start))))
    return lax.add(structural.convert_element_type(start, dtype),
                   structural.broadcasted_iota(dtype, (size,), 0))


def _arange_symbolic(start: Any, stop: Any, step: Any, dtype: Any) -> Any:
    """`arange` with symbolic dimensions among its (integer) arguments: an iota of the
    symbolic length, scaled and shifted (JAX's `_arange_dynamic`)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if not all(is_symbolic_dim(v) or isinstance(v, (int, np.integer)) for v in
               (start, stop, step)) or step == 0:
        raise ValueError("jax.numpy.arange with symbolic dimensions takes integer start, stop "
                         f"and a nonzero integer step; got {start=}, {stop=}, {step=}")
    dtype = dtypes.default_int_dtype() if dtype is None else dtype
    size = core.max_dim(0, (stop - start + step - 1) // step if step > 0
                        else (start - stop - step - 1) // -step)
    iota = structural.broadcasted_iota(dtype, (size,), 0)
    scaled = lax.mul(structural.convert_element_type(step, dtype), iota)
    return lax.add(structural.convert_element_type(start, dtype), scaled)


def _check_arraylike_or_none(name: str, *args: Any) -> None:
    for position, arg in enumerate(args):
        if arg is not None and not util.is_arraylike(arg):
            raise TypeError(f"{name} requires ndarray, scalar, or None arguments, got "
                            f"{type(arg)} at position {position}.")


def _concrete_arg(value: Any, name: str) -> Any:
    return core.concrete_or_error(lambda x: x, value,
                                  f"It arose in the jnp.arange argument '{name}'")


def _is_complex_value(x: Any) -> bool:
    return isinstance(x, complex) or dtypes.is_complex(_value_dtype(x))


def _to_python(x: Any) -> Any:
    """A concrete scalar as a Python number (host arithmetic on range bounds)."""
    return x.item() if hasattr(x, "item") else x


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *,
             device: Any = None) -> Any:
    """`jnp.linspace`: `num` evenly spaced values from `start` to `stop` (array bounds allowed).

    Computed as JAX does, `start * (1 - t) + stop * t` with `t = iota / div`, and `stop`
    itself appended when `endpoint`, so values match JAX bit for bit.
    Returns:
      The values, and the step as well when `retstep`.
    """
    num = core.concrete_dim(num, "'num' argument of jnp.linspace")
    axis = core.concrete_or_error(operator.index, axis, "'axis' argument of jnp.linspace")
    out = _linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return util.place(out[0], device, None, "jnp.linspace"), out[1]
    return util.place(out, device, None, "jnp.linspace")


@util.jitted_as_in_jax(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """`linspace` with concrete `num` and `axis`, jitted as JAX jits it."""
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = util.ensure_arraylike("linspace", start, stop)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(result_type(start, stop))
    else:
        dtype = check_and_canonicalize_user_dtype(dtype, "linspace")
    computation_dtype = dtypes.to_inexact_dtype(dtype)
    start = structural.convert_element_type(start, computation_dtype)
    stop = structural.convert_element_type(stop, computation_dtype)
    bounds_shape = list(util.broadcast_shapes(np.shape(start), np.shape(stop)))
    broadcast_start = broadcast_to(start, bounds_shape)
    broadcast_stop = broadcast_to(stop, bounds_shape)
    axis = len(bounds_shape) + axis + 1 if axis < 0 else axis
    bounds_shape.insert(axis, 1)
    out, delta = _linspace_values(start, stop, broadcast_start, broadcast_stop, num, endpoint,
                                  bounds_shape, axis, computation_dtype, dtype)
    if dtypes.is_int(dtype) and not dtypes.is_int(out.dtype):
        out = lax.floor(out)
    result = structural.convert_element_type(out, dtype)
    return (result, delta) if retstep else result


def _linspace_values(start: Any, stop: Any, broadcast_start: Any, broadcast_stop: Any,
                     num: int, endpoint: bool, bounds_shape: list[int], axis: int,
                     computation_dtype: np.dtype, dtype: np.dtype) -> tuple[Any, Any]:
    from justjax._src.numpy import ufuncs
    div = num - 1 if endpoint else num
    if num > 1:
        delta = ufuncs.true_divide(
            structural.convert_element_type(ufuncs.subtract(stop, start), computation_dtype),
            asarray(div, dtype=computation_dtype))
        iota_shape = [1] * len(bounds_shape)
        iota_shape[axis] = div
        real_dtype = dtypes.real_dtype(computation_dtype)
        step = structural.reshape(structural.iota(real_dtype, div), iota_shape)
        step = ufuncs.true_divide(step, asarray(div, real_dtype))
        step = structural.convert_element_type(step, computation_dtype)
        out = ufuncs.add(
            ufuncs.multiply(structural.reshape(broadcast_start, bounds_shape),
                            ufuncs.subtract(1, step)),
            ufuncs.multiply(structural.reshape(broadcast_stop, bounds_shape), step))
        if endpoint:
            tail = structural.expand_dims(broadcast_stop, (axis,))
            out = structural.concatenate([out, tail], util.canonicalize_axis(axis, out.ndim))
        return out, delta
    if num == 1:
        delta = asarray(np.nan if endpoint else ufuncs.subtract(stop, start),
                        dtype=computation_dtype)
        return structural.reshape(broadcast_start, bounds_shape), delta
    empty_shape = list(util.broadcast_shapes(np.shape(start), np.shape(stop)))
    empty_shape.insert(axis, 0)
    return empty(empty_shape, dtype), full((), np.nan, computation_dtype)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """`jnp.logspace`: `base ** linspace(start, stop, num)`."""
    num = core.concrete_or_error(operator.index, num, "'num' argument of jnp.logspace")
    axis = core.concrete_or_error(operator.index, axis, "'axis' argument of jnp.logspace")
    return _logspace(start, stop, num, endpoint, base, dtype, axis)


@util.jitted_as_in_jax(static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
              dtype: Any = None, axis: int = 0) -> Any:
    """`logspace` with concrete `num` and `axis`, jitted as JAX jits it."""
    from justjax._src.numpy import ufuncs
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(result_type(start, stop))
    else:
        dtype = check_and_canonicalize_user_dtype(dtype, "logspace")
    computation_dtype = dtypes.to_inexact_dtype(dtype)
    start, stop = util.ensure_arraylike("logspace", start, stop)
    start = structural.convert_element_type(start, computation_dtype)
    stop = structural.convert_element_type(stop, computation_dtype)
    lin = linspace(start, stop, num, endpoint=endpoint, retstep=False, dtype=None, axis=axis)
    return structural.convert_element_type(ufuncs.power(base, lin), dtype)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """`jnp.geomspace`: a geometric progression from `start` to `stop`."""
    num = core.concrete_or_error(operator.index, num, "'num' argument of jnp.geomspace")
    axis = core.concrete_or_error(operator.index, axis, "'axis' argument of jnp.geomspace")
    return _geomspace(start, stop, num, endpoint, dtype, axis)


@util.jitted_as_in_jax(static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
               axis: int = 0) -> Any:
    """`geomspace` with concrete `num` and `axis`, jitted as JAX jits it."""
    from justjax._src.numpy import ufuncs
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(result_type(start, stop))
    else:
        dtype = check_and_canonicalize_user_dtype(dtype, "geomspace")
    computation_dtype = dtypes.to_inexact_dtype(dtype)
    start, stop = util.ensure_arraylike("geomspace", start, stop)
    start = structural.convert_element_type(start, computation_dtype)
    stop = structural.convert_element_type(stop, computation_dtype)
    sign = ufuncs.sign(start)
    res = ufuncs.multiply(sign, logspace(ufuncs.log10(ufuncs.true_divide(start, sign)),
                                         ufuncs.log10(ufuncs.true_divide(stop, sign)), num,
                                         endpoint=endpoint, base=10.0, dtype=computation_dtype,
                                         axis=0))
    axis = util.canonicalize_axis(axis, res.ndim)
    if axis != 0:
        res = structural.transpose(res, (*range(1, axis + 1), 0, *range(axis + 1, res.ndim)))
    return structural.convert_element_type(res, dtype)


# ---------------------------------------------------------------------------------------------
# Matrices and grids.

def eye(N: int, M: int | None = None, k: Any = 0, dtype: Any = None, *,
        device: Any = None) -> Any:
    """`jnp.eye`: ones on the `k`-th diagonal of an `N x M` matrix (float32 by default),
    committed to `device` when given."""
    from justjax._src.numpy import ufuncs
    dtype = check_and_canonicalize_user_dtype(float if dtype is None else dtype, "eye")
    if isinstance(k, int) and not isinstance(k, bool):
        info = np.iinfo(np.int32)
        k = min(max(k, int(info.min)), int(info.max))
    offset = util.ensure_arraylike("eye", k)
    if not (offset.shape == () and dtypes.is_int(offset.dtype)):
        raise ValueError(f"k must be a scalar integer; got {k}")
    n = core.canonicalize_shape((N,), "argument of 'N' jnp.eye()")[0]
    m = n if M is None else core.canonicalize_shape((M,), "argument 'M' of jnp.eye()")[0]
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    i = structural.broadcasted_iota(offset.dtype, (n, m), 0)
    j = structural.broadcasted_iota(offset.dtype, (n, m), 1)
    out = structural.convert_element_type(ufuncs.equal(ufuncs.add(i, offset), j), dtype)
    return util.place(out, device, None, "jnp.eye")


def identity(n: int, dtype: Any = None) -> Any:
    """`jnp.identity`: the `n x n` identity matrix."""
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "identity")
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """`jnp.tri`: ones at and below the `k`-th diagonal (float32 by default, even with x64)."""
    dtype = dtypes.float32 if dtype is None else check_and_canonicalize_user_dtype(dtype, "tri")
    M = N if M is None else M
    shape = core.canonicalize_shape((N, M), "shape argument of jnp.tri")
    if not isinstance(k, (Array, core.Tracer, np.ndarray)):
        operator.index(k)  # JAX's TypeError for a float offset
    offset = stage(k)
    if not dtypes.is_int(offset.dtype):
        raise TypeError(f"offset must be an integer, got {offset!r}")
    shape_dtype = _index_dtype_for(shape, offset.dtype)
    rows = structural.broadcasted_iota(shape_dtype, shape, 0)
    shifted = lax.add(rows, structural.convert_element_type(offset, shape_dtype))
    lower = lax.ge(shifted, structural.broadcasted_iota(shape_dtype, shape, 1))
    return structural.convert_element_type(lower, dtype)


def _index_dtype_for(shape: tuple[int, ...], offset_dtype: np.dtype) -> np.dtype:
    """int32 unless the shape or the offset's dtype need int64 (as JAX's lax._tri)."""
    info32 = np.iinfo(np.int32)
    if any(exceeds(d, info32.max) for d in shape):
        return dtypes.int64
    offset_info = np.iinfo(offset_dtype)
    if offset_info.min < info32.min or offset_info.max > info32.max:
        return dtypes.int64
    return dtypes.int32


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """`jnp.meshgrid`: coordinate arrays from 1-D vectors ('xy' swaps the first two axes).

    With `sparse`, each output keeps size 1 along the other axes.
    """
    util.check_arraylike("meshgrid", *xi)
    args = [util.asarray_lite(x) for x in xi]
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if any(a.ndim != 1 for a in args):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[a.shape for a in args]}")
    if indexing == "xy" and len(args) >= 2:
        args[0], args[1] = args[1], args[0]
    shape = [1 if sparse else a.shape[0] for a in args]
    output = []
    for i, a in enumerate(args):
        a_shape = [*shape[:i], a.shape[0], *shape[i + 1:]] if sparse else shape
        output.append(structural.broadcast_in_dim(a, a_shape, (i,)))
    if indexing == "xy" and len(args) >= 2:
        output[0], output[1] = output[1], output[0]
    return output


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """`jnp.indices`: the index grid of an array of shape `dimensions`, stacked along axis 0
    (a tuple of broadcastable arrays when `sparse`)."""
    from justjax._src.numpy import joining  # joining imports this module
    dtype = check_and_canonicalize_user_dtype(int if dtype is None else dtype, "indices")
    dims = tuple(core.concrete_or_error(operator.index, d, "dimensions argument of jnp.indices")
                 for d in dimensions)
    n = len(dims)
    output = []
    grid_shape: Sequence[int] = dims
    for i, dim in enumerate(dims):
        idx = structural.iota(dtype, dim)
        if sparse:
            grid_shape = (1,) * i + (dim,) + (1,) * (n - i - 1)
        output.append(structural.broadcast_in_dim(idx, grid_shape, (i,)))
    if sparse:
        return tuple(output)
    return joining.stack(output, 0) if output else array([], dtype=dtype)
