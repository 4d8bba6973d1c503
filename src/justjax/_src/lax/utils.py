"""Helpers that keep each primitive's definition short: abstract-eval factories and shared
checks. Eager execution goes through the backend (`_src/compilation/dispatch.py`)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.lax import sharding_rules

__all__ = ["broadcast_shapes"]


def standard_primitive(name: str, shape_rule: Callable, dtype_rule: Callable,
                       weak_type_rule: Callable | None = None, *,
                       sharding_rule: Callable | None = None,
                       sharding_param: str | None = None) -> Primitive:
    """A single-result primitive whose abstract eval is `shape_rule` x `dtype_rule`.

    The output is weakly typed when `weak_type_rule` says so; by default when every input is.
    `sharding_rule` (`sharding_rules.register`'s form) splits its type as its operands'
    types are split over Explicit mesh axes; `sharding_param` names the parameter (JAX's
    `out_sharding` / `sharding`) that, when given, says how the result's type is split.
    """
    prim = Primitive(name)
    weak_rule = weak_type_rule or standard_weak_type_rule

    def abstract_eval(*avals: ShapedArray, **params: Any) -> ShapedArray:
        shape = shape_rule(*avals, **params)
        given = params.get(sharding_param) if sharding_param is not None else None
        return ShapedArray(shape, dtype_rule(*avals, **params), weak_rule(*avals, **params),
                           sharding=sharding_rules.param_type_sharding(given, len(shape)))

    prim.def_abstract_eval(abstract_eval)
    if sharding_rule is not None:
        rule = sharding_rule
        if sharding_param is not None:
            rule = sharding_rules.params_sharding_or(sharding_param, rule)
        sharding_rules.register(prim, rule)
    return prim


def standard_weak_type_rule(*avals: ShapedArray, **params: Any) -> bool:
    return bool(avals) and all(a.weak_type for a in avals)


def never_weak(*avals: ShapedArray, **params: Any) -> bool:
    return False


def first_arg_weak(*avals: ShapedArray, **params: Any) -> bool:
    return avals[0].weak_type


# ---------------------------------------------------------------------------------------------
# Shared shape and dtype checks.

def broadcast_shapes_or_error(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Equal-rank shapes broadcast where sizes are equal or 1."""
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{set(len(s) for s in shapes)}")
    result = []
    for sizes in zip(*shapes):
        non_ones = [d for d in sizes if d != 1]
        if not non_ones:
            result.append(1)
        elif all(d == non_ones[0] for d in non_ones[1:]):
            result.append(non_ones[0])
        else:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(tuple(s)) for s in shapes)}.")
    return tuple(result)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """`lax.broadcast_shapes`: the shape NumPy broadcasting gives arrays of `shapes`.

    Shorter shapes gain leading 1s; sizes must then be equal or 1.

    Args:
      *shapes: at least one shape (a sequence of non-negative ints).

    Returns:
      The broadcast shape as a tuple of ints.

    Raises:
      ValueError: "Incompatible shapes for broadcasting: shapes=[...]".
      TypeError: a shape that is not a sequence of non-negative integers.
    """
    if not shapes:
        raise TypeError("broadcast_shapes: At least one shape is required.")
    for shape in shapes:
        if any(d < 0 for d in core.canonicalize_shape(shape)):
            raise TypeError("Only non-negative indices are allowed when broadcasting static "
                            f"shapes, but got shape {shape!r}.")
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(d if is_symbolic_dim(d) else int(d) for d in s)
              for s in shapes]
    try:
        return broadcast_shapes_or_error("broadcast_shapes", *padded)
    except TypeError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def broadcasting_shape_rule(name: str, *avals: ShapedArray) -> tuple[int, ...]:
    """Shape of an elementwise op: rank-0 operands broadcast, the rest need equal ranks and
    sizes that are equal or 1 (lax's implicit broadcasting)."""
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    return broadcast_shapes_or_error(name, *shapes)


# The jax.numpy function a lax dtype error suggests instead. Keyed by primitive name; JAX's
# table also has keys such as 'greater' that no primitive is named, so those never match.
_JNP_EQUIVALENTS = {
    "abs": "fabs", "acos": "arccos", "acosh": "arccosh", "add": "add", "asin": "arcsin",
    "asinh": "arcsinh", "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
    "cbrt": "cbrt", "ceil": "ceil", "concatenate": "concatenate", "cos": "cos", "cosh": "cosh",
    "div": "divide", "eq": "equal", "exp": "exp", "expm1": "expm1", "floor": "floor",
    "log": "log",
    "log1p": "log1p", "max": "maximum", "min": "minimum", "mul": "multiply", "ne": "not_equal",
    "neg": "negative", "nextafter": "nextafter", "pow": "float_power", "round": "round",
    "shift_left": "left_shift", "shift_right_logical": "right_shift",
    "shift_right_arithmetic": "right_shift", "sign": "sign", "sin": "sin", "sinh": "sinh",
    "sqrt": "sqrt", "sub": "subtract", "tan": "tan", "tanh": "tanh",
}


def check_same_dtypes(name: str, *avals: ShapedArray) -> None:
    if len(avals) < 2:
        return
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
        msg = (f"lax.{name} requires arguments to have the same dtypes, got "
               f"{', '.join(dtypes.dtype_name(a.dtype) for a in avals)}.")
        if name in _JNP_EQUIVALENTS:
            msg += (f" (Tip: jnp.{_JNP_EQUIVALENTS[name]} is a similar function that does "
                    "automatic type promotion on inputs).")
        raise TypeError(msg)


# Dtype classes accepted by elementwise primitives, with the names JAX's errors use.
BOOL = (dtypes.bool_,)
SIGNED = dtypes.SIGNED_TYPES
UNSIGNED = dtypes.UNSIGNED_TYPES
INT = dtypes.INT_TYPES
FLOAT = dtypes.FLOAT_TYPES
COMPLEX = dtypes.COMPLEX_TYPES
INEXACT = FLOAT + COMPLEX
NUMERIC = INT + INEXACT
INT_OR_BOOL = INT + BOOL
ANY = NUMERIC + BOOL

def describe_dtype_class(accepted: Sequence[np.dtype]) -> str:
    """The NumPy abstract types JAX names in dtype errors, e.g. 'integer, bool'."""
    accepted = set(accepted)
    names = []
    if set(INT) <= accepted:
        names.append("integer")
    else:
        names += [name for group, name in ((SIGNED, "signedinteger"), (UNSIGNED, "unsignedinteger"))
                  if set(group) <= accepted]
    names += [name for group, name in ((FLOAT, "floating"), (COMPLEX, "complexfloating"),
                                       (BOOL, "bool")) if set(group) <= accepted]
    return ", ".join(names)


# Why float0 (the tangent type of integers) takes part in no operation (JAX's words).
FLOAT0_EXPLANATION = (
    "float0s do not support any operations by design because they are not compatible with "
    "non-trivial vector spaces. No implicit dtype conversion is done. You can use "
    "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular zeros array. \n"
    "If you didn't expect to get a float0 you might have accidentally taken a gradient with "
    "respect to an integer argument.")


def check_dtype(name: str, aval: ShapedArray, accepted: Sequence[np.dtype],
                position: int | None = None) -> None:
    """JAX's TypeError when `aval`'s dtype is not accepted (with the operand position for
    operations of several operands)."""
    if aval.dtype in accepted:
        return
    if dtypes.is_extended(aval.dtype) and name in ("eq", "ne"):
        return  # keys compare by their data
    if aval.dtype == dtypes.float0:
        raise TypeError(f"Called {name} with a float0 at position {position or 0}. "
                        + FLOAT0_EXPLANATION.replace("design because", "design, because"))
    dtype, allowed = dtypes.dtype_name(aval.dtype), describe_dtype_class(accepted)
    if position is None:
        raise TypeError(f"{name} does not accept dtype {dtype}. Accepted dtypes are subtypes "
                        f"of {allowed}.")
    raise TypeError(f"{name} does not accept dtype {dtype} at position {position}. Accepted "
                    f"dtypes at position {position} are subtypes of {allowed}.")


def canonical_axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def as_int_tuple(seq: Sequence[Any], what: str) -> tuple[int, ...]:
    """Static integer sequences as a tuple of ints; a traced entry is a concretization error."""
    return tuple(core.concrete_dim(d, f"{what}: ") for d in seq)


def static_dim(d: Any) -> Any:
    """A dimension as an int, or as itself if symbolic."""
    return d if is_symbolic_dim(d) else int(d)


def check_shapelike(fun_name: str, arg_name: str, obj: Any) -> None:
    """JAX's checks that a static parameter is a sequence of nonnegative integers."""
    if not isinstance(obj, (tuple, list, np.ndarray)):
        raise TypeError(f"{fun_name} {arg_name} must be of type tuple/list/ndarray, "
                        f"got {type(obj)}.")
    if not len(obj):
        return
    if any(not (isinstance(d, (int, np.integer)) or is_symbolic_dim(d)) or isinstance(d, bool)
           for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be an integer type, "
                        f"got {tuple(map(type, obj))}.")
    if not all(d >= 0 for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be nonnegative, "
                        f"got {obj}.")
