"""Op records for `sort` (one and several operands, several keys) and `top_k`."""
from __future__ import annotations

import numpy as np

from justjax import lax
from tests.harness import (BF16, BOOL, C64, F16, F32, FLOATS, I8, I32, INTS, U8, U32, OpRecord,
                           rand_default, rand_small_int, rand_special)
from tests.records.lax_reductions import rand_distinct

SORT_DTYPES = FLOATS + INTS + (BOOL,)


def _each_operand(*dtypes_in: np.dtype) -> tuple[np.dtype, ...]:
    """Multi-operand sorts return each operand in its own dtype."""
    return dtypes_in


def _values_and_indices(dtype: np.dtype) -> tuple[np.dtype, np.dtype]:
    return dtype, np.dtype(np.int32)


def _same(dtype: np.dtype, *rest: np.dtype) -> np.dtype:
    return np.dtype(dtype)


def _columns(x: np.ndarray) -> list[np.ndarray]:
    """Sort columns (primary first) ordering `x` as JAX's sort does: NaNs last, -0 == 0."""
    if x.dtype.kind == "c":
        return _columns(np.real(x)) + _columns(np.imag(x))
    if x.dtype == BOOL or x.dtype.kind in "iu":
        return [x.astype(np.int64)]
    wide = x.astype(np.float64)
    return [np.isnan(wide), np.where(np.isnan(wide), 0.0, wide)]


def _permutation(keys: list[np.ndarray], axis: int) -> np.ndarray:
    """Stable lexicographic order of `keys` (the first primary) along `axis`."""
    columns = [c for key in keys for c in _columns(key)]
    return np.lexsort(columns[::-1], axis=axis)


def _np_sort(*operands: np.ndarray, axis: int = -1, num_keys: int = 1) -> list[np.ndarray]:
    perm = _permutation(list(operands[:num_keys]), axis)
    return [np.take_along_axis(op, perm, axis=axis) for op in operands]


def _np_top_k(x: np.ndarray, k: int, axis: int = -1) -> list[np.ndarray]:
    # No NaNs in these records: a plain descending order.
    key = -(x.astype(np.int64) if x.dtype.kind in "iub" else x.astype(np.float64))
    order = np.argsort(key, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int32)]


def _sort_records() -> list[OpRecord]:
    records = []
    # Distinct keys: no ties, where a sort's outputs jump (and finite differences mean
    # nothing). The records built on ties, NaNs and infinities are value-only.
    for dimension in (-1, 0):
        records.append(OpRecord(
            f"sort_dim{dimension}", lambda x, d=dimension: lax.sort(x, dimension=d),
            lambda x, d=dimension: _np_sort(x, axis=d)[0], [[(7,)], [(3, 4)], [(2, 3, 4)]],
            SORT_DTYPES, rand_distinct, expected_dtype=_same))
    records += [
        OpRecord("sort_special", lambda x: lax.sort(x), lambda x: _np_sort(x)[0],
                 [[(12,)], [(3, 9)]], (F32, F16, BF16), rand_special, expected_dtype=_same,
                 differentiable=False),
        OpRecord("sort_complex", lambda x: lax.sort(x), lambda x: _np_sort(x)[0],
                 [[(6,)], [(2, 5)]], (C64,), rand_distinct, expected_dtype=_same),
        OpRecord("sort_unstable", lambda x: lax.sort(x, is_stable=False),
                 lambda x: _np_sort(x)[0], [[(8,)], [(2, 5)]], (F32, I32), rand_distinct,
                 expected_dtype=_same),
        OpRecord("sort_empty", lambda x: lax.sort(x, dimension=0), lambda x: x,
                 [[(0,)], [(0, 3)], [(3, 0)]], (F32, I32), expected_dtype=_same),
        # Small-integer keys have many ties, so these check stability.
        OpRecord("sort_key_val_ties", lambda k, v: lax.sort_key_val(k, v),
                 lambda k, v: _np_sort(k, v), [[(10,), (10,)], [(3, 8), (3, 8)]],
                 [(F32, I32), (I32, F32), (BOOL, U8), (BF16, F16)],
                 [rand_small_int, rand_default], expected_dtype=_each_operand,
                 differentiable=False),
        OpRecord("sort_key_val_dim0", lambda k, v: lax.sort_key_val(k, v, dimension=0),
                 lambda k, v: _np_sort(k, v, axis=0), [[(6, 3), (6, 3)]], [(F32, I32)],
                 [rand_small_int, rand_default], expected_dtype=_each_operand,
                 differentiable=False),
        # A distinct key: the other operands (ties among them are harmless) follow it.
        OpRecord("sort_three_operands_one_key",
                 lambda a, b, c: lax.sort((a, b, c), num_keys=1),
                 lambda a, b, c: _np_sort(a, b, c), [[(9,), (9,), (9,)], [(2, 6)] * 3],
                 [(F32, I32, F32), (I8, F32, BOOL)],
                 [rand_distinct, rand_small_int, rand_small_int], expected_dtype=_each_operand),
        OpRecord("sort_two_keys",
                 lambda a, b, c: lax.sort([a, b, c], num_keys=2),
                 lambda a, b, c: _np_sort(a, b, c, num_keys=2),
                 [[(12,), (12,), (12,)], [(3, 7)] * 3],
                 [(I32, F32, I32), (F32, BOOL, F32)], rand_small_int, expected_dtype=_each_operand,
                 differentiable=False),
        OpRecord("sort_three_keys_dim0",
                 lambda a, b, c: lax.sort((a, b, c), dimension=0, num_keys=3),
                 lambda a, b, c: _np_sort(a, b, c, axis=0, num_keys=3),
                 [[(10, 2), (10, 2), (10, 2)]], [(U8, I32, F32)], rand_small_int,
                 expected_dtype=_each_operand,
                 differentiable=False),
        OpRecord("sort_two_keys_special",
                 lambda a, b: lax.sort((a, b), num_keys=2),
                 lambda a, b: _np_sort(a, b, num_keys=2), [[(16,), (16,)]], [(F32, F32)],
                 [rand_special, rand_small_int], expected_dtype=_each_operand,
                 differentiable=False),
    ]
    return records


def _top_k_records() -> list[OpRecord]:
    records = []
    for k in (1, 3):
        records.append(OpRecord(
            f"top_k_{k}", lambda x, k=k: lax.top_k(x, k), lambda x, k=k: _np_top_k(x, k),
            [[(5,)], [(2, 6)], [(2, 3, 4)]], FLOATS + (I32, U8, U32, I8, BOOL), rand_distinct,
            expected_dtype=_values_and_indices))
    records += [
        OpRecord("top_k_ties", lambda x: lax.top_k(x, 4), lambda x: _np_top_k(x, 4),
                 [[(9,)], [(3, 6)]], (F32, I32, BF16), rand_small_int,
                 expected_dtype=_values_and_indices, differentiable=False),
        OpRecord("top_k_axis0", lambda x: lax.top_k(x, 2, axis=0),
                 lambda x: _np_top_k(x, 2, axis=0), [[(4, 3)], [(5, 2, 3)]], (F32, I32),
                 rand_small_int, expected_dtype=_values_and_indices, differentiable=False),
        OpRecord("top_k_all", lambda x: lax.top_k(x, x.shape[-1]),
                 lambda x: _np_top_k(x, x.shape[-1]), [[(6,)], [(2, 5)]], (F32,),
                 rand_small_int, expected_dtype=_values_and_indices, differentiable=False),
        OpRecord("top_k_zero", lambda x: lax.top_k(x, 0), lambda x: _np_top_k(x, 0),
                 [[(4,)], [(2, 3)]], (F32,), expected_dtype=_values_and_indices),
    ]
    return records


RECORDS = _sort_records() + _top_k_records()
