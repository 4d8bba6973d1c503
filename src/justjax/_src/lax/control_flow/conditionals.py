"""`lax.cond`, `lax.switch` and the `cond` primitive: abstract eval, eager execution, jvp,
partial evaluation (the residuals of all branches joined into one list), transposition,
batching (a batched index becomes a `select_n` over every branch), dead-code elimination,
checkpoint's split under a policy, and lowering to `stablehlo.case`; plus `empty2`, the placeholder a branch returns for residuals
only other branches compute.

The primitive's param is JAX 0.10.2's: `branches`, a tuple of `ClosedJaxpr`s (the false
branch first for `cond`), all taking the same operands and returning the same types. The
operands are the branch index (an int32 scalar) then the branches' shared operands: the values
the branches close over first, then the user's operands.
"""
from __future__ import annotations

import enum
import itertools
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.pytrees import tree_errors
from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, JaxprEqn, Var, eval_jaxpr
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import elementwise, selection, structural
from justjax._src.lax.control_flow import common

__all__ = ["cond", "cond_p", "switch"]

cond_p = core.Primitive("cond", multiple_results=True)


def _cond_abstract_eval(index: ShapedArray, *avals: ShapedArray,
                        branches: tuple[ClosedJaxpr, ...]) -> list[ShapedArray]:
    return list(branches[0].out_avals)


cond_p.def_abstract_eval(_cond_abstract_eval)
# An eager cond runs as one compiled program (the `stablehlo.case` lowering below).
dispatch.def_backend_impl(cond_p)


# ---------------------------------------------------------------------------------------------
# `empty2`: an uninitialized scalar, JAX's filler for residuals a branch does not compute.

class MemorySpace(enum.Enum):
    """Where an `empty2` value lives; only the device's memory here."""

    Device = "device"


empty2_p = core.Primitive("empty2")
empty2_p.def_abstract_eval(lambda *, dtype, memory_space: ShapedArray((), dtype))
dispatch.def_backend_impl(empty2_p)
# Its contents are never read, so zeros serve (as XLA materializes it on CPU).
lowering.register_lowering(
    empty2_p, lambda ctx, *, dtype, memory_space: lowering.full(ctx.builder, 0,
                                                                ctx.avals_out[0]))
ad.defjvp_zero(empty2_p)
batching.primitive_batchers[empty2_p] = lambda axis_data, vals, dims, **params: (
    empty2_p.bind(**params), None)


def empty_like(aval: ShapedArray) -> Any:
    """An uninitialized array of type `aval`: `empty2` broadcast to its shape, as JAX makes
    them."""
    value = empty2_p.bind(dtype=aval.dtype, memory_space=MemorySpace.Device)
    return structural.broadcast_in_dim(value, aval.shape, ())


# ---------------------------------------------------------------------------------------------
# The API.

_NO_OPERAND = object()


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any,
         operand: Any = _NO_OPERAND) -> Any:
    """Applies `true_fun(*operands)` if `pred` else `false_fun(*operands)` (`lax.cond`).

    Both branches are traced; only the chosen one runs. Under `vmap` with a batched
    predicate the cond becomes a `select` between both branches' results.

    Args:
      pred: a boolean (or number: nonzero is true) scalar.
      true_fun, false_fun: functions of the operands returning pytrees of the same
        structure, shapes and dtypes.
      operands: the branches' arguments, any pytrees.
      operand: the older form: a single argument given by keyword.
    Returns:
      The chosen branch's result. Lowers to `stablehlo.case`.
    """
    if not (callable(true_fun) and callable(false_fun)):
        # The old form `cond(pred, true_operand, true_fun, false_operand, false_fun)`, which
        # JAX still accepts (numpyro's samplers use it): each branch gets its own operand.
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true,
                        x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand} and positional operands {operands}")
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        shown = (f"type {type(pred)}" if isinstance(pred, Sequence)
                 else f"shape {np.shape(pred)}.")
        raise TypeError(f"Pred must be a scalar, got {pred} of {shown}")
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = elementwise.ne(pred, np.zeros((), pred_dtype))
    if config.read("jax_disable_jit") and core.is_concrete(pred):
        return true_fun(*operands) if core.to_concrete_value(pred) else false_fun(*operands)
    index = structural.convert_element_type(pred, np.int32)
    # Traced true branch first (it names the closed-over values first), bound false first.
    return _bind_cond(index, [true_fun, false_fun], ["true_fun", "false_fun"], operands,
                      "cond", reverse=True)


def switch(index: Any, branches: Sequence[Callable], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """Applies `branches[clamp(0, index, len(branches) - 1)](*operands)` (`lax.switch`).

    Args:
      index: an integer scalar; out-of-range values are clamped.
      branches: functions of the operands returning pytrees of the same structure, shapes
        and dtypes.
      operands: the branches' arguments, any pytrees.
      operand: the older form: a single argument given by keyword.
    Returns:
      The chosen branch's result. Lowers to `stablehlo.case`.
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand} and positional operands {operands}")
        operands = (operand,)
    if not all(callable(branch) for branch in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    try:
        index_dtype = dtypes.result_type(index)
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = structural.convert_element_type(index, np.int32)
    index = selection.clamp(np.array(0, np.int32), index,
                            np.array(len(branches) - 1, np.int32))
    if config.read("jax_disable_jit") and core.is_concrete(index):
        return branches[int(core.to_concrete_value(index))](*operands)
    names = ["branch 0", *[f"branch{i}" for i in range(1, len(branches))]]
    return _bind_cond(index, list(branches), names, operands, "switch")


def _bind_cond(index: Any, funs: list[Callable], names: list[str], operands: tuple,
               api_name: str, reverse: bool = False) -> Any:
    """Traces every branch on the operands' avals, checks they agree, and binds `cond` with
    the branches in that order (`reverse`: the other way round); outputs every branch
    returns unchanged from the same input are not bound."""
    leaves, in_tree = tree_util.tree_flatten(operands)
    avals = [common.abstractify(x) for x in leaves]
    traced = [common.trace_fun(fun, in_tree, avals, api_name) for fun in funs]
    first = traced[0]
    for fun, name, other in zip(funs[1:], names[1:], traced[1:], strict=True):
        _check_branch_outputs(api_name, names[0], name, funs[0], fun, first, other)
    branches, consts = _common_consts(traced)
    forwarded = [common.forwarded_inputs(b.jaxpr) for b in branches]
    in_fwd = [f[0] if len(set(f)) == 1 else None for f in zip(*forwarded, strict=True)]
    keep = [f is None for f in in_fwd]
    branches = [_prune_outputs(b, keep) for b in branches]
    if reverse:
        branches.reverse()
    outs = iter(cond_p.bind(index, *consts, *leaves, branches=tuple(branches)))
    inputs = [*consts, *leaves]
    results = [next(outs) if f is None else inputs[f] for f in in_fwd]
    return tree_util.tree_unflatten(first.out_tree, results)


def _prune_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    if all(keep):
        return closed
    outvars = [v for v, k in zip(closed.jaxpr.outvars, keep, strict=True) if k]
    return ClosedJaxpr(closed.jaxpr.replace(outvars=outvars), closed.consts)


def _common_consts(traced: list[common.TracedFun]) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Every branch takes the values any branch closes over (each distinct value once, in
    order of first appearance) before the operands, as JAX merges them."""
    consts: list[Any] = []
    for t in traced:
        for c in t.consts:
            if not any(c is seen for seen in consts):
                consts.append(c)
    branches = []
    for t in traced:
        jaxpr = t.jaxpr.jaxpr
        own = jaxpr.invars[:len(t.consts)]
        rest = jaxpr.invars[len(t.consts):]
        renamed: dict[Var, Var] = {}
        invars = []
        for c in consts:
            mine = next((v for v, o in zip(own, t.consts, strict=True) if o is c), None)
            if mine is None:
                invars.append(Var(common.abstractify(c)))
            elif mine in renamed.values():
                invars.append(Var(common.abstractify(c)))
            else:
                invars.append(mine)
        # A value closed over twice by one branch is read through its first binder.
        for v, o in zip(own, t.consts, strict=True):
            first = next(i for i, c in enumerate(consts) if c is o)
            if invars[first] is not v:
                renamed[v] = invars[first]
        body = jaxpr.replace(invars=[*invars, *rest])
        if renamed:
            body = _substitute(body, renamed)
        branches.append(ClosedJaxpr(body, ()))
    return branches, consts


def _substitute(jaxpr: Any, renamed: dict[Var, Var]) -> Any:
    eqns = [e.replace(invars=[renamed.get(v, v) if isinstance(v, Var) else v
                              for v in e.invars]) for e in jaxpr.eqns]
    outvars = [renamed.get(v, v) if isinstance(v, Var) else v for v in jaxpr.outvars]
    return jaxpr.replace(eqns=eqns, outvars=outvars)


def _check_branch_outputs(api_name: str, name1: str, name2: str, f1: Callable, f2: Callable,
                          out1: common.TracedFun, out2: common.TracedFun) -> None:
    """JAX's TypeErrors for branches whose outputs differ in structure, shape or dtype."""
    info1 = staging.debug_info(api_name, f1).func_src_info
    info2 = staging.debug_info(api_name, f2).func_src_info
    try:
        tree1 = tree_util.tree_unflatten(out1.out_tree, out1.out_avals)
        paths = [p for p, _ in tree_util.tree_flatten_with_path(tree1)[0]]
    except Exception:  # noqa: BLE001 -- a structure JAX's paths cannot describe
        tree1, paths = None, [()] * len(out1.out_avals)

    def component(path: tuple) -> str:
        return f" at path {tree_util.keystr(path)}" if path else ""

    header = f"{name1} is {info1}\n{name2} is {info2}\n\n"
    if out1.out_tree != out2.out_tree:
        tree2 = tree_util.tree_unflatten(out2.out_tree, out2.out_avals)
        diffs = [f"{name1} output{component(p)} is a {thing1} but {name2} output"
                 f"{component(p)} is a {thing2}, so {why}"
                 for p, thing1, thing2, why in tree_errors.equality_errors(tree1, tree2)]
        if not diffs:
            return
        differences = (f"{diffs[0]}.\n" if len(diffs) == 1 else
                       "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n")
        raise TypeError(f"{api_name} branch outputs must have the same pytree structure, but "
                        f"they differ:\n\n{header}{differences}\n"
                        f"Revise {name1} and/or {name2} so that they have the same pytree "
                        "structure.")
    mismatched = [(p, a, b) for p, a, b in zip(paths, out1.out_avals, out2.out_avals,
                                               strict=True) if not common.typematch(a, b)]
    if not mismatched:
        return
    diffs = [f"the output of {name1}{component(p)} has type {a.str_short(short_dtypes=False)} "
             f"but the corresponding output of {name2} has type "
             f"{b.str_short(short_dtypes=False)}{common.mismatch_extra(a, b)}"
             for p, a, b in mismatched]
    if len(diffs) == 1:
        differences = diffs[0][0].upper() + diffs[0][1:] + ".\n"
    else:
        differences = "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"
    raise TypeError(f"{api_name} branches must have equal output types but they differ.\n\n"
                    f"{header}{differences}\n"
                    f"Revise {name1} and/or {name2} so that all output types match.")


# ---------------------------------------------------------------------------------------------
# Forward mode: a cond of the branches' jvps; an output has a tangent if any branch gives
# it one.

def _cond_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
              branches: tuple[ClosedJaxpr, ...]) -> tuple[list[Any], list[Any]]:
    ops_nz = [type(t) is not ad.Zero for t in tangents[1:]]
    out_nz = [any(nz) for nz in zip(*[pe.jvp_jaxpr(b, ops_nz, instantiate=False)[1]
                                      for b in branches], strict=True)]
    jvp_branches = tuple(pe.jvp_jaxpr(b, ops_nz, instantiate=out_nz)[0] for b in branches)
    index, *ops = primals
    ops_dot = [t for t in tangents[1:] if type(t) is not ad.Zero]
    outs = cond_p.bind(index, *ops, *ops_dot, branches=jvp_branches)
    num_outs = len(out_nz)
    primals_out, dots = outs[:num_outs], iter(outs[num_outs:])
    tangents_out = [next(dots) if nz else ad.Zero.from_primal_value(p)
                    for p, nz in zip(primals_out, out_nz, strict=True)]
    return primals_out, tangents_out


ad.primitive_jvps[cond_p] = _cond_jvp


# ---------------------------------------------------------------------------------------------
# Partial evaluation (linearize): a known cond computing the known outputs and every
# branch's residuals, joined into one list (a slot per residual type and occurrence, filled
# with `empty2` by the branches that do not compute it), and a staged unknown cond reading
# them.

def _merge_residuals(branch_res_avals: list[list[ShapedArray]]
                     ) -> tuple[list[ShapedArray], list[list[int]]]:
    """The joined residual types and, per branch, the slot of each of its residuals: the
    k-th residual of a type in a branch shares the slot of the k-th of that type in others."""
    tagged = []
    for avals in branch_res_avals:
        counts: dict[ShapedArray, itertools.count] = {}
        tagged.append([(a, next(counts.setdefault(a, itertools.count()))) for a in avals])
    slots = list(dict.fromkeys(t for branch in tagged for t in branch))
    index = {t: i for i, t in enumerate(slots)}
    return [a for a, _ in slots], [[index[t] for t in branch] for branch in tagged]


def _join_known(known: ClosedJaxpr, num_outs: int, all_res: list[ShapedArray],
                slots: list[int]) -> ClosedJaxpr:
    """`known` returning its outputs then every joined residual slot (its own residuals in
    theirs, `empty2` filler in the others)."""
    def joined(*args: Any) -> list[Any]:
        outs = eval_jaxpr(known.jaxpr, known.consts, *args)
        res = [empty_like(a) for a in all_res]
        for slot, value in zip(slots, outs[num_outs:], strict=True):
            res[slot] = value
        return [*outs[:num_outs], *res]

    return staging.trace_to_jaxpr(joined, known.in_avals, known.jaxpr.debug_info)


def _join_unknown(unknown: ClosedJaxpr, all_res: list[ShapedArray], slots: list[int]
                  ) -> ClosedJaxpr:
    """`unknown` taking every joined residual slot (ignoring those it does not read)."""
    jaxpr = unknown.jaxpr
    res_vars: list[Var] = [Var(a) for a in all_res]
    for slot, var in zip(slots, jaxpr.invars[:len(slots)], strict=True):
        res_vars[slot] = var
    return ClosedJaxpr(jaxpr.replace(invars=[*res_vars, *jaxpr.invars[len(slots):]]),
                       unknown.consts)


def _split_branches(branches: tuple[ClosedJaxpr, ...], ops_uk: tuple[bool, ...]
                    ) -> tuple[list[bool], tuple[ClosedJaxpr, ...], tuple[ClosedJaxpr, ...], int]:
    """Which outputs are unknown, the joined known and unknown branches, and the number of
    joined residuals."""
    out_uks = [any(uks) for uks in zip(*[pe.split_jaxpr(b, ops_uk, None, None, "branch")[2]
                                         for b in branches], strict=True)]
    splits = [pe.split_jaxpr(b, ops_uk, tuple(out_uks), None, "branch") for b in branches]
    num_known_outs = len(out_uks) - sum(out_uks)
    res_avals = [list(known.out_avals[num_known_outs:]) for known, *_ in splits]
    all_res, slots = _merge_residuals(res_avals)
    known = tuple(_join_known(k, num_known_outs, all_res, s)
                  for (k, *_), s in zip(splits, slots, strict=True))
    unknown = tuple(_join_unknown(u, all_res, s)
                    for (_, u, *_), s in zip(splits, slots, strict=True))
    return out_uks, known, unknown, len(all_res)


def _cond_partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                       ) -> list[Any]:
    index, *ops = args
    if trace._is_unknown(index):
        return staging.DynamicJaxprTrace.process_primitive(trace, cond_p, args, params)
    ops_uk = tuple(trace._is_unknown(x) for x in ops)
    out_uks, known, unknown, num_res = _split_branches(params["branches"], ops_uk)
    known_ops, unknown_ops = pe.partition_list(list(ops_uk), ops)
    with core.set_current_trace(trace.parent_trace):
        known_outs = cond_p.bind(index, *known_ops, branches=known)
    num_known_outs = len(known_outs) - num_res
    known_outs, residuals = known_outs[:num_known_outs], known_outs[num_known_outs:]
    unknown_outs = staging.DynamicJaxprTrace.process_primitive(
        trace, cond_p, [index, *residuals, *unknown_ops], {"branches": unknown})
    return pe.merge_lists(out_uks, known_outs, unknown_outs)


ad.partial_eval_rules[cond_p] = _cond_partial_eval


def _cond_partial_eval_custom(saveable: Callable[..., Any], unks_in: Sequence[bool],
                              inst_in: Sequence[bool], eqn: JaxprEqn
                              ) -> tuple[JaxprEqn | None, JaxprEqn, list[bool], list[bool],
                                         list[Var]]:
    """Checkpoint's split of a `cond` equation (as JAX's): each branch split under the
    policy, an output unknown if any branch leaves it unknown; a known cond returns the
    known outputs and the joined residuals, a staged cond reads them with every operand."""
    index_uk, *ops_uk = unks_in
    branches = eqn.params["branches"]
    new_inst = [v for v, inst in zip(eqn.invars, inst_in, strict=True)
                if isinstance(v, Var) and not inst]
    if index_uk:
        all_true = [True] * len(eqn.outvars)
        return None, eqn, all_true, all_true, new_inst
    out_uks = [False] * len(eqn.outvars)
    for b in branches:
        uks = pe.partial_eval_jaxpr_custom(b.jaxpr, ops_uk, True, False, True, saveable)[2]
        out_uks = [u or v for u, v in zip(out_uks, uks, strict=True)]
    splits = []
    for b in branches:
        known, staged, _, _, num_res = pe.partial_eval_jaxpr_custom(
            b.jaxpr, ops_uk, True, out_uks, True, saveable)
        splits.append((ClosedJaxpr(known, b.consts), ClosedJaxpr(staged, b.consts), num_res))
    res_avals = [list(staged.in_avals[:num_res]) for _, staged, num_res in splits]
    all_res, slots = _merge_residuals(res_avals)
    num_known_outs = len(out_uks) - sum(out_uks)
    known_branches = tuple(_join_known(k, num_known_outs, all_res, s)
                           for (k, _, _), s in zip(splits, slots, strict=True))
    staged_branches = tuple(_join_unknown(u, all_res, s)
                            for (_, u, _), s in zip(splits, slots, strict=True))
    res_binders = [Var(a) for a in all_res]
    known_invars, _ = pe.partition_list(list(unks_in), eqn.invars)
    known_outvars, _ = pe.partition_list(out_uks, eqn.outvars)
    eqn_known = eqn.replace(invars=known_invars, outvars=[*known_outvars, *res_binders],
                            params={"branches": known_branches})
    eqn_staged = eqn.replace(invars=[eqn.invars[0], *res_binders, *eqn.invars[1:]],
                             params={"branches": staged_branches})
    return eqn_known, eqn_staged, out_uks, [True] * len(out_uks), [*new_inst, *res_binders]


pe.partial_eval_jaxpr_custom_rules[cond_p] = _cond_partial_eval_custom


# ---------------------------------------------------------------------------------------------
# Transposition: a cond of the branches' transposes; a linear operand gets a cotangent if
# any branch gives it one.

def _cond_transpose(cts: Sequence[Any], index: Any, *args: Any,
                    branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    in_linear = [ad.is_undefined_primal(a) for a in args]
    out_zeros = [type(ct) is ad.Zero for ct in cts]
    zeros_per_branch = [pe.transpose_jaxpr(b, in_linear, out_zeros)[1] for b in branches]
    nonzero = [not all(z) for z in zip(*zeros_per_branch, strict=True)]
    transposed = tuple(pe.transpose_jaxpr(b, in_linear, out_zeros, nonzero)[0]
                       for b in branches)
    nonlinear = [a for a, lin in zip(args, in_linear, strict=True) if not lin]
    nonzero_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    outs = iter(cond_p.bind(index, *nonlinear, *nonzero_cts, branches=transposed))
    flags = iter(nonzero)
    result: list[Any] = [None]
    for arg in args:
        if not ad.is_undefined_primal(arg):
            result.append(None)
        elif next(flags):
            result.append(next(outs))
        else:
            result.append(ad.Zero(arg.aval))
    return result


ad.primitive_transposes[cond_p] = _cond_transpose


# ---------------------------------------------------------------------------------------------
# Batching. A batched index: every branch runs on batched operands and `select_n` picks
# each lane's result (a branch's operands are its own only where it is chosen, so reverse
# mode sends no cotangent through the branches not taken). An unbatched index: one cond of
# the batched branches.

def _bcast(pred: Any, like: Any) -> Any:
    pred_ndim, ndim = np.ndim(pred), np.ndim(like)
    if pred_ndim == ndim:
        return pred
    return structural.broadcast_in_dim(pred, np.shape(like), tuple(range(pred_ndim)))


def _cond_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                  dims: Sequence[int | None], *, branches: tuple[ClosedJaxpr, ...]
                  ) -> tuple[list[Any], list[int | None]]:
    index, *ops = vals
    index_dim, *op_dims = dims
    if index_dim is not None:
        index, *ops = [batching.bdim_at_front(x, d, axis_data.size)
                       for x, d in zip(vals, dims, strict=True)]
        all_batched = [0] * len(ops)
        branch_outs = []
        for i, branch in enumerate(branches):
            batched, _ = batching.batch_jaxpr(branch, axis_data, all_batched,
                                              [0] * len(branch.out_avals))
            chosen = elementwise.eq(index, np.array(i, np.int32))
            own = []
            for x in ops:
                frozen = structural.stop_gradient(x)
                own.append(selection.select(_bcast(chosen, x), x, frozen))
            branch_outs.append(eval_jaxpr(batched.jaxpr, batched.consts, *own))
        outs = [selection.select_n(_bcast(index, outs[0]), *outs)
                for outs in zip(*branch_outs, strict=True)]
        return outs, [0] * len(outs)
    in_dims = [None if d is None else 0 for d in op_dims]
    ops = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(ops, op_dims,
                                                                          strict=True)]
    out_batched = [any(d is not None for d in dims_out) for dims_out in zip(
        *[batching.batch_jaxpr(b, axis_data, in_dims)[1] for b in branches], strict=True)]
    out_dims = [0 if b else None for b in out_batched]
    batched = tuple(batching.batch_jaxpr(b, axis_data, in_dims, out_dims)[0] for b in branches)
    return cond_p.bind(index, *ops, branches=batched), out_dims


batching.primitive_batchers[cond_p] = _cond_batcher


# ---------------------------------------------------------------------------------------------
# Dead-code elimination: unused outputs go from every branch, and operands no branch reads.

def _cond_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not any(pe.jaxpr_has_effects(b.jaxpr)
                                         for b in eqn.params["branches"]):
        return [False] * len(eqn.invars), None
    branches = eqn.params["branches"]
    used_ops = [False] * (len(eqn.invars) - 1)
    for b in branches:
        _, used = pe.dce_jaxpr(b.jaxpr, used_outputs, instantiate=False)
        used_ops = [u or v for u, v in zip(used_ops, used, strict=True)]
    new_branches = tuple(
        ClosedJaxpr(pe.dce_jaxpr(b.jaxpr, used_outputs, instantiate=used_ops)[0], b.consts)
        for b in branches)
    used_inputs = [True, *used_ops]
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params={"branches": new_branches})
    return used_inputs, new_eqn


pe.dce_rules[cond_p] = _cond_dce


# ---------------------------------------------------------------------------------------------
# Lowering: one `stablehlo.case` whose branch regions read the operands of the enclosing
# block (StableHLO's implicit capture), as JAX emits it.

def _cond_lowering(ctx: lowering.LoweringRuleContext, index: ir.Value, *args: ir.Value,
                   branches: tuple[ClosedJaxpr, ...]) -> list[ir.Value]:
    result_types = [lowering.aval_to_type(a) for a in ctx.avals_out]
    regions = []
    for branch in branches:
        region, builder = ir.new_region([])
        outs = lowering.lower_closed_jaxpr_inline(ctx.replace(builder=builder), branch,
                                                  list(args))
        builder.ret(outs)
        regions.append(region)
    op = ctx.builder.op("stablehlo.case", [index], result_types, regions=regions)
    return list(op.results)


lowering.register_lowering(cond_p, _cond_lowering)
