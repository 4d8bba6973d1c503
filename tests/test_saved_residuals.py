"""`jax.ad_checkpoint.print_saved_residuals` and what it rests on: equations remember the user
line they were written on (also when a checkpoint or jit re-binds them), the residuals of
`vjp` are ordered as JAX's, and values an inner `jit` closes over from an enclosing trace are
arguments of its jaxpr. Expected texts recorded from JAX 0.10.2 (JAX's gradient-checkpointing
and jaxpr tutorials)."""
from __future__ import annotations

import inspect

import numpy as np

import justjax as jax
import justjax.numpy as jnp
from justjax.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals


def _at(fun, code: str) -> str:
    """Where `code` is written in `fun`, as JAX summarizes it: `file:line:column (function)`."""
    lines, first = inspect.getsourcelines(fun)
    for offset, line in enumerate(lines):
        if code in line:
            return f"{__file__}:{first + offset}:{line.index(code)} ({fun.__qualname__})"
    raise AssertionError(code)


def g(W, x):
    y = jnp.dot(W, x)
    return jnp.sin(y)


def f(W1, W2, W3, x):
    x = g(W1, x)
    x = g(W2, x)
    x = g(W3, x)
    return x


ARGS = (jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6)), jnp.ones(4))
ARG_LINES = ["f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
             "f32[7,6] from the argument W3", "f32[4] from the argument x"]


def _printed(fun, *args, capsys) -> list[str]:
    print_saved_residuals(fun, *args)
    return capsys.readouterr().out.splitlines()


def test_residuals_of_plain_function(capsys):
    sin, cos = _at(g, "jnp.sin(y)"), _at(g, "jnp.sin(y)")
    assert _printed(f, *ARGS, capsys=capsys) == ARG_LINES + [
        f"f32[5] output of sin from {sin}", f"f32[5] output of cos from {cos}",
        f"f32[6] output of sin from {sin}", f"f32[6] output of cos from {cos}",
        f"f32[7] output of cos from {cos}"]


def test_checkpoint_keeps_the_line_of_the_recomputed_equations(capsys):
    def f2(W1, W2, W3, x):
        x = jax.checkpoint(g)(W1, x)
        x = jax.checkpoint(g)(W2, x)
        x = jax.checkpoint(g)(W3, x)
        return x

    sin = _at(g, "jnp.sin(y)")
    assert _printed(f2, *ARGS, capsys=capsys) == ARG_LINES + [
        f"f32[5] output of sin from {sin}", f"f32[6] output of sin from {sin}"]
    f3 = jax.checkpoint(f, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    dot = _at(g, "jnp.dot(W, x)")
    assert _printed(f3, *ARGS, capsys=capsys) == ARG_LINES + [
        f"f32[{n}] output of dot_general from {dot}" for n in (5, 6, 7)]


def test_named_residuals(capsys):
    def f4(W1, W2, W3, x):
        x = checkpoint_name(g(W1, x), name="a")
        x = checkpoint_name(g(W2, x), name="b")
        x = checkpoint_name(g(W3, x), name="c")
        return x

    policy = jax.checkpoint_policies.save_only_these_names("a")
    assert _printed(jax.checkpoint(f4, policy=policy), *ARGS, capsys=capsys) == ARG_LINES + [
        f"f32[5] named 'a' from {_at(f4, 'checkpoint_name(g(W1')}"]


def test_pytree_arguments_and_jit(capsys):
    def loss(params, x, y):
        return jnp.sum((jnp.tanh(x @ params) - y) ** 2)

    args = (jnp.ones((3, 2)), jnp.ones((4, 3)), jnp.ones((4, 2)))
    where = _at(loss, "jnp.tanh(x @ params) - y")
    assert _printed(loss, *args, capsys=capsys) == [
        "f32[3,2] from the argument params", "f32[4,3] from the argument x",
        f"f32[4,2] output of tanh from {_at(loss, 'jnp.tanh(')}",
        f"f32[4,2] output of sub from {where}",
        f"f32[4,2] output of mul from {_at(loss, '(jnp.tanh(')}"]
    residuals = saved_residuals(lambda p: jnp.sin(p["w"]).sum(), {"w": jnp.ones(2)})
    assert [(a.shape, why) for a, why in residuals][0][1].startswith("output of cos")
    # JAX names no line for a jit's outputs (its summary is empty); justjax names the call's.
    jitted = _printed(jax.jit(f), *ARGS, capsys=capsys)
    assert [line.split(" from ")[0] for line in jitted[4:]] == [
        "f32[5] output of jitted function 'f'"] * 2 + [
        "f32[6] output of jitted function 'f'"] * 2 + ["f32[7] output of jitted function 'f'"]


def test_residual_arguments_come_first():
    # JAX's print_fwd_bwd: the forward pass returns the primal inputs it saves first.
    def fwd(*args):
        return jax.vjp(f, *args)
    text = str(jax.make_jaxpr(fwd)(*ARGS))
    assert text.endswith("  in (l, a, b, c, d, g, f, j, i, m) }")
    _, pullback = jax.vjp(lambda x: jnp.sin(jnp.sin(x)), 3.0)
    # Scalar residuals computed eagerly are leaves of the pullback too.
    assert [np.shape(r) for r in jax.tree_util.tree_leaves(pullback)] == [(), ()]


FUNC12 = """\
{ lambda ; a:f32[]. let
    b:f32[] = sub a 2.0:f32[]
    c:f32[1] = jit[
      name=inner
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          d:f32[1] = broadcast_in_dim 1.0:f32[]
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
          f:f32[1] = mul e d
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
          c:f32[1] = add g f
        in (c,) }
    ] a b
    h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    i:f32[1] = add h c
  in (i,) }"""


def test_inner_jit_takes_closed_over_tracers_as_arguments():
    def func12(arg):
        @jax.jit
        def inner(x):
            return x + arg * jnp.ones(1)
        return arg + inner(arg - 2.)

    assert str(jax.make_jaxpr(func12)(1.)) == FUNC12
    np.testing.assert_allclose(jax.jit(func12)(1.), [1.0])
    np.testing.assert_allclose(jax.grad(lambda a: func12(a).sum())(1.), 3.0)
    # Concrete values closed over stay constants of the inner jaxpr.
    c = np.arange(3.0, dtype=np.float32)
    text = str(jax.make_jaxpr(lambda a: jax.jit(lambda x: x * c)(a))(jnp.ones(3)))
    assert "jaxpr={ lambda c:f32[3]; a:f32[3]. let b:f32[3] = mul a c in (b,) }" in text


NESTED = """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] c:f32[]. let
          b:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[] c:f32[] d:f32[]. let
                e:f32[] = add d a
                b:f32[] = add e c
              in (b,) }
          ] a c c
        in (b,) }
    ] a a
  in (b,) }"""


def test_nested_closures_become_leading_arguments():
    text = str(jax.make_jaxpr(
        lambda a: jax.jit(lambda x: jax.jit(lambda y: y + a + x)(x))(a))(1.))
    assert text == NESTED


SHARED = """\
let inner = { lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    f:f32[3] = mul e d
    g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    h:f32[3] = add g f
  in (h,) } in
{ lambda ; i:f32[]. let
    j:f32[3] = jit[name=inner jaxpr=inner] i i
    k:f32[] = mul 2.0:f32[] i
    l:f32[3] = jit[name=inner jaxpr=inner] i k
    m:f32[3] = add j l
  in (m,) }"""


def test_calls_closing_over_the_same_tracer_share_one_jaxpr():
    # Within one trace the inner jit's trace is reused (JAX prints it once, as a `let`).
    def func(arg):
        @jax.jit
        def inner(x):
            return x + jnp.sin(arg) * jnp.ones(3)
        return inner(arg) + inner(2 * arg)

    assert str(jax.make_jaxpr(func)(1.)) == SHARED
