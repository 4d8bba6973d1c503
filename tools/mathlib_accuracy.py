"""Measures the LLVM math library (justjax._src.backends.llvm.mathlib) and prints Markdown tables.

Accuracy (default): for each function and dtype, the swept domain, the number of points (evenly
spaced plus evenly spaced in bit pattern, so subnormals and edge regions are covered), the maximum
and mean error in ULPs.
Speed (`--speed`): for each function, the time of its elementwise loop (`harness.compile_elementwise`)
over 1,000,000 float32 (and float64) elements on this process's cores (run it under `taskset -c 0`
for one core), minimum of `--repeat` runs, beside NumPy's or SciPy's function on the same inputs
and output buffer, and the SIMD widths of the loop's vector code.
The tables go into docs/mathlib.md.

Usage: .venv/bin/python tools/mathlib_accuracy.py [--log2-points 17] [--speed] [--repeat 60] [names...]
"""
from __future__ import annotations

import argparse
import ctypes
import re
import time
from typing import Callable

import numpy as np
import scipy.special

from justjax._src.backends.llvm.mathlib import accuracy, harness, scalar

_NUMPY: dict[str, Callable[..., np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "logistic": scipy.special.expit,
    "erf": scipy.special.erf, "erf_inv": scipy.special.erfinv, "atan": np.arctan, "atan2": np.arctan2,
    "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh, "cbrt": np.cbrt,
    "pow": np.power, "lgamma": scipy.special.gammaln, "digamma": scipy.special.psi,
    "rsqrt": lambda x, out=None: np.divide(1, np.sqrt(x), out=out),
}


def _fmt_domain(domain: tuple[float, float]) -> str:
    return f"[{domain[0]:g}, {domain[1]:g}]"


def speed_inputs(name: str, dtype: str, n: int) -> list[np.ndarray]:
    """Typical arguments of `name`: normal(0, 3) (sin/cos/tan: normal(0, 10)), |normal| * 10 for the
    logarithms, uniform(-0.999, 0.999) for erf_inv and uniform(-1, 1) for asin/acos."""
    rng = np.random.default_rng(0)
    if name in ("log", "log1p", "log2", "lgamma", "digamma", "cbrt", "rsqrt"):
        x = np.abs(rng.standard_normal(n)) * 10 + 1e-3
    elif name in ("erf_inv", "asin", "acos"):
        x = rng.uniform(-0.999, 0.999, n)
    elif name in ("sin", "cos", "tan"):
        x = rng.standard_normal(n) * 10
    else:
        x = rng.standard_normal(n) * 3
    args = [x]
    if name == "pow":
        args = [np.abs(x) + 0.1, rng.uniform(-4, 4, n)]
    elif name == "atan2":
        args.append(rng.standard_normal(n))
    dt = np.float32 if dtype == "f32" else np.float64
    return [a.astype(dt) for a in args]


def _best_ms(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def speed_row(name: str, dtype: str, n: int, repeat: int) -> tuple[float, float, list[int]]:
    """(loop ms, NumPy ms, SIMD widths of the loop) for `name` over n elements of `dtype`."""
    kernel = harness.compile_elementwise(name, dtype)
    args = speed_inputs(name, dtype, n)
    out = np.empty_like(args[0])
    ptrs = [a.ctypes.data_as(ctypes.c_void_p) for a in args + [out]]
    ours = _best_ms(lambda: kernel._cfunc(*ptrs, ctypes.c_int64(n)), repeat)
    with np.errstate(all="ignore"):
        theirs = _best_ms(lambda: _NUMPY[name](*args, out=out), repeat)
    loop = kernel.optimized_ir[kernel.optimized_ir.index("define void @loop"):]
    loop = loop[:loop.index("\n}")]
    widths = sorted({int(w) for w, _ in re.findall(r"<(\d+) x (float|double)>", loop)})
    return ours, theirs, widths


def main() -> None:
    """Prints the accuracy (or speed) table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log2-points", type=int, default=17, help="log2 of points per half sweep")
    parser.add_argument("--speed", action="store_true", help="time the loops instead")
    parser.add_argument("--repeat", type=int, default=60, help="runs per speed measurement")
    parser.add_argument("--dtypes", default="f32,f64", help="comma-separated dtypes")
    parser.add_argument("names", nargs="*", help="functions (default: all)")
    args = parser.parse_args()
    names = args.names or scalar.names()
    dtypes = args.dtypes.split(",")
    if args.speed:
        print("| function | dtype | justjax ms | NumPy/SciPy ms | ratio | SIMD widths |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name in names:
            for dtype in dtypes:
                ours, theirs, widths = speed_row(name, dtype, 1_000_000, args.repeat)
                print(f"| {name} | {dtype} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} | "
                      f"{', '.join(map(str, widths))} |")
        return
    print("| function | dtype | domain | points | max ULP | mean ULP | worst at |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        for dtype in dtypes:
            row = accuracy.measure(name, dtype, 1 << args.log2_points)
            at = ", ".join(f"{v:.6g}" for v in row.worst_x)
            print(f"| {name} | {dtype} | {_fmt_domain(row.domain)} | {row.points} | {row.max_ulp:.3f} | "
                  f"{row.mean_ulp:.3f} | {at} |")


if __name__ == "__main__":
    main()
