"""jax.numpy's functions that move or repeat elements, written with lax: flips, `rot90`,
`roll`, `tile` (the lax `tile` primitive), `repeat` and `resize`.

The ones JAX wraps in `jit` are wrapped the same way (`util.jitted_as_in_jax`: same name,
static arguments and inline flag), so their jaxprs print JAX's `jit[name=...]` equations.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.lax import elementwise as lax
from justjax._src.lax import joining as lax_joining
from justjax._src.lax import slicing as lax_slicing
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import array_creation, reductions, take, ufuncs, util
from justjax._src.numpy.shape_ops import (_asarray, _aval, _concrete, _index_tuple, _ndim, _shape,
                                          broadcast_to, ravel, reshape, transpose)

__all__ = ["flip", "fliplr", "flipud", "repeat", "resize", "roll", "rot90", "tile"]


# ---------------------------------------------------------------------------------------------
# Flips, rotations and rolls.

def flip(m: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Reverses the order of elements along the given axes (all by default); StableHLO
    `reverse`."""
    arr = util.ensure_arraylike("flip", m)
    return _flip(arr, None if axis is None else _index_tuple(axis))


@util.jitted_as_in_jax(static_argnames=("axis",))
def _flip(m: Any, axis: int | tuple[int, ...] | None = None) -> Any:
    """`flip` of an array, jitted as JAX jits it."""
    nd = _ndim(m)
    if axis is None:
        return lax_slicing.rev(m, tuple(range(nd)))
    return lax_slicing.rev(m, tuple(util.canonicalize_axis(ax, nd) for ax in _index_tuple(axis)))


def fliplr(m: Any) -> Any:
    """Reverses axis 1."""
    return _flip(util.ensure_arraylike("fliplr", m), 1)


def flipud(m: Any) -> Any:
    """Reverses axis 0."""
    return _flip(util.ensure_arraylike("flipud", m), 0)


@util.jitted_as_in_jax(static_argnames=("k", "axes"))
def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotates by 90 degrees `k` times in the plane of `axes`."""
    m = util.ensure_arraylike("rot90", m)
    nd = _ndim(m)
    if nd < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but got "
                         f"first argument of shape {_shape(m)}, which has ndim {nd}")
    ax1, ax2 = (util.canonicalize_axis(ax, nd) for ax in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(nd))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


@util.jitted_as_in_jax(static_argnums=(1, 2))
def _roll_static(a: Any, shift: Sequence[int], axis: Sequence[int]) -> Any:
    for ax, s in zip(*np.broadcast_arrays(axis, shift), strict=True):
        n = _shape(a)[ax]
        if n == 0:
            continue
        i = (-s) % n
        i = i if is_symbolic_dim(i) else int(i)
        a = lax_struct.concatenate([lax_slicing.slice_in_dim(a, i, n, axis=int(ax)),
                                    lax_slicing.slice_in_dim(a, 0, i, axis=int(ax))], int(ax))
    return a


@util.jitted_as_in_jax(static_argnums=(2,))
def _roll_dynamic(a: Any, shift: Any, axis: Sequence[int]) -> Any:
    b_shape = util.broadcast_shapes(_shape(shift), np.shape(axis))
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = broadcast_to(shift, b_shape)
    for j, i in enumerate(np.broadcast_to(axis, b_shape)):
        i = int(i)
        n = _shape(a)[i]
        n_arr = np.array(n, dtype=np.int32)
        x = lax_struct.squeeze(lax_slicing.slice_in_dim(shifts, j, j + 1, axis=0), (0,))
        x = ufuncs.remainder(lax_struct.convert_element_type(x, np.int32),
                             lax.max(n_arr, np.int32(1)))
        doubled = lax_struct.concatenate([a, a], i)
        a = lax_slicing.dynamic_slice_in_dim(doubled, lax.sub(n_arr, x), n, axis=i)
    return a


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Rolls elements along the given axes (flattened when `axis` is None); a traced shift
    uses a dynamic slice of the doubled array."""
    arr = util.ensure_arraylike("roll", a)
    if axis is None:
        return roll(ravel(arr), shift, 0).reshape(_shape(arr))
    axes = tuple(util.canonicalize_axis(ax, _ndim(arr)) for ax in _index_tuple(axis))
    try:
        shifts = _index_tuple(shift)
    except TypeError:
        return _roll_dynamic(arr, _asarray(shift), axes)
    return _roll_static(arr, shifts, axes)


# ---------------------------------------------------------------------------------------------
# Tiling, repeats and resizing.

def tile(A: Any, reps: Any) -> Any:
    """Repeats the whole array `reps` times (per axis); the `tile` primitive."""
    A = util.ensure_arraylike("tile", A)
    try:
        reps_tup = tuple(iter(reps))
    except TypeError:
        reps_tup = (reps,)
    reps_tup = tuple(operator.index(r) if isinstance(r, (int, np.integer)) else r
                     for r in reps_tup)
    nd = _ndim(A)
    reps_tup = (1,) * (nd - len(reps_tup)) + reps_tup
    if len(reps_tup) > nd:
        A = lax_struct.expand_dims(A, tuple(range(len(reps_tup) - nd)))
    return lax_joining.tile(A, reps_tup)


def _repeat_scalar(arr: Any, repeats: int, axis: int) -> Any:
    input_shape = _shape(arr)
    axis = util.canonicalize_axis(axis, len(input_shape))
    aux_shape = list(input_shape)
    aux_shape.insert(axis + 1, operator.index(repeats))
    arr = lax_struct.broadcast_in_dim(arr, aux_shape,
                                      [i for i in range(len(aux_shape)) if i != axis + 1])
    result_shape = list(input_shape)
    result_shape[axis] *= repeats
    return lax_struct.reshape(arr, result_shape)


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None, out_sharding: Any = None) -> Any:
    """Repeats each element `repeats` times (a scalar or one count per element).

    With traced `repeats`, `total_repeat_length` gives the static output length; the result is
    a gather driven by cumulative sums of the counts, as in JAX. `out_sharding` says how the
    result is laid out (split over Explicit mesh axes in its type).
    """
    return util.place(_repeat(a, repeats, axis, total_repeat_length), None, out_sharding,
                      "jnp.repeat")


def _repeat(a: Any, repeats: Any, axis: int | None, total_repeat_length: int | None) -> Any:
    if isinstance(repeats, (int, np.integer)):
        util.check_arraylike("repeat", a)
    else:
        util.check_arraylike("repeat", a, repeats)
    arr = _asarray(a)
    if axis is None:
        arr = ravel(arr)
        axis = 0
    axis = core.concrete_or_error(operator.index, axis, "'axis' argument of jnp.repeat()")
    if total_repeat_length is None:
        repeats = _concrete(
            repeats,
            "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix "
            "this, either specify a static value for `repeats`, or pass a static value to "
            "`total_repeat_length`.")
        if np.ndim(repeats) == 0 and _ndim(arr) != 0:
            return _repeat_scalar(arr, operator.index(repeats), axis)
        repeats = np.ravel(np.asarray(repeats))
        if _ndim(arr) != 0:
            repeats = np.broadcast_to(repeats, [_shape(arr)[axis]])
        total_repeat_length = int(np.sum(repeats))
    else:
        repeats = ravel(repeats)
        if _ndim(arr) != 0:
            repeats = broadcast_to(repeats, [_shape(arr)[axis]])
    return _repeat_general(arr, repeats, axis, total_repeat_length)


def _repeat_general(arr: Any, repeats: Any, axis: int, total: int) -> Any:
    if _ndim(arr) == 0:
        if np.shape(repeats) == (1,):
            return array_creation.full([total], arr)
        raise ValueError("`repeat` with a scalar parameter `a` is only implemented for scalar "
                         "values of the parameter `repeats`.")
    if total == 0:
        result_shape = list(_shape(arr))
        result_shape[axis] = 0
        return reshape(array_creation.array([], dtype=_aval(arr).dtype), result_shape)
    if _shape(arr)[axis] == 0:
        return arr
    repeats = _asarray(repeats)
    # Each output position's source index: exclusive cumulative counts mark block starts.
    exclusive = roll(repeats, shift=1).at[0].set(0)
    scatter_indices = reductions.cumsum(exclusive)
    starts = array_creation.zeros([total], dtype="int32").at[scatter_indices].add(1)
    gather_indices = reductions.cumsum(starts) - 1
    return take.take(arr, gather_indices, axis=axis)


@util.jitted_as_in_jax(static_argnames=("new_shape",))
def resize(a: Any, new_shape: Any) -> Any:
    """`a` flattened, repeated as needed and reshaped to `new_shape`."""
    util.check_arraylike("resize", a)
    new_shape = _index_tuple(new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = ravel(a)
    new_size = math.prod(new_shape)
    if _aval(arr).size == 0 or new_size == 0:
        return array_creation.zeros(new_shape, _aval(arr).dtype)
    repeats = -(-new_size // _aval(arr).size)
    arr = tile(arr, repeats)[:new_size]
    return reshape(arr, new_shape)
