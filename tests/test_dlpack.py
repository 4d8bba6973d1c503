"""jax.dlpack (_src/runtime/dlpack.py): from_dlpack of NumPy buffers and Arrays, is_supported_dtype;
results and messages as JAX 0.10.2's on CPU."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp


@pytest.mark.parametrize("dtype, supported", [
    (np.float32, True), (np.float16, True), (ml_dtypes.bfloat16, True), (np.bool_, True),
    (np.int8, True), (np.uint64, True), (np.complex64, True), (np.float64, True),
    (ml_dtypes.float8_e4m3fn, False), (ml_dtypes.int4, False), ("float32", True)])
def test_is_supported_dtype(dtype, supported):
    assert jax.dlpack.is_supported_dtype(dtype) is supported


def test_from_dlpack_of_numpy():
    x = jax.dlpack.from_dlpack(np.arange(6.0).reshape(2, 3))
    # As JAX: float64 canonicalized without x64, committed to the default device.
    assert x.dtype == np.float32 and x.committed and x.devices() == {jax.devices()[0]}
    np.testing.assert_array_equal(x, np.arange(6.0).reshape(2, 3))
    assert jax.dlpack.from_dlpack(np.arange(3, dtype=np.int64)).dtype == np.int32


def test_from_dlpack_of_an_array_and_errors():
    y = jax.dlpack.from_dlpack(jnp.arange(3))
    np.testing.assert_array_equal(y, [0, 1, 2])
    assert y.committed
    with pytest.raises(TypeError, match="The array passed to from_dlpack must have __dlpack__ "
                                        "and __dlpack_device__ methods."):
        jax.dlpack.from_dlpack(object())
