"""Math functions linked by symbol, for programs compiled without optimization.

A program compiled at O3 defines the `mathlib` functions it uses (`alwaysinline`), so that
its loops inline and vectorize them. A small program is compiled without LLVM's optimizer
(`executable.FAST_COMPILE_ELEMENTS`): defining those functions in it would cost most of its
compile time (building their IR in Python, then generating their code) and buys nothing.
It declares them instead, and each is compiled once per process at O3 as an external
function `justjax_linked_<name>_<dtype>` whose address the JIT resolves by name.
"""
from __future__ import annotations

import threading

import llvmlite.binding as llvm
from llvmlite import ir

from justjax._src.backends.llvm.mathlib import scalar
from justjax._src.backends.llvm.runtime import host

__all__ = ["function", "LINK_ATTRIBUTE"]

# Set on an llvmlite `ir.Module` (`setattr(module, LINK_ATTRIBUTE, True)`) to link math.
LINK_ATTRIBUTE = "justjax_link_math"

_engines: dict[str, llvm.ExecutionEngine] = {}
_lock = threading.Lock()


def function(module: ir.Module, name: str, dtype: str) -> ir.Function:
    """The math function `name` for `dtype` ("f32"/"f64") to call from `module`: defined in
    it (`scalar.define`), or declared and linked when the module links math."""
    if not getattr(module, LINK_ATTRIBUTE, False):
        return scalar.define(module, name, dtype)
    symbol = f"justjax_linked_{name}_{dtype}"
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    _compile(symbol, name, dtype)
    fty: ir.Type = ir.FloatType() if dtype == "f32" else ir.DoubleType()
    return ir.Function(module, ir.FunctionType(fty, [fty] * scalar.arity(name)), name=symbol)


def _compile(symbol: str, name: str, dtype: str) -> None:
    """Compiles the external function `symbol` once per process and registers its address."""
    with _lock:
        if symbol in _engines:
            return
        module = ir.Module(name=symbol)
        module.triple = llvm.get_process_triple()
        module.data_layout = str(host.host_target_machine().target_data)
        inner = scalar.define(module, name, dtype)
        outer = ir.Function(module, inner.function_type, name=symbol)
        builder = ir.IRBuilder(outer.append_basic_block("entry"))
        builder.ret(builder.call(inner, list(outer.args)))
        parsed = llvm.parse_assembly(str(module))
        host.optimize(parsed)
        engine = llvm.create_mcjit_compiler(parsed, host.new_target_machine(3))
        engine.finalize_object()
        llvm.add_symbol(symbol, engine.get_function_address(symbol))
        _engines[symbol] = engine
