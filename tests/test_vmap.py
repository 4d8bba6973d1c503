"""jax.vmap's API: axis specs, pytrees, nesting, composition with autodiff, custom rules,
and JAX's errors (texts read off JAX 0.10.2)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from tests.harness import stack_per_example


def _rng_array(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Axis specs.

@pytest.mark.parametrize("in_axes,out_axes", [(0, 0), (1, 0), (-1, 0), (0, 1), (1, -1),
                                              ((0, None), 0), ((None, 1), -1), ([1, 0], 0)])
def test_in_and_out_axes(in_axes, out_axes) -> None:
    # Square, so that every spec is valid; the values tell the axes apart.
    x = _rng_array(5, 5, seed=1)
    y = _rng_array(5, 5, seed=2)

    def f(a, b):
        return jnp.sin(a) * b + 1.0

    got = jax.vmap(f, in_axes=in_axes, out_axes=out_axes)(x, y)
    axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else in_axes
    want = np.moveaxis(stack_per_example(f, x, y, in_axes=axes), 0, out_axes)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_pytree_in_axes_prefix_and_kwargs() -> None:
    x = _rng_array(3, 2, seed=3)
    params = {"w": _rng_array(2, seed=4), "b": np.float32(0.5)}

    def f(p, x, *, scale):
        return {"out": (x * p["w"]).sum() + p["b"], "scaled": x * scale}

    scale = _rng_array(3, seed=5)
    got = jax.vmap(f, in_axes=({"w": None, "b": None}, 0))(params, x, scale=scale)
    for i in range(3):
        one = f(params, x[i], scale=scale[i])
        np.testing.assert_allclose(got["out"][i], one["out"], rtol=1e-6)
        np.testing.assert_allclose(got["scaled"][i], one["scaled"], rtol=1e-6)


def test_out_axes_none_for_unbatched_outputs_and_pytree_out_axes() -> None:
    x = jnp.ones(3)
    out = jax.vmap(lambda x: {"a": x, "b": 1.0}, out_axes={"a": 0, "b": None})(x)
    assert out["b"] == 1.0 and isinstance(out["b"], float)
    np.testing.assert_array_equal(out["a"], np.ones(3))


def test_unbatched_outputs_are_broadcast() -> None:
    out = jax.vmap(lambda x: 2)(jnp.ones((3, 2)))
    assert out.dtype == np.int32 and out.weak_type and out.shape == (3,)
    out = jax.vmap(lambda x: 2.0)(jnp.ones((3, 2)))
    assert out.dtype == np.float32 and out.weak_type


def test_axis_size_with_unmapped_arguments() -> None:
    out = jax.vmap(lambda x: x * 2, in_axes=None, axis_size=4)(jnp.arange(3.0))
    np.testing.assert_array_equal(out, np.tile(np.arange(3.0) * 2, (4, 1)))
    assert jax.vmap(lambda: 1.0, axis_size=3)().shape == (3,)


def test_weak_types_survive() -> None:
    out = jax.vmap(lambda x: x * 2.0)(jnp.ones(3))
    assert not out.weak_type
    out = jax.vmap(lambda x, y: x + y, in_axes=(0, None))(jnp.ones(3, jnp.float16), 1.0)
    assert out.dtype == np.float16


# ---------------------------------------------------------------------------------------------
# Nesting, closures and composition with autodiff.

def test_nested_vmap_dot_matches_matrix_product() -> None:
    a = _rng_array(4, 3, seed=6)
    b = _rng_array(3, 5, seed=7)
    got = jax.vmap(jax.vmap(jnp.dot, in_axes=(None, 1)), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)


def test_closure_over_outer_batch_tracer() -> None:
    x = _rng_array(3, seed=8)
    y = _rng_array(4, seed=9)
    got = jax.vmap(lambda a: jax.vmap(lambda b: a * b + a)(y))(x)
    np.testing.assert_allclose(got, x[:, None] * y[None, :] + x[:, None], rtol=1e-6)


def _loss(w, x, y):
    return (jnp.tanh(x * w).sum() - y) ** 2


def test_per_example_gradients() -> None:
    w = _rng_array(5, seed=10)
    xs = _rng_array(6, 5, seed=11)
    ys = _rng_array(6, seed=12)
    got = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(w, xs, ys)
    want = np.stack([np.asarray(jax.grad(_loss)(w, xs[i], ys[i])) for i in range(6)])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_grad_of_vmap_and_vmap_of_grad_agree() -> None:
    w = _rng_array(5, seed=13)
    xs = _rng_array(6, 5, seed=14)
    ys = _rng_array(6, seed=15)
    total = jax.grad(lambda w: jax.vmap(_loss, in_axes=(None, 0, 0))(w, xs, ys).sum())(w)
    per_example = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(w, xs, ys)
    np.testing.assert_allclose(total, np.asarray(per_example).sum(0), rtol=1e-5)


def test_vmap_of_jvp_and_of_vjp() -> None:
    x = _rng_array(4, 3, seed=16)
    t = _rng_array(4, 3, seed=17)
    primals, tangents = jax.vmap(lambda x, t: jax.jvp(jnp.sin, (x,), (t,)))(x, t)
    np.testing.assert_allclose(primals, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(tangents, np.cos(x) * t, rtol=1e-6)
    cts = jax.vmap(lambda x, ct: jax.vjp(jnp.sin, x)[1](ct)[0])(x, t)
    np.testing.assert_allclose(cts, np.cos(x) * t, rtol=1e-6)


def test_jacobians_use_vmap_and_match_finite_structure() -> None:
    x = _rng_array(3, seed=18)

    def f(x):
        return {"a": jnp.sin(x) * x[0], "b": (x ** 2).sum()}

    want_a = np.diag(np.cos(x) * x[0])
    want_a[:, 0] += np.sin(x)
    for jac in (jax.jacfwd, jax.jacrev):
        got = jac(f)(x)
        np.testing.assert_allclose(got["a"], want_a, rtol=1e-5)
        np.testing.assert_allclose(got["b"], 2 * x, rtol=1e-5)
    hess = jax.hessian(lambda x: (x ** 3).sum())(x)
    np.testing.assert_allclose(hess, np.diag(6 * x), rtol=1e-5)


def test_jacfwd_jaxpr_is_a_batched_jvp() -> None:
    text = str(jax.make_jaxpr(jax.jacfwd(jnp.sin))(jnp.arange(3.0)))
    # One batched tangent computation, not one per basis vector.
    assert text.count("cos") == 1 and text.count("mul") == 1
    assert "split[axis=1 sizes=(np.int64(3),)]" in text


def test_jacrev_with_integer_input_allow_int() -> None:
    jac = jax.jacrev(lambda a, b: a * b, argnums=(0, 1), allow_int=True)(jnp.arange(3.0), 2)
    np.testing.assert_array_equal(jac[0], 2 * np.eye(3))
    assert jac[1].dtype == np.int32 and jac[1].weak_type
    np.testing.assert_array_equal(jac[1], np.zeros(3))


# ---------------------------------------------------------------------------------------------
# Custom derivatives under vmap.

@jax.custom_jvp
def _clipped_log(x):
    return jnp.log(jnp.maximum(x, 1e-3))


@_clipped_log.defjvp
def _clipped_log_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return _clipped_log(x), t / jnp.maximum(x, 1e-3) * 2.0


@jax.custom_vjp
def _scaled_square(x, s):
    return x * x * s


def _scaled_square_fwd(x, s):
    return _scaled_square(x, s), (x, s)


def _scaled_square_bwd(res, g):
    x, s = res
    return 3.0 * g * x * s, g * x * x


_scaled_square.defvjp(_scaled_square_fwd, _scaled_square_bwd)


def test_custom_jvp_under_vmap_uses_the_rule() -> None:
    x = np.array([0.5, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(jax.vmap(_clipped_log)(x), np.log(x), rtol=1e-6)
    grads = jax.vmap(jax.grad(_clipped_log))(x)
    np.testing.assert_allclose(grads, 2.0 / x, rtol=1e-6)
    grads = jax.grad(lambda x: jax.vmap(_clipped_log)(x).sum())(x)
    np.testing.assert_allclose(grads, 2.0 / x, rtol=1e-6)
    _, tangents = jax.jvp(jax.vmap(_clipped_log), (x,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(tangents, 2.0 / x, rtol=1e-6)


def test_custom_vjp_under_vmap_uses_the_rule() -> None:
    x = np.array([0.5, 1.0, 2.0], np.float32)
    s = np.float32(1.5)
    np.testing.assert_allclose(jax.vmap(_scaled_square, in_axes=(0, None))(x, s), x * x * s)
    gx, gs = jax.vmap(jax.grad(_scaled_square, argnums=(0, 1)), in_axes=(0, None))(x, s)
    np.testing.assert_allclose(gx, 3.0 * x * s, rtol=1e-6)
    np.testing.assert_allclose(gs, x * x, rtol=1e-6)
    # Reverse mode through a vmap: the unmapped argument's cotangent sums over the batch.
    gx, gs = jax.grad(lambda x, s: jax.vmap(_scaled_square, in_axes=(0, None))(x, s).sum(),
                      argnums=(0, 1))(x, s)
    np.testing.assert_allclose(gx, 3.0 * x * s, rtol=1e-6)
    np.testing.assert_allclose(gs, (x * x).sum(), rtol=1e-6)


def test_forward_mode_of_custom_vjp_under_vmap_is_jaxs_error() -> None:
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=re.escape(
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function.")):
        jax.vmap(lambda x: jax.jvp(lambda x: _scaled_square(x, 2.0), (x,), (x,)))(x)


# ---------------------------------------------------------------------------------------------
# Errors.

def _raises(error, message, fun, *args, **kwargs):
    with pytest.raises(error) as info:
        fun(*args, **kwargs)
    assert str(info.value) == message


def _add(x, y):
    return x + y


def test_inconsistent_sizes_name_the_arguments() -> None:
    _raises(ValueError,
            "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
            "  * one axis had size 4: axis 0 of argument y of type float32[4]",
            jax.vmap(_add), jnp.ones(3), jnp.ones(4))
    _raises(ValueError,
            "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * most axes (2 of them) had size 4, e.g. axis 0 of args[1] of type float32[4];\n"
            "  * one axis had size 3: axis 0 of argument a of type float32[3]",
            jax.vmap(lambda *a: a[0]), jnp.ones(3), jnp.ones(4), jnp.ones(4))
    _raises(ValueError,
            "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
            "  * one axis had size 4: axis 0 of kwargs['y'] of type float32[4]",
            jax.vmap(lambda x, y: x * y), jnp.ones(3), y=jnp.ones(4))
    _raises(ValueError,
            "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * the `axis_size` argument was 4;\n"
            "  * one axis had size 3: axis 0 of argument x of type float32[3]",
            jax.vmap(lambda x: x, axis_size=4), jnp.ones(3))


def test_axis_spec_errors() -> None:
    _raises(ValueError,
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            "positional arguments passed to the function, but got len(in_axes)=1, len(args)=2",
            jax.vmap(_add, in_axes=(0,)), jnp.ones(3), jnp.ones(3))
    _raises(ValueError,
            "vmap was requested to map its argument along axis 2, which implies that its rank "
            "should be at least 3, but is only 2 (its shape is (3, 2))",
            jax.vmap(_add, in_axes=2), jnp.ones((3, 2)), jnp.ones(3))
    _raises(ValueError,
            "vmap was requested to map its argument along axis -3, which implies that its rank "
            "should be at least 3, but is only 2 (its shape is (3, 2))",
            jax.vmap(_add, in_axes=-3), jnp.ones((3, 2)), jnp.ones(3))
    _raises(ValueError,
            "vmap must have at least one non-None value in in_axes or axis_size must be "
            "specified", jax.vmap(_add, in_axes=None), jnp.ones(3), jnp.ones(3))
    _raises(ValueError,
            "vmap wrapped function must be passed at least one argument containing an array or "
            "axis_size must be specified, got empty *args=() and **kwargs={}",
            jax.vmap(lambda: 1.0))
    _raises(ValueError, "axis 2 is out of bounds for array of dimension 1",
            jax.vmap(lambda x: x, out_axes=2), jnp.ones(3))
    with pytest.raises(TypeError, match=re.escape(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            "positional arguments passed to the function, but got 1.0.")):
        jax.vmap(_add, in_axes=1.0)
    with pytest.raises(TypeError, match=re.escape(
            "vmap in_axes must be an int, None, or (nested) container with those types as "
            "leaves, but got (0, 'a').")):
        jax.vmap(_add, in_axes=[0, "a"])
    with pytest.raises(TypeError, match=re.escape(
            "vmap out_axes must be an int, None, or (nested) container with those types as "
            "leaves, but got a.")):
        jax.vmap(_add, out_axes="a")
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        jax.vmap(3)


def test_in_axes_tree_mismatch() -> None:
    with pytest.raises(ValueError) as info:
        jax.vmap(_add, in_axes=(0, (0, 1)))(jnp.ones(3), jnp.ones(3))
    message = str(info.value)
    assert message.startswith("vmap in_axes specification must be a tree prefix of the "
                              "corresponding value; \n  Mismatch details (1 found):\n"
                              "  pytree structure error: different types at key path\n"
                              "    vmap in_axes[1]\n")
    with pytest.raises(ValueError, match=re.escape("pytree structure error: different pytree "
                                                   "metadata at key path\n    vmap in_axes[0]")):
        jax.vmap(lambda x: x, in_axes=({"b": 0},))({"a": jnp.ones(3)})


def test_out_axes_none_for_batched_output() -> None:
    _raises(ValueError, "at vmap out_axes, got axis spec None but output was batched on axis 0",
            jax.vmap(_add, out_axes=None), jnp.ones(3), jnp.ones(3))
    _raises(ValueError, "vmap has mapped output (axis_name=i) but out_axes is None",
            jax.vmap(_add, out_axes=None, axis_name="i"), jnp.ones(3), jnp.ones(3))
    _raises(ValueError,
            "at vmap out_axes['b'], got axis spec None but output was batched on axis 0",
            jax.vmap(lambda x: {"a": x, "b": x}, out_axes={"a": 0, "b": None}), jnp.ones(3))


def test_non_jax_output() -> None:
    _raises(TypeError, "Output from batched function 'abc' with type <class 'str'> is not a "
                       "valid JAX type", jax.vmap(lambda x: "abc"), jnp.ones(3))


def test_tracer_conversion_errors_point_at_the_user_line() -> None:
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jax.vmap(f)(jnp.ones(3))
    message = str(info.value)
    assert message.startswith("Attempted boolean conversion of traced array with shape bool[].\n"
                              "This BatchTracer with object id ")
    line = f.__code__.co_firstlineno + 1
    assert f"was created on line:\n  {__file__}:{line}:11 (f)\n" in message
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.vmap(lambda x: int(x))(jnp.ones(3))


def test_escaped_batch_tracer() -> None:
    leaked = []
    jax.vmap(lambda x: leaked.append(x) or x)(jnp.ones(3))
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jnp.sin(leaked[0])


def test_missing_rule_message() -> None:
    from justjax._src.core import core
    from justjax._src.interpreters import batching
    prim = core.Primitive("no_batching_rule_here")
    prim.def_impl(lambda x: x)
    prim.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError,
                       match="Batching rule for 'no_batching_rule_here' not implemented"):
        jax.vmap(prim.bind)(jnp.ones(3))
    assert prim not in batching.primitive_batchers


def test_custom_rules_closing_over_batched_values() -> None:
    ws = np.array([1.0, 2.0, 3.0], np.float32)
    x = np.float32(0.7)

    def per_example(w):
        @jax.custom_jvp
        def f(x):
            return jnp.sin(x) * w

        f.defjvp(lambda p, t: (f(p[0]), t[0] * jnp.cos(p[0]) * w * 10.0))
        return f(x), jax.grad(f)(x)

    values, grads = jax.vmap(per_example)(ws)
    np.testing.assert_allclose(values, np.sin(x) * ws, rtol=1e-6)
    np.testing.assert_allclose(grads, np.cos(x) * ws * 10.0, rtol=1e-6)


def test_custom_jvp_under_vmap_staged_and_differentiated() -> None:
    x = np.array([0.5, 1.0, 2.0], np.float32)
    text = str(jax.make_jaxpr(jax.vmap(_clipped_log))(x))
    assert "custom_jvp_call" in text
    hess = jax.vmap(jax.hessian(_clipped_log))(x)
    np.testing.assert_allclose(hess, -2.0 / x ** 2, rtol=1e-5)


def test_jacfwd_of_forward_only_batched_primal_is_jaxs_error() -> None:
    def window_sum(x):
        return lax.reduce_window(x, 0.0, lambda a, b: a + b, (2,), (1,), "VALID")

    _raises(ValueError, "at vmap out_axes[0]['a'][0], got axis spec None but output was "
                        "batched on axis 0",
            jax.jacfwd(lambda x: {"a": (window_sum(x), x)}), jnp.ones(4))


def test_mapped_arguments_must_be_jax_types() -> None:
    _raises(TypeError, "Argument 'abc' of type <class 'str'> is not a valid JAX type",
            jax.vmap(lambda s: s), "abc")
    np.testing.assert_array_equal(
        jax.vmap(lambda x, s: x, in_axes=(0, None))(jnp.ones(3), "abc"), np.ones(3))
    with pytest.raises(TypeError, match="of type '<class 'object'>' is not a valid JAX type"):
        jax.vmap(lambda x, s: x)(jnp.ones(3), object())
