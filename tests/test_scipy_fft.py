"""`jax.scipy.fft`: the type-2 DCT and its inverse against `scipy.fft`, their errors (read off
JAX 0.10.2), dtypes with x64 off and on, gradients, vmap and jit."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import scipy.fft as osp_fft

import justjax
import justjax.scipy.fft as jsp_fft
from justjax.test_util import check_grads
from tests.harness import assert_close, x64_mode

RNG = np.random.default_rng(7)


def _real(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


ONE_D = [((8,), {}), ((7,), {}), ((1,), {}), ((7,), {"n": 10}), ((7,), {"n": 4}),
         ((3, 7), {"axis": 0}), ((3, 5, 4), {"axis": 1, "n": 6})]


@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
@pytest.mark.parametrize("shape,kwargs", ONE_D)
@pytest.mark.parametrize("name", ["dct", "idct"])
def test_one_dimensional_matches_scipy(name: str, shape: tuple, kwargs: dict,
                                       norm: str | None) -> None:
    x = _real(*shape)
    got = getattr(jsp_fft, name)(x, **kwargs, norm=norm)
    want = getattr(osp_fft, name)(x.astype(np.float64), type=2, **kwargs, norm=norm)
    assert got.dtype == np.float32
    assert_close(got, want, 2e-5 * max(1.0, float(np.abs(want).max())))


N_D = [((3, 4), {}), ((3, 4, 5), {}), ((3, 4, 5), {"axes": (0, 2)}), ((3, 4, 5), {"axes": 1}),
       ((3, 4, 5), {"s": (6, 2)}), ((3, 4, 5), {"s": 6}),
       ((3, 4, 5), {"s": (4, 4), "axes": (0, 2)}), ((2, 3, 2, 3), {})]


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("shape,kwargs", N_D)
@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_n_dimensional_matches_scipy(name: str, shape: tuple, kwargs: dict,
                                     norm: str | None) -> None:
    x = _real(*shape)
    got = getattr(jsp_fft, name)(x, **kwargs, norm=norm)
    if "s" in kwargs and "axes" not in kwargs:
        # SciPy pairs an int `s` with `axes` given alike.
        size = kwargs["s"]
        count = 1 if isinstance(size, int) else len(size)
        kwargs = {**kwargs, "axes": tuple(range(len(shape) - count, len(shape)))}
    want = getattr(osp_fft, name)(x.astype(np.float64), type=2, **kwargs, norm=norm)
    assert got.dtype == np.float32
    assert_close(got, want, 2e-5 * max(1.0, float(np.abs(want).max())))


def test_complex_inputs_transform_both_parts() -> None:
    z = (_real(3, 6) + 1j * _real(3, 6)).astype(np.complex64)
    for name in ("dct", "idct", "dctn", "idctn"):
        got = getattr(jsp_fft, name)(z, norm="ortho")
        assert got.dtype == np.complex64
        assert_close(got, getattr(osp_fft, name)(z.astype(np.complex128), norm="ortho"), 1e-4)


def test_round_trips() -> None:
    x = _real(4, 9)
    assert_close(jsp_fft.idct(jsp_fft.dct(x)), x, 1e-5)
    assert_close(jsp_fft.idctn(jsp_fft.dctn(x, norm="ortho"), norm="ortho"), x, 1e-5)


def test_dtypes() -> None:
    """As JAX: integers and float16 give float32 (the FFT is complex64)."""
    assert jsp_fft.dct(np.arange(6, dtype=np.int32)).dtype == np.float32
    assert jsp_fft.dct(_real(6).astype(np.float16)).dtype == np.float32
    assert jsp_fft.idct(np.arange(6, dtype=np.int32)).dtype == np.float32
    x = RNG.standard_normal(6)
    with x64_mode(True):
        assert jsp_fft.dct(x).dtype == np.float64
        assert_close(jsp_fft.idctn(x.reshape(2, 3)), osp_fft.idctn(x.reshape(2, 3)), 1e-12)
    with x64_mode(False):
        assert jsp_fft.dct(x).dtype == np.float32


ERRORS = [
    (lambda: jsp_fft.dct(_real(7), type=1), NotImplementedError,
     "Only DCT type 2 is implemented."),
    (lambda: jsp_fft.idct(_real(7), type=3), NotImplementedError,
     "Only DCT type 2 is implemented."),
    (lambda: jsp_fft.dctn(_real(3, 4), type=4), NotImplementedError,
     "Only DCT type 2 is implemented."),
    (lambda: jsp_fft.dct(_real(7), norm="forward"), ValueError,
     "jax.scipy.fft.dct: norm='forward' is not implemented"),
    (lambda: jsp_fft.idctn(_real(3, 4), norm="forward"), ValueError,
     "jax.scipy.fft.idctn: norm='forward' is not implemented"),
    (lambda: jsp_fft.dct(_real(3, 7), axis=2), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: jsp_fft.dctn(_real(3, 4, 5), s=(2, 3, 4, 5)), ValueError,
     "s must have at most x.ndim (3) elements, got 4"),
    (lambda: jsp_fft.dctn(_real(3, 4, 5), axes=(0, 0)), ValueError, "repeated axis: (0, 0)"),
    (lambda: jsp_fft.dctn(_real(3, 4, 5), axes=(0, -3)), ValueError, "repeated axis: (0, 0)"),
    (lambda: jsp_fft.dctn(_real(3, 4, 5), axes=(0, 3)), ValueError,
     "axis 3 is out of bounds for array of dimension 3"),
]


@pytest.mark.parametrize("call,error,message", ERRORS)
def test_errors(call: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_transformations() -> None:
    x = _real(3, 5)
    assert_close(justjax.jit(jsp_fft.idct)(x), jsp_fft.idct(x), 1e-6)
    batched = justjax.vmap(jsp_fft.dct, in_axes=1)(x)
    assert_close(batched, np.stack([np.asarray(jsp_fft.dct(x[:, i])) for i in range(5)]), 1e-5)
    with x64_mode(True):
        wide = RNG.standard_normal((3, 4))
        check_grads(lambda a: jsp_fft.dct(a, norm="ortho"), (wide,), order=2)
        check_grads(lambda a: jsp_fft.idctn(a, s=(4, 5)), (wide,), order=2)
