"""Differentiation machinery for the reductions, as JAX builds it.

- `reduce_tree_jvp`: the jvp of a reduction computed as a balanced tree of reducer
  applications (JAX's `_reduce_jvp`), used for `reduce_prod` and the general `reduce`. The
  primal result comes from the tree too, so it is differentiable again to any order.
- `associative_scan`: the parallel prefix scan (JAX's `lax.associative_scan` algorithm) that
  `cumprod`, `cummax`, `cummin` and `cumlogsumexp` are differentiated through, because their
  own lowering (`reduce_window`) has no derivative.

Everything is written with lax operations, so the rules trace at any nesting level.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr
from justjax._src.interpreters import ad, batching
from justjax._src.lax import elementwise, slicing, structural

# Internal machinery: nothing here is public.
__all__: list[str] = []

# A reducer maps the flat list `accumulated + elements` (arrays of one shape) to the flat list
# of reduced values, elementwise.
Reducer = Callable[..., Sequence[Any]]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _const(example: Any, value: Any) -> np.ndarray:
    """`value` as a NumPy scalar of `example`'s dtype (a literal once traced)."""
    return np.array(value, dtype=_dtype(example))


def _full(shape: tuple[int, ...], fill_value: Any) -> Any:
    """`lax.full`: `fill_value` (of its own dtype) broadcast to `shape`."""
    return structural.broadcast_in_dim(fill_value, shape, ())


# -- tree reductions ----------------------------------------------------------------------------

def reduce_tree_jvp(reducer: Reducer, init_values: Sequence[Any], primals: Sequence[Any],
                    tangents: Sequence[Any], axes: Sequence[int]
                    ) -> tuple[list[Any], list[Any]]:
    """The jvp of reducing `primals` over `axes` with `reducer`.

    The reduced axes are moved to the front and flattened; the resulting axis is halved
    repeatedly (padding odd halves with the initial values) and the halves combined with
    `reducer`, all under forward-mode differentiation.

    Args:
      reducer: the elementwise reducer on arrays of any one shape.
      init_values: the scalar initial values (identities), one per operand.
      primals, tangents: the operands and their tangents (symbolic `Zero`s allowed).
      axes: the reduced axes.
    Returns:
      The primal and tangent outputs.
    """
    input_shape = _shape(primals[0])
    axes = tuple(int(a) for a in axes)
    non_axes = tuple(d for d in range(len(input_shape)) if d not in axes)
    size = math.prod(input_shape[a] for a in axes)
    kept_shape = tuple(input_shape[d] for d in non_axes)
    new_shape = (size,) + kept_shape
    permutation = axes + non_axes

    def to_front(x: Any) -> Any:
        if type(x) is ad.Zero:
            return ad.Zero(x.aval.update(shape=new_shape))
        return structural.reshape(x, new_shape, permutation)

    def reduce_tree(*xs: Any) -> list[Any]:
        xs = list(xs)
        while _shape(xs[0])[0] > 1:
            n = _shape(xs[0])[0]
            n1 = (n + 1) // 2
            n2 = n - n1
            firsts = [slicing.slice_in_dim(x, 0, n1) for x in xs]
            seconds = [slicing.slice_in_dim(x, n1, None) for x in xs]
            if n2 != n1:
                padding = [(0, 0, 0)] * len(_shape(xs[0]))
                padding[0] = (0, 1, 0)
                seconds = [slicing.pad(x, init, padding)
                           for x, init in zip(seconds, init_values, strict=True)]
            xs = list(reducer(*firsts, *seconds))
        if _shape(xs[0])[0] == 0:
            return [_full(kept_shape, init) for init in init_values]
        return [structural.squeeze(x, (0,)) for x in xs]

    return ad.jvp_flat(reduce_tree, [to_front(x) for x in primals],
                       [to_front(t) for t in tangents])


def jaxpr_reducer(closed: ClosedJaxpr) -> Reducer:
    """The reducer jaxpr of the general `reduce`, applied elementwise to whole arrays: as
    JAX does, the scalar jaxpr vmapped once per dimension of the arguments."""
    def scalar_reducer(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    def reducer(*args: Any) -> list[Any]:
        fun = scalar_reducer
        for size in reversed(_shape(args[0])):
            fun = _vmapped(fun, size)
        return fun(*args)
    return reducer


def _vmapped(fun: Callable[..., Sequence[Any]], size: int) -> Callable[..., list[Any]]:
    """`vmap(fun)` over the leading axis of every argument and output (an unbatched output,
    a constant, is broadcast)."""
    axis_data = batching.AxisData(batching.no_axis_name, size)

    def batched(*args: Any) -> list[Any]:
        return batching.batch_flat(fun, axis_data, [0] * len(args), lambda n: [0] * n, args)
    return batched


def is_elementwise_batchable(closed: ClosedJaxpr, shape: tuple[int, ...]) -> bool:
    """Whether the scalar reducer `closed` can run on arrays of `shape` at once, giving the
    same result as running it element by element.

    True when the jaxpr is made of scalar values only, holds no sub-jaxprs, and abstract
    evaluation with the arguments as arrays of `shape` keeps every value derived from them of
    that shape (shape-specific primitives such as reshape fail that check).
    """
    jaxpr = closed.jaxpr
    if any(np.shape(c) != () for c in closed.consts):
        return False
    if any(v.aval.shape != () for e in jaxpr.eqns for v in e.outvars):
        return False
    if any(_contains_jaxpr(p) for e in jaxpr.eqns for p in e.params.values()):
        return False
    batched = {v: v.aval.update(shape=shape) for v in jaxpr.invars}

    def aval_of(atom: Any) -> ShapedArray:
        return atom.aval if isinstance(atom, Literal) else batched.get(atom, atom.aval)

    for eqn in jaxpr.eqns:
        in_avals = [aval_of(a) for a in eqn.invars]
        is_batched = any(not isinstance(a, Literal) and a in batched for a in eqn.invars)
        try:
            outs = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except Exception:  # noqa: BLE001 - any failure means "not batchable"
            return False
        outs = outs if eqn.primitive.multiple_results else [outs]
        want = shape if is_batched else ()
        if any(o.shape != want for o in outs):
            return False
        if is_batched:
            batched.update({v: o for v, o in zip(eqn.outvars, outs, strict=True)})
    return True


def _contains_jaxpr(value: Any) -> bool:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return True
    return isinstance(value, (tuple, list)) and any(_contains_jaxpr(v) for v in value)


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
        return structural.select(
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
    rem = structural.select(elementwise.lt(rem, _const(x, 0)), elementwise.add(rem, two_a), rem)
    return elementwise.sub(rem, a)


def _replace_inf(x: Any) -> Any:
    """`x` with +inf (of the real part) replaced by zero, as JAX's logaddexp jvp uses."""
    real = elementwise.real(x) if dtypes.is_complex(_dtype(x)) else x
    is_inf = elementwise.eq(real, _const(real, np.inf))
    return structural.select(is_inf, _zeros_like(x), x)


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
