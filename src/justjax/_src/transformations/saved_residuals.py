"""What reverse-mode differentiation keeps from the forward pass (`jax.ad_checkpoint.
saved_residuals` and `print_saved_residuals`): the residuals of `vjp(f, *args)`, each with
where it comes from — an argument, a constant, a named value (`checkpoint_name`) or the output
of an operation at the user's line. Checkpoint policies are tuned by reading this list."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from justjax._src import source_info_util
from justjax._src.pytrees import tree_util
from justjax._src.api import make_jaxpr
from justjax._src.transformations.autodiff import vjp
from justjax._src.transformations.checkpoint import name_p
from justjax._src.core import core
from justjax._src.core.jaxpr import Jaxpr, Literal, Var
from justjax._src.interpreters import staging
from justjax._src.lax.elementwise import reduce_precision_p

__all__ = ["print_saved_residuals", "saved_residuals"]


def saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> list[tuple[core.AbstractValue, str]]:
    """The values `vjp(f, *args, **kwargs)` saves for the backward pass.

    Args:
      f: the function to differentiate.
      *args, **kwargs: example arguments (arrays or pytrees of arrays).
    Returns:
      A list of `(aval, description)`: literals and constants first, then arguments in order,
      then operation outputs in the order they are computed.
    """
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))

    def flat_f(*flat: Any) -> Any:
        call_args, call_kwargs = tree_util.tree_unflatten(in_tree, flat)
        return f(*call_args, **call_kwargs)

    closed, shapes = make_jaxpr(lambda *flat: vjp(flat_f, *flat), return_shape=True)(*leaves)
    num_res = len(tree_util.tree_leaves(shapes[1]))
    jaxpr = closed.jaxpr
    residuals = jaxpr.outvars[len(jaxpr.outvars) - num_res:]
    names = staging.leaf_arg_names(f, args, kwargs, frozenset())
    return _describe(jaxpr, residuals, names)


def _describe(jaxpr: Jaxpr, residuals: Sequence[Any], arg_names: Sequence[str]
              ) -> list[tuple[core.AbstractValue, str]]:
    # A reduce_precision a policy inserted is not the producer: look through it.
    through = {e.outvars[0]: e.invars[0] for e in jaxpr.eqns if e.primitive is reduce_precision_p}
    literals = [r for r in residuals if isinstance(r, Literal)]
    res_vars = {through.get(r, r) for r in residuals if isinstance(r, Var)}
    found: list[tuple[core.AbstractValue, str]] = [(r.aval, "from a literal") for r in literals]
    found += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    for i, v in enumerate(jaxpr.invars):
        if v in res_vars:
            name = arg_names[i] if i < len(arg_names) else ""
            where = f"from the argument {name}" if name else f"from the argument at flattened index {i}"
            found.append((v.aval, where))
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if v in res_vars:
                found.append((v.aval, _producer(eqn)))
    return found


def _producer(eqn: Any) -> str:
    where = source_info_util.summarize(eqn.source_info)
    if eqn.primitive is name_p:
        return f"named '{eqn.params['name']}' from {where}"
    if eqn.primitive.name == "jit":
        return f"output of jitted function '{eqn.params['name']}' from {where}"
    return f"output of {eqn.primitive.name} from {where}"


def print_saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> None:
    """Prints `saved_residuals(f, *args, **kwargs)`, one residual a line: `f32[5] output of
    sin from prog.py:7:9 (g)`.

    Args:
      f: the function to differentiate.
      *args, **kwargs: example arguments.
    """
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {where}")
