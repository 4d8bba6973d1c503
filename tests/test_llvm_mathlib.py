"""Tests of the LLVM vector math library: ULP error bounds over dense sweeps, special values, no libm
calls, vectorized loops, the rare paths (vectors mixing common and rare arguments) and both ways of
scaling by 2**k."""
from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

from justjax._src.backends.llvm.mathlib import accuracy, coeffs, fitting, harness, rare, rsqrt, scalar
from justjax._src.backends.llvm.runtime import host
from justjax._src.numerics import polynomials

# Max error bounds in ULPs (measured figures in docs/mathlib.md, bounds leave a little room).
# exp, expm1, log, log1p, tanh, logistic and rsqrt are XLA CPU's forms (explog.py, rsqrt.py), bit
# for bit, with XLA's errors: exp's near overflow (k clamped at 127), float64 log1p's near -0.41
# (Cephes' rational beyond the sqrt(1/2) - 1 it was made for).
BOUNDS: dict[str, dict[str, float]] = {
    "exp": {"f32": 5.5, "f64": 2.0},
    "exp2": {"f32": 1.0, "f64": 1.0},
    "expm1": {"f32": 5.5, "f64": 4.0},
    "log": {"f32": 1.5, "f64": 1.0},
    "log1p": {"f32": 2.5, "f64": 110.0},
    "log2": {"f32": 1.5, "f64": 1.5},
    # float32 sin/cos are glibc's sinf/cosf (what XLA CPU calls): 0.5607 ULP at most.
    "sin": {"f32": 0.57, "f64": 2.5},
    "cos": {"f32": 0.57, "f64": 2.5},
    "tanh": {"f32": 4.5, "f64": 7.0},
    "logistic": {"f32": 2.5, "f64": 2.5},
    "rsqrt": {"f32": 1.5, "f64": 1.5},
    "tan": {"f32": 0.51, "f64": 4.0},
    # float32: XLA's rational form, 5.15 ULP next to where it switches to +-1 (|x| = 3.83).
    "erf": {"f32": 5.5, "f64": 2.0},
    # XLA's algorithm (as the reference backend): w = -log1p(-x^2) loses x's low bits near +-1.
    "erf_inv": {"f32": 64.0, "f64": 70.0},
    "atan": {"f32": 0.51, "f64": 1.5},
    # float32: glibc's atan2f (fdlibm's float code, what XLA CPU calls), 1.43 ULP measured.
    "atan2": {"f32": 1.5, "f64": 2.0},
    "asin": {"f32": 0.51, "f64": 3.0},
    "acos": {"f32": 0.51, "f64": 2.5},
    "sinh": {"f32": 0.51, "f64": 2.5},
    "cosh": {"f32": 0.51, "f64": 1.5},
    "cbrt": {"f32": 0.51, "f64": 1.0},
    # float32: glibc's powf (what XLA CPU calls), documented at 0.82 ULP.
    "pow": {"f32": 0.82, "f64": 1.5},
    "lgamma": {"f32": 0.51, "f64": 2.5},
    "digamma": {"f32": 0.51, "f64": 2.0},
}

CASES = [(name, dt) for name in BOUNDS for dt in ("f32", "f64")]

# Functions with a rare path (mathlib/rare.py), per dtype, and where it starts (|x| >= bound).
RARE = {("sin", "f32"): 120.0, ("cos", "f32"): 120.0, ("tan", "f32"): 2.0**50,
        ("sin", "f64"): 2.0**50, ("cos", "f64"): 2.0**50, ("tan", "f64"): 2.0**50}

_NP = {"f32": np.float32, "f64": np.float64}
_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-30, -1e-30,
             1e-40, -1e-40, 1e30, -1e30, 3.0e38, -3.0e38]


def test_every_function_has_a_bound() -> None:
    assert set(BOUNDS) == set(scalar.names())


@pytest.mark.parametrize("name,dtype", CASES)
def test_max_ulp_error(name: str, dtype: str) -> None:
    xs = accuracy.sweep(name, dtype, 1 << 15)
    err = accuracy.ulp_errors(name, dtype, xs)
    worst = int(np.argmax(err))
    at = [x[worst] for x in xs]
    assert err[worst] <= BOUNDS[name][dtype], f"{name} {dtype}: {err[worst]} ULP at {at}"


def _check_specials(kernel: harness.CompiledMath, name: str, dtype: str) -> None:
    dt = _NP[dtype]
    grids = np.meshgrid(*[np.array(_SPECIALS, dt)] * scalar.arity(name), indexing="ij")
    xs = [g.ravel() for g in grids]
    with np.errstate(all="ignore"):
        y = kernel(*xs)
        wide = np.float64 if dtype == "f32" else np.longdouble
        ref = accuracy.REFERENCES[name](*[x.astype(wide) for x in xs]).astype(dt)
    # Specials: any non-finite or zero reference must match exactly, sign of zero included.
    exact = ~np.isfinite(ref) | (ref == 0)
    np.testing.assert_array_equal(y[exact], ref[exact])
    zeros = ref == 0
    assert np.array_equal(np.signbit(y[zeros]), np.signbit(ref[zeros]))


@pytest.mark.parametrize("name,dtype", CASES)
def test_special_values_exact(name: str, dtype: str) -> None:
    _check_specials(harness.compile_elementwise(name, dtype), name, dtype)


def test_underflow_is_xlas() -> None:
    # XLA's float32 exp: 0 once 2^k is clamped at 2^-127 (from x = -87.8 down), a subnormal
    # product just above (which the runtime's flush-to-zero, not the math, turns into 0).
    exp32 = harness.compile_elementwise("exp", "f32")
    y = exp32(np.array([-87.5, -87.9, -104.0], np.float32))
    assert 0 < y[0] < np.finfo(np.float32).tiny and y[1] == 0 and y[2] == 0
    # float64: 0 below exp's normal range.
    assert harness.compile_elementwise("exp", "f64")(np.array([-708.5]))[0] == 0


def test_log64_of_subnormals() -> None:
    # float64 log is not XLA's (libm's there): accurate down to the smallest subnormal.
    tiny = np.array([5e-324, 1e-310])
    np.testing.assert_allclose(harness.compile_elementwise("log", "f64")(tiny), np.log(tiny), rtol=1e-15)


# Intrinsics that lower to instructions (llvm.sin, llvm.exp, llvm.pow ... would become libm calls;
# llvm.ldexp is emitted only on AVX-512 hosts, where it is vscalef; the x86 estimates only by rsqrt).
_INLINE_INTRINSICS = {"llvm.fma", "llvm.fmuladd", "llvm.rint", "llvm.floor", "llvm.fabs", "llvm.copysign",
                      "llvm.sqrt", "llvm.is.fpclass", "llvm.masked.gather", "llvm.umin", "llvm.umax",
                      "llvm.smin", "llvm.smax", "llvm.ldexp", "llvm.minnum", "llvm.maxnum", "llvm.fshl",
                      # The rare paths' loops (optsize) fold their tails into masked accesses.
                      "llvm.masked.load", "llvm.masked.store",
                      "llvm.x86.sse.rsqrt.ss", "llvm.x86.sse.rsqrt.ps", "llvm.x86.avx.rsqrt.ps.256",
                      *(f"llvm.x86.avx512.rsqrt14.pd.{w}" for w in (128, 256, 512))}


def _vector_callee(name: str, dtype: str) -> str | None:
    """The function whose vector versions a vectorized loop of `name` calls, if any."""
    if (name, dtype) in RARE:
        return f"justjax_{name}_{dtype}_rare"
    if name == "rsqrt" and rsqrt.uses_estimate(dtype):
        return f"justjax_rsqrt_{dtype}_xla"
    return None


def _loop_ir(kernel: harness.CompiledMath) -> str:
    start = kernel.optimized_ir.index("define void @loop")
    return kernel.optimized_ir[start:kernel.optimized_ir.index("\n}", start)]


@pytest.mark.parametrize("name,dtype", CASES)
def test_no_libm_calls_and_vectorized(name: str, dtype: str) -> None:
    kernel = harness.compile_elementwise(name, dtype)
    callees = set(re.findall(r"\bcall\b[^@]*@([\w.$]+)", kernel.optimized_ir))
    rare = {c for c in callees if c.startswith(f"justjax_{name}_{dtype}_")}
    bases = {re.sub(r"\.(v\d+)?[fi]\d+.*$", "", c) for c in callees - rare}
    assert bases <= _INLINE_INTRINSICS, bases
    vector_callee = _vector_callee(name, dtype)
    if vector_callee is not None:
        # The vectorizer called a vector version of the function.
        assert re.search(rf"@{vector_callee}_v\d+\(", _loop_ir(kernel))
    else:
        assert not rare, rare
        # No call at all in the machine code (x86 call/callq, AArch64 bl).
        assert not re.search(r"^\s*(callq?|bl)\s", kernel.assembly, re.M)
    # The loop vectorizer turned the scalar loop into SIMD code.
    assert re.search(r"<\d+ x (float|double)>", _loop_ir(kernel))


def _mixed(name: str, dtype: str, n: int) -> np.ndarray:
    """Common arguments with rare ones (and specials) at random places: runs of both, lone rare lanes."""
    rng = np.random.default_rng(7)
    bound = RARE[(name, dtype)]
    common = rng.uniform(-bound, bound, n)
    rare = rng.uniform(-1, 1, n) * bound * 2.0 ** rng.uniform(0, 60, n)
    pick = rng.uniform(size=n) < 0.05
    pick[100:140] = True  # a run of rare arguments
    pick[300:340] = False
    x = np.where(pick, rare, common).astype(_NP[dtype])
    x[[5, 77, 500]] = [np.nan, np.inf, -np.inf]
    return x


@pytest.mark.parametrize("name,dtype", sorted(RARE))
def test_rare_path_mixed_vectors(name: str, dtype: str) -> None:
    kernel = harness.compile_elementwise(name, dtype)
    x = _mixed(name, dtype, 1000)
    y = kernel(x)
    # Element by element (the scalar loop: branches instead of vector functions) gives the same bits.
    one_by_one = np.array([kernel(x[i:i + 1])[0] for i in range(x.size)])
    np.testing.assert_array_equal(y.view(np.uint8), one_by_one.view(np.uint8))
    err = accuracy.ulp_errors(name, dtype, (x,))
    assert err.max() <= BOUNDS[name][dtype], (err.max(), x[np.argmax(err)])
    assert np.mean(np.abs(x) >= RARE[(name, dtype)]) > 0.05


@pytest.mark.parametrize("name,dtype", sorted(RARE))
def test_rare_path_vector_functions(name: str, dtype: str) -> None:
    kernel = harness.compile_elementwise(name, dtype)
    for n in rare.LANES[dtype]:
        # Each vector version is defined, with its early return when no lane is rare.
        match = re.search(rf"define [^@]*@justjax_{name}_{dtype}_rare_v{n}\(.*?\n}}", kernel.optimized_ir, re.S)
        assert match, n
        assert "ret " in match.group(0) and "br i1" in match.group(0)


def _compile_uncached(name: str, dtype: str) -> tuple[harness.CompiledMath, llvm.ExecutionEngine]:
    """`harness.compile_elementwise` without its cache (the module is built under the current flags)."""
    arity = scalar.arity(name)
    mod = llvm.parse_assembly(str(harness._loop_module(name, dtype, arity)))
    mod.verify()
    host.optimize(mod)
    engine = llvm.create_mcjit_compiler(mod, host.new_target_machine())
    engine.finalize_object()
    proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (arity + 1)), ctypes.c_int64)
    cfunc = proto(engine.get_function_address("loop"))
    return harness.CompiledMath(name, dtype, str(mod), "", engine, cfunc), engine


# float32 pow (glibc's powf) builds its powers of two from table bits, without scaling; exp,
# expm1 and logistic are XLA's forms, which scale by exponent bits.
_SCALED = [(name, dt) for name in ("exp2", "sinh", "cosh", "pow")
           for dt in ("f32", "f64") if (name, dt) != ("pow", "f32")]


@pytest.mark.parametrize("scalef", [False, True])
@pytest.mark.parametrize("name,dtype", _SCALED)
def test_both_ways_of_scaling(name: str, dtype: str, scalef: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if scalef and not scalar._host_has_avx512f():
        pytest.skip("llvm.ldexp is only emitted for AVX-512 hosts")
    monkeypatch.setattr(scalar, "SCALEF", scalef)
    kernel, _ = _compile_uncached(name, dtype)
    assert ("llvm.ldexp" in kernel.optimized_ir) == scalef
    xs = accuracy.sweep(name, dtype, 1 << 12)
    with np.errstate(all="ignore"):
        y = kernel(*xs).astype(np.float64 if dtype == "f32" else np.longdouble)
        ref = accuracy.REFERENCES[name](*[x.astype(y.dtype) for x in xs])
        rounded = ref.astype(_NP[dtype])
        err = np.where(np.isfinite(rounded), np.abs(y - ref) / np.spacing(np.abs(rounded)).astype(y.dtype),
                       np.where((y == rounded) | (np.isnan(y) & np.isnan(rounded)), 0.0, np.inf))
    assert err.max() <= BOUNDS[name][dtype]
    _check_specials(kernel, name, dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_erf_inv_is_xlas(dtype: str) -> None:
    # random.normal is sqrt(2) erf_inv(uniform): erf_inv follows XLA's algorithm, as the reference
    # backend does; only log1p's last bits differ at times.
    dt = _NP[dtype]
    edges = [1, -1, 0, -0.0, 2, np.nan]
    x = np.concatenate([np.random.default_rng(3).uniform(-1, 1, 100_000), edges]).astype(dt)
    y = harness.compile_elementwise("erf_inv", dtype)(x)
    want = polynomials.erf_inv(x)
    same = (y == want) | (np.isnan(y) & np.isnan(want))
    # The reference takes NumPy's log1p, the native backend XLA's (float64: its rational below
    # 0.41, a few ULP off near -0.41), which gives XLA's erf_inv bits (tests/test_mathlib_xla_bits.py).
    assert same.mean() > (0.98 if dtype == "f32" else 0.94)
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(y), finite) and np.array_equal(y[~finite & ~np.isnan(want)],
                                                                     want[~finite & ~np.isnan(want)])
    ulps = np.abs(y[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(want[finite]))
    # float64: XLA's log1p errs by up to 101 ULP near -0.41 (|x| near 0.64 here).
    assert ulps.max() <= (2.0 if dtype == "f32" else 32.0)
    assert np.array_equal(np.signbit(y[x == 0]), np.signbit(x[x == 0]))


@pytest.mark.parametrize("name,dtype", [("exp", "f32"), ("log", "f32"), ("sin", "f32"), ("tanh", "f32"),
                                        ("rsqrt", "f32"), ("rsqrt", "f64")])
def test_scalar_loop_matches_vector_loop(name: str, dtype: str) -> None:
    kernel = harness.compile_elementwise(name, dtype)
    x = accuracy.sweep(name, dtype, 1 << 9)[0]
    y = kernel(x)
    one_by_one = np.array([kernel(x[i:i + 1])[0] for i in range(x.size)])
    np.testing.assert_array_equal(y.view(np.uint8), one_by_one.view(np.uint8))


def test_stored_coefficients_are_the_fits() -> None:
    # mathlib/coeffs.py is generated by tools/mathlib_fit.py: a fresh fit gives the same values
    # (up to float32 rounding decisions that a different BLAS could flip).
    fresh = fitting.generate()
    assert set(fresh) == set(coeffs.COEFFS)
    for name, values in fresh.items():
        np.testing.assert_allclose(values, coeffs.COEFFS[name], rtol=1e-5, atol=1e-12, err_msg=name)


def _host_glibc() -> tuple[int, int] | None:
    """The (major, minor) version of the C library this process runs on, if it is glibc."""
    try:
        version = ctypes.CDLL(None).gnu_get_libc_version
    except (OSError, AttributeError):
        return None
    version.restype = ctypes.c_char_p
    major, minor = version().decode().split(".")[:2]
    return int(major), int(minor)


# float32 functions that follow glibc's (what XLA CPU calls) and the glibc versions with that
# code: sinf/cosf/powf since 2.28 (their FMA builds on hosts with FMA); atan2f until 2.40 (2.41
# made it correctly rounded).
_GLIBC_FORMS = {"sin": ((2, 28), (9, 99)), "cos": ((2, 28), (9, 99)), "pow": ((2, 28), (9, 99)),
                "atan2": ((2, 0), (2, 40))}


@pytest.mark.parametrize("name", sorted(_GLIBC_FORMS))
def test_float32_forms_give_host_glibc_bits(name: str) -> None:
    # A dense check beside the recorded XLA bits: the host's own libm on random normal inputs
    # (subnormals excluded: XLA runs glibc with denormals flushed, this process does not).
    glibc = _host_glibc()
    low, high = _GLIBC_FORMS[name]
    if glibc is None or not low <= glibc <= high or "+fma" not in llvm.get_host_cpu_features().flatten():
        pytest.skip(f"needs glibc {low}..{high} on a host with FMA (this one: {glibc})")
    libm = ctypes.CDLL("libm.so.6")
    fn = getattr(libm, {"pow": "powf", "atan2": "atan2f"}.get(name, name + "f"))
    arity = scalar.arity(name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float] * arity
    rng = np.random.default_rng(11)
    if name == "pow":
        xs = [rng.uniform(0, 8, 20_000), rng.uniform(-30, 30, 20_000)]
    else:
        xs = [rng.uniform(-1, 1, 20_000) * 2.0 ** rng.uniform(-10, 40, 20_000) for _ in range(arity)]
    xs = [x.astype(np.float32) for x in xs]
    y = harness.compile_elementwise(name, "f32")(*xs)
    want = np.array([fn(*[float(x[i]) for x in xs]) for i in range(xs[0].size)], np.float32)
    tiny = np.finfo(np.float32).tiny
    normal = (np.abs(want) >= tiny) | (want == 0) | ~np.isfinite(want)
    same = (y.view(np.uint32) == want.view(np.uint32)) | (np.isnan(y) & np.isnan(want))
    bad = np.flatnonzero(~same & normal)
    assert not bad.size, [(tuple(float(x[i]) for x in xs), float(y[i]), float(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_rsqrt_without_the_estimate(dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hosts without the x86 estimate (XLA's fallback too): 1 / sqrt(x), two roundings.
    monkeypatch.setattr(rsqrt, "ESTIMATE", False)
    kernel, _ = _compile_uncached("rsqrt", dtype)
    assert "llvm.x86" not in kernel.optimized_ir
    x = np.concatenate([accuracy.sweep("rsqrt", dtype, 1 << 10)[0], np.array(_SPECIALS, _NP[dtype])])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(kernel(x), 1 / np.sqrt(x))
