"""Every op record lowered to StableHLO, checked by real XLA (all tests need jax).

Each record's function (on its last shape list and one dtype, or every dtype: see
ALL_DTYPES) is traced with `justjax.make_jaxpr`, lowered with
`lowering.lower_jaxpr_to_module`, checked by our verifier, printed, and the text is (1)
parsed and verified by jaxlib, (2) printed back by jaxlib identically to ours, and
(3) compiled and run on XLA CPU, whose results must equal the reference backend's run of
the same module (exactly for integers and bools, within the record's tolerance for floats).
Records whose primitives have no lowering rule yet are skipped, naming the primitive.
"""
from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

import justjax
from justjax._src.backends.reference import BACKEND as REFERENCE
from justjax._src.hlo import stablehlo_printer, verifier
from justjax._src.interpreters import lowering
from tests.harness import OpRecord, assert_close
from tests.test_op_records import RECORDS

pytestmark = pytest.mark.needs_jax


# One case per record keeps this file near a minute; JUSTJAX_XLA_ALL_DTYPES=1 checks every
# argument dtype of every record (several minutes).
ALL_DTYPES = os.environ.get("JUSTJAX_XLA_ALL_DTYPES") == "1"


def _cases() -> list:
    cases = []
    for record in RECORDS:
        seen = set()
        for shapes, dtypes in reversed(record.cases()):
            if dtypes in seen or (seen and not ALL_DTYPES):
                continue
            seen.add(dtypes)
            cases.append(pytest.param(
                record, shapes, dtypes,
                id=f"{record.name}-{'_'.join(d.name for d in dtypes)}-"
                   f"{'x'.join(str(s) for s in shapes)}"))
    return cases


def _lower(record: OpRecord, args: list[np.ndarray]) -> tuple:
    closed = justjax.make_jaxpr(lambda *xs: record.fun(*xs, **record.static))(
        *[justjax.numpy.asarray(a) for a in args])
    n_out = len(closed.out_avals)
    infos = ["result"] if n_out == 1 else [f"result[{i}]" for i in range(n_out)]
    try:
        module = lowering.lower_jaxpr_to_module(closed, record.name, infos)
    except NotImplementedError as e:
        pytest.skip(str(e))
    return closed, module


@pytest.mark.parametrize("record,shapes,dtypes", _cases())
def test_lowered_record_runs_on_xla(record: OpRecord, shapes: tuple, dtypes: tuple) -> None:
    xla_check = pytest.importorskip("tests.xla_check")
    pytest.importorskip("jax")
    rng = np.random.default_rng(zlib.crc32(f"{record.name}{shapes}{dtypes}".encode()))
    args = [np.asarray(a) for a in record.make(rng, shapes, dtypes)]
    closed, module = _lower(record, args)
    verifier.verify(module)  # must accept whatever XLA accepts
    text = stablehlo_printer.print_module(module)
    # canonical() parses and verifies the text first.
    assert xla_check.canonical(text) == text, "jaxlib prints the module differently"
    on_xla = xla_check.run(text, args)
    try:
        on_reference = REFERENCE.compile(module).execute(args)
    except NotImplementedError as e:
        pytest.skip(str(e))
    assert len(on_xla) == len(on_reference) == len(closed.out_avals)
    for got, want in zip(on_reference, on_xla, strict=True):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        tol = 0 if got.dtype.kind in "biu" else record.tolerance(got.dtype)
        assert_close(got, want, tol, context=f"{record.name}: reference vs XLA")
