"""The fusion graph of an `Explanation` as SVG, drawn here with no drawing library.

Kernels are boxes (colour by kind: loop fusions blue, reductions green, library calls
orange, copies grey, ops the reference backend runs red), the function's parameters and
results rounded boxes; an edge is a buffer from the kernel writing it to one reading it,
labelled with its shape and size. Layout: each node on the row of its longest path from a
parameter, rows ordered by the mean position of their inputs (one sweep), edges as curves.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from justjax._src.explain.report import Explanation, _bytes, _seconds

__all__ = ["render"]

_CHAR = 7.2          # width of one character of the 12px monospace font
_LINE = 16
_PAD = 10
_ROW_GAP = 70
_COL_GAP = 28

_FILL = {"input": "#ffffff", "output": "#ffffff", "loop": "#dbeafe", "reduction": "#dcfce7",
         "library": "#ffedd5", "copy": "#e5e7eb", "fallback": "#fee2e2", "other": "#f3e8ff"}
_STROKE = {"input": "#374151", "output": "#374151", "loop": "#2563eb", "reduction": "#16a34a",
           "library": "#ea580c", "copy": "#6b7280", "fallback": "#dc2626", "other": "#7c3aed"}


@dataclass
class _Node:
    name: str
    lines: list[str]
    style: str
    layer: int = 0
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0


def _style(kind: str) -> str:
    if "reference backend" in kind:
        return "fallback"
    if "reduction" in kind:
        return "reduction"
    if "fusion" in kind:
        return "loop"
    if kind.startswith(("dot", "convolution", "sort", "host callback", "collective")):
        return "library"
    if kind.startswith("copy"):
        return "copy"
    return "other"


def _nodes(e: Explanation) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    for name, shape, _ in e.inputs:
        nodes[name] = _Node(name, [name, _plain(shape)], "input")
    for k in e.kernels:
        shape = _plain(k.shape)
        detail = shape if len(shape) <= 40 else shape[:37] + "..."
        timing = _seconds(k.seconds) if k.seconds is not None else ""
        nodes[k.name] = _Node(k.name, [k.name, k.kind, detail + (f"  {timing}" if timing
                                                                 else "")], _style(k.kind))
    for name, shape, _ in e.outputs:
        nodes[name] = _Node(name, [name, _plain(shape)], "output")
    for node in nodes.values():
        node.width = max(len(line) for line in node.lines) * _CHAR + 2 * _PAD
        node.height = len(node.lines) * _LINE + _PAD
    return nodes


def _layout(nodes: dict[str, _Node], edges: list[tuple[str, str, str, int]]) -> None:
    preds: dict[str, list[str]] = {n: [] for n in nodes}
    for src, dst, _, _ in edges:
        if src in nodes and dst in nodes:
            preds[dst].append(src)
    # Nodes come in program order, so every producer is placed before its readers.
    for node in nodes.values():
        if node.style == "input":
            node.layer = 0
        else:
            node.layer = 1 + max((nodes[p].layer for p in preds[node.name]), default=0)
    last = max((n.layer for n in nodes.values() if n.style != "output"), default=0)
    for node in nodes.values():
        if node.style == "output":
            node.layer = last + 1
    rows: dict[int, list[_Node]] = {}
    for node in nodes.values():
        rows.setdefault(node.layer, []).append(node)
    y = _PAD
    for layer in sorted(rows):
        row = rows[layer]
        # Under the mean position of what they read, left to right.
        row.sort(key=lambda n: (sum(nodes[p].x + nodes[p].width / 2 for p in preds[n.name])
                                / len(preds[n.name])) if preds[n.name] else 0.0)
        x = _PAD
        for node in row:
            node.x, node.y = x, y
            x += node.width + _COL_GAP
        y += max(n.height for n in row) + _ROW_GAP


def _plain(shape: str) -> str:
    """`f32[128,256]{1,0}` without its layout."""
    return re.sub(r"\{[0-9,]*\}", "", shape)


def _ports(nodes: dict[str, _Node], edges: list[tuple[str, str, str, int]]
           ) -> dict[int, tuple[tuple[float, float], tuple[float, float]]]:
    """Where each edge leaves its producer's bottom and enters its reader's top: a node's
    edges spread along its side in the order of the nodes at their other ends."""
    outgoing: dict[str, list[int]] = {}
    incoming: dict[str, list[int]] = {}
    for i, (src, dst, _, _) in enumerate(edges):
        if src in nodes and dst in nodes:
            outgoing.setdefault(src, []).append(i)
            incoming.setdefault(dst, []).append(i)
    starts: dict[int, tuple[float, float]] = {}
    ends: dict[int, tuple[float, float]] = {}
    for name, indices in outgoing.items():
        node = nodes[name]
        indices.sort(key=lambda i: nodes[edges[i][1]].x)
        for k, i in enumerate(indices):
            starts[i] = (node.x + node.width * (k + 1) / (len(indices) + 1), node.y + node.height)
    for name, indices in incoming.items():
        node = nodes[name]
        indices.sort(key=lambda i: nodes[edges[i][0]].x)
        for k, i in enumerate(indices):
            ends[i] = (node.x + node.width * (k + 1) / (len(indices) + 1), node.y)
    return {i: (starts[i], ends[i]) for i in starts}


def render(e: Explanation) -> str:
    """The SVG document of `e`'s fusion graph."""
    nodes = _nodes(e)
    _layout(nodes, e.edges)
    width = max((n.x + n.width for n in nodes.values()), default=100) + _PAD
    height = max((n.y + n.height for n in nodes.values()), default=100) + _PAD
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="fusion-graph" '
             f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} '
             f'{height:.0f}" font-family="monospace" font-size="12">',
             f"<title>{html.escape(e.name)}: kernels and the buffers between them</title>",
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="#6b7280"/></marker></defs>']
    ports = _ports(nodes, e.edges)
    for index, (src, dst, shape, nbytes) in enumerate(e.edges):
        if src not in nodes or dst not in nodes:
            continue
        (x1, y1), (x2, y2) = ports[index]
        mid = (y1 + y2) / 2
        parts.append(f'<path class="buffer" d="M {x1:.1f} {y1:.1f} C {x1:.1f} {mid:.1f} '
                     f'{x2:.1f} {mid:.1f} {x2:.1f} {y2:.1f}" fill="none" stroke="#9ca3af" '
                     f'stroke-width="1.5" marker-end="url(#arrow)"/>')
        label = html.escape(f"{_plain(shape)} {_bytes(nbytes)}")
        # On the curve a quarter of the way down, over a white halo.
        lx, ly = x1 + (x2 - x1) * 0.16, y1 + (y2 - y1) * 0.3
        parts.append(f'<text class="buffer-label" x="{lx + 3:.1f}" y="{ly:.1f}" '
                     f'fill="#4b5563" font-size="10" stroke="#ffffff" stroke-width="3" '
                     f'paint-order="stroke">{label}</text>')
    for node in nodes.values():
        kind = "kernel" if node.style not in ("input", "output") else node.style
        radius = 12 if kind != "kernel" else 3
        parts.append(f'<g class="{kind}" data-name="{html.escape(node.name)}">'
                     f'<rect x="{node.x:.1f}" y="{node.y:.1f}" width="{node.width:.1f}" '
                     f'height="{node.height:.1f}" rx="{radius}" fill="{_FILL[node.style]}" '
                     f'stroke="{_STROKE[node.style]}" stroke-width="1.5"/>')
        for i, line in enumerate(node.lines):
            weight = ' font-weight="bold"' if i == 0 else ""
            parts.append(f'<text x="{node.x + _PAD:.1f}" y="{node.y + _LINE * (i + 1):.1f}"'
                         f'{weight}>{html.escape(line)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)
