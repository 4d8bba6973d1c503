"""pmap under other transformations (`_src/transformations/shard_map.py`): `make_jaxpr` shows JAX 0.10.2's
`jit` of `shard_map`; `grad`, `jvp`, `vmap` and `jit` of a pmapped function keep the
`shard_map` and run it on the 4 devices, with JAX's values; donation; nested pmaps.
Expected jaxprs and values were read off real JAX 0.10.2."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.runtime import replicas

DEVICES = 4


@pytest.fixture(autouse=True)
def four_devices():
    with jax.config.override("jax_num_cpu_devices", DEVICES):
        yield


@pytest.fixture
def spmd_runs(monkeypatch):
    """The device ids of every SPMD run started while the test runs."""
    runs: list[tuple[int, ...]] = []
    submit = replicas._submit  # where every run's replicas start, at once or not

    def spy(rendezvous, ids, calls, thread_setup):
        runs.append(tuple(ids))
        return submit(rendezvous, ids, calls, thread_setup)

    monkeypatch.setattr(replicas, "_submit", spy)
    return runs


XS = jnp.arange(8.0).reshape(4, 2) / 4


def _psum_scaled(x):
    return lax.psum(x ** 2, "i") * x


def test_make_jaxpr_is_a_jit_of_shard_map():
    fun = jax.pmap(lambda x: lax.psum(x * 2, "i"), axis_name="i")
    assert str(jax.make_jaxpr(fun)(jnp.ones((4, 2)))) == textwrap.dedent("""\
        { lambda ; a:f32[4,2]. let
            b:f32[4,2] = jit[
              name=_fun
              jaxpr={ lambda ; a:f32[4,2]. let
                  b:f32[4,2] = shard_map[
                    check_vma=False
                    in_specs=(P('i',),)
                    jaxpr={ lambda ; c:f32[1,2]. let
                        d:f32[2] = squeeze[dimensions=(0,)] c
                        e:f32[2] = mul d 2.0:f32[]
                        f:f32[2] = psum[axes=('i',) axis_index_groups=None] e
                        g:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] f
                      in (g,) }
                    mesh=Mesh('i': 4, axis_types=(Auto,))
                    newly_manual_axes=frozenset({'i'})
                    out_specs=(P('i',),)
                  ] a
                in (b,) }
            ] a
          in (b,) }""")


def test_make_jaxpr_with_unmapped_arguments_and_results():
    fun = jax.pmap(lambda x, w: (x * w, lax.psum(w, "i")), axis_name="i", in_axes=(1, None),
                   out_axes=(1, None))
    text = str(jax.make_jaxpr(fun)(jnp.ones((2, 4)), jnp.float32(3.0)))
    assert "in_specs=(P(None, 'i'), P())" in text
    assert "out_specs=(P(None, 'i'), P())" in text
    assert "jaxpr={ lambda ; e:f32[2,1] f:f32[]. let" in text
    assert "g:f32[2] = squeeze[dimensions=(1,)] e" in text


def test_vmap_of_pmap_batches_the_per_device_function():
    fun = jax.vmap(jax.pmap(lambda x: x + 1))
    text = str(jax.make_jaxpr(fun)(jnp.ones((3, 4))))
    assert "in_specs=(P(None, '_internal_pmap_axis_name'),)" in text
    assert "mesh=Mesh('_internal_pmap_axis_name': 4, axis_types=(Auto,))" in text
    assert "jaxpr={ lambda ; c:f32[3,1]. let" in text
    assert "d:f32[3] = squeeze[dimensions=(1,)] c" in text


def test_grad_of_pmap_runs_on_the_devices(spmd_runs):
    fun = jax.pmap(_psum_scaled, axis_name="i")
    got = jax.grad(lambda x: fun(x).sum())(XS)
    np.testing.assert_allclose(np.asarray(got), [[3.5, 7.25], [6.5, 11.25], [9.5, 15.25],
                                                 [12.5, 19.25]], rtol=1e-6)
    # The forward program, the sum of its sharded result (computation follows the data) and
    # the transposed program each ran on the four devices.
    assert spmd_runs == [(0, 1, 2, 3)] * 3


def test_grad_of_unmapped_arguments_and_results_matches_jax():
    fun = jax.pmap(lambda x, w: (x * w, lax.psum(w, "i")), axis_name="i", in_axes=(1, None),
                   out_axes=(1, None))

    def loss(x, w):
        mapped, replicated = fun(x, w)
        return (mapped ** 2).sum() + replicated * 2.0

    x, w = jnp.arange(8.0).reshape(2, 4), jnp.float32(3.0)
    for grad in (jax.grad(loss, argnums=(0, 1)), jax.jit(jax.grad(loss, argnums=(0, 1)))):
        dx, dw = grad(x, w)
        np.testing.assert_allclose(np.asarray(dx), 18.0 * np.arange(8.0).reshape(2, 4))
        assert float(dw) == 848.0


def test_grad_of_a_replicated_result():
    fun = jax.pmap(lambda x: lax.pmean(x, "i"), axis_name="i", out_axes=None)
    want = np.broadcast_to([0.375, 0.5], (4, 2))
    for grad in (jax.grad(lambda x: (fun(x) ** 2).sum()),
                 jax.jit(jax.grad(lambda x: (fun(x) ** 2).sum()))):
        np.testing.assert_allclose(np.asarray(grad(XS)), want, rtol=1e-6)


def test_grad_through_all_gather_and_ppermute_matches_jax():
    gather = jax.pmap(lambda x, w: lax.all_gather(x * w, "i"), axis_name="i", in_axes=(0, None))
    dx, dw = jax.grad(lambda x, w: (gather(x, w) ** 2).sum(), argnums=(0, 1))(
        XS, jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(dx), [[0, 8], [4, 24], [8, 40], [12, 56]])
    np.testing.assert_allclose(np.asarray(dw), [28, 84])
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    shift = jax.pmap(lambda x: lax.ppermute(x, "i", perm) * (lax.axis_index("i") + 1.0),
                     axis_name="i")
    got = jax.grad(lambda x: (shift(x) ** 2).sum())(XS)
    np.testing.assert_allclose(np.asarray(got), [[0, 2], [9, 13.5], [32, 40], [3, 3.5]])


def test_jvp_of_pmap_matches_jax():
    fun = jax.pmap(lambda x: jnp.sin(x) * lax.psum(x, "i"), axis_name="i")
    primal, tangent = jax.jvp(fun, (XS,), (jnp.ones_like(XS),))
    np.testing.assert_allclose(np.asarray(primal), [[0, 0.98961586], [1.4382766, 2.726555],
                                                    [2.5244129, 3.7959385],
                                                    [2.992485, 3.9359438]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tangent), [[3, 4.8652654], [4.55045, 5.653311],
                                                     [4.9867907, 5.057228],
                                                     [4.2021914, 3.2229595]], rtol=1e-6)


def test_gradients_of_closed_over_values_to_second_order():
    values = np.arange(8.0).reshape(4, 2)

    def total(w):
        return jax.pmap(lambda x: jnp.sin(x * w))(jnp.asarray(values, jnp.float32)).sum()

    w = np.float32(1.5)
    np.testing.assert_allclose(float(jax.grad(total)(w)),
                               np.sum(np.cos(values * w) * values), rtol=1e-5)
    np.testing.assert_allclose(float(jax.grad(jax.grad(total))(w)),
                               -np.sum(np.sin(values * w) * values ** 2), rtol=1e-5)
    np.testing.assert_allclose(float(jax.hessian(total)(w)),
                               -np.sum(np.sin(values * w) * values ** 2), rtol=1e-5)


def test_data_parallel_loss_differentiated_from_outside_equals_one_device(spmd_runs):
    def loss(p, x, y):
        return jnp.mean((x @ p - y) ** 2)

    def parallel_loss(p, x, y):
        return jax.pmap(lambda xb, yb: loss(p, xb, yb))(x.reshape(4, 2, 3),
                                                       y.reshape(4, 2)).mean()

    p = jnp.array([1.0, -0.5, 0.25])
    x, y = jnp.arange(24.0).reshape(8, 3) / 10, jnp.arange(8.0)
    want = np.asarray(jax.grad(loss)(p, x, y))
    np.testing.assert_allclose(np.asarray(jax.grad(parallel_loss)(p, x, y)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(parallel_loss))(p, x, y)), want,
                               rtol=1e-5)
    assert spmd_runs and all(run == (0, 1, 2, 3) for run in spmd_runs)
    # The residuals the forward pmap gathers are sliced again by the backward one: the
    # simplifier gives each replica its own block back, and no all_gather is left.
    compiled = jax.jit(jax.grad(parallel_loss)).lower(p, x, y).compile().as_text()
    assert "all-gather" not in compiled and "all-reduce" in compiled


def test_jit_of_pmap_is_one_partitioned_program(spmd_runs):
    fun = jax.jit(jax.pmap(_psum_scaled, axis_name="i"))
    text = fun.lower(XS).as_text()
    assert "mhlo.num_partitions = 4" in text
    for op in ("sdy.manual_computation", "stablehlo.all_reduce"):
        assert op in text
    compiled = fun.lower(XS).compile().as_text()
    assert "all-gather" not in compiled and "dynamic-slice" not in compiled
    got = fun(XS)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.pmap(_psum_scaled, "i")(XS)))
    assert spmd_runs == [(0, 1, 2, 3)] * 2
    assert repr(got.sharding) == ("NamedSharding(mesh=Mesh('i': 4, axis_types=(Auto,)), "
                                  "spec=P('i',), memory_kind=device)")


def test_vmap_of_pmap_runs_on_the_devices(spmd_runs):
    stacked = jnp.stack([XS, 2 * XS])
    got = jax.vmap(jax.pmap(_psum_scaled, axis_name="i"))(stacked)
    want = np.stack([np.asarray(jax.pmap(_psum_scaled, "i")(s)) for s in stacked])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert (0, 1, 2, 3) in spmd_runs
    assert "spec=P(None, 'i')" in repr(got.sharding)


def test_vmap_over_an_inner_axis_name_inside_pmap():
    xs = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    got = jax.vmap(jax.pmap(lambda v: lax.psum(v, ("i", "j")), axis_name="i"),
                   axis_name="j")(xs)
    np.testing.assert_allclose(np.asarray(got), np.full((2, 4), 28.0))


def test_nested_pmap_maps_the_inner_function_with_vmap():
    xs = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    got = jax.pmap(jax.pmap(lambda v: lax.psum(v, "j"), axis_name="j"), axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(got), np.broadcast_to(xs.sum(1, keepdims=True),
                                                                (2, 4)))


def test_donated_arguments_are_deleted():
    # A pmap result is laid out as the pmap cuts it: donating it deletes it.
    donated, kept = jax.pmap(lambda x: x)(jnp.ones((4, 3))), jnp.ones((4, 3))
    out = jax.pmap(lambda a, b: a + b, donate_argnums=0)(donated, kept)
    np.testing.assert_allclose(np.asarray(out), 2.0)
    assert donated.is_deleted() and not kept.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(donated)


def test_donated_array_on_one_device_is_copied_to_the_devices_and_kept():
    # As real JAX 0.10.2 on 4 devices: the pmap donates the copies it makes on the devices.
    donated = jnp.ones((4, 3))
    out = jax.pmap(lambda a: a + 1, donate_argnums=0)(donated)
    np.testing.assert_allclose(np.asarray(out), 2.0)
    assert not donated.is_deleted()


def test_key_arrays_through_grad_of_pmap():
    keys = jax.random.split(jax.random.key(0), 4)

    def loss(w):
        noise = jax.pmap(lambda k: jax.random.normal(k, (2,)))(keys)
        return (noise * w).sum()

    want = np.asarray(jax.pmap(lambda k: jax.random.normal(k, (2,)))(keys)).sum(0)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(jnp.ones(2))), want, rtol=1e-6)


def test_pmap_inside_checkpoint_scan_cond_and_forward_mode():
    fun = jax.pmap(lambda x: jnp.sin(lax.psum(x, "i")) * x, axis_name="i")
    xs = jnp.arange(8.0).reshape(4, 2)
    # Real JAX 0.10.2's gradient of fun(x).sum(), the same on every row.
    want = np.broadcast_to([9.589674, -15.610455], (4, 2))
    for grad in (jax.grad(jax.checkpoint(lambda x: fun(x).sum())),
                 jax.grad(lambda x: jax.checkpoint(fun)(x).sum()),
                 jax.jacfwd(lambda x: fun(x).sum())):
        np.testing.assert_allclose(np.asarray(grad(xs)), want, rtol=1e-5)

    def step(carry, _):
        return fun(carry) * 0.1, None

    got = jax.grad(lambda x: lax.scan(step, x, None, length=3)[0].sum())(xs)
    np.testing.assert_allclose(np.asarray(got), np.broadcast_to([-0.00082638, 0.00054791],
                                                                (4, 2)), rtol=1e-4)
    chosen = jax.jit(lambda x, p: lax.cond(p, fun, lambda y: y, x))
    np.testing.assert_allclose(np.asarray(chosen(xs, True)), np.asarray(fun(xs)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(chosen(xs, False)), np.asarray(xs))
    _, linear = jax.linearize(fun, xs)
    np.testing.assert_allclose(np.asarray(linear(jnp.ones_like(xs))),
                               [[-0.53657293, -4.1185412], [6.2142587, -11.779818],
                                [12.96509, -19.441093], [19.715921, -27.10237]], rtol=1e-5)


def test_pmap_in_a_loop_of_a_jitted_program():
    # The loop body reads values hoisted out of it (this replica's id); the replicas run one
    # executable on four threads, each reading its own.
    fun = jax.pmap(lambda x: lax.psum(x, "i") + x, axis_name="i")
    xs = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    got = jax.jit(lambda x: lax.fori_loop(0, 2, lambda i, c: fun(c), x))(xs)
    once = xs.sum(0) + xs
    np.testing.assert_allclose(np.asarray(got), once.sum(0) + once)


def test_replicated_results_are_named_shardings_with_an_empty_spec():
    fun = jax.pmap(lambda x: lax.psum(x, "i") * jnp.ones(2), axis_name="i", out_axes=None)
    for got in (fun(jnp.arange(4.0)), jax.jit(fun)(jnp.arange(4.0))):
        np.testing.assert_array_equal(np.asarray(got), [6.0, 6.0])
        assert repr(got.sharding) == ("NamedSharding(mesh=Mesh('i': 4, axis_types=(Auto,)), "
                                      "spec=P(), memory_kind=device)")
        assert got.is_fully_replicated and len(got.devices()) == 4
        shard = got.addressable_shards[1]
        assert shard.index == (slice(None),) and shard.replica_id == 1
        np.testing.assert_array_equal(np.asarray(shard.data), [6.0, 6.0])


def test_a_pmap_of_concrete_arrays_under_a_transformation_is_staged():
    # Only plain evaluation runs it at once: make_jaxpr and jit of a function closing over
    # concrete arrays stage the pmap (found by checkify, which traces closed-over arrays).
    x = jnp.arange(4.0).reshape(4, 1)
    f = jax.pmap(lambda a: a * 2)
    closed = jax.make_jaxpr(lambda: f(x))()
    assert [e.primitive.name for e in closed.eqns] == ["jit"]
    np.testing.assert_allclose(jax.jit(lambda: f(x))(), np.arange(4.0).reshape(4, 1) * 2)
