"""What the control-flow primitives share: tracing a user's pytree function to a jaxpr whose
closed-over values become leading operands, the carry checks with JAX's messages, and the
promotion of weakly typed initial carries.

Every control-flow primitive holds closed jaxprs without constants (`ClosedJaxpr(jaxpr, ())`):
the values a body closes over (concrete arrays, tracers of enclosing transformations) are passed
as the primitive's leading operands instead, as in JAX, so every transformation sees them.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from justjax._src.pytrees import tree_errors
from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from justjax._src.interpreters import partial_eval as pe
from justjax._src.interpreters import staging
from justjax._src.lax import structural


@dataclass(frozen=True)
class TracedFun:
    """A user's function traced for a control-flow primitive.

    `jaxpr` takes the closed-over values first (`consts`, passed as operands) and then the
    flattened arguments; `out_tree` is the structure of what the function returned.
    """

    jaxpr: ClosedJaxpr
    consts: list[Any]
    out_tree: Any

    @property
    def out_avals(self) -> list[ShapedArray]:
        return list(self.jaxpr.out_avals)


def trace_fun(fun: Callable, in_tree: Any, in_avals: Sequence[ShapedArray],
              traced_for: str) -> TracedFun:
    """Traces `fun(*tree_unflatten(in_tree, leaves))` on leaves of the given avals.

    Args:
      fun: the user's function (a body, a branch, a loop condition).
      in_tree: the structure of its positional arguments, a tuple.
      in_avals: one abstract value per leaf.
      traced_for: what the trace is for, as errors name it (`"scan"`, `"cond"`, ...).
    Returns:
      The traced function: a closed jaxpr without constants whose leading invars stand for
      the values `fun` closes over, those values, and the output structure.
    """
    out_trees: list[Any] = []

    def flat_fun(*leaves: Any) -> list[Any]:
        args = tree_util.tree_unflatten(in_tree, leaves)
        out = fun(*args)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return [_as_jax_value(x, fun, traced_for) for x in out_leaves]

    debug = getattr(fun, "_justjax_debug_info", None)
    if debug is None:
        arg_names = staging.leaf_arg_names(
            fun, tree_util.tree_unflatten(in_tree, list(in_avals)), {}, frozenset())
        debug = staging.debug_info(traced_for, fun, arg_names)
    jaxpr, consts = pe.trace_to_subjaxpr(flat_fun, list(in_avals), debug)
    return TracedFun(pe.close_jaxpr(jaxpr), consts, out_trees[0])


def traced_as(wrapper: Callable, fun: Callable, traced_for: str, arg_names: Sequence[str]
              ) -> Callable:
    """Makes errors raised while tracing `wrapper` (a library function's adapter around the
    user's `fun`, such as fori_loop's scan body) name `fun`, its source and `traced_for`, and
    the wrapper's flattened arguments `arg_names`, as JAX does."""
    wrapper._justjax_debug_info = staging.debug_info(traced_for, fun, tuple(arg_names))
    return wrapper


def _as_jax_value(x: Any, fun: Callable, traced_for: str) -> Any:
    if isinstance(x, core.Tracer) or core.valid_jaxtype(x):
        return x
    source = staging.debug_info(traced_for, fun).func_src_info
    raise TypeError(f"function {source} traced for {traced_for} returned a "
                    f"value of type {type(x)}, which is not a valid JAX type")


def forwarded_inputs(jaxpr: Jaxpr) -> list[int | None]:
    """For each output of `jaxpr`, the index of the input it returns unchanged, or None (a
    loop carry the body passes through is a constant, as JAX binds it)."""
    index = {v: i for i, v in enumerate(jaxpr.invars)}
    return [None if isinstance(v, Literal) else index.get(v) for v in jaxpr.outvars]


def abstractify(x: Any) -> ShapedArray:
    """The abstract value of an operand leaf (a tracer, an Array, a NumPy or Python value)."""
    return core.get_aval(x)


# ---------------------------------------------------------------------------------------------
# Carry checks.

def _component_namer(body_fun: Callable) -> Callable[[tuple], str]:
    try:
        params = list(inspect.signature(body_fun).parameters)
    except (ValueError, TypeError):
        params = []
    carry_name = params[0] if params else None

    def component(path: tuple) -> str:
        if carry_name:
            return (f"the input carry component {carry_name}{tree_util.keystr(path)}" if path
                    else f"the input carry {carry_name}")
        return (f"the input carry at path {tree_util.keystr(path)}" if path
                else "the input carry")

    return component


def mismatch_extra(a: ShapedArray, b: ShapedArray) -> str:
    """`, so the dtypes do not match` (and/or shapes) for two avals that differ, as JAX says."""
    mismatches = []
    if a.dtype != b.dtype:
        mismatches.append("the dtypes do not match")
    if a.shape != b.shape:
        mismatches.append("the shapes do not match")
    if not mismatches:
        return ""
    return ", so " + " and ".join(mismatches)


def _list_differences(diffs: list[str]) -> str:
    if len(diffs) == 1:
        return diffs[0][0].upper() + diffs[0][1:] + ".\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Shapes, dtypes and shardings over Explicit mesh axes agree (weak types may differ),
    as JAX's `core.typematch`; `b` unsplit where `a` is split is let through (a primitive
    without a sharding rule gives an unsplit type; `a`'s is kept)."""
    return (a.shape == b.shape and a.dtype == b.dtype
            and (b._sharding is None or a._sharding == b._sharding))


def check_carry_type(name: str, body_fun: Callable, in_tree: Any, in_avals: Sequence[ShapedArray],
                     out_tree: Any, out_avals: Sequence[ShapedArray]) -> None:
    """Raises JAX's `TypeError` when a loop body's carry output differs from its carry input
    in pytree structure, shape or dtype, naming each differing component by its path.

    Args:
      name: the loop as messages name it (`"scan body"`, `"while_loop body"`, ...).
      body_fun: the user's body; its first parameter's name names the carry.
      in_tree, in_avals: the carry input's structure and leaf avals.
      out_tree, out_avals: the carry output's.
    """
    component = _component_namer(body_fun)
    if in_tree != out_tree:
        in_carry = tree_util.tree_unflatten(in_tree, list(in_avals))
        try:
            out_carry = tree_util.tree_unflatten(out_tree, list(out_avals))
        except Exception:
            out_carry = None
        if out_carry is None:
            differences = (f"the input tree structure is:\n{in_tree}\n"
                           f"the output tree structure is:\n{out_tree}\n")
        else:
            diffs = [f"{component(path)} is a {thing1} but the corresponding component of the "
                     f"carry output is a {thing2}, so {explanation}"
                     for path, thing1, thing2, explanation
                     in tree_errors.equality_errors(in_carry, out_carry)]
            if not diffs:
                return
            differences = _list_differences(diffs)
        raise TypeError(f"{name} function carry input and carry output must have the same "
                        "pytree structure, but they differ:\n\n"
                        f"{differences}\n"
                        "Revise the function so that the carry output has the same pytree "
                        "structure as the carry input.")
    if all(typematch(a, b) for a, b in zip(in_avals, out_avals, strict=True)):
        return
    paths = [path for path, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(in_tree, list(range(len(in_avals)))))[0]]
    diffs = [f"{component(path)} has type {a.str_short(short_dtypes=False)} but the "
             f"corresponding output carry component has type "
             f"{b.str_short(short_dtypes=False)}{mismatch_extra(a, b)}"
             for path, a, b in zip(paths, in_avals, out_avals, strict=True)
             if not typematch(a, b)]
    raise TypeError(f"{name} function carry input and carry output must have equal types, "
                    "but they differ:\n\n"
                    f"{_list_differences(diffs)}\n"
                    "Revise the function so that all output types match the corresponding "
                    "input types.")


def promote_weak_carries(values: list[Any], in_avals: Sequence[ShapedArray],
                         out_avals: Sequence[ShapedArray]) -> tuple[list[Any], bool]:
    """Converts weakly typed initial carries whose body output has another dtype to the joined
    dtype (`fori_loop(0, n, f, 0)` with a float body gives a float carry), as JAX does before
    tracing the body again.

    Returns the values and whether any changed (the caller retraces if so).
    """
    if not (len(values) == len(in_avals) == len(out_avals)):
        return values, False
    changed = False
    values = list(values)
    for i, (a, b) in enumerate(zip(in_avals, out_avals, strict=True)):
        if a.weak_type and not typematch(a, b):
            new_dtype = dtypes.result_type(values[i], b.dtype)
            values[i] = structural.convert_element_type(values[i], new_dtype)
            changed = True
    return values, changed
