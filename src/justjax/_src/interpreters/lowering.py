"""Lowering jaxprs to StableHLO modules (`_src/hlo/ir.py`).

Each primitive registers a rule beside its definition:

    lowering.register_lowering(sin_p, lowering.unary("stablehlo.sine"))

A rule is `rule(ctx, *operands, **params) -> Value | list[Value]`: `ctx` is a
`LoweringRuleContext` (the builder to emit into, the avals in and out), the operands are IR
values, and the result is one value (or a list for multiple-result primitives).
`lower_jaxpr_to_module` walks a closed jaxpr into a module `jit_<name>` whose public `main`
takes the jaxpr's inputs; nested `jit` equations become private functions and `func.call`s.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Builder, TensorType, Value
from justjax._src.hlo.sharding import MeshShape
from justjax._src.interpreters import lowering_poly
from justjax._src.core.shape_poly import all_dim_vars

LoweringRule = Callable[..., Any]

# primitive -> lowering rule
lowerings: dict[core.Primitive, LoweringRule] = {}


# primitive -> lowering rule for equations on extended dtypes (PRNG keys), for the shape
# primitives whose params must gain the trailing physical dimensions.
physical_lowerings: dict[core.Primitive, LoweringRule] = {}


def register_lowering(primitive: core.Primitive, rule: LoweringRule,
                      platform: str | None = None, **_: Any) -> LoweringRule:
    """Registers `rule` to lower `primitive`. A rule for another platform than the CPU
    (`platform='cuda'`, `'tpu'`, ...) does not apply to justjax's backends and is not kept."""
    if platform in (None, "cpu"):
        lowerings[primitive] = rule
    return rule


# ---------------------------------------------------------------------------------------------
# Contexts.

@dataclass(frozen=True)
class ManualAxes:
    """The mesh of a `shard_map` whose body is being lowered as one device's program, and its
    manual axes (named as the user named them; the mesh names them by `str`)."""

    mesh: MeshShape
    axes: tuple[Any, ...]

    def has(self, name: Any) -> bool:
        return name in self.axes

    def groups(self, names: Sequence[Any]) -> np.ndarray:
        """The mesh positions meeting in a collective over `names` (`MeshShape.groups`)."""
        return self.mesh.groups([str(n) for n in names]).astype(np.int64)

    def stride_and_size(self, name: Any) -> tuple[int, int]:
        """How far apart in mesh positions consecutive indices along axis `name` are, and
        its size."""
        sizes = [size for _, size in self.mesh.axes]
        at = self.mesh.names.index(str(name))
        return math.prod(sizes[at + 1:]), sizes[at]


@dataclass
class ModuleContext:
    """The module being built and the private functions already lowered into it."""

    module: ir.Module
    # (jaxpr id, name) or (rule name, types, params) -> function name, so a sub-jit called
    # twice, or a cached rule applied twice to the same types, is lowered once.
    function_names: dict[tuple, str] = field(default_factory=dict)
    # Keeps lowered jaxprs alive so their ids stay unique while the module is built.
    _lowered_jaxprs: list[Any] = field(default_factory=list)

    # How many names have been made unique: MLIR's symbol table numbers its renamings with
    # one counter per module, so the third clash of any names gets `_2`.
    _renamings: int = 0
    # Inside a shard_map's body: its mesh and manual axes (collectives over them lower to
    # StableHLO collective ops); None elsewhere.
    manual: ManualAxes | None = None
    # Objects the compiled program must keep alive (callbacks a library's rule emitted).
    keepalives: list[Any] = field(default_factory=list)
    # The dimension variables of a shape-polymorphic program (sorted): every function of
    # the module takes their values as leading `tensor<i32>` arguments.
    dim_vars: tuple[str, ...] = ()
    # The dimension values of the functions being lowered, innermost last.
    dim_values_stack: list[dict[str, Value]] = field(default_factory=list)

    def add_keepalive(self, keepalive: Any) -> None:
        if keepalive is not None:
            self.keepalives.append(keepalive)

    def fresh_function_name(self, name: str) -> str:
        """`name`, or if a function of that name exists `name_<n>` with the module's next
        renaming number, as MLIR's symbol table renames (`f_0`, then `g_1`, ...)."""
        taken = {fn.name for fn in self.module.functions}
        candidate = name
        while candidate in taken:
            candidate = f"{name}_{self._renamings}"
            self._renamings += 1
        return candidate


@dataclass(frozen=True)
class LoweringRuleContext:
    """What a lowering rule sees besides its operands and params."""

    module_context: ModuleContext
    builder: Builder
    primitive: core.Primitive | None
    avals_in: tuple[ShapedArray, ...]
    avals_out: tuple[ShapedArray, ...]

    @property
    def dim_var_values(self) -> dict[str, Value]:
        """The values of the dimension variables in the function being lowered."""
        stack = self.module_context.dim_values_stack
        return stack[-1] if stack else {}

    def replace(self, **changes: Any) -> LoweringRuleContext:
        fields_ = dict(module_context=self.module_context, builder=self.builder,
                       primitive=self.primitive, avals_in=self.avals_in,
                       avals_out=self.avals_out)
        fields_.update(changes)
        return LoweringRuleContext(**fields_)


# ---------------------------------------------------------------------------------------------
# Types and small emitters shared by the rules.

def aval_to_type(aval: ShapedArray) -> TensorType:
    """The tensor type of an aval; float0 (integer tangents) lowers as bool, as in JAX; an
    extended dtype (PRNG keys) as its physical array: `key<fry>[3]` is `tensor<3x2xui32>`."""
    dtype = aval.dtype
    if dtypes.is_extended(dtype):
        return TensorType((*aval.shape, *dtype.physical_shape), dtype.physical_dtype)
    if dtype == dtypes.float0:
        dtype = np.dtype(np.bool_)
    return TensorType(aval.shape, dtype)


def constant(b: Builder, value: Any, dtype: Any = None) -> Value:
    """`stablehlo.constant` holding `value` (a scalar or array), of `dtype` if given."""
    array = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
    if array.dtype == dtypes.float0:
        array = np.zeros(array.shape, np.bool_)
    return b.constant(array, array.dtype)


def broadcast_in_dim(b: Builder, x: Value, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Value:
    """`stablehlo.broadcast_in_dim` of `x` to `shape`, its dims going to `broadcast_dimensions`."""
    return b.one("stablehlo.broadcast_in_dim", [x], TensorType(tuple(shape), x.type.dtype),
                 broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))


def broadcast_to(b: Builder, x: Value, shape: Sequence[int]) -> Value:
    """Broadcasts a rank-0 (or same-shape) value to `shape`; no op when already that shape."""
    shape = tuple(shape)
    if x.type.shape == shape:
        return x
    if x.type.rank == 0:
        return broadcast_in_dim(b, x, shape, ())
    offset = len(shape) - x.type.rank
    return broadcast_in_dim(b, x, shape, range(offset, len(shape)))


def convert(b: Builder, x: Value, dtype: Any) -> Value:
    """`stablehlo.convert` to `dtype`; no op when `x` already has it."""
    dtype = np.dtype(dtype)
    if x.type.dtype == dtype:
        return x
    return b.one("stablehlo.convert", [x], TensorType(x.type.shape, dtype))


def compare_type(dtype: np.dtype) -> str:
    """StableHLO's comparison type for operands of `dtype`."""
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    if dtypes.is_signed(dtype):
        return "SIGNED"
    return "UNSIGNED"


def compare(b: Builder, x: Value, y: Value, direction: str) -> Value:
    """`stablehlo.compare <direction>, x, y, <type>` giving a bool tensor."""
    return b.one("stablehlo.compare", [x, y], TensorType(x.type.shape, np.bool_),
                 comparison_direction=ir.Enum("comparison_direction", direction),
                 compare_type=ir.Enum("comparison_type", compare_type(x.type.dtype)))


def full(b: Builder, value: Any, aval: ShapedArray) -> Value:
    """A tensor of `aval`'s type filled with `value`: a scalar constant, broadcast."""
    scalar = constant(b, np.asarray(value).astype(aval_to_type(aval).dtype))
    return broadcast_to(b, scalar, aval.shape)


def elementwise(opcode: str) -> LoweringRule:
    """The rule for a primitive that is one StableHLO elementwise op (operands of rank 0
    broadcast to the result shape, as lax's implicit scalar broadcasting)."""
    def rule(ctx: LoweringRuleContext, *operands: Value, **params: Any) -> Value:
        out_type = aval_to_type(ctx.avals_out[0])
        operands = [broadcast_to(ctx.builder, x, out_type.shape) for x in operands]
        return ctx.builder.one(opcode, operands, out_type)

    rule.__name__ = f"lower_{opcode.replace('.', '_')}"
    return rule


# ---------------------------------------------------------------------------------------------
# Walking jaxprs.

def _literal_value(b: Builder, literal: Literal) -> Value:
    return constant(b, np.asarray(literal.val), aval_to_type(literal.aval).dtype)


def jaxpr_subcomp(ctx: ModuleContext, b: Builder, jaxpr: Jaxpr, consts: Sequence[Value],
                  args: Sequence[Value]) -> list[Value]:
    """Emits `jaxpr`'s equations into `b` with its constvars bound to `consts` and invars to
    `args`; returns the values of its outputs."""
    env: dict[Var, Value] = {}

    def read(atom: Any) -> Value:
        if isinstance(atom, Literal):
            return _literal_value(b, atom)
        return env[atom]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        rule = lowerings.get(eqn.primitive)
        if eqn.primitive in physical_lowerings and any(
                dtypes.is_extended(v.aval.dtype) for v in (*eqn.invars, *eqn.outvars)):
            rule = physical_lowerings[eqn.primitive]
        if rule is None:
            raise NotImplementedError(
                f"MLIR translation rule for primitive '{eqn.primitive.name}' not found for "
                "platform cpu")
        rule_ctx = LoweringRuleContext(
            ctx, b, eqn.primitive, tuple(a.aval for a in eqn.invars),
            tuple(v.aval for v in eqn.outvars))
        outs = rule(rule_ctx, *[read(a) for a in eqn.invars], **eqn.params)
        # justjax's rules give a single-result primitive's value alone; JAX's (which
        # libraries write) give a list of one.
        if not eqn.primitive.multiple_results and not isinstance(outs, (list, tuple)):
            outs = [outs]
        outs = list(outs)
        if len(outs) != len(eqn.outvars):
            raise AssertionError(f"lowering of {eqn.primitive.name} gave {len(outs)} results "
                                 f"for {len(eqn.outvars)} outputs")
        for var, value in zip(eqn.outvars, outs, strict=True):
            expected = aval_to_type(var.aval)
            if value.type != expected:
                raise AssertionError(f"lowering of {eqn.primitive.name} gave {value.type}, "
                                     f"expected {expected}")
            env[var] = value
    return [read(v) for v in jaxpr.outvars]


def lower_closed_jaxpr_inline(ctx: LoweringRuleContext, closed: ClosedJaxpr,
                              args: Sequence[Value]) -> list[Value]:
    """Emits a closed jaxpr's equations in place (its consts as constants)."""
    return jaxpr_subcomp(ctx.module_context, ctx.builder, closed.jaxpr,
                         _consts(ctx.builder, closed), args)


def _consts(b: Builder, closed: ClosedJaxpr) -> list[Value]:
    """A `stablehlo.constant` for each of `closed`'s consts, of its constvar's type."""
    return [constant(b, _const_value(c, aval_to_type(v.aval).dtype))
            for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)]


def _const_value(value: Any, dtype: Any) -> np.ndarray:
    """A closed-over value as NumPy (JAX's error for a global array of a multi-process run
    that this process does not hold whole)."""
    holds = getattr(value, "_holds_value", None)
    if holds is not None and not holds():
        raise RuntimeError(
            "Closing over jax.Array that spans non-addressable (non process local) devices "
            "is not allowed. Please pass such arrays as arguments to the function. Got "
            f"jax.Array: {value.aval.str_short(short_dtypes=False)}")
    return np.asarray(core.physical_value(value), dtype=dtype)


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LoweringRule:
    """A lowering rule that traces `fun(*operands, **params)` (written with lax) on the
    operands' avals and lowers the resulting jaxpr in place, as JAX's `mlir.lower_fun`."""
    from justjax._src.interpreters import staging

    def rule(ctx: LoweringRuleContext, *operands: Value, **params: Any) -> Any:
        def flat(*args: Any) -> list[Any]:
            out = fun(*args, **params)
            return list(out) if multiple_results else [out]

        closed = staging.trace_to_jaxpr(flat, list(ctx.avals_in))
        outs = lower_closed_jaxpr_inline(ctx, closed, operands)
        return outs if multiple_results else outs[0]

    return rule


class _DimArgs:
    """While a function of a shape-polymorphic module is lowered: its leading dimension
    arguments are the current dimension values; afterwards its shape-dependent ops are
    made dynamic (`lowering_poly`)."""

    def __init__(self, ctx: ModuleContext, block: ir.Block) -> None:
        self.ctx = ctx
        self.block = block
        self.values = dict(zip(ctx.dim_vars, block.args, strict=False))

    def __enter__(self) -> None:
        self.ctx.dim_values_stack.append(self.values)

    def __exit__(self, *exc: Any) -> None:
        self.ctx.dim_values_stack.pop()
        if self.ctx.dim_vars and exc[0] is None:
            lowering_poly.make_shapes_dynamic(self.block, self.values, self._add_function)

    def _add_function(self, name: str, block: ir.Block) -> str:
        """Adds `block` (ending in `func.return`) as a private function named `name`
        (made unique); returns the name."""
        fn_name = self.ctx.fresh_function_name(name)
        self.ctx.module.functions.append(
            ir.Function(fn_name, block, list(block.ops[-1].operand_types)))
        return fn_name


def _dim_arg_types(ctx: ModuleContext) -> list[TensorType]:
    return [TensorType((), lowering_poly.dim_dtype())] * len(ctx.dim_vars)


def lower_function(ctx: ModuleContext, name: str, closed: ClosedJaxpr, *,
                   public: bool = False, result_infos: Sequence[str] | None = None,
                   arg_attrs: Sequence[dict[str, Any]] | None = None) -> ir.Function:
    """Lowers `closed` to a function of the module named `name` and adds it (taking the
    dimension values first in a shape-polymorphic module)."""
    dim_types = _dim_arg_types(ctx)
    block = ir.Block([Value(t) for t in dim_types]
                     + [Value(aval_to_type(a)) for a in closed.in_avals])
    if dim_types:
        arg_attrs = lowering_poly.dim_arg_attrs(ctx.dim_vars) + list(
            arg_attrs if arg_attrs is not None else [{}] * len(closed.in_avals))
    b = Builder(block)
    fn = ir.Function(name, block, [aval_to_type(a) for a in closed.out_avals],
                     visibility="public" if public else "private",
                     arg_attrs=list(arg_attrs) if arg_attrs is not None else None,
                     result_attrs=([{"jax.result_info": info} for info in result_infos]
                                   if result_infos is not None else None))
    ctx.module.functions.append(fn)
    with _DimArgs(ctx, block):
        outs = jaxpr_subcomp(ctx, b, closed.jaxpr, _consts(b, closed),
                             block.args[len(dim_types):])
        b.ret(outs, "func.return")
    return fn


def _call_private(ctx: LoweringRuleContext, key: tuple, name: str,
                  in_types: Sequence[ir.Type], out_types: Sequence[ir.Type],
                  emit_body: Callable[[Builder, list[Value]], Sequence[Value]],
                  args: Sequence[Value]) -> list[Value]:
    """`func.call` of the private function lowered for `key`, lowering it first (named
    `name`, or `name_0`, ... if taken) when the module has none yet."""
    module_ctx = ctx.module_context
    dim_types = _dim_arg_types(module_ctx)
    fn_name = module_ctx.function_names.get(key)
    if fn_name is None:
        fn_name = module_ctx.fresh_function_name(name)
        module_ctx.function_names[key] = fn_name
        block = ir.Block([Value(t) for t in (*dim_types, *in_types)])
        attrs = (lowering_poly.dim_arg_attrs(module_ctx.dim_vars) + [{}] * len(in_types)
                 if dim_types else None)
        module_ctx.module.functions.append(ir.Function(fn_name, block, list(out_types),
                                                       arg_attrs=attrs))
        body = Builder(block)
        with _DimArgs(module_ctx, block):
            body.ret(list(emit_body(body, block.args[len(dim_types):])), "func.return")
    dim_args = [ctx.dim_var_values[v] for v in module_ctx.dim_vars]
    call = ctx.builder.op("func.call", [*dim_args, *args], list(out_types),
                          {"callee": ir.Symbol(fn_name)})
    return list(call.results)


def call_jaxpr(ctx: LoweringRuleContext, name: str, closed: ClosedJaxpr,
               args: Sequence[Value]) -> list[Value]:
    """`func.call @name(args)` of `closed` lowered as a private function (once per jaxpr
    and name; a different jaxpr of the same name gets `name_0`, ...)."""
    ctx.module_context._lowered_jaxprs.append(closed.jaxpr)

    def emit_body(b: Builder, block_args: list[Value]) -> list[Value]:
        return jaxpr_subcomp(ctx.module_context, b, closed.jaxpr, _consts(b, closed),
                             block_args)

    return _call_private(ctx, (id(closed.jaxpr), name), name,
                         [aval_to_type(a) for a in closed.in_avals],
                         [aval_to_type(a) for a in closed.out_avals], emit_body, args)


def cached_lowering(name: str, rule: LoweringRule, multiple_results: bool
                    ) -> LoweringRule:
    """`rule` emitted once per module (per operand and result types and params) as a private
    function `name` and called, as JAX's `lower_fun(..., inline=False)` and `cache_lowering`
    do (`call @cumsum(%arg0)`)."""
    def cached(ctx: LoweringRuleContext, *operands: Value, **params: Any) -> Any:
        def emit_body(b: Builder, block_args: list[Value]) -> list[Value]:
            outs = rule(ctx.replace(builder=b), *block_args, **params)
            return list(outs) if multiple_results else [outs]

        in_types = tuple(aval_to_type(a) for a in ctx.avals_in)
        out_types = tuple(aval_to_type(a) for a in ctx.avals_out)
        key = (name, in_types, out_types, tuple(sorted(params.items())))
        results = _call_private(ctx, key, name, in_types, out_types, emit_body, operands)
        return results if multiple_results else results[0]

    return cached


_MODULE_NAME = re.compile(r"[^\w.-]")


def module_name(fun_name: str, prefix: str = "jit") -> str:
    """`jit_<name>` (or `<prefix>_<name>`) with characters MLIR symbols cannot hold
    replaced: `jit__lambda`."""
    return f"{prefix}_" + _MODULE_NAME.sub("_", fun_name).rstrip("_")


def lower_jaxpr_to_module(closed: ClosedJaxpr, fun_name: str,
                          result_infos: Sequence[str],
                          arg_attrs: Sequence[dict[str, Any]] | None = None,
                          manual: ManualAxes | None = None,
                          prefix: str = "jit") -> ir.Module:
    """The StableHLO module of a jitted function: `module @jit_<fun_name>` with
    `func.func public @main` computing `closed`, results annotated `jax.result_info`.
    With `manual` (a shard_map's mesh and manual axes) it is the program of one device of
    that mesh, its collectives over those axes StableHLO collectives."""
    partitions = manual.mesh.device_count if manual is not None else 1
    module = ir.Module(module_name(fun_name, prefix), attributes={
        "mhlo.num_partitions": ir.IntegerAttr(partitions, "i32"),
        "mhlo.num_replicas": ir.IntegerAttr(1, "i32")})
    ctx = ModuleContext(module, manual=manual,
                        dim_vars=tuple(all_dim_vars(a.shape for a in closed.in_avals)))
    # main comes first; private functions follow in the order they were first called.
    lower_function(ctx, "main", closed, public=True, result_infos=result_infos,
                   arg_attrs=arg_attrs)
    return module
