"""The llvm backend's convolution kernels (`kernels/conv.py`, `conv_direct.py`) path by path, against the reference
backend on the same module: the register-blocked direct kernel (forced on, with its row blocks,
feature blocks, reduction chunks, packed kernels and scratch outputs), im2col + BLAS (forced
off), and the kernel chosen by shape for the convolutions of a CNN's train step (the forward
convolution and both gradient convolutions, NHWC and NCHW) through jit.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.backends.llvm.kernels import conv as kernels_conv
from justjax._src.backends.llvm.kernels import conv_direct
from justjax._src.backends.llvm.kernels import dot as kernels_dot
from tests.test_llvm_dot import (BF16, CONVS, F16, F32, F64, I8, _compare, _conv_module,
                                 _conv_shape, _optimized, _values)

# (input shape, kernel shape, layouts, strides, padding, lhs dilation, rhs dilation,
# window reversal, feature groups, batch groups), as `test_llvm_dot.CONVS`: shapes that reach
# the direct kernel's other branches.
CASES = {
    **CONVS,
    # 72 output features: feature blocks of 32, 32 and 8 (float32 on AVX-512).
    "wide_features": ((2, 7, 6, 5), (3, 3, 5, 72), ("NHWC", "HWIO", "NHWC"), (1, 1),
                      ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1),
    # Rows blocked along the last spatial dim with a shorter last block (29 = 12 + 12 + 5).
    "row_tail": ((2, 3, 29, 4), (2, 3, 4, 32), ("NHWC", "HWIO", "NHWC"), (1, 1),
                 ((0, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1),
    # Channel-major output (stored through the scratch) and a packed OIHW kernel.
    "nchw_out": ((2, 3, 9, 7), (8, 3, 3, 3), ("NCHW", "OIHW", "NCHW"), (2, 1),
                 ((1, 1), (2, 0)), (1, 1), (1, 2), (False, True), 1, 1),
    # Negative padding together with input dilation.
    "negative_pad_lhs_dilation": ((2, 7, 6, 3), (3, 2, 3, 8), ("NHWC", "HWIO", "NHWC"), (1, 2),
                                  ((-3, 2), (-1, -2)), (2, 3), (1, 1), (False, False), 1, 1),
    # A kernel gradient's shape: the batch is the feature dim, the spatial product is long.
    "kernel_gradient": ((2, 17, 19, 1), (2, 17, 19, 8), ("CHWN", "IHWO", "HWNC"), (1, 1),
                        ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1),
    "kernel_gradient_nchw": ((3, 2, 11, 13), (3, 8, 11, 13), ("CNHW", "IOHW", "CNHW"),
                             (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 1),
    "grouped_kernel_gradient": ((4, 6, 9, 8), (4, 9, 8, 12), ("CNHW", "IHWO", "NHWC"), (1, 1),
                                ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), 1, 3),
    # One output feature (an input gradient into one channel), NHWC and NCHW; a last
    # spatial dim of 37 = 32 + an overlapping last chunk.
    "one_feature": ((2, 5, 37, 6), (3, 3, 6, 1), ("NHWC", "HWIO", "NHWC"), (1, 1),
                    ((1, 1), (1, 1)), (1, 1), (1, 1), (True, False), 1, 1),
    "one_feature_nchw": ((2, 6, 5, 21), (1, 6, 3, 2), ("NCHW", "OIHW", "NCHW"), (2, 1),
                         ((1, 1), (0, 1)), (2, 1), (1, 2), (False, False), 1, 1),
    # Two feature groups, a reversed, dilated window, strides.
    "conv1d_reversed": ((3, 40, 6), (5, 3, 16), ("NWC", "WIO", "NWC"), (3,), ((2, 4),),
                        (1,), (2,), (True,), 2, 1),
}


def _run(name: str, x_dt: np.dtype, w_dt: np.dtype, out_dt: np.dtype) -> None:
    case = CASES[name]
    rng = np.random.default_rng(len(name))
    module = _conv_module(case, x_dt, w_dt, out_dt)
    program = _compare(module, [_values(case[0], x_dt, rng), _values(case[1], w_dt, rng)])
    assert program.kernels.get("stablehlo.convolution") == 1


# form -> (module, the function emitting its kernel)
EMITTERS = {"features": (conv_direct, "emit_features"),
            "positions": (conv_direct, "emit_positions"),
            "im2col": (kernels_conv, "_emit_blas_conv")}


@pytest.fixture
def form(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Float convolutions forced through one direct kernel form, or im2col + BLAS, where it
    applies."""
    monkeypatch.setattr(kernels_conv, "FORM", request.param)
    monkeypatch.setattr(kernels_dot, "BLAS_MIN_WORK", 0)
    yield request.param


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the float kernels the convolutions compiled from now on took."""
    taken: list[str] = []
    for module, name in EMITTERS.values():
        original = getattr(module, name)

        def wrapped(*args, _original=original, _name=name, **kwargs):
            taken.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapped)
    return taken


def _applies(name: str, dt: np.dtype, form: str) -> bool:
    """Whether `form` can run case `name` (its plan exists; im2col: BLAS takes it)."""
    op = _conv_module(CASES[name], dt, dt, dt).function("main").body.ops[0]
    spec = kernels_conv.ConvSpec.of(op)
    acc = kernels_dot.Accumulation.of(dt, dt, dt)
    if form == "features":
        return conv_direct.plan_features(spec, acc) is not None
    if form == "positions":
        return conv_direct.plan_positions(spec, acc) is not None
    return kernels_conv._use_blas(spec, acc) is not None


@pytest.mark.parametrize("form", ["features", "positions", "im2col"], indirect=True)
@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_float_paths(name: str, dt: np.dtype, form: str, spy: list[str]) -> None:
    _run(name, dt, dt, dt)
    if _applies(name, dt, form) and np.prod(_conv_shape(CASES[name])) > 0:
        assert spy == [EMITTERS[form][1]]


@pytest.mark.parametrize("form", ["features", "positions"], indirect=True)
@pytest.mark.parametrize("types", [(F16, F16, F16), (BF16, BF16, F32), (I8, I8, F32),
                                   (F32, F64, F64), (F16, F32, BF16)],
                         ids=lambda t: "_".join(d.name for d in t))
@pytest.mark.parametrize("name", ["nhwc_same", "nchw_out", "kernel_gradient", "batch_groups",
                                  "negative_pad_lhs_dilation", "row_tail"])
def test_direct_dtypes(name: str, types: tuple[np.dtype, ...], form: str) -> None:
    """Operands converted into the work dtype as they are padded, packed or read; low-precision
    results accumulate in float32 and are rounded once."""
    _run(name, *types)


@pytest.mark.parametrize("form", ["features"], indirect=True)
@pytest.mark.parametrize("chunk_bytes", [1, 1500, 6000])
def test_direct_in_chunks(form: str, chunk_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large kernel is read in equal chunks of input features (packed one chunk at a time
    where it is packed), the partial sums kept in the scratch between chunks."""
    monkeypatch.setattr(conv_direct, "_CHUNK_BYTES", chunk_bytes)
    for name in ("kernel_gradient", "kernel_gradient_nchw", "grouped_kernel_gradient",
                 "nhwc_same", "nchw_out", "wide_features", "feature_groups"):
        _run(name, F32, F32, F32)
        _run(name, F16, F16, F16)


@pytest.mark.parametrize("form", ["features", "positions"], indirect=True)
def test_direct_blocks_fewer_rows(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Smaller register budgets (AVX2's): more blocks, row blocks along outer dims too."""
    for budget in (12, 5, 1):
        monkeypatch.setattr(conv_direct, "_ACC_VECTORS_AVX512", budget)
        monkeypatch.setattr(conv_direct, "_ACC_VECTORS", budget)
        for name in ("row_tail", "kernel_gradient", "wide_features", "conv3d", "nchw_out"):
            _run(name, F32, F32, F32)


def test_row_blocks() -> None:
    """A block is `m` indices of one row dim times all the dims after it."""
    assert conv_direct.row_blocks([1, 3, 3], 12) == (-1, 1)
    assert conv_direct.row_blocks([32, 3, 3], 12) == (0, 1)
    assert conv_direct.row_blocks([64, 28, 28], 12) == (2, 12)
    assert conv_direct.row_blocks([4, 2, 5], 12) == (0, 1)
    assert conv_direct.row_blocks([4, 2, 5], 40) == (-1, 1)
    assert conv_direct.row_blocks([4, 2, 5], 4) == (2, 4)


# ---------------------------------------------------------------------------------------------
# A CNN train step's convolutions, with the kernel chosen by shape.

STEP_LAYOUTS = {"NHWC": (("NHWC", "HWIO", "NHWC"), (4, 12, 12, 3), (3, 3, 3, 32)),
                "NCHW": (("NCHW", "OIHW", "NCHW"), (4, 3, 12, 12), (32, 3, 3, 3))}


def _step_functions(dn: tuple[str, str, str], xs: tuple[int, ...], ws: tuple[int, ...],
                    strides: tuple[int, int], padding: str,
                    rhs_dilation: tuple[int, int]) -> dict:
    """The forward convolution (x, w), its kernel gradient (x, g) and its input gradient
    (w, g): each takes only the arrays its gradient reads."""
    def conv(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=rhs_dilation,
                                        dimension_numbers=dn)

    def kernel_gradient(x, g):
        return jax.vjp(lambda w_: conv(x, w_), jnp.zeros(ws))[1](g)[0]

    def input_gradient(w, g):
        return jax.vjp(lambda x_: conv(x_, w), jnp.zeros(xs))[1](g)[0]

    return {"forward": conv, "kernel_gradient": kernel_gradient,
            "input_gradient": input_gradient}


@pytest.mark.parametrize("geometry", [((1, 1), "SAME", (1, 1)), ((2, 2), "SAME", (1, 1)),
                                      ((1, 2), "VALID", (2, 1))],
                         ids=["same", "strided", "dilated"])
@pytest.mark.parametrize("layout", sorted(STEP_LAYOUTS))
def test_train_step_convolutions(layout: str, geometry: tuple) -> None:
    dn, xs, ws = STEP_LAYOUTS[layout]
    rng = np.random.default_rng(7)
    x, w = _values(xs, F32, rng), _values(ws, F32, rng)
    fns = _step_functions(dn, xs, ws, *geometry)
    y = np.asarray(jax.jit(fns["forward"])(x, w))
    g = _values(y.shape, F32, rng)
    _compare(_optimized(fns["forward"], x, w), [x, w])
    _compare(_optimized(fns["kernel_gradient"], x, g), [x, g])
    _compare(_optimized(fns["input_gradient"], w, g), [w, g])


def test_kernel_gradient_takes_the_direct_kernel(spy: list[str]) -> None:
    """The kernel gradient of a 3x3 convolution (9 output positions over a reduction of
    batch x space) runs in the direct kernel, NHWC and NCHW."""
    for layout in sorted(STEP_LAYOUTS):
        dn, xs, ws = STEP_LAYOUTS[layout]
        rng = np.random.default_rng(1)
        x, w = _values(xs, F32, rng), _values(ws, F32, rng)
        fns = _step_functions(dn, xs, ws, (1, 1), "SAME", (1, 1))
        g = _values(np.asarray(jax.jit(fns["forward"])(x, w)).shape, F32, rng)
        spy.clear()
        _compare(_optimized(fns["kernel_gradient"], x, g), [x, g])
        assert spy == ["emit_features"]


def test_input_gradient_into_one_channel_takes_the_position_form(spy: list[str]) -> None:
    """The input gradient of a convolution from one channel (one output feature, 32 input
    features x 9 taps) runs vectorized over positions, NHWC and NCHW."""
    one_channel = {"NHWC": ((4, 12, 12, 1), (3, 3, 1, 32)),
                   "NCHW": ((4, 1, 12, 12), (32, 1, 3, 3))}
    for layout, (xs, ws) in sorted(one_channel.items()):
        dn = STEP_LAYOUTS[layout][0]
        rng = np.random.default_rng(2)
        w = _values(ws, F32, rng)
        fns = _step_functions(dn, xs, ws, (1, 1), "SAME", (1, 1))
        g = _values(np.asarray(jax.jit(fns["forward"])(np.zeros(xs, F32), w)).shape, F32, rng)
        spy.clear()
        _compare(_optimized(fns["input_gradient"], w, g), [w, g])
        assert spy == ["emit_positions"]
