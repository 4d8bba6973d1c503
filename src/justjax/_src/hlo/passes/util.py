"""What passes share: walking blocks with their nested regions, finding the users of values,
replacing uses, and which ops may be removed or moved (no side effects)."""
from __future__ import annotations

import copy
from typing import Iterator

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Block, Op, Value

# Ops whose execution matters beyond their results (the opcode registry's `side_effect`).
_EFFECTFUL = opcodes.names(side_effect=True)


def has_side_effect(op: Op) -> bool:
    """Whether `op` (or an op in its regions) has an effect besides its results: host
    callbacks (`has_side_effect`), collectives, tokens, and barriers."""
    # Every pass asks this of every op: no generators, no lists.
    if op.opcode in _EFFECTFUL or op.attributes.get("has_side_effect"):
        return True
    for v in op.results:
        if type(v.type) is ir.TokenType:
            return True
    for region in op.regions:
        for inner in region.block.ops:
            if has_side_effect(inner):
                return True
    return False


def _walk_op(op: Op) -> Iterator[Op]:
    yield op
    for region in op.regions:
        yield from region.block.walk()


def blocks(module: ir.Module) -> Iterator[Block]:
    """Every block of the module: function bodies and the blocks of nested regions."""
    for fn in module.functions:
        yield fn.body
        for op in fn.body.walk():
            for region in op.regions:
                yield region.block


def users(block: Block) -> dict[Value, list[Op]]:
    """For each value used in `block` (or in regions nested in it), the ops of `block`
    using it (an op counts as a user when a nested region of it reads the value)."""
    found: dict[Value, list[Op]] = {}
    for op in block.ops:
        seen: set[int] = set()
        for inner in _walk_op(op):
            for v in inner.operands:
                if id(v) not in seen:
                    seen.add(id(v))
                    found.setdefault(v, []).append(op)
    return found


def replace_uses(block: Block, old: Value, new: Value) -> None:
    """Makes every op of `block` and of its nested regions read `new` instead of `old`."""
    for op in block.walk():
        op.operands = [new if v is old else v for v in op.operands]


def replace_uses_map(block: Block, mapping: dict[Value, Value]) -> None:
    """Replaces every use in `block` (and nested regions) of each key by its value."""
    if not mapping:
        return
    for op in block.walk():
        op.operands = [mapping.get(v, v) for v in op.operands]


def clone_module(module: ir.Module) -> ir.Module:
    """A copy of `module` with fresh values and ops (attributes, which are immutable, are
    shared), for optimizing without touching the lowered module (which `Lowered.as_text`
    prints)."""
    mapping: dict[Value, Value] = {}
    functions = [ir.Function(fn.name, _clone_block(fn.body, mapping), list(fn.result_types),
                             fn.visibility, copy.copy(fn.arg_attrs), copy.copy(fn.result_attrs))
                 for fn in module.functions]
    return ir.Module(module.name, functions, dict(module.attributes), module.device_assignment)


def _clone_block(block: Block, mapping: dict[Value, Value]) -> Block:
    args = [Value(v.type) for v in block.args]
    mapping.update(zip(block.args, args, strict=True))
    ops = []
    for op in block.ops:
        # Values of enclosing blocks read by a region are mapped already (defined earlier).
        operands = [mapping[v] for v in op.operands]
        regions = [ir.Region(_clone_block(r.block, mapping)) for r in op.regions]
        results = [Value(v.type) for v in op.results]
        mapping.update(zip(op.results, results, strict=True))
        ops.append(Op(op.opcode, operands, results, dict(op.attributes), regions))
    return Block(args, ops)
