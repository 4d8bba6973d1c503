"""Ahead-of-time stages of a jitted function, as JAX's `jax.stages`:

    jit(f).trace(*args)   -> Traced    (.jaxpr, .out_info, .lower())
    jit(f).lower(*args)   -> Lowered   (.as_text(), .compiler_ir(), .cost_analysis(), .compile())
    lowered.compile()     -> Compiled  (callable; .as_text(), .cost_analysis(), .memory_analysis())

`compile_jaxpr` is the one road from a closed jaxpr to an executable: the `jit` primitive's
impl and every stage go through it, so a jaxpr is lowered and compiled once.
"""
from __future__ import annotations

import logging
import math
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Collection, Sequence

import numpy as np

from justjax._src import caches, compiler, errors, monitoring, tree_util
from justjax._src.backends import get_backend
from justjax._src.config import config, transfer_guards_unset
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.shape_poly import canonicalize_shape, is_constant_shape
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from justjax._src.hlo.passes import cost, optimize
from justjax._src.hlo import hlo_printer, ir, stablehlo_printer
from justjax._src.interpreters import lowering
from justjax._src.interpreters import partial_eval as pe
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import replicas, transfer_guard
from justjax._src.runtime.sharding import SingleDeviceSharding
from justjax._src.runtime.array import (Array, donatable_buffer, from_numpy,
                                        set_sharding, to_numpy)

# JAX's loggers of these messages: handlers on `jax` (optax's tests) see them.
_dispatch_logger = logging.getLogger("jax._src.dispatch")
_pxla_logger = logging.getLogger("jax._src.interpreters.pxla")


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
# From a jaxpr to an executable.

@dataclass(frozen=True)
class ModuleInfo:
    """A lowered jaxpr: the module, which jaxpr inputs it keeps, and the output avals."""

    module: ir.Module
    kept_inputs: tuple[int, ...]
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    donated_invars: tuple[bool, ...]


def _result_infos(out_paths: Sequence[str] | None, num_outs: int) -> list[str]:
    if out_paths is not None:
        return ["result" + path for path in out_paths]
    return ["result"] if num_outs == 1 else [f"result[{i}]" for i in range(num_outs)]


def donation_aliases(kept_avals: Sequence[ShapedArray], donated: Sequence[bool],
                     out_avals: Sequence[ShapedArray]) -> list[dict[str, Any]] | None:
    """`tf.aliasing_output` attributes pairing each donated input with an output of its type,
    as JAX marks them (each output taken once)."""
    if not any(donated):
        return None
    free = list(range(len(out_avals)))
    attrs: list[dict[str, Any]] = []
    unusable = []
    for aval, is_donated in zip(kept_avals, donated, strict=True):
        match = next((i for i in free if is_donated and out_avals[i].shape == aval.shape
                      and out_avals[i].dtype == aval.dtype), None)
        if match is None:
            attrs.append({})
            if is_donated:
                unusable.append(aval.str_short(short_dtypes=False))
        else:
            free.remove(match)
            attrs.append({"tf.aliasing_output": ir.IntegerAttr(match, "i32")})
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
                      "See an explanation at "
                      "https://docs.jax.dev/en/latest/faq.html#buffer-donation.")
    return attrs


def lower_jaxpr(closed: ClosedJaxpr, name: str, donated_invars: Sequence[bool],
                keep_unused: bool, out_paths: Sequence[str] | None = None) -> ModuleInfo:
    """Lowers a jitted function's jaxpr to its StableHLO module. Inputs nothing reads are
    dropped from `main` unless `keep_unused`, as in JAX."""
    if keep_unused:
        kept = tuple(range(len(closed.in_avals)))
        pruned = closed
    else:
        jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.out_avals))
        kept = tuple(i for i, u in enumerate(used) if u)
        pruned = ClosedJaxpr(jaxpr, closed.consts)
    kept_avals = [closed.in_avals[i] for i in kept]
    donated = [donated_invars[i] for i in kept]
    module = lowering.lower_jaxpr_to_module(
        pruned, name, _result_infos(out_paths, len(closed.out_avals)),
        arg_attrs=donation_aliases(kept_avals, donated, closed.out_avals))
    return ModuleInfo(module, kept, tuple(closed.in_avals), tuple(closed.out_avals),
                      tuple(donated_invars))


class CompiledCall:
    """An executable with the bookkeeping of its call: which arguments it reads and the
    avals (weak types included) of its results."""

    def __init__(self, info: ModuleInfo, name: str, closed: ClosedJaxpr,
                 optimize_module: bool = True) -> None:
        self.info = info
        self.name = name
        self.closed = closed
        start = time.perf_counter()
        # The optimizing pipeline runs on a copy: `Lowered` keeps printing the module as
        # lowered. A one-op eager program has nothing to optimize and skips it; a primitive
        # whose lowering is a whole program (igamma's loops, a special function's series)
        # is fused like any jitted function.
        if not optimize_module and _op_count(info.module) > _EAGER_OPTIMIZE_OPS:
            optimize_module = True
        self._program = _compile_program(info.module, optimize_module)
        self.optimized = self._program.optimized
        if self.optimized.name != info.module.name:  # compiled for a same program's module
            self.optimized = ir.Module(info.module.name, self.optimized.functions,
                                       self.optimized.attributes,
                                       info.module.device_assignment)
        self.executable = self._program.executable
        self.compile_seconds = time.perf_counter() - start
        self._kept = info.kept_inputs
        self._in_dtypes = [info.in_avals[i].dtype for i in self._kept]
        self._out_avals = info.out_avals
        # The parameters (positions among the kept inputs) donated to an output: their
        # Arrays are deleted by the call, and their buffers may hold the outputs. A donated
        # input no output can use, or that the program does not read, stays (as in JAX).
        self._aliased = frozenset(info.module.function("main").aliased_outputs)
        # A program holding a pmap runs replicated on the pmap's devices (`shard_map.py`).
        self._replica_devices = info.module.device_assignment
        # Results the program lays out over devices (a pmap's, a sharding constraint's).
        found = out_shardings(closed.jaxpr)
        self._out_shardings = found if any(s is not None for s in found) else None

    def call_flat(self, args: Sequence[Any]) -> list[Array]:
        """Runs on concrete flat arguments (Arrays, NumPy values, scalars). Results live on
        the device of the committed arguments, committed to it (JAX's rule)."""
        if config.read("jax_no_execution"):
            raise RuntimeError(f"JAX tried to execute function jit({self.name}), but the "
                               "no_execution config option is set")
        debug = self.closed.jaxpr.debug_info
        device = devices_lib.committed_device(
            args, debug.arg_names if debug is not None else None, self.name)
        if not transfer_guards_unset():
            _check_transfers(args, device)
        given = self._given_buffers(args) if self._aliased else _NOTHING
        buffers = self.input_buffers(args)
        try:
            outs, ready = self._run(buffers, given)
        except BaseException:
            # The program may have written the buffers it was given before it failed.
            self._delete_donated(args, given)
            raise
        # An output in a buffer given up is adopted as it is (the same memory, as in JAX);
        # one that is another input is copied.
        input_ids = {id(b) for k, b in enumerate(buffers) if k not in given}
        results = [_wrap_result(out, aval, input_ids, ready)
                   for out, aval in zip(outs, self._out_avals, strict=True)]
        if device is not None:
            for result in results:
                _commit(result, device)
        if self._out_shardings is not None:
            for result, sharding in zip(results, self._out_shardings, strict=True):
                array = device_array(result)  # None for a float0 result (NumPy)
                if sharding is not None and array is not None:
                    set_sharding(array, sharding)
        self._delete_donated(args, self._aliased)
        if config.read("jax_debug_nans") or config.read("jax_debug_infs"):
            from justjax._src import debugging  # only when asked: it imports lax
            debugging.check_nans(self.name, self.closed, args, results)
        return results

    def input_buffers(self, args: Sequence[Any]) -> list[np.ndarray]:
        """The buffers the executable reads for the flat arguments `args`."""
        return [host_buffer(args[i], dtype)
                for i, dtype in zip(self._kept, self._in_dtypes, strict=True)]

    def _run(self, buffers: list[np.ndarray], given: frozenset[int]) -> tuple[list[Any], Any]:
        """Runs the executable on `buffers` (`given`: the parameters whose buffers it may
        write); returns the outputs and the future of a run still going on (or None)."""
        if self._replica_devices is not None:
            return self._run_replicated(buffers), None
        execute_async = getattr(self.executable, "execute_async", None)
        if execute_async is not None:
            return execute_async(buffers, given)
        return self.executable.execute(buffers, given), None

    def _given_buffers(self, args: Sequence[Any]) -> frozenset[int]:
        """The donated parameters whose buffers the program may write its outputs into: a
        donated Array's buffer that belongs to it alone (`donatable_buffer`). NumPy values
        and buffers shared with anything else are copied by the executable instead. Raises
        JAX's error when a donated Array is also another argument of the call."""
        arrays = [device_array(args[i]) for i in self._kept]
        _check_donated_once(arrays, self._aliased)
        if self._replica_devices is not None:
            return frozenset()  # every replica writes its own copy
        return frozenset(k for k in self._aliased
                         if arrays[k] is not None and donatable_buffer(arrays[k]) is not None)

    def _delete_donated(self, args: Sequence[Any], params: frozenset[int]) -> None:
        """Deletes the Arrays (and key arrays) passed for the parameters `params`."""
        for k in params:
            array = device_array(args[self._kept[k]])
            if array is not None:
                array.delete()

    def _run_replicated(self, buffers: list[np.ndarray]) -> list[Any]:
        """Runs the program on every device of its assignment at once; the replicas compute
        the same results (the first replica's are returned). No replica writes `buffers`:
        each works on its own copies of the donated ones."""
        count = len(self._replica_devices)
        setup = getattr(get_backend(), "prepare_replica_thread", None)
        return replicas.run_replicas(self.executable, [buffers] * count,
                                     self._replica_devices, setup)[0]


_NOTHING: frozenset[int] = frozenset()


def device_array(arg: Any) -> Array | None:
    """The Array holding the buffer of argument `arg` (a key array's base array), or None
    for a NumPy value or a scalar."""
    # `type(...) is Array`: key arrays and tracers are Arrays to isinstance (jax.Array).
    if type(arg) is Array:
        return arg
    base = getattr(arg, "_base_array", None)
    return base if type(base) is Array else None


def _check_donated_once(arrays: Sequence[Array | None], donated: frozenset[int]) -> None:
    """Raises JAX's INVALID_ARGUMENT error when an Array donated to the call is passed for
    another parameter too (donated twice, or donated and read)."""
    first: dict[int, tuple[int, bool]] = {}
    for k, array in enumerate(arrays):
        if array is None:
            continue
        seen = first.setdefault(id(array), (k, k in donated))
        if seen[0] == k or not (seen[1] or k in donated):
            continue
        if seen[1] and k in donated:
            what, toy = "donate the same buffer twice in", "f(donate(a), donate(a))"
        elif k in donated:
            what, toy = "donate a buffer which is also used by the same call to", \
                "f(a, donate(a))"
        else:
            what, toy = "use a buffer that was previously donated in the same call to", \
                "f(donate(a), a)"
        raise errors.JaxRuntimeError(
            f"INVALID_ARGUMENT: Attempt to {what} Execute() (flattened argument {k}, "
            f"replica 0, partition 0, first use: {seen[0]}). Toy example for this bug: "
            f"`{toy}`.")


# Primitives whose results are laid out over devices (`shard_map`, `sharding_constraint`,
# `reshard`) or come from an inner program (`jit`): equation -> one sharding (or None) per
# result.
result_shardings: dict[core.Primitive, Callable[[JaxprEqn], list[Any]]] = {}


def out_shardings(jaxpr: Jaxpr) -> list[Any]:
    """The sharding of each output of `jaxpr` that an equation of `result_shardings` gives
    back as it is, else None."""
    found: dict[Var, Any] = {}
    for eqn in jaxpr.eqns:
        rule = result_shardings.get(eqn.primitive)
        if rule is not None:
            found.update(zip(eqn.outvars, rule(eqn), strict=True))
    return [found.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars]


def _commit(result: Any, device: Any) -> None:
    """Places `result` (an Array, or a key array over one) on `device`, committed."""
    array = device_array(result)
    if array is not None:
        array._device, array._committed = device, True


class _Program:
    """A module after the optimizing pipeline and its executable."""

    def __init__(self, optimized: ir.Module, executable: Any) -> None:
        self.optimized = optimized
        self.executable = executable


# The programs compiled in this process, by what decides their code: the lowered module's
# text (its name aside), the backend and the pipeline's settings. Different functions (or
# jaxprs) often lower to the same module: `grad` of two closures, a test's lambda per case.
# An entry lives as long as some compiled call uses its program.
_programs: weakref.WeakValueDictionary[tuple, _Program] = weakref.WeakValueDictionary()
caches.register_cache(_programs.clear)


def _compile_program(module: ir.Module, optimize_module: bool) -> _Program:
    backend = get_backend()
    if (config.read("justjax_dump_ir_to") or config.read("jax_compilation_cache_dir")
            or any(op.opcode == "stablehlo.custom_call" for op in module.walk())):
        # Each compile dumps its passes, or asks the persistent cache, as it would alone;
        # a custom call's text does not say which host callback it calls.
        return _Program(*_optimize_and_compile(backend, module, optimize_module))
    text = stablehlo_printer.print_module(module).replace(f"module @{module.name}", "module", 1)
    key = (text, backend, optimize_module, config.read("justjax_disable_passes"),
           config.read("justjax_verify_passes"))
    program = _programs.get(key)
    if program is None:
        program = _programs[key] = _Program(
            *_optimize_and_compile(backend, module, optimize_module))
    return program


def _optimize_and_compile(backend: Any, module: ir.Module,
                          optimize_module: bool) -> tuple[ir.Module, Any]:
    optimized = optimize.optimize(module) if optimize_module else module
    return optimized, compiler.backend_compile_and_load(backend, optimized)


# Eager programs with more ops than this run through the optimizing pipeline.
_EAGER_OPTIMIZE_OPS = 8


def _op_count(module: ir.Module) -> int:
    count = 0
    for _ in module.walk():
        count += 1
        if count > _EAGER_OPTIMIZE_OPS:
            break
    return count


def result_array(out: np.ndarray, aval: ShapedArray) -> Any:
    """The Array (or key array) of a program's result buffer `out`, of `aval`."""
    return _wrap_result(out, aval, ())


def _is_host_data(arg: Any) -> bool:
    """A user's host value: a NumPy array of at least one dimension or a Python scalar.
    NumPy scalars (and 0-d arrays) are left out: justjax's rules evaluated eagerly pass
    their constants so, where JAX's run staged and transfer nothing."""
    if type(arg) in (bool, int, float, complex):
        return True
    return isinstance(arg, np.ndarray) and arg.ndim > 0 and arg.dtype != dtypes.float0


def _check_transfers(args: Sequence[Any], device: Any) -> None:
    """The transfers running on `args` implies (on `device`, or the default one): host
    values copied in, uncommitted arrays moved to the committed arguments' device."""
    target = device or devices_lib.default_device_override() or devices_lib.default_device()
    dst = SingleDeviceSharding(target)
    for arg in args:
        if type(arg) is Array:
            if device is not None and not arg.committed and arg.device != device:
                transfer_guard.device_to_device(arg.aval, SingleDeviceSharding(arg.device),
                                                dst)
        elif _is_host_data(arg):
            transfer_guard.host_to_device(core.get_aval(arg), dst)


def host_buffer(arg: Any, dtype: np.dtype) -> np.ndarray:
    """The buffer a program reads for argument `arg` of `dtype` (a key array's is its base
    array)."""
    if dtypes.is_extended(dtype):
        # A key array runs as its base array (uint32, one trailing key dimension more).
        return to_numpy(core.physical_value(arg), dtype.physical_dtype)
    # float0 (the tangent type of integers) has no bits: it travels as bool, as JAX lowers it.
    if dtype == dtypes.float0:
        return np.zeros(np.shape(arg), np.bool_)
    return to_numpy(arg, dtype)


def _wrap_result(out: np.ndarray, aval: ShapedArray, input_ids: Collection[int],
                 ready: Any = None) -> Any:
    """The Array of result `out` (`ready`: the future of the program still writing it;
    `input_ids`: the ids of the program's input buffers not given up)."""
    if dtypes.is_extended(aval.dtype):
        physical = ShapedArray(np.shape(out), aval.dtype.physical_dtype)
        base = _wrap_result(out, physical, input_ids, ready)
        return core.logical_value_handlers[type(aval.dtype)](aval, base)
    if aval.dtype == dtypes.float0:
        # A float0 result holds no data: JAX hands it back as a NumPy array (its
        # TypedNdArray), which compares and prints as NumPy's.
        return np.zeros(aval.shape, dtypes.float0)
    # A fresh buffer (or a donated one given up, not in `input_ids`) is adopted as it is;
    # an input passed through, a view or a constant is copied by `from_numpy`, so no Array
    # shares memory anyone can write.
    if (type(out) is np.ndarray and out.base is None and out.flags.c_contiguous
            and out.dtype == aval.dtype and id(out) not in input_ids):
        return Array.adopt(out, aval, ready)
    if ready is not None:
        ready.result()  # a result that is copied must be complete first
    return from_numpy(out, aval, input_ids)


def log_event(message: str, *args: Any) -> None:
    """Logs a tracing or compilation event (JAX's `jax._src.dispatch` logger): a warning
    under `jax_log_compiles`, else debug."""
    monitoring.log_compile_event(_dispatch_logger, message, *args)


@pe.transform_cache
def compile_jaxpr(closed: ClosedJaxpr, name: str, donated_invars: tuple[bool, ...],
                  keep_unused: bool, optimize_module: bool = True) -> CompiledCall:
    """The executable of a jit call of `closed` (cached per jaxpr and options), compiled
    from its module after the optimizing pipeline (unless `optimize_module` is False).
    Lowering and compiling are logged and recorded as JAX's monitoring events."""
    if not all(is_constant_shape(a.shape) for a in closed.in_avals):
        # A module with symbolic shapes runs only once refined to concrete ones (an
        # Exported's call does that); JAX's compile-time error otherwise.
        raise ValueError("Error refining shapes. Define JAX_DUMP_IR_TO to dump the module.")
    monitoring.log_compile_event(
        _pxla_logger, "Compiling jit(%s) with global shapes and types %r. Argument mapping: "
        "%s.", name, tuple(closed.in_avals), "(" + "UnspecifiedValue," * len(closed.in_avals)
        + ")")
    fun_name = f"jit({name})"
    with monitoring.log_elapsed_time("Finished jaxpr to MLIR module conversion {fun_name} in "
                                     "{elapsed_time:.9f} sec", fun_name,
                                     monitoring.JAXPR_TO_MLIR_MODULE_EVENT):
        info = lower_jaxpr(closed, name, donated_invars, keep_unused)
    with monitoring.log_elapsed_time("Finished XLA compilation of {fun_name} in "
                                     "{elapsed_time:.9f} sec", fun_name,
                                     monitoring.BACKEND_COMPILE_EVENT):
        call = CompiledCall(info, name, closed, optimize_module)
    return call


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
            native = getattr(self._call.executable, "as_text", None)
            if native is None:
                raise ValueError(f"as_text(dialect={dialect!r}) needs the llvm backend; this "
                                 "program was compiled by the reference backend")
            return native(dialect)
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
        self._info = lower_jaxpr(closed, signature.name, signature.donated_invars,
                                 signature.keep_unused, signature.out_paths)

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
        call = compile_jaxpr(self._closed, sig.name, sig.donated_invars, sig.keep_unused)
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
