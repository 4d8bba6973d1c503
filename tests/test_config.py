"""Configuration flags: `config.update`, environment variables, platforms, context managers."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import config as config_lib
from justjax._src.config import Config

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _fresh(monkeypatch, env: dict[str, str], parse=config_lib._parse_bool) -> Config:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = Config()
    config.define("jax_test_flag", False, "a flag", parse=parse)
    return config


def test_update_and_unknown_flags():
    with jax.config.override("jax_debug_nans", True):
        assert jax.config.jax_debug_nans is True
    assert jax.config.jax_debug_nans is False
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
        jax.config.update("jax_nope", 1)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
        jax.config.jax_nope  # noqa: B018


@pytest.mark.parametrize("env,expected", [
    ({}, False),
    ({"JAX_TEST_FLAG": "1"}, True),
    ({"JAX_TEST_FLAG": "true"}, True),
    ({"JUSTJAX_TEST_FLAG": "yes"}, True),
    ({"JAX_TEST_FLAG": "1", "JUSTJAX_TEST_FLAG": "0"}, False),
    ({"JAX_TEST_FLAG": "off", "JUSTJAX_TEST_FLAG": "on"}, True),
])
def test_environment_variables_justjax_wins(monkeypatch, env, expected):
    for name in ("JAX_TEST_FLAG", "JUSTJAX_TEST_FLAG"):
        monkeypatch.delenv(name, raising=False)
    assert _fresh(monkeypatch, env).read("jax_test_flag") is expected


def test_bad_boolean_in_environment(monkeypatch):
    monkeypatch.delenv("JUSTJAX_TEST_FLAG", raising=False)
    with pytest.raises(ValueError, match="invalid truth value 'maybe' for environment "
                                         "'JAX_TEST_FLAG'"):
        _fresh(monkeypatch, {"JAX_TEST_FLAG": "maybe"})


def test_env_names():
    assert config_lib.env_names("jax_enable_x64") == ("JUSTJAX_ENABLE_X64", "JAX_ENABLE_X64")


def test_environment_read_at_import():
    code = ("import justjax as jax, justjax.numpy as jnp; "
            "print(jax.config.jax_enable_x64, jnp.ones(2).dtype, jax.config.jax_debug_nans)")
    env = {**os.environ, "PYTHONPATH": SRC, "JAX_ENABLE_X64": "1", "JUSTJAX_DEBUG_NANS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["True", "float64", "True"]


@pytest.mark.parametrize("platforms", [None, "", "cpu"])
def test_platforms_cpu_accepted(platforms):
    with jax.config.override("jax_platforms", platforms):
        config_lib.check_platforms()


@pytest.mark.parametrize("platforms,bad", [("tpu", "tpu"), ("cpu,gpu", "gpu"), ("CPU", "CPU")])
def test_platforms_others_raise_jaxs_error(platforms, bad):
    with jax.config.override("jax_platforms", platforms):
        with pytest.raises(RuntimeError, match=(
                f"^Unable to initialize backend '{bad}': Backend '{bad}' is not in the list of "
                r"known backends: \['cpu'\]. \(set JAX_PLATFORMS='' to automatically choose an "
                r"available backend\)$")):
            config_lib.check_platforms()


def test_disable_jit_runs_python():
    traced = []

    @jax.jit
    def f(x):
        traced.append(type(x).__name__)
        return x * 2

    with jax.disable_jit():
        assert jax.config.jax_disable_jit is True
        np.testing.assert_array_equal(f(jnp.ones(2)), [2.0, 2.0])
        with jax.disable_jit(False):
            f(jnp.ones(2))
    assert jax.config.jax_disable_jit is False
    assert traced == ["Array", "DynamicJaxprTracer"]


def test_enable_and_disable_x64():
    from justjax.experimental import disable_x64, enable_x64
    with enable_x64():
        assert jnp.ones(2).dtype == np.float64
        with disable_x64():
            assert jnp.ones(2).dtype == np.float32
    assert jnp.ones(2).dtype == np.float32
    with jax.enable_x64(True):
        assert jnp.arange(3).dtype == np.int64


@pytest.mark.needs_jax
def test_platform_message_matches_jax_for_unknown_platforms():
    pytest.importorskip("jax")
    code = "import jax\ntry:\n    jax.devices()\nexcept RuntimeError as e:\n    print(e)\n"
    env = {**os.environ, "JAX_PLATFORMS": "foo"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd="/tmp").stdout.strip()
    with jax.config.override("jax_platforms", "foo"):
        with pytest.raises(RuntimeError) as info:
            config_lib.check_platforms()
    # JAX lists the platforms it knows (['cpu', 'tpu']); justjax knows cpu only.
    assert str(info.value) == out.replace("['cpu', 'tpu']", "['cpu']")
