"""jax.numpy's shape functions, written with lax: array properties (`ndim`, `shape`, `size`,
`isscalar`), reshaping and transposition, `squeeze`/`expand_dims`/`atleast_*d`, and broadcasting.

It also holds the small helpers the other modules split from JAX's `lax_numpy` share (`_aval`,
`_shape`, `_asarray`, `canonicalize_shape`, `user_dtype`, ...); it imports none of those modules,
so they can import these names directly.

The ones JAX wraps in `jit` are wrapped the same way (`util.jitted_as_in_jax`: same name,
static arguments and inline flag), so their jaxprs print JAX's `jit[name=...]` equations.
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.lax import structural as lax_struct
from justjax._src.lax import sharding_rules
from justjax._src.numpy import scalar_types, util
from justjax._src.runtime.array import Array

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays", "broadcast_shapes",
           "broadcast_to", "expand_dims", "isscalar", "matrix_transpose", "moveaxis", "ndim",
           "permute_dims", "ravel", "reshape", "rollaxis", "shape", "size", "squeeze", "swapaxes",
           "transpose"]


# ---------------------------------------------------------------------------------------------
# Helpers shared by the jax.numpy shape modules.

_const = util.const  # JAX's lax._const


def _aval(x: Any) -> ShapedArray:
    return core.get_aval(x)


def _ndim(x: Any) -> int:
    return _aval(x).ndim


def _shape(x: Any) -> tuple[int, ...]:
    return _aval(x).shape


def _index_tuple(x: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints (JAX's `_ensure_index_tuple`)."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def _canonical_dim(d: Any) -> int:
    if isinstance(d, core.Tracer):
        raise TypeError("traced dimension")
    if is_symbolic_dim(d):
        return d
    return operator.index(d)


def canonicalize_shape(shape: Any, context: str = "") -> tuple[int, ...]:
    """A user-given shape (int or sequence of concrete ints) as a tuple; JAX's TypeError else."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(_canonical_dim(d) for d in shape)
    except TypeError:
        pass
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    if context:
        msg += f" {context}."
    if any(isinstance(d, core.Tracer) for d in (shape if isinstance(shape, (list, tuple)) else ())):
        msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                "subfunctions.")
    raise TypeError(msg)


def _concrete(value: Any, context: str = "") -> Any:
    """`value` itself if it is concrete; JAX's ConcretizationTypeError for a tracer."""
    return core.concrete_or_error(lambda v: v, value, context)


def user_dtype(dtype: Any, fun_name: str) -> np.dtype:
    """A dtype argument in its canonical (x64-dependent) form, with JAX's checks and warning
    for 64-bit requests."""
    return scalar_types.check_and_canonicalize_user_dtype(dtype, fun_name)


def _zeros_like_scalar(x: Any) -> Array:
    return _const(x, 0)


def _asarray(x: Any) -> Any:
    return util.asarray_lite(x)


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Array, core.Tracer))


def _warn_if_not_arraylike(name: str, a: Any) -> None:
    """JAX 0.10 still accepts lists here, with a DeprecationWarning."""
    if not util.is_arraylike(a):
        warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at position "
                      "0. In a future JAX release this will be an error.", DeprecationWarning,
                      stacklevel=3)


# ---------------------------------------------------------------------------------------------
# Array properties.

def ndim(a: Any) -> int:
    """Number of dimensions of an array or scalar."""
    _warn_if_not_arraylike("ndim", a)
    return len(_shape_of(a))


def shape(a: Any) -> tuple[int, ...]:
    """Shape of an array or scalar."""
    _warn_if_not_arraylike("shape", a)
    return _shape_of(a)


def size(a: Any, axis: int | Sequence[int] | None = None) -> int:
    """Number of elements of an array, or along the given axis or axes."""
    _warn_if_not_arraylike("size", a)
    a_shape = _shape_of(a)
    if axis is None:
        return math.prod(a_shape)
    return math.prod(a_shape[i] for i in util.canonicalize_axes(axis, len(a_shape)))


def _shape_of(a: Any) -> tuple[int, ...]:
    if isinstance(a, (core.Tracer, Array)):
        return _shape(a)
    return tuple(np.shape(a))


def isscalar(element: Any) -> bool:
    """True for Python/NumPy scalars and 0-d arrays."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array, core.Tracer)):
        return element.ndim == 0
    return False


# ---------------------------------------------------------------------------------------------
# Reshaping and transposition.

def _compute_newshape(arr: Any, newshape: Any) -> tuple[int, ...]:
    """Resolves a single -1 in `newshape`; JAX's TypeErrors for sizes that do not fit."""
    orig = newshape
    try:
        iter(newshape)
    except TypeError:
        newshape = [newshape]
    newshape = canonicalize_shape(newshape)
    size_in = _aval(arr).size
    neg1s = [i for i, d in enumerate(newshape) if d == -1]
    if len(neg1s) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, "
                        f"got {orig}")
    if neg1s:
        i = neg1s[0]
        others = math.prod(newshape[:i] + newshape[i + 1:])
        remainder = size_in % (-others) if is_symbolic_dim(size_in) else 0
        if remainder != 0:
            raise core.InconclusiveDimensionOperation(
                f"Cannot divide evenly the sizes of shapes {tuple(_shape(arr))} and "
                f"{tuple(orig)}. The remainder {remainder} should be 0.")
        if others == 0 or size_in % others != 0:
            raise TypeError(f"cannot reshape array of shape {_shape(arr)} (size {size_in}) "
                            f"into shape {orig} because the product of specified axis sizes "
                            f"({others}) does not evenly divide {size_in}")
        return newshape[:i] + (size_in // others,) + newshape[i + 1:]
    if size_in != math.prod(newshape):
        raise TypeError(f"cannot reshape array of shape {_shape(arr)} (size {size_in}) into "
                        f"shape {orig} (size {math.prod(newshape)})")
    return newshape


def reshape(a: Any, shape: Any, order: str = "C", *, copy: bool | None = None,
            out_sharding: Any = None) -> Any:
    """Gives `a` a new shape (one entry may be -1); `order='F'` reads and writes column-major.

    Lowers to StableHLO `reshape` (with a `transpose` for Fortran order).
    """
    del copy
    util.check_arraylike("reshape", a)
    arr = _asarray(a)
    newshape = _compute_newshape(arr, shape)
    if order == "C":
        return lax_struct.reshape(arr, newshape, out_sharding=out_sharding)
    if order == "F":
        # Reshaped reversed, then transposed: JAX reverses the spec's entries as given
        # (not padded to the rank first), and so does this.
        dims = tuple(range(_ndim(arr)))[::-1]
        sharding = sharding_rules.user_out_sharding(out_sharding)
        if sharding is not None:
            sharding = sharding.update(spec=sharding.spec.update(
                partitions=tuple(sharding.spec)[::-1]))
        return transpose(lax_struct.reshape(arr, newshape[::-1], dims, out_sharding=sharding))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a: Any, order: str = "C", *, out_sharding: Any = None) -> Any:
    """The elements of `a` as a 1-D array (C or Fortran order)."""
    a = util.ensure_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (_aval(a).size,), order, out_sharding=out_sharding)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """Permutes the axes of `a` (all reversed by default); StableHLO `transpose`."""
    a = util.ensure_arraylike("transpose", a)
    nd = _ndim(a)
    axes_ = list(range(nd))[::-1] if axes is None else axes
    axes_ = [util.canonicalize_axis(i, nd) for i in axes_]
    return lax_struct.transpose(a, axes_)


def permute_dims(a: Any, /, axes: tuple[int, ...]) -> Any:
    """Array-API name of `transpose` with required axes."""
    a = util.ensure_arraylike("permute_dims", a)
    return lax_struct.transpose(a, axes)


def matrix_transpose(x: Any, /) -> Any:
    """Swaps the last two axes."""
    x = util.ensure_arraylike("matrix_transpose", x)
    nd = _ndim(x)
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={nd}")
    return lax_struct.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Interchanges two axes."""
    a = util.ensure_arraylike("swapaxes", a)
    perm = list(range(_ndim(a)))
    try:
        perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    except IndexError:
        bad = axis1 if not -len(perm) <= axis1 < len(perm) else axis2
        raise IndexError(f"index {bad} is out of bounds for axis 0 with size {len(perm)}") from None
    return lax_struct.transpose(a, perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """Moves axes `source` to positions `destination`, keeping the others in order."""
    arr = util.ensure_arraylike("moveaxis", a)
    nd = _ndim(arr)
    source = tuple(util.canonicalize_axis(i, nd) for i in _index_tuple(source))
    destination = tuple(util.canonicalize_axis(i, nd) for i in _index_tuple(destination))
    if len(source) != len(destination):
        raise ValueError(f"Inconsistent number of elements: {len(source)} vs {len(destination)}")
    perm = [i for i in range(nd) if i not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        perm.insert(dest, src)
    return lax_struct.transpose(arr, perm)


@util.jitted_as_in_jax(static_argnames=("axis", "start"))
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Moves `axis` so that it sits before position `start`."""
    a = util.ensure_arraylike("rollaxis", a)
    start = core.concrete_or_error(operator.index, start, "'start' argument of jnp.rollaxis()")
    nd = _ndim(a)
    axis = util.canonicalize_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Removes size-1 axes (all of them, or the given ones); StableHLO `reshape`."""
    arr = util.ensure_arraylike("squeeze", a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(_shape(arr)) if d == 1)
    else:
        axes = tuple(util.canonicalize_axis(i, _ndim(arr)) for i in _index_tuple(axis))
    return lax_struct.squeeze(arr, axes)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """Inserts size-1 axes at the given positions of the result."""
    a = util.ensure_arraylike("expand_dims", a)
    axes = _index_tuple(axis)
    ndim_out = _ndim(a) + len(axes)
    dims = [util.canonicalize_axis(i, ndim_out) for i in axes]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {axes}")
    return lax_struct.expand_dims(a, dims)


def _atleast(x: Any, n: int) -> Any:
    """`x` with leading size-1 axes up to rank `n` (JAX's `array(x, ndmin=n)`)."""
    arr = _asarray(x)
    nd = _ndim(arr)
    return lax_struct.broadcast(arr, (1,) * (n - nd)) if nd < n else arr


@util.jitted_as_in_jax
def atleast_1d(*arys: Any) -> Any:
    """Each input viewed with at least one dimension."""
    util.check_arraylike("atleast_1d", *arys)
    out = [_atleast(a, 1) for a in arys]
    return out[0] if len(out) == 1 else out


@util.jitted_as_in_jax
def atleast_2d(*arys: Any) -> Any:
    """Each input viewed with at least two dimensions (new axes in front)."""
    util.check_arraylike("atleast_2d", *arys)
    out = [_atleast(a, 2) for a in arys]
    return out[0] if len(out) == 1 else out


def _atleast_3d_one(x: Any) -> Any:
    arr = _asarray(x)
    dims = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(_ndim(arr))
    return lax_struct.expand_dims(arr, dims) if dims else arr


@util.jitted_as_in_jax
def atleast_3d(*arys: Any) -> Any:
    """Each input with at least three dimensions: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    util.check_arraylike("atleast_3d", *arys)
    out = [_atleast_3d_one(a) for a in arys]
    return out[0] if len(out) == 1 else out


# ---------------------------------------------------------------------------------------------
# Broadcasting.

def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that arrays of the given shapes broadcast to (`ValueError` if none)."""
    if not shapes:
        return ()
    shapes = [(s,) if np.ndim(s) == 0 else tuple(s) for s in shapes]
    return util.broadcast_shapes(*shapes)


def broadcast_to(array: Any, shape: Any, *, out_sharding: Any = None) -> Any:
    """Broadcasts `array` to `shape` (StableHLO `broadcast_in_dim`)."""
    arr = util.ensure_arraylike("broadcast_to", array)
    if not isinstance(shape, tuple) and np.ndim(shape) == 0:
        shape = (shape,)
    out = util.broadcast_to(arr, canonicalize_shape(shape))
    return util.place(out, None, out_sharding, "broadcast_to")


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arguments broadcast against each other."""
    util.check_arraylike("broadcast_arrays", *args)
    return util.broadcast_arrays(*args)
