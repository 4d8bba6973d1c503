"""Measures the LLVM math library (justjax._src.backends.llvm.mathlib) and prints a Markdown table.

For each function and dtype: the swept domain, the number of points (evenly spaced plus evenly spaced in
bit pattern, so subnormals and edge regions are covered), the maximum and mean error in ULPs.
The table goes into docs/mathlib.md.

Usage: .venv/bin/python tools/mathlib_accuracy.py [--log2-points 17] [names...]
"""
from __future__ import annotations

import argparse

from justjax._src.backends.llvm import accuracy, mathlib


def _fmt_domain(domain: tuple[float, float]) -> str:
    return f"[{domain[0]:g}, {domain[1]:g}]"


def main() -> None:
    """Prints the accuracy table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log2-points", type=int, default=17, help="log2 of points per half sweep")
    parser.add_argument("names", nargs="*", help="functions (default: all)")
    args = parser.parse_args()
    names = args.names or mathlib.names()
    print("| function | dtype | domain | points | max ULP | mean ULP | worst at |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        for dtype in ("f32", "f64"):
            row = accuracy.measure(name, dtype, 1 << args.log2_points)
            at = ", ".join(f"{v:.6g}" for v in row.worst_x)
            print(f"| {name} | {dtype} | {_fmt_domain(row.domain)} | {row.points} | {row.max_ulp:.3f} | "
                  f"{row.mean_ulp:.3f} | {at} |")


if __name__ == "__main__":
    main()
