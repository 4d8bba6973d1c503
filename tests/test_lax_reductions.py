"""Reductions, argmax/argmin, cumulative reductions, the general `reduce`, `sort` and `top_k`:
printed jaxprs, error messages, NaN and signed-zero semantics, weak types, stability and ties.

Expected texts and values were read off JAX 0.10.2 (jaxlib 0.10.2, CPU).
"""
from __future__ import annotations

import re
from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest

import justjax
from justjax import lax
from justjax._src.core.jaxpr import check_jaxpr

NAN = np.nan
INF = np.inf


def arr(values: Any, dtype: Any = np.float32) -> justjax.Array:
    return justjax.device_put(np.asarray(values, dtype=dtype))


def zeros(shape: tuple[int, ...], dtype: Any = np.float32) -> justjax.Array:
    return justjax.device_put(np.zeros(shape, dtype))


def jaxpr_text(fun: Callable, *args: Any) -> str:
    closed = justjax.make_jaxpr(fun)(*args)
    check_jaxpr(closed.jaxpr)
    return str(closed)


def same_bits(got: Any, want: Any) -> None:
    """Equal values and dtypes, NaNs where expected, and the same signs of zero."""
    got = np.asarray(got)
    want = np.asarray(want, dtype=got.dtype)
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


# -- golden jaxprs --------------------------------------------------------------------------------

C = justjax.device_put(np.array([1, 2, 3], np.int32))


def comp_const(a: Any, b: Any) -> Any:
    return lax.add(a, lax.mul(b, lax.reduce_max(C, (0,))))


def add(a: Any, b: Any) -> Any:
    return lax.add(a, b)


def mul(a: Any, b: Any) -> Any:
    return lax.mul(a, b)


GOLDEN: dict[str, tuple[Callable, tuple, str]] = {
    "reduce_sum": (
        lambda x: lax.reduce_sum(x, (0, 2)), ((2, 3, 4), np.float32),
        "{ lambda ; a:f32[2,3,4]. let\n"
        "    b:f32[3] = reduce_sum[axes=(0, 2) out_sharding=None] a\n"
        "  in (b,) }"),
    "reduce_sum_none": (
        lambda x: lax.reduce_sum(x, ()), ((3,), np.int32),
        "{ lambda ; a:i32[3]. let\n"
        "    b:i32[3] = reduce_sum[axes=() out_sharding=None] a\n"
        "  in (b,) }"),
    "reduce_prod": (
        lambda x: lax.reduce_prod(x, (1,)), ((2, 3), np.int32),
        "{ lambda ; a:i32[2,3]. let b:i32[2] = reduce_prod[axes=(1,)] a in (b,) }"),
    "reduce_max": (
        lambda x: lax.reduce_max(x, (0, 1)), ((2, 3), np.float32),
        "{ lambda ; a:f32[2,3]. let b:f32[] = reduce_max[axes=(0, 1)] a in (b,) }"),
    "reduce_min": (
        lambda x: lax.reduce_min(x, (1,)), ((2, 3), ml_dtypes.bfloat16),
        "{ lambda ; a:bf16[2,3]. let b:bf16[2] = reduce_min[axes=(1,)] a in (b,) }"),
    "reduce_and": (
        lambda x: lax.reduce_and(x, (1,)), ((2, 3), np.bool_),
        "{ lambda ; a:bool[2,3]. let b:bool[2] = reduce_and[axes=(1,)] a in (b,) }"),
    "reduce_or": (
        lambda x: lax.reduce_or(x, (0,)), ((4,), np.uint8),
        "{ lambda ; a:u8[4]. let b:u8[] = reduce_or[axes=(0,)] a in (b,) }"),
    "reduce_xor": (
        lambda x: lax.reduce_xor(x, (0, 1)), ((2, 3), np.int32),
        "{ lambda ; a:i32[2,3]. let b:i32[] = reduce_xor[axes=(0, 1)] a in (b,) }"),
    "argmax": (
        lambda x: lax.argmax(x, 1, np.int32), ((2, 3), np.float32),
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:i32[2] = argmax[axes=(1,) index_dtype=int32] a\n"
        "  in (b,) }"),
    "argmin": (
        lambda x: lax.argmin(x, 0, np.uint8), ((4,), np.float16),
        "{ lambda ; a:f16[4]. let\n"
        "    b:u8[] = argmin[axes=(0,) index_dtype=uint8] a\n"
        "  in (b,) }"),
    "cumsum": (
        lambda x: lax.cumsum(x, axis=1), ((2, 3), np.float32),
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = cumsum[axis=1 reverse=False] a in (b,) }"),
    "cumprod": (
        lambda x: lax.cumprod(x, reverse=True), ((4,), np.int32),
        "{ lambda ; a:i32[4]. let b:i32[4] = cumprod[axis=0 reverse=True] a in (b,) }"),
    "cummax": (
        lambda x: lax.cummax(x, 1, True), ((2, 3), np.float32),
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = cummax[axis=1 reverse=True] a in (b,) }"),
    "cummin": (
        lambda x: lax.cummin(x), ((3,), np.int32),
        "{ lambda ; a:i32[3]. let b:i32[3] = cummin[axis=0 reverse=False] a in (b,) }"),
    "cumlogsumexp": (
        lambda x: lax.cumlogsumexp(x, axis=0, reverse=True), ((5,), np.float32),
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = cumlogsumexp[axis=0 reverse=True] a\n"
        "  in (b,) }"),
    "sort": (
        lambda x: lax.sort(x), ((2, 3), np.float32),
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2,3] = sort[dimension=1 is_stable=True num_keys=1] a\n"
        "  in (b,) }"),
    "top_k": (
        lambda x: lax.top_k(x, 3), ((2, 5), np.float32),
        "{ lambda ; a:f32[2,5]. let\n"
        "    b:f32[2,3] c:i32[2,3] = top_k[axis=1 k=3] a\n"
        "  in (b, c) }"),
    "top_k_axis": (
        lambda x: lax.top_k(x, 1, axis=0), ((4, 3), np.int32),
        "{ lambda ; a:i32[4,3]. let\n"
        "    b:i32[1,3] c:i32[1,3] = top_k[axis=0 k=1] a\n"
        "  in (b, c) }"),
    "reduce_monoid_sum": (
        lambda x: lax.reduce(x, 0, lax.add, (0,)), ((2, 3), np.int32),
        "{ lambda ; a:i32[2,3]. let\n"
        "    b:i32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "  in (b,) }"),
    "reduce_monoid_min": (
        lambda x: lax.reduce(x, np.inf, lax.min, (1,)), ((2, 3), np.float32),
        "{ lambda ; a:f32[2,3]. let b:f32[2] = reduce_min[axes=(1,)] a in (b,) }"),
    "reduce_monoid_and": (
        lambda x: lax.reduce(x, True, lax.bitwise_and, (0,)), ((3,), np.bool_),
        "{ lambda ; a:bool[3]. let b:bool[] = reduce_and[axes=(0,)] a in (b,) }"),
    "reduce_monoid_max_int_inf": (
        lambda x: lax.reduce(x, -np.inf, lax.max, (0,)), ((2, 3), np.int32),
        "{ lambda ; a:i32[2,3]. let b:i32[3] = reduce_max[axes=(0,)] a in (b,) }"),
    "reduce_not_identity": (
        lambda x: lax.reduce(x, 1.0, add, (0,)), ((3,), np.float32),
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[] = reduce[\n"
        "      computation=<function add at 0xXXXXXXXXXXXX>\n"
        "      dimensions=(0,)\n"
        "      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = add c d in (e,) }\n"
        "    ] a 1.0:f32[]\n"
        "  in (b,) }"),
    "reduce_general": (
        lambda x: lax.reduce(x, 0.0, lambda a, b: a + b * b, (0,)), ((2, 3), np.float32),
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[3] = reduce[\n"
        "      computation=<function <lambda>.<locals>.<lambda> at 0xXXXXXXXXXXXX>\n"
        "      dimensions=(0,)\n"
        "      jaxpr={ lambda ; c:f32[] d:f32[]. let\n"
        "          e:f32[] = mul d d\n"
        "          f:f32[] = add c e\n"
        "        in (f,) }\n"
        "    ] a 0.0:f32[]\n"
        "  in (b,) }"),
    "reduce_consts": (
        lambda x: lax.reduce(x, np.int32(0), comp_const, (1,)), ((2, 3), np.int32),
        "{ lambda ; a:i32[2,3]. let\n"
        "    b:i32[2] = reduce[\n"
        "      computation=<function comp_const at 0xXXXXXXXXXXXX>\n"
        "      dimensions=(1,)\n"
        "      jaxpr={ lambda c:i32[3]; d:i32[] e:i32[]. let\n"
        "          f:i32[] = reduce_max[axes=(0,)] c\n"
        "          g:i32[] = mul e f\n"
        "          h:i32[] = add d g\n"
        "        in (h,) }\n"
        "    ] a 0:i32[]\n"
        "  in (b,) }"),
}

GOLDEN_MULTI: dict[str, tuple[Callable, list, str]] = {
    "sort_multi": (
        lambda x, y, z: lax.sort((x, y, z), dimension=0, num_keys=2),
        [((4,), np.float32), ((4,), np.int32), ((4,), np.bool_)],
        "{ lambda ; a:f32[4] b:i32[4] c:bool[4]. let\n"
        "    d:f32[4] e:i32[4] f:bool[4] = sort[dimension=0 is_stable=True num_keys=2] a b\n"
        "      c\n"
        "  in (d, e, f) }"),
    "sort_key_val": (
        lambda x, y: lax.sort_key_val(x, y, is_stable=False),
        [((2, 5), np.int32), ((2, 5), np.float32)],
        "{ lambda ; a:i32[2,5] b:f32[2,5]. let\n"
        "    c:i32[2,5] d:f32[2,5] = sort[dimension=1 is_stable=False num_keys=1] a b\n"
        "  in (c, d) }"),
    "sort_key_val_reference": (
        lambda x, y: lax.sort_key_val(x, y),
        [((5,), np.float32), ((5,), np.int32)],
        "{ lambda ; a:f32[5] b:i32[5]. let\n"
        "    c:f32[5] d:i32[5] = sort[dimension=0 is_stable=True num_keys=1] a b\n"
        "  in (c, d) }"),
    "reduce_variadic": (
        lambda x, y: lax.reduce((x, y), (0.0, 0),
                                lambda a, b: (a[0] + b[0], a[1] + b[1]), (0,)),
        [((5,), np.float32), ((5,), np.int32)],
        "{ lambda ; a:f32[5] b:i32[5]. let\n"
        "    c:f32[] d:i32[] = reduce[\n"
        "      computation=<function <lambda>.<locals>.<lambda> at 0xXXXXXXXXXXXX>\n"
        "      dimensions=(0,)\n"
        "      jaxpr={ lambda ; e:f32[] f:i32[] g:f32[] h:i32[]. let\n"
        "          i:f32[] = add e g\n"
        "          j:i32[] = add f h\n"
        "        in (i, j) }\n"
        "    ] a b 0.0:f32[] 0:i32[]\n"
        "  in (c, d) }"),
    "reduce_traced_init": (
        lambda x, y: lax.reduce(x, y, mul, (0,)), [((3,), np.float32), ((), np.float32)],
        "{ lambda ; a:f32[3] b:f32[]. let\n"
        "    c:f32[] = reduce[\n"
        "      computation=<function mul at 0xXXXXXXXXXXXX>\n"
        "      dimensions=(0,)\n"
        "      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = mul d e in (f,) }\n"
        "    ] a b\n"
        "  in (c,) }"),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_jaxpr(name: str) -> None:
    fun, (shape, dtype), expected = GOLDEN[name]
    assert jaxpr_text(fun, zeros(shape, dtype)) == expected


@pytest.mark.parametrize("name", sorted(GOLDEN_MULTI))
def test_golden_jaxpr_several_args(name: str) -> None:
    fun, specs, expected = GOLDEN_MULTI[name]
    assert jaxpr_text(fun, *[zeros(s, d) for s, d in specs]) == expected


def test_golden_monoid_weak_types() -> None:
    # A weak operand with a strong initial value: the result is made strong explicitly.
    expected = ("{ lambda ; . let\n"
                "    a:f32[3] = broadcast_in_dim 1.0:f32[]\n"
                "    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a\n"
                "    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
                "  in (c,) }")
    assert jaxpr_text(lambda: lax.reduce(lax.broadcast(1.0, (3,)), np.float32(0), lax.add,
                                         (0,))) == expected
    expected = ("{ lambda ; . let\n"
                "    a:f32[3] = broadcast_in_dim 1.0:f32[]\n"
                "    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a\n"
                "  in (b,) }")
    assert jaxpr_text(lambda: lax.reduce(lax.broadcast(1.0, (3,)), 0.0, lax.add,
                                         (0,))) == expected
    # reduce_or strips weak types; weak operand and weak init make the result weak again.
    expected = ("{ lambda ; . let\n"
                "    a:i32[3] = broadcast_in_dim 1:i32[]\n"
                "    b:i32[] = reduce_or[axes=(0,)] a\n"
                "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=True] b\n"
                "  in (c,) }")
    assert jaxpr_text(lambda: lax.reduce(lax.broadcast(1, (3,)), 0, lax.bitwise_or,
                                         (0,))) == expected


# -- error messages -------------------------------------------------------------------------------

ERRORS: list[tuple[str, Callable[[], Any], type, str]] = [
    ("sum_bool", lambda: lax.reduce_sum(arr([True], np.bool_), (0,)), TypeError,
     "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    ("prod_bool", lambda: lax.reduce_prod(arr([True], np.bool_), (0,)), TypeError,
     "reduce_prod does not accept dtype bool. Accepted dtypes are subtypes of number."),
    ("sum_axis_oob", lambda: lax.reduce_sum(zeros((3,)), (1,)), ValueError,
     "reduction axes (1,) contains out-of-bounds indices for float32[3]."),
    ("max_axis_negative", lambda: lax.reduce_max(zeros((3,)), (-1,)), ValueError,
     "reduction axes (-1,) contains out-of-bounds indices for float32[3]."),
    ("sum_axis_duplicate", lambda: lax.reduce_sum(zeros((3, 2)), (0, 0)), ValueError,
     "duplicate value in 'axes' of reduction: (0, 0)"),
    ("or_float", lambda: lax.reduce_or(zeros((3,)), (0,)), TypeError,
     "logical reduction requires operand dtype bool or int, got float32."),
    ("or_axis_oob", lambda: lax.reduce_or(zeros((3,), np.bool_), (2,)), IndexError,
     "index 2 is out of bounds for axis 0 with size 1"),
    ("argmax_axis", lambda: lax.argmax(zeros((3,)), 1, np.int32), ValueError,
     "Invalid axis 1 for operand shape (3,)"),
    ("argmax_negative_axis", lambda: lax.argmax(zeros((3,)), -1, np.int32), ValueError,
     "Invalid axis -1 for operand shape (3,)"),
    ("argmax_empty", lambda: lax.argmax(zeros((0,)), 0, np.int32), ValueError,
     "argmin and argmax require non-empty reduced dimension. operand.shape=(0,) axis=0"),
    ("argmin_float_index", lambda: lax.argmin(zeros((3,)), 0, np.float32), TypeError,
     "index_dtype must be an integer type, but got float32"),
    ("argmax_bool_index", lambda: lax.argmax(zeros((3,)), 0, bool), TypeError,
     "index_dtype must be an integer type, but got bool"),
    ("argmax_no_index", lambda: lax.argmax(zeros((3,)), 0, None), ValueError,
     "dtype must be specified."),
    ("argmax_complex", lambda: lax.argmax(zeros((3,), np.complex64), 0, np.int32), TypeError,
     "gt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, bool."),
    ("cumsum_negative_axis", lambda: lax.cumsum(zeros((3,)), -1), ValueError,
     "XLA operations do not allow negative axes"),
    ("cumsum_axis_oob", lambda: lax.cumsum(zeros((3,)), 1), ValueError,
     "axis 1 is out of bounds for array of shape (3,)"),
    ("cumsum_bool", lambda: lax.cumsum(zeros((3,), np.bool_)), TypeError,
     "cumsum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    ("cummax_bool", lambda: lax.cummax(zeros((3,), np.bool_)), TypeError,
     "cummax does not accept dtype bool. Accepted dtypes are subtypes of number."),
    ("cumlogsumexp_int", lambda: lax.cumlogsumexp(zeros((3,), np.int32)), OverflowError,
     "cannot convert float infinity to integer"),
    ("sort_axis", lambda: lax.sort(zeros((3,)), 1), ValueError,
     "axis 1 is out of bounds for array of dimension 1"),
    ("sort_scalar", lambda: lax.sort(arr(3.0)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    ("sort_shapes", lambda: lax.sort((zeros((3,)), zeros((4,)))), TypeError,
     "Arguments to sort must have equal shapes, got: (3,) (4,)"),
    ("sort_num_keys", lambda: lax.sort((zeros((3,)), zeros((3,))), num_keys=3), ValueError,
     "num_keys=3 must be between 1 and len(operand)=2"),
    ("sort_num_keys_single", lambda: lax.sort(zeros((3,)), num_keys=2), ValueError,
     "num_keys=2 must equal 1 for a single operand."),
    ("sort_nothing", lambda: lax.sort(()), TypeError, "Sort requires at least one operand"),
    ("sort_key_val_scalar_value", lambda: lax.sort_key_val(zeros((3,)), 2.0), TypeError,
     "Arguments to sort must have equal shapes, got: (3,) ()"),
    ("top_k_too_large", lambda: lax.top_k(zeros((3,)), 4), ValueError,
     "k argument to top_k must be no larger than size along axis; got k=4 with shape=[3] "
     "and axis=0"),
    ("top_k_negative", lambda: lax.top_k(zeros((3,)), -1), ValueError,
     "k argument to top_k must be nonnegative, got -1"),
    ("top_k_scalar", lambda: lax.top_k(arr(3.0), 1), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    ("top_k_complex", lambda: lax.top_k(zeros((3,), np.complex64), 1), ValueError,
     "top_k is not compatible with complex inputs."),
    ("top_k_axis", lambda: lax.top_k(zeros((3,)), 1, axis=2), ValueError,
     "axis 2 is out of bounds for array of dimension 1"),
    ("reduce_dtypes", lambda: lax.reduce(zeros((2, 3), np.int32), 0.0,
                                         lambda a, b: a + b * b, (0,)), TypeError,
     "reduce operand dtypes should match corresponding initial value dtypes, got "
     "operands=[ShapedArray(int32[2,3])] and "
     "initial_values=[ShapedArray(float32[], weak_type=True)]"),
    ("reduce_init_shape", lambda: lax.reduce(zeros((2, 3), np.int32), zeros((2,), np.int32),
                                             lambda a, b: a + b * b, (0,)), ValueError,
     "reduce found non-scalar initial value: [(2,)]"),
    ("reduce_dims_oob", lambda: lax.reduce(zeros((2, 3), np.int32), 0,
                                           lambda a, b: a + b * b, (5,)), IndexError,
     "index 5 is out of bounds for axis 0 with size 2"),
    ("reduce_tree", lambda: lax.reduce((zeros((2,)), zeros((2,))), (0.0,),
                                       lambda a, b: a, (0,)), ValueError,
     "Operands must have the same tree structure as init_values: PyTreeDef((*, *)) vs. "
     "PyTreeDef((*,))"),
    ("reduce_tree_list", lambda: lax.reduce([zeros((2,)), zeros((2,))], (0.0, 0.0),
                                            lambda a, b: a, (0,)), ValueError,
     "Operands must have the same tree structure as init_values: PyTreeDef([*, *]) vs. "
     "PyTreeDef((*, *))"),
    ("reduce_too_many_results", lambda: lax.reduce(zeros((2,)), 0.0, lambda a, b: (a, b),
                                                   (0,)), ValueError,
     "Too few leaves for PyTreeDef; expected 2, got 1"),
]


@pytest.mark.parametrize("name,fun,error,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages(name: str, fun: Callable, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        fun()
    assert str(info.value) == message


# Errors that JAX (and justjax) raise only when evaluating, from the lowering or XLA.
EVALUATION_ONLY_ERRORS = {"argmax_complex", "cumlogsumexp_int"}
TRACED_ERRORS = [e for e in ERRORS if e[0] not in EVALUATION_ONLY_ERRORS]


@pytest.mark.parametrize("name,fun,error,message", TRACED_ERRORS,
                         ids=[e[0] for e in TRACED_ERRORS])
def test_error_messages_when_traced(name: str, fun: Callable, error: type, message: str
                                    ) -> None:
    """Argument checks and abstract evaluation raise the same errors while tracing."""
    with pytest.raises(error) as info:
        justjax.make_jaxpr(fun)()
    assert str(info.value) == message


def test_logical_reduction_bad_dims_fail_on_evaluation_only() -> None:
    # As in JAX, tracing accepts them (shapes come from np.delete); XLA's verifier rejects them.
    b = arr([True, False], np.bool_)
    assert "reduce_or[axes=(-1,)]" in jaxpr_text(lambda x: lax.reduce_or(x, (-1,)), b)
    with pytest.raises(ValueError, match=re.escape(
            "Out-of-bounds dimension -1, expected to be in range [0, 1)")):
        lax.reduce_or(b, (-1,))
    with pytest.raises(ValueError, match="Duplicate reduction dimension: 0"):
        lax.reduce_or(b, (0, 0))


def test_evaluation_only_errors_trace_fine() -> None:
    c = zeros((3,), np.complex64)
    assert "argmax[axes=(0,) index_dtype=int32] a" in jaxpr_text(
        lambda x: lax.argmax(x, 0, np.int32), c)
    assert "cumlogsumexp[axis=0 reverse=False] a" in jaxpr_text(
        lambda x: lax.cumlogsumexp(x), zeros((3,), np.int32))


def test_reduce_computation_must_return_arrays() -> None:
    with pytest.raises(TypeError, match=re.escape(
            "traced for reduce comp returned a value of type <class 'str'>, which is not a "
            "valid JAX type")):
        lax.reduce(zeros((2,)), 0.0, lambda a, b: "s", (0,))


def test_reduce_computation_cannot_close_over_tracers() -> None:
    def f(x: Any) -> Any:
        return lax.reduce(x, 0.0, lambda a, b: lax.add(a, lax.reduce_sum(x, (0,))), (0,))
    with pytest.raises(NotImplementedError, match="Reduction computations can't close over "
                                                  "Tracers"):
        justjax.make_jaxpr(f)(zeros((3,)))


def test_argmax_int64_index_is_truncated_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="Explicitly requested dtype int64 requested in argmax "
                                         "is not available"):
        out = lax.argmax(arr([1.0, 3.0, 2.0]), 0, np.int64)
    assert out.dtype == np.int32 and int(out) == 1


# -- values: NaN, signed zeros, empty reductions, integers ---------------------------------------

def test_max_min_nan_wins() -> None:
    x = arr([1.0, NAN, 3.0])
    assert np.isnan(lax.reduce_max(x, (0,))) and np.isnan(lax.reduce_min(x, (0,)))
    same_bits(lax.cummax(x), [1.0, NAN, NAN])
    same_bits(lax.cummin(x), [1.0, NAN, NAN])
    assert np.isnan(lax.reduce_max(arr([NAN, -NAN]), (0,)))


def test_argmax_first_nan_and_first_tie() -> None:
    x = arr([1.0, NAN, 3.0, NAN])
    assert int(lax.argmax(x, 0, np.int32)) == 1
    assert int(lax.argmin(x, 0, np.int32)) == 1
    assert int(lax.argmax(arr([1.0, 3.0, 3.0]), 0, np.int32)) == 1
    assert int(lax.argmin(arr([1.0, 1.0, 3.0]), 0, np.int32)) == 0
    assert int(lax.argmax(arr([-0.0, 0.0]), 0, np.int32)) == 0
    same_bits(lax.argmax(arr([[0, 5, 5], [7, 7, 1]], np.int8), 1, np.int32), [1, 0])
    same_bits(lax.argmin(arr([True, False, False], np.bool_), 0, np.int32), 1)


def test_signed_zeros() -> None:
    for values in ([-0.0, 0.0], [0.0, -0.0]):
        same_bits(lax.reduce_max(arr(values), (0,)), 0.0)
        same_bits(lax.reduce_min(arr(values), (0,)), -0.0)
    same_bits(lax.reduce_max(arr([-0.0, -0.0]), (0,)), -0.0)
    same_bits(lax.reduce_sum(arr([-0.0, -0.0]), (0,)), 0.0)
    same_bits(lax.reduce_sum(arr([-0.0, -0.0]), ()), [-0.0, -0.0])
    same_bits(lax.cumsum(arr([-0.0, -0.0])), [0.0, 0.0])
    same_bits(lax.cumsum(arr([-0.0, -0.0]), reverse=True), [0.0, 0.0])
    same_bits(lax.cummax(arr([-0.0, 0.0])), [-0.0, 0.0])
    same_bits(lax.cummax(arr([0.0, -0.0])), [0.0, 0.0])
    same_bits(lax.cummin(arr([-0.0, 0.0])), [-0.0, -0.0])
    same_bits(lax.cummin(arr([0.0, -0.0])), [0.0, -0.0])


def test_empty_reductions_give_identities() -> None:
    same_bits(lax.reduce_max(zeros((0, 3)), (0,)), [-INF] * 3)
    same_bits(lax.reduce_min(zeros((0, 3), np.int32), (0,)), [2147483647] * 3)
    same_bits(lax.reduce_max(zeros((0,), np.bool_), (0,)), False)
    same_bits(lax.reduce_min(zeros((0,), np.bool_), (0,)), True)
    same_bits(lax.reduce_max(zeros((0,), np.uint8), (0,)), 0)
    same_bits(lax.reduce_and(zeros((0,), np.int8), (0,)), -1)
    same_bits(lax.reduce_and(zeros((0,), np.uint8), (0,)), 255)
    same_bits(lax.reduce_and(zeros((0,), np.bool_), (0,)), True)
    same_bits(lax.reduce_or(zeros((0,), np.int32), (0,)), 0)
    same_bits(lax.reduce_prod(zeros((0,)), (0,)), 1.0)
    out = lax.reduce_sum(zeros((0,), ml_dtypes.bfloat16), (0,))
    assert out.dtype == ml_dtypes.bfloat16 and float(out) == 0.0
    same_bits(lax.cumsum(zeros((0, 3)), 0), np.zeros((0, 3)))


def test_integer_arithmetic_wraps() -> None:
    ints = np.arange(1, 14, dtype=np.int32)
    assert np.asarray(lax.cumprod(arr(ints, np.int32)))[-1] == 1932053504
    assert int(lax.reduce_prod(arr(np.arange(1, 20), np.int32), (0,))) == 109641728
    same_bits(lax.cumsum(arr([100, 100], np.int8)), [100, -56])
    same_bits(lax.reduce_sum(arr([100, 100], np.int8), (0,)), -56)
    same_bits(lax.reduce_xor(arr([1, 3, 4], np.uint8), (0,)), 6)
    same_bits(lax.reduce_xor(arr([True, True, True], np.bool_), (0,)), True)


def test_cumlogsumexp_values() -> None:
    got = lax.cumlogsumexp(arr([1.0, 2.0, -INF, INF, NAN, 3.0]))
    np.testing.assert_allclose(np.asarray(got), [1.0, 2.3132617, 2.3132617, INF, NAN, NAN],
                               rtol=1e-6)
    same_bits(lax.cumlogsumexp(arr([-INF, -INF, 0.0])), [-INF, -INF, 0.0])
    np.testing.assert_allclose(np.asarray(lax.cumlogsumexp(arr([1.0, 2.0, 3.0]), reverse=True)),
                               [3.4076061, 3.3132617, 3.0], rtol=1e-6)


def test_complex_max_min_compare_lexicographically() -> None:
    x = arr([1, 2 + 1j, 3 - 1j, 3 + 0j], np.complex64)
    assert complex(lax.reduce_max(x, (0,))) == 3 + 0j
    same_bits(lax.cummax(x), np.asarray([1, 2 + 1j, 3 - 1j, 3 + 0j]))
    assert complex(lax.reduce_min(x, (0,))) == 1 + 0j
    # Comparisons with NaN are false, so which NaN-holding value wins depends on position.
    assert np.isnan(complex(lax.reduce_max(arr([1, 2 + 1j, NAN], np.complex64), (0,))))
    assert complex(lax.reduce_max(arr([1 + 1j, NAN, 2, complex(1, NAN)], np.complex64),
                                  (0,))) == 2 + 0j


def test_low_precision_sums_accumulate_in_float32() -> None:
    # 10000 ones: a float16 accumulator would stop at 2048; bfloat16 rounds 10000 to 9984.
    assert float(lax.reduce_sum(justjax.device_put(np.ones(10000, np.float16)), (0,))) == 10000
    ones = justjax.device_put(np.ones(10000, ml_dtypes.bfloat16))
    assert float(lax.reduce_sum(ones, (0,))) == 9984.0


# -- the general reduce ---------------------------------------------------------------------------

def test_general_reduce_folds_accumulator_first() -> None:
    x = arr(np.arange(6).reshape(2, 3), np.int32)
    assert int(lax.reduce(x, 0, lambda a, b: a + b * b, (0, 1))) == 55
    same_bits(lax.reduce(x, 0, lambda a, b: a + b * b, (1,)), [5, 50])
    # XLA turns a reduction over no dimensions into its operand.
    same_bits(lax.reduce(x, 0, lambda a, b: a + b * 2, ()), np.arange(6).reshape(2, 3))


def test_general_reduce_variadic() -> None:
    x = arr(np.arange(6.0).reshape(2, 3))
    i = arr(np.arange(6).reshape(2, 3), np.int32)
    total, product = lax.reduce((i, x), (0, 1.0),
                                lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,))
    same_bits(total, [3, 12])
    same_bits(product, [0.0, 60.0])
    values, where = lax.reduce(
        (x, i), (-INF, 0),
        lambda a, b: (lax.max(a[0], b[0]), lax.select(lax.gt(a[0], b[0]), a[1], b[1])), (1,))
    same_bits(values, [2.0, 5.0])
    same_bits(where, [2, 5])


def test_general_reduce_with_reducer_that_cannot_be_vectorized() -> None:
    # The reducer makes a non-scalar intermediate, so it runs element by element.
    x = arr([[0, 1, 2], [2, 2, 1]], np.int32)

    def comp(a: Any, b: Any) -> Any:
        return a + lax.reduce_sum(lax.mul(lax.expand_dims(b, (0,)), arr([3], np.int32)), (0,))
    same_bits(lax.reduce(x, np.int32(0), comp, (1,)), [9, 15])


def test_general_reduce_in_dict_structure() -> None:
    x = {"a": arr([1.0, 2.0, 3.0]), "b": arr([4, 5, 6], np.int32)}
    out = lax.reduce(x, {"a": 0.0, "b": 0}, lambda p, q: {"a": p["a"] + q["a"] * 2,
                                                          "b": p["b"] + q["b"]}, (0,))
    assert sorted(out) == ["a", "b"]
    same_bits(out["a"], 12.0)
    same_bits(out["b"], 15)


def test_monoid_detection_requires_the_identity() -> None:
    # add with init 1.0 is not a monoid reduction, so the general reduce computes 1 + sum.
    assert float(lax.reduce(arr([1.0, 2.0]), 1.0, lax.add, (0,))) == 4.0
    assert int(lax.reduce(arr([3, 5], np.int32), 0, lax.max, (0,))) == 5


# -- weak types -----------------------------------------------------------------------------------

def _weak(fun: Callable) -> list[bool]:
    out = justjax.eval_shape(fun)
    return [o.weak_type for o in (out if isinstance(out, (list, tuple)) else [out])]


def test_weak_types() -> None:
    weak_vector = lambda: lax.broadcast(1.0, (3,))  # noqa: E731
    assert _weak(lambda: lax.reduce_sum(1.0, ())) == [True]
    assert _weak(lambda: lax.reduce_max(1.0, ())) == [True]
    assert _weak(lambda: lax.reduce_or(1, ())) == [False]
    assert _weak(lambda: lax.argmax(weak_vector(), 0, np.int32)) == [False]
    # top_k's int32 indices keep the operand's weak type, as in JAX.
    assert _weak(lambda: lax.top_k(weak_vector(), 1)) == [True, True]
    assert _weak(lambda: lax.sort(weak_vector())) == [True]
    assert _weak(lambda: lax.cumsum(weak_vector())) == [True]
    assert _weak(lambda: lax.reduce(weak_vector(), 0.0, lax.add, (0,))) == [True]
    assert _weak(lambda: lax.reduce(weak_vector(), np.float32(0), lax.add, (0,))) == [False]
    assert _weak(lambda: lax.reduce(weak_vector(), 0.0, lambda a, b: a + b * b, (0,))) == [True]
    assert lax.reduce(weak_vector(), 0.0, lambda a, b: a + b, (0,)).weak_type


# -- sort and top_k -------------------------------------------------------------------------------

SPECIAL = [0.0, -0.0, NAN, -NAN, 1.0, -1.0, INF, -INF, 0.0, -0.0]


def test_sort_total_order_and_stability() -> None:
    keys, order = lax.sort_key_val(arr(SPECIAL), arr(np.arange(10), np.int32))
    # -0.0 equals 0.0 (original order kept); NaNs of both signs go last, in order.
    same_bits(keys, [-INF, -1.0, 0.0, -0.0, 0.0, -0.0, 1.0, INF, NAN, -NAN])
    same_bits(order, [7, 5, 0, 1, 8, 9, 4, 6, 2, 3])


def test_sort_several_keys() -> None:
    a = arr([1, 0, 1, 0, 1, 0], np.int32)
    b = arr([2.0, 2.0, 1.0, NAN, 1.0, 1.0])
    c = arr(np.arange(6), np.int32)
    sa, sb, sc = lax.sort((a, b, c), num_keys=2)
    same_bits(sa, [0, 0, 0, 1, 1, 1])
    same_bits(sb, [1.0, 2.0, NAN, 1.0, 1.0, 2.0])
    same_bits(sc, [5, 1, 3, 2, 4, 0])
    # With one key, the second operand just follows the stable permutation.
    _, sb1, sc1 = lax.sort((a, b, c), num_keys=1)
    same_bits(sc1, [1, 3, 5, 0, 2, 4])
    same_bits(sb1, [2.0, NAN, 1.0, 2.0, 1.0, 1.0])


def test_sort_complex_lexicographic() -> None:
    x = arr([2 + 1j, 1 + 5j, 2 - 1j, complex(NAN, 0), 1 + 0j], np.complex64)
    same_bits(lax.sort(x), np.asarray([1 + 0j, 1 + 5j, 2 - 1j, 2 + 1j, complex(NAN, 0)]))


def test_sort_returns_tuple_for_sequences() -> None:
    out = lax.sort([arr([2.0, 1.0])])
    assert isinstance(out, tuple) and len(out) == 1
    same_bits(out[0], [1.0, 2.0])


def test_top_k_total_order() -> None:
    values, indices = lax.top_k(arr(SPECIAL), 10)
    same_bits(values, [NAN, INF, 1.0, 0.0, 0.0, -0.0, -0.0, -1.0, -INF, -NAN])
    same_bits(indices, [2, 6, 4, 0, 8, 1, 9, 5, 7, 3])
    assert np.signbit(np.asarray(values)[-1]) and not np.signbit(np.asarray(values)[0])


def test_top_k_ties_lower_index_first() -> None:
    out = lax.top_k(arr([1.0, 3.0, 3.0, 2.0, 3.0]), 3)
    assert isinstance(out, list)
    same_bits(out[0], [3.0, 3.0, 3.0])
    same_bits(out[1], [1, 2, 4])
    values, indices = lax.top_k(arr([True, False, True], np.bool_), 2)
    same_bits(values, [True, True])
    same_bits(indices, [0, 2])
    values, indices = lax.top_k(arr([1, 5, 3], np.uint8), 2)
    same_bits(values, [5, 3])
    same_bits(indices, [1, 2])


def test_top_k_along_first_axis_and_empty() -> None:
    x = arr([[1, 9], [7, 2], [7, 9]], np.int32)
    values, indices = lax.top_k(x, 2, axis=0)
    same_bits(values, [[7, 9], [7, 9]])
    same_bits(indices, [[1, 0], [2, 2]])
    values, indices = lax.top_k(zeros((3, 0)), 0)
    assert values.shape == (3, 0) and indices.dtype == np.int32


def test_sort_traced_matches_eager() -> None:
    x = arr(SPECIAL)
    closed = justjax.make_jaxpr(lambda v: lax.sort_key_val(v, lax.neg(v)))(x)
    from justjax._src.core.jaxpr import eval_jaxpr
    traced = eval_jaxpr(closed.jaxpr, closed.consts, x)
    eager = lax.sort_key_val(x, lax.neg(x))
    for got, want in zip(traced, eager, strict=True):
        same_bits(got, want)


# -- against real JAX, where it is installed -----------------------------------------------------

@pytest.mark.needs_jax
def test_against_real_jax() -> None:
    jax = pytest.importorskip("jax")
    jlax = jax.lax
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (4, 6)).astype(np.float32)
    x[0, 2] = np.nan
    x[1, 1] = -0.0
    cases: list[tuple[Callable, Callable]] = [
        (lambda m, v: m.top_k(v, 3), lambda m, v: m.top_k(v, 3)),
        (lambda m, v: m.sort(v, dimension=0), lambda m, v: m.sort(v, dimension=0)),
        (lambda m, v: m.argmax(v, 1, np.int32), lambda m, v: m.argmax(v, 1, np.int32)),
        (lambda m, v: m.argmin(v, 0, np.int32), lambda m, v: m.argmin(v, 0, np.int32)),
        (lambda m, v: m.reduce_max(v, (1,)), lambda m, v: m.reduce_max(v, (1,))),
        (lambda m, v: m.cummin(v, 1, True), lambda m, v: m.cummin(v, 1, True)),
    ]
    for ours, theirs in cases:
        got = ours(lax, justjax.device_put(x))
        want = theirs(jlax, jax.numpy.asarray(x))
        got = got if isinstance(got, (list, tuple)) else [got]
        want = want if isinstance(want, (list, tuple)) else [want]
        for g, w in zip(got, want, strict=True):
            same_bits(g, np.asarray(w))
