"""pmap's shards run at once: the wall time of a 4-device pmapped train step against the sum
of the same step run shard by shard on one device (issue #10), and the same with the
gradient taken outside the pmap (`jit(grad(...))`, one program run replicated).

Run: `.venv/bin/python benchmarks/bench_pmap.py [--devices 4] [--batch 4096]`. A ratio near
1/cores means the shards ran concurrently; 1.0 means one after the other.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax import lax


def loss(params, x, y):
    w1, w2 = params
    hidden = jnp.tanh(x @ w1)
    return jnp.mean((jnp.tanh(hidden @ w2) - y) ** 2)


def shard_step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


def parallel_step(params, x, y):
    grads = lax.pmean(jax.grad(loss)(params, x, y), "batch")
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


def outside_grad_step(params, x, y):
    """The same step with the gradient taken outside the pmap: `jit(grad(...))` of a pmapped
    loss, one program run replicated on the devices (`shard_map.py`)."""
    def parallel_loss(params):
        return jax.pmap(lambda xb, yb: loss(params, xb, yb))(x, y).mean()

    grads = jax.grad(parallel_loss)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


def median_seconds(fn, repeats: int = 15) -> float:
    jax.block_until_ready(fn())
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4096)
    args = parser.parse_args()
    jax.config.update("jax_num_cpu_devices", args.devices)
    rng = np.random.default_rng(0)
    per = args.batch // args.devices
    params = (rng.standard_normal((256, 512)).astype(np.float32) * 0.05,
              rng.standard_normal((512, 16)).astype(np.float32) * 0.05)
    x = rng.standard_normal((args.devices, per, 256)).astype(np.float32)
    y = rng.standard_normal((args.devices, per, 16)).astype(np.float32)
    pmapped = jax.pmap(parallel_step, axis_name="batch", in_axes=(None, 0, 0))
    single = jax.jit(shard_step)
    shards = [(jnp.asarray(x[i]), jnp.asarray(y[i])) for i in range(args.devices)]
    t_pmap = median_seconds(lambda: pmapped(params, x, y))
    t_shards = median_seconds(lambda: [single(params, *s) for s in shards])
    outside = jax.jit(outside_grad_step)
    t_outside = median_seconds(lambda: outside(params, x, y))
    print(f"{os.cpu_count()} cores; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; median of 15")
    print(f"| {args.devices} shards of {per} examples | pmapped step | sum of one-device steps "
          f"| ratio |")
    print("| --- | --- | --- | --- |")
    print(f"| MLP 256-512-16 | {t_pmap * 1e3:.2f} ms | {t_shards * 1e3:.2f} ms "
          f"| {t_pmap / t_shards:.2f} |")
    print(f"| same, grad outside: jit(grad(pmapped loss)) | {t_outside * 1e3:.2f} ms "
          f"| {t_shards * 1e3:.2f} ms | {t_outside / t_shards:.2f} |")


if __name__ == "__main__":
    main()
