"""The performance targets of issues #9 and #24, measured side by side: justjax, NumPy and (with
`--jax`) real JAX on the same inputs, printed as a markdown table of medians, ratios and targets.

Run: `.venv/bin/python benchmarks/run.py [--jax] [--quick] [--repeat N] [--pin | --with-pin]
[--readme] [--json PATH] [--backend llvm|reference] [--only NAME,...] [--processes N]
[--jax-python PATH]`.

justjax and NumPy are timed in this process, JAX in a worker process of `--jax-python` (default
the side venv /work/jaxvenv), so that justjax and jax never share a process. Each side's first
result is checked against NumPy's (allclose) before it is timed, and justjax's against JAX's at the
end of every round. Steady times are the median of 15 samples after warm-up, taken in 5 batches
that alternate NumPy, justjax and JAX, so that load from other processes on the machine falls on
all of them; before each batch the other sides' threads are let go idle (`SETTLE_SECONDS`). First calls (trace + lower + cold compile + run, the inputs already on the device)
and the `import` row (`import justjax, justjax.numpy` against `import jax, jax.numpy`, and
`import numpy` for scale) are timed each in a fresh process, the sides alternating.

OpenBLAS's pin: some machines set `OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512`, which halves
SciPy's OpenBLAS (justjax's BLAS) and makes its small products slow; a user's machine does not.
The script unsets both for itself (it starts itself again if they are set, since OpenBLAS reads
them once, when it loads) and for every process it starts; `--pin` sets them instead.
`--with-pin` also measures the rows where the pin matters in a child run with the pin set and shows
their ratio in a column of its own. The header names the kernel OpenBLAS picked.

`--repeat N` measures everything N times (independent rounds: workloads prepared again, JAX's
worker and the fresh processes started again); a row shows the medians of the rounds and the
min-max band of its ratio to JAX. `--readme` (with `--jax`; it implies `--with-pin`) rewrites the
README's figures section between `<!-- figures:begin -->` and `<!-- figures:end -->`. `--quick`
is a smoke run, not for the targets: 3 short samples per side after one call that warms up,
3 fresh processes per first call and import instead of 10 (`--processes` sets the count).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping

HERE = Path(__file__).resolve().parent
# OpenBLAS's pin: the variables and the values some development and CI machines set.
PIN = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512"}


def blas_env(pin: bool, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default this process's environment) with OpenBLAS's pin set, or with both of its
    variables unset."""
    result = {k: v for k, v in (os.environ if env is None else env).items() if k not in PIN}
    if pin:
        result.update(PIN)
    return result


if __name__ == "__main__":
    # OpenBLAS reads the pin once, when NumPy and SciPy load it: start again with the environment
    # wanted before anything loads it (the new process's environment matches: no loop).
    _wanted = blas_env("--pin" in sys.argv[1:])
    if any(os.environ.get(k) != _wanted.get(k) for k in PIN):
        os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]],
                  _wanted)

import argparse  # noqa: E402  (after the restart above, which must precede NumPy)
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, Sequence  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(HERE))
import timing  # noqa: E402  (sibling modules of this script, not a package)
import workloads as W  # noqa: E402

PLATFORMS = {"llvm": "cpu", "reference": "reference"}
DEFAULT_JAX_PYTHON = "/work/jaxvenv/bin/python"
# A first call compiles cold on both sides: no persistent compilation cache is read.
COLD = {"JAX_ENABLE_COMPILATION_CACHE": "false"}
IMPORT = "import"  # the import-time row's name in --only
NAMES = [*W.WORKLOADS, IMPORT]
README = HERE.parent / "README.md"
BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
SIDES = ("justjax", "jax", "numpy")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--jax", action="store_true", help="also time real JAX (in a subprocess)")
    parser.add_argument("--jax-python", default=DEFAULT_JAX_PYTHON,
                        help="the interpreter with jax installed")
    parser.add_argument("--quick", action="store_true", help="shorter samples, fewer processes")
    parser.add_argument("--backend", choices=sorted(PLATFORMS), default="llvm",
                        help="justjax's backend (sets JAX_PLATFORMS for the justjax side)")
    parser.add_argument("--only", default=",".join(NAMES),
                        help="comma-separated rows: " + ", ".join(NAMES))
    parser.add_argument("--repeat", type=int, default=1, help="independent rounds (noise band)")
    parser.add_argument("--processes", type=int, default=None,
                        help="fresh processes per first call / import and round (10; --quick 3)")
    pin = parser.add_mutually_exclusive_group()
    pin.add_argument("--pin", action="store_true", help="run with OpenBLAS's pin set")
    pin.add_argument("--with-pin", action="store_true",
                     help="also measure the rows where the pin matters with it (a child run)")
    parser.add_argument("--readme", action="store_true",
                        help="rewrite the README's figures section (needs --jax)")
    parser.add_argument("--json", help="also write the raw figures of every round here")
    # --with-pin's child run: the pin column shows steady times only.
    parser.add_argument("--steady-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [n for n in args.only.split(",") if n not in NAMES]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {NAMES}")
    if args.jax and not os.path.exists(args.jax_python):
        parser.error(f"--jax: no interpreter at {args.jax_python} (see --jax-python)")
    if args.repeat < 1 or (args.processes is not None and args.processes < 1):
        parser.error("--repeat and --processes take a positive count")
    if args.readme and not args.jax:
        parser.error("--readme needs --jax: the README's figures are ratios to JAX")
    if args.readme and args.pin:
        parser.error("--readme takes the figures without the pin (it adds --with-pin's column)")
    args.with_pin = args.with_pin or args.readme
    if args.processes is None:
        args.processes = 3 if args.quick else 10
    return args


def fresh_process_env(pin: bool) -> dict[str, str]:
    """The environment of every fresh process (`blas_env`), reading and writing Python's
    bytecode caches as an installed package does: with `PYTHONDONTWRITEBYTECODE` set (some
    shells set it), an editable install's modules were compiled from source at every import,
    which added ~30 ms to justjax's import row and ~80 ms to its first calls, and nothing to
    JAX's (installed with its caches)."""
    env = blas_env(pin)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def justjax_env(backend: str, pin: bool) -> dict[str, str]:
    """The environment of justjax processes: `JAX_PLATFORMS` names the backend (and the
    `JUSTJAX_` variables that would win over the `JAX_` ones set here are dropped)."""
    env = fresh_process_env(pin)
    for name in ("JAX_PLATFORMS", *COLD):
        env.pop("JUSTJAX_" + name.removeprefix("JAX_"), None)
    env.update(COLD, JAX_PLATFORMS=PLATFORMS[backend])
    return env


def jax_env(pin: bool) -> dict[str, str]:
    env = {k: v for k, v in fresh_process_env(pin).items() if not k.startswith("JUSTJAX_")}
    env.update(COLD, JAX_PLATFORMS="cpu")
    return env


def side_commands(args: argparse.Namespace) -> dict[str, tuple[str, dict[str, str]]]:
    """{side: (interpreter, environment)} of the fresh processes of justjax and, with --jax, JAX."""
    commands = {"justjax": (sys.executable, justjax_env(args.backend, args.pin))}
    if args.jax:
        commands["jax"] = (args.jax_python, jax_env(args.pin))
    return commands


# ----------------------------------------------------------------------------- the rows
@dataclass(frozen=True)
class Row:
    """One line of the table: a workload's steady time (key = its name), its first call (key
    `<name>:first`) or the import time (key `import`)."""
    key: str
    label: str
    target: W.Target
    pin_figures: bool = False
    pin_target: bool = False


def rows(names: Sequence[str]) -> list[Row]:
    """The table's rows for the selected names, in their order."""
    table = []
    for name in names:
        if name == IMPORT:
            table.append(Row(IMPORT, "import time: `import justjax, justjax.numpy` vs `import jax, "
                             "jax.numpy` (NumPy: `import numpy`), fresh process", W.Target(1.0)))
            continue
        w = W.WORKLOADS[name]
        table.append(Row(name, w.label + (", per call" if w.per_call else ""), w.target,
                         w.pin_figures, w.pin_target))
        if w.first_call is not None:
            table.append(Row(f"{name}:first", f"{w.label}, first call in a fresh process",
                             w.first_call))
    return table


# ----------------------------------------------------------------------------- JAX's worker
class Worker:
    """JAX's side in its own process (`timing.py serve`), with `Side`'s interface."""

    def __init__(self, python: str, data_path: str, min_sample: float, quick: bool,
                 scratch: str, env: dict[str, str]) -> None:
        self.log_path = os.path.join(scratch, "jax-worker.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [python, str(HERE / "timing.py"), "serve", "--lib", "jax", "--data", data_path,
             "--min-sample", str(min_sample), *(["--quick"] if quick else [])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, env=env)
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


# ----------------------------------------------------------------------------- measuring
# Before each side's batch, the other sides' worker threads are let go idle: a BLAS library's
# threads spin for about 0.1 s after its last call, and NumPy's OpenBLAS and SciPy's (justjax's
# BLAS) are two libraries in this process, so a side timed right after another's BLAS calls
# ran on half the cores (a 1024^2 matmul: 7.1 ms alone, 12-16 ms right after NumPy's).
SETTLE_SECONDS = 0.25
def steady(sides: dict[str, Any], names: Sequence[str], *, rounds: int,
           per_round: int) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Median seconds per call of every side on every workload, in alternating batches.

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
                time.sleep(SETTLE_SECONDS)
                samples[side] += runner.samples(per_round)
        for side, values in samples.items():
            timings[side][name] = float(np.median(values))
    return timings, problems


def fresh_process(command: Sequence[str], env: dict[str, str], json_path: str | None
                  ) -> float | str:
    """The seconds a fresh process reports (in `json_path`, or as its last line of output), or
    the last line of the error it died of."""
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        return lines[-1]
    if json_path is None:
        return float(done.stdout.strip().splitlines()[-1])
    with open(json_path) as f:
        return json.load(f)["seconds"]


def alternate(commands: dict[str, tuple[list[str], dict[str, str], str | None]], processes: int,
              what: str) -> tuple[dict[str, Any], list[str]]:
    """({side: median seconds, or "error"}, failures) of `processes` fresh processes per side,
    the sides alternating; a side whose process fails is not started again."""
    seconds: dict[str, list[float]] = {side: [] for side in commands}
    result: dict[str, Any] = {}
    problems = []
    for _ in range(processes):
        for side, (command, env, json_path) in commands.items():
            if result.get(side) == "error":
                continue
            got = fresh_process(command, env, json_path)
            if isinstance(got, str):
                result[side] = "error"
                problems.append(f"{what}: {side}'s process failed: {got}")
            else:
                seconds[side].append(got)
    for side, values in seconds.items():
        if side not in result:
            result[side] = float(np.median(values))
    return result, problems


def first_calls(args: argparse.Namespace, names: Sequence[str], data_path: str,
                scratch: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """({side: {"<workload>:first": median seconds of a first call}}, failures)."""
    first: dict[str, dict[str, Any]] = {side: {} for side in side_commands(args)}
    problems = []
    for name in names:
        commands = {}
        for side, (python, env) in side_commands(args).items():
            path = os.path.join(scratch, f"first-{side}.json")
            commands[side] = ([python, str(HERE / "timing.py"), "first-call", "--lib", side,
                               "--data", data_path, "--name", name, "--json", path], env, path)
        medians, failed = alternate(commands, args.processes, f"{name}'s first call")
        for side, value in medians.items():
            first[side][f"{name}:first"] = value
        problems += failed
    return first, problems


def import_times(args: argparse.Namespace) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """({side: {"import": median seconds of the import}}, failures), after one untimed process
    per side (so that every side finds its bytecode compiled and its files in the page cache;
    not in a --quick smoke run)."""
    commands = {side: (timing.import_command(python, side), env, None)
                for side, (python, env) in side_commands(args).items()}
    commands["numpy"] = (timing.import_command(sys.executable, "numpy"), blas_env(args.pin), None)
    if not args.quick:
        alternate(commands, 1, "import")
    medians, problems = alternate(commands, args.processes, "import")
    return {side: {IMPORT: value} for side, value in medians.items()}, problems


def cross_check(names: Sequence[str], justjax_out: dict, jax_out: dict) -> list[str]:
    """justjax's results against JAX's, with the same tolerances as against NumPy."""
    problems = []
    for name in (n for n in names if n in justjax_out and jax_out[n]):
        why = W.mismatch(W.WORKLOADS[name], justjax_out[name], jax_out[name])
        if why is not None:
            problems.append(f"{name}: justjax disagrees with jax: {why}")
    return problems


def measure_steady(args: argparse.Namespace, names: Sequence[str], data_path: str, *,
                   rounds: int, per_round: int, min_sample: float,
                   scratch: str) -> tuple[dict[str, dict[str, Any]], list[str], str | None]:
    """Steady times of NumPy and justjax here and JAX in its worker, results cross-checked.

    Returns:
      ({side: {workload: seconds}}, problems, JAX's version or None).
    """
    import justjax
    worker = (Worker(args.jax_python, data_path, min_sample, args.quick, scratch,
                     jax_env(args.pin)) if args.jax else None)
    try:
        with np.load(data_path) as data, \
                justjax.config.override("jax_platforms", PLATFORMS[args.backend]):
            sides = {"numpy": timing.Side(None, data, min_sample, args.quick),
                     "justjax": timing.Side(justjax, data, min_sample, args.quick)}
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


def sampling(quick: bool) -> tuple[int, int, float]:
    """(batches per side, samples per batch, seconds a sample lasts at least) of steady times."""
    return (1, 3, 0.002) if quick else (5, 3, 0.02)


def measure_round(args: argparse.Namespace, names: Sequence[str], data_path: str,
                  scratch: str) -> tuple[dict[str, dict[str, Any]], list[str], str | None]:
    """One round of every selected row: ({row key: {side: seconds or "wrong"/"error"}},
    problems, JAX's version or None)."""
    workloads = [n for n in names if n != IMPORT]
    rounds, per_round, min_sample = sampling(args.quick)
    timings, problems, jax_version = measure_steady(
        args, workloads, data_path, rounds=rounds, per_round=per_round, min_sample=min_sample,
        scratch=scratch)
    with_first = [n for n in workloads
                  if W.WORKLOADS[n].first_call is not None and not args.steady_only]
    first, failures = first_calls(args, with_first, data_path, scratch)
    imports, import_failures = import_times(args) if IMPORT in names else ({}, [])
    by_row: dict[str, dict[str, Any]] = {}
    for per_side in (timings, first, imports):
        for side, values in per_side.items():
            for key, value in values.items():
                by_row.setdefault(key, {})[side] = value
    return by_row, problems + failures + import_failures, jax_version


def measure(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    """Every round: {"rounds": {row key: {side: [per-round value]}}, "problems": [...],
    "jax_version": str | None}."""
    workloads = [n for n in names if n != IMPORT]
    rng = np.random.default_rng(0)
    inputs = {name: W.WORKLOADS[name].inputs(rng) for name in workloads}
    references = {name: W.flatten(W.WORKLOADS[name].numpy(*inputs[name])) for name in workloads}
    merged: dict[str, dict[str, list]] = {}
    problems: dict[str, None] = {}  # ordered and without the repeats of later rounds
    jax_version = None
    with tempfile.TemporaryDirectory(prefix="justjax-bench-") as scratch:
        data_path = os.path.join(scratch, "data.npz")
        timing.save_data(data_path, [W.WORKLOADS[n] for n in workloads], inputs, references)
        for _ in range(args.repeat):
            by_row, found, jax_version = measure_round(args, names, data_path, scratch)
            for key, per_side in by_row.items():
                for side, value in per_side.items():
                    merged.setdefault(key, {}).setdefault(side, []).append(value)
            problems.update(dict.fromkeys(found))
    return {"rounds": merged, "problems": list(problems), "jax_version": jax_version}


def measure_pinned(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any] | None:
    """The rows where the pin matters, measured by a child run of this script with `--pin`
    (its figures, as `measure` returns them), or None when no such row is selected."""
    pinned = [n for n in names if n != IMPORT and W.WORKLOADS[n].pin_figures]
    if not pinned:
        return None
    with tempfile.TemporaryDirectory(prefix="justjax-bench-pin-") as scratch:
        path = os.path.join(scratch, "pinned.json")
        command = [sys.executable, str(Path(__file__).resolve()), "--pin", "--only",
                   ",".join(pinned), "--repeat", str(args.repeat), "--processes",
                   str(args.processes), "--backend", args.backend, "--json", path,
                   "--steady-only"]
        if args.jax:
            command += ["--jax", "--jax-python", args.jax_python]
        if args.quick:
            command.append("--quick")
        done = subprocess.run(command, env=blas_env(True), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the run with the pin failed:\n{done.stderr}")
        with open(path) as f:
            return json.load(f)


# ----------------------------------------------------------------------------- the platform
def openblas_kernels() -> str:
    """Which kernel each loaded OpenBLAS picked (NumPy's, and SciPy's that justjax calls),
    by threadpoolctl or, without it, OpenBLAS's own `get_corename`."""
    from scipy.linalg import cython_blas  # noqa: F401  (loads SciPy's OpenBLAS)
    try:
        import threadpoolctl
    except ImportError:
        return _scipy_openblas_corename()
    found = [f"{Path(i['filepath']).parent.name.removesuffix('.libs')}'s {i.get('version')}: "
             f"{i.get('architecture')}, {i.get('num_threads')} threads"
             for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
    return "; ".join(sorted(found)) or "no OpenBLAS loaded"


def _scipy_openblas_corename() -> str:
    import ctypes
    import glob

    import scipy
    for path in glob.glob(os.path.join(os.path.dirname(scipy.__file__) + ".libs",
                                       "libscipy_openblas*.so*")):
        library = ctypes.CDLL(path)
        for prefix in ("scipy_openblas_", "openblas_"):
            function = getattr(library, prefix + "get_corename", None)
            if function is not None:
                function.restype = ctypes.c_char_p
                return f"scipy's: {function().decode()}"
    return "scipy's OpenBLAS not found"


def pin_state() -> str:
    """Whether this process runs with OpenBLAS's pin: "set", "unset" or what is set."""
    values = {k: os.environ.get(k) for k in PIN}
    if values == PIN:
        return "set"
    if not any(values.values()):
        return "unset"
    return ", ".join(f"{k}={v}" for k, v in values.items() if v)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return f"{cpu}, {os.cpu_count()} cores"


def load_average() -> float | None:
    """The 1-minute load average: other processes on a small machine show in every figure
    (multi-threaded BLAS worst, its threads spin waiting for each other)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def versions(jax_version: str | None) -> str:
    import justjax
    import scipy
    done = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    commit = f" ({done.stdout.strip()})" if done.returncode == 0 else ""
    jax = f", jax {jax_version}" if jax_version else ""
    return (f"justjax {justjax.__version__}{commit}{jax}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}, Python {platform.python_version()}")


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


def summary(values: Sequence[Any] | None) -> Any:
    """A side's figure over the rounds: the median, or the failure of any round, or None."""
    if not values:
        return None
    failed = [v for v in values if isinstance(v, str)]
    return failed[0] if failed else float(np.median(values))


def ratios(per_side: dict[str, list], other: str) -> list[float]:
    """justjax over `other`, round by round (the rounds where both were timed)."""
    pairs = zip(per_side.get("justjax", []), per_side.get(other, []), strict=False)
    return [r for r in (ratio(a, b) for a, b in pairs) if r is not None]


def fmt_ratios(values: Sequence[float]) -> str:
    if not values:
        return "-"
    text = f"{np.median(values):.2f}×"
    return text if len(values) == 1 else f"{text} [{min(values):.2f}–{max(values):.2f}]"


def verdict(target: W.Target, vs_jax: float | None, vs_numpy: float | None) -> str:
    """`yes`, `no`, or `?` when a ratio the target needs was not measured."""
    checks = [(target.vs_jax, vs_jax), (target.vs_numpy, vs_numpy)]
    wanted = [(limit, got) for limit, got in checks if limit is not None]
    if any(got is None for _, got in wanted):
        return "?"
    return "yes" if all(got <= limit for limit, got in wanted) else "no"


def median_or_none(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if values else None


def row_line(row: Row, per_side: dict[str, list], pinned: dict[str, list] | None,
             with_pin: bool) -> str:
    vs_jax, vs_numpy = ratios(per_side, "jax"), ratios(per_side, "numpy")
    met = verdict(row.target, median_or_none(vs_jax), median_or_none(vs_numpy))
    target = row.target.text()
    cells = [row.label, *(fmt_time(summary(per_side.get(side))) for side in SIDES),
             fmt_ratios(vs_jax), fmt_ratios(vs_numpy)]
    if with_pin:
        pin_vs_jax = ratios(pinned, "jax") if pinned else []
        cells.append(fmt_ratios(pin_vs_jax))
        if row.pin_target:
            target += ", with the pin too"
            met_pinned = verdict(W.Target(vs_jax=row.target.vs_jax), median_or_none(pin_vs_jax),
                                 None)
            met = met if met_pinned == "yes" else ("?" if "?" in (met, met_pinned) else "no")
    return "| " + " | ".join([*cells, target, met]) + " |"


def table(selected: Sequence[Row], figures: dict[str, Any], pinned: dict[str, Any] | None,
          with_pin: bool) -> str:
    columns = ["workload", "justjax", "JAX", "NumPy", "justjax/JAX", "justjax/NumPy",
               *(["justjax/JAX with the pin"] if with_pin else []), "target", "met?"]
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for row in selected:
        pin_rounds = pinned["rounds"].get(row.key) if pinned and row.pin_figures else None
        lines.append(row_line(row, figures["rounds"].get(row.key, {}), pin_rounds, with_pin))
    return "\n".join(lines)


def header(args: argparse.Namespace, figures: dict[str, Any], pinned: dict[str, Any] | None,
           kernels: str) -> str:
    batches, per_batch, _ = sampling(args.quick)
    samples = batches * per_batch
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    pin = f"OpenBLAS pin {pin_state()} ({kernels})"
    if pinned is not None:
        pin += f"; the pin column with {' '.join(f'{k}={v}' for k, v in PIN.items())} " \
               f"({pinned['kernels']})"
    rounds = (f"; {args.repeat} rounds: medians of the rounds, [min–max] of the ratio"
              if args.repeat > 1 else "")
    # One fact a line: markdown joins them into one paragraph, diffs stay readable.
    loads = [figures["load_before"], load_average()]
    load = (f", load average {loads[0]:.1f} at the start and {loads[1]:.1f} at the end"
            if None not in loads else "")
    return (f"Measured {date} on {machine()}{load};\n{versions(figures['jax_version'])}; "
            f"justjax's backend {args.backend};\n{pin};\nsteady: median of {samples} samples; "
            f"first call and import: median of {args.processes} fresh processes{rounds}"
            f"{' (--quick)' if args.quick else ''}.")


def report(args: argparse.Namespace, names: Sequence[str], figures: dict[str, Any],
           pinned: dict[str, Any] | None) -> str:
    """The header line, the table and the problems of the run (markdown)."""
    text = (header(args, figures, pinned, figures["kernels"]) + "\n\n"
            + table(rows(names), figures, pinned, args.with_pin))
    problems = figures["problems"] + (pinned["problems"] if pinned else [])
    wanted = "set" if args.pin else "unset"
    if pin_state() != wanted:
        problems.insert(0, f"this process runs with the pin {pin_state()}, not {wanted} "
                           "(run.py resets it only when run as a script): the justjax and NumPy "
                           "figures are not comparable")
    if problems:
        text += ("\n\nProblems (a side that fails or disagrees with numpy is not timed):\n"
                 + "\n".join(f"- {p}" for p in problems))
    return text


def write_readme(section: str, path: Path = README) -> None:
    """Replaces what lies between the README's figures markers with `section`."""
    text = path.read_text()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} section")
    path.write_text(text[:start + len(BEGIN)] + "\n" + section + "\n" + text[end:])


def main(argv: Sequence[str] | None = None) -> str:
    """Measures, prints and returns the targets table (markdown)."""
    args = parse_args(argv)
    names = args.only.split(",")
    load_before = load_average()  # before the run adds its own
    figures = measure(args, names)
    figures.update(kernels=openblas_kernels(), load_before=load_before)
    pinned = measure_pinned(args, names) if args.with_pin else None
    text = report(args, names, figures, pinned)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    if args.readme:
        write_readme(text)
    print(text)
    return text


if __name__ == "__main__":
    main()
