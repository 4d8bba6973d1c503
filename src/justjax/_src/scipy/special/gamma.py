"""The gamma function family: gamma, its log and sign, beta and betaln, the incomplete gamma
and beta functions, factorial, comb, poch, multigammaln, digamma, polygamma, zeta, bernoulli."""
from __future__ import annotations

import fractions
import math
import operator
from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.interpreters import ad
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.scipy.special._util import promote_inexact, reject_complex
from justjax._src.numpy import (array_creation, dtype_ops, reductions, selection, shape_ops,
                                ufuncs, util)

__all__ = ["bernoulli", "beta", "betainc", "betaln", "comb", "digamma", "factorial", "gamma",
           "gammainc", "gammaincc", "gammaln", "gammasgn", "loggamma", "multigammaln", "poch",
           "polygamma", "zeta"]


def gammaln(x: Any) -> Any:
    """`log(|gamma(x)|)`."""
    [x] = util.promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of the gamma function."""
    [x] = util.promote_args_inexact("digamma", x)
    return lax.digamma(x)


# cdflib's `algdiv` coefficients: the Stirling-series terms of del(b) - del(a + b), where
# lgamma(x) = (x - 1/2) log(x) - x + log(2 pi) / 2 + del(x).
_ALGDIV_C = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
             -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _algdiv(a: Any, b: Any) -> Any:
    """`lgamma(b) - lgamma(a + b)` for b >= 8 and a <= b (cdflib's `algdiv`), without the
    cancellation of two large lgamma values."""
    h = a / b
    x = h / (1 + h)
    x2 = x * x
    # s_n = (1 - x**n) / (1 - x) for the odd n = 3 .. 11, by Horner steps.
    partial_sums = [1.0 + (x + x2)]
    for _ in range(4):
        partial_sums.append(1.0 + (x + x2 * partial_sums[-1]))
    t = (1.0 / b) ** 2
    c0, *c_rest = _ALGDIV_C
    w = c_rest[-1] * partial_sums[-1] * t
    for c, s in zip(c_rest[-2::-1], partial_sums[-2::-1], strict=True):
        w = (w + c * s) * t
    w = (w + c0) * (x / b)
    u = (b + (a - 0.5)) * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    # Subtract the larger of u and v last.
    return selection.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a: Any, b: Any) -> Any:
    """`log|B(a, b)|`, the log of the beta function's magnitude. For max(a, b) >= 8 the
    difference `lgamma(b) - lgamma(a + b)` comes from cdflib's `algdiv` series, which stays
    accurate where the lgamma values are large and nearly cancel.

    Args:
      a: real array.
      b: real array (broadcast against `a`).
    Returns:
      `log|B(a, b)|` in the promoted inexact dtype.
    """
    a, b = promote_inexact("betaln", a, b)
    a, b = ufuncs.minimum(a, b), ufuncs.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return selection.where(b < 8, small_b, large_b)


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (`lax.igamma`)."""
    a, x = util.promote_args_inexact("gammainc", a, x)
    return lax_special.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (`lax.igammac`)."""
    a, x = util.promote_args_inexact("gammaincc", a, x)
    return lax_special.igammac(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (`lax.betainc`); differentiable
    in x only, as in JAX."""
    a, b, x = util.promote_args_inexact("betainc", a, b, x)
    if dtypes.is_complex(core.get_aval(x).dtype):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax_special.betainc(a, b, x)


@util.jitted_as_in_jax
def gammasgn(x: Any) -> Any:
    """The sign of the gamma function: 1 or -1; NaN at the poles (0 excepted: +-1 by the
    sign of the zero), at -inf and at NaN.

    Args:
      x: real array.
    Returns:
      The sign, in the promoted inexact dtype.
    """
    [x] = promote_inexact("gammasgn", x)
    reject_complex("gammasgn", x)
    scalar = np.dtype(x.dtype).type
    floor_x = lax.floor(x)
    negative = x < 0
    undefined = (negative & (x == floor_x)) | ufuncs.isnan(x)
    # Gamma changes sign at each pole: negative on (-1, 0), (-3, -2), ... (odd floors).
    minus = (negative & (ufuncs.remainder(floor_x, 2) != 0)) | ((x == 0) & ufuncs.signbit(x))
    return selection.select([undefined, minus], [scalar(np.nan), scalar(-1.0)], scalar(1.0))


def gamma(x: Any) -> Any:
    """The gamma function, `gammasgn(x) * exp(gammaln(x))` for real `x`; complex `x` by the
    Lanczos approximation (NaN + NaN j at the poles).

    Args:
      x: real or complex array.
    Returns:
      Gamma(x) in the promoted inexact dtype.
    """
    [x] = promote_inexact("gamma", x)
    if dtypes.is_complex(x.dtype):
        return _complex_gamma(x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def loggamma(x: Any) -> Any:
    """The principal branch of log(Gamma(x)): `gammaln` for real x > 0 (NaN for x <= 0);
    complex `x` with the branch cut along the negative real axis, as SciPy's.

    Args:
      x: real or complex array.
    Returns:
      log Gamma(x) in the promoted inexact dtype.
    """
    [x] = promote_inexact("loggamma", x)
    if dtypes.is_complex(x.dtype):
        return _complex_loggamma_scipy(x)
    return selection.where(x > 0, lax.lgamma(x), np.nan)


# Lanczos' approximation with g = 7 and nine terms (the coefficients GSL's gamma.c uses).
_LANCZOS_G = 7.0
_LANCZOS_COEFFICIENTS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
                         771.32342877765313, -176.61502916214059, 12.507343278686905,
                         -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _lanczos_loggamma(z: Any) -> Any:
    """log Gamma(z) for complex z, through the reflection formula where Re(z) < 1/2."""
    reflect = ufuncs.real(z) < 0.5
    shifted = selection.where(reflect, 1.0 - z, z) - 1.0
    series = _LANCZOS_COEFFICIENTS[0]
    for k, c in enumerate(_LANCZOS_COEFFICIENTS[1:], start=1):
        series = series + c / (shifted + k)
    t = shifted + (_LANCZOS_G + 0.5)
    direct = 0.5 * np.log(2.0 * np.pi) + (shifted + 0.5) * ufuncs.log(t) - t + ufuncs.log(series)
    # The reflected branch reads a harmless z where it is not taken (its NaNs would reach
    # the gradient through `where`).
    z_reflect = selection.where(reflect, z, array_creation.full_like(z, 0.5))
    reflected = np.log(np.pi) - ufuncs.log(ufuncs.sin(np.pi * z_reflect)) - direct
    return selection.where(reflect, reflected, direct)


def _poles_or_nan(z: Any) -> Any:
    re = ufuncs.real(z)
    pole = (ufuncs.imag(z) == 0) & (re == ufuncs.floor(re)) & (re <= 0)
    return pole | ufuncs.isnan(z)


def _complex_gamma(z: Any) -> Any:
    bad = _poles_or_nan(z)
    safe = selection.where(bad, array_creation.ones_like(z), z)
    nan = np.array(complex(np.nan, np.nan), dtype=z.dtype)
    return selection.where(bad, nan, ufuncs.exp(_lanczos_loggamma(safe)))


@util.jitted_as_in_jax
def _complex_loggamma_scipy(z: Any) -> Any:
    """SciPy's principal branch: z is moved right by n = ceil(1/2 - Re z) steps and
    log Gamma(z) = log Gamma(z + n) - sum_k log(z + k), each log on its principal branch."""
    bad = _poles_or_nan(z)
    safe = selection.where(bad, array_creation.ones_like(z), z)
    steps = ufuncs.maximum(0, dtype_ops.astype(ufuncs.ceil(0.5 - ufuncs.real(safe)), int))

    def unfinished(state: tuple) -> Any:
        k, _ = state
        return reductions.any(k < steps)

    def add_log(state: tuple) -> tuple:
        k, total = state
        active = k < steps
        zk = selection.where(active, safe + k, array_creation.ones_like(safe))
        return k + 1, total + selection.where(active, ufuncs.log(zk),
                                              array_creation.zeros_like(total))

    _, log_sum = while_loop(unfinished, add_log, (0, array_creation.zeros_like(safe)))
    nan = np.array(complex(np.nan, np.nan), dtype=z.dtype)
    return selection.where(bad, nan, _lanczos_loggamma(safe + steps) - log_sum)


def beta(a: Any, b: Any) -> Any:
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), as
    `sign * exp(betaln(a, b))`.

    Args:
      a, b: real arrays.
    Returns:
      B(a, b) in the promoted inexact dtype.
    """
    a, b = promote_inexact("beta", a, b)
    reject_complex("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def factorial(n: Any, exact: bool = False) -> Any:
    """`n!` as a float, `Gamma(n + 1)` (0 for n < 0). Only `exact=False`: JAX has no
    arbitrary-precision integers (NotImplementedError otherwise, as JAX).

    Args:
      n: array.
      exact: must be False.
    Returns:
      The factorials in the promoted inexact dtype.
    """
    if exact:
        raise NotImplementedError("factorial with exact=True")
    [n] = promote_inexact("factorial", n)
    return selection.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """The binomial coefficient "N choose k" as a float, from gammaln; 0 where N < 0, k < 0
    or k > N. With `repetition`, the number of multisets: comb(N + k - 1, k) (1 at k = 0).

    Args:
      N: number of things.
      k: number taken.
      repetition: count combinations with repetition.
    Returns:
      The counts in the promoted inexact dtype.
    """
    N, k = promote_inexact("comb", N, k)
    if repetition:
        with_repetition = comb(N + k - 1, k, repetition=False)
        return selection.where((k == 0) & (N >= 0), 1.0, with_repetition)
    valid = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = selection.where(valid, N, 0.0)
    safe_k = selection.where(valid, k, 0.0)
    log_count = gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k)
    return selection.where(valid, lax.exp(log_count), 0.0)


@custom_jvp
def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (rising factorial) Gamma(z + m) / Gamma(z), 1 where m == 0.

    Args:
      z, m: real arrays.
    Returns:
      (z)_m in the promoted inexact dtype.
    """
    z, m = promote_inexact("poch", z, m)
    reject_complex("poch", z, "jnp.poch does not support complex-valued inputs.")
    return selection.where(m == 0.0, array_creation.array(1, dtype=z.dtype),
                           gamma(z + m) / gamma(z))


poch.defjvps(lambda z_dot, ans, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
             lambda m_dot, ans, z, m: digamma(z + m) * poch(z, m) * m_dot)


def multigammaln(a: Any, d: Any) -> Any:
    """The log of the multivariate gamma function of dimension d:
    d (d - 1) / 4 log(pi) + sum_{j < d} gammaln(a - j / 2).

    Args:
      a: real array.
      d: the dimension, a concrete integer.
    Returns:
      log Gamma_d(a) in the promoted inexact dtype.
    """
    d = core.concrete_or_error(int, d, "d argument of multigammaln")
    a, d_arr = promote_inexact("multigammaln", a, d)
    constant = 0.25 * d_arr * (d_arr - 1) * lax.log(util.const(a, np.pi))
    halves = array_creation.arange(d, dtype=d_arr.dtype) / util.const(a, 2)
    terms = gammaln(shape_ops.expand_dims(a, -1) - halves)
    return reductions.sum(terms, axis=-1) + constant


def polygamma(n: Any, x: Any) -> Any:
    """The polygamma function, the (n + 1)-th derivative of log Gamma (`lax.polygamma`).

    Args:
      n: the order, an integer array.
      x: real array.
    Returns:
      psi^(n)(x) in the promoted inexact dtype.
    """
    n_dtype = dtypes.dtype_of_value(n) if not hasattr(n, "dtype") else np.dtype(n.dtype)
    if not dtypes.issubdtype(n_dtype, np.integer):
        raise ValueError(
            f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
    n, x = promote_inexact("polygamma", n, x)
    reject_complex("polygamma", x)
    return lax.polygamma(n, x)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2), the even ones from
    B_2k = (-1)^(k+1) 2 (2k)! zeta(2k) / (2 pi)^(2k).

    Args:
      n: a concrete non-negative integer.
    Returns:
      An array of n + 1 values in the default float dtype.
    """
    n = core.concrete_or_error(operator.index, n, "Argument n of bernoulli")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = array_creation.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return first[:n + 1]
    orders = array_creation.arange(4, n + 1, 2, dtype=first.dtype)
    # 2 (2k)! / (2 pi)^(2k) with its sign, by the ratio between consecutive even orders.
    ratios = -(orders - 1) * orders / (4 * np.pi ** 2)
    prefactor = reductions.cumprod(ratios) / np.pi ** 2
    # zeta(2k) - 1 by its first terms (exact in float64 from 2k = 4 on).
    k = array_creation.arange(2, 50, dtype=first.dtype)
    zeta_minus_one = reductions.sum(k[:, None] ** (-orders[None, :]), axis=0)
    numbers = array_creation.zeros(n + 1).at[:3].set(first)
    return numbers.at[4::2].set(prefactor * (1 + zeta_minus_one))


def _even_bernoulli_ratios(count: int) -> tuple[float, ...]:
    """(2j)! / B_2j for j = 1 .. count, exactly (B_n from the recurrence
    sum_{k<=n} C(n+1, k) B_k = 0) then rounded once."""
    numbers = [fractions.Fraction(1)]
    for n in range(1, 2 * count + 1):
        numbers.append(-sum(math.comb(n + 1, k) * numbers[k] for k in range(n)) / (n + 1))
    return tuple(float(math.factorial(2 * j) / numbers[2 * j]) for j in range(1, count + 1))


_ZETA_TERMS = {np.dtype(np.float32): 8}  # N = M; every other dtype uses 16.
_ZETA_BERNOULLI_RATIOS = _even_bernoulli_ratios(16)


@custom_jvp
def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function sum_{n >= 0} (n + q)^-x (`lax.zeta`). The Riemann zeta
    function (`q=None`) is not implemented, as in JAX. Its derivatives are those of an
    Euler-Maclaurin expansion (Johansson 2015, eq. 5), as in JAX.

    Args:
      x: the exponent, real array.
      q: the offset, real array.
    Returns:
      zeta(x, q) in the promoted inexact dtype.
    """
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz "
            "Zeta function.")
    x, q = promote_inexact("zeta", x, q)
    return lax_special.zeta(x, q)


def _zeta_euler_maclaurin(x: Any, q: Any) -> Any:
    """zeta(s, a) ~ sum_{k<N} (a + k)^-s + (a + N)^(1-s) / (s - 1)
    + (a + N)^-s (1/2 + sum_{j<=M} B_2j / (2j)! (s)_(2j-1) / (a + N)^(2j-1))."""
    s, a = promote_inexact("zeta", x, q)
    dtype = np.dtype(a.dtype)
    scalar = dtype.type
    terms = scalar(_ZETA_TERMS.get(dtype, 16))
    s_, a_ = shape_ops.expand_dims(s, -1), shape_ops.expand_dims(a, -1)
    k = np.arange(terms, dtype=dtype)
    head = reductions.sum((a_ + k) ** -s_, -1)
    integral = lax.div((a + terms) ** (scalar(1) - s), s - scalar(1))
    tail_scale = (a + terms) ** -s
    # (s)(s+1)...(s+m) / (a+N)^(m+1) for m = 0 .. 2M-1; the even m are the (2j-1) terms.
    m = np.arange(2 * int(terms), dtype=dtype)
    rising = reductions.cumprod((s_ + m) / (a_ + terms), -1)[..., ::2]
    rising = ufuncs.minimum(rising, dtypes.finfo(dtype).max)
    ratios = np.array(_ZETA_BERNOULLI_RATIOS[:int(terms)], dtype=dtype)
    tail = tail_scale * (scalar(0.5) + reductions.sum(rising / ratios, -1))
    return head + integral + tail


@zeta.defjvp
def _zeta_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (out,), (out_dot,) = ad.jvp_flat(lambda x, q: [_zeta_euler_maclaurin(x, q)],
                                     list(primals), list(tangents))
    return out, out_dot
