"""A small CNN train step and its parts, justjax side by side with real JAX (issue #24, item 3).

Run: `.venv/bin/python benchmarks/bench_conv.py [--layouts NHWC,NCHW] [--only step,...]
[--rounds 15] [--wide] [--jax-python /work/jaxvenv/bin/python]`.

The model (the same in `workloads.py`'s `cnn_train_step`): a batch of 64 28x28 one-channel
images, a 3x3 convolution to 32 channels (stride 1, SAME padding; NHWC/HWIO through
`lax.conv_general_dilated`, or NCHW/OIHW through `lax.conv`'s defaults), plus bias, relu, a
mean over the spatial positions, a dense layer to 10 classes, softmax cross-entropy against
one-hot labels, and one SGD step (learning rate 0.01) on all four parameters, under `jit`.

The parts are the step's kernels on their own, jitted: the forward convolution, its kernel
gradient (a convolution whose batch is the image batch's feature dim) and its input gradient
(a convolution with the flipped kernel), relu + mean, the bias gradient (a sum over batch
and space) and relu's backward pass. `--wide` adds the same three convolutions for a 32 -> 32
channel layer, the shape of a second CNN layer.

justjax runs in this process, JAX in a worker process of `--jax-python`; each round takes one
sample of each (a sample repeats the call for >= 20 ms), so load from other processes falls on
both alike. Printed: median milliseconds of each side, the median of the per-round ratios and
their spread (min-max over rounds). Results are checked against JAX's before timing.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import numpy as np

N, HW, C, CLASSES = 64, 28, 32, 10
LAYOUTS = {"NHWC": (("NHWC", "HWIO", "NHWC"), (1, 2)), "NCHW": (("NCHW", "OIHW", "NCHW"), (2, 3))}


# ----------------------------------------------------------------------------- the model
def conv(lib: Any, layout: str, x: Any, w: Any) -> Any:
    if layout == "NHWC":
        return lib.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                            dimension_numbers=LAYOUTS[layout][0])
    return lib.lax.conv(x, w, (1, 1), "SAME")


def bias(layout: str, b: Any) -> Any:
    return b if layout == "NHWC" else b[None, :, None, None]


def train_step(lib: Any, layout: str) -> Callable:
    """The jitted step (params, x, y) -> params."""
    jnp = lib.numpy
    axes = LAYOUTS[layout][1]

    def loss(params: dict, x: Any, y: Any) -> Any:
        h = lib.nn.relu(conv(lib, layout, x, params["w"]) + bias(layout, params["b"]))
        logits = jnp.mean(h, axis=axes) @ params["wd"] + params["bd"]
        return -jnp.mean(jnp.sum(lib.nn.log_softmax(logits) * y, axis=-1))

    def step(params: dict, x: Any, y: Any) -> dict:
        grads = lib.grad(loss)(params, x, y)
        return lib.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    return lib.jit(step)


def shapes(layout: str, cin: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(input, kernel, conv output) shapes of a layer with `cin` input channels."""
    if layout == "NHWC":
        return (N, HW, HW, cin), (3, 3, cin, C), (N, HW, HW, C)
    return (N, cin, HW, HW), (C, cin, 3, 3), (N, C, HW, HW)


def inputs(layout: str, seed: int = 0) -> dict[str, np.ndarray]:
    """Every array the step and the parts read."""
    rng = np.random.default_rng(seed)
    data = {}
    for cin, tag in ((1, ""), (C, "32")):
        xs, ws, hs = shapes(layout, cin)
        data["x" + tag] = rng.standard_normal(xs).astype(np.float32)
        data["w" + tag] = (rng.standard_normal(ws) / np.sqrt(9 * cin)).astype(np.float32)
        data["g" + tag] = rng.standard_normal(hs).astype(np.float32)
    data["h"] = rng.standard_normal(shapes(layout, 1)[2]).astype(np.float32)
    data["b"] = (0.1 * rng.standard_normal(C)).astype(np.float32)
    data["wd"] = (rng.standard_normal((C, CLASSES)) / np.sqrt(C)).astype(np.float32)
    data["bd"] = np.zeros(CLASSES, np.float32)
    data["y"] = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, N)]
    data["gm"] = rng.standard_normal((N, C)).astype(np.float32)
    return data


def parts(lib: Any, layout: str) -> dict[str, tuple[Callable, tuple[str, ...]]]:
    """name -> (jitted function, the names of its inputs)."""
    jnp = lib.numpy
    axes = LAYOUTS[layout][1]
    zeros = {}
    for cin, tag in ((1, ""), (C, "32")):
        xs, ws, _ = shapes(layout, cin)
        zeros[tag] = {"x": jnp.zeros(xs), "w": jnp.zeros(ws)}

    def grads(tag: str) -> dict:
        return {
            f"forward conv{tag}": (lambda x, w: conv(lib, layout, x, w), ("x" + tag, "w" + tag)),
            f"kernel gradient{tag}": (lambda x, g: lib.vjp(
                lambda w_: conv(lib, layout, x, w_), zeros[tag]["w"])[1](g)[0],
                ("x" + tag, "g" + tag)),
            f"input gradient{tag}": (lambda w, g: lib.vjp(
                lambda x_: conv(lib, layout, x_, w), zeros[tag]["x"])[1](g)[0],
                ("w" + tag, "g" + tag)),
        }

    table = {
        "step": (train_step(lib, layout), ("params", "x", "y")),
        **grads(""),
        "relu + mean": (lambda h, b: jnp.mean(lib.nn.relu(h + bias(layout, b)), axis=axes),
                        ("h", "b")),
        "bias gradient": (lambda b, g: b - 0.01 * jnp.sum(g, axis=(0, *axes)), ("b", "g")),
        "relu backward": (lambda gm, h, b: jnp.where(
            h + bias(layout, b) > 0, jnp.expand_dims(gm, axes) / (HW * HW), 0.0),
            ("gm", "h", "b")),
        **grads("32"),
    }
    return {name: (f if name == "step" else lib.jit(f), args) for name, (f, args) in table.items()}


# ----------------------------------------------------------------------------- one side
class Side:
    """One library's parts of one layout, ready to be sampled."""

    def __init__(self, lib: Any, layout: str, data: dict[str, np.ndarray]) -> None:
        self.lib = lib
        self.parts = parts(lib, layout)
        device = {k: lib.numpy.asarray(v) for k, v in data.items()}
        device["params"] = {k: device[k] for k in ("w", "b", "wd", "bd")}
        self.args = {name: [device[a] for a in names] for name, (_, names) in self.parts.items()}
        self.numbers: dict[str, int] = {}

    def result(self, name: str) -> list[np.ndarray]:
        f = self.parts[name][0]
        out = f(*self.args[name])
        return [np.asarray(leaf) for leaf in self.lib.tree_util.tree_leaves(out)]

    def sample(self, name: str) -> float:
        """Seconds per call over a sample of >= 20 ms."""
        f, args = self.parts[name][0], self.args[name]
        if name not in self.numbers:
            self.lib.block_until_ready(f(*args))
            start = time.perf_counter()
            self.lib.block_until_ready(f(*args))
            self.numbers[name] = max(1, int(0.02 / max(time.perf_counter() - start, 1e-6)))
        number = self.numbers[name]
        start = time.perf_counter()
        for _ in range(number):
            self.lib.block_until_ready(f(*args))
        return (time.perf_counter() - start) / number


def serve(layout: str, data_path: str) -> None:
    """The JAX side: answers `{"op": "result"|"sample", "name": ...}` lines on stdin."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    side = Side(importlib.import_module("jax"), layout, dict(np.load(data_path)))
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "result":
            path = request["path"]
            np.savez(path, *side.result(request["name"]))
            answers.write(json.dumps({"path": path}) + "\n")
        else:
            answers.write(json.dumps({"seconds": side.sample(request["name"])}) + "\n")
        answers.flush()


class Worker:
    """The JAX side's process."""

    def __init__(self, python: str, layout: str, data_path: str) -> None:
        self.proc = subprocess.Popen([python, __file__, "--serve", layout, "--data", data_path],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=tempfile.gettempdir())

    def ask(self, **request: Any) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def compare(name: str, mine: list[np.ndarray], theirs: list[np.ndarray]) -> str:
    for a, b in zip(mine, theirs, strict=True):
        scale = float(np.max(np.abs(b), initial=1e-30))
        if not np.allclose(a, b, rtol=1e-4, atol=2e-5 * scale):
            return f"{name}: differs from jax by {float(np.max(np.abs(a - b))):.3g}"
    return ""


def run_layout(layout: str, only: list[str], rounds: int, python: str) -> None:
    import justjax
    data = inputs(layout)
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "data.npz")
        np.savez(data_path, **data)
        mine = Side(justjax, layout, data)
        worker = Worker(python, layout, data_path)
        try:
            print(f"\n{layout}: part | justjax ms | jax ms | ratio (median, min-max over rounds)")
            for name in [n for n in mine.parts if not only or n in only]:
                path = worker.ask(op="result", name=name, path=os.path.join(tmp, "r.npz"))["path"]
                with np.load(path) as r:
                    theirs = [r[f"arr_{i}"] for i in range(len(r.files))]
                problem = compare(name, mine.result(name), theirs)
                ours, jax_s = [], []
                for _ in range(rounds):
                    ours.append(mine.sample(name))
                    jax_s.append(worker.ask(op="sample", name=name)["seconds"])
                ratios = np.array(ours) / np.array(jax_s)
                print(f"{name:22s} | {np.median(ours) * 1e3:8.3f} | {np.median(jax_s) * 1e3:8.3f}"
                      f" | {np.median(ratios):5.2f}x ({ratios.min():.2f}-{ratios.max():.2f})"
                      f"{'  ' + problem if problem else ''}", flush=True)
        finally:
            worker.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layouts", default="NHWC,NCHW")
    parser.add_argument("--only", default="", help="comma-separated parts (default: all)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--wide", action="store_true", help="also the 32 -> 32 convolutions")
    parser.add_argument("--jax-python", default="/work/jaxvenv/bin/python")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.data)
        return
    only = [n for n in args.only.split(",") if n]
    if not only and not args.wide:
        only = [n for n in parts_names() if not n.endswith("32")]
    for layout in args.layouts.split(","):
        run_layout(layout, only, args.rounds, args.jax_python)


def parts_names() -> list[str]:
    base = ["forward conv", "kernel gradient", "input gradient"]
    return ["step", *base, "relu + mean", "bias gradient", "relu backward",
            *[n + "32" for n in base]]


if __name__ == "__main__":
    main()
