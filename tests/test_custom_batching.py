"""jax.custom_batching: custom_vmap (the primitive's impl, vmap rule, jvp, lowering) and
sequential_vmap; expected values, calls and texts read off JAX 0.10.2."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import custom_batching as cb


def _sin_plus(calls):
    @cb.custom_vmap
    def f(x, y):
        return jnp.sin(x) + y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, in_batched))
        return xs * ys, in_batched[0] or in_batched[1]

    return f


def test_unbatched_runs_the_function_batched_runs_the_rule():
    calls = []
    f = _sin_plus(calls)
    xs, ys = jnp.arange(3.0), jnp.arange(1.0, 4.0)
    np.testing.assert_allclose(f(1.0, 2.0), np.sin(1.0) + 2.0, rtol=1e-6)
    np.testing.assert_array_equal(jax.vmap(f)(xs, ys), [0.0, 2.0, 6.0])
    np.testing.assert_array_equal(jax.vmap(f, (0, None))(xs, 2.0), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(xs, ys), [0.0, 2.0, 6.0])
    assert calls == [(3, [True, True]), (3, [True, False]), (3, [True, True])]
    assert str(jax.make_jaxpr(jax.vmap(f))(xs, ys)) == (
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = mul a b in (c,) }")


def test_jaxpr_as_jax():
    f = _sin_plus([])
    assert str(jax.make_jaxpr(f)(1.0, 2.0)) == (
        "{ lambda ; a:f32[] b:f32[]. let\n    c:f32[] = custom_vmap_call[\n"
        "      call={ lambda ; d:f32[] e:f32[]. let\n          f:f32[] = sin d\n"
        "          g:f32[] = add f e\n        in (g,) }\n      in_tree=PyTreeDef(([], (*, *)))\n"
        "      out_tree=PyTreeDef(*)\n"
        "      rule=<function _sin_plus.<locals>.rule at 0xXXXXXXXXXXXX>\n"
        "    ] a b\n  in (c,) }")


def test_jvp_keeps_the_rule_under_vmap():
    calls = []
    f = _sin_plus(calls)
    xs, ys = jnp.arange(3.0), jnp.arange(1.0, 4.0)
    p, t = jax.jvp(f, (1.0, 2.0), (1.0, 1.0))   # JAX 0.10.2: 2.841471, 1.5403023
    np.testing.assert_allclose([p, t], [2.841471, 1.5403023], rtol=1e-6)
    # Primals batched, tangents not: the rule sees nothing batched and is vmapped over.
    p, t = jax.vmap(lambda x, y: jax.jvp(f, (x, y), (1.0, 1.0)))(xs, ys)
    np.testing.assert_array_equal(p, [0.0, 2.0, 6.0])
    np.testing.assert_array_equal(t, [1.0, 3.0, 5.0])
    # Both batched: the rule sees both batched, under jvp.
    p, t = jax.vmap(lambda x, y: jax.jvp(f, (x, y), (x, y)))(xs, ys)
    np.testing.assert_array_equal(t, [0.0, 4.0, 12.0])
    assert calls == [(3, [False, False]), (3, [True, True])]


def test_errors_as_jax():
    f = _sin_plus([])
    with pytest.raises(ValueError, match="Linearization failed to produce known values for "
                                         "all output primals"):
        jax.grad(f)(1.0, 2.0)
    with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap "
                                             "function <lambda> using def_vmap."):
        cb.custom_vmap(lambda x: x)(1.0)

    @cb.custom_vmap
    def h(x):
        return x, x

    @h.def_vmap
    def hr(n, b, x):
        return (x, x), True

    with pytest.raises(ValueError, match=r"custom vmap rule \(hr\) do not match.\nOutput "
                                         r"values: PyTreeDef\(\(\*, \*\)\)\nBatching spec: "
                                         r"PyTreeDef\(\*\)"):
        jax.vmap(h)(jnp.arange(3.0))

    @cb.custom_vmap
    def one(x):
        return x

    @one.def_vmap
    def two(n, b, x):
        return (x, x), (True, True)

    with pytest.raises(ValueError, match=r"does not match that of original custom-vmapped "
                                         r"function.\nOriginal output: PyTreeDef\(\*\)"):
        jax.vmap(one)(jnp.arange(3.0))


def test_custom_vjp_outside_custom_vmap():
    """The documented combination (JAX's docstring example): vmap uses the vmap rule, grad
    the vjp."""
    @jax.custom_vjp
    @cb.custom_vmap
    def k(x, y):
        return jnp.sin(x) * y

    @k.def_vmap
    def k_rule(axis_size, in_batched, xs, ys):
        return jnp.cos(xs) * ys, True

    k.defvjp(lambda x, y: (k(x, y), (jnp.cos(x), jnp.sin(x), y)),
             lambda res, g: (res[0] * g * res[2], res[1] * g))
    np.testing.assert_array_equal(jax.vmap(k)(jnp.zeros(3), jnp.ones(3)), [1.0, 1.0, 1.0])
    assert float(jax.grad(k)(jnp.zeros(()), jnp.ones(()))) == 1.0


def test_sequential_vmap():
    @cb.sequential_vmap
    def s(x):
        return x.sum() + 1

    np.testing.assert_array_equal(jax.vmap(s)(jnp.ones((3, 2))), [3.0, 3.0, 3.0])
    text = str(jax.make_jaxpr(jax.vmap(s))(jnp.ones((3, 2))))
    assert text.startswith("{ lambda ; a:f32[3,2]. let\n    b:f32[3] = scan[\n"
                           "      jaxpr={ lambda ; c:f32[2]. let\n"
                           "          d:f32[] = custom_vmap_call[")

    @cb.sequential_vmap
    def s2(x, y):
        return x * y["a"]

    np.testing.assert_array_equal(jax.vmap(s2, (0, None))(jnp.arange(3.0), {"a": 2.0}),
                                  [0.0, 2.0, 4.0])
