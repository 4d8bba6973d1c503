"""Loop passes: while-loop invariant code motion, as XLA's WhileLoopInvariantCodeMotion.

A value of a `stablehlo.while` body is *invariant* when it is the same in every iteration:
a body argument whose carry the body returns unchanged (it is the loop's initial operand
throughout), a value of an enclosing block, or the result of a pure op reading only
invariant values. Invariant ops move out of the loop, just before the `while`; the body
reads their results from the enclosing block (StableHLO's implicit capture).

What moves (the rule, as XLA's):
- never an effectful op, nor a `while`, `case`, `func.call` or `custom_call` (unbounded or
  unknown work, which a loop that runs zero times would not have done);
- constants, broadcasts, iotas, reshapes, transposes, slices, reverses and converts are not
  worth moving alone (they are cheap, and fuse into their users): they are copied out only
  when an op that does move reads them, and stay in the loop for the body's other users;
- every other pure op moves. No StableHLO op traps (integer division by zero, out-of-range
  indices and the like have defined results), so running a moved op once even when the loop
  runs zero times changes no result; it costs at most one evaluation.

Only the body is scanned (condition regions are small). Nested loops are handled innermost
first, so an op can leave several loops in one run.

Also here: `trip_count`, the number of trips of a counted loop (a `fori_loop` or `scan`:
an integer counter from a constant, compared with a constant, stepped by a constant), and
`repetitions`, how many times each op inside loops runs per run of the program (the code
generators weigh a loop body's work by it).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Block, Op, Value
from justjax._src.hlo.passes.dce import dce_block
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import (clone_ops, effectful_functions, free_values,
                                          is_effectful, sweep)

__all__ = ["UNKNOWN_TRIPS", "WhileLoopInvariantCodeMotion", "repetitions", "trip_count"]

# The trips assumed of a loop whose count is not known ahead (a `while_loop` that runs
# until a value converges).
UNKNOWN_TRIPS = 10

# Ops that must stay in the loop: unbounded or unknown work.
_NEVER_HOISTED = frozenset({"stablehlo.while", "stablehlo.case", "func.call",
                            "stablehlo.custom_call", "stablehlo.return"})
# Ops hoisted only as operands of an op that is hoisted (XLA's "not worth hoisting
# individually"): cheap, size-inflating, or free once fused.
_NOT_WORTH_ALONE = frozenset({
    "stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.broadcast",
    "stablehlo.iota", "stablehlo.reshape", "stablehlo.transpose", "stablehlo.slice",
    "stablehlo.reverse", "stablehlo.convert", "stablehlo.bitcast_convert"})


class WhileLoopInvariantCodeMotion(Pass):
    """Moves the loop-invariant pure ops of `stablehlo.while` bodies out of their loops
    (see the module docstring for which ops move)."""

    name = "licm"

    def run(self, module: ir.Module) -> bool:
        effectful_fns = effectful_functions(module)
        changed = False
        for fn in module.functions:
            changed |= sweep(fn.body, lambda op: _hoist(op, effectful_fns), {})
        return changed


def _hoist(op: Op, effectful_fns: set[str]) -> list[Op] | None:
    """The ops moved out of `op`'s body followed by `op`, or None if nothing moves."""
    if op.opcode != "stablehlo.while":
        return None
    hoister = _Hoister(op, effectful_fns)
    if not hoister.run():
        return None
    # The copied-out cheap ops may have left dead originals behind.
    dce_block(op.regions[1].block, set(), effectful_fns)
    return hoister.hoisted + [op]


class _Hoister:
    """The invariant analysis and motion of one while loop's body."""

    def __init__(self, loop: Op, effectful_fns: set[str]) -> None:
        self.loop = loop
        self.body = loop.regions[1].block
        self.effectful_fns = effectful_fns
        # Invariant body values with their value outside the loop.
        self.outside: dict[Value, Value] = {}
        # Invariant body values defined by ops not worth moving alone: copied out on demand.
        self.lazy: dict[Value, Op] = {}
        self.defined = _defined_in(self.body)
        self.hoisted: list[Op] = []
        returned = self.body.terminator.operands
        for i, arg in enumerate(self.body.args):
            if returned[i] is arg:
                self.outside[arg] = loop.operands[i]

    def invariant(self, v: Value) -> bool:
        return v in self.outside or v in self.lazy or v not in self.defined

    def run(self) -> bool:
        kept: list[Op] = []
        moved = False
        for op in self.body.ops:
            if not self._movable(op):
                kept.append(op)
            elif op.opcode in _NOT_WORTH_ALONE:
                self.lazy.update((r, op) for r in op.results)
                kept.append(op)
            else:
                self._move(op)
                moved = True
        self.body.ops = kept
        return moved

    def _movable(self, op: Op) -> bool:
        if op.opcode in _NEVER_HOISTED or not op.results:
            return False
        if is_effectful(op, self.effectful_fns):
            return False
        return all(self.invariant(v) for v in free_values(op))

    def _move(self, op: Op) -> None:
        """Moves `op` out of the loop; its results keep their identity (the body now reads
        them from outside)."""
        renames = {v: self._materialize(v) for v in free_values(op) if v in self.defined}
        _rename(op, renames)
        self.hoisted.append(op)
        for r in op.results:
            self.outside[r] = r

    def _materialize(self, v: Value) -> Value:
        """The value outside the loop equal to invariant body value `v`, copying the cheap
        op defining it out of the loop if needed."""
        found = self.outside.get(v)
        if found is not None:
            return found
        op = self.lazy[v]
        renames = {u: self._materialize(u) for u in free_values(op) if u in self.defined}
        mapping = dict(renames)
        (copy,) = clone_ops([op], mapping)
        self.hoisted.append(copy)
        for old, new in zip(op.results, copy.results, strict=True):
            self.outside[old] = new
        return self.outside[v]


def _defined_in(block: Block) -> set[Value]:
    """Every value a block defines: its arguments, op results and nested regions' values."""
    defined = set(block.args)
    for op in block.walk():
        defined.update(op.results)
        for region in op.regions:
            defined.update(region.block.args)
    return defined


def _rename(op: Op, renames: dict[Value, Value]) -> None:
    """Renames the operands of `op` and of the ops of its regions."""
    if not renames:
        return
    op.operands = [renames.get(v, v) for v in op.operands]
    for region in op.regions:
        for inner in region.block.walk():
            inner.operands = [renames.get(v, v) for v in inner.operands]


# ---------------------------------------------------------------------------------------------
# Trip counts.

def _through_fusion(value: Value, defining: Mapping[Value, Op]
                    ) -> tuple[str, list[Value], dict] | None:
    """(opcode, operands, attributes) of the op computing `value`, seen through a fusion
    of that op alone (the operands then the fusion's own)."""
    op = defining.get(value)
    if op is None:
        return None
    if op.opcode != "hlo.fusion":
        return op.opcode, list(op.operands), op.attributes
    inner = [o for o in op.regions[0].block.ops if o.opcode != "stablehlo.return"]
    params = list(op.regions[0].block.args)
    if len(inner) != 1 or op.regions[0].block.terminator.operands != inner[0].results:
        return None
    if not all(v in params for v in inner[0].operands):
        return None
    return inner[0].opcode, [op.operands[params.index(v)] for v in inner[0].operands], \
        inner[0].attributes


def _integer_constant(value: Value, defining: Mapping[Value, Op]) -> int | None:
    op = defining.get(value)
    if op is None or op.opcode != "stablehlo.constant":
        return None
    data = np.asarray(op.attributes["value"])
    if data.dtype.kind not in "iu" or data.size != 1:
        return None
    return int(data.reshape(()))


def trip_count(loop: Op, defining: Mapping[Value, Op]) -> int | None:
    """The trips of a counted `stablehlo.while`, or None when they are not known ahead.

    Counted: the condition is `counter < limit` (or <=, >, >=, either way round) for a
    loop-carried integer `counter` that starts at a constant and that the body steps by a
    nonzero constant, and a constant `limit`.

    Args:
      loop: the while op.
      defining: value -> the op defining it, for the loop's operands and its regions.
    """
    cond, body = (region.block for region in loop.regions)
    found = _through_fusion(cond.terminator.operands[0], defining)
    if found is None or found[0] != "stablehlo.compare":
        return None
    _, (lhs, rhs), attributes = found
    direction = str(getattr(attributes["comparison_direction"], "value",
                            attributes["comparison_direction"]))
    if rhs in cond.args and lhs not in cond.args:
        lhs, rhs = rhs, lhs
        direction = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}.get(direction, direction)
    limit = _integer_constant(rhs, defining)
    if lhs not in cond.args or limit is None:
        return None
    index = cond.args.index(lhs)
    start = _integer_constant(loop.operands[index], defining)
    step = _counter_step(body, index, defining)
    if start is None or step is None:
        return None
    return _count(start, limit, step, direction)


def _counter_step(body: Block, index: int, defining: Mapping[Value, Op]) -> int | None:
    """The constant the body adds to carried value `index` (subtraction as a negative add)."""
    found = _through_fusion(body.terminator.operands[index], defining)
    if found is None or found[0] not in ("stablehlo.add", "stablehlo.subtract"):
        return None
    opcode, (lhs, rhs), _ = found
    counter = body.args[index]
    if opcode == "stablehlo.add" and rhs is counter:
        lhs, rhs = rhs, lhs
    step = _integer_constant(rhs, defining)
    if lhs is not counter or not step:
        return None
    return step if opcode == "stablehlo.add" else -step


def _count(start: int, limit: int, step: int, direction: str) -> int | None:
    if direction == "LE":
        limit, direction = limit + 1, "LT"
    elif direction == "GE":
        limit, direction = limit - 1, "GT"
    if direction == "LT" and step > 0:
        return max(0, -(-(limit - start) // step))
    if direction == "GT" and step < 0:
        return max(0, -(-(start - limit) // -step))
    return None


def repetitions(module: ir.Module) -> dict[Op, int]:
    """How many times each op inside a `stablehlo.while` runs per run of its function:
    the product of the trips of the loops around it (`UNKNOWN_TRIPS` for a loop whose count
    is not known ahead; a loop's condition runs once more than its body, not counted).
    Ops outside loops are absent."""
    defining = {r: op for op in module.walk() for r in op.results}
    found: dict[Op, int] = {}

    def visit(block: Block, times: int) -> None:
        for op in block.ops:
            if times > 1:
                found[op] = times
            if op.opcode == "stablehlo.while":
                trips = trip_count(op, defining)
                inner = times * (UNKNOWN_TRIPS if trips is None else max(trips, 1))
                for region in op.regions:
                    visit(region.block, inner)
            else:
                for region in op.regions:
                    visit(region.block, times)

    for fn in module.functions:
        visit(fn.body, 1)
    return found
