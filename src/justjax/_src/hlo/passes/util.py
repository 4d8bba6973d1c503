"""What passes share: walking blocks with their nested regions, finding the users of values,
replacing uses, copying ops, and which ops may be removed, duplicated or moved (no side
effects, neither their own nor of a function they call)."""
from __future__ import annotations

import copy
from typing import Any, Callable, Iterable, Iterator

import numpy as np

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


def walk_op(op: Op) -> Iterator[Op]:
    """`op`, then every op of its regions (nested ones included)."""
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
        for inner in walk_op(op):
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
    return ir.Module(module.name, functions, dict(module.attributes))


def _callees(op: Op) -> Iterator[str]:
    """Names of the functions `op` refers to (`func.call` callees and any symbol attribute)."""
    for value in op.attributes.values():
        yield from _symbols(value)


def _symbols(value: Any) -> Iterator[str]:
    if isinstance(value, ir.Symbol):
        yield value.name
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _symbols(item)


def effectful_functions(module: ir.Module) -> set[str]:
    """Names of the functions that contain an effectful op or call such a function."""
    direct: set[str] = set()
    calls: dict[str, set[str]] = {}
    for fn in module.functions:
        calls[fn.name] = set()
        for op in fn.body.walk():
            if has_side_effect(op):
                direct.add(fn.name)
            calls[fn.name].update(_callees(op))
    found = set(direct)
    grew = True
    while grew:  # at most one round per function: call graphs are small and acyclic
        grew = False
        for name, callees in calls.items():
            if name not in found and callees & found:
                found.add(name)
                grew = True
    return found


def is_effectful(op: Op, effectful_fns: set[str]) -> bool:
    """Whether `op` has a side effect: its own, one of an op in its regions, or one of a
    function it calls."""
    if has_side_effect(op):
        return True
    if not effectful_fns:
        return False
    return any(name in effectful_fns for inner in walk_op(op) for name in _callees(inner))


def free_values(op: Op) -> list[Value]:
    """The values `op` reads that it does not define: its operands, then the values its
    regions read from enclosing blocks (each once, in order of first use)."""
    defined: set[Value] = set()
    for region in op.regions:
        defined.update(region.block.args)
        for inner in region.block.walk():
            defined.update(inner.results)
            for nested in inner.regions:
                defined.update(nested.block.args)
    seen: set[Value] = set()
    found: list[Value] = []
    for inner in walk_op(op):
        for v in inner.operands:
            if v not in seen and (inner is op or v not in defined):
                seen.add(v)
                found.append(v)
    return found


def clone_ops(ops: Iterable[Op], mapping: dict[Value, Value]) -> list[Op]:
    """Copies of `ops` (regions included) with fresh result and block-argument values;
    operands are renamed through `mapping`, which receives old -> new for every value the
    copies define."""
    copies = []
    for op in ops:
        operands = [mapping.get(v, v) for v in op.operands]
        regions = [ir.Region(_clone_block(r.block, mapping)) for r in op.regions]
        results = [Value(v.type) for v in op.results]
        for old, new in zip(op.results, results, strict=True):
            mapping[old] = new
        copies.append(Op(op.opcode, operands, results, dict(op.attributes), regions))
    return copies


def sweep(block: Block, visit: Callable[[Op], list[Op] | None],
          mapping: dict[Value, Value]) -> bool:
    """Walks `block` forward, nested regions before the op holding them. Each op's operands
    are first renamed through `mapping`; then `visit(op)` returns None to keep the op or the
    ops replacing it (and may add renamings to `mapping` for later ops). Returns whether any
    op was replaced."""
    changed = False
    new_ops: list[Op] = []
    for op in block.ops:
        if mapping:
            op.operands = [mapping.get(v, v) for v in op.operands]
        for region in op.regions:
            changed |= sweep(region.block, visit, mapping)
        replacement = visit(op)
        if replacement is None:
            new_ops.append(op)
        else:
            new_ops.extend(replacement)
            changed = True
    block.ops = new_ops
    return changed


def remove_unused_functions(module: ir.Module) -> bool:
    """Removes the private functions that no public function reaches through calls (or other
    symbol references). Returns whether any was removed."""
    by_name = {fn.name: fn for fn in module.functions}
    reached = {fn.name for fn in module.functions if fn.visibility != "private"}
    reached.add("main")
    work = [name for name in reached if name in by_name]
    while work:
        fn = by_name[work.pop()]
        for op in fn.body.walk():
            for name in _callees(op):
                if name not in reached and name in by_name:
                    reached.add(name)
                    work.append(name)
    kept = [fn for fn in module.functions if fn.name in reached]
    changed = len(kept) != len(module.functions)
    module.functions = kept
    return changed


def constant_value(op: Op) -> np.ndarray:
    """The full array of a `stablehlo.constant` (a splat value broadcast to the type)."""
    result_type = op.results[0].type
    value = np.asarray(op.attributes["value"])
    if value.shape != result_type.shape or value.dtype != result_type.dtype:
        value = np.broadcast_to(value, result_type.shape).astype(result_type.dtype)
    return value


def _clone_block(block: Block, mapping: dict[Value, Value]) -> Block:
    args = [Value(a.type) for a in block.args]
    for old, new in zip(block.args, args, strict=True):
        mapping[old] = new
    return Block(args, clone_ops(block.ops, mapping))
