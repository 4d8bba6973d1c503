"""An `Explanation` as one self-contained HTML page: inline style, the fusion graph as inline
SVG, every long text in a collapsible section. No scripts, no external resources."""
from __future__ import annotations

import html
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from justjax._src.explain.report import Explanation

__all__ = ["render"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #111827; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px;
  border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
pre { background: #f9fafb; border: 1px solid #e5e7eb; padding: 10px; overflow-x: auto;
  font-size: 12px; line-height: 1.35; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
details { margin: 6px 0; } summary { cursor: pointer; font-family: monospace; }
.add { color: #166534; background: #f0fdf4; display: block; }
.del { color: #991b1b; background: #fef2f2; display: block; }
.bar { background: #93c5fd; height: 10px; display: inline-block; }
.graph { overflow: auto; border: 1px solid #e5e7eb; padding: 8px; }
.facts span { margin-right: 22px; }
"""


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _details(summary: str, body: str, open_: bool = False) -> str:
    return (f"<details{' open' if open_ else ''}><summary>{html.escape(summary)}</summary>"
            f"{body}</details>")


def _diff(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        escaped = html.escape(line)
        if line.startswith("+") and not line.startswith("+++"):
            lines.append(f'<span class="add">{escaped}</span>')
        elif line.startswith("-") and not line.startswith("---"):
            lines.append(f'<span class="del">{escaped}</span>')
        else:
            lines.append(escaped + "\n")
    return "<pre>" + "".join(lines) + "</pre>"


def _table(rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = []
    for row in rows[1:]:
        cells = "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                        for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def render(e: Explanation) -> str:
    from justjax._src.explain.report import _bytes, _seconds, kernel_table
    flops, moved = e.cost.get("flops", 0.0), e.cost.get("bytes accessed", 0.0)
    facts = [f"backend: {e.backend}", f"StableHLO ops: {e.stablehlo_op_count}",
             f"kernels: {len(e.kernels)} ({len(e.fusions)} fusions)",
             f"flops: {flops:,.0f}", f"bytes moved: {_bytes(moved)}",
             f"flops/byte: {flops / moved if moved else 0:.2f}",
             f"trace + lower: {_seconds(e.lower_seconds)}",
             f"passes: {_seconds(e.optimize_seconds)}",
             f"compile: {_seconds(e.compile_seconds)}",
             f"one call: {_seconds(e.seconds_per_call)}"]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>justjax explain: {html.escape(e.name)}</title>",
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>{html.escape(e.name)}: every stage of its compilation</h1>",
             '<p class="facts">' + "".join(f"<span>{html.escape(f)}</span>" for f in facts)
             + "</p>"]
    parts += [f"<p><em>note: {html.escape(n)}</em></p>" for n in e.notes]
    parts += ["<h2>Fusion graph</h2>",
              "<p>Kernels as boxes, buffers as edges with their shapes and sizes.</p>",
              f'<div class="graph">{e.svg()}</div>']
    rows = kernel_table(e)
    slowest = max((k.seconds or 0.0 for k in e.kernels), default=0.0)
    table = [rows[0] + ["share"]]
    for k, row in zip(e.kernels, rows[1:]):
        width = 120 * (k.seconds or 0.0) / slowest if slowest else 0
        table.append([html.escape(c) for c in row]
                     + [f'<span class="bar" style="width:{width:.0f}px"></span>'])
    parts += ["<h2>Kernels</h2>", _table(table, numeric=(3, 4, 5, 6, 7))]
    parts += ["<h2>jaxpr</h2>", _pre(str(e.jaxpr)),
              "<h2>StableHLO (as lowered)</h2>",
              _details(f"{e.stablehlo_op_count} ops", _pre(e.stablehlo), open_=False)]
    pass_rows = [["pass", "changed", "ops", "time"]]
    for p in e.passes:
        pass_rows.append([html.escape(p.name), "yes" if p.changed else "no",
                          f"{p.ops_before} &rarr; {p.ops_after}", _seconds(p.seconds)])
    parts += ["<h2>Optimizing passes</h2>", _table(pass_rows, numeric=(2, 3))]
    for i, p in enumerate(e.passes, start=1):
        if p.changed:
            parts.append(_details(f"{i}. {p.name}: what it changed", _diff(p.diff)
                                  + _details("the IR after it", _pre(p.text))))
    parts += ["<h2>Optimized HLO</h2>", _details("compiled.as_text()", _pre(e.optimized_hlo))]
    parts.append("<h2>Each kernel: HLO, LLVM IR, assembly</h2>")
    for k in e.kernels:
        body = _details("HLO", _pre(k.hlo or "(no HLO text)"))
        if k.llvm_ir:
            body += _details("LLVM IR (optimized)", _pre(k.llvm_ir))
        if k.asm:
            body += _details("assembly", _pre(k.asm))
        if not (k.llvm_ir or k.asm):
            body += f"<p>{html.escape(k.kind)}: no native function of its own.</p>"
        parts.append(_details(f"{k.name} ({k.kind}, {_seconds(k.seconds)})", body))
    parts.append("</body></html>")
    return "\n".join(parts)
