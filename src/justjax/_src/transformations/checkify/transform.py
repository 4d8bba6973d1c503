"""The checkify transformation: `checkify(f)(*args) -> (Error, out)`.

As in JAX, `f` is first traced to a jaxpr (its arguments closed over, so Python control flow
on them fails as under `jit`); then the jaxpr is evaluated under a `CheckifyTrace`. That trace
holds the `Error` found so far as its state: each equation binds its primitive to it, and it
runs the primitive's rule from `error_checks` (or just binds it again, the default rule) with
the parent trace current. A rule takes the error and the operands and returns the updated
error and the outputs:

    rule(error, enabled_errors, *args, **params) -> (error, outs)

Since only the evaluation of a jaxpr binds to it, the trace needs no tracers of its own: the
values are the parent trace's. Rules for primitives holding jaxprs (`jit`, `cond`, `while`,
`scan`, `remat2`) checkify those jaxprs (`checkify_closed_jaxpr`, cached) and bind the
primitive again with the error's leaves threaded through as extra operands and results.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from justjax._src.transformations.custom_derivatives import FlatFun
from justjax._src.interpreters import ad, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.runtime.array import Array
from justjax._src.transformations.checkify.check import check_p
from justjax._src.transformations.checkify.error import (Error, ErrorEffect, Metadata, Out,
                                                         effect_avals, error_from_leaves,
                                                         error_leaves, init_error, sorted_effects,
                                                         update_error, user_checks)

Rule = Callable[..., tuple[Error, Any]]
# primitive -> rule(error, enabled_errors, *args, **params) -> (error, outs)
error_checks: dict[core.Primitive, Rule] = {}


class CheckifyTrace(core.Trace):
    """Evaluation of a jaxpr threading an `Error` (the trace's state) through the rules of
    `error_checks`; `enabled_errors` is the set of exception classes to check for."""

    def __init__(self, parent_trace: core.Trace, enabled_errors: frozenset, error: Error
                 ) -> None:
        super().__init__()
        self.parent_trace = parent_trace
        self.tag = core.TraceTag()
        self.enabled_errors = enabled_errors
        self.error = error

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict
                          ) -> Any:
        rule = error_checks.get(primitive)
        with core.set_current_trace(self.parent_trace):
            if rule is None:
                return primitive.bind(*args, **params)
            self.error, out = rule(self.error, self.enabled_errors, *args, **params)
        return out

    def process_custom_jvp_call(self, primitive: core.Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Checkifies `fun`; the rule is not checked (check the result of a rule with
        checkify-of-jvp): it passes the error and its tangents through unchanged."""
        call = _CheckedCall(self, fun, args)
        n = call.num_leaves

        def checked_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
            primal_out, tangent_out = jvp(list(primals[n:]), list(tangents[n:]))
            err_tangents = [_error_tangent(p, t)
                            for p, t in zip(primals[:n], tangents[:n], strict=True)]
            return [*primals[:n], *primal_out], [*err_tangents, *tangent_out]

        outs = primitive.bind_with_trace(self.parent_trace, call.fun,
                                         FlatFun(checked_jvp, _name(jvp)),
                                         [*call.leaves, *args], symbolic_zeros=symbolic_zeros)
        return call.finish(outs)

    def process_custom_vjp_call(self, primitive: core.Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        """Checkifies `fun`; as in JAX, `fwd` is not checked: it passes the error through
        (so `bwd` passes the error's cotangents back to it)."""
        call = _CheckedCall(self, fun, args)
        n = call.num_leaves

        def checked_fwd(primals: Sequence[Any], which_linear: Sequence[bool]
                        ) -> tuple[list, list]:
            residuals, outs = fwd(list(primals[n:]), list(which_linear[n:]))
            return residuals, [*primals[:n], *outs]

        def checked_bwd(residuals: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
            err_cts = [ad.Zero(core.get_aval(ct)) if ad.is_float0(ct) else ct
                       for ct in cts[:n]]
            return [*err_cts, *bwd(residuals, list(cts[n:]))]

        outs = primitive.bind_with_trace(self.parent_trace, call.fun,
                                         FlatFun(checked_fwd, _name(fwd)),
                                         FlatFun(checked_bwd, _name(bwd)),
                                         [*call.leaves, *args], symbolic_zeros=symbolic_zeros)
        return call.finish(outs)


def _name(fun: Callable) -> str:
    return getattr(fun, "name", None) or staging.fun_name(fun)


def _error_tangent(primal: Any, tangent: Any) -> Any:
    # Predicates and codes have float0 tangents, which stay symbolic zeros.
    if type(tangent) is ad.Zero or ad.is_float0(tangent):
        return ad.Zero.from_primal_value(primal)
    return tangent


class _CheckedCall:
    """A custom-derivative call's function checkified, for a trace whose error has effects
    `in_effects`. The function is traced once (finding the effects it adds); the call takes
    and returns an error with all of them, so its derivative rules can pass the error
    through unchanged whichever of function and rule the parent trace runs."""

    def __init__(self, trace: CheckifyTrace, fun: Callable, args: Sequence[Any]) -> None:
        in_effects = sorted_effects(trace.error)
        avals = [core.get_aval(a) for a in args]
        self.checked = trace_checked(fun, trace.enabled_errors, in_effects, avals, 0,
                                     getattr(fun, "debug_info", None))
        self.trace = trace
        self.in_error = trace.error._add_placeholder_effects(self.checked.out_effects)
        self.effects = self.checked.out_effects
        self.leaves = error_leaves(self.in_error, self.effects)
        self.num_leaves = len(self.leaves)
        # Where the leaves the traced function takes are among the call's.
        self._taken = _leaf_positions(self.effects, in_effects)
        jaxpr = self.checked.jaxpr

        def run(*xs: Any) -> list[Any]:
            taken = [xs[i] for i in self._taken]
            return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *taken, *xs[self.num_leaves:])

        self.fun = FlatFun(run, _name(fun), lambda: getattr(fun, "debug_info", None))

    def finish(self, outs: Sequence[Any]) -> list[Any]:
        """Sets the trace's error from the call's outputs; returns the function's."""
        self.trace.error = self.checked.error(outs, self.in_error._metadata)
        return list(outs[self.num_leaves:])


def _leaf_positions(effects: Sequence[ErrorEffect], subset: Sequence[ErrorEffect]) -> list[int]:
    """The positions in `error_leaves(_, effects)` of the leaves of `subset`'s effects."""
    index = {e: i for i, e in enumerate(effects)}
    n = len(effects)
    payload_start, start = [], 2 * n
    for effect in effects:
        payload_start.append(start)
        start += len(effect.shape_dtypes)
    positions = [index[e] for e in subset] + [n + index[e] for e in subset]
    for effect in subset:
        first = payload_start[index[effect]]
        positions += range(first, first + len(effect.shape_dtypes))
    return positions


# ---------------------------------------------------------------------------------------------
# Checkified jaxprs.

class CheckedJaxpr(NamedTuple):
    """A jaxpr checkified: it takes an error's leaves among its inputs (at the index it was
    made for) and returns the leaves of an error with `out_effects` before its outputs;
    `metadata` describes the errors it can raise (code -> exception treedef)."""

    jaxpr: ClosedJaxpr
    out_effects: tuple[ErrorEffect, ...]
    metadata: Metadata

    @property
    def num_out_leaves(self) -> int:
        return len(effect_avals(self.out_effects))

    def error(self, outs: Sequence[Any], metadata: dict) -> Error:
        """The error the checkified jaxpr returned in `outs`, for an input error with
        `metadata`."""
        return error_from_leaves(self.out_effects, outs[:self.num_out_leaves],
                                 {**metadata, **self.metadata})


def checkify_fun(fun: Callable[..., Sequence[Any]], enabled_errors: frozenset, error: Error,
                 args: Sequence[Any]) -> tuple[Error, list[Any]]:
    """Runs `fun(*args)` (a flat function) under a `CheckifyTrace` starting from `error`."""
    trace = CheckifyTrace(core.current_trace(), enabled_errors, error)
    try:
        with core.set_current_trace(trace):
            outs = list(fun(*args))
    finally:
        trace.invalidate()
    return trace.error, outs


def checkify_jaxpr(closed: ClosedJaxpr, enabled_errors: frozenset, error: Error,
                   args: Sequence[Any]) -> tuple[Error, list[Any]]:
    """Evaluates `closed` on `args` under a `CheckifyTrace` starting from `error`."""
    return checkify_fun(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                        enabled_errors, error, args)


def trace_checked(fun: Callable[..., Sequence[Any]], enabled_errors: frozenset,
                  effects: tuple[ErrorEffect, ...], in_avals: Sequence[ShapedArray],
                  err_index: int, debug: staging.DebugInfo | None = None) -> CheckedJaxpr:
    """Traces `fun` (flat, on `in_avals`) checkified, for an error with `effects` whose
    leaves are inserted among the inputs at `err_index`."""
    err_avals = effect_avals(effects)
    n = len(err_avals)
    # What the traced error says besides its values (its values are tracers of the trace
    # being made: keeping them would leak them past it).
    found: list[tuple[Any, Metadata]] = []

    def checked(*xs: Any) -> list[Any]:
        error = error_from_leaves(effects, xs[err_index:err_index + n], {})
        args = [*xs[:err_index], *xs[err_index + n:]]
        error, outs = checkify_fun(fun, enabled_errors, error, args)
        found.append((sorted_effects(error), Metadata(error._metadata)))
        return [*error_leaves(error, sorted_effects(error)), *outs]

    avals = [*in_avals[:err_index], *err_avals, *in_avals[err_index:]]
    closed = staging.trace_to_jaxpr(checked, avals, debug)
    closed = ClosedJaxpr(pe.name_unused_outputs(closed.jaxpr), closed.consts)
    out_effects, metadata = found[0]
    return CheckedJaxpr(closed, out_effects, metadata)


@pe.transform_cache
def checkify_closed_jaxpr(closed: ClosedJaxpr, enabled_errors: frozenset,
                          effects: tuple[ErrorEffect, ...], err_index: int) -> CheckedJaxpr:
    """`closed` checkified for an error with `effects` inserted at input `err_index`."""
    return trace_checked(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                         enabled_errors, effects, closed.in_avals, err_index,
                         closed.jaxpr.debug_info)


def merged_error(error: Error, enabled_errors: frozenset, jaxprs: Sequence[ClosedJaxpr],
                 err_index: int) -> Error:
    """`error` with placeholders for every effect the checkified `jaxprs` can add, so that
    it has the structure they return (loop carries and branch outputs must agree)."""
    effects = sorted_effects(error)
    added: set[ErrorEffect] = set()
    for jaxpr in jaxprs:
        added.update(checkify_closed_jaxpr(jaxpr, enabled_errors, effects, err_index)
                     .out_effects)
    return error._add_placeholder_effects(added)


def without_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """`closed` with its consts as leading inputs, and those consts (control-flow
    primitives hold jaxprs without consts)."""
    if not closed.consts:
        return closed, []
    return (pe.close_jaxpr(pe.convert_constvars_jaxpr(closed.jaxpr)), list(closed.consts))


# ---------------------------------------------------------------------------------------------
# `check` itself: the error it would raise joins the threaded one.

def _check_discharge_rule(error: Error, enabled_errors: frozenset, *args: Any, err_tree: Any,
                          debug: bool) -> tuple[Error, list[Any]]:
    """The checked error's effects that are enabled join `error`; as in JAX, the others are
    dropped (not re-raised)."""
    new_error = tree_util.tree_unflatten(err_tree, list(args))
    for effect in new_error._pred:
        if effect.error_type in enabled_errors:
            error = update_error(error, new_error._pred[effect], new_error._code[effect], {},
                                 new_error._payload[effect], effect)
    error = error._replace(_metadata=Metadata({**new_error._metadata, **error._metadata}))
    return error, []


error_checks[check_p] = _check_discharge_rule


# ---------------------------------------------------------------------------------------------
# The API.

def _as_arrays(error: Error) -> Error:
    """`error` with its NumPy leaves (constants: codes, placeholders) as Arrays, as every
    leaf of a JAX value is."""
    def as_array(x: Any) -> Any:
        if isinstance(x, (np.ndarray, np.generic)):
            return Array(np.asarray(x))
        return x

    return tree_util.tree_map(as_array, error)


def checkify(f: Callable[..., Out], errors: frozenset = user_checks
             ) -> Callable[..., tuple[Error, Out]]:
    """Functionalize `check` calls in `f`, and optionally add run-time error checks.

    The returned function returns an `Error` with the output of `f`: `err.get()` is None if
    no error happened, else the message of the first error; `err.throw()` raises it as a
    `JaxRuntimeError`. By default only user `check`s are enabled; `errors` selects other
    categories: `user_checks`, `nan_checks` (a floating-point primitive generated a NaN),
    `div_checks` (a division by zero), `index_checks` (an out-of-bounds index), and unions of
    them (`float_checks`, `automatic_checks`, `all_checks`).

    Args:
      f: Callable which can contain user checks (see `check`).
      errors: A set of ErrorCategory values which defines the set of enabled checks.
    Returns:
      A function which accepts the same arguments as `f` and returns a pair: an `Error`
      (the first failed check) and the original output of `f`.
    """
    enabled = frozenset(errors)

    def checked_fun(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        out_trees: list[Any] = []

        def closed_f() -> list[Any]:
            # The arguments are closed over, not abstracted: Python scalars stay static.
            leaves, tree = tree_util.tree_flatten(f(*args, **kwargs))
            out_trees.append(tree)
            return leaves

        closed = staging.trace_to_jaxpr(closed_f, [], staging.debug_info("checkify", f))
        error, outs = checkify_jaxpr(closed, enabled, init_error, [])
        return _as_arrays(error), tree_util.tree_unflatten(out_trees[0], outs)

    return checked_fun
