"""justjax's elementwise math under jit gives XLA CPU's bits (issue #24).

`tests/golden/xla_math_bits.npz` holds what real JAX 0.10.2 computed on CPU
(`tools/record_xla_math_bits.py`) on the inputs of `tools/xla_math_samples.py`: special values
and range-reduction boundaries first, then dense sweeps of each function's domain. Every special
value must give XLA's bits, and at least 99.9% of all points (NaN counts as equal to NaN whatever
its payload, as users see it). float64 is checked for the functions where XLA CPU uses its own
forms rather than calling libm (`F64_CHECKED`).

XLA compiles for the host CPU, and some of its forms use instructions only some CPUs have, so
the recorded bits hold for a host with the recorded CPU features; elsewhere the test skips.
float32 rsqrt depends on the CPU itself: XLA's form is the hardware estimate (whose table is
the CPU maker's own) refined by two Newton steps on the Intel host the bits were recorded on;
on an AMD Zen 4 host with the same features, real JAX 0.10.2's dumped IR refines `rsqrtss`
by one step (its bits there: 100% those of one step, 80.5% those of two), so float32 rsqrt is
checked on Intel hosts only (float64's estimate, `vrsqrt14pd`, is exactly specified).
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import justjax
from justjax import lax

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from xla_math_samples import CASES, OUT, Case, host_features, samples, special_count  # noqa: E402

# The share of points that must give XLA's exact bits (special values: all of them).
REQUIRED_SHARE = 0.999
F32_CHECKED = tuple(CASES)
# float64 functions XLA CPU computes with its own forms (the rest call libm, whose results
# justjax's own forms need not reproduce bit for bit). XLA calls glibc for float64 sin, cos,
# atan2, pow and erf (`sin`, `cos`, `atan2`, `pow`, `erf` in its object code), and glibc's `log`
# for float64 log and for log1p beyond |x| < sqrt(2) - 1. Its float64 erf_inv is its own
# polynomial form, but on log1p: erf_inv joins once log1p gives XLA's bits.
F64_CHECKED: tuple[str, ...] = ("exp", "expm1", "logistic", "tanh", "rsqrt", "sqrt")


@pytest.fixture(scope="module")
def recorded() -> dict[str, np.ndarray]:
    with np.load(OUT) as data:
        recorded = {key: data[key] for key in data.files}
    if str(recorded["host"]) != host_features():
        pytest.skip(f"bits recorded on a CPU with {recorded['host']}; this one has {host_features()}")
    return recorded


def _same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    unsigned = np.uint32 if got.dtype.itemsize == 4 else np.uint64
    equal = got.view(unsigned) == want.view(unsigned)
    return equal | (np.isnan(got) & np.isnan(want))


def _check(case: Case, dtype: str, recorded: dict[str, np.ndarray]) -> None:
    args = samples(case, dtype)
    want = recorded[f"{case.name}.{dtype}"]
    got = np.asarray(justjax.jit(getattr(lax, case.name))(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    same = _same_bits(got, want)
    n_special = special_count(case, dtype)
    bad_special = np.flatnonzero(~same[:n_special])
    described = [(tuple(float(a[i]) for a in args), float(got[i]), float(want[i]))
                 for i in bad_special[:8]]
    assert not len(bad_special), f"{case.name} {dtype}: special values differ from XLA's " \
                                 f"(args, got, XLA): {described}"
    share = same.mean()
    bad = np.flatnonzero(~same)
    described = [(tuple(float(a[i]) for a in args), float(got[i]), float(want[i])) for i in bad[:8]]
    assert share >= REQUIRED_SHARE, f"{case.name} {dtype}: {share:.4%} of points give XLA's bits; " \
                                    f"first differences (args, got, XLA): {described}"


# The maker of the CPU the bits were recorded on, and the functions whose XLA forms depend on
# it beyond the CPU's features.
RECORDED_VENDOR = "GenuineIntel"
VENDOR_DEPENDENT = (("rsqrt", "float32"),)  # vrsqrt14pd (float64) is exactly specified


def _vendor() -> str:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("vendor_id"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def _skip_if_vendor_dependent(name: str, dtype: str) -> None:
    if (name, dtype) in VENDOR_DEPENDENT and _vendor() != RECORDED_VENDOR:
        pytest.skip(f"XLA's {dtype} {name} depends on the CPU maker: recorded on "
                    f"{RECORDED_VENDOR}, this host is {_vendor()}")


@pytest.mark.parametrize("name", F32_CHECKED)
def test_float32_bits_are_xla_bits(name: str, recorded: dict[str, np.ndarray]) -> None:
    _skip_if_vendor_dependent(name, "float32")
    _check(CASES[name], "float32", recorded)


@pytest.mark.parametrize("name", F64_CHECKED)
def test_float64_bits_are_xla_bits(name: str, recorded: dict[str, np.ndarray]) -> None:
    _skip_if_vendor_dependent(name, "float64")
    with justjax.experimental.enable_x64():
        _check(CASES[name], "float64", recorded)
