"""Smoke test of `benchmarks/run.py` (issue #9's targets table): one tiny workload in-process,
and the pieces that decide a row (agreement with NumPy, the target verdict). No timing asserts."""
from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _load("run")
W = sys.modules["workloads"]  # run.py imports its sibling by that name


def test_quick_run_prints_the_row_of_a_tiny_workload(capsys) -> None:
    text = run.main(["--quick", "--only", "jit_call"])
    assert capsys.readouterr().out.strip() == text.strip()
    [row] = [line for line in text.splitlines() if line.startswith("| cached jit call")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    label, measure, numpy_t, justjax_t, jax_t, vs_jax, vs_numpy, target, met = cells
    assert measure == "µs per call"
    assert float(justjax_t.removesuffix(" µs")) > 0 and float(numpy_t.removesuffix(" µs")) > 0
    assert float(vs_numpy.removesuffix("×")) > 0
    # Without --jax the JAX column is empty and the JAX target cannot be judged.
    assert (jax_t, vs_jax, target, met) == ("-", "-", "≤ 3.0× jax", "?")
    assert "Problems" not in text


def test_a_side_that_disagrees_with_numpy_is_reported_not_timed(monkeypatch, capsys) -> None:
    wrong = dataclasses.replace(W.WORKLOADS["jit_call"], numpy=lambda x, y, z: x * y - z)
    monkeypatch.setitem(W.WORKLOADS, "jit_call", wrong)
    text = run.main(["--quick", "--only", "jit_call"])
    [row] = [line for line in text.splitlines() if line.startswith("| cached jit call")]
    assert [c.strip() for c in row.strip("|").split("|")][3] == "wrong"
    assert "- jit_call: justjax disagrees with numpy: result 0: not allclose" in text


def test_results_are_checked_against_numpy() -> None:
    workload = W.WORKLOADS["fma_exp"]
    want = [np.array([1.0, 2.0, 3.0], np.float32)]
    assert W.mismatch(workload, [want[0] * np.float32(1 + 1e-7)], want) is None
    assert "not allclose" in W.mismatch(workload, [want[0] + np.float32(1e-3)], want)
    assert "float64[3]" in W.mismatch(workload, [want[0].astype(np.float64)], want)
    assert "2 results" in W.mismatch(workload, want * 2, want)


def test_tolerance_scales_with_the_largest_reference_value() -> None:
    # The seed chain's gradient is ~1e-22 everywhere: an absolute atol would accept anything.
    workload = W.WORKLOADS["seed_grad_chain"]
    want = [np.array([7e-22, -3e-23, 1e-25], np.float32)]
    assert W.mismatch(workload, [want[0] + np.float32(1e-26)], want) is None
    assert W.mismatch(workload, [np.zeros(3, np.float32)], want) is not None


def test_verdict_needs_every_ratio_its_target_names() -> None:
    both = W.Target(vs_jax=0.6, vs_numpy=0.2)
    assert run.verdict(both, 0.5, 0.1) == "yes"
    assert run.verdict(both, 0.5, 0.3) == "no"
    assert run.verdict(both, None, 0.1) == "?"
    assert run.verdict(W.Target(vs_jax=1.0), 1.01, None) == "no"
