"""Name stacks: `jax.named_scope` and `jax.named_call` label staged equations
(`eqn.source_info.name_stack`). Expected stacks recorded from JAX 0.10.2."""
from __future__ import annotations

import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import source_info_util


def _stacks(closed):
    return [(str(e.primitive), str(e.source_info.name_stack)) for e in closed.jaxpr.eqns]


def test_named_scope_nests():
    def f(x):
        with jax.named_scope("outer"):
            y = jnp.sin(x)
            with jax.named_scope("inner"):
                z = y * 2
        return z + 1

    assert _stacks(jax.make_jaxpr(f)(1.0)) == [("sin", "outer"), ("mul", "outer/inner"),
                                                ("add", "")]


def test_named_scope_as_decorator():
    @jax.named_scope("deco")
    def g(x):
        return jnp.cos(x)

    assert _stacks(jax.make_jaxpr(g)(1.0)) == [("cos", "deco")]
    assert g.__name__ == "g"


def test_named_call_names_and_default_name():
    h = jax.named_call(lambda x: x * 3, name="triple")
    assert _stacks(jax.make_jaxpr(h)(1.0)) == [("mul", "triple")]
    assert h.__name__ == "<lambda>"

    def named(x):
        return x - 1

    assert _stacks(jax.make_jaxpr(jax.named_call(named))(1.0)) == [("sub", "named")]
    assert float(jax.named_call(named)(3.0)) == 2.0


def test_a_traced_function_starts_from_an_empty_stack():
    def outer(x):
        with jax.named_scope("scope"):
            return jax.jit(lambda y: jnp.exp(y))(x)

    closed = jax.make_jaxpr(outer)(1.0)
    assert _stacks(closed) == [("jit", "scope")]
    assert _stacks(closed.jaxpr.eqns[0].params["jaxpr"]) == [("exp", "")]
    with jax.named_scope("top") as stack:
        assert str(stack) == "top"
        assert _stacks(jax.make_jaxpr(lambda x: x + 2)(1.0)) == [("add", "")]
    assert str(source_info_util.current_name_stack()) == ""


@pytest.mark.parametrize("name", [1, None, b"x"])
def test_named_scope_name_must_be_a_string(name):
    with pytest.raises(TypeError, match="^named_scope name argument must be a string.$"):
        jax.named_scope(name)


def test_scopes_do_not_change_values_or_programs():
    def f(x):
        with jax.named_scope("layer"):
            return jnp.tanh(x) * 2

    x = jnp.arange(3.0)
    assert jax.jit(f)(x).tolist() == jax.jit(lambda x: jnp.tanh(x) * 2)(x).tolist()
    assert "layer" not in jax.jit(f).lower(x).as_text()
    assert jax.grad(lambda x: f(x).sum())(x).shape == (3,)


def test_name_stack_helpers():
    stack = source_info_util.new_name_stack("a").extend("b")
    assert str(stack) == "a/b" and len(stack) == 2 and str(stack[1:]) == "b"
    assert str(stack + source_info_util.new_name_stack("c")) == "a/b/c"
    with source_info_util.extend_name_stack("x"):
        with source_info_util.reset_name_stack():
            assert str(source_info_util.current_name_stack()) == ""
        assert str(source_info_util.current().name_stack) == "x"
