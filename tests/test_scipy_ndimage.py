"""justjax.scipy.ndimage.map_coordinates: JAX's values for every mode and order (JAX's
reading of SciPy's modes), SciPy's where they agree, dtypes, jit, vmap, grad, errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy.ndimage import map_coordinates

IMAGE = np.arange(12.0, dtype=np.float32).reshape(3, 4)
COORDS = [[-3.3, -1.5, -0.5, 0.2, 1.5, 2.5, 3.7, 6.2], [-2.2, 0.5, 4.5, 3.5, -0.7, 5.1, 1.2, 9.]]

# Recorded from JAX 0.10.2: map_coordinates(IMAGE, COORDS, order, mode, cval=-1.5) (float)
# and of IMAGE as int32 with cval=-1 (int), for each (mode, order).
JAX_VALUES = {
    ("constant", 0): ([-1.5] * 8, [-1] * 8),
    ("constant", 1): ([-1.5, -1.5, -1.5, 1.1500000953674316, 0.7500001192092896, -1.5, -1.5,
                       -1.5], [-1, -1, -1, 1, 1, -1, -1, -1]),
    ("nearest", 0): ([0.0, 1.0, 3.0, 3.0, 8.0, 11.0, 9.0, 11.0], [0, 1, 3, 3, 8, 11, 9, 11]),
    ("nearest", 1): ([0.0, 0.5, 3.0, 3.8000001907348633, 6.0, 11.0, 9.199999809265137, 11.0],
                     [0, 1, 3, 4, 6, 11, 9, 11]),
    ("wrap", 0): ([2.0, 5.0, 9.0, 0.0, 11.0, 1.0, 5.0, 1.0], [2, 5, 9, 0, 11, 1, 5, 1]),
    ("wrap", 1): ([4.199999809265137, 6.5, 4.5, 2.3000001907348633, 8.100000381469727,
                   5.099999904632568, 4.0, 1.7999992370605469], [4, 7, 5, 2, 8, 5, 4, 2]),
    ("mirror", 0): ([6.0, 9.0, 5.0, 2.0, 9.0, 5.0, 1.0, 11.0], [6, 9, 5, 2, 9, 5, 1, 11]),
    ("mirror", 1): ([5.0, 6.5, 3.5, 3.299999952316284, 6.699999809265137, 6.899999618530273,
                     2.4000000953674316, 10.200000762939453], [5, 7, 4, 3, 7, 7, 2, 10]),
    ("reflect", 0): ([9.0, 5.0, 2.0, 3.0, 8.0, 10.0, 5.0, 1.0], [9, 5, 2, 3, 8, 10, 5, 1]),
    ("reflect", 1): ([9.200000762939453, 2.5, 2.5, 3.8000001907348633, 6.0, 9.90000057220459,
                      6.400000095367432, 1.7999992370605469], [9, 3, 3, 4, 6, 10, 6, 2]),
}


@pytest.mark.parametrize("mode,order", JAX_VALUES)
def test_jax_values(mode: str, order: int) -> None:
    floats, ints = JAX_VALUES[mode, order]
    coords = [jnp.array(c) for c in COORDS]
    got = map_coordinates(jnp.array(IMAGE), coords, order=order, mode=mode, cval=-1.5)
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(got, floats, rtol=1e-6, atol=1e-6)
    got = map_coordinates(jnp.array(IMAGE, jnp.int32), coords, order=order, mode=mode, cval=-1)
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(got, ints)


# JAX's modes as SciPy names them (JAX's 'constant' and 'wrap' are SciPy's 'grid-' ones).
SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
              "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("mode", SCIPY_MODE)
@pytest.mark.parametrize("order", [0, 1])
def test_matches_scipy(mode: str, order: int) -> None:
    rng = np.random.default_rng(1)
    image = rng.normal(size=(5, 6)).astype(np.float32)
    # Away from half-integers, where order 0's rounding rule would decide.
    coords = np.round(rng.uniform(-8, 12, size=(2, 40)), 1) + 0.03
    expected = scipy.ndimage.map_coordinates(image, coords, order=order,
                                             mode=SCIPY_MODE[mode], cval=0.5)
    got = map_coordinates(jnp.array(image), [jnp.array(c) for c in coords], order=order,
                          mode=mode, cval=0.5)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_shapes_and_dtypes() -> None:
    """Recorded from JAX 0.10.2: its docstring's example, half-way rounding (away from 0),
    integer coordinates, broadcast coordinate arrays, float16 and bool inputs."""
    image = jnp.array(IMAGE)
    assert map_coordinates(image, [jnp.array([0.5, 1.5]), jnp.array([1.5, 2.5])],
                           order=1).tolist() == [3.5, 8.5]
    half = map_coordinates(jnp.arange(5.), [jnp.array([-0.5, 0.5, 1.5, 2.5, -1.5, 3.5])],
                           order=0)
    assert half.tolist() == [0.0, 1.0, 2.0, 3.0, 0.0, 4.0]
    assert map_coordinates(image, [jnp.array([0, 2]), jnp.array([1, 3])],
                           order=1).tolist() == [1.0, 11.0]
    got = map_coordinates(image, [jnp.array([[0.5], [1.5]]), jnp.array([1.5, 2.5])], order=1)
    assert got.tolist() == [[3.5, 4.5], [7.5, 8.5]]
    got = map_coordinates(image.astype(jnp.float16), [jnp.array([0.5]), jnp.array([0.25])],
                          order=1)
    assert got.dtype == jnp.float16 and got.tolist() == [2.25]
    got = map_coordinates(jnp.array([True, False]), [jnp.array([0.4, 0.6])], order=1)
    assert got.dtype == jnp.bool_ and got.tolist() == [True, True]


def test_transforms() -> None:
    """Recorded from JAX 0.10.2: gradients in the coordinates and in the image, vmap, jit."""
    image = jnp.array(IMAGE)
    grad = jax.grad(lambda c: map_coordinates(image, [c, c], order=1).sum())(
        jnp.array([0.3, 1.6]))
    np.testing.assert_allclose(grad, [5.0, 5.0], rtol=1e-6)
    grad = jax.grad(lambda im: map_coordinates(im, [jnp.array([0.3, 1.6])] * 2,
                                               order=1).sum())(image)
    np.testing.assert_allclose(grad, [[0.49, 0.21, 0., 0.], [0.21, 0.25, 0.24, 0.],
                                      [0., 0.24, 0.36, 0.]], atol=1e-6)
    got = jax.vmap(lambda c: map_coordinates(image, [c, c], order=1))(
        jnp.array([[0.3, 1.6], [0.1, 0.2]]))
    np.testing.assert_allclose(got, [[1.5, 8.0], [0.5, 1.0]], rtol=1e-6)
    got = jax.jit(lambda c: map_coordinates(image, [c, c], order=1, mode="wrap"))(
        jnp.array([0.3, 5.6]))
    np.testing.assert_allclose(got, [1.5, 4.8], rtol=1e-6)


def test_size_one_axes() -> None:
    """Every mode maps a length-1 axis to its one sample (recorded from JAX 0.10.2)."""
    for mode in ("nearest", "wrap", "mirror", "reflect"):
        got = map_coordinates(jnp.array([5.]), [jnp.array([0.3, 1.7, -2., -0.5])], order=1,
                              mode=mode)
        assert got.tolist() == [5.0] * 4
    got = map_coordinates(jnp.array([5.]), [jnp.array([0.3, 1.7, -2., -0.5])], order=1)
    assert got.tolist() == [3.5, 0.0, 0.0, 2.5]


def test_errors_are_jax() -> None:
    image = jnp.array(IMAGE)
    coords = [jnp.array([0.5, 1.2]), jnp.array([0.5, 2.5])]
    with pytest.raises(NotImplementedError, match="map_coordinates currently requires order<=1"):
        map_coordinates(image, coords, order=2)
    with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
        map_coordinates(image, coords, order=1, mode="grid-wrap")
    with pytest.raises(ValueError, match="coordinates must be a sequence of length input.ndim, "
                                         "but 1 != 2"):
        map_coordinates(image, coords[:1], order=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        map_coordinates(image, coords, order=0, cval=jnp.array(7.))
