"""Vectorized programs (vmap over jax.numpy / jax.nn / jax.scipy.special / lax, nested vmaps,
per-example gradients, jacobians, custom derivatives, collectives, errors) against what real
JAX 0.10.2 computed and printed.

The corpus is `tools/vmap_program_corpus.py`; `tools/record_vmap_golden.py` ran it on real JAX
and wrote `tests/golden/vmap_programs.json`. For each case:
- `test_vmap_program`: the result must have JAX's pytree structure, leaf kinds, dtypes, shapes,
  weak types and values (float32 within 1e-5 relative plus 1e-5 of the leaf's largest
  magnitude: batched reductions and derivatives sum in a different order than XLA), or raise
  JAX's exception class with JAX's full message (object ids, which differ per run, normalized).
- `test_vmap_jaxpr`: `make_jaxpr(function)(*arguments)` must print JAX's text character for
  character. JAX's text was recorded under `jax.disable_jit()`, so jax.numpy functions that JAX
  wraps in `jit` appear inlined; justjax traces under `justjax.disable_jit()` too.
JAX is not needed.
"""
from __future__ import annotations

import json
import pathlib
import re
import warnings
from typing import Any

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
import justjax.scipy.special  # noqa: F401  -- the prelude binds jax.scipy.special
from justjax import lax
from tests import test_jnp_programs
from tests.test_ad_golden import _float0_aware_compare
from tests.test_jnp_programs import first_line, summarize

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "vmap_programs.json").read_text())
CASES: list[dict] = GOLDEN["cases"]
NAMESPACE: dict[str, Any] = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
exec(GOLDEN["prelude"], NAMESPACE)

# (rtol, atol as a fraction of the leaf's largest magnitude) per float dtype.
TOLERANCE = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}

# Printed jaxprs that differ from JAX's on purpose, each with the reason. The test asserts
# that they still differ, so a change shows up.
_LOOP = ("JAX's {} runs a lax loop ({}); the text recorded under disable_jit is JAX's loop run in "
         "Python, and justjax has no control-flow primitives yet (issue of lax control flow)")
KNOWN_DIFFERENCES: dict[str, str] = {
    "binary/gcd_lcm": _LOOP.format("jnp.gcd", "while_loop, printed as a while equation"),
    "binary/polyval_x": _LOOP.format("jnp.polyval", "fori_loop"),
    "binary/interp": _LOOP.format("jnp.interp (through searchsorted)", "fori_loop"),
    "binary/interp_fp": _LOOP.format("jnp.interp (through searchsorted)", "fori_loop"),
    "sort/searchsorted": _LOOP.format("jnp.searchsorted (method='scan')", "fori_loop"),
    "sort/searchsorted_sorted_batched": _LOOP.format("jnp.searchsorted", "fori_loop"),
    "sort/searchsorted_right": _LOOP.format("jnp.searchsorted", "fori_loop"),
    "sort/digitize": _LOOP.format("jnp.digitize (through searchsorted)", "fori_loop"),
    "shape/diag": "JAX's batched diagonal extraction goes through a platform-dependent `cond` "
                  "on `platform_index` (a Mosaic/TPU kernel choice); justjax prints only the "
                  "gather that branch computes on CPU",
}

# Cases that still fail (values or errors; jaxpr text) for a cause owned elsewhere, each
# naming the cause; marked xfail(strict=True), so a fix shows up as XPASS. None at present.
PENDING: dict[str, str] = {}
PENDING_JAXPR: dict[str, str] = {}


def normalize(message: str) -> str:
    """An error message with the per-run object ids replaced, and the harness's own source
    line (where a tracer was created when the program did not create it: the recorder's call
    in JAX's text, this file's in justjax's) replaced; lines in the programs (`<string>`) stay."""
    message = re.sub(r"object id \d+", "object id <id>", message)
    return re.sub(r"\n  \S+\.py:\d+:\d+ \(\w+\)\n", "\n  <harness>\n", message)


def _eval_case(case: dict) -> tuple[Any, tuple]:
    return eval(case["fun"], NAMESPACE), eval(case["args"], NAMESPACE)


def _run(case: dict) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fun, args = _eval_case(case)
        return fun(*args)


def _marks(title: str, pending: dict[str, str]) -> list:
    if title in pending:
        return [pytest.mark.xfail(strict=True, reason=pending[title])]
    return []


@pytest.mark.parametrize("case", [pytest.param(c, id=c["title"], marks=_marks(c["title"], PENDING))
                                  for c in CASES])
def test_vmap_program(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """One recorded program: justjax computes JAX's result or raises JAX's error."""
    for dtype, tol in TOLERANCE.items():
        monkeypatch.setitem(test_jnp_programs.TOLERANCE, dtype, tol)
    want_error = case.get("error")
    try:
        result = _run(case)
    except Exception as e:  # noqa: BLE001 -- the exception is what is compared
        if want_error is None:
            raise AssertionError(f"raised {type(e).__name__}: {first_line(str(e))}") from e
        got = (type(e).__name__, normalize(str(e)))
        want = (want_error["type"], normalize(want_error["message"]))
        assert got == want, f"raised {got[0]}: {got[1]!r}; JAX raised {want[0]}: {want[1]!r}"
        return
    if want_error is not None:
        raise AssertionError(f"returned {summarize(result)}; JAX raised {want_error['type']}: "
                             f"{first_line(want_error['message'])!r}")
    _float0_aware_compare(result, case["result"])


def _jaxpr_cases() -> list:
    params = []
    for c in CASES:
        if "jaxpr" not in c:
            continue
        marks = _marks(c["title"], {**PENDING, **PENDING_JAXPR})
        params.append(pytest.param(c, id=c["title"], marks=marks))
    return params


@pytest.mark.parametrize("case", _jaxpr_cases())
def test_vmap_jaxpr(case: dict) -> None:
    """One recorded program's jaxpr: justjax prints JAX's equations."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fun, args = _eval_case(case)
        with jax.disable_jit():
            text = str(jax.make_jaxpr(fun)(*args))
    if case["title"] in KNOWN_DIFFERENCES:
        assert text != case["jaxpr"], "now matches JAX: remove it from KNOWN_DIFFERENCES"
        pytest.xfail(KNOWN_DIFFERENCES[case["title"]])
    assert text == case["jaxpr"]


def test_corpus_is_well_formed() -> None:
    """Unique titles, one outcome each, errors exactly under "error/", and every listed case
    names a case of the corpus (a jaxpr difference one with a recorded jaxpr)."""
    titles = [c["title"] for c in CASES]
    assert len(titles) == len(set(titles))
    assert all(("result" in c) != ("error" in c) for c in CASES)
    assert all(c["title"].startswith("error/") == ("error" in c) for c in CASES)
    assert set(PENDING) <= set(titles)
    with_jaxpr = {c["title"] for c in CASES if "jaxpr" in c}
    assert set(KNOWN_DIFFERENCES) <= with_jaxpr
    assert set(PENDING_JAXPR) <= with_jaxpr
    assert not set(KNOWN_DIFFERENCES) & (set(PENDING) | set(PENDING_JAXPR))
    assert len(KNOWN_DIFFERENCES) <= 12, "known differences must stay few"


def test_error_normalization() -> None:
    """The id normalization keeps everything but the id, so different texts stay different."""
    a = "This BatchTracer with object id 140542575343264 was created on line:"
    assert normalize(a) == "This BatchTracer with object id <id> was created on line:"
    assert normalize(a) != normalize(a.replace("BatchTracer", "JVPTracer"))
    b = "created on line:\n  /work/tools/record.py:58:21 (record)\n\nSee"
    assert normalize(b) == normalize(b.replace("/work/tools/record.py:58:21", "/t/x.py:3:1"))
    assert normalize("on line:\n  <string>:1:20 (<lambda>)\n") != normalize(
        "on line:\n  <string>:1:22 (<lambda>)\n")
