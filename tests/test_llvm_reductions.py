"""Reductions, windowed reductions and cumulative ops on the llvm backend: whole optimized
modules run natively (no op falls back) against the reference backend on the same module."""
from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends
from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.passes import optimize

# Registers the window and reduce kernels (until the codegen loads the module itself).
importlib.import_module("justjax._src.backends.llvm.kernels.window")

BF16, F16 = np.dtype(dtypes.bfloat16), np.dtype(dtypes.float16)
LOW = (BF16, F16)
lax = jax.lax


def _ints(shape, dtype=np.float32, lo=-9, hi=9, seed=0):
    """Integer values (sums of them are exact in any order)."""
    rng = np.random.default_rng(seed)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def _normal(shape, dtype=np.float32, seed=1):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


def _special(shape, dtype=np.float32, seed=2):
    """Few distinct values (ties) with NaN, infinities and both zeros among them."""
    pool = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -2.0, 3.0, 3.0, 7.0], np.float64)
    rng = np.random.default_rng(seed)
    return pool[rng.integers(0, len(pool), shape)].astype(dtype)


def _module(f, *args) -> ir.Module:
    x64 = any(np.asarray(a).dtype.itemsize == 8 for a in args)
    with jax.config.override("jax_enable_x64", x64):
        return optimize.optimize(jax.jit(f).lower(*args).compiler_ir())


def _compare(got: np.ndarray, want: np.ndarray, ulps: float | tuple[float, float]) -> None:
    """Equal (ints, bools; floats with `ulps` 0, zero signs included), or within `ulps` ULPs
    of `want` -- `(ulps, atol)`: plus `atol`, for sums that cancel."""
    ulps, atol = ulps if isinstance(ulps, tuple) else (ulps, 0.0)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    both = ~np.isnan(w)
    if ulps == 0:
        np.testing.assert_array_equal(g[both], w[both])
        zero = both & (w == 0)
        np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))
        return
    eps = {BF16: 2.0 ** -7, F16: 2.0 ** -10}.get(got.dtype) or np.finfo(got.dtype).eps
    scale = np.maximum(np.abs(w[both]), np.finfo(np.float32).tiny)
    ok = np.abs(g[both] - w[both]) <= ulps * eps * scale + atol
    assert ok.all(), (g[both][~ok], w[both][~ok])


def _check(f, *args, ulps: float | tuple[float, float] = 0, expect: str | None = None) -> Any:
    """Runs `f`'s optimized module on both backends; returns the llvm executable."""
    module = _module(f, *args)
    if expect is not None:
        assert any(op.opcode == expect for op in module.walk()), f"no {expect} in the module"
    exe = backends.get_backend("llvm").compile(module)
    assert not exe.program.fallbacks, [fb.op.opcode for fb in exe.program.fallbacks]
    got = exe.execute(list(args))
    want = backends.get_backend("reference").compile(module).execute(list(args))
    for g, w in zip(got, want, strict=True):
        _compare(g, w, ulps)
    return exe


# ---------------------------------------------------------------------------------------------
# stablehlo.reduce

def _argmax(x, axis):
    return jnp.argmax(x, axis=axis), jnp.argmin(x, axis=axis)


R = "stablehlo.reduce"
REDUCE_CASES = {
    # name: (f, args, ulps)
    "sum_rows": (lambda x: jnp.sum(x, axis=1), [_ints((37, 300))], 0),
    "sum_cols": (lambda x: jnp.sum(x, axis=0), [_ints((300, 37))], 0),
    "sum_middle": (lambda x: jnp.sum(x, axis=1), [_ints((4, 50, 6))], 0),
    "sum_outer_inner": (lambda x: jnp.sum(x, axis=(0, 2)), [_ints((5, 6, 7))], 0),
    "sum_minor_two": (lambda x: jnp.sum(x, axis=(1, 2)), [_ints((5, 6, 7))], 0),
    "sum_major_two": (lambda x: jnp.sum(x, axis=(0, 1)), [_ints((5, 6, 7))], 0),
    "sum_major_and_minor": (lambda x: jnp.sum(x, axis=(0, 2)), [_ints((3, 40, 2))], 0),
    "sum_all": (lambda x: jnp.sum(x), [_ints((33, 17))], 0),
    "sum_large_rows": (lambda x: jnp.sum(x, axis=1), [_ints((256, 300))], 0),
    "sum_large_cols": (lambda x: jnp.sum(x, axis=0), [_ints((300, 257))], 0),
    "sum_large_cols_tiled": (lambda x: jnp.sum(x, axis=0), [_ints((40, 1000))], 0),
    "sum_normal_rows": (lambda x: jnp.sum(x, axis=1), [_normal((64, 1000))], (4, 1e-3)),
    "sum_normal_cols": (lambda x: jnp.sum(x, axis=0), [_normal((1000, 64))], (4, 1e-3)),
    "sum_f64": (lambda x: (jnp.sum(x, axis=1), jnp.sum(x, axis=0)),
                [_normal((40, 900), np.float64)], (4, 1e-11)),
    "sum_empty_axis": (lambda x: jnp.sum(x, axis=0), [np.zeros((0, 5), np.float32)], 0),
    "sum_empty_rows": (lambda x: jnp.sum(x, axis=1), [np.zeros((5, 0), np.float32)], 0),
    "sum_signed_zeros": (lambda x: (jnp.sum(x, axis=0), jnp.sum(x, axis=1)),
                         [np.full((3, 40), -0.0, np.float32)], 0),
    "sum_negative_zero_init": (lambda x: lax.reduce(x, np.float32(-0.0), lax.add, (1,)),
                               [np.full((3, 40), -0.0, np.float32)], 0),
    "sum_init": (lambda x: lax.reduce(x, np.float32(2.5), lax.add, (0,)), [_ints((30, 20))], 0),
    "prod": (lambda x: (jnp.prod(x, axis=1), jnp.prod(x, axis=0)),
             [np.random.default_rng(3).uniform(0.5, 1.5, (24, 30)).astype(np.float32)], 8),
    "max_min_special": (lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=0), jnp.max(x)),
                        [_special((40, 33))], 0),
    "max_min_large": (lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=0)),
                      [_special((300, 130))], 0),
    "max_init": (lambda x: lax.reduce(x, np.float32(0.0), lax.max, (1,)), [_normal((20, 30))],
                 0),
    "sum_i32_wraps": (lambda x: (jnp.sum(x, axis=1), jnp.sum(x, axis=0)),
                      [_ints((30, 40), np.int32, -2 ** 30, 2 ** 30)], 0),
    "prod_i32": (lambda x: jnp.prod(x, axis=1), [_ints((30, 40), np.int32, -5, 5)], 0),
    "max_u8": (lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=0)),
               [_ints((30, 40), np.uint8, 0, 255)], 0),
    "min_i8": (lambda x: (jnp.min(x, axis=1), jnp.max(x, axis=0)),
               [_ints((30, 40), np.int8, -128, 127)], 0),
    "int64": (lambda x: (jnp.sum(x, axis=1), jnp.max(x, axis=0)),
              [_ints((30, 40), np.int64, -2 ** 60, 2 ** 60)], 0),
    "uint32_bits": (lambda x: (lax.reduce(x, np.uint32(0), lax.bitwise_xor, (1,)),
                               lax.reduce(x, np.uint32(0xFFFFFFFF), lax.bitwise_and, (0,)),
                               lax.reduce(x, np.uint32(0), lax.bitwise_or, (1,))),
                    [_ints((30, 40), np.uint32, 0, 2 ** 32 - 1)], 0),
    "bool_any_all": (lambda x: (jnp.any(x, axis=1), jnp.all(x, axis=0), jnp.sum(x, axis=1)),
                     [_ints((30, 40), np.int32, 0, 3) > 0], 0),
    "f16_sum": (lambda x: (jnp.sum(x, axis=1), jnp.sum(x, axis=0)),
                [_normal((40, 300), F16)], 1),
    "bf16_sum": (lambda x: (jnp.sum(x, axis=1), jnp.sum(x, axis=0)),
                 [_normal((40, 300), BF16)], 1),
    "f16_sum_init_rounds_each_step": (lambda x: (lax.reduce(x, F16.type(1.5), lax.add, (1,)),
                                                 lax.reduce(x, F16.type(1.5), lax.add, (0,))),
                                      [_normal((40, 300), F16)], 0),
    "bf16_prod_init": (lambda x: lax.reduce(x, BF16.type(2.0), lax.mul, (1,)),
                       [np.random.default_rng(4).uniform(0.9, 1.1, (20, 30)).astype(BF16)], 0),
    "f16_max": (lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=0)), [_special((40, 33), F16)],
                0),
    "fused_exp_sum": (lambda x: jnp.sum(jnp.exp(x) * 2, axis=1), [_normal((30, 40))], 8),
    "fused_transpose_max": (lambda x: jnp.max(x.T + 1, axis=0), [_normal((30, 40))], 0),
    "mean_var": (lambda x: (jnp.mean(x, axis=-1), jnp.mean((x - x.mean(0)) * (x - x.mean(0)),
                                                           axis=0)), [_normal((64, 100))], 64),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), [_normal((64, 100))], 8),
    "logsumexp": (lambda x: jax.nn.logsumexp(x, axis=0), [_normal((100, 64))], 8),
    "layernorm": (lambda x: (x - x.mean(-1, keepdims=True)) * lax.rsqrt(
        ((x - x.mean(-1, keepdims=True)) ** 2).mean(-1, keepdims=True) + 1e-5),
                  [_normal((64, 256))], (8, 1e-5)),
    "argmax_rows": (lambda x: _argmax(x, 1), [_special((40, 33))], 0),
    "argmax_cols": (lambda x: _argmax(x, 0), [_special((40, 33))], 0),
    "argmax_3d": (lambda x: (_argmax(x, 1), _argmax(x, 2)), [_special((4, 30, 5))], 0),
    "argmax_large": (lambda x: (_argmax(x, 1), _argmax(x, 0)), [_normal((300, 200))], 0),
    "argmax_ties": (lambda x: _argmax(x, 1), [_ints((30, 20), np.float32, 0, 2)], 0),
    "argmax_int": (lambda x: (_argmax(x, 1), _argmax(x, 0)), [_ints((30, 20), np.int32, 0, 3)],
                   0),
    "argmax_f16": (lambda x: _argmax(x, 0), [_special((30, 20), F16)], 0),
    "argmax_bool": (lambda x: _argmax(x, 1), [_ints((30, 20), np.int32, 0, 1) > 0], 0),
    "general_body_rows": (lambda x: lax.reduce(x, np.float32(1), lambda a, b: a * 0.5 + b, (1,)),
                          [_normal((30, 20))], 0),
    "general_body_cols": (lambda x: lax.reduce(x, np.float32(1), lambda a, b: a * 0.5 + b, (0,)),
                          [_normal((30, 20))], 0),
    "general_body_fused": (lambda x: 2 * lax.reduce(x, np.float32(1), lambda a, b: a * 0.5 + b,
                                                    (0, 2)), [_normal((3, 20, 4))], 0),
    "subtract_body": (lambda x: (lax.reduce(x, np.float32(0.5), lax.sub, (1,)),
                                 lax.reduce(x, np.float32(0.5), lax.sub, (0,))),
                      [_normal((30, 20))], 0),
    "doubling_body": (lambda x: lax.reduce(x, np.int32(1), lambda a, b: a + a, (1,)),
                      [_ints((30, 20), np.int32)], 0),
    "variadic_mixed_dims": (lambda x, y: lax.reduce(
        (x, y), (np.float32(0), np.int32(0)), lambda a, b: (a[0] + b[0], lax.max(a[1], b[1])),
        (0, 2)), [_ints((3, 20, 4)), _ints((3, 20, 4), np.int32)], 0),
    "variadic_empty_output": (lambda x: jnp.argmax(x, axis=1), [np.zeros((0, 4), np.float32)],
                              0),
    "variadic": (lambda x, y: lax.reduce((x, y), (np.float32(0), np.float32(-np.inf)),
                                         lambda a, b: (a[0] + b[0], lax.max(a[1], b[1])), (0,)),
                 [_ints((30, 20)), _normal((30, 20))], 0),
    "variadic_rows_mixed_dtypes": (
        lambda x, y: lax.reduce((x, y), (np.float32(1), np.int32(0)),
                                lambda a, b: (a[0] * b[0], a[1] + b[1] * 2), (1,)),
        [_ints((30, 20), np.float32, 1, 2), _ints((30, 20), np.int32)], 0),
}


@pytest.mark.parametrize("name", list(REDUCE_CASES))
def test_reduce_matches_reference(name):
    f, args, ulps = REDUCE_CASES[name]
    _check(f, *args, ulps=ulps, expect=None if "empty" in name else R)


def test_reduce_over_no_dimensions_is_the_operand():
    # A reduce over no dimensions (JAX never emits one; build it) is its operand: -0.0 stays.
    t = ir.TensorType((3, 4), np.float32)
    s = ir.TensorType((), np.float32)
    x, init = ir.Value(t), ir.Value(s)
    region, rb = ir.new_region([s, s])
    rb.ret([rb.one("stablehlo.add", list(region.block.args), s)])
    body = ir.Block([x, init], [])
    b = ir.Builder(body)
    out = b.op("stablehlo.reduce", [x, init], [t], {"dimensions": ()}, [region]).result
    b.ret([out], "func.return")
    module = ir.Module("m", [ir.Function("main", body, [t], visibility="public")])
    xs = np.array([[-0.0, 1.5, -2.0, np.nan]] * 3, np.float32)
    exe = backends.get_backend("llvm").compile(module)
    assert not exe.program.fallbacks
    (got,) = exe.execute([xs, np.array(0.0, np.float32)])
    np.testing.assert_array_equal(np.signbit(got), np.signbit(xs))
    np.testing.assert_array_equal(got[:, :3], xs[:, :3])


def test_variadic_reduce_runs_as_a_kernel():
    exe = _check(lambda x: jnp.argmax(x, axis=1), _special((40, 33)))
    assert exe.program.kernels.get(R) == 1


VECTOR = re.compile(r"<(\d+) x float>")


@pytest.mark.parametrize("f", [lambda x: jnp.sum(x, axis=1), lambda x: jnp.sum(x, axis=0),
                               lambda x: jnp.max(x, axis=1), lambda x: jnp.min(x, axis=0)],
                         ids=["sum_rows", "sum_cols", "max_rows", "min_cols"])
def test_float_reductions_vectorize(f):
    x = _ints((512, 1024))
    # The fully optimized code (a first tier may be LLVM's unvectorized O0 code).
    with jax.config.override("justjax_tiered_compilation", False):
        exe = _check(f, x)
    assert exe.opt_level == 3
    widths = {int(n) for n in VECTOR.findall(exe.optimized_ir)}
    assert widths and max(widths) >= 4, widths
    if "fadd" in exe.optimized_ir:
        # Vectorized in the order the IR spells out (no reassociation: the bits do not
        # depend on the optimization level).
        assert re.search(r"fadd <\d+ x float>", exe.optimized_ir)
        assert "reassoc" not in exe.optimized_ir


# ---------------------------------------------------------------------------------------------
# stablehlo.reduce_window and cumulative ops

def _window(x, init, op, dims, strides, padding, base=None, dil=None):
    return lax.reduce_window(x, init, op, dims, strides, padding, base_dilation=base,
                             window_dilation=dil)


W = "stablehlo.reduce_window"
WINDOW_CASES = {
    "maxpool": (lambda x: _window(x, -np.inf, lax.max, (2, 2), (2, 2), "VALID"),
                [_normal((8, 16))], 0),
    "maxpool_special": (lambda x: _window(x, -np.inf, lax.max, (3, 2), (1, 2), "SAME"),
                        [_special((9, 16))], 0),
    "avgpool_same": (lambda x: _window(x, 0.0, lax.add, (3, 3), (1, 1), "SAME") / 9,
                     [_ints((10, 12))], 0),
    "nchw_pool": (lambda x: _window(x, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                                    ((0, 0), (0, 0), (1, 1), (1, 1))), [_normal((2, 3, 9, 9))], 0),
    "padding_negative": (lambda x: _window(x, 0.0, lax.add, (2, 3), (1, 2), ((-1, 2), (2, -1))),
                         [_ints((8, 16))], 0),
    "base_dilation": (lambda x: _window(x, 0.0, lax.add, (2, 3), (1, 2), ((1, 0), (2, 1)),
                                        (1, 2), (2, 1)), [_ints((8, 16))], 0),
    "window_dilation": (lambda x: _window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID", None,
                                          (3, 2)), [_special((9, 10))], 0),
    "int_sum": (lambda x: _window(x, 0, lax.add, (3,), (2,), ((1, 1),)),
                [_ints((20,), np.int32, -2 ** 30, 2 ** 30)], 0),
    "u8_min": (lambda x: _window(x, np.uint8(255), lax.min, (2, 2), (1, 1), "SAME"),
               [_ints((6, 7), np.uint8, 0, 255)], 0),
    "f16_sum": (lambda x: _window(x, 0.0, lax.add, (3, 3), (1, 1), "SAME"), [_normal((8, 8), F16)],
                1),
    "f16_sum_init": (lambda x: _window(x, F16.type(0.7), lax.add, (4,), (1,), "VALID"),
                     [_normal((40,), F16)], 0),
    "bf16_max": (lambda x: _window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"),
                 [_special((6, 7), BF16)], 0),
    "f64_sum": (lambda x: _window(x, 0.0, lax.add, (3, 2), (2, 1), "SAME"),
                [_normal((7, 9), np.float64)], 4),
    "scalar_window": (lambda x: _window(x, 0.0, lax.add, (), (), ()),
                      [np.array(3.5, np.float32)], 0),
    "empty_operand": (lambda x: _window(x, 1.0, lax.mul, (2,), (1,), ((2, 1),)),
                      [np.zeros((0,), np.float32)], 0),
    "empty_output": (lambda x: _window(x, 0.0, lax.add, (2, 3), (1, 1), "VALID"),
                     [np.zeros((4, 2), np.float32)], 0),
    "general_body": (lambda x: _window(x, 1.0, lambda a, b: a * 0.5 + b, (3,), (1,), "VALID"),
                     [_normal((12,))], 0),
    "variadic": (lambda x, y: lax.reduce_window(
        (x, y), (-np.inf, 0), lambda a, b: (lax.max(a[0], b[0]), a[1] + b[1]), (2, 2), (1, 1),
        "SAME"), [_normal((6, 7)), _ints((6, 7), np.int32)], 0),
    "nhwc_sum_same": (lambda x: _window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 1, 1), "SAME"),
                      [_ints((2, 5, 6, 3))], 0),
    "minor_tiled": (lambda x: _window(x, 0.0, lax.add, (2, 1), (1, 1), ((1, 0), (0, 0))),
                    [_ints((4, 300))], 0),
    "minor_variadic": (lambda x, y: lax.reduce_window(
        (x, y), (-np.inf, 0), lambda a, b: (lax.max(a[0], b[0]), a[1] + b[1]), (2, 2, 1),
        (1, 1, 1), "SAME"), [_normal((6, 7, 4)), _ints((6, 7, 4), np.int32)], 0),
    "minor_general_body": (lambda x: _window(x, 1.0, lambda a, b: a * 0.5 + b, (3, 1), (1, 1),
                                             "VALID"), [_normal((6, 5))], 0),
    "minor_f16": (lambda x: (_window(x, F16.type(0.7), lax.add, (2, 1), (1, 1), "VALID"),
                             _window(x, F16.type(0), lax.add, (2, 1), (1, 1), "VALID")),
                  [_normal((5, 6), F16)], 1),
    "minor_f16_init": (lambda x: _window(x, F16.type(0.7), lax.add, (3, 1), (1, 1), "VALID"),
                       [_normal((5, 6), F16)], 0),
    "large_pool": (lambda x: _window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                   [_normal((4, 32, 32, 16))], 0),
}
CUMULATIVE = {
    "cumsum": (jnp.cumsum, 0), "cumprod": (jnp.cumprod, 4), "cummax": (lax.cummax, 0),
    "cummin": (lax.cummin, 0), "cumlogsumexp": (lax.cumlogsumexp, (8, 1e-6)),
}
for _name, (_fn, _ulps) in CUMULATIVE.items():
    for _axis in (0, 1):
        for _reverse in (False, True):
            _data = (np.random.default_rng(5).uniform(0.8, 1.2, (12, 30)).astype(np.float32)
                     if _name == "cumprod" else _ints((12, 30)) if _name == "cumsum"
                     else _normal((12, 30)))
            _f = (lambda x, fn=_fn, a=_axis, r=_reverse: lax.cumsum(x, a, r)
                  if fn is jnp.cumsum else lax.cumprod(x, a, r) if fn is jnp.cumprod
                  else fn(x, a, r))
            WINDOW_CASES[f"{_name}_axis{_axis}{'_reverse' if _reverse else ''}"] = (
                _f, [_data], _ulps)
WINDOW_CASES.update({
    "cumsum_3d_middle": (lambda x: jnp.cumsum(x, axis=1), [_ints((3, 40, 7))], 0),
    "cumsum_large": (lambda x: (jnp.cumsum(x, axis=1), jnp.cumsum(x, axis=0)),
                     [_ints((300, 700))], 0),
    "cumsum_tiled": (lambda x: lax.cumsum(x, 0, True), [_ints((5, 1100))], 0),
    "cumsum_int": (lambda x: (jnp.cumsum(x, axis=0), lax.cumsum(x, 1, True)),
                   [_ints((12, 30), np.int32, -2 ** 30, 2 ** 30)], 0),
    "cumsum_f16": (lambda x: (lax.cumsum(x, 0), lax.cumsum(x, 1, True)), [_normal((12, 30), F16)],
                   1),
    "cumsum_bf16": (lambda x: lax.cumsum(x, 1), [_normal((12, 30), BF16)], 1),
    "cummax_int_reverse": (lambda x: (lax.cummax(x, 1, True), lax.cummin(x, 0, True)),
                           [_ints((12, 30), np.int16, -300, 300)], 0),
    "cumulative_and_bool_reverse": (lambda x: _window(x, True, lax.bitwise_and, (1, 9), (1, 1),
                                                      ((0, 0), (0, 8))),
                                    [_ints((5, 9), np.int32, 0, 4) > 0], 0),
    "subtract_window": (lambda x: _window(x, 0.0, lax.sub, (1, 6), (1, 1), ((0, 0), (0, 5))),
                        [_normal((4, 6))], 0),
    "cummax_special": (lambda x: (lax.cummax(x, 1), lax.cummin(x, 0, True)),
                       [_special((12, 30))], 0),
    "cumsum_signed_zeros": (lambda x: (lax.cumsum(x, 1), lax.cumsum(x, 0, True)),
                            [np.full((4, 5), -0.0, np.float32)], 0),
    "cumulative_or_bool": (lambda x: _window(x, False, lax.bitwise_or, (1, 9), (1, 1),
                                             ((0, 0), (8, 0))), [_ints((5, 9), np.int32, 0, 4) > 3],
                           0),
    # Long running sums are compensated (more accurate than the reference's plain fold,
    # which errs by up to ~30 ulps of the summands where the prefix sums cancel).
    "cumsum_f64": (lambda x: lax.cumsum(x, 0, True), [_normal((30, 7), np.float64)],
                   (4, 1e-13)),
    "cumsum_one": (lambda x: jnp.cumsum(x, axis=1), [_ints((3, 1))], 0),
    "prefix_window_with_init": (lambda x: _window(x, 2.0, lax.add, (1, 30), (1, 1),
                                                  ((0, 0), (29, 0))), [_ints((4, 30))], 0),
    "suffix_window_with_init": (lambda x: _window(x, 2.0, lax.add, (1, 30), (1, 1),
                                                  ((0, 0), (0, 29))), [_normal((4, 30))], 0),
    "suffix_window_general": (lambda x: _window(x, 1.0, lambda a, b: a * 0.5 + b, (20,), (1,),
                                                ((0, 19),)), [_normal((20,))], 0),
})


@pytest.mark.parametrize("name", list(WINDOW_CASES))
def test_reduce_window_matches_reference(name):
    f, args, ulps = WINDOW_CASES[name]
    trivial = name in ("scalar_window", "empty_operand", "empty_output", "cumsum_one")
    exe = _check(f, *args, ulps=ulps, expect=None if trivial else W)
    if not trivial:
        assert exe.program.kernels.get(W), exe.program.kernels


# ---------------------------------------------------------------------------------------------
# stablehlo.select_and_scatter

S = "stablehlo.select_and_scatter"


def _pool_grad(dims, strides, padding, reducer=lax.max, init=-np.inf):
    # Squares make the cotangents (the scattered source) differ window by window.
    return jax.grad(lambda y: jnp.sum(_window(y, init, reducer, dims, strides, padding) ** 2))


SCATTER_CASES = {
    "maxpool_grad": (_pool_grad((2, 2), (2, 2), "VALID"), [_normal((8, 16))]),
    "maxpool_grad_overlap": (_pool_grad((3, 3), (1, 1), "SAME"), [_normal((9, 10))]),
    "maxpool_grad_ties": (_pool_grad((3, 2), (1, 1), "VALID"), [_ints((7, 8), np.float32, 0, 1)]),
    "minpool_grad": (_pool_grad((2, 3), (1, 2), "SAME", lax.min, np.inf), [_special((8, 9))]),
    "maxpool_grad_f64": (_pool_grad((2, 2), (1, 1), "VALID"), [_normal((5, 6), np.float64)]),
    "maxpool_grad_f16": (_pool_grad((2, 2), (1, 1), "VALID"), [_normal((5, 6), F16)]),
}


@pytest.mark.parametrize("name", list(SCATTER_CASES))
def test_select_and_scatter_matches_reference(name):
    f, args = SCATTER_CASES[name]
    exe = _check(f, *args, expect=S)
    assert exe.program.kernels.get(S), exe.program.kernels


@pytest.mark.parametrize("shape,padding", [((0, 4), ((2, 0), (0, 0))), ((1, 4), ((0, 0), (0, 0)))],
                         ids=["empty_operand", "empty_source"])
def test_select_and_scatter_empty(shape, padding):
    dims, strides = (2, 2), (1, 2)
    source_shape = tuple(max((n + lo + hi - d) // s + 1, 0) for n, (lo, hi), d, s in zip(
        shape, padding, dims, strides, strict=True))
    module = _select_and_scatter_module(shape, source_shape, dims, strides, padding, np.float32,
                                        "GE")
    args = [_normal(shape), _normal(source_shape), np.array(0.25, np.float32)]
    exe = backends.get_backend("llvm").compile(module)
    assert not exe.program.fallbacks
    (got,) = exe.execute(args)
    (want,) = backends.get_backend("reference").compile(module).execute(args)
    _compare(got, np.asarray(want), 0)


def _select_and_scatter_module(shape, source_shape, dims, strides, padding, dtype, direction):
    t = ir.TensorType(shape, dtype)
    st = ir.TensorType(source_shape, dtype)
    s = ir.TensorType((), dtype)
    x, src, init = ir.Value(t), ir.Value(st), ir.Value(s)
    select, sb = ir.new_region([s, s])
    pred = ir.TensorType((), np.bool_)
    sb.ret([sb.one("stablehlo.compare", list(select.block.args), pred,
                   comparison_direction=ir.Enum("ComparisonDirection", direction))])
    scatter, cb = ir.new_region([s, s])
    cb.ret([cb.one("stablehlo.add", list(scatter.block.args), s)])
    body = ir.Block([x, src, init], [])
    b = ir.Builder(body)
    out = b.op(S, [x, src, init], [t], {"window_dimensions": dims, "window_strides": strides,
                                        "padding": np.asarray(padding, np.int64)},
               [select, scatter]).result
    b.ret([out], "func.return")
    return ir.Module("m", [ir.Function("main", body, [t], visibility="public")])


@pytest.mark.parametrize("padding,direction,hi", [
    (((1, 1), (0, 2)), "GE", 3),
    (((-1, 2), (2, -1)), "GT", 3),
    (((0, 0), (0, 0)), "LE", 3),
    (((0, 1), (1, 0)), "GE", 0),
], ids=["positive", "negative", "le", "all_ties"])
def test_select_and_scatter_with_padding(padding, direction, hi):
    shape, dims, strides = (7, 8), (3, 2), (2, 2)
    source_shape = tuple((n + lo + hi - d) // s + 1 for n, (lo, hi), d, s in zip(
        shape, padding, dims, strides, strict=True))
    module = _select_and_scatter_module(shape, source_shape, dims, strides, padding, np.float32,
                                        direction)
    # Overlapping windows pick the same element (ties); sources of very different magnitudes
    # make the order of their sums show.
    rng = np.random.default_rng(7)
    source = (_normal(source_shape) * 10.0 ** rng.uniform(-3, 8, source_shape)).astype(np.float32)
    args = [_ints(shape, np.float32, 0, hi), source, np.array(0.25, np.float32)]
    exe = backends.get_backend("llvm").compile(module)
    assert not exe.program.fallbacks
    (got,) = exe.execute(args)
    (want,) = backends.get_backend("reference").compile(module).execute(args)
    _compare(got, np.asarray(want), 0)


# ---------------------------------------------------------------------------------------------
# Initial values only known at run time: the reference's fast path (a monoid from its identity:
# float16/bfloat16 accumulated in float32, sums from +0.0) or its general fold (rounding every
# step) is chosen by the value.

def _monoid_region(opcode: str, dtype) -> ir.Region:
    s = ir.TensorType((), dtype)
    region, rb = ir.new_region([s, s])
    rb.ret([rb.one(opcode, list(region.block.args), s)])
    return region


def _init_module(opcode: str, monoid: str, shape, dtype, attributes) -> ir.Module:
    """`main(x, init)`: one `opcode` op over `x` from `init` with the `monoid` region."""
    t, s = ir.TensorType(shape, dtype), ir.TensorType((), dtype)
    x, init = ir.Value(t), ir.Value(s)
    body = ir.Block([x, init], [])
    b = ir.Builder(body)
    if opcode == R:
        out_shape = tuple(n for d, n in enumerate(shape) if d not in attributes["dimensions"])
    else:
        out_shape = shape
    out_t = ir.TensorType(out_shape, dtype)
    out = b.op(opcode, [x, init], [out_t], attributes, [_monoid_region(monoid, dtype)]).result
    b.ret([out], "func.return")
    return ir.Module("m", [ir.Function("main", body, [out_t], visibility="public")])


def _prefix(shape, axis, reverse):
    n = shape[axis]
    pads = [[0, 0] for _ in shape]
    pads[axis] = [0, n - 1] if reverse else [n - 1, 0]
    return {"window_dimensions": tuple(n if d == axis else 1 for d in range(len(shape))),
            "window_strides": (1,) * len(shape), "padding": np.asarray(pads, np.int64),
            "base_dilations": (1,) * len(shape), "window_dilations": (1,) * len(shape)}


INIT_OPS = {
    "reduce_rows": (R, {"dimensions": (1,)}),
    "reduce_cols": (R, {"dimensions": (0,)}),
    "cumulative": (W, _prefix((6, 40), 1, False)),
    "cumulative_reverse": (W, _prefix((6, 40), 1, True)),
    "cumulative_cols_reverse": (W, _prefix((6, 40), 0, True)),
    "window": (W, {"window_dimensions": (2, 3), "window_strides": (1, 1),
                   "padding": np.asarray([[1, 0], [0, 2]], np.int64)}),
}


@pytest.mark.parametrize("dtype", [np.float32, F16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("init", [0.0, -0.0, 1.5, np.nan], ids=["zero", "neg_zero", "1.5", "nan"])
@pytest.mark.parametrize("where", list(INIT_OPS) + ["reduce_empty"])
def test_initial_value_from_an_argument(where, init, dtype):
    opcode, attributes = INIT_OPS.get(where, (R, {"dimensions": (1,)}))
    shape = (6, 0) if where == "reduce_empty" else (6, 40)
    # Integers sum exactly in float32 in any order; float16/bfloat16 sums round.
    summands = _ints(shape, dtype) if dtype == np.float32 else _normal(shape, dtype)
    for monoid, data in (("stablehlo.add", summands),
                         ("stablehlo.add", np.full(shape, -0.0, dtype)),
                         ("stablehlo.multiply", np.random.default_rng(6).uniform(
                             0.8, 1.25, shape).astype(dtype))):
        module = _init_module(opcode, monoid, shape, dtype, attributes)
        args = [data, np.array(init, dtype)]
        exe = backends.get_backend("llvm").compile(module)
        assert not exe.program.fallbacks
        (got,) = exe.execute(args)
        (want,) = backends.get_backend("reference").compile(module).execute(args)
        # From the identity, float16/bfloat16 sums in float32 differ from the reference's
        # pairwise ones in the last float32 bits: rarely a rounding, and then by one unit.
        ulps = 1 if init == 0 and dtype in LOW else 0
        if dtype == np.float32 and where == "reduce_rows" and init == 1.5:
            # A long float32 product multiplies blocked, the initial value last (the
            # reference multiplies in order).
            ulps = 8
        _compare(got, np.asarray(want), ulps)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1)], ids=["cols", "rows", "all"])
def test_variadic_reduce_roots_of_one_fusion(dims):
    # XLA CPU forms no multi-output fusions; build one: both results of an argmax-like reduce
    # are roots, written by one loop nest.
    from justjax._src.backends.llvm.codegen import emitter
    from justjax._src.hlo.passes import fusion
    f32, i32 = ir.TensorType((30, 20), np.float32), ir.TensorType((30, 20), np.int32)
    s32, si = ir.TensorType((), np.float32), ir.TensorType((), np.int32)
    region, b = ir.new_region([f32, i32])
    x, i = region.block.args
    body, rb = ir.new_region([s32, si, s32, si])
    av, ai, bv, bi = body.block.args
    pred = ir.TensorType((), np.bool_)
    gt = rb.one("stablehlo.compare", [av, bv], pred,
                comparison_direction=ir.Enum("ComparisonDirection", "GT"))
    rb.ret([rb.one("stablehlo.select", [gt, av, bv], s32),
            rb.one("stablehlo.select", [gt, ai, bi], si)])
    out_shape = tuple(n for d, n in enumerate((30, 20)) if d not in dims)
    ninf = b.constant(np.array(-np.inf, np.float32), np.float32)
    zero = b.constant(np.array(0, np.int32), np.int32)
    red = b.op(R, [x, i, ninf, zero], [ir.TensorType(out_shape, np.float32),
                                       ir.TensorType(out_shape, np.int32)],
               {"dimensions": dims}, [body])
    b.ret(list(red.results))
    outer = [ir.Value(a.type) for a in region.block.args]
    op = ir.Op(fusion.FUSION, outer, [ir.Value(r.type) for r in red.results],
               {"kind": "kLoop", "name": "argmax", "computation": "fused_computation"}, [region])
    xs = _ints((30, 20), np.float32, 0, 4)
    idx = np.arange(600, dtype=np.int32).reshape(30, 20)
    got = emitter.compile_fusion(op)(xs, idx)
    args = [ir.Value(t) for t in op.operand_types]
    new = ir.Op(op.opcode, args, [ir.Value(t) for t in op.result_types], dict(op.attributes),
                op.regions)
    main = ir.Block(args, [new, ir.Op("func.return", list(new.results), [])])
    module = ir.Module("m", [ir.Function("main", main, list(op.result_types),
                                         visibility="public")])
    want = backends.get_backend("reference").compile(module).execute([xs, idx])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_region_reading_outer_values_falls_back():
    # StableHLO regions may read values of the enclosing function (JAX's lowering never makes
    # such reduce regions; the reference backend does not run them either): the kernel leaves
    # the op to the fallback instead of failing to compile.
    t, s = ir.TensorType((4, 6), np.float32), ir.TensorType((), np.float32)
    x, scale = ir.Value(t), ir.Value(s)
    body = ir.Block([x, scale], [])
    b = ir.Builder(body)
    zero = b.constant(np.array(0.0, np.float32), np.float32)
    region, rb = ir.new_region([s, s])
    acc, v = region.block.args
    rb.ret([rb.one("stablehlo.add", [acc, rb.one("stablehlo.multiply", [v, scale], s)], s)])
    out_t = ir.TensorType((4,), np.float32)
    out = b.op(R, [x, zero], [out_t], {"dimensions": (1,)}, [region]).result
    b.ret([out], "func.return")
    module = ir.Module("m", [ir.Function("main", body, [out_t], visibility="public")])
    exe = backends.get_backend("llvm").compile(module)
    assert [fb.op.opcode for fb in exe.program.fallbacks] == [R]
