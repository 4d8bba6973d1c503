"""`checkpoint` / `remat`: values, derivatives, policies and the printed `remat2` jaxprs.

The expected jaxpr texts were printed by real JAX 0.10.2 for the same case functions (each
case takes the `jax` and `jnp` modules, so the `needs_jax` test at the end reruns them on
real JAX and checks the golden texts are still what JAX prints).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp_
from justjax import ad_checkpoint
from justjax._src.transformations import checkpoint as checkpoint_module
from justjax._src.interpreters import partial_eval as pe
from justjax.test_util import check_grads
from tests.harness import golden_cases, golden_jaxpr_tests

# --- cases begin (each returns the text of one jaxpr; run on justjax and on real JAX) ---


def case_checkpoint(jax, jnp):
    return jax.make_jaxpr(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x))))(1.)


def case_grad_default_policy(jax, jnp):
    return jax.make_jaxpr(jax.grad(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))))(1.)


def case_grad_nothing_saveable(jax, jnp):
    f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)),
                       policy=jax.checkpoint_policies.nothing_saveable)
    return jax.make_jaxpr(jax.grad(f))(1.)


def case_grad_everything_saveable(jax, jnp):
    f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)),
                       policy=jax.checkpoint_policies.everything_saveable)
    return jax.make_jaxpr(jax.grad(f))(1.)


def case_jvp(jax, jnp):
    f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    return jax.make_jaxpr(lambda x: jax.jvp(f, (x,), (x,)))(1.)


def case_linearize(jax, jnp):
    f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    return jax.make_jaxpr(lambda x: jax.linearize(f, x)[1](x))(1.)


def case_reduce_precision_on_saved_residual(jax, jnp):
    f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x) * x),
                       policy=jax.checkpoint_policies.everything_saveable)
    return jax.make_jaxpr(jax.grad(f))(1.)


def _dense(jnp, w, x):
    return jnp.sum(jnp.tanh(jnp.dot(w, x)) * 2.)


def case_dots_saveable(jax, jnp):
    f = jax.checkpoint(functools.partial(_dense, jnp),
                       policy=jax.checkpoint_policies.dots_saveable)
    return jax.make_jaxpr(jax.grad(f))(jnp.ones((3, 3)), jnp.ones(3))


def case_dots_no_batch_dims_saveable_batched(jax, jnp):
    def f(w, x):
        return jnp.sum(jnp.tanh(jnp.einsum('bij,bj->bi', w, x)))
    g = jax.checkpoint(f, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    return jax.make_jaxpr(jax.grad(g))(jnp.ones((2, 3, 3)), jnp.ones((2, 3)))


def case_nested(jax, jnp):
    inner = jax.checkpoint(lambda x: jnp.sin(jnp.cos(x)))
    outer = jax.checkpoint(lambda x: jnp.sin(inner(x)))
    return jax.make_jaxpr(jax.grad(outer))(1.)


def case_nested_inner_saves_everything(jax, jnp):
    inner = jax.checkpoint(lambda y: jnp.cos(y),
                           policy=jax.checkpoint_policies.everything_saveable)
    outer = jax.checkpoint(lambda x: inner(jnp.sin(x)))
    return jax.make_jaxpr(jax.grad(outer))(1.)


def case_nested_outer_saves_everything(jax, jnp):
    inner = jax.checkpoint(lambda y: jnp.cos(y))
    outer = jax.checkpoint(lambda x: inner(jnp.sin(x)),
                           policy=jax.checkpoint_policies.everything_saveable)
    return jax.make_jaxpr(jax.grad(outer))(1.)


def _named(jax, jnp, x):
    from_module = jax.ad_checkpoint.checkpoint_name
    return jnp.sin(from_module(jnp.sin(x), "a"))


def case_checkpoint_name(jax, jnp):
    return jax.make_jaxpr(functools.partial(_named, jax, jnp))(1.)


def case_save_only_these_names(jax, jnp):
    policy = jax.checkpoint_policies.save_only_these_names("a")
    f = jax.checkpoint(functools.partial(_named, jax, jnp), policy=policy)
    return jax.make_jaxpr(jax.grad(f))(1.)


def _scaled(jnp, d, n):
    return d["a"] * n + jnp.sin(d["b"])


def case_pytree_static_argnums(jax, jnp):
    f = jax.checkpoint(functools.partial(_scaled, jnp), static_argnums=(1,))
    return jax.make_jaxpr(f, static_argnums=1)({"a": 1., "b": 2.}, 3)


def case_pytree_static_argnums_grad(jax, jnp):
    f = jax.checkpoint(functools.partial(_scaled, jnp), static_argnums=(1,))
    return jax.make_jaxpr(jax.grad(f), static_argnums=1)({"a": 1., "b": 2.}, 3)


def case_prevent_cse_false(jax, jnp):
    return jax.make_jaxpr(jax.checkpoint(lambda x: jnp.sin(x), prevent_cse=False))(1.)


def case_prevent_cse_tuple_grad(jax, jnp):
    f = jax.checkpoint(lambda x, y: jnp.sin(x) * y, prevent_cse=(True, False))
    return jax.make_jaxpr(jax.grad(f))(1., 2.)


def case_prevent_cse_prefix_tree(jax, jnp):
    f = jax.checkpoint(lambda d, s: jnp.sin(d['a']) * jnp.cos(d['b']) * s,
                       prevent_cse=({'a': False, 'b': True}, True))
    return jax.make_jaxpr(jax.grad(f))({'a': 1., 'b': 2.}, 3.)


def case_prevent_cse_with_static_argnums(jax, jnp):
    f = jax.checkpoint(lambda n, x, y: jnp.sin(x) * y * n, static_argnums=0,
                       prevent_cse=(False, True))
    return jax.make_jaxpr(jax.grad(f, argnums=1), static_argnums=0)(3., 1., 2.)


def case_integer_argument(jax, jnp):
    f = jax.checkpoint(lambda x, i: jnp.sin(x) * i)
    return jax.make_jaxpr(jax.grad(f))(1., 2)


def case_keyword_argument(jax, jnp):
    f = jax.checkpoint(lambda x, y: x * y)
    return jax.make_jaxpr(lambda x: f(x, y=3.))(1.)


def case_closed_over_tracer(jax, jnp):
    def f(x):
        return jax.checkpoint(lambda y: jnp.sin(y * x))(2.)
    return jax.make_jaxpr(jax.grad(f))(1.)


def case_unused_outputs(jax, jnp):
    def f(x, y):
        a, _, c = jax.checkpoint(lambda x, y: (jnp.sin(x), y * 2., jnp.cos(y)))(x, y)
        return a + c
    return jax.make_jaxpr(jax.grad(f))(1., 2.)


def case_inside_larger_function(jax, jnp):
    def f(x):
        return jnp.cos(jax.checkpoint(lambda x: jnp.sin(x) * x)(x))
    return jax.make_jaxpr(jax.grad(f))(1.)


def case_forwarded_input_constant_and_literal_outputs(jax, jnp):
    c = np.array([1., 2., 3.], np.float32)
    f = jax.checkpoint(lambda x, i: (x, jnp.sin(x) * c, i * 2, 3.))
    return jax.make_jaxpr(f)(jnp.ones(3), 2)


def case_vjp_with_captured_array(jax, jnp):
    c = np.array([1., 2., 3.], np.float32)
    f = jax.checkpoint(lambda x: (x, jnp.sin(x) * c))
    return jax.make_jaxpr(lambda x: jax.vjp(f, x)[1]((jnp.ones(3), jnp.ones(3))))(jnp.ones(3))


def case_no_arguments(jax, jnp):
    return jax.make_jaxpr(jax.grad(lambda x: jax.checkpoint(lambda: jnp.sin(2.))() * x))(1.)


# --- cases end ---

GOLDEN = {
    "checkpoint": """\
{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }""",
    "checkpoint_name": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = name[name=a] b
    d:f32[] = sin c
  in (d,) }""",
    "closed_over_tracer": """\
{ lambda ; a:f32[]. let
    b:f32[] = mul 2.0:f32[] a
    _:f32[] = sin b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[] f:f32[]. let
          g:f32[] = mul e d
          h:f32[] = cos g
          i:f32[] = mul f h
          j:f32[] = mul e i
        in (j,) }
      policy=None
      prevent_cse=True
    ] a 2.0:f32[] 1.0:f32[]
  in (c,) }""",
    "dots_no_batch_dims_saveable_batched": """\
{ lambda ; a:f32[2,3,3] b:f32[2,3]. let
    c:f32[2,3] = dot_general[
      dimension_numbers=(([2], [1]), ([0], [0]))
      preferred_element_type=float32
    ] a b
    d:f32[2,3] = tanh c
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    e:f32[2,3,3] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[2,3,3] g:f32[2,3] h:f32[]. let
          i:f32[2,3] = dot_general[
            dimension_numbers=(([2], [1]), ([0], [0]))
            preferred_element_type=float32
          ] f g
          j:f32[2,3] = tanh i
          k:f32[2,3] = sub 1.0:f32[] j
          l:f32[2,3] = broadcast_in_dim h
          m:f32[2,3] = mul l k
          n:f32[2,3] = mul m j
          o:f32[2,3] = add_any m n
          p:f32[2,3,3] = dot_general[
            dimension_numbers=(([], []), ([0], [0]))
            preferred_element_type=float32
          ] o g
        in (p,) }
      policy=DotsSaveable(only_if_no_batch_dims=True)
      prevent_cse=True
    ] a b 1.0:f32[]
  in (e,) }""",
    "dots_saveable": """\
{ lambda ; a:f32[3,3] b:f32[3]. let
    c:f32[3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    d:f32[3] = reduce_precision[exponent_bits=8 mantissa_bits=23] c
    e:f32[3] = tanh d
    f:f32[3] = mul e 2.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    g:f32[3,3] = remat2[
      differentiated=True
      jaxpr={ lambda ; h:f32[3] i:f32[3] j:f32[]. let
          k:f32[3] = tanh h
          l:f32[3] = sub 1.0:f32[] k
          m:f32[3] = broadcast_in_dim j
          n:f32[3] = mul m 2.0:f32[]
          o:f32[3] = mul n l
          p:f32[3] = mul o k
          q:f32[3] = add_any o p
          r:f32[3,3] = dot_general[
            dimension_numbers=(([], []), ([], []))
            preferred_element_type=float32
          ] q i
        in (r,) }
      policy=DotsSaveable(only_if_no_batch_dims=False)
      prevent_cse=True
    ] d b 1.0:f32[]
  in (g,) }""",
    "forwarded_input_constant_and_literal_outputs": """\
{ lambda a:f32[3]; b:f32[3] c:i32[]. let
    d:f32[3] e:f32[3] f:i32[] g:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; h:f32[3] i:f32[3] j:i32[]. let
          k:f32[3] = sin i
          l:f32[3] = mul k h
          m:i32[] = mul j 2:i32[]
        in (i, l, m, 3.0:f32[]) }
      policy=None
      prevent_cse=True
    ] a b c
  in (d, e, f, g) }""",
    "grad_default_policy": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = sin b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = cos f
          i:f32[] = mul e h
          j:f32[] = mul i g
        in (j,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (c,) }""",
    "grad_everything_saveable": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
    _:f32[] = sin b
    d:f32[] = cos b
    e:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[] g:f32[] h:f32[]. let
          i:f32[] = mul h g
          j:f32[] = mul i f
        in (j,) }
      policy=<function everything_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] c d 1.0:f32[]
  in (e,) }""",
    "grad_nothing_saveable": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = sin b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = cos f
          i:f32[] = mul e h
          j:f32[] = mul i g
        in (j,) }
      policy=<function nothing_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] a 1.0:f32[]
  in (c,) }""",
    "inside_larger_function": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = mul b a
    _:f32[] = cos c
    d:f32[] = sin c
    e:f32[] = neg 1.0:f32[]
    f:f32[] = mul e d
    g:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; h:f32[] i:f32[]. let
          j:f32[] = sin h
          k:f32[] = cos h
          l:f32[] = mul j i
          m:f32[] = mul i h
          n:f32[] = mul m k
          o:f32[] = add_any l n
        in (o,) }
      policy=None
      prevent_cse=True
    ] a f
  in (g,) }""",
    "integer_argument": """\
{ lambda ; a:f32[] b:i32[]. let
    c:f32[] = sin a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=True] b
    _:f32[] = mul c d
    e:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[] g:i32[] h:f32[]. let
          i:f32[] = cos f
          j:f32[] = convert_element_type[new_dtype=float32 weak_type=True] g
          k:f32[] = mul h j
          l:f32[] = mul k i
        in (l,) }
      policy=None
      prevent_cse=True
    ] a b 1.0:f32[]
  in (e,) }""",
    "jvp": """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = mul e g
          i:f32[] = sin f
          j:f32[] = cos f
          k:f32[] = mul h j
        in (i, k) }
      policy=None
      prevent_cse=True
    ] a a
  in (b, c) }""",
    "keyword_argument": """\
{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = mul c d in (e,) }
      policy=None
      prevent_cse=True
    ] a 3.0:f32[]
  in (b,) }""",
    "linearize": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = sin b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = mul e g
          i:f32[] = cos f
          j:f32[] = mul h i
        in (j,) }
      policy=None
      prevent_cse=True
    ] a a
  in (c,) }""",
    "nested": """\
{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = cos c; e:f32[] = sin d in (e,) }
      policy=None
      prevent_cse=True
    ] a
    _:f32[] = sin b
    f:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; g:f32[] h:f32[]. let
          i:f32[] = cos g
          j:f32[] = sin i
          k:f32[] = cos j
          l:f32[] = mul h k
          m:f32[] = remat2[
            differentiated=True
            jaxpr={ lambda ; n:f32[] o:f32[]. let
                p:f32[] = cos n
                q:f32[] = sin n
                r:f32[] = cos p
                s:f32[] = mul o r
                t:f32[] = neg s
                u:f32[] = mul t q
              in (u,) }
            policy=None
            prevent_cse=True
          ] g l
        in (m,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (f,) }""",
    "nested_inner_saves_everything": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = cos c in (d,) }
      policy=<function everything_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] b
    e:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[] g:f32[]. let
          h:f32[] = sin f
          i:f32[] = cos f
          j:f32[] = sin h
          k:f32[] = remat2[
            differentiated=True
            jaxpr={ lambda ; l:f32[] m:f32[]. let
                n:f32[] = neg m
                o:f32[] = mul n l
              in (o,) }
            policy=<function everything_saveable at 0xXXXXXXXXXXXX>
            prevent_cse=True
          ] j g
          p:f32[] = mul k i
        in (p,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (e,) }""",
    "nested_outer_saves_everything": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
    _:f32[] d:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; e:f32[]. let f:f32[] = cos e; g:f32[] = sin e in (f, g) }
      policy=None
      prevent_cse=True
    ] b
    h:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; i:f32[] j:f32[] k:f32[]. let
          l:f32[] = remat2[
            differentiated=True
            jaxpr={ lambda ; m:f32[] n:f32[]. let
                o:f32[] = neg n
                p:f32[] = mul o m
              in (p,) }
            policy=None
            prevent_cse=True
          ] j k
          q:f32[] = mul l i
        in (q,) }
      policy=<function everything_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] c d 1.0:f32[]
  in (h,) }""",
    "no_arguments": """\
{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; . let c:f32[] = sin 2.0:f32[] in (c,) }
      policy=None
      prevent_cse=True
    ] 
    _:f32[] = mul b a
    d:f32[] = mul b 1.0:f32[]
  in (d,) }""",
    "prevent_cse_false": """\
{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      policy=None
      prevent_cse=False
    ] a
  in (b,) }""",
    "prevent_cse_prefix_tree": """\
{ lambda ; a:f32[] b:f32[] c:f32[]. let
    d:f32[] = sin a
    e:f32[] = cos b
    f:f32[] = mul d e
    _:f32[] = mul f c
    g:f32[] h:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; i:f32[] j:f32[] k:f32[] l:f32[]. let
          m:f32[] = sin i
          n:f32[] = cos i
          o:f32[] = cos j
          p:f32[] = sin j
          q:f32[] = mul l k
          r:f32[] = mul m q
          s:f32[] = mul q o
          t:f32[] = neg r
          u:f32[] = mul t p
          v:f32[] = mul s n
        in (v, u) }
      policy=None
      prevent_cse=(False, True, True, True)
    ] a b c 1.0:f32[]
  in (g, h) }""",
    "prevent_cse_tuple_grad": """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    _:f32[] = mul c b
    d:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[]. let
          h:f32[] = cos e
          i:f32[] = mul g f
          j:f32[] = mul i h
        in (j,) }
      policy=None
      prevent_cse=(True, False, True)
    ] a b 1.0:f32[]
  in (d,) }""",
    "prevent_cse_with_static_argnums": """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = mul c b
    _:f32[] = mul d 3.0:f32[]
    e:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[] g:f32[] h:f32[]. let
          i:f32[] = cos f
          j:f32[] = mul h 3.0:f32[]
          k:f32[] = mul j g
          l:f32[] = mul k i
        in (l,) }
      policy=None
      prevent_cse=(False, True, True)
    ] a b 1.0:f32[]
  in (e,) }""",
    "pytree_static_argnums": """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = mul d 3.0:f32[]
          g:f32[] = sin e
          h:f32[] = add f g
        in (h,) }
      policy=None
      prevent_cse=True
    ] a b
  in (c,) }""",
    "pytree_static_argnums_grad": """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = mul a 3.0:f32[]
    d:f32[] = sin b
    _:f32[] = add c d
    e:f32[] f:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; g:f32[] h:f32[]. let
          i:f32[] = cos g
          j:f32[] = mul h i
          k:f32[] = mul h 3.0:f32[]
        in (k, j) }
      policy=None
      prevent_cse=True
    ] b 1.0:f32[]
  in (e, f) }""",
    "reduce_precision_on_saved_residual": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = reduce_precision[exponent_bits=8 mantissa_bits=23] b
    d:f32[] = cos a
    e:f32[] = mul c a
    _:f32[] = sin e
    f:f32[] = cos e
    g:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; h:f32[] i:f32[] j:f32[] k:f32[] l:f32[]. let
          m:f32[] = mul l j
          n:f32[] = mul i m
          o:f32[] = mul m k
          p:f32[] = mul o h
          q:f32[] = add_any n p
        in (q,) }
      policy=<function everything_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] d c f a 1.0:f32[]
  in (g,) }""",
    "save_only_these_names": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = name[name=a] b
    d:f32[] = reduce_precision[exponent_bits=8 mantissa_bits=23] c
    _:f32[] = sin d
    e:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[] g:f32[] h:f32[]. let
          i:f32[] = cos g
          j:f32[] = cos f
          k:f32[] = mul h j
          l:f32[] = mul k i
        in (l,) }
      policy=SaveOnlyTheseNames(saveable_names=frozenset({'a'}))
      prevent_cse=True
    ] d a 1.0:f32[]
  in (e,) }""",
    "unused_outputs": """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    _:f32[] = mul b 2.0:f32[]
    d:f32[] = cos b
    _:f32[] = add c d
    e:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[] g:f32[]. let
          h:f32[] = cos f
          i:f32[] = mul g h
        in (i,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (e,) }""",
    "vjp_with_captured_array": """\
{ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = sin b
    _:f32[3] = mul c a
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = remat2[
      differentiated=True
      jaxpr={ lambda ; g:f32[3] h:f32[3] i:f32[3] j:f32[3]. let
          k:f32[3] = cos h
          l:f32[3] = mul j g
          m:f32[3] = mul l k
          n:f32[3] = add_any i m
        in (n,) }
      policy=None
      prevent_cse=True
    ] a b d e
  in (f,) }""",
}

def _real_jax_modules() -> tuple:
    real_jax = pytest.importorskip("jax")
    import jax.ad_checkpoint  # noqa: F401 -- `jax.ad_checkpoint` is a lazily loaded submodule
    return real_jax, pytest.importorskip("jax.numpy")


CASES = golden_cases(globals())
test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, GOLDEN, (justjax, jnp_), _real_jax_modules)


# ---------------------------------------------------------------------------------------------
# Values and derivatives.

jax = justjax
jnp = jnp_
cp = justjax.checkpoint_policies

POLICIES = {
    "default": None,
    "everything": cp.everything_saveable,
    "nothing": cp.nothing_saveable,
    "dots": cp.dots_saveable,
    "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
    "only_h": cp.save_only_these_names("h"),
    "names_but_h": cp.save_any_names_but_these("h"),
    "anything_but_h": cp.save_anything_except_these_names("h"),
    "dots_or_h": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("h")),
}


@pytest.fixture
def x64():
    justjax.config.update("jax_enable_x64", True)
    yield
    justjax.config.update("jax_enable_x64", False)


def _layer(x, w):
    h = ad_checkpoint.checkpoint_name(jnp.tanh(jnp.dot(w, x)), "h")
    return jnp.sum(jnp.sin(h) * h) + jnp.sum(jnp.dot(w, h) ** 2)


def _layer_args():
    return np.linspace(-1., 1., 3), np.arange(9.).reshape(3, 3) / 10.


# Finite differences for one policy of each kind (the next test compares all policies with
# plain autodiff, which the op records check against finite differences).
@pytest.mark.parametrize("policy", ["default", "everything", "dots", "only_h"])
def test_derivatives_match_finite_differences_to_second_order(policy, x64) -> None:
    f = jax.checkpoint(_layer, policy=POLICIES[policy])
    check_grads(f, _layer_args(), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_derivatives_equal_those_without_checkpoint(policy, x64) -> None:
    f = jax.checkpoint(_layer, policy=POLICIES[policy])
    args = _layer_args()
    np.testing.assert_allclose(f(*args), _layer(*args), rtol=1e-14)
    for got, want in zip(jax.grad(f, argnums=(0, 1))(*args),
                         jax.grad(_layer, argnums=(0, 1))(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(jax.hessian(f)(*args), jax.hessian(_layer)(*args), rtol=1e-12)


def test_values_recorded_from_jax() -> None:
    g = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    value, grad = jax.value_and_grad(g)(2.0)  # the example of JAX's checkpoint docstring
    np.testing.assert_allclose([value, grad], [0.78907233, -0.2556391], rtol=1e-6)
    assert value.dtype == np.float32 and value.weak_type


def test_higher_order_values_recorded_from_jax(x64) -> None:
    g = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    np.testing.assert_allclose(jax.grad(jax.grad(g))(2.0), -0.69523179, rtol=1e-8)
    np.testing.assert_allclose(jax.grad(jax.grad(jax.grad(g)))(2.0), -0.59584764, rtol=1e-8)


def test_pytree_arguments_and_outputs(x64) -> None:
    def f(params, x):
        return {"out": jnp.tanh(params["w"] * x + params["b"]), "aux": (x * 2., x)}

    g = jax.checkpoint(f)
    params = {"w": 0.5, "b": np.array([0.1, -0.2])}
    x = np.array([1.0, 3.0])
    out = g(params, x)
    assert sorted(out) == ["aux", "out"] and isinstance(out["aux"], tuple)
    np.testing.assert_allclose(out["out"], np.tanh(0.5 * x + params["b"]))
    loss = lambda p, x: jnp.sum(g(p, x)["out"] ** 2) + jnp.sum(g(p, x)["aux"][0])
    check_grads(loss, (params, x), order=2, modes=("fwd", "rev"))


def test_static_argnums_allows_python_control_flow(x64) -> None:
    def f(x, flag):
        return jnp.sin(x) if flag else jnp.cos(x)

    g = jax.checkpoint(f, static_argnums=(1,))
    np.testing.assert_allclose(jax.grad(g)(0.5, True), np.cos(0.5))
    np.testing.assert_allclose(jax.grad(g)(0.5, False), -np.sin(0.5))
    g_neg = jax.checkpoint(f, static_argnums=-1)
    np.testing.assert_allclose(jax.grad(g_neg)(0.5, True), np.cos(0.5))


def test_remat_is_checkpoint_and_keeps_the_function_name() -> None:
    def my_function(x):
        return x * 2.

    g = jax.remat(my_function)
    assert g.__name__ == "my_function"
    assert g(3.) == 6.
    assert "remat2" in str(jax.make_jaxpr(g)(1.))


def test_checkpoint_name_is_the_identity() -> None:
    x = np.array([1., 2.], np.float32)
    tree = {"a": x, "b": (x, 3.)}
    named = ad_checkpoint.checkpoint_name(tree, "t")
    np.testing.assert_array_equal(named["a"], x)
    assert named["b"][1] == 3.
    np.testing.assert_allclose(jax.grad(lambda v: ad_checkpoint.checkpoint_name(v, "v") ** 2)(3.),
                               6.)


def test_public_policies_namespace() -> None:
    assert cp.checkpoint_dots is cp.dots_saveable
    assert cp.checkpoint_dots_with_no_batch_dims is cp.dots_with_no_batch_dims_saveable
    assert repr(cp.dots_saveable) == "DotsSaveable(only_if_no_batch_dims=False)"
    assert repr(cp.save_only_these_names("a")) == \
        "SaveOnlyTheseNames(saveable_names=frozenset({'a'}))"
    assert ad_checkpoint.checkpoint_policies is cp


# ---------------------------------------------------------------------------------------------
# What is saved and what is recomputed.

def _top_level_eqns(closed):
    return closed.jaxpr.eqns


def _differentiated_body(closed):
    (eqn,) = [e for e in _top_level_eqns(closed)
              if e.primitive.name == "remat2" and e.params["differentiated"]]
    return eqn.params["jaxpr"]


def _count(jaxpr, name):
    return sum(e.primitive.name == name for e in jaxpr.eqns)


def _sin_sin_grad_jaxpr(policy):
    f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)), policy=policy)
    return jax.make_jaxpr(jax.grad(f))(1.)


def test_nothing_saveable_recomputes_the_forward_pass() -> None:
    closed = _sin_sin_grad_jaxpr(cp.nothing_saveable)
    body = _differentiated_body(closed)
    assert _count(body, "sin") == 1 and _count(body, "cos") == 2
    # Only the primal input crosses from the forward pass to the backward pass.
    remat_eqn = [e for e in closed.jaxpr.eqns if e.primitive.name == "remat2"][0]
    assert remat_eqn.invars[0] is closed.jaxpr.invars[0]
    assert _count(closed.jaxpr, "cos") == 0


def test_everything_saveable_recomputes_nothing() -> None:
    closed = _sin_sin_grad_jaxpr(cp.everything_saveable)
    body = _differentiated_body(closed)
    assert _count(body, "sin") == 0 and _count(body, "cos") == 0
    assert [e.primitive.name for e in body.eqns] == ["mul", "mul"]
    assert _count(closed.jaxpr, "cos") == 2


def test_dots_policies_save_matrix_products_only() -> None:
    def body_for(policy, w_shape=(3, 3), x_shape=(3,)):
        f = jax.checkpoint(functools.partial(_dense, jnp), policy=policy)
        return _differentiated_body(jax.make_jaxpr(jax.grad(f))(jnp.ones(w_shape),
                                                                jnp.ones(x_shape)))

    def forward_dots(body):
        # The forward product contracts w's columns with x; the transposed ones do not.
        return sum(e.primitive.name == "dot_general"
                   and [list(d) for d in e.params["dimension_numbers"][0]] == [[1], [0]]
                   for e in body.eqns)

    assert forward_dots(body_for(cp.nothing_saveable)) == 1
    assert _count(body_for(cp.nothing_saveable), "tanh") == 1
    assert forward_dots(body_for(cp.dots_saveable)) == 0
    assert _count(body_for(cp.dots_saveable), "tanh") == 1
    assert forward_dots(body_for(cp.dots_with_no_batch_dims_saveable)) == 0
    assert _count(body_for(cp.everything_saveable), "tanh") == 0


def test_batched_dot_is_not_saved_by_dots_with_no_batch_dims() -> None:
    def f(w, x):
        return jnp.sum(jnp.tanh(jnp.einsum('bij,bj->bi', w, x)))

    args = jnp.ones((2, 3, 3)), jnp.ones((2, 3))
    saved_by = {}
    for name, policy in [("dots", cp.dots_saveable),
                         ("no_batch", cp.dots_with_no_batch_dims_saveable)]:
        closed = jax.make_jaxpr(jax.grad(jax.checkpoint(f, policy=policy)))(*args)
        saved_by[name] = _count(closed.jaxpr, "reduce_precision")
    assert saved_by == {"dots": 1, "no_batch": 0}


def test_named_values_are_saved_only_when_the_policy_says_so() -> None:
    def f(x):
        return jnp.sin(ad_checkpoint.checkpoint_name(jnp.sin(x), "a"))

    def body(policy):
        return _differentiated_body(jax.make_jaxpr(jax.grad(jax.checkpoint(f, policy=policy)))(1.))

    assert _count(body(cp.save_only_these_names("a")), "sin") == 0
    assert _count(body(cp.save_only_these_names("b")), "sin") == 1
    assert _count(body(cp.save_any_names_but_these("a")), "sin") == 1
    assert _count(body(cp.save_any_names_but_these("b")), "sin") == 0


def test_custom_policy_gets_primitive_avals_and_params() -> None:
    seen = []

    def policy(prim, *avals, **params):
        seen.append((prim.name, tuple(a.shape for a in avals), sorted(params)))
        return prim.name == "sin"

    f = jax.checkpoint(lambda x: jnp.sum(jnp.cos(jnp.sin(x))), policy=policy)
    body = _differentiated_body(jax.make_jaxpr(jax.grad(f))(jnp.ones(2)))
    assert ("sin", ((2,),), ["accuracy"]) in seen
    assert _count(body, "sin") == 0


def test_policy_must_answer_bool() -> None:
    f = jax.checkpoint(lambda x: jnp.sin(x) * 2., policy=lambda *_, **__: "yes")
    with pytest.raises(TypeError, match="Value returned by a remat policy should be a bool"):
        jax.grad(f)(1.)


# ---------------------------------------------------------------------------------------------
# Errors.

def test_static_argnums_errors() -> None:
    f = lambda x, n: x * n
    with pytest.raises(ValueError, match=r"can only take integer values greater than or equal "
                                         r"to `-len\(args\)` and less than `len\(args\)`, but "
                                         r"got \(5,\), while `len\(args\)` = 2"):
        jax.checkpoint(f, static_argnums=(5,))(1., 2.)
    with pytest.raises(TypeError, match=r"must be an int, tuple of ints or, bool, but got "
                                        r"value \[1\]"):
        jax.checkpoint(f, static_argnums=[1])(1., 2.)


def test_prevent_cse_type_error() -> None:
    with pytest.raises(TypeError, match=r"prevent_cse must be a bool or tuple of bools, got "
                                        r"type\(prevent_cse\)=<class 'int'>"):
        jax.checkpoint(lambda x: x, prevent_cse=3)


def test_arguments_and_results_must_be_jax_types() -> None:
    with pytest.raises(TypeError, match="Argument 'a' of type <class 'str'> is not a valid "
                                        "JAX type"):
        jax.checkpoint(lambda x: x)("a")
    with pytest.raises(TypeError, match=r"traced for checkpoint / remat returned a value of "
                                        r"type <class 'str'>, which is not a valid JAX type"):
        jax.checkpoint(lambda x: "b")(1.)
    assert jax.checkpoint(lambda x: None)(1.) is None


def test_concretization_error_suggests_static_argnums() -> None:
    def f(x, n):
        if n > 0:
            return x * n
        return x

    with pytest.raises(justjax.errors.TracerBoolConversionError) as info:
        jax.checkpoint(f)(1., 2.)
    message = str(info.value)
    assert "for checkpoint / remat" in message
    assert "depends on the value of the argument n" in message
    assert message.endswith(
        "Consider using the `static_argnums` parameter for `jax.remat` or `jax.checkpoint`. "
        "See the `jax.checkpoint` docstring and its example involving `static_argnums`:\n"
        "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n")


# ---------------------------------------------------------------------------------------------
# The reusable jaxpr transformations.

def _trace(fun, *avals):
    jaxpr, consts = pe.trace_to_subjaxpr(fun, list(avals))
    assert not consts
    return jaxpr


F32 = justjax._src.core.avals.ShapedArray((), np.float32)


def test_dce_jaxpr_drops_dead_equations_and_inputs() -> None:
    jaxpr = _trace(lambda x, y: [jnp.sin(x), jnp.cos(y) * 2.], F32, F32)
    pruned, used_inputs = pe.dce_jaxpr(jaxpr, [True, False])
    assert used_inputs == [True, False]
    assert [e.primitive.name for e in pruned.eqns] == ["sin"]
    assert len(pruned.invars) == 1 and len(pruned.outvars) == 1
    kept, used_inputs = pe.dce_jaxpr(jaxpr, [True, False], instantiate=True)
    assert used_inputs == [True, True] and len(kept.invars) == 2


def test_dce_prunes_inside_remat() -> None:
    g = jax.checkpoint(lambda x: (jnp.sin(x), jnp.cos(x)))
    jaxpr = _trace(lambda x: list(g(x)), F32)
    pruned, _ = pe.dce_jaxpr(jaxpr, [False, True])
    (eqn,) = pruned.eqns
    assert [e.primitive.name for e in eqn.params["jaxpr"].eqns] == ["cos"]
    assert len(eqn.outvars) == 1


@pytest.mark.parametrize("saveable,known_prims,staged_prims,num_res", [
    (None, ["sin", "cos"], ["mul"], 1),
    (checkpoint_module.nothing_saveable, ["sin", "cos"], ["sin", "cos", "mul"], 0),
])
def test_partial_eval_jaxpr_custom(saveable, known_prims, staged_prims, num_res) -> None:
    jaxpr = _trace(lambda x, t: [jnp.cos(jnp.sin(x)), t * jnp.cos(jnp.sin(x))], F32, F32)
    known, staged, out_unknowns, out_inst, n = pe.partial_eval_jaxpr_custom(
        jaxpr, [False, True], True, False, False, saveable)
    assert out_unknowns == [False, True]
    assert n == num_res
    assert [e.primitive.name for e in known.eqns] == known_prims * 2
    staged, _ = pe.dce_jaxpr(staged, [u for u, i in zip(out_unknowns, out_inst) if i])
    assert [e.primitive.name for e in staged.eqns] == staged_prims


def test_repeated_calls_share_one_body_as_in_jax() -> None:
    # JAX caches the traced body and its derivatives: both calls hold the same jaxpr (which
    # JAX prints once, as `let jaxpr = ... in`).
    g = jax.checkpoint(lambda x: jnp.sin(x))
    for transform in [lambda x: g(g(x)), jax.grad(lambda x: g(g(x))),
                      lambda x: jax.jvp(lambda x: g(g(x)), (x,), (x,))]:
        eqns = [e for e in jax.make_jaxpr(transform)(1.).jaxpr.eqns
                if e.primitive.name == "remat2"]
        assert len(eqns) == 2 and eqns[0].params["jaxpr"] is eqns[1].params["jaxpr"]


def test_cache_never_reuses_tracers_of_a_finished_trace() -> None:
    def body(y, x):
        return jnp.sin(y * x)

    def f(x):
        return jax.checkpoint(functools.partial(body, x=x))(2.)

    for x in (1., 0.5):
        np.testing.assert_allclose(jax.grad(f)(x), 2. * np.cos(2. * x), rtol=1e-6)
    closed_over = jax.checkpoint(lambda y: y * outer[0])
    outer = [None]
    for x in (1., 3.):
        def h(x):
            outer[0] = x
            return closed_over(2.)
        np.testing.assert_allclose(jax.grad(h)(x), 2.)


def test_static_arguments_are_part_of_the_cache_key() -> None:
    g = jax.checkpoint(lambda x, n: x * n, static_argnums=1)
    assert g(1., 2) == 2. and g(1., 3) == 3.
    assert "mul c 3.0:f32[]" in str(jax.make_jaxpr(g, static_argnums=1)(1., 3))
