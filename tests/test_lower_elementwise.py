"""Lowering of the elementwise primitives to StableHLO, and the reference backend's kernels.

Three kinds of checks:
- every elementwise op record, traced, lowered and run on the reference backend, gives the
  eager result (bit for bit, except where the lowering is an expansion whose rounding differs
  from the eager NumPy formula: then within the record's tolerance);
- golden StableHLO texts, recorded from real JAX 0.10.2 (`jax.jit(f).lower(*args).as_text()`),
  for representative primitives: one-op lowerings, CHLO ops, JAX's expansions, comparison
  types, implicit scalar broadcasting;
- the kernels' XLA CPU semantics on edge cases (integer division by zero, shifts out of range,
  saturating conversions, signed zeros, NaN, poles), values recorded from real XLA.
The `needs_jax` tests re-derive the golden texts and the edge-case values from real JAX.
"""
from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest

import justjax
from justjax import lax as justjax_lax
from justjax._src.backends.reference.kernels import elementwise as kernels
from justjax._src.hlo import ir
from tests.harness import (OpRecord, assert_close, lower_to_module, record_cases, record_rng,
                           run_on_backend, run_reference)
from tests.records import lax_elementwise

BF16 = np.dtype(ml_dtypes.bfloat16)


def _lower(fun: Callable[..., Any], args: list[np.ndarray]) -> ir.Module:
    return lower_to_module(fun, *args)


def _run(module: ir.Module, args: list[np.ndarray]) -> list[np.ndarray]:
    return run_reference(module, *args)


# ---------------------------------------------------------------------------------------------
# Every elementwise op record: reference backend == eager.

# Records whose lowering is an expansion (JAX's formula, rounded op by op) while the eager
# implementation evaluates a NumPy function: equal within tolerance, not bit for bit.
EXPANDED = {"exp2", "logistic", "sin", "cos"}

CASES = record_cases(lax_elementwise.RECORDS)


def _record_args(record: OpRecord, shapes: tuple, dtypes: tuple) -> list[np.ndarray]:
    return record.make(record_rng(record, shapes, dtypes), shapes, dtypes)


@pytest.mark.parametrize("record,shapes,dtypes", CASES)
def test_reference_backend_matches_eager(record: OpRecord, shapes: tuple, dtypes: tuple) -> None:
    args = _record_args(record, shapes, dtypes)

    def fun(*xs: Any) -> Any:
        return record.fun(*xs, **record.static)

    module = _lower(fun, args)
    got, = _run(module, args)
    # Eager on the reference backend too: the module as lowered must compute what the
    # primitive computes, bit for bit (the llvm backend is checked against the reference
    # backend within ULPs in tests/test_llvm_backend.py).
    with justjax.config.override("jax_platforms", "reference"):
        want = np.asarray(fun(*[justjax.numpy.asarray(a) for a in args]))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    inexact = got.dtype.kind in "fc" or got.dtype == BF16
    if record.name in EXPANDED and inexact:
        assert_close(got, want, record.tolerance(got.dtype), context=record.name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=record.name)  # NaNs match NaNs


# ---------------------------------------------------------------------------------------------
# Golden StableHLO, as real JAX prints it. Each case takes the lax module (justjax's or
# JAX's) and returns the function and example arguments.

def _f32(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


def case_add_scalar_broadcast(L: Any) -> tuple:
    return L.add, [_f32(3), _f32()]


def case_add_unit_dim_broadcast(L: Any) -> tuple:
    return L.add, [_f32(1, 3), _f32(2, 3)]


def case_sign_unsigned(L: Any) -> tuple:
    return L.sign, [np.ones(3, np.uint8)]


def case_round_to_nearest_even(L: Any) -> tuple:
    return (lambda x: L.round(x, L.RoundingMethod.TO_NEAREST_EVEN)), [_f32(3)]


def case_exp2(L: Any) -> tuple:
    return L.exp2, [_f32(3)]


def case_logistic_scalar(L: Any) -> tuple:
    return L.logistic, [_f32()]


def case_sin_complex(L: Any) -> tuple:
    return L.sin, [np.ones(3, np.complex64)]


def case_conj_real(L: Any) -> tuple:
    return L.conj, [_f32(3)]


def case_square(L: Any) -> tuple:
    return (lambda x, n: (L.square(x), L.square(n))), [_f32(3), np.ones(3, np.int32)]


def case_integer_pow(L: Any) -> tuple:
    return (lambda x: (L.integer_pow(x, 5), L.integer_pow(x, -3), L.integer_pow(x, -1),
                       L.integer_pow(x, 0))), [_f32(3)]


def case_integer_pow_scalar(L: Any) -> tuple:
    return (lambda x: (L.integer_pow(x, -2), L.integer_pow(x, 0))), [_f32()]


def case_pow_int_exponent(L: Any) -> tuple:
    return L.pow, [_f32(3), np.ones((), np.int32)]


def case_max_complex(L: Any) -> tuple:
    return L.max, [np.ones(3, np.complex64), np.ones(3, np.complex64)]


def case_comparison_types(L: Any) -> tuple:
    return (lambda b, i, u, c: (L.lt(b, b), L.ge(i, i), L.gt(u, u), L.eq(c, c))), \
        [np.ones(2, bool), np.ones(2, np.int8), np.ones(2, np.uint32), np.ones(2, np.complex64)]


def case_reduce_precision(L: Any) -> tuple:
    return (lambda x: L.reduce_precision(x, 5, 10)), [_f32(3)]


def case_chlo_ops(L: Any) -> tuple:
    return (lambda x: (L.nextafter(x, x), L.lgamma(x), L.erf_inv(x), L.asinh(x),
                       L.polygamma(x, x))), [_f32(3)]


def case_integer_ops(L: Any) -> tuple:
    return (lambda x, y: (L.div(x, y), L.rem(x, y), L.shift_right_logical(x, y),
                          L.population_count(x), L.clz(x), L.bitwise_not(x))), \
        [np.ones(3, np.int32), np.ones(3, np.int32)]


def case_complex_parts(L: Any) -> tuple:
    return (lambda z: (L.abs(z), L.real(z), L.imag(z), L.complex(L.real(z), L.imag(z)))), \
        [np.ones(3, np.complex64)]


def case_bfloat16_transcendentals(L: Any) -> tuple:
    return (lambda x: L.tanh(L.log1p(L.expm1(x)))), [np.ones(3, BF16)]


GOLDEN_CASES = {name[len("case_"):]: fun for name, fun in sorted(globals().items())
                if name.startswith("case_")}

_MODULE_HEADER = "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"

# The texts, at the end of this file.
GOLDEN: dict[str, str] = {}


def _golden_module(name: str, L: Any) -> tuple[Callable[..., Any], list[np.ndarray]]:
    fun, args = GOLDEN_CASES[name](L)

    def f(*xs: Any) -> Any:  # named `f`, so both modules are `@jit_f`
        return fun(*xs)

    return f, args


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_stablehlo_matches_jax(name: str) -> None:
    f, args = _golden_module(name, justjax_lax)
    assert justjax.jit(f).lower(*args).as_text() == GOLDEN[name]


def test_every_golden_case_has_text() -> None:
    assert sorted(GOLDEN) == sorted(GOLDEN_CASES)


@pytest.mark.needs_jax
def test_golden_texts_are_what_jax_prints() -> None:
    jax = pytest.importorskip("jax")
    for name in GOLDEN_CASES:
        f, args = _golden_module(name, jax.lax)
        assert jax.jit(f).lower(*args).as_text() == GOLDEN[name], name


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_modules_run_on_xla_as_on_the_reference_backend(name: str) -> None:
    pytest.importorskip("jax")
    from tests import xla_check
    f, args = _golden_module(name, justjax_lax)
    rng = np.random.default_rng(0)
    args = [(rng.uniform(0.2, 0.9, a.shape) * (1 + 1j if a.dtype.kind == "c" else 1)
             if a.dtype.kind in "fcV" or a.dtype == BF16 else rng.integers(0, 5, a.shape)
             ).astype(a.dtype) for a in args]
    module = _lower(f, args)
    for got, want in zip(xla_check.run(str(module), args), _run(module, args), strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        tol = 2e-2 if got.dtype in (BF16, np.float16) else 1e-5
        assert_close(got, want, tol if got.dtype.kind in "fc" or got.dtype == BF16 else 0,
                     context=name)


# ---------------------------------------------------------------------------------------------
# Kernel semantics on edge cases, as XLA CPU computes them (values read off real XLA).

def _kernel(opcode: str, args: list[np.ndarray], out_dtype: Any, out_shape: tuple | None = None,
            backend: str = "reference", **attributes: Any) -> np.ndarray:
    """Runs one op on `backend`."""
    block = ir.Block([ir.Value(ir.TensorType(a.shape, a.dtype)) for a in args])
    b = ir.Builder(block)
    shape = out_shape if out_shape is not None else max((a.shape for a in args), key=len)
    out = b.one(opcode, block.args, ir.TensorType(shape, out_dtype), **attributes)
    b.ret([out], "func.return")
    module = ir.Module("m", [ir.Function("main", block, [out.type], "public")])
    return run_on_backend(backend, module, *args)[0]


I32_X = np.array([7, -7, -2**31, 5, 0, 7], np.int32)
I32_Y = np.array([0, 2, -1, -3, 0, -1], np.int32)
SHIFT_X = np.array([1, 1, 1, -1, -8, 5], np.int32)
SHIFT_Y = np.array([31, 32, -1, 3, 40, 1], np.int32)
F32_SPECIAL = np.array([np.nan, 1e10, -1e10, 3.7, -3.7, np.inf, -0.0, 300.0], np.float32)

# (opcode, operands, result dtype, XLA's result)
EDGE_CASES = {
    "div_int": ("stablehlo.divide", [I32_X, I32_Y], np.int32,
                np.array([-1, -3, -2**31, -1, -1, -7], np.int32)),
    "rem_int": ("stablehlo.remainder", [I32_X, I32_Y], np.int32,
                np.array([7, -1, 0, 2, 0, 0], np.int32)),
    "shift_left": ("stablehlo.shift_left", [SHIFT_X, SHIFT_Y], np.int32,
                   np.array([-2**31, 0, 0, -8, 0, 10], np.int32)),
    "shift_right_arithmetic": ("stablehlo.shift_right_arithmetic", [SHIFT_X, SHIFT_Y],
                               np.int32, np.array([0, 0, 0, -1, -1, 2], np.int32)),
    "shift_right_logical": ("stablehlo.shift_right_logical", [SHIFT_X, SHIFT_Y], np.int32,
                            np.array([0, 0, 0, 2**29 - 1, 0, 2], np.int32)),
    "convert_f32_i32": ("stablehlo.convert", [F32_SPECIAL], np.int32,
                        np.array([0, 2**31 - 1, -2**31, 3, -3, 2**31 - 1, 0, 300], np.int32)),
    "convert_f32_u8": ("stablehlo.convert", [F32_SPECIAL], np.uint8,
                       np.array([0, 255, 0, 3, 0, 255, 0, 255], np.uint8)),
    "convert_i32_i8": ("stablehlo.convert", [np.array([300, -200, 127], np.int32)], np.int8,
                       np.array([44, 56, 127], np.int8)),
    "sign_zero": ("stablehlo.sign", [np.array([-0.0, 0.0, np.nan, -3.0], np.float32)],
                  np.float32, np.array([-0.0, 0.0, np.nan, -1.0], np.float32)),
    "max_signed_zero": ("stablehlo.maximum", [np.array([0.0, -0.0, np.nan], np.float32),
                                              np.array([-0.0, 0.0, 1.0], np.float32)],
                        np.float32, np.array([0.0, 0.0, np.nan], np.float32)),
    "min_signed_zero": ("stablehlo.minimum", [np.array([0.0, -0.0, 1.0], np.float32),
                                              np.array([-0.0, 0.0, np.nan], np.float32)],
                        np.float32, np.array([-0.0, -0.0, np.nan], np.float32)),
    "nextafter_f16": ("chlo.next_after", [np.array([0.0, -0.0, 1.0], np.float16),
                                          np.array([-0.0, 0.0, 2.0], np.float16)],
                      np.float16, np.array([-0.0, 0.0, 1.000977], np.float16)),
    "nextafter_bf16": ("chlo.next_after", [np.array([0.0, 1.0, -0.0], BF16),
                                           np.array([1.0, 2.0, -1.0], BF16)],
                       BF16, np.array([1, 16257, 32769], np.uint16).view(BF16)),
    "polygamma_poles": ("chlo.polygamma", [np.array([0, 1, 2, 3, 1, 1.5], np.float32),
                                           np.array([0, 0, -1, -2, np.inf, 2], np.float32)],
                        np.float32, np.array([np.nan, np.inf, np.nan, np.inf, np.nan, np.nan],
                                             np.float32)),
    "lgamma_neg_inf": ("chlo.lgamma", [np.array([-np.inf, np.inf], np.float32)], np.float32,
                       np.array([np.inf, np.inf], np.float32)),
    "erf_inv_zero": ("chlo.erf_inv", [np.array([-0.0, 1.0, 2.0], np.float32)], np.float32,
                     np.array([-0.0, np.inf, np.nan], np.float32)),
    "digamma_poles": ("chlo.digamma", [np.array([0.0, -1.0, np.inf], np.float32)], np.float32,
                      np.array([np.nan, np.nan, np.inf], np.float32)),
    "popcnt_int8": ("stablehlo.popcnt", [np.array([-1, 0, 5], np.int8)], np.int8,
                        np.array([8, 0, 2], np.int8)),
    "clz_int8": ("stablehlo.count_leading_zeros", [np.array([0, -1, 1], np.int8)], np.int8,
                 np.array([8, 0, 7], np.int8)),
    "abs_int_min": ("stablehlo.abs", [np.array([-2**31, -3], np.int32)], np.int32,
                    np.array([-2**31, 3], np.int32)),
    "round_afz": ("stablehlo.round_nearest_afz",
                  [np.array([2.5, -2.5, 0.5, -0.0, 0.49999997, -0.49999997], np.float32)],
                  np.float32, np.array([3.0, -3.0, 1.0, -0.0, 0.0, -0.0], np.float32)),
    "round_even": ("stablehlo.round_nearest_even",
                   [np.array([2.5, -2.5, 0.5, -1.5], np.float32)],
                   np.float32, np.array([2.0, -2.0, 0.0, -2.0], np.float32)),
    "pow_f32": ("stablehlo.power", [np.array([0.0, -2.0, 2.0], np.float32),
                                    np.array([0.0, 0.5, -1.0], np.float32)],
                np.float32, np.array([1.0, np.nan, 0.5], np.float32)),
}


def _assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values, NaN where NaN, and the same signs of zero."""
    assert (got.dtype, got.shape) == (np.dtype(want.dtype), want.shape)
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f" or got.dtype == BF16:
        wide = got.astype(np.float64), want.astype(np.float64)
        np.testing.assert_array_equal(np.signbit(wide[0]) | np.isnan(wide[0]),
                                      np.signbit(wide[1]) | np.isnan(wide[1]))


@pytest.mark.parametrize("backend", ["reference", "llvm"])
@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_kernel_edge_cases_match_xla(name: str, backend: str) -> None:
    opcode, args, dtype, want = EDGE_CASES[name]
    _assert_same_bits(_kernel(opcode, args, np.dtype(dtype), backend=backend), want)


@pytest.mark.needs_jax
def test_edge_case_values_are_what_xla_computes() -> None:
    """The expected values above, recomputed by real XLA from StableHLO text."""
    pytest.importorskip("jax")
    from tests import xla_check
    for name, (opcode, args, dtype, want) in EDGE_CASES.items():
        block = ir.Block([ir.Value(ir.TensorType(a.shape, a.dtype)) for a in args])
        b = ir.Builder(block)
        out = b.one(opcode, block.args, ir.TensorType(want.shape, dtype))
        b.ret([out], "func.return")
        module = ir.Module("m", [ir.Function("main", block, [out.type], "public",
                                             result_attrs=[{"jax.result_info": "result"}])])
        got, = xla_check.run(str(module), args)
        _assert_same_bits(np.asarray(got), want)


def _compare(x: np.ndarray, y: np.ndarray, direction: str, compare_type: str) -> np.ndarray:
    return _kernel("stablehlo.compare", [x, y], np.dtype(bool),
                   comparison_direction=ir.Enum("comparison_direction", direction),
                   compare_type=ir.Enum("comparison_type", compare_type))


def test_compare_totalorder_orders_signed_zeros_and_nans() -> None:
    values = np.array([-np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan], np.float32)
    values[0] = -np.abs(values[0])  # a NaN with the sign bit set sorts first
    x, y = np.repeat(values, len(values)), np.tile(values, len(values))
    rank = np.repeat(np.arange(len(values)), len(values)), np.tile(np.arange(len(values)),
                                                                   len(values))
    np.testing.assert_array_equal(_compare(x, y, "LT", "TOTALORDER"), rank[0] < rank[1])
    np.testing.assert_array_equal(_compare(x, y, "EQ", "TOTALORDER"), rank[0] == rank[1])
    # FLOAT comparisons: NaN is unordered and -0.0 == 0.0.
    np.testing.assert_array_equal(_compare(x, y, "EQ", "FLOAT"), x == y)


def test_compare_unsigned_and_bool() -> None:
    u = np.array([0, 200, 255], np.uint8)
    np.testing.assert_array_equal(_compare(u, u[::-1].copy(), "LT", "UNSIGNED"),
                                  [True, False, False])
    b = np.array([False, True])
    np.testing.assert_array_equal(_compare(b, b[::-1].copy(), "GT", "UNSIGNED"), [False, True])


def test_select_with_scalar_predicate_and_clamp_with_scalar_bounds() -> None:
    on_true, on_false = np.arange(3, dtype=np.float32), -np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(
        _kernel("stablehlo.select", [np.array(False), on_true, on_false], np.float32),
        on_false)
    x = np.array([np.nan, -1.0, 0.5, 3.0], np.float32)
    got = _kernel("stablehlo.clamp", [np.array(0.0, np.float32), x, np.array(2.0, np.float32)],
                  np.float32, (4,))
    np.testing.assert_array_equal(got, [np.nan, 0.0, 0.5, 2.0])


def test_bitcast_convert_changes_the_last_dimension() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    narrow = _kernel("stablehlo.bitcast_convert", [x], np.uint8, (2, 3, 4))
    np.testing.assert_array_equal(narrow, x.view(np.uint8).reshape(2, 3, 4))
    wide = _kernel("stablehlo.bitcast_convert", [narrow], np.float32, (2, 3))
    np.testing.assert_array_equal(wide, x)
    scalar = _kernel("stablehlo.bitcast_convert", [np.array(1.0, np.float32)], np.int32, ())
    assert scalar == 0x3F800000


def test_low_precision_math_is_computed_in_float32_and_rounded_once() -> None:
    x = np.array([0.1, 1.7, -2.3, 3.0], BF16)
    got = _kernel("stablehlo.exponential", [x], BF16)
    np.testing.assert_array_equal(got, np.exp(x.astype(np.float32)).astype(BF16))
    y = np.array([3.0, 0.7, 1.1, -5.0], np.float16)
    got = _kernel("stablehlo.divide", [y, y[::-1].copy()], np.float16)
    np.testing.assert_array_equal(got, (y.astype(np.float32) / y[::-1].astype(np.float32))
                                  .astype(np.float16))


def test_kernels_do_not_mutate_their_operands() -> None:
    x = np.array([1.5, -0.0, np.nan], np.float32)
    y = np.array([0.5, 2.0, 1.0], np.float32)
    before = x.copy(), y.copy()
    for opcode in ("stablehlo.add", "stablehlo.maximum", "stablehlo.remainder",
                   "chlo.next_after", "stablehlo.power"):
        _kernel(opcode, [x, y], np.float32)
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(y, before[1])


def test_eager_integer_pow_divides_once_as_the_lowering() -> None:
    """`x ** -2` is `1 / (x * x)`, as JAX's lowering computes it, not `(1/x) * (1/x)`."""
    x = np.array([3.0, 7.0, 0.1], np.float32)
    eager = np.asarray(justjax_lax.integer_pow(justjax.numpy.asarray(x), -2))
    np.testing.assert_array_equal(eager, np.float32(1) / (x * x))
    module = _lower(lambda v: justjax_lax.integer_pow(v, -2), [x])
    np.testing.assert_array_equal(_run(module, [x])[0], eager)


def test_make_complex_keeps_infinite_parts() -> None:
    out = kernels.make_complex(np.array([np.inf, 1.0], np.float32),
                               np.array([1.0, np.inf], np.float32))
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out.real, [np.inf, 1.0])
    np.testing.assert_array_equal(out.imag, [1.0, np.inf])


# ---------------------------------------------------------------------------------------------
# What real JAX 0.10.2 printed for the golden cases (`jax.jit(f).lower(*args).as_text()`).

GOLDEN.update({
    "add_scalar_broadcast": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<f32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}
""",
    "add_unit_dim_broadcast": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<1x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.add %0, %arg1 : tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
""",
    "bfloat16_transcendentals": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xbf16>) -> (tensor<3xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.exponential_minus_one %arg0 : tensor<3xbf16>
    %1 = stablehlo.log_plus_one %0 : tensor<3xbf16>
    %2 = stablehlo.tanh %1 : tensor<3xbf16>
    return %2 : tensor<3xbf16>
  }
}
""",
    "chlo_ops": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}, tensor<3xf32> {jax.result_info = "result[2]"}, tensor<3xf32> {jax.result_info = "result[3]"}, tensor<3xf32> {jax.result_info = "result[4]"}) {
    %0 = chlo.next_after %arg0, %arg0 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    %1 = chlo.lgamma %arg0 : tensor<3xf32> -> tensor<3xf32>
    %2 = chlo.erf_inv %arg0 : tensor<3xf32> -> tensor<3xf32>
    %3 = chlo.asinh %arg0 : tensor<3xf32> -> tensor<3xf32>
    %4 = chlo.polygamma %arg0, %arg0 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
}
""",
    "comparison_types": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<2xi1>, %arg1: tensor<2xi8>, %arg2: tensor<2xui32>, %arg3: tensor<2xcomplex<f32>>) -> (tensor<2xi1> {jax.result_info = "result[0]"}, tensor<2xi1> {jax.result_info = "result[1]"}, tensor<2xi1> {jax.result_info = "result[2]"}, tensor<2xi1> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.compare LT, %arg0, %arg0, UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
    %1 = stablehlo.compare GE, %arg1, %arg1, SIGNED : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi1>
    %2 = stablehlo.compare GT, %arg2, %arg2, UNSIGNED : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xi1>
    %3 = stablehlo.compare EQ, %arg3, %arg3, FLOAT : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>
    return %0, %1, %2, %3 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
  }
}
""",
    "complex_parts": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xcomplex<f32>>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}, tensor<3xf32> {jax.result_info = "result[2]"}, tensor<3xcomplex<f32>> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.abs %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %1 = stablehlo.real %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %2 = stablehlo.imag %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %3 = stablehlo.real %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %4 = stablehlo.imag %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %5 = stablehlo.complex %3, %4 : tensor<3xcomplex<f32>>
    return %0, %1, %2, %5 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xcomplex<f32>>
  }
}
""",
    "conj_real": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xcomplex<f32>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.complex %arg0, %0 : tensor<3xcomplex<f32>>
    return %1 : tensor<3xcomplex<f32>>
  }
}
""",
    "exp2": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.693147182> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<3xf32>
    %2 = stablehlo.exponential %1 : tensor<3xf32>
    return %2 : tensor<3xf32>
  }
}
""",
    "integer_ops": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xi32>, %arg1: tensor<3xi32>) -> (tensor<3xi32> {jax.result_info = "result[0]"}, tensor<3xi32> {jax.result_info = "result[1]"}, tensor<3xi32> {jax.result_info = "result[2]"}, tensor<3xi32> {jax.result_info = "result[3]"}, tensor<3xi32> {jax.result_info = "result[4]"}, tensor<3xi32> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<3xi32>
    %1 = stablehlo.remainder %arg0, %arg1 : tensor<3xi32>
    %2 = stablehlo.shift_right_logical %arg0, %arg1 : tensor<3xi32>
    %3 = stablehlo.popcnt %arg0 : tensor<3xi32>
    %4 = stablehlo.count_leading_zeros %arg0 : tensor<3xi32>
    %5 = stablehlo.not %arg0 : tensor<3xi32>
    return %0, %1, %2, %3, %4, %5 : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
  }
}
""",
    "integer_pow": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}, tensor<3xf32> {jax.result_info = "result[2]"}, tensor<3xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<3xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<3xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<3xf32>
    %3 = stablehlo.multiply %arg0, %arg0 : tensor<3xf32>
    %4 = stablehlo.multiply %arg0, %3 : tensor<3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %6 = stablehlo.divide %5, %4 : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %8 = stablehlo.divide %7, %arg0 : tensor<3xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3xf32>
    return %2, %6, %8, %9 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
}
""",
    "integer_pow_scalar": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<f32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.divide %cst, %0 : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    return %1, %cst_0 : tensor<f32>, tensor<f32>
  }
}
""",
    "logistic_scalar": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.negate %arg0 : tensor<f32>
    %1 = stablehlo.exponential %0 : tensor<f32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.add %cst, %1 : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.divide %cst_0, %2 : tensor<f32>
    return %3 : tensor<f32>
  }
}
""",
    "max_complex": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xcomplex<f32>>, %arg1: tensor<3xcomplex<f32>>) -> (tensor<3xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.real %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %1 = stablehlo.real %arg1 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %2 = stablehlo.compare EQ, %0, %1, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %3 = stablehlo.compare GT, %0, %1, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %4 = stablehlo.imag %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %5 = stablehlo.imag %arg1 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %6 = stablehlo.compare GT, %4, %5, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %7 = stablehlo.select %2, %6, %3 : tensor<3xi1>, tensor<3xi1>
    %8 = stablehlo.select %7, %arg0, %arg1 : tensor<3xi1>, tensor<3xcomplex<f32>>
    return %8 : tensor<3xcomplex<f32>>
  }
}
""",
    "pow_int_exponent": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<i32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %2 = stablehlo.power %arg0, %1 : tensor<3xf32>
    return %2 : tensor<3xf32>
  }
}
""",
    "reduce_precision": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
""",
    "round_to_nearest_even": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
""",
    "sign_unsigned": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xui8>) -> (tensor<3xui8> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<ui8>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<3xui8>
    %1 = stablehlo.compare EQ, %arg0, %0, UNSIGNED : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
    %c_0 = stablehlo.constant dense<0> : tensor<ui8>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui8>) -> tensor<3xui8>
    %c_1 = stablehlo.constant dense<1> : tensor<ui8>
    %3 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui8>) -> tensor<3xui8>
    %4 = stablehlo.select %1, %2, %3 : tensor<3xi1>, tensor<3xui8>
    return %4 : tensor<3xui8>
  }
}
""",
    "sin_complex": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xcomplex<f32>>) -> (tensor<3xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.real %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %1 = stablehlo.imag %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.compare EQ, %0, %2, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %4 = stablehlo.sine %0 : tensor<3xf32>
    %5 = stablehlo.cosine %0 : tensor<3xf32>
    %6 = stablehlo.exponential_minus_one %1 : tensor<3xf32>
    %7 = stablehlo.negate %1 : tensor<3xf32>
    %8 = stablehlo.exponential_minus_one %7 : tensor<3xf32>
    %9 = stablehlo.subtract %6, %8 : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %11 = stablehlo.divide %9, %10 : tensor<3xf32>
    %12 = stablehlo.add %6, %8 : tensor<3xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %14 = stablehlo.add %12, %13 : tensor<3xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %16 = stablehlo.divide %14, %15 : tensor<3xf32>
    %17 = stablehlo.multiply %4, %16 : tensor<3xf32>
    %18 = stablehlo.multiply %5, %11 : tensor<3xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %20 = stablehlo.complex %19, %18 : tensor<3xcomplex<f32>>
    %21 = stablehlo.complex %17, %18 : tensor<3xcomplex<f32>>
    %22 = stablehlo.select %3, %20, %21 : tensor<3xi1>, tensor<3xcomplex<f32>>
    return %22 : tensor<3xcomplex<f32>>
  }
}
""",
    "square": _MODULE_HEADER + """\
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xi32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xi32> {jax.result_info = "result[1]"}) {
    %0 = chlo.square %arg0 : tensor<3xf32> -> tensor<3xf32>
    %1 = stablehlo.multiply %arg1, %arg1 : tensor<3xi32>
    return %0, %1 : tensor<3xf32>, tensor<3xi32>
  }
}
""",
})
