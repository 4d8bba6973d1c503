"""Reductions in the elemental emitter: `stablehlo.reduce` inside fusions and as a kernel.

Three loop shapes:

- The element generator: an element of a reduce's result is one loop over its reduced
  elements (row-major order) folding `acc = body(acc, x)` from the initial values. When the
  reduced dimensions are the operand's minor ones (a row reduction) the loop reads them at
  consecutive offsets, and a float add/multiply/max/min accumulates with `reassoc` (XLA allows
  reassociation inside reductions) or as `llvm.maximum`/`llvm.minimum`, so LLVM vectorizes it
  with several accumulators.
- A column reduction (the operand's minor dimensions kept) that is a fusion root, or a reduce
  outside fusions, loops reduced-outer / kept-inner over a tile of accumulators (or the output
  itself), so the inner loop runs over consecutive elements and vectorizes over the kept
  dimension.
- A row reduction of a general region (a variadic argmax/argmin: a value and an index reduced
  with a comparator body) cannot reassociate: its fold stays in the reference's order, so ties
  and NaNs resolve as there, but the folds of 8 rows are interleaved (independent dependency
  chains instead of one).

Semantics are the reference backend's (`backends/reference/kernels/reductions.py`): a monoid
region starting from its identity sums from +0.0 and accumulates float16/bfloat16 in float32,
rounding once; any other initial value folds through the region, rounding every step (which
one applies is decided at run time when the initial value is not a constant); a reduction over
no dimensions is its operand.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import stack
from justjax._src.backends.llvm.codegen.emitter import (MULTI_RESULT_GENERATORS, ROOT_EMITTERS,
                                                        _Emitter, compute_type, memory_type)
from justjax._src.core import dtypes
from justjax._src.hlo import ir as hlo
from justjax._src.hlo.ir import Op, Value
from justjax._src.numerics import monoids

__all__ = ["monoid", "is_identity", "combine", "exact_mode", "monoid_start",
           "apply_body", "loop", "entry_alloca", "tile_size", "versioned", "emit_reduce",
           "constant", "TILE_BYTES", "ROW_TILE"]

_I1, _I64 = ir.IntType(1), ir.IntType(64)
_LOW = (np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16))
_S = "stablehlo."
_ROUNDED = frozenset((_S + "add", _S + "multiply"))
_REASSOC = ("reassoc",)
# Bytes of accumulators a column reduction keeps in a stack tile: 256 float32, which LLVM holds
# in 16 AVX-512 registers (measured best on f32[4096,1024]: 512 spill, 64 read too little per
# row). With more columns than that, float32/float64/integer results accumulate in the output
# buffer itself, reading the operand row after row (4x faster there than tiles of 256).
TILE_BYTES = 1024


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in _LOW


def _zero() -> ir.Constant:
    return ir.Constant(_I64, 0)


def _i64(n: int) -> ir.Constant:
    return ir.Constant(_I64, n)


# ---------------------------------------------------------------------------------------------
# Monoids.

def monoid(block: hlo.Block, dtype: np.dtype) -> str | None:
    """The opcode of a monoid region over `dtype` (`numerics.monoids.region_monoid`), or None;
    complex monoids are left to the general path."""
    if np.dtype(dtype).kind == "c":
        return None
    return monoids.region_monoid(block, dtype)


def constant(dtype: np.dtype, value: object) -> ir.Constant:
    """A compute-type constant `value` of `dtype`."""
    ty = compute_type(np.dtype(dtype))
    if isinstance(ty, ir.IntType):
        return ir.Constant(ty, int(value) & ((1 << ty.width) - 1))
    return ir.Constant(ty, float(value))


def is_identity(em: _Emitter, opcode: str, dtype: np.dtype, value: ir.Value) -> ir.Value:
    """Whether `value` equals the identity of monoid `opcode` (an `i1`; -0.0 counts for +0.0,
    as the reference's `==` test)."""
    ident = constant(dtype, monoids.identity(opcode, dtype))
    if _is_float(np.dtype(dtype)):
        return em.b.fcmp_ordered("==", value, ident)
    return em.b.icmp_unsigned("==", value, ident)


def combine(em: _Emitter, opcode: str, dtype: np.dtype, acc: ir.Value, x: ir.Value,
            exact: bool) -> ir.Value:
    """`acc <opcode> x` for a monoid: float add/multiply reassociable (rounded to float16/
    bfloat16 after the step unless `exact`), float max/min with XLA's semantics (NaN wins,
    -0.0 < +0.0: `llvm.maximum`/`llvm.minimum`, which LLVM vectorizes as reductions)."""
    b = em.b
    dtype = np.dtype(dtype)
    name = opcode[len(_S):]
    if _is_float(dtype):
        flags = _REASSOC if exact else ()
        if name == "add":
            out = b.fadd(acc, x, flags=flags)
        elif name == "multiply":
            out = b.fmul(acc, x, flags=flags)
        else:
            out = em.intrinsic("llvm.maximum" if name == "maximum" else "llvm.minimum",
                               [acc, x])
        return out if exact else em.round_low(out, dtype)
    if dtype == np.bool_:
        # NumPy's bool arithmetic is logical: add and max are or, multiply and min are and.
        name = {"add": "or", "maximum": "or", "multiply": "and", "minimum": "and"}.get(name,
                                                                                    name)
    if name in ("maximum", "minimum"):
        cmp = b.icmp_signed if dtype.kind == "i" else b.icmp_unsigned
        return b.select(cmp(">" if name == "maximum" else "<", acc, x), acc, x)
    emit = {"add": b.add, "multiply": b.mul, "and": b.and_, "or": b.or_, "xor": b.xor}[name]
    return emit(acc, x)


def exact_mode(em: _Emitter, opcode: str | None, dtype: np.dtype, init: ir.Value
               ) -> bool | ir.Value:
    """Whether a monoid accumulates without rounding between steps: always for float32/
    float64, integers and max/min; for a float16/bfloat16 sum or product only when `init`
    is the identity (the reference's fast path, accumulating in float32) -- an `i1` decided
    at run time. False for a general region (it rounds every op)."""
    if opcode is None:
        return False
    dtype = np.dtype(dtype)
    if dtype not in _LOW or opcode not in _ROUNDED:
        return True
    return is_identity(em, opcode, dtype, init)


def monoid_start(em: _Emitter, opcode: str | None, dtype: np.dtype, init: ir.Value
                 ) -> ir.Value:
    """The accumulator's first value: `init`, except that a float sum whose initial value
    equals the identity starts from +0.0 (the reference sums from +0.0 then, -0.0 included)."""
    if opcode != _S + "add" or not _is_float(np.dtype(dtype)):
        return init
    zero = constant(dtype, 0.0)
    return em.b.select(em.b.fcmp_ordered("==", init, zero), zero, init)


def apply_body(em: _Emitter, block: hlo.Block, args: Sequence[ir.Value]) -> list[ir.Value]:
    """The scalars a reduction body returns for `args`, emitted at the builder (each op
    rounded to its dtype, as the reference runs regions)."""
    saved = dict(em.cache)
    em.scalars.update(zip(block.args, args, strict=True))
    out = [em.gen(v, []) for v in block.terminator.operands]
    for v in block.args:
        del em.scalars[v]
    # The body's values hold for these arguments only.
    em.cache = saved
    return out


# ---------------------------------------------------------------------------------------------
# Loop helpers (also used by the window kernels).

@contextlib.contextmanager
def loop(em: _Emitter, count: int | ir.Value, name: str = "loop") -> Iterator[ir.Value]:
    """A bottom-tested loop `for i in range(count)` (count >= 1) at the builder; the body is
    what the `with` block emits. Values generated inside are dropped from the emitter's cache
    when the loop ends (they do not dominate the code after it)."""
    b = em.b
    count = _i64(count) if isinstance(count, int) else count
    pre = b.block
    body, done = em.fn.append_basic_block(name), em.fn.append_basic_block(name + ".done")
    b.branch(body)
    b.position_at_end(body)
    i = b.phi(_I64)
    i.add_incoming(_zero(), pre)
    saved = dict(em.cache)
    yield i
    em.cache = saved
    nxt = b.add(i, _i64(1), flags=["nsw", "nuw"])
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, count), body, done)
    b.position_at_end(done)


def entry_alloca(em: _Emitter, ty: ir.Type, count: int = 1) -> ir.Value:
    """A stack slot in the entry block of the function `em` emits (`stack.entry_alloca`)."""
    return stack.entry_alloca(em.b, ty, count)


def tile_size(types: Iterable[ir.Type]) -> int:
    """How many lanes a tile of accumulators of `types` (one of each per lane) holds in
    `TILE_BYTES`."""
    bits = sum(t.width if isinstance(t, ir.IntType) else 64 if isinstance(t, ir.DoubleType)
               else 32 for t in types)
    return max(1, TILE_BYTES * 8 // max(bits, 8))


def versioned(em: _Emitter, cond: bool | ir.Value,
              emit: Callable[[bool], list[ir.Value]]) -> list[ir.Value]:
    """`emit(cond)` when `cond` is static; else `emit(True)` and `emit(False)` on the two
    sides of a branch on the `i1` `cond`, their values merged."""
    if isinstance(cond, bool):
        return emit(cond)
    b = em.b
    yes, no = em.fn.append_basic_block("exact"), em.fn.append_basic_block("rounded")
    merge = em.fn.append_basic_block("merged")
    b.cbranch(cond, yes, no)
    saved = dict(em.cache)
    ends = []
    results = []
    for block, flag in ((yes, True), (no, False)):
        b.position_at_end(block)
        em.cache = dict(saved)
        results.append(emit(flag))
        ends.append(b.block)
        b.branch(merge)
    em.cache = saved
    b.position_at_end(merge)
    merged = []
    for a, c in zip(*results, strict=True):
        phi = b.phi(a.type)
        phi.add_incoming(a, ends[0])
        phi.add_incoming(c, ends[1])
        merged.append(phi)
    return merged


# ---------------------------------------------------------------------------------------------
# stablehlo.reduce

@dataclass(frozen=True)
class _Reduce:
    """The static facts of one reduce op."""

    op: Op
    inputs: list[Value]
    inits: list[Value]
    dims: tuple[int, ...]
    shape: tuple[int, ...]
    kept: list[int]
    red_shape: list[int]
    total: int
    body: hlo.Block
    monoid: str | None
    dtype: np.dtype

    @property
    def kept_shape(self) -> list[int]:
        return [self.shape[d] for d in self.kept]

    @property
    def row(self) -> bool:
        """Whether the reduced dimensions are the minor ones, in order (contiguous)."""
        rank = len(self.shape)
        return self.dims == tuple(range(rank - len(self.dims), rank))


def _plan(op: Op) -> _Reduce:
    count = len(op.results)
    inputs, inits = list(op.operands[:count]), list(op.operands[count:])
    dims = tuple(int(d) for d in op.attributes["dimensions"])
    shape = tuple(inputs[0].type.shape)
    red_shape = [shape[d] for d in dims]
    body = op.regions[0].block
    dtype = inputs[0].type.dtype
    found = monoid(body, dtype) if count == 1 else None
    return _Reduce(op, inputs, inits, dims, shape, [d for d in range(len(shape)) if d not in dims],
                   red_shape, math.prod(red_shape), body, found, dtype)


def _starts(em: _Emitter, r: _Reduce) -> tuple[list[ir.Value], bool | ir.Value]:
    """The accumulators' first values and the exactness (see `exact_mode`)."""
    inits = [em.gen(v, []) for v in r.inits]
    exact = exact_mode(em, r.monoid, r.dtype, inits[0])
    inits[0] = monoid_start(em, r.monoid, r.dtype, inits[0])
    return inits, exact


def _step(em: _Emitter, r: _Reduce, accs: list[ir.Value], xs: list[ir.Value], exact: bool
          ) -> list[ir.Value]:
    if r.monoid is not None:
        return [combine(em, r.monoid, r.dtype, accs[0], xs[0], exact)]
    return apply_body(em, r.body, [*accs, *xs])


def _full_index(em: _Emitter, r: _Reduce, kept: Sequence[ir.Value], j: ir.Value,
                base: ir.Value | None) -> list[ir.Value]:
    """The operand index of reduced element `j` of the output element at `kept`. With
    `base` (a row reduction), the emitter learns that the index is at flat offset `base + j`,
    so operands load at consecutive addresses."""
    full: list[ir.Value] = [_zero()] * len(r.shape)
    for d, i in zip(r.kept, kept, strict=True):
        full[d] = i
    reduced = [j] if len(r.dims) == 1 else em.delinear(j, r.red_shape)
    for d, i in zip(r.dims, reduced, strict=True):
        full[d] = i
    if base is not None:
        em.alive.append(full)
        em.flat[tuple(id(i) for i in full)] = (em.b.add(base, j), r.shape)
    return full


def _fold(em: _Emitter, r: _Reduce, idx: Sequence[ir.Value], starts: list[ir.Value],
          exact: bool) -> list[ir.Value]:
    """The reduced values of the output element at `idx`: a loop over the reduced elements."""
    b = em.b
    slots = [entry_alloca(em, s.type) for s in starts]
    for slot, s in zip(slots, starts, strict=True):
        b.store(s, slot)
    base = b.mul(em.linear(idx, r.kept_shape), _i64(r.total)) if r.row else None
    with loop(em, r.total, "reduce") as j:
        full = _full_index(em, r, idx, j, base)
        xs = [em.gen(v, full) for v in r.inputs]
        new = _step(em, r, [b.load(s) for s in slots], xs, exact)
        for slot, n in zip(slots, new, strict=True):
            b.store(n, slot)
    return [b.load(s) for s in slots]


def _reduce(em: _Emitter, op: Op, which: int, idx: list[ir.Value]) -> ir.Value:
    """Result `which` of `stablehlo.reduce` at `idx` (the other results are cached for the
    same index: one loop computes them all)."""
    r = _plan(op)
    if not r.dims:
        # XLA turns a reduction over no dimensions into its operand.
        values = [em.gen(v, idx) for v in r.inputs]
    else:
        starts, exact = _starts(em, r)
        if r.total == 0:
            values = starts
        else:
            values = versioned(em, exact, lambda e: _fold(em, r, idx, starts, e))
    key = tuple(id(i) for i in idx)
    for k, (res, v) in enumerate(zip(op.results, values, strict=True)):
        if k != which:
            em.cache[(res.id, key)] = em.round_low(v, res.type.dtype)
    return values[which]


# -- column reductions -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Columns:
    """A reduce's tiled loop nest: for each index of the `outer` kept dimensions and each tile
    of the `lanes` block of kept dimensions (`size` elements), the reduced elements outer and
    the tile's lanes inner. Columns: the lanes are the operand's minor dimensions (consecutive
    elements, the inner loop vectorizes). Rows (`rows`): the reduced dimensions are the minor
    ones and the lanes are all the kept ones: interleaving the folds of several rows replaces
    one long dependency chain by independent ones (for regions that cannot reassociate)."""

    outer: list[int]
    lanes: list[int]
    size: int
    rows: bool = False


# Rows a row reduction of a general region folds at once: 8 measured best on argmax over
# f32[4096,1024] (3x one row at a time; LLVM's SLP vectorizer turns the lanes into gathers
# across rows, which 16 lanes make twice slower than 8).
ROW_TILE = 8


def _column_layout(r: _Reduce) -> _Columns | None:
    if not r.dims or r.total == 0 or math.prod(r.kept_shape) == 0:
        return None
    rank = len(r.shape)
    minor: list[int] = []
    for d in reversed(range(rank)):
        if d in r.dims:
            break
        minor.insert(0, d)
    size = math.prod(r.shape[d] for d in minor)
    if size < 2:
        return None
    return _Columns([d for d in r.kept if d not in minor], minor, size)


def _row_layout(r: _Reduce) -> _Columns | None:
    """Interleaved rows, for a row reduction whose region is not a vectorizable monoid."""
    size = math.prod(r.kept_shape)
    # (Monoids vectorize in the flat loop instead.)
    if r.monoid is not None or not r.dims or not r.row or r.total < 2 or size < 2:
        return None
    return _Columns([], list(r.kept), size, rows=True)


def _emit_columns(em: _Emitter, r: _Reduce, cols: _Columns, outs: dict[int, ir.Value]) -> None:
    """Writes results `outs` (result number -> pointer) of reduce `r`: for each outer index and
    tile of the minor block, the reduced elements outer and the tile's elements inner, the
    accumulators in a stack array."""
    em.cache.clear()
    starts, exact = _starts(em, r)
    tile = ROW_TILE if cols.rows else min(cols.size, tile_size(s.type for s in starts))
    slots: list[ir.Value] | None = [entry_alloca(em, s.type, tile) for s in starts]
    dtypes_ = [v.type.dtype for v in r.op.results]
    if (not cols.rows and cols.size > tile and len(outs) == len(dtypes_)
            and all(memory_type(dt) == compute_type(dt) for dt in dtypes_)):
        # Too many columns for registers: accumulate in the outputs themselves, reading the
        # operand row after row (consecutive addresses throughout).
        slots, tile = None, cols.size

    def emit(flag: bool) -> list[ir.Value]:
        _column_loops(em, r, cols, outs, starts, slots, tile, flag)
        return []

    versioned(em, exact, emit)


def _column_loops(em: _Emitter, r: _Reduce, cols: _Columns, outs: dict[int, ir.Value],
                  starts: list[ir.Value], slots: list[ir.Value] | None, tile: int,
                  exact: bool) -> None:
    """The loop nest of `_emit_columns`; `slots` None: the accumulators are the outputs."""
    b = em.b
    tiles = -(-cols.size // tile)
    outer_shape = [r.shape[d] for d in cols.outer]
    direct = slots is None
    with loop(em, math.prod(outer_shape), "outer") as o:
        outer = em.delinear(o, outer_shape)
        if direct:
            row = b.mul(o, _i64(cols.size))
            slots = [b.gep(outs[n], [row], inbounds=True) for n in range(len(outs))]
        assert slots is not None
        with loop(em, tiles, "tile") as t:
            first = b.mul(t, _i64(tile))
            length = _i64(tile)
            if cols.size % tile:
                rest = b.sub(_i64(cols.size), first)
                length = b.select(b.icmp_signed("<", rest, length), rest, length)
            # Unrolled row lanes past the last row read their accumulators too.
            with loop(em, tile if cols.rows else length, "init") as k:
                for slot, s in zip(slots, starts, strict=True):
                    b.store(s, b.gep(slot, [k], inbounds=True))
            with loop(em, r.total, "reduce") as j:
                _column_step(em, r, cols, outer, j, first, length, slots, exact)
            if not direct:
                with loop(em, length, "store") as k:
                    at = b.add(b.mul(o, _i64(cols.size)), b.add(first, k))
                    for n, out in outs.items():
                        acc = b.load(b.gep(slots[n], [k], inbounds=True))
                        em.store(acc, out, at, r.op.results[n].type.dtype)


def _column_step(em: _Emitter, r: _Reduce, cols: _Columns, outer: list[ir.Value],
                 j: ir.Value, first: ir.Value, length: ir.Value, slots: list[ir.Value],
                 exact: bool) -> None:
    """Folds reduced element `j` into the tile's accumulators: columns in a loop over the
    lanes (which LLVM vectorizes), rows unrolled lane by lane (independent scalar chains: a
    vectorized loop would gather across rows)."""
    b = em.b
    reduced = [j] if len(r.dims) == 1 else em.delinear(j, r.red_shape)
    corner: list[ir.Value] = [_zero()] * len(r.shape)
    for d, i in [*zip(cols.outer, outer, strict=True), *zip(r.dims, reduced, strict=True)]:
        corner[d] = i
    if not cols.rows:
        # The lanes are consecutive: lane k at this offset plus k.
        base = b.add(em.linear(corner, r.shape), first)
        with loop(em, length, "lanes") as k:
            _lane(em, r, cols, corner, b.add(first, k), b.add(base, k), k, slots, exact)
        return
    for t in range(ROW_TILE):
        at = b.add(first, _i64(t))
        if cols.size % ROW_TILE:
            # Lanes past the last row redo the last row (and store the same value again).
            at = b.select(b.icmp_signed("<", at, _i64(cols.size)), at, _i64(cols.size - 1))
        # Row `at`'s reduced elements are consecutive.
        offset = b.add(b.mul(at, _i64(r.total)), j)
        _lane(em, r, cols, corner, at, offset, _i64(t), slots, exact)


def _lane(em: _Emitter, r: _Reduce, cols: _Columns, corner: list[ir.Value], at: ir.Value,
          offset: ir.Value, k: ir.Value, slots: list[ir.Value], exact: bool) -> None:
    """Folds the element at flat `offset` (lane `at` of the lanes block, corner `corner`) into
    accumulator `k` of the tile."""
    b = em.b
    full = list(corner)
    lane_shape = [r.shape[d] for d in cols.lanes]
    lanes = [at] if len(cols.lanes) == 1 else em.delinear(at, lane_shape)
    for d, i in zip(cols.lanes, lanes, strict=True):
        full[d] = i
    em.alive.append(full)
    em.flat[tuple(id(i) for i in full)] = (offset, r.shape)
    xs = [em.gen(v, full) for v in r.inputs]
    ptrs = [b.gep(slot, [k], inbounds=True) for slot in slots]
    new = _step(em, r, [b.load(p) for p in ptrs], xs, exact)
    for p, n in zip(ptrs, new, strict=True):
        b.store(n, p)


def _column_root(em: _Emitter, op: Op, root: Value, out: ir.Value) -> bool:
    """Root emitter of a reduce whose minor dimensions are kept, or a row reduction of a
    general region (False: neither, the flat loop does it)."""
    r = _plan(op)
    cols = _column_layout(r) or _row_layout(r)
    # An output sharing memory with an operand would be overwritten while still read.
    if cols is None or "noalias" not in out.attributes:
        return False
    outs = {op.results.index(root): out}
    # The other results of a variadic reduce that are roots too come out of the same loops
    # (unless a root is returned twice: `outputs` then holds one of its pointers only).
    distinct = len(em.params) + len(em.outputs) == len(em.fn.args)
    for n, res in enumerate(op.results):
        other = em.outputs.get(res)
        if (distinct and res is not root and other is not None
                and "noalias" in other.attributes and res not in em.done):
            outs[n] = other
            em.done.add(res)
    _emit_columns(em, r, cols, outs)
    return True


def emit_reduce(em: _Emitter, op: Op, outs: Sequence[ir.Value]) -> None:
    """Emits every result of `op` (a `stablehlo.reduce` whose operands `em` reads) into
    `outs`: the column loop nest when the minor dimensions are kept, else one loop over the
    output elements folding each (all results in one fold).

    Args:
      em: an emitter whose parameters are `op`'s operands and whose block holds `op`.
      op: the reduce.
      outs: one pointer per result (memory type of its dtype).
    """
    r = _plan(op)
    cols = _column_layout(r) or _row_layout(r)
    if cols is not None:
        _emit_columns(em, r, cols, dict(enumerate(outs)))
        return
    out_shape = op.results[0].type.shape
    size = math.prod(out_shape)
    if size == 0:
        return
    em.cache.clear()
    with loop(em, size, "out") as i:
        idx = em.delinear(i, out_shape)
        for res, out in zip(op.results, outs, strict=True):
            em.store(em.gen(res, idx), out, i, res.type.dtype)


MULTI_RESULT_GENERATORS["stablehlo.reduce"] = _reduce
ROOT_EMITTERS["stablehlo.reduce"] = _column_root
