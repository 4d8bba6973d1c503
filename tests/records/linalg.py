"""Op records for `lax.linalg` and `jnp.linalg`, checked against NumPy / SciPy in float64.

Inputs are well conditioned (symmetric positive definite where a decomposition needs it,
diagonally dominant elsewhere), so results are smooth in the inputs and finite differences
mean something. Eigenvectors and singular vectors are defined up to a sign (a phase for
complex inputs), so the records return them normalized: first row real and non-negative.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

import justjax.numpy as jnp
from justjax import lax
from justjax._src.lax import linalg as linalg_internals
from tests.harness import C64, F32, OpRecord, widen

LINALG_TOL = {F32: 2e-4, C64: 2e-4}


def rand_matrix(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Normal entries plus n on the diagonal of the leading square block: well conditioned."""
    dtype = np.dtype(dtype)
    values = rng.normal(size=shape)
    if dtype.kind == "c":
        values = values + 1j * rng.normal(size=shape)
    if len(shape) >= 2:
        k = min(shape[-2:])
        values[..., range(k), range(k)] += max(shape[-2:])
    return values.astype(dtype)


def rand_triangular(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Small off-diagonal entries and a diagonal near 2n: triangles far from singular."""
    values = 0.5 * rand_matrix(rng, shape, dtype)
    n = shape[-1]
    values[..., range(n), range(n)] += n
    return values.astype(dtype)


def rand_spd(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Hermitian positive definite matrices with well separated eigenvalues."""
    a = rand_matrix(rng, shape, dtype).astype(np.complex128 if np.dtype(dtype).kind == "c"
                                              else np.float64)
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) / shape[-1]
    n = shape[-1]
    spd = spd + np.diag(np.arange(1, n + 1) * 2.0)
    return spd.astype(dtype)


def rand_rect(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Normal entries, well separated singular values (a full-rank rectangular matrix)."""
    values = rng.normal(size=shape)
    k = min(shape[-2:])
    values[..., range(k), range(k)] += 3.0 * np.arange(1, k + 1)
    if np.dtype(dtype).kind == "c":
        values = values + 0.5j * rng.normal(size=shape)
    return values.astype(dtype)


def _wide(fn):
    return lambda *args, **kw: fn(*[widen(np.asarray(a)) for a in args], **kw)


def _same(*dtypes: np.dtype) -> np.dtype:
    return np.dtype(dtypes[0])


def _real(dtype: np.dtype, *_: np.dtype) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dtype) in (F32, C64) else np.float64)


# ---------------------------------------------------------------------------------------------
# Gauge fixing, the same function for justjax and NumPy arrays.

def _phase_fix(v, xp):
    """Columns of `v` scaled so that their first entries are real and non-negative."""
    first = v[..., :1, :]
    if np.dtype(v.dtype).kind == "c":
        scale = xp.conj(first) / xp.abs(first)
    else:
        scale = xp.sign(first)
    return v * scale


def _eigh_fixed(a, xp, eigh):
    w, v = eigh(a)
    return w, _phase_fix(v, xp)


def _svd_fixed(a, xp, svd, full_matrices=False):
    u, s, vh = svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    # The sign of the i-th left and right vectors goes together: fix it on u.
    first = u[..., :1, :k]
    scale = (xp.conj(first) / xp.abs(first)) if np.dtype(u.dtype).kind == "c" else xp.sign(first)
    u_k = u[..., :, :k] * scale
    vh_k = vh[..., :k, :] * xp.swapaxes(xp.conj(scale), -1, -2)
    return u_k, s, vh_k


def _lax_eigh(a):
    v, w = lax.linalg.eigh(a)
    return w, v


def _np_eigh(a):
    w, v = np.linalg.eigh(a)
    return w, v


def _sym(a):
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


# ---------------------------------------------------------------------------------------------
# NumPy / SciPy references.

def _np_triangular_solve(a, b, left_side=False, lower=False, transpose_a=False,
                         conjugate_a=False, unit_diagonal=False):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        eye = np.eye(t.shape[-1], dtype=bool)
        t = np.where(eye, 1, t)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if conjugate_a:
        t = np.conj(t)
    if left_side:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _np_lu(a):
    lu, piv = scipy.linalg.lu_factor(a)
    perm = np.arange(a.shape[0])
    for i, p in enumerate(piv):
        perm[[i, p]] = perm[[p, i]]
    return lu, piv.astype(np.int32), perm.astype(np.int32)


def _np_pivots(pivots, size):
    perm = np.arange(size)
    for i, p in enumerate(pivots):
        perm[[i, p]] = perm[[p, i]]
    return perm.astype(np.int32)


def _np_qr(a, full_matrices):
    return np.linalg.qr(a, mode="complete" if full_matrices else "reduced")


def _lu_factor_only(x):
    return lax.linalg.lu(x)[0]


def _triangular(**params):
    return lambda a, b: lax.linalg.triangular_solve(a, b, **params)


def _triangular_np(**params):
    return _wide(lambda a, b: _np_triangular_solve(a, b, **params))


# ---------------------------------------------------------------------------------------------
# Records.

def _lax_records() -> list[OpRecord]:
    tol = LINALG_TOL
    records = [
        OpRecord("linalg_cholesky", lax.linalg.cholesky,
                 _wide(lambda a: np.linalg.cholesky(_sym(a))), [[(3, 3)], [(2, 4, 4)]],
                 (F32, C64), rand_spd, tol=tol),
        OpRecord("linalg_cholesky_lower_only",
                 lambda a: lax.linalg.cholesky(a, symmetrize_input=False),
                 _wide(lambda a: np.linalg.cholesky(np.tril(a) + np.conj(np.tril(a, -1)).T)),
                 # JAX's derivative assumes a symmetric tangent, which perturbing only
                 # the lower triangle is not.
                 [[(4, 4)]], (F32,), rand_spd, tol=tol, differentiable=False),
        OpRecord("linalg_eigh", lambda a: _eigh_fixed(a, jnp, _lax_eigh),
                 _wide(lambda a: _eigh_fixed(_sym(a), np, _np_eigh)), [[(3, 3)], [(2, 4, 4)]],
                 (F32, C64), rand_spd, tol=tol, expected_dtype=lambda d: (_real(d), d)),
        OpRecord("linalg_svd", lambda a: _svd_fixed(a, jnp, jnp.linalg.svd),
                 _wide(lambda a: _svd_fixed(a, np, np.linalg.svd)),
                 [[(3, 3)], [(4, 2)], [(2, 2, 3)]], (F32, C64), rand_rect, tol=tol,
                 expected_dtype=lambda d: (d, _real(d), d)),
        OpRecord("linalg_svd_values",
                 lambda a: lax.linalg.svd(a, compute_uv=False),
                 _wide(lambda a: np.linalg.svd(a, compute_uv=False)),
                 [[(3, 4)], [(2, 3, 3)]], (F32, C64), rand_rect, tol=tol,
                 expected_dtype=_real),
        OpRecord("linalg_svd_full_values_only",
                 lambda a: lax.linalg.svd(a, full_matrices=True)[1],
                 _wide(lambda a: np.linalg.svd(a, compute_uv=False)), [[(4, 2)]], (F32,),
                 rand_rect, tol=tol, differentiable=False),
    ]
    for full in (False, True):
        records.append(OpRecord(
            f"linalg_qr_full{int(full)}",
            lambda a, f=full: lax.linalg.qr(a, full_matrices=f),
            _wide(lambda a, f=full: _np_qr(a, f)),
            [[(3, 3)], [(4, 2)], [(2, 4)], [(2, 3, 2)]], (F32, C64), rand_rect, tol=tol))
    records += [
        OpRecord("linalg_qr_pivoting",
                 lambda a: lax.linalg.qr(a, pivoting=True, full_matrices=False),
                 _wide(lambda a: scipy.linalg.qr(a, pivoting=True, mode="economic")),
                 [[(4, 3)], [(3, 4)]], (F32,), rand_rect, tol=tol,
                 expected_dtype=lambda d: (d, d, np.dtype(np.int32))),
        OpRecord("linalg_lu", lax.linalg.lu, _wide(_np_lu), [[(3, 3)], [(4, 3)], [(3, 5)]],
                 (F32, C64), rand_matrix, tol=tol, differentiable=False,
                 expected_dtype=lambda d: (d, np.dtype(np.int32), np.dtype(np.int32))),
        OpRecord("linalg_lu_factor", _lu_factor_only, _wide(lambda a: _np_lu(a)[0]),
                 [[(3, 3)], [(4, 3)], [(2, 4)]], (F32,), rand_matrix, tol=tol),
        OpRecord("linalg_lu_pivots_to_permutation",
                 lambda p: lax.linalg.lu_pivots_to_permutation(p, 5),
                 lambda p: _np_pivots(p, 5), [[(3,)], [(5,)]], (np.dtype(np.int32),),
                 lambda rng, shape, dtype: rng.integers(np.arange(shape[0]), 5).astype(dtype),
                 differentiable=False),
        OpRecord("linalg_householder_product",
                 lambda a: lax.linalg.householder_product(*linalg_internals.geqrf(a)),
                 _wide(lambda a: np.linalg.qr(a)[0]), [[(4, 3)], [(3, 3)]], (F32, C64),
                 rand_rect, tol=tol, differentiable=False),
        OpRecord("linalg_geqp3",
                 lambda a: linalg_internals.geqp3(a, jnp.zeros(a.shape[-1], jnp.int32))[1],
                 _wide(lambda a: scipy.linalg.qr(a, pivoting=True)[2].astype(np.int32) + 1),
                 [[(4, 3)]], (F32,), rand_rect, differentiable=False,
                 expected_dtype=lambda d: np.dtype(np.int32)),
    ]
    for params in ({"left_side": True, "lower": True},
                   {"left_side": False, "lower": False, "transpose_a": True},
                   {"left_side": True, "lower": False, "transpose_a": True, "conjugate_a": True},
                   {"left_side": False, "lower": True, "unit_diagonal": True}):
        name = "_".join(k for k, v in params.items() if v) or "default"
        b_shape = (3, 2) if params["left_side"] else (2, 3)
        records.append(OpRecord(
            f"linalg_triangular_solve_{name}", _triangular(**params), _triangular_np(**params),
            [[(3, 3), b_shape], [(2, 3, 3), (2, *b_shape)]], (F32, C64),
            [rand_triangular, rand_matrix], tol=tol))
    return records


def _jnp_records() -> list[OpRecord]:
    tol = LINALG_TOL
    square = [[(3, 3)], [(2, 4, 4)]]
    return [
        OpRecord("jnp_linalg_det", jnp.linalg.det, _wide(np.linalg.det),
                 [[(2, 2)], [(3, 3)], [(4, 4)], [(2, 5, 5)]], (F32, C64), rand_matrix,
                 tol=tol),
        OpRecord("jnp_linalg_slogdet", jnp.linalg.slogdet, _wide(np.linalg.slogdet),
                 [[(1, 1)], [(2, 2)], [(4, 4)], [(2, 3, 3)]], (F32,), rand_matrix, tol=tol),
        OpRecord("jnp_linalg_slogdet_qr", lambda a: jnp.linalg.slogdet(a, method="qr"),
                 _wide(np.linalg.slogdet), [[(4, 4)]], (F32,), rand_matrix, tol=tol),
        OpRecord("jnp_linalg_inv", jnp.linalg.inv, _wide(np.linalg.inv), square, (F32, C64),
                 rand_matrix, tol=tol),
        OpRecord("jnp_linalg_solve", jnp.linalg.solve, _wide(np.linalg.solve),
                 [[(3, 3), (3,)], [(3, 3), (3, 2)], [(2, 4, 4), (2, 4, 3)]], (F32, C64),
                 [rand_matrix, rand_matrix], tol=tol),
        OpRecord("jnp_linalg_pinv", jnp.linalg.pinv, _wide(np.linalg.pinv),
                 [[(4, 3)], [(2, 3)]], (F32,), rand_rect, tol=tol),
        OpRecord("jnp_linalg_eigvalsh", jnp.linalg.eigvalsh,
                 _wide(lambda a: np.linalg.eigvalsh(_sym(a))), square, (F32, C64), rand_spd,
                 tol=tol, expected_dtype=_real),
        OpRecord("jnp_linalg_cholesky_upper", lambda a: jnp.linalg.cholesky(a, upper=True),
                 _wide(lambda a: np.conj(np.swapaxes(np.linalg.cholesky(_sym(a)), -1, -2))),
                 square, (F32,), rand_spd, tol=tol),
        OpRecord("jnp_linalg_norm_fro", jnp.linalg.norm, _wide(np.linalg.norm),
                 [[(5,)], [(3, 4)]], (F32, C64), tol=tol, expected_dtype=_real),
        OpRecord("jnp_linalg_norm_2", lambda a: jnp.linalg.norm(a, 2),
                 _wide(lambda a: np.linalg.norm(a, 2)), [[(3, 4)]], (F32,), rand_rect,
                 tol=tol),
        OpRecord("jnp_linalg_norm_nuc", lambda a: jnp.linalg.norm(a, "nuc"),
                 _wide(lambda a: np.linalg.norm(a, "nuc")), [[(3, 4)]], (F32,), rand_rect,
                 tol=tol),
        OpRecord("jnp_linalg_norm_ord3_axis0", lambda a: jnp.linalg.norm(a, 3, axis=0),
                 _wide(lambda a: np.linalg.norm(a, 3, axis=0)), [[(3, 4)]], (F32,),
                 rand_matrix, tol=tol),
        OpRecord("jnp_linalg_matrix_power", lambda a: jnp.linalg.matrix_power(a, -3),
                 _wide(lambda a: np.linalg.matrix_power(a, -3)), [[(3, 3)]], (F32,),
                 rand_matrix, tol=tol),
    ]


# ---------------------------------------------------------------------------------------------
# General matrices: eig, schur, hessenberg; structured: tridiagonal, ormqr, symmetric_product.

def rand_separated(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Non-symmetric matrices with well separated, real-part-distinct eigenvalues: a
    triangular matrix with diagonal 2, 4, 6, ... plus small noise."""
    n = shape[-1]
    values = 0.3 * rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        values = values + 0.3j * rng.normal(size=shape)
    values = values + np.diag(2.0 * np.arange(1, n + 1))
    return values.astype(dtype)


def _sorted_eig(w, v, xp):
    """Eigenpairs ordered by the real part of the eigenvalues, vectors phase-fixed."""
    order = xp.argsort(w.real, axis=-1)
    w = xp.take_along_axis(w, order, axis=-1)
    v = xp.take_along_axis(v, order[..., None, :], axis=-1)
    return w, _phase_fix(v, xp)


def _lax_eig_right(a):
    w, v = lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return _sorted_eig(w, v, jnp)


def _np_eig_right(a):
    w, v = np.linalg.eig(a)
    return _sorted_eig(w, v, np)


def _lax_eig_left(a):
    w, vl = lax.linalg.eig(a, compute_right_eigenvectors=False)
    return _sorted_eig(w, vl, jnp)


def _np_eig_left(a):
    w, vl, _ = scipy.linalg.eig(a, left=True)
    return _sorted_eig(w, vl, np)


def _lax_eigvals(a):
    w, = lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return jnp.sort(w.real) + 0 * w.imag.sum()


def _schur_invariants(a, xp, schur):
    """What a Schur decomposition determines uniquely: Z T Z^H (= a), Z^H Z (= I) and T's
    diagonal eigenvalues, sorted."""
    t, z = schur(a)
    zh = xp.conj(xp.swapaxes(z, -1, -2))
    diag = xp.diagonal(t, axis1=-2, axis2=-1)
    return z @ t @ zh, zh @ z, xp.sort(diag.real, axis=-1)


def _per_matrix(fn, core_rank=2):
    """`fn` (on one matrix, several results) applied over the leading batch dimensions of
    its arguments, results stacked."""
    def batched(*args, **kw):
        first = np.asarray(args[0])
        batch = first.shape[:first.ndim - core_rank]
        if not batch:
            return fn(*args, **kw)
        outs = [fn(*[np.asarray(a)[i] for a in args], **kw) for i in np.ndindex(*batch)]
        if not isinstance(outs[0], tuple):
            return np.stack(outs).reshape(batch + np.shape(outs[0]))
        return tuple(np.stack(col).reshape(batch + np.shape(col[0])) for col in zip(*outs))

    return batched


@_per_matrix
def _np_tridiagonal(a, lower=True):
    routine = "hetrd" if np.iscomplexobj(a) else "sytrd"
    c, d, e, tau, _ = getattr(scipy.linalg.lapack, ("z" if np.iscomplexobj(a) else "d")
                              + routine)(a, lower=int(lower))
    return c, d, e, tau


@_per_matrix
def _np_hessenberg(a):
    routine = "zgehrd" if np.iscomplexobj(a) else "dgehrd"
    h, tau, _ = getattr(scipy.linalg.lapack, routine)(a)
    return h, tau[:a.shape[-1] - 1]


@lambda fn: _per_matrix(fn, core_rank=1)
def _np_tridiagonal_solve(dl, d, du, b):
    m = d.shape[-1]
    a = np.diag(d) + np.diag(du[:-1], 1) + np.diag(dl[1:], -1) if m > 1 else np.diag(d)
    return np.linalg.solve(a, b)


def _rand_diag(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A dominant diagonal (4 + noise) for a well-conditioned tridiagonal matrix."""
    return (4.0 + rand_matrix(rng, shape, dtype).real * 0.1).astype(dtype)


def _ormqr_case(left, transpose):
    def fun(a, c):
        qr_, taus = linalg_internals.geqrf(a)
        return lax.linalg.ormqr(qr_, taus, c if left else c, left=left, transpose=transpose)

    def reference(a, c):
        q = np.linalg.qr(a, mode="complete")[0]
        q = np.conj(q.T) if transpose else q
        return q @ c if left else c @ q

    return fun, _wide(reference)


def _general_records() -> list[OpRecord]:
    tol = LINALG_TOL
    records = [
        OpRecord("linalg_eig_values", _lax_eigvals, _wide(lambda a: np.sort(np.linalg.eigvals(a).real)),
                 [[(3, 3)], [(2, 4, 4)]], (F32,), rand_separated, tol=tol,
                 differentiable=False, expected_dtype=_real),
        # Second derivatives of eig raise in JAX too (its jvp computes eigenvectors without
        # enable_eigvec_derivs): first-order checks are in tests/test_linalg_general.py.
        OpRecord("linalg_eig_right", _lax_eig_right, _wide(_np_eig_right),
                 [[(3, 3)], [(2, 4, 4)]], (F32, C64), rand_separated, tol=tol,
                 differentiable=False,
                 expected_dtype=lambda d: (np.dtype(np.complex64),) * 2),
        OpRecord("linalg_eig_left", _lax_eig_left, _wide(_np_eig_left), [[(4, 4)]], (F32, C64),
                 rand_separated, tol=tol, differentiable=False,
                 expected_dtype=lambda d: (np.dtype(np.complex64),) * 2),
        OpRecord("jnp_linalg_eigvals",
                 lambda a: jnp.sort_complex(jnp.linalg.eigvals(a)),
                 _wide(lambda a: np.sort_complex(np.linalg.eigvals(a))), [[(3, 3)]], (F32,),
                 rand_separated, tol=tol, differentiable=False,
                 expected_dtype=lambda d: np.dtype(np.complex64)),
        OpRecord("linalg_schur",
                 lambda a: _schur_invariants(a, jnp, lax.linalg.schur),
                 _wide(lambda a: _schur_invariants(a, np, scipy.linalg.schur)),
                 [[(3, 3)], [(2, 4, 4)]], (F32, C64), rand_separated, tol=tol,
                 differentiable=False,
                 expected_dtype=lambda d: (d, d, _real(d))),
        OpRecord("linalg_hessenberg", lax.linalg.hessenberg, _wide(_np_hessenberg),
                 [[(4, 4)], [(2, 3, 3)]], (F32, C64), rand_matrix, tol=tol,
                 differentiable=False),
        OpRecord("linalg_tridiagonal", lax.linalg.tridiagonal, _wide(_np_tridiagonal),
                 [[(4, 4)], [(2, 3, 3)]], (F32, C64), rand_spd, tol=tol,
                 differentiable=False, expected_dtype=lambda d: (d, _real(d), _real(d), d)),
        OpRecord("linalg_tridiagonal_upper",
                 lambda a: lax.linalg.tridiagonal(a, lower=False),
                 _wide(lambda a: _np_tridiagonal(a, lower=False)), [[(4, 4)]], (F32,), rand_spd,
                 tol=tol, differentiable=False),
        OpRecord("linalg_tridiagonal_solve", lax.linalg.tridiagonal_solve,
                 _wide(_np_tridiagonal_solve),
                 [[(4,), (4,), (4,), (4, 2)], [(2, 3), (2, 3), (2, 3), (2, 3, 1)]],
                 (F32, C64), [rand_matrix, _rand_diag, rand_matrix, rand_matrix], tol=tol),
        OpRecord("linalg_symmetric_product",
                 lambda a, c: lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5),
                 _wide(lambda a, c: 2.0 * a @ np.swapaxes(a, -1, -2) + 0.5 * c),
                 [[(3, 2), (3, 3)], [(2, 3, 4), (2, 3, 3)]], (F32,), rand_matrix, tol=tol,
                 differentiable=False),
    ]
    for left in (True, False):
        for transpose in (False, True):
            fun, reference = _ormqr_case(left, transpose)
            c_shape = (4, 2) if left else (2, 4)
            records.append(OpRecord(
                f"linalg_ormqr_left{int(left)}_transpose{int(transpose)}", fun, reference,
                [[(4, 3), c_shape]], (F32, C64), rand_rect, tol=tol, differentiable=False))
    return records


RECORDS = _lax_records() + _jnp_records() + _general_records()
