"""The error function family: erf, erfc, erfinv (lax primitives), erfcx, dawsn, wofz and
fresnel."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.scipy.special._util import promote_inexact, reject_complex
from justjax._src.numpy import array_creation, dtype_ops, numeric, selection, ufuncs, util

__all__ = ["dawsn", "erf", "erfc", "erfcx", "erfinv", "fresnel", "wofz"]


def erf(x: Any) -> Any:
    """The error function."""
    [x] = util.promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """The complementary error function `1 - erf(x)`."""
    [x] = util.promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse of `erf`."""
    [x] = util.promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


# -- wofz: Weideman's rational approximation (SIAM J. Numer. Anal. 31, 1994) ------------------

_WOFZ_N = 32
_WOFZ_L = np.sqrt(_WOFZ_N / np.sqrt(2.0))


def _weideman_coefficients(n: int, scale: float) -> np.ndarray:
    """The coefficients (highest degree first) of Weideman's polynomial p in
    w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz): the
    Fourier coefficients of exp(-t^2) (L^2 + t^2) on t = L tan(theta / 2)."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    t = scale * np.tan(k * np.pi / m / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return a[1:n + 1][::-1]


_WOFZ_COEFFICIENTS = _weideman_coefficients(_WOFZ_N, _WOFZ_L)


def _complex_const(like_real: Any, re: float, im: float) -> Any:
    return lax.complex(util.const(like_real, re), util.const(like_real, im))


def _wofz_upper(z: Any) -> Any:
    """w(z) for Im z >= 0."""
    re = lax.real(z)
    scale = _complex_const(re, _WOFZ_L, 0.0)
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denom = scale - iz
    big_z = (scale + iz) / denom
    p = numeric.polyval(array_creation.asarray(_WOFZ_COEFFICIENTS, dtype=big_z.dtype), big_z)
    return 2 * p / (denom * denom) + _complex_const(re, 1.0 / np.sqrt(np.pi), 0.0) / denom


@custom_jvp
def _wofz(z: Any) -> Any:
    """w(z), by the reflection w(z) = 2 exp(-z^2) - w(-z) in the lower half plane."""
    upper = lax.ge(lax.imag(z), util.const(lax.real(z), 0.0))
    w_upper = _wofz_upper(lax_selection.select(upper, z, lax.neg(z)))
    return lax_selection.select(upper, w_upper, 2 * lax.exp(lax.neg(z * z)) - w_upper)


_wofz.defjvps(lambda g, ans, z: g * (lax.neg(2 * z * ans)
                                     + _complex_const(lax.real(z), 0.0, 2.0 / np.sqrt(np.pi))))


def wofz(z: Any) -> Any:
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz), by Weideman's 32-term rational
    approximation.

    Args:
      z: array (promoted to complex).
    Returns:
      w(z), complex.
    """
    util.check_arraylike("wofz", z)
    [z] = [util.asarray_lite(a) for a in util.promote_dtypes_complex(z)]
    return _wofz(z)


# -- erfcx --------------------------------------------------------------------------------------

def _erfcx_asymptotic_coefficients(terms: int) -> np.ndarray:
    """erfcx(x) ~ (1 / (x sqrt(pi))) sum_n (-1)^n (2n - 1)!! / (2 x^2)^n: the coefficients
    of the polynomial in 1 / x^2, highest degree first."""
    values = [1.0]
    for n in range(1, terms):
        values.append(values[-1] * -(2 * n - 1) / 2)
    return np.array(values[::-1])


def erfcx(x: Any) -> Any:
    """The scaled complementary error function exp(x^2) erfc(x); `wofz(i x)` for complex x.

    Args:
      x: real or complex array.
    Returns:
      erfcx(x) in the promoted inexact dtype.
    """
    [x] = promote_inexact("erfcx", x)
    if dtypes.is_complex(x.dtype):
        return _wofz(lax.complex(lax.neg(lax.imag(x)), lax.real(x)))
    return _erfcx(x)


@custom_jvp
def _erfcx(x: Any) -> Any:
    """float64 with a 9-term asymptotic series, float32 with 5; narrower floats in float32."""
    if x.dtype == np.float64:
        return _erfcx_real(x, terms=9)
    if x.dtype == np.float32:
        return _erfcx_real(x, terms=5)
    return dtype_ops.astype(_erfcx_real(dtype_ops.astype(x, np.float32), terms=5), x.dtype)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - util.const(x, 2.0 / np.sqrt(np.pi))))


def _erfcx_real(x: Any, terms: int) -> Any:
    """exp(x^2) erfc(x) where exp(x^2) is finite, the asymptotic series above that."""
    threshold = np.sqrt(np.log(dtypes.finfo(x.dtype).max))
    large = x > util.const(x, threshold)
    safe_x = lax_selection.select(large, array_creation.lax_full_like(x, 1.0), x)
    direct = lax.exp(lax.square(safe_x)) * lax.erfc(safe_x)
    coefficients = np.array(_erfcx_asymptotic_coefficients(terms), dtype=x.dtype)
    series = numeric.polyval(coefficients, util.const(x, 1.0) / lax.square(x))
    asymptotic = series / (x * util.const(x, np.sqrt(np.pi)))
    return lax_selection.select(large, asymptotic, direct)


# -- dawsn: Cephes' rational approximations (dawsn.c) -------------------------------------------

# |x| < 3.25: x P(x^2) / Q(x^2).
_DAWSN_AN = (1.13681498971755972054E-11, 8.49262267667473811108E-10, 1.94434204175553054283E-8,
             9.53151741254484363489E-7, 3.07828309874913200438E-6, 3.52513368520288738649E-4,
             -8.50149846724410912031E-4, 4.22618223005546594270E-2, -9.17480371773452345351E-2,
             9.99999999999999994612E-1)
_DAWSN_AD = (2.40372073066762605484E-11, 1.48864681368493396752E-9, 5.21265281010541664570E-8,
             1.27258478273186970203E-6, 2.32490249820789513991E-5, 3.25524741826057911661E-4,
             3.48805814657162590916E-3, 2.79448531198828973716E-2, 1.58874241960120565368E-1,
             5.74918629489320327824E-1, 1.00000000000000000539E0)
# 3.25 <= |x| < 6.25: (1 + t P(t) / Q(t)) / (2 |x|), t = 1 / x^2.
_DAWSN_BN = (5.08955156417900903354E-1, -2.44754418142697847934E-1, 9.41512335303534411857E-2,
             -2.18711255142039025206E-2, 3.66207612329569181322E-3, -4.23209114460388756528E-4,
             3.59641304793896631888E-5, -2.14640351719968974225E-6, 9.10010780076391431042E-8,
             -2.40274520828250956942E-9, 3.59233385440928410398E-11)
_DAWSN_BD = (1.0, -6.31839869873368190192E-1, 2.36706788228248691528E-1,
             -5.31806367003223277662E-2, 8.48041718586295374409E-3, -9.47996768486665330168E-4,
             7.81025592944552338085E-5, -4.55875153252442634831E-6, 1.89100358111421846170E-7,
             -4.91324691331920606875E-9, 7.18466403235734541950E-11)
# |x| >= 6.25: the same form.
_DAWSN_CN = (-5.90592860534773254987E-1, 6.29235242724368800674E-1, -1.72858975380388136411E-1,
             1.64837047825189632310E-2, -4.86827613020462700845E-4)
_DAWSN_CD = (1.0, -2.69820057197544900361E0, 1.73270799045947845857E0,
             -3.93708582281939493482E-1, 3.44278924041233391079E-2, -9.73655226040941223894E-4)


def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt, by Cephes' rational approximations.

    Args:
      x: real array.
    Returns:
      F(x) in the promoted inexact dtype.
    """
    [x] = promote_inexact("dawsn", x)
    reject_complex("dawsn", x)
    return _dawsn(x)


@custom_jvp
def _dawsn(x: Any) -> Any:
    if x.dtype in (np.float32, np.float64):
        return _dawsn_real(x)
    return dtype_ops.astype(_dawsn_real(dtype_ops.astype(x, np.float32)), x.dtype)


_dawsn.defjvps(lambda g, ans, x: g * (util.const(x, 1.0) - util.const(x, 2.0) * x * ans))


def _ratio(num: tuple[float, ...], den: tuple[float, ...], t: Any) -> Any:
    dtype = t.dtype
    return numeric.polyval(np.array(num, dtype), t) / numeric.polyval(np.array(den, dtype), t)


def _dawsn_real(x: Any) -> Any:
    ax = lax.abs(x)
    one = util.const(x, 1.0)
    in_first = ax < util.const(x, 3.25)
    in_second = (ax >= util.const(x, 3.25)) & (ax < util.const(x, 6.25))
    in_third = ax >= util.const(x, 6.25)
    t = one / lax.square(ax)
    # Each branch reads 1 outside its own range, so no branch makes NaNs or infinities.
    ax1 = lax_selection.select(in_first, ax, array_creation.lax_full_like(ax, 1.0))
    first = ax1 * _ratio(_DAWSN_AN, _DAWSN_AD, lax.square(ax1))

    def tail(in_range: Any, num: tuple, den: tuple) -> Any:
        t_ = lax_selection.select(in_range, t, array_creation.lax_full_like(t, 1.0))
        ax_ = lax_selection.select(in_range, ax, array_creation.lax_full_like(ax, 1.0))
        return util.const(x, 0.5) / ax_ * (one + t_ * _ratio(num, den, t_))

    second = tail(in_second, _DAWSN_BN, _DAWSN_BD)
    third = tail(in_third, _DAWSN_CN, _DAWSN_CD)
    result = lax_selection.select(in_first, first, lax_selection.select(in_second, second, third))
    return ufuncs.sign(x) * result


# -- fresnel: Cephes' fresnl.c (float64) and the polynomials of its single-precision version ----

_FRESNEL_F32 = {
    "sn": (1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
           -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
           5.235987735681432e-1),
    "cn": (1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
           -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
           9.999999760004487e-1),
    "fn": (-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
           7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
           -1.032877601091159e2, 2.999401847870011e0),
    "gn": (-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
           6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
           -1.493439396592284e1, 9.999841934744914e-1),
}
_FRESNEL_F64 = {
    "sn": (-2.99181919401019853726E3, 7.08840045257738576863E5, -6.29741486205862506537E7,
           2.54890880573376359104E9, -4.42979518059697779103E10, 3.18016297876567817986E11),
    "sd": (1.0, 2.81376268889994315696E2, 4.55847810806532581675E4, 5.17343888770096400730E6,
           4.19320245898111231129E8, 2.24411795645340920940E10, 6.07366389490084639049E11),
    "cn": (-4.98843114573573548651E-8, 9.50428062829859605134E-6, -6.45191435683965050962E-4,
           1.88843319396703850064E-2, -2.05525900955013891793E-1, 9.99999999999999998822E-1),
    "cd": (3.99982968972495980367E-12, 9.15439215774657478799E-10, 1.25001862479598821474E-7,
           1.22262789024179030997E-5, 8.68029542941784300606E-4, 4.12142090722199792936E-2,
           1.00000000000000000118E0),
    "fn": (4.21543555043677546506E-1, 1.43407919780758885261E-1, 1.15220955073585758835E-2,
           3.45017939782574027900E-4, 4.63613749287867322088E-6, 3.05568983790257605827E-8,
           1.02304514164907233465E-10, 1.72010743268161828879E-13, 1.34283276233062758925E-16,
           3.76329711269987889006E-20),
    "fd": (1.0, 7.51586398353378947175E-1, 1.16888925859191382142E-1, 6.44051526508858611005E-3,
           1.55934409164153020873E-4, 1.84627567348930545870E-6, 1.12699224763999035261E-8,
           3.60140029589371370404E-11, 5.88754533621578410010E-14, 4.52001434074129701496E-17,
           1.25443237090011264384E-20),
    "gn": (5.04442073643383265887E-1, 1.97102833525523411709E-1, 1.87648584092575249293E-2,
           6.84079380915393090172E-4, 1.15138826111884280931E-5, 9.82852443688422223854E-8,
           4.45344415861750144738E-10, 1.08268041139020870318E-12, 1.37555460633261799868E-15,
           8.36354435630677421531E-19, 1.86958710162783235106E-22),
    "gd": (1.0, 1.47495759925128324529E0, 3.37748989120019970451E-1, 2.53603741420338795122E-2,
           8.14679107184306179049E-4, 1.27545075667729118702E-5, 1.04314589657571990585E-7,
           4.60680728146520428211E-10, 1.10273215066240270757E-12, 1.38796531259578871258E-15,
           8.39158816283118707363E-19, 1.86958710162783236342E-22),
}


@util.jitted_as_in_jax
def sincospisquaredhalf(x: Any) -> tuple[Any, Any]:
    """sin(pi x^2 / 2) and cos(pi x^2 / 2) with the argument reduced exactly: for
    x = 2k + s, x^2 / 2 = s (x - s / 2) mod 2, and the sine's argument is brought into
    [-pi/2, pi/2]."""
    x = ufuncs.absolute(x)
    s = ufuncs.fmod(x, 2.0)
    r = ufuncs.fmod(s * (x - s / 2), 2.0)
    sin = selection.where(r < 0.5, ufuncs.sin(np.pi * r),
                          selection.where(r > 1.5, ufuncs.sin(np.pi * (r - 2.0)),
                                          -ufuncs.sin(np.pi * (r - 1.0))))
    cos = selection.where(r == 0.5, 0.0,
                          selection.where(r < 1.0, -ufuncs.sin(np.pi * (r - 0.5)),
                                          ufuncs.sin(np.pi * (r - 1.5))))
    return sin, cos


def _poly(coefficients: tuple[float, ...], t: Any) -> Any:
    return numeric.polyval(np.array(coefficients, t.dtype), t)


@custom_jvp
def fresnel(x: Any) -> tuple[Any, Any]:
    """The Fresnel integrals S(x) = int_0^x sin(pi t^2 / 2) dt and C(x) (the cosine), by
    Cephes' approximations (power series below x^2 = 2.5625, the auxiliary functions f and g
    above). float16/bfloat16 are computed in float32.

    Args:
      x: real array.
    Returns:
      The pair (S(x), C(x)) in the promoted inexact dtype.
    """
    [x_in] = promote_inexact("fresnel", x)
    dtype = np.dtype(x_in.dtype)
    if dtypes.is_complex(dtype):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if dtype not in (np.float64, np.float32, np.float16, dtypes.bfloat16):
        raise NotImplementedError(f"Support for {dtype} dtype is not implemented yet.")
    work = x_in if dtype == np.float64 else dtype_ops.astype(x_in, np.float32)
    s, c = (_fresnel64 if dtype == np.float64 else _fresnel32)(work)
    neg = work < 0.0
    s = selection.where(neg, -s, s)
    c = selection.where(neg, -c, c)
    return dtype_ops.astype(s, dtype), dtype_ops.astype(c, dtype)


def _fresnel_auxiliary(x: Any, sinpi: Any, cospi: Any, f: Any, g: Any) -> tuple[Any, Any]:
    """S and C from the auxiliary functions f and g (x^2 >= 2.5625)."""
    t = np.pi * x
    return 0.5 - (f * cospi + g * sinpi) / t, 0.5 + (f * sinpi - g * cospi) / t


def _fresnel_select(x_signed: Any, x: Any, small: tuple, large: tuple, other: tuple
                    ) -> tuple[Any, Any]:
    is_inf = ufuncs.isinf(x_signed)
    is_small = x * x < 2.5625
    is_large = x > 36974.0
    return tuple(selection.where(is_inf, 0.5, selection.where(
        is_small, small_v, selection.where(is_large, large_v, other_v)))
        for small_v, large_v, other_v in zip(small, large, other, strict=True))


def _fresnel32(x_signed: Any) -> tuple[Any, Any]:
    coefficients = _FRESNEL_F32
    x = ufuncs.absolute(x_signed)
    x2 = x * x
    t = x2 * x2
    small = (x * x2 * _poly(coefficients["sn"], t), x * _poly(coefficients["cn"], t))
    sinpi, cospi = sincospisquaredhalf(x)
    u = 1.0 / ((np.pi * x2) * (np.pi * x2))
    f = 1.0 - u * _poly(coefficients["fn"], u)
    g = (1.0 / (np.pi * x2)) * _poly(coefficients["gn"], u)
    other = _fresnel_auxiliary(x, sinpi, cospi, f, g)
    return _fresnel_select(x_signed, x, small, (0.5, 0.5), other)


def _fresnel64(x_signed: Any) -> tuple[Any, Any]:
    coefficients = _FRESNEL_F64
    x = ufuncs.absolute(x_signed)
    x2 = x * x
    t = x2 * x2
    small = (x * x2 * _poly(coefficients["sn"], t) / _poly(coefficients["sd"], t),
             x * _poly(coefficients["cn"], t) / _poly(coefficients["cd"], t))
    sinpi, cospi = sincospisquaredhalf(x)
    large = (0.5 - 1 / (np.pi * x) * cospi, 0.5 + 1 / (np.pi * x) * sinpi)
    u = 1.0 / ((np.pi * x2) * (np.pi * x2))
    f = 1.0 - u * _poly(coefficients["fn"], u) / _poly(coefficients["fd"], u)
    g = (1.0 / (np.pi * x2)) * _poly(coefficients["gn"], u) / _poly(coefficients["gd"], u)
    other = _fresnel_auxiliary(x, sinpi, cospi, f, g)
    return _fresnel_select(x_signed, x, small, large, other)


@fresnel.defjvp
def _fresnel_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    sinpi, cospi = sincospisquaredhalf(x)
    return fresnel(x), (sinpi * x_dot, cospi * x_dot)
