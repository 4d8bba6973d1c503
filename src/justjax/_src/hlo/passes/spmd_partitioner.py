"""The SPMD partitioner: a program over whole (global) values, with shardings given for its
arguments and results, becomes the one program every device runs on its blocks, with the
collectives the splits need (XLA's SpmdPartitioner is the model).

The entry function's `arg_attrs`/`result_attrs` hold the given shardings under
`hlo.sharding.SHARDING`
(`hlo.sharding.TensorSharding`); `sharding_propagation.propagate` gives every other value one.
Then each op is rewritten on local values, in program order:

1. each operand is brought to the sharding the op needs (`_required`): the result's sharding
   carried back through the op's dimension correspondence, and, for a dot's or convolution's
   contracted and a reduction's reduced dimensions, the split the operand already has (kept
   when both of a dot's operands agree on it; preferred to moving the operands when the
   result is the smaller, `_prefer_sums`);
2. the op runs on the local blocks, its result split as its operands' splits carry forward;
3. a sum over split contracted or reduced dimensions is completed by a `reduce_scatter`
   along a dimension the result is wanted split on over those axes, else an `all_reduce`
   (a reduction's own region); independent all-reduces are combined at the end
   (`all_reduce_combiner.py`);
4. the result is kept with that sharding; a reader needing another gets it by `_reshard`.

`_reshard` moves a value between shardings: a split moving to another dimension by an
`all_to_all`; otherwise an `all_gather` (tiled, along each dimension whose split changes, over
that split's axes), then a `dynamic_slice` of the device's block (its offsets read from a
table by the device's `partition_id`). A `while` loop is partitioned block by block with its
carries' shardings (`sharding_propagation.loop_carries`); a manual computation (`shard_map`)
is inlined on its operands' blocks. Other ops without a rule run whole, on replicated
operands. The entry's results leave with their given (or propagated) shardings; the module
gets `mhlo.num_partitions`. Uneven splits are not taken (propagation drops them; given
argument and result shardings must divide their dimensions).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Builder, Op, Value
from justjax._src.hlo.passes import sharding_propagation as propagation
from justjax._src.hlo.passes.all_reduce_combiner import AllReduceCombiner
from justjax._src.hlo.passes.inline import CallInlining
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import (clone_ops, free_values, replace_uses,
                                            replace_uses_map, users)
from justjax._src.hlo.sharding import (CONSTRAINT, MANUAL, ROTATE, SHARDING, MeshShape,
                                       manual_mesh, TensorSharding, is_sharded, replicated)

__all__ = ["SpmdPartitioner", "UnevenShardingError"]
_I32 = np.dtype(np.int32)
# Ops whose operand 0 is windowed (its blocks exchange halos: `propagation.halo_dims`).
_WINDOWED = frozenset({"stablehlo.convolution", "stablehlo.reduce_window"})


class UnevenShardingError(ValueError):
    """A given argument or result sharding does not divide its value's dimensions."""


class SpmdPartitioner(Pass):
    """Rewrites `main` into the per-device program of its argument and result shardings."""

    name = "spmd-partitioner"

    def run(self, module: ir.Module) -> bool:
        """Partitions `module` when it is sharded (`hlo.sharding.is_sharded`); returns whether
        it changed it. Sharding constraints inside loops and branches alone only go away:
        nothing is split, and `main` keeps no `SHARDING` attributes."""
        if not is_sharded(module):
            return False
        CallInlining().run(module)
        main = module.main
        _drop_nested_constraints(main.body)
        _mark_rotations(main.body)
        _separate_forwarded_results(main)
        seeds = {value: sharding for value, sharding in zip(
            [*main.args, *main.body.terminator.operands], _given(main), strict=True)
            if sharding is not None}
        for value, sharding in {**seeds, **propagation.constraints(main.body)}.items():
            _check_even(value, sharding)
        shardings = propagation.propagate(main, seeds)
        manual = next((op for op in module.walk() if op.opcode == MANUAL), None)
        if shardings:
            mesh = next(iter(shardings.values())).mesh
        elif manual is not None:  # manual computations only in loops and branches
            mesh = manual_mesh(manual)
        else:
            module.attributes.pop("mhlo.num_partitions", None)
            return True
        _partition_main(main, shardings, mesh)
        AllReduceCombiner().run(module)
        module.attributes["mhlo.num_partitions"] = ir.IntegerAttr(mesh.device_count, "i32")
        return True


def _given(main: ir.Function) -> list[TensorSharding | None]:
    """The given shardings of `main`'s arguments then results (None: not given)."""
    args = [attrs.get(SHARDING) for attrs in (main.arg_attrs or [{}] * len(main.args))]
    results = [attrs.get(SHARDING) for attrs in
               (main.result_attrs or [{}] * len(main.body.terminator.operands))]
    return args + results


def _drop_nested_constraints(block: ir.Block) -> None:
    """Removes the sharding constraints inside nested regions (loop bodies, branches ...),
    which the partitioner does not split: each value passes on as it is."""
    for op in block.ops:
        for region in op.regions:
            inner = region.block
            _drop_nested_constraints(inner)
            kept = []
            for nested in inner.ops:
                if nested.opcode == CONSTRAINT:
                    replace_uses(inner, nested.result, nested.operands[0])
                else:
                    kept.append(nested)
            inner.ops = kept


def _separate_forwarded_results(main: ir.Function) -> None:
    """A result given its own sharding that is an argument (or another result) as it is
    gets a value of its own (a sharding constraint): the argument keeps its sharding, and
    the value is moved to the result's."""
    given = _given(main)
    results = main.body.terminator.operands
    shardings = given[len(main.args):]
    taken = set(main.args)
    for k, (value, sharding) in enumerate(zip(list(results), shardings, strict=True)):
        if value in taken and sharding is not None:
            constraint = Op(CONSTRAINT, [value], [Value(value.type)], {"sharding": sharding})
            main.body.ops.insert(len(main.body.ops) - 1, constraint)
            results[k] = constraint.result
        taken.add(results[k])


def _mark_rotations(block: ir.Block) -> None:
    """Each concatenate of a value's two slices [s:n] and [0:s] along one dimension (a
    `jnp.roll`) becomes one rotation (`ROTATE`), whose blocks the partitioner moves by
    collective-permutes where the slices alone would need the whole dimension; slices left
    without another use go."""
    producers = {r: op for op in block.ops for r in op.results}
    rotations = {}
    for op in block.ops:
        found = _rotation(op, producers)
        if found is not None:
            rotations[op] = Op(ROTATE, [found[0]], list(op.results),
                               {"dimension": found[1], "shift": found[2]})
    if not rotations:
        return
    block.ops = [rotations.get(op, op) for op in block.ops]
    used = users(block)
    block.ops = [op for op in block.ops
                 if not (op.opcode == "stablehlo.slice" and not used.get(op.result))]


def _rotation(op: Op, producers: dict[Value, Op]) -> tuple[Value, int, int] | None:
    """(operand, dimension, shift) when `op` rotates a value, else None."""
    if op.opcode != "stablehlo.concatenate" or len(op.operands) != 2:
        return None
    slices = [producers.get(v) for v in op.operands]
    if any(s is None or s.opcode != "stablehlo.slice" for s in slices):
        return None
    whole = slices[0].operands[0]
    if slices[1].operands[0] is not whole or whole.type != op.result.type:
        return None
    d = op.attributes["dimension"]
    n = whole.type.shape[d]
    (start, _), (_, stop) = ((int(s.attributes["start_indices"][d]),
                              int(s.attributes["limit_indices"][d])) for s in slices)
    bounds = [(0, size) for size in whole.type.shape]
    expected = [bounds[:d] + [(start, n)] + bounds[d + 1:],
                bounds[:d] + [(0, start)] + bounds[d + 1:]]
    for s, want in zip(slices, expected, strict=True):
        got = list(zip(s.attributes["start_indices"], s.attributes["limit_indices"], strict=True))
        if [tuple(map(int, g)) for g in got] != want or any(
                int(k) != 1 for k in s.attributes["strides"]):
            return None
    if not 0 < start < n or stop != start:
        return None
    return whole, d, start


def _check_even(value: Value, sharding: TensorSharding) -> None:
    shape = value.type.shape
    if len(shape) != sharding.rank:
        raise ValueError(f"a sharding of rank {sharding.rank} for a value of shape {shape}")
    for d, (size, tiles) in enumerate(zip(shape, sharding.tiles(), strict=True)):
        if size % tiles:
            raise UnevenShardingError(
                f"dimension {d} of size {size} (shape {tuple(shape)}) cannot be split in "
                f"{tiles} equal blocks ({sharding.sdy_text()})")


def _partition_main(main: ir.Function, shardings: dict[Value, TensorSharding],
                    mesh: MeshShape) -> None:
    """Rewrites `main` into the per-device program; its arguments and results get their
    shardings."""
    partitioner = _Partitioner(main.body, shardings, mesh)
    old = main.body
    results = [partitioner.sharding_of(v) for v in old.terminator.operands]
    main.body = partitioner.partition(results)
    main.result_types = list(main.body.terminator.operand_types)
    result_attrs = list(main.result_attrs or [{} for _ in results])
    for attrs, sharding in zip(result_attrs, results, strict=True):
        attrs[SHARDING] = sharding
    main.result_attrs = result_attrs
    arg_attrs = list(main.arg_attrs or [{} for _ in old.args])
    for attrs, v in zip(arg_attrs, old.args, strict=True):
        attrs[SHARDING] = partitioner.sharding_of(v)
    main.arg_attrs = arg_attrs


class _Partitioner:
    """The rewrite of one block (the entry function's body, or a loop's body or condition,
    whose free values its `parent` provides, replicated)."""

    def __init__(self, source: ir.Block, shardings: dict[Value, TensorSharding],
                 mesh: MeshShape, parent: _Partitioner | None = None) -> None:
        self.source = source
        self.shardings = shardings
        self.mesh = mesh
        self.parent = parent
        self.block = ir.Block([], [])
        self.b = Builder(self.block)
        # global value -> {sharding: the local value holding that sharding's block}
        self.local: dict[Value, dict[TensorSharding, Value]] = {}
        self._partition: Value | None = None
        self._producers: dict[Value, Op] | None = None

    def partition(self, results: Sequence[TensorSharding]) -> ir.Block:
        """The per-device block: its arguments blocks of their shardings, its results blocks
        of `results`."""
        old = self.source
        for arg in old.args:
            sharding = self.sharding_of(arg)
            local = Value(self._local_type(arg.type, sharding))
            self.block.args.append(local)
            self.local[arg] = {sharding: local}
        for op in old.ops[:-1]:
            self._op(op)
        outs = [self.get(v, s) for v, s in zip(old.terminator.operands, results, strict=True)]
        self.b.op(old.terminator.opcode, outs, [])
        return self.block

    # -- values ---------------------------------------------------------------------------------

    def sharding_of(self, value: Value) -> TensorSharding:
        found = self.shardings.get(value)
        if found is None:
            rank = value.type.rank if isinstance(value.type, ir.TensorType) else 0
            return replicated(self.mesh, rank)
        return found

    @staticmethod
    def _local_type(type_: ir.Type, sharding: TensorSharding) -> ir.Type:
        if not isinstance(type_, ir.TensorType):
            return type_
        return ir.TensorType(sharding.shard_shape(type_.shape), type_.dtype)

    def get(self, value: Value, sharding: TensorSharding) -> Value:
        """The local value of `value` split as `sharding` (resharded from one it has)."""
        held = self.local.get(value)
        if held is None:  # a free value of a loop's body: the enclosing block's, whole
            assert self.parent is not None, value
            whole = replicated(self.mesh, _rank(value))
            held = self.local[value] = {whole: self.parent.get(value, whole)}
        found = held.get(sharding)
        if found is not None:
            return found
        if not isinstance(value.type, ir.TensorType):
            return next(iter(held.values()))
        source, local = next(iter(held.items()))
        moved = self._reshard(local, source, sharding, value.type)
        held[sharding] = moved
        return moved

    def _reshard(self, local: Value, source: TensorSharding, target: TensorSharding,
                 global_type: ir.TensorType) -> Value:
        """`local` (a block of `source`) as a block of `target`: a split moving from one
        dimension to another (the one whole in both before, the other after) by an
        all-to-all; then gathered along each dimension whose split changes, and sliced to the
        device's block."""
        for i, axes in enumerate(source.dims):
            j = next((j for j, want in enumerate(target.dims) if axes and want == axes
                      and j != i and not source.dims[j] and not target.dims[i]), None)
            if j is not None:
                local = self._all_to_all(local, j, i, axes)
                source = source.with_dims([axes if d == j else () if d == i else have
                                           for d, have in enumerate(source.dims)])
        dims = [list(axes) for axes in source.dims]
        for d, (have, want) in enumerate(zip(source.dims, target.dims, strict=True)):
            if have and have != want:
                local = self._all_gather(local, d, have)
                dims[d] = []
        current = TensorSharding(self.mesh, tuple(tuple(a) for a in dims))
        if current == target:
            return local
        return self._slice_block(local, current, target, global_type)

    def _all_gather(self, local: Value, dim: int, axes: Sequence[str]) -> Value:
        shape = list(local.type.shape)
        shape[dim] *= math.prod(self.mesh.sizes[a] for a in axes)
        return self.b.one("stablehlo.all_gather", [local],
                          ir.TensorType(tuple(shape), local.type.dtype),
                          all_gather_dim=ir.IntegerAttr(dim, "i64"),
                          replica_groups=self.mesh.groups(list(axes)).astype(np.int64))

    def _all_to_all(self, local: Value, split: int, concat: int, axes: Sequence[str]) -> Value:
        """Each device's block cut along `split` among the devices of `axes`, and the pieces
        it receives joined along `concat`: the split over `axes` moves from `concat` to
        `split`."""
        count = math.prod(self.mesh.sizes[a] for a in axes)
        shape = list(local.type.shape)
        shape[split] //= count
        shape[concat] *= count
        return self.b.one("stablehlo.all_to_all", [local],
                          ir.TensorType(tuple(shape), local.type.dtype),
                          split_dimension=ir.IntegerAttr(split, "i64"),
                          concat_dimension=ir.IntegerAttr(concat, "i64"),
                          split_count=ir.IntegerAttr(count, "i64"),
                          replica_groups=self.mesh.groups(list(axes)).astype(np.int64))

    def _slice_block(self, whole: Value, current: TensorSharding, target: TensorSharding,
                     global_type: ir.TensorType) -> Value:
        """The device's block of `target` cut from `whole` (laid out as `current`: whole
        along each dimension, or already split as `target` splits it)."""
        block = target.shard_shape(global_type.shape)
        starts = []
        for d, axes in enumerate(target.dims):
            if not axes or current.dims[d] == axes:
                starts.append(self.b.constant(0, _I32))
                continue
            table = np.array([target.block_index(p)[d] * block[d]
                              for p in range(self.mesh.device_count)], _I32)
            starts.append(self._lookup(table))
        sizes = tuple(block[d] if axes else whole.type.shape[d]
                      for d, axes in enumerate(target.dims))
        return self.b.one("stablehlo.dynamic_slice", [whole, *starts],
                          ir.TensorType(sizes, whole.type.dtype), slice_sizes=sizes)

    def _lookup(self, table: np.ndarray) -> Value:
        """`table[partition id]`, a scalar."""
        entry = self.b.one("stablehlo.dynamic_slice", [self.b.constant(table, _I32),
                                                       self._partition_id()],
                           ir.TensorType((1,), _I32), slice_sizes=(1,))
        return self.b.one("stablehlo.reshape", [entry], ir.TensorType((), _I32))

    def _partition_id(self) -> Value:
        if self._partition is None:
            raw = self.b.one("stablehlo.partition_id", [], ir.TensorType((), np.dtype(np.uint32)))
            self._partition = self.b.one("stablehlo.convert", [raw], ir.TensorType((), _I32))
        return self._partition

    # -- ops ------------------------------------------------------------------------------------

    def _op(self, op: Op) -> None:
        if op.opcode == CONSTRAINT:
            sharding = op.attributes["sharding"]
            self.local[op.result] = {sharding: self.get(op.operands[0], sharding)}
            return
        if op.opcode == "stablehlo.while":
            self._loop(op)
            return
        if op.opcode == ROTATE:
            self._rotate(op)
            return
        factors = propagation.shared_factors(op)
        if factors is not None:
            self._factored(op, factors)
            return
        if op.opcode == MANUAL:
            operands = [self.get(v, s) for v, s in zip(op.operands, op.attributes["in_shardings"],
                                                       strict=True)]
            results = self._inline_manual(op, operands)
            for old, new, sharding in zip(op.results, results, op.attributes["out_shardings"],
                                          strict=True):
                self.local[old] = {sharding: new}
            return
        maps = propagation.correspondence(op)
        if maps is None:
            self._whole(op)
            return
        target = self.sharding_of(op.result)
        required = self._required(op, maps, target)
        windowed = op.opcode in _WINDOWED and required[0] is not None
        if windowed:
            required[0] = self._within_neighbours(op, required[0])
        operands = [self.get(v, s) if s is not None else self.get(v, self._any(v))
                    for v, s in zip(op.operands, required, strict=True)]
        natural, summed = self._natural(op, maps, required)
        result_type = self._local_type(op.result.type, natural)
        attributes = _local_attributes(op, required, natural, self.mesh)
        if windowed:
            attributes = self._with_halos(op, operands, required[0], attributes)
        base = None
        if summed and op.opcode == "stablehlo.scatter":
            # Each device's part is scattered into zeros; the operand is added once, after.
            base = None if self._is_zero(op.operands[0]) else operands[0]
            zero = self.b.constant(0, operands[0].type.dtype)
            operands[0] = self.b.one("stablehlo.broadcast_in_dim", [zero], operands[0].type,
                                     broadcast_dimensions=())
        (new,) = clone_ops([Op(op.opcode, operands, [Value(result_type)], attributes,
                               op.regions)], {})
        self.block.ops.append(new)
        result = new.result
        if summed and base is None:
            result, natural, summed = self._scatter_sum(result, natural, summed, op)
        if summed:
            result = self._all_reduce(result, summed, op)
        if base is not None:
            result = self.b.one("stablehlo.add", [result, base], result.type)
        self.local[op.result] = {natural: result}

    def _within_neighbours(self, op: Op, sharding: TensorSharding) -> TensorSharding:
        """A windowed op's input sharding, whole along the halo dimensions whose blocks are
        narrower than the window's padding (their halos would come from further than the
        next device)."""
        padding = np.asarray(op.attributes["padding"])
        block = sharding.shard_shape(op.operands[0].type.shape)
        dims = list(sharding.dims)
        for d, k in propagation.halo_dims(op):
            if dims[d] and padding[k].max() > block[d]:
                dims[d] = ()
        return sharding.with_dims(dims)

    def _with_halos(self, op: Op, operands: list[Value], sharding: TensorSharding,
                    attributes: dict) -> dict:
        """A convolution's or reduce_window's input block split along a windowed dimension,
        extended by the elements of its neighbours' blocks the window reaches (the padding's
        widths, from the left and the right neighbour, by two collective-permutes; the
        padding value at the ends: a convolution's zeros, a reduce_window's initial value),
        and the padding of that dimension dropped: each device then computes its own block of
        the output, as XLA's halo exchange. Returns the attributes."""
        lhs = operands[0]
        fill = None if op.opcode == "stablehlo.convolution" else operands[1]
        padding = np.array(attributes["padding"], np.int64)
        for d, k in propagation.halo_dims(op):
            axes = sharding.dims[d]
            if not axes:
                continue
            low, high = (int(w) for w in padding[k])
            size = lhs.type.shape[d]
            groups = self.mesh.groups(list(axes))
            width = groups.shape[1]
            pieces = []
            if low:
                pieces.append(self._edge_filled(
                    self._permute(self._cut(lhs, d, size - low, size),
                                  [(g[i], g[i + 1]) for g in groups for i in range(width - 1)]),
                    fill, sharding, d, 0))
            pieces.append(lhs)
            if high:
                pieces.append(self._edge_filled(
                    self._permute(self._cut(lhs, d, 0, high),
                                  [(g[i + 1], g[i]) for g in groups for i in range(width - 1)]),
                    fill, sharding, d, width - 1))
            if len(pieces) > 1:
                shape = list(lhs.type.shape)
                shape[d] += low + high
                lhs = self.b.one("stablehlo.concatenate", pieces,
                                 ir.TensorType(tuple(shape), lhs.type.dtype),
                                 dimension=d)
            padding[k] = (0, 0)
        operands[0] = lhs
        return {**attributes, "padding": padding}

    def _edge_filled(self, halo: Value, fill: Value | None, sharding: TensorSharding,
                     dim: int, edge: int) -> Value:
        """`halo` where a neighbour sent it; `fill` broadcast on the devices whose block
        along `dim` is the `edge` one (no neighbour there: a collective-permute leaves them
        zeros, the padding a convolution wants, so `fill` None keeps them)."""
        if fill is None:
            return halo
        table = np.array([sharding.block_index(p)[dim] == edge
                          for p in range(self.mesh.device_count)], _I32)
        at_edge = self.b.one("stablehlo.compare", [self._lookup(table), self.b.constant(1, _I32)],
                             ir.TensorType((), np.dtype(np.bool_)),
                             comparison_direction=ir.Enum("comparison_direction", "EQ"),
                             compare_type=ir.Enum("comparison_type", "SIGNED"))
        pred = self.b.one("stablehlo.broadcast_in_dim", [at_edge],
                          ir.TensorType(halo.type.shape, np.dtype(np.bool_)),
                          broadcast_dimensions=())
        filled = self.b.one("stablehlo.broadcast_in_dim", [fill], halo.type,
                            broadcast_dimensions=())
        return self.b.one("stablehlo.select", [pred, filled, halo], halo.type)

    def _rotate(self, op: Op) -> None:
        """A rotation of a value split along its dimension: each device's block is the end of
        one block and the start of the next (in the rotated order), at most two
        collective-permutes, none for a block that is the device's own, as XLA's."""
        target = self.sharding_of(op.result)
        d, shift = op.attributes["dimension"], op.attributes["shift"]
        x = self.get(op.operands[0], target)
        axes = target.dims[d]
        size = x.type.shape[d]
        if not axes:
            pieces = [self._cut(x, d, shift, size), self._cut(x, d, 0, shift)]
        else:
            groups = self.mesh.groups(list(axes))
            width = groups.shape[1]
            first, start = divmod(shift, size)
            pieces = [self._cut(self._from_block(x, groups, first % width), d, start, size)]
            if start:
                pieces.append(self._cut(self._from_block(x, groups, (first + 1) % width),
                                        d, 0, start))
        result = pieces[0] if len(pieces) == 1 else self.b.one(
            "stablehlo.concatenate", pieces, x.type, dimension=d)
        self.local[op.result] = {target: result}

    def _from_block(self, x: Value, groups: np.ndarray, offset: int) -> Value:
        """Each device's `x` from the device `offset` blocks after it in its group (cyclic)."""
        if offset == 0:
            return x
        width = groups.shape[1]
        return self._permute(x, [(g[(i + offset) % width], g[i]) for g in groups
                                 for i in range(width)])

    def _cut(self, value: Value, dim: int, start: int, limit: int) -> Value:
        if (start, limit) == (0, value.type.shape[dim]):
            return value
        shape = list(value.type.shape)
        starts = [0] * len(shape)
        limits = list(shape)
        starts[dim], limits[dim] = start, limit
        shape[dim] = limit - start
        return self.b.one("stablehlo.slice", [value], ir.TensorType(tuple(shape), value.type.dtype),
                          start_indices=tuple(starts), limit_indices=tuple(limits),
                          strides=(1,) * len(shape))

    def _permute(self, value: Value, pairs: list[tuple[int, int]]) -> Value:
        """`value` sent from each source position to its target (zeros where none is sent)."""
        return self.b.one("stablehlo.collective_permute", [value], value.type,
                          source_target_pairs=np.array(pairs, np.int64).reshape(-1, 2))

    def _is_zero(self, value: Value) -> bool:
        """Whether `value` is a zero constant or a broadcast of one."""
        if self._producers is None:
            self._producers = {r: op for op in self.source.ops for r in op.results}
        op = self._producers.get(value)
        if op is not None and op.opcode == "stablehlo.broadcast_in_dim":
            op = self._producers.get(op.operands[0])
        if op is None or op.opcode != "stablehlo.constant":
            return False
        return not np.any(np.asarray(op.attributes["value"]))

    def _any(self, value: Value) -> TensorSharding:
        return next(iter(self.local[value]))

    def _required(self, op: Op, maps: list[propagation.DimMap],
                  target: TensorSharding) -> list[TensorSharding | None]:
        """The sharding each operand is brought to (None: as it is; scalar operands of ops
        whose rule leaves them out, such as a reduction's initial value)."""
        required: list[TensorSharding | None] = []
        for operand, mapping in zip(op.operands, maps, strict=True):
            if not mapping:
                required.append(replicated(self.mesh, _rank(operand)))
                continue
            carried = propagation.carry(target, propagation.invert(mapping, target.rank),
                                        _rank(operand))
            required.append(propagation.fits(carried, operand.type.shape))
        required = self._prefer_sums(op, required)
        summed = self._kept_sums(op, maps, required)
        for index, dims in summed.items():
            sharding = required[index]
            assert sharding is not None
            required[index] = sharding.with_dims(
                [dims.get(d, axes) for d, axes in enumerate(sharding.dims)])
        return required

    def _prefer_sums(self, op: Op, required: list[TensorSharding | None]
                     ) -> list[TensorSharding | None]:
        """For a dot or convolution whose operands are both split alike along a contracted
        pair, and whose result is smaller than they are: the result's split over those axes
        is not carried back to the operands (which would move them), so the contraction is
        kept split and summed, with a reduce-scatter where the result is wanted split."""
        if op.opcode not in ("stablehlo.dot_general", "stablehlo.convolution"):
            return required
        lhs, rhs = op.operands
        if _elements(op.result) >= _elements(lhs) + _elements(rhs):
            return required
        have = [self._any(v) for v in (lhs, rhs)]
        for l, r in _contracted_pairs(op):
            axes = set(have[0].dims[l])
            if axes and have[0].dims[l] == have[1].dims[r]:
                required = [s if s is None else s.with_dims(
                    [() if axes & set(a) else a for a in s.dims]) for s in required]
        return required

    def _kept_sums(self, op: Op, maps: list[propagation.DimMap],
                   required: list[TensorSharding | None]) -> dict[int, dict[int, tuple[str, ...]]]:
        """The splits of summed dimensions kept as the operands have them: per operand, per
        dimension, the axes (a dot's contracting pairs split alike on both sides, or on one
        side with the other whole, which is then sliced, with no collective: a data-parallel
        gradient's dot of a whole cotangent with split activations; a sum's reduced
        dimensions; a scatter-add's scattered dimensions, its updates' and indices' split
        alike). Axes the required shardings use elsewhere are not kept."""
        used = {a for s in required if s is not None for axes in s.dims for a in axes}
        have = [self._any(v) if isinstance(v.type, ir.TensorType) else None for v in op.operands]
        kept: dict[int, dict[int, tuple[str, ...]]] = {}
        if op.opcode in ("stablehlo.dot_general", "stablehlo.convolution"):
            for l, r in _contracted_pairs(op):
                left = have[0].dims[l] if have[0] is not None else ()
                right = have[1].dims[r] if have[1] is not None else ()
                axes = left if left == right or not right else right if not left else ()
                if axes and not used & set(axes):
                    kept.setdefault(0, {})[l] = axes
                    kept.setdefault(1, {})[r] = axes
                    used.update(axes)
        elif op.opcode == "stablehlo.scatter" and len(op.operands) == 3 and _is_add(op):
            # A scatter-add of updates split along their scattered dimensions (with their
            # indices split alike): each device adds its part, the parts are summed.
            numbers = op.attributes["scatter_dimension_numbers"]
            indices, updates = op.operands[1], op.operands[2]
            scattered = [d for d in range(_rank(updates)) if d not in numbers.update_window_dims]
            batch = [d for d in range(_rank(indices)) if d != numbers.index_vector_dim]
            for u, i in zip(scattered, batch, strict=True):
                axes = have[2].dims[u] if have[2] is not None else ()
                if axes and not used & set(axes):
                    kept.setdefault(2, {})[u] = axes
                    kept.setdefault(1, {})[i] = axes
                    used.update(axes)
        elif op.opcode == "stablehlo.reduce" and len(op.operands) == 2 and _is_sum(op):
            for d in op.attributes["dimensions"]:
                axes = have[0].dims[d] if have[0] is not None else ()
                if axes and not used & set(axes):
                    kept.setdefault(0, {})[d] = axes
                    used.update(axes)
        return kept

    def _natural(self, op: Op, maps: list[propagation.DimMap],
                 required: list[TensorSharding | None]) -> tuple[TensorSharding, tuple[str, ...]]:
        """The result's sharding as the operands' splits carry it, and the axes its local
        values are partial sums over."""
        rank = op.result.type.rank
        dims: list[tuple[str, ...]] = [()] * rank
        summed: list[str] = []
        for sharding, mapping in zip(required, maps, strict=True):
            if sharding is None or not mapping:
                continue
            for d, axes in enumerate(sharding.dims):
                if not axes:
                    continue
                if mapping[d] is None:
                    summed += [a for a in axes if a not in summed]
                elif not dims[mapping[d]]:
                    dims[mapping[d]] = axes
        return TensorSharding(self.mesh, tuple(dims)), tuple(summed)

    def _scatter_sum(self, value: Value, natural: TensorSharding, summed: tuple[str, ...],
                     op: Op) -> tuple[Value, TensorSharding, tuple[str, ...]]:
        """A partial sum whose users want it split along a dimension over some of the summed
        axes (the propagated sharding of `op`'s result) is completed by a reduce-scatter over
        them: each device gets the total of its block only. Returns the value, its sharding
        and the axes still to sum."""
        target = self.sharding_of(op.result)
        for d, axes in enumerate(target.dims):
            if (axes and not natural.dims[d] and set(axes) <= set(summed)
                    and value.type.shape[d] % math.prod(self.mesh.sizes[a] for a in axes) == 0):
                shape = list(value.type.shape)
                shape[d] //= math.prod(self.mesh.sizes[a] for a in axes)
                scattered = self.b.op(
                    "stablehlo.reduce_scatter", [value],
                    [ir.TensorType(tuple(shape), value.type.dtype)],
                    {"scatter_dimension": ir.IntegerAttr(d, "i64"),
                     "replica_groups": self.mesh.groups(list(axes)).astype(np.int64)},
                    [self._sum_region(op, value.type.dtype)]).result
                natural = natural.with_dims([axes if k == d else have
                                             for k, have in enumerate(natural.dims)])
                return scattered, natural, tuple(a for a in summed if a not in axes)
        return value, natural, summed

    def _all_reduce(self, value: Value, axes: Sequence[str], op: Op) -> Value:
        return self.b.op("stablehlo.all_reduce", [value], [value.type],
                         {"replica_groups": self.mesh.groups(list(axes)).astype(np.int64)},
                         [self._sum_region(op, value.type.dtype)]).result

    @staticmethod
    def _sum_region(op: Op, dtype: np.dtype) -> ir.Region:
        """How partial results of `op` combine: a reduction's own region, else an add."""
        if op.opcode == "stablehlo.reduce":
            (region,) = clone_ops([Op("stablehlo.reduce", [], [], {}, op.regions)], {})[0].regions
            return region
        return _add_region(dtype)

    def _factored(self, op: Op, factors: tuple[list[list[int | None]], list[list[int | None]]]
                  ) -> None:
        """A custom call whose sharding rule's shared factors (a batched call's batch
        dimensions) are split as its results are wanted: each device calls it on its
        batch."""
        axes: dict[int, tuple[str, ...]] = {}
        for result, dims in zip(op.results, factors[1], strict=True):
            wanted = self.sharding_of(result)
            for d, factor in enumerate(dims):
                if factor is not None and wanted.dims[d]:
                    axes.setdefault(factor, wanted.dims[d])

        def split(dims: list[int | None]) -> TensorSharding:
            return TensorSharding(self.mesh, tuple(axes.get(f, ()) if f is not None else ()
                                                   for f in dims))

        operands = [self.get(v, split(dims)) for v, dims in zip(op.operands, factors[0],
                                                                 strict=True)]
        shardings = [split(dims) for dims in factors[1]]
        # The rule's factor sizes are the global ones: the per-device call goes without it.
        attributes = {k: v for k, v in op.attributes.items() if k != "sdy.sharding_rule"}
        new = Op(op.opcode, operands, [Value(self._local_type(r.type, s))
                                       for r, s in zip(op.results, shardings, strict=True)],
                 attributes, op.regions)
        self.block.ops.append(new)
        for old, result, sharding in zip(op.results, new.results, shardings, strict=True):
            self.local[old] = {sharding: result}

    def _loop(self, op: Op) -> None:
        """A `while` loop on its carries' blocks (`propagation.loop_carries`): its condition
        and body partitioned as blocks of their own."""
        carries = [self.sharding_of(r) for r in op.results]
        operands = [self.get(v, s) for v, s in zip(op.operands, carries, strict=True)]
        regions = []
        for region, results in zip(op.regions, ([replicated(self.mesh, 0)], carries),
                                   strict=True):
            block = region.block
            inner = propagation.propagate_block(block, dict(zip(block.args, carries,
                                                                strict=True)), self.mesh)
            regions.append(ir.Region(_Partitioner(block, inner, self.mesh, self)
                                     .partition(results)))
        new = Op(op.opcode, operands, [Value(v.type) for v in operands], dict(op.attributes),
                 regions)
        self.block.ops.append(new)
        for old, result, sharding in zip(op.results, new.results, carries, strict=True):
            self.local[old] = {sharding: result}

    def _inline_manual(self, op: Op, operands: Sequence[Value]) -> list[Value]:
        """A manual computation's region (one device's program) emitted on `operands`, its
        blocks; returns its results, blocks of the `out_shardings`."""
        body = op.regions[0].block
        mapping = dict(zip(body.args, operands, strict=True))
        self.block.ops.extend(clone_ops(body.ops[:-1], mapping))
        return [mapping.get(v, v) for v in body.terminator.operands]

    def _expand_nested_manuals(self, block: ir.Block) -> None:
        """Rewrites the manual computations inside `block` (a loop body or branch run whole,
        on replicated values): each device cuts its blocks of the operands, runs the region,
        and the results are gathered whole again."""
        for op in block.ops:
            for region in op.regions:
                self._expand_nested_manuals(region.block)
        if not any(op.opcode == MANUAL for op in block.ops):
            return
        saved = (self.block, self.b, self._partition)
        self.block = ir.Block(block.args, [])
        self.b, self._partition = Builder(self.block), None
        renamed: dict[Value, Value] = {}
        try:
            for op in block.ops:
                op.operands = [renamed.get(v, v) for v in op.operands]
                if op.opcode != MANUAL:
                    self.block.ops.append(op)
                    continue
                operands = [self._slice_block(v, replicated(self.mesh, _rank(v)), s, v.type)
                            for v, s in zip(op.operands, op.attributes["in_shardings"],
                                            strict=True)]
                results = self._inline_manual(op, operands)
                for old, new, sharding in zip(op.results, results,
                                              op.attributes["out_shardings"], strict=True):
                    renamed[old] = self._reshard(new, sharding,
                                                 replicated(self.mesh, _rank(old)), old.type)
            replace_uses_map(self.block, renamed)
            block.ops = self.block.ops
        finally:
            self.block, self.b, self._partition = saved

    def _whole(self, op: Op) -> None:
        """`op` run on whole values: its operands (and what its regions read from outside)
        replicated; its results replicated."""
        for region in op.regions:
            self._expand_nested_manuals(region.block)
        mapping = {}
        for v in free_values(op):
            if v in self.local:
                mapping[v] = self.get(v, replicated(self.mesh, _rank(v)))
        (new,) = clone_ops([op], mapping)
        self.block.ops.append(new)
        for old, result in zip(op.results, new.results, strict=True):
            self.local[old] = {replicated(self.mesh, _rank(old)): result}


def _contracted_pairs(op: Op) -> list[tuple[int, int]]:
    """The (lhs, rhs) dimension pairs a dot or an ungrouped convolution sums over."""
    if op.opcode == "stablehlo.dot_general":
        numbers = op.attributes["dot_dimension_numbers"]
        return list(zip(numbers.lhs_contracting_dimensions, numbers.rhs_contracting_dimensions,
                        strict=True))
    if op.attributes.get("feature_group_count", 1) != 1 or \
            op.attributes.get("batch_group_count", 1) != 1:
        return []
    numbers = op.attributes["dimension_numbers"]
    return [(numbers.input_feature_dimension, numbers.kernel_input_feature_dimension)]


def _local_attributes(op: Op, required: list[TensorSharding | None],
                      natural: TensorSharding, mesh: MeshShape) -> dict:
    """`op`'s attributes for its local operands: a slice's limits and a gather's slice sizes
    along split dimensions are the blocks'."""
    attributes = dict(op.attributes)

    def tiles(axes: Sequence[str]) -> int:
        return math.prod(mesh.sizes[a] for a in axes)

    if op.opcode == "stablehlo.slice":
        attributes["limit_indices"] = tuple(
            int(limit) // tiles(axes)
            for limit, axes in zip(op.attributes["limit_indices"], natural.dims, strict=True))
    elif op.opcode in ("stablehlo.gather", "stablehlo.dynamic_slice") and \
            required[0] is not None:
        attributes["slice_sizes"] = tuple(
            int(size) // tiles(axes)
            for size, axes in zip(op.attributes["slice_sizes"], required[0].dims, strict=True))
    return attributes


def _elements(value: Value) -> int:
    return math.prod(value.type.shape)


def _rank(value: Value) -> int:
    return value.type.rank if isinstance(value.type, ir.TensorType) else 0


def _is_sum(op: Op) -> bool:
    """Whether a reduce's region combines its two arguments by one add, max, min, mul, and or
    or: a monoid, so partial results per block combine by the same region."""
    body = op.regions[0].block
    return (len(body.ops) == 2 and body.ops[0].opcode in _MONOIDS
            and set(body.ops[0].operands) == set(body.args)
            and body.terminator.operands == [body.ops[0].result])


def _is_add(op: Op) -> bool:
    """Whether a scatter's region adds its two arguments."""
    body = op.regions[0].block
    return (len(body.ops) == 2 and body.ops[0].opcode == "stablehlo.add"
            and set(body.ops[0].operands) == set(body.args)
            and body.terminator.operands == [body.ops[0].result])


_MONOIDS = frozenset({"stablehlo.add", "stablehlo.maximum", "stablehlo.minimum",
                      "stablehlo.multiply", "stablehlo.and", "stablehlo.or"})


def _add_region(dtype: np.dtype) -> ir.Region:
    scalar = ir.TensorType((), dtype)
    region, b = ir.new_region([scalar, scalar])
    b.ret([b.one("stablehlo.add", list(region.block.args), scalar)])
    return region
