"""The compiler's IR: a StableHLO module in SSA form.

A `Module` holds `Function`s; a function's body is a `Block` of `Op`s ending in a
`func.return`. An op has an opcode with its dialect (`stablehlo.add`, `chlo.lgamma`,
`func.call`), operand `Value`s, result `Value`s (each with a `TensorType`), attributes and
nested `Region`s (one block each: the computations of `stablehlo.reduce`, `sort`, `while`,
`case`, `scatter`, ...), whose last op is `stablehlo.return`.

Attributes are plain Python values where the StableHLO attribute kind follows from the type:

    int               64-bit integer attribute (`3 : i64`); `IntegerAttr` for other widths
    bool              `true` / `false`
    str               string attribute (`"..."`)
    tuple of ints     dense i64 array (`array<i64: 1, 0>`)
    np.ndarray        dense elements (`dense<[1, 2]> : tensor<2xi64>`)
    Enum              a StableHLO enum (`#stablehlo<comparison_direction GT>`)
    Symbol            a symbol reference (`@g`)
    tuple of others   an array attribute (`[#stablehlo<precision DEFAULT>, ...]`)
    dataclasses below StableHLO's structured attributes (`#stablehlo.dot<...>`, ...)

Values compare by identity; names are given only when printing.
"""
from __future__ import annotations

import math

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from justjax._src.core import dtypes
from justjax._src.core.shape_poly import DimExpr


# ---------------------------------------------------------------------------------------------
# Types.

_ELEMENT_TYPES = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8", np.dtype(np.uint16): "ui16", np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(dtypes.float16): "f16", np.dtype(dtypes.bfloat16): "bf16",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>",
    # ml_dtypes' narrow types: `f8E4M3FN`, `f4E2M1FN`, `i4`, `ui4`. JAX lowers int1 and uint1
    # as `i1`, bool's type, and then runs them as bools; here they keep types of their own.
    **{t: "f" + t.name[len("float"):].replace("_", "").upper()
       for t in dtypes.NARROW_FLOAT_TYPES},
    dtypes.int1: "si1", dtypes.int2: "i2", dtypes.int4: "i4",
    dtypes.uint1: "ui1", dtypes.uint2: "ui2", dtypes.uint4: "ui4",
}


def element_type_name(dtype: np.dtype) -> str:
    """The MLIR element type of a NumPy dtype: `f32`, `i1`, `ui8`, `complex<f32>`."""
    try:
        return _ELEMENT_TYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"no StableHLO element type for dtype {dtype}") from None


_DTYPES_BY_NAME = {name: dtype for dtype, name in _ELEMENT_TYPES.items()}


def element_dtype(name: str) -> np.dtype:
    """The NumPy dtype of an MLIR element type name (`f32` -> float32); the inverse of
    `element_type_name`."""
    try:
        return np.dtype(_DTYPES_BY_NAME[name])
    except KeyError:
        raise TypeError(f"no dtype for StableHLO element type {name}") from None


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor type: `tensor<2x3xf32>`; a dynamic dimension (None) prints `?`
    (`tensor<?x3xf32>`, in a shape-polymorphic module before its shapes are refined)."""

    shape: tuple[int | None, ...]
    dtype: np.dtype

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(
            d if d is None or isinstance(d, DimExpr) else int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def is_static(self) -> bool:
        """Whether every dimension is a known integer (a lowered shape-polymorphic program
        has symbolic ones, `DimExpr`s; a parsed one has None for them)."""
        return all(type(d) is int for d in self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __str__(self) -> str:
        dims = "".join(f"{d}x" if type(d) is int else "?x" for d in self.shape)
        return f"tensor<{dims}{element_type_name(self.dtype)}>"


@dataclass(frozen=True)
class TokenType:
    """StableHLO's `!stablehlo.token`, threading side effects in order."""

    def __str__(self) -> str:
        return "!stablehlo.token"


Type = TensorType | TokenType


# ---------------------------------------------------------------------------------------------
# Attributes with a structure of their own.

@dataclass(frozen=True)
class Enum:
    """A StableHLO enum attribute: `Enum("comparison_direction", "GT")`."""

    kind: str
    value: str


@dataclass(frozen=True)
class IntegerAttr:
    """An integer attribute of a type other than i64: `IntegerAttr(1, "i32")` is `1 : i32`."""

    value: int
    type: str

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)


@dataclass(frozen=True)
class ArrayAttr:
    """MLIR's array attribute, `[1, 2]` (elements of any kind; i64 and f64 ones print without
    their type): what a Python tuple or list becomes among a composite's attributes."""

    values: tuple


@dataclass(frozen=True)
class Symbol:
    """A reference to a function of the module: `@name`."""

    name: str


@dataclass(frozen=True)
class IndexArray:
    """Dense elements of MLIR's `index` type, `dense<[1, 0]> : tensor<2xindex>`: a custom
    call's operand and result layouts (each a minor-to-major order of dimensions)."""

    values: tuple[int, ...]


@dataclass(frozen=True)
class OutputOperandAlias:
    """`#stablehlo.output_operand_alias<...>`: a custom call result (at
    `output_tuple_indices`, empty for a single result) that may reuse operand
    `operand_index`'s buffer."""

    output_tuple_indices: tuple[int, ...]
    operand_index: int
    operand_tuple_indices: tuple[int, ...] = ()


@dataclass(frozen=True)
class ShardingRule:
    """Shardy's `#sdy.op_sharding_rule<([i, j])->([k, l], []) {i=3, ...}, custom>`: the factor
    (an index into `factor_sizes`) of each dimension of each operand and result."""

    operands: tuple[tuple[int, ...], ...]
    results: tuple[tuple[int, ...], ...]
    factor_sizes: tuple[int, ...]
    is_custom: bool = True


@dataclass(frozen=True)
class DotDimensionNumbers:
    """`#stablehlo.dot<lhs_batching_dimensions = [...], ...>`."""

    lhs_batching_dimensions: tuple[int, ...]
    rhs_batching_dimensions: tuple[int, ...]
    lhs_contracting_dimensions: tuple[int, ...]
    rhs_contracting_dimensions: tuple[int, ...]


@dataclass(frozen=True)
class GatherDimensionNumbers:
    """`#stablehlo.gather<offset_dims = [...], ...>`."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...]
    start_indices_batching_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int


@dataclass(frozen=True)
class ScatterDimensionNumbers:
    """`#stablehlo.scatter<update_window_dims = [...], ...>`."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    scatter_indices_batching_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int


@dataclass(frozen=True)
class ConvDimensionNumbers:
    """`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`: for each side the batch /
    feature dimension and the spatial dimensions in order."""

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# Values, ops, blocks, regions, functions, modules.

_value_ids = itertools.count()


class Value:
    """An SSA value: an op result or a block argument. Compares by identity."""

    __slots__ = ("type", "id")

    def __init__(self, type: Type) -> None:
        self.type = type
        self.id = next(_value_ids)

    def __repr__(self) -> str:
        return f"Value(id={self.id}: {self.type})"


@dataclass(eq=False)
class Block:
    """Arguments and a list of ops; the last op is the terminator (`stablehlo.return` in
    regions, `func.return` in function bodies)."""

    args: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)

    @property
    def terminator(self) -> Op:
        return self.ops[-1]

    def walk(self) -> Iterator[Op]:
        """Every op of the block and of regions nested in it, parents before children."""
        for op in self.ops:
            yield op
            for region in op.regions:
                yield from region.block.walk()


@dataclass(eq=False)
class Region:
    """A nested computation of an op: a single block."""

    block: Block


@dataclass(eq=False)
class Op:
    """`results = opcode(operands) {attributes} (regions)`."""

    opcode: str
    operands: list[Value]
    results: list[Value]
    attributes: dict[str, Any] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)

    @property
    def result(self) -> Value:
        """The single result of a one-result op."""
        if len(self.results) != 1:
            raise ValueError(f"{self.opcode} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> list[Type]:
        return [v.type for v in self.results]

    @property
    def operand_types(self) -> list[Type]:
        return [v.type for v in self.operands]

    def __repr__(self) -> str:
        return f"Op({self.opcode}, {len(self.operands)} operands, {len(self.results)} results)"


@dataclass(eq=False)
class Function:
    """`func.func <visibility> @name(args) -> results { body }`. `result_attrs` hold one dict
    per result (`jax.result_info`); `arg_attrs` one per argument (`tf.aliasing_output`...)."""

    name: str
    body: Block
    result_types: list[Type]
    visibility: str = "private"
    arg_attrs: list[dict[str, Any]] | None = None
    result_attrs: list[dict[str, Any]] | None = None

    @property
    def args(self) -> list[Value]:
        return self.body.args

    @property
    def arg_types(self) -> list[Type]:
        return [v.type for v in self.body.args]

    @property
    def aliased_outputs(self) -> dict[int, int]:
        """Argument index -> the output index it is donated to (`tf.aliasing_output`)."""
        found: dict[int, int] = {}
        for i, attrs in enumerate(self.arg_attrs or []):
            alias = attrs.get("tf.aliasing_output")
            if alias is not None:
                found[i] = int(getattr(alias, "value", alias))
        return found


@dataclass(eq=False)
class Module:
    """`module @name attributes {...} { functions }`; the entry point is `main`."""

    name: str
    functions: list[Function] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)

    def function(self, name: str) -> Function:
        for fn in self.functions:
            if fn.name == name:
                return fn
        raise KeyError(f"module @{self.name} has no function @{name}")

    @property
    def main(self) -> Function:
        return self.function("main")

    def walk(self) -> Iterator[Op]:
        for fn in self.functions:
            yield from fn.body.walk()

    def __str__(self) -> str:
        from justjax._src.hlo.stablehlo_printer import print_module
        return print_module(self)


# ---------------------------------------------------------------------------------------------
# Building.

class Builder:
    """Appends ops to a block: `b.op("stablehlo.add", [x, y], [x.type]).result`."""

    def __init__(self, block: Block) -> None:
        self.block = block

    def op(self, opcode: str, operands: Sequence[Value], result_types: Sequence[Type],
           attributes: dict[str, Any] | None = None,
           regions: Sequence[Region] = ()) -> Op:
        for operand in operands:
            if not isinstance(operand, Value):
                raise TypeError(f"{opcode}: operand {operand!r} is not an IR value")
        new = Op(opcode, list(operands), [Value(t) for t in result_types],
                 dict(attributes or {}), list(regions))
        self.block.ops.append(new)
        return new

    def one(self, opcode: str, operands: Sequence[Value], result_type: Type,
            **attributes: Any) -> Value:
        """Emits a one-result op and returns its result."""
        return self.op(opcode, operands, [result_type], attributes).result

    def constant(self, value: Any, dtype: np.dtype) -> Value:
        """`stablehlo.constant dense<value>` of `value`'s shape and the given dtype."""
        array = np.asarray(value, dtype=dtype)
        return self.one("stablehlo.constant", [], TensorType(array.shape, array.dtype),
                        value=array)

    def ret(self, values: Sequence[Value], opcode: str = "stablehlo.return") -> Op:
        return self.op(opcode, values, [])


def new_region(arg_types: Sequence[Type]) -> tuple[Region, Builder]:
    """A region whose block takes arguments of `arg_types`, and a builder for its body."""
    block = Block([Value(t) for t in arg_types])
    return Region(block), Builder(block)
