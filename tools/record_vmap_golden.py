"""Records what real JAX computes and prints for the corpus of vectorized programs.

Run by hand, with real JAX (never from the tests), from a directory that does not shadow
modules:

    cd /tmp && /work/jaxvenv/bin/python /work/main/tools/record_vmap_golden.py

Writes `tests/golden/vmap_programs.json`, read by `tests/test_vmap_programs.py`: for every case
its title, sources and either the encoded result pytree (dtype, shape, weak type and values of
every leaf) or the exception JAX raised (class name and full message); for cases that do not
raise, the text of `make_jaxpr(function)(*arguments)`.

The jaxpr is recorded with `jax.disable_jit()`: JAX wraps many jax.numpy / jax.nn functions in
`jit`, which prints as a `jit[name=... jaxpr={...}]` equation around the inlined equations, and
justjax has no jit equations until issue #5 (jit). Under `disable_jit` JAX traces those functions
inline, which is the text justjax must print; `jit_wrapped` says whether the text printed with
jit on differed. Values are computed with jit on, as users run them.
"""
from __future__ import annotations

import json
import pathlib
import sys
import warnings
from typing import Any

import numpy as np

import jax
import jax.numpy as jnp
import jax.scipy.special  # noqa: F401  -- the prelude binds jax.scipy.special
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import record_jax_golden  # noqa: E402
from record_ad_golden import encode_result  # noqa: E402
from vmap_program_corpus import CASES, PRELUDE  # noqa: E402

# Batched results are larger than the plain programs' (a batch of 2-d results): allow more.
record_jax_golden.MAX_ELEMENTS = 256

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "vmap_programs.json"


def _jaxpr_text(namespace: dict, fun_src: str, args_src: str) -> str:
    fun = eval(fun_src, namespace)
    args = eval(args_src, namespace)
    return str(jax.make_jaxpr(fun)(*args))


def record(namespace: dict, title: str, fun_src: str, args_src: str) -> dict:
    entry: dict[str, Any] = {"title": title, "fun": fun_src, "args": args_src}
    with warnings.catch_warnings():
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
        try:
            with jax.disable_jit():
                entry["jaxpr"] = _jaxpr_text(namespace, fun_src, args_src)
            jitted = _jaxpr_text(namespace, fun_src, args_src)
        except Exception as e:  # noqa: BLE001
            entry["jaxpr_error"] = {"type": type(e).__name__, "message": str(e)}
            return entry
        entry["jit_wrapped"] = jitted != entry["jaxpr"]
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
        if "jaxpr_error" in e:
            print(f"note: {e['title']}: make_jaxpr raised {e['jaxpr_error']}", file=sys.stderr)
    golden = {"jax_version": jax.__version__, "numpy_version": np.__version__,
              "prelude": PRELUDE, "cases": entries}
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    n_err = sum("error" in e for e in entries)
    print(f"wrote {OUT}: {len(entries)} cases ({n_err} raising)")


if __name__ == "__main__":
    main()
