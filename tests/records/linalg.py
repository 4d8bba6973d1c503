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


RECORDS = _lax_records() + _jnp_records()
