"""Tiered compilation: a program runs first as compiled quickly, then fully optimized.

A large program's first compile is a quick one (`executable.first_tier_level`): LLVM's fast
code generator at O0 when the program has little math, or, for math-heavy ones, O3 with the
math library linked (`mathlib/link.py`): loops call the math functions' precompiled vector
versions instead of inlining them, which makes LLVM's work several times smaller (the seed
chain's gradient: 0.04 s of LLVM instead of 0.25 s) for runs up to ~15% longer. When the
program is called again, it is "hot": its fully optimized version (O3, the math inlined) is
compiled on a background thread and swapped in once ready. Both versions compute the same
bits: the math is the same LLVM IR, called or inlined, and without fast-math flags LLVM
changes no rounding at any level (code with `reassoc`/`contract` flags, i.e. reductions,
is compiled at O3 in both tiers; `tests/test_llvm_tiers.py` checks it).

One background thread compiles the tier-ups, one at a time, in the order programs became
hot. llvmlite serializes every call into LLVM with one lock, so while a tier-up's optimizer
runs, a compile on another thread waits for it: a tier-up starts only once no program has
been compiled for `QUIET_SECONDS` (`note_compile`), when the burst of first compiles at a
program's start is over. At exit, tier-ups not started are dropped and the one under way is
waited for (LLVM must not be working while the interpreter shuts down).
"""
from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from typing import Callable

from justjax._src.config import config

__all__ = ["enabled", "submit", "wait", "note_compile", "QUIET_SECONDS", "Hot"]

logger = logging.getLogger("justjax")

_jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
_lock = threading.Lock()
_thread: threading.Thread | None = None
_closing = False
# How long after the last compile a tier-up may start.
QUIET_SECONDS = 0.1
_last_compile = [0.0]


def enabled() -> bool:
    """Whether large programs are compiled in two tiers (`justjax_tiered_compilation`)."""
    return bool(config.read("justjax_tiered_compilation"))


def submit(job: Callable[[], None]) -> None:
    """Runs `job` (a tier-up: compile, then swap) on the background thread."""
    global _thread
    with _lock:
        if _closing:
            return
        if _thread is None:
            _thread = threading.Thread(target=_work, name="justjax-tier-up", daemon=True)
            _thread.start()
        _jobs.put(job)


class Hot:
    """What code compiled in tiers counts: `calls_to_tier_up` calls are left before the one that
    makes it hot, which submits its `_tier_up` (None: no tier-up to start, or one started)."""

    calls_to_tier_up: int | None = None

    def count_call(self) -> None:
        """Counts a call; the one that makes the code hot starts its tier-up."""
        calls = self.calls_to_tier_up
        if calls:
            self.calls_to_tier_up = calls - 1
            return
        if calls is None:
            return  # started by a call on another thread
        self.calls_to_tier_up = None
        submit(self._tier_up)  # type: ignore[attr-defined]


def note_compile() -> None:
    """Records that a program was just compiled (not by a tier-up)."""
    _last_compile[0] = time.monotonic()


def _wait_for_quiet() -> None:
    while not _closing:
        idle = time.monotonic() - _last_compile[0]
        if idle >= QUIET_SECONDS:
            return
        time.sleep(QUIET_SECONDS - idle)


def wait() -> None:
    """Returns once every tier-up submitted so far is done (tests, benchmarks)."""
    _jobs.join()


def _work() -> None:
    while True:
        job = _jobs.get()
        try:
            if job is None:
                return
            _wait_for_quiet()
            if not _closing:
                job()
        except Exception:  # noqa: BLE001 -- the quick version keeps running
            logger.warning("justjax: compiling a program's optimized version failed; it "
                           "keeps running as first compiled", exc_info=True)
        finally:
            _jobs.task_done()


@atexit.register
def _shut_down() -> None:
    """Drops the tier-ups not started and waits for the one under way."""
    global _closing
    with _lock:
        _closing = True
        thread = _thread
    if thread is None:
        return
    _jobs.put(None)
    thread.join()
