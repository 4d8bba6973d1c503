"""Jaxpr-to-jaxpr transformations for primitives that hold jaxprs (checkpoint, and later
scan/cond): dead-code elimination, policy-driven partial evaluation, jvp and transposition of
a whole jaxpr.

- `partial_eval_jaxpr_custom` splits a jaxpr whose inputs are partly unknown into a known
  jaxpr (run now) and a staged jaxpr (run later), as JAX's function of the same name: an
  equation with an unknown input is staged; a known equation runs in the known jaxpr and,
  if the `saveable` policy refuses to save its outputs, is copied into the staged jaxpr too
  (recomputed there). Known values the staged jaxpr reads are its leading inputs, the
  residuals.
- `dce_jaxpr` drops equations whose outputs are unused and the inputs nothing reads.
- `jvp_jaxpr` and `transpose_jaxpr` trace a jaxpr's derivative and transpose into new
  jaxprs; the transposition first evaluates (recomputes) whatever does not depend on the
  linear inputs, as `TangentStagingTrace` splits it.

Jaxprs stored in primitive params are open (no constvars): constants become leading inputs
(`convert_constvars_jaxpr`), as in JAX.
"""
from __future__ import annotations

import collections
import functools
import weakref
from typing import Any, Callable, Sequence

from justjax._src.compilation import caches
from justjax._src.config import config
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import (ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var,
                                     eval_jaxpr, in_equation_context, jaxpr_as_fun,
                                     jaxprs_in_params)
from justjax._src.interpreters import ad, staging


# ---------------------------------------------------------------------------------------------
# Caching. As in JAX, transforming the same jaxpr the same way twice gives the very same
# result object: a checkpointed function called twice shares one body (JAX prints such a
# jaxpr once, as `let jaxpr = ... in`), and nothing is traced twice.

def _holds_tracer(value: Any) -> bool:
    if isinstance(value, core.Tracer):
        return True
    if isinstance(value, ClosedJaxpr):
        return any(isinstance(c, core.Tracer) for c in value.consts)
    if isinstance(value, (list, tuple)):
        return any(_holds_tracer(v) for v in value)
    return False


def transform_cache(fun: Callable[..., Any], maxsize: int = 1024) -> Callable[..., Any]:
    """Memoizes `fun` on its arguments (jaxprs compare by identity) and the config that
    changes tracing. Calls with unhashable arguments and results holding tracers (which
    belong to one trace) are not cached.

    A call whose first argument is a jaxpr is cached on that jaxpr (at most `PER_JAXPR` results
    per function): its results (a compiled program, a transformed jaxpr) live as long as the
    jaxpr, and go with it once the function that traced it is gone, as JAX's weakref-keyed
    caches. Other calls share one table of the `maxsize` most recently used."""
    table: collections.OrderedDict[Any, Any] = collections.OrderedDict()
    caches.register_cache(table.clear)

    @functools.wraps(fun)
    def cached(*args: Any) -> Any:
        owner = args[0] if args and type(args[0]) in (ClosedJaxpr, Jaxpr) else None
        if owner is None:
            lru, size, key = table, maxsize, (args, in_equation_context(), config.trace_context())
        else:
            lru, size = _jaxpr_table(owner, cached), PER_JAXPR
            key = (args[1:], in_equation_context(), config.trace_context())
        try:
            hit = lru.get(key)
        except TypeError:
            return fun(*args)
        if hit is not None:
            lru.move_to_end(key)
            return hit
        result = fun(*args)
        if not _holds_tracer(result):
            lru[key] = result
            if len(lru) > size:
                lru.popitem(last=False)
        return result

    return cached


# Results cached on a jaxpr, per cached function; the jaxprs that hold some (so that
# `jax.clear_caches()` can empty them).
PER_JAXPR = 64
_CACHE_ATTRIBUTE = "_transform_results"
_jaxprs_with_results: weakref.WeakSet[Any] = weakref.WeakSet()


def _jaxpr_table(owner: Any, function: Callable[..., Any]) -> collections.OrderedDict:
    tables = owner.__dict__.get(_CACHE_ATTRIBUTE)
    if tables is None:
        tables = owner.__dict__[_CACHE_ATTRIBUTE] = {}
        _jaxprs_with_results.add(owner)
    table = tables.get(function)
    if table is None:
        table = tables[function] = collections.OrderedDict()
    return table


def _clear_jaxpr_tables() -> None:
    for owner in list(_jaxprs_with_results):
        owner.__dict__.pop(_CACHE_ATTRIBUTE, None)
    _jaxprs_with_results.clear()


caches.register_cache(_clear_jaxpr_tables)


# ---------------------------------------------------------------------------------------------
# Small jaxpr utilities.

@transform_cache
def convert_constvars_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` with its constvars turned into leading invars."""
    return jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])


@transform_cache
def close_jaxpr(jaxpr: Jaxpr) -> ClosedJaxpr:
    """An open jaxpr (no constvars) as a ClosedJaxpr."""
    return ClosedJaxpr(jaxpr, [])


def name_unused_outputs(jaxpr: Jaxpr) -> Jaxpr:
    """Replaces `_` outputs (DropVar) of equations by fresh variables.

    Tracing marks an output nothing reads as `_` for the top-level printout; JAX prints
    jaxprs nested in params with every output named, so jaxprs stored in params get names.
    """
    if not any(isinstance(v, DropVar) for eqn in jaxpr.eqns for v in eqn.outvars):
        return jaxpr
    eqns = [eqn.replace(outvars=[Var(v.aval) if isinstance(v, DropVar) else v
                                 for v in eqn.outvars])
            if any(isinstance(v, DropVar) for v in eqn.outvars) else eqn
            for eqn in jaxpr.eqns]
    return jaxpr.replace(eqns=eqns)


def trace_to_subjaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                      debug: staging.DebugInfo | None = None) -> tuple[Jaxpr, list[Any]]:
    """Traces `fun(*tracers) -> list` to an open jaxpr for a primitive's params.

    Returns the jaxpr, whose leading invars stand for the returned constants (values the
    function closed over, possibly tracers of enclosing transformations), and the constants.
    """
    closed = staging.trace_to_jaxpr(fun, in_avals, debug)
    return name_unused_outputs(convert_constvars_jaxpr(closed.jaxpr)), list(closed.consts)


def _as_flags(value: bool | Sequence[bool], n: int) -> list[bool]:
    return [value] * n if isinstance(value, bool) else list(value)


def partition_list(flags: Sequence[bool], items: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """(items whose flag is False, items whose flag is True)."""
    false_items: list[Any] = []
    true_items: list[Any] = []
    for flag, item in zip(flags, items, strict=True):
        (true_items if flag else false_items).append(item)
    return false_items, true_items


def merge_lists(flags: Sequence[bool], false_items: Sequence[Any], true_items: Sequence[Any]
                ) -> list[Any]:
    """Inverse of `partition_list`."""
    false_iter, true_iter = iter(false_items), iter(true_items)
    merged = [next(true_iter) if flag else next(false_iter) for flag in flags]
    if next(false_iter, None) is not None or next(true_iter, None) is not None:
        raise ValueError("merge_lists: more items than flags")
    return merged


# ---------------------------------------------------------------------------------------------
# Dead-code elimination.

# primitive -> rule(used_outputs, eqn) -> (used_inputs, new_eqn or None): how an equation
# holding a jaxpr prunes itself; the default keeps an equation whole if any output is used.
DceRule = Callable[[list[bool], JaxprEqn], tuple[list[bool], JaxprEqn | None]]
dce_rules: dict[core.Primitive, DceRule] = {}


def _default_dce_rule(used_outputs: list[bool], eqn: JaxprEqn
                      ) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    return [True] * len(eqn.invars), eqn


# Primitives with side effects (debug callbacks, io_callback): never removed, nor are
# equations whose jaxpr params contain one, whatever reads their results.
effectful_primitives: set[core.Primitive] = set()


@transform_cache
def jaxpr_has_effects(jaxpr: Jaxpr) -> bool:
    """Whether `jaxpr` (or a jaxpr nested in its equations' params) has a side effect."""
    return any(eqn_has_effects(eqn) for eqn in jaxpr.eqns)


def eqn_has_effects(eqn: JaxprEqn) -> bool:
    return (bool(eqn.effects) or eqn.primitive in effectful_primitives
            or any(jaxpr_has_effects(sub) for sub in jaxprs_in_params(eqn.params)))


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: bool | Sequence[bool],
              instantiate: bool | Sequence[bool] = False) -> tuple[Jaxpr, list[bool]]:
    """Dead-code elimination.

    Args:
      jaxpr: an open jaxpr.
      used_outputs: which outputs to keep (a bool applies to all).
      instantiate: inputs to keep even when nothing reads them.
    Returns:
      The pruned jaxpr (only the used outputs, only the inputs still read or instantiated)
      and which inputs it kept.
    """
    new_jaxpr, used_inputs = _dce_jaxpr(
        jaxpr, tuple(_as_flags(used_outputs, len(jaxpr.outvars))),
        tuple(_as_flags(instantiate, len(jaxpr.invars))))
    return new_jaxpr, list(used_inputs)


@transform_cache
def _dce_jaxpr(jaxpr: Jaxpr, used_outputs: tuple[bool, ...], instantiate: tuple[bool, ...]
               ) -> tuple[Jaxpr, tuple[bool, ...]]:
    used: set[Var] = {v for v, u in zip(jaxpr.outvars, used_outputs, strict=True)
                      if u and isinstance(v, Var)}
    kept: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        used_outs = [not isinstance(v, DropVar) and v in used for v in eqn.outvars]
        effectful = eqn_has_effects(eqn)
        if effectful:
            used_outs = [True] * len(eqn.outvars)
        rule = dce_rules.get(eqn.primitive, _default_dce_rule)
        used_ins, new_eqn = rule(used_outs, eqn)
        if new_eqn is None and effectful:  # no outputs at all, but it must still run
            used_ins, new_eqn = [True] * len(eqn.invars), eqn
        if new_eqn is not None:
            kept.append(new_eqn)
        used.update(v for v, u in zip(eqn.invars, used_ins, strict=True)
                    if u and isinstance(v, Var))
    used_inputs = [inst or v in used
                   for v, inst in zip(jaxpr.invars, instantiate, strict=True)]
    new_jaxpr = jaxpr.replace(
        invars=[v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(jaxpr.outvars, used_outputs, strict=True) if u],
        eqns=kept[::-1])
    return new_jaxpr, tuple(used_inputs)


# ---------------------------------------------------------------------------------------------
# Policy-driven partial evaluation (JAX's partial_eval_jaxpr_custom).

class RecomputeType:
    """Policy answer: recompute this value in the staged jaxpr instead of saving it."""

    def __repr__(self) -> str:
        return "Recompute"


class SaveableType:
    """Policy answer: save this value as a residual."""

    def __repr__(self) -> str:
        return "Saveable"


Recompute = RecomputeType()
Saveable = SaveableType()


def ensure_enum(case: Any) -> RecomputeType | SaveableType:
    """A policy's answer (a bool, `Saveable` or `Recompute`) as `Saveable`/`Recompute`."""
    if isinstance(case, bool):
        return Saveable if case else Recompute
    if not isinstance(case, (RecomputeType, SaveableType)):
        raise TypeError("Value returned by a remat policy should be a bool or "
                        "`ad_checkpoint.Recompute`, `ad_checkpoint.Saveable` or "
                        f"`ad_checkpoint.Offloadable(...)`. Got {case} of type {type(case)}.")
    return case


def everything_saveable(*_: Any, **__: Any) -> bool:
    """The policy of plain autodiff: every known intermediate may be saved."""
    return True


# primitive -> rule(saveable, unks_in, inst_in, eqn) -> (known eqn or None, staged eqn or None,
# unks_out, inst_out, residual vars) for equations holding jaxprs (a nested checkpoint).
PartialEvalCustomRule = Callable[
    [Callable[..., Any], Sequence[bool], Sequence[bool], JaxprEqn],
    tuple[JaxprEqn | None, JaxprEqn | None, Sequence[bool], Sequence[bool], list[Var]]]
partial_eval_jaxpr_custom_rules: dict[core.Primitive, PartialEvalCustomRule] = {}


def partial_eval_jaxpr_custom(jaxpr: Jaxpr, in_unknowns: Sequence[bool],
                              in_inst: bool | Sequence[bool],
                              ensure_out_unknowns: bool | Sequence[bool],
                              ensure_out_inst: bool | Sequence[bool],
                              saveable: Callable[..., Any] | None
                              ) -> tuple[Jaxpr, Jaxpr, list[bool], list[bool], int]:
    """Splits `jaxpr` into a known and a staged jaxpr.

    Args:
      jaxpr: an open jaxpr.
      in_unknowns: which inputs are unknown (available only to the staged jaxpr).
      in_inst: which known inputs the staged jaxpr receives too ("instantiated").
      ensure_out_unknowns: outputs to report unknown even if computable now.
      ensure_out_inst: known outputs the staged jaxpr must produce as well.
      saveable: the policy `saveable(prim, *in_avals, **params) -> bool | Saveable |
        Recompute` for known equations; None saves everything.
    Returns:
      `(known, staged, out_unknowns, out_inst, num_res)`: `known` maps the known inputs to
      the known outputs followed by `num_res` residuals; `staged` maps the residuals and the
      instantiated inputs to the instantiated outputs.
    """
    known, staged, out_unknowns, out_inst, num_res = _partial_eval_jaxpr_custom(
        jaxpr, tuple(in_unknowns), tuple(_as_flags(in_inst, len(jaxpr.invars))),
        tuple(_as_flags(ensure_out_unknowns, len(jaxpr.outvars))),
        tuple(_as_flags(ensure_out_inst, len(jaxpr.outvars))),
        everything_saveable if saveable is None else saveable)
    return known, staged, list(out_unknowns), list(out_inst), num_res


@transform_cache
def _partial_eval_jaxpr_custom(jaxpr: Jaxpr, in_unknowns: tuple[bool, ...],
                               in_inst: tuple[bool, ...], ensure_out_unknowns: tuple[bool, ...],
                               ensure_out_inst: tuple[bool, ...], saveable: Callable[..., Any]
                               ) -> tuple[Jaxpr, Jaxpr, tuple[bool, ...], tuple[bool, ...], int]:
    # var -> (unknown, instantiated: available in the staged jaxpr)
    env: dict[Var, tuple[bool, bool]] = {}
    residuals: dict[Var, None] = {}  # ordered set, in order of first need

    def read(atom: Any) -> tuple[bool, bool]:
        if isinstance(atom, Literal):
            return False, True
        return env[atom]

    def ensure_instantiated(inst: bool, atom: Any) -> Any:
        if isinstance(atom, Var) and not inst:
            residuals[atom] = None
        return atom

    for var, unknown, inst in zip(jaxpr.invars, in_unknowns, in_inst, strict=True):
        env[var] = (unknown, inst or unknown)
    for var in jaxpr.constvars:
        env[var] = (False, True)
    known_eqns: list[JaxprEqn] = []
    staged_eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        unks_in, inst_in = zip(*[read(v) for v in eqn.invars]) if eqn.invars else ((), ())
        rule = partial_eval_jaxpr_custom_rules.get(eqn.primitive)
        if rule is not None:
            known_eqn, staged_eqn, unks_out, inst_out, res = rule(saveable, list(unks_in),
                                                                  list(inst_in), eqn)
            if known_eqn is not None:
                known_eqns.append(known_eqn)
            if staged_eqn is not None:
                staged_eqns.append(staged_eqn)
            residuals.update((r, None) for r in res)
            for var, unk, inst in zip(eqn.outvars, unks_out, inst_out, strict=True):
                env[var] = (unk, inst)
        elif any(unks_in):
            inputs = [ensure_instantiated(i, v) for i, v in zip(inst_in, eqn.invars)]
            staged_eqns.append(eqn.replace(invars=inputs))
            env.update((v, (True, True)) for v in eqn.outvars)
        else:
            known_eqns.append(eqn)
            policy = ensure_enum(saveable(eqn.primitive, *[v.aval for v in eqn.invars],
                                          **eqn.params))
            if isinstance(policy, SaveableType):
                env.update((v, (False, False)) for v in eqn.outvars)
            else:
                # Recomputed: the staged jaxpr repeats the equation on its own copies.
                inputs = [ensure_instantiated(i, v) for i, v in zip(inst_in, eqn.invars)]
                staged_eqns.append(eqn.replace(invars=inputs))
                env.update((v, (False, True)) for v in eqn.outvars)

    out_unknowns, out_inst = [], []
    for atom, ensure_unk, ensure_inst in zip(jaxpr.outvars, ensure_out_unknowns,
                                             ensure_out_inst, strict=True):
        unk, inst = read(atom)
        if ensure_inst:
            ensure_instantiated(inst, atom)
        out_unknowns.append(unk or ensure_unk)
        out_inst.append(inst or ensure_inst)

    residual_vars = list(residuals)
    ins_known, _ = partition_list(in_unknowns, jaxpr.invars)
    outs_known, _ = partition_list(out_unknowns, jaxpr.outvars)
    known = jaxpr.replace(invars=ins_known, outvars=[*outs_known, *residual_vars],
                          eqns=known_eqns, debug_info=None)
    _, ins_staged = partition_list([i or u for i, u in zip(in_inst, in_unknowns)],
                                   jaxpr.invars)
    _, outs_staged = partition_list(out_inst, jaxpr.outvars)
    staged = jaxpr.replace(invars=[*residual_vars, *ins_staged], outvars=outs_staged,
                           eqns=staged_eqns, debug_info=None)
    return known, staged, tuple(out_unknowns), tuple(out_inst), len(residual_vars)


def staged_jaxpr_invars(jaxpr: Jaxpr | ClosedJaxpr) -> list[Var]:
    return (jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr).invars


def call_partial_eval_custom_rule(jaxpr_param_name: str, params_updater: Callable[..., Any],
                                  saveable: Callable[..., Any], unks_in: Sequence[bool],
                                  inst_in: Sequence[bool], eqn: JaxprEqn
                                  ) -> tuple[JaxprEqn, JaxprEqn, list[bool], list[bool],
                                             list[Var]]:
    """`partial_eval_jaxpr_custom` rule for an equation calling the open jaxpr
    `eqn.params[jaxpr_param_name]` (or closed jaxpr, as `jit` holds): one copy of the
    equation runs the known part and returns residuals, another runs the staged part.

    `params_updater(unks_in, inst_in, kept_outs_known, inst_out, num_res, params_known,
    params_staged) -> (params_known, params_staged)` adjusts other params.
    """
    jaxpr = eqn.params[jaxpr_param_name]
    closed_consts = None
    if isinstance(jaxpr, ClosedJaxpr):  # a `jit`: both halves keep the constants
        jaxpr, closed_consts = jaxpr.jaxpr, jaxpr.consts
    known, staged, unks_out, inst_out, num_res = partial_eval_jaxpr_custom(
        jaxpr, unks_in, inst_in, False, False, saveable)
    if closed_consts is not None:
        known, staged = ClosedJaxpr(known, closed_consts), ClosedJaxpr(staged, closed_consts)
    ins_known, _ = partition_list(unks_in, eqn.invars)
    out_binders_known, _ = partition_list(unks_out, eqn.outvars)
    _, ins_staged = partition_list(inst_in, eqn.invars)
    _, out_binders_staged = partition_list(inst_out, eqn.outvars)
    params_known = {**eqn.params, jaxpr_param_name: known}
    params_staged = {**eqn.params, jaxpr_param_name: staged}
    params_known, params_staged = params_updater(
        list(unks_in), list(inst_in), [not u for u in unks_out], inst_out, num_res,
        params_known, params_staged)
    residuals = [Var(v.aval) for v in staged_jaxpr_invars(staged)[:num_res]]
    eqn_known = eqn.replace(invars=ins_known, outvars=[*out_binders_known, *residuals],
                            params=params_known)
    eqn_staged = eqn.replace(invars=[*residuals, *ins_staged], outvars=out_binders_staged,
                             params=params_staged)
    # Known inputs the staged copy reads but the staged jaxpr does not have become residuals.
    new_inst = [v for v, inst in zip(eqn.invars, inst_in, strict=True)
                if isinstance(v, Var) and not inst]
    return eqn_known, eqn_staged, unks_out, inst_out, new_inst + residuals


# ---------------------------------------------------------------------------------------------
# Forward mode and transposition of whole jaxprs.

def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: Sequence[bool],
              instantiate: bool | Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """The jvp of a jaxpr as a jaxpr.

    Args:
      closed: the jaxpr to differentiate.
      nonzeros: which inputs have a (nonzero) tangent; the others' tangents are zero.
      instantiate: output tangents to produce even when they are zero.
    Returns:
      A closed jaxpr from (primals, nonzero tangents) to (primal outputs, nonzero output
      tangents) and which output tangents it produces.
    """
    jvp_closed, out_nonzeros = _jvp_jaxpr(closed, tuple(nonzeros),
                                          tuple(_as_flags(instantiate, len(closed.out_avals))))
    return jvp_closed, list(out_nonzeros)


@transform_cache
def _jvp_jaxpr(closed: ClosedJaxpr, nonzeros: tuple[bool, ...], instantiate: tuple[bool, ...]
               ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    tangent_avals = [ad.tangent_aval(a) for a in closed.in_avals]
    nz_avals = [a for a, nz in zip(tangent_avals, nonzeros, strict=True) if nz]
    out_nonzeros: list[bool] = []

    def jvp_fun(*args: Any) -> list[Any]:
        primals, nz_tangents = args[:len(tangent_avals)], args[len(tangent_avals):]
        tangents = merge_lists(nonzeros, [ad.Zero(a) for a, nz in
                                          zip(tangent_avals, nonzeros) if not nz],
                               nz_tangents)
        primal_outs, tangent_outs = ad.jvp_flat(jaxpr_as_fun(closed), primals, tangents,
                                                instantiate=False)
        tangent_outs = [ad.instantiate_zeros(t) if inst else t
                        for t, inst in zip(tangent_outs, instantiate, strict=True)]
        out_nonzeros.extend(type(t) is not ad.Zero for t in tangent_outs)
        return [*primal_outs, *[t for t in tangent_outs if type(t) is not ad.Zero]]

    jaxpr, consts = trace_to_subjaxpr(jvp_fun, [*closed.in_avals, *nz_avals])
    return _reclose(jaxpr, consts), tuple(out_nonzeros)


@transform_cache
def split_jaxpr(closed: ClosedJaxpr, in_unknowns: tuple[bool, ...],
                instantiate: tuple[bool, ...] | None = None,
                forwardable: tuple[bool, ...] | None = None, mode: str = "call"
                ) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], tuple[tuple[str, Any], ...]]:
    """Splits `closed` into a known jaxpr (known inputs -> known outputs + residuals) and an
    unknown jaxpr (residuals + unknown inputs -> unknown outputs), as JAX's partial
    evaluation of a call or a loop body does.

    Args:
      closed: the jaxpr to split.
      in_unknowns: which inputs are unknown.
      instantiate: outputs to make unknown even when they are computable now (a loop's
        carries found unknown, whose type may not change between iterations); default none.
      forwardable: known inputs whose value the unknown side may read directly when it needs
        them as residuals; default all. A loop's carries are not (they change every step).
      mode: where residuals come from. `"call"` (a jit): forwarded from known inputs and
        known outputs, the constants `closed` closes over passed from outside, the rest
        returned. `"loop"` (a scan body): forwarded from `forwardable` inputs, every constant
        passed from outside (a loop stacks what it returns, so known outputs are not
        reused). `"branch"` (a cond branch): every residual returned, as the branches' must
        be joined into one list.
    Returns:
      `(known, unknown, out_unknowns, sources)`; `unknown` takes the residuals first. Each
      residual's source: `("in", i)` known input i; `("out", j)` known output j;
      `("res", k)` the known jaxpr's k-th extra output; `("const", value)` a constant passed
      to the unknown side from outside.
    """
    instantiate = instantiate or (False,) * len(closed.out_avals)
    forwardable = forwardable or (True,) * len(in_unknowns)
    known_avals, unknown_avals = partition_list(in_unknowns, closed.in_avals)
    known_forwardable, _ = partition_list(in_unknowns, forwardable)
    found: dict[str, Any] = {}

    def source_of(value: Any, known_args: Sequence[Any], known_outs: Sequence[Any]
                  ) -> tuple[str, Any] | None:
        if mode == "branch":
            return None
        if any(value is c for c in closed.consts) or (
                mode == "loop" and not isinstance(value, core.Tracer)):
            return ("const", value)
        for i, (arg, fwd) in enumerate(zip(known_args, known_forwardable, strict=True)):
            if value is arg:
                return ("in", i) if fwd else None
        if mode == "call":
            return next((("out", j) for j, o in enumerate(known_outs) if o is value), None)
        return None

    def known_fun(*known_args: Any) -> list[Any]:
        unknown_trace = ad.TangentStagingTrace(core.current_trace())
        unknown_args = [unknown_trace.new_arg(a) for a in unknown_avals]
        args = merge_lists(in_unknowns, list(known_args), unknown_args)
        with core.set_current_trace(unknown_trace):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        out_unknowns = [inst or unknown_trace._is_unknown(o)
                        for o, inst in zip(outs, instantiate, strict=True)]
        known_outs, unknown_outs = partition_list(out_unknowns, outs)
        # A known output made unknown becomes a residual the unknown jaxpr returns.
        unknown_closed = unknown_trace.to_closed_jaxpr(unknown_outs)
        unknown_trace.release()
        # Residuals only dead tangent code reads (behind a stop_gradient, say) are dropped.
        num_res = len(unknown_closed.consts)
        unknown_jaxpr, used = dce_jaxpr(
            convert_constvars_jaxpr(unknown_closed.jaxpr), True,
            instantiate=[False] * num_res + [True] * len(unknown_avals))
        residuals = [c for c, u in zip(unknown_closed.consts, used[:num_res], strict=True) if u]
        sources, extra = [], []
        for value in residuals:
            source = source_of(value, known_args, known_outs)
            if source is None:
                source = ("res", len(extra))
                extra.append(value)
            sources.append(source)
        found.update(unknown=unknown_jaxpr, out_unknowns=tuple(out_unknowns),
                     sources=tuple(sources))
        return [*known_outs, *extra]

    known = staging.trace_to_jaxpr(known_fun, known_avals)
    known_jaxpr, _ = dce_jaxpr(known.jaxpr, True, instantiate=True)
    known = ClosedJaxpr(name_unused_outputs(known_jaxpr), known.consts)
    unknown = close_jaxpr(name_unused_outputs(found["unknown"]))
    return known, unknown, found["out_unknowns"], found["sources"]


def _reclose(jaxpr: Jaxpr, consts: Sequence[Any]) -> ClosedJaxpr:
    """An open jaxpr whose leading invars stand for `consts`, as a ClosedJaxpr."""
    n = len(consts)
    return ClosedJaxpr(jaxpr.replace(constvars=jaxpr.invars[:n], invars=jaxpr.invars[n:]),
                       list(consts))


def partial_eval_linear(closed: ClosedJaxpr, args: Sequence[Any], linear: Sequence[bool]
                        ) -> ClosedJaxpr:
    """Evaluates the part of `closed` not depending on its `linear` inputs on the current
    trace (recomputing it) and returns the rest: a closed jaxpr from the linear inputs to
    all outputs, whose consts are the values it reads from the first part. `args` holds the
    values of the non-linear inputs (entries at linear positions are ignored)."""
    unknown_trace = ad.TangentStagingTrace(core.current_trace())
    full_args = [unknown_trace.new_arg(v.aval) if lin else arg
                 for v, arg, lin in zip(closed.jaxpr.invars, args, linear, strict=True)]
    with core.set_current_trace(unknown_trace):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *full_args)
    return unknown_trace.to_closed_jaxpr(outs)


def transpose_jaxpr(closed: ClosedJaxpr, in_linear: Sequence[bool], out_zeros: Sequence[bool],
                    instantiate: bool | Sequence[bool] = False
                    ) -> tuple[ClosedJaxpr, list[bool]]:
    """The transpose of a jaxpr linear in its `in_linear` inputs, as a jaxpr.

    Returns a closed jaxpr from (the non-linear inputs, cotangents of the outputs that are
    not `out_zeros`) to the nonzero cotangents of the linear inputs, and which linear inputs
    get a zero cotangent. Its equations first recompute everything not depending on the
    linear inputs, then transpose the rest. `instantiate` (one flag per linear input) makes
    those cotangents zeros arrays rather than absent when they are zero.
    """
    transposed, in_zeros = _transpose_jaxpr(closed, tuple(in_linear), tuple(out_zeros),
                                            tuple(_as_flags(instantiate, sum(in_linear))))
    return transposed, list(in_zeros)


@transform_cache
def _transpose_jaxpr(closed: ClosedJaxpr, in_linear: tuple[bool, ...],
                     out_zeros: tuple[bool, ...], instantiate: tuple[bool, ...]
                     ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    nonlinear_avals = [a for a, lin in zip(closed.in_avals, in_linear, strict=True) if not lin]
    ct_avals = [ad.tangent_aval(a) for a, z in zip(closed.out_avals, out_zeros, strict=True)
                if not z]
    in_zeros: list[bool] = []

    def transposed(*args: Any) -> list[Any]:
        nonlinear, nonzero_cts = args[:len(nonlinear_avals)], args[len(nonlinear_avals):]
        placeholders = [None] * sum(in_linear)
        linear_jaxpr = partial_eval_linear(closed, merge_lists(in_linear, nonlinear,
                                                               placeholders), in_linear)
        zero_cts = [ad.Zero(ad.tangent_aval(a))
                    for a, z in zip(closed.out_avals, out_zeros, strict=True) if z]
        cts = merge_lists(out_zeros, nonzero_cts, zero_cts)
        undefined = [ad.UndefinedPrimal(v.aval) for v in linear_jaxpr.jaxpr.invars]
        in_cts = ad.backward_pass(linear_jaxpr.jaxpr, linear_jaxpr.consts, undefined, cts)
        in_cts = [ad.instantiate_zeros(ct) if inst else ct
                  for ct, inst in zip(in_cts, instantiate, strict=True)]
        in_zeros.extend(type(ct) is ad.Zero for ct in in_cts)
        return [ct for ct in in_cts if type(ct) is not ad.Zero]

    jaxpr, consts = trace_to_subjaxpr(transposed, [*nonlinear_avals, *ct_avals])
    return _reclose(jaxpr, consts), tuple(in_zeros)


# ---------------------------------------------------------------------------------------------
# Partial evaluation of wrapped functions, as JAX's extension API offers it to libraries
# (flax's `nn.scan` asks which outputs of a function are known without its unknown inputs).

class PartialVal(tuple):
    """A value known now, `(None, value)`, or known only by its type, `(aval, None)`."""

    def __new__(cls, pair: tuple[Any, Any]) -> PartialVal:
        aval, const = pair
        if (aval is None) == (const is None):
            raise ValueError(f"a PartialVal is either known or unknown, got {pair!r}")
        return tuple.__new__(cls, pair)

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        return cls((None, const))

    @classmethod
    def unknown(cls, aval: ShapedArray) -> PartialVal:
        return cls((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        """The known value, or None."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> ShapedArray:
        known = self.get_known()
        return core.get_aval(known) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun: Any, pvals: Sequence[PartialVal],
                           instantiate: bool | Sequence[bool] = False
                           ) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Runs the `WrappedFun` `fun` on partly known inputs: what depends only on known
    inputs is computed now (on the current trace), the rest is staged.

    Returns:
      The staged jaxpr (its constvars are the known values it reads, given as the third
      result; its invars the unknown inputs; its outvars the unknown outputs), the outputs
      as PartialVals (known ones hold their values), and the constants.
    """
    trace = ad.TangentStagingTrace(core.current_trace())
    args = [trace.new_arg(pv[0]) if not pv.is_known() else pv.get_known() for pv in pvals]
    with core.set_current_trace(trace):
        outs = list(fun.call_wrapped(*args))
    flags = _as_flags(instantiate, len(outs))
    out_pvals, unknown_outs = [], []
    for out, inst in zip(outs, flags, strict=True):
        if trace._is_unknown(out) or inst:
            unknown_outs.append(out)
            out_pvals.append(PartialVal.unknown(core.get_aval(out)))
        else:
            out_pvals.append(PartialVal.known(out))
    closed = trace.to_closed_jaxpr(unknown_outs)
    trace.release()
    return closed.jaxpr, out_pvals, list(closed.consts)


def trace_to_jaxpr_dynamic(fun: Any, in_avals: Sequence[ShapedArray], *,
                           keep_inputs: Sequence[bool] | None = None, **_: Any
                           ) -> tuple[Jaxpr, list[ShapedArray], list[Any]]:
    """Traces the `WrappedFun` `fun` on arguments of `in_avals` to a jaxpr whose constvars
    are the values it closes over: (jaxpr, out_avals, consts)."""
    # An input not kept is never passed to `fun`: the jaxpr is traced on the kept ones.
    kept = in_avals if keep_inputs is None else [
        aval for aval, k in zip(in_avals, keep_inputs, strict=True) if k]
    closed = staging.trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)), kept,
                                    fun.debug_info)
    return closed.jaxpr, closed.jaxpr.out_avals, list(closed.consts)
