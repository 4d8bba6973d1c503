"""Cost analysis of an (optimized) module, as XLA's HloCostAnalysis counts it.

The figures `compiled.cost_analysis()` reports:

    flops              one per output element of an elementwise op (compare, select, convert
                       and clamp included); 2·(result elements)·(contracted size) per
                       `dot_general` (batch dimensions are in the result); (input elements -
                       output elements)·(reducer flops) per `reduce`; (output elements)·
                       (window size - 1)·(reducer flops) per `reduce_window`; elements·
                       ceil(log2 n) per `sort`; 8·(operand elements)·Π floor(log2 n) per
                       `fft`; data movement (broadcast, reshape, slice,
                       transpose, pad, concatenate, gather ...) is free
    transcendentals    one per output element of exp, expm1, log, log1p, sin, cos, tan, tanh,
                       sqrt, rsqrt, cbrt, pow, atan2, erf (`logistic` is expanded by XLA CPU
                       into negate, exp, add, divide: 3 flops and 1 transcendental)
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

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op

__all__ = ["cost_analysis", "op_cost", "Cost"]

_TRANSCENDENTAL = frozenset(f"stablehlo.{k}" for k in (
    "exponential", "exponential_minus_one", "log", "log_plus_one", "sine", "cosine", "tan",
    "tanh", "sqrt", "rsqrt", "cbrt", "power", "atan2")) | {"chlo.erf"}

_ELEMENTWISE = frozenset(f"stablehlo.{k}" for k in (
    "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "negate",
    "abs", "compare", "select", "and", "or", "xor", "not", "sign", "floor", "ceil",
    "round_nearest_even", "round_nearest_afz", "clamp", "convert", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "popcnt", "count_leading_zeros",
    "is_finite", "real", "imag", "complex"))

# Ops that read only as many operand bytes as they produce.
_READS_OUTPUT_SIZE = frozenset({"stablehlo.slice", "stablehlo.dynamic_slice",
                                "stablehlo.gather"})
# Ops whose bytes XLA does not count.
_FREE = frozenset({"stablehlo.constant", "func.return", "stablehlo.return",
                   "stablehlo.get_tuple_element", "stablehlo.tuple",
                   "stablehlo.optimization_barrier", "stablehlo.after_all",
                   "stablehlo.create_token"})
# Ops whose regions are control flow: their nested ops are counted as ops of their own.
_CONTROL_FLOW = frozenset({"stablehlo.while", "stablehlo.case", "func.call"})


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
    """(flops, transcendentals) of an op without regions of control flow."""
    if not op.results:
        return 0.0, 0.0
    out = _size(op.results[0])
    opcode = op.opcode
    if opcode in _ELEMENTWISE:
        return float(out), 0.0
    if opcode in _TRANSCENDENTAL:
        return 0.0, float(out)
    if opcode == "stablehlo.logistic":
        return 3.0 * out, float(out)
    if opcode.startswith("chlo."):
        # XLA expands these into polynomial code; count one transcendental per element.
        return 0.0, float(out)
    if opcode == "stablehlo.dot_general":
        return _dot_flops(op), 0.0
    if opcode == "stablehlo.convolution":
        return _conv_flops(op), 0.0
    if opcode == "stablehlo.reduce":
        body = _block_flops(op.regions[0].block, module).values["flops"]
        return float(_size(op.operands[0]) - out) * body, 0.0
    if opcode == "stablehlo.reduce_window":
        body = _block_flops(op.regions[0].block, module).values["flops"]
        window = math.prod(op.attributes.get("window_dimensions", ()))
        return float(out) * (window - 1) * body, 0.0
    if opcode == "stablehlo.fft":
        return _fft_flops(op), 0.0
    if opcode == "stablehlo.sort":
        dim = int(op.attributes.get("dimension", 0))
        n = op.operands[0].type.shape[dim] if op.operands[0].type.rank else 1
        return float(_size(op.operands[0]) * math.ceil(math.log2(max(n, 1)))), 0.0
    return 0.0, 0.0


def _dot_flops(op: Op) -> float:
    """2·(result elements)·(contracted elements): one multiply and one add per product."""
    dims = op.attributes["dot_dimension_numbers"]
    lhs = op.operands[0].type
    contracted = math.prod(lhs.shape[d] for d in dims.lhs_contracting_dimensions)
    return 2.0 * _size(op.results[0]) * contracted


def _fft_flops(op: Op) -> float:
    """XLA's count: 8 (a complex multiply's four FMAs) per operand element per
    floor(log2(n)) of each transformed length."""
    log_factors = 1
    for n in op.attributes["fft_length"]:
        log_factors *= max(int(n), 1).bit_length() - 1
    return 8.0 * log_factors * _size(op.operands[0])


def _conv_flops(op: Op) -> float:
    """2·(result elements)·(kernel spatial elements)·(input features per group)."""
    dims = op.attributes["dimension_numbers"]
    kernel = op.operands[1].type
    spatial = math.prod(kernel.shape[d] for d in dims.kernel_spatial_dimensions)
    features = kernel.shape[dims.kernel_input_feature_dimension]
    return 2.0 * _size(op.results[0]) * spatial * features


def _bytes(op: Op, cost: Cost) -> None:
    """Adds the bytes `op` reads and writes, in total and per operand."""
    if op.opcode in _FREE:
        return
    reads = [_nbytes(v) for v in op.operands]
    writes = sum(_nbytes(v) for v in op.results)
    if op.opcode in _READS_OUTPUT_SIZE:
        reads[0] = writes
    elif op.opcode == "stablehlo.dynamic_update_slice":
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
    if op.opcode == "func.call":
        if module is not None:
            callee = module.function(op.attributes["callee"].name)
            cost.merge(block_cost(callee.body, module, count_bytes))
        return cost
    if op.opcode == "stablehlo.case":
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
    if op.opcode in _CONTROL_FLOW:
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
