"""Rare paths for the math library: an expensive method taken only by vectors that need it.

A math function is inlined into a loop that LLVM's loop vectorizer turns into SIMD code, where a
branch on one element is not possible: both sides of every condition are computed for all lanes.
For a method needed by few arguments (the Payne-Hanek reduction of huge trigonometric arguments),
`rare_path` emits a call `justjax_<key>_<dtype>_rare(x, fast)` instead, whose
`"vector-function-abi-variant"` attribute names vector versions of it (`..._rare_v<N>` for
N = 2 .. 16 lanes): the vectorizer widens the call to one of them. A vector version returns
`fast` at once when every lane has |x| < bound, and otherwise computes the slow method for its
lanes with a loop (which LLVM vectorizes too) and selects per lane. The scalar function branches
on its one argument.

The vector versions are kept alive until the vectorizer calls them by an empty inline asm that
takes their addresses (`_keep`): a program's functions are internal, and the optimizer would
otherwise delete them (no caller before vectorization) or change their signatures.
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

from justjax._src.backends.llvm.mathlib.scalar import _Emitter, _V

__all__ = ["rare_path", "LANES"]

# Vector widths that get a vector version (float32 up to 16 lanes of AVX-512, float64 up to 8).
LANES = {"f32": (2, 4, 8, 16), "f64": (2, 4, 8)}

SlowBody = Callable[[_Emitter, _V], _V]


def rare_path(em: _Emitter, x: _V, fast: _V, bound: float, key: str, slow: SlowBody) -> _V:
    """`fast` where |x| < bound, else `slow(x)` (nan and infinities included), with `slow` run
    only for vectors holding such a lane.

    Args:
      em: the emitter of the calling math function.
      x: its argument.
      fast: the result of the common method (any value where |x| >= bound, even poison).
      bound: the magnitude from which `slow` is needed.
      key: a name for the functions (unique per slow method, e.g. "sin").
      slow: emits the slow method's scalar code at an emitter's position (select-only code).

    Returns:
      The result of the call.
    """
    fn = _scalar_function(em.module, em.dtype, key, bound, slow)
    return _V(em, em.b.call(fn, [x.v, fast.v]))


def _fty(dtype: str) -> ir.Type:
    return ir.FloatType() if dtype == "f32" else ir.DoubleType()


def _fabs(module: ir.Module, ty: ir.Type, dtype: str) -> ir.Function:
    suffix = dtype if not isinstance(ty, ir.VectorType) else f"v{ty.count}{dtype}"
    name = f"llvm.fabs.{suffix}"
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ty, [ty]), name=name)
    return fn


def _splat(ty: ir.Type, value: float) -> ir.Constant:
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [value] * ty.count)
    return ir.Constant(ty, value)


def _scalar_function(module: ir.Module, dtype: str, key: str, bound: float, slow: SlowBody) -> ir.Function:
    """Defines (once per module) the scalar rare-path function and its vector versions."""
    name = f"justjax_{key}_{dtype}_rare"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fty = _fty(dtype)
    lanes = _lanes_function(module, dtype, key, slow)
    vectors = [_vector_function(module, dtype, f"{name}_v{n}", n, bound, lanes) for n in LANES[dtype]]
    fn = ir.Function(module, ir.FunctionType(fty, [fty, fty]), name=name)
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    fn.attributes.add("readnone")
    variants = ",".join(f"_ZGV_LLVM_N{n}vv_{name}({name}_v{n})" for n in LANES[dtype])
    # llvmlite knows no string attributes: the set prints its items as they are.
    set.add(fn.attributes, f'"vector-function-abi-variant"="{variants}"')
    set.add(fn.attributes, "willreturn")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    x, fast = fn.args
    small = b.fcmp_ordered("<", b.call(_fabs(module, fty, dtype), [x]), _splat(fty, bound))
    with b.if_then(b.not_(small), likely=False):
        _keep(b, vectors)
        b.ret(_call_lanes(b, lanes, x, fty, 1))
    b.ret(fast)
    return fn


def _keep(b: ir.IRBuilder, functions: list[ir.Function]) -> None:
    """Keeps `functions` in the module, unchanged, until the vectorizer calls them.

    Nothing calls a vector version before vectorization, and a program's functions are made
    internal (one execution engine holds many programs): the optimizer would delete them, or
    change their signatures. Their addresses as operands of an empty `asm sideeffect` (no code)
    count as uses it cannot see through. Emitted on the scalar rare path, which stays in the
    module as long as a loop can call the scalar function.
    """
    for fn in functions:
        asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [fn.type]), "", "r", side_effect=True)
        b.call(asm, [fn])


def _call_lanes(b: ir.IRBuilder, lanes: ir.Function, x: ir.Value, ty: ir.Type, n: int) -> ir.Value:
    """Runs the slow method over the n lanes of `x` (a scalar for n = 1) through stack buffers."""
    fty = lanes.args[0].type.pointee
    # Static allocas (in the entry block) need no stack realignment at run time.
    block = b.block
    b.position_at_start(block.function.entry_basic_block)
    src = b.alloca(ty)
    dst = b.alloca(ty)
    b.position_at_end(block)
    b.store(x, src)
    b.call(lanes, [b.bitcast(src, fty.as_pointer()), b.bitcast(dst, fty.as_pointer()),
                   ir.Constant(ir.IntType(64), n)])
    return b.load(dst)


def _vector_function(module: ir.Module, dtype: str, name: str, n: int, bound: float,
                     lanes: ir.Function) -> ir.Function:
    """`<n x fty> name(<n x fty> x, <n x fty> fast)`: fast unless a lane has |x| >= bound."""
    vty = ir.VectorType(_fty(dtype), n)
    fn = ir.Function(module, ir.FunctionType(vty, [vty, vty]), name=name)
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    x, fast = fn.args
    small = b.fcmp_ordered("<", b.call(_fabs(module, vty, dtype), [x]), _splat(vty, bound))
    all_small = b.icmp_unsigned("==", b.bitcast(small, ir.IntType(n)), ir.Constant(ir.IntType(n), -1))
    with b.if_then(b.not_(all_small), likely=False):
        b.ret(b.select(small, fast, _call_lanes(b, lanes, x, vty, n)))
    b.ret(fast)
    return fn


def _lanes_function(module: ir.Module, dtype: str, key: str, slow: SlowBody) -> ir.Function:
    """`void ..._lanes(fty* in, fty* out, i64 n)`: out[i] = slow(in[i]), a loop LLVM vectorizes."""
    fty = _fty(dtype)
    ptr = fty.as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, ir.IntType(64)]),
                     name=f"justjax_{key}_{dtype}_lanes")
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    # Vectorized all the same, without interleaving and epilogues: less code to compile.
    fn.attributes.add("optsize")
    for arg in fn.args[:2]:
        arg.add_attribute("noalias")
    entry = fn.append_basic_block("entry")
    body = fn.append_basic_block("body")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    i64 = ir.IntType(64)
    b.branch(body)
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    em = _Emitter(b, dtype)
    y = slow(em, _V(em, b.load(b.gep(fn.args[0], [i], inbounds=True))))
    b.store(y.v, b.gep(fn.args[1], [i], inbounds=True))
    nxt = b.add(i, ir.Constant(i64, 1), flags=["nsw", "nuw"])
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, fn.args[2]), body, done)
    b.position_at_end(done)
    b.ret_void()
    return fn
