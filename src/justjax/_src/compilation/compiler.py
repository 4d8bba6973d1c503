"""The compile driver, as JAX's `jax._src.compiler`: from a closed jaxpr to a `CompiledCall`.

    lower_jaxpr     jaxpr -> StableHLO module (`ModuleInfo`: which inputs it keeps, donation)
    compile_jaxpr   the one road from a jaxpr to an executable, cached per jaxpr and options:
                    lowered, run through the optimizing pipeline (`hlo.passes.optimize`),
                    compiled by the backend `jax_platforms` selects, wrapped for calls

The `jit` primitive's impl, eager primitives (`dispatch`) and every AOT stage go through it,
so a jaxpr is lowered and compiled once; programs whose modules print the same share one
executable. A backend compiles an optimized module only in `backend_compile_and_load`, looked
up in this module's namespace at each call: a library that wraps it (chex's
`restrict_backends` checks `backend.platform` there) sees every compile.
"""
from __future__ import annotations

import logging
import warnings
import weakref
from typing import Any, Sequence

from justjax._src import monitoring
from justjax._src.compilation import caches
from justjax._src.backends import Backend, Executable, get_backend
from justjax._src.config import config
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.core.avals import ShapedArray
from justjax._src.core.shape_poly import is_constant_shape
from justjax._src.compilation import execution, spmd
from justjax._src.compilation.execution import CompiledCall, ModuleInfo, Program
from justjax._src.hlo import ir, stablehlo_printer
from justjax._src.hlo.passes import optimize
from justjax._src.interpreters import lowering
from justjax._src.interpreters import partial_eval as pe

# JAX's logger of the "Compiling ..." message: handlers on `jax` (optax's tests) see it.
_pxla_logger = logging.getLogger("jax._src.interpreters.pxla")


def backend_compile_and_load(backend: Any, module: ir.Module, executable_devices: Any = None,
                             options: Any = None, host_callbacks: Sequence[Any] = ()) -> Any:
    """Compiles `module` with `backend` and returns its executable."""
    return backend.compile(module)


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
                keep_unused: bool, out_paths: Sequence[str] | None = None,
                in_shardings: Sequence[Any] | None = None,
                out_shardings: Sequence[Any] | None = None) -> ModuleInfo:
    """Lowers a jitted function's jaxpr to its StableHLO module. Inputs nothing reads are
    dropped from `main` unless `keep_unused`, as in JAX. `in_shardings` (per input, a
    sharding over several devices or None) annotate the kept inputs (Shardy's
    `sdy.sharding`), and `out_shardings` (per output) the results, for the SPMD
    partitioner."""
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
    out_shardings = spmd.with_type_shardings(out_shardings, closed.out_avals, in_shardings,
                                             execution.out_shardings(closed.jaxpr))
    spmd.annotate_shardings(
        module, [in_shardings[i] for i in kept] if in_shardings is not None else None,
        out_shardings)
    return ModuleInfo(module, kept, tuple(closed.in_avals), tuple(closed.out_avals),
                      tuple(donated_invars),
                      tuple(in_shardings) if in_shardings is not None else None,
                      tuple(out_shardings) if out_shardings is not None else None)


@pe.transform_cache
def compile_jaxpr(closed: ClosedJaxpr, name: str, donated_invars: tuple[bool, ...],
                  keep_unused: bool, optimize_module: bool = True,
                  in_shardings: tuple[Any, ...] | None = None,
                  out_shardings: tuple[Any, ...] | None = None) -> CompiledCall:
    """The executable of a jit call of `closed` (cached per jaxpr and options), compiled
    from its module after the optimizing pipeline (unless `optimize_module` is False), and
    partitioned over the devices of `in_shardings` (`lower_jaxpr`) first.
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
        info = lower_jaxpr(closed, name, donated_invars, keep_unused, None, in_shardings,
                           out_shardings)
    with monitoring.log_elapsed_time("Finished XLA compilation of {fun_name} in "
                                     "{elapsed_time:.9f} sec", fun_name,
                                     monitoring.BACKEND_COMPILE_EVENT):
        call = compile_lowered(info, name, closed, optimize_module)
    return call


def compile_lowered(info: ModuleInfo, name: str, closed: ClosedJaxpr,
                    optimize_module: bool = True) -> CompiledCall:
    """The call of the lowered `info` (of `closed`), compiled after the optimizing pipeline
    (unless `optimize_module` is False)."""
    # The optimizing pipeline runs on a copy: `Lowered` keeps printing the module as
    # lowered. A one-op eager program has nothing to optimize and skips it; a primitive
    # whose lowering is a whole program (igamma's loops, a special function's series) is
    # fused like any jitted function.
    if not optimize_module and _op_count(info.module) > _EAGER_OPTIMIZE_OPS:
        optimize_module = True
    return CompiledCall(info, name, closed, _compile_program(info.module, optimize_module))


# The programs compiled in this process, by what decides their code: the lowered module's
# text (its name aside), the backend and the pipeline's settings. Different functions (or
# jaxprs) often lower to the same module: `grad` of two closures, a test's lambda per case.
# An entry lives as long as some compiled call uses its program.
_programs: weakref.WeakValueDictionary[tuple, Program] = weakref.WeakValueDictionary()
caches.register_cache(_programs.clear)


def _compile_program(module: ir.Module, optimize_module: bool) -> Program:
    backend = get_backend()
    if (config.read("justjax_dump_ir_to") or config.read("jax_compilation_cache_dir")
            or any(op.opcode == "stablehlo.custom_call" for op in module.walk())):
        # Each compile dumps its passes, or asks the persistent cache, as it would alone;
        # a custom call's text does not say which host callback it calls.
        return _optimize_and_compile(backend, module, optimize_module)
    text = stablehlo_printer.print_module(module).replace(f"module @{module.name}", "module", 1)
    key = (text, backend, optimize_module, config.read("justjax_disable_passes"),
           config.read("justjax_verify_passes"))
    program = _programs.get(key)
    if program is None:
        program = _programs[key] = _optimize_and_compile(backend, module, optimize_module)
    return program


def _optimize_and_compile(backend: Backend, module: ir.Module,
                          optimize_module: bool) -> Program:
    module, layout = spmd.partition(module)
    optimized = optimize.optimize(module) if optimize_module else module
    executable: Executable = backend_compile_and_load(backend, optimized)
    return Program(optimized, executable, backend.name, layout)


# Eager programs with more ops than this run through the optimizing pipeline.
_EAGER_OPTIMIZE_OPS = 8


def _op_count(module: ir.Module) -> int:
    count = 0
    for _ in module.walk():
        count += 1
        if count > _EAGER_OPTIMIZE_OPS:
            break
    return count
