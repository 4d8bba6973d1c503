"""The client tests' machinery: run a client's programs under justjax, compare with JAX's record.

`tests/clients/run_programs.py` runs `programs/<client>_programs.py` and writes JSON. Its
records from real JAX are `records/<client>.json`. Here it runs once per client and test
session in a subprocess under `python -m justjax run` (the test process itself never has
`import jax` aliased), and each program's results are compared with the record's.
`client_tests` makes a test module's fixture and tests.
"""
from __future__ import annotations

import ast
import contextlib
import fcntl
import json
import math
import os
import pathlib
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import justjax
from justjax._src.jax_alias import JAX_VERSION  # the JAX release the records come from

HERE = pathlib.Path(__file__).resolve().parent
RUNNER = HERE / "run_programs.py"
RECORDS = HERE / "records"
# A whole client's programs, compiled by justjax on a loaded two-core machine.
TIMEOUT_SECONDS = 1800
# Results are float32: the compiler may order a reduction differently from XLA.
RTOL, ATOL = 1e-5, 1e-6


@dataclass(frozen=True)
class Tolerance:
    """A program's looser tolerance, with the reason it needs one; `counts`: how far its
    integer results (step counts) may be from JAX's (exact by default)."""
    rtol: float
    atol: float
    why: str
    counts: int = 0


def load_record(client: str) -> dict[str, Any]:
    """The record real JAX gave for `client` (`records/<client>.json`)."""
    return json.loads((RECORDS / f"{client}.json").read_text())


def _shared_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A directory of this test session shared by its xdist workers (a worker's base
    temporary directory sits in the session's)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: pathlib.Path) -> Iterator[None]:
    """Holds an exclusive lock on `path` (waits for another worker holding it)."""
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_with_justjax(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Runs `python -m justjax run ARGS` (a program with `import jax` resolving to justjax)
    with this process's justjax, in a subprocess: the test process itself never has the
    alias installed.

    Raises:
      subprocess.TimeoutExpired: the program ran longer than `timeout` seconds.
    """
    src = str(pathlib.Path(justjax.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([sys.executable, "-m", "justjax", "run", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _run_runner(client: str, out: pathlib.Path) -> dict[str, Any]:
    """Runs the runner under justjax; returns its output record plus how the run ended."""
    start = time.perf_counter()
    try:
        done = run_with_justjax([str(RUNNER), client, "--out", str(out)], TIMEOUT_SECONDS)
        ended, stderr = f"exit code {done.returncode}", done.stderr
    except subprocess.TimeoutExpired as error:
        ended = f"timed out after {TIMEOUT_SECONDS} s"
        stderr = error.stderr.decode() if isinstance(error.stderr, bytes) else error.stderr
    record = json.loads(out.read_text()) if out.exists() else {"programs": {}}
    record["run"] = {"ended": ended, "seconds": round(time.perf_counter() - start, 1),
                     "stderr_tail": (stderr or "")[-4000:]}
    return record


def run_under_justjax(client: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The runner's record of `client` under justjax: run once per test session (the
    first xdist worker to ask runs it, the others read its output)."""
    shared = _shared_dir(tmp_path_factory)
    result = shared / f"client-{client}.json"
    with _locked(shared / f"client-{client}.lock"):
        if result.exists():
            return json.loads(result.read_text())
        record = _run_runner(client, shared / f"client-{client}.out.json")
        result.write_text(json.dumps(record))
    return record


def decode(value: Any) -> Any:
    """`run_programs.encode`'s JSON back to arrays, lists, dicts and plain values."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "dict" in value:
        return {k: decode(v) for k, v in value["dict"].items()}
    if "list" in value:
        return [decode(v) for v in value["list"]]
    dtype = np.dtype(value["dtype"]) if value["dtype"] != "bfloat16" else _bfloat16()
    return np.asarray(value["data"], dtype=dtype).reshape(value["shape"])


def decode_values(values: dict[str, Any]) -> dict[str, Any]:
    """A program's recorded dict of results (`run_programs.encode_result`), decoded."""
    return {name: decode(value) for name, value in values.items()}


def _bfloat16() -> np.dtype:
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


def compare(got: Any, want: Any, rtol: float, atol: float, where: str = "",
            counts: int = 0) -> list[str]:
    """The differences between a decoded result and the record's, one line each.

    Arrays must have the record's dtype and shape, and values within the tolerance (integers
    within `counts`, bools exact); Python numbers the same type and value; everything else
    equal.
    """
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray):
            return [f"{where}: got {type(got).__name__} {got!r}, JAX gave a {want.dtype} array"]
        if (got.dtype, got.shape) != (want.dtype, want.shape):
            return [f"{where}: got {got.dtype}{list(got.shape)}, "
                    f"JAX gave {want.dtype}{list(want.shape)}"]
        return _compare_arrays(got, want, rtol, atol, where, counts)
    if isinstance(want, dict) or isinstance(want, list):
        return _compare_containers(got, want, rtol, atol, where, counts)
    if type(got) is not type(want):
        return [f"{where}: got {type(got).__name__} {got!r}, JAX gave {type(want).__name__} "
                f"{want!r}"]
    if isinstance(want, float):
        close = math.isclose(got, want, rel_tol=rtol, abs_tol=atol) or (
            math.isnan(got) and math.isnan(want))
        return [] if close else [f"{where}: got {got!r}, JAX gave {want!r}"]
    return [] if got == want else [f"{where}: got {got!r}, JAX gave {want!r}"]


def _compare_arrays(got: np.ndarray, want: np.ndarray, rtol: float, atol: float,
                    where: str, counts: int = 0) -> list[str]:
    if want.dtype.kind in "fc" or want.dtype.name == "bfloat16":
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    elif want.dtype.kind in "iu":
        bad = np.abs(got.astype(np.int64) - want.astype(np.int64)) > counts
    else:
        bad = got != want
    if not bad.any():
        return []
    index = tuple(int(i) for i in np.argwhere(bad)[0]) if want.ndim else ()
    return [f"{where}: {int(bad.sum())} of {want.size} values differ (rtol {rtol}, atol "
            f"{atol}); first at {list(index)}: got {got[index]!r}, JAX gave {want[index]!r}"]


def _compare_containers(got: Any, want: dict | list, rtol: float, atol: float,
                        where: str, counts: int = 0) -> list[str]:
    if type(got) is not type(want):
        return [f"{where}: got {type(got).__name__}, JAX gave {type(want).__name__}"]
    if isinstance(want, dict):
        if set(got) != set(want):
            return [f"{where}: got keys {sorted(got)}, JAX gave {sorted(want)}"]
        pairs = [(f"{where}[{k!r}]", got[k], want[k]) for k in want]
    else:
        if len(got) != len(want):
            return [f"{where}: got {len(got)} items, JAX gave {len(want)}"]
        pairs = [(f"{where}[{i}]", g, w) for i, (g, w) in enumerate(zip(got, want,
                                                                            strict=True))]
    return [line for path, g, w in pairs
            for line in compare(g, w, rtol, atol, path, counts)]


def _not_run_message(client: str, run: dict[str, Any], program: str) -> str:
    """Why the runner has no result for `program`: the import failed, or the run stopped."""
    if run.get("import_error"):
        error = run["import_error"]
        return (f"importing the {client} programs under justjax raised {error['type']}: "
                f"{error['message']}\n\n{error['traceback']}")
    done = list(run["programs"])
    info = run.get("run", {})
    return (f"{program} did not run: the runner ended ({info.get('ended')}, "
            f"{info.get('seconds')} s) after {done[-1] if done else 'no program'}.\n"
            f"stderr (last lines):\n{info.get('stderr_tail', '')}")


def check_program(client: str, run: dict[str, Any], record: dict[str, Any], program: str,
                  tolerance: Tolerance | None = None) -> None:
    """Fails unless `program` ran under justjax and gave the record's results; a training
    program's (`train_*`) losses must also fall."""
    entry = run["programs"].get(program)
    if entry is None:
        pytest.fail(_not_run_message(client, run, program), pytrace=False)
    if "error" in entry:
        error = entry["error"]
        pytest.fail(f"{program} raised {error['type']} under justjax: {error['message']}\n\n"
                    f"{error['traceback']}", pytrace=False)
    rtol, atol = (tolerance.rtol, tolerance.atol) if tolerance else (RTOL, ATOL)
    got = decode_values(entry["values"])
    want = decode_values(record["programs"][program]["values"])
    differences = compare(got, want, rtol, atol, program, tolerance.counts if tolerance else 0)
    if differences:
        loosened = f" (a looser tolerance: {tolerance.why})" if tolerance else ""
        pytest.fail(f"results differ from real JAX's{loosened}:\n" + "\n".join(differences),
                    pytrace=False)
    if program.startswith("train_"):
        losses = got["losses"]
        assert losses[-1] < losses[0], f"{program}: the loss did not fall: {losses}"


def program_names(client: str) -> list[str]:
    """The programs in `programs/<client>_programs.py` (its public functions), read
    without importing it (it imports jax)."""
    tree = ast.parse((HERE / "programs" / f"{client}_programs.py").read_text())
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]


def check_record(client: str, record: dict[str, Any]) -> None:
    """The record came from real JAX's release, holds every program (re-record after
    adding one) and every program in it ran there."""
    assert record["client"] == client
    assert sorted(record["programs"]) == sorted(program_names(client)), (
        f"the record's programs {sorted(record['programs'])} are not the file's "
        f"{sorted(program_names(client))}: re-record (run_programs.py --record)")
    assert record["versions"]["jax"] == JAX_VERSION and record["versions"]["justjax"] is None
    assert record["import_error"] is None
    failed = [name for name, entry in record["programs"].items() if "values" not in entry]
    assert not failed, f"programs that raised when recorded: {failed}"
    for name, entry in record["programs"].items():
        if name.startswith("train_"):
            losses = decode_values(entry["values"])["losses"]
            assert losses[-1] < losses[0], f"{name}: the loss did not fall in JAX: {losses}"


def client_tests(client: str, looser: dict[str, Tolerance] | None = None
                 ) -> tuple[Callable[..., Any], ...]:
    """A client test module's fixture and tests: assign them to module-level names.

    Args:
      client: the programs' name (`optax` for `programs/optax_programs.py`).
      looser: the programs that need a looser tolerance than rtol 1e-5, atol 1e-6.

    Returns:
      `(client_run, test_program, test_record)`: the module-scoped fixture running the
      programs under justjax, one test per recorded program, and a check of the record.
    """
    record = load_record(client)
    looser = looser or {}
    unknown = set(looser) - set(record["programs"])
    assert not unknown, f"tolerances for programs not in the record: {sorted(unknown)}"

    @pytest.fixture(scope="module", name="client_run")
    def client_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
        return run_under_justjax(client, tmp_path_factory)

    @pytest.mark.parametrize("program", list(record["programs"]))
    def test_program(client_run: dict[str, Any], program: str) -> None:
        check_program(client, client_run, record, program, looser.get(program))

    def test_record() -> None:
        check_record(client, record)

    return client_run, test_program, test_record
