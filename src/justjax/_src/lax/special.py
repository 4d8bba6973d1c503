"""Special functions lowered through lax algorithms: the incomplete gamma family, the
regularized incomplete beta function, exponentially scaled Bessel functions and Hurwitz zeta.

As in JAX 0.10.2, `igamma`, `igammac`, `igamma_grad_a`, `regularized_incomplete_beta` and
`bessel_i0e` are primitives of their own (one equation in a jaxpr) whose lowering traces a
lax implementation of XLA's algorithm (`lower_fun`) and lowers that in place:

- P(a, x) = igamma and Q(a, x) = igammac by the power series of P where x < 1 or x <= a, else
  by the continued fraction of Q (Cephes' `igam`/`igamc`, as XLA's math library), each a
  `while_loop` run until every enabled lane has converged (relative step below the dtype's
  epsilon); the continued fraction stops after 2000 steps at most. `igamma_grad_a` (dP/da)
  and `random_gamma_grad` (the implicit derivative of a Gamma(a, 1) sample x with respect to
  a, `-(dP/da) / (dP/dx)`) carry the derivatives of the same recurrences along.
- betainc by the Lentz-Thompson-Barnett evaluation of its continued fraction (DLMF 8.17.22),
  through the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) when x >= (a + 1) / (a + b + 2); 200
  steps at most for float32, 600 otherwise.
- bessel_i0e by Cephes' Chebyshev expansions on [0, 8] and (8, inf).

Special values are XLA's: P(a, 0) = 0, P(a, inf) = 1, NaN for a < 0, x < 0, a = x = 0 or a
NaN operand (and for dP/da, a <= 0). float16 and bfloat16 operands are computed in float32
and rounded once. `random_gamma_grad` is no primitive in JAX: it is the traced algorithm
itself, so its while loops appear in jaxprs. `bessel_i1e` and `zeta` lower to the CHLO ops of
the same names.

The implementations bind the same operations in the same order as JAX's, Python operators
where JAX uses them (they promote weak types, the lax functions do not), so that the jaxprs of
`random_gamma_grad` and the StableHLO of every lowering print as JAX's.
"""
from __future__ import annotations

import enum
import functools
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.interpreters import ad, lowering
from justjax._src.lax import reductions, utils
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.lax.elementwise import (
    add, binop, bitwise_and, bitwise_not, bitwise_or, digamma, div, eq, exp, ge, gt,
    integer_pow, le, lgamma, log, log1p, lt, mul, naryop, ne, sign, sqrt, sub, unop)
# JAX's `lax._const` and `lax.full_like` (weak types kept), shared with the jvp rules.
from justjax._src.lax.elementwise import _const
from justjax._src.lax.elementwise import _full_like as full_like
from justjax._src.lax.selection import select
from justjax._src.lax.structural import broadcast_in_dim, convert_element_type

__all__ = [
    "bessel_i0e", "bessel_i0e_p", "bessel_i1e", "bessel_i1e_p", "betainc", "igamma",
    "igamma_grad_a", "igamma_grad_a_p", "igamma_p", "igammac", "igammac_p",
    "random_gamma_grad", "regularized_incomplete_beta_p", "zeta", "zeta_p",
]

FLOAT = utils.FLOAT

# -- the primitives (elementwise: equal shapes, or rank-0 / size-1 operands broadcast) ---------

igamma_p = binop("igamma", FLOAT)
igammac_p = binop("igammac", FLOAT)
igamma_grad_a_p = binop("igamma_grad_a", FLOAT)
regularized_incomplete_beta_p = naryop("regularized_incomplete_beta", [FLOAT, FLOAT, FLOAT])
zeta_p = binop("zeta", FLOAT)
bessel_i0e_p = unop("bessel_i0e", FLOAT)
bessel_i1e_p = unop("bessel_i1e", FLOAT)


# -- public lax functions ----------------------------------------------------------------------

def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a).

    Args:
      a: shape parameter, a float array.
      x: integration bound, a float array of `a`'s dtype and shape (or rank 0).
    Returns:
      P(a, x) elementwise. Lowers to a series / continued-fraction `stablehlo.while`
      expansion.
    """
    return igamma_p.bind(a, x)


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Args:
      a: shape parameter, a float array.
      x: integration bound, a float array of `a`'s dtype and shape (or rank 0).
    Returns:
      Q(a, x) elementwise, lowered as `igamma`.
    """
    return igammac_p.bind(a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """The derivative dP(a, x)/da of the regularized incomplete gamma function.

    Args:
      a: shape parameter, a float array.
      x: integration bound, a float array of `a`'s dtype and shape (or rank 0).
    Returns:
      dP/da elementwise (NaN for a <= 0), lowered as `igamma`.
    """
    return igamma_grad_a_p.bind(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b).

    Args:
      a, b: positive shape parameters, float arrays.
      x: a float array in [0, 1], of the same dtype and shape (or rank 0).
    Returns:
      I_x(a, b) elementwise. Lowers to a continued-fraction `stablehlo.while` expansion.
    """
    return regularized_incomplete_beta_p.bind(a, b, x)


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function sum_n (n + q)^-x.

    Args:
      x: the exponent, a float array.
      q: the offset, a float array of `x`'s dtype and shape (or rank 0).
    Returns:
      zeta(x, q) elementwise, lowered to `chlo.zeta`.
    """
    return zeta_p.bind(x, q)


def bessel_i0e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x).

    Args:
      x: a float array.
    Returns:
      i0e(x) elementwise, lowered to Cephes' Chebyshev expansions.
    """
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x).

    Args:
      x: a float array.
    Returns:
      i1e(x) elementwise, lowered to `chlo.bessel_i1e`.
    """
    return bessel_i1e_p.bind(x)


def _up_and_broadcast(impl: Callable[..., Any]) -> Callable[..., Any]:
    """`impl(*args, dtype=...)` on operands broadcast to one shape (leading axes aligned, as
    JAX does it) and, for float16/bfloat16 operands (the first decides), computed in float32
    and rounded back once."""
    @functools.wraps(impl)
    def wrapped(*args: Any) -> Any:
        shape = utils.broadcast_shapes(*(arg.shape for arg in args))
        args = [broadcast_in_dim(arg, shape, list(range(np.ndim(arg)))) for arg in args]
        in_dtype = args[0].dtype
        upcast = in_dtype in (dtypes.float16, dtypes.bfloat16)
        if upcast:
            args = [convert_element_type(arg, np.float32) for arg in args]
        result = impl(*args, dtype=np.dtype(np.float32) if upcast else np.dtype(in_dtype))
        return convert_element_type(result, in_dtype) if upcast else result
    return wrapped


# -- shared pieces of the algorithms -----------------------------------------------------------

class IgammaMode(enum.Enum):
    """What the incomplete gamma recurrences compute: P (or Q), dP/da, or the derivative of
    a Gamma(a, 1) sample with respect to a."""

    VALUE = 1
    DERIVATIVE = 2
    SAMPLE_DERIVATIVE = 3


def _isnan(x: Any) -> Any:
    return ne(x, x)


def _any(predicates: Any) -> Any:
    """Whether any lane is true: a `reduce_or` over every axis."""
    ndim = len(core.get_aval(predicates).shape)
    return reductions.reduce(predicates, _const(predicates, False), bitwise_or,
                             tuple(range(ndim)))


def _or_all(predicates: Sequence[Any]) -> Any:
    """`((p0 | p1) | p2) | ...`, folded left to right."""
    return functools.reduce(bitwise_or, predicates)


def _eps(dtype: np.dtype) -> Any:
    return dtypes.finfo(dtype).eps


def _log_max(dtype: np.dtype) -> Any:
    """-log(largest finite value): below it, exp underflows the series' prefactor."""
    return -log(dtypes.finfo(dtype).max)


def _prefactor(a: Any, x: Any) -> Any:
    """log(x^a e^-x / Gamma(a)), the log of the factor both expansions share."""
    return a * log(x) - x - lgamma(a)


# -- the power series of P(a, x) ---------------------------------------------------------------

def _igamma_series_body(mode: IgammaMode, dtype: np.dtype) -> Callable[[tuple], tuple]:
    """One term of sum_n x^n / (a+1)...(a+n) and of its derivative in a; lanes that are not
    enabled keep their carry."""
    def body(carry: tuple) -> tuple:
        enabled, r, c, ans, x, dc_da, dans_da = carry
        r = r + _const(r, 1.)
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
        if mode is IgammaMode.VALUE:
            going = bitwise_and(enabled, c / ans > _eps(dtype))
        else:
            going = bitwise_and(enabled, abs(dc_da / dans_da) > _eps(dtype))
        updated = (r, c, ans, x, dc_da, dans_da)
        return (going, *[select(enabled, new, old)
                         for new, old in zip(updated, carry[1:], strict=True)])
    return body


def _igamma_series(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype,
                   mode: IgammaMode) -> Any:
    """P(a, x) (or a derivative, by `mode`) from its power series, run until every enabled
    lane's last term is below epsilon relative to the sum."""
    init = (enabled, a, full_like(a, 1), full_like(a, 1), x, full_like(a, 0),
            full_like(a, 0))
    carry = while_loop(lambda carry: _any(carry[0]), _igamma_series_body(mode, dtype), init)
    ans, dans_da = carry[3], carry[6]
    if mode is IgammaMode.VALUE:
        return (ans * ax) / a
    dlogax_da = log(x) - digamma(a + _const(a, 1))
    if mode is IgammaMode.DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


# -- the continued fraction of Q(a, x) ---------------------------------------------------------

def _rescaled(rescale: Any, values: Sequence[Any], eps: Any) -> list[Any]:
    """`values` scaled by eps where `rescale` (the convergents grew past 1 / eps)."""
    return [select(rescale, mul(v, _const(v, eps)), v) for v in values]


def _igammac_cf_body(mode: IgammaMode, dtype: np.dtype) -> Callable[[tuple], tuple]:
    """One step of the continued fraction's convergents p_k / q_k and of their derivatives in
    a; lanes that are not enabled keep their carry (the step count `c` is shared)."""
    eps = _eps(dtype)

    def body(carry: tuple) -> tuple:
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = carry
        c = c + _const(c, 1)
        y = y + _const(y, 1)
        z = z + _const(z, 2)
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        qk_is_nonzero = ne(qk, _const(qk, 0))
        r = pk / qk
        t = select(qk_is_nonzero, abs(div(sub(ans, r), r)), full_like(r, 1))
        ans = select(qk_is_nonzero, r, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = select(qk_is_nonzero, div(dpk_da - ans * dqk_da, qk), dans_da)
        grad_step = select(qk_is_nonzero, abs(dans_da_new - dans_da), full_like(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = gt(abs(pk), integer_pow(_const(pk, eps), -1))
        pkm2, pkm1, qkm2, qkm1 = _rescaled(rescale, (pkm2, pkm1, qkm2, qkm1), eps)
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = _rescaled(
            rescale, (dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da), eps)
        if mode is IgammaMode.VALUE:
            going = bitwise_and(enabled, t > eps)
        else:
            going = bitwise_and(enabled, grad_step > _const(grad_step, eps))
        kept = [select(enabled, new, old) for new, old in
                zip((ans, t, y, z), carry[1:5], strict=True)]
        kept_too = [select(enabled, new, old) for new, old in zip(
            (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new),
            carry[6:], strict=True)]
        return (going, *kept, c, *kept_too)
    return body


def _igammac_cf_init(x: Any, a: Any, enabled: Any) -> tuple:
    """The carry before the first step: the convergents p_0, q_0, p_1, q_1 of Q's continued
    fraction and their derivatives in a."""
    y = _const(a, 1) - a
    z = x + y + _const(x, 1)
    c = _const(x, 0)
    pkm2 = full_like(x, 1)
    qkm2 = x
    pkm1 = x + _const(x, 1)
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = full_like(x, 1)
    dpkm2_da = full_like(x, 0)
    dqkm2_da = full_like(x, 0)
    dpkm1_da = full_like(x, 0)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    return (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
            dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)


def _igammac_continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype,
                                mode: IgammaMode) -> Any:
    """Q(a, x) (or minus a derivative of P, by `mode`) from its continued fraction, 2000
    steps at most."""
    def cond(carry: tuple) -> Any:
        return bitwise_and(carry[5] < _const(carry[5], 2000), _any(carry[0]))

    carry = while_loop(cond, _igammac_cf_body(mode, dtype), _igammac_cf_init(x, a, enabled))
    ans = carry[1]
    if mode is IgammaMode.VALUE:
        return ans * ax
    dans_da = carry[14]
    dlogax_da = log(x) - digamma(a)
    if mode is IgammaMode.DERIVATIVE:
        return mul(ax, add(mul(ans, dlogax_da), dans_da))
    return -(add(dans_da, mul(ans, dlogax_da)) * x)


# -- the incomplete gamma functions ------------------------------------------------------------

def _domain_error(a: Any, x: Any, a_is_zero: Any, x_is_zero: Any, is_nan: Any) -> Any:
    """Where P and Q are NaN: x < 0, a < 0, a = x = 0 or a NaN operand."""
    return _or_all([lt(x, _const(x, 0)), lt(a, _const(a, 0)),
                    bitwise_and(a_is_zero, x_is_zero), is_nan])


def _igamma_impl(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    """P(a, x): the series where x < 1 or x <= a, else 1 - Q by the continued fraction."""
    is_nan = bitwise_or(_isnan(a), _isnan(x))
    x_is_infinity = eq(x, _const(x, float("inf")))
    a_is_zero = eq(a, _const(a, 0))
    x_is_zero = eq(x, _const(x, 0))
    domain_error = _domain_error(a, x, a_is_zero, x_is_zero, is_nan)
    use_igammac = bitwise_and(ge(x, _const(x, 1)), gt(x, a))
    log_ax = _prefactor(a, x)
    underflow = lt(log_ax, _log_max(dtype))
    ax = exp(log_ax)
    enabled = bitwise_not(_or_all([x_is_zero, domain_error, underflow, x_is_infinity]))
    output = select(
        use_igammac,
        _const(a, 1) - _igammac_continued_fraction(
            ax, x, a, bitwise_and(enabled, use_igammac), dtype, IgammaMode.VALUE),
        _igamma_series(ax, x, a, bitwise_and(enabled, bitwise_not(use_igammac)), dtype,
                       IgammaMode.VALUE))
    output = select(x_is_zero, full_like(a, 0), output)
    output = select(x_is_infinity, full_like(a, 1), output)
    return select(domain_error, full_like(a, float("nan")), output)


def _igammac_impl(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    """Q(a, x): 1 - P by the series where x < 1 or x < a, else the continued fraction."""
    is_nan = bitwise_or(_isnan(a), _isnan(x))
    a_is_zero = eq(a, _const(a, 0))
    x_is_zero = eq(x, _const(x, 0))
    x_is_infinity = eq(x, _const(x, float("inf")))
    domain_error = _domain_error(a, x, a_is_zero, x_is_zero, is_nan)
    use_igamma = bitwise_or(lt(x, _const(x, 1)), lt(x, a))
    log_ax = _prefactor(a, x)
    underflow = lt(log_ax, _log_max(dtype))
    enabled = bitwise_not(_or_all([domain_error, underflow, x_is_infinity, a_is_zero]))
    ax = exp(log_ax)
    series = _igamma_series(ax, x, a, bitwise_and(enabled, use_igamma), dtype,
                            IgammaMode.VALUE)
    fraction = _igammac_continued_fraction(
        ax, x, a, bitwise_and(enabled, bitwise_not(use_igamma)), dtype, IgammaMode.VALUE)
    output = select(use_igamma, _const(a, 1) - series, fraction)
    output = select(bitwise_or(x_is_infinity, a_is_zero), full_like(output, 0), output)
    return select(domain_error, full_like(a, float("nan")), output)


def _igamma_derivative(a: Any, x: Any, dtype: np.dtype, max_dtype: np.dtype,
                       mode: IgammaMode) -> Any:
    """dP/da (`DERIVATIVE`) or the sample derivative (`SAMPLE_DERIVATIVE`): 0 at x = 0, NaN
    for x < 0, a <= 0 or a NaN operand."""
    is_nan = bitwise_or(_isnan(a), _isnan(x))
    x_is_zero = eq(x, full_like(x, 0))
    domain_error = bitwise_or(lt(x, full_like(x, 0)), le(a, full_like(a, 0)))
    use_igammac = bitwise_and(gt(x, full_like(x, 1)), gt(x, a))
    log_ax = _prefactor(a, x)
    underflow = lt(log_ax, _log_max(max_dtype))
    ax = exp(log_ax)
    enabled = bitwise_not(_or_all([x_is_zero, domain_error, underflow, is_nan]))
    output = select(
        use_igammac,
        -_igammac_continued_fraction(ax, x, a, bitwise_and(enabled, use_igammac), dtype,
                                     mode),
        _igamma_series(ax, x, a, bitwise_and(enabled, bitwise_not(use_igammac)), dtype,
                       mode))
    output = select(x_is_zero, full_like(output, 0), output)
    return select(bitwise_or(domain_error, is_nan), full_like(a, float("nan")), output)


def _igamma_grad_a_impl(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    return _igamma_derivative(a, x, dtype, dtype, IgammaMode.DERIVATIVE)


def _random_gamma_grad_impl(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    # The underflow bound uses the operands' own dtype here, as JAX's does.
    return _igamma_derivative(a, x, dtype, core.get_aval(a).dtype,
                              IgammaMode.SAMPLE_DERIVATIVE)


@_up_and_broadcast
def random_gamma_grad(a: Any, x: Any, *, dtype: np.dtype) -> Any:
    """The derivative with respect to `a` of a Gamma(a, 1) sample `x`, by implicit
    differentiation of the CDF: `-(dP(a, x)/da) / (dP(a, x)/dx)`.

    Not a primitive (as in JAX): the algorithm's while loops are traced where it is called.
    Operands need a `.shape` (arrays); they broadcast together, and float16/bfloat16 ones
    (by the first operand's dtype) are computed in float32.

    Args:
      a: shape parameter, a float array.
      x: a sample, a float array.
    Returns:
      dx/da elementwise (0 at x = 0, NaN for a <= 0 or x < 0).
    """
    return _random_gamma_grad_impl(a, x, dtype=dtype)


# -- the regularized incomplete beta function --------------------------------------------------

def _lentz_thompson_barnett(*, num_iterations: int, small: Any, threshold: Any,
                            nth_partial_numerator: Callable, nth_partial_denominator: Callable,
                            inputs: Sequence[Any]) -> Any:
    """Evaluates the continued fraction b0 + a1/(b1 + a2/(b2 + ...)) by the modified Lentz
    method, until every lane's step ratio is within `threshold` of 1 or `num_iterations`."""
    def cond(carry: list) -> Any:
        iteration, unconverged = carry[0], carry[1]
        return bitwise_and(lt(iteration, num_iterations), unconverged)

    def body(carry: list) -> list:
        iteration, _, c_prev, d_prev, h_prev = carry
        numerator = nth_partial_numerator(iteration, *inputs)
        denominator = nth_partial_denominator(iteration, *inputs)
        c = add(denominator, div(numerator, c_prev))
        small_constant = full_like(c, small)
        c = select(lt(abs(c), small_constant), small_constant, c)
        d = add(denominator, mul(numerator, d_prev))
        d = select(lt(abs(d), small_constant), small_constant, d)
        d = integer_pow(d, -1)
        delta = mul(c, d)
        h = mul(h_prev, delta)
        iteration = iteration + 1
        unconverged = _any(ge(abs(sub(delta, _const(delta, 1.0))), threshold))
        return [iteration, unconverged, c, d, h]

    first = nth_partial_denominator(0, *inputs)
    h = select(lt(abs(first), small), broadcast_in_dim(small, core.get_aval(first).shape, ()),
               first)
    return while_loop(cond, body, [1, True, h, full_like(h, 0), h])[4]


def _betainc_partials(shape: tuple[int, ...], dtype: np.dtype
                      ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The n-th partial numerator (DLMF 8.17.23; 1 for n = 1) and denominator (0 for n = 0,
    else 1) of the incomplete beta continued fraction."""
    def numerator(iteration: Any, a: Any, b: Any, x: Any) -> Any:
        n = broadcast_in_dim(iteration, shape, [])
        n_is_even = eq(n % full_like(n, 2), full_like(n, 0))
        n_is_one = eq(n, full_like(n, 1))
        n_minus_one = n - full_like(n, 1)
        m = n_minus_one // full_like(n_minus_one, 2)
        m_is_zero = eq(m, full_like(m, 0))
        m = convert_element_type(m, dtype)
        one = full_like(a, 1)
        two = full_like(a, 2.0)
        # For m = 0 this form avoids inaccuracy for tiny a when denormals flush to zero.
        zero_numerator = -(a + b) * x / (a + one)
        even_numerator = select(m_is_zero, zero_numerator,
                                -(a + m) * (a + b + m) * x / (
                                    (a + two * m) * (a + two * m + one)))
        odd_numerator = m * (b - m) * x / ((a + two * m - one) * (a + two * m))
        one_numerator = full_like(x, 1.0)
        chosen = select(n_is_even, even_numerator, odd_numerator)
        return select(n_is_one, one_numerator, chosen)

    def denominator(iteration: Any, a: Any, b: Any, x: Any) -> Any:
        n = broadcast_in_dim(iteration, shape, [])
        return select(eq(n, full_like(n, 0)), full_like(x, 0), full_like(x, 1))

    return numerator, denominator


def _betainc_special_cases(a: Any, b: Any, x: Any) -> tuple[Any, Any, Any]:
    """Where I_x(a, b) is exactly 0, exactly 1, or NaN (a, b < 0, x outside [0, 1], a = b = 0
    in the limit sense, a NaN operand)."""
    a_is_zero = bitwise_or(eq(a, full_like(a, 0)), eq(b, full_like(b, float("inf"))))
    b_is_zero = bitwise_or(eq(b, full_like(b, 0)), eq(a, full_like(a, float("inf"))))
    x_is_zero = eq(x, full_like(x, 0))
    x_is_one = eq(x, full_like(x, 1))
    x_is_not_zero = bitwise_not(x_is_zero)
    x_is_not_one = bitwise_not(x_is_one)
    is_nan = bitwise_or(bitwise_or(_isnan(a), _isnan(b)), _isnan(x))
    is_zero = bitwise_or(bitwise_and(b_is_zero, x_is_not_one), bitwise_and(a_is_zero, x_is_zero))
    is_one = bitwise_or(bitwise_and(a_is_zero, x_is_not_zero), bitwise_and(b_is_zero, x_is_one))
    out_of_domain = bitwise_or(bitwise_or(bitwise_or(
        lt(a, full_like(a, 0)), lt(b, full_like(b, 0))), lt(x, full_like(x, 0))),
        gt(x, full_like(x, 1)))
    is_nan = bitwise_or(out_of_domain, bitwise_or(bitwise_and(a_is_zero, b_is_zero), is_nan))
    return is_zero, is_one, is_nan


def _betainc_impl(a: Any, b: Any, x: Any, *, dtype: np.dtype) -> Any:
    """I_x(a, b) by its continued fraction, through 1 - I_{1-x}(b, a) where that one
    converges faster (x >= (a + 1) / (a + b + 2))."""
    shape = core.get_aval(a).shape
    is_zero, is_one, is_nan = _betainc_special_cases(a, b, x)
    converges_rapidly = lt(x, (a + full_like(a, 1)) / (a + b + full_like(b, 2.0)))
    a, b = select(converges_rapidly, a, b), select(converges_rapidly, b, a)
    x = select(converges_rapidly, x, sub(full_like(x, 1), x))
    numerator, denominator = _betainc_partials(shape, dtype)
    tolerance = (dtypes.finfo(dtype).eps / 2).astype(dtype)
    fraction = _lentz_thompson_barnett(
        num_iterations=200 if dtype == np.float32 else 600, small=tolerance,
        threshold=tolerance, nth_partial_numerator=numerator,
        nth_partial_denominator=denominator, inputs=[a, b, x])
    # For tiny a, a Gamma(a) = Gamma(a + 1) -> 1 keeps the prefactor finite.
    very_small = (dtypes.finfo(dtype).tiny * 2).astype(dtype)
    lbeta_small_a = lgamma(b) - lgamma(a + b)
    lbeta = lgamma(a) + lbeta_small_a
    factor = select(lt(a, full_like(a, very_small)),
                    exp(log1p(-x) * b - lbeta_small_a),
                    exp(log(x) * a + log1p(-x) * b - lbeta) / a)
    result = fraction * factor
    result = select(converges_rapidly, result, sub(full_like(result, 1), result))
    result = select(is_zero, full_like(a, 0), result)
    result = select(is_one, full_like(a, 1), result)
    return select(is_nan, full_like(a, float("nan")), result)


# -- bessel_i0e --------------------------------------------------------------------------------

# Cephes' Chebyshev coefficients of exp(-x) I0(x) on [0, 8] (in 0.5 x - 2) and of
# sqrt(x) exp(-x) I0(x) on (8, inf) (in 32 / x - 2); float32 uses the trailing terms only.
_I0E_A = np.array([
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1])
_I0E_B = np.array([
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1])
# How many of the trailing coefficients float32 keeps.
_I0E_A_TERMS_F32 = 18
_I0E_B_TERMS_F32 = 7


def _chebyshev(x: Any, coefficients: Sequence[float]) -> Any:
    """sum_k c_k T_k(x / 2) by Clenshaw's recurrence, the leading term halved (Cephes'
    `chbevl`)."""
    b0 = full_like(x, 0)
    b1 = full_like(x, 0)
    b2 = full_like(x, 0)
    for c in coefficients:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + full_like(x, c)
    return 0.5 * (b0 - b2)


def _i0e(x: Any, a_terms: Sequence[float], b_terms: Sequence[float]) -> Any:
    x = abs(x)
    half = full_like(x, 0.5)
    two = full_like(x, 2.0)
    thirty_two = full_like(x, 32.0)
    small = _chebyshev(half * x - two, a_terms)
    large = div(_chebyshev(thirty_two / x - two, b_terms), sqrt(x))
    return select(x <= 8.0, small, large)


def _bessel_i0e_impl(x: Any) -> Any:
    """exp(-|x|) I0(x) in float64 with every coefficient, in float32 with the trailing ones;
    16-bit floats are computed in float32 (the coefficients need the precision)."""
    dtype = core.get_aval(x).dtype
    if dtype == np.float64:
        return _i0e(x, _I0E_A, _I0E_B)
    if dtype == np.float32:
        return _i0e(x, _I0E_A[-_I0E_A_TERMS_F32:], _I0E_B[-_I0E_B_TERMS_F32:])
    wide = convert_element_type(x, np.float32)
    return convert_element_type(
        _i0e(wide, _I0E_A[-_I0E_A_TERMS_F32:], _I0E_B[-_I0E_B_TERMS_F32:]), dtype)


# -- lowering ----------------------------------------------------------------------------------

for _prim, _impl in ((igamma_p, _igamma_impl), (igammac_p, _igammac_impl),
                     (igamma_grad_a_p, _igamma_grad_a_impl),
                     (regularized_incomplete_beta_p, _betainc_impl)):
    lowering.register_lowering(
        _prim, lowering.lower_fun(_up_and_broadcast(_impl), multiple_results=False))
lowering.register_lowering(bessel_i0e_p,
                           lowering.lower_fun(_bessel_i0e_impl, multiple_results=False))
lowering.register_lowering(zeta_p, lowering.elementwise("chlo.zeta"))
lowering.register_lowering(bessel_i1e_p, lowering.elementwise("chlo.bessel_i1e"))


# -- differentiation ---------------------------------------------------------------------------
# JAX defines no rule for igamma_grad_a (so second derivatives of igamma in a raise) nor
# for zeta (jax.scipy.special.zeta has a custom_jvp of its own).

def _igamma_grad_x(g: Any, a: Any, x: Any) -> Any:
    """dP/dx = x^(a-1) e^-x / Gamma(a)."""
    return g * exp(-x + (a - full_like(a, 1)) * log(x) - lgamma(a))


def _igamma_grad_a(g: Any, a: Any, x: Any) -> Any:
    return g * igamma_grad_a(a, x)


def _betainc_grad_not_implemented(g: Any, a: Any, b: Any, x: Any) -> Any:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_grad_x(g: Any, a: Any, b: Any, x: Any) -> Any:
    """dI_x/dx = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    lbeta = lgamma(a) + lgamma(b) - lgamma(a + b)
    partial_x = exp((b - 1) * log1p(-x) + (a - 1) * log(x) - lbeta)
    return partial_x * g


def _bessel_i1e_jvp(g: Any, y: Any, x: Any) -> Any:
    """d i1e/dx = i0e(x) - i1e(x) (sign(x) + 1/x), and 1/2 where |x| <= eps."""
    eps = dtypes.finfo(core.get_aval(x).dtype).eps
    x_is_not_tiny = abs(x) > eps
    safe_x = select(x_is_not_tiny, x, full_like(x, eps))
    dy_dx = bessel_i0e(safe_x) - y * (sign(safe_x) + integer_pow(safe_x, -1))
    dy_dx = select(x_is_not_tiny, dy_dx, full_like(x, 0.5))
    return g * dy_dx


ad.defjvp(igamma_p, _igamma_grad_a, _igamma_grad_x)
ad.defjvp(igammac_p,
          lambda g, a, x: -_igamma_grad_a(g, a, x),
          lambda g, a, x: -_igamma_grad_x(g, a, x))
ad.defjvp(regularized_incomplete_beta_p, _betainc_grad_not_implemented,
          _betainc_grad_not_implemented, _betainc_grad_x)
ad.defjvp2(bessel_i0e_p, lambda g, y, x: g * (bessel_i1e(x) - sign(x) * y))
ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
