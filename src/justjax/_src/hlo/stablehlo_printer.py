"""StableHLO MLIR text of an `ir.Module`, as `jax.jit(f).lower(x).as_text()` prints it.

The text is what MLIR's printer gives for the same module: the custom ("pretty") assembly
of the ops that have one (`stablehlo.add %0, %1 : tensor<5xf32>`), MLIR's generic form
(`%0 = "stablehlo.sort"(%a) <{dimension = 0 : i64}> ({...}) : (...) -> ...`) for every
other op, MLIR's value names (`%arg0`, `%0`, `%0#1`, `%cst`, `%c_0`, `%iterArg`), and
dense constants written exactly as MLIR writes them (floats in APFloat's notation, hex
for NaN/Inf and for values a short decimal cannot round-trip, `dense<"0x...">` for more
than 100 elements). Real jaxlib parses this text back to the same module.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import dtypes
from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.sharding import CONSTRAINT, MANUAL, MeshShape, TensorSharding, manual_mesh

INDENT = "  "


# ---------------------------------------------------------------------------------------------
# Floats, as LLVM's APFloat::toString writes them and MLIR's printFloatValue chooses.

@dataclasses.dataclass(frozen=True)
class _FloatFormat:
    precision: int      # significand bits, the implicit one included
    min_exponent: int   # of the smallest normal number
    max_exponent: int
    bits: int           # of storage
    largest: Fraction | None = None  # when not IEEE's (formats whose top values are NaN)


def _narrow_float_format(dtype: np.dtype) -> _FloatFormat:
    """The format of one of ml_dtypes' narrow floats, read off its `finfo`."""
    info = dtypes.finfo(dtype)
    return _FloatFormat(int(info.nmant) + 1, int(info.minexp), int(info.maxexp) - 1,
                        8 * dtype.itemsize, Fraction(float(info.max)))


_FLOAT_FORMATS = {
    np.dtype(dtypes.float16): _FloatFormat(11, -14, 15, 16),
    np.dtype(dtypes.bfloat16): _FloatFormat(8, -126, 127, 16),
    np.dtype(np.float32): _FloatFormat(24, -126, 127, 32),
    np.dtype(np.float64): _FloatFormat(53, -1022, 1023, 64),
    **{t: _narrow_float_format(t) for t in dtypes.NARROW_FLOAT_TYPES},
}
_UINT_OF_WIDTH = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _round_digits(digits: str, exp: int, precision: int) -> tuple[str, int]:
    """APFloat's decimal rounding of `digits * 10**exp` to `precision` significant digits:
    half up, trailing zeros dropped."""
    if len(digits) <= precision:
        return digits, exp
    if digits[precision] < "5":
        kept = digits[:precision].rstrip("0")
        return kept, exp + len(digits) - len(kept)
    stripped = digits[:precision].rstrip("9")
    if not stripped:
        return "1", exp + len(digits)
    kept = stripped[:-1] + chr(ord(stripped[-1]) + 1)
    return kept, exp + len(digits) - len(kept)


def _apfloat_digits(significand: int, exp2: int, precision: int) -> tuple[str, int]:
    """The decimal digits and power of ten of `significand * 2**exp2`, reduced to
    `precision` digits exactly as APFloat does (a truncating division first, then a
    rounding one)."""
    trailing = (significand & -significand).bit_length() - 1
    significand >>= trailing
    exp2 += trailing
    exp10 = 0
    if exp2 > 0:
        significand <<= exp2
    elif exp2 < 0:
        significand *= 5 ** -exp2
        exp10 = exp2
    bits = significand.bit_length()
    bits_required = (precision * 196 + 58) // 59
    if bits > bits_required:
        removable = (bits - bits_required) * 59 // 196
        if removable:
            exp10 += removable
            significand //= 10 ** removable
    digits = str(significand)
    stripped = digits.rstrip("0")
    exp10 += len(digits) - len(stripped)
    return _round_digits(stripped, exp10, precision)


def _apfloat_to_string(value: float, semantics_precision: int, format_precision: int,
                       max_padding: int, truncate_zero: bool) -> str:
    """`APFloat::toString(str, FormatPrecision, FormatMaxPadding, TruncateZero)` of a
    finite value."""
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        if max_padding:
            return sign + "0"
        if truncate_zero:
            return sign + "0.0E+0"
        return sign + "0.0" + "0" * max(format_precision - 1, 0) + "e+00"
    if not format_precision:
        format_precision = 2 + semantics_precision * 59 // 196
    mantissa, exponent = math.frexp(abs(value))
    digits, exp = _apfloat_digits(int(mantissa * (1 << 53)), exponent - 53, format_precision)
    count = len(digits)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or count + exp > format_precision
    else:
        msd = exp + count - 1
        scientific = msd < 0 and -msd > max_padding
    if scientific:
        exp += count - 1
        text = digits[0] + "." + ("0" if count == 1 and truncate_zero else digits[1:])
        if not truncate_zero and format_precision > count - 1:
            text += "0" * (format_precision - count + 1)
        exponent_digits = str(abs(exp))
        if not truncate_zero and len(exponent_digits) < 2:
            exponent_digits = "0" + exponent_digits
        return (sign + text + ("E" if truncate_zero else "e") + ("+" if exp >= 0 else "-")
                + exponent_digits)
    if exp >= 0:
        return sign + digits + "0" * exp
    whole = exp + count
    if whole > 0:
        return sign + digits[:whole] + "." + digits[whole:]
    return sign + "0." + "0" * -whole + digits


def _parse_rounded(text: str, fmt: _FloatFormat) -> Fraction | None:
    """`text` parsed to the nearest value of the format (ties to even); None on overflow."""
    value = Fraction(text)
    magnitude = abs(value)
    if magnitude == 0:
        return value
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, fmt.min_exponent)
    quantum = Fraction(2) ** (exponent - fmt.precision + 1)
    rounded = round(magnitude / quantum) * quantum  # round() on a Fraction: ties to even
    largest = fmt.largest
    if largest is None:
        largest = (2 - Fraction(2) ** (1 - fmt.precision)) * Fraction(2) ** fmt.max_exponent
    if rounded > largest:
        return None
    return -rounded if value < 0 else rounded


def _hex_bits(value: Any, dtype: np.dtype) -> str:
    bits = _FLOAT_FORMATS[dtype].bits
    raw = int(np.asarray(value, dtype).reshape(1).view(_UINT_OF_WIDTH[bits])[0])
    return f"0x{raw:X}"


def format_float(value: Any, dtype: Any) -> str:
    """A float of `dtype` (f16, bf16, f32, f64) as MLIR prints it: `1.000000e+00`,
    `0.333333343`, `0x7FC00000`."""
    dtype = np.dtype(dtype)
    fmt = _FLOAT_FORMATS[dtype]
    x = float(np.asarray(value, dtype))
    if math.isnan(x) or math.isinf(x):
        return _hex_bits(value, dtype)
    short = _apfloat_to_string(x, fmt.precision, 6, 0, False)
    parsed = _parse_rounded(short, fmt)
    same_sign = short.startswith("-") == (math.copysign(1.0, x) < 0)
    if parsed is not None and parsed == Fraction(x) and same_sign:
        return short
    default = _apfloat_to_string(x, fmt.precision, 0, 3, True)
    if "." in default:
        return default
    return _hex_bits(value, dtype)


def parse_float(text: str, dtype: Any) -> np.generic:
    """The value of `dtype` that MLIR text `text` denotes (the inverse of `format_float`):
    a decimal rounded once, exactly, to the nearest value of the format (ties to even), or
    hex bits (`0x7FC00000`)."""
    dtype = np.dtype(dtype)
    fmt = _FLOAT_FORMATS[dtype]
    if text.startswith(("0x", "0X")):
        raw = np.asarray(int(text, 16), _UINT_OF_WIDTH[fmt.bits])
        return raw.reshape(1).view(dtype)[0]
    exact = _parse_rounded(text, fmt)
    if exact is None:
        return np.asarray(-np.inf if text.lstrip().startswith("-") else np.inf, dtype)[()]
    value = float(exact)
    if value == 0 and text.lstrip().startswith("-"):
        value = -0.0
    return np.asarray(value, dtype)[()]


# ---------------------------------------------------------------------------------------------
# Dense elements.

_HEX_THRESHOLD = 100  # MLIR prints elements attributes of more elements as hex


def _element(value: Any, dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return "true" if value else "false"
    if dtypes.kind(dtype) in "iu":
        return str(int(value))
    if dtype.kind == "c":
        part = np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)
        return f"({format_float(value.real, part)},{format_float(value.imag, part)})"
    return format_float(value, dtype)


def _nested(array: np.ndarray) -> str:
    if array.ndim == 1:
        return "[" + ", ".join(_element(v, array.dtype) for v in array) + "]"
    return "[" + ", ".join(_nested(sub) for sub in array) + "]"


def dense_literal(array: np.ndarray) -> str:
    """`dense<...>` of an array, as MLIR prints a DenseElementsAttr: `dense<>` when empty,
    one value for a splat, nested lists up to 100 elements, else the raw bytes in hex."""
    array = np.asarray(array)
    if array.size == 0:
        return "dense<>"
    raw = array.reshape(-1)
    first = raw[:1].tobytes()
    if raw.tobytes() == first * raw.size:
        return f"dense<{_element(raw[0], array.dtype)}>"
    if array.size > _HEX_THRESHOLD:
        data = raw.astype(np.uint8) if array.dtype == np.bool_ else raw
        return f'dense<"0x{data.tobytes().hex().upper()}">'
    return f"dense<{_nested(array)}>"


# ---------------------------------------------------------------------------------------------
# Attributes.

def _is_bare_identifier(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_") and all(
        c.isalnum() or c in "_$." for c in name) and name.isascii()


def escape_string(text: str) -> str:
    """A quoted MLIR string: `\\` doubled, `"` and unprintable bytes as `\\XX`."""
    out = []
    for byte in text.encode():
        char = chr(byte)
        if char == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and char != '"':
            out.append(char)
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def symbol(name: str) -> str:
    """`@name`, quoted when not a bare identifier: `@"<lambda>"`."""
    return "@" + (name if _is_bare_identifier(name) else escape_string(name))


def _dims(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _struct(name: str, fields: Sequence[tuple[str, Any]]) -> str:
    """`#stablehlo.name<f1 = [..], f2 = 1>`; empty lists and a zero `index_vector_dim`
    (the defaults) are omitted as MLIR does."""
    parts = []
    for field_name, value in fields:
        if isinstance(value, tuple):
            if value:
                parts.append(f"{field_name} = {_dims(value)}")
        elif value != 0:
            parts.append(f"{field_name} = {value}")
    return f"#stablehlo.{name}<{', '.join(parts)}>"


def conv_dimensions(dn: ir.ConvDimensionNumbers) -> str:
    """`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`."""
    def side(rank: int, named: dict[int, str], spatial: Sequence[int]) -> str:
        labels = dict(named)
        for i, d in enumerate(spatial):
            labels[d] = str(i)
        return "[" + ", ".join(labels[d] for d in range(rank)) + "]"

    rank = 2 + len(dn.input_spatial_dimensions)
    lhs = side(rank, {dn.input_batch_dimension: "b", dn.input_feature_dimension: "f"},
               dn.input_spatial_dimensions)
    rhs = side(rank, {dn.kernel_input_feature_dimension: "i",
                      dn.kernel_output_feature_dimension: "o"}, dn.kernel_spatial_dimensions)
    out = side(rank, {dn.output_batch_dimension: "b", dn.output_feature_dimension: "f"},
               dn.output_spatial_dimensions)
    return f"{lhs}x{rhs}->{out}"


def _dataclass_attribute(value: Any) -> str | None:
    if isinstance(value, ir.DotDimensionNumbers):
        return _struct("dot", [(f.name, getattr(value, f.name))
                               for f in dataclasses.fields(value)])
    if isinstance(value, (ir.GatherDimensionNumbers, ir.ScatterDimensionNumbers)):
        name = "gather" if isinstance(value, ir.GatherDimensionNumbers) else "scatter"
        return _struct(name, [(f.name, getattr(value, f.name))
                              for f in dataclasses.fields(value)])
    if isinstance(value, ir.ConvDimensionNumbers):
        return f"#stablehlo.conv<{conv_dimensions(value)}>"
    if isinstance(value, ir.IndexArray):
        values = np.asarray(value.values, np.int64)
        return f"{dense_literal(values)} : tensor<{len(values)}xindex>"
    if isinstance(value, ir.OutputOperandAlias):
        return (f"#stablehlo.output_operand_alias<output_tuple_indices = "
                f"{_dims(value.output_tuple_indices)}, operand_index = {value.operand_index}, "
                f"operand_tuple_indices = {_dims(value.operand_tuple_indices)}>")
    if isinstance(value, ir.ShardingRule):
        return _sharding_rule(value)
    return None


def _factor_name(index: int) -> str:
    """Shardy's factor names: `i` .. `z`, then `z_1`, `z_2`, ..."""
    letters = ord("z") - ord("i") + 1
    return chr(ord("i") + index) if index < letters else f"z_{index - letters + 1}"


def _sharding_rule(rule: ir.ShardingRule) -> str:
    def side(mappings: tuple[tuple[int, ...], ...]) -> str:
        return "(" + ", ".join("[" + ", ".join(_factor_name(f) for f in factors) + "]"
                               for factors in mappings) + ")"

    sizes = ", ".join(f"{_factor_name(i)}={size}" for i, size in enumerate(rule.factor_sizes))
    custom = ", custom" if rule.is_custom else ""
    return f"#sdy.op_sharding_rule<{side(rule.operands)}->{side(rule.results)} {{{sizes}}}{custom}>"


def _tensor_type_of(array: np.ndarray) -> str:
    return str(ir.TensorType(array.shape, array.dtype))


def attribute(value: Any) -> str:
    """An attribute value (see `ir`'s docstring for the kinds) in MLIR syntax."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, ir.IntegerAttr):
        return f"{value.value} : {value.type}"
    if isinstance(value, str):
        return escape_string(value)
    if isinstance(value, np.ndarray):
        return f"{dense_literal(value)} : {_tensor_type_of(value)}"
    if isinstance(value, np.generic):
        dtype = np.dtype(value.dtype)
        return f"{_element(value, dtype)} : {ir.element_type_name(dtype)}"
    if isinstance(value, ir.Enum):
        return f"#stablehlo<{value.kind} {value.value}>"
    if isinstance(value, ir.Symbol):
        return symbol(value.name)
    if isinstance(value, ir.ArrayAttr):
        return "[" + ", ".join(_array_element(v) for v in value.values) + "]"
    if isinstance(value, TensorSharding):
        return value.sdy_text()
    if isinstance(value, dict):
        return attribute_dict(value)
    if isinstance(value, (tuple, list)):
        return _sequence_attribute(tuple(value))
    structured = _dataclass_attribute(value)
    if structured is not None:
        return structured
    raise TypeError(f"cannot print attribute value {value!r}")


def _array_element(value: Any) -> str:
    """An element of an array attribute: MLIR elides the default types (i64, f64)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, np.float64):
        return format_float(value, np.dtype(np.float64))
    return attribute(value)


def _sequence_attribute(values: tuple) -> str:
    if all(isinstance(v, (bool, np.bool_)) for v in values) and values:
        return "array<i1: " + ", ".join(attribute(v) for v in values) + ">"
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
           for v in values):
        if not values:
            return "array<i64>"
        return "array<i64: " + ", ".join(str(int(v)) for v in values) + ">"
    return "[" + ", ".join(attribute(v) for v in values) + "]"


def _attribute_name(name: str) -> str:
    return name if _is_bare_identifier(name) else escape_string(name)


def attribute_dict(attributes: dict[str, Any]) -> str:
    """`{a = 1 : i64, b = "x"}`, keys sorted as MLIR's dictionaries are."""
    items = sorted(attributes.items())
    return "{" + ", ".join(f"{_attribute_name(k)} = {attribute(v)}" for k, v in items) + "}"


# ---------------------------------------------------------------------------------------------
# Value names: MLIR's SSANameState. Names are per function; a region's values are numbered
# after all values of its parent region, sibling regions restart from the same counters, and
# a name clash takes the suffix `_<n>` from a counter shared down the region nesting.

@dataclasses.dataclass
class _Counters:
    value: int = 0
    argument: int = 0
    conflict: int = 0


class _Scope:
    """Names used in a region and its ancestors."""

    def __init__(self, parent: _Scope | None) -> None:
        self.parent = parent
        self.names: set[str] = set()

    def __contains__(self, name: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names:
                return True
            scope = scope.parent
        return False


class Namer:
    """The printed name of every value of one function."""

    def __init__(self, fn: ir.Function) -> None:
        self.names: dict[Value, str] = {}
        # op -> its default number, for multiple-result ops printed `%N:k` / `%N#i`.
        self.groups: dict[Op, int] = {}
        self._owner: dict[Value, tuple[Op, int]] = {}
        self._region(fn.body, None, _Counters(), _Scope(None), is_function=True)

    def __getitem__(self, value: Value) -> str:
        name = self.names.get(value)
        if name is not None:
            return name
        op, index = self._owner[value]
        return f"%{self.groups[op]}#{index}"

    def _unique(self, name: str, counters: _Counters, scope: _Scope) -> str:
        if name in scope:
            while True:
                probe = f"{name}_{counters.conflict}"
                counters.conflict += 1
                if probe not in scope:
                    name = probe
                    break
        scope.names.add(name)
        return name

    def _region(self, block: ir.Block, parent: Op | None, counters: _Counters,
                parent_scope: _Scope | None, is_function: bool = False) -> None:
        scope = _Scope(parent_scope)
        if parent is not None and parent.opcode == "stablehlo.while":
            for arg in block.args:
                self.names[arg] = "%" + self._unique("iterArg", counters, scope)
        else:
            for arg in block.args:
                name = self._unique(f"arg{counters.argument}", counters, scope)
                counters.argument += 1
                self.names[arg] = "%" + name
        for op in block.ops:
            self._number_op(op, counters, scope)
        for op in block.ops:
            for region in op.regions:
                self._region(region.block, op, dataclasses.replace(counters), scope)

    def _number_op(self, op: Op, counters: _Counters, scope: _Scope) -> None:
        if not op.results:
            return
        entry = opcodes.lookup(op.opcode)
        hint = entry.result_names if entry is not None else ()
        if op.opcode == "stablehlo.constant":
            dtype = op.results[0].type.dtype
            hint = ("c",) if dtypes.kind(dtype) in "biu" else ("cst",)
        if hint and len(hint) == len(op.results):
            for value, name in zip(op.results, hint, strict=True):
                self.names[value] = "%" + self._unique(name, counters, scope)
            return
        number = counters.value
        counters.value += 1
        if len(op.results) == 1:
            self.names[op.results[0]] = f"%{number}"
            return
        self.groups[op] = number
        for i, value in enumerate(op.results):
            self._owner[value] = (op, i)

    def result_prefix(self, op: Op) -> str:
        """`%0 = `, `%0:2 = `, `%values, %indices = `, or nothing for no results."""
        if not op.results:
            return ""
        if op in self.groups:
            return f"%{self.groups[op]}:{len(op.results)} = "
        return ", ".join(self.names[v] for v in op.results) + " = "


# ---------------------------------------------------------------------------------------------
# Printing ops.

# StableHLO ops that qualify as the one op of a reduce printed `applies <op>`: binary,
# elementwise, commutative (the opcode registry's facts).
_COMMUTATIVE = opcodes.names(dialect="stablehlo", elementwise=True, commutative=True)

PrettyPrinter = Callable[["_FunctionPrinter", Op, str], "str | None"]
_pretty: dict[str, PrettyPrinter] = {}


def _register(*names: str) -> Callable[[PrettyPrinter], PrettyPrinter]:
    def decorate(fn: PrettyPrinter) -> PrettyPrinter:
        for opcode in names:
            _pretty[opcode] = fn
        return fn
    return decorate


def _types(values: Sequence[Value]) -> str:
    return ", ".join(str(v.type) for v in values)


def functional_type(op: Op) -> str:
    """`(operand types) -> result type(s)`."""
    results = op.result_types
    if len(results) == 1:
        out = str(results[0])
    else:
        out = "(" + ", ".join(str(t) for t in results) + ")"
    return f"({_types(op.operands)}) -> {out}"


def _same_or_functional(op: Op) -> str:
    """`tensor<..>` when every operand and result has one type, else the functional type."""
    types = {str(t) for t in op.operand_types + op.result_types}
    if len(types) == 1 and op.results:
        return str(op.result_types[0])
    return functional_type(op)


class _FunctionPrinter:
    """Prints the ops of one function with its value names. Op texts may span several
    lines (regions); each line after the first carries its full indentation."""

    def __init__(self, fn: ir.Function) -> None:
        self.namer = Namer(fn)
        # Directly in a func.func body, `func` is the default dialect: `call`, `return`.
        self.top_level = {id(op) for op in fn.body.ops}

    def in_function_body(self, op: Op) -> bool:
        return id(op) in self.top_level

    def operands(self, values: Sequence[Value]) -> str:
        return ", ".join(self.namer[v] for v in values)

    def extra(self, op: Op, used: Sequence[str], defaults: dict[str, Any] | None = None
              ) -> str:
        """` {attrs}` of the attributes a pretty form does not spell out (none: "")."""
        rest = {k: v for k, v in op.attributes.items() if k not in used}
        for key, default in (defaults or {}).items():
            if key in rest and _same_attribute(rest[key], default):
                del rest[key]
        return " " + attribute_dict(rest) if rest else ""

    def block(self, block: ir.Block, indent: str, header: bool) -> list[str]:
        """The lines of a region's block, ops at `indent`, preceded by `^bb0(...):` (one
        level out) if `header` and the block has arguments."""
        lines = []
        if header and block.args:
            args = ", ".join(f"{self.namer[a]}: {a.type}" for a in block.args)
            lines.append(f"{indent[:-len(INDENT)]}^bb0({args}):")
        for op in block.ops:
            lines.append(self.op(op, indent))
        return lines

    def op(self, op: Op, indent: str) -> str:
        """The op's text at `indent` (several lines if it has regions)."""
        pretty = _pretty.get(op.opcode)
        body = pretty(self, op, indent) if pretty is not None else None
        if body is None:
            body = self.generic(op, indent)
        return indent + self.namer.result_prefix(op) + body

    def regions(self, op: Op, indent: str) -> str:
        """`({...}, {...})` of the op's regions in generic form."""
        parts = []
        for region in op.regions:
            lines = self.block(region.block, indent + INDENT, header=True)
            parts.append("{\n" + "\n".join(lines) + "\n" + indent + "}")
        return "(" + ", ".join(parts) + ")"

    def generic(self, op: Op, indent: str) -> str:
        """`"dialect.op"(operands) <{properties}> ({regions}) {attributes} : type`."""
        # Inherent attributes (MLIR "properties") go in `<{...}>`; any other attribute in
        # the discardable `{...}` (which MLIR also accepts for inherent ones).
        entry = opcodes.lookup(op.opcode)
        properties = entry.properties if entry is not None else frozenset()
        inherent = {k: v for k, v in op.attributes.items() if k in properties}
        other = {k: v for k, v in op.attributes.items() if k not in properties}
        text = f'"{op.opcode}"({self.operands(op.operands)})'
        if inherent:
            text += f" <{attribute_dict(inherent)}>"
        if op.regions:
            text += " " + self.regions(op, indent)
        if other:
            text += f" {attribute_dict(other)}"
        return text + f" : {functional_type(op)}"


def _same_attribute(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    return type(a) is type(b) and a == b


def _attr(op: Op, name: str, default: Any = None) -> Any:
    return op.attributes.get(name, default)


@_register(*opcodes.names(print_form="operands"))
def _same_type(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if len(op.results) != 1 or not op.operands:
        return None
    return (f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : "
            f"{_same_or_functional(op)}")


@_register("stablehlo.complex")
def _complex(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if len(op.operands) != 2 or op.operands[0].type != op.operands[1].type:
        return None
    return f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : {op.result.type}"


@_register("stablehlo.select")
def _select(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if len(op.operands) != 3:
        return None
    pred, on_true, on_false = op.operands
    if on_true.type == op.result.type == on_false.type:
        types = f"{pred.type}, {op.result.type}"
    else:
        types = functional_type(op)
    return f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : {types}"


@_register("stablehlo.compare")
def _compare(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    direction = _attr(op, "comparison_direction")
    kind = _attr(op, "compare_type")
    if not isinstance(direction, ir.Enum) or (kind is not None and not isinstance(kind, ir.Enum)):
        return None
    text = f"{op.opcode} {direction.value}, {p.operands(op.operands)}"
    if kind is not None:
        text += f", {kind.value}"
    extra = p.extra(op, ("comparison_direction", "compare_type"))
    return f"{text}{extra} : {functional_type(op)}"


def _keyword_form(keywords: Sequence[tuple[str, str, Callable[[Any], str]]],
                  same_type: bool = False, optional: Sequence[str] = ()) -> PrettyPrinter:
    """A pretty form `op %operands, kw1 = v1, kw2 = v2 {rest} : type` where each keyword
    prints attribute `name` with `fmt`; attributes in `optional` are left out when absent."""
    def printer(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
        parts = [p.operands(op.operands)] if op.operands else []
        for keyword, name, fmt in keywords:
            if name not in op.attributes:
                if name in optional:
                    continue
                return None
            parts.append(f"{keyword} = {fmt(op.attributes[name])}")
        used = [name for _, name, _ in keywords]
        type_text = _same_or_functional(op) if same_type else functional_type(op)
        return f"{op.opcode} {', '.join(parts)}{p.extra(op, used)} : {type_text}"
    return printer


def _int(value: Any) -> str:
    return str(value.value if isinstance(value, ir.IntegerAttr) else int(value))


def _enum_value(value: Any) -> str:
    return value.value


def _bool(value: Any) -> str:
    return "true" if value else "false"


_FORMATS: dict[str, Callable[[Any], str]] = {
    "dims": _dims, "int": _int, "enum": _enum_value, "string": escape_string, "bool": _bool}
for _entry in opcodes.OPCODES.values():
    if _entry.keywords:
        _register(_entry.name)(_keyword_form(
            [(k.keyword, k.attribute, _FORMATS[k.kind]) for k in _entry.keywords],
            same_type=_entry.print_form == "keywords_same",
            optional=[k.attribute for k in _entry.keywords if k.optional]))


@_register("stablehlo.reduce_precision")
def _reduce_precision(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    exponent, mantissa = _attr(op, "exponent_bits"), _attr(op, "mantissa_bits")
    if exponent is None or mantissa is None:
        return None
    extra = p.extra(op, ("exponent_bits", "mantissa_bits"))
    return (f"{op.opcode} {p.operands(op.operands)}, format = e{_int(exponent)}m{_int(mantissa)}"
            f"{extra} : {_same_or_functional(op)}")


@_register("stablehlo.iota")
def _iota(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if "iota_dimension" not in op.attributes or op.operands:
        return None
    return (f"{op.opcode} dim = {_int(op.attributes['iota_dimension'])}"
            f"{p.extra(op, ('iota_dimension',))} : {op.result.type}")


@_register(*opcodes.names(print_form="functional"))
def _functional(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    return f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : {functional_type(op)}"


@_register("stablehlo.slice")
def _slice(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    starts, limits = _attr(op, "start_indices"), _attr(op, "limit_indices")
    strides = _attr(op, "strides", (1,) * len(starts or ()))
    if starts is None or limits is None or not len(starts) == len(limits) == len(strides):
        return None
    ranges = []
    for start, limit, stride in zip(starts, limits, strides, strict=True):
        ranges.append(f"{start}:{limit}" + (f":{stride}" if stride != 1 else ""))
    extra = p.extra(op, ("start_indices", "limit_indices", "strides"))
    return (f"{op.opcode} {p.operands(op.operands)} [{', '.join(ranges)}]{extra} : "
            f"{functional_type(op)}")


def _precision(value: Any) -> str:
    return "[" + ", ".join(v.value for v in value) + "]"


@_register("stablehlo.dot_general")
def _dot_general(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    dn = _attr(op, "dot_dimension_numbers")
    if not isinstance(dn, ir.DotDimensionNumbers):
        return None
    parts = [p.operands(op.operands)]
    if dn.lhs_batching_dimensions or dn.rhs_batching_dimensions:
        parts.append(f"batching_dims = {_dims(dn.lhs_batching_dimensions)} x "
                     f"{_dims(dn.rhs_batching_dimensions)}")
    parts.append(f"contracting_dims = {_dims(dn.lhs_contracting_dimensions)} x "
                 f"{_dims(dn.rhs_contracting_dimensions)}")
    if "precision_config" in op.attributes:
        parts.append(f"precision = {_precision(op.attributes['precision_config'])}")
    if "algorithm" in op.attributes:
        parts.append(f"algorithm = {attribute(op.attributes['algorithm'])}")
    extra = p.extra(op, ("dot_dimension_numbers", "precision_config", "algorithm"))
    return f"{op.opcode} {', '.join(parts)}{extra} : {functional_type(op)}"


@_register("stablehlo.dot")
def _dot(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    text = f"{op.opcode} {p.operands(op.operands)}"
    if "precision_config" in op.attributes:
        text += f", precision = {_precision(op.attributes['precision_config'])}"
    return f"{text}{p.extra(op, ('precision_config',))} : {functional_type(op)}"


@_register("stablehlo.constant")
def _constant(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    value = _attr(op, "value")
    if value is None or len(op.results) != 1 or p.extra(op, ("value",)):
        return None
    array = np.asarray(value, dtype=op.result.type.dtype)
    if array.shape != op.result.type.shape:
        array = np.broadcast_to(array, op.result.type.shape)
    return f"{op.opcode} {dense_literal(array)} : {op.result.type}"


@_register("stablehlo.optimization_barrier")
def _optimization_barrier(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if not op.operands:
        return None
    return f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : {_types(op.operands)}"


@_register("stablehlo.composite")
def _composite(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    """`stablehlo.composite "my.op" %a, %b {composite_attributes = {...}, decomposition =
    @my.op, version = 1 : i32} : (...) -> ...`."""
    name = op.attributes.get("name")
    if not isinstance(name, str):
        return None
    operands = " " + p.operands(op.operands) if op.operands else ""
    return (f"{op.opcode} {escape_string(name)}{operands}{p.extra(op, ('name',))} : "
            f"{functional_type(op)}")


@_register(*opcodes.names(print_form="nullary"))
def _nullary(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    return f"{op.opcode}{p.extra(op, ())} : {op.result.type}"


@_register("stablehlo.after_all")
def _after_all(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    return f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : {op.result.type}"


_CUSTOM_CALL_DEFAULTS = {"has_side_effect": False, "api_version": ir.IntegerAttr(1, "i32"),
                         "called_computations": (), "output_operand_aliases": ()}


@_register("stablehlo.custom_call")
def _custom_call(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    target = _attr(op, "call_target_name")
    if not isinstance(target, str):
        return None
    extra = p.extra(op, ("call_target_name",), _CUSTOM_CALL_DEFAULTS)
    return f"{op.opcode} {symbol(target)}({p.operands(op.operands)}){extra} : {functional_type(op)}"


@_register("func.call")
def _call(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    callee = _attr(op, "callee")
    if not isinstance(callee, ir.Symbol):
        return None
    results = op.result_types
    out = str(results[0]) if len(results) == 1 else \
        "(" + ", ".join(str(t) for t in results) + ")"
    name = "call" if p.in_function_body(op) else op.opcode
    return (f"{name} {symbol(callee.name)}({p.operands(op.operands)}){p.extra(op, ('callee',))}"
            f" : ({_types(op.operands)}) -> {out}")


@_register("func.return", "stablehlo.return", "sdy.return")
def _return(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    name = "return" if op.opcode == "func.return" and p.in_function_body(op) else op.opcode
    if not op.operands:
        return name + p.extra(op, ())
    return f"{name} {p.operands(op.operands)}{p.extra(op, ())} : {_types(op.operands)}"


@_register(*opcodes.names(print_form="chlo"))
def _chlo(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    """`chlo.erf %0 : tensor<3xf32> -> tensor<3xf32>` (operand types, then the result's)."""
    if len(op.operands) != opcodes.OPCODES[op.opcode].arity or len(op.results) != 1:
        return None
    return (f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : "
            f"{_types(op.operands)} -> {op.result.type}")


@_register(*opcodes.names(print_form="chlo_broadcast"))
def _chlo_broadcast(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if len(op.operands) != 2 or len(op.results) != 1:
        return None
    return f"{op.opcode} {p.operands(op.operands)}{p.extra(op, ())} : {functional_type(op)}"


@_register("chlo.top_k")
def _top_k(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if "k" not in op.attributes or len(op.operands) != 1:
        return None
    return (f"{op.opcode}({p.operands(op.operands)}, k = {_int(op.attributes['k'])})"
            f"{p.extra(op, ('k',))} : {op.operands[0].type} -> "
            f"({', '.join(str(t) for t in op.result_types)})")


def _window(op: Op) -> str:
    fields = [("stride", "window_strides", _dims),
              ("pad", "padding", lambda v: "[" + ", ".join(
                  _dims(row) for row in np.asarray(v).reshape(-1, 2)) + "]"),
              ("lhs_dilate", "lhs_dilation", _dims), ("rhs_dilate", "rhs_dilation", _dims),
              ("reverse", "window_reversal",
               lambda v: "[" + ", ".join(_bool(x) for x in v) + "]")]
    parts = [f"{key} = {fmt(op.attributes[name])}" for key, name, fmt in fields
             if name in op.attributes]
    return "{" + ", ".join(parts) + "}"


@_register("stablehlo.convolution")
def _convolution(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    dn = _attr(op, "dimension_numbers")
    if not isinstance(dn, ir.ConvDimensionNumbers):
        return None
    window_names = ("window_strides", "padding", "lhs_dilation", "rhs_dilation",
                    "window_reversal")
    extra = p.extra(op, ("dimension_numbers",) + window_names)
    return (f"{op.opcode}({p.operands(op.operands)}) dim_numbers = {conv_dimensions(dn)}, "
            f"window = {_window(op)}{extra} : {functional_type(op)}")


def _compact_reducer(op: Op, num_inputs: int) -> str | None:
    """The opcode of a reduce body that is one commutative binary op of the two block
    arguments in order, returned (StableHLO's condition for `applies <op>`)."""
    block = op.regions[0].block
    if num_inputs != 1 or len(block.ops) != 2 or len(block.args) != 2:
        return None
    inner, ret = block.ops
    if inner.opcode not in _COMMUTATIVE or inner.regions or len(inner.results) != 1:
        return None
    element = op.operands[0].type.dtype
    if inner.operands != block.args or inner.operands[0].type != ir.TensorType((), element):
        return None
    if ret.opcode != "stablehlo.return" or ret.operands != inner.results:
        return None
    return inner.opcode


@_register("stablehlo.reduce")
def _reduce(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    num_inputs = len(op.operands) // 2
    dims = _attr(op, "dimensions")
    if dims is None or len(op.regions) != 1 or len(op.operands) % 2 or not num_inputs:
        return None
    block = op.regions[0].block
    if len(block.args) != 2 * num_inputs:
        return None
    inputs = ", ".join(f"({p.namer[x]} init: {p.namer[init]})" for x, init in zip(
        op.operands[:num_inputs], op.operands[num_inputs:], strict=True))
    extra = p.extra(op, ("dimensions",))
    head = f"{op.opcode}{inputs}"
    tail = f"across dimensions = {_dims(dims)}{extra} : {functional_type(op)}"
    inner = _compact_reducer(op, num_inputs)
    if inner is not None:
        return f"{head} applies {inner} {tail}"
    args = block.args
    pairs = " ".join(f"({p.namer[args[i]]}: {args[i].type}, "
                     f"{p.namer[args[i + num_inputs]]}: {args[i + num_inputs].type})"
                     for i in range(num_inputs))
    body = p.block(block, indent + INDENT, header=False)
    return "\n".join([f"{head} {tail}", f"{indent} reducer{pairs}  {{", *body, indent + "}"])


@_register("stablehlo.while")
def _while(p: _FunctionPrinter, op: Op, indent: str) -> str | None:
    if len(op.regions) != 2 or op.attributes:
        return None
    cond, body = (r.block for r in op.regions)
    if len(cond.args) != len(op.operands) or len(body.args) != len(op.operands):
        return None
    inits = ", ".join(f"{p.namer[arg]} = {p.namer[x]}"
                      for arg, x in zip(cond.args, op.operands, strict=True))
    lines = [f"{op.opcode}({inits}) : {_types(op.operands)}", f"{indent}cond {{"]
    lines += p.block(cond, indent + INDENT, header=False)
    lines.append(f"{indent}}} do {{")
    lines += p.block(body, indent + INDENT, header=False)
    lines.append(f"{indent}}}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Functions and modules.

def _typed_with_attrs(text: str, attrs: dict[str, Any] | None) -> str:
    return f"{text} {attribute_dict(attrs)}" if attrs else text


def print_function(fn: ir.Function, indent: str = INDENT) -> str:
    """`func.func <visibility> @name(%arg0: type {attrs}) -> (types) { ops }`."""
    printer = _FunctionPrinter(fn)
    arg_attrs = fn.arg_attrs or [None] * len(fn.args)
    args = ", ".join(_typed_with_attrs(f"{printer.namer[a]}: {a.type}", attrs)
                     for a, attrs in zip(fn.args, arg_attrs, strict=True))
    result_attrs = fn.result_attrs or [None] * len(fn.result_types)
    results = [_typed_with_attrs(str(t), attrs)
               for t, attrs in zip(fn.result_types, result_attrs, strict=True)]
    signature = f"func.func {fn.visibility} {symbol(fn.name)}({args})"
    if len(results) == 1 and not result_attrs[0]:
        signature += f" -> {results[0]}"
    elif results:
        signature += f" -> ({', '.join(results)})"
    lines = [f"{indent}{signature} {{"]
    lines += printer.block(fn.body, indent + INDENT, header=False)
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def print_module(module: ir.Module) -> str:
    """The module's MLIR text, as `jax.jit(f).lower(x).as_text()` prints it."""
    head = "module"
    if module.name:
        head += " " + symbol(module.name)
    if module.attributes:
        head += f" attributes {attribute_dict(module.attributes)}"
    lines = [head + " {"]
    mesh = _mesh(module)
    if mesh is not None:
        lines.append(INDENT + mesh.sdy_text())
    lines += [print_function(fn) for fn in module.functions]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mesh(module: ir.Module) -> MeshShape | None:
    """The mesh of the shardings in `module` (Shardy's `sdy.mesh @mesh`): in its signatures
    or on its sharding constraints."""
    for fn in module.functions:
        for attrs in (*(fn.arg_attrs or ()), *(fn.result_attrs or ())):
            for value in attrs.values():
                if isinstance(value, TensorSharding):
                    return value.mesh
    for op in module.walk():
        if op.opcode == CONSTRAINT:
            return op.attributes["sharding"].mesh
        if op.opcode == MANUAL:
            return manual_mesh(op)
    return None


def _bare_sharding(sharding: TensorSharding) -> str:
    """`<@mesh, [{"a"}, {}]>`: a sharding in an op's custom form."""
    return sharding.sdy_text()[len("#sdy.sharding"):]


@_register(CONSTRAINT)
def _sharding_constraint(p: _FunctionPrinter, op: Op, indent: str) -> str:
    """`sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>`."""
    sharding = _bare_sharding(op.attributes["sharding"])
    return f"{op.opcode} {p.namer[op.operands[0]]} {sharding} : {op.result.type}"


@_register(MANUAL)
def _manual_computation(p: _FunctionPrinter, op: Op, indent: str) -> str:
    """`sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[...]
    manual_axes={"x"} (%arg1: tensor<2xf32>) { ... sdy.return %1 : tensor<2xf32> } : ...`."""
    attrs = op.attributes
    ins = ", ".join(_bare_sharding(s) for s in attrs["in_shardings"])
    outs = ", ".join(_bare_sharding(s) for s in attrs["out_shardings"])
    axes = ", ".join(f'"{a}"' for a in attrs["manual_axes"])
    body = op.regions[0].block
    args = ", ".join(f"{p.namer[a]}: {a.type}" for a in body.args)
    lines = [f"{op.opcode}({p.operands(op.operands)}) in_shardings=[{ins}] "
             f"out_shardings=[{outs}] manual_axes={{{axes}}} ({args}) {{"]
    lines += p.block(body, indent + INDENT, header=False)
    lines.append(f"{indent}}} : {functional_type(op)}")
    return "\n".join(lines)
