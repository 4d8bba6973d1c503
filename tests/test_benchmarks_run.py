"""Smoke test of `benchmarks/run.py` (the targets table of issues #9 and #24): the rows of small
workloads and of the new ones in-process, without JAX, and the pieces that decide a row (agreement
with NumPy, ratios over rounds, the target verdict, the README section). No timing asserts."""
from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


run = _load("run")
W = sys.modules["workloads"]  # run.py imports its sibling by that name


@pytest.fixture(autouse=True)
def _no_pin_in_the_environment(monkeypatch) -> None:
    # CI sets OpenBLAS's pin; run.py would rightly list that as a problem of an in-process run.
    for name in run.PIN:
        monkeypatch.delenv(name, raising=False)


def _cells(text: str, label: str) -> list[str]:
    [line] = [line for line in text.splitlines() if line.startswith(f"| {label} |")]
    return [c.strip() for c in line.strip("|").split("|")]


def _seconds(cell: str) -> float:
    number, unit = cell.split(" ")
    return float(number) * {"µs": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def test_quick_run_prints_the_row_of_a_tiny_workload(capsys) -> None:
    text = run.main(["--quick", "--only", "jit_call"])
    assert capsys.readouterr().out.strip() == text.strip()
    label, justjax_t, jax_t, numpy_t, vs_jax, vs_numpy, target, met = _cells(
        text, "cached jit call, 3 args f32[8], per call")
    assert _seconds(justjax_t) > 0 and _seconds(numpy_t) > 0
    assert float(vs_numpy.removesuffix("×")) > 0
    # Without --jax the JAX column is empty and the JAX target cannot be judged.
    assert (jax_t, vs_jax, target, met) == ("-", "-", "≤ 1.5× jax", "?")
    assert "Problems" not in text
    assert "OpenBLAS pin unset" in text.split("\n\n")[0]  # the header


def test_the_new_rows_run_on_justjax_alone() -> None:
    # Issue #24's rows: each workload is checked against NumPy, timed; the first call and the
    # import are timed in fresh processes.
    names = ["cnn_train_step", "attention", "per_example_grads", "matmul", "scan_1000",
             "mlp_train_step", "import"]
    text = run.main(["--quick", "--processes", "1", "--only", ",".join(names)])
    assert "Problems" not in text, text
    labels = [row.label for row in run.rows(names)]
    assert len(labels) == 8  # the MLP's steady time and first call
    for label in labels:
        _, justjax_t, jax_t, numpy_t, vs_jax, _, target, met = _cells(text, label)
        assert _seconds(justjax_t) > 0, label
        assert (jax_t, vs_jax, met) == ("-", "-", "?"), label
        assert target.startswith("≤ "), label
    first = _cells(text, "MLP train step, batch 128 (784-256-10), first call in a fresh process")
    assert first[3] == "-"  # NumPy has no first call
    assert _seconds(_cells(text, labels[-1])[3]) > 0  # NumPy's import, for scale


def test_a_side_that_disagrees_with_numpy_is_reported_not_timed(monkeypatch) -> None:
    wrong = dataclasses.replace(W.WORKLOADS["jit_call"], numpy=lambda x, y, z: x * y - z)
    monkeypatch.setitem(W.WORKLOADS, "jit_call", wrong)
    text = run.main(["--quick", "--only", "jit_call"])
    assert _cells(text, "cached jit call, 3 args f32[8], per call")[1] == "wrong"
    assert "- jit_call: justjax disagrees with numpy: result 0: not allclose" in text


def test_the_per_example_reference_matches_a_finite_difference() -> None:
    # The references are hand-written backward passes: a wrong one would fail every library
    # (or pass a wrong one), so each is checked against a finite difference of its loss.
    w = W.WORKLOADS["per_example_grads"]
    w1, b1, w2, b2, x, y = (a.astype(np.float64) for a in w.inputs(np.random.default_rng(1)))
    grads = W._per_example_numpy(w1, b1, w2, b2, x, y)

    def loss(b2_shifted: np.ndarray) -> float:
        logits = np.maximum(x[:1] @ w1 + b1, 0) @ w2 + b2_shifted
        logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        return float(-np.sum(y[:1] * logp))
    step = np.zeros(10)
    step[3] = 1e-6
    assert np.isclose((loss(b2 + step) - loss(b2 - step)) / 2e-6, grads[3][0, 3], rtol=1e-5)


@pytest.mark.parametrize("name", ["attention", "cnn_train_step"])
def test_hand_written_gradients_match_finite_differences(name: str) -> None:
    w = W.WORKLOADS[name]
    inputs = [a.astype(np.float64) for a in w.inputs(np.random.default_rng(2))]
    # A few examples (CNN) or positions (attention) keep it cheap: the references take any.
    if name == "cnn_train_step":
        inputs[-2:] = [a[:4] for a in inputs[-2:]]  # x and the labels
    else:
        inputs[-1] = inputs[-1][:16]  # x
    value, *grads = W.flatten(w.numpy(*inputs))
    assert value.dtype == np.float64
    index = (1, 2, 0, 5) if name == "cnn_train_step" else (3, 7)
    eps = 1e-5
    plus, minus = ([a.copy() for a in inputs] for _ in range(2))
    plus[0][index] += eps
    minus[0][index] -= eps
    # The CNN's reference returns the updated parameters: recover the gradient from them.
    numeric = (W.flatten(w.numpy(*plus))[0] - W.flatten(w.numpy(*minus))[0]) / (2 * eps)
    got = grads[0][index]
    if name == "cnn_train_step":
        got = (inputs[0][index] - got) / W.LEARNING_RATE
    assert np.isclose(numeric, got, rtol=1e-4, atol=1e-9)


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


def test_rounds_give_the_median_ratio_and_its_band() -> None:
    row = run.Row("rnn_scan", "rnn", W.Target(vs_jax=1.0), pin_figures=True, pin_target=True)
    rounds = {"justjax": [1.0, 3.0, 2.0], "jax": [2.0, 2.0, 2.0], "numpy": [4.0, 4.0, "wrong"]}
    pinned = {"justjax": [4.0, 5.0, 6.0], "jax": [2.0, 2.0, 2.0]}
    cells = _cells(run.row_line(row, rounds, pinned, with_pin=True), "rnn")
    assert cells[1:] == ["2.00 s", "2.00 s", "wrong", "1.00× [0.50–1.50]",
                         "0.50× [0.25–0.75]", "2.50× [2.00–3.00]", "≤ 1.0× jax, with the pin too",
                         "no"]
    # Without the pin's target, only the figure without the pin decides.
    row = dataclasses.replace(row, pin_target=False)
    assert _cells(run.row_line(row, rounds, pinned, with_pin=True), "rnn")[-1] == "yes"


def test_readme_section_between_the_markers_is_replaced(tmp_path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n## Figures\n\nkept\n{run.BEGIN}\nold table\n{run.END}\nafter\n")
    run.write_readme("new header\n\n| a |", readme)
    assert readme.read_text() == (f"# x\n\n## Figures\n\nkept\n{run.BEGIN}\nnew header\n\n| a |\n"
                                  f"{run.END}\nafter\n")
    readme.write_text("no markers")
    with pytest.raises(SystemExit, match="no <!-- figures:begin -->"):
        run.write_readme("x", readme)


def test_the_repository_readme_has_the_figures_markers() -> None:
    text = run.README.read_text()
    assert text.index(run.BEGIN) < text.index(run.END)


def test_blas_env_sets_or_unsets_the_pin() -> None:
    base = {"PATH": "/bin", "OPENBLAS_CORETYPE": "Zen"}
    assert run.blas_env(False, base) == {"PATH": "/bin"}
    assert run.blas_env(True, base) == {"PATH": "/bin", **run.PIN}


def test_with_pin_measures_the_rows_where_it_matters_in_a_child_run() -> None:
    text = run.main(["--quick", "--with-pin", "--processes", "1", "--only", "rnn_scan,jit_call"])
    assert "Problems" not in text, text
    header = text.split("\n\n")[0]
    assert "OpenBLAS pin unset" in header
    # The child run names the kernels OpenBLAS picked with the pin (Haswell on x86-64).
    assert "scipy" in header.split("the pin column with OPENBLAS_CORETYPE=Haswell")[1]
    rnn = _cells(text, "RNN scan 100 steps tanh(h @ W + x), hidden 128")
    # Without JAX no ratio to JAX, pinned or not; the pinned target is named.
    assert (rnn[4], rnn[6], rnn[7]) == ("-", "-", "≤ 1.0× jax, with the pin too")
