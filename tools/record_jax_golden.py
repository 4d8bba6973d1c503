"""Records what real JAX computes for a corpus of ordinary jax.numpy programs.

Run by hand, with real JAX (never from the tests):

    /work/jaxvenv/bin/python tools/record_jax_golden.py

Each program is a Python expression, or a `def f(): ... return ...` block, evaluated with the
names `jax`, `jnp`, `lax` and `np` bound to real JAX / NumPy. The script writes
`tests/golden/jnp_programs.json`: for every program its source and either its result (a pytree of
encoded leaves: dtype name, shape, weak type and values) or the exception it raised (class name
and JAX's full message). `tests/test_jnp_programs.py` runs the same sources on justjax and compares.

The program list lives in `jnp_program_corpus.py` beside this script.
"""
from __future__ import annotations

import json
import math
import pathlib
import sys
import warnings
from typing import Any

import numpy as np

import jax
import jax.numpy as jnp
import jax.scipy.special  # noqa: F401  -- programs use jax.scipy.special.*
from jax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from jnp_program_corpus import PROGRAMS  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "jnp_programs.json"
MAX_ELEMENTS = 64


def encode_float(v: float) -> float | str:
    """A float as JSON can hold it: NaN and the infinities become strings."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def encode_values(a: np.ndarray) -> Any:
    """Nested lists of an array's values: ints/bools as is, floats encoded, complex as [re, im]."""
    kind = a.dtype.kind
    if kind == "b":
        return a.tolist()
    if kind in "iu":
        return a.astype(np.int64).tolist() if kind == "i" else a.astype(np.uint64).tolist()
    if kind == "c":
        pairs = a.astype(np.complex128).ravel()
        flat = [[encode_float(z.real), encode_float(z.imag)] for z in pairs]
        return np.array(flat, dtype=object).reshape(a.shape + (2,)).tolist() if a.size else []
    flat = [encode_float(z) for z in a.astype(np.float64).ravel()]
    return np.array(flat, dtype=object).reshape(a.shape).tolist() if a.size else []


def encode_array(x: Any, kind: str, weak: bool) -> dict:
    a = np.asarray(x)
    if a.size > MAX_ELEMENTS:
        raise ValueError(f"result leaf too large ({a.size} elements)")
    return {"kind": kind, "dtype": str(a.dtype), "shape": list(a.shape), "weak_type": weak,
            "values": encode_values(a)}


def encode(x: Any) -> dict:
    """Encodes a result pytree; raises on a leaf type the corpus should not produce."""
    if isinstance(x, jax.Array):
        return encode_array(x, "array", bool(x.aval.weak_type))
    if isinstance(x, np.ndarray):
        return encode_array(x, "ndarray", False)
    if isinstance(x, np.generic):
        return encode_array(x, "npscalar", False)
    if isinstance(x, np.dtype):
        return {"kind": "dtype", "name": str(x)}
    if isinstance(x, bool):
        return {"kind": "bool", "value": x}
    if isinstance(x, int):
        return {"kind": "int", "value": x}
    if isinstance(x, float):
        return {"kind": "float", "value": encode_float(x)}
    if isinstance(x, complex):
        return {"kind": "complex", "value": [encode_float(x.real), encode_float(x.imag)]}
    if isinstance(x, str):
        return {"kind": "str", "value": x}
    if x is None:
        return {"kind": "none"}
    if isinstance(x, (tuple, list)):
        return {"kind": type(x).__name__, "items": [encode(v) for v in x]}
    if isinstance(x, dict):
        return {"kind": "dict", "keys": list(x), "items": [encode(v) for v in x.values()]}
    raise TypeError(f"cannot encode result of type {type(x).__name__}")


def run_program(source: str) -> Any:
    """Evaluates a program's source with jax, jnp, lax, np bound; returns its result."""
    namespace = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
    if source.lstrip().startswith("def f("):
        exec(compile(source, "<program>", "exec"), namespace)
        return namespace["f"]()
    return eval(compile(source, "<program>", "eval"), namespace)


def record(name: str, source: str) -> dict:
    entry: dict[str, Any] = {"name": name, "source": source}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_program(source)
    except Exception as e:  # noqa: BLE001 -- every exception is part of the record
        entry["error"] = {"type": type(e).__name__, "message": str(e)}
        return entry
    if name.startswith("jaxpr/") and "jit[" in str(result):
        raise ValueError(f"{name}: JAX wraps this in an inner jit; keep it out of the corpus")
    entry["result"] = encode(result)
    return entry


def main() -> None:
    names = [name for name, _ in PROGRAMS]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SystemExit(f"duplicate program names: {duplicates}")
    entries = [record(name, source) for name, source in PROGRAMS]
    for e in entries:
        want_error = e["name"].startswith("error/")
        if want_error != ("error" in e):
            got = e.get("error", "a result")
            print(f"note: {e['name']}: expected {'an error' if want_error else 'a result'}, "
                  f"got {got}", file=sys.stderr)
    golden = {"jax_version": jax.__version__, "numpy_version": np.__version__,
              "x64": bool(jax.config.jax_enable_x64), "programs": entries}
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    n_err = sum("error" in e for e in entries)
    print(f"wrote {OUT}: {len(entries)} programs ({n_err} raising)")


if __name__ == "__main__":
    main()
