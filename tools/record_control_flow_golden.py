"""Records what real JAX prints, computes and lowers for the control-flow corpus (issue #6).

Run by hand, with real JAX (never from the tests), from a directory that does not shadow
modules:

    cd /tmp && /work/jaxvenv/bin/python /work/main/tools/record_control_flow_golden.py

Writes `tests/golden/control_flow_programs.json`: for every case of
`control_flow_corpus.CASES` the same record as `record_jit_golden.record` gives a jit case
(title, source, args; "jaxpr" = `make_jaxpr(f)(*args)` text, "value" = the encoded result,
"stablehlo" = `jax.jit(f).lower(*args).as_text()`, each either {"result": ...} or
{"error": {"type", "message"}}), plus "groups": the number of cases per title group.
"""
from __future__ import annotations

import collections
import functools
import json
import pathlib
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from control_flow_corpus import CASES, PRELUDE  # noqa: E402
from record_jit_golden import record  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"
       / "control_flow_programs.json")


def _report_errors(entries: list[dict]) -> None:
    """Print every part that raised, so unexpected errors are seen when recording."""
    for e in entries:
        for part in ("jaxpr", "value", "stablehlo"):
            if "error" in e[part]:
                err = e[part]["error"]
                print(f"note: {e['title']}: {part} raised {err['type']}: "
                      f"{err['message'][:120]!r}", file=sys.stderr)


def main() -> None:
    titles = [case.title for case in CASES]
    duplicates = sorted({t for t in titles if titles.count(t) > 1})
    if duplicates:
        raise SystemExit(f"duplicate titles: {duplicates}")
    base = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "functools": functools}
    exec(PRELUDE, base)
    entries = [record(base, case) for case in CASES]
    _report_errors(entries)
    groups = collections.Counter(t.split("/")[0] for t in titles)
    golden = {"jax_version": jax.__version__, "numpy_version": np.__version__,
              "prelude": PRELUDE, "groups": dict(groups), "cases": entries}
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {OUT}: {len(entries)} cases; {dict(groups)}")


if __name__ == "__main__":
    main()
