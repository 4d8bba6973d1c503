"""The `jit` primitive: a call of a closed jaxpr, compiled as one program.

Params, as JAX's (the sharding and layout params JAX also carries do not exist here):
`jaxpr` (ClosedJaxpr), `name` (the function's name), `donated_invars` (one bool per
operand), `keep_unused` and `inline`. Printing hides the trivial ones and names the inner
jaxpr's variables after the equation's, as JAX does: `jit[name=f jaxpr={ lambda ; ... }]`.

Every transform keeps the call a call: jvp, partial evaluation, transposition and batching
transform the inner jaxpr and bind `jit` again under the same name.
"""
from __future__ import annotations

from typing import Any, Sequence

from justjax._src.core import core
from justjax._src.core import pretty as pp
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import (ClosedJaxpr, JaxprEqn, PrettyContext, eval_jaxpr,
                                     pp_eqn_default, pp_eqn_rules)
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe

jit_p = core.Primitive("jit", multiple_results=True)


def _jit_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, **params: Any
                       ) -> list[ShapedArray]:
    return list(jaxpr.out_avals)


jit_p.def_abstract_eval(_jit_abstract_eval)


def _jit_impl(*args: Any, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple[bool, ...],
              keep_unused: bool, inline: bool) -> list[Any]:
    """Runs the call: compiled once per jaxpr (and options), then executed."""
    from justjax._src import stages
    executable = stages.compile_jaxpr(jaxpr, name, donated_invars, keep_unused)
    return executable.call_flat(args)


core.impl_rules[jit_p] = _jit_impl


def bind_jit(closed: ClosedJaxpr, args: Sequence[Any], *, name: str,
             donated_invars: Sequence[bool] | None = None, keep_unused: bool = False,
             inline: bool = False) -> list[Any]:
    """Binds a `jit` equation calling `closed` on `args`."""
    if donated_invars is None:
        donated_invars = (False,) * len(args)
    return jit_p.bind(*args, jaxpr=closed, name=name, donated_invars=tuple(donated_invars),
                      keep_unused=keep_unused, inline=inline)


def _params_for(params: dict, jaxpr: ClosedJaxpr, donated: Sequence[bool]) -> dict:
    return dict(params, jaxpr=jaxpr, donated_invars=tuple(donated))


# ---------------------------------------------------------------------------------------------
# Forward mode: a call of the jvp jaxpr.

def _jit_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
             ) -> tuple[list[Any], list[Any]]:
    jaxpr = params["jaxpr"]
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = pe.jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    nonzero_tangents = [t for t in tangents if type(t) is not ad.Zero]
    donated = (*params["donated_invars"],
               *[d for d, nz in zip(params["donated_invars"], nonzeros, strict=True) if nz])
    outs = jit_p.bind(*primals, *nonzero_tangents, **_params_for(params, jvp_closed, donated))
    num_primal_outs = len(jaxpr.out_avals)
    primal_outs, tangent_outs = outs[:num_primal_outs], iter(outs[num_primal_outs:])
    tangents_out = [next(tangent_outs) if nz else ad.Zero.from_primal_value(p)
                    for p, nz in zip(primal_outs, out_nonzeros, strict=True)]
    return primal_outs, tangents_out


ad.primitive_jvps[jit_p] = _jit_jvp


# ---------------------------------------------------------------------------------------------
# Partial evaluation (linearize): the known part runs as one call now, returning residuals;
# the unknown part is staged as another call reading them.

def _is_unknown(trace: ad.TangentStagingTrace, value: Any) -> bool:
    return isinstance(value, staging.DynamicJaxprTracer) and value._trace is trace


@pe.transform_cache
def _split_jaxpr(closed: ClosedJaxpr, in_unknowns: tuple[bool, ...]
                 ) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], tuple[int | None, ...]]:
    """Splits `closed` into a known jaxpr (known inputs -> known outputs + residuals) and an
    unknown jaxpr (residuals + unknown inputs -> unknown outputs).

    Returns both, which outputs are unknown, and for each residual the index of the known
    input it is (JAX forwards such inputs instead of returning them) or None.
    """
    known_avals = [a for a, u in zip(closed.in_avals, in_unknowns, strict=True) if not u]
    unknown_avals = [a for a, u in zip(closed.in_avals, in_unknowns, strict=True) if u]
    found: dict[str, Any] = {}

    def known_fun(*known_args: Any) -> list[Any]:
        unknown_trace = ad.TangentStagingTrace(core.current_trace())
        unknown_args = [unknown_trace.new_arg(a) for a in unknown_avals]
        args = pe.merge_lists(in_unknowns, list(known_args), unknown_args)
        with core.set_current_trace(unknown_trace):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        out_unknowns = [unknown_trace._is_unknown(o) for o in outs]
        unknown_outs = [o for o, u in zip(outs, out_unknowns, strict=True) if u]
        unknown_closed = unknown_trace.to_closed_jaxpr(unknown_outs)
        unknown_trace.release()
        residuals = list(unknown_closed.consts)
        forwarded = [next((i for i, a in enumerate(known_args) if a is r), None)
                     for r in residuals]
        found.update(unknown=unknown_closed.jaxpr, out_unknowns=tuple(out_unknowns),
                     forwarded=tuple(forwarded))
        known_outs = [o for o, u in zip(outs, out_unknowns, strict=True) if not u]
        return [*known_outs, *[r for r, f in zip(residuals, forwarded, strict=True)
                               if f is None]]

    known = staging.trace_to_jaxpr(known_fun, known_avals)
    unknown = pe.close_jaxpr(pe.name_unused_outputs(pe.convert_constvars_jaxpr(found["unknown"])))
    return known, unknown, found["out_unknowns"], found["forwarded"]


def _jit_partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                      ) -> list[Any]:
    in_unknowns = tuple(_is_unknown(trace, a) for a in args)
    known, unknown, out_unknowns, forwarded = _split_jaxpr(params["jaxpr"], in_unknowns)
    known_args, unknown_args = pe.partition_list(in_unknowns, args)
    known_donated, _ = pe.partition_list(in_unknowns, params["donated_invars"])
    with core.set_current_trace(trace.parent_trace):
        known_outs = jit_p.bind(*known_args, **_params_for(params, known, known_donated))
    num_known_outs = len(out_unknowns) - sum(out_unknowns)
    known_outs, computed_res = known_outs[:num_known_outs], iter(known_outs[num_known_outs:])
    residuals = [next(computed_res) if f is None else known_args[f] for f in forwarded]
    staged_args = [*residuals, *unknown_args]
    unknown_outs = staging.DynamicJaxprTrace.process_primitive(
        trace, jit_p, staged_args,
        _params_for(params, unknown, (False,) * len(staged_args)))
    return pe.merge_lists(list(out_unknowns), known_outs, unknown_outs)


ad.partial_eval_rules[jit_p] = _jit_partial_eval


# ---------------------------------------------------------------------------------------------
# Transposition: a call of the transposed jaxpr.

def _jit_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    in_linear = [ad.is_undefined_primal(a) for a in args]
    out_zeros = [type(ct) is ad.Zero for ct in cts]
    transposed, in_zeros = pe.transpose_jaxpr(params["jaxpr"], in_linear, out_zeros)
    nonlinear_args = [a for a, lin in zip(args, in_linear, strict=True) if not lin]
    nonzero_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    operands = [*nonlinear_args, *nonzero_cts]
    outs = iter(jit_p.bind(*operands, **_params_for(params, transposed,
                                                    (False,) * len(operands))))
    zeros = iter(in_zeros)
    result: list[Any] = []
    for arg in args:
        if not ad.is_undefined_primal(arg):
            result.append(None)
        elif next(zeros):
            result.append(ad.Zero(arg.aval))
        else:
            result.append(next(outs))
    return result


ad.primitive_transposes[jit_p] = _jit_transpose


# ---------------------------------------------------------------------------------------------
# Batching: a call of the batched jaxpr; outputs keep the batch dims they come out with.

def _jit_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                 dims: Sequence[int | None], **params: Any) -> tuple[list[Any], list[Any]]:
    batched, out_dims = batching.batch_jaxpr(params["jaxpr"], axis_data, dims)
    outs = jit_p.bind(*vals, **_params_for(params, batched, params["donated_invars"]))
    return outs, out_dims


batching.primitive_batchers[jit_p] = _jit_batcher


# ---------------------------------------------------------------------------------------------
# Dead-code elimination: unused outputs go, and inputs the body no longer reads (unless
# `keep_unused`).

def _jit_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    closed = eqn.params["jaxpr"]
    keep_inputs = eqn.params["keep_unused"]
    new_jaxpr, used_inputs = pe.dce_jaxpr(closed.jaxpr, used_outputs, instantiate=keep_inputs)
    donated = [d for d, u in zip(eqn.params["donated_invars"], used_inputs, strict=True) if u]
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=_params_for(eqn.params, ClosedJaxpr(new_jaxpr, closed.consts), donated))
    return used_inputs, new_eqn


pe.dce_rules[jit_p] = _jit_dce


# ---------------------------------------------------------------------------------------------
# Lowering: a private function and a `func.call` (inlined when `inline`).

def _jit_lowering(ctx: lowering.LoweringRuleContext, *args: Any, jaxpr: ClosedJaxpr,
                  name: str, inline: bool, **params: Any) -> list[Any]:
    if inline:
        return lowering.lower_closed_jaxpr_inline(ctx, jaxpr, args)
    return lowering.call_jaxpr(ctx, name, jaxpr, args)


lowering.register_lowering(jit_p, _jit_lowering)


# ---------------------------------------------------------------------------------------------
# Printing.

def _pp_jit(eqn: JaxprEqn, context: PrettyContext) -> pp.Doc:
    params = dict(eqn.params)
    del params["inline"]
    if not any(params["donated_invars"]):
        del params["donated_invars"]
    if not params["keep_unused"]:
        del params["keep_unused"]
    inner = params["jaxpr"].jaxpr
    if inner not in context.shared_jaxprs:
        context.suggest_same_var_names(inner.invars, eqn.invars)
        context.suggest_same_var_names(inner.outvars, eqn.outvars)
    # `name` first, the rest sorted, as JAX prints it.
    name = params.pop("name")
    return pp_eqn_default(eqn, context, {"name": name, **params}, sort_params=False)


pp_eqn_rules[jit_p] = _pp_jit
