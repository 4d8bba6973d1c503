"""How one library is timed on the workloads of `workloads.py`, in this process or as a worker.

`Side` holds one library's (or plain NumPy's) current workload: built, run once, checked against
NumPy's result, warmed up, then sampled in batches on request, so that `run.py` can interleave the
batches of NumPy, justjax and JAX and a burst of load on the shared machine hits all three alike.
Run as a script, this module is the JAX side's worker (`serve`: one JSON request per line on
stdin, one JSON answer per line on stdout), or times one first call in a fresh process
(`first-call`); `import_command` times an import in a fresh process. Inputs and NumPy's
results travel in an `.npz` file (`save_data`), so every side computes on the very same bytes.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

import workloads as W


def sample(call: Callable[[], Any], finish: Callable[[Any], Any], number: int,
           per_call: bool) -> float:
    """Seconds per call over `number` calls. `finish` (block until ready) ends every call, or
    only the last one when `per_call` (dispatch cost: calls are not waited for one by one)."""
    start = time.perf_counter()
    if per_call:
        out = None
        for _ in range(number):
            out = call()
        finish(out)
    else:
        for _ in range(number):
            finish(call())
    return (time.perf_counter() - start) / number


def to_device(lib: Any, arrays: Sequence[np.ndarray]) -> list[Any]:
    """The inputs as `lib`'s arrays, ready before any timing starts."""
    args = [lib.numpy.asarray(a) for a in arrays]
    lib.block_until_ready(args)
    return args


def _identity(value: Any) -> Any:
    return value


def _await_optimized_code(lib: Any) -> None:
    """Waits until justjax's programs called twice run their fully optimized code (tiered
    compilation swaps it in from a background thread), so that steady samples time it."""
    if lib is not None and lib.__name__ == "justjax":
        from justjax._src.backends.llvm.runtime import tiers
        tiers.wait()


class Side:
    """One library's current workload, ready to be sampled.

    Args:
      lib: the justjax or jax module, or None for the plain NumPy implementations.
      data: the mapping written by `save_data` (inputs and NumPy's results).
      min_sample: a sample repeats the call until it lasts about this many seconds.
      quick: one timed call sizes the samples and is the warm-up (a smoke run), instead of the
        best of three and a warm-up sample.
    """

    def __init__(self, lib: Any | None, data: Any, min_sample: float, quick: bool = False) -> None:
        self.lib = lib
        self.data = data
        self.min_sample = min_sample
        self.quick = quick
        self.outputs: dict[str, list[np.ndarray]] = {}
        self._current: tuple[Callable[[], Any], Callable[[Any], Any], int, bool] | None = None

    def prepare(self, name: str) -> str | None:
        """Builds workload `name`, checks its first result against NumPy's and warms it up.

        Returns:
          Why the result disagrees with NumPy's, or the exception building or running it raised
          (the workload is then not sampled), or None.
        """
        self._current = None
        try:
            return self._prepare(name)
        except Exception as e:  # a broken workload is reported in the table, not fatal
            return f"raised {type(e).__name__}: {e}"

    def _prepare(self, name: str) -> str | None:
        workload = W.WORKLOADS[name]
        inputs = load(self.data, "in", name)
        if self.lib is None:
            call, finish = (lambda: workload.numpy(*inputs)), _identity
        else:
            f, args = workload.build(self.lib), to_device(self.lib, inputs)
            call, finish = (lambda: f(*args)), self.lib.block_until_ready
        self.outputs[name] = W.flatten(call())
        why = W.mismatch(workload, self.outputs[name], load(self.data, "ref", name))
        if why is not None:
            return f"disagrees with numpy: {why}"
        single = min(sample(call, finish, 1, workload.per_call)
                     for _ in range(1 if self.quick else 3))
        _await_optimized_code(self.lib)
        number = max(1, math.ceil(self.min_sample / max(single, 1e-7)))
        if not self.quick:
            sample(call, finish, number, workload.per_call)
        self._current = (call, finish, number, workload.per_call)
        return None

    def samples(self, count: int) -> list[float]:
        """`count` samples (seconds per call) of the prepared workload."""
        assert self._current is not None, "prepare() a workload that agrees with NumPy first"
        return [sample(*self._current) for _ in range(count)]


def first_call_seconds(lib: Any, workload: W.Workload, data: Any) -> float:
    """Seconds of the first call in this process: trace + lower + compile + run, with the
    inputs already on the device (so backend start-up and transfers are not counted)."""
    args = to_device(lib, load(data, "in", workload.name))
    start = time.perf_counter()
    lib.block_until_ready(workload.build(lib)(*args))
    return time.perf_counter() - start


# ----------------------------------------------------------------------------- import time
# What each side's import row imports (NumPy's: the floor any array library starts from).
IMPORTS = {"justjax": "justjax, justjax.numpy", "jax": "jax, jax.numpy", "numpy": "numpy"}


def import_command(python: str, lib: str) -> list[str]:
    """The command of a fresh process of `python` that prints the seconds `lib`'s import takes
    (Python's own start-up not counted, nothing imported before the clock starts)."""
    code = ("import time; start = time.perf_counter(); "
            f"import {IMPORTS[lib]}; print(time.perf_counter() - start)")
    return [python, "-c", code]


# ----------------------------------------------------------------------------- data files
def save_data(path: str, workloads: Sequence[W.Workload], inputs: dict[str, tuple],
              references: dict[str, list[np.ndarray]]) -> None:
    """Writes every workload's inputs (`in/<name>/<i>`) and NumPy results (`ref/<name>/<i>`)."""
    arrays = {}
    for w in workloads:
        arrays.update({f"in/{w.name}/{i}": a for i, a in enumerate(inputs[w.name])})
        arrays.update({f"ref/{w.name}/{i}": a for i, a in enumerate(references[w.name])})
    np.savez(path, **arrays)


def save_outputs(path: str, outputs: dict[str, list[np.ndarray]]) -> None:
    np.savez(path, **{f"out/{name}/{i}": a for name, leaves in outputs.items()
                      for i, a in enumerate(leaves)})


def load(data: Any, kind: str, name: str) -> list[np.ndarray]:
    """The arrays `<kind>/<name>/0, 1, ...` of an `.npz` mapping, in order."""
    prefix = f"{kind}/{name}/"
    count = sum(1 for key in data.keys() if key.startswith(prefix))
    return [data[f"{prefix}{i}"] for i in range(count)]


# ----------------------------------------------------------------------------- worker entry
def serve(side: Side, answers: Any, version: str) -> None:
    """Answers requests from stdin until it closes: `{"op": "prepare", "name": ...}`,
    `{"op": "samples", "count": ...}`, `{"op": "save", "path": ...}` (the results so far)."""
    def answer(message: dict) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    answer({"version": version})
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "prepare":
            answer({"error": side.prepare(request["name"])})
        elif request["op"] == "samples":
            answer({"samples": side.samples(request["count"])})
        elif request["op"] == "save":
            save_outputs(request["path"], side.outputs)
            answer({"saved": request["path"]})
        else:
            answer({"error": f"unknown request {request!r}"})


# The public modules the workloads use (`lib.numpy`, `lib.nn` ...).
PUBLIC_MODULES = ("numpy", "nn", "lax", "tree_util")


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(prog="timing.py")
    parser.add_argument("mode", choices=["serve", "first-call"])
    parser.add_argument("--lib", required=True, choices=["justjax", "jax"])
    parser.add_argument("--data", required=True)
    parser.add_argument("--name", help="the workload (first-call)")
    parser.add_argument("--json", help="where to write the seconds (first-call)")
    parser.add_argument("--min-sample", type=float, default=0.01)
    parser.add_argument("--quick", action="store_true", help="the smoke run's lighter warm-up")
    args = parser.parse_args(argv)
    # Answers go to the real stdout; anything the library prints goes to stderr instead.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    lib = importlib.import_module(args.lib)
    # "Library imported" means the same on both sides: `import jax` loads these modules
    # itself, justjax loads them when first used, which a first call must not be charged for.
    for module in PUBLIC_MODULES:
        importlib.import_module(f"{args.lib}.{module}")
    with np.load(args.data) as data:
        if args.mode == "first-call":
            seconds = first_call_seconds(lib, W.WORKLOADS[args.name], data)
            with open(args.json, "w") as f:
                json.dump({"seconds": seconds}, f)
        else:
            serve(Side(lib, data, args.min_sample, args.quick), answers,
                  getattr(lib, "__version__", "?"))


if __name__ == "__main__":
    main(sys.argv[1:])
