"""jax.numpy indexing: `x[idx]` and `x.at[idx].set/add/...` (`take`, `take_along_axis` and
`put_along_axis` are in `take.py`).

`x[idx]` is lowered as JAX lowers it: static `slice` (+ `rev`, `squeeze`, `broadcast_in_dim`)
when every index is a static int, slice, None or Ellipsis; else `dynamic_slice` when the
only dynamic indices are scalars; else one `gather`. Indexed updates are one `scatter`.
Out-of-bounds static ints are clamped like dynamic ones (JAX's default, no
`jax_check_static_indices`); gathers clamp (PROMISE_IN_BOUNDS) unless `mode` says otherwise,
and updates drop out-of-bounds windows (FILL_OR_DROP). Boolean masks must be concrete.
"""
from __future__ import annotations

import enum
import operator
import warnings
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import exceeds, is_symbolic_dim
from justjax._src.lax import elementwise as lax
from justjax._src.lax import gather_scatter, slicing
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import sharding_constraint, sharding_rules, structural
from justjax._src.numpy import util
from justjax._src.pytrees import tree_util
from justjax._src.runtime.array import Array, from_numpy
from justjax._src.runtime.sharding import NamedSharding

__all__ = ["IndexUpdateHelper", "rewriting_take"]

GatherScatterMode = gather_scatter.GatherScatterMode


# -- parsing -----------------------------------------------------------------------------------

class _Kind(enum.Enum):
    NONE = "none"
    SLICE = "slice"
    ELLIPSIS = "ellipsis"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ARRAY = "array"


class _Index(NamedTuple):
    """One entry of an index tuple and the array axes it consumes."""

    index: Any
    kind: _Kind
    axes: tuple[int, ...]


def _is_array(x: Any) -> bool:
    return isinstance(x, (core.Tracer, Array, np.ndarray))


def _is_integer_index(idx: Any) -> bool:
    return isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_))


def _is_scalar(x: Any) -> bool:
    """A concrete scalar (tracers are Arrays too, but not concrete)."""
    return np.isscalar(x) or ((isinstance(x, np.ndarray) or type(x) is Array)
                              and np.ndim(x) == 0)


def _is_boolean_index(idx: Any) -> bool:
    try:
        aval = core.get_aval(idx)
    except TypeError:
        aval = None
    if aval is not None and aval.dtype == dtypes.bool_:
        return True
    return (isinstance(idx, list) and bool(idx)
            and all(_is_scalar(e) and np.asarray(e).dtype == np.bool_ for e in idx))


def _leaves(seq: Any) -> list[Any]:
    if isinstance(seq, (list, tuple)):
        return [leaf for item in seq for leaf in _leaves(item)]
    return [seq]


def _sequence_dtype(seq: Sequence[Any]) -> np.dtype:
    leaves = _leaves(seq)
    if any(isinstance(leaf, (core.Tracer, Array)) for leaf in leaves):
        return dtypes.result_type(*leaves)
    return dtypes.canonicalize_dtype(np.asarray(seq).dtype)


def _kind_of(idx: Any) -> _Kind:
    if idx is None:
        return _Kind.NONE
    if idx is Ellipsis:
        return _Kind.ELLIPSIS
    if isinstance(idx, slice):
        return _Kind.SLICE
    if _is_integer_index(idx):
        return _Kind.INTEGER
    if _is_boolean_index(idx):
        return _Kind.BOOLEAN
    if _is_array(idx):
        if dtypes.is_int(idx.dtype):
            return _Kind.ARRAY
        raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                        f"{np.dtype(idx.dtype)}")
    if isinstance(idx, str):
        raise TypeError(f"JAX does not support string indexing; got {idx=}")
    if isinstance(idx, Sequence):
        if not idx:
            return _Kind.ARRAY
        dtype = _sequence_dtype(idx)
        if dtype == np.bool_:
            return _Kind.BOOLEAN
        if dtypes.is_int(dtype):
            return _Kind.ARRAY
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{dtype}")
    if isinstance(idx, (float, complex, np.generic)):
        raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                        f"{np.dtype(type(idx))}")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                     f"integer or boolean arrays are valid indices. Got {idx}")


def _should_unpack_list_index(x: Any) -> bool:
    return ((isinstance(x, (np.ndarray, Array)) and np.ndim(x) != 0)
            or isinstance(x, (Sequence, slice)) or x is Ellipsis or x is None)


def _as_index_tuple(idx: Any) -> tuple:
    """The index as a tuple; JAX rejects non-tuple sequences such as `x[[0, 1]]`."""
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, Sequence) and not isinstance(idx, (Array, np.ndarray, str)):
        wrap = "tuple" if any(_should_unpack_list_index(i) for i in idx) else "array"
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        f"allowed; use `arr[{wrap}(seq)]` instead of `arr[seq]`. See "
                        "https://github.com/jax-ml/jax/issues/4564 for more information.")
    return (idx,)


def _parse(idx: Any, shape: tuple[int, ...]) -> list[_Index]:
    """Classifies each index and assigns the axes it consumes (an Ellipsis takes the rest)."""
    indices = _as_index_tuple(idx)
    kinds = [_kind_of(i) for i in indices]
    consumed = []
    for i, kind in zip(indices, kinds, strict=True):
        if kind in (_Kind.NONE, _Kind.ELLIPSIS):
            consumed.append(0)
        elif kind == _Kind.BOOLEAN:
            consumed.append(np.ndim(i) if not isinstance(i, core.Tracer) else i.ndim)
        else:
            consumed.append(1)
    ellipses = [n for n, kind in enumerate(kinds) if kind == _Kind.ELLIPSIS]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    total = sum(consumed)
    if total > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total} "
                         "were indexed")
    if ellipses:
        consumed[ellipses[0]] = len(shape) - total
    parsed, axis = [], 0
    for i, kind, n in zip(indices, kinds, consumed, strict=True):
        parsed.append(_Index(i, kind, tuple(range(axis, axis + n))))
        axis += n
    return parsed


def _expand_ellipsis(parsed: list[_Index], ndim: int) -> list[_Index]:
    """Ellipsis and the implicit trailing axes as explicit full slices."""
    expanded = []
    for entry in parsed:
        if entry.kind == _Kind.ELLIPSIS:
            expanded.extend(_Index(slice(None), _Kind.SLICE, (a,)) for a in entry.axes)
        else:
            expanded.append(entry)
    used = sum(len(e.axes) for e in parsed)
    expanded.extend(_Index(slice(None), _Kind.SLICE, (a,)) for a in range(used, ndim))
    return expanded


def _normalized_static_int(i: Any, size: int, normalize: bool) -> int:
    i = operator.index(i)
    return i + size if normalize and i < 0 else i


def _validate_static_indices(parsed: list[_Index], shape: tuple[int, ...],
                             normalize: bool) -> None:
    for entry in parsed:
        if entry.kind == _Kind.INTEGER:
            axis, = entry.axes
            i = operator.index(entry.index)
            if not 0 <= _normalized_static_int(i, shape[axis], normalize) < shape[axis]:
                raise IndexError(f"index {i} out of bounds for axis {axis} with size "
                                 f"{shape[axis]} (normalize_indices={normalize})")


def _validate_slices(parsed: list[_Index]) -> None:
    for position, entry in enumerate(parsed):
        if entry.kind == _Kind.SLICE:
            s = entry.index
            if any(isinstance(v, core.Tracer) for v in (s.start, s.stop, s.step)):
                raise IndexError(f"Slice entries must be static integers. Got {s} at position "
                                 f"{position}")


def _check_static_indices() -> bool:
    try:
        return bool(config.read("jax_check_static_indices"))
    except AttributeError:
        return False


# -- index values ------------------------------------------------------------------------------

def _index_asarray(x: Any) -> Any:
    """An index as an Array or tracer (Python ints weakly typed, as `jnp.asarray` does)."""
    if isinstance(x, (core.Tracer, Array)):
        return x
    if isinstance(x, (list, tuple)):
        return _sequence_to_array(x)
    aval = core.get_aval(x)
    return from_numpy(dtypes.coerce_to_array(x, aval.dtype), aval)


def _sequence_to_array(seq: Sequence[Any]) -> Any:
    """A (nested) list of indices as one array, stacking any tracers with lax."""
    if not any(isinstance(leaf, (core.Tracer, Array)) for leaf in _leaves(seq)):
        value = np.asarray(seq) if seq else np.zeros((0,), np.int32)
        aval = core.get_aval(value)
        return from_numpy(value.astype(aval.dtype), aval)
    parts = util.promote_dtypes(*[_index_asarray(item) for item in seq])
    return structural.concatenate([structural.expand_dims(p, (0,)) for p in parts], 0)


def _canonical_numpy(x: Any) -> Any:
    # One canonical-dtype NumPy object per index, so a constant used twice stages once.
    if isinstance(x, np.ndarray):
        dtype = dtypes.canonicalize_dtype(x.dtype)
        return x if x.dtype == dtype else x.astype(dtype)
    return x


def _normalize_array_index(index: Any, size: int) -> Any:
    """`index + size` where `index < 0`; NumPy indices compare on the host, as in JAX."""
    dtype = core.get_aval(index).dtype
    if dtypes.is_unsigned(dtype):
        return index
    aval = core.get_aval(index)
    index = _canonical_numpy(index)
    # A weakly typed scalar index stays weak (JAX adds a Python int to it), so the scatter
    # path converts it; an index array gets a typed constant, as in JAX.
    weak_scalar = aval.weak_type and aval.ndim == 0
    size_value = size if weak_scalar else (
        structural.convert_element_type(size, dtype) if is_symbolic_dim(size)
        else dtypes.coerce_to_array(size, dtype))
    if isinstance(index, np.ndarray):
        negative = index < 0
    else:
        negative = lax.lt(index, np.zeros((), dtype))
    return lax_selection.select(negative, lax.add(index, size_value), index)


def _full_like(x: Any, fill: Any, shape: Sequence[int]) -> Any:
    aval = core.get_aval(x)
    value = structural.convert_element_type(fill, aval.dtype, aval.weak_type)
    return structural.broadcast_in_dim(value, tuple(shape), ())


def _index_dtype(shape: Sequence[int]) -> np.dtype:
    big = any(exceeds(d, np.iinfo(np.int32).max) for d in shape)
    return np.dtype(np.int64) if big and config.read("jax_enable_x64") else np.dtype(np.int32)


# -- x[idx] as static slice or dynamic slice ---------------------------------------------------

class _SliceIndexer(NamedTuple):
    """`arr[idx]` as one (dynamic) slice, then rev, squeeze and expand_dims."""

    starts: list[Any]
    limits_or_sizes: list[int]
    strides: list[int] | None
    rev_axes: list[int]
    squeeze_axes: list[int]
    newaxis_dims: list[int]
    trivial: bool


def _negative_step_window(start: int, stop: int, stride: int, size: int) -> tuple[int, int]:
    """The ascending window a negative-step slice reads (reversed afterwards)."""
    new_start = min(size, stop + 1 + abs(start - stop - 1) % abs(stride))
    return new_start, max(new_start, start + 1)


def _to_static_slice(parsed: list[_Index], shape: tuple[int, ...], mode: Any,
                     normalize: bool) -> _SliceIndexer:
    """Raises TypeError/ValueError/IndexError when `lax.slice` cannot express the index."""
    parsed_mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS
                                             if mode is None else mode)
    if parsed_mode not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
        raise ValueError("static_slice requires mode='promise_in_bounds' or mode='clip'")
    if parsed_mode == GatherScatterMode.PROMISE_IN_BOUNDS:
        _validate_static_indices(parsed, shape, normalize)
    _validate_slices(parsed)
    if any(e.kind in (_Kind.ARRAY, _Kind.BOOLEAN) for e in parsed):
        raise TypeError("static_slice: indices must be static scalars or slices.")
    starts, limits, strides, rev_axes, squeeze_axes, newaxis = [], [], [], [], [], []
    for entry in _expand_ellipsis(parsed, len(shape)):
        if entry.kind == _Kind.NONE:
            newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
            continue
        axis, = entry.axes
        size = shape[axis]
        if entry.kind == _Kind.INTEGER:
            if size == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            start = min(max(_normalized_static_int(entry.index, size, normalize), 0), size - 1)
            starts.append(start)
            limits.append(start + 1)
            strides.append(1)
            squeeze_axes.append(axis)
            continue
        start, stop, stride = entry.index.indices(size)
        if stride < 0:
            start, stop = _negative_step_window(start, stop, stride, size)
            rev_axes.append(axis)
        starts.append(start)
        limits.append(max(start, stop))
        strides.append(abs(stride))
    trivial = all(s == 1 for s in strides) and all(
        (start, limit) == (0, size) for start, limit, size in zip(starts, limits, shape))
    return _SliceIndexer(starts, limits, None if all(s == 1 for s in strides) else strides,
                         rev_axes, squeeze_axes, newaxis, trivial)


def _to_dynamic_slice(parsed: list[_Index], shape: tuple[int, ...], mode: Any
                      ) -> _SliceIndexer:
    """Raises TypeError/ValueError/IndexError when `lax.dynamic_slice` cannot express it."""
    if mode is not None and GatherScatterMode.from_any(mode) not in (
            GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
        raise ValueError("dynamic_slice requires mode='promise_in_bounds' or mode='clip'")
    for entry in parsed:
        if entry.kind == _Kind.SLICE and entry.index.step not in (None, 1, -1):
            raise TypeError("dynamic_slice: only unit steps supported in slice.")
        if entry.kind == _Kind.ARRAY and (isinstance(entry.index, Sequence)
                                          or np.shape(entry.index) != ()):
            raise TypeError("dynamic_slice: only scalar indices allowed.")
        if entry.kind == _Kind.BOOLEAN:
            raise TypeError("dynamic_slice: indices must be scalars or slices.")
    starts, sizes, rev_axes, squeeze_axes, newaxis = [], [], [], [], []
    trivial = True
    for entry in _expand_ellipsis(parsed, len(shape)):
        if entry.kind == _Kind.NONE:
            newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
            continue
        axis, = entry.axes
        size = shape[axis]
        if entry.kind in (_Kind.INTEGER, _Kind.ARRAY):
            trivial = False
            if size == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            starts.append(_index_asarray(entry.index))
            sizes.append(1)
            squeeze_axes.append(axis)
            continue
        trivial = trivial and entry.index == slice(None)
        start, stop, stride = entry.index.indices(size)
        if stride < 0:
            new_start = stop + 1 + abs(start - stop - 1) % abs(stride)
            starts.append(new_start)
            sizes.append(max(0, start + 1 - new_start))
            rev_axes.append(axis)
        else:
            starts.append(start)
            sizes.append(max(0, stop - start))
    if len(starts) > 1:
        # dynamic_slice needs all start indices of one dtype.
        dtype = _index_dtype(shape)
        starts = [structural.convert_element_type(s, dtype) for s in starts]
    return _SliceIndexer(starts, sizes, None, rev_axes, squeeze_axes, newaxis, trivial)


def _finish_slice(result: Any, indexer: _SliceIndexer) -> Any:
    if indexer.rev_axes:
        result = slicing.rev(result, indexer.rev_axes)
    if indexer.squeeze_axes:
        result = structural.squeeze(result, indexer.squeeze_axes)
    if indexer.newaxis_dims:
        result = structural.expand_dims(result, indexer.newaxis_dims)
    return result


# -- x[idx] as a gather ------------------------------------------------------------------------

class _GatherIndexer(NamedTuple):
    """`arr[idx]` as `gather`, then rev and expand_dims (and the inverse for scatters)."""

    slice_shape: tuple[int, ...]
    gather_slice_shape: tuple[int, ...]
    gather_indices: Any
    dnums: gather_scatter.GatherDimensionNumbers
    unique_indices: bool
    indices_are_sorted: bool
    reversed_y_dims: tuple[int, ...]
    newaxis_dims: tuple[int, ...]
    scalar_bool_dims: tuple[int, ...]


def _expand_bool_indices(parsed: list[_Index], shape: tuple[int, ...]) -> list[_Index]:
    """Concrete boolean masks as integer arrays (`nonzero`); scalar bools stay."""
    expanded = []
    for position, entry in enumerate(parsed):
        if entry.kind != _Kind.BOOLEAN:
            expanded.append(entry)
            continue
        if isinstance(entry.index, core.Tracer):
            raise errors.NonConcreteBooleanIndexError(entry.index)
        mask = np.asarray(entry.index)
        if mask.ndim == 0:
            expanded.append(_Index(bool(mask), _Kind.BOOLEAN, ()))
            continue
        expected = [shape[a] for a in entry.axes]
        if not all(s in (0, e) for s, e in zip(mask.shape, expected)):
            raise IndexError("boolean index did not match shape of indexed array in index "
                             f"{position}: got {mask.shape}, expected {expected}")
        for where, axis in zip(np.nonzero(mask), entry.axes, strict=True):
            expanded.append(_Index(_canonical_numpy(where), _Kind.ARRAY, (axis,)))
    return expanded


def _scalar_bools_as_arrays(indices: list[_Index], shape: tuple[int, ...]
                            ) -> tuple[list[_Index], tuple[int, ...], tuple[int, ...]]:
    """A scalar bool indexes a new size-1 axis with `arange(int(b))` (NumPy's rule)."""
    new_shape, bool_dims, result, axis = list(shape), [], [], 0
    for entry in indices:
        if entry.kind == _Kind.BOOLEAN:
            new_shape.insert(axis, 1)
            bool_dims.append(axis)
            result.append(_Index(_canonical_numpy(np.arange(int(entry.index))), _Kind.ARRAY,
                                 (axis,)))
            axis += 1
        elif entry.kind == _Kind.NONE:
            result.append(entry)
        else:
            result.append(_Index(entry.index, entry.kind, (axis,)))
            axis += 1
    return result, tuple(new_shape), tuple(bool_dims)


def _normalize_indices(indices: list[_Index], shape: tuple[int, ...]) -> list[_Index]:
    result = []
    for entry in indices:
        index = entry.index
        if entry.kind == _Kind.INTEGER and not isinstance(index, np.unsignedinteger):
            index = index + shape[entry.axes[0]] if index < 0 else index
        elif entry.kind == _Kind.ARRAY:
            index = _normalize_array_index(index, shape[entry.axes[0]])
        result.append(_Index(index, entry.kind, entry.axes))
    return result


def _slice_gather_indices(s: slice, size: int, dtype: np.dtype
                          ) -> tuple[int, int, int, Any]:
    """(start, step, length, iota indices or None) of a slice inside a gather."""
    if is_symbolic_dim(size):
        start, step, length = _symbolic_slice(s, size)
    else:
        start, stop, step = s.indices(size)
        length = len(range(start, stop, step))
    if step == 1:
        return start, step, length, None
    ramp = lax.mul(np.array(step, dtype), structural.iota(dtype, length))
    return start, step, length, lax.add(structural.convert_element_type(start, dtype), ramp)


def _symbolic_slice(s: slice, size: Any) -> tuple[Any, int, Any]:
    """`slice.indices` and the length for a symbolic `size` (start, stop and step static):
    (start, step, length), the start and length possibly symbolic."""
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")

    def clamp(bound: Any, default: Any, low: Any, high: Any) -> Any:
        if bound is None:
            return default
        bound = operator.index(bound)
        if bound < 0:
            return core.max_dim(bound + size, low)
        return core.min_dim(bound, high)

    if step > 0:
        start = clamp(s.start, 0, 0, size)
        stop = clamp(s.stop, size, 0, size)
        length = core.max_dim(0, (stop - start + step - 1) // step)
    else:
        start = clamp(s.start, size - 1, -1, size - 1)
        stop = clamp(s.stop, -1, -1, size - 1)
        length = core.max_dim(0, (start - stop - step - 1) // -step)
    return start, step, length


def _to_gather(parsed: list[_Index], shape: tuple[int, ...], normalize: bool
               ) -> _GatherIndexer:
    """JAX's `_index_to_gather`; `parsed` has had its boolean masks expanded."""
    _validate_slices(parsed)
    parsed = [_Index(_index_asarray(e.index), e.kind, e.axes)
              if isinstance(e.index, (list, tuple)) else e for e in parsed]
    advanced_positions = [n for n, e in enumerate(parsed) if e.kind in (_Kind.ARRAY,
                                                                         _Kind.INTEGER)]
    contiguous = bool(np.all(np.diff(advanced_positions) == 1))
    indices, shape, scalar_bool_dims = _scalar_bools_as_arrays(
        _expand_ellipsis(parsed, len(shape)), shape)
    if normalize:
        indices = _normalize_indices(indices, shape)
    index_dtype = _index_dtype(shape)

    advanced, adv_positions, adv_axes = [], [], []
    if any(e.kind == _Kind.ARRAY and np.ndim(e.index) > 0 for e in indices):
        non_none = [(n, e) for n, e in enumerate(indices) if e.kind != _Kind.NONE]
        for axis, (n, e) in enumerate(non_none):
            if e.kind in (_Kind.ARRAY, _Kind.INTEGER):
                advanced.append(_index_asarray(e.index))
                adv_positions.append(n)
                adv_axes.append(axis)

    x_axis = y_axis = collapsed_y_axis = 0
    offset_dims, collapsed, start_index_map = [], [], []
    gather_indices: list[tuple[Any, int]] = []
    gather_indices_shape: list[int] = []
    slice_shape, newaxis_dims, reversed_dims, gather_slice_shape = [], [], [], []
    for n, entry in enumerate(indices):
        if advanced and n == (adv_positions[0] if contiguous else 0):
            arrays = util.broadcast_arrays(*advanced)
            adv_shape = list(core.get_aval(arrays[0]).shape)
            start_dim = len(gather_indices_shape)
            gather_indices.extend((structural.convert_element_type(a, index_dtype), start_dim)
                                  for a in arrays)
            gather_indices_shape += adv_shape
            start_index_map.extend(adv_axes)
            collapsed.extend(adv_axes)
            slice_shape.extend(adv_shape)
            y_axis += len(adv_shape)
            collapsed_y_axis += len(adv_shape)
        if n in adv_positions:
            x_axis += 1
            gather_slice_shape.append(1)
            continue
        if entry.kind in (_Kind.INTEGER, _Kind.ARRAY):  # a scalar index
            if shape[x_axis] == 0:
                raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
            gather_indices.append((structural.convert_element_type(entry.index, index_dtype),
                                   len(gather_indices_shape)))
            collapsed.append(x_axis)
            gather_slice_shape.append(1)
            start_index_map.append(x_axis)
            x_axis += 1
        elif entry.kind == _Kind.NONE:
            slice_shape.append(1)
            newaxis_dims.append(y_axis)
            y_axis += 1
        else:
            start, step, length, ramp = _slice_gather_indices(entry.index, shape[x_axis],
                                                              index_dtype)
            slice_shape.append(length)
            if ramp is None:
                if length != shape[x_axis]:
                    gather_indices.append((structural.convert_element_type(start, index_dtype),
                                           len(gather_indices_shape)))
                    start_index_map.append(x_axis)
                gather_slice_shape.append(length)
                offset_dims.append(collapsed_y_axis)
            else:
                if step < 0:
                    reversed_dims.append(collapsed_y_axis)
                    ramp = slicing.rev(ramp, (0,))
                gather_slice_shape.append(1)
                gather_indices.append((ramp, len(gather_indices_shape)))
                start_index_map.append(x_axis)
                gather_indices_shape.append(length)
                collapsed.append(x_axis)
            collapsed_y_axis += 1
            y_axis += 1
            x_axis += 1

    if not gather_indices:
        index_array: Any = np.zeros((0,), index_dtype)
    elif len(gather_indices) == 1:
        g, _ = gather_indices[0]
        index_array = structural.expand_dims(g, (core.get_aval(g).ndim,))
    else:
        full_shape = (*gather_indices_shape, 1)
        index_array = structural.concatenate(
            [structural.broadcast_in_dim(g, full_shape,
                                         tuple(range(i, i + core.get_aval(g).ndim)))
             for g, i in gather_indices], len(gather_indices_shape))
    dnums = gather_scatter.GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                           collapsed_slice_dims=tuple(sorted(collapsed)),
                                           start_index_map=tuple(start_index_map))
    return _GatherIndexer(tuple(slice_shape), tuple(gather_slice_shape), index_array, dnums,
                          not advanced, not advanced, tuple(reversed_dims),
                          tuple(newaxis_dims), scalar_bool_dims)


def _gather(arr: Any, indexer: _GatherIndexer, *, indices_are_sorted: bool,
            unique_indices: bool, mode: Any, fill_value: Any) -> Any:
    if fill_value is not None:
        core.concrete_or_error(lambda v: v, fill_value, "fill_value argument to indexed get()")
        if np.ndim(fill_value) != 0:
            raise ValueError("fill_value argument to indexed get() must be a scalar")
        if isinstance(fill_value, np.ndarray):
            fill_value = fill_value.item()
    y = arr
    if indexer.scalar_bool_dims:
        y = structural.expand_dims(y, indexer.scalar_bool_dims)
    if 0 in indexer.slice_shape:
        return _full_like(y, 0, indexer.slice_shape)
    if 0 not in np.shape(indexer.gather_indices):
        y = gather_scatter.gather(y, indexer.gather_indices, indexer.dnums,
                           indexer.gather_slice_shape,
                           unique_indices=unique_indices or indexer.unique_indices,
                           indices_are_sorted=indices_are_sorted or indexer.indices_are_sorted,
                           mode=mode, fill_value=fill_value)
    if indexer.reversed_y_dims:
        y = slicing.rev(y, indexer.reversed_y_dims)
    return structural.expand_dims(y, indexer.newaxis_dims)


def rewriting_take(arr: Any, idx: Any, *, indices_are_sorted: bool = False,
                   unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
                   fill_value: Any = None, normalize_indices: bool = True) -> Any:
    """`arr[idx]` with NumPy's indexing rules, lowered to slice, dynamic_slice or gather.

    Args:
      mode: out-of-bounds handling of array indices ('promise_in_bounds' by default, which
        clamps; 'clip'; 'fill' to return `fill_value`).
      normalize_indices: whether negative indices count from the end.
    """
    shape = core.get_aval(arr).shape
    parsed = _parse(idx, shape)
    if _check_static_indices() and (mode is None or GatherScatterMode.from_any(mode)
                                    == GatherScatterMode.PROMISE_IN_BOUNDS):
        _validate_static_indices(parsed, shape, normalize_indices)
    try:
        static = _to_static_slice(parsed, shape, mode, normalize_indices)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        result = arr if static.trivial else slicing.slice(arr, static.starts,
                                                          static.limits_or_sizes,
                                                          static.strides)
        return _finish_slice(result, static)
    try:
        dynamic = _to_dynamic_slice(parsed, shape, mode)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        result = arr if dynamic.trivial else slicing.dynamic_slice(
            arr, dynamic.starts, dynamic.limits_or_sizes,
            allow_negative_indices=normalize_indices)
        return _finish_slice(result, dynamic)
    indexer = _to_gather(_expand_bool_indices(parsed, shape), shape, normalize_indices)
    return _gather(arr, indexer, indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices, mode=mode, fill_value=fill_value)


# -- indexed updates: x.at[idx] ----------------------------------------------------------------

def _update_value(x: Any, y: Any) -> Any:
    aval = core.get_aval(x)
    if (isinstance(y, int) and dtypes.is_int(aval.dtype)
            and dtypes.iinfo(aval.dtype).min <= y <= dtypes.iinfo(aval.dtype).max):
        return from_numpy(np.asarray(y, aval.dtype), aval.update(shape=(), weak_type=False))
    return _index_asarray(y)


def _warn_unsafe_cast(x: Any, y: Any) -> None:
    x_dtype, y_dtype = core.get_aval(x).dtype, core.get_aval(y).dtype
    if y_dtype != x_dtype and dtypes.result_type(y, x_dtype) != x_dtype:
        warnings.warn(
            "scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={y_dtype} to dtype={x_dtype} with jax_numpy_dtype_promotion="
            f"{config.read('jax_numpy_dtype_promotion')}. In future JAX releases this will "
            "result in an error.", FutureWarning, stacklevel=4)


def _typed_as_slice(y: Any, x: Any, indexer: _GatherIndexer) -> Any:
    """`y`, of no sharding, with the type of the slice of `x` it updates (JAX's `slice_sharding`),
    so that a scatter into an array split over Explicit mesh axes resolves."""
    x_aval = core.get_aval(x)
    if x_aval._sharding is None or core.get_aval(y)._sharding is not None:
        return y
    try:
        window = gather_scatter.gather_p.abstract_eval(
            x_aval, core.get_aval(indexer.gather_indices), dimension_numbers=indexer.dnums,
            slice_sizes=indexer.gather_slice_shape, unique_indices=False,
            indices_are_sorted=False, mode=gather_scatter.GatherScatterMode.CLIP,
            fill_value=None)
    except core.ShardingTypeError:
        return y
    if window._sharding is None or window.shape != core.get_aval(y).shape:
        return y
    target = window._sharding
    if type(x) is Array and isinstance(x.sharding, NamedSharding):
        target = target.update(mesh=x.sharding.mesh)  # an eager update: x's devices
    return sharding_constraint.reshard(y, target)


def _scatter_update(x: Any, idx: Any, y: Any, scatter_op: Callable, *,
                    indices_are_sorted: bool, unique_indices: bool, mode: Any,
                    normalize_indices: bool = True) -> Any:
    """`x[idx] op= y` without mutation: one scatter of the broadcast `y`."""
    x = util.asarray_lite(x)
    y = _update_value(x, y)
    aval = core.get_aval(x)
    _warn_unsafe_cast(x, y)
    parsed = _expand_bool_indices(_parse(idx, aval.shape), aval.shape)
    indexer = _to_gather(parsed, aval.shape, normalize_indices)
    if 0 in indexer.slice_shape:
        return x
    x, y = util.promote_dtypes(x, y)
    y = util.broadcast_to(y, indexer.slice_shape)
    y = structural.squeeze(y, indexer.newaxis_dims)
    y = _typed_as_slice(y, x, indexer)
    if indexer.reversed_y_dims:
        y = slicing.rev(y, indexer.reversed_y_dims)
    if indexer.scalar_bool_dims:
        x = structural.expand_dims(x, indexer.scalar_bool_dims)
    dnums = gather_scatter.ScatterDimensionNumbers(
        update_window_dims=indexer.dnums.offset_dims,
        inserted_window_dims=indexer.dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=indexer.dnums.start_index_map,
        operand_batching_dims=indexer.dnums.operand_batching_dims,
        scatter_indices_batching_dims=indexer.dnums.start_indices_batching_dims)
    out = scatter_op(x, indexer.gather_indices, y, dnums,
                     indices_are_sorted=indexer.indices_are_sorted or indices_are_sorted,
                     unique_indices=indexer.unique_indices or unique_indices, mode=mode)
    if indexer.scalar_bool_dims:
        out = structural.squeeze(out, indexer.scalar_bool_dims)
    return structural.convert_element_type(out, aval.dtype, aval.weak_type)


class _IndexUpdateHelper:
    """The `x.at` property: `x.at[idx].set(y)` is the pure form of `x[idx] = y`.

    Methods of `x.at[idx]`: `get`, `set`, `add`, `subtract`, `multiply` (`mul`), `divide`,
    `power`, `min`, `max`, `apply`. Repeated indices all apply (unlike NumPy's in-place ops);
    for `set` the last update wins. Keyword arguments: `indices_are_sorted`,
    `unique_indices`, `mode` ('promise_in_bounds', 'clip', 'drop'/'fill'; updates drop
    out-of-bounds indices by default and `get` clamps), `fill_value` (`get` only) and
    `wrap_negative_indices`.
    """

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


IndexUpdateHelper = _IndexUpdateHelper


def _laid_out(fun: Callable, out_sharding: Any, array: Any, index: Any, *values: Any) -> Any:
    """`fun(array, index, *values)`, its result split as `out_sharding` says over the
    Explicit mesh axes it names, which `fun` sees as Auto (JAX's way to index where the
    operands' types leave the result's ambiguous): the arrays among `index` too."""
    if out_sharding is None:
        return fun(array, index, *values)
    sharding = sharding_rules.user_out_sharding(out_sharding)
    leaves, tree = tree_util.tree_flatten(index, is_leaf=lambda x: x is None)
    dynamic = [k for k, leaf in enumerate(leaves)
               if isinstance(leaf, (core.Tracer, Array, np.ndarray))]

    def call(array: Any, arrays: list, *values: Any) -> Any:
        full = list(leaves)
        for k, leaf in zip(dynamic, arrays, strict=True):
            full[k] = leaf
        return fun(array, tree_util.tree_unflatten(tree, full), *values)

    return sharding_constraint.auto_axes(call, axes=sharding.mesh.explicit_axes,
                                         out_sharding=sharding)(
        array, [leaves[k] for k in dynamic], *values)


class _IndexUpdateRef:
    """`x.at[idx]`: the indexed update operations for one index."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _update(self, values: Any, op: Callable, indices_are_sorted: bool,
                unique_indices: bool, mode: Any, wrap_negative_indices: bool,
                array: Any = None, out_sharding: Any = None) -> Any:
        def update(target: Any, index: Any, values: Any) -> Any:
            return _scatter_update(target, index, values, op,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode,
                                   normalize_indices=wrap_negative_indices)
        return _laid_out(update, out_sharding, self.array if array is None else array,
                         self.index, values)

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | GatherScatterMode | None = None, fill_value: Any = None,
            wrap_negative_indices: bool = True,
            out_sharding: Any = None) -> Any:
        """`x[idx]`, with gather options (`mode='fill'` returns `fill_value` out of bounds);
        `out_sharding` splits the result over Explicit mesh axes where the operands' types
        leave it ambiguous (JAX's: the gather runs with those axes Auto)."""
        def take(array: Any, index: Any) -> Any:
            return rewriting_take(array, index, indices_are_sorted=indices_are_sorted,
                                  unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                                  normalize_indices=wrap_negative_indices)
        return _laid_out(take, out_sharding, self.array, self.index)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
            wrap_negative_indices: bool = True,
            out_sharding: Any = None) -> Any:
        """Pure `x[idx] = values`."""
        return self._update(values, gather_scatter.scatter, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding=out_sharding)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
              wrap_negative_indices: bool = True) -> Any:
        """Pure `func.at(x, idx)`: `func` applied at the indices, once per repetition."""
        def scatter_apply(x: Any, indices: Any, y: Any, dims: Any, **kwargs: Any) -> Any:
            return gather_scatter.scatter_apply(x, indices, func, dims,
                                         update_shape=core.get_aval(y).shape, **kwargs)
        zero = np.zeros((), core.get_aval(self.array).dtype)
        return self._update(zero, scatter_apply, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
            wrap_negative_indices: bool = True,
            out_sharding: Any = None) -> Any:
        """Pure `x[idx] += values` (repeated indices accumulate)."""
        return self._update(values, gather_scatter.scatter_add, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding=out_sharding)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
                 wrap_negative_indices: bool = True,
                 out_sharding: Any = None) -> Any:
        """Pure `x[idx] -= values`."""
        return self._update(values, gather_scatter.scatter_sub, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding=out_sharding)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
                 wrap_negative_indices: bool = True,
                 out_sharding: Any = None) -> Any:
        """Pure `x[idx] *= values`."""
        return self._update(values, gather_scatter.scatter_mul, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding=out_sharding)

    mul = multiply

    def _scaled_ones(self, values: Any, indices_are_sorted: bool, unique_indices: bool,
                     mode: Any, wrap_negative_indices: bool) -> Any:
        ones = _full_like(self.array, 1, core.get_aval(self.array).shape)
        return self._update(values, gather_scatter.scatter_mul, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, array=ones)

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
               wrap_negative_indices: bool = True,
               out_sharding: Any = None) -> Any:
        """Pure `x[idx] /= values` (`x / scatter-mul(ones, idx, values)`, so integer `x`
        gives a float result, as in JAX)."""
        from justjax._src.numpy import ufuncs  # ufuncs imports the array methods lazily too
        def divide(x: Any, index: Any, v: Any) -> Any:
            scaled = _IndexUpdateRef(x, index)._scaled_ones(
                v, indices_are_sorted, unique_indices, mode, wrap_negative_indices)
            return ufuncs.divide(x, scaled)
        return _laid_out(divide, out_sharding, self.array, self.index, values)

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
              wrap_negative_indices: bool = True,
              out_sharding: Any = None) -> Any:
        """Pure `x[idx] **= values` (`x ** scatter-mul(ones, idx, values)`)."""
        from justjax._src.numpy import ufuncs
        def power(x: Any, index: Any, v: Any) -> Any:
            scaled = _IndexUpdateRef(x, index)._scaled_ones(
                v, indices_are_sorted, unique_indices, mode, wrap_negative_indices)
            return ufuncs.power(x, scaled)
        return _laid_out(power, out_sharding, self.array, self.index, values)

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
            wrap_negative_indices: bool = True,
            out_sharding: Any = None) -> Any:
        """Pure `x[idx] = minimum(x[idx], values)`."""
        return self._update(values, gather_scatter.scatter_min, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding=out_sharding)

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
            wrap_negative_indices: bool = True,
            out_sharding: Any = None) -> Any:
        """Pure `x[idx] = maximum(x[idx], values)`."""
        return self._update(values, gather_scatter.scatter_max, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding=out_sharding)
