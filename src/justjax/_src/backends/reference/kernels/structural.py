"""Reference kernels of StableHLO's data-movement and contraction ops: broadcast_in_dim,
reshape, transpose, iota, concatenate, slice, dynamic_slice, dynamic_update_slice, pad,
reverse, gather, scatter, dot_general and convolution.

The shape arithmetic they share with lax's shape rules lives in `numerics.shapes`. Semantics
are StableHLO's as XLA's CPU backend runs them: dynamic_slice/dynamic_update_slice and
gather clamp start indices so the whole window is in bounds; scatter skips every update
window that is not entirely in bounds; contractions accumulate integers with wraparound and
float16/bfloat16 in float32.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op
from justjax._src.numerics.conversions import convert_values, round_from_float32
from justjax._src.numerics.shapes import free_dims, gather_out_shape, stride_dim


# ---------------------------------------------------------------------------------------------
# Broadcasting, iota, padding, windows.

def broadcast_in_dim(x: np.ndarray, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> np.ndarray:
    """`x` broadcast into `shape`, operand dim i going to `broadcast_dimensions[i]` (which
    need not be increasing: an implicit transpose)."""
    x = np.transpose(x, np.argsort(broadcast_dimensions))
    expanded = [1] * len(shape)
    for operand_dim, out_dim in enumerate(sorted(broadcast_dimensions)):
        expanded[out_dim] = x.shape[operand_dim]
    return np.broadcast_to(x.reshape(expanded), tuple(shape))


def iota(dtype: Any, shape: Sequence[int], dimension: int) -> np.ndarray:
    """Counts 0, 1, ... along `dimension` of an array of `shape`."""
    line = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), tuple(shape))


def pad(x: np.ndarray, value: Any, low: Sequence[int], high: Sequence[int],
        interior: Sequence[int]) -> np.ndarray:
    """StableHLO `pad`: `interior[d]` copies of `value` between elements, `low`/`high` at the
    ends; negative `low`/`high` crop."""
    out_shape = tuple(int(lo) + int(hi) + (max(0, 1 + (int(i) + 1) * (d - 1)) if i else d)
                      for lo, hi, i, d in zip(low, high, interior, x.shape, strict=True))
    out = np.full(out_shape, value, dtype=x.dtype)
    sources, targets = [], []
    for lo, step, size, out_size in zip(low, interior, x.shape, out_shape, strict=True):
        # Element k lands at lo + k * (interior + 1); negative padding crops what falls outside.
        positions = int(lo) + np.arange(size) * (int(step) + 1)
        kept = (positions >= 0) & (positions < out_size)
        sources.append(np.nonzero(kept)[0])
        targets.append(positions[kept])
    out[np.ix_(*targets)] = x[np.ix_(*sources)]
    return out


def clamped_window(starts: Sequence[Any], shape: Sequence[int],
                   sizes: Sequence[int]) -> tuple[slice, ...]:
    """The window of `sizes` at `starts`, each start clamped into [0, dim - size] so the whole
    window is in bounds (StableHLO `dynamic_slice` / `dynamic_update_slice`)."""
    return tuple(slice(s, s + n) for s, n in (
        (min(max(int(start), 0), dim - size), size)
        for start, dim, size in zip(starts, shape, sizes, strict=True)))


def dynamic_update_slice(x: np.ndarray, update: np.ndarray,
                         starts: Sequence[Any]) -> np.ndarray:
    """A copy of `x` with `update` written at the clamped `starts`."""
    out = x.copy()
    out[clamped_window(starts, x.shape, update.shape)] = update
    return out


# ---------------------------------------------------------------------------------------------
# Gather and scatter index arithmetic.

def _on_axes(values: np.ndarray, axes: Sequence[int], rank: int) -> np.ndarray:
    """Reshapes `values` (dims in the order of `axes`) to rank `rank`, sizes on `axes`."""
    shape = [1] * rank
    for axis, size in zip(axes, values.shape, strict=True):
        shape[axis] = size
    return values.reshape(shape)


def _operand_coordinates(operand_shape: Sequence[int], starts: np.ndarray,
                         start_dims: Sequence[int], batching: Sequence[tuple[int, int]],
                         batch_axes: Sequence[int], windows: dict[int, tuple[int, int]],
                         rank: int) -> list[np.ndarray]:
    """Per operand dim, the coordinate of every result element (broadcastable to the result).

    `starts` has the index-batch shape plus the index vector; `batching` pairs operand batch
    dims with index batch dims; `windows` maps an operand window dim to (result axis, size).
    """
    batch_shape = starts.shape[:-1]
    coords = []
    for d in range(len(operand_shape)):
        coord = np.zeros([1] * rank, np.int64)
        if d in start_dims:
            coord = _on_axes(starts[..., list(start_dims).index(d)], batch_axes, rank)
        for operand_dim, index_dim in batching:
            if operand_dim == d:
                line_shape = [n if i == index_dim else 1 for i, n in enumerate(batch_shape)]
                line = np.arange(batch_shape[index_dim]).reshape(line_shape)
                coord = _on_axes(line, batch_axes, rank)
        if d in windows:
            axis, size = windows[d]
            coord = coord + _on_axes(np.arange(size), [axis], rank)
        coords.append(coord)
    return coords


def _window_bounds(indices: np.ndarray, operand_shape: Sequence[int], start_dims: Sequence[int],
                   window_sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Clamped int64 starts, and a mask of index vectors whose whole window is in bounds."""
    starts = indices.astype(np.int64)
    upper = np.array([operand_shape[d] - s for d, s in zip(start_dims, window_sizes, strict=True)],
                     dtype=np.int64)
    if dtypes.is_unsigned(indices.dtype) and indices.dtype.itemsize == 8:
        starts = np.where(indices > np.iinfo(np.int64).max, -1, starts)  # wrapped: out of bounds
    in_bounds = np.all((starts >= 0) & (starts <= upper), axis=-1)
    return np.clip(starts, 0, np.maximum(upper, 0)), in_bounds


def gather(operand: np.ndarray, indices: np.ndarray, *, offset_dims: Sequence[int],
           collapsed_slice_dims: Sequence[int], operand_batching_dims: Sequence[int],
           start_indices_batching_dims: Sequence[int], start_index_map: Sequence[int],
           slice_sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """XLA's gather with clamped start indices; the index vector is the last index dim.

    Returns:
      The gathered array, and a mask broadcastable to it that is False on the windows whose
      unclamped start was not entirely in bounds (for JAX's fill mode).
    """
    out_shape = gather_out_shape(indices.shape, offset_dims, collapsed_slice_dims,
                                 operand_batching_dims, slice_sizes)
    rank = len(out_shape)
    batch_axes = [i for i in range(rank) if i not in offset_dims]
    if 0 in out_shape:
        return np.zeros(out_shape, operand.dtype), np.ones([1] * rank, bool)
    window_dims = [d for d in range(operand.ndim)
                   if d not in collapsed_slice_dims and d not in operand_batching_dims]
    windows = {d: (axis, slice_sizes[d]) for d, axis in zip(window_dims, offset_dims,
                                                              strict=True)}
    starts, in_bounds = _window_bounds(indices, operand.shape, start_index_map,
                                       [slice_sizes[d] for d in start_index_map])
    coords = _operand_coordinates(operand.shape, starts, start_index_map,
                                  list(zip(operand_batching_dims, start_indices_batching_dims,
                                           strict=True)),
                                  batch_axes, windows, rank)
    if coords:
        result = operand[tuple(np.broadcast_to(c, out_shape) for c in coords)]
    else:
        result = np.broadcast_to(operand, out_shape)
    return result, _on_axes(in_bounds, batch_axes, rank)


def scatter_targets(operand_shape: Sequence[int], indices: np.ndarray,
                    updates_shape: Sequence[int], *, update_window_dims: Sequence[int],
                    inserted_window_dims: Sequence[int], input_batching_dims: Sequence[int],
                    scatter_indices_batching_dims: Sequence[int],
                    scatter_dims_to_operand_dims: Sequence[int], clip: bool
                    ) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Where each update element lands; the index vector is the last index dimension.

    Returns:
      The operand index (one flat array per operand dim, in row-major update order) of every
      update element that is applied, and the mask of those elements over the updates. An
      update window that is not entirely in bounds is skipped, unless `clip` clamps its
      start into bounds first (JAX's CLIP mode).
    """
    rank = len(updates_shape)
    window_dims = [d for d in range(len(operand_shape))
                   if d not in inserted_window_dims and d not in input_batching_dims]
    windows = {d: (axis, updates_shape[axis])
               for d, axis in zip(window_dims, update_window_dims, strict=True)}
    sizes = [windows[d][1] if d in windows else 1 for d in scatter_dims_to_operand_dims]
    starts, in_bounds = _window_bounds(indices, operand_shape, scatter_dims_to_operand_dims,
                                       sizes)
    batch_axes = [d for d in range(rank) if d not in update_window_dims]
    coords = _operand_coordinates(operand_shape, starts, scatter_dims_to_operand_dims,
                                  list(zip(input_batching_dims, scatter_indices_batching_dims,
                                           strict=True)),
                                  batch_axes, windows, rank)
    keep = np.ones(tuple(updates_shape), bool)
    if not clip:
        keep = np.broadcast_to(_on_axes(in_bounds, batch_axes, rank), tuple(updates_shape))
    targets = tuple(np.broadcast_to(c, tuple(updates_shape))[keep] for c in coords)
    return targets, keep


def _index_vector_last(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """`indices` with the index vector as its last dimension (StableHLO allows it anywhere,
    and one past the last dimension for scalar index vectors)."""
    if index_vector_dim == indices.ndim:
        return indices[..., None]
    return np.moveaxis(indices, index_vector_dim, -1)


def _batch_dims_after_move(dims: Sequence[int], index_vector_dim: int) -> list[int]:
    """Index batch dims renumbered after the index vector dim moves to the end."""
    return [d - 1 if d > index_vector_dim else d for d in dims]


@register("stablehlo.gather")
def _gather(op: Op, compiler: Compiler) -> Kernel:
    dn: ir.GatherDimensionNumbers = op.attributes["dimension_numbers"]
    slice_sizes = tuple(op.attributes["slice_sizes"])
    params = dict(
        offset_dims=dn.offset_dims, collapsed_slice_dims=dn.collapsed_slice_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=_batch_dims_after_move(dn.start_indices_batching_dims,
                                                           dn.index_vector_dim),
        start_index_map=dn.start_index_map, slice_sizes=slice_sizes)

    def kernel(operand: np.ndarray, indices: np.ndarray) -> np.ndarray:
        result, _ = gather(operand, _index_vector_last(indices, dn.index_vector_dim), **params)
        return np.asarray(result)

    return kernel


# ---------------------------------------------------------------------------------------------
# Scatter: update computations.

# Update regions that are one NumPy ufunc of (current, update), applied unbuffered in update
# order with `ufunc.at`, exactly as running the region element by element would.
# (The bitwise ufuncs are the logical ones on bools.)
_UFUNC_REGIONS: dict[str, np.ufunc] = {
    "stablehlo.add": np.add, "stablehlo.subtract": np.subtract,
    "stablehlo.multiply": np.multiply, "stablehlo.minimum": np.minimum,
    "stablehlo.maximum": np.maximum, "stablehlo.and": np.bitwise_and,
    "stablehlo.or": np.bitwise_or, "stablehlo.xor": np.bitwise_xor,
}


def _region_combiner(region: ir.Region) -> np.ufunc | str | None:
    """`"replace"` for a region returning the update, a ufunc for one elementwise op of
    (current, update), or None when the region must run element by element."""
    block = region.block
    if len(block.args) != 2:
        return None
    current, update = block.args
    returned = block.terminator.operands
    if len(block.ops) == 1 and returned == [update]:
        return "replace"
    if len(block.ops) != 2 or len(returned) != 1:
        return None
    body = block.ops[0]
    if body.opcode not in _UFUNC_REGIONS or body.results != returned or \
            body.operands != [current, update]:
        return None
    return _UFUNC_REGIONS[body.opcode]


def _scatter_in_order(outs: list[np.ndarray], targets: tuple[np.ndarray, ...],
                      values: list[np.ndarray], runner: Callable) -> None:
    """Runs the update region once per update element, in row-major update order."""
    flat_targets = np.ravel_multi_index(targets, outs[0].shape)
    flats = [out.reshape(-1) for out in outs]
    for k, where in enumerate(flat_targets):
        currents = [np.asarray(flat[where]) for flat in flats]
        updates = [np.asarray(v[k]) for v in values]
        results = runner(currents + updates)
        for flat, result in zip(flats, results, strict=True):
            flat[where] = result


@register("stablehlo.scatter")
def _scatter(op: Op, compiler: Compiler) -> Kernel:
    dn: ir.ScatterDimensionNumbers = op.attributes["scatter_dimension_numbers"]
    count = len(op.results)
    region = op.regions[0]
    combiner = _region_combiner(region) if count == 1 else None
    runner = compiler.region(region) if combiner is None else None
    params = dict(
        update_window_dims=dn.update_window_dims, inserted_window_dims=dn.inserted_window_dims,
        input_batching_dims=dn.input_batching_dims,
        scatter_indices_batching_dims=_batch_dims_after_move(
            dn.scatter_indices_batching_dims, dn.index_vector_dim),
        scatter_dims_to_operand_dims=dn.scatter_dims_to_operand_dims, clip=False)

    def kernel(*args: np.ndarray) -> Any:
        inputs, indices, updates = args[:count], args[count], args[count + 1:]
        indices = _index_vector_last(indices, dn.index_vector_dim)
        shape = inputs[0].shape
        targets, keep = scatter_targets(shape, indices, updates[0].shape, **params)
        # A rank-0 operand has no coordinates: every update lands on its single element.
        outs = [np.array(x, copy=True).reshape(shape or (1,)) for x in inputs]
        if not targets:
            targets = (np.zeros(int(np.count_nonzero(keep)), np.int64),)
        values = [np.asarray(u)[keep] for u in updates]
        if combiner == "replace":
            outs[0][targets] = values[0]  # NumPy assigns repeated indices in order
        elif combiner is not None:
            combiner.at(outs[0], targets, values[0])
        else:
            _scatter_in_order(outs, targets, values, runner)
        outs = [o.reshape(shape) for o in outs]
        return outs[0] if count == 1 else outs

    return kernel


# ---------------------------------------------------------------------------------------------
# Contractions.

def _work_float(dtype: np.dtype) -> np.dtype:
    if (dtype in dtypes.FLOATS_COMPUTED_IN_FLOAT32 or dtypes.is_int(dtype)
            or dtypes.is_bool(dtype)):
        return np.dtype(np.float32)
    return np.dtype(dtype)


def accumulate_in(dtype: Any, *operands: np.ndarray) -> list[np.ndarray]:
    """Operands converted to the NumPy type that accumulates `dtype` results exactly as XLA's
    CPU backend does: bools and integers as 64-bit integers (wrapped back later), float16 and
    bfloat16 in float32. Integer results of float operands keep the float arithmetic."""
    dtype = np.dtype(dtype)
    if dtypes.is_bool(dtype):
        return [(x != 0).astype(np.int64) for x in operands]
    if dtypes.is_int(dtype) and not any(dtypes.is_inexact(x.dtype) for x in operands):
        wide = np.uint64 if dtypes.is_unsigned(dtype) else np.int64
        return [convert_values(x, dtype).astype(wide) for x in operands]
    if dtypes.is_int(dtype):
        dtype = np.result_type(*[_work_float(x.dtype) for x in operands])
    return [x.astype(_work_float(dtype)) for x in operands]


def finish_accumulation(result: np.ndarray, dtype: Any) -> np.ndarray:
    """An accumulated result rounded (floats), wrapped (integers) or tested (bools) into
    `dtype`."""
    dtype = np.dtype(dtype)
    if dtypes.is_bool(dtype):
        return result != 0
    if dtypes.is_int(dtype) and dtypes.is_inexact(result.dtype):
        return convert_values(result, dtype)
    return round_from_float32(result, dtype)


def contract(lhs: np.ndarray, rhs: np.ndarray, lhs_contracting: Sequence[int],
             rhs_contracting: Sequence[int], lhs_batch: Sequence[int],
             rhs_batch: Sequence[int]) -> np.ndarray:
    """`dot_general` in the operands' NumPy type, as one batched matmul (B, M, K) @ (B, K, N).

    Returns:
      The batch dimensions, then the lhs free dimensions, then the rhs free dimensions.
    """
    lhs_free = free_dims(lhs.ndim, lhs_contracting, lhs_batch)
    rhs_free = free_dims(rhs.ndim, rhs_contracting, rhs_batch)
    lhs_t = np.transpose(lhs, (*lhs_batch, *lhs_free, *lhs_contracting))
    rhs_t = np.transpose(rhs, (*rhs_batch, *rhs_contracting, *rhs_free))
    batch_shape = tuple(lhs.shape[d] for d in lhs_batch)
    lhs_free_shape = tuple(lhs.shape[d] for d in lhs_free)
    rhs_free_shape = tuple(rhs.shape[d] for d in rhs_free)
    size_b, size_m, size_n = map(math.prod, (batch_shape, lhs_free_shape, rhs_free_shape))
    size_k = math.prod(lhs.shape[d] for d in lhs_contracting)
    lhs3 = lhs_t.reshape(size_b, size_m, size_k)
    rhs3 = rhs_t.reshape(size_b, size_k, size_n)
    if size_k == 1:
        # Outer products (per-example gradients of dense layers): NumPy's batched matmul of
        # tiny matrices is far slower than the equivalent broadcast multiply.
        out = lhs3 * rhs3
    else:
        out = np.matmul(lhs3, rhs3)
    return out.reshape(batch_shape + lhs_free_shape + rhs_free_shape)


def dot_general(lhs: np.ndarray, rhs: np.ndarray, dtype: Any, lhs_contracting: Sequence[int],
                rhs_contracting: Sequence[int], lhs_batch: Sequence[int],
                rhs_batch: Sequence[int]) -> np.ndarray:
    """StableHLO `dot_general` with result element type `dtype`: the operands are converted
    to it and accumulated as XLA's CPU backend does."""
    lhs, rhs = accumulate_in(dtype, lhs, rhs)
    out = contract(lhs, rhs, lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)
    return finish_accumulation(out, dtype)


@register("stablehlo.dot_general")
def _dot_general(op: Op, compiler: Compiler) -> Kernel:
    dn: ir.DotDimensionNumbers = op.attributes["dot_dimension_numbers"]
    dtype = op.result.type.dtype
    return lambda lhs, rhs: dot_general(lhs, rhs, dtype, dn.lhs_contracting_dimensions,
                                        dn.rhs_contracting_dimensions,
                                        dn.lhs_batching_dimensions, dn.rhs_batching_dimensions)


def _dilate_values(x: np.ndarray, dilation: Sequence[int]) -> np.ndarray:
    """Inserts `dilation - 1` zeros between the elements of each spatial dim."""
    if all(d == 1 for d in dilation):
        return x
    shape = x.shape[:2] + tuple(max(1 + r * (d - 1), 0)
                                for d, r in zip(x.shape[2:], dilation, strict=True))
    out = np.zeros(shape, x.dtype)
    out[(slice(None), slice(None), *(slice(None, None, d) for d in dilation))] = x
    return out


def _pad_values(x: np.ndarray, padding: Sequence[tuple[int, int]]) -> np.ndarray:
    """Zero padding of the spatial dims; negative padding crops."""
    crop = tuple(slice(max(-lo, 0), size - max(-hi, 0))
                 for size, (lo, hi) in zip(x.shape[2:], padding, strict=True))
    x = x[(slice(None), slice(None), *crop)]
    widths = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    return np.pad(x, widths)


def _conv_by_taps(x: np.ndarray, w: np.ndarray, strides: Sequence[int],
                  rhs_dilation: Sequence[int], feature_groups: int,
                  batch_groups: int) -> np.ndarray:
    """Convolution of padded (N, C, spatial) input with (O, I, spatial) kernel.

    Each kernel tap contributes one strided view of the input, contracted with that tap's
    (O, I) weights for all output positions at once; groups are a leading matmul batch axis.
    """
    n, c = x.shape[:2]
    o, i = w.shape[:2]
    window = [(k - 1) * r + 1 for k, r in zip(w.shape[2:], rhs_dilation, strict=True)]
    out_space = [stride_dim(d, k, s) for d, k, s in zip(x.shape[2:], window, strides,
                                                        strict=True)]
    positions = math.prod(out_space)
    groups = max(feature_groups, batch_groups)
    if batch_groups > 1:
        lhs_rows = x.reshape(groups, n // groups, c, *x.shape[2:])
        acc = np.zeros((groups, n // groups, o // groups, positions), x.dtype)
        weights = w.reshape(groups, 1, o // groups, i, *w.shape[2:])
    else:
        lhs_rows = x.reshape(n, groups, c // groups, *x.shape[2:])
        acc = np.zeros((n, groups, o // groups, positions), x.dtype)
        weights = w.reshape(1, groups, o // groups, i, *w.shape[2:])
    if positions:
        for tap in np.ndindex(*w.shape[2:]):
            window_slice = tuple(slice(t * r, t * r + (size - 1) * s + 1, s) for t, r, size, s
                                 in zip(tap, rhs_dilation, out_space, strides, strict=True))
            patch = lhs_rows[(Ellipsis, *window_slice)]
            acc += np.matmul(weights[(Ellipsis, *tap)], patch.reshape(*patch.shape[:3], -1))
    if batch_groups > 1:
        acc = np.swapaxes(acc, 0, 1)
    return acc.reshape(acc.shape[0], o, *out_space)


def convolution(lhs: np.ndarray, rhs: np.ndarray, dtype: Any, *,
                lhs_spec: Sequence[int], rhs_spec: Sequence[int], out_spec: Sequence[int],
                window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                feature_group_count: int, batch_group_count: int,
                window_reversal: Sequence[bool] = ()) -> np.ndarray:
    """StableHLO `convolution` with result element type `dtype`.

    Args:
      lhs_spec: the input's (batch, feature, spatial...) dimensions.
      rhs_spec: the kernel's (output feature, input feature, spatial...) dimensions.
      out_spec: the output's (batch, feature, spatial...) dimensions.
      window_reversal: per spatial dim, whether the kernel is reversed along it.
    """
    x, w = accumulate_in(dtype, np.transpose(lhs, lhs_spec), np.transpose(rhs, rhs_spec))
    reversed_axes = tuple(2 + i for i, flip in enumerate(window_reversal) if flip)
    if reversed_axes:
        w = np.flip(w, reversed_axes)
    x = _pad_values(_dilate_values(x, lhs_dilation), padding)
    out = _conv_by_taps(x, w, window_strides, rhs_dilation, feature_group_count,
                        batch_group_count)
    out = finish_accumulation(out, dtype)
    return np.transpose(out, np.argsort(out_spec))


@register("stablehlo.convolution")
def _convolution(op: Op, compiler: Compiler) -> Kernel:
    attrs = op.attributes
    dn: ir.ConvDimensionNumbers = attrs["dimension_numbers"]
    spatial = len(dn.input_spatial_dimensions)
    ones = (1,) * spatial
    params = dict(
        lhs_spec=(dn.input_batch_dimension, dn.input_feature_dimension,
                  *dn.input_spatial_dimensions),
        rhs_spec=(dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
                  *dn.kernel_spatial_dimensions),
        out_spec=(dn.output_batch_dimension, dn.output_feature_dimension,
                  *dn.output_spatial_dimensions),
        window_strides=tuple(attrs.get("window_strides", ones)),
        padding=[tuple(int(p) for p in pair)
                 for pair in np.asarray(attrs.get("padding", np.zeros((spatial, 2), np.int64)))
                 .reshape(spatial, 2)],
        lhs_dilation=tuple(attrs.get("lhs_dilation", ones)),
        rhs_dilation=tuple(attrs.get("rhs_dilation", ones)),
        feature_group_count=int(attrs.get("feature_group_count", 1)),
        batch_group_count=int(attrs.get("batch_group_count", 1)),
        window_reversal=tuple(bool(r) for r in attrs.get("window_reversal", ())))
    dtype = op.result.type.dtype
    return lambda lhs, rhs: convolution(lhs, rhs, dtype, **params)


# ---------------------------------------------------------------------------------------------
# The simple data-movement ops.

@register("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Op, compiler: Compiler) -> Kernel:
    shape = op.result.type.shape
    dims = tuple(op.attributes["broadcast_dimensions"])
    if not dims:  # a scalar: the common case of every literal, kept cheap
        return lambda x: np.broadcast_to(x, shape)
    return lambda x: broadcast_in_dim(x, shape, dims)


@register("stablehlo.reshape")
def _reshape(op: Op, compiler: Compiler) -> Kernel:
    shape = op.result.type.shape
    return lambda x: np.reshape(x, shape)


@register("stablehlo.transpose")
def _transpose(op: Op, compiler: Compiler) -> Kernel:
    permutation = tuple(op.attributes["permutation"])
    return lambda x: np.transpose(x, permutation)


@register("stablehlo.iota")
def _iota(op: Op, compiler: Compiler) -> Kernel:
    result = op.result.type
    value = iota(result.dtype, result.shape, int(op.attributes["iota_dimension"]))
    return lambda: value


@register("stablehlo.concatenate")
def _concatenate(op: Op, compiler: Compiler) -> Kernel:
    dimension = int(op.attributes["dimension"])
    dtype = op.result.type.dtype
    return lambda *xs: np.concatenate(xs, axis=dimension).astype(dtype, copy=False)


@register("stablehlo.slice")
def _slice(op: Op, compiler: Compiler) -> Kernel:
    window = tuple(slice(int(s), int(l), int(st)) for s, l, st in zip(
        op.attributes["start_indices"], op.attributes["limit_indices"],
        op.attributes["strides"], strict=True))
    return lambda x: x[window]


@register("stablehlo.dynamic_slice")
def _dynamic_slice(op: Op, compiler: Compiler) -> Kernel:
    sizes = tuple(op.attributes["slice_sizes"])
    return lambda x, *starts: x[clamped_window(starts, x.shape, sizes)]


@register("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(op: Op, compiler: Compiler) -> Kernel:
    return lambda x, update, *starts: dynamic_update_slice(x, update, starts)


@register("stablehlo.pad")
def _pad(op: Op, compiler: Compiler) -> Kernel:
    attrs = op.attributes
    low, high = tuple(attrs["edge_padding_low"]), tuple(attrs["edge_padding_high"])
    interior = tuple(attrs["interior_padding"])
    return lambda x, value: pad(x, value, low, high, interior)


@register("stablehlo.reverse")
def _reverse(op: Op, compiler: Compiler) -> Kernel:
    dims = tuple(op.attributes["dimensions"])
    return lambda x: np.flip(x, dims) if dims else x
