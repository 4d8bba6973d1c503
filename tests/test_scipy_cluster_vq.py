"""justjax.scipy.cluster.vq.vq: SciPy's codes and distances, JAX's dtypes and errors, jit,
vmap, grad."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.cluster.vq

import justjax as jax
import justjax.numpy as jnp
import justjax.scipy as jsp
from justjax.scipy.cluster.vq import vq

OBS = np.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2]], np.float32)
BOOK = np.array([[1., 2., 3.], [2., 3., 4.], [3., 4., 5.], [4., 5., 6.]], np.float32)


def test_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(20, 3)).astype(np.float32)
    book = rng.normal(size=(5, 3)).astype(np.float32)
    code, dist = vq(jnp.array(obs), jnp.array(book))
    expected_code, expected_dist = scipy.cluster.vq.vq(obs, book)
    np.testing.assert_array_equal(code, expected_code)
    np.testing.assert_allclose(dist, expected_dist, rtol=1e-6)


def test_jax_values_and_dtypes() -> None:
    """Recorded from JAX 0.10.2 (its docstring's example; 1-D and integer inputs)."""
    code, dist = vq(jnp.array(OBS), jnp.array(BOOK))
    assert code.dtype == jnp.int32 and dist.dtype == jnp.float32
    np.testing.assert_array_equal(code, [0, 3])
    np.testing.assert_allclose(dist, [0.17320498824119568, 1.9209372997283936], rtol=1e-6)
    code, dist = vq(jnp.array([1, 5, 9]), jnp.array([0, 4, 10]))
    np.testing.assert_array_equal(code, [0, 1, 2])
    np.testing.assert_array_equal(dist, [1., 1., 1.])
    assert dist.dtype == jnp.float32
    code, dist = vq(jnp.array([[1.5]]), jnp.array([[1.], [2.]]))  # a tie: the first code
    assert code.tolist() == [0] and dist.tolist() == [0.5]


def test_transforms() -> None:
    """Recorded from JAX 0.10.2: vmap over observation sets, the gradient of the summed
    distances."""
    codes, dists = jax.vmap(vq, (0, None))(jnp.stack([jnp.array(OBS), jnp.array(OBS) + 1]),
                                           jnp.array(BOOK))
    np.testing.assert_array_equal(codes, [[0, 3], [1, 3]])
    np.testing.assert_allclose(dists, [[0.17320498824119568, 1.9209372997283936],
                                       [0.1732049137353897, 3.2388269901275635]], rtol=1e-6)
    grad = jax.grad(lambda o: vq(o, jnp.array(BOOK))[1].sum())(jnp.array(OBS))
    np.testing.assert_allclose(grad, [[0.5773507356643677, 0.5773500204086304,
                                       0.5773500204086304],
                                      [0.9891005754470825, -0.10411574691534042,
                                       0.10411574691534042]], rtol=1e-5)
    code, _ = jax.jit(vq)(jnp.array(OBS), jnp.array(BOOK))
    assert code.tolist() == [0, 3]


def test_errors_are_jax() -> None:
    with pytest.raises(ValueError, match="Observation and code_book should have the same rank"):
        vq(jnp.array(OBS), jnp.array(BOOK[0]))
    with pytest.raises(ValueError, match="ndim different than 1 or 2 are not supported"):
        vq(jnp.array(OBS)[None], jnp.array(BOOK)[None])
    with pytest.raises(TypeError, match="scipy.cluster.vq.vq requires ndarray or scalar "
                                        "arguments, got <class 'list'> at position 0."):
        vq([[1.]], jnp.array(BOOK))


def test_package_attributes() -> None:
    """As JAX's: jax.scipy.cluster.vq is the module, reached from jax.scipy."""
    assert jsp.cluster.vq.vq is vq
