"""A sharded MLP train step on 4 devices (a 2x2 mesh: the batch over "data", the hidden layer
over "model", jit partitioning the step) against the same step on one device, justjax and
(with `--jax`) real JAX side by side.

Run: `.venv/bin/python benchmarks/bench_sharding.py [--jax] [--rounds N] [--batch B]
[--hidden H]`. Each figure is the median time of a step; the table gives, per library, the
4-device time over the 1-device time (below 1: the mesh pays off), the median of the rounds
with their range (the noise band). On a 2-core machine the 4 virtual devices share 2 cores:
the ratio is bounded by about 0.5.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

from side_by_side import add_arguments, rounds, serve

DEVICES = 4
os.environ.setdefault("XLA_FLAGS", f"--xla_force_host_platform_device_count={DEVICES}")
SIZES = {"batch": 2048, "hidden": 1024, "features": 256, "classes": 16}


def measure(lib: Any) -> dict[str, float]:
    """Seconds per step of `lib`'s MLP train step on one device and on the 2x2 mesh."""
    jnp = lib.numpy
    if lib.__name__ == "justjax":
        lib.config.update("jax_num_cpu_devices", DEVICES)
    from importlib import import_module
    sharding = import_module(f"{lib.__name__}.sharding")
    batch, hidden, features, classes = (SIZES[k] for k in ("batch", "hidden", "features",
                                                           "classes"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, features)).astype(np.float32)
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, batch)]
    params = {"w1": rng.standard_normal((features, hidden)).astype(np.float32) * 0.05,
              "w2": rng.standard_normal((hidden, classes)).astype(np.float32) * 0.05}

    def loss(p, x, y):
        logits = jnp.tanh(x @ p["w1"]) @ p["w2"]
        return -jnp.mean(jnp.sum(y * lib.nn.log_softmax(logits), axis=-1))

    @lib.jit
    def step(p, x, y):
        value, grads = lib.value_and_grad(loss)(p, x, y)
        return value, lib.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)

    mesh = sharding.Mesh(np.array(lib.devices()[:DEVICES]).reshape(2, 2), ("data", "model"))

    def put(value, *spec):
        return lib.device_put(value, sharding.NamedSharding(mesh, sharding.PartitionSpec(*spec)))

    one = (lib.device_put(params), lib.device_put(x), lib.device_put(y))
    mesh_args = ({"w1": put(params["w1"], None, "model"), "w2": put(params["w2"], "model", None)},
                 put(x, "data", None), put(y, "data", None))
    figures = {}
    for name, args in (("one device", one), ("2x2 mesh", mesh_args)):
        lib.block_until_ready(step(*args))
        samples = []
        for _ in range(9):
            start = time.perf_counter()
            lib.block_until_ready(step(*args))
            samples.append(time.perf_counter() - start)
        figures[name] = float(np.median(samples))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.add_argument("--batch", type=int, default=SIZES["batch"])
    parser.add_argument("--hidden", type=int, default=SIZES["hidden"])
    args = parser.parse_args()
    if args.worker:
        # The sizes the timing process was given (the worker is started with --worker only).
        batch, hidden = os.environ["BENCH_SHARDING_SIZES"].split(",")
        SIZES.update(batch=int(batch), hidden=int(hidden))
        serve(measure)
        return
    SIZES.update(batch=args.batch, hidden=args.hidden)
    os.environ["BENCH_SHARDING_SIZES"] = f"{args.batch},{args.hidden}"
    results = rounds(__file__, measure, args)
    print(f"MLP train step, batch {SIZES['batch']}, {SIZES['features']}-{SIZES['hidden']}-"
          f"{SIZES['classes']}; median step time, {args.rounds} rounds")
    print("| library | one device | 2x2 mesh (4 devices) | mesh / one device |")
    print("| --- | --- | --- | --- |")
    for lib in results[0]:
        ratios = [r[lib]["2x2 mesh"] / r[lib]["one device"] for r in results]
        one = statistics.median(r[lib]["one device"] for r in results)
        four = statistics.median(r[lib]["2x2 mesh"] for r in results)
        print(f"| {lib} | {one * 1e3:.2f} ms | {four * 1e3:.2f} ms | "
              f"{statistics.median(ratios):.2f} [{min(ratios):.2f}-{max(ratios):.2f}] |")


if __name__ == "__main__":
    sys.exit(main())
