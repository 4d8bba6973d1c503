"""Op records for the collectives over positional axes: `psum`/`pmax`/`pmin` with integer
axes reduce the operand's own axes and need no named axis, so they run outside vmap like any
primitive (and the op-record vmap check batches them along every position). The named-axis
forms, `all_gather`, `psum_scatter` and `axis_index` need a vmap binding their axis; they are
tested in tests/test_collectives.py."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax import lax
from tests.harness import BOOL, FLOATS, I32, INTS, OpRecord, rand_default, widen
from tests.records.lax_reductions import rand_distinct

SHAPES = [[(2, 3)], [(2, 3, 4)]]


def _np_sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.dtype.kind in "iub":
        return np.sum(x, axis=axes, dtype=np.int32 if x.dtype == BOOL else x.dtype)
    return np.sum(widen(x), axis=axes)


def _int32(*dtypes: Any) -> np.dtype:
    return np.dtype(np.int32)


def _records() -> list[OpRecord]:
    records = []
    for label, axes in (("first", (0,)), ("last", (1,)), ("two", (0, 1))):
        records += [
            OpRecord(f"psum_{label}", lambda x, axes=axes: lax.psum(x, axes),
                     lambda x, axes=axes: _np_sum(x, axes), SHAPES, FLOATS + INTS,
                     rand_default),
            OpRecord(f"pmax_{label}", lambda x, axes=axes: lax.pmax(x, axes),
                     lambda x, axes=axes: np.max(widen(x), axis=axes), SHAPES,
                     FLOATS + INTS, rand_distinct, differentiable=False),
            OpRecord(f"pmin_{label}", lambda x, axes=axes: lax.pmin(x, axes),
                     lambda x, axes=axes: np.min(widen(x), axis=axes), SHAPES,
                     FLOATS + INTS, rand_distinct, differentiable=False),
        ]
    records += [
        # A single positional axis given as an int; booleans are summed as int32.
        OpRecord("psum_int_axis", lambda x: lax.psum(x, 1), lambda x: _np_sum(x, (1,)),
                 SHAPES, FLOATS + (I32,)),
        OpRecord("psum_bool", lambda x: lax.psum(x, (0,)), lambda x: _np_sum(x, (0,)),
                 SHAPES, (BOOL,), expected_dtype=_int32, differentiable=False),
        OpRecord("psum_pytree", lambda x, y: lax.psum([x, y], 0),
                 lambda x, y: (_np_sum(x, (0,)), _np_sum(y, (0,))),
                 [[(2, 3), (2,)]], FLOATS),
    ]
    return records


RECORDS = _records()
