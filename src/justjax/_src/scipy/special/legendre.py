"""Associated Legendre functions and spherical harmonics: sph_harm_y, and the deprecated
lpmn / lpmn_values."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import core
from justjax._src.lax import elementwise as lax
from justjax._src.numpy import (array_creation, joining, reductions, selection, shape_ops,
                                ufuncs, util)

__all__ = ["sph_harm_y"]


def _recurrence_coefficients(l_max: int, normalized: bool) -> tuple[np.ndarray, np.ndarray]:
    """d0[m, l], d1[m, l] of P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m (used where l >= m + 2)."""
    m, l = np.meshgrid(np.arange(l_max + 1.0), np.arange(l_max + 1.0), indexing="ij")
    with np.errstate(divide="ignore", invalid="ignore"):
        if normalized:
            d0 = np.sqrt((4 * l * l - 1) / (l * l - m * m))
            d1 = np.sqrt((2 * l + 1) * ((l - 1) ** 2 - m * m) / ((2 * l - 3) * (l * l - m * m)))
        else:
            d0 = (2 * l - 1) / (l - m)
            d1 = (l + m - 1) / (l - m)
    used = l >= m + 2
    return np.where(used, d0, 0.0), np.where(used, d1, 0.0)


@util.jitted_as_in_jax(static_argnums=(0, 2))
def _gen_associated_legendre(l_max: int, x: Any, normalized: bool) -> Any:
    """P_l^m(x) for 0 <= m, l <= l_max (zero where m > l), shape (l_max + 1, l_max + 1,
    len(x)) indexed [m, l, i]. Normalized: times sqrt((2l + 1) (l - m)! / (4 pi (l + m)!)),
    the spherical harmonics' normalization. The diagonal P_m^m by products of sqrt(1 - x^2),
    the first off-diagonal P_{m+1}^m from it, the rest by the three-term recurrence in l."""
    dtype = x.dtype
    orders = np.arange(1, l_max + 1, dtype=np.float64)
    if normalized:
        first = 0.5 / np.sqrt(np.pi)
        diagonal_factor = np.cumprod(-np.sqrt(1.0 + 0.5 / orders))
        off_factor = np.sqrt(2.0 * np.arange(l_max) + 3.0)
    else:
        first = 1.0
        diagonal_factor = np.cumprod(1.0 - 2.0 * orders)
        off_factor = 2.0 * np.arange(l_max) + 1.0
    d0, d1 = _recurrence_coefficients(l_max, normalized)
    sine = ufuncs.sqrt(1.0 - x * x)
    powers = [array_creation.ones_like(x)]
    for _ in range(l_max):
        powers.append(powers[-1] * sine)
    diagonal = [array_creation.full_like(x, first)] + [
        first * (np.array(diagonal_factor[m - 1], dtype) * powers[m]) for m in range(1, l_max + 1)]
    zeros = array_creation.zeros_like(x)
    columns: list[list[Any]] = []  # columns[l][m]
    for l in range(l_max + 1):
        column = []
        for m in range(l_max + 1):
            if m > l:
                column.append(zeros)
            elif m == l:
                column.append(diagonal[m])
            elif m == l - 1:
                column.append(np.array(off_factor[m], dtype) * x * diagonal[m])
            else:
                column.append(np.array(d0[m, l], dtype) * (columns[l - 1][m] * x)
                              - np.array(d1[m, l], dtype) * columns[l - 2][m])
        columns.append(column)
    return joining.stack([joining.stack(column) for column in columns], axis=1)


@util.jitted_as_in_jax(static_argnums=(4,))
def _sph_harm(n: Any, m: Any, theta: Any, phi: Any, n_max: int) -> Any:
    legendre = _gen_associated_legendre(n_max, ufuncs.cos(theta), True)
    abs_m = ufuncs.absolute(m)
    values = legendre.at[abs_m, n, array_creation.arange(shape_ops.shape(n)[0])].get(mode="clip")
    angle = abs_m * phi
    harmonics = lax.complex(values * ufuncs.cos(angle), values * ufuncs.sin(angle))
    # Y_n^{-m} = (-1)^m conj(Y_n^m).
    return selection.where(m < 0, (-1.0) ** abs_m * ufuncs.conjugate(harmonics), harmonics)


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """The spherical harmonics Y_n^m(theta, phi) (theta the polar angle, phi the azimuth),
    SciPy's `sph_harm_y` convention, with the Condon-Shortley phase.

    Args:
      n: degrees, a 1-D integer array.
      m: orders, |m| <= n, same length.
      theta: polar angles (a scalar is one angle).
      phi: azimuthal angles.
      diff_n: derivatives are not supported (must be None).
      n_max: the largest degree, a concrete int (the largest of `n` when None, which needs
        a concrete `n`).
    Returns:
      The complex harmonics, one per entry.
    """
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if shape_ops.isscalar(theta):
        theta = array_creation.array([theta])
    if n_max is None:
        n_max = reductions.max(n)
    n_max = core.concrete_or_error(
        int, n_max, "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
        "specified to use `sph_harm` within JAX transformations.")
    return _sph_harm(n, m, theta, phi, n_max)


def _check_lpmn_arguments(m: Any, n: Any, z: Any) -> tuple[int, int]:
    dtype = np.dtype(z.dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"z.dtype={dtype} is not supported, see docstring for supported types.")
    if z.ndim != 1:
        raise ValueError("z must be a 1D array.")
    m = core.concrete_or_error(int, m, "Argument m of lpmn.")
    n = core.concrete_or_error(int, n, "Argument n of lpmn.")
    if m != n:
        raise NotImplementedError("Computations for m!=n are not yet supported.")
    return m, n


def _shift(p: Any, axis: int, by: int) -> Any:
    """`p` moved `by` places along `axis` (positive: towards higher indices), zero-filled."""
    size = p.shape[axis]
    if abs(by) >= size:
        return array_creation.zeros_like(p)
    index = [slice(None)] * p.ndim
    pad_shape = list(p.shape)
    pad_shape[axis] = abs(by)
    zeros = array_creation.zeros(pad_shape, dtype=p.dtype)
    if by > 0:
        index[axis] = slice(0, size - by)
        return joining.concatenate([zeros, p[tuple(index)]], axis=axis)
    index[axis] = slice(-by, size)
    return joining.concatenate([p[tuple(index)], zeros], axis=axis)


@util.jitted_as_in_jax(static_argnums=(2,))
def _gen_derivatives(p: Any, x: Any, normalized: bool) -> Any:
    """dP_l^m/dx of the unnormalized functions, from P_l^{m-1} and P_l^{m+1} (each by a
    recurrence in P_{l-1}), the negative orders P_n^-1, P_n^-2 from P_n^1, P_n^2; the row
    m = 1 from P_l^0 and P_l^2 over sqrt(1 - x^2), as JAX's lpmn."""
    if normalized:
        raise NotImplementedError("Negative orders for normalization is not implemented yet.")
    num_m, num_l, _ = p.shape
    dtype = np.dtype(x.dtype)
    m, l = np.meshgrid(np.arange(num_m, dtype=np.float64), np.arange(num_l, dtype=np.float64),
                       indexing="ij")
    upper = l >= m
    p_lm1 = _shift(p, 1, 1)
    p_mp2_lm1 = _shift(p_lm1, 0, -2)
    p_mm2_lm1 = _shift(p_lm1, 0, 2)
    if num_l > 1:
        # P_{l-1}^{-1} = -P_{l-1}^1 / (l (l - 1)), into row m = 1 from l = 2 on.
        ls = np.arange(1, num_l - 1, dtype=dtype)
        p_mm2_lm1 = p_mm2_lm1.at[1, 2:num_l, :].set(
            (-1.0 / ((ls + 1) * ls))[:, None] * p[1, 1:num_l - 1, :])
    if num_l > 2:
        # P_{l-1}^{-2} = P_{l-1}^2 / ((l + 1) l (l - 1) (l - 2)), into row m = 0 from l = 3.
        ls = np.arange(2, num_l - 1, dtype=dtype)
        p_mm2_lm1 = p_mm2_lm1.at[0, 3:num_l, :].set(
            (1.0 / ((ls + 2) * (ls + 1) * ls * (ls - 1)))[:, None] * p[2, 2:num_l - 1, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        a0 = np.where(upper, -0.5 / (m - 1.0), 0.0)
        b0 = l + m
        c0 = np.where(upper, -0.5 / (m - 1.0) * (b0 - 2.0) * (b0 - 1.0), 0.0)
        # P_l^{m-1} for m = 1 is P_l^0: no recurrence (1 / (m - 1) is infinite there).
        a0[1:2, :] = 0.0
        c0[1:2, :] = 0.0
        d0 = np.where(upper, -0.5 / (m + 1.0), 0.0)
        e0 = np.where(upper, -0.5 / (m + 1.0) * b0 * (b0 + 1.0), 0.0)
        f0 = np.where(upper, b0 * (l - m + 1.0) / 2.0, 0.0)
    cast = lambda c: np.asarray(c, dtype)[:, :, None]  # noqa: E731
    p_mm1 = cast(a0) * p_lm1 + cast(c0) * p_mm2_lm1
    p_mp1 = cast(d0) * p_mp2_lm1 + cast(e0) * p_lm1
    derivative = cast(f0) * p_mm1 - 0.5 * p_mp1
    if num_m > 1:
        ls = np.arange(num_l, dtype=dtype)
        g0 = ((ls + 1) * ls)[:, None] * p[0, :, :]
        if num_l > 2:
            g0 = g0 - p[2, :, :]
        row = (0.5 / ufuncs.sqrt(1 - x * x))[None, :] * g0
        derivative = derivative.at[1, :, :].set(row)
        derivative = derivative.at[1, 0, :].set(0)
    return derivative


def lpmn(m: int, n: int, z: Any) -> tuple[Any, Any]:
    """The associated Legendre functions P_l^k(z) of the first kind for k <= m, l <= n, and
    their derivatives in z (deprecated in JAX; only m == n).

    Args:
      m: the largest order, a concrete int.
      n: the largest degree, a concrete int equal to m.
      z: a 1-D float32 or float64 array.
    Returns:
      `(p, dp)`, each of shape (m + 1, n + 1, len(z)), indexed [order, degree, point].
    """
    _, n = _check_lpmn_arguments(m, n, z)
    values = _gen_associated_legendre(n, z, False)
    return values, _gen_derivatives(values, z, False)


def lpmn_values(m: int, n: int, z: Any, is_normalized: bool) -> Any:
    """The associated Legendre functions P_l^k(z) for k <= m, l <= n (deprecated in JAX; only
    m == n), normalized as the spherical harmonics when `is_normalized`.

    Args:
      m: the largest order, a concrete int.
      n: the largest degree, a concrete int equal to m.
      z: a 1-D float32 or float64 array.
      is_normalized: apply sqrt((2l + 1) (l - k)! / (4 pi (l + k)!)).
    Returns:
      An array of shape (m + 1, n + 1, len(z)), indexed [order, degree, point].
    """
    _, n = _check_lpmn_arguments(m, n, z)
    return _gen_associated_legendre(n, z, is_normalized)
