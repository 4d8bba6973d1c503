"""LAPACK custom calls: the kernels of `stablehlo.custom_call @lapack_<t><routine>_ffi`.

JAX lowers its linear-algebra primitives on CPU to custom calls into jaxlib's LAPACK
kernels (`lapack_spotrf_ffi`, `lapack_dgesdd_ffi`, ...; the letter after `lapack_` is the
element type: s, d, c, z). jaxlib's kernels call the LAPACK that SciPy ships, so these
kernels call the same routines through `scipy.linalg.lapack` / `scipy.linalg.blas`, one
matrix at a time over the leading batch dimensions, and return what the FFI handlers return:

    potrf   (a) -> (factor, info)            the other triangle keeps the input's values
    geqrf   (a) -> (a_out, taus)
    geqp3   (a, jpvt) -> (a_out, jpvt_out, taus)   column indices 1-based, as LAPACK's
    orgqr / ungqr (a, taus) -> q
    syevd / heevd (a) -> (eigenvectors, eigenvalues, info)
    gesdd / gesvd (a) -> (a_out, s, u, vt, info)   u and vt are zeros when mode is 'N'
    trsm    (a, b) -> x
    getrf   (a) -> (lu, pivots, info)         pivots 1-based, as LAPACK's

Attributes (`mhlo.backend_config`) are characters as uint8: `uplo` 'L'/'U', `mode` 'V'
(syevd) or 'A'/'S'/'N' (gesdd), `side`, `trans_x` 'N'/'T'/'C', `diag` 'N'/'U'. Layouts
in the op only say how XLA stores the matrices (column-major); NumPy arrays here are
logical, so they play no part.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.backends.reference.kernels.callbacks import register_target
from justjax._src.hlo.ir import Op

_PREFIXES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
MatrixKernel = Callable[..., tuple[Any, ...]]


def _targets(routine: str, complex_routine: str | None = None) -> list[str]:
    """`lapack_<t><routine>_ffi` for the four element types (complex ones may have their own
    routine name: orgqr / ungqr, syevd / heevd)."""
    names = []
    for prefix in _PREFIXES:
        name = complex_routine if complex_routine and prefix in "cz" else routine
        names.append(f"lapack_{prefix}{name}_ffi")
    return names


def _config_char(op: Op, key: str) -> str:
    return chr(int(op.attributes["mhlo.backend_config"][key]))


def _lapack(routine: str, dtype: np.dtype, module: str = "lapack") -> Callable[..., Any]:
    """SciPy's wrapper of `<t><routine>` for `dtype`, from `scipy.linalg.<module>` (imported
    at first use: `scipy.linalg` is slow to import, and most programs never call LAPACK)."""
    prefix = {np.dtype(v): k for k, v in _PREFIXES.items()}[np.dtype(dtype)]
    return getattr(importlib.import_module(f"scipy.linalg.{module}"), prefix + routine)


def _batched(op: Op, batch_rank: int, per_matrix: MatrixKernel) -> Kernel:
    """A kernel applying `per_matrix(*matrices)` to each batch element of its operands (their
    first `batch_rank` dimensions), stacking each result into an array of the op's result
    type. `per_matrix` returns one value per result."""
    result_types = [r.type for r in op.results]
    batch_shape = tuple(result_types[0].shape[:batch_rank])

    def kernel(*operands: np.ndarray) -> Any:
        outs = [np.zeros(t.shape, t.dtype) for t in result_types]
        for index in np.ndindex(*batch_shape):
            values = per_matrix(*[np.asarray(x[index]) for x in operands])
            for out, value in zip(outs, values, strict=True):
                out[index] = value
        return outs[0] if len(outs) == 1 else outs

    return kernel


def _batch_rank(op: Op, core_rank: int = 2) -> int:
    return op.operands[0].type.rank - core_rank


# ---------------------------------------------------------------------------------------------
# Cholesky.

@register_target(*_targets("potrf"))
def _potrf(op: Op, compiler: Compiler) -> Kernel:
    lower = _config_char(op, "uplo") == "L"

    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        if a.size == 0:
            return a, 0
        factor, info = _lapack("potrf", a.dtype)(a, lower=lower, clean=0)
        return factor, info

    return _batched(op, _batch_rank(op), per_matrix)


# ---------------------------------------------------------------------------------------------
# QR.

@register_target(*_targets("geqrf"))
def _geqrf(op: Op, compiler: Compiler) -> Kernel:
    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        if a.size == 0:
            return a, np.zeros(min(a.shape), a.dtype)
        qr, taus, _, _ = _lapack("geqrf", a.dtype)(a)
        return qr, taus

    return _batched(op, _batch_rank(op), per_matrix)


def _geqp3_free(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's geqp3 with every column free to move; indices 1-based."""
    qr, jpvt, taus, _, _ = _lapack("geqp3", a.dtype)(a)
    return qr, jpvt, taus


def _geqp3_with_leading(a: np.ndarray, jpvt: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's geqp3 when some `jpvt` entries are nonzero: those columns are swapped to the
    front one by one (as dgeqp3 swaps them, which reorders the free ones) and factored
    unpivoted; the free columns are then pivoted by the norms of their updated trailing
    rows."""
    m, n = a.shape
    work = a.copy()
    order = np.arange(n)
    nfxd = 0
    for j in range(n):
        if jpvt[j] == 0:
            continue
        if j != nfxd:
            work[:, [j, nfxd]] = work[:, [nfxd, j]]
            order[j], order[nfxd] = order[nfxd], j
        nfxd += 1
    k = min(nfxd, m)
    taus = np.zeros(min(m, n), a.dtype)
    qr_lead, taus_lead, _, _ = _lapack("geqrf", a.dtype)(work[:, :nfxd])
    work[:, :nfxd] = qr_lead
    taus[:k] = taus_lead[:k]
    if nfxd < n:
        routine, trans = ("unmqr", "C") if np.iscomplexobj(a) else ("ormqr", "T")
        rest, _, _ = _lapack(routine, a.dtype)("L", trans, qr_lead[:, :k], taus_lead[:k],
                                               work[:, nfxd:], max(1, 64 * n))
        work[:, nfxd:] = rest
    if nfxd < n and k < m:
        qr_rest, jpvt_rest, taus_rest = _geqp3_free(work[k:, nfxd:])
        swapped = jpvt_rest - 1
        work[:k, nfxd:] = work[:k, nfxd:][:, swapped]
        work[k:, nfxd:] = qr_rest
        order[nfxd:] = order[nfxd:][swapped]
        taus[k:k + len(taus_rest)] = taus_rest
    return work, (order + 1).astype(jpvt.dtype), taus


@register_target(*_targets("geqp3"))
def _geqp3(op: Op, compiler: Compiler) -> Kernel:
    def per_matrix(a: np.ndarray, jpvt: np.ndarray) -> tuple[Any, ...]:
        if a.size == 0:
            return a, np.arange(1, a.shape[1] + 1), np.zeros(min(a.shape), a.dtype)
        if not np.any(jpvt):
            return _geqp3_free(a)
        return _geqp3_with_leading(a, jpvt)

    return _batched(op, _batch_rank(op), per_matrix)


@register_target(*_targets("orgqr", "ungqr"))
def _orgqr(op: Op, compiler: Compiler) -> Kernel:
    def per_matrix(a: np.ndarray, taus: np.ndarray) -> tuple[Any, ...]:
        if a.size == 0:
            return (a,)
        routine = "ungqr" if np.iscomplexobj(a) else "orgqr"
        q, _, _ = _lapack(routine, a.dtype)(a, taus)
        return (q,)

    return _batched(op, _batch_rank(op), per_matrix)


# ---------------------------------------------------------------------------------------------
# Symmetric / Hermitian eigendecomposition.

@register_target(*_targets("syevd", "heevd"))
def _syevd(op: Op, compiler: Compiler) -> Kernel:
    lower = _config_char(op, "uplo") == "L"
    compute_v = _config_char(op, "mode") == "V"

    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        if a.size == 0:
            return a, np.zeros(0, np.real(a).dtype), 0
        routine = "heevd" if np.iscomplexobj(a) else "syevd"
        w, v, info = _lapack(routine, a.dtype)(a, compute_v=int(compute_v), lower=int(lower))
        return (v if compute_v else a), w, info

    return _batched(op, _batch_rank(op), per_matrix)


# ---------------------------------------------------------------------------------------------
# Singular value decomposition.

def _svd_kernel(op: Op, routine: str) -> Kernel:
    mode = _config_char(op, "mode")
    _, _, u_type, vt_type, _ = [r.type for r in op.results]

    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        u_zeros = np.zeros(u_type.shape[-2:], a.dtype)
        vt_zeros = np.zeros(vt_type.shape[-2:], a.dtype)
        if a.size == 0:
            return a, np.zeros(0, np.real(a).dtype), u_zeros, vt_zeros, 0
        u, s, vt, info = _lapack(routine, a.dtype)(
            a, compute_uv=int(mode != "N"), full_matrices=int(mode == "A"))
        if mode == "N":
            u, vt = u_zeros, vt_zeros
        return a, s, u, vt, info

    return _batched(op, _batch_rank(op), per_matrix)


@register_target(*_targets("gesdd"))
def _gesdd(op: Op, compiler: Compiler) -> Kernel:
    return _svd_kernel(op, "gesdd")


@register_target(*_targets("gesvd"))
def _gesvd(op: Op, compiler: Compiler) -> Kernel:
    return _svd_kernel(op, "gesvd")


# ---------------------------------------------------------------------------------------------
# Triangular solve.

_TRANSPOSE = {"N": 0, "T": 1, "C": 2}


@register_target(*_targets("trsm"))
def _trsm(op: Op, compiler: Compiler) -> Kernel:
    left = _config_char(op, "side") == "L"
    lower = _config_char(op, "uplo") == "L"
    trans = _TRANSPOSE[_config_char(op, "trans_x")]
    unit = _config_char(op, "diag") == "U"

    def per_matrix(a: np.ndarray, b: np.ndarray) -> tuple[Any, ...]:
        if b.size == 0:
            return (b,)
        x = _lapack("trsm", a.dtype, "blas")(1.0, a, b, side=int(not left), lower=int(lower),
                                           trans_a=trans, diag=int(unit))
        return (x,)

    return _batched(op, _batch_rank(op), per_matrix)


@register("stablehlo.triangular_solve")
def _triangular_solve(op: Op, compiler: Compiler) -> Kernel:
    """StableHLO's own triangular solve (element types LAPACK lacks): solved in float32 or
    complex64 by BLAS, rounded back to the element type."""
    left = bool(op.attributes["left_side"])
    lower = bool(op.attributes["lower"])
    trans = {"NO_TRANSPOSE": 0, "TRANSPOSE": 1, "ADJOINT": 2}[op.attributes["transpose_a"].value]
    unit = bool(op.attributes["unit_diagonal"])
    out_dtype = op.results[0].type.dtype

    def per_matrix(a: np.ndarray, b: np.ndarray) -> tuple[Any, ...]:
        if b.size == 0:
            return (b,)
        wide = np.complex64 if np.iscomplexobj(a) else np.float32
        x = _lapack("trsm", np.dtype(wide), "blas")(
            1.0, a.astype(wide), b.astype(wide), side=int(not left), lower=int(lower),
            trans_a=trans, diag=int(unit))
        return (x.astype(out_dtype),)

    return _batched(op, _batch_rank(op), per_matrix)


@register("chlo.conj")
def _conj(op: Op, compiler: Compiler) -> Kernel:
    return np.conj


# ---------------------------------------------------------------------------------------------
# LU.

@register_target(*_targets("getrf"))
def _getrf(op: Op, compiler: Compiler) -> Kernel:
    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        if a.size == 0:
            return a, np.zeros(0, np.int32), 0
        lu, pivots, info = _lapack("getrf", a.dtype)(a)
        # SciPy's wrapper makes LAPACK's 1-based pivots 0-based; the FFI handler does not.
        return lu, pivots + 1, info

    return _batched(op, _batch_rank(op), per_matrix)


# ---------------------------------------------------------------------------------------------
# General eigendecomposition, Schur and Hessenberg reductions.

def _unpack_real_eigenvectors(wi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """LAPACK's real packing of eigenvectors (a conjugate pair j, j+1 shares the columns
    re, im) as complex columns, as the FFI handler returns them."""
    out = v.astype(np.result_type(v.dtype, np.complex64))
    j = 0
    while j < len(wi):
        if wi[j] != 0 and j + 1 < len(wi):
            # Built from parts, so that a zero imaginary part of the conjugate is -0 as
            # jaxlib's.
            out[:, j].real = out[:, j + 1].real = v[:, j]
            out[:, j].imag = v[:, j + 1]
            out[:, j + 1].imag = -v[:, j + 1]
            j += 2
        else:
            j += 1
    return out


@register_target(*_targets("geev"))
def _geev(op: Op, compiler: Compiler) -> Kernel:
    """(a) -> (wr, wi, vl, vr, info) for real `a`, (w, vl, vr, info) for complex `a`;
    eigenvectors complex, zeros when not computed."""
    left = _config_char(op, "compute_left") == "V"
    right = _config_char(op, "compute_right") == "V"
    vec_type = op.results[-2].type

    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        n = a.shape[-1]
        zeros = np.zeros((n, n), vec_type.dtype)
        if a.size == 0:
            w = np.zeros(0, a.dtype)
            return ((w, w) if not np.iscomplexobj(a) else (w,)) + (zeros, zeros, 0)
        if not np.all(np.isfinite(a)):
            # LAPACK rejects NaN/inf input (its balancing reports an illegal argument on
            # stderr); any nonzero info makes the results NaN.
            w = np.full(n, np.nan, a.dtype)
            return ((w, w) if not np.iscomplexobj(a) else (w,)) + (zeros, zeros, -1)
        if np.iscomplexobj(a):
            w, vl, vr, info = _lapack("geev", a.dtype)(a, compute_vl=int(left),
                                                       compute_vr=int(right))
            return (w, vl if left else zeros, vr if right else zeros, info)
        wr, wi, vl, vr, info = _lapack("geev", a.dtype)(a, compute_vl=int(left),
                                                        compute_vr=int(right))
        vl = _unpack_real_eigenvectors(wi, vl) if left else zeros
        vr = _unpack_real_eigenvectors(wi, vr) if right else zeros
        return wr, wi, vl, vr, info

    return _batched(op, _batch_rank(op), per_matrix)


@register_target(*_targets("gees"))
def _gees(op: Op, compiler: Compiler) -> Kernel:
    """(a) -> (t, z, wr, wi, sdim, info) for real `a`, (t, z, w, sdim, info) for complex;
    `z` is zeros when Schur vectors are not computed (mode 'N')."""
    compute_v = _config_char(op, "mode") == "V"

    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        real = not np.iscomplexobj(a)
        if a.size == 0:
            w = np.zeros(0, a.dtype)
            return (a, a) + ((w, w) if real else (w,)) + (0, 0)
        result = _lapack("gees", a.dtype)(lambda *args: None, a, compute_v=int(compute_v))
        if real:
            t, sdim, wr, wi, vs, _, info = result
            eigenvalues = (wr, wi)
        else:
            t, sdim, w, vs, _, info = result
            eigenvalues = (w,)
        if not compute_v:
            vs = np.zeros_like(a)
        return (t, vs, *eigenvalues, sdim, info)

    return _batched(op, _batch_rank(op), per_matrix)


@register_target(*_targets("gehrd"))
def _gehrd(op: Op, compiler: Compiler) -> Kernel:
    """(a) -> (a_out, taus, info) over rows/columns `low..high` (1-based, as LAPACK's)."""
    config = op.attributes["mhlo.backend_config"]
    low, high = int(config["low"]), int(config["high"])

    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        n = a.shape[-1]
        if n == 0:
            return a, np.zeros(0, a.dtype), 0
        h, tau, info = _lapack("gehrd", a.dtype)(a, lo=low - 1, hi=high - 1)
        return h, tau[:n - 1], info

    return _batched(op, _batch_rank(op), per_matrix)


# ---------------------------------------------------------------------------------------------
# Tridiagonal reduction and solves.

@register_target(*_targets("sytrd", "hetrd"))
def _sytrd(op: Op, compiler: Compiler) -> Kernel:
    """(a) -> (a_out, d, e, taus, info)."""
    lower = _config_char(op, "uplo") == "L"

    def per_matrix(a: np.ndarray) -> tuple[Any, ...]:
        routine = "hetrd" if np.iscomplexobj(a) else "sytrd"
        c, d, e, tau, info = _lapack(routine, a.dtype)(a, lower=int(lower))
        return c, d, e, tau, info

    return _batched(op, _batch_rank(op), per_matrix)


@register_target(*_targets("gtsv"))
def _gtsv(op: Op, compiler: Compiler) -> Kernel:
    """(dl, d, du, b) -> (dl_out, d_out, du_out, x, info); the diagonals have m entries each
    (dl[0] and du[m-1] unused), as the FFI handler takes them."""
    def per_matrix(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray
                   ) -> tuple[Any, ...]:
        if b.size == 0:
            return dl, d, du, b, 0
        if d.shape[0] == 1:
            # One equation: gtsv's sub- and superdiagonals would be empty.
            singular = d[0] == 0
            x = b if singular else b / d[0]
            return dl, d, du, x, int(singular)
        du2, d_out, du_out, x, info = _lapack("gtsv", b.dtype)(dl[1:], d, du[:-1], b)
        return dl, d_out, np.concatenate([du_out, du[-1:]]), x, info

    return _batched(op, _batch_rank(op, 1), per_matrix)


def perturbed_tridiagonal_solve(dl: np.ndarray, d: np.ndarray, du: np.ndarray,
                                b: np.ndarray) -> np.ndarray:
    """Gaussian elimination with partial pivoting on a tridiagonal matrix (as LAPACK's
    gttrf/gttrs), a tiny pivot replaced by eps * max|U| (its sign kept) so that singular
    systems give finite solutions (inverse iteration's use)."""
    m = d.shape[0]
    eps = np.finfo(d.dtype).eps
    # Rows of U have three entries: u0 (diagonal), u1, u2 (second superdiagonal, fill-in).
    u0, u1, u2 = d.copy(), du.copy(), np.zeros_like(du)
    u1[-1] = 0
    lower = dl.copy()
    x = b.copy()
    pivoted = np.zeros(m, bool)
    for i in range(m - 1):
        if abs(lower[i + 1]) > abs(u0[i]):
            pivoted[i] = True
            # Swap rows i and i+1.
            u0[i], lower[i + 1] = lower[i + 1], u0[i]
            u1[i], u0[i + 1] = u0[i + 1], u1[i]
            if i + 1 < m - 1:
                u2[i], u1[i + 1] = u1[i + 1], 0
            x[[i, i + 1]] = x[[i + 1, i]]
        if u0[i] == 0:
            continue
        factor = lower[i + 1] / u0[i]
        u0[i + 1] = u0[i + 1] - factor * u1[i]
        if i + 1 < m - 1:
            u1[i + 1] = u1[i + 1] - factor * u2[i]
        x[i + 1] = x[i + 1] - factor * x[i]
    scale = max(np.max(np.abs(u0)), np.max(np.abs(u1)), np.max(np.abs(u2)), 1e-300)
    tiny = eps * scale
    small = np.abs(u0) < tiny
    sign = np.where(np.real(u0) < 0, -1, 1).astype(u0.dtype)
    u0 = np.where(small, sign * tiny, u0)
    for i in range(m - 1, -1, -1):
        acc = x[i].copy()
        if i + 1 < m:
            acc = acc - u1[i] * x[i + 1]
        if i + 2 < m:
            acc = acc - u2[i] * x[i + 2]
        x[i] = acc / u0[i]
    return x


@register_target("tridiagonal_solve_perturbed_ffi")
def _gtsv_perturbed(op: Op, compiler: Compiler) -> Kernel:
    def per_matrix(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray
                   ) -> tuple[Any, ...]:
        if b.size == 0:
            return (b,)
        return (perturbed_tridiagonal_solve(dl, d, du, b),)

    return _batched(op, _batch_rank(op, 1), per_matrix)


# ---------------------------------------------------------------------------------------------
# Products with the Q of a compact QR factorization.

@register_target(*_targets("ormqr", "unmqr"))
def _ormqr(op: Op, compiler: Compiler) -> Kernel:
    """(a, taus, c) -> Q c, Q^T c, c Q or c Q^T (`left`, `transpose` booleans)."""
    config = op.attributes["mhlo.backend_config"]
    left, transpose = bool(config["left"]), bool(config["transpose"])

    def per_matrix(a: np.ndarray, taus: np.ndarray, c: np.ndarray) -> tuple[Any, ...]:
        if c.size == 0 or taus.size == 0:
            return (c,)
        complex_ = np.iscomplexobj(a)
        routine = "unmqr" if complex_ else "ormqr"
        trans = ("C" if complex_ else "T") if transpose else "N"
        k = taus.shape[0]
        lwork = max(1, 64 * max(c.shape))
        cq, _, _ = _lapack(routine, a.dtype)("L" if left else "R", trans, a[:, :k], taus, c,
                                             lwork)
        return (cq,)

    return _batched(op, _batch_rank(op), per_matrix)
