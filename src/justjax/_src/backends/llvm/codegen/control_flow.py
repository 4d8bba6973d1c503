"""`stablehlo.while` and `stablehlo.case` as native control flow in the entry function.

A while loop's state lives in its results' buffers: the operands are copied in, the condition
and body regions read them through their block arguments, and after each trip the body's
results are copied back. A case branches on its (clamped) index to one block per branch,
each writing the case's result buffers. The regions' ops are emitted by the same
`ProgramBuilder` (fusions, kernels, fallbacks, nested control flow).
"""
from __future__ import annotations

from llvmlite import ir

from justjax._src.hlo import ir as hlo
from justjax._src.hlo import opcodes
from justjax._src.hlo.ir import Op, Value

_I1, _I8, _I32, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = _I8.as_pointer()


def _nbytes(value: Value) -> int:
    return value.type.nbytes if isinstance(value.type, hlo.TensorType) else 0


def emit_while(pb, op: Op) -> None:
    """Emits `stablehlo.while` (cond region, body region) as a native loop."""
    b = pb.b
    state = [pb.pointer(r) for r in op.results]
    for dst, src in zip(state, op.operands, strict=True):
        pb.memmove(dst, pb.pointer(src), _nbytes(src))
    cond, body = (region.block for region in op.regions)
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
    for i, value in _updated_in_place(body):
        pb.bound[value] = state[i]
    pb.emit_block(body.ops[:-1])
    _write_back(pb, body, state)
    b.branch(header)
    b.position_at_end(done)


def _write_back(pb, body: hlo.Block, state: list[ir.Value]) -> None:
    """Copies the body's results into the state buffers. A result that is another state
    element (`(a, b) -> (b, a)`) is staged through scratch memory first, since the state
    it reads is overwritten by the other copies."""
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


# The ops whose result may overwrite their operand 0 in place (the registry's `in_place`).
_UPDATES = opcodes.names(in_place=True)


def _updated_in_place(body: hlo.Block) -> list[tuple[int, Value]]:
    """The body results computed in their state element's buffer: a loop fusion whose root
    updates (dynamic_update_slice, scatter) the state element `i` it returns at position `i`,
    when nothing else in the body reads that element (as XLA updates a scan's stacked
    outputs in place instead of copying them every trip)."""
    readers: dict[Value, int] = {}
    for op in body.walk():
        for v in op.operands:
            readers[v] = readers.get(v, 0) + 1
    defining = {r: op for op in body.ops for r in op.results}
    found = []
    for i, (arg, value) in enumerate(zip(body.args, body.terminator.operands, strict=True)):
        op = defining.get(value)
        if op is None or op.opcode != "hlo.fusion" or readers.get(arg) != 1:
            continue
        if arg not in op.operands or len(op.results) != 1:
            continue
        inner = op.regions[0].block
        root = inner.terminator.operands[0]
        root_op = next((o for o in inner.ops if root in o.results), None)
        param = inner.args[op.operands.index(arg)]
        if root_op is not None and root_op.opcode in _UPDATES and root_op.operands[0] is param:
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
