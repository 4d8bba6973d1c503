"""Lowering of the structural, joining, slicing, dot and convolution primitives, and the
reference backend's kernels for them (`broadcast_in_dim`, `reshape`, `transpose`, `iota`,
`concatenate`, `slice`, `dynamic_slice`, `dynamic_update_slice`, `pad`, `reverse`, `gather`,
`scatter`, `dot_general`, `convolution`).

Every op record of those primitives (and of the jax.numpy functions built on them) is lowered
to StableHLO and run by the reference backend, which must give the eager result; golden texts
(read off real JAX 0.10.2) pin down what the lowering emits for representative cases; and
(needs_jax) the lowered texts of edge cases run on real XLA with the reference's results.
"""
from __future__ import annotations


import numpy as np
import pytest

import justjax
from justjax._src.hlo import ir
from tests.harness import (BF16, OpRecord, assert_close, golden_cases, golden_jaxpr_tests,
                           lower_to_module, record_cases, record_rng, run_reference)
from tests.records import jnp_shape, jnp_tensor, lax_dot_conv, lax_slicing

RECORDS = lax_slicing.RECORDS + lax_dot_conv.RECORDS + jnp_shape.RECORDS + jnp_tensor.RECORDS
CASES = record_cases(RECORDS)

# What this module's rules and kernels cover: a record that needs any other primitive or
# opcode is skipped while that one has no rule or kernel (they are other helpers' work).
OWN_PRIMITIVES = frozenset({
    "convert_element_type", "bitcast_convert_type", "broadcast_in_dim", "reshape", "squeeze",
    "transpose", "iota", "select_n", "clamp", "concatenate", "copy", "stop_gradient", "tile",
    "stack", "split", "unstack", "slice", "dynamic_slice", "dynamic_update_slice", "pad", "rev",
    "gather", "scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min",
    "scatter-max", "dot_general", "conv_general_dilated"})
OWN_OPCODES = frozenset(f"stablehlo.{name}" for name in (
    "broadcast_in_dim", "reshape", "transpose", "iota", "concatenate", "slice", "dynamic_slice",
    "dynamic_update_slice", "pad", "reverse", "gather", "scatter", "dot_general",
    "convolution"))


def _rng(record: OpRecord, shapes: tuple, dtypes: tuple) -> np.random.Generator:
    return record_rng(record, shapes, dtypes, salt="lower")


_lower = lower_to_module
_run = run_reference


def _skip_if_others_missing(error: NotImplementedError) -> None:
    """Skips when another helper's rule or kernel is missing; fails when one of ours is."""
    message = str(error)
    if any(f"'{name}'" in message for name in OWN_PRIMITIVES) or \
            any(message.endswith(opcode) for opcode in OWN_OPCODES):
        raise error
    pytest.skip(f"not lowered yet: {message}")


@pytest.mark.parametrize("record,shapes,dtypes", CASES)
def test_reference_backend_matches_eager(record: OpRecord, shapes: tuple, dtypes: tuple
                                         ) -> None:
    args = [justjax.numpy.asarray(a)
            for a in record.make(_rng(record, shapes, dtypes), shapes, dtypes)]
    eager = record.fun(*args, **record.static)
    eagers = list(eager) if isinstance(eager, (tuple, list)) else [eager]
    try:
        results = _run(_lower(lambda *xs: record.fun(*xs, **record.static), *args), *args)
    except NotImplementedError as error:
        _skip_if_others_missing(error)
    assert len(results) == len(eagers)
    for got, want in zip(results, eagers, strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (got.dtype, want.aval)
        tol = 0 if got.dtype.kind in "biu" else record.tolerance(got.dtype)
        assert_close(got, np.asarray(want), tol, context=record.name)


# ---------------------------------------------------------------------------------------------
# Kernels on their own: StableHLO semantics the lowerings never exercise.

def _op_module(opcode: str, args: list[np.ndarray], result: ir.TensorType,
               regions: tuple = (), **attributes) -> ir.Module:
    """A module whose main applies one op to its arguments."""
    block = ir.Block([ir.Value(ir.TensorType(a.shape, a.dtype)) for a in args])
    b = ir.Builder(block)
    out = b.op(opcode, block.args, [result], attributes, list(regions)).result
    b.ret([out], "func.return")
    return ir.Module("m", [ir.Function("main", block, [result], "public")])


def test_gather_index_vector_dim_in_the_middle() -> None:
    operand = np.arange(20, dtype=np.float32).reshape(4, 5)
    indices = np.array([[[1, 9], [2, -3]]], np.int32)  # index vectors along dim 1
    dn = ir.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1),
                                   operand_batching_dims=(), start_indices_batching_dims=(),
                                   start_index_map=(0, 1), index_vector_dim=1)
    module = _op_module("stablehlo.gather", [operand, indices],
                        ir.TensorType((1, 2), np.float32), dimension_numbers=dn,
                        slice_sizes=(1, 1), indices_are_sorted=False)
    # Columns (1, 2) and (9, -3) of the index array, clamped: (1, 2) and (3, 0).
    np.testing.assert_array_equal(_run(module, operand, indices)[0], [[7.0, 15.0]])


def test_scatter_runs_a_general_region_per_element_in_order() -> None:
    operand = np.zeros(3, np.float32)
    indices = np.array([[0], [0], [2], [5]], np.int32)  # the last one is out of bounds
    updates = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    scalar = ir.TensorType((), np.float32)
    region, rb = ir.new_region([scalar, scalar])
    current, update = region.block.args
    doubled = rb.one("stablehlo.add", [current, current], scalar)
    rb.ret([rb.one("stablehlo.add", [doubled, update], scalar)])
    dn = ir.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                    input_batching_dims=(), scatter_indices_batching_dims=(),
                                    scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    module = _op_module("stablehlo.scatter", [operand, indices, updates],
                        ir.TensorType((3,), np.float32), (region,),
                        scatter_dimension_numbers=dn, indices_are_sorted=False,
                        unique_indices=False)
    # Element 0: 2 * (2 * 0 + 1) + 2 = 4; element 2: 2 * 0 + 3.
    np.testing.assert_array_equal(_run(module, operand, indices, updates)[0], [4.0, 0.0, 3.0])


def test_variadic_scatter_updates_every_input() -> None:
    values = np.array([5.0, 1.0, 2.0], np.float32)
    counts = np.zeros(3, np.int32)
    indices = np.array([[1], [1], [0]], np.int32)
    new_values = np.array([7.0, 3.0, 9.0], np.float32)
    ones = np.ones(3, np.int32)
    f32, i32 = ir.TensorType((), np.float32), ir.TensorType((), np.int32)
    region, rb = ir.new_region([f32, i32, f32, i32])
    value, count, new_value, one = region.block.args
    rb.ret([rb.one("stablehlo.maximum", [value, new_value], f32),
            rb.one("stablehlo.add", [count, one], i32)])
    dn = ir.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                    input_batching_dims=(), scatter_indices_batching_dims=(),
                                    scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    block = ir.Block([ir.Value(ir.TensorType(a.shape, a.dtype))
                      for a in (values, counts, indices, new_values, ones)])
    b = ir.Builder(block)
    outs = b.op("stablehlo.scatter", block.args, [ir.TensorType((3,), np.float32),
                                                  ir.TensorType((3,), np.int32)],
                {"scatter_dimension_numbers": dn, "indices_are_sorted": False,
                 "unique_indices": False}, [region]).results
    b.ret(outs, "func.return")
    module = ir.Module("m", [ir.Function("main", block, [v.type for v in outs], "public")])
    got_values, got_counts = _run(module, values, counts, indices, new_values, ones)
    np.testing.assert_array_equal(got_values, [9.0, 7.0, 2.0])
    np.testing.assert_array_equal(got_counts, [1, 2, 0])


def test_convolution_window_reversal_flips_the_kernel() -> None:
    lhs = np.arange(6, dtype=np.float32).reshape(1, 1, 6)
    rhs = np.array([1.0, 10.0, 100.0], np.float32).reshape(1, 1, 3)
    dn = ir.ConvDimensionNumbers(0, 1, (2,), 1, 0, (2,), 0, 1, (2,))
    module = _op_module("stablehlo.convolution", [lhs, rhs], ir.TensorType((1, 1, 4), np.float32),
                        window_strides=(1,), padding=np.zeros((1, 2), np.int64),
                        lhs_dilation=(1,), rhs_dilation=(1,), window_reversal=(True,),
                        dimension_numbers=dn, feature_group_count=1, batch_group_count=1)
    expected = [100 * i + 10 * (i + 1) + (i + 2) for i in range(4)]
    np.testing.assert_array_equal(_run(module, lhs, rhs)[0].ravel(), expected)


def test_kernels_do_not_mutate_their_inputs() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.array([[0], [0]], np.int32)
    before = x.copy()
    _run(_lower(lambda x, i: x.at[i[:, 0]].add(1.0), x, indices), x, indices)
    _run(_lower(lambda x: justjax.lax.dynamic_update_slice(x, x[:1], (1, 0)), x), x)
    _run(_lower(lambda x: justjax.lax.pad(x, 0.0, ((1, 1, 1), (0, 0, 0))), x), x)
    np.testing.assert_array_equal(x, before)


# ---------------------------------------------------------------------------------------------
# Real XLA (needs_jax): edge cases of every op kind lowered here. justjax's StableHLO must parse
# and run on XLA CPU with the reference backend's results; and JAX's own lowering of the same
# function, run by the reference backend, must give XLA's results too (the kernels follow
# XLA's semantics, not only this module's lowerings).

def _ints(low, high, *shape, dtype=np.int32):
    return np.random.default_rng(abs(hash((low, high, shape))) % 2**32).integers(
        low, high + 1, shape).astype(dtype)


def _floats(*shape, dtype=np.float32):
    return np.random.default_rng(sum(shape) + 7).normal(size=shape).astype(dtype)


def xla_dynamic_slices(jax, lax, jnp):
    def f(x, i, j, u):
        return (lax.dynamic_slice(x, (i, j), (2, 3)), lax.dynamic_slice(x, (j, i), (4, 1)),
                lax.dynamic_slice_p.bind(x, u, u, slice_sizes=(2, 2)),
                lax.dynamic_update_slice(x, -x[:2, :3], (j, i)))
    return f, (_floats(4, 5), np.int32(3), np.int32(-9), np.uint8(200))


def xla_pad_rev_slice(jax, lax, jnp):
    def f(x, b):
        return (lax.pad(x, np.int32(-1), ((2, -1, 2), (-2, 1, 0))),
                lax.pad(b, b[0, 0], ((0, 0, 1), (1, 1, 0))), lax.rev(b, (0, 1)),
                lax.slice(x, (0, 1), (3, 4), (2, 2)))
    return f, (_ints(-9, 9, 3, 4), _floats(2, 3).astype(BF16))


def xla_structural(jax, lax, jnp):
    def f(x, z, which):
        return (lax.broadcast_in_dim(x, (4, 3, 2), (2, 0)), lax.transpose(x, (1, 0)),
                lax.reshape(x, (4, 2), (1, 0)), lax.broadcasted_iota(BF16, (2, 3), 1),
                lax.concatenate([x > 0, x < 0], 1), lax.convert_element_type(x * 1e10, np.int32),
                lax.convert_element_type(x, np.bool_), lax.convert_element_type(z, np.float32),
                lax.bitcast_convert_type(x, np.uint8), lax.select_n(which, x, -x, x + 1),
                lax.clamp(-0.5, x, 0.5), lax.tile(x, (1, 2)), lax.stack([x, x], 2))
    x = _floats(2, 4)
    x[0, 0] = np.nan
    return f, (x, np.array([1 + 2j, -3j], np.complex64), _ints(-2, 5, 2, 4))


def _gather_dn(lax):
    return lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))


def xla_gathers(jax, lax, jnp):
    points = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1),
                                        start_index_map=(0, 1))
    windows = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                         start_index_map=(0, 1))
    batched = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                         start_index_map=(1,), operand_batching_dims=(0,),
                                         start_indices_batching_dims=(0,))

    def f(x, rows, pts, u8):
        return (lax.gather(x, rows, _gather_dn(lax), (1, 5), mode="clip"),
                lax.gather(x, rows, _gather_dn(lax), (1, 5), mode="fill"),
                lax.gather(x, pts, points, (1, 1), mode="fill", fill_value=7.0),
                lax.gather(x, pts, windows, (2, 3), mode="promise_in_bounds"),
                lax.gather(x, pts, windows, (2, 3), mode="fill"),
                lax.gather(x, rows[:4], batched, (1, 1), mode="clip"),
                lax.gather(x, u8, _gather_dn(lax), (1, 5), mode="fill"))
    return f, (_floats(4, 5), _ints(-3, 6, 6, 1), _ints(-2, 5, 3, 2, 2),
               np.array([[0], [3], [4], [255]], np.uint8))


def xla_scatters(jax, lax, jnp):
    rows = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
    windows = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                          scatter_dims_to_operand_dims=(0, 1))
    batched = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,),
                                          scatter_dims_to_operand_dims=(1,),
                                          operand_batching_dims=(0,),
                                          scatter_indices_batching_dims=(0,))

    def f(x, idx, u, pts, w, n):
        return (lax.scatter_add(x, idx, u, rows), lax.scatter_add(x, idx, u, rows, mode="clip"),
                lax.scatter_mul(x, idx, u, rows, mode="promise_in_bounds"),
                lax.scatter_min(n, idx, n[:6] * 3, rows), lax.scatter_max(n, idx, -n[:6], rows),
                lax.scatter_add(x, pts, w, windows), lax.scatter_sub(x, pts, w, windows,
                                                                     mode="clip"),
                lax.scatter(x, idx[:4], u[:4, :1].reshape(4), batched),
                lax.scatter_apply(x, idx, jnp.sin, rows, update_shape=(6, 5)))
    return f, (_floats(4, 5), _ints(-2, 5, 6, 1), _floats(6, 5), _ints(-1, 4, 3, 2),
               _floats(3, 2, 3), _ints(-9, 9, 7, 5))


def xla_scatter_duplicates(jax, lax, jnp):
    rows = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))

    def f(x, idx, u):
        return lax.scatter(x, idx, u, rows, unique_indices=False)
    # Each row is written once: XLA leaves the order of duplicates unspecified.
    return f, (_floats(4, 3), np.array([[3], [0], [7], [2], [-1]], np.int32), _floats(5, 3))


def xla_dots(jax, lax, jnp):
    def f(a, b, i8, bools, h, big):
        return (lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                lax.dot(i8, i8.T), lax.dot(i8, i8.T, preferred_element_type=np.int32),
                lax.dot(bools, bools.T), lax.dot(i8, a[0].T[:4]),
                lax.dot(h, h.T, preferred_element_type=np.float32), lax.dot(h, h.T),
                lax.dot(big, big.T, preferred_element_type=np.int32),
                lax.dot(a[0], b[0], precision=("highest", "default")))
    return f, (_floats(2, 3, 4), _floats(2, 4, 5), _ints(-128, 127, 3, 4, dtype=np.int8),
               _ints(0, 1, 2, 3).astype(bool), _floats(2, 8, dtype=BF16),
               _floats(2, 3) * 1e9)


def xla_dot_algorithms(jax, lax, jnp):
    def f(a, b, h):
        return (lax.dot(a, b, precision="F32_F32_F32"), lax.dot(a, b, precision="BF16_BF16_F32"),
                lax.dot(h, h.T, precision="F16_F16_F16"))
    return f, (_floats(3, 4), _floats(4, 5), _floats(2, 8, dtype=np.float16))


def xla_convolutions(jax, lax, jnp):
    def f(x, w, g, i8, k8, h):
        return (lax.conv_general_dilated(x, w, (2, 1), ((1, -1), (2, 0)), (1, 2), (2, 1),
                                         ("NCHW", "OIHW", "NHWC")),
                lax.conv_general_dilated(x, g, (1, 1), "SAME", feature_group_count=3),
                lax.conv_general_dilated(x[:2], w, (1, 1), "VALID", batch_group_count=2),
                lax.conv_general_dilated(i8, k8, (1,), "VALID", preferred_element_type=np.int32),
                lax.conv_general_dilated(i8, k8, (2,), ((1, 1),)),
                lax.conv_transpose(h, w[:, :, :2, :2].astype(BF16), (2, 2), "SAME",
                                   dimension_numbers=("NCHW", "OIHW", "NCHW")))
    return f, (_floats(2, 3, 6, 6), _floats(4, 3, 3, 3), _floats(6, 1, 3, 3),
               _ints(-9, 9, 2, 3, 7, dtype=np.int8), _ints(-9, 9, 4, 3, 3, dtype=np.int8),
               _floats(1, 3, 4, 4, dtype=BF16))


XLA_CASES = {name[len("xla_"):]: fun for name, fun in sorted(globals().items())
             if name.startswith("xla_")}


def _assert_same(got, want, context) -> None:
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape), context
        tol = 0 if w.dtype.kind in "biu" else {BF16: 2e-2, np.dtype(np.float16): 2e-3}.get(
            w.dtype, 2e-5)
        assert_close(g, w, tol, context=context)


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(XLA_CASES))
def test_lowering_runs_on_xla_like_the_reference_backend(name: str) -> None:
    pytest.importorskip("jax")
    from tests import xla_check
    fun, args = XLA_CASES[name](justjax, justjax.lax, justjax.numpy)
    text = justjax.jit(fun).lower(*args).as_text()
    xla_check.parse(text)
    _assert_same(_run(_lower(fun, *args), *args), xla_check.run(text, args), name)


# Cases whose JAX text `xla_check.to_ir` cannot read back.
_NOT_READABLE = {"dot_algorithms": "#stablehlo.dot_algorithm attributes"}


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(set(XLA_CASES) - set(_NOT_READABLE)))
def test_reference_backend_runs_jax_lowering_like_xla(name: str) -> None:
    jax = pytest.importorskip("jax")
    from tests import xla_check
    fun, args = XLA_CASES[name](jax, jax.lax, jax.numpy)
    text = jax.jit(fun).lower(*args).as_text()
    _assert_same(_run(xla_check.to_ir(text), *args), xla_check.run(text, args), name)


# ---------------------------------------------------------------------------------------------
# Golden texts: what `jit(f).lower(*args).as_text()` prints, read off real JAX 0.10.2. Each
# case takes (jax, lax, jnp) so the needs_jax test can check the texts against real JAX.

def _f32(*shape):
    return np.zeros(shape, np.float32)


def case_broadcast_transpose_reshape(jax, lax, jnp):
    def f(x):
        y = lax.broadcast_in_dim(x, (4, 2, 3), (1, 2))
        return lax.reshape(lax.transpose(y, (2, 0, 1)), (3, 8), (1, 0, 2))
    return jax.jit(f).lower(_f32(2, 3)).as_text()


def case_iota_concat_squeeze(jax, lax, jnp):
    def f(x):
        i = lax.broadcasted_iota(np.int32, (1, 3), 1)
        return lax.squeeze(lax.concatenate([i, i], 0)[:1], (0,)), lax.stop_gradient(x)
    return jax.jit(f).lower(_f32(2)).as_text()


def case_convert(jax, lax, jnp):
    def f(x, z):
        return (lax.convert_element_type(x, np.bool_), lax.convert_element_type(x, np.int32),
                lax.convert_element_type(z, np.float32), lax.bitcast_convert_type(x, np.int8))
    return jax.jit(f).lower(_f32(3), np.zeros(3, np.complex64)).as_text()


def case_select_n_clamp(jax, lax, jnp):
    def f(which, x):
        return lax.select_n(which, x, x + 1, x + 2), lax.clamp(0.0, x, 1.0)
    return jax.jit(f).lower(np.zeros(3, np.int32), _f32(3)).as_text()


def case_slicing(jax, lax, jnp):
    def f(x, i):
        a = lax.slice(x, (1, 0), (4, 5), (2, 2))
        b = lax.dynamic_slice(x, (i, 2), (2, 2))
        c = lax.dynamic_update_slice(x, b, (i, i))
        return a, c, lax.pad(x, 0.0, ((1, -1, 1), (0, 2, 0))), lax.rev(x, (0,))
    return jax.jit(f).lower(_f32(4, 5), np.int32(1)).as_text()


def case_joining(jax, lax, jnp):
    def f(x):
        return lax.tile(x, (2, 1)), lax.split(x, (1, 2), 1), lax.stack([x, x], 1)
    return jax.jit(f).lower(_f32(2, 3)).as_text()


def case_gather_modes(jax, lax, jnp):
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))

    def f(x, i):
        return (lax.gather(x, i, dn, (1, 5), mode="clip"),
                lax.gather(x, i, dn, (1, 5), mode="fill"))
    return jax.jit(f).lower(_f32(4, 5), np.zeros((3, 1), np.int32)).as_text()


def case_gather_batching_dims(jax, lax, jnp):
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))

    def f(x, i):
        return lax.gather(x, i, dn, (1, 1), mode="promise_in_bounds")
    return jax.jit(f).lower(_f32(4, 5), np.zeros((4, 1), np.int32)).as_text()


def case_scatters(jax, lax, jnp):
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))

    def f(x, i, u):
        return (lax.scatter(x, i, u, dn), lax.scatter_add(x, i, u, dn, mode="clip"),
                lax.scatter_mul(x, i, u, dn))
    return jax.jit(f).lower(_f32(4, 5), np.zeros((3, 1), np.int32), _f32(3, 5)).as_text()


def case_dot_general(jax, lax, jnp):
    def f(x, y, b, i):
        return (lax.dot(x, y, precision=("highest", "high")),
                lax.dot_general(b, b, (((2,), (1,)), ((0,), (0,)))),
                lax.dot(i, y), lax.dot(i, i.T, preferred_element_type=np.int32))
    return jax.jit(f).lower(_f32(2, 3), _f32(3, 4), _f32(5, 3, 3),
                            np.zeros((2, 3), np.int8)).as_text()


def case_convolution(jax, lax, jnp):
    def f(x, w):
        return lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (2, -1)), (1, 2), (2, 1),
                                        ("NCHW", "OIHW", "NHWC"), precision="highest")
    return jax.jit(f).lower(_f32(2, 3, 8, 8), _f32(4, 3, 3, 3)).as_text()


def case_grouped_convolution(jax, lax, jnp):
    def f(x, w):
        return lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=3)
    return jax.jit(f).lower(_f32(2, 6, 5), _f32(6, 2, 3)).as_text()


CASES_GOLDEN = golden_cases(globals())
GOLDEN = {  # noqa: E501 (MLIR lines are long)
    "broadcast_transpose_reshape": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<3x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
    %1 = stablehlo.transpose %0, dims = [2, 0, 1] : (tensor<4x2x3xf32>) -> tensor<3x4x2xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0, 2] : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
    %3 = stablehlo.reshape %2 : (tensor<4x3x2xf32>) -> tensor<3x8xf32>
    return %3 : tensor<3x8xf32>
  }
}
""",
    "convert": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xcomplex<f32>>) -> (tensor<3xi1> {jax.result_info = "result[0]"}, tensor<3xi32> {jax.result_info = "result[1]"}, tensor<3xf32> {jax.result_info = "result[2]"}, tensor<3x4xi8> {jax.result_info = "result[3]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.compare NE, %arg0, %0, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %2 = stablehlo.convert %1 : tensor<3xi1>
    %3 = stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>
    %4 = stablehlo.real %arg1 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %5 = stablehlo.convert %4 : tensor<3xf32>
    %6 = stablehlo.bitcast_convert %arg0 : (tensor<3xf32>) -> tensor<3x4xi8>
    return %2, %3, %5, %6 : tensor<3xi1>, tensor<3xi32>, tensor<3xf32>, tensor<3x4xi8>
  }
}
""",
    "convolution": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x8x8xf32>, %arg1: tensor<4x3x3x3xf32>) -> (tensor<2x3x14x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 0], [2, -1]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x14x4xf32>
    return %0 : tensor<2x3x14x4xf32>
  }
}
""",
    "dot_general": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<5x3x3xf32>, %arg3: tensor<2x3xi8>) -> (tensor<2x4xf32> {jax.result_info = "result[0]"}, tensor<5x3x3xf32> {jax.result_info = "result[1]"}, tensor<2x4xf32> {jax.result_info = "result[2]"}, tensor<2x2xi32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [HIGHEST, HIGH] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.dot_general %arg2, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<5x3x3xf32>, tensor<5x3x3xf32>) -> tensor<5x3x3xf32>
    %2 = stablehlo.convert %arg3 : (tensor<2x3xi8>) -> tensor<2x3xf32>
    %3 = stablehlo.convert %arg1 : tensor<3x4xf32>
    %4 = stablehlo.dot_general %2, %3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %5 = stablehlo.transpose %arg3, dims = [1, 0] : (tensor<2x3xi8>) -> tensor<3x2xi8>
    %6 = stablehlo.dot_general %arg3, %5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi32>
    return %0, %1, %4, %6 : tensor<2x4xf32>, tensor<5x3x3xf32>, tensor<2x4xf32>, tensor<2x2xi32>
  }
}
""",
    "gather_batching_dims": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>, %arg1: tensor<4x1xi32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x5xf32>, tensor<4x1xi32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
""",
    "gather_modes": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>, %arg1: tensor<3x1xi32>) -> (tensor<3x5xf32> {jax.result_info = "result[0]"}, tensor<3x5xf32> {jax.result_info = "result[1]"}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
    %c = stablehlo.constant dense<3> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3x1xi32>
    %2 = stablehlo.compare GE, %arg1, %1, SIGNED : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %3 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x1xi32>) -> tensor<3x1xi32>
    %5 = stablehlo.compare LE, %arg1, %4, SIGNED : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %6 = stablehlo.and %2, %5 : tensor<3x1xi1>
    %c_1 = stablehlo.constant dense<true> : tensor<i1>
    %7 = stablehlo.reduce(%6 init: %c_1) applies stablehlo.and across dimensions = [1] : (tensor<3x1xi1>, tensor<i1>) -> tensor<3xi1>
    %8 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<3xi1>) -> tensor<3x5xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %11 = stablehlo.select %9, %8, %10 : tensor<3x5xi1>, tensor<3x5xf32>
    return %0, %11 : tensor<3x5xf32>, tensor<3x5xf32>
  }
}
""",
    "grouped_convolution": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x6x5xf32>, %arg1: tensor<6x2x3xf32>) -> (tensor<2x6x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 3 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x5xf32>, tensor<6x2x3xf32>) -> tensor<2x6x3xf32>
    return %0 : tensor<2x6x3xf32>
  }
}
""",
    "iota_concat_squeeze": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<3xi32> {jax.result_info = "result[0]"}, tensor<2xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.iota dim = 1 : tensor<1x3xi32>
    %1 = stablehlo.concatenate %0, %0, dim = 0 : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
    %2 = stablehlo.slice %1 [0:1, 0:3] : (tensor<2x3xi32>) -> tensor<1x3xi32>
    %3 = stablehlo.reshape %2 : (tensor<1x3xi32>) -> tensor<3xi32>
    return %3, %arg0 : tensor<3xi32>, tensor<2xf32>
  }
}
""",
    "joining": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<4x3xf32> {jax.result_info = "result[0]"}, tensor<2x1xf32> {jax.result_info = "result[1][0]"}, tensor<2x2xf32> {jax.result_info = "result[1][1]"}, tensor<2x2x3xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<1x2x1x3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2, 3] : (tensor<1x2x1x3xf32>) -> tensor<2x2x1x3xf32>
    %2 = stablehlo.reshape %1 : (tensor<2x2x1x3xf32>) -> tensor<4x3xf32>
    %3 = stablehlo.slice %arg0 [0:2, 0:1] : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %4 = stablehlo.slice %arg0 [0:2, 1:3] : (tensor<2x3xf32>) -> tensor<2x2xf32>
    %5 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
    %6 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
    %7 = stablehlo.concatenate %5, %6, dim = 1 : (tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x2x3xf32>
    return %2, %3, %4, %7 : tensor<4x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x2x3xf32>
  }
}
""",
    "scatters": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>, %arg1: tensor<3x1xi32>, %arg2: tensor<3x5xf32>) -> (tensor<4x5xf32> {jax.result_info = "result[0]"}, tensor<4x5xf32> {jax.result_info = "result[1]"}, tensor<4x5xf32> {jax.result_info = "result[2]"}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      stablehlo.return %arg4 : tensor<f32>
    }) : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    %c = stablehlo.constant dense<3> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<2147483647> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.minimum %c, %1 : tensor<1xi32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<1xi32>) -> tensor<3x1xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3x1xi32>
    %5 = stablehlo.clamp %4, %arg1, %3 : tensor<3x1xi32>
    %6 = "stablehlo.scatter"(%arg0, %5, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %8 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %8 : tensor<f32>
    }) : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    %7 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %8 = stablehlo.multiply %arg3, %arg4 : tensor<f32>
      stablehlo.return %8 : tensor<f32>
    }) : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    return %0, %6, %7 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
  }
}
""",
    "select_n_clamp": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xi32>, %arg1: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.add %arg1, %0 : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.add %arg1, %2 : tensor<3xf32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %5 = stablehlo.compare LT, %arg0, %4, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %7 = stablehlo.compare LT, %arg0, %6, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %8 = stablehlo.select %7, %1, %3 : tensor<3xi1>, tensor<3xf32>
    %9 = stablehlo.select %5, %arg1, %8 : tensor<3xi1>, tensor<3xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %11 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %12 = stablehlo.clamp %10, %arg1, %11 : tensor<3xf32>
    return %9, %12 : tensor<3xf32>, tensor<3xf32>
  }
}
""",
    "slicing": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>, %arg1: tensor<i32>) -> (tensor<2x3xf32> {jax.result_info = "result[0]"}, tensor<4x5xf32> {jax.result_info = "result[1]"}, tensor<7x7xf32> {jax.result_info = "result[2]"}, tensor<4x5xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.slice %arg0 [1:4:2, 0:5:2] : (tensor<4x5xf32>) -> tensor<2x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %2 = stablehlo.add %arg1, %c_0 : tensor<i32>
    %3 = stablehlo.select %1, %2, %arg1 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %4 = stablehlo.dynamic_slice %arg0, %3, %c_1, sizes = [2, 2] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %arg1, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<4> : tensor<i32>
    %6 = stablehlo.add %arg1, %c_3 : tensor<i32>
    %7 = stablehlo.select %5, %6, %arg1 : tensor<i1>, tensor<i32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.compare LT, %arg1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_5 = stablehlo.constant dense<5> : tensor<i32>
    %9 = stablehlo.add %arg1, %c_5 : tensor<i32>
    %10 = stablehlo.select %8, %9, %arg1 : tensor<i1>, tensor<i32>
    %11 = stablehlo.dynamic_update_slice %arg0, %4, %7, %10 : (tensor<4x5xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.pad %arg0, %cst, low = [1, 0], high = [-1, 2], interior = [1, 0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<7x7xf32>
    %13 = stablehlo.reverse %arg0, dims = [0] : tensor<4x5xf32>
    return %0, %11, %12, %13 : tensor<2x3xf32>, tensor<4x5xf32>, tensor<7x7xf32>, tensor<4x5xf32>
  }
}
""",
}


def _jax_modules():
    jax = pytest.importorskip("jax")
    return jax, jax.lax, jax.numpy


test_lowering_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES_GOLDEN, GOLDEN, (justjax, justjax.lax, justjax.numpy), _jax_modules)
