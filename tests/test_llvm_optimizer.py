"""LLVM's O3 pipeline in a helper process (`backends/llvm/runtime/optimizer.py`): past this
process's share of runs, programs are optimized by a helper (replaced every few hundred
runs, taking llvmlite's leak of each run with it) into the same IR, and a helper that fails
leaves the run to this process."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends

pytestmark = pytest.mark.skipif(backends.get_backend().name != "llvm",
                                reason="the native backend's optimizer")

LOOP = """
define void @scale(float* noalias %a, float* noalias %b, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%j, %loop]
  %pa = getelementptr float, float* %a, i64 %i
  %pb = getelementptr float, float* %b, i64 %i
  %x = load float, float* %pa
  %y = fmul float %x, 3.0
  %z = fadd float %y, OFFSET
  store float %z, float* %pb
  %j = add i64 %i, 1
  %c = icmp slt i64 %j, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
"""


@pytest.fixture
def optimizer():
    from justjax._src.backends.llvm.runtime import optimizer
    yield optimizer
    optimizer._helper.stop()


def _loop(offset: int) -> str:
    return LOOP.replace("OFFSET", f"{offset}.0")


def test_the_helper_gives_the_ir_this_process_would(optimizer):
    with jax.config.override("justjax_llvm_optimizations_in_process", -1):
        here = str(optimizer.parse(_loop(1), True))
    helped = optimizer.stats.helper
    with jax.config.override("justjax_llvm_optimizations_in_process", 0):
        there = str(optimizer.parse(_loop(1), True))
    assert optimizer.stats.helper == helped + 1
    assert "<8 x float>" in here or "<16 x float>" in here  # vectorized: O3 ran
    # The same instructions; only the comments listing each block's predecessors come in
    # another order (parsing the helper's text orders the uses anew).
    assert _code(there) == _code(here)


def _code(llvm_ir: str) -> list[str]:
    return [line.split(";")[0].rstrip() for line in llvm_ir.splitlines()
            if not line.startswith("; ModuleID")]


def test_programs_optimized_by_helpers_compute_the_same(optimizer, monkeypatch):
    monkeypatch.setattr(optimizer, "RUNS_PER_HELPER", 2)
    started = optimizer.stats.helpers_started
    x = jnp.linspace(0.0, 1.0, 1 << 16)
    with jax.config.override("justjax_llvm_optimizations_in_process", 0), \
            jax.config.override("justjax_tiered_compilation", False):
        for k in range(5):
            got = jax.jit(lambda a, k=k: jnp.tanh(a * (k + 1)) + jnp.sin(a) * k)(x)
            want = np.tanh(np.asarray(x) * (k + 1)) + np.sin(np.asarray(x)) * k
            np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
    assert optimizer.stats.helpers_started >= started + 2  # replaced after 2 runs


def test_a_helper_that_dies_leaves_the_run_to_this_process(optimizer):
    with jax.config.override("justjax_llvm_optimizations_in_process", 0):
        optimizer.parse(_loop(2), True)
        optimizer._helper.process.kill()
        optimizer._helper.process.wait()
        here = optimizer.stats.here
        module = optimizer.parse(_loop(3), True)  # done here, the helper being gone
        assert optimizer.stats.here == here + 1
        assert "fadd" in str(module)
        optimizer.parse(_loop(4), True)  # a new helper
        assert optimizer._helper.process is not None


def test_ir_that_does_not_verify_raises_llvms_error_either_way(optimizer):
    broken = _loop(1).replace("%z = fadd float %y, 1.0", "%z = fadd float %q, 1.0")
    for share in (-1, 0):
        with jax.config.override("justjax_llvm_optimizations_in_process", share), \
                pytest.raises(RuntimeError, match="use of undefined value"):
            optimizer.parse(broken, True)


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_optimizing_in_helpers_does_not_grow_this_process(optimizer):
    # In this process each run keeps ~70 KB (llvmlite's leak): 300 runs, ~20 MB.
    with jax.config.override("justjax_llvm_optimizations_in_process", 0):
        for k in range(10):
            optimizer.parse(_loop(k), True)
        gc.collect()
        start = _rss_mb()
        for k in range(300):
            optimizer.parse(_loop(k + 10), True)
        gc.collect()
        assert _rss_mb() - start < 6
