"""`lax.linalg` and `jnp.linalg`: printed jaxprs and StableHLO against JAX's (golden texts
recorded from JAX 0.10.2 by tools/record_linalg_golden.py), values against NumPy in 32 and
64 bits, jit against eager, derivatives against finite differences, vmap against loops,
JAX's errors, LAPACK's failure semantics, and (needs_jax) the lowered modules run by XLA.

The op records (tests/records/linalg.py) cover every primitive once more through the
shared checks of test_op_records.py.
"""
from __future__ import annotations

import ast
import importlib
import json
import pathlib
import zlib

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.hlo import ir, stablehlo_printer
from justjax._src.lax import linalg as linalg_internals
from justjax.test_util import check_grads
from tests.harness import golden_cases, golden_jaxpr_tests, x64_mode

GOLDEN_PATH = pathlib.Path(__file__).parent / "golden" / "linalg.json"
GOLDEN: dict[str, str] = json.loads(GOLDEN_PATH.read_text())

_RNG = np.random.default_rng(20240607)
A3 = (_RNG.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32)
A32 = _RNG.normal(size=(3, 2)).astype(np.float32)
A23 = _RNG.normal(size=(2, 3)).astype(np.float32)
B233 = (_RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
_G = _RNG.normal(size=(2, 4, 3, 3))
SPD3 = (A3 @ A3.T + np.eye(3)).astype(np.float32)
SPD_B = (_G @ np.swapaxes(_G, -1, -2) + 3 * np.eye(3)).astype(np.float32)
C2 = (SPD3[:2, :2] + 1j * np.array([[0, 0.5], [-0.5, 0]])).astype(np.complex64)


# ---------------------------------------------------------------------------------------------
# Golden texts: each case prints a jaxpr or a lowered module with the framework it is given.

def _lowered(jax, f, *args) -> str:
    return jax.jit(f).lower(*args).as_text()


def case_jaxpr_cholesky(jax, jnp):
    return jax.make_jaxpr(jax.lax.linalg.cholesky)(SPD3)


def case_jaxpr_eigh_batched(jax, jnp):
    return jax.make_jaxpr(jax.lax.linalg.eigh)(SPD_B)


def case_jaxpr_svd(jax, jnp):
    return jax.make_jaxpr(lambda x: jax.lax.linalg.svd(x, full_matrices=False))(A32)


def case_jaxpr_svd_values(jax, jnp):
    return jax.make_jaxpr(lambda x: jax.lax.linalg.svd(x, compute_uv=False))(A23)


def case_jaxpr_qr_pivoting(jax, jnp):
    return jax.make_jaxpr(lambda x: jax.lax.linalg.qr(x, pivoting=True))(A32)


def case_jaxpr_triangular_solve(jax, jnp):
    return jax.make_jaxpr(lambda a, b: jax.lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True, transpose_a=True))(A3, A32)


def case_jaxpr_triangular_solve_vector(jax, jnp):
    return jax.make_jaxpr(lambda a, b: jax.lax.linalg.triangular_solve(a, b, left_side=True))(
        A3, A3[0])


def case_jaxpr_lu(jax, jnp):
    return jax.make_jaxpr(jax.lax.linalg.lu)(A32)


def case_jaxpr_lu_pivots(jax, jnp):
    return jax.make_jaxpr(lambda p: jax.lax.linalg.lu_pivots_to_permutation(p, 4))(
        np.array([1, 2, 2], np.int32))


def case_jaxpr_householder_product(jax, jnp):
    return jax.make_jaxpr(jax.lax.linalg.householder_product)(A32, A32[0])


def case_jaxpr_jnp_cholesky_upper(jax, jnp):
    return jax.make_jaxpr(lambda x: jnp.linalg.cholesky(x, upper=True))(SPD3)


def case_jaxpr_jnp_qr_modes(jax, jnp):
    return jax.make_jaxpr(lambda x: (jnp.linalg.qr(x, mode="r"), jnp.linalg.qr(x, mode="raw"),
                                     jnp.linalg.qr(x, mode="complete")))(A32)


def case_jaxpr_jnp_eigh(jax, jnp):
    return jax.make_jaxpr(lambda x: (jnp.linalg.eigh(x, UPLO="U"), jnp.linalg.eigvalsh(x)))(SPD3)


def case_jaxpr_jnp_svd_hermitian(jax, jnp):
    return jax.make_jaxpr(lambda x: jnp.linalg.svd(x, hermitian=True))(SPD3)


def case_jaxpr_jnp_svdvals_rank(jax, jnp):
    return jax.make_jaxpr(lambda x: (jnp.linalg.svdvals(x), jnp.linalg.matrix_rank(x)))(A3)


def case_jaxpr_jnp_det_small(jax, jnp):
    return jax.make_jaxpr(lambda x: (jnp.linalg.det(x[:2, :2]), jnp.linalg.det(x)))(A3)


def case_jaxpr_jnp_slogdet_small(jax, jnp):
    return jax.make_jaxpr(lambda x: (jnp.linalg.slogdet(x[:1, :1]),
                                     jnp.linalg.slogdet(x[:2, :2])))(A3)


def case_jaxpr_jnp_norms(jax, jnp):
    def norms(x):
        return (jnp.linalg.norm(x), jnp.linalg.norm(x, axis=1), jnp.linalg.norm(x, 1),
                jnp.linalg.norm(x, -np.inf), jnp.linalg.norm(x, 2), jnp.linalg.norm(x, "nuc"),
                jnp.linalg.norm(x, 3, axis=0), jnp.linalg.norm(x, 0, axis=0, keepdims=True))
    return jax.make_jaxpr(norms)(A3)


def case_jaxpr_jnp_pinv(jax, jnp):
    return jax.make_jaxpr(jnp.linalg.pinv)(A32)


def case_jaxpr_jvp_cholesky(jax, jnp):
    return jax.make_jaxpr(lambda x, t: jax.jvp(jax.lax.linalg.cholesky, (x,), (t,)))(SPD3, A3)


def case_jaxpr_jvp_eigh(jax, jnp):
    return jax.make_jaxpr(lambda x, t: jax.jvp(jax.lax.linalg.eigh, (x,), (t,)))(SPD3, A3)


def case_jaxpr_jvp_svd(jax, jnp):
    return jax.make_jaxpr(lambda x, t: jax.jvp(
        lambda y: jax.lax.linalg.svd(y, full_matrices=False), (x,), (t,)))(A32, A32)


def case_jaxpr_jvp_qr(jax, jnp):
    return jax.make_jaxpr(lambda x, t: jax.jvp(jax.lax.linalg.qr, (x,), (t,)))(A23, A23)


def case_jaxpr_jvp_lu(jax, jnp):
    return jax.make_jaxpr(lambda x, t: jax.jvp(jax.lax.linalg.lu, (x,), (t,)))(A32, A32)


def case_jaxpr_grad_triangular_solve(jax, jnp):
    def loss(a, b):
        return jax.lax.linalg.triangular_solve(a, b, lower=True, left_side=True).sum()
    return jax.make_jaxpr(jax.grad(loss, argnums=(0, 1)))(A3, A32)


def case_jaxpr_grad_pinv_norm(jax, jnp):
    return jax.make_jaxpr(jax.grad(lambda x: jnp.linalg.pinv(x).sum() + jnp.linalg.norm(x, 2)))(
        A32)


def case_jaxpr_vmap_cholesky(jax, jnp):
    return jax.make_jaxpr(jax.vmap(jax.lax.linalg.cholesky, in_axes=1))(
        np.swapaxes(SPD_B[0], 0, 1))


def case_jaxpr_vmap_triangular_solve(jax, jnp):
    def solve(a, b):
        return jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=True)

    def solve_right(a, b):
        return jax.lax.linalg.triangular_solve(a, b, left_side=False, lower=True)
    return (jax.make_jaxpr(jax.vmap(solve, in_axes=(None, 0)))(A3, np.stack([A32] * 4)),
            jax.make_jaxpr(jax.vmap(solve_right, in_axes=(None, 0)))(A3, np.stack([A23] * 4)))


def case_jaxpr_x64_cholesky(jax, jnp):
    with jax.enable_x64(True):
        return jax.make_jaxpr(jnp.linalg.cholesky)(SPD3.astype(np.float64))


def case_hlo_cholesky_batched(jax, jnp):
    return _lowered(jax, jax.lax.linalg.cholesky, SPD_B)


def case_hlo_eigh(jax, jnp):
    return _lowered(jax, lambda x: jax.lax.linalg.eigh(x, symmetrize_input=False, lower=False),
                    SPD3)


def case_hlo_eigh_complex(jax, jnp):
    return _lowered(jax, jax.lax.linalg.eigh, C2)


def case_hlo_svd_modes(jax, jnp):
    def svds(x):
        return (jax.lax.linalg.svd(x), jax.lax.linalg.svd(x, full_matrices=False),
                jax.lax.linalg.svd(x, compute_uv=False),
                jax.lax.linalg.svd(x, algorithm=jax.lax.linalg.SvdAlgorithm.QR))
    return _lowered(jax, svds, A32)


def case_hlo_svd_empty(jax, jnp):
    return _lowered(jax, jax.lax.linalg.svd, np.zeros((0, 3), np.float32))


def case_hlo_qr(jax, jnp):
    def qrs(x, y):
        return (jax.lax.linalg.qr(x), jax.lax.linalg.qr(x, full_matrices=False),
                jax.lax.linalg.qr(y), jax.lax.linalg.qr(x, pivoting=True))
    return _lowered(jax, qrs, A32, A23)


def case_hlo_qr_batched(jax, jnp):
    return _lowered(jax, lambda x: jax.lax.linalg.qr(x, full_matrices=False), B233)


def case_hlo_triangular_solve(jax, jnp):
    def solves(a, b, c, h):
        return (jax.lax.linalg.triangular_solve(a, b, left_side=True, transpose_a=True,
                                                unit_diagonal=True),
                jax.lax.linalg.triangular_solve(c, c, lower=True, conjugate_a=True),
                jax.lax.linalg.triangular_solve(c, c, transpose_a=True, conjugate_a=True),
                jax.lax.linalg.triangular_solve(h, h, lower=True))
    return _lowered(jax, solves, B233, B233, C2, A3.astype(np.float16))


def case_hlo_lu(jax, jnp):
    return _lowered(jax, jax.lax.linalg.lu, A32)


def case_hlo_lu_batched(jax, jnp):
    return _lowered(jax, jax.lax.linalg.lu, B233)


def case_hlo_jnp_solve_parts(jax, jnp):
    return _lowered(jax, lambda x: (jnp.linalg.cholesky(x), jnp.linalg.norm(x, 2)), SPD3)


def case_hlo_x64_qr(jax, jnp):
    with jax.enable_x64(True):
        return _lowered(jax, jax.lax.linalg.qr, A32.astype(np.float64))


def case_hlo_many_batch_dims(jax, jnp):
    """Eleven batch dimensions: Shardy's factor names run past `z` (`z_1`, ...)."""
    return _lowered(jax, lambda x: jax.lax.linalg.svd(x, compute_uv=False),
                    np.ones((1,) * 11 + (2, 2), np.float32))


def _texts(case_output) -> str:
    if isinstance(case_output, tuple):
        return "\n".join(str(c) for c in case_output)
    return str(case_output)


CASES = {name: (lambda f: lambda *modules: _texts(f(*modules)))(fun)
         for name, fun in golden_cases(globals()).items()}


def _real_jax_modules() -> tuple:
    real_jax = pytest.importorskip("jax")
    importlib.import_module("jax.lax.linalg")  # a lazily loaded submodule
    return real_jax, pytest.importorskip("jax.numpy")


test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, GOLDEN, (justjax, jnp), _real_jax_modules)


# ---------------------------------------------------------------------------------------------
# Values against NumPy, in every precision; jit against eager.

def _sym(a):
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def _fix_phase(v, xp=np):
    first = v[..., :1, :]
    return v * (xp.conj(first) / xp.abs(first))


def _spd(rng, shape, dtype):
    a = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=shape)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _general(rng, shape, dtype):
    a = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=shape)
    k = min(shape[-2:])
    a[..., range(k), range(k)] += 2 * max(shape[-2:])
    return a.astype(dtype)


VALUE_CASES = {
    "cholesky": (_spd, lambda a: lax.linalg.cholesky(a), lambda a: np.linalg.cholesky(_sym(a))),
    "eigvals": (_spd, lambda a: lax.linalg.eigh(a)[1], lambda a: np.linalg.eigvalsh(_sym(a))),
    "eigvecs": (_spd, lambda a: _fix_phase(lax.linalg.eigh(a)[0], jnp),
                lambda a: _fix_phase(np.linalg.eigh(_sym(a))[1])),
    "svdvals": (_general, lambda a: lax.linalg.svd(a, compute_uv=False),
                lambda a: np.linalg.svd(a, compute_uv=False)),
    "svd_reconstruct": (_general, lambda a: _reconstruct(*lax.linalg.svd(a, full_matrices=False)),
                        lambda a: a),
    "qr": (_general, lambda a: lax.linalg.qr(a, full_matrices=False),
           lambda a: np.linalg.qr(a)),
    "det": (_general, jnp.linalg.det, np.linalg.det),
    "slogdet": (_general, jnp.linalg.slogdet, np.linalg.slogdet),
    "inv": (_general, jnp.linalg.inv, np.linalg.inv),
    "solve": (_general, lambda a: jnp.linalg.solve(a, a[..., :1]),
              lambda a: np.linalg.solve(a, a[..., :1])),
    "pinv": (_general, jnp.linalg.pinv, np.linalg.pinv),
    "norm_2": (_general, lambda a: jnp.linalg.norm(a, 2, axis=(-2, -1)),
               lambda a: np.linalg.norm(a, 2, axis=(-2, -1))),
}


def _reconstruct(u, s, vh):
    return (u * s[..., None, :].astype(u.dtype)) @ vh


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_against_numpy(name: str, shape: tuple, dtype: str) -> None:
    make, fun, reference = VALUE_CASES[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}{shape}{dtype}".encode()))
    with x64_mode(dtype in ("float64", "complex128")):
        a = make(rng, shape, np.dtype(dtype))
        got = fun(jnp.asarray(a))
        jitted = justjax.jit(fun)(jnp.asarray(a))
        want = reference(a.astype(np.complex128 if "complex" in dtype else np.float64))
        tol = 1e-10 if dtype in ("float64", "complex128") else 2e-4
        leaves = justjax.tree_util.tree_leaves
        wants = leaves(tuple(want) if isinstance(want, tuple) else want)
        for g, j, w in zip(leaves(got), leaves(jitted), wants, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)
            np.testing.assert_array_equal(np.asarray(g), np.asarray(j))


def test_result_dtypes() -> None:
    a = SPD3
    assert jnp.linalg.eigh(a).eigenvalues.dtype == np.float32
    assert lax.linalg.eigh(C2)[1].dtype == np.float32
    assert lax.linalg.svd(C2)[1].dtype == np.float32
    assert jnp.linalg.norm(C2).dtype == np.float32
    assert jnp.linalg.det(np.eye(3, dtype=np.int32)).dtype == np.float32
    assert lax.linalg.lu(a)[1].dtype == np.int32
    with x64_mode(True):
        assert jnp.linalg.inv(np.eye(3)).dtype == np.float64
        assert jnp.linalg.svd(np.eye(2, dtype=np.complex128))[1].dtype == np.float64
    assert jnp.linalg.inv(np.eye(3)).dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Derivatives in float64 (the op records check the plain outputs; these check the
# gauge-invariant functions of eigenvectors and singular vectors).

# Added to the eigh inputs: eigenvalues well apart, so that eigenvectors are smooth.
_SPREAD = np.diag([0.0, 3.0, 6.0])

GRAD_CASES = {
    "eigh_projector": (lambda a: (lambda v, w: v[:, :1] @ v[:, :1].T)(
        *lax.linalg.eigh(a + _SPREAD)), (3, 3)),
    "eigh_weighted": (lambda a: (lambda v, w: (v * w[..., None, :] ** 2) @ v.mT)(
        *lax.linalg.eigh(a + _SPREAD)), (2, 3, 3)),
    "svd_square_full": (lambda a: _reconstruct(*lax.linalg.svd(a)), (3, 3)),
    "svd_wide": (lambda a: (lambda u, s, vh: (u[:, :1] @ vh[:1] * s[0], s))(
        *lax.linalg.svd(a, full_matrices=False)), (2, 4)),
    "qr_full_tall": (lambda a: lax.linalg.qr(a, full_matrices=True), (4, 2)),
    "qr_wide_pivoting": (lambda a: lax.linalg.qr(a, pivoting=True, full_matrices=False)[:2],
                         (3, 4)),
    "lu_wide": (lambda a: lax.linalg.lu(a)[0], (3, 4)),
    "det_singular": (lambda a: jnp.linalg.det(jnp.asarray(a).at[0].set(a[1])), (4, 4)),
    "solve_batched_b": (lambda a: jnp.linalg.solve(a[0], a), (3, 3, 3)),
    "cholesky_of_gram": (lambda a: jnp.linalg.cholesky(a @ a.T), (3, 3)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_float64(name: str) -> None:
    fun, shape = GRAD_CASES[name]
    rng = np.random.default_rng(7)
    with x64_mode(True):
        a = _general(rng, shape, np.float64) / shape[-1]
        check_grads(fun, (a,), order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_svd_full_matrices_jvp_raises_as_jax() -> None:
    with pytest.raises(NotImplementedError,
                       match="Singular value decomposition JVP not implemented for full"):
        justjax.jvp(lax.linalg.svd, (A32,), (A32,))


def test_partial_eigh_jvp_raises_as_jax() -> None:
    with pytest.raises(NotImplementedError, match="Derivatives not defined for partial eigen"):
        justjax.jvp(lambda x: lax.linalg.eigh(x, subset_by_index=(0, 2)), (SPD3,), (SPD3,))


# ---------------------------------------------------------------------------------------------
# vmap: the triangular_solve batching rule in each of its branches, and batched decompositions
# under in_axes other than 0, against a Python loop.

def _loop(fun, args, in_axes):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes, strict=True) if ax is not None)
    outs = [fun(*[a if ax is None else np.take(a, i, axis=ax)
                  for a, ax in zip(args, in_axes, strict=True)]) for i in range(size)]
    return justjax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


VMAP_CASES = {
    "solve_left_b_only": (lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True,
                                                                   lower=True),
                          (A3, np.stack([A32] * 3, 1)), (None, 1)),
    "solve_right_b_only": (lambda a, b: lax.linalg.triangular_solve(a, b, transpose_a=True),
                           (A3, np.stack([A23] * 2, 2)), (None, 2)),
    "solve_a_only": (lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True),
                     (np.stack([A3, 2 * A3], 2), A32), (2, None)),
    "solve_both": (lambda a, b: lax.linalg.triangular_solve(a, b, unit_diagonal=True),
                   (B233, np.stack([A23, A23 + 1], 0)), (0, 0)),
    "eigh_axis1": (lax.linalg.eigh, (np.stack([SPD3, SPD3 + np.eye(3, dtype=np.float32)], 1),),
                   (1,)),
    "lu_axis2": (lax.linalg.lu, (np.stack([A3, A3.T], 2),), (2,)),
    "qr_axis_last": (lambda a: lax.linalg.qr(a, pivoting=True), (np.stack([A32, -A32], 2),), (2,)),
    "jnp_solve_mixed": (jnp.linalg.solve, (B233, A3[0]), (0, None)),
    "pivots": (lambda p: lax.linalg.lu_pivots_to_permutation(p, 3),
               (np.array([[0, 2, 2], [2, 2, 2]], np.int32),), (0,)),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_against_loop(name: str) -> None:
    fun, args, in_axes = VMAP_CASES[name]
    got = justjax.vmap(fun, in_axes=in_axes)(*args)
    want = _loop(fun, args, in_axes)
    for g, w in zip(justjax.tree_util.tree_leaves(got), justjax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# Errors: JAX's classes and messages.

ERROR_CASES = [
    (lambda: lax.linalg.cholesky(np.zeros((3,), np.float32), symmetrize_input=False), TypeError,
     "Input 0 to cholesky must have rank at least 2, but got shape=(3,)"),
    (lambda: lax.linalg.cholesky(np.zeros((3, 2), np.float32), symmetrize_input=False),
     ValueError, "The input to cholesky must be a square matrix. Got shape (3, 2)."),
    (lambda: lax.linalg.cholesky(np.zeros((3, 3), np.int32), symmetrize_input=False), TypeError,
     "cholesky does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of floating, complexfloating."),
    (lambda: lax.linalg.eigh(np.zeros((3, 2), np.float32), symmetrize_input=False), ValueError,
     "Argument to symmetric eigendecomposition must have shape [..., n, n], got shape (3, 2)"),
    (lambda: lax.linalg.triangular_solve(A3[:2], A3), ValueError,
     "The first input to triangular_solve must be a square matrix. Got shape (2, 3)."),
    (lambda: lax.linalg.triangular_solve(A3, A3[None]), TypeError,
     "All inputs to triangular_solve must have the same number of batch dimensions, but got "
     "[0, 1] batch dimensions for the inputs."),
    (lambda: lax.linalg.triangular_solve(A3, A3.astype(np.complex64)), TypeError,
     "lax.triangular_solve requires arguments to have the same dtypes, got float32, complex64."),
    (lambda: lax.linalg.triangular_solve(A3, A23, left_side=True), ValueError,
     "Incompatible shapes for arguments to triangular_solve: (3, 3) and (2, 3)."),
    (lambda: lax.linalg.householder_product(A23, A23[0]), ValueError,
     "The first argument to householder_product must have at least as many rows as columns, "
     "got shape (2, 3)"),
    (lambda: lax.linalg.householder_product(A32, A32[:, 0]), ValueError,
     "The second argument to householder_product must not have more rows than the minimum of "
     "the first argument's rows and columns."),
    (lambda: lax.linalg.lu_pivots_to_permutation(np.array([1, 2, 2], np.int32), 2), ValueError,
     "Output permutation size 2 has to exceed the trailing dimension of the pivots. Got pivots "
     "size 3"),
    (lambda: lax.linalg.lu_pivots_to_permutation(np.zeros(3, np.float32), 4), TypeError,
     "lu_pivots_to_permutation does not accept dtype float32 at position 0. Accepted dtypes at "
     "position 0 are subtypes of int32."),
    (lambda: lax.linalg.svd(A3, subset_by_index=(0, 2)), ValueError,
     "full_matrices and subset_by_index cannot both be set"),
    (lambda: lax.linalg.svd(A3, full_matrices=False, subset_by_index=(0, 2)),
     NotImplementedError, "subset_by_index not implemented for CPU and GPU"),
    (lambda: lax.linalg.eigh(SPD3, subset_by_index=(0, 2)), NotImplementedError,
     "subset_by_index not supported on CPU and GPU"),
    (lambda: lax.linalg.eigh(SPD3, implementation=lax.linalg.EighImplementation.JACOBI),
     NotImplementedError, "Jacobi implementation is not supported on CPU"),
    (lambda: lax.linalg.svd(A3, algorithm=lax.linalg.SvdAlgorithm.JACOBI), NotImplementedError,
     "The SVD Jacobi and Polar algorithms are not implemented on CPU."),
    (lambda: lax.linalg.cholesky(SPD3.astype(np.float16)), NotImplementedError,
     "Unsupported dtype float16."),
    (lambda: jnp.linalg.svd(np.zeros(3, np.float32)), TypeError,
     "Input 0 to svd must have rank at least 2, but got shape=(3,)"),
    (lambda: jnp.linalg.det(A32), ValueError,
     "Argument to _det() must have shape [..., n, n], got (3, 2)"),
    (lambda: jnp.linalg.inv(A32), ValueError,
     "Argument to inv must have shape [..., n, n], got (3, 2)."),
    (lambda: jnp.linalg.solve(A3, A23), ValueError,
     "inconsistent size for core dimension 'm': 2 vs 3 on vectorized function with "
     "excluded=frozenset() and signature='(m,m),(m,n)->(m,n)'"),
    (lambda: jnp.linalg.solve(A3, A3[0, :2]), ValueError,
     "inconsistent size for core dimension 'm': 2 vs 3 on vectorized function with "
     "excluded=frozenset() and signature='(m,m),(m)->(m)'"),
    (lambda: jnp.linalg.qr(A3, mode="x"), ValueError, "Unsupported QR decomposition mode 'x'"),
    (lambda: jnp.linalg.eigh(A3, UPLO="x"), ValueError,
     "UPLO must be one of None, 'L', or 'U', got x"),
    (lambda: jnp.linalg.norm(A3, ord="x"), ValueError, "Invalid order 'x' for matrix norm."),
    (lambda: jnp.linalg.norm(A3, ord="x", axis=0), ValueError,
     "Invalid order 'x' for vector norm."),
    (lambda: jnp.linalg.norm(B233, axis=(0, 1, 2)), ValueError,
     "Improper number of axes for norm: axis=(0, 1, 2). Pass one axis to compute a "
     "vector-norm, or two axes to compute a matrix-norm."),
    (lambda: jnp.linalg.slogdet(A32), ValueError,
     "Argument to slogdet() must have shape [..., n, n], got (3, 2)"),
    (lambda: jnp.linalg.slogdet(A3, method="x"), ValueError,
     "Unknown slogdet method 'x'. Supported methods are 'lu' (`None`), and 'qr'."),
    (lambda: lax.linalg.lu(np.zeros(3, np.float32)), TypeError,
     "Input 0 to lu must have rank at least 2, but got shape=(3,)"),
    (lambda: jnp.linalg.matrix_power(A3, 1.5), TypeError, "exponent must be an integer, got 1.5"),
    (lambda: jnp.linalg.cholesky([[1.0]]), TypeError,
     "jnp.linalg.cholesky requires ndarray or scalar arguments"),
]


@pytest.mark.parametrize("index", range(len(ERROR_CASES)))
def test_errors_are_jaxs(index: int) -> None:
    fun, error, message = ERROR_CASES[index]
    with pytest.raises(error) as info:
        fun()
    assert message in str(info.value)


# ---------------------------------------------------------------------------------------------
# LAPACK's failures, as JAX reports them: NaNs where `info` says so, nowhere else.

def test_cholesky_of_indefinite_matrix_is_nan() -> None:
    bad = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    for fun in (jnp.linalg.cholesky, lambda x: lax.linalg.cholesky(x, symmetrize_input=False),
                justjax.jit(jnp.linalg.cholesky)):
        np.testing.assert_array_equal(np.asarray(fun(bad)), [[np.nan, 0], [np.nan, np.nan]])


def test_cholesky_primitive_keeps_the_upper_triangle_of_its_input() -> None:
    x = np.array([[4.0, 7.0], [2.0, 3.0]], np.float32)
    np.testing.assert_allclose(np.asarray(lax.linalg.cholesky_p.bind(x)),
                               [[2.0, 7.0], [1.0, np.sqrt(2)]], rtol=1e-6)


def test_batched_failure_is_per_matrix() -> None:
    batch = np.stack([np.eye(2, dtype=np.float32), -np.eye(2, dtype=np.float32)])
    out = np.asarray(lax.linalg.cholesky(batch))
    np.testing.assert_array_equal(out[0], np.eye(2))
    assert np.isnan(out[1][np.tril_indices(2)]).all()


@pytest.mark.parametrize("fun", [lax.linalg.eigh, lax.linalg.svd, lax.linalg.qr])
def test_nan_input_gives_nan_results(fun) -> None:
    outs = fun(np.full((3, 3), np.nan, np.float32))
    assert all(np.isnan(np.asarray(o)).any() for o in outs)


def test_lu_of_singular_matrix_is_not_nan() -> None:
    lu_, pivots, perm = lax.linalg.lu(np.zeros((3, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(lu_), np.zeros((3, 3)))
    np.testing.assert_array_equal(np.asarray(pivots), [0, 1, 2])
    np.testing.assert_array_equal(np.asarray(perm), [0, 1, 2])
    sign, logdet = jnp.linalg.slogdet(np.zeros((4, 4), np.float32))
    assert float(sign) == 0.0 and float(logdet) == -np.inf


def test_lu_permutation_reorders_rows() -> None:
    lu_, _, perm = lax.linalg.lu(A32)
    lower = np.tril(np.asarray(lu_), -1)[:, :2] + np.eye(3, 2)
    upper = np.triu(np.asarray(lu_))[:2]
    np.testing.assert_allclose(A32[np.asarray(perm)], lower @ upper, rtol=1e-5, atol=1e-6)


def test_geqp3_with_leading_columns_matches_lapack_semantics() -> None:
    a = np.array([[1.0, 5.0, 0.1], [2.0, 6.0, 0.2], [3.0, 7.0, 0.4], [4.0, 8.0, 0.3]])
    with x64_mode(True):
        r, jpvt, taus = linalg_internals.geqp3(a, np.array([0, 0, 1], np.int32))
    order = np.asarray(jpvt) - 1
    assert order[0] == 2  # the marked column leads
    q = np.asarray(lax.linalg.householder_product(
        jnp.asarray(np.asarray(r), dtype=jnp.float32), jnp.asarray(np.asarray(taus), jnp.float32)))
    np.testing.assert_allclose(q @ np.triu(np.asarray(r))[:3], a[:, order], rtol=1e-4, atol=1e-4)


def test_zero_size_matrices() -> None:
    empty = np.zeros((0, 0), np.float32)
    assert lax.linalg.cholesky(empty).shape == (0, 0)
    u, s, vh = lax.linalg.svd(np.zeros((0, 3), np.float32))
    assert (u.shape, s.shape, vh.shape) == ((0, 0), (0,), (3, 3))
    np.testing.assert_array_equal(np.asarray(vh), np.eye(3))
    q, r = lax.linalg.qr(np.zeros((3, 0), np.float32))
    assert (q.shape, r.shape) == ((3, 3), (3, 0))
    assert float(jnp.linalg.det(empty)) == 1.0


# ---------------------------------------------------------------------------------------------
# The printer's custom-call attributes.

def test_custom_call_attributes_print_as_mlir() -> None:
    attribute = stablehlo_printer.attribute
    assert attribute(ir.IndexArray((1, 2, 0))) == "dense<[1, 2, 0]> : tensor<3xindex>"
    assert attribute(ir.IndexArray((0,))) == "dense<0> : tensor<1xindex>"
    assert attribute(ir.IndexArray(())) == "dense<> : tensor<0xindex>"
    assert attribute(ir.OutputOperandAlias((), 1)) == (
        "#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, "
        "operand_tuple_indices = []>")
    rule = ir.ShardingRule(((0, 1),), ((0, 2), (0,)), (5, 3, 3) + (2,) * 17)
    assert attribute(rule).startswith("#sdy.op_sharding_rule<([i, j])->([i, k], [i]) {i=5, j=3")
    assert attribute(rule).endswith("z=2, z_1=2, z_2=2}, custom>")


# ---------------------------------------------------------------------------------------------
# The public modules re-export exactly the implementations' names.

@pytest.mark.parametrize("public,privates", [
    ("justjax.lax.linalg", ["justjax._src.lax.linalg", "justjax._src.lax.linalg_qdwh"]),
    ("justjax.numpy.linalg", ["justjax._src.numpy.linalg", "justjax._src.numpy.linalg_extra"]),
])
def test_public_modules_reexport_all(public: str, privates: list[str]) -> None:
    module = importlib.import_module(public)
    tree = ast.parse(pathlib.Path(module.__file__).read_text())
    assert all(isinstance(node, (ast.ImportFrom, ast.Expr)) for node in tree.body)
    expected = {name for private in privates for name in importlib.import_module(private).__all__}
    exported = {alias.asname for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert exported == expected
    assert justjax.numpy.linalg is importlib.import_module("justjax.numpy.linalg")
    assert justjax.lax.linalg is importlib.import_module("justjax.lax.linalg")


# ---------------------------------------------------------------------------------------------
# needs_jax: the lowered modules run by XLA (with jaxlib's LAPACK kernels) give what the
# reference backend's kernels give.

XLA_CASES = {
    "cholesky": (lax.linalg.cholesky, (SPD_B,)),
    "eigh": (lambda x: lax.linalg.eigh(x)[1], (SPD_B,)),
    "svd": (lambda x: lax.linalg.svd(x, compute_uv=False), (B233,)),
    "qr": (lambda x: lax.linalg.qr(x, full_matrices=True), (A32,)),
    "qr_pivoting": (lambda x: lax.linalg.qr(x, pivoting=True), (A23,)),
    "lu": (lax.linalg.lu, (B233,)),
    "triangular_solve": (lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True),
                         (B233, B233)),
    "jnp_mix": (lambda x: (jnp.linalg.inv(x), jnp.linalg.slogdet(x),
                           jnp.linalg.norm(x, 2, axis=(-2, -1))), (B233,)),
}


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(XLA_CASES))
def test_lowered_modules_run_on_xla(name: str) -> None:
    xla_check = pytest.importorskip("tests.xla_check")
    pytest.importorskip("jax")
    fun, args = XLA_CASES[name]
    text = justjax.jit(fun).lower(*args).as_text()
    on_xla = xla_check.run(text, args)
    ours = justjax.tree_util.tree_leaves(justjax.jit(fun)(*args))
    assert len(on_xla) == len(ours)
    for x, y in zip(on_xla, ours, strict=True):
        np.testing.assert_allclose(x, np.asarray(y), rtol=1e-4, atol=1e-5)


def _real_jax_and_internals() -> tuple:
    real_jax = pytest.importorskip("jax")
    return real_jax, importlib.import_module("jax._src.lax.linalg")


@pytest.mark.needs_jax
@pytest.mark.parametrize("shape,jpvt", [((4, 3), [0, 0, 1]), ((5, 4), [1, 0, 0, 1]),
                                        ((3, 5), [0, 1, 0, 0, 1]), ((2, 4), [1, 1, 1, 0]),
                                        ((4, 4), [0, 0, 0, 0])])
def test_geqp3_matches_jax(shape: tuple, jpvt: list) -> None:
    """dgeqp3's leading columns are swapped to the front, reordering the free ones."""
    _, jax_linalg = _real_jax_and_internals()
    a = np.random.default_rng(len(jpvt)).normal(size=shape).astype(np.float32)
    want = jax_linalg.geqp3(a, np.array(jpvt, np.int32))
    got = linalg_internals.geqp3(a, np.array(jpvt, np.int32))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def _complex(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)


COMPLEX_JVP_CASES = {
    "cholesky": (lambda m: m.lax.linalg.cholesky, "spd"),
    "eigh_values": (lambda m: lambda x: m.lax.linalg.eigh(x)[1], "spd"),
    "svd_values": (lambda m: lambda x: m.lax.linalg.svd(x, compute_uv=False), "square"),
    "qr": (lambda m: m.lax.linalg.qr, "square"),
    "qr_wide": (lambda m: m.lax.linalg.qr, "wide"),
    "qr_full_tall": (lambda m: m.lax.linalg.qr, "tall"),
    "lu": (lambda m: lambda x: m.lax.linalg.lu(x)[0], "square"),
    "triangular_solve": (lambda m: lambda x: m.lax.linalg.triangular_solve(
        x, x, conjugate_a=True, transpose_a=True), "square"),
    "det": (lambda m: m.numpy.linalg.det, "square"),
    "slogdet": (lambda m: m.numpy.linalg.slogdet, "square"),
    "inv": (lambda m: m.numpy.linalg.inv, "square"),
    "pinv": (lambda m: m.numpy.linalg.pinv, "square"),
}


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(COMPLEX_JVP_CASES))
def test_complex_jvps_match_jax(name: str) -> None:
    real_jax, _ = _real_jax_and_internals()
    make, kind = COMPLEX_JVP_CASES[name]
    rng = np.random.default_rng(3)
    shape = {"spd": (3, 3), "square": (3, 3), "wide": (2, 4), "tall": (4, 2)}[kind]
    x, t = _complex(rng, shape), _complex(rng, shape)
    if kind == "spd":
        x = (x @ x.conj().T + 3 * np.eye(3)).astype(np.complex64)
    elif kind == "square":
        x = (x + 4 * np.eye(3)).astype(np.complex64)
    want = real_jax.tree.leaves(real_jax.jvp(make(real_jax), (x,), (t,)))
    got = justjax.tree_util.tree_leaves(justjax.jvp(make(justjax), (x,), (t,)))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-3, atol=1e-3)
