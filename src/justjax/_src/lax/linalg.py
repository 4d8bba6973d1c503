"""`lax.linalg`: matrix decompositions as primitives, with JAX's derivatives.

`cholesky_p`, `eigh_p`, `svd_p` and the QR family (`geqrf_p`, `geqp3_p`,
`householder_product_p`, and `qr_p` built from them when lowered) live here;
`triangular_solve_p` and the LU family live in `linalg_triangular`, the shared machinery in
`linalg_common`. Every primitive takes leading batch dimensions. On CPU each lowers to
jaxlib's LAPACK custom calls (`lapack_spotrf_ffi`, `lapack_dsyevd_ffi`, `lapack_sgesdd_ffi`,
`lapack_sgeqrf_ffi`, `lapack_sorgqr_ffi`, ...), whose failures (`info != 0`) become NaNs.
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.core import dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, lowering
from justjax._src.lax import dot, elementwise, slicing, structural
from justjax._src.lax import linalg_common as lc
from justjax._src.lax.linalg_triangular import (lu, lu_p, lu_pivots_to_permutation,
                                                lu_pivots_to_permutation_p, lu_solve,
                                                triangular_solve, triangular_solve_p)
from justjax._src.lax.linalg_nonsymmetric import (EigImplementation, eig, eig_p, hessenberg,
                                                  hessenberg_p, schur, schur_p)
from justjax._src.lax.linalg_structured import (cholesky_update, cholesky_update_p, ormqr,
                                                ormqr_p, symmetric_product,
                                                symmetric_product_p, tridiagonal,
                                                tridiagonal_p, tridiagonal_solve,
                                                tridiagonal_solve_p)

# The names `jax.lax.linalg` exports (`geqrf`, `geqp3`, `lu_solve` and `symmetrize` are JAX
# internals that jnp.linalg uses).
__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p",
           "cholesky_update", "cholesky_update_p", "eig", "eig_p", "eigh", "eigh_p",
           "hessenberg", "hessenberg_p", "householder_product", "householder_product_p", "lu",
           "lu_p", "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr", "ormqr_p",
           "qr", "qr_p", "schur", "schur_p", "svd", "svd_p", "symmetric_product",
           "symmetric_product_p", "triangular_solve", "triangular_solve_p", "tridiagonal",
           "tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p"]

symmetrize = lc.symmetrize


class EighImplementation(enum.Enum):
    """Implementation for symmetric/Hermitian eigendecomposition."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Enum for SVD algorithm."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _real_dtype(dt: np.dtype) -> np.dtype:
    return dtypes.real_dtype(dt) if dtypes.is_complex(dt) else np.dtype(dt)


def _lowering_batch(ctx: lowering.LoweringRuleContext) -> tuple[int, ...]:
    return ctx.avals_in[0].shape[:-2]


def _info_aval(batch: Sequence[int]) -> ShapedArray:
    return ShapedArray(tuple(batch), np.dtype(np.int32))


# ---------------------------------------------------------------------------------------------
# Cholesky

def _cholesky_shape_rule(shape: tuple[int, ...]) -> tuple[int, ...]:
    if shape[0] != shape[1]:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {shape}.")
    return shape


cholesky_p = lc.linalg_primitive("cholesky", lambda d: d, (lc.FLOAT_OR_COMPLEX,), (2,),
                                 _cholesky_shape_rule)


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor `L` (lower triangular, `x = L @ L^H`) of positive-definite `x`.

    Lowers to `stablehlo.custom_call @lapack_?potrf_ffi`.

    Args:
      x: `[..., n, n]` Hermitian (symmetric if real) positive-definite matrices.
      symmetrize_input: whether to use `(x + x^H) / 2`; if not, only the lower triangle of
        `x` is read.
    Returns:
      `[..., n, n]` lower-triangular factors; all NaN (zeros above the diagonal) where `x` is
      not positive definite.
    """
    if symmetrize_input:
        x = lc.symmetrize(x)
    return lc.tril(cholesky_p.bind(x))


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """L' = L phi(L^-1 S' L^-H), phi taking the lower triangle with a halved diagonal
    (Murray, arXiv:1602.07527)."""
    x, = primals
    sigma_dot, = tangents
    l_ = lc.tril(cholesky_p.bind(x))

    def phi(m: Any) -> Any:
        lower = lc.tril(m)
        n = lc.shape(m)[-1]
        halves = np.array(1, lc.dtype(m)) + lc.eye(lc.dtype(m), n)
        return lower / lc.expand_leading(halves, lower.ndim - 2)

    tmp = triangular_solve(l_, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True,
                           lower=True)
    inner = triangular_solve(l_, tmp, left_side=True, transpose_a=False, lower=True)
    l_dot = dot.batch_matmul(l_, phi(inner), precision=dot.Precision.HIGHEST)
    return l_, l_dot


ad.primitive_jvps[cholesky_p] = _cholesky_jvp


def _cholesky_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value) -> ir.Value:
    """`lapack_?potrf_ffi` (lower), NaNs where it fails."""
    operand_aval, = ctx.avals_in
    out_aval, = ctx.avals_out
    batch = _lowering_batch(ctx)
    target = lc.lapack_target("potrf_ffi", operand_aval.dtype)
    result, info = lc.ffi_call(ctx, target, [operand], [operand_aval, _info_aval(batch)],
                               {0: 0}, {"uplo": lc.char("L")})
    ok = lc.info_ok(ctx.builder, info)
    return lc.replace_not_ok_with_nan(ctx.builder, batch, ok, result, out_aval)


lowering.register_lowering(cholesky_p, _cholesky_lowering)


# ---------------------------------------------------------------------------------------------
# eigh

def _eigh_shape_rule(shape: tuple[int, ...], *, subset_by_index: tuple[int, int] | None,
                     **_: Any) -> tuple[tuple[int, ...], ...]:
    if shape[0] != shape[-1]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape [..., n, n], "
                         f"got shape {shape}")
    n = shape[0]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return (n, d), (d,)


eigh_p = lc.linalg_primitive("eigh", lambda d, **_: (d, _real_dtype(d)),
                             (lc.FLOAT_OR_COMPLEX,), (2,), _eigh_shape_rule,
                             multiple_results=True)


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None) -> tuple[Any, Any]:
    """Eigendecomposition of Hermitian (symmetric if real) matrices.

    Lowers to `stablehlo.custom_call @lapack_?syevd_ffi` (`heevd` for complex).

    Args:
      x: `[..., n, n]` matrices.
      lower: which triangle is read when `symmetrize_input` is False.
      symmetrize_input: whether to use `(x + x^H) / 2`.
      sort_eigenvalues: whether eigenvalues come in ascending order (always on CPU).
      subset_by_index: a range `[start, end)` of eigenvalues to compute (not on CPU).
      implementation: an `EighImplementation` (QR, the CPU default, only).
    Returns:
      `(v, w)`: eigenvectors `v[..., :, i]` (x's dtype) of the eigenvalues `w[..., i]` (real).
    """
    if symmetrize_input:
        x = lc.symmetrize(x)
    v, w = eigh_p.bind(x, lower=lower, sort_eigenvalues=sort_eigenvalues,
                       subset_by_index=subset_by_index, algorithm=implementation)
    return v, w


def _eigh_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool,
              sort_eigenvalues: bool, subset_by_index: tuple[int, int] | None,
              algorithm: Any) -> tuple[list[Any], list[Any]]:
    """Nondegenerate perturbation theory: with A' in the eigenbasis, V^H A' V, the
    eigenvalues move by its diagonal and the eigenvectors by V (F * V^H A' V), F holding
    1 / (w_j - w_i) off the diagonal."""
    a, = primals
    a_dot, = tangents
    n = lc.shape(a)[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = eigh_p.bind(lc.symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    w = w_real.astype(a.dtype)
    eye_n = lc.eye(a.dtype, n)
    # 1 / (w_j - w_i) off the diagonal, 0 on it, without dividing by zero there.
    f_mat = elementwise.integer_pow(eye_n + w[..., np.newaxis, :] - w[..., np.newaxis], -1) - eye_n
    vdag_adot_v = lc.dot_highest(lc.dot_highest(lc.H(v), a_dot), v)
    dv = lc.dot_highest(v, f_mat * vdag_adot_v)
    dw = lc.extract_diagonal(lc.real(vdag_adot_v))
    return [v, w_real], [dv, dw]


ad.primitive_jvps[eigh_p] = _eigh_jvp


def _eigh_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value, *, lower: bool,
                   sort_eigenvalues: bool, subset_by_index: tuple[int, int] | None,
                   algorithm: Any) -> list[ir.Value]:
    """`lapack_?syevd_ffi` / `lapack_?heevd_ffi` (LAPACK always sorts), NaNs where it
    fails."""
    operand_aval, = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    n = operand_aval.shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")
    batch = _lowering_batch(ctx)
    routine = "heevd_ffi" if dtypes.is_complex(operand_aval.dtype) else "syevd_ffi"
    target = lc.lapack_target(routine, operand_aval.dtype)
    config = {"mode": lc.char("V"), "uplo": lc.char("L" if lower else "U")}
    v, w, info = lc.ffi_call(ctx, target, [operand], [v_aval, w_aval, _info_aval(batch)],
                             {0: 0}, config)
    b = ctx.builder
    ok = lc.info_ok(b, info)
    v = lc.replace_not_ok_with_nan(b, batch, ok, v, v_aval)
    w = lc.replace_not_ok_with_nan(b, batch, ok, w, w_aval)
    return [v, w]


lowering.register_lowering(eigh_p, _eigh_lowering)


# ---------------------------------------------------------------------------------------------
# svd

def _svd_shape_rule(shape: tuple[int, ...], *, full_matrices: bool, compute_uv: bool,
                    subset_by_index: tuple[int, int] | None, **_: Any
                    ) -> tuple[tuple[int, ...], ...]:
    m, n = shape
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    if compute_uv:
        return (rank,), (m, m if full_matrices else rank), (n if full_matrices else rank, n)
    return ((rank,),)


def _svd_dtype_rule(dt: np.dtype, *, compute_uv: bool, **_: Any) -> tuple[np.dtype, ...]:
    if compute_uv:
        return _real_dtype(dt), dt, dt
    return (_real_dtype(dt),)


svd_p = lc.linalg_primitive("svd", _svd_dtype_rule, (lc.FLOAT_OR_COMPLEX,), (2,),
                            _svd_shape_rule, multiple_results=True)


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: SvdAlgorithm | None = None) -> Any:
    """Singular value decomposition `x = U @ diag(s) @ Vh`.

    Lowers to `stablehlo.custom_call @lapack_?gesdd_ffi` (`gesvd` for `SvdAlgorithm.QR`).

    Args:
      x: `[..., m, n]` matrices.
      full_matrices: whether `U` and `Vh` are square (else `[..., m, k]` and `[..., k, n]`,
        k = min(m, n)).
      compute_uv: whether to return the singular vectors.
      subset_by_index: a range of singular values (not on CPU).
      algorithm: an `SvdAlgorithm` (DEFAULT, QR or DIVIDE_AND_CONQUER on CPU).
    Returns:
      `(U, s, Vh)`, or `s` alone without `compute_uv`; `s` is real and descending.
    """
    result = svd_p.bind(x, full_matrices=full_matrices, compute_uv=compute_uv,
                        subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv:
        s, u, vh = result
        return u, s, vh
    s, = result
    return s


def _svd_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool,
             compute_uv: bool, subset_by_index: tuple[int, int] | None, algorithm: Any
             ) -> tuple[list[Any], list[Any]]:
    """JAX's rule (thin SVD; Townsend's derivation), with the corrections for the part of the
    column or row space a rectangular matrix's thin factors do not span. Its products run at
    float32 precision, as JAX's do."""
    with config.override("jax_default_matmul_precision", "float32"):
        return _svd_jvp_body(primals, tangents, full_matrices=full_matrices,
                             compute_uv=compute_uv, subset_by_index=subset_by_index,
                             algorithm=algorithm)


def _svd_jvp_body(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool,
                  compute_uv: bool, subset_by_index: tuple[int, int] | None, algorithm: Any
                  ) -> tuple[list[Any], list[Any]]:
    a, = primals
    da, = tangents
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True,
                          subset_by_index=subset_by_index, algorithm=algorithm)
    m, n = lc.shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    ut, v = lc.H(u), lc.H(vt)
    s_dim = s[..., None, :]
    ds_full = ut @ da @ v
    ds = lc.extract_diagonal(lc.real(ds_full))
    if not compute_uv:
        return [s], [ds]
    s_diffs = (s_dim + lc.T(s_dim)) * (s_dim - lc.T(s_dim))
    k = lc.shape(s)[-1]
    diffs_zeros = lc.expand_leading(lc.eye(s.dtype, k), s_diffs.ndim - 2)
    f_mat = 1 / (s_diffs + diffs_zeros) - diffs_zeros
    dss = s_dim.astype(a.dtype) * ds_full
    sds = lc.T(s_dim.astype(a.dtype)) * ds_full
    s_zeros = (s == 0).astype(s.dtype)
    s_inv = 1 / (s + s_zeros) - s_zeros
    s_inv_mat = lc.construct_diagonal(s_inv)
    du_dv_diag = .5 * (ds_full - lc.H(ds_full)) * s_inv_mat.astype(a.dtype)
    du = u @ (f_mat.astype(a.dtype) * (dss + lc.H(dss)) + du_dv_diag)
    dv = v @ (f_mat.astype(a.dtype) * (sds + lc.H(sds)))
    if m > n:
        dav = da @ v
        du = du + (dav - u @ (ut @ dav)) / s_dim.astype(a.dtype)
    if n > m:
        dahu = lc.H(da) @ u
        dv = dv + (dahu - v @ (vt @ dahu)) / s_dim.astype(a.dtype)
    return [s, u, vt], [ds, du, lc.H(dv)]


ad.primitive_jvps[svd_p] = _svd_jvp


def _empty_svd(a: Any, *, full_matrices: bool, compute_uv: bool) -> list[Any]:
    """The SVD of matrices with no rows or no columns: no singular values, identity factors
    (the empty side empty)."""
    batch = lc.shape(a)[:-2]
    m, n = lc.shape(a)[-2:]
    real = _real_dtype(lc.dtype(a))
    s = structural.broadcast(structural.convert_element_type(0, real), (*batch, 0))
    if not compute_uv:
        return [s]
    if full_matrices:
        size = max(m, n)
        u = structural.broadcast_in_dim(lc.eye(lc.dtype(a), size), (*batch, size, size),
                                        (len(batch), len(batch) + 1))
    else:
        u = structural.broadcast(structural.convert_element_type(0, lc.dtype(a)),
                                 (*batch, m, n))
    v = structural.broadcast(structural.convert_element_type(0, lc.dtype(a)), (*batch, 0, 0))
    if m < n:
        u, v = v, u
    return [s, u, v]


def _svd_mode(compute_uv: bool, full_matrices: bool | None) -> str:
    if not compute_uv:
        return "N"
    return "A" if full_matrices is None or full_matrices else "S"


def _svd_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value, *,
                  full_matrices: bool, compute_uv: bool,
                  subset_by_index: tuple[int, int] | None, algorithm: Any) -> list[ir.Value]:
    """`lapack_?gesdd_ffi` (or `gesvd`), NaNs where it fails; empty matrices directly."""
    operand_aval, = ctx.avals_in
    m, n = operand_aval.shape[-2:]
    batch = _lowering_batch(ctx)
    if not (subset_by_index is None or tuple(subset_by_index) == (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if m == 0 or n == 0:
        return lowering.lower_fun(_empty_svd)(ctx, operand, full_matrices=full_matrices,
                                              compute_uv=compute_uv)
    if algorithm is None or algorithm in (SvdAlgorithm.DEFAULT,
                                          SvdAlgorithm.DIVIDE_AND_CONQUER):
        routine = "gesdd_ffi"
    elif algorithm == SvdAlgorithm.QR:
        routine = "gesvd_ffi"
    else:
        raise NotImplementedError(
            "The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    target = lc.lapack_target(routine, operand_aval.dtype)
    if compute_uv:
        s_aval, u_aval, vt_aval = ctx.avals_out
    else:
        s_aval, = ctx.avals_out
        k = min(m, n)
        u_aval = ShapedArray((*batch, m, m if full_matrices else k), operand_aval.dtype)
        vt_aval = ShapedArray((*batch, n if full_matrices else k, n), operand_aval.dtype)
    out_avals = [operand_aval, s_aval, u_aval, vt_aval, _info_aval(batch)]
    _, s, u, vt, info = lc.ffi_call(ctx, target, [operand], out_avals, {0: 0},
                                    {"mode": lc.char(_svd_mode(compute_uv, full_matrices))})
    b = ctx.builder
    ok = lc.info_ok(b, info)
    results = [lc.replace_not_ok_with_nan(b, batch, ok, s, s_aval)]
    if compute_uv:
        results.append(lc.replace_not_ok_with_nan(b, batch, ok, u, u_aval))
        results.append(lc.replace_not_ok_with_nan(b, batch, ok, vt, vt_aval))
    return results


lowering.register_lowering(svd_p, _svd_lowering)


# ---------------------------------------------------------------------------------------------
# geqrf, geqp3, householder_product

def _geqrf_shape_rule(shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    m, n = shape
    return shape, (min(m, n),)


geqrf_p = lc.linalg_primitive("geqrf", lambda d: (d, d), (lc.FLOAT_OR_COMPLEX,), (2,),
                              _geqrf_shape_rule, multiple_results=True)


def geqrf(a: Any) -> tuple[Any, Any]:
    """LAPACK's QR factorization in compact form.

    Lowers to `stablehlo.custom_call @lapack_?geqrf_ffi`.

    Args:
      a: `[..., m, n]` matrices.
    Returns:
      `(a_out, taus)`: `R` in the upper triangle of `a_out`, the Householder reflectors of
      `Q` below it, and their scale factors `taus` (`[..., min(m, n)]`).
    """
    a_out, taus = geqrf_p.bind(a)
    return a_out, taus


def _geqrf_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value) -> list[ir.Value]:
    target = lc.lapack_target("geqrf_ffi", ctx.avals_in[0].dtype)
    return lc.ffi_call(ctx, target, [operand], list(ctx.avals_out), {0: 0})


lowering.register_lowering(geqrf_p, _geqrf_lowering)


def _geqp3_shape_rule(a_shape: tuple[int, ...], jpvt_shape: tuple[int, ...], **_: Any
                      ) -> tuple[tuple[int, ...], ...]:
    m, n = a_shape
    return a_shape, jpvt_shape, (min(m, n),)


geqp3_p = lc.linalg_primitive("geqp3", lambda d, jd, **_: (d, jd, d),
                              (lc.FLOAT_OR_COMPLEX, lc.INTEGER), (2, 1), _geqp3_shape_rule,
                              multiple_results=True, require_same=False)


def geqp3(a: Any, jpvt: Any, *, use_magma: bool | None = None) -> tuple[Any, Any, Any]:
    """LAPACK's column-pivoted QR factorization in compact form.

    Lowers to `stablehlo.custom_call @lapack_?geqp3_ffi`.

    Args:
      a: `[..., m, n]` matrices.
      jpvt: `[..., n]` integers: columns with a nonzero entry lead, the others are pivoted.
      use_magma: ignored on CPU.
    Returns:
      `(a_out, jpvt_out, taus)` as `geqrf`'s, with the 1-based column order `jpvt_out`
      (`a[..., jpvt_out - 1] = Q @ R`).
    """
    a_out, jpvt_out, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
    return a_out, jpvt_out, taus


def _geqp3_lowering(ctx: lowering.LoweringRuleContext, a: ir.Value, jpvt: ir.Value, *,
                    use_magma: bool | None) -> list[ir.Value]:
    target = lc.lapack_target("geqp3_ffi", ctx.avals_in[0].dtype)
    return lc.ffi_call(ctx, target, [a, jpvt], list(ctx.avals_out), {0: 0, 1: 1})


lowering.register_lowering(geqp3_p, _geqp3_lowering)


def _householder_product_shape_rule(a_shape: tuple[int, ...], taus_shape: tuple[int, ...],
                                    **_: Any) -> tuple[int, ...]:
    m, n = a_shape
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as many "
                         f"rows as columns, got shape {a_shape}")
    if taus_shape[0] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows "
                         "than the minimum of the first argument's rows and columns.")
    return a_shape


householder_product_p = lc.linalg_primitive(
    "householder_product", lambda d, td: d, (lc.FLOAT_OR_COMPLEX, lc.FLOAT_OR_COMPLEX), (2, 1),
    _householder_product_shape_rule)


def householder_product(a: Any, taus: Any) -> Any:
    """The product of the elementary Householder reflectors stored in `a` and `taus` (the
    orthonormal factor `Q` of `geqrf`'s results).

    Lowers to `stablehlo.custom_call @lapack_?orgqr_ffi` (`ungqr` for complex).

    Args:
      a: `[..., m, n]` matrices (m >= n), reflectors below the diagonal.
      taus: `[..., k]` scale factors, k <= n.
    Returns:
      `[..., m, n]` matrices with orthonormal columns.
    """
    return householder_product_p.bind(a, taus)


def _householder_product_lowering(ctx: lowering.LoweringRuleContext, a: ir.Value,
                                  taus: ir.Value) -> ir.Value:
    dt = ctx.avals_in[0].dtype
    routine = "ungqr_ffi" if dtypes.is_complex(dt) else "orgqr_ffi"
    return lc.ffi_call(ctx, lc.lapack_target(routine, dt), [a, taus], list(ctx.avals_out),
                       {0: 0})[0]


lowering.register_lowering(householder_product_p, _householder_product_lowering)


# ---------------------------------------------------------------------------------------------
# qr

def _qr_shape_rule(shape: tuple[int, ...], *, pivoting: bool, full_matrices: bool,
                   **_: Any) -> tuple[tuple[int, ...], ...]:
    m, n = shape
    k = m if full_matrices else min(m, n)
    return ((m, k), (k, n), (n,)) if pivoting else ((m, k), (k, n))


def _qr_dtype_rule(dt: np.dtype, *, pivoting: bool, **_: Any) -> tuple[np.dtype, ...]:
    return (dt, dt, np.dtype(np.int32)) if pivoting else (dt, dt)


qr_p = lc.linalg_primitive("qr", _qr_dtype_rule, (lc.FLOAT_OR_COMPLEX,), (2,), _qr_shape_rule,
                           multiple_results=True)


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, ...]:
    """QR decomposition `x = Q @ R` (`x[..., p] = Q @ R` with `pivoting`).

    Lowers to `lapack_?geqrf_ffi` (`geqp3` when pivoting) and `lapack_?orgqr_ffi` custom
    calls.

    Args:
      x: `[..., m, n]` matrices.
      pivoting: whether to pivot columns so that `R`'s diagonal does not increase.
      full_matrices: whether `Q` is `[..., m, m]` and `R` `[..., m, n]` (else `[..., m, k]`
        and `[..., k, n]`, k = min(m, n)).
      use_magma: ignored on CPU.
    Returns:
      `(q, r)`, or `(q, r, p)` with the int32 column permutation `p` when pivoting.
    """
    q, r, *p = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices,
                         use_magma=use_magma)
    if pivoting:
        return q, r, p[0]
    return q, r


def _thin_qr_jvp(q: Any, r: Any, dx: Any) -> tuple[Any, Any]:
    """dQ and dR of a thin QR decomposition (m >= n) (Townsend, "Differentiating the QR
    decomposition")."""
    dx_rinv = triangular_solve(r, dx)
    qt_dx_rinv = lc.H(q) @ dx_rinv
    qt_dx_rinv_lower = lc.tril(qt_dx_rinv, -1)
    do = qt_dx_rinv_lower - lc.H(qt_dx_rinv_lower)
    # The correction complex inputs need (zero for real ones).
    n = lc.shape(r)[-1]
    eye = lc.expand_leading(lc.eye(do.dtype, n), qt_dx_rinv.ndim - 2)
    do = do + eye * (qt_dx_rinv - lc.real(qt_dx_rinv).astype(qt_dx_rinv.dtype))
    dq = q @ (do - qt_dx_rinv) + dx_rinv
    dr = (qt_dx_rinv - do) @ r
    return dq, dr


def _top_left(x: Any, rows: int, cols: int) -> Any:
    """`x[..., :rows, :cols]` (indexed as jax.numpy indexes: no op when it is all of x)."""
    return x[..., :rows, :cols]


def _permute_columns(x: Any, p: Any) -> Any:
    """`x[..., p]` for an int32 column permutation `p` (per batch element when batched)."""
    batch_rank = len(lc.shape(x)) - 2
    if batch_rank == 0:
        return x[..., p]
    return lc.vmap_leading(lambda m, q: m[..., q], batch_rank, (0, 0))(x, p)


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, pivoting: bool,
            full_matrices: bool, use_magma: bool | None) -> tuple[list[Any], list[Any]]:
    """JAX's rule: the thin rule on the leading square or tall part; for wide matrices
    dR_2 = dQ^H X_2 + Q^H dX_2; for full Q of a tall matrix the extra columns from
    arXiv:2409.13374."""
    x, = primals
    dx, = tangents
    q, r, *p = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices,
                         use_magma=use_magma)
    m, n = lc.shape(x)[-2:]
    if pivoting:
        dx = _permute_columns(dx, p[0])
        # JAX 0.10.2 leaves x unpermuted here, so its wide pivoted tangents are wrong.
        x = _permute_columns(x, p[0])
    if m < n:
        x2 = x[..., :, m:]
        dx1 = dx[..., :, :m]
        dx2 = dx[..., :, m:]
        r1 = r[..., :, :m]
        dq, dr1 = _thin_qr_jvp(q, r1, dx1)
        dr2 = lc.H(dq) @ x2 + lc.H(q) @ dx2
        dr = structural.concatenate((dr1, dr2), dr1.ndim - 1)
    else:
        dq, dr = _full_qr_jvp(q, r, dx, m, n, full_matrices)
    outs = [q, r] + ([p[0]] if pivoting else [])
    tangents_out = [dq, dr] + ([ad.Zero.from_primal_value(p[0])] if pivoting else [])
    return outs, tangents_out


def _full_qr_jvp(q: Any, r: Any, dx: Any, m: int, n: int, full_matrices: bool
                 ) -> tuple[Any, Any]:
    q_mn = q[..., :, :n] if full_matrices else q
    r_nn = r[..., :n, :n] if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return dq_mn, dr_nn
    q_nn = q_mn[..., :n, :]
    q_pn = q_mn[..., n:, :]
    q_mp = q[..., :, n:]
    dq_nn = dq_mn[..., :n, :]
    dq_pn = dq_mn[..., n:, :]
    # Z_pn = Q_pn (Q_nn - I)^-1, from a solve with (Q_nn - I)^H.
    eye = lc.expand_leading(lc.eye(q_nn.dtype, n), q_nn.ndim - 2)
    lu_factor, _, perm = lu(q_nn - eye)
    z_pn_h = lu_solve(lu_factor, perm, lc.H(q_pn), trans=2)
    z_pn = lc.H(z_pn_h)
    dq_mp = dq_mn @ z_pn_h - (q_mn + q_mp @ z_pn) @ lc.H(dq_pn - z_pn @ dq_nn)
    dq = structural.concatenate((dq_mn, dq_mp), dq_mn.ndim - 1)
    zeros = structural.broadcast(structural.convert_element_type(0, dr_nn.dtype),
                                 (*lc.shape(dr_nn)[:-2], m - n, n))
    dr = structural.concatenate((dr_nn, zeros), dr_nn.ndim - 2)
    return dq, dr


ad.primitive_jvps[qr_p] = _qr_jvp


def _qr_decompose(a: Any, *, pivoting: bool, full_matrices: bool, use_magma: bool | None
                  ) -> list[Any]:
    """QR from geqrf (or geqp3) and householder_product, as JAX lowers `qr`."""
    *batch, m, n = lc.shape(a)
    dt = lc.dtype(a)
    if m == 0 or n == 0:
        k = m if full_matrices else min(m, n)
        q = structural.broadcast_in_dim(lc.eye(dt, m, k), (*batch, m, k),
                                        (len(batch), len(batch) + 1))
        r = structural.broadcast(structural.convert_element_type(0, dt), (*batch, k, n))
        if pivoting:
            return [q, r, structural.broadcast(np.int32(0), (*batch, n))]
        return [q, r]
    p = None
    if pivoting:
        jpvt = structural.broadcast(np.int32(0), (*batch, n))
        r, p, taus = geqp3(a, jpvt, use_magma=use_magma)
        p = elementwise.sub(p, np.int32(1))
    else:
        r, taus = geqrf(a)
    if m < n:
        q = householder_product(_top_left(r, m, m), taus)
    elif full_matrices:
        pads = [(0, 0, 0)] * (len(batch) + 1) + [(0, m - n, 0)]
        q = householder_product(slicing.pad(r, np.array(0, dt), pads), taus)
    else:
        q = householder_product(r, taus)
        r = _top_left(r, n, n)
    r = lc.triu(r)
    return [q, r, p] if pivoting else [q, r]


lowering.register_lowering(qr_p, lowering.lower_fun(_qr_decompose))

