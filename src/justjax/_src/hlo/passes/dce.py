"""Dead code elimination ("dce"), as XLA's HloDCE: removes pure ops whose results nothing
reads (in every block, nested regions included), `stablehlo.while` carries that nothing
reads and that feed neither another carry, the condition nor an effectful op, unused
`stablehlo.case` results, and private functions that nothing calls. Effectful ops
(`util.is_effectful`) stay, with everything they read. One backward walk per block.
"""
from __future__ import annotations

from typing import Iterable

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Block, Op, Value
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import (walk_op, effectful_functions, is_effectful,
                                          remove_unused_functions)

__all__ = ["DeadCodeElimination", "dce_block"]


class DeadCodeElimination(Pass):
    """Removes what nothing needs: pure ops with unread results (in all blocks), unread while
    carries that feed no other carry, the condition or an effectful op, unread case results,
    and private functions nobody calls. Effectful ops stay, with everything they read."""

    name = "dce"

    def run(self, module: ir.Module) -> bool:
        changed = remove_unused_functions(module)
        effectful_fns = effectful_functions(module)
        for fn in module.functions:
            changed |= dce_block(fn.body, set(), effectful_fns)
        return changed


def dce_block(block: Block, used: set[Value], effectful_fns: set[str]) -> bool:
    """Removes the dead ops of `block` (and of its nested regions), backward; adds every
    value the remaining ops read to `used`. Returns whether anything changed."""
    live: set[Value] = set(block.terminator.operands)
    kept = [block.terminator]
    changed = False
    for op in reversed(block.ops[:-1]):
        effectful = is_effectful(op, effectful_fns)
        if not effectful and not any(r in live for r in op.results):
            changed = True
            continue
        if op.opcode == "stablehlo.while":
            changed |= _prune_while_carries(op, live, effectful_fns)
        elif op.opcode == "stablehlo.case":
            changed |= _prune_case_results(op, live)
        for region in op.regions:
            changed |= dce_block(region.block, live, effectful_fns)
        live.update(op.operands)
        kept.append(op)
    kept.reverse()
    block.ops = kept
    used.update(live)
    return changed


def _values_read(block: Block) -> set[Value]:
    return {v for op in block.walk() for v in op.operands}


def _needed_in_body(body: Block, roots: Iterable[Value], effectful_fns: set[str]) -> set[Value]:
    """The values of `body` that the `roots` or its effectful ops depend on."""
    needed = set(roots)
    for op in reversed(body.ops[:-1]):
        if is_effectful(op, effectful_fns) or any(r in needed for r in op.results):
            for inner in walk_op(op):
                needed.update(inner.operands)
    return needed


def _prune_while_carries(op: Op, live: set[Value], effectful_fns: set[str]) -> bool:
    """Drops the carries of a kept while whose result is unread, that the condition does
    not read, and that no other kept carry or effectful op of the body depends on."""
    cond, body = (r.block for r in op.regions)
    cond_reads = _values_read(cond)
    dropped = {i for i, (result, arg) in enumerate(zip(op.results, cond.args, strict=True))
               if result not in live and arg not in cond_reads}
    returned = body.terminator.operands
    while dropped:
        roots = [v for i, v in enumerate(returned) if i not in dropped]
        needed = _needed_in_body(body, roots, effectful_fns)
        still_needed = {i for i in dropped if body.args[i] in needed}
        if not still_needed:
            break
        dropped -= still_needed
    if not dropped:
        return False
    keep = [i for i in range(len(op.results)) if i not in dropped]
    op.operands = [op.operands[i] for i in keep]
    op.results = [op.results[i] for i in keep]
    cond.args = [cond.args[i] for i in keep]
    body.args = [body.args[i] for i in keep]
    # The body ops reading dropped arguments are all dead now: `dce_block` on the body,
    # which runs next, removes them.
    body.terminator.operands = [returned[i] for i in keep]
    return True


def _prune_case_results(op: Op, live: set[Value]) -> bool:
    """Drops the unread results of a kept case from the op and from every branch."""
    keep = [i for i, r in enumerate(op.results) if r in live]
    if len(keep) == len(op.results):
        return False
    op.results = [op.results[i] for i in keep]
    for region in op.regions:
        ret = region.block.terminator
        ret.operands = [ret.operands[i] for i in keep]
    return True
