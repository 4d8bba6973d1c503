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
def _associated_legendre(l_max: int, x: Any, normalized: bool) -> Any:
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
    legendre = _associated_legendre(n_max, ufuncs.cos(theta), True)
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
