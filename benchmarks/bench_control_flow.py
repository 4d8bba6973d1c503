"""Loops and small dots on the native backend, side by side with real JAX (and NumPy).

    .venv/bin/python benchmarks/bench_control_flow.py [--jax] [--pin] [--rounds N]
        [--only "NAME;..."] [--cpu]
    .venv/bin/python benchmarks/bench_control_flow.py --dots [--pin]

Loops: RNN `scan`s of `tanh(h @ W + x)` (h f32[128]) over 100, 1,000 and 10,000 steps, the
same with `W @ h` and as a `fori_loop`, a batch of 16 RNNs, elementwise `scan`s and a
counting `while_loop` of 1,000 and 10,000 trips (the difference between the two lengths is
the cost of a trip), an RNN's gradient, a Runge-Kutta integrator, a Newton iteration under
`vmap` and a `cond`. justjax and real JAX (`--jax`, the side venv's interpreter) each run in
a worker process (the two never share one); NumPy's loop is timed here. Samples alternate
between the sides in rounds, so that load from other processes falls on both; the table
gives medians, the ratio of medians, its spread over three interleaved thirds of the rounds
and the ratio of the fastest samples (`--cpu`: process CPU time instead of wall time, less
sensitive to a loaded machine but counting any helper threads).

`--pin` sets OpenBLAS's pin (`OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512`) in both
processes, as CI does; otherwise both variables are removed (a user's machine).

`--dots`: the small-dot kernels against BLAS, per shape class (vector-matrix, matrix-vector,
square, batched, transposed): ns per product inside a 200-trip `fori_loop`, each variant in
its own process (OpenBLAS's threads spin after a call and would slow whatever runs next).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
JAX_PYTHON = "/work/jaxvenv/bin/python"
PIN = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512"}
F32 = np.float32
HIDDEN = 128


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


# ----------------------------------------------------------------------------- the workloads
def _rnn(lib: Any, matvec: bool = False, stacked: bool = True) -> Callable:
    jnp = lib.numpy

    def rnn(h0, w, xs):
        def step(h, x):
            h = jnp.tanh((w @ h if matvec else h @ w) + x)
            return h, (h if stacked else None)
        return lib.lax.scan(step, h0, xs)
    return rnn


def _rnn_numpy(h0, w, xs, matvec=False):
    h, hs = h0, np.empty_like(xs)
    for t in range(xs.shape[0]):
        h = np.tanh((w @ h if matvec else h @ w) + xs[t])
        hs[t] = h
    return h, hs


def _rnn_inputs(steps: int, batch: tuple[int, ...] = ()) -> list[np.ndarray]:
    rng = _rng()
    return [np.zeros(batch + (HIDDEN,), F32),
            (rng.standard_normal((HIDDEN, HIDDEN)) * HIDDEN ** -0.5).astype(F32),
            (rng.standard_normal((steps,) + batch + (HIDDEN,)) * 0.5).astype(F32)]


def _fori(lib: Any) -> Callable:
    jnp = lib.numpy
    return lambda h0, w, b: lib.lax.fori_loop(0, 100, lambda i, h: jnp.tanh(h @ w + b), h0)


def _fori_numpy(h0, w, b):
    h = h0
    for _ in range(100):
        h = np.tanh(h @ w + b)
    return h


def _decay(lib: Any) -> Callable:
    def scan(c0, ys):
        return lib.lax.scan(lambda c, y: (c * 0.99 + y, c * 0.99 + y), c0, ys)
    return scan


def _decay_numpy(c0, ys):
    c, out = c0, np.empty_like(ys)
    for t in range(ys.shape[0]):
        c = c * F32(0.99) + ys[t]
        out[t] = c
    return c, out


def _count(lib: Any, trips: int) -> Callable:
    def loop(x):
        return lib.lax.while_loop(lambda c: c[0] < trips,
                                  lambda c: (c[0] + 1, c[1] * 1.0001 + 1.0), (0, x))[1]
    return loop


def _count_numpy(x, trips):
    for _ in range(trips):
        x = x * F32(1.0001) + F32(1.0)
    return x


def _rk4(lib: Any) -> Callable:
    def rk4(k, y0, dt=0.01):
        def step(y, _):
            k1 = -k * y
            k2 = -k * (y + 0.5 * dt * k1)
            k3 = -k * (y + 0.5 * dt * k2)
            k4 = -k * (y + dt * k3)
            return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        return lib.lax.scan(step, y0, None, length=100)[0]
    return rk4


def _newton(lib: Any) -> Callable:
    jnp = lib.numpy

    def newton(a):
        def body(c):
            x, i = c
            return x - (x * x - a) / (2 * x), i + 1

        def cond(c):
            x, i = c
            return (jnp.abs(x * x - a) > 1e-5 * a) & (i < 50)
        return lib.lax.while_loop(cond, body, (jnp.maximum(a, 1.0), 0))[0]
    return lib.vmap(newton)


def _rnn_grad(lib: Any) -> Callable:
    jnp = lib.numpy

    def loss(w, h0, xs):
        h, _ = _rnn(lib, stacked=False)(h0, w, xs)
        return jnp.sum(h)
    return lib.grad(loss)


def _workloads() -> dict[str, tuple[Callable[[Any], Callable], Callable[[], list],
                                    Callable | None]]:
    """name -> (build(lib) -> function, inputs(), NumPy's loop or None)."""
    rng = _rng()
    ew = {n: rng.standard_normal((n, 16)).astype(F32) for n in (1000, 10000)}
    w, b = _rnn_inputs(1)[1], (rng.standard_normal(HIDDEN) * 0.5).astype(F32)
    return {
        "rnn scan 100": (_rnn, lambda: _rnn_inputs(100), _rnn_numpy),
        "rnn scan 1,000": (_rnn, lambda: _rnn_inputs(1000), _rnn_numpy),
        "rnn scan 10,000": (_rnn, lambda: _rnn_inputs(10000), _rnn_numpy),
        "rnn scan 100 W @ h": (lambda lib: _rnn(lib, matvec=True), lambda: _rnn_inputs(100),
                               lambda *a: _rnn_numpy(*a, matvec=True)),
        "rnn fori_loop 100": (_fori, lambda: [np.zeros(HIDDEN, F32), w, b], _fori_numpy),
        "rnn scan 100, batch 16": (lambda lib: _rnn(lib, stacked=False),
                                   lambda: _rnn_inputs(100, (16,)), None),
        "rnn scan 100 grad": (_rnn_grad, lambda: [w, *_rnn_inputs(100)[::2]], None),
        "scan 1,000 c*0.99+y": (_decay, lambda: [np.zeros(16, F32), ew[1000]], _decay_numpy),
        "scan 10,000 c*0.99+y": (_decay, lambda: [np.zeros(16, F32), ew[10000]],
                                 _decay_numpy),
        "while 1,000 trips": (lambda lib: _count(lib, 1000), lambda: [np.ones(8, F32)],
                              lambda x: _count_numpy(x, 1000)),
        "while 10,000 trips": (lambda lib: _count(lib, 10000), lambda: [np.ones(8, F32)],
                               lambda x: _count_numpy(x, 10000)),
        "rk4 scan 100": (_rk4, lambda: [np.float32(0.7), np.ones(16, F32)], None),
        "newton vmap while": (_newton, lambda: [rng.uniform(0.1, 100.0, 64).astype(F32)],
                              None),
        "cond": (lambda lib: lambda p, x: lib.lax.cond(p, lib.numpy.sin, lib.numpy.cos, x),
                 lambda: [np.bool_(True), rng.standard_normal(1000).astype(F32)], None),
    }


# ----------------------------------------------------------------------------- one side
class Side:
    """One library's jitted workloads, sampled on request."""

    def __init__(self, lib_name: str, cpu: bool) -> None:
        if lib_name == "jax":
            import jax
            jax.config.update("jax_platforms", "cpu")
            self.lib = jax
        else:
            import justjax
            self.lib = justjax
        self.clock = time.process_time if cpu else time.perf_counter
        self.ready: dict[str, tuple[Callable, list]] = {}

    def prepare(self, name: str) -> list[np.ndarray]:
        build, inputs, _ = _workloads()[name]
        fn = self.lib.jit(build(self.lib))
        args = [self.lib.numpy.asarray(a) for a in inputs()]
        out = fn(*args)
        self.lib.block_until_ready(out)
        self.ready[name] = (fn, args)
        return [np.asarray(leaf) for leaf in self.lib.tree_util.tree_leaves(out)]

    def sample(self, name: str, count: int) -> float:
        fn, args = self.ready[name]
        start = self.clock()
        for _ in range(count):
            self.lib.block_until_ready(fn(*args))
        return (self.clock() - start) / count


def serve(lib_name: str, cpu: bool) -> None:
    """The worker: one JSON request per line (`prepare` or `sample`), one answer per line."""
    side = Side(lib_name, cpu)
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "prepare":
            outs = side.prepare(request["name"])
            # A strided sample of each result is enough to compare the two sides.
            answer = {"outs": [o.ravel()[::max(1, o.size // 4096)].tolist() for o in outs]}
        else:
            answer = {"seconds": side.sample(request["name"], request["count"])}
        print(json.dumps(answer), flush=True)


class Worker:
    def __init__(self, python: str, lib_name: str, env: dict[str, str], cpu: bool) -> None:
        command = [python, str(Path(__file__).resolve()), "--serve", lib_name]
        if cpu:
            command.append("--cpu")
        # jax from a folder without justjax's sources; justjax from where this was started.
        cwd = "/tmp" if lib_name == "jax" else os.getcwd()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env, cwd=cwd)

    def ask(self, **request: Any) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the worker stopped")
        return json.loads(line)

    def prepare(self, name: str) -> list[np.ndarray]:
        return [np.asarray(o, F32) for o in self.ask(op="prepare", name=name)["outs"]]

    def sample(self, name: str, count: int) -> float:
        return self.ask(op="sample", name=name, count=count)["seconds"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def _environment(pin: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PIN}
    if pin:
        env.update(PIN)
    return env


def run_loops(args: argparse.Namespace) -> None:
    env = _environment(args.pin)
    sides: dict[str, Any] = {"justjax": Worker(sys.executable, "justjax", env, args.cpu)}
    if args.jax:
        sides["jax"] = Worker(args.jax_python, "jax", env, args.cpu)
    names = args.only.split(";") if args.only else list(_workloads())
    print(f"pin: {'on' if args.pin else 'off'}; clock: {'cpu' if args.cpu else 'wall'}; "
          f"load average {os.getloadavg()[0]:.1f}")
    head = "| workload | numpy | justjax | jax | justjax/jax (thirds) | fastest |"
    print(head + "\n|" + " --- |" * (head.count("|") - 1))
    for name in names:
        outs = {side: runner.prepare(name) for side, runner in sides.items()}
        if "jax" in outs and not all(np.allclose(a, b, rtol=1e-4, atol=1e-4) for a, b in
                                     zip(outs["justjax"], outs["jax"], strict=True)):
            print(f"| {name} | justjax disagrees with jax |")
            continue
        first = sides["justjax"].sample(name, 1)
        count = max(1, int(0.02 / max(first, 1e-6)))
        samples: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, runner in sides.items():
                samples[side].append(runner.sample(name, count))
        print(_row(name, samples, _numpy_time(name)))
    for runner in sides.values():
        runner.close()


def _numpy_time(name: str) -> float | None:
    _, inputs, reference = _workloads()[name]
    if reference is None:
        return None
    args = inputs()
    return min(_timed(lambda: reference(*args)) for _ in range(3))


def _row(name: str, samples: dict[str, list[float]], numpy_seconds: float | None) -> str:
    j = np.array(samples["justjax"])
    cells = [name, _us(numpy_seconds), _us(float(np.median(j)))]
    if "jax" in samples:
        x = np.array(samples["jax"])
        thirds = [np.median(j[i::3]) / np.median(x[i::3]) for i in range(3)]
        cells += [_us(float(np.median(x))),
                  f"{np.median(j) / np.median(x):.2f}× ({min(thirds):.2f}–{max(thirds):.2f})",
                  f"{j.min() / x.min():.2f}×"]
    else:
        cells += ["", "", ""]
    return "| " + " | ".join(cells) + " |"


def _us(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e6:.1f} µs"


# ----------------------------------------------------------------------------- small dots
DOTS = {"vector-matrix 128": ((128,), (128, 128), "vm"),
        "matrix-vector 128": ((128,), (128, 128), "mv"),
        "vector-matrix 512": ((512,), (512, 512), "vm"),
        "matrix-vector 512": ((512,), (512, 512), "mv"),
        "matmul 16": ((16, 16), (16, 16), "mm"), "matmul 32": ((32, 32), (32, 32), "mm"),
        "matmul 48": ((48, 48), (48, 48), "mm"), "matmul 64": ((64, 64), (64, 64), "mm"),
        "16x128 @ 128x128": ((16, 128), (128, 128), "mm"),
        "32x32 @ (32x32).T": ((32, 32), (32, 32), "mt"),
        "batched 8 x 16x16": ((8, 16, 16), (8, 16, 16), "mm")}
DOT_TRIPS = 200


def dots_worker(mode: str) -> None:
    """Prints {shape: ns per product} with the vector kernels (`mode` "vector") or BLAS."""
    import justjax
    from justjax._src.backends.llvm.kernels import dot_vector
    threshold = 1 << 62 if mode == "vector" else -1
    dot_vector.MATVEC_WORK = dot_vector.SMALL_MATMUL_WORK = threshold
    products = {"vm": lambda c, w: c @ w, "mv": lambda c, w: w @ c, "mm": lambda c, w: c @ w,
                "mt": lambda c, w: c @ w.T}
    found = {}
    rng = _rng()
    for name, (cs, ws, kind) in DOTS.items():
        c = justjax.numpy.asarray(rng.standard_normal(cs).astype(F32))
        w = justjax.numpy.asarray((rng.standard_normal(ws) / np.sqrt(ws[-1])).astype(F32))
        f = products[kind]
        fn = justjax.jit(lambda c, w, f=f: justjax.lax.fori_loop(
            0, DOT_TRIPS, lambda i, h: f(h, w) * 0.999, c))
        justjax.block_until_ready(fn(c, w))
        best = min(_timed(lambda: justjax.block_until_ready(fn(c, w))) for _ in range(15))
        found[name] = best / DOT_TRIPS * 1e9
    print(json.dumps(found))


def _timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def run_dots(args: argparse.Namespace) -> None:
    env = _environment(args.pin)
    found = {}
    for mode in ("vector", "blas"):
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--dots-worker",
                               mode], env=env, capture_output=True, text=True, check=True)
        found[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"pin: {'on' if args.pin else 'off'}; ns per product (fastest of 15 runs of a "
          f"{DOT_TRIPS}-trip loop)")
    print("| product | vector loops | BLAS | BLAS / vector |\n| --- | --- | --- | --- |")
    for name in DOTS:
        v, b = found["vector"][name], found["blas"][name]
        print(f"| {name} | {v:.0f} | {b:.0f} | {b / v:.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax", action="store_true", help="time real JAX side by side")
    parser.add_argument("--jax-python", default=JAX_PYTHON)
    parser.add_argument("--pin", action="store_true", help="OpenBLAS pinned as in CI")
    parser.add_argument("--cpu", action="store_true", help="process CPU time, not wall time")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", default="", help="workload names separated by ;")
    parser.add_argument("--dots", action="store_true", help="small dots: vector loops vs BLAS")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--dots-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.cpu)
    elif args.dots_worker:
        dots_worker(args.dots_worker)
    elif args.dots:
        run_dots(args)
    else:
        run_loops(args)


if __name__ == "__main__":
    main()
