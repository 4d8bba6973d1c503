"""dot_general, the output fusion and convolution on the llvm backend (`kernels/dot.py`,
`kernels/conv.py`), against the reference backend on the same module.

Each case must run natively (no dot/convolution/output fusion handed back to the reference
backend). Float dots and convolutions run twice: through BLAS (the size threshold lowered
to 0) and through the loop kernel (threshold out of reach). Integers and bools must agree
bit for bit; floats within a few ULPs of the result's scale (summation orders differ).
"""
from __future__ import annotations

import zlib
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src import backends
from justjax._src.backends.llvm.codegen import emitter
from justjax._src.backends.llvm.kernels import conv as kernels_conv
from justjax._src.backends.llvm.kernels import dot as kernels_dot
from justjax._src.backends.llvm.kernels import dot_vector
from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.passes import fusion, optimize
from tests.harness import hand_built_module

F16, BF16 = np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
I8, I32, U8, U32 = (np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.uint32))
BOOL = np.dtype(np.bool_)
NATIVE = ("stablehlo.dot_general", "stablehlo.convolution")


def _has_complex_memory() -> bool:
    try:
        emitter.memory_type(C64)
        return True
    except emitter.Unsupported:
        return False


needs_complex = pytest.mark.skipif(not _has_complex_memory(),
                                   reason="the elemental emitter has no complex memory type")


@pytest.fixture
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """'blas', 'loop' or 'vector': the float kernel the cases must take where it applies
    (the vector loops of `kernels/dot_vector.py` take float32/float64 dots of any size
    with 'vector', none otherwise)."""
    threshold = 0 if request.param == "blas" else 1 << 62
    monkeypatch.setattr(kernels_dot, "BLAS_MIN_WORK", threshold)
    vector = 1 << 62 if request.param == "vector" else -1
    monkeypatch.setattr(dot_vector, "MATVEC_WORK", vector)
    monkeypatch.setattr(dot_vector, "SMALL_MATMUL_WORK", vector)
    yield request.param


def _values(shape: tuple[int, ...], dt: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dt == BOOL:
        return rng.random(shape) < 0.4
    if dt.kind in "iu":
        info = np.iinfo(dt)
        # Wide enough that int8/uint8 products and sums wrap.
        return rng.integers(max(info.min, -100), min(info.max, 100), shape,
                            endpoint=True).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _compare(module: ir.Module, args: list[np.ndarray]) -> Any:
    """Runs `module` on both backends, compares the results; returns the llvm program."""
    want = backends.get_backend("reference").compile(module).execute(args)
    exe = backends.get_backend("llvm").compile(module)
    got = exe.execute(args)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
            continue
        wide = np.complex128 if g.dtype.kind == "c" else np.float64
        scale = float(np.max(np.abs(w.astype(wide)), initial=1.0))
        tol = {F16: 2e-3, BF16: 1.6e-2, F32: 4e-6, C64: 6e-6}.get(g.dtype, 1e-13)
        np.testing.assert_allclose(g.astype(wide), w.astype(wide), rtol=0, atol=tol * scale)
    fallbacks = [fb.op for fb in exe.program.fallbacks]
    mine = [op.opcode for op in fallbacks if op.opcode in NATIVE or (
        fusion.is_fusion(op) and any(o.opcode in NATIVE for o in op.regions[0].block.ops))]
    assert not mine, f"ran by the reference backend: {mine}"
    return exe.program


# ---------------------------------------------------------------------------------------------
# dot_general, hand-built (any dtypes and dimension numbers).

# name -> (lhs shape, rhs shape, (lhs batch, rhs batch, lhs contracting, rhs contracting))
DOTS: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, ...], ...]]] = {
    "matmul": ((5, 7), (7, 3), ((), (), (1,), (0,))),
    "lhs_transposed": ((7, 5), (7, 3), ((), (), (0,), (0,))),
    "rhs_transposed": ((5, 7), (3, 7), ((), (), (1,), (1,))),
    "both_transposed": ((7, 5), (3, 7), ((), (), (0,), (1,))),
    "vector_matrix": ((7,), (7, 3), ((), (), (0,), (0,))),
    "matrix_vector": ((5, 7), (7,), ((), (), (1,), (0,))),
    "inner": ((9,), (9,), ((), (), (0,), (0,))),
    "outer_k1": ((5,), (3,), ((), (), (), ())),
    "batched": ((4, 5, 7), (4, 7, 3), ((0,), (0,), (2,), (1,))),
    "batch_in_middle": ((5, 4, 7), (7, 4, 3), ((1,), (1,), (2,), (0,))),
    "two_batch_dims": ((2, 3, 4, 5), (3, 2, 5, 2), ((0, 1), (1, 0), (3,), (2,))),
    "contract_two_dims_crossed": ((2, 3, 4, 5), (4, 3, 6), ((), (), (1, 2), (1, 0))),
    "contract_two_dims": ((2, 3, 4), (3, 4, 6), ((), (), (1, 2), (0, 1))),
    "free_dims_split": ((2, 7, 3), (7, 4), ((), (), (1,), (0,))),
    "m_is_1": ((1, 64), (64, 9), ((), (), (1,), (0,))),
    "n_is_1": ((9, 64), (64, 1), ((), (), (1,), (0,))),
    "unit_dims": ((1, 5, 1, 7), (7, 1, 3), ((), (), (3,), (0,))),
    "zero_m": ((0, 7), (7, 3), ((), (), (1,), (0,))),
    "zero_k": ((5, 0), (0, 3), ((), (), (1,), (0,))),
    "zero_batch": ((0, 5, 7), (0, 7, 3), ((0,), (0,), (2,), (1,))),
    "scalar_result": ((1,), (1,), ((), (), (0,), (0,))),
}


def _dot_module(name: str, lhs_dt: np.dtype, rhs_dt: np.dtype, out_dt: np.dtype) -> ir.Module:
    ls, rs, (lb, rb, lc, rc) = DOTS[name]
    lfree = [d for d in range(len(ls)) if d not in lb + lc]
    rfree = [d for d in range(len(rs)) if d not in rb + rc]
    shape = [ls[d] for d in lb] + [ls[d] for d in lfree] + [rs[d] for d in rfree]
    numbers = ir.DotDimensionNumbers(lb, rb, lc, rc)

    def build(b: ir.Builder, x: ir.Value, y: ir.Value) -> list[ir.Value]:
        return [b.one("stablehlo.dot_general", [x, y], ir.TensorType(shape, out_dt),
                      dot_dimension_numbers=numbers)]

    return hand_built_module([ir.TensorType(ls, lhs_dt), ir.TensorType(rs, rhs_dt)], build)


def _run_dot(name: str, lhs_dt: np.dtype, rhs_dt: np.dtype, out_dt: np.dtype) -> Any:
    ls, rs, _ = DOTS[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}{lhs_dt}{rhs_dt}".encode()))
    module = _dot_module(name, lhs_dt, rhs_dt, out_dt)
    program = _compare(module, [_values(ls, lhs_dt, rng), _values(rs, rhs_dt, rng)])
    assert program.kernels.get("stablehlo.dot_general") == 1
    return program


@pytest.mark.parametrize("path", ["blas", "loop", "vector"], indirect=True)
@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", sorted(DOTS))
def test_float_dot(name: str, dt: np.dtype, path: str) -> None:
    _run_dot(name, dt, dt, dt)


@pytest.mark.parametrize("dt", [I32, BOOL])
@pytest.mark.parametrize("name", sorted(DOTS))
def test_integer_dot(name: str, dt: np.dtype) -> None:
    _run_dot(name, dt, dt, dt)


# (lhs, rhs, result): preferred element types, wrapping, mixed operands.
MIXED = [(F16, F16, F16), (BF16, BF16, BF16), (F16, F16, F32), (BF16, BF16, F32),
         (F32, F32, F64), (F64, F64, F32), (I32, F32, F32), (I8, I8, I8), (I8, I8, I32),
         (U8, U8, U8), (U8, I8, I32), (U32, U32, U32), (BOOL, BOOL, I32), (I32, I32, BOOL),
         (F32, F32, I32), (F32, F32, U8), (F32, F32, BOOL), (I8, I8, F16), (F32, F32, F16),
         (F64, F64, BF16)]


@pytest.mark.parametrize("path", ["blas", "loop"], indirect=True)
@pytest.mark.parametrize("types", MIXED, ids=lambda t: "_".join(d.name for d in t))
@pytest.mark.parametrize("name", ["rhs_transposed", "batch_in_middle",
                                  "contract_two_dims_crossed", "matrix_vector"])
def test_dot_dtypes(name: str, types: tuple[np.dtype, ...], path: str) -> None:
    _run_dot(name, *types)


@needs_complex
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("path", ["blas", "loop"], indirect=True)
@pytest.mark.parametrize("types", [(C64, C64, C64), (C128, C128, C128), (F32, C64, C64),
                                   (C64, C64, C128), (C64, C64, F32), (C64, C64, BOOL)],
                         ids=lambda t: "_".join(d.name for d in t))
@pytest.mark.parametrize("name", ["matmul", "both_transposed", "batch_in_middle",
                                  "contract_two_dims_crossed", "zero_k", "outer_k1",
                                  "matrix_vector"])
def test_complex_dot(name: str, types: tuple[np.dtype, ...], path: str) -> None:
    _run_dot(name, *types)


def test_float_operands_saturate_into_integers() -> None:
    """An integer result of float operands is the saturating conversion of the float sum
    (NaN -> 0), as the reference backend computes it."""
    module = _dot_module("matmul", F32, F32, I8)
    x = np.full((5, 7), 30.0, np.float32)
    x[1] = -30.0
    x[2, 0] = np.nan
    y = np.ones((7, 3), np.float32)
    got = backends.get_backend("llvm").compile(module).execute([x, y])[0]
    assert got[0, 0] == 127 and got[1, 0] == -128 and got[2, 0] == 0
    _compare(module, [x, y])


# ---------------------------------------------------------------------------------------------
# Dots inside fusions: the output fusion (kOutput) and matrix-vector dots with producers.

def _optimized(f: Callable[..., Any], *args: np.ndarray) -> ir.Module:
    x64 = any(np.asarray(a).dtype.itemsize == 8 for a in args)
    with jax.config.override("jax_enable_x64", x64):
        return optimize.optimize(jax.jit(f).lower(*args).compiler_ir())


def _fusion_kinds(module: ir.Module) -> list[tuple[str, list[str]]]:
    return [(op.attributes["kind"], [o.opcode for o in op.regions[0].block.ops])
            for op in module.walk() if fusion.is_fusion(op)]


OUTPUT_FUSIONS = {
    "vector_matrix_plus_bias": (lambda v, w, b: v @ w + b, (300,), (300, 40), (40,)),
    "bias_plus_matrix_vector": (lambda v, w, b: b + w @ v, (300,), (40, 300), (40,)),
    "small": (lambda v, w, b: v @ w + b, (6,), (6, 5), (5,)),
    "inner_plus_scalar": (lambda v, w, b: jnp.dot(v, w) + b, (50,), (50,), ()),
}


@pytest.mark.parametrize("path", ["blas", "loop", "vector"], indirect=True)
@pytest.mark.parametrize("dt", [F32, F64, F16, BF16, I32])
@pytest.mark.parametrize("name", sorted(OUTPUT_FUSIONS))
def test_output_fusion(name: str, dt: np.dtype, path: str) -> None:
    f, *shapes = OUTPUT_FUSIONS[name]
    rng = np.random.default_rng(len(name))
    args = [_values(s, dt, rng) for s in shapes]
    module = _optimized(f, *args)
    assert ("kOutput", ["stablehlo.dot_general", "stablehlo.add", "stablehlo.return"]) in \
        _fusion_kinds(module)
    _compare(module, args)


@pytest.mark.parametrize("dt", [F32, F16, I32, pytest.param(C64, marks=needs_complex)])
def test_matrix_vector_dot_with_fused_producers(dt: np.dtype) -> None:
    """A small matrix-vector dot absorbs its operands' producers (a kLoop fusion whose root
    is the dot): the dot is an element generator of the fusion."""
    rng = np.random.default_rng(1)
    w, v = _values((20, 30), dt, rng), _values((30,), dt, rng)
    module = _optimized(lambda w, v: (w * 2 - 1) @ v, w, v)
    assert any(kind == "kLoop" and "stablehlo.dot_general" in ops
               for kind, ops in _fusion_kinds(module))
    _compare(module, [w, v])


def test_mlp_layer_through_jit() -> None:
    rng = np.random.default_rng(2)
    x, w, b = (_values(s, F32, rng) for s in ((128, 784), (784, 256), (256,)))
    module = _optimized(lambda x, w, b: jnp.maximum(x @ w + b, 0.0), x, w, b)
    program = _compare(module, [x, w, b])
    assert program.kernels.get("stablehlo.dot_general") == 1


# ---------------------------------------------------------------------------------------------
# Convolutions.

# name -> (input shape, kernel shape, dimension numbers as (lhs, rhs, out) layout strings,
#          window strides, padding, lhs dilation, rhs dilation, reversal, feature groups,
#          batch groups)
CONVS: dict[str, tuple] = {
    "nhwc_same": ((2, 9, 8, 6), (3, 3, 6, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                  ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1),
    "nhwc_valid_strided": ((2, 9, 8, 6), (3, 2, 6, 8), ("NHWC", "HWIO", "NHWC"), (2, 3),
                           ((0, 0), (0, 0)), (1, 1), (1, 1), (False, False), 1, 1),
    "nchw_oihw": ((2, 6, 9, 8), (8, 6, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1),
                  ((1, 1), (2, 0)), (1, 1), (1, 1), (False, False), 1, 1),
    "nchw_to_nhwc": ((2, 6, 9, 8), (8, 6, 3, 3), ("NCHW", "OIHW", "NHWC"), (1, 1),
                     ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1),
    "scrambled_layouts": ((9, 8, 6, 2), (6, 8, 3, 3), ("HWCN", "IOHW", "CNWH"), (1, 2),
                          ((1, 0), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1),
    "dilations_and_padding": ((2, 9, 8, 6), (3, 3, 6, 8), ("NHWC", "HWIO", "NHWC"), (1, 2),
                              ((2, 1), (0, 3)), (2, 1), (1, 2), (False, False), 1, 1),
    "negative_padding": ((2, 9, 8, 6), (3, 3, 6, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                         ((-1, 1), (1, -2)), (1, 1), (1, 1), (False, False), 1, 1),
    "window_reversal": ((2, 9, 8, 6), (3, 2, 6, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                        ((1, 1), (0, 1)), (1, 1), (1, 1), (True, False), 1, 1),
    "feature_groups": ((2, 9, 8, 6), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                       ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 2, 1),
    "depthwise": ((2, 9, 8, 6), (3, 3, 1, 12), ("NHWC", "HWIO", "NHWC"), (1, 1),
                  ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 6, 1),
    "batch_groups": ((4, 9, 8, 6), (3, 3, 6, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                     ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 2),
    "conv1d": ((2, 20, 5), (4, 5, 7), ("NWC", "WIO", "NWC"), (1,), ((2, 1),), (1,), (1,),
               (False,), 1, 1),
    "conv3d": ((1, 4, 5, 6, 3), (2, 2, 2, 3, 4), ("NDHWC", "DHWIO", "NDHWC"), (1, 1, 1),
               ((1, 0), (0, 1), (1, 1)), (1, 1, 1), (1, 1, 1), (False,) * 3, 1, 1),
    "pointwise": ((2, 5, 5, 16), (1, 1, 16, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                  ((0, 0), (0, 0)), (1, 1), (1, 1), (False, False), 1, 1),
    "empty_output": ((2, 2, 2, 6), (3, 3, 6, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                     ((0, 0), (0, 0)), (1, 1), (1, 1), (False, False), 1, 1),
}
# The reference backend's kernel fails on zero input features (a reshape of an empty
# patch): checked against zeros instead.
ZERO_FEATURES = ((2, 5, 5, 0), (3, 3, 0, 8), ("NHWC", "HWIO", "NHWC"), (1, 1),
                 ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1)


def _conv_numbers(layouts: tuple[str, str, str]) -> ir.ConvDimensionNumbers:
    lhs, rhs, out = layouts

    def spatial(spec: str, skip: str) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(spec) if c not in skip)

    return ir.ConvDimensionNumbers(
        lhs.index("N"), lhs.index("C"), spatial(lhs, "NC"), rhs.index("I"), rhs.index("O"),
        spatial(rhs, "IO"), out.index("N"), out.index("C"), spatial(out, "NC"))


def _conv_shape(case: tuple) -> list[int]:
    xs, ws, layouts, strides, padding, ldil, rdil, _, _, bgc = case
    dn = _conv_numbers(layouts)
    shape = [0] * len(xs)
    shape[dn.output_batch_dimension] = xs[dn.input_batch_dimension] // bgc
    shape[dn.output_feature_dimension] = ws[dn.kernel_output_feature_dimension]
    for i, (xd, wd, od) in enumerate(zip(dn.input_spatial_dimensions,
                                         dn.kernel_spatial_dimensions,
                                         dn.output_spatial_dimensions, strict=True)):
        size = max((xs[xd] - 1) * ldil[i] + 1, 0) + sum(padding[i])
        window = (ws[wd] - 1) * rdil[i] + 1
        shape[od] = max((size - window) // strides[i] + 1, 0)
    return shape


def _conv_module(case: tuple, x_dt: np.dtype, w_dt: np.dtype, out_dt: np.dtype) -> ir.Module:
    """A module of one convolution `case` (a tuple as in `CONVS`)."""
    xs, ws, layouts, strides, padding, ldil, rdil, reverse, fgc, bgc = case
    attributes = dict(dimension_numbers=_conv_numbers(layouts), window_strides=strides,
                      padding=np.asarray(padding, np.int64), lhs_dilation=ldil,
                      rhs_dilation=rdil, window_reversal=reverse, feature_group_count=fgc,
                      batch_group_count=bgc)

    def build(b: ir.Builder, x: ir.Value, w: ir.Value) -> list[ir.Value]:
        return [b.one("stablehlo.convolution", [x, w],
                      ir.TensorType(_conv_shape(case), out_dt), **attributes)]

    return hand_built_module([ir.TensorType(xs, x_dt), ir.TensorType(ws, w_dt)], build)


def _run_conv(name: str, x_dt: np.dtype, w_dt: np.dtype, out_dt: np.dtype) -> None:
    xs, ws = CONVS[name][:2]
    rng = np.random.default_rng(len(name))
    module = _conv_module(CONVS[name], x_dt, w_dt, out_dt)
    program = _compare(module, [_values(xs, x_dt, rng), _values(ws, w_dt, rng)])
    assert program.kernels.get("stablehlo.convolution") == 1


@pytest.mark.parametrize("path", ["blas", "loop"], indirect=True)
@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", sorted(CONVS))
def test_float_convolution(name: str, dt: np.dtype, path: str) -> None:
    _run_conv(name, dt, dt, dt)


@pytest.mark.parametrize("types", [(I32, I32, I32), (I8, I8, I8), (U8, U8, I32),
                                   (BOOL, BOOL, BOOL), (F16, F16, F16), (BF16, BF16, F32),
                                   (I8, I8, F32), (F32, F32, I32)], ids=lambda t: "_".join(d.name for d in t))
@pytest.mark.parametrize("name", sorted(CONVS))
def test_convolution_dtypes(name: str, types: tuple[np.dtype, ...]) -> None:
    _run_conv(name, *types)


@needs_complex
@pytest.mark.parametrize("path", ["blas", "loop"], indirect=True)
@pytest.mark.parametrize("dt", [C64, C128])
@pytest.mark.parametrize("name", ["nhwc_same", "nchw_oihw", "scrambled_layouts",
                                  "dilations_and_padding", "window_reversal", "depthwise",
                                  "batch_groups"])
def test_complex_convolution(name: str, dt: np.dtype, path: str) -> None:
    _run_conv(name, dt, dt, dt)


@pytest.mark.parametrize("dt", [F32, I32])
def test_convolution_without_input_features(dt: np.dtype) -> None:
    module = _conv_module(ZERO_FEATURES, dt, dt, dt)
    exe = backends.get_backend("llvm").compile(module)
    got = exe.execute([np.zeros((2, 5, 5, 0), dt), np.zeros((3, 3, 0, 8), dt)])[0]
    np.testing.assert_array_equal(got, np.zeros((2, 5, 5, 8), dt))
    assert not exe.program.fallbacks


def test_convolution_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output positions are processed in blocks of the patch matrix; the last one partial."""
    monkeypatch.setattr(kernels_conv, "_BLOCK_ELEMENTS", 2 * 54 * 8 + 1)
    monkeypatch.setattr(kernels_dot, "BLAS_MIN_WORK", 0)
    for name in ("nhwc_same", "nchw_oihw", "scrambled_layouts"):
        _run_conv(name, F32, F32, F32)


@pytest.mark.parametrize("path", ["blas", "loop"], indirect=True)
def test_convolutions_through_jit(path: str) -> None:
    rng = np.random.default_rng(3)
    x, w = _values((2, 10, 10, 3), F32, rng), _values((3, 3, 3, 5), F32, rng)
    dn = ("NHWC", "HWIO", "NHWC")
    for f in (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                    dimension_numbers=dn),
              lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=dn)):
        _compare(_optimized(f, x, w), [x, w])


def test_gemm_layouts() -> None:
    """How BLAS reads a row-major-described matrix (or says it cannot)."""
    assert kernels_dot.blas_layout(5, 7, 7, 1) == ("N", 7)
    assert kernels_dot.blas_layout(5, 7, 1, 5) == ("T", 5)
    assert kernels_dot.blas_layout(5, 7, 14, 2) is None
    assert kernels_dot.blas_layout(1, 7, 0, 1) == ("N", 7)
    assert kernels_dot.collapse([2, 3, 4], [12, 4, 1]) == 1
    assert kernels_dot.collapse([2, 1, 4], [4, 99, 1]) == 1
    assert kernels_dot.collapse([2, 4], [1, 2]) is None
    assert kernels_dot.collapse([], []) == 0


def test_multiply_adds() -> None:
    dot = _dot_module("batch_in_middle", F32, F32, F32).function("main").body.ops[0]
    assert kernels_dot.multiply_adds(dot) == 4 * 5 * 3 * 7
    conv = _conv_module(CONVS["feature_groups"], F32, F32, F32).function("main").body.ops[0]
    assert kernels_conv.multiply_adds(conv) == (2 * 9 * 8 * 8) * (3 * 3 * 3)
