"""The elemental emitter: fusions of optimized modules compiled to LLVM, against the reference
backend running the same fusion (which also shows they are emitted natively: `compile_fusion`
raises `emitter.Unsupported` otherwise). Whole programs run by the llvm backend check that no
op falls back to the reference backend."""
from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends
from justjax._src.backends.llvm.codegen import emitter
from justjax._src.backends.llvm.runtime import host
from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.passes import fusion, optimize

BF16, F16 = np.dtype(dtypes.bfloat16), np.dtype(dtypes.float16)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)


@pytest.fixture(params=[None, False], ids=["host", "no_f16c"])
def f16c(request):
    """Runs a test with the host's float16 conversions and again with the integer ones used
    on hosts without F16C."""
    saved = emitter.F16C
    emitter.F16C = request.param
    yield request.param
    emitter.F16C = saved


def _x64(*args) -> bool:
    return any(np.asarray(a).dtype in (np.float64, np.int64, np.uint64, C128) for a in args)


def _fusions(f, *args) -> list[ir.Op]:
    """The fusions of `f`'s optimized module (lowered with x64 when an argument is 64-bit)."""
    with jax.config.override("jax_enable_x64", _x64(*args)):
        module = optimize.optimize(jax.jit(f).lower(*args).compiler_ir())
    return [op for op in module.walk() if fusion.is_fusion(op)]


def _reference(op: ir.Op, operands: list[np.ndarray]) -> list[np.ndarray]:
    """`op` run by the reference backend in a module of its own."""
    args = [ir.Value(t) for t in op.operand_types]
    new = ir.Op(op.opcode, args, [ir.Value(t) for t in op.result_types], dict(op.attributes),
                op.regions)
    body = ir.Block(args, [new, ir.Op("func.return", list(new.results), [])])
    main = ir.Function("main", body, list(op.result_types), visibility="public")
    return backends.get_backend("reference").compile(ir.Module("m", [main])).execute(operands)


def _operand(t: ir.TensorType, rng: np.random.Generator) -> np.ndarray:
    if t.dtype.kind == "c":
        return (rng.standard_normal(t.shape) * 2 + 1j * rng.standard_normal(t.shape) * 2
                ).astype(t.dtype)
    if t.dtype == np.bool_:
        return rng.random(t.shape) < 0.5
    if t.dtype.kind in "iu":
        info = np.iinfo(t.dtype)
        lo, hi = max(info.min, -20), min(info.max, 20)
        return rng.integers(lo, hi, t.shape, endpoint=True).astype(t.dtype)
    return (rng.standard_normal(t.shape) * 3).astype(t.dtype)


def _assert_close(g: np.ndarray, w: np.ndarray, ulps: float, atol: float = 0.0,
                  context: object = None) -> None:
    """Integers bit for bit; floats within `ulps` of the expected value's spacing (for
    complex numbers, of the larger part's: errors are relative to the magnitude)."""
    w = np.asarray(w)
    assert g.dtype == w.dtype and g.shape == w.shape, (context, g.dtype, w.dtype)
    if g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w, err_msg=str(context))
        return
    if g.dtype.kind == "c":
        parts = [(g.real, w.real), (g.imag, w.imag)]
        scale = np.maximum(np.abs(w.real), np.abs(w.imag))
        base = np.float32 if g.dtype == C64 else np.float64
    else:
        parts = [(g, w)]
        scale = np.abs(w.astype(np.float64))
        base = np.float32 if g.dtype in (BF16, F16) else g.dtype
    spacing = np.abs(np.spacing(scale.astype(base))).astype(np.float64)
    if g.dtype in (BF16, F16):
        spacing = scale * (2.0 ** -7 if g.dtype == BF16 else 2.0 ** -10) + 1e-30
    for gp, wp in parts:
        gf, wf = gp.astype(np.float64), wp.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(gf), np.isnan(wf), err_msg=str(context))
        with np.errstate(invalid="ignore"):
            ok = np.isnan(wf) | (gf == wf) | (np.abs(gf - wf) <= ulps * spacing + atol)
        assert ok.all(), (context, gf[~ok][:5], wf[~ok][:5])


def _check_op(op: ir.Op, operands: list[np.ndarray], ulps: float = 4, atol: float = 0.0
              ) -> None:
    """Fusion `op` compiled natively and run on `operands` agrees with the reference."""
    got = emitter.compile_fusion(op)(*operands)
    got = got if isinstance(got, tuple) else (got,)
    want = _reference(op, operands)
    for g, w in zip(got, want, strict=True):
        _assert_close(g, w, ulps, atol, op.attributes.get("name"))


def _check(f, *args, ulps: float = 4, atol: float = 0.0) -> set[str]:
    """Checks every fusion of `f`; returns the opcodes they hold."""
    ops = _fusions(f, *args)
    assert ops, "no fusion"
    rng = np.random.default_rng(0)
    for op in ops:
        with np.errstate(all="ignore"):
            _check_op(op, [_operand(t, rng) for t in op.operand_types], ulps, atol)
    return {inner.opcode.split(".")[-1] for op in ops for inner in op.regions[0].block.walk()}


_rng = np.random.default_rng(1)
x32 = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
b32 = np.arange(6, dtype=np.float32)
i32 = np.arange(-12, 12, dtype=np.int32).reshape(4, 6)


def _grad_chain(x):
    def f(y):
        for _ in range(3):
            y = jnp.sin(y) + 0.1 * jnp.cos(y * y) - jnp.tanh(y)
        return jnp.sum(y)
    return jax.grad(f)(x)


def _pool_gradient(h, d):
    """Where `h` > 0, the gradient `d` of a 2x2 mean pool (NHWC) spread over its windows."""
    n, rows, columns, channels = d.shape
    spread = jnp.broadcast_to(d[:, :, None, :, None, :], (n, rows, 2, columns, 2, channels))
    return jnp.where(h > 0, spread.reshape(n, 2 * rows, 2 * columns, channels) * 0.25, 0.0)


CASES = {
    "chain": (lambda x: jnp.exp(x) * 2 + jnp.log1p(jnp.abs(x)) - jnp.tanh(x), x32),
    "bias": (lambda x, b: jnp.maximum(x + b, 0.0), x32, b32),
    "transpose": (lambda x: jnp.sin(x.T) * 2, x32),
    # Reshapes keeping minor dimensions (re-split only the leading ones), read next to an
    # operand of the result's shape: a 2x2 pool's gradient, two kept dimensions, a chain
    # through a transpose, and one keeping a minor dimension too short for a loop of its own.
    "reshape_pool_grad": (_pool_gradient, _rng.standard_normal((2, 6, 6, 8), np.float32),
                          _rng.standard_normal((2, 3, 3, 8), np.float32)),
    "reshape_two_kept": (lambda x, y: jnp.exp(x.reshape(12, 2, 9, 10)) * y,
                         _rng.standard_normal((4, 3, 2, 9, 10), np.float32),
                         _rng.standard_normal((12, 2, 9, 10), np.float32)),
    "reshape_transpose_chain": (lambda x: (x.reshape(6, 4, 16).transpose(1, 0, 2)
                                           .reshape(2, 2, 6, 16) * 3),
                                _rng.standard_normal((24, 16), np.float32)),
    "reshape_short_minor": (lambda x, y: x.reshape(6, 2, 3) - y,
                            _rng.standard_normal((3, 4, 3), np.float32),
                            _rng.standard_normal((6, 2, 3), np.float32)),
    "slice_concat": (lambda x: jnp.concatenate([x[:, 1:4] * 2, x[:, ::2] + 1], axis=1), x32),
    "iota": (lambda x: x + jnp.arange(6, dtype=jnp.float32), x32),
    "select": (lambda x, y: jnp.where(x > y, x * 2, y - 1), x32, x32[::-1]),
    "convert": (lambda x: (x * 3).astype(jnp.int32) + 1, x32),
    "convert_u8": (lambda x: (x * 100).astype(jnp.uint8) * 3, x32),
    "int_div": (lambda x, y: (x // y, x % y, jax.lax.div(x, y), jax.lax.rem(x, y)), i32, i32[::-1]),
    "int_ops": (lambda x, y: (x << (y % 40)) ^ (x >> 2) | jnp.sign(x) * jnp.abs(y), i32, i32.T.reshape(4, 6)),
    "f16": (lambda x: jnp.exp(x) * x + 1, x32.astype(F16)),
    "bf16": (lambda x: jnp.tanh(x) * x - 0.3, x32.astype(BF16)),
    "grad_chain": (_grad_chain, x32),
    "pad_reverse": (lambda x: jnp.pad(x[::-1] * 2, ((1, 2), (0, 3))), x32),
    "clamp_sqrt": (lambda x: jnp.sqrt(jnp.clip(x, 0.5, 2.0)) + jax.lax.rsqrt(jnp.abs(x) + 1), x32),
    "bool": (lambda x, y: (x > 0) & ~(y < 1), x32, x32.T.reshape(4, 6)),
    "f64": (lambda x: jnp.sin(x) * jnp.exp(-x), x32.astype(np.float64)),
    "large": (lambda x, b: jnp.tanh(x * 2 + b[:, None]) - jnp.exp(x.T).T,
              np.linspace(-5, 5, 37 * 41, dtype=np.float32).reshape(37, 41),
              np.arange(37, dtype=np.float32)),
    "compare_nan": (lambda x: jnp.where(jnp.isnan(x) | (x != x * 1), 1.0, x) < 0.5,
                    np.array([np.nan, 1.0, -np.inf, 0.4], np.float32)),
    "to_unsigned": (lambda x: ((x * 50).astype(jnp.uint32) // 7).astype(jnp.float32), x32),
    "f64_to_bf16": (lambda x: (x * 1.1).astype(BF16) + 1, x32.astype(np.float64)),
    "reduce_sum": (lambda x: jnp.sum(jnp.exp(x) * 2, axis=1), x32),
    "reduce_max_t": (lambda x: jnp.max(x.T + 1, axis=0), x32),
    "reduce_int": (lambda x: jnp.sum(x * x, axis=(0, 1)), i32),
    "reduce_bf16": (lambda x: jnp.sum(x * 2, axis=0), x32.astype(BF16)),
    "int64_div": (lambda x, y: (x // y) * 3 - x % y, i32.astype(np.int64),
                  i32[::-1].astype(np.int64)),
    "uint64": (lambda x, y: (x // y) + (x % y) + (x >> np.uint64(3)), i32.astype(np.uint64),
               (i32[::-1] % 5).astype(np.uint64)),
    "int8_wrap": (lambda x, y: x * y + jnp.int8(100), i32.astype(np.int8) * 9,
                  i32[::-1].astype(np.int8)),
    "float_rem_round": (lambda x, y: jnp.fmod(x, y + 4) + jnp.round(x) + jnp.floor(y) * jnp.sign(x),
                        x32, x32[::-1]),
    "math": (lambda x: jnp.log(jnp.abs(x) + 0.1) + jnp.expm1(x) * jax.nn.sigmoid(x)
             + jnp.power(jnp.abs(x) + 0.5, x) + jax.lax.erf_inv(jnp.tanh(x) * 0.9), x32),
    "clamp_reshape": (lambda x: jax.lax.clamp(-1.0, x, 2.0).reshape(6, 4) * 3
                      + jnp.isfinite(x).reshape(6, 4), x32),
    "reduce_bool": (lambda x: jnp.any(x > 1, axis=1) | jnp.all(x < 2, axis=1), x32),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), x32),
    "argmax": (lambda x: jnp.argmax(x * 2, axis=1), x32),
    # -- indexing (random operands: indices in [-20, 20], many out of bounds) ------------
    "gather_take": (lambda x, i: x[i] * 2, b32, i32[0, :4]),
    "gather_rows": (lambda m, i: m[i, 1:4] + 1, x32, i32[0]),
    "gather_2d_index": (lambda m, i: m[i[:, 0], i[:, 1]] * 3, x32, i32[:, :2]),
    "gather_batched": (jax.vmap(lambda row, i: row[i] * 2), x32, i32[:, 0]),
    "gather_u8_index": (lambda x, i: x[i] + 1, b32, np.arange(5, dtype=np.uint8)),
    "gather_complex": (lambda z, i: z[i] * 2, b32.astype(C64), i32[0, :4]),
    "dynamic_slice": (lambda x, i: jax.lax.dynamic_slice(x * 2, (i, i), (2, 3)), x32, np.int32(2)),
    "dynamic_slice_u32": (lambda x, i: jax.lax.dynamic_slice(x, (i, i), (3, 2)) * 2, x32,
                          np.uint32(1)),
    "dynamic_slice_computed": (lambda x: jax.lax.dynamic_slice(x * 2, (x[0, 0].astype(jnp.int32),
                                                                       1), (2, 2)), x32),
    "dus": (lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i, 2)), x32,
            np.ones((2, 3), np.float32), np.int32(1)),
    "dus_computed": (lambda x, u, i: jax.lax.dynamic_update_slice(x * 2, u + 1, (i, i)), x32,
                     x32[:3, :2], np.int32(5)),
    "dus_then_add": (lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i,)) * 2 + 1, b32,
                     b32[:3], np.int32(4)),
    "dus_bool": (lambda x, u, i: jax.lax.dynamic_update_slice(x > 0, u < 0, (i, 0)), x32,
                 x32[:1], np.int32(-3)),
    "scatter_scalar_set": (lambda x, v, i: x.at[i].set(v), b32, np.float32(7), np.int32(2)),
    "scatter_add": (lambda x, i, u: x.at[i].add(u), b32, i32[0, :6], b32),
    "scatter_set_rows": (lambda m, i, u: m.at[i].set(u), x32, i32[0, :3], x32[:3]),
    "scatter_mul_cols": (lambda m, i, u: m.at[:, i].multiply(u), x32, i32[0, :3], x32[:, :3]),
    "scatter_max_int": (lambda x, i, u: x.at[i].max(u), i32[0], i32[1, :5], i32[2, :5]),
    "scatter_min_bf16": (lambda x, i, u: x.at[i].min(u), b32.astype(BF16), i32[0, :4],
                         b32[:4].astype(BF16)),
    "scatter_2d_index": (lambda m, i, u: m.at[i[:, 0], i[:, 1]].add(u), x32, i32[:, :2],
                         b32[:4]),
    "scatter_complex": (lambda z, i, u: z.at[i].add(u), b32.astype(C64), i32[0, :3],
                        b32[:3].astype(C64)),
    "scatter_batched": (jax.vmap(lambda row, i, v: row.at[i].add(v)), x32, i32[:, 0], b32[:4]),
    "scatter_fn": (lambda x, i: x.at[i].apply(lambda v: v * v + 1), b32, i32[0, :4]),
    # -- complex ---------------------------------------------------------------------------
    "c64_arith": (lambda a, b: (a + b) * a - a / b - (-b), b32.astype(C64), b32.astype(C64)),
    "c64_exp_log": (lambda z: jnp.exp(z) + jnp.log(z) * 2, b32.astype(C64)),
    "c64_sqrt_abs": (lambda z: jnp.sqrt(z) * jnp.abs(z) + jax.lax.rsqrt(z), b32.astype(C64)),
    "c64_trig": (lambda z: jnp.sin(z) + jnp.cos(z) * jnp.tan(z) - jnp.tanh(z), b32.astype(C64)),
    "c64_sign_square": (lambda z: jnp.sign(z) + jnp.square(z) + jnp.conj(z), b32.astype(C64)),
    "c64_expm1_log1p": (lambda z: jnp.expm1(z) * jnp.log1p(z), b32.astype(C64)),
    "c64_logistic": (lambda z: jax.nn.sigmoid(z), b32.astype(C64)),
    "c64_compare_select": (lambda a, b: jnp.where((a == b) | (a != a * 2), a, b * 2),
                           b32.astype(C64), b32.astype(C64)),
    "c64_parts": (lambda a: (jnp.real(a) * 2, jnp.imag(a) + 1,
                             jax.lax.complex(jnp.imag(a), jnp.real(a))), b32.astype(C64)),
    "c64_convert": (lambda a, x: (a.astype(jnp.float32), (a * 3).astype(jnp.int32),
                                  a.astype(bool), x.astype(jnp.complex64) + a,
                                  (x > 0).astype(jnp.complex64) * a), b32.astype(C64), b32),
    "c64_iota_const": (lambda a: a + jnp.arange(6, dtype=jnp.complex64)
                       + jnp.array([1 + 2j, 3, -1j, 0, 5, 6j], jnp.complex64), b32.astype(C64)),
    "c64_int_power": (lambda a: jax.lax.integer_pow(a, 3) + a ** 2, b32.astype(C64)),
    "c128_arith": (lambda a, b: (a * b + a) / (b - 1), b32.astype(C128), b32.astype(C128)),
    "c128_math": (lambda z: jnp.exp(z) * jnp.sqrt(z) + jnp.log(z) - jnp.tanh(z) * jnp.sin(z),
                  b32.astype(C128)),
    "c128_to_c64": (lambda z: z.astype(jnp.complex64).astype(jnp.complex128) - z,
                    b32.astype(C128)),
    "c64_sum": (lambda z: jnp.sum(z * z, axis=0), x32.astype(C64)),
    # -- more elementwise ops --------------------------------------------------------------
    "popcnt_clz": (lambda x: jax.lax.population_count(x) + jax.lax.clz(x), i32),
    "popcnt_clz_u16": (lambda x: jax.lax.population_count(x) - jax.lax.clz(x),
                       (i32 * 1000).astype(np.uint16)),
    "bitcast_same": (lambda x: jax.lax.bitcast_convert_type(x * 2, jnp.int32) + 1, x32),
    "bitcast_narrow": (lambda x: jax.lax.bitcast_convert_type(x * 2, jnp.uint8), x32),
    "bitcast_wide": (lambda x: jax.lax.bitcast_convert_type(x, jnp.float32) * 2,
                     (i32.reshape(4, 3, 2) * 3000).astype(np.int16)),
    "bitcast_bf16": (lambda x: jax.lax.bitcast_convert_type(x * 2, jnp.int16), x32.astype(BF16)),
    "bitcast_f16": (lambda x: jax.lax.bitcast_convert_type(x, jnp.float16) * 2,
                    (i32 * 1000).astype(np.uint16)),
    "bitcast_f64": (lambda x: jax.lax.bitcast_convert_type(x + 1, jnp.int64) >> 3,
                    x32.astype(np.float64)),
    "reduce_precision": (lambda x: jax.lax.reduce_precision(x * 1.37, 5, 10)
                         + jax.lax.reduce_precision(x * 1e20, 4, 2), x32),
    "reduce_precision_f64": (lambda x: jax.lax.reduce_precision(x * 1.37e10, 5, 3),
                             x32.astype(np.float64)),
    "real_imag_of_real": (lambda x: jnp.real(x) + jnp.imag(x), x32),
    "f16_math": (lambda x: jnp.sqrt(jnp.abs(x)) * jnp.sin(x) + (x > 1), x32.astype(F16)),
    "f16_convert": (lambda x: (x.astype(jnp.float32) * 3, x.astype(jnp.int8),
                               (x * 100).astype(jnp.int32).astype(jnp.float16)), x32.astype(F16)),
    "f16_from_f64": (lambda x: (x * 1.1).astype(jnp.float16) + 1, x32.astype(np.float64)),
    "f16_constants": (lambda x: x * jnp.array([1.5, -2, 3e-5, 6e4, 0.1, 7], jnp.float16), x32[0].astype(F16)),
    "zero_size": (lambda x, i: (x[i] * 2, jnp.exp(x[:0])), x32, i32[0, :0]),
    "scalar": (lambda x, y: jnp.exp(x) * y, np.float32(1.5), np.float32(2.0)),
}
# Cancelling chains (grad_chain, large, math: a sum of terms up to 40 in magnitude) err by a
# few ULPs of their terms, not of the result; reductions sum sequentially where the reference
# sums pairwise.
TOLERANCE = {"grad_chain": 1e-6, "large": 1e-6, "reduce_sum": 1e-5, "reduce_bf16": 0.0,
             "softmax": 1e-6, "c64_sum": 1e-5, "math": 1e-5}
# Complex functions: NumPy's complex64 ones run in float32 (libm's cexpf ...), ours in
# float64; results agree within a few ULPs of the magnitude, more where a sum cancels.
ULPS = {"c64_logistic": 16, "c64_trig": 8, "c64_expm1_log1p": 8, "c128_math": 8,
        "c64_sign_square": 6}
F16_CASES = [n for n in CASES if n.startswith("f16") or n == "bitcast_f16"]


# Cases about one op (by name prefix): the fusions checked must hold it.
_CASE_OPS = (("gather", "gather"), ("dynamic_slice", "dynamic_slice"),
             ("dus", "dynamic_update_slice"), ("scatter", "scatter"),
             ("bitcast", "bitcast_convert"), ("reduce_precision", "reduce_precision"),
             ("popcnt", "popcnt"), ("c64_parts", "complex"), ("c64_compare", "compare"))


@pytest.mark.parametrize("name", list(CASES))
def test_fusion_matches_reference(name):
    f, *args = CASES[name]
    # The grad chain's long sums of products of sin/cos/tanh cancel to results far below
    # their terms: mathlib's few-ULP errors in the terms show as an absolute error there.
    atol = TOLERANCE.get(name, 0.0)
    opcodes = _check(f, *args, ulps=ULPS.get(name, 4), atol=atol)
    for prefix, opcode in _CASE_OPS:
        if name.startswith(prefix):
            assert opcode in opcodes, opcodes


def test_reshape_keeping_the_minor_dimension_reads_contiguous_vectors():
    """A 2x2 pool's gradient (64, 14, 2, 14, 2, 32) -> (64, 28, 28, 32): the loop over the
    kept minor dimension loads whole vectors, no per-element index division or gather."""
    h = np.zeros((64, 28, 28, 32), np.float32)
    d = np.zeros((64, 14, 14, 32), np.float32)
    (op,) = _fusions(CASES["reshape_pool_grad"][0], h, d)
    optimized = emitter.compile_fusion(op).llvm_ir
    assert "masked.gather" not in optimized
    assert re.search(r"load <\d+ x float>", optimized)


@pytest.mark.parametrize("name", F16_CASES)
def test_float16_fusions_without_f16c(name, f16c):
    # The float16 conversions as integer bit arithmetic (hosts without F16C) agree too.
    f, *args = CASES[name]
    assert _check(f, *args)


def _run1(f, *args):
    """The single fusion of `f` compiled and run on `args`."""
    (op,) = _fusions(f, *args)
    return emitter.compile_fusion(op)(*args)


def test_multi_output_fusion():
    # XLA CPU forms no multi-output fusions; build one by hand: (x + y, x * y) of different
    # dtypes and one of them broadcast.
    f32 = ir.TensorType((2, 3), np.float32)
    region, b = ir.new_region([f32, ir.TensorType((3,), np.float32)])
    x, v = region.block.args
    y = b.one("stablehlo.broadcast_in_dim", [v], f32, broadcast_dimensions=(1,))
    s = b.one("stablehlo.add", [x, y], f32)
    p = b.one("stablehlo.convert", [b.one("stablehlo.multiply", [x, y], f32)],
              ir.TensorType((2, 3), np.int32))
    b.ret([s, p])
    outer = [ir.Value(a.type) for a in region.block.args]
    op = ir.Op(fusion.FUSION, outer, [ir.Value(s.type), ir.Value(p.type)],
               {"kind": "kLoop", "name": "multi", "computation": "fused_computation"}, [region])
    xs = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    vs = np.array([1.5, -2.0, 4.0], np.float32)
    got = emitter.compile_fusion(op)(xs, vs)
    np.testing.assert_array_equal(got[0], xs + vs)
    np.testing.assert_array_equal(got[1], (xs * vs).astype(np.int32))
    for g, w in zip(got, _reference(op, [xs, vs]), strict=True):
        np.testing.assert_array_equal(g, w)


def test_integer_division_by_zero_and_overflow():
    x = np.array([7, -7, np.iinfo(np.int32).min, 5, 0], np.int32)
    y = np.array([0, 0, -1, -1, 0], np.int32)
    q, r = (_run1(f, x, y) for f in (jax.lax.div, jax.lax.rem))
    np.testing.assert_array_equal(q, [-1, -1, np.iinfo(np.int32).min, -5, -1])
    np.testing.assert_array_equal(r, [7, -7, 0, 0, 0])


def test_float_to_int_saturates_and_shifts_out_of_range():
    x = np.array([np.nan, 1e10, -1e10, -2.7, 2.7], np.float32)
    (op,) = _fusions(lambda a: a.astype(jnp.int8), x)
    np.testing.assert_array_equal(emitter.compile_fusion(op)(x), [0, 127, -128, -2, 2])
    s = np.array([-8, 8, 40, -1, 3], np.int32)
    v = np.array([-8, -8, -8, 5, -8], np.int32)
    np.testing.assert_array_equal(_run1(jax.lax.shift_left, v, s), [0, -2048, 0, 0, -64])
    np.testing.assert_array_equal(_run1(jax.lax.shift_right_arithmetic, v, s),
                                  [-1, -1, -1, 0, -1])
    np.testing.assert_array_equal(_run1(jax.lax.shift_right_logical, v, s),
                                  [0, (2**32 - 8) >> 8, 0, 0, (2**32 - 8) >> 3])


def test_max_min_propagate_nan_and_order_zeros():
    x = np.array([np.nan, 1.0, -0.0, 0.0, 2.0], np.float32)
    y = np.array([1.0, np.nan, 0.0, -0.0, 3.0], np.float32)
    mx, mn = (_run1(f, x, y) for f in (jnp.maximum, jnp.minimum))
    np.testing.assert_array_equal(np.signbit(mx), [False, False, False, False, False])
    np.testing.assert_array_equal(mx[2:], [0.0, 0.0, 3.0])
    assert np.isnan(mx[:2]).all() and np.isnan(mn[:2]).all()
    np.testing.assert_array_equal(np.signbit(mn[2:4]), [True, True])


def test_bfloat16_rounds_to_nearest_even():
    # 1 + 2**-8 is halfway between two bfloat16 values: ties go to the even one (1.0).
    x = np.array([1.0, 1.0, 3.0], np.float32)
    y = np.array([2.0 ** -8, 3 * 2.0 ** -8, 2.0 ** -7], np.float32)
    got = _run1(lambda a, b: (a + b).astype(BF16), x, y)
    np.testing.assert_array_equal(got.astype(np.float32), (x + y).astype(BF16).astype(np.float32))


def test_float64_to_float16_rounds_once(f16c):
    # Just above a float16 tie: float32 would round it onto the tie, then to even (down).
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40), 70000.0])
    got = _run1(lambda a: (a * 1).astype(F16), x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(F16))
    assert got[0] == np.float16(1 + 2.0 ** -10)


# -- single-op fusions (ops JAX programs rarely fuse, or with chosen inputs) ---------------

def _single_op_fusion(opcode: str, operand_types: list[ir.TensorType],
                      result_type: ir.TensorType, **attributes) -> ir.Op:
    """A kLoop fusion holding one `opcode` op on its parameters."""
    region, b = ir.new_region(operand_types)
    b.ret([b.one(opcode, list(region.block.args), result_type, **attributes)])
    outer = [ir.Value(t) for t in operand_types]
    return ir.Op(fusion.FUSION, outer, [ir.Value(result_type)],
                 {"kind": "kLoop", "name": opcode, "computation": "fused_computation"},
                 [region])


_SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e-30, 30.0])


def _reals(rng, n, lo=-6.0, hi=6.0):
    return np.concatenate([rng.uniform(lo, hi, n), _SPECIALS])


def _complexes(rng, n):
    return (rng.standard_normal(n) * 2 + 1j * rng.standard_normal(n) * 2)


def _ints(rng, n, lo=-9, hi=9):
    return rng.integers(lo, hi, n, endpoint=True)


# (opcode, operand dtypes, result dtype or None (the first operand's), input makers, ULPs)
SINGLE_OPS = {
    "erfc": ("chlo.erfc", ["f32"], None, [lambda r, n: _reals(r, n, -6, 12)], 2),
    # Cephes' erfc (SciPy) is ~10 ULPs off beyond 3 (see test_erfc_float64_accuracy).
    "erfc_f64": ("chlo.erfc", ["f64"], None, [lambda r, n: _reals(r, n, -6, 3)], 16),
    "erfc_bf16": ("chlo.erfc", ["bf16"], None, [_reals], 1),
    "asinh": ("chlo.asinh", ["f32"], None, [lambda r, n: _reals(r, n, -1e4, 1e4)], 2),
    "asinh_f64": ("chlo.asinh", ["f64"], None, [_reals], 2),
    "acosh_f64": ("chlo.acosh", ["f64"], None, [lambda r, n: _reals(r, n, 0.5, 50)], 2),
    "acosh_f16": ("chlo.acosh", ["f16"], None, [lambda r, n: _reals(r, n, 0.5, 50)], 1),
    "atanh": ("chlo.atanh", ["f32"], None, [lambda r, n: _reals(r, n, -1.1, 1.1)], 2),
    "atanh_f64": ("chlo.atanh", ["f64"], None, [lambda r, n: _reals(r, n, -1.1, 1.1)], 2),
    # Cephes' i1e (SciPy, the reference) is itself ~12 ULPs off in float64.
    "i1e": ("chlo.bessel_i1e", ["f32"], None, [lambda r, n: _reals(r, n, -60, 60)], 2),
    "i1e_f64": ("chlo.bessel_i1e", ["f64"], None, [lambda r, n: _reals(r, n, -60, 60)], 16),
    "zeta": ("chlo.zeta", ["f32", "f32"], None,
             [lambda r, n: _reals(r, n, 1, 12), lambda r, n: _reals(r, n, -3, 8)], 4),
    "zeta_f64": ("chlo.zeta", ["f64", "f64"], None,
                 [lambda r, n: _reals(r, n, 1, 12), lambda r, n: _reals(r, n, 0.1, 8)], 4),
    # exp(lgamma(m + 1)) and zeta in float32 (XLA's decomposition): a few ulps each.
    "polygamma": ("chlo.polygamma", ["f32", "f32"], None,
                  [lambda r, n: np.concatenate([_ints(r, n, -1, 5), _SPECIALS]),
                   lambda r, n: _reals(r, n, 0.05, 10)], 8),
    "polygamma_f64": ("chlo.polygamma", ["f64", "f64"], None,
                      [lambda r, n: np.concatenate([_ints(r, n, 0, 4), _SPECIALS]),
                       lambda r, n: _reals(r, n, 0.05, 10)], 8),
    "next_after": ("chlo.next_after", ["f32", "f32"], None, [_reals, _reals], 0),
    "next_after_f64": ("chlo.next_after", ["f64", "f64"], None, [_reals, _reals], 0),
    "next_after_f16": ("chlo.next_after", ["f16", "f16"], None, [_reals, _reals], 0),
    "next_after_bf16": ("chlo.next_after", ["bf16", "bf16"], None, [_reals, _reals], 0),
    "conj_real": ("chlo.conj", ["f32"], None, [_reals], 0),
    "power_i32": ("stablehlo.power", ["i32", "i32"], None,
                  [lambda r, n: _ints(r, n), lambda r, n: _ints(r, n, -3, 40)], 0),
    "power_i8": ("stablehlo.power", ["i8", "i8"], None, [_ints, _ints], 0),
    "power_u16": ("stablehlo.power", ["u16", "u16"], None,
                  [lambda r, n: _ints(r, n, 0, 20), lambda r, n: _ints(r, n, 0, 20)], 0),
    "power_i64": ("stablehlo.power", ["i64", "i64"], None,
                  [lambda r, n: _ints(r, n, -40, 40), lambda r, n: _ints(r, n, -2, 70)], 0),
    "c64_asin": ("chlo.asin", ["c64"], None, [_complexes], 4),
    "c64_acos": ("chlo.acos", ["c64"], None, [_complexes], 4),
    "c64_atan": ("chlo.atan", ["c64"], None, [_complexes], 4),
    "c128_asinh": ("chlo.asinh", ["c128"], None, [_complexes], 4),
    "c128_acosh": ("chlo.acosh", ["c128"], None, [_complexes], 4),
    "c128_atanh": ("chlo.atanh", ["c128"], None, [_complexes], 4),
    "c64_sinh": ("chlo.sinh", ["c64"], None, [_complexes], 4),
    "c128_cosh": ("chlo.cosh", ["c128"], None, [_complexes], 4),
    "c64_conj": ("chlo.conj", ["c64"], None, [_complexes], 0),
    # glibc's cpow (the reference) and ours differ by the error of b log(a), amplified
    # (and of exp: float64 exp is XLA's, up to 1.6 ULP).
    "c64_power": ("stablehlo.power", ["c64", "c64"], None, [_complexes, _complexes], 40),
    "c128_power": ("stablehlo.power", ["c128", "c128"], None, [_complexes, _complexes], 80),
    # Integer exponents below 100 in magnitude: binary powering, as NumPy. (Beyond,
    # NumPy's complex64 cpowf loses ~|b log a| ULPs; ours runs in float64.)
    "c64_power_int": ("stablehlo.power", ["c64", "c64"], None,
                      [_complexes, lambda r, n: _ints(r, n, -99, 99) + 0j], 4),
    "c128_power_int": ("stablehlo.power", ["c128", "c128"], None,
                       [_complexes, lambda r, n: _ints(r, n, -5, 5) + 0j], 2),
}
_DTYPES = {"f16": F16, "bf16": BF16, "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
           "c64": C64, "c128": C128, "i8": np.dtype(np.int8), "i32": np.dtype(np.int32),
           "i64": np.dtype(np.int64), "u16": np.dtype(np.uint16)}


@pytest.mark.parametrize("name", list(SINGLE_OPS))
def test_single_op_fusion_matches_reference(name):
    opcode, operand_dtypes, result_dtype, makers, ulps = SINGLE_OPS[name]
    rng = np.random.default_rng(7)
    with np.errstate(all="ignore"):
        columns = [make(rng, 500) for make in makers]
        size = min(len(c) for c in columns)
        operands = [np.asarray(c[:size]).astype(_DTYPES[d])
                    for c, d in zip(columns, operand_dtypes, strict=True)]
        types = [ir.TensorType((size,), a.dtype) for a in operands]
        result = ir.TensorType((size,), _DTYPES[result_dtype] if result_dtype else types[0].dtype)
        _check_op(_single_op_fusion(opcode, types, result), operands, ulps)


def test_integer_power_edge_cases():
    x = np.array([2, -2, 1, -1, -1, 0, 3, 7, -5], np.int32)
    y = np.array([31, 3, -5, -3, -4, -1, 20, 0, 1], np.int32)
    t = ir.TensorType((9,), np.int32)
    got = emitter.compile_fusion(_single_op_fusion("stablehlo.power", [t, t], t))(x, y)
    np.testing.assert_array_equal(got, [-2 ** 31, -8, 1, -1, 1, 0, np.int32(3 ** 20 % 2 ** 32
                                                                             - 2 ** 32), 1, -5])


# -- complex special values ----------------------------------------------------------------

_EDGES = [0.0, -0.0, 0.5, -3.0, 1e-20, np.inf, -np.inf, np.nan, 1e200]
# C99's values (glibc's, which NumPy calls) for zero, infinite and nan parts, signed zeros
# included. (Not for the inverse functions: see complexmath.py.)


@pytest.mark.parametrize("opcode", [
    "stablehlo.exponential", "stablehlo.log", "stablehlo.sqrt", "stablehlo.sine",
    "stablehlo.cosine", "stablehlo.tan", "stablehlo.tanh", "chlo.sinh", "chlo.cosh",
    "stablehlo.log_plus_one", "stablehlo.exponential_minus_one", "stablehlo.rsqrt",
    "stablehlo.sign", "stablehlo.logistic", "stablehlo.abs"])
def test_complex_special_values(opcode):
    z = np.array([complex(a, b) for a in _EDGES for b in _EDGES])
    t = ir.TensorType(z.shape, C128)
    result = ir.TensorType(z.shape, np.float64) if opcode == "stablehlo.abs" else t
    op = _single_op_fusion(opcode, [t], result)
    with np.errstate(all="ignore"):
        got = emitter.compile_fusion(op)(z)
        want = np.asarray(_reference(op, [z])[0])
    parts = [(got.real, want.real), (np.imag(got), np.imag(want))]
    bad = np.zeros(z.shape, bool)
    for g, w in parts:
        with np.errstate(invalid="ignore"):
            close = (g == w) | (np.isnan(g) & np.isnan(w)) | (
                np.abs(g - w) <= 8 * np.spacing(np.abs(w)))
        sign = (np.signbit(g) == np.signbit(w)) | np.isnan(w)
        bad |= ~(close & sign)
    assert not bad.any(), [(z[i], got[i], want[i]) for i in np.nonzero(bad)[0][:5]]


def test_complex_log_near_the_unit_circle():
    # log|z| for |z| close to 1 cancels; it must keep its relative accuracy there.
    from decimal import Decimal, localcontext
    theta = np.linspace(0.1, 3.0, 200)
    r = 1 + np.logspace(-15, -3, 200)
    z = r * np.exp(1j * theta)
    with localcontext() as ctx:
        ctx.prec = 60
        want = np.array([float((Decimal(v.real) ** 2 + Decimal(v.imag) ** 2).ln() / 2)
                         for v in z])
    (op,) = _fusions(lambda v: jnp.log(v), z)
    got = emitter.compile_fusion(op)(z).real
    np.testing.assert_allclose(got, want, rtol=4e-16)


def test_erfc_float64_accuracy():
    # Against erfc in 50-digit decimals (Maclaurin series of erf below 3, the continued
    # fraction above): within 4 ULPs down to 1e-290 (SciPy's erfc, the reference, is
    # hundreds of ULPs off out there).
    from decimal import Decimal, localcontext
    pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")

    def exact(value: float) -> float:
        if value <= -3:
            return 2 - exact(-value)
        x = Decimal(value)
        if abs(x) < 3:
            term, total, n = x, x, 0
            while abs(term) > Decimal(10) ** -45:
                n += 1
                term = -term * x * x / n
                total += term / (2 * n + 1)
            return float(1 - 2 / pi.sqrt() * total)
        frac = x
        for k in range(400, 0, -1):
            frac = x + Decimal(k) / 2 / frac
        return float((-x * x).exp() / (frac * pi.sqrt()))

    xs = np.linspace(-5, 25.8, 311)
    with localcontext() as ctx:
        ctx.prec = 50
        want = np.array([exact(v) for v in xs])
    t = ir.TensorType(xs.shape, np.float64)
    got = emitter.compile_fusion(_single_op_fusion("chlo.erfc", [t], t))(xs)
    assert (np.abs(got - want) <= 4 * np.spacing(want)).all()


# -- float16 without F16C ---------------------------------------------------------------------

def test_float16_bit_conversions_are_exact(f16c):
    # Every float16 value to float32 and back; float32 values to float16 rounded to nearest
    # even (ties, overflow to inf, subnormals, nan), against NumPy.
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    t16, t32 = ir.TensorType(every.shape, F16), ir.TensorType(every.shape, np.float32)
    wide = emitter.compile_fusion(_single_op_fusion("stablehlo.convert", [t16], t32))(every)
    np.testing.assert_array_equal(wide.view(np.uint32)[~np.isnan(every)],
                                  every.astype(np.float32).view(np.uint32)[~np.isnan(every)])
    assert np.isnan(wide[np.isnan(every)]).all()
    rng = np.random.default_rng(0)
    halfway = (every[np.isfinite(every)].astype(np.float64)[:-1]
               + np.diff(every[np.isfinite(every)].astype(np.float64)) / 2)
    x = np.concatenate([rng.standard_normal(20000).astype(np.float32) * 10.0 ** rng.integers(
        -9, 6, 20000), halfway.astype(np.float32), [65504, 65519.996, 65520, 1e-8, 2.0 ** -25,
                                                    2.0 ** -24 * 1.5, -0.0, np.inf, np.nan]
                        ]).astype(np.float32)
    t32, t16 = ir.TensorType(x.shape, np.float32), ir.TensorType(x.shape, F16)
    narrow = emitter.compile_fusion(_single_op_fusion("stablehlo.convert", [t32], t16))(x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(narrow.view(np.uint16)[~np.isnan(x)],
                                  want.view(np.uint16)[~np.isnan(x)])
    assert np.isnan(narrow[np.isnan(x)]).all()


def _assembly_without_f16c(op: ir.Op) -> str:
    """The fusion compiled for a generic x86-64 (which has no F16C)."""
    module = llvm.parse_assembly(str(emitter.build_module(op)))
    host.optimize(module)
    target = llvm.Target.from_triple("x86_64-unknown-linux-gnu")
    return target.create_target_machine(cpu="x86-64", features="", opt=2).emit_assembly(module)


def test_float16_needs_no_compiler_rt_without_f16c(monkeypatch):
    (op,) = _fusions(lambda x: jnp.exp(x) * x + (x * 1.0).astype(jnp.float16), x32.astype(F16))
    helpers = ("__extendhfsf2", "__truncsfhf2", "__gnu_h2f_ieee", "__gnu_f2h_ieee",
               "__truncdfhf2")
    monkeypatch.setattr(emitter, "F16C", True)
    with_f16c = _assembly_without_f16c(op)
    assert any(h in with_f16c for h in helpers)  # what the integer conversions avoid
    monkeypatch.setattr(emitter, "F16C", False)
    asm = _assembly_without_f16c(op)
    assert not any(h in asm for h in helpers)


# -- in place ---------------------------------------------------------------------------------

def _run_in_place(op: ir.Op, operands: list[np.ndarray], in_place: int) -> np.ndarray:
    """Runs fusion `op` with its result in the buffer of operand `in_place` (as the buffer
    assignment does for updates in place); returns that buffer."""
    n = len(operands)
    module = emitter.new_module("in_place")
    emitter.emit_fusion(module, op, "fused", frozenset({in_place, n}))
    compiled = llvm.parse_assembly(str(module))
    host.optimize(compiled)
    engine = llvm.create_mcjit_compiler(compiled, host.new_target_machine())
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (n + 1))(
        engine.get_function_address("fused"))
    buffers = [np.array(a, dtype=t.dtype) for a, t in zip(operands, op.operand_types,
                                                          strict=True)]
    fn(*[b.ctypes.data_as(ctypes.c_void_p) for b in buffers],
       buffers[in_place].ctypes.data_as(ctypes.c_void_p))
    return buffers[in_place]


def test_updates_in_place():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    u = -np.ones((2, 3), np.float32)
    (dus,) = _fusions(lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i, 2)), x, u,
                      np.int32(7))
    np.testing.assert_array_equal(_run_in_place(dus, [x, u, np.int32(7)], 0),
                                  _reference(dus, [x, u, np.int32(7)])[0])
    i = np.array([1, 1, 9, 0], np.int32)
    v = np.arange(4 * 6, dtype=np.float32).reshape(4, 6) + 100
    (scatter,) = [op for op in _fusions(lambda x, i, v: x.at[i].add(v), x, i, v)
                  if "scatter" in str(op.attributes["name"])]
    np.testing.assert_array_equal(_run_in_place(scatter, [x, i, v], 0),
                                  _reference(scatter, [x, i, v])[0])


def test_in_place_update_reading_its_buffer_is_left_to_the_reference():
    # x.at[1:3].set(x[0:2]) in place would read elements it already overwrote.
    x = np.arange(6, dtype=np.float32)
    (op,) = _fusions(lambda x, i: jax.lax.dynamic_update_slice(
        x, jax.lax.dynamic_slice(x, (i - 1,), (2,)), (i,)), x, np.int32(1))
    module = emitter.new_module("hazard")
    with pytest.raises(emitter.Unsupported):
        emitter.emit_fusion(module, op, "fused", frozenset({0, len(op.operands)}))
    emitter.emit_fusion(module, op, "fused_copy", frozenset())  # not in place: fine


# -- whole programs: nothing falls back ---------------------------------------------------------

PROGRAMS = {
    "scan_stack": (lambda x: jax.lax.scan(lambda c, r: (c + r, c * r), x[0], x)[1], x32),
    "scatter_add": (lambda x, i: (x * 2).at[i].add(1.0), x32, np.array([0, 3, 3, 9], np.int32)),
    "gather_vmap": (jax.vmap(lambda row, i: row[i] * 2), x32, np.array([1, 2, 3, 9], np.int32)),
    "complex": (lambda z: jnp.exp(z) * jnp.abs(z) + jnp.sqrt(z) / (z + 1) - jnp.arcsinh(z),
                b32.astype(C64) - 2.5j),
    "special": (lambda x: jax.scipy.special.erfc(x) + jnp.arctanh(x / 9) + jax.lax.polygamma(
        1.0, jnp.abs(x) + 0.5) + jnp.nextafter(x, 0.0), x32),
    "float16": (lambda x: jnp.tanh(x) * 2 + x.astype(jnp.float32).sum(), x32.astype(F16)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_programs_run_natively(name):
    f, *args = PROGRAMS[name]
    with jax.config.override("jax_enable_x64", _x64(*args)):
        module = optimize.optimize(jax.jit(f).lower(*args).compiler_ir())
    executable = backends.get_backend("llvm").compile(module)
    got = executable.execute([np.asarray(a) for a in args])
    want = backends.get_backend("reference").compile(module).execute([np.asarray(a)
                                                                        for a in args])
    for g, w in zip(got, want, strict=True):
        _assert_close(np.asarray(g), w, 8, 1e-6, name)
    assert not executable.program.fallbacks, [fb.op.opcode for fb in
                                              executable.program.fallbacks]


# -- every elementwise op and dtype StableHLO allows -------------------------------------------

_ALL_DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32,
                                     np.int64, np.uint64)] + [F16, BF16, np.dtype(np.float32),
                                                              np.dtype(np.float64), C64, C128]
_FLOAT_OPS = {"exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
              "sine", "cosine", "tan", "tanh", "sqrt", "rsqrt", "acos", "acosh", "asin",
              "asinh", "atan", "atanh", "cosh", "sinh"}
_REAL_FLOAT_OPS = {"cbrt", "floor", "ceil", "round_nearest_afz", "round_nearest_even",
                   "bessel_i1e", "digamma", "erf", "erf_inv", "erfc", "lgamma", "next_after",
                   "polygamma", "zeta", "atan2", "is_finite"}
_INT_OPS = {"shift_left", "shift_right_arithmetic", "shift_right_logical", "popcnt",
            "count_leading_zeros"}
_LOGICAL_OPS = {"and", "or", "xor", "not"}
_OWN_TESTS = {"compare", "convert", "bitcast_convert", "reduce_precision", "select", "clamp",
              "complex", "real", "imag", "abs", "is_finite"}


def _allowed(name: str, dt: np.dtype) -> bool:
    """Whether StableHLO (and the reference backend) has `name` on `dt` operands."""
    if name in _FLOAT_OPS:
        return dt.kind in "fcV"
    if name in _REAL_FLOAT_OPS:
        return dt.kind in "fV"
    if name in _INT_OPS:
        return dt.kind in "iu"
    if name in _LOGICAL_OPS:
        return dt.kind in "iub"
    if name in ("maximum", "minimum"):
        return dt.kind != "c"
    if name == "remainder":
        return dt.kind not in "cb"
    return dt.kind != "b" or name in ("add", "multiply", "maximum", "minimum")


def _arity(name: str) -> int:
    return 2 if name in ("add", "subtract", "multiply", "divide", "remainder", "maximum",
                         "minimum", "power", "atan2", "and", "or", "xor", "shift_left",
                         "shift_right_arithmetic", "shift_right_logical", "next_after",
                         "polygamma", "zeta") else 1


@pytest.mark.parametrize("opcode", sorted(o for o in fusion._ELEMENTWISE
                                          if o.split(".")[-1] not in _OWN_TESTS))
def test_every_elementwise_op_runs_natively(opcode):
    # One fusion per op, one root per dtype the op allows. (Accuracy has its own tests: the
    # bound here is loose for the transcendental functions.)
    name = opcode.split(".")[-1]
    dts = [dt for dt in _ALL_DTYPES if _allowed(name, dt)]
    types = [ir.TensorType((32,), dt) for dt in dts for _ in range(_arity(name))]
    region, b = ir.new_region(types)
    args = iter(region.block.args)
    roots = [b.one(opcode, [next(args) for _ in range(_arity(name))], ir.TensorType((32,), dt))
             for dt in dts]
    b.ret(roots)
    op = ir.Op(fusion.FUSION, [ir.Value(t) for t in types], [ir.Value(r.type) for r in roots],
               {"kind": "kLoop", "name": name, "computation": "c"}, [region])
    rng = np.random.default_rng(3)
    operands = [_operand(t, rng) for t in types]
    if name in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
        operands = [o % 70 - 3 if i % 2 else o for i, o in enumerate(operands)]
    with np.errstate(all="ignore"):
        _check_op(op, operands, ulps=64, atol=1e-12)


def test_every_conversion():
    rng = np.random.default_rng(4)
    for src in _ALL_DTYPES:
        t = ir.TensorType((64,), src)
        x = _operand(t, rng)
        if src.kind in "fcV":
            with np.errstate(over="ignore"):
                x = (x * 10.0 ** rng.integers(-3, 12, 64)).astype(src)
            x[:4] = np.array([np.nan, np.inf, -np.inf, -0.0]).astype(src)
        region, b = ir.new_region([t])
        roots = [b.one("stablehlo.convert", [region.block.args[0]], ir.TensorType((64,), dst))
                 for dst in _ALL_DTYPES]
        b.ret(roots)
        op = ir.Op(fusion.FUSION, [ir.Value(t)], [ir.Value(r.type) for r in roots],
                   {"kind": "kLoop", "name": f"from_{src}", "computation": "c"}, [region])
        with np.errstate(all="ignore"):
            _check_op(op, [x], ulps=0)


@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "LE", "GT", "GE"])
def test_every_comparison(direction):
    rng = np.random.default_rng(5)
    dts = [dt for dt in _ALL_DTYPES if dt.kind != "c" or direction in ("EQ", "NE")]
    types = [ir.TensorType((64,), dt) for dt in dts for _ in range(2)]
    region, b = ir.new_region(types)
    args = region.block.args
    bools = ir.TensorType((64,), np.bool_)
    roots = [b.one("stablehlo.compare", [args[2 * k], args[2 * k + 1]], bools,
                   comparison_direction=ir.Enum("comparison_direction", direction))
             for k in range(len(dts))]
    roots += [b.one("stablehlo.compare", [args[2 * k], args[2 * k + 1]], bools,
                    comparison_direction=ir.Enum("comparison_direction", direction),
                    compare_type=ir.Enum("comparison_type", "TOTALORDER"))
              for k, dt in enumerate(dts) if dt.kind in "fV"]
    b.ret(roots)
    op = ir.Op(fusion.FUSION, [ir.Value(t) for t in types], [ir.Value(r.type) for r in roots],
               {"kind": "kLoop", "name": direction, "computation": "c"}, [region])
    operands = [_operand(t, rng) for t in types]
    for k, dt in enumerate(dts):
        x, y = operands[2 * k], operands[2 * k + 1]
        y[::3] = x[::3]
        if dt.kind in "fV":
            x[:4] = np.array([np.nan, 0.0, -0.0, np.nan]).astype(dt)
            y[:4] = np.array([1.0, -0.0, 0.0, np.nan]).astype(dt)
    _check_op(op, operands, ulps=0)


def test_round_half_away_from_zero_as_xla():
    # XLA rounds with llvm.round: 0.49999997 -> 0 and 8388609 stays (as real JAX does). The
    # reference backend's floor(|x| + 0.5) gives 1 and 8388610 there, so this is checked
    # against JAX's values rather than against it.
    x = np.array([0.49999997, 8388609.0, 2.5, -2.5, 1.5, -0.0, np.nan], np.float32)
    t = ir.TensorType(x.shape, np.float32)
    got = emitter.compile_fusion(_single_op_fusion("stablehlo.round_nearest_afz", [t], t))(x)
    np.testing.assert_array_equal(got, [0.0, 8388609.0, 3.0, -3.0, 2.0, -0.0, np.nan])
    assert np.signbit(got[5])


def _fused_multiply_add(x, y, z, sign_product=1.0, sign_addend=1.0):
    """x*y + z rounded once to float32 (exact in float64, then one rounding)."""
    wide = [np.asarray(v, np.float64) for v in (x, y, z)]
    return (sign_product * wide[0] * wide[1] + sign_addend * wide[2]).astype(np.float32)


@pytest.mark.parametrize("form", ["x*y+z", "z+x*y", "x*y-z", "z-x*y"])
def test_product_read_once_by_a_sum_is_one_fma(form):
    rng = np.random.default_rng(3)
    x, y, z = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    got = np.asarray(jax.jit(lambda x, y, z: eval(form))(x, y, z))
    signs = {"x*y+z": (1, 1), "z+x*y": (1, 1), "x*y-z": (1, -1), "z-x*y": (-1, 1)}[form]
    # (Two roundings differ from one on about a quarter of these inputs.)
    np.testing.assert_array_equal(got, _fused_multiply_add(x, y, z, *signs))


def test_product_read_twice_is_rounded_on_its_own():
    rng = np.random.default_rng(4)
    x, y, z = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    product, total = jax.jit(lambda x, y, z: (x * y, x * y + z))(x, y, z)
    np.testing.assert_array_equal(np.asarray(product), x * y)
    np.testing.assert_array_equal(np.asarray(total), x * y + z)
