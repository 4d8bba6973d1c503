"""Donated update steps on a large array: the time per step and the new memory a step takes,
with `donate_argnums=0` and without.

A donated Array's memory holds the step's result (as in JAX), so a donated step allocates
nothing and an in-place update (`x.at[i].set`) touches one element instead of copying the
array. The new memory is the peak of NumPy's allocations during the steps (`tracemalloc`,
which NumPy reports to), above what was allocated before them.

Run: `.venv/bin/python benchmarks/bench_donation.py [--mb 100] [--steps 10]`.
"""
from __future__ import annotations

import argparse
import time
import tracemalloc
from typing import Callable

import justjax as jax
import justjax.numpy as jnp

STEPS: dict[str, Callable] = {
    "axpy": lambda x: x * 0.5 + 1.0,
    "set": lambda x: x.at[7].set(3.0),
}


def measure(step: Callable, donate: bool, size: int, steps: int) -> tuple[float, float]:
    """Seconds per step and the peak new memory (MiB) of `steps` calls of `step`."""
    f = jax.jit(step, donate_argnums=0 if donate else ())
    x = f(jnp.zeros(size)).block_until_ready()  # compiled, and its first result
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    for _ in range(steps):
        x = f(x)
    x.block_until_ready()
    seconds = (time.perf_counter() - start) / steps
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return seconds, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="the array's size in MB")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    size = args.mb * 10**6 // 4  # float32
    print(f"| step ({args.mb} MB float32) | donated | ms / step | new memory (MiB) |")
    print("|---|---|---|---|")
    for name, step in STEPS.items():
        for donate in (True, False):
            seconds, mib = measure(step, donate, size, args.steps)
            print(f"| {name} | {'yes' if donate else 'no'} | {seconds * 1e3:.1f} | {mib:.0f} |")


if __name__ == "__main__":
    main()
