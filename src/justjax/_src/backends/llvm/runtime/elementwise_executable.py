"""Eager elementwise ops through kernels compiled once per op and dtypes, for every shape.

Eager mode compiles each primitive per (avals, params), as JAX does. For an elementwise op
the machine code does not depend on the shape: its loop runs over the flat elements. So a
program that is one elementwise op on arrays of its result's shape (or on scalars) runs a
kernel `void kernel(ptr operands..., ptr result, i64 begin, i64 end)` compiled once for the
op, its attributes and its dtypes (a fusion over a 1-D shape, emitted with
`emitter.emit_fusion(ranged=True)`), and called with the element count. A test suite, or a
program calling `jnp.sin` on arrays of many shapes, then compiles a few hundred kernels
instead of one program per shape. Kernels are compiled without LLVM's optimizer until a
call with at least `executable.FAST_COMPILE_ELEMENTS` elements compiles an optimized twin. A
jitted op whose donated operand is given up writes its result over that operand, through a
twin kernel whose pointers may alias.
"""
from __future__ import annotations

import ctypes
import operator
import threading
import weakref
from typing import Any, Callable, Collection, Sequence

import numpy as np

from justjax._src.compilation import caches
from justjax._src.backends.interface import Executable
from justjax._src.backends.llvm.codegen import emitter, fp_environment, program
from justjax._src.backends.llvm.mathlib import link
from justjax._src.backends.llvm.runtime import host, object_cache, parallel_for, tiers
from justjax._src.hlo import ir as hlo
from justjax._src.hlo import opcodes
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes import fusion
from justjax._src.runtime.array import stored_shape

__all__ = ["ElementwiseExecutable", "signature"]

# A 1-D extent no array reaches: the kernel's loop bounds come from its arguments.
_EXTENT = 1 << 40
# Held by the executables using them: a kernel no program uses is freed with its code.
_kernels: weakref.WeakValueDictionary[tuple, Any] = weakref.WeakValueDictionary()
_lock = threading.Lock()
caches.register_cache(_kernels.clear)


def _attribute_key(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_attribute_key(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return repr(value)


def _fits(op: Op, shape: tuple[int, ...]) -> bool:
    """Whether `op` can be in a shape-independent kernel of root shape `shape`: an
    elementwise op of that shape, a scalar broadcast to it, or a scalar constant."""
    result = op.results[0].type
    if op.opcode == "stablehlo.constant":
        return result.rank == 0
    if op.opcode == "stablehlo.broadcast_in_dim":
        return op.operand_types[0].rank == 0 and result.shape == shape
    return opcodes.is_elementwise(op.opcode) and len(op.results) == 1 and result.shape == shape


def signature(module: hlo.Module) -> tuple | None:
    """The kernel key of `module` if it is one loop fusion of elementwise ops (and scalar
    broadcasts) on parameters of its result's shape or scalars, returning that result
    once; else None."""
    main = module.function("main")
    ops = main.body.ops
    if len(ops) != 2 or not fusion.is_fusion(ops[0]):
        return None
    fused, ret = ops
    result = fused.results[0].type if len(fused.results) == 1 else None
    if not isinstance(result, hlo.TensorType) or result.rank == 0:
        return None
    if list(ret.operands) != fused.results or any(v not in main.args for v in fused.operands):
        return None
    if any(t.shape not in (result.shape, ()) for t in fused.operand_types):
        return None
    block = fused.regions[0].block
    if not all(_fits(op, result.shape) for op in block.ops[:-1]):
        return None
    # The computation, spelled with value numbers instead of shapes.
    number = {v: i for i, v in enumerate(block.args)}
    spelled = []
    for op in block.ops:
        for r in op.results:
            number[r] = len(number)
        attributes = tuple(sorted((k, _attribute_key(v)) for k, v in op.attributes.items()
                                  if k != "broadcast_dimensions"))
        spelled.append((op.opcode, tuple(number[v] for v in op.operands), attributes,
                        tuple((r.type.dtype.str, r.type.rank == 0) for r in op.results)))
    return (tuple(spelled), tuple((t.dtype.str, t.rank == 0) for t in fused.operand_types))


def _flat_fusion(fused: Op) -> Op:
    """`fused` with every non-scalar type made 1-D of extent `_EXTENT`."""
    def flat(t: hlo.TensorType) -> hlo.TensorType:
        return t if t.rank == 0 else hlo.TensorType((_EXTENT,), t.dtype)

    block = fused.regions[0].block
    mapping = {v: Value(flat(v.type)) for v in block.args}
    ops = []
    for op in block.ops:
        results = [Value(flat(r.type)) for r in op.results]
        mapping.update(zip(op.results, results, strict=True))
        attributes = dict(op.attributes)
        if op.opcode == "stablehlo.broadcast_in_dim":
            attributes["broadcast_dimensions"] = []
        ops.append(Op(op.opcode, [mapping[v] for v in op.operands], results, attributes,
                      op.regions))
    new_block = hlo.Block([mapping[v] for v in block.args], ops)
    operands = [Value(flat(v.type)) for v in fused.operands]
    return Op(fusion.FUSION, operands, [Value(flat(fused.results[0].type))],
              dict(fused.attributes), [hlo.Region(new_block)])


class _Kernel(tiers.Hot):
    """One compiled elementwise kernel; `shared`: the pointers (operands, then the result)
    that may point to the same memory (the result written over an operand). An optimized
    kernel compiled in tiers (`tiers.py`) links its math first (`tier` 1), and once called
    again is compiled with the math inlined on the tier-up thread (`tier` 2)."""

    def __init__(self, fused: Op, optimized: bool, shared: frozenset[int]) -> None:
        self._flat = _flat_fusion(fused)
        self._shared = shared
        self.opt_level = host.FULL if optimized else host.QUICK
        self._engines: list[Any] = []
        tiered = optimized and tiers.enabled()
        self.llvm_ir, linked, arity = self._emit(link_math=not optimized or tiered)
        self._proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (arity - 2)),
                                       ctypes.c_int64, ctypes.c_int64)
        self.tier = 1 if tiered and linked else 2
        self.call = self._compile(self.llvm_ir,
                                  host.LINKED if self.tier == 1 else self.opt_level)
        # Calls before the one that starts the tier-up (None: none to start).
        self.calls_to_tier_up: int | None = 1 if self.tier == 1 else None
        tiers.note_compile()

    def _emit(self, link_math: bool) -> tuple[str, bool, int]:
        """The kernel's LLVM IR, whether it links math, and the entry's arity."""
        module = emitter.new_module("elementwise")
        setattr(module, link.LINK_ATTRIBUTE, link_math)
        fn = fp_environment.wrap_entry(
            emitter.emit_fusion(module, self._flat, "entry.body", self._shared, ranged=True),
            "entry")
        linked = link.finish(module)
        return str(module), linked, len(fn.args)

    def _compile(self, llvm_ir: str, opt_level: int) -> Any:
        compiled = object_cache.compile(llvm_ir, opt_level, "elementwise")
        self.optimized_ir = compiled.optimized_ir
        self.code_level = opt_level
        # Kept while the kernel lives: a call on another thread (or a parallel task) may
        # still run the first tier's code after the tier-up swaps `call`.
        self._engines.append(compiled.engine)
        return self._proto(compiled.engine.get_function_address(compiled.entry))

    def _tier_up(self) -> None:
        llvm_ir, _, _ = self._emit(link_math=False)
        self.call = self._compile(llvm_ir, self.opt_level)
        self.llvm_ir = llvm_ir
        self.tier = 2


def _kernel(key: tuple, fused: Op, optimized: bool,
            shared: frozenset[int] = frozenset()) -> _Kernel:
    full_key = (key, optimized, shared)
    kernel = _kernels.get(full_key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(full_key)
            if kernel is None:
                kernel = _kernels[full_key] = _Kernel(fused, optimized, shared)
    return kernel


def _contiguous(a: Any) -> np.ndarray:
    if type(a) is not np.ndarray:
        return np.asarray(a)  # a NumPy scalar
    return a if a.flags.c_contiguous else np.array(a, order="C", copy=True)


class ElementwiseExecutable(Executable):
    """A one-elementwise-op program run by a shape-independent kernel."""

    def __init__(self, module: hlo.Module, key: tuple, large: bool) -> None:
        from justjax._src.backends.llvm.runtime import executable
        self.module = module
        main = module.function("main")
        fused = main.body.ops[0]
        self._params = [main.args.index(v) for v in fused.operands]
        result = fused.result.type
        self._result_type = result
        self._shape, self._dtype, self._size = result.shape, result.dtype, result.size
        self._kernel = _kernel(key, fused, large)
        # The parameter donated to the result, if any, and the kernel writing over it (its
        # operand pointers and the result's may alias), compiled when first needed.
        self._donor = next(iter(main.aliased_outputs), None)
        self._compile_args = (key, fused, large)
        self._in_place_kernel: _Kernel | None = None
        self.opt_level = self._kernel.opt_level
        self.program = program.Program(None, None, {}, [], {fusion.FUSION: 1})
        self._work = result.size * (len(fused.operands) + 1)
        self._async = self._work >= executable.ASYNC_ELEMENTS
        # A large op is cut into element ranges run on several cores, as a fusion of a
        # whole program is (`program.emit_parallel_fusion`).
        self._tasks = parallel_for.task_count(result.nbytes, result.size,
                                          program.cycles_per_element(fused))

    @property
    def llvm_ir(self) -> str:
        return self._kernel.llvm_ir

    def as_text(self, dialect: str = "llvm") -> str:
        from justjax._src.backends.llvm.runtime import executable
        return executable.native_text(self._kernel.optimized_ir, self._kernel.code_level,
                                      dialect)

    def execute(self, args: Sequence[np.ndarray],
                donated: Collection[int] = ()) -> list[np.ndarray]:
        """Runs the op on `args`; returns its result (written over the donated parameter's
        buffer when the caller gives it up in `donated`, as `LLVMExecutable.execute`)."""
        out, kernel = self._output(args, donated)
        if self._size:
            # The arrays stay referenced until the call returns (a copy made here would be
            # freed as soon as its address was taken).
            arrays = [_contiguous(args[p]) for p in self._params]
            self._run(kernel, [a.ctypes.data for a in arrays], out.ctypes.data)
        return [out]

    def inline_runner(self) -> Any:
        """`Executable.inline_runner`: the kernel called on the parameters' addresses and a
        fresh result, for an op small enough to run inline."""
        if self._async or not self._size:
            return None
        from justjax._src.backends.llvm.runtime.executable import buffer_address
        kernel, params, shape, dtype = self._kernel, self._params, self._shape, self._dtype
        size = self._size
        in_order = params == list(range(len(self.module.function("main").args)))
        # The kernel's operands among the parameters, picked in C (a tuple of them).
        pick = operator.itemgetter(*params, *params[:1]) if params else None

        def run(addresses: Sequence[int]) -> tuple[list[np.ndarray], list[int]]:
            out = np.empty(stored_shape(shape), dtype)
            address = buffer_address(out)
            pointers = addresses if in_order else pick(addresses)[:-1] if pick else ()
            if self._tasks == 1 and kernel.calls_to_tier_up is None:
                kernel.call(*pointers, address, 0, size)
            else:
                self._run(kernel, list(pointers), address)  # counts the call (tiers)
            return [out], [address]

        return run

    def _output(self, args: Sequence[np.ndarray],
                donated: Collection[int]) -> tuple[np.ndarray, _Kernel]:
        """The result's buffer (a fresh one, or the donated operand given up) and the kernel
        writing it."""
        from justjax._src.backends.llvm.runtime import executable
        p = self._donor
        if p is None or p not in donated or not executable.writable_in_place(args[p],
                                                                          self._result_type):
            return np.empty(stored_shape(self._shape), self._dtype), self._kernel
        if self._in_place_kernel is None:
            n = len(self._params)
            shared = frozenset([i for i, q in enumerate(self._params) if q == p] + [n])
            self._in_place_kernel = _kernel(*self._compile_args, shared)
        return args[p], self._in_place_kernel

    def _run(self, kernel: _Kernel, pointers: list[int], out: int) -> None:
        if kernel.calls_to_tier_up is not None:
            kernel.count_call()
        if self._tasks == 1:
            kernel.call(*pointers, out, 0, self._size)
            return
        parallel_for.run_split(lambda begin, end: kernel.call(*pointers, out, begin, end),
                           self._size, self._tasks)

    def execute_async(self, args: Sequence[np.ndarray], donated: Collection[int] = ()
                      ) -> tuple[list[np.ndarray], Any]:
        """As `execute`, on the device's executor thread when the op is large."""
        if not self._async:
            return self.execute(args, donated), None
        from justjax._src.backends.llvm.runtime import executable
        outs, run = self.prepare(args, donated)
        return outs, executable.device_executor().submit(run)

    def prepare(self, args: Sequence[np.ndarray], donated: Collection[int] = ()
                ) -> tuple[list[np.ndarray], Callable[[], None]]:
        """`Executable.prepare`: the result allocated here, the run reads copies of the
        caller's writable arguments."""
        private = [np.array(a, order="C", copy=True) if a.flags.writeable else _contiguous(a)
                   for a in args]
        out, kernel = self._output(private, donated)
        pointers = [private[p].ctypes.data for p in self._params]
        # The buffers stay referenced until the run is done, and no longer (see
        # `LLVMExecutable.prepare`).
        keep, address = [private, out], out.ctypes.data

        def run() -> None:
            try:
                self._run(kernel, pointers, address)
            finally:
                keep.clear()

        return [out], run
