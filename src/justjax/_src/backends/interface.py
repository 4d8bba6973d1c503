"""What a backend is: `compile(module) -> Executable`, and an executable runs on buffers.

The interface is small and fixed, as tinygrad's: a backend takes a StableHLO `ir.Module`
(entry point `main`) and returns an `Executable` whose `execute(args)` maps input buffers to
output buffers. Everything else a caller may ask of a backend is an optional hook declared
here with a default that does without it, so callers call the hook and never probe for it:

    Backend.effects_barrier()          no-op: the backend starts nothing asynchronously
    Backend.prepare_replica_thread()   no-op: its threads need no per-thread settings
    Backend.compile_profiled(module)   None: it makes no machine code to profile
    Backend.cycle_counter_hz()         None: no cycle counter
    Backend.reset_persistent_cache()   no-op: it keeps no compilation cache on disk
    Backend.start()                    no-op: nothing to ready before the first compile
    Executable.execute_async(...)      runs `execute` inline; no future
    Executable.prepare(...)            None: a replica of an SPMD run calls `execute`
    Executable.inline_runner()         None: calls go through `execute_async`
    Executable.as_text(dialect)        None: no native code to show

A backend is made known by `backends.register_backend(name, factory, platform=...)`.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Collection, Sequence

import numpy as np

from justjax._src.hlo import ir


# Parameter addresses -> (output buffers, their addresses): `Executable.inline_runner`.
InlineRunner = Callable[[Sequence[int]], tuple[list[np.ndarray], list[int]]]


class Executable(abc.ABC):
    """A compiled module; subclasses implement `execute` and may override the hooks."""

    @abc.abstractmethod
    def execute(self, args: Sequence[np.ndarray],
                donated: Collection[int] = ()) -> list[np.ndarray]:
        """Runs the module's `main`.

        Args:
          args: one buffer per argument.
          donated: the arguments whose buffers the caller gives up; a donated argument among
            them (`tf.aliasing_output`) returns its output in that buffer, written in place.
            No other argument's buffer is ever written.
        Returns:
          One buffer per output.
        """

    def execute_async(self, args: Sequence[np.ndarray], donated: Collection[int] = ()
                      ) -> tuple[list[np.ndarray], Any]:
        """Starts the program and returns at once (`args` and `donated` as for `execute`).

        Returns:
          The output buffers (possibly still being written) and the future of the run, or
          None when it has finished. The default runs `execute` inline and returns None.
        """
        return self.execute(args, donated), None

    def prepare(self, args: Sequence[np.ndarray], donated: Collection[int] = ()
                ) -> tuple[list[np.ndarray], Callable[[], None]] | None:
        """Readies a run of the program on `args` (`donated` as for `execute`) without
        starting it: one replica of an SPMD run, which starts on its device's thread while
        the caller goes on (`runtime/replicas.start_replicas`).

        Returns:
          The output buffers the run will write, and the call that runs it (on any thread,
          once; it raises the program's error). The caller may write `args` as soon as this
          returns. None (the default): the program cannot be run so (one calling back into
          Python runs in order with the caller's code), and the replica calls `execute`.
        """
        return None

    def inline_runner(self) -> InlineRunner | None:
        """A function running the program at once in the calling thread on the addresses
        of its parameters' buffers (one per parameter, each C-contiguous and of the
        parameter's type; none is written), returning its outputs (each a fresh C-contiguous
        NumPy array of the output's type that nothing else references) and their addresses.
        None (the default) when the program cannot run so: callers use `execute_async`.
        A jit call's fast path uses it."""
        return None

    def as_text(self, dialect: str) -> str | None:
        """The program's native code as text (`"llvm"`: LLVM IR, `"asm"`: assembly), or
        None (the default) when the backend makes no native code."""
        return None


class Backend(abc.ABC):
    """A backend: compiles modules for the devices of its `platform`."""

    name: str
    platform: str = "cpu"  # the devices' platform its programs run on, as JAX names it

    @abc.abstractmethod
    def compile(self, module: ir.Module) -> Executable:
        """Compiles `module` (whose entry point is `main`)."""

    def start(self) -> None:
        """Readies the backend for its first compile (loads its code generator, starts its
        runtime), as JAX starts its backends when the first array is put on a device; called
        then (`runtime.devices.start_backend`). The default has nothing to ready."""

    def effects_barrier(self) -> None:
        """Waits for every program it started asynchronously; the default (a backend that
        runs everything inline) has nothing to wait for."""

    def prepare_replica_thread(self) -> None:
        """Readies the current device thread to run one replica of an SPMD program; the
        default needs nothing."""

    def compile_profiled(self, module: ir.Module) -> Any | None:
        """An executable of the optimized `module` counting the cycles each op of `main`
        takes (`explain` reads its `module`, `program`, `optimized_ir`, `as_text("asm")`
        and `profile_counters`), or None (the default): no machine code to profile."""
        return None

    def reset_persistent_cache(self) -> None:
        """Forgets where its persistent compilation cache is, so that the next compile reads
        `jax_compilation_cache_dir` again (`compilation_cache.reset_cache`); the default
        keeps no persistent cache."""

    def cycle_counter_hz(self) -> float | None:
        """How fast the cycle counter of `compile_profiled`'s programs counts, or None (the
        default) without one."""
        return None
