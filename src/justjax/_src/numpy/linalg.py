"""`jax.numpy.linalg`: NumPy's linear algebra on `lax.linalg`'s decompositions.

The functions JAX wraps in `jit` are wrapped the same way (same names and static
arguments), and the ones with hand-written derivatives (`det`, `slogdet`, `pinv`) use
`custom_jvp` with JAX's rules, so their jaxprs print as JAX's. `solve` (and `inv`, built on
it) is `lax.linalg`'s LU solve inside `custom_linear_solve`, as JAX's.

Norms, the triangle and diagonal helpers and the tensor forms live in `linalg_extra`.
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from justjax._src.config import config
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import linalg as lax_linalg
from justjax._src.lax import dot, slicing, sorting, structural
from justjax._src.lax.linalg_triangular import solve as lax_solve
from justjax._src.numpy import (array_creation, diagonals, reductions, shape_ops, take, tensor,
                                ufuncs, util)
from justjax._src.numpy.scalar_types import finfo

__all__ = ["EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "det",
           "eig", "eigh", "eigvals",
           "eigvalsh", "inv", "matrix_power", "matrix_rank", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals"]


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


def _H(x: Any) -> Any:
    return ufuncs.conjugate(shape_ops.matrix_transpose(x))


def _symmetrize(x: Any) -> Any:
    return (x + _H(x)) / 2


# ---------------------------------------------------------------------------------------------
# Decompositions.

@util.jitted_as_in_jax(static_argnames=("upper", "symmetrize_input"))
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor of positive-definite matrices `a = L @ L^H` (or `U^H @ U`).

    Args:
      a: `(..., N, N)` Hermitian positive-definite matrices.
      upper: whether to return the upper factor `U = L^H`.
      symmetrize_input: whether to use `(a + a^H) / 2`.
    Returns:
      `(..., N, N)` triangular factors (NaNs where `a` is not positive definite).
    """
    a = util.ensure_arraylike("jnp.linalg.cholesky", a)
    a, = util.promote_dtypes_inexact(a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return ufuncs.conjugate(factor.mT) if upper else factor


@util.jitted_as_in_jax(static_argnames=("mode",))
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition.

    Args:
      a: `(..., M, N)` matrices.
      mode: 'reduced' (Q `(..., M, K)`, R `(..., K, N)`, K = min(M, N)), 'complete' (Q
        square), 'r' (R only) or 'raw' (LAPACK's compact form: `(h^T, taus)`).
    Returns:
      `QRResult(Q, R)`, or R, or the raw pair.
    """
    a = util.ensure_arraylike("jnp.linalg.qr", a)
    a, = util.promote_dtypes_inexact(a)
    if mode == "raw":
        h, taus = lax_linalg.geqrf(a)
        return QRResult(h.mT, taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors of general square matrices (complex results, even
    for real input).

    Args:
      a: `(..., M, M)` matrices.
    Returns:
      `EigResult(eigenvalues, eigenvectors)`, the eigenvector of `w[i]` in column `v[:, i]`.
    """
    a = util.ensure_arraylike("jnp.linalg.eig", a)
    a, = util.promote_dtypes_inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@util.jitted_as_in_jax
def eigvals(a: Any) -> Any:
    """The (complex) eigenvalues of general square matrices `(..., M, M)`."""
    a = util.ensure_arraylike("jnp.linalg.eigvals", a)
    a, = util.promote_dtypes_inexact(a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


@util.jitted_as_in_jax(static_argnames=("UPLO", "symmetrize_input"))
def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices.

    Args:
      a: `(..., M, M)` Hermitian (symmetric if real) matrices.
      UPLO: 'L' or 'U', the triangle read when `symmetrize_input` is False.
      symmetrize_input: whether to use `(a + a^H) / 2`.
    Returns:
      `EighResult(eigenvalues, eigenvectors)`; the eigenvalues are real.
    """
    a = util.ensure_arraylike("jnp.linalg.eigh", a)
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    a, = util.promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@util.jitted_as_in_jax(static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """The eigenvalues (ascending, real) of Hermitian matrices."""
    a = util.ensure_arraylike("jnp.linalg.eigvalsh", a)
    a, = util.promote_dtypes_inexact(a)
    w, _ = eigh(a, UPLO, symmetrize_input=symmetrize_input)
    return w


@util.jitted_as_in_jax(static_argnames=("full_matrices", "compute_uv", "hermitian",
                                        "subset_by_index"))
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """Singular value decomposition `a = U @ diag(S) @ Vh`.

    Args:
      a: `(..., M, N)` matrices.
      full_matrices: whether U and Vh are square (else `(..., M, K)` and `(..., K, N)`).
      compute_uv: whether to return U and Vh.
      hermitian: whether `a` is Hermitian (computed from its eigendecomposition).
      subset_by_index: a range of singular values (not on CPU).
    Returns:
      `SVDResult(U, S, Vh)`, or S; S is real and descending.
    """
    a = util.ensure_arraylike("jnp.linalg.svd", a)
    a, = util.promote_dtypes_inexact(a)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                  subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


def _hermitian_svd(a: Any, compute_uv: bool, subset_by_index: Any) -> Any:
    """The SVD of Hermitian matrices: |eigenvalues| sorted descending, the eigenvectors
    reordered alike, and their signs moved into Vh."""
    w, v = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = ufuncs.abs(v)
    last = s.ndim - 1
    if not compute_uv:
        return slicing.rev(_lax_sort(s, last), (last,))
    sign = ufuncs.sign(v)
    index_dtype = np.uint64 if s.shape[last] > np.iinfo(np.uint32).max else np.uint32
    idxs = structural.broadcasted_iota(index_dtype, s.shape, last)
    s, idxs, sign = _lax_sort((s, idxs, sign), last)
    s = slicing.rev(s, (last,))
    idxs = slicing.rev(idxs, (last,))
    sign = slicing.rev(sign, (last,))
    u = take.take_along_axis(w, idxs[..., None, :], axis=-1)
    vh = _H(u * sign[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)


def _lax_sort(operand: Any, dimension: int) -> Any:
    return sorting.sort(operand, dimension=dimension, num_keys=1)


def svdvals(x: Any, /) -> Any:
    """The singular values of `x`, descending."""
    x = util.ensure_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


# ---------------------------------------------------------------------------------------------
# Determinants.

def _slogdet_1x1(a: Any) -> tuple[Any, Any]:
    det = a[..., 0, 0]
    abs_det = ufuncs.abs(det)
    return ufuncs.sign(det), ufuncs.real(ufuncs.log(abs_det))


def _slogdet_2x2(a: Any) -> tuple[Any, Any]:
    a00, a01 = a[..., 0, 0], a[..., 0, 1]
    a10, a11 = a[..., 1, 0], a[..., 1, 1]
    det = (a00 * a11) - (a01 * a10)
    abs_det = ufuncs.abs(det)
    return ufuncs.sign(det), ufuncs.real(ufuncs.log(abs_det))


@custom_jvp
def _slogdet_small(a: Any) -> tuple[Any, Any]:
    n = a.shape[-1]
    if n == 1:
        return _slogdet_1x1(a)
    if n == 2:
        return _slogdet_2x2(a)
    raise ValueError(f"_slogdet_small only supports n in {{1, 2}}, got n={n}")


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x, = primals
    g, = tangents
    n = x.shape[-1]
    sign, ans = _slogdet_small(x)
    if n == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01 = x[..., 0, 0], x[..., 0, 1]
        x10, x11 = x[..., 1, 0], x[..., 1, 1]
        det = (x00 * x11) - (x01 * x10)
        ans_dot = (g[..., 0, 0] * x11 - g[..., 0, 1] * x10
                   - g[..., 1, 0] * x01 + g[..., 1, 1] * x00) / det
    return _slogdet_tangents(x, sign, ans, ans_dot)


def _slogdet_tangents(x: Any, sign: Any, ans: Any, ans_dot: Any) -> tuple[Any, Any]:
    """The tangents of (sign, log|det|) from d log det: for complex inputs its imaginary
    part turns the sign."""
    if np.issubdtype(x.dtype, np.complexfloating):
        sign_dot = (ans_dot - ufuncs.real(ans_dot).astype(ans_dot.dtype)) * sign
        ans_dot = ufuncs.real(ans_dot)
    else:
        sign_dot = array_creation.zeros_like(sign)
    return (sign, ans), (sign_dot, ans_dot)


@custom_jvp
def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    dtype = a.dtype
    lu, pivot, _ = lax_linalg.lu(a)
    diag = diagonals.diagonal(lu, axis1=-2, axis2=-1)
    is_zero = reductions.any(diag == array_creation.array(0, dtype=dtype), axis=-1)
    iota = structural.expand_dims(array_creation.arange(a.shape[-1], dtype=pivot.dtype),
                                  tuple(range(pivot.ndim - 1)))
    parity = reductions.count_nonzero(pivot != iota, axis=-1)
    if np.issubdtype(dtype, np.complexfloating):
        sign = reductions.prod(diag / ufuncs.abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = array_creation.array(1, dtype=dtype)
        parity = parity + reductions.count_nonzero(diag < 0, axis=-1)
    sign = util.where(is_zero, array_creation.array(0, dtype=dtype),
                      sign * array_creation.array(-2 * (parity % 2) + 1, dtype=dtype))
    logdet = util.where(is_zero, array_creation.array(-np.inf, dtype=dtype),
                        reductions.sum(ufuncs.log(ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, ufuncs.real(logdet)


def _slogdet_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x, = primals
    g, = tangents
    sign, ans = slogdet(x)
    ans_dot = diagonals.trace(solve(x, g), axis1=-1, axis2=-2)
    return _slogdet_tangents(x, sign, ans, ans_dot)


@custom_jvp
def _slogdet_qr(a: Any) -> tuple[Any, Any]:
    """slogdet from QR: the product of R's diagonal, its sign turned by each reflection."""
    if np.issubdtype(a.dtype, np.complexfloating):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    n = a.shape[-1]
    a, taus = lax_linalg.geqrf(a)
    a_diag = diagonals.diagonal(a, axis1=-2, axis2=-1)
    log_abs_det = reductions.sum(ufuncs.log(ufuncs.abs(a_diag)), axis=-1)
    sign_diag = reductions.prod(ufuncs.sign(a_diag), axis=-1)
    reflections = util.where(taus[..., :(n - 1)] != 0, -1, 1)
    sign_taus = reductions.prod(reflections, axis=-1).astype(sign_diag.dtype)
    return sign_diag * sign_taus, log_abs_det


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)


@util.jitted_as_in_jax(static_argnames=("method",))
def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """The sign and log of the absolute value of determinants.

    Args:
      a: `(..., M, M)` matrices.
      method: 'lu' (None, the default) or 'qr'.
    Returns:
      `SlogdetResult(sign, logabsdet)` (sign 0 and logabsdet -inf for singular matrices).
    """
    a = util.ensure_arraylike("jnp.linalg.slogdet", a)
    a, = util.promote_dtypes_inexact(a)
    a_shape = np.shape(a)
    if len(a_shape) < 2 or a_shape[-1] != a_shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a_shape}")
    if method is None or method == "lu":
        if a_shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), "
                     "and 'qr'.")


def _cofactor_solve(a: Any, b: Any) -> tuple[Any, Any]:
    """`(det(a), det(a) * solve(a, b))` that stays finite for singular `a` of rank n - 1 (the
    derivative of det is its adjugate): the last pivot is replaced by 1 / det(U without it)."""
    a, b = util.ensure_arraylike("jnp.linalg._cofactor_solve", a, b)
    a, = util.promote_dtypes_inexact(a)
    b, = util.promote_dtypes_inexact(b)
    a_shape, b_shape = np.shape(a), np.shape(b)
    if not (len(a_shape) >= 2 and a_shape[-1] == a_shape[-2] and b_shape[-2:] == a_shape[-2:]):
        raise ValueError("The arguments to _cofactor_solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, m]; got a={a_shape} and b={b_shape}")
    if a_shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    batch_dims = util.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = util.broadcast_to(b, batch_dims + b.shape[-2:])
    lu = util.broadcast_to(lu, batch_dims + lu.shape[-2:])
    diag = diagonals.diagonal(lu, axis1=-2, axis2=-1)
    iota = structural.expand_dims(array_creation.arange(a_shape[-1], dtype=pivots.dtype),
                                  tuple(range(pivots.ndim - 1)))
    parity = reductions.count_nonzero(pivots != iota, axis=-1)
    sign = array_creation.asarray(-2 * (parity % 2) + 1, dtype=dtype)
    partial_det = reductions.cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = util.broadcast_to(permutation, (*batch_dims, a_shape[-1]))
    d = array_creation.ones(x.shape[:-1], x.dtype)
    d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
    d = reductions.any(ufuncs.logical_or(ufuncs.isnan(d), ufuncs.isinf(d)), axis=-1)
    d = util.broadcast_to(d[..., None, None], x.shape)
    x = util.where(d, array_creation.zeros_like(x), x)
    x = _take_rows_batched(x, permutation)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = _concat_rows(x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :])
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = util.where(d, array_creation.zeros_like(x), x)
    return partial_det[..., -1], x


def _take_rows_batched(x: Any, permutation: Any) -> Any:
    """`x[..., permutation, :]` row by row of each batch element."""
    return take.take_along_axis(x, permutation[..., None], axis=-2)


def _concat_rows(top: Any, bottom: Any) -> Any:
    return structural.concatenate((top, bottom), top.ndim - 2)


def _det_2x2(a: Any) -> Any:
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a: Any) -> Any:
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] +
            a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0] +
            a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] -
            a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0] -
            a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] -
            a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _det(a: Any) -> Any:
    sign, logdet = slogdet(a)
    return sign * ufuncs.exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x, = primals
    g, = tangents
    y, z = _cofactor_solve(x, g)
    return y, diagonals.trace(z, axis1=-1, axis2=-2)


@util.jitted_as_in_jax
def det(a: Any) -> Any:
    """Determinants of `(..., M, M)` matrices (closed forms for 2x2 and 3x3, else from LU)."""
    a = util.ensure_arraylike("jnp.linalg.det", a)
    a, = util.promote_dtypes_inexact(a)
    a_shape = np.shape(a)
    if len(a_shape) >= 2 and a_shape[-1] == 2 and a_shape[-2] == 2:
        return _det_2x2(a)
    if len(a_shape) >= 2 and a_shape[-1] == 3 and a_shape[-2] == 3:
        return _det_3x3(a)
    if len(a_shape) >= 2 and a_shape[-1] == a_shape[-2]:
        return _det(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {a_shape}")


# ---------------------------------------------------------------------------------------------
# Solves and inverses.

def _vectorized_shapes(a: Any, b: Any, vector: bool) -> tuple[Any, Any]:
    """a and b with their batch dimensions broadcast together, checking the core dimension
    as `jnp.vectorize` with solve's signature does."""
    signature = "(m,m),(m)->(m)" if vector else "(m,m),(m,n)->(m,n)"
    core_b = 1 if vector else 2
    if b.ndim < core_b:
        raise ValueError(f"input with shape {b.shape} does not have enough dimensions for all "
                         "core dimensions ('m', 'n') on vectorized function with "
                         f"excluded=frozenset() and signature='{signature}'")
    sizes = [a.shape[-2], a.shape[-1], b.shape[-core_b]]
    for size in sizes[1:]:
        if size != sizes[0]:
            raise ValueError(f"inconsistent size for core dimension 'm': {size} vs {sizes[0]} "
                             "on vectorized function with excluded=frozenset() and signature="
                             f"'{signature}'")
    batch = util.broadcast_shapes(a.shape[:-2], b.shape[:-core_b])
    return (util.broadcast_to(a, batch + a.shape[-2:]),
            util.broadcast_to(b, batch + b.shape[b.ndim - core_b:]))


@util.jitted_as_in_jax
def solve(a: Any, b: Any) -> Any:
    """The solution `x` of `a @ x = b`.

    Args:
      a: `(..., M, M)` matrices.
      b: `(M,)` vector or `(..., M, N)` matrices (batch dimensions broadcast).
    Returns:
      `x`, of the broadcast shape.
    """
    a, b = util.ensure_arraylike("jnp.linalg.solve", a, b)
    a, b = util.promote_dtypes_inexact(a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a.shape}")
    if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
            and a.shape[-1] != b.shape[-2]):
        raise ValueError(
            f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this would "
            "have been treated as a batched 1-dimensional solve. To recover this behavior, use "
            "solve(a, b[..., None]).squeeze(-1).")
    a, b = _vectorized_shapes(a, b, b.ndim == 1)
    return lax_solve(a, b)


@util.jitted_as_in_jax
def inv(a: Any) -> Any:
    """The inverses of `(..., M, M)` matrices."""
    arr = util.ensure_arraylike("jnp.linalg.inv", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    eye = array_creation.eye(arr.shape[-1], dtype=arr.dtype)
    return solve(arr, structural.broadcast(eye, arr.shape[:-2]) if arr.ndim > 2 else eye)


@util.jitted_as_in_jax(static_argnames=("n",))
def matrix_power(a: Any, n: int) -> Any:
    """`a` raised to the integer power `n` by repeated squaring (negative: of `inv(a)`)."""
    arr = util.ensure_arraylike("jnp.linalg.matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return util.broadcast_to(array_creation.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = abs(n)
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return (arr @ arr) @ arr
    z = result = None
    while n > 0:
        z = arr if z is None else (z @ z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else (result @ z)
    return result


@util.jitted_as_in_jax(static_argnames=("hermitian",))
def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """The number of singular values above `rtol` times the largest (default: the largest
    dimension times the dtype's eps)."""
    M = util.ensure_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    M, = util.promote_dtypes_inexact(M)
    if M.ndim < 2:
        return (M != 0).any().astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        eps = finfo(S.dtype).eps
        rtol = S.max(-1) * np.max(M.shape[-2:]).astype(S.dtype) * eps
    rtol = shape_ops.expand_dims(rtol, np.ndim(rtol))
    return reductions.sum(S > rtol, axis=-1)


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse (singular values up to `rtol` times the largest
    dropped; default 10 * max(M, N) * eps).

    Args:
      a: `(..., M, N)` matrices.
      rtol: the relative cutoff (`rcond` is its old name).
      hermitian: whether `a` is Hermitian.
    Returns:
      `(..., N, M)` pseudo-inverses.
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    return _pinv(a, rtol, hermitian)


def _pinv(a: Any, rtol: Any = None, hermitian: bool = False) -> Any:
    a = util.ensure_arraylike("jnp.linalg.pinv", a)
    arr, = util.promote_dtypes_inexact(a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return array_creation.empty(arr.shape[:-2] + (n, m), arr.dtype)
    arr = ufuncs.conj(arr)
    if rtol is None:
        max_rows_cols = max(arr.shape[-2:])
        rtol = 10. * max_rows_cols * array_creation.array(finfo(arr.dtype).eps)
    rtol = array_creation.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = structural.expand_dims(rtol[..., np.newaxis],
                                  tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = util.where(s > cutoff, s, np.inf).astype(u.dtype)
    res = tensor.matmul(vh.mT, ufuncs.divide(u.mT, s[..., np.newaxis]),
                        precision=dot.Precision.HIGHEST)
    return structural.convert_element_type(res, arr.dtype)


_pinv = custom_jvp(util.jitted_as_in_jax(_pinv, static_argnames=("hermitian",)),
                   nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol: Any, hermitian: bool, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    """Golub and Pereyra's derivative of the pseudo-inverse (products at float32
    precision, as JAX's)."""
    with config.override("jax_default_matmul_precision", "float32"):
        return _pinv_jvp_body(rtol, hermitian, primals, tangents)


def _pinv_jvp_body(rtol: Any, hermitian: bool, primals: tuple, tangents: tuple
                   ) -> tuple[Any, Any]:
    a, = primals
    a_dot, = tangents
    p = pinv(a, rtol=rtol, hermitian=hermitian)
    if hermitian:
        a = _symmetrize(a)
        a_dot = _symmetrize(a_dot)
    m, n = a.shape[-2:]
    if m >= n:
        s = (p @ _H(p)) @ _H(a_dot)
        t = (_H(a_dot) @ _H(p)) @ p
        p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    else:
        s = p @ (_H(p) @ _H(a_dot))
        t = _H(a_dot) @ (_H(p) @ p)
        p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return p, p_dot
