"""`jax.scipy.linalg.eigh_tridiagonal`: eigenvalues of a Hermitian tridiagonal matrix by
bisection on Sturm sequence counts, eigenvectors by inverse iteration.

The count of eigenvalues below `x` is the number of negative pivots of `T - x I`'s LDL^T
factorization (the Sturm sequence); bisecting each target count's interval until it is
narrower than eps * |T| gives every eigenvalue independently (Demmel, "Applied Numerical
Linear Algebra", 5.3.4). Eigenvectors come from a few steps of inverse iteration with
`lax.linalg.tridiagonal_solve(..., perturb_singular=True)` from random starts, the vectors of
clustered eigenvalues re-orthogonalized after each step.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.lax import linalg as lax_linalg
from justjax._src.lax.control_flow.library import fori_loop
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.numpy import (array_creation, joining, linalg_extra, reductions, selection,
                                ufuncs, util)
from justjax._src.random import distributions, keys

__all__ = ["eigh_tridiagonal"]


def _sturm_counts(alpha: Any, beta_sq: Any, pivmin: Any, alpha0_perturbation: Any,
                  x: Any) -> Any:
    """For each shift in `x`, how many eigenvalues lie below it: the negative pivots of
    `T - x I`, tiny pivots replaced by -pivmin (LAPACK's dstebz safeguard)."""
    n = alpha.shape[0]
    q = alpha[0] - x
    count = selection.where(q < 0, 1, 0).astype(np.int32)
    q = selection.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i: Any, carry: tuple) -> tuple:
        q, count = carry
        q = alpha[i] - beta_sq[i - 1] / q - x
        small = q <= pivmin
        count = selection.where(small, count + 1, count)
        q = selection.where(small, ufuncs.minimum(q, -pivmin), q)
        return q, count

    _, count = fori_loop(1, n, step, (q, count))
    return count


def _cluster_ids(eigvals: Any) -> Any:
    """Consecutive eigenvalues closer than sqrt(eps) |T| share an id (their inverse-iteration
    vectors need re-orthogonalizing)."""
    eps = np.finfo(eigvals.dtype).eps
    t_norm = ufuncs.maximum(ufuncs.abs(eigvals[0]), ufuncs.abs(eigvals[-1]))
    gap = eigvals[1:] - eigvals[:-1]
    starts_new = gap >= np.sqrt(eps) * t_norm
    return joining.concatenate([array_creation.zeros(1, np.int32),
                                reductions.cumsum(starts_new.astype(np.int32))])


def _orthogonalize_clusters(v: Any, ids: Any) -> Any:
    """Gram-Schmidt of each row of `v` against the earlier rows of its cluster."""
    k = v.shape[0]
    rows = array_creation.arange(k)

    def step(i: Any, v: Any) -> Any:
        earlier = (rows < i) & (ids == ids[i])
        overlaps = selection.where(earlier, ufuncs.conj(v) @ v[i], 0)
        vi = v[i] - overlaps.astype(v.dtype) @ v
        vi = vi / linalg_extra.norm(vi).astype(v.dtype)
        return v.at[i].set(vi)

    return fori_loop(1, k, step, v)


def _eigenvectors(alpha: Any, beta: Any, eigvals: Any, key: Any) -> Any:
    """Inverse iteration for every eigenvalue at once; rows are the eigenvectors."""
    n = alpha.shape[0]
    k = eigvals.shape[0]
    solve_dtype = np.result_type(alpha.dtype, beta.dtype)
    base_dtype = np.finfo(solve_dtype).dtype
    dl = joining.concatenate([array_creation.zeros(1, beta.dtype), ufuncs.conj(beta)])
    du = joining.concatenate([beta, array_creation.zeros(1, beta.dtype)])
    dl = array_creation.broadcast_to(dl[None, :], (k, n)).astype(solve_dtype)
    du = array_creation.broadcast_to(du[None, :], (k, n)).astype(solve_dtype)
    shifted = (alpha[None, :] - eigvals[:, None]).astype(solve_dtype)
    ids = _cluster_ids(eigvals)
    v = distributions.normal(key, (k, n), dtype=base_dtype).astype(solve_dtype)
    v = v / linalg_extra.norm(v, axis=-1, keepdims=True).astype(solve_dtype)

    def step(state: tuple) -> tuple:
        i, v, norm, _ = state
        v_new = lax_linalg.tridiagonal_solve(dl, shifted, du, v[:, :, None],
                                             perturb_singular=True)[..., 0]
        norm_new = linalg_extra.norm(v_new, axis=-1, keepdims=True)
        v_new = v_new / norm_new.astype(v_new.dtype)
        return i + 1, _orthogonalize_clusters(v_new, ids), norm_new[:, 0], norm

    def growing(state: tuple) -> Any:
        # Stop after 5 steps or once no vector's norm grows by 10% any more.
        i, _, norm, norm_old = state
        return (i < 5) & reductions.any(norm >= 1.1 * norm_old)

    ones = array_creation.ones(k, dtype=eigvals.dtype)
    _, v, _, _ = while_loop(growing, step, (0, v, ones, array_creation.zeros_like(ones)))
    return v


def _targets(n: int, select: str, select_range: Any) -> Any:
    if select == "a":
        return array_creation.arange(n, dtype=np.int32)
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return array_creation.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


@util.jitted_as_in_jax(static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """Eigenvalues (ascending) and eigenvectors of the Hermitian tridiagonal matrix with
    diagonal `d` and off-diagonal `e`.

    Args:
      d: `(N,)` diagonal (its real part is used).
      e: `(N - 1,)` off-diagonal, of `d`'s dtype.
      eigvals_only: whether to return the eigenvalues alone.
      select: 'a' (all) or 'i' (indices `select_range[0]..select_range[1]`, inclusive).
      select_range: the index range for select 'i'.
      tol: the absolute tolerance of the bisection (at least eps * |T|).
      key: the PRNG key of inverse iteration's starting vectors (key(42) by default).
    Returns:
      The eigenvalues, or `(eigenvalues, eigenvectors)` with the vectors in columns.
    """
    if not eigvals_only and key is None:
        key = keys.key(42)
    alpha = array_creation.asarray(d)
    beta = array_creation.asarray(e)
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported or beta.dtype not in supported:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        "jax.scipy.linalg.eigh_tridiagonal, got "
                        f"{alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        if eigvals_only:
            return ufuncs.real(alpha)
        return ufuncs.real(alpha), array_creation.eye(n, dtype=alpha.dtype)
    if dtypes.is_complex(alpha.dtype):
        alpha = ufuncs.real(alpha)
        beta_sq = ufuncs.real(beta * ufuncs.conj(beta))
        beta_abs = ufuncs.sqrt(beta_sq)
    else:
        beta_abs = ufuncs.abs(beta)
        beta_sq = ufuncs.square(beta)
    # Gershgorin bounds on the spectrum.
    row_sums = joining.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    lambda_max = reductions.amax(alpha + row_sums)
    lambda_min = reductions.amin(alpha - row_sums)
    t_norm = ufuncs.maximum(ufuncs.abs(lambda_min), ufuncs.abs(lambda_max))
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * ufuncs.maximum(1, reductions.amax(beta_sq))
    alpha0_perturbation = ufuncs.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = ufuncs.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1
    targets = _targets(n, select, select_range)
    # Widened slightly so that the bounds are strict.
    fudge = 2.1
    slack = array_creation.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    shape = np.shape(targets)
    lower = array_creation.broadcast_to(lambda_min - slack - 2 * fudge * pivmin, shape)
    upper = array_creation.broadcast_to(lambda_max + slack + fudge * pivmin, shape)
    pivmin = array_creation.broadcast_to(pivmin, shape)
    alpha0_perturbation = array_creation.broadcast_to(alpha0_perturbation, shape)

    def not_done(state: tuple) -> Any:
        i, lower, _, upper = state
        return (i < max_it) & (abs_tol < reductions.amax(upper - lower))

    def bisect(state: tuple) -> tuple:
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = selection.where(counts <= targets, mid, lower)
        upper = selection.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = while_loop(not_done, bisect, (0, lower, 0.5 * (upper + lower), upper))
    if eigvals_only:
        return mid
    return mid, _eigenvectors(alpha, beta, mid, key).T
