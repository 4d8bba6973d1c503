"""justjax.scipy.special: values against SciPy and against values recorded from JAX 0.10.2
(edge values, float32 and float64), dtype promotion, errors, gradients. The op records
(`tests/records/scipy_special.py`) check jit vs eager, vmap and finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import justjax as jax
import justjax.numpy as jnp
import justjax.scipy.special as special
from tests.harness import x64_mode

# -- betaln -------------------------------------------------------------------------------------

BETALN_A = [0.1, 1.0, 2.5, 7.9, 8.0, 10.0, 1e3, 1e6, 0.5, 3.0, np.inf, np.nan, 0.0, -1.5]
BETALN_B = [0.2, 3.0, 8.5, 8.1, 1e3, 10.0, 2e3, 3e6, 1e7, -0.5, 1.0, 2.0, 1.0, 2.0]
# Recorded from JAX 0.10.2: `jax.scipy.special.betaln(a, b)` in float32.
BETALN_F32 = [2.6809793, -1.0986124, -5.2704611, -10.847615, -46.764812, -13.736225,
              -1911.8745, -2249346.0, -7.4866829, 1.6739762, np.nan, np.nan, np.inf,
              0.28768206]


def test_betaln_matches_jax_float32() -> None:
    out = special.betaln(np.float32(BETALN_A), np.float32(BETALN_B))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), BETALN_F32, rtol=3e-6)


def test_betaln_float64_matches_scipy_for_large_arguments() -> None:
    # Where lgamma(a) + lgamma(b) - lgamma(a + b) cancels badly (b >= 8, algdiv's branch).
    a = np.array([0.5, 3.0, 20.0, 1e3, 1e6])
    b = np.array([1e7, 1e9, 1e10, 1e12, 1e6])
    with x64_mode(True):
        out = special.betaln(a, b)
        assert out.dtype == np.float64
        np.testing.assert_allclose(np.asarray(out), scipy.special.betaln(a, b), rtol=1e-13)
        # algdiv's truncated series is off SciPy by 3e-8 at b = 8; JAX 0.10.2 gives this.
        np.testing.assert_allclose(special.betaln(7.0, 8.0), -10.086808274505008, rtol=1e-14)


def test_betaln_promotes_and_differentiates() -> None:
    assert special.betaln(2, 3).dtype == np.float32
    assert special.betaln(jnp.float16(2), 3.0).dtype == np.float16
    da, db = jax.grad(special.betaln, argnums=(0, 1))(2.5, 9.0)
    # d/da log B(a, b) = digamma(a) - digamma(a + b).
    np.testing.assert_allclose(da, scipy.special.digamma(2.5) - scipy.special.digamma(11.5),
                               rtol=1e-5)
    np.testing.assert_allclose(db, scipy.special.digamma(9.0) - scipy.special.digamma(11.5),
                               rtol=1e-5)
