"""The HLO text printer: golden texts read off XLA (`as_text(dialect="hlo")` of the same
module) for IR built by hand, and (needs_jax) XLA's own HLO of JAX-lowered modules."""
from __future__ import annotations

import re

import numpy as np
import pytest

from justjax._src.hlo import ir
from justjax._src.hlo.hlo_printer import hlo_opcode, literal, print_module
from justjax._src.hlo.ir import TensorType
from tests.harness import hand_built_module

F32 = np.dtype(np.float32)


def _module(arg_types, result_types, build) -> ir.Module:
    return hand_built_module(arg_types, build, result_types=result_types, name="jit__lambda")


def _sin_times_two() -> ir.Module:
    t = TensorType((3,), F32)

    def build(b, x):
        s = b.one("stablehlo.sine", [x], t)
        two = b.one("stablehlo.broadcast_in_dim", [b.constant(2.0, F32)], t,
                    broadcast_dimensions=())
        return [b.one("stablehlo.multiply", [s, two], t)]
    return _module([t], [t], build)


def test_elementwise_module_matches_xla() -> None:
    assert print_module(_sin_times_two()) == """\
HloModule jit__lambda, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY main.1 {
  Arg_0.1 = f32[3]{0} parameter(0)
  sine.1 = f32[3]{0} sine(Arg_0.1)
  constant.1 = f32[] constant(2)
  broadcast.1 = f32[3]{0} broadcast(constant.1), dimensions={}
  ROOT multiply.1 = f32[3]{0} multiply(sine.1, broadcast.1)
}

"""


def test_reduce_region_becomes_a_computation() -> None:
    t = TensorType((2, 3), F32)

    def build(b, x):
        region, rb = ir.new_region([TensorType((), F32)] * 2)
        rb.ret([rb.one("stablehlo.add", list(region.block.args), TensorType((), F32))])
        return b.op("stablehlo.reduce", [x, b.constant(0.0, F32)], [TensorType((3,), F32)],
                    {"dimensions": (0,)}, [region]).results

    text = print_module(_module([t], [TensorType((3,), F32)], build))
    assert "region_0.1 {\n  Arg_0.1 = f32[] parameter(0)\n  Arg_1.1 = f32[] parameter(1)\n" \
           "  ROOT add.1 = f32[] add(Arg_0.1, Arg_1.1)\n}" in text
    assert re.search(r"ROOT reduce\.1 = f32\[3\]\{0\} reduce\(Arg_0\.\d, constant\.1\), "
                     r"dimensions=\{0\}, to_apply=region_0\.1", text)
    assert text.index("region_0.1 {") < text.index("ENTRY main")


def test_while_packs_state_and_captures_into_a_tuple() -> None:
    scalar, t = TensorType((), np.dtype(np.int32)), TensorType((3,), F32)

    def build(b, x):
        limit = b.constant(3, np.int32)
        cond, cb = ir.new_region([scalar])
        cb.ret([cb.one("stablehlo.compare", [cond.block.args[0], limit],
                       TensorType((), np.bool_),
                       comparison_direction=ir.Enum("comparison_direction", "LT"))])
        body, bb = ir.new_region([scalar])
        bb.ret([bb.one("stablehlo.add", [body.block.args[0], limit], scalar)])
        return b.op("stablehlo.while", [b.constant(0, np.int32)], [scalar], {},
                    [cond, body]).results

    text = print_module(_module([t], [scalar], build))
    assert "(s32[], s32[]) while(tuple." in text
    assert "arg_tuple.1 = (s32[], s32[]) parameter(0)" in text
    assert "compare(get-tuple-element." in text and "direction=LT" in text
    assert "ROOT get-tuple-element." in text


def test_opcode_table_and_literals() -> None:
    assert hlo_opcode("stablehlo.dot_general") == "dot"
    assert hlo_opcode("stablehlo.round_nearest_even") == "round-nearest-even"
    assert hlo_opcode("stablehlo.new_thing") == "new-thing"
    assert literal(np.array([1.5, -0.0, np.nan, np.inf], F32)) == "{1.5, -0, nan, inf}"
    assert literal(np.array([[1], [0]], np.int32)) == "{ {1}, {0} }"
    assert literal(np.array([[0.1, 1e10, -0.0], [1.5, 3e-5, 123456.7]], F32)) == \
        "{ { 0.1, 1e+10, -0 }, { 1.5, 3e-05, 123456.703 } }"


def _structure(text: str) -> list[str]:
    """Each instruction line without its numbering: what must agree with XLA."""
    return sorted(re.sub(r"\.\d+", "", line) for line in text.splitlines())


@pytest.mark.needs_jax
def test_structure_matches_xla() -> None:
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp
    from jax import lax
    from tests import xla_check
    x = np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3)
    assert print_module(_sin_times_two()) == xla_check.hlo_text(str(_sin_times_two()))
    funs = [lambda x: x.sum(0),
            lambda x: (x.T, x[:, 1:], jnp.pad(x, 1), x @ x.T, x > 0),
            lambda x: x + jnp.array([[0.1, 1e10, -0.0], [1.5, 3e-5, 123456.7]], jnp.float32),
            lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2),
                                     (0, x))]
    from jax._src.lib import hlo as hlo_lib
    for fun in funs:
        text = xla_check.canonical(jax.jit(fun).lower(x).as_text())
        ours = print_module(xla_check.to_ir(text))
        assert _structure(ours) == _structure(xla_check.hlo_text(text))
        hlo_lib.hlo_module_from_text(ours)  # XLA's HLO parser accepts it


def test_square_prints_as_xla_legalizes_it():
    # HLO has no square opcode: XLA turns CHLO's square of a real value into a multiply
    # named `square` (recorded from JAX 0.10.2's compiler_ir(dialect="hlo")).
    import justjax as jax
    import justjax.numpy as jnp
    text = jax.jit(jnp.square).lower(3.0).as_text(dialect="hlo")
    assert "ROOT square.1 = f32[] multiply(Arg_0.1, Arg_0.1)" in text
