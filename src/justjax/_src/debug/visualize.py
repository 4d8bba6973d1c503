"""`jax.debug.visualize_array_sharding` and `visualize_sharding`: a table of which devices
hold which block of a 1-d or 2-d array.

JAX draws it with `rich`; justjax draws the same table itself (no rich dependency): JAX's sizes
(a block's height is its share of 10 rows times `scale`, its width its share of the width
`10 * scale * columns / rows` times 2.5, at least `min_width` and at most `max_width`), its
labels (`CPU 0,1`: the ids of the devices holding the block), and rich's square box with a line
between rows, as rich prints it where there are no colors (a file, a pipe, a notebook's text).
Blocks are not colored.
"""
from __future__ import annotations

import sys
from typing import Any, Sequence

__all__ = ["visualize_array_sharding", "visualize_sharding"]

_HEIGHT_TO_WIDTH = 2.5


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Prints the table of `arr`'s blocks and the devices holding them (`visualize_sharding`
    of its shape and sharding)."""
    visualize_sharding(arr.shape, arr.sharding, **kwargs)


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Prints the table of a value of `shape` laid out by `sharding`: one cell per block, with
    the devices holding it. `use_color` and `color_map` are accepted for JAX's signature; the
    table is printed without colors."""
    del use_color, color_map
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    print(_table(shape, sharding, scale, min_width, max_width), file=sys.stdout)


def _chunk(size: int, piece: slice) -> int:
    start = piece.start or 0
    stop = size if piece.stop is None else piece.stop
    return start // (stop - start) if stop > start else 0


class _Cell:
    """One block's label and the padding around it (rich's `Padding(Align(label))`)."""

    def __init__(self, label: str, left: int, right: int, top: int, bottom: int) -> None:
        self.label, self.left, self.right, self.top, self.bottom = label, left, right, top, bottom

    def natural_width(self, available: int) -> int:
        """The width it asks for within `available` columns."""
        extra = self.left + self.right
        if available - extra < 1:
            return available
        return min(len(self.label) + extra, available)

    def lines(self, width: int) -> list[str]:
        """Its lines at `width`: blank padding rows around the label, wrapped at spaces (and
        cut where a word is longer) and centered in what the side padding leaves; nothing of
        the label when the padding leaves no room."""
        inner = width - self.left - self.right
        body = []
        if inner > 0:
            for piece in _wrap(self.label, inner):
                excess = inner - len(piece)
                centered = " " * (excess // 2) + piece + " " * (excess - excess // 2)
                line = " " * self.left + centered + " " * self.right
                body.append(line[:width])
        blank = " " * width
        return [blank] * self.top + body + [blank] * self.bottom


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for word in text.split(" "):
        while len(word) > width:
            lines.append(word[:width])
            word = word[width:]
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        elif word:
            lines.append(word)
    return lines


def _fit(widths: list[int], available: int) -> list[int]:
    """Column widths narrowed to `available` in total, as rich narrows a table too wide for
    its console: the widest columns first, down to the next widest, the excess shared out in
    order (rounding halves to even)."""
    widths = list(widths)
    while sum(widths) > available:
        widest = max(widths)
        runner_up = max((w for w in widths if w != widest), default=0)
        if widest == runner_up:
            break
        widths = _reduce(sum(widths) - available, [w == widest for w in widths],
                         min(sum(widths) - available, widest - runner_up), widths)
    if sum(widths) > available:
        widths = _reduce(sum(widths) - available, [True] * len(widths), None, widths)
    return widths


def _reduce(excess: int, chosen: list[bool], cap: int | None, widths: list[int]) -> list[int]:
    """`widths` with `excess` taken from the `chosen` columns, shared evenly in order (each
    at most `cap`, or its width)."""
    left = sum(chosen)
    out = []
    for width, take in zip(widths, chosen, strict=True):
        if take and left:
            share = min(width if cap is None else cap, round(excess / left))
            out.append(width - share)
            excess -= share
            left -= 1
        else:
            out.append(width)
    return out


def _table(shape: tuple[int, ...], sharding: Any, scale: float, min_width: int,
           max_width: int) -> str:
    devices: dict[tuple[int, int], set[int]] = {}
    heights: dict[tuple[int, int], float | None] = {}
    widths: dict[tuple[int, int], float] = {}
    kind = ""
    for device, index in sharding.devices_indices_map(shape).items():
        kind = device.platform.upper()
        pieces = [slice(None) if i is None else i for i in index]
        if len(shape) == 2:
            cell = (_chunk(shape[0], pieces[0]), _chunk(shape[1], pieces[1]))
            heights[cell] = _extent(pieces[0], shape[0]) / shape[0]
            widths[cell] = _extent(pieces[1], shape[1]) / shape[1]
        else:
            cell = (0, _chunk(shape[0], pieces[0]))
            heights[cell] = None
            widths[cell] = _extent(pieces[0], shape[0]) / shape[0]
        devices.setdefault(cell, set()).add(device.id)
    rows = max(r for r, _ in devices) + 1
    cols = max(c for _, c in devices) + 1
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    cells: dict[tuple[int, int], _Cell] = {}
    for (r, c), ids in devices.items():
        label = f"{kind} " + ",".join(str(i) for i in sorted(ids))
        width = min(max(int(widths[r, c] * base_width * _HEIGHT_TO_WIDTH), min_width),
                    max_width)
        height = 1 if heights[r, c] is None else int(heights[r, c] * base_height)
        left, extra = divmod(width - len(label) - 2, 2)
        top, extra_rows = divmod(height - 2, 2)
        cells[r, c] = _Cell(label, max(left, 0), max(left + extra, 0), max(top, 0),
                            max(top + extra_rows, 0))
    # The console is `max_width` wide; borders take one column each.
    available = max_width - (cols + 1)
    col_widths = _fit([max(cells[r, c].natural_width(available) for r in range(rows))
                       for c in range(cols)], available)

    def rule(left: str, middle: str, right: str) -> str:
        return left + middle.join("─" * w for w in col_widths) + right

    lines = [rule("┌", "┬", "┐")]
    for r in range(rows):
        row = [cells[r, c].lines(col_widths[c]) for c in range(cols)]
        for k in range(max(1, *(len(cell) for cell in row))):
            lines.append("│" + "│".join(cell[k] if k < len(cell) else " " * w
                                        for cell, w in zip(row, col_widths, strict=True)) + "│")
        if r + 1 < rows:
            lines.append(rule("├", "┼", "┤"))
    lines.append(rule("└", "┴", "┘"))
    return "\n".join(lines)


def _extent(piece: slice, size: int) -> int:
    return (size if piece.stop is None else piece.stop) - (piece.start or 0)
