"""Splitting a large loop across the CPU's cores.

Compiled code calls `i32 justjax_parallel_for(ptr task, ptr context, i64 n, i64 tasks)`: the
runtime cuts [0, n) into `tasks` contiguous ranges and runs `task(context, begin, end)` on
each, one range on the calling thread and the others on a pool of worker threads. A task is
native code called through ctypes, which releases the GIL for the call, so the ranges run
in parallel. It returns when every range is done.

How many tasks a loop gets follows the shape of XLA's CPU cost model (`task_count`): enough
that each task writes at least some bytes (a memory-bound loop) or computes at least some
cycles (a compute-bound one), at most one per core. XLA's minimums are 256 KiB and ~100k
cycles; a split here costs 45-60 µs more (waking Python pool threads, measured on a 2-core
AMD EPYC: r+1 over f32[65536] 8 µs on one thread, 53 µs split in two), so the minimums are
where splitting measured faster: 4 MiB written, or 10M cycles of the model (which counts a
transcendental function as 20 cycles an element, where the vectorized ones take about 1).
"""
from __future__ import annotations

import ctypes
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

__all__ = ["SYMBOL", "address", "core_count", "run_split", "task_count"]

SYMBOL = "justjax_parallel_for"
_MIN_BYTES_PER_TASK = 4 << 20
_MIN_CYCLES_PER_TASK = 10_000_000

_TASK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_PARALLEL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_int64, ctypes.c_int64)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def core_count() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def task_count(output_bytes: int, elements: int, cycles_per_element: float) -> int:
    """The number of tasks for a loop writing `output_bytes` over `elements` elements at
    about `cycles_per_element` each (at most one per core)."""
    by_bytes = output_bytes // _MIN_BYTES_PER_TASK
    by_cycles = int(elements * cycles_per_element) // _MIN_CYCLES_PER_TASK
    return max(1, min(core_count(), max(by_bytes, by_cycles)))


def _workers() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(1, core_count() - 1),
                                       thread_name_prefix="justjax-cpu")
        return _pool


# Each task's range is cut in this many pieces, claimed one at a time by the calling thread
# and the workers: a worker that wakes late (tens of µs, in Python) finds the caller has
# taken its share, instead of the caller waiting for it.
_PIECES_PER_TASK = 4


class _Split:
    """The pieces of one `run_split` and their completion."""

    def __init__(self, task: Callable[[int, int], Any], n: int, pieces: int) -> None:
        self.task = task
        self.bounds = [n * i // pieces for i in range(pieces + 1)]
        self.pieces = pieces
        self.claims = itertools.count()  # next() is atomic under the GIL
        self.lock = threading.Lock()
        self.finished = 0
        self.all_done = threading.Event()
        self.error: BaseException | None = None

    def work(self) -> None:
        """Runs pieces until none is left unclaimed."""
        while True:
            i = next(self.claims)
            if i >= self.pieces:
                return
            try:
                self.task(self.bounds[i], self.bounds[i + 1])
            except BaseException as error:  # re-raised by the caller
                self.error = error
            with self.lock:
                self.finished += 1
                if self.finished == self.pieces:
                    self.all_done.set()


def run_split(task: Callable[[int, int], Any], n: int, tasks: int) -> None:
    """Runs `task(begin, end)` over contiguous ranges covering [0, n), on the calling thread
    and `tasks - 1` workers of the pool; returns when every range is done."""
    if tasks <= 1 or n <= 1:
        task(0, n)
        return
    split = _Split(task, n, min(n, tasks * _PIECES_PER_TASK))
    for _ in range(tasks - 1):
        _workers().submit(split.work)
    split.work()
    split.all_done.wait()
    if split.error is not None:
        raise split.error


def _parallel_for(task_address: Any, context: Any, n: int, tasks: int) -> int:
    task = _TASK_TYPE(task_address)
    run_split(lambda begin, end: task(context, begin, end), n, tasks)
    return 0


_parallel_cfunc = _PARALLEL_TYPE(_parallel_for)


def address() -> int:
    """The address of `justjax_parallel_for` (registered as a symbol by the runtime)."""
    return ctypes.cast(_parallel_cfunc, ctypes.c_void_p).value
