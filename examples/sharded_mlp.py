"""An MLP trained on a 2x2 mesh of virtual CPU devices: the batch split over the "data" axis,
the hidden layer over the "model" axis (Megatron-style: the first weight's columns and the
second weight's rows). jit partitions the training step over the mesh, inserting the
collectives the splits need; the loss curve equals the one-device run's (to rounding).

Run: `python examples/sharded_mlp.py`.
"""
from __future__ import annotations

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P

STEPS = 8
LEARNING_RATE = 0.5


def loss(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"]
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return value, jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def train(params, x, y):
    losses = []
    for _ in range(STEPS):
        value, params = step(params, x, y)
        losses.append(float(value))
    return losses, params


def main() -> None:
    jax.config.update("jax_num_cpu_devices", 4)
    mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("data", "model"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 16)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 64)]
    params = {"w1": rng.standard_normal((16, 32)).astype(np.float32) * 0.3,
              "b1": np.zeros(32, np.float32),
              "w2": rng.standard_normal((32, 4)).astype(np.float32) * 0.3}
    layout = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None)}

    def put(value, spec):
        return jax.device_put(value, NamedSharding(mesh, spec))

    sharded_params = {name: put(value, layout[name]) for name, value in params.items()}
    sharded_losses, trained = train(sharded_params, put(x, P("data", None)),
                                    put(y, P("data", None)))
    losses, _ = train(params, x, y)
    np.testing.assert_allclose(sharded_losses, losses, rtol=1e-5)

    compiled = step.lower(sharded_params, put(x, P("data", None)),
                          put(y, P("data", None))).compile().as_text()
    collectives = {name: compiled.count(f" {name}(") for name in ("all-reduce", "all-gather")}
    print(f"mesh: {mesh}")
    for name, value in trained.items():
        print(f"{name}: {value.sharding.spec}, shards of shape "
              f"{value.addressable_shards[0].data.shape} on {len(value.sharding.device_set)} "
              "devices")
    print("w1's blocks and the devices holding them:")
    jax.debug.visualize_array_sharding(trained["w1"])
    print(f"collectives in the partitioned step: {collectives}")
    print("loss, sharded over the mesh:", [round(v, 6) for v in sharded_losses])
    print("loss, on one device:        ", [round(v, 6) for v in losses])


if __name__ == "__main__":
    main()
