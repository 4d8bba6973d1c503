"""`jax.scipy.linalg`'s special matrices: block_diag, circulant, companion,
convolution_matrix, dft, fiedler, fiedler_companion, hadamard, hankel, helmert, hilbert,
invhilbert, invpascal, leslie, pascal, toeplitz.

Those built from vectors broadcast over leading batch dimensions (as JAX's do); the others
take a static size. Binomial coefficients are computed from lgamma, as JAX computes them, so
pascal and friends are floating point.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.lax import dot as lax_dot
from justjax._src.lax import elementwise, slicing, structural
from justjax._src.lax.convolution_patches import conv_general_dilated_patches
from justjax._src.numpy import (array_creation, diagonals, joining, padding, rearranging,
                                selection, shape_ops, tensor, ufuncs, util)
from justjax._src.numpy.vectorize import vectorize

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz"]


@util.jitted_as_in_jax
def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of the given matrices (scalars and vectors are rows).

    Args:
      *arrs: arrays of at most 2 dimensions.
    Returns:
      Their blocks along the diagonal, zeros elsewhere (dtypes promoted).
    """
    if len(arrs) == 0:
        arrs = (array_creation.zeros((1, 0)),)
    arrs = tuple(util.promote_dtypes(*arrs))
    bad = [i for i, a in enumerate(arrs) if np.ndim(a) > 2]
    if bad:
        raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                         f"dimensions, got {arrs[bad[0]]} at argument {bad[0]}.")
    blocks = [shape_ops.atleast_2d(a) for a in arrs]
    dtype = blocks[0].dtype
    total_cols = sum(a.shape[1] for a in blocks)
    rows, start = [], 0
    for block in blocks:
        cols = block.shape[1]
        config = ((0, 0, 0), (start, total_cols - cols - start, 0))
        rows.append(slicing.pad(block, np.array(0, dtype), config))
        start += cols
    return joining.concatenate(rows, axis=0)


# ---------------------------------------------------------------------------------------------
# Matrices from vectors.

def _sliding_windows(values: Any, width: int) -> Any:
    """`[values[i:i + width] for i in ...]` as rows: the patches of a 1-D convolution (JAX
    builds its Toeplitz and Hankel matrices this way)."""
    length, = values.shape
    patches = conv_general_dilated_patches(
        values.reshape((1, length, 1)), (width,), (1,), "VALID",
        dimension_numbers=("NTC", "IOT", "NTC"), precision=lax_dot.Precision.HIGHEST)
    return patches[0]


def _toeplitz_2d(c: Any, r: Any) -> Any:
    """T[i, j] = c[i - j] below the diagonal, r[j - i] above: the windows of c reversed
    followed by r[1:], bottom row first."""
    nrows, = c.shape
    ncols, = r.shape
    if nrows == 0 or ncols == 0:
        return array_creation.empty((nrows, ncols), dtype=dtypes.promote_types(c.dtype, r.dtype))
    elems = joining.concatenate((c[::-1], r[1:]))
    return rearranging.flip(_sliding_windows(elems, ncols), axis=0)


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column `c` and first row `r`.

    Args:
      c: `(..., M)` first columns.
      r: `(..., N)` first rows (`conj(c)` by default: Hermitian); `r[0]` is ignored.
    Returns:
      `(..., M, N)` matrices.
    """
    if r is None:
        util.check_arraylike("toeplitz", c)
        r = ufuncs.conjugate(array_creation.asarray(c))
    else:
        util.check_arraylike("toeplitz", c, r)
    c = shape_ops.atleast_1d(array_creation.asarray(c))
    r = shape_ops.atleast_1d(array_creation.asarray(r))
    return vectorize(_toeplitz_2d, signature="(m),(n)->(m,n)")(c, r)


def _hankel_2d(c: Any, r: Any) -> Any:
    """H[i, j] = c[i + j] for i + j < M, r[i + j - M + 1] beyond: the windows of c followed
    by r[1:]."""
    nrows, = c.shape
    ncols, = r.shape
    if nrows == 0 or ncols == 0:
        return array_creation.empty((nrows, ncols), dtype=dtypes.result_type(c, r))
    return _sliding_windows(joining.concatenate((c, r[1:])), ncols)


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column `c` and last row `r`.

    Args:
      c: `(..., M)` first columns.
      r: `(..., N)` last rows (zeros by default); `r[0]` is ignored.
    Returns:
      `(..., M, N)` matrices.
    """
    if r is None:
        util.check_arraylike("hankel", c)
        c = array_creation.asarray(c)
        r = array_creation.zeros_like(c)
    else:
        util.check_arraylike("hankel", c, r)
        c = array_creation.asarray(c)
        r = array_creation.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    if c.ndim < r.ndim:
        c = structural.expand_dims(c, tuple(range(r.ndim - c.ndim)))
    elif r.ndim < c.ndim:
        r = structural.expand_dims(r, tuple(range(c.ndim - r.ndim)))
    return vectorize(_hankel_2d, signature="(m),(n)->(m,n)")(c, r)


def _circulant_2d(c: Any) -> Any:
    n, = c.shape
    index = (array_creation.arange(n)[:, None] - array_creation.arange(n)[None, :]) % n
    return c[index]


def circulant(c: Any) -> Any:
    """The circulant matrix with first column `c` (`C[i, j] = c[(i - j) % n]`).

    Args:
      c: `(..., N)` first columns.
    Returns:
      `(..., N, N)` matrices.
    """
    util.check_arraylike("circulant", c)
    c = shape_ops.atleast_1d(array_creation.asarray(c))
    return vectorize(_circulant_2d, signature="(n)->(n,n)")(c)


def _leslie_2d(f: Any, s: Any) -> Any:
    f, s = util.promote_dtypes(f, s)
    return diagonals.diag(s, k=-1).at[0].set(f)


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities `f` in the first row, survival rates `s` below the
    diagonal.

    Args:
      f: `(..., N)` fecundities, N >= 2.
      s: `(..., N - 1)` survival rates.
    Returns:
      `(..., N, N)` matrices.
    """
    util.check_arraylike("leslie", f, s)
    f = shape_ops.atleast_1d(f)
    s = shape_ops.atleast_1d(s)
    if f.shape[-1] < 2:
        raise ValueError("The length of f along the last axis must be at least 2; got shape "
                         f"{f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         "must be one less than the length of f; got f shape "
                         f"{f.shape} and s shape {s.shape}.")
    return vectorize(_leslie_2d, signature="(n),(m)->(n,n)")(f, s)


def _companion_2d(a: Any) -> Any:
    first_row = -a[1:] / a[0]
    m = a.shape[0] - 1
    return array_creation.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients `a` (highest degree first).

    Args:
      a: `(..., N)` coefficients, N >= 2.
    Returns:
      `(..., N - 1, N - 1)` matrices.
    """
    a, = util.promote_args_inexact("companion", a)
    a = shape_ops.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2; got shape "
                         f"{a.shape}.")
    return vectorize(_companion_2d, signature="(n)->(m,m)")(a)


def fiedler(a: Any) -> Any:
    """The symmetric Fiedler matrix `F[i, j] = |a[i] - a[j]|`.

    Args:
      a: `(..., N)` values.
    Returns:
      `(..., N, N)` matrices.
    """
    util.check_arraylike("fiedler", a)
    arr = shape_ops.atleast_1d(a)
    return ufuncs.abs(arr[..., None] - arr[..., None, :])


def _fiedler_companion_2d(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix (Fiedler 2003): the coefficients alternate
    between the super- and subdiagonals, ones on the second off-diagonals."""
    n = a.shape[0] - 1
    if n == 0:
        return array_creation.empty_like(a, shape=(0, 0))
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = array_creation.arange(n)[:, None]
    j = array_creation.arange(n)[None, :]
    above = -a[ufuncs.minimum(i + 2, n)]
    below = -a[ufuncs.minimum(i + 1, n)]
    even = i % 2 == 0
    odd = i % 2 == 1
    one = array_creation.array(1, dtype=a.dtype)
    zero = array_creation.array(0, dtype=a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
                  (j == i + 2) & even, (j == i - 1) & even & (i >= 2),
                  (j == i - 2) & odd & (i >= 3)]
    choices = [-a[1], one, above, one, below, one]
    return selection.select(conditions, choices, default=zero)


def fiedler_companion(a: Any) -> Any:
    """Fiedler's companion matrix of the polynomial with coefficients `a`.

    Args:
      a: `(..., N)` coefficients, N >= 1.
    Returns:
      `(..., N - 1, N - 1)` matrices with the polynomial's roots as eigenvalues.
    """
    a, = util.promote_args_inexact("fiedler_companion", a)
    a = shape_ops.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    return vectorize(_fiedler_companion_2d, signature="(n)->(m,m)")(a)


@util.jitted_as_in_jax(static_argnames=("n", "mode"))
def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The Toeplitz matrix of the 1-D convolution with `a`: `convolution_matrix(a, n) @ v
    == np.convolve(a, v, mode)` for `v` of length `n`.

    Args:
      a: `(..., M)` kernels.
      n: the length of the convolved vectors.
      mode: 'full', 'valid' or 'same', as `np.convolve`'s.
    Returns:
      `(..., K, n)` matrices (K = M + n - 1, max(M, n) - min(M, n) + 1 or max(M, n)).
    """
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    util.check_arraylike("convolution_matrix", a)
    a = array_creation.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    widths = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    padded = padding.pad(a, widths)
    reversed_padded = padding.pad(rearranging.flip(a, axis=-1), widths)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        begin, end = trim // 2, trim - trim // 2
    elif mode == "valid":
        begin = end = min(n, m) - 1
    else:
        begin = end = 0
    first_col = slicing.slice_in_dim(padded, begin, length - end, axis=-1)
    first_row = slicing.slice_in_dim(reversed_padded, length - n - begin, length - begin,
                                     axis=-1)
    return toeplitz(first_col, first_row)


# ---------------------------------------------------------------------------------------------
# Matrices of a given size.

@util.jitted_as_in_jax(static_argnames=("n",))
def hilbert(n: int) -> Any:
    """The Hilbert matrix `H[i, j] = 1 / (i + j + 1)`, `(n, n)`."""
    a = structural.broadcasted_iota(dtypes.default_float_dtype(), (n, 1), 0)
    return 1 / (a + a.T + 1)


def _binom(n: Any, k: Any) -> Any:
    """`n choose k` from lgamma (floating point, as JAX's)."""
    return elementwise.exp(elementwise.lgamma(n + 1.0) - elementwise.lgamma(n - k + 1.0)
                           - elementwise.lgamma(k + 1.0))


def _comb(n: Any, k: Any) -> Any:
    """`scipy.special.comb(n, k)` (not exact): zero outside 0 <= k <= n."""
    inside = (k <= n) & (n >= 0) & (k >= 0)
    safe_n = selection.where(inside, n, 0.0)
    safe_k = selection.where(inside, k, 0.0)
    return selection.where(inside, _binom(safe_n, safe_k), 0.0)


@util.jitted_as_in_jax(static_argnames=("n",))
def invhilbert(n: int) -> Any:
    """The inverse of the `(n, n)` Hilbert matrix (floating point)."""
    a = array_creation.arange(n, dtype=dtypes.default_float_dtype())
    i = a[:, None]
    j = a[None, :]
    s = i + j
    return (-1.0) ** s * (s + 1.0) * _comb(n + i, n - j - 1) * _comb(n + j, n - i - 1) \
        * _comb(s, i) ** 2


def _check_kind(kind: str | None, article: str) -> str:
    kind = "symmetric" if kind is None else kind
    valid_kind = ["symmetric", "lower", "upper"]
    if kind not in valid_kind:
        raise ValueError(f"Expected kind to be {article}: {valid_kind}; got {kind}")
    return kind


@util.jitted_as_in_jax(static_argnames=("n", "kind"))
def pascal(n: int, kind: str | None = None) -> Any:
    """The `(n, n)` Pascal matrix: binomial coefficients, 'symmetric' (default), 'lower' or
    'upper' triangular."""
    kind = _check_kind(kind, "on of")
    a = array_creation.arange(n, dtype=np.float32)
    lower = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return tensor.dot(lower, lower.T)


@util.jitted_as_in_jax(static_argnames=("n", "kind"))
def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of the `(n, n)` Pascal matrix of the given kind."""
    kind = _check_kind(kind, "one of")
    a = array_creation.arange(n, dtype=dtypes.default_float_dtype())
    i = a[:, None]
    j = a[None, :]
    lower_inv = (-1.0) ** (i - j) * _binom(i, j)
    if kind == "lower":
        return lower_inv
    if kind == "upper":
        return lower_inv.T
    return tensor.dot(lower_inv.T, lower_inv)


@util.jitted_as_in_jax(static_argnames=("n", "full"))
def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix: `(n - 1, n)` orthonormal rows orthogonal to the ones vector
    (`(n, n)` orthogonal with `full`, its first row constant)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = array_creation.arange(n - 1)[:, None]
    j = array_creation.arange(n)[None, :]
    k = (i + 1).astype(dtypes.default_float_dtype())
    denom = ufuncs.sqrt(k * (k + 1))
    h = selection.where(j <= i, 1.0 / denom,
                        selection.where(j == i + 1, -k / denom, array_creation.zeros_like(denom)))
    if full:
        first = array_creation.full((1, n), 1.0 / np.sqrt(n), dtype=h.dtype)
        h = joining.concatenate([first, h], axis=0)
    return h


@util.jitted_as_in_jax(static_argnames=("n", "dtype"))
def hadamard(n: int, dtype: Any = int) -> Any:
    """The `(n, n)` Hadamard matrix of Sylvester's construction, n a power of 2."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = array_creation.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        top = joining.concatenate([h, h], axis=1)
        bottom = joining.concatenate([h, -h], axis=1)
        h = joining.concatenate([top, bottom], axis=0)
    return h


@util.jitted_as_in_jax(static_argnames=("n", "scale", "dtype"))
def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The `(n, n)` discrete Fourier transform matrix `exp(-2 pi i j k / n)`.

    Args:
      n: the size.
      scale: None, 'sqrtn' (divided by sqrt(n)) or 'n' (divided by n).
      dtype: a complex dtype (the default complex dtype by default).
    Returns:
      The matrix.
    """
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.check_user_dtype(dtype, "dft")
        if not dtypes.is_complex(dtype):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = array_creation.arange(n, dtype=dtype)
    omegas = ufuncs.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / ufuncs.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas
