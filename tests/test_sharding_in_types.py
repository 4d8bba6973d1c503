"""Sharding in types (`lax/sharding_rules.py`): a value put on a mesh of `Explicit` axes
has a type split over them (`f32[8@X]`), operations follow the types, and operands that do
not go together are a `ShardingTypeError` at trace time.

Every expected type, spec, jaxpr and error text was read off real JAX 0.10.2 with four
virtual CPU devices (`XLA_FLAGS=--xla_force_host_platform_device_count=4`), on a 2x2 mesh.
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.core.core import ShardingTypeError
from justjax.sharding import AxisType, PartitionSpec as P, auto_axes, explicit_axes, reshard


@pytest.fixture(autouse=True)
def mesh():
    with jax.config.override("jax_num_cpu_devices", 4):
        mesh = jax.make_mesh((2, 2), ("X", "Y"))
        with jax.set_mesh(mesh):
            yield mesh


@pytest.fixture
def x():
    return reshard(jnp.arange(8.0), P("X"))


@pytest.fixture
def m():
    return reshard(jnp.ones((4, 8)), P("X", "Y"))


def typeof(v):
    return str(jax.typeof(v))


def test_types_of_arrays_on_the_mesh(mesh):
    a = reshard(np.arange(4).reshape(4, 1), P("X", None))
    b = jax.device_put(np.arange(8).reshape(1, 8), jax.NamedSharding(mesh, P(None, "Y")))
    assert (typeof(a), typeof(b), typeof(a + b)) == ("int32[4@X,1]", "int32[1,8@Y]",
                                                     "int32[4@X,8@Y]")
    assert (a + b).sharding == jax.NamedSharding(mesh, P("X", "Y"))
    np.testing.assert_array_equal(a + b, np.arange(4)[:, None] + np.arange(8))
    assert repr(jax.typeof(a)) == "ShapedArray(int32[4@X,1])"
    assert jax.typeof(a).sharding.spec == P("X", None)
    assert typeof(reshard(jnp.ones(8), P(("X", "Y")))) == "float32[8@(X,Y)]"
    # Arrays made on no mesh under an Explicit mesh are replicated over it, their specs
    # one entry per dimension.
    assert jnp.ones(3).sharding == jax.NamedSharding(mesh, P(None))
    assert (a * 2).sharding.spec == P("X", None)


def test_rules_of_common_operations(x, m):
    assert [typeof(v) for v in (jnp.sin(m), m.T, m.sum(1), jnp.argmax(m, 0), x.astype(jnp.int32),
                                m[None], jnp.where(x > 2, x, 0.0), jnp.zeros_like(x))] == [
        "float32[4@X,8@Y]", "float32[8@Y,4@X]", "float32[4@X]", "int32[8@Y]", "int32[8@X]",
        "float32[1,4@X,8@Y]", "float32[8@X]", "float32[8@X]"]
    assert [typeof(m.reshape(s)) for s in ((2, 2, 8), (32,), (4, 8, 1))] == [
        "float32[2@X,2,8@Y]", "float32[32@(X,Y)]", "float32[4@X,8@Y,1]"]
    assert typeof(jax.lax.slice(x, (2,), (6,))) == "float32[4@X]"
    w = reshard(jnp.ones((8, 2)), P("Y"))
    assert typeof(jnp.dot(m, jnp.ones((8, 2)))) == "float32[4@X,2]"
    product = jnp.dot(m, w, out_sharding=P("X"))
    assert typeof(product) == "float32[4@X,2]"
    np.testing.assert_array_equal(product, np.full((4, 2), 8.0))
    assert typeof(jnp.zeros((4, 8), out_sharding=P(None, "X"))) == "float32[4,8@X]"


def test_jaxprs_show_the_types(x, m):
    assert str(jax.make_jaxpr(lambda a, b: (a * 2 + b.sum(), jnp.sin(b).T))(x, m)) == (
        "{ lambda ; a:f32[8@X] b:f32[4@X,8@Y]. let\n"
        "    c:f32[8@X] = mul a 2.0:f32[]\n"
        "    d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
        "    e:f32[8@X] = add c d\n"
        "    f:f32[4@X,8@Y] = sin b\n"
        "    g:f32[8@Y,4@X] = transpose[permutation=(1, 0)] f\n"
        "  in (e, g) }")
    assert str(jax.make_jaxpr(lambda v: reshard(v, P(None, "X")))(m)) == (
        "{ lambda ; a:f32[4@X,8@Y]. let b:f32[4,8@X] = reshard a in (b,) }")


def test_jit_results_are_laid_out_by_their_types(m):
    seen = []

    @jax.jit
    def f(a):
        out = a * 2
        seen.append(typeof(out))
        return out, a.sum(0)

    doubled, summed = f(m)
    assert seen == ["float32[4@X,8@Y]"]
    assert doubled.sharding.spec == P("X", "Y") and summed.sharding.spec == P("Y")
    assert typeof(doubled) == "float32[4@X,8@Y]"
    np.testing.assert_array_equal(summed, np.full(8, 4.0))


_MESH = ("NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), "
         "device_kind=cpu, num_cores=None, platform=cpu), spec=P('{}',))")


@pytest.mark.parametrize("make, message", [
    (lambda x, m: x + reshard(jnp.arange(8.0), P("Y")),
     "add got incompatible shardings for broadcasting: ('X',), ('Y',)."),
    (lambda x, m: reshard(np.arange(16).reshape(4, 4), P("X", None))
     + reshard(np.arange(16).reshape(4, 4), P(None, "X")),
     "add operation with inputs: i32[4@X,4], i32[4,4@X] produces an illegally sharded "
     "result: i32[4@X,4@X]"),
    (lambda x, m: jnp.dot(reshard(jnp.ones((4, 4)), P(None, "X")),
                          reshard(jnp.ones((4, 4)), P("Y"))),
     "dot_general requires contracting dimensions to have consistent sharding, got ('X',) "
     "and ('Y',)."),
    (lambda x, m: m @ reshard(jnp.ones((8, 2)), P("Y")),
     "Contracting dimensions are sharded and it is ambiguous how the output should be "
     "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
     "lhs_contracting_spec=('Y',) and rhs_contracting_spec=('Y',)"),
    (lambda x, m: m.reshape(8, 4),
     "This reshape is not supported. Please specify the sharding of the output via the "
     "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[4@X,8@Y], new "
     "sizes: (8, 4)"),
    (lambda x, m: jax.lax.select(x > 2, x, reshard(jnp.arange(8.0), P("Y"))),
     f"select cases must have the same shardings, got [{_MESH.format('Y')}, "
     f"{_MESH.format('X')}]."),
    (lambda x, m: jnp.concatenate([x, reshard(jnp.arange(8.0), P("Y"))]),
     f"All operands should have the same sharding. Got shardings {_MESH.format('X')}, "
     f"{_MESH.format('Y')}"),
])
def test_operands_that_do_not_go_together(x, m, make, message):
    with pytest.raises(ShardingTypeError) as info:
        make(x, m)
    assert str(info.value) == message
    with pytest.raises(ShardingTypeError):
        jax.jit(lambda a, b: make(a, b))(x, m)


def test_slices_must_still_divide(x):
    with pytest.raises(ShardingTypeError, match=r"slicing on sharded dims where out dim \(3\) "
                                                r"is not divisible by mesh axes \(2\) with spec "
                                                r"\(X\) is not implemented. Got input "
                                                r"type=f32\[8@X\] and output shape=\(3,\)"):
        jax.jit(lambda v: jax.lax.slice(v, (1,), (4,)))(x)


def test_gradients_have_their_primals_types(x):
    def loss(w, v):
        return jnp.tanh(v.reshape(2, 4) @ w).sum() + (jnp.sin(v) * v).sum()

    w = jnp.ones((4, 3)) * 0.1
    gw, gx = jax.grad(loss, (0, 1))(w, x)
    assert (typeof(gw), typeof(gx)) == ("float32[4,3]", "float32[8@X]")
    assert gw.sharding.spec == P(None, None)
    expected = jax.grad(loss, (0, 1))(w, jnp.arange(8.0))
    np.testing.assert_allclose(gw, expected[0], rtol=1e-6)
    np.testing.assert_allclose(gx, expected[1], rtol=1e-6)
    jitted = jax.jit(jax.grad(loss, (0, 1)))(w, x)
    assert [typeof(g) for g in jitted] == ["float32[4,3]", "float32[8@X]"]


def test_convolution_gradients_follow_the_batch(mesh):
    img = reshard(jnp.ones((4, 5, 5, 2)), P("X"))
    kernel = jnp.ones((3, 3, 2, 3)) * 0.1

    def loss(k, i):
        return jax.lax.conv_general_dilated(i, k, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC")).sum()

    assert typeof(jax.grad(loss)(kernel, img)) == "float32[3,3,2,3]"
    assert typeof(jax.grad(loss, 1)(kernel, img)) == "float32[4@X,5,5,2]"
    np.testing.assert_allclose(float(loss(kernel, img)), 405.60004, rtol=1e-6)


def test_vmap_and_scan(m):
    assert typeof(jax.vmap(lambda r: r * 2)(m)) == "float32[4@X,8@Y]"
    assert typeof(jax.vmap(lambda r: r.sum())(m)) == "float32[4@X]"
    with pytest.raises(ValueError, match="Mapped away dimension of inputs passed to vmap "
                                         "should be sharded the same. Got inconsistent axis "
                                         "specs: X vs None"):
        jax.vmap(lambda a, b: a @ b)(reshard(jnp.ones((4, 3, 2)), P("X")), jnp.ones((4, 2, 5)))
    with pytest.raises(ValueError, match=r"0th dimension of all xs should be replicated. Got "
                                         r"P\('X', 'Y'\)"):
        jax.lax.scan(lambda c, r: (c + r, r * 2), jnp.zeros(8), m)
    xs = reshard(m, P(None, "Y"))
    with pytest.raises(TypeError, match=r"The input carry c has type float32\[8\] but the "
                                        r"corresponding output carry component has type "
                                        r"float32\[8@Y\]"):
        jax.lax.scan(lambda c, r: (c + r, r * 2), jnp.zeros(8), xs)
    carry, ys = jax.lax.scan(lambda c, r: (c + r, r * 2), jnp.zeros(8, out_sharding=P("Y")), xs)
    assert (typeof(carry), typeof(ys)) == ("float32[8@Y]", "float32[4,8@Y]")
    np.testing.assert_array_equal(carry, np.full(8, 4.0))


def test_shard_map_bodies_see_their_blocks_types(x):
    f = jax.shard_map(lambda a: a * 2, in_specs=P("X"), out_specs=P("X"))
    jaxpr = jax.make_jaxpr(f)(x)
    assert jaxpr.jaxpr.invars[0].aval.str_short() == "f32[8@X]"
    # The body's values vary along X (check_vma's types); the literal is made varying
    # before it meets one, as JAX's jaxpr shows.
    assert str(jaxpr.eqns[0].params["jaxpr"]) == (
        "{ lambda ; a:f32[4]{V:X}. let\n"
        "    b:f32[]{V:X} = pvary[axes=('X',)] 2.0:f32[]\n"
        "    c:f32[4]{V:X} = mul a b\n"
        "  in (c,) }")
    assert typeof(f(x)) == "float32[8@X]"
    np.testing.assert_array_equal(f(x), np.arange(8.0) * 2)


def test_auto_and_explicit_axes(m):
    inside = []

    @auto_axes
    def g(a):
        inside.append((typeof(a), str(jax.sharding.get_abstract_mesh().axis_types)))
        return a * 2

    out = g(m, out_sharding=P("X", None))
    assert inside == [("float32[4,8]", "(Auto, Auto)")]
    assert typeof(out) == "float32[4@X,8]"
    # The array stays where it was while its type loses the Auto axes (JAX's reshard).
    value = jnp.sin(reshard(np.arange(8.0), P("X")))
    seen = []

    @auto_axes
    def h(a):
        seen.append((a.sharding.spec, jax.typeof(a).sharding.spec))
        return a

    h(value, out_sharding=P("X"))
    assert seen == [(P("X"), P(None))]
    explicit = explicit_axes(lambda a: (seen.append(typeof(a)), a * 2)[1], axes="X",
                             in_sharding=P("X"))
    with jax.sharding.use_abstract_mesh(jax.sharding.get_abstract_mesh().update_axis_types(
            {"X": AxisType.Auto})):
        result = explicit(jnp.ones((4, 2)))
    assert seen[-1] == "float32[4@X,2]" and typeof(result) == "float32[4,2]"


def test_random_and_initializers_honour_out_sharding():
    key = jax.random.key(0)
    sample = jax.random.normal(key, (4, 4), out_sharding=P("X"))
    assert typeof(sample) == "float32[4@X,4]" and sample.sharding.spec == P("X", None)
    np.testing.assert_array_equal(sample, jax.random.normal(key, (4, 4)))
    traced = jax.make_jaxpr(lambda k: jax.random.uniform(k, (4,), out_sharding=P("Y")))(key)
    assert str(traced.out_avals[0]) == "float32[4@Y]"
    init = jax.nn.initializers.zeros(key, (4, 2), out_sharding=P("X"))
    assert typeof(init) == "float32[4@X,2]"


def test_with_sharding_constraint_asserts_the_type(m):
    assert jax.lax.with_sharding_constraint(m, P("X", "Y")) is m
    with pytest.raises(AssertionError, match=r"`with_sharding_constraint` acts as an assert "
                                             r"when all axes of mesh are of type `Explicit`. "
                                             r"The array sharding: P\('X', 'Y'\) did not "
                                             r"match the sharding provided: P\('Y', None\)."):
        jax.lax.with_sharding_constraint(m, P("Y"))


def test_indexing_follows_the_types():
    rows = reshard(jnp.arange(32.0).reshape(4, 8), P("X"))
    idx = jnp.array([0, 2, 1])
    assert typeof(jax.jit(lambda a: a[:, idx])(rows)) == "float32[4@X,3]"
    assert typeof(jax.jit(lambda a: a[:, 1])(rows)) == "float32[4@X]"
    assert typeof(jax.jit(lambda a: a.at[:, 1].set(0.0))(rows)) == "float32[4@X,8]"
    assert typeof(jax.jit(lambda a: a.at[:, idx].add(1.0))(rows)) == "float32[4@X,8]"
    grad = jax.jit(jax.grad(lambda a: a[:, idx].sum()))(rows)
    assert typeof(grad) == "float32[4@X,8]"
    np.testing.assert_array_equal(grad, np.zeros((4, 8)) + np.isin(np.arange(8), [0, 1, 2]))
    updated = rows.at[:, 1].set(0.0)
    assert updated.sharding.spec == P("X", None)
    np.testing.assert_array_equal(updated, np.arange(32.0).reshape(4, 8) * (np.arange(8) != 1))
    split = reshard(jnp.arange(32.0).reshape(4, 8), P("X", "Y"))
    with pytest.raises(ShardingTypeError, match=r"Use `.at\[...\].get\(out_sharding=\)` to "
                                                r"provide output PartitionSpec for the gather "
                                                r"indexing .* Got operand=ShapedArray"
                                                r"\(float32\[4@X,8@Y\]\), indices=ShapedArray"
                                                r"\(int32\[3,1\]\)"):
        jax.jit(lambda a: a[idx])(split)
    with pytest.raises(ShardingTypeError, match=r"Use `.at\[...\].set/add/mul/...\(out_sharding="
                                                r"\)` to provide output PartitionSpec for the "
                                                r"scatter update"):
        jax.jit(lambda a: a.at[idx].add(1.0))(rows)


def test_shard_map_in_specs_must_be_the_arguments_types():
    f = jax.shard_map(lambda a: a * 2, in_specs=P("X"), out_specs=P("X"), axis_names={"X", "Y"})
    with pytest.raises(ValueError) as info:
        f(jnp.arange(8.0))
    assert str(info.value) == (
        "in_specs passed to shard_map: P('X',) does not match the specs of the input: "
        "P(None,) for arg: float32[8]. `in_specs` is an optional argument so you can omit "
        "specifying it and shard_map will infer the in_specs from the arguments. If you want "
        "to reshard your inputs, you can use `jax.reshard` on the arguments and then pass those "
        "args to shard_map.")
    inferred = jax.shard_map(lambda a: a * 2, out_specs=P("X"))
    np.testing.assert_array_equal(jax.jit(inferred)(reshard(jnp.arange(8.0), P("X"))),
                                  np.arange(8.0) * 2)


def test_varying_manual_axes_in_shard_map_bodies():
    mesh = jax.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    seen = []

    @jax.shard_map(mesh=mesh, in_specs=P("i", "j"), out_specs=P("i", None))
    def f(a):
        total = jax.lax.psum(a, "j")
        seen.extend([typeof(a), typeof(total), jax.typeof(total).manual_axis_type.varying,
                     typeof(total * 2 + jax.lax.axis_index("j"))])
        return total

    expected = ["float32[2,2]{V:(i,j)}", "float32[2,2]{V:i}", frozenset({"i"}),
                "float32[2,2]{V:(i,j)}"]
    with jax.set_mesh(mesh):
        values = jnp.arange(16.0).reshape(4, 4)
        for run in (f, jax.jit(f)):
            seen.clear()
            np.testing.assert_array_equal(run(values), np.asarray(values).reshape(
                4, 2, 2).sum(1))
            assert seen == expected
        unchecked = jax.shard_map(lambda a: (seen.append(typeof(a)), a)[1], mesh=mesh,
                                  in_specs=P("i"), out_specs=P("i"), check_vma=False)
        unchecked(jnp.arange(4.0))
        assert seen[-1] == "float32[2]"
    # A shard_map over another mesh than the one in context is JAX's error.
    with pytest.raises(ValueError, match=r"The context mesh AbstractMesh\('X': 2, 'Y': 2, "
                                         r".* should match the mesh passed to shard_map "
                                         r"Mesh\('i': 2, 'j': 2, axis_types=\(Auto, Auto\)\)"):
        f(jnp.arange(16.0).reshape(4, 4))


def test_training_in_explicit_mode_matches_jax():
    # A model with an embedding lookup (`.at[x].get(out_sharding=)`), a layer resharded over
    # the model axis and a product given its `out_sharding`, trained by SGD under jit: the
    # losses and the parameters' types read off real JAX 0.10.2 for this program.
    mesh = jax.make_mesh((2, 2), ("data", "model"))
    with jax.set_mesh(mesh):
        rng = np.random.RandomState(0)
        params = {"w1": jnp.asarray(rng.randn(16, 32).astype(np.float32) * 0.1),
                  "b1": jnp.zeros(32),
                  "w2": reshard(jnp.asarray(rng.randn(32, 4).astype(np.float32) * 0.1),
                                P("model", None)),
                  "emb": jnp.asarray(rng.randn(10, 16).astype(np.float32))}
        x = reshard(jnp.asarray(rng.randint(0, 10, (8, 5))), P("data"))
        y = reshard(jnp.asarray(rng.randint(0, 4, (8,))), P("data"))

        def loss(p, x, y):
            h = p["emb"].at[x].get(out_sharding=P("data")).mean(1)
            h = jax.nn.relu(h @ p["w1"] + p["b1"])
            h = reshard(h, P("data", "model"))
            logits = jnp.dot(h, p["w2"], out_sharding=P("data", None))
            logp = jax.nn.log_softmax(logits)
            return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()

        @jax.jit
        def step(p, x, y):
            value, grads = jax.value_and_grad(loss)(p, x, y)
            return jax.tree.map(lambda a, b: a - 0.5 * b, p, grads), value

        losses = []
        for _ in range(4):
            params, value = step(params, x, y)
            losses.append(float(value))
        np.testing.assert_allclose(losses, [1.3989, 1.30138, 1.19732, 1.07103], atol=2e-5)
        assert {k: typeof(v) for k, v in params.items()} == {
            "b1": "float32[32]", "emb": "float32[10,16]", "w1": "float32[16,32]",
            "w2": "float32[32@model,4]"}
        assert params["w2"].sharding.spec == P("model", None)


def test_out_sharding_of_einsum_reshape_and_friends(m):
    # Types read off real JAX 0.10.2.
    b = reshard(jnp.arange(16.0).reshape(8, 2), P("Y"))
    assert typeof(jnp.einsum("ij,jk->ik", m, b, out_sharding=P("X"))) == "float32[4@X,2]"
    assert typeof(jnp.einsum("ij,jk->ki", m, b, out_sharding=P(None, "X"))) == "float32[2,4@X]"
    np.testing.assert_allclose(jnp.einsum("ij,jk->ik", m, b, out_sharding=P("X")),
                               np.ones((4, 8)) @ np.arange(16.0).reshape(8, 2))
    with pytest.raises(ShardingTypeError, match="Contracting dimensions are sharded"):
        jnp.einsum("ij,jk->ik", m, b)
    assert typeof(jnp.reshape(m, (8, 4), out_sharding=P("X"))) == "float32[8@X,4]"
    assert typeof(jnp.reshape(m, (8, 4), order="F", out_sharding=P("X"))) == "float32[8,4@X]"
    assert typeof(jnp.ravel(m, out_sharding=P("X"))) == "float32[32@X]"
    assert typeof(jnp.broadcast_to(jnp.ones(4), (8, 4), out_sharding=P("X"))) == "float32[8@X,4]"
    assert typeof(jax.jit(lambda v: v.reshape((8, 4), out_sharding=P(None, "X")))(m)) == (
        "float32[8,4@X]")


_ABSTRACT = ("AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
             "num_cores=None, platform=cpu)")


@pytest.mark.parametrize("make, message", [
    (lambda m: jnp.sort(m, axis=1),
     "Arguments to sort must be unsharded over the sorting dimension. Got arg sharding="
     f"NamedSharding(mesh={_ABSTRACT}, spec=P('X', 'Y')) and sorting dimension=1"),
    (lambda m: jnp.cumsum(m, axis=1),
     "Input should be unsharded over the axis being reduced. Got input type=float32[4@X,8@Y] "
     "and axis=1"),
    (lambda m: jax.lax.top_k(m, 2),
     "The input should be unsharded over the axis along which to compute the top_k values. "
     "Got input type=float32[4@X,8@Y] and axis=1"),
    (lambda m: jnp.tile(m, (1, 2)),
     "Operand cannot be sharded on dimension 1 when the tiling is non-trivial. Got input type: "
     "float32[4@X,8@Y] with reps: (1, 2)"),
    (lambda m: jax.lax.dynamic_update_slice_in_dim(m, jnp.zeros((4, 2)), 2, axis=1),
     "dynamic_update_slice operand sharding must be equal to update sharding, got operand "
     "sharding float32[4@X,8@Y]({Explicit: ('X', 'Y')}) and update sharding "
     "float32[4,2]({Explicit: ('X', 'Y')})."),
])
def test_rules_that_want_a_dimension_unsplit(m, make, message):
    with pytest.raises(ShardingTypeError) as info:
        jax.jit(make)(m)
    assert str(info.value) == message


def test_stack_split_and_windows_keep_splits(m):
    assert typeof(jnp.stack([m, m])) == "float32[2,4@X,8@Y]"
    assert typeof(jnp.split(m, 2, axis=1)[0]) == "float32[4@X,4@Y]"
    pooled = jax.lax.reduce_window(m, 0.0, jax.lax.add, (1, 2), (1, 2), "VALID")
    assert typeof(pooled) == "float32[4@X,4@Y]"
    np.testing.assert_array_equal(pooled, np.full((4, 4), 2.0))
    assert typeof(jnp.sort(reshard(m, P(None, "Y")), axis=0)) == "float32[4,8@Y]"


def test_jacobians_keep_the_types(x):
    # JAX 0.10.2: jacfwd of a sum is float32[4], jacrev of an elementwise map float32[4,4@X]
    # (its basis's layout annotation names no split).
    small = reshard(jnp.arange(4.0), P("X"))
    assert typeof(jax.jacfwd(lambda v: jnp.sin(v).sum())(small)) == "float32[4]"
    assert typeof(jax.jacrev(lambda v: jnp.sin(v) * 2)(small)) == "float32[4,4@X]"
