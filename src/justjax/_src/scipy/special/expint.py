"""Exponential and trigonometric integrals and the dilogarithm: expi, exp1, expn, sici,
spence (Cephes' rational approximations and series, as JAX computes them)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from justjax._src.core import dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.numpy import array_creation, numeric, selection, ufuncs, util, vectorize
from justjax._src.scipy.special._util import promote_inexact, reject_complex
from justjax._src.scipy.special.gamma import gammaln

__all__ = ["exp1", "expi", "expn", "sici", "spence"]


def _ratio(num: tuple[float, ...], den: tuple[float, ...], t: Any) -> Any:
    dtype = np.dtype(t.dtype)
    return numeric.polyval(np.array(num, dtype), t) / numeric.polyval(np.array(den, dtype), t)


# -- expi: Cephes' ei.c. (0, 2] by a power-series-like rational function, then one rational
# approximation of x exp(-x) Ei(x) in 1/x per octave (2, 4], ..., (32, 64], and one above. ----

_EI1_A = (-5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557,
          -331338.13311781443, 1592627.1633849454)
_EI1_B = (1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726,
          -729494.9239640528, 1592627.1633849454)
_EI2_A = (0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367,
          -0.44095070487016, 0.046656238059358916, -0.0015450426796734852,
          7.059980605299618e-05)
_EI2_B = (1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072,
          0.02291647179034212, 0.0044501504397287525, 0.00017274396122065214,
          3.953167195549672e-05)
_EI3_A = (-1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623,
          0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05,
          2.141783679522603e-06)
_EI3_B = (1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476,
          0.024498682410218877, 0.0008832165941927797, 0.00045909522995113536,
          -4.729848351866523e-06, 2.66519553739071e-06)
_EI4_A = (-2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566,
          0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05,
          -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10)
_EI4_B = (1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924,
          0.002761106850817353, -0.00020891480122840484, 1.7085289388076754e-05,
          -4.4593117963566865e-07, 1.3946349303538475e-08, 6.150865933977338e-10)
_EI5_A = (-0.24581193676740204, -0.14833822533220778, 0.07248291795735552,
          -0.013483156873809405, 0.001342775069788637, -7.942465637159712e-05,
          2.644179518984236e-06, -4.239473659313765e-08)
_EI5_B = (1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984,
          -0.01601745692712991, 0.001496414899205908, -8.462452563778485e-05,
          2.7289384034767266e-06, -4.239462431819542e-08)
_EI6_A = (0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484,
          0.0015100821468651906, -2.5231370954995714e-05)
_EI6_B = (1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008,
          0.0015605448811273888, -2.5231370936032347e-05)
_EI7_A = (-0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935,
          -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06,
          1.218032765428652e-07, -1.0860761027932903e-09)
_EI7_B = (1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805,
          0.039308526882338234, -0.003414684558602365, 0.00018668443707035555,
          -6.345146083130515e-06, 1.239754287483207e-07, -1.0860761027931265e-09)


def _ei_small(x: Any) -> Any:
    return x * _ratio(_EI1_A, _EI1_B, x) + np.euler_gamma + ufuncs.log(x)


def _ei_octave(num: tuple[float, ...], den: tuple[float, ...]) -> Any:
    """Ei(x) = exp(x) / x (1 + f(1/x) / x) with f a rational function."""
    def ei(x: Any) -> Any:
        one = util.const(x, 1.0)
        w = one / x
        f = w * _ratio(num, den, w) + one
        return ufuncs.exp(x) * w * f
    return ei


_EI_PIECES = [_ei_small, _ei_octave(_EI2_A, _EI2_B), _ei_octave(_EI3_A, _EI3_B),
              _ei_octave(_EI4_A, _EI4_B), _ei_octave(_EI5_A, _EI5_B),
              _ei_octave(_EI6_A, _EI6_B), _ei_octave(_EI7_A, _EI7_B)]


def _expi_positive(x: Any) -> Any:
    c = functools.partial(util.const, x)
    conditions = [(c(0) < x) & (x <= c(2))] + [(c(2 ** i) < x) & (x <= c(2 ** (i + 1)))
                                               for i in range(1, 6)]
    return selection.piecewise(x, conditions, _EI_PIECES)


def _expi_negative(x: Any) -> Any:
    return -exp1(-x)


@custom_jvp
@util.jitted_as_in_jax
def expi(x: Any) -> Any:
    """The exponential integral Ei(x) = -int_{-x}^inf exp(-t) / t dt (-E1(-x) for x < 0).

    Args:
      x: real array.
    Returns:
      Ei(x) in the promoted inexact dtype.
    """
    [x] = promote_inexact("expi", x)
    reject_complex("expi", x)
    return selection.piecewise(x, [x < 0], [_expi_negative, _expi_positive])


@expi.defjvp
@util.jitted_as_in_jax
def expi_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return expi(x), ufuncs.exp(x) / x * x_dot


# -- expn: Cephes' expn.c ---------------------------------------------------------------------

def _expn_series(x: Any, n: Any) -> Any:
    """x <= 1: E_n(x) = (-x)^(n-1) psi(n) / (n-1)! - sum_{k != n-1} (-x)^k / (k! (k - n + 1)),
    psi(n) = -gamma - log(x) + sum_{i<n} 1/i."""
    eps = dtypes.finfo(x.dtype).eps
    zero = util.const(x, 0.0)
    one = util.const(x, 1.0)

    def harmonic_step(state: tuple) -> tuple:
        i, total = state
        return i + one, total + one / i

    _, psi = while_loop(lambda state: state[0] < n, harmonic_step,
                        (util.const(n, 1), -np.euler_gamma - ufuncs.log(x)))
    z = -x
    first = selection.where(n == 1, zero, one / (one - selection.where(n == 1, n + n, n)))

    def series_step(state: tuple) -> tuple:
        xk, yk, pk, total, _ = state
        xk = xk + one
        yk = yk * z / xk
        pk = pk + one
        total = total + selection.where(pk != zero, yk / pk, zero)
        change = selection.where(total != zero, ufuncs.absolute(yk / total), one)
        return xk, yk, pk, total, change

    state = (zero, one, one - n, first, util.const(x, np.inf))
    *_, total, _ = while_loop(lambda s: (x > zero) & (s[4] > eps), series_step, state)
    return z ** (n - 1) * psi / ufuncs.exp(gammaln(n)) - total


# Rescale the continued fraction's recurrences when they grow past 2**57.
_EXPN_BIG = 1.44115188075855872E+17


def _expn_continued_fraction(x: Any, n: Any) -> Any:
    """x > 1: E_n(x) = exp(-x) / (x + n / (1 + 1 / (x + (n + 1) / (1 + 2 / (x + ...)))))."""
    eps = dtypes.finfo(x.dtype).eps
    big = util.const(x, _EXPN_BIG)
    zero = util.const(x, 0.0)
    one = util.const(x, 1.0)

    def step(state: tuple) -> tuple:
        k, pkm2, qkm2, pkm1, qkm1, ans, _, r = state
        k = k + util.const(k, 1)
        odd = k % util.const(k, 2) == util.const(k, 1)
        yk = selection.where(odd, one, x)
        xk = selection.where(odd, n + (k - util.const(k, 1)) / util.const(k, 2),
                             k / util.const(k, 2))
        pk = pkm1 * yk + pkm2 * xk
        qk = qkm1 * yk + qkm2 * xk
        nonzero = qk != zero
        r = selection.where(nonzero, pk / qk, r)
        change = selection.where(nonzero, ufuncs.absolute((ans - r) / r), one)
        ans = selection.where(nonzero, r, ans)
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        is_big = ufuncs.absolute(pk) > big
        pkm2, pkm1, qkm2, qkm1 = (selection.where(is_big, v / big, v)
                                  for v in (pkm2, pkm1, qkm2, qkm1))
        return k, pkm2, qkm2, pkm1, qkm1, ans, change, r

    state = (util.const(n, 1), one, x, one, x + n, one / (x + n), util.const(x, np.inf), zero)
    result = while_loop(lambda s: (x > util.const(s[0], 0)) & (s[6] > eps), step, state)
    return result[5] * ufuncs.exp(-x)


def _expn_large_order(x: Any, n: Any) -> Any:
    """n >= 5000: the first terms of the asymptotic expansion in 1 / (x + n)."""
    one = util.const(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    ans = yk * n * (util.const(x, 6) * x * x - util.const(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - util.const(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + one) * ufuncs.exp(-x) / xk


@functools.partial(custom_jvp, nondiff_argnums=(0,))
@vectorize.vectorize
@util.jitted_as_in_jax
def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt.

    Args:
      n: the order, a non-negative integer array (not differentiated).
      x: real array.
    Returns:
      E_n(x) in the promoted inexact dtype.
    """
    n, x = promote_inexact("expn", n, x)
    reject_complex("expn", x)
    zero = util.const(x, 0)
    one = util.const(x, 1)
    c = functools.partial(util.const, n)
    conditions = [(n < c(0)) | (x < zero), (x == zero) & (n < c(2)),
                  (x == zero) & (n >= c(2)), (n == c(0)) & (x >= zero), n >= c(5000),
                  x > one]
    n1 = selection.where(n == c(1), n + n, n)
    values = [np.nan, np.inf, one / n1, ufuncs.exp(-x) / x, _expn_large_order,
              _guarded(_expn_continued_fraction, x > one, 2.0),
              _guarded(_expn_series, ~(x > one), 0.5, ~(n >= c(5000)), 1.0)]
    return selection.piecewise(x, conditions, values, n=n)


def _guarded(branch: Callable[..., Any], x_ok: Any, x_default: float, n_ok: Any = None,
             n_default: float = 1.0) -> Callable[..., Any]:
    """`branch` fed a harmless x and n where its result is not used (the conditions are
    piecewise's: the last true one wins). Under vmap every branch runs on every element, and
    the continued fraction near x = 0 (or the harmonic sum for a huge n) would loop for
    ~1/x (n) steps; real JAX hangs there, the values where the branch is used are the same."""
    def guarded(x: Any, n: Any) -> Any:
        if n_ok is not None:
            n = selection.where(n_ok, n, util.const(n, n_default))
        return branch(selection.where(x_ok, x, util.const(x, x_default)), n)
    return guarded


@expn.defjvp
@util.jitted_as_in_jax
def expn_jvp(n: Any, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return expn(n, x), lax.mul(lax.neg(x_dot), expn(lax.sub(n, util.const(n, 1)), x))


def exp1(x: Any) -> Any:
    """The exponential integral E1(x) = int_x^inf exp(-t) / t dt (`expn(1, x)`).

    Args:
      x: real array.
    Returns:
      E1(x) in the promoted inexact dtype.
    """
    [x] = promote_inexact("exp1", x)
    reject_complex("exp1", x)
    return expn(1, x)


# -- sici: Cephes' sici.c ---------------------------------------------------------------------

_SICI_SN = (-8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06,
            0.0009769454381704354, -0.04134703162294066, 1.0)
_SICI_SD = (2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07,
            9.964121220438756e-05, 0.01420852393261499, 1.0)
_SICI_CN = (2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06,
            -0.0004740072068734079, 0.028915965260755523, -1.0)
_SICI_CD = (4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06,
            0.00031744202477503275, 0.051002805623644606, 4.0)
_SICI_FN4 = (4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304,
             0.006810201324725182, 0.00010893658065032867, 5.489002234213736e-07)
_SICI_FD4 = (1.0, 8.16496634205391, 7.308288225055645, 1.867922579501842, 0.1787920529631499,
             0.007017106683227897, 0.00011003435715391573, 5.489002527562557e-07)
_SICI_GN4 = (0.08710016989731142, 0.6113791099522193, 0.3971802963923375, 0.07485277376284691,
             0.005388686814621773, 0.00016199979459893403, 1.9796387414096365e-06,
             7.825790407440903e-09)
_SICI_GD4 = (1.0, 1.6440220241335535, 0.666296701268988, 0.09887717612776888,
             0.006223963454417684, 0.0001732210814741771, 2.0265918208634397e-06,
             7.825792189335346e-09)
_SICI_FN8 = (0.4558808734704653, 0.7137152741001467, 0.16030015822231947, 0.01160642294081244,
             0.00034955644244785906, 4.8621543082645475e-06, 3.200927900910049e-08,
             9.41779576128513e-11, 9.70507110881952e-14)
_SICI_FD8 = (1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129,
             0.00035869648188185157, 4.924350643178815e-06, 3.21956939101046e-08,
             9.437205903502767e-11, 9.70507110881952e-14)
_SICI_GN8 = (0.6973599534432762, 0.33041097930563207, 0.03848787676499743,
             0.001717182390523479, 3.4894116550227946e-05, 3.471311670841167e-07,
             1.7040445278204452e-09, 3.859459254302766e-12, 3.1404009894636335e-15)
_SICI_GD8 = (1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258,
             0.0019028442667439953, 3.684755044425611e-05, 3.5704322344374083e-07,
             1.7269374896631615e-09, 3.878301660239547e-12, 3.1404009894636335e-15)


def _sici_small(x: Any) -> tuple[Any, Any]:
    """|x| <= 4: Si = x P(x^2) / Q(x^2), Ci = gamma + log(x) + x^2 P(x^2) / Q(x^2)."""
    t = x * x
    si = x * _ratio(_SICI_SN, _SICI_SD, t)
    ci = np.euler_gamma + ufuncs.log(x) + t * _ratio(_SICI_CN, _SICI_CD, t)
    return selection.where(x == 0, 0.0, si), selection.where(x == 0, -np.inf, ci)


def _sici_asymptotic(x: Any) -> tuple[Any, Any]:
    """4 < |x| <= 1e9: Si = pi/2 - f cos(x) - g sin(x), Ci = f sin(x) - g cos(x), with the
    auxiliary functions f and g rational in 1/x^2 (one fit below 8, one above)."""
    z = 1.0 / (x * x)
    below_8 = x < 8.0
    f = selection.where(below_8, numeric.polyval(np.array(_SICI_FN4, x.dtype), z)
                        / (x * numeric.polyval(np.array(_SICI_FD4, x.dtype), z)),
                        numeric.polyval(np.array(_SICI_FN8, x.dtype), z)
                        / (x * numeric.polyval(np.array(_SICI_FD8, x.dtype), z)))
    g = selection.where(below_8, z * _ratio(_SICI_GN4, _SICI_GD4, z),
                        z * _ratio(_SICI_GN8, _SICI_GD8, z))
    s, c = ufuncs.sin(x), ufuncs.cos(x)
    return np.pi / 2 - f * c - g * s, f * s - g * c


def _sici_large(x: Any) -> tuple[Any, Any]:
    """|x| > 1e9: the leading terms, exact limits at infinity."""
    si = selection.where(ufuncs.isposinf(x), np.pi / 2, np.pi / 2 - ufuncs.cos(x) / x)
    ci = selection.where(ufuncs.isposinf(x), 0.0, ufuncs.sin(x) / x)
    return si, ci


@custom_jvp
@util.jitted_as_in_jax
def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals Si(x) = int_0^x sin(t)/t dt and
    Ci(x) = gamma + log(x) + int_0^x (cos(t) - 1)/t dt (Ci of |x| for negative x, NaN at -inf).

    Args:
      x: real array.
    Returns:
      The pair (Si(x), Ci(x)) in the promoted inexact dtype.
    """
    [x] = promote_inexact("sici", x)
    if dtypes.is_complex(x.dtype):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    x_abs = ufuncs.absolute(x)
    small = x_abs <= 4
    middle = (x_abs > 4) & (x_abs <= 1e9)
    pieces = [_sici_small(x_abs), _sici_asymptotic(x_abs), _sici_large(x_abs)]
    si, ci = (selection.select([small, middle], [p[i] for p in pieces[:2]], pieces[2][i])
              for i in range(2))
    return ufuncs.sign(x) * si, selection.where(ufuncs.isneginf(x), np.nan, ci)


@sici.defjvp
@util.jitted_as_in_jax
def sici_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return sici(x), (ufuncs.sinc(x / np.pi) * t, ufuncs.cos(x) / x * t)


# -- spence: Cephes' spence.c -------------------------------------------------------------------

_SPENCE_A = (4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903,
             0.8796913117545303, 2.7114985119655346, 4.256971560081218, 3.297713409852251, 1.0)
_SPENCE_B = (0.0006909904889125533, 0.02540437639325444, 0.2829748606025681,
             1.4117259775183106, 3.6380053334513707, 5.03278880143317, 3.547713409852251, 1.0)


def _spence_core(x: Any) -> Any:
    """The dilogarithm for x > 0, x != 1: a rational approximation in w near 1, reached by
    x -> 1/x above 2 (or 1.5) and x -> 1 - x below 1/2, with the reflection formulas."""
    inverted = x > 2.0
    x = selection.where(inverted, 1.0 / x, x)
    above = x > 1.5
    below = x < 0.5
    inverted = inverted | above
    w = selection.piecewise(x, [above, below],
                            [lambda v: 1.0 / v - 1.0, lambda v: -v, lambda v: v - 1.0])
    y = -w * _ratio(_SPENCE_A, _SPENCE_B, w)
    y = selection.where(below, np.pi ** 2 / 6.0 - ufuncs.log(x) * ufuncs.log(1.0 - x) - y, y)
    return selection.where(inverted, -0.5 * ufuncs.log(x) ** 2 - y, y)


def spence(x: Any) -> Any:
    """Spence's function (the dilogarithm) int_1^x log(t) / (1 - t) dt; NaN for x < 0.

    Args:
      x: a float32 or float64 array.
    Returns:
      An array of `x`'s dtype.
    """
    x = array_creation.asarray(x)
    if np.dtype(x.dtype) not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    return selection.piecewise(x, [x < 0.0, x == 1.0, x == 0.0],
                               [np.nan, 0, np.pi ** 2 / 6, _spence_core])
