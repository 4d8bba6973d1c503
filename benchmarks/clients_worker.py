"""The timed side of `bench_clients.py`: client-library workloads, written for JAX.

It runs unchanged on real JAX (`python clients_worker.py`) and on justjax
(`python -m justjax run clients_worker.py`): one JSON request per line on stdin
(`{"workload": name, "seconds": s}`), one JSON answer per line on stdout (seconds per call,
median of the batches in the sample).
"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import statistics
import sys
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _train_flax() -> Any:
    spec = importlib.util.spec_from_file_location("train_flax", EXAMPLES / "train_flax.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flax_train_step() -> Callable[[], Any]:
    """examples/train_flax.py's step: the NNX CNN, Adam, a batch of 64 digits."""
    import optax
    from flax import nnx
    example = _train_flax()
    x_train, y_train, _, _ = example.load_data(0)
    images, labels = jnp.asarray(x_train[:example.BATCH]), jnp.asarray(y_train[:example.BATCH])
    model = example.CNN(rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(example.LEARNING_RATE), wrt=nnx.Param)
    train_model = nnx.view(model, deterministic=False, use_running_average=False)
    rngs = nnx.Rngs(dropout=1)
    return lambda: example.train_step(train_model, optimizer, rngs, images, labels)


def _small_input() -> Any:
    return jnp.ones((4, 16), jnp.float32)


def jit_linear() -> Callable[[], Any]:
    """`jax.jit` of a dense layer on its parameters as a pytree: the baseline the client
    wrappers below add their per-call work to."""
    from flax import nnx
    layer = nnx.Linear(16, 16, rngs=nnx.Rngs(0))
    params = {"kernel": layer.kernel[...], "bias": layer.bias[...]}
    apply = jax.jit(lambda p, x: x @ p["kernel"] + p["bias"])
    x = _small_input()
    return lambda: apply(params, x)


def nnx_jit_linear() -> Callable[[], Any]:
    """`nnx.jit` of the same layer called as a module (split, jit, merge on every call)."""
    from flax import nnx
    layer = nnx.Linear(16, 16, rngs=nnx.Rngs(0))
    apply = nnx.jit(lambda m, x: m(x))
    x = _small_input()
    return lambda: apply(layer, x)


def jit_mlp() -> Callable[[], Any]:
    """`jax.jit` of an equinox MLP's parameters passed as a pytree of arrays."""
    import equinox as eqx
    mlp = eqx.nn.MLP(16, 16, 16, 2, key=jax.random.key(0))
    params, static = eqx.partition(mlp, eqx.is_array)
    apply = jax.jit(lambda p, x: eqx.combine(p, static)(x))
    x = jnp.ones(16, jnp.float32)
    return lambda: apply(params, x)


def eqx_filter_jit_mlp() -> Callable[[], Any]:
    """`eqx.filter_jit` of the same MLP called as a module (partition on every call)."""
    import equinox as eqx
    mlp = eqx.nn.MLP(16, 16, 16, 2, key=jax.random.key(0))
    apply = eqx.filter_jit(lambda m, x: m(x))
    x = jnp.ones(16, jnp.float32)
    return lambda: apply(mlp, x)


WORKLOADS = {f.__name__: f for f in (flax_train_step, jit_linear, nnx_jit_linear, jit_mlp,
                                     eqx_filter_jit_mlp)}


def seconds_per_call(call: Callable[[], Any], seconds: float) -> float:
    """The median over batches of the seconds per call, each call waited for."""
    jax.block_until_ready(call())
    number = 1
    while True:  # calls per batch: a batch lasts about a twentieth of the sample
        start = time.perf_counter()
        for _ in range(number):
            jax.block_until_ready(call())
        if time.perf_counter() - start > seconds / 20 or number > 1 << 20:
            break
        number *= 2
    batches = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(batches) < 5:
        start = time.perf_counter()
        for _ in range(number):
            jax.block_until_ready(call())
        batches.append((time.perf_counter() - start) / number)
    return statistics.median(batches)


def serve() -> None:
    calls: dict[str, Callable[[], Any]] = {}
    for line in sys.stdin:
        request = json.loads(line)
        name = request["workload"]
        if name not in calls:
            calls[name] = WORKLOADS[name]()
            jax.block_until_ready(calls[name]())  # traced and compiled before timing
        seconds = seconds_per_call(calls[name], request["seconds"])
        print(json.dumps({"workload": name, "seconds_per_call": seconds}), flush=True)


if __name__ == "__main__":
    np.random.seed(0)
    serve()
