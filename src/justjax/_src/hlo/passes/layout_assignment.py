"""Layout assignment: every array is row-major, and transposes feeding a dot are folded
into its dimension numbers (XLA's TransposeFolding).

Layouts are minor-to-major dimension orders, as XLA prints them (`f32[2,3]{1,0}`). On the
CPU every value of the optimized module is row-major, `{rank-1, ..., 0}`: the entry layout,
the layouts of intermediate values and of fusion parameters. So the only rewrite layout
assignment needs is the one that saves copies: a `dot_general` reading
`transpose(x, perm)` reads `x` instead, its batching and contracting dimensions mapped
through `perm`, which a BLAS call absorbs with its transpose flags. The fold is valid only
when the output is unchanged: a dot's result lists the batch dimensions in the order of
its dimension numbers, then the lhs free dimensions in operand order, then the rhs ones,
so the transpose must keep the free dimensions in their relative order (`perm` increasing
on them). The transpose is deleted when nothing else reads it.
"""
from __future__ import annotations

from collections import Counter

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.pipeline import Pass

__all__ = ["TransposeFolding", "row_major", "entry_computation_layout"]


def row_major(type_: ir.Type) -> tuple[int, ...]:
    """The row-major layout of `type_` (minor-to-major): `(rank-1, ..., 1, 0)`; `()` for a
    scalar or a token."""
    if isinstance(type_, ir.TokenType):
        return ()
    return tuple(range(type_.rank - 1, -1, -1))


def entry_computation_layout(fn: ir.Function) -> str:
    """XLA's `entry_computation_layout={(f32[2,3]{1,0}, f32[4]{0})->f32[2,4]{1,0}}` of the
    entry function (several results as a tuple), every layout row-major."""
    from justjax._src.hlo.hlo_printer import shape_text

    params = ", ".join(shape_text(t, row_major(t)) for t in fn.arg_types)
    results = [shape_text(t, row_major(t)) for t in fn.result_types]
    result = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    return f"{{({params})->{result}}}"


def _fold(dims: ir.DotDimensionNumbers, perm: tuple[int, ...], lhs: bool,
          rank: int) -> ir.DotDimensionNumbers | None:
    """The dimension numbers of the dot reading the transpose's operand instead, or None
    when the transpose reorders the free dimensions (the result would be permuted)."""
    batch = dims.lhs_batching_dimensions if lhs else dims.rhs_batching_dimensions
    contract = dims.lhs_contracting_dimensions if lhs else dims.rhs_contracting_dimensions
    used = set(batch) | set(contract)
    free = [perm[d] for d in range(rank) if d not in used]
    if free != sorted(free):
        return None
    new_batch = tuple(perm[d] for d in batch)
    new_contract = tuple(perm[d] for d in contract)
    if lhs:
        return ir.DotDimensionNumbers(new_batch, dims.rhs_batching_dimensions,
                                      new_contract, dims.rhs_contracting_dimensions)
    return ir.DotDimensionNumbers(dims.lhs_batching_dimensions, new_batch,
                                  dims.lhs_contracting_dimensions, new_contract)


class TransposeFolding(Pass):
    """Folds `transpose` operands of `dot_general` into its dimension numbers (XLA's
    TransposeFolding), in every block; removes transposes left unread."""

    name = "transpose-folding"

    def run(self, module: ir.Module) -> bool:
        uses: Counter[Value] = Counter()
        for op in module.walk():
            uses.update(op.operands)
        changed = False
        for block in util.blocks(module):
            changed |= self._run_block(block, uses)
        return changed

    def _run_block(self, block: ir.Block, uses: Counter[Value]) -> bool:
        # Only transposes of this block fold: a region may be a fused computation, which
        # cannot read values of the enclosing block.
        producers = {op.results[0]: op for op in block.ops
                     if op.opcode == "stablehlo.transpose"}
        if not producers:
            return False
        dead: set[int] = set()
        changed = False
        for op in block.ops:
            if op.opcode != "stablehlo.dot_general":
                continue
            for side in (0, 1):
                transpose = producers.get(op.operands[side])
                if transpose is not None and self._fold_operand(op, side, transpose):
                    uses[transpose.results[0]] -= 1
                    uses[transpose.operands[0]] += 1
                    if uses[transpose.results[0]] == 0:
                        dead.add(id(transpose))
                    changed = True
        if dead:
            block.ops = [op for op in block.ops if id(op) not in dead]
        return changed

    @staticmethod
    def _fold_operand(dot: Op, side: int, transpose: Op) -> bool:
        perm = tuple(int(p) for p in transpose.attributes["permutation"])
        dims = dot.attributes["dot_dimension_numbers"]
        new = _fold(dims, perm, side == 0, len(perm))
        if new is None:
            return False
        dot.attributes["dot_dimension_numbers"] = new
        dot.operands[side] = transpose.operands[0]
        return True
