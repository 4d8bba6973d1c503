"""A Flax NNX convolutional network learns scikit-learn's digits, with Optax's Adam.

Written for JAX (plain `import jax`, `from flax import nnx`, `import optax`), after the
Flax NNX MNIST tutorial: an `nnx.Module` CNN with batch norm and dropout, `nnx.Optimizer`,
a train step under `nnx.jit` with `nnx.value_and_grad`, and `nnx.view` for the training
and evaluation modes. The data are the 1,797 8x8 digit images scikit-learn bundles (no
download), a fifth held out for testing (the split of `train_digits.py`). A progress bar
runs over the epochs; the test accuracy and the time per step are printed at the end.

Run it on justjax, unchanged: `python -m justjax run examples/train_flax.py [--epochs N]`
(or on JAX: `python examples/train_flax.py`).
"""
from __future__ import annotations

import argparse
import os
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

BATCH = 64
LEARNING_RATE = 3e-3


def load_data(seed: int = 0) -> tuple[np.ndarray, ...]:
    """Digits as float32 images (N, 8, 8, 1) in [0, 1] and int32 labels: (train images,
    train labels, test images, test labels), a fifth held out for testing."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    test = order[:len(x) // 5]
    train = order[len(x) // 5:]
    return x[train], y[train], x[test], y[test]


class CNN(nnx.Module):
    """Two convolution blocks (conv, batch norm, relu, 2x2 average pooling: 8x8 -> 4x4 ->
    2x2), then a hidden dense layer with dropout and the ten logits."""

    def __init__(self, *, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(1, 16, kernel_size=(3, 3), rngs=rngs)
        self.batch_norm1 = nnx.BatchNorm(16, rngs=rngs)
        self.conv2 = nnx.Conv(16, 32, kernel_size=(3, 3), rngs=rngs)
        self.batch_norm2 = nnx.BatchNorm(32, rngs=rngs)
        self.avg_pool = partial(nnx.avg_pool, window_shape=(2, 2), strides=(2, 2))
        self.linear1 = nnx.Linear(32 * 2 * 2, 64, rngs=rngs)
        self.dropout = nnx.Dropout(rate=0.2)
        self.linear2 = nnx.Linear(64, 10, rngs=rngs)

    def __call__(self, x: jax.Array, rngs: nnx.Rngs | None = None) -> jax.Array:
        x = self.avg_pool(nnx.relu(self.batch_norm1(self.conv1(x))))
        x = self.avg_pool(nnx.relu(self.batch_norm2(self.conv2(x))))
        x = x.reshape(x.shape[0], -1)
        x = nnx.relu(self.dropout(self.linear1(x), rngs=rngs))
        return self.linear2(x)


def loss_fn(model: CNN, images: jax.Array, labels: jax.Array,
            rngs: nnx.Rngs | None = None) -> jax.Array:
    """Mean cross-entropy of the logits against the integer labels."""
    logits = model(images, rngs)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@nnx.jit
def train_step(model: CNN, optimizer: nnx.Optimizer, rngs: nnx.Rngs, images: jax.Array,
               labels: jax.Array) -> jax.Array:
    """One Adam step, updating the model (parameters and batch statistics), the optimizer
    and the dropout keys in place; returns the batch's loss."""
    loss, grads = nnx.value_and_grad(loss_fn)(model, images, labels, rngs)
    optimizer.update(model, grads)
    return loss


@nnx.jit
def accuracy(model: CNN, images: jax.Array, labels: jax.Array) -> jax.Array:
    """The fraction of images whose most likely class is their label."""
    return jnp.mean(jnp.argmax(model(images), axis=-1) == labels)


def train(epochs: int, seed: int = 0) -> dict:
    """Trains on the digits; returns the test accuracy per epoch and the timings."""
    from tqdm import tqdm
    x_train, y_train, x_test, y_test = load_data(seed)
    model = CNN(rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(LEARNING_RATE), wrt=nnx.Param)
    train_model = nnx.view(model, deterministic=False, use_running_average=False)
    eval_model = nnx.view(model, deterministic=True, use_running_average=True)
    rngs = nnx.Rngs(dropout=seed + 1)
    order_rng = np.random.default_rng(seed)
    steps_per_epoch = len(x_train) // BATCH
    start = time.perf_counter()
    float(train_step(train_model, optimizer, rngs, x_train[:BATCH], y_train[:BATCH]))
    first_step = time.perf_counter() - start
    history = {"loss": [], "test_accuracy": []}
    step_seconds = 0.0
    bar = tqdm(range(epochs), desc="training", unit="epoch")
    for _ in bar:
        order = order_rng.permutation(len(x_train))
        epoch_start = time.perf_counter()
        losses = [train_step(train_model, optimizer, rngs, x_train[batch], y_train[batch])
                  for batch in np.split(order[:steps_per_epoch * BATCH], steps_per_epoch)]
        losses = [float(v) for v in losses]  # waits for the last step
        step_seconds += time.perf_counter() - epoch_start
        history["loss"].append(float(np.mean(losses)))
        history["test_accuracy"].append(float(accuracy(eval_model, x_test, y_test)))
        bar.set_postfix(loss=f"{history['loss'][-1]:.3f}",
                        test_acc=f"{history['test_accuracy'][-1]:.3f}")
    return {"history": history, "first_step_seconds": first_step,
            "seconds_per_step": step_seconds / max(epochs * steps_per_epoch, 1),
            "test_size": len(x_test)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"jax {jax.__version__} (from {os.path.dirname(jax.__file__)}) on "
          f"{jax.default_backend()}")
    result = train(args.epochs, args.seed)
    final = result["history"]["test_accuracy"][-1]
    print(f"\nTest accuracy after {args.epochs} epochs: {final:.1%} "
          f"({round(final * result['test_size'])} of {result['test_size']} digits)")
    print(f"first step (tracing and compiling): {result['first_step_seconds']:.2f} s; "
          f"then {result['seconds_per_step'] * 1e3:.2f} ms per step of {BATCH} images")
    return result


if __name__ == "__main__":
    main()
