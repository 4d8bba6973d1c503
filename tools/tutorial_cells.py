"""Runs a tutorial's code cells on real JAX and on justjax, cell by cell, and compares outputs.

A tutorial is a MyST markdown notebook (JAX's docs keep theirs as `.md` files whose code cells
are ```` ```{code-cell} ```` blocks). None is kept in this repository: pass the path of one
taken from JAX's repository. Each side runs all of a tutorial's cells in order in ONE Python
process, as a notebook kernel does: one shared namespace, each cell's printed output captured,
and the value of a cell's last expression shown as IPython shows it (builtin containers
pretty-printed to 79 columns, everything else by `repr`; nothing for None or a trailing `;`).
Both sides see 8 virtual CPU devices (`XLA_FLAGS=--xla_force_host_platform_device_count=8`,
which justjax reads as JAX does) and a console 80 columns wide (for the sharding tables).
The justjax side imports `jax` through `justjax.install_as_jax()`, the alias behind
`python -m justjax run`.

A cell's output is its stdout, its displayed value and, when it raised, the exception's
`Class: message`. Two outputs "agree" when equal once memory addresses are masked and trailing
blanks dropped, and are "near" when they differ only in floating-point numbers equal to a
relative 1e-5 (and in the blanks around them: NumPy pads columns to the widest number).

Cells are not compared, and say why, when:
  - they use no JAX (no name bound by a `jax` import or by an earlier cell using JAX);
  - real JAX raises in them (the tutorial predates JAX 0.10.2's API, or a cascade from such
    a cell), unless the cell is tagged `raises-exception`;
  - they use an IPython magic other than `%timeit` / `%%timeit`. Those two are emulated:
    the statement runs once and the cell prints `<timeit>` instead of timings, which no two
    runs share.
A cell may run 600 s and hold 12 GB (`--memory-gb`). A timed-out cell raises `CellTimeout` and
its changes to the namespace are dropped (where a loop stopped depends on the machine); past
the memory limit a watchdog ends the kernel, which restarts and skips that cell. Cells real
JAX cannot finish within the limits are not run on justjax.

Usage:
  python tools/tutorial_cells.py TUTORIAL.md [TUTORIAL.md ...] --out DIR \\
      [--jax-python /work/jaxvenv/bin/python] [--justjax-python /work/main/.venv/bin/python]
      [--sides jax,justjax]   (rerun one side only; the other's record in DIR is reused)
      [--extra-path DIR]      (packages a tutorial imports, e.g. termcolor, for both sides)
Writes DIR/<tutorial>.<side>.jsonl (one record per cell, as it ran) and prints the report,
also written to DIR/report.md; DIR/summary.json holds the numbers and every differing cell.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import io
import json
import math
import os
import pathlib
import pprint
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
DEVICE_COUNT = 8
CELL_TIMEOUT_S = 600
TRUNCATE = 600


@dataclasses.dataclass
class Cell:
    """One code cell of a tutorial: its position among the code cells, source and tags."""
    index: int
    source: str
    tags: tuple[str, ...]


# --- Reading a MyST notebook ---------------------------------------------------------------

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_TAGS = re.compile(r"^:?tags:\s*\[([^\]]*)\]", re.M)


def read_cells(markdown: str) -> list[Cell]:
    """The code cells of a MyST notebook, options (`---` block or `:key:` lines) removed.

    Args:
      markdown: the notebook's text.
    Returns:
      Its code cells in order.
    """
    cells = []
    for index, match in enumerate(_CELL.finditer(markdown)):
        lines = match.group(1).split("\n")
        options: list[str] = []
        if lines and lines[0].strip() == "---":
            end = lines.index("---", 1)
            options, lines = lines[1:end], lines[end + 1:]
        while lines and re.match(r"^:[\w-]+:", lines[0]):
            options.append(lines.pop(0))
        tags = _TAGS.search("\n".join(options))
        tag_names = tuple(t.strip().strip("'\"") for t in tags.group(1).split(",")) if tags else ()
        cells.append(Cell(index, "\n".join(lines).strip("\n"), tag_names))
    return cells


def cells_using_jax(cells: list[Cell]) -> list[bool]:
    """Which cells use JAX: those importing from `jax` or reading a name bound by a cell that
    does (names follow their last binding: a cell without JAX rebinding `x` unbinds it).

    Args:
      cells: a tutorial's cells, in order.
    Returns:
      One flag per cell.
    """
    jax_names: set[str] = set()
    flags = []
    for cell in cells:
        try:
            tree = ast.parse(_without_magics(cell.source))
        except SyntaxError:
            flags.append(True)
            continue
        read, bound, imports_jax = _names(tree)
        uses = imports_jax or bool(read & jax_names)
        jax_names = (jax_names | bound) if uses else (jax_names - bound)
        flags.append(uses)
    return flags


def _names(tree: ast.AST) -> tuple[set[str], set[str], bool]:
    """The names a cell reads, the names it binds, and whether it imports from jax."""
    read, bound, imports_jax = set(), set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module = getattr(node, "module", None) or ""
            for alias in node.names:
                source = module or alias.name
                if source == "jax" or source.startswith("jax."):
                    imports_jax = True
                bound.add((alias.asname or alias.name).split(".")[0])
    return read, bound, imports_jax


# --- IPython magics --------------------------------------------------------------------------

_TIMEIT = re.compile(r"^(\s*)%timeit(?:\s+-[nr]\s*\d+)*\s+(.*)$")


def unsupported_magic(source: str) -> str | None:
    """The first IPython magic or shell escape of a cell that is not emulated, if any."""
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("%timeit", "%%timeit")):
            continue
        if stripped.startswith(("%", "!")):
            return stripped.split()[0]
    return None


def _without_magics(source: str) -> str:
    """The cell as Python: `%timeit [-n N -r R] stmt` becomes `stmt` then a `<timeit>` line;
    a `%%timeit` cell runs its body once and prints `<timeit>`."""
    lines = source.split("\n")
    if lines and lines[0].strip().startswith("%%timeit"):
        return "\n".join(lines[1:]) + "\nprint('<timeit>')"
    out = []
    for line in lines:
        match = _TIMEIT.match(line)
        out.extend([match.group(1) + match.group(2), match.group(1) + "print('<timeit>')"]
                   if match else [line])
    return "\n".join(out)


# --- The kernel: runs in the measured interpreter --------------------------------------------

class CellTimeout(Exception):
    """A cell ran longer than the kernel allows."""


def _display(value: Any) -> str:
    """How IPython shows a cell's last value: containers pretty-printed, others by repr."""
    if type(value) in (list, tuple, dict, set, frozenset):
        return pprint.pformat(value, width=79, sort_dicts=False)
    return repr(value)


def run_cell(source: str, namespace: dict[str, Any], name: str) -> dict[str, Any]:
    """Runs one cell in `namespace` as a notebook kernel does.

    Args:
      source: the cell's Python source (magics already rewritten).
      namespace: the kernel's globals, shared by all cells.
      name: the file name tracebacks show for this cell.
    Returns:
      The cell's `stdout`, `display` (its last expression's value), `error` ("" or
      "Class: message"), `stderr` and `seconds`.
    """
    out, err = io.StringIO(), io.StringIO()
    display, error = "", ""
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        signal.alarm(CELL_TIMEOUT_S)
        try:
            tree = ast.parse(source, name)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, name, "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
                if value is not None and not source.rstrip().endswith(";"):
                    display = _display(value)
                    namespace["_"] = value
            _effects_barrier()
        except BaseException as exc:  # a cell's failure is a result, even SystemExit
            error = f"{type(exc).__name__}: {exc}"
        finally:
            signal.alarm(0)
    return {"stdout": out.getvalue(), "display": display, "error": error,
            "stderr": err.getvalue(), "seconds": round(time.monotonic() - start, 2)}


def _effects_barrier() -> None:
    """Waits for pending `jax.debug.print`s, so their text lands in the cell that made it."""
    jax = sys.modules.get("jax")
    barrier = getattr(jax, "effects_barrier", None)
    if barrier is not None:
        barrier()


class Watchdog(threading.Thread):
    """Ends the kernel when a cell holds more memory than allowed, or outlives its timeout by
    a minute (stuck where SIGALRM cannot interrupt it): it records the cell as `killed` and
    exits, and the driver starts the kernel again skipping that cell."""

    def __init__(self, sink: io.TextIOBase, memory_gb: float) -> None:
        super().__init__(daemon=True)
        self.sink, self.limit = sink, memory_gb * 2**30
        self.cell: int | None = None
        self.started = 0.0

    def enter(self, cell: int | None) -> None:
        self.cell, self.started = cell, time.monotonic()

    def run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while True:
            time.sleep(0.5)
            cell = self.cell
            if cell is None:
                continue
            with open("/proc/self/statm") as statm:
                resident = int(statm.read().split()[1]) * page
            reason = ""
            if resident > self.limit:
                reason = (f"held {resident / 2**30:.1f} GB, above the "
                          f"{self.limit / 2**30:g} GB allowed")
            elif time.monotonic() - self.started > CELL_TIMEOUT_S + 60:
                reason = f"ran {CELL_TIMEOUT_S + 60} s without returning to Python"
            if reason:
                self.sink.write(json.dumps(_record(cell, f"KernelKilled: the cell {reason}",
                                                   killed=True)) + "\n")
                self.sink.flush()
                os._exit(70)


def _record(index: int, error: str, **more: Any) -> dict[str, Any]:
    return {"index": index, "stdout": "", "display": "", "error": error, "stderr": "", **more}


def kernel_main(tutorial: str, record: str, alias: bool, skip: dict[int, str],
                memory_gb: float) -> None:
    """Runs the cells of `tutorial`, appending one JSON line per cell to `record`.

    Args:
      tutorial: the notebook's path.
      record: the file to write.
      alias: whether `import jax` imports justjax.
      skip: cells not to run, with the error to record for each.
      memory_gb: the memory a cell may hold before the watchdog ends the kernel.
    """
    if alias:
        import justjax
        justjax.install_as_jax()

    def on_alarm(signum: int, frame: Any) -> None:
        raise CellTimeout(f"cell ran longer than {CELL_TIMEOUT_S} s")

    signal.signal(signal.SIGALRM, on_alarm)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    cells = read_cells(pathlib.Path(tutorial).read_text())
    with open(record, "w") as sink:
        watchdog = Watchdog(sink, memory_gb)
        watchdog.start()
        for cell in cells:
            if unsupported_magic(cell.source):
                continue
            if cell.index in skip:
                result = _record(cell.index, skip[cell.index], killed=True)
            else:
                before = dict(namespace)
                watchdog.enter(cell.index)
                result = run_cell(_without_magics(cell.source), namespace,
                                  f"<cell {cell.index}>")
                watchdog.enter(None)
                if result["error"].startswith("CellTimeout"):
                    # Where a timed-out loop stopped depends on the machine: forget its work.
                    namespace.clear()
                    namespace.update(before)
            sink.write(json.dumps({"index": cell.index, **result}, ensure_ascii=False) + "\n")
            sink.flush()


# --- The driver ------------------------------------------------------------------------------

def run_side(side: str, tutorial: pathlib.Path, record: pathlib.Path, python: str,
             extra_path: str = "", skip: dict[int, str] | None = None,
             memory_gb: float = 12.0) -> None:
    """Runs the kernel for one side (`jax` or `justjax`) on one tutorial, in a fresh process,
    and again without the cell where a kernel was killed or died, until all cells have run.

    Args:
      side: "jax" or "justjax".
      tutorial: the notebook.
      record: where the kernel writes its per-cell results.
      python: the interpreter.
      extra_path: packages the tutorial imports, installed for both sides.
      skip: cells not to run (with the error to record): those real JAX could not finish.
      memory_gb: the memory a cell may hold.
    """
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={DEVICE_COUNT}",
               COLUMNS="80", TERM="dumb", PYTHONHASHSEED="0", JAX_PLATFORMS="cpu")
    env.pop("FORCE_COLOR", None)
    paths = [str(REPO / "src")] if side == "justjax" else []
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [*paths, extra_path,
                                                      env.get("PYTHONPATH")]))
    skip = dict(skip or {})
    runnable = [c.index for c in read_cells(tutorial.read_text())
                if not unsupported_magic(c.source)]
    for _ in range(len(runnable)):
        command = [python, str(pathlib.Path(__file__).resolve()), "--kernel",
                   str(tutorial.resolve()), str(record.resolve()), json.dumps(skip),
                   str(memory_gb)] + (["--alias"] if side == "justjax" else [])
        finished = subprocess.run(command, env=env, cwd=record.parent, capture_output=True,
                                  text=True)
        results = load_record(record)
        missing = [i for i in runnable if i not in results]
        killed = [r for r in results.values() if r.get("killed") and r["index"] not in skip]
        if killed:
            skip[killed[0]["index"]] = killed[0]["error"]
        elif missing and finished.returncode:
            skip[missing[0]] = (f"KernelDied: exit status {finished.returncode}: "
                                f"{finished.stderr.strip()[-300:]}")
        else:
            return


def beyond_limits(jax_record: pathlib.Path) -> dict[int, str]:
    """The cells real JAX could not finish within the time or memory allowed: not compared,
    so justjax need not run them (the kernels drop a timed-out cell's work alike)."""
    return {i: f"not run: real JAX's kernel could not finish it ({r['error'][:120]})"
            for i, r in load_record(jax_record).items()
            if r["error"].startswith(("CellTimeout", "KernelKilled"))}


def load_record(path: pathlib.Path) -> dict[int, dict[str, str]]:
    """A side's per-cell results, by cell index (cells after a crash are missing)."""
    if not path.exists():
        return {}
    return {r["index"]: r for r in map(json.loads, path.read_text().splitlines())}


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b")


def shown(result: dict[str, str]) -> str:
    """A cell's output as a notebook shows it: printed text, displayed value, error."""
    parts = [result["stdout"].rstrip("\n"), result["display"], result["error"]]
    text = "\n".join(p for p in parts if p)
    return "\n".join(line.rstrip() for line in _ADDRESS.sub("0x…", text).split("\n"))


def near(a: str, b: str) -> bool:
    """Whether two outputs differ only in floats equal to a relative 1e-5, and blanks."""
    pieces_a, pieces_b = _NUMBER.split(a), _NUMBER.split(b)
    numbers_a, numbers_b = _NUMBER.findall(a), _NUMBER.findall(b)
    if len(pieces_a) != len(pieces_b) or len(numbers_a) != len(numbers_b):
        return False
    for text_a, text_b in zip(pieces_a, pieces_b, strict=True):
        if " ".join(text_a.split()) != " ".join(text_b.split()):
            return False
    return all(x == y or math.isclose(float(x), float(y), rel_tol=1e-5, abs_tol=1e-6)
               for x, y in zip(numbers_a, numbers_b, strict=True))


def compare(tutorial: pathlib.Path, out: pathlib.Path) -> dict[str, Any]:
    """Compares the two sides' records of one tutorial.

    Returns:
      Counts (cells, using_jax, compared, agree, near, differ) and per-cell entries
      `skipped` (index, reason) and `differing` (index, code, jax, justjax).
    """
    cells = read_cells(tutorial.read_text())
    uses = cells_using_jax(cells)
    jax_rec = load_record(out / f"{tutorial.stem}.jax.jsonl")
    jj_rec = load_record(out / f"{tutorial.stem}.justjax.jsonl")
    summary: dict[str, Any] = {"tutorial": tutorial.name, "cells": len(cells),
                               "using_jax": sum(uses), "compared": 0, "agree": 0, "near": 0,
                               "skipped": [], "differing": []}
    for cell, use in zip(cells, uses, strict=True):
        reason = _skip_reason(cell, use, jax_rec.get(cell.index))
        if reason:
            if use:
                summary["skipped"].append({"index": cell.index, "reason": reason,
                                           "code": _head(cell.source),
                                           "justjax": _justjax_on_skipped(cell.index, jax_rec,
                                                                          jj_rec)})
            continue
        summary["compared"] += 1
        expected = shown(jax_rec[cell.index])
        got = shown(jj_rec[cell.index]) if cell.index in jj_rec else "<not run: kernel died>"
        if expected == got:
            summary["agree"] += 1
        elif near(expected, got):
            summary["near"] += 1
        else:
            summary["differing"].append({"index": cell.index, "code": _head(cell.source),
                                         "jax": expected, "justjax": got})
    return summary


def _justjax_on_skipped(index: int, jax_rec: dict[int, dict[str, str]],
                        jj_rec: dict[int, dict[str, str]]) -> str:
    """What justjax did in a cell not compared: "same" as JAX, its output, or "" (not run)."""
    if index not in jax_rec or index not in jj_rec:
        return ""
    got = shown(jj_rec[index])
    return "same" if got == shown(jax_rec[index]) else got


def _skip_reason(cell: Cell, uses_jax: bool, jax_result: dict[str, str] | None) -> str:
    if not uses_jax:
        return "uses no JAX"
    magic = unsupported_magic(cell.source)
    if magic:
        return f"IPython magic {magic}"
    if jax_result is None:
        return "real JAX's kernel did not reach it"
    if jax_result["error"] and "raises-exception" not in cell.tags:
        return f"fails in real JAX: {_truncate(jax_result['error'], 160)}"
    return ""


def _head(source: str, lines: int = 3) -> str:
    return "\n".join(source.split("\n")[:lines])


def _truncate(text: str, limit: int = TRUNCATE) -> str:
    return text if len(text) <= limit else text[:limit] + f" …[{len(text) - limit} more chars]"


def report(summaries: list[dict[str, Any]]) -> str:
    """The comparison as markdown: a table of totals, then each skipped and differing cell."""
    lines = ["| tutorial | cells | using JAX | compared | agree | near (floats) | differ |"
             " skipped |", "|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        lines.append(f"| {s['tutorial']} | {s['cells']} | {s['using_jax']} | {s['compared']} |"
                     f" {s['agree']} | {s['near']} | {len(s['differing'])} |"
                     f" {len(s['skipped'])} |")
    for s in summaries:
        lines += ["", f"## {s['tutorial']}", ""]
        for skip in s["skipped"]:
            lines.append(f"- cell {skip['index']} skipped: {skip['reason']}")
            if skip["justjax"]:
                lines.append(f"  (justjax: {_truncate(skip['justjax'], 160)!r})")
        for d in s["differing"]:
            lines += ["", f"### cell {d['index']}", "```python", d["code"], "```",
                      "JAX:", "```", _truncate(d["jax"]), "```",
                      "justjax:", "```", _truncate(d["justjax"]), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Command line: see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tutorials", nargs="+", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("tutorial_results"))
    parser.add_argument("--jax-python", default="/work/jaxvenv/bin/python")
    parser.add_argument("--justjax-python", default=sys.executable)
    parser.add_argument("--extra-path", default="",
                        help="a folder of packages the tutorials import (e.g. termcolor), "
                             "put on both sides' PYTHONPATH")
    parser.add_argument("--memory-gb", type=float, default=12.0,
                        help="the memory a cell may hold before its kernel is ended")
    parser.add_argument("--sides", default="jax,justjax",
                        help="the sides to (re)run; the others' records are reused")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    pythons = {"jax": args.jax_python, "justjax": args.justjax_python}
    summaries = []
    for tutorial in args.tutorials:
        for side in filter(None, args.sides.split(",")):
            skip = (beyond_limits(args.out / f"{tutorial.stem}.jax.jsonl")
                    if side == "justjax" else {})
            run_side(side, tutorial, args.out / f"{tutorial.stem}.{side}.jsonl", pythons[side],
                     args.extra_path, skip, args.memory_gb)
        summaries.append(compare(tutorial, args.out))
    text = report(summaries)
    (args.out / "report.md").write_text(text)
    (args.out / "summary.json").write_text(json.dumps(summaries, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--kernel"]:
        kernel_main(sys.argv[2], sys.argv[3], alias="--alias" in sys.argv[6:],
                    skip={int(k): v for k, v in json.loads(sys.argv[4]).items()},
                    memory_gb=float(sys.argv[5]))
    else:
        sys.exit(main(sys.argv[1:]))
