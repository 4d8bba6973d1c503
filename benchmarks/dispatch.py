"""Dispatch cost of a cached jit call with three small array arguments, beside NumPy's `a + 1`
(the floor of any Python-level array call) measured in the same run; plus an eager op, a
first call (trace + lower + compile) and `make_jaxpr` of a two-op function.

Run: `.venv/bin/python benchmarks/dispatch.py`. With `--jax` (run with real jax importable and
justjax on PYTHONPATH, e.g. `PYTHONPATH=src /work/jaxvenv/bin/python benchmarks/dispatch.py --jax`)
the same figures are measured for real JAX in the same run.
"""
from __future__ import annotations

import sys
import time
import timeit

import numpy as np

import justjax


def best_of(stmt, number: int, repeat: int = 7) -> float:
    """Seconds per call, best of `repeat` runs of `number` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def measure(lib) -> dict[str, float]:
    jnp = lib.numpy
    a, b, c = (jnp.asarray(np.full(8, v, np.float32)) for v in (1.0, 2.0, 3.0))

    def body(x, y, z):
        return x * y + z

    f = lib.jit(body)
    f(a, b, c).block_until_ready()
    figures = {"cached jit call, 3 args": best_of(lambda: f(a, b, c), 5000)}
    figures["eager a + 1"] = best_of(lambda: a + 1, 5000)

    def first_call() -> float:
        fresh = lib.jit(lambda x, y, z: x * y + z)
        start = time.perf_counter()
        fresh(a, b, c).block_until_ready()
        return time.perf_counter() - start

    figures["first call (trace+lower+compile)"] = min(first_call() for _ in range(5))
    figures["make_jaxpr, 2 ops"] = best_of(lambda: lib.make_jaxpr(body)(a, b, c), 200)
    return figures


def main() -> None:
    libs = {"justjax": justjax}
    if "--jax" in sys.argv:
        import jax
        libs["jax"] = jax
    x = np.ones(8, np.float32)
    numpy_add = best_of(lambda: x + 1, 20000)
    results = {name: measure(lib) for name, lib in libs.items()}
    print(f"NumPy a + 1 (f32[8]): {numpy_add * 1e6:.2f} us")
    header = f"{'':36s}" + "".join(f"{name:>16s}" for name in results) + "   ratio to NumPy a+1"
    print(header)
    for key in results["justjax"]:
        cells = "".join(f"{results[name][key] * 1e6:14.1f}us" for name in results)
        ratio = results["justjax"][key] / numpy_add
        print(f"{key:36s}{cells}   x{ratio:.1f}")


if __name__ == "__main__":
    main()
