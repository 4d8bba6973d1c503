"""Batching (vmap) rules for the slicing primitives of `slicing.py`.

The rules follow JAX's, so `make_jaxpr(vmap(f))` prints what JAX prints:

- `slice`, `rev` and `pad` keep the batch axis where it is and leave it whole (a full slice,
  not reversed, not padded). A batched padding value is applied by padding with zeros and
  selecting the per-example value where a mask padded with False says "padding".
- `gather` folds the batch axis into its dimension numbers: a batched operand gets it as a
  full-size window (an offset dim in front of the output), batched indices get it as a
  leading batch dim of the indices, and both batched pair the two axes through
  `operand_batching_dims`/`start_indices_batching_dims`. The scatters do the same, after
  moving operand and updates' batch axes to the front (broadcasting them when unmapped, so a
  mapped update can be written into an unmapped operand).
- `dynamic_slice` and `dynamic_update_slice` with batched start indices are a gather and a
  scatter (mode CLIP, so the windows clamp as the dynamic ops do); the scalar start indices
  are stacked into one index vector, as JAX does even when they are not batched.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.interpreters import batching
from justjax._src.interpreters.batching import AxisData
from justjax._src.lax import slicing, structural
from justjax._src.lax.slicing import (
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, dynamic_slice_p,
    dynamic_update_slice_p, gather_p, pad_p, rev_p, scatter_add_p, scatter_max_p,
    scatter_min_p, scatter_mul_p, scatter_p, scatter_sub_p, slice_p)
from justjax._src.core import core

__all__: list[str] = []

Dims = Sequence[int | None]


def _shifted(dims: Sequence[int]) -> tuple[Any, ...]:
    """`dims` renumbered past a new leading axis (NumPy integers, as JAX's rules build them:
    they show in printed dimension numbers)."""
    return tuple(np.add(1, dims))


# -- slice and rev -----------------------------------------------------------------------------

def _slice_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                   start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                   strides: tuple[int, ...] | None) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    starts = list(start_indices)
    starts.insert(bdim, 0)
    limits = list(limit_indices)
    limits.insert(bdim, np.shape(operand)[bdim])
    steps = None
    if strides is not None:
        steps = list(strides)
        steps.insert(bdim, 1)
    return slicing.slice(operand, starts, limits, steps), bdim


batching.primitive_batchers[slice_p] = _slice_batcher


def _rev_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                 dimensions: tuple[int, ...]) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    return slicing.rev(operand, [d + 1 if d >= bdim else d for d in dimensions]), bdim


batching.primitive_batchers[rev_p] = _rev_batcher


# -- pad ---------------------------------------------------------------------------------------

def _pad_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                 padding_config: tuple) -> tuple[Any, int]:
    operand, padding_value = vals
    operand_bdim, value_bdim = dims
    if operand_bdim is None:
        operand_bdim = 0
        operand = structural.broadcast(operand, (np.shape(padding_value)[value_bdim],))
    config = list(padding_config)
    config.insert(operand_bdim, (0, 0, 0))
    if value_bdim is None:
        return slicing.pad(operand, padding_value, config), operand_bdim
    # A per-example padding value: pad with zeros, then select the value wherever a mask
    # (True on the operand's elements, padded with False) is False.
    dtype = core.get_aval(operand).dtype
    padded = slicing.pad(operand, np.zeros((), dtype), config)
    ones = structural.broadcast_in_dim(np.array(True), np.shape(operand), ())
    mask = slicing.pad(ones, np.array(False), config)
    values = structural.broadcast_in_dim(padding_value, np.shape(padded), (operand_bdim,))
    return structural.select(mask, padded, values), operand_bdim


batching.primitive_batchers[pad_p] = _pad_batcher


# -- gather ------------------------------------------------------------------------------------

def _gather_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                    dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                    unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                    fill_value: Any) -> tuple[Any, int]:
    operand, indices = vals
    operand_bdim, indices_bdim = dims
    dn = dimension_numbers
    kwargs = dict(mode=mode, fill_value=fill_value)
    if indices_bdim is None:
        # The batch axis is one more window dimension, taken whole: output axis 0.
        operand = batching.moveaxis(operand, operand_bdim, 0)
        new_dn = GatherDimensionNumbers(
            offset_dims=(0, *_shifted(dn.offset_dims)),
            collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
            start_index_map=_shifted(dn.start_index_map),
            operand_batching_dims=_shifted(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        sizes = (np.shape(operand)[0], *slice_sizes)
        return slicing.gather(operand, indices, new_dn, sizes, unique_indices=unique_indices,
                              indices_are_sorted=indices_are_sorted, **kwargs), 0
    if operand_bdim is None:
        indices = batching.moveaxis(indices, indices_bdim, 0)
        # The batch axis is one more leading batch dimension of the indices. Indices of
        # different examples may now repeat or be out of order.
        new_dn = GatherDimensionNumbers(
            offset_dims=tuple(1 + d for d in dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_shifted(dn.start_indices_batching_dims))
        return slicing.gather(operand, indices, new_dn, slice_sizes, unique_indices=False,
                              indices_are_sorted=False, **kwargs), 0
    # Both batched: the two leading axes are paired batching dims.
    operand = batching.moveaxis(operand, operand_bdim, 0)
    indices = batching.moveaxis(indices, indices_bdim, 0)
    size = np.shape(operand)[0]
    new_dn = GatherDimensionNumbers(
        offset_dims=_shifted(dn.offset_dims),
        collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
        start_index_map=_shifted(dn.start_index_map),
        operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
        start_indices_batching_dims=(0, *_shifted(dn.start_indices_batching_dims)))
    sizes = (0 if size == 0 else 1, *slice_sizes)
    return slicing.gather(operand, indices, new_dn, sizes, unique_indices=unique_indices,
                          indices_are_sorted=indices_are_sorted, **kwargs), 0


batching.primitive_batchers[gather_p] = _gather_batcher


# -- scatter -----------------------------------------------------------------------------------

def _scatter_batcher(prim: core.Primitive) -> Any:
    def rule(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
             dimension_numbers: ScatterDimensionNumbers, **params: Any) -> tuple[Any, int]:
        return _batched_scatter(prim, axis_data.size, vals, dims, dimension_numbers, params)
    return rule


def _batched_scatter(prim: core.Primitive, size: int, vals: Sequence[Any], dims: Dims,
                     dn: ScatterDimensionNumbers, params: dict) -> tuple[Any, int]:
    """`prim` on operand and updates batched first (broadcast there when unmapped): the
    batch axis is a leading update window when the indices are unmapped, else paired
    batching dims of operand and indices."""
    operand, indices, updates = vals
    operand_bdim, indices_bdim, updates_bdim = dims
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    updates = batching.bdim_at_front(updates, updates_bdim, size)
    if indices_bdim is None:
        new_dn = ScatterDimensionNumbers(
            update_window_dims=(0, *_shifted(dn.update_window_dims)),
            inserted_window_dims=_shifted(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shifted(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shifted(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    else:
        indices = batching.bdim_at_front(indices, indices_bdim, size)
        new_dn = ScatterDimensionNumbers(
            update_window_dims=_shifted(dn.update_window_dims),
            inserted_window_dims=_shifted(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shifted(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shifted(dn.scatter_indices_batching_dims)))
    return prim.bind(operand, indices, updates, dimension_numbers=new_dn, **params), 0


for _prim in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
              scatter_max_p):
    batching.primitive_batchers[_prim] = _scatter_batcher(_prim)


# -- dynamic_slice / dynamic_update_slice ------------------------------------------------------

def _stacked_start_indices(starts: Sequence[Any], dims: Dims) -> tuple[Any, int | None]:
    """The scalar start indices as one index vector ([n]), or batched as [size, n]."""
    if not starts:
        return np.array([], np.int32), None
    size = next((np.shape(s)[d] for s, d in zip(starts, dims, strict=True) if d is not None),
                None)
    if size is None:
        return structural.concatenate([structural.broadcast(s, (1,)) for s in starts], 0), None
    columns = [structural.broadcast_in_dim(s, (size, 1), (0,) if d is not None else ())
               for s, d in zip(starts, dims, strict=True)]
    return structural.concatenate(columns, 1), 0


def _dynamic_slice_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims, *,
                           slice_sizes: tuple[int, ...]) -> tuple[Any, int]:
    operand, *starts = vals
    operand_bdim, *start_dims = dims
    every_dim = tuple(range(len(starts)))
    dn = GatherDimensionNumbers(offset_dims=every_dim, collapsed_slice_dims=(),
                                start_index_map=every_dim)
    index, index_bdim = _stacked_start_indices(starts, start_dims)
    return _gather_batcher(axis_data, [operand, index], [operand_bdim, index_bdim],
                           dimension_numbers=dn, slice_sizes=slice_sizes, unique_indices=True,
                           indices_are_sorted=True, mode=GatherScatterMode.CLIP,
                           fill_value=None)


batching.primitive_batchers[dynamic_slice_p] = _dynamic_slice_batcher


def _dynamic_update_slice_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Dims
                                  ) -> tuple[Any, int]:
    operand, update, *starts = vals
    operand_bdim, update_bdim, *start_dims = dims
    every_dim = tuple(range(len(starts)))
    dn = ScatterDimensionNumbers(update_window_dims=every_dim, inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=every_dim)
    index, index_bdim = _stacked_start_indices(starts, start_dims)
    params = dict(update_jaxpr=None, update_consts=(), indices_are_sorted=True,
                  unique_indices=True, mode=GatherScatterMode.CLIP)
    return _batched_scatter(scatter_p, axis_data.size, [operand, index, update],
                            [operand_bdim, index_bdim, update_bdim], dn, params)


batching.primitive_batchers[dynamic_update_slice_p] = _dynamic_update_slice_batcher
