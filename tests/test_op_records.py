"""Runs every op record (tests/records/*.py) through the checks that apply today."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import numpy as np
import pytest

import justjax
from justjax._src.core.jaxpr import check_jaxpr, eval_jaxpr
from tests import records as records_pkg
from justjax.test_util import check_grads
from tests.harness import OpRecord, assert_close, record_cases, record_rng, x64_mode


def _all_records() -> list[OpRecord]:
    found: list[OpRecord] = []
    for info in pkgutil.iter_modules(records_pkg.__path__):
        module = importlib.import_module(f"tests.records.{info.name}")
        found.extend(module.RECORDS)
    return found


RECORDS = _all_records()
CASES = record_cases(RECORDS)


_rng = record_rng


def test_record_names_are_unique() -> None:
    names = [r.name for r in RECORDS]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("record,shapes,dtypes", CASES)
def test_against_numpy(record: OpRecord, shapes: tuple, dtypes: tuple) -> None:
    args = record.make(_rng(record, shapes, dtypes), shapes, dtypes)
    result = record.fun(*[justjax.numpy.asarray(a) for a in args], **record.static)
    with np.errstate(all="ignore"):
        expected = record.reference(*args, **record.static)
    results = result if isinstance(result, (tuple, list)) else [result]
    expecteds = expected if isinstance(expected, (tuple, list)) else [expected]
    assert len(results) == len(expecteds)
    want_dtypes = record.result_dtypes(dtypes, len(results))
    for got, want, want_dtype in zip(results, expecteds, want_dtypes, strict=True):
        assert isinstance(got, justjax.Array), type(got)
        assert got.dtype == want_dtype, f"dtype {got.dtype} != {want_dtype}"
        assert_close(got, np.asarray(want).astype(got.dtype), record.tolerance(got.dtype),
                     context=record.name)


@pytest.mark.parametrize("record,shapes,dtypes", CASES)
def test_traced_and_jitted_match_eager(record: OpRecord, shapes: tuple, dtypes: tuple) -> None:
    """On the same arguments, against one eager result: evaluating the traced jaxpr gives it,
    with the avals tracing promised; the jitted function (lowered to StableHLO and compiled)
    gives it with the same dtypes, shapes and weak types. Integers exactly."""
    args = [justjax.numpy.asarray(a)
            for a in record.make(_rng(record, shapes, dtypes), shapes, dtypes)]
    eager = record.fun(*args, **record.static)
    eagers = list(eager) if isinstance(eager, (tuple, list)) else [eager]

    def tolerance(got: Any) -> Any:
        return 0 if got.dtype.kind in "biu" else record.tolerance(got.dtype)

    closed = justjax.make_jaxpr(lambda *xs: record.fun(*xs, **record.static))(*args)
    check_jaxpr(closed.jaxpr)
    traced = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    assert len(traced) == len(eagers)
    for got, want, aval in zip(traced, eagers, closed.out_avals, strict=True):
        got = justjax.numpy.asarray(got)
        assert (aval.shape, aval.dtype) == (want.shape, want.dtype), (aval, want.aval)
        assert aval.weak_type == want.weak_type, (aval, want.aval)
        assert_close(got, want, tolerance(got), context=f"{record.name} (traced)")

    jitted = justjax.jit(lambda *xs: record.fun(*xs, **record.static))(*args)
    jitteds = list(jitted) if isinstance(jitted, (tuple, list)) else [jitted]
    assert len(jitteds) == len(eagers)
    for got, want in zip(jitteds, eagers, strict=True):
        assert isinstance(got, justjax.Array), type(got)
        assert got.aval == want.aval, (got.aval, want.aval)
        assert_close(got, want, tolerance(got), context=f"{record.name} (jit)")


def _primitives_in(jaxpr) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                names |= _primitives_in(inner)
    return names


# Primitives whose checks live in dedicated test files rather than op records.
COVERED_ELSEWHERE: dict[str, str] = {
    "add_any": "tests/test_autodiff.py (every reverse-mode gradient sums with it)",
    # Named-axis collectives need a vmap (or pmap) binding their axis.
    "all_gather": "tests/test_collectives.py",
    "axis_index": "tests/test_collectives.py",
    "reduce_scatter": "tests/test_collectives.py",
    "ppermute": "tests/test_pmap.py (under pmap and vmap, its gradient)",
    "all_to_all": "tests/test_pmap.py (under pmap and vmap, its gradient)",
    "pvary": "tests/test_shard_map.py (pcast to varying: eager, jit, grad, vmap)",
    "shard_map": "tests/test_pmap_transforms.py (pmap is a jit of it; every transform)",
    "custom_lin": "tests/test_custom_derivatives.py",
    "custom_vjp_call": "tests/test_custom_derivatives.py",
    "remat2": "tests/test_checkpoint.py",
    # No batching rule, as in JAX, so no record (every record is vmapped).
    "cholesky_update": "tests/test_linalg_general.py",
    "name": "tests/test_checkpoint.py (checkpoint_name)",
    # Control flow holds jaxprs: its table of records is tests/test_control_flow.py.
    "cond": "tests/test_control_flow.py, tests/test_cond.py",
    "while": "tests/test_control_flow.py, tests/test_while_loop.py",
    "scan": "tests/test_control_flow.py, tests/test_scan.py, tests/test_scan_ad.py",
    "custom_linear_solve": "tests/test_custom_linear_solve.py",
    "empty2": "tests/test_cond.py (the residuals of grad of cond)",
    # checkify's check holds an error message and raises: tests/test_checkify.py runs it
    # eagerly, under jit, vmap, jvp/grad and control flow.
    "check": "tests/test_checkify.py",
    # Identities carrying a sharding: tests/test_sharding.py checks their values, jaxprs,
    # gradients and batching.
    "sharding_constraint": "tests/test_sharding.py",
    # No jvp or batching rules (as JAX); platform_index has no operands.
    "composite": "tests/test_lax_extras.py (values, StableHLO, both backends, errors)",
    "platform_index": "tests/test_lax_extras.py (platform_dependent)",
    # Calls of a jaxpr (numpyro keys its handlers on them): their bodies are the records.
    "call": "tests/test_call_primitive.py (values, jit, grad, vmap through the body)",
    "closed_call": "tests/test_call_primitive.py",
    # A symbolic dimension as a value exists only while tracing symbolic shapes.
    "dim_as_value": "tests/test_export.py (polymorphic programs using mean, arange(b), ...)",
    "reshard": "tests/test_sharding.py",
    # Key arrays have no NumPy counterpart: keys, bits and the hash are checked against
    # the values JAX gives.
    **{name: "tests/test_random_keys.py" for name in (
        "random_seed", "random_split", "random_fold_in", "random_bits", "random_wrap",
        "random_unwrap", "random_clone", "threefry2x32")},
}


def test_every_primitive_is_exercised_by_some_record() -> None:
    """The records, traced once each, bind every primitive justjax defines."""
    from tests.test_layers import _all_primitives
    seen: set[str] = set()
    for record in RECORDS:
        shapes, dtypes = record.cases()[0]
        args = [justjax.numpy.asarray(a)
                for a in record.make(_rng(record, shapes, dtypes), shapes, dtypes)]
        closed = justjax.make_jaxpr(lambda *xs: record.fun(*xs, **record.static))(*args)
        seen |= _primitives_in(closed.jaxpr)
    missing = sorted(p.name for p in _all_primitives()
                     if p.name not in seen and p.name not in COVERED_ELSEWHERE)
    assert not missing, f"primitives no op record exercises: {missing}"


# ---------------------------------------------------------------------------------------------
# Gradients: every differentiable record, forward and reverse, against finite differences:
# to second order on its first shape, to first order on a second one (second-order checks
# are most of this table's time; a rule's shape handling shows at first order). Checked in
# float64 (x64 on), where finite differences are meaningful; non-float arguments (indices,
# integer operands) are held fixed.

def _float_dtype(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _gradient_cases() -> list:
    cases = []
    for rec in RECORDS:
        if not rec.differentiable:
            continue
        seen_shapes = []
        for shapes, dtypes in rec.cases():
            if not any(_float_dtype(d) for d in dtypes) or shapes in seen_shapes:
                continue
            if any(d.kind == "c" for d in dtypes):
                continue
            seen_shapes.append(shapes)
            cases.append(pytest.param(rec, shapes, dtypes, 2 if len(seen_shapes) == 1 else 1,
                                      id=f"{rec.name}-{'x'.join(str(s) for s in shapes)}"))
            if len(seen_shapes) == 2:
                break
    return cases


GRADIENT_CASES = _gradient_cases()


@pytest.mark.parametrize("record,shapes,dtypes,order", GRADIENT_CASES)
def test_gradients(record: OpRecord, shapes: tuple, dtypes: tuple, order: int) -> None:
    wide = tuple(np.dtype(np.float64) if _float_dtype(d) else d for d in dtypes)
    with x64_mode(True):
        args = record.make(_rng(record, shapes, dtypes), shapes, wide)
        args = [np.asarray(a).astype(np.float64) if _float_dtype(d) else a
                for a, d in zip(args, dtypes, strict=True)]
        positions = [i for i, d in enumerate(dtypes) if _float_dtype(d)]

        def fun(*float_args):
            full = list(args)
            for i, value in zip(positions, float_args, strict=True):
                full[i] = value
            return record.fun(*full, **record.static)

        check_grads(fun, [args[i] for i in positions], order=order, modes=record.grad_modes,
                    atol=record.grad_tol, rtol=record.grad_tol)


# ---------------------------------------------------------------------------------------------
# vmap: every record, batched along axes 0, 1 and -1 and mixes with unmapped (None)
# arguments, equals the per-example results stacked. The batch size is unusual (5) so a rule
# that confuses the batch axis with another one shows up as a shape error.

BATCH = 5
AXIS_PATTERNS = {
    "axis0": lambda i: 0,
    "axis1": lambda i: 1,
    "axis-1": lambda i: -1,
    "mixA": lambda i: (0, None, -1, 1)[i % 4],
    "mixB": lambda i: (None, 1, 0, -1)[i % 4],
}


def _in_axes(pattern: str, shapes: tuple) -> tuple:
    axes = []
    for i, shape in enumerate(shapes):
        axis = AXIS_PATTERNS[pattern](i)
        # The batched argument has rank len(shape) + 1; axis 1 needs a per-example rank >= 1.
        if axis == 1 and not shape:
            axis = 0
        axes.append(axis)
    return tuple(axes)


def _vmap_cases() -> list:
    """Each record's first case under every axis pattern, and its first case of another
    dtype kind (integers, booleans, complex: other code paths in the rules) under two."""
    cases = []
    for rec in RECORDS:
        first_shapes, first_dtypes = rec.cases()[0]
        other_kind = next(((shapes, dtypes) for shapes, dtypes in rec.cases()
                           if {d.kind for d in dtypes} != {d.kind for d in first_dtypes}), None)
        runs = [(first_shapes, first_dtypes, list(AXIS_PATTERNS) if len(first_shapes) > 1
                 else ["axis0", "axis1", "axis-1"])]
        if other_kind is not None:
            runs.append((*other_kind, ["axis1", "mixB"] if len(other_kind[0]) > 1
                         else ["axis1"]))
        for shapes, dtypes, patterns in runs:
            for pattern in patterns:
                cases.append(pytest.param(
                    rec, shapes, dtypes, pattern,
                    id=f"{rec.name}-{'_'.join(d.name for d in dtypes)}-"
                       f"{'x'.join(str(s) for s in shapes)}-{pattern}"))
    return cases


def _stack_results(per_example: list) -> list[np.ndarray]:
    columns = [r if isinstance(r, (tuple, list)) else [r] for r in per_example]
    return [np.stack([np.asarray(c[k]) for c in columns]) for k in range(len(columns[0]))]


@pytest.mark.parametrize("record,shapes,dtypes,pattern", _vmap_cases())
def test_vmap(record: OpRecord, shapes: tuple, dtypes: tuple, pattern: str) -> None:
    in_axes = _in_axes(pattern, shapes)
    rng = _rng(record, shapes, dtypes)
    examples = [record.make(rng, shapes, dtypes) for _ in range(BATCH)]
    # An unmapped argument is the same for every example.
    for example in examples[1:]:
        for i, axis in enumerate(in_axes):
            if axis is None:
                example[i] = examples[0][i]
    batched = [examples[0][i] if axis is None else
               np.stack([example[i] for example in examples], axis=axis)
               for i, axis in enumerate(in_axes)]

    def fun(*args):
        return record.fun(*args, **record.static)

    expected = _stack_results([fun(*[justjax.numpy.asarray(a) for a in example])
                               for example in examples])
    result = justjax.vmap(fun, in_axes=in_axes)(*[justjax.numpy.asarray(a) for a in batched])
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    assert len(results) == len(expected)
    for got, want in zip(results, expected, strict=True):
        assert isinstance(got, justjax.Array), type(got)
        assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
        assert_close(got, want, 0 if got.dtype.kind in "biu" else record.tolerance(got.dtype),
                     context=f"{record.name} in_axes={in_axes}")
