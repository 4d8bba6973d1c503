"""Every optimization pass preserves results: random small programs (elementwise ops,
broadcasts, reductions, dots, slices, concatenations, selects) go through the whole pipeline
(`passes/optimize.py`) and run on the reference backend against the unoptimized module, bit
for bit for integer programs and to rounding for float ones (fusion may evaluate f16/bf16
chains in float32 once where the unfused module rounds after each op)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.hlo.passes import optimize
from tests.harness import run_reference

SEEDS = range(60)


def _program(rng: np.random.Generator, integer: bool) -> tuple[Callable, list[np.ndarray]]:
    """A random straight-line program of 4 to 12 steps over two inputs of shape (3, 4)."""
    dtype = np.int32 if integer else np.float32
    steps = []
    for _ in range(rng.integers(4, 13)):
        steps.append((rng.choice(_STEPS_INT if integer else _STEPS_FLOAT), int(rng.integers(0, 1 << 30))))

    def f(a: Any, b: Any) -> Any:
        values = [a, b]
        for name, salt in steps:
            pick = np.random.default_rng(salt)
            x = values[pick.integers(len(values))]
            y = values[pick.integers(len(values))]
            values.append(_apply(name, x, y, pick))
        return values[-1], values[-2]

    make = (lambda: rng.integers(-5, 6, (3, 4)).astype(dtype)) if integer else \
        (lambda: rng.standard_normal((3, 4)).astype(dtype))
    return f, [make(), make()]


_STEPS_FLOAT = ("add", "mul", "sub", "neg", "tanh", "exp_small", "max", "select", "sum_bcast",
                "dot", "slice_concat", "transpose2", "broadcast_reshape", "mul_one", "add_zero")
_STEPS_INT = ("add", "mul", "sub", "neg", "max", "select", "sum_bcast", "dot", "slice_concat",
              "transpose2", "broadcast_reshape", "mul_one", "add_zero", "mul_zero", "sub_self")


def _apply(name: str, x: Any, y: Any, pick: np.random.Generator) -> Any:
    if name == "add":
        return x + y
    if name == "mul":
        return x * y
    if name == "sub":
        return x - y
    if name == "neg":
        return -x
    if name == "tanh":
        return jnp.tanh(x)
    if name == "exp_small":
        return jnp.exp(jnp.clip(x, -3, 3))
    if name == "max":
        return jnp.maximum(x, y)
    if name == "select":
        return jnp.where(x > y, x, y)
    if name == "sum_bcast":
        return x + jnp.sum(y, axis=int(pick.integers(2)), keepdims=True)
    if name == "dot":
        return (x @ y.T) @ y if x.dtype != jnp.int32 else (x @ y.T) @ y % 7
    if name == "slice_concat":
        return jnp.concatenate([x[:, 2:], y[:, :2]], axis=1)
    if name == "transpose2":
        return x.T.T + y
    if name == "broadcast_reshape":
        return jnp.broadcast_to(x[0], (3, 4)).reshape(3, 4) + y
    if name == "mul_one":
        return x * 1
    if name == "add_zero":
        return x + 0
    if name == "mul_zero":
        return x * 0 + y
    if name == "sub_self":
        return (x - x) + y
    raise AssertionError(name)


@pytest.mark.parametrize("integer", [False, True], ids=["float", "int"])
@pytest.mark.parametrize("seed", SEEDS)
def test_pipeline_preserves_results(seed: int, integer: bool) -> None:
    rng = np.random.default_rng(seed)
    f, args = _program(rng, integer)
    module = jax.jit(f).lower(*args).compiler_ir()
    optimized = optimize.optimize(module, verify=True)
    want = run_reference(module, *args)
    got = run_reference(optimized, *args)
    for w, g in zip(want, got, strict=True):
        if integer:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def test_optimize_leaves_the_lowered_module_alone() -> None:
    module = jax.jit(lambda x: (x + 0) * 1 + x).lower(np.ones(3, np.int32)).compiler_ir()
    before = str(module)
    optimize.optimize(module, verify=True)
    assert str(module) == before
