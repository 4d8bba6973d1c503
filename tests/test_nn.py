"""justjax.nn behaviours beyond the op records: one_hot, masks, special values."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import errors


def test_one_hot_matches_jax() -> None:
    out = jax.nn.one_hot(jnp.array([0, 1, 2]), 3)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.eye(3))
    np.testing.assert_array_equal(jax.nn.one_hot(jnp.array([-1, 3]), 3), np.zeros((2, 3)))
    np.testing.assert_array_equal(jax.nn.one_hot(jnp.array([1]), 3, axis=0), [[0], [1], [0]])
    assert jax.nn.one_hot(jnp.array([1]), 2, dtype=jnp.int32).dtype == np.int32


def test_one_hot_needs_static_num_classes() -> None:
    with pytest.raises(errors.ConcretizationTypeError, match="num_classes"):
        jax.make_jaxpr(lambda n: jax.nn.one_hot(jnp.array([0]), n))(3)


def test_softmax_with_where_and_infinities() -> None:
    x = jnp.array([1.0, 2.0, 3.0, 4.0])
    mask = jnp.array([True, True, False, True])
    out = np.asarray(jax.nn.softmax(x, where=mask))
    e = np.exp(np.array([1.0, 2.0, 4.0]) - 4.0)
    np.testing.assert_allclose(out, [e[0] / e.sum(), e[1] / e.sum(), 0.0, e[2] / e.sum()],
                               rtol=1e-6)
    logs = np.asarray(jax.nn.log_softmax(x, where=mask))
    assert logs[2] == -np.inf
    assert np.isnan(np.asarray(jax.nn.softmax(jnp.array([1.0, np.inf])))).any()


def test_logsumexp_of_all_minus_inf_and_return_sign() -> None:
    assert float(jax.scipy.special.logsumexp(jnp.array([-np.inf, -np.inf]))) == -np.inf
    value, sign = jax.scipy.special.logsumexp(jnp.array([1.0, 2.0]), b=jnp.array([1.0, -2.0]),
                                              return_sign=True)
    expected = np.log(abs(np.exp(1.0) - 2 * np.exp(2.0)))
    np.testing.assert_allclose(float(value), expected, rtol=1e-6)
    assert float(sign) == -1.0
    assert np.isnan(float(jax.scipy.special.logsumexp(jnp.array([1.0, 2.0]),
                                                      b=jnp.array([1.0, -2.0]))))


def test_activations_keep_integer_inputs_as_jax_does() -> None:
    assert jax.nn.relu(jnp.array([-1, 2])).dtype == np.int32
    with pytest.raises(TypeError, match="logistic does not accept dtype int32"):
        jax.nn.sigmoid(jnp.array([0, 1]))
    assert jax.nn.gelu(jnp.array([1, 2])).dtype == np.float32
