"""jit and eager ops on arrays sharded over a mesh: the program is partitioned over the mesh's
devices (`compilation/spmd.py`), its results come back sharded, and the lowered and compiled
texts show the shardings as JAX 0.10.2 prints them."""
from __future__ import annotations

import re

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.runtime.sharding import IndivisibleError
from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 4)).astype(np.float32)
W = RNG.standard_normal((4, 8)).astype(np.float32)


@pytest.fixture(autouse=True)
def devices():
    with jax.config.override("jax_num_cpu_devices", 4):
        yield jax.devices()


@pytest.fixture
def mesh(devices):
    return Mesh(np.array(devices).reshape(2, 2), ("a", "b"))


def _put(x, mesh, *spec):
    return jax.device_put(x, NamedSharding(mesh, P(*spec)))


def _f(x, w):
    return jnp.tanh(x @ w).sum(axis=0)


def test_result_equals_the_unsharded_one_and_is_sharded_as_in_jax(mesh):
    x, w = _put(X, mesh, "a", None), _put(W, mesh, None, "b")
    out = jax.jit(_f)(x, w)
    # The sum over the split rows is two partial sums and an all-reduce: another order.
    np.testing.assert_allclose(np.asarray(out), np.asarray(jax.jit(_f)(X, W)), rtol=1e-5,
                               atol=1e-6)
    # Read off JAX 0.10.2 for the same program and shardings.
    assert repr(out.sharding) == ("NamedSharding(mesh=Mesh('a': 2, 'b': 2, axis_types=(Auto, "
                                  "Auto)), spec=P('b',), memory_kind=device)")
    blocks = {shard.device.id: np.asarray(shard.data) for shard in out.addressable_shards}
    np.testing.assert_allclose(blocks[0], np.asarray(out)[:4], rtol=1e-6)
    np.testing.assert_allclose(blocks[1], np.asarray(out)[4:], rtol=1e-6)


def test_lowered_text_carries_the_shardings_as_jax_prints_them(mesh):
    text = jax.jit(_f).lower(_put(X, mesh, "a", None), _put(W, mesh, None, "b")).as_text()
    # Lines read off JAX 0.10.2's `.lower(...).as_text()`.
    assert text.startswith("module @jit__f attributes {mhlo.num_partitions = 4 : i32, "
                           "mhlo.num_replicas = 1 : i32} {\n")
    assert ('  sdy.mesh @mesh = <["a"=2, "b"=2]> {stablehlo.mesh = {axes = [{name = "a", '
            'size = 2 : i64}, {name = "b", size = 2 : i64}]}}\n') in text
    assert ('func.func public @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, '
            '[{"a"}, {}]>}, %arg1: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, '
            '[{}, {"b"}]>}) -> (tensor<8xf32> {jax.result_info = "result"})') in text


def test_compiled_text_is_the_per_device_program(mesh):
    compiled = jax.jit(_f).lower(_put(X, mesh, "a", None), _put(W, mesh, None, "b")).compile()
    text = compiled.as_text()
    # The header read off JAX 0.10.2's `.compile().as_text()`.
    assert text.startswith(
        "HloModule jit__f, is_scheduled=true, entry_computation_layout={(f32[2,4]{1,0}, "
        "f32[4,4]{1,0})->f32[4]{0}}, allow_spmd_sharding_propagation_to_parameters="
        "{false,false}, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4")
    assert text.count("all-reduce(") == 1
    # The entry and its parameters as XLA's partitioner names them, and their shardings, as
    # JAX 0.10.2's compiled module prints them.
    assert "ENTRY %main.0_spmd (param: f32[2,4], param.1: f32[4,4]) -> f32[4] {" in text
    assert ("  %param = f32[2,4]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] "
            "last_tile_dim_replicate}") in text
    assert ("  %param.1 = f32[4,4]{1,0} parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) "
            "last_tile_dim_replicate}") in text
    # A collective of a partitioned program: on a channel, over global device ids (XLA's
    # text for a dot's sum; groups over an axis of the mesh XLA may also print as
    # `mesh['axis_0'=2,'axis_1'=2] {'axis_0'}`).
    assert re.search(r"all-reduce\(%[\w.]+\), channel_id=1, replica_groups=\{\{0,2\},\{1,3\}\}, "
                     r"use_global_device_ids=true, to_apply=%", text)


def test_each_sharding_of_the_inputs_is_its_own_program(mesh):
    f = jax.jit(_f)
    want = np.asarray(f(X, W))
    for x_spec, w_spec in [(("a", None), (None, "b")), ((None, "a"), ("a", None)),
                           ((("a", "b"), None), (None, None)), ((None, None), ("b", "a"))]:
        out = f(_put(X, mesh, *x_spec), _put(W, mesh, *w_spec))
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-6)
    # Unsharded inputs again: the program of one device.
    assert f(X, W).sharding.num_devices == 1


def test_grad_of_a_sharded_training_step_equals_the_unsharded_one(mesh):
    rng = np.random.default_rng(1)
    params = {"w1": rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
              "w2": rng.standard_normal((16, 4)).astype(np.float32) * 0.3}
    x = rng.standard_normal((8, 8)).astype(np.float32)
    y = rng.standard_normal((8, 4)).astype(np.float32)

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    @jax.jit
    def step(p, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return value, jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)

    sharded = {"w1": _put(params["w1"], mesh, None, "b"), "w2": _put(params["w2"], mesh, "b", None)}
    xs, ys = _put(x, mesh, "a", None), _put(y, mesh, "a", None)
    want_p, got_p = params, sharded
    for _ in range(3):
        want_loss, want_p = step(want_p, x, y)
        got_loss, got_p = step(got_p, xs, ys)
        np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-5)
    for name in params:
        np.testing.assert_allclose(np.asarray(got_p[name]), np.asarray(want_p[name]),
                                   rtol=1e-4, atol=1e-6)
    assert got_p["w1"].sharding.num_devices == 4


def test_inputs_over_two_meshes_of_the_same_devices_meet_on_the_first(devices):
    """As in JAX 0.10.2: P('c') on Mesh('c': 4) is P(('a', 'b')) on the 2x2 mesh of the same
    devices (its result's sharding read off JAX)."""
    one = Mesh(np.array(devices).reshape(2, 2), ("a", "b"))
    other = Mesh(np.array(devices).reshape(4), ("c",))
    out = jax.jit(lambda x, y: x + y)(_put(X, one, "a", None), _put(X, other, "c", None))
    assert out.sharding == NamedSharding(one, P(("a", "b")))
    np.testing.assert_array_equal(np.asarray(out), X * 2)
    shuffled = Mesh(np.array(devices)[::-1].reshape(4), ("c",))
    with pytest.raises(ValueError, match="incompatible devices"):
        jax.jit(lambda x, y: x + y)(_put(X, one, "a", None), _put(X, shuffled, "c", None))


@pytest.mark.parametrize("fun_name,call", [("_add", lambda x, y: jax.jit(_add)(x, y)),
                                           ("add", lambda x, y: x + y)])
def test_arrays_on_one_device_do_not_mix_with_arrays_over_a_mesh(mesh, devices, fun_name, call):
    """In jit and in eager ops (`x + y`), with JAX 0.10.2's message."""
    x = _put(X, mesh, "a", None)
    y = jax.device_put(X, devices[1])
    with pytest.raises(ValueError, match=re.escape(
            f"Received incompatible devices for jitted computation. Got argument x of "
            f"{fun_name} with shape float32[4,4] and with device ids [0, 1, 2, 3] on platform "
            f"CPU and argument y of {fun_name} with shape float32[4,4] and with device ids [1] "
            "on platform CPU")):
        call(x, y)
    # Uncommitted arrays join the mesh.
    assert call(x, jnp.asarray(X)).sharding.spec == P("a")


# Result specs read off JAX 0.10.2 for f(x), x f32[8, 8] sharded P('a', 'b') on the 2x2 mesh.
RESULT_SPECS = [
    (lambda x: jnp.sin(x) @ x.T, P("a")),
    (lambda x: x.reshape(64), P("a")),
    (lambda x: x.T, P("b", "a")),
    (lambda x: jnp.sum(x), P()),
    (lambda x: x[:, :3], P("a")),
    (lambda x: jnp.exp(x) + 1.0, P("a", "b")),
]


@pytest.mark.parametrize("index", range(len(RESULT_SPECS)))
def test_result_shardings_as_in_jax(mesh, index):
    f, spec = RESULT_SPECS[index]
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    out = jax.jit(f)(_put(x, mesh, "a", "b"))
    assert out.sharding.spec == spec
    np.testing.assert_allclose(np.asarray(out), np.asarray(jax.jit(f)(x)), rtol=1e-5,
                               atol=1e-6)


def test_updated_parameters_keep_their_shardings(mesh):
    """A training step's new parameters have the shardings the old ones came with, and its
    loss is replicated, as in JAX 0.10.2 (specs read off it)."""
    rng = np.random.default_rng(1)
    p = {"w1": _put(rng.standard_normal((8, 16)).astype(np.float32), mesh, None, "b"),
         "w2": _put(rng.standard_normal((16, 4)).astype(np.float32), mesh, "b", None)}
    x = _put(rng.standard_normal((8, 8)).astype(np.float32), mesh, "a", None)
    y = _put(rng.standard_normal((8, 4)).astype(np.float32), mesh, "a", None)

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    value, grads = jax.jit(jax.value_and_grad(loss))(p, x, y)
    assert value.sharding.spec == P()
    assert grads["w1"].sharding.spec == P(None, "b")
    assert grads["w2"].sharding.spec == P("b")


# Specs of eager results on x f32[8, 8] sharded P('a', 'b'), read off JAX 0.10.2: computation
# follows the data.
EAGER_SPECS = [
    (lambda x: jnp.sin(x) * 2 + 1, P("a", "b")),
    (lambda x: jnp.sum(x, axis=0), P("b")),
    (lambda x: x @ x, P("a", "b")),
    (lambda x: x.T, P("b", "a")),
    (lambda x: x[2:5], P(None, "b")),
    (lambda x: jnp.sum(x), P()),
]


@pytest.mark.parametrize("index", range(len(EAGER_SPECS)))
def test_eager_ops_on_sharded_arrays_stay_sharded(mesh, index):
    f, spec = EAGER_SPECS[index]
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    out = f(_put(x, mesh, "a", "b"))
    assert out.sharding.spec == spec and out.sharding.mesh == mesh
    np.testing.assert_allclose(np.asarray(out), np.asarray(f(jnp.asarray(x))), rtol=1e-5,
                               atol=1e-6)


def test_in_and_out_shardings_as_in_jax(mesh):
    """Read off JAX 0.10.2: host inputs are cut as `in_shardings` say, results laid out as
    `out_shardings` say (the other result's sharding propagated), the lowered text shows
    both."""
    s1, s2 = NamedSharding(mesh, P("a", None)), NamedSharding(mesh, P(None, "b"))
    f = jax.jit(lambda x, y: (x + y, x * 2), in_shardings=(s1, None), out_shardings=(s2, None))
    ones = np.ones((4, 4), np.float32)
    added, doubled = f(ones, ones * 3)
    assert added.sharding.spec == P(None, "b")
    assert doubled.sharding.spec == P("a")
    np.testing.assert_array_equal(np.asarray(added), ones * 4)
    np.testing.assert_array_equal(np.asarray(doubled), ones * 2)
    text = f.lower(ones, ones).as_text()
    assert ('func.func public @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, '
            '[{"a"}, {}]>}, %arg1: tensor<4x4xf32>) -> (tensor<4x4xf32> {jax.result_info = '
            '"result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}, tensor<4x4xf32> '
            '{jax.result_info = "result[1]"})') in text


def test_a_committed_argument_laid_out_otherwise_is_an_error(mesh, devices):
    s1 = NamedSharding(mesh, P("a", None))
    f = jax.jit(lambda x: x * 2, in_shardings=s1)
    # JAX 0.10.2's message.
    with pytest.raises(ValueError, match=r"Sharding passed to jit does not match the sharding on "
                       r"the respective arg\. Got jit sharding: NamedSharding\(mesh=Mesh\('a': 2, "
                       r"'b': 2, axis_types=\(Auto, Auto\)\), spec=P\('a', None\), memory_kind="
                       r"device\),\narg sharding: SingleDeviceSharding\(device=CpuDevice\(id=1\), "
                       r"memory_kind=device\) for arg type: float32\[4,4\]"):
        f(jax.device_put(np.ones((4, 4), np.float32), devices[1]))
    # Uncommitted arrays and host values are cut as given.
    assert f(jnp.ones((4, 4))).sharding.spec == P("a")


def test_out_shardings_alone_partition_the_program(mesh):
    f = jax.jit(lambda x: jnp.exp(x) @ x, out_shardings=NamedSharding(mesh, P("b", "a")))
    x = np.arange(16, dtype=np.float32).reshape(4, 4) / 16
    out = f(x)
    assert out.sharding.spec == P("b", "a")
    np.testing.assert_allclose(np.asarray(out), np.exp(x) @ x, rtol=1e-5)


def test_partition_specs_name_axes_of_the_mesh_in_context(mesh):
    """As in JAX 0.10.2 (its messages and result sharding)."""
    f = jax.jit(lambda x: x * 2, in_shardings=P("a"), out_shardings=P(None, "b"))
    with pytest.raises(RuntimeError, match=r"jit requires a non-empty mesh in context if you "
                       r"are passing `PartitionSpec`s to in_shardings\."):
        f(np.ones((4, 4), np.float32))
    with jax.set_mesh(mesh):
        out = f(np.ones((4, 4), np.float32))
    assert out.sharding == NamedSharding(mesh, P(None, "b"))
    with pytest.raises(TypeError, match="in_shardings leaf specifications are expected to be "
                       "PartitionSpec instances or None, but got 3"):
        jax.jit(lambda x: x, in_shardings=3)


def test_sharding_constraints_partition_the_program_as_in_jax(mesh):
    """A constraint inside jit on unsharded inputs: the lowered text (Shardy's
    `sdy.sharding_constraint`) and the results' specs read off JAX 0.10.2."""
    s = NamedSharding(mesh, P("a", "b"))

    def f(x):
        y = jax.lax.with_sharding_constraint(jnp.sin(x), s)
        return (y @ y).sum(axis=1), jnp.cos(y)

    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    summed, cosine = jax.jit(f)(x)
    assert summed.sharding.spec == P("a") and cosine.sharding.spec == P("a", "b")
    np.testing.assert_allclose(np.asarray(summed), (np.sin(x) @ np.sin(x)).sum(axis=1),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(cosine), np.cos(np.sin(x)), rtol=1e-6)
    text = jax.jit(f).lower(x).as_text()
    assert text.startswith("module @jit_f attributes {mhlo.num_partitions = 4 : i32, ")
    assert ('%1 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {"b"}]> : tensor<8x8xf32>'
            in text)


def test_a_constraint_reshards_a_sharded_input(mesh):
    g = jax.jit(lambda x: jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P(None, "b"))))
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = g(_put(x, mesh, "a", None))
    assert out.sharding.spec == P(None, "b")
    np.testing.assert_array_equal(np.asarray(out), x * 2)


def test_lowering_shape_dtype_structs_with_shardings(mesh):
    spec = jax.ShapeDtypeStruct((4, 4), jnp.float32, sharding=NamedSharding(mesh, P("b", "a")))
    text = jax.jit(lambda x: x * 2).lower(spec).as_text()
    assert '%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {"a"}]>}' in text


def test_sharded_mlp_example_runs():
    """`examples/sharded_mlp.py`: its loss curve equals the one-device run's (it checks) and
    its step needs the collectives JAX 0.10.2's does for the same shardings (2 all-reduces,
    no all-gather: read off JAX's compiled step)."""
    import pathlib
    import subprocess
    import sys
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "sharded_mlp.py"
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "collectives in the partitioned step: {'all-reduce': 2, 'all-gather': 0}" in out.stdout
    assert "w1: P(None, 'model'), shards of shape (16, 16) on 4 devices" in out.stdout


def test_a_replicated_scalar_over_the_mesh(mesh):
    """0-d blocks stay 0-d (NumPy's ascontiguousarray would make them 1-d)."""
    scalar = _put(np.float32(3.0), mesh)
    doubled = scalar * 2.0
    assert doubled.shape == () and float(doubled) == 6.0
    assert doubled.sharding.spec == P()


def _add(x, y):
    return x + y


# jit in_shardings/out_shardings that cannot lay their values out: JAX 0.10.2's errors.
BAD_SHARDINGS = [
    (lambda s: jax.jit(_add, in_shardings=(s("a"), None)), (5,), IndivisibleError,
     r"implies that array axis 0 is partitioned 2 times, but the dimension size is 5 \(full "
     r"shape: \(5,\), per-dimension tiling factors: \[2\] should evenly divide the shape\)"),
    (lambda s: jax.jit(_add, out_shardings=s("a")), (5,), IndivisibleError,
     r"implies that array axis 0 is partitioned 2 times"),
    (lambda s: jax.jit(_add, in_shardings=(s("a"),)), (4,), ValueError,
     r"pjit in_shardings specification must be a tree prefix of the positional arguments "
     r"tuple\. .* But pjit in_shardings is the wrong length: got a tuple or list of length 1 "
     r"for an args tuple of length 2\."),
    (lambda s: jax.jit(_add, in_shardings=(s("a", "b"), None)), (4,), ValueError,
     r"One of pjit arguments with pytree key path x is incompatible with its sharding "
     r"annotation NamedSharding\(.*\): Sharding NamedSharding\(.*\) is only valid for values "
     r"of rank at least 2, but was applied to a value of rank 1\."),
    (lambda s: jax.jit(_add, out_shardings=(s("a"), None)), (4,), ValueError,
     r"pytree structure error: different types at key path\s+pjit out_shardings"),
]


@pytest.mark.parametrize("index", range(len(BAD_SHARDINGS)))
def test_shardings_that_cannot_lay_out_their_values(mesh, index):
    make, shape, error, message = BAD_SHARDINGS[index]
    f = make(lambda *spec: NamedSharding(mesh, P(*spec)))
    ones = np.ones(shape, np.float32)
    with pytest.raises(error, match=message):
        f(ones, ones)


def test_vmap_over_a_sharded_axis_keeps_it_sharded(mesh):
    """Eager and jitted vmap, and vmap of grad, over rows split along 'a': P('a',) as in
    JAX 0.10.2."""
    x = _put(np.arange(32, dtype=np.float32).reshape(8, 4), mesh, "a")
    f = lambda row: jnp.sin(row) @ jnp.ones((4, 3))
    assert jax.vmap(f)(x).sharding.spec == P("a")
    assert jax.jit(jax.vmap(f))(x).sharding.spec == P("a")
    g = jax.jit(jax.vmap(jax.grad(lambda row: jnp.sum(jnp.tanh(row) ** 2))))
    out = g(x)
    assert out.sharding.spec == P("a")
    # The same program on one device (1 - tanh² cancels: a float32 NumPy formula differs).
    rows = np.arange(32, dtype=np.float32).reshape(8, 4)
    np.testing.assert_allclose(np.asarray(out), np.asarray(g(rows)), rtol=1e-6, atol=1e-9)


def test_memory_analysis_is_per_device(mesh):
    """A f32[64, 32] split 2x2: 2048 argument and output bytes per device, as JAX 0.10.2's
    `memory_analysis()` reports."""
    x = _put(np.ones((64, 32), np.float32), mesh, "a", "b")
    analysis = jax.jit(lambda v: jnp.sin(v) * 2).lower(x).compile().memory_analysis()
    assert analysis.argument_size_in_bytes == 2048
    assert analysis.output_size_in_bytes == 2048


def test_a_constraint_inside_a_loop_alone_runs_the_program_whole(mesh):
    """Loops are not split yet: a constraint in a scan's body, with nothing else sharded, is
    dropped and the program runs on one device, its values right (it had crashed)."""
    s = NamedSharding(mesh, P("a"))

    def f(x):
        return jax.lax.scan(lambda c, _: (jax.lax.with_sharding_constraint(c * 2, s), None),
                            x, None, length=3)[0]

    np.testing.assert_array_equal(np.asarray(jax.jit(f)(np.ones((4, 4), np.float32))),
                                  np.full((4, 4), 8.0, np.float32))


def test_devices_hold_only_their_blocks(mesh):
    # device_put cuts the value: each device holds its block and nothing else; a partitioned
    # program reads the blocks as they are and its results are blocks too. The whole value
    # is assembled (once) only when something reads it on the host.
    x = _put(X, mesh, "a", "b")
    assert x._buffer is None and [b.shape for b in x._blocks] == [(2, 2)] * 4
    y = jax.jit(lambda v: jnp.tanh(v) * 2)(x)
    assert x._buffer is None and y._buffer is None
    assert [b.shape for b in y._blocks] == [(2, 2)] * 4
    shards = {s.device.id: (s.index, np.asarray(s.data)) for s in y.addressable_shards}
    np.testing.assert_allclose(shards[1][1], np.tanh(X[:2, 2:]) * 2, rtol=1e-6)
    assert shards[1][0] == (slice(0, 2, None), slice(2, 4, None))
    np.testing.assert_allclose(np.asarray(y), np.tanh(X) * 2, rtol=1e-6)
    assert y._buffer is not None  # kept, as JAX keeps an array's host copy
    # A replicated layout gives every device its own copy.
    z = _put(X, mesh)
    assert len(z._blocks) == 4 and all(b.shape == (4, 4) for b in z._blocks)
    assert len({id(b) for b in z._blocks}) == 4


def test_conversions_keep_the_operands_layout(mesh):
    # As JAX 0.10.2: an eager dtype conversion (astype, an integer's sin) is laid out as its
    # operand; one on a device it is committed to stays there.
    x = jax.device_put(np.arange(8), NamedSharding(mesh, P("a")))
    assert x.astype(np.float32).sharding == x.sharding
    assert jnp.sin(x).sharding == x.sharding
    d = jax.device_put(np.arange(3), jax.devices()[2])
    assert d.astype(np.float32).devices() == {jax.devices()[2]}
    assert not jnp.arange(3).astype(np.float32).committed


def test_arrays_on_meshes_of_other_devices_give_jaxs_error():
    with jax.config.override("jax_num_cpu_devices", 8):
        d = jax.devices()
        y = jax.device_put(jnp.ones(8), NamedSharding(Mesh(np.array(d[:4]), "x"), P("x")))
        z = jax.device_put(jnp.ones(8), NamedSharding(Mesh(np.array(d[4:]), "x"), P("x")))
        with pytest.raises(ValueError) as info:
            y + z
    # Real JAX 0.10.2's message.
    assert str(info.value) == (
        "Received incompatible devices for jitted computation. Got argument x of add with "
        "shape float32[8] and with device ids [0, 1, 2, 3] on platform CPU and argument y of "
        "add with shape float32[8] and with device ids [4, 5, 6, 7] on platform CPU")


def test_a_constraint_by_partition_spec_uses_the_mesh_in_context():
    # Real JAX 0.10.2 gives P('X',): the bare spec names the axes of jax.set_mesh's mesh.
    with jax.config.override("jax_num_cpu_devices", 8):
        mesh = jax.make_mesh((4, 2), ("X", "Y"), (jax.sharding.AxisType.Auto,) * 2)
        with jax.set_mesh(mesh):
            x = jax.device_put(jnp.arange(32.0).reshape(8, 4), P(None, "X"))
            y = jax.device_put(jnp.arange(64.0).reshape(4, 16), P("X", None))
            f = jax.jit(lambda x, y: jax.lax.with_sharding_constraint(jnp.dot(x, y),
                                                                      P("X", None)))
            out = f(x, y)
            assert out.sharding.spec == P("X")
            assert "sdy.sharding_constraint" in f.lower(x, y).as_text()
        np.testing.assert_allclose(np.asarray(out), np.arange(32.0).reshape(8, 4)
                                   @ np.arange(64.0).reshape(4, 16))
