"""Stack slots of generated functions."""
from __future__ import annotations

from llvmlite import ir

__all__ = ["entry_alloca"]


def entry_alloca(b: ir.IRBuilder, ty: ir.Type, count: int = 1) -> ir.Value:
    """A stack slot of `count` `ty`s at the top of the entry block of `b`'s function, which
    may be finished already: allocated once per call, not once per loop trip (LLVM promotes
    scalar ones to registers). `b` stays where it was."""
    current = b.block
    entry = b.function.entry_basic_block
    if entry.instructions:
        b.position_before(entry.instructions[0])
    else:
        b.position_at_end(entry)
    slot = b.alloca(ty, size=None if count == 1 else ir.Constant(ir.IntType(64), count))
    b.position_at_end(current)
    return slot
