"""Collective ops across the replicas of an SPMD run (`runtime/replicas.py`):
`stablehlo.all_reduce`, `all_gather`, `all_to_all`, `collective_permute`, `reduce_scatter`,
`replica_id` and `partition_id`.

Each kernel hands its operands to the run's rendezvous and computes its result from every
replica's. `replica_groups` (one row per group of replica indices) says which replicas
combine; a replica in no group keeps its operand. The SPMD runs here are one-dimensional:
a replica's index is both its replica id and its partition id.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.backends.reference.kernels.reductions import RegionFn
from justjax._src.hlo.ir import Op
from justjax._src.runtime import replicas


def _group(op: Op, replica: int) -> list[int]:
    """The members of `replica`'s group, in the group's order (just itself if none)."""
    groups = np.asarray(op.attributes.get("replica_groups", np.zeros((0, 0), np.int64)))
    for row in groups.reshape(len(groups), -1) if groups.size else []:
        members = [int(m) for m in row if m >= 0]
        if replica in members:
            return members
    return [replica]


def _int(attribute: Any) -> int:
    return int(getattr(attribute, "value", attribute))


def _exchange(values: Sequence[np.ndarray]) -> tuple[int, list[list[np.ndarray]]]:
    context = replicas.context()
    return context.replica, context.rendezvous.exchange(
        context.replica, [np.array(v, copy=True) for v in values])


@register("stablehlo.replica_id", "stablehlo.partition_id")
def _replica_id(op: Op, compiler: Compiler) -> Kernel:
    return lambda: np.asarray(replicas.context().replica, np.uint32)


@register("stablehlo.all_reduce")
def _all_reduce(op: Op, compiler: Compiler) -> Kernel:
    body = RegionFn(op.regions[0], compiler)
    dtypes = [t.dtype for t in op.result_types]
    # StableHLO's variadic form: a region of two arguments reduces each operand on its own
    # (the all-reduce combiner's); one of 2N arguments reduces the operands together.
    each = len(op.operands) > 1 and len(op.regions[0].block.args) == 2

    def all_reduce(*operands: np.ndarray) -> Any:
        replica, every = _exchange(operands)
        members = _group(op, replica)
        # Folded in the group's order, as XLA CPU's all-reduce does.
        acc = list(every[members[0]])
        for member in members[1:]:
            if each:
                acc = [body([a, x])[0] for a, x in zip(acc, every[member], strict=True)]
            else:
                acc = body([*acc, *every[member]])
        results = [np.asarray(a, dtype) for a, dtype in zip(acc, dtypes, strict=True)]
        return results[0] if len(results) == 1 else results

    return all_reduce


@register("stablehlo.all_gather")
def _all_gather(op: Op, compiler: Compiler) -> Kernel:
    dim = _int(op.attributes["all_gather_dim"])

    def all_gather(*operands: np.ndarray) -> Any:
        replica, every = _exchange(operands)
        members = _group(op, replica)
        results = [np.concatenate([every[m][k] for m in members], axis=dim)
                   for k in range(len(operands))]
        return results[0] if len(results) == 1 else results

    return all_gather


@register("stablehlo.reduce_scatter")
def _reduce_scatter(op: Op, compiler: Compiler) -> Kernel:
    body = RegionFn(op.regions[0], compiler)
    dim = _int(op.attributes["scatter_dimension"])
    dtype = op.result.type.dtype

    def reduce_scatter(operand: np.ndarray) -> np.ndarray:
        replica, every = _exchange([operand])
        members = _group(op, replica)
        acc = every[members[0]][0]
        for member in members[1:]:
            acc = body([acc, every[member][0]])[0]
        piece = np.split(np.asarray(acc, dtype), len(members), axis=dim)
        return piece[members.index(replica)]

    return reduce_scatter


@register("stablehlo.all_to_all")
def _all_to_all(op: Op, compiler: Compiler) -> Kernel:
    split_dim = _int(op.attributes["split_dimension"])
    concat_dim = _int(op.attributes["concat_dimension"])

    def all_to_all(*operands: np.ndarray) -> Any:
        replica, every = _exchange(operands)
        members = _group(op, replica)
        position = members.index(replica)
        results = []
        for k in range(len(operands)):
            pieces = [np.split(every[m][k], len(members), axis=split_dim)[position]
                      for m in members]
            results.append(np.concatenate(pieces, axis=concat_dim))
        return results[0] if len(results) == 1 else results

    return all_to_all


@register("stablehlo.collective_permute")
def _collective_permute(op: Op, compiler: Compiler) -> Kernel:
    pairs = np.asarray(op.attributes["source_target_pairs"]).reshape(-1, 2)
    source_of = {int(target): int(source) for source, target in pairs}

    def collective_permute(operand: np.ndarray) -> np.ndarray:
        replica, every = _exchange([operand])
        source = source_of.get(replica)
        # A replica no pair sends to gets zeros (XLA's semantics).
        return np.zeros_like(operand) if source is None else every[source][0]

    return collective_permute
