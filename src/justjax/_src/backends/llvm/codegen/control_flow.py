"""`stablehlo.while` and `stablehlo.case` as native control flow in the entry function.

A while loop's state lives in its results' buffers: the operands are copied in (unless the
buffer assignment put a result in its operand's buffer), the condition and body regions read
them through their block arguments, and after each trip the body's results not computed in
place are copied back. A carry the body returns unchanged (a scan's inputs, a weight
matrix) is read from its operand's buffer throughout, and copied to its result only if
something reads that. A case branches on its (clamped) index to one block per branch,
each writing the case's result buffers. The regions' ops are emitted by the same
`ProgramBuilder` (fusions, kernels, fallbacks, nested control flow).
"""
from __future__ import annotations

from llvmlite import ir

from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes import buffers, util

_I1, _I8, _I32, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = _I8.as_pointer()


def _nbytes(value: Value) -> int:
    return value.type.nbytes if isinstance(value.type, hlo.TensorType) else 0


def emit_while(pb, op: Op) -> None:
    """Emits `stablehlo.while` (cond region, body region) as a native loop."""
    b = pb.b
    cond, body = (region.block for region in op.regions)
    invariant = _invariant_carries(body)
    state = []
    for i, (src, result) in enumerate(zip(op.operands, op.results, strict=True)):
        if i in invariant:
            # Read where it is: the operand's buffer outlives the loop's body values.
            state.append(pb.pointer(src))
            continue
        dst = pb.pointer(result)
        if not _same_buffer(pb, src, result):
            pb.memmove(dst, pb.pointer(src), _nbytes(src))
        state.append(dst)
    header = pb.entry.append_basic_block(pb.fresh("while.cond"))
    loop = pb.entry.append_basic_block(pb.fresh("while.body"))
    done = pb.entry.append_basic_block(pb.fresh("while.done"))
    b.branch(header)
    b.position_at_end(header)
    pb.bound.update(zip(cond.args, state, strict=True))
    pb.emit_block(cond.ops[:-1])
    pred = b.load(pb.pointer(cond.terminator.operands[0]))
    b.cbranch(b.icmp_unsigned("!=", pred, ir.Constant(_I8, 0)), loop, done)
    b.position_at_end(loop)
    pb.bound.update(zip(body.args, state, strict=True))
    for i, value in computed_in_state(body):
        pb.bound[value] = state[i]
    pb.emit_block(body.ops[:-1])
    _write_back(pb, body, state)
    b.branch(header)
    b.position_at_end(done)
    used = _read_values(pb.hlo)
    for i in sorted(invariant):
        src, result = op.operands[i], op.results[i]
        if result in used and not _same_buffer(pb, src, result):
            pb.memmove(pb.pointer(result), state[i], _nbytes(src))


def _same_buffer(pb, a: Value, b: Value) -> bool:
    """Whether values `a` and `b` are known to live in the same buffer."""
    if a in pb.bound or b in pb.bound:
        return pb.bound.get(a) is not None and pb.bound.get(a) is pb.bound.get(b)
    sa, sb = pb.assignment.slices.get(a), pb.assignment.slices.get(b)
    return sa is not None and sa == sb


def _read_values(module: hlo.Module) -> set[Value]:
    return {v for op in module.walk() for v in op.operands}


def _invariant_carries(body: hlo.Block) -> set[int]:
    """The carries the body returns unchanged (a scan's inputs, a loop's constants)."""
    returned = body.terminator.operands
    return {i for i, arg in enumerate(body.args) if returned[i] is arg}


def _write_back(pb, body: hlo.Block, state: list[ir.Value]) -> None:
    """Copies the body's results into the state buffers (those not computed there). A
    result that is another state element (`(a, b) -> (b, a)`) is staged through scratch
    memory first, since the state it reads is overwritten by the other copies."""
    results = body.terminator.operands
    position = {arg: i for i, arg in enumerate(body.args)}
    staged: list[tuple[int, ir.Value, int]] = []
    for i, v in enumerate(results):
        j = position.get(v)
        if j is not None and j != i and _nbytes(v):
            scratch = pb.malloc(_nbytes(v))
            pb.memmove(scratch, state[j], _nbytes(v))
            staged.append((i, scratch, _nbytes(v)))
    for i, v in enumerate(results):
        if v not in position and pb.bound.get(v) is not state[i]:
            pb.memmove(state[i], pb.pointer(v), _nbytes(v))
    for i, scratch, nbytes in staged:
        pb.memmove(state[i], scratch, nbytes)
        pb.free(scratch)


def computed_in_state(body: hlo.Block) -> list[tuple[int, Value]]:
    """The body results that can be computed in their state element's buffer, saving the
    copy back: result `i`, returned once, of an op after which nothing reads the old value
    of state element `i` (the body argument `i`, returned nowhere). The op may itself
    read that argument when its result may overwrite it (an elementwise op, a loop fusion
    by XLA's rule, an update in place such as a scan's `dynamic_update_slice` of its
    stacked outputs, which XLA likewise updates in place), once."""
    ops = body.ops[:-1]
    results = body.terminator.operands
    args = set(body.args)
    last_read: dict[Value, int] = {}
    reads_at: dict[tuple[Value, int], int] = {}
    for t, op in enumerate(ops):
        for inner in util.walk_op(op):
            for v in inner.operands:
                if v in args:
                    last_read[v] = t
                    reads_at[v, t] = reads_at.get((v, t), 0) + 1
    defined_at = {r: t for t, op in enumerate(ops) for r in op.results}
    returned_args = {v for v in results if v in args}
    found = []
    for i, value in enumerate(results):
        t = defined_at.get(value)
        arg = body.args[i]
        if t is None or arg in returned_args or sum(v is value for v in results) != 1:
            continue
        op = ops[t]
        if op.opcode == "stablehlo.constant" or not _nbytes(value):
            continue
        last = last_read.get(arg, -1)
        if last > t:
            continue
        if last == t and not (reads_at[arg, t] == 1 and arg in op.operands and (
                op.operands.index(arg), op.results.index(value))
                in buffers.in_place_candidates(op)):
            continue
        found.append((i, value))
    return found


def emit_case(pb, op: Op) -> None:
    """Emits `stablehlo.case`: an index outside [0, n) takes the last branch (as XLA)."""
    b = pb.b
    n = len(op.regions)
    index = b.load(b.bitcast(pb.pointer(op.operands[0]), _I32.as_pointer()))
    results = [pb.pointer(r) for r in op.results]
    done = pb.entry.append_basic_block(pb.fresh("case.done"))
    blocks = [pb.entry.append_basic_block(pb.fresh(f"case.{k}")) for k in range(n)]
    switch = b.switch(index, blocks[-1])
    for k, block in enumerate(blocks[:-1]):
        switch.add_case(ir.Constant(_I32, k), block)
    for region, block in zip(op.regions, blocks, strict=True):
        b.position_at_end(block)
        branch = region.block
        pb.emit_block(branch.ops[:-1])
        for dst, v in zip(results, branch.terminator.operands, strict=True):
            pb.memmove(dst, pb.pointer(v), _nbytes(v))
        b.branch(done)
    b.position_at_end(done)
