"""Core behaviour: tracer errors, Array semantics, make_jaxpr options, dtypes and config."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import justjax as jax
from justjax import errors, lax
from justjax._src.core import dtypes
from justjax._src.core.jaxpr import JaxprTypeError, check_jaxpr, eval_jaxpr, encode_name


def ones(shape, dtype=np.float32):
    return jax.device_put(np.ones(shape, dtype))


# -- tracer misuse errors --------------------------------------------------------------------

def f_bool(x):
    if x > 0:
        return x
    return -x


def test_bool_conversion_error_names_function_and_argument() -> None:
    with pytest.raises(errors.TracerBoolConversionError) as info:
        jax.make_jaxpr(f_bool)(1.0)
    message = str(info.value)
    assert message.startswith("Attempted boolean conversion of traced array with shape bool[].\n")
    assert "while tracing the function f_bool at " in message
    assert "depends on the value of the argument x." in message
    assert message.endswith("See https://docs.jax.dev/en/latest/errors.html"
                            "#jax.errors.TracerBoolConversionError")
    assert isinstance(info.value, errors.ConcretizationTypeError)
    assert isinstance(info.value, TypeError)


def test_integer_conversion_error() -> None:
    def f_range(x):
        return list(range(x))

    with pytest.raises(errors.TracerIntegerConversionError) as info:
        jax.make_jaxpr(f_range)(3)
    assert str(info.value).startswith(
        "The __index__() method was called on traced array with shape int32[]\n")
    assert not isinstance(info.value, errors.ConcretizationTypeError)
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("convert", [float, int, complex])
def test_scalar_conversion_is_a_concretization_error(convert) -> None:
    with pytest.raises(errors.ConcretizationTypeError) as info:
        jax.make_jaxpr(lambda x: convert(x))(1.0)
    message = str(info.value)
    assert message.startswith("Abstract tracer value encountered where concrete value is "
                              "expected: traced array with shape float32[]\n")
    assert f"The problem arose with the `{convert.__name__}` function." in message


def test_numpy_conversion_error() -> None:
    with pytest.raises(errors.TracerArrayConversionError) as info:
        jax.make_jaxpr(lambda x: np.asarray(x))(ones(3))
    assert "__array__() was called on traced array with shape float32[3]" in str(info.value)


def test_arguments_named_in_error_for_dependencies_of_several_arguments() -> None:
    def f(x, y):
        if x + y > 0:
            return x

    with pytest.raises(errors.TracerBoolConversionError, match="arguments x and y"):
        jax.make_jaxpr(f)(1.0, 2.0)


def test_tracer_repr_and_item() -> None:
    seen = []

    def show(x):
        seen.append(repr(x))
        return x

    jax.make_jaxpr(show)(ones(3))
    jax.make_jaxpr(show)(1.0)
    assert seen == ["JitTracer(float32[3])", "JitTracer(~float32[])"]
    with pytest.raises(errors.ConcretizationTypeError, match="item\\(\\) method of jax.Array"):
        jax.make_jaxpr(lambda x: x.item())(1.0)


def test_escaped_tracer_is_an_unexpected_tracer_error() -> None:
    leaked = []

    def leak(x):
        leaked.append(x)
        return x

    jax.make_jaxpr(leak)(ones(3))
    with pytest.raises(errors.UnexpectedTracerError, match="escape the scope"):
        lax.add(leaked[0], ones(3))
    with pytest.raises(errors.UnexpectedTracerError):
        jax.make_jaxpr(lambda y: y + leaked[0])(ones(3))


def test_closed_over_tracer_of_outer_trace_becomes_constvar() -> None:
    def outer(x):
        inner = jax.make_jaxpr(lambda y: y * x)(ones(3))
        assert len(inner.jaxpr.constvars) == 1
        return x

    jax.make_jaxpr(outer)(ones(3))


# -- Array -----------------------------------------------------------------------------------

def test_array_repr_matches_jax() -> None:
    assert repr(jax.device_put(np.array([1.0, 2.0, 3.0], np.float32))) == \
        "Array([1., 2., 3.], dtype=float32)"
    assert repr(jax.device_put(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    assert repr(jax.device_put(np.arange(6, dtype=np.int32).reshape(2, 3))) == \
        "Array([[0, 1, 2],\n       [3, 4, 5]], dtype=int32)"
    assert repr(jax.device_put(np.array([True, False]))) == "Array([ True, False], dtype=bool)"
    assert repr(jax.device_put(np.arange(10000.0, dtype=np.float32))) == (
        "Array([0.000e+00, 1.000e+00, 2.000e+00, ..., 9.997e+03, 9.998e+03,\n"
        "       9.999e+03], dtype=float32)")
    assert repr(jax.device_put(np.arange(1001, dtype=np.int32))) == \
        "Array([   0,    1,    2, ...,  998,  999, 1000], dtype=int32)"


def test_array_is_immutable() -> None:
    a = ones(3)
    with pytest.raises(TypeError, match="JAX arrays are immutable"):
        a[0] = 1
    with pytest.raises(ValueError):
        np.asarray(a)[0] = 5  # the host view is read-only too


def test_array_python_conversions() -> None:
    assert float(jax.device_put(2.5)) == 2.5
    assert int(jax.device_put(np.int32(7))) == 7
    assert bool(jax.device_put(True)) is True
    assert jax.device_put(np.arange(3, dtype=np.int32)).tolist() == [0, 1, 2]
    assert jax.device_put(np.float32(1.5)).item() == 1.5
    assert [1, 2, 3][jax.device_put(np.int32(1))] == 2
    with pytest.raises(TypeError, match="Only scalar arrays can be converted to Python "
                                        "scalars; got arr.ndim=1"):
        float(ones(3))
    with pytest.raises(ValueError, match="truth value of an array with more than one element"):
        bool(ones(3))
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(jax.device_put(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(jax.device_put(1.0))
    with pytest.raises(TypeError, match="unhashable"):
        hash(ones(3))


def test_array_iterates_over_rows_and_pickles() -> None:
    a = jax.device_put(np.arange(6, dtype=np.int32).reshape(3, 2))
    rows = list(a)
    assert len(rows) == 3 and all(isinstance(r, jax.Array) for r in rows)
    np.testing.assert_array_equal(rows[2], [4, 5])
    restored = pickle.loads(pickle.dumps(jax.device_put(1.0)))
    assert restored.weak_type and float(restored) == 1.0


def test_device_put_canonicalizes_and_block_until_ready() -> None:
    a = jax.device_put(np.arange(3.0))
    assert a.dtype == np.float32 and not a.weak_type
    assert jax.device_put(3).dtype == np.int32 and jax.device_put(3).weak_type
    tree = {"a": a, "b": [1.0]}
    assert jax.block_until_ready(tree) is not None
    assert jax.devices()[0].platform == "cpu" and repr(jax.devices()[0]) == "CpuDevice(id=0)"
    assert a.devices() == {jax.devices()[0]}
    committed = jax.device_put(a, jax.devices()[0])
    assert committed.committed and not a.committed


def test_python_int_overflow() -> None:
    with pytest.raises(OverflowError, match="Python int 1099511627776 too large to convert to "
                                            "int32"):
        jax.device_put(2 ** 40)


# -- make_jaxpr ------------------------------------------------------------------------------

def test_make_jaxpr_static_argnums_and_errors() -> None:
    def scale(x, n):
        return x * n

    text = str(jax.make_jaxpr(scale, static_argnums=1)(ones(2), 3))
    assert "mul a 3.0:f32[]" in text
    with pytest.raises(ValueError, match="static_argnums"):
        jax.make_jaxpr(scale, static_argnums=5)(ones(2), 3)


def test_make_jaxpr_return_shape_and_eval_shape() -> None:
    closed, shapes = jax.make_jaxpr(lambda x: {"y": x * 2}, return_shape=True)(ones((2, 3)))
    assert repr(shapes) == "{'y': ShapeDtypeStruct(shape=(2, 3), dtype=float32)}"
    out = jax.eval_shape(lambda x, y: (x + y, y), ones(3), 1.0)
    assert out[0].shape == (3,) and out[1].weak_type
    assert jax.eval_shape(lambda s: s * 2, jax.ShapeDtypeStruct((4,), np.int32)).dtype == np.int32


def test_jaxpr_evaluation_and_type_checking() -> None:
    closed = jax.make_jaxpr(lambda x, y: (x * y + 1.0, x - y))(ones(3), ones(3))
    check_jaxpr(closed.jaxpr)
    a = jax.device_put(np.array([1.0, 2.0, 3.0], np.float32))
    first, second = eval_jaxpr(closed.jaxpr, closed.consts, a, a)
    np.testing.assert_array_equal(first, [2.0, 5.0, 10.0])
    np.testing.assert_array_equal(second, [0.0, 0.0, 0.0])
    eqn = closed.jaxpr.eqns[0]
    bad = closed.jaxpr.replace(eqns=[eqn, eqn] + closed.jaxpr.eqns[1:])
    with pytest.raises(JaxprTypeError, match="bound twice"):
        check_jaxpr(bad)
    assert closed.in_avals[0].str_short() == "f32[3]"
    assert repr(closed.out_avals[0]) == "ShapedArray(float32[3])"


def test_variable_names_skip_aa() -> None:
    assert [encode_name(i) for i in (0, 25, 26, 27, 51, 52, 675, 676)] == \
        ["a", "z", "ba", "bb", "bz", "ca", "zz", "baa"]


def test_long_parameter_lists_break_one_per_line() -> None:
    big_shape = (1000, 2000, 3000, 4000, 5000, 6000)
    closed = jax.make_jaxpr(lambda x: lax.broadcast_in_dim(x, big_shape, (0, 1, 2, 3, 4, 5)))(
        jax.ShapeDtypeStruct((1000, 2000, 3000, 4000, 5000, 1), np.float32))
    assert str(closed) == (
        "{ lambda ; a:f32[1000,2000,3000,4000,5000,1]. let\n"
        "    b:f32[1000,2000,3000,4000,5000,6000] = broadcast_in_dim[\n"
        "      broadcast_dimensions=(0, 1, 2, 3, 4, 5)\n"
        "    ] a\n"
        "  in (b,) }")


# -- dtypes and config ---------------------------------------------------------------------

def test_x64_switch_changes_canonical_types() -> None:
    assert jax.device_put(np.float64(1.0)).dtype == np.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert jax.device_put(np.float64(1.0)).dtype == np.float64
        assert jax.device_put(1).dtype == np.int64
        assert dtypes.result_type(np.int64, np.float32) == np.float32
    finally:
        jax.config.update("jax_enable_x64", False)
    assert jax.device_put(1).dtype == np.int32


def test_promotion_lattice_spot_checks() -> None:
    promote = dtypes.promote_types
    assert promote(np.int64, np.float32) == np.float32
    assert promote(np.uint8, np.int8) == np.int16
    assert promote(np.uint64, np.int64) == np.float64
    assert promote(dtypes.bfloat16, np.float16) == np.float32
    assert promote(np.bool_, np.uint8) == np.uint8
    assert dtypes.result_type_and_weak(np.zeros(3, np.float16), 1.0) == (np.float16, False)
    assert dtypes.result_type_and_weak(1, 2.0) == (np.float32, True)
    assert dtypes.result_type_and_weak(True, False) == (np.bool_, False)


def test_unknown_config_flag() -> None:
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        jax.config.update("jax_not_a_flag", 1)


def test_iterating_a_tracer_stages_a_slice_per_row() -> None:
    closed = jax.make_jaxpr(lambda x: list(x))(ones((2, 3)))
    assert str(closed) == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] a\n"
        "    c:f32[3] = squeeze[dimensions=(0,)] b\n"
        "    d:f32[1,3] = slice[limit_indices=(2, 3) start_indices=(1, 0) strides=(1, 1)] a\n"
        "    e:f32[3] = squeeze[dimensions=(0,)] d\n"
        "  in (c, e) }")
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        jax.make_jaxpr(lambda x: list(x))(1.0)


def test_trace_state_clean() -> None:
    """`jax._src.core.trace_state_clean` (numpyro reads it): True only outside every
    transformation and axis binding."""
    from justjax._src.core.core import trace_state_clean
    seen = []

    def f(x):
        seen.append(trace_state_clean())
        return x

    assert trace_state_clean()
    jax.jit(f)(1.0)
    jax.vmap(f)(np.ones(2))
    jax.grad(f)(1.0)
    assert seen == [False, False, False] and trace_state_clean()
