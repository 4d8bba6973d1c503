"""Op records for jax.numpy's shape and manipulation functions (`_src/numpy/shape_ops.py`,
`dtype_ops.py`, `joining.py`, `rearranging.py`, `padding.py`, `selection.py`, `comparisons.py`,
`diagonals.py`, `index_arithmetic.py`, `numeric.py`), checked against NumPy."""
from __future__ import annotations

import numpy as np

import justjax.numpy as jnp
from tests.harness import (BF16, BOOL, C64, F16, F32, I8, I32, U8, OpRecord, rand_default,
                           rand_small_int)

MOVE = (F32, BF16, I32, BOOL)     # pure data movement: any dtype
NUM = (F32, I32)


def _same(*dtypes: np.dtype) -> np.dtype:
    return dtypes[0]


def _bool(*dtypes: np.dtype) -> np.dtype:
    return np.dtype(bool)


def _int(*dtypes: np.dtype) -> np.dtype:
    return np.dtype(np.int32)


def _promoted(*dtypes: np.dtype) -> np.dtype:
    return jnp.result_type(*dtypes)


def _inexact(*dtypes: np.dtype) -> np.dtype:
    dtype = jnp.result_type(*dtypes)
    return dtype if dtype.kind in "fc" or dtype == BF16 else np.dtype(np.float32)


def rec(name, fun, reference, shapes, dtypes=MOVE, make_args=rand_default, **kwargs) -> OpRecord:
    kwargs.setdefault("expected_dtype", _same)
    return OpRecord(name, fun, reference, shapes, dtypes, make_args, **kwargs)


def _np_nonzero_padded(x: np.ndarray, size: int, fill_value: int = 0) -> tuple:
    out = []
    for idx in np.nonzero(x):
        padded = np.full(size, fill_value, dtype=np.int32)
        n = min(size, len(idx))
        padded[:n] = idx[:n]
        out.append(padded)
    return tuple(out)


def _np_compress_sized(cond: np.ndarray, x: np.ndarray, axis: int, size: int) -> np.ndarray:
    moved = np.moveaxis(x, axis, 0)
    picked = moved[cond.astype(bool)[:moved.shape[0]]]
    fill = np.zeros((size - picked.shape[0],) + moved.shape[1:], x.dtype)
    return np.moveaxis(np.concatenate([picked, fill])[:size], 0, axis)


def _np_gradient(f: np.ndarray, *spacing: np.ndarray) -> np.ndarray:
    return np.gradient(f.astype(np.float64), *spacing)


def _np_trapezoid(y: np.ndarray, x: np.ndarray | None = None, axis: int = -1) -> np.ndarray:
    return np.trapezoid(y.astype(np.float64), x, axis=axis)


def _sorted_unique(rng, shape, dtype):
    return np.sort(rng.choice(np.arange(-20, 20), size=shape, replace=False)).astype(dtype)


RESHAPES = [
    rec("reshape", lambda x, shape: jnp.reshape(x, shape), lambda x, shape: np.reshape(x, shape),
        [[(2, 3)]], static={"shape": (3, -1)}),
    rec("reshape_F", lambda x: jnp.reshape(x, (4, 6), order="F"),
        lambda x: np.reshape(x, (4, 6), order="F"), [[(2, 3, 4)]]),
    rec("reshape_method", lambda x: x.reshape(2, 2, -1), lambda x: x.reshape(2, 2, -1),
        [[(12,)], [(2, 6)]]),
    rec("ravel", lambda x, order: jnp.ravel(x, order), lambda x, order: np.ravel(x, order),
        [[(2, 3)], [()], [(2, 3, 4)]], static={"order": "F"}),
    rec("flatten", lambda x: x.flatten(), lambda x: x.flatten(), [[(2, 3, 4)]]),
    rec("transpose", jnp.transpose, np.transpose, [[(2, 3, 4)], [(5,)], [()]]),
    rec("transpose_axes", lambda x: jnp.transpose(x, (1, -1, 0)),
        lambda x: np.transpose(x, (1, -1, 0)), [[(2, 3, 4)]]),
    rec("T", lambda x: x.T, lambda x: x.T, [[(2, 3)]]),
    rec("mT", lambda x: x.mT, lambda x: np.swapaxes(x, -1, -2), [[(2, 3, 4)]]),
    rec("matrix_transpose", jnp.matrix_transpose, lambda x: np.swapaxes(x, -1, -2),
        [[(2, 3)], [(4, 2, 3)]]),
    rec("permute_dims", lambda x: jnp.permute_dims(x, (2, 0, 1)),
        lambda x: np.transpose(x, (2, 0, 1)), [[(2, 3, 4)]]),
    rec("moveaxis", lambda x, s, d: jnp.moveaxis(x, s, d), lambda x, s, d: np.moveaxis(x, s, d),
        [[(2, 3, 4)]], static={"s": (0, 1), "d": (-1, 0)}),
    rec("swapaxes", lambda x: jnp.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1),
        [[(2, 3, 4)], [(2, 3)]]),
    rec("rollaxis", lambda x: jnp.rollaxis(x, 2, 1), lambda x: np.rollaxis(x, 2, 1),
        [[(2, 3, 4)]]),
    rec("squeeze", jnp.squeeze, np.squeeze, [[(1, 3, 1)], [(1,)], [(2, 3)]]),
    rec("squeeze_axis", lambda x: jnp.squeeze(x, (0, -1)), lambda x: np.squeeze(x, (0, -1)),
        [[(1, 3, 1)]]),
    rec("expand_dims", lambda x: jnp.expand_dims(x, (0, -1)),
        lambda x: np.expand_dims(x, (0, -1)), [[(3,)], [(2, 3)]]),
    rec("atleast_1d", jnp.atleast_1d, np.atleast_1d, [[()], [(3,)]]),
    rec("atleast_2d", jnp.atleast_2d, np.atleast_2d, [[()], [(3,)], [(2, 3)]]),
    rec("atleast_3d", jnp.atleast_3d, np.atleast_3d, [[()], [(3,)], [(2, 3)], [(1, 2, 3)]]),
    rec("atleast_2d_many", jnp.atleast_2d, np.atleast_2d, [[(3,), (2, 2)]]),
    rec("broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3, 4)),
        lambda x: np.broadcast_to(x, (2, 3, 4)), [[(4,)], [(3, 1)], [()]]),
    rec("broadcast_arrays", jnp.broadcast_arrays, np.broadcast_arrays,
        [[(3,), (2, 1)], [(), (2, 2)]], [(F32, I32), (BOOL, BF16)], expected_dtype=lambda *d: d),
]

JOINS = [
    rec("concatenate", lambda *xs, axis: jnp.concatenate(xs, axis=axis),
        lambda *xs, axis: np.concatenate(xs, axis=axis), [[(2, 3), (1, 3)]],
        static={"axis": 0}),
    rec("concatenate_axis1", lambda *xs: jnp.concatenate(xs, axis=-1),
        lambda *xs: np.concatenate(xs, axis=-1), [[(2, 3), (2, 1), (2, 2)]]),
    rec("concatenate_none", lambda *xs: jnp.concatenate(xs, axis=None),
        lambda *xs: np.concatenate(xs, axis=None), [[(2, 3), (4,)]]),
    rec("concatenate_promote", lambda x, y: jnp.concatenate([x, y]),
        lambda x, y: np.concatenate([x.astype(_promoted(x.dtype, y.dtype)),
                                     y.astype(_promoted(x.dtype, y.dtype))]), [[(3,), (2,)]],
        [(F32, I32), (I8, U8), (BF16, F16)], expected_dtype=_promoted),
    rec("concatenate_array", lambda x: jnp.concatenate(x, axis=1),
        lambda x: np.concatenate(list(x), axis=1), [[(2, 3, 4)]]),
    rec("concat", lambda x, y: jnp.concat([x, y], axis=1),
        lambda x, y: np.concatenate([x, y], axis=1), [[(2, 3), (2, 1)]]),
    rec("stack", lambda *xs, axis: jnp.stack(xs, axis=axis),
        lambda *xs, axis: np.stack(xs, axis=axis), [[(3,), (3,)], [(2, 3), (2, 3), (2, 3)]],
        static={"axis": -1}),
    rec("stack_array", lambda x: jnp.stack(x, axis=1), lambda x: np.stack(list(x), axis=1),
        [[(2, 3)]]),
    rec("unstack", lambda x: jnp.unstack(x, axis=1), lambda x: tuple(np.moveaxis(x, 1, 0)),
        [[(2, 3)]]),
    rec("vstack", lambda *xs: jnp.vstack(xs), lambda *xs: np.vstack(xs),
        [[(3,), (3,)], [(2, 3), (1, 3)], [(), ()]]),
    rec("vstack_array", jnp.vstack, np.vstack, [[(2, 3)], [(3,)]]),
    rec("hstack", lambda *xs: jnp.hstack(xs), lambda *xs: np.hstack(xs),
        [[(3,), (2,)], [(2, 3), (2, 1)], [(), ()]]),
    rec("hstack_array", jnp.hstack, np.hstack, [[(2, 3)], [(3,)]]),
    rec("dstack", lambda *xs: jnp.dstack(xs), lambda *xs: np.dstack(xs),
        [[(3,), (3,)], [(2, 3), (2, 3)], [(2, 3, 1), (2, 3, 2)]]),
    rec("dstack_array", jnp.dstack, np.dstack, [[(2, 3)], [(3,)]]),
    rec("column_stack", lambda *xs: jnp.column_stack(xs), lambda *xs: np.column_stack(xs),
        [[(3,), (3, 2)], [(3,), (3,)]]),
    rec("column_stack_array", jnp.column_stack, np.column_stack, [[(2, 3)], [(3,)]]),
    rec("split", lambda x: jnp.split(x, 3), lambda x: np.split(x, 3), [[(6,)], [(3, 2)]]),
    rec("split_indices", lambda x: jnp.split(x, [1, 3], axis=1),
        lambda x: np.split(x, [1, 3], axis=1), [[(2, 5)]]),
    rec("array_split", lambda x: jnp.array_split(x, 4), lambda x: np.array_split(x, 4),
        [[(6,)], [(7, 2)]]),
    rec("hsplit", lambda x: jnp.hsplit(x, 2), lambda x: np.hsplit(x, 2), [[(4,)], [(2, 4)]]),
    rec("vsplit", lambda x: jnp.vsplit(x, [1]), lambda x: np.vsplit(x, [1]), [[(3, 2)]]),
    rec("dsplit", lambda x: jnp.dsplit(x, 3), lambda x: np.dsplit(x, 3), [[(2, 1, 3)]]),
    rec("append", jnp.append, np.append, [[(2, 3), (4,)]], (F32,)),
    rec("append_axis", lambda x, y: jnp.append(x, y, axis=1),
        lambda x, y: np.append(x, y, axis=1), [[(2, 3), (2, 2)]]),
]

REARRANGE = [
    rec("flip", jnp.flip, np.flip, [[(2, 3)], [(4,)]]),
    rec("flip_axis", lambda x: jnp.flip(x, (0, -1)), lambda x: np.flip(x, (0, -1)),
        [[(2, 3, 4)]]),
    rec("fliplr", jnp.fliplr, np.fliplr, [[(2, 3)]]),
    rec("flipud", jnp.flipud, np.flipud, [[(2, 3)]]),
    rec("rot90", lambda x, k: jnp.rot90(x, k), lambda x, k: np.rot90(x, k), [[(2, 3)]],
        static={"k": 1}),
    rec("rot90_k", lambda x, k: jnp.rot90(x, k, axes=(2, 0)),
        lambda x, k: np.rot90(x, k, axes=(2, 0)), [[(2, 3, 4)]], static={"k": -3}),
    rec("rot90_2", lambda x: jnp.rot90(x, 2), lambda x: np.rot90(x, 2), [[(2, 3)]]),
    rec("rot90_3", lambda x: jnp.rot90(x, 3), lambda x: np.rot90(x, 3), [[(2, 3)]]),
    rec("roll", lambda x, shift: jnp.roll(x, shift), lambda x, shift: np.roll(x, shift),
        [[(5,)], [(2, 3)]], static={"shift": 2}),
    rec("roll_axes", lambda x: jnp.roll(x, (1, -7), axis=(0, 1)),
        lambda x: np.roll(x, (1, -7), axis=(0, 1)), [[(2, 3)]]),
    rec("roll_traced", lambda x, s: jnp.roll(x, s, axis=1),
        lambda x, s: np.roll(x, int(s), axis=1), [[(2, 3), ()]], [(F32, I32)],
        [rand_default, rand_small_int]),
    rec("tile", lambda x, reps: jnp.tile(x, reps), lambda x, reps: np.tile(x, reps),
        [[(3,)], [(2, 3)]], static={"reps": (2, 1, 2)}),
    rec("tile_int", lambda x: jnp.tile(x, 3), lambda x: np.tile(x, 3), [[(2, 2)], [()]]),
    rec("repeat", lambda x: jnp.repeat(x, 2), lambda x: np.repeat(x, 2), [[(3,)], [(2, 3)]]),
    rec("repeat_axis", lambda x: jnp.repeat(x, 3, axis=-1),
        lambda x: np.repeat(x, 3, axis=-1), [[(2, 3)]]),
    rec("repeat_array", lambda x: jnp.repeat(x, np.array([2, 0, 1]), axis=1),
        lambda x: np.repeat(x, [2, 0, 1], axis=1), [[(2, 3)]]),
    rec("repeat_total", lambda x, r: jnp.repeat(x, r, total_repeat_length=5),
        # Short counts leave the tail pointing at the last element, long ones are truncated.
        lambda x, r: np.concatenate([np.repeat(x, r), np.full(5, x[-1])])[:5],
        [[(3,), (3,)]], [(F32, I32)], [rand_default, rand_small_int]),
    rec("repeat_method", lambda x: x.repeat(2, axis=0), lambda x: x.repeat(2, axis=0),
        [[(2, 2)]]),
    rec("resize", lambda x: jnp.resize(x, (3, 4)), lambda x: np.resize(x, (3, 4)),
        [[(5,)], [(2, 2)]]),
]


def _pad(mode: str, width, **kwargs) -> OpRecord:
    name = "pad_" + mode + "_" + "_".join(f"{k}" for k in kwargs)
    return rec(name.rstrip("_"), lambda x: jnp.pad(x, width, mode=mode, **kwargs),
               lambda x: np.pad(x, width, mode=mode, **kwargs), [[(4,)], [(2, 3)]], NUM)


PADS = [
    _pad("constant", 2),
    _pad("constant", ((1, 0),), constant_values=7),
    rec("pad_constant_pairs", lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=((1, 2), (3, 4))),
        lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=((1, 2), (3, 4))), [[(2, 3)]],
        NUM),
    _pad("edge", (2, 1)),
    _pad("wrap", (5, 2)),
    _pad("reflect", (2, 5)),
    _pad("reflect", 3, reflect_type="odd"),
    _pad("symmetric", (1, 6)),
    _pad("symmetric", 2, reflect_type="odd"),
    _pad("linear_ramp", (2, 3), end_values=(4, -1)),
    _pad("maximum", (2, 1)),
    _pad("minimum", 1, stat_length=2),
    rec("pad_mean", lambda x: jnp.pad(x, (2, 1), mode="mean"),
        lambda x: np.pad(x, (2, 1), mode="mean"), [[(4,)], [(2, 3)]], (F32,)),
    rec("pad_median", lambda x: jnp.pad(x, 1, mode="median", stat_length=(3, 2)),
        lambda x: np.pad(x, 1, mode="median", stat_length=(3, 2)), [[(5,)]], (F32,)),
    rec("pad_callable", lambda x: jnp.pad(x, 1, mode=_pad_with_index),
        lambda x: np.pad(x, 1, mode=_np_pad_with_index), [[(3,)], [(2, 2)]], (F32,)),
]


def _pad_with_index(vector, pad_width, iaxis, kwargs):
    """A callable pad mode in JAX's form: returns the line with its padding filled."""
    n = vector.shape[0]
    idx = np.arange(n)
    edges = (idx < pad_width[0]) | (idx >= n - pad_width[1])
    return jnp.where(edges, iaxis + 10.0, vector)


def _np_pad_with_index(vector, pad_width, iaxis, kwargs):
    """The same mode in NumPy's form, which writes into the line in place."""
    vector[:] = np.asarray(_pad_with_index(vector, pad_width, iaxis, kwargs))


TRIANGLES = [
    rec("triu", jnp.triu, np.triu, [[(3, 4)], [(2, 3, 3)]]),
    rec("tril", lambda x: jnp.tril(x, -1), lambda x: np.tril(x, -1), [[(3, 4)], [(2, 3, 3)]]),
    rec("tril_k", lambda x: jnp.tril(x, 2), lambda x: np.tril(x, 2), [[(3, 4)]]),
    rec("diag_1d", lambda x: jnp.diag(x, 1), lambda x: np.diag(x, 1), [[(3,)]]),
    rec("diag_1d_neg", lambda x: jnp.diag(x, -2), lambda x: np.diag(x, -2), [[(3,)]]),
    rec("diag_2d", lambda x: jnp.diag(x, -1), lambda x: np.diag(x, -1), [[(3, 4)]]),
    rec("diagonal", lambda x, offset: jnp.diagonal(x, offset),
        lambda x, offset: np.diagonal(x, offset), [[(3, 4)], [(4, 3)]], static={"offset": 1}),
    rec("diagonal_axes", lambda x: jnp.diagonal(x, -1, 2, 0),
        lambda x: np.diagonal(x, -1, 2, 0), [[(3, 2, 4)]]),
    rec("diagonal_method", lambda x: x.diagonal(), lambda x: x.diagonal(), [[(3, 3)]]),
    rec("diagflat", lambda x: jnp.diagflat(x, -1), lambda x: np.diagflat(x, -1), [[(2, 2)]]),
    rec("trace", jnp.trace, np.trace, [[(3, 4)]], NUM),
    rec("trace_args", lambda x: jnp.trace(x, 1, 2, 0), lambda x: np.trace(x, 1, 2, 0),
        [[(3, 2, 4)]], NUM),
    rec("trace_method", lambda x: x.trace(offset=-1), lambda x: x.trace(offset=-1),
        [[(3, 3)]], NUM),
    rec("fill_diagonal", lambda x: jnp.fill_diagonal(x, 9, inplace=False),
        lambda x: _np_fill_diagonal(x, 9), [[(3, 4)], [(3, 3, 3)]], NUM),
    rec("fill_diagonal_vec", lambda x, v: jnp.fill_diagonal(x, v, inplace=False),
        lambda x, v: _np_fill_diagonal(x, v), [[(4, 4), (2,)]], NUM),
]


def _np_fill_diagonal(x: np.ndarray, v) -> np.ndarray:
    out = x.copy()
    np.fill_diagonal(out, v)
    return out


SELECTION = [
    rec("where", jnp.where, np.where, [[(3,), (3,), (3,)], [(2, 1), (3,), ()]],
        [(BOOL, F32, F32), (I32, I32, F32), (BOOL, BF16, BF16)],
        expected_dtype=lambda c, x, y: jnp.result_type(x, y)),
    rec("where_scalar", lambda x: jnp.where(x > 0, x, 0), lambda x: np.where(x > 0, x, 0),
        [[(4,)]], NUM),
    # A scalar condition: batched, select_n's `which` is the batch axis alone; unmapped, the
    # cases may be batched along different axes.
    rec("where_scalar_condition", jnp.where, np.where, [[(), (2, 3), (2, 3)]],
        [(BOOL, F32, F32)], expected_dtype=lambda c, x, y: x),
    rec("where_scalar_cases", lambda c: jnp.where(c, 1.5, -2.0),
        lambda c: np.where(c, 1.5, -2.0).astype(np.float32), [[()], [(2, 3)]], (BOOL,),
        expected_dtype=lambda c: np.dtype(np.float32), differentiable=False),
    rec("select", lambda c1, c2, x: jnp.select([c1, c2], [x, -x], 5),
        lambda c1, c2, x: np.select([c1, c2], [x, -x], 5), [[(4,), (4,), (4,)]],
        [(BOOL, BOOL, F32), (BOOL, BOOL, I32)], expected_dtype=lambda *d: d[-1]),
    rec("piecewise", lambda x: jnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, 7, lambda v: v * 2]),
        lambda x: np.piecewise(x, [x < 0, x > 1], [lambda v: -v, 7, lambda v: v * 2]),
        [[(6,)]], NUM),
    rec("clip", lambda x: jnp.clip(x, -1, 2), lambda x: np.clip(x, -1, 2), [[(5,)]],
        (F32, I32, I8)),
    rec("clip_arrays", lambda x, lo, hi: jnp.clip(x, lo, hi), np.clip,
        [[(2, 3), (3,), (2, 1)]], (F32,)),
    rec("clip_method", lambda x: x.clip(max=0.5), lambda x: x.clip(max=0.5), [[(4,)]], (F32,)),
    rec("choose", lambda a, x, y: jnp.choose(a, [x, y], mode="wrap"),
        lambda a, x, y: np.choose(a, [x, y], mode="wrap"), [[(4,), (4,), ()]],
        [(I32, F32, F32)], [rand_small_int, rand_default, rand_default],
        expected_dtype=lambda *d: d[-1]),
    rec("choose_clip", lambda a, x, y: a.choose([x, y], mode="clip"),
        lambda a, x, y: np.choose(a, [x, y], mode="clip"), [[(2, 3), (3,), (2, 3)]],
        [(I32, I32, I32)], [rand_default, rand_default, rand_default]),
    rec("compress_sized", lambda c, x: jnp.compress(c, x, axis=1, size=2),
        lambda c, x: _np_compress_sized(c, x, 1, 2), [[(3,), (2, 3)]], [(BOOL, F32)],
        expected_dtype=lambda *d: d[-1]),
    rec("extract_sized", lambda c, x: jnp.extract(c, x, size=6),
        lambda c, x: _np_compress_sized(c.ravel(), x.ravel(), 0, 6), [[(2, 3), (2, 3)]],
        [(BOOL, I32)], expected_dtype=lambda *d: d[-1]),
    rec("nonzero_sized", lambda x: jnp.nonzero(x, size=4),
        lambda x: _np_nonzero_padded(x, 4), [[(5,)], [(2, 3)]], (F32, BOOL),
        [rand_small_int], expected_dtype=_int),
    rec("nonzero_fill", lambda x: jnp.nonzero(x, size=6, fill_value=-1),
        lambda x: _np_nonzero_padded(x, 6, -1), [[(2, 2)]], (I32,), [rand_small_int],
        expected_dtype=_int),
    rec("where_one_arg", lambda x: jnp.where(x, size=3), lambda x: _np_nonzero_padded(x, 3),
        [[(4,)]], (BOOL,), expected_dtype=_int),
    rec("flatnonzero", lambda x: jnp.flatnonzero(x, size=7),
        lambda x: _np_nonzero_padded(x.ravel(), 7)[0], [[(2, 3)]], (I32,), [rand_small_int],
        expected_dtype=_int),
    rec("argwhere", lambda x: jnp.argwhere(x, size=4),
        lambda x: np.stack(_np_nonzero_padded(x, 4), axis=-1), [[(2, 3)], [(4,)]], (I32,),
        [rand_small_int], expected_dtype=_int),
]

# Casts to integers/bools and bit views have integer outputs (no gradient to check); a cast
# to float16 rounds its output far beyond what finite differences can resolve. Their
# derivatives are checked in tests/test_ad_structural.py.
CASTS = [
    rec("astype", lambda x: jnp.astype(x, np.int8), lambda x: x.astype(np.int8), [[(4,)]],
        (F32, I32, BOOL), expected_dtype=lambda d: np.dtype(np.int8), differentiable=False),
    rec("astype_float", lambda x: x.astype(jnp.float16), lambda x: x.astype(np.float16),
        [[(4,)]], (F32, I32, BOOL), expected_dtype=lambda d: np.dtype(np.float16),
        differentiable=False),
    rec("astype_bool", lambda x: x.astype(bool), lambda x: x.astype(bool), [[(4,)]],
        (F32, I32, C64), expected_dtype=_bool, differentiable=False),
    rec("view", lambda x: x.view(np.int32), lambda x: x.view(np.int32), [[(2, 3)]],
        (F32,), expected_dtype=_int, differentiable=False),
    rec("view_narrow", lambda x: x.view(np.uint8), lambda x: x.view(np.uint8), [[(2, 3)]],
        (F32, I32, F16), expected_dtype=lambda d: np.dtype(np.uint8), differentiable=False),
    rec("view_wide", lambda x: x.view(np.float32), lambda x: x.view(np.float32), [[(2, 4)]],
        (U8, I8), expected_dtype=lambda d: np.dtype(np.float32)),
    rec("view_complex", lambda x: x.view(np.float32), lambda x: x.view(np.float32),
        [[(3,)]], (C64,), expected_dtype=lambda d: np.dtype(np.float32)),
]

COMPARISONS = [
    rec("isclose", lambda x, y: jnp.isclose(x, y, atol=0.5), lambda x, y: np.isclose(x, y, atol=0.5),
        [[(5,), (5,)], [(2, 3), (3,)]], (F32, I32), expected_dtype=_bool),
    rec("isclose_nan", lambda x, y: jnp.isclose(x, y, equal_nan=True),
        lambda x, y: np.isclose(x, y, equal_nan=True), [[(6,), (6,)]], (F32,),
        lambda rng, s, d: np.array([0, np.nan, np.inf, -np.inf, 1, 2], d),
        expected_dtype=_bool),
    rec("allclose", jnp.allclose, np.allclose, [[(5,), (5,)]], (F32,), expected_dtype=_bool),
    rec("array_equal", jnp.array_equal, np.array_equal, [[(3,), (3,)], [(3,), (2,)]],
        (F32, I32), expected_dtype=_bool),
    rec("array_equiv", jnp.array_equiv, np.array_equiv, [[(3,), (2, 3)], [(2, 3), (4, 1, 2)]],
        (I32,), expected_dtype=_bool),
]

INDEX_MATH = [
    rec("delete", lambda x: jnp.delete(x, 1, axis=1), lambda x: np.delete(x, 1, axis=1),
        [[(2, 4)]]),
    rec("delete_slice", lambda x: jnp.delete(x, slice(None, None, 2)),
        lambda x: np.delete(x, slice(None, None, 2)), [[(5,)]]),
    rec("delete_array", lambda x: jnp.delete(x, np.array([0, 3])),
        lambda x: np.delete(x, [0, 3]), [[(5,)]]),
    rec("delete_unique", lambda x: jnp.delete(x, jnp.array([3, -5]), assume_unique_indices=True),
        lambda x: np.delete(x, [3, -5]), [[(5,)]]),
    rec("insert", lambda x: jnp.insert(x, 2, 7), lambda x: np.insert(x, 2, 7), [[(4,)]], NUM),
    rec("insert_array", lambda x, v: jnp.insert(x, np.array([0, 2]), v, axis=1),
        lambda x, v: np.insert(x, [0, 2], v, axis=1), [[(2, 3), (2,)]], NUM),
    rec("unravel_index", lambda i: jnp.unravel_index(i, (3, 4)),
        lambda i: np.unravel_index(np.clip(i, 0, 11), (3, 4)), [[(5,)]], (I32,),
        lambda rng, s, d: rng.integers(0, 12, s).astype(d)),
    rec("ravel_multi_index", lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="wrap"),
        lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="wrap"), [[(5,), (5,)]], (I32,)),
    rec("ravel_multi_index_F", lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="clip",
                                                                  order="F"),
        lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="clip", order="F"),
        [[(5,), (5,)]], (I32,)),
    rec("ix_", jnp.ix_, np.ix_, [[(3,), (2,)]], (I32,)),
]

CALCULUS = [
    rec("diff", jnp.diff, np.diff, [[(5,)], [(2, 4)]], (F32, I32, BOOL)),
    rec("diff_n", lambda x: jnp.diff(x, n=2, axis=0, prepend=1, append=x[:1]),
        lambda x: np.diff(x, n=2, axis=0, prepend=1, append=x[:1]), [[(3, 2)]], NUM),
    rec("ediff1d", lambda x: jnp.ediff1d(x, to_begin=-1, to_end=np.array([2, 3])),
        lambda x: np.ediff1d(x, to_begin=-1, to_end=[2, 3]), [[(2, 3)]], NUM),
    rec("gradient", jnp.gradient, _np_gradient, [[(5,)]], (F32,)),
    rec("gradient_2d", lambda x: jnp.gradient(x, 0.5, axis=1),
        lambda x: np.gradient(x, 0.5, axis=1), [[(3, 4)]], (F32,)),
    rec("gradient_all", lambda x: jnp.gradient(x, 2.0), lambda x: np.gradient(x, 2.0),
        [[(3, 4)]], (F32,)),
    rec("gradient_coords", jnp.gradient, np.gradient, [[(5,), (5,)]], (F32,),
        [rand_default, _sorted_unique]),
    rec("trapezoid", jnp.trapezoid, _np_trapezoid, [[(5,)], [(2, 4)]], (F32,)),
    rec("trapezoid_x", lambda y, x: jnp.trapezoid(y, x, axis=0),
        lambda y, x: np.trapezoid(y, x, axis=0), [[(4, 2), (4,)]], (F32,)),
    rec("trapezoid_dx", lambda y: jnp.trapezoid(y, dx=0.5), lambda y: np.trapezoid(y, dx=0.5),
        [[(4,)]], (F32,)),
    rec("interp", jnp.interp, np.interp, [[(7,), (5,), (5,)]], (F32,),
        [rand_default, _sorted_unique, rand_default]),
    rec("interp_bounds", lambda x, xp, fp: jnp.interp(x, xp, fp, left=-9, right=9),
        lambda x, xp, fp: np.interp(x, xp, fp, left=-9, right=9), [[(7,), (4,), (4,)]],
        (F32,), [lambda rng, s, d: rng.uniform(-30, 30, s).astype(d), _sorted_unique,
                 rand_default]),
    rec("interp_period", lambda x, xp, fp: jnp.interp(x, xp, fp, period=360),
        lambda x, xp, fp: np.interp(x, xp, fp, period=360), [[(7,), (4,), (4,)]], (F32,),
        [lambda rng, s, d: rng.uniform(-400, 400, s).astype(d),
         lambda rng, s, d: rng.choice(np.arange(0, 360, 7), s, replace=False).astype(d),
         rand_default], tol={F32: 1e-4}),
    rec("polyval", jnp.polyval, np.polyval, [[(3,), (4,)], [(1,), ()]], (F32,)),
]

RECORDS = RESHAPES + JOINS + REARRANGE + PADS + TRIANGLES + SELECTION + CASTS + COMPARISONS + \
    INDEX_MATH + CALCULUS
