"""Arrays of more dimensions than NumPy holds (64): JAX computes with them, and so does
justjax's native backend (their buffers are stored flat, their shapes are their avals'); only
turning one into a NumPy array fails, with JAX's error. The results are checked against NumPy
on the same values with the unit dimensions squeezed out."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends

pytestmark = pytest.mark.skipif(backends.get_backend().name != "llvm",
                                reason="the reference backend computes with NumPy arrays")

UNITS = (1,) * 63
SHAPE = (2, 3) + UNITS  # rank 65
VALUES = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def _flat(x) -> np.ndarray:
    return np.asarray(x.reshape(-1))


@pytest.fixture
def x():
    return jnp.asarray(VALUES).reshape(SHAPE)


def test_shape_dtype_and_creation(x):
    assert x.shape == SHAPE and x.ndim == 65 and x.dtype == jnp.float32
    zeros = jnp.zeros((1,) * 65)
    assert zeros.shape == (1,) * 65
    np.testing.assert_array_equal(_flat(zeros + 1), [1.0])
    np.testing.assert_array_equal(_flat(jnp.broadcast_to(jnp.float32(2), (1,) * 65)), [2.0])
    assert float(jnp.ones_like(x).sum()) == 6.0


CASES = {
    "add": (lambda x: x * 2 + 1, VALUES * 2 + 1),
    "index": (lambda x: x[1], VALUES[1]),
    "transpose": (lambda x: x.T, VALUES.T),
    "concatenate": (lambda x: jnp.concatenate([x, x], axis=1),
                    np.concatenate([VALUES, VALUES], axis=1)),
    "where": (lambda x: jnp.where(x > 2, x, -x), np.where(VALUES > 2, VALUES, -VALUES)),
    "cumsum": (lambda x: jnp.cumsum(x, axis=1), np.cumsum(VALUES, axis=1)),
    "max": (lambda x: x.max(axis=0), VALUES.max(axis=0)),
    "astype": (lambda x: x.astype(jnp.int32), VALUES.astype(np.int32)),
    "sort": (lambda x: jnp.sort(-x, axis=1), np.sort(-VALUES, axis=1)),
    "at_set": (lambda x: x.at[0, 1].set(9.0), np.array([[0, 9, 2], [3, 4, 5]], np.float32)),
    "expand_dims": (lambda x: jnp.expand_dims(x, 0).sum(axis=(0, 2)), VALUES.sum(axis=1)),
    "einsum": (lambda x: jnp.einsum("ab...,ab...->a", x, x), (VALUES * VALUES).sum(axis=1)),
    "vmap": (jax.vmap(lambda r: r.sum()), VALUES.sum(axis=1)),
    "jit": (jax.jit(lambda a: a * 2), VALUES * 2),
    "squeeze": (jnp.squeeze, VALUES),
    "stack": (lambda x: jnp.stack([x[0], x[1]]), VALUES),
    "take": (lambda x: jnp.take(x, jnp.array([2, 0]), axis=1), VALUES[:, [2, 0]]),
    "roll": (lambda x: jnp.roll(x, 1, axis=1), np.roll(VALUES, 1, axis=1)),
    "pad": (lambda x: jnp.pad(x, [(0, 0), (1, 0)] + [(0, 0)] * 63),
            np.pad(VALUES, [(0, 0), (1, 0)])),
    "reduce_window": (lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2) + UNITS,
                                                      (1,) * 65, "VALID"),
                      VALUES[:, :2] + VALUES[:, 1:]),
    "cond": (lambda x: jax.lax.cond(True, lambda a: a + 1, lambda a: a - 1, x), VALUES + 1),
    "scan": (lambda x: jax.lax.scan(lambda c, r: (c + r, None), jnp.zeros((3,) + UNITS),
                                    x)[0], VALUES.sum(axis=0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_computes_as_numpy_on_the_squeezed_values(x, name):
    fun, want = CASES[name]
    got = fun(x)
    np.testing.assert_allclose(_flat(got), want.reshape(-1), rtol=1e-6)
    assert got.dtype == want.dtype


def test_grad_and_random_bits():
    grad = jax.grad(lambda a: jnp.sin(a.reshape(SHAPE)).sum())(jnp.arange(6.0))
    np.testing.assert_allclose(np.asarray(grad), np.cos(np.arange(6.0)), rtol=1e-6)
    key = jax.random.key(0)
    high = jax.random.normal(key, (2,) + (1,) * 64)
    np.testing.assert_array_equal(_flat(high), np.asarray(jax.random.normal(key, (2,))))


def test_device_put_and_copies_keep_the_shape(x):
    on_device = jax.device_put(x, jax.devices()[0])
    assert on_device.shape == SHAPE and on_device.committed
    copied = jnp.array(x, copy=True)
    np.testing.assert_array_equal(_flat(copied + on_device), VALUES.reshape(-1) * 2)


@pytest.mark.parametrize("convert", [np.asarray, repr, str, lambda v: v.tolist(),
                                     lambda v: v.item()])
def test_turning_one_into_numpy_fails_as_in_jax(x, convert):
    with pytest.raises(ValueError, match=r"^number of dimensions must be within \[0, 64\]$"):
        convert(x)


def test_float_of_a_high_rank_array_is_jaxs_type_error():
    with pytest.raises(TypeError, match="got arr.ndim=65"):
        float(jnp.zeros((1,) * 65))
