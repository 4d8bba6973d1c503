"""Records real JAX's jaxprs and values for the differentiation corpus.

Run by hand, with real JAX (never from the tests):

    /work/jaxvenv/bin/python tools/record_ad_golden.py

Writes `tests/golden/ad_programs.json`, read by `tests/test_ad_golden.py`. The programs live
in `ad_program_corpus.py` beside this script.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from ad_program_corpus import CASES, PRELUDE  # noqa: E402
from record_jax_golden import encode  # noqa: E402

def encode_result(x):
    """`encode`, plus the float0 zero tangents JAX returns for integer inputs."""
    if isinstance(x, np.ndarray) and x.dtype == jax.dtypes.float0:
        return {"kind": "float0", "shape": list(x.shape)}
    if isinstance(x, (tuple, list)):
        return {"kind": type(x).__name__, "items": [encode_result(v) for v in x]}
    if isinstance(x, dict):
        return {"kind": "dict", "keys": list(x), "items": [encode_result(v) for v in x.values()]}
    if type(x).__name__.startswith("Typed"):  # JAX's canonicalized Python scalars
        return encode(jnp.asarray(x))
    return encode(x)


OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "ad_programs.json"


def main() -> None:
    namespace = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
    exec(PRELUDE, namespace)
    records = []
    for title, fun_src, args_src, what in CASES:
        fun = eval(fun_src, namespace)
        args = eval(args_src, namespace)
        record = {"title": title, "fun": fun_src, "args": args_src, "what": what}
        if what in ("jaxpr", "both"):
            record["jaxpr"] = str(jax.make_jaxpr(fun)(*args))
        if what in ("value", "both"):
            record["value"] = encode_result(fun(*args))
        records.append(record)
    OUT.write_text(json.dumps({"prelude": PRELUDE, "cases": records}, indent=1) + "\n")
    print(f"wrote {len(records)} cases to {OUT}")


if __name__ == "__main__":
    main()
