"""Indexing ops in the elemental emitter: `stablehlo.dynamic_slice` and `stablehlo.gather` as
element generators, `stablehlo.dynamic_update_slice` and `stablehlo.scatter` as root emitters
(a dynamic_update_slice that feeds other fused ops is an element generator too).

Semantics are the reference backend's (XLA CPU's): dynamic_slice, dynamic_update_slice and
gather clamp each start index so that the whole window is in bounds; scatter drops every
update window that is not entirely in bounds and applies the others one update element at a
time in row-major order of the updates, its update computation emitted as scalar code.

A root emitter first copies the operand into the result (skipped at run time when both are the
same buffer: the result computed in place) and then loops over the update window only.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen.emitter import (
    _I1, _I8, _I64, _STRUCTURAL, ROOT_EMITTERS, Unsupported, _Emitter, emit_region)
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op, Value

__all__: list[str] = []


# -- index values ------------------------------------------------------------------------------

def _dtype(value: Value) -> np.dtype:
    t = value.type
    assert isinstance(t, hlo.TensorType)
    return t.dtype


def _to_i64(em: _Emitter, x: ir.Value, dt: np.dtype) -> ir.Value:
    """An integer element as i64: sign-extended for signed dtypes, else zero-extended
    (a uint64 above the int64 range becomes negative)."""
    width = x.type.width
    if width == 64:
        return x
    if dt.kind == "i":
        return em.b.sext(x, _I64)
    return em.b.zext(x, _I64)


def _clamp(em: _Emitter, i: ir.Value, upper: int, unsigned: bool = False) -> ir.Value:
    """`i` clamped into [0, upper]; `unsigned`: `i` compared as an unsigned 64-bit value."""
    hi = ir.Constant(_I64, max(upper, 0))
    if unsigned:
        return em.b.select(em.b.icmp_unsigned(">", i, hi), hi, i)
    lo = em.b.select(em.b.icmp_signed("<", i, ir.Constant(_I64, 0)), ir.Constant(_I64, 0), i)
    return em.b.select(em.b.icmp_signed(">", lo, hi), hi, lo)


def _window_start(em: _Emitter, start: Value, upper: int) -> ir.Value:
    """A dynamic_slice/dynamic_update_slice start (a 0-d operand) clamped into
    [0, upper] (as the reference backend's `int(start)`: unsigned values stay unsigned)."""
    dt = _dtype(start)
    s = _to_i64(em, em.gen(start, []), dt)
    return _clamp(em, s, upper, unsigned=dt.kind == "u" and dt.itemsize == 8)


def _starts(em: _Emitter, starts: Sequence[Value], shape: Sequence[int],
            sizes: Sequence[int]) -> list[ir.Value]:
    return [_window_start(em, s, dim - size)
            for s, dim, size in zip(starts, shape, sizes, strict=True)]


# -- dynamic_slice, dynamic_update_slice (elements) ----------------------------------------

def _dynamic_slice(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    """`stablehlo.dynamic_slice` at `idx`: the operand at the clamped start plus `idx`."""
    operand, *starts = op.operands
    starts_i = _starts(em, starts, operand.type.shape, op.attributes["slice_sizes"])
    return em.gen(operand, [em.b.add(s, i) for s, i in zip(starts_i, idx, strict=True)])


def _dynamic_update_slice(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    """`stablehlo.dynamic_update_slice` at `idx`: the update inside the clamped window, the
    operand elsewhere (both read, the update at an index clamped into its shape, and one
    selected: branch-free)."""
    operand, update, *starts = op.operands
    shape, usizes = operand.type.shape, update.type.shape
    if update.type.size == 0:
        return em.gen(operand, idx)
    inside: ir.Value = ir.Constant(_I1, 1)
    sub = []
    for i, start, size in zip(idx, _starts(em, starts, shape, usizes), usizes, strict=True):
        rel = em.b.sub(i, start)
        inside = em.b.and_(inside, em.b.icmp_unsigned("<", rel, ir.Constant(_I64, size)))
        sub.append(_clamp(em, rel, size - 1))
    return em.select(inside, em.gen(update, sub), em.gen(operand, idx))


# -- gather --------------------------------------------------------------------------------

def _gather(em: _Emitter, op: Op, idx: list[ir.Value]) -> ir.Value:
    """`stablehlo.gather` at `idx` with the full GatherDimensionNumbers: the output's batch
    dims index the start indices (whose vector is at `index_vector_dim`), each start is
    clamped so the slice is in bounds, operand batching dims follow their index batch dims,
    and the offset dims add the position inside the slice."""
    operand, indices = op.operands
    dn: hlo.GatherDimensionNumbers = op.attributes["dimension_numbers"]
    sizes = op.attributes["slice_sizes"]
    shape = operand.type.shape
    idx_rank, ivd = indices.type.rank, dn.index_vector_dim
    batch_out = [d for d in range(len(idx)) if d not in dn.offset_dims]
    idx_batch = [d for d in range(idx_rank) if d != ivd]
    out_dim_of = dict(zip(idx_batch, batch_out, strict=True))
    batch_index = [idx[d] for d in batch_out]
    coords: list[ir.Value] = [ir.Constant(_I64, 0)] * len(shape)
    for k, d in enumerate(dn.start_index_map):
        full = list(batch_index)
        if ivd < idx_rank:
            full.insert(ivd, ir.Constant(_I64, k))
        # As the reference: starts as int64 (a uint64 above its range is negative), clamped.
        start = _to_i64(em, em.gen(indices, full), _dtype(indices))
        coords[d] = _clamp(em, start, shape[d] - sizes[d])
    for operand_dim, index_dim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims,
                                      strict=True):
        coords[operand_dim] = idx[out_dim_of[index_dim]]
    window = [d for d in range(len(shape))
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    for d, out_dim in zip(window, dn.offset_dims, strict=True):
        coords[d] = em.b.add(coords[d], idx[out_dim])
    return em.gen(operand, coords)


# -- loops, copies, aliasing ----------------------------------------------------------------

def _loop(em: _Emitter, count: int, body: Callable[[ir.Value], None]) -> None:
    """Emits `for j in range(count): body(j)` at the emitter's builder. Generated elements are
    forgotten before and after: values inside the loop do not dominate code after it."""
    if count == 0:
        return
    b = em.b
    pre = b.block
    loop, after = em.fn.append_basic_block("loop"), em.fn.append_basic_block("after")
    b.branch(loop)
    b.position_at_end(loop)
    j = b.phi(_I64)
    j.add_incoming(ir.Constant(_I64, 0), pre)
    em.cache.clear()
    body(j)
    nxt = b.add(j, ir.Constant(_I64, 1), flags=["nsw", "nuw"])
    j.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(_I64, count)), loop, after)
    b.position_at_end(after)
    em.cache.clear()


def _copy_into(em: _Emitter, value: Value, out: ir.Value) -> None:
    """Writes every element of `value` into `out`: a memcpy from a fusion parameter (none
    when it is `out` itself: computed in place), else a loop over its elements."""
    t = value.type
    assert isinstance(t, hlo.TensorType)
    if t.size == 0:
        return
    src = em.params.get(value)
    if src is None:
        _loop(em, t.size, lambda j: em.store(em.gen(value, em.delinear(j, t.shape)), out, j,
                                             t.dtype))
        return
    b = em.b
    ptr = _I8.as_pointer()
    dst8, src8 = b.bitcast(out, ptr), b.bitcast(src, ptr)
    with b.if_then(b.icmp_unsigned("!=", dst8, src8)):
        memcpy = em.module.declare_intrinsic("llvm.memcpy", [ptr, ptr, _I64])
        nbytes = t.size * np.dtype(t.dtype).itemsize
        b.call(memcpy, [dst8, src8, ir.Constant(_I64, nbytes), ir.Constant(_I1, 0)])


def _aliased_params(em: _Emitter) -> set[Value]:
    """The fusion parameters whose buffer may be a result's (written while it runs)."""
    return {arg for i, arg in enumerate(em.params) if i in em.shared}


def _reads(em: _Emitter, values: Sequence[Value], params: set[Value]) -> bool:
    """Whether computing `values` reads any of `params`."""
    seen: set[Value] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in params:
            return True
        op = em.defining.get(v)
        if op is not None:
            stack.extend(op.operands)
    return False


def _check_in_place(em: _Emitter, operands: Sequence[Value]) -> None:
    """Raises `Unsupported` when a result may share a buffer with a parameter that the
    window loop reads (`operands`: the values it reads) while it writes the result (the
    reference backend, working on copies, runs it instead)."""
    aliased = _aliased_params(em)
    if aliased and _reads(em, operands, aliased):
        raise Unsupported("llvm emitter: an in-place update reads its own result buffer")


# -- dynamic_update_slice (root) ---------------------------------------------------------------

def _dynamic_update_slice_root(em: _Emitter, op: Op, root: Value, out: ir.Value) -> bool:
    """The result of a root `stablehlo.dynamic_update_slice`: the operand copied (unless in
    place), then a loop over the update window only."""
    operand, update, *starts = op.operands
    t, ut = root.type, update.type
    if ut.size == 0 or t.size == 0:
        return False
    _check_in_place(em, [update])
    # The starts are read before the copy may overwrite what they are computed from.
    starts_i = _starts(em, starts, t.shape, ut.shape)
    _copy_into(em, operand, out)

    def body(j: ir.Value) -> None:
        uidx = em.delinear(j, ut.shape)
        target = [em.b.add(s, i) for s, i in zip(starts_i, uidx, strict=True)]
        em.store(em.gen(update, uidx), out, em.linear(target, t.shape), t.dtype)

    _loop(em, ut.size, body)
    return True


# -- scatter (root) ----------------------------------------------------------------------------

def _scatter_target(em: _Emitter, op: Op, uidx: list[ir.Value]
                    ) -> tuple[ir.Value, list[ir.Value]]:
    """For update element `uidx`: whether its window is in bounds, and its operand index."""
    count = len(op.results)
    indices, updates = op.operands[count], op.operands[count + 1]
    dn: hlo.ScatterDimensionNumbers = op.attributes["scatter_dimension_numbers"]
    shape = op.operands[0].type.shape
    ushape = updates.type.shape
    idx_rank, ivd = indices.type.rank, dn.index_vector_dim
    scatter_dims = [d for d in range(len(ushape)) if d not in dn.update_window_dims]
    idx_batch = [d for d in range(idx_rank) if d != ivd]
    update_dim_of = dict(zip(idx_batch, scatter_dims, strict=True))
    batch_index = [uidx[d] for d in scatter_dims]
    window = [d for d in range(len(shape))
              if d not in dn.inserted_window_dims and d not in dn.input_batching_dims]
    window_axis = dict(zip(window, dn.update_window_dims, strict=True))
    coords: list[ir.Value] = [ir.Constant(_I64, 0)] * len(shape)
    ok: ir.Value = ir.Constant(_I1, 1)
    for k, d in enumerate(dn.scatter_dims_to_operand_dims):
        full = list(batch_index)
        if ivd < idx_rank:
            full.insert(ivd, ir.Constant(_I64, k))
        start = _to_i64(em, em.gen(indices, full), _dtype(indices))
        size = ushape[window_axis[d]] if d in window_axis else 1
        # Unsigned: a negative i64 (uint64 above the int64 range) is out of bounds too.
        ok = em.b.and_(ok, em.b.icmp_unsigned("<=", start, ir.Constant(_I64, shape[d] - size))
                       if shape[d] >= size else ir.Constant(_I1, 0))
        coords[d] = start
    for operand_dim, index_dim in zip(dn.input_batching_dims, dn.scatter_indices_batching_dims,
                                      strict=True):
        coords[operand_dim] = uidx[update_dim_of[index_dim]]
    for d, axis in window_axis.items():
        coords[d] = em.b.add(coords[d], uidx[axis])
    return ok, coords


def _scatter_root(em: _Emitter, op: Op, root: Value, out: ir.Value) -> bool:
    """The results of a root `stablehlo.scatter`: the inputs copied (unless in place), then
    one step per update element in row-major order: if its window is in bounds, the update
    computation (scalar code) combines the current values with the updates."""
    count = len(op.results)
    inputs, updates = op.operands[:count], op.operands[count + 1:]
    outs = [em.outputs.get(r) for r in op.results]
    if any(o is None for o in outs):
        raise Unsupported("llvm emitter: a scatter result read inside its fusion")
    ut = updates[0].type
    _check_in_place(em, op.operands[count:])
    for value, ptr in zip(inputs, outs, strict=True):
        _copy_into(em, value, ptr)
    em.done.update(op.results)
    shape = inputs[0].type.shape
    block = op.regions[0].block

    def body(j: ir.Value) -> None:
        uidx = em.delinear(j, ut.shape)
        ok, coords = _scatter_target(em, op, uidx)
        with em.b.if_then(ok):
            offset = em.linear(coords, shape)
            dts = [_dtype(v) for v in inputs]
            current = [em.load(p, offset, dt) for p, dt in zip(outs, dts, strict=True)]
            new = [em.gen(u, uidx) for u in updates]
            results = emit_region(em.module, em.fn, em.b, block, [*current, *new])
            for x, p, dt in zip(results, outs, dts, strict=True):
                em.store(x, p, offset, dt)

    _loop(em, ut.size, body)
    return True


_STRUCTURAL.update({
    "stablehlo.dynamic_slice": _dynamic_slice,
    "stablehlo.dynamic_update_slice": _dynamic_update_slice,
    "stablehlo.gather": _gather,
})
ROOT_EMITTERS.update({
    "stablehlo.dynamic_update_slice": _dynamic_update_slice_root,
    "stablehlo.scatter": _scatter_root,
})
