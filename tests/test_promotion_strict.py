"""`jax_numpy_dtype_promotion='strict'`: only weak types (Python scalars) promote implicitly.

Expected dtypes and errors recorded from JAX 0.10.2 (CPU, x64 off) with the same programs.
The order in which JAX's message lists the dtypes follows a set's order; it is not compared.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.core import dtypes

ERROR = dtypes.TypePromotionError

OK_CASES = {
    "f32+1.0": (lambda: jnp.ones(2, jnp.float32) + 1.0, "float32", False),
    "f32+1": (lambda: jnp.ones(2, jnp.float32) + 1, "float32", False),
    "i32+1": (lambda: jnp.ones(2, jnp.int32) + 1, "int32", False),
    "bool+True": (lambda: jnp.ones(2, bool) + True, "bool", False),
    "f32+np_f32": (lambda: jnp.ones(2, jnp.float32) + np.ones(2, np.float32), "float32", False),
    # Without x64, a NumPy float64 array is float32 before promotion.
    "f32+np_f64": (lambda: jnp.ones(2, jnp.float32) + np.ones(2, np.float64), "float32", False),
    "f32+np_scalar": (lambda: jnp.ones(2, jnp.float32) + np.float32(1), "float32", False),
    "1.0+1": (lambda: jnp.add(1.0, 1), "float32", True),
    "lax.add(f32, 1.0)": (lambda: lax.add(jnp.ones(2), 1.0), "float32", False),
    "where(b, f32, 0)": (lambda: jnp.where(jnp.ones(2, bool), jnp.ones(2), 0), "float32", False),
    "mean(i32)": (lambda: jnp.mean(jnp.ones(2, jnp.int32)), "float32", False),
    "sin(i32)": (lambda: jnp.sin(jnp.ones(2, jnp.int32)), "float32", False),
    "array([1, 2.0])": (lambda: jnp.array([1, 2.0]), "float32", False),
    "f32 ** 2": (lambda: jnp.ones(2) ** 2, "float32", False),
    "i32 / i32": (lambda: jnp.ones(2, jnp.int32) / jnp.ones(2, jnp.int32), "float32", False),
    "i32 / 2": (lambda: jnp.ones(2, jnp.int32) / 2, "float32", False),
    "clip(f32, 0, 1)": (lambda: jnp.clip(jnp.ones(2), 0, 1), "float32", False),
    "full(1.0, i32)": (lambda: jnp.full((2,), 1.0, jnp.int32), "int32", False),
    "f32 < 0": (lambda: jnp.ones(2) < 0, "bool", False),
    "f32 + weak f32": (lambda: jnp.ones(2) + jnp.asarray(1.0), "float32", False),
    "f16 + weak f32": (lambda: jnp.ones(2, jnp.float16) + jnp.asarray(1.0), "float16", False),
}

ERROR_CASES = {
    "i32+1.0": (lambda: jnp.ones(2, jnp.int32) + 1.0, ("<class 'float'>", "int32")),
    "bool+1": (lambda: jnp.ones(2, bool) + 1, ("<class 'int'>", "bool")),
    "f32+f16": (lambda: jnp.ones(2) + jnp.ones(2, jnp.float16), ("float16", "float32")),
    "f32+i32": (lambda: jnp.ones(2) + jnp.ones(2, jnp.int32), ("float32", "int32")),
    "i32+u8": (lambda: jnp.ones(2, jnp.int32) + jnp.ones(2, jnp.uint8), ("uint8", "int32")),
    "f32+1j": (lambda: jnp.ones(2) + 1j, ("float32", "<class 'complex'>")),
    "promote_types(f32, i32)": (lambda: jnp.promote_types(jnp.float32, jnp.int32),
                                ("float32", "int32")),
    "promote_types(i32, float)": (lambda: jnp.promote_types(jnp.int32, float),
                                  ("int32", "<class 'float'>")),
    "result_type(f32, i32)": (lambda: jnp.result_type(jnp.float32, jnp.int32),
                              ("float32", "int32")),
    "where(b, i32, 0.0)": (lambda: jnp.where(jnp.ones(2, bool), jnp.ones(2, jnp.int32), 0.0),
                           ("<class 'float'>", "int32")),
    "concatenate(f32, i32)": (lambda: jnp.concatenate([jnp.ones(2), jnp.ones(2, jnp.int32)]),
                              ("float32", "int32")),
    "at.set i32 <- 1.5": (lambda: jnp.zeros(2, jnp.int32).at[0].set(1.5),
                          ("<class 'float'>", "int32")),
    "dot(f32, i32)": (lambda: jnp.dot(jnp.ones(2), jnp.ones(2, jnp.int32)), ("float32", "int32")),
    "maximum(i32, 0.0)": (lambda: jnp.maximum(jnp.ones(2, jnp.int32), 0.0),
                          ("<class 'float'>", "int32")),
    "f32 == i32": (lambda: jnp.ones(2) == jnp.ones(2, jnp.int32), ("float32", "int32")),
    "bf16 + f32": (lambda: jnp.ones(2, jnp.bfloat16) + jnp.ones(2), ("float32", "bfloat16")),
    "i32 + weak f32": (lambda: jnp.ones(2, jnp.int32) + jnp.asarray(1.0),
                       ("<class 'float'>", "int32")),
}


@pytest.mark.parametrize("name", OK_CASES)
def test_strict_allows_weak_promotion(name):
    fn, dtype, weak = OK_CASES[name]
    with jax.numpy_dtype_promotion("strict"):
        out = fn()
    assert str(out.dtype) == dtype
    assert out.weak_type is weak


@pytest.mark.parametrize("name", ERROR_CASES)
def test_strict_rejects_other_promotion(name):
    fn, dtype_names = ERROR_CASES[name]
    with jax.numpy_dtype_promotion("strict"), pytest.raises(ERROR) as info:
        fn()
    listed = re.match(r"^Input dtypes \((.*)\) have no available implicit dtype promotion path "
                      r"when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs "
                      r"to the desired output type, or set jax_numpy_dtype_promotion="
                      r"standard.$", str(info.value))
    assert listed is not None, str(info.value)
    assert sorted(eval(f"({listed.group(1)},)")) == sorted(dtype_names)
    fn()  # standard promotion allows it


def test_strict_promote_types_of_weak_types():
    with jax.numpy_dtype_promotion("strict"):
        assert jnp.promote_types(jnp.float32, float) == np.float32
        assert jnp.promote_types(int, float) == np.float64  # weak float (JAX gives float64)
        assert jnp.result_type(jnp.float32, 1) == np.float32


def test_strict_under_jit_and_as_global_flag():
    f = jax.jit(lambda x, y: x + y)
    x, y = jnp.ones(2), jnp.ones(2, jnp.int32)
    assert f(x, y).dtype == np.float32
    with jax.config.override("jax_numpy_dtype_promotion", "strict"):
        # The flag is part of the trace context: the jit traces again, and fails.
        with pytest.raises(ERROR):
            f(x, y)
        assert f(x, x).dtype == np.float32


def test_type_promotion_error_is_a_value_error():
    assert issubclass(jax.dtypes.TypePromotionError, ValueError)
