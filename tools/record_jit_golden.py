"""Records what real JAX prints, computes and lowers for the corpus of jit programs.

Run by hand, with real JAX (never from the tests), from a directory that does not shadow
modules:

    cd /tmp && /work/jaxvenv/bin/python /work/main/tools/record_jit_golden.py

Writes `tests/golden/jit_programs.json`, read by `tests/test_jit_programs.py`: for every case of
`jit_program_corpus.CASES` its title and sources, and (each part either its result or the
exception JAX raised, as class name and message):
- "jaxpr": the text of `make_jaxpr(f)(*args)`;
- "value": the encoded result pytree of `f(*args)` (dtype, shape, weak type, values per leaf);
- "stablehlo": `jax.jit(f).lower(*args).as_text()`;
- "traces": for cases with `calls`, `TRACES[0]` after calling `f` on each argument tuple of a
  freshly executed source.
"""
from __future__ import annotations

import functools
import json
import pathlib
import sys
import warnings
from typing import Any, Callable

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from jit_program_corpus import CASES, PRELUDE, Case  # noqa: E402
from record_ad_golden import encode_result  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "jit_programs.json"


def _namespace(base: dict, source: str) -> dict:
    namespace = dict(base)
    exec(source, namespace)
    return namespace


def _part(compute: Callable[[], Any]) -> dict:
    """{"result": ...} or {"error": {"type", "message"}} for one recorded part."""
    try:
        return {"result": compute()}
    except Exception as e:  # noqa: BLE001 -- the exception is part of the record
        return {"error": {"type": type(e).__name__, "message": str(e)}}


def _traces(base: dict, case: Case) -> int:
    namespace = _namespace(base, case.source)
    namespace["TRACES"][0] = 0
    for call_args in eval(case.calls, namespace):
        jax.block_until_ready(namespace["f"](*call_args))
    return namespace["TRACES"][0]


def record(base: dict, case: Case) -> dict:
    entry: dict[str, Any] = {"title": case.title, "source": case.source, "args": case.args}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.calls is not None:
            entry["calls"] = case.calls
            entry["traces"] = _part(lambda: _traces(base, case))
        namespace = _namespace(base, case.source)
        f = namespace["f"]
        args = eval(case.args, namespace)
        entry["jaxpr"] = _part(lambda: str(jax.make_jaxpr(f)(*args)))
        entry["value"] = _part(lambda: encode_result(f(*args)))
        entry["stablehlo"] = _part(lambda: jax.jit(f).lower(*args).as_text())
    return entry


def main() -> None:
    titles = [case.title for case in CASES]
    duplicates = sorted({t for t in titles if titles.count(t) > 1})
    if duplicates:
        raise SystemExit(f"duplicate titles: {duplicates}")
    base = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "functools": functools}
    exec(PRELUDE, base)
    entries = [record(base, case) for case in CASES]
    for e in entries:
        for part in ("jaxpr", "value", "stablehlo", "traces"):
            if "error" in e.get(part, {}):
                print(f"note: {e['title']}: {part} raised {e[part]['error']['type']}: "
                      f"{e[part]['error']['message'][:100]}", file=sys.stderr)
    golden = {"jax_version": jax.__version__, "numpy_version": np.__version__,
              "prelude": PRELUDE, "cases": entries}
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {OUT}: {len(entries)} cases")


if __name__ == "__main__":
    main()
