"""Approximate top-k (`lax.approx_max_k`, `lax.approx_min_k`) and `approx_top_k_p`.

On TPU XLA reduces the operand in bins before an exact top-k; on CPU (XLA's fallback) the
result is exact: the `k` largest (smallest) entries along the reduction dimension, or,
with `aggregate_to_topk=False`, as many as the TPU reduction would leave (XLA's
`ApproxTopKReductionOutputSize`, reproduced by `reduction_output_size`), sorted.

JAX lowers the primitive to a `stablehlo.custom_call @ApproxTopK` with a comparator
function, which only XLA can run; justjax lowers it to what that call computes on CPU:
CHLO `top_k` for the largest entries (XLA's total order: NaN above everything, 0 above -0)
and a stable `sort` of (value, index) for the smallest (0 and -0 equal, NaNs last).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from justjax._src import errors
from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import gather_scatter, slicing, sorting, structural

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]


def reduction_output_size(input_size: int, rank: int, k: int, recall_target: float,
                          aggregate_to_topk: bool, input_size_override: int
                          ) -> tuple[int, int]:
    """(output size along the reduction dimension, log2 of the reduction) as XLA computes
    them for TPU: the operand is cut into bins of 2^r elements, as many bins as the recall
    target needs for `k` (at least one tile), padded to whole tiles."""
    if aggregate_to_topk:
        return k, -1
    tiling = 1024 if rank == 1 else 128
    if input_size <= tiling:
        return input_size, 0
    if input_size_override >= 0 and input_size_override < input_size:
        raise errors.JaxRuntimeError(
            f"INVALID_ARGUMENT: reduction_input_size_override: {input_size_override} should "
            f"be greater equals to operands[reduction_dim]: {input_size}")
    logical = input_size_override if input_size_override >= 0 else input_size
    if not 0.0 < recall_target <= 1.0:
        raise errors.JaxRuntimeError("INVALID_ARGUMENT: recall_target should range in (0,1]")
    if k == 1:
        # One bin per tile: the reduction that leaves a single tile.
        log2_reduction = math.ceil(math.log2(-(-logical // tiling)))
    elif recall_target == 1.0:
        return input_size, 0
    else:
        # Bins needed for the recall target: (k - 1) / -log(recall), at least one tile.
        bins = min(max(int((1.0 - k) / math.log(recall_target)), tiling), logical)
        log2_reduction = (logical // bins).bit_length() - 1
        if log2_reduction == 0:
            return input_size, 0
        if input_size_override >= 0:
            # A shard of a larger operand: reduced at most until this shard's tiles (but
            # one) fit in one.
            tiles = -(-input_size // tiling)
            log2_reduction = min(log2_reduction, max(tiles - 2, 0).bit_length())
    reduced = -(-input_size // (1 << log2_reduction))
    return -(-reduced // tiling) * tiling, log2_reduction


def _abstract_eval(operand: ShapedArray, *, k: int, reduction_dimension: int,
                   recall_target: float, is_max_k: bool, reduction_input_size_override: int,
                   aggregate_to_topk: bool) -> list[ShapedArray]:
    """JAX's checks and messages; the reduction dimension shrinks to the output size."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if operand.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
    dims = list(operand.shape)
    if dims[reduction_dimension] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim "
                         f"{dims[reduction_dimension]}, got {k}")
    if not dtypes.is_float(operand.dtype):
        raise ValueError("operand must be a floating type")
    dims[reduction_dimension] = reduction_output_size(
        dims[reduction_dimension], len(dims), k, recall_target, aggregate_to_topk,
        reduction_input_size_override)[0]
    return [operand.update(shape=tuple(dims)),
            ShapedArray(tuple(dims), np.dtype(np.int32))]


approx_top_k_p = Primitive("approx_top_k", multiple_results=True)
approx_top_k_p.def_abstract_eval(_abstract_eval)
dispatch.def_backend_impl(approx_top_k_p)


def _exact(operand: Any, *, size: int, axis: int, is_max_k: bool) -> list[Any]:
    """What XLA's CPU fallback computes: the exact `size` extreme entries along `axis`."""
    if is_max_k:
        return sorting.top_k(operand, size, axis=axis)
    shape = core.get_aval(operand).shape
    iota = structural.broadcasted_iota(np.int32, shape, axis)
    values, indices = sorting.sort((operand, iota), dimension=axis, is_stable=True,
                                   num_keys=1)
    return [slicing.slice_in_dim(values, 0, size, axis=axis),
            slicing.slice_in_dim(indices, 0, size, axis=axis)]


def _lowering(ctx: lowering.LoweringRuleContext, operand: Any, *, k: int,
              reduction_dimension: int, recall_target: float, is_max_k: bool,
              reduction_input_size_override: int, aggregate_to_topk: bool) -> list[Any]:
    axis = reduction_dimension % len(ctx.avals_in[0].shape)
    # What XLA's verifier of the ApproxTopK call rejects (also when aggregating).
    if not 0.0 < recall_target <= 1.0:
        raise errors.JaxRuntimeError("UNKNOWN: 'stablehlo.custom_call' op recall_target out "
                                     "of range")
    if 0 <= reduction_input_size_override < ctx.avals_in[0].shape[axis]:
        raise errors.JaxRuntimeError("UNKNOWN: 'stablehlo.custom_call' op "
                                     "reduction_input_size_override out of range")
    size = ctx.avals_out[0].shape[axis]
    rule = lowering.lower_fun(_exact, multiple_results=True)
    return rule(ctx, operand, size=size, axis=axis, is_max_k=is_max_k)


lowering.register_lowering(approx_top_k_p, _lowering)


def _take_along(tangent: Any, indices: Any, axis: int) -> Any:
    """`tangent` at `indices` along `axis` (the other axes matched one to one)."""
    ndim = len(core.get_aval(tangent).shape)
    others = tuple(d for d in range(ndim) if d != axis)
    dnums = gather_scatter.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
        operand_batching_dims=others, start_indices_batching_dims=others)
    return gather_scatter.gather(tangent, structural.expand_dims(indices, (ndim,)), dnums,
                          (1,) * ndim, mode=gather_scatter.GatherScatterMode.PROMISE_IN_BOUNDS)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
         ) -> tuple[list[Any], list[Any]]:
    """The tangent at the chosen positions; the indices have none."""
    operand, = primals
    tangent, = tangents
    values, indices = approx_top_k_p.bind(operand, **params)
    axis = params["reduction_dimension"] % len(core.get_aval(operand).shape)
    out = (ad.Zero.from_primal_value(values) if type(tangent) is ad.Zero
           else _take_along(tangent, indices, axis))
    return [values, indices], [out, ad.Zero.from_primal_value(indices)]


ad.primitive_jvps[approx_top_k_p] = _jvp


def _batcher(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
             *, reduction_dimension: int, **params: Any) -> tuple[list[Any], list[int]]:
    operand, = vals
    bdim, = dims
    kept = [d for d in range(len(core.get_aval(operand).shape)) if d != bdim]
    outs = approx_top_k_p.bind(operand, reduction_dimension=kept[reduction_dimension],
                               **params)
    return outs, [bdim, bdim]


batching.primitive_batchers[approx_top_k_p] = _batcher


def _approx_top_k(operand: Any, k: int, reduction_dimension: int, recall_target: float,
                  reduction_input_size_override: int, aggregate_to_topk: bool,
                  is_max_k: bool) -> list[Any]:
    # A list, as JAX returns it.
    return approx_top_k_p.bind(
        operand, k=k, reduction_dimension=reduction_dimension, recall_target=recall_target,
        is_max_k=is_max_k, reduction_input_size_override=reduction_input_size_override,
        aggregate_to_topk=aggregate_to_topk)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The `k` largest entries along `reduction_dimension` and their int32 indices, largest
    first (`lax.approx_max_k`; exact on CPU, as XLA's fallback).

    Args:
      operand: a float array of at least one dimension.
      k: how many entries.
      reduction_dimension: the dimension searched.
      recall_target: the recall the TPU algorithm aims at (shapes the output only when not
        `aggregate_to_topk`).
      reduction_input_size_override: the logical size of the dimension, if larger.
      aggregate_to_topk: return exactly `k` entries; else as many as the TPU reduction
        leaves, sorted.
    Returns:
      `[values, indices]`.
    """
    return _approx_top_k(operand, k, reduction_dimension, recall_target,
                         reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The `k` smallest entries along `reduction_dimension` and their int32 indices,
    smallest first (`lax.approx_min_k`; exact on CPU, as XLA's fallback). Arguments as
    `approx_max_k`'s.

    Returns:
      `[values, indices]`.
    """
    return _approx_top_k(operand, k, reduction_dimension, recall_target,
                         reduction_input_size_override, aggregate_to_topk, False)
