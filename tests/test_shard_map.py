"""`jax.shard_map` over meshes of several axes: per-device functions with collectives, run
eagerly and inside jitted (and automatically partitioned) programs, under grad, vmap and scan,
with JAX 0.10.2's checks and errors. Expected values were read off real JAX 0.10.2 on 4
virtual CPU devices for the same programs."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
from justjax._src.runtime.sharding import DuplicateSpecError

BACKENDS = ["cpu", "reference"]


@pytest.fixture(autouse=True)
def devices():
    with jax.config.override("jax_num_cpu_devices", 4):
        yield jax.devices()


def _mesh(shape=(2, 2), names=("x", "y"), devices=None):
    devices = np.array(devices if devices is not None else jax.devices())
    return Mesh(devices.reshape(shape), names, axis_types=(AxisType.Auto,) * len(shape))


# ---------------------------------------------------------------------------------------------
# Results: per-device functions equal their NumPy meaning on every mesh and both backends.

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(1, 4), (2, 2), (4, 1)])
def test_tensor_parallel_matmul_equals_numpy(shape, backend):
    mesh = _mesh(shape)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 8)).astype(np.float32)
    b = rng.standard_normal((8, 4)).astype(np.float32)

    def matmul(a_block, b_block):  # rows split over x, the contraction over y
        return lax.psum(a_block @ b_block, "y")

    f = jax.shard_map(matmul, mesh=mesh, in_specs=(P("x", "y"), P("y", None)),
                      out_specs=P("x", None))
    with jax.config.override("jax_platforms", backend):
        out = f(a, b)
        np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-5, atol=1e-5)
        assert out.sharding == NamedSharding(mesh, P("x", None))
        np.testing.assert_allclose(np.asarray(jax.jit(f)(a, b)), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spec", [P(), P("x"), P("y"), P("x", "y"), P("y", "x"),
                                  P(("x", "y")), P(("y", "x")), P(None, ("x", "y"))])
def test_blocks_are_cut_and_joined_as_the_spec_says(spec, backend):
    mesh = _mesh()
    x = np.arange(64, dtype=np.float32).reshape(8, 8)

    def tag(block):  # each device adds its linear index over both axes, times 100
        return block + 100.0 * lax.axis_index(("x", "y"))

    f = jax.shard_map(tag, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
    entries = [() if e is None else (e,) if isinstance(e, str) else e
               for e in list(spec) + [None] * (2 - len(spec))]
    used = {a for axes in entries for a in axes}
    want = x.copy()
    for ix in range(2):
        for iy in range(2):
            coords = {"x": ix, "y": iy}
            # Along axes the spec leaves out, JAX keeps the block of the device at 0.
            if any(coords[a] for a in coords if a not in used):
                continue
            cut = []
            for axes in entries:
                block, count = 0, 1
                for axis in axes:
                    block, count = 2 * block + coords[axis], 2 * count
                cut.append(slice(block * 8 // count, (block + 1) * 8 // count))
            want[tuple(cut)] = x[tuple(cut)] + 100 * (2 * ix + iy)
    with jax.config.override("jax_platforms", backend):
        np.testing.assert_array_equal(np.asarray(f(x)), want)
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), want)


def test_collectives_over_one_and_both_axes():
    mesh = _mesh()
    # Each line's value was printed by real JAX 0.10.2 for the same call.
    got = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P(("x", "y")),
                        out_specs=P(("y", "x")))(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(got), [0, 4, 2, 6])
    assert repr(got.sharding) == ("NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, "
                                  "Auto)), spec=P(('y', 'x'),), memory_kind=device)")
    got = jax.shard_map(lambda a: lax.psum(a, ("x", "y")), mesh=mesh, in_specs=P(("x", "y")),
                        out_specs=P())(jnp.arange(8.0))
    np.testing.assert_array_equal(np.asarray(got), [12, 16])
    got = jax.shard_map(lambda a: a * lax.axis_index("x"), mesh=mesh, in_specs=P(),
                        out_specs=P("x"))(jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(got), [0, 0, 1, 1])
    got = jax.shard_map(lambda a: a * lax.axis_index("x"), mesh=mesh, in_specs=P(),
                        out_specs=P("y"), check_vma=False)(jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(got), [0, 0, 0, 0])

    def body(a):
        s = lax.psum(a, "x")
        return (lax.psum_scatter(s, "y", tiled=True), lax.ppermute(a, "x", [(0, 1), (1, 0)]),
                lax.pmax(a, "x"))

    t, u, m = jax.shard_map(body, mesh=mesh, in_specs=P(), out_specs=(P("y"), P("x"), P()))(
        jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(t), [0, 4, 8, 12])
    np.testing.assert_array_equal(np.asarray(u), [0, 1, 2, 3, 0, 1, 2, 3])
    np.testing.assert_array_equal(np.asarray(m), [0, 1, 2, 3])
    got = jax.shard_map(lambda a: lax.all_gather(a, "x"), mesh=mesh, in_specs=P("x"),
                        out_specs=P("x"))(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(got), [[0, 1], [2, 3], [0, 1], [2, 3]])
    got = jax.shard_map(lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True), mesh=mesh,
                        in_specs=P("x"), out_specs=P("x"))(jnp.arange(8.0))
    np.testing.assert_array_equal(np.asarray(got), [0, 1, 4, 5, 2, 3, 6, 7])


def test_a_mesh_of_devices_out_of_order():
    mesh = _mesh(devices=jax.devices()[::-1])
    f = jax.shard_map(lambda a: a * (lax.axis_index(("x", "y")) + 1) + lax.psum(a, "x"),
                      mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    x = jnp.arange(16.0).reshape(4, 4)
    want = [[8, 11, 16, 20], [20, 23, 32, 36], [32, 37, 52, 58], [52, 57, 76, 82]]
    out = f(x)
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), want)
    # The block of rows 0-1, columns 0-1 lives on the mesh's first device, device 3.
    first = next(s for s in out.addressable_shards if s.device.id == 3)
    assert first.index == (slice(0, 2, None), slice(0, 2, None))


def test_manual_over_some_axes_only():
    mesh = _mesh()
    f = jax.shard_map(lambda x: lax.psum(x, "x") * lax.axis_index("x"), mesh=mesh,
                      in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    want = [0, 0, 0, 0, 4, 6, 8, 10]
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(8.0))), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(jnp.arange(8.0))), want)
    with pytest.raises(ValueError, match="out_specs argument must refer to an axis marked as "
                                         r"manual \(frozenset\(\{'x'\}\)\)"):
        jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("x"), out_specs=P("y"),
                      axis_names={"x"})(jnp.arange(8.0))


def test_the_context_mesh_and_decorator_forms():
    mesh = _mesh()
    with jax.set_mesh(mesh):
        got = jax.shard_map(lambda a: a + 1, in_specs=P("x"), out_specs=P("x"))(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(got), [1, 2, 3, 4])
    assert got.sharding == NamedSharding(mesh, P("x"))

    @jax.shard_map(mesh=mesh, in_specs=P("y"), out_specs=P())
    def total(a):
        return lax.psum(a.sum(keepdims=True), "y")

    np.testing.assert_array_equal(np.asarray(total(jnp.arange(4.0))), [6.0])
    with pytest.warns(DeprecationWarning, match="jax.experimental.shard_map is deprecated"):
        import importlib
        import justjax.experimental.shard_map as old
        importlib.reload(old)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        got = old.shard_map(lambda a: lax.psum(a, "x"), mesh, P("x"), P())(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(got), [2, 4])


# ---------------------------------------------------------------------------------------------
# Transformations and composition with jit's partitioner.

def test_grad_vmap_and_jit_of_a_shard_map():
    mesh = _mesh()
    g = jax.shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda a: g(a).sum())(jnp.arange(4.0))),
                                  [1, 1, 1, 1])
    np.testing.assert_array_equal(np.asarray(jax.vmap(g)(jnp.arange(8.0).reshape(2, 4))),
                                  [[2, 4], [10, 12]])
    assert jax.jit(g)(jnp.arange(4.0)).sharding == NamedSharding(mesh, P())


def _tp_step(mesh):
    g = jax.shard_map(lambda a, b: lax.psum(a @ b, "y"), mesh=mesh,
                      in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))

    def step(a, b):
        return (g(jnp.tanh(a) * 2, b) ** 2).sum()

    return step


def test_a_shard_map_inside_an_automatically_partitioned_program():
    mesh = _mesh()
    step = _tp_step(mesh)
    a = np.arange(32, dtype=np.float32).reshape(4, 8) / 10
    b = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
    whole = np.tanh(a) * 2 @ b
    a_sharded = jax.device_put(a, NamedSharding(mesh, P("x")))
    np.testing.assert_allclose(float(jax.jit(step)(a_sharded, b)), (whole ** 2).sum(),
                               rtol=1e-5)
    da, db = jax.jit(jax.grad(step, argnums=(0, 1)))(a_sharded, b)
    dwhole = 2 * whole
    np.testing.assert_allclose(np.asarray(db), (np.tanh(a) * 2).T @ dwhole, rtol=1e-4)
    np.testing.assert_allclose(np.asarray(da), dwhole @ b.T * 2 * (1 - np.tanh(a) ** 2),
                               rtol=1e-4)
    # As in real JAX's compiled module for this program: all-reduces only.
    text = jax.jit(step).lower(a_sharded, b).compile().as_text()
    assert set(re.findall(r"(all-reduce|all-gather|reduce-scatter|all-to-all|"
                          r"collective-permute)\(", text)) == {"all-reduce"}


def test_a_shard_map_inside_a_scanned_loop():
    mesh = _mesh()
    g = jax.shard_map(lambda a, b: lax.psum(a @ b, "y"), mesh=mesh,
                      in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    b = np.arange(32, dtype=np.float32).reshape(8, 4) / 10

    def loop(a, b):
        return lax.scan(lambda c, _: (g(c, b) @ jnp.ones((4, 8)) / 100, None), a, None,
                        length=3)[0]

    want = a
    for _ in range(3):
        want = want @ b @ np.ones((4, 8), np.float32) / 100
    np.testing.assert_allclose(np.asarray(jax.jit(loop)(a, b)), want, rtol=1e-5)


def test_lowered_text_as_jax_prints_it():
    mesh = _mesh()
    f = jax.shard_map(lambda a, b: lax.psum(a @ b, "y"), mesh=mesh,
                      in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))
    text = jax.jit(f).lower(jnp.ones((4, 8)), jnp.ones((8, 4))).as_text()
    # Lines of real JAX 0.10.2's `.lower(...).as_text()` (its all-reduce also has a channel).
    assert text.startswith("module @jit__lambda attributes {mhlo.num_partitions = 4 : i32, "
                           "mhlo.num_replicas = 1 : i32} {\n")
    assert ('    %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, '
            '{"y"}]>, <@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] '
            'manual_axes={"x", "y"} (%arg2: tensor<2x4xf32>, %arg3: tensor<4x4xf32>) {\n'
            '      %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0], '
            'precision = [DEFAULT, DEFAULT] : (tensor<2x4xf32>, tensor<4x4xf32>) -> '
            'tensor<2x4xf32>\n') in text
    assert "replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>" in text
    assert ("      sdy.return %2 : tensor<2x4xf32>\n"
            "    } : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>\n") in text


# ---------------------------------------------------------------------------------------------
# Checks and errors (JAX 0.10.2's messages; JAX names the function '_rem_singleton' in the
# replication error, justjax the user's function).

def _replication_error(name, varying):
    return (f"shard_map applied to the function '{name}' was given out_specs which require "
            "replication which can't be statically inferred given the mesh:\n\nThe mesh given "
            "has shape (2, 2) with corresponding axis names ('x', 'y').\n\nout_specs is P() "
            "which implies that the corresponding output value is only varying across mesh "
            f"axes {{}} and not {{{varying}}}, but it was inferred to be possibly varying over "
            f"{{{varying}}}\n\nCheck if these output values are meant to be replicated over "
            "those mesh axes. If not, consider revising the corresponding out_specs entries. If "
            "so, consider disabling the check by passing the check_vma=False argument to "
            "`jax.shard_map`.")


def test_check_vma_rejects_results_called_replicated_that_vary():
    mesh = _mesh()

    def two(a):
        return a, a.sum()

    mapped = jax.shard_map(two, mesh=mesh, in_specs=P(None, "y"), out_specs=(P(None, "y"), P()))
    # As JAX 0.10.2: an eager call checks each result in a shard_map of its helper
    # `_rem_singleton`, a traced one names the function.
    with pytest.raises(ValueError) as info:
        mapped(jnp.ones((4, 4)))
    assert str(info.value) == _replication_error("_rem_singleton", "y")
    with pytest.raises(ValueError) as info:
        jax.jit(mapped)(jnp.ones((4, 4)))
    assert str(info.value) == _replication_error("two", "y").replace(
        "out_specs is P()", "out_specs[1] is P()")

    def gathered(a):  # all_gather's result still varies along its axis (JAX's vma types)
        return lax.all_gather(a, "x", tiled=True)

    with pytest.raises(ValueError) as info:
        jax.shard_map(gathered, mesh=mesh, in_specs=P("x"), out_specs=P())(jnp.arange(4.0))
    assert str(info.value) == _replication_error("_rem_singleton", "x")
    # Reductions over the axis, loops carrying their totals and branches accept P().
    def loop(a):
        return lax.scan(lambda c, x: (c + lax.psum(x, "x"), c), jnp.zeros(()), a)

    carry, ys = jax.shard_map(loop, mesh=mesh, in_specs=P("x"), out_specs=(P(), P()))(
        jnp.arange(4.0))
    assert float(carry) == 6.0
    np.testing.assert_array_equal(np.asarray(ys), [0, 2])
    got = jax.shard_map(lambda a: lax.cond(lax.axis_index("x") > 0, lambda: a, lambda: a + 1),
                        mesh=mesh, in_specs=P(), out_specs=P())(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(got), [1, 2, 3, 4])
    # check_vma=False takes the first device's block.
    got = jax.shard_map(gathered, mesh=mesh, in_specs=P("x"), out_specs=P(),
                        check_vma=False)(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(got), [0, 1, 2, 3])


def test_errors_name_the_function_and_the_offending_shapes():
    mesh = _mesh()
    identity = jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ValueError, match="(?s)in_specs argument must refer to an axis marked "
                                         "as manual .*in_specs refers to 'z'"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("z"), out_specs=P("x"))(jnp.ones(4))
    with pytest.raises(ValueError) as info:
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))(
            jnp.ones(4))
    assert str(info.value) == (
        "pytree structure error: different lengths of tuple at key path\n    shard_map in_specs"
        "\nAt that key path, the prefix pytree shard_map in_specs has a subtree of type tuple "
        "of length 2, but the full pytree has a subtree of the same type but of length 1.")
    with pytest.raises(DuplicateSpecError, match=r"but P\('x', 'x'\) has duplicate entries "
                                                 "for `x`"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x", "x"))(
            jnp.ones((4, 4)))
    with pytest.raises(ValueError) as info:
        jax.shard_map(lambda a, b: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(
            jnp.arange(4.0), jnp.ones(3))
    assert ("the passed args[1] of shape float32[3], where args[1] is bound to <lambda>'s "
            "parameter 'b', corresponds to in_specs of value P('x',), which maps array axis 0 "
            "(of size 3) to mesh axis 'x' (of size 2), but 2 does not evenly divide 3") \
        in str(info.value)
    with pytest.raises(ValueError, match=r"in_specs is P\('x',\) which has length 1, but the "
                                         r"passed args\[0\], where args\[0\] is bound to "
                                         r"<lambda>'s parameter 'a', has shape float32\[\], "
                                         r"which has rank 0 \(and 0 < 1\)"):
        identity(3.0)
    with pytest.raises(ValueError, match=r"out_specs is P\(None, 'x'\) which has length 2, but "
                                         r"<lambda>\(\*args\) has shape float32\[1\]"):
        jax.shard_map(lambda a: a[:1], mesh=mesh, in_specs=P("x"), out_specs=P(None, "x"))(
            jnp.arange(4.0))
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        jax.shard_map(lambda a: a, in_specs=P("x"), out_specs=P())(jnp.arange(4.0))


def test_pcast_to_varying():
    # Real JAX 0.10.2: [0. 1. 2. 0. 1. 2.], its jaxpr binds pvary[axes=('i',)].
    mesh = _mesh((2,), ("i",), devices=jax.devices()[:2])
    f = jax.shard_map(lambda x: lax.pcast(x, "i", to="varying"), mesh=mesh, in_specs=P(),
                      out_specs=P("i"))
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(3.0))), [0, 1, 2, 0, 1, 2])
    assert "pvary[axes=('i',)]" in str(jax.make_jaxpr(f)(jnp.arange(3.0)))
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda x: f(x).sum())(jnp.ones(3))),
                                  [2, 2, 2])
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(jnp.arange(6.0).reshape(2, 3))),
                                  [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]])
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(jnp.arange(3.0))), [0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match="Got unexpected `to` value"):
        lax.pcast(jnp.ones(2), "i", to="sideways")
    with pytest.raises(TypeError, match="must be a tuple or a str"):
        lax.pcast(jnp.ones(2), {"i"}, to="varying")


def test_in_specs_inferred_from_the_arguments_shardings():
    # Over Explicit axes, as JAX 0.10.2 ([2 2 2 2]); over Auto ones JAX's TypeError.
    mesh = Mesh(np.array(jax.devices()), ("b",), axis_types=(AxisType.Explicit,))
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("b")))
    f = jax.shard_map(lambda x: jnp.full((1,), x.shape[0]), mesh=mesh, out_specs=P("b"))
    np.testing.assert_array_equal(np.asarray(f(x)), [2, 2, 2, 2])
    # A traced argument's spec is read off its type (f32[8@b]).
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), [2, 2, 2, 2])
    auto = _mesh((4,), ("b",))
    g = jax.shard_map(lambda x: x, mesh=auto, out_specs=P("b"))
    with pytest.raises(TypeError) as info:
        g(jax.device_put(jnp.arange(8.0), NamedSharding(auto, P("b"))))
    assert str(info.value) == (
        "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
        "instances, but it was `None` when axis_names=frozenset({'b'}) are of type "
        "AxisType.Auto")


# Printed by real JAX 0.10.2 for `print(a)` in the body below (mesh (2, 2), a = arange(16)
# reshaped (4, 4), split P('x', 'y')).
EAGER_PRINT = """\
On cpu:0 at mesh coordinates (x, y,) = (0, 0):
[[0. 1.]
 [4. 5.]]

On cpu:1 at mesh coordinates (x, y,) = (0, 1):
[[2. 3.]
 [6. 7.]]

On cpu:2 at mesh coordinates (x, y,) = (1, 0):
[[ 8.  9.]
 [12. 13.]]

On cpu:3 at mesh coordinates (x, y,) = (1, 1):
[[10. 11.]
 [14. 15.]]

"""


def test_an_eager_call_runs_the_body_once_on_every_device(capsys):
    mesh = _mesh()
    calls = []

    @jax.shard_map(mesh=mesh, in_specs=(P("x", "y"), P()), out_specs=P("x", None))
    def f(a, b):
        calls.append(1)
        print(a)
        c = lax.psum(a, "y") + b[0]
        print(type(c).__name__, c.shape)
        return c

    out = f(jnp.arange(16.0).reshape(4, 4), jnp.ones(3))
    printed = capsys.readouterr().out
    assert calls == [1]  # Python in the body runs once
    assert printed.startswith(EAGER_PRINT)
    assert "ShardMapTracer (2, 2)\n" in printed
    np.testing.assert_array_equal(np.asarray(out), [[3, 5], [11, 13], [19, 21], [27, 29]])
    assert out.sharding == NamedSharding(mesh, P("x", None))
    # Traced (under jit, grad): the same values, the body traced once.
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(jnp.arange(16.0).reshape(4, 4),
                                                        jnp.ones(3))), np.asarray(out))


def test_none_specs_are_whole_values_and_a_body_may_return_nothing():
    mesh = _mesh((2,), ("i",), devices=jax.devices()[:2])
    g = jax.shard_map(lambda x, y: (x, {"a": y}), mesh=mesh, in_specs=(P("i"), None),
                      out_specs=(P("i"), {"a": P()}))
    x, d = g(jnp.arange(4.0), jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(x), [0, 1, 2, 3])
    np.testing.assert_array_equal(np.asarray(d["a"]), [1, 1])
    seen = []
    f = jax.shard_map(lambda x: seen.append(x.shape), mesh=mesh, in_specs=P(), out_specs=None)
    assert f(jnp.arange(6.0)) is None and seen == [(6,)]
