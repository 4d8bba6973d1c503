"""Shape polymorphism for `jax.export`: symbolic shapes, argument specs, and at call time
the dimension values solved from the actual shapes, with JAX's errors.

The expressions themselves (`DimExpr`, `SymbolicScope`) live in `core/shape_poly.py`; the
`dim_as_value` primitive in `lax/dimension_values.py`.
"""
from __future__ import annotations

from typing import Any, Sequence

from justjax._src.pytrees import tree_util
from justjax._src.core.shape_poly import (DimExpr, SymbolicScope, all_dim_vars,
                                          is_symbolic_dim, symbolic_shape)
from justjax._src.lax import dimension_values as _dimension_values  # registers dim_as_value
from justjax._src.compilation.stages import ShapeDtypeStruct
from justjax._src.pytrees.tree_errors import broadcast_prefix
from justjax._src.pytrees.treedef import SequenceKey, keystr

__all__ = ["SymbolicScope", "is_symbolic_dim", "symbolic_shape", "symbolic_args_specs"]

del _dimension_values


def scope_constraints(avals: Sequence[Any]) -> tuple[str, ...]:
    """The constraints of the symbolic scope of `avals`' dimensions (none if static)."""
    for aval in avals:
        for d in aval.shape:
            if isinstance(d, DimExpr):
                return d.scope._constraints_str
    return ()


def symbolic_args_specs(args: Any, shapes_specs: Any, constraints: Sequence[str] = (),
                        scope: SymbolicScope | None = None) -> Any:
    """`ShapeDtypeStruct`s for `args` with the symbolic shapes of `shapes_specs`
    (`jax.export.symbolic_args_specs`).

    Args:
      args: a pytree of arrays (or anything with `shape` and `dtype`).
      shapes_specs: one spec string for all, or a pytree prefix of `args` of specs
        (None: the argument's own shape).
      constraints: constraints of the new scope shared by all the specs.
      scope: the scope to use instead.

    Returns:
      A pytree of `ShapeDtypeStruct`s like `args`.
    """
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    leaves, tree = tree_util.tree_flatten(args)
    if shapes_specs is None or isinstance(shapes_specs, str):
        specs = [shapes_specs] * len(leaves)
    else:
        specs = broadcast_prefix(shapes_specs, args, is_leaf=lambda x: x is None)
    out = []
    for arg, spec in zip(leaves, specs, strict=True):
        shape = symbolic_shape(spec, like=tuple(arg.shape), scope=scope)
        out.append(ShapeDtypeStruct(shape, arg.dtype))
    return tree.unflatten(out)



# ---------------------------------------------------------------------------------------------
# Solving the dimension variables from the shapes of the arguments.

SHAPE_ERRORS_HELP = ("Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
                      "#shape-assertion-errors for more details.")


def args_kwargs_path_to_str(path: tuple) -> str:
    """`args[0]`, `kwargs['y']`: a key path into `(args, kwargs)`, as JAX's messages say."""
    head = "args" if path[0] == SequenceKey(0) else "kwargs"
    return head + keystr(tuple(path[1:]))


def _arg_paths(in_tree: Any) -> list[str]:
    paths = [p for p, _ in tree_util.tree_flatten_with_path(
        in_tree.unflatten([0] * in_tree.num_leaves))[0]]
    return [args_kwargs_path_to_str(p) for p in paths]


def dim_descriptor(in_tree: Any, arg_idx: int, dim_idx: int | None = None) -> str:
    """`args[0]` or `args[0].shape[1]`: where an input is, for messages."""
    text = _arg_paths(in_tree)[arg_idx]
    return text if dim_idx is None else f"{text}.shape[{dim_idx}]"


def specs_text(in_avals: Sequence[Any], in_tree: Any) -> str:
    paths = _arg_paths(in_tree)
    return ",".join(f"{path}.shape = {_shape_text(a.shape)}"
                    for path, a in zip(paths, in_avals, strict=True))


def _shape_text(shape: Sequence[Any]) -> str:
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


class SolveStep:
    """One dimension variable from one input dimension: `var = (size - rest) // coeff`."""

    def __init__(self, var: str, arg_idx: int, dim_idx: int, coeff: int, rest: Any,
                 spec: Any) -> None:
        self.var, self.arg_idx, self.dim_idx = var, arg_idx, dim_idx
        self.coeff, self.rest, self.spec = coeff, rest, spec


def _linear_in(expr: Any, unknown: set[str]) -> tuple[str, int, Any] | None:
    """(var, coeff, rest) when `expr` is `coeff*var + rest` with `var` the only unknown
    variable, appearing once and linearly; None otherwise."""
    if not isinstance(expr, DimExpr):
        return None
    found = None
    rest_terms = []
    for mono, coeff in expr._terms:
        names = set()
        for factor, power in mono:
            if isinstance(factor, str):
                names.add(factor)
            else:
                for arg in factor[1]:
                    if isinstance(arg, DimExpr):
                        names |= arg.variables()
        unknown_here = names & unknown
        if not unknown_here:
            rest_terms.append((mono, coeff))
            continue
        if found is not None or len(mono) != 1 or mono[0][1] != 1 or \
                not isinstance(mono[0][0], str):
            return None
        found = (mono[0][0], coeff)
    if found is None:
        return None
    from justjax._src.core.shape_poly import _make
    return found[0], found[1], _make(dict(rest_terms), expr.scope)


def solve_plan(in_avals: Sequence[Any], in_tree: Any
               ) -> tuple[list[SolveStep], list[tuple[Any, int, int]]]:
    """How to compute every dimension variable of `in_avals` from the input shapes: the
    steps in order, and the remaining (expression, arg, dim) equations to check.

    Raises:
      ValueError: a variable cannot be solved (JAX solves linear univariate equations only).
    """
    equations = [(d, i, j) for i, a in enumerate(in_avals) for j, d in enumerate(a.shape)
                 if isinstance(d, DimExpr)]
    unknown = set(all_dim_vars(a.shape for a in in_avals))
    steps: list[SolveStep] = []
    pending = list(equations)
    progress = True
    while unknown and progress:
        progress = False
        for eq in list(pending):
            solved = _linear_in(eq[0], unknown)
            if solved is None:
                continue
            var, coeff, rest = solved
            steps.append(SolveStep(var, eq[1], eq[2], coeff, rest, eq[0]))
            unknown.discard(var)
            pending.remove(eq)
            progress = True
    if unknown:
        left = [f"'{d}' for dimension size {dim_descriptor(in_tree, i, j)}"
                for d, i, j in pending if isinstance(d, DimExpr) and d.variables() & unknown]
        raise ValueError(
            f"Cannot solve for values of dimension variables {unknown}. We can only solve "
            "linear uni-variate constraints. Using the following polymorphic shapes "
            f"specifications: {specs_text(in_avals, in_tree)}. Unprocessed specifications: "
            f"{', '.join(left)}. Please see https://docs.jax.dev/en/latest/export/"
            "shape_poly.html#dimension-variables-must-be-solvable-from-the-input-shapes "
            "for more details.")
    return steps, pending


def solve_dim_values(in_avals: Sequence[Any], in_tree: Any, shapes: Sequence[Sequence[Any]]
                     ) -> dict[str, Any]:
    """The values of the dimension variables of `in_avals` for arguments of `shapes`, after
    JAX's checks (remainders, consistency, `var >= 1`, the scope's constraints).

    Raises:
      ValueError: the shapes do not fit the specification (JAX's messages).
    """
    steps, checks = solve_plan(in_avals, in_tree)
    env: dict[str, Any] = {}
    obtained: list[str] = []

    def fail(what: str) -> None:
        raise ValueError(
            f"Input shapes do not match the {what} Using the following polymorphic shapes "
            f"specifications: {specs_text(in_avals, in_tree)}. Obtained dimension "
            f"variables: {''.join(obtained)}. {SHAPE_ERRORS_HELP}")

    for step in steps:
        size = shapes[step.arg_idx][step.dim_idx]
        rest = step.rest.evaluate(env) if isinstance(step.rest, DimExpr) else step.rest
        value, remainder = divmod(size - rest, step.coeff)
        if _is_int(remainder) and remainder != 0:
            fail(f"polymorphic shapes specification. Division had remainder {remainder} when "
                 f"computing the value of '{step.var}'.")
        env[step.var] = value
        obtained.append(f"'{step.var}' = {value} from specification '{step.spec}' for "
                        f"dimension {dim_descriptor(in_tree, step.arg_idx, step.dim_idx)} "
                        f"(= {size}), ")
    for step in steps:
        if _is_int(env[step.var]) and env[step.var] < 1:
            fail("polymorphic shapes specification. Expected value >= 1 for dimension "
                 f"variable '{step.var}'.")
    for expr, i, j in checks:
        want = expr.evaluate(env)
        if _is_int(want) and _is_int(shapes[i][j]) and want != shapes[i][j]:
            fail("polymorphic shapes specification. Found inconsistency between dimension "
                 f"size {dim_descriptor(in_tree, i, j)} (= {shapes[i][j]}) and the "
                 f"specification '{expr}' (= {want}).")
    scope = next((d.scope for a in in_avals for d in a.shape if isinstance(d, DimExpr)), None)
    for text, diff, op in (scope._checks if scope is not None else ()):
        value = diff.evaluate(env) if isinstance(diff, DimExpr) else diff
        if not _is_int(value):
            continue
        if (op == ">=" and value < 0) or (op == "==" and value != 0):
            relation = "greater or equal to" if op == ">=" else "equal to"
            fail(f"symbolic shape constraint {text}. Expected '{diff}' to be {relation} 0, "
                 f"but found {value}. ")
    return env


def _is_int(x: Any) -> bool:
    return isinstance(x, int)
