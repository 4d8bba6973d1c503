"""Polynomials as coefficient arrays, highest power first (NumPy's `poly*` functions):
`poly`, `polyadd`, `polysub`, `polymul`, `polydiv`, `polyder`, `polyint`, `polyfit`,
`roots`, and `trim_zeros`. Lengths are static: leading zeros are kept unless asked to trim
(which needs concrete coefficients), as in JAX."""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.numpy import (array_creation, joining, linalg, linalg_extra, numeric,
                                padding, rearranging, reductions, scalar_types, selection,
                                shape_ops, sorting, tensor, ufuncs, util)

__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub",
           "roots", "trim_zeros"]


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots, or the characteristic
    polynomial of a square matrix.

    Args:
      seq_of_zeros: 1-D roots, or a square 2-D matrix.
    Returns:
      The coefficients (inexact).
    """
    seq = util.ensure_arraylike("poly", seq_of_zeros)
    [seq] = util.promote_dtypes_inexact(seq)
    if seq.ndim == 2 and seq.shape[0] == seq.shape[1] and seq.shape[0] != 0:
        seq = linalg.eigvals(seq)
    elif seq.ndim == 0:
        seq = seq.reshape(1)
    elif seq.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if seq.shape[0] == 0:
        return array_creation.ones((), dtype=seq.dtype)
    coefficients = array_creation.ones((1,), dtype=seq.dtype)
    for k in range(seq.shape[0]):
        coefficients = tensor.convolve(coefficients, joining.concatenate(
            [array_creation.ones((1,), dtype=seq.dtype), -seq[k:k + 1]]), mode="full")
    return coefficients


def _aligned(name: str, a1: Any, a2: Any) -> tuple[Any, Any]:
    """Both polynomials, promoted and left-padded with zeros to one length."""
    a1, a2 = util.promote_args(name, a1, a2)
    length = max(a1.shape[0], a2.shape[0])
    return (padding.pad(a1, (length - a1.shape[0], 0)),
            padding.pad(a2, (length - a2.shape[0], 0)))


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials."""
    a1, a2 = _aligned("polyadd", a1, a2)
    return a1 + a2


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials."""
    a1, a2 = _aligned("polysub", a1, a2)
    return a1 - a2


def _leading_zeros_trimmed(name: str, a: Any) -> Any:
    return trim_zeros(core.concrete_or_error(lambda v: v, a, f"argument of jnp.{name} with "
                                             "trim_leading_zeros=True"), trim="f")


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (their coefficients' convolution).

    Args:
      a1, a2: the polynomials.
      trim_leading_zeros: drop leading zero coefficients first (needs concrete inputs).
    Returns:
      The product (inexact), of length `len(a1) + len(a2) - 1`.
    """
    a1, a2 = util.promote_args_inexact("polymul", a1, a2)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = _leading_zeros_trimmed("polymul", a1), _leading_zeros_trimmed("polymul", a2)
    if a1.shape[0] == 0:
        a1 = array_creation.zeros((1,), dtype=a1.dtype)
    if a2.shape[0] == 0:
        a2 = array_creation.zeros((1,), dtype=a2.dtype)
    return tensor.convolve(a1, a2, mode="full")


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Long division of polynomials: `u = q v + r`.

    Args:
      u: the dividend.
      v: the divisor; its leading coefficient must be nonzero (else the results are NaN).
      trim_leading_zeros: drop the remainder's leading zeros (needs concrete inputs).
    Returns:
      `(q, r)`, `q` of length `len(u) - len(v) + 1` and `r` of length `len(u)`.
    """
    u, v = util.promote_args_inexact("polydiv", u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    quotient = []
    r = array_creation.asarray(u)
    for k in range(0, m - n + 1):
        d = scale * r[k]
        quotient.append(d)
        r = r.at[k:k + n + 1].add(-d * v)
    q = joining.stack(quotient) if quotient else array_creation.zeros((1,), dtype=u.dtype)
    if trim_leading_zeros:
        r = _leading_zeros_trimmed("polydiv", r)
    return q, r


def polyder(p: Any, m: int = 1) -> Any:
    """The `m`-th derivative of a polynomial.

    Args:
      p: the coefficients.
      m: the order (>= 0).
    Returns:
      The derivative's coefficients (inexact).
    """
    [p] = util.promote_args_inexact("polyder", p)
    m = core.concrete_or_error(operator.index, m, "m argument of jnp.polyder")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    # Coefficient of x^j gets j (j-1) ... (j-m+1).
    powers = np.arange(p.shape[0] - 1, -1, -1)
    factors = np.prod([powers - i for i in range(m)], axis=0)[:max(p.shape[0] - m, 0)]
    return p[:max(p.shape[0] - m, 0)] * array_creation.asarray(factors, dtype=p.dtype)


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The `m`-th antiderivative of a polynomial, with integration constants `k`.

    Args:
      p: the coefficients.
      m: the order (>= 0).
      k: the constants, one per integration (a scalar is used for all); default 0.
    Returns:
      The antiderivative's coefficients (inexact).
    """
    m = core.concrete_or_error(operator.index, m, "order argument to polyint")
    k = 0 if k is None else k
    util.check_arraylike("polyint", p, k)
    [p, k] = util.promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = shape_ops.atleast_1d(k)
    if k.shape == (1,):
        k = util.broadcast_to(k, (m,))
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    # Coefficient of x^j becomes that of x^(j+m), divided by (j+1)(j+2)...(j+m).
    powers = np.arange(p.shape[0] - 1, -1, -1)
    divisors = np.prod([powers + i for i in range(1, m + 1)], axis=0)
    integrated = p / array_creation.asarray(divisors, dtype=p.dtype)
    # k[i] is the constant of the i-th integration: it ends as the coefficient of
    # x^(m-1-i), divided by (m-1-i)!.
    factorials = [float(np.prod(np.arange(1, m - i))) for i in range(m)]
    constants = k / array_creation.asarray(factorials, dtype=p.dtype)
    return joining.concatenate([integrated, constants])


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool | str = False) -> Any:
    """The least-squares polynomial of degree `deg` through the points `(x, y)`.

    Args:
      x: sample points, 1-D.
      y: values, 1-D or 2-D (one fit per column).
      deg: the degree.
      rcond: relative cutoff for small singular values (default `len(x) * eps`).
      full: also return residuals, rank, singular values and rcond.
      w: weights applied to the residuals.
      cov: also return the coefficients' covariance (`"unscaled"`: not scaled by the
        residuals).
    Returns:
      The coefficients (highest power first), or a tuple as NumPy's.
    """
    if w is None:
        x, y = util.ensure_arraylike("polyfit", x, y)
    else:
        x, y, w = util.ensure_arraylike("polyfit", x, y, w)
    deg = core.concrete_or_error(int, deg, "deg must be int")
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(scalar_types.finfo(x.dtype).eps)
    rcond = core.concrete_or_error(float, rcond, "rcond must be float")
    lhs = numeric.vander(x, order)
    rhs = y
    if w is not None:
        [w] = util.promote_dtypes_inexact(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    # Columns scaled to unit norm for a better conditioned solve.
    scale = ufuncs.sqrt(reductions.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg_extra.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, array_creation.asarray(rcond)
    if not cov:
        return c
    v_base = linalg.inv(tensor.dot(lhs.T, lhs)) / tensor.outer(scale, scale)
    if cov == "unscaled":
        factor = array_creation.array(1.0)
    else:
        if x.shape[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        factor = resids / (x.shape[0] - order)
    if y.ndim == 1:
        return c, v_base * shape_ops.atleast_1d(factor)[None]
    return c, v_base[:, :, None] * shape_ops.atleast_1d(factor)[None, None, :]


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of a polynomial: the eigenvalues of its companion matrix.

    Args:
      p: the coefficients (1-D).
      strip_zeros: drop leading zero coefficients first (needs concrete input). Otherwise
        each leading zero gives a NaN root, placed last (the shape stays static).
    Returns:
      The roots (complex).
    """
    p = util.ensure_arraylike("roots", p)
    [p] = util.promote_dtypes_inexact(p)
    p = shape_ops.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p.size < 2:
        return array_creation.array([], dtype=dtypes.to_complex_dtype(p.dtype))
    is_zero = p == 0
    leading = selection.where(reductions.all(is_zero), p.size, reductions.argmin(is_zero))
    if strip_zeros:
        leading = core.concrete_or_error(
            int, leading, "The error occurred in the jnp.roots() function. To use this within "
            "a JIT-compiled context, pass strip_zeros=False, but be aware that leading zeros "
            "will result in some returned roots being set to NaN.")
        return _companion_roots(p[leading:])
    # Leading zeros rolled to the end become zero roots; those are then sorted last and
    # replaced by NaN, one per leading zero.
    safe = selection.where(leading == p.size, 1.0, p)
    found = _companion_roots(rearranging.roll(safe, -leading))
    order = sorting.argsort(found == 0, stable=True)
    found = found[order]
    nan = array_creation.asarray(complex(np.nan, np.nan), dtype=found.dtype)
    return selection.where(array_creation.arange(found.size) < found.size - leading, found, nan)


def _companion_roots(p: Any) -> Any:
    """The eigenvalues of the companion matrix: first row `-p[1:] / p[0]`, ones below the
    diagonal."""
    if p.size < 2:
        return array_creation.array([], dtype=dtypes.to_complex_dtype(p.dtype))
    n = p.shape[0] - 1
    companion = array_creation.eye(n, k=-1, dtype=p.dtype).at[0].set(-p[1:] / p[0])
    return linalg.eigvals(companion)


def trim_zeros(filt: Any, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Any:
    """`filt` without its leading (`"f"`) and/or trailing (`"b"`) zeros along the axes.

    Args:
      filt: the array (concrete: the result's shape depends on its values).
      trim: `"f"`, `"b"` or `"fb"`.
      axis: the axes to trim (default all).
    Returns:
      The trimmed array.
    """
    filt = util.ensure_arraylike("trim_zeros", filt)
    concrete = core.concrete_or_error(np.asarray, filt, "Error arose in the `filt` argument "
                                      "of trim_zeros()")
    axes = range(filt.ndim) if axis is None else util.canonicalize_axes(axis, filt.ndim)
    nonzero = np.argwhere(concrete)
    if nonzero.size == 0:
        return filt[tuple(slice(0, 0) if i in axes else slice(None)
                          for i in range(filt.ndim))]
    start, stop = nonzero.min(axis=0), nonzero.max(axis=0) + 1
    lower = "f" in trim.lower()
    upper = "b" in trim.lower()
    index = tuple(slice(int(start[i]) if lower else None, int(stop[i]) if upper else None)
                  if i in axes else slice(None) for i in range(filt.ndim))
    return filt[index]
