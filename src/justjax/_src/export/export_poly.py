"""The calling convention of a shape-polymorphic export (JAX's `_wrap_main_func`).

Lowering for symbolic shapes gives a `main` that takes the dimension values first
(`%arg0: tensor<i32> {jax.global_constant = "b"}`). The exported module's `main` takes the
arrays only: `wrap_main` renames the lowered one `_wrapped_jax_export_main` and adds a new
`main` that reads each dimension variable off an argument's shape
(`stablehlo.get_dimension_size`, solved as in `shape_poly.solve_plan`), asserts that it is
at least 1 (`stablehlo.custom_call @shape_assertion`, with JAX's message), and calls the
wrapped function.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.core.avals import ShapedArray
from justjax._src.export import shape_poly
from justjax._src.hlo import ir
from justjax._src.hlo.ir import TensorType, Value
from justjax._src.interpreters import lowering_poly

WRAPPED_MAIN = "_wrapped_jax_export_main"


def _assertion_message(in_avals: Sequence[ShapedArray], in_tree: Any,
                       steps: Sequence[shape_poly.SolveStep], upto: int) -> str:
    """JAX's message for `var >= 1` failing, with `{i}` standing for the i-th size."""
    obtained = "".join(
        f"'{s.var}' = {{{i}}} from specification '{s.spec}' for dimension "
        f"{shape_poly.dim_descriptor(in_tree, s.arg_idx, s.dim_idx)} (= {{{i}}}), "
        for i, s in enumerate(steps[:upto + 1]))
    return (f"Input shapes do not match the polymorphic shapes specification. Expected value "
            f">= 1 for dimension variable '{steps[upto].var}'. Using the following polymorphic "
            f"shapes specifications: {shape_poly.specs_text(in_avals, in_tree)}. Obtained "
            f"dimension variables: {obtained}. {shape_poly.SHAPE_ERRORS_HELP}")


def wrap_main(module: ir.Module, in_avals: Sequence[ShapedArray], in_tree: Any,
              steps: Sequence[shape_poly.SolveStep]) -> None:
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
    dim_vars = shape_poly.all_dim_vars(a.shape for a in in_avals)
    array_types = inner.arg_types[len(dim_vars):]
    block = ir.Block([Value(t) for t in array_types])
    emit = lowering_poly.DimEmitter({})
    dtype = lowering_poly.dim_dtype()
    one = emit.const(1)  # shared by the assertions, first as in JAX's text
    sizes = []
    for i, step in enumerate(steps):
        size = emit.one("stablehlo.get_dimension_size", [block.args[step.arg_idx]],
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
        at_least_one = emit.compare(value, one, "GE")
        emit.ops.append(ir.Op(
            "stablehlo.custom_call", [at_least_one, *sizes], [],
            {"call_target_name": "shape_assertion", "api_version": ir.IntegerAttr(2, "i32"),
             "error_message": _assertion_message(in_avals, in_tree, steps, i),
             "has_side_effect": True}))
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
