"""Tests of `jnp.vectorize` (`_src/numpy/vectorize.py`): broadcasting, signatures, excluded
arguments, JAX's errors, and transforms of vectorized functions.

Values, messages and golden jaxprs are read off JAX 0.10.2.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.config import config
from justjax._src.numpy.vectorize import parse_signature

CONTEXT = "on vectorized function with excluded=frozenset() and signature={!r}"

# At import time, as optax defines its losses.
_dot_last_dim = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
_vdot_last_dim = jnp.vectorize(jnp.vdot, signature="(n),(n)->()")


@functools.partial(jnp.vectorize, signature="(k),(k)->(k)")
def _cross(a, b):
    assert a.shape == b.shape == (3,)
    return jnp.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0]])


def test_parse_signature() -> None:
    assert parse_signature("(m,n),(n)->(m)") == ([("m", "n"), ("n",)], [("m",)])
    assert parse_signature("()->(),(k_1)") == ([()], [(), ("k_1",)])
    for bad in ["(n),(n)->", "(n), (n)->()", "n->()", "(n)(n)->()"]:
        with pytest.raises(ValueError, match=r"^not a valid gufunc signature: "):
            parse_signature(bad)


def test_scalar_function_broadcasts() -> None:
    out = jnp.vectorize(lambda x, y: x * y)(jnp.arange(3.0), jnp.arange(2.0)[:, None])
    np.testing.assert_array_equal(out, [[0, 0, 0], [0, 1, 2]])
    assert out.dtype == np.float32
    scalar = jnp.vectorize(lambda x: x * 2)(3.0)
    assert scalar.shape == () and float(scalar) == 6.0
    ints = jnp.vectorize(lambda x: x + 1)(np.arange(3))
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints, [1, 2, 3])
    np.testing.assert_array_equal(jnp.vectorize(lambda x: x + 1)([1.0, 2.0]), [2.0, 3.0])


def test_signature_core_dimensions() -> None:
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(_dot_last_dim(x, jnp.arange(3.0)), [5.0, 14.0])
    np.testing.assert_array_equal(_vdot_last_dim(x, x), [5.0, 50.0])
    assert _cross(jnp.ones((1, 2, 3)), jnp.ones((2, 1, 3))).shape == (2, 2, 3)
    np.testing.assert_array_equal(_cross(jnp.array([1.0, 0, 0]), jnp.array([0.0, 1, 0])),
                                  [0, 0, 1])
    two = jnp.vectorize(lambda v: (v.sum(), v * 2), signature="(n)->(),(n)")(jnp.ones((2, 3)))
    assert [o.shape for o in two] == [(2,), (2, 3)]
    np.testing.assert_array_equal(two[0], [3.0, 3.0])
    new_dim = jnp.vectorize(lambda v: jnp.stack([v, v]), signature="(n)->(k,n)")
    assert new_dim(jnp.ones((2, 3))).shape == (2, 2, 3)
    mat_vec = jnp.vectorize(lambda m, v: m @ v, signature="(n,m),(m)->(n)")
    assert mat_vec(jnp.ones((2, 3)), jnp.ones((4, 3))).shape == (4, 2)


def test_size_one_dimensions_come_back() -> None:
    out = jnp.vectorize(lambda x, y: x + y)(jnp.ones((1, 3)), jnp.ones((1, 1)))
    assert out.shape == (1, 3)
    np.testing.assert_array_equal(out, [[2.0, 2.0, 2.0]])
    pair = jnp.vectorize(lambda x: (x, x * 2))(jnp.ones((1, 1)))
    assert isinstance(pair, tuple) and [p.shape for p in pair] == [(1, 1), (1, 1)]
    np.testing.assert_array_equal(pair[1], [[2.0]])


def test_excluded_arguments() -> None:
    def add(x, y=1):
        return x + y

    np.testing.assert_array_equal(jnp.vectorize(lambda x, n: x * n, excluded={1})(
        jnp.arange(3.0), 2), [0.0, 2.0, 4.0])
    pick = jnp.vectorize(lambda x, s: x[s[0]], excluded={1}, signature="(n)->()")
    np.testing.assert_array_equal(pick(jnp.arange(6.0).reshape(2, 3), [1]), [1.0, 4.0])
    np.testing.assert_array_equal(jnp.vectorize(add, excluded={"y"})(jnp.ones(3), y=5), [6.0] * 3)
    # JAX drops keyword arguments that are not excluded: y keeps its default.
    np.testing.assert_array_equal(jnp.vectorize(add)(jnp.ones(3), y=5), [2.0] * 3)
    with pytest.raises(TypeError, match=r"^jax.numpy.vectorize can only exclude integer or "
                                        r"string arguments, but excluded=\{1.5\}$"):
        jnp.vectorize(add, excluded={1.5})
    with pytest.raises(ValueError, match=r"^excluded=\{-1\} contains negative numbers$"):
        jnp.vectorize(add, excluded={-1})


def test_none_arguments() -> None:
    f = jnp.vectorize(lambda x, y: x if y is None else x + y)
    np.testing.assert_array_equal(f(jnp.ones(2), None), [1.0, 1.0])
    with pytest.raises(ValueError, match=r"^Cannot pass None at locations \{1\} with "
                                         r"signature='\(n\),\(n\)->\(n\)'$"):
        jnp.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(jnp.ones(2), None)
    # As in JAX, a None first argument alone is not passed through.
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jnp.vectorize(lambda y, x: x)(None, jnp.ones(2))


def test_input_errors() -> None:
    sig = "(n),(n)->()"
    with pytest.raises(ValueError) as e:
        _dot_last_dim(jnp.ones((2, 3)), jnp.ones(4))
    assert str(e.value) == ("inconsistent size for core dimension 'n': 4 vs 3 "
                            + CONTEXT.format(sig))
    with pytest.raises(TypeError) as e:
        _dot_last_dim(jnp.ones(3))
    assert str(e.value) == ("wrong number of positional arguments: expected 2, got 1 "
                            + CONTEXT.format(sig))
    with pytest.raises(ValueError) as e:
        jnp.vectorize(jnp.dot, signature="(n,m),(m)->()")(jnp.ones(3), jnp.ones(3))
    assert str(e.value) == ("input with shape (3,) does not have enough dimensions for all core "
                            "dimensions ('n', 'm') " + CONTEXT.format("(n,m),(m)->()"))
    with pytest.raises(ValueError, match=r"^Incompatible shapes for broadcasting"):
        jnp.vectorize(lambda x, y: x + y)(jnp.ones(2), jnp.ones(3))


def test_output_errors() -> None:
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError, match=r"^output must be a tuple when multiple outputs are "
                                        r"expected, got: "):
        jnp.vectorize(lambda v: v.sum(), signature="(n)->(),()")(x)
    with pytest.raises(TypeError) as e:
        jnp.vectorize(lambda v: (v.sum(),), signature="(n)->(),()")(x)
    assert str(e.value) == ("wrong number of output arguments: expected 2, got 1 "
                            + CONTEXT.format("(n)->(),()"))
    with pytest.raises(ValueError) as e:
        jnp.vectorize(lambda v: v, signature="(n)->()")(x)
    assert str(e.value) == ("output shape (3,) does not match core dimensions () "
                            + CONTEXT.format("(n)->()"))
    with pytest.raises(ValueError) as e:
        jnp.vectorize(lambda v: v[:2], signature="(n)->(n)")(x)
    assert str(e.value) == ("inconsistent size for core dimension 'n': 2 vs 3 "
                            + CONTEXT.format("(n)->(n)"))


RANK_MESSAGE = ("operands with shapes [(2, 3), (3,)] require rank promotion for jnp.vectorize "
                "function with signature (n),(n)->(). Set the jax_numpy_rank_promotion config "
                "option to 'allow' to disable this message; for more information, see "
                "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def test_rank_promotion_config() -> None:
    with config.override("jax_numpy_rank_promotion", "raise"):
        with pytest.raises(ValueError) as e:
            _dot_last_dim(jnp.ones((2, 3)), jnp.ones(3))
        assert str(e.value) == RANK_MESSAGE
        np.testing.assert_array_equal(_dot_last_dim(jnp.ones((2, 3)), jnp.ones((2, 3))), [3, 3])
        # Scalars are not counted.
        assert jnp.vectorize(lambda a, b: a * b)(jnp.ones((2, 3)), 2.0).shape == (2, 3)
    with config.override("jax_numpy_rank_promotion", "warn"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _dot_last_dim(jnp.ones((2, 3)), jnp.ones(3))
    assert [str(w.message) for w in caught] == [RANK_MESSAGE]
    assert caught[0].filename == __file__


def test_transforms() -> None:
    x = jnp.arange(6.0).reshape(2, 3)
    grad = jax.grad(lambda v: _dot_last_dim(v, v).sum())(x)
    np.testing.assert_array_equal(grad, 2 * np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(jax.jit(_dot_last_dim)(x, jnp.arange(3.0)), [5.0, 14.0])
    np.testing.assert_array_equal(jax.vmap(_dot_last_dim)(x, x), [5.0, 50.0])
    assert _dot_last_dim.__wrapped__ is jnp.dot
    assert _dot_last_dim.__name__ == "dot"


def test_golden_jaxprs() -> None:
    assert str(jax.make_jaxpr(_dot_last_dim)(jnp.ones((2, 3)), jnp.ones(3))) == """\
{ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""
    mul = jnp.vectorize(lambda x, y: x * y)
    assert str(jax.make_jaxpr(mul)(jnp.ones((1, 3)), jnp.ones((2, 1)))) == """\
{ lambda ; a:f32[1,3] b:f32[2,1]. let
    c:f32[3] = squeeze[dimensions=(0,)] a
    d:f32[2] = squeeze[dimensions=(1,)] b
    e:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    f:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d
    g:f32[2,3] = mul e f
  in (g,) }"""
