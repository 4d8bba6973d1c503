"""jax.experimental.ode.odeint (_src/ode.py): values and derivatives against JAX 0.10.2's
(recorded below; float32, so agreement to rounding, ~1e-5 relative), errors, transforms."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.experimental.ode import odeint

TOL = dict(rtol=2e-5, atol=2e-6)


def decay(y, t, k):
    return -k * y + jnp.sin(t)


TS = jnp.linspace(0.0, 3.0, 5)


def lotka(state, t, a, b):
    x, y = state["x"], state["y"]
    return {"x": a * x - b * x * y, "y": -y + x * y}


def test_values_as_jax():
    np.testing.assert_allclose(odeint(decay, 1.0, TS, 0.7),
                               [1.0, 0.81773907, 1.0059428, 1.1330696, 0.9353644], **TOL)
    out = odeint(lotka, {"x": 1.0, "y": 0.5}, jnp.linspace(0.0, 5.0, 6), 1.1, 0.4, rtol=1e-6,
                 atol=1e-6)
    np.testing.assert_allclose(out["x"], [1.0, 2.3510113, 2.490698, 0.37108064, 0.1650704,
                                          0.21293806], **TOL)
    np.testing.assert_allclose(out["y"], [0.5, 0.91179085, 5.790291, 6.7522826, 3.1121233,
                                          1.367374], **TOL)
    np.testing.assert_allclose(odeint(lambda y, t: y, 1.0, jnp.array([0.0, 1.0, 2.0]),
                                      hmax=0.1), [1.0, 2.7182815, 7.3890567], **TOL)


def test_adjoint_gradients_as_jax():
    np.testing.assert_allclose(jax.grad(lambda k: odeint(decay, 1.0, TS, k)[-1])(0.7),
                               -1.2830224, **TOL)
    np.testing.assert_allclose(jax.grad(lambda y0: odeint(decay, y0, TS, 0.7).sum())(1.0),
                               2.2709568, **TOL)
    np.testing.assert_allclose(jax.grad(lambda ts: odeint(decay, 1.0, ts, 0.7).sum())(TS),
                               [0.88967013, 0.10922144, 0.29333502, -0.01507554, -0.5136351],
                               rtol=2e-5, atol=1e-5)
    jac = jax.jacrev(lambda p: odeint(lotka, {"x": 1.0, "y": 0.5}, jnp.linspace(0.0, 2.0, 3),
                                      p[0], p[1])["x"])(jnp.array([1.1, 0.4]))
    np.testing.assert_allclose(jac, [[0.0, 0.0], [2.1739457, -1.3460554],
                                     [-1.655861, -2.4225447]], rtol=2e-5, atol=1e-5)
    # A closed-over value is differentiated too (closure_convert).
    w = jnp.array(2.0)
    np.testing.assert_allclose(jax.grad(lambda w: odeint(lambda y, t: -w * y, 1.0, TS)[-1])(w),
                               -0.0074362606, **TOL)


def test_gradient_against_finite_differences_in_x64():
    with jax.enable_x64(True):
        f = lambda k: odeint(decay, 1.0, jnp.linspace(0.0, 2.0, 4), k)[-1]
        eps = 1e-5
        numeric = (f(0.7 + eps) - f(0.7 - eps)) / (2 * eps)
        np.testing.assert_allclose(jax.grad(f)(0.7), numeric, rtol=1e-5)   # the solver's tolerance


def test_vmap_and_steps_limit():
    np.testing.assert_allclose(jax.vmap(lambda k: odeint(decay, 1.0, TS, k)[-1])(
        jnp.array([0.5, 1.0])), [1.2500762, 0.64023656], **TOL)
    # Few steps allowed: the solution stops short of the time asked (JAX: 0.3728; the
    # value depends on roundoff-level error estimates, so only its range is checked).
    out = odeint(lambda y, t: -y, jnp.ones(3), jnp.array([0.0, 1.0]), mxstep=3)
    assert out.shape == (2, 3) and 0.3 < float(out[1, 0]) < 0.45


def test_errors_as_jax():
    with pytest.raises(TypeError, match=r"t must be an array of floats, but got \[0 1 2\]."):
        odeint(decay, 1.0, jnp.arange(3), 0.7)
    with pytest.raises(TypeError, match="The contents of odeint \\*args must be arrays or "
                                        "scalars, but got a."):
        odeint(decay, 1.0, TS, "a")
