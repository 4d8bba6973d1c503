"""XLA HLO text of an (unoptimized) `ir.Module`, as `lowered.as_text(dialect="hlo")`.

    HloModule jit_f, entry_computation_layout={(f32[5]{0})->f32[5]{0}}

    ENTRY main.1 {
      Arg_0.1 = f32[5]{0} parameter(0)
      ROOT sine.1 = f32[5]{0} sine(Arg_0.1)
    }

Each function becomes a computation (the public `main` is the ENTRY one), and so does each
region (`region_0.1`: reduce bodies, sort comparators, while cond/body, case branches).
Multiple results are tuples: a `while` packs its operands into a tuple, multi-result ops
give a tuple read back with `get-tuple-element`, and an entry computation with several
results returns a `tuple`. Names are XLA's for a module without source locations: the HLO
opcode (or `Arg_<i>` for parameters) with a per-name counter. Called computations are
printed before their callers, instructions in post order from the root.

The translation is table-driven: `_OPCODES` maps StableHLO opcodes to HLO ones and
`_ATTRIBUTE_PRINTERS` gives the `, key=value` attributes of each; an op missing from the
tables prints as `<name>(operands)` with its attributes in a generic `key=value` form.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import dtypes
from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.ir import Op, Value
from justjax._src.hlo.sharding import SHARDING, TensorSharding

_ELEMENT_TYPES = {
    np.dtype(np.bool_): "pred", np.dtype(np.int8): "s8", np.dtype(np.int16): "s16",
    np.dtype(np.int32): "s32", np.dtype(np.int64): "s64", np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64",
    np.dtype(dtypes.float16): "f16", np.dtype(dtypes.bfloat16): "bf16",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128",
    # ml_dtypes' narrow types: `f8e4m3fn`, `s4`, `u4`.
    **{t: "f" + t.name[len("float"):].replace("_", "") for t in dtypes.NARROW_FLOAT_TYPES},
    dtypes.int1: "s1", dtypes.int2: "s2", dtypes.int4: "s4",
    dtypes.uint1: "u1", dtypes.uint2: "u2", dtypes.uint4: "u4",
}


def shape_text(type_: ir.Type, layout: Sequence[int] | None = None) -> str:
    """`f32[2,3]{1,0}`: the layout (minor-to-major) is row-major unless given; `token[]`."""
    if isinstance(type_, ir.TokenType):
        return "token[]"
    dims = ",".join(str(d) for d in type_.shape)
    text = f"{_ELEMENT_TYPES[type_.dtype]}[{dims}]"
    if type_.rank:
        order = layout if layout is not None else reversed(range(type_.rank))
        text += "{" + ",".join(str(d) for d in order) + "}"
    return text


def tuple_shape(types: Sequence[ir.Type],
                layouts: Sequence[tuple[int, ...] | None] | None = None) -> str:
    """`(f32[]{...}, s32[], /*index=5*/...)`: XLA marks every fifth element's index."""
    parts = []
    layouts = layouts or [None] * len(types)
    for i, (t, layout) in enumerate(zip(types, layouts, strict=True)):
        prefix = f"/*index={i}*/" if i and i % 5 == 0 else ""
        parts.append(prefix + shape_text(t, layout))
    return "(" + ", ".join(parts) + ")"


# ---------------------------------------------------------------------------------------------
# Literals.

def _scalar_literal(value: Any, dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return "true" if value else "false"
    if dtypes.kind(dtype) in "iu":
        return str(int(value))
    if dtype.kind == "c":
        return f"({_scalar_literal(value.real, np.dtype(np.float64))}, " \
               f"{_scalar_literal(value.imag, np.dtype(np.float64))})"
    x = float(value)
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    # XLA's RoundTripFpToString: `%.<DIG>g`, or with 3 more digits if that does not
    # round-trip (DIG = 6 for 32-bit and narrower floats, 15 for 64-bit).
    wide = dtype == np.dtype(np.float64)
    digits = 15 if wide else 6
    same = np.float64 if wide else (dtype if dtype.kind == "f" else np.float32)
    text = f"{x:.{digits}g}"
    if np.asarray(float(text), same) != np.asarray(x, same):
        text = f"{x:.{digits + 3}g}"
    return text


def literal(array: np.ndarray) -> str:
    """XLA's literal syntax: `2`, `{1.5, -0, nan, inf}`, `{ {0}, {1} }`."""
    array = np.asarray(array)
    if array.ndim == 0:
        return _scalar_literal(array[()], array.dtype)
    if array.ndim == 1:
        return "{" + ", ".join(_scalar_literal(v, array.dtype) for v in array) + "}"
    return "{ " + ", ".join(_row(sub) for sub in array) + " }"


def _row(array: np.ndarray) -> str:
    """A nested row: `{ 1, 2 }`, but `{1}` for a single element."""
    if array.ndim > 1:
        return "{ " + ", ".join(_row(sub) for sub in array) + " }"
    if array.size == 1:
        return "{" + _scalar_literal(array[0], array.dtype) + "}"
    return "{ " + ", ".join(_scalar_literal(v, array.dtype) for v in array) + " }"


# ---------------------------------------------------------------------------------------------
# Opcodes and their attributes.

def hlo_opcode(opcode: str) -> str:
    """The HLO opcode of a StableHLO one (`stablehlo.dot_general` -> `dot`), from the opcode
    registry; unknown ops keep their name without dialect, `_` written `-`."""
    return opcodes.hlo_name(opcode)


def _braces(values: Sequence[int]) -> str:
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def _window(op: Op, sizes_key: str) -> str:
    sizes = op.attributes.get(sizes_key, ())
    rank = len(sizes)
    parts = ["size=" + "x".join(str(s) for s in sizes)]
    strides = op.attributes.get("window_strides")
    if strides is not None and any(s != 1 for s in strides):
        parts.append("stride=" + "x".join(str(s) for s in strides))
    padding = op.attributes.get("padding")
    if padding is not None and np.any(np.asarray(padding)):
        rows = np.asarray(padding).reshape(rank, 2)
        parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in rows))
    for key, name in (("lhs_dilation", "lhs_dilate"), ("base_dilations", "lhs_dilate"),
                      ("rhs_dilation", "rhs_dilate"), ("window_dilations", "rhs_dilate")):
        value = op.attributes.get(key)
        if value is not None and any(v != 1 for v in value):
            parts.append(f"{name}=" + "x".join(str(v) for v in value))
    return "window={" + " ".join(parts) + "}"


def _dot_attributes(op: Op) -> list[str]:
    dn = op.attributes["dot_dimension_numbers"]
    out = []
    if dn.lhs_batching_dimensions:
        out.append(f"lhs_batch_dims={_braces(dn.lhs_batching_dimensions)}")
    out.append(f"lhs_contracting_dims={_braces(dn.lhs_contracting_dimensions)}")
    if dn.rhs_batching_dimensions:
        out.append(f"rhs_batch_dims={_braces(dn.rhs_batching_dimensions)}")
    out.append(f"rhs_contracting_dims={_braces(dn.rhs_contracting_dimensions)}")
    return out


def _slice_attributes(op: Op) -> list[str]:
    starts, limits = op.attributes["start_indices"], op.attributes["limit_indices"]
    strides = op.attributes.get("strides", (1,) * len(starts))
    with_strides = any(s != 1 for s in strides)
    ranges = [f"[{a}:{b}" + (f":{s}]" if with_strides else "]")
              for a, b, s in zip(starts, limits, strides, strict=True)]
    return ["slice={" + ", ".join(ranges) + "}"]


def _pad_attributes(op: Op) -> list[str]:
    rows = []
    for lo, hi, mid in zip(op.attributes["edge_padding_low"], op.attributes["edge_padding_high"],
                           op.attributes["interior_padding"], strict=True):
        rows.append(f"{lo}_{hi}" + (f"_{mid}" if mid else ""))
    return ["padding=" + "x".join(rows)]


def _compare_attributes(op: Op) -> list[str]:
    out = [f"direction={op.attributes['comparison_direction'].value}"]
    kind = op.attributes.get("compare_type")
    if kind is not None and kind.value == "TOTALORDER":
        out.append("type=TOTALORDER")
    return out


def _dimension_numbers(value: Any, skip: Sequence[str] = ()) -> list[str]:
    out = []
    for f in dataclasses.fields(value):
        field_value = getattr(value, f.name)
        if f.name in skip or field_value == ():
            continue
        text = _braces(field_value) if isinstance(field_value, tuple) else str(field_value)
        out.append(f"{f.name}={text}")
    return out


_ATTRIBUTE_PRINTERS: dict[str, Callable[[Op], list[str]]] = {
    "stablehlo.broadcast_in_dim": lambda op: [
        f"dimensions={_braces(op.attributes['broadcast_dimensions'])}"],
    "stablehlo.transpose": lambda op: [f"dimensions={_braces(op.attributes['permutation'])}"],
    "stablehlo.reverse": lambda op: [f"dimensions={_braces(op.attributes['dimensions'])}"],
    "stablehlo.reduce": lambda op: [f"dimensions={_braces(op.attributes['dimensions'])}"],
    "stablehlo.concatenate": lambda op: [f"dimensions={{{op.attributes['dimension']}}}"],
    "stablehlo.iota": lambda op: [f"iota_dimension={op.attributes['iota_dimension']}"],
    "stablehlo.sort": lambda op: [f"dimensions={{{op.attributes['dimension']}}}"] + (
        ["is_stable=true"] if op.attributes.get("is_stable") else []),
    "stablehlo.compare": _compare_attributes,
    "stablehlo.dot_general": _dot_attributes,
    "stablehlo.slice": _slice_attributes,
    "stablehlo.pad": _pad_attributes,
    "stablehlo.dynamic_slice": lambda op: [
        f"dynamic_slice_sizes={_braces(op.attributes['slice_sizes'])}"],
    "stablehlo.gather": lambda op: _dimension_numbers(
        op.attributes["dimension_numbers"]) + [
        f"slice_sizes={_braces(op.attributes['slice_sizes'])}"],
    "stablehlo.scatter": lambda op: _dimension_numbers(
        op.attributes["scatter_dimension_numbers"]),
    "stablehlo.reduce_window": lambda op: [_window(op, "window_dimensions")],
    "stablehlo.select_and_scatter": lambda op: [_window(op, "window_dimensions")],
    "stablehlo.reduce_precision": lambda op: [
        f"exponent_bits={_int(op.attributes['exponent_bits'])}",
        f"mantissa_bits={_int(op.attributes['mantissa_bits'])}"],
    "stablehlo.fft": lambda op: [f"fft_type={op.attributes['fft_type'].value}",
                                 f"fft_length={_braces(op.attributes['fft_length'])}"],
    "stablehlo.custom_call": lambda op: [
        f'custom_call_target="{op.attributes["call_target_name"]}"'],
}


def _groups(value: Any) -> str:
    """`{{0,1},{2,3}}`: replica groups (or source-target pairs) as XLA prints them."""
    rows = np.asarray(value).reshape(-1, np.shape(value)[-1] if np.ndim(value) else 1)
    return "{" + ",".join("{" + ",".join(str(int(v)) for v in row) + "}" for row in rows) + "}"


def _collective(op: Op, channel: int | None) -> list[str]:
    """A collective's attributes in XLA's order; in a partitioned module (`channel`) numbered
    by a channel, its groups of global device ids."""
    channel_id = [] if channel is None else [f"channel_id={channel}"]
    global_ids = [] if channel is None else ["use_global_device_ids=true"]
    attributes = op.attributes
    if op.opcode == "stablehlo.collective_permute":
        return channel_id + [f"source_target_pairs={_groups(attributes['source_target_pairs'])}"]
    groups = [f"replica_groups={_groups(attributes['replica_groups'])}"]
    if op.opcode == "stablehlo.all_gather":
        return (channel_id + groups + [f"dimensions={{{_int(attributes['all_gather_dim'])}}}"]
                + global_ids)
    if op.opcode == "stablehlo.reduce_scatter":
        return (channel_id + groups + global_ids
                + [f"dimensions={{{_int(attributes['scatter_dimension'])}}}"])
    if op.opcode == "stablehlo.all_to_all":
        return channel_id + groups + [f"dimensions={{{_int(attributes['split_dimension'])}}}"]
    return channel_id + groups + global_ids


_COLLECTIVES = frozenset({"stablehlo.all_reduce", "stablehlo.all_gather",
                          "stablehlo.reduce_scatter", "stablehlo.all_to_all",
                          "stablehlo.collective_permute"})


def _int(value: Any) -> int:
    return value.value if isinstance(value, ir.IntegerAttr) else int(value)


def _generic_attribute(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, ir.IntegerAttr):
        return str(value.value)
    if isinstance(value, ir.Enum):
        return value.value
    if isinstance(value, ir.Symbol):
        return value.name
    if isinstance(value, np.ndarray):
        return literal(value)
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return _braces(value)
    return str(value)


def _attributes(op: Op) -> list[str]:
    printer = _ATTRIBUTE_PRINTERS.get(op.opcode)
    if printer is not None:
        return printer(op)
    entry = opcodes.lookup(op.opcode)
    if entry is not None and entry.hlo_attributes:
        return []
    return [f"{k}={_generic_attribute(v)}" for k, v in sorted(op.attributes.items())]


# ---------------------------------------------------------------------------------------------
# Computations.

@dataclasses.dataclass(eq=False)
class _Instruction:
    name: str
    shape: str
    text: str            # `opcode(operands), attrs`
    operands: list[_Instruction]
    layout: tuple[int, ...] | None = None   # minor-to-major when not row-major
    fixed: bool = False   # a name given by a pass (a fusion's), printed as is


class _Names:
    """XLA's name uniquer: `base.<n>`, one counter per base name across the module."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}

    def fresh(self, base: str) -> str:
        self.counters[base] = self.counters.get(base, 0) + 1
        return f"{base}.{self.counters[base]}"


class _ModulePrinter:
    def __init__(self, module: ir.Module, optimized: bool = False) -> None:
        self.module = module
        # Optimized HLO (`compiled.as_text()`): `%` names, computation signatures, fusions,
        # and scheduled computations printed in their op order.
        self.optimized = optimized
        self.names = _Names()
        self.computation_count = 0
        self.computations: list[str] = []
        self.function_names: dict[str, str] = {}
        self.region_count = 0
        self.entry_result = ""
        # The entry computation's instruction of each value, once printed.
        self.entry_env: dict[Value, _Instruction] = {}
        self.channels = 0

    @property
    def partitioned(self) -> bool:
        return int(self.module.attributes.get("mhlo.num_partitions", 1)) > 1

    def collective(self, op: Op) -> list[str]:
        if not self.partitioned:
            return _collective(op, None)
        self.channels += 1
        return _collective(op, self.channels)

    def _parameter_shardings(self) -> dict[int, str]:
        """The XLA text of each entry parameter's sharding in a partitioned module."""
        main = self.module.main
        found = {}
        for i, attrs in enumerate(main.arg_attrs or ()):
            sharding = attrs.get(SHARDING)
            if isinstance(sharding, TensorSharding) and not sharding.partial:
                found[i] = sharding.hlo_text()
        return found

    def ref(self, name: str) -> str:
        """How an instruction or computation is referred to: `%name` in optimized HLO."""
        return "%" + name if self.optimized else name

    def computation_name(self, base: str) -> str:
        self.computation_count += 1
        return f"{base}.{self.computation_count}"

    def function(self, name: str) -> str:
        """The computation name of function `name`, printing it first if needed."""
        if name not in self.function_names:
            fn = self.module.function(name)
            self.function_names[name] = ""  # guards against recursion
            self.function_names[name] = self.block(fn.body, name, is_entry=False)
        return self.function_names[name]

    def region(self, region: ir.Region, captures: Sequence[Value] = (),
               tuple_param: bool = False, extra_results: Sequence[Value] = (),
               tuple_result: bool = False, scheduled: bool = True) -> str:
        """A region as a computation; values it reads from enclosing blocks (`captures`)
        become trailing parameters (tuple elements with `tuple_param`, as a while loop's
        state), and `extra_results` are appended to what it returns."""
        base = f"region_{self.region_count}"
        self.region_count += 1
        return self.block(region.block, base, is_entry=False, captures=captures,
                          tuple_param=tuple_param, extra_results=extra_results,
                          tuple_result=tuple_result, scheduled=scheduled)

    def block(self, block: ir.Block, base: str, is_entry: bool,
              captures: Sequence[Value] = (), tuple_param: bool = False,
              extra_results: Sequence[Value] = (), tuple_result: bool = False,
              param_base: str = "Arg_", fixed_name: bool = False,
              scheduled: bool = True) -> str:
        """Prints a block as a computation (its called computations first); its name.
        Several results (or `tuple_result`) are returned as a tuple."""
        env: dict[Value, _Instruction] = {}
        instructions: list[_Instruction] = []

        def add(base_name: str, shape: str, text: str, operands: list[_Instruction],
                layout: tuple[int, ...] | None = None) -> _Instruction:
            inst = _Instruction(base_name, shape, text, operands, layout)
            instructions.append(inst)
            return inst

        inputs = list(block.args) + list(captures)
        if tuple_param:
            param = add("arg_tuple", tuple_shape([v.type for v in inputs]), "parameter(0)", [])
            for i, value in enumerate(inputs):
                env[value] = add("get-tuple-element", shape_text(value.type),
                                 f"get-tuple-element(%s), index={i}", [param])
        else:
            shardings = self._parameter_shardings() if is_entry else {}
            # XLA's partitioner names the per-device entry's parameters `param`, `param.1` ...
            spmd_entry = is_entry and self.optimized and self.partitioned
            for i, value in enumerate(inputs):
                text = f"parameter({i})"
                if i in shardings:
                    text += f", sharding={shardings[i]}"
                env[value] = add(f"{param_base}{i}", shape_text(value.type), text, [])
                if spmd_entry:
                    env[value].name = "param" if i == 0 else f"param.{i}"
                    env[value].fixed = True
        num_params = 1 if tuple_param else len(inputs)
        fusions = self.fused_computations(block) if self.optimized else {}
        for op in block.ops[:-1]:
            if op.opcode == FUSION:
                self.fusion(op, env, add, fusions[id(op)])
                continue
            self.op(op, env, add)
        returned_values = list(block.terminator.operands) + list(extra_results)
        returned = [env[v] for v in returned_values]
        if len(returned) == 1 and not tuple_result:
            root = returned[0]
        else:
            shape = tuple_shape([v.type for v in returned_values],
                                [r.layout for r in returned])
            root = add("tuple", shape, "tuple(%s)", returned)
        name = base if fixed_name else self.computation_name(base)
        if is_entry and self.optimized and self.partitioned:
            name = "main.0_spmd"  # XLA's name for the per-device entry computation
        if scheduled and self.optimized:
            ordered = [inst for inst in instructions if inst is not root] + [root]
        else:
            ordered = _post_order(instructions, root)
        for inst in ordered:
            if not inst.fixed:
                inst.name = self.names.fresh(inst.name)
        if is_entry:
            self.entry_env = env
        head = self.ref(name)
        if self.optimized:
            params = ", ".join(f"{inst.name}: {_plain_shape(inst.shape)}"
                               for inst in instructions[:num_params])
            head += f" ({params}) -> {_plain_shape(root.shape)}"
        head = f"ENTRY {head}" if is_entry else head
        body = [f"  {'ROOT ' if inst is root else ''}{self.ref(inst.name)} = {inst.shape} "
                f"{inst.text.replace('%s', ', '.join(self.ref(o.name) for o in inst.operands), 1)}"
                for inst in ordered]
        self.computations.append("\n".join([head + " {", *body, "}"]))
        if is_entry:
            self.entry_result = root.shape
        return name

    def fused_computations(self, block: ir.Block) -> dict[int, str]:
        """Prints the fused computations of `block`'s fusions, in the order XLA creates
        them (fusion: `fused_computation`, `.1`, ...; then the wrapped single ops in block
        order); returns each fusion's computation name."""
        fusions = [op for op in block.ops if op.opcode == FUSION]
        fusions.sort(key=_creation_order)
        names = {}
        for op in fusions:
            names[id(op)] = self.block(op.regions[0].block, op.attributes["computation"],
                                       is_entry=False, param_base="param_", fixed_name=True,
                                       scheduled=False)
        return names

    def fusion(self, op: Op, env: dict[Value, _Instruction],
               add: Callable[..., _Instruction], computation: str) -> None:
        """`%name = f32[5]{0} fusion(%a, %b), kind=kLoop, calls=%fused_computation`."""
        operands = [env[v] for v in op.operands]
        attributes = [f"kind={op.attributes['kind']}", f"calls={self.ref(computation)}"]
        shape = (shape_text(op.result.type) if len(op.results) == 1
                 else tuple_shape(op.result_types))
        inst = add(op.attributes["name"], shape,
                   self._call_text("fusion", operands, attributes), operands)
        inst.fixed = True
        if len(op.results) == 1:
            env[op.result] = inst
            return
        for i, result in enumerate(op.results):
            env[result] = add("get-tuple-element", shape_text(result.type),
                              self._call_text("get-tuple-element", [inst], [f"index={i}"]),
                              [inst])

    @staticmethod
    def _call_text(opcode: str, operands: Sequence[_Instruction],
                   attributes: Sequence[str] = ()) -> str:
        """`opcode(%s), attrs`: the operand names fill `%s` once they are final."""
        return ", ".join([f"{opcode}(%s)", *attributes])

    def op(self, op: Op, env: dict[Value, _Instruction],
           add: Callable[..., _Instruction]) -> None:
        operands = [env[v] for v in op.operands]
        opcode = hlo_opcode(op.opcode)
        attributes = (self.collective(op) if op.opcode in _COLLECTIVES
                      else list(_attributes(op)))
        if op.opcode == "stablehlo.constant":
            array = np.broadcast_to(np.asarray(op.attributes["value"], op.result.type.dtype),
                                    op.result.type.shape)
            env[op.result] = add("constant", shape_text(op.result.type),
                                 f"constant({literal(array)})", [])
            return
        if op.opcode == "stablehlo.while":
            captures = _free_values(op.regions)
            state = list(op.operands) + captures
            packed = add("tuple", tuple_shape([v.type for v in state]),
                         self._call_text("tuple", [env[v] for v in state]),
                         [env[v] for v in state])
            # The body returns the whole loop state, captures passed through.
            body = self.region(op.regions[1], captures, tuple_param=True,
                               extra_results=captures, tuple_result=True)
            cond = self.region(op.regions[0], captures, tuple_param=True)
            operands = [packed]
            attributes = [f"condition={self.ref(cond)}", f"body={self.ref(body)}"]
            loop = add(opcode, tuple_shape([v.type for v in state]),
                       self._call_text(opcode, operands, attributes), operands)
            for i, result in enumerate(op.results):
                env[result] = add("get-tuple-element", shape_text(result.type),
                                  self._call_text("get-tuple-element", [loop], [f"index={i}"]),
                                  [loop])
            return
        if op.opcode == "func.call":
            attributes = [
                f"to_apply={self.ref(self.function(op.attributes['callee'].name))}"]
        elif op.opcode == "stablehlo.case":
            branches = []
            for region in op.regions:
                captures = _free_values([region])
                branches.append(self.region(region, captures, tuple_param=True))
                operands.append(add("tuple", tuple_shape([v.type for v in captures]),
                                    self._call_text("tuple", [env[v] for v in captures]),
                                    [env[v] for v in captures]))
            attributes = ["branch_computations={" + ", ".join(
                self.ref(b) for b in branches) + "}"]
        elif op.regions:
            names = [self.ref(self.region(r, _free_values([r]), scheduled=False))
                     for r in op.regions]
            keys = (["select", "scatter"] if op.opcode == "stablehlo.select_and_scatter"
                    else ["to_apply"] * len(names))
            attributes += [f"{k}={n}" for k, n in zip(keys, names, strict=True)]
        if op.opcode == "stablehlo.transpose":
            # XLA gives a transpose the layout that makes it a bitcast of its operand.
            source = operands[0].layout or tuple(reversed(range(op.result.type.rank)))
            perm = list(op.attributes["permutation"])
            layout = tuple(perm.index(d) for d in source)
            env[op.result] = add(opcode, shape_text(op.result.type, layout),
                                 self._call_text(opcode, operands, attributes), operands,
                                 layout)
            return
        shape = (shape_text(op.result.type) if len(op.results) == 1
                 else tuple_shape(op.result_types))
        if op.opcode == "chlo.square" and op.result.type.dtype.kind != "c":
            # HLO has no square: XLA legalizes CHLO's into a multiply (named `square`).
            env[op.result] = add("square", shape,
                                 self._call_text("multiply", operands * 2, attributes),
                                 operands * 2)
            return
        inst = add(opcode, shape, self._call_text(opcode, operands, attributes), operands)
        if len(op.results) == 1:
            env[op.result] = inst
            return
        for i, result in enumerate(op.results):
            env[result] = add("get-tuple-element", shape_text(result.type),
                              self._call_text("get-tuple-element", [inst], [f"index={i}"]),
                              [inst])


FUSION = "hlo.fusion"


def _creation_order(op: Op) -> tuple[int, int]:
    """Fusions first (`fused_computation.<n>` by n), then wrapped ops (stable: block order)."""
    name = op.attributes["computation"]
    if not name.startswith("fused_computation"):
        return (1, 0)
    _, _, suffix = name.partition(".")
    return (0, int(suffix) if suffix.isdigit() else 0)


def _plain_shape(shape: str) -> str:
    """A shape without its layouts, as computation signatures print it:
    `f32[2,3]{1,0}` -> `f32[2,3]`, `(s32[], f32[4]{0})` -> `(s32[], f32[4])`."""
    out = []
    depth = 0
    for ch in shape:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _free_values(regions: Sequence[ir.Region]) -> list[Value]:
    """Values the regions read but do not define, in order of first use."""
    defined: set[Value] = set()
    free: list[Value] = []
    for region in regions:
        blocks = [region.block]
        for op in region.block.walk():
            blocks.extend(r.block for r in op.regions)
        for block in blocks:
            defined.update(block.args)
            for op in block.ops:
                defined.update(op.results)
        for op in region.block.walk():
            for value in op.operands:
                if value not in defined and value not in free:
                    free.append(value)
    return free


def _post_order(instructions: list[_Instruction], root: _Instruction) -> list[_Instruction]:
    """XLA's printing order: a depth-first post order from each instruction without users
    (the root last), operands in order."""
    used = {id(o) for inst in instructions for o in inst.operands}
    order: list[_Instruction] = []
    seen: set[int] = set()

    def visit(inst: _Instruction) -> None:
        stack = [(inst, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in seen and not expanded:
                continue
            if expanded:
                order.append(node)
                continue
            seen.add(id(node))
            stack.append((node, True))
            for operand in reversed(node.operands):
                if id(operand) not in seen:
                    stack.append((operand, False))

    for inst in instructions:
        if id(inst) not in used and inst is not root:
            visit(inst)
    visit(root)
    return order


def print_module(module: ir.Module) -> str:
    """The module's HLO text, as `jax.jit(f).lower(x).as_text(dialect="hlo")` prints it."""
    printer = _ModulePrinter(module)
    main = module.main
    printer.function_names["main"] = printer.block(main.body, "main", is_entry=True)
    params = ", ".join(shape_text(t) for t in main.arg_types)
    result = printer.entry_result
    head = f"HloModule {module.name}, entry_computation_layout={{({params})->{result}}}"
    return "\n\n".join([head, *printer.computations]) + "\n\n"


def entry_op_names(module: ir.Module) -> dict[Op, str]:
    """The instruction name `print_optimized_module` gives each op of `main` (a multi-result
    op's is the tuple-shaped instruction its `get-tuple-element`s read)."""
    printer = _ModulePrinter(module, optimized=True)
    printer.block(module.main.body, "main", is_entry=True)
    names: dict[Op, str] = {}
    for op in module.main.body.ops[:-1]:
        if not op.results:
            continue
        inst = printer.entry_env[op.results[0]]
        if len(op.results) > 1 and inst.operands:
            inst = inst.operands[0]
        names[op] = inst.name
    return names


def print_optimized_module(module: ir.Module) -> str:
    """The module after the optimizing passes in XLA's optimized HLO text, as
    `jax.jit(f).lower(x).compile().as_text()` prints it: `%` names, signatures, fusions
    (`ROOT %broadcast_add_fusion = f32[5]{0} fusion(%Arg_0.1), kind=kLoop,
    calls=%fused_computation`) after their fused computations, and each scheduled
    computation in its op order."""
    printer = _ModulePrinter(module, optimized=True)
    main = module.main
    printer.function_names["main"] = printer.block(main.body, "main", is_entry=True)
    params = ", ".join(shape_text(t) for t in main.arg_types)
    result = printer.entry_result
    partitions = module.attributes.get("mhlo.num_partitions")
    partitions = partitions.value if isinstance(partitions, ir.IntegerAttr) else 1
    # A partitioned program's parameters have the shardings its arguments came with.
    flags = ",".join(["true" if partitions == 1 else "false"] * len(main.arg_types))
    outputs = ",".join(["true"] * len(main.result_types))
    head = (f"HloModule {module.name}, is_scheduled=true, "
            f"entry_computation_layout={{({params})->{result}}}, "
            f"allow_spmd_sharding_propagation_to_parameters={{{flags}}}, "
            f"allow_spmd_sharding_propagation_to_output={{{outputs}}}")
    if partitions > 1:
        head += f", num_partitions={partitions}"
    return "\n\n".join([head, *printer.computations]) + "\n\n"
