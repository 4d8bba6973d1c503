"""Failures between processes, each a mode run under `mpiexec -n 2` (2 devices each; 1 for
the modes ending in `_native`) by
tests/test_multiprocess.py: `python faults.py MODE REPORT`. Modes that report an error write
`REPORTED <class>: <message>` to the file REPORT.<process> and exit 0; the others fail the
whole job. (Files, not standard output: the launcher may interleave the processes' lines.)"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax.experimental import multihost_utils
from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P


def report(error: BaseException) -> None:
    # MPICH's launcher numbers the processes in PMI_RANK (read before initialize, too).
    path = f"{sys.argv[2]}.{os.environ.get('PMI_RANK', '0')}"
    with open(path, "a") as out:
        # Its first line (MPI's errors go on with their error stack).
        first = str(error).splitlines()[0] if str(error) else ""
        out.write(f"REPORTED {type(error).__name__}: {first}\n")


def global_x():
    mesh = Mesh(np.array(jax.devices()), ("x",))
    return jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")),
                                                  np.ones(2, np.float32))


def main() -> None:
    mode = sys.argv[1]
    # A process's one device calls MPI from its compiled program (native collectives).
    jax.config.update("jax_num_cpu_devices", 1 if mode.endswith("_native") else 2)
    if mode == "after_devices":
        jax.devices()
        try:
            jax.distributed.initialize()
        except RuntimeError as error:
            report(error)
        return
    # The shutdown of a run whose process 1 left early waits 3 s for it, not 300.
    jax.distributed.initialize(shutdown_timeout_seconds=3 if mode == "exits" else 300)
    me = jax.process_index()
    if mode == "twice":
        try:
            jax.distributed.initialize()
        except RuntimeError as error:
            report(error)
    elif mode == "raises":
        # Process 1 fails before the collective that process 0 waits at.
        if me == 1:
            raise RuntimeError("process 1 fails on purpose")
        jax.jit(lambda v: v.sum())(global_x()).block_until_ready()
    elif mode == "shutdown":
        # After shutdown, as JAX's: not initialized, the devices as they were, programs on
        # this process's devices still run, and initialize refuses (the backend is up).
        jax.distributed.shutdown()
        jax.distributed.shutdown()
        local = float(jax.jit(lambda v: v.sum())(np.ones(3, np.float32)))
        assert (jax.distributed.is_initialized(), jax.process_count(), local) == (False, 2, 3.0)
        assert len(jax.devices()) == 4 and jax.local_devices()[0].process_index == me
        try:
            jax.distributed.initialize()
        except RuntimeError as error:
            report(error)
        return
    elif mode == "dies":
        # Process 1 is killed (no exception, no exit handler) before the collective.
        if me == 1:
            os.kill(os.getpid(), 9)
        jax.jit(lambda v: v.sum())(global_x()).block_until_ready()
    elif mode == "mismatch":
        scale = 2.0 if me == 0 else 3.0
        try:
            jax.jit(lambda v: (v * scale).sum())(global_x()).block_until_ready()
        except RuntimeError as error:
            report(error)
    elif mode == "exits":
        jax.config.update("justjax_collective_timeout", 3.0)
        if me == 1:
            return
        try:
            jax.jit(lambda v: v.sum())(global_x()).block_until_ready()
        except RuntimeError as error:
            report(error)
    elif mode in ("stuck", "stuck_native"):
        # Both processes start the same program; process 1 is stuck in a host callback
        # while process 0 waits in the all-reduce after it, a blocking MPI call: the
        # watchdog aborts the job after the 2 s timeout the mode sets.
        jax.config.update("justjax_collective_timeout", 2.0)

        def pause(block):
            if me == 1:
                time.sleep(120)
            return block

        def f(v):
            jax.debug.callback(pause, v)
            return v.sum()

        jax.jit(f)(global_x()).block_until_ready()
    elif mode == "bad_shards":
        mesh = Mesh(np.array(jax.devices()), ("x",))
        sharding = NamedSharding(mesh, P("x"))
        arrays = [jax.device_put(np.zeros(3, np.float32), d) for d in jax.local_devices()]
        try:
            jax.make_array_from_single_device_arrays((8,), sharding, arrays)
        except ValueError as error:
            report(error)
    elif mode == "bad_dtypes":
        mesh = Mesh(np.array(jax.devices()), ("x",))
        sharding = NamedSharding(mesh, P("x"))
        arrays = [jax.device_put(np.zeros(2, dtype), d)
                  for d, dtype in zip(jax.local_devices(), (np.float32, np.int32))]
        try:
            jax.make_array_from_single_device_arrays((8,), sharding, arrays)
        except ValueError as error:
            report(error)
    elif mode == "put_differs":
        mesh = Mesh(np.array(jax.devices()), ("x",))
        same = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("x")))
        assert [np.asarray(s.data).tolist() for s in same.addressable_shards] == \
            [[2.0 * k, 2.0 * k + 1] for k in (2 * me, 2 * me + 1)]
        try:
            jax.device_put(np.arange(4.0) + 100 * me, NamedSharding(mesh, P("x")))
        except AssertionError as error:
            report(error)
    elif mode == "closure":
        x = global_x()
        try:
            jax.jit(lambda: x.sum())()
        except RuntimeError as error:
            report(error)
    elif mode == "mpi_error_native":
        # MPI refuses the all-reduce a compiled program calls (a bitwise and of floats
        # handed to it): the program stops there and the error is MPI's, in every process.
        from mpi4py import MPI
        from justjax._src.runtime import processes
        make = processes.NativeAllReduce.__init__

        def float_bitwise_and(self, *args, **kwargs):
            make(self, *args, **kwargs)
            self.fields[self.FIELDS.index("operation")] = MPI.BAND.handle

        processes.NativeAllReduce.__init__ = float_bitwise_and
        try:
            jax.jit(lambda v: v.sum())(global_x()).block_until_ready()
        except RuntimeError as error:
            report(error)
    elif mode == "mixed_mesh":
        d = jax.devices()
        mesh = Mesh(np.array([[d[0], d[2]], [d[3], d[1]]]), ("a", "b"))
        try:
            multihost_utils.host_local_array_to_global_array(np.ones((2, 2)), mesh, P("a"))
        except ValueError as error:
            report(error)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
