"""Compile-time cost of the optimizing pipeline: a 200-layer unrolled program (about 2,000
jaxpr equations) traced, lowered, and run through every pass (issue #8: under 1 s on CI's
2-core machine; the cost must stay linear, so 100 and 400 layers are timed too).

Run: `.venv/bin/python benchmarks/bench_compile.py`.
"""
from __future__ import annotations

import time

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax._src.hlo.passes import optimize


def layered(layers: int):
    def f(x, w, b):
        for i in range(layers):
            y = jnp.tanh(x @ w + b) * 0.5 + x * (1.0 / (i + 1))
            x = jnp.where(y > 0, y, 0.1 * y) - jnp.mean(y, axis=-1, keepdims=True)
        return jnp.sum(x)
    return f


def measure(layers: int) -> dict[str, float]:
    args = (np.ones((8, 16), np.float32), np.ones((16, 16), np.float32) * 0.01,
            np.zeros(16, np.float32))
    start = time.perf_counter()
    closed = jax.make_jaxpr(layered(layers))(*args)
    traced = time.perf_counter()
    module = jax.jit(layered(layers)).lower(*args).compiler_ir()
    lowered = time.perf_counter()
    optimized = optimize.optimize(module)
    done = time.perf_counter()
    return {"equations": len(closed.jaxpr.eqns), "ops in": sum(1 for _ in module.walk()),
            "ops out": sum(1 for _ in optimized.walk()), "trace s": traced - start,
            "lower s": lowered - traced, "passes s": done - lowered}


def main() -> None:
    print(f"{'layers':>7s}{'eqns':>7s}{'ops in':>8s}{'ops out':>8s}{'trace s':>9s}"
          f"{'lower s':>9s}{'passes s':>10s}")
    for layers in (100, 200, 400):
        m = measure(layers)
        print(f"{layers:7d}{m['equations']:7d}{m['ops in']:8d}{m['ops out']:8d}"
              f"{m['trace s']:9.3f}{m['lower s']:9.3f}{m['passes s']:10.3f}")


if __name__ == "__main__":
    main()
