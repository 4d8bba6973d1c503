"""Virtual CPU devices and where results live (`runtime/devices.py`): the device count from
config or XLA_FLAGS, device names, committed and uncommitted arrays, and JAX's error for
committed arrays on different devices. Expected texts were read off real JAX 0.10.2 with
four virtual devices."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp


@pytest.fixture
def four_devices():
    with jax.config.override("jax_num_cpu_devices", 4):
        yield jax.devices()


def test_config_sets_the_device_count(four_devices):
    assert four_devices == [jax.devices()[i] for i in range(4)]
    assert jax.device_count() == jax.local_device_count() == 4
    assert [d.id for d in four_devices] == [0, 1, 2, 3]


def test_device_names_and_attributes(four_devices):
    device = four_devices[1]
    assert (repr(device), str(device)) == ("CpuDevice(id=1)", "cpu:1")
    assert (device.platform, device.device_kind, device.process_index) == ("cpu", "cpu", 0)


def test_xla_flags_set_the_count_when_config_does_not():
    code = "import justjax; print(justjax.device_count())"
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=3")
    env.pop("JAX_NUM_CPU_DEVICES", None)
    env.pop("JUSTJAX_NUM_CPU_DEVICES", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "3"
    env["JAX_NUM_CPU_DEVICES"] = "2"  # the config wins
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "2"


@pytest.mark.parametrize("put", ["jnp.asarray(np.ones(3))", "jnp.array([1.0, 2.0])",
                                 "jax.device_put(np.ones(3))"])
def test_putting_data_on_a_device_starts_the_backend(put):
    # As JAX starts its backends when the first array is put on a device: the native code
    # generator and LLVM are loaded then, not at import and not inside the first compile.
    started = "'justjax._src.backends.llvm.runtime.executable' in sys.modules"
    code = (f"import sys, numpy as np, justjax as jax, justjax.numpy as jnp\n"
            f"print({started})\n{put}\nprint({started})")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("JUSTJAX_PLATFORMS", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "True"]


def test_device_put_commits(four_devices):
    x = jax.device_put(jnp.ones(3), four_devices[2])
    assert x.committed and x.devices() == {four_devices[2]} and x.device == four_devices[2]
    assert not jnp.ones(3).committed
    moved = jax.device_put(x, four_devices[1])
    assert moved.committed and moved.devices() == {four_devices[1]}


@pytest.mark.parametrize("how", ["eager", "jit"])
def test_results_follow_the_committed_argument(four_devices, how):
    y = jax.device_put(jnp.arange(3.0), four_devices[1])

    def f(a, b):
        return a + b

    out = f(jnp.ones(3), y) if how == "eager" else jax.jit(f)(jnp.ones(3), y)
    assert out.committed and out.devices() == {four_devices[1]}
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    uncommitted = jax.jit(f)(jnp.ones(3), jnp.ones(3))
    assert not uncommitted.committed and uncommitted.devices() == {four_devices[0]}


def test_committed_arrays_on_different_devices_raise(four_devices):
    x = jax.device_put(jnp.ones(3), four_devices[0])
    y = jax.device_put(jnp.ones(3), four_devices[1])

    def f(a, b):
        return a + b

    with pytest.raises(ValueError) as info:
        jax.jit(f)(x, y)
    assert str(info.value) == (
        "Received incompatible devices for jitted computation. Got argument a of f with shape "
        "float32[3] and with device ids [0] on platform CPU and argument b of f with shape "
        "float32[3] and with device ids [1] on platform CPU")
    with pytest.raises(ValueError) as info:
        x + y
    assert str(info.value) == (
        "Received incompatible devices for jitted computation. Got argument x of add with "
        "shape float32[3] and with device ids [0] on platform CPU and argument y of add with "
        "shape float32[3] and with device ids [1] on platform CPU")


def test_key_arrays_move_and_commit_like_arrays(four_devices):
    key = jax.device_put(jax.random.key(0), four_devices[3])
    assert key.committed and key.devices() == {four_devices[3]}
    assert key.dtype == jax.random.key(0).dtype
    split = jax.jit(jax.random.split)(key)
    assert split.committed and split.devices() == {four_devices[3]}
    assert jax.random.uniform(key, (2,)).devices() == {four_devices[3]}
