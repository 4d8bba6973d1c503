"""Facts about the windows of StableHLO's `reduce_window` and `select_and_scatter` that the
backends share: their attributes spelled out per dimension, and which windows are those of
a cumulative reduction."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.hlo.ir import Op

__all__ = ["cumulative_axis", "window_attributes"]


def window_attributes(op: Op, rank: int) -> dict[str, Any]:
    """The window of a `reduce_window` / `select_and_scatter` over a rank-`rank` operand,
    with StableHLO's defaults filled in (strides and dilations 1, no padding).

    Returns:
      `window_dimensions`, `window_strides`, `base_dilation`, `window_dilation` (tuples of
      ints) and `padding` (a tuple of `(low, high)` pairs): the keyword arguments of
      `cumulative_axis`.
    """
    ones = (1,) * rank
    padding = op.attributes.get("padding")
    pads = ((0, 0),) * rank if padding is None else tuple(
        (int(lo), int(hi)) for lo, hi in np.asarray(padding, np.int64).reshape(rank, 2))

    def ints(name: str) -> tuple[int, ...]:
        return tuple(int(n) for n in op.attributes.get(name, ones))

    return dict(window_dimensions=ints("window_dimensions"),
                window_strides=ints("window_strides"), padding=pads,
                base_dilation=ints("base_dilations"), window_dilation=ints("window_dilations"))


def cumulative_axis(shape: Sequence[int], window_dimensions: Sequence[int],
                    window_strides: Sequence[int], padding: Sequence[Sequence[int]],
                    base_dilation: Sequence[int], window_dilation: Sequence[int]
                    ) -> tuple[int, bool] | None:
    """Where the windows over an operand of `shape` are the prefixes along one axis (as JAX
    lowers `cumsum` & co: a window as long as the axis, padded in front by its length - 1),
    or its suffixes (padded behind, a reverse cumulative reduction); a scan then computes
    them in linear time.

    Returns:
      `(axis, reverse)`, or None when the windows are anything else.
    """
    found = None
    for axis, (n, w, s, pads, b, d) in enumerate(zip(
            shape, window_dimensions, window_strides, padding, base_dilation, window_dilation,
            strict=True)):
        pads = tuple(pads)
        if s != 1 or b != 1 or d != 1:
            return None
        if w == 1 and pads == (0, 0):
            continue
        if found is not None or w != n or pads not in ((n - 1, 0), (0, n - 1)):
            return None
        found = (axis, pads == (0, n - 1))
    return found
