"""Autodiff rules (jvp and transpose) for the slicing primitives of `slicing.py`.

The rules follow JAX's formulas and equation order, so `make_jaxpr(grad(f))` prints what
JAX prints:

- `slice`, `dynamic_slice`, `pad`, `rev` and `gather` are linear in their operand (and `pad`
  in its padding value); their transposes scatter the cotangent back: `pad` with zeros,
  `dynamic_update_slice` into zeros, a slice of the cotangent, `scatter-add`.
- `dynamic_update_slice`, `scatter-add` and `scatter-sub` are linear in operand and update.
- `scatter-mul` is linear in its operand; its update derivative needs unique indices (as
  in JAX).
- `scatter-min`/`scatter-max` split the tangent evenly between every value that ties for
  the result (JAX's convention for max/min).
- `scatter` with unique indices is linear; with possibly repeated indices its jvp tags
  each update with an id, scatters the ids to find which update won each slot, and builds
  the result with `scatter-add` of the winners (so no transpose of a non-unique `scatter`
  is ever needed).

Out-of-bounds behaviour carries over: a transposed gather keeps its mode (a filled window
gets no cotangent, a clipped one accumulates at the clamped place); a transposed scatter
gathers with the scatter's mode and a fill of zero, so dropped updates get no cotangent.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.interpreters import ad
from justjax._src.lax import elementwise, reductions, structural
from justjax._src.lax import slicing
from justjax._src.lax.slicing import (
    GatherDimensionNumbers, ScatterDimensionNumbers, dynamic_slice_p, dynamic_update_slice_p,
    gather_p, pad_p, rev_p, scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p,
    scatter_p, scatter_sub_p, slice_p)

__all__: list[str] = []


# -- helpers -----------------------------------------------------------------------------------

def _full(shape: Sequence[int], value: Any, dtype: np.dtype, weak_type: bool = False) -> Any:
    """`lax.full`: a broadcast scalar constant (the scalar itself for shape ())."""
    if weak_type:
        scalar = structural.convert_element_type(value, dtype, weak_type=True)
    else:
        scalar = np.array(value, dtype)
    if not tuple(shape):
        return scalar
    return structural.broadcast_in_dim(scalar, tuple(shape), ())


def _full_like(x: Any, value: Any, dtype: Any = None) -> Any:
    """`lax.full_like`: keeps `x`'s weak type unless a dtype is given."""
    aval = core.get_aval(x)
    if dtype is None:
        return _full(aval.shape, value, aval.dtype, aval.weak_type)
    return _full(aval.shape, value, np.dtype(dtype))


def _scalar_like(x: Any, value: Any) -> np.ndarray:
    """A constant scalar of `x`'s dtype (a literal in jaxprs, like JAX's Python scalars)."""
    return np.array(value, core.get_aval(x).dtype)


def _zero_scalar(x: Any) -> np.ndarray:
    return _scalar_like(x, 0)


def _ct_zero_or_none(arg: Any) -> Any:
    """The cotangent of `arg` for a symbolic-zero output cotangent."""
    return ad.Zero(arg.aval) if ad.is_undefined_primal(arg) else None


def _shape_of(x: Any) -> tuple[int, ...]:
    return x.aval.shape if ad.is_undefined_primal(x) else core.get_aval(x).shape


def _inverse_gather_dnums(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    """The gather reading back exactly the places a scatter with `dn` writes."""
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)


def _inverse_scatter_dnums(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    """The scatter writing to exactly the places a gather with `dn` reads."""
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)


def _inverse_slice_sizes(operand_ndim: int, dn: ScatterDimensionNumbers,
                         updates_shape: Sequence[int]) -> list[int]:
    """Slice sizes of the inverse gather: 1 on inserted and batching dims, the update window
    sizes (in order) on the others."""
    window_sizes = iter(updates_shape[d] for d in dn.update_window_dims)
    singular = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    return [1 if d in singular else next(window_sizes) for d in range(operand_ndim)]


def _gather_back(x: Any, indices: Any, dn: ScatterDimensionNumbers,
                 updates_shape: Sequence[int], **kwargs: Any) -> Any:
    """The windows of `x` a scatter with `dn` and updates of `updates_shape` writes."""
    sizes = _inverse_slice_sizes(core.get_aval(x).ndim, dn, updates_shape)
    return slicing.gather(x, indices, _inverse_gather_dnums(dn), sizes, **kwargs)


# -- slice -------------------------------------------------------------------------------------

def _slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
               ) -> tuple[Any, Any]:
    operand, = primals
    tangent, = tangents
    out = slice_p.bind(operand, **params)
    if type(tangent) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, slice_p.bind(tangent, **params)


def _slice_transpose(ct: Any, operand: Any, *, start_indices: tuple[int, ...],
                     limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                     ) -> list[Any]:
    # The slice taken back into place: pad low by the start, high by what lies past the last
    # element taken, and interior by stride - 1 (NumPy int64 values, as JAX's params hold).
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval)]
    operand_shape = np.asarray(operand.aval.shape, np.int64)
    rank = len(start_indices)
    if strides is None or all(int(s) == 1 for s in strides):
        high = operand_shape - np.asarray(limit_indices, np.int64).reshape(rank)
        interior: Sequence[Any] = (0,) * rank
    else:
        ct_shape = np.asarray(core.get_aval(ct).shape, np.int64)
        step = np.asarray(strides, np.int64)
        spans = np.where(ct_shape == 0, 0, (ct_shape - 1) * step + 1)
        high = operand_shape - (np.asarray(start_indices, np.int64) + spans)
        interior = step - 1
    config = list(zip(start_indices, high, interior, strict=True))
    return [slicing.pad(ct, _zero_scalar(ct), config)]


ad.primitive_jvps[slice_p] = _slice_jvp
ad.primitive_transposes[slice_p] = _slice_transpose


# -- dynamic_slice / dynamic_update_slice ------------------------------------------------------

def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                       slice_sizes: tuple[int, ...]) -> tuple[Any, Any]:
    operand, *starts = primals
    tangent = tangents[0]
    if type(tangent) is not ad.Zero:
        tangent = dynamic_slice_p.bind(tangent, *starts, slice_sizes=slice_sizes)
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=slice_sizes), tangent


def _dynamic_slice_transpose(ct: Any, operand: Any, *starts: Any,
                             slice_sizes: tuple[int, ...]) -> list[Any]:
    # The window written into zeros at the same (clamped) start.
    unused = [None] * len(starts)
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), *unused]
    zeros = _full(operand.aval.shape, 0, operand.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts), *unused]


ad.primitive_jvps[dynamic_slice_p] = _dynamic_slice_jvp
ad.primitive_transposes[dynamic_slice_p] = _dynamic_slice_transpose


def _dus_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    operand, update, *starts = primals
    g_operand, g_update = tangents[:2]
    out = dynamic_update_slice_p.bind(operand, update, *starts)
    if type(g_operand) is ad.Zero and type(g_update) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    g_operand = ad.instantiate_zeros(g_operand)
    g_update = ad.instantiate_zeros(g_update)
    return out, dynamic_update_slice_p.bind(g_operand, g_update, *starts)


def _dus_transpose(ct: Any, operand: Any, update: Any, *starts: Any) -> list[Any]:
    # The operand's cotangent is ct with the window zeroed; the update's is that window.
    unused = [None] * len(starts)
    if type(ct) is ad.Zero:
        return [_ct_zero_or_none(operand), _ct_zero_or_none(update), *unused]
    update_shape = _shape_of(update)
    ct_aval = core.get_aval(ct)
    zeros = _full(update_shape, 0, ct_aval.dtype, ct_aval.weak_type)
    operand_ct = update_ct = None
    if ad.is_undefined_primal(operand):
        operand_ct = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if ad.is_undefined_primal(update):
        update_ct = dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(update_shape))
    return [operand_ct, update_ct, *unused]


ad.primitive_jvps[dynamic_update_slice_p] = _dus_jvp
ad.primitive_transposes[dynamic_update_slice_p] = _dus_transpose


# -- pad and rev -------------------------------------------------------------------------------

def _pad_transpose(ct: Any, operand: Any, padding_value: Any, *, padding_config: tuple
                   ) -> list[Any]:
    # The operand's cotangent: undo the low/high padding (negative padding pads back what was
    # cropped, with zeros), then take every (interior + 1)-th element. The padding value's
    # cotangent is everything else: the total minus what went to the operand.
    rank = len(padding_config)
    lows = np.asarray([c[0] for c in padding_config], np.int64).reshape(rank)
    highs = np.asarray([c[1] for c in padding_config], np.int64).reshape(rank)
    interiors = np.asarray([c[2] for c in padding_config], np.int64).reshape(rank)
    unpadded = slicing.pad(ct, _zero_scalar(ct),
                           list(zip(-lows, -highs, np.zeros_like(interiors), strict=True)))
    operand_ct = slicing.slice(unpadded, list(np.zeros_like(lows)),
                               core.get_aval(unpadded).shape, list(interiors + 1))
    value_ct = None
    if ad.is_undefined_primal(padding_value):
        axes = list(range(rank))
        # JAX's rule assumes the operand is linear too; the sum below is right either way.
        value_ct = elementwise.sub(reductions.reduce_sum(ct, axes),
                                   reductions.reduce_sum(operand_ct, axes))
    return [operand_ct if ad.is_undefined_primal(operand) else None, value_ct]


ad.deflinear2(pad_p, _pad_transpose)
ad.deflinear2(rev_p, lambda ct, operand, *, dimensions: [slicing.rev(ct, dimensions)])


# -- gather ------------------------------------------------------------------------------------

def _gather_jvp(g: Any, operand: Any, indices: Any, *, dimension_numbers: Any,
                slice_sizes: tuple[int, ...], unique_indices: bool, indices_are_sorted: bool,
                mode: Any, fill_value: Any) -> Any:
    # Filled windows are constants: their tangent is 0.
    return slicing.gather(g, indices, dimension_numbers, slice_sizes,
                          unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                          mode=mode, fill_value=0)


def _gather_transpose(ct: Any, operand: Any, indices: Any, *, dimension_numbers: Any,
                      slice_sizes: tuple[int, ...], unique_indices: bool,
                      indices_are_sorted: bool, mode: Any, fill_value: Any) -> list[Any]:
    # scatter-add with the same mode: filled (out-of-bounds) windows are dropped, clipped
    # ones accumulate where the gather read them.
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), None]
    zeros = _full(operand.aval.shape, 0, core.get_aval(ct).dtype)
    out = slicing.scatter_add(zeros, indices, ct, _inverse_scatter_dnums(dimension_numbers),
                              unique_indices=unique_indices,
                              indices_are_sorted=indices_are_sorted, mode=mode)
    return [out, None]


ad.defjvp(gather_p, _gather_jvp, None)
ad.primitive_transposes[gather_p] = _gather_transpose


# -- scatter-add / scatter-sub -----------------------------------------------------------------

def _scatter_linear_jvp(prim: core.Primitive) -> Any:
    """The jvp of a scatter linear in operand and updates: the same scatter on tangents."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.from_primal_value(out)
        g_operand = ad.instantiate_zeros(g_operand)
        g_updates = ad.instantiate_zeros(g_updates)
        return out, prim.bind(g_operand, indices, g_updates, **params)
    return jvp


def _scatter_addsub_transpose(negate: bool) -> Any:
    def transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                  dimension_numbers: ScatterDimensionNumbers, mode: Any, **_: Any
                  ) -> list[Any]:
        if type(ct) is ad.Zero:
            return [_ct_zero_or_none(operand), None, _ct_zero_or_none(updates)]
        operand_ct = ct if ad.is_undefined_primal(operand) else None
        updates_ct = None
        if ad.is_undefined_primal(updates):
            # Dropped (out-of-bounds) updates read the fill value 0.
            updates_ct = _gather_back(ct, indices, dimension_numbers, _shape_of(updates),
                                      mode=mode, fill_value=0)
            if negate:
                updates_ct = elementwise.neg(updates_ct)
        return [operand_ct, None, updates_ct]
    return transpose


ad.primitive_jvps[scatter_add_p] = _scatter_linear_jvp(scatter_add_p)
ad.primitive_transposes[scatter_add_p] = _scatter_addsub_transpose(negate=False)
ad.primitive_jvps[scatter_sub_p] = _scatter_linear_jvp(scatter_sub_p)
ad.primitive_transposes[scatter_sub_p] = _scatter_addsub_transpose(negate=True)


# -- scatter-mul -------------------------------------------------------------------------------

_SCATTER_MUL_UNIQUE = "scatter_mul gradients are only implemented if `unique_indices=True`"


def _scatter_mul_jvp_operand(g: Any, operand: Any, indices: Any, updates: Any, **params: Any
                             ) -> Any:
    return scatter_mul_p.bind(g, indices, updates, **params)


def _scatter_mul_jvp_updates(g: Any, operand: Any, indices: Any, updates: Any, *,
                             dimension_numbers: ScatterDimensionNumbers,
                             indices_are_sorted: bool, unique_indices: bool, mode: Any,
                             **_: Any) -> Any:
    # With unique indices each slot is multiplied by at most one update: d(x*u) = x*du there.
    if not unique_indices:
        raise NotImplementedError(_SCATTER_MUL_UNIQUE)
    scattered = slicing.scatter_add(_full_like(operand, 0), indices, g, dimension_numbers,
                                    indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
    return elementwise.mul(operand, scattered)


def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers,
                           indices_are_sorted: bool, unique_indices: bool, mode: Any,
                           **_: Any) -> list[Any]:
    if type(ct) is ad.Zero:
        return [_ct_zero_or_none(operand), None, _ct_zero_or_none(updates)]
    operand_ct = updates_ct = None
    if ad.is_undefined_primal(operand):
        operand_ct = slicing.scatter_mul(ct, indices, updates, dimension_numbers,
                                         indices_are_sorted=indices_are_sorted,
                                         unique_indices=unique_indices, mode=mode)
    if ad.is_undefined_primal(updates):
        if not unique_indices:
            raise NotImplementedError(_SCATTER_MUL_UNIQUE)
        updates_ct = _gather_back(elementwise.mul(ct, operand), indices, dimension_numbers,
                                  _shape_of(updates), mode=mode, fill_value=0)
    return [operand_ct, None, updates_ct]


ad.defjvp(scatter_mul_p, _scatter_mul_jvp_operand, None, _scatter_mul_jvp_updates)
ad.primitive_transposes[scatter_mul_p] = _scatter_mul_transpose


# -- scatter-min / scatter-max -----------------------------------------------------------------

def _scatter_extremal_jvp(prim: core.Primitive) -> Any:
    """JAX's tie convention: every value equal to the result (the original operand value and
    each update reaching the slot) gets an equal share of the tangent."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
            dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
            unique_indices: bool, mode: Any, **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        dn = dimension_numbers
        out = prim.bind(operand, indices, updates, dimension_numbers=dn,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode, **params)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.from_primal_value(out)
        g_operand = ad.instantiate_zeros(g_operand)
        g_updates = ad.instantiate_zeros(g_updates)
        shape = core.get_aval(updates).shape
        # JAX gathers and counts with the default modes, which disagree with a CLIP scatter
        # about out-of-bounds indices (NaN tangents, wrong transposes); CLIP itself agrees.
        clip = mode if mode == slicing.GatherScatterMode.CLIP else None

        def back(x: Any) -> Any:
            return _gather_back(x, indices, dn, shape, mode=clip)

        def count(x: Any, ones: Any) -> Any:
            return back(slicing.scatter_add(x, indices, ones, dn, mode=clip))

        initial = back(operand)
        target = back(out)
        won = elementwise.eq(updates, target)
        retained = elementwise.eq(initial, target)
        zeros = _full_like(operand, 0)
        num_updates = count(zeros, structural.select(won, _full_like(updates, 1),
                                                     _full_like(updates, 0)))
        num_refs = count(_full_like(operand, 0), _full_like(updates, 1))
        one = _scalar_like(num_updates, 1)
        updates_share = structural.select(
            retained, elementwise.div(one, elementwise.add(num_updates, one)),
            elementwise.div(one, num_updates))
        updates_coef = structural.select(won, updates_share, _full_like(updates, 0))
        operand_share = structural.select(
            retained, elementwise.div(one, elementwise.add(num_updates, one)),
            _full_like(num_updates, 0))
        # Each of the num_refs updates aimed at a slot removes its share of the operand's
        # tangent there (added back by scatter-add below), leaving the retained share.
        operand_coef = elementwise.div(
            elementwise.add(_scalar_like(operand_share, -1), operand_share), num_refs)
        g_target = back(g_operand)
        g_scattered = elementwise.add(elementwise.mul(g_target, operand_coef),
                                      elementwise.mul(g_updates, updates_coef))
        g_out = slicing.scatter_add(g_operand, indices, g_scattered, dn,
                                    indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
        return out, g_out
    return jvp


ad.primitive_jvps[scatter_min_p] = _scatter_extremal_jvp(scatter_min_p)
ad.primitive_jvps[scatter_max_p] = _scatter_extremal_jvp(scatter_max_p)


# -- scatter -----------------------------------------------------------------------------------

def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, update_jaxpr: Any,
                 update_consts: Any, dimension_numbers: ScatterDimensionNumbers,
                 indices_are_sorted: bool, unique_indices: bool, mode: Any
                 ) -> tuple[Any, Any]:
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dn = dimension_numbers
    params = dict(update_jaxpr=update_jaxpr, update_consts=update_consts, dimension_numbers=dn,
                  indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode)
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, ad.Zero.from_primal_value(out)
    g_operand = ad.instantiate_zeros(g_operand)
    g_updates = ad.instantiate_zeros(g_updates)
    if unique_indices:
        # No slot is written twice: scatter is linear in (operand, updates).
        return (scatter_p.bind(operand, indices, updates, **params),
                scatter_p.bind(g_operand, indices, g_updates, **params))
    # Which update wins a slot written several times is up to the scatter, so ask it: give
    # every update (window) an id from 1, scatter the ids into zeros, and read them back. A
    # slot left 0 keeps the operand; an update whose id came back won. The primal and the
    # tangent are then scatter-adds of the masked operand and the winning updates.
    updates_shape = core.get_aval(updates).shape
    ids_shape = list(updates_shape)
    for d in dn.update_window_dims:
        ids_shape[d] = 1
    num_ids = math.prod(ids_shape)
    id_dtype = np.dtype(np.uint64) if num_ids > np.iinfo(np.uint32).max else np.dtype(np.uint32)
    id_dtype = dtypes.canonicalize_dtype(id_dtype)
    update_ids = elementwise.add(
        structural.reshape(structural.iota(id_dtype, num_ids), ids_shape),
        _full_like(updates, 1, id_dtype))
    scattered_ids = slicing.scatter(_full(core.get_aval(operand).shape, 0, id_dtype), indices,
                                    update_ids, dn, indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
    gathered_ids = _gather_back(scattered_ids, indices, dn, updates_shape)

    def keep_operand(x: Any) -> Any:
        untouched = elementwise.eq(scattered_ids, _full_like(scattered_ids, 0))
        return structural.select(untouched, x, _full_like(x, 0))

    def keep_winners(x: Any) -> Any:
        return structural.select(elementwise.eq(update_ids, gathered_ids), x, _full_like(x, 0))

    masked_operand = keep_operand(operand)
    masked_updates = keep_winners(updates)
    masked_g_operand = keep_operand(g_operand)
    masked_g_updates = keep_winners(g_updates)
    add_params = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      mode=mode)
    out = slicing.scatter_add(masked_operand, indices, masked_updates, dn, **add_params)
    g_out = slicing.scatter_add(masked_g_operand, indices, masked_g_updates, dn, **add_params)
    return out, g_out


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                       update_jaxpr: Any, update_consts: Any,
                       dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                       unique_indices: bool, mode: Any) -> list[Any]:
    # Only the unique-indices scatter is linear (the jvp never stages another one).
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    if type(ct) is ad.Zero:
        return [_ct_zero_or_none(operand), None, _ct_zero_or_none(updates)]
    updates_shape = _shape_of(updates)
    operand_ct = updates_ct = None
    if ad.is_undefined_primal(operand):
        # The overwritten slots pass nothing back to the operand.
        zeros = _full(updates_shape, 0, core.get_aval(ct).dtype)
        operand_ct = slicing.scatter(ct, indices, zeros, dimension_numbers,
                                     indices_are_sorted=indices_are_sorted,
                                     unique_indices=True, mode=mode)
    if ad.is_undefined_primal(updates):
        updates_ct = _gather_back(ct, indices, dimension_numbers, updates_shape, mode=mode,
                                  fill_value=0)
    return [operand_ct, None, updates_ct]


ad.primitive_jvps[scatter_p] = _scatter_jvp
ad.primitive_transposes[scatter_p] = _scatter_transpose
