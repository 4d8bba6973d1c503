"""Reads StableHLO MLIR text back into an `ir.Module`: the inverse of `stablehlo_printer`.

`parse_module(text)` accepts everything the printer emits: the module and its attributes,
`func.func`s with argument and result attributes, every op in MLIR's generic form
(`"stablehlo.sort"(%a) <{...}> ({...}) {...} : (...) -> ...`) and the custom ("pretty") forms
the printer uses (`stablehlo.add %0, %1 : tensor<5xf32>`, `stablehlo.reduce(...) applies ...`,
`stablehlo.while(%iterArg = %x) ... cond {...} do {...}`, `call @f(...)`, ...), MLIR's value
names (`%0`, `%0#1`, `%cst`, `%iterArg_0`) with region scoping, dense constants (nested
lists, splats, hex bytes, hex floats) and every attribute kind of `ir`'s docstring.
Printing the parsed module gives the text back (`tests/test_stablehlo_parser.py` checks this
over many lowered programs); the module runs through the passes and backends as lowered.
Dimensions may be dynamic (`tensor<?x4xf32>`), as in a shape-polymorphic export.

Errors raise `StableHLOParseError` (a `ValueError`) naming the line and column.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op, Region, Value
from justjax._src.hlo.mlir_text import (IDENT, VALUE, StableHLOParseError,
                                        TextParser)

__all__ = ["parse_module", "StableHLOParseError"]


# Integer attributes of pretty forms that are not i64 (StableHLO's op definitions).
_PRETTY_INT_TYPES = {("stablehlo.reduce_precision", "exponent_bits"): "i32",
                     ("stablehlo.reduce_precision", "mantissa_bits"): "i32"}


@dataclass
class _Spec:
    """An op as parsed, before its result values exist."""

    opcode: str
    operands: list[Value]
    result_types: list[ir.Type]
    attributes: dict[str, Any] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)


class _Scope:
    """Value names visible in a region: its own and its ancestors'."""

    def __init__(self, parent: _Scope | None) -> None:
        self.parent = parent
        self.values: dict[str, Value] = {}
        self.groups: dict[str, list[Value]] = {}

    def lookup(self, name: str) -> Value | None:
        scope: _Scope | None = self
        base, _, index = name.partition("#")
        while scope is not None:
            if index:
                group = scope.groups.get(base)
                if group is not None:
                    return group[int(index)] if int(index) < len(group) else None
            elif name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None


# ---------------------------------------------------------------------------------------------
# Ops, functions, modules.

# Pretty forms `op %operands, kw = value, ... {rest} : type` (the opcode registry's
# keywords): keyword -> (attribute name, kind of value).
_KEYWORD_FORMS: dict[str, dict[str, tuple[str, str]]] = {
    entry.name: {k.keyword: (k.attribute, k.kind) for k in entry.keywords}
    for entry in opcodes.OPCODES.values() if entry.keywords}
_PLAIN_FUNCTIONAL = opcodes.names(lambda e: e.print_form in ("functional", "chlo_broadcast"))
_NULLARY = opcodes.names(print_form="nullary")


class _ModuleParser(TextParser):
    """Parses a module's functions and ops."""

    # -- Values --------------------------------------------------------------------------------

    def operand(self, scope: _Scope) -> Value:
        name = self.need(VALUE, "a value")
        value = scope.lookup(name)
        if value is None:
            self.pos -= len(name)
            raise self.error(f"use of undefined value {name}")
        return value

    def operands(self, scope: _Scope) -> list[Value]:
        """`%a, %b, ...` (possibly none); a comma not followed by a value is left."""
        values: list[Value] = []
        if not self.peek("%"):
            return values
        values.append(self.operand(scope))
        while True:
            start = self.pos
            if self.accept(",") and self.peek("%"):
                values.append(self.operand(scope))
                continue
            self.pos = start
            return values

    def typed_args(self) -> list[tuple[str, ir.Type]]:
        """`(%a: t, %b: t)` of a block header or reducer."""
        self.expect("(")

        def arg() -> tuple[str, ir.Type]:
            name = self.need(VALUE, "an argument")
            self.expect(":")
            return name, self.type()
        return self.separated(arg, ")")

    # -- Ops -----------------------------------------------------------------------------------

    def block_ops(self, block: ir.Block, scope: _Scope) -> None:
        """Ops up to the `}` closing the block (left unconsumed)."""
        while not self.peek("}"):
            block.ops.append(self.op(scope))

    def result_names(self) -> tuple[list[str], int | None]:
        """The names before `=`: (`[%0]`, None), (`[%0]`, 2) for `%0:2`, or the names of a
        list `%a, %b`; ([], None) when the op has no results."""
        if not self.peek("%"):
            return [], None
        names = [self.need(VALUE, "a result name")]
        count = None
        if self.accept(":"):
            count = self.integer()
        while self.accept(","):
            names.append(self.need(VALUE, "a result name"))
        self.expect("=")
        return names, count

    def op(self, scope: _Scope) -> Op:
        names, count = self.result_names()
        self.skip()
        if self.peek('"'):
            spec = self.generic_op(scope)
        else:
            opcode = self.need(IDENT, "an op name")
            opcode = {"call": "func.call", "return": "func.return"}.get(opcode, opcode)
            spec = self.pretty_op(opcode, scope)
        op = Op(spec.opcode, spec.operands, [Value(t) for t in spec.result_types],
                spec.attributes, spec.regions)
        expected = count if count is not None else len(names)
        if expected != len(op.results):
            raise self.error(f"{spec.opcode} has {len(op.results)} results; the text names "
                             f"{expected}")
        if count is not None:
            scope.groups[names[0]] = list(op.results)
        else:
            scope.values.update(zip(names, op.results, strict=True))
        return op

    def generic_op(self, scope: _Scope) -> _Spec:
        """`"dialect.op"(operands) <{properties}> ({regions}) {attributes} : type`."""
        opcode = self.string()
        self.expect("(")
        operands = self.operands(scope)
        self.expect(")")
        attributes: dict[str, Any] = {}
        if self.accept("<"):
            attributes.update(self.attribute_dict())
            self.expect(">")
        regions: list[Region] = []
        if self.accept("("):
            regions = self.separated(lambda: self.region(scope), ")")
        attributes.update(self.optional_dict())
        self.expect(":")
        _, results = self.functional_type()
        return _Spec(opcode, operands, results, attributes, regions)

    def region(self, scope: _Scope, args: list[tuple[str, ir.Type]] | None = None) -> Region:
        """`{ ^bb0(args): ops }`; `args` when the header was given outside the braces."""
        self.expect("{")
        inner = _Scope(scope)
        if args is None:
            args = []
            if self.accept("^"):
                self.need(IDENT, "a block name")
                args = self.typed_args()
                self.expect(":")
        block = ir.Block([Value(t) for _, t in args])
        for (name, _), value in zip(args, block.args, strict=True):
            inner.values[name] = value
        self.block_ops(block, inner)
        self.expect("}")
        return Region(block)

    def pretty_op(self, opcode: str, scope: _Scope) -> _Spec:
        parser = _PRETTY.get(opcode)
        if parser is None:
            if opcode in _KEYWORD_FORMS:
                return self.keyword_form(opcode, scope)
            if opcode in _PLAIN_FUNCTIONAL:
                return self.functional_form(opcode, scope)
            if opcode in _NULLARY:
                return self.nullary(opcode, scope)
            if opcode.startswith("chlo."):
                return _chlo_arrow(self, opcode, scope)
            return self.same_type(opcode, scope)
        return parser(self, opcode, scope)

    def same_type(self, opcode: str, scope: _Scope) -> _Spec:
        operands = self.operands(scope)
        attributes = self.optional_dict()
        return _Spec(opcode, operands, self.trailing_type(), attributes)

    def functional_form(self, opcode: str, scope: _Scope) -> _Spec:
        operands = self.operands(scope)
        attributes = self.optional_dict()
        self.expect(":")
        return _Spec(opcode, operands, self.functional_type()[1], attributes)

    def nullary(self, opcode: str, scope: _Scope) -> _Spec:
        attributes = self.optional_dict()
        self.expect(":")
        return _Spec(opcode, [], [self.type()], attributes)

    def keyword_value(self, opcode: str, name: str, kind: str) -> Any:
        if kind == "dims":
            return self.int_list()
        if kind == "int":
            value = self.integer()
            width = _PRETTY_INT_TYPES.get((opcode, name))
            return ir.IntegerAttr(value, width) if width else value
        if kind == "enum":
            return ir.Enum(name, self.need(IDENT, "an enum value"))
        if kind == "bool":
            return self.need(IDENT, "true or false") == "true"
        return self.string()

    def keywords(self, opcode: str, table: dict[str, tuple[str, str]], first: bool
                 ) -> dict[str, Any]:
        """`kw = value` pairs of `table` (preceded by a comma unless `first`)."""
        attributes: dict[str, Any] = {}
        while True:
            start = self.pos
            if not first and not self.accept(","):
                break
            word = self.match(IDENT)
            if word not in table or not self.accept("="):
                self.pos = start
                break
            name, kind = table[word]
            attributes[name] = self.keyword_value(opcode, name, kind)
            first = False
        return attributes

    def keyword_form(self, opcode: str, scope: _Scope) -> _Spec:
        operands = self.operands(scope)
        attributes = self.keywords(opcode, _KEYWORD_FORMS[opcode], first=not operands)
        attributes.update(self.optional_dict())
        return _Spec(opcode, operands, self.trailing_type(), attributes)


def _select(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    operands = p.operands(scope)
    attributes = p.optional_dict()
    p.expect(":")
    if p.peek("("):
        results = p.functional_type()[1]
    else:
        types = p.type_list()
        results = [types[-1]]
    return _Spec(opcode, operands, results, attributes)


def _complex(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    operands = p.operands(scope)
    attributes = p.optional_dict()
    p.expect(":")
    return _Spec(opcode, operands, [p.type()], attributes)


def _compare(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    attributes: dict[str, Any] = {
        "comparison_direction": ir.Enum("comparison_direction", p.need(IDENT, "a direction"))}
    p.expect(",")
    operands = p.operands(scope)
    if p.accept(","):
        attributes["compare_type"] = ir.Enum("comparison_type", p.need(IDENT, "a type"))
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, operands, p.functional_type()[1], attributes)


def _reduce_precision(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    operands = p.operands(scope)
    p.expect(",")
    p.keyword("format")
    p.expect("=")
    found = re.fullmatch(r"e(\d+)m(\d+)", p.need(IDENT, "eXmY"))
    if found is None:
        raise p.error("expected a format eXmY")
    attributes: dict[str, Any] = {
        "exponent_bits": ir.IntegerAttr(int(found.group(1)), "i32"),
        "mantissa_bits": ir.IntegerAttr(int(found.group(2)), "i32")}
    attributes.update(p.optional_dict())
    return _Spec(opcode, operands, p.trailing_type(), attributes)


def _iota(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    p.keyword("dim")
    p.expect("=")
    attributes: dict[str, Any] = {"iota_dimension": p.integer()}
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, [], [p.type()], attributes)


def _slice(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    operands = p.operands(scope)
    p.expect("[")
    starts, limits, strides = [], [], []

    def one_range() -> None:
        parts = [p.integer()]
        while p.accept(":"):
            parts.append(p.integer())
        starts.append(parts[0])
        limits.append(parts[1])
        strides.append(parts[2] if len(parts) > 2 else 1)

    p.separated(one_range, "]")
    attributes: dict[str, Any] = {"start_indices": tuple(starts), "limit_indices": tuple(limits),
                                  "strides": tuple(strides)}
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, operands, p.functional_type()[1], attributes)


def _precision_list(p: _ModuleParser) -> tuple[ir.Enum, ...]:
    p.expect("[")
    return tuple(ir.Enum("precision", v) for v in p.separated(
        lambda: p.need(IDENT, "a precision"), "]"))


def _dot_general(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    operands = p.operands(scope)
    batch: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    contract: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    attributes: dict[str, Any] = {}
    while p.accept(","):
        word = p.need(IDENT, "a keyword")
        p.expect("=")
        if word in ("batching_dims", "contracting_dims"):
            lhs = p.int_list()
            p.expect("x")
            pair = (lhs, p.int_list())
            if word == "batching_dims":
                batch = pair
            else:
                contract = pair
        elif word == "precision":
            attributes["precision_config"] = _precision_list(p)
        elif word == "algorithm":
            attributes["algorithm"] = p.attribute()
        else:
            raise p.error(f"unknown dot_general keyword {word}")
    attributes["dot_dimension_numbers"] = ir.DotDimensionNumbers(batch[0], batch[1],
                                                                 contract[0], contract[1])
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, operands, p.functional_type()[1], attributes)


def _dot(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    operands = p.operands(scope)
    attributes: dict[str, Any] = {}
    if p.accept(","):
        p.keyword("precision")
        p.expect("=")
        attributes["precision_config"] = _precision_list(p)
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, operands, p.functional_type()[1], attributes)


def _constant(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    raw = p.dense_elements()
    p.expect(":")
    result = p.type()
    value = p.dense_array(raw, result.shape, result.dtype)
    return _Spec(opcode, [], [result], {"value": value})


def _types_after_colon(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    """`op %a, %b {rest} : t1, t2`: results of the listed types (optimization_barrier)."""
    operands = p.operands(scope)
    attributes = p.optional_dict()
    p.expect(":")
    return _Spec(opcode, operands, p.type_list(), attributes)


def _custom_call(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    target = p.symbol_name()
    p.expect("(")
    operands = p.operands(scope)
    p.expect(")")
    attributes: dict[str, Any] = {"call_target_name": target}
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, operands, p.functional_type()[1], attributes)


def _call(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    callee = p.symbol_name()
    p.expect("(")
    operands = p.operands(scope)
    p.expect(")")
    attributes: dict[str, Any] = {"callee": ir.Symbol(callee)}
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, operands, p.functional_type()[1], attributes)


def _return(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    operands = p.operands(scope)
    attributes = p.optional_dict()
    if operands:
        p.expect(":")
        p.type_list()
    return _Spec(opcode, operands, [], attributes)


def _chlo_arrow(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    """`chlo.erf %a : t -> t`, `chlo.zeta %a, %b : t1, t2 -> t`."""
    operands = p.operands(scope)
    attributes = p.optional_dict()
    p.expect(":")
    p.type_list()
    p.expect("->")
    return _Spec(opcode, operands, [p.type()], attributes)


def _top_k(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    p.expect("(")
    operands = p.operands(scope)
    p.expect(",")
    p.keyword("k")
    p.expect("=")
    attributes: dict[str, Any] = {"k": p.integer()}
    p.expect(")")
    attributes.update(p.optional_dict())
    p.expect(":")
    p.type()
    p.expect("->")
    return _Spec(opcode, operands, p.result_types(), attributes)


def _window(p: _ModuleParser) -> dict[str, Any]:
    """`{stride = [..], pad = [[l, h], ..], lhs_dilate = [..], rhs_dilate = [..],
    reverse = [false, ..]}`."""
    p.expect("{")
    attributes: dict[str, Any] = {}
    while not p.accept("}"):
        if attributes:
            p.expect(",")
        word = p.need(IDENT, "a window field")
        p.expect("=")
        if word == "pad":
            p.expect("[")
            rows = p.separated(p.int_list, "]")
            attributes["padding"] = np.array(rows, np.int64).reshape(len(rows), 2)
        elif word == "reverse":
            p.expect("[")
            attributes["window_reversal"] = tuple(
                v == "true" for v in p.separated(lambda: p.need(IDENT, "a bool"), "]"))
        else:
            names = {"stride": "window_strides", "lhs_dilate": "lhs_dilation",
                     "rhs_dilate": "rhs_dilation"}
            if word not in names:
                raise p.error(f"unknown window field {word}")
            attributes[names[word]] = p.int_list()
    return attributes


def _convolution(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    p.expect("(")
    operands = p.operands(scope)
    p.expect(")")
    p.keyword("dim_numbers")
    p.expect("=")
    attributes: dict[str, Any] = {"dimension_numbers": p.conv_dimensions()}
    p.expect(",")
    p.keyword("window")
    p.expect("=")
    attributes.update(_window(p))
    attributes.update(p.optional_dict())
    p.expect(":")
    return _Spec(opcode, operands, p.functional_type()[1], attributes)


def _reduce(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    inputs, inits = [], []

    def pair() -> None:
        p.expect("(")
        inputs.append(p.operand(scope))
        p.keyword("init")
        p.expect(":")
        inits.append(p.operand(scope))
        p.expect(")")

    pair()
    while p.accept(","):
        pair()
    applies = None
    if p.at_keyword("applies"):
        p.keyword("applies")
        applies = p.need(IDENT, "an op name")
    p.keyword("across")
    p.keyword("dimensions")
    p.expect("=")
    attributes: dict[str, Any] = {"dimensions": p.int_list()}
    attributes.update(p.optional_dict())
    p.expect(":")
    _, results = p.functional_type()
    if applies is not None:
        scalar = ir.TensorType((), inputs[0].type.dtype)
        block = ir.Block([Value(scalar), Value(scalar)])
        inner = Op(applies, list(block.args), [Value(scalar)])
        block.ops += [inner, Op("stablehlo.return", list(inner.results), [])]
        region = Region(block)
    else:
        p.keyword("reducer")
        firsts, seconds = [], []
        for _ in inputs:
            first, second = p.typed_args()
            firsts.append(first)
            seconds.append(second)
        region = p.region(scope, firsts + seconds)
    return _Spec(opcode, inputs + inits, results, attributes, [region])


def _while(p: _ModuleParser, opcode: str, scope: _Scope) -> _Spec:
    p.expect("(")
    names: list[str] = []
    inits: list[Value] = []

    def init() -> None:
        names.append(p.need(VALUE, "an iteration argument"))
        p.expect("=")
        inits.append(p.operand(scope))

    p.separated(init, ")")
    p.expect(":")
    types = p.type_list() if inits else []
    args = list(zip(names, types, strict=True))
    p.keyword("cond")
    cond = p.region(scope, args)
    p.keyword("do")
    body = p.region(scope, args)
    return _Spec(opcode, inits, list(types), {}, [cond, body])


_PRETTY: dict[str, Callable[[_ModuleParser, str, _Scope], _Spec]] = {
    "stablehlo.select": _select,
    "stablehlo.complex": _complex,
    "stablehlo.compare": _compare,
    "stablehlo.reduce_precision": _reduce_precision,
    "stablehlo.iota": _iota,
    "stablehlo.slice": _slice,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.dot": _dot,
    "stablehlo.constant": _constant,
    "stablehlo.optimization_barrier": _types_after_colon,
    "stablehlo.after_all": _types_after_colon,
    "stablehlo.custom_call": _custom_call,
    "func.call": _call,
    "func.return": _return,
    "stablehlo.return": _return,
    "chlo.top_k": _top_k,
    "stablehlo.convolution": _convolution,
    "stablehlo.reduce": _reduce,
    "stablehlo.while": _while,
}


def _parse_function(p: _ModuleParser) -> ir.Function:
    """`func.func <visibility> @name(%arg0: t {attrs}, ...) -> (t {attrs}, ...) { body }`."""
    p.keyword("func.func")
    visibility = "public"
    if p.at_keyword("public") or p.at_keyword("private") or p.at_keyword("nested"):
        visibility = p.need(IDENT, "a visibility")
    name = p.symbol_name()
    p.expect("(")
    scope = _Scope(None)
    args: list[Value] = []
    arg_attrs: list[dict[str, Any]] = []

    def arg() -> None:
        arg_name = p.need(VALUE, "an argument")
        p.expect(":")
        value = Value(p.type())
        scope.values[arg_name] = value
        args.append(value)
        arg_attrs.append(p.optional_dict())

    p.separated(arg, ")")
    result_types: list[ir.Type] = []
    result_attrs: list[dict[str, Any]] = []
    if p.accept("->"):
        def result() -> None:
            result_types.append(p.type())
            result_attrs.append(p.optional_dict())
        if p.accept("("):
            p.separated(result, ")")
        else:
            result_types.append(p.type())
            result_attrs.append({})
    block = ir.Block(args)
    p.expect("{")
    p.block_ops(block, scope)
    p.expect("}")
    return ir.Function(name, block, result_types, visibility,
                       arg_attrs if any(arg_attrs) else None,
                       result_attrs if any(result_attrs) else None)


def parse_module(text: str) -> ir.Module:
    """The `ir.Module` of StableHLO MLIR text as `stablehlo_printer.print_module` writes it.

    Args:
      text: the module's text (`module @name attributes {...} { func.func ... }`).

    Returns:
      The module; printing it gives `text` back.

    Raises:
      StableHLOParseError: the text is malformed, or uses an op form or attribute the
        printer never writes.
    """
    p = _ModuleParser(text)
    p.keyword("module")
    name = ""
    if p.peek("@"):
        name = p.symbol_name()
    attributes: dict[str, Any] = {}
    if p.at_keyword("attributes"):
        p.keyword("attributes")
        attributes = p.attribute_dict()
    p.expect("{")
    functions = []
    while not p.accept("}"):
        functions.append(_parse_function(p))
    p.skip()
    if p.pos != len(text):
        raise p.error("unexpected text after the module")
    return ir.Module(name, functions, attributes)
