"""Running a `Program`: compile its LLVM module, lay out its buffers, call its entry.

One call of an executable is one foreign call of `entry(table, run)`: the table holds one
pointer per allocation (parameters as given, outputs freshly allocated, constants kept by the
executable, the temp arena allocated per call, 64-byte aligned). A donated parameter holds its
output: the program writes the buffer the caller gives up (`donated`), else a copy of it. Ops
the program runs through the reference backend call back into `_fallback` with their buffers;
an exception raised there stops the program and is raised again by `execute`.

Large programs (`ASYNC_ELEMENTS`) are dispatched asynchronously (`execute_async`): the call
returns the output buffers and a future at once, and the program runs on the device's
executor thread (ctypes releases the GIL for the call), in dispatch order.

Small programs (no op touching `FAST_COMPILE_ELEMENTS` elements) are compiled
without LLVM's optimization pipeline and with the fast instruction selector: their run time is
dominated by the call itself, and compiling them at O3 costs 5 to 10 times more. Large ones
are compiled in two tiers (`tiers.py`): first quickly (at O0, or at O3 with the math library
linked), then, once called again, fully optimized on a background thread; both give the same
bits.

`start` readies the backend when the first array is put on a device (`Backend.start`).
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import math
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Collection, Sequence

import llvmlite.binding as llvm
import numpy as np

from justjax._src.backends.interface import Executable
from justjax._src.backends.llvm.codegen import emitter, program
from justjax._src.backends.llvm.mathlib import link, scalar
from justjax._src.backends.llvm.runtime import host, object_cache, parallel_for, tiers
from justjax._src.hlo import ir as hlo
from justjax._src.hlo import opcodes
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.inline import CallInlining
from justjax._src.hlo.passes import fusion
from justjax._src.hlo.passes.fusion import FusionWrapper, InstructionFusion
from justjax._src.runtime import host_callbacks, processes, replicas
from justjax._src.runtime.array import stored_shape

__all__ = ["LLVMExecutable", "ASYNC_ELEMENTS", "FAST_COMPILE_ELEMENTS"]

FAST_COMPILE_ELEMENTS = 1 << 16
# LLVM's optimizer is superlinear in a function's size: longer programs (unrolled PRNG
# rounds, many small loops) are compiled without it.
MAX_OPTIMIZED_IR_BYTES = 1 << 19
# Programs touching at least this many elements are dispatched asynchronously: their run
# takes long enough (a millisecond and up) for the caller to get on with tracing and
# dispatching the next ones meanwhile. Handing a program to the executor thread and waking
# the caller afterwards costs 50-100 µs in Python, which smaller programs would not repay.
ASYNC_ELEMENTS = 1 << 22
_ALIGN = 64

_FALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64,
                                  ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.POINTER(ctypes.c_void_p))
_ENTRY_TYPE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64)


@dataclass
class _Run:
    """One call in progress: the executable and the first error its fallbacks raised."""

    executable: LLVMExecutable
    error: BaseException | None = None


_runs: dict[int, _Run] = {}
_run_ids = itertools.count(1)
_symbols_lock = threading.Lock()
_symbols_ready = False


def _fallback(run_id: int, fallback_id: int, inputs: Any, results: Any) -> int:
    run = _runs[run_id]
    try:
        run.executable.run_fallback(fallback_id, inputs, results)
        return 0
    except BaseException as e:  # noqa: BLE001 -- handed to `execute`, which raises it
        run.error = e
        return 1


_fallback_cfunc = _FALLBACK_TYPE(_fallback)


def _register_symbols() -> None:
    """Makes the runtime's functions visible to compiled code by name."""
    global _symbols_ready
    with _symbols_lock:
        if _symbols_ready:
            return
        host.host_target_machine()
        libc = ctypes.CDLL(None)
        for name in ("malloc", "free"):
            llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        llvm.add_symbol(program.FALLBACK_SYMBOL,
                        ctypes.cast(_fallback_cfunc, ctypes.c_void_p).value)
        llvm.add_symbol(parallel_for.SYMBOL, parallel_for.address())
        _symbols_ready = True


def start() -> None:
    """Readies the backend for its first compile (`Backend.start`, when the first array is put
    on a device): this module and the code generator are loaded by now, the kernel modules
    too; LLVM is started for the host CPU with the runtime's symbols, and SciPy's BLAS (what
    dots call) is loaded."""
    _register_symbols()
    # Importing `scipy.linalg` takes 40-100 ms; the dot kernels take BLAS's addresses from it.
    from scipy.linalg import cython_blas  # noqa: F401
    program.load_kernels()
    scalar.arity("exp")  # loads the math library's modules
    link.prepare()


_executor_lock = threading.Lock()
_device_executor: ThreadPoolExecutor | None = None


def device_executor() -> ThreadPoolExecutor:
    """The device's executor thread: programs dispatched asynchronously run there, one
    after the other, in the order they were dispatched."""
    global _device_executor
    with _executor_lock:
        if _device_executor is None:
            _device_executor = ThreadPoolExecutor(max_workers=1,
                                                  thread_name_prefix="justjax-device")
        return _device_executor


def wait_for_device() -> None:
    """Returns once every program dispatched to the device's executor thread has run: the
    thread runs them in order, so a no-op queued now runs after them."""
    with _executor_lock:
        executor = _device_executor
    if executor is not None:
        executor.submit(lambda: None).result()


def native_text(optimized_ir: str, opt_level: int, dialect: str) -> str:
    """The LLVM IR (`"llvm"`) or host assembly (`"asm"`) of compiled code."""
    if dialect == "llvm":
        return optimized_ir
    if dialect == "asm":
        return host.new_target_machine(opt_level).emit_assembly(llvm.parse_assembly(optimized_ir))
    raise ValueError(f"Unknown dialect {dialect!r}; expected 'llvm' or 'asm'")


@functools.cache
def cycle_counter_hz() -> float:
    """How fast `llvm.readcyclecounter` counts (the time-stamp counter on x86), measured
    against the wall clock over 50 ms."""
    module = llvm.parse_assembly("declare i64 @llvm.readcyclecounter()\n"
                                 "define i64 @ticks() {\n"
                                 "  %t = call i64 @llvm.readcyclecounter()\n"
                                 "  ret i64 %t\n}\n")
    # The engine owns the target machine it is given: a fresh one, not the shared one.
    engine = llvm.create_mcjit_compiler(module, host.new_target_machine(host.QUICK))
    engine.finalize_object()
    ticks = ctypes.CFUNCTYPE(ctypes.c_uint64)(engine.get_function_address("ticks"))
    start_time, start_ticks = time.perf_counter(), ticks()
    time.sleep(0.05)
    elapsed_ticks, elapsed = ticks() - start_ticks, time.perf_counter() - start_time
    return elapsed_ticks / elapsed


def compile_module(module: hlo.Module) -> Any:
    """The executable of `module`: a shape-independent kernel for a program that is one
    elementwise op (`elementwise_executable`), else the whole program compiled."""
    from justjax._src.backends.llvm.runtime import elementwise_executable
    _register_symbols()
    prepared = prepare(module)
    key = elementwise_executable.signature(prepared)
    if key is not None:
        large = program.scale(prepared) >= FAST_COMPILE_ELEMENTS
        try:
            return elementwise_executable.ElementwiseExecutable(prepared, key, large)
        except emitter.Unsupported:
            pass
    return LLVMExecutable(prepared, prepared=True)


def prepare(module: hlo.Module) -> hlo.Module:
    """A copy of `module` ready for code generation: calls inlined and every fusible op in
    a fusion (what the optimizing pipeline does; an eager program skips that pipeline)."""
    prepared = util.clone_module(module)
    CallInlining().run(prepared)
    main_ops = prepared.function("main").body.ops
    if not any(fusion.is_fusion(op) or op.regions for op in main_ops):
        # A straight-line module as lowered (an eager op): its chain of elementwise ops
        # (a scalar broadcast, then the op) becomes one kernel.
        InstructionFusion().run(prepared)
    FusionWrapper().run(prepared)
    return prepared


# A program evaluating math functions at least this many times per run, or whose loops touch
# this many elements, starts in a first tier at O3 with the math linked (vectorized code);
# one doing less at O0 (scalar code, whose first run would cost more than O3 saves).
VECTOR_TIER_MATH = 1 << 21
VECTOR_TIER_ELEMENTS = 1 << 23
# LLVM IR flags that let LLVM change the rounding: code using them is compiled the same way in
# every tier, so that both give the same bits.
_ORDER_FLAGS = re.compile(r"\b(reassoc|contract|fast)\b")


def first_tier_level(module: hlo.Module, llvm_ir: str, linked_math: bool) -> int | None:
    """The LLVM level a large program's first tier is compiled at (its IR `llvm_ir`, the
    math linked when `linked_math`), or None: the program is compiled in one tier.

    Without flags that let LLVM reassociate or contract (reductions have none: their order
    is explicit in the IR), any level computes the same bits: the first tier is O0 (LLVM's fast code
    generator, scalar code), unless the program evaluates many math functions or touches
    many elements in its loops, which want vectorized code: then `host.LINKED` (O3's IR
    pipeline with the math linked, the fast code generator), which costs LLVM a fraction of
    O3 with it inlined. With such flags, only the latter, when math is linked.
    """
    if (not _ORDER_FLAGS.search(llvm_ir) and math_work(module) < VECTOR_TIER_MATH
            and loop_elements(module) < VECTOR_TIER_ELEMENTS):
        return host.QUICK
    return host.LINKED if linked_math else None


def loop_elements(module: hlo.Module) -> int:
    """The elements `module`'s fusions (its generated loops) read and write per run (loop
    bodies counted once)."""
    total = 0
    for op in module.walk():
        if fusion.is_fusion(op):
            total += sum(v.type.size for v in (*op.operands, *op.results)
                         if isinstance(v.type, hlo.TensorType))
    return total


def math_work(module: hlo.Module) -> int:
    """How many math functions (transcendentals) a run of `module`'s fusions evaluates
    (each fusion's math ops times its elements; loop bodies counted once)."""
    total = 0
    for op in module.walk():
        if fusion.is_fusion(op) and op.results:
            count = sum(1 for o in op.regions[0].block.walk() if _transcendental(o.opcode))
            if count:
                type_ = op.results[0].type
                total += count * (type_.size if isinstance(type_, hlo.TensorType) else 1)
    return total


def _transcendental(name: str) -> bool:
    found = opcodes.lookup(name)
    return found is not None and found.transcendental


def _view(address: int | None, type_: hlo.Type) -> np.ndarray:
    """A NumPy array over the buffer at `address` (no copy)."""
    assert isinstance(type_, hlo.TensorType)
    if type_.nbytes == 0 or not address:
        return np.zeros(type_.shape, type_.dtype)
    raw = (ctypes.c_char * type_.nbytes).from_address(address)
    return np.frombuffer(raw, type_.dtype).reshape(type_.shape)


def writable_in_place(buffer: Any, type_: hlo.Type) -> bool:
    """Whether a program can compute a result of `type_` in `buffer`, a buffer given up
    by the caller: a C-contiguous NumPy array of exactly that type."""
    return (type(buffer) is np.ndarray and buffer.flags.c_contiguous
            and isinstance(type_, hlo.TensorType)
            and buffer.dtype == type_.dtype and buffer.shape == stored_shape(type_.shape))


def buffer_address(buffer: np.ndarray) -> int:
    """The address of a writable NumPy array's memory (a quarter of the cost of
    `buffer.ctypes.data`, which the per-call fast paths cannot afford)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    except ValueError:  # empty, or a dtype the buffer protocol cannot name (bfloat16)
        return buffer.ctypes.data


# Outputs this large reuse their last call's buffer once it is free (`_output_buffer`);
# smaller ones come from the allocator's warm memory anyway.
_REUSED_OUTPUT_BYTES = 256 << 10


def _pooled_references() -> int:
    """What `sys.getrefcount` says of a pooled buffer nothing else references (measured: it
    depends on the interpreter); -1 without reference counts (no buffer is reused)."""
    if not hasattr(sys, "getrefcount"):
        return -1
    pool = {0: np.empty(1)}
    buffer = pool[0]
    return sys.getrefcount(buffer)


_POOLED_REFERENCES = _pooled_references()


def _aligned_bytes(nbytes: int) -> np.ndarray:
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = -raw.ctypes.data % _ALIGN
    return raw[start:start + nbytes]


class LLVMExecutable(Executable, tiers.Hot):
    """A module compiled to one native entry point.

    Attributes:
      program: the generated `program.Program`.
      llvm_ir: the LLVM IR as generated (before LLVM's optimizations).
      optimized_ir: the LLVM IR after them.
      opt_level: the level the final code is compiled at (`host.py`): `host.FULL`, or
        `host.QUICK` for a small program.
      tier: 1 while a large program runs as first compiled (at O0, or at O3 with its math
        linked: `first_tier_level`), 2 once its fully optimized version is swapped in
        (`tiers.py`), or when compiled in one tier.
      profile_counters: with `profile`, the cycles each op of `main` took, summed over runs.
    """

    def __init__(self, module: hlo.Module, prepared: bool = False,
                 profile: bool = False) -> None:
        _register_symbols()
        self.module = module if prepared else prepare(module)
        self.opt_level = (host.FULL if program.scale(self.module) >= FAST_COMPILE_ELEMENTS
                          else host.QUICK)
        # With `profile`, each run adds the cycles every op of `main` takes to its counter.
        self.profile_counters = (np.zeros(len(self.module.function("main").body.ops),
                                          np.uint64) if profile else None)
        # A small program links math (nothing to inline into); a large one too, first,
        # when compiled in tiers (`tiers.py`), unless it is profiled (its code as final).
        tiered = bool(self.opt_level) and not profile and tiers.enabled()
        self.program = program.build_program(
            self.module, link_math=not self.opt_level or tiered,
            parallel=bool(self.opt_level),
            profile_counters=(None if self.profile_counters is None
                              else self.profile_counters.ctypes.data))
        self.llvm_ir = str(self.program.llvm_module)
        if len(self.llvm_ir) > MAX_OPTIMIZED_IR_BYTES:
            self.opt_level = host.QUICK  # O3 takes minutes on a program this long
        # The text is all that is needed from here: the builder's objects are large.
        self.program.llvm_module = None
        # The level the first tier is compiled at (None: compiled in one tier).
        quick = (first_tier_level(self.module, self.llvm_ir, self.program.linked_math)
                 if tiered and self.opt_level else None)
        self._code_level = self.opt_level if quick is None else quick
        # Parse, optimize and generate code, or load the object code from the disk cache.
        compiled = object_cache.compile(self.llvm_ir, self._code_level, self.module.name)
        self.optimized_ir = compiled.optimized_ir
        # Every engine whose code this program has run, kept while it lives: a call on
        # another thread (or an inline runner) may still be in the first tier's code when
        # the tier-up swaps the entry point, and a disposed engine frees its code.
        self._engines = [compiled.engine]
        self._entry = _ENTRY_TYPE(compiled.engine.get_function_address(compiled.entry))
        # Per thread, the last large output buffer of each allocation (`_output_buffer`).
        self._output_pools = threading.local()
        self.tier = 1 if quick is not None else 2
        # Calls before the one that starts the tier-up (None: none to start).
        self.calls_to_tier_up: int | None = 1 if self.tier == 1 else None
        tiers.note_compile()
        self._work = program.work(self.module)
        self._layout()
        self._fallback_runners: dict[int, Any] = {}
        # Host callbacks run in order with the caller's code: such a program is never
        # started to run behind the caller's back (`prepare`).
        self._calls_python = any(
            op.opcode == "stablehlo.custom_call"
            and op.attributes.get("call_target_name") == host_callbacks.CALL_TARGET
            for op in self.module.walk())
        # Per run layout, the contexts of the native collectives (`_native_collectives`).
        self._natives: dict[tuple, list[Any]] = {}

    def _tier_up(self) -> None:
        """Compiles the program fully optimized (at O3, its math inlined) and swaps its entry
        point in (on the tier-up thread); the buffer layout, constants and fallbacks are the
        same."""
        optimized = program.build_program(self.module, link_math=False, parallel=True)
        llvm_ir = str(optimized.llvm_module)
        if len(llvm_ir) <= MAX_OPTIMIZED_IR_BYTES:
            compiled = object_cache.compile(llvm_ir, host.FULL, self.module.name)
            engine, entry = compiled.engine, compiled.entry
            self.llvm_ir, self.optimized_ir = llvm_ir, compiled.optimized_ir
            self._engines.append(engine)
            # A call reads the old entry point or the new one: both engines stay alive.
            self._entry = _ENTRY_TYPE(engine.get_function_address(entry))
            self._code_level = host.FULL
        self.tier = 2

    def as_text(self, dialect: str = "llvm") -> str:
        """The optimized LLVM IR (`"llvm"`) or the host assembly (`"asm"`) of the program."""
        return native_text(self.optimized_ir, self._code_level, dialect)

    def _layout(self) -> None:
        assignment = self.program.assignment
        main = self.module.function("main")
        outputs = main.body.terminator.operands
        self._n = len(assignment.allocations)
        self._params: list[tuple[int, int, bool]] = []  # (slot, parameter, donated)
        self._outputs: list[tuple[int, hlo.Type]] = []  # per output: (slot, type)
        self._fresh: list[tuple[int, tuple, np.dtype]] = []  # outputs allocated per call
        self._temp: list[tuple[int, int]] = []
        slot_of_output: dict[int, int] = {}
        for alloc in assignment.allocations:
            if alloc.kind == "parameter":
                self._params.append((alloc.index, alloc.parameter, bool(alloc.outputs)))
            elif alloc.kind == "temp":
                self._temp.append((alloc.index, alloc.size))
            for j in alloc.outputs:
                slot_of_output[j] = alloc.index
            if alloc.kind == "output":
                type_ = outputs[alloc.outputs[0]].type
                self._fresh.append((alloc.index, type_.shape, type_.dtype))
        for j, value in enumerate(outputs):
            self._outputs.append((slot_of_output.get(j, -1), value.type))
        self._param_types = main.arg_types
        # After the allocations' slots, one per native collective (`codegen/collectives.py`).
        slots = self._n + len(self.program.native_collectives)
        self._table_type = ctypes.c_void_p * max(slots, 1)
        template = [None] * max(slots, 1)
        for slot, const in self.program.constants.items():
            template[slot] = const.ctypes.data
        self._template = template

    def execute(self, args: Sequence[np.ndarray],
                donated: Collection[int] = ()) -> list[np.ndarray]:
        """Runs the program on `args` (one buffer per parameter).

        Args:
          args: one buffer per parameter.
          donated: the parameters whose buffers the caller gives up: a donated parameter
            among them holds its output in that very buffer (written in place); the
            buffers of all other parameters are never written.
        Returns:
          One buffer per output.
        """
        if self.calls_to_tier_up is not None:
            self.count_call()
        table, arrays = self._buffers(args, donated)
        self._run_table(table)
        return [self._result(arrays, slot, type_) for slot, type_ in self._outputs]

    def prepare(self, args: Sequence[np.ndarray], donated: Collection[int] = ()
                ) -> tuple[list[np.ndarray], Callable[[], None]] | None:
        """`Executable.prepare`: the outputs are allocated here; the caller may write its
        NumPy arguments as soon as this returns, so the run reads copies of them (an Array's
        buffer is read-only and stays as it is)."""
        if self._calls_python:
            return None
        if self.calls_to_tier_up is not None:
            self.count_call()
        private = [np.array(a, copy=True) if a.flags.writeable else a for a in args]
        table, arrays = self._buffers(private, donated)
        outs = [self._result(arrays, slot, type_) for slot, type_ in self._outputs]

        def run() -> None:
            try:
                self._run_table(table)
            finally:
                # Let go of the buffers before the run counts as done: a buffer a later
                # call wants to take over (donation) is then referenced by its Array alone.
                arrays.clear()

        return outs, run

    def _run_table(self, table: Any) -> None:
        """Runs the program on the call's `table` of addresses (in this thread), with the
        contexts of its native collectives when the run of replicas gives them."""
        natives = self._native_collectives() if self.program.native_collectives else None
        if natives is not None:
            for site, native in zip(self.program.native_collectives, natives, strict=True):
                table[site.slot] = native.address if native is not None else None
        if not self.program.fallbacks:
            self._entry(table, 0)
        else:
            self._run_with_fallbacks(table)
        if natives is not None:
            for native in natives:
                if native is not None:
                    native.check()

    def _native_collectives(self) -> list[Any] | None:
        """Per native collective site, the `processes.NativeAllReduce` this run calls MPI
        with (None: the site runs its fallback), or None when no site does: outside a run
        split over processes, or with several of the run's replicas in this process (they
        meet in the rendezvous first). Made once per layout of the run."""
        context = replicas.current()
        if context is None or not processes.is_initialized():
            return None
        rendezvous = context.rendezvous
        if len(rendezvous.local) != 1 or not rendezvous.spans_processes:
            return None
        key = (rendezvous.process_of, context.replica)
        natives = self._natives.get(key)
        if natives is None:
            from justjax._src.backends.reference.kernels import collectives
            natives = []
            for site in self.program.native_collectives:
                involved = collectives.group_processes(site.op, rendezvous, context.replica)
                natives.append(processes.NativeAllReduce(involved, site.opcode, site.dtype)
                               if len(involved) > 1 else None)
            self._natives[key] = natives
        return natives

    def _buffers(self, args: Sequence[np.ndarray],
                 donated: Collection[int]) -> tuple[Any, list[Any]]:
        """The call's table of allocation addresses, and the arrays behind them (kept alive
        by the caller until the program is done)."""
        # The table starts as a copy of the template (constants' addresses filled in).
        table = self._table_type(*self._template)
        arrays: list[Any] = [None] * self._n
        for slot, p, written in self._params:
            a = args[p]
            if written and p in donated and writable_in_place(a, self._param_types[p]):
                pass  # the caller gave this buffer up: the output is computed in it
            elif written or type(a) is not np.ndarray or not a.flags.c_contiguous:
                # The program writes a donated parameter's allocation: never memory the
                # caller did not give up.
                a = np.array(a, order="C", copy=True)
            arrays[slot] = a
            table[slot] = a.ctypes.data
        for slot, shape, dtype in self._fresh:
            a = arrays[slot] = self._output_buffer(slot, shape, dtype)
            table[slot] = a.ctypes.data
        for slot, size in self._temp:
            arena = arrays[slot] = _aligned_bytes(size)
            table[slot] = arena.ctypes.data
        return table, arrays

    def _output_buffer(self, slot: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """A buffer for output allocation `slot`: a large one is the buffer this thread's
        last call gave, when nothing references it any more (its memory is already mapped:
        fresh pages cost the kernel zeroing them, as much as a collective moving them);
        else a fresh one, kept for the next call."""
        shape = stored_shape(shape)
        if math.prod(shape) * dtype.itemsize < _REUSED_OUTPUT_BYTES:
            return np.empty(shape, dtype)
        pool = self._output_pools.__dict__
        buffer = pool.get(slot)
        # Referenced by the pool, `buffer` and getrefcount's argument alone: nothing reads it.
        if buffer is not None and sys.getrefcount(buffer) == _POOLED_REFERENCES:
            buffer.setflags(write=True)
            return buffer
        buffer = pool[slot] = np.empty(shape, dtype)
        return buffer

    def execute_async(self, args: Sequence[np.ndarray], donated: Collection[int] = ()
                      ) -> tuple[list[np.ndarray], Any]:
        """Starts the program on the device's executor thread and returns at once (`args`
        and `donated` as for `execute`).

        Returns:
          The output buffers (being written) and the future of the run (None when the
          program ran inline: a small program, or one calling back into Python, whose
          callbacks must run in order with the caller's code).
        """
        if self._work < ASYNC_ELEMENTS or self.program.fallbacks:
            return self.execute(args, donated), None
        outs, run = self.prepare(args, donated)
        return outs, device_executor().submit(run)

    def inline_runner(self) -> Any:
        """`Executable.inline_runner`: for a program that runs inline (small, no fallback
        ops), reads its parameters in place and computes each output in a fresh allocation
        of its own. Each call takes a table of addresses (with the temp arena) from a pool
        and puts it back after, so a table is never shared by two calls running at once."""
        if self._work >= ASYNC_ELEMENTS or self.program.fallbacks:
            return None
        if any(written for _, _, written in self._params):
            return None  # a donated parameter's allocation is written: `execute` copies it
        fresh = {slot: (shape, dtype) for slot, shape, dtype in self._fresh}
        outputs = []
        for slot, type_ in self._outputs:
            if (slot not in fresh or not isinstance(type_, hlo.TensorType)
                    or fresh[slot] != (type_.shape, type_.dtype)):
                return None
            outputs.append((slot, type_.shape, type_.dtype))
        if len({slot for slot, _, _ in outputs}) != len(outputs):
            return None  # one allocation holds two outputs
        params = [(slot, p) for slot, p, _ in self._params]
        frames: list[tuple[Any, list[np.ndarray]]] = []

        def new_frame() -> tuple[Any, list[np.ndarray]]:
            table = self._table_type(*self._template)
            arenas = [_aligned_bytes(size) for _, size in self._temp]
            for (slot, _), arena in zip(self._temp, arenas, strict=True):
                table[slot] = arena.ctypes.data
            return table, arenas

        def run(addresses: Sequence[int]) -> tuple[list[np.ndarray], list[int]]:
            if self.calls_to_tier_up is not None:
                self.count_call()
            try:
                frame = frames.pop()
            except IndexError:  # none free (or taken by another thread since)
                frame = new_frame()
            table = frame[0]
            for slot, p in params:
                table[slot] = addresses[p]
            outs, out_addresses = [], []
            for slot, shape, dtype in outputs:
                out = np.empty(stored_shape(shape), dtype)
                table[slot] = address = buffer_address(out)
                outs.append(out)
                out_addresses.append(address)
            # Read per call: the tier-up swaps in the optimized entry point.
            self._entry(table, 0)
            frames.append(frame)
            return outs, out_addresses

        return run

    def _run_with_fallbacks(self, table: Any) -> None:
        run_id = next(_run_ids)
        run = _runs[run_id] = _Run(self)
        try:
            self._entry(table, run_id)
        finally:
            del _runs[run_id]
        if run.error is not None:
            raise run.error

    @staticmethod
    def _result(arrays: list[Any], slot: int, type_: hlo.Type) -> Any:
        if not isinstance(type_, hlo.TensorType):
            return None
        array = arrays[slot]
        shape = stored_shape(type_.shape)
        if array.dtype == type_.dtype and array.shape == shape:
            return array
        return array.view(np.uint8)[:type_.nbytes].view(type_.dtype).reshape(shape)

    def run_fallback(self, fallback_id: int, inputs: Any, results: Any) -> None:
        """Runs fallback op `fallback_id` by the reference backend on the buffers."""
        runner = self._fallback_runners.get(fallback_id)
        if runner is None:
            runner = self._fallback_runners[fallback_id] = _FallbackRunner(
                self.module, self.program.fallbacks[fallback_id])
        runner.run(inputs, results)


class _FallbackRunner:
    """A fallback op's reference runner, and views of the buffers its last run had (a
    program's buffers are mostly the same from run to run: its pooled outputs, the
    arguments of a loop)."""

    def __init__(self, module: hlo.Module, fb: program.Fallback) -> None:
        from justjax._src.backends import reference
        self._reference = reference
        self._runner = _reference_runner(module, fb)
        self._in_types = [v.type if isinstance(v.type, hlo.TensorType) else None
                          for v in fb.inputs]
        self._out_types = [v.type if isinstance(v.type, hlo.TensorType) and v.type.nbytes
                           else None for v in fb.op.results]
        self._views: dict[tuple[int, hlo.TensorType], np.ndarray] = {}

    def _view(self, address: int | None, type_: hlo.TensorType | None) -> np.ndarray | None:
        if type_ is None:
            return None
        key = (address, type_)
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= 64:
                self._views.clear()
            view = self._views[key] = _view(address, type_)
        return view

    def run(self, inputs: Any, results: Any) -> None:
        args = [self._view(inputs[i], t) for i, t in enumerate(self._in_types)]
        views = [self._view(results[i], t) for i, t in enumerate(self._out_types)]
        # A kernel may write its results in place (`reference.destination`): a collective
        # receives straight into the program's buffer.
        with np.errstate(all="ignore"), self._reference.writing_into(views):
            outs = self._runner(args)
        for view, out in zip(views, outs, strict=True):
            if view is not None and out is not view:
                np.copyto(view, np.asarray(out), casting="no")


def _reference_runner(module: hlo.Module, fb: program.Fallback) -> Any:
    """The reference backend's runner of a module whose `main` takes `fb.inputs` and runs
    `fb.op` alone (the module's other functions kept for the calls it makes)."""
    from justjax._src.backends import reference
    ret = hlo.Op("func.return", list(fb.op.results), [])
    body = hlo.Block(list(fb.inputs), [fb.op, ret])
    main = hlo.Function("main", body, list(fb.op.result_types), visibility="public")
    others = [f for f in module.functions if f.name != "main"]
    return reference.Compiler(hlo.Module(module.name, [main, *others])).function("main")
