"""The tracer leak checker (`jax.checking_leaks()`, `jax.check_tracer_leaks`). Which
transformations report a leak, and the message's shape, recorded from JAX 0.10.2."""
from __future__ import annotations

import re

import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax

leaked: list = []


def _leaky(x):
    leaked.append(x * 2)
    return x + 1


@pytest.fixture(autouse=True)
def _clear_leaked():
    # A fresh list each time: the session's frozen objects (conftest's gc.freeze) are not
    # searched for referrers.
    global leaked
    leaked = []
    yield
    leaked = []


@pytest.mark.parametrize("name,run", [
    ("jit", lambda: jax.jit(_leaky)(1.0)),
    ("make_jaxpr", lambda: jax.make_jaxpr(_leaky)(1.0)),
    ("eval_shape", lambda: jax.eval_shape(_leaky, 1.0)),
])
def test_jit_traces_report_leaks(name, run):
    with jax.checking_leaks(), pytest.raises(Exception) as info:
        run()
    message = str(info.value)
    assert type(info.value) is Exception
    assert message.startswith("Leaked trace DynamicJaxprTrace. Leaked tracer(s):\n\n"
                              "JitTracer(~float32[])\nThe error occurred while tracing the "
                              "function _leaky at ")
    assert re.search(r"\n<DynamicJaxprTracer \d+> is referred to by <list \d+>\[0\]", message)


def test_vmap_reports_leaks():
    with jax.check_tracer_leaks(True), pytest.raises(Exception) as info:
        jax.vmap(_leaky)(jnp.ones(3))
    message = str(info.value)
    assert message.startswith("Leaked trace BatchTrace. Leaked tracer(s):\n\n"
                              "VmapTracer(aval=float32[], batched=float32[3])\nThis "
                              "BatchTracer with object id ")
    assert "was created on line:\n" in message and "(_leaky)" in message


@pytest.mark.parametrize("name,run", [
    ("grad", lambda: jax.grad(_leaky)(1.0)),
    ("jvp", lambda: jax.jvp(_leaky, (1.0,), (1.0,))),
    ("vjp", lambda: jax.vjp(_leaky, 1.0)),
])
def test_differentiation_does_not_check(name, run):
    # As JAX 0.10.2: its linearize traces are not checked.
    with jax.checking_leaks():
        run()
    assert len(leaked) == 1


def test_off_by_default():
    jax.jit(_leaky)(3.0)
    assert len(leaked) == 1


def test_no_false_positives_in_common_programs():
    @jax.custom_vjp
    def cv(x):
        return jnp.sin(x)

    cv.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g,))

    def model(w, x):
        h = jnp.tanh(x @ w)
        h = jax.checkpoint(lambda h: jnp.sin(h) * 2)(h)
        c, ys = lax.scan(lambda c, y: (c + y.sum(), y * 2), 0.0, h)
        z = lax.cond(c > 0, lambda: cv(h).sum(), lambda: h.sum())
        z = z + lax.while_loop(lambda a: a < 5, lambda a: a + 1, 0.0)
        z = z + jax.jit(lambda a: a * 3)(ys).sum()
        return z + jax.vmap(lambda r: r.sum())(h).sum()

    w, x = jnp.ones((3, 4)), jnp.ones((2, 3))
    with jax.checking_leaks():
        expected = float(model(w, x))
        assert float(jax.jit(model)(w, x)) == pytest.approx(expected)
        assert jax.jit(jax.grad(model))(w, x).shape == (3, 4)
        assert jax.jit(jax.vmap(jax.grad(model), (None, 0)))(w, jnp.ones((5, 2, 3))).shape \
            == (5, 3, 4)
        assert jax.jacrev(model)(w, x).shape == (3, 4)
        converted, hoisted = jax.closure_convert(lambda a: a * w, 1.0)
        assert converted(1.0, *hoisted).shape == (3, 4)
