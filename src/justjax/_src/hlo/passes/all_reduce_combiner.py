"""All-reduce combining ("all-reduce-combiner"), as XLA's AllReduceCombiner: independent
`all_reduce`s over the same replica groups with the same reduction become one variadic
`all_reduce`, so the devices meet once instead of once per value (a data-parallel gradient
reduces every parameter's gradient in one collective).

An all-reduce of one operand whose region is `return op(a, b)` (one binary op on scalars)
joins others of the same groups, op and element type. The combined op takes the place just
after the last of its operands is computed; the ops before that place that read a member's
result (transitively) move after it, in their order. A group is left alone when a member's
operand is among them (it depends on another member's result) or when one is a host
callback, which keeps its place.
"""
from __future__ import annotations

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Block, Op, Value
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import (clone_ops, free_values, has_side_effect,
                                          replace_uses_map)

__all__ = ["AllReduceCombiner"]


class AllReduceCombiner(Pass):
    """Combines the independent all-reduces of each function's body (its top level)."""

    name = "all-reduce-combiner"

    def run(self, module: ir.Module) -> bool:
        changed = False
        for fn in module.functions:
            changed |= combine(fn.body)
        return changed


def _key(op: Op) -> tuple | None:
    """What all-reduces must share to combine (None: this one does not combine)."""
    if op.opcode != "stablehlo.all_reduce" or len(op.operands) != 1:
        return None
    body = op.regions[0].block
    if len(body.ops) != 2 or body.terminator.operands != [body.ops[0].result]:
        return None
    reduce_op = body.ops[0]
    if list(reduce_op.operands) != list(body.args):
        return None
    groups = op.attributes["replica_groups"]
    return (reduce_op.opcode, op.operands[0].type.dtype, groups.shape, groups.tobytes())


def combine(block: Block) -> bool:
    """Combines the all-reduces of `block` that may be; returns whether any were."""
    by_key: dict[tuple, list[Op]] = {}
    for op in block.ops:
        key = _key(op)
        if key is not None:
            by_key.setdefault(key, []).append(op)
    changed = False
    for members in by_key.values():
        if len(members) > 1:
            changed |= _combine(block, members)
    return changed


def _combine(block: Block, members: list[Op]) -> bool:
    results = {m.result for m in members}
    if any(m.operands[0] in results for m in members):
        return False
    ops = block.ops
    position = {id(op): i for i, op in enumerate(ops)}
    defined = {v: position[id(op)] for op in ops for v in op.results}
    place = max(defined.get(m.operands[0], -1) for m in members)
    member_ids = {id(m) for m in members}
    first = min(position[id(m)] for m in members)
    # The ops up to `place` that read a member's result (transitively) wait for the
    # combined op: they move after it, in their order.
    tainted = set(results)
    moved: list[Op] = []
    for op in ops[first:place + 1]:
        if id(op) in member_ids:
            continue
        if any(v in tainted for v in free_values(op)):
            if has_side_effect(op) and op.opcode not in _COLLECTIVES:
                return False  # a host callback keeps its place
            moved.append(op)
            tainted.update(op.results)
    moved_ids = {id(op) for op in moved}
    if any(defined.get(m.operands[0], -1) >= 0
           and id(ops[defined[m.operands[0]]]) in moved_ids for m in members):
        return False  # a member's operand depends on another member's result
    # StableHLO's variadic all-reduce: its region of two scalars reduces each operand.
    (region,) = clone_ops([members[0]], {})[0].regions
    combined = Op("stablehlo.all_reduce", [m.operands[0] for m in members],
                  [Value(m.result.type) for m in members],
                  dict(members[0].attributes), [region])
    before = [op for op in ops[:place + 1]
              if id(op) not in member_ids and id(op) not in moved_ids]
    after = [op for op in ops[place + 1:] if id(op) not in member_ids]
    block.ops = before + [combined] + moved + after
    replace_uses_map(block, {m.result: r for m, r in zip(members, combined.results,
                                                           strict=True)})
    return True


_COLLECTIVES = frozenset({"stablehlo.all_reduce", "stablehlo.all_gather",
                          "stablehlo.reduce_scatter", "stablehlo.all_to_all",
                          "stablehlo.collective_permute", "stablehlo.collective_broadcast"})
