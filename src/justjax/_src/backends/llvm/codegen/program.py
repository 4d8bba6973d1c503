"""Whole-program code generation: an optimized module becomes ONE native entry point.

    void entry(ptr table, i64 run)

`table` holds one pointer per allocation of the buffer assignment (`passes/buffers.py`):
parameters, outputs, constants and the temp arena; a value's buffer is its allocation's pointer
plus its offset. The entry runs the ops of `main` in schedule order:

  - a fusion (`hlo.fusion`, kLoop) calls its function made by the elemental emitter;
  - an op with a registered kernel (`register`, below: dot, sort, ...) calls its function;
  - `stablehlo.while` and `stablehlo.case` become native loops and branches whose regions
    are emitted the same way, reading and writing buffers of the same table;
  - any other op calls back into Python (`justjax_fallback`), which runs the reference
    backend's kernel on the buffers in place. `Program.fallbacks` lists them.

A kernel is a function `void kernel(ptr operands..., ptr results...)` (pointers typed by the
memory type of each dtype, see `emitter.memory_type`): registered per opcode, it emits its
body with a `KernelContext` and raises `emitter.Unsupported` for an op it has no code for
(the function is then dropped and the op falls back).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import collectives, emitter, fp_environment, stack
from justjax._src.backends.llvm.codegen.emitter import Unsupported
from justjax._src.backends.llvm.mathlib import link
from justjax._src.backends.llvm.runtime import parallel_for
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes import buffers, fusion, loops

__all__ = ["KernelContext", "Program", "build_program", "register", "KERNELS"]

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = _I8.as_pointer()
FALLBACK_SYMBOL = "justjax_fallback"


@dataclass
class KernelContext:
    """What a kernel's emitter gets.

    Attributes:
      op: the HLO op.
      module: the llvmlite module (define helper functions in it).
      fn: the kernel's function, `void(ptr operands..., ptr results...)`.
      builder: positioned in `fn`'s entry block; the emitter leaves it at the block where the
        kernel ends (the caller adds `ret void`).
      operands, results: the typed pointer arguments.
      program: the program being built (for `external`).
    """

    op: Op
    module: ir.Module
    fn: ir.Function
    builder: ir.IRBuilder
    operands: list[ir.Value]
    results: list[ir.Value]
    program: "ProgramBuilder"


KernelEmitter = Callable[[KernelContext], None]
KERNELS: dict[str, KernelEmitter] = {}


def register(*opcodes: str) -> Callable[[KernelEmitter], KernelEmitter]:
    """Registers a kernel emitter for each of `opcodes`."""
    def decorate(fn: KernelEmitter) -> KernelEmitter:
        for opcode in opcodes:
            KERNELS[opcode] = fn
        return fn

    return decorate


@dataclass
class Fallback:
    """An op run by the reference backend from native code: `inputs` are the values whose
    buffers it reads (operands, then values its regions capture)."""

    op: Op
    inputs: list[Value]


@dataclass
class Program:
    """The LLVM module of one HLO module, and what the runtime needs to run it.

    Attributes:
      llvm_module: the llvmlite module defining `entry`.
      assignment: the buffer assignment the table follows.
      constants: allocation index -> the constant's bytes (a C-contiguous array).
      fallbacks: the ops run by the reference backend; their index is their id.
      kernels: opcode -> how many of its ops run as native functions.
      parallel_fusions: how many loop fusions are split across cores.
      functions: the native functions emitted for each op of `main`.
    """

    llvm_module: ir.Module
    assignment: buffers.BufferAssignment
    constants: dict[int, np.ndarray]
    fallbacks: list[Fallback]
    kernels: dict[str, int] = field(default_factory=dict)
    parallel_fusions: int = 0
    # Each top-level op's native functions (the kernel, or a split fusion's loop and task).
    functions: dict[Op, list[str]] = field(default_factory=dict)
    # Whether it calls math functions linked by symbol (`mathlib/link.py`).
    linked_math: bool = False
    # The collectives it can do by calling MPI itself (`collectives.py`), each with a slot of
    # the table after the allocations'.
    native_collectives: list = field(default_factory=list)


class ProgramBuilder:
    """Builds the entry function of one module."""

    def __init__(self, module: hlo.Module, link_math: bool = False,
                 profile_counters: int | None = None, parallel: bool = True) -> None:
        self.hlo = module
        # The address of one uint64 per op of `main`: each op's cycles are added there
        # (`llvm.readcyclecounter` around it), and its functions are kept out of line.
        self.profile_counters = profile_counters
        self.functions: dict[Op, list[str]] = {}
        self._current: Op | None = None
        self.module = emitter.new_module(module.name or "program")
        setattr(self.module, link.LINK_ATTRIBUTE, link_math)
        self.link_math = link_math
        self.parallel = parallel
        self.parallel_fusions = 0
        self.assignment = buffers.assign_buffers(module)
        self.constants: dict[int, np.ndarray] = {}
        self.fallbacks: list[Fallback] = []
        self.native_collectives: list[collectives.NativeAllReduceSite] = []
        self.kernels: dict[str, int] = {}
        self._names = 0
        self._externals: dict[str, ir.Function] = {}
        in_place = {(id(op), id(a), id(r)) for op, a, r in self.assignment.in_place}
        self._in_place = in_place
        # The program's body; `build` wraps it in the exported `entry`, which runs it with
        # denormals flushed (`fp_environment`).
        self.entry = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [_PTR, _I64]),
                                 name="entry.body")
        self.table, self.run_id = self.entry.args
        # Nothing writes the table while the program runs.
        self.table.add_attribute("noalias")
        self.b = ir.IRBuilder(self.entry.append_basic_block("entry"))
        # Pointers of values without a buffer of their own: region block arguments.
        self.bound: dict[Value, ir.Value] = {}

    # -- names, symbols, pointers ----------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self._names += 1
        return f"{prefix}.{self._names}"

    def external(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        """Declares the external function `name` (an address the runtime registers with
        `llvm.add_symbol`, e.g. a BLAS routine)."""
        fn = self._externals.get(name)
        if fn is None:
            fn = self._externals[name] = ir.Function(self.module, fnty, name=name)
        return fn

    def pointer(self, value: Value) -> ir.Value:
        """An `i8*` to `value`'s buffer."""
        bound = self.bound.get(value)
        if bound is not None:
            return bound
        if not isinstance(value.type, hlo.TensorType):
            return ir.Constant(_PTR, None)
        if value.type.nbytes == 0:
            return self.b.bitcast(self._empty_buffer(), _PTR)
        alloc, offset = self.assignment.slices[value]
        slot = self.b.gep(self.table, [ir.Constant(_I64, alloc.index * 8)], inbounds=True)
        base = self.b.load(self.b.bitcast(slot, _PTR.as_pointer()))
        if offset:
            base = self.b.gep(base, [ir.Constant(_I64, offset)], inbounds=True)
        return base

    def _empty_buffer(self) -> ir.Value:
        """Memory standing for zero-size arrays: a kernel that reads or writes an element of
        one by mistake touches these zeros, not address 0."""
        empty = self.module.globals.get("zero_size_buffer")
        if empty is None:
            arr_ty = ir.ArrayType(_I8, 64)
            empty = ir.GlobalVariable(self.module, arr_ty, name="zero_size_buffer")
            empty.linkage = "internal"
            empty.initializer = ir.Constant(arr_ty, None)
            empty.align = 64
        return empty

    def typed(self, ptr: ir.Value, type_: hlo.Type) -> ir.Value:
        if not isinstance(type_, hlo.TensorType):
            return ir.Constant(_PTR, None)
        return self.b.bitcast(ptr, emitter.memory_type(type_.dtype).as_pointer())

    def memmove(self, dst: ir.Value, src: ir.Value, nbytes: int) -> None:
        if nbytes == 0:
            return
        fn = self.module.declare_intrinsic("llvm.memmove", [_PTR, _PTR, _I64])
        self.b.call(fn, [dst, src, ir.Constant(_I64, nbytes), ir.Constant(ir.IntType(1), 0)])

    # -- the program -----------------------------------------------------------------------

    def build(self) -> Program:
        main = self.hlo.function("main")
        if self.profile_counters is None:
            self.emit_block(main.body.ops[:-1])
        else:
            self.emit_profiled(main.body.ops[:-1])
        self.copy_outputs(main)
        self.b.ret_void()
        exported = fp_environment.wrap_entry(self.entry, "entry")
        # Only `entry` is visible outside the module: programs share an execution engine.
        for value in self.module.globals.values():
            defined = (value.blocks if isinstance(value, ir.Function)
                       else getattr(value, "initializer", None) is not None)
            if defined and value is not exported:
                value.linkage = "internal"
        linked = link.finish(self.module)
        return Program(self.module, self.assignment, self.constants, self.fallbacks,
                       self.kernels, self.parallel_fusions, self.functions, linked,
                       self.native_collectives)

    def emit_profiled(self, ops: Sequence[Op]) -> None:
        """Emits `ops`, adding the cycles each takes to its counter."""
        counter_type = ir.FunctionType(_I64, [])
        read = self.module.globals.get("llvm.readcyclecounter") or ir.Function(
            self.module, counter_type, name="llvm.readcyclecounter")
        counters = self.b.inttoptr(ir.Constant(_I64, self.profile_counters),
                                   _I64.as_pointer())
        for i, op in enumerate(ops):
            self._current = op
            start = self.b.call(read, [])
            self.emit_op(op)
            elapsed = self.b.sub(self.b.call(read, []), start)
            slot = self.b.gep(counters, [ir.Constant(_I64, i)], inbounds=True)
            self.b.store(self.b.add(self.b.load(slot), elapsed), slot)
        self._current = None

    def _record(self, fn: ir.Function) -> None:
        """Notes `fn` as a native function of the op being profiled, kept out of line so
        its code can be shown on its own."""
        if self._current is None:
            return
        self.functions.setdefault(self._current, []).append(fn.name)
        fn.attributes.add("noinline")

    def copy_outputs(self, main: hlo.Function) -> None:
        """Copies each output not computed in its own allocation into it (a returned
        parameter or constant, a value returned twice, a donated parameter's output computed
        elsewhere), in the assignment's order; staged sources are copied aside first."""
        outputs = main.body.terminator.operands
        allocs = {j: a for a in self.assignment.allocations for j in a.outputs}
        staged = {}
        for j in self.assignment.staged:
            nbytes = outputs[j].type.nbytes
            staged[j] = self.malloc(nbytes)
            self.memmove(staged[j], self.pointer(outputs[j]), nbytes)
        for j in self.assignment.copies:
            value = outputs[j]
            if not isinstance(value.type, hlo.TensorType):
                continue
            alloc = allocs[j]
            slot = self.b.gep(self.table, [ir.Constant(_I64, alloc.index * 8)], inbounds=True)
            dst = self.b.load(self.b.bitcast(slot, _PTR.as_pointer()))
            src = staged[j] if j in staged else self.pointer(value)
            self.memmove(dst, src, value.type.nbytes)
        for ptr in staged.values():
            self.free(ptr)

    def malloc(self, nbytes: int) -> ir.Value:
        """An `i8*` to `nbytes` of fresh memory (`free` it before the program returns)."""
        fn = self.external("malloc", ir.FunctionType(_PTR, [_I64]))
        return self.b.call(fn, [ir.Constant(_I64, max(nbytes, 1))])

    def free(self, ptr: ir.Value) -> None:
        fn = self.external("free", ir.FunctionType(ir.VoidType(), [_PTR]))
        self.b.call(fn, [ptr])

    def emit_block(self, ops: Sequence[Op]) -> None:
        for op in ops:
            self.emit_op(op)

    def emit_op(self, op: Op) -> None:
        if op.opcode == "stablehlo.constant":
            self.emit_constant(op)
        elif op.opcode == "stablehlo.while" and not _needs_fallback_whole(op):
            from justjax._src.backends.llvm.codegen import control_flow
            control_flow.emit_while(self, op)
        elif op.opcode == "stablehlo.case" and not _needs_fallback_whole(op):
            from justjax._src.backends.llvm.codegen import control_flow
            control_flow.emit_case(self, op)
        elif op.opcode in ("stablehlo.optimization_barrier",):
            for a, r in zip(op.operands, op.results, strict=True):
                if isinstance(r.type, hlo.TensorType):
                    self.memmove(self.pointer(r), self.pointer(a), r.type.nbytes)
        elif op.opcode == "stablehlo.after_all":
            pass
        elif (native := collectives.native_all_reduce(op)) is not None:
            collectives.emit_all_reduce(self, op, *native)
        elif op.opcode == "stablehlo.reshape" or (
                op.opcode == "stablehlo.bitcast_convert" and _same_bits(op)):
            # Row-major data does not move: XLA makes these bitcasts; here a copy.
            self.memmove(self.pointer(op.result), self.pointer(op.operands[0]),
                         op.result.type.nbytes)
        elif op.opcode in _LOOP_OPS and not self.emit_native(_wrapped(op)):
            self.emit_fallback(op)
        elif op.opcode not in _LOOP_OPS and not self.emit_native(op):
            self.emit_fallback(op)

    def emit_constant(self, op: Op) -> None:
        t = op.result.type
        value = np.ascontiguousarray(np.broadcast_to(np.asarray(op.attributes["value"],
                                                                t.dtype), t.shape))
        if t.nbytes == 0:
            return
        alloc, _ = self.assignment.slices[op.result]
        if alloc.kind == "constant" and op.result not in self.bound:
            self.constants[alloc.index] = value
            return
        data = bytearray(value.tobytes())
        arr_ty = ir.ArrayType(_I8, len(data))
        g = ir.GlobalVariable(self.module, arr_ty, name=self.fresh("constant"))
        g.global_constant, g.linkage, g.align = True, "internal", 64
        g.initializer = ir.Constant(arr_ty, data)
        src = self.b.bitcast(g, _PTR)
        if alloc.kind != "output" and op.result not in self.bound:
            # A constant inside a loop body is read where it is, not copied every trip.
            self.bound[op.result] = src
            return
        # A constant sharing an output's memory (or computed into a loop's state).
        self.memmove(self.pointer(op.result), src, t.nbytes)

    def emit_native(self, op: Op) -> bool:
        """Emits `op` as a call to a native function (fusion or kernel); False if none."""
        args = [self.pointer(v) for v in op.operands] + [self.pointer(v) for v in op.results]
        types = op.operand_types + op.result_types
        if any(not isinstance(t, hlo.TensorType) for t in types):
            return False
        shared = self._shared_args(op)
        name = self.fresh(_kernel_name(op))
        if fusion.is_fusion(op) and op.attributes.get("kind") == fusion.KIND_LOOP:
            if self.emit_parallel_fusion(op, name, args, shared):
                return True
            try:
                fn = emitter.emit_fusion(self.module, op, name, shared)
            except Unsupported:
                return False
        else:
            # Other fusion kinds have kernels of their own ("hlo.fusion:kOutput").
            key = f"{op.opcode}:{op.attributes['kind']}" if fusion.is_fusion(op) else op.opcode
            kernel = KERNELS.get(key)
            if kernel is None:
                return False
            try:
                fn = self.emit_kernel(kernel, op, name, shared)
            except Unsupported:
                return False
        fn.linkage = "internal"
        self._record(fn)
        self.kernels[op.opcode] = self.kernels.get(op.opcode, 0) + 1
        self.b.call(fn, [self.typed(a, t) for a, t in zip(args, types, strict=True)])
        return True

    def emit_parallel_fusion(self, op: Op, name: str, args: list[ir.Value],
                             shared: frozenset[int]) -> bool:
        """Emits a large loop fusion as tasks over ranges of its root, run on several cores
        (`parallel_for.py`); False when it stays on one (small, or not splittable)."""
        if not self.parallel:
            return False  # a small program
        root = op.result_types[0]
        units = emitter.parallel_units(root)
        tasks = min(units, parallel_for.task_count(root.nbytes, root.size, cycles_per_element(op)))
        if tasks < 2:
            return False
        try:
            fused = emitter.emit_fusion(self.module, op, name, shared, ranged=True)
        except Unsupported:
            return False
        fused.linkage = "internal"
        self._record(fused)
        task = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [_PTR, _I64, _I64]),
                           name=self.fresh(f"{name}.task"))
        task.linkage = "internal"
        tb = ir.IRBuilder(task.append_basic_block("entry"))
        table = tb.bitcast(task.args[0], _PTR.as_pointer())
        types = op.operand_types + op.result_types
        pointers = [tb.bitcast(tb.load(tb.gep(table, [ir.Constant(_I64, i)], inbounds=True)),
                               emitter.memory_type(t.dtype).as_pointer())
                    for i, t in enumerate(types)]
        tb.call(fused, [*pointers, task.args[1], task.args[2]])
        tb.ret_void()
        # Tasks run on pool threads too, whose floating-point mode is Python's.
        task = fp_environment.wrap_entry(task, self.fresh(f"{name}.task"))
        context = self.b.bitcast(self._pointer_array(args), _PTR)
        fnty = ir.FunctionType(_I32, [_PTR, _PTR, _I64, _I64])
        self.b.call(self.external(parallel_for.SYMBOL, fnty),
                    [self.b.bitcast(task, _PTR), context, ir.Constant(_I64, units),
                     ir.Constant(_I64, tasks)])
        self.kernels[op.opcode] = self.kernels.get(op.opcode, 0) + 1
        self.parallel_fusions += 1
        return True

    def emit_kernel(self, kernel: KernelEmitter, op: Op, name: str,
                    shared: frozenset[int]) -> ir.Function:
        types = op.operand_types + op.result_types
        ptrs = [emitter.memory_type(t.dtype).as_pointer() for t in types]
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), ptrs), name=name)
        for i, arg in enumerate(fn.args):
            if i not in shared:
                arg.add_attribute("noalias")
        builder = ir.IRBuilder(fn.append_basic_block("entry"))
        n = len(op.operands)
        ctx = KernelContext(op, self.module, fn, builder, list(fn.args[:n]),
                            list(fn.args[n:]), self)
        try:
            kernel(ctx)
            builder.ret_void()
        except Unsupported:
            del self.module.globals[fn.name]
            raise
        return fn

    def _shared_args(self, op: Op) -> frozenset[int]:
        """Argument positions of `op`'s function whose buffers overlap (in place)."""
        shared: set[int] = set()
        n = len(op.operands)
        for i, a in enumerate(op.operands):
            for j, r in enumerate(op.results):
                if (id(op), id(a), id(r)) in self._in_place or self._same_buffer(a, r):
                    shared.update((i, n + j))
        # The same value passed twice is fine (both reads).
        return frozenset(shared)

    def _same_buffer(self, a: Value, r: Value) -> bool:
        if a in self.bound or r in self.bound:
            return self.bound.get(a) is not None and self.bound.get(a) is self.bound.get(r)
        sa, sr = self.assignment.slices.get(a), self.assignment.slices.get(r)
        if sa is None or sr is None:
            return False
        (alloc_a, off_a), (alloc_r, off_r) = sa, sr
        if alloc_a is not alloc_r:
            return False
        return off_a < off_r + r.type.nbytes and off_r < off_a + a.type.nbytes

    def emit_fallback(self, op: Op) -> None:
        """A call `i32 justjax_fallback(run, id, ptr inputs[], ptr results[])`: the runtime
        runs the reference kernel of `op` on the buffers (nonzero: it raised)."""
        inputs = list(dict.fromkeys([*op.operands, *_captured(op)]))
        fb_id = len(self.fallbacks)
        self.fallbacks.append(Fallback(op, inputs))
        fnty = ir.FunctionType(_I32, [_I64, _I64, _PTR.as_pointer(), _PTR.as_pointer()])
        callee = self.external(FALLBACK_SYMBOL, fnty)
        ins = self._pointer_array([self.pointer(v) for v in inputs])
        outs = self._pointer_array([self.pointer(v) for v in op.results])
        status = self.b.call(callee, [self.run_id, ir.Constant(_I64, fb_id), ins, outs])
        # A Python error stops the program (the runtime raises it): a loop whose predicate
        # came from the failed op must not keep running.
        failed = self.b.icmp_signed("!=", status, ir.Constant(_I32, 0))
        with self.b.if_then(failed, likely=False):
            self.b.ret_void()

    def _pointer_array(self, ptrs: list[ir.Value]) -> ir.Value:
        arr = self._entry_alloca(ir.ArrayType(_PTR, max(len(ptrs), 1)))
        for i, p in enumerate(ptrs):
            self.b.store(p, self.b.gep(arr, [ir.Constant(_I32, 0), ir.Constant(_I32, i)],
                                       inbounds=True))
        return self.b.gep(arr, [ir.Constant(_I32, 0), ir.Constant(_I32, 0)], inbounds=True)

    def _entry_alloca(self, ty: ir.Type) -> ir.Value:
        return stack.entry_alloca(self.b, ty)


# Ops the fusion pass leaves unfused (XLA turns them into copies): run as one-op fusions.
_LOOP_OPS = frozenset({"stablehlo.transpose", "stablehlo.concatenate",
                       "stablehlo.bitcast_convert"})


def _same_bits(op: Op) -> bool:
    return op.operand_types[0].nbytes == op.result.type.nbytes and \
        op.operand_types[0].shape == op.result.type.shape


def _wrapped(op: Op) -> Op:
    """A kLoop fusion computing `op` (left alone: the fusion holds a copy of it)."""
    operands = list(dict.fromkeys(op.operands))
    args = [Value(v.type) for v in operands]
    mapping = dict(zip(operands, args, strict=True))
    inner = Op(op.opcode, [mapping[v] for v in op.operands], [Value(r.type) for r in op.results],
               dict(op.attributes), op.regions)
    block = hlo.Block(args, [inner, Op("stablehlo.return", list(inner.results), [])])
    name = op.opcode.split(".")[-1]
    return Op(fusion.FUSION, operands, list(op.results),
              {"kind": fusion.KIND_LOOP, "name": name, "computation": f"{name}_computation"},
              [hlo.Region(block)])


# Rough cycles per element of the ops in a fused loop (XLA's cost model splits loops by them).
_EXPENSIVE_CYCLES = 20
_DIVIDE_CYCLES = 5


def cycles_per_element(op: Op) -> float:
    """An estimate of the cycles one element of a loop fusion's root costs: a transcendental
    function about 20, a division or square root about 5, anything else 1; a reduction
    inside counts once per element it folds."""
    total = 0.0
    block = op.regions[0].block
    root_size = max(op.result_types[0].size, 1)
    for inner in block.walk():
        if inner.opcode in ("stablehlo.return", "stablehlo.constant"):
            continue
        if emitter.is_transcendental(inner.opcode):
            cost = _EXPENSIVE_CYCLES
        elif inner.opcode in ("stablehlo.divide", "stablehlo.sqrt", "stablehlo.rsqrt"):
            cost = _DIVIDE_CYCLES
        else:
            cost = 1
        if inner.opcode == "stablehlo.reduce":
            cost = max(inner.operand_types[0].size // root_size, 1)
        total += cost
    return total


def _kernel_name(op: Op) -> str:
    name = op.attributes.get("name") if fusion.is_fusion(op) else None
    base = str(name) if name is not None else op.opcode.split(".")[-1]
    return "".join(c if c.isalnum() or c == "_" else "_" for c in base)


def _captured(op: Op) -> list[Value]:
    """The values `op`'s regions read that are defined outside them (StableHLO regions
    capture the values of enclosing blocks implicitly)."""
    defined: set[Value] = set()
    used: list[Value] = []
    for region in op.regions:
        defined.update(region.block.args)
        for inner in region.block.walk():
            used.extend(inner.operands)
            defined.update(inner.results)
            for nested in inner.regions:
                defined.update(nested.block.args)
    return [v for v in dict.fromkeys(used) if v not in defined]


def _needs_fallback_whole(op: Op) -> bool:
    """Whether a control-flow op must run wholly in the reference backend: its regions hold
    tokens or tuples the native code does not carry."""
    for value in [*op.operands, *op.results]:
        if not isinstance(value.type, hlo.TensorType):
            return True
    for region in op.regions:
        for arg in region.block.args:
            if not isinstance(arg.type, hlo.TensorType):
                return True
    return False


def build_program(module: hlo.Module, link_math: bool = False,
                  profile_counters: int | None = None, parallel: bool = True) -> Program:
    """The `Program` of `module` (optimized and scheduled, its fusible ops in fusions).

    Args:
      module: the HLO module.
      link_math: declare the math functions (`mathlib/link.py`) instead of defining them.
      profile_counters: the address of one uint64 per op of `main`, to which each run adds
        the cycles (`llvm.readcyclecounter`) each op took; its native functions are then
        kept out of line (`Program.functions` names them).
      parallel: split large loop fusions into tasks run on several cores.
    """
    load_kernels()
    return ProgramBuilder(module, link_math, profile_counters, parallel).build()


def work(module: hlo.Module) -> int:
    """The number of elements the ops of `module` read and write (a reduction's work is its
    input, not its few outputs; fused computations are counted by their fusion)."""
    load_kernels()
    total = 0
    for fn in module.functions:
        for op in fn.body.walk():
            if op.opcode == "stablehlo.constant":
                continue
            for value in [*op.operands, *op.results]:
                if isinstance(value.type, hlo.TensorType):
                    total += value.type.size
            counter = MULTIPLY_ADDS.get(op.opcode)
            if counter is not None:
                total += counter(op)
    return total


def scale(module: hlo.Module) -> int:
    """The work of the largest op of `module`: the elements it reads and writes (or its
    multiply-adds), times the trips of the loops around it. A program of many tiny ops is
    small however many there are; a loop of many trips is not."""
    load_kernels()
    largest = 0
    trips = loops.repetitions(module)
    for fn in module.functions:
        for op in fn.body.walk():
            if op.opcode == "stablehlo.constant":
                continue
            size = sum(v.type.size for v in [*op.operands, *op.results]
                       if isinstance(v.type, hlo.TensorType))
            counter = MULTIPLY_ADDS.get(op.opcode)
            if counter is not None:
                size = max(size, counter(op))
            times = trips.get(op, 1)
            if times > 1:
                # Each trip costs an op in a loop its call and the loop's control too.
                size = max(size, LOOP_OP_MIN_WORK)
            largest = max(largest, size * times)
    return largest


# The least work counted for one run of an op inside a loop: unoptimized, a trip of a small
# body costs about this many elements' worth in calls, copies and index arithmetic.
LOOP_OP_MIN_WORK = 128


# Opcode -> multiply-adds of the op, for ops whose work is not their elements (dots,
# convolutions); the kernel modules fill it beside their `register`.
MULTIPLY_ADDS: dict[str, Callable[[Op], int]] = {}


_kernels_loaded: list[bool] = []


def load_kernels() -> None:
    """Imports the kernel modules, which register themselves (`register`, `MULTIPLY_ADDS`):
    once, when a program is first built or measured. Not when this module is imported: a
    kernel module imports this one, and importing it first would then import the others
    while it is half done (`conv` reads `dot`'s names)."""
    if _kernels_loaded:
        return
    import importlib
    for name in ("sort", "dot", "conv", "window"):
        importlib.import_module(f"justjax._src.backends.llvm.kernels.{name}")
    _kernels_loaded.append(True)
