"""Checks StableHLO text with real jaxlib (tests marked `needs_jax` only).

`parse(text)` runs jaxlib's MLIR parser and verifier; `canonical(text)` is the text jaxlib
prints back (what `jax.jit(f).lower(x).as_text()` would show for that module); `run(text,
args)` compiles and runs it on XLA CPU; `hlo_text(text)` is XLA's HLO text of it as
`lowered.as_text(dialect="hlo")` prints it; `to_ir(text)` rebuilds a jaxlib-parsed module
as a justjax `ir.Module`, so printers can be compared against JAX's own texts.
jax is imported lazily, on first use.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Sequence

import numpy as np

from justjax._src.hlo import ir


@functools.cache
def _jax() -> Any:
    """The jaxlib pieces used here (imported once)."""
    import types

    import jax  # noqa: F401
    from jax._src import xla_bridge
    from jax._src.interpreters import mlir
    from jax._src.lib import _jax
    from jax._src.lib import hlo as hlo_lib
    from jax._src.lib import xla_client
    from jax._src.lib.mlir import ir as mlir_ir
    return types.SimpleNamespace(jax=jax, mlir=mlir, ir=mlir_ir, xla_client=xla_client,
                                 xla_bridge=xla_bridge, jaxlib=_jax, hlo=hlo_lib)


@functools.cache
def _context() -> Any:
    return _jax().mlir.make_ir_context()


def _parsed(text: str) -> Any:
    context = _context()
    with context:
        return _jax().ir.Module.parse(text), context


def parse(text: str) -> None:
    """Parses and verifies `text` with jaxlib's MLIR; raises on any error."""
    _parsed(text)


def canonical(text: str) -> str:
    """`text` parsed and printed back by jaxlib, as JAX's `as_text()` prints modules."""
    j = _jax()
    module, context = _parsed(text)
    with context:
        return j.mlir.module_to_string(module, enable_debug_info=False)


def hlo_text(text: str) -> str:
    """XLA's (unoptimized) HLO text of the module, as `as_text(dialect="hlo")`."""
    j = _jax()
    module, context = _parsed(text)
    with context:
        bytecode = j.mlir.module_to_bytecode(module)
    computation = j.jaxlib.mlir.mlir_module_to_xla_computation(bytecode, use_tuple_args=False)
    options = j.hlo.HloPrintOptions.short_parsable()
    options.print_metadata = False
    return computation.as_hlo_module().to_string(options)


def run(text: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Compiles `text` for XLA CPU and runs it on `args`; the results as NumPy arrays."""
    j = _jax()
    backend = j.xla_bridge.get_backend("cpu")
    device = backend.devices()[0]
    options = j.xla_client.CompileOptions()
    # Unoptimized machine code compiles faster; XLA's semantics stay the same.
    options.executable_build_options.debug_options.xla_backend_optimization_level = 0
    executable = backend.compile_and_load(text, j.xla_client.DeviceList((device,)), options)
    buffers = [j.jax.device_put(np.asarray(a), device) for a in args]
    results = executable.execute_sharded(buffers).disassemble_into_single_device_arrays()
    return [np.asarray(r[0]) for r in results]


# ---------------------------------------------------------------------------------------------
# jaxlib module -> justjax IR.

_DTYPES = {name: dtype for dtype, name in ir._ELEMENT_TYPES.items()}


def _type(text: str) -> ir.Type:
    if text == "!stablehlo.token":
        return ir.TokenType()
    match = re.fullmatch(r"tensor<((?:\d+x)*)(.+)>", text)
    if match is None:
        raise ValueError(f"unsupported type {text}")
    shape = tuple(int(d) for d in match.group(1).split("x") if d)
    return ir.TensorType(shape, _DTYPES[match.group(2)])


def _float_element(text: str, dtype: np.dtype) -> Any:
    if text.startswith("0x"):
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
        return np.array(int(text, 16), width).view(dtype)
    return np.array(float(text)).astype(dtype)


def _element(text: str, dtype: np.dtype) -> Any:
    text = text.strip()
    if dtype == np.bool_:
        return text == "true"
    if dtype.kind in "iu":
        return int(text)
    if dtype.kind == "c":
        part = np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)
        real, imag = text.strip("()").split(",")
        return complex(_float_element(real, part), _float_element(imag, part))
    return _float_element(text, dtype)


def _split_top(text: str) -> list[str]:
    """Comma-separated items of a list, commas inside brackets/parens kept."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _nested(text: str, dtype: np.dtype) -> Any:
    text = text.strip()
    if text.startswith("["):
        return [_nested(item, dtype) for item in _split_top(text[1:-1])]
    return _element(text, dtype)


def dense_array(text: str) -> np.ndarray:
    """The array of `dense<...> : tensor<...>` (MLIR text)."""
    match = re.fullmatch(r"dense<(.*)> : (tensor<.*>)", text, re.S)
    body, tensor = match.group(1), _type(match.group(2))
    dtype = tensor.dtype
    if body == "":
        return np.zeros(tensor.shape, dtype)
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        if dtype == np.bool_:
            return np.frombuffer(raw, np.uint8).astype(np.bool_).reshape(tensor.shape)
        return np.frombuffer(raw, dtype).reshape(tensor.shape).copy()
    if not body.startswith("["):
        return np.full(tensor.shape, _element(body, dtype), dtype)
    return np.array(_nested(body, dtype), dtype).reshape(tensor.shape)


def _int_list(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"-?\d+", text))


def _struct_fields(text: str) -> dict[str, Any]:
    fields = {}
    for name, value in re.findall(r"(\w+) = (\[[^\]]*\]|-?\d+)", text):
        fields[name] = _int_list(value) if value.startswith("[") else int(value)
    return fields


def _conv_dimensions(text: str) -> ir.ConvDimensionNumbers:
    sides = re.fullmatch(r"#stablehlo.conv<(\[.*\])x(\[.*\])->(\[.*\])>", text).groups()

    def labels(side: str) -> tuple[dict[str, int], tuple[int, ...]]:
        items = [s.strip() for s in side.strip("[]").split(",")]
        named = {s: i for i, s in enumerate(items) if not s.isdigit()}
        spatial = sorted((int(s), i) for i, s in enumerate(items) if s.isdigit())
        return named, tuple(i for _, i in spatial)

    (lhs, lhs_sp), (rhs, rhs_sp), (out, out_sp) = (labels(s) for s in sides)
    return ir.ConvDimensionNumbers(lhs["b"], lhs["f"], lhs_sp, rhs["i"], rhs["o"], rhs_sp,
                                   out["b"], out["f"], out_sp)


def _dialect_attribute(text: str) -> Any:
    enum = re.fullmatch(r"#stablehlo<(\w+) (\w+)>", text)
    if enum:
        return ir.Enum(enum.group(1), enum.group(2))
    struct = re.fullmatch(r"#stablehlo\.(dot|gather|scatter)<(.*)>", text)
    if struct:
        kind = {"dot": ir.DotDimensionNumbers, "gather": ir.GatherDimensionNumbers,
                "scatter": ir.ScatterDimensionNumbers}[struct.group(1)]
        fields = _struct_fields(struct.group(2))
        import dataclasses
        return kind(**{f.name: fields.get(f.name, ()) for f in dataclasses.fields(kind)})
    if text.startswith("#stablehlo.conv<"):
        return _conv_dimensions(text)
    raise ValueError(f"unsupported attribute {text}")


def _attribute(attr: Any) -> Any:
    j = _jax()
    mir = j.ir
    kind = type(attr).__name__
    text = str(attr)
    if kind == "BoolAttr":
        return mir.BoolAttr(attr).value
    if kind == "IntegerAttr":
        value, type_ = text.rsplit(" : ", 1)
        if type_ == "i64":
            return int(value)
        return ir.IntegerAttr(int(value == "true") if type_ == "i1" else int(value), type_)
    if kind == "StringAttr":
        return mir.StringAttr(attr).value
    if kind == "DenseI64ArrayAttr":
        return tuple(int(v) for v in mir.DenseI64ArrayAttr(attr))
    if kind == "DenseBoolArrayAttr":
        return tuple(bool(v) for v in mir.DenseBoolArrayAttr(attr))
    if kind.startswith("Dense") and kind.endswith("ElementsAttr"):
        return dense_array(text)
    if kind == "FlatSymbolRefAttr":
        return ir.Symbol(mir.FlatSymbolRefAttr(attr).value)
    if kind == "ArrayAttr":
        return tuple(_attribute(a) for a in mir.ArrayAttr(attr))
    if kind == "DictAttr":
        return _attributes(mir.DictAttr(attr))
    if kind == "TypeAttr":
        return text
    if kind == "FloatAttr":
        value, type_ = text.rsplit(" : ", 1)
        return _float_element(value, np.dtype(_DTYPES[type_]))[()]
    return _dialect_attribute(text)


def _attributes(attrs: Any) -> dict[str, Any]:
    named = [attrs[i] for i in range(len(attrs))]
    return {a.name: _attribute(a.attr) for a in named}


class _Converter:
    def __init__(self) -> None:
        self.values: dict[Any, ir.Value] = {}

    def block(self, mlir_block: Any) -> ir.Block:
        args = []
        for arg in mlir_block.arguments:
            value = ir.Value(_type(str(arg.type)))
            self.values[arg] = value
            args.append(value)
        block = ir.Block(args)
        for mlir_op in mlir_block.operations:
            block.ops.append(self.op(mlir_op))
        return block

    def op(self, mlir_op: Any) -> ir.Op:
        operands = [self.values[v] for v in mlir_op.operands]
        results = []
        for result in mlir_op.results:
            value = ir.Value(_type(str(result.type)))
            self.values[result] = value
            results.append(value)
        regions = [ir.Region(self.block(r.blocks[0])) for r in mlir_op.regions]
        if mlir_op.name == "stablehlo.constant":
            # Read the value off the op's text: jaxlib's Python bindings cannot hand out
            # complex dense attributes.
            text = mlir_op.get_asm(print_generic_op_form=True)
            value = re.search(r"value = (dense<.*?> : tensor<[^>]*>+)", text).group(1)
            attributes = {"value": dense_array(value)}
        else:
            attributes = _attributes(mlir_op.attributes)
        return ir.Op(mlir_op.name, operands, results, attributes, regions)


def to_ir(text: str) -> ir.Module:
    """A module jaxlib parses from `text`, rebuilt as a justjax `ir.Module`."""
    module, context = _parsed(text)
    with context:
        attrs = _attributes(module.operation.attributes)
        name = attrs.pop("sym_name", "")
        functions = []
        converter = _Converter()
        for fn_op in module.body.operations:
            fn_attrs = _attributes(fn_op.attributes)
            body = converter.block(fn_op.regions[0].blocks[0])
            results = fn_attrs["function_type"].split(" -> ", 1)[1]
            result_types = [_type(t) for t in _split_top(results.strip("()"))] \
                if results.startswith("(") else [_type(results)]
            arg_attrs = fn_attrs.get("arg_attrs")
            res_attrs = fn_attrs.get("res_attrs")
            functions.append(ir.Function(
                fn_attrs["sym_name"], body, result_types,
                visibility=fn_attrs.get("sym_visibility", "public"),
                arg_attrs=list(arg_attrs) if arg_attrs is not None else None,
                result_attrs=list(res_attrs) if res_attrs is not None else None))
        return ir.Module(name, functions, attrs)
