"""Records what real JAX prints, computes and lowers for the `jax.random` corpus (issue #7).

Run by hand, with real JAX (never from the tests), from a directory that does not shadow
modules:

    cd /tmp && /work/jaxvenv/bin/python /work/main/tools/record_random_golden.py

Writes `tests/golden/random_programs.json`: for every case of `random_corpus.CASES` its title,
source, args and "config" (the flags it ran under), and, each part either {"result": ...} or
{"error": {"type", "message"}}:
- "jaxpr": the text of `make_jaxpr(f)(*args)`;
- "value": the encoded result of `f(*args)` (as `record_jit_golden`; a typed key array leaf is
  {"kind": "key", "dtype": "key<fry>", "shape", "data": its encoded `key_data`});
- "warnings": the warnings `f(*args)` issued, as [class name, message] pairs;
- "stablehlo": the `func.func public @main(...)` line of `jax.jit(f).lower(*args).as_text()`
  (its argument and result types, all the replay test compares), or JAX's error: the whole
  texts run to 20-80 thousand characters for samplers built on threefry2x32 (a while loop with
  a called body) and would make the file megabytes (rerun JAX to see one);
plus "groups": the number of cases per title group.
"""
from __future__ import annotations

import collections
import contextlib
import functools
import json
import pathlib
import sys
import warnings
from typing import Any, Callable, Iterator

import numpy as np

import jax
import jax.numpy as jnp
import jax.random
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from random_corpus import CASES, PRELUDE, Case, case_config  # noqa: E402
from record_ad_golden import encode_result  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"
       / "random_programs.json")


@contextlib.contextmanager
def flags(config: dict[str, Any]) -> Iterator[None]:
    """Sets JAX's config flags for the body and restores them afterwards."""
    old = {name: getattr(jax.config, name) for name in config}
    for name, value in config.items():
        jax.config.update(name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            jax.config.update(name, value)


def encode_random_result(x: Any) -> dict:
    """`encode_result`, with typed key array leaves encoded as their key type, shape and
    key data (a key has no numeric value of its own)."""
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return {"kind": "key", "dtype": str(x.dtype), "shape": list(x.shape),
                "data": encode_result(jax.random.key_data(x))}
    if isinstance(x, (tuple, list)):
        return {"kind": type(x).__name__, "items": [encode_random_result(v) for v in x]}
    if isinstance(x, dict):
        return {"kind": "dict", "keys": list(x),
                "items": [encode_random_result(v) for v in x.values()]}
    return encode_result(x)


def _part(compute: Callable[[], Any]) -> dict:
    """{"result": ...} or {"error": {"type", "message"}} for one recorded part."""
    try:
        return {"result": compute()}
    except Exception as e:  # noqa: BLE001 -- the exception is part of the record
        return {"error": {"type": type(e).__name__, "message": str(e)}}


def _stablehlo(f: Callable, args: tuple) -> dict:
    """The "stablehlo" part: the `@main` line of the text, or JAX's error."""
    part = _part(lambda: jax.jit(f).lower(*args).as_text())
    if "result" in part:
        part["result"] = next(line.strip() for line in part["result"].splitlines()
                              if "@main(" in line)
    return part


def _value(f: Callable, args: tuple, entry: dict) -> dict:
    """The "value" part; the warnings `f(*args)` issued go to entry["warnings"]."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = _part(lambda: encode_random_result(f(*args)))
    entry["warnings"] = [[w.category.__name__, str(w.message)] for w in caught]
    return value


def record(base: dict, case: Case) -> dict:
    """The record of one case, run under its flags."""
    config = case_config(case)
    entry: dict[str, Any] = {"title": case.title, "source": case.source, "args": case.args,
                             "config": config}
    with flags(config):
        namespace = dict(base)
        exec(case.source, namespace)
        f = namespace["f"]
        args = eval(case.args, namespace)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry["jaxpr"] = _part(lambda: str(jax.make_jaxpr(f)(*args)))
        entry["value"] = _value(f, args, entry)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry["stablehlo"] = _stablehlo(f, args)
    return entry


def _report_errors(entries: list[dict]) -> None:
    """Print every part that raised, and every warning, so surprises are seen when recording."""
    for e in entries:
        for part in ("jaxpr", "value", "stablehlo"):
            if "error" in e[part]:
                err = e[part]["error"]
                print(f"note: {e['title']}: {part} raised {err['type']}: "
                      f"{err['message'][:120]!r}", file=sys.stderr)
        for category, message in e["warnings"]:
            print(f"note: {e['title']}: warns {category}: {message[:100]!r}", file=sys.stderr)


def main() -> None:
    titles = [case.title for case in CASES]
    duplicates = sorted({t for t in titles if titles.count(t) > 1})
    if duplicates:
        raise SystemExit(f"duplicate titles: {duplicates}")
    base = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "functools": functools,
            "random": jax.random}
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
