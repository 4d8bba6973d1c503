"""Canonicalization and algebraic simplification (`_src/hlo/passes/simplify.py`): each rewrite
on a module in, the ops out, and the reference backend's results unchanged bit for bit;
the rewrites that would change floating-point results (x + 0.0 on -0.0, x * 0 on inf and
NaN, x - x, x == x on NaN) are shown not to happen."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.hlo import ir
from justjax._src.hlo.ir import TensorType
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.pipeline import FixedPoint, Pass, Pipeline
from justjax._src.hlo.passes.simplify import AlgebraicSimplify, Canonicalize, Simplify
from tests.harness import hand_built_module, run_reference

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.0, 3.0], np.float32)


def _same_bits(before: Sequence[np.ndarray], after: Sequence[np.ndarray]) -> None:
    assert len(before) == len(after)
    for b, a in zip(before, after, strict=True):
        b, a = np.asarray(b), np.asarray(a)
        assert (b.dtype, b.shape) == (a.dtype, a.shape)
        assert np.ascontiguousarray(b).tobytes() == np.ascontiguousarray(a).tobytes(), (b, a)


def _simplified(module: ir.Module, args: Sequence[Any], pass_: Pass | None = None
                ) -> ir.Module:
    """`module` simplified in place (verified after the pass), results checked unchanged."""
    before = run_reference(module, *args)
    Pipeline([pass_ or Simplify()], verify=True).run(module)
    _same_bits(before, run_reference(module, *args))
    return module


def _jit(fun: Callable[..., Any], *args: Any, pass_: Pass | None = None) -> ir.Module:
    """`fun` lowered on `args` and simplified, results checked unchanged."""
    module = util.clone_module(jax.jit(fun).lower(*args).compiler_ir())
    return _simplified(module, args, pass_)


def _hand(arg_types: Sequence[TensorType], build: Callable[..., Sequence[ir.Value]],
          *args: Any, pass_: Pass | None = None) -> ir.Module:
    return _simplified(hand_built_module(arg_types, build), args, pass_)


def _ops(module: ir.Module, fn: str = "main") -> list[str]:
    """The opcodes (without dialect) of a function's body, terminator excluded."""
    return [op.opcode.split(".")[-1] for op in module.function(fn).body.ops[:-1]]


def _returns_args(module: ir.Module) -> bool:
    main = module.main
    return all(any(v is a for a in main.args) for v in main.body.terminator.operands)


def _t(shape: Sequence[int], dtype: Any = F32) -> TensorType:
    return TensorType(tuple(shape), np.dtype(dtype))


# ---------------------------------------------------------------------------------------------
# Canonicalization.

def test_broadcast_chain_folds_into_one_broadcast() -> None:
    x = np.arange(3, dtype=np.float32)
    module = _jit(lambda x: jnp.broadcast_to(x[:, None], (3, 4)), x)
    assert _ops(module) == ["broadcast_in_dim"]
    assert module.main.body.ops[0].attributes["broadcast_dimensions"] == (0,)


def test_broadcast_of_broadcast_composes_dimensions() -> None:
    def build(b: ir.Builder, x: ir.Value) -> list[ir.Value]:
        y = b.one("stablehlo.broadcast_in_dim", [x], _t((2, 3)), broadcast_dimensions=(1,))
        return [b.one("stablehlo.broadcast_in_dim", [y], _t((4, 2, 3)),
                      broadcast_dimensions=(1, 2))]
    module = _hand([_t((3,))], build, np.arange(3, dtype=np.float32))
    assert _ops(module) == ["broadcast_in_dim"]
    assert module.main.body.ops[0].attributes["broadcast_dimensions"] == (2,)


def test_reshape_chains_fold_and_round_trips_vanish() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert _ops(_jit(lambda x: x.reshape(12).reshape(3, 4), x)) == []
    module = _jit(lambda x: x.reshape(12).reshape(2, 6).reshape(6, 2), x)
    assert _ops(module) == ["reshape"]
    assert module.main.body.ops[0].operands[0] is module.main.args[0]


def test_transposes_compose() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert _ops(_jit(lambda x: x.T.T, x[0])) == []
    module = _jit(lambda x: jnp.transpose(jnp.transpose(x, (1, 2, 0)), (2, 0, 1)).T, x)
    assert _ops(module) == ["transpose"]
    assert module.main.body.ops[0].attributes["permutation"] == (2, 1, 0)


def test_transpose_of_unit_dims_is_a_reshape() -> None:
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    assert _ops(_jit(lambda x: x.T, x)) == ["reshape"]


def test_broadcast_adding_unit_dims_is_a_reshape() -> None:
    x = np.arange(3, dtype=np.float32)
    assert _ops(_jit(lambda x: x[None, :, None], x)) == ["reshape"]


def test_same_type_broadcast_and_convert_vanish() -> None:
    def build(b: ir.Builder, x: ir.Value) -> list[ir.Value]:
        y = b.one("stablehlo.broadcast_in_dim", [x], _t((2, 3)), broadcast_dimensions=(0, 1))
        z = b.one("stablehlo.convert", [y], _t((2, 3)))
        return [b.one("stablehlo.bitcast_convert", [z], _t((2, 3)))]
    module = _hand([_t((2, 3))], build, np.ones((2, 3), np.float32))
    assert _ops(module) == [] and _returns_args(module)


def test_identity_slice_pad_concatenate_reverse_vanish() -> None:
    def build(b: ir.Builder, x: ir.Value) -> list[ir.Value]:
        s = b.one("stablehlo.slice", [x], _t((3, 4)), start_indices=(0, 0),
                  limit_indices=(3, 4), strides=(1, 1))
        zero = b.constant(0.0, F32)
        p = b.one("stablehlo.pad", [s, zero], _t((3, 4)), edge_padding_low=(0, 0),
                  edge_padding_high=(0, 0), interior_padding=(0, 0))
        empty = b.op("stablehlo.slice", [p], [_t((0, 4))], dict(
            start_indices=(0, 0), limit_indices=(0, 4), strides=(1, 1))).result
        c = b.one("stablehlo.concatenate", [p, empty], _t((3, 4)), dimension=0)
        return [b.one("stablehlo.reverse", [c], _t((3, 4)), dimensions=())]
    module = _hand([_t((3, 4))], build, np.arange(12, dtype=np.float32).reshape(3, 4))
    assert _ops(module) == [] and _returns_args(module)


def test_concatenate_drops_empty_operands() -> None:
    def build(b: ir.Builder, x: ir.Value, e: ir.Value) -> list[ir.Value]:
        return [b.one("stablehlo.concatenate", [x, e, x], _t((6,)), dimension=0)]
    module = _hand([_t((3,)), _t((0,))], build, np.arange(3, dtype=np.float32),
                   np.zeros(0, np.float32))
    (concat,) = module.main.body.ops[:-1]
    assert concat.operands == [module.main.args[0]] * 2


def test_nonidentity_pad_and_slice_stay() -> None:
    x = np.arange(5, dtype=np.float32)
    assert _ops(_jit(lambda x: lax.pad(x, 0.0, [(1, 0, 0)]), x)) == ["constant", "pad"]
    assert _ops(_jit(lambda x: x[1:], x)) == ["slice"]


def test_slice_of_slice_composes() -> None:
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    module = _jit(lambda x: lax.slice(lax.slice(x, (2, 0), (19, 2), (3, 1)), (1, 1), (6, 2),
                                      (2, 1)), x)
    (op,) = module.main.body.ops[:-1]
    assert op.opcode == "stablehlo.slice"
    assert (op.attributes["start_indices"], op.attributes["strides"]) == ((5, 1), (6, 1))


def test_reverse_of_reverse_and_unit_reverse_vanish() -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert _ops(_jit(lambda x: lax.rev(lax.rev(x, (0, 1)), (1, 0)), x)) == []
    assert _ops(_jit(lambda x: lax.rev(x, (1,)), x[:, :1])) == []
    assert _ops(_jit(lambda x: lax.rev(lax.rev(x, (0,)), (1,)), x)) == ["reverse", "reverse"]


def test_whole_dynamic_slices_and_updates_vanish() -> None:
    x = np.arange(3, dtype=np.float32)
    i = np.int32(2)
    assert _ops(_jit(lambda x, i: lax.dynamic_slice(x, (i,), (3,)), x, i)) == []
    module = _jit(lambda x, y, i: lax.dynamic_update_slice(x, y, (i,)), x, x + 1, i)
    assert _ops(module) == []
    assert module.main.body.terminator.operands[0] is module.main.args[1]


def test_shape_ops_of_a_broadcast_scalar_become_broadcasts() -> None:
    def build(b: ir.Builder, s: ir.Value) -> list[ir.Value]:
        y = b.one("stablehlo.broadcast_in_dim", [s], _t((4, 6)), broadcast_dimensions=())
        r = b.one("stablehlo.reshape", [y], _t((2, 12)))
        t = b.one("stablehlo.transpose", [y], _t((6, 4)), permutation=(1, 0))
        sl = b.one("stablehlo.slice", [y], _t((2, 3)), start_indices=(0, 0),
                   limit_indices=(4, 6), strides=(2, 2))
        return [r, t, sl]
    module = _hand([_t(())], build, np.float32(7.0))
    assert _ops(module) == ["broadcast_in_dim"] * 3


def test_transpose_of_broadcast_is_a_broadcast() -> None:
    x = np.arange(3, dtype=np.float32)
    module = _jit(lambda x: jnp.broadcast_to(x, (2, 3)).T, x)
    assert _ops(module) == ["broadcast_in_dim"]
    assert module.main.body.ops[0].attributes["broadcast_dimensions"] == (0,)
    # Out of order dimensions would need a transpose anyway.
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert _ops(_jit(lambda y: jnp.broadcast_to(y, (4, 2, 3)).transpose(0, 2, 1), y)) == [
        "broadcast_in_dim", "transpose"]


def test_slice_within_one_concatenated_operand() -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = np.arange(8, dtype=np.float32).reshape(4, 2) + 10
    module = _jit(lambda x, y: jnp.concatenate([x, y])[3:], x, y)
    assert _ops(module) == [] and module.main.body.terminator.operands[0] is module.main.args[1]
    module = _jit(lambda x, y: jnp.concatenate([x, y])[4:7:2, 1:], x, y)
    (op,) = module.main.body.ops[:-1]
    assert op.operands[0] is module.main.args[1]
    assert op.attributes["start_indices"] == (1, 1)
    assert "concatenate" in _ops(_jit(lambda x, y: jnp.concatenate([x, y])[2:4], x, y))


def test_a_dynamic_slice_of_a_broadcast_scalar_is_the_scalar_broadcast() -> None:
    # A device's block of a replicated constant, as the SPMD partitioner cuts it.
    i = np.int32(3)
    module = _jit(lambda i: lax.dynamic_slice(jnp.full((8, 5), 2.5), (i, 0), (2, 5)), i)
    assert _ops(module) == ["constant", "broadcast_in_dim"]
    assert module.main.body.ops[1].result.type.shape == (2, 5)


def test_dynamic_slice_with_constant_starts_is_a_clamped_slice() -> None:
    x = np.arange(10, dtype=np.float32)
    module = _jit(lambda x: lax.dynamic_slice(x, (2,), (3,)), x)
    assert _ops(module) == ["slice"]
    module = _jit(lambda x: lax.dynamic_slice(x, (np.int32(9),), (3,)), x)
    assert module.main.body.ops[0].attributes["start_indices"] == (7,)
    assert (run_reference(module, x)[0] == [7, 8, 9]).all()


# ---------------------------------------------------------------------------------------------
# Algebraic simplification: additive and multiplicative identities.

def test_integer_add_and_subtract_of_zero_vanish() -> None:
    x = np.arange(-3, 3, dtype=np.int32)
    assert _ops(_jit(lambda x: (x + 0) - 0, x)) == []
    assert _ops(_jit(lambda x: 0 + x, x)) == []


def test_float_add_of_positive_zero_is_kept() -> None:
    # -0.0 + 0.0 is +0.0: removing the add would change the result.
    module = _jit(lambda x: x + 0.0, SPECIAL)
    assert "add" in _ops(module)
    assert np.signbit(run_reference(module, SPECIAL)[0][1]) == np.False_


def test_float_add_of_negative_zero_and_subtract_of_positive_zero_vanish() -> None:
    assert _ops(_jit(lambda x: (x + -0.0) - 0.0, SPECIAL)) == []
    assert _ops(_jit(lambda x: -0.0 + x, SPECIAL)) == []


def test_float_subtract_of_negative_zero_is_kept() -> None:
    assert "subtract" in _ops(_jit(lambda x: x - (-0.0), SPECIAL))


def test_integer_x_minus_x_is_zero_but_float_is_kept() -> None:
    module = _jit(lambda x: x - x, np.arange(4, dtype=np.int32))
    assert _ops(module) == ["constant", "broadcast_in_dim"]
    assert "subtract" in _ops(_jit(lambda x: x - x, SPECIAL))  # inf - inf is NaN


def test_integer_zero_minus_x_is_a_negation() -> None:
    x = np.array([1, -5, np.iinfo(np.int32).min], np.int32)
    assert _ops(_jit(lambda x: 0 - x, x)) == ["negate"]
    assert "subtract" in _ops(_jit(lambda x: 0 - x, x.astype(np.uint32)))
    assert "subtract" in _ops(_jit(lambda x: 0.0 - x, SPECIAL))  # 0 - 0 is +0, -0 is -0


def test_multiply_by_one_vanishes_for_floats_and_integers() -> None:
    assert _ops(_jit(lambda x: 1.0 * (x * 1.0), SPECIAL)) == []
    assert _ops(_jit(lambda x: x * 1, np.arange(4, dtype=np.int8))) == []


def test_integer_multiply_by_zero_is_zero_but_float_is_kept() -> None:
    module = _jit(lambda x: x * 0, np.arange(4, dtype=np.int32))
    assert _ops(module) == ["constant", "broadcast_in_dim"]
    module = _jit(lambda x: x * 0.0, SPECIAL)  # inf * 0 and nan * 0 are NaN, -2 * 0 is -0
    assert "multiply" in _ops(module)
    assert np.isnan(run_reference(module, SPECIAL)[0][2])


def test_integer_multiply_by_minus_one_is_a_negation() -> None:
    assert _ops(_jit(lambda x: x * -1, np.arange(4, dtype=np.int32))) == ["negate"]
    assert "multiply" in _ops(_jit(lambda x: x * -1.0, SPECIAL))


def test_complex_multiply_by_one_is_kept() -> None:
    # (inf + 0j) * (1 + 0j) computes inf * 0 inside: not an identity for complex numbers.
    x = np.array([np.inf + 0j, 1 + 2j], np.complex64)
    assert "multiply" in _ops(_jit(lambda x: x * (1 + 0j), x))


def test_divide_by_one_and_powers_of_one_and_zero() -> None:
    assert _ops(_jit(lambda x: x / 1.0, SPECIAL)) == []
    assert _ops(_jit(lambda x: lax.pow(x, 1.0), SPECIAL)) == []
    module = _jit(lambda x: lax.pow(x, 0.0), SPECIAL)  # pow(nan, 0) is 1
    assert _ops(module) == ["constant", "broadcast_in_dim"]
    assert (run_reference(module, SPECIAL)[0] == 1).all()
    assert "power" in _ops(_jit(lambda x: lax.pow(x, 2.0), SPECIAL))


# ---------------------------------------------------------------------------------------------
# Involutions, extrema, logic, select, compare, convert.

def test_double_negation_and_double_not_vanish() -> None:
    assert _ops(_jit(lambda x: -(-x), SPECIAL)) == []
    x = np.array([0, 1, -7, np.iinfo(np.int32).min], np.int32)
    assert _ops(_jit(lambda x: -(-x), x)) == []
    assert _ops(_jit(lambda x: ~~x, x)) == []
    assert _ops(_jit(lambda b: ~~b, np.array([True, False]))) == []
    assert _ops(_jit(lambda x: -(-(-x)), x)) == ["negate"]


def test_real_and_imag_of_complex() -> None:
    x = SPECIAL[:4]
    assert _ops(_jit(lambda a, b: (lax.complex(a, b).real, lax.complex(a, b).imag), x, x)) == []


def test_abs_of_abs() -> None:
    assert _ops(_jit(lambda x: jnp.abs(jnp.abs(x)), SPECIAL)) == ["abs"]


def test_min_max_of_self_and_of_their_identities() -> None:
    assert _ops(_jit(lambda x: jnp.maximum(x, x), SPECIAL)) == []
    assert _ops(_jit(lambda x: jnp.minimum(x, x), SPECIAL)) == []
    assert _ops(_jit(lambda x: jnp.maximum(x, -jnp.inf), SPECIAL)) == []
    assert _ops(_jit(lambda x: jnp.minimum(jnp.inf, x), SPECIAL)) == []
    assert "maximum" in _ops(_jit(lambda x: jnp.maximum(x, 0.0), SPECIAL))
    lowest = np.iinfo(np.int32).min
    assert _ops(_jit(lambda x: jnp.maximum(x, lowest), np.arange(3, dtype=np.int32))) == []


def test_logic_with_self_zero_and_all_ones() -> None:
    x = np.array([0, 5, -1, 12], np.int32)
    assert _ops(_jit(lambda x: (x & x) | x, x)) == []
    assert _ops(_jit(lambda x: (x & -1) | 0, x)) == []
    assert _ops(_jit(lambda x: (x ^ 0), x)) == []
    assert _ops(_jit(lambda x: x ^ x, x)) == ["constant", "broadcast_in_dim"]
    assert _ops(_jit(lambda x: x & 0, x)) == ["constant", "broadcast_in_dim"]
    u = np.array([0, 5, 255], np.uint8)
    assert _ops(_jit(lambda x: x & np.uint8(255), u)) == []
    b = np.array([True, False])
    assert _ops(_jit(lambda b: (b & True) | False, b)) == []


def _select_module(pred: Any, negate: bool = False, same: bool = False) -> ir.Module:
    def build(b: ir.Builder, p: ir.Value, x: ir.Value, y: ir.Value) -> list[ir.Value]:
        if pred is not None:
            c = b.constant(pred, np.bool_)
            p = b.one("stablehlo.broadcast_in_dim", [c], _t((4,), np.bool_),
                      broadcast_dimensions=tuple(range(np.ndim(pred))))
        if negate:
            p = b.one("stablehlo.not", [p], p.type)
        return [b.one("stablehlo.select", [p, x, x if same else y], x.type)]
    args = np.array([True, False, True, False]), SPECIAL[:4], SPECIAL[4:]
    return _hand([_t((4,), np.bool_), _t((4,)), _t((4,))], build, *args)


def test_select_with_constant_or_negated_predicate_or_equal_branches() -> None:
    module = _select_module(True)
    assert _ops(module) == [] and module.main.body.terminator.operands[0] is module.main.args[1]
    module = _select_module(False)
    assert _ops(module) == [] and module.main.body.terminator.operands[0] is module.main.args[2]
    assert _ops(_select_module(None, same=True)) == []
    module = _select_module(None, negate=True)
    (select,) = module.main.body.ops[:-1]
    assert select.operands == [module.main.args[0], module.main.args[2], module.main.args[1]]
    assert _ops(_select_module(np.array([True, False, True, False]))) == ["constant", "select"]


def test_integer_compare_with_self_is_constant_but_float_is_kept() -> None:
    x = np.arange(4, dtype=np.int32)
    for fun, expected in [(lambda x: x == x, True), (lambda x: x <= x, True),
                          (lambda x: x < x, False), (lambda x: x != x, False)]:
        module = _jit(fun, x)
        assert _ops(module) == ["constant", "broadcast_in_dim"]
        assert (run_reference(module, x)[0] == expected).all()
    assert "compare" in _ops(_jit(lambda x: x == x, SPECIAL))  # nan != nan


def test_convert_round_trips() -> None:
    x8 = np.array([-128, 0, 127], np.int8)
    assert _ops(_jit(lambda x: x.astype(jnp.int32).astype(jnp.int8), x8)) == []
    assert _ops(_jit(lambda x: x.astype(jnp.float32).astype(jnp.int8), x8)) == []
    assert _ops(_jit(lambda x: x.astype(jnp.float32).astype(jnp.float16),
                     SPECIAL.astype(np.float16))) == []
    # Narrowing first loses values.
    x = np.array([1.0 + 2.0 ** -20, 70000.0], np.float32)
    assert _ops(_jit(lambda x: x.astype(jnp.float16).astype(jnp.float32), x)) == [
        "convert", "convert"]
    x32 = np.array([2 ** 24 + 1, -3], np.int32)
    assert _ops(_jit(lambda x: x.astype(jnp.float32).astype(jnp.int32), x32)) == [
        "convert", "convert"]


# ---------------------------------------------------------------------------------------------
# Reductions and dots.

def test_reduce_over_unit_dims_from_the_identity_is_a_reshape() -> None:
    x = np.array([[-0.0], [1.0], [np.nan]], np.float32)
    for fun in (lambda x: jnp.max(x, axis=1),
                lambda x: jnp.min(x, axis=1), lambda x: jnp.prod(x, axis=1)):
        assert _ops(_jit(fun, x)) == ["reshape"]
    i = np.array([[3], [-4]], np.int32)
    for fun in (lambda x: jnp.sum(x, axis=1), lambda x: jnp.max(x, axis=1)):
        assert _ops(_jit(fun, i)) == ["reshape"]
    b = np.array([[True], [False]])
    assert _ops(_jit(lambda b: jnp.all(b, axis=1), b)) == ["reshape"]
    assert _ops(_jit(lambda b: jnp.any(b, axis=1), b)) == ["reshape"]


def test_float_sum_from_negative_zero_is_kept() -> None:
    # The reference backend sums floats from +0.0 whatever the init (a sum of -0.0 is +0.0):
    # a reshape would give -0.0. (JAX would emit +0.0 as this init: built by hand.)
    def build(b: ir.Builder, x: ir.Value) -> list[ir.Value]:
        region, body = ir.new_region([_t(()), _t(())])
        body.ret([body.one("stablehlo.add", region.block.args, _t(()))])
        init = b.constant(-0.0, F32)
        return b.op("stablehlo.reduce", [x, init], [_t((3,))], {"dimensions": (1,)},
                    [region]).results
    module = _hand([_t((3, 1))], build, np.array([[-0.0], [1.0], [np.nan]], np.float32))
    assert _ops(module) == ["constant", "reduce"]


def test_float_sum_from_positive_zero_is_kept() -> None:
    # 0.0 + -0.0 is +0.0 (XLA rewrites this one, to -0.0).
    x = np.array([[-0.0]], np.float32)
    module = _jit(lambda x: jnp.sum(x, axis=1), x)
    assert "reduce" in _ops(module)
    assert not np.signbit(run_reference(module, x)[0][0])


def test_reduce_from_another_init_value_is_kept() -> None:
    x = np.array([[2.0], [-0.0]], np.float32)
    module = _jit(lambda x: lax.reduce(x, np.float32(1.0), lax.add, (1,)), x)
    assert "reduce" in _ops(module)
    module = _jit(lambda x: lax.reduce(x, np.float32(0.0), lax.mul, (1,)), x)
    assert "reduce" in _ops(module)


def test_reduce_over_bigger_dims_is_kept() -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert "reduce" in _ops(_jit(lambda x: jnp.sum(x, axis=1), x))


def test_reduce_over_no_dims_and_over_empty_dims() -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert _ops(_jit(lambda x: lax.reduce(x, np.float32(5.0), lax.add, ()), x)) == []
    e = np.zeros((3, 0), np.float32)
    module = _jit(lambda x: lax.reduce(x, np.float32(5.0), lax.add, (1,)), e)
    assert "reduce" not in _ops(module)
    assert (run_reference(module, e)[0] == 5.0).all()


def test_variadic_reduce_over_unit_dims_is_kept() -> None:
    x = np.array([[3.0], [1.0]], np.float32)
    module = _jit(lambda x: jnp.argmax(x, axis=1), x)
    assert "stablehlo.reduce" in [op.opcode for op in module.walk()]


def test_dot_with_unit_contraction_is_a_broadcast_multiply() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 1)).astype(np.float32), rng.normal(size=(1, 4)).astype(np.float32)
    assert _ops(_jit(jnp.dot, a, b)) == ["broadcast_in_dim", "broadcast_in_dim", "multiply"]
    assert _ops(_jit(lambda v, b: jnp.dot(v[:, None], b), a.reshape(3), b)) == [
        "broadcast_in_dim", "broadcast_in_dim", "multiply"]
    x = rng.normal(size=(2, 3, 1)).astype(np.float32)
    y = rng.normal(size=(2, 1, 5)).astype(np.float32)
    module = _jit(lambda x, y: jnp.einsum("bik,bkj->bij", x, y), x, y)
    assert "dot_general" not in _ops(module) and "multiply" in _ops(module)
    # Batch dims after the free dims need a transpose first.
    module = _jit(lambda x, y: lax.dot_general(x, y, (((0,), (1,)), ((2,), (0,)))),
                  x.transpose(2, 1, 0), y)
    assert "dot_general" not in _ops(module)
    i = rng.integers(-100, 100, size=(4, 1)).astype(np.int8)
    assert "dot_general" not in _ops(_jit(lambda a, b: lax.dot_general(
        a, b, (((1,), (1,)), ((), ())), preferred_element_type=jnp.int32), i, i))


def test_outer_product_dot_is_a_broadcast_multiply() -> None:
    x = SPECIAL[:3].astype(np.float16)
    module = _jit(lambda a, b: lax.dot_general(a, b, (((), ()), ((), ())),
                                               preferred_element_type=jnp.float32), x, x)
    assert _ops(module) == ["convert", "convert", "broadcast_in_dim", "broadcast_in_dim",
                            "multiply"]
    module = _jit(lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))), x, x,
                  pass_=AlgebraicSimplify())
    assert _ops(module) == ["broadcast_in_dim", "broadcast_in_dim", "multiply"]


def test_dots_that_sum_or_round_are_kept() -> None:
    a = np.ones((3, 2), np.float32)
    assert _ops(_jit(jnp.dot, a, a.T)) == ["dot_general"]
    x = np.array([[1.0 + 2.0 ** -20]], np.float32)
    module = _jit(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                               preferred_element_type=jnp.float16), x, x)
    assert _ops(module) == ["dot_general"]  # the product is rounded, not the operands
    c = np.ones((2, 1), np.complex64)
    assert _ops(_jit(jnp.dot, c, c.T)) == ["dot_general"]


# ---------------------------------------------------------------------------------------------
# Regions, effects, the pass protocol, speed.

def test_rewrites_inside_loop_bodies() -> None:
    def f(x: Any) -> Any:
        return lax.fori_loop(0, 3, lambda i, y: -(-(y * 1.0)) + 1.0, x)
    module = _jit(f, SPECIAL)
    (loop,) = [op for op in module.main.body.ops if op.opcode == "stablehlo.while"]
    body = [op.opcode.split(".")[-1] for op in loop.regions[1].block.ops]
    assert "negate" not in body and "multiply" not in body


def test_loop_body_reading_a_simplified_outer_value() -> None:
    def f(x: Any) -> Any:
        z = -(-x)
        return lax.fori_loop(0, 2, lambda i, y: y + z, x)
    module = _jit(f, SPECIAL)
    (loop,) = [op for op in module.main.body.ops if op.opcode == "stablehlo.while"]
    assert module.main.args[0] in loop.operands or any(
        op.operands and module.main.args[0] in op.operands
        for op in loop.regions[1].block.walk())


def test_effects_are_kept() -> None:
    def f(x: Any) -> Any:
        jax.debug.print("x={}", x)
        return -(-x)
    module = _jit(f, SPECIAL)
    assert "custom_call" in _ops(module)
    assert "negate" not in _ops(module)


def test_passes_report_changes_and_reach_a_fixed_point() -> None:
    module = util.clone_module(jax.jit(lambda x: (x * 1.0).T.T).lower(
        np.ones((2, 3), np.float32)).compiler_ir())
    assert Canonicalize().run(module)
    assert "multiply" in _ops(module) and "transpose" not in _ops(module)
    assert not Canonicalize().run(module)
    assert AlgebraicSimplify().run(module)
    assert not Simplify().run(module)
    assert _returns_args(module)


def test_fixed_point_with_names_and_pipeline() -> None:
    module = util.clone_module(jax.jit(lambda x: x.reshape(6).reshape(2, 3) * 1.0).lower(
        np.ones((2, 3), np.float32)).compiler_ir())
    pipeline = Pipeline([FixedPoint([Canonicalize(), AlgebraicSimplify()])], verify=True)
    assert pipeline.run(module) and _ops(module) == []
    assert {Canonicalize.name, AlgebraicSimplify.name, Simplify.name} == {
        "canonicalize", "algebraic-simplify", "simplify"}


def test_unchanged_module_is_left_alone() -> None:
    module = util.clone_module(jax.jit(lambda x: jnp.sin(x) + 1.0).lower(SPECIAL).compiler_ir())
    text = str(module)
    assert not Simplify().run(module)
    assert str(module) == text


def _long_chain(length: int) -> ir.Module:
    def build(b: ir.Builder, x: ir.Value) -> list[ir.Value]:
        one = b.constant(1.0, F32)
        ones = b.one("stablehlo.broadcast_in_dim", [one], _t((2, 3)), broadcast_dimensions=())
        for _ in range(length):
            x = b.one("stablehlo.negate", [x], x.type)
            x = b.one("stablehlo.multiply", [x, ones], x.type)
            t = b.one("stablehlo.transpose", [x], _t((3, 2)), permutation=(1, 0))
            x = b.one("stablehlo.transpose", [t], _t((2, 3)), permutation=(1, 0))
            x = b.one("stablehlo.sine", [x], x.type)
        return [x]
    return hand_built_module([_t((2, 3))], build)


def test_simplify_folds_a_long_chain_in_one_run() -> None:
    # Its speed on long modules is measured in benchmarks/bench_compile.py.
    module = _long_chain(800)  # 4,000 ops
    assert Simplify().run(module)
    assert _ops(module).count("sine") == 800 and "transpose" not in _ops(module)


@pytest.mark.parametrize("fun", [
    lambda x: (x + 0.0) * 1.0 - 0.0,
    lambda x: jnp.maximum(x, x) / 1.0 + (-0.0),
    lambda x: jnp.sum(x.reshape(4, 2, 1), axis=2).T.T,
    lambda x: jnp.dot(x[:, None], x[None, :]).reshape(64)[::2],
    lambda x: jnp.where(x > 0, -(-x), x * 0.0),
], ids=["arith", "extrema", "reduce", "outer", "where"])
def test_results_unchanged_on_special_values(fun: Callable[..., Any]) -> None:
    _jit(fun, SPECIAL)


def test_multiply_by_a_converted_boolean_is_a_select() -> None:
    """As XLA rewrites it: x * convert(p) = select(p, x, 0), so inf * False is 0 (JAX's
    compiled `x * b` gives [0, nan] for x = [inf, nan], b = [False, True])."""
    def fun(b, x):
        return x * b

    b, x = np.array([False, True]), np.array([np.inf, np.nan], np.float32)
    module = util.clone_module(jax.jit(fun).lower(b, x).compiler_ir())
    # Not `_simplified`: the rewrite changes inf * 0 (NaN) into 0, as XLA's does.
    Pipeline([AlgebraicSimplify()], verify=True).run(module)
    assert "multiply" not in _ops(module) and "select" in _ops(module)
    got = run_reference(module, b, x)[0]
    assert got[0] == 0.0 and np.isnan(got[1])
    np.testing.assert_array_equal(jax.jit(lambda b, x: b * x)(b, np.float32([np.inf, 2.0])),
                                  [0.0, 2.0])
