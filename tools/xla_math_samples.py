"""The inputs on which justjax's elementwise math is compared bit for bit with XLA CPU's (issue #24).

Shared by `tools/record_xla_math_bits.py` (run with real JAX, which records XLA's outputs) and
`tests/test_mathlib_xla_bits.py` (which computes justjax's on the same inputs), so it imports
NumPy only. Inputs are built by formula (no stored inputs): every case is

- special values: +-0, +-inf, nan, the smallest and largest subnormals, the smallest normal,
  the largest finite, and the function's own boundaries (overflow thresholds, range-reduction
  points, the edges of its domain), each also one ULP either side;
- a bit sweep: bit patterns spaced evenly over all non-negative finite floats, both signs (every
  binade is visited, subnormals included);
- a value sweep: points spaced evenly over the interval where the function does its work.

Binary functions (atan2, pow) pair a sweep of x with a shuffled sweep of y, plus the full grid of
their special values.
"""
from __future__ import annotations

import math
import pathlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["Case", "CASES", "DTYPES", "OUT", "host_features", "samples", "special_count",
           "dense_samples"]

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "xla_math_bits.npz"

DTYPES = ("float32", "float64")
# Points per case and dtype: enough to see every binade and the common paths, small enough for
# the recorded bits to stay a few hundred kilobytes in all.
POINTS = {"float32": 2048, "float64": 1024}


@dataclass(frozen=True)
class Case:
    """One function: its name (as in `jax.lax`), arity, the value-sweep interval of each
    argument, and its own boundary points."""
    name: str
    arity: int
    domain: tuple[tuple[float, float], ...]
    boundaries: tuple[float, ...] = ()


_PI = math.pi
CASES: dict[str, Case] = {c.name: c for c in [
    Case("exp", 1, ((-104.0, 89.0),), (88.72283935546875, 88.7228393554688, -87.33654, -103.972,
                                       -745.13, 709.78, 0.5 * math.log(2), math.log(2))),
    Case("log", 1, ((0.0, 16.0),), (1.0, 0.5, 2.0, math.sqrt(0.5), math.sqrt(2.0), -1.0)),
    Case("tanh", 1, ((-10.0, 10.0),), (0.625, 0.55, 9.0, 7.90531110763549805, 20.0, 1e-4)),
    Case("logistic", 1, ((-25.0, 25.0),), (-88.0, 88.0, -104.0, 17.0, -17.0)),
    Case("sin", 1, ((-100.0, 100.0),), (_PI / 4, _PI / 2, _PI, 3 * _PI / 4, 105615.0, 1e5,
                                        3.9e5, 1e6, 8e6, 1e10, 3.4e38)),
    Case("cos", 1, ((-100.0, 100.0),), (_PI / 4, _PI / 2, _PI, 3 * _PI / 4, 105615.0, 1e5,
                                        3.9e5, 1e6, 8e6, 1e10, 3.4e38)),
    Case("log1p", 1, ((-1.0, 16.0),), (-1.0, -0.5, 1e-4, -1e-4, 0.4142135, -0.2928932)),
    Case("expm1", 1, ((-20.0, 89.0),), (0.5 * math.log(2), -0.5 * math.log(2), 1e-4, -1e-4,
                                        88.72283935546875, -17.0)),
    Case("erf", 1, ((-5.0, 5.0),), (0.5, 0.84375, 1.25, 2.0, 3.832506856900711, 4.0, 6.0)),
    Case("rsqrt", 1, ((0.0, 1e4),), (1.0, 4.0, 0.25, 2.0)),
    Case("atan2", 2, ((-10.0, 10.0), (-10.0, 10.0)), (1.0, -1.0, 2.0, 0.5)),
    Case("erf_inv", 1, ((-1.0, 1.0),), (-1.0, 1.0, 0.5, -0.5, 0.99, 0.999, 0.9999, 1e-4)),
    Case("pow", 2, ((0.0, 10.0), (-10.0, 10.0)), (1.0, -1.0, 2.0, 0.5, 3.0, -2.0, 1e10)),
    Case("sqrt", 1, ((0.0, 1e4),), (1.0, 4.0, 0.25, 2.0)),
]}


def host_features() -> str:
    """The CPU flags that decide which instructions XLA's CPU code uses (from /proc/cpuinfo)."""
    flags: set[str] = set()
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    wanted = ("avx", "avx2", "fma", "avx512f", "avx512dq", "avx512vl", "avx512bw")
    return " ".join(f for f in wanted if f in flags)


def _finfo(dtype: str) -> np.finfo:
    return np.finfo(np.dtype(dtype))


def _uint(dtype: str) -> type:
    return np.uint32 if np.dtype(dtype).itemsize == 4 else np.uint64


def _neighbours(values: np.ndarray) -> np.ndarray:
    """Each value and the floats one ULP below and above it."""
    with np.errstate(over="ignore"):
        below = np.nextafter(values, -np.inf)
        above = np.nextafter(values, np.inf)
    return np.concatenate([below, values, above])


def _specials(case: Case, dtype: str) -> np.ndarray:
    info = _finfo(dtype)
    common = [0.0, np.inf, np.nan, float(info.smallest_subnormal), float(info.tiny),
              float(info.tiny) - float(info.smallest_subnormal), float(info.max), 1.0]
    with np.errstate(over="ignore"):
        points = np.array(common + list(case.boundaries), dtype=dtype)
    finite = points[np.isfinite(points) & (points != 0)]
    both = np.concatenate([_neighbours(finite), points[~np.isfinite(points) | (points == 0)]])
    both = np.concatenate([both, -both])
    # One copy of each value, in a fixed order (by bit pattern); NaN once.
    bits = np.unique(both.view(_uint(dtype)))
    values = bits.view(dtype)
    return np.concatenate([values[~np.isnan(values)], np.array([np.nan], dtype=dtype)])


def _bit_sweep(dtype: str, n: int) -> np.ndarray:
    top = int(np.array(_finfo(dtype).max, dtype=dtype).view(_uint(dtype)))
    # Integer arithmetic (Python ints): linspace in float64 cannot hold 64-bit patterns exactly.
    half = n // 2
    positive = np.array([top * i // (half - 1) for i in range(half)], dtype=_uint(dtype))
    values = positive.view(dtype)
    return np.concatenate([values, -values[1::2], values[::2][: half - half // 2]])[:n]


def _value_sweep(lo: float, hi: float, dtype: str, n: int) -> np.ndarray:
    return np.linspace(lo, hi, n, dtype=np.float64).astype(dtype)


def _shuffle(values: np.ndarray) -> np.ndarray:
    # A fixed permutation without a random generator (whose streams may change with NumPy).
    n = len(values)
    step = next(s for s in range(n // 2 + 1, n) if math.gcd(s, n) == 1)
    return values[(np.arange(n, dtype=np.int64) * step) % n]


def dense_samples(case: Case, dtype: str, n: int) -> tuple[np.ndarray, ...]:
    """`n` points per argument: half a bit sweep, half a value sweep of its domain."""
    args = []
    for k, (lo, hi) in enumerate(case.domain):
        column = np.concatenate([_bit_sweep(dtype, n // 2), _value_sweep(lo, hi, dtype, n - n // 2)])
        args.append(_shuffle(column) if k % 2 else column)
    return tuple(args)


def special_count(case: Case, dtype: str) -> int:
    """How many of `samples(case, dtype)`'s leading points are special values."""
    specials = _specials(case, dtype)
    return len(specials) ** case.arity


def samples(case: Case, dtype: str) -> tuple[np.ndarray, ...]:
    """The inputs of one case: its special values (for binary functions, their full grid) first,
    then the dense samples."""
    specials = _specials(case, dtype)
    if case.arity == 1:
        special_args: Sequence[np.ndarray] = (specials,)
    else:
        grid = np.meshgrid(specials, specials, indexing="ij")
        special_args = tuple(g.ravel() for g in grid)
    dense = dense_samples(case, dtype, POINTS[dtype])
    return tuple(np.concatenate([s, d]) for s, d in zip(special_args, dense, strict=True))
