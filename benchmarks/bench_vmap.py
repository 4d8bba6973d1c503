"""vmap costs, as ratios against hand-vectorized NumPy, side by side; plus the Python loop
vmap replaces (the same justjax function called once per example), to show the batching
rules keep the work batched.

Run: `.venv/bin/python benchmarks/bench_vmap.py`. Optionally also times real JAX when it is
importable (`/work/jaxvenv/bin/python benchmarks/bench_vmap.py --jax`, with justjax on
PYTHONPATH): JAX runs compiled code (jit), justjax still evaluates eagerly op by op through
NumPy (the compiler and native backend are later issues), so the ratio to JAX mostly
measures that.
"""
from __future__ import annotations

import sys
import timeit

import numpy as np

import justjax


def best_of(stmt, number: int, repeat: int = 5) -> float:
    """Seconds per call, best of `repeat` runs of `number` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def loss(lib, w, x, y):
    return (lib.numpy.tanh(x @ w).sum() - y) ** 2


def per_example_grads_numpy(w, xs, ys):
    h = np.tanh(xs @ w)                       # [B, K]
    r = h.sum(1) - ys                         # [B]
    dh = (2 * r)[:, None] * (1 - h * h)       # [B, K]
    return xs[:, :, None] * dh[:, None, :]    # [B, D, K]


def main() -> None:
    with_jax = "--jax" in sys.argv
    libs = {"justjax": justjax}
    if with_jax:
        import jax
        libs["jax"] = jax
    rng = np.random.default_rng(0)
    rows = []

    # Batched matrix-vector products: vmap(jnp.dot) over 512 examples.
    mats = rng.normal(size=(512, 64, 64)).astype(np.float32)
    vecs = rng.normal(size=(512, 64)).astype(np.float32)
    timings = {"numpy": best_of(lambda: np.einsum("bij,bj->bi", mats, vecs), 50)}
    for name, lib in libs.items():
        a, v = lib.numpy.asarray(mats), lib.numpy.asarray(vecs)
        f = lib.vmap(lib.numpy.dot)
        if name == "jax":
            f = lib.jit(f)
        lib.block_until_ready(f(a, v))
        timings[name] = best_of(lambda: lib.block_until_ready(f(a, v)), 50)
    one = justjax.numpy.asarray(mats[0])
    timings["loop"] = 512 * best_of(lambda: justjax.block_until_ready(
        justjax.numpy.dot(one, justjax.numpy.asarray(vecs[0]))), 50)
    rows.append(("vmap(dot) 512x64x64", timings))

    # Per-example gradients of a small model: vmap(grad(loss), in_axes=(None, 0, 0)).
    w_np = rng.normal(size=(32, 16)).astype(np.float32) * 0.1
    xs_np = rng.normal(size=(256, 32)).astype(np.float32)
    ys_np = rng.normal(size=(256,)).astype(np.float32)
    timings = {"numpy": best_of(lambda: per_example_grads_numpy(w_np, xs_np, ys_np), 20)}
    for name, lib in libs.items():
        w, xs, ys = (lib.numpy.asarray(a) for a in (w_np, xs_np, ys_np))
        f = lib.vmap(lib.grad(lambda w, x, y, lib=lib: loss(lib, w, x, y)), in_axes=(None, 0, 0))
        if name == "jax":
            f = lib.jit(f)
        lib.block_until_ready(f(w, xs, ys))
        timings[name] = best_of(lambda: lib.block_until_ready(f(w, xs, ys)), 20)
    g = justjax.grad(lambda w, x, y: loss(justjax, w, x, y))
    w, x0, y0 = (justjax.numpy.asarray(a) for a in (w_np, xs_np[0], ys_np[0]))
    timings["loop"] = 256 * best_of(lambda: justjax.block_until_ready(g(w, x0, y0)), 10)
    rows.append(("per-example grads B=256", timings))

    # Jacobian of a vector function: jacrev, one batched pullback.
    x_np = rng.normal(size=(256,)).astype(np.float32)
    timings = {"numpy": best_of(lambda: np.diag(np.cos(x_np)), 50)}
    for name, lib in libs.items():
        x = lib.numpy.asarray(x_np)
        f = lib.jacrev(lib.numpy.sin)
        if name == "jax":
            f = lib.jit(f)
        lib.block_until_ready(f(x))
        timings[name] = best_of(lambda: lib.block_until_ready(f(x)), 20)
    rows.append(("jacrev(sin) f32[256]", timings))

    names = ["justjax", "numpy", "loop"] + (["jax"] if with_jax else [])
    print(f"{'operation':26s}" + "".join(f"{n:>12s}" for n in names) + f"{'vs numpy':>10s}"
          + f"{'vs loop':>9s}" + (f"{'vs jax':>9s}" if with_jax else ""))
    for label, t in rows:
        cells = "".join(f"{t[n] * 1e6:10.1f}us" if n in t else f"{'-':>12s}" for n in names)
        vs_numpy = f"{t['justjax'] / t['numpy']:10.1f}"
        vs_loop = f"{t['justjax'] / t['loop']:9.2f}" if "loop" in t else f"{'-':>9s}"
        vs_jax = (f"{t['justjax'] / t['jax']:9.1f}" if "jax" in t else f"{'-':>9s}") \
            if with_jax else ""
        print(f"{label:26s}{cells}{vs_numpy}{vs_loop}{vs_jax}")


if __name__ == "__main__":
    main()
