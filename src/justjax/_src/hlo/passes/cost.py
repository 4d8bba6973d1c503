"""Cost analysis of a module, as XLA's HloCostAnalysis counts it: the one cost model, of
the optimized module (`compiled.cost_analysis()`) and of the module as lowered
(`lowered.cost_analysis()`). What each opcode costs per element, which bytes it reads and
which ops are control flow are read from the opcode registry (`hlo/opcodes.py`).

The figures:

    flops              one per output element of an elementwise op (compare, select, convert
                       and clamp included); 2·(result elements)·(contracted size) per
                       `dot_general` (batch dimensions are in the result); (input elements -
                       output elements)·(reducer flops) per `reduce`; (output elements)·
                       (window size - 1)·(reducer flops) per `reduce_window`; elements·
                       ceil(log2 n) per `sort`; 8·(operand elements)·Π floor(log2 n) per
                       `fft`; data movement (broadcast, reshape, slice,
                       transpose, pad, concatenate, gather ...) is free
    transcendentals    one per output element of exp, expm1, log, log1p, logistic, sin, cos,
                       tan, tanh, sqrt, rsqrt, cbrt, pow, atan2, erf and CHLO's other special
                       functions (JAX lowers `lax.logistic` to negate, exp, add, divide: 3
                       flops and 1 transcendental)
    bytes accessed     per top-level op of the entry function, the bytes of its operands and
                       results; for an `hlo.fusion`, each operand read once and each result
                       written once (the fused ops themselves move nothing); slices and
                       gathers read only what they produce; `dynamic_update_slice` reads and
                       writes only the update; constants, parameters and returns are free

plus JAX's per-operand keys `bytes accessed{i}{}` (operand i of every counted op, summed) and
`bytes accessedout{}`. As in XLA, a `while` counts its condition and body once (the trip
count is unknown), a `case` the most expensive branch, and properties equal to zero are left
out of the dict.

Known difference: XLA also reports `utilization{i}{}` and lets per-operand keys of the ops
inside a fusion leak into the totals of `bytes accessed{i}{}`; neither is reproduced.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op

__all__ = ["cost_analysis", "op_cost", "Cost"]

class Cost:
    """Accumulated properties: `flops`, `transcendentals`, `bytes accessed` and the
    per-operand byte keys."""

    def __init__(self) -> None:
        self.values: dict[str, float] = defaultdict(float)

    def add(self, key: str, amount: float) -> None:
        self.values[key] += amount

    def merge(self, other: "Cost", scale: float = 1.0) -> None:
        for key, amount in other.values.items():
            self.values[key] += amount * scale

    def max_with(self, other: "Cost") -> None:
        """Each property the larger of this cost's and `other`'s (a `case`'s branches)."""
        for key, amount in other.values.items():
            self.values[key] = max(self.values.get(key, 0.0), amount)

    def as_dict(self) -> dict[str, float]:
        """The nonzero properties: `flops`, `transcendentals`, `bytes accessed` first."""
        order = ["flops", "transcendentals", "bytes accessed"]
        keys = order + sorted(k for k in self.values if k not in order)
        return {k: float(self.values[k]) for k in keys if self.values.get(k)}


def _size(value: ir.Value) -> int:
    return value.type.size if isinstance(value.type, ir.TensorType) else 0


def _nbytes(value: ir.Value) -> int:
    return value.type.nbytes if isinstance(value.type, ir.TensorType) else 0


def _block_flops(block: ir.Block, module: ir.Module | None) -> Cost:
    """The flops and transcendentals of every op of `block` (no bytes): a fused computation
    or a reducer."""
    total = Cost()
    for op in block.ops:
        total.merge(op_cost(op, module, count_bytes=False))
    return total


def _compute(op: Op, module: ir.Module | None) -> tuple[float, float]:
    """(flops, transcendentals) of an op without regions of control flow: its registry
    entry's figures per output element, or its cost rule's."""
    entry = opcodes.lookup(op.opcode)
    if not op.results or entry is None:
        return 0.0, 0.0
    if entry.cost_rule is not None:
        return _RULES[entry.cost_rule](op, module), 0.0
    out = _size(op.results[0])
    return entry.flops * out, entry.transcendentals * out


def _reduce_flops(op: Op, module: ir.Module | None) -> float:
    """(input elements - output elements) applications of the reducer."""
    body = _block_flops(op.regions[0].block, module).values["flops"]
    return float(_size(op.operands[0]) - _size(op.results[0])) * body


def _reduce_window_flops(op: Op, module: ir.Module | None) -> float:
    """(window size - 1) applications of the reducer per output element."""
    body = _block_flops(op.regions[0].block, module).values["flops"]
    window = math.prod(op.attributes.get("window_dimensions", ()))
    return float(_size(op.results[0])) * (window - 1) * body


def _sort_flops(op: Op, module: ir.Module | None) -> float:
    """elements·ceil(log2 n) comparisons along the sorted dimension of length n."""
    dim = int(op.attributes.get("dimension", 0))
    n = op.operands[0].type.shape[dim] if op.operands[0].type.rank else 1
    return float(_size(op.operands[0]) * math.ceil(math.log2(max(n, 1))))


def _dot_flops(op: Op, module: ir.Module | None) -> float:
    """2·(result elements)·(contracted elements): one multiply and one add per product."""
    dims = op.attributes["dot_dimension_numbers"]
    lhs = op.operands[0].type
    contracted = math.prod(lhs.shape[d] for d in dims.lhs_contracting_dimensions)
    return 2.0 * _size(op.results[0]) * contracted


def _fft_flops(op: Op, module: ir.Module | None) -> float:
    """XLA's count: 8 (a complex multiply's four FMAs) per operand element per
    floor(log2(n)) of each transformed length."""
    log_factors = 1
    for n in op.attributes["fft_length"]:
        log_factors *= max(int(n), 1).bit_length() - 1
    return 8.0 * log_factors * _size(op.operands[0])


def _conv_flops(op: Op, module: ir.Module | None) -> float:
    """2·(result elements)·(kernel spatial elements)·(input features per group)."""
    dims = op.attributes["dimension_numbers"]
    kernel = op.operands[1].type
    spatial = math.prod(kernel.shape[d] for d in dims.kernel_spatial_dimensions)
    features = kernel.shape[dims.kernel_input_feature_dimension]
    return 2.0 * _size(op.results[0]) * spatial * features


# The cost rules of the registry (`Opcode.cost_rule`): flops of one op.
_RULES: dict[str, Callable[[Op, "ir.Module | None"], float]] = {
    "dot": _dot_flops, "convolution": _conv_flops, "reduce": _reduce_flops,
    "reduce_window": _reduce_window_flops, "fft": _fft_flops, "sort": _sort_flops}


def _bytes(op: Op, cost: Cost) -> None:
    """Adds the bytes `op` reads and writes, in total and per operand."""
    entry = opcodes.lookup(op.opcode)
    counted = opcodes.READS_ALL if entry is None else entry.bytes_read
    if counted == opcodes.READS_NOTHING:
        return
    reads = [_nbytes(v) for v in op.operands]
    writes = sum(_nbytes(v) for v in op.results)
    if counted == opcodes.READS_OUTPUT:
        reads[0] = writes
    elif counted == opcodes.READS_UPDATE:
        reads[0] = 0
        writes = reads[1]
    for index, amount in enumerate(reads):
        if amount:
            cost.add(f"bytes accessed{index}{{}}", amount)
    cost.add("bytes accessedout{}", writes)
    cost.add("bytes accessed", sum(reads) + writes)


def _control_flow(op: Op, module: ir.Module | None, count_bytes: bool) -> Cost:
    """The cost of a while (condition and body once), a case (its most expensive branch)
    or a call (the callee's body)."""
    cost = Cost()
    kind = opcodes.OPCODES[op.opcode].control_flow
    if kind == opcodes.CALL:
        if module is not None:
            callee = module.function(op.attributes["callee"].name)
            cost.merge(block_cost(callee.body, module, count_bytes))
        return cost
    if kind == opcodes.BRANCH:
        for region in op.regions:
            cost.max_with(block_cost(region.block, module, count_bytes))
        return cost
    for region in op.regions:
        cost.merge(block_cost(region.block, module, count_bytes))
    return cost


def op_cost(op: Op, module: ir.Module | None = None, count_bytes: bool = True) -> Cost:
    """The cost of one op (with its nested computations) as a top-level op.

    Args:
      op: the op; an `hlo.fusion` counts the flops of its fused ops and the bytes of its
        operands and results only.
      module: the module, to find the callee of a `func.call`.
      count_bytes: whether to count memory traffic (False inside a fused computation).
    Returns:
      Its `Cost`.
    """
    entry = opcodes.lookup(op.opcode)
    if entry is not None and entry.control_flow is not None:
        return _control_flow(op, module, count_bytes)
    cost = Cost()
    if op.opcode == "hlo.fusion":
        cost.merge(_block_flops(op.regions[0].block, module))
    else:
        flops, transcendentals = _compute(op, module)
        cost.add("flops", flops)
        cost.add("transcendentals", transcendentals)
    if count_bytes:
        _bytes(op, cost)
    return cost


def block_cost(block: ir.Block, module: ir.Module | None = None,
               count_bytes: bool = True) -> Cost:
    """The summed cost of the top-level ops of `block`."""
    total = Cost()
    for op in block.ops:
        total.merge(op_cost(op, module, count_bytes))
    return total


def cost_analysis(module: ir.Module) -> dict[str, float]:
    """`compiled.cost_analysis()` of an optimized module: the cost of the entry function.

    Args:
      module: the module (after the pipeline: fusions counted per kernel).
    Returns:
      A dict of the nonzero properties: `flops`, `transcendentals`, `bytes accessed`,
      `bytes accessed{i}{}`, `bytes accessedout{}`.
    """
    return block_cost(module.main.body, module).as_dict()
