"""Eager dispatch and tracing costs: justjax beside NumPy and (with `--jax`) real JAX.

Run: `.venv/bin/python benchmarks/bench_eager.py [--jax] [--rounds N] [--jax-python PATH]`.
Each op's cost is the best of a few repeats of many calls. With `--jax`, real JAX runs in a
worker process of `--jax-python` (default the side venv /work/jaxvenv) so that justjax and jax
never share a process; the rounds alternate justjax and JAX, so that load from other processes
on the machine falls on both, and the table gives the median of the per-round ratios with
their range (the noise band).
"""
from __future__ import annotations

import argparse
import statistics
from typing import Any, Callable

import numpy as np

from side_by_side import add_arguments, best_of, rounds, serve



def cases(lib: Any) -> dict[str, tuple[Callable[[], Any], int]]:
    """The timed operations of `lib` (justjax or jax; None: NumPy's): name -> (call,
    calls per repeat)."""
    jnp = lib.numpy if lib is not None else np
    out: dict[str, tuple[Callable[[], Any], int]] = {}
    for size in (8, 1_000_000):
        x = np.ones(size, np.float32)
        if lib is not None:
            x = jnp.asarray(x)
            lib.block_until_ready(x)
        number = 2000 if size == 8 else 20
        finish = (lambda v: v) if lib is None else (lambda v: v.block_until_ready())
        one = np.float32(1) if lib is None else 1
        out[f"x + 1 (f32[{size}])"] = (lambda x=x, f=finish, one=one: f(x + one), number)
        out[f"x * x (f32[{size}])"] = (lambda x=x, f=finish: f(x * x), number)
        out[f"sin(x) (f32[{size}])"] = (lambda x=x, f=finish: f(jnp.sin(x)), number)
        out[f"sum(x) (f32[{size}])"] = (lambda x=x, f=finish: f(jnp.sum(x)), number)
    if lib is not None:
        small = jnp.ones(5)
        out["make_jaxpr(x * 2 + 1)"] = (
            lambda: lib.make_jaxpr(lambda v: v * 2 + 1)(small), 500)
        tree = {"a": (1, 2), "b": [3, 4]}
        out["tree_flatten(4 leaves)"] = (lambda: lib.tree_util.tree_flatten(tree), 20000)
    return out


def measure(lib: Any) -> dict[str, float]:
    return {name: best_of(call, number) for name, (call, number) in cases(lib).items()}



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args()
    if args.worker:
        return serve(measure)
    numpy_figures = measure(None)
    report(rounds(__file__, measure, args), numpy_figures)


def report(rounds: list[dict[str, dict[str, float]]], numpy_figures: dict[str, float]) -> None:
    has_jax = "jax" in rounds[0]
    head = f"{'operation':26s} {'justjax':>10s} {'numpy':>10s}"
    head += f" {'jax':>10s} {'justjax/jax (range)':>22s}" if has_jax else " justjax/numpy"
    print(head)
    for name in rounds[0]["justjax"]:
        ours = statistics.median(r["justjax"][name] for r in rounds)
        theirs = numpy_figures.get(name)
        line = f"{name:26s} {ours * 1e6:8.1f}us "
        line += f"{theirs * 1e6:8.1f}us" if theirs else f"{'-':>10s}"
        if has_jax:
            jax_time = statistics.median(r["jax"][name] for r in rounds)
            ratios = [r["justjax"][name] / r["jax"][name] for r in rounds]
            line += (f" {jax_time * 1e6:8.1f}us {statistics.median(ratios):8.2f}x "
                     f"({min(ratios):.2f}-{max(ratios):.2f})")
        elif theirs:
            line += f" {ours / theirs:8.1f}"
        print(line)


if __name__ == "__main__":
    main()
