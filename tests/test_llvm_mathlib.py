"""Tests of the LLVM vector math library: ULP error bounds over dense sweeps, special values, no libm calls."""
from __future__ import annotations

import re

import numpy as np
import pytest

from justjax._src.backends.llvm import accuracy, jit, mathlib

# Max error bounds in ULPs (measured figures in docs/mathlib.md, bounds leave a little room).
BOUNDS: dict[str, dict[str, float]] = {
    "exp": {"f32": 1.0, "f64": 1.0},
    "exp2": {"f32": 1.0, "f64": 1.0},
    "expm1": {"f32": 1.5, "f64": 1.5},
    "log": {"f32": 1.0, "f64": 1.0},
    "log1p": {"f32": 1.0, "f64": 1.0},
    "log2": {"f32": 1.5, "f64": 1.5},
    "sin": {"f32": 0.51, "f64": 2.5},
    "cos": {"f32": 0.51, "f64": 2.5},
    "tanh": {"f32": 2.5, "f64": 2.5},
    "logistic": {"f32": 2.5, "f64": 2.5},
    "tan": {"f32": 0.51, "f64": 4.0},
    "erf": {"f32": 0.51, "f64": 2.0},
    "erf_inv": {"f32": 0.51, "f64": 2.5},
    "atan": {"f32": 0.51, "f64": 1.5},
    "atan2": {"f32": 0.51, "f64": 2.0},
    "asin": {"f32": 0.51, "f64": 3.0},
    "acos": {"f32": 0.51, "f64": 2.5},
    "sinh": {"f32": 0.51, "f64": 2.5},
    "cosh": {"f32": 0.51, "f64": 1.5},
    "cbrt": {"f32": 0.51, "f64": 1.0},
    "pow": {"f32": 0.51, "f64": 1.5},
    "lgamma": {"f32": 0.51, "f64": 2.5},
    "digamma": {"f32": 0.51, "f64": 2.0},
}

CASES = [(name, dt) for name in BOUNDS for dt in ("f32", "f64")]

_NP = {"f32": np.float32, "f64": np.float64}
_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-30, -1e-30,
             1e-40, -1e-40, 1e30, -1e30, 3.0e38, -3.0e38]


def test_every_function_has_a_bound() -> None:
    assert set(BOUNDS) == set(mathlib.names())


@pytest.mark.parametrize("name,dtype", CASES)
def test_max_ulp_error(name: str, dtype: str) -> None:
    xs = accuracy.sweep(name, dtype, 1 << 15)
    err = accuracy.ulp_errors(name, dtype, xs)
    worst = int(np.argmax(err))
    at = [x[worst] for x in xs]
    assert err[worst] <= BOUNDS[name][dtype], f"{name} {dtype}: {err[worst]} ULP at {at}"


@pytest.mark.parametrize("name,dtype", CASES)
def test_special_values_exact(name: str, dtype: str) -> None:
    dt = _NP[dtype]
    grids = np.meshgrid(*[np.array(_SPECIALS, dt)] * mathlib.arity(name), indexing="ij")
    xs = [g.ravel() for g in grids]
    with np.errstate(all="ignore"):
        y = jit.compile_elementwise(name, dtype)(*xs)
        wide = np.float64 if dtype == "f32" else np.longdouble
        ref = accuracy.REFERENCES[name](*[x.astype(wide) for x in xs]).astype(dt)
    # Specials: any non-finite or zero reference must match exactly, sign of zero included.
    exact = ~np.isfinite(ref) | (ref == 0)
    np.testing.assert_array_equal(y[exact], ref[exact])
    zeros = ref == 0
    assert np.array_equal(np.signbit(y[zeros]), np.signbit(ref[zeros]))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_subnormal_results_not_flushed(dtype: str) -> None:
    dt = _NP[dtype]
    tiny = np.finfo(dt).smallest_subnormal
    x = np.array([np.log(float(tiny)) + 1.0], dt)
    y = jit.compile_elementwise("exp", dtype)(x)
    assert 0 < y[0] < np.finfo(dt).tiny
    z = jit.compile_elementwise("log", dtype)(np.array([tiny], dt))
    np.testing.assert_allclose(z, np.log(np.array([tiny], np.float64)).astype(dt), rtol=1e-6)


# Intrinsics that lower to instructions (llvm.sin, llvm.exp, llvm.pow ... would become libm calls).
_INLINE_INTRINSICS = {"llvm.fma", "llvm.fmuladd", "llvm.rint", "llvm.floor", "llvm.fabs", "llvm.copysign",
                      "llvm.sqrt", "llvm.is.fpclass", "llvm.masked.gather", "llvm.umin", "llvm.umax",
                      "llvm.smin", "llvm.smax"}


@pytest.mark.parametrize("name,dtype", CASES)
def test_no_libm_calls_and_vectorized(name: str, dtype: str) -> None:
    kernel = jit.compile_elementwise(name, dtype)
    callees = set(re.findall(r"\bcall\b[^@]*@([\w.$]+)", kernel.optimized_ir))
    bases = {re.sub(r"\.(v\d+)?[fi]\d+.*$", "", c) for c in callees}
    assert bases <= _INLINE_INTRINSICS, bases
    # Nor any call in the machine code (x86 call/callq, AArch64 bl).
    assert not re.search(r"^\s*(callq?|bl)\s", kernel.assembly, re.M)
    # The loop vectorizer turned the scalar loop into SIMD code.
    assert re.search(r"<\d+ x (float|double)>", kernel.optimized_ir)
