"""Trip counts of counted loops and how often the ops inside loops run
(`hlo/passes/loops.py`: `trip_count`, `repetitions`)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.hlo import ir
from justjax._src.hlo.passes import loops, optimize


def _optimized(f: Callable[..., Any], *args: Any) -> ir.Module:
    return optimize.optimize(jax.jit(f).lower(*args).compiler_ir())


def _trips(module: ir.Module) -> list[int | None]:
    defining = {r: op for op in module.walk() for r in op.results}
    return [loops.trip_count(op, defining) for op in module.walk()
            if op.opcode == "stablehlo.while"]


X = np.ones(4, np.float32)

PROGRAMS: dict[str, tuple[Callable[..., Any], list[int | None]]] = {
    "fori_loop": (lambda x: lax.fori_loop(0, 100, lambda i, h: h * 2.0, x), [100]),
    "fori_loop_offset": (lambda x: lax.fori_loop(3, 17, lambda i, h: h + i, x), [14]),
    "scan": (lambda x: lax.scan(lambda c, y: (c + y, c), x, jnp.ones((7, 4)))[0], [7]),
    "scan_reverse": (lambda x: lax.scan(lambda c, y: (c * y, c), x, jnp.ones((9, 4)),
                                        reverse=True)[0], [9]),
    "scan_unrolled": (lambda x: lax.scan(lambda c, y: (c + y, c), x, jnp.ones((10, 4)),
                                         unroll=2)[0], [5]),
    "while_on_values": (lambda x: lax.while_loop(lambda c: jnp.sum(c) < 100.0,
                                                 lambda c: c * 2.0, x), [None]),
    "while_counting_down": (lambda x: lax.while_loop(
        lambda c: c[0] > 0, lambda c: (c[0] - 3, c[1] + 1.0), (jnp.int32(10), x))[1], [4]),
    "while_counting_up_inclusive": (lambda x: lax.while_loop(
        lambda c: c[0] <= 10, lambda c: (c[0] + 2, c[1] + 1.0), (jnp.int32(0), x))[1], [6]),
    "while_never": (lambda x: lax.while_loop(
        lambda c: c[0] < 0, lambda c: (c[0] + 1, c[1] + 1.0), (jnp.int32(5), x))[1], [0]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_trip_count(name: str) -> None:
    f, want = PROGRAMS[name]
    module = _optimized(f, X)
    assert _trips(module) == want
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(X)), np.asarray(f(X)))


def test_repetitions_multiply_through_nested_loops() -> None:
    def f(x):
        def outer(i, h):
            return lax.fori_loop(0, 5, lambda j, g: jnp.sin(g), h) + 1.0
        return lax.fori_loop(0, 20, outer, x)

    module = _optimized(f, X)
    counts = loops.repetitions(module)
    top = module.function("main").body.ops
    (inner,) = [op for op in module.walk() if op.opcode == "stablehlo.while" and op not in top]
    assert counts[inner] == 20
    assert {counts[op] for op in inner.regions[1].block.ops} == {100}
    assert not any(op in counts for op in top)


def test_repetitions_of_an_unknown_loop() -> None:
    module = _optimized(PROGRAMS["while_on_values"][0], X)
    (loop,) = [op for op in module.walk() if op.opcode == "stablehlo.while"]
    counts = loops.repetitions(module)
    assert {counts[op] for op in loop.regions[1].block.ops} == {loops.UNKNOWN_TRIPS}
