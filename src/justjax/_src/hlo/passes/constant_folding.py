"""Constant folding ("constant-folding"), as XLA's HloConstantFolding: pure ops whose
operands are all constants are evaluated and become constants (see `FOLD_LIMIT`).

The pass evaluates nothing itself: whoever builds the pipeline hands it an `Evaluator`
(the reference backend's, `optimize.default_passes` wires it), so the passes import no backend.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import constant_value, effectful_functions, is_effectful, sweep

__all__ = ["ConstantFolding", "Evaluator", "OpEvaluator", "FOLD_LIMIT", "FOLD_INPUT_LIMIT"]

# Evaluates one op of a module on NumPy operands: its results (a sequence, one per result),
# or None when it cannot; it may raise, which leaves the op unfolded.
OpEvaluator = Callable[[Op, Sequence[np.ndarray]], Sequence[Any] | None]
# Makes the `OpEvaluator` of a module (whose functions its ops' regions may call).
Evaluator = Callable[[ir.Module], OpEvaluator]

# A folded result has at most this many elements: larger constants cost memory and compile
# time, and the ops that make them (broadcasts, iotas, pads) are cheap in a fused kernel.
FOLD_LIMIT = 1024
# Ops reading more constant elements than this (all operands together) are not evaluated at
# compile time: the evaluator (the reference kernels) is slow, and XLA leaves big
# computations to run time.
FOLD_INPUT_LIMIT = 1 << 16

# Never folded: broadcasts and iotas only make constants bigger (XLA keeps scalar constants
# and fuses the broadcast); control flow, calls and custom calls are not ours to evaluate
# (a while might not terminate; case and calls have passes of their own).
_NO_FOLD = frozenset({
    "stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.broadcast",
    "stablehlo.iota", "stablehlo.while", "stablehlo.case", "func.call",
    "stablehlo.custom_call", "hlo.fusion", "stablehlo.return", "func.return"})


class ConstantFolding(Pass):
    """Evaluates pure ops whose operands are all constants with `evaluator` and replaces
    them by `stablehlo.constant`s, when every result has at most `FOLD_LIMIT` elements and
    the operands at most `FOLD_INPUT_LIMIT` together.

    A `broadcast_in_dim` of a constant counts as a constant operand, but is itself never
    folded, and an op all of whose operands are such broadcasts is folded only to a scalar:
    XLA keeps scalar constants broadcast in fused kernels rather than materialized. Iotas,
    control flow, calls and custom calls are never folded.

    Args:
      evaluator: makes, per module, the function evaluating one of its ops (the reference
        backend's `evaluator`).
    """

    name = "constant-folding"

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator

    def run(self, module: ir.Module) -> bool:
        folder = _Folder(self.evaluator(module), effectful_functions(module))
        for op in module.walk():
            if op.opcode == "stablehlo.constant":
                folder.constants[op.results[0]] = constant_value(op)
        changed = False
        for fn in module.functions:
            changed |= sweep(fn.body, folder.visit, {})
        return changed


class _Folder:
    def __init__(self, evaluate: OpEvaluator, effectful_fns: set[str]) -> None:
        self.evaluate = evaluate
        self.effectful_fns = effectful_fns
        self.constants: dict[Value, np.ndarray] = {}
        # Values of broadcasts of constants: operands of folds, never folded themselves.
        self.broadcasts: dict[Value, np.ndarray] = {}

    def value(self, v: Value) -> np.ndarray | None:
        found = self.constants.get(v)
        return found if found is not None else self.broadcasts.get(v)

    def visit(self, op: Op) -> list[Op] | None:
        if op.opcode in _NO_FOLD or not op.operands or not op.results:
            if op.opcode == "stablehlo.broadcast_in_dim":
                self._note_broadcast(op)
            return None
        if not self._foldable(op):
            return None
        values = self._evaluate(op)
        if values is None:
            return None
        folded = []
        for result, value in zip(op.results, values, strict=True):
            self.constants[result] = value
            folded.append(Op("stablehlo.constant", [], [result], {"value": value}))
        return folded

    def _note_broadcast(self, op: Op) -> None:
        (operand,) = op.operands
        if operand in self.constants and op.result.type.size <= FOLD_LIMIT:
            values = self._evaluate(op)
            if values is not None:
                self.broadcasts[op.result] = values[0]

    def _foldable(self, op: Op) -> bool:
        inputs = [self.value(v) for v in op.operands]
        if any(value is None for value in inputs):
            return False
        if any(not isinstance(t, ir.TensorType) or t.size > FOLD_LIMIT
               for t in op.result_types):
            return False
        if not any(v in self.constants for v in op.operands) and any(
                t.rank for t in op.result_types):
            return False
        if sum(value.size for value in inputs) > FOLD_INPUT_LIMIT:
            return False
        return not is_effectful(op, self.effectful_fns)

    def _evaluate(self, op: Op) -> list[np.ndarray] | None:
        try:
            with np.errstate(all="ignore"):
                outs = self.evaluate(op, [self.value(v) for v in op.operands])
        except Exception:  # noqa: BLE001 - an op the evaluator cannot evaluate stays unfolded
            return None
        if outs is None or len(outs) != len(op.results):
            return None
        values = []
        for value, result in zip(outs, op.results, strict=True):
            array = np.array(value, copy=True)
            if array.dtype != result.type.dtype or array.shape != result.type.shape:
                return None
            values.append(array)
        return values
