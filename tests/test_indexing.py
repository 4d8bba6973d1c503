"""Tests of NumPy indexing (`x[idx]`), indexed updates (`x.at[idx]`), `jnp.take`,
`jnp.take_along_axis` and the lax slicing functions' argument checking.

Values are checked against NumPy (index expressions generated systematically over the index
kinds), eager against traced evaluation, error classes and messages against what JAX 0.10.2
raises, and printed jaxprs against the text real JAX 0.10.2 printed (copied below).
"""
from __future__ import annotations

import itertools
import random
import re
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import justjax
from justjax import lax
from justjax._src import errors
from justjax._src.core.jaxpr import check_jaxpr, eval_jaxpr
from justjax._src.numpy import indexing

X_NP = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
X = justjax.device_put(X_NP)


def put(value: Any, dtype: Any = None) -> justjax.Array:
    return justjax.device_put(np.asarray(value, dtype))


def traced(fun, *args):
    """`fun(*args)` through make_jaxpr (type-checked) and evaluation of the jaxpr."""
    closed = justjax.make_jaxpr(fun)(*args)
    check_jaxpr(closed.jaxpr)
    out, = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return out


def check_equal(got: Any, want: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


# -- systematic index expressions -------------------------------------------------------------

def _axis_entries(size: int) -> list[Any]:
    """Index entries that each consume one axis of length `size`."""
    mask = np.arange(size) % 2 == 0
    return [0, size - 1, -1, -size,
            slice(None), slice(1, 3), slice(None, None, 2), slice(None, None, -1),
            slice(-2, None), slice(size, 0, -2), slice(3, 1), slice(-100, 100, 3),
            np.array([0, size - 1]), [1, 0], np.array([[0], [1]]), np.array(-1),
            np.uint8(1), mask]


def _combos(shape: tuple[int, ...]) -> list[tuple]:
    entries = [_axis_entries(n) for n in shape]
    combos = [(e,) for e in entries[0]]
    combos += list(itertools.product(entries[0], entries[1]))
    rng = random.Random(0)
    triples = list(itertools.product(*entries))
    combos += rng.sample(triples, 150)
    extra = []
    for combo in rng.sample(combos, 100):
        where = rng.randrange(len(combo) + 1)
        filler = rng.choice([None, Ellipsis, (None, None), (Ellipsis, None)])
        filler = filler if isinstance(filler, tuple) else (filler,)
        extra.append(combo[:where] + filler + combo[where:])
    return combos + extra


def _numpy_index(idx: tuple) -> tuple:
    return tuple(np.array(e) if isinstance(e, list) else e for e in idx)


def _valid(idx: tuple) -> bool:
    try:
        X_NP[_numpy_index(idx)]
    except (IndexError, ValueError):
        return False
    return True


INDICES = [idx for idx in _combos(X_NP.shape) if _valid(idx)]


def _index_id(idx: tuple) -> str:
    def one(e: Any) -> str:
        if isinstance(e, np.ndarray):
            return f"{e.dtype.name[0]}{e.tolist()}".replace(" ", "")
        if isinstance(e, slice):
            return ":".join("" if v is None else str(v) for v in (e.start, e.stop, e.step))
        return "..." if e is Ellipsis else str(e)
    return ",".join(one(e) for e in idx)


@pytest.mark.parametrize("idx", INDICES, ids=_index_id)
def test_getitem_matches_numpy(idx: tuple) -> None:
    want = X_NP[_numpy_index(idx)]
    check_equal(X[idx], want)
    check_equal(traced(lambda x: x[idx], X), want)


def _dynamic_split(idx: tuple) -> tuple[list[Any], list[Any]]:
    """Integer entries (scalars and arrays) become traced arguments; the rest stay static."""
    template, dynamic = [], []
    for e in idx:
        is_int = isinstance(e, (int, np.integer, list)) or (
            isinstance(e, np.ndarray) and e.dtype != bool)
        if is_int and e is not Ellipsis:
            template.append(len(dynamic))
            dynamic.append(put(e, np.asarray(e).dtype if isinstance(e, np.ndarray) else np.int32))
        else:
            template.append(("static", e))
    return template, dynamic


def _rebuild(template: list[Any], values: tuple) -> tuple:
    return tuple(t[1] if isinstance(t, tuple) else values[t] for t in template)


DYNAMIC_INDICES = [idx for idx in INDICES
                   if any(isinstance(e, (int, np.integer, list, np.ndarray))
                          and not (isinstance(e, np.ndarray) and e.dtype == bool) for e in idx)]


@pytest.mark.parametrize("idx", DYNAMIC_INDICES[::3], ids=_index_id)
def test_getitem_with_traced_indices(idx: tuple) -> None:
    template, dynamic = _dynamic_split(idx)
    got = traced(lambda x, *ds: x[_rebuild(template, ds)], X, *dynamic)
    check_equal(got, X_NP[_numpy_index(idx)])


def test_getitem_dtypes_and_weak_types() -> None:
    for dtype in (np.int8, np.uint32, np.bool_, ml_dtypes.bfloat16, np.float16, np.complex64):
        x_np = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
        x = put(x_np)
        for idx in [(1,), (slice(None, None, -1), 2), (np.array([2, 0]),), (x_np[:, 0] > 0,),
                    (Ellipsis, np.array([[1], [3]]))]:
            check_equal(x[idx], x_np[idx])
    weak = justjax.device_put(2.0)
    assert weak.weak_type and weak[()].weak_type and weak[None].weak_type
    mask = X_NP[:, 0, 0] > 10
    check_equal(X[put(mask)], X_NP[mask])
    check_equal(X[[True, False, True],], X_NP[np.array([True, False, True])])
    check_equal(X[1, put(X_NP[1] > 30)], X_NP[1][X_NP[1] > 30])


def test_rank_zero_and_empty_arrays() -> None:
    s_np = np.array(3.5, np.float32)
    s = put(s_np)
    for idx in [(), None, Ellipsis, True, False, (None, True), (Ellipsis, None)]:
        check_equal(s[idx], s_np[idx])
        check_equal(traced(lambda v: v[idx], s), s_np[idx])
    check_equal(s.at[()].set(2.0), np.array(2.0, np.float32))
    check_equal(s.at[True].add(1.0), np.array(4.5, np.float32))
    check_equal(s.at[...].multiply(2.0), np.array(7.0, np.float32))
    z_np = np.zeros((0, 3), np.float32)
    z = put(z_np)
    for idx in [(slice(None), 1), (Ellipsis, np.array([0, 2])), (np.zeros(0, bool),),
                (slice(None), np.array([True, False, True])), (np.zeros(0, np.int32),)]:
        check_equal(z[idx], z_np[idx])
    check_equal(X[[],], np.zeros((0, 4, 5), np.float32))
    check_equal(X.at[np.zeros(0, np.int32)].add(1.0), X_NP)
    check_equal(z.at[:, 1].set(5.0), z_np)


def test_out_of_bounds_array_indices_clamp_by_default() -> None:
    # JAX's default gather mode (promise_in_bounds) clamps; static ints clamp the same way.
    check_equal(X[np.array([5, -7, 1])], X_NP[np.array([2, 0, 1])])
    check_equal(X[3], X_NP[2])
    check_equal(X[0, -9], X_NP[0, 0])
    check_equal(traced(lambda x, i: x[i], X, put(9, np.int32)), X_NP[2])
    check_equal(traced(lambda x, i: x[:, i], X, put([-9, 9], np.int32)), X_NP[:, [0, 3]])


def test_get_modes() -> None:
    idx = np.array([5, -7, 1])
    want = np.full((3, 4, 5), np.nan, np.float32)
    want[2] = X_NP[1]
    check_equal(X.at[idx].get(mode="fill"), want)
    want[:2] = -1
    check_equal(X.at[idx].get(mode="fill", fill_value=-1), want)
    check_equal(X.at[idx].get(mode="clip"), X_NP[np.array([2, 0, 1])])
    xi = put(np.arange(6, dtype=np.int32))
    check_equal(xi.at[np.array([1, 6])].get(mode="fill"), np.array([1, -2**31], np.int32))
    xu = put(np.arange(6, dtype=np.uint8))
    check_equal(xu.at[np.array([1, 6])].get(mode="fill"), np.array([1, 255], np.uint8))
    xb = put(np.zeros(3, bool))
    check_equal(xb.at[np.array([1, 6])].get(mode="fill"), np.array([False, True]))
    # Without wrapping, -1 is out of bounds.
    check_equal(xi.at[np.array([-1, 2])].get(mode="fill", wrap_negative_indices=False,
                                             fill_value=7), np.array([7, 2], np.int32))
    check_equal(xi.at[5].get(mode="fill"), np.array(5, np.int32))
    check_equal(xi.at[6].get(mode="fill"), np.array(-2**31, np.int32))
    check_equal(traced(lambda x: x.at[1:3].get(mode="clip"), xi), np.array([1, 2], np.int32))


# -- indexed updates ----------------------------------------------------------------------------

POSITIONS = np.arange(X_NP.size).reshape(X_NP.shape)


def _targets(idx: tuple) -> np.ndarray:
    """The flat operand position of every element of `x[idx]` (NumPy's order)."""
    return POSITIONS[_numpy_index(idx)]


def _reference_update(op: str, idx: tuple, values: np.ndarray) -> np.ndarray:
    pos = _targets(idx)
    vals = np.broadcast_to(values, pos.shape).ravel()
    out = X_NP.copy().reshape(-1)
    ufunc = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
             "min": np.minimum, "max": np.maximum}.get(op)
    if op == "set":
        out[pos.ravel()] = vals
    elif ufunc is not None:
        ufunc.at(out, pos.ravel(), vals)
    else:
        scale = np.ones_like(out)
        np.multiply.at(scale, pos.ravel(), vals)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = out / scale if op == "divide" else out ** scale
    return out.reshape(X_NP.shape)


UPDATE_OPS = ["set", "add", "subtract", "multiply", "min", "max", "divide", "power"]
UPDATE_INDICES = [idx for idx in INDICES[::6]
                  if len(np.unique(_targets(idx))) == _targets(idx).size]
DUPLICATE_INDICES = [(np.array([0, 2, 0, 0]),), (1, np.array([[3, 3], [0, 3]])),
                     (np.array([1, 1]), slice(None), np.array([4, 4])),
                     (Ellipsis, [2, 2, 2]), (np.array([True, False, True]), 0, [1, 1])]


def _values(idx: tuple, kind: str) -> np.ndarray:
    shape = _targets(idx).shape
    rng = np.random.default_rng(len(shape) * 7 + sum(shape))
    if kind == "scalar":
        return np.float32(3)
    if kind == "trailing" and shape:
        shape = shape[1:]
    return rng.integers(-4, 5, shape).astype(np.float32)


@pytest.mark.parametrize("idx", UPDATE_INDICES, ids=_index_id)
def test_updates_match_numpy(idx: tuple) -> None:
    for op, kind in zip(UPDATE_OPS, itertools.cycle(["full", "scalar", "trailing"])):
        values = _values(idx, kind)
        got = getattr(X.at[idx], op)(put(values) if kind != "scalar" else 3.0)
        want = _reference_update(op, idx, values)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=op)
        assert got.dtype == np.float32 and got.shape == X_NP.shape
    values = _values(idx, "full")
    check_equal(traced(lambda x, v: x.at[idx].set(v), X, put(values)),
                _reference_update("set", idx, values))


@pytest.mark.parametrize("idx", DUPLICATE_INDICES, ids=_index_id)
def test_updates_with_duplicate_indices_accumulate(idx: tuple) -> None:
    for op in ["add", "subtract", "multiply", "min", "max", "set"]:
        values = _values(idx, "full")
        got = traced(lambda x, v: getattr(x.at[idx], op)(v), X, put(values))
        # `set` with repeated indices: the last update in NumPy's order wins.
        check_equal(got, _reference_update(op, idx, values))


def test_apply_applies_once_per_repetition() -> None:
    idx = (np.array([0, 0, 2]), 1, slice(None, None, 2))
    got = X.at[idx].apply(lambda v: v * 2)
    want = X_NP.copy().reshape(-1)
    np.multiply.at(want, _targets(idx).ravel(), 2)
    check_equal(got, want.reshape(X_NP.shape))
    check_equal(traced(lambda x: x.at[1:3, 0, 0].apply(lambda v: -v), X),
                np.where(np.isin(POSITIONS, [20, 40]), -X_NP, X_NP))


def test_updates_out_of_bounds_are_dropped_or_clipped() -> None:
    x = put(np.zeros(5, np.float32))
    idx = np.array([7, 1, -6])
    check_equal(x.at[idx].set(1.0), np.array([0, 1, 0, 0, 0], np.float32))
    check_equal(x.at[idx].add(1.0, mode="promise_in_bounds"),
                np.array([0, 1, 0, 0, 0], np.float32))
    check_equal(x.at[idx].add(1.0, mode="clip"), np.array([1, 1, 0, 0, 1], np.float32))
    check_equal(x.at[9].set(1.0), np.zeros(5, np.float32))
    check_equal(x.at[-1].set(2.0, wrap_negative_indices=False), np.zeros(5, np.float32))
    check_equal(traced(lambda x, i: x.at[i].set(3.0), x, put([1, 5], np.int32)),
                np.array([0, 3, 0, 0, 0], np.float32))


def test_update_dtypes() -> None:
    xi = put(np.zeros(3, np.int32))
    with pytest.warns(FutureWarning, match="scatter inputs have incompatible types: cannot "
                      "safely cast value from dtype=float32 to dtype=int32"):
        check_equal(xi.at[0].set(np.float32(3.7)), np.array([3, 0, 0], np.int32))
    x8 = put(np.zeros(3, np.int8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_equal(x8.at[1].set(300), np.array([0, 44, 0], np.int8))  # wraps, as in JAX
        check_equal(x8.at[1].add(np.int8(3)), np.array([0, 3, 0], np.int8))
        check_equal(put(np.zeros(2, np.float32)).at[0].set(np.float64(2.5)),
                    np.array([2.5, 0], np.float32))
    with pytest.warns(FutureWarning):
        check_equal(x8.at[1].set(3.5), np.array([0, 3, 0], np.int8))
    check_equal(xi.at[1].divide(2), np.array([0, 0, 0], np.float32))
    check_equal(put([1, 2, 3], np.int32).at[1].power(3), np.array([1, 8, 3], np.int32))
    weak = justjax.device_put(3.0)
    out = weak.at[()].add(1.0)
    assert out.weak_type and float(out) == 4.0
    assert not X.at[0].add(1.0).weak_type
    xb = put(np.zeros(3, bool))
    check_equal(xb.at[np.array([0, 2])].set(True), np.array([True, False, True]))
    with pytest.raises(ValueError, match=re.escape(
            "Incompatible types for broadcasting: input type=float32[3] and requested "
            "type=float32[2,4,5]")):
        X.at[:2].set(put(np.ones(3, np.float32)))


def test_update_helper_reprs() -> None:
    x = put(np.zeros(2, np.float32))
    assert repr(x.at) == "_IndexUpdateHelper(Array([0., 0.], dtype=float32))"
    assert repr(x.at[1]) == "_IndexUpdateRef(Array([0., 0.], dtype=float32), 1)"
    assert repr(x.at[1:2, None]) == ("_IndexUpdateRef(Array([0., 0.], dtype=float32), "
                                     "(slice(1, 2, None), None))")
    assert isinstance(x.at, indexing.IndexUpdateHelper)
    assert indexing._IndexUpdateRef.mul is indexing._IndexUpdateRef.multiply


# -- take and take_along_axis -------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("indices", [np.array(2), np.array([0, -1, 2]), np.array([[1, 0], [2, 2]])])
def test_take_matches_numpy(axis: Any, indices: np.ndarray) -> None:
    want = np.take(X_NP, indices, axis=axis)
    check_equal(justjax.numpy.take(X, put(indices), axis=axis), want)
    check_equal(traced(lambda x, i: justjax.numpy.take(x, i, axis=axis), X, put(indices)),
                want)
    for mode in ("clip", "wrap"):
        wild = indices * 7 - 3
        check_equal(justjax.numpy.take(X, put(wild), axis=axis, mode=mode),
                    np.take(X_NP, wild, axis=axis, mode=mode))


def test_take_fills_out_of_bounds() -> None:
    idx = put([0, 59, 60, -1, -61], np.int32)
    check_equal(justjax.numpy.take(X, idx), np.array([0, 59, np.nan, 59, np.nan], np.float32))
    check_equal(justjax.numpy.take(X, idx, fill_value=-1.0),
                np.array([0, 59, -1, 59, -1], np.float32))
    check_equal(justjax.numpy.take(put(np.arange(5, dtype=np.int32)), put([0, 7], np.int32)),
                np.array([0, -2**31], np.int32))
    check_equal(justjax.numpy.take(put(np.arange(5, dtype=np.uint8)), put([0, 7], np.int32)),
                np.array([0, 255], np.uint8))
    check_equal(justjax.numpy.take(put([True, False]), put([0, 7], np.int32)),
                np.array([True, True]))
    check_equal(justjax.numpy.take(X, put(np.zeros((0, 2), np.int32)), axis=1),
                np.zeros((3, 0, 2, 5), np.float32))
    empty = put(np.zeros((0, 3), np.float32))
    check_equal(justjax.numpy.take(empty, put(np.zeros(0, np.int32)), axis=0),
                np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis_matches_numpy(axis: int) -> None:
    rng = np.random.default_rng(axis + 5)
    for index_shape in [list(X_NP.shape), [1, 4, 5], [3, 1, 1], [3, 4, 1]]:
        index_shape[axis] = 2
        indices = rng.integers(-X_NP.shape[axis], X_NP.shape[axis], index_shape)
        want = np.take_along_axis(X_NP, indices, axis=axis)
        check_equal(justjax.numpy.take_along_axis(X, put(indices, np.int32), axis=axis), want)
        check_equal(traced(lambda x, i: justjax.numpy.take_along_axis(x, i, axis=axis), X,
                           put(indices, np.int8)), want)
    flat = np.array([3, -1, 59])
    check_equal(justjax.numpy.take_along_axis(X, put(flat), axis=None),
                np.take_along_axis(X_NP.ravel(), flat, axis=0))


def test_take_along_axis_out_of_bounds_modes() -> None:
    xi = put(np.arange(12, dtype=np.int32).reshape(3, 4))
    idx = put([[0], [5], [-1]], np.int32)
    check_equal(justjax.numpy.take_along_axis(xi, idx, axis=1),
                np.array([[0], [-2**31], [11]], np.int32))
    check_equal(justjax.numpy.take_along_axis(xi, idx, axis=1, mode="clip"),
                np.array([[0], [7], [11]], np.int32))
    check_equal(justjax.numpy.take_along_axis(xi, idx, axis=1, mode="promise_in_bounds"),
                np.array([[0], [7], [8]], np.int32))
    check_equal(justjax.numpy.take_along_axis(xi, idx, axis=1, mode="one_hot"),
                np.array([[0], [0], [11]], np.int32))
    check_equal(justjax.numpy.take_along_axis(xi, idx, axis=1, fill_value=-5),
                np.array([[0], [-5], [11]], np.int32))
    empty = put(np.zeros((2, 0), np.float32))
    check_equal(justjax.numpy.take_along_axis(empty, put(np.zeros((2, 3), np.int32)), axis=1),
                np.zeros((2, 3), np.float32))


# -- errors ------------------------------------------------------------------------------------

def _traced_mask(x, mask):
    return justjax.make_jaxpr(lambda x, m: x[m])(x, mask)


ERRORS = [
    ("too many indices", lambda: X[0, 0, 0, 0], IndexError,
     "Too many indices: array is 3-dimensional, but 4 were indexed"),
    ("two ellipses", lambda: X[..., 0, ...], IndexError,
     "an index can only have a single ellipsis ('...')"),
    ("float index", lambda: X[1.0], TypeError,
     "Indexer must have integer or boolean type, got indexer with type float64"),
    ("complex index", lambda: X[1j], TypeError,
     "Indexer must have integer or boolean type, got indexer with type complex128"),
    ("float array index", lambda: X[put([1.0], np.float32)], TypeError,
     "Indexer must have integer or boolean type, got indexer with type float32"),
    ("float list index", lambda: X[[1.0, 2.0],], TypeError,
     "Indexer must have integer or boolean type, got indexer with type float32"),
    ("string index", lambda: X["a"], TypeError,
     "JAX does not support string indexing; got idx='a'"),
    ("object index", lambda: X[object], IndexError,
     "only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer or boolean "
     "arrays are valid indices. Got <class 'object'>"),
    ("list index", lambda: X[[0, 1]], TypeError,
     "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
     "`arr[array(seq)]` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 "
     "for more information."),
    ("list of slices", lambda: X[[slice(None), 0]], TypeError,
     "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
     "`arr[tuple(seq)]` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 "
     "for more information."),
    ("mask shape", lambda: X[np.array([True, False])], IndexError,
     "boolean index did not match shape of indexed array in index 0: got (2,), expected [3]"),
    ("mask shape later", lambda: X[:, np.array([True, False])], IndexError,
     "boolean index did not match shape of indexed array in index 1: got (2,), expected [4]"),
    ("traced mask", lambda: _traced_mask(X, put([True, False, True])),
     errors.NonConcreteBooleanIndexError,
     "Array boolean indices must be concrete; got bool[3]\n\n"
     "See https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError"),
    ("traced scalar mask", lambda: _traced_mask(X, put(True)),
     errors.NonConcreteBooleanIndexError, "Array boolean indices must be concrete; got bool[]"),
    ("traced mask update", lambda: justjax.make_jaxpr(lambda x, m: x.at[m].set(0.0))(
        X, put([True, False, True])), errors.NonConcreteBooleanIndexError,
     "Array boolean indices must be concrete; got bool[3]"),
    ("traced slice", lambda: justjax.make_jaxpr(lambda x, i: x[i:])(X, put(1, np.int32)),
     IndexError, "Slice entries must be static integers. Got slice(JitTracer(int32[]), None, "
     "None) at position 0"),
    ("zero step", lambda: X[::0], ValueError, "slice step cannot be zero"),
    ("empty axis", lambda: put(np.zeros((0, 3), np.float32))[0], IndexError,
     "index is out of bounds for axis 0 with size 0"),
    ("index shapes", lambda: X[put([0, 1], np.int32), put([0, 1, 2], np.int32)], ValueError,
     "Incompatible shapes for broadcasting: shapes=[(2,), (3,)]"),
    ("fill value shape", lambda: X.at[put([0], np.int32)].get(mode="fill",
                                                              fill_value=np.ones(2)),
     ValueError, "fill_value argument to indexed get() must be a scalar"),
    ("unknown mode", lambda: X.at[put([0], np.int32)].get(mode="foo"), ValueError,
     'Unknown gather mode "foo"'),
    ("take mode", lambda: justjax.numpy.take(X, put([0], np.int32), mode="foo"), ValueError,
     "Invalid mode 'foo' for np.take"),
    ("take axis", lambda: justjax.numpy.take(X, put([0], np.int32), axis=3), ValueError,
     "axis 3 is out of bounds for array of dimension 3"),
    ("take list", lambda: justjax.numpy.take(X, [0, 1]), TypeError,
     "take requires ndarray or scalar arguments, got <class 'list'> at position 1."),
    ("take empty axis", lambda: justjax.numpy.take(put(np.zeros((0, 2), np.float32)),
                                                   put([0], np.int32), axis=0), IndexError,
     "Cannot do a non-empty jnp.take() from an empty axis."),
    ("take_along_axis ndim", lambda: justjax.numpy.take_along_axis(X, put([0], np.int32), 1),
     ValueError, "indices and arr must have the same number of dimensions; 1 vs. 3"),
    ("take_along_axis dtype", lambda: justjax.numpy.take_along_axis(
        X, put(np.zeros((1, 1, 1), np.float32)), 1), TypeError,
     "take_along_axis indices must be of integer type, got float32"),
    ("take_along_axis none", lambda: justjax.numpy.take_along_axis(
        X, put(np.zeros((1, 1, 1), np.int32)), None), ValueError,
     "take_along_axis indices must be 1D if axis=None, got shape (1, 1, 1)"),
]


@pytest.mark.parametrize("fun,exc,message", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_indexing_errors(fun, exc, message: str) -> None:
    with pytest.raises(exc) as info:
        fun()
    assert str(info.value).startswith(message), str(info.value)


X34 = put(np.zeros((3, 4), np.float32))
I21 = put(np.zeros((2, 1), np.int32))
G = lax.GatherDimensionNumbers
S = lax.ScatterDimensionNumbers
LAX_ERRORS = [
    ("gather offset order", lambda: lax.gather(X34, I21, G((1, 0), (), (0,)), (1, 4)),
     TypeError, "offset_dims in gather op must be sorted; got (1, 0)"),
    ("gather offset range", lambda: lax.gather(X34, I21, G((5,), (0,), (0,)), (1, 4)),
     TypeError, "Offset dimension 0 in gather op is out of bounds; got 5, but should have "
                "been in [0, 2)"),
    ("gather start_index_map", lambda: lax.gather(X34, I21, G((1,), (0,), (0, 1)), (1, 4)),
     TypeError, "Gather op has 2 elements in start_index_map and the bound of dimension "
                "index_vector_dim=1 of indices is 1. These two numbers must be equal."),
    ("gather collapse bound", lambda: lax.gather(X34, I21, G((1,), (0,), (0,)), (2, 4)),
     TypeError, "Gather op can only collapse slice dims with bound 1, but bound is 2 for index "
                "0 at position 0."),
    ("gather slice size", lambda: lax.gather(X34, I21, G((1,), (0,), (0,)), (1, 5)),
     TypeError, "Slice size at index 1 in gather op is out of range, must be within [0, 4 + 1), "
                "got 5."),
    ("gather components", lambda: lax.gather(X34, I21, G((1,), (), (0,)), (1, 4)), TypeError,
     "All components of the offset index in a gather op must either be a offset dimension or "
     "explicitly collapsed/batching; got len(slice_sizes)=2, output_slice_sizes=(1,), "
     "collapsed_slice_dims=(), operand_batching_dims=()."),
    ("gather batching count", lambda: lax.gather(X34, I21, G((), (1,), (1,), (0,), ()), (1, 1)),
     TypeError, "Gather op requires equal numbers of operand_batching_dims and "
                "start_indices_batching_dims, got (0,) and()."),
    ("gather batching shape", lambda: lax.gather(X34, I21, G((), (1,), (1,), (0,), (0,)),
                                                 (1, 1)),
     TypeError, "Gather op requires operand batching dimensions and indices batching "
                "dimensions to have the same shape, got (3,) and (2,)."),
    ("gather index dtype", lambda: lax.gather(X34, put(np.zeros((2, 1), np.float32)),
                                              G((1,), (0,), (0,)), (1, 4)),
     ValueError, "indices must have an integer type"),
    ("scatter rank", lambda: lax.scatter(X34, I21, put(np.zeros(2, np.float32)),
                                         S((1,), (0,), (0,))),
     TypeError, "Updates tensor must be of rank 2; got 1."),
    ("scatter window", lambda: lax.scatter(X34, I21, put(np.zeros((2, 5), np.float32)),
                                           S((1,), (0,), (0,))),
     TypeError, "Bounds of the window dimensions of updates must not exceed the bounds of the "
                "corresponding dimensions of operand. For dimension 1, updates bound is 5, "
                "operand bound is 4."),
    ("scatter bounds", lambda: lax.scatter(X34, I21, put(np.zeros((3, 4), np.float32)),
                                           S((1,), (0,), (0,))),
     TypeError, "Bounds of the scatter dimensions of updates must be the same as the bounds of "
                "the corresponding dimensions of scatter indices. For scatter dimension 0, "
                "updates bound is 3, indices bound is 2."),
    ("scatter window size", lambda: lax.scatter(X34, I21, put(np.zeros((2, 4), np.float32)),
                                                S((1,), (), (0,))),
     TypeError, "Scatter op has window of size 1; doesn't match operand of rank 2."),
    ("scatter dtype", lambda: lax.scatter_add(X34, I21, put(np.zeros((2, 4), np.int32)),
                                              S((1,), (0,), (0,))),
     TypeError, "lax.scatter requires arguments to have the same dtypes, got float32, int32."),
    ("dynamic_slice index dtypes", lambda: lax.dynamic_slice(X34, (np.int32(0), np.int16(0)),
                                                             (1, 1)),
     TypeError, "index arguments to dynamic_slice must be integers of the same type, got: "
                "int32, int16"),
    ("dynamic_slice sizes", lambda: lax.dynamic_slice(X34, (0, 1), (4, 2)), TypeError,
     "slice slice_sizes must be less than or equal to operand shape, got slice_sizes (4, 2) "
     "for operand shape (3, 4)."),
    ("dynamic_slice count", lambda: lax.dynamic_slice(X34, (0,), (1, 1)), ValueError,
     "Length of slice indices must match number of operand dimensions (1 vs (3, 4))"),
    ("dynamic_update_slice rank", lambda: lax.dynamic_update_slice(
        X34, put(np.zeros(3, np.float32)), (0, 0)), TypeError,
     "dynamic_update_slice update must have the same rank as operand, got update shape (3,) "
     "for operand shape (3, 4)."),
    ("dynamic_update_slice dtype", lambda: lax.dynamic_update_slice(
        X34, put(np.zeros((1, 1), np.int32)), (0, 0)), TypeError,
     "lax.dynamic_update_slice requires arguments to have the same dtypes, got float32, int32."),
    ("slice limit", lambda: lax.slice(X34, (0, 0), (4, 4)), TypeError,
     "slice limit_indices must be less than or equal to operand shape, got limit_indices "
     "(4, 4) for operand shape (3, 4)."),
    ("slice negative", lambda: lax.slice(X34, (-1, 0), (2, 4)), TypeError,
     "slice start_indices must have every element be nonnegative, got (-1, 0)."),
    ("slice order", lambda: lax.slice(X34, (2, 0), (1, 4)), TypeError,
     "slice limit_indices must be greater than or equal to start_indices, got start_indices "
     "(2, 0) and limit_indices (1, 4)."),
    ("slice rank", lambda: lax.slice(X34, (0,), (1,)), TypeError,
     "slice start_indices must have length equal to the number of dimensions of the operand, "
     "got indices (0,) for operand shape (3, 4)."),
    ("pad bad size", lambda: lax.pad(put(np.arange(5.0, dtype=np.float32)), np.float32(0),
                                     [(-4, -4, 0)]), ValueError,
     "Dimension size after padding is not at least 0, got result shape (-3,), for "
     "padding_config ((-4, -4, 0),) and operand shape (5,)"),
    ("pad interior", lambda: lax.pad(X34, np.float32(0), [(0, 0, -1), (0, 0, 0)]), ValueError,
     "interior padding in padding_config must be nonnegative, got padding_config "
     "((0, 0, -1), (0, 0, 0))"),
    ("pad dtype", lambda: lax.pad(X34, np.int32(0), [(0, 0, 0)] * 2), TypeError,
     "pad operand and padding_value must be same dtype: got float32 and int32."),
    ("pad config length", lambda: lax.pad(X34, np.float32(0), [(0, 0, 1)]), ValueError,
     "length of padding_config must equal the number of axes of operand, got padding_config "
     "((0, 0, 1),) for operand shape (3, 4)"),
    ("rev range", lambda: lax.rev(X34, (2,)), TypeError,
     "rev dimensions must all be less than operand ndim, got dimensions (2,) for operand "
     "ndim 2."),
    ("rev repeated", lambda: lax.rev(X34, (0, 0)), TypeError,
     "rev dimensions must be unique, got (0, 0)."),
    ("index_in_dim", lambda: lax.index_in_dim(X34, 5, 1), IndexError,
     "index 5 is out of bounds for axis 1 with size 4"),
]


@pytest.mark.parametrize("fun,exc,message", [e[1:] for e in LAX_ERRORS],
                         ids=[e[0] for e in LAX_ERRORS])
def test_lax_slicing_errors(fun, exc, message: str) -> None:
    with pytest.raises(exc) as info:
        fun()
    assert str(info.value) == message
    # Abstract evaluation raises the same error when tracing.
    with pytest.raises(exc) as info:
        justjax.make_jaxpr(lambda: fun())()
    assert str(info.value) == message


def test_gather_scatter_mode_parsing() -> None:
    mode = lax.GatherScatterMode
    assert mode.from_any(None) is mode.FILL_OR_DROP
    assert mode.from_any("fill") is mode.from_any("drop") is mode.FILL_OR_DROP
    assert mode.from_any("clip") is mode.CLIP
    assert mode.from_any("promise_in_bounds") is mode.PROMISE_IN_BOUNDS
    assert mode.from_any("one_hot") is mode.ONE_HOT
    assert mode.from_any(mode.CLIP) is mode.CLIP
    assert str(mode.CLIP) == "GatherScatterMode.CLIP"
    assert repr(mode.FILL_OR_DROP) == "<GatherScatterMode.FILL_OR_DROP: 2>"
    assert str(G((0,), (1,), (1,))) == (
        "GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), "
        "start_index_map=(1,), operand_batching_dims=(), start_indices_batching_dims=())")


# -- golden jaxprs (printed by real JAX 0.10.2) ------------------------------------------------

GOLDEN = [
    ('lambda x: x[1]', [((5,), 'float32')], """\
{ lambda ; a:f32[5]. let
    b:f32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
  in (c,) }"""),
    ('lambda x: x[::-1]', [((5,), 'float32')], """\
{ lambda ; a:f32[5]. let b:f32[5] = rev[dimensions=(0,)] a in (b,) }"""),
    ('lambda x: x[1:3, ::2, None]', [((4, 5, 6), 'float32')], """\
{ lambda ; a:f32[4,5,6]. let
    b:f32[2,3,6] = slice[
      limit_indices=(3, 5, 6)
      start_indices=(1, 0, 0)
      strides=(1, 2, 1)
    ] a
    c:f32[2,3,1,6] = broadcast_in_dim[broadcast_dimensions=(0, 1, 3)] b
  in (c,) }"""),
    ('lambda x: x[::-2]', [((4, 5, 6), 'float32')], """\
{ lambda ; a:f32[4,5,6]. let
    b:f32[2,5,6] = slice[
      limit_indices=(4, 5, 6)
      start_indices=(1, 0, 0)
      strides=(2, 1, 1)
    ] a
    c:f32[2,5,6] = rev[dimensions=(0,)] b
  in (c,) }"""),
    ('lambda x, i: x[i]', [((5,), 'float32'), ((), 'int32')], """\
{ lambda ; a:f32[5] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 5:i32[]
    e:i32[] = select_n c b d
    f:f32[1] = dynamic_slice[slice_sizes=(1,)] a e
    g:f32[] = squeeze[dimensions=(0,)] f
  in (g,) }"""),
    ('lambda x, i: x[i]', [((5,), 'float32'), ((2,), 'int32')], """\
{ lambda ; a:f32[5] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 5:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1,)
      unique_indices=False
    ] a f
  in (g,) }"""),
    ('lambda x, i: x[i, 1]', [((4, 5, 6), 'float32'), ((), 'int32')], """\
{ lambda ; a:f32[4,5,6] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 4:i32[]
    e:i32[] = select_n c b d
    f:bool[] = lt 1:i32[] 0:i32[]
    g:i32[] = add 1:i32[] 5:i32[]
    h:i32[] = select_n f 1:i32[] g
    i:bool[] = lt 0:i32[] 0:i32[]
    j:i32[] = add 0:i32[] 6:i32[]
    k:i32[] = select_n i 0:i32[] j
    l:f32[1,1,6] = dynamic_slice[slice_sizes=(1, 1, 6)] a e h k
    m:f32[6] = squeeze[dimensions=(0, 1)] l
  in (m,) }"""),
    ('lambda x, i: x[i, ::2]', [((4, 5, 6), 'float32'), ((), 'int32')], """\
{ lambda ; a:f32[4,5,6] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 4:i32[]
    e:i32[] = select_n c b d
    f:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    g:i32[3] = mul 2:i32[] f
    h:i32[3] = add 0:i32[] g
    i:i32[3,1] = broadcast_in_dim e
    j:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] h
    k:i32[3,2] = concatenate[dimension=1] i j
    l:f32[3,6] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1, 6)
      unique_indices=True
    ] a k
  in (l,) }"""),
    ('lambda x: x[:, [0,2], 1]', [((4, 5, 6), 'float32')], """\
{ lambda a:i32[2]; b:f32[4,5,6]. let
    c:bool[2] = lt a 0:i32[]
    d:i32[2] = add a 5:i32[]
    e:i32[2] = select_n c a d
    f:i32[2] = broadcast_in_dim 1:i32[]
    g:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] f
    h:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    i:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g
    j:i32[2,2] = concatenate[dimension=1] h i
    k:f32[4,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1, 2), start_index_map=(1, 2), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(4, 1, 1)
      unique_indices=False
    ] b j
  in (k,) }"""),
    ('lambda x: x[1, ::-1, np.array([1,2])]', [((4, 5, 6), 'float32')], """\
{ lambda a:i32[2] b:bool[2]; c:f32[4,5,6]. let
    d:i32[2] = add a 6:i32[]
    e:i32[2] = select_n b a d
    f:i32[2] = broadcast_in_dim 1:i32[]
    g:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] f
    h:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] 
    i:i32[5] = mul -1:i32[] h
    j:i32[5] = add 4:i32[] i
    k:i32[5] = rev[dimensions=(0,)] j
    l:i32[2,5,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g
    m:i32[2,5,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    n:i32[2,5,1] = broadcast_in_dim[broadcast_dimensions=(1,)] k
    o:i32[2,5,3] = concatenate[dimension=2] l m n
    p:f32[2,5] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1, 2), start_index_map=(0, 2, 1), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1, 1)
      unique_indices=False
    ] c o
    q:f32[2,5] = rev[dimensions=(1,)] p
  in (q,) }"""),
    ('lambda x: x[True]', [((4, 5, 6), 'float32')], """\
{ lambda a:i32[1] b:bool[1]; c:f32[4,5,6]. let
    d:i32[1] = add a 1:i32[]
    e:i32[1] = select_n b a d
    f:i32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[1,4,5,6] = broadcast_in_dim[broadcast_dimensions=(1, 2, 3)] c
    h:f32[1,4,5,6] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1, 2, 3), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 4, 5, 6)
      unique_indices=False
    ] g f
  in (h,) }"""),
    ('lambda x: x[np.array([True,False,True,False])]', [((4, 5, 6), 'float32')], """\
{ lambda a:i32[2] b:bool[2]; c:f32[4,5,6]. let
    d:i32[2] = add a 4:i32[]
    e:i32[2] = select_n b a d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2,5,6] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 5, 6)
      unique_indices=False
    ] c f
  in (g,) }"""),
    ('lambda x: x[np.array([1], np.uint8)]', [((3, 4), 'float32')], """\
{ lambda a:u8[1]; b:f32[3,4]. let
    c:i32[1] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:f32[1,4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 4)
      unique_indices=False
    ] b d
  in (e,) }"""),
    ('lambda x, i, j: x[i, :, j]', [((4, 5, 6), 'float32'), ((2,), 'int32'), ((2,), 'int32')], """\
{ lambda ; a:f32[4,5,6] b:i32[2] c:i32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 4:i32[]
    f:i32[2] = select_n d b e
    g:bool[2] = lt c 0:i32[]
    h:i32[2] = add c 6:i32[]
    i:i32[2] = select_n g c h
    j:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    k:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] i
    l:i32[2,2] = concatenate[dimension=1] j k
    m:f32[2,5] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 2), start_index_map=(0, 2), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 5, 1)
      unique_indices=False
    ] a l
  in (m,) }"""),
    ('lambda x, i, j: x[i, j]', [((4, 5), 'float32'), ((2, 1), 'int32'), ((3,), 'int32')], """\
{ lambda ; a:f32[4,5] b:i32[2,1] c:i32[3]. let
    d:bool[2,1] = lt b 0:i32[]
    e:i32[2,1] = add b 4:i32[]
    f:i32[2,1] = select_n d b e
    g:bool[3] = lt c 0:i32[]
    h:i32[3] = add c 5:i32[]
    i:i32[3] = select_n g c h
    j:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(0, 1)] f
    k:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] i
    l:i32[2,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] j
    m:i32[2,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] k
    n:i32[2,3,2] = concatenate[dimension=2] l m
    o:f32[2,3] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1)
      unique_indices=False
    ] a n
  in (o,) }"""),
    ('lambda x: x[None, np.array([0,1]), None, 1]', [((3, 4), 'float32')], """\
{ lambda a:i32[2] b:bool[2]; c:f32[3,4]. let
    d:i32[2] = add a 3:i32[]
    e:i32[2] = select_n b a d
    f:i32[2] = broadcast_in_dim 1:i32[]
    g:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] f
    h:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    i:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g
    j:i32[2,2] = concatenate[dimension=1] h i
    k:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1)
      unique_indices=False
    ] c j
    l:f32[2,1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] k
  in (l,) }"""),
    ('lambda x: x.at[1:3].set(0.0)', [((5,), 'float32')], """\
{ lambda ; a:f32[5]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[2] = broadcast_in_dim 0.0:f32[]
    d:f32[5] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a b c
  in (d,) }"""),
    ('lambda x, i, v: x.at[i].add(v)', [((5,), 'float32'), ((2,), 'int32'), ((2,), 'float32')], """\
{ lambda ; a:f32[5] b:i32[2] c:f32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 5:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[5] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = add i j in (k,) }
    ] a g c
  in (h,) }"""),
    ('lambda x: x.at[1].set(3.5)', [((3,), 'int8')], """\
{ lambda ; a:i8[3]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] c b 3.5:f32[]
    e:i8[3] = convert_element_type[new_dtype=int8 weak_type=False] d
  in (e,) }"""),
    ('lambda x: x.at[1].apply(lax.sin)', [((5,), 'float32')], """\
{ lambda ; a:f32[5]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[5] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = sin d in (f,) }
    ] a b 0.0:f32[]
  in (c,) }"""),
    ('lambda x: x.at[1].divide(2)', [((5,), 'int32')], """\
{ lambda ; a:i32[5]. let
    b:i32[5] = broadcast_in_dim 1:i32[]
    c:i32[1] = broadcast_in_dim 1:i32[]
    d:i32[5] = scatter-mul[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; e:i32[] f:i32[]. let g:i32[] = mul e f in (g,) }
    ] b c 2:i32[]
    h:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] a
    i:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] d
    j:f32[5] = div h i
  in (j,) }"""),
    ("lambda x: x.at[1].get(mode='fill')", [((3, 4), 'float32')], """\
{ lambda ; a:f32[3,4]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=nan
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1, 4)
      unique_indices=True
    ] a b
  in (c,) }"""),
    ('lambda x: x.at[-1].get(wrap_negative_indices=False)', [((3, 4), 'float32')], """\
{ lambda ; a:f32[3,4]. let
    b:f32[1,4] = dynamic_slice[slice_sizes=(1, 4)] a -1:i32[] 0:i32[]
    c:f32[4] = squeeze[dimensions=(0,)] b
  in (c,) }"""),
    ('lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1))', [((2, 3), 'float32'), ((2, 1), 'int32')], """\
{ lambda ; a:f32[2,3] b:i32[2,1]. let
    c:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1)
      unique_indices=False
    ] a b
  in (c,) }"""),
    ('lambda x, u, i: lax.dynamic_update_slice(x, u, (i,))', [((5,), 'float32'), ((2,), 'float32'), ((), 'int32')], """\
{ lambda ; a:f32[5] b:f32[2] c:i32[]. let
    d:bool[] = lt c 0:i32[]
    e:i32[] = add c 5:i32[]
    f:i32[] = select_n d c e
    g:f32[5] = dynamic_update_slice a b f
  in (g,) }"""),
    ('lambda x: lax.pad(x, 0.0, ((1, 2, 0),))', [((3,), 'float32')], """\
{ lambda ; a:f32[3]. let
    b:f32[6] = pad[padding_config=((1, 2, 0),)] a 0.0:f32[]
  in (b,) }"""),
]


@pytest.mark.parametrize("source,args,expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_jaxpr(source: str, args: list, expected: str) -> None:
    namespace = {"jnp": justjax.numpy, "lax": lax, "np": np}
    fun = eval(source, namespace)
    arrays = [put(np.zeros(shape, dtype)) for shape, dtype in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert str(justjax.make_jaxpr(fun)(*arrays)) == expected
