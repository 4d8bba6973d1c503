"""Configuration flags: `config.update`, environment variables, platforms, context managers."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import config as config_lib
from justjax._src.backends import registry
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
        registry.check_platforms()


@pytest.mark.parametrize("platforms,bad", [("tpu", "tpu"), ("cpu,gpu", "gpu"), ("CPU", "CPU")])
def test_platforms_others_raise_jaxs_error(platforms, bad):
    with jax.config.override("jax_platforms", platforms):
        with pytest.raises(RuntimeError, match=(
                f"^Unable to initialize backend '{bad}': Backend '{bad}' is not in the list of "
                r"known backends: \['cpu'\]. \(set JAX_PLATFORMS='' to automatically choose an "
                r"available backend\)$")):
            registry.check_platforms()


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
            registry.check_platforms()
    # JAX lists the platforms it knows (['cpu', 'tpu']); justjax knows cpu only.
    assert str(info.value) == out.replace("['cpu', 'tpu']", "['cpu']")


# ---------------------------------------------------------------------------------------------
# Validation and States, as JAX 0.10.2's (messages recorded from jax.config.update there).

@pytest.mark.parametrize("name,value,message", [
    ("jax_numpy_rank_promotion", "bad", "new enum value must be in ['allow', 'warn', 'raise'], "
                                        "got bad of type <class 'str'>."),
    ("jax_numpy_dtype_promotion", "bad", "'bad' is not a valid NumpyDtypePromotion"),
    ("jax_numpy_dtype_promotion", "STRICT", "'STRICT' is not a valid NumpyDtypePromotion"),
    ("jax_legacy_prng_key", "bad", "'bad' is not a valid LegacyPrngKeyState"),
    ("jax_traceback_filtering", "bad", "new enum value must be in ['off', 'tracebackhide', "
                                       "'remove_frames', 'quiet_remove_frames', 'auto'], got "
                                       "bad of type <class 'str'>."),
    ("jax_default_prng_impl", "bad", "new enum value must be in ['threefry2x32', "
                                     "'threefry4x32', 'rbg', 'unsafe_rbg', 'philox2x32', "
                                     "'philox4x32'], got bad of type <class 'str'>."),
    ("jax_num_cpu_devices", "x", "new int config value must be None or of type int, got x of "
                                 "type <class 'str'>"),
    ("jax_num_cpu_devices", 2.0, "new int config value must be None or of type int, got 2.0 "
                                 "of type <class 'float'>"),
    ("jax_persistent_cache_min_compile_time_secs", "x", "new float config value must be None "
                                                        "or of type float, got x of type "
                                                        "<class 'str'>"),
    ("jax_compilation_cache_dir", 3, "new string config value must be None or of type str, "
                                     "got 3 of type <class 'int'>."),
])
def test_update_validates_as_jax(name, value, message):
    before = jax.config.values[name]
    with pytest.raises(ValueError) as info:
        jax.config.update(name, value)
    assert str(info.value) == message
    assert jax.config.values[name] == before


def test_default_matmul_precision_message_lists_jaxs_values():
    with pytest.raises(ValueError, match=r"^new enum value must be None or in \['default', "
                                         r"'high', 'highest', 'bfloat16', 'tensorfloat32', "
                                         r"'float32', 'ANY_F8_ANY_F8_F32', .*'F64_F64_F64'\], "
                                         r"got HIGHEST of type <class 'str'>.$"):
        jax.config.update("jax_default_matmul_precision", "HIGHEST")


@pytest.mark.parametrize("value,stored", [("yes", True), ("false", True), (0, False), (1, True),
                                          (None, False)])
def test_boolean_flags_store_bool_of_the_value(value, stored):
    # JAX: update('jax_enable_x64', 'false') stores True (bool('false')).
    with jax.config.override("jax_debug_infs", value):
        assert jax.config.jax_debug_infs is stored


def test_int_and_float_flags_accept_none_and_ints():
    with jax.config.override("jax_num_cpu_devices", None):
        assert jax.config.jax_num_cpu_devices is None
        assert jax.device_count() >= 1
    with jax.config.override("jax_persistent_cache_min_compile_time_secs", 1):
        assert jax.config.jax_persistent_cache_min_compile_time_secs == 1


def test_values_and_read():
    values = jax.config.values
    for name in ("jax_enable_x64", "jax_numpy_dtype_promotion", "jax_check_tracer_leaks",
                 "eager_constant_folding", "jax_enable_checks", "jax_traceback_filtering"):
        assert name in values
        assert jax.config.read(name) == values[name] == getattr(jax.config, name)
    assert jax.config._read("jax_enable_x64") is False


def test_states_are_context_managers_and_decorators():
    assert jax.numpy_dtype_promotion.value == "standard"
    with jax.numpy_dtype_promotion("strict"):
        assert jax.numpy_dtype_promotion.value == "strict"
        assert jax.config.jax_numpy_dtype_promotion == "strict"
        assert jax.config.values["jax_numpy_dtype_promotion"] == "strict"
    assert jax.config.jax_numpy_dtype_promotion == "standard"

    @jax.enable_x64(True)
    def f():
        return jnp.ones(1).dtype

    assert f() == np.float64
    assert jnp.ones(1).dtype == np.float32
    with jax.debug_nans():  # boolean flags set True without an argument, as JAX's
        assert jax.config.jax_debug_nans is True
    assert jax.enable_x64.name == "jax_enable_x64"
    assert jax.enable_x64.__name__ == "enable_x64"


def test_state_errors_are_jaxs():
    with pytest.raises(TypeError, match=r"^bool\(\) not supported for instances of type "
                                        r"'State' \(did you mean to use 'State.value' "
                                        r"instead\?\)$"):
        bool(jax.enable_x64)
    with pytest.raises(TypeError, match="^Context manager for numpy_dtype_promotion config "
                                        "option requires an argument representing the new "
                                        "value for the config option.$"):
        jax.numpy_dtype_promotion()
    with pytest.raises(ValueError, match="^'bad' is not a valid NumpyDtypePromotion$"):
        jax.numpy_dtype_promotion("bad")


def test_context_managers_are_thread_local_and_update_is_global():
    seen = {}

    def read(key):
        seen[key] = (jax.config.jax_enable_x64, jnp.ones(1).dtype)

    with jax.enable_x64(True):
        thread = threading.Thread(target=read, args=("inside",))
        thread.start()
        thread.join()
        assert jnp.ones(1).dtype == np.float64
    assert seen["inside"] == (False, np.float32)
    with jax.config.override("jax_enable_x64", True):
        thread = threading.Thread(target=read, args=("global",))
        thread.start()
        thread.join()
    assert seen["global"] == (True, np.float64)


def test_context_manager_overrides_keep_jit_caches_apart():
    traces = []

    @jax.jit
    def f(x):
        traces.append(x.dtype)
        return x + 1

    f(1.0)
    with jax.enable_x64(True):
        assert f(1.0).dtype == np.float64
    assert f(1.0).dtype == np.float32
    assert traces == [np.float32, np.float64]


def test_local_overrides_travel_to_replica_threads():
    overrides = []
    with jax.debug_infs(True):
        carried = jax.config.local_overrides()

    def worker():
        with jax.config.in_overrides(carried):
            overrides.append(jax.config.jax_debug_infs)
        overrides.append(jax.config.jax_debug_infs)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert overrides == [True, False]


def test_parse_flags_with_absl(monkeypatch):
    pytest.importorskip("absl")
    monkeypatch.setattr(config_lib, "_configured_with_absl", False)
    monkeypatch.setattr(sys, "argv", ["prog", "--jax_debug_infs=true", "--other", "--",
                                      "--jax_enable_checks"])
    try:
        jax.config.parse_flags_with_absl()
        assert jax.config.jax_debug_infs is True
        assert jax.config.jax_enable_checks is False  # after `--`: not parsed
        jax.config.update("jax_debug_infs", False)
        jax.config.parse_flags_with_absl()  # once per process, as JAX's
        assert jax.config.jax_debug_infs is False
    finally:
        jax.config.update("jax_debug_infs", False)


def test_debug_key_reuse_accepts_false_only():
    with jax.debug_key_reuse(False):
        assert jax.config.jax_debug_key_reuse is False
    with pytest.raises(ValueError, match="jax_debug_key_reuse=True is not supported"):
        jax.config.update("jax_debug_key_reuse", True)


def test_no_tracing_and_no_execution():
    # Messages recorded from JAX 0.10.2.
    def f(x):
        return x * 2

    jf = jax.jit(f)
    jf(1.0)
    with jax.no_tracing(True):
        assert float(jf(2.0)) == 4.0
        with pytest.raises(RuntimeError, match=r"^re-tracing function f at .*test_config.py:"
                                               r"\d+ for `jit`, but 'no_tracing' is set$"):
            jf(jnp.ones(2))
        assert str(jax.make_jaxpr(f)(1.0)) == "{ lambda ; a:f32[]. let b:f32[] = mul a " \
                                              "2.0:f32[] in (b,) }"
    with jax.no_execution(True):
        with pytest.raises(RuntimeError, match=r"^JAX tried to execute function jit\(f\), but "
                                               r"the no_execution config option is set$"):
            jf(1.0)


def test_enable_checks_type_checks_traced_jaxprs(monkeypatch):
    from justjax._src.interpreters import staging
    checked = []
    monkeypatch.setattr(staging, "check_jaxpr", lambda jaxpr: checked.append(jaxpr))
    jax.make_jaxpr(lambda x: x + 1)(1.0)
    assert checked == []
    with jax.enable_checks(True):
        jax.make_jaxpr(lambda x: x + 1)(1.0)
    assert len(checked) == 1
