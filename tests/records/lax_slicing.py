"""Op records for the slicing primitives (slice, dynamic_slice, dynamic_update_slice, pad, rev,
gather and the scatters), against loop-based NumPy references written from XLA's operation
semantics (independent of the vectorized implementations)."""
from __future__ import annotations

import numpy as np

from justjax import lax
from tests.harness import BF16, BOOL, F16, F32, I8, I32, U8, OpRecord, rand_default

GDN = lax.GatherDimensionNumbers
SDN = lax.ScatterDimensionNumbers
MODES = lax.GatherScatterMode
DATA = (F32, I32, BOOL, BF16, U8)


def _indices(low: int, high: int):
    """Argument maker for integer index arrays in [low, high] (often out of bounds)."""
    def make(rng: np.random.Generator, shape, dtype) -> np.ndarray:
        return rng.integers(low, high + 1, shape).astype(dtype)
    return make


def _distinct_indices(low: int, high: int):
    """Index vectors (the last axis) that are all different, each entry in [low, high]:
    honest `unique_indices=True` arguments."""
    def make(rng: np.random.Generator, shape, dtype) -> np.ndarray:
        width = high - low + 1
        count, depth = int(np.prod(shape[:-1])), shape[-1]
        codes = rng.permutation(width ** depth)[:count]
        digits = [(codes // width ** k) % width + low for k in range(depth)]
        return np.stack(digits, axis=-1).reshape(shape).astype(dtype)
    return make


def _record(name, fun, reference, shapes, dtypes=DATA, make_args=rand_default, **kwargs):
    return OpRecord(name, fun, reference, shapes, dtypes, make_args, **kwargs)


# -- dynamic_slice / dynamic_update_slice ------------------------------------------------------

def _clamp_start(start, dim: int, size: int) -> int:
    start = int(start)
    start = start + dim if start < 0 else start  # lax.dynamic_slice counts negatives from the end
    return min(max(start, 0), dim - size)


def _dynamic_slice_ref(x, *starts, sizes):
    window = tuple(slice(_clamp_start(s, d, n), _clamp_start(s, d, n) + n)
                   for s, d, n in zip(starts, x.shape, sizes))
    return x[window]


def _dus_ref(x, update, *starts):
    out = x.copy()
    out[tuple(slice(_clamp_start(s, d, n), _clamp_start(s, d, n) + n)
              for s, d, n in zip(starts, x.shape, update.shape))] = update
    return out


# -- pad ---------------------------------------------------------------------------------------

def _pad_ref(x, value, config):
    out = x
    for axis, (lo, hi, interior) in enumerate(config):
        n = out.shape[axis]
        dilated_len = n + max(n - 1, 0) * interior
        shape = list(out.shape)
        shape[axis] = dilated_len
        dilated = np.full(shape, value, x.dtype)
        index = [slice(None)] * out.ndim
        index[axis] = slice(0, dilated_len, interior + 1)
        dilated[tuple(index)] = out
        widths = [(0, 0)] * out.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        padded = np.pad(dilated, widths, constant_values=value)
        crop = [slice(None)] * out.ndim
        crop[axis] = slice(max(-lo, 0), padded.shape[axis] - max(-hi, 0))
        out = padded[tuple(crop)]
    return out


# -- gather and scatter: XLA's semantics, one element at a time -------------------------------

def _gather_ref(operand, indices, *, dnums, slice_sizes, mode=None, fill_value=None):
    batch_shape = indices.shape[:-1]
    window_dims = [d for d in range(operand.ndim) if d not in dnums.collapsed_slice_dims
                   and d not in dnums.operand_batching_dims]
    out_rank = len(dnums.offset_dims) + len(batch_shape)
    batch_axes = [a for a in range(out_rank) if a not in dnums.offset_dims]
    out_shape = [0] * out_rank
    for a, n in zip(batch_axes, batch_shape):
        out_shape[a] = n
    for a, d in zip(dnums.offset_dims, window_dims):
        out_shape[a] = slice_sizes[d]
    fill = mode == MODES.FILL_OR_DROP
    out = np.zeros(out_shape, operand.dtype)
    for out_index in np.ndindex(*out_shape):
        b = tuple(out_index[a] for a in batch_axes)
        start = [0] * operand.ndim
        in_bounds = True
        for k, d in enumerate(dnums.start_index_map):
            s = int(indices[b + (k,)])
            in_bounds &= 0 <= s <= operand.shape[d] - slice_sizes[d]
            start[d] = min(max(s, 0), operand.shape[d] - slice_sizes[d])
        for od, idim in zip(dnums.operand_batching_dims, dnums.start_indices_batching_dims):
            start[od] = b[idim]
        full = list(start)
        for a, d in zip(dnums.offset_dims, window_dims):
            full[d] += out_index[a]
        out[out_index] = fill_value if fill and not in_bounds else operand[tuple(full)]
    return out


def _scatter_ref(operand, indices, updates, *, dnums, combine, mode=None):
    out = operand.copy()
    window_dims = [d for d in range(operand.ndim) if d not in dnums.inserted_window_dims
                   and d not in dnums.operand_batching_dims]
    scatter_axes = [a for a in range(updates.ndim) if a not in dnums.update_window_dims]
    window_size = dict(zip(window_dims, (updates.shape[a] for a in dnums.update_window_dims)))
    for u_index in np.ndindex(*updates.shape):
        b = tuple(u_index[a] for a in scatter_axes)
        start = [0] * operand.ndim
        in_bounds = True
        for k, d in enumerate(dnums.scatter_dims_to_operand_dims):
            s, upper = int(indices[b + (k,)]), operand.shape[d] - window_size.get(d, 1)
            in_bounds &= 0 <= s <= upper
            start[d] = min(max(s, 0), upper) if mode == MODES.CLIP else s
        if not in_bounds and mode != MODES.CLIP:
            continue
        for od, idim in zip(dnums.operand_batching_dims, dnums.scatter_indices_batching_dims):
            start[od] = b[idim]
        for a, d in zip(dnums.update_window_dims, window_dims):
            start[d] += u_index[a]
        target = tuple(start)
        out[target] = combine(out[target], updates[u_index])
    return out


def _set(old, new):
    return new


def _gather_record(name, shapes, dnums, slice_sizes, low, high, mode=None, dtypes=DATA,
                   fill_value=None, **kwargs):
    parsed = MODES.from_any(MODES.PROMISE_IN_BOUNDS if mode is None else mode)

    def reference(x, i):
        fill = {np.dtype(np.float32): np.nan, np.dtype(np.int32): np.iinfo(np.int32).min,
                np.dtype(np.uint8): 255, np.dtype(bool): True}.get(x.dtype, np.nan)
        return _gather_ref(x, i, dnums=dnums, slice_sizes=slice_sizes, mode=parsed,
                           fill_value=fill if fill_value is None else fill_value)

    return _record(name, lambda x, i: lax.gather(x, i, dnums, slice_sizes, mode=mode,
                                                 fill_value=fill_value),
                   reference, shapes, [(d, I32) for d in dtypes],
                   [rand_default, _indices(low, high)], **kwargs)


def _scatter_record(name, op, combine, shapes, dnums, low, high, mode=None, dtypes=(F32, I32),
                    unique=False, **kwargs):
    parsed = MODES.from_any(mode)
    make_indices = _distinct_indices(low, high) if unique else _indices(low, high)
    return _record(name, lambda x, i, u: op(x, i, u, dnums, mode=mode, unique_indices=unique),
                   lambda x, i, u: _scatter_ref(x, i, u, dnums=dnums, combine=combine,
                                                mode=parsed),
                   shapes, [(d, I32, d) for d in dtypes],
                   [rand_default, make_indices, rand_default], **kwargs)


# Why some records are not gradient-checked (each has a checked sibling below):
# - a 'promise_in_bounds' gather (the default mode) given out-of-bounds indices breaks its
#   promise: the forward pass clamps, but the gradient (JAX's rule: scatter-add with the same
#   mode) drops those windows, so it differs from finite differences, as in JAX;
_PROMISE_BROKEN = dict(differentiable=False)
# - a 'fill' gather with the default NaN fill has NaN outputs, where finite differences are
#   NaN (the derivative there is 0);
_NAN_FILL = dict(differentiable=False)
# - scatter_mul has an update derivative only with unique_indices=True (JAX raises
#   NotImplementedError otherwise; tests/test_ad_slicing.py checks that and the operand
#   derivative).
_MUL_NOT_UNIQUE = dict(differentiable=False)


_TAKE_ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_POINTS = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
_WINDOWS = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(1, 0))
_BATCHED = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
               operand_batching_dims=(0,), start_indices_batching_dims=(0,))
_MIDDLE = GDN(offset_dims=(0, 2), collapsed_slice_dims=(1,), start_index_map=(1,))
_ROWS_BACK = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
                 scatter_dims_to_operand_dims=(0,))
_POINTS_BACK = SDN(update_window_dims=(), inserted_window_dims=(0, 1),
                   scatter_dims_to_operand_dims=(0, 1))
_WINDOWS_BACK = SDN(update_window_dims=(1, 2), inserted_window_dims=(),
                    scatter_dims_to_operand_dims=(1, 0))
_BATCHED_BACK = SDN(update_window_dims=(), inserted_window_dims=(1,),
                    scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                    scatter_indices_batching_dims=(0,))

_SCATTERS = [("scatter", lax.scatter, _set), ("scatter_add", lax.scatter_add, np.add),
             ("scatter_sub", lax.scatter_sub, np.subtract),
             ("scatter_mul", lax.scatter_mul, np.multiply),
             ("scatter_min", lax.scatter_min, np.minimum),
             ("scatter_max", lax.scatter_max, np.maximum)]


RECORDS = [
    _record("slice", lambda x: lax.slice(x, (1, 0), (3, 2)), lambda x: x[1:3, 0:2],
            [[(3, 4)], [(4, 2)]]),
    _record("slice_strided", lambda x: lax.slice(x, (0, 1), (4, 4), (2, 2)),
            lambda x: x[0:4:2, 1:4:2], [[(4, 4)], [(5, 6)]]),
    _record("slice_empty", lambda x: lax.slice(x, (2,), (2,)), lambda x: x[2:2], [[(4,)]]),
    _record("slice_in_dim", lambda x: lax.slice_in_dim(x, -3, None, 2, axis=1),
            lambda x: x[:, -3::2], [[(2, 5)]]),
    _record("index_in_dim", lambda x: lax.index_in_dim(x, -1, 0, keepdims=False),
            lambda x: x[-1], [[(3, 2)], [(2,)]]),
    _record("rev", lambda x: lax.rev(x, (0, 2)), lambda x: x[::-1, :, ::-1], [[(2, 3, 4)]]),
    _record("rev_none", lambda x: lax.rev(x, ()), lambda x: x, [[(3,)]]),
    _record("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
            lambda x, i, j: _dynamic_slice_ref(x, i, j, sizes=(2, 3)),
            [[(4, 5), (), ()]], [(d, I32, I32) for d in DATA],
            [rand_default, _indices(-7, 7), _indices(-7, 7)]),
    _record("dynamic_slice_int8_index", lambda x, i: lax.dynamic_slice(x, (i,), (3,)),
            lambda x, i: _dynamic_slice_ref(x, i, sizes=(3,)), [[(6,), ()]], [(F32, I8)],
            [rand_default, _indices(-9, 9)]),
    _record("dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
            lambda x, i: _dynamic_slice_ref(x, 0, i, sizes=(x.shape[0], 2)),
            [[(3, 5), ()]], [(F32, I32)], [rand_default, _indices(-6, 6)]),
    _record("dynamic_index_in_dim",
            lambda x, i: lax.dynamic_index_in_dim(x, i, axis=0, keepdims=False),
            lambda x, i: _dynamic_slice_ref(x, i, 0, sizes=(1, x.shape[1]))[0],
            [[(4, 3), ()]], [(F32, I32), (BOOL, I32)], [rand_default, _indices(-5, 5)]),
    _record("dynamic_update_slice", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
            _dus_ref, [[(4, 5), (2, 3), (), ()], [(3, 3), (3, 3), (), ()]],
            [(d, d, I32, I32) for d in DATA],
            [rand_default, rand_default, _indices(-6, 6), _indices(-6, 6)]),
    _record("dynamic_update_slice_in_dim",
            lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, axis=0),
            lambda x, u, i: _dus_ref(x, u, i, 0), [[(5, 2), (2, 2), ()]], [(F32, F32, I32)],
            [rand_default, rand_default, _indices(-7, 7)]),
    _record("dynamic_update_index_in_dim",
            lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, axis=1),
            lambda x, u, i: _dus_ref(x, u[:, None], 0, i), [[(3, 4), (3,), ()]],
            [(I32, I32, I32)], [rand_default, rand_default, _indices(-6, 6)]),
    _record("pad", lambda x, v: lax.pad(x, v, [(1, 2, 0), (0, 1, 1)]),
            lambda x, v: _pad_ref(x, v, [(1, 2, 0), (0, 1, 1)]), [[(2, 3), ()]]),
    _record("pad_negative", lambda x, v: lax.pad(x, v, [(-1, -2, 1), (2, -3, 2)]),
            lambda x, v: _pad_ref(x, v, [(-1, -2, 1), (2, -3, 2)]), [[(4, 3), ()]]),
    _record("pad_empty_operand", lambda x, v: lax.pad(x, v, [(1, 1, 3)]),
            lambda x, v: _pad_ref(x, v, [(1, 1, 3)]), [[(0,), ()]], (F32,)),
    _record("pad_scalar", lambda x, v: lax.pad(x, v, []), lambda x, v: x, [[(), ()]], (F16,)),

    _gather_record("gather_rows", [[(5, 3), (4, 1)]], _TAKE_ROWS, (1, 3), 0, 4),
    _gather_record("gather_rows_clamped", [[(5, 3), (2, 3, 1)]], _TAKE_ROWS, (1, 3), -8, 8,
                   **_PROMISE_BROKEN),
    _gather_record("gather_rows_clip", [[(5, 3), (4, 1)]], _TAKE_ROWS, (1, 3), -8, 8,
                   mode="clip", dtypes=(F32,)),
    _gather_record("gather_rows_fill", [[(5, 3), (6, 1)]], _TAKE_ROWS, (1, 3), -3, 7,
                   mode="fill", **_NAN_FILL),
    _gather_record("gather_rows_fill_value", [[(5, 3), (6, 1)]], _TAKE_ROWS, (1, 3), -3, 7,
                   mode="fill", fill_value=-1.5, dtypes=(F32,)),
    _gather_record("gather_points", [[(4, 3), (5, 2)]], _POINTS, (1, 1), -1, 4,
                   **_PROMISE_BROKEN),
    _gather_record("gather_points_in_bounds", [[(4, 3), (5, 2)]], _POINTS, (1, 1), 0, 2,
                   dtypes=(F32,)),
    _gather_record("gather_points_clip", [[(4, 3), (5, 2)]], _POINTS, (1, 1), -1, 4,
                   mode="clip", dtypes=(F32,)),
    _gather_record("gather_windows", [[(5, 6), (3, 2)]], _WINDOWS, (2, 3), -2, 6,
                   **_PROMISE_BROKEN),
    _gather_record("gather_windows_in_bounds", [[(5, 6), (3, 2)]], _WINDOWS, (2, 3), 0, 3,
                   dtypes=(F32,)),
    _gather_record("gather_windows_clip", [[(5, 6), (3, 2)]], _WINDOWS, (2, 3), -2, 6,
                   mode="clip", dtypes=(F32,)),
    _gather_record("gather_windows_fill", [[(5, 6), (3, 2)]], _WINDOWS, (2, 3), -2, 6,
                   mode="fill", dtypes=(F32, I32, U8, BOOL), **_NAN_FILL),
    _gather_record("gather_windows_fill_value", [[(5, 6), (3, 2)]], _WINDOWS, (2, 3), -2, 6,
                   mode="fill", fill_value=0.25, dtypes=(F32,)),
    _gather_record("gather_batched", [[(3, 4), (3, 1)]], _BATCHED, (1, 1), -1, 4,
                   **_PROMISE_BROKEN),
    _gather_record("gather_batched_clip", [[(3, 4), (3, 1)]], _BATCHED, (1, 1), -1, 4,
                   mode="clip", dtypes=(F32,)),
    _gather_record("gather_middle_axis", [[(2, 5, 3), (4, 1)]], _MIDDLE, (2, 1, 3), 0, 4),
    _gather_record("gather_empty_indices", [[(4, 3), (0, 1)]], _TAKE_ROWS, (1, 3), 0, 3,
                   dtypes=(F32,)),
    _gather_record("gather_no_index_vector", [[(4, 3), (2, 0)]],
                   GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=()),
                   (2, 3), 0, 0, dtypes=(F32,)),
    *[_scatter_record(f"{name}_rows", op, combine, [[(5, 3), (4, 1), (4, 3)]], _ROWS_BACK,
                      -1, 5, **(_MUL_NOT_UNIQUE if name == "scatter_mul" else {}))
      for name, op, combine in _SCATTERS],
    *[_scatter_record(f"{name}_points", op, combine, [[(4, 3), (6, 2), (6,)]], _POINTS_BACK,
                      0, 3, **(_MUL_NOT_UNIQUE if name == "scatter_mul" else {}))
      for name, op, combine in _SCATTERS],
    *[_scatter_record(f"{name}_windows_clip", op, combine, [[(5, 6), (3, 2), (3, 2, 3)]],
                      _WINDOWS_BACK, -2, 6, mode="clip",
                      **(_MUL_NOT_UNIQUE if name == "scatter_mul" else {}))
      for name, op, combine in _SCATTERS],
    *[_scatter_record(f"{name}_batched", op, combine, [[(3, 4), (3, 1), (3,)]],
                      _BATCHED_BACK, -1, 4, **(_MUL_NOT_UNIQUE if name == "scatter_mul" else {}))
      for name, op, combine in _SCATTERS],
    # unique_indices=True (distinct index vectors, some out of bounds and dropped): the
    # linear scatter jvp and its transpose, and scatter_mul's update derivative.
    *[_scatter_record(f"{name}_rows_unique", op, combine, [[(5, 3), (4, 1), (4, 3)]],
                      _ROWS_BACK, -1, 5, unique=True, dtypes=(F32,))
      for name, op, combine in _SCATTERS],
    *[_scatter_record(f"{name}_points_unique", op, combine, [[(4, 3), (6, 2), (6,)]],
                      _POINTS_BACK, 0, 3, unique=True, dtypes=(F32,))
      for name, op, combine in _SCATTERS],
    *[_scatter_record(f"{name}_batched_unique", op, combine, [[(3, 4), (3, 1), (3,)]],
                      _BATCHED_BACK, -1, 4, unique=True, dtypes=(F32,))
      for name, op, combine in _SCATTERS],
    _scatter_record("scatter_add_windows_drop", lax.scatter_add, np.add,
                    [[(5, 6), (4, 2), (4, 2, 3)]], _WINDOWS_BACK, -2, 6, mode="drop",
                    dtypes=(F32, I32, F16)),
    _scatter_record("scatter_bool", lax.scatter, _set, [[(5, 3), (4, 1), (4, 3)]], _ROWS_BACK,
                    0, 4, dtypes=(BOOL,)),
    _scatter_record("scatter_max_uint", lax.scatter_max, np.maximum, [[(6,), (5, 1), (5,)]],
                    SDN((), (0,), (0,)), -1, 6, dtypes=(U8,)),
]
