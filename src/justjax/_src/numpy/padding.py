"""`jax.numpy.pad` with all of NumPy's modes, written with lax: constant (StableHLO `pad`), edge,
wrap, reflect, symmetric, linear_ramp, maximum/minimum/mean/median, empty, or a callable.

JAX wraps `pad`'s body in `jit` (as `_pad`); so does justjax (`util.jitted_as_in_jax`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from justjax._src.core import dtypes
from justjax._src.lax import slicing as lax_slicing
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import (array_creation, joining, rearranging, reductions, sorting, ufuncs,
                                util)
from justjax._src.numpy.shape_ops import (_asarray, _aval, _concrete, _ndim, _shape, broadcast_to,
                                         moveaxis, reshape, squeeze)

__all__ = ["pad"]


def _broadcast_to_pairs(nvals: Any, nd: int, name: str) -> tuple[tuple[Any, Any], ...]:
    """`pad_width`-style arguments as one (before, after) pair per axis."""
    def concrete(x: Any) -> Any:
        return _concrete(x, context=f"{name} argument of jnp.pad")

    try:
        nvals = np.asarray(_tree_map(concrete, nvals))
    except ValueError as e:
        if "inhomogeneous" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {nvals}") from e
        raise
    if nvals.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {nvals}")
    if nvals.shape == (nd, 2):
        return tuple((row[0], row[1]) for row in nvals)
    if nvals.shape == (1, 2):
        return tuple((nvals[0, 0], nvals[0, 1]) for _ in range(nd))
    if nvals.shape == (2,):
        return tuple((nvals[0], nvals[1]) for _ in range(nd))
    if nvals.shape == (1,):
        return tuple((nvals[0], nvals[0]) for _ in range(nd))
    if nvals.shape == ():
        v = nvals.flat[0]
        return tuple((v, v) for _ in range(nd))
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {nvals.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _tree_map(f: Callable[[Any], Any], tree: Any) -> Any:
    if isinstance(tree, (list, tuple)):
        return type(tree)(_tree_map(f, t) for t in tree)
    return f(tree)


def _check_no_padding(axis_padding: tuple[Any, Any], mode: str) -> None:
    if axis_padding[0] > 0 or axis_padding[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_constant(array: Any, pad_width: Any, constant_values: Any) -> Any:
    nd = _ndim(array)
    constant_values = lax_struct.convert_element_type(constant_values, _aval(array).dtype,
                                                      _aval(array).weak_type)
    cv_nd = _ndim(constant_values)
    if cv_nd == 0:
        return lax_slicing.pad(array, constant_values, [(lo, hi, 0) for lo, hi in pad_width])
    if cv_nd == 1:
        if _shape(constant_values)[-1] == 1:
            return lax_slicing.pad(array, squeeze(constant_values),
                                   [(lo, hi, 0) for lo, hi in pad_width])
        if _shape(constant_values)[-1] != 2:
            raise ValueError("jnp.pad: constant_values has unsupported shape "
                             f"{_shape(constant_values)}. If the shape is 1D or 2D, the last "
                             "dimension must be of size 1 or 2.")
    constant_values = broadcast_to(constant_values, (nd, 2))
    for i in range(nd):
        widths = [(0, 0, 0)] * nd
        if pad_width[i][0] != 0:
            widths[i] = (pad_width[i][0], 0, 0)
            array = lax_slicing.pad(array, constant_values[i, 0], widths)
        if pad_width[i][1] != 0:
            widths[i] = (0, pad_width[i][1], 0)
            array = lax_slicing.pad(array, constant_values[i, 1], widths)
    return array


def _pad_wrap(array: Any, pad_width: Any) -> Any:
    for i in range(_ndim(array)):
        n = _shape(array)[i]
        if n == 0:
            _check_no_padding(pad_width[i], "wrap")
            continue
        left_repeats, left_rest = divmod(int(pad_width[i][0]), n)
        right_repeats, right_rest = divmod(int(pad_width[i][1]), n)
        parts = []
        if left_rest > 0:
            parts.append(lax_slicing.slice_in_dim(array, n - left_rest, n, axis=i))
        parts += [array] * (left_repeats + right_repeats + 1)
        if right_rest > 0:
            parts.append(lax_slicing.slice_in_dim(array, 0, right_rest, axis=i))
        array = lax_struct.concatenate(parts, i)
    return array


def _reflect_side(array: Any, padding: int, axis: int, n: int, mode: str, odd: bool,
                  before: bool) -> Any:
    """Pads one side of one axis (of original length `n`) by reflection, in chunks no longer
    than the axis."""
    if before:
        edge = lax_slicing.slice_in_dim(array, 0, 1, axis=axis)
    else:
        edge = lax_slicing.slice_in_dim(array, -1, None, axis=axis)
    offset = 1 if (mode == "reflect" and n > 1) else 0
    while padding > 0:
        chunk = min(padding, n - offset)
        padding -= chunk
        if before:
            start, stop = offset, offset + chunk
        else:
            start = -(chunk + offset)
            stop = None if (mode == "symmetric" or n == 1) else -1
        x = rearranging.flip(lax_slicing.slice_in_dim(array, start, stop, axis=axis), axis=axis)
        if odd:
            x = 2 * edge - x
            if n > 1:
                edge = (lax_slicing.slice_in_dim(x, 0, 1, axis=axis) if before
                        else lax_slicing.slice_in_dim(x, -1, None, axis=axis))
        array = lax_struct.concatenate([x, array] if before else [array, x], axis)
    return array


def _pad_symmetric_or_reflect(array: Any, pad_width: Any, mode: str, reflect_type: str) -> Any:
    for i in range(_ndim(array)):
        if _shape(array)[i] == 0:
            _check_no_padding(pad_width[i], mode)
            continue
        if pad_width[i][0] == 0 and pad_width[i][1] == 0:
            continue
        odd = reflect_type == "odd"
        n = _shape(array)[i]
        array = _reflect_side(array, int(pad_width[i][0]), i, n, mode, odd, before=True)
        array = _reflect_side(array, int(pad_width[i][1]), i, n, mode, odd, before=False)
    return array


def _pad_edge(array: Any, pad_width: Any) -> Any:
    for i in range(_ndim(array)):
        n = _shape(array)[i]
        if n == 0:
            _check_no_padding(pad_width[i], "edge")
            continue
        before = rearranging.repeat(lax_slicing.slice_in_dim(array, 0, 1, axis=i),
                                    pad_width[i][0], axis=i)
        after = rearranging.repeat(lax_slicing.slice_in_dim(array, n - 1, n, axis=i),
                                   pad_width[i][1], axis=i)
        array = lax_struct.concatenate([before, array, after], i)
    return array


def _pad_linear_ramp(array: Any, pad_width: Any, end_values: Any) -> Any:
    weak = _aval(array).weak_type
    dtype = _aval(array).dtype
    for axis in range(_ndim(array)):
        edge_before = lax_slicing.slice_in_dim(array, 0, 1, axis=axis)
        edge_after = lax_slicing.slice_in_dim(array, -1, None, axis=axis)
        ramps = []
        for end, edge, num in ((end_values[axis][0], edge_before, pad_width[axis][0]),
                               (end_values[axis][1], edge_after, pad_width[axis][1])):
            ramp = array_creation.linspace(start=end, stop=squeeze(edge, axis), num=int(num),
                                           endpoint=False, dtype=dtype, axis=axis)
            ramps.append(lax_struct.convert_element_type(ramp, dtype, weak))
        array = lax_struct.concatenate([ramps[0], array, rearranging.flip(ramps[1], axis)], axis)
    return array


def _pad_stats(array: Any, pad_width: Any, stat_length: Any, stat_func: Callable) -> Any:
    dtype, weak = _aval(array).dtype, _aval(array).weak_type
    for i in range(_ndim(array)):
        if stat_length is None:
            stat_before = stat_after = stat_func(array, axis=i, keepdims=True)
        else:
            n = _shape(array)[i]
            length_before, length_after = stat_length[i]
            if length_before == 0 or length_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            length_before, length_after = min(length_before, n), min(length_after, n)
            slice_before = lax_slicing.slice_in_dim(array, 0, int(length_before), axis=i)
            slice_after = lax_slicing.slice_in_dim(array, -int(length_after), None, axis=i)
            stat_before = stat_func(slice_before, axis=i, keepdims=True)
            stat_after = stat_func(slice_after, axis=i, keepdims=True)
        if dtypes.is_int(dtype):
            stat_before = ufuncs.round(stat_before)
            stat_after = ufuncs.round(stat_after)
        stat_before = lax_struct.convert_element_type(stat_before, dtype, weak)
        stat_after = lax_struct.convert_element_type(stat_after, dtype, weak)
        before = rearranging.repeat(stat_before, pad_width[i][0], axis=i)
        after = rearranging.repeat(stat_after, pad_width[i][1], axis=i)
        array = lax_struct.concatenate([before, array, after], i)
    return array


def _pad_empty(array: Any, pad_width: Any) -> Any:
    for i in range(_ndim(array)):
        s = _shape(array)
        before = array_creation.zeros(s[:i] + (int(pad_width[i][0]),) + s[i + 1:],
                                      _aval(array).dtype)
        after = array_creation.zeros(s[:i] + (int(pad_width[i][1]),) + s[i + 1:],
                                     _aval(array).dtype)
        array = lax_struct.concatenate([before, array, after], i)
    return array


def _pad_func(array: Any, pad_width: Any, func: Callable, **kwargs: Any) -> Any:
    """Callable `mode`: NumPy's protocol `func(vector, iaxis_pad_width, iaxis, kwargs)` on
    each 1-D line of the zero-padded array, one axis after another."""
    padded = _pad_constant(array, pad_width, _asarray(0))
    for axis in range(_ndim(padded)):
        moved = moveaxis(padded, axis, -1)
        lead = _shape(moved)[:-1]
        lines = [func(moved[idx], pad_width[axis], axis, kwargs) for idx in np.ndindex(*lead)]
        stacked = joining.stack(lines) if lines else moved
        padded = moveaxis(reshape(stacked, _shape(moved)), -1, axis)
    return padded


_PAD_KWARGS = {
    "empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
    "linear_ramp": ["end_values"], "maximum": ["stat_length"], "mean": ["stat_length"],
    "median": ["stat_length"], "minimum": ["stat_length"], "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}


def pad(array: Any, pad_width: Any, mode: str | Callable = "constant", **kwargs: Any) -> Any:
    """Pads an array, with NumPy's modes: constant (StableHLO `pad`), edge, wrap, reflect,
    symmetric, linear_ramp, maximum/minimum/mean/median, empty, or a callable."""
    array = util.ensure_arraylike("pad", array)
    nd = _ndim(array)
    pad_width = _broadcast_to_pairs(pad_width, nd, "pad_width")
    if pad_width and not all(isinstance(p, (int, np.integer)) for pair in pad_width for p in pair):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_func(array, pad_width, mode, **kwargs)
    try:
        unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    except KeyError:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    return _pad(array, pad_width, mode, kwargs.get("constant_values", 0),
                kwargs.get("stat_length"), kwargs.get("end_values", 0),
                kwargs.get("reflect_type", "even"))


@util.jitted_as_in_jax(static_argnums=(1, 2, 4, 5, 6))
def _pad(array: Any, pad_width: Any, mode: str, constant_values: Any, stat_length: Any,
         end_values: Any, reflect_type: str) -> Any:
    """`pad` with a named mode, jitted as JAX jits it (`constant_values` traced)."""
    array = array_creation.asarray(array)
    nd = _ndim(array)
    if nd == 0:
        return array
    if np.any(np.array(pad_width) < 0):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(array, pad_width, array_creation.asarray(constant_values))
    if mode == "wrap":
        return _pad_wrap(array, pad_width)
    if mode in ("symmetric", "reflect"):
        return _pad_symmetric_or_reflect(array, pad_width, mode, reflect_type)
    if mode == "edge":
        return _pad_edge(array, pad_width)
    if mode == "linear_ramp":
        end_values = _broadcast_to_pairs(end_values, nd, "end_values")
        return _pad_linear_ramp(array, pad_width, end_values)
    if mode == "empty":
        return _pad_empty(array, pad_width)
    stat_funcs = {"maximum": reductions.amax, "minimum": reductions.amin,
                  "mean": reductions.mean, "median": sorting.median}
    if stat_length is not None:
        stat_length = _broadcast_to_pairs(stat_length, nd, "stat_length")
    return _pad_stats(array, pad_width, stat_length, stat_funcs[mode])
