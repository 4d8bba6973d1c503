"""SPMD execution: one program run as N replicas at once, one per device, each on its
device's executor thread, meeting at every collective op.

`run_replicas(executable, per_replica_args)` starts replica i on device i's thread with
`context()` telling the running code its index and the `Rendezvous` of the run. A
collective kernel (`backends/reference/kernels/collectives.py`; the native backend calls
back into it) hands its operands to `Rendezvous.exchange` and gets every replica's; since
all replicas run the same program, they reach their collectives in the same order. A
replica that fails breaks the rendezvous, so the others stop at their next collective
instead of waiting forever, and the first error is raised.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Collection, Sequence

from justjax._src.config import config

__all__ = ["Rendezvous", "ReplicaContext", "context", "run_replicas"]


class Rendezvous:
    """Where the replicas of one run exchange values."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._barrier = threading.Barrier(count)
        self._slots: list[Any] = [None] * count

    def exchange(self, replica: int, value: Any) -> list[Any]:
        """Every replica's `value`, in replica order, once all have given theirs."""
        self._slots[replica] = value
        self._barrier.wait()
        values = list(self._slots)
        # No replica may overwrite its slot (at its next collective) before all have read.
        self._barrier.wait()
        return values

    def abort(self) -> None:
        self._barrier.abort()


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
    current = getattr(_local, "context", None)
    if current is None:
        raise RuntimeError("A collective op ran outside an SPMD program: it needs the "
                           "replicas of pmap to exchange values with")
    return current


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


def run_replicas(executable: Any, per_replica_args: Sequence[Sequence[Any]],
                 device_ids: Sequence[int] | None = None,
                 thread_setup: Callable[[], None] | None = None,
                 donated: Collection[int] = ()) -> list[list[Any]]:
    """Runs `executable.execute(args)` once per entry of `per_replica_args`, all at once,
    replica i on device `device_ids[i]` (default i); returns each replica's results.
    `thread_setup` runs first on each device thread (the backend's per-thread settings).
    `donated`: the parameters whose buffers every replica may write (each replica's own,
    given up by the caller: `Executable.execute`)."""
    count = len(per_replica_args)
    ids = list(device_ids) if device_ids is not None else list(range(count))
    rendezvous = Rendezvous(count)
    # The caller's context managers (`with jax.enable_x64():` ...) hold in the replicas too
    # (their host callbacks read the configuration).
    overrides = config.local_overrides()

    def run(replica: int) -> list[Any]:
        with config.in_overrides(overrides):
            return run_replica(replica)

    def run_replica(replica: int) -> list[Any]:
        _local.context = ReplicaContext(replica, rendezvous)
        try:
            if thread_setup is not None:
                thread_setup()
            args = list(per_replica_args[replica])
            return executable.execute(args, donated) if donated else executable.execute(args)
        except BaseException:
            rendezvous.abort()
            raise
        finally:
            _local.context = None

    # Runs started from several Python threads queue on every device in the same order:
    # otherwise device 0 could hold run A's replica waiting for A's replica on device 1,
    # queued there behind run B's replica waiting for B's on device 0.
    with _submit_lock:
        futures = [device_thread(ids[i]).submit(run, i) for i in range(count)]
    errors: list[BaseException] = []
    results: list[list[Any]] = []
    for future in futures:
        try:
            results.append(future.result())
        except threading.BrokenBarrierError as error:
            errors.append(error)  # a consequence of another replica's failure
        except BaseException as error:
            errors.insert(0, error)
    if errors:
        raise errors[0]
    return results
