"""pytest plugin used by `tools/client_suites.py` (loaded with `-p client_suites_plugin`).

It does three things for a client library's own test suite:

- With `CLIENT_SUITES_JUSTJAX=1` in the environment it calls `justjax.install_as_jax()` as
  soon as pytest imports it (before conftest files, test modules and entry-point plugins),
  so `import jax` resolves to justjax in this process and in every pytest-xdist worker
  (workers inherit the environment, not `python -m justjax run`).
- `--suites-record FILE` appends one JSON line per event as it happens (the tests selected,
  each test's start, every report that is not a plain pass of setup/teardown, collection
  errors, the session's end), so a run that dies midway still says what ran and what it
  was running.
- `--suites-timeout SECONDS` fails a test that runs longer (SIGALRM raises in the test); if
  the test is stuck where the signal cannot interrupt it (native code, signals blocked), a
  watchdog thread ends the process after a grace period (`CLIENT_SUITES_HARD_GRACE`
  seconds, default 30), recording the test as timed out first.
- `--suites-exclude FILE` deselects the test ids listed in FILE (one a line): the tool uses
  it to resume a run after the process died, without the tests already recorded.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any, Iterator

import pytest

if os.environ.get("CLIENT_SUITES_JUSTJAX") == "1":
    import justjax

    justjax.install_as_jax()

# Seconds the watchdog waits past the timeout for SIGALRM to take effect (the tool's
# own test shortens it).
HARD_GRACE = float(os.environ.get("CLIENT_SUITES_HARD_GRACE", "30"))
_TEXT_LIMIT = 4000


def pytest_addoption(parser: pytest.Parser) -> None:
    """Registers the plugin's options."""
    group = parser.getgroup("client_suites")
    group.addoption("--suites-record", default=None,
                    help="append one JSON line per test event to this file")
    group.addoption("--suites-timeout", type=float, default=0.0,
                    help="fail a test that runs longer than this many seconds (0: no limit)")
    group.addoption("--suites-exclude", default=None,
                    help="file of test ids (one a line) to deselect")


class _Recorder:
    """Appends JSON lines to the record file, one write per line."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the session)
        self._lock = threading.Lock()

    def write(self, **event: Any) -> None:
        line = json.dumps(event, default=str) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# The record of this process (None in xdist workers and without --suites-record); hooks
# such as pytest_runtest_logreport receive no config to find it on.
_RECORDER: list[_Recorder | None] = [None]


def _recorder() -> _Recorder | None:
    return _RECORDER[0]


def pytest_configure(config: pytest.Config) -> None:
    """Opens the record (in the controlling process only: xdist sends it every report)."""
    path = config.getoption("suites_record")
    if path and not _is_worker(config):
        recorder = _Recorder(path)
        _RECORDER[0] = recorder
        recorder.write(event="session", pid=os.getpid(), argv=sys.argv[1:],
                       justjax=os.environ.get("CLIENT_SUITES_JUSTJAX") == "1",
                       time=time.time())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselects the ids listed in `--suites-exclude`."""
    path = config.getoption("suites_exclude")
    if not path:
        return
    with open(path, encoding="utf-8") as f:
        excluded = {line.rstrip("\n") for line in f if line.strip()}
    kept = [item for item in items if item.nodeid not in excluded]
    dropped = [item for item in items if item.nodeid in excluded]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collection_finish(session: pytest.Session) -> None:
    """Records the selected ids (without xdist; with it, workers collect: see below)."""
    recorder = _recorder()
    if recorder is not None and session.items:
        recorder.write(event="selected", ids=[item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Records the ids an xdist worker selected (every worker sends the same list)."""
    recorder = _recorder()
    if recorder is not None:
        recorder.write(event="selected", ids=list(ids))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Records a module (or class) that failed to collect."""
    recorder = _recorder()
    if recorder is not None and report.failed:
        recorder.write(event="collect_error", id=report.nodeid,
                       cause=_text(report.longrepr)[-_TEXT_LIMIT:])


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    """Records that a test started (a test started and never reported crashed)."""
    recorder = _recorder()
    if recorder is not None:
        recorder.write(event="start", id=nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Records the call phase of every test, and any setup/teardown that did not pass."""
    recorder = _recorder()
    if recorder is None or (report.when != "call" and report.passed):
        return
    event: dict[str, Any] = dict(event="report", id=report.nodeid, when=report.when,
                                 outcome=report.outcome, duration=round(report.duration, 3))
    if hasattr(report, "wasxfail"):
        event["xfail"] = report.wasxfail or True
    if not report.passed:
        event["cause"] = _cause(report.longrepr)
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:
            event["where"] = f"{crash.path}:{crash.lineno}"
        if report.failed:
            event["text"] = _text(report.longrepr)[-_TEXT_LIMIT:]
    recorder.write(**event)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Records that the session ended normally."""
    recorder = _recorder()
    if recorder is not None:
        recorder.write(event="finish", exitstatus=int(exitstatus), time=time.time())


def _cause(longrepr: Any) -> str:
    """The exception line (`Type: message`) of a failure, or the reason of a skip."""
    if isinstance(longrepr, tuple):  # a skip: (path, lineno, reason)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message)
    return _text(longrepr)[-_TEXT_LIMIT:]


def _text(longrepr: Any) -> str:
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    """Runs the test (setup, call, teardown) under the timeout, if one is set."""
    timeout = item.config.getoption("suites_timeout")
    if not timeout:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        pytest.fail(f"Timeout: the test ran longer than {timeout:g} s", pytrace=False)

    watchdog = threading.Timer(timeout + HARD_GRACE, _hard_timeout,
                               args=(item.nodeid, timeout))
    watchdog.daemon = True
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    watchdog.start()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        watchdog.cancel()


def _hard_timeout(nodeid: str, timeout: float) -> None:
    """Ends a process whose test is stuck where SIGALRM cannot reach (native code)."""
    message = (f"Timeout: the test ran longer than {timeout:g} s and could not be "
               "interrupted; the process was ended")
    recorder = _recorder()
    if recorder is not None:
        recorder.write(event="report", id=nodeid, when="call", outcome="failed",
                       cause=message, text=message)
    sys.stderr.write(f"\n{message}: {nodeid}\n")
    sys.stderr.flush()
    os._exit(70)
