"""The floating-point environment native code runs in: denormals flushed, as on XLA CPU.

XLA's CPU runtime runs compiled code with the x86 MXCSR register's flush-to-zero (FTZ: a
subnormal result becomes +-0) and denormals-are-zero (DAZ: a subnormal operand reads as +-0)
bits set, so real JAX on CPU computes `x > 0` as False and `log(x)` as -inf for a subnormal
float32 x, eagerly and under jit alike. justjax's native code does the same: every entry point
the runtime calls (a program, a parallel task, an eager elementwise kernel) is a wrapper that
saves the caller's MXCSR, sets FTZ and DAZ, runs the body and restores it. Calls out to Python
from native code (fallback kernels, host callbacks) run in the flushed mode too, as JAX's host
callbacks do (`pure_callback(lambda v: v * 1.0 ...)` flushes a subnormal v in real JAX);
Python code outside them never sees it. Hosts other than x86-64 keep IEEE denormals (their
modes live in other registers; JAX's flushing there is not reproduced). `emitter.compile_fusion`,
the emitter's test harness, compiles a fusion without the wrapper: element generators are
checked against the reference backend's IEEE arithmetic.
"""
from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite import ir

from justjax._src.backends.llvm.codegen import stack

__all__ = ["flushes_denormals", "flush_denormals", "restore", "wrap_entry"]

# MXCSR bit 15: flush to zero; bit 6: denormals are zero.
_FTZ_DAZ = (1 << 15) | (1 << 6)
_I32 = ir.IntType(32)
_I8P = ir.IntType(8).as_pointer()


@functools.cache
def flushes_denormals() -> bool:
    """Whether native code on this host runs with denormals flushed (x86-64 only)."""
    return llvm.get_process_triple().split("-")[0] in ("x86_64", "amd64")


def _intrinsic(module: ir.Module, name: str) -> ir.Function:
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(ir.VoidType(), [_I8P]), name=name)


def _slot(b: ir.IRBuilder) -> ir.Value:
    return stack.entry_alloca(b, _I32)


def flush_denormals(b: ir.IRBuilder) -> ir.Value | None:
    """Saves MXCSR and sets FTZ and DAZ; returns the slot holding the saved value, for
    `restore` (None on hosts where native code keeps IEEE denormals)."""
    if not flushes_denormals():
        return None
    module = b.module
    saved = _slot(b)
    b.call(_intrinsic(module, "llvm.x86.sse.stmxcsr"), [b.bitcast(saved, _I8P)])
    flushed = _slot(b)
    b.store(b.or_(b.load(saved), ir.Constant(_I32, _FTZ_DAZ)), flushed)
    b.call(_intrinsic(module, "llvm.x86.sse.ldmxcsr"), [b.bitcast(flushed, _I8P)])
    return saved


def restore(b: ir.IRBuilder, saved: ir.Value | None) -> None:
    """Puts back the MXCSR value `flush_denormals` saved."""
    if saved is not None:
        b.call(_intrinsic(b.module, "llvm.x86.sse.ldmxcsr"), [b.bitcast(saved, _I8P)])


def wrap_entry(body: ir.Function, name: str) -> ir.Function:
    """A function `name` with `body`'s signature that runs `body` with denormals flushed;
    `body` becomes internal. The wrapper is what the runtime calls."""
    wrapper = ir.Function(body.module, body.function_type, name=name)
    body.linkage = "internal"
    b = ir.IRBuilder(wrapper.append_basic_block("entry"))
    saved = flush_denormals(b)
    result = b.call(body, list(wrapper.args))
    restore(b, saved)
    if isinstance(body.function_type.return_type, ir.VoidType):
        b.ret_void()
    else:
        b.ret(result)
    return wrapper

