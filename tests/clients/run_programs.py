"""Runs one client library's documented-usage programs and writes their results as JSON.

Usage, with real JAX (to record what JAX gives):
    python tests/clients/run_programs.py CLIENT --record --out tests/clients/records/CLIENT.json
and with justjax standing in for jax (what `tests/clients/test_CLIENT.py` runs):
    python -m justjax run tests/clients/run_programs.py CLIENT --out FILE

CLIENT names `programs/<CLIENT>_programs.py`, whose public functions (in file order) are the
programs: each takes no argument and returns a dict of results (arrays, numbers, strings,
bools, None, and lists/tuples/dicts of them).

A program that raises is recorded with its exception's type, message and traceback, and the
next one runs; so is a program module that fails to import. The output file is rewritten
after every program, so a run that is stopped (a timeout) still leaves what it finished.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import pathlib
import signal
import sys
import time
import traceback
import types
from typing import Any, Callable

import numpy as np

PROGRAMS_DIR = pathlib.Path(__file__).resolve().parent / "programs"
# A program runs in seconds on JAX; one that runs this long is recorded as timed out and
# the next one runs (the tests' whole-run timeout is longer: harness.TIMEOUT_SECONDS).
PROGRAM_TIMEOUT_SECONDS = 600


class ProgramTimeout(Exception):
    """A program ran longer than PROGRAM_TIMEOUT_SECONDS."""


def call_with_timeout(fn: Callable[[], dict], seconds: int) -> dict:
    """`fn()`, interrupted with ProgramTimeout after `seconds` (checked between Python
    bytecodes: a long call into native code ends first)."""
    def time_out(signum: int, frame: Any) -> None:
        raise ProgramTimeout(f"the program ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, time_out)
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


_PLAIN = (type(None), bool, int, float, str)


def _short_floats(array: np.ndarray) -> list | float:
    """A float32/16 array as nested lists of the shortest decimals that read back to the
    same values (`0.1295636`, not float64's `0.1295635998249054`)."""
    shortest = [float(str(v)) for v in array.ravel()]  # str of a NumPy float32, not float64
    return np.array(shortest, dtype=object).reshape(array.shape).tolist()


def encode(value: Any) -> Any:
    """A program's result as JSON data: arrays (and NumPy scalars) keep their dtype and shape.

    Args:
      value: a result: None, a bool, int, float or string, an array, or a list, tuple or
        dict of results.

    Returns:
      JSON data that `tests/clients/harness.py` compares: plain values and lists of plain
      values as they are, `{"dtype", "shape", "data"}` for an array, `{"list": [...]}` and
      `{"dict": {...}}` for containers holding arrays or containers.
    """
    if isinstance(value, _PLAIN) and not isinstance(value, np.generic):
        return value
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        items = [encode(v) for v in value]
        if all(isinstance(v, _PLAIN) and not isinstance(v, np.generic) for v in value):
            return items
        return {"list": items}
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"cannot record a result of type {type(value).__name__}")
    small_float = array.dtype.kind == "f" and array.dtype.itemsize < 8
    data = _short_floats(array) if small_float else array.tolist()
    return {"dtype": str(array.dtype), "shape": list(array.shape), "data": data}


def encode_result(result: Any) -> dict[str, Any]:
    """A program's dict of results, each encoded (`encode`)."""
    if not isinstance(result, dict):
        raise TypeError(f"a program returns a dict of results, not {type(result).__name__}")
    return {str(k): encode(v) for k, v in result.items()}


def error_record(error: BaseException) -> dict[str, str]:
    """An exception as data: its type's qualified name, its message and its traceback."""
    kind = type(error)
    return {"type": f"{kind.__module__}.{kind.__qualname__}", "message": str(error),
            "traceback": "".join(traceback.format_exception(error))}


def programs_of(module: types.ModuleType) -> list[tuple[str, Callable[[], dict]]]:
    """The module's public functions defined in it, in the order the file defines them."""
    found = [(name, fn) for name, fn in vars(module).items()
             if inspect.isfunction(fn) and not name.startswith("_")
             and fn.__module__ == module.__name__]
    return sorted(found, key=lambda item: item[1].__code__.co_firstlineno)


def versions(client: str) -> dict[str, str | None]:
    """The versions of jax (as it reports itself), of justjax if it stands in, and of the
    client library."""
    import jax
    from importlib import metadata
    package = client.split("_")[0]  # flax_nnx and flax_linen are both flax, jax_core jax
    justjax = sys.modules.get("justjax")
    try:
        client_version = metadata.version(package)
    except metadata.PackageNotFoundError:  # jax itself where justjax stands in for it
        client_version = None
    return {"jax": jax.__version__,
            "justjax": getattr(justjax, "__version__", None) if justjax else None,
            "client": client_version}


def dumps(value: Any, depth: int = 4, indent: str = "") -> str:
    """JSON with the outer `depth` levels of objects one key a line (a record: programs,
    program, its values, a value) and everything deeper on that line."""
    if depth == 0 or not isinstance(value, dict) or not value:
        return json.dumps(value, sort_keys=True)
    inner = indent + " "
    items = [f"{inner}{json.dumps(k)}: {dumps(v, depth - 1, inner)}"
             for k, v in sorted(value.items())]
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


def write(path: str | None, record: dict) -> None:
    """Writes the record to `path` (atomically) or to stdout."""
    text = dumps(record)
    if path is None:
        print(text)
        return
    partial = f"{path}.partial"
    with open(partial, "w") as f:
        f.write(text + "\n")
    os.replace(partial, path)


def run(client: str, out: str | None, only: list[str] | None = None) -> dict:
    """Imports `<client>_programs`, runs its programs and writes the record after each.

    Args:
      client: the client's name (`optax`, `flax_nnx` ...).
      out: the JSON file to write, or None for stdout (at the end only).
      only: run only these programs (all when None).

    Returns:
      The record: versions, the module's import error (or None), and per program either
      `{"values": ...}` or `{"error": ...}`, with the seconds it took.
    """
    record: dict[str, Any] = {"client": client, "versions": None, "import_error": None,
                              "programs": {}}
    sys.path.insert(0, str(PROGRAMS_DIR))
    try:
        module = importlib.import_module(f"{client}_programs")
        record["versions"] = versions(client)
    except Exception as error:  # noqa: BLE001 - recorded for the tests to report
        record["import_error"] = error_record(error)
        write(out, record)
        return record
    for name, fn in programs_of(module):
        if only and name not in only:
            continue
        print(f"[{client}] {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            entry = {"values": encode_result(call_with_timeout(fn, PROGRAM_TIMEOUT_SECONDS))}
        except Exception as error:  # noqa: BLE001 - recorded for the tests to report
            entry = {"error": error_record(error)}
        entry["seconds"] = round(time.perf_counter() - start, 3)
        record["programs"][name] = entry
        print(f"[{client}] {name}: {'ok' if 'values' in entry else entry['error']['type']} "
              f"({entry['seconds']} s)", file=sys.stderr, flush=True)
        if out is not None:
            write(out, record)
    write(out, record)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("client", help="optax, chex, equinox, flax_nnx or flax_linen")
    parser.add_argument("--out", help="the JSON file to write (default: stdout)")
    parser.add_argument("--only", nargs="*", help="run only these programs")
    parser.add_argument("--record", action="store_true",
                        help="write a record (tests/clients/records/): without timings, and "
                        "exit with 1 if the module or any program raised")
    args = parser.parse_args(argv)
    record = run(args.client, args.out, args.only)
    if not args.record:
        return 0
    for entry in record["programs"].values():
        entry.pop("seconds")
    write(args.out, record)
    failed = [name for name, entry in record["programs"].items() if "error" in entry]
    if record["import_error"] or failed:
        print(f"not a record: {record['import_error'] and 'the import'} {failed} raised",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
