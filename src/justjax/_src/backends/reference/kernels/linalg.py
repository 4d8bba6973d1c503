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

from typing import Any, Callable

import numpy as np
from scipy.linalg import blas, lapack

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


def _lapack(routine: str, dtype: np.dtype, module: Any = lapack) -> Callable[..., Any]:
    """SciPy's wrapper of `<t><routine>` for `dtype`."""
    prefix = {np.dtype(v): k for k, v in _PREFIXES.items()}[np.dtype(dtype)]
    return getattr(module, prefix + routine)


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
        x = _lapack("trsm", a.dtype, blas)(1.0, a, b, side=int(not left), lower=int(lower),
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
        x = _lapack("trsm", np.dtype(wide), blas)(
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
