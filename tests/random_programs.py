"""Small random programs over inputs split at random over a 2x2 mesh of axes `a` and `b`: the
partitioner's fuzzer (tests/test_passes_spmd_partitioner.py) and the multi-process one
(tests/multiprocess/programs.py) draw them alike."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import justjax.numpy as jnp

# A dimension's split: whole, over one axis, or over both.
SPLITS = [None, "a", "b", ("a", "b")]


def chain(rng: np.random.Generator) -> tuple[Callable[..., Any], np.ndarray, np.ndarray]:
    """A function of two arrays chaining four random steps (elementwise ops, transposes,
    sums, dots, maxima), and its inputs f32[4,8] and f32[8,4]."""
    a = rng.standard_normal((4, 8), np.float32)
    b = rng.standard_normal((8, 4), np.float32)
    steps = rng.integers(0, 5, size=4)

    def f(x: Any, y: Any) -> Any:
        for step in steps:
            if step == 0:
                x = jnp.tanh(x) + 1.0
            elif step == 1:
                x = (x @ y) @ x
            elif step == 2:
                x = x.T.T * 2.0
            elif step == 3:
                x = x + jnp.sum(x, axis=0)
            else:
                x = x * jnp.max(x, axis=1, keepdims=True)
        return x, jnp.sum(x * x) + jnp.sum(y)

    return f, a, b


def split(rng: np.random.Generator) -> list[Any]:
    """A random split of a rank-2 value's dimensions (each mesh axis used at most once)."""
    while True:
        dims = [SPLITS[i] for i in rng.integers(0, len(SPLITS), size=2)]
        axes = [d for dim in dims if dim for d in (dim if isinstance(dim, tuple) else (dim,))]
        if len(axes) == len(set(axes)):
            return dims
