"""`jax_numpy_rank_promotion`: 'raise' raises JAX's ValueError, 'warn' warns, as JAX 0.10.2
(messages recorded there)."""
from __future__ import annotations

import warnings

import pytest

import justjax as jax
import justjax.numpy as jnp

DOC = "see https://docs.jax.dev/en/latest/rank_promotion_warning.html."


def test_raise_mode():
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError) as info:
            jnp.ones((2, 3)) + jnp.ones(3)
        assert str(info.value) == (
            "Operands could not be broadcast together for add on shapes (2, 3) (3,) and with "
            f"the config option jax_numpy_rank_promotion='raise'. For more information, {DOC}")
        with pytest.raises(ValueError, match="for maximum on shapes \\(2, 2\\) \\(2,\\)"):
            jnp.maximum(jnp.ones((2, 2)), jnp.ones(2))
        # Same ranks, scalars, and where's broadcasting are allowed (as in JAX).
        assert (jnp.ones((2, 3)) * jnp.ones((1, 3))).shape == (2, 3)
        assert (jnp.ones((2, 3)) + 1.0).shape == (2, 3)
        assert jnp.where(jnp.ones((2, 1), bool), jnp.ones(3), 0.0).shape == (2, 3)


def test_warn_mode():
    with jax.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert (jnp.ones((2, 3)) + jnp.ones(3)).shape == (2, 3)
    assert [str(w.message) for w in caught] == [
        "Following NumPy automatic rank promotion for add on shapes (2, 3) (3,). Set the "
        "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
        f"information, {DOC}"]
    assert caught[0].category is UserWarning


def test_raise_mode_under_jit_as_global_flag():
    f = jax.jit(lambda a, b: a - b)
    assert f(jnp.ones((2, 3)), jnp.ones(3)).shape == (2, 3)
    with jax.config.override("jax_numpy_rank_promotion", "raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            f(jnp.ones((2, 3)), jnp.ones(3))
