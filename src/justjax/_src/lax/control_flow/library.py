"""Control flow written on top of the primitives, as JAX writes it: `fori_loop` (a `scan` over
the counter when both bounds are concrete, a `while_loop` otherwise), `map` (a `scan` without a
carry, optionally in vmapped batches) and `associative_scan` (Blelloch's parallel odd/even
recursion built from slices, pads and concatenates; it binds no control-flow primitive).

None of these defines a primitive: their jaxprs print the `scan` / `while` equations (or, for
`associative_scan`, the slicing ops) that JAX's versions trace to, and every transformation
goes through those.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.interpreters import batching, staging
from justjax._src.lax import elementwise, slicing, structural
from justjax._src.lax.control_flow import common
from justjax._src.lax.control_flow.scan import scan
from justjax._src.lax.control_flow.while_loop import while_loop

__all__ = ["associative_scan", "fori_loop", "map"]


# ---------------------------------------------------------------------------------------------
# fori_loop

def _counter_dtype(lower: Any, upper: Any) -> np.dtype:
    """The loop counter's dtype: the bounds' common dtype. Bounds of different signed integer
    dtypes are accepted when exactly one is weakly typed (a Python int), which takes the
    other's dtype; anything else is JAX's TypeError."""
    lower_aval, upper_aval = core.get_aval(lower), core.get_aval(upper)
    if lower_aval.dtype == upper_aval.dtype:
        return lower_aval.dtype
    if (dtypes.kind(lower_aval.dtype) == "i" and dtypes.kind(upper_aval.dtype) == "i"
            and lower_aval.weak_type != upper_aval.weak_type):
        return upper_aval.dtype if lower_aval.weak_type else lower_aval.dtype
    raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                    f"{lower_aval.dtype.name} and {upper_aval.dtype.name}")


def _static_bounds(lower: Any, upper: Any) -> tuple[int, int] | None:
    """Both bounds as Python ints when both are known at trace time, else None (then the
    loop is a `while_loop`, whose trip count may be traced)."""
    lower_value = core.to_concrete_value(lower)
    upper_value = core.to_concrete_value(upper)
    if lower_value is None or upper_value is None:
        return None
    if is_symbolic_dim(lower_value) or is_symbolic_dim(upper_value):
        return None  # a symbolic trip count: a while_loop on the dimension's value
    try:
        return int(lower_value), int(upper_value)
    except TypeError:
        return None


def _fori_scan_body(body_fun: Callable) -> Callable:
    """The scan body of a static-bounds loop: carry `(i, x)`, no xs, no ys.

    Its carry parameter is named `loop_carry` because carry-type errors name the body's first
    parameter (`The input carry component loop_carry[1] ...`), as JAX's messages do.
    """
    def scanned_fun(loop_carry: Any, _: Any) -> tuple[Any, None]:
        i, x = loop_carry
        return (i + 1, body_fun(i, x)), None

    return scanned_fun


def _fori_cond(loop_carry: Any) -> Any:
    i, upper, _ = loop_carry
    return elementwise.lt(i, upper)


def _fori_while_body(body_fun: Callable) -> Callable:
    """The while body of a traced-bounds loop: carry `(i, upper, x)` (see `_fori_scan_body`
    for the parameter's name)."""
    def while_body_fun(loop_carry: Any) -> tuple[Any, Any, Any]:
        i, upper, x = loop_carry
        one = np.array(1, dtype=core.get_aval(i).dtype)
        return elementwise.add(i, one), upper, body_fun(i, x)

    return while_body_fun


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """Runs `val = body_fun(i, val)` for `i` in `range(lower, upper)` (`lax.fori_loop`).

    With both bounds concrete the loop is a `scan` of `max(upper - lower, 0)` steps over the
    carry `(i, val)`, whose counter starts at the Python int `lower` (so it is a weak int32),
    and reverse-mode differentiation works; otherwise it is a `while_loop` over
    `(i, upper, val)` with the counter in the bounds' dtype, which only forward mode
    differentiates. `upper <= lower` runs no iteration.

    Args:
      lower: the first counter value (inclusive), an integer scalar (or a float of integral
        value when concrete, as JAX accepts).
      upper: the bound (exclusive), of the same dtype as `lower` (a Python int adopts the
        other bound's integer dtype).
      body_fun: `(i, val) -> val`, keeping the pytree structure, shapes and dtypes of `val`.
      init_val: the initial carry, a pytree of arrays.
      unroll: iterations per rolled step of the scan (an int, or True for all of them);
        only allowed when the bounds are concrete.
    Returns:
      The final carry.
    Raises:
      TypeError: `body_fun` is not callable, the bounds' dtypes differ, or the carry type
        changes.
      ValueError: `unroll` given with traced bounds.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _counter_dtype(lower, upper)
    # The body's parameters name its flattened arguments (the counter, then the carry's
    # leaves) in errors, as JAX's do.
    names = staging.leaf_arg_names(body_fun, [lower, init_val], {}, frozenset())
    bounds = _static_bounds(lower, upper)
    if bounds is not None:
        lower_, upper_ = bounds
        length = max(upper_ - lower_, 0)
        if config.read("jax_disable_jit") and length == 0:
            # Without jit, scan is a Python loop, which has nothing to return for no steps.
            return init_val
        scan_body = common.traced_as(_fori_scan_body(body_fun), body_fun, "fori_loop",
                                     names)
        (_, result), _ = scan(scan_body, (lower_, init_val), None,
                              length=length, unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    if core.get_aval(lower).dtype != dtype:
        lower = structural.convert_element_type(lower, dtype)
    if core.get_aval(upper).dtype != dtype:
        upper = structural.convert_element_type(upper, dtype)
    while_body = common.traced_as(_fori_while_body(body_fun), body_fun, "fori_loop",
                                  [names[0], "upper", *names[1:]])
    _, _, result = while_loop(_fori_cond, while_body, (lower, upper, init_val))
    return result


# ---------------------------------------------------------------------------------------------
# map

def _vmap(f: Callable, xs: Any) -> Any:
    """`vmap(f)(xs)` over axis 0 of every leaf of `xs` (the ops layer has no `api.vmap`, so
    this calls its core, `batching.batch_flat`, directly)."""
    leaves, in_tree = tree_util.tree_flatten(xs)
    out_trees: list[Any] = []

    def flat_f(*flat: Any) -> list[Any]:
        out_leaves, out_tree = tree_util.tree_flatten(f(tree_util.tree_unflatten(in_tree, flat)))
        out_trees.append(out_tree)
        return out_leaves

    size = np.shape(leaves[0])[0]
    axis_data = batching.AxisData(batching.no_axis_name, size)
    out = batching.batch_flat(flat_f, axis_data, [0] * len(leaves),
                              lambda count: [0] * count, leaves)
    return tree_util.tree_unflatten(out_trees[0], out)


def _batch_and_remainder(xs: Any, batch_size: int) -> tuple[Any, Any]:
    """Splits every leaf of `xs` into `num_batches` full batches, reshaped to
    `(num_batches, batch_size, ...)`, and the leftover rows; either part is None when empty
    (`batch_size=0` means one vmap over everything)."""
    leaves, treedef = tree_util.tree_flatten(xs)
    if not leaves:
        return xs, None
    rows = np.shape(leaves[0])[0]
    num_batches, remainder = (0, rows) if batch_size == 0 else divmod(rows, batch_size)
    batch_rows = num_batches * batch_size
    if num_batches == 0:
        return None, tree_util.tree_unflatten(treedef, [leaf[batch_rows:] for leaf in leaves])
    scan_leaves, remainder_leaves = [], []
    for leaf in leaves:
        # JAX slices each leaf's batches and its remainder before moving to the next leaf.
        batches = leaf[:batch_rows].reshape(num_batches, batch_size, *np.shape(leaf)[1:])
        scan_leaves.append(batches)
        if remainder:
            remainder_leaves.append(leaf[batch_rows:])
    remainder_xs = tree_util.tree_unflatten(treedef, remainder_leaves) if remainder else None
    return tree_util.tree_unflatten(treedef, scan_leaves), remainder_xs


def _merge_batches(ys: Any) -> Any:
    return ys.reshape(-1, *np.shape(ys)[2:])


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """Applies `f` to each slice of `xs` along its leading axis and stacks the results
    (`lax.map`): `np.stack([f(x) for x in xs])` for a pytree `xs`, as a `scan` without a carry.

    Args:
      f: the function applied to each slice (a pytree like `xs` without its leading axis).
      xs: a pytree of arrays sharing their leading axis size.
      batch_size: if given, `f` is vmapped over batches of that many slices, the batches
        scanned over, and the leftover slices handled by one more vmap whose results are
        concatenated after the scanned ones; 0 means a single vmap over everything.
    Returns:
      The stacked results of `f`, a pytree of arrays with the leading axis of `xs`.
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    scan_xs, remainder_xs = _batch_and_remainder(xs, operator.index(batch_size))
    if scan_xs is None:
        return _vmap(f, remainder_xs)
    _, scan_ys = scan(lambda _, x: ((), _vmap(f, x)), (), scan_xs)
    if remainder_xs is None:
        return tree_util.tree_map(_merge_batches, scan_ys)
    remainder_ys = _vmap(f, remainder_xs)
    return tree_util.tree_map(
        lambda scanned, rest: structural.concatenate([_merge_batches(scanned), rest], 0),
        scan_ys, remainder_ys)


# ---------------------------------------------------------------------------------------------
# associative_scan

def _interleave(evens: Any, odds: Any, axis: int) -> Any:
    """`evens[0], odds[0], evens[1], odds[1], ...` along `axis`: both padded with zeros into
    every other position and added (or-ed for booleans), as JAX builds it. `evens` has as
    many elements as `odds` or one more."""
    aval = core.get_aval(evens)
    same_length = aval.shape[axis] == core.get_aval(odds).shape[axis]
    evens_pad = [(0, 0, 0)] * aval.ndim
    odds_pad = [(0, 0, 0)] * aval.ndim
    evens_pad[axis] = (0, 1 if same_length else 0, 1)
    odds_pad[axis] = (1, 0 if same_length else 1, 1)
    zero = np.zeros((), aval.dtype)
    combine = elementwise.bitwise_or if aval.dtype == np.bool_ else elementwise.add
    return combine(slicing.pad(evens, zero, evens_pad), slicing.pad(odds, zero, odds_pad))


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The inclusive scan of `elems` along `axis` with the associative `fn`, computed in
    O(log n) depth (`lax.associative_scan`): element k of the result is
    `fn(...fn(fn(e0, e1), e2)..., ek)`.

    The recursion combines adjacent pairs, scans the half-length result (the odd positions),
    combines those with the even elements of the input (the even positions) and interleaves
    both, all from strided slices, concatenates and pads.

    Args:
      fn: the associative operation `r = fn(a, b)` on pytrees like `elems`, elementwise
        along `axis` (it is called on whole slices of the arrays).
      elems: a pytree of arrays sharing the size of their `axis` dimension.
      reverse: scan from the end: element k combines the elements from the last down to k
        (`[..., fn(fn(z, y), x), fn(z, y), z]`).
      axis: the axis to scan along; negative counts from the end (for `reverse` too, as the
        documentation says: JAX 0.10.2 rejects a negative axis with `reverse=True`).
    Returns:
      A pytree like `elems` of the scanned arrays.
    Raises:
      ValueError: the leaves' `axis` dimensions differ.
    """
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    elems_flat, tree = tree_util.tree_flatten(elems)
    shapes = [core.get_aval(elem).shape for elem in elems_flat]
    axis = batching.canonicalize_axis(axis, len(shapes[0]))
    num_elems = shapes[0][axis]
    if not all(shape[axis] == num_elems for shape in shapes[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {shapes})")
    if reverse:
        elems_flat = [slicing.rev(elem, [axis]) for elem in elems_flat]

    def combine(a_flat: list[Any], b_flat: list[Any]) -> list[Any]:
        c = fn(tree_util.tree_unflatten(tree, a_flat), tree_util.tree_unflatten(tree, b_flat))
        return tree_util.tree_leaves(c)

    def every_other(elems: list[Any], start: int, limit: int | None) -> list[Any]:
        return [slicing.slice_in_dim(e, start, limit, stride=2, axis=axis) for e in elems]

    def scan_flat(elems: list[Any]) -> list[Any]:
        length = core.get_aval(elems[0]).shape[axis]
        if length < 2:
            return elems
        odd_elems = scan_flat(combine(every_other(elems, 0, -1), every_other(elems, 1, None)))
        if length % 2 == 0:
            # The last odd result has no even element after it.
            odd_prefix = [slicing.slice_in_dim(e, 0, -1, axis=axis) for e in odd_elems]
            even_elems = combine(odd_prefix, every_other(elems, 2, None))
        else:
            even_elems = combine(odd_elems, every_other(elems, 2, None))
        # The scan's first element is the input's first element.
        even_elems = [structural.concatenate([slicing.slice_in_dim(e, 0, 1, axis=axis), rest],
                                             axis)
                      for e, rest in zip(elems, even_elems, strict=True)]
        return [_interleave(even, odd, axis)
                for even, odd in zip(even_elems, odd_elems, strict=True)]

    scans = scan_flat(elems_flat)
    if reverse:
        scans = [slicing.rev(scanned, [axis]) for scanned in scans]
    return tree_util.tree_unflatten(tree, scans)
