"""`jax.scipy.sparse.linalg`: iterative solvers of `A x = b` (`cg`, `bicgstab`, `gmres`) for
linear operators given as functions (or matrices), on pytrees of arrays.

Each iteration is a `lax.while_loop`; the solve is wrapped in `lax.custom_linear_solve`, so
derivatives come from solving the (transposed) system again rather than from differentiating
through the iterations, as in JAX. Tolerances follow SciPy's non-legacy rule: stop when
`norm(residual) <= max(tol * norm(b), atol)`.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.lax import dot as lax_dot
from justjax._src.lax.control_flow.solves import custom_linear_solve
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.lax.linalg_triangular import triangular_solve
from justjax._src.numpy import array_creation, joining, selection, tensor, ufuncs

__all__ = ["bicgstab", "cg", "gmres"]

_HIGHEST = lax_dot.Precision.HIGHEST


# ---------------------------------------------------------------------------------------------
# Pytree vector arithmetic.

def _vdot(x: Any, y: Any) -> Any:
    return tensor.vdot(x, y, precision=_HIGHEST)


def _vdot_real_part(x: Any, y: Any) -> Any:
    """Re(x^H y) without the cross terms: real even for complex input (the quadratic forms
    CG computes are real for Hermitian positive-definite operators)."""
    result = _vdot(ufuncs.real(x), ufuncs.real(y))
    if dtypes.is_complex(core.get_aval(x).dtype) or dtypes.is_complex(core.get_aval(y).dtype):
        result = result + _vdot(ufuncs.imag(x), ufuncs.imag(y))
    return result


def _vdot_real_tree(x: Any, y: Any) -> Any:
    return sum(tree_util.tree_leaves(tree_util.tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x: Any, y: Any) -> Any:
    return sum(tree_util.tree_leaves(tree_util.tree_map(_vdot, x, y)))


def _norm(x: Any) -> Any:
    leaves = tree_util.tree_leaves(x)
    return ufuncs.sqrt(sum(_vdot_real_part(v, v) for v in leaves))


def _mul(scalar: Any, tree: Any) -> Any:
    return tree_util.tree_map(lambda v: scalar * v, tree)


def _add(x: Any, y: Any) -> Any:
    return tree_util.tree_map(operator.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree_util.tree_map(operator.sub, x, y)


def _identity(x: Any) -> Any:
    return x


def _result_dtype(tree: Any) -> np.dtype:
    return dtypes.result_type(*tree_util.tree_leaves(tree))


def _normalize_matvec(f: Any) -> Callable[[Any], Any]:
    """A function computing `f @ x`, from a function or a square matrix."""
    if callable(f):
        return f
    if isinstance(f, np.ndarray) or isinstance(f, core.Tracer) or hasattr(f, "aval"):
        if np.ndim(f) != 2 or np.shape(f)[0] != np.shape(f)[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{np.shape(f)}")
        return functools.partial(tensor.dot, f, precision=_HIGHEST)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _shapes(tree: Any) -> list[tuple[int, ...]]:
    return [np.shape(x) for x in tree_util.tree_leaves(tree)]


def _stop_tolerance(b: Any, tol: float, atol: float) -> Any:
    """The squared residual norm at which to stop: max(tol^2 |b|^2, atol^2)."""
    bs = _vdot_real_tree(b, b)
    return ufuncs.maximum(ufuncs.square(tol) * bs, ufuncs.square(atol))


# ---------------------------------------------------------------------------------------------
# CG and BiCGSTAB.

def _cg_solve(A: Callable, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float,
              M: Callable) -> Any:
    """Preconditioned conjugate gradients."""
    atol2 = _stop_tolerance(b, tol, atol)
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _result_dtype(p0)
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

    def cond_fun(value: tuple) -> Any:
        _, r, gamma, _, k = value
        rs = ufuncs.real(gamma) if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value: tuple) -> tuple:
        x, r, gamma, p, k = value
        ap = A(p)
        alpha = gamma / _vdot_real_tree(p, ap).astype(dtype)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, ap))
        z = M(r)
        gamma_new = _vdot_real_tree(r, z).astype(dtype)
        p = _add(z, _mul(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    x, *_ = while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))
    return x


def _bicgstab_solve(A: Callable, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float,
                    M: Callable) -> Any:
    """Preconditioned BiCGSTAB; stops early on breakdown (rho, alpha or omega zero)."""
    atol2 = _stop_tolerance(b, tol, atol)
    r0 = _sub(b, A(x0))
    one = array_creation.asarray(1, dtype=_result_dtype(b))

    def cond_fun(value: tuple) -> Any:
        _, r, *_, k = value
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value: tuple) -> tuple:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_new = _vdot_tree(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _vdot_tree(rhat, q)
        s = _sub(r, _mul(alpha, q))
        converged = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_half = _add(x, _mul(alpha, phat))
        x = tree_util.tree_map(functools.partial(selection.where, converged), x_half,
                               _add(x_half, _mul(omega, shat)))
        r = tree_util.tree_map(functools.partial(selection.where, converged), s,
                               _sub(s, _mul(omega, t)))
        k = selection.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = selection.where(rho_new == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    initial = (x0, r0, r0, one, one, one, r0, r0, 0)
    x, *_ = while_loop(cond_fun, body_fun, initial)
    return x


def _isolve(solver: Callable, A: Any, b: Any, x0: Any, *, tol: float, atol: float,
            maxiter: int | None, M: Any, check_symmetric: bool) -> tuple[Any, None]:
    if x0 is None:
        x0 = tree_util.tree_map(array_creation.zeros_like, b)
    b = tree_util.tree_map(array_creation.asarray, b)
    x0 = tree_util.tree_map(array_creation.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(int(np.size(leaf)) for leaf in tree_util.tree_leaves(b))
    A = _normalize_matvec(A)
    M = _identity if M is None else _normalize_matvec(M)
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_util.tree_structure(x0)} vs {tree_util.tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                         f"{_shapes(b)}")
    solve = functools.partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # Real positive-definite operators are symmetric (CG's assumption).
    symmetric = check_symmetric and not any(
        dtypes.is_complex(core.get_aval(leaf).dtype) for leaf in tree_util.tree_leaves(b))
    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Conjugate gradients for `A x = b` with `A` Hermitian positive definite.

    Args:
      A: the operator: a function `x -> A x` on b's structure, or a square matrix.
      b: the right-hand side (a pytree of arrays).
      x0: the starting guess (zeros by default).
      tol, atol: stop at `norm(b - A x) <= max(tol * norm(b), atol)`.
      maxiter: at most this many iterations (10 * size of b by default).
      M: a preconditioner approximating `A^-1` (a function or matrix).
    Returns:
      `(x, None)`: the solution, and `None` where SciPy returns convergence information.
    """
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """BiCGSTAB for `A x = b` with general `A`.

    Args:
      A: the operator: a function `x -> A x` on b's structure, or a square matrix.
      b: the right-hand side (a pytree of arrays).
      x0: the starting guess (zeros by default).
      tol, atol: stop at `norm(b - A x) <= max(tol * norm(b), atol)`.
      maxiter: at most this many iterations (10 * size of b by default).
      M: a preconditioner approximating `A^-1` (a function or matrix).
    Returns:
      `(x, None)`.
    """
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=False)


# ---------------------------------------------------------------------------------------------
# GMRES.

def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Any]:
    """`x / norm(x)` and `norm(x)`, both zero where the norm is at most `thresh` (the
    dtype's eps by default)."""
    norm = _norm(x)
    dtype = _result_dtype(x)
    if thresh is None:
        thresh = dtypes.finfo(norm.dtype).eps
    thresh = ufuncs.real(array_creation.asarray(thresh).astype(dtype))
    use_norm = norm > thresh
    norm_cast = norm.astype(dtype)
    normalized = tree_util.tree_map(lambda y: selection.where(use_norm, y / norm_cast, 0.0), x)
    return normalized, selection.where(use_norm, norm, 0.0)


def _project_on_columns(basis: Any, v: Any) -> Any:
    """`basis^H v` summed over the pytree's leaves (the Krylov vectors are basis columns)."""
    projections = tree_util.tree_map(
        lambda X, y: tensor.einsum("...n,...->n", ufuncs.conj(X), y, precision=_HIGHEST),
        basis, v)
    return functools.reduce(operator.add, tree_util.tree_leaves(projections))


def _gram_schmidt(basis: Any, x: Any, x_norm: Any, max_iterations: int = 2
                  ) -> tuple[Any, Any]:
    """Classical Gram-Schmidt of `x` against `basis`'s columns, repeated (at most
    `max_iterations` times) while the remainder shrank below `x_norm / sqrt(2)` (Kahan's
    "twice is enough"). Returns the remainder and the overlaps."""
    num_columns = tree_util.tree_leaves(basis)[0].shape[-1]
    dtype = _result_dtype(basis)
    overlaps = array_creation.zeros(num_columns, dtype=dtype)

    def cond_fun(carry: tuple) -> Any:
        k, not_done, _, _ = carry
        return (k < max_iterations) & not_done

    def body_fun(carry: tuple) -> tuple:
        k, _, r, overlaps = carry
        h = _project_on_columns(basis, r)
        projection = tree_util.tree_map(
            lambda X: tensor.dot(X, h, precision=_HIGHEST), basis)
        r = _sub(r, projection)
        overlaps = overlaps + h
        r_norm = _norm(r)
        return k + 1, r_norm < x_norm / np.sqrt(2), r, overlaps

    _, _, r, overlaps = while_loop(cond_fun, body_fun, (0, True, x, overlaps))
    return r, overlaps


def _arnoldi_step(k: Any, A: Callable, M: Callable, V: Any, H: Any) -> tuple[Any, Any, Any]:
    """The k-th Arnoldi step: `M(A(V[:, k]))` orthonormalized against V into `V[:, k+1]`,
    its overlaps into row k of H (H is stored transposed: `[restart, restart + 1]`)."""
    dtype = _result_dtype(V)
    eps = dtypes.finfo(dtype).eps
    v = tree_util.tree_map(lambda X: X[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v, v_norm_0)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_util.tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)
    return V, H, v_norm_1 == 0.


def _initial_basis(unit_residual: Any, restart: int) -> Any:
    return tree_util.tree_map(
        lambda x: array_creation.zeros((*x.shape, restart + 1), x.dtype).at[..., 0].set(x),
        unit_residual)


def _lstsq(a: Any, b: Any) -> Any:
    """The least-squares solution of `a y = b` from the normal equations (Cholesky)."""
    from justjax._src.scipy.linalg import solve
    a_h = ufuncs.conj(a.T)
    return solve(tensor.dot(a_h, a, precision=_HIGHEST), tensor.dot(a_h, b, precision=_HIGHEST),
                 assume_a="pos")


def _gmres_batched(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                   ptol: Any, restart: int, M: Callable) -> tuple[Any, Any, Any]:
    """One restart: the whole Krylov basis, then a dense least-squares problem."""
    V = _initial_basis(unit_residual, restart)
    dtype = _result_dtype(b)
    H = array_creation.eye(restart, restart + 1, dtype=dtype)

    def cond_fun(carry: tuple) -> Any:
        _, _, breakdown, k = carry
        return (k < restart) & ~breakdown

    def body_fun(carry: tuple) -> tuple:
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = while_loop(cond_fun, body_fun, (V, H, False, 0))
    beta = array_creation.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta)
    x = _add(x0, tree_util.tree_map(lambda X: tensor.dot(X[..., :-1], y, precision=_HIGHEST), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _givens(a: Any, b: Any) -> tuple[Any, Any]:
    """Cosine and sine of the rotation taking (a, b) to (r, 0)."""
    def zero_b(_: Any) -> tuple[Any, Any]:
        return array_creation.ones_like(a), array_creation.zeros_like(a)

    def general(_: Any) -> tuple[Any, Any]:
        r = ufuncs.sqrt(ufuncs.abs(a) ** 2 + ufuncs.abs(b) ** 2).astype(a.dtype)
        return a / r, -b / r

    from justjax._src.lax.control_flow.conditionals import cond
    return cond(b == 0, zero_b, general, None)


def _apply_rotations(column: Any, rotations: Any, k: Any) -> Any:
    """Rotations 0..k-1 applied to `column` (H's k-th column), in order."""
    def body(i: Any, column: Any) -> Any:
        c, s = rotations[i, 0], rotations[i, 1]
        top, bottom = column[i], column[i + 1]
        column = column.at[i].set(ufuncs.conj(c) * top - ufuncs.conj(s) * bottom)
        return column.at[i + 1].set(s * top + c * bottom)

    from justjax._src.lax.control_flow.library import fori_loop
    return fori_loop(0, k, body, column)


def _gmres_incremental(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                       ptol: Any, restart: int, M: Callable) -> tuple[Any, Any, Any]:
    """One restart with H's QR factorization updated by Givens rotations at every step, so
    that the residual is known as the basis grows and the restart ends once it is below
    `ptol`."""
    V = _initial_basis(unit_residual, restart)
    dtype = _result_dtype(b)
    R = array_creation.eye(restart, restart + 1, dtype=dtype)
    beta = array_creation.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    rotations = array_creation.zeros((restart, 2), dtype=dtype)

    def cond_fun(carry: tuple) -> Any:
        _, _, beta, _, k = carry
        return (k < restart) & (ufuncs.abs(beta[k]) > ptol)

    def body_fun(carry: tuple) -> tuple:
        V, R, beta, rotations, k = carry
        V, R, _ = _arnoldi_step(k, A, M, V, R)
        column = _apply_rotations(R[k, :], rotations, k)
        c, s = _givens(column[k], column[k + 1])
        rotations = rotations.at[k].set(joining.stack([c, s]))
        column = column.at[k].set(ufuncs.conj(c) * column[k] - ufuncs.conj(s) * column[k + 1])
        column = column.at[k + 1].set(0)
        R = R.at[k, :].set(column)
        top = beta[k]
        beta = beta.at[k].set(ufuncs.conj(c) * top).at[k + 1].set(s * top)
        return V, R, beta, rotations, k + 1

    V, R, beta, _, steps = while_loop(cond_fun, body_fun, (V, R, beta, rotations, 0))
    # The rows of R beyond the steps taken hold the identity: y is zeroed there.
    upper = R[:, :-1].T
    taken = array_creation.arange(restart) < steps
    y = triangular_solve(upper, selection.where(taken, beta[:-1], 0), left_side=True,
                         lower=False)
    x = _add(x0, tree_util.tree_map(lambda X: tensor.dot(X[..., :-1], y, precision=_HIGHEST), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_solve(A: Callable, b: Any, x0: Any, atol: Any, ptol: Any, restart: int,
                 maxiter: int, M: Callable, restart_fun: Callable) -> Any:
    """Restarts until `norm(M(b - A x)) <= atol` or `maxiter` restarts."""
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond_fun(value: tuple) -> Any:
        _, k, _, residual_norm = value
        return (k < maxiter) & (residual_norm > atol)

    def body_fun(value: tuple) -> tuple:
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = restart_fun(A, b, x, unit_residual, residual_norm,
                                                      ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    x, *_ = while_loop(cond_fun, body_fun, (x0, 0, unit_residual, residual_norm))
    return x


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple[Any, Any]:
    """Restarted GMRES for `A x = b` with general `A`.

    Args:
      A: the operator: a function `x -> A x` on b's structure, or a square matrix.
      b: the right-hand side (a pytree of arrays).
      x0: the starting guess (zeros by default).
      tol, atol: stop at `norm(b - A x) <= max(tol * norm(b), atol)`.
      restart: the Krylov subspace's size per restart (at most b's size).
      maxiter: at most this many restarts (10 * size of b by default).
      M: a preconditioner approximating `A^-1` (a function or matrix).
      solve_method: 'batched' (build the basis, then one least-squares solve) or
        'incremental' (Givens rotations each step; stops within a restart).
    Returns:
      `(x, info)`: the solution and -1 if it is NaN, else 0.
    """
    if x0 is None:
        x0 = tree_util.tree_map(array_creation.zeros_like, b)
    M = _identity if M is None else _normalize_matvec(M)
    A = _normalize_matvec(A)
    b = tree_util.tree_map(array_creation.asarray, b)
    x0 = tree_util.tree_map(array_creation.asarray, x0)
    size = sum(int(np.size(leaf)) for leaf in tree_util.tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_util.tree_structure(x0)} vs {tree_util.tree_structure(b)}")
    b_norm = _norm(b)
    atol = ufuncs.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * ufuncs.minimum(1.0, atol / b_norm)
    if solve_method == "incremental":
        restart_fun = _gmres_incremental
    elif solve_method == "batched":
        restart_fun = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")

    def solve(A: Callable, b: Any) -> Any:
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, restart_fun)

    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    failed = ufuncs.isnan(_norm(x))
    return x, selection.where(failed, -1, 0)

