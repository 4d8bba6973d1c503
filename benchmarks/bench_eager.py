"""Eager dispatch and tracing costs, as ratios against NumPy, measured side by side.

Run: `.venv/bin/python benchmarks/bench_eager.py`. Eager ops still run through NumPy
implementations (the native backend is a later issue), so these figures measure justjax's
per-op overhead: argument checking, promotion, abstract evaluation and wrapping.
"""
from __future__ import annotations

import timeit

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax import tree_util


def best_of(stmt, number: int, repeat: int = 5) -> float:
    """Seconds per call, best of `repeat` runs of `number` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def main() -> None:
    rows = []
    for size in (8, 1_000_000):
        x_np = np.ones(size, np.float32)
        x = jnp.asarray(x_np)
        number = 2000 if size == 8 else 20
        rows.append((f"x + 1 (f32[{size}])", best_of(lambda: x + 1, number),
                     best_of(lambda: x_np + np.float32(1), number)))
        rows.append((f"sin(x) (f32[{size}])", best_of(lambda: jnp.sin(x), number),
                     best_of(lambda: np.sin(x_np), number)))
        rows.append((f"sum(x) (f32[{size}])", best_of(lambda: jnp.sum(x), number),
                     best_of(lambda: np.sum(x_np), number)))
    small = jnp.ones(5)
    rows.append(("make_jaxpr(x * 2 + 1)", best_of(lambda: jax.make_jaxpr(lambda v: v * 2 + 1)(small),
                                                  500), None))
    tree = {"a": (1, 2), "b": [3, 4]}
    rows.append(("tree_flatten(4 leaves)", best_of(lambda: tree_util.tree_flatten(tree), 20000),
                 None))
    print(f"{'operation':28s} {'justjax':>12s} {'numpy':>12s} {'ratio':>8s}")
    for name, ours, theirs in rows:
        ratio = f"{ours / theirs:8.1f}" if theirs else "       -"
        theirs_text = f"{theirs * 1e6:10.1f}us" if theirs else "           -"
        print(f"{name:28s} {ours * 1e6:10.1f}us {theirs_text} {ratio}")


if __name__ == "__main__":
    main()
