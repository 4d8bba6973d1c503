"""The IR verifier: valid modules pass; each kind of invalid module is rejected with a message
naming the function, the op and the problem."""
from __future__ import annotations

import numpy as np
import pytest

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Builder, Enum, TensorType
from justjax._src.hlo.verifier import VerificationError, verify
from tests.harness import hand_built_module

F32 = np.dtype(np.float32)
T = TensorType((2, 3), F32)


def _module(build, arg_types=(T,), result_types=(T,)) -> ir.Module:
    return hand_built_module(arg_types, build, result_types=result_types, name="jit_f")


def _reduce(b, x, out_type=TensorType((3,), F32), dims=(0,), arg_types=None):
    init = b.constant(0.0, F32)
    region, rb = ir.new_region(arg_types or [TensorType((), F32)] * 2)
    rb.ret([rb.one("stablehlo.add", list(region.block.args)[:2], TensorType((), F32))])
    return b.op("stablehlo.reduce", [x, init], [out_type], {"dimensions": dims}, [region]).result


def test_valid_module_passes() -> None:
    def build(b, x):
        y = b.one("stablehlo.add", [x, x], T)
        t = b.one("stablehlo.transpose", [y], TensorType((3, 2), F32), permutation=(1, 0))
        r = b.one("stablehlo.reshape", [t], T)
        return [b.one("stablehlo.broadcast_in_dim", [_reduce(b, r)], T,
                      broadcast_dimensions=(1,))]
    verify(_module(build))


def _rejects(build, *fragments, **kwargs) -> None:
    with pytest.raises(VerificationError) as info:
        verify(_module(build, **kwargs))
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_use_before_definition() -> None:
    def build(b, x):
        later = ir.Value(T)
        y = b.one("stablehlo.add", [x, later], T)
        b.block.ops.append(ir.Op("stablehlo.negate", [x], [later]))
        return [y]
    _rejects(build, "@main", "stablehlo.add", "before its definition")


def test_value_defined_twice() -> None:
    def build(b, x):
        y = b.one("stablehlo.negate", [x], T)
        b.block.ops.append(ir.Op("stablehlo.negate", [x], [y]))
        return [y]
    _rejects(build, "defined twice")


def test_region_value_out_of_scope() -> None:
    def build(b, x):
        region, rb = ir.new_region([TensorType((), F32)] * 2)
        inner = rb.one("stablehlo.add", list(region.block.args), TensorType((), F32))
        rb.ret([inner])
        init = b.constant(0.0, F32)
        b.op("stablehlo.reduce", [x, init], [TensorType((3,), F32)], {"dimensions": (0,)},
             [region])
        return [b.one("stablehlo.broadcast_in_dim", [inner], T, broadcast_dimensions=())]
    _rejects(build, "stablehlo.broadcast_in_dim", "out of its scope")


def test_return_types_must_match_signature() -> None:
    _rejects(lambda b, x: [b.constant(1.0, F32)], "func.return gives")


def test_elementwise_types() -> None:
    _rejects(lambda b, x: [b.one("stablehlo.add", [x, b.constant(1.0, F32)], T)],
             "stablehlo.add", "elementwise")


@pytest.mark.parametrize("opcode,attrs,result,fragment", [
    ("stablehlo.broadcast_in_dim", {"broadcast_dimensions": (0, 1)}, TensorType((3, 2), F32),
     "cannot broadcast"),
    ("stablehlo.reshape", {}, TensorType((7,), F32), "changes the size"),
    ("stablehlo.transpose", {"permutation": (0, 0)}, T, "not a permutation"),
    ("stablehlo.slice", {"start_indices": (0, 0), "limit_indices": (3, 3), "strides": (1, 1)},
     T, "out of bounds"),
    ("stablehlo.convert", {}, TensorType((3, 2), np.int32), "shape"),
    ("stablehlo.iota", {"iota_dimension": 2}, T, "out of range"),
])
def test_shape_rules(opcode, attrs, result, fragment) -> None:
    def build(b, x):
        operands = [] if opcode == "stablehlo.iota" else [x]
        b.one(opcode, operands, result, **attrs)
        return [x]
    _rejects(build, opcode, fragment)


def test_compare_gives_i1() -> None:
    _rejects(lambda b, x: [b.one("stablehlo.compare", [x, x], T,
                                 comparison_direction=Enum("comparison_direction", "LT"))],
             "must be i1")


def test_dot_general_dimension_numbers() -> None:
    def build(b, x):
        b.one("stablehlo.dot_general", [x, x], TensorType((2, 2), F32),
              dot_dimension_numbers=ir.DotDimensionNumbers((), (), (1,), (0,)))
        return [x]
    _rejects(build, "contracting dims 1 x 0 differ in size")


def test_concatenate_sizes() -> None:
    _rejects(lambda b, x: [b.one("stablehlo.concatenate", [x, x], T, dimension=0)],
             "sum to 4")


def test_reduce_result_shape_and_region() -> None:
    _rejects(lambda b, x: [b.one("stablehlo.broadcast_in_dim",
                                 [_reduce(b, x, TensorType((2,), F32))], T,
                                 broadcast_dimensions=(0,))], "result #0 shape")
    _rejects(lambda b, x: [b.one("stablehlo.broadcast_in_dim",
                                 [_reduce(b, x, arg_types=[TensorType((), F32)] * 3)], T,
                                 broadcast_dimensions=(1,))], "reduce region takes")


def test_while_regions() -> None:
    def build(b, x):
        cond, cb = ir.new_region([T])
        cb.ret([cb.constant(True, np.bool_)])
        body, bb = ir.new_region([T, T])
        bb.ret([body.block.args[0]])
        return b.op("stablehlo.while", [x], [T], {}, [cond, body]).results
    _rejects(build, "stablehlo.while", "body takes")


def test_region_terminator() -> None:
    def build(b, x):
        region, rb = ir.new_region([TensorType((), F32)] * 2)
        rb.ret([region.block.args[0]], "func.return")
        init = b.constant(0.0, F32)
        b.op("stablehlo.reduce", [x, init], [TensorType((3,), F32)], {"dimensions": (0,)},
             [region])
        return [x]
    _rejects(build, "not stablehlo.return")


def test_calls_check_callee_and_types() -> None:
    _rejects(lambda b, x: b.op("func.call", [x], [T], {"callee": ir.Symbol("g")}).results,
             "does not define")
    module = _module(lambda b, x: b.op("func.call", [x], [T], {"callee": ir.Symbol("g")}).results)
    g_block = ir.Block([ir.Value(TensorType((3,), F32))])
    Builder(g_block).ret(g_block.args, "func.return")
    module.functions.append(ir.Function("g", g_block, [TensorType((3,), F32)]))
    with pytest.raises(VerificationError, match="differ from @g's arguments"):
        verify(module)


def test_unknown_ops_are_rejected() -> None:
    # Issue #23: an opcode without an entry in the opcode registry is an error.
    _rejects(lambda b, x: [b.one("chlo.frobnicate", [x], T, anything=3)],
             "chlo.frobnicate", "unknown opcode", "opcode registry")


def test_registered_ops_without_rules_get_generic_checks_and_arity() -> None:
    verify(_module(lambda b, x: [b.one("chlo.erf", [x], T, anything=3)]))
    _rejects(lambda b, x: [b.one("chlo.erf", [x, x], T)], "chlo.erf", "has 2 operands, expected 1")
