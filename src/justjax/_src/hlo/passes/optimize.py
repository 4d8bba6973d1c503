"""The default optimization pipeline, in XLA's CPU order: inline calls; simplify to a fixed
point (constant folding, `case` with a known index, canonicalization and algebraic
simplification, CSE, DCE, loop-invariant code motion); fold transposes into dots; fuse (loop,
input and output fusions, then single ops wrapped as XLA CPU does); clean up; schedule.

`optimize(module)` returns an optimized copy, leaving the lowered module (which
`Lowered.as_text` prints) alone; `analyze(module)` gives the buffer assignment and cost of an
optimized module.

Constant folding evaluates ops with the reference backend's kernels: the pipeline built here
hands it the reference backend's `evaluator`, found through the backend registry (the passes
import no backend).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from justjax._src import backends
from justjax._src.hlo import ir
from justjax._src.hlo.passes import buffers, cost, util
from justjax._src.hlo.passes.constant_folding import ConstantFolding, Evaluator, OpEvaluator
from justjax._src.hlo.passes.cse import CommonSubexpressionElimination
from justjax._src.hlo.passes.dce import DeadCodeElimination
from justjax._src.hlo.passes.fusion import FusionWrapper, InstructionFusion
from justjax._src.hlo.passes.inline import CallInlining
from justjax._src.hlo.passes.layout_assignment import TransposeFolding
from justjax._src.hlo.passes.loops import WhileLoopInvariantCodeMotion
from justjax._src.hlo.passes.pipeline import FixedPoint, Pass, Pipeline
from justjax._src.hlo.passes.schedule import ListScheduler
from justjax._src.hlo.passes.simplify import Simplify
from justjax._src.hlo.passes.simplify_case import CaseSimplification

__all__ = ["Analysis", "analyze", "default_passes", "optimize", "reference_evaluator"]


def reference_evaluator() -> Evaluator:
    """Constant folding's evaluator: the reference backend's kernels (the oracle's numerics,
    so folding gives what running the op would), loaded when a module first has an op to
    fold: most programs have none, and loading the kernels (SciPy's among them) would cost
    their first compile a quarter of a second."""
    def evaluator(module: ir.Module) -> OpEvaluator:
        loaded: list[OpEvaluator] = []

        def evaluate(op: ir.Op, operands: Sequence[np.ndarray]) -> Sequence[Any] | None:
            if not loaded:
                loaded.append(backends.get_backend("reference").evaluator(module))
            return loaded[0](op, operands)

        return evaluate

    return evaluator


def default_passes(evaluator: Evaluator | None = None) -> list[Pass]:
    """A fresh list of the default pipeline's passes, in order; constant folding evaluates
    with `evaluator` (default: `reference_evaluator()`)."""
    simplification = FixedPoint(
        [ConstantFolding(evaluator or reference_evaluator()), CaseSimplification(), Simplify(),
         CommonSubexpressionElimination(), DeadCodeElimination(),
         WhileLoopInvariantCodeMotion()], max_iters=8, name="simplification")
    return [CallInlining(), simplification, TransposeFolding(), DeadCodeElimination(),
            InstructionFusion(), FusionWrapper(), CommonSubexpressionElimination(),
            DeadCodeElimination(), ListScheduler()]


def optimize(module: ir.Module, *, verify: bool | None = None, dump_to: str | None = None,
             disabled: Any = None, on_pass: Any = None,
             evaluator: Evaluator | None = None) -> ir.Module:
    """An optimized copy of `module` (the pipeline's options as `Pipeline`'s; `evaluator`
    as `default_passes`')."""
    optimized = util.clone_module(module)
    Pipeline(default_passes(evaluator), verify=verify, dump_to=dump_to, disabled=disabled,
             on_pass=on_pass).run(optimized)
    return optimized


@dataclass(frozen=True)
class Analysis:
    """What the backends and `Compiled` report about an optimized module."""

    buffers: buffers.BufferAssignment
    memory: dict[str, int]
    cost: dict[str, float]


def analyze(module: ir.Module) -> Analysis:
    """The buffer assignment, memory figures and cost of an (optimized, scheduled) module."""
    assignment = buffers.assign_buffers(module)
    return Analysis(assignment, assignment.memory_stats(), cost.cost_analysis(module))
