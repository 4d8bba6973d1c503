"""Hypergeometric functions and Owen's T: hyp1f1, hyp2f1 (power series, asymptotic and
transformation formulas, as JAX computes them; derivatives by their parameter series) and
owens_t (Gauss-Legendre quadrature)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from justjax._src.core import dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural
from justjax._src.lax.control_flow.conditionals import cond
from justjax._src.lax.control_flow.library import fori_loop
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.numpy import array_creation, selection, ufuncs, util, vectorize
from justjax._src.scipy.special._util import promote_inexact, reject_complex
from justjax._src.scipy.special.gamma import digamma, gamma

__all__ = ["hyp1f1", "hyp2f1", "owens_t"]

# Every series stops after this many terms at most.
_MAX_TERMS = 250


def _sum_series(first_term: Any, start: Any, ratio: Callable[[Any], Any],
                weight: Callable[[Any], Any] | None, eps: float, relative_to_sum: bool) -> Any:
    """`start + sum_{k >= 1} weight(k) t_k` with t_1 = `first_term`, t_{k+1} = t_k ratio(k),
    until k reaches the cap or |t_k| falls below eps times the sum (the term is added first
    unless weighted, as the series JAX sums)."""
    def body(state: tuple) -> tuple:
        total, k, term = state
        total = total + (term * weight(k) if weight is not None else term)
        return total, k + 1, term * ratio(k)

    def unfinished(state: tuple) -> Any:
        total, k, term = state
        if relative_to_sum:
            return (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(total) > eps)
        return (k < _MAX_TERMS) & (lax.abs(term) > eps * lax.abs(total))

    return while_loop(unfinished, body, (start, 1, first_term))[0]


# -- hyp1f1 -------------------------------------------------------------------------------------

def _hyp1f1_ratio(a: Any, b: Any, x: Any) -> Callable[[Any], Any]:
    return lambda k: (a + k) / (b + k) * x / (k + 1)


def _hyp1f1_power_series(a: Any, b: Any, x: Any) -> Any:
    eps = dtypes.finfo(x.dtype).eps
    return _sum_series(a / b * x, util.const(x, 1), _hyp1f1_ratio(a, b, x), None, eps, True)


def _hyp1f1_asymptotic(a: Any, b: Any, x: Any) -> Any:
    """|x| >= 100: Gamma(b) / Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / (k! x^k)."""
    eps = dtypes.finfo(x.dtype).eps
    series = _sum_series((b - a) * (1 - a) / x, util.const(x, 1),
                         lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x, None, eps, True)
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * series


def _hyp1f1_parameter_derivative(name: str, weight: Callable[..., Any]) -> Callable[..., Any]:
    """d/da or d/db of the power series: each term times its digamma difference (jitted
    under JAX's name for it)."""
    def derivative(a: Any, b: Any, x: Any) -> Any:
        eps = dtypes.finfo(x.dtype).eps
        return _sum_series(a / b * x, util.const(x, 0), _hyp1f1_ratio(a, b, x),
                           lambda k: weight(a, b, k), eps, True)
    derivative.__name__ = derivative.__qualname__ = name
    return util.jitted_as_in_jax(vectorize.vectorize(derivative))


_hyp1f1_a_derivative = _hyp1f1_parameter_derivative(
    "_hyp1f1_a_derivative", lambda a, b, k: digamma(a + k) - digamma(a))
_hyp1f1_b_derivative = _hyp1f1_parameter_derivative(
    "_hyp1f1_b_derivative", lambda a, b, k: digamma(b) - digamma(b + k))


@util.jitted_as_in_jax
def _hyp1f1_x_derivative(a: Any, b: Any, x: Any) -> Any:
    return a / b * hyp1f1(a + 1, b + 1, x)


@custom_jvp
@util.jitted_as_in_jax
@vectorize.vectorize
def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k x^k /
    ((b)_k k!): the power series for |x| < 100, the asymptotic series above; 1 at a == 0,
    exp(x) at a == b, inf at b == 0.

    Args:
      a, b, x: real arrays (broadcast together).
    Returns:
      1F1(a; b; x) in the promoted inexact dtype.
    """
    a, b, x = promote_inexact("hyp1f1", a, b, x)
    reject_complex("hyp1f1", x)
    result = cond(lax.abs(x) < 100, _hyp1f1_power_series, _hyp1f1_asymptotic, a, b, x)
    index = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3)
    return lax_selection.select_n(index, result, array_creation.array(1, dtype=x.dtype),
                                  lax.exp(x), array_creation.array(np.inf, dtype=x.dtype))


hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _hyp1f1_a_derivative(a, b, x) * a_dot,
    lambda b_dot, ans, a, b, x: _hyp1f1_b_derivative(a, b, x) * b_dot,
    lambda x_dot, ans, a, b, x: _hyp1f1_x_derivative(a, b, x) * x_dot)


# -- hyp2f1 -------------------------------------------------------------------------------------

def _integer_tolerance(x: Any) -> Any:
    return dtypes.finfo(x.dtype).eps * 50


def _hyp2f1_terminating(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The polynomial when a (or b, swapped in) is a non-positive integer: |a| + 1 terms."""
    eps = _integer_tolerance(x)
    b_is_integer = ufuncs.absolute(b - ufuncs.round(b)) < eps
    c_blocks = (c % 1 == 0) & (c <= 0) & (c > b)
    swap = (b < a) & b_is_integer & ~c_blocks
    a, b = selection.where(swap, b, a), selection.where(swap, a, b)
    a = ufuncs.absolute(a)

    def body(i: Any, state: tuple) -> tuple:
        total, term = state
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return total + term, term

    one = array_creation.array(1, dtype=x.dtype)
    return fori_loop(array_creation.array(1, dtype=a.dtype), a + 1, body, (one, one))[0]


def _hyp2f1_power_series(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = dtypes.finfo(x.dtype).eps
    one = array_creation.array(1, dtype=x.dtype)

    def body(state: tuple) -> tuple:
        total, k, term = state
        total = total + term
        term = term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)
        return total, k + 1, term

    def unfinished(state: tuple) -> Any:
        total, k, term = state
        return (k < _MAX_TERMS) & (lax.abs(term) > eps * lax.abs(total))

    return while_loop(unfinished, body, (array_creation.array(0, dtype=x.dtype), one, one))[0]


def _hyp2f1_near_one(a: Any, b: Any, c: Any, x: Any) -> Any:
    """x > 0.9 with c - a - b (nearly) an integer m: the expansion in log(1 - x) and digamma
    values (Abramowitz & Stegun 15.3.10-12), as Cephes' hyp2f1 `psi` branch."""
    eps = dtypes.finfo(x.dtype).eps
    d = c - a - b
    s = 1 - x
    rd = ufuncs.round(d)
    e = selection.where(rd >= 0, d, -d)
    zero = array_creation.array(0, dtype=d.dtype)
    d1 = selection.where(rd >= 0, d, zero)
    d2 = selection.where(rd >= 0, zero, d)
    m = dtype_astype_int(selection.where(rd >= 0, rd, -rd))
    log_s = ufuncs.log(s)
    y = (digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - log_s)
    y = y / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def body(state: tuple) -> tuple:
        p, q, t, y = state
        r = (digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1)
             - digamma(b + t + d1) - log_s)
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return p, q, t + 1.0, y

    def unfinished(state: tuple) -> Any:
        _, q, t, y = state
        return (t < _MAX_TERMS) & (ufuncs.absolute(q) >= eps * ufuncs.absolute(y))

    _, _, _, y = while_loop(unfinished, body, (p, y, array_creation.array(1, dtype=x.dtype), y))

    def with_finite_sum(y: Any) -> Any:
        def term(i: Any, state: tuple) -> tuple:
            p, t, total = state
            r = 1.0 - e + t
            p = p * (s * (a + t + d2) * (b + t + d2) / r)
            t = t + 1.0
            p = p / t
            return p, t, total + p

        one = array_creation.array(1, dtype=x.dtype)
        start = (one, array_creation.array(0, dtype=x.dtype), one)
        finite = fori_loop(1, m, term, start)[2]
        gamma_c = gamma(c)
        finite = finite * (gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1)))
        y = y * (gamma_c / (gamma(a + d2) * gamma(b + d2)))
        y = selection.where(m & 1 != 0, -y, y)
        q = s ** rd
        return selection.where(rd > 0, y * q + finite, y + finite * q)

    return selection.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), with_finite_sum(y))


def dtype_astype_int(x: Any) -> Any:
    return structural.convert_element_type(x, np.int32)


def _hyp2f1_series_or_polynomial(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = _integer_tolerance(x)
    d = c - a - b
    a_negative_integer = (a <= 0) & (ufuncs.absolute(a - ufuncs.round(a)) < eps)
    b_negative_integer = (b <= 0) & (ufuncs.absolute(b - ufuncs.round(b)) < eps)
    terminating = a_negative_integer | b_negative_integer
    d_is_integer = ufuncs.absolute(d - ufuncs.round(d)) < eps
    index = selection.where((x > 0.9) & ~terminating, selection.where(d_is_integer, 1, 0),
                            selection.where(terminating, 2, 0))
    return lax_selection.select_n(index, _hyp2f1_power_series(a, b, c, x),
                                  _hyp2f1_near_one(a, b, c, x), _hyp2f1_terminating(a, b, c, x))


def _hyp2f1_parameter_derivative(name: str, weight: Callable[..., Any]) -> Callable[..., Any]:
    """d/da, d/db or d/dc of the power series: each term times its digamma difference
    (jitted under JAX's name for it)."""
    def derivative(a: Any, b: Any, c: Any, x: Any) -> Any:
        eps = dtypes.finfo(x.dtype).eps
        return _sum_series(a * b / c * x, util.const(x, 0),
                           lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x,
                           lambda k: weight(a, b, c, k), eps, True)
    derivative.__name__ = derivative.__qualname__ = name
    return util.jitted_as_in_jax(vectorize.vectorize(derivative))


_hyp2f1_a_derivative = _hyp2f1_parameter_derivative(
    "_hyp2f1_a_derivative", lambda a, b, c, k: digamma(a + k) - digamma(a))
_hyp2f1_b_derivative = _hyp2f1_parameter_derivative(
    "_hyp2f1_b_derivative", lambda a, b, c, k: digamma(b + k) - digamma(b))
_hyp2f1_c_derivative = _hyp2f1_parameter_derivative(
    "_hyp2f1_c_derivative", lambda a, b, c, k: digamma(c) - digamma(c + k))


@util.jitted_as_in_jax
def _hyp2f1_x_derivative(a: Any, b: Any, c: Any, x: Any) -> Any:
    return a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)


@custom_jvp
@util.jitted_as_in_jax
@vectorize.vectorize
def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The Gauss hypergeometric function 2F1(a, b; c; x) for real x <= 1 (inf above 1): the
    power series, Euler's transformation where c - a - b <= -1, the terminating polynomial for
    non-positive integer a or b, the digamma expansion near x = 1, and the closed forms at
    x == 1, b == c and a == c.

    Args:
      a, b, c, x: real arrays (broadcast together).
    Returns:
      2F1(a, b; c; x) in the promoted inexact dtype.
    """
    a, b, c, x = promote_inexact("hyp2f1", a, b, c, x)
    eps = _integer_tolerance(x)
    d = c - a - b
    s = 1 - x
    ca = c - a
    cb = c - b
    d_not_integer = ufuncs.absolute(d - ufuncs.round(d)) >= eps
    # The first case that applies wins (a chain of wheres, innermost last).
    cases = [
        ((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0),
        ((c == 0) | ((c < 0) & (c % 1 == 0)), 1),
        ((d <= -1) & ~(d_not_integer & (s < 0)), 2),
        ((d <= 0) & (x == 1), 1),
        ((x < 1) & (b == c), 3),
        ((x < 1) & (a == c), 4),
        (x > 1, 1),
        (x == 1, 5),
    ]
    index = 6
    for condition, value in reversed(cases):
        index = selection.where(condition, value, index)
    return lax_selection.select_n(
        index, array_creation.array(1, dtype=x.dtype), array_creation.array(np.inf, dtype=x.dtype),
        s ** d * _hyp2f1_series_or_polynomial(ca, cb, c, x), s ** (-a), s ** (-b),
        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)), _hyp2f1_series_or_polynomial(a, b, c, x))


hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _hyp2f1_a_derivative(a, b, c, x) * a_dot,
    lambda b_dot, ans, a, b, c, x: _hyp2f1_b_derivative(a, b, c, x) * b_dot,
    lambda c_dot, ans, a, b, c, x: _hyp2f1_c_derivative(a, b, c, x) * c_dot,
    lambda x_dot, ans, a, b, c, x: _hyp2f1_x_derivative(a, b, c, x) * x_dot)


# -- owens_t ------------------------------------------------------------------------------------

def _owens_t_rule() -> tuple[np.ndarray, np.ndarray]:
    """T(h, a) = a / (2 pi) int_0^1 exp(-h^2 (1 + a^2 t^2) / 2) / (1 + a^2 t^2) dt by the
    26-point Gauss-Legendre rule on [-1, 1] (the integrand is even): the squares of its 13
    positive nodes and their weights over 2 pi."""
    nodes, weights = np.polynomial.legendre.leggauss(26)
    positive = nodes > 0
    return nodes[positive] ** 2, weights[positive] / (2 * np.pi)


_OWENS_T_NODES_SQUARED, _OWENS_T_WEIGHTS = _owens_t_rule()


def _owens_t_quadrature(h: Any, a: Any) -> Any:
    r = ufuncs.square(a)[..., None] * _OWENS_T_NODES_SQUARED
    integrand = ufuncs.exp(-0.5 * ufuncs.square(h)[..., None] * (1.0 + r)) / (1.0 + r)
    return a * (integrand @ _OWENS_T_WEIGHTS)


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    """For |a| <= 1 the quadrature directly; for |a| > 1 through
    T(h, a) = (Phi(h) + Phi(ah)) / 2 - Phi(h) Phi(ah) - T(ah, 1/a) (in erfc form); the
    closed forms at h == 0 and a == 1."""
    h = ufuncs.absolute(h)
    abs_a = ufuncs.absolute(a)
    root_2 = util.const(h, np.sqrt(2))
    h_scaled = h / root_2
    small_a = abs_a <= 1.0
    quad_a = selection.where(small_a, abs_a, ufuncs.reciprocal(abs_a))
    quad_h = selection.where(small_a, h, abs_a * h)
    result = _owens_t_quadrature(quad_h, quad_a)
    result = selection.where(quad_h == 0.0, ufuncs.arctan(quad_a) / (2 * np.pi), result)
    result = selection.where(
        quad_a == 1.0, 0.125 * lax.erfc(-quad_h / root_2) * lax.erfc(quad_h / root_2), result)
    tail_h = lax.erfc(h_scaled)
    tail_ah = lax.erfc(abs_a * h_scaled)
    # For small a h the erf form keeps its precision; the erfc form elsewhere.
    large_a = selection.where(
        abs_a * h <= 0.67,
        0.25 - 0.25 * lax.erf(h_scaled) * lax.erf(abs_a * h_scaled) - result,
        0.25 * (tail_h + tail_ah - tail_h * tail_ah) - result)
    result = lax.sign(a) * selection.where(abs_a > 1.0, large_a, result)
    return selection.where(ufuncs.isnan(a) | ufuncs.isnan(h),
                           array_creation.full_like(result, np.nan), result)


@_owens_t.defjvp
def _owens_t_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    h, a = primals
    dh, da = tangents
    result = _owens_t(h, a)
    root_2 = util.const(h, np.sqrt(2))
    dt_dh = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2)
             / (2.0 * util.const(h, np.sqrt(2.0 * np.pi))))
    dt_da = (lax.exp(-0.5 * (lax.square(a) + 1.0) * lax.square(h))
             / (2.0 * np.pi * (lax.square(a) + 1.0)))
    return result, (dt_dh * dh + dt_da * da).astype(result.dtype)


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function T(h, a) = (1 / 2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx.

    Args:
      h, a: real arrays.
    Returns:
      T(h, a) in the promoted inexact dtype.
    """
    h, a = promote_inexact("owens_t", h, a)
    return _owens_t(h, a)
