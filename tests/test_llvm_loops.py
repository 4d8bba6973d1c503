"""`stablehlo.while` on the llvm backend (`codegen/control_flow.py`) and the buffers of its
state (`passes/buffers.py`): results against the reference backend on loops whose state is
read in place, updated in place, swapped or returned unchanged; and what is no longer
copied (a scan's inputs, the stacked outputs' initial zeros, the carry computed in place).
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src import backends
from justjax._src.backends.llvm.codegen import control_flow, program
from justjax._src.backends.llvm.runtime import executable
from justjax._src.hlo import ir
from justjax._src.hlo.passes import buffers, optimize
from tests.harness import hand_built_module


def _module(f: Callable[..., Any], *args: Any) -> ir.Module:
    return optimize.optimize(jax.jit(f).lower(*args).compiler_ir())


def _run(f: Callable[..., Any], *args: np.ndarray) -> executable.LLVMExecutable:
    """Runs `f` on the llvm backend and the reference backend; returns the llvm program."""
    module = _module(f, *args)
    want = backends.get_backend("reference").compile(module).execute(list(args))
    exe = executable.LLVMExecutable(executable.prepare(module), prepared=True)
    got = exe.execute(list(args))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
    assert not exe.program.fallbacks
    return exe


RNG = np.random.default_rng(0)
H = RNG.standard_normal(16).astype(np.float32)
XS = RNG.standard_normal((50, 16)).astype(np.float32)
W = (RNG.standard_normal((16, 16)) / 4).astype(np.float32)


def _swap(h, xs):
    def body(i, c):
        a, b = c
        return b + 1.0, a * 2.0
    return lax.fori_loop(0, 7, body, (h, xs[0]))


def _old_value_read_after_new(h, xs):
    def step(c, x):
        new = c * 2.0 + x
        return new, c + new       # the old carry is read after the new one is made
    return lax.scan(step, h, xs)


def _invariant_returned(h, xs):
    def body(c):
        i, w, acc = c
        return i + 1, w, acc + w[i]
    return lax.while_loop(lambda c: c[0] < 10, body, (0, xs, h))


def _nested(h, xs):
    def outer(c, x):
        inner = lax.fori_loop(0, 3, lambda j, g: jnp.tanh(g + x), c)
        return inner, inner.sum()
    return lax.scan(outer, h, xs)


def _rnn(h, xs):
    def step(c, x):
        c = jnp.tanh(c @ W + x)
        return c, c
    return lax.scan(step, h, xs)


def _temp_operand(h, xs):
    # The loop's initial state is a temporary that dies at the loop: shared with its state.
    return lax.fori_loop(0, 5, lambda i, c: c * 1.5 + xs[i], jnp.sin(h) * 3.0)


PROGRAMS = {"swap": _swap, "old_value_read_after_new": _old_value_read_after_new,
            "invariant_returned": _invariant_returned, "nested": _nested, "rnn": _rnn,
            "temp_operand": _temp_operand}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_against_reference(name: str) -> None:
    _run(PROGRAMS[name], H, XS)


def _copied_sizes(exe: executable.LLVMExecutable) -> list[int]:
    """The byte counts of the memory copies the program's body makes (in its unoptimized IR;
    the kernels it calls are other functions; `entry` only wraps it, `fp_environment`)."""
    entry = exe.llvm_ir[exe.llvm_ir.index('void @"entry.body"('):]
    entry = entry[:entry.index("\n}")]
    return [int(n) for n in re.findall(r"@\"?llvm\.mem(?:move|cpy)[^(]*\(.*?i64 (\d+)",
                                       entry)]


def test_scan_inputs_and_outputs_are_not_copied() -> None:
    """A scan's inputs are read where they are, its stacked outputs start in the buffer
    their zeros were written to and are updated in place."""
    exe = _run(_rnn, H, XS)
    assert XS.nbytes not in _copied_sizes(exe)


def _invariant_loop_module(read_result: bool) -> ir.Module:
    """`while i < 4: (i, w, acc) = (i + 1, w, acc + w)` from `acc = -w` over f32[50,16]
    `w`, returning
    `acc` and, with `read_result`, the loop's `w` result times 2."""
    i32, f32 = ir.TensorType((), np.int32), ir.TensorType((50, 16), np.float32)

    def build(b: ir.Builder, w: ir.Value) -> list[ir.Value]:
        # The accumulator starts in a temporary's buffer (shared with the loop's state).
        inits = [b.constant(0, np.int32), w, b.one("stablehlo.negate", [w], f32)]
        cond_region, cb = ir.new_region([i32, f32, f32])
        limit = cb.constant(4, np.int32)
        cb.ret([cb.one("stablehlo.compare", [cond_region.block.args[0], limit],
                       ir.TensorType((), np.bool_),
                       comparison_direction=ir.Enum("comparison_direction", "LT"),
                       compare_type=ir.Enum("comparison_type", "SIGNED"))])
        body_region, bb = ir.new_region([i32, f32, f32])
        i, wb, acc = body_region.block.args
        bb.ret([bb.one("stablehlo.add", [i, bb.constant(1, np.int32)], i32), wb,
                bb.one("stablehlo.add", [acc, wb], f32)])
        loop = b.op("stablehlo.while", inits, [i32, f32, f32], {}, [cond_region, body_region])
        outs = [loop.results[2]]
        if read_result:
            outs.append(b.one("stablehlo.multiply", [loop.results[1], loop.results[1]], f32))
        return outs

    return hand_built_module([f32], build)


@pytest.mark.parametrize("read_result", [False, True])
def test_invariant_result_copied_only_when_read(read_result: bool) -> None:
    """A carry returned unchanged is read from the loop's operand; its result is copied
    out of it after the loop only when something reads the result."""
    module = _invariant_loop_module(read_result)
    w = RNG.standard_normal((50, 16)).astype(np.float32)
    exe = executable.LLVMExecutable(executable.prepare(module), prepared=True)
    got = [np.asarray(v) for v in exe.execute([w])]
    np.testing.assert_allclose(got[0], 3 * w, rtol=1e-6)
    if read_result:
        np.testing.assert_array_equal(got[1], w * w)
    assert (w.nbytes in _copied_sizes(exe)) == read_result


def test_carry_computed_in_place() -> None:
    """The rnn's new carry (tanh of the dot) is written into the loop's state: nothing
    copies the 64 bytes of the carry back after each trip."""
    module = executable.prepare(_module(_rnn, H, XS))
    (loop,) = [op for op in module.walk() if op.opcode == "stablehlo.while"]
    body = loop.regions[1].block
    computed = dict(control_flow.computed_in_state(body))
    carry = body.terminator.operands
    assert any(carry[i].type.shape == (16,) for i in computed)
    # The stacked outputs' update in place.
    assert any(carry[i].type.shape == (50, 16) for i in computed)


def test_carry_read_after_its_new_value_is_not_computed_in_place() -> None:
    module = executable.prepare(_module(_old_value_read_after_new, H, XS))
    (loop,) = [op for op in module.walk() if op.opcode == "stablehlo.while"]
    body = loop.regions[1].block
    results = body.terminator.operands
    new_carry = [i for i, v in enumerate(results) if v.type.shape == (16,)][0]
    assert new_carry not in dict(control_flow.computed_in_state(body))


def test_while_state_shares_its_dying_operand() -> None:
    module = executable.prepare(_module(_temp_operand, H, XS))
    assignment = buffers.assign_buffers(module)
    (loop,) = [op for op in module.function("main").body.ops if op.opcode == "stablehlo.while"]
    shared = [(a, r) for op, a, r in assignment.in_place if op is loop]
    assert any(r.type.shape == (16,) for _, r in shared)


def test_long_loops_are_optimized() -> None:
    """A loop's work counts once per trip: a 1000-step scan of a small body is compiled
    with LLVM's optimizations, a 3-step one is not."""
    def scan(n):
        return lambda h, xs: lax.scan(lambda c, x: (c * 0.5 + x, c), h, xs[:n])

    xs = np.ones((1000, 16), np.float32)
    big = program.scale(executable.prepare(_module(scan(1000), H, xs)))
    small = program.scale(executable.prepare(_module(scan(3), H, xs)))
    assert big >= executable.FAST_COMPILE_ELEMENTS > small
