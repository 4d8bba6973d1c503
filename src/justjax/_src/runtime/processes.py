"""Several processes running one program (multi-controller SPMD), joined by MPI.

`jax.distributed.initialize()` under `mpiexec -n N` makes this process one of N: each keeps
its own virtual CPU devices (`jax_num_cpu_devices`), and every process sees all N processes'
devices (`runtime/devices.py` numbers them as XLA does: process p's device i is
`p * MAX_LOCAL_DEVICES + i`). Everything between processes goes through MPI (mpi4py), never a
transport of our own: the collectives of a program split over the processes' devices
(`backends/reference/kernels/collectives.py`) do the part inside a process through the
replicas' rendezvous and call the functions here for the part between processes.

What is per process: its devices, their executor threads, the blocks of global arrays they
hold, its compiled programs. What is global: the device list, the meshes, the programs'
collectives. Each collective's cross-process part involves only the processes holding
members of its groups (a communicator per such set of processes, made once).

A program split over the processes starts only once every process has said it runs the same
one (`agree`, which waits at most `justjax_collective_timeout` seconds for the others, then
raises DistributedError): from there its collectives meet the other processes' in the same
order, so they are MPI's blocking calls. A blocking call cannot be given up: a watchdog thread
aborts the MPI job when one outlasts the timeout (a process stuck in a host callback, or gone
without the launcher noticing; MPI has no recovery from a collective left half done). An
exception that ends a process aborts the job too, so that the others stop instead of waiting.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import os
import sys
import threading
import time
import weakref
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.config import config

__all__ = ["MAX_LOCAL_DEVICES", "MPI_REDUCIBLE", "agree", "DistributedError", "Cluster",
           "cluster", "initialize", "is_initialized", "NativeAllReduce",
           "native_calls_available", "shutdown"]

# XLA CPU's global device ids: process p's local device i is p * 2048 + i.
MAX_LOCAL_DEVICES = 2048

# Environment variables an MPI launcher (`mpiexec`) sets in the processes it starts: MPICH's
# Hydra (PMI), Open MPI's, and PMIx-based launchers'.
_MPI_LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                           "MPI_LOCALRANKID")

# The element types MPI reduces itself (mpi4py maps them to MPI datatypes).
MPI_REDUCIBLE = frozenset(np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64, np.complex64, np.complex128, np.bool_))


class DistributedError(RuntimeError):
    """A failure between processes: a collective that timed out, processes that disagree."""


@dataclass
class Cluster:
    """The processes of this run: MPI's world communicator (a duplicate, ours alone; None
    once `shutdown` let it go: the devices stay as they were, as JAX's, and only the
    collectives between processes end), this process's index and the count, and each
    process's number of local devices."""

    comm: Any
    index: int
    count: int
    local_device_counts: tuple[int, ...]
    groups: dict[tuple[int, ...], Any]
    shutdown_timeout: float

    def communicator(self, processes: Sequence[int]) -> Any:
        """The communicator of `processes` (sorted, this one among them), made the first
        time (collectively over those processes only: every process asks for its sets in the
        same order, as they run the same program)."""
        key = tuple(processes)
        comm = self.groups.get(key)
        if comm is None:
            if key == tuple(range(self.count)):
                comm = self.comm
            else:
                group = self.comm.Get_group().Incl(list(key))
                comm = self.comm.Create_group(group, tag=_group_tag(key))
                group.Free()
            self.groups[key] = comm
        return comm


_cluster: Cluster | None = None
_lock = threading.Lock()


def cluster() -> Cluster | None:
    """The processes of this run, or None when this process runs alone."""
    return _cluster


def is_initialized() -> bool:
    """Whether `initialize` has joined this process to others and `shutdown` has not
    ended that (`jax.distributed.is_initialized`)."""
    return _cluster is not None and _cluster.comm is not None


def _under_mpi_launcher() -> bool:
    return any(name in os.environ for name in _MPI_LAUNCHER_VARIABLES)


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: Any = None,
               cluster_detection_method: str | None = None,
               initialization_timeout: int = 300, heartbeat_timeout_seconds: int = 100,
               shutdown_timeout_seconds: int = 300, coordinator_bind_address: str | None = None,
               slice_index: int | None = None, partition_index: int | None = None) -> None:
    """Joins this process to the others of its MPI job (`jax.distributed.initialize`).

    Under an MPI launcher (`mpiexec -n N python prog.py`), or with
    `cluster_detection_method="mpi4py"`, the process count and this process's index are
    MPI's; `num_processes` and `process_id`, when given, must agree with them.
    `shutdown_timeout_seconds` bounds `shutdown`'s wait for the others. The other arguments
    are accepted for JAX's signature and have nothing to do here: MPI needs no coordinator
    (`coordinator_address`, `coordinator_bind_address`), its launcher has started every
    process (`initialization_timeout`) and ends the job when one dies
    (`heartbeat_timeout_seconds`), and every local CPU device is used (`local_device_ids`).

    Raises:
      RuntimeError: called twice, or after devices were used (JAX's messages); several
        processes asked for outside an MPI launcher.
      ValueError, TypeError: arguments JAX rejects (its messages).
    """
    global _cluster
    from justjax._src.runtime import devices as devices_lib  # devices reads the cluster
    if devices_lib.initialized():
        raise RuntimeError("jax.distributed.initialize() must be called before any JAX calls "
                           "that might initialise the XLA backend. This includes any "
                           "computation, but also calls to jax.devices, jax.device_put, and "
                           "others.")
    with _lock:
        if is_initialized():
            raise RuntimeError("distributed.initialize should only be called once.")
        use_mpi = (cluster_detection_method == "mpi4py"
                   or (cluster_detection_method != "deactivate" and _under_mpi_launcher()))
        if not use_mpi:
            _check_explicit(coordinator_address, num_processes, process_id)
            if num_processes != 1:
                raise RuntimeError(
                    f"jax.distributed.initialize: {num_processes} processes were asked for, "
                    "but this process was not started by an MPI launcher. justjax joins "
                    "processes through MPI: start them with `mpiexec -n "
                    f"{num_processes} python ...` (mpiexec comes with the `mpich` package).")
        comm = _world()
        rank, size = comm.Get_rank(), comm.Get_size()
        if num_processes is not None or process_id is not None:
            _check_explicit(coordinator_address or "mpi", num_processes if num_processes
                            is not None else size, process_id if process_id is not None
                            else rank)
            if (num_processes not in (None, size)) or (process_id not in (None, rank)):
                raise ValueError(
                    f"jax.distributed.initialize(num_processes={num_processes}, "
                    f"process_id={process_id}) disagrees with the MPI job this process "
                    f"runs in: process {rank} of {size}")
        local = devices_lib.device_count()
        counts = tuple(int(c) for c in comm.allgather(local))
        _cluster = Cluster(comm, rank, size, counts, {}, float(shutdown_timeout_seconds))
        _abort_on_uncaught_exceptions()


def _check_explicit(coordinator_address: Any, num_processes: Any, process_id: Any) -> None:
    """JAX's checks of explicitly given arguments, in its order and words."""
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError("process_id must be a nonnegative int. "
                        f"Got process_id={process_id} of type {type(process_id)}.")
    if not isinstance(num_processes, int):
        raise TypeError("num_processes must be a positive int. "
                        f"Got num_processes={num_processes} of type {type(num_processes)}.")
    if not 0 <= process_id < num_processes:
        raise ValueError("process_id and num_processes must be nonnegative, with process_id "
                         f"< num_processes. Got process_id={process_id}, "
                         f"num_processes={num_processes}.")


def _world() -> Any:
    """A duplicate of MPI's world communicator (our messages never meet the program's own)."""
    try:
        import mpi4py
    except ImportError:
        raise RuntimeError("jax.distributed.initialize needs mpi4py (pip install mpich "
                           "mpi4py)") from None
    # Collectives run on whichever device thread reaches them last.
    mpi4py.rc.thread_level = "multiple"
    from mpi4py import MPI
    return MPI.COMM_WORLD.Dup()


def shutdown() -> None:
    """Leaves the cluster (`jax.distributed.shutdown`): waits for the other processes (at
    most the collective timeout: DistributedError when one never comes), then frees the
    communicators. The devices stay as they were (programs on this process's devices still
    run, as JAX's); collectives between processes end. Does nothing when not initialized."""
    with _lock:
        current = _cluster
        if current is None or current.comm is None:
            return
        wait([current.comm.Ibarrier()], "jax.distributed.shutdown",
             current.shutdown_timeout)
        for comm in current.groups.values():
            if comm is not current.comm:
                comm.Free()
        current.comm.Free()
        current.comm = None
        current.groups.clear()


def _group_tag(processes: tuple[int, ...]) -> int:
    """A tag telling apart the communicators made at once for different process sets."""
    return sum(1 << p for p in processes) % 32767


_previous_hook: Callable[..., Any] | None = None


def _abort_on_uncaught_exceptions() -> None:
    """An exception that ends this process aborts the whole MPI job once its traceback is
    printed: the other processes would otherwise wait at their next collective."""
    global _previous_hook
    if _previous_hook is not None:
        return
    _previous_hook = sys.excepthook

    def hook(kind: type, value: BaseException, traceback: Any) -> None:
        assert _previous_hook is not None
        _previous_hook(kind, value, traceback)
        current = _cluster
        if current is not None and current.comm is not None and current.count > 1:
            sys.stderr.write(f"justjax: process {current.index} failed; aborting the other "
                             f"{current.count - 1} process(es) of the MPI job\n")
            sys.stderr.flush()
            current.comm.Abort(1)

    sys.excepthook = hook


# ------------------------------------------------------------------------------- transport

def wait(requests: Sequence[Any], what: str, limit: float | None = None) -> None:
    """Waits for MPI `requests`, at most `limit` seconds (default the collective timeout);
    raises DistributedError naming `what` when the other processes do not come.

    It polls (`Testall`), as MPI's own blocking wait does: each poll also drives MPI's
    progress (a large all-reduce is many steps), so it never sleeps; every few polls it
    yields the core (to other processes sharing it: 4 processes on 2 cores step 20% faster
    so)."""
    from mpi4py import MPI
    if not requests:
        return
    requests = list(requests)
    start = time.monotonic()
    if limit is None:
        limit = float(config.read("justjax_collective_timeout"))
    polls = 0
    while not MPI.Request.Testall(requests):
        polls += 1
        if polls % 64:
            continue
        waited = time.monotonic() - start
        if waited > limit:
            current = _cluster
            where = f"process {current.index} of {current.count}" if current else "a process"
            raise DistributedError(
                f"{what} on {where} waited more than {limit} s for the other processes "
                "(one failed, exited, or runs a different program)")
        time.sleep(0)


def allreduce(buffer: np.ndarray, opcode: str, processes: Sequence[int],
              out: np.ndarray | None = None) -> np.ndarray:
    """`buffer` combined elementwise over `processes` by the monoid `opcode` (a key of
    `numerics.monoids.MONOID_OPCODES`: `stablehlo.add`, `multiply`, `maximum`, `minimum`,
    `and`, `or`, `xor`): MPI's Allreduce, received into `out` (a C-contiguous array of the
    buffer's type that does not overlap it) when given."""
    current = _require()
    send = _contiguous(buffer)
    if out is None:
        out = np.empty_like(send)
    comm = current.communicator(processes)
    _blocking("an all-reduce", comm.Allreduce, send, out, op=_mpi_op(opcode, send.dtype))
    return out


def reduce_scatter(buffer: np.ndarray, opcode: str, processes: Sequence[int],
                   counts: Sequence[int]) -> np.ndarray:
    """The k-th of `processes` gets its `counts[k]` elements (in order) of the flat `buffer`
    combined over the processes by the monoid `opcode` (as `allreduce`): MPI's
    Reduce_scatter."""
    current = _require()
    comm = current.communicator(processes)
    send = _contiguous(buffer).reshape(-1)
    out = np.empty(counts[list(processes).index(current.index)], send.dtype)
    _blocking("a reduce-scatter", comm.Reduce_scatter, send, out, list(counts),
              op=_mpi_op(opcode, send.dtype))
    return out


def allgather(buffer: np.ndarray, processes: Sequence[int],
              counts: Sequence[int]) -> list[np.ndarray]:
    """Each of `processes`' flat `buffer` (of `counts[k]` elements on the k-th), in their
    order: MPI's Allgatherv."""
    current = _require()
    from mpi4py import MPI
    comm = current.communicator(processes)
    send = _contiguous(buffer).reshape(-1)
    out = np.empty(sum(counts), send.dtype)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    itemsize = send.dtype.itemsize
    _blocking("an all-gather", comm.Allgatherv, [_bytes(send), MPI.BYTE],
              [_bytes(out), ([c * itemsize for c in counts], [int(o) * itemsize for o in offsets]),
               MPI.BYTE])
    return [out[o:o + c] for o, c in zip(offsets, counts, strict=True)]


def exchange(sends: Sequence[tuple[int, int, np.ndarray]],
             receives: Sequence[tuple[int, int, np.ndarray]]) -> None:
    """Point-to-point messages between processes: each `(process, tag, buffer)` of `sends`
    goes to that process, each of `receives` is filled from it (MPI's Isend/Irecv, matched
    in order per pair of processes and tag)."""
    current = _require()
    from mpi4py import MPI
    byte = MPI.BYTE
    requests = [current.comm.Irecv([_bytes(buffer), byte], source=p, tag=t)
                for p, t, buffer in receives]
    requests += [current.comm.Isend([_bytes(_contiguous(buffer)), byte], dest=p, tag=t)
                 for p, t, buffer in sends]
    _blocking("a collective-permute", MPI.Request.Waitall, requests)


def agree(value: int, what: str) -> None:
    """Returns once every process has given the same number `value` (a program's fingerprint
    before it starts `what`).

    Raises:
      DistributedError: the other processes gave other numbers (they run a different
        program here), or did not come within the collective timeout.
    """
    from mpi4py import MPI
    current = _require()
    mine = np.array([value, -value], np.int64)
    seen = np.empty_like(mine)
    wait([current.comm.Iallreduce(mine, seen, op=MPI.MAX)], what)
    if seen[0] != value or -seen[1] != value:
        raise DistributedError(
            f"process {current.index} of {current.count} runs {what}, but other processes run "
            "a different program at the same point: every process must run the same programs "
            "in the same order")


# ------------------------------------------------------------------------------- native calls

class NativeAllReduce:
    """An all-reduce over a set of processes that a compiled program calls MPI for itself
    (the collective of a process's only replica in a run, whose combining is all between
    processes): the 64-bit fields the program reads, at `address`, in the order of
    `FIELDS`:

      function: the address of MPI_Allreduce;
      communicator, datatype, operation: MPI's handles (ints or pointers, as the MPI
        library defines them; passed as 64-bit arguments, whose low half an `int`
        parameter reads in the C calling conventions of x86-64 and AArch64);
      in_place: MPI_IN_PLACE, sent when the result overwrites the operand;
      calls: counted up on entering MPI and again on leaving it (odd while inside: the
        watchdog's view of a native collective);
      status: the error code of the last MPI call that failed (0: none).
    """

    FIELDS = ("function", "communicator", "datatype", "operation", "in_place", "calls",
              "status")

    def __init__(self, processes: Sequence[int], opcode: str, dtype: np.dtype) -> None:
        from mpi4py import MPI
        current = _require()
        self.what = f"an all-reduce over processes {list(processes)}"
        self.fields = (ctypes.c_int64 * len(self.FIELDS))()
        handles = {"function": _mpi_function("MPI_Allreduce"),
                   "communicator": current.communicator(processes).handle,
                   # The type mpi4py gives a NumPy buffer of `dtype`.
                   "datatype": MPI._typedict[np.dtype(dtype).char].handle,
                   "operation": _mpi_op(opcode, np.dtype(dtype)).handle,
                   "in_place": int(MPI.IN_PLACE)}
        for name, value in handles.items():
            # As C would pass them: two's complement in 64 bits.
            self.fields[self.FIELDS.index(name)] = ctypes.c_int64(value).value
        self.address = ctypes.addressof(self.fields)
        self._seen = (0, 0.0)  # the watchdog's last look: (calls, when)
        _start_watchdog()
        with _native_calls_lock:
            _native_calls.add(self)

    def check(self) -> None:
        """Raises the error of the program's last call of MPI, if it failed."""
        status = self.fields[self.FIELDS.index("status")]
        if status:
            from mpi4py import MPI
            self.fields[self.FIELDS.index("status")] = 0
            raise DistributedError(f"{self.what} failed in MPI: "
                                   f"{MPI.Get_error_string(int(status))}")


def native_calls_available() -> bool:
    """Whether compiled programs can call MPI themselves (MPI's library is found)."""
    return _mpi_function("MPI_Allreduce") is not None


@functools.lru_cache(maxsize=None)
def _mpi_function(name: str) -> int | None:
    """The address of MPI's C function `name`: looked up from mpi4py's own module, whose
    dependencies hold the MPI library it was loaded with."""
    from mpi4py import MPI
    for library in (MPI.__file__, None):
        try:
            return ctypes.cast(getattr(ctypes.CDLL(library), name), ctypes.c_void_p).value
        except (OSError, AttributeError):
            continue
    return None


# ------------------------------------------------------------------------------- watchdog
# The blocking collectives under way, by token: (deadline, the timeout, what).
_watched: dict[int, tuple[float, float, str]] = {}
_watch_tokens = itertools.count()
_watchdog: list[threading.Thread] = []
# The native collectives compiled programs may be in (`NativeAllReduce`).
_native_calls: weakref.WeakSet[NativeAllReduce] = weakref.WeakSet()
_native_calls_lock = threading.Lock()
# How often the watchdog looks (a sleeping thread: it costs the collectives nothing).
_WATCH_INTERVAL = 0.25


def _blocking(what: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`call(*args, **kwargs)`, a blocking MPI call, under the watchdog's eye."""
    if not _watchdog:
        _start_watchdog()
    limit = float(config.read("justjax_collective_timeout"))
    token = next(_watch_tokens)
    _watched[token] = (time.monotonic() + limit, limit, what)
    try:
        return call(*args, **kwargs)
    finally:
        del _watched[token]


def _start_watchdog() -> None:
    with _lock:
        if not _watchdog:
            thread = threading.Thread(target=_watch, name="justjax-collective-watchdog",
                                      daemon=True)
            thread.start()
            _watchdog.append(thread)


def _watch() -> None:
    while True:
        time.sleep(_WATCH_INTERVAL)
        now = time.monotonic()
        for deadline, limit, what in list(_watched.values()):
            if now > deadline:
                _abort_waited(what, limit)
        calls_field = NativeAllReduce.FIELDS.index("calls")
        with _native_calls_lock:  # a set another thread adds to cannot be iterated
            natives = list(_native_calls)
        for native in natives:
            calls = native.fields[calls_field]
            if calls % 2 == 0:
                continue  # not in MPI
            if native._seen[0] != calls:
                native._seen = (calls, now)  # entered since the last look
                continue
            limit = float(config.read("justjax_collective_timeout"))
            if now - native._seen[1] > limit:
                _abort_waited(native.what, limit)


def _abort_waited(what: str, limit: float) -> None:
    _abort_job(f"{what} waited more than {limit} s for the other processes (one is stuck, "
               "failed or runs a different program)")


def _abort_job(why: str) -> None:
    """Ends every process of the MPI job, saying `why` (this process's collective cannot be
    given up)."""
    current = _cluster
    where = f"process {current.index} of {current.count}" if current else "a process"
    sys.stderr.write(f"justjax: on {where}, {why}; aborting the MPI job\n")
    sys.stderr.flush()
    if current is not None and current.comm is not None:
        current.comm.Abort(1)
    os._exit(1)


def check_same_everywhere(value: Any, what: str) -> None:
    """Checks that every process gives the same `value` (host data put on devices of several
    processes, which each process must give alike): their checksums first, their values
    only when those differ.

    Raises:
      AssertionError: the values differ (JAX's message: every process's value, joined
        along the first dimension, then this process's).
    """
    current = _require()
    array = np.asarray(value)
    digest = (array.shape, array.dtype.str,
              zlib.crc32(np.ascontiguousarray(array).view(np.uint8).reshape(-1)))
    if len(set(current.comm.allgather(digest))) == 1:
        return
    values = current.comm.allgather(array)
    joined = np.concatenate([np.atleast_1d(v) for v in values])
    raise AssertionError(
        f"{what} passed to device_put is not the same on each process. Make sure you are "
        f"passing the same value of {what} on each process.. Expected: {joined}; got: "
        f"{value}.")


@functools.lru_cache(maxsize=None)
def _mpi_op(opcode: str, dtype: np.dtype) -> Any:
    """MPI's operation for the monoid `opcode` over `dtype` (bools: the logical ones)."""
    from mpi4py import MPI
    name = opcode.rpartition(".")[2]
    if dtype == np.bool_:
        return {"and": MPI.LAND, "or": MPI.LOR, "xor": MPI.LXOR, "add": MPI.LOR,
                "multiply": MPI.LAND, "maximum": MPI.LOR, "minimum": MPI.LAND}[name]
    return {"add": MPI.SUM, "multiply": MPI.PROD, "maximum": MPI.MAX, "minimum": MPI.MIN,
            "and": MPI.BAND, "or": MPI.BOR, "xor": MPI.BXOR}[name]


def _contiguous(buffer: np.ndarray) -> np.ndarray:
    """`buffer`, or a C-ordered copy of it (of the same shape: 0-d stays 0-d)."""
    return buffer if buffer.flags.c_contiguous else np.array(buffer, order="C")


def _bytes(buffer: np.ndarray) -> np.ndarray:
    """A flat view of a C-contiguous `buffer`'s bytes (writing it writes `buffer`)."""
    return buffer.reshape(-1).view(np.uint8)


def _require() -> Cluster:
    current = _cluster
    if current is None or current.comm is None:
        raise RuntimeError("a collective between processes, but jax.distributed.initialize() "
                           "was not called, or jax.distributed.shutdown() was")
    return current
