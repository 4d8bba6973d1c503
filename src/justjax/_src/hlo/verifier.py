"""Structural checks of an `ir.Module`: what MLIR's verifier would reject, found early.

`verify(module)` raises `VerificationError` naming the function, the op (opcode and its
position) and the problem. It checks SSA form (each value defined once, used only after
its definition and in its scope: a region may read the values of the regions enclosing
it, as StableHLO allows), terminators (`func.return` ending a function with its result
types, `stablehlo.return` ending a region), calls (the callee exists, types match its
signature), the block arguments and returns of the regions of reduce, sort, scatter,
reduce_window, select_and_scatter, while and case, and the shape and type rules of the
common ops. An opcode without an entry in the opcode registry (`hlo/opcodes.py`) is an
error; a registered op without rules of its own gets the generic checks and its arity.
"""
from __future__ import annotations

import re

from typing import Callable, Sequence

import numpy as np

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op, TensorType, Value


class VerificationError(Exception):
    """An `ir.Module` that is not valid StableHLO; the message names function, op and
    problem."""


class _Problem(Exception):
    """Raised by a check; `verify` adds the function and op to the message."""


def _fail(message: str) -> None:
    raise _Problem(message)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise _Problem(message)


BOOL = np.dtype(np.bool_)


def _scalar(dtype: np.dtype) -> TensorType:
    return TensorType((), dtype)


def _tensor(value: Value, what: str) -> TensorType:
    _require(isinstance(value.type, TensorType), f"{what} is {value.type}, not a tensor")
    return value.type


# ---------------------------------------------------------------------------------------------
# Per-op rules.

Check = Callable[[Op, "ir.Module"], None]
_checks: dict[str, Check] = {}


def _register(*names: str) -> Callable[[Check], Check]:
    def decorate(fn: Check) -> Check:
        for opcode in names:
            _checks[opcode] = fn
        return fn
    return decorate


def _counts(op: Op, operands: int | None, results: int | None, regions: int = 0) -> None:
    if operands is not None:
        _require(len(op.operands) == operands,
                 f"has {len(op.operands)} operands, expected {operands}")
    if results is not None:
        _require(len(op.results) == results,
                 f"has {len(op.results)} results, expected {results}")
    _require(len(op.regions) == regions, f"has {len(op.regions)} regions, expected {regions}")


def _attr(op: Op, name: str) -> object:
    _require(name in op.attributes, f"lacks attribute '{name}'")
    return op.attributes[name]


def _dims_attr(op: Op, name: str) -> tuple[int, ...]:
    value = _attr(op, name)
    _require(isinstance(value, tuple) and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
        for v in value), f"attribute '{name}' is {value!r}, not a tuple of ints")
    return tuple(int(v) for v in value)


# Ops whose operands and result have one type (the registry's `same_type`).
_SAME_TYPE = opcodes.names(same_type=True)


@_register(*_SAME_TYPE)
def _same_type(op: Op, module: ir.Module) -> None:
    _counts(op, opcodes.OPCODES[op.opcode].arity, 1)
    for i, operand in enumerate(op.operands):
        _require(operand.type == op.result.type,
                 f"operand #{i} is {operand.type}, the result {op.result.type}: elementwise "
                 "ops need one type")


def _same_shape(op: Op) -> None:
    for i, operand in enumerate(op.operands):
        _require(_tensor(operand, f"operand #{i}").shape == _tensor(op.result, "result").shape,
                 f"operand #{i} shape {operand.type.shape} differs from the result's "
                 f"{op.result.type.shape}")


@_register("stablehlo.convert", "stablehlo.is_finite", "stablehlo.real", "stablehlo.imag",
           "stablehlo.abs")
def _unary_shape(op: Op, module: ir.Module) -> None:
    _counts(op, 1, 1)
    _same_shape(op)
    if op.opcode == "stablehlo.is_finite":
        _require(op.result.type.dtype == BOOL, "result must be i1")


@_register("stablehlo.complex")
def _complex(op: Op, module: ir.Module) -> None:
    _counts(op, 2, 1)
    _same_shape(op)
    _require(op.operands[0].type == op.operands[1].type, "operands differ in type")
    _require(op.result.type.dtype.kind == "c", "result must be complex")


@_register("stablehlo.compare")
def _compare(op: Op, module: ir.Module) -> None:
    _counts(op, 2, 1)
    _attr(op, "comparison_direction")
    _require(op.operands[0].type == op.operands[1].type,
             f"operands differ: {op.operands[0].type} vs {op.operands[1].type}")
    _same_shape(op)
    _require(op.result.type.dtype == BOOL, f"result is {op.result.type}, must be i1")


@_register("stablehlo.select")
def _select(op: Op, module: ir.Module) -> None:
    _counts(op, 3, 1)
    pred, on_true, on_false = op.operands
    _require(_tensor(pred, "predicate").dtype == BOOL, "predicate must be i1")
    _require(pred.type.shape in ((), op.result.type.shape),
             f"predicate shape {pred.type.shape} is neither () nor the result's")
    _require(on_true.type == op.result.type and on_false.type == op.result.type,
             "branches must have the result type")


@_register("stablehlo.clamp")
def _clamp(op: Op, module: ir.Module) -> None:
    _counts(op, 3, 1)
    low, x, high = op.operands
    _require(x.type == op.result.type, "operand must have the result type")
    for name, bound in (("min", low), ("max", high)):
        _require(bound.type.dtype == x.type.dtype and bound.type.shape in ((), x.type.shape),
                 f"{name} is {bound.type}, must be a scalar or {x.type}")


@_register("stablehlo.constant")
def _constant(op: Op, module: ir.Module) -> None:
    _counts(op, 0, 1)
    value = np.asarray(_attr(op, "value"))
    _require(value.shape in ((), op.result.type.shape),
             f"value of shape {value.shape} for a {op.result.type}")


@_register("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Op, module: ir.Module) -> None:
    _counts(op, 1, 1)
    dims = _dims_attr(op, "broadcast_dimensions")
    operand, result = op.operands[0].type, op.result.type
    _require(operand.dtype == result.dtype, "element types differ")
    _require(len(dims) == operand.rank,
             f"broadcast_dimensions {dims} for an operand of rank {operand.rank}")
    _require(len(set(dims)) == len(dims), f"broadcast_dimensions {dims} repeat a dimension")
    for i, d in enumerate(dims):
        _require(0 <= d < result.rank, f"broadcast dimension {d} out of range")
        _require(operand.shape[i] in (1, result.shape[d]),
                 f"operand dim {i} of size {operand.shape[i]} cannot broadcast to "
                 f"{result.shape[d]}")


@_register("stablehlo.reshape")
def _reshape(op: Op, module: ir.Module) -> None:
    _counts(op, 1, 1)
    operand, result = op.operands[0].type, op.result.type
    _require(operand.dtype == result.dtype, "element types differ")
    _require(operand.size == result.size, f"reshape of {operand} to {result} changes the size")


@_register("stablehlo.transpose")
def _transpose(op: Op, module: ir.Module) -> None:
    _counts(op, 1, 1)
    perm = _dims_attr(op, "permutation")
    operand, result = op.operands[0].type, op.result.type
    _require(sorted(perm) == list(range(operand.rank)),
             f"permutation {perm} is not a permutation of {operand.rank} dimensions")
    _require(result.shape == tuple(operand.shape[p] for p in perm)
             and result.dtype == operand.dtype, f"result {result} is not {operand} permuted")


@_register("stablehlo.reverse")
def _reverse(op: Op, module: ir.Module) -> None:
    _counts(op, 1, 1)
    dims = _dims_attr(op, "dimensions")
    _require(op.result.type == op.operands[0].type, "result must have the operand's type")
    _require(all(0 <= d < op.result.type.rank for d in dims), f"dimensions {dims} out of range")


@_register("stablehlo.iota")
def _iota(op: Op, module: ir.Module) -> None:
    _counts(op, 0, 1)
    dim = _attr(op, "iota_dimension")
    _require(isinstance(dim, int) and 0 <= dim < op.result.type.rank,
             f"iota_dimension {dim} out of range for {op.result.type}")


@_register("stablehlo.slice")
def _slice(op: Op, module: ir.Module) -> None:
    _counts(op, 1, 1)
    operand, result = op.operands[0].type, op.result.type
    starts = _dims_attr(op, "start_indices")
    limits = _dims_attr(op, "limit_indices")
    strides = _dims_attr(op, "strides")
    _require(len(starts) == len(limits) == len(strides) == operand.rank,
             "start/limit/strides must have one entry per dimension")
    expected = []
    for d, (start, limit, stride) in enumerate(zip(starts, limits, strides, strict=True)):
        _require(0 <= start <= limit <= operand.shape[d] and stride >= 1,
                 f"slice [{start}:{limit}:{stride}] out of bounds for dim {d} of {operand}")
        expected.append(-(-(limit - start) // stride))
    _require(result.shape == tuple(expected) and result.dtype == operand.dtype,
             f"result {result}, expected shape {tuple(expected)}")


@_register("stablehlo.concatenate")
def _concatenate(op: Op, module: ir.Module) -> None:
    _require(len(op.operands) >= 1 and len(op.results) == 1, "needs operands and one result")
    dim = _attr(op, "dimension")
    result = op.result.type
    _require(isinstance(dim, int) and 0 <= dim < result.rank, f"dimension {dim} out of range")
    total = 0
    for i, operand in enumerate(op.operand_types):
        _require(operand.rank == result.rank and operand.dtype == result.dtype,
                 f"operand #{i} {operand} does not match the result {result}")
        for d in range(result.rank):
            if d != dim:
                _require(operand.shape[d] == result.shape[d],
                         f"operand #{i} dim {d} is {operand.shape[d]}, not {result.shape[d]}")
        total += operand.shape[dim]
    _require(total == result.shape[dim], f"sizes along dim {dim} sum to {total}, "
                                         f"not {result.shape[dim]}")


@_register("stablehlo.pad")
def _pad(op: Op, module: ir.Module) -> None:
    _counts(op, 2, 1)
    operand, value = op.operand_types
    low = _dims_attr(op, "edge_padding_low")
    high = _dims_attr(op, "edge_padding_high")
    interior = _dims_attr(op, "interior_padding")
    _require(value == _scalar(operand.dtype), "padding value must be a scalar of the operand type")
    expected = tuple(lo + hi + n + max(n - 1, 0) * mid for n, lo, hi, mid in
                     zip(operand.shape, low, high, interior, strict=True))
    _require(op.result.type.shape == expected, f"result {op.result.type}, expected {expected}")


@_register("stablehlo.dynamic_slice")
def _dynamic_slice(op: Op, module: ir.Module) -> None:
    operand = op.operands[0].type
    sizes = _dims_attr(op, "slice_sizes")
    _require(len(op.operands) == 1 + operand.rank, "needs one start index per dimension")
    for i in op.operands[1:]:
        _require(i.type.shape == () and i.type.dtype.kind in "iu", "start indices must be "
                                                                   "integer scalars")
    _require(all(0 <= s <= n for s, n in zip(sizes, operand.shape, strict=True)),
             f"slice_sizes {sizes} exceed {operand}")
    _require(op.result.type == TensorType(sizes, operand.dtype),
             f"result {op.result.type}, expected sizes {sizes}")


@_register("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(op: Op, module: ir.Module) -> None:
    operand, update = op.operand_types[:2]
    _require(len(op.operands) == 2 + operand.rank, "needs one start index per dimension")
    _require(update.rank == operand.rank and update.dtype == operand.dtype and all(
        u <= n for u, n in zip(update.shape, operand.shape, strict=True)),
        f"update {update} does not fit {operand}")
    _require(op.result.type == operand, "result must have the operand's type")


@_register("stablehlo.dot_general")
def _dot_general(op: Op, module: ir.Module) -> None:
    _counts(op, 2, 1)
    dn = _attr(op, "dot_dimension_numbers")
    _require(isinstance(dn, ir.DotDimensionNumbers), "dot_dimension_numbers has the wrong kind")
    lhs, rhs = op.operand_types
    pairs = [(dn.lhs_batching_dimensions, dn.rhs_batching_dimensions, "batching"),
             (dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions, "contracting")]
    for lhs_dims, rhs_dims, kind in pairs:
        _require(len(lhs_dims) == len(rhs_dims), f"{kind} dimensions differ in number")
        for a, b in zip(lhs_dims, rhs_dims, strict=True):
            _require(0 <= a < lhs.rank and 0 <= b < rhs.rank, f"{kind} dims out of range")
            _require(lhs.shape[a] == rhs.shape[b],
                     f"{kind} dims {a} x {b} differ in size: {lhs.shape[a]} vs {rhs.shape[b]}")
    lhs_used = set(dn.lhs_batching_dimensions) | set(dn.lhs_contracting_dimensions)
    rhs_used = set(dn.rhs_batching_dimensions) | set(dn.rhs_contracting_dimensions)
    expected = (tuple(lhs.shape[d] for d in dn.lhs_batching_dimensions)
                + tuple(n for d, n in enumerate(lhs.shape) if d not in lhs_used)
                + tuple(n for d, n in enumerate(rhs.shape) if d not in rhs_used))
    _require(op.result.type.shape == expected,
             f"result shape {op.result.type.shape}, expected {expected}")


def _reduction_args(op: Op, region: ir.Region, dtypes: Sequence[np.dtype], name: str) -> None:
    """A reduction body takes (accumulators, elements) as scalars and returns the
    accumulators."""
    expected = [_scalar(d) for d in dtypes] * 2
    block = region.block
    _require([a.type for a in block.args] == expected,
             f"{name} region takes {[str(a.type) for a in block.args]}, expected "
             f"{[str(t) for t in expected]}")
    returned = block.terminator.operand_types if block.ops else []
    _require(returned == expected[:len(dtypes)],
             f"{name} region returns {[str(t) for t in returned]}")


@_register("stablehlo.reduce")
def _reduce(op: Op, module: ir.Module) -> None:
    n = len(op.operands) // 2
    _require(len(op.operands) == 2 * n and n >= 1 and len(op.results) == n,
             "reduce takes N inputs, N inits and gives N results")
    _require(len(op.regions) == 1, "reduce needs one region")
    dims = _dims_attr(op, "dimensions")
    inputs, inits = op.operand_types[:n], op.operand_types[n:]
    for i, (x, init, out) in enumerate(zip(inputs, inits, op.result_types, strict=True)):
        _require(init == _scalar(x.dtype), f"init #{i} is {init}, must be a scalar of {x.dtype}")
        _require(all(0 <= d < x.rank for d in dims), f"dimensions {dims} out of range")
        kept = tuple(s for d, s in enumerate(x.shape) if d not in dims)
        _require(out.shape == kept, f"result #{i} shape {out.shape}, expected {kept}")
        _require(x.shape == inputs[0].shape, "inputs differ in shape")
    _reduction_args(op, op.regions[0], [t.dtype for t in inits], "reduce")


@_register("stablehlo.reduce_window")
def _reduce_window(op: Op, module: ir.Module) -> None:
    n = len(op.operands) // 2
    _require(len(op.operands) == 2 * n and n >= 1 and len(op.results) == n,
             "reduce_window takes N inputs, N inits and gives N results")
    _require(len(op.regions) == 1, "reduce_window needs one region")
    window = _dims_attr(op, "window_dimensions")
    _require(len(window) == op.operand_types[0].rank, "window_dimensions must match the rank")
    _reduction_args(op, op.regions[0], [t.dtype for t in op.operand_types[n:]],
                    "reduce_window")


@_register("stablehlo.sort")
def _sort(op: Op, module: ir.Module) -> None:
    _require(len(op.regions) == 1, "sort needs one region")
    _require(op.result_types == op.operand_types, "results must have the operands' types")
    expected = [_scalar(t.dtype) for t in op.operand_types for _ in range(2)]
    block = op.regions[0].block
    _require([a.type for a in block.args] == expected,
             f"comparator takes {[str(a.type) for a in block.args]}, expected "
             f"{[str(t) for t in expected]}")
    _require(block.terminator.operand_types == [_scalar(BOOL)], "comparator must return i1")


def fft_result_type(operand: TensorType, fft_type: str, fft_length: Sequence[int]
                    ) -> TensorType:
    """The result type StableHLO infers for `fft` (its `inferFftOp`).

    Args:
      operand: the operand's type.
      fft_type: "FFT", "IFFT", "RFFT" or "IRFFT".
      fft_length: the transformed lengths of the trailing axes (one to three).
    Returns:
      The result type.
    Raises:
      ValueError: where StableHLO rejects the op (with MLIR's message).
    """
    lengths = tuple(int(n) for n in fft_length)
    rank = len(lengths)
    if not 1 <= rank <= 3:
        raise ValueError(f"fft_length must have at most 3 and at least 1 elements, got {rank}")
    if operand.rank < rank:
        raise ValueError(f"operand rank must not be less than fft rank of {rank} for operand "
                         f"of type {operand}")
    batch, minor = operand.shape[:operand.rank - rank], operand.shape[operand.rank - rank:]
    # XLA's RFFT of length 0 gives no bins; its IRFFT of length 0 still reads one.
    half = lengths[-1] // 2 + 1
    lengths_text = ", ".join(map(str, lengths))
    if fft_type == "RFFT":
        if operand.dtype.kind != "f":
            raise ValueError(f"RFFT requires floating point input, got {operand.dtype}")
        if minor != lengths:
            raise ValueError(f"RFFT requires innermost dimensions match fft_length. Got: "
                             f"{', '.join(map(str, minor))} but wanted {lengths_text}.")
        return TensorType(batch + lengths[:-1] + (half if lengths[-1] else 0,),
                          np.result_type(operand.dtype, np.complex64))
    if operand.dtype.kind != "c":
        raise ValueError(f"{fft_type} takes a complex tensor as input, but is given "
                         f"{operand}.")
    if fft_type == "IRFFT":
        if minor[:-1] != lengths[:-1]:
            raise ValueError(f"IRFFT requires non-final dimensions to match fft_length. Got: "
                             f"{', '.join(map(str, minor))} but wanted {lengths_text}.")
        if minor[-1] != half and not (lengths[-1] == 0 and minor[-1] == 0):
            raise ValueError(f"IRFFT requires innermost dimension to be compatible with "
                             f"fft_length[-1]/2+1. Got: {minor[-1]} but fft_length is "
                             f"{lengths_text}.")
        return TensorType(batch + lengths, np.finfo(operand.dtype).dtype)
    if fft_type not in ("FFT", "IFFT"):
        raise ValueError(f"unknown fft_type {fft_type}")
    return operand


@_register("stablehlo.fft")
def _fft(op: Op, module: ir.Module) -> None:
    _counts(op, 1, 1)
    kind = _attr(op, "fft_type")
    _require(isinstance(kind, ir.Enum) and kind.kind == "fft_type",
             f"fft_type is {kind!r}, not an fft_type enum")
    try:
        expected = fft_result_type(_tensor(op.operands[0], "operand"), kind.value,
                                   _dims_attr(op, "fft_length"))
    except ValueError as err:
        _fail(str(err))
    _require(op.result.type == expected,
             f"result is {op.result.type}, StableHLO infers {expected}")


@_register("stablehlo.scatter")
def _scatter(op: Op, module: ir.Module) -> None:
    n = (len(op.operands) - 1) // 2
    _require(len(op.operands) == 2 * n + 1 and n >= 1, "scatter takes N inputs, indices and "
                                                       "N updates")
    _require(len(op.regions) == 1, "scatter needs one region")
    _require(op.result_types == op.operand_types[:n], "results must have the inputs' types")
    _reduction_args(op, op.regions[0], [t.dtype for t in op.operand_types[:n]], "scatter")


@_register("stablehlo.gather")
def _gather(op: Op, module: ir.Module) -> None:
    _counts(op, 2, 1)
    _require(isinstance(_attr(op, "dimension_numbers"), ir.GatherDimensionNumbers),
             "dimension_numbers has the wrong kind")
    _require(op.result.type.dtype == op.operands[0].type.dtype, "element types differ")


@_register("stablehlo.select_and_scatter")
def _select_and_scatter(op: Op, module: ir.Module) -> None:
    _counts(op, 3, 1, regions=2)
    operand, source, init = op.operand_types
    select, scatter = (r.block for r in op.regions)
    _require([a.type for a in select.args] == [_scalar(operand.dtype)] * 2,
             "select region must take two operand scalars")
    _require(select.terminator.operand_types == [_scalar(BOOL)], "select must return i1")
    _reduction_args(op, op.regions[1], [source.dtype], "scatter")
    _require(op.result.type == operand, "result must have the operand's type")


@_register("stablehlo.while")
def _while(op: Op, module: ir.Module) -> None:
    _require(len(op.regions) == 2, "while needs cond and body regions")
    types = op.operand_types
    _require(op.result_types == types, "results must have the operands' types")
    cond, body = (r.block for r in op.regions)
    for name, block in (("cond", cond), ("body", body)):
        _require([a.type for a in block.args] == types,
                 f"{name} takes {[str(a.type) for a in block.args]}, expected "
                 f"{[str(t) for t in types]}")
    _require(cond.terminator.operand_types == [_scalar(BOOL)], "cond must return tensor<i1>")
    _require(body.terminator.operand_types == types, "body must return the loop types")


@_register("stablehlo.case")
def _case(op: Op, module: ir.Module) -> None:
    _counts(op, 1, None, regions=len(op.regions))
    _require(op.regions, "case needs at least one branch")
    _require(op.operands[0].type == _scalar(np.dtype(np.int32)), "index must be tensor<i32>")
    for i, region in enumerate(op.regions):
        _require(not region.block.args, f"branch {i} must take no arguments")
        _require(region.block.terminator.operand_types == op.result_types,
                 f"branch {i} returns other types than the case's results")


@_register("func.call")
def _call(op: Op, module: ir.Module) -> None:
    callee = _attr(op, "callee")
    _require(isinstance(callee, ir.Symbol), "callee must be a symbol")
    try:
        fn = module.function(callee.name)
    except KeyError:
        _fail(f"calls @{callee.name}, which the module does not define")
    _require(op.operand_types == fn.arg_types,
             f"operand types {[str(t) for t in op.operand_types]} differ from @{fn.name}'s "
             f"arguments {[str(t) for t in fn.arg_types]}")
    _require(op.result_types == fn.result_types,
             f"result types differ from @{fn.name}'s results")


# MLIR's rule for a composite's name (a namespaced op name).
_COMPOSITE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")


@_register("stablehlo.composite")
def _composite(op: Op, module: ir.Module) -> None:
    name = _attr(op, "name")
    _require(isinstance(name, str) and bool(_COMPOSITE_NAME.match(name)),
             "name must be a valid namespaced op name, i.e. it must match the following "
             f"regular expression: {_COMPOSITE_NAME.pattern} e.g. \"my_namespace.my_op\"")
    decomposition = _attr(op, "decomposition")
    _require(isinstance(decomposition, ir.Symbol), "decomposition must be a symbol")
    try:
        fn = module.function(decomposition.name)
    except KeyError:
        _fail(f"'{decomposition.name}' does not reference a valid function")
    _require(op.operand_types == fn.arg_types and op.result_types == fn.result_types,
             f"has a type that differs from its decomposition @{fn.name}'s")


_FUSION_KINDS = ("kLoop", "kInput", "kOutput")


@_register("hlo.fusion")
def _fusion(op: Op, module: ir.Module) -> None:
    """A fusion (the fusion pass's op): its region's parameters match the operands, its
    return the results, and it reads nothing but its parameters."""
    _require(len(op.regions) == 1, "fusion needs one region (the fused computation)")
    _require(op.attributes.get("kind") in _FUSION_KINDS,
             f"kind {op.attributes.get('kind')!r} is not one of {', '.join(_FUSION_KINDS)}")
    for key in ("name", "computation"):
        _require(isinstance(op.attributes.get(key), str), f"lacks string attribute '{key}'")
    block = op.regions[0].block
    _require([a.type for a in block.args] == op.operand_types,
             f"parameters {[str(a.type) for a in block.args]} differ from the operands "
             f"{[str(t) for t in op.operand_types]}")
    _require(block.terminator.operand_types == op.result_types,
             "the fused computation returns other types than the fusion's results")
    _require(len(set(op.operands)) == len(op.operands), "an operand is passed twice")
    defined: set[Value] = set(block.args)
    for inner in block.walk():
        defined.update(inner.results)
        for region in inner.regions:
            defined.update(region.block.args)
    for inner in block.walk():
        _require(all(v in defined for v in inner.operands),
                 f"fused {inner.opcode} reads a value from outside the fusion")


# ---------------------------------------------------------------------------------------------
# Walking.

class _Walker:
    """Checks SSA scoping and terminators of one function, and each op's rules."""

    def __init__(self, module: ir.Module, fn: ir.Function) -> None:
        self.module = module
        self.fn = fn
        self.defined: set[Value] = set()

    def define(self, value: Value, what: str) -> None:
        _require(isinstance(value, Value), f"{what} is not an IR value")
        _require(value not in self.defined, f"{what} ({value!r}) is defined twice")
        self.defined.add(value)

    def block(self, block: ir.Block, visible: set[Value], terminator: str) -> None:
        visible = set(visible)
        for i, arg in enumerate(block.args):
            self.define(arg, f"block argument #{i}")
            visible.add(arg)
        if not block.ops:
            _fail(f"a block has no ops (it must end with {terminator})")
        for index, op in enumerate(block.ops):
            try:
                self.op(op, visible)
                last = index == len(block.ops) - 1
                if op.opcode in ("func.return", "stablehlo.return") and not last:
                    _fail("a return in the middle of a block")
                if last:
                    _require(op.opcode == terminator,
                             f"the block ends with {op.opcode}, not {terminator}")
            except _Problem as problem:
                raise VerificationError(
                    f"@{self.fn.name}: {op.opcode} (op #{index} of its block): {problem}"
                ) from None
            visible.update(op.results)

    def op(self, op: Op, visible: set[Value]) -> None:
        for i, operand in enumerate(op.operands):
            _require(operand in visible,
                     f"operand #{i} ({operand!r}) is used before its definition or out of "
                     "its scope")
        for region in op.regions:
            self.block(region.block, visible, "stablehlo.return")
        for i, result in enumerate(op.results):
            self.define(result, f"result #{i}")
        entry = opcodes.lookup(op.opcode)
        if entry is None:
            _fail(f"unknown opcode {op.opcode}: it has no entry in the opcode registry "
                  "(hlo/opcodes.py)")
        check = _checks.get(op.opcode)
        if check is not None:
            check(op, self.module)
        elif entry.arity is not None:
            _counts(op, entry.arity, None, len(op.regions))


def _verify_function(module: ir.Module, fn: ir.Function) -> None:
    walker = _Walker(module, fn)
    walker.block(fn.body, set(), "func.return")
    returned = fn.body.terminator.operand_types
    if returned != list(fn.result_types):
        raise VerificationError(
            f"@{fn.name}: func.return gives {[str(t) for t in returned]}, the function "
            f"declares {[str(t) for t in fn.result_types]}")
    for name, attrs, count in (("arg_attrs", fn.arg_attrs, len(fn.args)),
                               ("result_attrs", fn.result_attrs, len(fn.result_types))):
        if attrs is not None and len(attrs) != count:
            raise VerificationError(f"@{fn.name}: {len(attrs)} {name} for {count} entries")


def verify(module: ir.Module) -> None:
    """Raises `VerificationError` if `module` is not valid; returns None if it is."""
    names = [fn.name for fn in module.functions]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise VerificationError(f"module @{module.name} defines @{duplicates[0]} twice")
    for fn in module.functions:
        _verify_function(module, fn)
