"""Automatic differentiation: forward mode (JVPTrace), linearization and transposition.

- `jvp`: a JVPTrace carries (primal, tangent) pairs; tangents may be the symbolic `Zero`.
- `linearize`: jvp whose tangents live in a `TangentStagingTrace` (partial evaluation): every
  operation touching a tangent is staged into a linear jaxpr, everything else runs on the
  parent trace. The primal values the linear jaxpr reads become its constvars: the residuals.
- `backward_pass`: transposes a linear jaxpr, summing cotangents with `add_any`.

Each primitive registers its rules here, beside its definition in `_src/lax`:
`primitive_jvps[prim] = rule(primals, tangents, **params) -> (primal_out, tangent_out)` and
`primitive_transposes[prim] = rule(ct, *args, **params) -> cts`, where the linear arguments
are `UndefinedPrimal`s. The helpers `defjvp`, `defjvp2`, `deflinear` and `defbilinear` keep
the common cases to one line.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import (ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal,
                                     PrettyContext, Var, equation_context, pp_eqn_default,
                                     pp_eqn_rules)
from justjax._src.interpreters import lowering, staging
from justjax._src.runtime.array import from_numpy, to_numpy

primitive_jvps: dict[core.Primitive, Callable] = {}
primitive_transposes: dict[core.Primitive, Callable] = {}


# ---------------------------------------------------------------------------------------------
# Tangent avals and symbolic zeros.

def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The type of a tangent for values of type `aval`: float0 for integers and booleans."""
    return aval.to_tangent_aval()


class Zero:
    """A symbolic zero tangent or cotangent of type `aval`; no array is ever built for it."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"

    @staticmethod
    def from_primal_value(value: Any) -> Zero:
        return Zero(tangent_aval(core.get_aval(value)))


def zeros_like_aval(aval: ShapedArray) -> Any:
    """Zeros of type `aval` (a NumPy array for float0, as JAX returns), made on the current
    trace by the builder lax registers (`broadcast_in_dim 0.0` when staged, as in JAX)."""
    if aval.dtype == dtypes.float0 and (
            not aval.shape or isinstance(core.current_trace(), core.EvalTrace)):
        return np.zeros(aval.shape, dtypes.float0)
    if zeros_builder is None:
        raise RuntimeError("justjax.lax must be imported before differentiating")
    return zeros_builder(aval)


# Set by `_src/lax/structural.py`: the transforms layer may not import lax, whose broadcast
# is what JAX stages for a zero tangent.
zeros_builder: Callable[[ShapedArray], Any] | None = None


def instantiate_zeros(tangent: Any) -> Any:
    if type(tangent) is Zero:
        return zeros_like_aval(tangent.aval)
    return tangent


def instantiate_carry_zeros(tangent: Any) -> Any:
    """`instantiate_zeros` for the initial tangent of a loop carry: under linearize the zeros
    are an equation of the linear jaxpr, as in JAX."""
    trace = core.current_trace()
    if type(tangent) is Zero and isinstance(trace, TangentStagingTrace):
        return trace.zeros(tangent.aval)
    return instantiate_zeros(tangent)


def is_float0(x: Any) -> bool:
    dtype = getattr(x, "dtype", np.float32)
    # Key arrays have an extended dtype, which NumPy cannot interpret.
    if type(x) is Zero or isinstance(dtype, dtypes.ExtendedDType):
        return False
    return np.dtype(dtype) == dtypes.float0


# `add_any` sums tangents and cotangents (JAX's `add_jaxvals`): same types in, same type out.
add_jaxvals_p = core.Primitive("add_any")


@add_jaxvals_p.def_abstract_eval
def _add_any_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(f"add_any got incompatible types {x.str_short()} and {y.str_short()}")
    return x.update(weak_type=x.weak_type and y.weak_type)


def _add_any_impl(x: Any, y: Any) -> Any:
    aval = _add_any_abstract_eval(core.get_aval(x), core.get_aval(y))
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    with np.errstate(all="ignore"):
        total = np.add(to_numpy(x, aval.dtype, elementwise=True),
                       to_numpy(y, aval.dtype, elementwise=True))
    return from_numpy(total, aval)


core.impl_rules[add_jaxvals_p] = _add_any_impl
# `stablehlo.add`, as JAX lowers it (bool for float0 tangents).
lowering.register_lowering(add_jaxvals_p, lowering.elementwise("stablehlo.add"))


def add_jaxvals(x: Any, y: Any) -> Any:
    """`add_any` of two tangents (or cotangents)."""
    return add_jaxvals_p.bind(x, y)


def get_primitive_transpose(primitive: core.Primitive) -> Callable:
    """The transpose rule of `primitive`."""
    try:
        return primitive_transposes[primitive]
    except KeyError:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{primitive.name}' not implemented") from None


def add_tangents(x: Any, y: Any) -> Any:
    """x + y for tangents or cotangents, keeping symbolic zeros symbolic."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_jaxvals_p.bind(x, y)


# ---------------------------------------------------------------------------------------------
# Rule helpers.

def defjvp(primitive: core.Primitive, *jvp_rules: Callable | None) -> None:
    """One rule per argument: `rule(tangent, *primals, **params)` gives that argument's
    contribution to the output tangent (None: the output does not depend on it smoothly)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        primal_out = primitive.bind(*primals, **params)
        tangent_out = _sum_contributions(jvp_rules, primals, tangents, params, (), primal_out)
        return primal_out, tangent_out

    primitive_jvps[primitive] = jvp


def defjvp2(primitive: core.Primitive, *jvp_rules: Callable | None) -> None:
    """Like `defjvp`, but each rule also gets the primal output: `rule(g, ans, *primals)`."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        primal_out = primitive.bind(*primals, **params)
        tangent_out = _sum_contributions(jvp_rules, primals, tangents, params, (primal_out,),
                                         primal_out)
        return primal_out, tangent_out

    primitive_jvps[primitive] = jvp


def _sum_contributions(rules: Sequence[Callable | None], primals: Sequence[Any],
                       tangents: Sequence[Any], params: dict, extra: tuple, primal_out: Any
                       ) -> Any:
    # Every contribution is computed before any is summed, as JAX does: it fixes where the
    # `add_any` equations land in a staged jaxpr.
    contributions = [rule(tangent, *extra, *primals, **params)
                     for rule, tangent in zip(rules, tangents)
                     if rule is not None and type(tangent) is not Zero]
    if not contributions:
        return Zero(tangent_aval(core.get_aval(primal_out)))
    total = contributions[0]
    for contribution in contributions[1:]:
        total = add_tangents(total, contribution)
    return total


def defjvp_zero(primitive: core.Primitive) -> None:
    """The output does not vary smoothly with any input (comparisons, integer results)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        primal_out = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return primal_out, [Zero.from_primal_value(p) for p in primal_out]
        return primal_out, Zero.from_primal_value(primal_out)

    primitive_jvps[primitive] = jvp


def deflinear(primitive: core.Primitive, transpose_rule: Callable) -> None:
    """A primitive linear in all its arguments: `transpose_rule(ct, **params) -> cts`."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        primal_out = primitive.bind(*primals, **params)
        tangent_out = primitive.bind(*[instantiate_zeros(t) for t in tangents], **params)
        return primal_out, tangent_out

    def transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return transpose_rule(ct, **params)

    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = transpose


def deflinear2(primitive: core.Primitive, transpose_rule: Callable) -> None:
    """Like `deflinear`, but the transpose rule sees the arguments:
    `transpose_rule(ct, *args, **params)` (linear ones are UndefinedPrimal)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        primal_out = primitive.bind(*primals, **params)
        tangent_out = primitive.bind(*[instantiate_zeros(t) for t in tangents], **params)
        return primal_out, tangent_out

    def transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return transpose_rule(ct, *args, **params)

    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = transpose


def defbilinear(primitive: core.Primitive, lhs_rule: Callable, rhs_rule: Callable) -> None:
    """A primitive linear in each of its two arguments separately (mul, dot_general, conv).

    `lhs_rule(ct, x, y, **params)` is the cotangent of x when x is the linear argument (an
    UndefinedPrimal); `rhs_rule` likewise for y.
    """
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        x, y = primals
        tx, ty = tangents
        primal_out = primitive.bind(x, y, **params)
        tangent_out: Any = Zero(tangent_aval(core.get_aval(primal_out)))
        if type(tx) is not Zero:
            tangent_out = primitive.bind(tx, y, **params)
        if type(ty) is not Zero:
            tangent_out = add_tangents(tangent_out, primitive.bind(x, ty, **params))
        return primal_out, tangent_out

    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> list[Any]:
        if type(ct) is Zero:
            return [Zero(x.aval) if is_undefined_primal(x) else None,
                    Zero(y.aval) if is_undefined_primal(y) else None]
        if is_undefined_primal(x) and is_undefined_primal(y):
            raise ValueError(f"{primitive} transpose: both arguments are linear, so the "
                             "program is not linear in them")
        if is_undefined_primal(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]

    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = transpose


def _add_any_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct if is_undefined_primal(x) else None, ct if is_undefined_primal(y) else None]


def _add_any_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, y = primals
    return add_jaxvals_p.bind(x, y), add_tangents(*tangents)


primitive_jvps[add_jaxvals_p] = _add_any_jvp
primitive_transposes[add_jaxvals_p] = _add_any_transpose


# ---------------------------------------------------------------------------------------------
# Forward mode.

class JVPTracer(core.Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return core.get_aval(self.primal)

    def to_concrete_value(self) -> Any:
        return core.to_concrete_value(self.primal)

    def __repr__(self) -> str:
        return self._trace.tracer_repr(self)


class JVPTrace(core.Trace):
    """Forward-mode differentiation: each value is a (primal, tangent) pair."""

    tracer_name = "JVPTracer"

    def __init__(self, parent_trace: core.Trace, tag: core.TraceTag) -> None:
        super().__init__()
        self.parent_trace = parent_trace
        self.tag = tag

    def tracer_repr(self, tracer: JVPTracer) -> str:
        tangent = tracer.tangent
        shown = "Zero" if type(tangent) is Zero else repr(tangent)
        return f"JVPTracer(primal={tracer.primal!r}, tangent={shown})"

    def describe_tracer(self, tracer: core.Tracer) -> str:
        primal = tracer.primal
        if isinstance(primal, core.Tracer):
            return primal._origin_msg()
        return ""

    def new_tracer(self, primal: Any, tangent: Any) -> Any:
        # A float0 tangent (an integer's) is zero too, as in JAX: rules then see `Zero`, and
        # a primitive all of whose tangents are zero (an integer-only one) needs no rule.
        if type(tangent) is Zero or is_float0(tangent):
            return primal
        return JVPTracer(self, primal, tangent)

    def to_primal_tangent_pair(self, value: Any) -> tuple[Any, Any]:
        if isinstance(value, JVPTracer) and value._trace.tag is self.tag:
            if not value._trace.is_valid():
                raise core.escaped_tracer_error(value)
            return value.primal, value.tangent
        return value, Zero.from_primal_value(value)

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict
                          ) -> Any:
        primals, tangents = zip(*[self.to_primal_tangent_pair(a) for a in args]) if args else ((), ())
        if all(type(t) is Zero for t in tangents):
            with core.set_current_trace(self.parent_trace):
                return primitive.bind(*primals, **params)
        rule = primitive_jvps.get(primitive)
        if rule is None:
            raise NotImplementedError(
                f"Differentiation rule for '{primitive.name}' not implemented")
        # The rule gets tuples, as JAX passes them (libraries' rules build in_axes from them).
        with core.set_current_trace(self.parent_trace):
            primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.new_tracer(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.new_tracer(primal_out, tangent_out)

    def process_custom_jvp_call(self, primitive: core.Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Runs the user's rule instead of differentiating `fun` (which runs on the parent
        trace when no input is perturbed). Without `symbolic_zeros` the rule gets zeros as
        arrays; tangent outputs it returns as `Zero`s stay symbolic."""
        pairs = [self.to_primal_tangent_pair(a) for a in args]
        primals, tangents = [p for p, _ in pairs], [t for _, t in pairs]
        if all(type(t) is Zero for t in tangents):
            return primitive.bind_with_trace(self.parent_trace, fun, jvp, primals,
                                             symbolic_zeros=symbolic_zeros)
        with core.set_current_trace(self.parent_trace):
            if not symbolic_zeros:
                tangents = [instantiate_zeros(t) for t in tangents]
            primal_out, tangent_out = jvp(primals, tangents)
        return [self.new_tracer(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]

    def process_custom_vjp_call(self, primitive: core.Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        """Runs the user's fwd on the parent trace and stands for the derivative with one
        `custom_lin` equation, which only transposition can evaluate (by calling bwd)."""
        pairs = [self.to_primal_tangent_pair(a) for a in args]
        primals, tangents = [p for p, _ in pairs], [t for _, t in pairs]
        if all(type(t) is Zero for t in tangents):
            return primitive.bind_with_trace(self.parent_trace, fun, fwd, bwd, primals,
                                             symbolic_zeros=symbolic_zeros)
        in_zeros = [type(t) is Zero for t in tangents]
        with core.set_current_trace(self.parent_trace):
            residuals, primal_out = fwd(primals, [not z for z in in_zeros])
            out_avals = tuple(tangent_aval(core.get_aval(p)) for p in primal_out)
            tangent_out = custom_lin_p.bind(
                *residuals, *[t for t in tangents if type(t) is not Zero],
                num_res=len(residuals), bwd=bwd, out_avals=out_avals,
                symbolic_zeros=symbolic_zeros, in_zeros=in_zeros)
        return [self.new_tracer(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]


# `custom_lin` stands for the linear map of a custom_vjp function inside a linear jaxpr. Its
# operands are the residuals, then the tangents of the perturbed inputs (`in_zeros` marks
# the others); it has no forward-mode meaning and transposes by calling the user's bwd.
custom_lin_p = core.Primitive("custom_lin", multiple_results=True)


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals: ShapedArray, num_res: int, bwd: Callable,
                              out_avals: Sequence[ShapedArray], symbolic_zeros: bool,
                              in_zeros: Sequence[bool]) -> list[ShapedArray]:
    return list(out_avals)


def _custom_lin_impl(*args: Any, **params: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


core.impl_rules[custom_lin_p] = _custom_lin_impl


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, num_res: int, bwd: Callable,
                          out_avals: Sequence[ShapedArray], symbolic_zeros: bool,
                          in_zeros: Sequence[bool]) -> list[Any]:
    residuals = args[:num_res]
    if not symbolic_zeros:
        cts = [instantiate_zeros(ct) for ct in cts]
    cts_in = bwd(list(residuals), list(cts))
    return [None] * num_res + [ct for ct, z in zip(cts_in, in_zeros, strict=True) if not z]


primitive_transposes[custom_lin_p] = _custom_lin_transpose


def _pp_custom_lin(eqn: JaxprEqn, context: PrettyContext) -> Any:
    params = {k: v for k, v in eqn.params.items() if k != "out_avals"}
    params["bwd"] = getattr(params["bwd"], "name", None) or getattr(params["bwd"], "__name__",
                                                                     repr(params["bwd"]))
    return pp_eqn_default(eqn, context, params)


pp_eqn_rules[custom_lin_p] = _pp_custom_lin


def _run_jvp(trace: JVPTrace, fun: Callable[..., Any], primals: Sequence[Any],
             tangents: Sequence[Any], has_aux: bool) -> tuple[list[Any], list[Any], list[Any]]:
    """Calls `fun` on (primal, tangent) pairs under `trace`; its primal and tangent outputs
    and its aux leaves (primals only), with the trace closed afterwards."""
    in_tracers = [trace.new_tracer(p, t) for p, t in zip(primals, tangents, strict=True)]
    try:
        with core.set_current_trace(trace):
            outs = fun(*in_tracers)
        outs, aux = outs if has_aux else (outs, [])
        pairs = [trace.to_primal_tangent_pair(o) for o in outs]
        # Aux leaves may be any Python values (strings, ...): only this trace's tracers
        # are stripped.
        aux = [trace.to_primal_tangent_pair(a)[0] if isinstance(a, JVPTracer) else a
               for a in aux]
    finally:
        trace.invalidate()
    return [p for p, _ in pairs], [t for _, t in pairs], aux


def jvp_flat(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
             *, instantiate: bool = True, has_aux: bool = False) -> tuple[list[Any], ...]:
    """Forward-mode derivative of a flat function: its primal and tangent outputs.

    `tangents` may hold `Zero`s; with `instantiate`, zero output tangents become arrays.
    With `has_aux`, `fun` returns `(outputs, aux_leaves)` and the aux leaves (stripped of
    this transformation) are returned third.
    """
    trace = JVPTrace(core.current_trace(), core.TraceTag())
    primal_outs, tangent_outs, aux = _run_jvp(trace, fun, primals, tangents, has_aux)
    if instantiate:
        tangent_outs = [instantiate_zeros(t) for t in tangent_outs]
    if has_aux:
        return primal_outs, tangent_outs, aux
    return primal_outs, tangent_outs


# ---------------------------------------------------------------------------------------------
# Linearization: jvp with the tangent computation staged (partial evaluation).

class TangentStagingTrace(staging.DynamicJaxprTrace):
    """Partial evaluation for linearize: operations reading one of this trace's tracers (the
    unknown tangents) are staged into the linear jaxpr; all others (the known primals) run
    on the parent trace. Known values a staged equation reads become residual constvars."""

    tracer_name = "GradTracer"

    def __init__(self, parent_trace: core.Trace, *, inline_arrays: bool = True) -> None:
        """`inline_arrays=False` (linearizing a function): known Arrays the tangent equations
        read are residuals, scalar or not, kept as constvars, the leaves of the pullback's
        pytree (JAX's `jax.vjp` keeps them so). Splitting a jaxpr keeps its scalar literals
        literal."""
        super().__init__(debug=None)
        self.inline_arrays = inline_arrays
        self.parent_trace = parent_trace
        self._staging_zeros = False

    def describe(self) -> str:
        return "LinearizeTrace"

    def zeros(self, aval: ShapedArray) -> Any:
        """Zeros built as equations of the linear jaxpr rather than on the parent: a loop's
        zero initial carry tangent is part of the tangent computation, and JAX's linear
        jaxpr builds it there (so a grad jaxpr prints it after the forward pass)."""
        self._staging_zeros = True
        try:
            return zeros_like_aval(aval)
        finally:
            self._staging_zeros = False

    def release(self) -> None:
        """Drops the tables once the linear jaxpr is built: its tracers point back at this
        trace, and the cycle would keep the parent's residual values alive until the next
        garbage collection."""
        self.constvars = {}
        self.eqns = []
        self.invars = []

    def _is_unknown(self, value: Any) -> bool:
        return isinstance(value, staging.DynamicJaxprTracer) and value._trace is self

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict
                          ) -> Any:
        if not self._staging_zeros and not any(self._is_unknown(a) for a in args):
            with core.set_current_trace(self.parent_trace):
                return primitive.bind(*args, **params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None:
            return rule(self, args, params)
        return super().process_primitive(primitive, args, params)

    def process_custom_jvp_call(self, primitive: core.Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Known calls run on the parent. A call reading a tangent (a rule applied a
        custom_jvp function to tangents) is inlined into the linear jaxpr, as in JAX: the
        linear jaxpr is only transposed or evaluated, never differentiated, so its rule is
        not needed."""
        if not any(self._is_unknown(a) for a in args):
            return primitive.bind_with_trace(self.parent_trace, fun, jvp, args,
                                             symbolic_zeros=symbolic_zeros)
        return fun(*args)

    def process_custom_vjp_call(self, primitive: core.Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        """As `process_custom_jvp_call`."""
        if not any(self._is_unknown(a) for a in args):
            return primitive.bind_with_trace(self.parent_trace, fun, fwd, bwd, args,
                                             symbolic_zeros=symbolic_zeros)
        return super().process_custom_vjp_call(primitive, fun, fwd, bwd, args,
                                               symbolic_zeros=symbolic_zeros)


# primitive -> rule(trace, args, params): how a primitive with some unknown inputs is split
# between the parent trace and the linear jaxpr, when staging it whole is wrong (checkpoint).
partial_eval_rules: dict[core.Primitive, Callable] = {}


class LinearizeTrace(JVPTrace):
    """The JVPTrace used by linearize, vjp and grad; its tracers print as JAX's GradTracer."""

    tracer_name = "GradTracer"

    def tracer_repr(self, tracer: JVPTracer) -> str:
        return f"GradTracer(primal={tracer.primal!r}, typeof(tangent)={tracer.aval.str_short()})"

    def new_tracer(self, primal: Any, tangent: Any) -> Any:
        # A tangent that reads no input tangent is zero (tangents are linear in the inputs'),
        # though a rule may have built it as a value: keep it symbolic, as JAX does.
        if type(tangent) is not Zero and not self.parent_trace._is_unknown(tangent):
            tangent = Zero(tangent_aval(core.get_aval(primal)))
        return super().new_tracer(primal, tangent)


def linearize_flat(fun: Callable[..., Any], primals: Sequence[Any], *, has_aux: bool = False
                   ) -> tuple[Any, ...]:
    """The primal outputs of a flat function and its linearization at `primals`: a closed
    linear jaxpr from input tangents to output tangents, whose consts are the residuals.
    With `has_aux`, `fun` returns `(outputs, aux_leaves)`; the aux leaves come third."""
    parent = core.current_trace()
    staging_trace = TangentStagingTrace(parent, inline_arrays=False)
    tangent_args = []
    for p in primals:
        aval = tangent_aval(core.get_aval(p))
        arg = staging_trace.new_arg(aval)
        # Integer inputs have no tangent: a symbolic zero, though the jaxpr keeps its invar.
        tangent_args.append(Zero(aval) if aval.dtype == dtypes.float0 else arg)
    trace = LinearizeTrace(staging_trace, core.TraceTag())
    primal_outs, tangent_outs, aux = _run_jvp(trace, fun, primals, tangent_args, has_aux)
    if any(staging_trace._is_unknown(p) for p in primal_outs + aux):
        raise ValueError("Linearization failed to produce known values for all output primals. "
                         "This is typically caused by attempting to differentiate a function "
                         "uses an operation that does not support reverse-mode autodiff.")
    with core.set_current_trace(staging_trace):
        tangent_outs = [instantiate_zeros(t) for t in tangent_outs]
    linear = staging_trace.to_closed_jaxpr(tangent_outs)
    staging_trace.release()
    linear = _inputs_first(_without_dead_code(linear), primals)
    if has_aux:
        return primal_outs, linear, aux
    return primal_outs, linear


def _inputs_first(linear: ClosedJaxpr, primals: Sequence[Any]) -> ClosedJaxpr:
    """The residuals reordered as JAX orders them: the primal inputs the tangent computation
    reads come first, in argument order, then the computed ones in the order they are read."""
    position = {id(p): i for i, p in reversed(list(enumerate(primals)))}
    order = sorted(range(len(linear.consts)),
                   key=lambda k: (0, position[id(linear.consts[k])])
                   if id(linear.consts[k]) in position else (1, k))
    if order == list(range(len(order))):
        return linear
    jaxpr = linear.jaxpr.replace(constvars=[linear.jaxpr.constvars[k] for k in order])
    return ClosedJaxpr(jaxpr, [linear.consts[k] for k in order])


def _without_dead_code(linear: ClosedJaxpr) -> ClosedJaxpr:
    """The linear jaxpr without equations nothing reads, as JAX's linearization gives it: a
    call whose tangent output is unused then takes no residuals for it."""
    from justjax._src.interpreters import partial_eval  # it imports this module
    jaxpr, _ = partial_eval.dce_jaxpr(linear.jaxpr, True, instantiate=True)
    if len(jaxpr.eqns) == len(linear.jaxpr.eqns) and jaxpr.eqns == linear.jaxpr.eqns:
        return linear
    return ClosedJaxpr(jaxpr, linear.consts)


# ---------------------------------------------------------------------------------------------
# Transposition.

class UndefinedPrimal:
    """A linear argument of a transpose rule: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x: Any) -> bool:
    return type(x) is UndefinedPrimal


def call_cotangents(args: Sequence[Any], in_zeros: Sequence[bool], outs: Sequence[Any]
                    ) -> list[Any]:
    """A transpose rule's result for a call primitive (jit, remat, shard_map) whose transposed
    call returned `outs`, the nonzero cotangents of its linear operands: None for each
    non-linear operand, a symbolic Zero where `in_zeros` says so, else the next of `outs`."""
    out_iter, zero_iter = iter(outs), iter(in_zeros)
    result: list[Any] = []
    for arg in args:
        if not is_undefined_primal(arg):
            result.append(None)
        elif next(zero_iter):
            result.append(Zero(arg.aval))
        else:
            result.append(next(out_iter))
    return result


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], primals_in: Sequence[Any],
                  cotangents_out: Sequence[Any]) -> list[Any]:
    """Transposes `jaxpr`, linear in its `UndefinedPrimal` inputs.

    Equations that read no linear value are evaluated forward first (checkpointed bodies
    recompute their residuals this way); the linear ones are then transposed in reverse
    order. Returns the cotangent of each input (`Zero` where none flowed; None for known
    inputs).
    """
    # In an equation context, as JAX: jaxprs the rules trace are not those user code traced.
    with equation_context():
        return _backward_pass(jaxpr, consts, primals_in, cotangents_out)


def _backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], primals_in: Sequence[Any],
                   cotangents_out: Sequence[Any]) -> list[Any]:
    primal_env: dict[Var, Any] = {}
    linear_vars: set[Var] = set()
    ct_env: dict[Var, Any] = {}

    def read_primal(atom: Any) -> Any:
        if isinstance(atom, Literal):
            return atom.val
        if atom in linear_vars:
            return UndefinedPrimal(atom.aval)
        return primal_env[atom]

    def read_ct(var: Any) -> Any:
        if isinstance(var, Literal) or isinstance(var, DropVar):
            return Zero(tangent_aval(var.aval))
        return ct_env.pop(var, Zero(tangent_aval(var.aval)))

    def write_ct(var: Any, ct: Any) -> None:
        if ct is None or isinstance(var, Literal) or var not in linear_vars:
            return
        if type(ct) is Zero:
            return
        ct_env[var] = add_tangents(ct_env[var], ct) if var in ct_env else ct

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        primal_env[var] = value
    for var, value in zip(jaxpr.invars, primals_in, strict=True):
        if is_undefined_primal(value):
            linear_vars.add(var)
        else:
            primal_env[var] = value

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and v in linear_vars for v in eqn.invars):
            linear_eqns.append(eqn)
            linear_vars.update(v for v in eqn.outvars if not isinstance(v, DropVar))
            continue
        outs = eqn.primitive.bind(*[read_primal(v) for v in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            if not isinstance(var, DropVar):
                primal_env[var] = value

    for var, ct in zip(jaxpr.outvars, cotangents_out, strict=True):
        write_ct(var, ct)

    for eqn in reversed(linear_eqns):
        cts_in = [read_ct(v) for v in eqn.outvars]
        if all(type(ct) is Zero for ct in cts_in):
            continue
        rule = primitive_transposes.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{eqn.primitive.name}' not implemented")
        invals = [read_primal(v) for v in eqn.invars]
        ct_arg = cts_in if eqn.primitive.multiple_results else cts_in[0]
        cts_out = rule(ct_arg, *invals, **eqn.params)
        for var, ct in zip(eqn.invars, cts_out, strict=True):
            if isinstance(var, Var):
                write_ct(var, ct)

    return [read_ct(v) if is_undefined_primal(p) else None
            for v, p in zip(jaxpr.invars, primals_in, strict=True)]


def transpose_closed_jaxpr(linear: ClosedJaxpr, cotangents_out: Sequence[Any]) -> list[Any]:
    """Cotangents of all inputs of a linear closed jaxpr (every invar is linear)."""
    undefined = [UndefinedPrimal(v.aval) for v in linear.jaxpr.invars]
    return backward_pass(linear.jaxpr, linear.consts, undefined, cotangents_out)


def vjp_flat(fun: Callable[..., Any], primals: Sequence[Any], *, has_aux: bool = False
             ) -> tuple[Any, ...]:
    """Primal outputs of a flat function and a function mapping output cotangents (arrays or
    `Zero`s) to input cotangents (arrays; float0 zeros for integer inputs). With `has_aux`,
    as `linearize_flat`."""
    primal_outs, linear, *aux = linearize_flat(fun, primals, has_aux=has_aux)
    return (primal_outs, functools.partial(pull_back, linear), *aux)


def pull_back(linear: ClosedJaxpr, cotangents: Sequence[Any]) -> list[Any]:
    """The input cotangents (arrays; float0 zeros for integer inputs) of a linearization
    for output cotangents (arrays or `Zero`s)."""
    return [instantiate_zeros(ct) for ct in transpose_closed_jaxpr(linear, cotangents)]
