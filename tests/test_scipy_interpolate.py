"""justjax.scipy.interpolate.RegularGridInterpolator: SciPy's values (linear, nearest, fill
values, trailing value axes), JAX's dtypes, errors and pytree; jit, vmap, grad."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.interpolate

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy.interpolate import RegularGridInterpolator

GRID = (np.array([0., 1., 3., 4.5]), np.array([-1., 0., 2.]))
VALUES = np.arange(24.).reshape(4, 3, 2) ** 1.3


def _pair(method: str, fill_value: float | None):
    ours = RegularGridInterpolator(tuple(jnp.array(g) for g in GRID), jnp.array(VALUES),
                                   method=method, fill_value=fill_value)
    theirs = scipy.interpolate.RegularGridInterpolator(GRID, VALUES, method=method,
                                                       bounds_error=False,
                                                       fill_value=fill_value)
    return ours, theirs


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, -7.0, None])
def test_matches_scipy(method: str, fill_value: float | None) -> None:
    rng = np.random.default_rng(0)
    points = np.stack([rng.uniform(-1, 5.5, 30), rng.uniform(-2, 3, 30)], axis=-1)
    ours, theirs = _pair(method, fill_value)
    got = ours(jnp.array(points))
    assert got.shape == (30, 2) and got.dtype == jnp.float32
    np.testing.assert_allclose(got, theirs(points), rtol=1e-5, atol=1e-4)


def test_point_forms() -> None:
    """A (..., N) array, a tuple of coordinate arrays, and the method given at the call."""
    ours, theirs = _pair("linear", np.nan)
    points = np.array([[[0.5, 0.5], [2., 1.]], [[4., -0.5], [1., 1.5]]])
    np.testing.assert_allclose(ours(jnp.array(points)), theirs(points), rtol=1e-5)
    xs, ys = jnp.array([0.5, 2.]), jnp.array([0.5, 1.])
    np.testing.assert_allclose(ours((xs, ys)), theirs((np.asarray(xs), np.asarray(ys))),
                               rtol=1e-5)
    np.testing.assert_allclose(ours(jnp.array(points), method="nearest"),
                               theirs(points, method="nearest"), rtol=1e-5)


def test_jax_values() -> None:
    """Recorded from JAX 0.10.2 (its docstring's example, points outside, fill values)."""
    points = (jnp.array([1, 2, 3]), jnp.array([4, 5, 6]))
    values = jnp.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]])
    interp = RegularGridInterpolator(points, values)
    got = interp(jnp.array([[1.5, 4.5], [2.2, 5.8]]))
    assert got.dtype == jnp.float32 and got.tolist() == [30.0, 64.0]
    got = interp(jnp.array([[0.5, 4.5], [2.2, 6.8], [3., 6.]]))
    assert np.isnan(got[:2]).all() and got[2] == 90.0
    got = interp(jnp.array([[1.5, 4.5], [2.2, 5.8], [2.5, 5.5]]), method="nearest")
    assert got.tolist() == [10.0, 60.0, 50.0]
    assert interp((jnp.array([1.5, 2.5]), jnp.array([4.2, 5.9]))).tolist() == [27.0, 74.0]
    assert interp(jnp.array([1.5, 4.5])).tolist() == [30.0]
    outside = jnp.array([[0.5, 4.5], [3.5, 6.5]])
    assert RegularGridInterpolator(points, values, fill_value=None)(outside).tolist() == \
        [0.0, 110.0]
    assert RegularGridInterpolator(points, values, fill_value=3)(outside).tolist() == [3.0, 3.0]


def test_transforms_and_pytree() -> None:
    """Recorded from JAX 0.10.2: the interpolator is a pytree (grid, values, fill value),
    passed through jit and built under vmap; gradients in the points."""
    grid = (jnp.array([0., 1., 3.]), jnp.array([0., 1., 2., 4.]))
    interp = RegularGridInterpolator(grid, jnp.arange(24.).reshape(3, 4, 2))
    leaves, treedef = jax.tree_util.tree_flatten(interp)
    assert [leaf.shape for leaf in leaves] == [(3,), (4,), (3, 4, 2), ()]
    rebuilt = jax.tree_util.tree_unflatten(treedef, leaves)
    assert (rebuilt.method, rebuilt.bounds_error) == ("linear", False)
    points = jnp.array([[0.5, 0.5], [2., 3.]])
    got = jax.jit(lambda i, x: i(x))(interp, points)
    assert got.tolist() == [[5.0, 6.0], [17.0, 18.0]]
    got = jax.vmap(lambda v: RegularGridInterpolator(grid[:1], v)(jnp.array([[0.5], [2.]])))(
        jnp.arange(6.).reshape(2, 3))
    assert got.tolist() == [[0.5, 1.5], [3.5, 4.5]]
    grad = jax.grad(lambda x: interp(x).sum())(points)
    assert grad.tolist() == [[16.0, 4.0], [8.0, 2.0]]


def test_errors_are_jax() -> None:
    """Recorded from JAX 0.10.2."""
    points = (jnp.array([1, 2, 3]), jnp.array([4, 5, 6]))
    values = jnp.arange(9).reshape(3, 3)
    interp = RegularGridInterpolator(points, values)
    with pytest.raises(ValueError, match="fill_value must be either 'None' or of a type "
                                         "compatible with values"):
        RegularGridInterpolator(points, values, fill_value=1j)
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(points, values, method="cubic")
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        interp(jnp.array([[1.5, 4.5]]), method="cubic")
    with pytest.raises(NotImplementedError, match="`bounds_error` takes no effect under JIT"):
        RegularGridInterpolator(points, values, bounds_error=True)
    with pytest.raises(ValueError, match="there are 3 point arrays, but values has 2 "
                                         "dimensions"):
        RegularGridInterpolator(points + (jnp.array([1, 2]),), values)
    with pytest.raises(ValueError, match="the requested sample points xi have dimension 3, but "
                                         "this RegularGridInterpolator has dimension 2"):
        interp(jnp.array([[1.5, 4.5, 1.]]))
    with pytest.raises(TypeError, match="RegularGridInterpolator requires ndarray or scalar "
                                        "arguments, got <class 'list'> at position 0."):
        RegularGridInterpolator([[1, 2, 3], [4, 5, 6]], values)
