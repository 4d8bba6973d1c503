"""justjax.scipy.integrate.trapezoid: SciPy's values, JAX's dtypes and errors, jit, vmap,
grad."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy.integrate import trapezoid

Y = np.arange(12.).reshape(3, 4) ** 1.5
X = np.array([0., 0.5, 2., 2.5])


@pytest.mark.parametrize("kwargs", [{}, {"dx": 0.25}, {"axis": 0}, {"x": X},
                                    {"x": X[:3], "axis": 0}, {"x": Y ** 0.5, "axis": 0}])
def test_matches_scipy(kwargs: dict) -> None:
    expected = scipy.integrate.trapezoid(Y, **kwargs)
    got = trapezoid(jnp.array(Y, jnp.float32),
                    **{k: jnp.array(v) if k == "x" else v for k, v in kwargs.items()})
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_jax_doc_examples() -> None:
    """Recorded from JAX 0.10.2 (its docstring's examples): 13 and 43, float32."""
    y = jnp.array([1, 2, 3, 2, 3, 2, 1])
    assert trapezoid(y, dx=1.0).item() == 13.0
    result = trapezoid(y, jnp.array([0, 2, 5, 7, 10, 15, 20]))
    assert result.item() == 43.0 and result.dtype == jnp.float32


def test_transforms() -> None:
    np.testing.assert_array_equal(jax.grad(lambda y: trapezoid(y, dx=0.5))(jnp.arange(4.)),
                                  [0.25, 0.5, 0.5, 0.25])
    np.testing.assert_array_equal(jax.vmap(trapezoid)(jnp.arange(12.).reshape(3, 4)),
                                  [4.5, 16.5, 28.5])
    np.testing.assert_array_equal(jax.jit(trapezoid, static_argnames="axis")(
        jnp.arange(12.).reshape(3, 4), axis=0), [8., 10., 12., 14.])


def test_errors_are_jax() -> None:
    """As JAX's (recorded from JAX 0.10.2): `axis` is a static argument of a jitted
    function, lists are refused."""
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        trapezoid(jnp.arange(4.), axis=jnp.array(0))
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 1"):
        trapezoid(jnp.arange(4.), axis=3)
    with pytest.raises(TypeError, match="trapezoid requires ndarray or scalar arguments, got "
                                        "<class 'list'> at position 0."):
        trapezoid([1., 2.])
