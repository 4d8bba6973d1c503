"""`lax.composite`: a function kept as one named op, `stablehlo.composite`, whose
decomposition (the function itself, lowered as a private function) says what it computes.

`composite_p` carries the decomposition's closed jaxpr, the name, the version and the
keyword arguments (static attributes). Backends run the decomposition: the compiler's call
inliner inlines a composite like a call, and the reference backend runs its decomposition
function when given unoptimized IR. As in JAX, it has no derivative or batching rules
(wrap it in `custom_jvp`/`custom_vjp` for derivatives).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from justjax._src import errors
from justjax._src.compilation import dispatch
from justjax._src.pytrees import tree_util
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, lowering, staging
from justjax._src.interpreters import partial_eval as pe

__all__ = ["composite"]

# MLIR's rule for a composite's name (a namespaced op name).
_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")


class HashableArray:
    """A NumPy array attribute as a hashable equation param (compared by value)."""

    def __init__(self, value: np.ndarray) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"HashableArray({self.value!r})"

    def __hash__(self) -> int:
        return hash((self.value.shape, self.value.dtype, self.value.tobytes()))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, HashableArray) and self.value.dtype == other.value.dtype
                and np.array_equal(self.value, other.value))


composite_p = Primitive("composite", multiple_results=True)


def _abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    return list(jaxpr.out_avals)


composite_p.def_abstract_eval(_abstract_eval)
dispatch.def_backend_impl(composite_p)


def _jvp(*_: Any, **__: Any) -> Any:
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to "
                     "add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _transpose(*_: Any, **__: Any) -> Any:
    raise ValueError("Transpose rule for composite not implemented. You can use"
                     "`jax.custom_jvp` or `jax.custom_vjp` to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


ad.primitive_jvps[composite_p] = _jvp
ad.primitive_transposes[composite_p] = _transpose


def _attribute_value(value: Any) -> Any:
    """A composite attribute in the IR's attribute kinds (Python floats as f64, as MLIR
    builds them from Python)."""
    if isinstance(value, HashableArray):
        return value.value
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, (tuple, list)):
        return ir.ArrayAttr(tuple(_attribute_value(v) for v in value))
    return value


def _lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value, name: str,
              attributes: tuple, version: int, jaxpr: ClosedJaxpr) -> list[ir.Value]:
    """`stablehlo.composite "name" %args {composite_attributes = {...}, decomposition =
    @name, version = N : i32}`, the decomposition a private function named after it."""
    if not _NAME.match(name):
        raise ValueError(
            "Cannot lower jaxpr with verifier errors:\n\tname must be a valid namespaced op "
            "name, i.e. it must match the following regular expression: "
            f"{_NAME.pattern} e.g. \"my_namespace.my_op\"")
    module_ctx = ctx.module_context
    fn = lowering.lower_function(module_ctx, module_ctx.fresh_function_name(name), jaxpr)
    values = {}
    for key, leaves, treedef in attributes:
        value = tree_util.tree_unflatten(treedef, list(leaves))
        if value is not None:
            values[key] = _attribute_value(value)
    attrs: dict[str, Any] = {"name": name, "decomposition": ir.Symbol(fn.name)}
    if values:
        attrs["composite_attributes"] = values
    if version:
        attrs["version"] = ir.IntegerAttr(int(version), "i32")
    op = ctx.builder.op("stablehlo.composite", list(args),
                        [lowering.aval_to_type(a) for a in ctx.avals_out], attrs)
    return list(op.results)


lowering.register_lowering(composite_p, _lowering)


def _attributes(kwargs: dict[str, Any]) -> tuple:
    """The keyword arguments as hashable params: (name, leaves, treedef) each."""
    found = []
    for key, value in kwargs.items():
        leaves, treedef = tree_util.tree_flatten(value)
        leaves = tuple(HashableArray(v) if isinstance(v, np.ndarray) else v for v in leaves)
        found.append((key, leaves, treedef))
    return tuple(found)


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """`decomposition` as one named op (`lax.composite`, StableHLO `composite`).

    Args:
      decomposition: the function; its positional arguments are arrays, its keyword
        arguments static attributes (Python scalars, strings, tuples, NumPy arrays).
      name: the op's namespaced name (`"my.op"`).
      version: the op's version.
    Returns:
      A function with `decomposition`'s signature that binds `composite`.
    """
    @functools.wraps(decomposition)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(v, core.Tracer) for v in kwargs.values()):
            raise errors.UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite op "
                f"'{name}'. This means that the decomposition function closes over a value "
                "that is involved in a JAX transformation. Any values that aren't explicitly "
                "known at compile time must be explicitly passed as arguments to the "
                "composite.\n\nNote: If you are passing jax arrays as attributes, use numpy "
                "arrays instead.")
        flat_args, in_tree = tree_util.tree_flatten(args)
        out_trees: list[Any] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            out, tree = tree_util.tree_flatten(
                decomposition(*tree_util.tree_unflatten(in_tree, leaves), **kwargs))
            out_trees.append(tree)
            return out

        closed = staging.trace_to_jaxpr(flat_fun, [core.typeof(x) for x in flat_args],
                                        staging.debug_info("composite", decomposition))
        consts = list(closed.consts)
        jaxpr = ClosedJaxpr(pe.convert_constvars_jaxpr(closed.jaxpr), [])
        outs = composite_p.bind(*consts, *flat_args, name=name,
                                attributes=_attributes(kwargs), version=version, jaxpr=jaxpr)
        return tree_util.tree_unflatten(out_trees[-1], outs)

    return wrapped
