"""Native kernels of windowed reductions: `stablehlo.reduce_window` (the cumulative reductions
among them), `stablehlo.select_and_scatter`, and `stablehlo.reduce` left outside fusions (a
variadic reduce such as argmax/argmin, which fusion leaves alone).

Semantics are the reference backend's (`backends/reference/kernels/reductions.py`):

- `reduce_window`: each window folds its real elements in row-major tap order from the initial
  value; padding and base-dilation holes are skipped (XLA CPU's way; for a monoid starting from
  its identity that equals combining the identity). Windows that are the prefixes (suffixes)
  along one axis -- JAX's lowering of cumsum/cumprod/cummax/cummin/cumlogsumexp -- run as a
  linear scan instead, vectorized over the dimensions after the axis. A prefix scan equals the
  windowed fold for any region; a suffix scan from the end is the reference's result only for
  a monoid starting from its identity (which it tests at run time), other suffix windows fold
  one by one.
- `select_and_scatter`: per window, the `select` region picks among the real (not padding)
  elements in row-major order (a later one replaces the current pick when `select(pick, x)` is
  false), and `scatter` folds the source value into the picked element of the result, which
  starts as the initial value everywhere. Windows are visited in reverse row-major order: an
  element then receives its contributions in the reference's order (by increasing tap).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import program, reductions
from justjax._src.backends.llvm.codegen.emitter import (Unsupported, _Emitter, compute_type,
                                                        scalar_emitter)
from justjax._src.backends.llvm.codegen.reductions import (Compensated, apply_body, combine,
                                                           entry_alloca, exact_mode, fill,
                                                           is_identity, loop, monoid,
                                                           monoid_start, tile_size, versioned)
from justjax._src.core import dtypes
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op
from justjax._src.numerics.windows import cumulative_axis, window_attributes

__all__: list[str] = []

_I1, _I64 = ir.IntType(1), ir.IntType(64)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(dtypes.float16),
           np.dtype(dtypes.bfloat16))


def _i64(n: int) -> ir.Constant:
    return ir.Constant(_I64, n)


@dataclass(frozen=True)
class _Window:
    """The window attributes of a reduce_window / select_and_scatter, spelled out per dim."""

    size: tuple[int, ...]
    strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    base: tuple[int, ...]
    dilation: tuple[int, ...]


def _window(op: Op, rank: int) -> _Window:
    w = window_attributes(op, rank)
    return _Window(w["window_dimensions"], w["window_strides"], w["padding"],
                   w["base_dilation"], w["window_dilation"])


def _check(ctx: program.KernelContext) -> None:
    """Raises `Unsupported` for what these kernels do not do: results sharing memory with
    operands (every result element reads many operand elements), regions reading values from
    outside (StableHLO allows it; the regions are emitted as scalar code of their arguments)."""
    for ptr in ctx.results:
        if "noalias" not in ptr.attributes:
            raise Unsupported(f"{ctx.op.opcode}: a result shares memory with an operand")
    for region in ctx.op.regions:
        defined = set(region.block.args)
        for inner in region.block.walk():
            if inner.regions or any(v not in defined for v in inner.operands):
                raise Unsupported(f"{ctx.op.opcode}: a region reads values from outside")
            defined.update(inner.results)


def _offset(em: _Emitter, index: Sequence[ir.Value], shape: Sequence[int]) -> ir.Value:
    return em.linear(list(index), list(shape))


# ---------------------------------------------------------------------------------------------
# Window taps.

# Visits one real window element, given its operand index.
_Visit = Callable[[list[ir.Value]], None]


def _taps(em: _Emitter, w: _Window, shape: Sequence[int], out_index: Sequence[ir.Value],
          visit: _Visit, dim: int = 0, valid: ir.Value | None = None,
          at: tuple[ir.Value, ...] = ()) -> None:
    """Loops over the taps of the window at `out_index` (row-major), calling `visit(index,
    tap)` on the real operand elements (padding and base-dilation holes skipped)."""
    b = em.b
    if dim == len(shape):
        with b.if_then(valid if valid is not None else ir.Constant(_I1, 1)):
            visit(list(at))
        return
    lo = w.padding[dim][0]
    extent = (shape[dim] - 1) * w.base[dim] + 1 if shape[dim] else 0

    def inner(t: ir.Value) -> None:
        # Position in the padded, base-dilated operand.
        p = b.sub(b.add(b.mul(out_index[dim], _i64(w.strides[dim])),
                        b.mul(t, _i64(w.dilation[dim]))), _i64(lo))
        ok = b.and_(b.icmp_signed(">=", p, _i64(0)), b.icmp_signed("<", p, _i64(extent)))
        if w.base[dim] > 1:
            ok = b.and_(ok, b.icmp_signed("==", b.srem(p, _i64(w.base[dim])), _i64(0)))
            p = b.sdiv(p, _i64(w.base[dim]))
        both = ok if valid is None else b.and_(valid, ok)
        _taps(em, w, shape, out_index, visit, dim + 1, both, (*at, p))

    if w.size[dim] == 1:
        inner(_i64(0))
    else:
        with loop(em, w.size[dim], f"tap{dim}") as t:
            inner(t)


class _Fold:
    """Folds the operands' elements into the accumulator slots: one element per slot, or
    with `lanes` (first, count) a run of `count` consecutive elements of the minor dimension
    into as many slots (the visited index then leaves the minor dimension out)."""

    def __init__(self, em: _Emitter, ptrs: Sequence[ir.Value], op: Op, slots: list[ir.Value],
                 kind: str | None, exact: bool,
                 lanes: tuple[ir.Value, ir.Value] | None = None,
                 errors: ir.Value | None = None) -> None:
        self.em, self.ptrs, self.op, self.slots = em, ptrs, op, slots
        self.kind, self.exact, self.lanes, self.errors = kind, exact, lanes, errors

    def __call__(self, index: list[ir.Value]) -> None:
        em, b = self.em, self.em.b
        shape = self.op.operands[0].type.shape
        if self.lanes is None:
            self.step(_offset(em, index, shape), self.slots, self.errors)
            return
        first, count = self.lanes
        base = _offset(em, [*index, first], shape)
        with loop(em, count, "lanes") as k:
            errors = None if self.errors is None else b.gep(self.errors, [k], inbounds=True)
            self.step(b.add(base, k), [b.gep(s, [k], inbounds=True) for s in self.slots],
                      errors)

    def step(self, at: ir.Value, slots: list[ir.Value], errors: ir.Value | None) -> None:
        em, b = self.em, self.em.b
        types = [v.type for v in self.op.operands[:len(self.op.results)]]
        xs = [em.load(p, at, t.dtype) for p, t in zip(self.ptrs, types, strict=True)]
        if errors is not None:
            assert self.kind is not None
            Compensated(em, self.kind, types[0].dtype, slots[0], errors).fold(_i64(0), xs[0])
            return
        accs = [b.load(s) for s in slots]
        if self.kind is not None:
            new = [combine(em, self.kind, types[0].dtype, accs[0], xs[0], self.exact)]
        else:
            new = apply_body(em, self.op.regions[0].block, [*accs, *xs])
        for s, n in zip(slots, new, strict=True):
            b.store(n, s)


# Windows with more taps than this sum compensated (`Compensated`): as accurate as XLA's,
# whose long cumulative windows and reductions sum pairwise.
_LONG_WINDOW = 16


def _compensated(kind: str | None, dtype: np.dtype, exact: bool | ir.Value) -> bool:
    """Whether a fold of `kind` over `dtype` sums compensated: a float sum, when exact (from
    its identity for float16/bfloat16, which accumulate in float32)."""
    return (exact is True and kind == "stablehlo.add"
            and np.dtype(dtype) in _FLOATS)


def _errors(em: _Emitter, ty: ir.Type, count: int = 1) -> ir.Value:
    """A stack array of `count` rounding errors."""
    return entry_alloca(em, ty, count)


def _result(em: _Emitter, kind: str, dtype: np.dtype, sums: ir.Value,
            errors: ir.Value | None, k: ir.Value) -> ir.Value:
    """Lane `k` of `sums`, plus its error when compensated."""
    if errors is None:
        return em.b.load(em.b.gep(sums, [k], inbounds=True))
    return Compensated(em, kind, dtype, sums, errors).result(k)


# ---------------------------------------------------------------------------------------------
# stablehlo.reduce_window

@program.register("stablehlo.reduce_window")
def _reduce_window(ctx: program.KernelContext) -> None:
    """`stablehlo.reduce_window` (variadic, any window, strides, padding, base and window
    dilation): a loop over the output elements folding each window, or a scan for the
    cumulative windows."""
    op = ctx.op
    _check(ctx)
    count = len(op.results)
    out_shape = op.results[0].type.shape
    if math.prod(out_shape) == 0:
        return
    em = scalar_emitter(ctx.module, ctx.fn, ctx.builder, hlo.Block([], [op]))
    shape = op.operands[0].type.shape
    w = _window(op, len(shape))
    dtype = op.operands[0].type.dtype
    kind = monoid(op.regions[0].block, dtype) if count == 1 else None
    inits = [em.load(p, _i64(0), v.type.dtype)
             for p, v in zip(ctx.operands[count:], op.operands[count:], strict=True)]
    exact = exact_mode(em, kind, dtype, inits[0])
    if _compensated(kind, dtype, exact) and math.prod(w.size) > _LONG_WINDOW:
        # Compensated from the identity only; another initial value folds in order, as the
        # reference does.
        assert kind is not None
        exact = is_identity(em, kind, dtype, inits[0])
    folds = _windows_minor if _passes_minor(w, shape) else _windows
    cumulative = (cumulative_axis(shape, w.size, w.strides, w.padding, w.base, w.dilation)
                  if math.prod(shape) else None)
    if cumulative is not None and not cumulative[1]:
        # A prefix fold from the initial value is a running fold, for any region.
        starts = [monoid_start(em, kind, dtype, inits[0]), *inits[1:]]
        versioned(em, exact, lambda e: _scan(em, ctx, starts, kind, cumulative[0], False, e))
        return
    if cumulative is not None and kind is not None:
        with em.b.if_else(is_identity(em, kind, dtype, inits[0])) as (then, other):
            with then:
                starts = [monoid_start(em, kind, dtype, inits[0])]
                _scan(em, ctx, starts, kind, cumulative[0], True, True)
            with other:
                versioned(em, exact, lambda e: folds(em, ctx, inits, kind, w, e))
        return
    versioned(em, exact, lambda e: folds(em, ctx, inits, kind, w, e))


def _windows(em: _Emitter, ctx: program.KernelContext, inits: list[ir.Value],
             kind: str | None, w: _Window, exact: bool) -> list[ir.Value]:
    """Every output element: its window folded from the initial values."""
    op, b = ctx.op, em.b
    count = len(op.results)
    out_shape = op.results[0].type.shape
    slots = [entry_alloca(em, s.type) for s in inits]
    dtype = op.operands[0].type.dtype
    errors = (_errors(em, inits[0].type) if _compensated(kind, dtype, exact)
              and math.prod(w.size) > _LONG_WINDOW else None)
    fold = _Fold(em, ctx.operands[:count], op, slots, kind, exact, errors=errors)
    with loop(em, math.prod(out_shape), "window") as i:
        out_index = em.delinear(i, out_shape)
        for s, init in zip(slots, inits, strict=True):
            b.store(init, s)
        if errors is not None:
            b.store(ir.Constant(inits[0].type, 0.0), errors)
        _taps(em, w, op.operands[0].type.shape, out_index, fold)
        if errors is not None:
            assert kind is not None
            b.store(_result(em, kind, dtype, slots[0], errors, _i64(0)), slots[0])
        for s, ptr, res in zip(slots, ctx.results, op.results, strict=True):
            em.store(b.load(s), ptr, i, res.type.dtype)
    return []


def _passes_minor(w: _Window, shape: Sequence[int]) -> bool:
    """Whether the minor dimension passes through (window 1, stride 1, no padding or
    dilation): the windows of consecutive minor elements are then folded side by side."""
    if len(shape) < 2 or shape[-1] < 2:
        return False
    return (w.size[-1], w.strides[-1], w.padding[-1], w.base[-1], w.dilation[-1]) == (
        1, 1, (0, 0), 1, 1)


def _windows_minor(em: _Emitter, ctx: program.KernelContext, inits: list[ir.Value],
                   kind: str | None, w: _Window, exact: bool) -> list[ir.Value]:
    """`_windows` when the minor dimension passes through (NHWC pooling): per output index
    of the other dimensions and tile of the minor one, each tap folds a run of consecutive
    elements into a tile of accumulators (the inner, vectorizable loop)."""
    op, b = ctx.op, em.b
    count = len(op.results)
    out_shape = op.results[0].type.shape
    shape = op.operands[0].type.shape
    minor = shape[-1]
    tile = min(minor, tile_size(s.type for s in inits))
    slots = [entry_alloca(em, s.type, tile) for s in inits]
    dtype = op.operands[0].type.dtype
    errors = (_errors(em, inits[0].type, tile) if _compensated(kind, dtype, exact)
              and math.prod(w.size) > _LONG_WINDOW else None)
    prefix = _Window(w.size[:-1], w.strides[:-1], w.padding[:-1], w.base[:-1], w.dilation[:-1])
    with loop(em, math.prod(out_shape[:-1]), "window") as i, \
            loop(em, -(-minor // tile), "tile") as t:
        out_index = em.delinear(i, out_shape[:-1])
        first = b.mul(t, _i64(tile))
        count_ = _i64(tile)
        if minor % tile:
            rest = b.sub(_i64(minor), first)
            count_ = b.select(b.icmp_signed("<", rest, count_), rest, count_)
        with loop(em, count_, "init") as k:
            for s, init in zip(slots, inits, strict=True):
                b.store(init, b.gep(s, [k], inbounds=True))
        if errors is not None:
            fill(em, errors, count_, ir.Constant(inits[0].type, 0.0))
        fold = _Fold(em, ctx.operands[:count], op, slots, kind, exact, (first, count_), errors)
        _taps(em, prefix, shape[:-1], out_index, fold)
        with loop(em, count_, "store") as k:
            at = b.add(b.add(b.mul(i, _i64(minor)), first), k)
            for n, (s, ptr, res) in enumerate(zip(slots, ctx.results, op.results,
                                                  strict=True)):
                value = (_result(em, kind, dtype, s, errors, k) if n == 0 and kind is not None
                         else b.load(b.gep(s, [k], inbounds=True)))
                em.store(value, ptr, at, res.type.dtype)
    return []


def _scan(em: _Emitter, ctx: program.KernelContext, starts: list[ir.Value], kind: str | None,
          axis: int, reverse: bool, exact: bool) -> list[ir.Value]:
    """The running fold along `axis` (from its end when `reverse`), for a tile of the elements
    after the axis at a time (the inner, vectorizable loop)."""
    op, b = ctx.op, em.b
    count = len(op.results)
    shape = op.operands[0].type.shape
    outer, n, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    tile = min(inner, tile_size(s.type for s in starts))
    tiles = -(-inner // tile)
    slots = [entry_alloca(em, s.type, tile) for s in starts]
    dtypes_in = [v.type.dtype for v in op.operands[:count]]
    # A long running sum is compensated (`_compensated_scan`): each output is within about an
    # ulp of the exact prefix sum (XLA sums cumulative windows as a tree, about log2(n)/2
    # ulps).
    errors = None
    if _compensated(kind, dtypes_in[0], exact) and n > _LONG_WINDOW:
        # The running sums and their bases of a quarter tile fit in registers.
        tile = min(inner, max(1, tile_size(s.type for s in starts) // SCAN_TILE_DIVISOR))
        tiles = -(-inner // tile)
        errors = _errors(em, starts[0].type, tile)
    with loop(em, outer, "outer") as o, loop(em, tiles, "tile") as t:
        first = b.mul(t, _i64(tile))
        length: ir.Value = _i64(tile)
        if inner % tile:
            rest = b.sub(_i64(inner), first)
            length = b.select(b.icmp_signed("<", rest, length), rest, length)
        if errors is not None:
            assert kind is not None
            _compensated_scan(em, ctx, kind, starts[0], (o, first, length), n, inner,
                              reverse, slots[0], errors, tile)
        else:
            _plain_scan(em, ctx, kind, exact, starts, (o, first, length), n, inner, reverse,
                        slots)
    return []


# Steps of a compensated running sum between two compensated additions.
SCAN_BLOCK = 32
SCAN_TILE_DIVISOR = 4


def _plain_scan(em: _Emitter, ctx: program.KernelContext, kind: str | None, exact: bool,
                starts: list[ir.Value], where: tuple[ir.Value, ir.Value, ir.Value], n: int,
                inner: int, reverse: bool, slots: list[ir.Value]) -> None:
    """The running fold of one tile (`where`: outer index, first lane, lanes): step by step."""
    b = em.b
    o, first, length = where
    count = len(ctx.op.results)
    with loop(em, length, "init") as k:
        for slot, s in zip(slots, starts, strict=True):
            b.store(s, b.gep(slot, [k], inbounds=True))
    with loop(em, n, "scan") as step:
        i = b.sub(_i64(n - 1), step) if reverse else step
        row = b.add(b.mul(b.add(b.mul(o, _i64(n)), i), _i64(inner)), first)
        with loop(em, length, "lanes") as k:
            at = b.add(row, k)
            xs = [em.load(p, at, v.type.dtype)
                  for p, v in zip(ctx.operands[:count], ctx.op.operands[:count], strict=True)]
            _scan_step(em, ctx, kind, exact, slots, k, at, xs)


def _compensated_scan(em: _Emitter, ctx: program.KernelContext, kind: str, start: ir.Value,
                      where: tuple[ir.Value, ir.Value, ir.Value], n: int, inner: int,
                      reverse: bool, local: ir.Value, errors: ir.Value, tile: int) -> None:
    """The running sum of one tile, blocked: within a block of `SCAN_BLOCK` steps a plain
    running sum from zero (`local`), each output that plus the compensated sum of the blocks
    before (`Compensated`, rounded once per block), so each costs two additions."""
    b = em.b
    o, first, length = where
    ty = start.type
    dtype = ctx.op.operands[0].type.dtype
    sums, base = entry_alloca(em, ty, tile), entry_alloca(em, ty, tile)
    comp = Compensated(em, kind, dtype, sums, errors)
    comp.reset(length)
    with loop(em, length, "start") as k:
        b.store(start, b.gep(sums, [k], inbounds=True))
        b.store(start, b.gep(base, [k], inbounds=True))
    zero = ir.Constant(ty, 0.0)

    def block(first_step: ir.Value, steps: int) -> None:
        fill(em, local, length, zero)
        with loop(em, steps, "scan") as st:
            step = b.add(first_step, st)
            i = b.sub(_i64(n - 1), step) if reverse else step
            row = b.add(b.mul(b.add(b.mul(o, _i64(n)), i), _i64(inner)), first)
            with loop(em, length, "lanes") as k:
                at = b.add(row, k)
                x = em.load(ctx.operands[0], at, dtype)
                slot = b.gep(local, [k], inbounds=True)
                running = b.fadd(b.load(slot), x)
                b.store(running, slot)
                out = b.fadd(b.load(b.gep(base, [k], inbounds=True)), running)
                em.store(out, ctx.results[0], at, ctx.op.results[0].type.dtype)
        with loop(em, length, "carry") as k:
            comp.fold(k, b.load(b.gep(local, [k], inbounds=True)))
            b.store(comp.result(k), b.gep(base, [k], inbounds=True))

    blocks, tail = divmod(n, SCAN_BLOCK)
    if blocks:
        with loop(em, blocks, "block") as blk:
            block(b.mul(blk, _i64(SCAN_BLOCK)), SCAN_BLOCK)
    if tail:
        block(_i64(blocks * SCAN_BLOCK), tail)


def _scan_step(em: _Emitter, ctx: program.KernelContext, kind: str | None, exact: bool,
               slots: list[ir.Value], k: ir.Value, at: ir.Value, xs: list[ir.Value]) -> None:
    """Folds `xs` into lane `k` of the running fold and stores it at flat offset `at`."""
    op, b = ctx.op, em.b
    dtype = op.operands[0].type.dtype
    ptrs = [b.gep(slot, [k], inbounds=True) for slot in slots]
    accs = [b.load(p) for p in ptrs]
    if kind is not None:
        new = [combine(em, kind, dtype, accs[0], xs[0], exact)]
    else:
        new = apply_body(em, op.regions[0].block, [*accs, *xs])
    for p, v, ptr, res in zip(ptrs, new, ctx.results, op.results, strict=True):
        b.store(v, p)
        em.store(v, ptr, at, res.type.dtype)


# ---------------------------------------------------------------------------------------------
# stablehlo.select_and_scatter

class _Select:
    """Keeps the window element the `select` region picks: its value and flat offset."""

    def __init__(self, em: _Emitter, op: Op, operand: ir.Value, best: ir.Value,
                 where: ir.Value, found: ir.Value) -> None:
        self.em, self.op, self.operand = em, op, operand
        self.best, self.where, self.found = best, where, found

    def __call__(self, index: list[ir.Value]) -> None:
        em, b = self.em, self.em.b
        t = self.op.operands[0].type
        at = _offset(em, index, t.shape)
        x = em.load(self.operand, at, t.dtype)
        keep = apply_body(em, self.op.regions[0].block, [b.load(self.best), x])[0]
        # The first real element is taken; a later one when the region does not keep the pick.
        take = b.or_(b.not_(b.load(self.found)), b.not_(keep))
        with b.if_then(take):
            b.store(x, self.best)
            b.store(at, self.where)
            b.store(ir.Constant(_I1, 1), self.found)


@program.register("stablehlo.select_and_scatter")
def _select_and_scatter(ctx: program.KernelContext) -> None:
    """`stablehlo.select_and_scatter`: the result filled with the initial value, then per
    window (reverse row-major) the selected element updated by the `scatter` region."""
    op = ctx.op
    _check(ctx)
    operand_t, source_t = op.operands[0].type, op.operands[1].type
    out_t = op.result.type
    em = scalar_emitter(ctx.module, ctx.fn, ctx.builder, hlo.Block([], [op]))
    b = em.b
    if out_t.size == 0:
        return
    init = em.load(ctx.operands[2], _i64(0), op.operands[2].type.dtype)
    with loop(em, out_t.size, "fill") as i:
        em.store(init, ctx.results[0], i, out_t.dtype)
    if source_t.size == 0:
        return
    w = _window(op, operand_t.rank)
    w = _Window(w.size, w.strides, w.padding, (1,) * operand_t.rank, (1,) * operand_t.rank)
    value_type = compute_type(operand_t.dtype)
    best, where = entry_alloca(em, value_type), entry_alloca(em, _I64)
    found = entry_alloca(em, _I1)
    select = _Select(em, op, ctx.operands[0], best, where, found)
    with loop(em, source_t.size, "windows") as step:
        s = b.sub(_i64(source_t.size - 1), step)
        window = em.delinear(s, source_t.shape)
        b.store(ir.Constant(_I1, 0), found)
        # Defined before the region first reads it (its result is ignored then).
        b.store(ir.Constant(value_type, 0), best)
        _taps(em, w, operand_t.shape, window, select)
        with b.if_then(b.load(found)):
            at = b.load(where)
            current = em.load(ctx.results[0], at, out_t.dtype)
            source = em.load(ctx.operands[1], s, source_t.dtype)
            new = apply_body(em, op.regions[1].block, [current, source])[0]
            em.store(new, ctx.results[0], at, out_t.dtype)


# ---------------------------------------------------------------------------------------------
# stablehlo.reduce outside fusions

@program.register("stablehlo.reduce")
def _reduce(ctx: program.KernelContext) -> None:
    """`stablehlo.reduce` as a kernel (variadic reduces are not fused): the fusion emitter's
    loops (`reductions.emit_reduce`) over the operand buffers, all results in one pass."""
    op = ctx.op
    _check(ctx)
    em = _Emitter(ctx.module, ctx.fn, hlo.Block(list(op.operands), [op]), list(ctx.operands))
    em.b = ctx.builder
    reductions.emit_reduce(em, op, ctx.results)
