"""Compile-time costs.

1. The optimizing pipeline: a 200-layer unrolled program (about 2,000 jaxpr equations)
   traced, lowered, and run through every pass (issue #8: under 1 s on CI's 2-core machine;
   the cost must stay linear, so 100 and 400 layers are timed too).
2. With `--first-call [--jax-python PATH]`: the first call of registered workloads
   (`workloads.py`) in fresh processes, justjax and real JAX alternating (issue #24), split
   into the stages both report through `jax.monitoring` (trace, jaxpr to module, backend
   compile) and the rest (dispatch and the first run). Inputs are on the device and the
   library imported before the clock starts; no persistent compilation cache is read.

Run: `.venv/bin/python benchmarks/bench_compile.py [--first-call] [--runs N]
[--only seed_grad_chain,mlp_train_step]`.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# The events both libraries record for a compile, by their names in JAX's monitoring.
STAGES = {"trace": "/jax/core/compile/jaxpr_trace_duration",
          "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration",
          "compile": "/jax/core/compile/backend_compile_duration"}


def layered(layers: int):
    import justjax.numpy as jnp

    def f(x, w, b):
        for i in range(layers):
            y = jnp.tanh(x @ w + b) * 0.5 + x * (1.0 / (i + 1))
            x = jnp.where(y > 0, y, 0.1 * y) - jnp.mean(y, axis=-1, keepdims=True)
        return jnp.sum(x)
    return f


def measure(layers: int) -> dict[str, float]:
    import justjax as jax
    from justjax._src.hlo.passes import optimize
    args = (np.ones((8, 16), np.float32), np.ones((16, 16), np.float32) * 0.01,
            np.zeros(16, np.float32))
    start = time.perf_counter()
    closed = jax.make_jaxpr(layered(layers))(*args)
    traced = time.perf_counter()
    module = jax.jit(layered(layers)).lower(*args).compiler_ir()
    lowered = time.perf_counter()
    optimized = optimize.optimize(module)
    done = time.perf_counter()
    return {"equations": len(closed.jaxpr.eqns), "ops in": sum(1 for _ in module.walk()),
            "ops out": sum(1 for _ in optimized.walk()), "trace s": traced - start,
            "lower s": lowered - traced, "passes s": done - lowered}


def first_call_stages(lib_name: str, workload: str) -> dict[str, float]:
    """In this (fresh) process: the seconds of each stage of `workload`'s first call."""
    sys.path.insert(0, str(HERE))
    import workloads
    lib = importlib.import_module(lib_name)
    seconds = dict.fromkeys(STAGES, 0.0)
    names = {event: stage for stage, event in STAGES.items()}

    def listener(event: str, duration: float, **_: object) -> None:
        if event in names:
            seconds[names[event]] += duration

    lib.monitoring.register_event_duration_secs_listener(listener)
    work = workloads.WORKLOADS[workload]
    args = [lib.device_put(a) for a in work.inputs(np.random.default_rng(0))]
    lib.block_until_ready(args)
    start = time.perf_counter()
    lib.block_until_ready(work.build(lib)(*args))
    seconds["total"] = time.perf_counter() - start
    seconds["run"] = seconds["total"] - sum(seconds[stage] for stage in STAGES)
    return seconds


def first_calls(python: dict[str, str], names: list[str], runs: int) -> None:
    """Prints the median of each stage over `runs` fresh processes per library."""
    columns = ["trace", "lower", "compile", "run", "total"]
    print(f"{'workload':18s}{'lib':>9s}" + "".join(f"{c + ' ms':>11s}" for c in columns)
          + f"{'ratio':>8s}")
    env = dict(os.environ, JAX_ENABLE_COMPILATION_CACHE="false")
    for name in names:
        found: dict[str, list[dict[str, float]]] = {lib: [] for lib in python}
        for _ in range(runs):
            for lib, interpreter in python.items():
                done = subprocess.run([interpreter, __file__, "--stages", lib, name],
                                      capture_output=True, text=True, env=env, check=True)
                found[lib].append(json.loads(done.stdout.strip().splitlines()[-1]))
        totals = {lib: np.array([r["total"] for r in rows]) for lib, rows in found.items()}
        for lib, rows in found.items():
            medians = [1e3 * float(np.median([r[c] for r in rows])) for c in columns]
            ratio = (f"{float(np.median(totals[lib] / totals['jax'])):8.2f}"
                     if "jax" in totals else "")
            print(f"{name:18s}{lib:>9s}" + "".join(f"{m:11.1f}" for m in medians) + ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first-call", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="seed_grad_chain,mlp_train_step")
    parser.add_argument("--jax-python", default="/work/jaxvenv/bin/python")
    parser.add_argument("--stages", nargs=2, metavar=("LIB", "WORKLOAD"),
                        help=argparse.SUPPRESS)  # the worker of --first-call
    args = parser.parse_args()
    if args.stages:
        print(json.dumps(first_call_stages(*args.stages)))
        return
    if args.first_call:
        python = {"justjax": sys.executable}
        if os.path.exists(args.jax_python):
            python["jax"] = args.jax_python
        first_calls(python, args.only.split(","), args.runs)
        return
    print(f"{'layers':>7s}{'eqns':>7s}{'ops in':>8s}{'ops out':>8s}{'trace s':>9s}"
          f"{'lower s':>9s}{'passes s':>10s}")
    for layers in (100, 200, 400):
        m = measure(layers)
        print(f"{layers:7d}{m['equations']:7d}{m['ops in']:8d}{m['ops out']:8d}"
              f"{m['trace s']:9.3f}{m['lower s']:9.3f}{m['passes s']:10.3f}")


if __name__ == "__main__":
    main()
