"""Case simplification ("simplify-case"), as XLA's ConditionalSimplifier: a `stablehlo.case`
with a constant index (or a single branch) is replaced by the ops of the chosen branch.
"""
from __future__ import annotations

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import constant_value, sweep

__all__ = ["CaseSimplification"]


class CaseSimplification(Pass):
    """Replaces a `stablehlo.case` whose index is a constant, or that has one branch, by the
    ops of the branch it runs (an index out of range runs the last branch, as StableHLO
    says), its results by the branch's returned values."""

    name = "simplify-case"

    def run(self, module: ir.Module) -> bool:
        constants = {op.results[0]: op for op in module.walk()
                     if op.opcode == "stablehlo.constant"}
        changed = False
        for fn in module.functions:
            mapping: dict[Value, Value] = {}
            changed |= sweep(fn.body, lambda op: _inline_case(op, constants, mapping), mapping)
        return changed


def _inline_case(op: Op, constants: dict[Value, Op], mapping: dict[Value, Value]
                 ) -> list[Op] | None:
    if op.opcode != "stablehlo.case":
        return None
    count = len(op.regions)
    if count == 1:
        chosen = 0
    elif op.operands[0] in constants:
        index = int(constant_value(constants[op.operands[0]]))
        chosen = index if 0 <= index < count else count - 1
    else:
        return None
    branch = op.regions[chosen].block
    for result, value in zip(op.results, branch.terminator.operands, strict=True):
        mapping[result] = value
    return branch.ops[:-1]
