"""Records what real JAX computes for the corpus of differentiation programs.

Run by hand, with real JAX (never from the tests), from the repository root:

    /work/jaxvenv/bin/python tools/record_grad_golden.py

Writes `tests/golden/grad_programs.json`, read by `tests/test_grad_programs.py`: for every case
its title, sources and either the encoded result pytree (dtype, shape, weak type and values of
every leaf) or the exception JAX raised (class name and full message). The programs live in
`grad_program_corpus.py` (and its second half, `grad_program_corpus_extra.py`) beside this
script; cases in the "x64" group run with `jax_enable_x64` on.
"""
from __future__ import annotations

import contextlib
import json
import pathlib
import sys
import warnings
from typing import Any, Iterator

import numpy as np

import jax
import jax.numpy as jnp
import jax.scipy.special  # noqa: F401  -- the prelude binds jax.scipy.special
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from grad_program_corpus import CASES, PRELUDE  # noqa: E402
from record_ad_golden import encode_result  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "grad_programs.json"


@contextlib.contextmanager
def x64_if(enabled: bool) -> Iterator[None]:
    """Switches `jax_enable_x64` on for the body when `enabled`."""
    if not enabled:
        yield
        return
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", False)


def record(namespace: dict, title: str, fun_src: str, args_src: str) -> dict:
    entry: dict[str, Any] = {"title": title, "fun": fun_src, "args": args_src}
    with x64_if(title.startswith("x64/")), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fun = eval(fun_src, namespace)
            args = eval(args_src, namespace)
            result = fun(*args)
        except Exception as e:  # noqa: BLE001 -- every exception is part of the record
            entry["error"] = {"type": type(e).__name__, "message": str(e)}
            return entry
        try:
            entry["result"] = encode_result(result)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{title}: {e}") from e
    return entry


def main() -> None:
    titles = [title for title, _, _ in CASES]
    duplicates = sorted({t for t in titles if titles.count(t) > 1})
    if duplicates:
        raise SystemExit(f"duplicate titles: {duplicates}")
    namespace = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
    exec(PRELUDE, namespace)
    entries = [record(namespace, *case) for case in CASES]
    for e in entries:
        if e["title"].startswith("error/") != ("error" in e):
            got = e.get("error", "a result")
            print(f"note: {e['title']}: got {got}", file=sys.stderr)
    golden = {"jax_version": jax.__version__, "numpy_version": np.__version__,
              "prelude": PRELUDE, "cases": entries}
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    n_err = sum("error" in e for e in entries)
    print(f"wrote {OUT}: {len(entries)} cases ({n_err} raising)")


if __name__ == "__main__":
    main()
