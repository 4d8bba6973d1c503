"""Dispatch cost of cached jit calls beside NumPy's `a + 1` (the floor of any Python-level array
call): three small positional arrays, a pytree (dict) of parameters, a static argument; plus an
eager op, a first call (trace + lower + compile) and `make_jaxpr` of a two-op function.

Run: `.venv/bin/python benchmarks/dispatch.py [--jax] [--rounds N] [--jax-python PATH]`. With
`--jax`, real JAX runs in a worker process of `--jax-python` (default the side venv
/work/jaxvenv), so that justjax and jax never share a process; rounds alternate justjax and JAX,
and the table gives the median of the per-round ratios with their range (the noise band).
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from side_by_side import add_arguments, best_of, rounds, serve



def measure(lib: Any) -> dict[str, float]:
    """The figures of `lib` (justjax or jax), in seconds."""
    jnp = lib.numpy
    a, b, c = (jnp.asarray(np.full(8, v, np.float32)) for v in (1.0, 2.0, 3.0))

    def body(x, y, z):
        return x * y + z

    f = lib.jit(body)
    f(a, b, c).block_until_ready()
    figures = {"cached jit call, 3 args": best_of(lambda: f(a, b, c), 5000)}
    params = {"w1": jnp.ones((4, 4)), "b1": jnp.zeros(4), "w2": jnp.ones((4, 4)),
              "b2": jnp.zeros(4)}
    tree = lib.jit(lambda p, x: lib.tree_util.tree_map(lambda v: v * x[0], p))
    lib.block_until_ready(tree(params, a))
    figures["cached jit call, dict of 4 + 1"] = best_of(lambda: tree(params, a), 2000)
    static = lib.jit(lambda x, n: x * n, static_argnums=1)
    static(a, 3).block_until_ready()
    figures["cached jit call, static arg"] = best_of(lambda: static(a, 3), 2000)
    figures["eager a * b"] = best_of(lambda: a * b, 2000)

    def first_call() -> float:
        fresh = lib.jit(lambda x, y, z: x * y + z)
        start = time.perf_counter()
        fresh(a, b, c).block_until_ready()
        return time.perf_counter() - start

    figures["first call (trace+lower+compile)"] = min(first_call() for _ in range(5))
    figures["make_jaxpr, 2 ops"] = best_of(lambda: lib.make_jaxpr(body)(a, b, c), 200)
    return figures



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args()
    if args.worker:
        return serve(measure)
    x = np.ones(8, np.float32)
    numpy_add = best_of(lambda: x + 1, 20000)
    report(rounds(__file__, measure, args), numpy_add)


def report(rounds: list[dict[str, dict[str, float]]], numpy_add: float) -> None:
    print(f"NumPy a + 1 (f32[8]): {numpy_add * 1e6:.2f} us")
    has_jax = "jax" in rounds[0]
    head = f"{'':34s}{'justjax':>12s}" + (f"{'jax':>12s}   justjax/jax (range)" if has_jax
                                          else "") + "   justjax/NumPy a+1"
    print(head)
    for key in rounds[0]["justjax"]:
        ours = statistics.median(r["justjax"][key] for r in rounds)
        line = f"{key:34s}{ours * 1e6:10.1f}us"
        if has_jax:
            theirs = statistics.median(r["jax"][key] for r in rounds)
            ratios = [r["justjax"][key] / r["jax"][key] for r in rounds]
            line += (f"{theirs * 1e6:10.1f}us   {statistics.median(ratios):5.2f}x "
                     f"({min(ratios):.2f}-{max(ratios):.2f})")
        print(f"{line}   x{ours / numpy_add:.1f}")


if __name__ == "__main__":
    main()
