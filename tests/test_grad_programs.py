"""Differentiation programs over jax.numpy / jax.nn / jax.scipy.special / lax, against what real
JAX 0.10.2 computed.

The corpus is `tools/grad_program_corpus.py`; `tools/record_grad_golden.py` ran it on real JAX
and wrote `tests/golden/grad_programs.json`. Each case's result must have JAX's pytree
structure, leaf kinds, dtypes, shapes, weak types and values (float32 within 1e-5 relative plus
1e-5 of the leaf's largest magnitude: derivatives sum and cancel many rounded terms, and XLA
orders its sums differently from NumPy), or raise JAX's exception class with the first line of
its message. Cases in the "x64" group run with `jax_enable_x64` on. JAX is not needed.
"""
from __future__ import annotations

import json
import pathlib
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

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "grad_programs.json").read_text())
CASES: list[dict] = GOLDEN["cases"]
NAMESPACE: dict[str, Any] = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
exec(GOLDEN["prelude"], NAMESPACE)

# (rtol, atol as a fraction of the leaf's largest magnitude) per float dtype.
TOLERANCE = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5), "float64": (1e-12, 1e-12),
             "complex128": (1e-12, 1e-12)}

# Cases given a wider tolerance, each with the reason.
WIDER_TOLERANCE: dict[str, tuple[float, float]] = {}

# Cases where justjax still differs from JAX, each with the reason. The test asserts that they
# still differ, so a fix shows up as a failure asking to remove the entry.
# (transform/second_log_softmax, listed while the reference backend's NumPy exp and log ran
# programs, now cancels to exactly 0 as in JAX.)
KNOWN_DIFFERENCES: dict[str, str] = {}


def _run(case: dict) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fun = eval(case["fun"], NAMESPACE)
        args = eval(case["args"], NAMESPACE)
        return fun(*args)


def _check(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs one case and asserts it matches the record (AssertionError when it does not)."""
    for dtype, tol in TOLERANCE.items():
        monkeypatch.setitem(test_jnp_programs.TOLERANCE, dtype,
                            WIDER_TOLERANCE.get(case["title"], tol))
    want_error = case.get("error")
    try:
        result = _run(case)
    except Exception as e:  # noqa: BLE001 -- the exception is what is compared
        if want_error is None:
            raise AssertionError(f"raised {type(e).__name__}: {first_line(str(e))}") from e
        got = (type(e).__name__, first_line(str(e)))
        want = (want_error["type"], first_line(want_error["message"]))
        assert got == want, f"raised {got[0]}: {got[1]!r}; JAX raised {want[0]}: {want[1]!r}"
        return
    if want_error is not None:
        raise AssertionError(f"returned {summarize(result)}; JAX raised {want_error['type']}: "
                             f"{first_line(want_error['message'])!r}")
    _float0_aware_compare(result, case["result"])


@pytest.mark.parametrize("case", [pytest.param(c, id=c["title"]) for c in CASES])
def test_grad_program(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """One recorded program: justjax computes JAX's derivative or raises JAX's error."""
    x64 = case["title"].startswith("x64/")
    with jax.config.override("jax_enable_x64", x64):
        if case["title"] in KNOWN_DIFFERENCES:
            with pytest.raises(AssertionError):
                _check(case, monkeypatch)
            pytest.xfail(KNOWN_DIFFERENCES[case["title"]])
        _check(case, monkeypatch)


def test_corpus_is_well_formed() -> None:
    """Unique titles, one outcome each, errors exactly under "error/", and every known
    difference or widened tolerance names a case of the corpus."""
    titles = [c["title"] for c in CASES]
    assert len(titles) == len(set(titles))
    assert all(("result" in c) != ("error" in c) for c in CASES)
    assert all(c["title"].startswith("error/") == ("error" in c) for c in CASES)
    assert set(KNOWN_DIFFERENCES) <= set(titles)
    assert set(WIDER_TOLERANCE) <= set(titles)
