"""The pipeline explorer: `justjax.explain(f, *args)` shows every stage of one function.

    jaxpr -> StableHLO -> the IR after each pass (and what it changed) -> optimized HLO
          -> the fusion graph -> each kernel's LLVM IR and assembly, cost and measured time

The result, an `Explanation`, prints as a text report (`str(e)`), draws the fusion graph as
SVG (`e.svg()`, `graph.py`) and writes one self-contained HTML page
(`e.save_html(path)`, `html.py`). `python -m justjax explain MODULE:FUNCTION --arg
'f32[128,784]' ...` does the same from a shell (`cli.py`).

Kernel times come from a profiled build of the same optimized module: the native backend
adds `llvm.readcyclecounter` around each op of the entry function and keeps each kernel's
functions out of line (so its LLVM IR and assembly can be shown on their own); the program
is run a few times and the cycles converted to seconds.
"""
from __future__ import annotations

import difflib
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import api
from justjax._src.compilation import jit as jit_lib
from justjax._src.compilation import stages
from justjax._src.compilation import spmd
from justjax._src.pytrees import tree_util
from justjax._src.backends import get_backend
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.hlo import hlo_printer, ir
from justjax._src.hlo.passes import cost, fusion, optimize

__all__ = ["Explanation", "Kernel", "PassRecord", "explain"]


@dataclass(frozen=True)
class PassRecord:
    """One pass of the optimizing pipeline as it ran on this function."""

    name: str
    changed: bool
    seconds: float
    ops_before: int   # top-level ops of the module's functions (a fusion is one)
    ops_after: int
    text: str = field(repr=False)   # the IR after the pass
    diff: str = field(repr=False)   # a unified diff from the IR before it ("" if unchanged)


@dataclass
class Kernel:
    """One op of the optimized entry computation: a fusion, a library call, a copy, ...

    Attributes:
      name: its instruction name in the optimized HLO (`compiled.as_text()`).
      opcode: its HLO opcode (`fusion`, `dot`, `while` ...).
      kind: how it runs (`loop fusion`, `dot (BLAS)`, `run by the reference backend` ...).
      shape: its result shape.
      operands: the names of what it reads (instructions or parameters).
      flops, transcendentals, bytes: its cost, as `cost_analysis()` counts it.
      seconds: its measured time per run (None where not measured).
      functions: the native functions that compute it.
      llvm_ir, asm: their optimized LLVM IR and host assembly.
      hlo: its line (and fused computation) in the optimized HLO.
    """

    name: str
    opcode: str
    kind: str
    shape: str
    operands: list[str]
    result_bytes: int
    flops: float
    transcendentals: float
    bytes: float
    seconds: float | None = None
    functions: list[str] = field(default_factory=list)
    llvm_ir: str = field(default="", repr=False)
    asm: str = field(default="", repr=False)
    hlo: str = field(default="", repr=False)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: flops per byte moved."""
        return self.flops / self.bytes if self.bytes else 0.0


@dataclass
class Explanation:
    """Every stage of one function's compilation (see the module docstring)."""

    name: str
    backend: str
    jaxpr: ClosedJaxpr
    stablehlo: str
    passes: list[PassRecord]
    optimized_hlo: str
    kernels: list[Kernel]
    # (producer, consumer, shape, bytes): producers and consumers are kernel names,
    # `Arg_i` parameters and `result[j]` outputs.
    edges: list[tuple[str, str, str, int]]
    inputs: list[tuple[str, str, int]]     # (name, shape, bytes)
    outputs: list[tuple[str, str, int]]
    cost: dict[str, float]
    lower_seconds: float       # tracing and lowering
    optimize_seconds: float    # the optimizing passes
    compile_seconds: float     # code generation and LLVM (of the profiled build)
    seconds_per_call: float | None
    notes: list[str] = field(default_factory=list)

    @property
    def stablehlo_op_count(self) -> int:
        return sum(1 for line in self.stablehlo.splitlines() if " = " in line
                   and ("stablehlo." in line or "call @" in line or "chlo." in line))

    @property
    def fusions(self) -> list[Kernel]:
        return [k for k in self.kernels if k.opcode == "fusion"]

    def svg(self) -> str:
        """The fusion graph: kernels as boxes, buffers as edges labelled with their sizes."""
        from justjax._src.explain import graph as explain_graph
        return explain_graph.render(self)

    def html(self) -> str:
        """One self-contained HTML page with every stage."""
        from justjax._src.explain import html as explain_html
        return explain_html.render(self)

    def save_html(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html())

    def __str__(self) -> str:
        return report(self)

    def __repr__(self) -> str:
        return (f"Explanation({self.name!r}, backend={self.backend!r}, "
                f"{len(self.passes)} passes, {len(self.kernels)} kernels)")


def explain(fun: Callable, *args: Any, static_argnums: int | Sequence[int] = (),
            time_kernels: bool = True, **kwargs: Any) -> Explanation:
    """Compiles `fun` for `args` as `jit` would and returns every stage of it.

    Args:
      fun: the function.
      *args, **kwargs: example arguments (arrays, or `ShapeDtypeStruct`s: then nothing is
        run and no time is measured).
      static_argnums: positional arguments that are static, as for `jit`.
      time_kernels: run the program to measure the time of the call and of each kernel.
    Returns:
      An `Explanation`.
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    jitted = jit_lib.jit(fun, static_argnums=static)
    name = getattr(fun, "__name__", type(fun).__name__)
    start = time.perf_counter()
    traced = jitted.trace(*args, **kwargs)
    lowered = traced.lower()
    module = lowered.compiler_ir()
    stablehlo = lowered.as_text()
    lower_seconds = time.perf_counter() - start

    passes: list[PassRecord] = []
    previous = [str(module), _op_count(module)]

    def record(pass_name: str, current: ir.Module, changed: bool, seconds: float) -> None:
        text, count = (str(current), _op_count(current)) if changed else previous
        diff = "".join(difflib.unified_diff(previous[0].splitlines(True), text.splitlines(True),
                                            "before", "after", n=1)) if changed else ""
        passes.append(PassRecord(pass_name, changed, seconds, previous[1], count, text, diff))
        previous[:] = [text, count]

    start = time.perf_counter()
    # A program over a mesh is cut into the per-device program first, as the compiler does.
    partitioned, layout = spmd.partition(module)
    if partitioned is not module:
        record("spmd-partitioner", partitioned, True, time.perf_counter() - start)
    optimized = optimize.optimize(partitioned, on_pass=record)
    optimize_seconds = time.perf_counter() - start

    dynamic = [a for i, a in enumerate(args) if i not in {s % max(len(args), 1) for s in static}]
    flat = tree_util.tree_leaves((tuple(dynamic), kwargs))
    concrete = not any(isinstance(x, stages.ShapeDtypeStruct) for x in flat)
    compiled = lowered.compile()
    seconds_per_call = None
    if concrete and time_kernels:
        seconds_per_call = _time_call(lambda: compiled(*dynamic, **kwargs))
    backend = get_backend()
    # Compiled afresh (with the cycle counters), so the time is the compiler's even when
    # the jitted function's own program was compiled before.
    start = time.perf_counter()
    built = backend.compile_profiled(optimized)
    if built is None:
        backend.compile(optimized)  # timed all the same: the backend's own preparation
    compile_seconds = time.perf_counter() - start
    program_module = built.module if built is not None else optimized
    optimized_hlo = hlo_printer.print_optimized_module(program_module)
    kernels, positions, edges, inputs, outputs = _kernels(program_module, built, optimized_hlo)
    notes: list[str] = []
    if built is None:
        notes.append(f"the {backend.name} backend interprets the IR: no machine code, and "
                     "kernel times are not measured")
    elif layout is not None:
        notes.append("an SPMD program (it is partitioned over a mesh) runs on several devices "
                     "at once: its kernels are not timed one by one")
    elif concrete and time_kernels:
        buffers = compiled._call.input_buffers(flat)
        _measure(built, buffers, positions, backend.cycle_counter_hz())
    return Explanation(
        name=name, backend=backend.name, jaxpr=traced.jaxpr, stablehlo=stablehlo,
        passes=passes, optimized_hlo=optimized_hlo,
        kernels=kernels, edges=edges, inputs=inputs, outputs=outputs,
        cost=cost.cost_analysis(program_module), lower_seconds=lower_seconds,
        optimize_seconds=optimize_seconds, compile_seconds=compile_seconds,
        seconds_per_call=seconds_per_call, notes=notes)


def _op_count(module: ir.Module) -> int:
    """The ops of the module's functions, a fusion counting as one (its fused ops inside)."""
    return sum(len(fn.body.ops) - 1 for fn in module.functions)


def _time_call(call: Callable[[], Any], budget: float = 0.3) -> float:
    """The median time of `call()`, from up to 50 runs within about `budget` seconds."""
    api.block_until_ready(call())
    samples: list[float] = []
    deadline = time.perf_counter() + budget
    while len(samples) < 5 or (len(samples) < 50 and time.perf_counter() < deadline):
        start = time.perf_counter()
        api.block_until_ready(call())
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


# ---------------------------------------------------------------------------------------------
# The kernels of the optimized module.

_KINDS = {"kLoop": "loop fusion", "kInput": "reduction fusion", "kOutput": "output fusion"}
_OPCODE_KINDS = {
    "stablehlo.dot_general": "dot (BLAS)", "stablehlo.convolution": "convolution",
    "stablehlo.reshape": "copy (a bitcast in XLA)", "stablehlo.while": "while loop",
    "stablehlo.case": "conditional", "stablehlo.custom_call": "host callback",
    "stablehlo.sort": "sort", "stablehlo.fft": "FFT (pocketfft)",
    "stablehlo.all_reduce": "collective",
    "stablehlo.all_gather": "collective", "stablehlo.reduce_scatter": "collective",
    "stablehlo.all_to_all": "collective", "stablehlo.collective_permute": "collective",
}


def _kind(op: ir.Op, native: bool | None, fallback: bool) -> str:
    """How `op` runs; `native` is None on a backend without machine code."""
    if fusion.is_fusion(op):
        kind = _KINDS.get(op.attributes.get("kind"), "fusion")
        if str(op.attributes.get("name", "")).startswith("wrapped_"):
            kind = "single op (" + kind + ")"
    else:
        kind = _OPCODE_KINDS.get(op.opcode, op.opcode.split(".")[-1])
    if fallback:
        kind += ", run by the reference backend"
    elif native is False and op.opcode not in ("stablehlo.reshape", "stablehlo.while",
                                               "stablehlo.case"):
        kind += ", inline"
    return kind


def _kernels(module: ir.Module, built: Any, optimized_hlo: str
             ) -> tuple[list[Kernel], dict[int, Kernel], list[tuple[str, str, str, int]],
                        list[tuple[str, str, int]], list[tuple[str, str, int]]]:
    """The kernels of `module`'s entry computation, each also by its op's position there
    (the profiled build counts cycles by position), and the buffers between them."""
    main = module.main
    names = hlo_printer.entry_op_names(module)
    functions = built.program.functions if built is not None else {}
    fallbacks = {id(fb.op) for fb in built.program.fallbacks} if built is not None else set()
    texts = _native_texts(built) if built is not None else ({}, {})
    hlo_lines = _hlo_lines(optimized_hlo)
    producer: dict[ir.Value, str] = {}
    inputs = []
    for i, arg in enumerate(main.args):
        producer[arg] = f"Arg_{i}"
        inputs.append((f"Arg_{i}", hlo_printer.shape_text(arg.type), _nbytes(arg.type)))
    kernels: list[Kernel] = []
    positions: dict[int, Kernel] = {}
    edges: list[tuple[str, str, str, int]] = []
    for position, op in enumerate(main.body.ops[:-1]):
        if op.opcode == "stablehlo.constant":
            continue
        name = names.get(op, op.opcode.split(".")[-1])
        operands = []
        for v in op.operands:
            source = producer.get(v)
            if source is None:
                continue  # a constant
            operands.append(source)
            edges.append((source, name, hlo_printer.shape_text(v.type), _nbytes(v.type)))
        for r in op.results:
            producer[r] = name
        op_cost = cost.op_cost(op, module).values
        fns = functions.get(op, [])
        kernel = Kernel(
            name=name, opcode=hlo_printer.hlo_opcode(op.opcode) if not fusion.is_fusion(op)
            else "fusion", kind=_kind(op, bool(fns) if built is not None else None,
                                      id(op) in fallbacks),
            shape=", ".join(hlo_printer.shape_text(t) for t in op.result_types),
            operands=operands, result_bytes=sum(_nbytes(t) for t in op.result_types),
            flops=op_cost.get("flops", 0.0), transcendentals=op_cost.get("transcendentals", 0.0),
            bytes=op_cost.get("bytes accessed", 0.0), functions=list(fns),
            llvm_ir="\n\n".join(texts[0].get(f, "") for f in fns).strip(),
            asm="\n\n".join(texts[1].get(f, "") for f in fns).strip(),
            hlo=hlo_lines.get(name, ""))
        kernels.append(kernel)
        positions[position] = kernel
    outputs = []
    for j, value in enumerate(main.body.terminator.operands):
        out = f"result[{j}]" if len(main.body.terminator.operands) > 1 else "result"
        outputs.append((out, hlo_printer.shape_text(value.type), _nbytes(value.type)))
        source = producer.get(value)
        if source is not None:
            edges.append((source, out, hlo_printer.shape_text(value.type), _nbytes(value.type)))
    return kernels, positions, edges, inputs, outputs


def _nbytes(t: Any) -> int:
    return int(getattr(t, "nbytes", 0))


def _hlo_lines(text: str) -> dict[str, str]:
    """Each entry instruction's line of optimized HLO, with its fused computation first."""
    computations: dict[str, str] = {}
    lines: dict[str, str] = {}
    for block in text.split("\n\n"):
        head = block.split(" ", 1)[0].lstrip("%")
        if block.startswith("ENTRY"):
            for line in block.splitlines()[1:-1]:
                statement = line.strip().removeprefix("ROOT ")
                name = statement.split(" = ", 1)[0].lstrip("%")
                called = statement.rsplit("calls=%", 1)
                fused = computations.get(called[1].split(",")[0]) if len(called) == 2 else None
                lines[name] = (fused + "\n\n" if fused else "") + statement
        elif block.strip():
            computations[head] = block.strip()
    return lines


def _native_texts(built: Any) -> tuple[dict[str, str], dict[str, str]]:
    """Each native function's optimized LLVM IR and assembly, by name."""
    import llvmlite.binding as llvm
    ir_texts = {fn.name: str(fn) for fn in llvm.parse_assembly(built.optimized_ir).functions
                if not fn.is_declaration}
    asm = built.as_text("asm")
    asm_texts: dict[str, str] = {}
    wanted = {f for fns in built.program.functions.values() for f in fns}
    lines = asm.splitlines()
    for i, line in enumerate(lines):
        if not line.endswith(":") or line.startswith(("\t", " ", ".")):
            continue
        label = line[:-1].strip('"')
        if label not in wanted:
            continue
        body = [line]
        for follow in lines[i + 1:]:
            if follow.startswith(".Lfunc_end") or follow.strip().startswith(".size"):
                break
            body.append(follow)
        asm_texts[label] = "\n".join(body)
    return ir_texts, asm_texts


def _measure(built: Any, buffers: Sequence[np.ndarray], positions: dict[int, Kernel],
             hz: float, budget: float = 0.3) -> None:
    """Runs the profiled program a few times; each kernel's time is its cycles per run
    (`hz`: cycles per second)."""
    built.execute(list(buffers))
    built.profile_counters[:] = 0
    runs = 0
    deadline = time.perf_counter() + budget
    while runs < 3 or (runs < 50 and time.perf_counter() < deadline):
        built.execute(list(buffers))
        runs += 1
    for position, kernel in positions.items():
        kernel.seconds = float(built.profile_counters[position]) / runs / hz


# ---------------------------------------------------------------------------------------------
# The text report.

def _seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def _bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def kernel_table(e: Explanation) -> list[list[str]]:
    """One row per kernel: name, kind, shape, flops, bytes, intensity, time."""
    rows = [["kernel", "kind", "result", "flops", "transcendentals", "bytes", "flops/byte",
             "time"]]
    for k in e.kernels:
        rows.append([k.name, k.kind, k.shape, f"{k.flops:,.0f}", f"{k.transcendentals:,.0f}",
                     _bytes(k.bytes), f"{k.intensity:.2f}", _seconds(k.seconds)])
    return rows


def report(e: Explanation, jaxpr_lines: int | None = None) -> str:
    """The text report of an explanation (all of it, or the jaxpr's first lines)."""
    jaxpr = str(e.jaxpr)
    if jaxpr_lines is not None and jaxpr.count("\n") >= jaxpr_lines:
        jaxpr = "\n".join(jaxpr.splitlines()[:jaxpr_lines]) + "\n  ..."
    out = [f"== {e.name}: every stage (backend: {e.backend}) ==", "", "-- jaxpr --", jaxpr, "",
           f"-- StableHLO: {e.stablehlo_op_count} ops --", e.stablehlo.rstrip(), "",
           "-- passes --"]
    for p in e.passes:
        change = f"{p.ops_before} -> {p.ops_after} ops" if p.changed else "no change"
        out.append(f"  {p.name:<24} {change:<22} {_seconds(p.seconds)}")
    out += ["", "-- optimized HLO --", e.optimized_hlo.rstrip(), "",
            f"-- kernels: {len(e.kernels)} ({len(e.fusions)} fusions) --"]
    rows = kernel_table(e)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    flops, moved = e.cost.get("flops", 0.0), e.cost.get("bytes accessed", 0.0)
    out += ["", f"-- cost: {flops:,.0f} flops, {e.cost.get('transcendentals', 0):,.0f} "
            f"transcendentals, {_bytes(moved)} moved, "
            f"{flops / moved if moved else 0:.2f} flops/byte --",
            f"-- times: trace+lower {_seconds(e.lower_seconds)}, passes "
            f"{_seconds(e.optimize_seconds)}, compile {_seconds(e.compile_seconds)}, "
            f"one call {_seconds(e.seconds_per_call)} --"]
    out += [f"note: {n}" for n in e.notes]
    return "\n".join(out) + "\n"
