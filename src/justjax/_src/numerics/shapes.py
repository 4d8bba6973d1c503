"""Shape arithmetic that lax's shape rules and the backends' kernels share."""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["free_dims", "gather_out_shape", "stride_dim", "to_last_axis"]


def gather_out_shape(indices_shape: Sequence[int], offset_dims: Sequence[int],
                     collapsed_slice_dims: Sequence[int], operand_batching_dims: Sequence[int],
                     slice_sizes: Sequence[int]) -> tuple[int, ...]:
    """The result shape of a gather whose index vector is the last index dimension."""
    batch = iter(indices_shape[:-1])
    windows = iter(s for i, s in enumerate(slice_sizes)
                   if i not in collapsed_slice_dims and i not in operand_batching_dims)
    rank = len(offset_dims) + len(indices_shape) - 1
    return tuple(next(windows) if i in offset_dims else next(batch) for i in range(rank))


def free_dims(ndim: int, *used: Sequence[int]) -> list[int]:
    """The dimensions of a rank-`ndim` operand in none of `used`, in order."""
    taken = {d for dims in used for d in dims}
    return [d for d in range(ndim) if d not in taken]


def stride_dim(size: int, window: int, stride: int) -> int:
    """Positions of a `window` sliding with `stride` over `size` elements."""
    return max((size - window) // stride + 1, 0)


def to_last_axis(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """Moves `axes` to the end and flattens them into one axis (row-major)."""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + list(axes))
    reduced_size = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    return moved.reshape(moved.shape[:len(kept)] + (reduced_size,))
