"""Records XLA CPU's elementwise math, bit for bit, from real JAX (issue #24).

Run by hand with real JAX (never from the tests), from a directory that does not shadow modules:

    cd /tmp && /work/jaxvenv/bin/python /work/main/tools/record_xla_math_bits.py
        writes tests/golden/xla_math_bits.npz: for every case of `xla_math_samples.CASES` and
        dtype, the bits of `jax.jit(lax.<name>)` on `xla_math_samples.samples(case, dtype)`
        (key "<name>.<dtype>"), and "host": the CPU features XLA compiled for.

    cd /tmp && /work/jaxvenv/bin/python /work/main/tools/record_xla_math_bits.py --wide PATH [--n N]
        writes PATH (.npz): N (default 10**6) random inputs per case and dtype, half uniform over
        the case's domain and half uniform bit patterns, with XLA's outputs, for
        `tools/compare_xla_math_bits.py` to measure the share of identical results.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

import jax
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from xla_math_samples import CASES, DTYPES, OUT, Case, host_features, samples  # noqa: E402

def xla_outputs(case: Case, args: tuple[np.ndarray, ...]) -> np.ndarray:
    assert jax.__name__ == "jax" and not hasattr(jax, "install_as_jax"), "needs real JAX"
    fn = jax.jit(getattr(lax, case.name))
    out = np.asarray(fn(*args))
    assert out.dtype == args[0].dtype, (case.name, out.dtype)
    return out


def wide_inputs(case: Case, dtype: str, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    unsigned = np.uint32 if dtype == "float32" else np.uint64
    args = []
    for lo, hi in case.domain:
        uniform = rng.uniform(lo, hi, n - n // 2).astype(dtype)
        bits = rng.integers(0, np.iinfo(unsigned).max, n // 2, dtype=unsigned, endpoint=True)
        column = np.concatenate([uniform, bits.view(dtype)])
        args.append(column[rng.permutation(n)])
    return tuple(args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wide", help="write N random inputs per case and XLA's outputs here")
    parser.add_argument("--n", type=int, default=10**6)
    args = parser.parse_args()
    jax.config.update("jax_enable_x64", True)
    record: dict[str, np.ndarray] = {"host": np.array(host_features())}
    for case in CASES.values():
        for dtype in DTYPES:
            inputs = wide_inputs(case, dtype, args.n) if args.wide else samples(case, dtype)
            key = f"{case.name}.{dtype}"
            record[key] = xla_outputs(case, inputs)
            if args.wide:
                for k, column in enumerate(inputs):
                    record[f"{key}.arg{k}"] = column
    path = pathlib.Path(args.wide) if args.wide else OUT
    np.savez_compressed(path, **record)
    print(f"wrote {path} ({path.stat().st_size} bytes), jax {jax.__version__}, host {record['host']}")


if __name__ == "__main__":
    main()
