"""`jax.extend.core.primitives.closed_call_p` and `call_p`: calls of a jaxpr, transparent to
transforms (their values are the body's under jit, jvp, grad and vmap)."""
from __future__ import annotations

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax.extend.core.primitives import call_p, closed_call_p

BODY = jax.make_jaxpr(lambda x, y: (jnp.sin(x) * y, x + 1.0))(1.0, 2.0)


def _closed(x, y):
    return closed_call_p.bind(x, y, call_jaxpr=BODY)


def _open(x, y):
    return call_p.bind(x, y, call_jaxpr=BODY.jaxpr)


def _body(x, y):
    return [jnp.sin(x) * y, x + 1.0]


def test_values_and_transforms_match_the_body() -> None:
    x, y = jnp.float32(0.5), jnp.float32(3.0)
    for call in (_closed, _open):
        for got, want in [(call(x, y), _body(x, y)), (jax.jit(call)(x, y), _body(x, y))]:
            np.testing.assert_array_equal(got, want)
        got_jvp = jax.jvp(call, (x, y), (jnp.float32(1.0), jnp.float32(0.5)))
        want_jvp = jax.jvp(_body, (x, y), (jnp.float32(1.0), jnp.float32(0.5)))
        np.testing.assert_allclose(got_jvp[1], want_jvp[1], rtol=1e-6)
        grads = jax.grad(lambda a, b: call(a, b)[0], argnums=(0, 1))(x, y)
        np.testing.assert_allclose(grads, [3 * np.cos(0.5), np.sin(0.5)], rtol=1e-6)
        batched = jax.vmap(call)(jnp.arange(3.0), jnp.ones(3))
        np.testing.assert_allclose(batched[0], np.sin(np.arange(3.0)), rtol=1e-6)
        np.testing.assert_array_equal(batched[1], [1.0, 2.0, 3.0])
        jitted_grad = jax.jit(jax.grad(lambda a: call(a, y)[0] * call(a, y)[1]))(x)
        np.testing.assert_allclose(jitted_grad, 3 * (np.cos(0.5) * 1.5 + np.sin(0.5)),
                                   rtol=1e-6)


def test_staged_as_a_call_equation() -> None:
    """A closed_call equation prints its body as a nested jaxpr param."""
    assert str(jax.make_jaxpr(_closed)(1.0, 2.0)) == """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] = closed_call[
      call_jaxpr={ lambda ; e:f32[] f:f32[]. let
          g:f32[] = sin e
          h:f32[] = mul g f
          i:f32[] = add e 1.0:f32[]
        in (h, i) }
    ] a b
  in (c, d) }"""
