"""The reference backend: a NumPy interpreter of the StableHLO IR, the oracle of the others.

Compiling a module turns each block into a list of steps, one per op: a *kernel* (a
closure over the op's attributes, built once by the op's kernel builder) and the slots its
operands and results occupy. Running a block runs the steps in order. Every result is
checked against the type the IR promises, so a kernel that returns a wrong dtype or shape
fails loudly here instead of giving a wrong answer later.

Kernel builders are registered per opcode by the modules of this package:

    @register("stablehlo.sine")
    def _sine(op: Op, compiler: Compiler) -> Kernel:
        return lambda x: np.sin(x)

A kernel takes the operand arrays positionally and returns one array (one-result ops) or a
list of arrays.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Collection, Sequence

import numpy as np

from justjax._src.backends.interface import Backend, Executable
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op

Kernel = Callable[..., Any]
KernelBuilder = Callable[[Op, "Compiler"], Kernel]

kernel_builders: dict[str, KernelBuilder] = {}


_destinations = threading.local()


class writing_into:
    """While it is entered, the op a caller runs alone (the native backend's fallback of one
    op) may write its results straight into `buffers` (per result, a C-contiguous array of
    its type, or None): a kernel that can asks `destination(k)`, and returns that very
    buffer, which the caller then does not copy."""

    def __init__(self, buffers: Sequence[np.ndarray | None]) -> None:
        self.buffers = buffers

    def __enter__(self) -> None:
        self._previous = getattr(_destinations, "buffers", None)
        _destinations.buffers = self.buffers

    def __exit__(self, *exc: Any) -> None:
        _destinations.buffers = self._previous


def destination(k: int, shape: Sequence[int], dtype: Any) -> np.ndarray | None:
    """Where result `k` of the op run alone in this thread may be written, if it has that
    shape and dtype (`writing_into`); else None."""
    buffers = getattr(_destinations, "buffers", None)
    if buffers is None or k >= len(buffers) or buffers[k] is None:
        return None
    buffer = buffers[k]
    if buffer.shape != tuple(shape) or buffer.dtype != np.dtype(dtype):
        return None
    return buffer


def register(*opcodes: str) -> Callable[[KernelBuilder], KernelBuilder]:
    """Registers a kernel builder for each of `opcodes`."""
    def decorate(builder: KernelBuilder) -> KernelBuilder:
        for opcode in opcodes:
            kernel_builders[opcode] = builder
        return builder

    return decorate


class BlockRunner:
    """A compiled block: `runner(args) -> results` (the terminator's operands).

    A region's block may read values of the blocks enclosing it (StableHLO's implicit
    capture in while/case regions): such a value gets a slot of its own here, filled on each
    run from the environment of the enclosing block's run in progress (`outer.envs[-1]`).
    Runs in progress are per thread: the replicas of an SPMD program run one executable on
    several threads at once."""

    def __init__(self, block: ir.Block, compiler: Compiler,
                 outer: BlockRunner | None = None) -> None:
        self.outer = outer
        self.captured: list[tuple[int, int]] = []  # (own slot, slot in `outer`'s env)
        self.publishes = False  # whether a nested region reads this block's values
        self._runs = threading.local()
        self._slots = slots = {arg: i for i, arg in enumerate(block.args)}
        self.num_args = len(block.args)
        steps = []
        compiler.scopes.append(self)
        try:
            for op in block.ops[:-1]:
                builder = kernel_builders.get(op.opcode)
                if builder is None:
                    raise NotImplementedError(f"reference backend: no kernel for {op.opcode}")
                kernel = builder(op, compiler)
                ins = tuple(self.slot(v) for v in op.operands)
                for result in op.results:
                    slots[result] = len(slots)
                outs = tuple(slots[v] for v in op.results)
                single = op.results[0].type if len(op.results) == 1 else None
                steps.append((kernel, ins, outs, op, single))
            self.result_slots = tuple(self.slot(v) for v in block.terminator.operands)
        finally:
            compiler.scopes.pop()
        self.steps = steps
        self.num_slots = len(slots)

    @property
    def envs(self) -> list[list[Any]]:
        """The environments of this block's runs in progress on this thread, innermost last."""
        envs = getattr(self._runs, "envs", None)
        if envs is None:
            envs = self._runs.envs = []
        return envs

    def slot(self, value: ir.Value) -> int:
        """The slot of `value`, captured from the enclosing blocks if this block lacks it."""
        slot = self._slots.get(value)
        if slot is None:
            if self.outer is None:
                raise KeyError(f"reference backend: {value!r} is used out of its scope")
            outer_slot = self.outer.slot(value)
            self.outer.publishes = True
            slot = self._slots[value] = len(self._slots)
            self.captured.append((slot, outer_slot))
        return slot

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        env: list[Any] = [None] * self.num_slots
        env[:self.num_args] = args
        if self.captured:
            outer_env = self.outer.envs[-1]
            for own, theirs in self.captured:
                env[own] = outer_env[theirs]
        if not self.publishes:
            return self._run(env)
        envs = self.envs
        envs.append(env)
        try:
            return self._run(env)
        finally:
            envs.pop()

    def _run(self, env: list[Any]) -> list[Any]:
        for kernel, ins, outs, op, single in self.steps:
            result = kernel(*[env[i] for i in ins])
            if single is not None:
                # The check of `_checked`, inline: this loop is the interpreter's hot path.
                if (getattr(result, "dtype", None) != getattr(single, "dtype", None)
                        or getattr(result, "shape", None) != getattr(single, "shape", None)):
                    _checked(result, op.results[0], op)
                env[outs[0]] = result
            else:
                for slot, value, out in zip(outs, result, op.results, strict=True):
                    env[slot] = _checked(value, out, op)
        return [env[i] for i in self.result_slots]


def _checked(value: Any, result: ir.Value, op: Op) -> Any:
    expected = result.type
    if isinstance(expected, ir.TokenType):
        return value
    if getattr(value, "dtype", None) != expected.dtype or np.shape(value) != expected.shape:
        raise AssertionError(
            f"reference kernel for {op.opcode} returned {getattr(value, 'dtype', type(value))}"
            f"{list(np.shape(value))}, the IR says {expected}")
    return value


class Compiler:
    """Compiles the functions of one module (each once, on first call)."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self._functions: dict[str, BlockRunner] = {}
        # The blocks being compiled, innermost last: the scope a region's captures come from.
        self.scopes: list[BlockRunner] = []

    def function(self, name: str) -> BlockRunner:
        runner = self._functions.get(name)
        if runner is None:
            runner = self._functions[name] = BlockRunner(self.module.function(name).body, self)
        return runner

    def region(self, region: ir.Region) -> BlockRunner:
        """A runner of `region`, which may read values of the block being compiled."""
        return BlockRunner(region.block, self, self.scopes[-1] if self.scopes else None)


class ReferenceExecutable(Executable):
    """A module compiled for the reference backend."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self._main = Compiler(module).function("main")
        self._aliases = sorted(module.function("main").aliased_outputs.items())

    def execute(self, args: Sequence[np.ndarray],
                donated: Collection[int] = ()) -> list[np.ndarray]:
        """Runs `main` on `args` (one buffer per argument). A donated parameter in
        `donated` (a buffer the caller gives up) receives its output, which is returned in
        that buffer, as the native backend computes it in place; no other argument's buffer
        is written."""
        with np.errstate(all="ignore"):
            results = [np.asarray(r) for r in self._main(args)]
        given = [(p, j) for p, j in self._aliases
                 if p in donated and _owns_exactly(args[p], results[j])]
        if given:
            _write_back(results, [args[p] for p, _ in given], [j for _, j in given])
        return results


def _owns_exactly(buffer: Any, result: np.ndarray) -> bool:
    """Whether `buffer` can hold `result` as it is: a C-contiguous NumPy array of the
    result's dtype and shape."""
    return (type(buffer) is np.ndarray and buffer.flags.c_contiguous
            and buffer.dtype == result.dtype and buffer.shape == result.shape)


def _writable(buffer: np.ndarray) -> np.ndarray:
    """A writable array over the memory of `buffer` (read-only as an Array's buffer is),
    which the caller gave up: the reference backend writes it as a native program does,
    through its address."""
    if buffer.nbytes == 0:
        return np.empty(buffer.shape, buffer.dtype)
    raw = (ctypes.c_char * buffer.nbytes).from_address(buffer.ctypes.data)
    return np.frombuffer(raw, buffer.dtype).reshape(buffer.shape)


def _write_back(results: list[np.ndarray], targets: list[np.ndarray],
                outputs: list[int]) -> None:
    """Writes result `outputs[i]` into `targets[i]` and returns it there. A result that may
    read a target's memory (an argument returned as it is, a view of one) is copied first,
    so no write clobbers what another result still holds."""
    for k, result in enumerate(results):
        if any(np.may_share_memory(result, t) for t in targets):
            results[k] = np.array(result, copy=True)
    for target, j in zip(targets, outputs, strict=True):
        np.copyto(_writable(target), results[j], casting="no")
        results[j] = target


def evaluator(module: ir.Module) -> Callable[[Op, Sequence[np.ndarray]], list[Any] | None]:
    """Constant folding's evaluator (`passes.constant_folding.Evaluator`): a function running
    one op of `module` on NumPy operands with its kernel, giving its results (None for an op
    without a kernel)."""
    compiler = Compiler(module)

    def evaluate(op: Op, operands: Sequence[np.ndarray]) -> list[Any] | None:
        builder = kernel_builders.get(op.opcode)
        if builder is None:
            return None
        out = builder(op, compiler)(*operands)
        return [out] if len(op.results) == 1 else list(out)

    return evaluate


class ReferenceBackend(Backend):
    """The NumPy interpreter: no asynchronous runs, no machine code (the interface's
    defaults)."""

    name = "reference"
    # It runs programs for the same (CPU) devices as the native backend.
    platform = "cpu"

    def compile(self, module: ir.Module) -> ReferenceExecutable:
        return ReferenceExecutable(module)

    def evaluator(self, module: ir.Module) -> Callable[[Op, Sequence[np.ndarray]],
                                                        list[Any] | None]:
        """Constant folding's evaluator of `module`'s ops (see the module-level `evaluator`)."""
        return evaluator(module)


BACKEND = ReferenceBackend()


@register("func.call", "stablehlo.composite")
def _call(op: Op, compiler: Compiler) -> Kernel:
    """A call of a function of the module (a composite: of its decomposition)."""
    callee = op.attributes["decomposition" if op.opcode == "stablehlo.composite"
                          else "callee"].name
    single = len(op.results) == 1

    def call(*args: Any) -> Any:
        results = compiler.function(callee)(args)
        return results[0] if single else results

    return call


def _load_kernels() -> None:
    # The kernel modules register themselves on import.
    from justjax._src.backends.reference import kernels  # noqa: F401


_load_kernels()
