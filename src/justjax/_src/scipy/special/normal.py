"""The standard normal CDF, its inverse and its log: ndtr, ndtri, log_ndtr."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.numpy import array_creation, numeric, selection, ufuncs, util

__all__ = ["log_ndtr", "ndtr", "ndtri"]


def _check_ndtr_dtype(dtype: np.dtype) -> None:
    """`ndtr` and `ndtri` take float32 and float64 only (TypeError, as JAX)."""
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported types.")


def ndtr(x: Any) -> Any:
    """The standard normal CDF `(1 + erf(x / sqrt(2))) / 2`, for float32/float64 `x` only
    (other dtypes raise TypeError, as in JAX).

    Args:
      x: a float32 or float64 array.
    Returns:
      An array of `x`'s dtype.
    """
    x = array_creation.asarray(x)
    _check_ndtr_dtype(np.dtype(x.dtype))
    return _ndtr(x)


def _ndtr(x: Any) -> Any:
    """`ndtr` without the dtype check. As JAX: `1 + erf(w)` near 0 and erfc of `|w|` in the
    tails (`2 - erfc(|w|)` above, `erfc(|w|)` below), so both tails keep their precision."""
    scalar = np.dtype(x.dtype).type
    half_sqrt2 = scalar(0.5) * np.sqrt(2.0, dtype=scalar)
    w = ufuncs.multiply(x, half_sqrt2)
    z = lax.abs(w)
    # Built in JAX's order (its erfc(|w|) is computed twice, once per branch).
    near_zero = lax.lt(z, half_sqrt2)
    center = ufuncs.add(scalar(1.0), lax.erf(w))
    upper = lax.gt(w, scalar(0.0))
    upper_tail = ufuncs.subtract(scalar(2.0), lax.erfc(z))
    tails = lax_selection.select(upper, upper_tail, lax.erfc(z))
    return ufuncs.multiply(scalar(0.5), lax_selection.select(near_zero, center, tails))


# Cephes' piecewise rational approximation of the inverse normal CDF (ndtri.c): P0/Q0 for
# the central part (p > exp(-2)), P1/Q1 and P2/Q2 for the tail, in z = sqrt(-2 log p),
# split at z = 8 (p = exp(-32)). Coefficients highest degree first.
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _tail_ratio(p: tuple[float, ...], q: tuple[float, ...], z: Any, dtype: type) -> Any:
    """`P(1/z) / Q(1/z)` (1/z formed once per polynomial, as JAX's jaxpr has it)."""
    return ufuncs.true_divide(numeric.polyval(np.array(p, dtype), ufuncs.true_divide(1, z)),
                              numeric.polyval(np.array(q, dtype), ufuncs.true_divide(1, z)))


def ndtri(p: Any) -> Any:
    """The inverse of the standard normal CDF: `x` with `ndtr(x) == p`; -inf at 0, inf at 1,
    NaN outside [0, 1]. Cephes' piecewise rational approximation.

    Args:
      p: a float32 or float64 array of probabilities.
    Returns:
      An array of `p`'s dtype.
    """
    p = array_creation.asarray(p)
    _check_ndtr_dtype(np.dtype(p.dtype))
    return _ndtri(p)


def _ndtri(p: Any) -> Any:
    scalar = np.dtype(p.dtype).type
    # Work on the smaller of p and 1 - p (the result's sign is restored at the end).
    complement = ufuncs.greater(p, scalar(-np.expm1(-2.0)))
    small_p = selection.where(complement, ufuncs.subtract(scalar(1.0), p), p)
    # 0 would give NaNs in the unused branches (and their gradients): any safe value will do.
    small_p = selection.where(ufuncs.equal(small_p, scalar(0.0)),
                              array_creation.full(np.shape(p), scalar(0.5)), small_p)
    # Central part: x / sqrt(2 pi) = w + w**3 P0(w**2) / Q0(w**2), w = p - 1/2.
    w = ufuncs.subtract(small_p, scalar(0.5))
    ww = lax.square(w)
    w_cubed = ufuncs.multiply(w, ww)
    central_ratio = ufuncs.true_divide(numeric.polyval(np.array(_NDTRI_P0, scalar), ww),
                                       numeric.polyval(np.array(_NDTRI_Q0, scalar), ww))
    central = ufuncs.add(w, ufuncs.multiply(w_cubed, central_ratio))
    central = ufuncs.multiply(central, -scalar(np.sqrt(2.0 * np.pi)))
    # Tail: x = z - log(z) / z - P(1/z) / (z Q(1/z)).
    z = lax.sqrt(ufuncs.multiply(scalar(-2.0), lax.log(small_p)))
    first_term = ufuncs.subtract(z, ufuncs.true_divide(lax.log(z), z))
    far_correction = ufuncs.true_divide(_tail_ratio(_NDTRI_P2, _NDTRI_Q2, z, scalar), z)
    near_correction = ufuncs.true_divide(_tail_ratio(_NDTRI_P1, _NDTRI_Q1, z, scalar), z)
    far_tail = ufuncs.subtract(first_term, far_correction)
    near_tail = ufuncs.subtract(first_term, near_correction)
    x = selection.where(ufuncs.greater(small_p, scalar(np.exp(-2.0))), central,
                        selection.where(ufuncs.greater_equal(z, scalar(8.0)), far_tail,
                                        near_tail))
    x = selection.where(ufuncs.greater(p, scalar(1.0 - np.exp(-2.0))), x, ufuncs.negative(x))
    infinity = array_creation.full(np.shape(p), scalar(np.inf))
    return selection.where(ufuncs.equal(p, scalar(0.0)), ufuncs.negative(infinity),
                           selection.where(ufuncs.equal(p, scalar(1.0)), infinity, x))


# Where log_ndtr switches method, by dtype: below the lower segment the asymptotic series,
# above the upper one `-ndtr(-x)` (log(1 - e) ~ -e), between them `log(ndtr(x))`.
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (np.array(-10, np.float32), np.array(5, np.float32)),
                      np.dtype(np.float64): (np.array(-20, np.float64), np.array(8, np.float64))}


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """`log(ndtr(x))`, accurate far into both tails: `-ndtr(-x)` above an upper segment
    (5 for float32, 8 for float64), an asymptotic series of `series_order` terms below a
    lower one (-10, -20), `log(ndtr(x))` between. Its derivative is `pdf(x) / ndtr(x)`,
    computed in log space.

    Args:
      x: a float32 or float64 array.
      series_order: the number of series terms, a Python int in [0, 30].
    Returns:
      An array of `x`'s dtype.
    """
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = array_creation.asarray(x)
    dtype = np.dtype(x.dtype)
    if dtype not in _LOG_NDTR_SEGMENTS:
        raise TypeError(f"x.dtype={dtype} is not supported.")
    lower, upper = _LOG_NDTR_SEGMENTS[dtype]
    above = lax.gt(x, upper)
    # One ndtr call for both ends. The max/min keep the unused branches finite, so their
    # (discarded) gradients do not turn the selected one into NaN.
    ndtr_res = _ndtr(selection.where(above, ufuncs.negative(x), lax.max(x, lower)))
    return selection.where(above, ufuncs.negative(ndtr_res),
                           selection.where(lax.gt(x, lower), lax.log(ndtr_res),
                                           _log_ndtr_lower(lax.min(x, lower), series_order)))


@log_ndtr.defjvp
def _log_ndtr_jvp(series_order: int, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    ans = log_ndtr(x, series_order=series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """`log(ndtr(x))` for x << -1: `log(pdf(x) / -x) + log(1 + series)`."""
    scalar = np.dtype(x.dtype).type
    log_scale = ufuncs.subtract(
        ufuncs.subtract(ufuncs.multiply(-scalar(0.5), lax.square(x)), lax.log(lax.neg(x))),
        scalar(0.5 * np.log(2.0 * np.pi)))
    return ufuncs.add(log_scale, lax.log(_log_ndtr_asymptotic_series(x, series_order)))


def _log_ndtr_asymptotic_series(x: Any, series_order: int) -> Any:
    """`1 + sum_n (-1)**n (2n - 1)!! / x**(2n)` for n = 1 .. series_order (the alternating
    terms gathered as even minus odd sums, as JAX adds them)."""
    scalar = np.dtype(x.dtype).type
    if series_order <= 0:
        return np.array(1, scalar)
    x_2 = lax.square(x)
    even_sum = array_creation.zeros_like(x)
    odd_sum = array_creation.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        term = ufuncs.true_divide(np.array(np.prod(np.arange(2 * n - 1, 1, -2)), scalar), x_2n)
        if n % 2:
            odd_sum = ufuncs.add(odd_sum, term)
        else:
            even_sum = ufuncs.add(even_sum, term)
        x_2n = ufuncs.multiply(x_2n, x_2)
    return ufuncs.subtract(ufuncs.add(scalar(1.0), even_sum), odd_sum)


def _norm_logpdf(x: Any) -> Any:
    """The standard normal's log density `-x**2 / 2 - log(sqrt(2 pi))`."""
    neg_half = util.const(x, -0.5)
    log_normalizer = util.const(x, np.log(np.sqrt(2 * np.pi)))
    return lax.sub(lax.mul(neg_half, lax.square(x)), log_normalizer)
