"""`jnp.fft` and `lax.fft`: values against NumPy's pocketfft, norm modes, dtypes with x64 off
and on, JAX's errors, jit against eager, gradients, vmap, and the printed jaxprs, StableHLO
and optimized HLO (golden texts read off JAX 0.10.2), the verifier's rule, cost analysis,
and both backends running `stablehlo.fft`."""
from __future__ import annotations

import contextlib
import re
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import assert_close, lower_to_module, run_on_backend, x64_mode

RNG = np.random.default_rng(22)


def _real(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _complex(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


# ---------------------------------------------------------------------------------------------
# Values against NumPy.

NORMS = [None, "backward", "ortho", "forward"]

# (name, input maker, keyword arguments): every transform with the options that change it.
TRANSFORM_CASES = [
    ("fft", lambda: _real(8), {}),
    ("fft", lambda: _complex(7), {"n": 10}),
    ("fft", lambda: _complex(3, 7), {"n": 4, "axis": 0}),
    ("ifft", lambda: _complex(2, 9), {}),
    ("ifft", lambda: _complex(2, 9), {"n": 5, "axis": -2}),
    ("rfft", lambda: _real(9), {}),
    ("rfft", lambda: _real(4, 6), {"n": 11, "axis": 0}),
    ("irfft", lambda: _complex(5), {}),
    ("irfft", lambda: _complex(5), {"n": 9}),
    ("irfft", lambda: _complex(3, 4), {"n": 3, "axis": 0}),
    ("fft2", lambda: _real(3, 5), {}),
    ("fft2", lambda: _complex(2, 3, 5), {"s": (4, 2), "axes": (0, 2)}),
    ("ifft2", lambda: _complex(4, 3), {}),
    ("rfft2", lambda: _real(3, 7), {"s": (2, 6)}),
    ("irfft2", lambda: _complex(3, 4), {}),
    ("irfft2", lambda: _complex(2, 3, 4), {"s": (3, 7), "axes": (1, 0)}),
    ("fftn", lambda: _real(2, 3, 4), {}),
    ("fftn", lambda: _real(2, 2, 3, 2, 2), {}),
    ("fftn", lambda: _complex(3, 4), {"s": (5,), "axes": (0,)}),
    ("ifftn", lambda: _complex(2, 2, 3, 2), {}),
    ("rfftn", lambda: _real(2, 3, 2, 5), {}),
    ("rfftn", lambda: _real(3, 4), {"axes": (1, 0)}),
    ("irfftn", lambda: _complex(2, 2, 3, 2, 3), {}),
    ("irfftn", lambda: _complex(3, 4), {"s": (5, 6)}),
    ("ihfft", lambda: _real(7), {}),
    ("ihfft", lambda: _real(3, 6), {"n": 4, "axis": 0}),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,make,kwargs", TRANSFORM_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TRANSFORM_CASES)])
def test_transform_matches_numpy(name: str, make: Callable[[], np.ndarray], kwargs: dict,
                                 norm: str | None) -> None:
    x = make()
    got = getattr(jnp.fft, name)(x, **kwargs, norm=norm)
    if "s" in kwargs and "axes" not in kwargs:
        # NumPy 2 wants the axes spelled out with `s`: the last len(s).
        kwargs = {**kwargs, "axes": tuple(range(x.ndim - len(kwargs["s"]), x.ndim))}
    want = getattr(np.fft, name)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                                 **kwargs, norm=norm)
    assert got.dtype == (np.float32 if want.dtype.kind == "f" else np.complex64)
    assert_close(got, want.astype(got.dtype), 1e-4, context=name)


@pytest.mark.parametrize("norm", NORMS)
def test_hfft_matches_numpy(norm: str | None) -> None:
    a = _complex(6)
    for n in (None, 7, 4):
        got = jnp.fft.hfft(a, n, norm=norm)
        assert got.dtype == np.float32
        assert_close(got, np.fft.hfft(a.astype(np.complex128), n, norm=norm), 1e-4)


def test_integer_and_half_inputs_promote_as_jax() -> None:
    assert jnp.fft.fft(np.arange(6, dtype=np.int32)).dtype == np.complex64
    assert jnp.fft.rfft(np.arange(6, dtype=np.int32)).dtype == np.complex64
    assert jnp.fft.fft(_real(6).astype(np.float16)).dtype == np.complex64
    assert jnp.fft.irfft(_complex(4)).dtype == np.float32
    assert_close(jnp.fft.fft(np.arange(6)), np.fft.fft(np.arange(6)), 1e-5)


@pytest.mark.parametrize("fun,x,shape,dtype", [
    (jnp.fft.fft, np.zeros(0, np.float32), (0,), np.complex64),
    (jnp.fft.fft, np.zeros((0, 3), np.float32), (0, 3), np.complex64),
    (jnp.fft.rfft, np.zeros((0, 4), np.float32), (0, 3), np.complex64),
    (jnp.fft.irfft, np.zeros((0, 4), np.complex64), (0, 6), np.float32),
    (jnp.fft.irfft, np.zeros(1, np.complex64), (0,), np.float32),
    (jnp.fft.irfft, np.zeros(0, np.complex64), (0,), np.float32),
    (jnp.fft.fft2, np.zeros((3, 0), np.float32), (3, 0), np.complex64),
])
def test_empty_inputs(fun: Callable, x: np.ndarray, shape: tuple, dtype: Any) -> None:
    """Shapes and dtypes read off JAX 0.10.2."""
    out = fun(x)
    assert out.shape == shape and out.dtype == dtype


def test_rfft_of_length_zero_fails_to_lower_as_in_jax() -> None:
    with pytest.raises(ValueError, match="Cannot lower jaxpr with verifier errors"):
        jnp.fft.rfft(np.zeros((2, 0), np.float32))


def test_x64_dtypes_and_values() -> None:
    x = RNG.standard_normal(9)
    with x64_mode(True):
        assert jnp.fft.fft(x).dtype == np.complex128
        assert jnp.fft.rfft(x).dtype == np.complex128
        assert jnp.fft.irfft(np.fft.rfft(x)).dtype == np.float64
        assert jnp.fft.fftfreq(5).dtype == np.float64
        assert_close(jnp.fft.rfft(x, norm="ortho"), np.fft.rfft(x, norm="ortho"), 1e-12)
        assert_close(jnp.fft.ifftn(x.reshape(3, 3)), np.fft.ifftn(x.reshape(3, 3)), 1e-12)
    with x64_mode(False):
        assert jnp.fft.fft(x).dtype == np.complex64
        assert jnp.fft.rfft(x).dtype == np.complex64


# ---------------------------------------------------------------------------------------------
# Frequencies and shifts.

def test_fftfreq_and_rfftfreq() -> None:
    for n, d in ((5, 1.0), (6, 0.1), (1, 2.0)):
        assert_close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), 1e-6)
        assert_close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), 1e-6)
    assert jnp.fft.fftfreq(0).shape == (0,)  # NumPy divides by zero here; JAX does not
    assert jnp.fft.fftfreq(4).dtype == np.float32
    # Values read off JAX 0.10.2 for the other dtypes.
    np.testing.assert_array_equal(jnp.fft.fftfreq(5, 0.1, dtype=jnp.int32), [0, 2, 4, -4, -2])
    half = jnp.fft.fftfreq(6, dtype=jnp.float16)
    assert half.dtype == np.float16
    assert_close(half, np.array([0, 1 / 6, 1 / 3, -0.5, -1 / 3, -1 / 6], np.float16), 1e-3)
    assert jnp.fft.fftfreq(4, dtype=jnp.complex64).dtype == np.complex64
    ints = np.asarray(jnp.fft.rfftfreq(5, 0.1, dtype=jnp.int32))
    assert ints.dtype == np.float32 and np.isnan(ints[0]) and np.isinf(ints[1:]).all()


def test_fftfreq_device() -> None:
    device = justjax.devices()[-1]
    out = jnp.fft.fftfreq(5, device=device)
    assert out.devices() == {device}
    assert jnp.fft.rfftfreq(5, device=device).devices() == {device}
    assert_close(out, np.fft.fftfreq(5), 1e-6)


@pytest.mark.parametrize("axes", [None, 0, -1, (1,), (0, 1)])
def test_fftshift_and_ifftshift(axes: Any) -> None:
    x = np.arange(20).reshape(4, 5)
    np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))


# ---------------------------------------------------------------------------------------------
# Errors: classes and messages read off JAX 0.10.2.

X3 = np.ones((2, 3, 4), np.float32)
FFT_ERRORS = [
    (lambda: jnp.fft.fft(X3, norm="bad"), ValueError,
     'Invalid norm value bad; should be "backward","ortho" or "forward".'),
    (lambda: jnp.fft.fft(X3, axis=(0,)), ValueError,
     "jax.numpy.fft.fft does not support multiple axes. Please use jax.numpy.fft.fftn. "
     "Got axis = (0,)."),
    (lambda: jnp.fft.fft(X3, axis=3), ValueError,
     "axis 3 is out of bounds for array of dimension 3"),
    (lambda: jnp.fft.fft(X3, n=0), ValueError, "Shape should be positive."),
    (lambda: jnp.fft.fftn(X3, s=(2, 2), axes=(0,)), ValueError,
     "Shape and axes have different lengths."),
    (lambda: jnp.fft.fftn(X3, axes=(0, 0)), ValueError,
     "jax.numpy.fft.fftn does not support repeated axes. Got axes (0, 0)."),
    (lambda: jnp.fft.fft2(X3, axes=(0,)), ValueError,
     "jax.numpy.fft.fft2 only supports 2 axes. Got axes = (0,)."),
    (lambda: jnp.fft.rfft(X3.astype(np.complex64)), ValueError,
     "only real valued inputs supported for rfft"),
    (lambda: jnp.fft.fftfreq([3]), ValueError,
     "The n argument of jax.numpy.fft.fftfreq only takes an int. Got n = [3]."),
    (lambda: jnp.fft.rfftfreq(3, d=[1.0]), ValueError,
     "The d argument of jax.numpy.fft.rfftfreq only takes a single value. Got d = [1.0]."),
    (lambda: jnp.fft.fft([1.0, 2.0]), TypeError,
     "jax.numpy.fft.fft requires ndarray or scalar arguments, got <class 'list'> at "
     "position 0."),
    (lambda: lax.fft(X3, "bad", (4,)), ValueError, "Unknown FFT type 'bad'"),
    (lambda: lax.fft(X3, "fft", (5,)), ValueError,
     "FFT input shape (2, 3, 4) minor dimensions must be equal to fft_lengths (5,)"),
    (lambda: lax.fft(X3, "fft", (1, 2, 3, 4)), ValueError,
     "FFT input shape (2, 3, 4) must have at least as many input dimensions as fft_lengths "
     "(1, 2, 3, 4)."),
    (lambda: lax.fft_p.bind(X3.astype(np.float16), fft_type=lax.FftType.RFFT,
                            fft_lengths=(4,)), ValueError,
     "RFFT input must be float32 or float64, got float16"),
    (lambda: lax.fft_p.bind(X3, fft_type=lax.FftType.IRFFT, fft_lengths=(4,)), ValueError,
     "IRFFT input must be complex64 or complex128, got float32"),
    (lambda: lax.fft_p.bind(X3, fft_type=lax.FftType.FFT, fft_lengths=(4,)), ValueError,
     "FFT input must be complex64 or complex128, got float32"),
    (lambda: lax.fft_p.bind(X3.astype(np.complex64), fft_type=lax.FftType.IRFFT,
                            fft_lengths=(2, 4)), ValueError,
     "IRFFT input shape (2, 3, 4) minor dimensions must be equal to all except the last "
     "fft_length, got fft_lengths=(2, 4)"),
]


@pytest.mark.parametrize("call,error,message", FFT_ERRORS)
def test_errors(call: Callable, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_lax_fft_type_names_and_enum() -> None:
    x = _real(4)
    for name in ("fft", "FFT", lax.FftType.FFT):
        assert_close(lax.fft(x, name, (4,)), np.fft.fft(x), 1e-5)
    assert [t.value for t in lax.FftType] == [0, 1, 2, 3]
    assert repr(lax.FftType.RFFT) == "<FftType.RFFT: 2>"
    assert lax.fft(x, "fft", ()).dtype == np.complex64  # no axes: only the conversion
    with pytest.raises(TypeError, match="Unknown FFT type value 'None'"):
        lax.fft(x, None, (4,))


# ---------------------------------------------------------------------------------------------
# Transformations.

@pytest.mark.parametrize("fun,x", [
    (jnp.fft.rfft, _real(3, 8)),
    (lambda a: jnp.fft.irfftn(a, norm="ortho"), _complex(3, 4, 5)),
    (jnp.fft.fftn, _real(2, 2, 2, 3, 2)),
    (lambda a: jnp.fft.hfft(a, 7), _complex(2, 4)),
])
def test_jit_matches_eager(fun: Callable, x: np.ndarray) -> None:
    eager = fun(x)
    jitted = justjax.jit(fun)(x)
    assert jitted.aval == eager.aval
    assert_close(jitted, eager, 1e-5)


GRAD_CASES = [
    ("rfft", lambda x: jnp.fft.rfft(x)),
    ("rfft_odd_n", lambda x: jnp.fft.rfft(x, n=7, norm="ortho")),
    ("irfft", lambda x: jnp.fft.irfft(x)),
    ("irfft_odd", lambda x: jnp.fft.irfft(x, n=7, norm="forward")),
    ("fft2", lambda x: jnp.fft.fft2(x)),
    ("ifftn", lambda x: jnp.fft.ifftn(x, axes=(0,))),
    ("rfftn", lambda x: jnp.fft.rfftn(x)),
    ("irfft2", lambda x: jnp.fft.irfft2(x)),
    ("hfft", lambda x: jnp.fft.hfft(x)),
    ("ihfft", lambda x: jnp.fft.ihfft(x)),
]


@pytest.mark.parametrize("name,fun", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients(name: str, fun: Callable) -> None:
    """Forward and reverse to second order against finite differences, on real and complex
    inputs (the transposes of RFFT and IRFFT weight the half spectrum's bins)."""
    with x64_mode(True):
        real = RNG.standard_normal((3, 6))
        complex_ = RNG.standard_normal((3, 6)) + 1j * RNG.standard_normal((3, 6))
        for x in (real, complex_):
            if name in ("rfft", "rfft_odd_n", "rfftn", "ihfft") and x.dtype.kind == "c":
                continue
            check_grads(fun, (x,), order=2, modes=("fwd", "rev"))


def test_vmap_matches_a_loop() -> None:
    x = _real(5, 4, 6)
    for fun in (jnp.fft.rfft, jnp.fft.fft2, lambda a: jnp.fft.irfft(a, axis=0)):
        for axis in (0, 1, 2):
            batched = justjax.vmap(fun, in_axes=axis)(x)
            expected = np.stack([np.asarray(fun(np.take(x, i, axis))) for i in
                                 range(x.shape[axis])])
            assert_close(batched, expected, 1e-5)


# ---------------------------------------------------------------------------------------------
# Printed forms: golden texts read off JAX 0.10.2.

RFFT_ORTHO_STABLEHLO = """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<5xcomplex<f32>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<(8.000000e+00,0.000000e+00)> : tensor<1xcomplex<f32>>
    %0 = call @fft(%arg0) : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.reduce(%cst init: %cst_0) applies stablehlo.multiply across dimensions = [0] : (tensor<1xcomplex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
    %2 = stablehlo.sqrt %1 : tensor<complex<f32>>
    %cst_1 = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %3 = stablehlo.divide %cst_1, %2 : tensor<complex<f32>>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<complex<f32>>) -> tensor<5xcomplex<f32>>
    %5 = stablehlo.multiply %0, %4 : tensor<5xcomplex<f32>>
    return %5 : tensor<5xcomplex<f32>>
  }
  func.func private @fft(%arg0: tensor<8xf32>) -> tensor<5xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [8] : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
    return %0 : tensor<5xcomplex<f32>>
  }
}
"""

IRFFT2_STABLEHLO = """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xcomplex<f32>>) -> (tensor<3x8xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32>
    return %0 : tensor<3x8xf32>
  }
  func.func private @fft(%arg0: tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [3, 8] : (tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32>
    return %0 : tensor<3x8xf32>
  }
}
"""

IFFT_X64_STABLEHLO = """\
module @jit_ifft attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xcomplex<f64>>) -> (tensor<6xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<6xcomplex<f64>>) -> tensor<6xcomplex<f64>>
    return %0 : tensor<6xcomplex<f64>>
  }
  func.func private @fft(%arg0: tensor<6xcomplex<f64>>) -> tensor<6xcomplex<f64>> {
    %0 = stablehlo.fft %arg0, type = IFFT, length = [6] : (tensor<6xcomplex<f64>>) -> tensor<6xcomplex<f64>>
    return %0 : tensor<6xcomplex<f64>>
  }
}
"""

GRAD_IRFFT_JAXPR = """\
{ lambda ; a:c64[5]. let
    b:f32[8] = jit[
      name=fft
      jaxpr={ lambda ; a:c64[5]. let
          b:f32[8] = fft[fft_lengths=(8,) fft_type=3] a
        in (b,) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[8] = broadcast_in_dim 1.0:f32[]
    d:c64[5] = jit[
      name=fft
      jaxpr={ lambda ; c:f32[8]. let
          e:c64[5] = jit[
            name=fft
            jaxpr={ lambda ; c:f32[8]. let
                e:c64[5] = fft[fft_lengths=(8,) fft_type=2] c
              in (e,) }
          ] c
          f:c64[5] = broadcast_in_dim (2+0j):c64[]
          g:c64[1] = broadcast_in_dim (1+0j):c64[]
          h:c64[5] = dynamic_update_slice f g 0:i32[]
          i:c64[1] = broadcast_in_dim (1+0j):c64[]
          j:c64[5] = dynamic_update_slice h i 4:i32[]
          k:c64[5] = mul (0.125+0j):c64[] j
          l:c64[5] = mul k e
          d:c64[5] = conj[input_dtype=complex64] l
        in (d,) }
    ] c
  in (d,) }"""

VMAP_FFT_JAXPR = """\
{ lambda ; a:f32[8,3]. let
    b:c64[3,8] = jit[
      name=fft
      jaxpr={ lambda ; a:f32[8,3]. let
          c:c64[8,3] = convert_element_type[new_dtype=complex64 weak_type=False] a
          d:c64[3,8] = transpose[permutation=(1, 0)] c
          b:c64[3,8] = jit[
            name=fft
            jaxpr={ lambda ; d:c64[3,8]. let
                b:c64[3,8] = fft[fft_lengths=(8,) fft_type=0] d
              in (b,) }
          ] d
        in (b,) }
    ] a
  in (b,) }"""


def _golden_cases(jax: Any, jnp_: Any) -> dict[str, Callable[[], str]]:
    """Each printed form, built with the given modules (justjax's, or real JAX's)."""
    def x64_ifft() -> str:
        with _x64(jax):
            return jax.jit(jnp_.fft.ifft).lower(np.ones(6, np.complex128)).as_text()

    return {
        "rfft_ortho": lambda: jax.jit(lambda x: jnp_.fft.rfft(x, norm="ortho")).lower(
            np.ones(8, np.float32)).as_text(),
        "irfft2": lambda: jax.jit(lambda x: jnp_.fft.irfft2(x)).lower(
            np.ones((3, 5), np.complex64)).as_text(),
        "ifft_x64": x64_ifft,
        "grad_irfft": lambda: str(jax.make_jaxpr(jax.grad(lambda x: jnp_.fft.irfft(x).sum()))(
            np.ones(5, np.complex64))),
        "vmap_fft": lambda: str(jax.make_jaxpr(jax.vmap(jnp_.fft.fft, in_axes=1))(
            np.ones((8, 3), np.float32))),
    }


@contextlib.contextmanager
def _x64(jax: Any) -> Iterator[None]:
    """x64 on in `jax` (justjax's or real JAX's config) for the body."""
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)


GOLDEN = {"rfft_ortho": RFFT_ORTHO_STABLEHLO, "irfft2": IRFFT2_STABLEHLO,
          "ifft_x64": IFFT_X64_STABLEHLO, "grad_irfft": GRAD_IRFFT_JAXPR,
          "vmap_fft": VMAP_FFT_JAXPR}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_printed_forms_match_jax(name: str) -> None:
    assert _golden_cases(justjax, jnp)[name]() == GOLDEN[name]


@pytest.mark.needs_jax
def test_golden_texts_are_what_jax_prints() -> None:
    import jax
    import jax.numpy as real_jnp
    for name, build in _golden_cases(jax, real_jnp).items():
        assert build() == GOLDEN[name], name


def test_optimized_hlo_and_cost_analysis() -> None:
    """XLA keeps the FFT out of fusions, prints `fft_type=` and `fft_length=`, and counts
    8 * prod(floor(log2 n)) flops per operand element (figures read off JAX 0.10.2)."""
    compiled = justjax.jit(lambda x: jnp.sin(jnp.fft.rfft(x * 2)) * 3).lower(
        np.ones((3, 8), np.float32)).compile()
    text = compiled.as_text()
    line = next(ln for ln in text.splitlines() if " fft(" in ln)
    assert re.fullmatch(r"\s*%fft\.\d+ = c64\[3,5\]\{1,0\} fft\(%[\w.]+fusion[\w.]*\), "
                        r"fft_type=RFFT, fft_length=\{8\}", line), line
    assert "fft(" not in "".join(ln for ln in text.splitlines() if "fused_computation" in ln)
    cases = [(jnp.fft.fft, np.ones(8, np.complex64), 192.0),
             (jnp.fft.rfft, np.ones((3, 8), np.float32), 576.0),
             (jnp.fft.irfft2, np.ones((4, 5), np.complex64), 960.0),
             (jnp.fft.fft, np.ones((2, 6), np.complex64), 192.0)]
    for fun, x, flops in cases:
        cost = justjax.jit(fun).lower(x).compile().cost_analysis()
        assert cost["flops"] == flops


# ---------------------------------------------------------------------------------------------
# The compiler's side: the verifier's rule and both backends.

def test_verifier_checks_fft_result_types() -> None:
    from justjax._src.hlo import ir, verifier
    from tests.harness import hand_built_module
    c64 = np.dtype(np.complex64)

    def module(result_shape: tuple[int, ...], kind: str, lengths: tuple[int, ...]) -> Any:
        def build(b: Any, x: Any) -> list[Any]:
            return [b.one("stablehlo.fft", [x], ir.TensorType(result_shape, np.float32),
                          fft_type=ir.Enum("fft_type", kind), fft_length=lengths)]
        return hand_built_module([ir.TensorType((3, 5), c64)], build)

    verifier.verify(module((3, 8), "IRFFT", (8,)))
    with pytest.raises(verifier.VerificationError, match="result is tensor<3x9xf32>"):
        verifier.verify(module((3, 9), "IRFFT", (8,)))
    with pytest.raises(verifier.VerificationError, match="compatible with fft_length"):
        verifier.verify(module((3, 6), "IRFFT", (6,)))
    with pytest.raises(verifier.VerificationError, match="at most 3"):
        verifier.verify(module((3, 5), "IRFFT", ()))


@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_backends_run_the_fft_op(backend: str) -> None:
    """The reference kernel (pocketfft) and the native backend (through its fallback into that
    kernel) agree with NumPy for every type, on a batch."""
    cases = [("fft", _complex(4, 6)), ("ifft", _complex(4, 6)), ("rfft", _real(4, 7)),
             ("irfft", _complex(4, 5)), ("fftn", _complex(2, 3, 4)), ("irfftn", _complex(2, 3, 4))]
    for name, x in cases:
        module = lower_to_module(getattr(jnp.fft, name), x)
        got, = run_on_backend(backend, module, x)
        assert_close(got, getattr(np.fft, name)(x), 1e-4, context=f"{backend} {name}")


def test_native_backend_runs_fft_through_its_fallback() -> None:
    from justjax._src.backends.llvm.runtime import executable as llvm_executable
    from justjax._src.hlo.passes.optimize import optimize
    module = lower_to_module(lambda x: jnp.fft.rfft(x * 2.0) * 3.0, _real(3, 8))
    optimize(module)
    executable = llvm_executable.compile_module(module)
    assert [f.op.opcode for f in executable.program.fallbacks] == ["stablehlo.fft"]


def test_generic_form_of_the_fft_op() -> None:
    """MLIR's generic form, as real jaxlib prints it (`print_generic_op_form=True`)."""
    from justjax._src.hlo import stablehlo_printer
    module = lower_to_module(jnp.fft.rfft, np.ones(8, np.float32))
    function = next(f for f in module.functions if f.name == "fft")
    printer = stablehlo_printer._FunctionPrinter(function)
    assert printer.generic(function.body.ops[0], "") == (
        '"stablehlo.fft"(%arg0) <{fft_length = array<i64: 8>, fft_type = '
        '#stablehlo<fft_type RFFT>}> : (tensor<8xf32>) -> tensor<5xcomplex<f32>>')
