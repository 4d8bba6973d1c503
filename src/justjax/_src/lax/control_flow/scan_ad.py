"""Reverse-mode rules of `scan`: partial evaluation (linearize, vjp, grad), the rule splitting
a scan inside `checkpoint`, and transposition.

- Partial evaluation splits a scan with some unknown operands (tangents, under linearize)
  into a known scan, run now, and an unknown scan, staged. Which carries are unknown is a
  fixpoint: a carry whose output depends on an unknown value is unknown from the start. The
  known scan returns its outputs and the residuals the unknown body reads, stacked along the
  scan axis; residuals that are known consts or xs are passed to the unknown scan directly
  (not returned again), and residuals computed from consts alone are hoisted out of the loop
  and become consts of the unknown scan, as JAX does. The unknown scan's operands are
  `[loop-invariant residuals, unknown consts, unknown carries, unknown xs, stacked
  residuals]`.
- Transposition runs a scan in the opposite direction: the loop-invariant residuals stay
  consts; the cotangents of the linear consts (accumulated over the iterations) and of the
  carries are its carries; the cotangents of the ys and the stacked residuals are its xs;
  the cotangents of the linear xs are its ys.
- Under `checkpoint`, `partial_eval_jaxpr_custom` splits the body by the policy; the known
  scan returns the saved residuals stacked, the staged scan takes every operand again.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from justjax._src.interpreters import ad, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax.control_flow.scan import scan_p


def _split3(items: Sequence[Any], num_consts: int, num_carry: int
            ) -> tuple[list[Any], list[Any], list[Any]]:
    """`items` split as a scan's operands: (consts, carries, xs)."""
    items = list(items)
    return (items[:num_consts], items[num_consts:num_consts + num_carry],
            items[num_consts + num_carry:])


def _stacked_aval(length: int, aval: ShapedArray) -> ShapedArray:
    """`aval` with a leading scan axis of size `length` (a stacked y or residual)."""
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


def _or(xs: Sequence[bool], ys: Sequence[bool]) -> list[bool]:
    return list(map(operator.or_, xs, ys))


# ---------------------------------------------------------------------------------------------
# Partial evaluation (linearize): a known scan computing the known outputs and the
# residuals, and a staged unknown scan reading them.

def _hoist_loop_invariants(known: ClosedJaxpr, consts: Sequence[Any], num_res: int
                           ) -> tuple[ClosedJaxpr, list[Any], list[bool], list[Any]]:
    """Moves what the known body computes from its consts alone out of the loop, as JAX does:
    it runs now, on the current trace, once.

    Args:
      known: the known body, from known consts, carries and xs to its outputs followed by
        `num_res` residuals.
      consts: the values of its consts.
    Returns:
      The loop body (without the hoisted residuals; its leading inputs are new consts), the
      values of those consts, which residuals were hoisted, and the hoisted residuals.
    """
    num_loop_ins = len(known.in_avals) - len(consts)
    linear = [False] * len(consts) + [True] * num_loop_ins
    body = pe.partial_eval_linear(known, [*consts, *[None] * num_loop_ins], linear)
    jaxpr = body.jaxpr
    const_values = dict(zip(jaxpr.constvars, body.consts, strict=True))
    num_outs = len(jaxpr.outvars) - num_res
    hoisted, hoisted_values = [], []
    for atom in jaxpr.outvars[num_outs:]:
        if isinstance(atom, Literal):
            hoisted.append(True)
            hoisted_values.append(atom.val)
        elif atom in const_values:
            hoisted.append(True)
            hoisted_values.append(const_values[atom])
        else:
            hoisted.append(False)
    res_outvars = [v for v, h in zip(jaxpr.outvars[num_outs:], hoisted, strict=True) if not h]
    jaxpr = jaxpr.replace(outvars=[*jaxpr.outvars[:num_outs], *res_outvars])
    constvars = _jax_constvar_order(jaxpr)
    loop = pe.convert_constvars_jaxpr(jaxpr.replace(constvars=constvars))
    loop, used = pe.dce_jaxpr(loop, True,
                              instantiate=[False] * len(constvars) + [True] * num_loop_ins)
    loop_consts = [const_values[v] for v, u in zip(constvars, used, strict=False) if u]
    return (pe.close_jaxpr(pe.name_unused_outputs(loop)), loop_consts, hoisted,
            hoisted_values)


class _Node:
    """A value in the dependency graph `_jax_constvar_order` sorts."""

    __slots__ = ("parents", "constvar")

    def __init__(self, parents: Sequence[_Node] = (), constvar: Var | None = None) -> None:
        self.parents = parents
        self.constvar = constvar


def _toposort(end_nodes: Sequence[_Node]) -> list[_Node]:
    """JAX's topological sort (`jaxlib.utils.topological_sort` over `parents`): parents
    before children, ties broken as its depth-first counting leaves them."""
    unique = list({id(n): n for n in end_nodes}.values())
    child_counts: dict[int, int] = {}
    stack = list(unique)
    while stack:
        node = stack.pop()
        if id(node) in child_counts:
            child_counts[id(node)] += 1
        else:
            child_counts[id(node)] = 1
            stack.extend(node.parents)
    for node in unique:
        child_counts[id(node)] -= 1
    ordered = []
    childless = [n for n in unique if child_counts[id(n)] == 0]
    while childless:
        node = childless.pop()
        ordered.append(node)
        for parent in node.parents:
            if child_counts[id(parent)] == 1:
                childless.append(parent)
            else:
                child_counts[id(parent)] -= 1
    return ordered[::-1]


def _jax_constvar_order(jaxpr: Jaxpr) -> list[Var]:
    """`jaxpr`'s constvars in the order JAX's partial evaluation lists the consts of the
    jaxpr it builds from tracers: a topological sort of the values from the inputs and
    outputs, where every use of a constant is a node of its own (JAX instantiates a
    constant anew for each equation reading it)."""
    constvars = set(jaxpr.constvars)
    env: dict[Var, _Node] = {v: _Node() for v in jaxpr.invars}

    def use(atom: Any) -> _Node:
        if isinstance(atom, Literal):
            return _Node()
        if atom in constvars:
            return _Node(constvar=atom)
        return env[atom]

    for eqn in jaxpr.eqns:
        parents = [use(a) for a in eqn.invars]
        env.update((v, _Node(parents)) for v in eqn.outvars)
    outs = [use(a) for a in jaxpr.outvars]
    ordered = _toposort([*[env[v] for v in jaxpr.invars], *outs])
    found = list({n.constvar: None for n in ordered if n.constvar is not None})
    # Constvars nothing reaches go last (dead-code elimination drops them).
    return found + [v for v in jaxpr.constvars if v not in set(found)]


def _unknown_carries(jaxpr: ClosedJaxpr, num_carry: int, const_uk: list[bool],
                     carry_uk: list[bool], xs_uk: list[bool], forwardable: tuple[bool, ...]
                     ) -> tuple[list[bool], tuple]:
    """The fixpoint of which carries are unknown, and the body split for it."""
    num_ys = len(jaxpr.out_avals) - num_carry
    for _ in range(1 + num_carry):
        split = pe.split_jaxpr(jaxpr, tuple(const_uk + carry_uk + xs_uk),
                               tuple(carry_uk + [False] * num_ys), forwardable, "loop")
        carry_uk_out = list(split[2][:num_carry])
        if carry_uk_out == carry_uk:
            return carry_uk, split
        carry_uk = _or(carry_uk, carry_uk_out)
    raise AssertionError("scan partial evaluation: the carry fixpoint was not reached")


def _scan_partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                       ) -> list[Any]:
    """Splits a scan some of whose operands are unknown: the known scan runs on the parent
    trace, the unknown one is staged into `trace` (see the module docstring)."""
    jaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    unknowns = [trace._is_unknown(a) for a in args]
    const_uk, carry_uk, xs_uk = _split3(unknowns, num_consts, num_carry)
    # As JAX, residuals are never read off carries (their value changes every iteration)
    # nor NumPy arrays (which would become constants of the staged jaxpr).
    forwardable = tuple((i < num_consts or i >= num_consts + num_carry)
                        and not isinstance(a, np.ndarray) for i, a in enumerate(args))
    carry_uk, (known, unknown, out_unknowns, sources) = _unknown_carries(
        jaxpr, num_carry, const_uk, carry_uk, xs_uk, forwardable)
    unknowns = const_uk + carry_uk + xs_uk
    known_ins, unknown_ins = pe.partition_list(unknowns, args)
    num_known_consts = num_consts - sum(const_uk)
    num_known_carry = num_carry - sum(carry_uk)
    num_known_outs = len(out_unknowns) - sum(out_unknowns)
    num_computed = sum(kind == "res" for kind, _ in sources)

    with core.set_current_trace(trace.parent_trace):
        loop, loop_consts, hoisted, hoisted_values = _hoist_loop_invariants(
            known, known_ins[:num_known_consts], num_computed)
        known_outs: list[Any] = []
        if loop.jaxpr.outvars or pe.jaxpr_has_effects(loop.jaxpr):
            known_outs = scan_p.bind(
                *loop_consts, *known_ins[num_known_consts:], **dict(
                    params, jaxpr=loop, num_consts=len(loop_consts),
                    num_carry=num_known_carry))
    known_outs, stacked = known_outs[:num_known_outs], iter(known_outs[num_known_outs:])
    computed = iter(pe.merge_lists(hoisted, list(stacked), hoisted_values))

    # Each residual is loop-invariant (a const of the unknown scan) or extensive (an x).
    residuals, extensive = [], []
    first_known_x = num_known_consts + num_known_carry
    for kind, where in sources:
        if kind == "const":
            residuals.append(where)
            extensive.append(False)
        elif kind == "in":
            residuals.append(known_ins[where])
            extensive.append(where >= first_known_x)
        else:
            is_hoisted = hoisted[where]
            residuals.append(next(computed))
            extensive.append(not is_hoisted)
    invariant_res, extensive_res = pe.partition_list(extensive, residuals)
    num_res = len(residuals)
    res_vars, in_vars = unknown.jaxpr.invars[:num_res], unknown.jaxpr.invars[num_res:]
    invariant_vars, extensive_vars = pe.partition_list(extensive, res_vars)
    unknown_body = ClosedJaxpr(
        unknown.jaxpr.replace(invars=[*invariant_vars, *in_vars, *extensive_vars]),
        unknown.consts)
    staged_params = dict(params, jaxpr=unknown_body,
                         num_consts=len(invariant_res) + sum(const_uk), num_carry=sum(carry_uk))
    unknown_outs = staging.DynamicJaxprTrace.process_primitive(
        trace, scan_p, [*invariant_res, *unknown_ins, *extensive_res], staged_params)
    return pe.merge_lists(list(out_unknowns), known_outs, unknown_outs)


ad.partial_eval_rules[scan_p] = _scan_partial_eval


# ---------------------------------------------------------------------------------------------
# Transposition: a scan in the opposite direction.

@pe.transform_cache
def _transpose_body(jaxpr: ClosedJaxpr, num_carry: int, consts_lin: tuple[bool, ...],
                    xs_lin: tuple[bool, ...]) -> ClosedJaxpr:
    """The body of the transposed scan.

    `jaxpr` is linear in its carries and in the consts and xs flagged linear. The result maps
    `[non-linear consts, const cotangents, carry cotangents, y cotangents, non-linear xs]` to
    `[const cotangents, carry cotangents, x cotangents of the linear xs]`; it first
    recomputes what does not depend on the linear inputs, then transposes the rest.
    """
    num_consts = len(consts_lin)
    const_avals, _, x_avals = _split3(jaxpr.in_avals, num_consts, num_carry)
    in_linear = [*consts_lin, *[True] * num_carry, *xs_lin]
    nonlinear_consts, linear_consts = pe.partition_list(consts_lin, const_avals)
    nonlinear_xs, _ = pe.partition_list(xs_lin, x_avals)
    # The carries' cotangents are those of the carry outputs, which come first.
    ct_avals = [ad.tangent_aval(a) for a in [*linear_consts, *jaxpr.out_avals]]
    num_linear_consts = len(linear_consts)

    def transposed(*args: Any) -> list[Any]:
        ires = args[:len(nonlinear_consts)]
        cts = args[len(nonlinear_consts):len(nonlinear_consts) + len(ct_avals)]
        eres = args[len(nonlinear_consts) + len(ct_avals):]
        nonlinear = pe.merge_lists(in_linear, [*ires, *eres], [None] * sum(in_linear))
        linear_jaxpr = pe.partial_eval_linear(jaxpr, nonlinear, in_linear)
        body = linear_jaxpr.jaxpr
        # The consts' cotangents accumulate onto the incoming ones, which are written
        # first, as JAX's accumulators start from them: listing the consts' inputs as
        # leading outputs makes the backward pass seed them before anything else.
        seeded = body.replace(outvars=[*body.invars[:num_linear_consts], *body.outvars])
        undefined = [ad.UndefinedPrimal(v.aval) for v in body.invars]
        in_cts = ad.backward_pass(seeded, linear_jaxpr.consts, undefined, list(cts))
        return [ad.instantiate_zeros(ct) for ct in in_cts]

    closed = staging.trace_to_jaxpr(transposed, [*nonlinear_consts, *ct_avals, *nonlinear_xs])
    return ClosedJaxpr(pe.name_unused_outputs(closed.jaxpr), closed.consts)


def _scan_transpose(cts: Sequence[Any], *args: Any, reverse: bool, length: int,
                    jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, unroll: int
                    ) -> list[Any]:
    """Cotangents of a scan's linear operands: a scan in the opposite direction carrying
    the consts' and carries' cotangents and producing the linear xs' as ys."""
    linear = [ad.is_undefined_primal(a) for a in args]
    consts, carry, xs = _split3(args, num_consts, num_carry)
    consts_lin, _, xs_lin = _split3(linear, num_consts, num_carry)
    ires, linear_consts = pe.partition_list(consts_lin, consts)
    eres, _ = pe.partition_list(xs_lin, xs)
    # Every carry is transposed as linear: one that is a value here (a zero the derivative
    # instantiated) simply gets no cotangent.
    ct_carry, ct_ys = list(cts[:num_carry]), list(cts[num_carry:])
    ct_ys = [ad.instantiate_zeros(ct) for ct in ct_ys]
    ct_carry = [ad.instantiate_zeros(ct) for ct in ct_carry]
    ct_consts = [ad.zeros_like_aval(ad.tangent_aval(c.aval)) for c in linear_consts]
    body = _transpose_body(jaxpr, num_carry, tuple(consts_lin), tuple(xs_lin))
    outs = scan_p.bind(*ires, *ct_consts, *ct_carry, *ct_ys, *eres, reverse=not reverse,
                       length=length, jaxpr=body, num_consts=len(ires),
                       num_carry=len(ct_consts) + num_carry, unroll=unroll)
    ct_consts_out, ct_init, ct_xs = _split3(outs, len(ct_consts), num_carry)
    ct_consts_out, ct_xs = iter(ct_consts_out), iter(ct_xs)
    result = [next(ct_consts_out) if lin else None for lin in consts_lin]
    result += [ct if ad.is_undefined_primal(c) else None
               for c, ct in zip(carry, ct_init, strict=True)]
    result += [next(ct_xs) if lin else None for lin in xs_lin]
    return result


ad.primitive_transposes[scan_p] = _scan_transpose


# ---------------------------------------------------------------------------------------------
# Checkpoint: a scan inside a function `checkpoint` splits by its policy.

def _scan_partial_eval_custom(saveable: Any, unks_in: Sequence[bool], inst_in: Sequence[bool],
                              eqn: JaxprEqn
                              ) -> tuple[JaxprEqn | None, JaxprEqn, list[bool], list[bool],
                                         list[Var]]:
    """`partial_eval_jaxpr_custom` rule: the known scan runs the known part of the body and
    returns the residuals the policy saves, stacked; the staged scan takes every operand (the
    known ones too, so that what is not saved is recomputed) and the residuals as xs."""
    params = eqn.params
    jaxpr, length = params["jaxpr"], params["length"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    num_ys = len(jaxpr.out_avals) - num_carry
    const_uk, carry_uk, xs_uk = _split3(unks_in, num_consts, num_carry)
    for _ in range(1 + num_carry):
        unknowns = const_uk + carry_uk + xs_uk
        known, staged, unks_out, inst_out, num_res = pe.partial_eval_jaxpr_custom(
            jaxpr.jaxpr, unknowns, True, carry_uk + [False] * num_ys, True, saveable)
        carry_uk_out = unks_out[:num_carry]
        if carry_uk_out == carry_uk:
            break
        carry_uk = _or(carry_uk, carry_uk_out)
    else:
        raise AssertionError("scan checkpoint rule: the carry fixpoint was not reached")

    # The residuals are extensive: the staged body reads them as its last xs.
    res_vars = staged.invars[:num_res]
    staged = staged.replace(invars=[*staged.invars[num_res:], *res_vars])
    stacked = [Var(_stacked_aval(length, v.aval)) for v in res_vars]
    ins_known, _ = pe.partition_list(unknowns, eqn.invars)
    outs_known, _ = pe.partition_list(unks_out, eqn.outvars)
    eqn_known = None
    if known.outvars or pe.jaxpr_has_effects(known):
        known_params = dict(params, jaxpr=ClosedJaxpr(pe.name_unused_outputs(known),
                                                      jaxpr.consts),
                            num_consts=num_consts - sum(const_uk),
                            num_carry=num_carry - sum(carry_uk))
        eqn_known = eqn.replace(invars=ins_known, outvars=[*outs_known, *stacked],
                                params=known_params)
    _, outs_staged = pe.partition_list(inst_out, eqn.outvars)
    staged_params = dict(params, jaxpr=ClosedJaxpr(pe.name_unused_outputs(staged),
                                                   jaxpr.consts))
    eqn_staged = eqn.replace(invars=[*eqn.invars, *stacked], outvars=outs_staged,
                             params=staged_params)
    # Known operands the staged scan reads that the staged side does not have yet.
    new_inst = [v for v, inst in zip(eqn.invars, inst_in, strict=True)
                if isinstance(v, Var) and not inst]
    return eqn_known, eqn_staged, list(unks_out), list(inst_out), [*new_inst, *stacked]


pe.partial_eval_jaxpr_custom_rules[scan_p] = _scan_partial_eval_custom
