"""Reference kernels of StableHLO's reductions, windows and sorting: `reduce`, `reduce_window`,
`select_and_scatter`, `sort`, `chlo.top_k` and `optimization_barrier`.

The computations of these ops are regions. `RegionFn` runs a region on whole arrays when all
of its ops are elementwise (the common case: `add`, `compare`/`select` pairs, a sort
comparator), so a reduction costs one pass of the region per reduced element rather than
one per output element; any other region runs element by element through the interpreter.

Monoid regions (a single `add`, `multiply`, `maximum`, `minimum`, `and`, `or` or `xor` of
the two block arguments) with their identity as the initial value take a NumPy fast path
with XLA CPU's semantics: max/min propagate NaN, sums start from +0.0, and float16/bfloat16
are accumulated in float32 and rounded once (as XLA CPU does, where the general region path
rounds after every step). Which regions are monoids, and their identities, is
`numerics.monoids`'s to say.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, kernel_builders, register
from justjax._src.backends.reference.kernels import elementwise as elementwise_kernels
from justjax._src.core import dtypes
from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op
from justjax._src.numerics import monoids
from justjax._src.numerics.conversions import round_from_float32, widen_low_precision
from justjax._src.numerics.monoids import max_identity, min_identity
from justjax._src.numerics.shapes import to_last_axis
from justjax._src.numerics.windows import cumulative_axis, window_attributes

__all__ = [
    "RegionFn", "reduce_sum", "reduce_prod", "reduce_minmax", "complex_choose", "fix_zero_signs", "zero_of_sign", "positive_zero_sum",
    "dilated_padded", "window_taps", "window_fold", "real_window_taps", "total_order_key", "top_k",
]



# ---------------------------------------------------------------------------------------------
# Reductions with XLA's semantics (also the eager implementations of reduce_sum & co).

def positive_zero_sum(result: np.ndarray) -> np.ndarray:
    """XLA starts a sum from +0.0, so sums of -0.0 are +0.0; adding +0.0 does exactly that."""
    if dtypes.is_inexact(result.dtype):
        return result + np.zeros((), result.dtype)
    return result


def reduce_sum(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """Sum over `axes` in `x`'s dtype (integers wrap), from +0.0."""
    if not axes:
        return x
    return positive_zero_sum(np.sum(x, axis=tuple(axes), dtype=x.dtype))


def reduce_prod(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """Product over `axes` in `x`'s dtype (integers wrap)."""
    if not axes:
        return x
    return np.prod(x, axis=tuple(axes), dtype=x.dtype)


def complex_choose(acc: np.ndarray, x: np.ndarray, direction: str) -> np.ndarray:
    """XLA's complex max/min: compare real parts, imaginary parts on a tie; comparisons with NaN
    are false, so the second operand is taken."""
    compare = np.greater if direction == "max" else np.less
    real_eq = np.real(acc) == np.real(x)
    pick_acc = np.where(real_eq, compare(np.imag(acc), np.imag(x)),
                        compare(np.real(acc), np.real(x)))
    return np.where(pick_acc, acc, x)


def _complex_fold(x: np.ndarray, axes: Sequence[int], direction: str) -> np.ndarray:
    flat = to_last_axis(x, axes)
    identity = max_identity if direction == "max" else min_identity
    acc = np.full(flat.shape[:-1], identity(x.dtype), dtype=x.dtype)
    for j in range(flat.shape[-1]):
        acc = complex_choose(acc, flat[..., j], direction)
    return acc


def fix_zero_signs(result: np.ndarray, has_signed_zero: np.ndarray, direction: str
                   ) -> np.ndarray:
    """Max prefers +0.0 over -0.0 and min prefers -0.0, as XLA's maximum/minimum do."""
    if direction == "max":
        return np.where((result == 0) & has_signed_zero, np.zeros((), result.dtype), result)
    return np.where((result == 0) & has_signed_zero, -np.zeros((), result.dtype), result)


def zero_of_sign(x: np.ndarray, direction: str) -> np.ndarray:
    """Where `x` holds the zero that `direction` prefers (+0.0 for max, -0.0 for min)."""
    negative = np.signbit(x)
    return (x == 0) & (~negative if direction == "max" else negative)


def reduce_minmax(x: np.ndarray, axes: Sequence[int], direction: str) -> np.ndarray:
    """Max (`direction` "max") or min over `axes`: NaN wins, +0.0 > -0.0, complex numbers
    compare lexicographically; an empty reduction gives the identity."""
    axes = tuple(axes)
    if not axes:
        return x
    if dtypes.is_complex(x.dtype):
        return _complex_fold(x, axes, direction)
    identity = (max_identity if direction == "max" else min_identity)(x.dtype)
    reducer = np.max if direction == "max" else np.min
    result = np.asarray(reducer(x, axis=axes, initial=identity))
    if dtypes.is_float(x.dtype):
        result = fix_zero_signs(result, np.any(zero_of_sign(x, direction), axis=axes),
                                direction)
    return result


def _bitwise(ufunc: np.ufunc) -> Callable[[np.ndarray, Sequence[int]], np.ndarray]:
    def reduce(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
        return ufunc.reduce(x, axis=tuple(axes)) if axes else x
    return reduce


# ---------------------------------------------------------------------------------------------
# Running regions.

def _vectorizable(block: ir.Block) -> bool:
    """Whether every op of the block is elementwise (or a scalar constant): the kernels of
    elementwise ops compute with NumPy broadcasting, so such a region runs on whole arrays
    at once."""
    for op in block.ops[:-1]:
        if op.regions or not opcodes.is_elementwise(op.opcode):
            if op.opcode != "stablehlo.constant" or op.result.type.rank != 0:
                return False
    return True


class RegionFn:
    """A region as a function of arrays: `fn(args) -> results`, each argument an array of
    the block argument's dtype; arguments broadcast together and every result has their
    common shape."""

    def __init__(self, region: ir.Region, compiler: Compiler) -> None:
        block = region.block
        self.block = block
        self.result_dtypes = [v.type.dtype for v in block.terminator.operands]
        self.arg_dtypes = [v.type.dtype for v in block.args]
        if _vectorizable(block):
            self._steps = [(kernel_builders[op.opcode](op, compiler), op)
                           for op in block.ops[:-1]]
            self._scalar = None
        else:
            self._steps = None
            self._scalar = compiler.region(region)

    def __call__(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        args = [np.asarray(a, dtype) for a, dtype in zip(args, self.arg_dtypes, strict=True)]
        shape = np.broadcast_shapes(*[a.shape for a in args])
        if self._steps is not None:
            return self._run_vectorized(args, shape)
        return self._run_elementwise(args, shape)

    def _run_vectorized(self, args: list[np.ndarray], shape: tuple[int, ...]
                        ) -> list[np.ndarray]:
        env: dict[ir.Value, Any] = dict(zip(self.block.args, args, strict=True))
        for kernel, op in self._steps:
            result = kernel(*[env[v] for v in op.operands])
            env[op.result] = result
        return [np.broadcast_to(np.asarray(env[v], dtype), shape)
                for v, dtype in zip(self.block.terminator.operands, self.result_dtypes,
                                    strict=True)]

    def _run_elementwise(self, args: list[np.ndarray], shape: tuple[int, ...]
                         ) -> list[np.ndarray]:
        args = [np.broadcast_to(a, shape) for a in args]
        outs = [np.empty(shape, dtype) for dtype in self.result_dtypes]
        for index in np.ndindex(*shape):
            results = self._scalar([np.asarray(a[index]) for a in args])
            for out, value in zip(outs, results, strict=True):
                out[index] = value
        return outs


class _Monoid(NamedTuple):
    """A monoid region's fast path: its opcode (`numerics.monoids` gives its identity), the
    reduction over axes with XLA's semantics (float max/min: NaN wins, +0.0 > -0.0) and the
    NumPy ufunc combining two arrays (XLA's max/min for those, which NumPy's ufuncs are not
    on signed zeros)."""

    opcode: str
    reduce: Callable[[np.ndarray, Sequence[int]], np.ndarray]
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray]

    def starts_from_identity(self, init: np.ndarray) -> bool:
        """Whether `init` is the monoid's identity (the fast path's condition)."""
        return bool(np.asarray(init) == monoids.identity(self.opcode, init.dtype))


_MONOIDS: dict[str, _Monoid] = {m.opcode: m for m in (
    _Monoid("stablehlo.add", reduce_sum, np.add),
    _Monoid("stablehlo.multiply", reduce_prod, np.multiply),
    _Monoid("stablehlo.maximum", lambda x, axes: reduce_minmax(x, axes, "max"),
            elementwise_kernels.maximum),
    _Monoid("stablehlo.minimum", lambda x, axes: reduce_minmax(x, axes, "min"),
            elementwise_kernels.minimum),
    _Monoid("stablehlo.and", _bitwise(np.bitwise_and), np.bitwise_and),
    _Monoid("stablehlo.or", _bitwise(np.bitwise_or), np.bitwise_or),
    _Monoid("stablehlo.xor", _bitwise(np.bitwise_xor), np.bitwise_xor))}


def _monoid(region: ir.Region, dtype: np.dtype) -> _Monoid | None:
    """The fast path of a monoid region over `dtype` (`numerics.monoids.region_monoid`)."""
    opcode = monoids.region_monoid(region, dtype)
    return None if opcode is None else _MONOIDS[opcode]


def _starts_from_identity(monoid: _Monoid | None, init: np.ndarray) -> bool:
    """Whether the fast path applies: a monoid region and its identity as initial value."""
    return monoid is not None and monoid.starts_from_identity(init)


# ---------------------------------------------------------------------------------------------
# stablehlo.reduce

def _fold_columns(body: RegionFn, inits: Sequence[np.ndarray], flats: Sequence[np.ndarray]
                  ) -> list[np.ndarray]:
    """Left fold `acc = body(acc, x_j)` from the initial values over the columns of `(M, N)`
    operands (vectorized over M when the body allows)."""
    m, n = flats[0].shape
    accs = [np.broadcast_to(init, (m,)) for init in inits]
    for j in range(n):
        accs = body([*accs, *[f[:, j] for f in flats]])
    return accs


@register("stablehlo.reduce")
def _reduce(op: Op, compiler: Compiler) -> Kernel:
    dims = tuple(op.attributes["dimensions"])
    count = len(op.results)
    out_types = op.result_types
    region = op.regions[0]
    monoid = _monoid(region, op.operands[0].type.dtype) if count == 1 else None
    body = RegionFn(region, compiler)

    def kernel(*args: np.ndarray) -> Any:
        operands, inits = args[:count], args[count:]
        if not dims:
            # XLA turns a reduction over no dimensions into its operand.
            results = [np.array(x, copy=True) for x in operands]
        elif _starts_from_identity(monoid, inits[0]):
            total = monoid.reduce(widen_low_precision(operands[0]), dims)
            results = [round_from_float32(total, out_types[0].dtype)]
        else:
            results = _reduce_general(body, operands, inits, dims)
        results = [np.asarray(r).astype(t.dtype, copy=False).reshape(t.shape)
                   for r, t in zip(results, out_types, strict=True)]
        return results[0] if count == 1 else results

    return kernel


def _reduce_general(body: RegionFn, operands: Sequence[np.ndarray],
                    inits: Sequence[np.ndarray], dims: tuple[int, ...]) -> list[np.ndarray]:
    flats = [to_last_axis(x, dims) for x in operands]
    out_shape = flats[0].shape[:-1]
    n = flats[0].shape[-1]
    m = math.prod(out_shape)
    flats = [f.reshape((m, n)) for f in flats]
    if m == 0:
        return [np.empty(out_shape, init.dtype) for init in inits]
    return [r.reshape(out_shape) for r in _fold_columns(body, inits, flats)]


# ---------------------------------------------------------------------------------------------
# Windows: stablehlo.reduce_window and stablehlo.select_and_scatter

def dilated_padded(x: np.ndarray, fill: Any, padding: Sequence[tuple[int, int]],
                   base_dilation: Sequence[int]) -> np.ndarray:
    """`x` with `base_dilation - 1` holes between elements and `padding` around, both holding
    `fill`; negative padding crops."""
    if any(d != 1 for d in base_dilation):
        shape = tuple(0 if n == 0 else (n - 1) * d + 1
                      for n, d in zip(x.shape, base_dilation, strict=True))
        dilated = np.full(shape, fill, x.dtype)
        dilated[tuple(slice(None, None, d) for d in base_dilation)] = x
        x = dilated
    x = x[tuple(slice(max(-lo, 0), size - max(-hi, 0))
                for size, (lo, hi) in zip(x.shape, padding, strict=True))]
    if not padding:
        return x
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    return np.pad(x, widths, constant_values=np.asarray(fill, x.dtype))


def window_taps(padded: np.ndarray, out_shape: Sequence[int], window_dimensions: Sequence[int],
                window_strides: Sequence[int], window_dilation: Sequence[int]
                ) -> list[np.ndarray]:
    """One strided view of `padded` per window tap (row-major); view[i] is that tap of output
    window i."""
    if math.prod(out_shape) == 0:
        return []
    views = []
    for tap in np.ndindex(*window_dimensions):
        views.append(padded[tuple(
            slice(t * r, t * r + (size - 1) * s + 1, s)
            for t, r, size, s in zip(tap, window_dilation, out_shape, window_strides,
                                     strict=True))])
    return views


def window_fold(x: np.ndarray, init: Any, combine: Callable, out_shape: Sequence[int],
                window_dimensions: Sequence[int], window_strides: Sequence[int],
                padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
                window_dilation: Sequence[int]) -> np.ndarray:
    """Each window of `x` (holes and padding holding `init`) folded with the NumPy `combine`
    from `init`, tap by tap."""
    padded = dilated_padded(x, init, padding, base_dilation)
    acc = np.full(tuple(out_shape), init, x.dtype)
    for view in window_taps(padded, out_shape, window_dimensions, window_strides,
                            window_dilation):
        acc = combine(acc, view)
    return acc


@register("stablehlo.reduce_window")
def _reduce_window(op: Op, compiler: Compiler) -> Kernel:
    count = len(op.results)
    out_types = op.result_types
    params = window_attributes(op, op.operands[0].type.rank)
    region = op.regions[0]
    monoid = _monoid(region, op.operands[0].type.dtype) if count == 1 else None
    body = RegionFn(region, compiler)

    def kernel(*args: np.ndarray) -> Any:
        operands, inits = args[:count], args[count:]
        out_shape = out_types[0].shape
        if _starts_from_identity(monoid, inits[0]):
            x = widen_low_precision(operands[0])
            cumulative = cumulative_axis(x.shape, **params)
            if cumulative is not None:
                results = [_accumulate(x, monoid.combine, *cumulative)]
            else:
                results = [window_fold(x, np.asarray(inits[0]).astype(x.dtype), monoid.combine,
                                       out_shape, **params)]
        else:
            results = _reduce_window_general(body, operands, inits, out_shape, params)
        results = [np.asarray(r).astype(t.dtype, copy=False)
                   for r, t in zip(results, out_types, strict=True)]
        return results[0] if count == 1 else results

    return kernel


def _accumulate(x: np.ndarray, combine: Callable[[np.ndarray, np.ndarray], np.ndarray],
                axis: int, reverse: bool) -> np.ndarray:
    """The running `combine` along `axis` (from the end when `reverse`)."""
    if reverse:
        x = np.flip(x, axis)
    if isinstance(combine, np.ufunc):
        result = combine.accumulate(x, axis=axis, dtype=x.dtype)
    else:  # XLA's max/min: a running fold, vectorized over the other axes
        result = np.moveaxis(np.array(x, copy=True), axis, 0)
        for i in range(1, result.shape[0]):
            result[i] = combine(result[i - 1], result[i])
        result = np.moveaxis(result, 0, axis)
    if combine is np.add:
        result = positive_zero_sum(result)
    return np.flip(result, axis) if reverse else result


def _reduce_window_general(body: RegionFn, operands: Sequence[np.ndarray],
                           inits: Sequence[np.ndarray], out_shape: tuple[int, ...],
                           params: dict[str, Any]) -> list[np.ndarray]:
    taps_per_operand = [
        window_taps(dilated_padded(x, init, params["padding"], params["base_dilation"]),
                    out_shape, params["window_dimensions"], params["window_strides"],
                    params["window_dilation"])
        for x, init in zip(operands, inits, strict=True)]
    valid_taps = real_window_taps(operands[0].shape, out_shape, params)
    accs = [np.full(out_shape, init, init.dtype) for init in inits]
    for valid, *taps in zip(valid_taps, *taps_per_operand, strict=True):
        # As XLA's CPU backend: the initial value enters each window once, and padding or
        # base-dilation holes are skipped rather than combined as more initial values.
        accs = [np.where(valid, new, old) for new, old in zip(body([*accs, *taps]), accs,
                                                              strict=True)]
    return accs


def real_window_taps(shape: Sequence[int], out_shape: Sequence[int], params: dict[str, Any]
                     ) -> list[np.ndarray]:
    """Per window tap, where it falls on an element of the operand (not padding or a hole)."""
    mask = dilated_padded(np.ones(tuple(shape), bool), False, params["padding"],
                          params["base_dilation"])
    return window_taps(mask, out_shape, params["window_dimensions"], params["window_strides"],
                       params["window_dilation"])


@register("stablehlo.select_and_scatter")
def _select_and_scatter(op: Op, compiler: Compiler) -> Kernel:
    select = RegionFn(op.regions[0], compiler)
    scatter = RegionFn(op.regions[1], compiler)
    rank = op.operands[0].type.rank
    params = window_attributes(op, rank)
    dtype = op.result.type.dtype

    def kernel(operand: np.ndarray, source: np.ndarray, init: np.ndarray) -> np.ndarray:
        ones = (1,) * rank
        pads = params["padding"]
        taps = window_taps(dilated_padded(operand, np.zeros((), operand.dtype), pads, ones),
                           source.shape, params["window_dimensions"], params["window_strides"],
                           ones)
        valid = window_taps(dilated_padded(np.ones(operand.shape, bool), False, pads, ones),
                            source.shape, params["window_dimensions"],
                            params["window_strides"], ones)
        choice, chosen_any = _select_in_windows(select, taps, valid, source.shape)
        padded_shape = tuple(n + lo + hi for n, (lo, hi) in zip(operand.shape, pads,
                                                                strict=True))
        scattered = np.full(padded_shape, init, dtype)
        for index, tap in enumerate(np.ndindex(*params["window_dimensions"])):
            windows = np.nonzero((choice == index) & chosen_any)
            # Within one tap distinct windows reach distinct elements.
            targets = tuple(i * s + t for i, s, t in zip(windows, params["window_strides"], tap,
                                                         strict=True))
            scattered[targets] = scatter([scattered[targets], source[windows]])[0]
        return _unpad(scattered, operand.shape, pads, init, dtype)

    return kernel


def _select_in_windows(select: RegionFn, taps: Sequence[np.ndarray],
                       valid: Sequence[np.ndarray], shape: tuple[int, ...]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Per window, the tap the `select` region chooses among the valid (not padding) ones, in
    row-major order: a later element replaces the current one when `select(current, later)`
    is false. Also where any tap is valid."""
    choice = np.zeros(shape, np.int64)
    chosen_any = np.zeros(shape, bool)
    best = None
    for index, (tap, ok) in enumerate(zip(taps, valid, strict=True)):
        if best is None:
            best = np.array(tap, copy=True)
            take = ok
        else:
            keep = select([best, tap])[0].astype(bool)
            take = ok & (~chosen_any | ~keep)
        best = np.where(take, tap, best)
        choice = np.where(take, index, choice)
        chosen_any = chosen_any | ok
    return choice, chosen_any


def _unpad(padded: np.ndarray, shape: tuple[int, ...], pads: Sequence[tuple[int, int]],
           fill: Any, dtype: np.dtype) -> np.ndarray:
    """The elements of the operand's own positions in its padded form; positions cropped by
    negative padding get `fill`."""
    result = np.full(shape, fill, dtype)
    inner = tuple(slice(max(-lo, 0), size - max(-hi, 0))
                  for size, (lo, hi) in zip(shape, pads, strict=True))
    kept = tuple(slice(max(lo, 0), max(lo, 0) + max(s.stop - s.start, 0))
                 for s, (lo, _) in zip(inner, pads, strict=True))
    result[inner] = padded[kept]
    return result


# ---------------------------------------------------------------------------------------------
# stablehlo.sort and chlo.top_k

def _sorted_permutation(comparator: RegionFn, rows: Sequence[np.ndarray]) -> np.ndarray:
    """The stable order of each row of the `(R, N)` operands under the comparator (a strict
    weak order), as flat indices into the rows: a bottom-up merge sort whose merges place each
    element by a binary search in the other run, every search step one comparator call on
    all elements at once."""
    r, n = rows[0].shape
    flats = [row.reshape(-1) for row in rows]
    row_start = (np.arange(r) * n)[:, None]
    perm = row_start + np.arange(n)
    pos = np.arange(n)
    width = 1
    while width < n:
        start = (pos // (2 * width)) * (2 * width)
        offset = pos - start
        in_first = offset < width
        other_start = np.where(in_first, start + width, start)
        other_len = np.where(in_first, np.clip(n - (start + width), 0, width), width)
        lo = np.zeros((r, n), np.int64)
        hi = np.broadcast_to(other_len, (r, n)).copy()
        flat_perm = perm.reshape(-1)
        while True:
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            probe = flat_perm[row_start + np.minimum(other_start + mid, n - 1)]
            # First-run elements count the second run's elements strictly less than them;
            # second-run elements count the first run's elements not greater (stability).
            lhs = np.where(in_first, probe, perm)
            rhs = np.where(in_first, perm, probe)
            args = [a for f in flats for a in (f[lhs], f[rhs])]
            less = comparator(args)[0].astype(bool)
            go_right = less == in_first
            lo = np.where(active & go_right, mid + 1, lo)
            hi = np.where(active & ~go_right, mid, hi)
        new_perm = np.empty_like(flat_perm)
        new_perm[row_start + start + np.where(in_first, offset, offset - width) + lo] = perm
        perm = new_perm.reshape(r, n)
        width *= 2
    return perm


@register("stablehlo.sort")
def _sort(op: Op, compiler: Compiler) -> Kernel:
    comparator = RegionFn(op.regions[0], compiler)
    dimension = int(op.attributes["dimension"])
    single = len(op.results) == 1

    def kernel(*operands: np.ndarray) -> Any:
        moved = [np.moveaxis(x, dimension, -1) for x in operands]
        shape = moved[0].shape
        n = shape[-1]
        if n <= 1 or math.prod(shape) == 0:
            results = [np.array(x, copy=True) for x in operands]
        else:
            rows = [m.reshape(-1, n) for m in moved]
            perm = _sorted_permutation(comparator, rows)
            results = [np.moveaxis(row.reshape(-1)[perm].reshape(shape), -1, dimension)
                       for row in rows]
        return results[0] if single else results

    return kernel


def total_order_key(x: np.ndarray) -> np.ndarray:
    """Integers ordered as XLA's total order on `x`'s values (-NaN < -inf < ... < -0.0 < 0.0 <
    ... < inf < NaN; floats by their bit patterns)."""
    if dtypes.is_float(x.dtype):
        bits = x.astype(np.float64).view(np.int64)
        # Negative floats order by decreasing magnitude: flip their magnitude bits.
        return np.where(bits < 0, bits ^ np.int64(0x7FFF_FFFF_FFFF_FFFF), bits)
    if x.dtype == np.uint64:
        return x
    return x.astype(np.int64)


def top_k(x: np.ndarray, k: int, axis: int = -1) -> list[np.ndarray]:
    """The `k` largest elements along `axis` in XLA's total order, largest first and equal
    ones in index order, with their int32 indices."""
    # ~key reverses the order without overflow, so a stable ascending sort of it puts the
    # largest first and keeps equal elements in index order.
    order = np.argsort(~total_order_key(x), axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int32)]


@register("chlo.top_k")
def _top_k(op: Op, compiler: Compiler) -> Kernel:
    k = int(op.attributes["k"])
    return lambda x: top_k(x, k)


@register("stablehlo.optimization_barrier")
def _optimization_barrier(op: Op, compiler: Compiler) -> Kernel:
    single = len(op.results) == 1
    # The identity: results are the operands (kernels never mutate their inputs).
    return lambda *args: args[0] if single else list(args)
