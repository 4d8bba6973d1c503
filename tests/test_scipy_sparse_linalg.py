"""`justjax.scipy.sparse.linalg` (cg, bicgstab, gmres): solutions against NumPy, matrices and
functions as operators, preconditioners, pytrees, complex systems, gradients through the
implicit (custom_linear_solve) derivative, jit and vmap, and JAX's errors."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy.sparse import linalg as sparse_linalg
from justjax.test_util import check_grads
from tests.harness import x64_mode

_RNG = np.random.default_rng(11)
N = 6
A = _RNG.normal(size=(N, N)) + N * np.eye(N)
SPD = A @ A.T / N + np.eye(N)
B = _RNG.normal(size=N)

SOLVERS = {
    "cg": (sparse_linalg.cg, SPD),
    "bicgstab": (sparse_linalg.bicgstab, A),
    "gmres": (sparse_linalg.gmres, A),
    "gmres_incremental": (lambda *a, **k: sparse_linalg.gmres(*a, solve_method="incremental",
                                                              **k), A),
    "gmres_restart2": (lambda *a, **k: sparse_linalg.gmres(*a, restart=2, **k), A),
    "gmres_incremental_restart2": (
        lambda *a, **k: sparse_linalg.gmres(*a, restart=2, solve_method="incremental", **k), A),
}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_matrix_operator(name: str) -> None:
    solver, matrix = SOLVERS[name]
    x, info = solver(matrix.astype(np.float32), B.astype(np.float32), tol=1e-6)
    np.testing.assert_allclose(x, np.linalg.solve(matrix, B), rtol=1e-4, atol=1e-5)
    if name.startswith("gmres"):
        assert int(info) == 0
    else:
        assert info is None


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_function_operator_float64(name: str) -> None:
    solver, matrix = SOLVERS[name]
    with x64_mode(True):
        x, _ = solver(lambda v: jnp.asarray(matrix) @ v, B, tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(matrix, B), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_preconditioner_and_initial_guess(name: str) -> None:
    solver, matrix = SOLVERS[name]
    diag = np.diag(matrix)
    with x64_mode(True):
        x, _ = solver(matrix, B, x0=np.ones(N), M=lambda v: v / diag, tol=1e-12)
        x_matrix, _ = solver(matrix, B, M=np.diag(1 / diag), tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(matrix, B), rtol=1e-9)
    np.testing.assert_allclose(x_matrix, np.linalg.solve(matrix, B), rtol=1e-9)


def test_maxiter_limits_the_iterations() -> None:
    x, _ = sparse_linalg.cg(SPD.astype(np.float32), B.astype(np.float32), maxiter=1)
    # One CG step from zero is the steepest-descent step.
    b = B.astype(np.float64)
    step = (b @ b) / (b @ SPD @ b) * b
    np.testing.assert_allclose(x, step, rtol=1e-4)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_pytree_operands(name: str) -> None:
    solver, _ = SOLVERS[name]
    b = {"a": jnp.ones(2), "b": jnp.arange(1.0, 4.0)}
    x, _ = solver(lambda v: {"a": 2 * v["a"], "b": 4 * v["b"]}, b)
    np.testing.assert_allclose(x["a"], [0.5, 0.5], rtol=1e-5)
    np.testing.assert_allclose(x["b"], [0.25, 0.5, 0.75], rtol=1e-5)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres", "gmres_incremental"])
def test_complex_systems(name: str) -> None:
    solver, matrix = SOLVERS[name]
    if name == "cg":
        # Hermitian positive definite.
        g = matrix + 0.3j * np.triu(np.ones((N, N)), 1)
        matrix = (g + np.conj(g.T)) / 2 + N * np.eye(N)
    else:
        matrix = matrix + 0.5j * _RNG.normal(size=(N, N))
    b = B + 1j * B[::-1]
    with x64_mode(True):
        x, _ = solver(matrix, b, tol=1e-12)
    assert np.asarray(x).dtype == np.complex128
    np.testing.assert_allclose(x, np.linalg.solve(matrix, b), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_gradients(name: str) -> None:
    """Reverse and forward mode through the implicit derivative, in the matrix and b."""
    solver, matrix = SOLVERS[name]

    def fun(m, b):
        if name == "cg":
            m = (m + m.T) / 2
        return solver(lambda v: m @ v, b, tol=1e-13, atol=0.0)[0]

    with x64_mode(True):
        check_grads(fun, (matrix, B), order=1, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_jit_and_vmap(name: str) -> None:
    solver, matrix = SOLVERS[name]
    m = matrix.astype(np.float32)
    bs = np.stack([B, 2 * B, -B]).astype(np.float32)
    batched = jax.vmap(lambda b: solver(m, b, tol=1e-6)[0])(bs)
    jitted = jax.jit(lambda b: solver(m, b, tol=1e-6)[0])(bs[0])
    for i in range(3):
        np.testing.assert_allclose(batched[i], np.linalg.solve(matrix, bs[i]), rtol=1e-4,
                                   atol=1e-5)
    np.testing.assert_allclose(jitted, np.linalg.solve(matrix, bs[0]), rtol=1e-4, atol=1e-5)


def test_gmres_info() -> None:
    """info is -1 where x is NaN, else 0; a NaN operator stops the restarts at once (the
    residual test fails), leaving x0: JAX 0.10.2 gives ([0, 0], 0) here too."""
    x, info = sparse_linalg.gmres(np.full((2, 2), np.nan, np.float32), np.ones(2, np.float32))
    np.testing.assert_array_equal(x, [0.0, 0.0])
    assert int(info) == 0 and info.dtype == np.int32
    _, info = sparse_linalg.gmres(np.eye(2, dtype=np.float32), np.ones(2, np.float32),
                                  x0=np.full(2, np.nan, np.float32))
    assert int(info) == -1


ERRORS = [
    (lambda: sparse_linalg.cg(np.ones((2, 3)), np.ones(2)), ValueError,
     "linear operator must be a square matrix, but has shape: (2, 3)"),
    (lambda: sparse_linalg.cg(SPD, B, x0=np.ones(3)), ValueError,
     "arrays in x0 and b must have matching shapes: [(3,)] vs [(6,)]"),
    (lambda: sparse_linalg.cg(SPD, B, x0=(B,)), ValueError,
     "x0 and b must have matching tree structure: PyTreeDef((*,)) vs PyTreeDef(*)"),
    (lambda: sparse_linalg.gmres(A, B, solve_method="x"), ValueError,
     "invalid solve_method x, must be either 'incremental' or 'batched'"),
    (lambda: sparse_linalg.cg("not an operator", B), TypeError,
     "linear operator must be either a function or ndarray: not an operator"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jaxs(index: int) -> None:
    fun, error, message = ERRORS[index]
    with pytest.raises(error) as info:
        fun()
    assert str(info.value) == message
