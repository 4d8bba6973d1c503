"""Flax Linen as its documentation uses it (flax-linen.readthedocs.io: "Quick start", the
module and variables guides, `nn.scan`, `flax.training.train_state`).

Each public function is one program for `tests/clients/run_programs.py`: written for JAX, it
returns a small dict of results. Run with real JAX they give
`tests/clients/records/flax_linen.json`; under `python -m justjax run` they must give the same.
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class CNN(nn.Module):
    """The quick start's network (for 8x8 images): Conv, relu, avg_pool, Dense."""

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(features=4, kernel_size=(3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(features=16)(x)
        x = nn.relu(x)
        return nn.Dense(features=3)(x)


class BNNet(nn.Module):
    """Dense, BatchNorm (batch_stats collection), Dropout, Dense."""

    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Dense(8)(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.Dropout(rate=0.5, deterministic=not train)(x)
        return nn.Dense(2)(nn.relu(x))


def _inputs(shape: tuple[int, ...], seed: int = 100) -> jax.Array:
    return jax.random.normal(jax.random.key(seed), shape)


def dense_init_apply() -> dict:
    """`nn.Dense(...).init(key, x)` and `.apply(variables, x)`; the parameter tree."""
    model = nn.Dense(features=3)
    x = _inputs((2, 4))
    variables = model.init(jax.random.key(0), x)
    y = model.apply(variables, x)
    shapes = jax.tree_util.tree_map(lambda p: list(p.shape), variables)
    return {"kernel": variables["params"]["kernel"], "bias": variables["params"]["bias"],
            "y": y, "kernel_shape": shapes["params"]["kernel"],
            "collections": sorted(variables)}


def conv_and_compact_module() -> dict:
    """An `@nn.compact` module with `nn.Conv` and `nn.Dense`; a jitted apply; `self.param`
    in a custom layer."""

    class Scale(nn.Module):
        @nn.compact
        def __call__(self, x):
            scale = self.param("scale", nn.initializers.ones, (x.shape[-1],))
            return x * scale

    model = CNN()
    images = _inputs((2, 8, 8, 1))
    variables = model.init(jax.random.key(1), images)
    logits = jax.jit(model.apply)(variables, images)
    scale = Scale()
    scale_vars = scale.init(jax.random.key(2), jnp.ones((1, 3)))
    conv_kernel = variables["params"]["Conv_0"]["kernel"]
    return {"logits": logits, "conv_kernel_shape": list(conv_kernel.shape),
            "conv_kernel": conv_kernel[:, :, 0, 0], "modules": sorted(variables["params"]),
            "scaled": scale.apply(scale_vars, jnp.array([[1.0, 2.0, 3.0]]))}


def batch_norm_mutable() -> dict:
    """`nn.BatchNorm` in training: `apply(..., mutable=['batch_stats'])` returns the new
    statistics; `rngs={'dropout': key}` feeds the dropout; inference uses the averages."""
    model = BNNet()
    x = _inputs((6, 3)) * 3.0 + 1.0
    variables = model.init(jax.random.key(0), x, train=False)
    y, updates = model.apply(variables, x, train=True, mutable=["batch_stats"],
                             rngs={"dropout": jax.random.key(1)})
    stats = updates["batch_stats"]["BatchNorm_0"]
    variables = {"params": variables["params"], "batch_stats": updates["batch_stats"]}
    y_eval = model.apply(variables, x, train=False)
    return {"y_train": y, "mean": stats["mean"], "var": stats["var"], "y_eval": y_eval}


def scan_cell() -> dict:
    """`nn.scan` over time steps: a cell's parameters broadcast (`variable_broadcast=
    'params'`, `split_rngs={'params': False}`), the carry threaded through; also
    `nn.LSTMCell` under `nn.RNN`."""

    class Cell(nn.Module):
        @nn.compact
        def __call__(self, carry, x):
            carry = jnp.tanh(nn.Dense(4, name="h")(carry) + nn.Dense(4, name="x")(x))
            return carry, carry.sum(-1)

    ScanCell = nn.scan(Cell, variable_broadcast="params", split_rngs={"params": False},
                       in_axes=1, out_axes=1)
    xs = _inputs((2, 5, 3))
    carry = jnp.zeros((2, 4))
    variables = ScanCell().init(jax.random.key(0), carry, xs)
    final, ys = ScanCell().apply(variables, carry, xs)
    rnn = nn.RNN(nn.LSTMCell(features=4))
    rnn_vars = rnn.init(jax.random.key(1), xs)
    return {"final": final, "ys": ys,
            "h_kernel_shape": list(variables["params"]["h"]["kernel"].shape),
            "lstm": rnn.apply(rnn_vars, xs)[:, -1]}


def train_with_train_state() -> dict:
    """The quick start's loop: `train_state.TrainState.create(apply_fn, params, tx)`, a
    jitted step with `jax.value_and_grad` and `state.apply_gradients`; the loss falls."""
    model = CNN()
    images = _inputs((24, 8, 8, 1))
    labels = jnp.argmax(images.reshape(24, 4, 16).mean(-1)[:, :3], axis=-1)
    params = model.init(jax.random.key(0), images[:1])["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params,
                                          tx=optax.sgd(0.1, momentum=0.9))

    @jax.jit
    def train_step(state, images, labels):
        def loss_fn(params):
            logits = state.apply_fn({"params": params}, images)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        loss, grads = jax.value_and_grad(loss_fn)(state.params)
        return state.apply_gradients(grads=grads), loss

    losses = []
    for _ in range(10):
        state, loss = train_step(state, images, labels)
        losses.append(float(loss))
    return {"losses": losses, "step": state.step,
            "dense_bias": state.params["Dense_1"]["bias"]}
