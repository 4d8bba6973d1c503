"""Cumulative reductions (`cumsum`, `cumprod`, `cummax`, `cummin`, `cumlogsumexp`), each
declared with its rules.

They lower as JAX's CPU lowering does, to a `reduce_window` whose window spans the scanned axis.
`cumsum` is linear; the others are differentiated in forward mode through a parallel prefix
scan (JAX's `lax.associative_scan` algorithm), because their lowering has no derivative.
Everything is written with lax operations, so the rules trace at any nesting level.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import (elementwise, reductions, selection, sharding_rules, slicing,
                              structural, windowed)
from justjax._src.lax.utils import standard_primitive

__all__ = [
    "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
    "cumsum_p", "cumprod_p", "cummax_p", "cummin_p", "cumlogsumexp_p",
]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _const(example: Any, value: Any) -> np.ndarray:
    """`value` as a NumPy scalar of `example`'s dtype (a literal once traced)."""
    return np.array(value, dtype=_dtype(example))


# -- associative scans --------------------------------------------------------------------------

Combine = Callable[[list[Any], list[Any]], list[Any]]


def associative_scan(combine: Combine, elems: Sequence[Any], *, axis: int, reverse: bool
                     ) -> list[Any]:
    """Inclusive prefix scan of the flat list `elems` along `axis` with the associative
    `combine(a, b)` (elementwise on lists of arrays): JAX's `lax.associative_scan`.

    Adjacent pairs are combined, the half-size result is scanned recursively (giving the odd
    positions), the even positions are combined from those, and the two are interleaved.
    """
    elems = list(elems)
    if reverse:
        elems = [slicing.rev(e, (axis,)) for e in elems]
    scans = _scan(combine, elems, axis)
    if reverse:
        scans = [slicing.rev(s, (axis,)) for s in scans]
    return scans


def _scan(combine: Combine, elems: list[Any], axis: int) -> list[Any]:
    num_elems = _shape(elems[0])[axis]
    if num_elems < 2:
        return elems
    reduced = combine([slicing.slice_in_dim(e, 0, -1, stride=2, axis=axis) for e in elems],
                      [slicing.slice_in_dim(e, 1, None, stride=2, axis=axis) for e in elems])
    odd = _scan(combine, list(reduced), axis)
    if num_elems % 2 == 0:
        even = combine([slicing.slice_in_dim(e, 0, -1, axis=axis) for e in odd],
                       [slicing.slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
    else:
        even = combine(odd, [slicing.slice_in_dim(e, 2, None, stride=2, axis=axis)
                             for e in elems])
    # The scan starts with the first element itself. Each step runs over the whole list
    # before the next, so (value, tangent) lists stage their equations in the order JAX's
    # forward mode gives.
    firsts = [slicing.slice_in_dim(e, 0, 1, axis=axis) for e in elems]
    even = [structural.concatenate([first, r], axis)
            for first, r in zip(firsts, even, strict=True)]
    return _interleave(even, odd, axis)


def _interleave(evens: list[Any], odds: list[Any], axis: int) -> list[Any]:
    """`a[0], b[0], a[1], b[1], ...` along `axis` for each pair (a has as many elements as
    b, or one more), by padding each with zeros between its elements and adding."""
    def padding(x: Any, low: int, high: int) -> list[tuple[int, int, int]]:
        config = [(0, 0, 0)] * len(_shape(x))
        config[axis] = (low, high, 1)
        return config

    same = [_shape(a)[axis] == _shape(b)[axis] for a, b in zip(evens, odds, strict=True)]
    padded_evens = [slicing.pad(a, _const(a, 0), padding(a, 0, 1 if s else 0))
                    for a, s in zip(evens, same, strict=True)]
    padded_odds = [slicing.pad(b, _const(b, 0), padding(b, 1, 0 if s else 1))
                   for b, s in zip(odds, same, strict=True)]
    return [(elementwise.bitwise_or if _dtype(a) == np.bool_ else elementwise.add)(a, b)
            for a, b in zip(padded_evens, padded_odds, strict=True)]


def cumulative_jvp(combine_fn: Callable[[Any, Any], Any]) -> Callable:
    """The jvp rule of a cumulative reduction: forward mode through `associative_scan` of
    `combine_fn`, as JAX differentiates `cumprod`, `cummax` and `cummin`."""
    def rule(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int, reverse: bool
             ) -> tuple[Any, Any]:
        def scan(x: Any) -> list[Any]:
            return associative_scan(lambda a, b: [combine_fn(a[0], b[0])], [x], axis=axis,
                                    reverse=reverse)
        (out,), (tangent_out,) = ad.jvp_flat(scan, primals, tangents)
        return out, tangent_out
    return rule


# -- logaddexp, the combine of cumlogsumexp -----------------------------------------------------

def logaddexp(x1: Any, x2: Any) -> Any:
    """`log(exp(x1) + exp(x2))` without overflow (JAX's `lax.logaddexp`, same equations)."""
    amax = elementwise.max(x1, x2)
    if dtypes.is_float(_dtype(x1)):
        delta = elementwise.sub(x1, x2)
        # NaN, or infinities of one sign: the sum gives the right NaN or infinity.
        return selection.select(
            elementwise.ne(delta, delta), elementwise.add(x1, x2),
            elementwise.add(amax, elementwise.log1p(elementwise.exp(
                elementwise.neg(elementwise.abs(delta))))))
    delta = elementwise.sub(elementwise.add(x1, x2), elementwise.mul(amax, _const(amax, 2)))
    out = elementwise.add(amax, elementwise.log1p(elementwise.exp(delta)))
    return elementwise.complex(elementwise.real(out),
                               _wrap_between(elementwise.imag(out), np.pi))


def _wrap_between(x: Any, bound: float) -> Any:
    """`x` wrapped into `[-bound, bound)`."""
    a = _const(x, bound)
    two_a = _const(x, 2 * bound)
    rem = elementwise.rem(elementwise.add(x, a), two_a)
    rem = selection.select(elementwise.lt(rem, _const(x, 0)), elementwise.add(rem, two_a), rem)
    return elementwise.sub(rem, a)


def _replace_inf(x: Any) -> Any:
    """`x` with +inf (of the real part) replaced by zero, as JAX's logaddexp jvp uses."""
    real = elementwise.real(x) if dtypes.is_complex(_dtype(x)) else x
    is_inf = elementwise.eq(real, _const(real, np.inf))
    return selection.select(is_inf, _zeros_like(x), x)


def _zeros_like(x: Any) -> Any:
    zero = np.zeros((), _dtype(x))
    shape = _shape(x)
    return structural.broadcast_in_dim(zero, shape, ()) if shape else zero


def _logaddexp_with_tangent(a: list[Any], b: list[Any]) -> list[Any]:
    """Combines (value, tangent) pairs: logaddexp of the values and its derivative applied to
    the tangents, the rule JAX attaches to `logaddexp` with `custom_jvp`."""
    x1, t1 = a
    x2, t2 = b
    out = logaddexp(x1, x2)
    tangent = elementwise.add(
        elementwise.mul(t1, elementwise.exp(elementwise.sub(_replace_inf(x1),
                                                            _replace_inf(out)))),
        elementwise.mul(t2, elementwise.exp(elementwise.sub(_replace_inf(x2),
                                                            _replace_inf(out)))))
    return [out, tangent]


def cumlogsumexp_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int,
                     reverse: bool) -> tuple[Any, Any]:
    """The jvp of `cumlogsumexp`: the scan of logaddexp carried on (value, tangent) pairs,
    each combine applying logaddexp's own derivative rule (so infinities stay finite)."""
    x, = primals
    t = ad.instantiate_zeros(tangents[0])
    out, tangent_out = associative_scan(_logaddexp_with_tangent, [x, t], axis=axis,
                                        reverse=reverse)
    return out, tangent_out


# -- the primitives ----------------------------------------------------------------------

_CUMULATIVE_SHARDING = sharding_rules.unsplit_along(
    "axis", lambda aval, axis: "Input should be unsharded over the axis being reduced. Got "
    f"input type={aval} and axis={axis}")


def _cumred_shape_rule(x: ShapedArray, *, axis: int, reverse: bool) -> tuple[int, ...]:
    if axis < 0:
        raise ValueError("XLA operations do not allow negative axes")
    if axis >= x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
    return x.shape


def _cumulative_primitive(name: str) -> Primitive:
    prim = standard_primitive(name, _cumred_shape_rule, reductions.number_dtype_rule(name),
                              sharding_rule=_CUMULATIVE_SHARDING)
    dispatch.def_backend_impl(prim)
    return prim


cumsum_p = _cumulative_primitive("cumsum")
cumprod_p = _cumulative_primitive("cumprod")
cummax_p = _cumulative_primitive("cummax")
cummin_p = _cumulative_primitive("cummin")
cumlogsumexp_p = _cumulative_primitive("cumlogsumexp")


def _cumulative_batcher(prim: Primitive) -> Callable:
    """The batch axis stays where it is; the scanned axis is renumbered around it."""
    def rule(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None], *,
             axis: int, reverse: bool) -> tuple[Any, int]:
        operand, = vals
        bdim, = dims
        new_axis = axis if axis < bdim else axis + 1
        return prim.bind(operand, axis=new_axis, reverse=reverse), bdim
    return rule


for _prim in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    batching.primitive_batchers[_prim] = _cumulative_batcher(_prim)

# cumsum is linear: its transpose sums the cotangents in the other direction.
ad.deflinear2(cumsum_p, lambda ct, operand, *, axis, reverse: [
    cumsum(ct, axis=axis, reverse=not reverse)])
# The others are differentiated through a parallel prefix scan, as in JAX.
ad.primitive_jvps[cumprod_p] = cumulative_jvp(elementwise.mul)
ad.primitive_jvps[cummax_p] = cumulative_jvp(elementwise.max)
ad.primitive_jvps[cummin_p] = cumulative_jvp(elementwise.min)
ad.primitive_jvps[cumlogsumexp_p] = cumlogsumexp_jvp


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative sum along `axis` (lowers to StableHLO `reduce_window`)."""
    return cumsum_p.bind(operand, axis=int(axis), reverse=bool(reverse))


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative product along `axis` (lowers to StableHLO `reduce_window`)."""
    return cumprod_p.bind(operand, axis=int(axis), reverse=bool(reverse))


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative maximum along `axis`; NaN propagates (StableHLO `reduce_window`)."""
    return cummax_p.bind(operand, axis=int(axis), reverse=bool(reverse))


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative minimum along `axis`; NaN propagates (StableHLO `reduce_window`)."""
    return cummin_p.bind(operand, axis=int(axis), reverse=bool(reverse))


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative `log(sum(exp(x)))` along `axis` (StableHLO `reduce_window` of logaddexp)."""
    return cumlogsumexp_p.bind(operand, axis=int(axis), reverse=bool(reverse))


# -- lowering ---------------------------------------------------------------------------------

def _cumulative_window(name: str) -> Callable[..., Any]:
    """JAX's CPU lowering of a cumulative reduction: a windowed reduction whose window spans
    the whole axis, padded before (or after, in reverse) so window i ends at element i.
    (XLA rewrites it into a scan; a plain `reduce_window` is valid StableHLO as it stands.)"""
    def window_reduce(x: Any, *, axis: int, reverse: bool) -> Any:
        shape = core.get_aval(x).shape
        n = shape[axis]
        if n == 0:
            return x
        padding = [(0, 0)] * len(shape)
        padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
        window = [1] * len(shape)
        window[axis] = n
        strides = [1] * len(shape)
        dtype = core.get_aval(x).dtype
        if name in ("cumsum", "cummax", "cummin"):
            monoid = {"cumsum": windowed._reduce_window_sum, "cummax": windowed._reduce_window_max,
                      "cummin": windowed._reduce_window_min}[name]
            return monoid(x, window, strides, padding)
        combine, init = ((elementwise.mul, np.ones((), dtype)) if name == "cumprod" else
                         (logaddexp, np.array(-np.inf, dtype)))
        return windowed.reduce_window(x, init, combine, window, strides, padding)
    return window_reduce


for _prim in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    lowering.register_lowering(_prim, lowering.cached_lowering(
        _prim.name, lowering.lower_fun(_cumulative_window(_prim.name), multiple_results=False),
        multiple_results=False))
