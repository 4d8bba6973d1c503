"""Lowering shape-polymorphic programs: dimension values in the IR, and dynamic shape ops.

A function lowered for symbolic shapes (`f32[b,4]`) takes the value of each dimension
variable as a leading `tensor<i32>` argument (`{jax.global_constant = "b"}`, JAX's calling
convention), and its tensor types print `?` for symbolic dimensions (`tensor<?x4xf32>`).
Lowering rules build types from avals as usual; `make_shapes_dynamic` then rewrites, in a
lowered function, every op whose shape is an attribute or a static type but depends on the
variables into StableHLO's dynamic form, computing the shape from the dimension values as
JAX does:

    broadcast_in_dim -> dynamic_broadcast_in_dim(x, shape)    iota -> dynamic_iota(shape)
    reshape          -> dynamic_reshape(x, shape)             gather -> dynamic_gather(..)
    slice            -> real_dynamic_slice(x, start, limit, strides)

`hlo/passes/refine_shapes.py` undoes this once the shapes are known.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.core import dtypes
from justjax._src.core.shape_poly import DimExpr
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op, TensorType, Value


def dim_dtype() -> np.dtype:
    """The type of dimension values: int32 (int64 under `jax_enable_x64`), as JAX's."""
    return np.dtype(dtypes.canonicalize_dtype(np.int64))


def is_symbolic(shape: Sequence[Any]) -> bool:
    return any(isinstance(d, DimExpr) for d in shape)


class DimEmitter:
    """Appends ops to a list (spliced into a block before the op that needs them)."""

    def __init__(self, dim_values: dict[str, Value]) -> None:
        self.ops: list[Op] = []
        self.dim_values = dim_values

    def one(self, opcode: str, operands: Sequence[Value], result_type: ir.Type,
            **attributes: Any) -> Value:
        op = Op(opcode, list(operands), [Value(result_type)], dict(attributes))
        self.ops.append(op)
        return op.result

    def const(self, value: Any, shape: tuple[int, ...] = ()) -> Value:
        array = np.full(shape, value, dim_dtype())
        return self.one("stablehlo.constant", [], TensorType(shape, array.dtype), value=array)

    # The algebra `DimExpr.evaluate` computes in (scalars of the dimension type).
    def add(self, a: Value, b: Value) -> Value:
        return self.one("stablehlo.add", [a, b], a.type)

    def mul(self, a: Value, b: Value) -> Value:
        return self.one("stablehlo.multiply", [a, b], a.type)

    def max(self, a: Value, b: Value) -> Value:
        return self.one("stablehlo.maximum", [a, b], a.type)

    def min(self, a: Value, b: Value) -> Value:
        return self.one("stablehlo.minimum", [a, b], a.type)

    def compare(self, a: Value, b: Value, direction: str) -> Value:
        return self.one("stablehlo.compare", [a, b], TensorType((), np.bool_),
                        comparison_direction=ir.Enum("comparison_direction", direction),
                        compare_type=ir.Enum("comparison_type", "SIGNED"))

    def floordiv(self, a: Value, b: Value) -> Value:
        """Floor division from StableHLO's truncating one: one less when the remainder is
        not zero and the operands' signs differ."""
        quotient = self.one("stablehlo.divide", [a, b], a.type)
        remainder = self.one("stablehlo.remainder", [a, b], a.type)
        zero = self.const(0)
        inexact = self.compare(remainder, zero, "NE")
        signs_differ = self.one("stablehlo.xor", [self.compare(a, zero, "LT"),
                                                  self.compare(b, zero, "LT")],
                                TensorType((), np.bool_))
        adjust = self.one("stablehlo.and", [inexact, signs_differ], TensorType((), np.bool_))
        lower = self.one("stablehlo.subtract", [quotient, self.const(1)], a.type)
        return self.one("stablehlo.select", [adjust, lower, quotient], a.type)

    def mod(self, a: Value, b: Value) -> Value:
        """Python's modulo (the sign of the divisor) from StableHLO's remainder."""
        remainder = self.one("stablehlo.remainder", [a, b], a.type)
        zero = self.const(0)
        nonzero = self.compare(remainder, zero, "NE")
        signs_differ = self.one("stablehlo.xor", [self.compare(remainder, zero, "LT"),
                                                  self.compare(b, zero, "LT")],
                                TensorType((), np.bool_))
        adjust = self.one("stablehlo.and", [nonzero, signs_differ], TensorType((), np.bool_))
        shifted = self.one("stablehlo.add", [remainder, b], a.type)
        return self.one("stablehlo.select", [adjust, shifted, remainder], a.type)

    def dim(self, d: Any) -> Value:
        """A scalar of the dimension type holding `d` (an int or an expression)."""
        if isinstance(d, DimExpr):
            return d.evaluate(self.dim_values, self)
        return self.const(int(d))

    def shape(self, shape: Sequence[Any]) -> Value:
        """A `tensor<rank x i32>` holding `shape`: each symbolic dimension reshaped to one
        element, each constant one a one-element constant, concatenated (JAX's form)."""
        dtype = dim_dtype()
        pieces = []
        for d in shape:
            if isinstance(d, DimExpr):
                pieces.append(self.one("stablehlo.reshape", [self.dim(d)],
                                       TensorType((1,), dtype)))
            else:
                pieces.append(self.const(int(d), (1,)))
        if not pieces:
            return self.const(0, (0,))
        if len(pieces) == 1:
            return pieces[0]
        return self.one("stablehlo.concatenate", pieces, TensorType((len(shape),), dtype),
                        dimension=0)


def dim_value(b: ir.Builder, dim_values: dict[str, Value], d: Any) -> Value:
    """Emits into `b` a scalar of the dimension type holding `d`."""
    emitter = DimEmitter(dim_values)
    value = emitter.dim(d)
    b.block.ops.extend(emitter.ops)
    return value


def dim_arg_attrs(dim_vars: Sequence[str]) -> list[dict[str, Any]]:
    return [{"jax.global_constant": name} for name in dim_vars]


# ---------------------------------------------------------------------------------------------
# Rewriting ops with symbolic shapes into their dynamic forms.

def _rewrite(op: Op, emit: DimEmitter) -> Op | None:
    """The dynamic form of `op` (with the same result values), or None to keep it."""
    out = op.results[0].type if len(op.results) == 1 else None
    if not isinstance(out, TensorType):
        return None
    shape = out.shape
    if op.opcode == "stablehlo.broadcast_in_dim" and is_symbolic(shape):
        return Op("stablehlo.dynamic_broadcast_in_dim", [op.operands[0], emit.shape(shape)],
                  op.results, dict(op.attributes))
    if op.opcode == "stablehlo.iota" and is_symbolic(shape):
        return Op("stablehlo.dynamic_iota", [emit.shape(shape)], op.results,
                  dict(op.attributes))
    if op.opcode == "stablehlo.reshape" and is_symbolic(shape):
        return Op("stablehlo.dynamic_reshape", [op.operands[0], emit.shape(shape)],
                  op.results, dict(op.attributes))
    if op.opcode == "stablehlo.slice" and any(
            isinstance(v, DimExpr) for v in (*op.attributes["start_indices"],
                                             *op.attributes["limit_indices"])):
        attrs = op.attributes
        operands = [op.operands[0], emit.shape(attrs["start_indices"]),
                    emit.shape(attrs["limit_indices"]), emit.shape(attrs["strides"])]
        return Op("stablehlo.real_dynamic_slice", operands, op.results, {})
    if op.opcode == "stablehlo.gather" and is_symbolic(op.attributes["slice_sizes"]):
        attrs = {k: v for k, v in op.attributes.items() if k != "slice_sizes"}
        operands = [*op.operands, emit.shape(op.attributes["slice_sizes"])]
        return Op("stablehlo.dynamic_gather", operands, op.results, attrs)
    return None


_WINDOW_ATTRIBUTES = ("window_dimensions", "window_strides", "base_dilations",
                      "window_dilations", "padding")


def _dynamic_reduce_window(op: Op, emit: DimEmitter, add_function: Any) -> Op:
    """`stablehlo.custom_call @stablehlo.dynamic_reduce_window(inputs, inits, window
    dimensions, strides, base dilations, window dilations, padding)` calling the reducer
    as a function, JAX's form of a reduce_window whose window depends on the variables."""
    a = op.attributes
    rank = op.operands[0].type.rank
    defaults = {"window_strides": (1,) * rank, "base_dilations": (1,) * rank,
                "window_dilations": (1,) * rank}
    shapes = [emit.shape(a.get(name, defaults.get(name))) for name in _WINDOW_ATTRIBUTES[:-1]]
    flat_padding = [d for pair in a["padding"] for d in pair]
    padding = emit.one("stablehlo.reshape", [emit.shape(flat_padding)],
                       TensorType((rank, 2), dim_dtype()))
    region = op.regions[0].block
    dtype = np.dtype(region.args[0].type.dtype).name
    region.ops[-1].opcode = "func.return"
    name = add_function(f"reduce_window_{dtype}_reducer", region)
    return Op("stablehlo.custom_call", [*op.operands, *shapes, padding], op.results,
              {"call_target_name": "stablehlo.dynamic_reduce_window",
               "api_version": ir.IntegerAttr(2, "i32"),
               "called_computations": (ir.Symbol(name),)})


def make_shapes_dynamic(block: ir.Block, dim_values: dict[str, Value],
                        add_function: Any = None) -> None:
    """Rewrites the ops of `block` (and of regions in it) whose shapes depend on dimension
    variables into their dynamic forms, computing the shapes from `dim_values`.
    `add_function(name, block)` adds a private function to the module (a reducer) and
    returns its name."""
    new_ops: list[Op] = []
    for op in block.ops:
        for region in op.regions:
            make_shapes_dynamic(region.block, dim_values, add_function)
        emit = DimEmitter(dim_values)
        replacement = _rewrite(op, emit)
        if op.opcode == "stablehlo.reduce_window" and any(
                isinstance(d, DimExpr) for name in _WINDOW_ATTRIBUTES
                for d in np.asarray(op.attributes.get(name, ()), object).reshape(-1)):
            replacement = _dynamic_reduce_window(op, emit, add_function)
        new_ops.extend(emit.ops)
        new_ops.append(op if replacement is None else replacement)
    block.ops[:] = new_ops
