"""Programs using `jax.random` (keys raw and typed, bits, every distribution of JAX 0.10.2, the
legacy non-partitionable threefry, 64-bit mode, and all of it under jit, vmap, grad, scan and
fori_loop) against what real JAX 0.10.2 recorded (issue #7).

The corpus is `tools/random_corpus.py`; `tools/record_random_golden.py` ran it on real JAX and
wrote `tests/golden/random_programs.json`. Every case runs under the flags it was recorded with
(its "config": `jax_threefry_partitionable=False` for the group `legacy`,
`jax_enable_x64=True` for the group `x64`), set with `jax.config.update` and restored after.
- `test_jaxpr`: `make_jaxpr(f)(*args)` prints JAX's text character for character;
- `test_value`: `f(*args)` has JAX's pytree, dtypes, shapes, weak types and values (typed key
  arrays: their key type, shape and key data), and issues JAX's warnings;
- `test_lowering`: `jit(f).lower(*args)` succeeds where JAX's did (with JAX's `@main` types
  where the text was recorded) and raises JAX's error where JAX's raised; the body is not
  compared: `test_lowered_runs_on_xla` (needs_jax) instead runs OUR StableHLO on real XLA and
  compares the results with JAX's recorded values;
- an error JAX raised is raised too: the same class, the same message up to the first
  object-specific detail.
The whole module is skipped while `justjax.random` does not exist.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import pathlib
import warnings
from typing import Any, Callable, Iterator

import numpy as np
import pytest

if importlib.util.find_spec("justjax.random") is None:
    # find_spec rather than importorskip: once the module exists, an error importing it must
    # fail these tests, not skip them.
    pytest.skip("justjax.random does not exist yet (issue #7)", allow_module_level=True)

import justjax as jax  # noqa: E402
import justjax.numpy as jnp  # noqa: E402
import justjax.random  # noqa: E402
from justjax import lax  # noqa: E402
from tests import test_jit_programs as jit_programs  # noqa: E402
from tests import test_jnp_programs  # noqa: E402

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent / "golden" / "random_programs.json").read_text())
CASES: list[dict] = GOLDEN["cases"]
BASE: dict[str, Any] = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "functools": functools,
                        "random": justjax.random}
exec(GOLDEN["prelude"], BASE)

# Integers and bits must match exactly (compare_values compares them exactly). Floats are
# compared to rounding, (rtol, atol as a fraction of the leaf's largest magnitude): the
# samplers turn the exact bits into floats through erf_inv, log, log1p, exp, lgamma, digamma,
# sqrt and small factorizations (cholesky, eigh, svd, qr), which XLA computes with its own
# approximations, a few ulp away from ours; float32 gets 1e-5 as the jit and control-flow
# corpora do (the gradients of gamma, beta and dirichlet sum series), float16 and bfloat16
# about two ulp; float64 1e-11, far above f64 rounding through a few hundred ops and far
# below what a float32 step inside a float64 sampler would give (1e-7).
TOLERANCE = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5),
             "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 8e-3),
             "float64": (1e-11, 1e-11), "complex128": (1e-11, 1e-11)}

# Cases whose values are ill-conditioned in the bits' floats, with their own tolerances.
# truncated_normal maps a uniform in [erf(lo/sqrt2), erf(hi/sqrt2)] through sqrt2*erf_inv: for
# bounds [3, 4] that range lies within 3e-3 of 1, where d(sqrt2*erf_inv(u))/du is about 2e3, so
# one float32 ulp of erf's result (6e-8) moves a sample by about 1.2e-4, 3e-5 of its value.
CASE_TOLERANCE: dict[str, dict[str, tuple[float, float]]] = {
    "vmap/truncated_normal_bounds": {"float32": (1e-4, 1e-4)},
}


def _set_tolerances(title: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """TOLERANCE, then the case's own, in the table test_jnp_programs.compare_values reads."""
    for dtype, tol in {**TOLERANCE, **CASE_TOLERANCE.get(title, {})}.items():
        monkeypatch.setitem(test_jnp_programs.TOLERANCE, dtype, tol)


# Differences whose cause is owned outside this test's files, each with a precise diagnosis,
# per compared part ("jaxpr", "value", "lowering", "xla"); marked xfail(strict=True), so a fix
# shows up as XPASS.
_DIAGONAL = ("JAX 0.10.2's jnp.diagonal (inside orthogonal's QR sign fix) is a jit named "
             "`diagonal` masking with `eye` behind `platform_index`/`cond`; justjax's "
             "jnp.diagonal is a gather (same values)")
_LINEARIZE_KNOWN_LOOPS = (
    "in JAX's linearize, scan/while partial-eval rules run even on all-known loops (the "
    "gamma jvp's random_gamma_grad loops): the loop-invariant neg(log(max)) is hoisted as a "
    "scan const and unused while outputs print as `_`; justjax binds known loops on the "
    "parent trace (same values)")
_CONST_ORDER = ("a NumPy constant made by jnp.asarray inside the trace is numbered where JAX "
                "registers it (at creation); justjax numbers it at first use (same values)")
_NEGATIVE_SPLIT = ("JAX traces split(k, -1) to key<fry>[-1] and fails in MLIR's verifier with "
                   "jaxlib's MLIRError; justjax raises TypeError while tracing (issue #27: "
                   "every negative dimension is caught then, naming the primitive)")
_NEGATIVE_ORTHOGONAL = ("JAX's error comes from jnp.eye(-1) inside its jnp.diagonal (ValueError "
                        "negative dimensions); justjax's diagonal has no eye, so the first "
                        "broadcasting check raises TypeError")
KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {
    "jaxpr": {
        "orthogonal/n_3": _DIAGONAL, "orthogonal/m_2": _DIAGONAL,
        "x64/orthogonal_float64": _DIAGONAL, "error/orthogonal_negative_n": _NEGATIVE_ORTHOGONAL,
        "error/split_negative_num": _NEGATIVE_SPLIT,
        "grad/gamma_alpha": _LINEARIZE_KNOWN_LOOPS,
        "grad/gamma_alpha_scalar_jaxpr": _LINEARIZE_KNOWN_LOOPS,
        "grad/loggamma_alpha": _LINEARIZE_KNOWN_LOOPS, "grad/beta_a": _LINEARIZE_KNOWN_LOOPS,
        "grad/dirichlet_alpha": _LINEARIZE_KNOWN_LOOPS,
        "multivariate_normal/batched": _CONST_ORDER, "choice/no_replace_with_p": _CONST_ORDER,
        "choice/array_with_p": ("jnp.searchsorted is not JAX's `_searchsorted_scan_impl` "
                                "(same values)"),
        "binomial/scalar_params": ("JAX keeps a weak Python scalar through lax.full_like and "
                                   "prints `0.01:f32[]`; justjax prints the float32 value "
                                   "0.009999999776482582"),
    },
    "value": {"error/split_negative_num": _NEGATIVE_SPLIT,
              "error/orthogonal_negative_n": _NEGATIVE_ORTHOGONAL},
    "lowering": {"error/split_negative_num": _NEGATIVE_SPLIT,
                 "error/orthogonal_negative_n": _NEGATIVE_ORTHOGONAL},
    "xla": {},
}

# The distributions `jax.random` exports in 0.10.2; each is a title group of the corpus.
DISTRIBUTIONS = (
    "uniform", "normal", "randint", "bernoulli", "categorical", "choice", "permutation",
    "poisson", "binomial", "geometric", "multinomial", "rademacher", "truncated_normal",
    "exponential", "gumbel", "laplace", "logistic", "cauchy", "gamma", "loggamma", "beta",
    "dirichlet", "multivariate_normal", "orthogonal", "ball", "pareto", "weibull_min", "t",
    "chisquare", "f", "generalized_normal", "double_sided_maxwell", "maxwell", "rayleigh",
    "wald", "triangular", "lognormal")
OTHER_GROUPS = ("keys", "bits", "legacy", "x64", "jit", "vmap", "grad", "scan", "error")
GROUP_CONFIG = {"legacy": {"jax_threefry_partitionable": False},
                "x64": {"jax_enable_x64": True}}


def _recorded_part(part: str) -> str:
    """The part of the record a compared part checks ("lowering" and "xla" use "stablehlo")."""
    return "stablehlo" if part in ("lowering", "xla") else part


def _params(part: str, keep: Callable[[dict], bool] = lambda case: True) -> list:
    """One pytest param per kept case, strictly xfailed where KNOWN_DIFFERENCES[part] names
    it."""
    params = []
    for case in CASES:
        if not keep(case):
            continue
        reason = KNOWN_DIFFERENCES[part].get(case["title"])
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(case, id=case["title"], marks=marks))
    return params


@contextlib.contextmanager
def _flags(config: dict[str, Any], library: Any = jax) -> Iterator[None]:
    """The case's flags set with `library.config.update` for the body (justjax's by default),
    restored afterwards."""
    old = {name: getattr(library.config, name) for name in config}
    for name, value in config.items():
        library.config.update(name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            library.config.update(name, value)


def _fresh(case: dict) -> tuple[dict, tuple]:
    """The case's namespace (its source run on a copy of the prelude) and its arguments; call
    under the case's flags."""
    namespace = dict(BASE)
    exec(case["source"], namespace)
    return namespace, eval(case["args"], namespace)


def _run_part(want: dict, compute: Callable[[], Any]) -> tuple[Any, set]:
    """`compute()` checked against a recorded error (None when the error matched), and the
    warnings it issued as (class name, message) pairs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = compute()
        except Exception as e:  # noqa: BLE001 -- the exception is what is compared
            if "error" not in want:
                raise
            jit_programs._check_error(e, want["error"])
            got = None
        else:
            assert "error" not in want, (f"JAX raised {want['error']['type']}: "
                                         f"{want['error']['message'][:200]}")
    return got, {(w.category.__name__, str(w.message)) for w in caught}


def _is_key_array(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def _compare(x: Any, want: dict, path: str = "result") -> None:
    """The recorded comparison, with typed key arrays compared by key type, shape and data."""
    if want["kind"] == "key":
        assert _is_key_array(x), f"{path}: got {type(x).__name__}, expected a key array"
        assert (str(x.dtype), list(x.shape)) == (want["dtype"], want["shape"]), path
        jit_programs._compare(justjax.random.key_data(x), want["data"])
    elif want["kind"] in ("tuple", "list"):
        assert type(x).__name__ == want["kind"] and len(x) == len(want["items"]), path
        for i, (v, w) in enumerate(zip(x, want["items"], strict=True)):
            _compare(v, w, f"{path}[{i}]")
    elif want["kind"] == "dict":
        assert list(x) == want["keys"], path
        for k, w in zip(want["keys"], want["items"], strict=True):
            _compare(x[k], w, f"{path}[{k!r}]")
    else:
        jit_programs._compare(x, want)


@pytest.mark.parametrize("case", _params("jaxpr"))
def test_jaxpr(case: dict) -> None:
    """`make_jaxpr(f)(*args)` prints JAX's text."""
    with _flags(case["config"]):
        namespace, args = _fresh(case)
        text, _ = _run_part(case["jaxpr"], lambda: str(jax.make_jaxpr(namespace["f"])(*args)))
    if "error" not in case["jaxpr"]:
        assert text == case["jaxpr"]["result"]


@pytest.mark.parametrize("case", _params("value"))
def test_value(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """`f(*args)` computes JAX's result and issues JAX's warnings (each distinct warning
    once: how often a warning repeats is not part of the behaviour)."""
    _set_tolerances(case["title"], monkeypatch)
    with _flags(case["config"]):
        namespace, args = _fresh(case)
        result, caught = _run_part(case["value"], lambda: namespace["f"](*args))
        if "error" not in case["value"]:
            _compare(result, case["value"]["result"])
    assert caught == {tuple(w) for w in case["warnings"]}


def _lowered(namespace: dict, args: tuple) -> Any:
    return jax.jit(namespace["f"]).lower(*args)


@pytest.mark.parametrize("case", _params("lowering"))
def test_lowering(case: dict) -> None:
    """`jit(f).lower(*args)` lowers where JAX's did, with JAX's `@main` argument and result
    types where JAX's text was recorded, and raises JAX's error where JAX's raised."""
    want = case["stablehlo"]
    with _flags(case["config"]):
        namespace, args = _fresh(case)
        lowered, _ = _run_part(want, lambda: _lowered(namespace, args).as_text())
    if "result" in want:
        assert (jit_programs._main_signature(lowered)
                == jit_programs._main_signature(want["result"]))


# ---------------------------------------------------------------------------------------------
# Our StableHLO on real XLA.

def _recorded_arrays(want: dict) -> Iterator[dict]:
    """The recorded array leaves of an encoded pytree in flattening order; a typed key array
    is its key data (what the lowered program returns for it)."""
    if want["kind"] == "key":
        yield want["data"]
    elif "items" in want and want["kind"] not in ("array", "float0"):
        for item in want["items"]:
            yield from _recorded_arrays(item)
    elif want["kind"] != "none":
        yield want


def _runs_on_xla(case: dict) -> bool:
    """JAX lowered the case and computed a value made of arrays only."""
    return ("error" not in case["stablehlo"] and "result" in case["value"]
            and all(leaf["kind"] == "array"
                    for leaf in _recorded_arrays(case["value"]["result"])))


def _argument_arrays(args: tuple) -> list[np.ndarray]:
    """The flat arguments as NumPy arrays; a typed key array is passed as its key data."""
    leaves = jax.tree_util.tree_leaves(args)
    return [np.asarray(justjax.random.key_data(a) if _is_key_array(a) else a) for a in leaves]


@pytest.mark.needs_jax
@pytest.mark.parametrize("case", _params("xla", _runs_on_xla))
def test_lowered_runs_on_xla(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our `jit(f).lower(*args).as_text()`, compiled and run by real XLA, gives JAX's recorded
    value: dtypes, shapes and values leaf by leaf."""
    pytest.importorskip("jax")
    xla_check = pytest.importorskip("tests.xla_check")
    # jaxlib binds its LAPACK custom calls (cholesky, eigh, svd, qr) to scipy's routines only
    # when JAX first lowers a linalg op; running our module before that crashes XLA.
    importlib.import_module("jax._src.lax.linalg").initialize_lapack()
    _set_tolerances(case["title"], monkeypatch)
    with _flags(case["config"]):
        namespace, args = _fresh(case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lowered = _lowered(namespace, args)
        leaves = _argument_arrays(args)
    # Unused arguments are dropped from `main`, as JAX drops them.
    kept = [leaves[i] for i in lowered._info.kept_inputs]
    # Real JAX's flags too: without x64 its device_put would make 64-bit arguments 32-bit.
    with _flags(case["config"], xla_check._jax().jax):
        results = xla_check.run(lowered.as_text(), kept)
    wants = list(_recorded_arrays(case["value"]["result"]))
    assert len(results) == len(wants)
    for i, (got, want) in enumerate(zip(results, wants, strict=True)):
        assert (str(got.dtype), list(got.shape)) == (want["dtype"], want["shape"]), i
        expected = test_jnp_programs.decode_values(want["values"], want["dtype"], want["shape"])
        problem = test_jnp_programs.compare_values(got, expected, want["dtype"])
        assert problem is None, f"result leaf {i}: {problem}"


def test_corpus_is_well_formed() -> None:
    """Unique titles in the known groups, every distribution covered, each group's flags, every
    part recorded, and every known difference naming a case."""
    titles = [c["title"] for c in CASES]
    assert len(titles) == len(set(titles)) == 285
    groups = [t.split("/")[0] for t in titles]
    assert set(groups) == set(DISTRIBUTIONS) | set(OTHER_GROUPS)
    assert GOLDEN["groups"] == {g: groups.count(g) for g in dict.fromkeys(groups)}
    for case in CASES:
        group = case["title"].split("/")[0]
        assert GROUP_CONFIG.get(group, {}).items() <= case["config"].items(), case["title"]
        assert set(case["config"]) <= {"jax_threefry_partitionable", "jax_enable_x64"}
        assert {"jaxpr", "value", "stablehlo", "warnings"} <= set(case), case["title"]
    by_title = {c["title"]: c for c in CASES}
    assert set(CASE_TOLERANCE) <= set(by_title)
    for part, entries in KNOWN_DIFFERENCES.items():
        for title in entries:
            assert _recorded_part(part) in by_title[title], (part, title)
