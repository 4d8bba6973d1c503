"""The differentiation API: behaviour, composition and JAX's errors.

Per-primitive derivatives are checked from the op-record table (`test_op_records.py`); the
programs real JAX recorded are in `test_ad_golden.py`. Here: the API surface (pytrees,
argnums, has_aux, allow_int, holomorphic, float0), agreement of the transforms with each
other and with finite differences on realistic programs, tracer rules, and error messages.
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax.extend import core as extend_core
from justjax.interpreters import mlir
from justjax._src.interpreters import partial_eval as pe
from justjax.test_util import check_grads
from tests.harness import x64_mode


def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


def xent(logits, labels):
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def layernorm(x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) * lax.rsqrt(var + 1e-5)).sum() + (x ** 3).sum()


def attention(q):
    k = jnp.cos(q)
    scores = q @ k.T / jnp.sqrt(q.shape[-1])
    return (jax.nn.softmax(scores, axis=-1) @ jnp.sin(q)).sum()


def _params(rng):
    return {"w1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
            "w2": rng.normal(size=(4, 2)), "b2": rng.normal(size=2)}


def _mlp_case(rng):
    params = _params(np.random.default_rng(1))
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    return (lambda w1: mlp_loss({**params, "w1": w1}, x, y)), rng.normal(size=(3, 4))


REALISTIC = {
    "mlp": _mlp_case,
    "xent": lambda rng: (lambda logits: xent(logits, jnp.array([0, 3, 1, 4])),
                         rng.normal(size=(4, 5))),
    "layernorm": lambda rng: (layernorm, rng.normal(size=(3, 4))),
    "attention": lambda rng: (attention, rng.normal(size=(3, 4))),
}


@pytest.mark.parametrize("name", sorted(REALISTIC))
def test_realistic_programs_agree_across_transforms(name: str) -> None:
    """grad, jacrev, jacfwd, hessian and jvp-of-grad agree with each other and with finite
    differences, in float64."""
    with x64_mode(True):
        fun, x = REALISTIC[name](np.random.default_rng(0))
        x = jnp.asarray(x)
        check_grads(fun, (x,), order=2, modes=("fwd", "rev"))
        g = jax.grad(fun)(x)
        np.testing.assert_allclose(jax.jacrev(fun)(x), g, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(jax.jacfwd(fun)(x), g, rtol=1e-10, atol=1e-12)
        v = jnp.asarray(np.random.default_rng(1).normal(size=x.shape))
        hvp = jax.jvp(jax.grad(fun), (x,), (v,))[1]
        hessian = jax.hessian(fun)(x)
        assert hessian.shape == x.shape + x.shape
        expected = np.tensordot(np.asarray(hessian), np.asarray(v), axes=v.ndim)
        np.testing.assert_allclose(hvp, expected, rtol=1e-8, atol=1e-10)
        # Reverse-over-reverse gives the same Hessian.
        np.testing.assert_allclose(jax.jacrev(jax.grad(fun))(x), hessian, rtol=1e-8, atol=1e-10)


def test_mlp_gradient_over_params_dict() -> None:
    rng = np.random.default_rng(0)
    with x64_mode(True):
        params = {k: jnp.asarray(v) for k, v in _params(rng).items()}
        x, y = jnp.asarray(rng.normal(size=(5, 3))), jnp.asarray(rng.normal(size=(5, 2)))
        grads = jax.grad(mlp_loss)(params, x, y)
        assert set(grads) == set(params)
        for key, value in params.items():
            def along(v, key=key):
                return mlp_loss({**params, key: v}, x, y)
            check_grads(along, (value,), order=1, modes=("rev",))
            np.testing.assert_allclose(grads[key], jax.grad(along)(value), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# API surface.

def test_argnums_tuple_and_negative() -> None:
    f = lambda x, y, z: x * y + z ** 2
    assert [float(g) for g in jax.grad(f, argnums=(0, 2))(2.0, 3.0, 4.0)] == [3.0, 8.0]
    assert float(jax.grad(f, argnums=-1)(2.0, 3.0, 4.0)) == 8.0


def test_keyword_arguments_are_not_differentiated() -> None:
    f = lambda x, *, scale: scale * x ** 2
    assert float(jax.grad(f)(3.0, scale=2.0)) == 12.0


def test_has_aux_returns_primal_aux() -> None:
    g, aux = jax.grad(lambda x: (jnp.sin(x), {"x2": x * 2}), has_aux=True)(1.0)
    assert isinstance(aux["x2"], jax.Array) and float(aux["x2"]) == 2.0
    (value, aux2), g2 = jax.value_and_grad(lambda x: (x ** 2, x), has_aux=True)(3.0)
    assert (float(value), float(aux2), float(g2)) == (9.0, 3.0, 6.0)
    out, tangent, aux3 = jax.jvp(lambda x: (x ** 2, x + 1), (3.0,), (1.0,), has_aux=True)
    assert (float(out), float(tangent), float(aux3)) == (9.0, 6.0, 4.0)
    out, pullback, aux4 = jax.vjp(lambda x: (x ** 2, x + 1), 3.0, has_aux=True)
    assert float(pullback(1.0)[0]) == 6.0 and float(aux4) == 4.0


def test_weak_type_and_dtype_of_gradients() -> None:
    assert jax.grad(lambda x: x * 2.0)(3.0).weak_type
    assert not jax.grad(lambda x: x * 2.0)(jnp.float32(3.0)).weak_type
    assert jax.grad(lambda x: x.sum())(jnp.ones(3, jnp.bfloat16)).dtype == jnp.bfloat16


def test_allow_int_gives_float0() -> None:
    gx, gn = jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(gx) == 3.0
    assert np.asarray(gn).dtype == jax.dtypes.float0 and np.shape(gn) == ()
    tangent = jax.jvp(lambda x: x.astype(jnp.int32), (1.0,), (1.0,))[1]
    assert np.asarray(tangent).dtype == jax.dtypes.float0
    cts = jax.vjp(lambda n, x: n * x, 3, 2.0)[1](1.0)
    assert np.asarray(cts[0]).dtype == jax.dtypes.float0 and float(cts[1]) == 3.0
    _, tangents = jax.jvp(lambda n: n * 2, (3,), (np.zeros((), jax.dtypes.float0),))
    assert np.asarray(tangents).dtype == jax.dtypes.float0


def test_integer_only_primitive_needs_no_derivative_rule() -> None:
    """A float0 tangent is a zero: a primitive without a jvp rule whose inputs are all
    integers differentiates when its operands carry float0 tangents (equinox's
    `unvmap_max` in a jvp of a jaxpr), as in JAX."""
    no_rule = extend_core.Primitive("no_rule_int_max")
    no_rule.def_impl(lambda n: np.max(n))
    no_rule.def_abstract_eval(lambda n: jax.core.ShapedArray((), n.dtype))
    mlir.register_lowering(no_rule, mlir.lower_fun(jnp.max, multiple_results=False))
    ints, float0 = np.array([3, 5], np.int32), np.zeros((2,), jax.dtypes.float0)
    for fun in (no_rule.bind, jax.jit(no_rule.bind)):
        primal, tangent = jax.jvp(fun, (ints,), (float0,))
        assert int(primal) == 5 and np.asarray(tangent).dtype == jax.dtypes.float0
    # A jaxpr's jvp with the integer input marked perturbed (a jit's jvp rule does this
    # when its operand's tangent is a float0 value, not a symbolic zero).
    closed = jax.make_jaxpr(no_rule.bind)(ints)
    jvp_closed, out_nonzeros = pe.jvp_jaxpr(closed, [True], instantiate=False)
    assert out_nonzeros == [False]
    assert [int(v) for v in jax.core.eval_jaxpr(jvp_closed.jaxpr, jvp_closed.consts, ints,
                                                float0)] == [5]


def test_holomorphic_grad() -> None:
    z = jnp.complex64(1.0 + 2.0j)
    g = jax.grad(lambda z: z ** 2, holomorphic=True)(z)
    np.testing.assert_allclose(g, 2 * (1.0 + 2.0j), rtol=1e-6)


def test_linearize_evaluates_residuals_once() -> None:
    calls = []

    def f(x):
        calls.append(1)
        return jnp.sin(x) * x

    y, f_jvp = jax.linearize(f, jnp.arange(3.0))
    first = f_jvp(jnp.ones(3))
    second = f_jvp(2 * jnp.ones(3))
    assert len(calls) == 1
    np.testing.assert_allclose(second, 2 * np.asarray(first), rtol=1e-6)
    np.testing.assert_allclose(y, np.sin(np.arange(3.0)) * np.arange(3.0), rtol=1e-6)
    # The linear function reads the residuals as constvars.
    assert len(f_jvp.linear_jaxpr.consts) >= 1


def test_reverse_mode_does_not_recompute_the_forward_pass() -> None:
    def chain(x):
        return jnp.tanh(jnp.cos(jnp.sin(x))).sum()

    jaxpr = jax.make_jaxpr(jax.grad(chain))(jnp.ones(3)).jaxpr
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names.count("tanh") == 1 and names.count("sin") == 2 and names.count("cos") == 2
    assert "add_any" in names


def test_python_control_flow_on_primal_values() -> None:
    f = lambda x: x ** 2 if x > 0 else -x
    assert float(jax.grad(f)(3.0)) == 6.0
    assert float(jax.grad(f)(-3.0)) == -1.0
    assert float(jax.grad(lambda x: x * int(x))(3.0)) == 3.0


def test_perturbation_confusion_is_avoided() -> None:
    # d/dx [x * d/dy (x + y)] = 1 (the inner derivative is 1, not x-dependent).
    f = lambda x: x * jax.grad(lambda y: x + y)(1.0)
    assert float(jax.grad(f)(2.0)) == 1.0
    g = lambda x: jax.jvp(lambda y: x * y, (1.0,), (1.0,))[1]
    assert float(jax.grad(g)(5.0)) == 1.0


def test_nested_derivatives() -> None:
    assert float(jax.grad(jax.grad(jax.grad(lambda x: x ** 4)))(0.5)) == pytest.approx(12.0)
    assert float(jax.grad(jax.grad(jnp.sin))(1.0)) == pytest.approx(-np.sin(1.0), rel=1e-6)


def test_jacobian_structure_follows_jax() -> None:
    f = lambda d: {"s": d["a"] * d["b"], "t": d["a"].sum()}
    x = {"a": jnp.arange(2.0), "b": jnp.arange(2.0) + 1}
    for jac in (jax.jacrev(f)(x), jax.jacfwd(f)(x)):
        assert set(jac) == {"s", "t"}
        assert jac["s"]["a"].shape == (2, 2) and jac["t"]["b"].shape == (2,)
    jac = jax.jacfwd(lambda x, y: x * y, argnums=(0, 1))(jnp.ones(2), jnp.ones(2))
    assert isinstance(jac, tuple) and jac[0].shape == (2, 2)
    assert jax.jacobian is jax.jacrev


def test_escaped_tracer_is_an_error() -> None:
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2

    jax.grad(f)(1.0)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jnp.sin(leaked[0])


def test_stop_gradient_blocks_derivatives() -> None:
    assert float(jax.grad(lambda x: lax.stop_gradient(x) * x)(3.0)) == 3.0
    assert float(jax.grad(lambda x: lax.stop_gradient(x ** 2))(3.0)) == 0.0


def test_vjp_accepts_a_symbolic_structure_of_pytrees() -> None:
    out, pullback = jax.vjp(lambda x: (jnp.sin(x), {"c": x ** 2}), jnp.arange(3.0))
    (ct,) = pullback((jnp.ones(3), {"c": jnp.ones(3)}))
    np.testing.assert_allclose(ct, np.cos(np.arange(3.0)) + 2 * np.arange(3.0), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Errors, with JAX's classes and texts.

ERRORS = [
    (lambda: jax.grad(lambda x: x)(jnp.ones(2)), TypeError,
     "Gradient only defined for scalar-output functions. Output had shape: (2,)."),
    (lambda: jax.grad(lambda x: x.astype(int))(1.0), TypeError,
     "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
     "got int32. For differentiation of functions with integer outputs, use jax.vjp directly."),
    (lambda: jax.grad(lambda x: x * 1j)(1.0), TypeError,
     "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
     "got complex64. For holomorphic differentiation, pass holomorphic=True."),
    (lambda: jax.grad(lambda x: x, holomorphic=True)(1.0), TypeError,
     "grad with holomorphic=True requires inputs with complex dtype, but got float32."),
    (lambda: jax.grad(lambda x: x)(1), TypeError,
     "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
     "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use "
     "vjp or set allow_int to True."),
    (lambda: jax.grad(lambda x, y: x, argnums=2)(1.0, 2.0), TypeError,
     "differentiating with respect to argnums=2 requires at least 3 positional arguments to "
     "be passed by the caller, but got only 2 positional arguments."),
    (lambda: jax.jvp(jnp.sin, 1.0, 1.0), TypeError,
     "primal and tangent arguments to jax.jvp must be tuples or lists; found float and float."),
    (lambda: jax.jvp(jnp.sin, (1.0,), (1,)), TypeError,
     "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case "
     "of int/bool primal dtype the tangent dtype must be float0.Got primal dtype float32 and "
     "so expected tangent dtype float32, but got tangent dtype int32 instead."),
    (lambda: jax.jvp(jnp.sin, (jnp.ones(2),), (jnp.ones(3),)), ValueError,
     "jvp called with different primal and tangent shapes;Got primal shape (2,) and tangent "
     "shape as (3,)"),
    (lambda: jax.jvp(lambda x, y: x, (1.0, 2.0), (1.0,)), TypeError,
     "primal and tangent arguments to jax.jvp must have the same tree structure; primals have "
     "tree structure PyTreeDef((*, *)) whereas tangents have tree structure PyTreeDef((*,))."),
    (lambda: jax.vjp(jnp.sin, jnp.ones(2))[1](jnp.ones(3)), ValueError,
     "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got float32[3], but "
     "expected float32[2] because the corresponding output of the differentiated function had "
     "JAX type float32[2]"),
    (lambda: jax.vjp(lambda x: (x, x), 1.0)[1](1.0), ValueError, "unexpected tree structure."),
    (lambda: jax.vjp(jnp.sin, 1.0)[1](1.0, 2.0), TypeError,
     "The function returned by `jax.vjp` applied to sin was called with 2 arguments"),
    (lambda: jax.jacfwd(lambda x: x)(1), TypeError,
     "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
     "got int32."),
    (lambda: jax.jacrev(lambda x: x * 1j)(1.0), TypeError,
     "jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
     "but got complex64."),
    (lambda: jax.grad(1), TypeError, "Expected a callable value, got 1"),
    (lambda: jax.grad(lambda x: x, has_aux=True)(1.0), TypeError,
     "expected function with aux output to return a two-element tuple, but got type"),
]


@pytest.mark.parametrize("thunk,error,message", ERRORS, ids=[m[:40] for _, _, m in ERRORS])
def test_errors_match_jax(thunk, error, message: str) -> None:
    with pytest.raises(error) as info:
        thunk()
    assert message in str(info.value)


def test_vjp_and_linearize_functions_are_pytrees_of_their_residuals():
    # As JAX's: a jitted or vmapped function may return them. The scalar factor is a residual
    # too (real JAX 0.10.2 gives these leaf shapes).
    _, pullback = jax.vjp(lambda x: jnp.sin(x) * 2, jnp.ones(3))
    assert [leaf.shape for leaf in jax.tree_util.tree_leaves(pullback)] == [(3,), ()]
    jitted_pullback = jax.jit(lambda x: jax.vjp(lambda y: jnp.sin(y) * 2, x)[1])(jnp.ones(3))
    np.testing.assert_allclose(jitted_pullback(jnp.ones(3))[0], 2 * np.cos(np.ones(3)),
                               rtol=1e-6)
    _, f_jvp = jax.linearize(lambda x: jnp.sin(x) * 2, jnp.ones(3))
    assert [leaf.shape for leaf in jax.tree_util.tree_leaves(f_jvp)] == [(3,), ()]
    _, batched = jax.vmap(lambda x: jax.linearize(lambda y: jnp.sin(y) * 2, x))(jnp.ones((2, 3)))
    np.testing.assert_allclose(jax.vmap(lambda f, t: f(t))(batched, jnp.ones((2, 3))),
                               2 * np.cos(np.ones((2, 3))), rtol=1e-6)
