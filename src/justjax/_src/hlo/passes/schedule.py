"""Scheduling: each block's ops put in an order that keeps little memory live, as XLA's
list scheduler does.

The scheduler is greedy over the ops whose operands are all computed (the "ready" ops). It
picks the ready op with the highest priority

    bytes freed - bytes defined

where an op frees an operand when it is the operand's last unscheduled reader (values of
the block only: block arguments, and values the block returns, are never freed), and
defines the bytes of its results. Ties go to the op that came first in the old order, so a
block already in a good order is left as it is. Effectful ops (`util.has_side_effect`) keep
their relative order: each depends on the effectful op before it. The terminator stays
last. An op with regions depends on every value its regions read from the block. Function
bodies and the bodies of `while` and `case` are scheduled; fused computations and reducers
are single kernels whose order does not matter and are left alone, as in XLA.

That greedy rule can make things worse (it runs every cheap constant and broadcast
first), so, as XLA's default memory scheduler, the block keeps whichever of its current
order, the list schedule and a depth-first post order (each value computed right before
its reader) has the lowest peak of live bytes; the current order wins ties.

Cost: O((ops + uses) log ops). When a value is down to its last reader, that reader (found
in O(1) as the xor of the indices of the unscheduled readers) gets a new heap entry; stale
entries are skipped when popped.
"""
from __future__ import annotations

import heapq

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.pipeline import Pass

__all__ = ["ListScheduler", "schedule_block"]


def _nbytes(value: Value) -> int:
    return value.type.nbytes if isinstance(value.type, ir.TensorType) else 0


def _read_values(op: Op) -> list[Value]:
    """The distinct values `op` reads, its regions included."""
    seen: set[int] = set()
    found: list[Value] = []
    for inner in util.walk_op(op):
        for v in inner.operands:
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
    return found


class _State:
    """The dependence graph and liveness counters of one block's ops (terminator
    excluded)."""

    def __init__(self, ops: list[Op], live_out: set[int]) -> None:
        self.ops = ops
        producer = {id(v): i for i, op in enumerate(ops) for v in op.results}
        self.reads: list[list[Value]] = []
        self.preds: list[set[int]] = []
        self.remaining: dict[int, int] = {}
        self.readers_xor: dict[int, int] = {}
        self.owned: set[int] = set()   # values this block may free
        previous_effect = None
        for i, op in enumerate(ops):
            reads = [v for v in _read_values(op) if id(v) in producer]
            self.reads.append(reads)
            preds = {producer[id(v)] for v in reads}
            if util.has_side_effect(op):
                if previous_effect is not None:
                    preds.add(previous_effect)
                previous_effect = i
            self.preds.append(preds)
            for v in reads:
                self.remaining[id(v)] = self.remaining.get(id(v), 0) + 1
                self.readers_xor[id(v)] = self.readers_xor.get(id(v), 0) ^ i
        for op in ops:
            for v in op.results:
                if id(v) not in live_out:
                    self.owned.add(id(v))
        self.succs: list[list[int]] = [[] for _ in ops]
        for i, preds in enumerate(self.preds):
            for p in preds:
                self.succs[p].append(i)

    def priority(self, i: int) -> int:
        """Bytes op `i` frees minus bytes it defines, at this point of the schedule."""
        freed = sum(_nbytes(v) for v in self.reads[i]
                    if id(v) in self.owned and self.remaining[id(v)] == 1)
        defined = sum(_nbytes(v) for v in self.ops[i].results)
        return freed - defined


def _list_order(state: _State) -> list[int]:
    """The greedy list schedule: the ready op that frees the most bytes net first."""
    waiting = [len(p) for p in state.preds]
    current: dict[int, int] = {}
    heap: list[tuple[int, int]] = []

    def push(i: int) -> None:
        current[i] = state.priority(i)
        heapq.heappush(heap, (-current[i], i))

    for i, count in enumerate(waiting):
        if count == 0:
            push(i)
    order: list[int] = []
    while heap:
        negative, i = heapq.heappop(heap)
        if i not in current or current[i] != -negative:
            continue   # scheduled already, or a stale priority
        del current[i]
        order.append(i)
        _retire_reads(state, i, current, push)
        for s in state.succs[i]:
            waiting[s] -= 1
            if waiting[s] == 0:
                push(s)
    if len(order) != len(state.ops):
        raise ValueError("scheduling: the block's ops have a dependence cycle")
    return order


def _post_order(state: _State, roots: list[int]) -> list[int]:
    """Depth-first post order from `roots` (the ops the terminator reads), then from every
    op left (dead ops and effects), each op after its predecessors: computes each value
    right before the op that needs it."""
    done = [False] * len(state.ops)
    order: list[int] = []
    for root in roots + list(range(len(state.ops))):
        if done[root]:
            continue
        stack = [(root, iter(sorted(state.preds[root])))]
        done[root] = True
        while stack:
            node, preds = stack[-1]
            nxt = next((p for p in preds if not done[p]), None)
            if nxt is None:
                stack.pop()
                order.append(node)
            else:
                done[nxt] = True
                stack.append((nxt, iter(sorted(state.preds[nxt]))))
    return order


def _peak(state: _State, order: list[int]) -> int:
    """The most bytes of the block's values live at once when its ops run in `order`."""
    position = {i: k for k, i in enumerate(order)}
    last: dict[int, int] = {}
    for i, reads in enumerate(state.reads):
        for v in reads:
            last[id(v)] = max(last.get(id(v), -1), position[i])
    live = peak = 0
    for k, i in enumerate(order):
        results = state.ops[i].results
        live += sum(_nbytes(v) for v in results)
        peak = max(peak, live)
        live -= sum(_nbytes(v) for v in state.reads[i]
                    if id(v) in state.owned and last[id(v)] == k)
        live -= sum(_nbytes(v) for v in results
                    if id(v) in state.owned and id(v) not in last)
    return peak


def schedule_block(block: ir.Block) -> bool:
    """Reorders the ops of `block` (not of nested regions) to keep less memory live: the
    order with the lowest peak among the current one, the greedy list schedule and a
    depth-first post order (as XLA's default memory scheduler picks among its
    schedulers); the current order wins ties.

    Returns:
      Whether the order changed.
    """
    if len(block.ops) < 3:
        return False
    ops = block.ops[:-1]
    live_out = {id(v) for v in _read_values(block.terminator)}
    producer = {id(v): i for i, op in enumerate(ops) for v in op.results}
    roots = [producer[id(v)] for v in block.terminator.operands if id(v) in producer]
    best = list(range(len(ops)))
    best_peak = _peak(_State(ops, live_out), best)
    for make in (_list_order, lambda s: _post_order(s, roots)):
        order = make(_State(ops, live_out))
        peak = _peak(_State(ops, live_out), order)
        if peak < best_peak:
            best, best_peak = order, peak
    if best == sorted(best):
        return False
    block.ops = [ops[i] for i in best] + [block.terminator]
    return True


def _retire_reads(state: _State, i: int, ready: dict[int, int], push) -> None:
    """Counts op `i`'s reads as done; a ready op that becomes a value's last reader gets
    its raised priority."""
    for v in state.reads[i]:
        key = id(v)
        state.remaining[key] -= 1
        state.readers_xor[key] ^= i
        if state.remaining[key] == 1 and key in state.owned:
            last = state.readers_xor[key]
            if last in ready:
                push(last)


# Ops whose regions run in sequence with the block (loops and branches, not calls).
_CONTROL_FLOW = opcodes.names(lambda entry: entry.control_flow in (opcodes.LOOP, opcodes.BRANCH))


def _sequential_blocks(block: ir.Block) -> list[ir.Block]:
    """`block` and the bodies of the control flow in it, recursively: the blocks that run
    op by op. Fused computations and reducers are kernels; their order does not matter."""
    found = [block]
    for op in block.ops:
        if op.opcode in _CONTROL_FLOW:
            for region in op.regions:
                found.extend(_sequential_blocks(region.block))
    return found


class ListScheduler(Pass):
    """Orders the ops of every sequential block (function bodies, while and case bodies)
    to reduce peak live memory; see the module docstring for the rule."""

    name = "list-scheduler"

    def run(self, module: ir.Module) -> bool:
        changed = False
        for fn in module.functions:
            for block in _sequential_blocks(fn.body):
                changed |= schedule_block(block)
        return changed
