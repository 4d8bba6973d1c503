"""lax's special functions (`_src/lax/special.py`): igamma, igammac, igamma_grad_a,
random_gamma_grad, betainc (regularized_incomplete_beta), bessel_i0e, bessel_i1e and zeta, and
the jax.scipy.special functions on them.

Values are checked against SciPy over dense grids in float64, float32, float16 and bfloat16
(igamma_grad_a and random_gamma_grad against central differences of SciPy), special values
against the table JAX 0.10.2 gives, jit against eager, derivatives against finite
differences, vmap against a loop. tests/golden/lax_special.txt holds jaxprs and StableHLO texts
JAX 0.10.2 printed (re-recorded by running this file with JAX's Python:
`PYTHONPATH=src:. /work/jaxvenv/bin/python tests/test_lax_special.py`); the `needs_jax` tests
also compare values with real JAX.
"""
from __future__ import annotations

import pathlib
from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp

import justjax as jax
import justjax.numpy as jnp
import justjax.scipy.special as jsp
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import BF16, F16, F32, F64, golden_cases, golden_jaxpr_tests, x64_mode

# a from 1e-3 to 1e3 and x from 0 to 2e3 (geometric), with round values among them.
A_GRID = np.concatenate([np.geomspace(1e-3, 1e3, 41), [0.5, 1, 2, 3, 10, 100]])
X_GRID = np.concatenate([[0.0], np.geomspace(1e-4, 2e3, 51), [0.5, 1, 2, 3, 10, 100]])
DTYPES = [F64, F32, F16, BF16]


def _grid() -> tuple[np.ndarray, np.ndarray]:
    a, x = np.meshgrid(A_GRID, X_GRID, indexing="ij")
    return a.ravel(), x.ravel()


def _eps(dtype: np.dtype) -> float:
    return float(ml_dtypes.finfo(dtype).eps)


def _run(fun: Callable[..., Any], dtype: np.dtype, *args: np.ndarray) -> np.ndarray:
    """`fun` on `args` cast to `dtype` (x64 on for float64), as float64."""
    with x64_mode(dtype == F64):
        out = fun(*[np.asarray(a).astype(dtype) for a in args])
        assert out.dtype == dtype
        return np.asarray(out).astype(np.float64)


def _cast(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Grid values as `dtype` represents them, in float64 (the reference's inputs)."""
    return np.asarray(values).astype(dtype).astype(np.float64)


def _log_prefactor_scale(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """1 + |a log x| + x + |log Gamma(a)|: the size of the terms of log(x^a e^-x / Gamma(a)),
    whose rounding is the relative error of the prefactor both expansions share."""
    with np.errstate(all="ignore"):
        a_log_x = np.where(x > 0, a * np.log(x), 0.0)
    return 1 + np.abs(a_log_x) + x + np.abs(sp.gammaln(a))


def _work_eps(dtype: np.dtype) -> float:
    """The epsilon of the precision the algorithms run in (16-bit floats run in float32)."""
    return _eps(F64 if dtype == F64 else F32)


def _rounding(want: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """What rounding the result to `dtype` adds: a 16-bit ulp, and the smallest normal."""
    low = _eps(dtype) * np.abs(want) if dtype in (F16, BF16) else 0.0
    return low + float(ml_dtypes.finfo(dtype).tiny)


def _value_bound(a: np.ndarray, x: np.ndarray, want: np.ndarray, dtype: np.dtype
                 ) -> np.ndarray:
    """The error allowed for P or Q: a few ulps of the prefactor's error on the smaller of
    P and Q (the other is 1 minus it), plus the final rounding."""
    k = 48 if dtype == F64 else 8
    smaller = np.minimum(np.abs(want), np.abs(1 - want))
    scale = 1 + _log_prefactor_scale(a, x) * smaller
    return k * _work_eps(dtype) * scale + _rounding(want, dtype)


def _derivative_bound(a: np.ndarray, x: np.ndarray, want: np.ndarray, dtype: np.dtype
                      ) -> np.ndarray:
    """The error allowed for dP/da and the sample derivative: as `_value_bound`, relative to
    the derivative, plus the central differences' own error."""
    scale = (1 + _log_prefactor_scale(a, x)) * (np.abs(want) + 1e-3)
    finite_differences = 1e-7 * np.abs(want) + 1e-10
    return 8 * _work_eps(dtype) * scale + finite_differences + _rounding(want, dtype)


def _assert_within(got: np.ndarray, want: np.ndarray, bound: np.ndarray, context: str) -> None:
    """NaN where `want` is NaN, elsewhere within `bound` of it."""
    assert np.array_equal(np.isnan(got), np.isnan(want)), context
    finite = ~np.isnan(want)
    err = np.abs(got[finite] - want[finite])
    bound = np.broadcast_to(bound, got.shape)[finite]
    worst = int(np.argmax(err - bound))
    assert np.all(err <= bound), (f"{context}: error {err[worst]:.3g} > {bound[worst]:.3g} "
                                  f"(got {got[finite][worst]}, want {want[finite][worst]})")


# ---------------------------------------------------------------------------------------------
# Values against SciPy.

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_values_against_scipy(name: str, dtype: np.dtype) -> None:
    a, x = _grid()
    got = _run(getattr(lax, name), dtype, a, x)
    reference = {"igamma": sp.gammainc, "igammac": sp.gammaincc}[name]
    a, x = _cast(a, dtype), _cast(x, dtype)
    want = reference(a, x)
    _assert_within(got, want, _value_bound(a, x, want, dtype), f"{name} {dtype.name}")


def _dp_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dP(a, x)/da by central differences of SciPy (of Q where P is close to 1); accurate to
    about 1e-8 relative."""
    h = 1e-6 * np.maximum(a, 1e-3)
    lower = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
    upper = -(sp.gammaincc(a + h, x) - sp.gammaincc(a - h, x)) / (2 * h)
    return np.where(x > a, upper, lower)


def _dp_dx(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_igamma_grad_a_against_finite_differences(dtype: np.dtype) -> None:
    a, x = _grid()
    got = _run(lax.igamma_grad_a, dtype, a, x)
    a, x = _cast(a, dtype), _cast(x, dtype)
    want = np.where(x == 0, 0.0, _dp_da(a, x))
    _assert_within(got, want, _derivative_bound(a, x, want, dtype),
                   f"igamma_grad_a {dtype.name}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_random_gamma_grad_against_implicit_derivative(dtype: np.dtype) -> None:
    """dx/da = -(dP/da) / (dP/dx) where a Gamma(a, 1) sample can fall (P and Q above
    1e-5); beyond, both the reference and the algorithm's underflow guard break down."""
    a, x = _grid()
    got = _run(lax.random_gamma_grad, dtype, a, x)
    a, x = _cast(a, dtype), _cast(x, dtype)
    plausible = (x > 0) & (sp.gammainc(a, x) > 1e-5) & (sp.gammaincc(a, x) > 1e-5)
    with np.errstate(all="ignore"):
        want = -_dp_da(a, x) / _dp_dx(a, x)
    bound = _derivative_bound(a, x, want, dtype)
    _assert_within(got[plausible], want[plausible], bound[plausible],
                   f"random_gamma_grad {dtype.name}")
    assert np.all(got[x == 0] == 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_betainc_against_scipy(dtype: np.dtype) -> None:
    shapes = np.concatenate([np.geomspace(1e-2, 1e3, 16), [0.5, 1, 2, 3]])
    xs = np.concatenate([[0.0, 1.0, 1e-4, 1 - 1e-4], np.linspace(0.01, 0.99, 25)])
    a, b, x = (m.ravel() for m in np.meshgrid(shapes, shapes, xs, indexing="ij"))
    got = _run(lax.betainc, dtype, a, b, x)
    a, b, x = _cast(a, dtype), _cast(b, dtype), _cast(x, dtype)
    want = sp.betainc(a, b, x)
    # Cancellation in log Beta(a, b) limits the continued fraction's prefactor, as for P.
    with np.errstate(all="ignore"):
        scale = (1 + np.abs(sp.gammaln(a)) + np.abs(sp.gammaln(b)) + np.abs(sp.gammaln(a + b))
                 + np.abs(a * np.log(x)) + np.abs(b * np.log1p(-x)))
    scale = np.where(np.isfinite(scale), scale, 1.0)
    # Either I or 1 - I comes out of the prefactor, so its error reaches both; the continued
    # fraction's own rounding adds a few dozen ulps where it converges slowly (small b).
    bound = 32 * _work_eps(dtype) * (1 + scale)
    _assert_within(got, want, bound + _rounding(want, dtype), f"betainc {dtype.name}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["bessel_i0e", "bessel_i1e"])
def test_bessel_against_scipy(name: str, dtype: np.dtype) -> None:
    x = np.concatenate([np.linspace(-50, 50, 401), np.geomspace(1e-6, 1e4, 200), [0, 8, -8]])
    got = _run(getattr(lax, name), dtype, x)
    want = {"bessel_i0e": sp.i0e, "bessel_i1e": sp.i1e}[name](_cast(x, dtype))
    # SciPy's float64 i1e is itself about 12 ulp from the true value in places.
    ulps = 16 if name == "bessel_i1e" and dtype == np.float64 else 4
    bound = ulps * _work_eps(dtype) * np.abs(want) + _rounding(want, dtype)
    _assert_within(got, want, bound, f"{name} {dtype.name}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_zeta_against_scipy(dtype: np.dtype) -> None:
    # Positive q: for negative q the terms (q + k)^-x of both signs cancel catastrophically
    # (XLA's results are as inexact), so those are left to the special-value checks.
    xs, qs = np.linspace(1.01, 30, 50), np.linspace(0.05, 40, 50)
    x, q = (m.ravel() for m in np.meshgrid(xs, qs, indexing="ij"))
    got = _run(lax.zeta, dtype, x, q)
    want = sp.zeta(_cast(x, dtype), _cast(q, dtype))
    in_range = np.abs(want) < float(ml_dtypes.finfo(dtype).max)
    # Native code flushes subnormal terms to zero, as XLA CPU does: each of the ten direct
    # terms may drop up to the smallest normal float32.
    flushed = 16 * float(np.finfo(np.float32).tiny)
    bound = 64 * _work_eps(dtype) * np.abs(want) + _rounding(want, dtype) + flushed
    _assert_within(got[in_range], want[in_range], bound[in_range], f"zeta {dtype.name}")


# ---------------------------------------------------------------------------------------------
# Special values, as JAX 0.10.2 gives them (float32).

SPECIAL = np.array([0.0, -0.0, 0.5, 1.0, 3.0, -1.0, np.inf, -np.inf, np.nan], np.float32)
# For each function, its value at (a, x) for a, x in SPECIAL, where it is not a finite value
# of the smooth function (n: NaN, 0 and 1: exact); '.' marks an ordinary value.
SPECIAL_TABLES = {
    "igamma": ["nnn11n1nn", "nnn11n1nn", "00...n1nn", "00...n1nn", "00...n1nn", "nnnnnnnnn",
               "000nnn1nn", "nnnnnnnnn", "nnnnnnnnn"],
    "igammac": ["nn000n0nn", "nn000n0nn", "11...n0nn", "11...n0nn", "11...n0nn", "nnnnnnnnn",
                "111nnn0nn", "nnnnnnnnn", "nnnnnnnnn"],
    "igamma_grad_a": ["nnnnnnnnn", "nnnnnnnnn", "00...nnnn", "00...nnnn", "00...nnnn",
                      "nnnnnnnnn", "00nnnnnnn", "nnnnnnnnn", "nnnnnnnnn"],
    "random_gamma_grad": ["nnnnnnnnn", "nnnnnnnnn", "00...nnnn", "00...nnnn", "00...nnnn",
                          "nnnnnnnnn", "00nnnnnnn", "nnnnnnnnn", "nnnnnnnnn"],
}


@pytest.mark.parametrize("name", sorted(SPECIAL_TABLES))
def test_special_values(name: str) -> None:
    a, x = np.meshgrid(SPECIAL, SPECIAL, indexing="ij")
    got = np.asarray(getattr(lax, name)(a, x))
    table = np.array([list(row) for row in SPECIAL_TABLES[name]])
    assert np.array_equal(np.isnan(got), table == "n")
    assert np.all(got[table == "0"] == 0) and np.all(got[table == "1"] == 1)
    assert np.all(np.isfinite(got[table == "."]))


def test_betainc_special_values() -> None:
    a = np.array([0.0, 0.0, 2.0, 2.0, np.inf, 1.0, -1.0, 1.0, 1.0, np.nan, 0.0], np.float32)
    b = np.array([2.0, 2.0, 0.0, 0.0, 2.0, np.inf, 1.0, 1.0, 1.0, 1.0, 0.0], np.float32)
    x = np.array([0.0, 0.3, 0.3, 1.0, 0.3, 0.3, 0.3, -0.5, 1.5, 0.3, 0.3], np.float32)
    want = np.array([0, 1, 0, 1, 0, 1, np.nan, np.nan, np.nan, np.nan, np.nan], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.betainc(a, b, x)), want)


def test_bessel_special_values() -> None:
    i0e = np.asarray(lax.bessel_i0e(SPECIAL))
    i1e = np.asarray(lax.bessel_i1e(SPECIAL))
    np.testing.assert_array_equal(i0e[[6, 7]], [0, 0])
    np.testing.assert_array_equal(i1e[[0, 1, 6, 7]], [0, 0, 0, 0])
    assert np.signbit(i1e[[1, 7]]).all() and np.isnan(i0e[8]) and np.isnan(i1e[8])


def test_zeta_special_values() -> None:
    x = np.array([1.0, 1.0, 0.5, 1.5, 2.0, 3.0, 2.0, np.inf, 2.0], np.float32)
    q = np.array([1.0, -3.0, 1.0, -1.0, -2.0, -2.0, -2.5, 1.0, np.inf], np.float32)
    want = np.array([np.inf, np.inf, np.nan, np.nan, np.inf, np.nan, 0, np.nan, np.nan])
    got = np.asarray(lax.zeta(x, q))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[[0, 1, 4]], [np.inf] * 3)
    np.testing.assert_allclose(got[6], sp.zeta(2.0, -2.5), rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# jit against eager, shapes and dtypes.

FUNCTIONS = {
    "igamma": lax.igamma, "igammac": lax.igammac, "igamma_grad_a": lax.igamma_grad_a,
    "random_gamma_grad": lax.random_gamma_grad, "zeta": lax.zeta,
    "betainc": lambda a, x: lax.betainc(a, a + 0.5, x / (x + 1)),
    "bessel_i0e": lambda a, x: lax.bessel_i0e(a - x),
    "bessel_i1e": lambda a, x: lax.bessel_i1e(a - x),
}


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jit_matches_eager(name: str, dtype: np.dtype) -> None:
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.uniform(0.1, 5, (3, 4)).astype(dtype))
    x = jnp.asarray(rng.uniform(0.1, 8, (3, 4)).astype(dtype))
    eager = FUNCTIONS[name](a, x)
    jitted = jax.jit(FUNCTIONS[name])(a, x)
    assert eager.dtype == jitted.dtype == dtype and eager.shape == (3, 4)
    # Within a few ulps, not bit for bit: compiled code contracts a product and a sum into
    # one FMA (as XLA's does) where op-by-op eager code rounds twice; real JAX's eager and
    # jitted random_gamma_grad differ in the last bit too. Compared as float32: NumPy's
    # tests do not match bfloat16 NaNs.
    np.testing.assert_allclose(np.asarray(eager).astype(F32), np.asarray(jitted).astype(F32),
                               rtol=4 * float(jnp.finfo(dtype).eps), atol=0)


def test_low_precision_is_computed_in_float32() -> None:
    a = np.array([0.3, 2.5, 7.0], np.float32)
    x = np.array([0.2, 3.0, 5.5], np.float32)
    for dtype in (F16, BF16):
        low = np.asarray(lax.igamma(a.astype(dtype), x.astype(dtype)))
        wide = np.asarray(lax.igamma(a.astype(dtype).astype(F32), x.astype(dtype).astype(F32)))
        np.testing.assert_array_equal(low, wide.astype(dtype))


def test_broadcasting_and_weak_types() -> None:
    assert lax.igamma(jnp.ones((2, 3)), 1.0).shape == (2, 3)
    assert lax.igamma(jnp.ones((2, 1)), jnp.ones((1, 3))).shape == (2, 3)
    out = lax.igamma(1.0, 2.0)
    assert out.dtype == F32 and out.aval.weak_type
    # Leading axes are aligned (as JAX does it): (2, 3) goes with (2, 1), not with (3,).
    assert lax.random_gamma_grad(jnp.ones((2, 3)), jnp.ones((2, 1))).shape == (2, 3)
    assert lax.random_gamma_grad(np.ones(3, np.float16), np.ones(3, np.float16)).dtype == F16


@pytest.mark.parametrize("call, error, message", [
    (lambda: lax.igamma(jnp.ones(3), jnp.ones(2)), TypeError,
     "igamma got incompatible shapes for broadcasting: (3,), (2,)."),
    (lambda: lax.igammac(jnp.ones(3), jnp.ones(3, "int32")), TypeError,
     "igammac does not accept dtype int32 at position 1. Accepted dtypes at position 1 are "
     "subtypes of floating."),
    (lambda: lax.igamma(np.float32(1), np.float16(1)), TypeError,
     "lax.igamma requires arguments to have the same dtypes, got float32, float16."),
    (lambda: lax.bessel_i0e(np.ones(2, np.int32)), TypeError,
     "bessel_i0e does not accept dtype int32. Accepted dtypes are subtypes of floating."),
    (lambda: lax.betainc(np.ones(2, np.float32), 1.0, np.ones(3, np.float32)), TypeError,
     "regularized_incomplete_beta got incompatible shapes for broadcasting: (2,), (3,)."),
    (lambda: lax.random_gamma_grad(np.ones(3, np.float32), np.ones(2, np.float32)), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(3,), (2,)]"),
    (lambda: lax.random_gamma_grad(1.0, 2.0), AttributeError,
     "'float' object has no attribute 'shape'"),
    (lambda: jsp.betainc(1.0, 2.0, 0.5 + 1j), ValueError,
     "betainc does not support complex-valued inputs."),
])
def test_errors_are_jaxs(call: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# Derivatives.

POINTS = [(0.7, 0.4), (2.5, 1.5), (3.0, 6.0), (12.0, 10.0)]


@pytest.mark.parametrize("a, x", POINTS)
def test_gradients_in_x_against_finite_differences(a: float, x: float) -> None:
    with x64_mode(True):
        a64 = np.float64(a)
        check_grads(lambda x: lax.igamma(a64, x), (np.float64(x),), order=2)
        check_grads(lambda x: lax.igammac(a64, x), (np.float64(x),), order=2)
        check_grads(lambda x: lax.betainc(a64, a64 + 1, x), (np.float64(x / (x + 1)),),
                    order=2)


@pytest.mark.parametrize("a, x", POINTS)
def test_gradients_in_a_against_finite_differences(a: float, x: float) -> None:
    """First order only: igamma_grad_a has no derivative (JAX defines none)."""
    with x64_mode(True):
        x64 = np.float64(x)
        check_grads(lambda a: lax.igamma(a, x64), (np.float64(a),), order=1, eps=1e-6)
        check_grads(lambda a: lax.igammac(a, x64), (np.float64(a),), order=1, eps=1e-6)
        check_grads(lax.igamma, (np.float64(a), x64), order=1, eps=1e-6)


@pytest.mark.parametrize("x", [-7.0, -0.3, 0.2, 2.0, 9.5])
def test_bessel_gradients(x: float) -> None:
    with x64_mode(True):
        check_grads(lax.bessel_i0e, (np.float64(x),), order=2)
        check_grads(lax.bessel_i1e, (np.float64(x),), order=2)


def test_bessel_i1e_derivative_at_zero_is_one_half() -> None:
    assert float(jax.grad(lax.bessel_i1e)(0.0)) == 0.5


def test_random_gamma_grad_forward_mode() -> None:
    """Not a primitive: jvp differentiates through its while loops (as in JAX)."""
    with x64_mode(True):
        check_grads(lax.random_gamma_grad, (np.float64(2.5), np.float64(1.5)), order=1,
                    modes=("fwd",), eps=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda: jax.grad(jax.grad(lax.igamma))(1.0, 2.0), NotImplementedError,
     "Differentiation rule for 'igamma_grad_a' not implemented"),
    (lambda: jax.grad(lax.igamma_grad_a, 1)(1.0, 2.0), NotImplementedError,
     "Differentiation rule for 'igamma_grad_a' not implemented"),
    (lambda: jax.grad(lax.zeta)(2.0, 2.0), NotImplementedError,
     "Differentiation rule for 'zeta' not implemented"),
    (lambda: jax.grad(lax.betainc)(2.0, 2.0, 0.5), ValueError,
     "Betainc gradient with respect to a and b not supported."),
    (lambda: jax.grad(lax.random_gamma_grad)(np.float32(1.0), np.float32(2.0)), ValueError,
     "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
     "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
     "start/stop."),
])
def test_derivative_errors_are_jaxs(call: Callable[[], Any], error: type, message: str
                                    ) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# vmap against a loop.

# in_axes and the batched arguments' shapes (batch size 5; each example is f32[3]).
VMAP_PATTERNS = {"both": ((0, 0), (5, 3), (5, 3)), "axis1_none": ((1, None), (3, 5), (3,)),
                 "none_axis0": ((None, 0), (3,), (5, 3))}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("pattern", sorted(VMAP_PATTERNS))
def test_vmap_matches_loop(name: str, pattern: str) -> None:
    in_axes, a_shape, x_shape = VMAP_PATTERNS[pattern]
    rng = np.random.default_rng(1)
    a = rng.uniform(0.1, 5, a_shape).astype(np.float32)
    x = rng.uniform(0.1, 8, x_shape).astype(np.float32)
    fun = FUNCTIONS[name]
    batched = jax.vmap(fun, in_axes=in_axes)(a, x)

    def example(value: np.ndarray, axis: Any, i: int) -> Any:
        return jnp.asarray(value if axis is None else np.take(value, i, axis=axis))

    expected = np.stack([np.asarray(fun(example(a, in_axes[0], i), example(x, in_axes[1], i)))
                         for i in range(5)])
    assert batched.shape == (5, 3)
    np.testing.assert_allclose(np.asarray(batched), expected, rtol=2e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# jax.scipy.special.

def test_scipy_special_wrappers() -> None:
    a, x = np.array([0.5, 2.0, 9.0], np.float32), np.array([1.0, 0.5, 10.0], np.float32)
    np.testing.assert_allclose(jsp.gammainc(a, x), sp.gammainc(a, x), rtol=1e-5)
    np.testing.assert_allclose(jsp.gammaincc(a, x), sp.gammaincc(a, x), rtol=1e-5)
    np.testing.assert_allclose(jsp.betainc(a, x, x / 11), sp.betainc(a, x, x / 11), rtol=2e-5)
    v = np.array([-4.0, -0.5, 0.3, 7.0], np.float32)
    for ours, theirs in ((jsp.i0e, sp.i0e), (jsp.i0, sp.i0), (jsp.i1e, sp.i1e), (jsp.i1, sp.i1)):
        np.testing.assert_allclose(ours(v), theirs(v.astype(np.float64)), rtol=2e-6)
    # Integers promote to the default float type; Python scalars stay weak.
    assert jsp.gammainc(1, 2).dtype == F32 and jsp.gammainc(1, 2).aval.weak_type
    assert jsp.gammaincc(np.ones((2, 3), np.float16), np.ones(3, np.float32)).shape == (2, 3)


# ---------------------------------------------------------------------------------------------
# Printed jaxprs and StableHLO, as JAX 0.10.2 prints them (tests/golden/lax_special.txt).

GOLDEN_PATH = pathlib.Path(__file__).parent / "golden" / "lax_special.txt"
_V3 = np.array([0.5, 1.5, 4.0], np.float32)


def case_igamma_jaxpr(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(lax.igamma)(_V3, _V3)


def case_random_gamma_grad_weak_scalars(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(lax.random_gamma_grad)(1.0, 2.0)


def case_random_gamma_grad_vector(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(lax.random_gamma_grad)(_V3, _V3)


def case_random_gamma_grad_float16(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(lax.random_gamma_grad)(_V3.astype(np.float16), np.float16(2))


def case_grad_igamma(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jax.grad(lax.igamma, argnums=(0, 1)))(1.0, 2.0)


def case_grad_igammac(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jax.grad(lax.igammac, argnums=(0, 1)))(1.0, 2.0)


def case_jvp_igamma_vector(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(lambda a, x: jax.jvp(lax.igamma, (a, x), (a, x)))(_V3, _V3)


def case_grad_betainc(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jax.grad(lax.betainc, argnums=2))(1.0, 2.0, 0.5)


def case_grad_bessel_i0e(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jax.grad(lax.bessel_i0e))(1.0)


def case_grad_bessel_i1e(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jax.grad(lax.bessel_i1e))(1.0)


def case_vmap_igamma(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jax.vmap(lax.igamma, (0, None)))(np.ones((4, 3), np.float32), _V3)


def case_scipy_gammainc_int(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jsp.gammainc)(1, 2.0)


def case_scipy_i1(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.make_jaxpr(jsp.i1)(_V3)


def case_lower_igamma(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.jit(lax.igamma).lower(_V3, _V3).as_text().rstrip("\n")


def case_lower_igammac_float16(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.jit(lax.igammac).lower(np.float16(1), np.float16(2)).as_text().rstrip("\n")


def case_lower_igamma_grad_a(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.jit(lax.igamma_grad_a).lower(1.0, _V3).as_text().rstrip("\n")


def case_lower_betainc(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.jit(lax.betainc).lower(_V3, _V3, _V3 / 5).as_text().rstrip("\n")


def case_lower_bessel(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.jit(lambda x: (lax.bessel_i0e(x), lax.bessel_i1e(x))).lower(_V3).as_text().rstrip("\n")


def case_lower_zeta(jax: Any, lax: Any, jsp: Any) -> Any:
    return jax.jit(lax.zeta).lower(_V3 + 1, _V3).as_text().rstrip("\n")


def _read_golden() -> dict[str, str]:
    if not GOLDEN_PATH.exists():  # only while _record_golden writes it
        return {}
    blocks = GOLDEN_PATH.read_text().split("=== ")[1:]
    return {b.split("\n", 1)[0]: b.split("\n", 1)[1].rstrip("\n") for b in blocks}


def _real_jax_modules() -> tuple:
    real_jax = pytest.importorskip("jax")
    import jax.scipy.special as real_jsp
    return real_jax, real_jax.lax, real_jsp


CASES = golden_cases(globals())
test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, _read_golden(), (jax, lax, jsp), _real_jax_modules)


# ---------------------------------------------------------------------------------------------
# Values against real JAX.

@pytest.mark.needs_jax
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_values_match_jax(dtype: np.dtype) -> None:
    """The same NaNs as JAX everywhere on the grid, the same values at x = 0; other values
    within the ulps XLA's own exp, log and lgamma differ by (amplified as against SciPy)."""
    real_jax = pytest.importorskip("jax")
    a, x = _grid()
    for name in ("igamma", "igammac", "igamma_grad_a", "random_gamma_grad"):
        got = _run(getattr(lax, name), dtype, a, x)
        with real_jax.enable_x64(dtype == F64):
            theirs = getattr(real_jax.lax, name)(a.astype(dtype), x.astype(dtype))
            want = np.asarray(theirs).astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        # Exact at x = 0 (elsewhere, results below the smallest normal flush to 0 in XLA).
        np.testing.assert_array_equal(got[x == 0], want[x == 0], err_msg=name)
        wide_a, wide_x = _cast(a, dtype), _cast(x, dtype)
        if name in ("igamma", "igammac"):
            bound = _value_bound(wide_a, wide_x, want, dtype)
        else:
            bound = _derivative_bound(wide_a, wide_x, want, dtype)
        _assert_within(got, want, 2 * bound, f"{name} {dtype.name} vs JAX")


def _record_golden() -> None:
    """Writes tests/golden/lax_special.txt from real JAX (run with JAX's Python)."""
    import jax as real_jax
    import jax.scipy.special as real_jsp
    texts = [f"=== {name}\n{fun(real_jax, real_jax.lax, real_jsp)}\n"
             for name, fun in CASES.items()]
    GOLDEN_PATH.write_text("".join(texts))


if __name__ == "__main__":
    _record_golden()
