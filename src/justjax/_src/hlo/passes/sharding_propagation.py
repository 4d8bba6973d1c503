"""Sharding propagation: from the shardings a program's arguments and results are given, a
sharding for every value of its entry function, as XLA's ShardingPropagation (and Shardy)
choose them, for the SPMD partitioner to cut the program by.

Shardings flow forward (an op's result from its operands') and backward (an operand's from
the results that read it) until nothing changes; a value keeps the first sharding it gets
(argument and result shardings are fixed from the start), and a value nothing reaches is
replicated. Per op, a rule says which dimensions of its operands and results correspond
(`_forward`, `_backward`):

| op | correspondence |
| --- | --- |
| elementwise (any operand count), convert, `sdy`-free identities | every dimension to itself |
| broadcast_in_dim | operand dimension i to result dimension `broadcast_dimensions[i]` when their sizes agree |
| transpose | operand dimension `permutation[i]` to result dimension i |
| reshape | dimensions of equal size at the same place in both shapes' factorization; a split dimension's axes go to the major piece (of a size other than 1) when its blocks divide it |
| dot_general | batch to batch, each operand's free dimensions to the result's; contracting dimensions split the same way on both sides are summed by an all-reduce, the result replicated over their axes |
| reduce | the kept dimensions to the result's, in order (reduced axes summed by an all-reduce) |
| slice, pad, reverse, concatenate | the dimensions they leave whole |
| convolution (ungrouped) | batch to batch, the kernel's output features to the output's; the contracted features summed, the windowed dimensions whole |
| gather | the indices' batch dimensions to the result's; the operand's dimensions taken whole (not indexed) to their offset dimensions |
| scatter | the operand's dimensions the updates cover whole (not indexed) to themselves, with the updates' window dimensions |
| dynamic_slice, dynamic_update_slice | the dimensions taken (or updated) whole |
| custom call with a sharding rule | the factors every operand and result share (a batched linear-algebra call's batch dimensions) |
| while | each carry as it enters, or as the body gives back one entering whole, if one iteration keeps it so; else replicated |

A sharding constraint (`sdy.sharding_constraint`, `with_sharding_constraint`) fixes its
result's sharding from the start, as an argument's; through it, shardings flow as through an
identity. A manual computation (`shard_map`) fixes its results' shardings, and asks for its
operands' (backward). Other ops (branches, other custom calls, sort ...) take and give replicated
values: correct (the partitioner gathers their operands), not split.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Block, Op, Value
from justjax._src.hlo.sharding import (CONSTRAINT, MANUAL, ROTATE, MeshShape, TensorSharding,
                                       replicated)

__all__ = ["carry", "constraints", "correspondence", "DimMap", "fits", "invert", "loop_carries",
           "propagate", "propagate_block", "shared_factors", "ShardingMismatchError"]

Dims = tuple[tuple[str, ...], ...]
# A correspondence: for each dimension of one side, the dimension of the other side it maps
# to (None: none).
DimMap = list[int | None]


class ShardingMismatchError(ValueError):
    """Shardings of one program over different meshes."""


def propagate(function: ir.Function, seeds: dict[Value, TensorSharding]) -> dict[Value, TensorSharding]:
    """A sharding for every value of `function`'s body (its top level): `seeds` (argument and
    result shardings, kept as given) and what the rules derive from them.

    Raises:
      ShardingMismatchError: the seeds (or the constraints) are over different meshes.
    """
    seeds = {**constraints(function.body), **seeds}
    meshes = {s.mesh for s in seeds.values()}
    if len(meshes) > 1:
        raise ShardingMismatchError(
            f"the shardings of one program must use one mesh; got {len(meshes)}: "
            + ", ".join(sorted(m.sdy_text() for m in meshes)))
    if not meshes:
        return {}
    (mesh,) = meshes
    return propagate_block(function.body, seeds, mesh)


def propagate_block(block: Block, seeds: dict[Value, TensorSharding],
                    mesh: MeshShape) -> dict[Value, TensorSharding]:
    """A sharding over `mesh` for every value of `block` (its top level), from `seeds` (and
    the block's constraints); values nothing reaches are replicated."""
    found = {**constraints(block), **seeds}
    changed = True
    while changed:
        changed = False
        for op in block.ops:
            changed |= _forward(op, found, mesh)
        for op in reversed(block.ops):
            changed |= _backward(op, found)
    for value in _values(block):
        if value not in found and isinstance(value.type, ir.TensorType):
            found[value] = replicated(mesh, value.type.rank)
    return found


def constraints(block: Block) -> dict[Value, TensorSharding]:
    """The shardings the sharding constraints and manual computations (their results) of
    `block` (its top level) fix."""
    fixed = {}
    for op in block.ops:
        if op.opcode == CONSTRAINT:
            fixed[op.result] = op.attributes["sharding"]
        elif op.opcode == MANUAL:
            fixed.update(zip(op.results, op.attributes["out_shardings"], strict=True))
    return fixed


def _values(block: Block) -> list[Value]:
    values = list(block.args)
    for op in block.ops:
        values += op.results
    return values


def _set(found: dict[Value, TensorSharding], value: Value, sharding: TensorSharding | None) -> bool:
    """Gives `value` `sharding` unless it has one (or `sharding` splits nothing)."""
    if sharding is None or value in found or not isinstance(value.type, ir.TensorType):
        return False
    if all(not axes for axes in sharding.dims):
        return False  # replication is the default: it must not block a split from elsewhere
    found[value] = sharding
    return True


def carry(source: TensorSharding, mapping: DimMap, rank: int) -> TensorSharding:
    """The sharding of a value of `rank` dimensions whose dimension `mapping[i]` takes the axes
    of `source`'s dimension i (axes on unmapped dimensions are dropped)."""
    dims: list[tuple[str, ...]] = [()] * rank
    for i, target in enumerate(mapping):
        if target is not None:
            dims[target] = source.dims[i]
    return source.with_dims(dims)


def invert(mapping: DimMap, rank: int) -> DimMap:
    """The correspondence the other way: for each of the `rank` dimensions of the other side,
    the dimension of this side mapping to it."""
    inverse: DimMap = [None] * rank
    for i, target in enumerate(mapping):
        if target is not None:
            inverse[target] = i
    return inverse


def fits(sharding: TensorSharding, shape: Sequence[int]) -> TensorSharding:
    """`sharding` without the axes of dimensions whose blocks would not divide them."""
    sizes = sharding.mesh.sizes
    dims = [axes if size % math.prod(sizes[a] for a in axes) == 0 else ()
            for axes, size in zip(sharding.dims, shape, strict=True)]
    return sharding.with_dims(dims)


# ------------------------------------------------------------------------------ correspondences

def correspondence(op: Op) -> list[DimMap] | None:
    """For each operand of `op`, the result dimension each of its dimensions corresponds to;
    None for an op without a rule (its values are left replicated)."""
    opcode = op.opcode
    if len(op.results) != 1 or not isinstance(op.result.type, ir.TensorType):
        return None
    rank = op.result.type.rank
    rule = _RULES.get(opcode)
    if rule is not None:
        return rule(op)
    if opcodes.is_elementwise(opcode) or opcode in _SAME_SHAPE or opcode == CONSTRAINT:
        return [list(range(rank)) if _same_shape(v, op.result) else [None] * _rank(v)
                for v in op.operands]
    return None


_SAME_SHAPE = frozenset({"stablehlo.convert", "stablehlo.bitcast_convert",
                         "stablehlo.reduce_precision", "stablehlo.optimization_barrier", ROTATE})


def _rank(value: Value) -> int:
    return value.type.rank if isinstance(value.type, ir.TensorType) else 0


def _same_shape(value: Value, other: Value) -> bool:
    return (isinstance(value.type, ir.TensorType)
            and tuple(value.type.shape) == tuple(other.type.shape))


def _broadcast(op: Op) -> list[DimMap]:
    operand_shape = op.operands[0].type.shape
    result_shape = op.result.type.shape
    dims = list(op.attributes["broadcast_dimensions"])
    return [[d if operand_shape[i] == result_shape[d] else None for i, d in enumerate(dims)]]


def _transpose(op: Op) -> list[DimMap]:
    permutation = list(op.attributes["permutation"])
    mapping: DimMap = [None] * len(permutation)
    for result_dim, operand_dim in enumerate(permutation):
        mapping[operand_dim] = result_dim
    return [mapping]


def _reshape(op: Op) -> list[DimMap]:
    """Dimensions at the same place of both shapes' factorization: groups of consecutive
    dimensions with equal products; a group of one dimension on each side maps, and so does
    the major dimension of a group that one side splits (its blocks are checked later)."""
    source, target = op.operands[0].type.shape, op.result.type.shape
    mapping: DimMap = [None] * len(source)
    if 0 in source:
        return [mapping]
    i = j = 0
    while i < len(source) and j < len(target):
        start_i, start_j = i, j
        a, b = source[i], target[j]
        i += 1
        j += 1
        while a != b:
            if a < b:
                a *= source[i]
                i += 1
            else:
                b *= target[j]
                j += 1
        if i - start_i == 1 or j - start_j == 1:
            # The major dimensions of the group, dimensions of size 1 aside (reshaping
            # f32[32] to f32[1, 32] keeps the 32 split as it was).
            mapping[_major(source, start_i, i)] = _major(target, start_j, j)
    return [mapping]


def _major(shape: Sequence[int], start: int, stop: int) -> int:
    """The first dimension in [start, stop) of a size other than 1 (else `start`)."""
    return next((d for d in range(start, stop) if shape[d] != 1), start)


def _dot_general(op: Op) -> list[DimMap]:
    numbers = op.attributes["dot_dimension_numbers"]
    lhs_batch, rhs_batch = list(numbers.lhs_batching_dimensions), list(numbers.rhs_batching_dimensions)
    lhs_contract = list(numbers.lhs_contracting_dimensions)
    rhs_contract = list(numbers.rhs_contracting_dimensions)
    lhs_rank, rhs_rank = _rank(op.operands[0]), _rank(op.operands[1])
    lhs_free = [d for d in range(lhs_rank) if d not in lhs_batch + lhs_contract]
    rhs_free = [d for d in range(rhs_rank) if d not in rhs_batch + rhs_contract]
    lhs: DimMap = [None] * lhs_rank
    rhs: DimMap = [None] * rhs_rank
    for k, (l, r) in enumerate(zip(lhs_batch, rhs_batch, strict=True)):
        lhs[l], rhs[r] = k, k
    for k, d in enumerate(lhs_free):
        lhs[d] = len(lhs_batch) + k
    for k, d in enumerate(rhs_free):
        rhs[d] = len(lhs_batch) + len(lhs_free) + k
    return [lhs, rhs]


def _reduce(op: Op) -> list[DimMap] | None:
    if len(op.operands) != 2:
        return None  # variadic reductions (argmax ...) stay whole
    reduced = set(op.attributes["dimensions"])
    kept = [d for d in range(_rank(op.operands[0])) if d not in reduced]
    mapping: DimMap = [None] * _rank(op.operands[0])
    for k, d in enumerate(kept):
        mapping[d] = k
    return [mapping, []]


def _whole_dims(op: Op, changed: Callable[[int], bool]) -> list[DimMap]:
    """Operand 0's dimensions the op leaves whole map to themselves; others to nothing."""
    rank = _rank(op.operands[0])
    return [[d if not changed(d) else None for d in range(rank)]] + [
        [None] * _rank(v) for v in op.operands[1:]]


def _slice(op: Op) -> list[DimMap]:
    shape = op.operands[0].type.shape
    return _whole_dims(op, lambda d: op.result.type.shape[d] != shape[d])


def _pad(op: Op) -> list[DimMap]:
    low, high = op.attributes["edge_padding_low"], op.attributes["edge_padding_high"]
    interior = op.attributes["interior_padding"]
    return _whole_dims(op, lambda d: bool(low[d] or high[d] or interior[d]))


def _reverse(op: Op) -> list[DimMap]:
    reversed_dims = set(op.attributes["dimensions"])
    return _whole_dims(op, lambda d: d in reversed_dims)


def _concatenate(op: Op) -> list[DimMap]:
    axis = op.attributes["dimension"]
    rank = op.result.type.rank
    return [[d if d != axis else None for d in range(rank)] for _ in op.operands]


def _convolution(op: Op) -> list[DimMap] | None:
    """The input's batch to the output's, the kernel's output features to the output's
    (ungrouped convolutions only); the contracted features are summed (a kept split); a
    spatial dimension the window slides over one step at a time, keeping its size, to the
    output's (its blocks then exchange halos: `halo_dims`); other spatial dimensions stay
    whole."""
    if len(op.operands) != 2:
        return None
    numbers = op.attributes["dimension_numbers"]
    ungrouped = (op.attributes.get("feature_group_count", 1) == 1
                 and op.attributes.get("batch_group_count", 1) == 1)
    lhs: DimMap = [None] * _rank(op.operands[0])
    rhs: DimMap = [None] * _rank(op.operands[1])
    if op.attributes.get("batch_group_count", 1) == 1:
        lhs[numbers.input_batch_dimension] = numbers.output_batch_dimension
    if ungrouped:
        rhs[numbers.kernel_output_feature_dimension] = numbers.output_feature_dimension
    for d, k in halo_dims(op):
        lhs[d] = numbers.output_spatial_dimensions[k]
    return [lhs, rhs]


def halo_dims(op: Op) -> list[tuple[int, int]]:
    """The windowed dimensions of a convolution's input or a reduce_window's operand whose
    window moves one element at a time over an undilated input of the output's size, padded
    on both sides: split alike in input and output, each block needs only a few elements of
    its neighbours' (a halo). Each as (operand dimension, its row of the `padding`)."""
    if op.opcode == "stablehlo.convolution":
        numbers = op.attributes["dimension_numbers"]
        operand_dims = list(numbers.input_spatial_dimensions)
        result_dims = list(numbers.output_spatial_dimensions)
        base_dilation = op.attributes.get("lhs_dilation")
    else:
        operand_dims = result_dims = list(range(_rank(op.operands[0])))
        base_dilation = op.attributes.get("base_dilations")
    windowed = len(operand_dims)
    strides = op.attributes.get("window_strides") or (1,) * windowed
    base_dilation = base_dilation or (1,) * windowed
    padding = _padding(op, windowed)
    in_shape, out_shape = op.operands[0].type.shape, op.result.type.shape
    return [(d, k) for k, (d, r) in enumerate(zip(operand_dims, result_dims, strict=True))
            if strides[k] == 1 and base_dilation[k] == 1 and padding[k].min() >= 0
            and in_shape[d] == out_shape[r]]


def _padding(op: Op, windowed: int) -> np.ndarray:
    padding = op.attributes.get("padding")
    if padding is None:
        return np.zeros((windowed, 2), np.int64)
    return np.asarray(padding, np.int64).reshape(windowed, 2)


def _reduce_window(op: Op) -> list[DimMap] | None:
    """A reduce_window's operand dimensions to the result's where each block reduces to a
    block of its own: dimensions the window leaves alone (size and stride 1, unpadded),
    windows side by side (stride equal to the size, unpadded, undilated, no remainder: a
    pooling), and the halo dimensions of `halo_dims`; the initial value is a scalar."""
    if len(op.operands) != 2:
        return None
    rank = _rank(op.operands[0])
    a = op.attributes
    window = a["window_dimensions"]
    strides = a.get("window_strides") or (1,) * rank
    base = a.get("base_dilations") or (1,) * rank
    dilations = a.get("window_dilations") or (1,) * rank
    padding = _padding(op, rank)
    in_shape, out_shape = op.operands[0].type.shape, op.result.type.shape
    mapping: DimMap = [None] * rank
    for d in range(rank):
        if (window[d] == strides[d] and base[d] == 1 and dilations[d] == 1
                and not padding[d].any() and in_shape[d] == out_shape[d] * strides[d]):
            mapping[d] = d
    for d, _ in halo_dims(op):
        mapping[d] = d
    return [mapping, []]


def _select_and_scatter(op: Op) -> list[DimMap] | None:
    """A select_and_scatter (a max pooling's gradient): the operand's and the result's
    dimensions, and the source's (the pooled values'), correspond where the windows lie side
    by side (stride equal to the size, unpadded, no remainder): each block scatters into
    itself. Overlapping windows would scatter across blocks; they stay whole."""
    operand, source = op.operands[0].type.shape, op.operands[1].type.shape
    rank = len(operand)
    window = op.attributes["window_dimensions"]
    strides = op.attributes.get("window_strides") or (1,) * rank
    padding = _padding(op, rank)
    mapping: DimMap = [d if window[d] == strides[d] and not padding[d].any()
                       and operand[d] == source[d] * strides[d] else None
                       for d in range(rank)]
    return [mapping, list(mapping), []]


def _gather(op: Op) -> list[DimMap] | None:
    """The indices' batch dimensions to the result's (and the operand's batching dimensions
    with them); the operand's dimensions it takes whole, without indexing, to their offset
    dimensions."""
    if len(op.operands) != 2:
        return None
    numbers = op.attributes["dimension_numbers"]
    operand, indices = op.operands
    rank = op.result.type.rank
    batch_positions = [d for d in range(rank) if d not in numbers.offset_dims]
    index_dims = [d for d in range(_rank(indices)) if d != numbers.index_vector_dim]
    index_map: DimMap = [None] * _rank(indices)
    for d, position in zip(index_dims, batch_positions, strict=True):
        index_map[d] = position
    operand_map: DimMap = [None] * _rank(operand)
    for o, i in zip(numbers.operand_batching_dims, numbers.start_indices_batching_dims,
                    strict=True):
        operand_map[o] = index_map[i]
    sliced = [d for d in range(_rank(operand))
              if d not in numbers.collapsed_slice_dims and d not in numbers.operand_batching_dims]
    sizes = op.attributes["slice_sizes"]
    for d, position in zip(sliced, numbers.offset_dims, strict=True):
        if d not in numbers.start_index_map and sizes[d] == operand.type.shape[d]:
            operand_map[d] = position
    return [operand_map, index_map]


def _dynamic_slice(op: Op) -> list[DimMap]:
    """The dimensions it takes whole (their starts clamp to 0) to themselves."""
    operand = op.operands[0]
    sizes = op.attributes["slice_sizes"]
    return ([[d if sizes[d] == operand.type.shape[d] else None for d in range(_rank(operand))]]
            + [[] for _ in op.operands[1:]])


def _dynamic_update_slice(op: Op) -> list[DimMap]:
    """The dimensions the update covers whole to themselves, in the operand and the update."""
    operand, update = op.operands[0], op.operands[1]
    whole = [d if update.type.shape[d] == operand.type.shape[d] else None
             for d in range(_rank(operand))]
    return [whole, list(whole)] + [[] for _ in op.operands[2:]]


def _scatter(op: Op) -> list[DimMap] | None:
    """The operand's dimensions its updates cover whole, without indexing, to themselves, and
    the updates' window dimensions with them; the scattered dimensions stay whole."""
    if len(op.operands) != 3:
        return None
    numbers = op.attributes["scatter_dimension_numbers"]
    operand, indices, updates = op.operands
    windows = [d for d in range(_rank(operand))
               if d not in numbers.inserted_window_dims and d not in numbers.input_batching_dims]
    operand_map: DimMap = [None] * _rank(operand)
    update_map: DimMap = [None] * _rank(updates)
    for d, u in zip(windows, numbers.update_window_dims, strict=True):
        if (d not in numbers.scatter_dims_to_operand_dims
                and updates.type.shape[u] == operand.type.shape[d]):
            operand_map[d] = update_map[u] = d
    # A batching dimension: the operand's, its indices' and its updates' go together (each
    # device scatters its own batch).
    index_map: DimMap = [None] * _rank(indices)
    index_dims = [d for d in range(_rank(indices)) if d != numbers.index_vector_dim]
    scattered = [u for u in range(_rank(updates)) if u not in numbers.update_window_dims]
    for b, i in zip(numbers.input_batching_dims, numbers.scatter_indices_batching_dims,
                    strict=True):
        operand_map[b] = index_map[i] = b
        update_map[scattered[index_dims.index(i)]] = b
    return [operand_map, index_map, update_map]


_RULES: dict[str, Callable[[Op], list[DimMap] | None]] = {
    "stablehlo.convolution": _convolution,
    "stablehlo.gather": _gather,
    "stablehlo.scatter": _scatter,
    "stablehlo.dynamic_slice": _dynamic_slice,
    "stablehlo.dynamic_update_slice": _dynamic_update_slice,
    "stablehlo.broadcast_in_dim": _broadcast,
    "stablehlo.transpose": _transpose,
    "stablehlo.reshape": _reshape,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.reduce": _reduce,
    "stablehlo.reduce_window": _reduce_window,
    "stablehlo.select_and_scatter": _select_and_scatter,
    "stablehlo.slice": _slice,
    "stablehlo.pad": _pad,
    "stablehlo.reverse": _reverse,
    "stablehlo.concatenate": _concatenate,
}


# ------------------------------------------------------------------------------------- the flow

def _forward(op: Op, found: dict[Value, TensorSharding], mesh: MeshShape) -> bool:
    """The result's sharding from the operands': what each operand's sharding carries over,
    the one splitting the result most first, then the others' axes on dimensions still whole
    (a dot's result takes the rows' split from one operand and the columns' from the other).
    A loop's results: its carries' shardings (`loop_carries`)."""
    if op.opcode == "stablehlo.while":
        if all(r in found for r in op.results):
            return False
        found.update(zip(op.results, loop_carries(op, found, mesh), strict=True))
        return True
    factors = shared_factors(op)
    if factors is not None:
        axes = _factor_axes(op, op.operands, factors, found)
        return any([_set(found, r, fits(_by_factor(mesh, dims, axes), r.type.shape))
                    for r, dims in zip(op.results, factors[1], strict=True)])
    maps = correspondence(op)
    if maps is None or op.result in found:
        return False
    rank = op.result.type.rank
    candidates = []
    for operand, mapping in zip(op.operands, maps, strict=True):
        source = found.get(operand)
        if source is not None and mapping:
            candidates.append(fits(carry(source, mapping, rank), op.result.type.shape))
    if not candidates:
        return False
    candidates.sort(key=_split, reverse=True)
    dims = [list(axes) for axes in candidates[0].dims]
    used = {a for axes in dims for a in axes}
    for candidate in candidates[1:]:
        for d, axes in enumerate(candidate.dims):
            if axes and not dims[d] and not used & set(axes):
                dims[d] = list(axes)
                used.update(axes)
    merged = TensorSharding(mesh, tuple(tuple(axes) for axes in dims))
    return _set(found, op.result, fits(merged, op.result.type.shape))


def _backward(op: Op, found: dict[Value, TensorSharding]) -> bool:
    """Each operand's sharding from the result's, through the op's correspondence (a manual
    computation's operands: the shardings it takes them in)."""
    if op.opcode == MANUAL:
        return any([_set(found, v, s) for v, s in zip(op.operands, op.attributes["in_shardings"],
                                                       strict=True)])
    factors = shared_factors(op)
    if factors is not None:
        axes = _factor_axes(op, op.results, factors, found, results=True)
        if not axes:
            return False
        mesh = next(iter(axes.values()))[0]
        return any([_set(found, v, fits(_by_factor(mesh, dims, axes), v.type.shape))
                    for v, dims in zip(op.operands, factors[0], strict=True)])
    maps = correspondence(op)
    target = found.get(op.result) if maps is not None else None
    if target is None:
        return False
    changed = False
    for operand, mapping in zip(op.operands, maps, strict=True):
        if not mapping:
            continue
        rank = _rank(operand)
        carried = carry(target, invert(mapping, target.rank), rank)
        changed |= _set(found, operand, fits(carried, operand.type.shape))
    return changed


def shared_factors(op: Op) -> tuple[list[list[int | None]], list[list[int | None]]] | None:
    """For a custom call with Shardy's sharding rule: per operand and per result, each
    dimension's factor when every operand and result has it (the batch dimensions of a
    batched linear-algebra call: split alike everywhere), else None; None for other ops."""
    rule = op.attributes.get("sdy.sharding_rule") if op.opcode == "stablehlo.custom_call" \
        else None
    if rule is None or len(rule.operands) != len(op.operands) \
            or len(rule.results) != len(op.results):
        return None
    everywhere = set.intersection(*(set(dims) for dims in (*rule.operands, *rule.results)))

    def keep(dims: tuple[int, ...]) -> list[int | None]:
        return [f if f in everywhere else None for f in dims]

    return [keep(d) for d in rule.operands], [keep(d) for d in rule.results]


def _factor_axes(op: Op, values: Sequence[Value], factors: tuple, found: dict,
                 results: bool = False) -> dict[int, tuple[MeshShape, tuple[str, ...]]]:
    """The axes each shared factor is split over in the first of `values` (operands, or
    results) that has a sharding."""
    side = factors[1] if results else factors[0]
    axes: dict[int, tuple[MeshShape, tuple[str, ...]]] = {}
    for value, dims in zip(values, side, strict=True):
        sharding = found.get(value)
        if sharding is None:
            continue
        for d, factor in enumerate(dims):
            if factor is not None and sharding.dims[d] and factor not in axes:
                axes[factor] = (sharding.mesh, sharding.dims[d])
    return axes


def _by_factor(mesh: MeshShape, dims: list[int | None],
               axes: dict[int, tuple[MeshShape, tuple[str, ...]]]) -> TensorSharding:
    return TensorSharding(mesh, tuple(axes[f][1] if f in axes else () for f in dims))


def loop_carries(op: Op, found: dict[Value, TensorSharding],
                 mesh: MeshShape) -> list[TensorSharding]:
    """The shardings a `while` loop keeps its carries in, such that one iteration of the body
    gives each back so split: as it enters the loop; or, for one entering whole, as the body
    gives it back (cutting a whole value costs no communication: a buffer filled by
    `dynamic_update_slice`); else replicated."""
    carries = [found.get(v) or replicated(mesh, _rank(v)) for v in op.operands]
    settled: set[int] = set()  # carries that changed once already
    body = op.regions[1].block
    while True:
        inner = propagate_block(body, dict(zip(body.args, carries, strict=True)), mesh)
        outs = [inner.get(v) or replicated(mesh, _rank(v)) for v in body.terminator.operands]
        moved = False
        for k, (carry, out) in enumerate(zip(carries, outs, strict=True)):
            if carry == out or (carry.is_replicated and k in settled):
                continue
            carries[k] = out if carry.is_replicated else replicated(mesh, carry.rank)
            settled.add(k)
            moved = True
        if not moved:
            return carries


def _split(sharding: TensorSharding) -> int:
    """How many blocks a value so sharded is cut into."""
    return math.prod(sharding.tiles())
