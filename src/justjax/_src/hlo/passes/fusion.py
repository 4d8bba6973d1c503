"""Fusion, as XLA's CPU compiler does it: `InstructionFusion` merges producers into their
consumers (loop fusion), and `FusionWrapper` puts each fusible op left alone into a fusion of
its own, so that every elementwise kernel of the optimized module is an `hlo.fusion` op.

A fusion is `Op("hlo.fusion", operands, results, attributes={"kind", "name",
"computation"}, regions=[Region])`: the region's block arguments are the fused computation's
parameters (one per operand, in order) and its `stablehlo.return` gives the root(s). The
region is isolated: it reads only its own arguments.

The rules are XLA CPU's (`CpuInstructionFusion`), checked against XLA's optimized HLO:
- Only loop-fusible ops fuse (elementwise, broadcast, concatenate, dynamic-slice,
  dynamic-update-slice, gather, iota, pad, reduce, reshape, reverse, slice, transpose); dot,
  convolution, sort, while, case, calls, custom calls, fft, rng and collectives stay
  outside. Non-scalar constants are never fused; a scalar constant is fused only into a
  consumer that is already a fusion (no two-op "constant + op" fusions).
- Consumers are visited from the last op of a block to the first; each consumer takes its
  operands' producers in reverse post order (the producer defined last first). The fusion is
  named `<first producer>_<consumer>_fusion` after HLO opcodes (`broadcast_add_fusion`),
  its computation `fused_computation`, `.1`, ... in creation order.
- An expensive producer (exp, log, tanh, sqrt, pow, float divide, gather, reduce, ... —
  XLA's `IsExpensive` list; sin and cos are cheap for reals) is not fused into a consumer
  that reads its elements more than once (through a broadcast, a permutation, a concatenate
  ...), and a producer with other users is duplicated only when it is cheap, and not when
  duplicating it would read more input bytes than it writes unless it fuses everywhere.
- A fusion holds at most 5 reductions; concatenates of more than 8 operands, or on the
  minor dimension with at least 64 contiguous bytes and 2 KiB in total, are not fused.
- The only non-loop kind is XLA CPU's output fusion (`kOutput`): a non-batched
  matrix-vector dot into the `add` that is its only user. XLA CPU gives reductions fused
  with their producers the kind `kLoop` (not GPU's `kInput`), and runs no sibling
  multi-output fusion: two reductions of the same input stay two kernels (checked with
  XLA 0.10.2), so neither is done here.
- Small matrix-vector dots (operand below 16 KiB) absorb loop-fusible producers.
- A producer is not fused where the fused computation would compute each of its elements
  more than 8 times (XLA's code-duplication limit, `FusionNodeIndexingEvaluation`).
Not modelled: the softmax-specific rule that keeps a max-reduce's input from being
duplicated.

Fusion runs in function bodies and in while/case regions (XLA fuses while bodies too), not
inside the computations of reduce/sort/scatter.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Block, Op, Region, Value
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.pipeline import Pass

__all__ = ["FUSION", "InstructionFusion", "FusionWrapper", "is_fusion"]

FUSION = "hlo.fusion"
KIND_LOOP = "kLoop"
KIND_OUTPUT = "kOutput"
KINDS = ("kLoop", "kInput", "kOutput")

_S = "stablehlo."
# The fusion facts of the opcode registry: what fuses into loop kernels, what XLA's CPU
# pipeline wraps into a fusion of its own when nothing fused with it (`wrapped_exponential`,
# `wrapped_reduce` ...), XLA's `IsExpensive` where the element type does not decide it.
_ELEMENTWISE = opcodes.names(elementwise=True, fusible=True)
_LOOP_FUSIBLE = opcodes.names(fusible=True)
_WRAPPED = opcodes.names(wrapped=True)
_EXPENSIVE = opcodes.names(expense=opcodes.EXPENSIVE)
_CHEAP_FOR_REALS = opcodes.names(expense=opcodes.COMPLEX_ONLY)
_PERMUTING = opcodes.names(permuting=True)

_MAX_REDUCTIONS_IN_FUSION = 5
# XLA's `kAllowedCodeDuplication`: a producer is not fused where it would be emitted more
# often than this per element (deep chains of slices and pads grow exponentially otherwise).
_MAX_CODE_DUPLICATION = 8
_MAX_CONCATENATE_ARGUMENTS = 8
_MATVEC_THRESHOLD_BYTES = 16 * 1024

# How a consumer reads an operand's elements (XLA's `UseKind`), ordered as XLA folds them.
_NO_USE, _USE, _PERMUTE, _REUSE = 0, 1, 2, 3


def is_fusion(op: Op) -> bool:
    """Whether `op` is an `hlo.fusion`."""
    return op.opcode == FUSION


def _effective_scalar(type_: ir.Type) -> bool:
    return isinstance(type_, ir.TensorType) and type_.size == 1


def is_expensive(op: Op, defining: Mapping[Value, Op] | None = None) -> bool:
    """XLA CPU's cost class of an op: whether duplicating it, or reading it more than once
    per output element, costs real work (exp, log, tanh, float divide, reduce, ...).

    Args:
      op: the op.
      defining: the ops defining values of its block, to see an integer division by a
        constant (cheap: it becomes multiplies and shifts).
    Returns:
      Whether XLA's CPU fusion counts `op` as expensive."""
    opcode = op.opcode
    if opcode in _EXPENSIVE:
        return True
    dtype = op.results[0].type.dtype if op.results else None
    if opcode in _CHEAP_FOR_REALS:
        return dtype is not None and dtype.kind == "c"
    if opcode in (_S + "divide", _S + "remainder"):
        # Integer division by a constant becomes multiplies and shifts.
        return dtype is None or dtype.kind not in "iub" or not _is_constant_scalar(
            op.operands[1], defining or {})
    if opcode == _S + "convert":
        source = op.operands[0].type.dtype
        return dtype == np.dtype("bfloat16") and source == np.dtype(np.float32)
    return False


def _is_constant_scalar(value: Value, defining: Mapping[Value, Op]) -> bool:
    """Whether `value` is a scalar constant or a broadcast of one."""
    op = defining.get(value)
    if op is not None and op.opcode == _S + "broadcast_in_dim":
        op = defining.get(op.operands[0])
    return op is not None and op.opcode == _S + "constant" and _effective_scalar(
        op.result.type)


def _keeps_minor_dim(reduce: Op) -> bool:
    """Whether a reduce keeps its operand's minor dimension (a column reduction: each result
    element's inputs are strided, so it is computed over whole rows as a fusion root)."""
    rank = len(reduce.operand_types[0].shape)
    return rank > 0 and rank - 1 not in reduce.attributes["dimensions"]


def _operand_use(op: Op, index: int) -> int:
    """How an unfused op reads an operand's elements. Only a broadcast-like read (one
    element feeding several outputs: broadcast, gather, a pad's or reduce's init value)
    counts as reuse: XLA 0.10.2 fuses exp through transpose, reverse, slice, pad,
    concatenate and reduce, but not through a broadcast."""
    opcode = op.opcode
    if opcode in _PERMUTING:
        return _PERMUTE
    if opcode == _S + "pad":
        return _REUSE if index > 0 else _PERMUTE
    if opcode == _S + "reduce":
        return _REUSE if index >= len(op.operands) // 2 else _PERMUTE
    if opcode == _S + "dynamic_update_slice":
        return _PERMUTE if index < 2 else _REUSE
    if opcode == _S + "dynamic_slice":
        return _PERMUTE if index == 0 else _REUSE
    if opcode == FUSION:
        return _fusion_param_use(op, index)
    return _USE if opcode in _ELEMENTWISE else _REUSE


def _plus(a: int, b: int) -> int:
    """The use of an element read through two uses in a row (or along two paths)."""
    return max(a, b)


def _fusion_param_use(fusion: Op, index: int) -> int:
    """How the fused computation reads parameter `index` (XLA's recursive rule over the
    fused ops)."""
    return _FusedReads(fusion).use[fusion.regions[0].block.args[index]]


class _FusedReads:
    """How a fusion reads each of its parameters, kept up to date as producers are fused
    in (recomputing it over the whole fused computation at each step made fusing a long
    chain quadratic).

    `use[p]`: the strongest kind of read (`_USE` < `_PERMUTE` < `_REUSE`) on any path
    from parameter `p` to a root (XLA's recursive rule).
    `emissions(p)`: how many times the elemental emitter computes an element of `p` per
    element of the roots (XLA's `FusionNodeIndexingEvaluation`). A value read at the
    index its reader was computed at (same shape, or a transpose) shares that reader's
    indexings; a reader that derives a new index (a slice, a pad, a broadcast) is an
    indexing of its own, emitted as often as its own indexings are.
    """

    def __init__(self, fusion: Op) -> None:
        block = fusion.regions[0].block
        root = object()  # the fusion itself: its roots are computed once
        self.count: dict[Any, int] = {root: 1}
        self.indexing: dict[Value, set[Any]] = {}
        self.use: dict[Value, int] = {}
        for value in block.terminator.operands:
            self.indexing.setdefault(value, set()).add(root)
            self.use[value] = _USE
        for op in reversed(block.ops[:-1]):
            self._add(op, [self.indexing.pop(r, set()) for r in op.results],
                      [self.use.pop(r, _NO_USE) for r in op.results])
        for arg in block.args:
            self.use.setdefault(arg, _NO_USE)

    def _add(self, op: Op, result_indexing: list[set[Any]], result_use: list[int]) -> None:
        """Accounts for `op`, whose users are all accounted for already."""
        users: set[Any] = set().union(*result_indexing)
        self.count[op] = sum(self.count[u] for u in users)
        shape = op.results[0].type.shape if isinstance(op.results[0].type, ir.TensorType) \
            else None
        reached = max(result_use)
        for j, v in enumerate(op.operands):
            same = isinstance(v.type, ir.TensorType) and v.type.shape == shape
            if same or op.opcode == _S + "transpose":
                self.indexing.setdefault(v, set()).update(users)
            else:
                self.indexing.setdefault(v, set()).add(op)
            read = _operand_use(op, j)
            if reached != _NO_USE and read != _NO_USE:
                self.use[v] = max(self.use.get(v, _NO_USE), read, reached)

    def absorb(self, param: Value, producer: Op) -> None:
        """Updates the facts for `producer` fused in at `param` (its result), reading
        parameters only."""
        self._add(producer, [self.indexing.pop(param, set())], [self.use.pop(param, _NO_USE)])
        for v in producer.operands:
            self.use.setdefault(v, _NO_USE)

    def emissions(self, param: Value) -> int:
        return sum(self.count[u] for u in self.indexing.get(param, ()))


def _region_is_isolated(op: Op) -> bool:
    """Whether the regions of `op` read only values they define (so they can be cloned)."""
    for region in op.regions:
        defined: set[Value] = set()
        for inner_block in _blocks_of(region.block):
            defined.update(inner_block.args)
            for inner in inner_block.ops:
                defined.update(inner.results)
        for inner in region.block.walk():
            if any(v not in defined for v in inner.operands):
                return False
    return True


def _blocks_of(block: Block) -> Iterator[Block]:
    yield block
    for op in block.walk():
        for region in op.regions:
            yield region.block


def _loop_fusible(op: Op) -> bool:
    """XLA CPU's `CanBeLoopFused` (a constant counts as elementwise there)."""
    if op.opcode not in _LOOP_FUSIBLE and op.opcode != _S + "constant":
        return False
    if len(op.results) != 1:
        return False
    if op.regions and (op.opcode != _S + "reduce" or not _region_is_isolated(op)):
        return False
    return not util.has_side_effect(op)


def _matvec_dot(op: Op) -> bool:
    """A non-complex, non-batched dot with a vector or scalar result."""
    if op.opcode != _S + "dot_general" or len(op.results) != 1:
        return False
    numbers = op.attributes["dot_dimension_numbers"]
    return (op.result.type.rank <= 1 and op.result.type.dtype.kind != "c"
            and not numbers.lhs_batching_dimensions)


def fusion_blocks(module: ir.Module) -> Iterator[Block]:
    """The blocks fusion works in, nested ones first: function bodies and the regions of
    while and case (not the computations of reduce, sort, scatter or fusions)."""
    def visit(block: Block) -> Iterator[Block]:
        for op in block.ops:
            if op.opcode in (_S + "while", _S + "case"):
                for region in op.regions:
                    yield from visit(region.block)
        yield block

    for fn in module.functions:
        yield from visit(fn.body)


class _Names:
    """XLA's name uniquer over the module: `base`, `base.1`, `base.2`, ..."""

    def __init__(self, module: ir.Module) -> None:
        self.used: dict[str, int] = {}
        for op in module.walk():
            if is_fusion(op):
                self.take(op.attributes["name"])
                self.take(op.attributes["computation"])

    def take(self, name: str) -> None:
        base, _, suffix = name.rpartition(".")
        if base and suffix.isdigit():
            self.used[base] = max(self.used.get(base, 0), int(suffix) + 1)
        else:
            self.used.setdefault(name, 1)

    def fresh(self, base: str) -> str:
        count = self.used.get(base, 0)
        self.used[base] = count + 1
        return base if count == 0 else f"{base}.{count}"


def _new_fusion(consumer: Op, kind: str, name: str, computation: str) -> Op:
    """Wraps `consumer` (moved inside) in a fusion that takes over its result values."""
    operands = list(dict.fromkeys(consumer.operands))
    args = [Value(v.type) for v in operands]
    mapping = dict(zip(operands, args, strict=True))
    consumer.operands = [mapping[v] for v in consumer.operands]
    outer_results = consumer.results
    consumer.results = [Value(v.type) for v in outer_results]
    block = Block(args, [consumer, Op("stablehlo.return", list(consumer.results), [])])
    attributes = {"kind": kind, "name": name, "computation": computation}
    return Op(FUSION, operands, outer_results, attributes, [Region(block)])


def _clone(op: Op) -> Op:
    """A copy of `op` with new result values (and fresh values in its regions, which must
    be isolated)."""
    regions = [_clone_region(region) for region in op.regions]
    return Op(op.opcode, list(op.operands), [Value(v.type) for v in op.results],
              dict(op.attributes), regions)


def _clone_region(region: Region) -> Region:
    mapping: dict[Value, Value] = {}

    def clone_block(block: Block) -> Block:
        args = [Value(a.type) for a in block.args]
        mapping.update(zip(block.args, args, strict=True))
        ops = []
        for op in block.ops:
            new = Op(op.opcode, [mapping[v] for v in op.operands],
                     [Value(v.type) for v in op.results], dict(op.attributes),
                     [Region(clone_block(r.block)) for r in op.regions])
            mapping.update(zip(op.results, new.results, strict=True))
            ops.append(new)
        return Block(args, ops)

    return Region(clone_block(region.block))


class _BlockFusion:
    """Instruction fusion over one block: the state XLA's pass keeps per computation."""

    def __init__(self, block: Block, names: _Names) -> None:
        self.block = block
        self.names = names
        self.ops = list(block.ops[:-1])
        self.position = {id(op): i for i, op in enumerate(self.ops)}
        self.defining: dict[Value, Op] = {}
        for op in self.ops:
            for result in op.results:
                self.defining[result] = op
        # For each value, the ops of this block that read it (the terminator included).
        self.users: dict[Value, dict[int, Op]] = {
            v: {id(op): op for op in ops} for v, ops in util.users(block).items()}
        self.dead: set[int] = set()
        self.params: dict[int, dict[Value, Value]] = {}   # fusion -> operand -> block arg
        self.reductions: dict[int, int] = {}
        self.reads: dict[int, _FusedReads] = {}   # fusion -> how it reads its parameters
        self.do_not_duplicate = {id(op) for op in self.ops if self._globally_unfusible(op)}
        self.changed = False

    # --- the driver -------------------------------------------------------------------

    def run(self) -> bool:
        queue = list(self.ops)
        while queue:
            consumer = queue.pop()
            if id(consumer) in self.dead:
                continue
            fused = self._fuse_one_operand(consumer)
            if fused is not None:
                queue.append(fused)  # considered again at once, for its new operands
        if self.changed:
            self.block.ops = [op for op in self.ops if id(op) not in self.dead] + [
                self.block.terminator]
        return self.changed

    def _fuse_one_operand(self, consumer: Op) -> Op | None:
        candidates = [self.defining[v] for v in dict.fromkeys(consumer.operands)
                      if v in self.defining]
        candidates.sort(key=lambda op: self.position[id(op)], reverse=True)
        for producer in candidates:
            index = consumer.operands.index(producer.results[0]) if len(
                producer.results) == 1 else -1
            if index < 0 or not self._should_fuse(consumer, producer, index):
                continue
            return self._fuse(producer, consumer)
        return None

    # --- decisions --------------------------------------------------------------------

    def _should_fuse(self, consumer: Op, producer: Op, index: int) -> bool:
        if util.has_side_effect(producer) or is_fusion(producer):
            return False
        if id(producer) in self.do_not_duplicate and self._has_other_users(producer, consumer):
            return False
        if producer.opcode == _S + "constant" and not _effective_scalar(producer.result.type):
            return False
        if self._output_fusible(producer, consumer):
            return True
        if producer.opcode == _S + "add" and self._output_fusion_root(producer):
            return False
        if not _loop_fusible(producer):
            return False
        if self._bad_concatenate(producer) or self._bad_concatenate(consumer):
            return False
        if is_expensive(producer, self.defining) and self._operand_use(consumer, index) == _REUSE:
            return False
        if (self._has_other_users(producer, consumer) and is_expensive(producer, self.defining)
                and not self._always_duplicable(producer)):
            return False
        if (is_fusion(consumer) and producer.opcode == _S + "reduce"
                and self.reductions.get(id(consumer), 0) > _MAX_REDUCTIONS_IN_FUSION):
            return False
        if producer.opcode == _S + "reduce" and _keeps_minor_dim(producer):
            return False  # XLA 0.10.2 runs a column reduction as a fusion (YNNPACK) of its own
        if producer.opcode == _S + "constant" and not is_fusion(consumer):
            return False
        if consumer.opcode == _S + "dot_general" and self._matvec_absorbs(consumer, index):
            return True
        if is_fusion(consumer):
            return (consumer.attributes["kind"] == KIND_LOOP
                    and self._reads(consumer).emissions(consumer.regions[0].block.args[index])
                    <= _MAX_CODE_DUPLICATION)
        return _loop_fusible(consumer)

    def _reads(self, fusion: Op) -> _FusedReads:
        reads = self.reads.get(id(fusion))
        if reads is None:
            reads = self.reads[id(fusion)] = _FusedReads(fusion)
        return reads

    def _operand_use(self, consumer: Op, index: int) -> int:
        if is_fusion(consumer):
            return self._reads(consumer).use[consumer.regions[0].block.args[index]]
        return _operand_use(consumer, index)

    def _has_other_users(self, producer: Op, consumer: Op) -> bool:
        users = self.users.get(producer.results[0], {})
        return any(key != id(consumer) for key in users)

    @staticmethod
    def _always_duplicable(producer: Op) -> bool:
        return producer.opcode == _S + "constant" and _effective_scalar(producer.result.type)

    def _output_fusible(self, producer: Op, consumer: Op) -> bool:
        """XLA CPU's output fusion: a matrix-vector dot into the `add` that is its only
        user (using it once)."""
        if consumer.opcode != _S + "add" or not _matvec_dot(producer):
            return False
        users = self.users.get(producer.result, {})
        return len(users) == 1 and consumer.operands.count(producer.result) == 1

    def _output_fusion_root(self, add: Op) -> bool:
        return any(v in self.defining and self._output_fusible(self.defining[v], add)
                   for v in add.operands)

    @staticmethod
    def _bad_concatenate(op: Op) -> bool:
        if op.opcode != _S + "concatenate":
            return False
        if len(op.operands) > _MAX_CONCATENATE_ARGUMENTS:
            return True
        type_ = op.result.type
        if type_.rank <= 1:
            return False
        dim = op.attributes["dimension"]
        minor_bytes = type_.shape[dim] * type_.dtype.itemsize
        return dim == type_.rank - 1 and minor_bytes >= 64 and type_.nbytes >= 2048

    @staticmethod
    def _matvec_absorbs(dot: Op, index: int) -> bool:
        """A small matrix-vector dot fuses the producer of its matrix operand."""
        if dot.result.type.rank > 1:
            return False
        lhs, rhs = dot.operand_types
        if lhs.rank == 1 and index == 1:
            return lhs.nbytes < _MATVEC_THRESHOLD_BYTES
        if rhs.rank == 1 and index == 0:
            return rhs.nbytes < _MATVEC_THRESHOLD_BYTES
        return False

    def _globally_unfusible(self, producer: Op) -> bool:
        """XLA's `ComputeGloballyUnfusible`: a producer with several users that reads more
        than it writes (and has two or more non-scalar inputs) may be duplicated only when
        it can fuse into all of its users."""
        if len(producer.results) != 1:
            return True
        users = self.users.get(producer.result, {})
        if len(users) <= 1:
            return False
        inputs = list(dict.fromkeys(producer.operands))
        if sum(1 for v in inputs if not _effective_scalar(v.type)) <= 1:
            return False
        if sum(v.type.nbytes for v in inputs) <= producer.result.type.nbytes:
            return False
        return not all(_loop_fusible(user) for user in users.values())

    # --- rewriting --------------------------------------------------------------------

    def _fuse(self, producer: Op, consumer: Op) -> Op:
        """Fuses `producer` into `consumer` (made a fusion first if it is not one)."""
        self.changed = True
        fusion = consumer
        if not is_fusion(consumer):
            kind = KIND_OUTPUT if self._output_fusible(producer, consumer) else KIND_LOOP
            name = self.names.fresh(
                f"{opcodes.hlo_name(producer.opcode)}_{opcodes.hlo_name(consumer.opcode)}_fusion")
            fusion = _new_fusion(consumer, kind, name, self.names.fresh("fused_computation"))
            self._replace_op(consumer, fusion)
        if producer.opcode == _S + "reduce" or consumer.opcode == _S + "reduce":
            count = self.reductions.get(id(fusion), 0)
            self.reductions[id(fusion)] = count + (producer.opcode == _S + "reduce") + (
                consumer.opcode == _S + "reduce")
        self._absorb(fusion, producer)
        return fusion

    def _replace_op(self, old: Op, new: Op) -> None:
        """Puts fusion `new` (which took over `old`'s results) in `old`'s place."""
        i = self.position.pop(id(old))
        self.ops[i] = new
        self.position[id(new)] = i
        for result in new.results:
            self.defining[result] = new
        self.params[id(new)] = dict(zip(new.operands, new.regions[0].block.args, strict=True))
        for v in dict.fromkeys(new.operands):
            users = self.users.setdefault(v, {})
            users.pop(id(old), None)
            users[id(new)] = new

    def _absorb(self, fusion: Op, producer: Op) -> None:
        """Moves `producer` into `fusion` (or a copy, if others still read it)."""
        value = producer.result
        block = fusion.regions[0].block
        params = self.params[id(fusion)]
        k = fusion.operands.index(value)
        arg = block.args[k]
        duplicate = self._has_other_users(producer, fusion)
        outer_operands = list(producer.operands)
        inner = _clone(producer) if duplicate else producer
        # The fused op defines the parameter's value object itself, so no use inside the
        # fused computation needs rewriting.
        inner.results = [arg]
        new_operands = []
        for v in outer_operands:
            param = params.get(v)
            if param is None:
                param = params[v] = Value(v.type)
                fusion.operands.append(v)
                block.args.append(param)
                self.users.setdefault(v, {})[id(fusion)] = fusion
            new_operands.append(param)
        inner.operands = new_operands
        reads = self.reads.get(id(fusion))
        if reads is not None:
            reads.absorb(arg, inner)
        del fusion.operands[k]
        del block.args[k]
        del params[value]
        block.ops.insert(0, inner)
        self.users[value].pop(id(fusion), None)
        if duplicate and self.users[value]:
            return
        self.dead.add(id(producer))
        del self.defining[value]
        for v in dict.fromkeys(outer_operands):
            self.users[v].pop(id(producer), None)


class InstructionFusion(Pass):
    """XLA CPU's instruction fusion (see the module docstring for the rules): producers
    fused into consumers as `hlo.fusion` ops of kind `kLoop` (or `kOutput` for a
    matrix-vector dot with its bias add)."""

    name = "fusion"

    def run(self, module: ir.Module) -> bool:
        names = _Names(module)
        changed = False
        for block in list(fusion_blocks(module)):
            changed |= _BlockFusion(block, names).run()
        return changed


class FusionWrapper(Pass):
    """Wraps each fusible op that fused with nothing into a fusion of its own
    (`wrapped_exponential = fusion(x), kind=kLoop, calls=wrapped_exponential_computation`),
    as XLA's CPU pipeline does after fusion. Its operands, constants too, become
    parameters."""

    name = "fusion-wrapper"

    def run(self, module: ir.Module) -> bool:
        names = _Names(module)
        changed = False
        for block in list(fusion_blocks(module)):
            for i, op in enumerate(block.ops[:-1]):
                if not self._wrappable(op):
                    continue
                base = f"wrapped_{opcodes.hlo_name(op.opcode)}"
                block.ops[i] = _new_fusion(op, KIND_LOOP, names.fresh(base),
                                           names.fresh(f"{base}_computation"))
                changed = True
        return changed

    @staticmethod
    def _wrappable(op: Op) -> bool:
        if op.opcode not in _WRAPPED or len(op.results) != 1:
            return False
        if op.regions and not _region_is_isolated(op):
            return False
        return not util.has_side_effect(op)
