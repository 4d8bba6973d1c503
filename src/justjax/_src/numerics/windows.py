"""Facts about the windows of StableHLO's `reduce_window` that lax and the backends share."""
from __future__ import annotations

from typing import Sequence

__all__ = ["cumulative_axis"]


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
