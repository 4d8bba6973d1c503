"""Data-parallel training with pmap: each of 4 virtual CPU devices takes a quarter of the
batch, the gradients are averaged across devices with `lax.pmean`, and every device applies
the same update. The result equals (to rounding) one step on the whole batch.

Run: `python examples/data_parallel.py`.
"""
from __future__ import annotations

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax import lax

DEVICES = 4
LEARNING_RATE = 0.1


def loss(params, x, y):
    w, b = params
    logits = x @ w + b
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))


def sgd(params, grads):
    return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def parallel_step(params, x, y):
    """One device's step: its shard's loss and gradient, averaged over the devices."""
    value, grads = jax.value_and_grad(loss)(params, x, y)
    grads = lax.pmean(grads, "batch")
    return lax.pmean(value, "batch"), sgd(params, grads)


def main() -> None:
    jax.config.update("jax_num_cpu_devices", DEVICES)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 64)]
    params = (rng.standard_normal((8, 3)).astype(np.float32) * 0.1, np.zeros(3, np.float32))

    # Shards: (devices, batch / devices, ...); the parameters are the same on every device.
    step = jax.pmap(parallel_step, axis_name="batch", in_axes=(None, 0, 0))
    value, new_params = step(params, x.reshape(DEVICES, -1, 8), y.reshape(DEVICES, -1, 3))

    whole_value, whole_grads = jax.jit(jax.value_and_grad(loss))(params, x, y)
    whole_params = sgd(params, whole_grads)
    for device in range(DEVICES):
        for got, want in zip(new_params, whole_params, strict=True):
            np.testing.assert_allclose(np.asarray(got[device]), np.asarray(want), rtol=1e-5,
                                       atol=1e-6)
    np.testing.assert_allclose(np.asarray(value), float(whole_value), rtol=1e-5)
    print(f"devices: {jax.devices()}")
    print(f"loss on the whole batch {float(whole_value):.6f}; pmapped step, per device: "
          f"{np.asarray(value).round(6).tolist()}")
    print("the pmapped step's parameters equal the single-device step's on every device")


if __name__ == "__main__":
    main()
