"""Accuracy measurement for `mathlib`: dense sweeps and errors in ULPs against high-precision references.

float32 results are compared with NumPy float64; float64 results with NumPy long double (80-bit on x86),
except erf, erf_inv, lgamma and digamma, compared with scipy.special in float64 (itself off by up to
~2.6 ULP), where every point measured above 1 ULP is measured again exactly in decimal arithmetic.
Used by tests/test_llvm_mathlib.py and tools/mathlib_accuracy.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Callable

import numpy as np
import scipy.special

from justjax._src.backends.llvm.mathlib import gamma, harness, scalar

_NP = {"f32": np.float32, "f64": np.float64}
_INT = {"f32": np.int32, "f64": np.int64}


def _lgamma_ref(x: np.ndarray) -> np.ndarray:
    # scipy's gammaln overflows to inf below ~1e-308; there lgamma(x) = -log|x| to far below an ULP.
    tiny = (np.abs(x) < 1e-300) & (x != 0)
    with np.errstate(divide="ignore"):
        ref = np.where(tiny, -np.log(np.abs(x)), scipy.special.gammaln(x.astype(np.float64)))
    return np.where(x == -np.inf, np.inf, ref)


def _logistic_ref(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e / (1 + e), 1 / (1 + e))


def _rsqrt_ref(x: np.ndarray) -> np.ndarray:
    # float32 arguments come widened to float64: rsqrtss, XLA's estimate, reads their
    # subnormals as zeros of their sign (float64's vrsqrt14pd does not, without DAZ).
    if x.dtype == np.float64:
        x = np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(0.0, x), x)
    return 1 / np.sqrt(x)


REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "log2": np.log2, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "logistic": _logistic_ref,
    "rsqrt": lambda x: _rsqrt_ref(x),
    "erf": lambda x: scipy.special.erf(x.astype(np.float64)),
    # copysign: scipy returns +0 for -0; erf_inv is odd.
    "erf_inv": lambda x: np.copysign(scipy.special.erfinv(x.astype(np.float64)), x),
    "atan": np.arctan, "atan2": np.arctan2, "asin": np.arcsin, "acos": np.arccos,
    "sinh": np.sinh, "cosh": np.cosh, "cbrt": np.cbrt, "pow": np.power,
    "lgamma": lambda x: _lgamma_ref(x),
    # JAX (not scipy) at the edges: digamma(+-0) is nan, lgamma(-inf) is inf.
    "digamma": lambda x: np.where(x == 0, np.nan, scipy.special.digamma(x.astype(np.float64))),
}

# Swept domain per function: (lo, hi) for float32 and float64. XLA's forms of exp, logistic,
# float32 log and rsqrt (`explog.py`, `rsqrt.py`) are swept where arguments and results are
# normal numbers: JAX on CPU flushes subnormals to zero, and so does the native runtime.
DOMAINS: dict[str, dict[str, tuple[float, float]]] = {
    "exp": {"f32": (-87.33, 89.0), "f64": (-708.39, 710.0)},
    "exp2": {"f32": (-151.0, 129.0), "f64": (-1076.0, 1025.0)},
    "expm1": {"f32": (-20.0, 89.0), "f64": (-40.0, 710.0)},
    "log": {"f32": (1.1754944e-38, 3.4e38), "f64": (0.0, 1.7e308)},
    "log2": {"f32": (0.0, 3.4e38), "f64": (0.0, 1.7e308)},
    "log1p": {"f32": (-1.0, 3.4e38), "f64": (-1.0, 1.7e308)},
    "sin": {"f32": (-3.4e38, 3.4e38), "f64": (-1.7e308, 1.7e308)},
    "cos": {"f32": (-3.4e38, 3.4e38), "f64": (-1.7e308, 1.7e308)},
    "tan": {"f32": (-3.4e38, 3.4e38), "f64": (-1.7e308, 1.7e308)},
    "tanh": {"f32": (-20.0, 20.0), "f64": (-40.0, 40.0)},
    "logistic": {"f32": (-87.33, 89.0), "f64": (-708.39, 710.0)},
    "rsqrt": {"f32": (1.1754944e-38, 3.4e38), "f64": (2.2250738585072014e-308, 1.7e308)},
    "erf": {"f32": (-7.0, 7.0), "f64": (-7.0, 7.0)},
    "erf_inv": {"f32": (-1.0, 1.0), "f64": (-1.0, 1.0)},
    "atan": {"f32": (-3.4e38, 3.4e38), "f64": (-1.7e308, 1.7e308)},
    "atan2": {"f32": (-3.4e38, 3.4e38), "f64": (-1.7e308, 1.7e308)},
    "asin": {"f32": (-1.0, 1.0), "f64": (-1.0, 1.0)},
    "acos": {"f32": (-1.0, 1.0), "f64": (-1.0, 1.0)},
    "sinh": {"f32": (-90.0, 90.0), "f64": (-711.0, 711.0)},
    "cosh": {"f32": (-90.0, 90.0), "f64": (-711.0, 711.0)},
    "cbrt": {"f32": (-3.4e38, 3.4e38), "f64": (-1.7e308, 1.7e308)},
    "pow": {"f32": (0.0, 3.4e38), "f64": (0.0, 1.7e308)},
    "lgamma": {"f32": (0.0, 3.4e38), "f64": (0.0, 1.7e308)},
    "digamma": {"f32": (0.0, 3.4e38), "f64": (0.0, 1.7e308)},
}


# Where the evenly spaced half of a sweep goes when not over the whole domain.
LINEAR: dict[str, tuple[float, float]] = {"sin": (-1e5, 1e5), "cos": (-1e5, 1e5), "tan": (-1e5, 1e5),
                                          "lgamma": (0.0, 20.0), "digamma": (0.0, 20.0)}


def _bit_sweep(a: float, b: float, n: int, dtype: str) -> np.ndarray:
    """n floats between 0 <= a < b evenly spaced in bit pattern (dense near 0, incl. subnormals)."""
    dt = _NP[dtype]
    start = np.array(max(a, np.finfo(dt).smallest_subnormal), dt).view(_INT[dtype])
    stop = np.array(b, dt).view(_INT[dtype])
    return np.linspace(int(start), int(stop), n).astype(_INT[dtype]).view(dt)


def sweep(name: str, dtype: str, n: int) -> tuple[np.ndarray, ...]:
    """Arguments for about 2n points over the domain of `name`.

    Each argument gets n evenly spaced points and n evenly spaced in bit pattern; further arguments of a
    binary function are shuffled (fixed seed) so that pairs cover the plane.
    """
    first = _sweep1(DOMAINS[name][dtype], dtype, n, LINEAR.get(name))
    rng = np.random.default_rng(0)
    if name == "pow":
        return _pow_sweep(first, dtype, rng)
    return (first,) + tuple(rng.permutation(first) for _ in range(scalar.arity(name) - 1))


def _pow_sweep(x: np.ndarray, dtype: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Bases over (0, max] with exponents keeping x**y in range; a quarter negative bases with small
    integer exponents."""
    span = 126.0 if dtype == "f32" else 1022.0
    with np.errstate(divide="ignore"):
        scale = span / np.maximum(np.abs(np.log2(x.astype(np.float64))), 1.0)
    y = (rng.uniform(-1.0, 1.0, x.size) * scale).astype(_NP[dtype])
    quarter = x.size // 4
    ints = rng.integers(-40, 41, quarter).astype(_NP[dtype])
    neg = -rng.uniform(0.01, 6.0, quarter).astype(_NP[dtype])
    return np.concatenate([x, neg]), np.concatenate([y, ints])


def _sweep1(domain: tuple[float, float], dtype: str, n: int,
            linear: tuple[float, float] | None = None) -> np.ndarray:
    lo, hi = domain
    lin_lo, lin_hi = linear or domain
    # Halved ends keep hi - lo finite for the widest domains.
    parts = [(np.linspace(lin_lo * 0.5, lin_hi * 0.5, n) * 2).astype(_NP[dtype])]
    if hi > 0:
        parts.append(_bit_sweep(max(lo, 0.0), hi, n if lo >= 0 else n // 2, dtype))
    if lo < 0:
        parts.append(-_bit_sweep(max(-hi, 0.0), -lo, n if hi <= 0 else n // 2, dtype))
    return np.concatenate(parts)


def ulp_errors(name: str, dtype: str, xs: tuple[np.ndarray, ...]) -> np.ndarray:
    """Errors of the compiled `name` on arguments xs in ULPs of the correctly rounded result.

    A non-finite reference must be matched exactly (inf error otherwise).
    """
    dt = _NP[dtype]
    wide = np.float64 if dtype == "f32" else np.longdouble
    y = harness.compile_elementwise(name, dtype)(*xs).astype(wide)
    with np.errstate(all="ignore"):
        ref = REFERENCES[name](*[x.astype(wide) for x in xs])
        rounded = ref.astype(dt)
        spacing = np.spacing(np.abs(rounded)).astype(wide)
        err = np.abs(y - ref) / spacing
    finite = np.isfinite(rounded)
    same = (y == rounded) | (np.isnan(y) & np.isnan(rounded))
    out = np.where(finite, err, np.where(same, 0.0, np.inf)).astype(np.float64)
    if dtype == "f64" and name in _EXACT:
        for i in np.nonzero(finite & (out > 1.0))[0]:
            exact = _EXACT[name](float(xs[0][i]), float(y[i]))
            out[i] = out[i] if exact is None else exact
    return out


def _exact_erf(x: float, y: float) -> float:
    with localcontext() as ctx:
        ctx.prec = 90
        return abs(float(Decimal(y) - scalar._erf_at(Decimal(x)))) / float(np.spacing(abs(y)))


def _exact_erf_inv(x: float, y: float) -> float:
    # Linearized: y - erf_inv(x) = (erf(y) - x) / erf'(y).
    with localcontext() as ctx:
        ctx.prec = 90
        yd = Decimal(y)
        slope = 2 / scalar._PI.sqrt() * (-yd * yd).exp()
        return abs(float((scalar._erf_at(yd) - Decimal(x)) / slope)) / float(np.spacing(abs(y)))


def _exact_lgamma(x: float, y: float) -> float | None:
    if x <= 0:
        return None
    with localcontext() as ctx:
        ctx.prec = 60
        return abs(float(Decimal(y) - gamma._lgamma_dec(Decimal(x)))) / float(np.spacing(abs(y)))


def _exact_digamma(x: float, y: float) -> float | None:
    if x <= 0:
        return None
    with localcontext() as ctx:
        ctx.prec = 60
        return abs(float(Decimal(y) - gamma._digamma_dec(Decimal(x)))) / float(np.spacing(abs(y)))


# Exact error of y at x in ULPs, or None where the exact evaluation is not available (keep the measure).
_EXACT: dict[str, Callable[[float, float], float | None]] = {
    "erf": _exact_erf, "erf_inv": _exact_erf_inv, "lgamma": _exact_lgamma, "digamma": _exact_digamma}


@dataclass(frozen=True)
class Accuracy:
    """One row of the accuracy table."""
    name: str
    dtype: str
    domain: tuple[float, float]
    points: int
    max_ulp: float
    mean_ulp: float
    worst_x: tuple[float, ...]


def measure(name: str, dtype: str, n: int) -> Accuracy:
    """Sweeps `name` over its domain with about 2n points and summarizes the ULP errors."""
    xs = sweep(name, dtype, n)
    err = ulp_errors(name, dtype, xs)
    worst = int(np.argmax(err))
    return Accuracy(name, dtype, DOMAINS[name][dtype], err.size, float(err[worst]), float(err.mean()),
                    tuple(float(x[worst]) for x in xs))
