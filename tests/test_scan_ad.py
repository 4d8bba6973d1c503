"""Reverse-mode differentiation of `scan` (the reverse-mode section of `scan.py`): partial
evaluation under linearize, vjp and grad, transposition, and the checkpoint rule.

- The programs JAX recorded that differentiate scans (`grad/scan*`, `realistic/*_grad*`, ...)
  are compared in `test_control_flow_programs.py`.
- `check_grads` (reverse mode, to second order) against finite differences for scans with
  consts, pytree carries, `reverse`, `unroll`, `xs=None`, integer carries mixed with float
  ones, ys only, and a scan inside a scan.
- linearize then transpose (vjp) against the jvp, a linear scan transposed against its
  matrix, and checkpointed bodies and checkpointed scans against plain grad.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.interpreters import ad
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax.control_flow import scan as scan_module
from justjax._src.lax.control_flow.scan import scan_p
from justjax._src.test_util import check_grads

def test_rules_are_registered() -> None:
    """Importing `scan` registers scan's partial eval, transpose and checkpoint rules."""
    assert ad.partial_eval_rules[scan_p] is scan_module._scan_partial_eval
    assert ad.primitive_transposes[scan_p] is scan_module._scan_transpose
    assert pe.partial_eval_jaxpr_custom_rules[scan_p] is scan_module._scan_partial_eval_custom


# ---------------------------------------------------------------------------------------------
# Derivatives against finite differences.

def _consts(w: Any, xs: Any) -> Any:
    def body(c, x):
        return jnp.sin(c * w) * x + 0.5 * c, c * w
    c, ys = lax.scan(body, jnp.float32(0.3), xs)
    return c + jnp.sum(ys * ys)


def _pytree(p: Any, xs: Any) -> Any:
    def body(carry, x):
        a, (b, v) = carry
        a = jnp.tanh(a * p["s"] + x["u"])
        v = v * jnp.cos(b) + x["v"] * p["m"]
        return (a, (b + 0.1 * a, v)), {"y": a * b, "z": v}
    (a, (b, v)), ys = lax.scan(body, (jnp.float32(0.2), (jnp.float32(0.4), jnp.ones(3))), xs)
    return a + b + jnp.sum(v) + jnp.sum(ys["y"]) + jnp.sum(ys["z"] ** 2)


def _reverse(w: Any, xs: Any) -> Any:
    c, ys = lax.scan(lambda c, x: (c * jnp.cos(x * w) + x, c * x), w, xs, reverse=True)
    return c * jnp.sum(ys)


def _unroll(w: Any, xs: Any) -> Any:
    c, ys = lax.scan(lambda c, x: (jnp.sin(c + x) * w, c), jnp.float32(0.5), xs, unroll=2)
    return c + jnp.sum(ys ** 2)


def _unroll_all(w: Any, xs: Any) -> Any:
    c, _ = lax.scan(lambda c, x: (jnp.sin(c + x) * w, None), w, xs, unroll=True)
    return c


def _no_xs(w: Any, c0: Any) -> Any:
    c, ys = lax.scan(lambda c, _: (jnp.sin(c) * w + 0.1, c * c), c0, None, length=4)
    return jnp.sum(c) + jnp.sum(ys)


def _int_carry(w: Any, xs: Any) -> Any:
    def body(carry, x):
        i, c = carry
        c = c * w + x * i.astype(jnp.float32)
        return (i + 1, c), c
    (_, c), ys = lax.scan(body, (jnp.int32(1), jnp.float32(0.5)), xs)
    return c + jnp.sum(jnp.sin(ys))


def _ys_only(w: Any, xs: Any) -> Any:
    _, ys = lax.scan(lambda c, x: (c, jnp.exp(x * w)), None, xs)
    return jnp.sum(ys)


def _nested(w: Any, xs: Any) -> Any:
    def outer(c, x):
        inner_c, inner_ys = lax.scan(lambda d, y: (jnp.sin(d * w + y), d * y), c, x)
        return inner_c + 0.1, jnp.sum(inner_ys)
    c, ys = lax.scan(outer, jnp.float32(0.5), xs)
    return c + jnp.sum(ys)


def _matrix_const(m: Any, xs: Any) -> Any:
    c, ys = lax.scan(lambda h, x: (jnp.tanh(m @ h + x), jnp.sum(h)), jnp.zeros(3), xs)
    return jnp.sum(c) + jnp.sum(ys)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


GRAD_CASES: dict[str, tuple[Callable[..., Any], Callable[[], tuple]]] = {
    "consts": (_consts, lambda: (np.float32(0.7), _rng(0).uniform(-1, 1, 4).astype("f4"))),
    "pytree": (_pytree, lambda: ({"s": np.float32(0.8), "m": np.float32(-0.4)},
                                 {"u": _rng(1).uniform(-1, 1, 3).astype("f4"),
                                  "v": _rng(2).uniform(-1, 1, (3, 3)).astype("f4")})),
    "reverse": (_reverse, lambda: (np.float32(0.6), _rng(3).uniform(-1, 1, 4).astype("f4"))),
    "unroll": (_unroll, lambda: (np.float32(0.9), _rng(4).uniform(-1, 1, 5).astype("f4"))),
    "unroll_all": (_unroll_all, lambda: (np.float32(0.9),
                                         _rng(5).uniform(-1, 1, 3).astype("f4"))),
    "xs_none": (_no_xs, lambda: (np.float32(0.8), _rng(6).uniform(-1, 1, 2).astype("f4"))),
    "int_carry": (_int_carry, lambda: (np.float32(0.7),
                                       _rng(7).uniform(-1, 1, 4).astype("f4"))),
    "ys_only": (_ys_only, lambda: (np.float32(0.3), _rng(8).uniform(-1, 1, 3).astype("f4"))),
    "nested": (_nested, lambda: (np.float32(1.1), _rng(9).uniform(-1, 1, (2, 3)).astype("f4"))),
    "matrix_const": (_matrix_const, lambda: (_rng(10).uniform(-1, 1, (3, 3)).astype("f4"),
                                             _rng(11).uniform(-1, 1, (4, 3)).astype("f4"))),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_check_grads_rev(name: str) -> None:
    """vjp to second order agrees with finite differences."""
    fun, make_args = GRAD_CASES[name]
    check_grads(fun, make_args(), order=2, modes=["rev"])


@pytest.mark.parametrize("name", ["consts", "pytree", "int_carry", "nested"])
def test_check_grads_fwd_rev_first_order(name: str) -> None:
    """jvp and vjp agree with finite differences (forward mode through the scan jvp)."""
    fun, make_args = GRAD_CASES[name]
    check_grads(fun, make_args(), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize("name", ["consts", "reverse", "unroll", "int_carry", "nested"])
def test_jit_of_grad_is_eager_grad(name: str) -> None:
    """The same derivative compiled and eager."""
    fun, make_args = GRAD_CASES[name]
    args = make_args()
    grad = jax.grad(fun, argnums=(0, 1))
    eager = grad(*args)
    compiled = jax.jit(grad)(*args)
    for a, b in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(compiled),
                    strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# linearize, transpose.

def _linearize_program(w: Any, xs: Any) -> Any:
    def g(w, xs):
        def body(c, x):
            return jnp.sin(c * w) * x + c, c * c
        c, ys = lax.scan(body, jnp.float32(0.5), xs)
        return c + ys.sum()
    return jax.linearize(g, w, xs)[1](1.0, jnp.ones(3))


# What JAX 0.10.2 prints for `make_jaxpr(_linearize_program)(float32(1.3), arange(3.))`.
LINEARIZE_JAXPR = """\
let jaxpr = { lambda ; a:f32[] b:f32[] c:f32[] d:f32[] e:f32[] f:f32[] g:f32[] h:f32[]. let
    i:f32[] = mul c a
    j:f32[] = mul e b
    k:f32[] = add_any i j
    l:f32[] = mul k f
    m:f32[] = mul l g
    n:f32[] = mul h d
    o:f32[] = add_any m n
    p:f32[] = add o c
    q:f32[] = mul c e
    r:f32[] = mul e c
    s:f32[] = add_any q r
  in (p, s) } in
{ lambda ; t:f32[] u:f32[3]. let
    v:f32[] w:f32[3] x:f32[3] y:f32[3] z:f32[3] = scan[
      jaxpr={ lambda ; ba:f32[] bb:f32[] bc:f32[]. let
          bd:f32[] = mul bb ba
          be:f32[] = sin bd
          bf:f32[] = cos bd
          bg:f32[] = mul be bc
          bh:f32[] = add bg bb
          bi:f32[] = mul bb bb
        in (bh, bi, bb, bf, be) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] t 0.5:f32[] u
    bj:f32[] = reduce_sum[axes=(0,) out_sharding=None] w
    _:f32[] = add v bj
    bk:f32[3] = broadcast_in_dim 1.0:f32[]
    bl:f32[] bm:f32[3] = scan[
      jaxpr=jaxpr
      length=3
      num_carry=1
      num_consts=2
      reverse=False
      unroll=1
    ] t 1.0:f32[] 0.0:f32[] bk x y u z
    bn:f32[] = reduce_sum[axes=(0,) out_sharding=None] bm
    bo:f32[] = add bl bn
  in (bo,) }"""


def test_linearize_jaxpr_matches_jax() -> None:
    """The known scan returns the residuals stacked (the carry, `cos`, `sin`); the tangent
    scan reads the const `w` directly and the xs from outside."""
    text = str(jax.make_jaxpr(_linearize_program)(np.float32(1.3), np.arange(3.0, dtype="f4")))
    assert text == LINEARIZE_JAXPR


def test_linearize_then_transpose_agree_with_jvp() -> None:
    """linearize's linear map is the jvp; vjp's is its transpose: <ct, J t> = <J^T ct, t>."""
    w, xs = np.float32(0.7), np.linspace(-1, 1, 4).astype("f4")
    t_w, t_xs = np.float32(0.3), np.linspace(0.5, -0.5, 4).astype("f4")
    _, f_lin = jax.linearize(_consts, w, xs)
    _, jvp_out = jax.jvp(_consts, (w, xs), (t_w, t_xs))
    np.testing.assert_allclose(np.asarray(f_lin(t_w, t_xs)), np.asarray(jvp_out), rtol=1e-5)
    _, f_vjp = jax.vjp(_consts, w, xs)
    ct_w, ct_xs = f_vjp(np.float32(1.5))
    lhs = 1.5 * float(jvp_out)
    rhs = float(ct_w) * float(t_w) + float(np.dot(np.asarray(ct_xs), t_xs))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5)


def test_transpose_of_linear_scan_is_matrix_transpose() -> None:
    """A scan linear in its const, carry and xs, transposed: the reverse scan computes the
    transposed matrix, with the const's cotangent summed over the iterations."""
    a = np.float32(0.5)
    rng = _rng(12)
    xs = rng.uniform(-1, 1, 4).astype("f4")

    def linear(v, c0, xs):
        c, ys = lax.scan(lambda c, x: (a * c + x + v, 2.0 * c - v), c0, xs)
        return c, ys

    args = (np.float32(0.2), np.float32(-0.4), xs)
    basis = np.eye(6, dtype="f4")

    def flat(v):
        c, ys = linear(v[0], v[1], v[2:])
        return np.concatenate([[np.asarray(c)], np.asarray(ys)])

    matrix = np.stack([flat(e) for e in basis], axis=1)
    _, f_vjp = jax.vjp(linear, *args)
    ct_c, ct_ys = np.float32(0.7), rng.uniform(-1, 1, 4).astype("f4")
    ct_v, ct_c0, ct_xs = f_vjp((ct_c, ct_ys))
    got = np.concatenate([[np.asarray(ct_v)], [np.asarray(ct_c0)], np.asarray(ct_xs)])
    want = matrix.T @ np.concatenate([[ct_c], ct_ys])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_transposed_scan_runs_the_other_way() -> None:
    """grad of a forward scan stages a `reverse=True` scan, and of a reverse one a forward
    one; the const's cotangent is a carry of the transposed scan."""
    for reverse in (False, True):
        def f(w, xs):
            return lax.scan(lambda c, x: (c * w + x, None), 0.0, xs, reverse=reverse)[0]
        jaxpr = jax.make_jaxpr(jax.grad(f))(np.float32(0.5), np.ones(3, "f4")).jaxpr
        scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
        assert [e.params["reverse"] for e in scans] == [reverse, not reverse]
        assert scans[1].params["num_consts"] == 1 and scans[1].params["num_carry"] == 2


# ---------------------------------------------------------------------------------------------
# checkpoint.

def _scan_fun(w: Any, xs: Any) -> Any:
    def body(c, x):
        return jnp.sin(c * w) * x + c, c * c
    c, ys = lax.scan(body, jnp.float32(0.5), xs)
    return c + ys.sum()


@pytest.mark.parametrize("policy", [None, "everything_saveable", "dots_saveable"])
def test_checkpointed_scan_grad(policy: str | None) -> None:
    """A scan inside `checkpoint` splits by the policy; the derivative is unchanged."""
    w, xs = np.float32(1.3), np.arange(3.0, dtype="f4")
    kwargs = {} if policy is None else {"policy": getattr(jax.checkpoint_policies, policy)}
    want = jax.grad(_scan_fun, argnums=(0, 1))(w, xs)
    got = jax.grad(jax.checkpoint(_scan_fun, **kwargs), argnums=(0, 1))(w, xs)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    check_grads(jax.checkpoint(_scan_fun, **kwargs), (w, xs), order=2, modes=["rev"])


def test_checkpointed_scan_saves_stacked_residuals() -> None:
    """With everything saveable, the known scan returns the residuals stacked along the scan
    axis and the recomputing scan inside the differentiated `remat2` reads them as xs."""
    w, xs = np.float32(1.3), np.arange(3.0, dtype="f4")
    policy = jax.checkpoint_policies.everything_saveable
    jaxpr = jax.make_jaxpr(jax.grad(jax.checkpoint(_scan_fun, policy=policy),
                                  argnums=(0, 1)))(w, xs).jaxpr
    known = jaxpr.eqns[0]
    assert known.primitive.name == "scan"
    assert [str(v.aval.str_short()) for v in known.outvars] == ["f32[]"] + ["f32[3]"] * 4
    remat = next(e for e in jaxpr.eqns if e.primitive.name == "remat2")
    inner = [e for e in remat.params["jaxpr"].eqns if e.primitive.name == "scan"]
    assert [e.params["reverse"] for e in inner] == [False, True]


def test_checkpoint_of_scan_body() -> None:
    """A checkpointed body recomputes inside the transposed scan: only the carry is saved."""
    def g(xs):
        body = jax.checkpoint(lambda c, x: (jnp.sin(c) * x, None))
        return lax.scan(body, jnp.float32(1.0), xs)[0]
    xs = np.linspace(-1, 1, 4).astype("f4")
    check_grads(g, (xs,), order=2, modes=["rev"])
