"""Arrays made from pieces (`jax.make_array_from_callback`, `make_array_from_single_device_arrays`,
`make_array_from_process_local_data`) and `jax.experimental.multihost_utils` in one process, with
JAX 0.10.2's results and messages (several processes: tests/test_multiprocess.py)."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
from justjax.experimental import multihost_utils
from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P


@pytest.fixture(autouse=True)
def four_devices():
    with jax.config.override("jax_num_cpu_devices", 4):
        yield


def _mesh():
    return Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))


VALUE = np.arange(24, dtype=np.float32).reshape(4, 6)


@pytest.mark.parametrize("spec, calls", [
    (P("a", "b"), [((0, 2), (0, 3)), ((0, 2), (3, 6)), ((2, 4), (0, 3)), ((2, 4), (3, 6))]),
    (P("a"), [((0, 2), (0, 6))] * 2 + [((2, 4), (0, 6))] * 2),   # once per device
    (P(), [((0, 4), (0, 6))]),                                   # replicated: once in all
])
def test_make_array_from_callback_asks_each_devices_block(spec, calls):
    seen = []

    def callback(index):
        seen.append(tuple(s.indices(n)[:2] for s, n in zip(index, VALUE.shape)))
        return VALUE[index]

    x = jax.make_array_from_callback(VALUE.shape, NamedSharding(_mesh(), spec), callback)
    assert seen == calls
    assert x.sharding == NamedSharding(_mesh(), spec)
    np.testing.assert_array_equal(np.asarray(x), VALUE)
    assert x.is_fully_addressable


def test_make_array_from_callback_checks_the_blocks():
    sharding = NamedSharding(_mesh(), P("a"))
    with pytest.raises(ValueError, match=r"Expected shard shape \(2, 6\) doesn't match the "
                                         r"single device array shape \(1, 6\)\. Shape of "
                                         r"Array is float32\[4,6\] with sharding"):
        jax.make_array_from_callback(VALUE.shape, sharding, lambda index: VALUE[:1])
    with pytest.raises(ValueError, match="If `dtype` is provided to "
                                         "`jax.make_array_from_callback`, it must match"):
        jax.make_array_from_callback(VALUE.shape, sharding, lambda index: VALUE[index],
                                     dtype=np.int32)
    with pytest.raises(TypeError, match="sharding should be an instance of `jax.sharding`"):
        jax.make_array_from_callback(VALUE.shape, P("a"), lambda index: VALUE[index])


def _device_arrays(sharding, value=VALUE):
    return [jax.device_put(value[index], device)
            for device, index in sharding.addressable_devices_indices_map(value.shape).items()]


def test_make_array_from_single_device_arrays():
    sharding = NamedSharding(_mesh(), P("a", "b"))
    arrays = _device_arrays(sharding)
    x = jax.make_array_from_single_device_arrays(VALUE.shape, sharding, arrays[::-1])
    np.testing.assert_array_equal(np.asarray(x), VALUE)   # matched by device, not order
    assert [s.device for s in x.addressable_shards] == list(sharding._device_assignment)


@pytest.mark.parametrize("arrays, error, message", [
    (lambda a: a[:3], ValueError, "Expected 4 per-device arrays (this is how many devices "
                                  "are addressable by the sharding), but got 3"),
    (lambda a: [a[0]] * 4, ValueError, "When making an array from single-device arrays, the "
                                       "input arrays must be from distinct devices, but got "
                                       "device IDs [0, 0, 0, 0]"),
    (lambda a: [np.asarray(x) for x in a], TypeError,
     "Unsupported type for elements in `arrays`: <class 'numpy.ndarray'>"),
    (lambda a: (x for x in a), TypeError, "jax.make_array_from_single_device_arrays `arrays` "
                                          "argument must be a list or tuple"),
])
def test_make_array_from_single_device_arrays_checks_its_input(arrays, error, message):
    sharding = NamedSharding(_mesh(), P("a", "b"))
    with pytest.raises(error) as info:
        jax.make_array_from_single_device_arrays(VALUE.shape, sharding,
                                                 arrays(_device_arrays(sharding)))
    assert str(info.value).startswith(message)


def test_make_array_from_single_device_arrays_of_another_dtype():
    sharding = NamedSharding(_mesh(), P("a", "b"))
    arrays = _device_arrays(sharding)
    arrays[1] = jax.device_put(np.asarray(arrays[1]).astype(np.int32), arrays[1].device)
    with pytest.raises(ValueError, match="Input buffers to `Array` must have matching dtypes. "
                                         "Got int32, expected float32 for buffer"):
        jax.make_array_from_single_device_arrays(VALUE.shape, sharding, arrays)


def test_make_array_from_process_local_data_in_one_process():
    sharding = NamedSharding(_mesh(), P("a"))
    x = jax.make_array_from_process_local_data(sharding, VALUE)
    assert x.sharding == sharding
    np.testing.assert_array_equal(np.asarray(x), VALUE)
    with pytest.raises(ValueError, match=r"When calling `make_array_from_process_local_data` "
                                         r"on a single process, global_shape should be None "
                                         r"or equal to local_data.shape.Got "
                                         r"global_shape=\(8, 6\) and local_data.shape=\(4, 6\)"):
        jax.make_array_from_process_local_data(sharding, VALUE, (8, 6))


def test_global_shape_of_process_local_data():
    from justjax._src.runtime.global_arrays import local_to_global_shape
    # One process holds every block: its data is the whole array.
    assert local_to_global_shape(NamedSharding(_mesh(), P("a", "b")), (4, 6)) == (4, 6)


def test_multihost_utils_in_one_process():
    x = np.arange(3)
    np.testing.assert_array_equal(multihost_utils.process_allgather(x), [[0, 1, 2]])
    np.testing.assert_array_equal(multihost_utils.process_allgather(x, tiled=True), x)
    out = multihost_utils.broadcast_one_to_all({"a": x})
    assert isinstance(out["a"], np.ndarray)
    np.testing.assert_array_equal(out["a"], x)
    multihost_utils.sync_global_devices("name")
    multihost_utils.assert_equal(x)
    mesh = _mesh()
    g = multihost_utils.host_local_array_to_global_array(VALUE, mesh, P("a"))
    assert g.shape == VALUE.shape and g.sharding == NamedSharding(mesh, P("a"))
    back = multihost_utils.global_array_to_host_local_array(g, mesh, P("a"))
    np.testing.assert_array_equal(np.asarray(back), VALUE)
    with pytest.raises(ValueError, match="`None` is not a valid input to the pspecs"):
        multihost_utils.host_local_array_to_global_array(VALUE, mesh, None)


def test_mesh_local_mesh_and_devices():
    mesh = _mesh()
    assert mesh.local_mesh is mesh and not mesh.is_multi_process
    assert jax.local_devices() == jax.devices() and jax.process_count() == 1
    assert [d.local_hardware_id for d in jax.devices()] == [0, 1, 2, 3]
    assert not jax.distributed.is_initialized()
    jax.distributed.shutdown()  # nothing to shut down: returns
