"""Property tests (Hypothesis) where inputs vary: the promotion lattice, broadcasting
arithmetic against NumPy, and basic indexing against NumPy."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import justjax as jax
import justjax.numpy as jnp
from justjax._src.core import dtypes
from tests.harness import x64_mode

# The narrow types (float8, int4 ...) promote only with Python scalars: the lattice's
# properties are about the types that promote with each other.
ALL_DTYPES = [np.dtype(d) for d in dtypes.ALL_TYPES
              if d not in dtypes.INTN_TYPES + dtypes.NARROW_FLOAT_TYPES]
dtype_strategy = st.sampled_from(ALL_DTYPES)
SETTINGS = settings(max_examples=60, deadline=None)


@SETTINGS
@given(dtype_strategy, dtype_strategy)
def test_promote_types_is_commutative(a: np.dtype, b: np.dtype) -> None:
    assert dtypes.promote_types(a, b) == dtypes.promote_types(b, a)


def test_promote_types_is_not_associative_where_jax_is_not() -> None:
    """A weak-float bound becomes float64 as a dtype, so grouping matters (as in JAX)."""
    promote = dtypes.promote_types
    assert promote(promote(np.int8, np.uint64), dtypes.bfloat16) == np.float64
    assert promote(np.int8, promote(np.uint64, dtypes.bfloat16)) == dtypes.bfloat16


@SETTINGS
@given(dtype_strategy, dtype_strategy)
def test_promotion_is_an_upper_bound(a: np.dtype, b: np.dtype) -> None:
    """Promoting the result with either input changes nothing (it is above both)."""
    joined = dtypes.promote_types(a, b)
    assert dtypes.promote_types(joined, a) == joined
    assert dtypes.promote_types(joined, b) == joined


@SETTINGS
@given(st.sampled_from(["int", "float", "complex"]), dtype_strategy, st.booleans())
def test_weak_scalars_keep_the_array_dtype_when_kind_allows(kind: str, dtype: np.dtype,
                                                          x64: bool) -> None:
    """A Python scalar never widens an array of its own kind or above (JAX's weak types)."""
    scalar = {"int": 1, "float": 1.0, "complex": 1j}[kind]
    order = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    with x64_mode(x64):
        result, weak = dtypes.result_type_and_weak(np.zeros(1, dtype), scalar)
        if order[dtypes.kind(dtype)] >= order[{"int": "i", "float": "f", "complex": "c"}[kind]]:
            assert result == dtypes.canonicalize_dtype(dtype) and not weak


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


@SETTINGS
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
       st.sampled_from([np.float32, np.int32]))
def test_broadcasting_arithmetic_matches_numpy(shapes_pair, dtype) -> None:
    (shape_x, shape_y), _ = shapes_pair
    rng = np.random.default_rng(0)
    x = rng.integers(-5, 6, shape_x).astype(dtype)
    y = rng.integers(1, 6, shape_y).astype(dtype)
    for fn, ref in ((jnp.add, np.add), (jnp.multiply, np.multiply), (jnp.maximum, np.maximum),
                    (jnp.floor_divide, np.floor_divide), (jnp.remainder, np.remainder)):
        got = fn(x, y)
        np.testing.assert_array_equal(np.asarray(got), ref(x, y))
        assert got.dtype == dtype


@st.composite
def basic_index(draw, shape: tuple[int, ...]):
    """A tuple of ints and slices (one per dimension), with `None`s inserted and the tail
    possibly replaced by an Ellipsis: an index NumPy accepts."""
    parts: list = []
    for size in shape:
        if draw(st.booleans()):
            parts.append(draw(st.integers(-size, size - 1)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0)))
            parts.append(slice(start, stop, step))
    if parts and draw(st.booleans()):
        parts = parts[:draw(st.integers(0, len(parts)))] + [Ellipsis]
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    return tuple(parts)


@SETTINGS
@given(st.data())
def test_basic_indexing_matches_numpy(data) -> None:
    shape = data.draw(shapes)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    index = data.draw(basic_index(shape))
    expected = x[index]
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[index]), expected)
    traced = jax.make_jaxpr(lambda a: a[index])(x)
    assert traced.out_avals[0].shape == expected.shape
