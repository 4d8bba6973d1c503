"""Programs using `jit` (nested jits, static arguments, pytrees, closures, transformations of
jitted functions and jits of transformations, donation, keep_unused, inline, checkpoint and
custom derivatives, library functions JAX jits) against what real JAX 0.10.2 recorded.

The corpus is `tools/jit_program_corpus.py`; `tools/record_jit_golden.py` ran it on real JAX and
wrote `tests/golden/jit_programs.json`. For each case:
- `test_jaxpr`: `make_jaxpr(f)(*args)` prints JAX's text character for character;
- `test_value`: `f(*args)` has JAX's pytree, dtypes, shapes, weak types and values;
- `test_traces`: calling `f` on the recorded sequence of arguments traces as often as JAX did;
- `test_stablehlo`: `jax.jit(f).lower(*args).as_text()` lowers, and its `@main` takes and
  returns JAX's types. The body is compared in a normalized form (per line: the op name and the
  tensor types) by `stablehlo_closeness`, which reports how close the texts are rather than
  failing on formatting.
An error JAX raised must be raised too: the same class, and the same message up to the first
object-specific detail. JAX is not needed.
"""
from __future__ import annotations

import functools
import json
import pathlib
import re
import warnings
from typing import Any

import numpy as np
import pytest

import justjax as jax
import justjax.nn  # noqa: F401  -- programs use jax.nn.*
import justjax.numpy as jnp
from justjax import lax
from tests import test_jnp_programs
from tests.test_ad_golden import _float0_aware_compare

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "jit_programs.json").read_text())
CASES: list[dict] = GOLDEN["cases"]
BASE: dict[str, Any] = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "functools": functools}
exec(GOLDEN["prelude"], BASE)

# (rtol, atol as a fraction of the leaf's largest magnitude): derivatives and reductions sum
# in another order than XLA.
TOLERANCE = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}

# Differences whose cause is owned outside this test's files, each with a precise diagnosis,
# per compared part; marked xfail(strict=True), so a fix shows up as XPASS.
_SEARCHSORTED = ("JAX 0.10's searchsorted goes through a hijax primitive "
                 "(`_searchsorted_compare_all_impl` jit, `lt_to` comparisons, a constvar for "
                 "the sorted array); justjax's searchsorted is plain jnp code")
KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {
    "jaxpr": {
        "library/searchsorted_compare_all": _SEARCHSORTED,
        "library_grad/var": "JAX's jvp of `_where` instantiates the zero tangent of its "
                            "constant branch in the known trace, so the scalar `0.0` is a "
                            "residual output of the known jit; justjax's instantiated zero is "
                            "a constant the unknown jit inlines as a literal",
    },
    "value": {},
    "traces": {},
    "stablehlo": {},
}


def _marks(title: str, part: str) -> list:
    reason = KNOWN_DIFFERENCES[part].get(title)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def _params(part: str) -> list:
    return [pytest.param(c, id=c["title"], marks=_marks(c["title"], part))
            for c in CASES if part in c]


def _fresh(case: dict) -> tuple[Any, tuple]:
    namespace = dict(BASE)
    exec(case["source"], namespace)
    return namespace, eval(case["args"], namespace)


def _message_head(message: str) -> str:
    """A message up to its first object-specific detail (reprs of tracers and objects)."""
    return re.split(r"<|Traced|object at 0x", message.strip().splitlines()[0])[0]


def _check_error(error: BaseException, want: dict) -> None:
    got = (type(error).__name__, _message_head(str(error)))
    expected = (want["type"], _message_head(want["message"]))
    assert got == expected, f"raised {got}; JAX raised {expected}"


def _run_part(case: dict, part: str, compute: Any) -> Any:
    """`compute()`, checked against a recorded error; None when the error matched."""
    want = case[part]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = compute()
        except Exception as e:  # noqa: BLE001 -- the exception is what is compared
            if "error" not in want:
                raise
            _check_error(e, want["error"])
            return None
    assert "error" not in want, f"JAX raised {want['error']['type']}: " \
                                f"{want['error']['message'][:200]}"
    return got


@pytest.mark.parametrize("case", _params("jaxpr"))
def test_jaxpr(case: dict) -> None:
    """`make_jaxpr(f)(*args)` prints JAX's text."""
    namespace, args = _fresh(case)
    text = _run_part(case, "jaxpr", lambda: str(jax.make_jaxpr(namespace["f"])(*args)))
    if text is not None:
        assert text == case["jaxpr"]["result"]


@pytest.mark.parametrize("case", _params("value"))
def test_value(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """`f(*args)` computes JAX's result."""
    for dtype, tol in TOLERANCE.items():
        monkeypatch.setitem(test_jnp_programs.TOLERANCE, dtype, tol)
    namespace, args = _fresh(case)
    result = _run_part(case, "value", lambda: namespace["f"](*args))
    if result is not None or "error" not in case["value"]:
        _compare(result, case["value"]["result"])


def _compare(x: Any, want: dict) -> None:
    """The recorded comparison, with named tuples (recorded under their class name) compared
    as their class and items."""
    if want["kind"] not in ("tuple", "list", "dict", "array", "float0") and "items" in want:
        assert type(x).__name__ == want["kind"]
        for value, item in zip(x, want["items"], strict=True):
            _compare(value, item)
        return
    _float0_aware_compare(x, want)


@pytest.mark.parametrize("case", _params("traces"))
def test_traces(case: dict) -> None:
    """Calling `f` on the recorded argument sequence traces as many times as in JAX."""
    namespace, _ = _fresh(case)

    def count() -> int:
        namespace["TRACES"][0] = 0
        for call_args in eval(case["calls"], namespace):
            jax.block_until_ready(namespace["f"](*call_args))
        return namespace["TRACES"][0]

    traces = _run_part(case, "traces", count)
    if traces is not None:
        assert traces == case["traces"]["result"]


# ---------------------------------------------------------------------------------------------
# StableHLO, normalized.

_OP = re.compile(r"\b((?:stablehlo|chlo|func|mhlo)\.[a-z_0-9]+|call|return)\b")
_TYPE = re.compile(r"tensor<[^>]*>")


def normalize_stablehlo(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Per line with an op: (op name, tensor types in the line). SSA names, attribute
    spellings and layout are dropped; `func.return` and `return` are one op."""
    lines = []
    for line in text.splitlines():
        match = _OP.search(line)
        if match is None:
            continue
        op = {"func.return": "return", "func.call": "call"}.get(match.group(1), match.group(1))
        lines.append((op, tuple(_TYPE.findall(line))))
    return lines


def _main_signature(text: str) -> tuple[str, ...]:
    for line in text.splitlines():
        if "@main(" in line:
            return tuple(_TYPE.findall(line))
    raise AssertionError("no @main function in the module")


def stablehlo_closeness(got: str, want: str) -> float:
    """The fraction of JAX's normalized lines that justjax's text has in the same order
    (longest common subsequence over the larger count): 1.0 is the same ops and types."""
    a, b = normalize_stablehlo(got), normalize_stablehlo(want)
    if not a and not b:
        return 1.0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1] / max(len(a), len(b))


def _lowered_text(namespace: dict, args: tuple) -> str:
    return jax.jit(namespace["f"]).lower(*args).as_text()


@pytest.mark.parametrize("case", _params("stablehlo"))
def test_stablehlo(case: dict) -> None:
    """`jit(f).lower(*args)` succeeds and its `@main` has JAX's argument and result types."""
    namespace, args = _fresh(case)
    text = _run_part(case, "stablehlo", lambda: _lowered_text(namespace, args))
    if text is not None:
        assert _main_signature(text) == _main_signature(case["stablehlo"]["result"])


def test_stablehlo_closeness_report(capsys: pytest.CaptureFixture) -> None:
    """Prints how close justjax's StableHLO is to JAX's over the corpus (never fails on
    formatting; fails only if no case lowers at all)."""
    scores = []
    for case in CASES:
        if "result" not in case.get("stablehlo", {}):
            continue
        namespace, args = _fresh(case)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                text = _lowered_text(namespace, args)
        except Exception:  # noqa: BLE001 -- a failure to lower scores 0
            scores.append((case["title"], 0.0))
            continue
        scores.append((case["title"], stablehlo_closeness(text, case["stablehlo"]["result"])))
    exact = sum(score == 1.0 for _, score in scores)
    mean = sum(score for _, score in scores) / len(scores)
    with capsys.disabled():
        print(f"\nStableHLO vs JAX: {exact}/{len(scores)} cases with the same ops and types "
              f"per line, mean closeness {mean:.3f}")
    assert any(score > 0 for _, score in scores)


def test_normalize_stablehlo_drops_formatting() -> None:
    """Two spellings of one module normalize alike; another op does not."""
    a = ("func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "
         "\"result\"}) {\n  %0 = stablehlo.sine %arg0 : tensor<3xf32>\n  return %0 : "
         "tensor<3xf32>\n}")
    b = a.replace("%0", "%x").replace("  ", " ")
    assert normalize_stablehlo(a) == normalize_stablehlo(b)
    assert stablehlo_closeness(a, b) == 1.0
    assert stablehlo_closeness(a.replace("sine", "cosine"), a) < 1.0


def test_corpus_is_well_formed() -> None:
    """Unique titles; every known difference names a case that has that part."""
    titles = [c["title"] for c in CASES]
    assert len(titles) == len(set(titles))
    assert 150 <= len(CASES) <= 300
    by_title = {c["title"]: c for c in CASES}
    for part, entries in KNOWN_DIFFERENCES.items():
        for title in entries:
            assert part in by_title[title], (part, title)
