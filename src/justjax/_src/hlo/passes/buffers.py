"""Buffer assignment by liveness over the scheduled entry function, and the figures of
`compiled.memory_analysis()`.

Every value of the entry function is a buffer: parameters, op results (scalars and
constants too), and the values computed inside the bodies of control flow (`while`, `case`,
and called functions), which live while their op runs. The values inside a fused
computation or a reducer live in registers and get none. Tokens take no memory.

Live ranges come from the schedule (the order of the entry block): a value lives from the
op defining it to its last reader (parameters from the start; returned values to the end).

Buffers are grouped before allocation:
  - in place: an op whose result may overwrite an operand shares its buffer when that
    operand dies at the op (this op is its last reader, it reads it once), is not returned,
    is not a constant, is not a parameter (except a donated one whose output is this
    result), and has the result's size: `dynamic_update_slice` and `scatter` (operand i with
    result i), a `while` (its carry i starts in its operand i's buffer), elementwise ops,
    and loop fusions whose parameter flows only through
    elementwise ops of its own shape into that root alone, or is the operand a root
    dynamic_update_slice/scatter updates (XLA's rule for sharing an operand's buffer);
  - donation: a parameter marked `tf.aliasing_output = j` shares its allocation with output
    j when the parameter is dead by the time output j is computed (or output j is computed
    in place over it); otherwise the output takes its own buffer and the runtime copies it.

Allocations:
  - each parameter its own (`parameter`), donated ones holding their output too;
  - each output not aliased to a parameter its own (`output`); a returned parameter or
    constant, or a value returned twice, means a copy into the output allocation;
  - each constant its own (`constant`, read-only, not a temporary: as XLA);
  - every other group (a temporary) is placed, in the order the groups start, either in an
    output allocation that is free until after the temporary dies (the smallest that fits:
    XLA lets temporaries use an output's memory before the output is computed), or in one
    `temp` allocation at an offset: the smallest free slot at least its size (a smaller
    buffer may sit in a larger slot), otherwise a new slot at the end. A slot is free once
    the group in it died strictly before the new group starts (a value read by an op and
    the op's result overlap, unless the op works in place).

Memory figures: argument size (all parameters), output size (all outputs, plus XLA's
8-byte pointer per element of the result tuple when there are several), alias size (the
donated parameters that alias an output), temp size (the temp allocation: constants are
not temporaries), generated code size (0 on the reference backend).
"""
from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes import util

__all__ = ["Allocation", "BufferAssignment", "assign_buffers", "in_place_candidates",
           "memory_analysis"]

# From the opcode registry: ops running nested computations, ops whose result may overwrite
# their operand 0, and elementwise ops (each element read before the same one is written).
_CONTROL_FLOW = opcodes.names(lambda entry: entry.control_flow is not None)
_IN_PLACE_UPDATES = opcodes.names(in_place=True)
_ELEMENTWISE = opcodes.names(elementwise=True)
_TUPLE_POINTER_BYTES = 8
_END = 1 << 62


@dataclass
class Allocation:
    """A piece of memory: `kind` is `parameter`, `output`, `constant` or `temp`;
    `parameter` / `output` name the entry parameter and outputs it holds."""

    index: int
    size: int
    kind: str
    parameter: int | None = None
    outputs: list[int] = field(default_factory=list)


@dataclass
class BufferAssignment:
    """Where each value lives.

    Attributes:
      allocations: every allocation.
      slices: value -> (allocation, offset in bytes).
      in_place: (op, operand, result) triples where the result overwrites the operand.
      aliases: (parameter index, output index) pairs sharing an allocation (donation).
      copies: output indices whose value must be copied into the output allocation, in the
        order the copies must run: a copy reading a donated parameter's allocation runs
        before the copy writing it.
      staged: the outputs among `copies` whose value is first copied aside, before any
        copy runs (the copies into donated parameters form a cycle: `(b, a)` returned
        for donated `(a, b)`).
      argument_sizes, output_sizes: the bytes of each parameter and each output.
    """

    allocations: list[Allocation]
    slices: dict[Value, tuple[Allocation, int]]
    in_place: list[tuple[Op, Value, Value]]
    aliases: list[tuple[int, int]]
    copies: list[int]
    argument_sizes: list[int]
    output_sizes: list[int]
    staged: list[int] = field(default_factory=list)

    def allocation_of(self, value: Value) -> Allocation:
        """The allocation holding `value`."""
        return self.slices[value][0]

    def memory_stats(self) -> dict[str, int]:
        """The figures of `memory_analysis()`: `argument_size_in_bytes`,
        `output_size_in_bytes`, `alias_size_in_bytes`, `temp_size_in_bytes`,
        and `generated_code_size_in_bytes`."""
        arguments = sum(self.argument_sizes)
        outputs = sum(self.output_sizes)
        if len(self.output_sizes) > 1:
            outputs += _TUPLE_POINTER_BYTES * len(self.output_sizes)
        alias = sum(self.argument_sizes[p] for p, _ in self.aliases)
        temp = sum(a.size for a in self.allocations if a.kind == "temp")
        return {"argument_size_in_bytes": arguments, "output_size_in_bytes": outputs,
                "alias_size_in_bytes": alias, "temp_size_in_bytes": temp,
                "generated_code_size_in_bytes": 0}


def _nbytes(value: Value) -> int:
    return value.type.nbytes if isinstance(value.type, ir.TensorType) else 0


class _Groups:
    """Union-find over values: buffers that share memory."""

    def __init__(self) -> None:
        self.parent: dict[Value, Value] = {}

    def find(self, v: Value) -> Value:
        root = v
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        while v is not root:
            v, self.parent[v] = self.parent.get(v, v), root
        return root

    def union(self, keep: Value, other: Value) -> None:
        self.parent[self.find(other)] = self.find(keep)


@dataclass
class _Liveness:
    """Definition and last-read positions of the entry function's values."""

    start: dict[Value, int]
    end: dict[Value, int]
    readers: dict[Value, int]          # how many times the last reader reads it
    nested: list[tuple[Value, int]]    # values of control-flow bodies, with the op's slot
    constants: set[Value]


def _nested_values(op: Op, module: ir.Module, seen: set[str]) -> list[Value]:
    """The values computed inside a control-flow op's bodies (called functions included)."""
    blocks: list[ir.Block] = []
    if op.opcode == "func.call":
        name = op.attributes["callee"].name
        if name not in seen:
            blocks.append(module.function(name).body)
            seen = seen | {name}
    else:
        blocks.extend(region.block for region in op.regions)
    found: list[Value] = []
    for block in blocks:
        for inner in block.ops:
            found.extend(v for v in inner.results if _nbytes(v))
            if inner.opcode in _CONTROL_FLOW:
                found.extend(_nested_values(inner, module, seen))
    return found


def _liveness(fn: ir.Function, module: ir.Module) -> _Liveness:
    start: dict[Value, int] = {v: -1 for v in fn.args}
    end: dict[Value, int] = {v: -1 for v in fn.args}
    readers: dict[Value, int] = {}
    nested: list[tuple[Value, int]] = []
    constants: set[Value] = set()
    body = fn.body.ops
    for t, op in enumerate(body):
        reads = [v for inner in util.walk_op(op) for v in inner.operands]
        for v in reads:
            if v in start:
                if end[v] != t:
                    readers[v] = 0
                end[v] = t
                readers[v] += 1
        for v in op.results:
            start[v] = end[v] = t
        if op.opcode == "stablehlo.constant":
            constants.update(op.results)
        if op.opcode in _CONTROL_FLOW:
            nested.extend((v, t) for v in _nested_values(op, module, {fn.name}))
    for v in fn.body.terminator.operands:
        end[v] = _END
    return _Liveness(start, end, readers, nested, constants)


def _fusion_param_in_place(op: Op, index: int, result: int) -> bool:
    """Whether fused result `result` may be written over parameter `index` (XLA's rule):
    every op the parameter's value flows through, up to that root, is elementwise of the
    parameter's shape (each element is read before the same element is written), and no
    other root reads it (another root's loop runs after this one wrote over it); or the
    root is a dynamic_update_slice/scatter updating the parameter itself, which it reads
    nowhere else."""
    block = op.regions[0].block
    param = block.args[index]
    roots = block.terminator.operands
    target = roots[result]
    producer = next((inner for inner in block.ops if target in inner.results), None)
    if (producer is not None and producer.opcode in _IN_PLACE_UPDATES
            and producer.operands[0] is param):
        uses = sum(v is param for inner in block.ops for v in inner.operands)
        return uses == 1
    reached = {param}
    for inner in block.ops[:-1]:
        if not any(v in reached for v in inner.operands):
            continue
        if inner.opcode not in _ELEMENTWISE or any(
                r.type.shape != param.type.shape for r in inner.results):
            return False
        reached.update(inner.results)
    return not any(v in reached for i, v in enumerate(roots) if i != result)


def in_place_candidates(op: Op) -> list[tuple[int, int]]:
    """(operand index, result index) pairs where the result may overwrite the operand
    (when the operand is not read after the op, nor elsewhere by it): in-place updates,
    elementwise ops, loop fusions by XLA's rule (see the module docstring), and a while
    loop's carries (its state lives in its results' buffers)."""
    if op.opcode == "stablehlo.while":
        return [(i, i) for i in range(len(op.results))]
    if op.opcode == "stablehlo.dynamic_update_slice":
        return [(0, 0)]
    if op.opcode == "stablehlo.scatter":
        return [(i, i) for i in range(len(op.results))]
    if op.opcode in _ELEMENTWISE and len(op.results) == 1:
        return [(i, 0) for i, v in enumerate(op.operands) if v.type == op.results[0].type]
    if op.opcode == "hlo.fusion" and op.attributes.get("kind") == "kLoop":
        return [(i, r) for i, v in enumerate(op.operands) for r, res in enumerate(op.results)
                if v.type == res.type and _fusion_param_in_place(op, i, r)]
    return []


@dataclass
class _OutputSlot:
    """An output allocation seen as room for temporaries: free until `needed` (the first
    definition of the values it holds), busy with a temporary until `busy_until`."""

    alloc: Allocation
    needed: int
    busy_until: int = -2


class _Assigner:
    """Builds the `BufferAssignment` of one entry function."""

    def __init__(self, fn: ir.Function, module: ir.Module) -> None:
        self.fn = fn
        self.live = _liveness(fn, module)
        self.groups = _Groups()
        self.outputs = list(fn.body.terminator.operands)
        self.donated = fn.aliased_outputs
        # Output value -> the donated parameter whose allocation it may take.
        self.donor_of: dict[Value, Value] = {}
        for p, j in self.donated.items():
            if j < len(self.outputs) and self.outputs[j] not in self.donor_of:
                self.donor_of[self.outputs[j]] = fn.args[p]
        self.in_place: list[tuple[Op, Value, Value]] = []
        self.output_slots: list[_OutputSlot] = []

    def _may_overwrite(self, op: Op, t: int, operand: Value, result: Value) -> bool:
        live = self.live
        if not isinstance(operand.type, ir.TensorType) or _nbytes(operand) != _nbytes(result):
            return False
        if live.end.get(operand) != t or live.readers.get(operand) != 1:
            return False
        if operand in live.constants:
            return False
        if live.start[operand] < 0:
            return self.donor_of.get(result) is operand
        return True

    def group_in_place(self) -> None:
        taken: set[Value] = set()
        for t, op in enumerate(self.fn.body.ops):
            for i, r in in_place_candidates(op):
                operand, result = op.operands[i], op.results[r]
                if result in taken or operand in taken:
                    continue
                if self._may_overwrite(op, t, operand, result):
                    self.groups.union(operand, result)
                    taken.update((operand, result))
                    self.in_place.append((op, operand, result))

    def group_donations(self) -> list[tuple[int, int]]:
        """Puts each donated parameter with its output when liveness allows."""
        aliases: list[tuple[int, int]] = []
        for p, j in sorted(self.donated.items()):
            if j >= len(self.outputs):
                continue   # not an output of this function: nothing to alias
            param = self.fn.args[p]
            aliases.append((p, j))
            value = self.outputs[j]
            if self.donor_of.get(value) is not param or value is param:
                continue
            same = self.groups.find(value) is self.groups.find(param)
            if same or (value not in self.live.constants
                        and self.live.end[param] < self._group_start(value)):
                self.groups.union(param, value)
        return aliases

    def _group_start(self, value: Value) -> int:
        """The earliest definition among the values sharing `value`'s buffer (in-place
        chains are short: only the members of this one group are visited)."""
        root = self.groups.find(value)
        return min(self.live.start[v] for v in self._members.get(root, [value]))

    def collect_groups(self) -> None:
        self._members: dict[Value, list[Value]] = {}
        for v in self.live.start:
            if isinstance(v.type, ir.TensorType):
                self._members.setdefault(self.groups.find(v), []).append(v)

    def allocate(self) -> BufferAssignment:
        self.collect_groups()
        aliases = self.group_donations()
        self.collect_groups()
        allocations: list[Allocation] = []
        slices: dict[Value, tuple[Allocation, int]] = {}

        def new(size: int, kind: str, members: list[Value], **extra) -> Allocation:
            alloc = Allocation(len(allocations), size, kind, **extra)
            allocations.append(alloc)
            for v in members:
                slices[v] = (alloc, 0)
            return alloc

        kinds: dict[Value, Allocation] = {}
        for p, param in enumerate(self.fn.args):
            root = self.groups.find(param)
            kinds[root] = new(_nbytes(param), "parameter", self._members[root], parameter=p)
        for root, members in self._members.items():
            if root not in kinds and members[0] in self.live.constants:
                kinds[root] = new(_nbytes(members[0]), "constant", members)
        copies = self._assign_outputs(kinds, aliases, new)
        temps = [(root, members) for root, members in self._members.items()
                 if root not in kinds]
        self._pack_temps(temps, new, slices, self.output_slots)
        copies, staged = self._order_copies(copies, allocations, slices)
        return BufferAssignment(allocations, slices, self.in_place, aliases, copies,
                                [_nbytes(v) for v in self.fn.args],
                                [_nbytes(v) for v in self.outputs], staged)

    def _order_copies(self, copies: list[int], allocations: list[Allocation],
                      slices: dict[Value, tuple[Allocation, int]]
                      ) -> tuple[list[int], list[int]]:
        """Orders the output copies so that none overwrites a donated parameter's
        allocation that a later copy reads; a cycle of such copies has one source staged
        (copied aside first). Only a parameter's allocation is both written by a copy and
        read by another: temporaries, constants and outputs are never copy destinations."""
        destination = {j: a for a in allocations for j in a.outputs}
        source = {j: slices.get(self.outputs[j], (None,))[0] for j in copies}
        pending, order, staged = list(copies), [], []
        while pending:
            free = next((j for j in pending if not any(
                source.get(k) is destination[j] for k in pending if k != j)), None)
            if free is not None:
                order.append(free)
                pending.remove(free)
                continue
            # Every pending copy writes what another reads: copy one source aside.
            blocked = next(j for j in pending if any(source[j] is destination[k]
                                                     for k in pending if k != j))
            staged.append(blocked)
            source[blocked] = None
        return order, staged

    def _assign_outputs(self, kinds: dict[Value, Allocation],
                        aliases: list[tuple[int, int]], new) -> list[int]:
        """Gives each output its allocation; returns the outputs needing a copy."""
        aliased = {j: p for p, j in aliases}
        copies: list[int] = []
        returned_at = len(self.fn.body.ops) - 1
        for j, value in enumerate(self.outputs):
            root = self.groups.find(value)
            held = kinds.get(root)
            if j in aliased:
                donor = kinds[self.groups.find(self.fn.args[aliased[j]])]
                donor.outputs.append(j)
                if held is not donor:
                    copies.append(j)   # computed while the donor was still read
            elif held is None:
                members = self._members[root]
                kinds[root] = new(_nbytes(value), "output", members, outputs=[j])
                needed = min(self.live.start[v] for v in members)
                self.output_slots.append(_OutputSlot(kinds[root], needed))
            else:
                # A parameter, a constant or a value returned twice: copied to the output.
                alloc = new(_nbytes(value), "output", [], outputs=[j])
                self.output_slots.append(_OutputSlot(alloc, returned_at))
                copies.append(j)
        return copies

    def _pack_temps(self, temps: list[tuple[Value, list[Value]]], new,
                    slices: dict[Value, tuple[Allocation, int]],
                    outputs: list[_OutputSlot]) -> None:
        """Places the temporary groups in free output allocations or packs them into one
        temp allocation (see the module docstring)."""
        live = self.live
        spans = [(min(live.start[v] for v in members), max(live.end[v] for v in members),
                  _nbytes(root), members) for root, members in temps]
        spans += [(t, t, _nbytes(v), [v]) for v, t in live.nested]
        spans.sort(key=lambda s: (s[0], -s[2]))
        busy: list[tuple[int, int, int, int]] = []   # (end, offset, size, tiebreak)
        free: list[tuple[int, int]] = []             # (size, offset), sorted
        top = 0
        placed: list[tuple[list[Value], int]] = []
        for count, (start, end, size, members) in enumerate(spans):
            if self._into_output(outputs, start, end, size, members, slices):
                continue
            while busy and busy[0][0] < start:
                _, offset, slot, _ = heapq.heappop(busy)
                bisect.insort(free, (slot, offset))
            at = bisect.bisect_left(free, (size, -1))
            if at < len(free):
                slot, offset = free.pop(at)
            else:
                slot, offset = size, top
                top += size
            heapq.heappush(busy, (end, offset, slot, count))
            placed.append((members, offset))
        if not placed:
            return
        temp = new(top, "temp", [])
        for members, offset in placed:
            for v in members:
                slices[v] = (temp, offset)

    @staticmethod
    def _into_output(outputs: list[_OutputSlot], start: int, end: int, size: int,
                     members: list[Value],
                     slices: dict[Value, tuple[Allocation, int]]) -> bool:
        """Puts a temporary living over [start, end] into the smallest output allocation
        big enough and free over that span; the slot is then busy until `end`."""
        best = None
        for slot in outputs:
            fits = slot.alloc.size >= size and slot.busy_until < start and end < slot.needed
            if fits and (best is None or slot.alloc.size < best.alloc.size):
                best = slot
        if best is None:
            return False
        best.busy_until = end
        for v in members:
            slices[v] = (best.alloc, 0)
        return True

def assign_buffers(module: ir.Module, function: str = "main") -> BufferAssignment:
    """Assigns buffers to the values of the (scheduled) entry function.

    Args:
      module: the optimized module.
      function: the entry function's name.
    Returns:
      The `BufferAssignment`: allocations, each value's (allocation, offset), the in-place
      pairs, the donation aliases and the outputs needing a copy.
    """
    assigner = _Assigner(module.function(function), module)
    assigner.group_in_place()
    return assigner.allocate()


def memory_analysis(module: ir.Module) -> dict[str, int]:
    """The figures of `compiled.memory_analysis()` from the buffer assignment of `main`:
    `argument_size_in_bytes`, `output_size_in_bytes`, `alias_size_in_bytes`,
    `temp_size_in_bytes` and `generated_code_size_in_bytes` (0)."""
    return assign_buffers(module).memory_stats()
