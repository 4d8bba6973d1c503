"""The examples run: the main one (`make demo`, `examples/train_digits.py`) trains, plots
and tours; the first tour and the seed functions the explorer is shown on; the Flax example
(`examples/train_flax.py`, written for JAX) trains under `python -m justjax run`."""
from __future__ import annotations

import pathlib
import re
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from examples import seeds, tour, train_digits  # noqa: E402
from tests.clients.harness import run_with_justjax  # noqa: E402


def test_demo_trains_plots_and_tours_the_pipeline(tmp_path, capsys):
    result = train_digits.main(["--epochs", "4", "--output", str(tmp_path)])
    history = result["history"]
    assert len(history["loss"]) == 4 and history["loss"][-1] < history["loss"][0]
    assert history["test_accuracy"][-1] > 0.9
    png = (tmp_path / "training.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    report = (tmp_path / "train_step.html").read_text()
    assert "<svg" in report and "dot (BLAS)" in report
    out = capsys.readouterr().out
    for line in ("Test accuracy after 4 epochs:", "StableHLO:", "kernels,", "fusions:",
                 "compile: trace and lower", "one step:"):
        assert line in out


def test_first_tour_runs(capsys):
    tour.main()
    out = capsys.readouterr().out
    assert "example 0 matches grad(loss) on its own: True" in out
    assert "The compiled call gives the eager result: True" in out


def test_seed_functions():
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(seeds.double_plus_one(x)), x * 2 + 1)
    # The chain's gradient by the chain rule written out, in float64.
    ys = [x.astype(np.float64)]
    for _ in range(9):
        y = ys[-1]
        ys.append(np.sin(y) + 0.1 * np.cos(y ** 2) - np.tanh(y))
    want = np.ones_like(ys[0])
    for y in reversed(ys):
        want *= np.cos(y) - 0.2 * y * np.sin(y * y) - (1 - np.tanh(y) ** 2)
    np.testing.assert_allclose(np.asarray(seeds.grad_chain(x)), want, rtol=1e-4, atol=1e-7)


def test_flax_example_trains_on_justjax():
    done = run_with_justjax([str(ROOT / "examples" / "train_flax.py"), "--epochs", "5"],
                            timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "justjax" in done.stdout.splitlines()[0], done.stdout  # jax came from justjax
    accuracy = re.search(r"Test accuracy after 5 epochs: ([\d.]+)%", done.stdout)
    # Real JAX 0.10.2 reaches 86.1% (309 of 359 test digits) after these 5 epochs.
    assert accuracy and float(accuracy.group(1)) > 80, done.stdout
