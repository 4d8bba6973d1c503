"""Scanning MLIR text: a cursor with MLIR's lexical forms, types and attributes.

`TextParser` is the part of `stablehlo_parser` that knows no ops: whitespace and comments,
quoted strings with MLIR's escapes, symbols, integer lists, tensor types (`tensor<2x?xf32>`,
`!stablehlo.token`), and every attribute kind of `ir`'s docstring (`dense<...>` constants in
all the printer's spellings, `array<i64: ...>`, `#stablehlo<...>` enums and the structured
`#stablehlo.dot<...>`, `#stablehlo.gather<...>`, `#stablehlo.conv<...>`,
`#sdy.op_sharding_rule<...>` ...).
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.stablehlo_printer import parse_float

class StableHLOParseError(ValueError):
    """Malformed or unsupported StableHLO text."""


IDENT = re.compile(r"[A-Za-z_][\w$.]*")
VALUE = re.compile(r"%[\w$.-]+(?:#\d+)?")
INT = re.compile(r"[-+]?\d+")
NUMBER = re.compile(r"[-+]?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|inf|nan)")
SPACE = re.compile(r"(?:\s|//[^\n]*)*")


class TextParser:
    """A cursor over the text with the parsing routines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # -- Scanning ------------------------------------------------------------------------------

    def error(self, message: str) -> StableHLOParseError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        snippet = self.text[self.pos:self.pos + 40].split("\n")[0]
        return StableHLOParseError(f"line {line}, column {column}: {message} (at {snippet!r})")

    def skip(self) -> None:
        self.pos = SPACE.match(self.text, self.pos).end()

    def peek(self, literal: str) -> bool:
        self.skip()
        return self.text.startswith(literal, self.pos)

    def accept(self, literal: str) -> bool:
        if self.peek(literal):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str) -> None:
        if not self.accept(literal):
            raise self.error(f"expected {literal!r}")

    def match(self, pattern: re.Pattern) -> str | None:
        self.skip()
        found = pattern.match(self.text, self.pos)
        if found is None:
            return None
        self.pos = found.end()
        return found.group()

    def need(self, pattern: re.Pattern, what: str) -> str:
        found = self.match(pattern)
        if found is None:
            raise self.error(f"expected {what}")
        return found

    def keyword(self, word: str) -> None:
        """Expects `word` as a whole identifier."""
        start = self.pos
        if self.match(IDENT) != word:
            self.pos = start
            raise self.error(f"expected {word!r}")

    def at_keyword(self, word: str) -> bool:
        self.skip()
        found = IDENT.match(self.text, self.pos)
        return found is not None and found.group() == word

    def string(self) -> str:
        """A quoted string with MLIR's escapes (`\\\\`, `\\22`, `\\n`)."""
        self.expect('"')
        out = bytearray()
        text = self.text
        while True:
            if self.pos >= len(text):
                raise self.error("unterminated string")
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                return out.decode("utf-8", errors="surrogateescape")
            if char == "\\":
                nxt = text[self.pos + 1:self.pos + 3]
                simple = {"\\": "\\", '"': '"', "n": "\n", "t": "\t"}
                if nxt[:1] in simple and not re.fullmatch(r"[0-9A-Fa-f]{2}", nxt):
                    out += simple[nxt[:1]].encode()
                    self.pos += 2
                else:
                    out.append(int(nxt, 16))
                    self.pos += 3
                continue
            out += char.encode()
            self.pos += 1

    def symbol_name(self) -> str:
        self.expect("@")
        if self.text.startswith('"', self.pos):
            return self.string()
        return self.need(IDENT, "a symbol name")

    def integer(self) -> int:
        return int(self.need(INT, "an integer"))

    def int_list(self) -> tuple[int, ...]:
        """`[1, 2, 3]`."""
        self.expect("[")
        values: list[int] = []
        while not self.accept("]"):
            if values:
                self.expect(",")
            values.append(self.integer())
        return tuple(values)

    def separated(self, item: Callable[[], Any], close: str, sep: str = ",") -> list[Any]:
        """Items up to `close` (consumed), separated by `sep`."""
        items: list[Any] = []
        while not self.accept(close):
            if items:
                self.expect(sep)
            items.append(item())
        return items

    # -- Types ---------------------------------------------------------------------------------

    def element_type(self) -> np.dtype:
        if self.accept("complex<"):
            part = self.need(IDENT, "a float type")
            self.expect(">")
            return np.dtype(np.complex64 if part == "f32" else np.complex128)
        name = self.need(IDENT, "an element type")
        try:
            return ir.element_dtype(name)
        except TypeError as e:
            raise self.error(str(e)) from None

    def type(self) -> ir.Type:
        """`tensor<2x?xf32>` or `!stablehlo.token`."""
        if self.accept("!stablehlo.token"):
            return ir.TokenType()
        self.expect("tensor<")
        dims: list[int | None] = []
        while True:
            self.skip()
            found = re.compile(r"(\d+|\?)x").match(self.text, self.pos)
            if found is None:
                break
            self.pos = found.end()
            dims.append(None if found.group(1) == "?" else int(found.group(1)))
        dtype = self.element_type()
        self.expect(">")
        return ir.TensorType(tuple(dims), dtype)

    def type_list(self) -> list[ir.Type]:
        """`t1, t2, ...` (at least one)."""
        types = [self.type()]
        while self.accept(","):
            types.append(self.type())
        return types

    def result_types(self) -> list[ir.Type]:
        """`t` or `(t1, t2)` or `()`."""
        if self.accept("("):
            return self.separated(self.type, ")")
        return [self.type()]

    def functional_type(self) -> tuple[list[ir.Type], list[ir.Type]]:
        """`(t1, t2) -> t` or `(...) -> (t1, t2)`."""
        self.expect("(")
        ins = self.separated(self.type, ")")
        self.expect("->")
        return ins, self.result_types()

    def trailing_type(self) -> list[ir.Type]:
        """The result types after `:` of a pretty op: one type (shared by operands and result)
        or a functional type."""
        self.expect(":")
        if self.peek("("):
            return self.functional_type()[1]
        return [self.type()]

    # -- Attributes ----------------------------------------------------------------------------

    def attribute_dict(self) -> dict[str, Any]:
        """`{name = value, ...}`."""
        self.expect("{")
        attrs: dict[str, Any] = {}
        while not self.accept("}"):
            if attrs:
                self.expect(",")
            name = self.string() if self.peek('"') else self.need(IDENT, "an attribute name")
            if self.accept("="):
                attrs[name] = self.attribute()
            else:
                attrs[name] = True  # a unit attribute
        return attrs

    def optional_dict(self) -> dict[str, Any]:
        return self.attribute_dict() if self.peek("{") else {}

    def attribute(self) -> Any:
        """One attribute value (see `ir`'s docstring for the kinds)."""
        if self.peek('"'):
            return self.string()
        if self.peek("@"):
            return ir.Symbol(self.symbol_name())
        if self.peek("dense<"):
            return self.dense_attribute()
        if self.peek("array<"):
            return self.array_attribute()
        if self.peek("["):
            self.expect("[")
            return tuple(self.separated(self.attribute, "]"))
        if self.peek("{"):
            return self.attribute_dict()
        if self.peek("#"):
            return self.hash_attribute()
        start = self.pos
        word = self.match(IDENT)
        if word in ("true", "false"):
            return word == "true"
        if word == "unit":
            return True
        self.pos = start
        number = self.match(NUMBER)
        if number is None:
            raise self.error("expected an attribute")
        integral = re.fullmatch(r"[-+]?\d+", number) is not None
        kind = "i64" if integral else "f64"
        if self.accept(":"):
            kind = self.need(IDENT, "a type")
        if integral and re.fullmatch(r"(u|s)?i\d+", kind):
            return int(number) if kind == "i64" else ir.IntegerAttr(int(number), kind)
        return parse_float(number, ir.element_dtype(kind))

    def array_attribute(self) -> tuple:
        """`array<i64: 1, 2>`, `array<i64>`, `array<i1: true, false>`."""
        self.expect("array<")
        kind = self.need(IDENT, "an element type")
        values: list[Any] = []
        if self.accept(":"):
            while True:
                if kind == "i1":
                    values.append(self.need(IDENT, "true or false") == "true")
                else:
                    values.append(self.integer())
                if not self.accept(","):
                    break
        self.expect(">")
        return tuple(values)

    def dense_attribute(self) -> Any:
        """`dense<...> : tensor<...>`: an ndarray (or `IndexArray` for `index` elements)."""
        raw = self.dense_elements()
        self.expect(":")
        self.expect("tensor<")
        dims: list[int] = []
        while True:
            self.skip()
            found = re.compile(r"(\d+)x").match(self.text, self.pos)
            if found is None:
                break
            self.pos = found.end()
            dims.append(int(found.group(1)))
        if self.accept("index"):
            self.expect(">")
            values = np.asarray(_flatten(raw), np.int64) if raw != [] else np.zeros(0, np.int64)
            return ir.IndexArray(tuple(int(v) for v in values.reshape(-1)))
        dtype = self.element_type()
        self.expect(">")
        return self.dense_array(raw, tuple(dims), dtype)

    def dense_elements(self) -> Any:
        """The raw contents of `dense<...>`: a string of hex bytes (`bytes`), or nested lists of
        element texts, or one element text (a splat)."""
        self.expect("dense<")
        if self.accept(">"):
            return []
        if self.peek('"'):
            data = self.string()
            self.expect(">")
            return bytes.fromhex(data[2:])
        value = self.dense_value()
        self.expect(">")
        return value

    def dense_value(self) -> Any:
        if self.accept("["):
            return self.separated(self.dense_value, "]")
        if self.accept("("):
            real = self.need(NUMBER, "a number")
            self.expect(",")
            imag = self.need(NUMBER, "a number")
            self.expect(")")
            return (real, imag)
        word = self.match(re.compile(r"true|false"))
        if word is not None:
            return word
        return self.need(NUMBER, "a number")

    def dense_array(self, raw: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        if isinstance(raw, bytes):
            if dtype == np.bool_:
                return np.frombuffer(raw, np.uint8).astype(np.bool_).reshape(shape)
            return np.frombuffer(raw, dtype).reshape(shape).copy()
        if raw == []:
            return np.zeros(shape, dtype)
        if isinstance(raw, list):
            flat = [_element(v, dtype) for v in _flatten(raw)]
            return np.array(flat, dtype).reshape(shape)
        return np.full(shape, _element(raw, dtype), dtype)

    def hash_attribute(self) -> Any:
        """`#stablehlo<kind VALUE>` and the structured `#dialect.name<...>` attributes."""
        self.expect("#")
        name = self.need(IDENT, "an attribute name")
        self.expect("<")
        if name == "stablehlo":
            kind = self.need(IDENT, "an enum kind")
            value = self.need(IDENT, "an enum value")
            self.expect(">")
            return ir.Enum(kind, value)
        if name in ("stablehlo.dot", "stablehlo.gather", "stablehlo.scatter"):
            cls = {"stablehlo.dot": ir.DotDimensionNumbers,
                   "stablehlo.gather": ir.GatherDimensionNumbers,
                   "stablehlo.scatter": ir.ScatterDimensionNumbers}[name]
            return self.struct(cls)
        if name == "stablehlo.conv":
            dims = self.conv_dimensions()
            self.expect(">")
            return dims
        if name == "stablehlo.output_operand_alias":
            fields = self.struct_fields()
            return ir.OutputOperandAlias(fields.get("output_tuple_indices", ()),
                                         fields["operand_index"],
                                         fields.get("operand_tuple_indices", ()))
        if name == "sdy.op_sharding_rule":
            return self.sharding_rule()
        raise self.error(f"unknown attribute #{name}")

    def struct_fields(self) -> dict[str, Any]:
        """`f1 = [..], f2 = 1>` (the closing `>` consumed)."""
        fields: dict[str, Any] = {}
        while not self.accept(">"):
            if fields:
                self.expect(",")
            key = self.need(IDENT, "a field name")
            self.expect("=")
            fields[key] = self.int_list() if self.peek("[") else self.integer()
        return fields

    def struct(self, cls: type) -> Any:
        """A dimension-numbers dataclass; omitted fields take their defaults (`[]`, 0)."""
        fields = self.struct_fields()
        values = {}
        for f in cls.__dataclass_fields__.values():
            default: Any = 0 if f.name == "index_vector_dim" else ()
            values[f.name] = fields.get(f.name, default)
        return cls(**values)

    def conv_dimensions(self) -> ir.ConvDimensionNumbers:
        """`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`."""
        def side() -> list[str]:
            self.expect("[")
            return self.separated(lambda: self.need(re.compile(r"\w+"), "a dimension"), "]")

        def split(labels: list[str], first: str, second: str) -> tuple[int, int, tuple[int, ...]]:
            spatial = sorted((int(x), d) for d, x in enumerate(labels) if x.isdigit())
            return labels.index(first), labels.index(second), tuple(d for _, d in spatial)

        lhs = side()
        self.expect("x")
        rhs = side()
        self.expect("->")
        out = side()
        in_b, in_f, in_s = split(lhs, "b", "f")
        k_i, k_o, k_s = split(rhs, "i", "o")
        out_b, out_f, out_s = split(out, "b", "f")
        return ir.ConvDimensionNumbers(in_b, in_f, in_s, k_i, k_o, k_s, out_b, out_f, out_s)

    def sharding_rule(self) -> ir.ShardingRule:
        """`([i, j])->([k, l], []) {i=3, ...}, custom>`."""
        factor = re.compile(r"z_\d+|[i-z]")

        def side() -> tuple[tuple[int, ...], ...]:
            self.expect("(")

            def mapping() -> tuple[int, ...]:
                self.expect("[")
                return tuple(_factor_index(f) for f in self.separated(
                    lambda: self.need(factor, "a factor"), "]"))
            return tuple(self.separated(mapping, ")"))

        operands = side()
        self.expect("->")
        results = side()
        self.expect("{")
        sizes: dict[int, int] = {}
        while not self.accept("}"):
            if sizes:
                self.expect(",")
            index = _factor_index(self.need(factor, "a factor"))
            self.expect("=")
            sizes[index] = self.integer()
        custom = False
        if self.accept(","):
            self.keyword("custom")
            custom = True
        self.expect(">")
        return ir.ShardingRule(operands, results, tuple(sizes[i] for i in range(len(sizes))),
                               custom)


def _factor_index(name: str) -> int:
    """Shardy's factor names back to indices: `i`.. `z` are 0..17, `z_1` is 18, ..."""
    if name.startswith("z_"):
        return ord("z") - ord("i") + int(name[2:])
    return ord(name) - ord("i")


def _flatten(nested: Any) -> list[Any]:
    if isinstance(nested, list):
        return [x for item in nested for x in _flatten(item)]
    return [nested]


def _element(text: Any, dtype: np.dtype) -> Any:
    """One dense element of `dtype` from its text (`true`, `3`, `1.5e+00`, `(re,im)`)."""
    if dtype == np.bool_:
        return text == "true"
    if dtype.kind == "c":
        part = np.float32 if dtype == np.complex64 else np.float64
        return complex(float(parse_float(text[0], part)), float(parse_float(text[1], part)))
    if dtypes.kind(dtype) in "iu":
        return int(text)
    return parse_float(text, dtype)
