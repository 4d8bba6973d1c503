"""Tracing Python functions to jaxprs (DynamicJaxprTrace).

Every primitive applied to a tracer becomes an equation. Constants met along the way become
constvars; at the end, scalar constants are inlined as literals (`2.0:f32[]`) and unused
constants are dropped, as in JAX.
"""
from __future__ import annotations

import functools
import inspect
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import source_info_util
from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core, dtypes, leaks
from justjax._src.core.shape_poly import DimExpr
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, check_jaxpr
from justjax._src.runtime.array import Array


@dataclass(frozen=True)
class DebugInfo:
    """What error messages say about the function being traced."""

    traced_for: str
    func_src_info: str
    arg_names: tuple[str, ...]
    result_paths: tuple[str, ...] | None = None

    @property
    def func_name(self) -> str:
        return self.func_src_info.split(" ")[0]


def fun_name(fun: Callable) -> str:
    """The name JAX gives a function: its `__name__`, a partial's function's name, or
    `<unnamed function>`."""
    name = getattr(fun, "__name__", None)
    if name is not None:
        return name
    if isinstance(fun, functools.partial):
        return fun_name(fun.func)
    return "<unnamed function>"


def debug_info(traced_for: str, fun: Callable, arg_names: Sequence[str] = ()) -> DebugInfo:
    """Describes `fun` (name and source location) and names its flattened arguments."""
    name = getattr(fun, "__name__", type(fun).__name__)
    try:
        source = inspect.getsourcefile(inspect.unwrap(fun))
        line = inspect.getsourcelines(inspect.unwrap(fun))[1]
        src_info = f"{name} at {source}:{line}"
    except (TypeError, OSError):
        src_info = name
    return DebugInfo(traced_for, src_info, tuple(arg_names))


def signature_arg_names(fun: Callable, args: Sequence[Any], kwargs: dict[str, Any]) -> list[str]:
    """Top-level parameter names of `args`/`kwargs` in `fun`'s signature, best effort."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [f"args[{i}]" for i in range(len(args))] + list(kwargs)
    names = []
    for param_name, value in bound.arguments.items():
        kind = bound.signature.parameters[param_name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            names.extend(f"{param_name}[{i}]" for i in range(len(value)))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            names.extend(f"{param_name}['{k}']" for k in value)
        else:
            names.append(param_name)
    return names


def leaf_arg_names(fun: Callable, args: Sequence[Any], kwargs: dict[str, Any],
                static: frozenset[int]) -> list[str]:
    """Names of the traced leaves in flattening order, for error messages: `x`, `d['a']`."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = []
    for i, arg in enumerate(args):
        if i in static:
            continue
        top = positional[i] if i < len(positional) else f"args[{i}]"
        names.extend(top + tree_util.keystr(path)
                     for path, _ in tree_util.tree_flatten_with_path(arg)[0])
    for key in sorted(kwargs):
        names.extend(key + tree_util.keystr(path)
                     for path, _ in tree_util.tree_flatten_with_path(kwargs[key])[0])
    return names


def abstractify_args(fun: Callable, flat_args: Sequence[Any],
                     arg_names: Callable[[], Sequence[str] | None]) -> tuple[ShapedArray, ...]:
    """The avals of the flat arguments of a call of `fun` to be traced (jit, eval_shape).

    Raises:
      OverflowError: a Python int too large for its dtype (JAX's message, naming it).
      TypeError: an argument that is no JAX type (JAX's message, naming its path).
    """
    avals = []
    for i, x in enumerate(flat_args):
        try:
            avals.append(x.aval if type(x) is Array or isinstance(x, core.Tracer)
                         else core.get_aval(x))
        except OverflowError:
            raise OverflowError("An overflow was encountered while parsing an argument to a "
                                f"jitted computation, whose argument path is "
                                f"{_arg_name(arg_names, i)}. Got {type(x)} with value "
                                f"{x}") from None
        except TypeError:
            raise TypeError(f"Error interpreting argument to {fun} as an abstract array. The "
                            f"problematic value is of type {type(x)} and was passed to the "
                            f"function at path {_arg_name(arg_names, i)}.\nThis typically "
                            "means that a jit-wrapped function was called with a non-array "
                            "argument, and this argument was not marked as static using the "
                            "static_argnums or static_argnames parameters of jax.jit."
                            ) from None
    return tuple(avals)


def _arg_name(arg_names: Callable[[], Sequence[str] | None], i: int) -> str:
    names = arg_names()
    return names[i] if names is not None and i < len(names) else "unknown"


# primitive -> rule(args, params) giving concrete outputs instead of staging an equation, or
# None to stage it. JAX folds conversions of scalar constants this way, which is why
# `x_int8 + jnp.asarray(2)` shows the literal `2:i8[]`.
const_fold_rules: dict[core.Primitive, Callable[[Sequence[Any], dict], Any]] = {}

# primitive -> rule(args, params) returning an input to stand for the output when the
# equation would be the identity (a broadcast to the same shape, a conversion to the same
# type), or None. As in JAX, no equation is staged then.
forwarding_rules: dict[core.Primitive, Callable[[Sequence[Any], dict], Any]] = {}


def _folding_eagerly(args: Sequence[Any]) -> bool:
    """Whether an operation on `args` runs at once instead of being staged: inside
    `jax.ensure_compile_time_eval()` (`eager_constant_folding`), when no argument is a tracer."""
    return (config.read("eager_constant_folding")
            and not any(isinstance(a, core.Tracer) for a in args))


class DynamicJaxprTracer(core.Tracer):
    """A value being staged into a jaxpr; `jaxpr_var` is its variable there (not `var`, which
    is the array method `x.var()`)."""

    __slots__ = ("_aval", "jaxpr_var")

    def __init__(self, trace: DynamicJaxprTrace, aval: ShapedArray, var: Var) -> None:
        self._trace = trace
        self._aval = aval
        self.jaxpr_var = var

    @property
    def aval(self) -> ShapedArray:
        return self._aval


def _is_literalable(value: Any) -> bool:
    # Only a concrete value: a scalar stand-in with no value (a ShapeDtypeStruct, which
    # `eval_shape` may return) stays a constvar, as in JAX.
    concrete = (dtypes.is_python_scalar(value) or isinstance(value, (np.ndarray, np.generic))
                or type(value) is Array)
    return (concrete and np.shape(value) == ()
            and not dtypes.is_extended(core.get_aval(value).dtype))


class DynamicJaxprTrace(core.Trace):
    """Stages primitives into a jaxpr under construction."""

    tracer_name = "JitTracer"
    # Whether scalar Arrays read from outside become literals (Python and NumPy scalars do).
    inline_arrays = True

    def __init__(self, debug: DebugInfo | None = None) -> None:
        super().__init__()
        self.debug = debug
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        # id(original value) -> (var, canonical value, tracer, original value). The original is
        # kept alive so its id cannot be reused by another object during tracing.
        self.constvars: dict[int, tuple[Var, Any, DynamicJaxprTracer, Any]] = {}

    def describe(self) -> str:
        return "DynamicJaxprTrace"

    def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return DynamicJaxprTracer(self, aval, var)

    def new_const(self, value: Any) -> DynamicJaxprTracer:
        # Keyed by identity; the value itself is kept alive in the table so ids stay unique.
        entry = self.constvars.get(id(value))
        if entry is None:
            aval = core.get_aval(value)
            canonical = value
            if isinstance(value, (np.ndarray, np.generic)) and value.dtype != aval.dtype:
                canonical = value.astype(aval.dtype)  # 64-bit constants canonicalized
            var = Var(aval)
            entry = (var, canonical, DynamicJaxprTracer(self, aval, var), value)
            self.constvars[id(value)] = entry
        return entry[2]

    def to_jaxpr_tracer(self, x: Any) -> DynamicJaxprTracer:
        if isinstance(x, DynamicJaxprTracer) and x._trace is self:
            return x
        if isinstance(x, core.Tracer) and not x._trace.is_valid():
            raise core.escaped_tracer_error(x)
        if isinstance(x, DimExpr):  # a symbolic dimension used as a value
            return self.to_jaxpr_tracer(x.dimension_as_value())
        return self.new_const(x)

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict) -> Any:
        if _folding_eagerly(args):
            return core.eval_trace.process_primitive(primitive, args, params)
        forward = forwarding_rules.get(primitive)
        if forward is not None:
            forwarded = forward(args, params)
            if forwarded is not None:
                return forwarded
        fold = const_fold_rules.get(primitive)
        if fold is not None and not any(isinstance(a, core.Tracer) for a in args):
            folded = fold(args, params)
            if folded is not None:
                return folded
        tracers = [self.to_jaxpr_tracer(a) for a in args]
        out_avals = primitive.abstract_eval(*[t.aval for t in tracers], **params)
        if not primitive.multiple_results:
            out_avals = [out_avals]
        outs = [DynamicJaxprTracer(self, aval, Var(aval)) for aval in out_avals]
        effects = core.no_effects
        if primitive in core.effectful_abstract_eval_rules:
            effects = primitive.effects(*[t.aval for t in tracers], **params)
        self.eqns.append(JaxprEqn([t.jaxpr_var for t in tracers], [t.jaxpr_var for t in outs], primitive,
                                  dict(params), effects, source_info_util.staged_here()))
        return outs if primitive.multiple_results else outs[0]

    def process_custom_jvp_call(self, primitive: core.Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Stages one `custom_jvp_call` equation: `fun` traced to `call_jaxpr`, the values it
        closes over passed as the leading `num_consts` operands, and the rule kept as
        `jvp_jaxpr_fun` for when the jaxpr is differentiated later."""
        if _folding_eagerly(args):
            return core.eval_trace.process_custom_jvp_call(primitive, fun, jvp, args,
                                                           symbolic_zeros=symbolic_zeros)
        closed = trace_to_jaxpr(fun, [core.get_aval(a) for a in args],
                                getattr(fun, "debug_info", None))
        jaxpr = closed.jaxpr
        call_jaxpr = ClosedJaxpr(jaxpr.replace(constvars=[], invars=[*jaxpr.constvars,
                                                                     *jaxpr.invars]), [])
        params = dict(call_jaxpr=call_jaxpr, jvp_jaxpr_fun=jvp, num_consts=len(closed.consts),
                      symbolic_zeros=symbolic_zeros)
        return DynamicJaxprTrace.process_primitive(self, primitive, [*closed.consts, *args],
                                                   params)

    def process_custom_vjp_call(self, primitive: core.Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        """Stages one `custom_vjp_call` equation, as `process_custom_jvp_call` does, keeping
        the rules as `fwd_jaxpr_thunk` and `bwd`."""
        if _folding_eagerly(args):
            return core.eval_trace.process_custom_vjp_call(primitive, fun, fwd, bwd, args,
                                                           symbolic_zeros=symbolic_zeros)
        closed = trace_to_jaxpr(fun, [core.get_aval(a) for a in args],
                                getattr(fun, "debug_info", None))
        jaxpr = closed.jaxpr
        call_jaxpr = ClosedJaxpr(jaxpr.replace(constvars=[], invars=[*jaxpr.constvars,
                                                                     *jaxpr.invars]), [])
        params = dict(call_jaxpr=call_jaxpr, fwd_jaxpr_thunk=fwd, num_consts=len(closed.consts),
                      bwd=bwd, symbolic_zeros=symbolic_zeros)
        return DynamicJaxprTrace.process_primitive(self, primitive, [*closed.consts, *args],
                                                   params)

    def to_closed_jaxpr(self, outputs: Sequence[Any]) -> ClosedJaxpr:
        """Finishes tracing: the jaxpr computing `outputs`, with scalar constants inlined."""
        out_vars = [self.to_jaxpr_tracer(x).jaxpr_var for x in outputs]
        self.invalidate()
        literals: dict[Var, Literal] = {}
        for var, value, _, _ in self.constvars.values():
            if _is_literalable(value) and (self.inline_arrays or type(value) is not Array):
                # A Python scalar keeps its Python value: `lax.add(x, 0.1)` prints `0.1:f32[]`.
                # Arrays stay Arrays so evaluating the jaxpr keeps their weak type.
                literal = value if dtypes.is_python_scalar(value) or type(value) is Array \
                    else dtypes.coerce_to_array(value, var.aval.dtype)[()]
                literals[var] = Literal(literal, var.aval)

        def inline(atom: Any) -> Any:
            return literals.get(atom, atom)

        eqns = [eqn.replace(invars=[inline(v) for v in eqn.invars]) for eqn in self.eqns]
        outvars = [inline(v) for v in out_vars]
        used = {v for eqn in eqns for v in eqn.invars if isinstance(v, Var)}
        used |= {v for v in outvars if isinstance(v, Var)}
        constvars, consts = [], []
        for var, value, _, _ in self.constvars.values():
            if var in used and var not in literals:
                constvars.append(var)
                consts.append(value)
        jaxpr = Jaxpr(constvars, list(self.invars), outvars, eqns, debug_info=self.debug)
        return ClosedJaxpr(jaxpr, consts)

    # -- error messages ----------------------------------------------------------------------
    def describe_tracer(self, tracer: core.Tracer) -> str:
        if self.debug is None:
            return ""
        message = (f"The error occurred while tracing the function {self.debug.func_src_info} "
                   f"for {self.debug.traced_for}. ")
        names = self._argument_names_feeding(tracer.jaxpr_var)
        if len(names) == 1:
            message += (f"This concrete value was not available in Python because it depends "
                        f"on the value of the argument {names[0]}.")
        elif names:
            listed = ", ".join(names[:-1]) + f" and {names[-1]}"
            message += (f"This concrete value was not available in Python because it depends "
                        f"on the values of the arguments {listed}.")
        return message

    def _argument_names_feeding(self, var: Var) -> list[str]:
        producers = {out: eqn for eqn in self.eqns for out in eqn.outvars}
        seen: set[Var] = set()
        stack = [var]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            eqn = producers.get(current)
            if eqn is not None:
                stack.extend(v for v in eqn.invars if isinstance(v, Var))
        arg_names = self.debug.arg_names if self.debug else ()
        return [arg_names[i] if i < len(arg_names) else f"args[{i}]"
                for i, v in enumerate(self.invars) if v in seen]


def trace_to_jaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                   debug: DebugInfo | None = None) -> ClosedJaxpr:
    """Traces `fun(*tracers) -> list of outputs` on arguments of the given avals.

    With `jax_check_tracer_leaks`, raises if a tracer of this trace outlives it; with
    `jax_enable_checks`, type-checks the jaxpr.
    """
    trace = DynamicJaxprTrace(debug)
    closed = _trace_with(trace, fun, in_avals)
    if config.read("jax_check_tracer_leaks"):
        trace_ref = weakref.ref(trace)
        del trace
        leaks.check_no_leaks(trace_ref)
    if config.read("jax_enable_checks"):
        check_jaxpr(closed.jaxpr)
    return closed


def _trace_with(trace: DynamicJaxprTrace, fun: Callable[..., Sequence[Any]],
                in_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    arg_tracers = [trace.new_arg(aval) for aval in in_avals]
    # Name stacks are relative to the function traced, as JAX's.
    with core.set_current_trace(trace), source_info_util.reset_name_stack():
        outputs = fun(*arg_tracers)
    return trace.to_closed_jaxpr(outputs)
