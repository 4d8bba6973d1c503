"""SPMD runs (`runtime/replicas.py`) and the collective ops' kernels
(`backends/reference/kernels/collectives.py`), on hand-built modules run as 4 replicas
on both backends (the native one calls back into the collective kernels), against NumPy."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from justjax._src import backends
from justjax._src.hlo import ir
from justjax._src.lax.reductions import monoid_region
from justjax._src.runtime import replicas
from tests.harness import hand_built_module

BACKENDS = ["reference", "llvm"]
REPLICAS = 4
ALL = np.array([[0, 1, 2, 3]], np.int64)
PAIRS = np.array([[0, 1], [2, 3]], np.int64)
F32 = np.dtype(np.float32)


def _per_replica(shape: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(shape))
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(REPLICAS)]


def _run(backend: str, module: ir.Module, inputs: list[np.ndarray]) -> list[np.ndarray]:
    executable = backends.get_backend(backend).compile(module)
    return [outs[0] for outs in replicas.run_replicas(executable, [[x] for x in inputs])]


def _one_op(shape: tuple[int, ...], result_shape: tuple[int, ...], opcode: str,
            regions: list[ir.Region] = (), **attributes) -> ir.Module:
    def build(b, x):
        return b.op(opcode, [x], [ir.TensorType(result_shape, F32)], attributes,
                    list(regions)).results
    return hand_built_module([ir.TensorType(shape, F32)], build)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("monoid,groups", [("add", ALL), ("max", ALL), ("add", PAIRS)])
def test_all_reduce(backend, monoid, groups):
    inputs = _per_replica((3, 5))
    module = _one_op((3, 5), (3, 5), "stablehlo.all_reduce", [monoid_region(monoid, F32)],
                     replica_groups=groups)
    got = _run(backend, module, inputs)
    combine = np.add if monoid == "add" else np.maximum
    for replica in range(REPLICAS):
        group = next(row for row in groups if replica in row)
        want = inputs[group[0]]
        for member in group[1:]:
            want = combine(want, inputs[member])
        np.testing.assert_allclose(got[replica], want, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_all_gather(backend):
    inputs = _per_replica((2, 3))
    module = _one_op((2, 3), (2, 12), "stablehlo.all_gather", all_gather_dim=1,
                     replica_groups=ALL)
    for got in _run(backend, module, inputs):
        np.testing.assert_array_equal(got, np.concatenate(inputs, axis=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduce_scatter(backend):
    inputs = _per_replica((8, 3))
    module = _one_op((8, 3), (2, 3), "stablehlo.reduce_scatter",
                     [monoid_region("add", F32)], scatter_dimension=0, replica_groups=ALL)
    total = sum(inputs[1:], inputs[0])
    for replica, got in enumerate(_run(backend, module, inputs)):
        np.testing.assert_allclose(got, total[2 * replica:2 * replica + 2], rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_all_to_all(backend):
    inputs = _per_replica((4, 2))
    module = _one_op((4, 2), (1, 8), "stablehlo.all_to_all", split_dimension=0,
                     concat_dimension=1, split_count=4, replica_groups=ALL)
    for replica, got in enumerate(_run(backend, module, inputs)):
        want = np.concatenate([x[replica:replica + 1] for x in inputs], axis=1)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_collective_permute_sends_along_pairs_and_zeros_the_rest(backend):
    inputs = _per_replica((3,))
    pairs = np.array([[0, 1], [1, 2], [2, 0]], np.int64)  # replica 3 receives nothing
    module = _one_op((3,), (3,), "stablehlo.collective_permute", source_target_pairs=pairs)
    got = _run(backend, module, inputs)
    for source, target in pairs:
        np.testing.assert_array_equal(got[target], inputs[source])
    np.testing.assert_array_equal(got[3], np.zeros(3, np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_replica_id_and_a_collective_in_one_program(backend):
    def build(b, x):
        index = b.one("stablehlo.replica_id", [], ir.TensorType((), np.dtype(np.uint32)))
        as_float = b.one("stablehlo.convert", [index], ir.TensorType((), F32))
        scaled = b.one("stablehlo.multiply", [x, as_float], x.type)
        return b.op("stablehlo.all_reduce", [scaled], [x.type],
                    {"replica_groups": ALL}, [monoid_region("add", F32)]).results

    module = hand_built_module([ir.TensorType((), F32)], build)
    got = _run(backend, module, [np.float32(1.0)] * REPLICAS)
    assert [float(g) for g in got] == [6.0] * REPLICAS


def test_replicas_run_on_their_devices_threads_at_once():
    names: list[str] = []
    barrier = threading.Barrier(REPLICAS, timeout=10)

    class Recorder:
        def execute(self, args):
            names.append(threading.current_thread().name)
            barrier.wait()  # would time out if the replicas ran one after the other
            return [replicas.context().replica]

    results = replicas.run_replicas(Recorder(), [[]] * REPLICAS)
    assert results == [[0], [1], [2], [3]]
    assert sorted(n.rsplit("_", 1)[0] for n in names) == [f"justjax-cpu{i}" for i in range(4)]


def test_a_failing_replica_stops_the_others_and_its_error_is_raised():
    class FailsOnTwo:
        def execute(self, args):
            context = replicas.context()
            if context.replica == 2:
                raise ValueError("replica 2 failed")
            context.rendezvous.exchange(context.replica, None)
            return []

    with pytest.raises(ValueError, match="replica 2 failed"):
        replicas.run_replicas(FailsOnTwo(), [[]] * REPLICAS)


def test_a_collective_outside_an_spmd_run_raises():
    module = _one_op((3,), (3,), "stablehlo.all_reduce", [monoid_region("add", F32)],
                     replica_groups=ALL)
    with pytest.raises(RuntimeError, match="outside an SPMD program"):
        backends.get_backend("reference").compile(module).execute([np.ones(3, np.float32)])


def test_runs_started_from_several_threads_do_not_deadlock():
    module = _one_op((3,), (3,), "stablehlo.all_reduce", [monoid_region("add", F32)],
                     replica_groups=ALL)
    executable = backends.get_backend("reference").compile(module)
    results: dict[int, list] = {}

    def start(k: int) -> None:
        inputs = [[np.full(3, k + r, np.float32)] for r in range(REPLICAS)]
        results[k] = replicas.run_replicas(executable, inputs)

    threads = [threading.Thread(target=start, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    for k in range(8):
        for outs in results[k]:
            np.testing.assert_array_equal(outs[0], np.full(3, 4 * k + 6, np.float32))


_INTERRUPTED_PMAP = """
import json, os, signal, sys, threading, time
import numpy as np
import justjax as jax, justjax.numpy as jnp
jax.config.update("jax_num_cpu_devices", 2)
f = jax.pmap(lambda x: jax.lax.fori_loop(0, 800, lambda i, c: jnp.tanh(c @ c * 1e-3 + 0.1), x))
x = np.ones((2, 256, 256), np.float32)
expected = np.asarray(f(x))
start = time.perf_counter()
f(x).block_until_ready()
full = time.perf_counter() - start
threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.perf_counter()
try:
    f(x).block_until_ready()
    interrupted = None
except KeyboardInterrupt:
    interrupted = time.perf_counter() - start
same = bool(np.array_equal(np.asarray(f(x)), expected))
print(json.dumps({"full": full, "interrupted": interrupted, "same": same}))
"""


def test_ctrl_c_interrupts_a_running_pmap_at_once():
    # The replicas run on their devices' threads; the caller waits where a signal lands at
    # once (before, it waited out the whole run), and later runs compute as before.
    import json
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_PMAP], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["interrupted"] is not None
    assert result["interrupted"] < result["full"] / 2, result
    assert result["same"]


@pytest.fixture
def devices():
    import justjax as jax
    with jax.config.override("jax_num_cpu_devices", REPLICAS):
        yield REPLICAS


def _hold_device(device_id: int) -> threading.Event:
    """Keeps device `device_id`'s thread busy until the returned event is set (runs queued
    there wait behind it)."""
    release = threading.Event()
    started = threading.Event()

    def hold() -> None:
        started.set()
        release.wait(timeout=60)

    replicas.device_thread(device_id).submit(hold)
    assert started.wait(timeout=10)
    return release


def test_pmap_returns_before_its_run_ends_and_reading_waits(devices):
    import justjax as jax
    f = jax.pmap(lambda x: jax.lax.psum(x * 2, "i"), axis_name="i")
    x = np.arange(jax.device_count() * 3, dtype=np.float32).reshape(-1, 3)
    f(x).block_until_ready()  # compiled
    release = _hold_device(0)
    try:
        y = f(x)  # queued behind the held device: dispatched, not run
        z = f(y)  # reads y's blocks once device 0's replica of y's run wrote them
        assert not y.is_ready() and not z.is_ready()
    finally:
        release.set()
    want = np.broadcast_to(x.sum(0) * 2, x.shape)
    np.testing.assert_array_equal(np.asarray(y), want)
    np.testing.assert_array_equal(np.asarray(z),
                                  np.broadcast_to(want.sum(0) * 2, x.shape))
    assert y.is_ready() and z.is_ready()


def test_effects_barrier_waits_for_runs_dispatched_on_the_devices(devices):
    import justjax as jax
    f = jax.pmap(lambda x: x + 1)
    x = np.zeros((jax.device_count(), 2), np.float32)
    f(x).block_until_ready()
    release = _hold_device(1)
    y = f(x)
    threading.Timer(0.2, release.set).start()
    jax.effects_barrier()
    assert y.is_ready()
    np.testing.assert_array_equal(np.asarray(y), x + 1)


def test_an_asynchronous_run_raises_its_error_where_its_results_are_read(monkeypatch,
                                                                     devices):
    import justjax as jax
    from justjax._src.backends.llvm.runtime import executable as llvm_executable
    if backends.get_backend().name != "llvm":
        pytest.skip("the native backend's asynchronous runs")
    f = jax.pmap(lambda x: jax.lax.psum(x, "i") * 3, axis_name="i")  # a whole program
    x = np.ones((jax.device_count(), 2), np.float32)
    f(x).block_until_ready()
    prepare = llvm_executable.LLVMExecutable.prepare

    runs = []

    def failing(self, args, donated=()):
        outs, run = prepare(self, args, donated)
        runs.append(None)
        first = len(runs) <= jax.device_count()  # the first run's replicas fail

        def fail() -> None:
            if first and replicas.context().replica == 1:
                raise ValueError("replica 1 failed")
            run()
        return outs, fail

    monkeypatch.setattr(llvm_executable.LLVMExecutable, "prepare", failing)
    y = f(x)  # returns: the error comes with the results
    z = f(y)  # reads y's blocks: its inputs are not what they should be
    with pytest.raises(ValueError, match="replica 1 failed"):
        y.block_until_ready()
    with pytest.raises(ValueError, match="replica 1 failed"):
        np.asarray(z)
    np.testing.assert_array_equal(np.asarray(f(x)), x * 3 * jax.device_count())


def test_programs_calling_back_into_python_run_before_the_call_returns(devices):
    import justjax as jax
    seen: list[int] = []
    f = jax.pmap(lambda x: jax.debug.callback(lambda v: seen.append(int(v.sum())), x) or x)
    x = np.ones((jax.device_count(), 2), np.float32)
    f(x)
    assert sorted(seen) == [2] * jax.device_count()  # in order with the caller's code


def test_writing_a_numpy_argument_after_the_call_does_not_change_the_run(devices):
    import justjax as jax
    f = jax.pmap(lambda x: jax.lax.psum(x, "i") + x, axis_name="i")
    x = np.arange(jax.device_count() * 2, dtype=np.float32).reshape(-1, 2)
    want = np.asarray(f(x))
    release = _hold_device(0)
    try:
        y = f(x)  # queued; the run reads copies of the caller's writable buffers
        x[:] = -1.0
    finally:
        release.set()
    np.testing.assert_array_equal(np.asarray(y), want)
