"""The main example (`make demo`): a small neural network learns to read handwritten digits.

The data are scikit-learn's bundled digits (1,797 images of 8x8 pixels, no download). A
two-layer perceptron is trained with a jitted `value_and_grad` train step and momentum SGD;
a progress bar runs over the epochs; the final test accuracy is printed and the loss and
accuracy curves are drawn to `demo-output/training.png`. Then a short tour of the train
step's pipeline: its jaxpr, its StableHLO, the kernels the optimizer fused it into, and
what compiling and one step cost (the whole report: `demo-output/train_step.html`).

Run: `make demo`, or `.venv/bin/python examples/train_digits.py [--epochs N] [--output DIR]`.
"""
from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import justjax as jax
import justjax.numpy as jnp

HIDDEN = 64
BATCH = 64
LEARNING_RATE = 0.1
MOMENTUM = 0.9


def load_data(seed: int = 0) -> tuple[np.ndarray, ...]:
    """Digits as float32 pixels in [0, 1]: (train x, train labels, test x, test labels),
    a fifth held out for testing."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    test = order[:len(x) // 5]
    train = order[len(x) // 5:]
    return x[train], y[train], x[test], y[test]


def init_params(key: jax.Array, sizes: tuple[int, ...]) -> list[tuple[jax.Array, jax.Array]]:
    """Weights with variance 2/fan-in (He initialisation), zero biases."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        w = jax.random.normal(sub, (fan_in, fan_out)) * jnp.sqrt(2.0 / fan_in)
        params.append((w, jnp.zeros(fan_out)))
    return params


def predict(params, x):
    """Log-probabilities of the ten classes."""
    (w1, b1), (w2, b2) = params
    hidden = jax.nn.relu(x @ w1 + b1)
    return jax.nn.log_softmax(hidden @ w2 + b2)


def loss_fn(params, x, labels):
    """Mean cross-entropy."""
    log_probs = predict(params, x)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))


@jax.jit
def train_step(params, velocity, x, labels):
    """One step of SGD with momentum; returns the new parameters, velocity and the loss."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    velocity = jax.tree_util.tree_map(lambda v, g: MOMENTUM * v + g, velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - LEARNING_RATE * v, params, velocity)
    return params, velocity, loss


@jax.jit
def accuracy(params, x, labels):
    return jnp.mean(jnp.argmax(predict(params, x), axis=1) == labels)


def train(epochs: int, seed: int = 0) -> dict:
    """Trains on the digits; returns the parameters, the curves and the timings."""
    from tqdm import tqdm
    x_train, y_train, x_test, y_test = load_data(seed)
    params = init_params(jax.random.key(seed), (64, HIDDEN, 10))
    velocity = jax.tree_util.tree_map(jnp.zeros_like, params)
    rng = np.random.default_rng(seed)
    steps_per_epoch = len(x_train) // BATCH
    history = {"loss": [], "train_accuracy": [], "test_accuracy": []}
    start = time.perf_counter()
    params, velocity, _ = train_step(params, velocity, x_train[:BATCH], y_train[:BATCH])
    first_step = time.perf_counter() - start
    step_seconds = 0.0
    bar = tqdm(range(epochs), desc="training", unit="epoch")
    for _ in bar:
        order = rng.permutation(len(x_train))
        losses = []
        epoch_start = time.perf_counter()
        for i in range(steps_per_epoch):
            batch = order[i * BATCH:(i + 1) * BATCH]
            params, velocity, loss = train_step(params, velocity, x_train[batch],
                                                y_train[batch])
            losses.append(loss)
        losses = [float(v) for v in losses]  # waits for the last step
        step_seconds += time.perf_counter() - epoch_start
        history["loss"].append(float(np.mean(losses)))
        history["train_accuracy"].append(float(accuracy(params, x_train, y_train)))
        history["test_accuracy"].append(float(accuracy(params, x_test, y_test)))
        bar.set_postfix(loss=f"{history['loss'][-1]:.3f}",
                        test_acc=f"{history['test_accuracy'][-1]:.3f}")
    return {"params": params, "velocity": velocity, "history": history,
            "first_step_seconds": first_step,
            "seconds_per_step": step_seconds / max(epochs * steps_per_epoch, 1),
            "batch": (x_train[:BATCH], y_train[:BATCH]), "test_size": len(x_test)}


def plot(history: dict, path: pathlib.Path) -> None:
    """Loss and accuracy per epoch, side by side, to a PNG (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = np.arange(1, len(history["loss"]) + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(epochs, history["loss"], color="tab:blue")
    left.set(title="training loss (cross-entropy)", xlabel="epoch", ylabel="loss")
    right.plot(epochs, history["train_accuracy"], label="train", color="tab:orange")
    right.plot(epochs, history["test_accuracy"], label="test", color="tab:green")
    right.set(title="accuracy", xlabel="epoch", ylabel="accuracy", ylim=(0.8, 1.0))
    right.legend()
    for axes in (left, right):
        axes.grid(alpha=0.3)
    fig.suptitle("justjax: a 64-64-10 perceptron on scikit-learn's digits")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def tour(result: dict, output: pathlib.Path) -> None:
    """The train step's pipeline, stage by stage (`justjax.explain`)."""
    x, labels = result["batch"]
    e = jax.explain(train_step.__wrapped__, result["params"], result["velocity"], x, labels)
    lines = str(e.jaxpr).splitlines()
    print(f"\nThe train step's pipeline (`justjax.explain`):\n\n  jaxpr ({len(lines)} lines; "
          "the first 12):")
    print("\n".join("    " + line for line in lines[:12]) + "\n    ...")
    print(f"\n  StableHLO: {e.stablehlo_op_count} ops")
    print(f"  after the optimizing passes: {len(e.kernels)} kernels, "
          f"{len(e.fusions)} of them fusions:")
    for k in e.kernels:
        timing = f"{k.seconds * 1e6:7.1f} µs" if k.seconds is not None else ""
        print(f"    {k.name:<36} {k.kind:<28} {timing}")
    codegen = "LLVM" if e.backend == "llvm" else f"the {e.backend} backend"
    print(f"\n  compile: trace and lower {e.lower_seconds * 1e3:.0f} ms, passes "
          f"{e.optimize_seconds * 1e3:.0f} ms, {codegen} {e.compile_seconds * 1e3:.0f} ms; "
          f"the first step took {result['first_step_seconds'] * 1e3:.0f} ms")
    print(f"  one step: {result['seconds_per_step'] * 1e6:.0f} µs in the training loop, "
          f"{(e.seconds_per_call or 0) * 1e6:.0f} µs called alone")
    report = output / "train_step.html"
    e.save_html(str(report))
    print(f"  every stage, with the fusion graph, LLVM IR and assembly: {report}")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--output", default="demo-output")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    print(f"justjax {jax.__version__} on {jax.default_backend()}: {jax.devices()}")
    result = train(args.epochs, args.seed)
    final = result["history"]["test_accuracy"][-1]
    print(f"\nTest accuracy after {args.epochs} epochs: {final:.1%} "
          f"({round(final * result['test_size'])} of {result['test_size']} digits)")
    plot(result["history"], output / "training.png")
    print(f"Loss and accuracy curves: {output / 'training.png'}")
    tour(result, output)
    return result


if __name__ == "__main__":
    main()
