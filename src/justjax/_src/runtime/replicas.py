"""SPMD execution: one program run as N replicas at once, one per device, each on its
device's executor thread, meeting at every collective op.

`run_replicas(executable, per_replica_args)` starts replica i on device i's thread with
`context()` telling the running code its index and the `Rendezvous` of the run. A
collective kernel (`backends/reference/kernels/collectives.py`; the native backend calls
back into it) hands its operands to the rendezvous and gets its result; since all replicas
run the same program, they reach their collectives in the same order. A replica that fails
breaks the rendezvous, so the others stop at their next collective instead of waiting
forever, and the first error is raised.

In a run of several processes (`runtime/processes.py`) each process runs the replicas of its
own devices; its rendezvous meets those, and the collective's function, run once per process
when they have all arrived, does the part between processes.
"""
from __future__ import annotations

import functools
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Collection, Sequence

from justjax._src.config import config
from justjax._src.runtime import processes

__all__ = ["Rendezvous", "ReplicaContext", "context", "current", "run_replicas",
           "start_replicas", "wait_for_runs"]


class Rendezvous:
    """Where the replicas of one run that this process runs meet at each collective.

    `local`: their positions among all replicas of the run (every process's);
    `process_of`: per position, the index of the process running it.
    """

    def __init__(self, local: Sequence[int], process_of: Sequence[int]) -> None:
        self.local = tuple(local)
        self.process_of = tuple(process_of)
        self.count = len(self.process_of)
        self.spans_processes = len(set(self.process_of)) > 1
        # Per local replica, where its collective's result may be written in place (set by
        # the collective's kernel before it meets the others).
        self.destinations: dict[int, Any] = {}
        self._given: dict[int, Any] = {}
        self._combine: Callable[[dict[int, Any]], dict[int, Any]] | None = None
        self._results: dict[int, Any] = {}
        # One local replica meets no other thread (`combine` calls through).
        several = len(self.local) > 1
        self._arrived = (threading.Barrier(len(self.local), action=self._run_combine)
                         if several else None)
        self._read = threading.Barrier(len(self.local)) if several else None

    def combine(self, replica: int, value: Any,
                combine: Callable[[dict[int, Any]], dict[int, Any]]) -> Any:
        """Replica `replica`'s result of `combine`, called once (in one of the replicas'
        threads) when every local replica has given its `value`, with them by position, and
        returning each one's result by position."""
        if self._arrived is None or self._read is None:  # no other thread to meet
            return combine({replica: value})[replica]
        self._given[replica] = value
        self._combine = combine
        self._arrived.wait()
        result = self._results[replica]
        # No replica may give its next value before all have read their results.
        self._read.wait()
        return result

    def exchange(self, replica: int, value: Any) -> list[Any]:
        """Every replica's `value`, in replica order, once all have given theirs (a run of
        one process)."""
        assert not self.spans_processes
        return self.combine(replica, value, _everyone)

    def _run_combine(self) -> None:
        combine = self._combine
        assert combine is not None
        self._results = combine(dict(self._given))
        self._given.clear()

    def abort(self) -> None:
        if self._arrived is not None and self._read is not None:
            self._arrived.abort()
            self._read.abort()


def _everyone(given: dict[int, Any]) -> dict[int, list[Any]]:
    values = [given[p] for p in range(len(given))]
    return {p: values for p in given}


class ReplicaContext:
    """What a collective kernel needs: the replica's index and the run's rendezvous."""

    def __init__(self, replica: int, rendezvous: Rendezvous) -> None:
        self.replica = replica
        self.rendezvous = rendezvous


_local = threading.local()


def context() -> ReplicaContext:
    """The running replica's context.

    Raises:
      RuntimeError: outside an SPMD run (a collective in a program run on one device).
    """
    running = current()
    if running is None:
        raise RuntimeError("A collective op ran outside an SPMD program: it needs the "
                           "replicas of pmap to exchange values with")
    return running


def current() -> ReplicaContext | None:
    """The running replica's context, or None outside an SPMD run."""
    return getattr(_local, "context", None)


_executors: dict[int, ThreadPoolExecutor] = {}
_executors_lock = threading.Lock()
_submit_lock = threading.Lock()


def device_thread(device_id: int) -> ThreadPoolExecutor:
    """Device `device_id`'s executor thread for SPMD runs."""
    with _executors_lock:
        executor = _executors.get(device_id)
        if executor is None:
            executor = _executors[device_id] = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"justjax-cpu{device_id}")
        return executor


_device_locks: dict[int, threading.RLock] = {}


def _device_lock(device_id: int) -> threading.RLock:
    """The lock that keeps runs on device `device_id` one at a time (runs in the calling
    thread; the device's executor thread does that for the others). Reentrant: a host
    callback of a run may start another on the same device."""
    with _executors_lock:
        return _device_locks.setdefault(device_id, threading.RLock())


def run_replicas(executable: Any, per_replica_args: Sequence[Sequence[Any] | None],
                 device_ids: Sequence[int] | None = None,
                 thread_setup: Callable[[], None] | None = None,
                 donated: Collection[int] = (),
                 fingerprint: int | None = None) -> list[list[Any] | None]:
    """Runs `executable.execute(args)` once per entry of `per_replica_args`, all at once,
    replica i on device `device_ids[i]` (default i); returns each replica's results.
    In a run of several processes, the entries of other processes' devices are None, and so
    are their results; `fingerprint` then names the program, which every process must run
    (checked before it starts: `processes.agree`).
    `thread_setup` runs first on each device thread (the backend's per-thread settings).
    `donated`: the parameters whose buffers every replica may write (each replica's own,
    given up by the caller: `Executable.execute`)."""
    count = len(per_replica_args)
    ids = list(device_ids) if device_ids is not None else list(range(count))
    local = [i for i in range(count) if per_replica_args[i] is not None]
    rendezvous = Rendezvous(local, [i // processes.MAX_LOCAL_DEVICES for i in ids])
    if len(local) == 1 and rendezvous.spans_processes:
        (i,) = local
        alone: list[list[Any] | None] = [None] * count
        alone[i] = run_alone(executable, per_replica_args[i], ids, i, donated, fingerprint)
        return alone
    if rendezvous.spans_processes and fingerprint is not None:
        # Its collectives block in MPI: every process must run this program (`processes`).
        processes.agree(fingerprint, "a program split over the processes' devices")

    def execute(replica: int) -> Callable[[], list[Any]]:
        args = list(per_replica_args[replica])
        return lambda: _execute(executable, args, donated)

    futures = _submit(rendezvous, ids, {i: execute(i) for i in local}, thread_setup)
    # Waited for here, where Ctrl-C interrupts the wait at once (the replicas run on
    # to the end on their threads, which later runs queue behind); a replica's own
    # error is read from its future below.
    wait(futures.values())
    error = _first_error(futures)
    if error is not None:
        raise error
    results: list[list[Any] | None] = [None] * count
    for i, future in futures.items():
        results[i] = future.result()
    return results


def start_replicas(executable: Any, per_replica_args: Sequence[Sequence[Any] | None],
                   device_ids: Sequence[int], thread_setup: Callable[[], None] | None = None,
                   donated: Collection[int] = (), fingerprint: int | None = None,
                   after: Sequence[Future] = ()
                   ) -> tuple[list[list[Any] | None], Future | None]:
    """`run_replicas`, dispatched asynchronously as jit's large programs are: returns once
    every replica is queued on its device's thread, with each replica's output buffers
    (being written) and the future of the run (done when every replica is; its error is
    the first replica's). A later run on the same devices queues behind it, so it reads
    these outputs complete.

    The future is None when the run has already finished, as `run_replicas` runs it: a
    run spanning processes (their collectives must meet in the order the processes start
    them), or an executable that cannot be started so (`Executable.prepare`: one calling
    back into Python runs in order with the caller's code).

    `after`: the futures of the runs still writing blocks this one reads (queued before it
    on the same devices); their error is this run's too, as its inputs are not what they
    should be."""
    count = len(per_replica_args)
    local = [i for i in range(count) if per_replica_args[i] is not None]
    process_of = [i // processes.MAX_LOCAL_DEVICES for i in device_ids]
    prepared = (None if len(set(process_of)) > 1 or not local
                else executable.prepare(list(per_replica_args[local[0]]), donated))
    if prepared is None:
        results = run_replicas(executable, per_replica_args, device_ids, thread_setup, donated,
                               fingerprint)
        error = _error_before(after)
        if error is not None:
            raise error
        return results, None
    jobs = {local[0]: prepared}
    for i in local[1:]:
        jobs[i] = executable.prepare(list(per_replica_args[i]), donated)
    rendezvous = Rendezvous(local, process_of)
    futures = _submit(rendezvous, list(device_ids), {i: run for i, (_, run) in jobs.items()},
                      thread_setup)
    results: list[list[Any] | None] = [None] * count
    for i, (outs, _) in jobs.items():
        results[i] = outs
    return results, _all_of(futures, after)


def _submit(rendezvous: Rendezvous, ids: Sequence[int], calls: dict[int, Callable[[], Any]],
            thread_setup: Callable[[], None] | None) -> dict[int, Future]:
    """Starts `calls[i]` as replica i of the run of `rendezvous` on device `ids[i]`'s
    thread, for each i; returns their futures."""
    # The caller's context managers (`with jax.enable_x64():` ...) hold in the replicas too
    # (their host callbacks read the configuration).
    overrides = config.local_overrides()

    def run(replica: int) -> Any:
        with config.in_overrides(overrides):
            # The context of a run whose host callback started this one (in its thread).
            outer = current()
            _local.context = ReplicaContext(replica, rendezvous)
            try:
                if thread_setup is not None:
                    thread_setup()
                return calls[replica]()
            except BaseException:
                rendezvous.abort()
                raise
            finally:
                _local.context = outer

    # Runs started from several Python threads queue on every device in the same order:
    # otherwise device 0 could hold run A's replica waiting for A's replica on device 1,
    # queued there behind run B's replica waiting for B's on device 0.
    with _submit_lock:
        return {i: device_thread(ids[i]).submit(run, i) for i in calls}


def _first_error(futures: dict[int, Future]) -> BaseException | None:
    """The error of the first replica that failed of its own accord (a broken rendezvous
    is the consequence of another's failure), or None. The futures must be done."""
    errors: list[BaseException] = []
    for future in futures.values():
        error = future.exception()
        if isinstance(error, threading.BrokenBarrierError):
            errors.append(error)
        elif error is not None:
            errors.insert(0, error)
    return errors[0] if errors else None


def _error_before(after: Sequence[Future]) -> BaseException | None:
    """The error of the first of the runs a run comes `after` that failed, or None. Done by
    the time that run is: their replicas ran before its own on the same devices."""
    return next((f.exception() for f in after if f.exception() is not None), None)


def _all_of(futures: dict[int, Future], after: Sequence[Future] = ()) -> Future:
    """A future done when all of `futures` are, failing with the error of a run it comes
    `after` (done by then: queued before it on the same devices), else their
    `_first_error`."""
    done: Future = Future()
    left = [len(futures)]
    lock = threading.Lock()

    def finished(_: Future) -> None:
        with lock:
            left[0] -= 1
            if left[0]:
                return
        error = _error_before(after) or _first_error(futures)
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(None)
        _pending.discard(done)

    _pending.add(done)
    for future in futures.values():
        future.add_done_callback(finished)
    return done


# The asynchronous runs not yet finished (`wait_for_runs`).
_pending: set[Future] = set()


def wait_for_runs() -> None:
    """Waits until every run started by `start_replicas` so far has finished (their errors
    are raised where their results are read)."""
    for future in list(_pending):
        future.exception()


def run_alone(executable: Any, args: Sequence[Any], device_ids: Sequence[int], replica: int,
              donated: Collection[int] = (), fingerprint: int | None = None) -> list[Any]:
    """Runs `executable.execute(args)` as replica `replica` of a run over `device_ids`, the
    only one of them on this process's devices, in the calling thread (it meets no other
    thread, and its BLAS keeps every core); returns its results. `fingerprint`, `donated`:
    as for `run_replicas`."""
    context, lock = _alone(tuple(device_ids), replica)
    if fingerprint is not None:
        # Its collectives block in MPI: every process must run this program (`processes`).
        processes.agree(fingerprint, "a program split over the processes' devices")
    outer = current()  # the context of a run whose host callback started this one
    _local.context = context
    try:
        with lock:
            return _execute(executable, args, donated)
    finally:
        _local.context = outer


def _execute(executable: Any, args: Sequence[Any], donated: Collection[int]) -> list[Any]:
    """`executable.execute(args)`, with `donated` when there are any (an executable that
    takes no donations need not accept the argument)."""
    return executable.execute(args, donated) if donated else executable.execute(args)


@functools.lru_cache(maxsize=256)
def _alone(device_ids: tuple[int, ...], replica: int) -> tuple[ReplicaContext, Any]:
    """The context of a run over `device_ids` whose only replica in this process is
    `replica` (its rendezvous meets no thread and keeps nothing between runs, so one serves
    them all), and the lock of its device."""
    rendezvous = Rendezvous([replica], [i // processes.MAX_LOCAL_DEVICES for i in device_ids])
    return ReplicaContext(replica, rendezvous), _device_lock(device_ids[replica])
