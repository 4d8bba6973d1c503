"""The process's environment (_src/environment.py): host_*, process_indices, live_arrays,
print_environment_info; and the small jax.dtypes / jax.stages / jax.errors names."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp


def test_process_functions_and_deprecated_aliases():
    assert jax.process_indices() == [0]
    # JAX 0.10.2's own wording (it names the new function twice, and "process_indexs").
    with pytest.warns(UserWarning, match="jax.process_index has been renamed to "
                                         "jax.process_index"):
        assert jax.host_id() == 0
    with pytest.warns(UserWarning, match="jax.process_count has been renamed"):
        assert jax.host_count() == 1
    with pytest.warns(UserWarning, match="jax.process_indexs has been renamed to "
                                         "jax.process_indices"):
        assert jax.host_ids() == [0]


def test_live_arrays():
    a = jnp.ones(3)
    b = jnp.zeros(2)
    live = jax.live_arrays()
    assert any(x is a for x in live) and any(x is b for x in live)
    b.delete()
    assert not any(x is b for x in jax.live_arrays("cpu"))
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested, but no platforms "
                                           "that are instances of gpu are present"):
        jax.live_arrays("gpu")


def test_print_environment_info(capsys):
    text = jax.print_environment_info(return_string=True)
    lines = text.splitlines()
    assert lines[0] == "jax:    0.10.2" and lines[1] == "jaxlib: 0.10.2"
    assert lines[2] == f"numpy:  {np.__version__}"
    assert lines[4].startswith("device info: cpu-") and lines[5] == "process_count: 1"
    assert jax.print_environment_info() is None
    assert capsys.readouterr().out == text + "\n" and lines[-1].startswith("platform: ")


@pytest.mark.parametrize("dtype, bits", [  # JAX 0.10.2
    (jnp.int4, 4), (jnp.uint2, 2), ("bfloat16", 16), (np.float64, 64), (jnp.float8_e4m3fn, 8),
    (np.complex128, 128), (jnp.float4_e2m1fn, 4), (bool, 8)])
def test_itemsize_bits(dtype, bits):
    assert jax.dtypes.itemsize_bits(dtype) == bits


def test_itemsize_bits_errors():
    with pytest.raises(ValueError, match="dtype cannot be None."):
        jax.dtypes.itemsize_bits(None)
    with pytest.raises(TypeError, match="data type 'foo' not understood"):
        jax.dtypes.itemsize_bits("foo")
    with pytest.raises(ValueError, match="unexpected input: dtype=<class 'object'>"):
        jax.dtypes.itemsize_bits(object)
    with pytest.raises(ValueError, match=r"unexpected input: dtype=key<fry>"):
        jax.dtypes.itemsize_bits(jax.random.key(0).dtype)


@pytest.mark.parametrize("value, typ", [  # JAX 0.10.2
    (np.float32(1), float), (np.ones(2, np.uint8), int), (np.array(1 + 1j), complex),
    (3, int), (True, bool), (1.0, float)])
def test_scalar_type_of(value, typ):
    assert jax.dtypes.scalar_type_of(value) is typ
    assert jax.dtypes.scalar_type_of(jnp.ones(2, "bfloat16")) is float
    assert jax.dtypes.scalar_type_of(jnp.ones(2, "int4")) is int


def test_scalar_type_of_errors():
    with pytest.raises(ValueError, match="Invalid argument to dtype: None."):
        jax.dtypes.scalar_type_of(None)
    with pytest.raises(TypeError, match="is not a valid JAX array type"):
        jax.dtypes.scalar_type_of("a")


def test_stages_and_errors_names():
    info = jax.stages.ArgInfo(jax.core.ShapedArray((2,), jnp.float32), False)
    assert repr(info) == "ArgInfo(_aval=ShapedArray(float32[2]), donated=False)"
    assert info.shape == (2,) and info.dtype == np.float32 and not info.donated
    assert issubclass(jax.errors.JaxprTypeError, TypeError)
    assert jax.stages.CompilerOptions == dict[str, str | bool]
