"""Micro-benchmarks timed side by side with real JAX: the helpers `bench_eager.py` and
`dispatch.py` share.

Real JAX runs in a worker process of `--jax-python` (default the side venv /work/jaxvenv), so
that justjax and jax never share a process: the worker runs one round of the script's
`measure(jax)` per line it reads and answers with one JSON line. Rounds alternate justjax and
JAX, so that load from other processes on the machine falls on both.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit
from typing import Any, Callable

DEFAULT_JAX_PYTHON = "/work/jaxvenv/bin/python"

Measure = Callable[[Any], dict[str, float]]


def best_of(stmt: Callable[[], Any], number: int, repeat: int = 5) -> float:
    """Seconds per call, best of `repeat` runs of `number` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`--jax`, `--jax-python`, `--rounds` and the worker's hidden `--worker`."""
    parser.add_argument("--jax", action="store_true", help="also time real JAX")
    parser.add_argument("--jax-python", default=DEFAULT_JAX_PYTHON)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)


def serve(measure: Measure) -> None:
    """The JAX side: one line on stdin asks for one round; the answer is one JSON line."""
    import jax
    for _ in sys.stdin:
        print(json.dumps(measure(jax)), flush=True)


def rounds(script: str, measure: Measure, args: argparse.Namespace
           ) -> list[dict[str, dict[str, float]]]:
    """`args.rounds` rounds of `measure(justjax)` and, with `args.jax`, of `measure(jax)` in a
    worker running `script --worker`: one dict per round, {"justjax": ..., "jax": ...}."""
    import justjax
    worker = None
    if args.jax:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("JUSTJAX_") and k != "PYTHONPATH"}
        env["JAX_PLATFORMS"] = "cpu"
        worker = subprocess.Popen([args.jax_python, os.path.abspath(script), "--worker"],
                                  env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, cwd="/tmp")
    results = []
    for _ in range(args.rounds):
        figures = {"justjax": measure(justjax)}
        if worker is not None:
            worker.stdin.write("round\n")
            worker.stdin.flush()
            figures["jax"] = json.loads(worker.stdout.readline())
        results.append(figures)
    if worker is not None:
        worker.stdin.close()
        worker.wait()
    return results
