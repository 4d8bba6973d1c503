"""jax.numpy's shape and manipulation functions, written with lax.

Covers reshaping and transposition, joining and splitting, flips, rolls, tiling, repeats,
padding, triangles and diagonals, `where`/`select`/`clip`, `nonzero` and friends, `astype`/`view`,
comparisons of whole arrays, index arithmetic and a few numerical helpers (`diff`, `interp`,
`gradient`, `trapezoid`). JAX wraps several of these in `jit`; until `jit` lands they are traced
inline, so their jaxprs equal what JAX prints under `jax.disable_jit()`.
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.lax import elementwise as lax
from justjax._src.lax import slicing as lax_slicing
from justjax._src.lax import structural as lax_struct
from justjax._src.lax import utils as lax_utils
from justjax._src.lax.utils import def_numpy_impl, standard_primitive
from justjax._src.numpy import array_creation, indexing, reductions, sorting, ufuncs, util
from justjax._src.runtime.array import Array

__all__ = [
    "append", "argwhere", "array_equal", "array_equiv", "array_split", "astype",
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays", "broadcast_shapes",
    "broadcast_to", "choose", "clip", "column_stack", "compress", "concat", "concatenate",
    "delete", "diag", "diag_indices", "diag_indices_from", "diagflat", "diagonal", "diff",
    "dsplit", "dstack", "ediff1d", "expand_dims", "extract", "fill_diagonal", "flatnonzero",
    "flip", "fliplr", "flipud", "gradient", "hsplit", "hstack", "insert", "interp",
    "iscomplexobj", "isrealobj", "isscalar", "isclose", "allclose", "ix_", "matrix_transpose",
    "moveaxis", "ndim", "nonzero", "permute_dims", "piecewise", "polyval", "ravel",
    "ravel_multi_index", "repeat", "reshape", "resize", "roll", "rollaxis", "rot90", "select",
    "shape", "size", "split", "squeeze", "stack", "swapaxes", "tile", "trace", "transpose",
    "trapezoid", "tril", "triu", "unravel_index", "unstack", "view", "vsplit", "vstack", "where",
    "pad",
]


# ---------------------------------------------------------------------------------------------
# lax primitives that JAX defines in lax.py (`tile`, `split`, `stack`) and that no lax module
# of ours has yet. They belong in `_src/lax/structural.py`; jnp.tile/split/stack need them to
# print JAX's jaxprs.

def _tile_shape(x: ShapedArray, *, reps: tuple[int, ...]) -> tuple[int, ...]:
    if x.ndim != len(reps):
        raise TypeError("reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={x.ndim}.")
    return tuple(d * r for d, r in zip(x.shape, reps, strict=True))


tile_p = standard_primitive("tile", _tile_shape, lambda x, **_: x.dtype, lax_utils.first_arg_weak)
def_numpy_impl(tile_p, lambda x, *, reps: np.tile(x, reps))


def lax_tile(operand: Any, reps: Sequence[int]) -> Any:
    """`lax.tile`: repeats `operand` `reps[i]` times along dimension i (StableHLO
    `broadcast_in_dim` + `reshape`)."""
    return tile_p.bind(operand, reps=tuple(reps))


def _stack_shape(*operands: ShapedArray, axis: int) -> tuple[int, ...]:
    if not operands:
        raise ValueError("stack expects at least one operand, got 0.")
    if len({op.ndim for op in operands}) != 1:
        raise ValueError("Cannot stack arrays with different numbers of dimensions: got "
                         f"{', '.join(str(o.shape) for o in operands)}.")
    if len({op.shape for op in operands}) != 1:
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(o.shape) for o in operands)}.")
    shape = list(operands[0].shape)
    shape.insert(axis, len(operands))
    return tuple(shape)


def _stack_dtype(*operands: ShapedArray, axis: int) -> np.dtype:
    lax_utils.check_same_dtypes("stack", *operands)
    return operands[0].dtype


stack_p = standard_primitive("stack", _stack_shape, _stack_dtype)
def_numpy_impl(stack_p, lambda *xs, axis: np.stack(xs, axis=axis))


def lax_stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """`lax.stack`: joins equal-shaped arrays along a new axis (StableHLO `broadcast_in_dim`
    of each operand + `concatenate`)."""
    arrays = [util.asarray_lite(op) for op in operands]
    axis = util.canonicalize_axis(axis, arrays[0].ndim + 1)
    return stack_p.bind(*arrays, axis=axis)


def _split_abstract(x: ShapedArray, *, sizes: tuple[int, ...], axis: int) -> list[ShapedArray]:
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != sum(sizes):
        raise ValueError(f"Sum of sizes {np.sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}")
    shapes = []
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = size
        shapes.append(ShapedArray(tuple(shape), x.dtype, x.weak_type))
    return shapes


def _split_numpy(x: np.ndarray, *, sizes: tuple[int, ...], axis: int) -> list[np.ndarray]:
    return np.split(x, np.cumsum(sizes)[:-1].astype(np.int64), axis=axis)


split_p = Primitive("split", multiple_results=True)
split_p.def_abstract_eval(_split_abstract)
def_numpy_impl(split_p, _split_numpy)


def lax_split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """`lax.split`: chunks of the given sizes along `axis` (StableHLO `slice`s)."""
    operand = util.asarray_lite(operand)
    return split_p.bind(operand, sizes=tuple(sizes),
                        axis=util.canonicalize_axis(axis, operand.ndim))


# ---------------------------------------------------------------------------------------------
# Small shared helpers.

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
    if any(isinstance(d, core.Tracer) for d in np.atleast_1d(np.asarray(shape, dtype=object))):
        msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                "subfunctions.")
    raise TypeError(msg)


def user_dtype(dtype: Any) -> np.dtype:
    """A dtype argument in its canonical (x64-dependent) form."""
    return dtypes.canonicalize_dtype(np.dtype(dtype))


def _const(x: Any, value: Any) -> Array:
    """A constant of `x`'s dtype (JAX's `lax._const`): prints as a literal when traced."""
    return lax_struct.convert_element_type(value, _aval(x).dtype)


def _zeros_like_scalar(x: Any) -> Array:
    return _const(x, 0)


def _asarray(x: Any) -> Any:
    return util.asarray_lite(x)


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Array, core.Tracer))


def ndim(a: Any) -> int:
    """Number of dimensions of an array or scalar (`TypeError` for lists, as in JAX)."""
    if hasattr(a, "ndim") and not isinstance(a, (list, tuple)):
        return a.ndim
    util.check_arraylike("ndim", a)
    return np.ndim(a)


def shape(a: Any) -> tuple[int, ...]:
    """Shape of an array or scalar (`TypeError` for lists, as in JAX)."""
    if hasattr(a, "shape") and not isinstance(a, (list, tuple)):
        return tuple(a.shape)
    util.check_arraylike("shape", a)
    return np.shape(a)


def size(a: Any, axis: int | Sequence[int] | None = None) -> int:
    """Number of elements of an array, or along the given axis or axes."""
    if not (hasattr(a, "shape") and not isinstance(a, (list, tuple))):
        util.check_arraylike("size", a)
    a_shape = np.shape(a) if not hasattr(a, "shape") else tuple(a.shape)
    if axis is None:
        return math.prod(a_shape)
    axes = util.canonicalize_axes(axis, len(a_shape))
    return math.prod(a_shape[i] for i in axes)


def iscomplexobj(x: Any) -> bool:
    """Whether `x` has a complex dtype (or is a complex scalar)."""
    if isinstance(x, (builtins.complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    try:
        dtype = x.dtype
    except AttributeError:
        dtype = np.asarray(x).dtype
    return dtypes.is_complex(dtype)


def isrealobj(x: Any) -> bool:
    """Whether `x` is not of a complex type."""
    return not iscomplexobj(x)


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
        if others == 0 or size_in % others != 0:
            raise TypeError(f"cannot reshape array of shape {_shape(arr)} (size {size_in}) "
                            f"into shape {orig} because the product of specified axis sizes "
                            f"({others}) does not evenly divide {size_in}")
        return newshape[:i] + (size_in // others,) + newshape[i + 1:]
    if size_in != math.prod(newshape):
        raise TypeError(f"cannot reshape array of shape {_shape(arr)} (size {size_in}) into "
                        f"shape {orig} (size {math.prod(newshape)})")
    return newshape


def reshape(a: Any, shape: Any = None, order: str = "C", *, copy: bool | None = None,
            out_sharding: Any = None) -> Any:
    """Gives `a` a new shape (one entry may be -1); `order='F'` reads and writes column-major.

    Lowers to StableHLO `reshape` (with a `transpose` for Fortran order).
    """
    del copy, out_sharding
    util.check_arraylike("reshape", a)
    arr = _asarray(a)
    newshape = _compute_newshape(arr, shape)
    if order == "C":
        return lax_struct.reshape(arr, newshape)
    if order == "F":
        dims = tuple(range(_ndim(arr)))[::-1]
        return transpose(lax_struct.reshape(arr, newshape[::-1], dims))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a: Any, order: str = "C", *, out_sharding: Any = None) -> Any:
    """The elements of `a` as a 1-D array (C or Fortran order)."""
    a = util.ensure_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (_aval(a).size,), order)


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
        axes = _index_tuple(axis)
    return lax_struct.squeeze(arr, axes)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """Inserts size-1 axes at the given positions of the result."""
    a = util.ensure_arraylike("expand_dims", a)
    return lax_struct.expand_dims(a, _index_tuple(axis))


def _atleast(x: Any, n: int) -> Any:
    """`x` with leading size-1 axes up to rank `n` (JAX's `array(x, ndmin=n)`)."""
    arr = _asarray(x)
    nd = _ndim(arr)
    return lax_struct.broadcast(arr, (1,) * (n - nd)) if nd < n else arr


def atleast_1d(*arys: Any) -> Any:
    """Each input viewed with at least one dimension."""
    util.check_arraylike("atleast_1d", *arys)
    out = [_atleast(a, 1) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: Any) -> Any:
    """Each input viewed with at least two dimensions (new axes in front)."""
    util.check_arraylike("atleast_2d", *arys)
    out = [_atleast(a, 2) for a in arys]
    return out[0] if len(out) == 1 else out


def _atleast_3d_one(x: Any) -> Any:
    arr = _asarray(x)
    dims = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(_ndim(arr))
    return lax_struct.expand_dims(arr, dims) if dims else arr


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


def _lax_broadcast_to(arr: Any, shape: tuple[int, ...]) -> Any:
    aval = _aval(arr)
    if aval.shape == shape:
        return _asarray(arr)
    nlead = len(shape) - aval.ndim
    if nlead < 0:
        raise ValueError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={aval.shape} shape={shape}")
    if any(d not in (1, s) for d, s in zip(aval.shape, shape[nlead:], strict=True)):
        requested = ShapedArray(shape, aval.dtype).str_short(short_dtypes=False)
        raise ValueError("Incompatible types for broadcasting: input type="
                         f"{aval.str_short(short_dtypes=False)} and requested type={requested}")
    return lax_struct.broadcast_in_dim(arr, shape, tuple(range(nlead, len(shape))))


def broadcast_to(array: Any, shape: Any, *, out_sharding: Any = None) -> Any:
    """Broadcasts `array` to `shape` (StableHLO `broadcast_in_dim`)."""
    arr = util.ensure_arraylike("broadcast_to", array)
    if not isinstance(shape, tuple) and np.ndim(shape) == 0:
        shape = (shape,)
    return _lax_broadcast_to(arr, canonicalize_shape(shape))


def _broadcast_arrays(*args: Any) -> list[Any]:
    shapes = [_shape(a) for a in args]
    if not shapes or all(s == shapes[0] for s in shapes):
        return [_asarray(a) for a in args]
    result_shape = util.broadcast_shapes(*shapes)
    return [_lax_broadcast_to(_asarray(a), result_shape) for a in args]


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arguments broadcast against each other."""
    util.check_arraylike("broadcast_arrays", *args)
    return _broadcast_arrays(*args)
