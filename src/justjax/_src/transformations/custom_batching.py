"""Custom batching rules (`jax.custom_batching`): `custom_vmap` and `sequential_vmap`.

A `custom_vmap` function is traced to a jaxpr and bound as the `custom_vmap_call`
primitive, whose params carry the jaxpr (`call`: what runs when nothing is batched, and
what is lowered), the user's rule and the argument/result pytree structures. Its batching
rule runs the user's rule on the arguments with their batch axes moved to the front. Its
jvp is again a `custom_vmap_call`: of the jvp of `call`, with a rule that runs the user's
rule (on the arguments whose primal and tangent are both batched) under `jvp`, vmapped
over the arguments where only one of the pair is batched -- so `vmap(jvp(f))` still uses
the user's rule, as in JAX. There is no reverse mode (as in JAX, linearization fails);
combine with `custom_vjp` outside for that.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from justjax._src.pytrees import tree_util
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from justjax._src.transformations.custom_derivatives import _ArgResolver
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax.control_flow import library as control_flow

__all__ = ["custom_vmap", "sequential_vmap"]


# -- the primitive ------------------------------------------------------------------------------

def _impl(*args: Any, call: ClosedJaxpr, rule: Callable, in_tree: Any, out_tree: Any
          ) -> list[Any]:
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _abstract_eval(*avals: ShapedArray, call: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    return list(call.out_avals)


custom_vmap_p = core.Primitive("custom_vmap_call", multiple_results=True)
custom_vmap_p.def_abstract_eval(_abstract_eval)
custom_vmap_p.def_impl(_impl)
lowering.register_lowering(custom_vmap_p, lowering.lower_fun(_impl, multiple_results=True))


def _rule_name(rule: Callable) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


def _check_rule_trees(rule: Callable, expected: Any, out_tree: Any, batched_tree: Any) -> None:
    """JAX's errors for a rule whose outputs do not match its batching flags or the
    function's outputs."""
    if out_tree != batched_tree:
        raise ValueError(
            "structure of output value and output batching specification returned by custom "
            f"vmap rule ({_rule_name(rule)}) do not match.\nOutput values: {out_tree}\n"
            f"Batching spec: {batched_tree}")
    if out_tree != expected:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({_rule_name(rule)}) does not "
            f"match that of original custom-vmapped function.\nOriginal output: {expected}\n"
            f"Rule output: {out_tree}")


def _call_rule(rule: Callable, out_tree: Any, axis_size: int, in_batched: Any,
               args: Sequence[Any]) -> tuple[list[Any], list[bool], Any]:
    """Runs `rule(axis_size, in_batched, *args)`; its flat outputs, flat output batching
    flags and output batching pytree."""
    out, out_batched = rule(axis_size, list(in_batched), *args)
    flat_out, tree = tree_util.tree_flatten(out)
    flat_batched, batched_tree = tree_util.tree_flatten(out_batched)
    _check_rule_trees(rule, out_tree, tree, batched_tree)
    return flat_out, [bool(b) for b in flat_batched], out_batched


def _batcher(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None], *,
             call: ClosedJaxpr, rule: Callable, in_tree: Any, out_tree: Any
             ) -> tuple[list[Any], list[int | None]]:
    """The user's rule on the arguments, batch axes first; its batched outputs at axis 0."""
    vals = [v if d is None else batching.moveaxis(v, d, 0)
            for v, d in zip(vals, dims, strict=True)]
    args = tree_util.tree_unflatten(in_tree, vals)
    in_batched = tree_util.tree_unflatten(in_tree, [d is not None for d in dims])
    outs, batched, _ = _call_rule(rule, out_tree, axis_data.size, in_batched, args)
    return outs, [0 if b else None for b in batched]


batching.primitive_batchers[custom_vmap_p] = _batcher


class _JvpRule:
    """The batching rule of the jvp of a `custom_vmap_call`: `(axis_size, [primals_batched,
    tangents_batched], primals, tangents)`. The user's rule sees as batched only the
    arguments whose primal and tangent are both batched; the others are vmapped over."""

    def __init__(self, rule: Callable, out_tree: Any) -> None:
        functools.update_wrapper(self, rule, updated=())
        self.rule = rule
        self.out_tree = out_tree

    def __call__(self, axis_size: int, in_batched: list[Any], primals: Any, tangents: Any
                 ) -> tuple[Any, Any]:
        ps_batched, ts_batched = in_batched
        both = tree_util.tree_map(operator.and_, ps_batched, ts_batched)
        extra = [tree_util.tree_map(lambda p, t: p and not t, ps_batched, ts_batched),
                 tree_util.tree_map(lambda p, t: t and not p, ps_batched, ts_batched)]
        flat_args, args_tree = tree_util.tree_flatten((primals, tangents))
        flat_extra = tree_util.tree_leaves(extra)
        num_primals = len(tree_util.tree_leaves(primals))
        stored: list[list[bool]] = []

        def jvp_of_rule(*flat: Any) -> list[Any]:
            prim_flat, tan_flat = flat[:num_primals], flat[num_primals:]
            prim_tree = tree_util.tree_structure(primals)

            def rule_flat(*xs: Any) -> list[Any]:
                outs, batched, _ = _call_rule(self.rule, self.out_tree, axis_size, both,
                                              tree_util.tree_unflatten(prim_tree, xs))
                stored.append(batched)
                return outs

            out_p, out_t = ad.jvp_flat(rule_flat, prim_flat, tan_flat)
            return [*out_p, *out_t]

        outs, out_dims = batching.batch_subtrace(
            jvp_of_rule, batching.AxisData(batching.no_axis_name, axis_size),
            [0 if e else None for e in flat_extra], flat_args)
        del args_tree
        outs = [o if d is None else batching.moveaxis(o, d, 0)
                for o, d in zip(outs, out_dims, strict=True)]
        count = len(outs) // 2
        rule_batched = stored[-1]
        flags = [rb or d is not None for rb, d in zip(rule_batched * 2, out_dims, strict=True)]
        unflat = functools.partial(tree_util.tree_unflatten, self.out_tree)
        return ((unflat(outs[:count]), unflat(outs[count:])),
                (unflat(flags[:count]), unflat(flags[count:])))


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, call: ClosedJaxpr,
         rule: Callable, in_tree: Any, out_tree: Any) -> tuple[list[Any], list[Any]]:
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    jvp_call, _ = pe.jvp_jaxpr(call, [True] * len(primals), True)
    outs = custom_vmap_p.bind(
        *primals, *tangents, call=jvp_call, rule=_JvpRule(rule, out_tree),
        in_tree=tree_util.treedef_tuple((in_tree, in_tree)),
        out_tree=tree_util.treedef_tuple((out_tree, out_tree)))
    count = len(outs) // 2
    return outs[:count], outs[count:]


ad.primitive_jvps[custom_vmap_p] = _jvp


# -- the decorators -----------------------------------------------------------------------------

class _ClosedRule:
    """The user's rule behind the primitive's rule: the call's arguments are (consts, args),
    and closed-over consts are never batched."""

    def __init__(self, rule: Callable) -> None:
        functools.update_wrapper(self, rule, updated=())
        self.rule = rule

    def __call__(self, axis_size: int, in_batched: list[Any], consts: Any, args: Any
                 ) -> tuple[Any, Any]:
        consts_batched, args_batched = in_batched
        if any(tree_util.tree_leaves(consts_batched)):
            raise ValueError("a custom_vmap function closes over a value batched by this "
                             "vmap; pass it as an argument instead")
        return self.rule(axis_size, list(args_batched), *args)

    def __str__(self) -> str:
        return str(self.rule)


class custom_vmap:
    """A function with its own `vmap` rule (`jax.custom_batching.custom_vmap`).

    Unbatched, it runs the wrapped function; under `vmap`, the rule given by `def_vmap`:
    `rule(axis_size, in_batched, *args) -> (out, out_batched)`, where `in_batched` is a list
    with one pytree of bools per argument, and `out_batched` a pytree of bools with the
    structure of `out` (batched outputs carry the batch axis first). Forward-mode
    differentiation keeps the rule; reverse mode is not supported (wrap in `custom_vjp`).
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., tuple[Any, Any]] | None = None
        self._resolver: _ArgResolver | None = None

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]
                 ) -> Callable[..., tuple[Any, Any]]:
        """Sets the vmap rule `rule(axis_size, in_batched, *args) -> (out, out_batched)`.

        Args:
          vmap_rule: the rule.
        Returns:
          `vmap_rule`, unchanged.
        """
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = staging.fun_name(self.fun)
        if self._resolver is None:
            self._resolver = _ArgResolver("custom_vmap", self.fun, name)
        args = self._resolver(args, kwargs)
        if not self.vmap_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        flat_args, args_tree = tree_util.tree_flatten(args)
        out_trees: list[Any] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            out_leaves, tree = tree_util.tree_flatten(
                self.fun(*tree_util.tree_unflatten(args_tree, leaves)))
            out_trees.append(tree)
            return out_leaves

        closed = staging.trace_to_jaxpr(flat_fun, [core.typeof(x) for x in flat_args],
                                        staging.debug_info("custom_vmap fun", self.fun))
        consts = list(closed.consts)
        call = ClosedJaxpr(pe.convert_constvars_jaxpr(closed.jaxpr), [])
        in_tree = tree_util.treedef_tuple((tree_util.tree_structure(consts), args_tree))
        outs = custom_vmap_p.bind(*consts, *flat_args, call=call,
                                  rule=_ClosedRule(self.vmap_rule), in_tree=in_tree,
                                  out_tree=out_trees[-1])
        return tree_util.tree_unflatten(out_trees[-1], outs)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """A `custom_vmap` whose rule runs `f` once per batch element in a loop (`lax.map`), for
    functions that cannot be batched (`jax.custom_batching.sequential_vmap`).

    Args:
      f: the function of one example.
    Returns:
      The `custom_vmap` function.
    """
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        mapped = tree_util.tree_map(lambda b, x: x if b else None, in_batched, list(args))
        fixed = tree_util.tree_map(lambda b, x: None if b else x, in_batched, list(args))

        def one(mapped_args: Any) -> Any:
            merged = tree_util.tree_map(lambda b, m, c: m if b else c, in_batched,
                                        mapped_args, fixed, is_leaf=lambda x: x is None)
            return f(*merged)

        out = control_flow.map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)

    return f
