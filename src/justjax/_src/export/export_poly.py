"""The calling convention of a shape-polymorphic export (JAX's `_wrap_main_func`).

Lowering for symbolic shapes gives a `main` that takes the dimension values first
(`%arg0: tensor<i32> {jax.global_constant = "b"}`). The exported module's `main` takes the
arrays only: `wrap_main` renames the lowered one `_wrapped_jax_export_main` and adds a new
`main` that reads each dimension variable off an argument's shape
(`stablehlo.get_dimension_size`, solved as in `symbolic_specs.solve_plan`), asserts that each is
at least 1 and that the scope's constraints hold (`stablehlo.custom_call @shape_assertion`,
with JAX's messages), and calls the wrapped function.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.core.avals import ShapedArray
from justjax._src.export import symbolic_specs
from justjax._src.hlo import ir
from justjax._src.hlo.ir import TensorType, Value
from justjax._src.interpreters import lowering_poly

WRAPPED_MAIN = "_wrapped_jax_export_main"


def _obtained(in_tree: Any, steps: Sequence[symbolic_specs.SolveStep], first: int) -> str:
    """JAX's "Obtained dimension variables" text, the i-th size standing as `{first + i}`."""
    return "".join(
        f"'{s.var}' = {{{first + i}}} from specification '{s.spec}' for dimension "
        f"{symbolic_specs.dim_descriptor(in_tree, s.arg_idx, s.dim_idx)} (= {{{first + i}}}), "
        for i, s in enumerate(steps))


def _message(what: str, in_avals: Sequence[ShapedArray], in_tree: Any, obtained: str) -> str:
    return (f"Input shapes do not match the {what} Using the following polymorphic shapes "
            f"specifications: {symbolic_specs.specs_text(in_avals, in_tree)}. Obtained dimension "
            f"variables: {obtained}. {symbolic_specs.SHAPE_ERRORS_HELP}")


def _assertion(emit: lowering_poly.DimEmitter, predicate: Value, values: Sequence[Value],
               message: str) -> None:
    """`stablehlo.custom_call @shape_assertion(predicate, values...)`: refinement raises
    `message` (its `{i}` the i-th value) if the predicate is false."""
    emit.ops.append(ir.Op(
        "stablehlo.custom_call", [predicate, *values], [],
        {"call_target_name": "shape_assertion", "api_version": ir.IntegerAttr(2, "i32"),
         "error_message": message, "has_side_effect": True}))


def _dimension_values(emit: lowering_poly.DimEmitter, args: Sequence[Value],
                      steps: Sequence[symbolic_specs.SolveStep]) -> list[Value]:
    """Emits the dimension variables' values read off the arguments' shapes (into
    `emit.dim_values`); returns the sizes read."""
    dtype = lowering_poly.dim_dtype()
    sizes = []
    for step in steps:
        size = emit.one("stablehlo.get_dimension_size", [args[step.arg_idx]],
                        TensorType((), np.int32), dimension=step.dim_idx)
        if dtype != np.int32:
            size = emit.one("stablehlo.convert", [size], TensorType((), dtype))
        sizes.append(size)
        value = size
        if step.rest != 0:
            value = emit.one("stablehlo.subtract", [value, emit.dim(step.rest)], value.type)
        if step.coeff != 1:
            value = emit.one("stablehlo.divide", [value, emit.const(step.coeff)], value.type)
        emit.dim_values[step.var] = value
    return sizes


def _emit_assertions(emit: lowering_poly.DimEmitter, in_avals: Sequence[ShapedArray],
                     in_tree: Any, steps: Sequence[symbolic_specs.SolveStep],
                     sizes: Sequence[Value]) -> None:
    """JAX's assertions: each variable is at least 1, and the scope's constraints hold."""
    one = emit.const(1)
    for i, step in enumerate(steps):
        _assertion(emit, emit.compare(emit.dim_values[step.var], one, "GE"), sizes[:i + 1],
                   _message("polymorphic shapes specification. Expected value >= 1 for "
                            f"dimension variable '{step.var}'.", in_avals, in_tree,
                            _obtained(in_tree, steps[:i + 1], 0)))
    scope = next(d.scope for a in in_avals for d in a.shape if symbolic_specs.is_symbolic_dim(d))
    for text, diff, op in scope._checks:
        value = emit.dim(diff)
        predicate = emit.compare(value, emit.const(0), "GE" if op == ">=" else "EQ")
        relation = "greater or equal to" if op == ">=" else "equal to"
        _assertion(emit, predicate, [value, *sizes],
                   _message(f"symbolic shape constraint {text}. Expected '{diff}' to be "
                            f"{relation} 0, but found {{0}}. ", in_avals, in_tree,
                            _obtained(in_tree, steps, 1)))


def wrap_main(module: ir.Module, in_avals: Sequence[ShapedArray], in_tree: Any,
              steps: Sequence[symbolic_specs.SolveStep]) -> None:
    """Gives `module` a `main` taking only the array arguments (see the module docstring)."""
    inner = module.function("main")
    # A unique name, as MLIR's symbol table gives (a merged export may have the plain one).
    taken = {fn.name for fn in module.functions}
    inner.name = WRAPPED_MAIN
    suffix = 0
    while inner.name in taken:
        inner.name = f"{WRAPPED_MAIN}_{suffix}"
        suffix += 1
    inner.visibility = "private"
    dim_vars = symbolic_specs.all_dim_vars(a.shape for a in in_avals)
    block = ir.Block([Value(t) for t in inner.arg_types[len(dim_vars):]])
    emit = lowering_poly.DimEmitter({})
    sizes = _dimension_values(emit, block.args, steps)
    _emit_assertions(emit, in_avals, in_tree, steps, sizes)
    block.ops.extend(emit.ops)
    builder = ir.Builder(block)
    args = [emit.dim_values[v] for v in dim_vars] + list(block.args)
    call = builder.op("func.call", args, list(inner.result_types),
                      {"callee": ir.Symbol(inner.name)})
    builder.ret(list(call.results), "func.return")
    outer = ir.Function("main", block, list(inner.result_types), "public", None,
                        inner.result_attrs)
    module.functions.insert(0, outer)


PLATFORM_INDEX = "_platform_index"


def add_platform_index(module: ir.Module) -> None:
    """JAX's multi-platform calling convention: `main` (and the wrapped main it calls, in a
    polymorphic module) takes the index of the platform it runs on as a first
    `tensor<i32> {jax.global_constant = "_platform_index"}` argument. justjax lowers the
    same program for every platform, so the index is passed on and otherwise unused."""
    main = module.function("main")
    index = _prepend_index_arg(main)
    for op in main.body.ops:
        callee = op.attributes.get("callee")
        if op.opcode == "func.call" and isinstance(callee, ir.Symbol) and \
                callee.name.startswith(WRAPPED_MAIN):
            _prepend_index_arg(module.function(callee.name))
            op.operands.insert(0, index)


def _prepend_index_arg(fn: ir.Function) -> Value:
    index = Value(TensorType((), np.int32))
    attrs = fn.arg_attrs if fn.arg_attrs is not None else [{} for _ in fn.args]
    fn.body.args.insert(0, index)
    fn.arg_attrs = [{"jax.global_constant": PLATFORM_INDEX}, *attrs]
    return index
