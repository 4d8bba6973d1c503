"""Canonicalization and algebraic simplification, as XLA's AlgebraicSimplifier does them but
never changing a result (issue #8).

Each rewrite replaces an op's results by values that are equal element for element, bit
for bit, on every input: NaNs stay NaNs, signed zeros keep their sign, integers wrap as
before. Where XLA takes a liberty with floats we do not:

  x + 0      only for integers; for floats only x + (-0.0) (x + 0.0 turns -0.0 into +0.0)
  x - 0      integers, and floats for x - (+0.0) (x - (-0.0) turns -0.0 into +0.0)
  x * 0      only for integers (inf * 0 and nan * 0 are NaN)
  x - x, x == x, x < x ...   only for integers and bools (NaN - NaN, NaN == NaN)
  x * 1, x / 1, x ** 1, x ** 0 (= 1, even for NaN, as IEEE pow), min/max(x, x),
  max(x, -inf), min(x, +inf), --x, not not x, |abs(x)|: exact for every real type.

Complex values get only the structural rewrites (a complex x * 1 computes inf * 0 inside).
Not exact but XLA's, so kept: x * convert(p) of a boolean p is select(p, x, 0) (inf * False
is 0). Also: select with a constant predicate, equal branches or a negated predicate; and/or/xor
with themselves, zero or all ones; convert round trips through a type holding every value;
real/imag of complex; dynamic slices with constant starts (clamped) to slices; a replica's
own block of an all_gather to the operand it gave.

Reductions: a reduce over no dimensions is its operand (XLA's rule); over an empty
dimension it is its init value broadcast; over size-1 dimensions only, with a single
operand whose body is one of add/multiply/maximum/minimum/and/or/xor and whose init value
is that op's identity, it is a reshape -- except float sums: the reference backend starts
every float sum from +0.0 (so a sum of -0.0 is +0.0, whatever the init), while the reshape
would give -0.0. (XLA does make this rewrite: a jitted `jnp.sum` of `[[-0.0]]` over axis 1
gives -0.0 in JAX.) A dot whose contracting dimensions hold one element in total is a
single product per output element (no sum, no rounding but the product's) and becomes a
broadcast multiply (real dtypes only).

The passes walk every block (function bodies and nested regions) once, in order, so chains
fold in one run; values they stop using are removed when their ops have no effect. They
are linear in the module size (each op is looked at once; created ops once more).

Passes, to run in a `FixedPoint` after inlining (so `select` of `jnp.where` is visible):
`Canonicalize` (shape ops), `AlgebraicSimplify` (arithmetic), or `Simplify` (both in one
walk, the cheaper choice).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Block, Op, TensorType, Value
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.numerics import monoids

__all__ = ["Canonicalize", "AlgebraicSimplify", "Simplify"]

# A rule looks at one op whose operands are already simplified and returns the values
# replacing its results (a list for multi-result ops), or None to keep the op.
Rule = Callable[["_Rewriter", Op], "Value | list[Value] | None"]


# ---------------------------------------------------------------------------------------------
# The rewriting engine.

class _Rewriter:
    """One walk over a module applying `rules` (opcode -> rules) to every op."""

    def __init__(self, rules: dict[str, list[Rule]]) -> None:
        self.rules = rules
        self.replaced: dict[Value, Value] = {}
        self.producer: dict[Value, Op] = {}
        self.pending: list[Op] = []
        self.splats: dict[Value, np.ndarray | None] = {}
        self.changed = False

    def run(self, module: ir.Module) -> bool:
        for fn in module.functions:
            self.block(fn.body)
        if self.changed:
            for fn in module.functions:
                _remove_dead(fn.body)
        return self.changed

    def block(self, block: Block) -> None:
        out: list[Op] = []
        for op in block.ops:
            op.operands = [self.replaced.get(v, v) for v in op.operands]
            for region in op.regions:
                self.block(region.block)
            new = self.simplify(op)
            out.extend(self.pending)
            self.pending = []
            if new is None:
                out.append(op)
                self.define(op)
            else:
                self.replace(op, new)
        block.ops = out

    def simplify(self, op: Op) -> list[Value] | None:
        """The values replacing `op`'s results, from the first rule that applies."""
        for rule in self.rules.get(op.opcode, ()):
            new = rule(self, op)
            if new is not None:
                return [new] if isinstance(new, Value) else list(new)
        return None

    def define(self, op: Op) -> None:
        for v in op.results:
            self.producer[v] = op

    def replace(self, op: Op, new: Sequence[Value]) -> None:
        for old, value in zip(op.results, new, strict=True):
            if old.type != value.type:
                raise AssertionError(f"simplify: {op.opcode} rewritten to a {value.type} "
                                     f"value for a {old.type} result")
            self.replaced[old] = value
        self.changed = True

    # -- building ---------------------------------------------------------------------------

    def emit(self, opcode: str, operands: Sequence[Value], result_type: TensorType,
             **attributes: Any) -> Value:
        """A new op before the current one, itself simplified first (so a composed transpose
        that is the identity gives its operand)."""
        op = Op(opcode, list(operands), [Value(result_type)], attributes)
        new = self.simplify(op)
        if new is not None:
            return new[0]
        self.pending.append(op)
        self.define(op)
        return op.result

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        if x.type.shape == tuple(shape):
            return x
        return self.emit("stablehlo.reshape", [x], TensorType(shape, x.type.dtype))

    def broadcast(self, x: Value, result_type: TensorType, dims: Sequence[int]) -> Value:
        if x.type == result_type and tuple(dims) == tuple(range(result_type.rank)):
            return x
        return self.emit("stablehlo.broadcast_in_dim", [x], result_type,
                         broadcast_dimensions=tuple(dims))

    def transpose(self, x: Value, perm: Sequence[int]) -> Value:
        if tuple(perm) == tuple(range(len(perm))):
            return x
        shape = tuple(x.type.shape[p] for p in perm)
        return self.emit("stablehlo.transpose", [x], TensorType(shape, x.type.dtype),
                         permutation=tuple(perm))

    def convert(self, x: Value, dtype: np.dtype) -> Value:
        if x.type.dtype == dtype:
            return x
        return self.emit("stablehlo.convert", [x], TensorType(x.type.shape, dtype))

    def filled(self, value: Any, result_type: TensorType) -> Value:
        """`value` in every element of `result_type`: a scalar constant, broadcast."""
        scalar = np.asarray(value, dtype=result_type.dtype)
        const = Op("stablehlo.constant", [], [Value(TensorType((), result_type.dtype))],
                   {"value": scalar})
        self.pending.append(const)
        self.define(const)
        if result_type.shape == ():
            return const.result
        return self.broadcast(const.result, result_type, ())

    # -- looking at operands ----------------------------------------------------------------

    def source(self, v: Value, opcode: str) -> Op | None:
        """The op defining `v` if it is an `opcode` op."""
        op = self.producer.get(v)
        return op if op is not None and op.opcode == opcode else None

    def splat(self, v: Value) -> np.ndarray | None:
        """The 0-d value of every element of `v` when it is a constant holding one value
        (bit for bit) everywhere, directly or broadcast; else None."""
        if v in self.splats:
            return self.splats[v]
        found = None
        op = self.producer.get(v)
        if op is not None and op.opcode == "stablehlo.constant":
            found = _uniform(np.asarray(op.attributes["value"]))
        elif op is not None and op.opcode in ("stablehlo.broadcast_in_dim", "stablehlo.reshape"):
            found = self.splat(op.operands[0])
        self.splats[v] = found
        return found

    def is_value(self, v: Value, value: float, negative_zero: bool | None = None) -> bool:
        """Whether every element of `v` is `value` (for a zero of a float type, of the sign
        `negative_zero` asks for; None accepts both)."""
        s = self.splat(v)
        if s is None or dtypes.is_complex(s.dtype):
            return False
        if dtypes.is_bool(s.dtype):
            return bool(s) == bool(value)
        wide = s.astype(np.float64) if dtypes.is_float(s.dtype) else int(s)
        if wide != value:
            return False
        if value == 0 and negative_zero is not None and dtypes.is_float(s.dtype):
            return bool(np.signbit(wide)) == negative_zero
        return True


def _uniform(array: np.ndarray) -> np.ndarray | None:
    """The one value of `array` when all its elements have the same bits."""
    if array.size == 0 or dtypes.is_complex(array.dtype):
        return None
    flat = np.ascontiguousarray(array).reshape(-1)
    bits = flat.view(np.dtype(f"u{flat.dtype.itemsize}"))
    if array.size > 1 and not np.all(bits == bits[0]):
        return None
    return flat[0].reshape(())


def _removable(op: Op) -> bool:
    """Ops that may go when nothing reads them: pure StableHLO/CHLO ops with results (not
    calls or custom calls, whose effects this pass does not look into)."""
    if not op.results or op.opcode in ("stablehlo.custom_call", "func.call"):
        return False
    return op.opcode.startswith(("stablehlo.", "chlo.")) and not util.has_side_effect(op)


def _remove_dead(body: Block) -> None:
    """Removes the removable ops of `body` (and its regions) whose results nobody reads."""
    counts: dict[Value, int] = {}
    for op in body.walk():
        for v in op.operands:
            counts[v] = counts.get(v, 0) + 1
    _sweep(body, counts)


def _sweep(block: Block, counts: dict[Value, int]) -> None:
    # Backwards, so an op's readers are gone before the op is looked at.
    kept: list[Op] = []
    for op in reversed(block.ops):
        if _removable(op) and all(counts.get(r, 0) == 0 for r in op.results):
            for inner in [op, *(o for r in op.regions for o in r.block.walk())]:
                for v in inner.operands:
                    counts[v] -= 1
            continue
        for region in op.regions:
            _sweep(region.block, counts)
        kept.append(op)
    block.ops = kept[::-1]


# ---------------------------------------------------------------------------------------------
# Dtype classes.

def _real(dtype: np.dtype) -> bool:
    return dtypes.is_float(dtype) or dtypes.is_int(dtype)


def _integral(dtype: np.dtype) -> bool:
    """Integers and bools: types without NaN or signed zeros."""
    return dtypes.is_int(dtype) or dtypes.is_bool(dtype)


def _holds_exactly(small: np.dtype, big: np.dtype) -> bool:
    """Whether every value of `small` converts to `big` and back unchanged."""
    if small == big or dtypes.is_bool(small):
        return True
    if dtypes.is_float(small) and dtypes.is_float(big):
        fs, fb = dtypes.finfo(small), dtypes.finfo(big)
        return fb.nmant >= fs.nmant and fb.maxexp >= fs.maxexp and fb.minexp <= fs.minexp
    if dtypes.is_int(small) and dtypes.is_int(big):
        si, bi = dtypes.iinfo(small), dtypes.iinfo(big)
        return bi.min <= si.min and bi.max >= si.max
    if dtypes.is_int(small) and dtypes.is_float(big):
        si = dtypes.iinfo(small)
        limit = 2 ** (dtypes.finfo(big).nmant + 1)
        return -limit <= si.min and si.max <= limit
    return False


# ---------------------------------------------------------------------------------------------
# Canonicalization: shape ops.

def _dims(op: Op, name: str) -> tuple[int, ...]:
    return tuple(int(d) for d in op.attributes[name])


def _increasing(dims: Sequence[int]) -> bool:
    return all(a < b for a, b in zip(dims, dims[1:]))


def _scalar_broadcast(rw: _Rewriter, v: Value) -> Value | None:
    """`s` when `v` is `broadcast_in_dim(s)` of a scalar `s`."""
    op = rw.source(v, "stablehlo.broadcast_in_dim")
    if op is not None and op.operands[0].type.shape == ():
        return op.operands[0]
    return None


def _reshape(rw: _Rewriter, op: Op) -> Value | None:
    """Reshape to the same type; reshape of reshape; reshape of a broadcast scalar."""
    x, out = op.operands[0], op.result.type
    if x.type == out:
        return x
    inner = rw.source(x, "stablehlo.reshape")
    if inner is not None:
        return rw.reshape(inner.operands[0], out.shape)
    scalar = _scalar_broadcast(rw, x)
    if scalar is not None:
        return rw.broadcast(scalar, out, ())
    return None


def _transpose(rw: _Rewriter, op: Op) -> Value | None:
    """Identity permutations; transpose of transpose (composed); transposes moving only
    size-1 dimensions (reshapes); transpose of a broadcast (a broadcast, when its
    dimensions stay in order)."""
    x, perm = op.operands[0], _dims(op, "permutation")
    if perm == tuple(range(len(perm))):
        return x
    inner = rw.source(x, "stablehlo.transpose")
    if inner is not None:
        first = _dims(inner, "permutation")
        return rw.transpose(inner.operands[0], [first[p] for p in perm])
    inner = rw.source(x, "stablehlo.broadcast_in_dim")
    if inner is not None:
        where = {p: i for i, p in enumerate(perm)}
        dims = [where[d] for d in _dims(inner, "broadcast_dimensions")]
        if _increasing(dims):
            return rw.broadcast(inner.operands[0], op.result.type, dims)
    moved = [p for p in perm if x.type.shape[p] != 1]
    if _increasing(moved):
        return rw.reshape(x, op.result.type.shape)
    return None


def _unit_dim_map(src: Sequence[int], dst: Sequence[int]) -> list[int | None] | None:
    """For a reshape from `src` to `dst` that only inserts or removes size-1 dimensions,
    where each dimension of `src` larger than 1 lands in `dst` (None for size-1 ones);
    None for other reshapes."""
    big_dst = [j for j, size in enumerate(dst) if size != 1]
    big_src = [size for size in src if size != 1]
    if big_src != [dst[j] for j in big_dst]:
        return None
    landing = iter(big_dst)
    return [None if size == 1 else next(landing) for size in src]


def _place_unit_dims(dims: Sequence[int | None], rank: int) -> list[int] | None:
    """Increasing broadcast dimensions filling each None (a size-1 operand dimension, which
    broadcasts to any size) with an unused result dimension between its neighbours."""
    taken = {d for d in dims if d is not None}
    placed: list[int] = []
    for i, d in enumerate(dims):
        if d is None:
            upper = next((e for e in dims[i + 1:] if e is not None), rank)
            lower = placed[-1] + 1 if placed else 0
            d = next((c for c in range(lower, upper) if c not in taken), None)
            if d is None:
                return None
            taken.add(d)
        placed.append(d)
    return placed


def _broadcast_in_dim(rw: _Rewriter, op: Op) -> Value | None:
    """Identity broadcasts; broadcast of broadcast (composed); broadcasts adding only
    size-1 dimensions (reshapes); broadcast of a reshape that only added size-1
    dimensions."""
    x, out, dims = op.operands[0], op.result.type, _dims(op, "broadcast_dimensions")
    if x.type == out and dims == tuple(range(out.rank)):
        return x
    inner = rw.source(x, "stablehlo.broadcast_in_dim")
    if inner is not None:
        first = _dims(inner, "broadcast_dimensions")
        return rw.broadcast(inner.operands[0], out, [dims[d] for d in first])
    if x.type.size == out.size and _increasing(dims):
        return rw.reshape(x, out.shape)
    inner = rw.source(x, "stablehlo.reshape")
    if inner is not None and _increasing(dims):
        source = inner.operands[0]
        where = _unit_dim_map(source.type.shape, x.type.shape)
        placed = None if where is None else _place_unit_dims(
            [None if w is None else dims[w] for w in where], out.rank)
        if placed is not None:
            return rw.broadcast(source, out, placed)
    return None


def _same_type(rw: _Rewriter, op: Op) -> Value | None:
    """`convert` / `bitcast_convert` to the operand's own type."""
    x = op.operands[0]
    return x if x.type == op.result.type else None


def _slice(rw: _Rewriter, op: Op) -> Value | None:
    """Slices of everything; slice of slice (composed); slice of a broadcast scalar; a
    slice of a concatenate within one of its operands (a slice of that operand)."""
    x, out = op.operands[0], op.result.type
    starts, strides = _dims(op, "start_indices"), _dims(op, "strides")
    if x.type == out and not any(starts):
        return x
    scalar = _scalar_broadcast(rw, x)
    if scalar is not None:
        return rw.broadcast(scalar, out, ())
    concat = rw.source(x, "stablehlo.concatenate")
    if concat is not None:
        return _slice_of_concatenate(rw, op, concat)
    inner = rw.source(x, "stablehlo.slice")
    if inner is None:
        return None
    first_starts, first_strides = _dims(inner, "start_indices"), _dims(inner, "strides")
    new_starts = [a + b * s for a, b, s in zip(first_starts, starts, first_strides, strict=True)]
    new_strides = [a * b for a, b in zip(first_strides, strides, strict=True)]
    new_limits = [s + (n - 1) * st + 1 if n else s
                  for s, st, n in zip(new_starts, new_strides, out.shape, strict=True)]
    return rw.emit("stablehlo.slice", [inner.operands[0]], out,
                   start_indices=tuple(new_starts), limit_indices=tuple(new_limits),
                   strides=tuple(new_strides))


def _slice_of_concatenate(rw: _Rewriter, op: Op, concat: Op) -> Value | None:
    dim = int(concat.attributes["dimension"])
    starts, strides = list(_dims(op, "start_indices")), _dims(op, "strides")
    count = op.result.type.shape[dim]
    first, last = starts[dim], starts[dim] + (count - 1) * strides[dim]
    offset = 0
    for part in concat.operands:
        size = part.type.shape[dim]
        if count and offset <= first and last < offset + size:
            starts[dim] = first - offset
            limits = [s + (n - 1) * st + 1 if n else s for s, st, n in zip(
                starts, strides, op.result.type.shape, strict=True)]
            return rw.emit("stablehlo.slice", [part], op.result.type,
                           start_indices=tuple(starts), limit_indices=tuple(limits),
                           strides=strides)
        offset += size
    return None


def _pad(rw: _Rewriter, op: Op) -> Value | None:
    """Pads adding nothing."""
    attrs = ("edge_padding_low", "edge_padding_high", "interior_padding")
    if any(any(_dims(op, a)) for a in attrs):
        return None
    return op.operands[0]


def _concatenate(rw: _Rewriter, op: Op) -> Value | None:
    """Empty operands dropped; a concatenate of one operand is that operand."""
    kept = [v for v in op.operands if v.type.size > 0]
    if len(kept) == 1:
        return kept[0]
    if not kept or len(kept) == len(op.operands):
        return None
    return rw.emit("stablehlo.concatenate", kept, op.result.type, **op.attributes)


def _reverse(rw: _Rewriter, op: Op) -> Value | None:
    """Reverses of size-1 dimensions only; reverse of reverse over the same dimensions."""
    x, dims = op.operands[0], _dims(op, "dimensions")
    if all(x.type.shape[d] == 1 for d in dims):
        return x
    inner = rw.source(x, "stablehlo.reverse")
    if inner is not None and set(_dims(inner, "dimensions")) == set(dims):
        return inner.operands[0]
    return None


def _dynamic_slice(rw: _Rewriter, op: Op) -> Value | None:
    """A dynamic slice of the whole operand (its starts clamp to 0); of a broadcast scalar,
    the scalar broadcast to the slice's shape (a device's block of a replicated constant); with
    constant starts, a slice (from the starts clamped into the operand, as StableHLO clamps
    them)."""
    x, out = op.operands[0], op.result.type
    if x.type == out:
        return x
    broadcast = rw.source(x, "stablehlo.broadcast_in_dim")
    if broadcast is not None and broadcast.operands[0].type.rank == 0:
        return rw.emit("stablehlo.broadcast_in_dim", [broadcast.operands[0]], out,
                       broadcast_dimensions=())
    found = [rw.splat(v) for v in op.operands[1:]]
    if any(s is None for s in found):
        return None
    starts = tuple(min(max(int(s), 0), n - size)
                   for s, n, size in zip(found, x.type.shape, out.shape, strict=True))
    limits = tuple(s + size for s, size in zip(starts, out.shape, strict=True))
    return rw.emit("stablehlo.slice", [x], out, start_indices=starts, limit_indices=limits,
                   strides=(1,) * out.rank)


def _dynamic_update_slice(rw: _Rewriter, op: Op) -> Value | None:
    """An update covering the whole operand is the result (its starts clamp to 0)."""
    update = op.operands[1]
    return update if update.type == op.result.type else None


CANONICAL_RULES: dict[str, list[Rule]] = {
    "stablehlo.reshape": [_reshape],
    "stablehlo.transpose": [_transpose],
    "stablehlo.broadcast_in_dim": [_broadcast_in_dim],
    "stablehlo.convert": [_same_type],
    "stablehlo.bitcast_convert": [_same_type],
    "stablehlo.slice": [_slice],
    "stablehlo.pad": [_pad],
    "stablehlo.concatenate": [_concatenate],
    "stablehlo.reverse": [_reverse],
    "stablehlo.dynamic_slice": [_dynamic_slice],
    "stablehlo.dynamic_update_slice": [_dynamic_update_slice],
}


# ---------------------------------------------------------------------------------------------
# Algebraic simplification: arithmetic, logic, select, compare.

def _add(rw: _Rewriter, op: Op) -> Value | None:
    """x + 0 (integers), x + (-0.0) (floats), either way round."""
    dtype = op.result.type.dtype
    for x, y in (op.operands, op.operands[::-1]):
        if dtypes.is_int(dtype) and rw.is_value(y, 0):
            return x
        if dtypes.is_float(dtype) and rw.is_value(y, 0, negative_zero=True):
            return x
    return None


def _subtract(rw: _Rewriter, op: Op) -> Value | None:
    """x - 0 (integers), x - (+0.0) (floats), x - x = 0 and 0 - x = -x (integers)."""
    x, y = op.operands
    dtype = op.result.type.dtype
    if dtypes.is_int(dtype):
        if rw.is_value(y, 0):
            return x
        if x is y:
            return rw.filled(0, op.result.type)
        if dtypes.is_signed(dtype) and rw.is_value(x, 0):
            return rw.emit("stablehlo.negate", [y], op.result.type)
    if dtypes.is_float(dtype) and rw.is_value(y, 0, negative_zero=False):
        return x
    return None


def _multiply(rw: _Rewriter, op: Op) -> Value | None:
    """x * 1 (real types); x * 0 = 0 and x * -1 = -x (integers); either way round.
    x * convert(p) of a boolean p = select(p, x, 0), as XLA rewrites it (so inf * False is
    0, not NaN: numpy-like code relies on it, numpyro's binary cross-entropy does)."""
    dtype = op.result.type.dtype
    for x, y in (op.operands, op.operands[::-1]):
        mask = rw.source(y, "stablehlo.convert")
        if mask is not None and dtypes.is_bool(mask.operands[0].type.dtype) \
                and not dtypes.is_bool(dtype):
            return rw.emit("stablehlo.select", [mask.operands[0], x,
                                                rw.filled(0, op.result.type)],
                           op.result.type)
    if not _real(dtype):
        return None
    for x, y in (op.operands, op.operands[::-1]):
        if rw.is_value(y, 1):
            return x
        if dtypes.is_int(dtype) and rw.is_value(y, 0):
            return y
        if dtypes.is_signed(dtype) and rw.is_value(y, -1):
            return rw.emit("stablehlo.negate", [x], op.result.type)
    return None


def _divide(rw: _Rewriter, op: Op) -> Value | None:
    """x / 1 (real types)."""
    x, y = op.operands
    return x if _real(op.result.type.dtype) and rw.is_value(y, 1) else None


def _power(rw: _Rewriter, op: Op) -> Value | None:
    """x ** 1 = x and x ** 0 = 1 (real types; IEEE pow(NaN, 0) is 1)."""
    x, y = op.operands
    if not _real(op.result.type.dtype):
        return None
    if rw.is_value(y, 1):
        return x
    if rw.is_value(y, 0):
        return rw.filled(1, op.result.type)
    return None


def _involution(rw: _Rewriter, op: Op) -> Value | None:
    """negate(negate(x)) and not(not(x)) are x."""
    inner = rw.source(op.operands[0], op.opcode)
    return inner.operands[0] if inner is not None else None


def _part(rw: _Rewriter, op: Op) -> Value | None:
    """real(complex(a, b)) = a and imag(complex(a, b)) = b."""
    inner = rw.source(op.operands[0], "stablehlo.complex")
    if inner is None:
        return None
    return inner.operands[0 if op.opcode == "stablehlo.real" else 1]


def _abs(rw: _Rewriter, op: Op) -> Value | None:
    """abs(abs(x)) is abs(x) (real types)."""
    x = op.operands[0]
    if _real(x.type.dtype) and rw.source(x, "stablehlo.abs") is not None:
        return x
    return None


def _extremum(rw: _Rewriter, op: Op) -> Value | None:
    """max(x, x) and min(x, x) are x; so are max(x, lowest) and min(x, highest) (NaN
    propagates through both)."""
    dtype = op.result.type.dtype
    if dtypes.is_complex(dtype):
        return None
    x, y = op.operands
    if x is y:
        return x
    # The identity of max is the lowest value (of min the highest), which NaN beats too.
    bound = monoids.identity(op.opcode, dtype)
    for a, b in ((x, y), (y, x)):
        if rw.is_value(b, bound):
            return a
    return None


def _logic(rw: _Rewriter, op: Op) -> Value | None:
    """and/or/xor of x with itself, with zero and with all ones (integers and bools)."""
    dtype = op.result.type.dtype
    if not _integral(dtype):
        return None
    x, y = op.operands
    kind = op.opcode.rsplit(".", 1)[1]
    if x is y:
        return rw.filled(0, op.result.type) if kind == "xor" else x
    ones = monoids.and_identity(dtype)
    for a, b in ((x, y), (y, x)):
        if rw.is_value(b, 0):
            return b if kind == "and" else a
        if rw.is_value(b, ones) and kind in ("and", "or"):
            return a if kind == "and" else b
    return None


def _select(rw: _Rewriter, op: Op) -> Value | None:
    """select(p, x, x) = x; select with a constant predicate; select(not p, a, b) =
    select(p, b, a)."""
    pred, on_true, on_false = op.operands
    if on_true is on_false:
        return on_true
    if rw.is_value(pred, True):
        return on_true
    if rw.is_value(pred, False):
        return on_false
    negated = rw.source(pred, "stablehlo.not")
    if negated is not None:
        return rw.emit("stablehlo.select", [negated.operands[0], on_false, on_true],
                       op.result.type)
    return None


_REFLEXIVE = {"EQ": True, "LE": True, "GE": True, "NE": False, "LT": False, "GT": False}


def _compare(rw: _Rewriter, op: Op) -> Value | None:
    """compare(x, x) for integers and bools (floats: NaN is not equal to itself)."""
    x, y = op.operands
    if x is not y or not _integral(x.type.dtype):
        return None
    direction = op.attributes["comparison_direction"].value
    return rw.filled(_REFLEXIVE[direction], op.result.type)


def _convert(rw: _Rewriter, op: Op) -> Value | None:
    """convert(convert(x: A -> B) -> A) = x when B holds every value of A."""
    inner = rw.source(op.operands[0], "stablehlo.convert")
    if inner is None:
        return None
    x = inner.operands[0]
    if x.type == op.result.type and _holds_exactly(x.type.dtype, op.operands[0].type.dtype):
        return x
    return None


# ---------------------------------------------------------------------------------------------
# Algebraic simplification: reductions and dots.

def _identity(region: ir.Region, dtype: np.dtype) -> Any:
    """The identity of a monoid reduction body (`numerics.monoids`) over `dtype`, when
    combining with it changes nothing bit for bit; else None."""
    opcode = monoids.region_monoid(region, dtype)
    if opcode is None or dtypes.is_complex(dtype):
        return None
    if opcode in ("stablehlo.add", "stablehlo.multiply") and dtypes.is_bool(dtype):
        return None
    if opcode == "stablehlo.add" and dtypes.is_float(dtype):
        return None  # see the module docstring: sums of -0.0
    return monoids.identity(opcode, dtype)


def _reduce(rw: _Rewriter, op: Op) -> list[Value] | None:
    """Reductions over no dimensions (the operands), over an empty dimension (the inits
    broadcast), over size-1 dimensions from the body's identity (a reshape)."""
    if util.has_side_effect(op):
        return None
    count = len(op.results)
    inputs, inits = op.operands[:count], op.operands[count:]
    dims = _dims(op, "dimensions")
    shape = inputs[0].type.shape
    if not dims:
        return list(inputs)
    if any(shape[d] == 0 for d in dims):
        return [rw.broadcast(init, t, ()) for init, t in zip(inits, op.result_types, strict=True)]
    if count != 1 or any(shape[d] != 1 for d in dims):
        return None
    identity = _identity(op.regions[0], inits[0].type.dtype)
    if identity is None or not rw.is_value(inits[0], identity):
        return None
    return [rw.reshape(inputs[0], op.result.type.shape)]


def _dot_side(rw: _Rewriter, x: Value, batch: Sequence[int], contracting: Sequence[int],
              dtype: np.dtype) -> tuple[Value, int]:
    """A dot operand as (batch dims, free dims) without its size-1 contracting dims,
    converted to the result type; and its number of free dims."""
    free = [d for d in range(x.type.rank) if d not in batch and d not in contracting]
    order = [*batch, *free]
    if not _increasing(order):
        x = rw.transpose(x, [*order, *contracting])
        order = list(range(len(order)))
    x = rw.reshape(x, [x.type.shape[d] for d in order])
    return rw.convert(x, dtype), len(free)


def _dot_general(rw: _Rewriter, op: Op) -> Value | None:
    """A dot contracting one element (size-1 or no contracting dims) is one product per
    output element: a multiply of the broadcast operands (real dtypes)."""
    lhs, rhs = op.operands
    out = op.result.type
    if not all(_real(t.dtype) for t in (lhs.type, rhs.type, out)):
        return None
    if not all(dtypes.is_float(t.dtype) == dtypes.is_float(out.dtype)
               and _holds_exactly(t.dtype, out.dtype) for t in (lhs.type, rhs.type)):
        # int x int -> float (or the reverse) has its own accumulation rules; a narrower
        # result type rounds the product, not the operands.
        return None
    dn: ir.DotDimensionNumbers = op.attributes["dot_dimension_numbers"]
    if any(lhs.type.shape[d] != 1 for d in dn.lhs_contracting_dimensions):
        return None
    batch = len(dn.lhs_batching_dimensions)
    a, lhs_free = _dot_side(rw, lhs, dn.lhs_batching_dimensions,
                            dn.lhs_contracting_dimensions, out.dtype)
    b, rhs_free = _dot_side(rw, rhs, dn.rhs_batching_dimensions,
                            dn.rhs_contracting_dimensions, out.dtype)
    a = rw.broadcast(a, out, range(batch + lhs_free))
    b = rw.broadcast(b, out, [*range(batch), *range(batch + lhs_free, out.rank)])
    return rw.emit("stablehlo.multiply", [a, b], out)


ALGEBRAIC_RULES: dict[str, list[Rule]] = {
    "stablehlo.add": [_add],
    "stablehlo.subtract": [_subtract],
    "stablehlo.multiply": [_multiply],
    "stablehlo.divide": [_divide],
    "stablehlo.power": [_power],
    "stablehlo.negate": [_involution],
    "stablehlo.not": [_involution],
    "stablehlo.abs": [_abs],
    "stablehlo.real": [_part],
    "stablehlo.imag": [_part],
    "stablehlo.maximum": [_extremum],
    "stablehlo.minimum": [_extremum],
    "stablehlo.and": [_logic],
    "stablehlo.or": [_logic],
    "stablehlo.xor": [_logic],
    "stablehlo.select": [_select],
    "stablehlo.compare": [_compare],
    "stablehlo.convert": [_convert],
    "stablehlo.reduce": [_reduce],
    "stablehlo.dot_general": [_dot_general],
}


# ---------------------------------------------------------------------------------------------
# The passes.

def _merged(*tables: dict[str, list[Rule]]) -> dict[str, list[Rule]]:
    rules: dict[str, list[Rule]] = {}
    for table in tables:
        for opcode, found in table.items():
            rules.setdefault(opcode, []).extend(found)
    return rules


class _RulePass(Pass):
    rules: dict[str, list[Rule]] = {}

    def run(self, module: ir.Module) -> bool:
        """Applies the pass's rewrites everywhere in `module`, then removes the pure ops
        left unread (only when something changed). Returns whether anything changed."""
        return _Rewriter(self.rules).run(module)


class Canonicalize(_RulePass):
    """Shape ops in canonical form: broadcast/reshape/transpose/slice chains composed, and
    reshape/transpose/broadcast/convert/slice/pad/reverse/dynamic-slice/concatenate that
    change nothing removed (see the module docstring)."""

    name = "canonicalize"
    rules = CANONICAL_RULES


class AlgebraicSimplify(_RulePass):
    """XLA's algebraic simplifications that are exact (see the module docstring)."""

    name = "algebraic-simplify"
    rules = ALGEBRAIC_RULES


class Simplify(_RulePass):
    """`Canonicalize` and `AlgebraicSimplify` in one walk."""

    name = "simplify"
    rules = _merged(CANONICAL_RULES, ALGEBRAIC_RULES)
