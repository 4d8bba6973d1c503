"""Shape refinement: a shape-polymorphic module specialized to concrete argument shapes.

A module exported for symbolic shapes (`tensor<?x4xf32>`, dimension values computed with
`stablehlo.get_dimension_size` and passed to the functions as leading arguments, shapes of
dynamic ops computed from them) cannot be compiled as it is. `refine_shapes(module,
arg_types)` gives the module for arguments of `arg_types`, as StableHLO's shape refinement
does before XLA compiles: it rebuilds `main` with static argument types, propagating

  * types, by the shape rules of the ops (elementwise ops, transpose, slice, concatenate,
    pad, reduce, reduce_window, dot_general, gather, while, case, sort, ...);
  * constants through the integer arithmetic on dimension values (get_dimension_size,
    convert, reshape, concatenate, add, multiply, divide, ...);
  * into callees: each `func.call` calls a copy of its function specialized to the
    operand types, with the dimension arguments it receives as constants;

and turns the dynamic ops static (`dynamic_broadcast_in_dim` -> `broadcast_in_dim`,
`dynamic_iota` -> `iota`, `dynamic_reshape` -> `reshape`, `real_dynamic_slice` -> `slice`,
`dynamic_gather` -> `gather`). A `shape_assertion` custom call whose predicate is false
raises its error message. The result has static shapes and goes through the usual pipeline.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op, TensorType, Value


class ShapeRefinementError(ValueError):
    """A module whose shapes cannot be made static for the given argument types."""


def refine_shapes(module: ir.Module, arg_types: Sequence[ir.Type]) -> ir.Module:
    """A new module: `module` specialized to calls of `main` with `arg_types`.

    Args:
      module: a module whose types may have dynamic dimensions.
      arg_types: static types of `main`'s arguments.

    Returns:
      A module with static types only (the input is not changed).

    Raises:
      ShapeRefinementError: a shape cannot be inferred, or an argument type conflicts.
      ValueError: a `shape_assertion` fails (its message).
    """
    refiner = _Refiner(module)
    main = module.function("main")
    refiner.specialize(main, list(arg_types), [None] * len(arg_types), "main")
    return ir.Module(module.name, refiner.functions, dict(module.attributes))


# ---------------------------------------------------------------------------------------------
# Shape rules for results whose types have dynamic dimensions.

def _same_as_widest(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    widest = max((t for t in types if isinstance(t, TensorType)), key=lambda t: t.rank)
    return [widest.shape] * len(op.results)


def _transpose(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    shape = types[0].shape
    return [tuple(shape[p] for p in op.attributes["permutation"])]


def _slice(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    a = op.attributes
    return [tuple(max(0, -(-(limit - start) // stride)) for start, limit, stride in zip(
        a["start_indices"], a["limit_indices"], a["strides"], strict=True))]


def _concatenate(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    dim = int(op.attributes["dimension"])
    shape = list(types[0].shape)
    shape[dim] = sum(t.shape[dim] for t in types)
    return [tuple(shape)]


def _pad(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    a = op.attributes
    return [tuple(lo + hi + size + max(size - 1, 0) * interior
                  for size, lo, hi, interior in zip(
                      types[0].shape, a["edge_padding_low"], a["edge_padding_high"],
                      a["interior_padding"], strict=True))]


def _reduce(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    dims = set(op.attributes["dimensions"])
    shape = tuple(d for i, d in enumerate(types[0].shape) if i not in dims)
    return [shape] * len(op.results)


def _reduce_window(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    a = op.attributes
    shape = types[0].shape
    rank = len(shape)
    window = a["window_dimensions"]
    strides = a.get("window_strides", (1,) * rank)
    base = a.get("base_dilations", (1,) * rank)
    dilations = a.get("window_dilations", (1,) * rank)
    padding = np.asarray(a.get("padding", np.zeros((rank, 2), np.int64))).reshape(rank, 2)
    out = []
    for i in range(rank):
        padded = (shape[i] - 1) * base[i] + 1 + int(padding[i, 0]) + int(padding[i, 1])
        extent = (window[i] - 1) * dilations[i] + 1
        out.append(max(0, (padded - extent) // strides[i] + 1))
    return [tuple(out)] * len(op.results)


def _dot_general(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    dn = op.attributes["dot_dimension_numbers"]
    lhs, rhs = types[0].shape, types[1].shape
    batch = [lhs[d] for d in dn.lhs_batching_dimensions]
    lhs_free = [d for i, d in enumerate(lhs)
                if i not in dn.lhs_batching_dimensions and i not in dn.lhs_contracting_dimensions]
    rhs_free = [d for i, d in enumerate(rhs)
                if i not in dn.rhs_batching_dimensions and i not in dn.rhs_contracting_dimensions]
    return [tuple(batch + lhs_free + rhs_free)]


def _gather(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    dn = op.attributes["dimension_numbers"]
    sizes = op.attributes["slice_sizes"]
    indices = types[1].shape
    batch = [d for i, d in enumerate(indices) if i != dn.index_vector_dim]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = [s for i, s in enumerate(sizes) if i not in dropped]
    rank = len(batch) + len(offsets)
    out: list[int] = []
    batch_it, offset_it = iter(batch), iter(offsets)
    for i in range(rank):
        out.append(next(offset_it) if i in dn.offset_dims else next(batch_it))
    return [tuple(out)]


def _convolution(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    a = op.attributes
    dn = a["dimension_numbers"]
    lhs, rhs = types[0].shape, types[1].shape
    spatial = len(dn.input_spatial_dimensions)
    strides = a.get("window_strides", (1,) * spatial)
    lhs_dilation = a.get("lhs_dilation", (1,) * spatial)
    rhs_dilation = a.get("rhs_dilation", (1,) * spatial)
    padding = np.asarray(a.get("padding", np.zeros((spatial, 2), np.int64))).reshape(spatial, 2)
    out = [0] * (spatial + 2)
    out[dn.output_batch_dimension] = lhs[dn.input_batch_dimension] // int(
        a.get("batch_group_count", 1))
    out[dn.output_feature_dimension] = rhs[dn.kernel_output_feature_dimension]
    for i in range(spatial):
        size = lhs[dn.input_spatial_dimensions[i]]
        padded = (size - 1) * lhs_dilation[i] + 1 + int(padding[i, 0]) + int(padding[i, 1])
        window = (rhs[dn.kernel_spatial_dimensions[i]] - 1) * rhs_dilation[i] + 1
        out[dn.output_spatial_dimensions[i]] = max(0, (padded - window) // strides[i] + 1)
    return [tuple(out)]


def _operand_types(count_from: Callable[[Op], int]) -> Callable[[Op, list], list]:
    def rule(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
        return [t.shape for t in types[:count_from(op)]]
    return rule


def _top_k(op: Op, types: list[TensorType]) -> list[tuple[int, ...]]:
    shape = types[0].shape[:-1] + (int(op.attributes["k"]),)
    return [shape, shape]


_SHAPE_RULES: dict[str, Callable[[Op, list[TensorType]], list[tuple[int, ...]]]] = {
    "stablehlo.transpose": _transpose,
    "stablehlo.slice": _slice,
    "stablehlo.concatenate": _concatenate,
    "stablehlo.pad": _pad,
    "stablehlo.reduce": _reduce,
    "stablehlo.reduce_window": _reduce_window,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.convolution": _convolution,
    "stablehlo.gather": _gather,
    "stablehlo.sort": _operand_types(lambda op: len(op.results)),
    "stablehlo.scatter": _operand_types(lambda op: len(op.results)),
    "stablehlo.optimization_barrier": _operand_types(lambda op: len(op.results)),
    "stablehlo.dynamic_update_slice": _operand_types(lambda op: 1),
    "stablehlo.select_and_scatter": _operand_types(lambda op: 1),
    "stablehlo.triangular_solve": lambda op, types: [types[1].shape],
    "chlo.top_k": _top_k,
}

# Ops whose operands are not shaped like their results: without a rule of their own their
# dynamic results cannot be refined.
_NOT_ELEMENTWISE = frozenset((
    "stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.iota",
    "stablehlo.custom_call", "stablehlo.fft", "stablehlo.dynamic_slice", "stablehlo.rng",
    "stablehlo.rng_bit_generator", "stablehlo.case", "stablehlo.all_gather",
    "stablehlo.reduce_scatter", "stablehlo.all_to_all", "stablehlo.get_dimension_size"))


def _infer(op: Op, types: list[ir.Type]) -> list[ir.Type]:
    """The result types of `op` on operands of `types` (the op's own when static)."""
    if all(not isinstance(t, TensorType) or t.is_static for t in op.result_types):
        return list(op.result_types)
    rule = _SHAPE_RULES.get(op.opcode)
    if rule is None:
        if op.opcode in _NOT_ELEMENTWISE or not types:
            raise ShapeRefinementError(f"cannot refine the result shape of {op.opcode}")
        rule = _same_as_widest
    shapes = rule(op, types)
    out = []
    for old, shape in zip(op.result_types, shapes, strict=True):
        if len(shape) != old.rank or not all(type(d) is int for d in shape):
            raise ShapeRefinementError(f"cannot refine the result shape of {op.opcode}: "
                                       f"got {shape} for {old}")
        out.append(TensorType(shape, old.dtype))
    return out


# ---------------------------------------------------------------------------------------------
# Constants of the dimension arithmetic.

def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


_FOLDS: dict[str, Callable[..., np.ndarray]] = {
    "stablehlo.add": np.add, "stablehlo.subtract": np.subtract,
    "stablehlo.multiply": np.multiply, "stablehlo.divide": _trunc_div,
    "stablehlo.remainder": np.fmod, "stablehlo.maximum": np.maximum,
    "stablehlo.minimum": np.minimum, "stablehlo.negate": np.negative,
    "stablehlo.and": np.logical_and, "stablehlo.or": np.logical_or,
    "stablehlo.xor": np.logical_xor, "stablehlo.not": np.logical_not,
    "stablehlo.select": np.where,
}
_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}


def _fold(op: Op, values: list[np.ndarray], out_type: TensorType) -> np.ndarray | None:
    """The value of an integer/bool op on constant operands (for shape arithmetic)."""
    if out_type.dtype.kind not in "biu" or out_type.size > 64:
        return None
    if op.opcode in _FOLDS:
        result = _FOLDS[op.opcode](*values)
    elif op.opcode == "stablehlo.compare":
        result = _COMPARE[op.attributes["comparison_direction"].value](*values)
    elif op.opcode in ("stablehlo.convert", "stablehlo.reshape"):
        result = values[0]
    elif op.opcode == "stablehlo.broadcast_in_dim":
        expanded = values[0].reshape([values[0].shape[op.attributes["broadcast_dimensions"]
                                                        .index(i)]
                                      if i in op.attributes["broadcast_dimensions"] else 1
                                      for i in range(out_type.rank)])
        result = np.broadcast_to(expanded, out_type.shape)
    elif op.opcode == "stablehlo.concatenate":
        result = np.concatenate(values, axis=int(op.attributes["dimension"]))
    else:
        return None
    return np.asarray(result).astype(out_type.dtype).reshape(out_type.shape)


# ---------------------------------------------------------------------------------------------
# The specializer.

class _Refiner:
    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.functions: list[ir.Function] = []
        self.specialized: dict[tuple, tuple[str, list[ir.Type]]] = {}
        self.used_names: set[str] = set()

    def specialize(self, fn: ir.Function, arg_types: list[ir.Type],
                   arg_consts: list[np.ndarray | None], name: str | None = None
                   ) -> tuple[str, list[ir.Type]]:
        """The name and result types of `fn` specialized to `arg_types` and the known
        constant arguments (made once per distinct specialization)."""
        key = (fn.name, tuple(str(t) for t in arg_types),
               tuple(None if c is None else (c.dtype.str, c.tobytes()) for c in arg_consts))
        done = self.specialized.get(key)
        if done is not None:
            return done
        if name is None:
            name = fn.name
            suffix = 0
            while name in self.used_names or (name != fn.name and any(
                    f.name == name for f in self.module.functions)):
                name = f"{fn.name}_{suffix}"
                suffix += 1
        self.used_names.add(name)
        for old, new in zip(fn.arg_types, arg_types, strict=True):
            _check_refines(old, new, f"argument of @{fn.name}")
        block = ir.Block([Value(t) for t in arg_types])
        env: dict[Value, Value] = {}
        consts: dict[Value, np.ndarray] = {}
        builder = ir.Builder(block)
        for old, new, const in zip(fn.args, block.args, arg_consts, strict=True):
            if const is not None:
                # A dimension argument known here: the body reads it as a constant.
                env[old] = builder.constant(const, const.dtype)
                consts[env[old]] = const
            else:
                env[old] = new
        placeholder = ir.Function(name, block, [], fn.visibility, fn.arg_attrs,
                                  fn.result_attrs)
        self.functions.append(placeholder)
        self.specialized[key] = (name, [])  # recursion is not expected in StableHLO
        self.block(fn.body, builder, env, consts)
        result_types = list(block.ops[-1].operand_types)
        placeholder.result_types = result_types
        self.specialized[key] = (name, result_types)
        return name, result_types

    def block(self, old: ir.Block, builder: ir.Builder, env: dict[Value, Value],
              consts: dict[Value, np.ndarray]) -> None:
        for op in old.ops:
            self.op(op, builder, env, consts)

    def region(self, old: ir.Region, arg_types: list[ir.Type], env: dict[Value, Value],
               consts: dict[Value, np.ndarray]) -> ir.Region:
        """The region refined for arguments of `arg_types` (it may read the values of
        enclosing regions: `env` is the function's, shared)."""
        block = ir.Block([Value(t) for t in arg_types])
        env.update(zip(old.block.args, block.args, strict=True))
        self.block(old.block, ir.Builder(block), env, consts)
        return ir.Region(block)

    def op(self, op: Op, b: ir.Builder, env: dict[Value, Value],
           consts: dict[Value, np.ndarray]) -> None:
        operands = [env[v] for v in op.operands]
        known = [consts.get(v) for v in operands]
        special = _SPECIAL.get(op.opcode)
        if special is not None:
            results = special(self, op, operands, known, b)
            if results is None:
                return
        else:
            results = self.generic(op, operands, env, consts, b)
            if len(results) == 1 and operands and all(k is not None for k in known):
                folded = _fold(op, known, results[0].type)
                if folded is not None:
                    consts[results[0]] = folded
        env.update(zip(op.results, results, strict=True))
        last = b.block.ops[-1] if b.block.ops else None
        if last is not None and last.opcode == "stablehlo.constant" and \
                len(results) == 1 and results[0] is last.results[0]:
            consts[results[0]] = np.asarray(last.attributes["value"]).reshape(
                results[0].type.shape)

    def generic(self, op: Op, operands: list[Value], env: dict[Value, Value],
                consts: dict[Value, np.ndarray], b: ir.Builder) -> list[Value]:
        types = [v.type for v in operands]
        regions = []
        if op.opcode == "stablehlo.while":
            regions = [self.region(r, types, env, consts) for r in op.regions]
            result_types = types
        else:
            for region in op.regions:
                arg_types = [a.type for a in region.block.args]
                if not all(not isinstance(t, TensorType) or t.is_static for t in arg_types):
                    raise ShapeRefinementError(f"cannot refine the region arguments of "
                                               f"{op.opcode}")
                regions.append(self.region(region, arg_types, env, consts))
            if op.opcode == "stablehlo.case":
                result_types = list(regions[0].block.ops[-1].operand_types)
            else:
                result_types = _infer(op, types)
        new = b.op(op.opcode, operands, result_types, dict(op.attributes), regions)
        return list(new.results)


def _check_refines(old: ir.Type, new: ir.Type, what: str) -> None:
    if not isinstance(old, TensorType) or not isinstance(new, TensorType):
        if type(old) is not type(new):
            raise ShapeRefinementError(f"{what}: {new} does not refine {old}")
        return
    if old.dtype != new.dtype or old.rank != new.rank or any(
            type(o) is int and o != n for o, n in zip(old.shape, new.shape, strict=True)):
        raise ShapeRefinementError(f"{what}: {new} does not refine {old}")


def _need_const(known: np.ndarray | None, op: Op) -> tuple[int, ...]:
    if known is None:
        raise ShapeRefinementError(f"the shape operand of {op.opcode} is not a constant after "
                                   "refinement")
    return tuple(int(v) for v in np.asarray(known).reshape(-1))


def _dynamic_broadcast(r: _Refiner, op: Op, operands: list[Value], known: list,
                       b: ir.Builder) -> list[Value]:
    shape = _need_const(known[1], op)
    attrs = {"broadcast_dimensions": op.attributes["broadcast_dimensions"]}
    return [b.one("stablehlo.broadcast_in_dim", [operands[0]],
                  TensorType(shape, op.result.type.dtype), **attrs)]


def _dynamic_iota(r: _Refiner, op: Op, operands: list[Value], known: list,
                  b: ir.Builder) -> list[Value]:
    shape = _need_const(known[0], op)
    return [b.one("stablehlo.iota", [], TensorType(shape, op.result.type.dtype),
                  iota_dimension=op.attributes["iota_dimension"])]


def _dynamic_reshape(r: _Refiner, op: Op, operands: list[Value], known: list,
                     b: ir.Builder) -> list[Value]:
    shape = _need_const(known[1], op)
    if math.prod(shape) != operands[0].type.size:
        raise ShapeRefinementError(f"dynamic_reshape of {operands[0].type} to {shape}")
    return [b.one("stablehlo.reshape", [operands[0]], TensorType(shape, op.result.type.dtype))]


def _real_dynamic_slice(r: _Refiner, op: Op, operands: list[Value], known: list,
                        b: ir.Builder) -> list[Value]:
    starts, limits, strides = (_need_const(k, op) for k in known[1:])
    sliced = Op("stablehlo.slice", [], [], {"start_indices": starts, "limit_indices": limits,
                                            "strides": strides})
    shape = _slice(sliced, [])[0]
    return [b.one("stablehlo.slice", [operands[0]], TensorType(shape, op.result.type.dtype),
                  start_indices=starts, limit_indices=limits, strides=strides)]


def _dynamic_gather(r: _Refiner, op: Op, operands: list[Value], known: list,
                    b: ir.Builder) -> list[Value]:
    sizes = _need_const(known[2], op)
    attrs = dict(op.attributes, slice_sizes=sizes)
    gather = Op("stablehlo.gather", [], [], attrs)
    shape = _gather(gather, [operands[0].type, operands[1].type])[0]
    new = b.op("stablehlo.gather", operands[:2], [TensorType(shape, op.result.type.dtype)],
               attrs)
    return list(new.results)


def _get_dimension_size(r: _Refiner, op: Op, operands: list[Value], known: list,
                        b: ir.Builder) -> list[Value]:
    size = operands[0].type.shape[int(op.attributes["dimension"])]
    return [b.constant(np.asarray(size, op.result.type.dtype), op.result.type.dtype)]


def _dynamic_reduce_window(r: _Refiner, op: Op, operands: list[Value], known: list,
                           b: ir.Builder) -> list[Value]:
    """`stablehlo.reduce_window` from JAX's `stablehlo.dynamic_reduce_window` custom call:
    the window operands become attributes, the reducer function the region."""
    n = len(op.results)
    dims, strides, base, dilations = (_need_const(k, op) for k in known[2 * n:2 * n + 4])
    padding = np.asarray(_need_const(known[2 * n + 4], op), np.int64).reshape(-1, 2)
    attrs = {"base_dilations": base, "padding": padding, "window_dilations": dilations,
             "window_dimensions": dims, "window_strides": strides}
    reducer = r.module.function(op.attributes["called_computations"][0].name)
    body = reducer.body
    region = r.region(ir.Region(body), [a.type for a in body.args], {}, {})
    region.block.ops[-1].opcode = "stablehlo.return"
    types = [v.type for v in operands[:2 * n]]
    shapes = _reduce_window(Op("stablehlo.reduce_window", [], list(op.results), attrs), types)
    result_types = [TensorType(shape, old.dtype)
                    for shape, old in zip(shapes, op.result_types, strict=True)]
    new = b.op("stablehlo.reduce_window", operands[:2 * n], result_types, attrs, [region])
    return list(new.results)


def _custom_call(r: _Refiner, op: Op, operands: list[Value], known: list,
                 b: ir.Builder) -> list[Value] | None:
    if op.attributes.get("call_target_name") == "stablehlo.dynamic_reduce_window":
        return _dynamic_reduce_window(r, op, operands, known, b)
    if op.attributes.get("call_target_name") != "shape_assertion":
        new = b.op(op.opcode, operands, _infer(op, [v.type for v in operands]),
                   dict(op.attributes))
        return list(new.results)
    if known[0] is None:
        raise ShapeRefinementError("a shape_assertion predicate is not a constant after "
                                   "refinement")
    if not bool(np.asarray(known[0])):
        values = [int(np.asarray(k)) if k is not None else "?" for k in known[1:]]
        raise ValueError(str(op.attributes.get("error_message", "")).format(*values))
    return None  # a satisfied assertion leaves nothing


def _call(r: _Refiner, op: Op, operands: list[Value], known: list,
          b: ir.Builder) -> list[Value]:
    callee = r.module.function(op.attributes["callee"].name)
    # Only scalar integer arguments (dimension values) are passed on as constants.
    consts = [k if k is not None and k.ndim == 0 else None for k in known]
    name, result_types = r.specialize(callee, [v.type for v in operands], consts)
    new = b.op("func.call", operands, result_types,
               dict(op.attributes, callee=ir.Symbol(name)))
    return list(new.results)


_SPECIAL: dict[str, Callable[..., list[Value] | None]] = {
    "stablehlo.dynamic_broadcast_in_dim": _dynamic_broadcast,
    "stablehlo.dynamic_iota": _dynamic_iota,
    "stablehlo.dynamic_reshape": _dynamic_reshape,
    "stablehlo.real_dynamic_slice": _real_dynamic_slice,
    "stablehlo.dynamic_gather": _dynamic_gather,
    "stablehlo.get_dimension_size": _get_dimension_size,
    "stablehlo.custom_call": _custom_call,
    "func.call": _call,
}
