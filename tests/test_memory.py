"""Compiled programs go when nothing uses them (issue #27): a jitted function's programs, their
kernels and their machine code are freed once the function is dropped, without
`jax.clear_caches()`; `clear_caches` frees those of functions still alive. Counted as live
executables and execution engines (RSS depends on the allocators: see the issue's note)."""
from __future__ import annotations

import gc

import llvmlite.binding as llvm
import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax._src.backends.llvm.runtime.elementwise_executable import ElementwiseExecutable
from justjax._src.backends.llvm.runtime.executable import LLVMExecutable


def _live() -> dict[str, int]:
    gc.collect()
    counts = {"programs": 0, "engines": 0}
    for obj in gc.get_objects():
        if isinstance(obj, (LLVMExecutable, ElementwiseExecutable)):
            counts["programs"] += 1
        elif isinstance(obj, llvm.ExecutionEngine):
            counts["engines"] += 1
    return counts


def _compile_many(first: int, count: int, x: np.ndarray) -> list:
    # Distinct constants: a program (and an elementwise kernel, with its code) each; and a
    # reduction, a program of the optimizing pipeline.
    functions = []
    for k in range(first, first + count):
        f = jax.jit(lambda a, k=k: jnp.sin(a) * k + k)
        g = jax.jit(lambda a, k=k: (jnp.cos(a) * k).sum())
        f(x).block_until_ready()
        g(x).block_until_ready()
        functions += [f, g]
    return functions


def test_dropped_functions_free_their_programs_and_code():
    x = np.linspace(0, 1, 8, dtype=np.float32)
    _compile_many(0, 5, x)  # what any first compile sets up
    before = _live()
    functions = _compile_many(1000, 60, x)
    grown = _live()
    assert grown["programs"] >= before["programs"] + 100
    del functions
    after = _live()
    assert after["programs"] <= before["programs"] + 2, (before, grown, after)
    assert after["engines"] <= before["engines"] + 2, (before, grown, after)


def test_clear_caches_frees_the_programs_of_live_functions():
    x = np.linspace(0, 1, 8, dtype=np.float32)
    _compile_many(0, 5, x)
    before = _live()
    functions = _compile_many(2000, 40, x)
    jax.clear_caches()
    after = _live()
    assert after["programs"] <= before["programs"] + 2, (before, after)
    # The functions still work: they compile again.
    np.testing.assert_allclose(np.asarray(functions[0](x)), np.sin(x) * 2000 + 2000, rtol=1e-6)
