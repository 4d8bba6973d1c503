"""tools/client_suites.py: reading records, grouping failures by cause, comparing the sides
and writing the report, on small made-up records (no client suite runs here)."""
from __future__ import annotations

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import client_suites as cs  # noqa: E402

# A collection error's text as pytest gives it (the tail of an ImportError traceback).
IMPORT_ERROR = """ImportError while importing test module '/site/optax/_src/b_test.py'.
Traceback:
optax/_src/b_test.py:3: in <module>
    import jax.experimental.foo
E   ModuleNotFoundError: No module named 'jax.experimental' (justjax does not provide \
jax.experimental)"""

CHAINED = """a.py:1: in f
    raise KeyError(1)
E   KeyError: 1

During handling of the above exception, another exception occurred:
b.py:2: in g
    raise ValueError("shape (3, 4) at 0x7f00ab")
E   ValueError: shape (3, 4) at 0x7f00ab
E   second line"""


def _report(test_id: str, outcome: str, when: str = "call", **extra) -> dict:
    return {"event": "report", "id": test_id, "when": when, "outcome": outcome, **extra}


def _jax_events() -> list[dict]:
    return [
        {"event": "session", "argv": ["a"]},
        {"event": "selected", "ids": ["a_test.py::T::test_1", "a_test.py::T::test_2"]},
        _report("a_test.py::T::test_1", "passed"),
        _report("a_test.py::T::test_2", "passed"),
        _report("a_test.py::T::test_3", "passed"),
        _report("a_test.py::T::test_4", "passed"),
        _report("a_test.py::T::test_5", "failed", cause="AssertionError: \nNot equal"),
        _report("a_test.py::T::test_6", "skipped", cause="Skipped: needs 2 devices"),
        _report("b_test.py::test_x", "passed"),
        _report("b_test.py::test_y", "passed"),
        _report("c_test.py::test_z", "passed"),
        {"event": "finish", "exitstatus": 1},
    ]


def _justjax_events() -> list[dict]:
    return [
        {"event": "session", "argv": ["a"]},
        _report("a_test.py::T::test_1", "passed"),
        _report("a_test.py::T::test_2", "failed",
                cause="AttributeError: module 'jax' has no attribute 'Device' (justjax does "
                      "not provide jax.Device)"),
        _report("a_test.py::T::test_3", "failed",
                cause="AttributeError: module 'jax' has no attribute 'Device'",
                where="/src/justjax/x.py:3"),
        _report("a_test.py::T::test_4", "skipped", cause="Skipped: no GPU"),
        _report("a_test.py::T::test_5", "passed"),
        _report("a_test.py::T::test_6", "passed", xfail="flaky"),
        {"event": "collect_error", "id": "b_test.py", "cause": IMPORT_ERROR},
        {"event": "finish", "exitstatus": 1},
    ]


def test_exception_line_takes_the_last_exception_of_a_traceback():
    assert cs.exception_line(IMPORT_ERROR).startswith(
        "ModuleNotFoundError: No module named 'jax.experimental'")
    assert cs.exception_line(CHAINED) == "ValueError: shape (3, 4) at 0x7f00ab"


def test_exception_line_joins_a_type_alone_with_the_message():
    assert cs.exception_line("AssertionError: \n\nNot equal to tolerance rtol=1e-07\nx") == (
        "AssertionError: Not equal to tolerance rtol=1e-07")
    assert cs.exception_line("  \n") == ""


@pytest.mark.parametrize("text, key", [
    ("AttributeError: module 'jax' has no attribute 'Device' (justjax does not provide "
     "jax.Device)", "AttributeError: module 'jax' has no attribute 'Device'"),
    ("AssertionError: \nNot equal to tolerance rtol=1e-07, atol=0",
     "AssertionError: Not equal to tolerance rtol=N, atol=N"),
    (CHAINED, "ValueError: shape (N, N) at 0x…"),
    ("ImportError: cannot import name 'f' from 'jax.foo' (/work/src/justjax/foo.py)",
     "ImportError: cannot import name 'f' from 'jax.foo'"),
    ("worker 'gw1' crashed while running 'a_test.py::T::test_1'",
     "Crash: the xdist worker running the test died"),
    ("TypeError: bad thing in /work/src/justjax/_src/core.py:12",
     "TypeError: bad thing in core.py:N"),
    # digits inside names stay: float32 and log1p are different causes
    ("AttributeError: module 'jax.numpy' has no attribute 'float8_e4m3'",
     "AttributeError: module 'jax.numpy' has no attribute 'float8_e4m3'"),
])
def test_cause_key_normalizes_the_varying_parts(text, key):
    assert cs.cause_key(text) == key


def test_cause_key_names_the_cascade_of_a_failed_package_import():
    text = ("<frozen importlib._bootstrap_external>:1295: in _get_parent_path\n    ???\n"
            "E   KeyError: 'optax'")
    assert cs.cause_key(text) == (
        "(import of optax failed earlier in the process, leaving its submodules without it: "
        "KeyError in importlib)")
    assert cs.cause_key("KeyError: 'optax'") == "KeyError: 'optax'"


def test_exception_type():
    assert cs.exception_type("ValueError: x: y") == "ValueError"
    assert cs.exception_type("equinox.TreePathError: x") == "equinox.TreePathError"
    assert cs.exception_type("assert N < N") == "AssertionError"
    assert cs.exception_type("(not collected on justjax)") == "(other)"


def test_cause_key_is_bounded():
    assert len(cs.cause_key("ValueError: " + "x" * 1000)) == cs._KEY_LIMIT + 1


def test_load_record_folds_phases_into_one_status():
    result = cs.load_record([
        {"event": "session", "argv": []},
        _report("t::a", "failed", when="setup", cause="RuntimeError: no fixture"),
        _report("t::b", "passed"),
        _report("t::b", "failed", when="teardown", cause="OSError: cleanup"),
        _report("t::c", "failed", cause="ValueError: first"),
        _report("t::c", "failed", when="teardown", cause="OSError: later"),
        _report("t::d", "skipped", when="setup", cause="Skipped: no"),
        _report("t::e", "skipped", xfail="known bug"),
        _report("t::f", "passed", xfail=True),
        _report("t::g", "failed", when="???", cause="worker 'gw0' crashed while running"),
        {"event": "finish", "exitstatus": 1},
    ])
    statuses = {test_id: o.status for test_id, o in result.outcomes.items()}
    assert statuses == {"t::a": "error", "t::b": "error", "t::c": "failed", "t::d": "skipped",
                        "t::e": "xfailed", "t::f": "xpassed", "t::g": "failed"}
    assert result.outcomes["t::c"].cause == "ValueError: first"
    assert result.outcomes["t::e"].cause == "known bug"
    assert result.complete
    assert result.counts()["error"] == 2 and result.counts()["total"] == 7


def test_load_record_notices_a_run_that_did_not_finish():
    assert not cs.load_record([{"event": "session", "argv": []},
                               _report("t::a", "passed")]).complete


def test_compare_groups_the_tests_passing_on_jax_by_why_they_fail_on_justjax():
    jax = cs.load_record(_jax_events())
    justjax = cs.load_record(_justjax_events())
    comparison = cs.compare(jax, justjax, restricted=False)
    # passing on real JAX: test_1..4, test_x, test_y, test_z
    assert len(comparison.considered) == 7
    assert comparison.passing == ["a_test.py::T::test_1"]
    assert comparison.causes == {
        "AttributeError: module 'jax' has no attribute 'Device'": [
            "a_test.py::T::test_2", "a_test.py::T::test_3"],
        "ModuleNotFoundError: No module named 'jax.experimental'": [
            "b_test.py::test_x", "b_test.py::test_y"],
        "(not collected on justjax)": ["c_test.py::test_z"],
        "Skipped: no GPU": ["a_test.py::T::test_4"],
    }
    assert comparison.rate == pytest.approx(1 / 7)
    assert comparison.justjax_only == {
        "a_test.py::T::test_5": ("failed", "AssertionError: \nNot equal"),
        "a_test.py::T::test_6": ("skipped", "Skipped: needs 2 devices"),
    }


def test_compare_restricted_to_what_the_justjax_run_selected():
    jax = cs.load_record(_jax_events())
    justjax = cs.load_record([
        {"event": "session", "argv": []},
        {"event": "selected", "ids": ["a_test.py::T::test_2"]},
        _report("a_test.py::T::test_2", "passed"),
        {"event": "collect_error", "id": "b_test.py", "cause": IMPORT_ERROR},
        {"event": "finish", "exitstatus": 1},
    ])
    comparison = cs.compare(jax, justjax, restricted=True)
    assert comparison.considered == ["a_test.py::T::test_2", "b_test.py::test_x",
                                     "b_test.py::test_y"]
    assert comparison.passing == ["a_test.py::T::test_2"]


def test_a_run_that_died_leaves_its_tests_not_run():
    jax = cs.load_record(_jax_events())
    justjax = cs.load_record([{"event": "session", "argv": []},
                              _report("a_test.py::T::test_1", "passed")])
    causes = cs.compare(jax, justjax, restricted=False).causes
    assert len(causes["(not run: the justjax run did not finish)"]) == 6


def test_report_and_summary(tmp_path):
    jax = cs.load_record(_jax_events())
    justjax = cs.load_record(_justjax_events())
    comparison = cs.compare(jax, justjax, restricted=False)
    report = cs.render_report("optax", jax, justjax, comparison, ["jax: recorded"], top=2)
    assert "**Passing on real JAX: 7; of those passing on justjax: 1 = 14.3%** (goal: 95%)" \
        in report
    assert "| real JAX | 7 | 1 | 0 | 1 | 0 | 0 | 0 | 9 |" in report
    assert "| justjax | 2 | 2 | 0 | 1 | 0 | 1 | 1 | 6 |" in report
    assert ("| 2 | AttributeError: module 'jax' has no attribute 'Device' | "
            "a_test.py::T::test_2 |") in report
    assert "| 2 | (2 more causes: summary.json) | |" in report
    assert "By exception type: AttributeError 2, ModuleNotFoundError 2, (other) 1, Skipped 1" \
        in report
    assert "- `a_test.py::T::test_5`: failed on real JAX (AssertionError: Not equal)" in report
    assert "- 1: needs N devices" in report
    assert "- `b_test.py`: ModuleNotFoundError: No module named 'jax.experimental'" in report
    numbers = cs.summary("optax", jax, justjax, comparison)
    assert numbers["passing_on_jax"] == 7 and numbers["passing_on_both"] == 1
    assert numbers["causes"]["Skipped: no GPU"] == 1
    json.dumps(numbers)  # it is written as JSON
    table = cs.failures(justjax, comparison)
    assert table["AttributeError: module 'jax' has no attribute 'Device'"]["where"] == "/src/justjax/x.py:3"
    assert table["Skipped: no GPU"] == {"count": 1, "where": "", "ids": ["a_test.py::T::test_4"]}


def test_needs_restart_records_the_crashed_test_and_excludes_the_done_ones(tmp_path):
    record, exclude = tmp_path / "r.jsonl", tmp_path / "x.txt"
    events = [{"event": "session", "argv": []}, {"event": "start", "id": "t::a"},
              _report("t::a", "passed"), {"event": "start", "id": "t::b"}]
    record.write_text("".join(json.dumps(e) + "\n" for e in events) + '{"torn')
    assert cs._needs_restart(record, exclude, -11)
    assert exclude.read_text() == "t::a\nt::b\n"
    result = cs.load_record(cs.read_events(record))
    assert result.outcomes["t::b"].status == "failed"
    assert result.outcomes["t::b"].cause == "Crash: the test process died (signal SIGSEGV)"
    # a run that finished, or that died before running any test, is not restarted
    finished = events + [{"event": "finish", "exitstatus": 0}]
    record.write_text("".join(json.dumps(e) + "\n" for e in finished))
    assert not cs._needs_restart(record, exclude, 0)
    record.write_text(json.dumps({"event": "session", "argv": []}) + "\n")
    assert not cs._needs_restart(record, exclude, 1)


def test_pytest_command_runs_justjax_through_its_launcher(tmp_path):
    suite = cs.SUITES["equinox"]
    command = cs.pytest_command("py", True, "/t", tmp_path / "p.ini", "r.jsonl", suite,
                                "adam", ["test_nn.py"], 0, 60.0, None)
    assert command[:6] == ["py", "-m", "justjax", "run", "-m", "pytest"]
    assert command[6] == "/t/test_nn.py"
    assert "--continue-on-collection-errors" in command and command[-2:] == ["-k", "adam"]
    assert any(arg.startswith("--jaxtyping-packages=equinox,beartype") for arg in command)
    assert cs._environment(True)["CLIENT_SUITES_JUSTJAX"] == "1"
    assert "CLIENT_SUITES_JUSTJAX" not in cs._environment(False)
    assert cs._combined_keyword("not slow", "adam") == "(not slow) and (adam)"
    cs.write_ini(tmp_path / "p.ini", suite)
    assert (tmp_path / "p.ini").read_text().splitlines()[:3] == [
        "[pytest]", "filterwarnings =", "    error"]


FAKE_SUITE = """
import ctypes, signal, time
import pytest

def test_pass():
    pass

def test_fail():
    raise ValueError("bad shape (3, 4)")

def test_hangs():
    while True:
        pass

def test_hangs_where_signals_cannot_reach():
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
    time.sleep(60)

def test_crashes():
    ctypes.string_at(0)

@pytest.mark.skip(reason="not here")
def test_skipped():
    pass

def test_last():
    pass
"""


def test_run_side_survives_hangs_and_crashes(tmp_path, monkeypatch):
    """The plugin and the restart loop on a made-up suite, in this interpreter (no jax)."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_fake.py").write_text(FAKE_SUITE)
    monkeypatch.setenv("CLIENT_SUITES_HARD_GRACE", "1")
    suite = cs.Suite("fake")
    record = cs.run_side("jax", sys.executable, str(tests), suite, tmp_path, None, [], 0, 1.0)
    result = cs.load_record(cs.read_events(record))
    causes = {test_id.split("::")[1]: (o.status, cs.cause_key(o.cause))
              for test_id, o in result.outcomes.items()}
    assert causes == {
        "test_pass": ("passed", ""),
        "test_fail": ("failed", "ValueError: bad shape (N, N)"),
        "test_hangs": ("failed", "Failed: Timeout: the test ran longer than N s"),
        "test_hangs_where_signals_cannot_reach": (
            "failed", "Timeout: the test ran longer than N s and could not be interrupted; "
                      "the process was ended"),
        "test_crashes": ("failed", "Crash: the test process died (signal SIGSEGV)"),
        "test_skipped": ("skipped", "Skipped: not here"),
        "test_last": ("passed", ""),
    }
    assert result.complete and len(result.argv) == 3  # two restarts
