"""Ordinary jax.numpy programs run on justjax and compared with what real JAX computed.

tests/golden/jnp_programs.json was written by tools/record_jax_golden.py with real JAX 0.10.2
(x64 off). Each program's source is evaluated here with `jax`, `jnp`, `lax` and `np` bound to
justjax, justjax.numpy, justjax.lax and NumPy; its result must have the same pytree structure,
leaf kinds, dtypes, shapes, weak types and values (ints and bools exact, floats within a tolerance
of a few ulps of their dtype), or it must raise the same exception class with the same first line
of message. JAX is not needed.
"""
from __future__ import annotations

import json
import math
import pathlib
import warnings
from typing import Any

import numpy as np
import pytest

import justjax
import justjax.lax
import justjax.nn  # noqa: F401  -- programs use jax.nn.*, as `import jax` provides
import justjax.numpy
import justjax.scipy.special  # noqa: F401  -- programs use jax.scipy.special.*

GOLDEN = pathlib.Path(__file__).parent / "golden" / "jnp_programs.json"
PROGRAMS: list[dict] = json.loads(GOLDEN.read_text())["programs"]

# (rtol, atol as a fraction of the leaf's largest magnitude) per float dtype. float32 allows
# ~16 ulp relative (XLA's and NumPy's transcendentals and summation orders differ by a few ulp)
# and ~8 ulp of the leaf's scale absolute, for values that cancel to ~0 (lgamma(1), sin(pi)).
# float16/bfloat16 are computed in float32 and rounded once: 2 ulp either way.
TOLERANCE = {"float32": (2e-6, 1e-6), "complex64": (2e-6, 1e-6),
             "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 8e-3)}
PY_FLOAT_RTOL = 2e-6


def run_program(source: str) -> Any:
    """Evaluates a program's source with justjax bound as jax; returns its result."""
    namespace = {"jax": justjax, "jnp": justjax.numpy, "lax": justjax.lax, "np": np}
    if source.lstrip().startswith("def f("):
        exec(compile(source, "<program>", "exec"), namespace)
        return namespace["f"]()
    return eval(compile(source, "<program>", "eval"), namespace)


def decode_float(v: float | str) -> float:
    return float(v)  # float("nan"), float("inf") and float("-inf") parse the encoded strings


def decode_values(values: Any, dtype: str, shape: list[int]) -> np.ndarray:
    """The expected values as an array: int64/uint64/bool exact, float64 or complex128."""
    if dtype == "bool":
        return np.array(values, dtype=bool).reshape(shape)
    if dtype.startswith("int"):
        return np.array(values, dtype=np.int64).reshape(shape)
    if dtype.startswith("uint"):
        return np.array(values, dtype=np.uint64).reshape(shape)
    flat = np.array(values, dtype=object).ravel()
    if dtype.startswith("complex"):
        parts = np.array([decode_float(v) for v in flat], dtype=np.float64)
        out = np.empty(parts.size // 2, dtype=np.complex128)
        out.real, out.imag = parts[0::2], parts[1::2]  # not re + 1j*im: 1j*inf has a NaN real part
        return out.reshape(shape)
    return np.array([decode_float(v) for v in flat], dtype=np.float64).reshape(shape)


def leaf_kind(x: Any) -> str:
    if isinstance(x, justjax.Array):
        return "array"
    if isinstance(x, np.ndarray):
        return "ndarray"
    if isinstance(x, np.generic):
        return "npscalar"
    if isinstance(x, np.dtype):
        return "dtype"
    if x is None:
        return "none"
    return type(x).__name__


def close_floats(got: np.ndarray, want: np.ndarray, rtol: float, scaled_atol: float
                 ) -> str | None:
    """Checks NaN/inf positions exactly and finite values to `rtol`, plus an absolute tolerance of
    `scaled_atol` times the leaf's largest finite magnitude."""
    got_nan, want_nan = np.isnan(got), np.isnan(want)
    if not np.array_equal(got_nan, want_nan):
        return "NaN positions differ"
    finite = np.isfinite(want)
    if not np.array_equal(got[~finite & ~want_nan], want[~finite & ~want_nan]):
        return "infinities differ"
    if not np.all(np.isfinite(got[finite])):
        return "got non-finite values where finite were expected"
    g, w = got[finite], want[finite]
    if g.size == 0:
        return None
    # A value that cancels to ~0 is judged against the magnitude of its peers; 1e-37 lets a
    # denormal equal a flushed zero.
    atol = scaled_atol * float(np.max(np.abs(w))) + 1e-37
    err = np.abs(g - w)
    if np.all(err <= atol + rtol * np.abs(w)):
        return None
    worst = int(np.argmax(err - rtol * np.abs(w)))
    return f"value {g.ravel()[worst]!r} != expected {w.ravel()[worst]!r} (rtol {rtol})"


def compare_values(got: np.ndarray, want: np.ndarray, dtype: str) -> str | None:
    if dtype == "bool" or dtype.startswith(("int", "uint")):
        if np.array_equal(got.astype(want.dtype), want):
            return None
        diff = np.argwhere(got.astype(want.dtype) != want)[:3].tolist()
        return f"values differ at {diff}: got {got.tolist()}, expected {want.tolist()}"
    rtol, atol = TOLERANCE.get(dtype, TOLERANCE["float32"])
    if dtype.startswith("complex"):
        return (close_floats(got.real.astype(np.float64), want.real, rtol, atol)
                or close_floats(got.imag.astype(np.float64), want.imag, rtol, atol))
    return close_floats(got.astype(np.float64), want, rtol, atol)


def compare_array(x: Any, want: dict, path: str) -> None:
    a = np.asarray(x)
    dtype = str(a.dtype)
    assert dtype == want["dtype"], f"{path}: dtype {dtype} != expected {want['dtype']}"
    assert list(a.shape) == want["shape"], f"{path}: shape {a.shape} != expected {want['shape']}"
    weak = bool(x.weak_type) if want["kind"] == "array" else False
    assert weak == want["weak_type"], f"{path}: weak_type {weak} != expected {want['weak_type']}"
    problem = compare_values(a, decode_values(want["values"], dtype, want["shape"]), dtype)
    assert problem is None, f"{path}: {problem}"


def compare_scalar(x: Any, want: dict, path: str) -> None:
    kind = want["kind"]
    if kind == "float":
        w = decode_float(want["value"])
        both_nan = math.isnan(x) and math.isnan(w)
        ok = both_nan or x == w or math.isclose(x, w, rel_tol=PY_FLOAT_RTOL)
    elif kind == "complex":
        w = complex(decode_float(want["value"][0]), decode_float(want["value"][1]))
        ok = x == w or abs(x - w) <= PY_FLOAT_RTOL * abs(w)
    elif kind == "dtype":
        w = want["name"]
        ok = str(x) == w
    elif kind == "none":
        w, ok = None, x is None
    else:
        w = want["value"]
        ok = x == w
    assert ok, f"{path}: {x!r} != expected {w!r}"


def compare(x: Any, want: dict, path: str = "result") -> None:
    """Asserts that `x` matches the encoded pytree `want`, naming the first differing leaf."""
    kind = leaf_kind(x)
    assert kind == want["kind"], f"{path}: got a {kind}, expected a {want['kind']}"
    if kind in ("tuple", "list"):
        n, m = len(x), len(want["items"])
        assert n == m, f"{path}: {kind} of {n} items, expected {m}"
        for i, (v, w) in enumerate(zip(x, want["items"], strict=True)):
            compare(v, w, f"{path}[{i}]")
    elif kind == "dict":
        assert list(x) == want["keys"], f"{path}: keys {list(x)} != expected {want['keys']}"
        for k, w in zip(want["keys"], want["items"], strict=True):
            compare(x[k], w, f"{path}[{k!r}]")
    elif kind in ("array", "ndarray", "npscalar"):
        compare_array(x, want, path)
    else:
        compare_scalar(x, want, path)


def first_line(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[0].rstrip() if lines else ""


def summarize(x: Any) -> str:
    if isinstance(x, (justjax.Array, np.ndarray, np.generic)):
        return f"{type(x).__name__}({np.asarray(x).dtype}{list(np.shape(x))})"
    if isinstance(x, (tuple, list)):
        return f"{type(x).__name__}({', '.join(summarize(v) for v in x)})"
    return repr(x)[:80]


# Programs whose JAX result comes from a part of JAX justjax does not have yet.
KNOWN_DIFFERENCES = {
    "error/overflow_python_int_in_add": "JAX's text comes from its inline jit around jnp.add "
                                        "parsing the argument ('An overflow was encountered "
                                        "while parsing an argument to a jitted computation, "
                                        "whose argument path is y'); justjax does not wrap the "
                                        "inline-jitted ufuncs, and jit._arg_aval (lead-owned) "
                                        "re-raises core.get_aval's OverflowError unchanged",
}


def _cases() -> list:
    return [pytest.param(p, id=p["name"], marks=[pytest.mark.xfail(
        strict=True, reason=KNOWN_DIFFERENCES[p["name"]])] if p["name"] in KNOWN_DIFFERENCES
        else []) for p in PROGRAMS]


@pytest.mark.parametrize("program", _cases())
def test_program(program: dict) -> None:
    """One recorded program: justjax gives JAX's result or raises JAX's error."""
    source = program["source"]
    want_error = program.get("error")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_program(source)
    except Exception as e:  # noqa: BLE001 -- the exception is what is compared
        if want_error is None:
            raise AssertionError(f"raised {type(e).__name__}: {first_line(str(e))}") from e
        got = (type(e).__name__, first_line(str(e)))
        want = (want_error["type"], first_line(want_error["message"]))
        assert got == want, f"raised {got[0]}: {got[1]!r}; JAX raised {want[0]}: {want[1]!r}"
        return
    if want_error is not None:
        pytest.fail(f"returned {summarize(result)}; JAX raised {want_error['type']}: "
                    f"{first_line(want_error['message'])!r}")
    compare(result, program["result"])


def test_corpus_is_well_formed() -> None:
    """The golden file was recorded with x64 off and has unique names and one outcome each."""
    golden = json.loads(GOLDEN.read_text())
    assert golden["x64"] is False
    names = [p["name"] for p in PROGRAMS]
    assert len(names) == len(set(names))
    assert all(("result" in p) != ("error" in p) for p in PROGRAMS)
    assert all(p["name"].startswith("error/") == ("error" in p) for p in PROGRAMS)


def _leaf(dtype: str, shape: list[int], values: Any, weak: bool = False) -> dict:
    return {"kind": "array", "dtype": dtype, "shape": shape, "weak_type": weak, "values": values}


@pytest.mark.parametrize("want, why", [
    (_leaf("int32", [3], [0, 1, 2]), "dtype"),
    (_leaf("float32", [3], [0.0, 1.0, 2.0], weak=True), "weak_type"),
    (_leaf("float32", [1, 3], [[0.0, 1.0, 2.0]]), "shape"),
    (_leaf("float32", [3], [0.0, 1.0, 2.00001]), "value"),
    (_leaf("float32", [3], [0.0, 1.0, "nan"]), "NaN"),
    ({"kind": "tuple", "items": [_leaf("float32", [3], [0.0, 1.0, 2.0])]}, "got a array"),
])
def test_compare_detects_differences(want: dict, why: str) -> None:
    """The comparison fails on each kind of difference it is meant to catch."""
    x = justjax.numpy.arange(3.0)
    compare(x, _leaf("float32", [3], [0.0, 1.0, 2.0]))
    with pytest.raises(AssertionError, match=why):
        compare(x, want)
