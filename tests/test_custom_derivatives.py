"""custom_jvp and custom_vjp: staging, rules under jvp/grad/linearize, pytrees, nondiff
arguments, symbolic zeros, JAX's error messages, and the library functions JAX defines with
custom_jvp (relu, relu6, logaddexp, logaddexp2, sinc, xlogy, xlog1py, logit, entr).

tests/golden/custom_derivatives_jaxprs.txt holds the jaxprs real JAX 0.10.2 printed for the
CASES below (recorded under `jax.disable_jit()`, so that JAX's own `jit` wrappers around relu,
`_where` ... do not show; justjax traces them under `disable_jit` too). The error messages are
JAX's too.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
import justjax.scipy.special as jss
from justjax import test_util
from justjax._src.pytrees import tree_util
from justjax._src.core.jaxpr import eval_jaxpr
from justjax._src.transformations.custom_derivatives import CustomVJPPrimal, SymbolicZero

GOLDEN = pathlib.Path(__file__).parent / "golden" / "custom_derivatives_jaxprs.txt"

X = np.float32(1.5)
Y = np.float32(0.5)
V = np.array([-1.0, 0.0, 2.0], np.float32)
W = np.array([0.5, -np.inf, 3.0], np.float32)


# ---------------------------------------------------------------------------------------------
# Functions the cases use.

@jax.custom_jvp
def f(x, y):
    return jnp.sin(x) * y


@f.defjvp
def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return f(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot


@jax.custom_jvp
def h(x):
    return jnp.sin(x)


@h.defjvp
def h_jvp(primals, tangents):
    x, = primals
    t, = tangents
    # Twice the true derivative, so that tests can tell the rule was used.
    return h(x), 2.0 * jnp.cos(x) * t


@jax.custom_vjp
def g(x, y):
    return jnp.sin(x) * y


def g_fwd(x, y):
    return g(x, y), (jnp.cos(x), jnp.sin(x), y)


def g_bwd(res, ct):
    cos_x, sin_x, y = res
    return (cos_x * ct * y, sin_x * ct)


g.defvjp(g_fwd, g_bwd)


@jax.custom_jvp
def pt(d, t):
    return {"s": d["a"] * t[0], "l": [d["b"] + t[1]]}


@pt.defjvp
def pt_jvp(primals, tangents):
    (d, t), (dd, dt) = primals, tangents
    return pt(d, t), {"s": dd["a"] * t[0] + d["a"] * dt[0], "l": [dd["b"] + dt[1]]}


def scale(y):
    s = jax.custom_jvp(lambda x, y: x * y, nondiff_argnums=(1,))
    s.defjvp(lambda y, p, t: (p[0] * y, t[0] * y * 10.0))
    return s


def closure(c, x):
    @jax.custom_jvp
    def k(x):
        return jnp.sin(x) * c + V

    @k.defjvp
    def k_jvp(p, t):
        return k(p[0]), jnp.cos(p[0]) * t[0] * c + jnp.zeros(3, np.float32)

    return k(x)


@jax.custom_jvp
def sz(x, y):
    return x * y


def sz_jvp(p, t):
    return sz(*p), p[0] * t[1]


sz.defjvp(sz_jvp, symbolic_zeros=True)


CASES = {
    "custom_jvp": lambda: jax.make_jaxpr(f)(X, Y),
    "custom_jvp_under_jvp": lambda: jax.make_jaxpr(
        lambda x, y: jax.jvp(f, (x, y), (x, y)))(X, Y),
    "custom_jvp_grad": lambda: jax.make_jaxpr(jax.grad(h))(X),
    "custom_vjp": lambda: jax.make_jaxpr(g)(X, Y),
    "custom_vjp_grad": lambda: jax.make_jaxpr(jax.grad(g))(X, Y),
    "custom_vjp_vjp": lambda: jax.make_jaxpr(lambda x: jax.vjp(g, x, Y)[1](x))(X),
    "custom_vjp_under_jvp_stages_custom_lin": lambda: jax.make_jaxpr(
        lambda x: jax.jvp(g, (x, Y), (x, Y)))(X),
    "pytrees": lambda: jax.make_jaxpr(pt)({"a": X, "b": Y}, (X, Y)),
    "nondiff_tracer_is_stopped": lambda: jax.make_jaxpr(lambda x: scale(x)(x, x))(X),
    "nondiff_static": lambda: jax.make_jaxpr(lambda x: scale(2.0)(x, 2.0))(X),
    "closure_consts": lambda: jax.make_jaxpr(closure)(X, Y),
    "symbolic_zeros": lambda: jax.make_jaxpr(jax.grad(sz, 1))(X, Y),
    "relu_jvp": lambda: jax.make_jaxpr(lambda x, t: jax.jvp(jax.nn.relu, (x,), (t,)))(V, W),
    "relu6_jvp": lambda: jax.make_jaxpr(lambda x, t: jax.jvp(jax.nn.relu6, (x,), (t,)))(V, W),
    "logaddexp": lambda: jax.make_jaxpr(jnp.logaddexp)(V, W),
    "logaddexp_grad": lambda: jax.make_jaxpr(
        jax.grad(lambda x, y: jnp.logaddexp(x, y).sum(), (0, 1)))(V, W),
    "softplus_scalar_operand": lambda: jax.make_jaxpr(lambda x: jnp.logaddexp(x, 0.0))(V),
    "xlogy_grad": lambda: jax.make_jaxpr(
        jax.grad(lambda x, y: jss.xlogy(x, y).sum(), (0, 1)))(V, W),
    "xlog1py_grad": lambda: jax.make_jaxpr(
        jax.grad(lambda x, y: jss.xlog1py(x, y).sum(), (0, 1)))(V, W),
    "logit_grad": lambda: jax.make_jaxpr(jax.grad(lambda x: jss.logit(x).sum()))(V),
    "logsumexp": lambda: jax.make_jaxpr(lambda a: jss.logsumexp(a, b=a, keepdims=True))(V),
    "softmax": lambda: jax.make_jaxpr(jax.nn.softmax)(V),
}


def _golden() -> dict[str, str]:
    blocks = GOLDEN.read_text().split("=== ")[1:]
    return {b.split("\n", 1)[0]: b.split("\n", 1)[1].rstrip("\n") for b in blocks}


def test_every_case_has_golden_text() -> None:
    assert sorted(_golden()) == sorted(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_jaxpr_matches_jax(name: str) -> None:
    with jax.disable_jit():
        text = str(CASES[name]())
    assert text == _golden()[name]


# ---------------------------------------------------------------------------------------------
# Values: the rule is used, at every order and through every entry point.

def staged(fun):
    """`fun` traced to a jaxpr, which is evaluated by re-binding its equations (what a
    transformation of a staged call sees)."""
    def run(*args):
        closed, shapes = jax.make_jaxpr(fun, return_shape=True)(*args)
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *tree_util.tree_leaves(args))
        return tree_util.tree_unflatten(tree_util.tree_structure(shapes), outs)
    return run


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=tol,
                               atol=tol)


def test_eager_call_runs_the_function() -> None:
    close(f(X, Y), np.sin(X) * Y)
    close(g(X, Y), np.sin(X) * Y)


def test_rule_is_used_by_jvp_grad_linearize_and_vjp() -> None:
    expected = 2 * np.cos(X)
    close(jax.jvp(h, (X,), (np.float32(1),))[1], expected)
    close(jax.grad(h)(X), expected)
    close(jax.linearize(h, X)[1](np.float32(1)), expected)
    close(jax.vjp(h, X)[1](np.float32(1))[0], expected)


def test_higher_order_differentiates_the_rule() -> None:
    # d/dx of the rule's tangent 2 cos(x) t, and so on: the rule itself is differentiated.
    close(jax.grad(jax.grad(h))(X), -2 * np.sin(X))
    close(jax.grad(jax.grad(jax.grad(h)))(X), -2 * np.cos(X))
    close(jax.jvp(jax.grad(h), (X,), (np.float32(1),))[1], -2 * np.sin(X))


def test_staged_call_keeps_its_rule() -> None:
    close(staged(h)(X), np.sin(X))
    close(jax.grad(staged(h))(X), 2 * np.cos(X))
    close(jax.grad(jax.grad(staged(h)))(X), -2 * np.sin(X))
    close(jax.jvp(staged(f), (X, Y), (Y, X))[1], np.cos(X) * Y * Y + np.sin(X) * X)


def test_staged_closure_consts_are_not_differentiated_by_the_rule() -> None:
    # The closed-over value is an operand of the equation, but the rule sees only x.
    got = jax.grad(lambda x: staged(lambda x: closure(Y, x))(x).sum())(X)
    close(got, 3 * np.cos(X) * Y)


def test_custom_jvp_call_applied_to_tangents_is_transposed() -> None:
    @jax.custom_jvp
    def double(x):
        return x * 2.0

    double.defjvp(lambda p, t: (double(p[0]), double(t[0])))
    close(jax.grad(double)(X), 2.0)
    close(jax.grad(lambda x: double(double(x)))(X), 4.0)
    close(jax.linearize(double, X)[1](Y), 1.0)


def test_pytrees_in_and_out() -> None:
    d, t = {"a": X, "b": Y}, (X, Y)
    out, tangent = jax.jvp(pt, (d, t), (d, t))
    assert sorted(out) == ["l", "s"] and isinstance(out["l"], list)
    close(tangent["s"], 2 * X * X)
    close(tangent["l"][0], 2 * Y)
    grads = jax.grad(lambda d, t: pt(d, t)["s"] + pt(d, t)["l"][0] * 2, (0, 1))(d, t)
    close(grads[0]["a"], X)
    close(grads[0]["b"], 2.0)
    close(grads[1][0], X)
    close(grads[1][1], 2.0)


def test_defjvps_sums_the_contributions() -> None:
    @jax.custom_jvp
    def prod(x, y):
        return x * y

    prod.defjvps(lambda tx, ans, x, y: 10.0 * tx * y, None)
    close(jax.jvp(prod, (X, Y), (np.float32(1), np.float32(1)))[1], 10 * Y)
    close(jax.grad(prod, (0, 1))(X, Y), (10 * Y, 0.0))


def test_nondiff_argnums_pass_functions_and_stop_tracers() -> None:
    @jax.custom_jvp
    def apply(fn, x):
        return fn(x)

    apply = jax.custom_jvp(apply.fun, nondiff_argnums=(0,))
    apply.defjvp(lambda fn, p, t: (fn(p[0]), 3.0 * t[0]))
    close(jax.grad(lambda x: apply(jnp.sin, x))(X), 3.0)
    # A traced value in a nondiff position is not differentiated (stop_gradient).
    close(jax.grad(lambda x: scale(x)(x, x))(X), 10 * X)


def test_nondiff_argnames() -> None:
    s = jax.custom_jvp(lambda x, y: x * y, nondiff_argnames=("y",))
    s.defjvp(lambda y, p, t: (p[0] * y, t[0] * 7.0))
    assert s.nondiff_argnums == (1,)
    close(jax.grad(s)(X, 2.0), 7.0)


def test_keyword_arguments_and_defaults_become_positional() -> None:
    @jax.custom_jvp
    def kw(x, y=2.0):
        return x * y

    kw.defjvp(lambda p, t: (kw(*p), t[0] * p[1] + t[1] * p[0]))
    close(kw(X), 2 * X)
    close(jax.grad(lambda x: kw(x, y=3.0))(X), 3.0)
    assert "a 2.0:f32[]" in str(jax.make_jaxpr(kw)(X))


def test_symbolic_zeros_reach_the_rule() -> None:
    seen = []

    @jax.custom_jvp
    def mul(x, y):
        return x * y

    def mul_jvp(p, t):
        seen.append(tuple(type(v) is SymbolicZero for v in t))
        out = 0.0
        if type(t[0]) is not SymbolicZero:
            out = out + t[0] * p[1]
        if type(t[1]) is not SymbolicZero:
            out = out + p[0] * t[1]
        return mul(*p), out

    mul.defjvp(mul_jvp, symbolic_zeros=True)
    close(jax.grad(mul)(X, Y), Y)
    close(jax.grad(mul, 1)(X, Y), X)
    assert seen == [(False, True), (True, False)]


def test_integer_outputs_have_float0_tangents() -> None:
    @jax.custom_jvp
    def with_count(x, n):
        return x * n, n

    with_count.defjvp(lambda p, t: (with_count(*p),
                                    (t[0] * p[1], np.zeros((), jax.dtypes.float0))))
    close(jax.grad(lambda x: with_count(x, 3)[0])(X), 3.0)
    (_, n_out), (_, n_dot) = jax.jvp(with_count, (X, 3), (Y, np.zeros((), jax.dtypes.float0)))
    assert n_dot.dtype == jax.dtypes.float0


# ---------------------------------------------------------------------------------------------
# custom_vjp.

def test_custom_vjp_values_and_second_order() -> None:
    close(jax.grad(g)(X, Y), np.cos(X) * Y)
    close(jax.grad(g, (0, 1))(X, Y), (np.cos(X) * Y, np.sin(X)))
    # bwd is differentiated by the outer grad.
    close(jax.grad(lambda x: jax.grad(g)(x, Y))(X), -np.sin(X) * Y)
    close(jax.grad(staged(g))(X, Y), np.cos(X) * Y)


def test_custom_vjp_none_cotangent_means_zero_for_a_whole_subtree() -> None:
    @jax.custom_vjp
    def pv(d, s):
        return {"o": d["a"] * s, "p": d["b"]}

    pv.defvjp(lambda d, s: (pv(d, s), (d["a"], s)),
              lambda res, ct: ({"a": ct["o"] * res[1], "b": ct["p"]}, None))
    v3 = np.arange(3, dtype=np.float32) + 1
    d_ct, s_ct = jax.vjp(pv, {"a": v3, "b": X}, X)[1]({"o": v3, "p": Y})
    close(d_ct["a"], v3 * X)
    close(d_ct["b"], Y)
    close(s_ct, 0.0)
    both = mkv(lambda res, ct: (None, ct))
    close(jax.grad(both, (0, 1))(X, Y), (0.0, 1.0))


def test_custom_vjp_integer_inputs_get_float0_cotangents() -> None:
    @jax.custom_vjp
    def times(x, n):
        return x * n

    times.defvjp(lambda x, n: (times(x, n), n), lambda n, ct: (ct * n, None))
    x_ct, n_ct = jax.vjp(times, X, 3)[1](Y)
    close(x_ct, 1.5)
    assert n_ct.dtype == jax.dtypes.float0


def test_custom_vjp_symbolic_zeros() -> None:
    seen = []

    @jax.custom_vjp
    def two(x, y):
        return x * y, x + y

    def two_fwd(x, y):
        assert type(x) is CustomVJPPrimal
        seen.append(("fwd", x.perturbed, y.perturbed))
        return two(x.value, y.value), (x.value, y.value)

    def two_bwd(res, cts):
        seen.append(("bwd",) + tuple(type(c) is SymbolicZero for c in cts))
        a, b = (0.0 if type(c) is SymbolicZero else c for c in cts)
        return (a * res[1] + b, a * res[0] + b)

    two.defvjp(two_fwd, two_bwd, symbolic_zeros=True)
    close(jax.grad(lambda x: two(x, Y)[0])(X), Y)
    close(jax.grad(lambda x: two(x, Y)[1])(X), 1.0)
    assert seen == [("fwd", True, False), ("bwd", False, True),
                    ("fwd", True, False), ("bwd", True, False)]


@pytest.mark.parametrize("run", [
    lambda: jax.jvp(g, (X, Y), (X, Y)),
    lambda: jax.jvp(g, (X, Y), (np.float32(0), np.float32(0))),
    lambda: jax.linearize(g, X, Y)[1](X, Y),
], ids=["jvp", "jvp_of_zeros", "linearize"])
def test_custom_vjp_under_forward_mode_raises(run) -> None:
    with pytest.raises(TypeError, match=r"^can't apply forward-mode autodiff \(jvp\) to a "
                                        r"custom_vjp function\.$"):
        run()


# ---------------------------------------------------------------------------------------------
# Library functions JAX defines with custom_jvp.

def test_relu_derivative_at_zero_is_zero() -> None:
    close([jax.grad(jax.nn.relu)(v) for v in (-1.0, 0.0, 2.0)], [0.0, 0.0, 1.0])
    close([jax.grad(jax.nn.relu6)(v) for v in (0.0, 3.0, 6.0, 7.0)], [0.0, 1.0, 0.0, 0.0])


def test_logaddexp_with_minus_infinity() -> None:
    inf = np.float32(np.inf)
    close(jnp.logaddexp(-inf, 1.0), 1.0)
    close(jax.grad(jnp.logaddexp, (0, 1))(-inf, np.float32(1)), (0.0, 1.0))
    close(jax.grad(jnp.logaddexp2, (0, 1))(-inf, np.float32(1)), (0.0, 1.0))
    # Both -inf: the value is -inf and, as in JAX, the derivatives are NaN.
    assert jnp.logaddexp(-inf, -inf) == -inf
    assert np.isnan(jax.grad(jnp.logaddexp)(-inf, -inf))
    close(jax.grad(lambda x: jnp.logaddexp(x, x))(np.float32(0.3)), 1.0)


def test_sinc_derivatives_at_zero() -> None:
    fun, got = jnp.sinc, []
    for _ in range(4):
        fun = jax.grad(fun)
        got.append(fun(0.0))
    close(got, [0.0, -np.pi ** 2 / 3, 0.0, np.pi ** 4 / 5], tol=1e-5)


def test_xlogy_family_at_zero() -> None:
    close(jss.xlogy(0.0, 0.0), 0.0)
    close(jax.grad(jss.xlogy, (0, 1))(0.0, 2.0), (np.log(2.0), 0.0))
    close(jax.grad(jss.xlog1py, (0, 1))(0.0, 1.0), (np.log(2.0), 0.0))
    x_grad, y_grad = jax.grad(jss.xlogy, (0, 1))(0.0, 0.0)
    assert x_grad == -np.inf and np.isnan(y_grad)
    close(jax.grad(jss.entr)(np.float32(0.5)), -(np.log(0.5) + 1))
    close(jax.grad(jss.logit)(np.float32(0.25)), 1 / (0.25 * 0.75))


@pytest.mark.parametrize("fun,args", [
    (jax.nn.relu, (np.array([-1.5, 0.7, 2.0]),)),
    (jax.nn.relu6, (np.array([-1.5, 0.7, 5.0, 8.0]),)),
    (jnp.logaddexp, (np.array([-1.5, 0.7, 2.0]), np.array([0.3, -2.0, 2.5]))),
    (jnp.logaddexp2, (np.array([-1.5, 0.7]), np.array([0.3, -2.0]))),
    (jnp.sinc, (np.array([0.0, 0.4, -1.3]),)),
    (jss.xlogy, (np.array([0.5, 2.0]), np.array([1.5, 0.3]))),
    (jss.xlog1py, (np.array([0.5, 2.0]), np.array([1.5, 0.3]))),
    (jss.entr, (np.array([0.5, 2.0]),)),
    (jss.logit, (np.array([0.2, 0.7]),)),
    (jss.logsumexp, (np.array([0.2, 0.7, -1.0]),)),
    (f, (np.float64(0.3), np.float64(1.2))),
], ids=["relu", "relu6", "logaddexp", "logaddexp2", "sinc", "xlogy", "xlog1py", "entr",
        "logit", "logsumexp", "custom_f"])
def test_check_grads_second_order(fun, args) -> None:
    jax.config.update("jax_enable_x64", True)
    try:
        test_util.check_grads(fun, args, order=2, modes=("fwd", "rev"))
    finally:
        jax.config.update("jax_enable_x64", False)


# ---------------------------------------------------------------------------------------------
# JAX's errors.

def mk(rule):
    @jax.custom_jvp
    def f(x, y):
        return (jnp.sin(x) * y, x)

    f.defjvp(rule)
    return f


def mkv(bwd, fwd=None):
    @jax.custom_vjp
    def g(x, y):
        return jnp.sin(x) * y

    g.defvjp(fwd or (lambda x, y: (g(x, y), (x, y))), bwd)
    return g


ONES = (np.float32(1), np.float32(1))
ARGS = (np.float32(1), np.float32(2))


@jax.custom_jvp
def nojvp(x):
    return x


@jax.custom_vjp
def novjp(x):
    return x


@jax.custom_jvp
def kwonly(x, *, y):
    return x * y


kwonly.defjvp(lambda p, t: (p[0], t[0]))


@jax.custom_jvp
def kwdefault(x, y=2.0):
    return x * y


kwdefault.defjvp(lambda p, t: (kwdefault(*p), t[0] * p[1]))


def _single(rule):
    @jax.custom_jvp
    def single(x):
        return jnp.sin(x)

    single.defjvp(rule)
    return single


ERRORS = {
    "jvp_not_a_pair": (
        lambda: jax.jvp(mk(lambda p, t: 3), ARGS, ONES), TypeError,
        "Custom JVP rule <lambda> for function f must produce a pair (list or tuple of length "
        "two) representing primal and tangent outputs, but got 3."),
    "jvp_triple": (
        lambda: jax.jvp(mk(lambda p, t: (1, 2, 3)), ARGS, ONES), TypeError,
        "Custom JVP rule <lambda> for function f must produce a pair (list or tuple of length "
        "two) representing primal and tangent outputs, but got (1, 2, 3)."),
    "jvp_tree_mismatch": (
        lambda: jax.jvp(mk(lambda p, t: ((p[0], p[1]), [t[0], t[1]])), ARGS, ONES), TypeError,
        "Custom JVP rule <lambda> for function f must produce primal and tangent outputs with "
        "equal container (pytree) structures, but got PyTreeDef((*, *)) and PyTreeDef([*, *]) "
        "respectively."),
    "jvp_tangent_types": (
        lambda: jax.jvp(mk(lambda p, t: ((p[0], p[1]), (t[0], jnp.zeros(3)))), ARGS, ONES),
        TypeError,
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
        "dtypes, but got:\n  primal float32[] with tangent float32[3], expecting tangent "
        "float32[]"),
    "jvp_tangent_shape": (
        lambda: jax.jvp(_single(lambda p, t: (jnp.sin(p[0]), jnp.zeros(2))), (1.0,), (1.0,)),
        TypeError,
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
        "dtypes. Expected float32[] (tangent type of float32[]) but got float32[2]."),
    "jvp_tangent_dtype": (
        lambda: jax.jvp(_single(lambda p, t: (jnp.sin(p[0]), jnp.zeros((), jnp.int32))),
                        (1.0,), (1.0,)),
        TypeError,
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
        "dtypes. Expected float32[] (tangent type of float32[]) but got int32[]."),
    "jvp_primal_tree_differs_from_fun": (
        lambda: jax.jvp(staged(mk(lambda p, t: ([p[0], p[1]], [t[0], t[1]]))), ARGS, ONES),
        TypeError,
        "Custom JVP rule <lambda> for function f must produce a pair (list or tuple of length "
        "two) where the first element represents the primal output (equal in value to the "
        "output of the custom_jvp-decorated function f, and in particular of the same "
        "container/pytree structure), but instead the JVP rule output's first element had "
        "container/pytree structure:\n    [float32[], float32[]]\nwhile the "
        "custom_jvp-decorated function f had output container/pytree structure:\n"
        "    (float32[], float32[])."),
    "jvp_primal_types_differ_from_fun": (
        lambda: jax.jvp(staged(mk(lambda p, t: ((p[0], jnp.zeros(3)), (t[0], jnp.zeros(3))))),
                        ARGS, ONES),
        TypeError,
        "Custom JVP rule <lambda> for function f must produce a pair (list or tuple of length "
        "two) where the first element represents the primal output (equal in value to the "
        "output of the custom_jvp-decorated function f, and in particular with leaves of the "
        "same shape/dtype), but instead the JVP rule output's first element had shapes/dtypes "
        "of:\n    (float32[], float32[3])\nwhile the custom_jvp-decorated function f had "
        "output shapes/dtypes of:\n    (float32[], float32[])"),
    "no_jvp": (lambda: nojvp(1.0), AttributeError,
               "No JVP defined for custom_jvp function nojvp using defjvp."),
    "no_vjp": (lambda: novjp(1.0), AttributeError,
               "No VJP defined for custom_vjp function novjp using defvjp."),
    "keyword_only": (
        lambda: kwonly(1.0, y=2.0), TypeError,
        "The input arguments to the custom_jvp-decorated function kwonly could not be resolved "
        "to positional-only arguments. Binding failed with the error:\nThe following keyword "
        "arguments could not be resolved to positions: y"),
    "too_many_arguments": (
        lambda: kwdefault(1.0, 2.0, 3.0), TypeError,
        "The input arguments to the custom_jvp-decorated function kwdefault could not be "
        "resolved to positional-only arguments. Binding failed with the error:\ntoo many "
        "positional arguments"),
    "defjvps_with_nondiff": (
        lambda: jax.custom_jvp(lambda x, y: x, nondiff_argnums=(1,)).defjvps(None), TypeError,
        "Can't use ``defjvps`` with ``nondiff_argnums``."),
    "bwd_not_a_tuple": (
        lambda: jax.grad(mkv(lambda r, c: c))(*ARGS), TypeError,
        "Custom VJP bwd rule must produce an output with the same container (pytree) structure "
        "as the args tuple of the primal function, and in particular must produce a tuple of "
        "length equal to the number of arguments to the primal function, but got bwd output "
        "structure PyTreeDef(*) for primal input structure PyTreeDef((*, *))."),
    "bwd_too_short": (
        lambda: jax.grad(mkv(lambda r, c: (c,)))(*ARGS), TypeError,
        "Custom VJP bwd rule must produce an output with the same container (pytree) structure "
        "as the args tuple of the primal function, and in particular must produce a tuple of "
        "length equal to the number of arguments to the primal function, but got bwd output "
        "structure PyTreeDef((*,)) for primal input structure PyTreeDef((*, *))."),
    "bwd_wrong_shape": (
        lambda: jax.grad(mkv(lambda r, c: (jnp.zeros(3), c)))(*ARGS), ValueError,
        "Custom VJP bwd rule must produce an output with the same type as the args tuple of the "
        "primal function, but at output[0] the bwd rule produced an output of type float32[3] "
        "corresponding to an input of type float32[], so the shapes do not match"),
    "fwd_not_a_pair": (
        lambda: jax.grad(mkv(lambda r, c: (c, c), lambda x, y: 3))(*ARGS), TypeError,
        "Custom VJP fwd rule <lambda> for function g must produce a pair (list or tuple of "
        "length two) where the first element represents the primal output (equal to those of "
        "the custom_vjp-decorated function g) and the second element represents residuals "
        "(i.e. values stored from the forward pass for use on the backward pass), but instead "
        "of a pair the fwd rule <lambda> produced 3."),
    "fwd_tree_differs_from_fun": (
        lambda: jax.grad(staged(mkv(lambda r, c: (c, c), lambda x, y: ((x, y), None))))(*ARGS),
        TypeError,
        "Custom VJP fwd rule <lambda> for function g must produce a pair (list or tuple of "
        "length two) where the first element represents the primal output (equal to the output "
        "of the custom_vjp-decorated function g) and the second element represents residuals "
        "(i.e. values stored from the forward pass for use on the backward pass), but instead "
        "the fwd rule output's first element had container/pytree structure:\n"
        "    (float32[], float32[])\nwhile the custom_vjp-decorated function g had output "
        "container/pytree structure:\n    float32[]."),
    "fwd_type_differs_from_fun": (
        lambda: jax.grad(staged(mkv(lambda r, c: (c, c), lambda x, y: (jnp.zeros(2), None))))(
            *ARGS),
        TypeError,
        "Custom VJP fwd rule <lambda> for function g must produce a pair (list or tuple of "
        "length two) where the first element represents the primal output (equal to the output "
        "of the custom_vjp-decorated function g) and the second element represents residuals "
        "(i.e. values stored from the forward pass for use on the backward pass), but instead "
        "the fwd rule output's first element had shapes/dtypes of:\n    float32[2]\nwhile the "
        "custom_vjp-decorated function g had output shapes/dtypes of:\n    float32[]"),
    "nondiff_tracer_in_custom_vjp": (
        lambda: jax.grad(lambda x: _nondiff_vjp()(x, x))(X), jax.errors.UnexpectedTracerError,
        "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position "
        "indicated by nondiff_argnums as non-differentiable. Tracers cannot be passed as "
        "non-differentiable arguments to custom_vjp functions; instead, nondiff_argnums should "
        "only be used for arguments that can't be or contain JAX tracers, e.g. function-valued "
        "arguments. In particular, array-valued arguments should typically not be indicated as "
        "nondiff_argnums.\nSee https://docs.jax.dev/en/latest/errors.html"
        "#jax.errors.UnexpectedTracerError"),
}


def _nondiff_vjp():
    fun = jax.custom_vjp(lambda x, y: x * y, nondiff_argnums=(1,))
    fun.defvjp(lambda x, y: (x * y, None), lambda y, r, c: (c * y,))
    return fun


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_jax(name: str) -> None:
    run, error, message = ERRORS[name]
    with pytest.raises(error) as info:
        run()
    assert str(info.value) == message


def test_bwd_keypath_in_type_error() -> None:
    @jax.custom_vjp
    def pv(d, s):
        return d["a"] * s

    pv.defvjp(lambda d, s: (pv(d, s), s), lambda s, ct: ({"a": ct, "b": jnp.zeros(2)}, None))
    with pytest.raises(ValueError, match=r"at output\[0\]\['b'\] the bwd rule produced an "
                                         r"output of type float32\[2\] corresponding to an "
                                         r"input of type float32\[\], so the shapes do not match"):
        jax.vjp(pv, {"a": X, "b": Y}, X)[1](Y)


def test_nondiff_static_value_in_custom_vjp() -> None:
    fun = _nondiff_vjp()
    close(jax.grad(lambda x: fun(x, 3.0))(X), 3.0)
    assert "custom_vjp_call[" in str(jax.make_jaxpr(lambda x: fun(x, 3.0))(X))
