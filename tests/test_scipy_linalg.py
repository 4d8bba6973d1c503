"""`justjax.scipy.linalg`: values against SciPy in float32 and float64, result dtypes, jit
against eager, vmap against a loop, derivatives against finite differences, JAX's errors, and
(needs_jax) values against real JAX 0.10.2.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np
import pytest
import scipy.linalg

import justjax
import justjax.numpy as jnp
import justjax.scipy.linalg as jsl
from justjax.test_util import check_grads
from tests.harness import x64_mode

_RNG = np.random.default_rng(20251128)
A = _RNG.normal(size=(4, 4)) + 4 * np.eye(4)
SPD = A @ A.T + np.eye(4)
B = _RNG.normal(size=(4, 2))
V = _RNG.normal(size=4)
RECT = _RNG.normal(size=(5, 3)) + np.eye(5, 3) * 3
# Well separated real eigenvalues 1..4 (sqrtm, funm, logm-like functions are smooth there).
SEPARATED = np.triu(0.3 * _RNG.normal(size=(4, 4)), 1) + np.diag([1.0, 2.0, 3.0, 4.0])
SEPARATED = SEPARATED + 0.05 * _RNG.normal(size=(4, 4))
# A real matrix with a complex-conjugate eigenvalue pair.
ROTATION = np.array([[0., -2., 1.], [2., 0., 3.], [0., 0., 1.]])


def _phase(v: np.ndarray) -> np.ndarray:
    """Columns scaled to a non-negative first row (eigen/singular vectors' sign freedom)."""
    return v * np.sign(v[..., :1, :])


def _sp_lu(a):
    return scipy.linalg.lu(a)


# name -> (justjax function, SciPy reference, arguments). Each reference is what SciPy returns
# for the same arguments (up to gauge: signs of vectors are fixed by the functions below).
CASES: dict[str, tuple[Callable, Callable, tuple]] = {
    "cholesky": (jsl.cholesky, scipy.linalg.cholesky, (SPD,)),
    "cholesky_lower": (lambda a: jsl.cholesky(a, lower=True),
                       lambda a: scipy.linalg.cholesky(a, lower=True), (SPD,)),
    "cho_solve_vector": (lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b),
                         lambda a, b: scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b),
                         (SPD, V)),
    "cho_solve_lower": (lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=True), b),
                        lambda a, b: scipy.linalg.cho_solve(
                            scipy.linalg.cho_factor(a, lower=True), b), (SPD, B)),
    "det": (jsl.det, scipy.linalg.det, (A,)),
    "inv": (jsl.inv, scipy.linalg.inv, (A,)),
    "solve": (jsl.solve, scipy.linalg.solve, (A, B)),
    "solve_pos": (lambda a, b: jsl.solve(a, b, assume_a="pos"),
                  lambda a, b: scipy.linalg.solve(a, b, assume_a="pos"), (SPD, B)),
    "solve_pos_vector": (lambda a, b: jsl.solve(a, b, assume_a="pos", lower=True),
                         lambda a, b: scipy.linalg.solve(a, b, assume_a="pos", lower=True),
                         (SPD, V)),
    "solve_sym": (lambda a, b: jsl.solve(a, b, assume_a="sym"),
                  lambda a, b: scipy.linalg.solve(a, b, assume_a="sym"), (SPD, V)),
    "solve_triangular": (jsl.solve_triangular, scipy.linalg.solve_triangular,
                         (np.triu(A), B)),
    "solve_triangular_lower_T": (
        lambda a, b: jsl.solve_triangular(a, b, trans="T", lower=True),
        lambda a, b: scipy.linalg.solve_triangular(a, b, trans="T", lower=True),
        (np.tril(A), V)),
    "solve_triangular_unit_C": (
        lambda a, b: jsl.solve_triangular(a, b, trans=2, unit_diagonal=True),
        lambda a, b: scipy.linalg.solve_triangular(a, b, trans=2, unit_diagonal=True),
        (np.triu(A), B)),
    "lu": (jsl.lu, _sp_lu, (A,)),
    "lu_rectangular": (jsl.lu, _sp_lu, (RECT,)),
    "lu_wide": (jsl.lu, _sp_lu, (RECT.T,)),
    "lu_permute_l": (lambda a: jsl.lu(a, permute_l=True),
                     lambda a: scipy.linalg.lu(a, permute_l=True), (A,)),
    "lu_factor": (jsl.lu_factor, scipy.linalg.lu_factor, (A,)),
    "lu_solve": (lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b),
                 lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b), (A, B)),
    "lu_solve_trans1": (lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=1),
                        lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b,
                                                           trans=1), (A, V)),
    "qr": (jsl.qr, scipy.linalg.qr, (A,)),
    "qr_economic": (lambda a: jsl.qr(a, mode="economic"),
                    lambda a: scipy.linalg.qr(a, mode="economic"), (RECT,)),
    "qr_r": (lambda a: jsl.qr(a, mode="r"), lambda a: scipy.linalg.qr(a, mode="r"), (RECT,)),
    "qr_pivoting": (lambda a: jsl.qr(a, pivoting=True),
                    lambda a: scipy.linalg.qr(a, pivoting=True), (A,)),
    "qr_multiply_right": (lambda a, c: jsl.qr_multiply(a, c),
                          lambda a, c: scipy.linalg.qr_multiply(a, c), (RECT, B.T[:, :1] @ np.ones((1, 5)))),
    "qr_multiply_left": (lambda a, c: jsl.qr_multiply(a, c, mode="left"),
                         lambda a, c: scipy.linalg.qr_multiply(a, c, mode="left"),
                         (RECT, B[:3])),
    "qr_multiply_vector_conjugate": (
        lambda a, c: jsl.qr_multiply(a, c, conjugate=True),
        lambda a, c: scipy.linalg.qr_multiply(a, c, conjugate=True), (A, V)),
    "svd_values": (lambda a: jsl.svd(a, compute_uv=False),
                   lambda a: scipy.linalg.svd(a, compute_uv=False), (RECT,)),
    "svd": (lambda a: _svd_fixed(jsl.svd(a, full_matrices=False)),
            lambda a: _svd_fixed(scipy.linalg.svd(a, full_matrices=False)), (RECT,)),
    "eigh": (lambda a: _eigh_fixed(jsl.eigh(a)), lambda a: _eigh_fixed(scipy.linalg.eigh(a)),
             (SPD,)),
    "eigh_upper_values": (lambda a: jsl.eigh(a, lower=False, eigvals_only=True),
                          lambda a: scipy.linalg.eigh(a, lower=False, eigvals_only=True),
                          (SPD,)),
    "schur_symmetric": (lambda a: np.abs(jsl.schur(a)[0]),
                        lambda a: np.abs(scipy.linalg.schur(a)[0]), (SPD,)),
    "schur_reconstructs": (lambda a: _reconstruct_schur(*jsl.schur(a)), lambda a: a, (A,)),
    "schur_complex": (lambda a: np.sort(np.abs(np.diag(jsl.schur(a, output="complex")[0]))),
                      lambda a: np.sort(np.abs(np.diag(
                          scipy.linalg.schur(a, output="complex")[0]))), (ROTATION,)),
    "rsf2csf": (lambda a: _reconstruct_schur(*jsl.rsf2csf(*jsl.schur(a))), lambda a: a,
                (ROTATION,)),
    "rsf2csf_triangular": (lambda a: np.tril(np.abs(jsl.rsf2csf(*jsl.schur(a))[0]), -1),
                           lambda a: np.zeros_like(a), (ROTATION,)),
    "hessenberg": (jsl.hessenberg, scipy.linalg.hessenberg, (A,)),
    "hessenberg_q": (lambda a: jsl.hessenberg(a, calc_q=True),
                     lambda a: scipy.linalg.hessenberg(a, calc_q=True), (A,)),
    "expm": (jsl.expm, scipy.linalg.expm, (0.3 * A,)),
    "expm_tiny": (jsl.expm, scipy.linalg.expm, (0.001 * A,)),
    "expm_scaled": (jsl.expm, scipy.linalg.expm, (2.0 * SEPARATED,)),
    "expm_upper_triangular": (lambda a: jsl.expm(a, upper_triangular=True), scipy.linalg.expm,
                              (np.triu(0.5 * A),)),
    "expm_frechet": (jsl.expm_frechet, scipy.linalg.expm_frechet, (0.3 * A, 0.1 * SPD)),
    "expm_frechet_only": (lambda a, e: jsl.expm_frechet(a, e, compute_expm=False),
                          lambda a, e: scipy.linalg.expm_frechet(a, e, compute_expm=False),
                          (0.3 * A, 0.1 * SPD)),
    "sqrtm": (jsl.sqrtm, scipy.linalg.sqrtm, (SPD,)),
    "sqrtm_nonsymmetric": (jsl.sqrtm, scipy.linalg.sqrtm, (SEPARATED,)),
    "funm_exp": (lambda a: jsl.funm(a, jnp.exp), lambda a: scipy.linalg.funm(a, np.exp),
                 (0.5 * SEPARATED,)),
    "funm_rotation": (lambda a: jsl.funm(a, jnp.sin), lambda a: scipy.linalg.funm(a, np.sin),
                      (0.5 * ROTATION,)),
    "polar": (jsl.polar, scipy.linalg.polar, (RECT,)),
    "polar_square": (jsl.polar, scipy.linalg.polar, (A,)),
    "polar_left_wide": (lambda a: jsl.polar(a, side="left"),
                        lambda a: scipy.linalg.polar(a, side="left"), (RECT.T,)),
    "polar_svd_left": (lambda a: jsl.polar(a, side="left", method="svd"),
                       lambda a: scipy.linalg.polar(a, side="left"), (RECT,)),
    "solve_sylvester": (jsl.solve_sylvester, scipy.linalg.solve_sylvester,
                        (A, SPD[:3, :3], RECT[:4, :3])),
    "solve_sylvester_eigen": (lambda a, b, c: jsl.solve_sylvester(a, b, c, method="eigen"),
                              scipy.linalg.solve_sylvester, (SEPARATED, SPD[:3, :3],
                                                             RECT[:4, :3])),
    "eigh_tridiagonal": (lambda d, e: _eigh_fixed(jsl.eigh_tridiagonal(d, e)),
                         lambda d, e: _eigh_fixed(scipy.linalg.eigh_tridiagonal(d, e)),
                         (np.diag(A).copy(), np.diag(A, 1).copy())),
    "eigh_tridiagonal_select": (
        lambda d, e: jsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i",
                                          select_range=(1, 2)),
        lambda d, e: scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True, select="i",
                                                   select_range=(1, 2)),
        (np.diag(A).copy(), np.diag(A, 1).copy())),
    "block_diag": (jsl.block_diag, scipy.linalg.block_diag, (A[:2, :3], V[:2], np.ones((1, 1)))),
    "toeplitz": (jsl.toeplitz, scipy.linalg.toeplitz, (V, V[::-1])),
    "toeplitz_hermitian": (jsl.toeplitz, scipy.linalg.toeplitz, (V,)),
    "hankel": (jsl.hankel, scipy.linalg.hankel, (V, V[::-1])),
    "hankel_default": (jsl.hankel, scipy.linalg.hankel, (V,)),
    "circulant": (jsl.circulant, scipy.linalg.circulant, (V,)),
    "companion": (jsl.companion, scipy.linalg.companion, (V,)),
    "fiedler": (jsl.fiedler, scipy.linalg.fiedler, (V,)),
    "fiedler_companion": (jsl.fiedler_companion, scipy.linalg.fiedler_companion,
                          (np.arange(1.0, 7.0),)),
    "leslie": (jsl.leslie, scipy.linalg.leslie, (V, V[:3])),
    "convolution_matrix_full": (lambda a: jsl.convolution_matrix(a, 5),
                                lambda a: scipy.linalg.convolution_matrix(a, 5), (V[:3],)),
    "convolution_matrix_same": (lambda a: jsl.convolution_matrix(a, 5, "same"),
                                lambda a: scipy.linalg.convolution_matrix(a, 5, "same"),
                                (V[:3],)),
    "convolution_matrix_valid": (lambda a: jsl.convolution_matrix(a, 2, "valid"),
                                 lambda a: scipy.linalg.convolution_matrix(a, 2, "valid"),
                                 (V,)),
}

# Matrices of a given size: name -> (justjax, SciPy).
SIZED: dict[str, tuple[Callable, Callable]] = {
    "hilbert": (lambda: jsl.hilbert(4), lambda: scipy.linalg.hilbert(4)),
    "invhilbert": (lambda: jsl.invhilbert(4), lambda: scipy.linalg.invhilbert(4)),
    "pascal": (lambda: jsl.pascal(4), lambda: scipy.linalg.pascal(4)),
    "pascal_lower": (lambda: jsl.pascal(4, "lower"), lambda: scipy.linalg.pascal(4, "lower")),
    "invpascal_upper": (lambda: jsl.invpascal(4, "upper"),
                        lambda: scipy.linalg.invpascal(4, "upper")),
    "invpascal": (lambda: jsl.invpascal(4), lambda: scipy.linalg.invpascal(4)),
    "hadamard": (lambda: jsl.hadamard(8), lambda: scipy.linalg.hadamard(8)),
    "helmert": (lambda: jsl.helmert(5), lambda: scipy.linalg.helmert(5)),
    "helmert_full": (lambda: jsl.helmert(5, full=True), lambda: scipy.linalg.helmert(5, True)),
    "dft": (lambda: jsl.dft(5), lambda: scipy.linalg.dft(5)),
    "dft_sqrtn": (lambda: jsl.dft(4, "sqrtn"), lambda: scipy.linalg.dft(4, "sqrtn")),
}


def _svd_fixed(usv):
    u, s, vh = (np.asarray(x) for x in usv)
    sign = np.sign(u[:1, :])
    return u * sign, s, vh * sign.T


def _eigh_fixed(wv):
    w, v = (np.asarray(x) for x in wv)
    return w, _phase(v)


def _reconstruct_schur(t, z):
    t, z = np.asarray(t), np.asarray(z)
    return z @ t @ np.conj(z.T)


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _compare(actual: Any, expected: Any, rtol: float, atol: float, name: str) -> None:
    actual, expected = _as_tuple(actual), _as_tuple(expected)
    assert len(actual) == len(expected), name
    for got, want in zip(actual, expected, strict=True):
        got, want = np.asarray(got), np.asarray(want)
        if want.dtype.kind in "iu" and got.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want, err_msg=name)
            continue
        np.testing.assert_allclose(got.astype(complex), want.astype(complex), rtol=rtol,
                                   atol=atol, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_against_scipy(name: str) -> None:
    fun, reference, args = CASES[name]
    with x64_mode(True):
        result = fun(*[np.asarray(a) for a in args])
    _compare(result, reference(*args), 1e-8, 1e-8, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_against_scipy(name: str) -> None:
    fun, reference, args = CASES[name]
    args32 = [np.asarray(a, np.float32) for a in args]
    result = fun(*args32)
    for leaf in _as_tuple(result):
        if hasattr(leaf, "dtype") and np.asarray(leaf).dtype.kind in "fc":
            assert np.asarray(leaf).dtype in (np.float32, np.complex64), name
    _compare(result, reference(*args), 3e-4, 3e-4, name)


@pytest.mark.parametrize("name", sorted(SIZED))
def test_sized_matrices_against_scipy(name: str) -> None:
    fun, reference = SIZED[name]
    # lgamma-based binomials (as JAX computes them) carry float32 rounding.
    _compare(fun(), reference(), 2e-5, 2e-4, name)


JIT_CASES = ["cholesky", "cho_solve_lower", "solve_pos", "lu", "lu_solve", "qr_pivoting",
             "qr_multiply_left", "expm", "expm_frechet", "sqrtm", "funm_exp", "polar",
             "solve_sylvester", "eigh_tridiagonal_select", "hessenberg_q", "toeplitz",
             "block_diag", "convolution_matrix_same"]


@pytest.mark.parametrize("name", JIT_CASES)
def test_jit_matches_eager(name: str) -> None:
    fun, _, args = CASES[name]
    args32 = [np.asarray(a, np.float32) for a in args]
    _compare(justjax.jit(fun)(*args32), fun(*args32), 1e-5, 1e-5, name)


VMAP_CASES = {
    "cholesky": (jsl.cholesky, SPD),
    "solve_pos": (lambda a: jsl.solve(a, a[:, :2], assume_a="pos"), SPD),
    "lu_solve": (lambda a: jsl.lu_solve(jsl.lu_factor(a), a[:, 0]), A),
    "expm": (jsl.expm, 0.3 * A),
    "sqrtm": (jsl.sqrtm, SPD),
    "polar": (lambda a: jsl.polar(a)[0], A),
    "solve_triangular": (lambda a: jsl.solve_triangular(a, a[:, :1], lower=True), np.tril(A)),
    "toeplitz": (lambda a: jsl.toeplitz(a[0], a[1]), A),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_matches_loop(name: str) -> None:
    fun, base = VMAP_CASES[name]
    batch = np.stack([base, base + 0.1 * np.eye(4), base + 0.2 * np.eye(4)]).astype(np.float32)
    batched = justjax.vmap(fun)(batch)
    looped = [fun(x) for x in batch]
    for k, leaf in enumerate(_as_tuple(batched)):
        expected = np.stack([np.asarray(_as_tuple(r)[k]) for r in looped])
        np.testing.assert_allclose(np.asarray(leaf), expected, rtol=2e-5, atol=2e-5,
                                   err_msg=name)


def test_batched_inputs_broadcast() -> None:
    """The vectorized functions take leading batch dimensions."""
    batch = np.stack([SPD, 2 * SPD]).astype(np.float32)
    np.testing.assert_allclose(jsl.cholesky(batch)[1], scipy.linalg.cholesky(2 * SPD),
                               rtol=1e-4)
    np.testing.assert_allclose(jsl.expm(0.01 * batch)[1], scipy.linalg.expm(0.02 * SPD),
                               rtol=1e-4)
    np.testing.assert_allclose(jsl.solve_triangular(np.triu(batch), B.astype(np.float32))[0],
                               scipy.linalg.solve_triangular(np.triu(SPD), B), rtol=1e-4)
    np.testing.assert_allclose(jsl.toeplitz(np.stack([V, 2 * V]))[1],
                               scipy.linalg.toeplitz(2 * V), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Derivatives, in float64 against finite differences.

GRAD_CASES: dict[str, tuple[Callable, tuple, int]] = {
    "cholesky": (lambda a: jsl.cholesky((a + a.T) / 2), (SPD,), 2),
    # The factor reads one triangle: a symmetric perturbation is what its derivative means.
    "cho_solve": (lambda a, b: jsl.cho_solve(jsl.cho_factor((a + a.T) / 2, lower=True), b),
                  (SPD, B), 2),
    "solve": (jsl.solve, (A, B), 2),
    "solve_pos": (lambda a, b: jsl.solve((a + a.T) / 2, b, assume_a="pos"), (SPD, B), 2),
    "solve_pos_vector": (lambda a, b: jsl.solve((a + a.T) / 2, b, assume_a="pos"), (SPD, V),
                         2),
    "solve_triangular": (lambda a, b: jsl.solve_triangular(a, b, lower=True),
                         (np.tril(A), B), 2),
    "lu_solve": (lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), (A, B), 1),
    "det": (jsl.det, (A,), 2),
    "inv": (jsl.inv, (A,), 2),
    "expm": (jsl.expm, (0.3 * A,), 2),
    "expm_scaled": (jsl.expm, (2.0 * SEPARATED,), 1),
    "expm_frechet": (lambda a, e: jsl.expm_frechet(a, e, compute_expm=False),
                     (0.3 * A, 0.1 * SPD), 1),
    "qr": (lambda a: jsl.qr(a, mode="economic"), (RECT,), 1),
    "svd_values": (lambda a: jsl.svd(a, compute_uv=False), (RECT,), 2),
    "eigh_values": (lambda a: jsl.eigh((a + a.T) / 2, eigvals_only=True), (SPD,), 2),
    "polar_svd": (lambda a: jsl.polar(a, method="svd"), (A,), 1),
    "toeplitz": (jsl.toeplitz, (V, V[::-1]), 2),
    "block_diag": (jsl.block_diag, (A[:2], V[:3]), 2),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients(name: str) -> None:
    fun, args, order = GRAD_CASES[name]
    with x64_mode(True):
        check_grads(fun, [np.asarray(a) for a in args], order=order, modes=("fwd", "rev"))


def test_solve_pos_differentiates_implicitly() -> None:
    """solve(assume_a='pos') is a custom_linear_solve: its jaxpr holds one, and the gradient
    in b solves with a again."""
    jaxpr = justjax.make_jaxpr(lambda a, b: jsl.solve(a, b, assume_a="pos"))(
        SPD.astype(np.float32), V.astype(np.float32))
    assert "custom_linear_solve" in str(jaxpr)
    grad = justjax.grad(lambda b: jsl.solve(SPD.astype(np.float32), b, assume_a="pos").sum())(
        V.astype(np.float32))
    np.testing.assert_allclose(grad, np.linalg.solve(SPD, np.ones(4)), rtol=1e-4)


# ---------------------------------------------------------------------------------------------
# Errors, with JAX 0.10.2's classes and messages.

ERRORS = [
    (lambda: jsl.solve(SPD, V, assume_a="x"), ValueError,
     "Expected assume_a to be one of ['gen', 'sym', 'her', 'pos']; got 'x'"),
    (lambda: jsl.solve_triangular(A, V, trans=3), ValueError, "Invalid 'trans' value 3"),
    (lambda: jsl.qr(A, mode="x"), ValueError, "Unsupported QR decomposition mode 'x'"),
    (lambda: jsl.schur(A, output="x"), ValueError,
     "Expected 'output' to be either 'real' or 'complex', got output='x'."),
    (lambda: jsl.eigh(SPD, SPD), NotImplementedError,
     "Only the b=None case of eigh is implemented"),
    (lambda: jsl.expm(np.ones((2, 3))), ValueError,
     "Expected A to be a (batched) square matrix, got A.shape=(2, 3)."),
    (lambda: jsl.sqrtm(SPD, blocksize=2), NotImplementedError,
     "Blocked version is not implemented yet."),
    (lambda: jsl.polar(V), ValueError, "The input `a` must be at least a 2-D array."),
    (lambda: jsl.polar(A, side="x"), ValueError,
     "The argument `side` must be either 'right' or 'left'."),
    (lambda: jsl.polar(RECT.T), NotImplementedError,
     "method='qdwh' only supports mxn matrices where m < n where side='right' and m >= n "
     "side='left', got (3, 5) with side='right'"),
    (lambda: jsl.polar(A, method="x"), ValueError, "Unknown polar decomposition method x."),
    (lambda: jsl.pascal(3, "x"), ValueError,
     "Expected kind to be on of: ['symmetric', 'lower', 'upper']; got x"),
    (lambda: jsl.invpascal(3, "x"), ValueError,
     "Expected kind to be one of: ['symmetric', 'lower', 'upper']; got x"),
    (lambda: jsl.hadamard(3), ValueError, "n must be a positive power of 2; got 3."),
    (lambda: jsl.dft(3, dtype=np.float32), ValueError,
     "dtype must be a complex floating-point type; got float32."),
    (lambda: jsl.dft(3, "x"), ValueError, "scale must be None, 'sqrtn', or 'n'; got 'x'."),
    (lambda: jsl.block_diag(np.ones((2, 2, 2))), ValueError,
     # block_diag is jitted, so JAX shows the tracer.
     "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got "
     "JitTracer(float32[2,2,2]) at argument 0."),
    (lambda: jsl.companion(np.ones(1)), ValueError,
     "The length of `a` along the last axis must be at least 2; got shape (1,)."),
    (lambda: jsl.leslie(V, V), ValueError,
     "Incorrect lengths for f and s. The length of s along the last axis must be one less "
     "than the length of f; got f shape (4,) and s shape (4,)."),
    (lambda: jsl.convolution_matrix(V, 0), ValueError, "n must be a positive integer; got 0."),
    (lambda: jsl.convolution_matrix(V, 2, "x"), ValueError,
     "mode must be one of 'full', 'valid', 'same'; got 'x'."),
    (lambda: jsl.qr_multiply(A, V, mode="x"), ValueError,
     "mode must be 'right' or 'left', got 'x'"),
    (lambda: jsl.qr_multiply(RECT, np.ones((2, 2)), mode="left"), ValueError,
     "Array shapes are not compatible for Q @ c operation: a has shape (5, 3) so Q has 3 "
     "columns, but c has 2 rows (expected 3)."),
    (lambda: jsl.eigh_tridiagonal(V, V[:3], select="v"), NotImplementedError,
     "eigh_tridiagonal(..., select='v') is not implemented"),
    (lambda: jsl.eigh_tridiagonal(V, V[:3], select="i"), ValueError,
     "for select='i', select_range must be specified."),
    (lambda: jsl.solve_sylvester(A, A, RECT), ValueError,
     "Incompatible shapes for Sylvester equation:\nA: (4, 4)\nB: (4, 4)\nC: (5, 3)"),
    (lambda: jsl.rsf2csf(A, RECT), ValueError, "Input 'Z' must be square."),
    (lambda: jsl.funm(V, jnp.exp), ValueError, "expected square array_like input"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jaxs(index: int) -> None:
    fun, error, message = ERRORS[index]
    with pytest.raises(error) as info:
        fun()
    assert str(info.value) == message


def test_eigh_tridiagonal_dtype_mismatch() -> None:
    with x64_mode(True):
        with pytest.raises(TypeError, match="diagonal and off-diagonal values must have same "
                                            "dtype, got float64 and float32"):
            jsl.eigh_tridiagonal(V, V[:3].astype(np.float32))


def test_jit_of_schur_conversions_and_tridiagonal_eigenvectors() -> None:
    t, z = justjax.jit(lambda a: jsl.rsf2csf(*jsl.schur(a)))(ROTATION.astype(np.float32))
    np.testing.assert_allclose(_reconstruct_schur(t, z), ROTATION, atol=1e-5)
    d, e = np.diag(A).astype(np.float32), np.diag(A, 1).astype(np.float32)
    w, v = justjax.jit(jsl.eigh_tridiagonal)(d, e)
    w_eager, v_eager = jsl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, w_eager, rtol=1e-6)
    np.testing.assert_allclose(np.abs(v), np.abs(v_eager), atol=1e-5)


def test_batched_1d_solves_warn_as_jax() -> None:
    with pytest.warns(FutureWarning, match="batched 1D solves with b.ndim > 1 are deprecated"):
        jsl.solve_triangular(np.stack([np.triu(A)] * 2), np.stack([V] * 2))


def test_expm_too_many_squarings_is_nan() -> None:
    out = jsl.expm(100.0 * np.eye(2, dtype=np.float32), max_squarings=2)
    assert np.all(np.isnan(np.asarray(out)))


def test_sylvester_with_shared_eigenvalue_is_nan() -> None:
    a = np.diag([1.0, 2.0]).astype(np.float32)
    out = jsl.solve_sylvester(a, -a, np.ones((2, 2), np.float32))
    assert np.all(np.isnan(np.asarray(out)))


def test_lax_qdwh_polar() -> None:
    u, h, num_iters, converged = justjax.lax.linalg.qdwh(RECT.astype(np.float32))
    np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), RECT, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(u).T @ np.asarray(u), np.eye(3), atol=1e-5)
    assert bool(converged) and int(num_iters) <= 10


# ---------------------------------------------------------------------------------------------
# needs_jax: values against real JAX.

def _jax_function(name: str) -> Any:
    return getattr(importlib.import_module("jax.scipy.linalg"), name)


JAX_COMPARISON = {
    "expm": (0.3 * A,), "sqrtm": (SEPARATED,), "polar": (RECT,), "hessenberg": (A,),
    "invhilbert": None, "pascal": None, "lu": (A,), "toeplitz": (V, V[::-1]),
    "solve_sylvester": (A, SPD[:3, :3], RECT[:4, :3]), "qr_multiply": (RECT, np.ones((2, 5))),
}


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(JAX_COMPARISON))
def test_values_match_real_jax(name: str) -> None:
    args = JAX_COMPARISON[name]
    if args is None:
        ours, theirs = getattr(jsl, name)(4), _jax_function(name)(4)
    else:
        args32 = [np.asarray(a, np.float32) for a in args]
        ours, theirs = getattr(jsl, name)(*args32), _jax_function(name)(*args32)
    _compare(ours, theirs, 1e-3, 1e-3, name)
