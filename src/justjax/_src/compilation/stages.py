"""Ahead-of-time stages of a jitted function, as JAX's `jax.stages`:

    jit(f).trace(*args)   -> Traced    (.jaxpr, .out_info, .lower())
    jit(f).lower(*args)   -> Lowered   (.as_text(), .compiler_ir(), .cost_analysis(), .compile())
    lowered.compile()     -> Compiled  (callable; .as_text(), .cost_analysis(), .memory_analysis())

The stages lower and compile through `compiler` (the compile driver: `lower_jaxpr`,
`compile_jaxpr`); a `Compiled` runs through its `execution.CompiledCall`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.compilation import compiler
from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.shape_poly import canonicalize_shape
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.compilation.execution import CompiledCall
from justjax._src.hlo.passes import cost, optimize
from justjax._src.hlo import hlo_printer, ir, stablehlo_printer


class ShapeDtypeStruct:
    """A shape, dtype and weak type standing in for an array (`jax.ShapeDtypeStruct`)."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, sharding: Any = None,
                 weak_type: bool = False) -> None:
        self.shape = canonicalize_shape(shape)
        self.dtype = dtype if dtypes.is_extended(dtype) else np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # symbolic for a symbolic shape

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return (f"ShapeDtypeStruct(shape={self.shape}, dtype={dtypes.dtype_name(self.dtype)}"
                f"{weak})")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


# XLA compiler options a `Lowered.compile` takes (`jax.stages.CompilerOptions`).
CompilerOptions = dict[str, str | bool]


@dataclass(frozen=True)
class ArgInfo:
    """One argument of a lowered function: its abstract value and whether it is donated
    (`jax.stages.ArgInfo`)."""

    _aval: Any
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        return self._aval.dtype


def _shape_dtype_aval(x: ShapeDtypeStruct) -> ShapedArray:
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)


core.pytype_aval_mappings[ShapeDtypeStruct] = _shape_dtype_aval


# ---------------------------------------------------------------------------------------------
# Cost analysis: `Lowered` reports the lowered module's, `Compiled` the optimized module's
# (`optimize.analyze`), both by the one cost model (`passes/cost.py`).

def cost_analysis(module: ir.Module) -> dict[str, float]:
    """`flops`, `transcendentals`, `bytes accessed` and the per-operand byte keys of
    `module` as given, as XLA's HloCostAnalysis counts them (`passes/cost.py`); properties
    equal to zero are left out, as in JAX."""
    return cost.cost_analysis(module)


@dataclass(frozen=True)
class CompiledMemoryStats:
    """Sizes in bytes of the executable's arguments, outputs and temporaries."""

    generated_code_size_in_bytes: int
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0


# ---------------------------------------------------------------------------------------------
# The stages.

def _arg_mismatches(expected: Sequence[ShapedArray], got: Sequence[ShapedArray],
                    names: Sequence[str]) -> list[str]:
    lines = []
    for i, (want, have) in enumerate(zip(expected, got, strict=True)):
        if want.shape != have.shape or want.dtype != have.dtype:
            name = names[i] if i < len(names) else f"args[{i}]"
            lines.append(f"Argument '{name}' compiled with "
                         f"{want.str_short(short_dtypes=False)} and called with "
                         f"{have.str_short(short_dtypes=False)}")
    return lines


@dataclass
class Signature:
    """What a stage knows about the call it was made for."""

    name: str
    in_tree: tree_util.PyTreeDef          # of (dynamic args, dynamic kwargs)
    out_tree: tree_util.PyTreeDef
    in_avals: tuple[ShapedArray, ...]
    arg_names: tuple[str, ...]
    donated_invars: tuple[bool, ...]
    keep_unused: bool
    out_paths: tuple[str, ...]
    # Per flat input, the sharding over a mesh of several devices it comes with (None: on
    # one device); None when no input is so sharded. The program is partitioned by them.
    in_shardings: tuple[Any, ...] | None = None
    # Per flat result, the sharding `out_shardings` gives it (None: unspecified); None when
    # none is given.
    out_shardings: tuple[Any, ...] | None = None


class _Stage:
    """What every stage shares: the signature of the call it was made for."""

    def __init__(self, signature: Signature) -> None:
        self._signature = signature

    @property
    def in_tree(self) -> tree_util.PyTreeDef:
        return self._signature.in_tree

    @property
    def out_tree(self) -> tree_util.PyTreeDef:
        return self._signature.out_tree


class Compiled(_Stage):
    """A compiled jitted function for one input signature (`jax.stages.Compiled`)."""

    def __init__(self, signature: Signature, call: CompiledCall) -> None:
        super().__init__(signature)
        self._call = call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Runs on the dynamic arguments (static ones were fixed when lowering)."""
        sig = self._signature
        flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != sig.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with. Compiled with {sig.in_tree}, called with {in_tree}.")
        avals = [core.get_aval(x) for x in flat]
        mismatches = _arg_mismatches(sig.in_avals, avals, sig.arg_names)
        if mismatches:
            raise TypeError(
                "Argument types differ from the types for which this computation was compiled. "
                "Perhaps you are calling the compiled executable with a different enable_x64 "
                "mode than when it was AOT compiled? The mismatches are:\n"
                + "\n".join(mismatches))
        outs = self._call.call_flat(flat)
        return tree_util.tree_unflatten(sig.out_tree, outs)

    def as_text(self, dialect: str | None = None) -> str:
        """The compiled program as text.

        Args:
          dialect: None or "hlo": the optimized program as XLA HLO text (fusions, schedule,
            layouts); "llvm": the LLVM IR of its native entry point after LLVM's optimization;
            "asm": the host assembly of it (both from the llvm backend).
        """
        if dialect in (None, "hlo"):
            return hlo_printer.print_optimized_module(self._call.optimized)
        if dialect in ("llvm", "asm"):
            native = self._call.executable.as_text(dialect)
            if native is None:
                raise ValueError(f"as_text(dialect={dialect!r}) needs the llvm backend; this "
                                 f"program was compiled by the {self._call.backend} backend")
            return native
        raise ValueError(f"Unknown dialect {dialect!r}; expected 'hlo', 'llvm' or 'asm'")

    def cost_analysis(self) -> dict[str, float]:
        """`flops`, `transcendentals` and `bytes accessed` of the optimized module (a fusion
        reads each operand and writes each output once)."""
        return optimize.analyze(self._call.optimized).cost

    def memory_analysis(self) -> CompiledMemoryStats:
        """Argument, output, alias and temp sizes from the optimized module's buffer
        assignment."""
        return CompiledMemoryStats(**optimize.analyze(self._call.optimized).memory)


class HloComputation:
    """A lowered module in XLA's HLO form (`Lowered.compiler_ir(dialect="hlo")`)."""

    def __init__(self, module: ir.Module) -> None:
        self._module = module

    def name(self) -> str:
        return self._module.name

    def as_hlo_text(self) -> str:
        """The module as XLA HLO text (before optimization)."""
        return hlo_printer.print_module(self._module)

    def __repr__(self) -> str:
        return f"<HloComputation {self._module.name}>"


class Lowered(_Stage):
    """A jitted function lowered to StableHLO for one input signature."""

    def __init__(self, signature: Signature, closed: ClosedJaxpr) -> None:
        super().__init__(signature)
        self._closed = closed
        self._info = compiler.lower_jaxpr(closed, signature.name, signature.donated_invars,
                                          signature.keep_unused, signature.out_paths,
                                          signature.in_shardings, signature.out_shardings)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module as StableHLO MLIR text (default) or XLA HLO text (`dialect="hlo"`).
        `debug_info` (source locations in JAX) is accepted; the IR keeps no locations."""
        if dialect in (None, "stablehlo", "mhlo"):
            return stablehlo_printer.print_module(self._info.module)
        if dialect == "hlo":
            return hlo_printer.print_module(self._info.module)
        raise ValueError(f"Unknown dialect {dialect!r}; expected 'stablehlo' or 'hlo'")

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The module itself (`ir.Module`, printing as StableHLO), or with `dialect="hlo"` an
        `HloComputation` (`as_hlo_text()`, as JAX's XlaComputation)."""
        if dialect in (None, "stablehlo", "mhlo"):
            return self._info.module
        if dialect == "hlo":
            return HloComputation(self._info.module)
        raise ValueError(f"Unknown dialect {dialect!r}; expected 'stablehlo' or 'hlo'")

    def cost_analysis(self) -> dict[str, float]:
        return cost_analysis(self._info.module)

    def compile(self, compiler_options: dict[str, Any] | None = None) -> Compiled:
        """Compiles the module. `compiler_options` are XLA's (`xla_*` flags): justjax's
        compiler takes none of them, and any other name is JAX's JaxRuntimeError."""
        for option in compiler_options or {}:
            if not str(option).startswith("xla_"):
                raise errors.JaxRuntimeError(
                    f"INVALID_ARGUMENT: No such compile option: '{option}'")
        sig = self._signature
        call = compiler.compile_jaxpr(self._closed, sig.name, sig.donated_invars,
                                      sig.keep_unused, True, sig.in_shardings,
                                      sig.out_shardings)
        return Compiled(sig, call)


class Traced(_Stage):
    """A jitted function traced for one input signature: its jaxpr and output types."""

    def __init__(self, signature: Signature, closed: ClosedJaxpr) -> None:
        super().__init__(signature)
        self.jaxpr = closed

    @property
    def out_info(self) -> Any:
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                  for a in self.jaxpr.out_avals]
        return tree_util.tree_unflatten(self._signature.out_tree, shapes)

    @property
    def in_avals(self) -> Any:
        return tree_util.tree_unflatten(self._signature.in_tree, self._signature.in_avals)

    def lower(self) -> Lowered:
        return Lowered(self._signature, self.jaxpr)
