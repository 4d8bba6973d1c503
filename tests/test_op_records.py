"""Runs every op record (tests/records/*.py) through the checks that apply today."""
from __future__ import annotations

import importlib
import pkgutil
import zlib

import numpy as np
import pytest

import justjax
from justjax._src.core.jaxpr import check_jaxpr, eval_jaxpr
from tests import records as records_pkg
from tests.harness import OpRecord, assert_close


def _all_records() -> list[OpRecord]:
    found: list[OpRecord] = []
    for info in pkgutil.iter_modules(records_pkg.__path__):
        module = importlib.import_module(f"tests.records.{info.name}")
        found.extend(module.RECORDS)
    return found


RECORDS = _all_records()
CASES = [pytest.param(rec, shapes, dtypes,
                      id=f"{rec.name}-{'_'.join(d.name for d in dtypes)}-"
                         f"{'x'.join(str(s) for s in shapes)}")
         for rec in RECORDS for shapes, dtypes in rec.cases()]


def _rng(record: OpRecord, shapes: tuple, dtypes: tuple) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{record.name}{shapes}{dtypes}".encode()))


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
def test_traced_matches_eager(record: OpRecord, shapes: tuple, dtypes: tuple) -> None:
    """Evaluating the traced jaxpr gives the eager result, with the avals tracing promised."""
    args = [justjax.numpy.asarray(a)
            for a in record.make(_rng(record, shapes, dtypes), shapes, dtypes)]
    eager = record.fun(*args, **record.static)
    closed = justjax.make_jaxpr(lambda *xs: record.fun(*xs, **record.static))(*args)
    check_jaxpr(closed.jaxpr)
    traced = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    eagers = list(eager) if isinstance(eager, (tuple, list)) else [eager]
    assert len(traced) == len(eagers)
    for got, want, aval in zip(traced, eagers, closed.out_avals, strict=True):
        got = justjax.numpy.asarray(got)
        assert (aval.shape, aval.dtype) == (want.shape, want.dtype), (aval, want.aval)
        assert aval.weak_type == want.weak_type, (aval, want.aval)
        assert_close(got, want, 0 if got.dtype.kind in "biu" else record.tolerance(got.dtype),
                     context=record.name)


def _primitives_in(jaxpr) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                names |= _primitives_in(inner)
    return names


# Primitives whose checks live in dedicated test files rather than op records (none today).
COVERED_ELSEWHERE: dict[str, str] = {}


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
