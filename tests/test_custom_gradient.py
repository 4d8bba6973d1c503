"""jax.custom_gradient (in _src/transformations/autodiff.py): values and errors as JAX 0.10.2 gives them."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp


@jax.custom_gradient
def square(x):
    return x ** 2, lambda g: (g * x,)


def test_value_and_custom_gradient():
    # JAX 0.10.2: 9.0 3.0 1.0 [0. 1. 2.]
    assert float(square(3.0)) == 9.0
    assert float(jax.grad(square)(3.0)) == 3.0
    assert float(jax.grad(jax.grad(square))(3.0)) == 1.0
    np.testing.assert_array_equal(jax.vmap(jax.grad(square))(jnp.arange(3.0)), [0.0, 1.0, 2.0])
    assert float(jax.jit(jax.grad(square))(2.0)) == 2.0


def test_two_arguments_and_closure():
    @jax.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y * 10, g * x)

    gx, gy = jax.grad(h, (0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (30.0, 2.0)   # JAX 0.10.2


def test_jaxpr_as_jax():
    text = str(jax.make_jaxpr(jax.grad(square))(3.0))
    assert text == ("{ lambda ; a:f32[]. let\n    _:f32[] = integer_pow[y=2] a\n"
                    "    b:f32[] = mul 1.0:f32[] a\n  in (b,) }")


def test_single_cotangent_for_single_argument():
    @jax.custom_gradient
    def ident(x):
        return x, lambda g: g

    assert float(jax.grad(ident)(1.0)) == 1.0


def test_wrong_structure_error():
    @jax.custom_gradient
    def bad(x):
        return (x, x), lambda g: (g,)

    with pytest.raises(TypeError, match=r"bwd output structure PyTreeDef\(\(\(\*, \*\),\)\) "
                                        r"for primal input structure PyTreeDef\(\(\*,\)\)"):
        jax.grad(lambda x: bad(x)[0])(1.0)
