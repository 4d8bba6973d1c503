"""The elemental emitter: fusions of optimized modules compiled to LLVM, against the reference
backend running the same fusion."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends
from justjax._src.backends.llvm import emitter
from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.passes import fusion, optimize

BF16, F16 = np.dtype(dtypes.bfloat16), np.dtype(dtypes.float16)


def _host_has_f16c() -> bool:
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    return "+f16c" in llvm.get_host_cpu_features().flatten()


# float16 conversions compile to F16C instructions; without them LLVM calls compiler-rt
# helpers this JIT does not link (the backend's issue #9 work will provide them).
needs_f16c = pytest.mark.skipif(not _host_has_f16c(), reason="host CPU has no F16C")
F16_CASES = {"f16"}


def _fusions(f, *args) -> list[ir.Op]:
    """The fusions of `f`'s optimized module (lowered with x64 when an argument is 64-bit)."""
    x64 = any(np.asarray(a).dtype.itemsize == 8 for a in args)
    with jax.config.override("jax_enable_x64", x64):
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
    if t.dtype == np.bool_:
        return rng.random(t.shape) < 0.5
    if t.dtype.kind in "iu":
        info = np.iinfo(t.dtype)
        lo, hi = max(info.min, -20), min(info.max, 20)
        return rng.integers(lo, hi, t.shape, endpoint=True).astype(t.dtype)
    return (rng.standard_normal(t.shape) * 3).astype(t.dtype)


def _check(f, *args, ulps: int = 4, atol: float = 0.0) -> int:
    ops = _fusions(f, *args)
    assert ops, "no fusion"
    rng = np.random.default_rng(0)
    for op in ops:
        operands = [_operand(t, rng) for t in op.operand_types]
        got = emitter.compile_fusion(op)(*operands)
        got = got if isinstance(got, tuple) else (got,)
        want = _reference(op, operands)
        for g, w in zip(got, want, strict=True):
            w = np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape
            if g.dtype.kind in "biu":
                np.testing.assert_array_equal(g, w)
            else:
                gf, wf = g.astype(np.float64), w.astype(np.float64)
                np.testing.assert_array_equal(np.isnan(gf), np.isnan(wf))
                spacing = np.abs(np.spacing(w.astype(np.float32 if g.dtype in (BF16, F16)
                                                     else g.dtype))).astype(np.float64)
                if g.dtype in (BF16, F16):
                    spacing = np.abs(wf) * (2.0 ** -7 if g.dtype == BF16 else 2.0 ** -10) + 1e-30
                ok = np.isnan(wf) | (gf == wf) | (np.abs(gf - wf) <= ulps * spacing + atol)
                assert ok.all(), (op.attributes.get("name"), gf[~ok][:5], wf[~ok][:5])
    return len(ops)


x32 = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
b32 = np.arange(6, dtype=np.float32)
i32 = np.arange(-12, 12, dtype=np.int32).reshape(4, 6)


def _grad_chain(x):
    def f(y):
        for _ in range(3):
            y = jnp.sin(y) + 0.1 * jnp.cos(y * y) - jnp.tanh(y)
        return jnp.sum(y)
    return jax.grad(f)(x)


CASES = {
    "chain": (lambda x: jnp.exp(x) * 2 + jnp.log1p(jnp.abs(x)) - jnp.tanh(x), x32),
    "bias": (lambda x, b: jnp.maximum(x + b, 0.0), x32, b32),
    "transpose": (lambda x: jnp.sin(x.T) * 2, x32),
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
}
# Cancelling chains (grad_chain, large) err by a few ULPs of their terms, not of the result;
# reductions sum sequentially where the reference sums pairwise.
TOLERANCE = {"grad_chain": 1e-6, "large": 1e-6, "reduce_sum": 1e-5, "reduce_bf16": 0.0, "softmax": 1e-6}


@pytest.mark.parametrize("name", [pytest.param(n, marks=[needs_f16c] if n in F16_CASES else [])
                                  for n in CASES])
def test_fusion_matches_reference(name):
    f, *args = CASES[name]
    # The grad chain's long sums of products of sin/cos/tanh cancel to results far below
    # their terms: mathlib's few-ULP errors in the terms show as an absolute error there.
    atol = TOLERANCE.get(name, 0.0)
    assert _check(f, *args, atol=atol) >= 1


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


@needs_f16c
def test_float64_to_float16_rounds_once():
    # Just above a float16 tie: float32 would round it onto the tie, then to even (down).
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40), 70000.0])
    got = _run1(lambda a: (a * 1).astype(F16), x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(F16))
    assert got[0] == np.float16(1 + 2.0 ** -10)
