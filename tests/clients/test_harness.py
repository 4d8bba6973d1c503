"""The client tests' machinery: results survive JSON exactly, comparisons catch what differs,
and a program's failure reaches the test report with its traceback."""
from __future__ import annotations

import json
import types

import ml_dtypes
import numpy as np
import pytest

from tests.clients import harness, run_programs


def _roundtrip(result: dict) -> dict:
    encoded = run_programs.encode_result(result)
    return harness.decode_values(json.loads(run_programs.dumps({"values": encoded}))["values"])


def test_results_survive_json_exactly():
    x = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    result = {"f32": x, "bf16": x.astype(ml_dtypes.bfloat16), "f64": x.astype(np.float64),
              "i": np.arange(3, dtype=np.int8), "b": np.array([True, False]),
              "scalar": np.float32(np.pi), "nan": np.array([np.nan, np.inf], np.float32),
              "plain": [1, 2.5, "s", None, True], "nested": {"a": (x[0], 3)}}
    back = _roundtrip(result)
    for name in ("f32", "bf16", "f64", "i", "b"):
        assert back[name].dtype == result[name].dtype
        np.testing.assert_array_equal(back[name], result[name])
    assert back["scalar"].dtype == np.float32 and back["scalar"] == np.float32(np.pi)
    np.testing.assert_array_equal(back["nan"], result["nan"])
    assert back["plain"] == [1, 2.5, "s", None, True]
    np.testing.assert_array_equal(back["nested"]["a"][0], x[0])
    assert back["nested"]["a"][1] == 3
    assert harness.compare(back, _roundtrip(result), harness.RTOL, harness.ATOL) == []


def test_float32_records_are_short():
    encoded = run_programs.encode(np.float32(0.1295636))
    assert encoded["data"] == 0.1295636 and np.float32(encoded["data"]) == np.float32(0.1295636)


def test_unrecordable_results_are_refused():
    with pytest.raises(TypeError, match="cannot record"):
        run_programs.encode(object())
    with pytest.raises(TypeError, match="returns a dict"):
        run_programs.encode_result([1])


@pytest.mark.parametrize("got, want, needle", [
    (np.ones(2, np.float64), np.ones(2, np.float32), "got float64[2], JAX gave float32[2]"),
    (np.ones(3, np.float32), np.ones(2, np.float32), "got float32[3]"),
    (np.array([1.0, 1.001], np.float32), np.ones(2, np.float32), "1 of 2 values differ"),
    (np.array([1, 3]), np.array([1, 2]), "1 of 2 values differ"),
    (5.0, 5, "got float 5.0, JAX gave int 5"),
    (1.001, 1.0, "got 1.001"),
    ("a", "b", "got 'a'"),
    ({"x": 1}, {"y": 1}, "got keys ['x']"),
    ([1.0], [1.0, 2.0], "got 1 items"),
    (1.0, np.ones(()), "JAX gave a float64 array"),
])
def test_compare_finds_differences(got, want, needle):
    differences = harness.compare(got, want, harness.RTOL, harness.ATOL, "p")
    assert len(differences) == 1 and needle in differences[0], differences


def test_compare_within_tolerance():
    want = np.array([1.0, 0.0, np.nan], np.float32)
    got = want + np.array([5e-6, 5e-7, 0.0], np.float32)
    assert harness.compare(got, want, harness.RTOL, harness.ATOL) == []
    assert harness.compare(1.0 + 5e-6, 1.0, harness.RTOL, harness.ATOL) == []


def test_integer_results_are_exact_unless_counts_allow():
    want = {"steps": np.array(22, np.int32), "accepted": np.array([17, 3], np.int32)}
    got = {"steps": np.array(20, np.int32), "accepted": np.array([16, 3], np.int32)}
    assert len(harness.compare(got, want, 0.1, 1e-5, "p")) == 2
    assert harness.compare(got, want, harness.RTOL, harness.ATOL, "p", counts=2) == []
    assert len(harness.compare(got, want, harness.RTOL, harness.ATOL, "p", counts=1)) == 1


def test_programs_are_the_modules_public_functions_in_order():
    module = types.ModuleType("m")
    exec("import math\nfrom math import sqrt\n"
         "def second(): return {}\ndef _helper(): pass\ndef first(): return {}\n",
         module.__dict__)
    module.first.__code__ = module.first.__code__.replace(co_firstlineno=1)
    assert [name for name, _ in run_programs.programs_of(module)] == ["first", "second"]


def test_a_programs_error_is_reported_with_its_traceback():
    record = {"programs": {"p": {"values": {"x": 1}}}}
    run = {"import_error": None, "programs": {"p": {"error": {
        "type": "builtins.ValueError", "message": "boom", "traceback": "File x.py, line 3"}}}}
    with pytest.raises(pytest.fail.Exception, match=r"(?s)p raised builtins.ValueError.*"
                       r"boom.*File x.py, line 3"):
        harness.check_program("c", run, record, "p")


def test_an_import_error_and_a_stopped_run_are_reported():
    record = {"programs": {"p": {"values": {}}, "q": {"values": {}}}}
    failed_import = {"import_error": {"type": "builtins.ImportError", "message": "no jax.x",
                                      "traceback": "tb"}, "programs": {}}
    with pytest.raises(pytest.fail.Exception, match="importing the c programs"):
        harness.check_program("c", failed_import, record, "q")
    stopped = {"import_error": None, "programs": {"p": {"values": {}}},
               "run": {"ended": "timed out after 1800 s", "seconds": 1800.0,
                       "stderr_tail": "[c] q ..."}}
    with pytest.raises(pytest.fail.Exception, match=r"(?s)q did not run.*timed out.*after p"):
        harness.check_program("c", stopped, record, "q")


def test_a_training_loss_must_fall():
    values = {"losses": [1.0, 1.5]}
    record = {"programs": {"train_x": {"values": values}}}
    run = {"import_error": None, "programs": {"train_x": {"values": values}}}
    with pytest.raises(AssertionError, match="the loss did not fall"):
        harness.check_program("c", run, record, "train_x")


def test_a_program_that_runs_too_long_is_stopped():
    def forever() -> dict:
        while True:
            pass

    with pytest.raises(run_programs.ProgramTimeout, match="ran longer than 1 s"):
        run_programs.call_with_timeout(forever, 1)
    assert run_programs.call_with_timeout(lambda: {"x": 1}, 1) == {"x": 1}
