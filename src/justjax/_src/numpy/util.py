"""Argument checking and promotion shared by the jax.numpy functions, and `jitted_as_in_jax`,
the decorator that wraps a library function in `jit` where JAX does."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.compilation.jit import jit
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.lax import creation, elementwise, sharding_constraint, structural
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import utils as lax_utils
from justjax._src.lax.prng import PRNGKeyArray
from justjax._src.lax.utils import broadcast_shapes as lax_broadcast_shapes
from justjax._src.runtime.array import Array, put
from justjax._src.runtime.mesh import AbstractMesh
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.runtime.sharding import NamedSharding, device_put_target, type_sharding


# name -> jitted function, for every library function JAX runs under `jax.jit` (inlined or not).
JAX_JITTED: dict[str, Callable] = {}


def jitted_as_in_jax(fun: Callable | None = None, /, *, static_argnums: Any = None,
                     static_argnames: Any = None, inline: bool = False) -> Any:
    """Wraps `fun` in `jit` with the options JAX 0.10.2 gives its own definition.

    A non-inlined jit shows in jaxprs as `jit[name=<fun's name> jaxpr={...}]`, so the name,
    the static arguments and the inline flag must be JAX's for jaxprs to print as JAX's; the
    wrapped function is registered in `JAX_JITTED` under its name.
    Args:
      fun: the function; omitted, a decorator is returned.
      static_argnums, static_argnames, inline: as `jax.jit`'s.
    Returns:
      The jitted function.
    """
    if fun is None:
        return lambda f: jitted_as_in_jax(f, static_argnums=static_argnums,
                                          static_argnames=static_argnames, inline=inline)
    jitted = jit(fun, static_argnums=static_argnums, static_argnames=static_argnames,
                 inline=inline)
    JAX_JITTED[fun.__name__] = jitted
    return jitted


def is_arraylike(x: Any) -> bool:
    return isinstance(x, (core.Tracer, Array, PRNGKeyArray, np.ndarray, np.generic)) or \
        dtypes.is_python_scalar(x) or is_symbolic_dim(x)


def check_for_prngkeys(fun_name: str, *args: Any) -> None:
    """JAX's TypeError for key arrays mixed with other dtypes in a jnp function."""
    arg_dtypes = [dtypes.canonicalize_dtype(dtypes.dtype_and_weak_type(a)[0]) for a in args]
    if len(set(arg_dtypes)) < 2:
        return
    if any(dtypes.is_extended(d) for d in arg_dtypes):
        raise TypeError(f"{fun_name} does not accept dtypes "
                        f"{', '.join(dtypes.dtype_name(d) for d in arg_dtypes)}.")


def check_arraylike(fun_name: str, *args: Any, emit_warning: bool = False) -> None:
    """JAX's TypeError for list/tuple (or other non-array) arguments to jnp functions."""
    for position, arg in enumerate(args):
        if not is_arraylike(arg):
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got "
                            f"{type(arg)} at position {position}.")


def ensure_arraylike(fun_name: str, *args: Any) -> Any:
    check_arraylike(fun_name, *args)
    converted = [asarray_lite(a) for a in args]
    return converted[0] if len(converted) == 1 else converted


def asarray_lite(x: Any) -> Any:
    """Tracers and Arrays (key arrays too) unchanged; NumPy values and Python scalars as
    Arrays."""
    if isinstance(x, (core.Tracer, Array, PRNGKeyArray)):
        return x
    aval = core.get_aval(x)
    return structural.convert_element_type(x, aval.dtype, aval.weak_type)


def _convert(x: Any, dtype: np.dtype, weak_type: bool) -> Any:
    """`convert_element_type`, except that host values already of the right type pass through
    untouched, so a NumPy constant used twice in a trace stays one constvar (as in JAX)."""
    if not isinstance(x, (core.Tracer, Array)):
        aval = core.get_aval(x)
        if aval.dtype == dtype and aval.weak_type == weak_type:
            return x
    return structural.convert_element_type(x, dtype, weak_type)


def promote_dtypes(*args: Any) -> list[Any]:
    """Converts all arguments to their common dtype (JAX's lattice, weak types respected)."""
    if len(args) < 2:
        return [asarray_lite(a) for a in args]
    to_dtype, weak = dtypes.result_type_and_weak(*args)
    return [_convert(a, to_dtype, weak) for a in args]


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """Like `promote_dtypes`, then integers and bools become the default float type."""
    to_dtype, weak = dtypes.result_type_and_weak(*args)
    to_dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(to_dtype))
    return [_convert(a, to_dtype, weak) for a in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    """Like `promote_dtypes`, then bools become the default int type."""
    to_dtype, weak = dtypes.result_type_and_weak(*args)
    to_dtype = dtypes.to_numeric_dtype(to_dtype)
    return [_convert(a, to_dtype, weak) for a in args]


def promote_dtypes_complex(*args: Any) -> list[Any]:
    to_dtype, weak = dtypes.result_type_and_weak(*args)
    to_dtype = dtypes.to_complex_dtype(dtypes.to_inexact_dtype(to_dtype))
    return [_convert(a, to_dtype, weak) for a in args]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy broadcasting of shapes (`lax.broadcast_shapes`); `()` for no shapes."""
    if not shapes:
        return ()
    return lax_broadcast_shapes(*(tuple(s) for s in shapes))


_RANK_PROMOTION_DOC = ("see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def _rank_promotion_error(mode: str, fun_name: str, shapes: Sequence[tuple[int, ...]]) -> None:
    """JAX's ValueError (mode 'raise') or UserWarning (mode 'warn') for rank promotion."""
    listed = " ".join(str(tuple(s)) for s in shapes)
    if mode == "raise":
        raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                         f"{listed} and with the config option jax_numpy_rank_promotion="
                         f"'raise'. For more information, {_RANK_PROMOTION_DOC}")
    import warnings
    warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes {listed}. "
                  "Set the jax_numpy_rank_promotion config option to 'allow' to disable this "
                  f"warning; for more information, {_RANK_PROMOTION_DOC}", stacklevel=4)


def promote_shapes(fun_name: str, *args: Any) -> list[Any]:
    """NumPy rank promotion: prepends size-1 axes so all non-scalar operands share a rank.

    Rank-0 operands are left alone: lax broadcasts scalars itself, which keeps literals in
    jaxprs (`mul a 2.0:f32[]`).
    """
    if len(args) < 2:
        return list(args)
    shapes = [np.shape(a) if not hasattr(a, "aval") else a.aval.shape for a in args]
    nonscalar_ranks = {len(s) for s in shapes if s}
    if len(nonscalar_ranks) < 2:
        return list(args)
    mode = config.read("jax_numpy_rank_promotion")
    if mode != "allow":
        _rank_promotion_error(mode, fun_name, shapes)
    result_rank = len(broadcast_shapes(*shapes))
    return [structural.broadcast_to_rank(a, result_rank) if s else a
            for a, s in zip(args, shapes, strict=True)]


def check_no_float0s(fun_name: str, *args: Any) -> None:
    """JAX's TypeError when an argument is a float0 array (an integer's tangent)."""
    if any(getattr(a, "dtype", None) == dtypes.float0 for a in args):
        raise TypeError(f"Called {fun_name} with a float0 array. "
                        + lax_utils.FLOAT0_EXPLANATION)


def _unpromoted(args: tuple) -> bool:
    """Whether `args` are concrete Arrays of one canonical dtype, none weakly typed: dtype
    promotion and the checks leave them as they are (the eager ops' common case)."""
    dtype = None
    for arg in args:
        if type(arg) is not Array or arg.aval.weak_type:
            return False
        if dtype is None:
            dtype = arg.aval.dtype
        elif arg.aval.dtype != dtype:
            return False
    return dtype is not None and dtypes.canonicalize_dtype(dtype) == dtype


def _array_with_scalars(args: tuple) -> Any:
    """The dtype of the one concrete, strongly typed Array among `args` when all others are
    Python ints (or floats, for an inexact Array): JAX's promotion gives the Array's dtype
    (`x + 1`); else None."""
    dtype = None
    scalars = (int, float)
    for arg in args:
        if type(arg) is Array:
            if dtype is not None or arg.aval.weak_type:
                return None
            dtype = arg.aval.dtype
            if dtypes.is_int(dtype) or dtypes.is_unsigned(dtype):
                scalars = (int,)
            elif not dtypes.is_inexact(dtype):
                return None
        elif type(arg) is not int and type(arg) is not float:
            return None
    if dtype is None or any(type(a) not in scalars for a in args if type(a) is not Array):
        return None
    return dtype if dtypes.canonicalize_dtype(dtype) == dtype else None


def promote_args(fun_name: str, *args: Any) -> list[Any]:
    if _unpromoted(args):
        return promote_shapes(fun_name, *args)
    dtype = _array_with_scalars(args)
    if dtype is not None:
        return promote_shapes(fun_name, *[a if type(a) is Array else _convert(a, dtype, False)
                                          for a in args])
    check_arraylike(fun_name, *args)
    check_for_prngkeys(fun_name, *args)
    check_no_float0s(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args: Any) -> list[Any]:
    if _unpromoted(args) and dtypes.is_inexact(args[0].aval.dtype):
        return promote_shapes(fun_name, *args)
    check_arraylike(fun_name, *args)
    check_for_prngkeys(fun_name, *args)
    check_no_float0s(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args: Any) -> list[Any]:
    check_arraylike(fun_name, *args)
    check_for_prngkeys(fun_name, *args)
    check_no_float0s(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def canonicalize_axis(axis: int, ndim: int) -> int:
    """A possibly negative axis as a non-negative one; numpy's AxisError message otherwise."""
    axis = core.concrete_dim(axis, "axis argument: ")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def canonicalize_axes(axes: Any, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (int, np.integer)) or (hasattr(axes, "shape") and np.shape(axes) == ()):
        axes = (axes,)
    result = tuple(canonicalize_axis(a, ndim) for a in axes)
    if len(set(result)) != len(result):
        raise ValueError(f"repeated axis: {tuple(axes)}")
    return result


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """NumPy broadcasting of `x` to `shape` (leading axes added, size-1 axes stretched) as one
    `broadcast_in_dim`; `x` itself (as an array) when the shape already matches."""
    if core.get_aval(x).shape == tuple(shape):
        return asarray_lite(x)
    return creation.broadcast_to(x, shape)


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arguments as arrays broadcast against each other (unchanged when shapes agree)."""
    shapes = [core.get_aval(a).shape for a in args]
    if all(s == shapes[0] for s in shapes):
        return [asarray_lite(a) for a in args]
    result = broadcast_shapes(*shapes)
    return [broadcast_to(a, result) for a in args]


@jitted_as_in_jax
def _where(condition: Any, x: Any, y: Any) -> Any:
    """jnp.where's three-argument form: `x` where `condition` else `y`, with the operands
    promoted and broadcast together (JAX's `util._where`, jitted as JAX jits it); a non-bool
    condition means `!= 0`."""
    condition, x, y = ensure_arraylike("where", condition, x, y)
    cond_dtype = core.get_aval(condition).dtype
    if cond_dtype != dtypes.bool_:
        condition = elementwise.ne(condition, structural.convert_element_type(0, cond_dtype))
    x, y = promote_dtypes(x, y)
    if core.get_aval(condition).ndim == 0:
        x, y = broadcast_arrays(x, y)
    else:
        condition, x, y = broadcast_arrays(condition, x, y)
    if core.get_aval(x).size == 0:
        return x
    return lax_selection.select(condition, x, y)


where = _where


def const(example: Any, value: Any) -> Any:
    """`value` with `example`'s dtype, as JAX's `lax._const`: a Python scalar (weak) when
    `example` is a weak scalar, else a NumPy scalar; both become literals when traced."""
    aval = core.get_aval(example)
    if aval.weak_type and aval.ndim == 0:
        python_type = {"b": bool, "i": int, "u": int, "f": float,
                       "c": complex}[dtypes.kind(aval.dtype)]
        scalar = python_type(value)
        if dtypes.dtype_of_value(scalar) == aval.dtype:
            return scalar
    return np.array(value, dtype=aval.dtype)


def choose_device_or_out_sharding(device: Any, out_sharding: Any, name: str) -> Any:
    """Where a creation function's result goes: its `device` or its `out_sharding` (at most
    one may be given), as a device or sharding; None when neither is.

    Raises:
      ValueError: both are given, or either is not a device, sharding or PartitionSpec.
    """
    if device is not None and out_sharding is not None:
        raise ValueError(f"Only one of `device` or `out_sharding` can be set. Got {device=} "
                         f"and {out_sharding=}")
    if out_sharding is not None and not isinstance(out_sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(f"`out_sharding` argument of {name} only supports instances of "
                        f"`NamedSharding` or `PartitionSpec`. Got {out_sharding} of type: "
                        f"{type(out_sharding)}")
    return device_put_target(device if device is not None else out_sharding)


def place(x: Any, device: Any = None, out_sharding: Any = None, name: str = "") -> Any:
    """`x` committed to `device` (or laid out as `out_sharding`) as JAX's creation functions
    place their results; unchanged when neither is given. A traced value's type takes the
    sharding's split over Explicit mesh axes (`reshard`); its placement over Auto axes is
    the program's.

    Args:
      x: the result (an Array or a tracer).
      device: a `Device`, a `Sharding` or None.
      out_sharding: a `Sharding`, a `PartitionSpec` (of the current mesh) or None.
      name: the function's name, for errors.
    Returns:
      The placed result.
    """
    if isinstance(out_sharding, NamedSharding) and isinstance(out_sharding.mesh, AbstractMesh):
        # A type's sharding (`jax.typeof(x).sharding`): over no mesh it asks for nothing;
        # else it names the axes of the mesh in context.
        if out_sharding.mesh.empty:
            out_sharding = None
        elif not isinstance(x, core.Tracer):
            out_sharding = sharding_constraint.over_concrete_mesh(out_sharding, name)
    target = choose_device_or_out_sharding(device, out_sharding, name)
    if target is None:
        return x
    if isinstance(x, core.Tracer):
        typed = type_sharding(target, x.ndim)
        return x if typed is None else sharding_constraint.reshard(x, typed)
    if type_sharding(target, x.ndim) is not None:
        # Laid out by its type, whose spec has an entry per dimension (as JAX's result).
        target = target.update(spec=target.spec._normalized_spec_for_aval(x.ndim))
    return put(x, target)
