"""The main example (`make demo`, `examples/train_digits.py`): it trains, plots and tours."""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from examples import train_digits  # noqa: E402


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
