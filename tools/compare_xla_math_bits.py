"""Measures the share of justjax's elementwise results (under jit) that are XLA CPU's exact bits.

    cd /tmp && /work/jaxvenv/bin/python /work/main/tools/record_xla_math_bits.py --wide /tmp/xla_wide.npz
    .venv/bin/python tools/compare_xla_math_bits.py /tmp/xla_wide.npz [--only exp,log] [--dtype float32]

prints, per function and dtype, the share identical (NaN equal to NaN), split into the inputs
inside the function's domain (first half of the recorded points) and the bit-uniform ones, and
the first few differing inputs.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

import justjax
from justjax import lax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from xla_math_samples import CASES, DTYPES  # noqa: E402


def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    unsigned = np.uint32 if got.dtype.itemsize == 4 else np.uint64
    return (got.view(unsigned) == want.view(unsigned)) | (np.isnan(got) & np.isnan(want))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--dtype", default=",".join(DTYPES))
    args = parser.parse_args()
    data = np.load(args.path)
    justjax.config.update("jax_enable_x64", True)
    for name in args.only.split(","):
        for dtype in args.dtype.split(","):
            key = f"{name}.{dtype}"
            inputs = [data[f"{key}.arg{k}"] for k in range(CASES[name].arity)]
            want = data[key]
            got = np.asarray(justjax.jit(getattr(lax, name))(*inputs))
            same = same_bits(got, want)
            bad = np.flatnonzero(~same)[:4]
            examples = ", ".join(f"{tuple(float(a[i]) for a in inputs)}: {float(got[i])!r} "
                                 f"vs {float(want[i])!r}" for i in bad)
            print(f"{key:18s} {same.mean():9.4%} identical  {examples}")


if __name__ == "__main__":
    main()
