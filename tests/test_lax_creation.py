"""Tests of `lax.full`, `lax.full_like` (`_src/lax/creation.py`), `lax.broadcast_shapes`
(`_src/lax/utils.py`) and `lax.dtype` (`_src/core/dtypes.py`).

Values, dtypes, weak types, messages and golden jaxprs are read off JAX 0.10.2.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax


def _described(x):
    return x.shape, str(x.dtype), x.aval.weak_type, np.asarray(x).tolist()


@pytest.mark.parametrize("call,expected", [
    (lambda: lax.full((2,), 1.0), ((2,), "float32", True, [1.0, 1.0])),
    (lambda: lax.full(3, 2), ((3,), "int32", True, [2, 2, 2])),
    (lambda: lax.full((2,), True), ((2,), "bool", False, [True, True])),
    (lambda: lax.full((2,), 1, jnp.float16), ((2,), "float16", False, [1.0, 1.0])),
    (lambda: lax.full((2,), 1.0, sharding=None), ((2,), "float32", True, [1.0, 1.0])),
    (lambda: lax.full_like(jnp.ones(2), 3), ((2,), "float32", False, [3.0, 3.0])),
    (lambda: lax.full_like(2.0, 3), ((), "float32", True, 3.0)),
    (lambda: lax.full_like(np.ones(2, np.int64), 3), ((2,), "int32", False, [3, 3])),
    (lambda: lax.full_like(jnp.ones(2), 3, jnp.int8, (1, 2)), ((1, 2), "int8", False, [[3, 3]])),
])
def test_full_and_full_like(call, expected) -> None:
    assert _described(call()) == expected


def test_full_errors_and_jaxpr() -> None:
    with pytest.raises(TypeError, match=r"^full must be called with scalar fill_value, got "
                                        r"fill_value.shape \(2,\).$"):
        lax.full((2,), jnp.ones(2))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of "
                                        "integer type"):
        lax.full((2.0,), 1)
    assert str(jax.make_jaxpr(lambda: lax.full((2, 3), 1.0))()) == (
        "{ lambda ; . let a:f32[2,3] = broadcast_in_dim 1.0:f32[] in (a,) }")
    keys = lax.full((2,), 7, jax.random.key(0).dtype)
    np.testing.assert_array_equal(jax.random.key_data(keys), [[7, 7], [7, 7]])


@pytest.mark.parametrize("shapes,expected", [
    (((2, 1), (3,)), (2, 3)),
    (((1,),), (1,)),
    (((2,), (1, 3, 1)), (1, 3, 2)),
    (((0,), (1,)), (0,)),
    ((np.array([2, 1]), (3,)), (2, 3)),
])
def test_broadcast_shapes(shapes, expected) -> None:
    assert lax.broadcast_shapes(*shapes) == expected


@pytest.mark.parametrize("shapes,error,message", [
    (((2,), (3,)), ValueError, "Incompatible shapes for broadcasting: shapes=[(2,), (3,)]"),
    (((2,), [3]), ValueError, "Incompatible shapes for broadcasting: shapes=[(2,), [3]]"),
    (((0,), (2,)), ValueError, "Incompatible shapes for broadcasting: shapes=[(0,), (2,)]"),
    (((2,), 3), TypeError, "object of type 'int' has no len()"),
    (((2,), (-1,)), TypeError, "Only non-negative indices are allowed when broadcasting static "
                               "shapes, but got shape (-1,)."),
    (((2.0,), (2,)), TypeError, "Shapes must be 1D sequences of concrete values of integer "
                                "type, got (2.0,)."),
])
def test_broadcast_shapes_errors(shapes, error, message) -> None:
    with pytest.raises(error) as info:
        lax.broadcast_shapes(*shapes)
    assert str(info.value) == message


def test_jnp_broadcast_shapes_takes_ints() -> None:
    assert jnp.broadcast_shapes() == ()
    assert jnp.broadcast_shapes(2, (3, 1)) == (3, 2)
    with pytest.raises(ValueError, match=r"shapes=\[\(2,\), \(3,\)\]$"):
        jnp.broadcast_shapes((2,), [3])


@pytest.mark.parametrize("value,expected", [
    (1.0, "float32"), (np.float64, "float32"), ("float64", "float32"), (int, "int32"),
    (True, "bool"), (3 + 1j, "complex64"), (jnp.ones(2), "float32"),
    (np.ones(2, np.int8), "int8"), (jnp.bfloat16, "bfloat16"),
])
def test_dtype(value, expected) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # explicit 64-bit dtypes warn without x64
        assert lax.dtype(value) == np.dtype(expected)


def test_dtype_errors() -> None:
    with pytest.raises(ValueError, match=r"^Invalid argument to dtype: None.$"):
        lax.dtype(None)
    with pytest.raises(TypeError, match=r"^Value 'S' with dtype \|S0 is not a valid JAX array "
                                        r"type. Only arrays of numeric types are supported by "
                                        r"JAX.$"):
        lax.dtype("S")
    with pytest.raises(TypeError, match=r"^Cannot determine dtype of \[1, 2\]$"):
        lax.dtype([1, 2])
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in "
                                         "dtype is not available"):
        lax.dtype(np.float64)


def test_clamp_is_weak_only_when_all_arguments_are():
    # JAX 0.10.2: a weak operand between strong bounds gives a strong result.
    f32 = jnp.float32
    assert not jax.eval_shape(lambda x: jax.lax.clamp(f32(0), x, f32(1)), 0.5).weak_type
    assert jax.eval_shape(lambda x: jax.lax.clamp(0., x, 1.), 0.5).weak_type
