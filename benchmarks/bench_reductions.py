"""Side-by-side timing of float reductions: two justjax trees and real JAX, interleaved.

Each side is a worker process (`--worker LIB`, LIB `justjax` or `jax`, the tree on its
PYTHONPATH) answering one request a line: a case name, and it prints the median seconds per
call of a batch. The driver asks every side in turn for each case, `--rounds` times, so a burst
of load on a shared machine hits all sides alike, and prints the median ratio of each side to
the first with its spread (min..max over rounds).

    python benchmarks/bench_reductions.py \\
        --side old=/work/main/.venv/bin/python:/work/main/src \\
        --side new=/work/main/.venv/bin/python:/work/wt/reductions/src \\
        --side jax=/work/jaxvenv/bin/python: --rounds 5
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W  # noqa: E402


def _cases(lib: Any) -> dict[str, tuple[Callable, tuple]]:
    jnp = lib.numpy
    rng = np.random.default_rng(0)
    v = rng.random(1_000_000, dtype=np.float32)
    m1 = rng.random((1000, 1000), dtype=np.float32)
    m4 = rng.random((4096, 1024), dtype=np.float32)
    xent = W._xent_inputs(np.random.default_rng(1))
    norm = W._layernorm_inputs(np.random.default_rng(2))
    s = lambda axis: lib.jit(lambda a: jnp.sum(a, axis=axis))  # noqa: E731
    return {
        "sum f32[1e6]": (s(None), (v,)),
        "sum(sin^2) f32[1e6]": (lib.jit(lambda a: jnp.sum(jnp.sin(a) ** 2)), (v,)),
        "sum f32[1000,1000] axis 0": (s(0), (m1,)),
        "sum f32[1000,1000] axis 1": (s(1), (m1,)),
        "sum f32[4096,1024] axis 0": (s(0), (m4,)),
        "sum f32[4096,1024] axis 1": (s(1), (m4,)),
        "softmax xent f32[256,1000]": (W._xent_build(lib), xent),
        "layernorm f32[512,1024]": (W._layernorm_build(lib), norm),
        "cumsum f32[1e6]": (lib.jit(jnp.cumsum), (v,)),
        "cumsum f32[1000,1000] axis 0": (lib.jit(lambda a: jnp.cumsum(a, axis=0)), (m1,)),
    }


def worker(name: str) -> None:
    """Serves timing requests for library `name` on stdin/stdout."""
    lib = __import__(name)
    __import__(name + ".numpy")
    cases = _cases(lib)
    args_on_device = {k: tuple(lib.device_put(a) for a in args) for k, (_, args) in cases.items()}
    for k, (f, _) in cases.items():
        for _ in range(3):
            lib.block_until_ready(f(*args_on_device[k]))
    print("ready", flush=True)
    for line in sys.stdin:
        k = line.strip()
        f, args = cases[k][0], args_on_device[k]
        times = []
        for _ in range(15):
            start = time.perf_counter()
            for _ in range(5):
                lib.block_until_ready(f(*args))
            times.append((time.perf_counter() - start) / 5)
        print(statistics.median(times), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker")
    parser.add_argument("--side", action="append", default=[],
                        help="name=python:pythonpath (the first is the baseline)")
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    if opts.worker:
        worker(opts.worker)
        return
    procs = {}
    for side in opts.side:
        name, spec = side.split("=", 1)
        python, path = spec.split(":", 1)
        lib = "jax" if name.startswith("jax") else "justjax"
        env = dict(os.environ, PYTHONPATH=path) if path else dict(os.environ)
        p = subprocess.Popen([python, os.path.abspath(__file__), "--worker", lib], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             cwd="/tmp")
        assert p.stdout.readline().strip() == "ready"
        procs[name] = p
    names = list(procs)
    results: dict[str, dict[str, list[float]]] = {}
    for _ in range(opts.rounds):
        for case in _cases_names():
            for n in names:
                procs[n].stdin.write(case + "\n")
                procs[n].stdin.flush()
                results.setdefault(case, {}).setdefault(n, []).append(
                    float(procs[n].stdout.readline()))
    base = names[0]
    for case, per in results.items():
        cells = [f"{base} {statistics.median(per[base]) * 1e6:8.1f} us"]
        for n in names[1:]:
            ratios = [a / b for a, b in zip(per[n], per[base], strict=True)]
            cells.append(f"{n}/{base} {statistics.median(ratios):.2f} "
                         f"({min(ratios):.2f}..{max(ratios):.2f})")
        print(f"{case:28s} " + "  ".join(cells), flush=True)
    for p in procs.values():
        p.stdin.close()
        p.wait()


def _cases_names() -> list[str]:
    return ["sum f32[1e6]", "sum(sin^2) f32[1e6]", "sum f32[1000,1000] axis 0",
            "sum f32[1000,1000] axis 1", "sum f32[4096,1024] axis 0",
            "sum f32[4096,1024] axis 1", "softmax xent f32[256,1000]",
            "layernorm f32[512,1024]", "cumsum f32[1e6]", "cumsum f32[1000,1000] axis 0"]


if __name__ == "__main__":
    main()
