"""Common subexpression elimination ("cse"), as XLA's HloCSE: within a block and the regions
nested in it, a pure op equal to an earlier one (opcode, operands, attributes, result types
and regions; constants by value, bit for bit, shared within their own block only) is
replaced by it. Effectful ops (`util.is_effectful`) are never merged. One forward walk.
"""
from __future__ import annotations

import struct
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Block, Op, Value
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import effectful_functions, is_effectful

__all__ = ["CAPTURING", "CommonSubexpressionElimination", "freeze_attributes"]

# Ops whose regions may read values of the enclosing blocks (StableHLO's implicit capture,
# which the HLO printer turns into extra loop state / branch operands). The computations of
# reduce, sort, scatter, fusion... are kept self-contained: CSE never makes them capture.
CAPTURING = frozenset({"stablehlo.while", "stablehlo.case"})


class CommonSubexpressionElimination(Pass):
    """Replaces each pure op equal to an earlier op of its block or of an enclosing block
    (same opcode, operands, attributes, result types and regions; constants by value) by
    that op. Regions of while/case may reuse values of enclosing blocks; other regions
    (reduce, sort, scatter, fusion computations) only values of their own."""

    name = "cse"

    def run(self, module: ir.Module) -> bool:
        effectful_fns = effectful_functions(module)
        changed = False
        for fn in module.functions:
            changed |= _cse_block(fn.body, [], {}, effectful_fns)
        return changed


def _cse_block(block: Block, scopes: list[dict[Any, list[Value]]],
               mapping: dict[Value, Value], effectful_fns: set[str]) -> bool:
    table: dict[Any, list[Value]] = {}
    scopes = scopes + [table]
    changed = False
    kept = []
    for op in block.ops:
        if mapping:
            op.operands = [mapping.get(v, v) for v in op.operands]
        for region in op.regions:
            inner_scopes = scopes if op.opcode in CAPTURING else []
            changed |= _cse_block(region.block, inner_scopes, mapping, effectful_fns)
        key = _cse_key(op, effectful_fns)
        # Constants are shared within a block only: a loop body reading an outer constant
        # would carry it as loop state in XLA's HLO, where recomputing it costs nothing.
        visible = [table] if op.opcode == "stablehlo.constant" else scopes
        earlier = _lookup(visible, key) if key is not None else None
        if earlier is None:
            if key is not None:
                table[key] = op.results
            kept.append(op)
            continue
        for old, new in zip(op.results, earlier, strict=True):
            mapping[old] = new
        changed = True
    block.ops = kept
    return changed


def _lookup(scopes: list[dict[Any, list[Value]]], key: Any) -> list[Value] | None:
    for table in reversed(scopes):
        found = table.get(key)
        if found is not None:
            return found
    return None


def _cse_key(op: Op, effectful_fns: set[str]) -> Any:
    """A hashable key equal for interchangeable ops, or None for ops CSE must leave alone."""
    if not op.results or op.opcode in ("func.return", "stablehlo.return"):
        return None
    if is_effectful(op, effectful_fns):
        return None
    regions = tuple(_region_key(r.block, {}) for r in op.regions)
    return (op.opcode, tuple(op.operands), freeze_attributes(op.attributes),
            tuple(op.result_types), regions)


def _region_key(block: Block, local: dict[Value, int]) -> tuple:
    """The structure of a region: values it defines are numbered in order of definition,
    values of enclosing blocks stand for themselves."""
    def ref(v: Value) -> Any:
        index = local.get(v)
        return v if index is None else ("local", index)

    for arg in block.args:
        local[arg] = len(local)
    items: list[Any] = [tuple(a.type for a in block.args)]
    for op in block.ops:
        operands = tuple(ref(v) for v in op.operands)
        regions = tuple(_region_key(r.block, local) for r in op.regions)
        for result in op.results:
            local[result] = len(local)
        items.append((op.opcode, operands, freeze_attributes(op.attributes),
                      tuple(op.result_types), regions))
    return tuple(items)


def freeze_attributes(attributes: dict[str, Any]) -> tuple:
    """Attributes as a hashable key; equal keys mean identical attributes (floats and
    arrays compared bit for bit, so 0.0 and -0.0 differ)."""
    return tuple(sorted((name, _freeze(value)) for name, value in attributes.items()))


def _freeze(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        return ("array", array.dtype.str, array.shape, array.tobytes())
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, (bool, int, str)) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    if type(value) is dict:
        return ("dict", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if isinstance(value, dict):
        # A dict with more to it (a host callback's config holding the Python function):
        # only the object itself is known equal to itself.
        return ("object", id(value))
    if is_dataclass(value):
        return (type(value).__name__,
                tuple(_freeze(getattr(value, f.name)) for f in fields(value)))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))  # unknown and unhashable: equal only to itself
    return (type(value).__name__, value)
