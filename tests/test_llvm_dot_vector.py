"""The vector loops of small float dots on the llvm backend (`kernels/dot_vector.py`):
which dots take them, their results against float64 NumPy on every tail of the vector
width, and results that do not depend on LLVM's optimization level."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
from justjax._src import backends
from justjax._src.backends.llvm.codegen import program  # noqa: F401  (before the kernels)
from justjax._src.backends.llvm.kernels import dot as kernels_dot
from justjax._src.backends.llvm.kernels import dot_vector
from justjax._src.backends.llvm.runtime import executable
from justjax._src.hlo import ir
from justjax._src.hlo.passes import optimize

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def _module(f: Callable[..., Any], *args: np.ndarray) -> ir.Module:
    x64 = any(a.dtype == F64 for a in args)
    with jax.config.override("jax_enable_x64", x64):
        return optimize.optimize(jax.jit(f).lower(*args).compiler_ir())


def _spec(lhs: tuple[int, ...], rhs: tuple[int, ...], contracting: tuple[tuple, tuple],
          batch: tuple[tuple, tuple] = ((), ()), dt: np.dtype = F32) -> kernels_dot.DotSpec:
    lt, rt = ir.TensorType(list(lhs), dt), ir.TensorType(list(rhs), dt)
    numbers = ir.DotDimensionNumbers(list(batch[0]), list(batch[1]), list(contracting[0]),
                                     list(contracting[1]))
    lfree = [d for d in range(len(lhs)) if d not in batch[0] + contracting[0]]
    rfree = [d for d in range(len(rhs)) if d not in batch[1] + contracting[1]]
    shape = ([lhs[d] for d in batch[0]] + [lhs[d] for d in lfree] + [rhs[d] for d in rfree])
    op = ir.Op("stablehlo.dot_general", [ir.Value(lt), ir.Value(rt)],
               [ir.Value(ir.TensorType(shape, dt))], {"dot_dimension_numbers": numbers})
    return kernels_dot.DotSpec.of(op)


def test_plans() -> None:
    """Vector-matrix and row-major-rhs products run as axpy loops, a column-major
    matrix times a vector as the transposed axpy, matrix-vector products with both
    operands contiguous along k as dot products (a vector times a transposed matrix
    transposed); large matrix products, matrix products contiguous along k, other dtypes
    and mixed dtypes are left to BLAS and the loop kernel."""
    vecmat = dot_vector.plan_vector_dot(_spec((128,), (128, 128), ((0,), (0,))))
    assert (vecmat.kind, vecmat.rows, vecmat.cols, vecmat.depth) == ("axpy", 1, 128, 128)
    matvec = dot_vector.plan_vector_dot(_spec((40, 128), (128,), ((1,), (0,))))
    assert (matvec.kind, matvec.rows, matvec.cols) == ("dot", 40, 1)
    transposed = dot_vector.plan_vector_dot(_spec((128, 40), (128,), ((0,), (0,))))
    assert (transposed.kind, transposed.x_is_lhs, transposed.cols) == ("axpy", False, 40)
    vec_rhs_t = dot_vector.plan_vector_dot(_spec((64,), (32, 64), ((0,), (1,))))
    assert (vec_rhs_t.kind, vec_rhs_t.rows, vec_rhs_t.cols, vec_rhs_t.x_is_lhs) == (
        "dot", 32, 1, False)
    assert dot_vector.plan_vector_dot(_spec((16, 64), (32, 64), ((1,), (1,)))) is None
    batched = dot_vector.plan_vector_dot(_spec((4, 8, 16), (4, 16, 8), ((2,), (1,)),
                                               ((0,), (0,))))
    assert batched.kind == "axpy" and batched.batch == (4,)
    assert dot_vector.plan_vector_dot(_spec((128, 128), (128, 128), ((1,), (0,)))) is None
    assert dot_vector.plan_vector_dot(
        _spec((8,), (8, 8), ((0,), (0,)), dt=np.dtype(np.int32))) is None


# (lhs shape, rhs shape, function): every tail of 8 and 16 lanes along the vector and the
# contracting dimension, batches, and the output fusion with its addend.
CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], Callable[..., Any]]] = {
    "vecmat_128": ((128,), (128, 128), lambda a, b: a @ b),
    "vecmat_tails": ((37,), (37, 45), lambda a, b: a @ b),
    "vecmat_narrow": ((200,), (200, 3), lambda a, b: a @ b),
    "matvec_128": ((128, 128), (128,), lambda a, b: a @ b),
    "matvec_k_tails": ((13, 33), (33,), lambda a, b: a @ b),
    "matvec_k_below_lanes": ((9, 5), (5,), lambda a, b: a @ b),
    "matvec_k_one_vector_more": ((6, 24), (24,), lambda a, b: a @ b),
    "matvec_transposed": ((50, 21), (50,), lambda a, b: a.T @ b),
    "matmul": ((19, 23), (23, 29), lambda a, b: a @ b),
    "vecmat_rhs_transposed": ((33,), (11, 33), lambda a, b: a @ b.T),
    "batched": ((3, 5, 17), (3, 17, 9), lambda a, b: a @ b),
    "batched_matvec_transposed": ((3, 20, 9), (3, 20),
                                  lambda a, b: np_or_jnp(a).einsum("bkm,bk->bm", a, b)),
    "batched_vec_rhs_transposed": ((3, 17), (3, 9, 17),
                                   lambda a, b: np_or_jnp(a).einsum("bk,bnk->bn", a, b)),
    "inner": ((70,), (70,), lambda a, b: a @ b),
    "vecmat_plus_bias": ((64,), (64, 40), lambda a, b: a @ b + b[0]),
    "tanh_rnn_step": ((128,), (128, 128), lambda a, b: np_or_jnp(a).tanh(a @ b + a)),
}


def np_or_jnp(x: Any) -> Any:
    return np if isinstance(x, np.ndarray) else jax.numpy


def _vector_program(module: ir.Module) -> executable.LLVMExecutable:
    exe = executable.LLVMExecutable(executable.prepare(module), prepared=True)
    assert "justjax_blas" not in exe.llvm_ir, "the dot went to BLAS"
    assert "llvm.fma.v" in exe.llvm_ir, "no vector loop"
    assert not exe.program.fallbacks
    return exe


@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name: str, dt: np.dtype) -> None:
    lhs, rhs, f = CASES[name]
    rng = np.random.default_rng(len(name))
    args = [rng.standard_normal(lhs).astype(dt), rng.standard_normal(rhs).astype(dt)]
    exe = _vector_program(_module(f, *args))
    got = np.asarray(exe.execute(args)[0])
    want = f(*(a.astype(np.float64) for a in args))
    depth = max(lhs[-1], lhs[-2] if len(lhs) > 1 else 0)
    # Each element is a sum of `depth` products: a few ULPs per term at most.
    scale = np.sqrt(depth) * float(np.max(np.abs(want), initial=1.0))
    tol = (np.finfo(dt).eps * 4) * scale
    assert got.dtype == dt
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


@pytest.mark.parametrize("name", ["vecmat_tails", "matvec_k_tails", "matmul", "batched",
                                  "tanh_rnn_step"])
def test_same_bits_at_every_optimization_level(name: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The sum order is in the IR: unoptimized and fully optimized code agree bit for
    bit."""
    lhs, rhs, f = CASES[name]
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(lhs).astype(F32), rng.standard_normal(rhs).astype(F32)]
    module = _module(f, *args)
    results = {}
    for threshold, level in ((0, 3), (1 << 62, 0)):
        monkeypatch.setattr(executable, "FAST_COMPILE_ELEMENTS", threshold)
        exe = _vector_program(module)
        assert exe.opt_level == level
        results[level] = np.asarray(exe.execute(args)[0])
    np.testing.assert_array_equal(results[0], results[3])


def test_large_products_still_use_blas() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((256, 256), np.float32), rng.standard_normal((256, 256),
                                                                             np.float32)
    exe = backends.get_backend("llvm").compile(_module(lambda x, y: x @ y, a, b))
    assert "justjax_blas_sgemm" in exe.llvm_ir
    np.testing.assert_allclose(np.asarray(exe.execute([a, b])[0]), a @ b, rtol=2e-4,
                               atol=2e-3)
