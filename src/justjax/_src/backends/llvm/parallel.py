"""Splitting a large loop across the CPU's cores.

Compiled code calls `i32 justjax_parallel_for(ptr task, ptr context, i64 n, i64 tasks)`: the
runtime cuts [0, n) into `tasks` contiguous ranges and runs `task(context, begin, end)` on
each, one range on the calling thread and the others on a pool of worker threads. A task is
native code called through ctypes, which releases the GIL for the call, so the ranges run
in parallel. It returns when every range is done.

How many tasks a loop gets follows XLA's CPU cost model (`task_count`): enough that each
task writes at least 256 KiB (a memory-bound loop) or computes at least ~100k cycles (a
compute-bound one), at most one per core.
"""
from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["SYMBOL", "address", "core_count", "task_count"]

SYMBOL = "justjax_parallel_for"
_MIN_BYTES_PER_TASK = 256 * 1024
_MIN_CYCLES_PER_TASK = 100_000

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


def _parallel_for(task_address: Any, context: Any, n: int, tasks: int) -> int:
    task = _TASK_TYPE(task_address)
    bounds = [n * t // tasks for t in range(tasks + 1)]
    futures = [_workers().submit(task, context, bounds[t], bounds[t + 1])
               for t in range(1, tasks)]
    task(context, bounds[0], bounds[1])
    for future in futures:
        future.result()
    return 0


_parallel_cfunc = _PARALLEL_TYPE(_parallel_for)


def address() -> int:
    """The address of `justjax_parallel_for` (registered as a symbol by the runtime)."""
    return ctypes.cast(_parallel_cfunc, ctypes.c_void_p).value
