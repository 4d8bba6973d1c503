"""`lax.while_loop` and the `while` primitive: abstract eval, eager execution, jvp, partial
evaluation (linearize and checkpoint), the transpose error, batching, lowering to
`stablehlo.while` and printing.

The primitive's params are JAX 0.10.2's: `cond_jaxpr` (a `ClosedJaxpr` from
`(cond consts, carry) -> bool[]`), `body_jaxpr` (from `(body consts, carry) -> carry`),
`cond_nconsts` and `body_nconsts`. The operands are `cond consts + body consts + carry`; the
results are the final carry. A batched predicate (vmap of a loop whose trip count differs per
lane) makes `cond_jaxpr` return `bool[n, ...]`: the loop runs while any lane is still going,
and the lowering keeps finished lanes' carries unchanged.

As in JAX, `while` has no dead-code elimination rule of its own: an equation with any used
output is kept whole, carries included (JAX's printed jaxprs and StableHLO keep them).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.compilation import dispatch
from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, JaxprEqn, Literal, Var
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import reductions
from justjax._src.lax.control_flow import common
from justjax._src.lax.joining import as_operand

__all__ = ["while_loop", "while_p"]

while_p = core.Primitive("while", multiple_results=True)


def _split3(items: Sequence[Any], cond_nconsts: int, body_nconsts: int
            ) -> tuple[list[Any], list[Any], list[Any]]:
    """(cond consts, body consts, carry) of a `while` equation's operands."""
    items = list(items)
    return (items[:cond_nconsts], items[cond_nconsts:cond_nconsts + body_nconsts],
            items[cond_nconsts + body_nconsts:])


# ---------------------------------------------------------------------------------------------
# The API.

def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """Calls `body_fun` on the carry while `cond_fun` of it is true, as `lax.while_loop`.

    Semantically `val = init_val; while cond_fun(val): val = body_fun(val); return val`, but
    staged as one `while` equation (lowered to one `stablehlo.while`): the carry keeps a
    fixed pytree structure, shapes and dtypes. Forward-mode differentiable and batchable;
    reverse-mode differentiation raises (the trip count is not known ahead).

    Args:
      cond_fun: carry -> boolean scalar.
      body_fun: carry -> carry of the same structure and types.
      init_val: the initial carry, any pytree of arrays and scalars.
    Returns:
      The final carry.
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.read("jax_disable_jit"):
        try:
            return _python_while_loop(cond_fun, body_fun, init_val)
        except errors.ConcretizationTypeError:
            # The predicate is traced (under vmap, say): stage the loop after all, as JAX.
            pass

    leaves, carry_tree = tree_util.tree_flatten(init_val)
    init_avals = [common.abstractify(x) for x in leaves]
    cond, body = _trace_loop(cond_fun, body_fun, carry_tree, init_avals)
    if len(body.out_avals) != len(init_avals):
        common.check_carry_type("while_loop body", body_fun, carry_tree, init_avals,
                                body.out_tree, body.out_avals)
    leaves, changed = common.promote_weak_carries(leaves, init_avals, body.out_avals)
    if changed:
        init_avals = [common.abstractify(x) for x in leaves]
        cond, body = _trace_loop(cond_fun, body_fun, carry_tree, init_avals)
    common.check_carry_type("while_loop body", body_fun, carry_tree, init_avals,
                            body.out_tree, body.out_avals)
    outs = _bind_while(cond, body, leaves)
    return tree_util.tree_unflatten(body.out_tree, outs)


def _python_while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """The loop run in Python, as JAX does under `disable_jit()`."""
    val = tree_util.tree_map(as_operand, init_val)
    while cond_fun(val):
        val = tree_util.tree_map(as_operand, body_fun(val))
    return val


def _trace_loop(cond_fun: Callable, body_fun: Callable, carry_tree: Any,
                init_avals: Sequence[ShapedArray]
                ) -> tuple[common.TracedFun, common.TracedFun]:
    """Traces the condition, then the body, on the carry avals; checks the condition returns
    one boolean scalar, with JAX's messages."""
    in_tree = tree_util.treedef_tuple([carry_tree])
    cond = common.trace_fun(cond_fun, in_tree, init_avals, "while_cond")
    body = common.trace_fun(body_fun, in_tree, init_avals, "while_body")
    if not tree_util.treedef_is_leaf(cond.out_tree) or len(cond.out_avals) != 1:
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree "
                        f"{cond.out_tree}.")
    pred = cond.out_avals[0]
    if pred.shape != () or pred.dtype != np.dtype(np.bool_):
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"{cond.out_avals}.")
    return cond, body


def _bind_while(cond: common.TracedFun, body: common.TracedFun, init: list[Any]) -> list[Any]:
    """Binds `while`. Carries the body returns unchanged and the condition does not read
    become body constants instead, as JAX does (a batched predicate then does not batch
    them)."""
    cond_jaxpr, body_jaxpr = cond.jaxpr, body.jaxpr
    body_consts = list(body.consts)
    nbody = len(body_consts)
    forwarded = common.forwarded_inputs(body_jaxpr.jaxpr)
    not_forwarded = [f != nbody + i for i, f in enumerate(forwarded)]
    pruned_cond, keep = pe.dce_jaxpr(cond_jaxpr.jaxpr, [True],
                                     instantiate=[True] * len(cond.consts) + not_forwarded)
    to_const = [not k for k in keep[len(cond.consts):]]
    moved: list[Any] = []
    if any(to_const):
        cond_jaxpr = pe.close_jaxpr(pruned_cond)
        body_jaxpr = _move_carries_to_consts(body_jaxpr, nbody, to_const)
        init, moved = pe.partition_list(to_const, init)
        body_consts = [*moved, *body_consts]
    outs = while_p.bind(*cond.consts, *body_consts, *init, cond_jaxpr=cond_jaxpr,
                        body_jaxpr=body_jaxpr, cond_nconsts=len(cond.consts),
                        body_nconsts=len(body_consts))
    if any(to_const):
        outs = pe.merge_lists(to_const, outs, moved)
    return outs


def _move_carries_to_consts(body: ClosedJaxpr, nconsts: int, to_const: Sequence[bool]
                            ) -> ClosedJaxpr:
    """`body` with the flagged carries' outputs dropped and their inputs moved in front of
    the body constants."""
    jaxpr = body.jaxpr
    consts, carries = jaxpr.invars[:nconsts], jaxpr.invars[nconsts:]
    kept, moved = pe.partition_list(to_const, carries)
    outvars = [v for v, m in zip(jaxpr.outvars, to_const, strict=True) if not m]
    return ClosedJaxpr(jaxpr.replace(invars=[*moved, *consts, *kept], outvars=outvars),
                       body.consts)


# ---------------------------------------------------------------------------------------------
# Abstract evaluation and eager execution.

def _while_abstract_eval(*avals: ShapedArray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                         cond_nconsts: int, body_nconsts: int) -> list[ShapedArray]:
    cond_consts, body_consts, carry = _split3(avals, cond_nconsts, body_nconsts)
    if len(cond_jaxpr.in_avals) != len(cond_consts) + len(carry):
        raise TypeError(f"while_loop len(cond_jaxpr.in_avals)={len(cond_jaxpr.in_avals)} but "
                        f"len(cond_consts_avals) + len(in_avals)="
                        f"{len(cond_consts) + len(carry)}")
    if len(body_jaxpr.in_avals) != len(body_consts) + len(carry):
        raise TypeError(f"while_loop len(body_jaxpr.in_avals)={len(body_jaxpr.in_avals)} but "
                        f"len(body_consts_avals) + len(in_avals)="
                        f"{len(body_consts) + len(carry)}")
    return list(body_jaxpr.out_avals)


while_p.def_abstract_eval(_while_abstract_eval)
# Eager loops run as one compiled program (the `stablehlo.while` lowering below).
dispatch.def_backend_impl(while_p)


# ---------------------------------------------------------------------------------------------
# Forward mode: tangents of the carries ride along as extra carries.

def _while_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, cond_jaxpr: ClosedJaxpr,
               body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int
               ) -> tuple[list[Any], list[Any]]:
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    _, bconst_nz, init_nz = _split3(nonzeros, cond_nconsts, body_nconsts)
    # Fixpoint on which carries have nonzero tangents: a carry whose tangent starts zero
    # may pick one up from another carry or a body constant in some iteration.
    carry_nz = init_nz
    for _ in range(1 + len(carry_nz)):
        body_jvp, out_nz = pe.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, instantiate=carry_nz)
        if out_nz == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, out_nz, strict=True)]
    else:
        raise AssertionError("while jvp: fixpoint not reached")

    cconst, bconst, init = _split3(primals, cond_nconsts, body_nconsts)
    _, bconst_dot, init_dot = _split3(tangents, cond_nconsts, body_nconsts)
    bconst_dot = [t for t in bconst_dot if type(t) is not ad.Zero]
    init_dot = [ad.instantiate_zeros(t) if nz else None
                for t, nz in zip(init_dot, carry_nz, strict=True)]
    init_dot = [t for t in init_dot if t is not None]

    body_aug = _jvp_body_binders(body_jvp, body_nconsts, len(init), len(bconst_dot),
                                 len(init_dot))
    cond_aug = ClosedJaxpr(cond_jaxpr.jaxpr.replace(
        invars=[*cond_jaxpr.jaxpr.invars, *[Var(core.get_aval(t)) for t in init_dot]]),
        cond_jaxpr.consts)
    outs = while_p.bind(*cconst, *bconst, *bconst_dot, *init, *init_dot,
                        cond_jaxpr=cond_aug, body_jaxpr=body_aug, cond_nconsts=cond_nconsts,
                        body_nconsts=len(bconst) + len(bconst_dot))
    out_carry, out_dots = outs[:len(init)], iter(outs[len(init):])
    out_tangents = [next(out_dots) if nz else ad.Zero.from_primal_value(p)
                    for p, nz in zip(out_carry, carry_nz, strict=True)]
    return out_carry, out_tangents


def _jvp_body_binders(body_jvp: ClosedJaxpr, nconsts: int, ncarry: int, nconst_dots: int,
                      ncarry_dots: int) -> ClosedJaxpr:
    """The jvp body with its inputs `(consts, carry, const tangents, carry tangents)`
    reordered to `(consts, const tangents, carry, carry tangents)`: the while operands'
    order, constants first."""
    invars = body_jvp.jaxpr.invars
    consts, carry = invars[:nconsts], invars[nconsts:nconsts + ncarry]
    rest = invars[nconsts + ncarry:]
    const_dots, carry_dots = rest[:nconst_dots], rest[nconst_dots:]
    if len(carry_dots) != ncarry_dots:
        raise AssertionError("while jvp: unexpected number of carry tangents")
    return ClosedJaxpr(body_jvp.jaxpr.replace(invars=[*consts, *const_dots, *carry,
                                                      *carry_dots]), body_jvp.consts)


ad.primitive_jvps[while_p] = _while_jvp


# ---------------------------------------------------------------------------------------------
# Partial evaluation. With the predicate known, the known carries come from a loop over the
# known part of the body; the unknown ones from the whole loop, staged (so the known part is
# computed twice, as in JAX). The staged loop cannot be transposed: reverse mode raises.

def _split_known(closed: ClosedJaxpr, unknowns: Sequence[bool], ensure_unknown: Sequence[bool]
                 ) -> tuple[ClosedJaxpr, list[bool]]:
    """The part of `closed` computable from its known inputs, as a closed jaxpr from the
    known inputs to the known outputs, and which outputs are unknown (`ensure_unknown` ones
    always are)."""
    nconsts = len(closed.consts)
    jaxpr = pe.convert_constvars_jaxpr(closed.jaxpr)
    known, _, out_unknowns, _, _ = pe.partial_eval_jaxpr_custom(
        jaxpr, [False] * nconsts + list(unknowns), in_inst=True,
        ensure_out_unknowns=list(ensure_unknown), ensure_out_inst=True, saveable=None)
    num_known = len(out_unknowns) - sum(out_unknowns)
    # The residuals the staged part would read are not outputs of a loop body: dropped (the
    # equations computing them stay, as in JAX).
    known = known.replace(constvars=known.invars[:nconsts], invars=known.invars[nconsts:],
                          outvars=known.outvars[:num_known])
    return ClosedJaxpr(known, closed.consts), out_unknowns


def _with_fresh_vars(closed: ClosedJaxpr) -> ClosedJaxpr:
    """A copy of `closed` with new variables, as JAX's partial evaluation for linearize
    traces the known part anew: split off another jaxpr, it shares that one's variables, and
    printed beside it would repeat its names."""
    jaxpr = closed.jaxpr
    new: dict[Var, Var] = {}

    def rename(atom: Any) -> Any:
        if isinstance(atom, Literal):
            return atom
        if atom not in new:
            new[atom] = Var(atom.aval)
        return new[atom]

    constvars = [rename(v) for v in jaxpr.constvars]
    invars = [rename(v) for v in jaxpr.invars]
    eqns = [eqn.replace(invars=[rename(a) for a in eqn.invars],
                        outvars=[rename(v) for v in eqn.outvars]) for eqn in jaxpr.eqns]
    return ClosedJaxpr(jaxpr.replace(constvars=constvars, invars=invars, eqns=eqns,
                                     outvars=[rename(v) for v in jaxpr.outvars]),
                       closed.consts)


def _unknown_carries(body_jaxpr: ClosedJaxpr, bconst_uk: Sequence[bool],
                     init_uk: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """Fixpoint on which carries are unknown; returns the known part of the body for them."""
    carry_uk = list(init_uk)
    for _ in range(1 + len(carry_uk)):
        body_known, out_uk = _split_known(body_jaxpr, [*bconst_uk, *carry_uk], carry_uk)
        if out_uk == carry_uk:
            return body_known, carry_uk
        carry_uk = [a or b for a, b in zip(carry_uk, out_uk, strict=True)]
    raise AssertionError("while partial eval: fixpoint not reached")


def _while_partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                        ) -> list[Any]:
    cond_nconsts, body_nconsts = params["cond_nconsts"], params["body_nconsts"]
    unknowns = [trace._is_unknown(a) for a in args]
    cconst_uk, bconst_uk, init_uk = _split3(unknowns, cond_nconsts, body_nconsts)
    body_known, carry_uk = _unknown_carries(params["body_jaxpr"], bconst_uk, init_uk)
    cond_known, (pred_uk,) = _split_known(params["cond_jaxpr"], [*cconst_uk, *carry_uk],
                                          [False])
    if pred_uk or all(unknowns) or not any(unknowns):
        return staging.DynamicJaxprTrace.process_primitive(trace, while_p, args, params)
    in_uk = [*cconst_uk, *bconst_uk, *carry_uk]
    known_args, _ = pe.partition_list(in_uk, args)
    with core.set_current_trace(trace.parent_trace):
        known_outs = while_p.bind(*known_args, cond_jaxpr=_with_fresh_vars(cond_known),
                                  body_jaxpr=_with_fresh_vars(body_known),
                                  cond_nconsts=len(cconst_uk) - sum(cconst_uk),
                                  body_nconsts=len(bconst_uk) - sum(bconst_uk))
    staged = staging.DynamicJaxprTrace.process_primitive(trace, while_p, args, params)
    _, unknown_outs = pe.partition_list(carry_uk, staged)
    return pe.merge_lists(carry_uk, known_outs, unknown_outs)


ad.partial_eval_rules[while_p] = _while_partial_eval


def _while_partial_eval_custom(saveable: Callable[..., Any], unks_in: Sequence[bool],
                               inst_in: Sequence[bool], eqn: JaxprEqn
                               ) -> tuple[JaxprEqn | None, JaxprEqn, list[bool], list[bool],
                                          list[Var]]:
    """Checkpoint's split of a `while` equation: nothing is saved (a loop has no residuals
    of static size); the known carries come from a loop over the known part of the body and
    the staged equation is the whole loop, reading every input."""
    params = eqn.params
    cond_nconsts, body_nconsts = params["cond_nconsts"], params["body_nconsts"]
    cconst_uk, bconst_uk, init_uk = _split3(unks_in, cond_nconsts, body_nconsts)
    body_known, carry_uk = _unknown_carries(params["body_jaxpr"], bconst_uk, init_uk)
    new_inst = [v for v, inst in zip(eqn.invars, inst_in, strict=True)
                if isinstance(v, Var) and not inst]
    cond_known, (pred_uk,) = _split_known(params["cond_jaxpr"], [*cconst_uk, *carry_uk],
                                          [False])
    if pred_uk:
        return None, eqn, [True] * len(carry_uk), [True] * len(carry_uk), new_inst
    in_uk = [*cconst_uk, *bconst_uk, *carry_uk]
    known_invars, _ = pe.partition_list(in_uk, eqn.invars)
    known_outvars, _ = pe.partition_list(carry_uk, eqn.outvars)
    eqn_known = eqn.replace(
        invars=known_invars, outvars=known_outvars,
        params=dict(cond_jaxpr=cond_known, body_jaxpr=body_known,
                    cond_nconsts=len(cconst_uk) - sum(cconst_uk),
                    body_nconsts=len(bconst_uk) - sum(bconst_uk)))
    return eqn_known, eqn, carry_uk, [True] * len(carry_uk), new_inst


pe.partial_eval_jaxpr_custom_rules[while_p] = _while_partial_eval_custom


def _while_transpose_error(*args: Any, **params: Any) -> list[Any]:
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                     "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                     "using fori_loop with static start/stop.")


ad.primitive_transposes[while_p] = _while_transpose_error


# ---------------------------------------------------------------------------------------------
# Batching.

def _batched_dims(flags: Sequence[bool]) -> list[int | None]:
    return [0 if b else None for b in flags]


def _while_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                   dims: Sequence[int | None], *, cond_jaxpr: ClosedJaxpr,
                   body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int
                   ) -> tuple[list[Any], list[int | None]]:
    cconst_dims, bconst_dims, init_dims = _split3(dims, cond_nconsts, body_nconsts)
    cconst_bat = [d is not None for d in cconst_dims]
    bconst_bat = [d is not None for d in bconst_dims]
    # Fixpoint on which carries are batched: batched initially, or made so by the body.
    carry_bat = [d is not None for d in init_dims]
    for _ in range(1 + len(carry_bat)):
        _, out_dims = batching.batch_jaxpr(
            body_jaxpr, axis_data, _batched_dims(bconst_bat + carry_bat),
            [0 if b else batching.zero_if_mapped for b in carry_bat])
        out_bat = [d is not None for d in out_dims]
        if out_bat == carry_bat:
            break
        carry_bat = [a or b for a, b in zip(carry_bat, out_bat, strict=True)]
    else:
        raise AssertionError("while batching: fixpoint not reached")
    _, (pred_dim,) = batching.batch_jaxpr(cond_jaxpr, axis_data,
                                          _batched_dims(cconst_bat + carry_bat),
                                          [batching.zero_if_mapped])
    if pred_dim is not None:
        # A per-lane predicate: every carry is batched, so that finished lanes can keep their
        # values while the others go on (the lowering selects per lane).
        carry_dims: list[int | None] = [0] * len(carry_bat)
        cond_out_dims: list[Any] = [0]
    else:
        # The predicate's rank leads every batched carry's dims (it is not 0 when an inner
        # vmap already batched the predicate), so the lowering's per-lane select still works.
        rank = len(cond_jaxpr.out_avals[0].shape)
        carry_dims = [rank if b else None for b in carry_bat]
        cond_out_dims = [None]
    body_batched, _ = batching.batch_jaxpr(body_jaxpr, axis_data, [*bconst_dims, *carry_dims],
                                           carry_dims)
    cond_batched, _ = batching.batch_jaxpr(cond_jaxpr, axis_data, [*cconst_dims, *carry_dims],
                                           cond_out_dims)
    cconsts, bconsts, init = _split3(vals, cond_nconsts, body_nconsts)
    new_init = [x if dst is None else batching.move_stacked_axis(x, src, dst, axis_data.size)
                for x, src, dst in zip(init, init_dims, carry_dims, strict=True)]
    outs = while_p.bind(*cconsts, *bconsts, *new_init,
                        cond_jaxpr=_param_jaxpr(cond_batched),
                        body_jaxpr=_param_jaxpr(body_batched),
                        cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    return outs, carry_dims


def _param_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """A traced jaxpr as a `while` param: every equation output named, as JAX prints
    jaxprs nested in params."""
    return ClosedJaxpr(pe.name_unused_outputs(closed.jaxpr), closed.consts)


batching.primitive_batchers[while_p] = _while_batcher


# ---------------------------------------------------------------------------------------------
# Lowering: one `stablehlo.while` whose loop values are the constants then the carries (the
# constants pass through the body unchanged), as JAX lowers it.

def _while_lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value,
                    cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                    body_nconsts: int) -> list[ir.Value]:
    pred_aval = cond_jaxpr.out_avals[0]
    types = [lowering.aval_to_type(a) for a in ctx.avals_in]

    cond_region, cb = ir.new_region(types)
    cconsts, _, carry = _split3(cond_region.block.args, cond_nconsts, body_nconsts)
    cond_ctx = ctx.replace(builder=cb)
    (pred,) = lowering.lower_closed_jaxpr_inline(cond_ctx, cond_jaxpr, [*cconsts, *carry])
    if pred_aval.shape:
        # A batched predicate: loop while any lane goes on.
        reduce_ctx = cond_ctx.replace(primitive=reductions.reduce_or_p, avals_in=(pred_aval,),
                                      avals_out=(ShapedArray((), np.dtype(np.bool_)),))
        pred = lowering.lowerings[reductions.reduce_or_p](
            reduce_ctx, pred, axes=tuple(range(len(pred_aval.shape))))
    cb.ret([pred])

    body_region, bb = ir.new_region(types)
    cconsts, bconsts, carry = _split3(body_region.block.args, cond_nconsts, body_nconsts)
    body_ctx = ctx.replace(builder=bb)
    new_carry = lowering.lower_closed_jaxpr_inline(body_ctx, body_jaxpr, [*bconsts, *carry])
    if pred_aval.shape:
        # Lanes whose predicate is false keep their carry: recompute it on the carry in and
        # select per lane between the new and the old values.
        (lane_pred,) = lowering.lower_closed_jaxpr_inline(body_ctx, cond_jaxpr,
                                                          [*cconsts, *carry])
        new_carry = [_select_lanes(bb, lane_pred, new, old)
                     for new, old in zip(new_carry, carry, strict=True)]
    bb.ret([*cconsts, *bconsts, *new_carry])

    op = ctx.builder.op("stablehlo.while", list(args), types,
                        regions=[cond_region, body_region])
    return list(op.results[cond_nconsts + body_nconsts:])


def _select_lanes(b: ir.Builder, pred: ir.Value, new: ir.Value, old: ir.Value) -> ir.Value:
    """`select(pred, new, old)` with `pred` broadcast along the carry's trailing dims."""
    mask = lowering.broadcast_in_dim(b, pred, new.type.shape, range(pred.type.rank))
    return b.one("stablehlo.select", [mask, new, old], new.type)


lowering.register_lowering(while_p, _while_lowering)
