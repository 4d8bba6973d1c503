"""Global programs run in one process over N devices, or over MPI in several processes
whose devices add up to N (`mpiexec -n P python programs.py OUT N`): the results (the whole
value of every global array, gathered) must agree. Process 0 writes them to OUT (.npz).

Run by tests/test_multiprocess.py.
"""
from __future__ import annotations

import os
import sys

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax._src.runtime import processes
from justjax.experimental import multihost_utils
from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P
from tests import random_programs

UNDER_MPI = any(v in os.environ for v in ("PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"))


def whole(x):
    """The whole value of a (possibly global) array, as NumPy."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return multihost_utils.process_allgather(x, tiled=True)
    return np.asarray(x)


def global_array(value, sharding):
    """`value` (the same in every process) as an array laid out as `sharding` says, each
    process giving its devices' blocks."""
    return jax.make_array_from_callback(value.shape, sharding, lambda index: value[index])


def mlp_loss(params, x, y):
    w1, w2 = params
    h = jnp.tanh(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)


def data_parallel(results, devices):
    mesh = Mesh(np.array(devices), ("data",))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    y = rng.standard_normal((16, 4)).astype(np.float32)
    params = (rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
              rng.standard_normal((16, 4)).astype(np.float32) * 0.3)
    replicated = NamedSharding(mesh, P())
    batch = NamedSharding(mesh, P("data"))
    params = jax.device_put(params, replicated)
    xs, ys = global_array(x, batch), global_array(y, batch)

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        return loss, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)

    losses = []
    for _ in range(3):
        loss, params = step(params, xs, ys)
        losses.append(whole(loss))
    results["dp_losses"] = np.array(losses)
    results["dp_w1"] = whole(params[0])
    results["dp_w2"] = whole(params[1])


def tensor_parallel(results, devices):
    mesh = Mesh(np.array(devices).reshape(2, -1), ("data", "model"))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    y = rng.standard_normal((8, 4)).astype(np.float32)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    params = (global_array(w1, NamedSharding(mesh, P(None, "model"))),
              global_array(w2, NamedSharding(mesh, P("model", None))))
    xs = global_array(x, NamedSharding(mesh, P("data")))
    ys = global_array(y, NamedSharding(mesh, P("data")))
    loss, grads = jax.jit(jax.value_and_grad(mlp_loss))(params, xs, ys)
    results["tp_loss"] = whole(loss)
    results["tp_g1"] = whole(grads[0])
    results["tp_g2"] = whole(grads[1])
    results["tp_g1_spec"] = np.array(str(grads[0].sharding.spec))


def collectives(results, devices):
    n = len(devices)
    mesh = Mesh(np.array(devices), ("x",))
    value = np.arange(n * 4 * n, dtype=np.float32).reshape(n * 4, n) / 7
    x = global_array(value, NamedSharding(mesh, P("x")))
    ints = global_array(np.arange(n * n * 3, dtype=np.int32).reshape(n * n, 3),
                        NamedSharding(mesh, P("x")))
    halves = global_array(value.astype(jnp.bfloat16), NamedSharding(mesh, P("x")))

    def body(v, i, h):
        ring = [(k, (k + 1) % n) for k in range(n)]
        return (jax.lax.psum(v, "x"), jax.lax.pmax(v, "x"), jax.lax.all_gather(v, "x"),
                jax.lax.psum_scatter(v, "x", scatter_dimension=0, tiled=True),
                jax.lax.ppermute(v, "x", ring), jax.lax.all_to_all(v, "x", 1, 1, tiled=True),
                jax.lax.axis_index("x")[None], jax.lax.psum(i, "x"), jax.lax.pmin(i, "x"),
                jax.lax.psum(h, "x"),
                jax.lax.psum_scatter(v, "x", scatter_dimension=1, tiled=True),
                jax.lax.all_to_all(i, "x", 0, 0, tiled=True))

    specs = (P(), P(), P(), P("x"), P("x"), P("x"), P("x"), P(), P(), P(), P("x"), P("x"))
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P("x"), P("x")),
                              out_specs=specs, check_vma=False))
    names = ("psum", "pmax", "all_gather", "psum_scatter", "ppermute", "all_to_all",
             "axis_index", "psum_int", "pmin_int", "psum_bf16", "psum_scatter_columns",
             "all_to_all_rows")
    for name, out in zip(names, f(x, ints, halves), strict=True):
        results[f"coll_{name}"] = whole(out).astype(np.float32)


def eager_and_rolled(results, devices):
    mesh = Mesh(np.array(devices), ("x",))
    value = np.arange(len(devices) * 4 * 3, dtype=np.float32).reshape(-1, 3)
    x = global_array(value, NamedSharding(mesh, P("x")))
    y = x * 2 + 1
    results["eager_affine"] = whole(y)
    results["eager_sum"] = whole(jnp.sum(x, axis=0))
    results["eager_gram"] = whole(x.T @ x)
    # A replicated result of a global program is read in every process, as in JAX.
    total = jnp.sum(x)
    assert total.is_fully_replicated
    results["eager_total"] = np.asarray(float(total))
    results["printed_total"] = np.array(str(total))
    results["rolled"] = whole(jax.jit(lambda v: jnp.roll(v, 3, 0) - v)(x))
    # A NumPy argument is the same global value in every process.
    results["numpy_argument"] = whole(jax.jit(lambda a, b: a * b)(x, value + 1))


def pmapped(results, devices):
    n = len(devices)
    value = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    f = jax.pmap(lambda v: (jax.lax.psum(v, "i"), v * jax.lax.axis_index("i")), axis_name="i")
    if jax.process_count() > 1:
        rows = [k for k, d in enumerate(devices) if d.process_index == jax.process_index()]
        local = f(value[rows])
        out = [multihost_utils.process_allgather(o, tiled=True) for o in local]
    else:
        out = [np.asarray(o) for o in f(value)]
    results["pmap_psum"], results["pmap_scaled"] = out
    # Key arrays cross the processes with their data.
    keys = jax.random.split(jax.random.key(0), n)
    sample = jax.pmap(lambda k: jax.random.normal(jax.random.split(k)[1], (3,)))
    if jax.process_count() > 1:
        rows = [k for k, d in enumerate(devices) if d.process_index == jax.process_index()]
        results["pmap_keys"] = multihost_utils.process_allgather(sample(keys[np.array(rows)]),
                                                                 tiled=True)
    else:
        results["pmap_keys"] = np.asarray(sample(keys))


def fuzzed(results, devices):
    """Random chains of elementwise ops, transposes, sums and dots over inputs split at
    random over a 2x2 mesh (whose axes cross processes differently with 2 and 4 processes)."""
    mesh = Mesh(np.array(devices).reshape(2, 2), ("a", "b"))
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        f, a, b = random_programs.chain(rng)
        inputs = [global_array(value, NamedSharding(mesh, P(*random_programs.split(rng))))
                  for value in (a, b)]
        x, total = jax.jit(f)(*inputs)
        results[f"fuzz_{seed}_x"] = whole(x)
        results[f"fuzz_{seed}_total"] = whole(total)


# The all-reduces compiled programs set up to do by calling MPI themselves (made on their
# first run over processes that each hold one of the group's devices).
native_all_reduces = []
_make_native = processes.NativeAllReduce.__init__


def _count_native(self, *args, **kwargs):
    _make_native(self, *args, **kwargs)
    native_all_reduces.append(self.what)


processes.NativeAllReduce.__init__ = _count_native


def main():
    out_path, device_count = sys.argv[1], int(sys.argv[2])
    if UNDER_MPI:
        jax.config.update("jax_num_cpu_devices", int(sys.argv[3]))
        jax.distributed.initialize()
    else:
        jax.config.update("jax_num_cpu_devices", device_count)
    devices = jax.devices()
    assert len(devices) == device_count, devices
    results = {}
    for program in (data_parallel, tensor_parallel, collectives, eager_and_rolled, pmapped,
                    fuzzed):
        program(results, devices)
    results["broadcast"] = multihost_utils.broadcast_one_to_all(
        np.arange(3) + 10 * jax.process_index())
    multihost_utils.sync_global_devices("done")
    if jax.process_index() == 0:
        np.savez(out_path, **results)
        print("NATIVE_ALLREDUCES", len(native_all_reduces))
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
