"""Primitives, traces and tracers: the stackless tracing machinery.

One current trace lives in a thread-local; `Primitive.bind` hands the primitive to it. A
transform's trace knows its `parent_trace`, unboxes only its own tracers (anything else is a
constant to it) and runs its rules with the parent as the current trace. There is no global
stack of levels.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import operator
import threading
import weakref
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.config import config, eager_constant_folding
from justjax._src.core import dtypes, shape_poly
from justjax._src.core.avals import ShapedArray


class Primitive:
    """A primitive operation. Arrays are positional, static parameters are keywords.

    Libraries define their own primitives with this class too (`jax.extend.core.Primitive`):
    `def_impl`, `def_abstract_eval` and the transforms' tables (`ad.primitive_jvps`,
    `batching.primitive_batchers`, `mlir.register_lowering`) make them behave as built-in
    ones.
    """

    multiple_results = False
    # JAX's flags for call-like and map-like primitives (which bind a function); justjax's
    # call primitives hold jaxprs in their params instead, so these stay False.
    call_primitive = False
    map_primitive = False

    def __init__(self, name: str, *, multiple_results: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: Any) -> Any:
        state = trace_state
        if state.varying_order and self in joins_varying:
            args = _varying_alike(args)
        return state.trace.process_primitive(self, args, params)

    def bind_with_trace(self, trace: Trace, args: Sequence[Any], params: dict) -> Any:
        """Binds on `trace` rather than the current trace (made current while it runs)."""
        with set_current_trace(trace):
            return trace.process_primitive(self, list(args), dict(params))

    def get_bind_params(self, params: dict) -> dict:
        """The keyword arguments that re-bind an equation of this primitive with `params`
        (as JAX >= 0.9.2 gives them: a dict)."""
        return dict(params)

    def def_impl(self, rule: Callable) -> Callable:
        impl_rules[self] = rule
        return rule

    def impl(self, *args: Any, **params: Any) -> Any:
        """Evaluates the primitive on concrete values with its impl rule."""
        try:
            rule = impl_rules[self]
        except KeyError:
            raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented") from None
        return rule(*args, **params)

    def def_abstract_eval(self, rule: Callable) -> Callable:
        abstract_eval_rules[self] = rule
        return rule

    def def_effectful_abstract_eval(self, rule: Callable) -> Callable:
        """Registers `rule(*avals, **params) -> (out_avals, effects)`: equations whose
        effects are not empty are kept by dead-code elimination."""
        effectful_abstract_eval_rules[self] = rule
        abstract_eval_rules[self] = lambda *avals, **params: rule(*avals, **params)[0]
        return rule

    def abstract_eval(self, *avals: Any, **params: Any) -> Any:
        """Output aval(s) of the primitive for input avals (a list if `multiple_results`);
        operands whose types are split over Explicit mesh axes give the outputs the
        shardings the primitive's sharding rule says."""
        try:
            rule = abstract_eval_rules[self]
        except KeyError:
            raise NotImplementedError(f"abstract evaluation rule for '{self.name}' not implemented") from None
        out = rule(*avals, **params)
        _check_nonnegative_shapes(self, out)
        for aval in avals:
            if getattr(aval, "_sharding", None) is not None or getattr(aval, "vma", None):
                return _typed_outputs(self, avals, out, params)
        return out

    def effects(self, *avals: Any, **params: Any) -> frozenset:
        """The effects of an equation of this primitive (none unless its abstract
        evaluation was registered with `def_effectful_abstract_eval`)."""
        rule = effectful_abstract_eval_rules.get(self)
        if rule is None:
            return no_effects
        return frozenset(rule(*avals, **params)[1])

    def is_effectful(self, params: dict) -> bool:
        return self in effectful_abstract_eval_rules


def _check_nonnegative_shapes(primitive: Primitive, out: Any) -> None:
    """Raises JAX's TypeError when a primitive's result would have a negative dimension
    (a negative size given to a shape-taking function): caught while tracing, with the
    primitive's name, never later in a kernel."""
    for aval in (out if primitive.multiple_results else (out,)):
        shape = getattr(aval, "shape", None)
        if shape and any(type(d) is int and d < 0 for d in shape):
            raise TypeError(f"{primitive.name} shape must have every element be nonnegative, "
                            f"got {tuple(shape)}.")


# The core rule tables; each transform owns its own table in its own module.
impl_rules: dict[Primitive, Callable] = {}
abstract_eval_rules: dict[Primitive, Callable] = {}
effectful_abstract_eval_rules: dict[Primitive, Callable] = {}
# `rule(out_avals, *in_avals, **params) -> [sharding or None per output]`: the sharding of
# each result's type from its operands' types, run when an operand's type is split over
# Explicit mesh axes (`lax/sharding_rules.py` declares them). A primitive without one keeps
# the types its abstract evaluation gives (a call's: its body's).
sharding_rules: dict[Primitive, Callable] = {}


class ShardingTypeError(Exception):
    """Operands whose shardings (in their types, over Explicit mesh axes) do not go together
    under a primitive (JAX's `core.ShardingTypeError`)."""


# `pvary`: a value made varying along manual axes (JAX's `core.pvary_p`; its rules are in
# lax/parallel.py). Inside a shard_map body checked with check_vma, the operands of the
# primitives of `joins_varying` (elementwise ops of several operands, dot_general, select_n
# ...) are made to vary alike before they are bound, as JAX's wrappers do: an operand that
# varies along fewer axes goes through `pvary` first.
pvary_p = Primitive("pvary")
joins_varying: set[Primitive] = set()


def _varying_alike(args: Sequence[Any]) -> Sequence[Any]:
    vmas = [getattr(get_aval(a), "vma", ()) for a in args]
    joined = varying_axes(*vmas)
    if all(len(v) == len(joined) for v in vmas):
        return args
    return [a if len(v) == len(joined) else
            pvary_p.bind(a, axes=tuple(n for n in joined if n not in v))
            for a, v in zip(args, vmas, strict=True)]


# `rule(operands' vmas, **params) -> the results' manual axes` of the primitives whose
# results vary along other axes than the union of their operands' (collectives, pvary).
vma_rules: dict[Primitive, Callable] = {}


def _typed_outputs(prim: Primitive, avals: Sequence[Any], out: Any, params: dict) -> Any:
    outs = list(out) if prim.multiple_results else [out]
    rule = sharding_rules.get(prim)
    if rule is not None and any(getattr(a, "_sharding", None) is not None for a in avals):
        shardings = rule(outs, *avals, **params)
        outs = [o.update(sharding=s) if s is not o._sharding else o
                for o, s in zip(outs, shardings, strict=True)]
    in_vmas = [getattr(a, "vma", ()) for a in avals]
    if any(in_vmas) and not _has_body(params):
        vma_rule = vma_rules.get(prim)
        vma = vma_rule(in_vmas, **params) if vma_rule is not None else varying_axes(*in_vmas)
        outs = [o.update(vma=vma) if hasattr(o, "vma") else o for o in outs]
    return outs if prim.multiple_results else outs[0]


def _has_body(params: dict) -> bool:
    """Whether an equation calls inner jaxprs (its results' types are their results')."""
    from justjax._src.core.jaxpr import jaxprs_in_params  # jaxpr.py builds on this module
    return bool(jaxprs_in_params(params))


def varying_axes(*groups: Sequence[Any]) -> tuple:
    """The union of manual axes, in the order of the mesh whose bodies are being traced."""
    names = set().union(*groups)
    order = trace_state.varying_order
    return tuple(sorted(names, key=lambda n: order.index(n) if n in order else len(order)))


@contextlib.contextmanager
def tracking_varying_axes(order: Sequence[Any]) -> Iterator[None]:
    """Tracks, in the `with` body, which of the manual axes `order` (a mesh's, in its order)
    values vary along (`shard_map`'s `check_vma`)."""
    previous = trace_state.varying_order
    trace_state.varying_order = tuple(order)
    try:
        yield
    finally:
        trace_state.varying_order = previous


class Effect:
    """A side effect an equation has (`jax.extend.core.Effect`): libraries subclass it."""


Effects = frozenset
no_effects: frozenset = frozenset()


# ---------------------------------------------------------------------------------------------
# Abstract values of concrete Python values.

pytype_aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {}


@functools.lru_cache(maxsize=None)
def _python_scalar_aval(scalar_type: type, x64: bool) -> ShapedArray:
    # Avals are never mutated, so one per (type, x64 setting) serves every scalar.
    dtype = dtypes.canonicalize_dtype(dtypes.PYTHON_SCALAR_DTYPES[scalar_type])
    # Python bools are not weakly typed: bool has no wider kind to defer to.
    return ShapedArray((), dtype, weak_type=scalar_type is not bool)


def _scalar_aval(x: Any) -> ShapedArray:
    aval = _python_scalar_aval(type(x), config.read("jax_enable_x64"))
    if type(x) is int:
        dtypes.check_python_int_range(x, aval.dtype)
    return aval


def _numpy_aval(x: Any) -> ShapedArray:
    dtype = np.dtype(x.dtype)
    if dtype == dtypes.float0:
        # The tangent type of integers: NumPy arrays of float0 are the zero tangents JAX
        # hands out and accepts.
        return ShapedArray(np.shape(x), dtypes.float0)
    if dtype not in dtypes.ALL_TYPES:
        raise TypeError(f"Value {x!r} with dtype {dtype} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")
    return ShapedArray(np.shape(x), dtypes.canonicalize_dtype(dtype))


for _t in dtypes.PYTHON_SCALAR_DTYPES:
    pytype_aval_mappings[_t] = _scalar_aval
pytype_aval_mappings[np.ndarray] = _numpy_aval
for _d in dtypes.ALL_TYPES:
    pytype_aval_mappings[_d.type] = _numpy_aval
pytype_aval_mappings[np.void] = _numpy_aval

# Values of extended dtypes (PRNG key arrays) are stored as arrays of a physical type: the
# backends run on those. `physical_value_handlers[type(x)](x)` is the physical array of a
# concrete value; `logical_value_handlers[type(aval.dtype)](aval, physical)` wraps a physical
# result back into a value of `aval`.
physical_value_handlers: dict[type, Callable[[Any], Any]] = {}
logical_value_handlers: dict[type, Callable[[ShapedArray, Any], Any]] = {}


def physical_value(x: Any) -> Any:
    """The physical array of a concrete value of an extended dtype; `x` itself otherwise."""
    handler = physical_value_handlers.get(type(x))
    return x if handler is None else handler(x)


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a tracer or a concrete value (Array, NumPy value, Python scalar)."""
    if isinstance(x, Tracer):
        return x.aval
    mapping = pytype_aval_mappings.get(type(x))
    if mapping is not None:
        return mapping(x)
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    for cls in type(x).__mro__[1:]:
        mapping = pytype_aval_mappings.get(cls)
        if mapping is not None:
            return mapping(x)
    raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")


def valid_jaxtype(x: Any) -> bool:
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def check_arraylike(fun_name: str, *args: Any) -> None:
    for position, arg in enumerate(args):
        if not (isinstance(arg, Tracer) or valid_jaxtype(arg)) or isinstance(arg, (list, tuple)):
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, "
                            f"got {type(arg).__name__} at position {position}.")


# ---------------------------------------------------------------------------------------------
# Traces.

class Trace:
    """A transformation in progress. Subclasses implement `process_primitive`."""

    tracer_name = "Tracer"  # how this trace's tracers print: JitTracer(float32[3])

    def __init__(self) -> None:
        self._valid = True

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        raise NotImplementedError

    def process_custom_jvp_call(self, primitive: Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """A call of a function with a custom JVP rule (see `_src/transformations/custom_derivatives.py`):
        `fun(*args) -> outs` is the function on flat leaves, `jvp(primals, tangents) ->
        (primal_outs, tangent_outs)` its rule."""
        raise NotImplementedError(f"{type(self).__name__} must override process_custom_jvp_call "
                                  "to handle custom_jvp primitives")

    def process_custom_vjp_call(self, primitive: Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        """A call of a function with a custom VJP rule: `fun(*args) -> outs`,
        `fwd(primals, which_linear) -> (residuals, outs)`, `bwd(residuals, cts) -> cts`."""
        raise NotImplementedError(f"{type(self).__name__} must override process_custom_vjp_call "
                                  "to handle custom_vjp primitives")

    def invalidate(self) -> None:
        self._valid = False

    def is_valid(self) -> bool:
        return self._valid

    def describe(self) -> str:
        return type(self).__name__

    @property
    def main(self) -> Any:
        """The transformation's tag (JAX keeps `main` as another name for it)."""
        return getattr(self, "tag", None)

    def __repr__(self) -> str:
        return type(self).__name__


class EvalTrace(Trace):
    """Evaluation: runs each primitive's `impl` on concrete values."""

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        for arg in args:
            if isinstance(arg, Tracer):
                raise escaped_tracer_error(arg)
        try:
            rule = impl_rules[primitive]
        except KeyError:
            raise NotImplementedError(f"impl rule for '{primitive.name}' not implemented") from None
        return rule(*args, **params)

    def process_custom_jvp_call(self, primitive: Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Evaluation ignores the rule: it runs the function."""
        return fun(*args)

    def process_custom_vjp_call(self, primitive: Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        """Evaluation ignores the rules: it runs the function."""
        return fun(*args)


class _TraceState(threading.local):
    def __init__(self) -> None:
        self.trace: Trace = eval_trace
        # The named axes collectives may reduce over, innermost last: (name, size) pairs
        # pushed by vmap (and pmap) for the extent of the mapped function.
        self.axis_env: tuple[tuple[Any, int], ...] = ()
        # The manual axes whose varying values are tracked in types (`tracking_varying_axes`).
        self.varying_order: tuple = ()


eval_trace = EvalTrace()
trace_state = _TraceState()


def current_trace() -> Trace:
    return trace_state.trace


@contextlib.contextmanager
def set_current_trace(trace: Trace) -> Iterator[None]:
    """Makes `trace` the current trace for the body of the `with`."""
    previous = trace_state.trace
    trace_state.trace = trace
    try:
        yield
    finally:
        trace_state.trace = previous


@contextlib.contextmanager
def take_current_trace() -> Iterator[Trace]:
    """Yields the current trace, with evaluation current in the body (JAX's way for a
    transformation to start: it stacks its trace on the one it took)."""
    previous = trace_state.trace
    trace_state.trace = eval_trace
    try:
        yield previous
    finally:
        trace_state.trace = previous


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Evaluation is the current trace in the body: operations run on concrete values."""
    with set_current_trace(eval_trace):
        yield


def find_top_trace(_: Any = None) -> Trace:
    """The current trace (with stackless tracing it is the innermost one, whatever the
    arguments)."""
    return trace_state.trace


def trace_stack(trace: Trace) -> list[Trace]:
    """`trace` and the traces it stands on, outermost first."""
    stack = [trace]
    while hasattr(stack[-1], "parent_trace"):
        stack.append(stack[-1].parent_trace)
    return stack[::-1]


class OpaqueTraceState:
    """Which trace is current, comparable with `==` and nothing else (libraries use it to
    tell whether code runs under the transformation that created an object)."""

    __slots__ = ("_trace_ref",)

    def __init__(self, trace: Trace) -> None:
        self._trace_ref = weakref.ref(trace)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    def __hash__(self) -> int:
        return hash(self._trace_ref)


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    """The current trace, as an opaque value (`jax.extend.core.get_opaque_trace_state`)."""
    return OpaqueTraceState(trace_state.trace)


def unsafe_am_i_under_a_jit() -> bool:
    return any(t.describe() == "DynamicJaxprTrace" for t in trace_stack(trace_state.trace))


def unsafe_am_i_under_a_vmap() -> bool:
    return any(type(t).__name__ == "BatchTrace" for t in trace_stack(trace_state.trace))


def unsafe_get_axis_names() -> list[Any]:
    return [name for name, _ in trace_state.axis_env]


def nonempty_axis_env() -> bool:
    return bool(trace_state.axis_env)


def trace_state_clean() -> bool:
    """Whether no transformation is running: the current trace is the eager one and no
    axis is bound (numpyro caches closures only then)."""
    return trace_state.trace is eval_trace and not trace_state.axis_env


@contextlib.contextmanager
def extend_axis_env(name: Any, size: int) -> Iterator[None]:
    """Makes the axis `name` of size `size` visible to collectives in the `with` body."""
    previous = trace_state.axis_env
    trace_state.axis_env = previous + ((name, size),)
    try:
        yield
    finally:
        trace_state.axis_env = previous


def axis_size(name: Any) -> int | None:
    """The size of the innermost bound axis called `name`, or None when it is unbound."""
    for bound, size in reversed(trace_state.axis_env):
        if bound == name:
            return size
    return None


_tag_counter = itertools.count()


class TraceTag:
    """Identifies one transformation application (one call of jvp, vmap, ...)."""

    __slots__ = ("id",)

    def __init__(self) -> None:
        self.id = next(_tag_counter)

    def __repr__(self) -> str:
        return f"TraceTag({self.id})"


def _leaked_tracer_type(tracer: Tracer) -> str:
    # grad's tracers are JVPTracers of a LinearizeTrace here; JAX names them LinearizeTracer.
    if type(tracer._trace).__name__ == "LinearizeTrace":
        return "LinearizeTracer"
    return type(tracer).__name__


def _leak_origin(tracer: Tracer) -> str:
    """JAX's lines naming the function a staging trace was tracing when the value leaked.
    Tracers do not record where they were created, so that part is left blank, as JAX leaves
    it for a leaked argument."""
    debug = getattr(tracer._trace, "debug", None)
    if debug is None:
        return ""
    rule = "-" * 30
    return (f"The function being traced when the value leaked was {debug.func_src_info} "
            f"traced for {debug.traced_for}.\n{rule}\n"
            f"The leaked intermediate value was created on line . \n{rule}\n"
            "When the value was created, the final 5 stack frames (most recent last) "
            f"excluding JAX-internal frames were:\n{rule}\n\n{rule}\n\n")


def escaped_tracer_error(tracer: Tracer) -> errors.UnexpectedTracerError:
    """JAX's error for a tracer used after its transformation ended, naming the function
    whose trace it leaked from when that is known."""
    return errors.UnexpectedTracerError(
        "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
        "allowing for a reference to an intermediate value with type "
        f"{tracer.aval.str_short(short_dtypes=False)} wrapped in a "
        f"{_leaked_tracer_type(tracer)} to escape the scope of the transformation.\n"
        "JAX transformations require that functions explicitly return their outputs, and "
        "disallow saving intermediate values to global state.\n"
        f"{_leak_origin(tracer)}"
        "To catch the leak earlier, try setting the environment variable "
        "JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager.\n"
        "See https://docs.jax.dev/en/latest/errors.html#jax.errors.UnexpectedTracerError")


# ---------------------------------------------------------------------------------------------
# Tracers.

class Tracer:
    """A value being traced. Operators and array methods are installed by the numpy layer."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def sharding(self) -> Any:
        """Not known while tracing (JAX's AttributeError, so `hasattr` is False)."""
        raise AttributeError("The 'sharding' attribute is not available on traced array with "
                             f"shape {self.aval.str_short(short_dtypes=False)}. To query "
                             "sharding information on tracers, use `jax.typeof(x)`.")

    def _origin_msg(self) -> str:
        return self._trace.describe_tracer(self) if hasattr(self._trace, "describe_tracer") else ""

    def to_concrete_value(self) -> Any:
        """The concrete value this tracer stands for, or None. Differentiation tracers know
        their primal, which is why Python control flow works under `grad`."""
        return None

    def __bool__(self) -> bool:
        value = self.to_concrete_value()
        if value is not None:
            return bool(value)
        raise errors.TracerBoolConversionError(self)

    def __index__(self) -> int:
        value = self.to_concrete_value()
        if value is not None:
            return operator.index(value)
        raise errors.TracerIntegerConversionError(self)

    def __int__(self) -> int:
        value = self.to_concrete_value()
        if value is not None:
            return int(value)
        raise errors.ConcretizationTypeError(self, _conversion_context("int"))

    def __float__(self) -> float:
        raise errors.ConcretizationTypeError(self, _conversion_context("float"))

    def __complex__(self) -> complex:
        raise errors.ConcretizationTypeError(self, _conversion_context("complex"))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise errors.TracerArrayConversionError(self)

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __setitem__(self, index: Any, value: Any) -> None:
        raise immutable_error(self)

    def __repr__(self) -> str:
        weak = "~" if self.aval.weak_type else ""
        return f"{self._trace.tracer_name}({weak}{self.aval.str_short(short_dtypes=False)})"

    def tolist(self) -> Any:
        # JAX's message names the traced function twice: once in its context, once after.
        origin = self._origin_msg()
        raise errors.ConcretizationTypeError(
            self, f"The tolist() method was called on traced array with shape "
                  f"{self.aval.str_short(short_dtypes=False)}." + (f"\n{origin}" if origin else ""))

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        origin = self._origin_msg()
        raise errors.ConcretizationTypeError(
            self, f"The __dlpack__() method was called on traced array with shape "
                  f"{self.aval.str_short(short_dtypes=False)}." + (f"\n{origin}" if origin else ""))

    def item(self, *args: Any) -> Any:
        raise errors.ConcretizationTypeError(self, "This occurred in the item() method of jax.Array")


def _conversion_context(fn: str) -> str:
    return (f"The problem arose with the `{fn}` function. If trying to convert the data type of a "
            f"value, try using `x.astype({fn})` or `jnp.array(x, {fn})` instead.")


def immutable_error(x: Any) -> TypeError:
    return TypeError(
        "JAX arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def canonicalize_shape(shape: Any, context: str = "") -> tuple[int, ...]:
    """A shape argument as a tuple of ints; JAX's TypeError for traced or non-integer entries."""
    if isinstance(shape, (int, np.integer)) or (hasattr(shape, "shape") and np.shape(shape) == ()
                                                and not isinstance(shape, Tracer)):
        shape = (shape,)
    try:
        entries = list(shape)
    except TypeError:
        entries = [shape]
    result = []
    for d in entries:
        if isinstance(d, shape_poly.DimExpr):
            result.append(d)
            continue
        if isinstance(d, Tracer) or not (isinstance(d, (int, np.integer)) or
                                         (hasattr(d, "dtype") and np.shape(d) == ()
                                          and np.issubdtype(d.dtype, np.integer))):
            message = ("Shapes must be 1D sequences of concrete values of integer type, "
                       f"got {shape!r}.")
            tracers = [t for t in entries if isinstance(t, Tracer)]
            if tracers:
                message += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to "
                            "smaller subfunctions.")
                origin = tracers[0]._origin_msg()
                if origin:
                    message += f"\n{origin}"
            if context:
                message += f"\n{context}"
            raise TypeError(message)
        result.append(operator.index(d))
    return tuple(result)


def to_concrete_value(x: Any) -> Any:
    """`x` itself if it is not a tracer, the value a tracer knows it stands for, or None."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return x


def concrete_or_error(force: Callable[[Any], Any], value: Any, context: str = "") -> Any:
    """`force(value)` if `value` is concrete, else JAX's ConcretizationTypeError."""
    if isinstance(value, Tracer):
        concrete = value.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(value, context)
        value = concrete
    return force(value)


def concrete_dim(value: Any, context: str = "") -> int:
    if isinstance(value, shape_poly.DimExpr):
        return value  # a symbolic dimension is a static one
    if isinstance(value, Tracer):
        concrete = value.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(
                value, f"{context}The size argument must be a concrete (static) integer. ")
        value = concrete
    return operator.index(value)


def is_concrete(x: Any) -> bool:
    return to_concrete_value(x) is not None


# ---------------------------------------------------------------------------------------------
# Small public helpers of `jax.core`.

ParamDict = dict[str, Any]
Value = Any


# Symbolic dimensions (`core/shape_poly.py`), under `jax.core`'s names.
max_dim = shape_poly.max_dim
min_dim = shape_poly.min_dim
InconclusiveDimensionOperation = shape_poly.InconclusiveDimensionOperation
is_symbolic_dim = shape_poly.is_symbolic_dim
is_constant_shape = shape_poly.is_constant_shape


def is_constant_dim(d: Any) -> bool:
    """Whether `d` is a known integer (not a symbolic dimension)."""
    return not shape_poly.is_symbolic_dim(d)


def typeof(x: Any) -> ShapedArray:
    """The abstract value (JAX type) of `x`, a tracer or a concrete value (`jax.typeof`):
    `typeof(jnp.ones(3))` is `ShapedArray(float32[3])`, `typeof(1.0)` a weak float32 scalar.

    Raises:
      TypeError: `x` is not a valid JAX type (JAX's message).
    """
    try:
        return get_aval(x)
    except TypeError:
        if isinstance(x, Tracer) or any(cls in pytype_aval_mappings for cls in type(x).__mro__):
            raise  # a known type with an invalid value (an object array): its own message
        kind = type(x) if isinstance(x, str) else f"'{type(x)}'"
        raise TypeError(f"Argument '{x}' of type {kind} is not a valid JAX type") from None


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Evaluates operations on concrete values at once in the body, even while tracing for
    `jit` (`jax.ensure_compile_time_eval`): `jnp.sin(3.0)` inside a jitted function gives an
    Array (usable in Python control flow) instead of a tracer. Operations on tracers are
    staged as usual. The setting holds in the current thread."""
    with eager_constant_folding(True):
        yield
