"""The `jit` primitive: a call of a closed jaxpr, compiled as one program.

Params, as JAX's (the sharding and layout params JAX also carries do not exist here):
`jaxpr` (ClosedJaxpr), `name` (the function's name), `donated_invars` (one bool per
operand), `keep_unused` and `inline`. Printing hides the trivial ones and names the inner
jaxpr's variables after the equation's, as JAX does: `jit[name=f jaxpr={ lambda ; ... }]`.

Every transform keeps the call a call: jvp, partial evaluation, transposition and batching
transform the inner jaxpr and bind `jit` again under the same name.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

from justjax._src.compilation import compiler
from justjax._src.compilation import execution
from justjax._src.core import core
from justjax._src.core import pretty as pp
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import (ClosedJaxpr, JaxprEqn, PrettyContext,
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
    executable = compiler.compile_jaxpr(jaxpr, name, donated_invars, keep_unused)
    return executable.call_flat(args)


core.impl_rules[jit_p] = _jit_impl
# A jit's results keep the shardings its body gives them (a pmap's, say).
execution.result_shardings[jit_p] = lambda eqn: execution.out_shardings(eqn.params["jaxpr"].jaxpr)


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

def _jit_partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                      ) -> list[Any]:
    in_unknowns = tuple(trace._is_unknown(a) for a in args)
    known, unknown, out_unknowns, sources = pe.split_jaxpr(params["jaxpr"], in_unknowns)
    known_args, unknown_args = pe.partition_list(in_unknowns, args)
    known_donated, _ = pe.partition_list(in_unknowns, params["donated_invars"])
    known_outs: list[Any] = []
    if known.jaxpr.outvars or pe.jaxpr_has_effects(known.jaxpr):
        with core.set_current_trace(trace.parent_trace):
            known_outs = jit_p.bind(*known_args, **_params_for(params, known, known_donated))
    num_known_outs = len(out_unknowns) - sum(out_unknowns)
    known_outs, extra = known_outs[:num_known_outs], known_outs[num_known_outs:]
    pools = {"in": known_args, "out": known_outs, "res": extra}
    residuals = [where if kind == "const" else pools[kind][where] for kind, where in sources]
    staged_args = [*residuals, *unknown_args]
    unknown_outs = staging.DynamicJaxprTrace.process_primitive(
        trace, jit_p, staged_args,
        _params_for(params, unknown, (False,) * len(staged_args)))
    return pe.merge_lists(list(out_unknowns), known_outs, unknown_outs)


ad.partial_eval_rules[jit_p] = _jit_partial_eval


def _jit_custom_params_updater(unks_in: Sequence[bool], inst_in: Sequence[bool],
                               kept_outs_known: Sequence[bool], inst_out: Sequence[bool],
                               num_res: int, params_known: dict, params_staged: dict
                               ) -> tuple[dict, dict]:
    donated = params_known["donated_invars"]
    known_donated, _ = pe.partition_list(unks_in, donated)
    _, staged_donated = pe.partition_list(inst_in, donated)
    return (dict(params_known, donated_invars=tuple(known_donated)),
            dict(params_staged, donated_invars=(False,) * num_res + tuple(staged_donated)))


# A jit inside a checkpointed function is split by the checkpoint's policy.
pe.partial_eval_jaxpr_custom_rules[jit_p] = functools.partial(
    pe.call_partial_eval_custom_rule, "jaxpr", _jit_custom_params_updater)


# ---------------------------------------------------------------------------------------------
# Transposition: a call of the transposed jaxpr.

def _jit_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    in_linear = [ad.is_undefined_primal(a) for a in args]
    out_zeros = [type(ct) is ad.Zero for ct in cts]
    transposed, in_zeros = pe.transpose_jaxpr(params["jaxpr"], in_linear, out_zeros)
    nonlinear_args = [a for a, lin in zip(args, in_linear, strict=True) if not lin]
    nonzero_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    operands = [*nonlinear_args, *nonzero_cts]
    outs = jit_p.bind(*operands, **_params_for(params, transposed, (False,) * len(operands)))
    return ad.call_cotangents(args, in_zeros, outs)


ad.primitive_transposes[jit_p] = _jit_transpose


# ---------------------------------------------------------------------------------------------
# Batching: a call of the batched jaxpr; outputs keep the batch dims they come out with.

@pe.transform_cache
def _batch_jaxpr(closed: ClosedJaxpr, axis_data: batching.AxisData,
                 dims: tuple[int | None, ...]) -> tuple[ClosedJaxpr, list[int | None]]:
    # Cached so that calling a vmapped jitted function again reuses one batched jaxpr (and
    # so one executable).
    return batching.batch_jaxpr(closed, axis_data, dims)


def _jit_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                 dims: Sequence[int | None], **params: Any) -> tuple[list[Any], list[Any]]:
    batched, out_dims = _batch_jaxpr(params["jaxpr"], axis_data, tuple(dims))
    outs = jit_p.bind(*vals, **_params_for(params, batched, params["donated_invars"]))
    return outs, out_dims


batching.primitive_batchers[jit_p] = _jit_batcher


# ---------------------------------------------------------------------------------------------
# Dead-code elimination: unused outputs go, and inputs the body no longer reads.

def _jit_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    # As in JAX, `keep_unused` governs only the jit's own compiled signature: an enclosing
    # program's dead-code elimination drops a nested jit's unread inputs all the same.
    new_closed, used_inputs = _dce_closed(eqn.params["jaxpr"], tuple(used_outputs))
    if new_closed is eqn.params["jaxpr"]:
        return list(used_inputs), eqn
    donated = [d for d, u in zip(eqn.params["donated_invars"], used_inputs, strict=True) if u]
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=_params_for(eqn.params, new_closed, donated))
    return list(used_inputs), new_eqn


@pe.transform_cache
def _dce_closed(closed: ClosedJaxpr, used_outputs: tuple[bool, ...]
                ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    # Cached, and `closed` itself when nothing is dropped, so that the jaxprs transposition
    # and batching cache on stay the same objects (and print once when shared).
    jaxpr, used_inputs = pe.dce_jaxpr(closed.jaxpr, used_outputs)
    if all(used_outputs) and all(used_inputs) and jaxpr.eqns == closed.jaxpr.eqns:
        return closed, tuple(used_inputs)
    return ClosedJaxpr(jaxpr, closed.consts), tuple(used_inputs)


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
    return pp_eqn_default(eqn, context, {"name": name, **dict(sorted(params.items()))},
                          sort_params=False)


pp_eqn_rules[jit_p] = _pp_jit
