"""JAX itself, the way the client programs use it: a check of the client-test machinery that
runs on justjax before the client libraries do (jit, grad, vmap, random keys, scan).

Each public function is one program for `tests/clients/run_programs.py`; the records from
real JAX are `tests/clients/records/jax_core.json`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


def jit_grad() -> dict:
    """`jax.jit(jax.value_and_grad(f))` of a pytree of parameters."""

    def loss(params, x):
        return jnp.mean(jnp.tanh(x @ params["w"] + params["b"]) ** 2)

    params = {"w": jnp.array([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]]), "b": jnp.array([0.1, -0.2])}
    x = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)
    value, grads = jax.jit(jax.value_and_grad(loss))(params, x)
    return {"value": value, "grad_w": grads["w"], "grad_b": grads["b"]}


def vmap_random_scan() -> dict:
    """Random keys (split, normal, uniform), `jax.vmap` and `jax.lax.scan`."""
    key = jax.random.key(0)
    k1, k2 = jax.random.split(key)
    x = jax.random.normal(k1, (4, 3))
    u = jax.random.uniform(k2, (3,))
    rows = jax.vmap(lambda row: jnp.dot(row, u))(x)

    def step(carry, xi):
        carry = 0.5 * carry + xi
        return carry, carry.sum()

    final, sums = jax.lax.scan(step, jnp.zeros(3), x)
    return {"x": x, "u": u, "rows": rows, "final": final, "sums": sums,
            "key_data": jax.random.key_data(k2)}


def train_logistic_regression() -> dict:
    """Plain gradient descent on a logistic regression under jit: the loss falls."""
    kx, kw = jax.random.split(jax.random.key(1))
    x = jax.random.normal(kx, (32, 3))
    labels = (x @ jnp.array([1.0, -2.0, 0.5]) > 0).astype(jnp.float32)
    w = jax.random.normal(kw, (3,)) * 0.1

    def loss(w):
        logits = x @ w
        return jnp.mean(jnp.logaddexp(0.0, logits) - labels * logits)

    @jax.jit
    def step(w):
        value, g = jax.value_and_grad(loss)(w)
        return w - 0.5 * g, value

    losses = []
    for _ in range(10):
        w, value = step(w)
        losses.append(float(value))
    return {"losses": losses, "w": w}
