"""`jax.sharding` (`runtime/partition_spec.py`, `runtime/mesh.py`, `runtime/sharding.py`),
`device_put` to shardings, and the sharding annotations of `lax/sharding_constraint.py`.

Expected reprs, layouts, jaxprs and error texts were read off real JAX 0.10.2 with four
virtual CPU devices (`XLA_FLAGS=--xla_force_host_platform_device_count=4`). Where justjax
differs on purpose (no partitioner yet: a jitted program's results are laid out only as a
sharding annotation that gives them back directly says), the test says so.
"""
from __future__ import annotations

import collections
import pickle

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,
                              SingleDeviceSharding)

P = jax.P
wsc = jax.lax.with_sharding_constraint


@pytest.fixture(autouse=True)
def devices():
    with jax.config.override("jax_num_cpu_devices", 4):
        yield jax.devices()


@pytest.fixture
def mesh_ab(devices):
    return Mesh(np.array(devices).reshape(2, 2), ("a", "b"))


@pytest.fixture
def mesh_x():
    return jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))


def _layout(x):
    """(device id, index, replica id) of each shard."""
    return [(s.device.id, s.index, s.replica_id) for s in x.addressable_shards]


S = slice


# ---------------------------------------------------------------------------------------------
# PartitionSpec

def test_partition_spec_reprs():
    assert P is PartitionSpec
    assert repr(P("x", None)) == str(P("x", None)) == "P('x', None)"
    assert repr(P()) == "P()"
    assert repr(P(("x", "y"), None)) == "P(('x', 'y'), None)"
    assert repr(P(P.UNCONSTRAINED)) == "P(UNCONSTRAINED,)"
    assert repr(P.UNCONSTRAINED) == "UNCONSTRAINED"
    assert repr(P("x", unreduced={"y"})) == "P('x', unreduced={'y'})"
    assert repr(P("x", reduced={"y"})) == "P('x', reduced={'y'})"
    assert repr(P(unreduced={"y"})) == "P(unreduced={'y'})"
    assert repr(P("a", reduced={"y"}, unreduced={"z"})) == "P('a', unreduced={'z'}, reduced={'y'})"
    assert repr(P(1, 2.5, ("a", None))) == "P(1, 2.5, ('a', None))"


def test_partition_spec_is_not_a_tuple_but_behaves_like_one():
    p = P("x", None)
    assert not isinstance(p, tuple) and p != ("x", None)
    assert len(p) == 2 and p[0] == "x" and list(p) == ["x", None]
    assert p[1:] == (None,) and type(p[1:]) is tuple
    assert p + ("y",) == P("x", None, "y") and type(p + ("y",)) is P
    assert ("a",) + P("y") == P("a", "y") and P("x") + P("y") == P("x", "y")
    assert P("a").index("a") == 0 and P("a", "A").count("a") == 1
    assert not P() and P(None)
    assert jax.tree_util.tree_leaves({"a": P("x")}) == [P("x")]


def test_partition_spec_equality_is_by_canonical_entries():
    assert P("x") != P("x", None) and P(None) != P() and P(None) != P(None, None)
    assert P(("x",)) == P("x") and P(["x", "y"]) == P(("x", "y"))
    assert repr(P([])) == repr(P(())) == "P(None,)"
    assert hash(P("x", None)) == hash(P("x", None))
    assert P("x", unreduced={"y"}) != P("x")
    assert P("x", None)._normalized_spec_for_aval(3) == P("x", None, None)
    assert P(P.UNCONSTRAINED, "x")._normalized_spec_for_aval(2) == P(None, "x")
    assert pickle.loads(pickle.dumps(P("x", None))) == P("x", None)
    assert pickle.loads(pickle.dumps(P.UNCONSTRAINED)) is P.UNCONSTRAINED


def test_partition_spec_errors():
    with pytest.raises(TypeError, match=r"unreduced argument of PartitionSpec should of type "
                                        r"`frozenset` or `set`. Got type \['y'\]"):
        P("x", unreduced=["y"])
    with pytest.raises(ValueError, match="partitions cannot overlap with unreduced axes passed "
                                         r"to PartitionSpec. Got partitions: \('x',\) and "
                                         r"unreduced axes: frozenset\(\{'x'\}\)"):
        P("x", unreduced={"x"})
    with pytest.raises(ValueError, match=r"Using \*pspec is dangerous when PartitionSpec has "
                                         r"non-empty unreduced/reduced set. Please use "
                                         r"\*spec.partitions"):
        list(P("x", unreduced={"y"}))
    with pytest.raises(TypeError, match="Subclassing `jax.P` is prohibited."):
        type("Q", (P,), {})
    with pytest.raises(AttributeError):
        P("x").foo = 1


# ---------------------------------------------------------------------------------------------
# AxisType, Mesh, AbstractMesh

def test_axis_type():
    assert repr(AxisType.Auto) == "Auto" and str(AxisType.Explicit) == "AxisType.Explicit"
    assert repr(list(AxisType)) == "[Auto, Explicit, Manual]"


def test_mesh_attributes(devices, mesh_ab):
    m = mesh_ab
    assert repr(m) == "Mesh(axis_sizes=(2, 2), axis_names=('a', 'b'), axis_types=(Auto, Auto))"
    assert str(m) == "Mesh('a': 2, 'b': 2, axis_types=(Auto, Auto))"
    assert m.shape == collections.OrderedDict([("a", 2), ("b", 2)]) and m.size == 4
    assert m.axis_names == ("a", "b") and m.axis_types == (AxisType.Auto, AxisType.Auto)
    assert m.axis_sizes == (2, 2) and m.shape_tuple == (("a", 2), ("b", 2))
    assert m.devices.shape == (2, 2) and list(m.devices.flat) == devices
    assert not m.devices.flags.writeable
    np.testing.assert_array_equal(m.device_ids, [[0, 1], [2, 3]])
    assert not m.empty and not m.is_multi_process and m.local_devices == devices
    assert m.local_mesh is m and m.are_all_axes_auto and not m.are_all_axes_explicit
    assert m.auto_axes == ("a", "b") and m.explicit_axes == ()
    assert repr(m.abstract_mesh) == ("AbstractMesh('a': 2, 'b': 2, axis_types=(Auto, Auto), "
                                     "device_kind=cpu, num_cores=None, platform=cpu)")
    assert repr(Mesh(devices[:1], "x")) == ("Mesh(axis_sizes=(1,), axis_names=('x',), "
                                            "axis_types=(Auto,))")
    assert str(m.update(axis_names=("c", "d"))) == "Mesh('c': 2, 'd': 2, axis_types=(Auto, Auto))"
    mixed = Mesh(m.devices, ("a", "b"), axis_types=(AxisType.Explicit, AxisType.Auto))
    assert repr(mixed) == ("Mesh(axis_sizes=(2, 2), axis_names=('a', 'b'), "
                           "axis_types=(Explicit, Auto))")


def test_mesh_equality(devices, mesh_ab):
    again = Mesh(np.array(devices).reshape(2, 2), ("a", "b"))
    assert mesh_ab == again and hash(mesh_ab) == hash(again)
    assert mesh_ab != jax.make_mesh((2, 2), ("a", "b"))  # Explicit axes
    assert mesh_ab != Mesh(np.array(devices[::-1]).reshape(2, 2), ("a", "b"))
    assert mesh_ab.abstract_mesh == again.abstract_mesh
    assert mesh_ab.abstract_mesh != AbstractMesh((2, 2), ("a", "b"))  # no abstract device


def test_empty_mesh():
    empty = Mesh(np.empty((), dtype=object), ())
    assert (str(empty), repr(empty)) == ("Mesh()", "Mesh(axis_sizes=(), axis_names=())")
    assert empty.empty and empty.size == 0


def test_mesh_errors(devices):
    with pytest.raises(ValueError, match=r"Mesh requires the ndim of its first argument "
                                         r"\(`devices`\) to equal the length of its second "
                                         r"argument \(`axis_names`\), but got devices.ndim == 1 "
                                         r"and len\(axis_names\) == 2."):
        Mesh(devices, ("x", "y"))
    with pytest.raises(ValueError, match=r"Mesh axis names cannot be None. Got: \(None,\)"):
        Mesh(devices, (None,))
    grid = np.array(devices).reshape(2, 2)
    with pytest.raises(ValueError, match=r"Number of axis names should match the number of "
                                         r"axis_types. Got axis_names=\('a', 'b'\) and "
                                         r"axis_types=\(Explicit,\)"):
        Mesh(grid, ("a", "b"), axis_types=AxisType.Explicit)
    with pytest.raises(TypeError, match=r"axis_types passed to Mesh must be of type "
                                        r"`jax.sharding.AxisType`. Got \('Auto', 'Auto'\)"):
        Mesh(grid, ("a", "b"), axis_types=("Auto", "Auto"))


def test_abstract_mesh():
    am = AbstractMesh((2, 2), ("a", "b"))
    assert repr(am) == "AbstractMesh('a': 2, 'b': 2, axis_types=(Auto, Auto))"
    assert am.size == 4 and am.shape == collections.OrderedDict([("a", 2), ("b", 2)])
    again = AbstractMesh((2, 2), ("a", "b"))
    assert am == again and hash(am) == hash(again)
    assert am.abstract_mesh is am
    assert repr(AbstractMesh((4,), "x")) == "AbstractMesh('x': 4, axis_types=(Auto,))"
    assert am.update_axis_types({"b": AxisType.Explicit}).axis_types == (AxisType.Auto,
                                                                         AxisType.Explicit)
    with pytest.raises(ValueError, match="AbstractMesh does not implement devices"):
        am.devices
    assert repr(jax.sharding.get_abstract_mesh()) == "AbstractMesh((), axis_types=())"


# ---------------------------------------------------------------------------------------------
# make_mesh, set_mesh and the mesh in context

def test_make_mesh(devices):
    m = jax.make_mesh((2, 2), ("a", "b"))
    assert repr(m) == ("Mesh(axis_sizes=(2, 2), axis_names=('a', 'b'), "
                       "axis_types=(Explicit, Explicit))")
    assert list(m.devices.flat) == devices
    one = jax.make_mesh((1,), ("x",))
    assert repr(one) == "Mesh(axis_sizes=(1,), axis_names=('x',), axis_types=(Explicit,))"
    assert list(jax.make_mesh((2,), ("x",)).devices) == devices[:2]
    assert list(jax.make_mesh((2,), ("x",), devices=devices[2:]).devices) == devices[2:]
    assert str(jax.make_mesh([2, 2], ["x", "y"])) == ("Mesh('x': 2, 'y': 2, "
                                                      "axis_types=(Explicit, Explicit))")
    auto = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    assert auto.axis_types == (AxisType.Auto,)
    with pytest.raises(ValueError, match=r"Number of devices 4 must be >= the product of "
                                         r"mesh_shape \(8,\)"):
        jax.make_mesh((8,), ("x",))
    with pytest.raises(ValueError, match="Number of axis names should match"):
        jax.make_mesh((2, 2), ("x", "y"), axis_types=AxisType.Auto)
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        jax.make_mesh(2, "x")


def test_set_mesh_as_context_manager_and_setter(mesh_x):
    assert jax.sharding.get_abstract_mesh().empty
    assert str(jax.sharding.get_mesh()) == "Mesh()"
    with jax.set_mesh(mesh_x) as entered:
        assert entered is None
        assert jax.sharding.get_abstract_mesh() == mesh_x.abstract_mesh
        assert jax.sharding.get_mesh() is mesh_x
    assert jax.sharding.get_abstract_mesh().empty
    setter = jax.set_mesh(mesh_x)
    try:
        assert jax.sharding.get_mesh() is mesh_x
        jax.set_mesh(None)
        assert jax.sharding.get_abstract_mesh().empty
    finally:
        setter.__exit__(None, None, None)
    assert jax.sharding.get_mesh().empty


def test_set_mesh_errors(devices, mesh_x):
    with pytest.raises(ValueError, match="Expected mesh of type `jax.sharding.Mesh`. Got "
                                         "<class 'int'>"):
        jax.set_mesh(3)
    with pytest.raises(ValueError, match="`set_mesh` can only be used outside of `jax.jit`."):
        jax.jit(lambda x: jax.set_mesh(mesh_x))(1.0)
    with pytest.raises(ValueError, match="`get_mesh` can only be used outside of `jax.jit`. "
                                         r"Maybe you want `jax.sharding.get_abstract_mesh\(\)`\?"):
        jax.jit(lambda x: jax.sharding.get_mesh())(1.0)
    manual = Mesh(np.array(devices), ("x",), axis_types=(AxisType.Manual,))
    with pytest.raises(ValueError, match="contains manual axes which is not allowed"):
        jax.set_mesh(manual)


def test_use_abstract_mesh(mesh_x):
    with jax.sharding.use_abstract_mesh(mesh_x.abstract_mesh):
        assert jax.sharding.get_abstract_mesh() == mesh_x.abstract_mesh
        assert jax.sharding.get_mesh().empty
    with pytest.raises(ValueError, match="Expected mesh of type `jax.sharding.AbstractMesh`"):
        jax.sharding.use_abstract_mesh(mesh_x)
    with jax.set_mesh(mesh_x):
        with pytest.raises(ValueError, match="use_abstract_mesh cannot change the size of the "
                                             "mesh. Got new mesh: AbstractMesh"):
            with jax.sharding.use_abstract_mesh(AbstractMesh((2,), ("x",))):
                pass


def test_the_deprecated_mesh_context(mesh_x):
    x = jnp.arange(4.0)
    with pytest.warns(DeprecationWarning, match="`with mesh:` context manager has been "
                                                "deprecated. Please use `with "
                                                r"jax.set_mesh\(mesh\):` instead."):
        with mesh_x as entered:
            assert entered is mesh_x
            assert jax.sharding.get_abstract_mesh().empty
            assert wsc(x, P("x")).sharding == NamedSharding(mesh_x, P("x"))
    with pytest.raises(RuntimeError, match="with_sharding_constraint requires a non-empty "
                                           "mesh in context"):
        wsc(x, P("x"))


def test_jit_traces_again_under_another_mesh(devices):
    f = jax.jit(lambda x: wsc(x, P("x")))
    first = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    second = Mesh(np.array(devices[::-1]), ("x",))
    x = jnp.arange(4.0)
    with jax.set_mesh(first):
        assert f(x).sharding == NamedSharding(first, P("x"))
    with jax.set_mesh(second):
        assert f(x).sharding == NamedSharding(second, P("x"))


# ---------------------------------------------------------------------------------------------
# SingleDeviceSharding and an ordinary array's sharding

def test_single_device_sharding(devices):
    s = SingleDeviceSharding(devices[0])
    assert repr(s) == str(s) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    again = SingleDeviceSharding(devices[0])
    assert s == again and hash(s) == hash(again)
    assert s != SingleDeviceSharding(devices[1])
    assert s != SingleDeviceSharding(devices[0], memory_kind="pinned_host")
    assert s.device_set == {devices[0]} and s.addressable_devices == {devices[0]}
    assert s.is_fully_replicated and s.is_fully_addressable and s.num_devices == 1
    assert s.memory_kind == "device" and s._device_assignment == (devices[0],)
    assert s.shard_shape((8,)) == (8,) and s.shard_shape((5, 3)) == (5, 3)
    assert s.devices_indices_map((8, 2)) == {devices[0]: (S(None), S(None))}
    assert s.addressable_devices_indices_map((8,)) == {devices[0]: (S(None),)}
    pinned = s.with_memory_kind("pinned_host")
    assert repr(pinned) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=pinned_host)"
    assert jax.sharding.make_single_device_sharding(devices[2]) == SingleDeviceSharding(devices[2])
    assert pickle.loads(pickle.dumps(s)) == s
    with pytest.raises(ValueError, match="Could not find memory addressable by device cpu. "
                                         "Device cpu can address the following memory kinds: "
                                         "device, pinned_host, unpinned_host. Got memory kind: "
                                         "foo"):
        SingleDeviceSharding(devices[0], memory_kind="foo")


def test_an_arrays_sharding(devices):
    x = jnp.arange(8.0)
    assert x.sharding == SingleDeviceSharding(devices[0])
    assert isinstance(x.sharding, jax.sharding.Sharding)
    assert x.sharding.device_set == {devices[0]} and x.devices() == {devices[0]}
    assert x.is_fully_replicated and x.is_fully_addressable and not x.committed
    shard, = x.addressable_shards
    assert (shard.device, shard.index, shard.replica_id) == (devices[0], (S(None),), 0)
    assert x.global_shards[0].device == devices[0]
    assert repr(shard) == ("Shard(device=CpuDevice(id=0), index=(slice(None, None, None),), "
                           "replica_id=0, data=[0. 1. 2. 3. 4. 5. 6. 7.])")


def test_devices_are_jax_device(devices):
    d = devices[1]
    assert isinstance(d, jax.Device) and type(d).__name__ == "Device"
    assert (repr(d), str(d)) == ("CpuDevice(id=1)", "cpu:1")
    assert (d.id, d.platform, d.device_kind, d.process_index, d.host_id,
            d.local_hardware_id) == (1, "cpu", "cpu", 0, 0, 1)
    assert d.memory_stats() is None


def test_typeof_sharding():
    t = jax.typeof(jnp.ones((4, 2)))
    assert repr(t) == "ShapedArray(float32[4,2])"
    assert repr(t.sharding) == ("NamedSharding(mesh=AbstractMesh((), axis_types=()), "
                                "spec=P(None, None))")
    assert not t.sharding.mesh.are_all_axes_explicit and t.sharding.memory_kind is None
    assert repr(jax.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    assert repr(jax.typeof(1.0).sharding.spec) == "P()"
    with pytest.raises(TypeError, match="Argument 'a' of type <class 'str'> is not a valid JAX "
                                        "type"):
        jax.typeof("a")


# ---------------------------------------------------------------------------------------------
# NamedSharding

def test_named_sharding_repr_and_attributes(devices, mesh_ab):
    ns = NamedSharding(mesh_ab, P("a", None))
    assert repr(ns) == str(ns) == ("NamedSharding(mesh=Mesh('a': 2, 'b': 2, axis_types=(Auto, "
                                   "Auto)), spec=P('a', None), memory_kind=device)")
    assert ns.mesh is mesh_ab and ns.spec == P("a", None) and ns.memory_kind == "device"
    assert ns.device_set == set(devices) == ns.addressable_devices
    assert not ns.is_fully_replicated and ns.is_fully_addressable and ns.num_devices == 4
    assert ns.replicated_axes == frozenset({"b"})
    assert NamedSharding(mesh_ab, P()).is_fully_replicated
    assert NamedSharding(Mesh(devices[:1], "x"), P("x")).is_fully_replicated
    assert repr(ns.with_memory_kind("pinned_host")).endswith("memory_kind=pinned_host)")
    assert ns.update(spec=("b",)).spec == P("b")
    assert pickle.loads(pickle.dumps(ns)) == ns


def test_named_sharding_equality(devices, mesh_ab):
    ns = NamedSharding(mesh_ab, P("a", None))
    again = NamedSharding(Mesh(np.array(devices).reshape(2, 2), ("a", "b")), P("a", None))
    assert ns == again and hash(ns) == hash(again)
    assert ns != NamedSharding(mesh_ab, P("a"))
    assert ns == NamedSharding(mesh_ab, P("a", None), memory_kind="device")
    assert ns != NamedSharding(mesh_ab, P("a", None), memory_kind="pinned_host")
    assert ns != SingleDeviceSharding(devices[0])


def test_shard_shape_and_devices_indices_map(devices, mesh_ab):
    d0, d1, d2, d3 = devices
    ns = NamedSharding(mesh_ab, P("a", None))
    assert ns.shard_shape((4, 6)) == (2, 6)
    assert ns.devices_indices_map((4, 6)) == {
        d0: (S(0, 2), S(None)), d1: (S(0, 2), S(None)),
        d2: (S(2, 4), S(None)), d3: (S(2, 4), S(None))}
    assert NamedSharding(mesh_ab, P()).devices_indices_map((3,)) == {d: (S(None),) for d in devices}
    assert NamedSharding(mesh_ab, P(("a", "b"))).devices_indices_map((8,)) == {
        d0: (S(0, 2),), d1: (S(2, 4),), d2: (S(4, 6),), d3: (S(6, 8),)}
    assert NamedSharding(mesh_ab, P("b", "a")).devices_indices_map((4, 4)) == {
        d0: (S(0, 2), S(0, 2)), d1: (S(2, 4), S(0, 2)),
        d2: (S(0, 2), S(2, 4)), d3: (S(2, 4), S(2, 4))}
    line = NamedSharding(Mesh(devices, "x"), P("x"))
    assert line.shard_shape((8, 3)) == (2, 3)
    assert line.addressable_devices_indices_map((4,)) == {
        d0: (S(0, 1),), d1: (S(1, 2),), d2: (S(2, 3),), d3: (S(3, 4),)}


def test_indivisible_shapes(devices, mesh_x):
    ns = NamedSharding(mesh_x, P("x"))
    with pytest.raises(ValueError) as info:
        ns.shard_shape((6, 3))
    assert type(info.value).__name__ == "IndivisibleError"
    assert str(info.value) == (
        "Sharding NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), spec=P('x',), "
        "memory_kind=device) implies that array axis 0 is partitioned 4 times, but the "
        "dimension size is 6 (full shape: (6, 3), per-dimension tiling factors: [4, 1] should "
        "evenly divide the shape)")


def test_is_equivalent_to(devices, mesh_ab, mesh_x):
    one = Mesh(devices[:1], "x")
    single = SingleDeviceSharding(devices[0])
    ns = NamedSharding(mesh_x, P("x"))
    assert ns.is_equivalent_to(NamedSharding(jax.make_mesh((4,), ("x",)), P("x")), 1)
    assert NamedSharding(one, P()).is_equivalent_to(single, 2)
    assert NamedSharding(one, P("x")).is_equivalent_to(single, 2)
    assert NamedSharding(mesh_x, P()).is_equivalent_to(NamedSharding(mesh_x, P(None)), 2)
    assert NamedSharding(mesh_ab, P(("a", "b"))).is_equivalent_to(ns, 1)
    assert not NamedSharding(mesh_ab, P("a")).is_equivalent_to(ns, 1)
    assert jnp.ones(3).sharding.is_equivalent_to(NamedSharding(one, P()), 1)


def test_named_sharding_errors(mesh_x):
    with pytest.raises(ValueError, match=r"Resource axis: y of P\('y',\) is not found in "
                                         r"mesh: \('x',\)."):
        NamedSharding(mesh_x, P("y"))
    with pytest.raises(Exception) as info:
        NamedSharding(mesh_x, P("x", "x"))
    assert type(info.value).__name__ == "DuplicateSpecError"
    assert str(info.value) == ("A single NamedSharding spec specification can map every mesh "
                               "axis to at most one positional dimension, but P('x', 'x') has "
                               "duplicate entries for `x`")
    with pytest.raises(AttributeError, match="'tuple' object has no attribute 'partitions'"):
        NamedSharding(mesh_x, ("x",))
    with pytest.raises(ValueError, match="Could not find memory addressable by device cpu"):
        NamedSharding(mesh_x, P("x"), memory_kind="foo")
    explicit = jax.make_mesh((4,), ("x",))
    with pytest.raises(ValueError, match="cannot contain `P.UNCONSTRAINED` when no mesh "
                                         "axis_types are `Auto`"):
        NamedSharding(explicit, P(P.UNCONSTRAINED))


def test_named_sharding_over_an_abstract_mesh(mesh_x):
    ns = NamedSharding(mesh_x.abstract_mesh, P("x"))
    assert repr(ns) == ("NamedSharding(mesh=AbstractMesh('x': 4, axis_types=(Auto,), "
                        "device_kind=cpu, num_cores=None, platform=cpu), spec=P('x',))")
    assert ns.memory_kind is None and ns.num_devices == 4 and ns.shard_shape((8,)) == (2,)
    assert not ns.is_fully_replicated
    with pytest.raises(ValueError, match="device_set is not implemented for "
                                         "`jax.sharding.AbstractMesh`."):
        ns.device_set


# ---------------------------------------------------------------------------------------------
# device_put

def test_device_put_to_a_single_device(devices):
    x = jnp.arange(4.0)
    y = jax.device_put(x, SingleDeviceSharding(devices[2]))
    assert repr(y.sharding) == "SingleDeviceSharding(device=CpuDevice(id=2), memory_kind=device)"
    assert y.committed and y.device == devices[2]
    pinned = jax.device_put(x, SingleDeviceSharding(devices[1], memory_kind="pinned_host"))
    assert pinned.sharding.memory_kind == "pinned_host" and pinned.device == devices[1]
    np.testing.assert_array_equal(pinned, x)


def test_device_put_over_a_mesh(devices, mesh_x):
    x = jnp.arange(8.0).reshape(4, 2)
    ns = NamedSharding(mesh_x, P("x"))
    y = jax.device_put(x, ns)
    assert repr(y.sharding) == ("NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), "
                                "spec=P('x',), memory_kind=device)")
    assert y.sharding == ns and y.device == ns and y.committed
    assert not y.is_fully_replicated and y.is_fully_addressable and y.devices() == set(devices)
    assert _layout(y) == [(i, (S(i, i + 1), S(None)), 0) for i in range(4)]
    shard = y.addressable_shards[1]
    assert shard.data.devices() == {devices[1]}
    np.testing.assert_array_equal(shard.data, [[2.0, 3.0]])
    np.testing.assert_array_equal(y, x)
    replicated = jax.device_put(x, NamedSharding(mesh_x, P()))
    assert replicated.is_fully_replicated
    assert [s.replica_id for s in replicated.addressable_shards] == [0, 1, 2, 3]
    gathered = jax.device_put(y, devices[3])
    assert repr(gathered.sharding) == ("SingleDeviceSharding(device=CpuDevice(id=3), "
                                       "memory_kind=device)")
    np.testing.assert_array_equal(gathered, x)
    assert jax.device_put(np.arange(4), ns).sharding == ns


def test_device_put_layouts_over_two_axes(mesh_ab):
    x = jnp.arange(8.0).reshape(4, 2)
    y = jax.device_put(x, NamedSharding(mesh_ab, P("b", "a")))
    assert _layout(y) == [(0, (S(0, 2), S(0, 1)), 0), (1, (S(2, 4), S(0, 1)), 0),
                          (2, (S(0, 2), S(1, 2)), 0), (3, (S(2, 4), S(1, 2)), 0)]
    y = jax.device_put(x, NamedSharding(mesh_ab, P(None, "b")))
    assert _layout(y) == [(0, (S(None), S(0, 1)), 0), (1, (S(None), S(1, 2)), 0),
                          (2, (S(None), S(0, 1)), 1), (3, (S(None), S(1, 2)), 1)]
    assert not y.is_fully_replicated


def test_device_put_over_a_one_device_mesh(devices):
    mesh = jax.make_mesh((1,), ("x",))
    y = jax.device_put(jnp.ones((4, 2)), NamedSharding(mesh, P("x")))
    assert repr(y.sharding) == ("NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), "
                                "spec=P('x',), memory_kind=device)")
    assert y.is_fully_replicated and y.device == devices[0] and y.committed
    assert _layout(y) == [(0, (S(None), S(None)), 0)]


def test_device_put_a_partition_spec(mesh_x):
    x = jnp.arange(4.0)
    with pytest.raises(ValueError, match=r"Please set a mesh via `jax.set_mesh` if a "
                                         r"PartitionSpec is passed to device_put"):
        jax.device_put(x, P("x"))
    with jax.set_mesh(mesh_x):
        assert jax.device_put(x, P("x")).sharding == NamedSharding(mesh_x, P("x"))


def test_device_put_pytrees_and_keys(devices, mesh_ab):
    x = jnp.arange(4.0)
    ns = NamedSharding(mesh_ab, P("a"))
    a, b = jax.device_put((x, x), (ns, None))
    assert a.sharding == ns and b.sharding == SingleDeviceSharding(devices[0])
    with pytest.raises(ValueError, match="device_put device specification must be a tree "
                                         "prefix of the corresponding value"):
        jax.device_put((x, x), (ns,))
    keys = jax.device_put(jax.random.split(jax.random.key(0), 4), ns)
    assert keys.sharding == ns
    np.testing.assert_array_equal(jax.random.key_data(keys),
                                  [[1797259609, 2579123966], [928981903, 3453687069],
                                   [4146024105, 2718843009], [2467461003, 3840466878]])


def test_device_put_errors(devices, mesh_x):
    ns = NamedSharding(mesh_x, P("x"))
    with pytest.raises(ValueError, match=r"Sharding NamedSharding\(mesh=Mesh\('x': 4, "
                                         r"axis_types=\(Auto,\)\), spec=P\('x',\), "
                                         r"memory_kind=device\) implies that array axis 0 is "
                                         r"partitioned 4 times, but the dimension size is 3"):
        jax.device_put(jnp.ones(3), ns)
    with pytest.raises(ValueError, match=r"One of device_put args is incompatible with its "
                                         r"sharding annotation NamedSharding.*: Sharding "
                                         r"NamedSharding.* is only valid for values of rank at "
                                         r"least 1, but was applied to a value of rank 0. For "
                                         r"scalars the PartitionSpec should be P\(\)"):
        jax.device_put(jnp.ones(()), ns)
    with pytest.raises(ValueError, match=r"`jax.device_put` only accepts `None`, "
                                         r"`jax.sharding.Sharding`, `jax.Device`, `Format`, "
                                         r"`jax.memory.Space` or a pytree of these values. "
                                         r"Received invalid value: cpu"):
        jax.device_put(jnp.ones(3), "cpu")
    with pytest.raises(ValueError, match="is_fully_addressable is not implemented for "
                                         "`jax.sharding.AbstractMesh`."):
        jax.device_put(jnp.ones(4), NamedSharding(mesh_x.abstract_mesh, P("x")))


def test_jit_computes_on_sharded_arrays(devices, mesh_ab):
    x = jnp.arange(8.0).reshape(4, 2)
    y = jax.device_put(x, NamedSharding(mesh_ab, P("b", "a")))
    np.testing.assert_array_equal(jax.jit(lambda a: a * 2)(y), x * 2)
    np.testing.assert_array_equal(jax.jit(lambda a, b: a + b)(y, x), x * 2)
    np.testing.assert_array_equal(jnp.sin(y), jnp.sin(x))
    np.testing.assert_allclose(jax.grad(lambda a: (a ** 2).sum())(y), 2 * x)


def test_pmap_results_carry_the_public_named_sharding(devices):
    out = jax.pmap(lambda v: v * 2)(jnp.arange(8.0).reshape(4, 2))
    assert type(out.sharding) is NamedSharding and isinstance(out.sharding.mesh, Mesh)
    assert out.sharding == NamedSharding(Mesh(np.array(devices), ("_internal_pmap_axis_name",)),
                                         P("_internal_pmap_axis_name"))
    assert _layout(out) == [(i, (S(i, i + 1), S(None)), 0) for i in range(4)]


# ---------------------------------------------------------------------------------------------
# with_sharding_constraint

def test_constraint_on_one_device_is_an_identity(devices):
    s = SingleDeviceSharding(devices[0])
    x = jnp.arange(4.0)

    def f(v):
        return wsc(v * 2, s)

    assert str(jax.make_jaxpr(f)(x)) == """\
{ lambda ; a:f32[4]. let
    b:f32[4] = mul a 2.0:f32[]
    c:f32[4] = sharding_constraint[
      context_mesh=Mesh()
      layout=None
      sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
      unconstrained_dims=frozenset({})
    ] b
  in (c,) }"""
    out = jax.jit(f)(x)
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0])
    assert out.sharding == s
    assert "sharding" not in jax.jit(f).lower(x).as_text()
    assert str(jax.make_jaxpr(jax.grad(lambda v: f(v).sum()))(x)) == """\
{ lambda ; a:f32[4]. let
    b:f32[4] = mul a 2.0:f32[]
    c:f32[4] = sharding_constraint[
      context_mesh=Mesh()
      layout=None
      sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
      unconstrained_dims=frozenset({})
    ] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[4] = broadcast_in_dim 1.0:f32[]
    e:f32[4] = sharding_constraint[
      context_mesh=Mesh()
      layout=None
      sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
      unconstrained_dims=frozenset({})
    ] d
    f:f32[4] = mul e 2.0:f32[]
  in (f,) }"""
    assert str(jax.make_jaxpr(jax.vmap(f))(jnp.ones((3, 4)))) == """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = mul a 2.0:f32[]
    c:f32[3,4] = sharding_constraint[
      context_mesh=Mesh()
      layout=None
      sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
      unconstrained_dims=frozenset({0})
    ] b
  in (c,) }"""


def test_constraint_over_a_mesh(devices, mesh_x):
    ns = NamedSharding(mesh_x, P("x"))
    x = jnp.arange(8.0)

    def f(v):
        return wsc(v * 2, ns)

    eager = f(x)
    assert eager.sharding == ns and eager.committed
    jitted = jax.jit(f)(x)
    assert jitted.sharding == ns and jitted.committed
    assert _layout(jitted) == [(i, (S(2 * i, 2 * i + 2),), 0) for i in range(4)]
    np.testing.assert_array_equal(jitted, x * 2)
    np.testing.assert_array_equal(jax.jit(jax.grad(lambda v: (f(v) ** 2).sum()))(x), 8 * x)
    batched = jax.vmap(f)(jnp.ones((3, 8)))
    np.testing.assert_array_equal(batched, 2 * np.ones((3, 8)))
    assert jax.jit(jax.vmap(f))(jnp.ones((3, 8))).sharding == NamedSharding(mesh_x, P(None, "x"))
    assert str(jax.make_jaxpr(jax.vmap(f))(jnp.ones((3, 8)))) == """\
{ lambda ; a:f32[3,8]. let
    b:f32[3,8] = mul a 2.0:f32[]
    c:f32[3,8] = sharding_constraint[
      context_mesh=Mesh()
      layout=None
      sharding=NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), spec=P(UNCONSTRAINED, 'x'), memory_kind=device)
      unconstrained_dims=frozenset({0})
    ] b
  in (c,) }"""


def test_constraint_batching_over_two_axes(mesh_ab):
    ns = NamedSharding(mesh_ab, P("a"))
    specs = {
        "in_axes=1": (jax.vmap(lambda v: wsc(v, ns), in_axes=1), (4, 3, 2),
                      "P('a', UNCONSTRAINED, None)", "frozenset({1})"),
        "replicated": (jax.vmap(lambda v: wsc(v, NamedSharding(mesh_ab, P())), in_axes=1),
                       (4, 3, 2), "P(None, UNCONSTRAINED, None)", "frozenset({1})"),
        "nested": (jax.vmap(jax.vmap(lambda v: wsc(v, ns))), (4, 3, 2),
                   "P(UNCONSTRAINED, UNCONSTRAINED, 'a')", "frozenset({0, 1})"),
        "spmd_axis_name": (jax.vmap(lambda v: wsc(v, ns), spmd_axis_name="b"), (4, 4, 2),
                           "P('b', 'a')", "frozenset({})"),
    }
    for name, (fun, shape, spec, dims) in specs.items():
        text = str(jax.make_jaxpr(fun)(jnp.ones(shape)))
        assert f"spec={spec}, memory_kind=device)" in text, name
        assert f"unconstrained_dims={dims}" in text, name
    out = jax.vmap(lambda v: wsc(v, ns), in_axes=1)(jnp.arange(24.0).reshape(4, 3, 2))
    assert out.shape == (3, 4, 2) and float(out.sum()) == 276.0


def test_constraint_results_of_a_program(devices, mesh_x):
    ns = NamedSharding(mesh_x, P("x"))
    x = jnp.arange(8.0).reshape(4, 2)
    a, b = jax.jit(lambda v: (wsc(v, ns), v + 1))(x)
    assert a.sharding == ns
    # The constraint splits `v` too, so `v + 1` is laid out like its operand, as in JAX.
    assert b.sharding == ns
    np.testing.assert_array_equal(b, x + 1)
    # A shape the blocks do not divide comes out of a program replicated (JAX's rule).
    uneven = jax.jit(lambda v: wsc(v * 2, ns))(jnp.ones(3))
    assert repr(uneven.sharding) == ("NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), "
                                     "spec=P(), memory_kind=device)")
    np.testing.assert_array_equal(uneven, [2.0, 2.0, 2.0])
    unconstrained = NamedSharding(mesh_x, P(P.UNCONSTRAINED))
    assert repr(jax.jit(lambda v: wsc(v, unconstrained))(jnp.arange(8.0)).sharding) == (
        "NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), spec=P(), memory_kind=device)")
    assert wsc(jnp.arange(8.0), unconstrained).sharding == NamedSharding(mesh_x, P())


def test_constraint_with_a_spec_under_set_mesh(mesh_x):
    x = jnp.arange(8.0)
    with jax.set_mesh(mesh_x):
        assert str(jax.make_jaxpr(lambda v: wsc(v, P("x")))(x)) == """\
{ lambda ; a:f32[8]. let
    b:f32[8] = sharding_constraint[
      context_mesh=AbstractMesh('x': 4, axis_types=(Auto,), device_kind=cpu, num_cores=None, platform=cpu)
      layout=None
      sharding=NamedSharding(mesh=AbstractMesh('x': 4, axis_types=(Auto,), device_kind=cpu, num_cores=None, platform=cpu), spec=P('x',))
      unconstrained_dims=frozenset({})
    ] a
  in (b,) }"""
        assert jax.jit(lambda v: wsc(v, P("x")))(x).sharding == NamedSharding(mesh_x, P("x"))
        # JAX raises TypeError here (its arrays created under set_mesh live on the mesh and
        # this one does not); arrays here stay on one device, so the mesh in context is read.
        assert wsc(x, P("x")).sharding == NamedSharding(mesh_x, P("x"))


def test_constraint_pytrees_and_scalars(devices):
    s = SingleDeviceSharding(devices[1])
    x = jnp.arange(4.0)
    out = wsc((x, {"a": x}), s)
    assert out[0].sharding == out[1]["a"].sharding == s
    scalar = wsc(3.0, s)
    assert isinstance(scalar, jax.Array) and float(scalar) == 3.0 and scalar.device == devices[1]


def test_constraint_errors(devices, mesh_x):
    x = jnp.arange(4.0)
    s = SingleDeviceSharding(devices[0])
    ns = NamedSharding(mesh_x, P("x"))
    with pytest.raises(TypeError, match="shardings leaf specifications are expected to be "
                                        "PartitionSpec instances or None, but got 3"):
        wsc(x, 3)
    with pytest.raises(TypeError, match="but got cpu:1"):
        wsc(x, devices[1])
    with pytest.raises(ValueError, match="One of with_sharding_constraint arguments got "
                                         "sharding None which is not allowed. Please only pass "
                                         "`jax.sharding.Sharding` instances."):
        wsc((x, x), (s, None))
    with pytest.raises(ValueError, match="with_sharding_constraint shardings specification "
                                         "must be a tree prefix of the corresponding value"):
        wsc((x, x), (s,))
    with pytest.raises(ValueError, match="implies that array axis 0 is partitioned 4 times, "
                                         "but the dimension size is 3"):
        wsc(jnp.ones(3), ns)
    with pytest.raises(ValueError, match="One of with_sharding_constraint arguments is "
                                         "incompatible with its sharding annotation"):
        wsc(jnp.ones(()), ns)
    with pytest.raises(RuntimeError, match="with_sharding_constraint requires a non-empty mesh "
                                           "in context if you are passing `PartitionSpec`s to "
                                           "shardings."):
        wsc(x, P("x"))
    explicit = NamedSharding(jax.make_mesh((4,), ("x",)), P("x"))
    with pytest.raises(ValueError, match=r"The spec of NamedSharding passed to "
                                         r"with_sharding_constraint can only refer to Auto axes "
                                         r"of the mesh. Got spec=P\('x',\) and mesh=AbstractMesh"
                                         r"\('x': 4, axis_types=\(Explicit,\), device_kind=cpu, "
                                         r"num_cores=None, platform=cpu\). You probably meant "
                                         r"to use `reshard` API\?"):
        jax.jit(lambda v: wsc(v, explicit))(x)


# ---------------------------------------------------------------------------------------------
# reshard, auto_axes, explicit_axes

def test_reshard(devices):
    mesh = jax.make_mesh((4,), ("x",))
    ns = NamedSharding(mesh, P("x"))
    x = jnp.arange(8.0)
    assert jax.reshard is jax.sharding.reshard
    assert jax.sharding.reshard(x, ns).sharding == ns
    assert str(jax.make_jaxpr(lambda v: jax.sharding.reshard(v, ns))(x)) == (
        "{ lambda ; a:f32[8]. let b:f32[8@x] = reshard a in (b,) }")
    out = jax.jit(lambda v: jax.sharding.reshard(v * 2, ns))(x)
    assert out.sharding == ns
    np.testing.assert_array_equal(out, x * 2)
    np.testing.assert_array_equal(jax.grad(lambda v: (jax.sharding.reshard(v, ns) ** 2).sum())(x),
                                  2 * x)
    np.testing.assert_array_equal(jax.vmap(lambda v: jax.sharding.reshard(v, ns))(
        jnp.ones((2, 8))), np.ones((2, 8)))
    with jax.set_mesh(mesh):
        assert jax.sharding.reshard(x, P("x")).sharding == ns


def test_reshard_errors(devices, mesh_x):
    x = jnp.arange(4.0)
    with pytest.raises(ValueError, match=r"PartitionSpec passed to reshard cannot contain axis "
                                         r"names that are of type Auto or Manual. Got "
                                         r"PartitionSpec: P\('x',\) with axis name: x of type: "
                                         r"AxisType.Auto."):
        jax.sharding.reshard(x, NamedSharding(mesh_x, P("x")))
    with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh "
                                         "context is not allowed."):
        jax.sharding.reshard(x, P("x"))
    with pytest.raises(ValueError, match="Reshard should only be used with out_shardings which "
                                         "are non-None and have a non-empty mesh. Got sharding "
                                         "None."):
        jax.sharding.reshard(x, None)
    with pytest.raises(TypeError, match="`out_sharding` argument of reshard only supports "
                                        "instances of `NamedSharding` or `PartitionSpec`."):
        jax.sharding.reshard(x, SingleDeviceSharding(devices[0]))


def test_auto_and_explicit_axes(mesh_x):
    x = jnp.arange(8.0)
    explicit = jax.make_mesh((4,), ("x",))
    with jax.set_mesh(explicit):
        out = jax.sharding.auto_axes(lambda v: v * 2, out_sharding=P("x"))(x)
        assert out.sharding == NamedSharding(explicit, P("x"))
        np.testing.assert_array_equal(out, x * 2)
        with pytest.raises(TypeError, match="Missing required keyword argument: "
                                            "'out_sharding'"):
            jax.sharding.auto_axes(lambda v: v * 2)(x)
    with jax.set_mesh(mesh_x):
        seen = []
        out = jax.sharding.explicit_axes(
            lambda v: seen.append(jax.sharding.get_abstract_mesh()) or v * 2,
            in_sharding=P("x"))(x)
        assert seen[0].axis_types == (AxisType.Explicit,)
        np.testing.assert_array_equal(out, x * 2)
    with pytest.raises(ValueError, match="Context mesh cannot be empty. Please use "
                                         "`jax.set_mesh` API to enter into a mesh context when "
                                         "using `explicit_axes` API."):
        jax.sharding.explicit_axes(lambda v: v, in_sharding=P("x"))(x)


# ---------------------------------------------------------------------------------------------
# The clients' uses

def test_equinox_filter_shard(devices):
    """equinox's filter_shard: with_sharding_constraint outside and inside jit, on a mesh of
    Auto axes (equinox's tests/test_sharding.py)."""
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    sharding = NamedSharding(mesh, PartitionSpec("x"))
    tree = (jnp.zeros(20), (jnp.ones(20), 4))
    arrays = [tree[0], tree[1][0]]
    placed = wsc(arrays, sharding)
    assert all(a.committed and a.sharding == sharding for a in placed)
    out = jax.jit(lambda t: wsc([v + 1 for v in t], sharding))(arrays)
    assert all(a.sharding == sharding for a in out)
    single = wsc(arrays, SingleDeviceSharding(devices[1]))
    assert all(a.devices() == {devices[1]} for a in single)


def test_chex_device_put_sharded(devices):
    """chex's variants: a one-axis Mesh of jax.devices() and a stacked device_put."""
    mesh = Mesh(np.array(devices), ("_device_put_sharded",))
    sharding = jax.NamedSharding(mesh, jax.P("_device_put_sharded"))
    x = jax.device_put(jnp.stack([jnp.full((2,), i) for i in range(4)]), sharding)
    assert [s.device for s in x.addressable_shards] == devices
    # chex's _check_sharding: the type's sharding is replicated, the array's spans devices.
    assert jax.typeof(x).sharding.is_fully_replicated and len(x.sharding.device_set) > 1


def test_optax_and_flax_read_the_type_sharding(mesh_x):
    """optax's tree_vdot and flax's Dropout read `jax.typeof(x).sharding`; flax's
    shard_value builds a NamedSharding over the abstract mesh in context."""
    x = jnp.arange(4.0)
    assert jax.typeof(x).sharding.mesh.are_all_axes_explicit is False
    key = jax.random.key(0)
    mask = jax.random.bernoulli(key, 0.5, (4,), out_sharding=jax.typeof(x).sharding)
    assert mask.shape == (4,)
    with jax.set_mesh(mesh_x):
        abstract = jax.sharding.get_abstract_mesh()
        value = wsc(x, NamedSharding(abstract, P("x")))
        assert value.sharding == NamedSharding(mesh_x, P("x"))
    explicit = jax.make_mesh((4,), ("x",))
    with jax.set_mesh(explicit):
        value = jax.sharding.reshard(x, NamedSharding(jax.sharding.get_abstract_mesh(), P("x")))
        assert value.sharding == NamedSharding(explicit, P("x"))


def test_tracers_have_no_sharding():
    seen = []

    def f(x):
        seen.append(hasattr(x, "sharding"))
        with pytest.raises(AttributeError, match="The 'sharding' attribute is not available on "
                                                 r"traced array with shape float32\[2\]. To "
                                                 "query sharding information on tracers, use "
                                                 r"`jax.typeof\(x\)`."):
            x.sharding
        seen.append(repr(jax.typeof(x).sharding))
        return x

    jax.jit(f)(jnp.ones(2))
    assert seen == [False, "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None,))"]
