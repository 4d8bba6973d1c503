"""Native kernels of `stablehlo.sort` and `chlo.top_k`: a stable bottom-up merge sort.

Each row along the sorted dimension (the other dimensions looped over) is sorted in scratch
memory, all operands moved together as columns:

1. an insertion sort of blocks of `RUN` elements, reading the row from the operands;
2. bottom-up merge passes between two scratch buffers, the runs doubling in width. Two runs
   of the same length merge branch-free from both ends at once: the front takes the smaller
   head and the back the larger tail, each for half of the output, so neither needs bounds
   checks; `PAIRS` such merges share one loop, so that several chains of dependent loads
   are in flight. The last, shorter run of a pass merges with bounds checks, and runs
   already in order are copied;
3. the sorted row copied to the results.

Equal elements keep their order (the sort is stable), which serves both values of
`is_stable`. The comparator region becomes an internal function `i1 less(lhs_0, rhs_0, lhs_1,
rhs_1, ...)` of compute-type scalars (`emitter.emit_region`), which LLVM inlines.

`chlo.top_k` (along the last dimension): the `k` largest elements in XLA's total order, the
largest first and equal ones in index order, with their int32 indices, by the same merge sort
of (value, index) pairs in descending order over a buffer of `2k` candidates per row.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from justjax._src.backends.llvm.codegen import emitter, program, stack
from justjax._src.backends.llvm.codegen.emitter import Unsupported
from justjax._src.backends.llvm.codegen.program import KernelContext, ProgramBuilder
from justjax._src.core import dtypes

__all__ = ["PAIRS", "RUN", "emit_sort", "emit_top_k"]

_I1, _I8, _I16, _I32, _I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
_F32 = ir.FloatType()
_PTR = _I8.as_pointer()
_F16, _BF16 = np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16)

# Elements per insertion-sorted block before the merge passes (a power of two).
RUN = 16
# Pairs of runs merged in one loop while a pass has that many left (more independent chains
# of dependent loads in flight).
PAIRS = 2
# Scratch memory up to this size is on the stack; larger comes from malloc.
_STACK_BYTES = 1 << 14
_ALIGN = 64

# `less(builder, lhs, rhs) -> i1`: lhs and rhs hold one memory-type value per column.
Less = Callable[[ir.IRBuilder, Sequence[ir.Value], Sequence[ir.Value]], ir.Value]


def _c(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


# -- loops -------------------------------------------------------------------------------------

def _while(b: ir.IRBuilder, init: Sequence[ir.Value],
           cond: Callable[[list[ir.Value]], ir.Value],
           body: Callable[[list[ir.Value]], Sequence[ir.Value]], name: str) -> list[ir.Value]:
    """A loop over state `init`: while `cond(state)`, `state = body(state)`.

    Returns:
      The final state (phis of the loop header, which dominates the code after the loop).
    """
    fn = b.function
    pre = b.block
    head = fn.append_basic_block(f"{name}.head")
    loop = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    state = [b.phi(v.type) for v in init]
    for phi, v in zip(state, init, strict=True):
        phi.add_incoming(v, pre)
    b.cbranch(cond(state), loop, done)
    b.position_at_end(loop)
    new = body(list(state))
    for phi, v in zip(state, new, strict=True):
        phi.add_incoming(v, b.block)
    b.branch(head)
    b.position_at_end(done)
    return list(state)


def _for(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: ir.Value,
         body: Callable[[ir.Value], None], name: str) -> None:
    """`for i in range(start, stop, step): body(i)` (i64, step > 0)."""
    def advance(state: list[ir.Value]) -> list[ir.Value]:
        body(state[0])
        return [b.add(state[0], step)]

    _while(b, [start], lambda s: b.icmp_signed("<", s[0], stop), advance, name)


def _if(b: ir.IRBuilder, pred: ir.Value, then: Callable[[], None],
        otherwise: Callable[[], None]) -> None:
    with b.if_else(pred) as (yes, no):
        with yes:
            then()
        with no:
            otherwise()


# -- dtypes ------------------------------------------------------------------------------------

def _to_compute(b: ir.IRBuilder, raw: ir.Value, dt: np.dtype) -> ir.Value:
    """A memory-type element as its compute type (as `emitter`'s loads convert it)."""
    if dt == np.bool_:
        return b.icmp_unsigned("!=", raw, ir.Constant(_I8, 0))
    if dt == _F16:
        return b.fpext(raw, _F32)
    if dt == _BF16:
        return b.bitcast(b.shl(b.zext(raw, _I32), ir.Constant(_I32, 16)), _F32)
    return raw


def _itemsize(dt: np.dtype) -> int:
    return np.dtype(dt).itemsize


# -- the merge sort ----------------------------------------------------------------------------

class _Sorter:
    """Emits the stable merge sort of rows of `n` elements made of columns of `dts`.

    A scratch buffer holds the `n` elements of each column at an aligned offset; the sort
    uses two of them (`allocate`), sorts a row into one (`sort_row`) and says which.
    """

    def __init__(self, b: ir.IRBuilder, program: ProgramBuilder,
                 dts: Sequence[np.dtype], n: int, less: Less) -> None:
        self.b, self.program, self.n, self.less = b, program, n, less
        self.dts = [np.dtype(dt) for dt in dts]
        self.types = [emitter.memory_type(dt) for dt in self.dts]
        self.offsets: list[int] = []
        size = 0
        for dt in self.dts:
            self.offsets.append(size)
            size += -(-n * _itemsize(dt) // _ALIGN) * _ALIGN
        self.nbytes = size

    # -- memory ----------------------------------------------------------------------------

    def allocate(self, count: int) -> tuple[list[ir.Value], ir.Value | None]:
        """`count` scratch buffers (i8 pointers) and the pointer to free after the sort
        (None when they are on the stack)."""
        b, total = self.b, self.nbytes * count
        if total <= _STACK_BYTES:
            slot = stack.entry_alloca(b, ir.ArrayType(_I64, max(total // 8, 1)))
            base, owned = b.bitcast(slot, _PTR), None
        else:
            malloc = self.program.external("malloc", ir.FunctionType(_PTR, [_I64]))
            base = owned = b.call(malloc, [_c(total)])
        return [b.gep(base, [_c(i * self.nbytes)], inbounds=True) for i in range(count)], owned

    def release(self, owned: ir.Value | None) -> None:
        if owned is not None:
            free = self.program.external("free", ir.FunctionType(ir.VoidType(), [_PTR]))
            self.b.call(free, [owned])

    def columns(self, base: ir.Value) -> list[ir.Value]:
        """The typed column pointers of the scratch buffer at `base`."""
        b = self.b
        return [b.bitcast(b.gep(base, [_c(off)], inbounds=True), t.as_pointer())
                for off, t in zip(self.offsets, self.types, strict=True)]

    def load(self, cols: Sequence[ir.Value], i: ir.Value) -> list[ir.Value]:
        return [self.b.load(self.b.gep(c, [i], inbounds=True)) for c in cols]

    def store(self, cols: Sequence[ir.Value], i: ir.Value, values: Sequence[ir.Value]) -> None:
        for c, v in zip(cols, values, strict=True):
            self.b.store(v, self.b.gep(c, [i], inbounds=True))

    def copy(self, src: Sequence[ir.Value], dst: Sequence[ir.Value], lo: ir.Value,
             to: ir.Value, count: ir.Value, move: bool = False) -> None:
        """Copies elements [lo, lo + count) of `src` to [to, to + count) of `dst` (which
        may overlap if `move`)."""
        b = self.b
        name = "llvm.memmove" if move else "llvm.memcpy"
        memcpy = b.module.declare_intrinsic(name, [_PTR, _PTR, _I64])
        for s, d, dt in zip(src, dst, self.dts, strict=True):
            nbytes = b.mul(count, _c(_itemsize(dt)))
            b.call(memcpy, [b.bitcast(b.gep(d, [to], inbounds=True), _PTR),
                            b.bitcast(b.gep(s, [lo], inbounds=True), _PTR), nbytes,
                            ir.Constant(_I1, 0)])

    # -- phases ----------------------------------------------------------------------------

    def sort_row(self, fill: Callable[[ir.Value], list[ir.Value]], first: ir.Value,
                 second: ir.Value, length: ir.Value | None = None) -> list[ir.Value]:
        """Sorts the row whose element `t` is `fill(t)` (memory-type values, one per
        column), using the scratch buffers at `first` and `second`.

        Args:
          fill: the elements; `fill(t)` may read the first buffer at `t` (the row sorts in
            place), never below.
          first, second: scratch buffers (from `allocate`).
          length: the row's length (at most `n`); `n` when None.

        Returns:
          The column pointers of the buffer holding the sorted row.
        """
        b = self.b
        length = _c(self.n) if length is None else length
        self.insertion_runs(fill, self.columns(first), length)
        if self.n <= RUN:
            return self.columns(first)

        def one_pass(state: list[ir.Value]) -> list[ir.Value]:
            width, src, dst = state
            self.merge_pass(self.columns(src), self.columns(dst), width, length)
            return [b.shl(width, _c(1)), dst, src]

        final = _while(b, [_c(RUN), first, second],
                       lambda s: b.icmp_signed("<", s[0], length), one_pass, "sort.pass")
        return self.columns(final[1])

    def insertion_runs(self, fill: Callable[[ir.Value], list[ir.Value]],
                       cols: list[ir.Value], length: ir.Value) -> None:
        """Sorts each block of `RUN` elements into `cols`: element `t` is inserted after
        the block's elements not greater than it."""
        b = self.b

        def insert(t: ir.Value) -> None:
            x = fill(t)
            start = b.and_(t, _c(~(RUN - 1)))
            j = self.shift_greater(cols, x, t, start, "sort.insert")
            self.store(cols, j, x)

        _for(b, _c(0), length, _c(1), insert, "sort.runs")

    def shift_greater(self, cols: list[ir.Value], x: list[ir.Value], j0: ir.Value,
                      start: ir.Value, name: str) -> ir.Value:
        """Moves the elements of `cols[start:j0]` greater than `x` (a sorted range) one place
        up; returns the hole where `x` goes."""
        b = self.b
        fn = b.function
        pre = b.block
        head = fn.append_basic_block(f"{name}.head")
        check = fn.append_basic_block(f"{name}.check")
        shift = fn.append_basic_block(f"{name}.shift")
        done = fn.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        j = b.phi(_I64)
        j.add_incoming(j0, pre)
        b.cbranch(b.icmp_signed(">", j, start), check, done)
        b.position_at_end(check)
        prev = b.sub(j, _c(1))
        y = self.load(cols, prev)
        b.cbranch(self.less(b, x, y), shift, done)
        b.position_at_end(shift)
        self.store(cols, j, y)
        j.add_incoming(prev, shift)
        b.branch(head)
        b.position_at_end(done)
        return j

    def in_order(self, src: list[ir.Value], mid: ir.Value) -> ir.Value:
        """Whether the runs meeting at `mid` are in order already: the second's head is not
        less than the first's tail."""
        head, tail = self.load(src, mid), self.load(src, self.b.sub(mid, _c(1)))
        return self.b.not_(self.less(self.b, head, tail))

    def merge_pass(self, src: list[ir.Value], dst: list[ir.Value], width: ir.Value,
                   length: ir.Value) -> None:
        """Merges each pair of adjacent runs of `width` elements of `src[:length]` into
        `dst`: `PAIRS` pairs at a time while enough whole runs are left, then the rest."""
        b = self.b
        pair, group = b.shl(width, _c(1)), b.mul(width, _c(2 * PAIRS))

        def pairs(s: list[ir.Value]) -> list[ir.Value]:
            lo = s[0]
            mids = [b.add(lo, b.mul(width, _c(2 * p + 1))) for p in range(PAIRS)]
            spans = [(b.sub(m, width), m, b.add(m, width)) for m in mids]
            in_order = self.in_order(src, mids[0])
            for m in mids[1:]:
                in_order = b.and_(in_order, self.in_order(src, m))
            _if(b, in_order, lambda: self.copy(src, dst, lo, lo, group),
                lambda: self.merge_halves(src, dst, spans))
            return [b.add(lo, group)]

        (rest,) = _while(b, [_c(0)], lambda s: b.icmp_signed("<=", b.add(s[0], group), length),
                         pairs, "sort.pairs")

        def merge(lo: ir.Value) -> None:
            mid = _min(b, b.add(lo, width), length)
            hi = _min(b, b.add(mid, width), length)
            # A run without a second one is copied (`mid` clamped to read inside the row).
            in_order = b.or_(b.icmp_signed(">=", mid, hi),
                             self.in_order(src, _min(b, mid, b.sub(length, _c(1)))))
            _if(b, in_order, lambda: self.copy(src, dst, lo, lo, b.sub(hi, lo)),
                lambda: _if(b, b.icmp_signed("==", b.sub(mid, lo), b.sub(hi, mid)),
                            lambda: self.merge_halves(src, dst, [(lo, mid, hi)]),
                            lambda: self.merge_checked(src, dst, lo, mid, hi)))

        _for(b, rest, length, pair, merge, "sort.merges")

    def merge_halves(self, src: list[ir.Value], dst: list[ir.Value],
                     spans: Sequence[tuple[ir.Value, ir.Value, ir.Value]]) -> None:
        """Merges runs `[lo, mid)` and `[mid, hi)` of the same length for each span (all of
        the same length), in one loop of `mid - lo` steps: each step places one element
        from the front (the smallest left) and one from the back (the largest left) of
        every span, chains of loads independent of each other."""
        b = self.b
        one = _c(1)

        def step(state: list[ir.Value]) -> list[ir.Value]:
            s, new = state[0], [b.add(state[0], one)]
            for n, (lo, mid, hi) in enumerate(spans):
                i, j, ti, tj = state[1 + 4 * n: 5 + 4 * n]
                x, y = self.load(src, i), self.load(src, j)
                # Front: the right head goes first only if strictly less (stability).
                right = self.less(b, y, x)
                self.store(dst, b.add(lo, s), [b.select(right, u, v)
                                               for u, v in zip(y, x, strict=True)])
                # Back: the left tail goes last only if the right tail is strictly less.
                tx, ty = self.load(src, ti), self.load(src, tj)
                left = self.less(b, ty, tx)
                self.store(dst, b.sub(b.sub(hi, one), s), [b.select(left, u, v)
                                                           for u, v in zip(tx, ty, strict=True)])
                new += [b.add(i, b.zext(b.not_(right), _I64)), b.add(j, b.zext(right, _I64)),
                        b.sub(ti, b.zext(left, _I64)), b.sub(tj, b.zext(b.not_(left), _I64))]
            return new

        init = [_c(0)]
        for lo, mid, hi in spans:
            init += [lo, mid, b.sub(mid, one), b.sub(hi, one)]
        steps = b.sub(spans[0][1], spans[0][0])
        _while(b, init, lambda s: b.icmp_signed("<", s[0], steps), step, "sort.halves")

    def merge_checked(self, src: list[ir.Value], dst: list[ir.Value], lo: ir.Value,
                      mid: ir.Value, hi: ir.Value) -> None:
        """Merges runs `[lo, mid)` and `[mid, hi)` of any lengths, then copies the rest."""
        b = self.b

        def step(s: list[ir.Value]) -> list[ir.Value]:
            k, i, j = s
            x, y = self.load(src, i), self.load(src, j)
            right = self.less(b, y, x)
            self.store(dst, k, [b.select(right, u, v) for u, v in zip(y, x, strict=True)])
            return [b.add(k, _c(1)), b.add(i, b.zext(b.not_(right), _I64)),
                    b.add(j, b.zext(right, _I64))]

        k, i, j = _while(b, [lo, lo, mid], lambda s: b.and_(b.icmp_signed("<", s[1], mid),
                                                            b.icmp_signed("<", s[2], hi)),
                         step, "sort.checked")
        left = b.sub(mid, i)
        self.copy(src, dst, i, k, left)
        self.copy(src, dst, j, b.add(k, left), b.sub(hi, j))




def _memmove(b: ir.IRBuilder, dst: ir.Value, src: ir.Value, nbytes: int) -> None:
    fn = b.module.declare_intrinsic("llvm.memmove", [_PTR, _PTR, _I64])
    b.call(fn, [b.bitcast(dst, _PTR), b.bitcast(src, _PTR), _c(nbytes), ir.Constant(_I1, 0)])


def _min(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, y), x, y)


# -- stablehlo.sort ----------------------------------------------------------------------------

def _comparator(ctx: KernelContext, dts: Sequence[np.dtype]) -> Less:
    """The sort's comparator region as an internal function of compute-type scalars
    `(lhs_0, rhs_0, lhs_1, rhs_1, ...)` returning i1, and a `Less` calling it."""
    block = ctx.op.regions[0].block
    defined = set(block.args) | {r for inner in block.walk() for r in inner.results}
    if any(v not in defined for inner in block.walk() for v in inner.operands):
        raise Unsupported("sort comparator reads values from outside its region")
    types = [emitter.compute_type(dt) for dt in dts for _ in range(2)]
    fn = ir.Function(ctx.module, ir.FunctionType(_I1, types), name=ctx.program.fresh("sort_less"))
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    try:
        (out,) = emitter.emit_region(ctx.module, fn, builder, block, list(fn.args))
        if out.type != _I1:
            raise Unsupported("sort comparator does not return a predicate")
        builder.ret(out)
    except Unsupported:
        del ctx.module.globals[fn.name]
        raise

    def less(b: ir.IRBuilder, lhs: Sequence[ir.Value], rhs: Sequence[ir.Value]) -> ir.Value:
        args = []
        for x, y, dt in zip(lhs, rhs, dts, strict=True):
            args += [_to_compute(b, x, dt), _to_compute(b, y, dt)]
        return b.call(fn, args)

    return less


@program.register("stablehlo.sort")
def emit_sort(ctx: KernelContext) -> None:
    """Emits `stablehlo.sort`: every operand sorted along `dimension` by the comparator
    region, stably (the permutation of the first sorted order applied to all operands)."""
    op, b = ctx.op, ctx.builder
    shape = op.operands[0].type.shape
    dts = [v.type.dtype for v in op.operands]
    dim = int(op.attributes["dimension"])
    if math.prod(shape) == 0:
        return
    n = shape[dim]
    inner = math.prod(shape[dim + 1:])
    rows = math.prod(shape) // n
    if n == 1:
        for src, dst, dt in zip(ctx.operands, ctx.results, dts, strict=True):
            _memmove(b, dst, src, math.prod(shape) * _itemsize(dt))
        return
    sorter = _Sorter(b, ctx.program, dts, n, _comparator(ctx, dts))
    (first, second), owned = sorter.allocate(2)

    def row(r: ir.Value) -> None:
        base = b.add(b.mul(b.udiv(r, _c(inner)), _c(n * inner)), b.urem(r, _c(inner)))

        def at(t: ir.Value) -> ir.Value:
            return b.add(base, b.mul(t, _c(inner)))

        final = sorter.sort_row(lambda t: sorter.load(ctx.operands, at(t)), first, second)
        _for(b, _c(0), _c(n), _c(1),
             lambda t: sorter.store(ctx.results, at(t), sorter.load(final, t)), "sort.out")

    _for(b, _c(0), _c(rows), _c(1), row, "sort.rows")
    sorter.release(owned)


# -- chlo.top_k --------------------------------------------------------------------------------

def _descending(dt: np.dtype) -> Less:
    """`less` of XLA's total order reversed, on the first column (the values): floats by
    their bits, negative ones with the magnitude bits flipped."""
    dt = np.dtype(dt)
    is_float = dt.kind == "f" or dt in (_F16, _BF16)

    def key(b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
        width = _itemsize(dt) * 8
        it = ir.IntType(width)
        bits = raw if isinstance(raw.type, ir.IntType) else b.bitcast(raw, it)
        flipped = b.xor(bits, ir.Constant(it, (1 << (width - 1)) - 1))
        return b.select(b.icmp_signed("<", bits, ir.Constant(it, 0)), flipped, bits)

    def less(b: ir.IRBuilder, lhs: Sequence[ir.Value], rhs: Sequence[ir.Value]) -> ir.Value:
        x, y = lhs[0], rhs[0]
        if is_float:
            return b.icmp_signed(">", key(b, x), key(b, y))
        if dt.kind == "i":
            return b.icmp_signed(">", x, y)
        return b.icmp_unsigned(">", x, y)

    return less


@program.register("chlo.top_k")
def emit_top_k(ctx: KernelContext) -> None:
    """Emits `chlo.top_k`: along the last dimension, the `k` largest elements (XLA's total
    order; equal ones in index order) and their int32 indices.

    Each row streams through a buffer of `2k` candidates: once full, it is sorted and cut to
    its best `k`, and from then on only elements before the k-th best are taken (for most
    rows, one comparison per element; at worst O(n log k)). The buffer is sorted at the end.
    """
    op, b = ctx.op, ctx.builder
    x_type = op.operands[0].type
    dt = x_type.dtype
    if dt.kind not in "biuf" and dt not in (_F16, _BF16):
        raise Unsupported(f"top_k of {dt}")
    n = x_type.shape[-1]
    k = int(op.attributes["k"])
    rows = math.prod(x_type.shape[:-1])
    if rows == 0 or k == 0:
        return
    x, (values, indices) = ctx.operands[0], ctx.results
    cap = min(2 * k, n)
    sorter = _Sorter(b, ctx.program, [dt, np.dtype(np.int32)], cap, _descending(dt))
    (first, second), owned = sorter.allocate(2)
    cols = sorter.columns(first)
    count_slot, cut_slot = stack.entry_alloca(b, _I64), stack.entry_alloca(b, _I1)

    def best_first(count: ir.Value) -> None:
        """Sorts the buffer's `count` candidates and moves the best `k` to its front."""
        final = sorter.sort_row(lambda t: sorter.load(cols, t), first, second, count)
        sorter.copy(final, cols, _c(0), _c(0), _c(k), move=True)

    def consider(base: ir.Value, t: ir.Value) -> None:
        item = [b.load(b.gep(x, [b.add(base, t)], inbounds=True)), b.trunc(t, _I32)]
        # After a cut, an element is a candidate only if it comes before the k-th best.
        keep = b.select(b.load(cut_slot), sorter.less(b, item, sorter.load(cols, _c(k - 1))),
                        ir.Constant(_I1, 1))
        with b.if_then(keep):
            count = b.load(count_slot)
            sorter.store(cols, count, item)
            count = b.add(count, _c(1))
            b.store(count, count_slot)
            with b.if_then(b.icmp_signed("==", count, _c(cap))):
                best_first(count)
                b.store(_c(k), count_slot)
                b.store(ir.Constant(_I1, 1), cut_slot)

    def row(r: ir.Value) -> None:
        base = b.mul(r, _c(n))
        b.store(_c(0), count_slot)
        b.store(ir.Constant(_I1, 0), cut_slot)
        _for(b, _c(0), _c(n), _c(1), lambda t: consider(base, t), "top_k.scan")
        best_first(b.load(count_slot))
        out = b.mul(r, _c(k))
        _for(b, _c(0), _c(k), _c(1),
             lambda t: sorter.store([values, indices], b.add(out, t), sorter.load(cols, t)),
             "top_k.out")

    _for(b, _c(0), _c(rows), _c(1), row, "top_k.rows")
    sorter.release(owned)
