"""NumPy's in-place updates `put` and `place` as functions returning a new array (JAX
arrays are immutable: `inplace=False` is required, as in JAX)."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.numpy import reductions, selection, shape_ops, util

__all__ = ["place", "put"]


def _immutable_error(name: str) -> ValueError:
    return ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are "
                      "immutable. Pass inplace=False to instead return an updated array.")


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """`a` with the flat positions `ind` set to `v` (repeated cyclically to `ind`'s length).

    Args:
      a: the array.
      ind: flat indices.
      v: the values.
      mode: `None` (out-of-bound indices are dropped, negative ones count from the end),
        `"clip"` or `"wrap"`.
      inplace: must be False.
    Returns:
      The updated array.
    """
    if inplace:
        raise _immutable_error("put")
    arr, ind_arr, v_arr = util.ensure_arraylike("put", a, ind, v)
    ind_arr = shape_ops.ravel(ind_arr)
    v_arr = shape_ops.ravel(v_arr)
    if not ind_arr.size or not v_arr.size:
        return arr
    v_arr = v_arr[np.arange(ind_arr.size) % v_arr.size]
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = selection.clip(ind_arr, 0, arr.size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = ind_arr % arr.size
        scatter_mode = "promise_in_bounds"
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    flat = shape_ops.ravel(arr).at[ind_arr].set(v_arr, mode=scatter_mode)
    return flat.reshape(arr.shape)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """`arr` with the entries where `mask` is true set to `vals`, taken in order and
    repeated cyclically.

    Args:
      arr: the array.
      mask: a boolean array shaped like `arr`.
      vals: the values (1-D).
      inplace: must be False.
    Returns:
      The updated array.
    """
    if inplace:
        raise _immutable_error("place")
    data, mask_arr, vals_arr = util.ensure_arraylike("place", arr, mask, vals)
    vals_arr = shape_ops.ravel(vals_arr)
    if data.shape != mask_arr.shape:
        raise ValueError("place: arr and mask must have the same shape; got "
                         f"arr.shape={data.shape}, mask.shape={mask_arr.shape}")
    if vals_arr.size == 0:
        raise ValueError("Cannot place values from an empty array")
    flat_mask = shape_ops.ravel(mask_arr).astype(bool)
    # The k-th true entry takes vals[k % len(vals)].
    rank = reductions.cumsum(flat_mask.astype(np.int32)) - 1
    chosen = vals_arr[rank % vals_arr.size]
    flat = selection.where(flat_mask, chosen.astype(data.dtype), shape_ops.ravel(data))
    return flat.reshape(data.shape)
