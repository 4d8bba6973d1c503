"""A small llvmlite JIT harness: compile a module for the host CPU and map a math function over arrays.

It exists to test and measure the math library (`scalar`): the module holds one loop
`void loop(ptr in, ptr out, i64 n)` calling the scalar math function, which is `alwaysinline` so that
O3 inlines it and the loop vectorizer turns the loop into SIMD code.
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Callable

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.mathlib import scalar
from justjax._src.backends.llvm.runtime import host

_NP_DTYPES = {"f32": np.float32, "f64": np.float64}


def _loop_module(fn_name: str, dtype: str, arity: int) -> ir.Module:
    """Builds a module with the math function and `loop(in..., out, n)` applying it elementwise."""
    module = ir.Module(name=f"mathlib_{fn_name}_{dtype}")
    module.triple = llvm.get_process_triple()
    module.data_layout = str(host.host_target_machine().target_data)
    math_fn = scalar.define(module, fn_name, dtype)
    fty = math_fn.function_type.return_type
    ptr = fty.as_pointer()
    loop_fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (arity + 1) + [ir.IntType(64)]),
                          name="loop")
    for arg in loop_fn.args[:-1]:
        # Buffers never overlap: noalias lets the vectorizer skip runtime overlap checks.
        arg.add_attribute("noalias")
    entry = loop_fn.append_basic_block("entry")
    body = loop_fn.append_basic_block("body")
    done = loop_fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    n = loop_fn.args[-1]
    zero = ir.Constant(ir.IntType(64), 0)
    b.cbranch(b.icmp_signed(">", n, zero), body, done)
    b.position_at_end(body)
    i = b.phi(ir.IntType(64))
    i.add_incoming(zero, entry)
    ins = [b.load(b.gep(p, [i], inbounds=True)) for p in loop_fn.args[:arity]]
    b.store(b.call(math_fn, ins), b.gep(loop_fn.args[arity], [i], inbounds=True))
    nxt = b.add(i, ir.Constant(ir.IntType(64), 1), flags=["nsw", "nuw"])
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    return module


@dataclass
class CompiledMath:
    """A compiled elementwise math kernel.

    Attributes:
      name: math function name (one of `scalar.names()`).
      dtype: "f32" or "f64".
      optimized_ir: the LLVM IR text after O3 (used to check there are no libm calls).
      assembly: the host assembly of the module.
    """
    name: str
    dtype: str
    optimized_ir: str
    assembly: str
    _engine: llvm.ExecutionEngine
    _cfunc: Callable[..., None]

    def __call__(self, *xs: np.ndarray) -> np.ndarray:
        """Applies the function elementwise.

        Args:
          *xs: arrays (converted to the kernel dtype, broadcast together).

        Returns:
          A new array of the kernel dtype.
        """
        np_dtype = _NP_DTYPES[self.dtype]
        arrs = [np.ascontiguousarray(a, dtype=np_dtype) for a in np.broadcast_arrays(*xs)]
        out = np.empty_like(arrs[0]) if arrs else np.empty((), np_dtype)
        ptrs = [a.ctypes.data_as(ctypes.c_void_p) for a in arrs]
        self._cfunc(*ptrs, out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(out.size))
        return out


@functools.lru_cache(maxsize=None)
def compile_elementwise(name: str, dtype: str) -> CompiledMath:
    """Compiles `mathlib` function `name` for `dtype` into an elementwise loop over arrays.

    Args:
      name: one of `scalar.names()`.
      dtype: "f32" or "f64".

    Returns:
      A `CompiledMath` callable on NumPy arrays.
    """
    arity = scalar.arity(name)
    mod = llvm.parse_assembly(str(_loop_module(name, dtype, arity)))
    mod.verify()
    host.optimize(mod)
    assembly = host.host_target_machine().emit_assembly(mod)
    engine = llvm.create_mcjit_compiler(mod, host.host_target_machine())
    engine.finalize_object()
    addr = engine.get_function_address("loop")
    proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (arity + 1)), ctypes.c_int64)
    return CompiledMath(name, dtype, str(mod), assembly, engine, proto(addr))
