"""Math functions linked by symbol: compiled once (per machine), not in every program.

Defining the `mathlib` functions in every program that calls them (`alwaysinline`) costs
most of its compile time: LLVM optimizes and generates code for every inlined copy (the
seed chain's gradient inlines 48, three quarters of a second of O3). A program that links
math (`LINK_ATTRIBUTE`) declares each function it calls instead,

    float  justjax_linked_<name>_<dtype>(float ...)            the scalar function
    <N x float> justjax_linked_<name>_<dtype>_v<N>(<N x float> ...)   N lanes (`rare.LANES`)

the scalar one naming the vector ones in its `"vector-function-abi-variant"` attribute, so
LLVM's loop vectorizer widens a call in a vectorized loop to the vector version of its width
(`@llvm.compiler.used` keeps the declarations alive until then: `finish`). A program so
compiled runs as fast as one with the functions inlined.

Each function and its vector versions are one module, compiled at O3: the vector version of
N lanes is a loop over its lanes calling the scalar function (inlined), vectorized at width N
(loop metadata). Without fast-math flags LLVM changes no rounding, so every lane computes
exactly what the scalar function computes, and what the function inlined in a program
computes: linked or not, vectorized or not, a program's results have the same bits.

The object code of each module is kept in `justjax_runtime_cache_dir` (one file per
function and dtype, keyed by the native backend's and the numerics' sources, the host CPU and
the LLVM version), as
an installed runtime library would be: a later process loads it in a millisecond instead of
compiling it (0.05-0.1 s per function). Without the folder, each process compiles the
functions it uses once.
"""
from __future__ import annotations

import hashlib
import logging
import re
import threading
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
from llvmlite import ir

from justjax._src.backends.llvm.mathlib import rare, scalar
from justjax._src.backends.llvm.runtime import host, object_cache
from justjax._src.config import config

__all__ = ["function", "finish", "full_width_lanes", "is_linked", "LINK_ATTRIBUTE", "load",
           "prepare"]

logger = logging.getLogger("justjax")

# Set on an llvmlite `ir.Module` (`setattr(module, LINK_ATTRIBUTE, True)`) to link math.
LINK_ATTRIBUTE = "justjax_link_math"
# The vector declarations a module links, which `finish` keeps alive.
_USED_ATTRIBUTE = "justjax_linked_vectors"
_PREFIX = "mathlib-"

_engines: dict[str, llvm.ExecutionEngine] = {}
_lock = threading.Lock()


def function(module: ir.Module, name: str, dtype: str) -> ir.Function:
    """The math function `name` for `dtype` ("f32"/"f64") to call from `module`: defined in
    it (`scalar.define`), or declared and linked when the module links math."""
    if not is_linked(module):
        return scalar.define(module, name, dtype)
    symbol = _symbol(name, dtype)
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    load(name, dtype)
    fty: ir.Type = ir.FloatType() if dtype == "f32" else ir.DoubleType()
    arity = scalar.arity(name)
    fn = ir.Function(module, ir.FunctionType(fty, [fty] * arity), name=symbol)
    vectors = []
    for n in rare.LANES[dtype]:
        vty = ir.VectorType(fty, n)
        vector = ir.Function(module, ir.FunctionType(vty, [vty] * arity), name=f"{symbol}_v{n}")
        _pure(vector)
        vectors.append(vector)
    _pure(fn)
    variants = ",".join(f"_ZGV_LLVM_N{n}{'v' * arity}_{symbol}({symbol}_v{n})"
                        for n in rare.LANES[dtype])
    # llvmlite knows no string attributes: the set prints its items as they are.
    set.add(fn.attributes, f'"vector-function-abi-variant"="{variants}"')
    used = getattr(module, _USED_ATTRIBUTE, None)
    if used is None:
        used = []
        setattr(module, _USED_ATTRIBUTE, used)
    used.extend(vectors)
    return fn


def is_linked(module: ir.Module) -> bool:
    """Whether `module` links its math functions instead of defining them."""
    return bool(getattr(module, LINK_ATTRIBUTE, False))


def full_width_lanes(dtype: str) -> int:
    """The lanes of a host vector of `dtype` ("f32"/"f64"): the width loops calling linked
    functions are vectorized at. LLVM's cost model, which weighs the calls as opaque, picks
    half the host's width on AVX-512 hosts that prefer 256-bit vectors, where the full width
    ran the seed chain's gradient in 42 ms instead of 50 (half the calls), and a forced width
    spares O3 the model's work over every width (10.3 ms instead of 12.8)."""
    return host.vector_bits() // (32 if dtype == "f32" else 64)


def finish(module: ir.Module) -> bool:
    """Keeps the vector versions `module` declares alive until the vectorizer calls them
    (in `@llvm.compiler.used`; the optimizer drops unused declarations). Call once, when
    the module is complete.

    Returns:
      Whether `module` calls linked math functions.
    """
    used = getattr(module, _USED_ATTRIBUTE, None)
    if not used:
        return False
    ptr = ir.IntType(8).as_pointer()
    array = ir.ArrayType(ptr, len(used))
    keep = ir.GlobalVariable(module, array, "llvm.compiler.used")
    keep.linkage = "appending"
    keep.section = "llvm.metadata"
    keep.initializer = ir.Constant(array, [fn.bitcast(ptr) for fn in used])
    setattr(module, _USED_ATTRIBUTE, None)
    return True


def _symbol(name: str, dtype: str) -> str:
    return f"justjax_linked_{name}_{dtype}"


def _pure(fn: ir.Function) -> None:
    """Marks a declared math function as reading and writing no memory and returning: calls
    to it can be vectorized, hoisted or dropped when unused."""
    for attribute in ("nounwind", "readnone", "willreturn"):
        set.add(fn.attributes, attribute)


def load(name: str, dtype: str) -> None:
    """Makes `name` for `dtype` and its vector versions callable by symbol from compiled
    code, once per process: loaded from the runtime cache folder, else compiled (and
    written there)."""
    symbol = _symbol(name, dtype)
    with _lock:
        if symbol in _engines:
            return
        engine = _cached_engine(symbol, name, dtype)
        for n in (None, *rare.LANES[dtype]):
            exported = symbol if n is None else f"{symbol}_v{n}"
            llvm.add_symbol(exported, engine.get_function_address(exported))
        _engines[symbol] = engine


def _cached_engine(symbol: str, name: str, dtype: str) -> llvm.ExecutionEngine:
    """The finalized engine of the module of `symbol`: its object code from the runtime
    cache folder if an entry there checks out, else compiled (and the entry written)."""
    folder = config.read("justjax_runtime_cache_dir")
    key = _key(symbol)
    path = Path(folder) / f"{_PREFIX}{symbol}-{key[:16]}" if folder else None
    if path is not None:
        try:
            exported = [symbol] + [f"{symbol}_v{n}" for n in rare.LANES[dtype]]
            entry, problem = object_cache.decode_entry(path.read_bytes(), key, exported)
        except OSError:
            entry, problem = None, ""
        if entry is not None:
            return _loaded(entry[0])
        if problem:
            logger.warning("Ignoring math library entry %s: %s", path, problem)
    engine, _, obj = object_cache.compile_object(module_text(name, dtype), 3)
    if path is not None and obj is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            object_cache.write_atomically(path, object_cache.encode_entry(key, obj, ""))
        except OSError as e:
            # A read-only home: each process compiles the functions it uses.
            logger.debug("Cannot write the math library entry %s: %s", path, e)
    return engine


_shared: list[llvm.ExecutionEngine] = []


def _loaded(obj: bytes) -> llvm.ExecutionEngine:
    """The engine holding every math object loaded from the cache folder, with `obj` added
    (one engine, so one target machine and memory manager, for all of them)."""
    if not _shared:
        _shared.append(object_cache.empty_engine(3))
    engine = _shared[0]
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine


_sources_digest: list[str] = []


def prepare() -> None:
    """Reads what the runtime cache's keys depend on (the sources, the host CPU) once, so
    that the first program to link math does not."""
    _key("")


def _key(symbol: str) -> str:
    """The key of the object code of `symbol`: what it is compiled from (the sources) and
    for (the host CPU, LLVM's and llvmlite's versions)."""
    if not _sources_digest:
        # Every source the math's IR could come from: the native backend and the numerics.
        src = Path(__file__).resolve().parents[3]
        digest = hashlib.sha256()
        for folder in (src / "backends" / "llvm", src / "numerics"):
            for source in sorted(folder.rglob("*.py")):
                digest.update(str(source.relative_to(src)).encode())
                digest.update(source.read_bytes())
        _sources_digest.append(digest.hexdigest())
    cpu_name, cpu_features = host.host_cpu()
    return object_cache.digest_of((
        symbol, _sources_digest[0], cpu_name, cpu_features, llvm.get_process_triple(),
        llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info))))


def module_text(name: str, dtype: str) -> str:
    """The LLVM IR of the module defining `name` for `dtype` and its vector versions."""
    module = ir.Module(name=_symbol(name, dtype))
    module.triple = llvm.get_process_triple()
    module.data_layout = str(host.host_target_machine().target_data)
    inner = scalar.define(module, name, dtype)
    symbol = _symbol(name, dtype)
    outer = ir.Function(module, inner.function_type, name=symbol)
    builder = ir.IRBuilder(outer.append_basic_block("entry"))
    builder.ret(builder.call(inner, list(outer.args)))
    for n in rare.LANES[dtype]:
        _define_vector(module, inner, f"{symbol}_v{n}", n)
    return _with_loop_widths(str(module))


# The back edge of a vector version's loop over its lanes, which `_with_loop_widths` tags.
_BACK_EDGE = 'label %"lanes", label %"done"'
_VECTOR_DEFINITION = re.compile(r'@"justjax_linked_\w+_v(\d+)"\(')


def _define_vector(module: ir.Module, inner: ir.Function, name: str, n: int) -> None:
    """`<n x fty> name(<n x fty> ...)`: `inner` applied to each lane, by a loop over the
    lanes (through stack buffers) that the vectorizer turns into straight vector code."""
    fty = inner.function_type.return_type
    vty = ir.VectorType(fty, n)
    arity = len(inner.args)
    fn = ir.Function(module, ir.FunctionType(vty, [vty] * arity), name=name)
    fn.attributes.add("nounwind")
    if n == 2:
        # LLVM does not vectorize a loop of two iterations: two calls, lane by lane.
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        result = ir.Constant(vty, ir.Undefined)
        for lane in range(n):
            index = ir.Constant(ir.IntType(32), lane)
            value = b.call(inner, [b.extract_element(arg, index) for arg in fn.args])
            result = b.insert_element(result, value, index)
        b.ret(result)
        return
    entry = fn.append_basic_block("entry")
    lanes = fn.append_basic_block("lanes")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    i64 = ir.IntType(64)
    inputs = []
    for arg in fn.args:
        slot = b.alloca(vty)
        b.store(arg, slot)
        inputs.append(b.bitcast(slot, fty.as_pointer()))
    out = b.alloca(vty)
    out_lanes = b.bitcast(out, fty.as_pointer())
    b.branch(lanes)
    b.position_at_end(lanes)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    args = [b.load(b.gep(p, [i], inbounds=True)) for p in inputs]
    b.store(b.call(inner, args), b.gep(out_lanes, [i], inbounds=True))
    nxt = b.add(i, ir.Constant(i64, 1), flags=["nsw", "nuw"])
    i.add_incoming(nxt, lanes)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(i64, n)), lanes, done)
    b.position_at_end(done)
    b.ret(b.load(out))


def _with_loop_widths(text: str) -> str:
    """`text` with each vector version's loop tagged to be vectorized at its number of lanes
    and not unrolled (llvmlite cannot spell the self-referencing loop metadata)."""
    lines = text.split("\n")
    metadata = []
    width = None
    next_id = 1 + max((int(t[1:].split(" ")[0]) for t in lines if t[:1] == "!" and
                       t[1:2].isdigit()), default=-1)
    for index, line in enumerate(lines):
        if line.startswith("define "):
            match = _VECTOR_DEFINITION.search(line)
            width = int(match.group(1)) if match else None
        if _BACK_EDGE in line and width is not None:
            loop = next_id
            next_id += 4
            lines[index] = f"{line}, !llvm.loop !{loop}"
            metadata += [f"!{loop} = distinct !{{!{loop}, !{loop + 1}, !{loop + 2}, !{loop + 3}}}",
                         f'!{loop + 1} = !{{!"llvm.loop.vectorize.width", i32 {width}}}',
                         f'!{loop + 2} = !{{!"llvm.loop.vectorize.enable", i1 true}}',
                         f'!{loop + 3} = !{{!"llvm.loop.unroll.disable"}}']
    return "\n".join(lines + metadata) + "\n"
