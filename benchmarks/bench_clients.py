"""Client libraries on justjax against real JAX, in one run (issue #21).

Two workers run `clients_worker.py`: one on real JAX (`--jax-python`, the side venv), one on
justjax (`python -m justjax run`, this venv). Each round times every workload on both sides,
alternating which goes first, so load from other processes falls on both alike. Reported:
the median over rounds of each side's seconds per call, the round-to-round band, and:
- the flax.nnx + optax (Adam) train step of `examples/train_flax.py` (goal: ≤ 1.3× JAX);
- the per-call work client wrappers add over `jax.jit` of the same computation: `nnx.jit`
  (a module split and merged every call) and `eqx.filter_jit` (a module partitioned every
  call), as the wrapper's time minus the plain jit's (goal: ≤ 1.5× what it costs on JAX).

Run: `.venv/bin/python benchmarks/bench_clients.py [--rounds 5] [--seconds 1.0]`.
The machine's OpenBLAS pins (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE) are unset for both workers,
as on a user's machine.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
WORKER = HERE / "clients_worker.py"
DEFAULT_JAX_PYTHON = "/work/jaxvenv/bin/python"
WORKLOADS = ("flax_train_step", "jit_linear", "nnx_jit_linear", "jit_mlp", "eqx_filter_jit_mlp")
# (wrapper workload, the plain jit it wraps)
OVERHEADS = (("nnx_jit_linear", "jit_linear", "nnx.jit"),
             ("eqx_filter_jit_mlp", "jit_mlp", "eqx.filter_jit"))


class Worker:
    """A worker process answering timing requests."""

    def __init__(self, command: list[str]) -> None:
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env, cwd=HERE.parent)

    def time(self, workload: str, seconds: float) -> float:
        self.process.stdin.write(json.dumps({"workload": workload, "seconds": seconds}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker {self.process.args} died")
        return json.loads(line)["seconds_per_call"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def measure(rounds: int, seconds: float, jax_python: str) -> dict[str, dict[str, list[float]]]:
    sides = {"jax": Worker([jax_python, str(WORKER)]),
             "justjax": Worker([sys.executable, "-m", "justjax", "run", str(WORKER)])}
    times: dict[str, dict[str, list[float]]] = {w: {"jax": [], "justjax": []} for w in WORKLOADS}
    try:
        for round_ in range(rounds):
            order = ("jax", "justjax") if round_ % 2 == 0 else ("justjax", "jax")
            for workload in WORKLOADS:
                for side in order:
                    times[workload][side].append(sides[side].time(workload, seconds))
    finally:
        for worker in sides.values():
            worker.close()
    return times


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _band(values: list[float]) -> str:
    return f"{_fmt(min(values))}–{_fmt(max(values))}"


def report(times: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| workload | justjax | JAX | justjax / JAX (band over rounds) |",
             "| --- | --- | --- | --- |"]
    for workload, sides in times.items():
        ours, theirs = statistics.median(sides["justjax"]), statistics.median(sides["jax"])
        ratios = [a / b for a, b in zip(sides["justjax"], sides["jax"], strict=True)]
        lines.append(f"| {workload} | {_fmt(ours)} ({_band(sides['justjax'])}) | {_fmt(theirs)} "
                     f"({_band(sides['jax'])}) | {ours / theirs:.2f} "
                     f"({min(ratios):.2f}–{max(ratios):.2f}) |")
    lines += ["", "| wrapper | its per-call work on justjax | on JAX | justjax / JAX (band) |",
              "| --- | --- | --- | --- |"]
    for wrapped, plain, name in OVERHEADS:
        per_round = {side: [w - p for w, p in zip(times[wrapped][side], times[plain][side],
                                                  strict=True)] for side in ("justjax", "jax")}
        ours, theirs = (statistics.median(per_round[s]) for s in ("justjax", "jax"))
        ratios = [a / b for a, b in zip(per_round["justjax"], per_round["jax"], strict=True)]
        lines.append(f"| {name} | {_fmt(ours)} | {_fmt(theirs)} | {ours / theirs:.2f} "
                     f"({min(ratios):.2f}–{max(ratios):.2f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="sample length per side")
    parser.add_argument("--jax-python", default=DEFAULT_JAX_PYTHON)
    args = parser.parse_args(argv)
    print(report(measure(args.rounds, args.seconds, args.jax_python)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
