"""justjax.scipy.stats.norm (and the special functions under it, log_ndtr and ndtri): JAX's
values far into the tails, derivatives there, dtypes, broadcasting, errors. The op records
(`tests/records/scipy_stats.py`) check the bulk against SciPy, jit, vmap and finite
differences."""
from __future__ import annotations

import math

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
import justjax.scipy.special as special
from justjax.scipy.stats import norm
from tests.harness import x64_mode

X = [-40.0, -12.0, -3.0, -0.5, 0.0, 0.7, 4.0, 6.0, 12.0]
Q = [0.0, 1e-30, 1e-10, 0.1, 0.5, 0.9, 0.999999, 1.0, 1.5]

# Recorded from JAX 0.10.2 (float32): `getattr(norm, name)(jnp.array(X))` and, for `_grad`,
# `vmap(grad(...))` of it; ppf/isf at Q.
RECORDED = {
    "logpdf": [-800.91895, -72.918938, -5.4189386, -1.0439385, -0.91893852, -1.1639385,
               -8.9189386, -18.918938, -72.918938],
    "logpdf_grad": [40.0, 12.0, 3.0, 0.5, -0.0, -0.69999999, -4.0, -6.0, -12.0],
    "pdf": [0.0, 2.1463855e-32, 0.0044318479, 0.35206532, 0.39894229, 0.31225395,
            0.00013383021, 6.0758882e-09, 2.1463855e-32],
    "pdf_grad": [0.0, 2.5756626e-31, 0.013295544, 0.17603266, -0.0, -0.21857776,
                 -0.00053532084, -3.6455329e-08, -2.5756626e-31],
    "cdf": [0.0, 1.776496e-33, 0.0013498988, 0.30853754, 0.5, 0.75803638, 0.99996835, 1.0,
            1.0],
    "cdf_grad": [0.0, 2.1464001e-32, 0.0044318507, 0.35206532, 0.39894229, 0.31225395,
                 0.0001338303, 6.0758949e-09, 2.1464001e-32],
    "logcdf": [-804.60846, -75.410675, -6.6077256, -1.1759118, -0.69314718, -0.27702391,
               -3.1650568e-05, -9.8658959e-10, -1.776496e-33],
    "logcdf_grad": [40.025398, 12.082249, 3.2830963, 1.1410778, 0.79788458, 0.41192475,
                    0.00013383443, 6.0758882e-09, 2.1463855e-32],
    "sf": [1.0, 1.0, 0.99865007, 0.69146246, 0.5, 0.24196365, 3.1671258e-05, 9.8658959e-10,
           1.776496e-33],
    "sf_grad": [-0.0, -2.1464001e-32, -0.0044318507, -0.35206532, -0.39894229, -0.31225395,
                -0.0001338303, -6.0758949e-09, -2.1464001e-32],
    "logsf": [-0.0, -1.776496e-33, -0.001350838, -0.3689464, -0.69314718, -1.4189677,
              -10.360101, -20.736767, -75.410675],
    "logsf_grad": [-0.0, -2.1463855e-32, -0.0044378387, -0.50916046, -0.79788458, -1.2904993,
                   -4.2256036, -6.1584749, -12.082249],
    "ppf": [-np.inf, -11.464024, -6.361341, -1.2815516, 0.0, 1.2815512, 4.7507577, np.inf,
            np.nan],
    "isf": [np.inf, np.inf, np.inf, 1.2815512, 0.0, -1.2815512, -4.7507577, -np.inf, np.nan],
}

FUNCTIONS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_values_match_jax_in_the_tails(name: str) -> None:
    out = getattr(norm, name)(jnp.array(X))
    assert out.dtype == np.float32
    # Relative to each value: the tails are tiny numbers that must keep their digits.
    np.testing.assert_allclose(np.asarray(out), RECORDED[name], rtol=2e-5, atol=1e-37)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_derivatives_match_jax_in_the_tails(name: str) -> None:
    grads = jax.vmap(jax.grad(getattr(norm, name)))(jnp.array(X))
    np.testing.assert_allclose(np.asarray(grads), RECORDED[name + "_grad"], rtol=2e-5,
                               atol=1e-37)


@pytest.mark.parametrize("name", ["ppf", "isf"])
def test_inverse_cdfs_match_jax(name: str) -> None:
    out = getattr(norm, name)(jnp.array(Q))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), RECORDED[name], rtol=2e-6)


def test_ppf_derivative_matches_jax() -> None:
    grads = jax.vmap(jax.grad(norm.ppf))(jnp.array(Q[2:7]))
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(np.asarray(grads),
                               [1535723800.0, 5.6980605, 2.5066283, 5.69806, 199543.64],
                               rtol=2e-5)


def test_ppf_inverts_cdf() -> None:
    # Up to where float32 probabilities near 1 keep few digits (isf computes 1 - q).
    x = jnp.linspace(-9.0, 4.0, 27)
    np.testing.assert_allclose(np.asarray(norm.ppf(norm.cdf(x))), np.asarray(x), atol=2e-3)
    x = jnp.linspace(-8.0, 9.0, 35)
    np.testing.assert_allclose(np.asarray(norm.isf(norm.sf(x, 1.0, 2.0), 1.0, 2.0)),
                               np.asarray(x), atol=4e-3)


def test_x64_values_match_jax() -> None:
    with x64_mode(True):
        logcdf = norm.logcdf(jnp.array([-40.0, -25.0, -12.0, 0.3, 9.0]))
        ppf = norm.ppf(jnp.array([1e-300, 1e-20, 0.3, 0.999]))
        assert logcdf.dtype == np.float64 and ppf.dtype == np.float64
        assert norm.ppf(0.3).dtype == np.float64
        # Recorded from JAX 0.10.2 under jax.enable_x64(True).
        np.testing.assert_allclose(np.asarray(logcdf), [-804.60844, -316.63941, -75.410673,
                                                        -0.48141016, -1.1285884e-19],
                                   rtol=1e-7)
        np.testing.assert_allclose(np.asarray(ppf), [-37.047096, -9.2623401, -0.52440051,
                                                     3.0902323], rtol=1e-7)


def test_loc_and_scale_broadcast() -> None:
    x = jnp.array([0.5, 1.0, 2.0])
    loc = jnp.array([[0.0], [1.0]])
    scale = 2.0
    out = norm.logpdf(x, loc, scale)
    assert out.shape == (2, 3)
    z = (np.array([0.5, 1.0, 2.0]) - np.array([[0.0], [1.0]])) / 2.0
    np.testing.assert_allclose(np.asarray(out), -z ** 2 / 2 - math.log(2 * math.sqrt(2 * math.pi)),
                               rtol=1e-6)
    assert norm.cdf(x, loc=jnp.ones(1)).shape == (3,)
    assert norm.ppf(jnp.array([0.2, 0.7]), jnp.zeros((3, 1)), 1.0).shape == (3, 2)


def test_dtypes_and_weak_types_as_in_jax() -> None:
    # Recorded from JAX 0.10.2: logpdf and pdf keep a Python scalar's weak type (lax ops on
    # it only); the CDFs meet NumPy constants and give float32.
    assert norm.logpdf(0.3).weak_type
    assert norm.pdf(0.3).weak_type
    assert not norm.cdf(0.3).weak_type
    assert not norm.ppf(0.3).weak_type
    assert norm.logpdf(jnp.array([1, 2])).dtype == np.float32
    assert norm.logpdf(jnp.ones(2, jnp.float16)).dtype == np.float16
    assert norm.logpdf(jnp.ones(2, jnp.bfloat16)).dtype == jnp.bfloat16
    assert norm.cdf(jnp.array([1, 2])).dtype == np.float32


ERRORS = [
    (lambda: norm.cdf(jnp.ones(1, jnp.float16)),
     "x.dtype=float16 is not supported, see docstring for supported types."),
    (lambda: norm.sf(jnp.ones(1, jnp.bfloat16)),
     "x.dtype=bfloat16 is not supported, see docstring for supported types."),
    (lambda: norm.logcdf(jnp.ones(1, jnp.float16)), "x.dtype=float16 is not supported."),
    (lambda: norm.logsf(jnp.ones(1, jnp.bfloat16)), "x.dtype=bfloat16 is not supported."),
    (lambda: norm.ppf(1), "x.dtype=int32 is not supported, see docstring for supported types."),
    (lambda: norm.isf(jnp.array([1, 2]), 0, 1),
     "x.dtype=int32 is not supported, see docstring for supported types."),
    (lambda: special.log_ndtr(jnp.ones(2), series_order=2.0),
     "series_order must be a Python integer."),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_dtype_errors_are_jax_type_errors(index: int) -> None:
    call, message = ERRORS[index]
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == message


def test_log_ndtr_series_order() -> None:
    x = jnp.array([-40.0, -12.0, 0.5])
    # Recorded from JAX 0.10.2: order 0 drops the series (the leading term only).
    np.testing.assert_allclose(np.asarray(special.log_ndtr(x, series_order=0)),
                               [-804.6078, -75.40385, -0.3689464], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(special.log_ndtr(x, series_order=5)),
                               [-804.6085, -75.41068, -0.3689464], rtol=1e-6)
    for order, message in ((31, "series_order must be <= 30."),
                           (-1, "series_order must be non-negative.")):
        with pytest.raises(ValueError, match=message):
            special.log_ndtr(x, series_order=order)


def test_jit_and_vmap_agree_with_eager() -> None:
    x = jnp.array(X)
    for name in FUNCTIONS:
        fn = getattr(norm, name)
        np.testing.assert_array_equal(np.asarray(jax.jit(fn)(x, 0.5, 2.0)),
                                      np.asarray(fn(x, 0.5, 2.0)))
    loc = jnp.array([0.0, 1.0, -2.0])
    batched = jax.vmap(norm.logcdf, in_axes=(None, 0, None))(x, loc, 1.5)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(norm.logcdf(x, loc[i], 1.5)),
                                   rtol=1e-6)


def test_gradients_in_loc_and_scale() -> None:
    # d/dloc logpdf = (x - loc) / scale**2; d/dscale = ((x - loc)**2 / scale**2 - 1) / scale.
    dloc, dscale = jax.grad(norm.logpdf, argnums=(1, 2))(1.5, 0.5, 2.0)
    np.testing.assert_allclose([float(dloc), float(dscale)], [0.25, (0.25 - 1) / 2], rtol=1e-6)
    # d/dscale cdf = -pdf(z) z / scale.
    dscale = jax.grad(norm.cdf, argnums=2)(1.5, 0.5, 2.0)
    z = 0.5
    np.testing.assert_allclose(float(dscale),
                               -math.exp(-z * z / 2) / math.sqrt(2 * math.pi) * z / 2, rtol=1e-5)
