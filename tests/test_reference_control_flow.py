"""Reference kernels of `stablehlo.while` and `stablehlo.case`, on hand-built IR.

Each program is verified, run by the reference backend against values computed here in
Python, and (needs_jax) printed, parsed and run by real XLA CPU with equal results.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pytest

from justjax._src.hlo import ir
from justjax._src.hlo.verifier import verify
from tests.harness import hand_built_module, run_reference

I1 = ir.TensorType((), np.dtype(np.bool_))
I32 = ir.TensorType((), np.dtype(np.int32))
F32_3 = ir.TensorType((3,), np.dtype(np.float32))
F16 = ir.TensorType((), np.dtype(np.float16))


_module = hand_built_module


def _while(b: ir.Builder, inits: Sequence[ir.Value],
           cond: Callable[..., ir.Value],
           body: Callable[..., Sequence[ir.Value]]) -> list[ir.Value]:
    """`stablehlo.while` over `inits`; `cond(builder, *carry)` and `body(builder, *carry)`
    emit the regions' ops."""
    types = [v.type for v in inits]
    cond_region, cb = ir.new_region(types)
    cb.ret([cond(cb, *cond_region.block.args)])
    body_region, bb = ir.new_region(types)
    bb.ret(list(body(bb, *body_region.block.args)))
    return b.op("stablehlo.while", inits, types, regions=[cond_region, body_region]).results


def _case(b: ir.Builder, index: ir.Value, result_types: Sequence[ir.Type],
          branches: Sequence[Callable[[ir.Builder], Sequence[ir.Value]]]) -> list[ir.Value]:
    """`stablehlo.case` on `index`; each branch `f(builder)` emits one branch's ops."""
    regions = []
    for branch in branches:
        region, rb = ir.new_region([])
        rb.ret(list(branch(rb)))
        regions.append(region)
    return b.op("stablehlo.case", [index], result_types, regions=regions).results


def _lt(b: ir.Builder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.one("stablehlo.compare", [x, y], I1,
                 comparison_direction=ir.Enum("comparison_direction", "LT"),
                 compare_type=ir.Enum("comparison_type", "SIGNED"))


def _add(b: ir.Builder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.one("stablehlo.add", [x, y], x.type)


# -- programs --------------------------------------------------------------------------------

def counting_loop() -> ir.Module:
    """Counts i from 0 to n, summing i into s: returns (i, s, n). The bound n is a carry, as
    JAX's while lowering passes loop constants."""
    def build(b, n):
        zero = b.constant(0, np.int32)
        def body(bb, i, s, n):
            return [_add(bb, i, bb.constant(1, np.int32)), _add(bb, s, i), n]
        return _while(b, [zero, zero, n], lambda cb, i, s, n: _lt(cb, i, n), body)
    return _module([I32], build)


def mixed_carries() -> ir.Module:
    """Carries of four dtypes: an i32 counter, an f32 vector doubled plus one, an i1 flag
    flipped and an f16 scalar halved, for n trips."""
    def build(b, n, v, flag, h):
        def body(bb, i, n, v, flag, h):
            one = bb.constant(1, np.int32)
            doubled = bb.one("stablehlo.multiply", [v, bb.constant([2, 2, 2], np.float32)],
                             F32_3)
            return [_add(bb, i, one), n, _add(bb, doubled, bb.constant([1, 1, 1], np.float32)),
                    bb.one("stablehlo.not", [flag], I1),
                    bb.one("stablehlo.multiply", [h, bb.constant(0.5, np.float16)], F16)]
        return _while(b, [b.constant(0, np.int32), n, v, flag, h],
                      lambda cb, i, n, *rest: _lt(cb, i, n), body)
    return _module([I32, F32_3, I1, F16], build)


def while_in_case() -> ir.Module:
    """Branch 0 returns -1; branch 1 counts to 7 in a while loop; branch 2 counts to 3 with a
    nested while in each trip (3 * 4 increments). Branches take no arguments, so the loop
    bounds are constants of the branch."""
    def count_to(b, limit, step):
        def body(bb, i):
            return [_add(bb, i, step(bb))]
        return _while(b, [b.constant(0, np.int32)],
                      lambda cb, i: _lt(cb, i, cb.constant(limit, np.int32)), body)

    def inner_four(bb):
        # Counts to 4 in an inner loop and returns 1: each outer trip adds 1 after 4 inner ones.
        four = count_to(bb, 4, lambda b: b.constant(1, np.int32))[0]
        return bb.one("stablehlo.divide", [four, bb.constant(4, np.int32)], I32)

    def build(b, index):
        return _case(b, index, [I32], [
            lambda rb: [rb.constant(-1, np.int32)],
            lambda rb: count_to(rb, 7, lambda b: b.constant(1, np.int32)),
            lambda rb: count_to(rb, 3, inner_four),
        ])
    return _module([I32], build)


def three_way_case() -> ir.Module:
    """Two results per branch: (10 * k, float(k)) for branch k."""
    def branch(k):
        return lambda rb: [rb.constant(10 * k, np.int32), rb.constant(float(k), np.float32)]

    def build(b, index):
        return _case(b, index, [I32, ir.TensorType((), np.dtype(np.float32))],
                     [branch(k) for k in range(3)])
    return _module([I32], build)


def zero_trip_loop() -> ir.Module:
    """A loop whose condition is false at once: the results are the operands."""
    def build(b, v, i):
        def body(bb, v, i):
            return [_add(bb, v, v), _add(bb, i, bb.constant(1, np.int32))]
        return _while(b, [v, i], lambda cb, v, i: _lt(cb, i, cb.constant(0, np.int32)), body)
    return _module([F32_3, I32], build)


def _mixed_expected(n: int, v: np.ndarray, flag: bool, h: float) -> list[np.ndarray]:
    for _ in range(n):
        v, flag, h = v * np.float32(2) + np.float32(1), not flag, h * 0.5
    return [np.int32(max(n, 0)), np.int32(n), v.astype(np.float32), np.bool_(flag),
            np.float16(h)]


V = np.array([1.5, -2.0, 0.25], np.float32)

# (program, arguments, expected results)
CASES = {
    "count_5": (counting_loop, [np.int32(5)], [np.int32(5), np.int32(10), np.int32(5)]),
    "count_0": (counting_loop, [np.int32(0)], [np.int32(0), np.int32(0), np.int32(0)]),
    "mixed_3": (mixed_carries, [np.int32(3), V, np.bool_(True), np.float16(3.0)],
                _mixed_expected(3, V, True, 3.0)),
    "mixed_0": (mixed_carries, [np.int32(0), V, np.bool_(False), np.float16(3.0)],
                _mixed_expected(0, V, False, 3.0)),
    "case_while_0": (while_in_case, [np.int32(0)], [np.int32(-1)]),
    "case_while_1": (while_in_case, [np.int32(1)], [np.int32(7)]),
    "case_nested_while_2": (while_in_case, [np.int32(2)], [np.int32(3)]),
    "case_1": (three_way_case, [np.int32(1)], [np.int32(10), np.float32(1)]),
    "case_negative_runs_last": (three_way_case, [np.int32(-1)], [np.int32(20), np.float32(2)]),
    "case_too_big_runs_last": (three_way_case, [np.int32(3)], [np.int32(20), np.float32(2)]),
    "case_int_min_runs_last": (three_way_case, [np.int32(np.iinfo(np.int32).min)],
                               [np.int32(20), np.float32(2)]),
    "zero_trip": (zero_trip_loop, [V, np.int32(0)], [V, np.int32(0)]),
}


def _assert_equal(got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", CASES)
def test_reference_runs_control_flow(name: str) -> None:
    program, args, expected = CASES[name]
    module = program()
    verify(module)
    _assert_equal(run_reference(module, *args), expected)


def test_while_does_not_mutate_operands() -> None:
    v = V.copy()
    run_reference(zero_trip_loop(), v, np.int32(-3))
    run_reference(mixed_carries(), np.int32(2), v, np.bool_(True), np.float16(1.0))
    np.testing.assert_array_equal(v, V)


def test_case_runs_only_the_chosen_branch() -> None:
    # Branch 1 loops forever: if the kernel ran every branch, this would never finish.
    def build(b, index):
        def forever(rb):
            return _while(rb, [rb.constant(0, np.int32)],
                          lambda cb, i: cb.constant(True, np.bool_), lambda bb, i: [i])
        return _case(b, index, [I32], [lambda rb: [rb.constant(5, np.int32)], forever])
    module = _module([I32], build)
    verify(module)
    _assert_equal(run_reference(module, np.int32(0)), [np.int32(5)])


# -- implicit capture: StableHLO lets while/case regions read values of the enclosing block;
# JAX's cond lowering relies on it (its case branches read the operands directly).

def captured_in_case() -> ir.Module:
    def build(b, index, x):
        return _case(b, index, [I32], [lambda rb: [_add(rb, x, x)], lambda rb: [x]])
    return _module([I32, I32], build)


def captured_in_while() -> ir.Module:
    def build(b, n, step):
        def body(bb, i, s):
            return [_add(bb, i, bb.constant(1, np.int32)), _add(bb, s, step)]
        return _while(b, [b.constant(0, np.int32), b.constant(0, np.int32)],
                      lambda cb, i, s: _lt(cb, i, n), body)
    return _module([I32, I32], build)


def captured_two_levels() -> ir.Module:
    """A while loop in a case branch reads x of main: three trips add 3 * x."""
    def build(b, index, x):
        def loop(rb):
            def body(bb, i, s):
                return [_add(bb, i, bb.constant(1, np.int32)), _add(bb, s, x)]
            def three(cb, i, s):
                return _lt(cb, i, cb.constant(3, np.int32))
            return _while(rb, [rb.constant(0, np.int32), rb.constant(0, np.int32)], three,
                          body)[1:]
        return _case(b, index, [I32], [lambda rb: [x], loop])
    return _module([I32, I32], build)


CAPTURE_CASES = {
    "case_capture": (captured_in_case, [np.int32(0), np.int32(21)], [np.int32(42)]),
    "while_capture": (captured_in_while, [np.int32(4), np.int32(3)],
                      [np.int32(4), np.int32(12)]),
    "two_level_capture": (captured_two_levels, [np.int32(1), np.int32(5)], [np.int32(15)]),
}


@pytest.mark.parametrize("name", CAPTURE_CASES)
def test_regions_read_captured_values(name: str) -> None:
    program, args, expected = CAPTURE_CASES[name]
    module = program()
    verify(module)
    _assert_equal(run_reference(module, *args), expected)


# -- real XLA ----------------------------------------------------------------------------------

@pytest.mark.needs_jax
@pytest.mark.parametrize("name", list(CASES) + list(CAPTURE_CASES))
def test_xla_agrees(name: str) -> None:
    pytest.importorskip("jax")
    from tests import xla_check
    program, args, expected = {**CASES, **CAPTURE_CASES}[name]
    text = str(program())
    xla_check.parse(text)
    _assert_equal(xla_check.run(text, args), expected)
