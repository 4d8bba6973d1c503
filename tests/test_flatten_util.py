"""Tests of `jax.flatten_util.ravel_pytree` (`_src/pytrees/flatten_util.py`).

Values, dtypes, weak types, messages and golden jaxprs are read off JAX 0.10.2.
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.flatten_util import ravel_pytree


def _leaf(x):
    return x.shape, str(x.dtype), x.aval.weak_type, np.asarray(x).tolist()


def _mixed_tree():
    return {"a": jnp.arange(3.0), "b": (jnp.ones((2, 2), jnp.int32), 2.5),
            "c": [jnp.array(True)]}


def test_mixed_dtypes_promote_and_come_back() -> None:
    flat, unravel = ravel_pytree(_mixed_tree())
    assert _leaf(flat) == ((9,), "float32", False, [0, 1, 2, 1, 1, 1, 1, 2.5, 1])
    back = unravel(flat * 2.7)
    assert _leaf(back["a"]) == ((3,), "float32", False, [0.0, np.float32(2.7), np.float32(5.4)])
    assert _leaf(back["b"][0]) == ((2, 2), "int32", False, [[2, 2], [2, 2]])
    assert _leaf(back["b"][1]) == ((), "float32", False, 6.75)
    assert _leaf(back["c"][0]) == ((), "bool", False, True)
    with pytest.raises(TypeError, match="^unravel function given array of dtype int32, but "
                                        "expected dtype float32$"):
        unravel(flat.astype(jnp.int32))
    with pytest.raises(ValueError, match=r"^Sum of sizes 9 must be equal to dimension 0 of the "
                                         r"operand shape \[3\]$"):
        unravel(jnp.ones(3))


@pytest.mark.parametrize("leaves,flat_dtype,leaf_dtypes", [
    ([jnp.ones(2, jnp.bfloat16), jnp.ones(1, jnp.float16)], "float32", ["bfloat16", "float16"]),
    ([jnp.ones(2, jnp.complex64), jnp.ones(1)], "complex64", ["complex64", "float32"]),
    ([jnp.ones(2, jnp.uint8), jnp.ones(1, jnp.int8)], "int16", ["uint8", "int8"]),
    ([1, 2.0], "float32", ["int32", "float32"]),
])
def test_promotion(leaves, flat_dtype, leaf_dtypes) -> None:
    flat, unravel = ravel_pytree(leaves)
    assert flat.dtype == flat_dtype and not flat.aval.weak_type
    assert [str(x.dtype) for x in unravel(flat)] == leaf_dtypes


def test_one_dtype_unravel_is_dtype_polymorphic() -> None:
    flat, unravel = ravel_pytree({"a": jnp.arange(3.0), "b": jnp.ones(2)})
    assert _leaf(flat) == ((5,), "float32", False, [0, 1, 2, 1, 1])
    back = unravel(flat.astype(jnp.int32))
    assert _leaf(back["a"]) == ((3,), "int32", False, [0, 1, 2])
    # Python scalars keep their weak type.
    flat, unravel = ravel_pytree([1.0, 2.0])
    assert _leaf(flat) == ((2,), "float32", True, [1.0, 2.0])
    assert [_leaf(x) for x in unravel(flat)] == [((), "float32", True, 1.0),
                                                 ((), "float32", True, 2.0)]
    flat, unravel = ravel_pytree(np.arange(3, dtype=np.float64))
    assert _leaf(flat) == ((3,), "float32", False, [0, 1, 2])


def test_empty_tree() -> None:
    flat, unravel = ravel_pytree({})
    assert _leaf(flat) == ((0,), "float32", False, [])
    assert unravel(flat) == {} and unravel(jnp.ones(2)) == {}


def test_unravel_is_hashable() -> None:
    _, unravel = ravel_pytree({"a": jnp.arange(3.0), "b": jnp.ones(2)})
    _, same = ravel_pytree({"a": jnp.arange(3.0) + 1, "b": jnp.ones(2)})
    _, other = ravel_pytree({"a": jnp.arange(4.0), "b": jnp.ones(2)})
    assert unravel == same and hash(unravel) == hash(same)
    assert unravel != other
    # ... so it can be a static argument.
    out = jax.jit(lambda f, v: f(v)["a"], static_argnums=0)(unravel, jnp.arange(5.0))
    np.testing.assert_array_equal(out, [0, 1, 2])


def test_transforms() -> None:
    tree = _mixed_tree()
    flat, unravel = ravel_pytree(tree)
    np.testing.assert_array_equal(jax.jit(lambda t: ravel_pytree(t)[0])(tree), flat)
    grads = jax.grad(lambda t: jnp.sum(ravel_pytree(t)[0] ** 2))({"a": jnp.arange(3.0),
                                                                    "b": 2.0})
    np.testing.assert_array_equal(grads["a"], [0, 2, 4])
    assert float(grads["b"]) == 4.0
    batched = jax.vmap(lambda t: ravel_pytree(t)[0])({"a": jnp.ones((4, 3)),
                                                      "b": jnp.zeros((4, 2))})
    np.testing.assert_array_equal(batched, [[1, 1, 1, 0, 0]] * 4)
    through_unravel = jax.grad(lambda v: unravel(v)["a"].sum() + unravel(v)["b"][1])(flat)
    np.testing.assert_array_equal(through_unravel, [1, 1, 1, 0, 0, 0, 0, 1, 0])


def test_golden_jaxprs() -> None:
    tree = _mixed_tree()
    flat, unravel = ravel_pytree(tree)
    assert str(jax.make_jaxpr(lambda t: ravel_pytree(t)[0])(tree)) == """\
{ lambda ; a:f32[3] b:i32[2,2] c:f32[] d:bool[]. let
    e:f32[2,2] = convert_element_type[new_dtype=float32 weak_type=False] b
    f:f32[4] = reshape[dimensions=None new_sizes=(4,) sharding=None] e
    g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    h:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] g
    i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
    j:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] i
    k:f32[9] = concatenate[dimension=0] a f h j
  in (k,) }"""
    assert str(jax.make_jaxpr(unravel)(flat)) == """\
{ lambda ; a:f32[9]. let
    b:f32[3] c:f32[4] d:f32[1] e:f32[1] = split[axis=0 sizes=(3, 4, 1, 1)] a
    f:f32[2,2] = reshape[dimensions=None new_sizes=(2, 2) sharding=None] c
    g:i32[2,2] = convert_element_type[new_dtype=int32 weak_type=False] f
    h:f32[] = reshape[dimensions=None new_sizes=() sharding=None] d
    i:f32[] = reshape[dimensions=None new_sizes=() sharding=None] e
    j:bool[] = convert_element_type[new_dtype=bool weak_type=False] i
  in (b, g, h, j) }"""
    same = {"a": jnp.ones(3), "b": jnp.ones((2, 2))}
    assert str(jax.make_jaxpr(lambda t: ravel_pytree(t)[0])(same)) == """\
{ lambda ; a:f32[3] b:f32[2,2]. let
    c:f32[4] = reshape[dimensions=None new_sizes=(4,) sharding=None] b
    d:f32[7] = concatenate[dimension=0] a c
  in (d,) }"""
