"""Selection primitives: `select_n` (with `select`) picks each element from one of several
cases, `clamp` bounds each element between two others. jax.numpy's `where`, `select` and
`clip` (numpy/selection.py) bind them.

Their batching rules broadcast with `structural`; the elementwise comparisons their AD rules
need are imported lazily, as lax modules import one way (structural -> selection ->
elementwise).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.hlo.ir import Value
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import sharding_rules, utils
from justjax._src.lax.structural import broadcast, broadcast_in_dim
from justjax._src.lax.utils import standard_primitive
from justjax._src.runtime.array import from_numpy

__all__ = ["clamp", "clamp_p", "select", "select_n", "select_n_p"]


# -- select_n ----------------------------------------------------------------------------------

def _select_n_shape(which: ShapedArray, *cases: ShapedArray) -> tuple[int, ...]:
    if not cases:
        raise TypeError("select_n must have at least one case")
    if any(c.shape != cases[0].shape for c in cases[1:]):
        raise TypeError("select cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    return cases[0].shape


def _select_n_dtype(which: ShapedArray, *cases: ShapedArray) -> np.dtype:
    if any(c.dtype != cases[0].dtype for c in cases[1:]):
        raise TypeError("lax.select_n requires arguments to have the same dtypes, got "
                        f"{', '.join(dtypes.dtype_name(c.dtype) for c in cases)}. (Tip: "
                        "jnp.where is a similar function that does automatic type promotion "
                        "on inputs).")
    if which.dtype != dtypes.bool_ and not dtypes.is_int(which.dtype):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype}.")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    return cases[0].dtype




select_n_p = standard_primitive("select_n", _select_n_shape, _select_n_dtype,
                                lambda which, *cases: all(c.weak_type for c in cases),
                                sharding_rule=sharding_rules.select_cases)
dispatch.def_backend_impl(select_n_p)
core.joins_varying.add(select_n_p)


def select_n(which: Any, *cases: Any) -> Any:
    """`cases[which]` elementwise; `which` is bool (two cases) or an integer (clamped to the
    valid case indices)."""
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """`on_true` where `pred` else `on_false`."""
    return select_n_p.bind(pred, on_false, on_true)


def _zeros_like(x: Any) -> Any:
    """Zeros of x's shape, dtype and weak type, as `lax.full_like(x, 0)` stages them: a
    scalar literal, broadcast when x is not a scalar."""
    aval = core.get_aval(x)
    zero = from_numpy(np.zeros((), aval.dtype), ShapedArray((), aval.dtype, aval.weak_type))
    if not aval.shape:
        return zero
    return broadcast_in_dim(zero, aval.shape, ())


def _select_n_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    case_tangents = tangents[1:]
    out = select_n(which, *cases)
    if all(type(t) is ad.Zero for t in case_tangents):
        return out, ad.Zero(case_tangents[0].aval)
    # Built even when no case tangent is zero, as JAX does (it shows up in jaxprs).
    zeros = _zeros_like(next(t for t in case_tangents if type(t) is not ad.Zero))
    case_tangents = [zeros if type(t) is ad.Zero else t for t in case_tangents]
    return out, select_n(which, *case_tangents)


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    """Each linear case gets the cotangent where it was selected and zero elsewhere; the
    predicate is not differentiable."""
    from justjax._src.lax import elementwise  # kept lazy: elementwise may need this module
    if ad.is_undefined_primal(which):
        raise ValueError("select_n transpose: the predicate cannot be a linear argument")
    if type(ct) is ad.Zero:
        return [None] + [ad.Zero(c.aval) if ad.is_undefined_primal(c) else None for c in cases]
    zeros = _zeros_like(ct)
    which_dtype = core.get_aval(which).dtype
    if which_dtype == dtypes.bool_ and len(cases) == 2:
        on_false, on_true = cases
        return [None,
                select(which, zeros, ct) if ad.is_undefined_primal(on_false) else None,
                select(which, ct, zeros) if ad.is_undefined_primal(on_true) else None]
    if len(cases) == 1:
        return [None, ct if ad.is_undefined_primal(cases[0]) else None]
    return [None] + [
        select(elementwise.eq(which, np.array(i, which_dtype)), ct, zeros)
        if ad.is_undefined_primal(case) else None
        for i, case in enumerate(cases)]


ad.primitive_jvps[select_n_p] = _select_n_jvp
ad.primitive_transposes[select_n_p] = _select_n_transpose


def _select_n_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                         dims: Sequence[int | None]) -> tuple[Any, int]:
    """JAX's cases: operands batched alike (a per-example scalar `which` broadcast along
    the batch axis), an unmapped scalar `which` with batched cases (kept where it is),
    otherwise everything batched at the front."""
    which, *cases = vals
    which_bdim, *case_bdims = dims
    size = axis_data.size
    if all(d == which_bdim for d in case_bdims):
        if np.shape(which) != np.shape(cases[0]):
            # The examples had a scalar `which`: it is now the batch axis alone.
            which = broadcast_in_dim(which, np.shape(cases[0]), (which_bdim,))
        return select_n(which, *cases), which_bdim
    if np.ndim(which) == 0 and all(d is not None for d in case_bdims):
        first = case_bdims[0]
        if all(d == first for d in case_bdims[1:]):
            return select_n(which, *cases), first
        if all(np.shape(c) == np.shape(cases[0]) for c in cases[1:]):
            others = [batching.moveaxis(c, d, first)
                      for c, d in zip(cases[1:], case_bdims[1:], strict=True)]
            return select_n(which, cases[0], *others), first
    if np.shape(which):
        which = batching.bdim_at_front(which, which_bdim, size)
    if any(np.shape(c) for c in cases):
        cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, case_bdims, strict=True)]
    case_shape = np.shape(cases[0])
    if 0 < np.ndim(which) < len(case_shape):
        which = broadcast_in_dim(which, case_shape, (0,))
    if np.ndim(which) > len(case_shape):
        # Unmapped scalar cases with a batched `which`.
        cases = [broadcast_in_dim(c, np.shape(which), ()) for c in cases]
    return select_n(which, *cases), 0


batching.primitive_batchers[select_n_p] = _select_n_batch_rule


def _select_n_lower(ctx: LoweringRuleContext, which: Value, *cases: Value) -> Value:
    """`stablehlo.select` for a bool `which`; an integer `which` picks among the cases by a
    binary tree of `which < k` selects, as JAX lowers it."""
    b = ctx.builder
    which_aval = ctx.avals_in[0]
    if len(cases) == 1:
        return cases[0]
    if which_aval.dtype == dtypes.bool_:
        return b.one("stablehlo.select", [which, cases[1], cases[0]], cases[0].type)

    def pick(offset: int, chosen: Sequence[Value]) -> Value:
        if len(chosen) == 1:
            return chosen[0]
        mid = len(chosen) // 2
        bound = lowering.constant(b, offset + mid, which_aval.dtype)
        bound = lowering.broadcast_in_dim(b, bound, which_aval.shape, ())
        below = lowering.compare(b, which, bound, "LT")
        return b.one("stablehlo.select", [below, pick(offset, chosen[:mid]),
                                          pick(offset + mid, chosen[mid:])], chosen[0].type)

    return pick(0, cases)


lowering.register_lowering(select_n_p, _select_n_lower)


# -- clamp -------------------------------------------------------------------------------------

def _clamp_shape(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> tuple[int, ...]:
    for bound, name in ((lo, "min"), (hi, "max")):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == "
                            f"(), got {bound.shape}.")
    return x.shape


def _clamp_dtype(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> np.dtype:
    utils.check_dtype("clamp", x, utils.INT + utils.FLOAT)
    utils.check_same_dtypes("clamp", lo, x, hi)
    return x.dtype


# Weakly typed only when all three are (JAX's default rule).
clamp_p = standard_primitive("clamp", _clamp_shape, _clamp_dtype,
                             sharding_rule=sharding_rules.same_as(1))
dispatch.def_backend_impl(clamp_p)
core.joins_varying.add(clamp_p)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """`min(max(x, min), max)` elementwise (StableHLO `clamp`)."""
    return clamp_p.bind(min, x, max)


# JAX's conventions at the bounds: the operand's tangent flows only strictly inside
# (min, max); the lower bound's only where it is strictly above x (and below max); the upper
# bound's only where it is strictly below x. At x == min or x == max no tangent flows.
def _clamp_jvp_min(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    from justjax._src.lax import elementwise as ew
    return select(ew.bitwise_and(ew.gt(lo, x), ew.lt(lo, hi)), g, _zeros_like(x))


def _clamp_jvp_operand(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    from justjax._src.lax import elementwise as ew
    return select(ew.bitwise_and(ew.gt(x, lo), ew.lt(x, hi)), g, _zeros_like(x))


def _clamp_jvp_max(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    from justjax._src.lax import elementwise as ew
    return select(ew.lt(hi, x), g, _zeros_like(x))


ad.defjvp(clamp_p, _clamp_jvp_min, _clamp_jvp_operand, _clamp_jvp_max)


def _clamp_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                      dims: Sequence[int | None]) -> tuple[Any, int | None]:
    """Bounds batched like the operand (or unmapped scalars) pass through; otherwise the
    batch axes go to the front and scalar bounds are broadcast as JAX does."""
    lo, x, hi = vals
    lo_bdim, x_bdim, hi_bdim = dims
    size = axis_data.size
    if lo_bdim == x_bdim == hi_bdim:
        if np.shape(lo) == np.shape(x) == np.shape(hi):
            return clamp_p.bind(lo, x, hi), x_bdim
        if np.ndim(lo) == np.ndim(hi) == 0:
            return clamp_p.bind(lo, x, hi), x_bdim
        if np.ndim(lo) == np.ndim(hi) == 1:
            # The examples had scalar bounds and operand: broadcast the bounds to x.
            lo = broadcast_in_dim(lo, np.shape(x), (lo_bdim,))
            hi = broadcast_in_dim(hi, np.shape(x), (hi_bdim,))
            return clamp_p.bind(lo, x, hi), x_bdim
    elif np.ndim(lo) == 0 and np.ndim(hi) == 0 and x_bdim is not None:
        return clamp_p.bind(lo, x, hi), x_bdim
    lo = batching.bdim_at_front(lo, lo_bdim, size) if np.shape(lo) else lo
    hi = batching.bdim_at_front(hi, hi_bdim, size) if np.shape(hi) else hi
    x = batching.bdim_at_front(x, x_bdim, size) if np.shape(x) else x
    x_shape = np.shape(x)
    if np.ndim(lo) == 0 and x_shape:
        lo = broadcast(lo, x_shape)
    if np.ndim(hi) == 0 and x_shape:
        hi = broadcast(hi, x_shape)
    # A batched scalar bound ([B]) beside a batched operand ([B, ...]).
    if 0 < np.ndim(lo) < len(x_shape):
        lo = broadcast_in_dim(lo, x_shape, (0,))
    if 0 < np.ndim(hi) < len(x_shape):
        hi = broadcast_in_dim(hi, x_shape, (0,))
    # A scalar operand unmapped beside batched scalar bounds.
    if np.ndim(lo) > len(x_shape):
        x = broadcast(x, np.shape(lo))
    elif np.ndim(hi) > len(x_shape):
        x = broadcast(x, np.shape(hi))
    return clamp_p.bind(lo, x, hi), 0


batching.primitive_batchers[clamp_p] = _clamp_batch_rule
lowering.register_lowering(clamp_p, lowering.elementwise("stablehlo.clamp"))
