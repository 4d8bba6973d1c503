"""`checkpoint` (alias `remat`): differentiate a function by recomputing its intermediates.

`checkpoint(fun)` traces `fun` to a jaxpr and binds the `remat2` primitive holding it, as
JAX does. Its rules:
- impl: evaluate the jaxpr; abstract eval: the jaxpr's output types;
- jvp: the jvp of the body, bound again as `remat2`;
- partial evaluation (linearize, vjp, grad): the body is split by
  `partial_eval_jaxpr_custom` under the `policy`: the primal outputs and the residuals the
  policy lets us save are computed now, on the parent trace; the rest is staged into the
  linear jaxpr as `remat2[differentiated=True]`, which recomputes what was not saved;
- transpose: the transposed body, which recomputes the non-linear part before transposing
  the linear one, bound again as `remat2`.
- batching: the body batched along the arguments' axes, its mapped outputs moved to axis 0,
  bound again as `remat2` with the same params.

Policies (`checkpoint_policies`) decide, per known equation of the differentiated body,
whether its outputs may be saved as residuals.
"""
from __future__ import annotations

import dataclasses
import functools
import types
from typing import Any, Callable, Iterable, Sequence

from justjax._src import errors, util
from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import Jaxpr, JaxprEqn, Var, eval_jaxpr
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import convolution, dot, elementwise

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat", "remat_p",
           "name_p", "Recompute", "Saveable"]

Recompute = pe.Recompute
Saveable = pe.Saveable


# ---------------------------------------------------------------------------------------------
# Policies: `policy(prim, *in_avals, **params) -> bool` says whether the outputs of a known
# equation of the differentiated body may be saved (True) or must be recomputed (False).

def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every intermediate, as if `checkpoint` were not used."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing but the inputs: recompute everything (the default policy)."""
    return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Save the results of matrix products (`dot_general`, and `conv_general_dilated`
    unless `only_if_no_batch_dims`, which saves only dots without batch dimensions)."""

    only_if_no_batch_dims: bool

    def __call__(self, prim: core.Primitive, *args: Any, **params: Any) -> bool:
        if self.only_if_no_batch_dims:
            if prim is dot.dot_general_p:
                _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
                return not lhs_batch and not rhs_batch
            return False
        return prim is dot.dot_general_p or prim is convolution.conv_general_dilated_p


checkpoint_dots = dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


# `name` marks a value with a name policies can refer to; it is the identity.
name_p = core.Primitive("name")


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only values named (by `checkpoint_name`) with one of `saveable_names`."""

    saveable_names: frozenset[str]

    def __call__(self, prim: core.Primitive, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save only named values, except those named with one of `names`."""

    names: frozenset[str]

    def __call__(self, prim: core.Primitive, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in self.names


def save_anything_except_these_names(*names_not_to_save: str) -> Callable[..., bool]:
    """Save any values (not just named ones) excluding the names given.

    As in JAX 0.10.2, this currently saves everything."""
    return lambda *_, **__: True


def save_any_names_but_these(*names_not_to_save: str) -> SaveAnyNamesButThese:
    """Save only named values, excluding the names given."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_only_these_names(*names_which_can_be_saved: str) -> SaveOnlyTheseNames:
    """Save only named values, and only among the names given."""
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_from_both_policies(policy_1: Callable[..., bool], policy_2: Callable[..., bool]
                            ) -> Callable[..., bool]:
    """Logical OR of two policies: a value is saveable if either policy saves it."""
    def policy(prim: core.Primitive, *args: Any, **params: Any) -> bool:
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got: "
                f"{out1} and {out2}. Please write a custom policy function directly, "
                "rather than using this helper function.")
        return out1 or out2
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies)


# ---------------------------------------------------------------------------------------------
# The API.

def checkpoint(fun: Callable, *, prevent_cse: bool | Sequence[bool] = True,
               policy: Callable[..., bool] | None = None,
               static_argnums: int | tuple[int, ...] = (),
               static_argnames: str | Iterable[str] = ()) -> Callable:
    """Make `fun` recompute its intermediate linearization points when differentiated.

    Under `grad`, `vjp` or `linearize`, the returned function saves only its inputs (and
    what `policy` allows) for the backward pass and recomputes the rest there. Its values
    are those of `fun`.

    Args:
      fun: the function; arguments and results are arrays, scalars or pytrees of them.
      prevent_cse: keep the compiler from merging the recomputation with the forward
        computation (a bool, or a tuple of bools: one per argument, a pytree prefix).
      policy: one of `checkpoint_policies`, or `policy(prim, *avals, **params) -> bool`
        saying whether the outputs of an equation may be saved; None saves nothing.
      static_argnums: positions of arguments passed as Python values (traced as
        constants), e.g. flags deciding Python control flow.
      static_argnames: accepted for compatibility; as in JAX 0.10.2, keyword arguments
        are traced.
    Returns:
      A function with the same inputs and outputs as `fun`, binding one `remat2`
      equation holding `fun`'s jaxpr.
    """
    del static_argnames  # JAX's remat2 path traces keyword arguments too.
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(prevent_cse, Sequence):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError("prevent_cse must be a bool or tuple of bools, got "
                        f"type(prevent_cse)={type(prevent_cse)}")

    @util.wraps(fun)
    def fun_remat(*args: Any, **kwargs: Any) -> Any:
        static = _static_positions(static_argnums, len(args))
        debug = staging.debug_info("checkpoint / remat", fun,
                                   staging.leaf_arg_names(fun, args, kwargs, static))
        dyn_args = [a for i, a in enumerate(args) if i not in static]
        flat_args, in_tree = tree_util.tree_flatten((tuple(dyn_args), kwargs))
        in_avals = [_arg_aval(x) for x in flat_args]
        body, consts, out_tree = _trace_body(fun, args, static, in_tree, in_avals, debug)
        if isinstance(prevent_cse, tuple):
            cse_args = (tuple(dyn_args), kwargs) if kwargs else tuple(dyn_args)
            cse = (False,) * len(consts) + tuple(_broadcast_prefix(prevent_cse, cse_args))
        else:
            cse = prevent_cse
        outs = remat_p.bind(*consts, *flat_args, jaxpr=body, prevent_cse=cse,
                            differentiated=False, policy=policy)
        return tree_util.tree_unflatten(out_tree, outs)

    return fun_remat


def remat(fun: Callable, *, prevent_cse: bool = True, policy: Callable[..., bool] | None = None,
          static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """Alias of `checkpoint`."""
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy,
                      static_argnums=static_argnums)


def _static_positions(static_argnums: Any, nargs: int) -> frozenset[int]:
    if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must "
                        f"be an int, tuple of ints or, bool, but got value {static_argnums}")
    if not all(-nargs <= d < nargs for d in static_argnums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can "
                         "only take integer values greater than or equal to `-len(args)` and "
                         f"less than `len(args)`, but got {static_argnums}, while "
                         f"`len(args)` = {nargs}")
    return frozenset(d % nargs for d in static_argnums)


def _arg_aval(x: Any) -> ShapedArray:
    if isinstance(x, core.Tracer):
        return x.aval
    if not core.valid_jaxtype(x):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    return core.get_aval(x)


_STATIC_ARGNUMS_HINT = (
    "\n\nConsider using the `static_argnums` parameter for `jax.remat` or `jax.checkpoint`. "
    "See the `jax.checkpoint` docstring and its example involving `static_argnums`:\n"
    "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n")


def _trace_body(fun: Callable, args: Sequence[Any], static: frozenset[int],
                in_tree: tree_util.PyTreeDef, in_avals: Sequence[ShapedArray],
                debug: staging.DebugInfo) -> tuple[Jaxpr, list[Any], tree_util.PyTreeDef]:
    """Traces `fun` on the dynamic arguments' avals (static ones passed as they are).

    Cached, as in JAX: calling a checkpointed function again on the same types (and equal
    static arguments) reuses its jaxpr."""
    static_args = tuple((i, args[i]) for i in sorted(static))
    return _trace_body_cached(fun, static_args, len(args), in_tree, tuple(in_avals), debug)


@pe.transform_cache
def _trace_body_cached(fun: Callable, static_args: tuple[tuple[int, Any], ...], nargs: int,
                       in_tree: tree_util.PyTreeDef, in_avals: tuple[ShapedArray, ...],
                       debug: staging.DebugInfo
                       ) -> tuple[Jaxpr, list[Any], tree_util.PyTreeDef]:
    out_trees: list[tree_util.PyTreeDef] = []
    static = dict(static_args)

    def flat_fun(*flat_args: Any) -> list[Any]:
        dyn_args, kwargs = tree_util.tree_unflatten(in_tree, flat_args)
        dyn_iter = iter(dyn_args)
        full_args = [static[i] if i in static else next(dyn_iter) for i in range(nargs)]
        out_flat, out_tree = tree_util.tree_flatten(fun(*full_args, **kwargs))
        for out in out_flat:
            if not (isinstance(out, core.Tracer) or core.valid_jaxtype(out)):
                raise TypeError(f"function {debug.func_src_info} traced for {debug.traced_for} "
                                f"returned a value of type {type(out)}, which is not a valid "
                                "JAX type")
        out_trees.append(out_tree)
        return out_flat

    try:
        body, consts = pe.trace_to_subjaxpr(flat_fun, in_avals, debug)
    except errors.ConcretizationTypeError as e:
        message = str(e)
        if "for checkpoint" in message:
            e.args = (message + _STATIC_ARGNUMS_HINT,)
        raise
    return body, consts, out_trees[0]


def _broadcast_prefix(prefix: Any, full: Any) -> list[Any]:
    """Each leaf of `prefix` repeated once per leaf of the subtree of `full` it covers."""
    expanded = tree_util.tree_map(lambda p, sub: [p] * len(tree_util.tree_leaves(sub)),
                                  prefix, full)
    return tree_util.tree_leaves(expanded)


def checkpoint_name(x: Any, name: str) -> Any:
    """Names `x` (each leaf of a pytree) for checkpoint policies such as
    `save_only_these_names`; the identity on values."""
    return tree_util.tree_map(functools.partial(name_p.bind, name=name), x)


# ---------------------------------------------------------------------------------------------
# `name`: the identity, visible to policies.

def _name_impl(x: Any, *, name: str) -> Any:
    return x


def _name_abstract_eval(x: ShapedArray, *, name: str) -> ShapedArray:
    return x


def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str
              ) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    # Only the primal is named: policies save primal intermediates.
    return name_p.bind(x, name=name), x_dot


core.impl_rules[name_p] = _name_impl
name_p.def_abstract_eval(_name_abstract_eval)
ad.primitive_jvps[name_p] = _name_jvp


def _name_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                  dims: Sequence[int | None], *, name: str) -> tuple[Any, int | None]:
    (x,), (dim,) = vals, dims
    return name_p.bind(x, name=name), dim


batching.primitive_batchers[name_p] = _name_batcher
lowering.register_lowering(name_p, lambda ctx, x, *, name: x)


# ---------------------------------------------------------------------------------------------
# `remat2`: the checkpointed call. Params: `jaxpr` (open), `prevent_cse` (bool or one bool
# per argument), `differentiated` (True once the body is a derivative's recomputation) and
# `policy`. Lowering wraps `differentiated` calls' inputs in an optimization barrier
# where `prevent_cse` asks for it.

remat_p = core.Primitive("remat2", multiple_results=True)


def _remat_impl(*args: Any, jaxpr: Jaxpr, prevent_cse: Any, differentiated: bool,
                policy: Any) -> list[Any]:
    return eval_jaxpr(jaxpr, [], *args)


def _remat_abstract_eval(*avals: ShapedArray, jaxpr: Jaxpr, prevent_cse: Any,
                         differentiated: bool, policy: Any) -> list[ShapedArray]:
    return [v.aval for v in jaxpr.outvars]


core.impl_rules[remat_p] = _remat_impl
remat_p.def_abstract_eval(_remat_abstract_eval)


def _remat_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: Jaxpr,
               prevent_cse: Any, differentiated: bool, policy: Any
               ) -> tuple[list[Any], list[Any]]:
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = pe.jvp_jaxpr(pe.close_jaxpr(jaxpr), nonzeros, instantiate=False)
    nonzero_tangents = [t for t in tangents if type(t) is not ad.Zero]
    if isinstance(prevent_cse, tuple):
        prevent_cse = ((False,) * len(jvp_closed.consts) + prevent_cse
                       + (True,) * len(nonzero_tangents))
    outs = remat_p.bind(*jvp_closed.consts, *primals, *nonzero_tangents,
                        jaxpr=pe.convert_constvars_jaxpr(jvp_closed.jaxpr),
                        prevent_cse=prevent_cse, differentiated=differentiated, policy=policy)
    primal_outs, tangent_outs = outs[:len(jaxpr.outvars)], outs[len(jaxpr.outvars):]
    tangent_iter = iter(tangent_outs)
    tangents_out = [next(tangent_iter) if nz else ad.Zero.from_primal_value(p)
                    for p, nz in zip(primal_outs, out_nonzeros, strict=True)]
    return primal_outs, tangents_out


ad.primitive_jvps[remat_p] = _remat_jvp


def _remat_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                   dims: Sequence[int | None], *, jaxpr: Jaxpr, prevent_cse: Any,
                   differentiated: bool, policy: Any) -> tuple[list[Any], list[int | None]]:
    """The body batched along the arguments' own axes, bound again as `remat2`; as in JAX,
    each mapped output leaves batched along axis 0 (moved there inside the body)."""
    closed = pe.close_jaxpr(jaxpr)
    batched, out_dims = batching.batch_jaxpr(closed, axis_data, dims,
                                             [batching.zero_if_mapped] * len(closed.out_avals))
    consts = list(batched.consts)
    if isinstance(prevent_cse, tuple):
        prevent_cse = (False,) * len(consts) + prevent_cse
    body = pe.name_unused_outputs(pe.convert_constvars_jaxpr(batched.jaxpr))
    outs = remat_p.bind(*consts, *vals, jaxpr=body, prevent_cse=prevent_cse,
                        differentiated=differentiated, policy=policy)
    return outs, out_dims


batching.primitive_batchers[remat_p] = _remat_batcher


def _remat_lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value, jaxpr: Jaxpr,
                    prevent_cse: Any, differentiated: bool, policy: Any) -> list[ir.Value]:
    """The body inline. In a derivative's recomputation (`differentiated`), the inputs
    `prevent_cse` marks first pass through one `stablehlo.optimization_barrier`, so XLA
    cannot merge the recomputation with the forward pass, as in JAX."""
    if isinstance(prevent_cse, bool):
        prevent_cse = (prevent_cse,) * len(args)
    args = list(args)
    if differentiated and any(prevent_cse):
        positions = [i for i, barrier in enumerate(prevent_cse) if barrier]
        barrier = ctx.builder.op("stablehlo.optimization_barrier", [args[i] for i in positions],
                                 [args[i].type for i in positions])
        for i, value in zip(positions, barrier.results, strict=True):
            args[i] = value
    return lowering.jaxpr_subcomp(ctx.module_context, ctx.builder, jaxpr, [], args)


lowering.register_lowering(remat_p, _remat_lowering)


def _remat_partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                        ) -> list[Any]:
    """Splits a checkpointed call with unknown (tangent) inputs: the known outputs and the
    residuals the policy saves are computed on the parent trace; a `differentiated` copy
    computing the unknown outputs, recomputing what was not saved, is staged."""
    jaxpr, prevent_cse = params["jaxpr"], params["prevent_cse"]
    policy = params["policy"] or nothing_saveable
    in_unknowns = [trace._is_unknown(a) for a in args]
    known, staged, out_unknowns, out_inst, num_res = pe.partial_eval_jaxpr_custom(
        jaxpr, in_unknowns, True, False, False, policy)

    # The staged part keeps only the unknown outputs, the known part only the known outputs
    # and the residuals the staged part still reads.
    _, inst_unknowns = pe.partition_list(out_inst, out_unknowns)
    unknown_jaxpr, used_staged = pe.dce_jaxpr(staged, inst_unknowns)
    used_res, used_inputs = used_staged[:num_res], used_staged[num_res:]
    num_known_outs = len(out_unknowns) - sum(out_unknowns)
    known, used_known = pe.dce_jaxpr(known, [True] * num_known_outs + used_res)
    num_res = sum(used_res)
    known = _insert_reduce_precision(known, num_res)

    known_args, _ = pe.partition_list(in_unknowns, args)
    known_args = [a for a, used in zip(known_args, used_known, strict=True) if used]
    with core.set_current_trace(trace.parent_trace):
        known_outs = eval_jaxpr(known, [], *known_args)
    known_outs, residuals = known_outs[:num_known_outs], known_outs[num_known_outs:]

    staged_args = [a for a, used in zip(args, used_inputs, strict=True) if used]
    if isinstance(prevent_cse, tuple):
        kept = [c for c, used in zip(prevent_cse, used_inputs, strict=True) if used]
        prevent_cse = (True,) * num_res + tuple(kept)
    unknown_outs: list[Any] = []
    if unknown_jaxpr.outvars:
        new_params = dict(params, jaxpr=pe.name_unused_outputs(unknown_jaxpr),
                          differentiated=True, prevent_cse=prevent_cse)
        unknown_outs = staging.DynamicJaxprTrace.process_primitive(
            trace, remat_p, [*residuals, *staged_args], new_params)
    return pe.merge_lists(out_unknowns, known_outs, unknown_outs)


ad.partial_eval_rules[remat_p] = _remat_partial_eval


def _insert_reduce_precision(jaxpr: Jaxpr, num_res: int) -> Jaxpr:
    """Rounds each floating residual the known jaxpr also uses itself with an explicit
    `reduce_precision` to its own type, so the forward computation and the backward pass
    read the very same value even if the compiler keeps excess precision (as JAX does)."""
    residuals = jaxpr.outvars[len(jaxpr.outvars) - num_res:]
    read = {v for eqn in jaxpr.eqns for v in eqn.invars if isinstance(v, Var)}
    invars, eqns = list(jaxpr.invars), list(jaxpr.eqns)
    for var in residuals:
        if not isinstance(var, Var) or var not in read or not dtypes.is_float(var.aval.dtype):
            continue
        info = dtypes.finfo(var.aval.dtype)
        params = dict(exponent_bits=int(info.nexp), mantissa_bits=int(info.nmant))
        fresh = Var(var.aval)
        rounding = JaxprEqn([fresh], [var], elementwise.reduce_precision_p, params)
        if var in invars:
            invars[invars.index(var)] = fresh
            eqns.insert(0, rounding)
            continue
        index = next(i for i, e in enumerate(eqns) if var in e.outvars)
        producer = eqns[index]
        if producer.primitive is elementwise.reduce_precision_p and producer.params == params:
            continue
        eqns[index] = producer.replace(outvars=[fresh if v is var else v
                                                for v in producer.outvars])
        eqns.insert(index + 1, rounding)
    return jaxpr.replace(invars=invars, eqns=eqns)


def _remat_transpose(cts: Sequence[Any], *args: Any, jaxpr: Jaxpr, prevent_cse: Any,
                     differentiated: bool, policy: Any) -> list[Any]:
    in_linear = [ad.is_undefined_primal(a) for a in args]
    out_zeros = [type(ct) is ad.Zero for ct in cts]
    transposed, in_zeros = pe.transpose_jaxpr(pe.close_jaxpr(jaxpr), in_linear, out_zeros)
    nonlinear_args = [a for a, lin in zip(args, in_linear, strict=True) if not lin]
    nonzero_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    if isinstance(prevent_cse, tuple):
        kept, _ = pe.partition_list(in_linear, prevent_cse)
        prevent_cse = ((False,) * len(transposed.consts) + tuple(kept)
                       + (True,) * len(nonzero_cts))
    outs = remat_p.bind(*transposed.consts, *nonlinear_args, *nonzero_cts,
                        jaxpr=pe.convert_constvars_jaxpr(transposed.jaxpr),
                        prevent_cse=prevent_cse, differentiated=differentiated, policy=policy)
    return ad.call_cotangents(args, in_zeros, outs)


ad.primitive_transposes[remat_p] = _remat_transpose


def _remat_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    new_jaxpr, used_inputs = pe.dce_jaxpr(eqn.params["jaxpr"], used_outputs)
    prevent_cse = eqn.params["prevent_cse"]
    if isinstance(prevent_cse, tuple):
        prevent_cse = tuple(c for c, used in zip(prevent_cse, used_inputs, strict=True) if used)
    new_eqn = eqn.replace(
        invars=[v for v, used in zip(eqn.invars, used_inputs, strict=True) if used],
        outvars=[v for v, used in zip(eqn.outvars, used_outputs, strict=True) if used],
        params=dict(eqn.params, jaxpr=new_jaxpr, prevent_cse=prevent_cse))
    return used_inputs, new_eqn


pe.dce_rules[remat_p] = _remat_dce


def _remat_custom_params_updater(unks_in: Sequence[bool], inst_in: Sequence[bool],
                                 kept_outs_known: Sequence[bool], inst_out: Sequence[bool],
                                 num_res: int, params_known: dict, params_staged: dict
                                 ) -> tuple[dict, dict]:
    prevent_cse = params_known["prevent_cse"]
    if isinstance(prevent_cse, tuple):
        known_cse, _ = pe.partition_list(unks_in, prevent_cse)
        _, staged_cse = pe.partition_list(inst_in, prevent_cse)
        params_known = dict(params_known, prevent_cse=tuple(known_cse))
        params_staged = dict(params_staged, prevent_cse=(True,) * num_res + tuple(staged_cse))
    return params_known, dict(params_staged, differentiated=True)


# A checkpoint nested in a checkpointed body is split with the outer policy.
pe.partial_eval_jaxpr_custom_rules[remat_p] = functools.partial(
    pe.call_partial_eval_custom_rule, "jaxpr", _remat_custom_params_updater)
