"""Flax NNX as its documentation uses it (flax.readthedocs.io: "Flax basics", the MNIST
tutorial, "Transforms", the Linen-to-NNX guide's scan over layers, the API reference).

Each public function is one program for `tests/clients/run_programs.py`: written for JAX, it
returns a small dict of results. Run with real JAX they give
`tests/clients/records/flax_nnx.json`; under `python -m justjax run` they must give the same.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    """Linear, BatchNorm, Dropout, Linear (the "Flax basics" model)."""

    def __init__(self, din: int, dmid: int, dout: int, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(din, dmid, rngs=rngs)
        self.bn = nnx.BatchNorm(dmid, rngs=rngs)
        self.dropout = nnx.Dropout(0.2, rngs=rngs)
        self.linear2 = nnx.Linear(dmid, dout, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = nnx.relu(self.dropout(self.bn(self.linear1(x))))
        return self.linear2(x)


class CNN(nnx.Module):
    """The MNIST tutorial's network, for 8x8 single-channel images."""

    def __init__(self, *, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(1, 4, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(4, 8, kernel_size=(3, 3), rngs=rngs)
        self.linear = nnx.Linear(8 * 2 * 2, 3, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = nnx.avg_pool(nnx.relu(self.conv1(x)), window_shape=(2, 2), strides=(2, 2))
        x = nnx.avg_pool(nnx.relu(self.conv2(x)), window_shape=(2, 2), strides=(2, 2))
        return self.linear(x.reshape(x.shape[0], -1))


def _inputs(shape: tuple[int, ...], seed: int = 100) -> jax.Array:
    return jax.random.normal(jax.random.key(seed), shape)


def linear_and_conv() -> dict:
    """`nnx.Linear` and `nnx.Conv` built with `nnx.Rngs(0)`: their parameters and outputs."""
    rngs = nnx.Rngs(0)
    linear = nnx.Linear(3, 4, rngs=rngs)
    conv = nnx.Conv(2, 3, kernel_size=(3, 3), rngs=rngs)
    strided = nnx.Conv(2, 2, kernel_size=(2, 2), strides=2, padding="VALID", use_bias=False,
                       rngs=rngs)
    x = _inputs((2, 3))
    image = _inputs((1, 5, 5, 2), seed=101)
    return {"kernel": linear.kernel[...], "bias": linear.bias[...], "linear": linear(x),
            "conv_kernel_shape": list(conv.kernel.shape), "conv": conv(image)[0, :2, :2],
            "strided": strided(image), "strided_has_bias": strided.bias is not None}


def batch_norm_train_eval() -> dict:
    """`nnx.BatchNorm`: training mode updates the batch statistics; after `model.eval()`
    they normalise."""
    bn = nnx.BatchNorm(3, momentum=0.9, rngs=nnx.Rngs(0))
    x = _inputs((8, 3)) * 2.0 + 1.0
    y_train = bn(x)
    bn(x * 0.5)
    mean, var = bn.mean[...], bn.var[...]
    bn.eval()
    y_eval = bn(x)
    return {"y_train": y_train[:2], "mean": mean, "var": var, "y_eval": y_eval[:2],
            "use_running_average": bool(bn.use_running_average)}


def dropout_with_rngs() -> dict:
    """`nnx.Dropout` draws from the 'dropout' stream of its `nnx.Rngs`: two calls give
    different masks; deterministic mode passes through; an explicit `rngs` at call time."""
    dropout = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=1))
    x = jnp.ones((2, 6))
    first, second = dropout(x), dropout(x)
    dropout.eval()
    off = dropout(x)
    call_rngs = nnx.Dropout(0.25)(x, rngs=nnx.Rngs(dropout=7))
    return {"first": first, "second": second, "deterministic": off, "call_rngs": call_rngs}


def optimizer_train_step() -> dict:
    """The MNIST tutorial's train step: `nnx.Optimizer(model, optax.adamw(...),
    wrt=nnx.Param)`, `nnx.value_and_grad` with aux, in-place `optimizer.update` under
    `nnx.jit`; the batch statistics change as state."""
    model = MLP(4, 8, 2, rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adamw(0.01, 0.9), wrt=nnx.Param)
    x = _inputs((16, 4))
    labels = (x[:, 0] > 0).astype(jnp.int32)

    def loss_fn(model: MLP):
        logits = model(x)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, logits

    @nnx.jit
    def train_step(model: MLP, optimizer: nnx.Optimizer):
        (loss, logits), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model)
        optimizer.update(model, grads)
        return loss, jnp.mean(jnp.argmax(logits, -1) == labels)

    history = [train_step(model, optimizer)]
    # The running mean after the first step only: BatchNorm cancels linear1's bias, whose
    # gradient is then rounding noise that Adam scales to full steps, so later means depend
    # on the sign of that noise (JAX and justjax round differently).
    bn_mean = model.bn.mean[...]
    history += [train_step(model, optimizer) for _ in range(2)]
    return {"losses": [float(loss) for loss, _ in history],
            "accuracy": [float(acc) for _, acc in history],
            "step": optimizer.step[...], "bn_mean": bn_mean,
            "linear2_bias": model.linear2.bias[...]}


def grad_split_merge() -> dict:
    """`nnx.grad` gives an `nnx.State` of gradients; `nnx.split`/`nnx.merge` round-trip a
    model through `jax.jit` as a pure pytree; `nnx.state` and `nnx.update`."""
    model = nnx.Linear(3, 2, rngs=nnx.Rngs(1))
    x = _inputs((4, 3))

    def loss_fn(model):
        return jnp.mean(model(x) ** 2)

    grads = nnx.grad(loss_fn)(model)
    graphdef, state = nnx.split(model)

    @jax.jit
    def forward(state, x):
        return nnx.merge(graphdef, state)(x)

    out = forward(state, x)
    params = nnx.state(model, nnx.Param)
    doubled = jax.tree_util.tree_map(lambda p: p * 2, params)
    nnx.update(model, doubled)
    return {"grad_kernel": grads["kernel"][...], "grad_bias": grads["bias"][...],
            "pure_forward": out, "updated_kernel": model.kernel[...],
            "num_state_leaves": len(jax.tree_util.tree_leaves(state))}


def scan_over_layers() -> dict:
    """The Linen-to-NNX guide's MLP of blocks: `nnx.split_rngs` + `nnx.vmap` create a
    stack of blocks (each with its own dropout key), `nnx.scan` with `nnx.Carry` applies
    it layer after layer; `model.eval()` turns the dropout off."""

    class Block(nnx.Module):
        def __init__(self, input_dim, features, rngs):
            self.linear = nnx.Linear(input_dim, features, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x: jax.Array):
            x = self.linear(x)
            x = self.dropout(x)
            x = jax.nn.relu(x)
            return x

    class MLP(nnx.Module):
        def __init__(self, features, num_layers, rngs):
            @nnx.split_rngs(splits=num_layers)
            @nnx.vmap(in_axes=(0,), out_axes=0)
            def create_block(rngs: nnx.Rngs):
                return Block(features, features, rngs=rngs)

            self.blocks = create_block(rngs)
            self.num_layers = num_layers

        def __call__(self, x):
            @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
            def forward(x, model):
                x = model(x)
                return x

            return forward(x, self.blocks)

    model = MLP(8, num_layers=3, rngs=nnx.Rngs(0))
    x = _inputs((2, 8))
    y_train = model(x)
    model.eval()
    y_eval = model(x)
    by_hand = x
    for i in range(3):
        by_hand = jax.nn.relu(by_hand @ model.blocks.linear.kernel[i]
                              + model.blocks.linear.bias[i])
    return {"y_train": y_train, "y_eval": y_eval,
            "kernel_shape": list(model.blocks.linear.kernel.shape),
            "eval_matches_loop": bool(jnp.allclose(y_eval, by_hand, atol=1e-6))}


def vmap_over_inputs() -> dict:
    """`nnx.vmap` with the model broadcast (`in_axes=(None, 0)`) over a batch of inputs,
    and `nnx.jit` over a module method."""
    model = nnx.Linear(2, 2, rngs=nnx.Rngs(3))
    xs = _inputs((5, 2))

    @nnx.vmap(in_axes=(None, 0))
    def apply(model, x):
        return model(x)

    return {"vmapped": apply(model, xs), "jitted": nnx.jit(lambda m, x: m(x))(model, xs)}


def train_cnn() -> dict:
    """The MNIST tutorial's loop on random 8x8 images: `nnx.jit` train step with
    `nnx.Optimizer` and adam; the loss falls."""
    model = CNN(rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(0.01), wrt=nnx.Param)
    images = _inputs((24, 8, 8, 1))
    labels = jnp.argmax(images.reshape(24, 4, 16).mean(-1)[:, :3], axis=-1)

    @nnx.jit
    def train_step(model: CNN, optimizer: nnx.Optimizer, images, labels):
        def loss_fn(model):
            logits = model(images)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    losses = [float(train_step(model, optimizer, images, labels)) for _ in range(10)]
    return {"losses": losses, "logits": model(images[:2])}
