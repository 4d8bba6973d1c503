"""Which manual mesh axes each value of a `shard_map` body may vary along: what JAX 0.10.2's
`vma` types (`f32[4]{V:x}`) say, inferred over the body's jaxpr. `shard_map`'s `check_vma`
reads it to reject out_specs that call a varying result replicated.

The primitives that change the set have their rule in `core.vma_rules` (the same rules
that give traced values their types: psum/pmax/pmin drop the reduced axes, pvary and the
gathering collectives add theirs, declared in lax/parallel.py); axis_index varies along its
axis. Every other primitive's results vary along the union of its operands' axes, and
control flow is analysed here:

| primitive | results vary along |
| --- | --- |
| jit, remat, custom_jvp/vjp calls (one inner jaxpr) | as the inner jaxpr's results |
| cond | the union over the branches (the predicate aside, as JAX) |
| scan, while | the loop's carries at their fixed point |

Types inside a body (`f32[3]{V:i}`) are not retyped by loops and branches, so `check_vma`
reads this analysis rather than the traced types.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from justjax._src.core import core
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal
from justjax._src.lax import parallel
from justjax._src.lax.control_flow.conditionals import cond_p
from justjax._src.lax.control_flow.scan import scan_p
from justjax._src.lax.control_flow.while_loop import while_p

__all__ = ["infer"]

Axes = frozenset
Rule = Callable[[JaxprEqn, list[Axes]], list[Axes]]


def infer(jaxpr: Jaxpr, ins: Sequence[Axes]) -> list[Axes]:
    """The axes each output of `jaxpr` may vary along, given its inputs' (`ins`)."""
    env: dict[Any, Axes] = {v: frozenset() for v in jaxpr.constvars}
    env.update(zip(jaxpr.invars, ins, strict=True))

    def read(v: Any) -> Axes:
        return frozenset() if isinstance(v, Literal) else env.get(v, frozenset())

    for eqn in jaxpr.eqns:
        operands = [read(v) for v in eqn.invars]
        rule = _rules.get(eqn.primitive)
        vma_rule = core.vma_rules.get(eqn.primitive)
        if rule is not None:
            outs = rule(eqn, operands)
        elif vma_rule is not None:
            outs = [frozenset(vma_rule(operands, **eqn.params))] * len(eqn.outvars)
        else:
            inner = _single_inner(eqn)
            outs = (infer(inner, operands) if inner is not None
                    else [_union(operands)] * len(eqn.outvars))
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def _union(sets: Sequence[Axes]) -> Axes:
    return frozenset().union(*sets)


def _jaxpr(value: Any) -> Jaxpr | None:
    return value.jaxpr if isinstance(value, ClosedJaxpr) else value if isinstance(
        value, Jaxpr) else None


def _single_inner(eqn: JaxprEqn) -> Jaxpr | None:
    """The one inner jaxpr of a call-like equation taking its operands and giving its results
    (jit, remat, custom_jvp_call ...), or None."""
    inner = [j for j in map(_jaxpr, eqn.params.values()) if j is not None]
    if len(inner) == 1 and len(inner[0].invars) == len(eqn.invars) \
            and len(inner[0].outvars) == len(eqn.outvars):
        return inner[0]
    return None


def _axis_index(eqn: JaxprEqn, operands: list[Axes]) -> list[Axes]:
    return [frozenset(parallel._as_axes(eqn.params["axis_name"]))]


def _cond(eqn: JaxprEqn, operands: list[Axes]) -> list[Axes]:
    outs = [frozenset()] * len(eqn.outvars)
    for branch in eqn.params["branches"]:
        outs = [a | b for a, b in zip(outs, infer(branch.jaxpr, operands[1:]), strict=True)]
    return outs


def _fixed_point(step: Callable[[list[Axes]], list[Axes]], carry: list[Axes]) -> list[Axes]:
    """The carries' axes once a loop iteration adds no more (each iteration can only add)."""
    while True:
        new = [a | b for a, b in zip(carry, step(carry), strict=True)]
        if new == carry:
            return carry
        carry = new


def _scan(eqn: JaxprEqn, operands: list[Axes]) -> list[Axes]:
    body = eqn.params["jaxpr"].jaxpr
    consts = operands[:eqn.params["num_consts"]]
    num_carry = eqn.params["num_carry"]
    carry_in = operands[len(consts):len(consts) + num_carry]
    xs = operands[len(consts) + num_carry:]
    carry = _fixed_point(lambda c: infer(body, [*consts, *c, *xs])[:num_carry], list(carry_in))
    return [*carry, *infer(body, [*consts, *carry, *xs])[num_carry:]]


def _while(eqn: JaxprEqn, operands: list[Axes]) -> list[Axes]:
    body = eqn.params["body_jaxpr"].jaxpr
    cond_consts = eqn.params["cond_nconsts"]
    body_consts = operands[cond_consts:cond_consts + eqn.params["body_nconsts"]]
    carry_in = operands[cond_consts + len(body_consts):]
    return _fixed_point(lambda c: infer(body, [*body_consts, *c]), list(carry_in))


_rules: dict[core.Primitive, Rule] = {
    parallel.axis_index_p: _axis_index,
    cond_p: _cond,
    scan_p: _scan,
    while_p: _while,
}
