"""The SPMD partitioner (`hlo/passes/spmd_partitioner.py`): a lowered program with argument
shardings becomes one per-device program; run as replicas on 4 virtual devices (both backends)
on the blocks of its inputs, it gives the unpartitioned program's results, and it holds the
collectives the splits need."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends
from justjax._src.compilation.spmd import block_of
from justjax._src.hlo import verifier
from justjax._src.hlo.passes.spmd_partitioner import SpmdPartitioner, UnevenShardingError
from justjax._src.hlo.passes.util import clone_module
from justjax._src.hlo.sharding import SHARDING, MeshShape, TensorSharding
from justjax._src.runtime import replicas
from tests import random_programs

MESHES = {"2x2": [("a", 2), ("b", 2)], "1x4": [("a", 1), ("b", 4)],
          "4x1": [("a", 4), ("b", 1)]}


@pytest.fixture(autouse=True)
def four_devices():
    with jax.config.override("jax_num_cpu_devices", 4):
        yield


def _spec(mesh, *dims):
    return TensorSharding(mesh, tuple(tuple(d) if isinstance(d, tuple) else ((d,) if d else ())
                                      for d in dims))


def _partitioned(f, inputs, arg_shardings, result_shardings=None):
    module = clone_module(jax.jit(f).lower(*inputs).compiler_ir())
    main = module.main
    main.arg_attrs = [{SHARDING: s} if s is not None else {} for s in arg_shardings]
    if result_shardings is not None:
        main.result_attrs = [dict(attrs, **({SHARDING: s} if s is not None else {}))
                             for attrs, s in zip(main.result_attrs, result_shardings, strict=True)]
    assert SpmdPartitioner().run(module)
    verifier.verify(module)
    return module


def _run(module, inputs, backend):
    """Runs the partitioned `module` on every device's blocks of `inputs`; returns the global
    results, checking that devices holding the same block agree."""
    main = module.main
    arg_shardings = [a[SHARDING] for a in main.arg_attrs]
    out_shardings = [a[SHARDING] for a in main.result_attrs]
    mesh = arg_shardings[0].mesh
    executable = backends.get_backend(backend).compile(module)
    per_device = [[block_of(np.asarray(x), s, p)
                   for x, s in zip(inputs, arg_shardings, strict=True)]
                  for p in range(mesh.device_count)]
    outs = replicas.run_replicas(executable, per_device, list(range(mesh.device_count)))
    results = []
    for k, sharding in enumerate(out_shardings):
        first = np.asarray(outs[0][k])
        shape = tuple(b * t for b, t in zip(first.shape, sharding.tiles(), strict=True))
        whole = np.zeros(shape, first.dtype)
        seen: dict[tuple, np.ndarray] = {}
        for p in range(mesh.device_count):
            block = np.asarray(outs[p][k])
            index = sharding.block_index(p)
            if index in seen:
                np.testing.assert_array_equal(block, seen[index])
                continue
            seen[index] = block
            whole[tuple(slice(i * s, (i + 1) * s)
                        for i, s in zip(index, block.shape, strict=True))] = block
        results.append(whole)
    return results


def _opcodes(module):
    return [op.opcode.split(".")[-1] for op in module.main.body.ops]


def _mlp(x, w1, w2):
    return jnp.sum(jnp.tanh(x @ w1) @ w2, axis=1)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 12), np.float32)
W1 = RNG.standard_normal((12, 16), np.float32)
W2 = RNG.standard_normal((16, 4), np.float32)
V = RNG.standard_normal((12,), np.float32)

IMAGES = RNG.standard_normal((8, 6, 6, 4), np.float32)
KERNEL = RNG.standard_normal((3, 3, 4, 8), np.float32)
TABLE = RNG.standard_normal((10, 8), np.float32)
IDS = RNG.integers(0, 10, (8, 3)).astype(np.int32)
UPDATES = RNG.standard_normal((8, 3, 8), np.float32)


_A = RNG.standard_normal((8, 5, 5), np.float32)
SPD = _A @ _A.transpose(0, 2, 1) + 5 * np.eye(5, dtype=np.float32)
BATCHED = RNG.standard_normal((8, 5, 8), np.float32)
ROWS = (np.arange(8) * 3 % 8).astype(np.int32)
COLUMNS = RNG.standard_normal((8, 5), np.float32)
H = RNG.standard_normal((8, 4), np.float32)
XS = RNG.standard_normal((5, 8, 4), np.float32)
W_RNN = RNG.standard_normal((4, 4), np.float32) * 0.5


def _rnn(h, xs, w):
    return jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x), h.sum()), h, xs)


def _rnn_train(w, h, xs):
    grad = jax.grad(lambda w: _rnn(h, xs, w)[0].sum())
    return jax.lax.fori_loop(0, 3, lambda i, w: w - 0.1 * grad(w), w)


def _conv(x, k):
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _cnn_loss(k, w, table, x, ids):
    h = jax.nn.relu(_conv(x, k)).reshape(x.shape[0], -1)
    return jnp.mean((h @ w + table[ids].sum(1)) ** 2)


# name: (function, inputs, per input the dims' axis specs)
CASES = {
    "elementwise": (lambda x, y: jnp.exp(x) * y - 1.0, [X, X], [("a", None), (None, "b")]),
    "broadcast_bias": (lambda x, v: jnp.maximum(x + v, 0.0), [X, V], [("a", "b"), (None,)]),
    "transpose": (lambda x: jnp.sin(x).T * 2.0, [X], [("a", "b")]),
    "reshape": (lambda x: (x * 2).reshape(4, 24).reshape(96), [X], [("a", None)]),
    "sum_rows": (lambda x: jnp.sum(x, axis=0), [X], [("a", "b")]),
    "max_all": (lambda x: jnp.max(x), [X], [("a", "b")]),
    "dot_data_parallel": (lambda x, w: x @ w, [X, W1], [("a", None), (None, None)]),
    "dot_contracting": (lambda x, w: x @ w, [X, W1], [(None, "b"), ("b", None)]),
    "dot_mixed": (lambda x, w: x @ w, [X, W1], [("a", "b"), ("b", None)]),
    "mlp_megatron": (_mlp, [X, W1, W2], [("a", None), (None, "b"), ("b", None)]),
    "slice_concat": (lambda x: jnp.concatenate([x[:, 2:6], x[:, :3]], axis=1) + 1,
                     [X], [("a", "b")]),
    "sort_whole": (lambda x: jnp.sort(x, axis=1) * 2, [X], [("a", "b")]),
    "scan_rnn": (lambda h, xs, w: _rnn(h, xs, w), [H, XS, W_RNN], [("a", None), (None, "a", "b"),
                                                                   (None, None)]),
    "fori_train": (lambda w, h, xs: _rnn_train(w, h, xs), [W_RNN, H, XS],
                   [(None, None), ("a", None), (None, "a", None)]),
    "scatter_batched": (jax.vmap(lambda m, i, u: m.at[:, i].set(u)), [BATCHED, ROWS, COLUMNS],
                        [("a", None, "b"), ("a",), ("a", None)]),
    "cholesky_batch": (lambda m: jnp.linalg.cholesky(m) * 2, [SPD], [(("a", "b"), None, None)]),
    "conv_batch": (lambda x, k: _conv(x, k), [IMAGES, KERNEL], [("a", None, None, "b"),
                                                                 (None, None, "b", None)]),
    "conv_features": (lambda x, k: _conv(x, k), [IMAGES, KERNEL], [(None, None, None, None),
                                                                    (None, None, None, "a")]),
    "gather_rows": (lambda t, i: t[i] * 2, [TABLE, IDS], [(None, "b"), ("a", None)]),
    "scatter_add": (lambda i, u: jnp.zeros((10, 8)).at[i].add(u), [IDS, UPDATES],
                    [("a", None), ("a", None, "b")]),
    "scatter_add_onto": (lambda t, i, u: jnp.asarray(t).at[i].add(u), [TABLE, IDS, UPDATES],
                         [(None, None), (("a", "b"), None), (("a", "b"), None, None)]),
    "cumsum_whole": (lambda x: jnp.cumsum(x, axis=0), [X], [(None, "a")]),
}


@pytest.mark.parametrize("backend", ["reference", "llvm"])
@pytest.mark.parametrize("mesh_name", list(MESHES))
@pytest.mark.parametrize("name", list(CASES))
def test_partitioned_program_equals_the_whole_one(name, mesh_name, backend):
    f, inputs, specs = CASES[name]
    mesh = MeshShape.iota(MESHES[mesh_name])
    shardings = [_spec(mesh, *dims) for dims in specs]
    module = _partitioned(f, inputs, shardings)
    got = _run(module, inputs, backend)
    want = f(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=2e-5, atol=2e-5)


def test_result_shardings_are_given_and_kept():
    mesh = MeshShape.iota(MESHES["2x2"])
    f = lambda x: jnp.tanh(x) * 3.0
    out = _spec(mesh, "b", "a")
    module = _partitioned(f, [X], [_spec(mesh, "a", None)], [out])
    assert module.main.result_attrs[0][SHARDING] == out
    assert module.main.result_types[0].shape == (4, 6)
    np.testing.assert_allclose(_run(module, [X], "reference")[0], np.asarray(f(X)), rtol=1e-6)


def test_local_shapes_and_partition_count():
    mesh = MeshShape.iota(MESHES["2x2"])
    module = _partitioned(lambda x, y: x + y, [X, X], [_spec(mesh, "a", "b")] * 2)
    assert [a.type.shape for a in module.main.args] == [(4, 6), (4, 6)]
    assert module.attributes["mhlo.num_partitions"].value == 4
    # Both operands split alike: no collective at all.
    assert not {"all_gather", "all_reduce", "dynamic_slice"} & set(_opcodes(module))


def test_data_parallel_mlp_needs_no_collective_in_the_forward_pass():
    mesh = MeshShape.iota(MESHES["2x2"])
    module = _partitioned(_mlp, [X, W1, W2], [_spec(mesh, ("a", "b"), None),
                                              _spec(mesh, None, None), _spec(mesh, None, None)])
    assert not {"all_gather", "all_reduce"} & set(_opcodes(module))


def test_megatron_mlp_needs_one_all_reduce():
    """Columns of w1 and rows of w2 split over b: the hidden layer is split, the second dot
    sums over it with one all-reduce (as XLA's partitioner does), nothing is gathered."""
    mesh = MeshShape.iota(MESHES["2x2"])
    module = _partitioned(_mlp, [X, W1, W2], [_spec(mesh, None, None), _spec(mesh, None, "b"),
                                              _spec(mesh, "b", None)])
    ops = _opcodes(module)
    assert ops.count("all_reduce") == 1
    assert "all_gather" not in ops


def test_sum_over_a_split_dimension_is_one_all_reduce_over_its_axes():
    mesh = MeshShape.iota(MESHES["2x2"])
    module = _partitioned(lambda x: jnp.sum(x, axis=0), [X], [_spec(mesh, "a", "b")])
    (reduce_all,) = [op for op in module.main.body.ops if op.opcode == "stablehlo.all_reduce"]
    assert reduce_all.attributes["replica_groups"].tolist() == [[0, 2], [1, 3]]


def test_uneven_argument_shardings_are_an_error():
    mesh = MeshShape.iota(MESHES["2x2"])
    odd = np.ones((5, 4), np.float32)
    with pytest.raises(UnevenShardingError, match="dimension 0 of size 5"):
        _partitioned(lambda x: x * 2, [odd], [_spec(mesh, "a", None)])


def test_a_program_without_shardings_is_left_alone():
    module = clone_module(jax.jit(lambda x: x * 2).lower(X).compiler_ir())
    before = str(module)
    assert not SpmdPartitioner().run(module)
    assert str(module) == before


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_with_random_shardings(seed):
    """A small fuzzer: chains of elementwise ops, transposes, sums and dots over inputs split
    at random over a 2x2 mesh give the unpartitioned results."""
    rng = np.random.default_rng(seed)
    mesh = MeshShape.iota(MESHES["2x2"])
    f, a, b = random_programs.chain(rng)
    specs = [_spec(mesh, *random_programs.split(rng)) for _ in range(2)]
    module = _partitioned(f, [a, b], specs)
    got = _run(module, [a, b], "reference")
    want = f(a, b)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-4, atol=1e-4)


# Collectives in real JAX 0.10.2's compiled module for the same programs and shardings on a
# 2x2 mesh (counted in `.compile().as_text()`: all-reduce, all-gather; neither reduce-scatter,
# all-to-all nor collective-permute appears in any of them).
XLA_COLLECTIVES = {
    "data_parallel_mlp": (_mlp, [X, W1, W2], [(("a", "b"), None), (None, None), (None, None)],
                          0, 0),
    "megatron_mlp": (_mlp, [X, W1, W2], [(None, None), (None, "b"), ("b", None)], 1, 0),
    "sum_rows": (lambda x: jnp.sum(x, axis=0), [X], [("a", "b")], 1, 0),
    "dot_contracting": (lambda x, w: x @ w, [X, W1], [(None, "b"), ("b", None)], 1, 0),
    "dot_mixed": (lambda x, w: x @ w, [X, W1], [("a", "b"), ("b", None)], 1, 0),
    "elementwise": (lambda x, y: jnp.exp(x) * y - 1.0, [X, X], [("a", None), (None, "b")], 0, 0),
}


@pytest.mark.parametrize("name", list(XLA_COLLECTIVES))
def test_no_more_collectives_than_xla(name):
    f, inputs, specs, all_reduces, all_gathers = XLA_COLLECTIVES[name]
    mesh = MeshShape.iota(MESHES["2x2"])
    ops = _opcodes(_partitioned(f, inputs, [_spec(mesh, *dims) for dims in specs]))
    assert ops.count("all_reduce") <= all_reduces
    assert ops.count("all_gather") <= all_gathers
    assert not {"reduce_scatter", "all_to_all", "collective_permute"} & set(ops)


def _mlp_loss(w1, w2, x):
    return jnp.mean(jnp.tanh(x @ w1) @ w2)


# The backward pass (grad of `_mlp_loss` in both weights): collectives in JAX 0.10.2's
# compiled module on a 2x2 mesh. XLA combines the data-parallel gradients' all-reduces into
# one (a tuple all-reduce); so does justjax (`all_reduce_combiner.py`).
XLA_BACKWARD = {
    "data_parallel": ([(None, None), (None, None), (("a", "b"), None)], 1, 0),
    "megatron": ([(None, "b"), ("b", None), (None, None)], 0, 0),
    "two_dimensional": ([(None, "b"), ("b", None), ("a", None)], 1, 0),
}


@pytest.mark.parametrize("f, inputs, specs", [
    (_rnn, [H, XS, W_RNN], [("a", None), (None, "a", None), (None, None)]),
    (_rnn_train, [W_RNN, H, XS], [(None, None), ("a", None), (None, "a", None)]),
], ids=["scan", "training_loop"])
def test_loops_keep_their_carries_split_as_xla(f, inputs, specs):
    # Real JAX 0.10.2's compiled modules for these programs on a 2x2 mesh: one all-reduce
    # (the sum of the scan's outputs; the gradient's), no all-gather: the batch stays split
    # through the loops, the loss's buffers filled in place included.
    mesh = MeshShape.iota(MESHES["2x2"])
    module = _partitioned(f, inputs, [_spec(mesh, *dims) for dims in specs])
    ops = [op.opcode.split(".")[-1] for op in module.walk()]
    assert ops.count("all_reduce") == 1 and "all_gather" not in ops
    want = f(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(_run(module, inputs, "llvm"), want, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5, atol=1e-5)


def test_data_parallel_cnn_with_an_embedding_needs_one_all_reduce_as_xla():
    # Real JAX 0.10.2's compiled module for this gradient on a 2x2 mesh, the batch split over
    # both axes and the parameters whole: one all-reduce (the gradients' combined), nothing
    # else; the embedding's gradient is a scatter-add of each device's part, then summed.
    mesh = MeshShape.iota(MESHES["2x2"])
    w = RNG.standard_normal((6 * 6 * 8, 8), np.float32) * 0.05
    inputs = [KERNEL, w, TABLE, IMAGES, IDS]
    specs = [(None,) * 4, (None, None), (None, None), (("a", "b"), None, None, None),
             (("a", "b"), None)]
    grad = jax.grad(_cnn_loss, argnums=(0, 1, 2))
    module = _partitioned(grad, inputs, [_spec(mesh, *dims) for dims in specs])
    ops = _opcodes(module)
    assert ops.count("all_reduce") == 1 and "all_gather" not in ops
    for g, want in zip(_run(module, inputs, "llvm"), grad(*inputs), strict=True):
        np.testing.assert_allclose(g, np.asarray(want), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(XLA_BACKWARD))
def test_backward_needs_no_more_collectives_than_xla(name):
    specs, all_reduces, all_gathers = XLA_BACKWARD[name]
    mesh = MeshShape.iota(MESHES["2x2"])
    inputs = [W1, W2, X]
    grad = jax.grad(_mlp_loss, argnums=(0, 1))
    module = _partitioned(grad, inputs, [_spec(mesh, *dims) for dims in specs])
    ops = _opcodes(module)
    assert ops.count("all_reduce") <= all_reduces
    assert ops.count("all_gather") <= all_gathers
    got = _run(module, inputs, "llvm")
    for g, w in zip(got, grad(*inputs), strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5, atol=1e-6)


# Moving a split between dimensions, and completing a sum its users want split: the compiled
# module holds an all-to-all / a reduce-scatter (real JAX 0.10.2 uses an all-to-all for the
# first; for the sums it emits an all-reduce and a collective-permute, moving more).
def test_a_split_moving_between_dimensions_is_an_all_to_all():
    mesh = MeshShape.iota(MESHES["2x2"])
    f = lambda x: x * 2.0
    module = _partitioned(f, [X], [_spec(mesh, "a", None)], [_spec(mesh, None, "a")])
    assert "all_to_all" in _opcodes(module) and "all_gather" not in _opcodes(module)
    for backend in ("reference", "llvm"):
        np.testing.assert_allclose(_run(module, [X], backend)[0], X * 2.0)


@pytest.mark.parametrize("case", ["zero_gradient", "contraction_split_result"])
def test_a_sum_wanted_split_is_a_reduce_scatter(case):
    mesh = MeshShape.iota(MESHES["2x2"])
    if case == "zero_gradient":  # the weights' gradient of a batch split over a, kept split
        x = RNG.standard_normal((16, 12), np.float32)
        f = jax.grad(lambda w, x: jnp.mean(jnp.tanh(x @ w) ** 2))
        inputs, specs, out = [W1, x], [(None, None), ("a", None)], ("a", None)
    else:
        f = lambda x, w: x @ w
        inputs, specs, out = [X, W1], [(None, "b"), ("b", None)], ("b", None)
    module = _partitioned(f, inputs, [_spec(mesh, *dims) for dims in specs], [_spec(mesh, *out)])
    ops = _opcodes(module)
    assert ops.count("reduce_scatter") == 1
    assert not {"all_reduce", "all_gather", "all_to_all"} & set(ops)
    for backend in ("reference", "llvm"):
        np.testing.assert_allclose(_run(module, inputs, backend)[0], np.asarray(f(*inputs)),
                                   rtol=1e-5, atol=1e-6)


def test_a_batched_linear_algebra_call_runs_on_each_devices_batch():
    # Its sharding rule shares the batch dimensions: no collective, as in XLA's module.
    mesh = MeshShape.iota(MESHES["2x2"])
    f = lambda m: jnp.linalg.cholesky(m).sum(axis=(1, 2)) + jnp.linalg.slogdet(m)[1]
    module = _partitioned(f, [SPD], [_spec(mesh, ("a", "b"), None, None)])
    ops = [op.opcode for op in module.walk()]
    assert "stablehlo.custom_call" in ops
    assert not any(o.split(".")[-1] in ("all_gather", "all_reduce") for o in ops)  # slogdet's
    # permutation loop included: its batched scatters and gathers keep the batch split.
    calls = [op for op in module.walk() if op.opcode == "stablehlo.custom_call"]
    scatters = [op for op in module.walk() if op.opcode == "stablehlo.scatter"]
    assert scatters and all(op.result.type.shape[0] == 2 for op in scatters)
    assert all(op.operands[0].type.shape[0] == 2 for op in calls)
    np.testing.assert_allclose(_run(module, [SPD], "llvm")[0], np.asarray(f(SPD)), rtol=1e-5)


def _conv(x, k, padding="SAME"):
    return jax.lax.conv_general_dilated(x, k, (1, 1), padding,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


ROWS_SPLIT_IMAGES = RNG.standard_normal((2, 16, 8, 3)).astype(np.float32)
WINDOW_KERNEL = RNG.standard_normal((3, 3, 3, 5)).astype(np.float32)


@pytest.mark.parametrize("padding, permutes", [("SAME", 2), (((2, 0), (1, 1)), 1),
                                               (((0, 2), (1, 1)), 1)])
@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_convolution_split_along_a_spatial_dimension_exchanges_halos(padding, permutes,
                                                                     backend):
    # Real JAX 0.10.2's compiled module for the SAME convolution with its input's rows split
    # over 4 devices: two collective-permutes (the halos from each neighbour), no other
    # collective, the result split as the input. Padding on one side only needs one halo.
    mesh = MeshShape.iota(MESHES["1x4"])
    module = _partitioned(lambda x, k: _conv(x, k, padding), [ROWS_SPLIT_IMAGES, WINDOW_KERNEL],
                          [_spec(mesh, None, "b", None, None), _spec(mesh, None, None, None, None)])
    ops = _opcodes(module)
    assert ops.count("collective_permute") == permutes
    assert not {"all_gather", "all_reduce", "all_to_all", "reduce_scatter"} & set(ops)
    assert module.main.result_attrs[0][SHARDING] == _spec(mesh, None, "b", None, None)
    (got,) = _run(module, [ROWS_SPLIT_IMAGES, WINDOW_KERNEL], backend)
    np.testing.assert_allclose(got, np.asarray(_conv(ROWS_SPLIT_IMAGES, WINDOW_KERNEL, padding)), rtol=1e-5,
                               atol=1e-5)


def test_halos_wider_than_a_block_gather_the_dimension():
    mesh = MeshShape.iota(MESHES["1x4"])
    kernel = np.ones((11, 1, 3, 2), np.float32)
    padding = ((5, 5), (0, 0))
    module = _partitioned(lambda x, k: _conv(x, k, padding), [ROWS_SPLIT_IMAGES, kernel],
                          [_spec(mesh, None, "b", None, None), _spec(mesh, None, None, None, None)])
    assert "collective_permute" not in _opcodes(module)
    (got,) = _run(module, [ROWS_SPLIT_IMAGES, kernel], "llvm")
    np.testing.assert_allclose(got, np.asarray(_conv(ROWS_SPLIT_IMAGES, kernel, padding)), rtol=1e-5,
                               atol=1e-5)


def _max_pool(x, window, strides, padding):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, padding)


def _avg_pool_sum(x, window, strides, padding):
    return jax.lax.reduce_window(x, 0.0, jax.lax.add, window, strides, padding)


# Real JAX 0.10.2's compiled modules with the images' batch over 'a' and rows over 'b' (2x2):
# side-by-side windows (a pooling) need no collective; a SAME window moving one row at a time
# needs two collective-permutes (one with padding on one side only), the ends filled with
# the initial value.
@pytest.mark.parametrize("pool", [_max_pool, _avg_pool_sum])
@pytest.mark.parametrize("window, strides, padding, permutes", [
    ((1, 2, 2, 1), (1, 2, 2, 1), "VALID", 0),
    ((1, 4, 1, 1), (1, 4, 1, 1), "VALID", 0),
    ((1, 3, 3, 1), (1, 1, 1, 1), "SAME", 2),
    ((1, 3, 1, 1), (1, 1, 1, 1), ((0, 0), (2, 0), (0, 0), (0, 0)), 1),
    ((1, 3, 1, 1), (1, 1, 1, 1), ((0, 0), (0, 2), (0, 0), (0, 0)), 1),
])
@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_pooling_split_along_a_windowed_dimension(pool, window, strides, padding, permutes,
                                                  backend):
    mesh = MeshShape.iota(MESHES["2x2"])
    images = RNG.standard_normal((4, 16, 8, 3)).astype(np.float32) - 2.0
    split = _spec(mesh, "a", "b", None, None)
    f = lambda x: pool(x, window, strides, padding)  # noqa: E731
    module = _partitioned(f, [images], [split])
    ops = _opcodes(module)
    assert ops.count("collective_permute") == permutes
    assert not {"all_gather", "all_reduce", "all_to_all", "reduce_scatter"} & set(ops)
    assert module.main.result_attrs[0][SHARDING] == split
    (got,) = _run(module, [images], backend)
    np.testing.assert_allclose(got, np.asarray(f(images)), rtol=1e-6)


def test_overlapping_strided_windows_gather_their_dimension():
    mesh = MeshShape.iota(MESHES["1x4"])
    images = RNG.standard_normal((2, 16, 8, 3)).astype(np.float32)
    f = lambda x: _max_pool(x, (1, 3, 1, 1), (1, 2, 1, 1), "VALID")  # noqa: E731
    module = _partitioned(f, [images], [_spec(mesh, None, "b", None, None)])
    assert "collective_permute" not in _opcodes(module)
    (got,) = _run(module, [images], "llvm")
    np.testing.assert_allclose(got, np.asarray(f(images)))


@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_max_pooling_gradient_keeps_its_blocks_as_xla(backend):
    # Real JAX 0.10.2: the gradient of a 2x2 max pooling of images split over batch and rows
    # (2x2 mesh) has no collective and the images' sharding. Ties go to the first maximum.
    mesh = MeshShape.iota(MESHES["2x2"])
    images = (np.arange(4 * 16 * 8 * 3).reshape(4, 16, 8, 3) % 7).astype(np.float32)
    split = _spec(mesh, "a", "b", None, None)
    f = jax.grad(lambda x: _max_pool(x, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum())
    module = _partitioned(f, [images], [split])
    assert not {"all_gather", "all_reduce", "all_to_all", "collective_permute"} & set(
        _opcodes(module))
    assert module.main.result_attrs[0][SHARDING] == split
    (got,) = _run(module, [images], backend)
    np.testing.assert_array_equal(got, np.asarray(f(images)))


GRID = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)


# Real JAX 0.10.2 rolls a 2x2-split f32[16,8] by 1 or -3 along rows, or by 5 along columns,
# with one collective-permute and keeps the split.
@pytest.mark.parametrize("rows", [("b",), ("a", "b")])
@pytest.mark.parametrize("shift", [1, -1, 3, -3, 4, 5, 8, 13])
@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_a_roll_along_a_split_dimension_is_collective_permutes(rows, shift, backend):
    mesh = MeshShape.iota(MESHES["2x2"])
    split = _spec(mesh, rows, None if len(rows) == 2 else "a")
    f = lambda x: jnp.roll(x, shift, 0)  # noqa: E731
    module = _partitioned(f, [GRID], [split])
    ops = _opcodes(module)
    width = 4 if len(rows) == 2 else 2
    block = 16 // width
    # A block from one device when the shift is whole blocks, else from two; from itself
    # when the blocks come round to where they were.
    sources = {(shift // block + k) % width for k in ((0,) if shift % block == 0 else (0, 1))}
    assert ops.count("collective_permute") == len(sources - {0})
    assert not {"all_gather", "all_reduce", "all_to_all", "reduce_scatter"} & set(ops)
    assert module.main.result_attrs[0][SHARDING] == split
    (got,) = _run(module, [GRID], backend)
    np.testing.assert_array_equal(got, np.roll(GRID, shift, 0))


def test_a_roll_along_both_split_dimensions():
    mesh = MeshShape.iota(MESHES["2x2"])
    split = _spec(mesh, "b", "a")
    f = lambda x: jnp.roll(x, (3, -1), (0, 1))  # noqa: E731
    module = _partitioned(f, [GRID], [split])
    assert _opcodes(module).count("collective_permute") == 2
    assert module.main.result_attrs[0][SHARDING] == split
    (got,) = _run(module, [GRID], "llvm")
    np.testing.assert_array_equal(got, np.roll(GRID, (3, -1), (0, 1)))


def test_a_roll_of_a_whole_dimension_stays_local():
    mesh = MeshShape.iota(MESHES["2x2"])
    split = _spec(mesh, "b", "a")
    f = lambda x: jnp.roll(x, 2, 0) * 2.0  # noqa: E731
    module = _partitioned(f, [GRID], [split], [_spec(mesh, None, "a")])
    (got,) = _run(module, [GRID], "reference")
    np.testing.assert_array_equal(got, np.roll(GRID, 2, 0) * 2.0)
    assert "rotate" not in " ".join(_opcodes(module))
