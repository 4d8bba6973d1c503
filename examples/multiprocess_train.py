"""Data-parallel training over several processes joined by MPI (`jax.distributed`).

The digits model of `train_digits.py` (a two-layer perceptron on scikit-learn's 8x8 digits)
trains with SGD on batches of 64 split over every process's devices: each process loads only
its own rows of each batch (`jax.make_array_from_process_local_data`), the parameters are
replicated on every device, and the jitted train step is partitioned over the global mesh:
the gradient's sum over the batch becomes an all-reduce, inside each process through its
devices' rendezvous and between processes through MPI. The loss curve equals the one-process
run's (to the rounding of the sum's order).

Run on 2 processes:
    mpiexec -n 2 .venv/bin/python examples/multiprocess_train.py
or alone (one process), for comparison:
    .venv/bin/python examples/multiprocess_train.py
Options: --epochs N, --local-devices K (virtual devices per process), --losses FILE (process
0 writes the loss curve there, as JSON).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P

BATCH = 64
HIDDEN = 64
LEARNING_RATE = 0.1


def load_digits(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The training digits (four fifths, in a fixed shuffled order), pixels in [0, 1]."""
    from sklearn.datasets import load_digits as sklearn_digits
    digits = sklearn_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))[len(x) // 5:]
    return x[order], y[order]


def init_params(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """He-initialised weights and zero biases, the same in every process (NumPy, seeded)."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in ((64, HIDDEN), (HIDDEN, 10)):
        w = rng.standard_normal((fan_in, fan_out)).astype(np.float32) * np.sqrt(2.0 / fan_in)
        params.append((w.astype(np.float32), np.zeros(fan_out, np.float32)))
    return params


def loss_fn(params, x, labels):
    (w1, b1), (w2, b2) = params
    hidden = jax.nn.relu(x @ w1 + b1)
    log_probs = jax.nn.log_softmax(hidden @ w2 + b2)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))


@jax.jit
def train_step(params, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--local-devices", type=int, default=1)
    parser.add_argument("--losses", default=None)
    options = parser.parse_args()

    jax.config.update("jax_num_cpu_devices", options.local_devices)
    # Joins the other processes under `mpiexec`; alone, this process is the whole run.
    jax.distributed.initialize(cluster_detection_method="mpi4py")
    me, count = jax.process_index(), jax.process_count()
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = NamedSharding(mesh, P("data"))
    params = jax.device_put(init_params(), NamedSharding(mesh, P()))
    if me == 0:
        print(f"{count} process(es), {len(jax.devices())} device(s): {jax.devices()}")

    x, y = load_digits()
    per_process = BATCH // count
    steps = len(x) // BATCH
    rng = np.random.default_rng(1)  # the same batches in every process
    losses = []
    start = None  # the clock starts once the first step (which compiles) is done
    for epoch in range(options.epochs):
        order = rng.permutation(len(x))
        epoch_losses = []
        for step in range(steps):
            batch = order[step * BATCH:(step + 1) * BATCH]
            mine = batch[me * per_process:(me + 1) * per_process]  # this process's rows
            xs = jax.make_array_from_process_local_data(rows, x[mine])
            ys = jax.make_array_from_process_local_data(rows, y[mine])
            params, loss = train_step(params, xs, ys)
            epoch_losses.append(loss)
            if start is None:
                jax.block_until_ready(params)
                start = time.perf_counter()
        losses.append(float(np.mean([float(v) for v in epoch_losses])))
        if me == 0:
            print(f"epoch {epoch + 1}: loss {losses[-1]:.6f}")
    timed = options.epochs * steps - 1
    seconds = time.perf_counter() - start
    if me == 0:
        print(f"{timed} steps after the first in {seconds:.2f} s "
              f"({1e3 * seconds / max(timed, 1):.2f} ms per step)")
        if options.losses:
            with open(options.losses, "w") as out:
                json.dump(losses, out)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
