"""`pmap` on 4 virtual CPU devices (`_src/transformations/pmap.py`): every collective against NumPy, the
replicas running at once on their devices' threads, pmap of grad, pmap and vmap nested,
argument handling and errors. Expected values were checked against real JAX 0.10.2."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.core import core
from justjax._src.hlo.sharding import MeshShape
from justjax._src.interpreters import lowering

DEVICES = 4


@pytest.fixture(autouse=True)
def four_devices():
    with jax.config.override("jax_num_cpu_devices", DEVICES):
        yield


def _data(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


COLLECTIVES = {
    "psum": (lambda x: lax.psum(x, "i"), lambda xs: np.broadcast_to(xs.sum(0), xs.shape)),
    "pmean": (lambda x: lax.pmean(x, "i"), lambda xs: np.broadcast_to(xs.mean(0), xs.shape)),
    "pmax": (lambda x: lax.pmax(x, "i"), lambda xs: np.broadcast_to(xs.max(0), xs.shape)),
    "pmin": (lambda x: lax.pmin(x, "i"), lambda xs: np.broadcast_to(xs.min(0), xs.shape)),
    "axis_index": (lambda x: x * lax.axis_index("i"),
                   lambda xs: xs * np.arange(DEVICES).reshape(-1, 1, 1)),
    "all_gather": (lambda x: lax.all_gather(x, "i"),
                   lambda xs: np.broadcast_to(xs, (DEVICES, *xs.shape))),
    "all_gather_tiled": (lambda x: lax.all_gather(x, "i", axis=1, tiled=True),
                         lambda xs: np.broadcast_to(np.concatenate(list(xs), axis=1),
                                                    (DEVICES, 2, 4 * DEVICES))),
    "psum_scatter_tiled": (lambda x: lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
                           lambda xs: np.stack([xs.sum(0)[:, i:i + 1] for i in range(4)])),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collective_matches_numpy(name):
    fun, reference = COLLECTIVES[name]
    xs = _data(DEVICES, 2, 4)
    got = jax.pmap(fun, axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(got), reference(xs), rtol=1e-6, atol=1e-6)


def test_psum_scatter_untiled():
    xs = _data(DEVICES, DEVICES, 3)
    got = jax.pmap(lambda x: lax.psum_scatter(x, "i"), axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(got), xs.sum(0), rtol=1e-6)


def test_replicas_run_at_once_on_their_devices():
    barrier = threading.Barrier(DEVICES, timeout=20)
    threads: list[str] = []

    def meet(x):
        threads.append(threading.current_thread().name)
        barrier.wait()  # times out unless all four replicas are running together
        return np.asarray(x)

    def fun(x):
        return jax.pure_callback(meet, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    xs = _data(DEVICES, 3)
    np.testing.assert_array_equal(np.asarray(jax.pmap(fun)(xs)), xs)
    assert sorted(t.rsplit("_", 1)[0] for t in threads) == [f"justjax-cpu{i}"
                                                            for i in range(DEVICES)]


def test_pmap_of_grad_averages_gradients_like_one_big_batch():
    w = np.array([0.5, -1.0], np.float32)
    xs = _data(DEVICES, 3, 2)

    def loss(w, x):
        return jnp.mean((x @ w) ** 2)

    step = jax.pmap(lambda w, x: lax.pmean(jax.grad(loss)(w, x), "i"), axis_name="i",
                    in_axes=(None, 0))
    got = np.asarray(step(w, xs))
    whole = np.asarray(jax.grad(loss)(w, xs.reshape(-1, 2)))
    for replica in range(DEVICES):
        np.testing.assert_allclose(got[replica], whole, rtol=1e-5)


def test_grad_through_pmean_inside_pmap_matches_jax():
    xs = jnp.arange(8.0).reshape(4, 2)
    fun = jax.pmap(jax.grad(lambda w, x: lax.pmean(jnp.sum((x * w) ** 2), "i")),
                   axis_name="i", in_axes=(None, 0))
    # Real JAX 0.10.2 gives these values.
    np.testing.assert_allclose(np.asarray(fun(jnp.ones(2), xs)),
                               [[0, 2], [8, 18], [32, 50], [72, 98]])


def test_vmap_of_pmap_and_pmap_of_vmap():
    xs = _data(3, DEVICES, 2)
    outer = jax.vmap(jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i"))(xs)
    np.testing.assert_allclose(np.asarray(outer),
                               np.broadcast_to(xs.sum(1, keepdims=True), xs.shape), rtol=1e-6)
    ys = _data(DEVICES, 3, 2)
    inner = jax.pmap(jax.vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"),
                     axis_name="i")(ys)
    np.testing.assert_allclose(np.asarray(inner), np.broadcast_to(ys.sum((0, 1)), ys.shape),
                               rtol=1e-5)


def test_in_axes_out_axes_static_and_keyword_arguments():
    xs = _data(2, DEVICES)

    def fun(x, scale, y=None):
        return x * scale + y

    mapped = jax.pmap(fun, in_axes=(1, None), out_axes=1, static_broadcasted_argnums=(1,))
    got = mapped(xs, 3.0, y=_data(DEVICES, 2))
    want = xs * 3.0 + _data(DEVICES, 2).T
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    same = jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i", out_axes=None)(xs.T)
    np.testing.assert_allclose(np.asarray(same), xs.T.sum(0), rtol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="requires 5 logical devices, but only 4"):
        jax.pmap(lambda x: x)(jnp.ones((5, 3)))
    with pytest.raises(ValueError, match="pmap got inconsistent sizes"):
        jax.pmap(lambda x, y: x + y)(jnp.ones((2, 3)), jnp.ones((3, 3)))
    with pytest.raises(NameError, match="unbound axis name: j"):
        jax.pmap(lambda x: lax.psum(x, "j"), axis_name="i")(jnp.ones((2, 3)))


def test_collectives_lower_to_stablehlo_collectives():
    def replica(x):
        return lax.psum(x, "i") + lax.axis_index("i")

    with core.extend_axis_env("i", DEVICES):
        closed = jax.make_jaxpr(replica)(jnp.ones(2))
    manual = lowering.ManualAxes(MeshShape.iota([("i", DEVICES)]), ("i",))
    text = str(lowering.lower_jaxpr_to_module(closed, "replica", ["result"], manual=manual,
                                              prefix="pmap"))
    assert "module @pmap_replica attributes {mhlo.num_partitions = 4 : i32, " \
           "mhlo.num_replicas = 1 : i32}" in text
    assert '"stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1, 2, 3]]> : ' \
           'tensor<1x4xi64>}>' in text
    assert "stablehlo.partition_id : tensor<ui32>" in text


def test_jit_of_pmap_lowers_to_a_manual_computation():
    # As real JAX 0.10.2 prints jax.jit(f).lower(x) for this pmap (its body; JAX's module also
    # gives main's argument and result the sharding and its all-reduce a channel).
    f = jax.pmap(lambda a: lax.psum(a, "i") * lax.axis_index("i"), axis_name="i")
    text = jax.jit(f).lower(jnp.arange(8.0).reshape(4, 2)).as_text()
    assert "mhlo.num_partitions = 4 : i32" in text
    assert 'sdy.mesh @mesh = <["i"=4]>' in text
    assert ('sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] '
            'out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} '
            '(%arg1: tensor<1x2xf32>) {') in text
    assert """      %c = stablehlo.constant dense<1> : tensor<ui32>
      %c_0 = stablehlo.constant dense<4> : tensor<ui32>
      %3 = stablehlo.partition_id : tensor<ui32>
      %4 = stablehlo.divide %3, %c : tensor<ui32>
      %5 = stablehlo.remainder %4, %c_0 : tensor<ui32>
      %6 = stablehlo.convert %5 : (tensor<ui32>) -> tensor<i32>""" in text
    assert "      sdy.return %10 : tensor<1x2xf32>\n    } : (tensor<4x2xf32>) -> tensor<4x2xf32>" \
        in text


def test_data_parallel_example_runs():
    import pathlib
    import subprocess
    import sys
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "data_parallel.py"
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "equal the single-device step's on every device" in out.stdout


PARTIAL = [(0, 1), (1, 2), (2, 0)]  # member 3 receives nothing


def test_ppermute_and_pshuffle_under_pmap_and_vmap():
    xs = jnp.arange(8.0).reshape(4, 2)
    # Real JAX 0.10.2's values.
    want = [[4, 5], [0, 1], [2, 3], [0, 0]]
    np.testing.assert_array_equal(
        np.asarray(jax.pmap(lambda x: lax.ppermute(x, "i", PARTIAL), axis_name="i")(xs)), want)
    np.testing.assert_array_equal(
        np.asarray(jax.vmap(lambda x: lax.ppermute(x, "i", PARTIAL), axis_name="i")(xs)), want)
    rotated = [[6, 7], [0, 1], [2, 3], [4, 5]]
    for mapped in (jax.pmap, jax.vmap):
        got = mapped(lambda x: lax.pshuffle(x, "i", [3, 0, 1, 2]), axis_name="i")(xs)
        np.testing.assert_array_equal(np.asarray(got), rotated)


def test_ppermute_gradient_is_the_inverse_permutation():
    xs = jnp.arange(8.0).reshape(4, 2)
    weights = jnp.arange(8.0).reshape(4, 2)

    def total(x):
        moved = jax.pmap(lambda v: lax.ppermute(v, "i", PARTIAL), axis_name="i")(x)
        return jnp.sum(moved * weights)

    np.testing.assert_array_equal(np.asarray(jax.grad(total)(xs)),
                                  [[2, 3], [4, 5], [0, 1], [0, 0]])


def test_ppermute_zeros_are_zeros_whatever_the_values():
    xs = jnp.array([[np.inf, 1.0], [2.0, np.nan], [3.0, 4.0]])
    got = jax.vmap(lambda x: lax.ppermute(x, "i", [(0, 1)]), axis_name="i")(xs)
    np.testing.assert_array_equal(np.asarray(got), [[0, 0], [np.inf, 1], [0, 0]])


def test_ppermute_errors():
    with pytest.raises(ValueError, match=r"must be unique, got \(\(0, 1\), \(0, 2\)\)"):
        jax.pmap(lambda x: lax.ppermute(x, "i", [(0, 1), (0, 2)]), axis_name="i")(
            jnp.ones((4, 2)))
    with pytest.raises(ValueError, match=r"does not represent a permutation: \[0, 0, 1, 2\]"):
        jax.vmap(lambda x: lax.pshuffle(x, "i", [0, 0, 1, 2]), axis_name="i")(jnp.ones((4, 2)))


@pytest.mark.parametrize("mapped", ["pmap", "vmap"])
def test_all_to_all(mapped):
    mapper = getattr(jax, mapped)
    x = np.arange(4 * 4 * 3, dtype=np.float32).reshape(4, 4, 3)
    # Member i gets piece i of every member j: untiled (0, 0) swaps the member axis with the
    # split axis; (0, 1) stacks the pieces along a new axis 1 (values checked against JAX).
    same = mapper(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(same), np.swapaxes(x, 0, 1))
    moved = mapper(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(moved), x.transpose(1, 2, 0))
    y = np.arange(4 * 8 * 3, dtype=np.float32).reshape(4, 8, 3)
    tiled = mapper(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(y)
    want = np.stack([np.concatenate([y[j, 2 * i:2 * i + 2] for j in range(4)], axis=1)
                     for i in range(4)])
    np.testing.assert_array_equal(np.asarray(tiled), want)


def test_pswapaxes():
    x = np.arange(4 * 3 * 4, dtype=np.float32).reshape(4, 3, 4)
    got = jax.pmap(lambda v: lax.pswapaxes(v, "i", 1), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(got), np.swapaxes(x, 0, 2))
    # Within groups of two devices (values read off JAX 0.10.2 on 4 CPU devices).
    grouped = jax.pmap(lambda v: lax.pswapaxes(v, "i", 0, axis_index_groups=[[0, 1], [2, 3]]),
                       axis_name="i")(np.arange(8.0, dtype=np.float32).reshape(4, 2))
    np.testing.assert_array_equal(np.asarray(grouped), [[0, 2], [1, 3], [4, 6], [5, 7]])


def test_all_to_all_gradient_and_error():
    x = jnp.arange(48.0).reshape(4, 4, 3)
    weights = np.arange(48.0, dtype=np.float32).reshape(4, 3, 4)

    def total(v):
        out = jax.pmap(lambda u: lax.all_to_all(u, "i", 0, 1), axis_name="i")(v)
        return jnp.sum(out * weights)

    np.testing.assert_array_equal(np.asarray(jax.grad(total)(x)), weights.transpose(2, 0, 1))
    with pytest.raises(ValueError, match="but they are 4 and 3 respectively"):
        jax.vmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")(x)


def test_results_are_sharded_over_the_devices():
    out = jax.pmap(lambda x: x * 2, axis_name="i")(jnp.ones((DEVICES, 2)))
    # As real JAX 0.10.2 prints and answers them.
    assert repr(out.sharding) == ("NamedSharding(mesh=Mesh('i': 4, axis_types=(Auto,)), "
                                  "spec=P('i',), memory_kind=device)")
    assert out.devices() == set(jax.devices()) and out.committed
    assert not out.is_fully_replicated and out.is_fully_addressable
    assert out.device is out.sharding
    shard = out.addressable_shards[1]
    assert shard.device == jax.devices()[1]
    assert shard.index == (slice(1, 2), slice(None))
    assert shard.data.devices() == {jax.devices()[1]} and shard.data.shape == (1, 2)
    moved = jax.pmap(lambda x: x, out_axes=1)(jnp.ones((DEVICES, 2)))
    assert repr(moved.sharding) == (
        "NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 4, axis_types=(Auto,)), "
        "spec=P(None, '_internal_pmap_axis_name'), memory_kind=device)")
    # What is computed from a pmap result stays sharded over its devices, as in JAX.
    assert (out + 1).devices() == set(jax.devices())
    assert (out + 1).sharding == out.sharding


def test_key_arrays_in_and_out():
    keys = jax.random.split(jax.random.key(0), DEVICES)
    normals = jax.pmap(lambda k: jax.random.normal(k, (2,)))(keys)
    # Real JAX 0.10.2's values.
    np.testing.assert_allclose(np.asarray(normals), [[1.0040143, -0.9063372],
                                                     [-2.4424558, -2.0356805],
                                                     [1.2956359, 1.3550105],
                                                     [-0.6219436, 0.6248041]], rtol=1e-6)
    split = jax.pmap(jax.random.split)(keys)
    assert split.shape == (DEVICES, 2) and split.dtype == keys.dtype
    assert split.devices() == set(jax.devices())


def test_each_replica_thread_uses_one_blas_thread(monkeypatch):
    from justjax._src import backends
    if backends.get_backend().name != "llvm":
        pytest.skip("the native backend's BLAS")
    from justjax._src.backends.llvm.codegen import program  # noqa: F401  (loads the kernels first)
    from justjax._src.backends.llvm.kernels import dot as kernels_dot
    prepared: list[str] = []
    jax.effects_barrier()  # runs dispatched earlier (not waited for) are done
    monkeypatch.setattr(kernels_dot, "use_one_blas_thread_here",
                        lambda: prepared.append(threading.current_thread().name))
    jax.pmap(lambda x: x @ x.T)(jnp.ones((DEVICES, 3, 3))).block_until_ready()
    assert sorted(n.rsplit("_", 1)[0] for n in prepared) == [f"justjax-cpu{i}"
                                                             for i in range(DEVICES)]


def test_scipy_openblas_sets_threads_per_thread():
    from justjax._src.backends.llvm.codegen import program  # noqa: F401  (loads the kernels first)
    from justjax._src.backends.llvm.kernels import dot as kernels_dot
    function = kernels_dot._openblas_set_threads_local()
    if function is None:
        pytest.skip("this SciPy's OpenBLAS has no openblas_set_num_threads_local")
    previous = function(1)  # returns the calling thread's previous count
    function(previous)
    assert previous >= 0


def test_lower_ahead_of_time():
    f = jax.pmap(lambda x, y: 2 * x + y)
    lowered = f.lower(jnp.array([3]), jnp.array([4]))
    assert "stablehlo" in lowered.as_text()
    np.testing.assert_array_equal(lowered.compile()(jnp.array([3]), jnp.array([4])), [10])
