"""The performance targets of issue #9, measured in one run: justjax, NumPy and (with `--jax`) real
JAX on the same inputs, printed as a markdown table of medians and ratios.

Run: `.venv/bin/python benchmarks/run.py [--jax] [--quick] [--backend llvm|reference]
[--only NAME,...] [--jax-python PATH]`.

justjax and NumPy are timed in this process, JAX in a worker process of `--jax-python` (default
the side venv /work/jaxvenv), so that justjax and jax never share a process. Each side's first
result is checked against NumPy's (allclose) before it is timed, and justjax's against JAX's at the
end. Steady times are the median of >= 10 samples after warm-up, taken in rounds that alternate
NumPy, justjax and JAX, so that load from other processes on the machine falls on all of them.
First calls (trace + lower + cold compile + run) are timed each in a fresh process, alternating
justjax and JAX. `--quick` takes shorter samples and 3 fresh processes per first call instead of
10 (a smoke run, not for the targets).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import timing  # noqa: E402  (sibling modules of this script, not a package)
import workloads as W  # noqa: E402

PLATFORMS = {"llvm": "cpu", "reference": "reference"}
DEFAULT_JAX_PYTHON = "/work/jaxvenv/bin/python"
# A first call compiles cold on both sides: no persistent compilation cache is read.
COLD = {"JAX_ENABLE_COMPILATION_CACHE": "false"}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax", action="store_true", help="also time real JAX (in a subprocess)")
    parser.add_argument("--jax-python", default=DEFAULT_JAX_PYTHON,
                        help="the interpreter with jax installed")
    parser.add_argument("--quick", action="store_true", help="shorter samples, fewer processes")
    parser.add_argument("--backend", choices=sorted(PLATFORMS), default="llvm",
                        help="justjax's backend (sets JAX_PLATFORMS for the justjax side)")
    parser.add_argument("--only", default=",".join(W.WORKLOADS),
                        help="comma-separated workloads: " + ", ".join(W.WORKLOADS))
    args = parser.parse_args(argv)
    unknown = [n for n in args.only.split(",") if n not in W.WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(W.WORKLOADS)}")
    if args.jax and not os.path.exists(args.jax_python):
        parser.error(f"--jax: no interpreter at {args.jax_python} (see --jax-python)")
    return args


def justjax_env(backend: str) -> dict[str, str]:
    """The environment of justjax processes: `JAX_PLATFORMS` names the backend (and the
    `JUSTJAX_` variables that would win over the `JAX_` ones set here are dropped)."""
    env = dict(os.environ)
    for name in ("JAX_PLATFORMS", *COLD):
        env.pop("JUSTJAX_" + name.removeprefix("JAX_"), None)
    env.update(COLD, JAX_PLATFORMS=PLATFORMS[backend])
    return env


def jax_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUSTJAX_")}
    env.update(COLD, JAX_PLATFORMS="cpu")
    return env


class Worker:
    """JAX's side in its own process (`timing.py serve`), with `Side`'s interface."""

    def __init__(self, python: str, data_path: str, min_sample: float, scratch: str) -> None:
        self.log_path = os.path.join(scratch, "jax-worker.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [python, str(HERE / "timing.py"), "serve", "--lib", "jax", "--data", data_path,
             "--min-sample", str(min_sample)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
            env=jax_env())
        self.version = self._read()["version"]

    def _read(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError(f"the jax worker stopped:\n{open(self.log_path).read()}")
        return json.loads(line)

    def _ask(self, **request: Any) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._read()

    def prepare(self, name: str) -> str | None:
        return self._ask(op="prepare", name=name)["error"]

    def samples(self, count: int) -> list[float]:
        return self._ask(op="samples", count=count)["samples"]

    def outputs(self, names: Sequence[str], path: str) -> dict[str, list[np.ndarray]]:
        self._ask(op="save", path=path)
        with np.load(path) as saved:
            return {name: timing.load(saved, "out", name) for name in names}

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()
        self.log.close()


def first_call(python: str, lib: str, name: str, data_path: str, env: dict[str, str],
               scratch: str) -> float | str:
    """Seconds of the first call of workload `name` in a fresh process of `python`, or the last
    line of the error it died of."""
    path = os.path.join(scratch, f"first-{lib}.json")
    done = subprocess.run([python, str(HERE / "timing.py"), "first-call", "--lib", lib,
                           "--data", data_path, "--name", name, "--json", path],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        return lines[-1]
    with open(path) as f:
        return json.load(f)["seconds"]


# ----------------------------------------------------------------------------- measuring
def steady(sides: dict[str, Any], names: Sequence[str], *, rounds: int,
           per_round: int) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Median seconds per call of every side on every workload, in alternating rounds.

    Returns:
      ({side: {workload: seconds, or "wrong" / "error"}}, why the untimed ones were not).
    """
    timings: dict[str, dict[str, Any]] = {side: {} for side in sides}
    problems = []
    for name in names:
        ready = {}
        for side, runner in sides.items():
            why = runner.prepare(name)
            if why is None:
                ready[side] = runner
            else:
                timings[side][name] = "error" if why.startswith("raised") else "wrong"
                problems.append(f"{name}: {side} {why}")
        samples: dict[str, list[float]] = {side: [] for side in ready}
        for _ in range(rounds):
            for side, runner in ready.items():
                samples[side] += runner.samples(per_round)
        for side, values in samples.items():
            timings[side][name] = float(np.median(values))
    return timings, problems


def first_calls(args: argparse.Namespace, names: Sequence[str], data_path: str, processes: int,
                scratch: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """({side: {workload: median seconds of a first call}}, failures), fresh processes of
    justjax and JAX alternating."""
    commands = {"justjax": (sys.executable, justjax_env(args.backend))}
    if args.jax:
        commands["jax"] = (args.jax_python, jax_env())
    first: dict[str, dict[str, Any]] = {side: {} for side in commands}
    problems = []
    for name in names:
        seconds: dict[str, list[float]] = {side: [] for side in commands}
        for _ in range(processes):
            for side, (python, env) in commands.items():
                if first[side].get(name) == "error":
                    continue
                result = first_call(python, side, name, data_path, env, scratch)
                if isinstance(result, str):
                    first[side][name] = "error"
                    problems.append(f"{name}: {side}'s first call failed: {result}")
                else:
                    seconds[side].append(result)
        for side, values in seconds.items():
            if values and first[side].get(name) != "error":
                first[side][name] = float(np.median(values))
    return first, problems


def cross_check(names: Sequence[str], justjax_out: dict, jax_out: dict) -> list[str]:
    """justjax's results against JAX's, with the same tolerances as against NumPy."""
    problems = []
    for name in (n for n in names if n in justjax_out and jax_out[n]):
        why = W.mismatch(W.WORKLOADS[name], justjax_out[name], jax_out[name])
        if why is not None:
            problems.append(f"{name}: justjax disagrees with jax: {why}")
    return problems


# ----------------------------------------------------------------------------- the table
def fmt_time(seconds: Any) -> str:
    if seconds is None or isinstance(seconds, str):
        return seconds or "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def ratio(num: Any, den: Any) -> float | None:
    if isinstance(num, float) and isinstance(den, float) and den > 0:
        return num / den
    return None


def verdict(target: W.Target, vs_jax: float | None, vs_numpy: float | None) -> str:
    """`yes`, `no`, or `?` when a ratio the target needs was not measured."""
    checks = [(target.vs_jax, vs_jax), (target.vs_numpy, vs_numpy)]
    wanted = [(limit, got) for limit, got in checks if limit is not None]
    if any(got is None for _, got in wanted):
        return "?"
    return "yes" if all(got <= limit for limit, got in wanted) else "no"


def row(label: str, measure: str, times: dict[str, Any], target: W.Target) -> str:
    vs_jax = ratio(times.get("justjax"), times.get("jax"))
    vs_numpy = ratio(times.get("justjax"), times.get("numpy"))
    cells = [label, measure, *(fmt_time(times.get(side)) for side in ("numpy", "justjax", "jax")),
             "-" if vs_jax is None else f"{vs_jax:.2f}×",
             "-" if vs_numpy is None else f"{vs_numpy:.2f}×",
             target.text(), verdict(target, vs_jax, vs_numpy)]
    return "| " + " | ".join(cells) + " |"


def table(names: Sequence[str], timings: dict[str, dict], first: dict[str, dict]) -> str:
    columns = ["workload", "measure", "numpy", "justjax", "jax", "justjax/jax", "justjax/numpy",
               "target", "met?"]
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for name in names:
        w = W.WORKLOADS[name]
        measure = "µs per call" if w.per_call else "steady time"
        lines.append(row(w.label, measure, {s: t.get(name) for s, t in timings.items()}, w.target))
        if w.first_call is not None:
            lines.append(row(w.label, "first call (trace+compile+run)",
                             {s: t.get(name) for s, t in first.items()}, w.first_call))
    return "\n".join(lines)


def header(args: argparse.Namespace, runs: int, processes: int, jax_version: str | None) -> str:
    cpu = platform.processor() or platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    versions = f"numpy {np.__version__}" + (f", jax {jax_version}" if jax_version else "")
    # Other processes on a small machine show in every figure (multi-threaded BLAS worst).
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"justjax backend: {args.backend}; {cpu}, {os.cpu_count()} cores{load}; {versions}; "
            f"steady: median of {runs} samples; first call: median of {processes} fresh processes"
            f"{' (--quick)' if args.quick else ''}")


def measure_steady(args: argparse.Namespace, names: Sequence[str], data_path: str, *,
                   rounds: int, per_round: int, min_sample: float,
                   scratch: str) -> tuple[dict[str, dict[str, Any]], list[str], str | None]:
    """Steady times of NumPy and justjax here and JAX in its worker, results cross-checked.

    Returns:
      ({side: {workload: seconds}}, problems, JAX's version or None).
    """
    import justjax
    worker = Worker(args.jax_python, data_path, min_sample, scratch) if args.jax else None
    try:
        with np.load(data_path) as data, \
                justjax.config.override("jax_platforms", PLATFORMS[args.backend]):
            sides = {"numpy": timing.Side(None, data, min_sample),
                     "justjax": timing.Side(justjax, data, min_sample)}
            if worker is not None:
                sides["jax"] = worker
            timings, problems = steady(sides, names, rounds=rounds, per_round=per_round)
        if worker is None:
            return timings, problems, None
        jax_out = worker.outputs(names, os.path.join(scratch, "jax-outputs.npz"))
        return timings, problems + cross_check(names, sides["justjax"].outputs, jax_out), \
            worker.version
    finally:
        if worker is not None:
            worker.close()


def main(argv: Sequence[str] | None = None) -> str:
    """Measures, prints and returns the targets table (markdown)."""
    args = parse_args(argv)
    names = args.only.split(",")
    rounds, per_round = (2, 5) if args.quick else (5, 3)
    min_sample = 0.002 if args.quick else 0.02
    processes = 3 if args.quick else 10
    rng = np.random.default_rng(0)
    inputs = {name: W.WORKLOADS[name].inputs(rng) for name in names}
    references = {name: W.flatten(W.WORKLOADS[name].numpy(*inputs[name])) for name in names}
    with tempfile.TemporaryDirectory(prefix="justjax-bench-") as scratch:
        data_path = os.path.join(scratch, "data.npz")
        timing.save_data(data_path, [W.WORKLOADS[n] for n in names], inputs, references)
        timings, problems, jax_version = measure_steady(
            args, names, data_path, rounds=rounds, per_round=per_round, min_sample=min_sample,
            scratch=scratch)
        with_first = [n for n in names if W.WORKLOADS[n].first_call is not None]
        first, failures = first_calls(args, with_first, data_path, processes, scratch)
    text = (header(args, rounds * per_round, processes, jax_version) + "\n\n"
            + table(names, timings, first))
    if problems or failures:
        text += ("\n\nProblems (a side that fails or disagrees with numpy is not timed):\n"
                 + "\n".join(f"- {p}" for p in problems + failures))
    print(text)
    return text


if __name__ == "__main__":
    main()
