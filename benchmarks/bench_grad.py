"""Differentiation costs, as ratios against hand-written NumPy derivatives, side by side.

Run: `.venv/bin/python benchmarks/bench_grad.py`. Optionally also times real JAX when it is
importable (`/work/jaxvenv/bin/python benchmarks/bench_grad.py --jax`, with justjax installed
there): JAX runs compiled code, justjax still evaluates eagerly op by op through NumPy (the
compiler and native backend are later issues), so the ratio to JAX mostly measures that.
"""
from __future__ import annotations

import sys
import timeit

import numpy as np

import justjax
import justjax.numpy as jjnp


def best_of(stmt, number: int, repeat: int = 5) -> float:
    """Seconds per call, best of `repeat` runs of `number` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def chain_grad_numpy(x: np.ndarray) -> np.ndarray:
    """d/dx sum(tanh(cos(sin(x)))), written by hand."""
    s = np.sin(x)
    c = np.cos(s)
    t = np.tanh(c)
    return (1 - t * t) * -np.sin(s) * np.cos(x)


def mlp_loss(lib, params, x, y):
    h = lib.numpy.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return lib.numpy.mean((out - y) ** 2)


def main() -> None:
    with_jax = "--jax" in sys.argv
    libs = {"justjax": justjax}
    if with_jax:
        import jax
        libs["jax"] = jax
    rows = []
    for size in (8, 1_000_000):
        x_np = np.linspace(-2, 2, size, dtype=np.float32)
        number = 200 if size == 8 else 5
        timings = {}
        for name, lib in libs.items():
            x = lib.numpy.asarray(x_np)
            chain = lambda v, lib=lib: lib.numpy.tanh(lib.numpy.cos(lib.numpy.sin(v))).sum()
            grad = lib.grad(chain)
            if name == "jax":
                grad = lib.jit(grad)
                grad(x).block_until_ready()
            timings[name] = best_of(lambda: np.asarray(grad(x)), number)
        timings["numpy"] = best_of(lambda: chain_grad_numpy(x_np), number)
        rows.append((f"grad chain f32[{size}]", timings))
    rng = np.random.default_rng(0)
    params_np = {"w1": rng.normal(size=(64, 128)).astype(np.float32),
                 "b1": np.zeros(128, np.float32),
                 "w2": rng.normal(size=(128, 10)).astype(np.float32),
                 "b2": np.zeros(10, np.float32)}
    x_np = rng.normal(size=(256, 64)).astype(np.float32)
    y_np = rng.normal(size=(256, 10)).astype(np.float32)
    timings = {}
    for name, lib in libs.items():
        params = {k: lib.numpy.asarray(v) for k, v in params_np.items()}
        x, y = lib.numpy.asarray(x_np), lib.numpy.asarray(y_np)
        grad = lib.grad(lambda p, a, b, lib=lib: mlp_loss(lib, p, a, b))
        if name == "jax":
            grad = lib.jit(grad)
            lib.block_until_ready(grad(params, x, y))
        timings[name] = best_of(lambda: lib.block_until_ready(grad(params, x, y)), 20)
    rows.append(("grad mlp 256x64x128x10", timings))
    small = jjnp.ones(3)
    timings = {"justjax": best_of(lambda: justjax.make_jaxpr(
        justjax.grad(lambda v: jjnp.tanh(jjnp.cos(jjnp.sin(v))).sum()))(small), 100)}
    rows.append(("make_jaxpr(grad chain)", timings))

    names = ["justjax", "numpy"] + (["jax"] if with_jax else [])
    print(f"{'operation':26s}" + "".join(f"{n:>12s}" for n in names) + f"{'vs numpy':>10s}"
          + (f"{'vs jax':>9s}" if with_jax else ""))
    for label, t in rows:
        cells = "".join(f"{t[n] * 1e6:10.1f}us" if n in t else f"{'-':>12s}" for n in names)
        vs_numpy = f"{t['justjax'] / t['numpy']:10.1f}" if "numpy" in t else f"{'-':>10s}"
        vs_jax = (f"{t['justjax'] / t['jax']:9.1f}" if "jax" in t else f"{'-':>9s}") \
            if with_jax else ""
        print(f"{label:26s}{cells}{vs_numpy}{vs_jax}")


if __name__ == "__main__":
    main()
