"""`jax.scipy.linalg`'s matrix functions and equations: `expm` (scaling and squaring with
Padé approximants, Higham 2005), `expm_frechet`, `sqrtm` and `funm` (through the complex Schur
form), `rsf2csf`, `polar` (QDWH or SVD), and `solve_sylvester` (Bartels-Stewart).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from justjax._src.core import dtypes
from justjax._src.interpreters import ad
from justjax._src.lax import dot as lax_dot
from justjax._src.lax import slicing
from justjax._src.lax import linalg as lax_linalg
from justjax._src.lax.linalg_qdwh import qdwh
from justjax._src.lax.control_flow.conditionals import cond, switch
from justjax._src.lax.control_flow.library import fori_loop
from justjax._src.lax.control_flow.scan import scan
from justjax._src.numpy import (array_creation, diagonals, joining, linalg as jnp_linalg,
                                linalg_extra, reductions, selection, sorting, tensor, ufuncs,
                                util)
from justjax._src.numpy.vectorize import vectorize
from justjax._src.scipy.linalg import schur, solve, solve_triangular

__all__ = ["expm", "expm_frechet", "funm", "polar", "rsf2csf", "solve_sylvester", "sqrtm"]

_HIGHEST = lax_dot.Precision.HIGHEST


def _dot(a: Any, b: Any) -> Any:
    return tensor.dot(a, b, precision=_HIGHEST)


# ---------------------------------------------------------------------------------------------
# expm

# Padé coefficients b_0..b_m of the [m/m] approximant of exp (Higham 2005, table 2.3).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}

# Per precision: the largest 1-norm handled without scaling, the 1-norm thresholds between
# the approximants (Higham's theta_m), and the approximants' orders.
_EXPM_PARAMS = {
    "64": (5.371920351148152, (1.495585217958292e-002, 2.539398330063230e-001,
                               9.504178996162932e-001, 2.097847961257068e+000),
           (3, 5, 7, 9, 13)),
    "32": (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7)),
}


def _pade(order: int, a: Any) -> tuple[Any, Any]:
    """The odd part `U = A (b_m A^(m-1) + ... + b_1 I)` and even part
    `V = b_(m-1) A^(m-1) + ... + b_0 I` of the [order/order] Padé approximant's numerator."""
    b = _PADE[order]
    ident = array_creation.eye(*a.shape, dtype=a.dtype)
    a2 = _dot(a, a)
    if order == 13:
        return _pade13(b, a, a2, ident)
    # Even powers I, A^2, ..., A^(order-1), each from the last.
    powers = [ident, a2]
    for _ in range(2, (order + 1) // 2):
        powers.append(_dot(powers[-1], a2))
    odd = _descending_sum([b[2 * k + 1] for k in range(len(powers))], powers)
    u = _dot(a, odd)
    return u, _descending_sum([b[2 * k] for k in range(len(powers))], powers)


def _descending_sum(coefficients: list[float], powers: list[Any]) -> Any:
    """`c_k P_k + ... + c_0 P_0`, highest power first."""
    total = coefficients[-1] * powers[-1]
    for c, p in zip(coefficients[-2::-1], powers[-2::-1], strict=True):
        total = total + c * p
    return total


def _pade13(b: tuple, a: Any, a2: Any, ident: Any) -> tuple[Any, Any]:
    """Degree 13 with A^2, A^4, A^6 only (Higham 2005, (2.11))."""
    a4 = _dot(a2, a2)
    a6 = _dot(a4, a2)
    u = _dot(a, _dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = _dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * ident
    return u, v


@util.jitted_as_in_jax
def _calc_P_Q(A: Any) -> tuple[Any, Any, Any]:
    """The numerator and denominator of the scaled approximant, and the squarings."""
    if A.dtype in (np.float64, np.complex128):
        maxnorm, thresholds, orders = _EXPM_PARAMS["64"]
    elif A.dtype in (np.float32, np.complex64):
        maxnorm, thresholds, orders = _EXPM_PARAMS["32"]
    else:
        raise TypeError(f"A.dtype={A.dtype} is not supported.")
    norm1 = linalg_extra.norm(A, 1)
    n_squarings = ufuncs.maximum(0, ufuncs.floor(ufuncs.log2(norm1 / maxnorm)))
    scaled = A / 2 ** n_squarings.astype(A.dtype)
    index = sorting.digitize(norm1, array_creation.array(thresholds, dtype=norm1.dtype))
    u, v = switch(index, [functools.partial(_pade, order) for order in orders], scaled)
    return u + v, -u + v, n_squarings


@util.jitted_as_in_jax(static_argnums=2)
def _squaring(r: Any, n_squarings: Any, max_squarings: int) -> Any:
    """`r` squared `n_squarings` times (at most `max_squarings`)."""
    def step(carry: Any, i: Any) -> tuple[Any, None]:
        return cond(i < n_squarings, lambda x: _dot(x, x), lambda x: x, carry), None

    out, _ = scan(step, r, array_creation.arange(max_squarings, dtype=n_squarings.dtype))
    return out


@util.jitted_as_in_jax(static_argnames=("upper_triangular", "max_squarings"))
def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential, by scaling and squaring with a Padé approximant.

    Args:
      A: `(..., N, N)` matrices.
      upper_triangular: whether `A` is upper triangular (the final solve is triangular).
      max_squarings: at most this many squarings; more needed gives NaNs.
    Returns:
      `exp(A)`, of `A`'s shape.
    """
    A, = util.promote_dtypes_inexact(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got {A.shape=}.")
    if A.ndim > 2:
        return vectorize(functools.partial(expm, upper_triangular=upper_triangular,
                                           max_squarings=max_squarings),
                         signature="(n,n)->(n,n)")(A)
    p, q, n_squarings = _calc_P_Q(array_creation.asarray(A))

    def compute(args: tuple) -> Any:
        _, p, q = args
        r = solve_triangular(q, p) if upper_triangular else jnp_linalg.solve(q, p)
        return _squaring(r, n_squarings, max_squarings)

    def nan(args: tuple) -> Any:
        return array_creation.full_like(args[0], np.nan)

    return cond(n_squarings > max_squarings, nan, compute, (A, p, q))


@util.jitted_as_in_jax(static_argnames=("method", "compute_expm"))
def expm_frechet(A: Any, E: Any, *, method: str | None = None, compute_expm: bool = True
                 ) -> Any:
    """The Fréchet derivative of `expm` at `A` in the direction `E` (its jvp).

    Args:
      A, E: `(..., N, N)` matrices of one shape.
      method: unused (SciPy's algorithm choice).
      compute_expm: whether to return `expm(A)` too.
    Returns:
      `(expm(A), L(A, E))`, or `L(A, E)` alone.
    """
    del method
    A = array_creation.asarray(A)
    E = array_creation.asarray(E)
    if A.ndim < 2 or A.shape[-2] != A.shape[1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A.shape}")
    if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E.shape}")
    if A.shape != E.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={A.shape} "
                         f"E.shape={E.shape}")
    fun = functools.partial(expm, upper_triangular=False, max_squarings=16)
    (expm_a,), (frechet,) = ad.jvp_flat(lambda x: [fun(x)], [A], [E])
    return (expm_a, frechet) if compute_expm else frechet


# ---------------------------------------------------------------------------------------------
# Functions of triangular matrices: sqrtm, funm.

@util.jitted_as_in_jax
def _sqrtm_triu(T: Any) -> Any:
    """The upper-triangular square root of upper-triangular `T`, column by column (Björck and
    Hammarling): U_ij = (T_ij - sum_{i<k<j} U_ik U_kj) / (U_ii + U_jj)."""
    diag = ufuncs.sqrt(diagonals.diag(T))
    n = diag.size
    u = diagonals.diag(diag)

    def row_step(l: Any, data: tuple) -> tuple:
        j, u = data
        i = j - 1 - l
        s = fori_loop(i + 1, j, lambda k, acc: acc + u[i, k] * u[k, j], 0.0)
        value = selection.where(T[i, j] == s, 0.0, (T[i, j] - s) / (diag[i] + diag[j]))
        return j, u.at[i, j].set(value)

    def column_step(j: Any, u: Any) -> Any:
        _, u = fori_loop(0, j, row_step, (j, u))
        return u

    return fori_loop(0, n, column_step, u)


@util.jitted_as_in_jax
def _sqrtm(A: Any) -> Any:
    t, z = schur(A, output="complex")
    root = _sqrtm_triu(t)
    return tensor.matmul(tensor.matmul(z, root, precision=_HIGHEST), ufuncs.conj(z.T),
                         precision=_HIGHEST)


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal matrix square root, from the complex Schur form.

    Args:
      A: an `(N, N)` matrix.
      blocksize: must be 1 (the blocked algorithm is not implemented, as in JAX).
    Returns:
      `sqrtm(A)` (complex).
    """
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


@util.jitted_as_in_jax
def _algorithm_11_1_1(F: Any, T: Any) -> tuple[Any, Any]:
    """Parlett's recurrence (Golub and Van Loan, algorithm 11.1.1): the strictly upper part
    of f(T) from its diagonal `F`, superdiagonal by superdiagonal; also the smallest
    distance between diagonal entries divided by."""
    n = T.shape[0]
    minden = ufuncs.abs(T[0, 0])
    columns = array_creation.arange(n)

    def entry(i: Any, carry: tuple) -> tuple:
        p, F, minden = carry
        j = i + p
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        between = (columns >= i) & (columns < j - 1)
        s = s + (_dot(selection.where(between, T[i - 1], 0), selection.where(between, F[:, j - 1], 0))
                 - _dot(selection.where(between, F[i - 1], 0),
                        selection.where(between, T[:, j - 1], 0)))
        den = T[j - 1, j - 1] - T[i - 1, i - 1]
        s = selection.where(den != 0, s / den, s)
        return p, F.at[i - 1, j - 1].set(s), ufuncs.minimum(minden, ufuncs.abs(den))

    def superdiagonal(p: Any, carry: tuple) -> tuple:
        F, minden = carry
        _, F, minden = fori_loop(1, n - p + 1, entry, (p, F, minden))
        return F, minden

    return fori_loop(1, n, superdiagonal, (F, minden))


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """`func(A)` for a scalar function applied to a matrix, by Parlett's recurrence on the
    complex Schur form.

    Args:
      A: an `(N, N)` matrix.
      func: a function evaluated elementwise on `A`'s eigenvalues.
      disp: whether to return the result alone (else with an error estimate).
    Returns:
      `f(A)` (complex), or `(f(A), err)`.
    """
    A = array_creation.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(A)
    t, z = rsf2csf(t, z)
    f = diagonals.diag(func(diagonals.diag(t))).astype(t.dtype)
    f, minden = _algorithm_11_1_1(f, t)
    f = z @ f @ ufuncs.conj(z.T)
    if disp:
        return f
    tol = dtypes.finfo(np.float32 if f.dtype.char.lower() == "f" else np.float64).eps
    minden = selection.where(minden == 0.0, tol, minden)
    err = selection.where(
        reductions.any(ufuncs.isinf(f)), np.inf,
        ufuncs.minimum(1, ufuncs.maximum(
            tol, tol / minden * linalg_extra.norm(diagonals.triu(t, 1), 1))))
    return f, err


# ---------------------------------------------------------------------------------------------
# rsf2csf

def _rsf2csf_2d(T: Any, Z: Any) -> tuple[Any, Any]:
    """Each 2x2 diagonal block of the real Schur form (a complex-conjugate eigenvalue pair)
    triangularized by a complex Givens rotation, applied to T's rows and columns and Z's
    columns; bottom to top, as SciPy."""
    T, Z = util.promote_dtypes_complex(T, Z)
    eps = dtypes.finfo(T.dtype).eps
    n = T.shape[0]
    if n == 1:
        return T, Z
    indices = array_creation.arange(n)

    def rotate(m: Any, T: Any, Z: Any) -> tuple[Any, Any]:
        block = slicing.dynamic_slice(T, (m - 1, m - 1), (2, 2))
        mu = jnp_linalg.eigvals(block) - T[m, m]
        r = linalg_extra.norm(joining.stack([mu[0], T[m, m - 1]])).astype(T.dtype)
        c = mu[0] / r
        s = T[m, m - 1] / r
        g = joining.stack([joining.stack([ufuncs.conj(c), s]),
                                  joining.stack([-s, c])]).astype(T.dtype)
        rows = slicing.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
        from_col = indices >= m - 1
        rows = selection.where(from_col, g @ selection.where(from_col, rows, 0), rows)
        T = slicing.dynamic_update_slice_in_dim(T, rows, m - 1, axis=0)
        cols = slicing.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
        to_row = indices[:, None] < m + 1
        g_h = ufuncs.conj(g.T)
        cols = selection.where(to_row, selection.where(to_row, cols, 0) @ g_h, cols)
        T = slicing.dynamic_update_slice_in_dim(T, cols, m - 1, axis=1)
        z_cols = slicing.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
        Z = slicing.dynamic_update_slice_in_dim(Z, z_cols @ g_h, m - 1, axis=1)
        return T, Z

    def step(i: Any, TZ: tuple) -> tuple:
        m = n - i
        T, Z = TZ
        significant = ufuncs.abs(T[m, m - 1]) > eps * (ufuncs.abs(T[m - 1, m - 1])
                                                       + ufuncs.abs(T[m, m]))
        T, Z = cond(significant, rotate, lambda m, T, Z: (T, Z), m, T, Z)
        return T.at[m, m - 1].set(0.0), Z

    return fori_loop(1, n, step, (T, Z))


@util.jitted_as_in_jax(static_argnames=("check_finite",))
def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Converts a real Schur form to the complex one.

    Args:
      T: `(..., N, N)` real Schur forms (`schur(a, output='real')`).
      Z: `(..., N, N)` their Schur vectors.
      check_finite: unused.
    Returns:
      `(T, Z)`: upper-triangular complex `T` and unitary `Z` with `a = Z T Z^H`.
    """
    del check_finite
    T = array_creation.asarray(T)
    Z = array_creation.asarray(Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)


# ---------------------------------------------------------------------------------------------
# polar

def _polar_2d(a: Any, side: str, method: str, eps: float | None,
              max_iterations: int | None) -> tuple[Any, Any]:
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = qdwh(a, is_hermitian=False, eps=eps,
                                                    max_iterations=max_iterations)
        elif m < n and side == "left":
            unitary, posdef, _, _ = qdwh(ufuncs.conj(a.T), is_hermitian=False,
                                                    eps=eps, max_iterations=max_iterations)
            posdef = ufuncs.conj(posdef.T)
            unitary = ufuncs.conj(unitary.T)
        else:
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' and "
                f"m >= n side='left', got {a.shape} with side={side!r}")
    elif method == "svd":
        u, s, vh = lax_linalg.svd(a, full_matrices=False)
        s = s.astype(u.dtype)
        unitary = u @ vh
        if side == "right":
            posdef = ufuncs.conj(vh.T) * s[None, :] @ vh
        else:
            posdef = u * s[None, :] @ ufuncs.conj(u.T)
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


@util.jitted_as_in_jax(static_argnames=("side", "method"))
def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """Polar decomposition `a = U P` (side 'right') or `a = P U` ('left').

    Args:
      a: `(..., M, N)` matrices.
      side: 'right' or 'left'.
      method: 'qdwh' (QR-based dynamically weighted Halley iteration; needs M >= N for
        'right', M < N for 'left') or 'svd'.
      eps: QDWH's convergence tolerance (the dtype's eps by default).
      max_iterations: QDWH's iteration cap (10 by default).
    Returns:
      `(U, P)`: `U` with orthonormal columns (rows) and Hermitian positive semi-definite
      `P`.
    """
    arr = array_creation.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    fun = functools.partial(_polar_2d, side=side, method=method, eps=eps,
                            max_iterations=max_iterations)
    return vectorize(fun, signature=signature)(arr)


# ---------------------------------------------------------------------------------------------
# solve_sylvester

def _sylvester_triangular(R: Any, S: Any, F: Any) -> Any:
    """Y with R Y + Y S = F for upper-triangular R and lower-triangular S, entry by entry
    from the bottom-right (a scan over the m*n entries)."""
    m, n = F.shape
    rows = array_creation.arange(m)
    cols = array_creation.arange(n)

    def step(y_flat: Any, index: Any) -> tuple[Any, None]:
        i = index // n
        j = index % n
        y = y_flat.reshape((m, n))
        row_term = reductions.sum(selection.where(rows > i, R[i, :] * y[:, j], 0.0))
        col_term = reductions.sum(selection.where(cols > j, y[i, :] * S[:, j], 0.0))
        value = (F[i, j] - row_term - col_term) / (R[i, i] + S[j, j])
        return y_flat.at[i * n + j].set(value), None

    order = array_creation.arange(m * n - 1, -1, -1)
    y_flat, _ = scan(step, array_creation.zeros((m * n,), dtype=F.dtype), order)
    return y_flat.reshape((m, n))


def _solve_sylvester_2d(A: Any, B: Any, C: Any, *, method: str, tol: float) -> Any:
    m, n = C.shape[-2:]
    if method == "schur":
        r, u = schur(A, output="complex")
        s, v = schur(ufuncs.conj(B.T), output="complex")
        f = ufuncs.conj(u.T) @ C.astype(r.dtype) @ v
        y = _sylvester_triangular(r, ufuncs.conj(s.T), f)
        x = u @ y @ ufuncs.conj(v.T)
    elif method == "eigen":
        ra, ua = jnp_linalg.eig(A)
        rb, ub = jnp_linalg.eig(B)
        f = solve(ua, C.astype(ra.dtype) @ ub)
        y = f / (ra[:, None] + rb[None, :])
        x = ua[:m, :m] @ y[:m, :n] @ jnp_linalg.inv(ub)[:n, :n]
    else:
        raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                         "\"schur\" or \"eigen\".")
    if not dtypes.is_complex(C.dtype):
        x = ufuncs.real(x)
    # A and -B sharing an eigenvalue (within tol) makes the equation singular: NaNs.
    singular = reductions.any(ufuncs.abs(jnp_linalg.eigvals(A)[:, None]
                                         + jnp_linalg.eigvals(B)[None, :]) < tol)
    return cond(singular, lambda: array_creation.zeros_like(x) * np.nan, lambda: x)


@util.jitted_as_in_jax(static_argnames=("method",))
def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur", tol: float = 1e-8
                    ) -> Any:
    """Solves the Sylvester equation `A X + X B = C`.

    Args:
      A: `(..., M, M)` matrices.
      B: `(..., N, N)` matrices.
      C: `(..., M, N)` matrices.
      method: 'schur' (Bartels-Stewart) or 'eigen' (eigendecompositions of A and B).
      tol: the distance below which an eigenvalue of A and one of -B count as equal (the
        result is then NaN).
    Returns:
      `X`, `(..., M, N)`.
    """
    A, B, C = util.promote_dtypes_inexact(array_creation.asarray(A), array_creation.asarray(B),
                                          array_creation.asarray(C))
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\n"
                         f"B: {B.shape}\nC: {C.shape}")
    fun = functools.partial(_solve_sylvester_2d, method=method, tol=tol)
    return vectorize(fun, signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)

