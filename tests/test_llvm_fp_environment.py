"""Native code runs with denormals flushed (FTZ + DAZ), as XLA CPU's does, and leaves Python's
floating-point mode as it found it (`backends/llvm/codegen/fp_environment.py`).

Expected values were read off real JAX 0.10.2 on CPU (x86-64).
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax._src.backends.llvm.codegen import fp_environment

pytestmark = pytest.mark.skipif(not fp_environment.flushes_denormals(),
                                reason="denormals are flushed on x86-64 hosts only")

X = np.array([1e-45, 1e-40, 1.2e-38, -3e-39], np.float32)


def test_jit_flushes_subnormal_operands_and_results() -> None:
    np.testing.assert_array_equal(justjax.jit(lambda x: x * 3.0)(X), np.float32([0.0, 0.0, 3.6e-38, -0.0]))
    assert np.signbit(np.asarray(justjax.jit(lambda x: x * 3.0)(X))[3])
    np.testing.assert_array_equal(justjax.jit(lambda x: x == 0)(X), [True, True, False, True])
    assert float(justjax.jit(lambda x: x * 1e-30)(np.float32(1e-10))) == 0.0
    assert float(justjax.jit(lambda x: x.sum())(X)) == np.float32(1.2e-38)
    np.testing.assert_array_equal(justjax.jit(jnp.log)(X[:2]), [-np.inf, -np.inf])


def test_eager_ops_flush_too() -> None:
    x = jnp.asarray(X)
    np.testing.assert_array_equal(x > 0, [False, False, True, False])
    assert float(jnp.float32(1e-40) + jnp.float32(0)) == 0.0


def test_parallel_tasks_flush() -> None:
    # Big enough to be split into tasks run on the pool's threads.
    y = jnp.full((3_000_000,), 1e-39, jnp.float32) * 2.0
    assert float(y[0]) == 0.0 and float(y[-1]) == 0.0


def test_host_callbacks_run_flushed_as_in_jax() -> None:
    def callback(v):
        return v * np.float32(1.0) + np.float32(0.0)

    f = justjax.jit(lambda x: justjax.pure_callback(
        callback, justjax.ShapeDtypeStruct(x.shape, x.dtype), x))
    np.testing.assert_array_equal(f(X), np.float32([0.0, 0.0, 1.2e-38, 0.0]))


def test_python_mode_is_restored() -> None:
    justjax.jit(lambda x: x * 3.0)(X)
    tiny = np.float32(1e-40)
    assert tiny * np.float32(1.0) == tiny
    assert 1e-310 * 1.0 == 1e-310


def test_float16_subnormals_are_kept() -> None:
    # float16 conversions are not flushed (real JAX: 6e-08 stays).
    got = justjax.jit(lambda x: x.astype(jnp.float16))(np.float32([1e-5, 6e-8]))
    np.testing.assert_array_equal(got, np.float32([1e-5, 6e-8]).astype(np.float16))
