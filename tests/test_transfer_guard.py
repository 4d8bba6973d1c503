"""jax.default_device and the transfer guards (_src/config.py, runtime/transfer_guard.py):
where uncommitted arrays live, which transfers raise or log at each level. Behaviour and
messages read off JAX 0.10.2 on CPU with two virtual devices."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp

H2D = ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray(float32[2]), "
       "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")


@pytest.fixture
def devices():
    with jax.config.override("jax_num_cpu_devices", 2):
        yield jax.devices()


def test_default_device_places_uncommitted_arrays(devices):
    before = jnp.ones(3)
    with jax.default_device(devices[1]):
        x = jnp.ones(3)
        assert x.devices() == {devices[1]} and not x.committed
        y = jax.device_put(np.ones(2))
        assert y.devices() == {devices[1]} and not y.committed
        assert (before + 1).devices() == {devices[1]}
        out = jax.jit(lambda a: a * 2)(np.ones(2))
        assert out.devices() == {devices[1]} and not out.committed
        assert jax.config.jax_default_device == devices[1]
    with jax.default_device("cpu"):
        assert jnp.ones(2).devices() == {devices[0]}
    # Arrays stay where they were made.
    assert x.devices() == {devices[1]} and before.devices() == {devices[0]}
    assert jax.default_device.value is None
    with pytest.raises(ValueError, match="jax.default_device must be passed either a Device "
                                         "object .* got: 3"):
        with jax.default_device(3):
            pass


def test_default_device_global_setting(devices):
    jax.config.update("jax_default_device", devices[1])
    try:
        assert jnp.zeros(1).devices() == {devices[1]}
    finally:
        jax.config.update("jax_default_device", None)
    assert jnp.zeros(1).devices() == {devices[0]}


def _run(fun):
    try:
        fun()
        return "ok"
    except jax.errors.JaxRuntimeError as e:
        return str(e)


def test_disallow_raises_on_implicit_transfers(devices):
    x = jnp.ones(3)
    with jax.transfer_guard("disallow"):
        assert _run(lambda: jnp.array(np.ones(2))) == H2D
        assert _run(lambda: jax.jit(lambda a: a)(np.ones(2))) == H2D
        assert "aval=ShapedArray(float32[], weak_type=True)" in _run(
            lambda: jax.jit(lambda a: a)(1.0))
        assert "aval=ShapedArray(float32[3])" in _run(lambda: x + np.ones(3))
        assert _run(lambda: x + jax.device_put(x, devices[1])) == (
            "INVALID_ARGUMENT: Disallowed device-to-device transfer: "
            "aval=ShapedArray(float32[3]), sharding=SingleDeviceSharding(device=CpuDevice(id=0), "
            "memory_kind=device), dst_sharding=SingleDeviceSharding(device=CpuDevice(id=1), "
            "memory_kind=device)")
        # Explicit transfers, arrays already on the device, and reading arrays back (on CPU
        # no transfer) are allowed, as in JAX.
        for fun in (lambda: jax.device_put(np.ones(2)), lambda: jax.device_put(x, devices[1]),
                    lambda: np.asarray(x), lambda: jax.device_get(x), lambda: repr(x),
                    lambda: x * x, lambda: jax.jit(lambda a: a * 2)(x), lambda: jnp.sum(x),
                    lambda: jnp.mean(x), lambda: jnp.sin(x), lambda: jnp.dot(x, x)):
            assert _run(fun) == "ok"
        # Host scalars made into arrays, as JAX raises for them.
        assert "aval=ShapedArray(int32[])" in _run(lambda: jax.random.normal(jax.random.key(0),
                                                                             (2,)))
        assert "weak_type=True" in _run(lambda: jnp.linspace(0.0, 1.0, 3))


def test_disallow_explicit_raises_on_device_put(devices):
    x = jnp.ones(3)
    with jax.transfer_guard("disallow_explicit"):
        assert _run(lambda: jax.device_put(np.ones(2))) == H2D
        assert _run(lambda: jax.device_put(x, devices[1])) == (
            "INVALID_ARGUMENT: Disallowed device-to-device transfer: "
            "aval=ShapedArray(float32[3]), dst_sharding=SingleDeviceSharding("
            "device=CpuDevice(id=1), memory_kind=device)")
        assert _run(lambda: np.asarray(x)) == "ok"


def test_log_levels(devices, caplog):
    x = jnp.ones(3)
    with caplog.at_level(logging.WARNING, logger="jax"):
        with jax.transfer_guard("log"):
            assert _run(lambda: jnp.array(np.ones(2))) == "ok"
            assert _run(lambda: jax.device_put(np.ones(2))) == "ok"   # explicit: not logged
        assert [r.getMessage() for r in caplog.records] == [
            "host-to-device transfer: aval=ShapedArray(float32[2]), "
            "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"]
        caplog.clear()
        with jax.transfer_guard("log_explicit"):
            jax.device_put(x, devices[1])
        assert caplog.records[0].getMessage().startswith("device-to-device transfer")


def test_per_direction_flags(devices):
    x = jnp.ones(3)
    with jax.transfer_guard_host_to_device("disallow"):
        assert _run(lambda: jnp.array(np.ones(2))) == H2D
        assert _run(lambda: x + jax.device_put(x, devices[1])) == "ok"
    with jax.transfer_guard("disallow"), jax.transfer_guard_host_to_device("allow"):
        assert _run(lambda: jnp.array(np.ones(2))) == "ok"
    with jax.transfer_guard_device_to_host("disallow"):
        assert _run(lambda: np.asarray(x)) == "ok"   # CPU: no device-to-host transfer
    with pytest.raises(ValueError, match=r"new enum value must be None or in \['allow', 'log', "
                                         r"'disallow', 'log_explicit', 'disallow_explicit'\], "
                                         "got foo of type <class 'str'>."):
        with jax.transfer_guard("foo"):
            pass
