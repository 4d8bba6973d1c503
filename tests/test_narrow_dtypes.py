"""JAX's narrow dtypes (ml_dtypes' float8_*, float6_*, float4_e2m1fn, int1/2/4, uint1/2/4),
in `_src/core/dtypes.py`, the jnp scalar types and the backends: creation, conversion,
printing, promotion (JAX's lattice: no implicit promotion but with Python scalars), and math
computed as XLA CPU computes it (float32 math rounded through float16).

Values, texts and messages are read off JAX 0.10.2 on CPU.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import dtypes as jax_dtypes

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu"]
NARROW_FLOATS = FLOAT8 + ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"]
NARROW_INTS = ["int1", "int2", "int4", "uint1", "uint2", "uint4"]

X = np.array([1.3, -2.7, 300.0, 1e-3, 0.4, -7.5, 3.14159, 100.0], np.float32)
Y = np.array([0.7, 2.2, -3.0, 5.0, 0.333, 1.1, -0.01, 9.0], np.float32)

# The bytes of each result under jit on JAX 0.10.2 (CPU).
RECORDED = {
    'float8_e4m3fn': {'create': [58, 195, 121, 1, 45, 207, 69, 108], 'mul': [54, 204, 255, 5, 33, 208, 144, 127], 'add': [64, 176, 121, 74, 52, 205, 69, 109], 'div': [63, 186, 236, 0, 57, 205, 250, 83], 'sin': [55, 172, 182, 1, 45, 183, 158, 56], 'exp': [70, 24, 127, 56, 60, 0, 93, 127], 'dot': [214], 'max': [121], 'sort': [207, 195, 1, 45, 58, 69, 108, 121], 'to_e5m2': [61, 194, 92, 24, 54, 200, 66, 86]},
    'float8_e5m2': {'create': [61, 193, 93, 20, 54, 200, 66, 86], 'mul': [60, 197, 228, 29, 48, 200, 168, 98], 'add': [64, 184, 93, 69, 58, 199, 66, 86], 'div': [63, 189, 215, 10, 61, 200, 221, 74], 'sin': [60, 185, 183, 20, 54, 188, 49, 60], 'exp': [67, 45, 124, 60, 62, 13, 77, 124], 'dot': [218], 'max': [93], 'sort': [200, 193, 20, 54, 61, 66, 86, 93], 'to_e5m2': [61, 193, 93, 20, 54, 200, 66, 86]},
    'float8_e4m3fnuz': {'create': [66, 203, 128, 1, 53, 215, 77, 116], 'mul': [62, 212, 128, 5, 41, 216, 152, 128], 'add': [72, 184, 128, 82, 60, 213, 77, 117], 'div': [71, 194, 128, 0, 65, 213, 128, 91], 'sin': [63, 180, 128, 1, 53, 191, 166, 64], 'exp': [78, 32, 128, 64, 68, 1, 101, 128], 'dot': [128], 'max': [128], 'sort': [128, 215, 203, 1, 53, 66, 77, 116], 'to_e5m2': [61, 194, 127, 20, 54, 200, 66, 86]},
    'float8_e5m2fnuz': {'create': [65, 197, 97, 24, 58, 204, 70, 90], 'mul': [64, 201, 232, 33, 52, 204, 172, 102], 'add': [68, 188, 97, 73, 62, 203, 70, 90], 'div': [67, 193, 219, 14, 65, 204, 225, 78], 'sin': [64, 189, 187, 24, 58, 192, 53, 64], 'exp': [71, 49, 128, 64, 66, 17, 81, 128], 'dot': [222], 'max': [97], 'sort': [204, 197, 24, 58, 65, 70, 90, 97], 'to_e5m2': [61, 193, 93, 20, 54, 200, 66, 86]},
    'float8_e4m3b11fnuz': {'create': [90, 227, 128, 8, 77, 239, 101, 128], 'mul': [86, 236, 128, 26, 65, 240, 176, 128], 'add': [96, 208, 128, 106, 84, 237, 101, 128], 'div': [95, 218, 128, 2, 89, 237, 128, 128], 'sin': [87, 204, 128, 8, 77, 215, 190, 128], 'exp': [102, 56, 128, 88, 92, 5, 125, 128], 'dot': [128], 'max': [128], 'sort': [128, 128, 239, 227, 8, 77, 90, 101], 'to_e5m2': [61, 194, 127, 20, 54, 200, 66, 127]},
    'float8_e3m4': {'create': [53, 198, 112, 0, 26, 222, 73, 112], 'mul': [45, 217, 240, 0, 9, 225, 131, 112], 'add': [64, 160, 112, 84, 40, 218, 73, 112], 'div': [63, 180, 240, 0, 52, 219, 240, 112], 'sin': [47, 152, 248, 0, 25, 174, 1, 248], 'exp': [78, 4, 112, 48, 56, 0, 112, 112], 'dot': [248], 'max': [112], 'sort': [222, 198, 0, 26, 53, 73, 112, 112], 'to_e5m2': [61, 194, 124, 0, 54, 200, 66, 124]},
    'float8_e4m3': {'create': [58, 195, 120, 1, 45, 207, 69, 108], 'mul': [54, 204, 248, 5, 33, 208, 144, 120], 'add': [64, 176, 120, 74, 52, 205, 69, 109], 'div': [63, 186, 248, 0, 57, 205, 248, 83], 'sin': [55, 172, 252, 1, 45, 183, 158, 56], 'exp': [70, 24, 120, 56, 60, 0, 93, 120], 'dot': [248], 'max': [120], 'sort': [207, 195, 1, 45, 58, 69, 108, 120], 'to_e5m2': [61, 194, 124, 24, 54, 200, 66, 86]},
    'float8_e8m0fnu': {'create': [127, 255, 135, 117, 126, 255, 129, 134], 'mul': [126, 255, 255, 119, 124, 255, 255, 137], 'add': [128, 255, 255, 129, 127, 255, 255, 134], 'div': [128, 255, 255, 115, 128, 255, 255, 131], 'sin': [127, 255, 255, 117, 126, 255, 255, 126], 'exp': [128, 255, 255, 127, 128, 255, 133, 255], 'dot': [255], 'max': [255], 'sort': [117, 126, 127, 129, 134, 135, 255, 255], 'to_e5m2': [60, 127, 92, 20, 56, 127, 68, 88]},
    'float4_e2m1fn': {'create': [3, 13, 7, 0, 1, 15, 5, 7], 'mul': [2, 15, 15, 0, 0, 15, 8, 7], 'add': [4, 10, 5, 6, 2, 14, 5, 7], 'div': [5, 11, 12, 0, 2, 15, 15, 2], 'sin': [2, 8, 9, 0, 1, 1, 0, 9], 'exp': [6, 0, 7, 2, 3, 0, 7, 7], 'dot': [7], 'max': [7], 'sort': [15, 13, 0, 1, 3, 5, 7, 7], 'to_e5m2': [62, 194, 70, 0, 56, 198, 66, 70]},
}


OPS = {
    "create": lambda x, y: x, "mul": lambda x, y: x * y, "add": lambda x, y: x + y,
    "div": lambda x, y: x / y, "sin": lambda x, y: jnp.sin(x), "exp": lambda x, y: jnp.exp(x),
    "dot": lambda x, y: jnp.dot(x, y)[None], "max": lambda x, y: jnp.max(x)[None],
    "sort": lambda x, y: jnp.sort(x), "to_e5m2": lambda x, y: x.astype(jnp.float8_e5m2),
}


# How jaxprs spell them (JAX 0.10.2).
SHORT_NAMES = {**{name: "f" + name[len("float"):] for name in NARROW_FLOATS},
               "int1": "i1", "int2": "i2", "int4": "i4", "uint1": "u1", "uint2": "u2",
               "uint4": "u4"}


@pytest.mark.parametrize("name", NARROW_FLOATS + NARROW_INTS)
def test_scalar_types(name) -> None:
    scalar_type = getattr(jnp, name)
    assert np.dtype(scalar_type) == np.dtype(getattr(ml_dtypes, name))
    assert repr(scalar_type) == f"<class 'jax.numpy.{name}'>"
    assert scalar_type == getattr(ml_dtypes, name)
    x = jnp.ones((2,), scalar_type)
    assert x.dtype == np.dtype(scalar_type)
    assert x.aval.str_short() == f"{SHORT_NAMES[name]}[2]"


@pytest.mark.parametrize("name", FLOAT8 + ["float4_e2m1fn"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_math_matches_jax_bitwise(name, op) -> None:
    dtype = getattr(jnp, name)
    x, y = jnp.asarray(X).astype(dtype), jnp.asarray(Y).astype(dtype)
    for fun in (OPS[op], jax.jit(OPS[op])):
        got = np.asarray(fun(x, y))
        assert got.view(np.uint8).tolist() == RECORDED[name][op], (name, op)


def test_printing() -> None:
    x = jnp.array([1.3, -2.7, 300.0, 1e-3, 500.0], jnp.float8_e4m3fn)
    assert repr(x) == "Array([1.25, -2.75, 288, 0.00195312, nan], dtype=float8_e4m3fn)"
    assert str(x) == "[1.25 -2.75 288 0.00195312 nan]"
    assert repr(jnp.float8_e4m3fn(3.3)) == "Array(3.25, dtype=float8_e4m3fn)"
    assert repr(jnp.arange(4, dtype=jnp.float8_e4m3fn)) == (
        "Array([0, 1, 2, 3], dtype=float8_e4m3fn)")
    assert repr(jnp.array([1.3, -2.7, 300.0, 1e-3, 70000.0, np.nan, np.inf],
                          jnp.float4_e2m1fn)) == (
        "Array([1.5, -3, 6, 0, 6, -0, 6], dtype=float4_e2m1fn)")


def test_conversions() -> None:
    x = jnp.array([1.3, -2.7, 300.0, 1e-3, 500.0], jnp.float8_e4m3fn)
    np.testing.assert_array_equal(x.astype(jnp.float32), [1.25, -2.75, 288, 0.001953125, np.nan])
    np.testing.assert_array_equal(x.astype(jnp.int32), [1, -2, 288, 0, 0])
    assert str(x.astype(jnp.bfloat16)) == "[1.25 -2.75 288 0.00195312 nan]"
    ints = jnp.asarray(np.array([1.5, 100.0, np.nan, -100.0], np.float32)).astype(jnp.int4)
    np.testing.assert_array_equal(ints.astype(jnp.int32), [1, 7, 0, -8])  # saturating
    wrapped = jnp.asarray(np.array([9, 16, -9], np.int8)).astype(jnp.int4)
    np.testing.assert_array_equal(wrapped.astype(jnp.int32), [-7, 0, 7])
    grad = jax.grad(lambda v: (v.astype(jnp.float8_e4m3fn).astype(jnp.float32) * 3.0).sum())
    np.testing.assert_array_equal(grad(jnp.ones(3)), [3.0, 3.0, 3.0])


def test_promotion() -> None:
    assert jnp.promote_types(jnp.float8_e4m3fn, float) == jnp.float8_e4m3fn
    assert jnp.promote_types(jnp.int4, int) == jnp.int4
    assert jnp.promote_types(jnp.float8_e4m3fn, jnp.int32) == jnp.float8_e4m3fn
    assert jnp.promote_types(jnp.int4, jnp.bool_) == jnp.int4
    x = jnp.ones(2, jnp.float8_e4m3fn)
    assert (x + 1).dtype == jnp.float8_e4m3fn and (x * 2.5).dtype == jnp.float8_e4m3fn
    assert jnp.result_type(jnp.ones(2, jnp.int4), 3) == jnp.int4
    with pytest.raises(jax_dtypes.TypePromotionError) as e:
        jnp.promote_types(jnp.float8_e4m3fn, jnp.float32)
    assert str(e.value) == (
        "Input dtypes ('float8_e4m3fn', 'float32') have no available implicit dtype promotion "
        "path. To avoid unintended promotion, 8-bit floats do not support implicit promotion. "
        "If you'd like your inputs to be promoted to another type, you can do so explicitly "
        "using e.g. x.astype('float32')")
    with pytest.raises(jax_dtypes.TypePromotionError, match="8-bit floats"):
        x + jnp.ones(2, jnp.float8_e5m2)
    with pytest.raises(jax_dtypes.TypePromotionError) as e:
        jnp.promote_types(jnp.int4, jnp.int8)
    assert str(e.value) == (
        "Input dtypes ('int4', 'int8') have no available implicit dtype promotion path. To "
        "avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not support implicit "
        "promotion. If you'd like your inputs to be promoted to another type, you can do so "
        "explicitly using e.g. x.astype('int32')")
    with pytest.raises(jax_dtypes.TypePromotionError, match="4-bit floats"):
        jnp.promote_types(jnp.float4_e2m1fn, jnp.bfloat16)
    with pytest.raises(jax_dtypes.TypePromotionError, match="6-bit floats"):
        jnp.promote_types(jnp.float6_e2m3fn, jnp.float16)


def test_kinds_and_limits() -> None:
    for name in NARROW_FLOATS:
        assert jnp.issubdtype(getattr(jnp, name), jnp.floating)
        assert jnp.issubdtype(getattr(jnp, name), jnp.inexact)
        assert not jnp.issubdtype(getattr(jnp, name), jnp.integer)
        assert jnp.isdtype(getattr(jnp, name), "real floating")
    assert jnp.issubdtype(jnp.int4, jnp.signedinteger)
    assert jnp.issubdtype(jnp.uint4, jnp.unsignedinteger)
    assert not jnp.issubdtype(jnp.uint4, jnp.signedinteger)
    assert jnp.issubdtype(jnp.float8_e5m2, jnp.float8_e5m2)
    assert not jnp.issubdtype(jnp.float8_e5m2, jnp.float8_e4m3fn)
    assert float(jnp.finfo(jnp.float8_e4m3fn).max) == 448.0
    assert int(jnp.iinfo(jnp.int4).min) == -8
    assert jax_dtypes.issubdtype(jnp.float8_e4m3fn, np.floating)


def test_jaxpr_and_lowering() -> None:
    x = jnp.ones(5, jnp.float8_e4m3fn)
    f = lambda v: (v * 2).astype(jnp.float32)
    assert str(jax.make_jaxpr(f)(x)) == """\
{ lambda ; a:f8_e4m3fn[5]. let
    b:f8_e4m3fn[5] = mul a 2.0:f8_e4m3fn[]
    c:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] b
  in (c,) }"""
    text = jax.jit(f).lower(x).as_text()
    assert "func.func public @main(%arg0: tensor<5xf8E4M3FN>)" in text
    assert "%cst = stablehlo.constant dense<2.000000e+00> : tensor<f8E4M3FN>" in text
    assert "entry_computation_layout={(f8e4m3fn[5]{0})->f32[5]{0}}" in (
        jax.jit(f).lower(x).compile().as_text())
    constants = jax.jit(lambda v: v * jnp.array([2.5, np.nan], v.dtype)).lower(
        jnp.ones(2, jnp.float8_e5m2)).as_text()
    assert "dense<[2.500000e+00, 0x7E]> : tensor<2xf8E5M2>" in constants
    names = {"float8_e4m3b11fnuz": "f8E4M3B11FNUZ", "float4_e2m1fn": "f4E2M1FN", "int4": "i4",
             "uint2": "ui2"}
    for name, mlir in names.items():
        lowered = jax.jit(lambda v: v).lower(jnp.ones(2, getattr(jnp, name))).as_text()
        assert f"tensor<2x{mlir}>" in lowered, name


def test_narrow_integers() -> None:
    x = jnp.asarray(np.array([7, -8, 3, -1], np.int8)).astype(jnp.int4)
    y = jnp.asarray(np.array([1, -1, 5, 2], np.int8)).astype(jnp.int4)
    for fun in ((lambda a, b: a + b), jax.jit(lambda a, b: a + b)):
        out = fun(x, y)
        assert out.dtype == jnp.int4
        np.testing.assert_array_equal(out.astype(jnp.int32), [-8, 7, -8, 1])  # wraps
    np.testing.assert_array_equal((x < y), [False, True, True, True])
    np.testing.assert_array_equal((x * 2).astype(jnp.int32), [-2, 0, 6, -2])
