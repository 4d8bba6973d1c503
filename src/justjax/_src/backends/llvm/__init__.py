"""The native CPU backend: optimized HLO to machine code through LLVM (llvmlite).

`codegen/` turns a module into one LLVM function (`entry`) over a table of buffers, with the
elemental `emitter` for fusions, registered `kernels/` for the ops that are not loops, native
`control_flow`, and calls back to the reference backend for the rest; `mathlib/` is the
vectorizable math the emitter calls; `runtime/` compiles the IR for the host and runs it.
"""
from __future__ import annotations

from justjax._src.backends.interface import Backend
from justjax._src.hlo import ir as hlo

__all__ = ["BACKEND", "LLVMBackend"]


class LLVMBackend(Backend):
    name = "llvm"
    platform = "cpu"

    def compile(self, module: hlo.Module):
        """Compiles `module` (entry point `main`) to a native `LLVMExecutable`."""
        from justjax._src.backends.llvm.runtime import executable
        return executable.compile_module(module)

    def start(self) -> None:
        """Loads the code generator and starts LLVM for the host (`executable.start`)."""
        from justjax._src.backends.llvm.runtime import executable
        executable.start()

    def effects_barrier(self) -> None:
        """Waits for the programs queued on the device's executor thread."""
        from justjax._src.backends.llvm.runtime import executable
        executable.wait_for_device()

    def prepare_replica_thread(self) -> None:
        """Readies a device thread to run one replica of an SPMD program (`pmap`): its BLAS
        calls use one thread, the replicas sharing the cores between them."""
        from justjax._src.backends.llvm.kernels import dot
        dot.use_one_blas_thread_here()

    def compile_profiled(self, module: hlo.Module):
        """`module` compiled with a cycle counter per op of `main` (`profile_counters`)."""
        from justjax._src.backends.llvm.runtime import executable
        return executable.LLVMExecutable(executable.prepare(module), prepared=True, profile=True)

    def reset_persistent_cache(self) -> None:
        """Forgets the object-code cache's folder (entries on disk are kept)."""
        from justjax._src.backends.llvm.runtime import object_cache
        object_cache.reset_cache()

    def cycle_counter_hz(self) -> float:
        """How fast `llvm.readcyclecounter` counts (measured once)."""
        from justjax._src.backends.llvm.runtime import executable
        return executable.cycle_counter_hz()


BACKEND = LLVMBackend()
