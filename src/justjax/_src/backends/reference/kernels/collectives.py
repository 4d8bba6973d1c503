"""Collective ops across the replicas of an SPMD run (`runtime/replicas.py`):
`stablehlo.all_reduce`, `all_gather`, `all_to_all`, `collective_permute`, `reduce_scatter`,
`replica_id` and `partition_id`.

Each kernel hands its operands to the run's rendezvous with the function that computes every
local replica's result from them (called once per process, when its replicas have all
arrived). `replica_groups` (one row per group of replica indices) says which replicas
combine; a replica in no group keeps its operand. The SPMD runs here are one-dimensional: a
replica's index is both its replica id and its partition id.

In a run of several processes (`runtime/processes.py`), a group whose members live in
several processes is combined in two parts: the members of each process through the
rendezvous, then between the processes through MPI. A sum, product, maximum or minimum of
MPI's types is an Allreduce of each process's partial result (received straight into the
program's buffer when the process has one member), or a Reduce_scatter for a reduce-scatter;
a float sum then adds the processes' partial sums, not each member in turn, so its last bits
may differ from one process's run. Other reductions and all-gathers are an Allgatherv of the
members' values (folded in the group's order: the same bits as one process's run);
collective-permutes and all-to-alls send the pieces that cross processes between pairs of
them.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, destination, register
from justjax._src.backends.reference.kernels.reductions import RegionFn
from justjax._src.hlo.ir import Op
from justjax._src.numerics import monoids
from justjax._src.runtime import processes, replicas

# Given: per local replica position, its operands. Returns: per local position, its results.
Combine = Callable[[dict[int, list[np.ndarray]]], dict[int, Any]]

def _groups(op: Op, count: int) -> list[list[int]]:
    """Every group of the op's `count` replicas, in the op's order; a replica in no group
    is a group of its own (after the op's groups)."""
    groups = np.asarray(op.attributes.get("replica_groups", np.zeros((0, 0), np.int64)))
    rows = [[int(m) for m in row if m >= 0]
            for row in (groups.reshape(len(groups), -1) if groups.size else [])]
    grouped = {m for row in rows for m in row}
    return rows + [[r] for r in range(count) if r not in grouped]


def _int(attribute: Any) -> int:
    return int(getattr(attribute, "value", attribute))


def _run(operands: Sequence[np.ndarray], combine: Combine) -> Any:
    """This replica's result of `combine` over every local replica's `operands`. The
    operands are the replicas' own buffers, read in place (MPI sends from them): every
    replica waits in the rendezvous while `combine` runs, so they stay as they are; a
    result must not be another replica's operand (which changes once it goes on)."""
    context = replicas.context()
    return context.rendezvous.combine(context.replica, [np.asarray(v) for v in operands],
                                      combine)


def _destination(operands: Sequence[np.ndarray], shape: Sequence[int],
                 dtype: Any) -> np.ndarray | None:
    """The buffer this replica's (one) result may be written into in place
    (`reference.destination`), unless it overlaps an operand."""
    buffer = destination(0, shape, dtype)
    if buffer is None or any(np.shares_memory(buffer, v) for v in operands):
        return None
    return buffer


class _LocalGroups:
    """The groups of an op with a member among the local replicas (`given`), in the op's
    order (the same order in every process: their exchanges meet); the op's groups are
    read once per replica count."""

    def __init__(self, op: Op) -> None:
        self.op = op
        self.by_count: dict[int, list[list[int]]] = {}

    def __call__(self, given: dict[int, list[np.ndarray]]) -> list[list[int]]:
        count = replicas.context().rendezvous.count
        groups = self.by_count.get(count)
        if groups is None:
            groups = self.by_count[count] = _groups(self.op, count)
        return [g for g in groups if any(m in given for m in g)]


class _GroupProcesses:
    """The processes holding the members of a replica's group of an op (sorted), per run
    layout (replica count and processes) and replica, worked out once."""

    def __init__(self, op: Op) -> None:
        self.op = op
        self.known: dict[tuple, list[int]] = {}

    def __call__(self, rendezvous: replicas.Rendezvous, replica: int) -> list[int]:
        key = (rendezvous.process_of, replica)
        involved = self.known.get(key)
        if involved is None:
            involved = self.known[key] = group_processes(self.op, rendezvous, replica)
        return involved


def group_processes(op: Op, rendezvous: replicas.Rendezvous, replica: int) -> list[int]:
    """The processes holding the members of `replica`'s group of collective `op` in the run
    of `rendezvous` (sorted)."""
    group = next(g for g in _groups(op, rendezvous.count) if replica in g)
    return sorted({rendezvous.process_of[m] for m in group})


def _processes_of(members: Sequence[int]) -> list[int]:
    process_of = replicas.context().rendezvous.process_of
    return sorted({process_of[m] for m in members})


def _members_values(members: Sequence[int], given: dict[int, list[np.ndarray]]
                    ) -> dict[int, list[np.ndarray]]:
    """Every member's operands: the local ones as given, the others' from their processes
    (one Allgatherv of each process's members' bytes; every member's operands have the same
    types, as every replica runs the same program)."""
    involved = _processes_of(members)
    if len(involved) == 1:
        return {m: given[m] for m in members}
    process_of = replicas.context().rendezvous.process_of
    template = given[next(m for m in members if m in given)]
    sizes = [v.nbytes for v in template]
    per_member = sum(sizes)
    local = [m for m in members if m in given]
    send = (np.concatenate([np.ascontiguousarray(v).reshape(-1).view(np.uint8)
                            for m in local for v in given[m]])
            if per_member else np.zeros(0, np.uint8))
    counts = [per_member * sum(1 for m in members if process_of[m] == p) for p in involved]
    pieces = processes.allgather(send, involved, counts)
    values: dict[int, list[np.ndarray]] = {}
    for p, piece in zip(involved, pieces, strict=True):
        at = 0
        for m in (m for m in members if process_of[m] == p):
            operands = []
            for v, size in zip(template, sizes, strict=True):
                operands.append(piece[at:at + size].view(v.dtype).reshape(v.shape))
                at += size
            values[m] = given[m] if m in given else operands
    return values


def _fold(values: Sequence[list[np.ndarray]], body: RegionFn, each: bool) -> list[np.ndarray]:
    """`values` (each a list of operands) reduced in their order by the op's region."""
    acc = list(values[0])
    for value in values[1:]:
        if each:
            acc = [body([a, x])[0] for a, x in zip(acc, value, strict=True)]
        else:
            acc = body([*acc, *value])
    return acc


def _one_or_all(results: list[np.ndarray]) -> Any:
    return results[0] if len(results) == 1 else results


@register("stablehlo.replica_id", "stablehlo.partition_id")
def _replica_id(op: Op, compiler: Compiler) -> Kernel:
    return lambda: np.asarray(replicas.context().replica, np.uint32)


@register("stablehlo.all_reduce")
def _all_reduce(op: Op, compiler: Compiler) -> Kernel:
    local_groups = _LocalGroups(op)
    group_processes = _GroupProcesses(op)
    body = RegionFn(op.regions[0], compiler)
    dtypes = [t.dtype for t in op.result_types]
    # StableHLO's variadic form: a region of two arguments reduces each operand on its own
    # (the all-reduce combiner's); one of 2N arguments reduces the operands together.
    each = len(op.operands) == 1 or len(op.regions[0].block.args) == 2
    monoid = (monoids.region_monoid(op.regions[0], dtypes[0])
              if each and all(np.dtype(d) in processes.MPI_REDUCIBLE and d == dtypes[0]
                              for d in dtypes) else None)

    def combine(given: dict[int, list[np.ndarray]]) -> dict[int, Any]:
        results: dict[int, Any] = {}
        for members in local_groups(given):
            involved = _processes_of(members)
            if len(involved) > 1 and monoid is not None:
                # Folded in the group's order within the process, then across processes
                # (received in place into the program's buffer of a process's only member).
                local = [m for m in members if m in given]
                partial = _fold([given[m] for m in local], body, each)
                into = (replicas.context().rendezvous.destinations.get(local[0])
                        if len(local) == 1 else None)
                acc = _allreduce_together(partial, dtypes[0], monoid, involved, into)
            else:
                # Folded in the group's order, as XLA CPU's all-reduce does.
                values = _members_values(members, given)
                acc = _fold([values[m] for m in members], body, each)
            out = _one_or_all([np.asarray(a, d) for a, d in zip(acc, dtypes, strict=True)])
            for m in members:
                if m in given:
                    results[m] = out
        return results

    def all_reduce(*operands: np.ndarray) -> Any:
        context = replicas.context()
        rendezvous = context.rendezvous
        into = (_destination(operands, op.result_types[0].shape, dtypes[0])
                if len(operands) == 1 else None)
        if monoid is not None and len(rendezvous.local) == 1 and len(operands) == 1:
            # A process's only replica: its partial result is its operand, combined with
            # the other processes' at once (the same as `combine`, without the meeting).
            involved = group_processes(rendezvous, context.replica)
            if len(involved) > 1:
                return processes.allreduce(np.asarray(operands[0], dtypes[0]), monoid,
                                           involved, out=into)
        # Where this replica's result may be received in place, for `combine` (which runs
        # in whichever local replica's thread comes last).
        rendezvous.destinations[context.replica] = into
        return _run(operands, combine)

    return all_reduce


def _allreduce_together(values: Sequence[np.ndarray], dtype: Any, monoid: str,
                        involved: Sequence[int], into: np.ndarray | None = None
                        ) -> list[np.ndarray]:
    """`values` (of one dtype) each combined over the `involved` processes, in one MPI
    Allreduce of them side by side (a combined all-reduce of a data-parallel gradient's
    parameters is one message); one value may be received into `into`."""
    arrays = [np.asarray(v, dtype) for v in values]
    if len(arrays) == 1:
        return [processes.allreduce(arrays[0], monoid, involved, out=into)]
    combined = processes.allreduce(np.concatenate([a.reshape(-1) for a in arrays]), monoid,
                                   involved)
    out, at = [], 0
    for a in arrays:
        out.append(combined[at:at + a.size].reshape(a.shape))
        at += a.size
    return out


@register("stablehlo.all_gather")
def _all_gather(op: Op, compiler: Compiler) -> Kernel:
    local_groups = _LocalGroups(op)
    dim = _int(op.attributes["all_gather_dim"])

    def combine(given: dict[int, list[np.ndarray]]) -> dict[int, Any]:
        results: dict[int, Any] = {}
        for members in local_groups(given):
            values = _members_values(members, given)
            count = len(values[members[0]])
            out = _one_or_all([np.concatenate([values[m][k] for m in members], axis=dim)
                               for k in range(count)])
            for m in members:
                if m in given:
                    results[m] = out
        return results

    return lambda *operands: _run(operands, combine)


@register("stablehlo.reduce_scatter")
def _reduce_scatter(op: Op, compiler: Compiler) -> Kernel:
    local_groups = _LocalGroups(op)
    body = RegionFn(op.regions[0], compiler)
    dim = _int(op.attributes["scatter_dimension"])
    dtype = op.result.type.dtype
    monoid = (monoids.region_monoid(op.regions[0], dtype)
              if np.dtype(dtype) in processes.MPI_REDUCIBLE else None)

    def combine(given: dict[int, list[np.ndarray]]) -> dict[int, Any]:
        results: dict[int, Any] = {}
        for members in local_groups(given):
            involved = _processes_of(members)
            local = [m for m in members if m in given]
            if len(involved) > 1 and monoid is not None and _by_process(members):
                # Each process's members' pieces lie together in the group's order: MPI's
                # Reduce_scatter leaves each process the sum of its pieces only.
                partial = np.asarray(_fold([given[m] for m in local], body, True)[0], dtype)
                results.update(zip(local, _reduce_scatter_pieces(
                    partial, dim, members, involved, monoid)))
                continue
            if len(involved) > 1 and monoid is not None:
                partial = _fold([given[m] for m in local], body, True)[0]
                acc = processes.allreduce(np.asarray(partial, dtype), monoid, involved)
            else:
                values = _members_values(members, given)
                acc = _fold([values[m] for m in members], body, True)[0]
            pieces = np.split(np.asarray(acc, dtype), len(members), axis=dim)
            for position, m in enumerate(members):
                if m in given:
                    results[m] = np.ascontiguousarray(pieces[position])
        return results

    return lambda operand: _run([operand], combine)


def _by_process(members: Sequence[int]) -> bool:
    """Whether each process's members come together in the group's order (processes in
    increasing order)."""
    process_of = replicas.context().rendezvous.process_of
    owners = [process_of[m] for m in members]
    return owners == sorted(owners)


def _reduce_scatter_pieces(partial: np.ndarray, dim: int, members: Sequence[int],
                           involved: Sequence[int], monoid: str) -> list[np.ndarray]:
    """This process's members' pieces (along `dim`, in the group's order) of the sum over
    the processes of their `partial`s."""
    process_of = replicas.context().rendezvous.process_of
    moved = np.ascontiguousarray(np.moveaxis(partial, dim, 0))
    piece_shape = (moved.shape[0] // len(members),) + moved.shape[1:]
    piece_size = math.prod(piece_shape)
    counts = [piece_size * sum(1 for m in members if process_of[m] == p) for p in involved]
    mine = processes.reduce_scatter(moved.reshape(-1), monoid, involved, counts)
    pieces = mine.reshape((-1,) + piece_shape[1:])
    return [np.ascontiguousarray(np.moveaxis(piece, 0, dim))
            for piece in np.split(pieces, len(mine) // piece_size)]


@register("stablehlo.all_to_all")
def _all_to_all(op: Op, compiler: Compiler) -> Kernel:
    local_groups = _LocalGroups(op)
    split_dim = _int(op.attributes["split_dimension"])
    concat_dim = _int(op.attributes["concat_dimension"])

    def combine(given: dict[int, list[np.ndarray]]) -> dict[int, Any]:
        process_of = replicas.context().rendezvous.process_of
        results: dict[int, Any] = {}
        for members in local_groups(given):
            n = len(members)
            count = len(given[next(m for m in members if m in given)])
            # piece[(source position, target position, operand)]: each local source's
            # pieces; the others' pieces for local targets come from their processes.
            pieces: dict[tuple[int, int, int], np.ndarray] = {}
            sends, receives = [], []
            for i, source in enumerate(members):
                for k in range(count):
                    if source in given:
                        parts = np.split(given[source][k], n, axis=split_dim)
                        for j, target in enumerate(members):
                            if target in given:
                                pieces[i, j, k] = parts[j]
                            else:
                                sends.append((process_of[target], (i * n + j) * count + k,
                                              parts[j]))
                    else:
                        for j, target in enumerate(members):
                            if target in given:
                                shape = _split_shape(op.operands[k].type.shape, n,
                                                     split_dim)
                                piece = np.empty(shape, op.result_types[k].dtype)
                                pieces[i, j, k] = piece
                                receives.append((process_of[source],
                                                 (i * n + j) * count + k, piece))
            if sends or receives:
                processes.exchange(sends, receives)
            for j, target in enumerate(members):
                if target in given:
                    results[target] = _one_or_all([
                        np.concatenate([pieces[i, j, k] for i in range(n)], axis=concat_dim)
                        for k in range(count)])
        return results

    return lambda *operands: _run(operands, combine)


def _split_shape(shape: Sequence[int], parts: int, dim: int) -> tuple[int, ...]:
    out = list(shape)
    out[dim] //= parts
    return tuple(out)


@register("stablehlo.collective_permute")
def _collective_permute(op: Op, compiler: Compiler) -> Kernel:
    pairs = [(int(s), int(t)) for s, t in
             np.asarray(op.attributes["source_target_pairs"]).reshape(-1, 2)]
    source_of = {target: source for source, target in pairs}

    def combine(given: dict[int, list[np.ndarray]]) -> dict[int, Any]:
        process_of = replicas.context().rendezvous.process_of
        template = next(iter(given.values()))[0]
        # A replica no pair sends to gets zeros (XLA's semantics).
        results: dict[int, Any] = {m: np.zeros_like(template) for m in given}
        sends, receives = [], []
        for source, target in pairs:
            if source in given and target in given:
                results[target] = given[source][0].copy()
            elif source in given:
                sends.append((process_of[target], target, given[source][0]))
            elif target in given:
                results[target] = np.empty_like(template)
                receives.append((process_of[source], target, results[target]))
        if sends or receives:
            processes.exchange(sends, receives)
        return results

    return lambda operand: _run([operand], combine)
