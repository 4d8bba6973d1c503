"""Collectives a program calls MPI for itself.

An all-reduce by a monoid MPI has (sum, product, maximum, minimum, bitwise and/or/xor) of
operands of one of MPI's element types (several operands: one message, through a staging
buffer) gets a slot of its own in the program's table,
after the allocations'. At a run where this process's only replica of the run combines with
other processes (`runtime/processes.py`), the runtime puts there the address of a
`processes.NativeAllReduce` and the program calls MPI_Allreduce straight on its buffers:

    ctx = table[allocations + k]
    if ctx:   calls += 1; status = MPI_Allreduce(send, recv, count, type, op, comm); calls += 1
    else:     the reference backend's kernel (a run of one process, or one whose replicas in
              this process meet in the rendezvous first)

so a data-parallel step's all-reduce costs MPI's time and no call back into Python.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from llvmlite import ir

from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op
from justjax._src.numerics import monoids
from justjax._src.runtime import processes

_I32, _I64 = ir.IntType(32), ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()
# MPI's element counts are C ints.
_MAX_COUNT = 2**31 - 1
_FIELD = {name: i for i, name in enumerate(processes.NativeAllReduce.FIELDS)}


@dataclass(frozen=True)
class NativeAllReduceSite:
    """An all-reduce the program can do by MPI: its op, its monoid's opcode and element
    type, and its slot in the program's table."""

    op: Op
    opcode: str
    dtype: np.dtype
    slot: int


def native_all_reduce(op: Op) -> tuple[str, np.dtype] | None:
    """The monoid opcode and element type of an all-reduce MPI can do from native code, or
    None for one it cannot (operands of several types, a region that is not one of MPI's
    operations on each operand, a type MPI has no reduction for, no elements or too many),
    and in a process that runs alone (whose programs then stay as they were)."""
    if op.opcode != "stablehlo.all_reduce" or not op.operands:
        return None
    if not processes.is_initialized() or not processes.native_calls_available():
        return None
    types = op.operand_types
    if any(not isinstance(t, hlo.TensorType) for t in types) or op.result_types != types:
        return None
    if not 0 < sum(t.size for t in types) <= _MAX_COUNT:
        return None
    dtype = np.dtype(types[0].dtype)
    if dtype not in processes.MPI_REDUCIBLE or any(np.dtype(t.dtype) != dtype for t in types):
        return None
    # A variadic all-reduce (the combiner's) reduces each operand by the region's one op.
    opcode = monoids.region_monoid(op.regions[0], dtype)
    return None if opcode is None else (opcode, dtype)


def emit_all_reduce(pb: Any, op: Op, opcode: str, dtype: np.dtype) -> None:
    """Emits `op` into the program being built (`pb`, a `program.ProgramBuilder`) as a call
    of MPI_Allreduce when the run gives its context, else as the fallback to the reference
    backend (`pb.native_collectives` lists it)."""
    slot = len(pb.assignment.allocations) + len(pb.native_collectives)
    pb.native_collectives.append(NativeAllReduceSite(op, opcode, dtype, slot))
    b = pb.b
    entry = b.gep(pb.table, [ir.Constant(_I64, slot * 8)], inbounds=True)
    context = b.load(b.bitcast(entry, _PTR.as_pointer()))
    given = b.icmp_unsigned("!=", context, ir.Constant(_PTR, None))
    with b.if_else(given) as (native, fallback):
        with native:
            _emit_call(pb, op, b.bitcast(context, _I64.as_pointer()))
        with fallback:
            pb.emit_fallback(op)


def _emit_call(pb: Any, op: Op, fields: ir.Value) -> None:
    b = pb.b

    def field(name: str) -> ir.Value:
        return b.gep(fields, [ir.Constant(_I64, _FIELD[name])], inbounds=True)

    signature = ir.FunctionType(_I32, [_PTR, _PTR, _I64, _I64, _I64, _I64])
    function = b.inttoptr(b.load(field("function")), signature.as_pointer())
    in_place = b.inttoptr(b.load(field("in_place")), _PTR)
    staging = None
    if len(op.operands) == 1:
        send, receive = pb.pointer(op.operands[0]), pb.pointer(op.result)
        # MPI forbids the same buffer twice: an all-reduce computed in place says so.
        send = b.select(b.icmp_unsigned("==", send, receive), in_place, send)
    else:
        # Several operands travel as one message (a data-parallel gradient's parameters):
        # side by side in a buffer of their own, reduced in place there.
        staging = pb.malloc(sum(t.nbytes for t in op.operand_types))
        for value, at in zip(op.operands, _offsets(op), strict=True):
            pb.memmove(b.gep(staging, [ir.Constant(_I64, at)]), pb.pointer(value),
                       value.type.nbytes)
        send, receive = in_place, staging
    calls = field("calls")
    # Atomic: the watchdog thread reads the count while MPI waits.
    b.store_atomic(b.add(b.load_atomic(calls, "monotonic", 8), ir.Constant(_I64, 1)),
                   calls, "monotonic", 8)
    count = sum(t.size for t in op.operand_types)
    status = b.call(function, [send, receive, ir.Constant(_I64, count),
                               b.load(field("datatype")), b.load(field("operation")),
                               b.load(field("communicator"))])
    b.store_atomic(b.add(b.load_atomic(calls, "monotonic", 8), ir.Constant(_I64, 1)),
                   calls, "monotonic", 8)
    if staging is not None:
        for value, at in zip(op.results, _offsets(op), strict=True):
            pb.memmove(pb.pointer(value), b.gep(staging, [ir.Constant(_I64, at)]),
                       value.type.nbytes)
        pb.free(staging)
    failed = b.icmp_signed("!=", status, ir.Constant(_I32, 0))
    with b.if_then(failed, likely=False):
        # The runtime raises it (`NativeAllReduce.check`); nothing after runs.
        b.store(b.sext(status, _I64), field("status"))
        b.ret_void()


def _offsets(op: Op) -> list[int]:
    """Where each operand of a variadic all-reduce lies in its staging buffer (bytes)."""
    offsets, at = [], 0
    for type_ in op.operand_types:
        offsets.append(at)
        at += type_.nbytes
    return offsets
