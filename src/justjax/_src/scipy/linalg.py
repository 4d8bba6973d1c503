"""`jax.scipy.linalg`: SciPy's decompositions and solves on `lax.linalg`.

Arguments SciPy has for memory or input checking (`overwrite_a`, `overwrite_b`,
`check_finite`, `lwork`, `debug`, `turbo`) are accepted and unused, as in JAX. The matrix
functions (expm, sqrtm, polar, ...) live in `linalg_matfuncs`, the special matrices
(toeplitz, hilbert, ...) in `linalg_special`.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.lax import dot as lax_dot
from justjax._src.lax import linalg as lax_linalg
from justjax._src.lax import structural
from justjax._src.lax.control_flow.solves import custom_linear_solve
from justjax._src.lax.linalg_triangular import broadcasted_matvec, check_solve_shapes
from justjax._src.interpreters import batching
from justjax._src.numpy import (array_creation, diagonals, joining, linalg as jnp_linalg,
                                shape_ops, tensor, ufuncs, util)
from justjax._src.numpy.vectorize import vectorize

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "hessenberg", "inv", "lu",
           "lu_factor", "lu_solve", "qr", "qr_multiply", "schur", "solve", "solve_triangular",
           "svd"]

_HIGHEST = lax_dot.Precision.HIGHEST


# ---------------------------------------------------------------------------------------------
# Cholesky.

@util.jitted_as_in_jax(static_argnames=("lower",))
def _cholesky(a: Any, lower: bool) -> Any:
    a, = util.promote_dtypes_inexact(array_creation.asarray(a))
    factor = lax_linalg.cholesky(a if lower else ufuncs.conj(a.mT), symmetrize_input=False)
    return factor if lower else ufuncs.conj(factor.mT)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor of Hermitian positive-definite matrices: `a = U^H U` (upper, the
    default) or `a = L L^H`.

    Args:
      a: `(..., N, N)` matrices; only the triangle of the factor is read.
      lower: whether to return `L` (else `U`).
      overwrite_a, check_finite: unused, as in JAX.
    Returns:
      `(..., N, N)` triangular factors (NaN where `a` is not positive definite).
    """
    del overwrite_a, check_finite
    return _cholesky(a, lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """The Cholesky factorization for `cho_solve`.

    Args:
      a: `(..., N, N)` Hermitian positive-definite matrices.
      lower: whether to compute the lower factor.
      overwrite_a, check_finite: unused.
    Returns:
      `(c, lower)`: the factor and which triangle it is.
    """
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _solve_signature(fun_name: str, a: Any, b: Any) -> str:
    """The vectorize signature of a solve with `a` of matrices: a vector `b`, a batch of
    vectors (deprecated, as in JAX), or matrices."""
    if b.ndim == 1:
        return "(n,n),(n)->(n)"
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        call = {"cho_solve": "cho_solve(c_and_lower, b[..., None])",
                "lu_solve": "lu_solve(lu_and_piv, b[..., None])",
                "solve_triangular": "solve_triangular(a, b[..., None])"}[fun_name]
        warnings.warn(f"jax.scipy.linalg.{fun_name}: batched 1D solves with b.ndim > 1 are "
                      "deprecated, and in the future will be treated as a batched 2D solve. "
                      f"Use {call}.squeeze(-1) to avoid this warning.",
                      category=FutureWarning, stacklevel=4)
        return "(n,n),(n)->(n)"
    return "(n,n),(n,k)->(n,k)"


@util.jitted_as_in_jax(static_argnames=("lower",))
def _cho_solve(c: Any, b: Any, lower: bool) -> Any:
    c, b = util.promote_dtypes_inexact(array_creation.asarray(c), array_creation.asarray(b))
    signature = _solve_signature("cho_solve", c, b)
    # Solve with the factor, then with its conjugate transpose.
    first = functools.partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                              transpose_a=not lower, conjugate_a=not lower)
    second = functools.partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                               transpose_a=lower, conjugate_a=lower)
    b = vectorize(first, signature=signature)(c, b)
    return vectorize(second, signature=signature)(c, b)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solves `a x = b` from `cho_factor(a)`.

    Args:
      c_and_lower: `(c, lower)` as `cho_factor` returns it.
      b: `(N,)` vector or `(..., N, M)` matrices.
      overwrite_b, check_finite: unused.
    Returns:
      `x`, of `b`'s shape (batch dimensions broadcast).
    """
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, lower)


# ---------------------------------------------------------------------------------------------
# SVD, det, eigh, schur, inv.

@util.jitted_as_in_jax(static_argnames=("full_matrices", "compute_uv"))
def _svd(a: Any, *, full_matrices: bool, compute_uv: bool) -> Any:
    a, = util.promote_dtypes_inexact(array_creation.asarray(a))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """Singular value decomposition `a = U diag(s) Vh`.

    Args:
      a: `(..., N, M)` matrices.
      full_matrices: whether `U` and `Vh` are square (else `(..., N, K)`, `(..., K, M)`).
      compute_uv: whether to return `U` and `Vh` too.
      overwrite_a, check_finite, lapack_driver: unused (see `lax.linalg.svd` for
        algorithms).
    Returns:
      `(U, s, Vh)`, or `s` alone without `compute_uv`.
    """
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of `(..., N, N)` matrices."""
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


@util.jitted_as_in_jax(static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a: Any, b: Any, lower: bool, eigvals_only: bool, eigvals: None, type: int) -> Any:
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a, = util.promote_dtypes_inexact(array_creation.asarray(a))
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: None = None, type: int = 1, check_finite: bool = True) -> Any:
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices.

    Args:
      a: `(..., N, N)` Hermitian matrices.
      b: must be None (the generalized problem is not implemented, as in JAX).
      lower: which triangle of `a` is read.
      eigvals_only: whether to return the eigenvalues alone.
      eigvals, type: must be None and 1.
      overwrite_a, overwrite_b, turbo, check_finite: unused.
    Returns:
      `(w, v)`, or `w` with `eigvals_only`.
    """
    del overwrite_a, overwrite_b, turbo, check_finite
    return _eigh(a, b, lower, eigvals_only, eigvals, type)


@util.jitted_as_in_jax(static_argnames=("output",))
def _schur(a: Any, output: str) -> tuple[Any, Any]:
    if output == "complex":
        a = a.astype(dtypes.to_complex_dtype(a.dtype))
    t, z = lax_linalg.schur(a)
    return t, z


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """Schur decomposition `a = Z T Z^H`.

    Args:
      a: `(..., N, N)` matrices.
      output: 'real' (`T` quasi-upper-triangular for real `a`) or 'complex' (`T` upper
        triangular).
    Returns:
      `(T, Z)`.
    """
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    return _schur(a, output)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of `(..., N, N)` matrices."""
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


# ---------------------------------------------------------------------------------------------
# LU.

@util.jitted_as_in_jax(static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True
              ) -> tuple[Any, Any]:
    """The LU factorization for `lu_solve`.

    Args:
      a: `(..., M, N)` matrices.
      overwrite_a, check_finite: unused.
    Returns:
      `(lu, piv)`: `L` (unit diagonal, not stored) and `U` packed in `lu`; the row swaps
      `piv` (`(..., K)` int32, K = min(M, N)).
    """
    del overwrite_a, check_finite
    a, = util.promote_dtypes_inexact(array_creation.asarray(a))
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


@util.jitted_as_in_jax(static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solves `a x = b` (trans 0), `a^T x = b` (1) or `a^H x = b` (2) from `lu_factor(a)`.

    Args:
      lu_and_piv: `(lu, piv)` as `lu_factor` returns it.
      b: `(M,)` vector or `(..., M, K)` matrices.
      trans: 0, 1 or 2.
      overwrite_b, check_finite: unused.
    Returns:
      `x`, of `b`'s shape (batch dimensions broadcast).
    """
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, b = util.promote_dtypes_inexact(array_creation.asarray(lu_), array_creation.asarray(b))
    m = lu_.shape[-2]
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    signature = _solve_signature("lu_solve", lu_, b)
    signature = signature.replace("(n,n),", "(n,n),(n),", 1)
    solve_one = functools.partial(lax_linalg.lu_solve, trans=trans)
    return vectorize(solve_one, signature=signature)(lu_, perm, b)


@util.jitted_as_in_jax(static_argnums=(1,))
def _lu(a: Any, permute_l: bool) -> Any:
    a, = util.promote_dtypes_inexact(array_creation.asarray(a))
    lu_, _, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    m, n = np.shape(a)
    p = ufuncs.real(array_creation.array(
        permutation[None, :] == array_creation.arange(m, dtype=permutation.dtype)[:, None],
        dtype=dtype))
    k = min(m, n)
    lower = diagonals.tril(lu_, -1)[:, :k] + array_creation.eye(m, k, dtype=dtype)
    upper = diagonals.triu(lu_)[:k, :]
    if permute_l:
        return tensor.matmul(p, lower, precision=_HIGHEST), upper
    return p, lower, upper


@util.jitted_as_in_jax(static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> Any:
    """LU decomposition with partial pivoting: `a = P L U`.

    Args:
      a: an `(M, N)` matrix.
      permute_l: whether to return `(P @ L, U)`.
      overwrite_a, check_finite: unused.
    Returns:
      `(P, L, U)` (`(M, M)`, `(M, K)`, `(K, N)`, K = min(M, N)), or `(P @ L, U)`.
    """
    del overwrite_a, check_finite
    return _lu(a, permute_l)


# ---------------------------------------------------------------------------------------------
# QR.

@util.jitted_as_in_jax(static_argnames=("mode", "pivoting"))
def _qr(a: Any, mode: str, pivoting: bool) -> tuple[Any, ...]:
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    a, = util.promote_dtypes_inexact(array_creation.asarray(a))
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Any, ...]:
    """QR decomposition `a = Q R` (`a[:, P] = Q R` with pivoting).

    Args:
      a: `(..., M, N)` matrices.
      mode: 'full' (`Q` `(M, M)`), 'economic' (`Q` `(M, K)`, `R` `(K, N)`) or 'r' (`R`
        only).
      pivoting: whether to pivot columns (R's diagonal non-increasing in magnitude).
      overwrite_a, lwork, check_finite: unused.
    Returns:
      `(Q, R)`, `(Q, R, P)`, `(R,)` or `(R, P)`.
    """
    del overwrite_a, lwork, check_finite
    return _qr(a, mode, pivoting)


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, ...]:
    """The QR decomposition of `a` and a product with its `Q`, without forming `Q`.

    Args:
      a: `(..., M, N)` matrices.
      c: `(..., K, P)` for mode 'left' (`Q @ c`), `(..., P, M)` for mode 'right'
        (`c @ Q`); a vector is a column ('left') or a row ('right').
      mode: 'left' or 'right'.
      pivoting: whether to pivot `a`'s columns (the permutation is returned third).
      conjugate: whether to use `conj(Q)`.
      overwrite_a, overwrite_c: unused.
    Returns:
      `(product, R)` or `(product, R, P)`; `R` is `(..., K, N)`.
    """
    del overwrite_a, overwrite_c
    a, c = util.promote_dtypes_inexact(array_creation.asarray(a), array_creation.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                         f"rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")
    batch = shape_ops.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = shape_ops.broadcast_to(a, batch + a.shape[-2:])
    c = shape_ops.broadcast_to(c, batch + c.shape[-2:])
    p = None
    if pivoting:
        jpvt = array_creation.zeros(a.shape[:-2] + (n,), dtype=np.int32)
        r, p, taus = lax_linalg.geqp3(a, jpvt)
        p = p - 1
    else:
        r, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        zeros = array_creation.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], dtype=c.dtype)
        c = joining.concatenate([c, zeros], axis=-2)
    # conj(Q) c = conj(Q^H^T) ... is computed as (c^T Q^H)^T, and c conj(Q) as (Q^H c^T)^T.
    if conjugate:
        c = c.swapaxes(-1, -2)
    left = (mode == "left") != conjugate
    product = lax_linalg.ormqr(r, taus, c, left=left, transpose=conjugate)
    if conjugate:
        product = product.swapaxes(-1, -2)
    if mode == "right":
        product = product[..., :k]
    if onedim:
        product = product.ravel()
    r = diagonals.triu(r[..., :k, :])
    return (product, r, p) if pivoting else (product, r)


# ---------------------------------------------------------------------------------------------
# Solves.

@util.jitted_as_in_jax(static_argnames=("assume_a", "lower"))
def _solve(a: Any, b: Any, assume_a: str, lower: bool) -> Any:
    if assume_a != "pos":
        return jnp_linalg.solve(a, b)
    a, b = util.promote_dtypes_inexact(array_creation.asarray(a), array_creation.asarray(b))
    check_solve_shapes(a, b)
    out_shape = tuple(d_a if d_b == 1 else d_b
                      for d_a, d_b in zip(a.shape[:-1] + (1,), b.shape, strict=False))
    b = structural.broadcast_in_dim(b, out_shape, tuple(range(b.ndim)))
    # The factorization is reused by the derivatives (custom_linear_solve differentiates
    # implicitly), so it needs no gradient of its own.
    factors = cho_factor(structural.stop_gradient(a), lower=lower)
    solve_one = functools.partial(
        custom_linear_solve, lambda x: broadcasted_matvec(a, x),
        solve=lambda _, x: cho_solve(factors, x), symmetric=True)
    if a.ndim == b.ndim + 1:
        return solve_one(b)
    # Matrices b: one custom_linear_solve per column.
    column_axis = b.ndim - 1
    out = batching.vmap_positional(solve_one, (column_axis,))(b)
    return shape_ops.moveaxis(out, 0, max(a.ndim, b.ndim) - 1)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """Solves `a x = b`.

    Args:
      a: `(..., N, N)` matrices.
      b: `(N,)` vector or `(..., N, M)` matrices.
      lower: which triangle is read with `assume_a='pos'`.
      assume_a: 'gen', 'sym', 'her' (LU) or 'pos' (Cholesky).
      overwrite_a, overwrite_b, debug, check_finite: unused.
    Returns:
      `x`.
    """
    del overwrite_a, overwrite_b, debug, check_finite
    valid_assume_a = ["gen", "sym", "her", "pos"]
    if assume_a not in valid_assume_a:
        raise ValueError(f"Expected assume_a to be one of {valid_assume_a}; got {assume_a!r}")
    return _solve(a, b, assume_a, lower)


@util.jitted_as_in_jax(static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a: Any, b: Any, trans: int | str, lower: bool,
                      unit_diagonal: bool) -> Any:
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = util.promote_dtypes_inexact(array_creation.asarray(a), array_creation.asarray(b))
    signature = _solve_signature("solve_triangular", a, b)
    solve_one = functools.partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                                  transpose_a=transpose_a, conjugate_a=conjugate_a,
                                  unit_diagonal=unit_diagonal)
    return vectorize(solve_one, signature=signature)(a, b)


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Any:
    """Solves `op(a) x = b` for triangular `a`.

    Args:
      a: `(..., N, N)` triangular matrices (only the triangle `lower` names is read).
      b: `(N,)` vector or `(..., N, M)` matrices.
      trans: 0/'N' (`a`), 1/'T' (`a^T`) or 2/'C' (`a^H`).
      lower: whether `a` is lower triangular.
      unit_diagonal: whether `a`'s diagonal is taken to be ones.
      overwrite_b, debug, check_finite: unused.
    Returns:
      `x`.
    """
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, lower, unit_diagonal)


# ---------------------------------------------------------------------------------------------
# Hessenberg.

@util.jitted_as_in_jax(static_argnames=("calc_q", "check_finite", "overwrite_a"))
def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """Upper Hessenberg form `a = Q H Q^H`.

    Args:
      a: `(..., N, N)` matrices.
      calc_q: whether to return the unitary `Q` too.
      overwrite_a, check_finite: unused.
    Returns:
      `H`, or `(H, Q)` with `calc_q`.
    """
    del overwrite_a, check_finite
    n = np.shape(a)[-1]
    if n == 0:
        zeros = array_creation.zeros_like(a)
        return (zeros, array_creation.zeros_like(a)) if calc_q else zeros
    a_out, taus = lax_linalg.hessenberg(a)
    h = diagonals.triu(a_out, -1)
    if not calc_q:
        return h
    # Q = diag(1, Q'), Q' the product of the reflectors below the subdiagonal.
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    batch = a_out.shape[:-2]
    dtype = a_out.dtype
    top = joining.concatenate([array_creation.ones(batch + (1, 1), dtype=dtype),
                               array_creation.zeros(batch + (1, n - 1), dtype=dtype)], axis=-1)
    bottom = joining.concatenate([array_creation.zeros(batch + (n - 1, 1), dtype=dtype), q],
                                 axis=-1)
    return h, joining.concatenate([top, bottom], axis=-2)

