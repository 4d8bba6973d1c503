"""Checkify rules of the primitives holding jaxprs: `jit`, `cond`, `scan`, `while`, `remat2`,
`shard_map`.

Each checkifies its jaxprs (`transform.checkify_closed_jaxpr`) and binds the primitive again
with the error's leaves as extra operands and results. Branches and loop bodies must take and
return errors of one structure, so the error entering them first gets placeholders for every
effect they can add (`transform.merged_error`). A `while` checks its condition once before the
loop and again after each step (inside the body); a batched predicate (checkify of vmap of
while) is not supported, as in JAX.
"""
from __future__ import annotations

from typing import Any, Sequence

from justjax._src.transformations import shard_map
from justjax._src.transformations.checkpoint import remat_p
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Var, eval_jaxpr
from justjax._src.interpreters import partial_eval as pe
from justjax._src.interpreters import staging
from justjax._src.compilation.jit_primitive import jit_p
from justjax._src.lax import structural
from justjax._src.lax.control_flow.conditionals import cond_p
from justjax._src.lax.control_flow.scan import scan_p
from justjax._src.lax.control_flow.while_loop import while_p
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.transformations.checkify.error import Error, error_from_leaves, error_leaves, sorted_effects
from justjax._src.transformations.checkify.transform import (
    checkify_closed_jaxpr, checkify_jaxpr, error_checks, merged_error, without_consts)


def _jit_error_check(error: Error, enabled_errors: frozenset, *args: Any, jaxpr: ClosedJaxpr,
                     donated_invars: tuple[bool, ...], **params: Any) -> tuple[Error, list]:
    effects = sorted_effects(error)
    checked = checkify_closed_jaxpr(jaxpr, enabled_errors, effects, 0)
    leaves = error_leaves(error, effects)
    outs = jit_p.bind(*leaves, *args, jaxpr=checked.jaxpr,
                      donated_invars=(False,) * len(leaves) + tuple(donated_invars), **params)
    return checked.error(outs, error._metadata), outs[checked.num_out_leaves:]


error_checks[jit_p] = _jit_error_check


def _pad_inputs(jaxpr: Jaxpr, before: Sequence[Var], after: Sequence[Var]) -> Jaxpr:
    """`jaxpr` with unused inputs of the avals of `before`/`after` around its constvars,
    which become inputs."""
    fresh = lambda vs: [Var(v.aval) for v in vs]  # noqa: E731
    return jaxpr.replace(constvars=[], invars=[*fresh(before), *jaxpr.constvars, *fresh(after),
                                               *jaxpr.invars])


def _hoist_branch_consts(branches: Sequence[ClosedJaxpr]) -> tuple[list[ClosedJaxpr], list]:
    """Branches without consts: each takes every branch's consts as leading operands."""
    constvars = [v for b in branches for v in b.jaxpr.constvars]
    consts = [c for b in branches for c in b.consts]
    hoisted, start = [], 0
    for branch in branches:
        end = start + len(branch.jaxpr.constvars)
        jaxpr = _pad_inputs(branch.jaxpr, constvars[:start], constvars[end:])
        hoisted.append(pe.close_jaxpr(jaxpr))
        start = end
    return hoisted, consts


def _cond_error_check(error: Error, enabled_errors: frozenset, index: Any, *ops: Any,
                      branches: tuple[ClosedJaxpr, ...]) -> tuple[Error, list]:
    error = merged_error(error, enabled_errors, branches, 0)
    effects = sorted_effects(error)
    checked = [checkify_closed_jaxpr(b, enabled_errors, effects, 0) for b in branches]
    new_branches, consts = _hoist_branch_consts([c.jaxpr for c in checked])
    leaves = error_leaves(error, effects)
    outs = cond_p.bind(index, *consts, *leaves, *ops, branches=tuple(new_branches))
    metadata = dict(error._metadata)
    for c in checked:
        metadata.update(c.metadata)
    return error_from_leaves(effects, outs[:len(leaves)], metadata), outs[len(leaves):]


error_checks[cond_p] = _cond_error_check


def _scan_error_check(error: Error, enabled_errors: frozenset, *args: Any, reverse: bool,
                      length: int, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                      **params: Any) -> tuple[Error, list]:
    # The error joins the carry: the body takes (consts, error, carry, xs).
    error = merged_error(error, enabled_errors, [jaxpr], num_consts)
    effects = sorted_effects(error)
    checked = checkify_closed_jaxpr(jaxpr, enabled_errors, effects, num_consts)
    body, body_consts = without_consts(checked.jaxpr)
    leaves = error_leaves(error, effects)
    consts, rest = args[:num_consts], args[num_consts:]
    outs = scan_p.bind(*body_consts, *consts, *leaves, *rest, reverse=reverse, length=length,
                       jaxpr=body, num_consts=len(body_consts) + num_consts,
                       num_carry=len(leaves) + num_carry, **params)
    return checked.error(outs, error._metadata), outs[len(leaves):]


error_checks[scan_p] = _scan_error_check


@pe.transform_cache
def _body_then_cond(cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                    body_nconsts: int) -> ClosedJaxpr:
    """(cond consts, body consts, carry) -> body's carry, the condition evaluated on it too
    (its checks then run after every step)."""
    def step(*xs: Any) -> list[Any]:
        cond_consts = xs[:cond_nconsts]
        outs = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *xs[cond_nconsts:])
        eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cond_consts, *outs)
        return outs

    avals = [*cond_jaxpr.in_avals[:cond_nconsts], *body_jaxpr.in_avals]
    return staging.trace_to_jaxpr(step, avals, body_jaxpr.jaxpr.debug_info)


def _while_error_check(error: Error, enabled_errors: frozenset, *args: Any,
                       cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                       body_nconsts: int) -> tuple[Error, list]:
    if cond_jaxpr.out_avals[0].shape:
        raise ValueError("Checkify does not support batched while-loops (checkify-of-vmap-of-"
                         "while). \nHint: if possible, move the vmap to the outer level to get "
                         "vmap-of-checkify-of-while.")
    carry = args[cond_nconsts + body_nconsts:]
    cond_jaxpr, cond_consts = _consts_first(cond_jaxpr, args[:cond_nconsts])
    body_jaxpr, body_consts = _consts_first(body_jaxpr,
                                            args[cond_nconsts:cond_nconsts + body_nconsts])
    cond_nconsts, body_nconsts = len(cond_consts), len(body_consts)
    # The condition's checks on the initial carry.
    error, _ = checkify_jaxpr(cond_jaxpr, enabled_errors, error, [*cond_consts, *carry])
    step = _body_then_cond(cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
    err_index = cond_nconsts + body_nconsts
    error = merged_error(error, enabled_errors, [step], err_index)
    effects = sorted_effects(error)
    checked = checkify_closed_jaxpr(step, enabled_errors, effects, err_index)
    body, step_consts = without_consts(checked.jaxpr)
    leaves = error_leaves(error, effects)
    cond, cond_extra = without_consts(_checked_cond(cond_jaxpr, enabled_errors, effects,
                                                    cond_nconsts))
    outs = while_p.bind(*cond_extra, *cond_consts, *step_consts, *cond_consts, *body_consts,
                        *leaves, *carry, cond_jaxpr=cond, body_jaxpr=body,
                        cond_nconsts=len(cond_extra) + cond_nconsts,
                        body_nconsts=len(step_consts) + cond_nconsts + body_nconsts)
    return checked.error(outs, error._metadata), outs[len(leaves):]


def _consts_first(closed: ClosedJaxpr, consts: Sequence[Any]) -> tuple[ClosedJaxpr, list]:
    """`closed` without consts of its own (they join the leading `consts` operands)."""
    jaxpr, own = without_consts(closed)
    return jaxpr, [*own, *consts]


def _checked_cond(cond_jaxpr: ClosedJaxpr, enabled_errors: frozenset,
                  effects: tuple[Any, ...], cond_nconsts: int) -> ClosedJaxpr:
    """The loop condition taking the leaves of an error with `effects` after its consts and
    returning only the predicate: its checks are discharged (they run in the body)."""
    checked = checkify_closed_jaxpr(cond_jaxpr, enabled_errors, effects, cond_nconsts)
    return _predicate_only(checked.jaxpr, checked.num_out_leaves)


@pe.transform_cache
def _predicate_only(closed: ClosedJaxpr, num_leaves: int) -> ClosedJaxpr:
    used = [False] * num_leaves + [True]
    jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, used, instantiate=True)
    return ClosedJaxpr(jaxpr, closed.consts)


error_checks[while_p] = _while_error_check


def _remat_error_check(error: Error, enabled_errors: frozenset, *args: Any, jaxpr: Jaxpr,
                       prevent_cse: Any, **params: Any) -> tuple[Error, list]:
    effects = sorted_effects(error)
    checked = checkify_closed_jaxpr(pe.close_jaxpr(jaxpr), enabled_errors, effects, 0)
    body, body_consts = without_consts(checked.jaxpr)
    leaves = error_leaves(error, effects)
    if isinstance(prevent_cse, tuple):
        prevent_cse = (False,) * (len(body_consts) + len(leaves)) + prevent_cse
    outs = remat_p.bind(*body_consts, *leaves, *args, jaxpr=body.jaxpr,
                        prevent_cse=prevent_cse, **params)
    return checked.error(outs, error._metadata), outs[checked.num_out_leaves:]


error_checks[remat_p] = _remat_error_check


# shard_map (what pmap is built on): each device checks its own block. The body takes the
# error replicated and returns its own error with a leading axis of one, which the mapping
# stacks over the devices: the result is a batched error, one per device, as JAX gives it
# ("at mapped index 2: ...").

@pe.transform_cache
def _stacked_error_body(checked: ClosedJaxpr, num_leaves: int) -> ClosedJaxpr:
    """`checked` returning its error leaves with a leading axis of length one."""
    def body(*xs: Any) -> list[Any]:
        outs = eval_jaxpr(checked.jaxpr, checked.consts, *xs)
        leaves = [structural.expand_dims(leaf, (0,)) for leaf in outs[:num_leaves]]
        return [*leaves, *outs[num_leaves:]]

    return staging.trace_to_jaxpr(body, checked.in_avals, checked.jaxpr.debug_info)


def _shard_map_error_check(error: Error, enabled_errors: frozenset, *args: Any,
                           jaxpr: ClosedJaxpr, mesh: Any, in_specs: tuple, out_specs: tuple,
                           **params: Any) -> tuple[Error, list]:
    body, consts = without_consts(jaxpr)
    effects = sorted_effects(error)
    manual = params["newly_manual_axes"]
    with shard_map.body_axis(mesh, manual):  # the body's collectives see the manual axes
        checked = checkify_closed_jaxpr(body, enabled_errors, effects, len(consts))
        n = checked.num_out_leaves
        stacked_body = _stacked_error_body(checked.jaxpr, n)
    leaves = error_leaves(error, effects)
    per_device = shard_map.per_device_spec(mesh, manual)
    outs = shard_map.shard_map_p.bind(
        *consts, *leaves, *args, jaxpr=stacked_body, mesh=mesh,
        in_specs=(PartitionSpec(),) * (len(consts) + len(leaves)) + tuple(in_specs),
        out_specs=(per_device,) * n + tuple(out_specs), **params)
    return checked.error(outs, error._metadata), outs[n:]


error_checks[shard_map.shard_map_p] = _shard_map_error_check
