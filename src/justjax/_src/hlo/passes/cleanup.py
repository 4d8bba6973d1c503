"""Cleanup passes of the middle end, as XLA's HloDCE, HloCSE, HloConstantFolding, CallInliner
and ConditionalSimplifier do them on a StableHLO module.

- `DeadCodeElimination` ("dce"): removes pure ops whose results nothing reads (in every
  block, nested regions included), `stablehlo.while` carries that nothing reads and that feed
  neither another carry, the condition nor an effectful op, unused `stablehlo.case` results,
  and private functions that nothing calls.
- `CommonSubexpressionElimination` ("cse"): within a block and the regions nested in it, a
  pure op equal to an earlier one (opcode, operands, attributes, result types and regions;
  constants by value, bit for bit, shared within their own block only) is replaced by it.
- `ConstantFolding` ("constant-folding"): ops whose operands are all constants are evaluated
  with the reference backend's kernels and become constants (see `FOLD_LIMIT`).
- `CallInlining` ("inline"): `func.call`s of private functions are replaced by the callee's
  body; functions no longer called are removed.
- `CaseSimplification` ("simplify-case"): a `stablehlo.case` with a constant index (or a
  single branch) is replaced by the ops of the chosen branch.

Effectful ops (`util.has_side_effect`, and calls of functions containing one) are never
removed, duplicated, merged, folded or reordered. Passes walk each block forward once (and
backward once for DCE): linear in the size of the module.
"""
from __future__ import annotations

import struct
from dataclasses import fields, is_dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Block, Op, Value
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import has_side_effect

__all__ = ["DeadCodeElimination", "CommonSubexpressionElimination", "ConstantFolding",
           "CallInlining", "CaseSimplification", "FOLD_LIMIT", "FOLD_INPUT_LIMIT",
           "clone_ops", "effectful_functions", "is_effectful", "free_values",
           "remove_unused_functions", "sweep"]

# Ops whose regions may read values of the enclosing blocks (StableHLO's implicit capture,
# which the HLO printer turns into extra loop state / branch operands). The computations of
# reduce, sort, scatter, fusion... are kept self-contained: CSE never makes them capture.
CAPTURING = frozenset({"stablehlo.while", "stablehlo.case"})


# ---------------------------------------------------------------------------------------------
# Shared helpers.

def _walk_op(op: Op) -> Iterator[Op]:
    yield op
    for region in op.regions:
        yield from region.block.walk()


def _callees(op: Op) -> Iterator[str]:
    """Names of the functions `op` refers to (`func.call` callees and any symbol attribute)."""
    for value in op.attributes.values():
        yield from _symbols(value)


def _symbols(value: Any) -> Iterator[str]:
    if isinstance(value, ir.Symbol):
        yield value.name
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _symbols(item)


def effectful_functions(module: ir.Module) -> set[str]:
    """Names of the functions that contain an effectful op or call such a function."""
    direct: set[str] = set()
    calls: dict[str, set[str]] = {}
    for fn in module.functions:
        calls[fn.name] = set()
        for op in fn.body.walk():
            if has_side_effect(op):
                direct.add(fn.name)
            calls[fn.name].update(_callees(op))
    found = set(direct)
    grew = True
    while grew:  # at most one round per function: call graphs are small and acyclic
        grew = False
        for name, callees in calls.items():
            if name not in found and callees & found:
                found.add(name)
                grew = True
    return found


def is_effectful(op: Op, effectful_fns: set[str]) -> bool:
    """Whether `op` has a side effect: its own, one of an op in its regions, or one of a
    function it calls."""
    if has_side_effect(op):
        return True
    if not effectful_fns:
        return False
    return any(name in effectful_fns for inner in _walk_op(op) for name in _callees(inner))


def free_values(op: Op) -> list[Value]:
    """The values `op` reads that it does not define: its operands, then the values its
    regions read from enclosing blocks (each once, in order of first use)."""
    defined: set[Value] = set()
    for region in op.regions:
        defined.update(region.block.args)
        for inner in region.block.walk():
            defined.update(inner.results)
            for nested in inner.regions:
                defined.update(nested.block.args)
    seen: set[Value] = set()
    found: list[Value] = []
    for inner in _walk_op(op):
        for v in inner.operands:
            if v not in seen and (inner is op or v not in defined):
                seen.add(v)
                found.append(v)
    return found


def clone_ops(ops: Iterable[Op], mapping: dict[Value, Value]) -> list[Op]:
    """Copies of `ops` (regions included) with fresh result and block-argument values;
    operands are renamed through `mapping`, which receives old -> new for every value the
    copies define."""
    copies = []
    for op in ops:
        operands = [mapping.get(v, v) for v in op.operands]
        regions = [ir.Region(_clone_block(r.block, mapping)) for r in op.regions]
        results = [Value(v.type) for v in op.results]
        for old, new in zip(op.results, results, strict=True):
            mapping[old] = new
        copies.append(Op(op.opcode, operands, results, dict(op.attributes), regions))
    return copies


def _clone_block(block: Block, mapping: dict[Value, Value]) -> Block:
    args = [Value(a.type) for a in block.args]
    for old, new in zip(block.args, args, strict=True):
        mapping[old] = new
    return Block(args, clone_ops(block.ops, mapping))


def sweep(block: Block, visit: Callable[[Op], list[Op] | None],
          mapping: dict[Value, Value]) -> bool:
    """Walks `block` forward, nested regions before the op holding them. Each op's operands
    are first renamed through `mapping`; then `visit(op)` returns None to keep the op or the
    ops replacing it (and may add renamings to `mapping` for later ops). Returns whether any
    op was replaced."""
    changed = False
    new_ops: list[Op] = []
    for op in block.ops:
        if mapping:
            op.operands = [mapping.get(v, v) for v in op.operands]
        for region in op.regions:
            changed |= sweep(region.block, visit, mapping)
        replacement = visit(op)
        if replacement is None:
            new_ops.append(op)
        else:
            new_ops.extend(replacement)
            changed = True
    block.ops = new_ops
    return changed


def remove_unused_functions(module: ir.Module) -> bool:
    """Removes the private functions that no public function reaches through calls (or other
    symbol references). Returns whether any was removed."""
    by_name = {fn.name: fn for fn in module.functions}
    reached = {fn.name for fn in module.functions if fn.visibility != "private"}
    reached.add("main")
    work = [name for name in reached if name in by_name]
    while work:
        fn = by_name[work.pop()]
        for op in fn.body.walk():
            for name in _callees(op):
                if name not in reached and name in by_name:
                    reached.add(name)
                    work.append(name)
    kept = [fn for fn in module.functions if fn.name in reached]
    changed = len(kept) != len(module.functions)
    module.functions = kept
    return changed


def constant_value(op: Op) -> np.ndarray:
    """The full array of a `stablehlo.constant` (a splat value broadcast to the type)."""
    result_type = op.results[0].type
    value = np.asarray(op.attributes["value"])
    if value.shape != result_type.shape or value.dtype != result_type.dtype:
        value = np.broadcast_to(value, result_type.shape).astype(result_type.dtype)
    return value


# ---------------------------------------------------------------------------------------------
# Dead code elimination.

class DeadCodeElimination(Pass):
    """Removes what nothing needs: pure ops with unread results (in all blocks), unread while
    carries that feed no other carry, the condition or an effectful op, unread case results,
    and private functions nobody calls. Effectful ops stay, with everything they read."""

    name = "dce"

    def run(self, module: ir.Module) -> bool:
        changed = remove_unused_functions(module)
        effectful_fns = effectful_functions(module)
        for fn in module.functions:
            changed |= dce_block(fn.body, set(), effectful_fns)
        return changed


def dce_block(block: Block, used: set[Value], effectful_fns: set[str]) -> bool:
    """Removes the dead ops of `block` (and of its nested regions), backward; adds every
    value the remaining ops read to `used`. Returns whether anything changed."""
    live: set[Value] = set(block.terminator.operands)
    kept = [block.terminator]
    changed = False
    for op in reversed(block.ops[:-1]):
        effectful = is_effectful(op, effectful_fns)
        if not effectful and not any(r in live for r in op.results):
            changed = True
            continue
        if op.opcode == "stablehlo.while":
            changed |= _prune_while_carries(op, live, effectful_fns)
        elif op.opcode == "stablehlo.case":
            changed |= _prune_case_results(op, live)
        for region in op.regions:
            changed |= dce_block(region.block, live, effectful_fns)
        live.update(op.operands)
        kept.append(op)
    kept.reverse()
    block.ops = kept
    used.update(live)
    return changed


def _values_read(block: Block) -> set[Value]:
    return {v for op in block.walk() for v in op.operands}


def _needed_in_body(body: Block, roots: Iterable[Value], effectful_fns: set[str]) -> set[Value]:
    """The values of `body` that the `roots` or its effectful ops depend on."""
    needed = set(roots)
    for op in reversed(body.ops[:-1]):
        if is_effectful(op, effectful_fns) or any(r in needed for r in op.results):
            for inner in _walk_op(op):
                needed.update(inner.operands)
    return needed


def _prune_while_carries(op: Op, live: set[Value], effectful_fns: set[str]) -> bool:
    """Drops the carries of a kept while whose result is unread, that the condition does
    not read, and that no other kept carry or effectful op of the body depends on."""
    cond, body = (r.block for r in op.regions)
    cond_reads = _values_read(cond)
    dropped = {i for i, (result, arg) in enumerate(zip(op.results, cond.args, strict=True))
               if result not in live and arg not in cond_reads}
    returned = body.terminator.operands
    while dropped:
        roots = [v for i, v in enumerate(returned) if i not in dropped]
        needed = _needed_in_body(body, roots, effectful_fns)
        still_needed = {i for i in dropped if body.args[i] in needed}
        if not still_needed:
            break
        dropped -= still_needed
    if not dropped:
        return False
    keep = [i for i in range(len(op.results)) if i not in dropped]
    op.operands = [op.operands[i] for i in keep]
    op.results = [op.results[i] for i in keep]
    cond.args = [cond.args[i] for i in keep]
    body.args = [body.args[i] for i in keep]
    # The body ops reading dropped arguments are all dead now: `dce_block` on the body,
    # which runs next, removes them.
    body.terminator.operands = [returned[i] for i in keep]
    return True


def _prune_case_results(op: Op, live: set[Value]) -> bool:
    """Drops the unread results of a kept case from the op and from every branch."""
    keep = [i for i, r in enumerate(op.results) if r in live]
    if len(keep) == len(op.results):
        return False
    op.results = [op.results[i] for i in keep]
    for region in op.regions:
        ret = region.block.terminator
        ret.operands = [ret.operands[i] for i in keep]
    return True


# ---------------------------------------------------------------------------------------------
# Common subexpression elimination.

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


# ---------------------------------------------------------------------------------------------
# Constant folding.

# A folded result has at most this many elements: larger constants cost memory and compile
# time, and the ops that make them (broadcasts, iotas, pads) are cheap in a fused kernel.
FOLD_LIMIT = 1024
# Ops reading more constant elements than this (all operands together) are not evaluated at
# compile time: the reference kernels are slow, and XLA leaves big computations to run time.
FOLD_INPUT_LIMIT = 1 << 16

# Never folded: broadcasts and iotas only make constants bigger (XLA keeps scalar constants
# and fuses the broadcast); control flow, calls and custom calls are not ours to evaluate
# (a while might not terminate; case and calls have passes of their own).
_NO_FOLD = frozenset({
    "stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.broadcast",
    "stablehlo.iota", "stablehlo.while", "stablehlo.case", "func.call",
    "stablehlo.custom_call", "hlo.fusion", "stablehlo.return", "func.return"})


class ConstantFolding(Pass):
    """Evaluates pure ops whose operands are all constants with the reference backend's
    kernels and replaces them by `stablehlo.constant`s, when every result has at most
    `FOLD_LIMIT` elements and the operands at most `FOLD_INPUT_LIMIT` together.

    A `broadcast_in_dim` of a constant counts as a constant operand, but is itself never
    folded, and an op all of whose operands are such broadcasts is folded only to a scalar:
    XLA keeps scalar constants broadcast in fused kernels rather than materialized. Iotas,
    control flow, calls and custom calls are never folded."""

    name = "constant-folding"

    def run(self, module: ir.Module) -> bool:
        from justjax._src.backends.reference import Compiler
        folder = _Folder(Compiler(module), effectful_functions(module))
        for op in module.walk():
            if op.opcode == "stablehlo.constant":
                folder.constants[op.results[0]] = constant_value(op)
        changed = False
        for fn in module.functions:
            changed |= sweep(fn.body, folder.visit, {})
        return changed


class _Folder:
    def __init__(self, compiler: Any, effectful_fns: set[str]) -> None:
        self.compiler = compiler
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
        from justjax._src.backends.reference import kernel_builders
        builder = kernel_builders.get(op.opcode)
        if builder is None:
            return None
        try:
            kernel = builder(op, self.compiler)
            with np.errstate(all="ignore"):
                out = kernel(*[self.value(v) for v in op.operands])
        except Exception:  # noqa: BLE001 - an op the kernels cannot evaluate stays unfolded
            return None
        outs = [out] if len(op.results) == 1 else list(out)
        values = []
        for value, result in zip(outs, op.results, strict=True):
            array = np.array(value, copy=True)
            if array.dtype != result.type.dtype or array.shape != result.type.shape:
                return None
            values.append(array)
        return values


# ---------------------------------------------------------------------------------------------
# Call inlining.

class CallInlining(Pass):
    """Replaces each `func.call` of a private function by a copy of the callee's body (calls
    in the copy inlined too), then removes the functions no longer called."""

    name = "inline"

    def run(self, module: ir.Module) -> bool:
        functions = {fn.name: fn for fn in module.functions}
        changed = False
        for fn in module.functions:
            changed |= _Inliner(functions, fn.name).inline(fn.body)
        changed |= remove_unused_functions(module)
        return changed


# The ops that call a function of the module, and the attribute naming it: a composite is
# inlined as a call of its decomposition, as XLA inlines composites.
_CALLEE_ATTRIBUTE = {"func.call": "callee", "stablehlo.composite": "decomposition"}


class _Inliner:
    def __init__(self, functions: dict[str, ir.Function], root: str) -> None:
        self.functions = functions
        self.stack = [root]  # callees being inlined: a recursive call is left as it is
        self.mapping: dict[Value, Value] = {}

    def inline(self, block: Block) -> bool:
        return sweep(block, self.visit, self.mapping)

    def visit(self, op: Op) -> list[Op] | None:
        attribute = _CALLEE_ATTRIBUTE.get(op.opcode)
        if attribute is None:
            return None
        callee = self.functions.get(op.attributes[attribute].name)
        if callee is None or callee.visibility != "private" or callee.name in self.stack:
            return None
        values = dict(zip(callee.args, op.operands, strict=True))
        copied = clone_ops(callee.body.ops, values)
        self.stack.append(callee.name)
        try:
            body = Block([], copied)
            self.inline(body)
        finally:
            self.stack.pop()
        ret = body.ops[-1]
        for result, value in zip(op.results, ret.operands, strict=True):
            self.mapping[result] = value
        return body.ops[:-1]


# ---------------------------------------------------------------------------------------------
# Case with a known branch.

class CaseSimplification(Pass):
    """Replaces a `stablehlo.case` whose index is a constant, or that has one branch, by the
    ops of the branch it runs (an index out of range runs the last branch, as StableHLO
    says), its results by the branch's returned values."""

    name = "simplify-case"

    def run(self, module: ir.Module) -> bool:
        constants = {op.results[0]: op for op in module.walk()
                     if op.opcode == "stablehlo.constant"}
        changed = False
        for fn in module.functions:
            mapping: dict[Value, Value] = {}
            changed |= sweep(fn.body, lambda op: _inline_case(op, constants, mapping), mapping)
        return changed


def _inline_case(op: Op, constants: dict[Value, Op], mapping: dict[Value, Value]
                 ) -> list[Op] | None:
    if op.opcode != "stablehlo.case":
        return None
    count = len(op.regions)
    if count == 1:
        chosen = 0
    elif op.operands[0] in constants:
        index = int(constant_value(constants[op.operands[0]]))
        chosen = index if 0 <= index < count else count - 1
    else:
        return None
    branch = op.regions[chosen].block
    for result, value in zip(op.results, branch.terminator.operands, strict=True):
        mapping[result] = value
    return branch.ops[:-1]
