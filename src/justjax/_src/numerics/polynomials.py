"""XLA's polynomial approximations of functions whose exact values would differ from JAX's in
the last bits, evaluated as XLA CPU evaluates them (Horner steps fused into FMAs), so the
reference backend gives JAX's bits for the samplers built on them (`random.normal` is
sqrt(2) * erf_inv(uniform)).

`erf_inv` is M. Giles's approximation ("Approximating the erfinv function", GPU Computing
Gems, 2011): in float32 one polynomial in w - 2.5 for w = -log1p(-x^2) < 5 and one in
sqrt(w) - 3 beyond; in float64 three, split at w = 6.25 and 16.
"""
from __future__ import annotations

import numpy as np

_F32_W_LESS_THAN_5 = (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_F32_W_GREATER_THAN_5 = (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

_F64_W_LESS_THAN_6_25 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_F64_W_LESS_THAN_16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_F64_W_GREATER_THAN_16 = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    # a * b is exact in float64 for float32 operands; one rounding of the sum to float32
    # then matches a fused multiply-add except in rare double-rounding cases.
    return (a.astype(np.float64) * b + c).astype(np.float32)


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    # The x87 extended type keeps 11 more bits of the product than float64.
    wide = np.longdouble
    return (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(np.float64)


def erf_inv_f32(x: np.ndarray) -> np.ndarray:
    """XLA's float32 inverse error function (±1 give ±inf, |x| > 1 NaN)."""
    x = np.asarray(x, np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = -np.log1p(-x * x)
        small = w < np.float32(5.0)
        w = np.where(small, w - np.float32(2.5), np.sqrt(w) - np.float32(3.0)).astype(np.float32)
        p = np.where(small, np.float32(_F32_W_LESS_THAN_5[0]),
                     np.float32(_F32_W_GREATER_THAN_5[0])).astype(np.float32)
        for lo, hi in zip(_F32_W_LESS_THAN_5[1:], _F32_W_GREATER_THAN_5[1:], strict=True):
            p = _fma32(p, w, np.where(small, np.float32(lo), np.float32(hi)))
        result = p * x
        return np.where(np.abs(x) == 1, x * np.float32(np.inf), result).astype(np.float32)


def erf_inv_f64(x: np.ndarray) -> np.ndarray:
    """XLA's float64 inverse error function (±1 give ±inf, |x| > 1 NaN)."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = -np.log1p(-x * x)
        below_6_25 = w < 6.25
        below_16 = w < 16.0
        w = np.where(below_6_25, w - 3.125, np.sqrt(w) - np.where(below_16, 3.25, 5.0))

        def coefficient(i: int) -> np.ndarray:
            c = np.full_like(x, _F64_W_LESS_THAN_6_25[i])
            if i < len(_F64_W_LESS_THAN_16):
                c = np.where(below_6_25, c, _F64_W_LESS_THAN_16[i])
            if i < len(_F64_W_GREATER_THAN_16):
                c = np.where(below_16, c, _F64_W_GREATER_THAN_16[i])
            return c

        p = coefficient(0)
        for i in range(1, len(_F64_W_GREATER_THAN_16)):
            p = _fma64(p, w, coefficient(i))
        for i in range(len(_F64_W_GREATER_THAN_16), len(_F64_W_LESS_THAN_16)):
            p = np.where(below_16, _fma64(p, w, coefficient(i)), p)
        for i in range(len(_F64_W_LESS_THAN_16), len(_F64_W_LESS_THAN_6_25)):
            p = np.where(below_6_25, _fma64(p, w, coefficient(i)), p)
        result = p * x
        return np.where(np.abs(x) == 1, x * np.inf, result)


def erf_inv(x: np.ndarray) -> np.ndarray:
    """XLA's inverse error function of a float32 or float64 array (float16 and bfloat16 are
    widened to float32 by the caller, as XLA CPU computes them)."""
    x = np.asarray(x)
    return erf_inv_f64(x) if x.dtype == np.float64 else erf_inv_f32(x)
