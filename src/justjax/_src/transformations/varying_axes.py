"""Which manual mesh axes each value of a `shard_map` body may vary along: what JAX 0.10.2's
`vma` types (`f32[4]{V:x}`) say, inferred over the body's jaxpr. `shard_map`'s `check_vma`
reads it to reject out_specs that call a varying result replicated.

One rule per primitive that changes the set; every other primitive's results vary along the
union of its operands' axes:

| primitive | results vary along |
| --- | --- |
| psum, pmax, pmin | the operand's axes but the reduced ones (every device holds the total) |
| axis_index, pvary (pcast to varying) | its axes |
| all_gather, psum_scatter, ppermute, all_to_all | the operand's axes and theirs |
| jit, remat, custom_jvp/vjp calls (one inner jaxpr) | as the inner jaxpr's results |
| cond | the union over the branches (the predicate aside, as JAX) |
| scan, while | the loop's carries at their fixed point |
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
        if rule is not None:
            outs = rule(eqn, operands)
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


def _names(eqn: JaxprEqn) -> Axes:
    params = eqn.params
    names = params["axes"] if "axes" in params else parallel._as_axes(params["axis_name"])
    return frozenset(n for n in names if not isinstance(n, int))


def _reduced(eqn: JaxprEqn, operands: list[Axes]) -> list[Axes]:
    return [a - _names(eqn) for a in operands]


def _added(eqn: JaxprEqn, operands: list[Axes]) -> list[Axes]:
    return [_union(operands) | _names(eqn)] * len(eqn.outvars)


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
    parallel.psum_p: _reduced,
    parallel.pmax_p: _reduced,
    parallel.pmin_p: _reduced,
    parallel.axis_index_p: _added,
    parallel.pvary_p: _added,
    parallel.all_gather_p: _added,
    parallel.reduce_scatter_p: _added,
    parallel.ppermute_p: _added,
    parallel.all_to_all_p: _added,
    cond_p: _cond,
    scan_p: _scan,
    while_p: _while,
}
