"""`jax.typing`, `jax.Array` as the type of every JAX array, `jax.version` and `jax.lib`.

Expected values recorded from JAX 0.10.2.
"""
from __future__ import annotations

import typing

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.runtime.array import Array


def test_typing_exports_what_jax_does():
    assert sorted(n for n in dir(jax.typing) if not n.startswith("_")) == ["ArrayLike",
                                                                          "DTypeLike"]


@pytest.mark.parametrize("value", [jnp.ones(2), np.ones(2), np.float32(1), np.bool_(True),
                                   np.int8(3), True, 1, 1.0, 1j, jax.random.key(0)])
def test_array_like_accepts(value):
    assert isinstance(value, jax.typing.ArrayLike)


@pytest.mark.parametrize("value", ["x", [1.0], (1.0,), None, {"a": 1}])
def test_array_like_rejects(value):
    assert not isinstance(value, jax.typing.ArrayLike)


def test_array_like_holds_for_tracers():
    seen = []

    def f(x):
        seen.append(isinstance(x, jax.typing.ArrayLike))
        return x

    jax.jit(f)(1.0)
    jax.grad(f)(1.0)
    jax.vmap(f)(jnp.ones(2))
    assert seen == [True, True, True]


def test_dtype_like_is_jaxs_union():
    # As in JAX, isinstance works for a string only: `type[Any]` is a parameterized generic.
    assert isinstance("float32", jax.typing.DTypeLike)
    with pytest.raises(TypeError, match="parameterized generic"):
        isinstance(np.float32, jax.typing.DTypeLike)
    args = typing.get_args(jax.typing.DTypeLike)
    assert args[0] is str and args[2] is np.dtype and len(args) == 4
    supports_dtype = args[3]
    assert isinstance(jnp.float32, supports_dtype) and isinstance(jnp.ones(2), supports_dtype)
    assert not isinstance("float32", supports_dtype)


def test_array_like_is_a_union_for_annotations():
    assert typing.get_origin(jax.typing.ArrayLike) is typing.Union
    assert Array in typing.get_args(jax.typing.ArrayLike)

    def annotated(x: jax.typing.ArrayLike, dtype: jax.typing.DTypeLike = None) -> jax.Array:
        return jnp.asarray(x, dtype)

    assert annotated(2, "float32").dtype == np.float32


def test_tracers_and_key_arrays_are_jax_arrays():
    kinds = {}

    def record(name):
        def f(x):
            kinds[name] = (isinstance(x, jax.Array), isinstance(x, jnp.ndarray),
                           issubclass(type(x), jax.Array))
            return x
        return f

    jax.jit(record("jit"))(1.0)
    jax.grad(record("grad"))(1.0)
    jax.vmap(record("vmap"))(jnp.ones(2))
    jax.make_jaxpr(record("make_jaxpr"))(1.0)
    assert kinds == {k: (True, True, True) for k in ("jit", "grad", "vmap", "make_jaxpr")}
    assert isinstance(jax.random.key(0), jax.Array)
    assert isinstance(jnp.ones(2), jax.Array)
    assert not isinstance(np.ones(2), jax.Array)
    assert not isinstance(1.0, jax.Array)
    assert type(jnp.ones(2)) is jax.Array


def test_concrete_code_paths_still_see_tracers_as_tracers():
    # Donation deletes only concrete Arrays; device_get converts only them.
    x = jnp.ones(3)
    y = jax.jit(lambda a: a + 1, donate_argnums=0)(x)
    assert x.is_deleted() and float(y[0]) == 2.0
    assert isinstance(jax.device_get(jnp.ones(2)), np.ndarray)
    key = jax.random.key(1)
    assert jax.device_get(key) is key


def test_version_module_is_jaxs_release():
    assert jax.version.__version__ == "0.10.2"
    assert jax.version._version == "0.10.2"
    assert jax.version.__version_info__ == (0, 10, 2)
    assert jax.version._minimum_jaxlib_version == "0.10.1"
    assert jax.version._minimum_jaxlib_version_info == (0, 10, 1)


def test_lib_is_jaxlib_version_only():
    # JAX 0.10.2's jax.lib has __version__ and no xla_extension.
    assert jax.lib.__version__ == "0.10.2"
    assert not hasattr(jax.lib, "xla_extension")
    assert [n for n in dir(jax.lib) if not n.startswith("__")] == []
