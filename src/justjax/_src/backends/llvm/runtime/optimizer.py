"""Programs parsed and run through LLVM's O3 pipeline (`host.optimize`), in this process or,
past `justjax_llvm_optimizations_in_process` runs, in a helper process.

Why a helper: llvmlite 0.50 gives every PassBuilder a PassInstrumentationCallbacks it never
frees (every pass's name, and the callbacks each run registers: about 90 KB a run), and one
PassBuilder cannot serve two runs (the second would call the first run's callbacks, whose
owner is gone). So every optimization leaks, and a process compiling large programs without
end (a server, a notebook trying many shapes) would grow without bound. Past the first runs
(a script's programs, compiled with no helper to start), the pipeline runs in a helper
process, this module run as a script: IR text in, optimized IR text out, the same llvmlite,
host CPU and pipeline. The helper is replaced every `RUNS_PER_HELPER` runs, and its leak goes
with it. Should the helper fail, the run is done here.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import IO

import llvmlite.binding as llvm

from justjax._src.backends.llvm.runtime import host
from justjax._src.config import config

__all__ = ["parse", "stats"]

RUNS_PER_HELPER = 256
_HEADER = 8  # bytes of a message's length


class _Stats:
    """Runs of the pipeline, here and in helpers; helpers started."""

    def __init__(self) -> None:
        self.here = 0
        self.helper = 0
        self.helpers_started = 0


stats = _Stats()
_lock = threading.Lock()


def parse(llvm_ir: str, optimize: bool) -> llvm.ModuleRef:
    """`llvm_ir` parsed and verified, and run through LLVM's O3 pipeline when `optimize`
    (`host.optimize`).

    Raises:
      RuntimeError: LLVM's, for IR that does not parse or verify.
    """
    if optimize:
        optimized = _optimized_by_helper(llvm_ir)
        if optimized is not None:
            return llvm.parse_assembly(optimized)
    module = llvm.parse_assembly(llvm_ir)
    module.verify()
    if optimize:
        stats.here += 1
        host.optimize(module)
    return module


def _optimized_by_helper(llvm_ir: str) -> str | None:
    """The optimized IR of `llvm_ir` from the helper, once this process has done its share
    of runs; None: do it here (its share not done, or the helper failed)."""
    share = int(config.read("justjax_llvm_optimizations_in_process"))
    if share < 0 or stats.here < share:
        return None
    with _lock:
        return _helper.optimize(llvm_ir)


class _Helper:
    """The helper process, started on demand and replaced every `RUNS_PER_HELPER` runs."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.runs = 0

    def optimize(self, llvm_ir: str) -> str | None:
        if self.process is None or self.runs >= RUNS_PER_HELPER:
            self.stop()
            self.process = _start()
            if self.process is None:
                return None
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        try:
            _write(process.stdin, llvm_ir.encode())
            ok, reply = _read(process.stdout)
        except (OSError, EOFError):
            self.stop()  # it died: the next run starts another
            return None
        self.runs += 1
        if not ok:
            return None  # done here, which raises LLVM's error as a run here would
        stats.helper += 1
        return reply.decode()

    def stop(self) -> None:
        process, self.process, self.runs = self.process, None, 0
        if process is None:
            return
        try:
            assert process.stdin is not None
            process.stdin.close()  # it ends when its input does
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()


_helper = _Helper()


def _start() -> subprocess.Popen | None:
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    except OSError:
        return None
    stats.helpers_started += 1
    return process


def _write(stream: IO[bytes], data: bytes) -> None:
    stream.write(len(data).to_bytes(_HEADER, "little") + data)
    stream.flush()


def _read(stream: IO[bytes]) -> tuple[bool, bytes]:
    header = stream.read(_HEADER + 1)
    if len(header) < _HEADER + 1:
        raise EOFError("the helper ended")
    size = int.from_bytes(header[1:], "little")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the helper ended")
    return bool(header[0]), data


def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """The helper's loop: each request's IR optimized (a reply flagged 1), or LLVM's error
    (flagged 0), until its input ends."""
    while True:
        header = requests.read(_HEADER)
        if len(header) < _HEADER:
            return
        llvm_ir = requests.read(int.from_bytes(header, "little")).decode()
        try:
            module = llvm.parse_assembly(llvm_ir)
            module.verify()
            host.optimize(module)
            ok, reply = True, str(module).encode()
        except RuntimeError as error:
            ok, reply = False, str(error).encode()
        replies.write(bytes([ok]) + len(reply).to_bytes(_HEADER, "little") + reply)
        replies.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
