"""Control-flow costs, as ratios against the same loop written in NumPy, side by side:
an RNN over 100 steps (`lax.scan`) forward and with its gradient, a 4th-order Runge-Kutta
integrator (`scan`), a Newton iteration (`while_loop`) under `vmap`, and a `cond`.

Run: `.venv/bin/python benchmarks/bench_control_flow.py`. With `--jax` (real jax importable and
justjax on PYTHONPATH, e.g. `PYTHONPATH=src /work/jaxvenv/bin/python
benchmarks/bench_control_flow.py --jax`) real JAX is timed in the same run. justjax runs jitted
programs on its reference backend (a NumPy interpreter of the StableHLO, one NumPy call per op
per loop trip) until the native backend lands (issue #9), so its ratios measure that.
"""
from __future__ import annotations

import sys
import timeit

import numpy as np

import justjax

HIDDEN, STEPS = 32, 100


def best_of(stmt, number: int, repeat: int = 5) -> float:
    """Seconds per call, best of `repeat` runs of `number` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def rnn_numpy(w, u, xs):
    h = np.zeros(HIDDEN, np.float32)
    for x in xs:
        h = np.tanh(w @ h + u @ x)
    return float(np.sum(h))


def rk4_numpy(k, y0, dt=0.01):
    y = y0
    for _ in range(STEPS):
        k1 = -k * y
        k2 = -k * (y + 0.5 * dt * k1)
        k3 = -k * (y + 0.5 * dt * k2)
        k4 = -k * (y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def newton_numpy(a):
    x = np.maximum(a, 1.0)
    for _ in range(50):
        done = np.abs(x * x - a) <= 1e-5 * a
        if done.all():
            break
        x = np.where(done, x, x - (x * x - a) / (2 * x))
    return x


def programs(lib):
    """The benchmarked functions written against `lib` (justjax or jax), jitted."""
    jnp, lax = lib.numpy, lib.lax

    def rnn(w, u, xs):
        def step(h, x):
            return jnp.tanh(w @ h + u @ x), None
        h, _ = lax.scan(step, jnp.zeros(HIDDEN, jnp.float32), xs)
        return jnp.sum(h)

    def rk4(k, y0, dt=0.01):
        def step(y, _):
            k1 = -k * y
            k2 = -k * (y + 0.5 * dt * k1)
            k3 = -k * (y + 0.5 * dt * k2)
            k4 = -k * (y + dt * k3)
            return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        return lax.scan(step, y0, None, length=STEPS)[0]

    def newton(a):
        def body(c):
            x, i = c
            return x - (x * x - a) / (2 * x), i + 1

        def cond(c):
            x, i = c
            return (jnp.abs(x * x - a) > 1e-5 * a) & (i < 50)
        return lax.while_loop(cond, body, (jnp.maximum(a, 1.0), 0))[0]

    def branch(p, x):
        return lax.cond(p, jnp.sin, jnp.cos, x)

    return {"rnn": lib.jit(rnn), "rnn grad": lib.jit(lib.grad(rnn, argnums=(0, 1))),
            "rk4": lib.jit(rk4), "rk4 grad k": lib.jit(lib.grad(lambda k, y: jnp.sum(rk4(k, y)))),
            "newton vmap": lib.jit(lib.vmap(newton)), "cond": lib.jit(branch)}


def measure(lib, inputs) -> dict[str, float]:
    fns = programs(lib)
    w, u, xs, k, y0, a, p, x = (lib.numpy.asarray(v) for v in inputs)
    calls = {"rnn": lambda: fns["rnn"](w, u, xs), "rnn grad": lambda: fns["rnn grad"](w, u, xs),
             "rk4": lambda: fns["rk4"](k, y0), "rk4 grad k": lambda: fns["rk4 grad k"](k, y0),
             "newton vmap": lambda: fns["newton vmap"](a), "cond": lambda: fns["cond"](p, x)}
    figures = {}
    for name, call in calls.items():
        lib.block_until_ready(call())
        figures[name] = best_of(lambda: lib.block_until_ready(call()), 3)
    return figures


def main() -> None:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) / HIDDEN).astype(np.float32)
    u = (rng.standard_normal((HIDDEN, 8)) / 8).astype(np.float32)
    xs = rng.standard_normal((STEPS, 8)).astype(np.float32)
    k, y0 = np.float32(0.7), np.ones(16, np.float32)
    a = rng.uniform(0.1, 100.0, 64).astype(np.float32)
    p, x = np.bool_(True), rng.standard_normal(1000).astype(np.float32)
    inputs = (w, u, xs, k, y0, a, p, x)
    numpy_times = {"rnn": best_of(lambda: rnn_numpy(w, u, xs), 20),
                   "rnn grad": best_of(lambda: rnn_numpy(w, u, xs), 20),
                   "rk4": best_of(lambda: rk4_numpy(k, y0), 20),
                   "rk4 grad k": best_of(lambda: rk4_numpy(k, y0), 20),
                   "newton vmap": best_of(lambda: newton_numpy(a), 20),
                   "cond": best_of(lambda: np.sin(x) if p else np.cos(x), 200)}
    libs = {"justjax": justjax}
    if "--jax" in sys.argv:
        import jax
        libs["jax"] = jax
    results = {name: measure(lib, inputs) for name, lib in libs.items()}
    print("Ratios are to the NumPy loop (for grads: to the NumPy forward loop).")
    print(f"{'':14s}{'numpy':>12s}" + "".join(f"{n:>12s}{'ratio':>8s}" for n in results))
    for key, base in numpy_times.items():
        cells = "".join(f"{results[n][key] * 1e3:10.3f}ms{results[n][key] / base:7.2f}x"
                        for n in results)
        print(f"{key:14s}{base * 1e3:10.3f}ms{cells}")


if __name__ == "__main__":
    main()
