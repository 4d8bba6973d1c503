"""jax.experimental.sparse.BCOO (no batch or dense dimensions) against what JAX 0.10.2 gives
for the same calls (written here as literals)."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.experimental import sparse

M = jnp.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])


def test_fromdense_todense_and_padding() -> None:
    b = sparse.BCOO.fromdense(M)
    assert repr(b) == "BCOO(float32[2, 3], nse=3)"
    np.testing.assert_array_equal(b.data, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(b.indices, [[0, 1], [1, 0], [1, 2]])
    assert b.indices.dtype == np.int32 and b.indices_sorted and b.unique_indices
    assert (b.nse, b.n_batch, b.n_sparse, b.n_dense, b.ndim, b.size) == (3, 0, 2, 0, 2, 6)
    padded = sparse.BCOO.fromdense(M, nse=5)  # JAX pads with index `shape` and zeros
    np.testing.assert_array_equal(padded.data, [1.0, 2.0, 3.0, 0.0, 0.0])
    assert padded.indices.tolist() == [[0, 1], [1, 0], [1, 2], [2, 3], [2, 3]]
    np.testing.assert_array_equal(padded.todense(), M)
    np.testing.assert_array_equal(sparse.todense(padded), M)
    empty = sparse.BCOO.fromdense(jnp.zeros((2, 2)))
    assert empty.nse == 0 and empty.indices.shape == (0, 2)


def test_products_transpose_and_pytree() -> None:
    b = sparse.BCOO.fromdense(M)
    np.testing.assert_array_equal(b @ jnp.ones(3), [1.0, 5.0])
    np.testing.assert_array_equal(b @ jnp.ones((3, 2)), [[1.0, 1.0], [5.0, 5.0]])
    np.testing.assert_array_equal(jnp.ones(2) @ b, [2.0, 1.0, 3.0])
    assert b.T.indices.tolist() == [[1, 0], [0, 1], [2, 1]] and not b.T.indices_sorted
    leaves, treedef = jax.tree_util.tree_flatten(b)
    assert len(leaves) == 2
    np.testing.assert_array_equal(jax.jit(lambda s, v: s @ v)(b, jnp.arange(3.0)), [1.0, 6.0])
    grad = jax.grad(lambda d: (sparse.BCOO((d, b.indices), shape=b.shape)
                               @ jnp.arange(3.0)).sum())(b.data)
    np.testing.assert_array_equal(grad, [1.0, 0.0, 2.0])
    padded = sparse.BCOO.fromdense(M, nse=5)
    np.testing.assert_array_equal(padded @ jnp.arange(3.0), [1.0, 6.0])
    np.testing.assert_array_equal(jnp.arange(2.0) @ padded, [2.0, 0.0, 3.0])


def test_duplicates_add_and_elementwise() -> None:
    x = sparse.BCOO((jnp.array([1.0, 2.0]), jnp.array([[0, 1], [1, 1]])), shape=(2, 2))
    np.testing.assert_array_equal(x.todense(), [[0.0, 1.0], [0.0, 2.0]])
    np.testing.assert_array_equal((-x).data, [-1.0, -2.0])
    np.testing.assert_array_equal((x * 2).data, [2.0, 4.0])
    assert x.astype(jnp.int32).data.dtype == np.int32
    dup = sparse.BCOO((jnp.array([1.0, 2.0]), jnp.array([[0, 0], [0, 0]])), shape=(1, 1))
    np.testing.assert_array_equal(dup.todense(), [[3.0]])


def test_unsupported_layouts_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="no batch or dense dimensions"):
        sparse.BCOO.fromdense(M, n_batch=1)
    with pytest.raises(ValueError, match="do not index an array of shape"):
        sparse.BCOO((jnp.ones(2), jnp.zeros((2, 3), jnp.int32)), shape=(2, 2))
