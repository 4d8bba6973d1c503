"""Collectives over named axes: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `psum_scatter`,
`ppermute`, `pshuffle`, `all_to_all`, `pswapaxes`, `axis_index` and `axis_size`, as JAX's
`lax.parallel`.

A named axis is bound by a mapping transform (`vmap(f, axis_name='i')`) for the extent of the
mapped function (`core.extend_axis_env`). A collective names the axes it works across; integer
entries of `axes` are positional axes of the operand, reduced as `reduce_sum`/`reduce_max`
would. Under vmap the BatchTrace of the named axis handles the collective in its batching rule
(registered in `batching.axis_primitives`, so it runs even when no operand is mapped): a
reduction over the axis becomes a positional reduction over the batch dimension, whose result
is the same for every example (unmapped). Names of other axes pass through to the parent
trace, where an enclosing vmap (or, later, pmap) handles them. The rules only use the axis'
name and size, never vmap specifics, so pmap can reuse the primitives.

A name that no transform binds raises JAX's `NameError`s: "unbound axis name: i" where the
axis size is needed to build the call (`psum` of a constant, `all_gather`), and "Found an
unbound axis name: i. ..." when the primitive is evaluated or staged.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import elementwise, reductions, slicing, structural
from justjax._src.lax.elementwise import _const
from justjax._src.runtime.array import Array, from_numpy, to_numpy

__all__ = [
    "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "axis_index", "axis_size",
    "ppermute", "pshuffle", "psum_p", "pmax_p", "pmin_p", "all_gather_p", "axis_index_p",
    "ppermute_p", "all_to_all", "all_to_all_p", "pswapaxes", "pcast", "pvary_p",
]


# -- axis names ---------------------------------------------------------------------------------

def _as_axes(axis_name: Any) -> tuple[Any, ...]:
    """One name, or a tuple/list of names and positional axes, as a tuple."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _partition(axes: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    """(named axes, positional axes) in their order."""
    named = tuple(a for a in axes if not isinstance(a, int))
    positional = tuple(a for a in axes if isinstance(a, int))
    return named, positional


def _bound_axis_size(name: Any) -> int:
    """The size of the bound axis `name` (JAX's axis-env lookup and its error)."""
    size = core.axis_size(name)
    if size is None:
        raise NameError(f"unbound axis name: {name}")
    return size


def _unbound_axis_error(name: Any, api_name: str) -> NameError:
    return NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                     f"{api_name} under `jax.shard_map`.")


def _check_axis_names(axes: Sequence[Any], api_name: str) -> None:
    """Every named axis among `axes` is bound (staging a collective checks this)."""
    for name in _partition(axes)[0]:
        if core.axis_size(name) is None:
            raise _unbound_axis_error(name, api_name)


def _named_axes_impl_error(axes: Sequence[Any], api_name: str) -> NameError:
    # A bound name is always handled by its transform's trace before evaluation: a named
    # collective that reaches evaluation has no transform mapping its axis.
    return _unbound_axis_error(_partition(axes)[0][0], api_name)


def _unbound_impl(api_name: str) -> Callable[..., Any]:
    """The evaluation rule of a collective over named axes only: it is reached only when no
    transform binds the axis (after the unbound-name check of its abstract evaluation)."""
    def impl(*operands: Any, axis_name: Any, **params: Any) -> Any:
        _check_axis_names(_as_axes(axis_name), api_name)
        raise _named_axes_impl_error(_as_axes(axis_name), api_name)
    return impl


def _validate_groups(axis_index_groups: Any) -> None:
    if axis_index_groups is None:
        return
    space = range(sum(len(group) for group in axis_index_groups))
    if {i for group in axis_index_groups for i in group} != set(space):
        raise ValueError("axis_index_groups must cover all indices exactly once")


def _canonical_groups(axis_index_groups: Any) -> tuple[tuple[int, ...], ...] | None:
    if axis_index_groups is None:
        return None
    return tuple(tuple(group) for group in axis_index_groups)


def _check_reduce_groups(axes: tuple[Any, ...], axis_index_groups: Any) -> None:
    if axis_index_groups is not None and any(isinstance(a, int) for a in axes):
        raise ValueError("axis_index_groups only supported for sums over just named axes")
    _validate_groups(axis_index_groups)


def _no_groups_in_vmap(axis_index_groups: Any) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                                  "Please open a feature request!")


def _with_aval(value: Any, aval: ShapedArray) -> Any:
    """`value` with exactly `aval`'s weak type (positional reductions keep the operand's)."""
    if core.get_aval(value).weak_type == aval.weak_type:
        return value
    return from_numpy(to_numpy(value), aval)


# -- psum, pmean, pmax, pmin --------------------------------------------------------------------

def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """All-reduce sum of `x` over the named axis `axis_name` (a name, or a tuple of names and
    positional axes); a pytree is reduced leaf by leaf.

    Boolean leaves are summed as int32. A leaf that is not traced (a constant, the same on
    every member of the axis) gives the axis size times its value: `psum(1, 'i')` is the size
    of axis 'i'.

    Args:
      x: array(s) varying along the named axis.
      axis_name: the name of a mapped axis (`vmap(..., axis_name=...)`), or a tuple of names
        and integer positional axes.
      axis_index_groups: sub-groups of axis indices to reduce within (not supported by vmap).
    Returns:
      Array(s) of `x`'s shapes (minus positional axes): the sums over the axis.
    Lowers to StableHLO `all_reduce` with an `add` body.
    """
    axes = _as_axes(axis_name)
    if not axes:
        return x
    return tree_util.tree_map(lambda leaf: _psum_leaf(leaf, axes, axis_index_groups), x)


def _psum_leaf(leaf: Any, axes: tuple[Any, ...], axis_index_groups: Any) -> Any:
    _check_reduce_groups(axes, axis_index_groups)
    if core.get_aval(leaf).dtype == np.bool_:
        leaf = structural.convert_element_type(leaf, np.int32)
    groups = _canonical_groups(axis_index_groups)
    if not isinstance(leaf, core.Tracer):
        return _psum_constant(leaf, axes, groups)
    return psum_p.bind(leaf, axes=axes, axis_index_groups=groups)


def _psum_constant(leaf: Any, axes: tuple[Any, ...], groups: Any) -> Any:
    """The sum of a value the same on every member of the named axes: size * value, computed
    without staging anything (a Python constant stays a Python constant)."""
    named, positional = _partition(axes)
    reduced = leaf
    if positional:
        ndim = np.ndim(leaf)
        reduced = reductions.reduce_sum(
            leaf, [batching.canonicalize_axis(a, ndim) for a in positional])
    if groups is not None:
        size = len(groups[0])
    else:
        size = math.prod(_bound_axis_size(name) for name in named)
    factor = _const(leaf, size)
    if isinstance(reduced, (core.Tracer, Array)):
        return elementwise.mul(factor, reduced)
    return factor * reduced


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """All-reduce mean of `x` over `axis_name`: `psum` divided by the axis size (as JAX
    stages it: a `psum` then a `div`; integer inputs give floats)."""
    x = psum(x, axis_name=axis_name, axis_index_groups=axis_index_groups)
    n = _axis_size(axis_name, axis_index_groups)
    # The `/` operator is jax.numpy's true division, as in JAX's pmean.
    return tree_util.tree_map(lambda v: v / n, x)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """All-reduce maximum of `x` over `axis_name` (names and positional axes); a pytree is
    reduced leaf by leaf. Not differentiable (as in JAX).

    Lowers to StableHLO `all_reduce` with a `maximum` body.
    """
    return _pminmax(pmax_p, x, axis_name, axis_index_groups)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """All-reduce minimum of `x` over `axis_name` (names and positional axes); a pytree is
    reduced leaf by leaf. Not differentiable (as in JAX).

    Lowers to StableHLO `all_reduce` with a `minimum` body.
    """
    return _pminmax(pmin_p, x, axis_name, axis_index_groups)


def _pminmax(prim: Primitive, x: Any, axis_name: Any, axis_index_groups: Any) -> Any:
    axes = _as_axes(axis_name)
    _check_reduce_groups(axes, axis_index_groups)
    groups = _canonical_groups(axis_index_groups)
    return tree_util.tree_map(lambda leaf: prim.bind(leaf, axes=axes, axis_index_groups=groups),
                              x)


def _allreduce_abstract_eval(aval: ShapedArray, *, axes: tuple[Any, ...],
                             axis_index_groups: Any) -> ShapedArray:
    # JAX names psum in the unbound-axis error of pmax and pmin too.
    _check_axis_names(axes, "psum")
    positional = _partition(axes)[1]
    if axis_index_groups is not None and positional:
        raise ValueError("axis_index_groups can only be used with reductions over named axes, "
                         f"but got: {axes}")
    shape = reductions._reduce_op_shape_rule(aval, axes=positional)
    return ShapedArray(shape, aval.dtype)


def _allreduce_impl(prim: Primitive, reducer: Callable[[Any, Sequence[int]], Any]
                    ) -> Callable[..., Any]:
    def impl(arg: Any, *, axes: tuple[Any, ...], axis_index_groups: Any) -> Any:
        out_aval = prim.abstract_eval(core.get_aval(arg), axes=axes,
                                      axis_index_groups=axis_index_groups)
        if _partition(axes)[0]:
            raise _named_axes_impl_error(axes, "psum")
        return _with_aval(reducer(arg, _partition(axes)[1]), out_aval)

    return impl


def _allreduce_lowering(prim: Primitive, reducer: Callable[[Any, Sequence[int]], Any]
                        ) -> lowering.LoweringRule:
    """Positional axes lower to the reduction over them (as JAX's lowering does before any
    all-reduce); a named axis reaching lowering has no mapped axis behind it, since vmap
    batches collectives away and pmap (issue #10) is not there yet."""
    def reduce_positional(x: Any, *, axes: tuple[Any, ...], axis_index_groups: Any) -> Any:
        named, positional = _partition(axes)
        if named:
            raise _named_axes_impl_error(axes, "psum")
        out_aval = prim.abstract_eval(core.get_aval(x), axes=axes,
                                      axis_index_groups=axis_index_groups)
        return _with_aval(reducer(x, positional) if positional else x, out_aval)

    return lowering.lower_fun(reduce_positional, multiple_results=False)


def _allreduce_batcher(prim: Primitive, if_unmapped: Callable[[Any, int], Any]
                       ) -> Callable[..., tuple[Any, int | None]]:
    """The batching rule of an all-reduce: over this trace's axis it reduces the batch
    dimension positionally (fused with the other axes in one equation) and is unmapped."""
    def rule(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None], *,
             axes: tuple[Any, ...], axis_index_groups: Any) -> tuple[Any, int | None]:
        (x,), (d,) = vals, dims
        name = axis_data.name
        if d is None:
            if name in axes:
                return _constant_reduction(prim, if_unmapped, axis_data, x, axes,
                                           axis_index_groups)
            return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), None
        if name not in axes:
            if not _partition(axes)[1]:
                # Only other names: the parent reduces every example alike.
                return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), d
            _no_groups_in_vmap(axis_index_groups)
            x = batching.moveaxis(x, d, 0)
            shifted = tuple(a + (a >= 0) if isinstance(a, int) else a for a in axes)
            return prim.bind(x, axes=shifted, axis_index_groups=None), 0
        _no_groups_in_vmap(axis_index_groups)
        x = batching.moveaxis(x, d, 0)
        fused = tuple(a + (a >= 0) if isinstance(a, int) else 0 if a == name else a
                      for a in axes)
        return prim.bind(x, axes=fused, axis_index_groups=None), None

    return rule


def _constant_reduction(prim: Primitive, if_unmapped: Callable[[Any, int], Any],
                        axis_data: batching.AxisData, x: Any, axes: tuple[Any, ...],
                        axis_index_groups: Any) -> tuple[Any, None]:
    """An unmapped operand reduced over this trace's axis: the same value on every member."""
    _no_groups_in_vmap(axis_index_groups)
    rest = tuple(a for a in axes if a != axis_data.name)
    if rest:
        x = prim.bind(x, axes=rest, axis_index_groups=axis_index_groups)
    return if_unmapped(x, axis_data.size), None


def _psum_transpose(ct: Any, operand: Any, *, axes: tuple[Any, ...], axis_index_groups: Any
                    ) -> list[Any]:
    # psum is treated as psum followed by a broadcast to every member, so its transpose sums
    # over the named axes again; positional axes transpose like reduce_sum (a broadcast).
    named, positional = _partition(axes)
    if positional:
        ct = reductions._reduce_sum_transpose(ct, operand, axes=positional, out_sharding=None)[0]
    return [psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)]


def _scale_by_size(x: Any, size: int) -> Any:
    return elementwise.mul(_const(x, size), x)


def _unchanged(x: Any, size: int) -> Any:
    return x


psum_p = Primitive("psum")
psum_p.def_abstract_eval(_allreduce_abstract_eval)
psum_p.def_impl(_allreduce_impl(psum_p, reductions.reduce_sum))
lowering.register_lowering(psum_p, _allreduce_lowering(psum_p, reductions.reduce_sum))
ad.deflinear2(psum_p, _psum_transpose)
batching.primitive_batchers[psum_p] = _allreduce_batcher(psum_p, _scale_by_size)
batching.axis_primitives.add(psum_p)

# pmax and pmin have no derivative rules, as in JAX ("Differentiation rule for 'pmax' not
# implemented").
pmax_p = Primitive("pmax")
pmax_p.def_abstract_eval(_allreduce_abstract_eval)
pmax_p.def_impl(_allreduce_impl(pmax_p, reductions.reduce_max))
lowering.register_lowering(pmax_p, _allreduce_lowering(pmax_p, reductions.reduce_max))
batching.primitive_batchers[pmax_p] = _allreduce_batcher(pmax_p, _unchanged)
batching.axis_primitives.add(pmax_p)

pmin_p = Primitive("pmin")
pmin_p.def_abstract_eval(_allreduce_abstract_eval)
pmin_p.def_impl(_allreduce_impl(pmin_p, reductions.reduce_min))
lowering.register_lowering(pmin_p, _allreduce_lowering(pmin_p, reductions.reduce_min))
batching.primitive_batchers[pmin_p] = _allreduce_batcher(pmin_p, _unchanged)
batching.axis_primitives.add(pmin_p)


# -- the manual axes results vary along (shard_map's check_vma types) -------------------------

def _named_axes(params: dict) -> tuple:
    names = params["axes"] if "axes" in params else _as_axes(params["axis_name"])
    return tuple(n for n in names if not isinstance(n, int))


def _vma_reduced(in_vmas: Sequence[tuple], **params: Any) -> tuple:
    """An all-reduce's result is the same on every member of its axes."""
    reduced = set(_named_axes(params))
    return tuple(a for a in core.varying_axes(*in_vmas) if a not in reduced)


def _vma_added(in_vmas: Sequence[tuple], **params: Any) -> tuple:
    """A result that differs between the members of the named axes."""
    return core.varying_axes(*in_vmas, _named_axes(params))


def with_varying(aval: ShapedArray, names: Sequence[Any]) -> ShapedArray:
    """`aval` varying along the ones of `names` whose varying values are being tracked
    (a shard_map body's manual axes under check_vma), for a primitive whose operands do not
    vary (so no rule of `core.vma_rules` runs)."""
    tracked = [n for n in names if n in core.trace_state.varying_order]
    return aval.update(vma=core.varying_axes(aval.vma, tracked)) if tracked else aval


for _reducer in (psum_p, pmax_p, pmin_p):
    core.vma_rules[_reducer] = _vma_reduced


# -- axis_index, axis_size ----------------------------------------------------------------------

def axis_index(axis_name: Any) -> Any:
    """The index of this member along the named axis (int32; under `vmap` the position in the
    batch). A tuple of names gives the row-major index over those axes together.

    Lowers to StableHLO `replica_id`/`partition_id` arithmetic.
    """
    if not isinstance(axis_name, (tuple, list)):
        return axis_index_p.bind(axis_name=axis_name)
    index = structural.convert_element_type(0, np.int32, weak_type=True)
    inner_size = 1
    for name in reversed(axis_name):
        term = axis_index(name)
        index = elementwise.add(index, elementwise.mul(term, _const(term, inner_size)))
        inner_size *= axis_size(name)
    return index


def axis_size(axis_name: Any) -> int:
    """The size of the named axis (the product of sizes for a tuple of names): a Python int,
    `psum(1, axis_name)`."""
    return _axis_size(axis_name)


def _axis_size(axis_name: Any, axis_index_groups: Any = None) -> int:
    return psum(1, axis_name, axis_index_groups=_canonical_groups(axis_index_groups))


def _axis_index_abstract_eval(*, axis_name: Any) -> ShapedArray:
    _check_axis_names(_as_axes(axis_name), "axis_index")
    return with_varying(ShapedArray((), np.dtype(np.int32)), _as_axes(axis_name))


def _axis_index_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, axis_name: Any) -> tuple[Any, int | None]:
    if axis_data.name not in _as_axes(axis_name):
        return axis_index_p.bind(axis_name=axis_name), None
    return structural.iota(np.int32, axis_data.size), 0


axis_index_p = Primitive("axis_index")
axis_index_p.def_abstract_eval(_axis_index_abstract_eval)
axis_index_p.def_impl(_unbound_impl("axis_index"))
# No operands, so never differentiated; the rule records that the output is integer-valued.
ad.defjvp_zero(axis_index_p)
batching.primitive_batchers[axis_index_p] = _axis_index_batcher
batching.axis_primitives.add(axis_index_p)


# -- all_gather, psum_scatter -------------------------------------------------------------------

def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """The values of `x` on every member of the named axis, stacked along a new axis at
    position `axis` (or, with `tiled`, concatenated along the existing axis `axis`); a pytree
    is gathered leaf by leaf.

    Lowers to StableHLO `all_gather`.
    """
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names:
        return x
    groups = _canonical_groups(axis_index_groups)
    size = _axis_size(names, groups)

    def bind(leaf: Any) -> Any:
        ndim = np.ndim(leaf)
        dimension = batching.canonicalize_axis(axis, ndim if tiled else ndim + 1)
        return all_gather_p.bind(leaf, all_gather_dimension=dimension, axis_name=names,
                                 axis_index_groups=groups, axis_size=size, tiled=tiled)

    return tree_util.tree_map(bind, x)


def _all_gather_abstract_eval(aval: ShapedArray, *, all_gather_dimension: int, axis_name: Any,
                              axis_index_groups: Any, axis_size: int, tiled: bool
                              ) -> ShapedArray:
    _check_axis_names(_as_axes(axis_name), "all_gather")
    shape = list(aval.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return aval.update(shape=tuple(shape))


def _all_gather_transpose(ct: Any, x: Any, *, all_gather_dimension: int, axis_name: Any,
                          axis_index_groups: Any, axis_size: int, tiled: bool) -> list[Any]:
    return [psum_scatter(ct, axis_name=axis_name, scatter_dimension=all_gather_dimension,
                         axis_index_groups=axis_index_groups, tiled=tiled)]


def _all_gather_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, all_gather_dimension: int,
                        axis_name: Any, axis_index_groups: Any, axis_size: int, tiled: bool
                        ) -> tuple[Any, int | None]:
    """Over this trace's axis, the gathered value is the batch itself moved to the gather
    position (or broadcast there when unmapped): the same on every example, so unmapped."""
    names = _as_axes(axis_name)
    (x,), (d,) = vals, dims
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                  axis_size=axis_size, tiled=tiled)
    if axis_data.name not in names:
        if d is None:
            return all_gather_p.bind(x, all_gather_dimension=all_gather_dimension,
                                     **params), None
        dimension = all_gather_dimension
        if d <= dimension:
            dimension += 1
        elif not tiled:  # a tiled gather keeps the rank
            d += 1
        return all_gather_p.bind(x, all_gather_dimension=dimension, **params), d
    _check_gather_over_this_axis(axis_data, names, axis_index_groups, axis_size)
    if d is None:
        shape = list(np.shape(x))
        shape.insert(all_gather_dimension, axis_size)
        kept = [i for i in range(len(shape)) if i != all_gather_dimension]
        y = structural.broadcast_in_dim(x, shape, kept)
    else:
        y = batching.moveaxis(x, d, all_gather_dimension)
    if tiled:
        y = _fold_axis(y, all_gather_dimension)
    return y, None


def _check_gather_over_this_axis(axis_data: batching.AxisData, names: tuple[Any, ...],
                                 axis_index_groups: Any, axis_size: int) -> None:
    # JAX's checks, in its order, for a gather or scatter over a vmapped axis.
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    if axis_size != axis_data.size:
        raise AssertionError("axis size doesn't match")
    if len(names) > 1:
        raise NotImplementedError("Please open a feature request!")


def _fold_axis(x: Any, axis: int) -> Any:
    """Merges axes `axis` and `axis + 1`."""
    shape = list(np.shape(x))
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return structural.reshape(x, shape)


def _split_axis(x: Any, axis: int, factor: int) -> Any:
    """Splits axis `axis` into (`factor`, size // factor)."""
    shape = list(np.shape(x))
    shape[axis:axis + 1] = [factor, shape[axis] // factor]
    return structural.reshape(x, shape)


all_gather_p = Primitive("all_gather")
all_gather_p.def_abstract_eval(_all_gather_abstract_eval)
all_gather_p.def_impl(_unbound_impl("all_gather"))
core.vma_rules[all_gather_p] = _vma_added
ad.deflinear2(all_gather_p, _all_gather_transpose)
batching.primitive_batchers[all_gather_p] = _all_gather_batcher
batching.axis_primitives.add(all_gather_p)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """`psum(x, axis_name)` of which each member keeps only its own part: slice
    `axis_index(axis_name)` along `scatter_dimension` (whose size must be the axis size and
    which is removed), or with `tiled` that chunk of the dimension (kept, divided by the axis
    size). The transpose of `all_gather`.

    Lowers to StableHLO `reduce_scatter`.
    """
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names:
        return x
    size = _axis_size(names, axis_index_groups)
    groups = _canonical_groups(axis_index_groups)
    return tree_util.tree_map(
        lambda leaf: reduce_scatter_p.bind(leaf, axis_name=names,
                                           scatter_dimension=scatter_dimension,
                                           axis_index_groups=groups, axis_size=size,
                                           tiled=tiled), x)


def _reduce_scatter_shape(shape: Sequence[int], scatter_dimension: int, axis_size: int,
                          tiled: bool) -> tuple[int, ...]:
    new_shape = list(shape)
    size = shape[scatter_dimension]
    if tiled:
        if size % axis_size != 0:
            raise ValueError(f"tiled reduce_scatter operand scatter dimension size {size} must "
                             f"be divisible by shard_count {axis_size}")
        new_shape[scatter_dimension] = size // axis_size
    else:
        if size != axis_size:
            raise ValueError(f"reduce_scatter operand scatter dimension size {size} must match "
                             f"shard count {axis_size}")
        del new_shape[scatter_dimension]
    return tuple(new_shape)


def _reduce_scatter_abstract_eval(aval: ShapedArray, *, axis_name: Any, scatter_dimension: int,
                                  axis_index_groups: Any, axis_size: int, tiled: bool
                                  ) -> ShapedArray:
    _check_axis_names(_as_axes(axis_name), "reduce_scatter")
    return aval.update(shape=_reduce_scatter_shape(aval.shape, scatter_dimension, axis_size,
                                                   tiled))


def _reduce_scatter_transpose(ct: Any, x: Any, *, axis_name: Any, scatter_dimension: int,
                              axis_index_groups: Any, axis_size: int, tiled: bool) -> list[Any]:
    return [all_gather(ct, axis_name=axis_name, axis_index_groups=axis_index_groups,
                       axis=scatter_dimension, tiled=tiled)]


def _reduce_scatter_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                            dims: Sequence[int | None], *, axis_name: Any,
                            scatter_dimension: int, axis_index_groups: Any, axis_size: int,
                            tiled: bool) -> tuple[Any, int | None]:
    """Over this trace's axis: the sum over the batch, whose part `k` (along the scatter
    dimension) belongs to example `k`, so the scatter dimension becomes the batch dimension."""
    names = _as_axes(axis_name)
    (x,), (d,) = vals, dims
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                  axis_size=axis_size, tiled=tiled)
    if axis_data.name not in names:
        if d is None:
            return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension,
                                         **params), None
        dimension = scatter_dimension
        if d <= dimension:
            dimension += 1
        elif not tiled:
            # The scatter dimension before the batch dimension is removed. (JAX's rule moves
            # the batch dimension the wrong way here and fails with an IndexError.)
            d -= 1
        return reduce_scatter_p.bind(x, scatter_dimension=dimension, **params), d
    _check_gather_over_this_axis(axis_data, names, axis_index_groups, axis_size)
    # JAX's rule does not check the scattered shape under vmap; the primitive's error does.
    shape = np.shape(x)
    per_example = shape if d is None else shape[:d] + shape[d + 1:]
    _reduce_scatter_shape(per_example, scatter_dimension, axis_size, tiled)
    if d is None:
        y = elementwise.mul(x, _const(x, axis_size))
    else:
        y = reductions.reduce_sum(x, (d,))
    if tiled:
        y = _split_axis(y, scatter_dimension, axis_size)
    return y, scatter_dimension


reduce_scatter_p = Primitive("reduce_scatter")
reduce_scatter_p.def_abstract_eval(_reduce_scatter_abstract_eval)
reduce_scatter_p.def_impl(_unbound_impl("reduce_scatter"))
core.vma_rules[reduce_scatter_p] = _vma_added
ad.deflinear2(reduce_scatter_p, _reduce_scatter_transpose)
batching.primitive_batchers[reduce_scatter_p] = _reduce_scatter_batcher
batching.axis_primitives.add(reduce_scatter_p)


# -- pcast (pvary) ---------------------------------------------------------------------------------

_PCAST_TO = ("reduced", "unreduced", "varying")


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """Casts every leaf of `x` along the named manual axes (`jax.lax.pcast`): to="varying"
    marks a value every device holds alike as one that may vary along them (`pvary`: the
    values are unchanged; a shard_map's `check_vma` then lets it leave split over them).

    Raises:
      TypeError: `axis_name` is a set.
      ValueError: `to` is not one of "varying", "unreduced", "reduced" (JAX's message);
        "unreduced" and "reduced" state casts, which justjax's types do not carry.
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in _PCAST_TO:
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TO)}")
    if to != "varying":
        raise ValueError(f"pcast to {to!r}: justjax's types carry no reduced or unreduced "
                         "state; only to='varying' is supported")
    _check_axis_names(axes, "pcast")
    return tree_util.tree_map(lambda leaf: pvary_p.bind(leaf, axes=tuple(axes)), x)


def _pvary_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                   dims: Sequence[int | None], *, axes: tuple[Any, ...]
                   ) -> tuple[Any, int | None]:
    named = tuple(a for a in axes if a != axis_data.name)
    (x,), (d,) = vals, dims
    return (pvary_p.bind(x, axes=named) if named else x), d


pvary_p = core.pvary_p
pvary_p.def_abstract_eval(lambda aval, *, axes: with_varying(aval, axes))
pvary_p.def_impl(lambda x, *, axes: x)
core.vma_rules[pvary_p] = _vma_added
# A value's bits do not change: the identity's rules (shard_map's transposition divides and
# sums cotangents at its boundary, where JAX's types transpose pvary to psum).
ad.deflinear2(pvary_p, lambda ct, x, *, axes: [ct])
batching.primitive_batchers[pvary_p] = _pvary_batcher
lowering.register_lowering(pvary_p, lambda ctx, x, *, axes: x)


# -- ppermute, pshuffle ---------------------------------------------------------------------------

def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Sends `x` from member `source` to member `dest` along the named axis, for each
    `(source, dest)` of `perm`; a member no pair sends to gets zeros. A pytree is permuted
    leaf by leaf.

    Lowers to StableHLO `collective_permute` (`source_target_pairs`).
    """
    names = _as_axes(axis_name)
    pairs = tuple((int(source), int(dest)) for source, dest in perm)
    sources = [source for source, _ in pairs]
    dests = [dest for _, dest in pairs]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
        raise ValueError(f"ppermute sources and destinations must be unique, got {pairs}.")
    return tree_util.tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=names, perm=pairs),
                              x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """`ppermute` with member `i` receiving from member `perm[i]`."""
    if set(perm) != set(range(len(perm))) or len(perm) != len(set(perm)):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def _ppermute_abstract_eval(aval: ShapedArray, *, axis_name: Any, perm: Any) -> ShapedArray:
    _check_axis_names(_as_axes(axis_name), "ppermute")
    return aval


def _ppermute_transpose(ct: Any, x: Any, *, axis_name: Any, perm: Any) -> list[Any]:
    inverse = tuple((dest, source) for source, dest in perm)
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


def _ppermute_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                      dims: Sequence[int | None], *, axis_name: Any, perm: Any
                      ) -> tuple[Any, int | None]:
    """Over this trace's axis, the batch is reordered: example `dest` takes example
    `source`, and an example no pair sends to gets zeros, as a device does under pmap
    (JAX's vmap asserts that `perm` covers the whole axis; pmap under a transformation is
    vmap here, so partial permutations are kept)."""
    (x,), (d,) = vals, dims
    names = _as_axes(axis_name)
    if axis_data.name not in names:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    if len(names) > 1:
        raise NotImplementedError("ppermute over several axes under vmap")
    if d is None:
        x = batching.broadcast(x, axis_data.size, 0)
        d = 0
    source_of = {dest: source for source, dest in perm}
    row_shape = list(np.shape(x))
    row_shape[d] = 1
    zeros = structural.broadcast_in_dim(_const(x, 0), row_shape, ())
    rows = [slicing.index_in_dim(x, source_of[i], d) if i in source_of else zeros
            for i in range(axis_data.size)]
    return structural.concatenate(rows, d), d


ppermute_p = Primitive("ppermute")
ppermute_p.def_abstract_eval(_ppermute_abstract_eval)
ppermute_p.def_impl(_unbound_impl("ppermute"))
core.vma_rules[ppermute_p] = _vma_added
ad.deflinear2(ppermute_p, _ppermute_transpose)
batching.primitive_batchers[ppermute_p] = _ppermute_batcher
batching.axis_primitives.add(ppermute_p)


# -- all_to_all -----------------------------------------------------------------------------------

def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Each member cuts `x` in (axis size) pieces along `split_axis` and sends piece `k` to
    member `k`; the pieces received are concatenated along `concat_axis` in member order.
    Untiled, `x.shape[split_axis]` must be the axis size: that axis is removed and the
    received pieces stack along a new axis at `concat_axis`. A pytree is exchanged leaf by
    leaf.

    Args:
      x: array(s) mapped over `axis_name`.
      axis_name: the name of a mapped axis (or a tuple of names).
      split_axis, concat_axis: positional axes of `x`.
      axis_index_groups: sub-groups of axis indices exchanging among themselves (pmap only).
      tiled: keep the split axis (divided by the axis size) instead of removing it.

    Returns:
      Array(s): StableHLO `all_to_all`. Untiled, the primitive works on `x` with a size-1
      axis inserted at `concat_axis` (a `broadcast_in_dim`), and that axis is squeezed from
      the split position afterwards, as JAX stages it.
    """
    groups = _canonical_groups(axis_index_groups)
    size = _axis_size(axis_name, groups)
    return tree_util.tree_map(
        lambda leaf: _all_to_all_leaf(leaf, axis_name, split_axis, concat_axis, groups, size,
                                      tiled), x)


def _all_to_all_leaf(x: Any, axis_name: Any, split_axis: int, concat_axis: int, groups: Any,
                     size: int, tiled: bool) -> Any:
    ndim = np.ndim(x)
    split_axis = batching.canonicalize_axis(split_axis, ndim)
    concat_axis = batching.canonicalize_axis(concat_axis, ndim)
    if tiled:
        if np.shape(x)[split_axis] % size:
            raise ValueError(f"The size of all_to_all split_axis ({np.shape(x)[split_axis]}) has "
                             f"to be divisible by the size of the named axis {axis_name} "
                             f"({size})")
    elif np.shape(x)[split_axis] != size:
        raise ValueError("all_to_all requires the size of the mapped axis axis_name to equal "
                         f"x.shape[split_axis], but they are {size} and "
                         f"{np.shape(x)[split_axis]} respectively.")
    elif split_axis < concat_axis:
        # `concat_axis` counts axes after the split axis is removed.
        concat_axis += 1
        x = structural.expand_dims(x, (concat_axis,))
    elif split_axis > concat_axis:
        x = structural.expand_dims(x, (concat_axis,))
        split_axis += 1
    out = all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                            axis_name=axis_name, axis_index_groups=groups, tiled=tiled)
    if not tiled and split_axis != concat_axis:
        out = structural.squeeze(out, (split_axis,))
    return out


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swaps the mapped axis `axis_name` with the positional axis `axis` of `x`: member `k`
    gets, at position `i` of `axis`, member `i`'s slice `k` of that axis. A pytree is swapped
    leaf by leaf.

    `x.shape[axis]` must equal the (group) size of the named axis. This is
    `all_to_all(x, axis_name, axis, axis)`, as in JAX.

    Args:
      x: array(s) mapped over `axis_name`.
      axis_name: the name of a mapped axis (vmap's or pmap's).
      axis: the positional axis of `x` that becomes mapped.
      axis_index_groups: sub-groups of axis indices that swap among themselves (pmap only).

    Returns:
      Array(s) of `x`'s shapes. Lowers to StableHLO `all_to_all`.
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def _group_size(axis_name: Any, axis_index_groups: Any) -> int:
    """The number of members exchanging: a group's size, or the named axes' sizes."""
    if axis_index_groups is not None:
        return len(axis_index_groups[0])
    return math.prod(_bound_axis_size(name) for name in _as_axes(axis_name))


def _all_to_all_abstract_eval(aval: ShapedArray, *, split_axis: int, concat_axis: int,
                              axis_name: Any, axis_index_groups: Any, tiled: bool
                              ) -> ShapedArray:
    # `tiled` only tells how the operand was prepared: the exchange is the same.
    _check_axis_names(_as_axes(axis_name), "all_to_all")
    size = _group_size(axis_name, axis_index_groups)
    shape = list(aval.shape)
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return aval.update(shape=tuple(shape), weak_type=False)


def _all_to_all_transpose(ct: Any, x: Any, *, split_axis: int, concat_axis: int,
                          axis_name: Any, axis_index_groups: Any, tiled: bool) -> list[Any]:
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis,
                              axis_name=axis_name, axis_index_groups=axis_index_groups,
                              tiled=True)]


def _all_to_all_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, split_axis: int, concat_axis: int,
                        axis_name: Any, axis_index_groups: Any, tiled: bool
                        ) -> tuple[Any, int | None]:
    """Over this trace's axis, example i's result is piece i (along the split axis) of every
    example j, concatenated along the concat axis in j's order: a reshape and a transpose
    between two reshapes (the sequence JAX stages)."""
    (x,), (d,) = vals, dims
    names = _as_axes(axis_name)
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
    if axis_data.name not in names:
        if d is None:
            return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                     **params), None
        return all_to_all_p.bind(x, split_axis=split_axis + (d <= split_axis),
                                 concat_axis=concat_axis + (d <= concat_axis), **params), d
    if axis_index_groups is not None or len(names) > 1:
        raise NotImplementedError("Please open a feature request!")
    n = axis_data.size
    if d is None:
        x, d = batching.broadcast(x, n, 0), 0
    if split_axis == concat_axis:
        axis = split_axis + (d <= split_axis)
        y = _split_axis(x, axis, n)
        batch = d + (axis <= d)
        perm = list(range(np.ndim(y)))
        perm[axis], perm[batch] = batch, axis
        return _fold_axis(structural.transpose(y, perm), axis), d
    y = _fold_axis(batching.moveaxis(x, d, concat_axis), concat_axis)
    return _split_axis(y, split_axis, n), split_axis


all_to_all_p = Primitive("all_to_all")
all_to_all_p.def_abstract_eval(_all_to_all_abstract_eval)
all_to_all_p.def_impl(_unbound_impl("all_to_all"))
core.vma_rules[all_to_all_p] = _vma_added
ad.deflinear2(all_to_all_p, _all_to_all_transpose)
batching.primitive_batchers[all_to_all_p] = _all_to_all_batcher
batching.axis_primitives.add(all_to_all_p)
