"""The compiler's view of shardings (`hlo/sharding.py`): JAX 0.10.2's printed forms, block
layout agreeing with the runtime's `NamedSharding`, collective groups."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import justjax
from justjax._src.hlo.sharding import MeshShape, TensorSharding, replicated
from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = MeshShape.iota([("a", 2), ("b", 2)])

# Read off JAX 0.10.2 on 4 CPU devices, Mesh(devices.reshape(2, 2), ("a", "b")), an f32[4, 8]
# argument: the `sharding=` of the compiled module's parameter and the lowered argument's
# `sdy.sharding`.
RECORDED = [
    (("a",), (), "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", '[{"a"}, {}]'),
    ((), ("a",), "{devices=[1,2,2]<=[4] last_tile_dim_replicate}", '[{}, {"a"}]'),
    (("b",), (), "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}", '[{"b"}, {}]'),
    (("a", "b"), (), "{devices=[4,1]<=[4]}", '[{"a", "b"}, {}]'),
    (("b",), ("a",), "{devices=[2,2]<=[2,2]T(1,0)}", '[{"b"}, {"a"}]'),
    ((), (), "{replicated}", "[{}, {}]"),
    (("a",), ("b",), "{devices=[2,2]<=[4]}", '[{"a"}, {"b"}]'),
    (("b", "a"), (), "{devices=[4,1]<=[2,2]T(1,0)}", '[{"b", "a"}, {}]'),
]


@pytest.mark.parametrize("dim0,dim1,hlo,sdy", RECORDED)
def test_printed_as_jax_prints_it(dim0, dim1, hlo, sdy):
    sharding = TensorSharding(MESH, (dim0, dim1))
    assert sharding.hlo_text() == hlo
    assert sharding.sdy_text() == f"#sdy.sharding<@mesh, {sdy}>"


def test_mesh_text():
    # Read off JAX 0.10.2's lowered module.
    assert MESH.sdy_text() == (
        'sdy.mesh @mesh = <["a"=2, "b"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 '
        ': i64}, {name = "b", size = 2 : i64}]}}')
    shuffled = MeshShape((("x", 2), ("y", 2)), (1, 0, 3, 2))
    assert shuffled.sdy_text().startswith(
        'sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[1, 0, 3, 2]>')
    # Devices not in order are listed in the order the blocks take them.
    assert TensorSharding(shuffled, (("y",), ())).hlo_text() == (
        "{devices=[2,1,2]1,3,0,2 last_tile_dim_replicate}")


def _specs(names):
    """Every way to give a rank-2 value's dimensions disjoint ordered sets of `names`."""
    choices = [()]
    for k in range(1, len(names) + 1):
        choices += list(itertools.permutations(names, k))
    for first, second in itertools.product(choices, repeat=2):
        if not set(first) & set(second):
            yield first, second


@pytest.fixture
def four_devices():
    with justjax.config.override("jax_num_cpu_devices", 4):
        yield justjax.devices()


@pytest.mark.parametrize("shape", [(2, 2), (4, 1), (1, 4), (2, 1)])
def test_blocks_agree_with_named_sharding(shape, four_devices):
    """Each device's block, by `block_index` and `shard_shape`, is the one the runtime's
    NamedSharding gives it, for every spec of a rank-2 value over the mesh."""
    devices = four_devices[:int(np.prod(shape))]
    names = ("a", "b")
    mesh = Mesh(np.array(devices).reshape(shape), names)
    compiler_mesh = MeshShape.iota(list(zip(names, shape, strict=True)))
    value_shape = (8, 12)
    for dims in _specs(names):
        named = NamedSharding(mesh, P(*(d if d else None for d in dims)))
        sharding = TensorSharding(compiler_mesh, dims)
        block = sharding.shard_shape(value_shape)
        assert block == named.shard_shape(value_shape)
        indices = named.devices_indices_map(value_shape)
        for position, device in enumerate(mesh.devices.reshape(-1)):
            where = sharding.block_index(position)
            want = tuple((s.start or 0) // b for s, b in zip(indices[device], block, strict=True))
            assert where == want, (dims, position)


def test_groups_are_the_devices_a_collective_over_axes_spans():
    assert MESH.groups(["a"]).tolist() == [[0, 2], [1, 3]]
    assert MESH.groups(["b"]).tolist() == [[0, 1], [2, 3]]
    assert MESH.groups(["a", "b"]).tolist() == [[0, 1, 2, 3]]
    assert MESH.groups(["b", "a"]).tolist() == [[0, 2, 1, 3]]
    assert MESH.groups([]).tolist() == [[0], [1], [2], [3]]


def test_replicated_axes_and_partial_sums():
    sharding = TensorSharding(MESH, (("a",), ()), partial=("b",))
    assert sharding.replicated_axes == ()
    assert not sharding.is_replicated
    assert sharding.sdy_text() == '#sdy.sharding<@mesh, [{"a"}, {}], unreduced={"b"}>'
    with pytest.raises(ValueError, match="partial sums"):
        sharding.hlo_text()
    assert replicated(MESH, 3).is_replicated
    assert replicated(MESH, 3).replicated_axes == ("a", "b")


def test_uneven_blocks_are_padded():
    assert TensorSharding(MESH, (("a", "b"), ())).shard_shape((6, 3)) == (2, 3)


@pytest.mark.parametrize("dims,partial,message", [
    ((("c",), ()), (), "not in the mesh"),
    ((("a",), ("a",)), (), "once at most"),
    ((("a",), ()), ("a",), "once at most"),
])
def test_bad_shardings(dims, partial, message):
    with pytest.raises(ValueError, match=message):
        TensorSharding(MESH, dims, partial)


def test_bad_meshes():
    with pytest.raises(ValueError, match="holds 4 devices, not 3"):
        MeshShape((("a", 2), ("b", 2)), (0, 1, 2))
    with pytest.raises(ValueError, match="not in the mesh"):
        MESH.groups(["z"])
