"""`optimization_barrier_p` and `lax.optimization_barrier`: the identity on a pytree of
arrays that the compiler may not move operations across, fuse through, or deduplicate
(StableHLO `optimization_barrier`, one op with a result per operand).

Its derivative applies the barrier to the primals and, separately, to the (instantiated)
tangents; its transpose puts the barrier on the cotangents; it batches elementwise. The
passes treat the op as opaque (never CSE'd, never fused); both backends run it as the
identity.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from justjax._src.compilation import dispatch
from justjax._src.pytrees import tree_util
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering

__all__ = ["optimization_barrier", "optimization_barrier_p"]

optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


def _abstract_eval(*avals: ShapedArray) -> list[ShapedArray]:
    return list(avals)


optimization_barrier_p.def_abstract_eval(_abstract_eval)
dispatch.def_backend_impl(optimization_barrier_p)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    return (optimization_barrier_p.bind(*primals),
            optimization_barrier_p.bind(*tangents))


def _transpose(cts: Sequence[Any], *args: Any) -> list[Any]:
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    return optimization_barrier_p.bind(*cts)


ad.primitive_jvps[optimization_barrier_p] = _jvp
ad.primitive_transposes[optimization_barrier_p] = _transpose


def _batcher(axis_data: batching.AxisData, vals: Sequence[Any],
             dims: Sequence[int | None]) -> tuple[list[Any], list[int | None]]:
    return optimization_barrier_p.bind(*vals), list(dims)


batching.primitive_batchers[optimization_barrier_p] = _batcher


def _lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value) -> list[ir.Value]:
    """`%0:n = stablehlo.optimization_barrier %a, %b, ...`."""
    op = ctx.builder.op("stablehlo.optimization_barrier", list(args),
                        [lowering.aval_to_type(a) for a in ctx.avals_out])
    return list(op.results)


lowering.register_lowering(optimization_barrier_p, _lowering)


def optimization_barrier(operand: Any, /) -> Any:
    """Keeps the compiler from moving operations across this point (`lax.optimization_barrier`).

    Every output of the barrier that is used has been computed before anything that depends
    on any output of the barrier; the barrier also blocks common-subexpression elimination
    and fusion across it. Outside a compiled function it has no effect.

    Args:
      operand: a pytree of arrays.
    Returns:
      A pytree of the same structure and values (StableHLO `optimization_barrier`).
    """
    leaves, treedef = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(treedef, optimization_barrier_p.bind(*leaves))
