"""`lax.linalg`'s decompositions of general and structured matrices (eig, schur, hessenberg,
tridiagonal, tridiagonal_solve, cholesky_update, symmetric_product, ormqr): printed jaxprs and
StableHLO against JAX's (golden texts recorded from JAX 0.10.2 by
tools/record_linalg_golden.py), first-order derivatives (second order raises in JAX),
JAX's errors and the rules JAX lacks. Values, jit and vmap: the op records
(tests/records/linalg.py).
"""
from __future__ import annotations

import importlib
import json
import pathlib

import numpy as np
import pytest
import scipy.linalg

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import golden_cases, golden_jaxpr_tests, x64_mode

GOLDEN_PATH = pathlib.Path(__file__).parent / "golden" / "linalg_general.json"
GOLDEN: dict[str, str] = json.loads(GOLDEN_PATH.read_text()) if GOLDEN_PATH.exists() else {}

A = np.ones((3, 3), np.float32)
AC = np.ones((2, 3, 3), np.complex64)
V = np.ones(3, np.float32)


# ---------------------------------------------------------------------------------------------
# Golden texts: the jaxpr and the lowered module of each case.

def _both(jax, f, *args) -> str:
    return str(jax.make_jaxpr(f)(*args)) + "\n" + jax.jit(f).lower(*args).as_text()


def case_eig(jax, jnp):
    return _both(jax, lambda x: jax.lax.linalg.eig(x), A)


def case_eig_complex_right(jax, jnp):
    return _both(jax, lambda x: jax.lax.linalg.eig(x, compute_left_eigenvectors=False), AC)


def case_eigvals(jax, jnp):
    return _both(jax, jnp.linalg.eigvals, A)


def case_jnp_eig(jax, jnp):
    return _both(jax, jnp.linalg.eig, A)


def case_schur(jax, jnp):
    return _both(jax, lambda x: jax.lax.linalg.schur(x), A)


def case_schur_complex_no_vectors(jax, jnp):
    return _both(jax, lambda x: jax.lax.linalg.schur(x, compute_schur_vectors=False), AC)


def case_hessenberg(jax, jnp):
    return _both(jax, jax.lax.linalg.hessenberg, AC)


def case_tridiagonal_upper(jax, jnp):
    return _both(jax, lambda x: jax.lax.linalg.tridiagonal(x, lower=False), AC)


def case_tridiagonal_solve(jax, jnp):
    return _both(jax, jax.lax.linalg.tridiagonal_solve, V, V, V, A)


def case_tridiagonal_solve_perturbed(jax, jnp):
    return _both(jax, lambda *x: jax.lax.linalg.tridiagonal_solve(*x, perturb_singular=True),
                 V, V, V, A)


def case_cholesky_update(jax, jnp):
    return _both(jax, jax.lax.linalg.cholesky_update, A, V)


def case_symmetric_product(jax, jnp):
    return _both(jax, lambda a, c: jax.lax.linalg.symmetric_product(a, c, alpha=2.0, beta=3.0),
                 A, A)


def case_ormqr(jax, jnp):
    return _both(jax, lambda *x: jax.lax.linalg.ormqr(*x, left=False, transpose=True), A, V, A)


CASES = golden_cases(globals())


def _real_jax_modules() -> tuple:
    real_jax = pytest.importorskip("jax")
    importlib.import_module("jax.lax.linalg")  # a lazily loaded submodule
    return real_jax, pytest.importorskip("jax.numpy")


test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, GOLDEN, (justjax, jnp), _real_jax_modules)


# ---------------------------------------------------------------------------------------------
# Derivatives (first order: eig's jvp computes eigenvectors, whose own jvp raises without
# enable_eigvec_derivs, so second order raises in JAX too).

def _separated(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 0.3 * rng.normal(size=(n, n)) + np.diag(2.0 * np.arange(1, n + 1))


def test_eigvals_gradient_first_order() -> None:
    with x64_mode(True):
        a = _separated(4)
        check_grads(jnp.linalg.eigvals, (a,), order=1)
        # d(sum of eigenvalues) = d(trace): the identity.
        grad = justjax.grad(lambda x: jnp.linalg.eigvals(x).real.sum())(a)
        np.testing.assert_allclose(grad, np.eye(4), atol=1e-12)


def test_eig_vector_gradients_with_enable_eigvec_derivs() -> None:
    with x64_mode(True):
        a = _separated(3, seed=1)
        check_grads(lambda x: lax.linalg.eig(x, enable_eigvec_derivs=True), (a,), order=1)


def test_eig_vector_gradients_raise_without_opt_in() -> None:
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        justjax.grad(lambda x: jnp.linalg.eig(x)[1].real.sum())(_separated(3))


def test_tridiagonal_solve_is_linear_in_b() -> None:
    """Its transpose: vjp in b solves with A^T."""
    dl = np.array([0, 1, 2, 3.], np.float32)
    d = np.array([5, 6, 7, 8.], np.float32)
    du = np.array([1, 2, 3, 0.], np.float32)
    b = np.ones((4, 2), np.float32)
    a = np.diag(d) + np.diag(du[:-1], 1) + np.diag(dl[1:], -1)
    _, vjp = justjax.vjp(lambda rhs: lax.linalg.tridiagonal_solve(dl, d, du, rhs), b)
    ct = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(vjp(ct)[0], np.linalg.solve(a.T, ct), rtol=1e-5)


@pytest.mark.parametrize("name,fun", [
    ("schur", lambda x: lax.linalg.schur(x)[0]),
    ("hessenberg", lambda x: lax.linalg.hessenberg(x)[0]),
    ("tridiagonal", lambda x: lax.linalg.tridiagonal(x)[0]),
    ("symmetric_product", lambda x: lax.linalg.symmetric_product(x, x)),
])
def test_no_derivative_as_in_jax(name: str, fun) -> None:
    with pytest.raises(NotImplementedError,
                       match=f"Differentiation rule for '{name}' not implemented"):
        justjax.grad(lambda x: fun(x).sum())(A + np.eye(3, dtype=np.float32))


# ---------------------------------------------------------------------------------------------
# cholesky_update: no batching rule (as JAX), so its checks are here rather than a record.

def test_cholesky_update_values_and_jit() -> None:
    rng = np.random.default_rng(3)
    g = rng.normal(size=(4, 4))
    spd = g @ g.T + 4 * np.eye(4)
    r = np.linalg.cholesky(spd).T.astype(np.float32)
    w = rng.normal(size=4).astype(np.float32)
    expected = np.linalg.cholesky(spd + np.outer(w, w)).T
    np.testing.assert_allclose(lax.linalg.cholesky_update(r, w), expected, rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(justjax.jit(lax.linalg.cholesky_update)(r, w), expected,
                               rtol=1e-4, atol=1e-5)


def test_cholesky_update_has_no_batching_rule() -> None:
    with pytest.raises(NotImplementedError,
                       match="Batching rule for 'cholesky_update' not implemented"):
        justjax.vmap(lax.linalg.cholesky_update)(np.stack([A, A]), np.ones((2, 3), np.float32))


# ---------------------------------------------------------------------------------------------
# Errors, with JAX 0.10.2's classes and messages.

ERRORS = [
    (lambda: lax.linalg.eig(np.ones((2, 3), np.float32)), ValueError,
     "The input to eig must be a square matrix. Got shape (2, 3)."),
    (lambda: lax.linalg.hessenberg(np.ones((2, 3), np.float32)), ValueError,
     "Argument to Hessenberg reduction must have shape [..., n, n], got shape (2, 3)"),
    (lambda: lax.linalg.tridiagonal(np.ones((0, 0), np.float32)), ValueError,
     "The input to tridiagonal must be a square matrix. Got shape (0, 0)."),
    (lambda: lax.linalg.tridiagonal_solve(V, V, V[:2], A), TypeError,
     "tridiagonal_solve requires that all diagonal arguments have the same shape."),
    (lambda: lax.linalg.cholesky_update(A, V[:2]), ValueError,
     "Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the same "
     "size as input. Got shapes (3, 3) and (2,) instead"),
    (lambda: lax.linalg.schur(A, sort_eig_vals=True), NotImplementedError,
     "The sort feature of LAPACK's gees routine is not implemented."),
    (lambda: lax.linalg.eig(np.ones((3, 3), np.int32)), TypeError,
     "eig does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of floating, complexfloating."),
    (lambda: lax.linalg.cholesky_update(AC[0], V.astype(np.complex64)), TypeError,
     "cholesky_update does not accept dtype complex64 at position 0. Accepted dtypes at "
     "position 0 are subtypes of floating."),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jaxs(index: int) -> None:
    fun, error, message = ERRORS[index]
    with pytest.raises(error) as info:
        fun()
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# LAPACK's conventions the kernels keep.

def test_real_eig_returns_conjugate_pairs() -> None:
    rotation = np.array([[0., -2.], [2., 0.]], np.float32)
    w, vl, vr = lax.linalg.eig(rotation)
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)), [-2j, 2j], atol=1e-6)
    np.testing.assert_allclose(rotation @ vr, vr * w, atol=1e-6)
    np.testing.assert_allclose(np.conj(vl.T) @ rotation, w[:, None] * np.conj(vl.T), atol=1e-6)


def test_schur_of_real_matrix_is_quasi_triangular() -> None:
    a = np.array([[0., -2., 1.], [2., 0., 3.], [0., 0., 1.]], np.float32)
    t, z = lax.linalg.schur(a)
    expected_t, _ = scipy.linalg.schur(a)
    np.testing.assert_allclose(np.abs(t), np.abs(expected_t), atol=1e-5)
    np.testing.assert_allclose(z @ t @ z.T, a, atol=1e-5)


def test_perturbed_tridiagonal_solve_of_singular_matrix_is_finite() -> None:
    dl = np.array([0, 1, 0.], np.float32)
    d = np.array([1, 1, 1.], np.float32)
    du = np.array([1, 0, 0.], np.float32)
    b = np.ones((3, 1), np.float32)
    # A = [[1,1,0],[1,1,0],[0,0,1]] is singular: gtsv fails (NaNs), the perturbed solve not.
    assert np.all(np.isnan(lax.linalg.tridiagonal_solve(dl, d, du, b)))
    x = lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    assert np.all(np.isfinite(x))


def test_symmetric_product_symmetrize_output() -> None:
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    c = np.zeros((3, 3), np.float32)
    out = lax.linalg.symmetric_product(a, c, symmetrize_output=True)
    np.testing.assert_allclose(out, a @ a.T, rtol=1e-6)
