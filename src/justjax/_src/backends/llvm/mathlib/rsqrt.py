"""rsqrt as XLA CPU computes it: the x86 estimate instruction refined by two Newton steps.

On x86 hosts with AVX (float32) or AVX-512F and VL (float64), XLA computes 1/sqrt(x) from the
hardware estimate y0 (`rsqrtss`/`rsqrtps`, 12 bits, its table the CPU's own; `vrsqrt14pd`,
exactly specified) refined twice by y <- y + (-y/2) (x y y - 1), each step two FMAs,
keeping y0 itself where x is not a positive normal number or nan (0, subnormals, inf,
negatives). Elsewhere it computes 1 / sqrt(x), as here.

An x86 intrinsic is no instruction the loop vectorizer can widen: the computation is a
function `justjax_rsqrt_<dtype>_xla`, not inlined, whose `"vector-function-abi-variant"`
attribute names vector versions of it (2 to 16 lanes, as `rare.py`'s rare paths), so that a
loop calling it is vectorized to calls of the vector versions. On a given CPU `rsqrtps`
gives `rsqrtss`'s bits lane by lane (checked on all 2**32 inputs on the recording machine),
and 16 lanes are two 8-lane halves (XLA's float32 loops use 8 lanes or fewer).
"""
from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite import ir

from justjax._src.backends.llvm.mathlib import rare
from justjax._src.backends.llvm.mathlib.scalar import _Emitter, _V
from justjax._src.backends.llvm.runtime import host

__all__ = ["rsqrt"]

# Whether the estimate instruction is used (None: where the host has it). Tests set it.
ESTIMATE: bool | None = None

_I32 = ir.IntType(32)
_F32_MIN_NORMAL = 2.0**-126
_F64_MIN_NORMAL = 2.0**-1022


@functools.lru_cache(maxsize=1)
def _host_features() -> frozenset[str]:
    host.host_target_machine()
    return frozenset(llvm.get_host_cpu_features().flatten().split(","))


def uses_estimate(dtype: str) -> bool:
    """Whether rsqrt of `dtype` ("f32"/"f64") is the refined hardware estimate (see `ESTIMATE`)."""
    if ESTIMATE is not None:
        return ESTIMATE
    needed = {"+avx"} if dtype == "f32" else {"+avx512f", "+avx512vl"}
    return needed <= _host_features()


def rsqrt(em: _Emitter, x: _V) -> _V:
    """1/sqrt(x): XLA's refined hardware estimate where the host has it, else 1 / sqrt(x)."""
    if not uses_estimate(em.dtype):
        return 1.0 / em.call("llvm.sqrt", x)
    return _V(em, em.b.call(_scalar_function(em.module, em.dtype), [x.v]))


def _fty(dtype: str) -> ir.Type:
    return ir.FloatType() if dtype == "f32" else ir.DoubleType()


def _splat(ty: ir.Type, value: float) -> ir.Constant:
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [value] * ty.count)
    return ir.Constant(ty, value)


def _declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name=name)
    return fn


def _suffix(ty: ir.Type, dtype: str) -> str:
    return f"v{ty.count}{dtype}" if isinstance(ty, ir.VectorType) else dtype


def _fma(b: ir.IRBuilder, dtype: str, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    ty = x.type
    fn = _declare(b.module, f"llvm.fma.{_suffix(ty, dtype)}", ty, [ty, ty, ty])
    return b.call(fn, [x, y, z])


def _widen(b: ir.IRBuilder, x: ir.Value, n: int) -> ir.Value:
    """A vector of n lanes from a scalar or a shorter vector (extra lanes repeat lane 0)."""
    ty = x.type
    if not isinstance(ty, ir.VectorType):
        undef = ir.Constant(ir.VectorType(ty, n), ir.Undefined)
        return b.insert_element(undef, x, ir.Constant(_I32, 0))
    mask = ir.Constant(ir.VectorType(_I32, n), [i if i < ty.count else 0 for i in range(n)])
    return b.shuffle_vector(x, x, mask)


def _narrow(b: ir.IRBuilder, v: ir.Value, like: ir.Type) -> ir.Value:
    """The first lanes of `v` as `like` (a scalar or a shorter vector)."""
    if not isinstance(like, ir.VectorType):
        return b.extract_element(v, ir.Constant(_I32, 0))
    mask = ir.Constant(ir.VectorType(_I32, like.count), list(range(like.count)))
    return b.shuffle_vector(v, v, mask)


def _estimate32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """rsqrtss/rsqrtps on every lane of x (a float or a vector of 1 to 16 floats)."""
    lanes = x.type.count if isinstance(x.type, ir.VectorType) else 1
    if lanes == 16:
        halves = [b.shuffle_vector(x, x, ir.Constant(ir.VectorType(_I32, 8), list(range(h, h + 8))))
                  for h in (0, 8)]
        lo, hi = (_estimate32(b, h) for h in halves)
        return b.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(_I32, 16), list(range(16))))
    if lanes == 8:
        v8 = ir.VectorType(ir.FloatType(), 8)
        return b.call(_declare(b.module, "llvm.x86.avx.rsqrt.ps.256", v8, [v8]), [x])
    v4 = ir.VectorType(ir.FloatType(), 4)
    name = "llvm.x86.sse.rsqrt.ps" if lanes > 1 else "llvm.x86.sse.rsqrt.ss"
    y = b.call(_declare(b.module, name, v4, [v4]), [x if lanes == 4 else _widen(b, x, 4)])
    return y if lanes == 4 else _narrow(b, y, x.type)


def _estimate64(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """vrsqrt14pd on every lane of x (a double or a vector of 1 to 8 doubles)."""
    lanes = x.type.count if isinstance(x.type, ir.VectorType) else 1
    width = max(lanes, 2)
    vty = ir.VectorType(ir.DoubleType(), width)
    fn = _declare(b.module, f"llvm.x86.avx512.rsqrt14.pd.{64 * width}", vty,
                  [vty, vty, ir.IntType(8)])
    v = x if lanes == width else _widen(b, x, width)
    y = b.call(fn, [v, ir.Constant(vty, [0.0] * width), ir.Constant(ir.IntType(8), -1)])
    return y if lanes == width else _narrow(b, y, x.type)


def _body(b: ir.IRBuilder, x: ir.Value, dtype: str) -> ir.Value:
    """XLA's rsqrt of x (a scalar or a vector): the estimate, two Newton steps, the select."""
    ty = x.type
    y0 = _estimate32(b, x) if dtype == "f32" else _estimate64(b, x)
    y = y0
    for _ in range(2):
        h = _fma(b, dtype, b.fmul(x, y), y, _splat(ty, -1.0))
        y = _fma(b, dtype, b.fmul(y, _splat(ty, -0.5)), h, y)
    tiny = _F32_MIN_NORMAL if dtype == "f32" else _F64_MIN_NORMAL
    # Not a positive normal number (nor nan): the estimate itself (0, +-inf, nan as IEEE says).
    raw = b.or_(b.fcmp_ordered("<", x, _splat(ty, tiny)),
                b.fcmp_ordered("==", x, _splat(ty, float("inf"))))
    return b.select(raw, y0, y)


def _define(module: ir.Module, name: str, ty: ir.Type, dtype: str) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(ty, [ty]), name=name)
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(_body(b, fn.args[0], dtype))
    return fn


def _scalar_function(module: ir.Module, dtype: str) -> ir.Function:
    """Defines (once per module) `justjax_rsqrt_<dtype>_xla` and its vector versions."""
    name = f"justjax_rsqrt_{dtype}_xla"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fty = _fty(dtype)
    vectors = [_define(module, f"{name}_v{n}", ir.VectorType(fty, n), dtype)
               for n in rare.LANES[dtype]]
    fn = ir.Function(module, ir.FunctionType(fty, [fty]), name=name)
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    fn.attributes.add("readnone")
    variants = ",".join(f"_ZGV_LLVM_N{n}v_{name}({name}_v{n})" for n in rare.LANES[dtype])
    # llvmlite knows no string attributes: the set prints its items as they are.
    set.add(fn.attributes, f'"vector-function-abi-variant"="{variants}"')
    set.add(fn.attributes, "willreturn")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    rare._keep(b, vectors)
    b.ret(_body(b, fn.args[0], dtype))
    return fn
