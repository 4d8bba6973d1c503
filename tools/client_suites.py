"""Runs a client library's own test suite on real JAX and on justjax, and compares them.

The clients (optax 0.2.8, chex 0.1.92, equinox 0.13.8) ship or publish their tests; none of
them is copied into this repository: the tests are read from where they are installed (optax
and chex ship `*_test.py` inside their packages) or from a path given with `--tests`
(equinox's `tests/` folder, from its repository at the release's tag).

Each side runs pytest in its own interpreter, with `tools/client_suites_plugin.py` recording
every test's outcome as it happens (see that file). The justjax side runs under
`python -m justjax run -m pytest`, with the plugin aliasing `jax` in xdist workers too. The
report compares test ids: of the tests passing on real JAX, how many pass on justjax, why the
others do not (grouped by cause: exception type and first line of its message, normalized),
which tests pass on justjax only, and the skips.

Usage:
  python tools/client_suites.py --client optax --out /tmp/suites \\
      --jax-python /work/jaxvenv/bin/python --justjax-python /work/main/.venv/bin/python
  python tools/client_suites.py --client equinox --tests /path/to/equinox/tests ...
  ... --jax-results /work/suites-results/optax/jax.jsonl   (reuse a real-JAX record)
  ... --sides jax   (run one side only)      ... -k adam --only _src/alias_test.py

Test-only dependencies, to install in both interpreters for the sides to compare alike:
equinox's tests need `beartype` (its pytest configuration type-checks equinox with jaxtyping
and beartype), chex's need `dm-tree` (without it its dataclass tests skip), optax's
`scikit-learn`.
Output goes to `--out/<client>/`: `jax.jsonl`, `justjax.jsonl` (the records), pytest's logs,
`report.md`, `summary.json` (the numbers) and `failures.json` (per cause, the tests).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from typing import Any, Iterable

TOOLS = pathlib.Path(__file__).resolve().parent
PLUGIN = "client_suites_plugin"

# Outcomes of a test, as recorded; a test "passes" when it passed or xpassed.
PASSING = ("passed", "xpassed")
STATUSES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")

# The goal: the share of the tests passing on real JAX that pass on justjax.
TARGETS = {"optax": 0.95, "chex": 0.95, "equinox": 0.90, "diffrax": 0.90, "numpyro": 0.90}

# Restarts of a run whose process died (a crash in native code, a hung test ended).
MAX_RESTARTS = 200


@dataclasses.dataclass(frozen=True)
class Suite:
    """How a client's own CI runs its tests.

    Attributes:
      package: the importable package that ships the tests (None: `--tests` is required).
      runs: the pytest invocations, each a name and the `-k` expression selecting its tests
        (chex runs the tests that fake CPU devices in a separate process).
      filterwarnings: the client's pytest `filterwarnings` setting.
      options: the client's pytest `addopts`.
    """

    package: str | None
    runs: tuple[tuple[str, str | None], ...] = (("all", None),)
    filterwarnings: tuple[str, ...] = ()
    options: tuple[str, ...] = ()


SUITES = {
    # optax's test.sh: pytest --numprocesses auto --pyargs optax
    "optax": Suite("optax"),
    # chex's test.sh: the suite without, then with, fake_set_n_cpu_devices_test.
    "chex": Suite("chex", runs=(("main", "not fake_set_n_cpu_devices_test"),
                                ("fake_cpu_devices", "fake_set_n_cpu_devices_test"))),
    # equinox's pyproject.toml [tool.pytest.ini_options] at v0.13.8.
    "equinox": Suite(
        None,
        filterwarnings=("error", "ignore:Setting `jax_pmap_shmap_merge` is deprecated"
                                 ":DeprecationWarning"),
        options=("--jaxtyping-packages=equinox,beartype.beartype(conf=beartype.BeartypeConf("
                 "strategy=beartype.BeartypeStrategy.On))",)),
    # diffrax's pyproject.toml [tool.pytest.ini_options] at v0.7.2 (tests: its repository's
    # test/ folder at the tag).
    "diffrax": Suite(
        None,
        options=("--jaxtyping-packages=diffrax,beartype.beartype(conf=beartype.BeartypeConf("
                 "strategy=beartype.BeartypeStrategy.On))",)),
    # numpyro's pyproject.toml [tool.pytest.ini_options] at 0.22.0 (tests: the sdist's test/
    # folder, which holds its top-level test modules).
    "numpyro": Suite(
        None,
        filterwarnings=("error", "ignore:.*Attempting to hash a tracer:FutureWarning",
                        "ignore:numpy.ufunc size changed,:RuntimeWarning",
                        "ignore:Using a non-tuple sequence:FutureWarning",
                        "ignore:jax.tree_structure is deprecated:FutureWarning",
                        "ignore:numpy.linalg support is experimental:UserWarning",
                        "ignore:scipy.linalg support is experimental:UserWarning",
                        "once:No GPU:UserWarning", "once::DeprecationWarning")),
}


# ---------------------------------------------------------------------------------------
# Reading a record


@dataclasses.dataclass
class Outcome:
    """One test's result on one side: its status and, unless it passed, why."""

    status: str
    cause: str = ""
    where: str = ""


@dataclasses.dataclass
class SideResult:
    """What one side's record says.

    Attributes:
      outcomes: test id -> its outcome.
      collect_errors: id of a module (or class) that failed to collect -> the error text.
      selected: the ids pytest selected to run (after -k), on every run of the record.
      argv: pytest's arguments, per run.
      complete: whether every run reached its end.
    """

    outcomes: dict[str, Outcome] = dataclasses.field(default_factory=dict)
    collect_errors: dict[str, str] = dataclasses.field(default_factory=dict)
    selected: set[str] = dataclasses.field(default_factory=set)
    argv: list[list[str]] = dataclasses.field(default_factory=list)
    complete: bool = True

    def counts(self) -> dict[str, int]:
        """The number of tests per status, and of modules that failed to collect."""
        counter = collections.Counter(o.status for o in self.outcomes.values())
        counts = {status: counter.get(status, 0) for status in STATUSES}
        counts["collect_errors"] = len(self.collect_errors)
        counts["total"] = len(self.outcomes)
        return counts


def read_events(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The events of a record (a JSON object a line; a torn last line is ignored)."""
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def load_record(events: Iterable[dict[str, Any]]) -> SideResult:
    """Folds a record's events into one outcome per test.

    A failing phase decides: a failed setup or teardown makes the test `error`, a failed
    call (or a crash: xdist reports a dead worker's test with phase `???`) `failed`. A skip
    is `skipped`, or `xfailed` when the test was expected to fail; a passing call expected
    to fail is `xpassed`.
    """
    result = SideResult()
    finished = True
    for event in events:
        kind = event.get("event")
        if kind == "session":
            finished = False
            result.argv.append(list(event.get("argv", [])))
        elif kind == "finish":
            finished = True
        elif kind == "selected":
            result.selected.update(event["ids"])
        elif kind == "collect_error":
            result.collect_errors.setdefault(event["id"], event.get("cause", ""))
        elif kind == "report":
            _fold_report(result.outcomes, event)
    result.complete = finished
    return result


def _fold_report(outcomes: dict[str, Outcome], event: dict[str, Any]) -> None:
    test_id, outcome = event["id"], event["outcome"]
    previous = outcomes.get(test_id)
    if previous is not None and previous.status in ("failed", "error"):
        return  # the first failure is the cause; a later teardown error does not replace it
    cause, where = event.get("cause", ""), event.get("where", "")
    if outcome == "failed":
        status = "error" if event.get("when") in ("setup", "teardown") else "failed"
    elif outcome == "skipped":
        status = "xfailed" if event.get("xfail") else "skipped"
        if status == "xfailed" and isinstance(event.get("xfail"), str):
            cause = event["xfail"]
    else:
        status = "xpassed" if event.get("xfail") else "passed"
    outcomes[test_id] = Outcome(status, cause, where)


# ---------------------------------------------------------------------------------------
# Causes

_E_LINE = re.compile(r"^E(?:\s{1,4}(.*))?$")
_TYPE_ONLY = re.compile(r"^[A-Za-z_][\w.]*:$")
_JUSTJAX_NOTE = re.compile(r"\s*\((?:justjax does not provide|a private JAX module justjax "
                           r"does not provide)[^)]*\)")
_PATH_IN_PARENS = re.compile(r"\s*\((?:/|[A-Za-z]:\\)[^)]*\)")
_PATH = re.compile(r"(?:/[\w.+@-]+)+/([\w.+-]+\.py)")
# importlib's KeyError for a submodule whose package failed to import earlier in the process.
_PARTLY_IMPORTED = re.compile(r"^KeyError: '([\w.]+)'$")
_XDIST_CRASH = re.compile(r"^worker '\w+' crashed while running .*")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)")
_KEY_LIMIT = 200


def exception_line(text: str) -> str:
    """The exception's first line (`Type: message`) in a failure text.

    A traceback text (pytest's `E   ` lines) gives its last exception; a message whose first
    line is only its type (`AssertionError:` then the message) gives the type and the next
    line.
    """
    lines = text.splitlines()
    blocks: list[list[str]] = []
    in_block = False
    for line in lines:
        match = _E_LINE.match(line)
        if match:
            if not in_block:
                blocks.append([])
            blocks[-1].append(match.group(1) or "")
        in_block = bool(match)
    body = [line.strip() for line in (blocks[-1] if blocks else lines) if line.strip()]
    if not body:
        return ""
    first = body[0]
    if _TYPE_ONLY.match(first) and len(body) > 1:
        first = f"{first} {body[1]}"
    return first


def cause_key(text: str) -> str:
    """The group a failure belongs to: its exception line with the varying parts replaced.

    Numbers become `N`, addresses `0x…`, file paths their file name; justjax's notes
    ("(justjax does not provide jax.X)") are dropped, so `module 'jax' has no attribute 'X'`
    groups by X alone. importlib's KeyError after a package failed to import (its
    submodules stay in `sys.modules`) is named as that cascade.
    """
    line = exception_line(text)
    cascade = _PARTLY_IMPORTED.match(line)
    if cascade and "_get_parent_path" in text:
        return (f"(import of {cascade.group(1)} failed earlier in the process, leaving its "
                "submodules without it: KeyError in importlib)")
    line = _XDIST_CRASH.sub("Crash: the xdist worker running the test died", line)
    line = _JUSTJAX_NOTE.sub("", line)
    line = _PATH_IN_PARENS.sub("", line)
    line = _PATH.sub(r"\1", line)
    line = _ADDRESS.sub("0x…", line)
    line = _NUMBER.sub("N", line)
    line = re.sub(r"\s+", " ", line).strip()
    return line if len(line) <= _KEY_LIMIT else line[:_KEY_LIMIT] + "…"


def exception_type(key: str) -> str:
    """The exception type of a cause key (its text before the first colon; pytest's
    rewritten `assert` statements show no type)."""
    if key.startswith("assert "):
        return "AssertionError"
    head = key.split(":", 1)[0]
    return head if re.fullmatch(r"[A-Za-z_][\w.]*", head) else "(other)"


# ---------------------------------------------------------------------------------------
# Comparing the sides


@dataclasses.dataclass
class Comparison:
    """Real JAX against justjax, on the tests passing on real JAX.

    Attributes:
      considered: the tests passing on real JAX that the justjax run was asked to run.
      passing: those passing on justjax too.
      causes: cause key -> the ids of the considered tests that do not pass on justjax.
      justjax_only: id -> (real JAX's status, its cause) for tests passing on justjax only.
    """

    considered: list[str]
    passing: list[str]
    causes: dict[str, list[str]]
    justjax_only: dict[str, tuple[str, str]]

    @property
    def rate(self) -> float:
        """The share of the considered tests that pass on justjax."""
        return len(self.passing) / len(self.considered) if self.considered else 0.0


def module_of(test_id: str) -> str:
    """The file part of a test id (`a/b_test.py::C::t[x]` -> `a/b_test.py`)."""
    return test_id.split("::", 1)[0]


def _collect_error_of(test_id: str, errors: dict[str, str]) -> str | None:
    """The collection error that kept a test from running (its module's or class's)."""
    for node, text in errors.items():
        if test_id == node or test_id.startswith(node + "::") or module_of(test_id) == node:
            return text
    return None


def compare(jax: SideResult, justjax: SideResult, restricted: bool) -> Comparison:
    """Compares the sides on the tests passing on real JAX.

    Args:
      jax: the real-JAX record.
      justjax: the justjax record.
      restricted: whether the justjax run ran only part of the suite (its own -k or files):
        then only the tests it selected, or that are in modules it failed to collect, count.

    Returns:
      The comparison.
    """
    considered = sorted(test_id for test_id, o in jax.outcomes.items() if o.status in PASSING)
    if restricted:
        error_modules = {module_of(node) for node in justjax.collect_errors}
        considered = [t for t in considered
                      if t in justjax.selected or t in justjax.outcomes
                      or module_of(t) in error_modules]
    passing: list[str] = []
    causes: dict[str, list[str]] = collections.defaultdict(list)
    for test_id in considered:
        outcome = justjax.outcomes.get(test_id)
        if outcome is not None and outcome.status in PASSING:
            passing.append(test_id)
            continue
        causes[_why_not(test_id, outcome, justjax)].append(test_id)
    justjax_only = {test_id: (jax.outcomes[test_id].status, jax.outcomes[test_id].cause)
                    if test_id in jax.outcomes else ("not run", "")
                    for test_id, o in sorted(justjax.outcomes.items())
                    if o.status in PASSING
                    and (test_id not in jax.outcomes
                         or jax.outcomes[test_id].status not in PASSING)}
    ordered = dict(sorted(causes.items(), key=lambda item: (-len(item[1]), item[0])))
    return Comparison(considered, passing, ordered, justjax_only)


def _why_not(test_id: str, outcome: Outcome | None, justjax: SideResult) -> str:
    """The cause key of a test that passes on real JAX but not on justjax."""
    if outcome is None:
        error = _collect_error_of(test_id, justjax.collect_errors)
        if error is not None:
            return cause_key(error)
        if not justjax.complete:
            return "(not run: the justjax run did not finish)"
        return "(not collected on justjax)"
    if outcome.status == "skipped":
        return "Skipped: " + cause_key(outcome.cause).removeprefix("Skipped: ")
    if outcome.status == "xfailed":
        return "(xfailed on justjax)"
    return cause_key(outcome.cause) or f"({outcome.status}, no message)"


def skip_reasons(result: SideResult) -> dict[str, int]:
    """Skip reason (normalized) -> number of skipped tests, most frequent first."""
    counter = collections.Counter(cause_key(o.cause).removeprefix("Skipped: ")
                                  for o in result.outcomes.values() if o.status == "skipped")
    return dict(counter.most_common())


# ---------------------------------------------------------------------------------------
# The report


def summary(client: str, jax: SideResult, justjax: SideResult,
            comparison: Comparison) -> dict[str, Any]:
    """The comparison's numbers, for `summary.json`."""
    target = TARGETS.get(client)
    return {
        "client": client,
        "jax": {**jax.counts(), "complete": jax.complete},
        "justjax": {**justjax.counts(), "complete": justjax.complete},
        "passing_on_jax": len(comparison.considered),
        "passing_on_both": len(comparison.passing),
        "rate": round(comparison.rate, 4),
        "target": target,
        "causes": {key: len(ids) for key, ids in comparison.causes.items()},
        "justjax_only": sorted(comparison.justjax_only),
    }


def failures(justjax: SideResult, comparison: Comparison) -> dict[str, Any]:
    """Per cause, the tests (passing on real JAX) it fails on justjax, and where one of them
    raised, for `failures.json`: what to rerun when working on a cause."""
    table = {}
    for key, ids in comparison.causes.items():
        wheres = (justjax.outcomes[i].where for i in ids if i in justjax.outcomes)
        table[key] = {"count": len(ids), "where": next((w for w in wheres if w), ""),
                      "ids": ids}
    return table


def render_report(client: str, jax: SideResult, justjax: SideResult, comparison: Comparison,
                  header: list[str], top: int = 60) -> str:
    """The markdown report.

    Args:
      client: the client's name.
      jax: the real-JAX record.
      justjax: the justjax record.
      comparison: their comparison.
      header: lines saying what ran (interpreters, tests, records).
      top: how many causes to list.

    Returns:
      The report's text.
    """
    lines = [f"# {client}: its own tests on real JAX and on justjax", ""]
    lines += [f"- {line}" for line in header] + [""]
    lines += _counts_table(jax, justjax) + [""]
    target = TARGETS.get(client)
    goal = f" (goal: {target:.0%})" if target else ""
    lines.append(f"**Passing on real JAX: {len(comparison.considered)}; of those passing on "
                 f"justjax: {len(comparison.passing)} = {comparison.rate:.1%}**{goal}")
    lines += ["", "## Why tests passing on real JAX do not pass on justjax", ""]
    by_type = collections.Counter()
    for key, ids in comparison.causes.items():
        by_type[exception_type(key)] += len(ids)
    lines.append("By exception type: " + ", ".join(f"{name} {count}"
                                                   for name, count in by_type.most_common()))
    lines += ["", "| tests | cause | e.g. |", "| ---: | --- | --- |"]
    for key, ids in list(comparison.causes.items())[:top]:
        lines.append(f"| {len(ids)} | {_cell(key)} | {_cell(ids[0])} |")
    hidden = len(comparison.causes) - top
    if hidden > 0:
        rest = sum(len(ids) for ids in list(comparison.causes.values())[top:])
        lines.append(f"| {rest} | ({hidden} more causes: summary.json) | |")
    lines += ["", f"## Passing on justjax, not on real JAX ({len(comparison.justjax_only)})", ""]
    for test_id, (status, cause) in comparison.justjax_only.items():
        lines.append(f"- `{test_id}`: {status} on real JAX"
                     + (f" ({cause_key(cause)})" if cause else ""))
    lines += _skips_section(jax, justjax)
    lines += _collect_errors_section(jax, justjax)
    return "\n".join(lines) + "\n"


def _counts_table(jax: SideResult, justjax: SideResult) -> list[str]:
    columns = (*STATUSES, "collect_errors", "total")
    lines = ["| | " + " | ".join(columns) + " |", "| --- |" + " ---: |" * len(columns)]
    for name, side in (("real JAX", jax), ("justjax", justjax)):
        counts = side.counts()
        note = "" if side.complete else " (run did not finish)"
        lines.append(f"| {name}{note} | " + " | ".join(str(counts[c]) for c in columns) + " |")
    return lines


def _skips_section(jax: SideResult, justjax: SideResult) -> list[str]:
    lines = ["", "## Skips", ""]
    for name, side in (("real JAX", jax), ("justjax", justjax)):
        reasons = skip_reasons(side)
        lines.append(f"{name}: {sum(reasons.values())} skipped")
        lines += [f"- {count}: {_cell(reason)}" for reason, count in list(reasons.items())[:15]]
        lines.append("")
    return lines


def _collect_errors_section(jax: SideResult, justjax: SideResult) -> list[str]:
    lines = ["## Modules that failed to collect", ""]
    for name, side in (("real JAX", jax), ("justjax", justjax)):
        lines.append(f"{name}: {len(side.collect_errors)}")
        lines += [f"- `{node}`: {_cell(cause_key(text))}"
                  for node, text in sorted(side.collect_errors.items())]
        lines.append("")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------------------------------
# Running a side


def package_dir(python: str, package: str) -> str:
    """Where `package` is installed for `python` (found without importing it)."""
    code = ("import importlib.util, sys; spec = importlib.util.find_spec(sys.argv[1]); "
            "print(list(spec.submodule_search_locations)[0])")
    return subprocess.run([python, "-c", code, package], check=True, capture_output=True,
                          text=True).stdout.strip()


def write_ini(path: pathlib.Path, suite: Suite) -> None:
    """The pytest configuration both sides run with (the client's own settings)."""
    lines = ["[pytest]"]
    if suite.filterwarnings:
        lines.append("filterwarnings =")
        lines += [f"    {spec}" for spec in suite.filterwarnings]
    path.write_text("\n".join(lines) + "\n")


def pytest_command(python: str, justjax: bool, tests: str, ini: pathlib.Path, record: str,
                   suite: Suite, keyword: str | None, only: list[str], workers: int,
                   timeout: float, exclude: str | None) -> list[str]:
    """The command running one pytest invocation of a side."""
    launcher = [python, "-m", "justjax", "run", "-m", "pytest"] if justjax else [
        python, "-m", "pytest"]
    targets = [os.path.join(tests, path) for path in only] or [tests]
    command = [*launcher, *targets, "-c", str(ini), "--rootdir", tests, "-p", PLUGIN,
               "-p", "no:cacheprovider", "--continue-on-collection-errors", "-q",
               "--tb=short", "-n", str(workers), "--suites-record", record,
               "--suites-timeout", str(timeout), *suite.options]
    if keyword:
        command += ["-k", keyword]
    if exclude:
        command += ["--suites-exclude", exclude]
    return command


def _environment(justjax: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TOOLS), env.get("PYTHONPATH")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written next to the clients' tests
    env.pop("CLIENT_SUITES_JUSTJAX", None)
    if justjax:
        env["CLIENT_SUITES_JUSTJAX"] = "1"
    return env


def _combined_keyword(run_keyword: str | None, user_keyword: str | None) -> str | None:
    parts = [f"({k})" for k in (run_keyword, user_keyword) if k]
    return " and ".join(parts) or None


def run_side(side: str, python: str, tests: str, suite: Suite, out: pathlib.Path,
             keyword: str | None, only: list[str], workers: int, timeout: float) -> pathlib.Path:
    """Runs the suite on one side, restarting after the tests that killed the process.

    Returns:
      The path of the side's record.
    """
    justjax = side == "justjax"
    record = out / f"{side}.jsonl"
    record.unlink(missing_ok=True)
    ini = out / "pytest.ini"
    write_ini(ini, suite)
    workdir = out / f"work-{side}"  # pytest's and hypothesis's files land here
    workdir.mkdir(exist_ok=True)
    for name, run_keyword in suite.runs:
        exclude = out / f"{side}.{name}.exclude"
        exclude.unlink(missing_ok=True)
        log = out / f"{side}.{name}.log"
        log.unlink(missing_ok=True)
        for attempt in range(MAX_RESTARTS + 1):
            command = pytest_command(python, justjax, tests, ini, str(record), suite,
                                     _combined_keyword(run_keyword, keyword), only, workers,
                                     timeout, str(exclude) if attempt else None)
            start = time.time()
            with open(log, "a", encoding="utf-8") as log_file:
                log_file.write("$ " + " ".join(command) + "\n")
                log_file.flush()
                code = subprocess.run(command, cwd=workdir, env=_environment(justjax),
                                      stdout=log_file, stderr=subprocess.STDOUT).returncode
            print(f"  {side} {name}: pytest exited {code} after {time.time() - start:.0f} s",
                  flush=True)
            if not _needs_restart(record, exclude, code):
                break
            print(f"  {side} {name}: the process died; resuming after its last test",
                  flush=True)
    return record


def _needs_restart(record: pathlib.Path, exclude: pathlib.Path, code: int) -> bool:
    """After a run: whether it died midway (then its in-flight test is recorded as crashed
    and every test recorded so far goes to the exclude file for the next attempt)."""
    events = read_events(record)
    sessions = [i for i, e in enumerate(events) if e.get("event") == "session"]
    segment = events[sessions[-1] + 1:] if sessions else []
    if not sessions or any(e.get("event") == "finish" for e in segment):
        return False
    started = [e["id"] for e in segment if e.get("event") == "start"]
    reported = {e["id"] for e in segment if e.get("event") == "report"}
    in_flight = [test_id for test_id in started if test_id not in reported]
    if not started:
        return False  # died before running a test: restarting would die the same way
    reason = (f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}")
    torn = not record.read_bytes().endswith(b"\n")  # the process died mid-line
    with open(record, "a", encoding="utf-8") as f:
        f.write("\n" if torn else "")
        for test_id in in_flight:
            f.write(json.dumps({"event": "report", "id": test_id, "when": "call",
                                "outcome": "failed",
                                "cause": f"Crash: the test process died ({reason})"}) + "\n")
    done = {e["id"] for e in events if e.get("event") in ("start", "report")}
    exclude.write_text("".join(f"{test_id}\n" for test_id in sorted(done)))
    return True


# ---------------------------------------------------------------------------------------
# The command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--client", required=True, choices=sorted(SUITES))
    parser.add_argument("--tests", help="the folder of the client's tests (default: the "
                        "installed package, for optax and chex; required for equinox)")
    parser.add_argument("--jax-python", default="/work/jaxvenv/bin/python",
                        help="an interpreter with real JAX and the client installed")
    parser.add_argument("--justjax-python", default=sys.executable,
                        help="an interpreter with justjax and the client installed")
    parser.add_argument("--out", required=True, help="where records and the report go")
    parser.add_argument("--jax-results", help="reuse this real-JAX record instead of running")
    parser.add_argument("--justjax-results", help="reuse this justjax record")
    parser.add_argument("--sides", default="jax,justjax", help="the sides to run")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression, on both sides")
    parser.add_argument("--only", nargs="*", default=[],
                        help="test files or folders (relative to the tests) to run")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per test")
    parser.add_argument("--jax-workers", type=int, default=2, help="pytest-xdist workers")
    parser.add_argument("--justjax-workers", type=int, default=0, help="pytest-xdist workers")
    return parser.parse_args(argv)


def _tests_dir(args: argparse.Namespace, python: str) -> str:
    suite = SUITES[args.client]
    if args.tests:
        return str(pathlib.Path(args.tests).resolve())
    if suite.package is None:
        raise SystemExit(f"--tests is required for {args.client} (the folder of its tests)")
    return package_dir(python, suite.package)


def main(argv: list[str] | None = None) -> int:
    """Runs the requested sides and writes the report; returns the exit status."""
    args = parse_args(argv)
    suite = SUITES[args.client]
    out = pathlib.Path(args.out).resolve() / args.client
    out.mkdir(parents=True, exist_ok=True)
    sides = {side.strip() for side in args.sides.split(",")}
    records: dict[str, pathlib.Path] = {}
    pythons = {"jax": args.jax_python, "justjax": args.justjax_python}
    reused = {"jax": args.jax_results, "justjax": args.justjax_results}
    header = []
    for side in ("jax", "justjax"):
        if reused[side]:
            records[side] = pathlib.Path(reused[side])
            header.append(f"{side}: record {reused[side]} (reused)")
        elif side in sides:
            tests = _tests_dir(args, pythons[side])
            workers = args.jax_workers if side == "jax" else args.justjax_workers
            print(f"{args.client} on {side}: {tests}", flush=True)
            records[side] = run_side(side, pythons[side], tests, suite, out, args.keyword,
                                     args.only, workers, args.timeout)
            header.append(f"{side}: {pythons[side]} on {tests} ({workers} xdist workers), "
                          f"record {records[side]}")
    if len(records) < 2:
        for side, record in records.items():
            counts = load_record(read_events(record)).counts()
            print(f"{side}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        return 0
    jax = load_record(read_events(records["jax"]))
    justjax = load_record(read_events(records["justjax"]))
    restricted = bool(args.keyword or args.only) and not args.justjax_results
    if restricted:
        header.append(f"justjax ran part of the suite (-k {args.keyword!r}, only "
                      f"{args.only}): compared on the tests it selected")
    comparison = compare(jax, justjax, restricted)
    report = render_report(args.client, jax, justjax, comparison, header)
    (out / "report.md").write_text(report)
    (out / "summary.json").write_text(json.dumps(
        summary(args.client, jax, justjax, comparison), indent=1) + "\n")
    (out / "failures.json").write_text(json.dumps(
        failures(justjax, comparison), indent=1) + "\n")
    print(report.split("## Passing on justjax")[0])
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
