"""vmap of `checkpoint` (the `remat2` primitive, batched by batching its body) and of
`checkpoint_name`, alone and composed with grad, jvp and the Jacobians.

The golden jaxpr texts were printed by real JAX 0.10.2 for the same case functions (each
case takes the `jax` and `jnp` modules, so the `needs_jax` test reruns them on real JAX and
checks the golden texts are still what JAX prints).
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp_
from justjax import lax
from tests.harness import golden_cases, golden_jaxpr_tests, stack_per_example

_X = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
_W = np.arange(16, dtype=np.float32).reshape(4, 4) / 10


def _sin_sin(jnp, x):
    return jnp.sin(jnp.sin(x)).sum()


def _dense(jnp, x, w):
    return jnp.tanh(x @ w), x


def _named(jax, jnp, x):
    y = jax.ad_checkpoint.checkpoint_name(jnp.sin(x), "y")
    return jnp.cos(y) * y


# --- cases begin (each returns the text of one jaxpr; run on justjax and on real JAX) ---


def case_vmap(jax, jnp):
    f = jax.checkpoint(lambda x: _sin_sin(jnp, x))
    return jax.make_jaxpr(jax.vmap(f))(_X)


def case_vmap_grad(jax, jnp):
    f = jax.checkpoint(lambda x: _sin_sin(jnp, x))
    return jax.make_jaxpr(jax.vmap(jax.grad(f)))(_X)


def case_grad_vmap(jax, jnp):
    f = jax.checkpoint(lambda x: _sin_sin(jnp, x))
    return jax.make_jaxpr(jax.grad(lambda x: jax.vmap(f)(x).sum()))(_X)


def case_vmap_nested(jax, jnp):
    f = jax.checkpoint(lambda x: _sin_sin(jnp, x))
    return jax.make_jaxpr(jax.vmap(jax.vmap(f), in_axes=2))(_X[None])


def case_outputs_batched_first_inside_the_body(jax, jnp):
    f = jax.checkpoint(lambda x, w: _dense(jnp, x, w),
                       policy=jax.checkpoint_policies.dots_saveable)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(1, None)))(_X, _W[:3])


def case_unmapped_output_stays_unmapped(jax, jnp):
    f = jax.checkpoint(lambda x, w: _dense(jnp, x, w))
    return jax.make_jaxpr(jax.vmap(f, in_axes=(None, 0)))(_X[0], np.stack([_W, 2 * _W]))


def case_vmap_grad_dots_saveable(jax, jnp):
    f = jax.checkpoint(lambda x, w: _dense(jnp, x, w)[0].sum(),
                       policy=jax.checkpoint_policies.dots_saveable)
    return jax.make_jaxpr(jax.vmap(jax.grad(f, argnums=1), in_axes=(0, None)))(_X, _W)


def case_checkpoint_name(jax, jnp):
    f = jax.checkpoint(lambda x: _named(jax, jnp, x),
                       policy=jax.checkpoint_policies.save_only_these_names("y"),
                       prevent_cse=False)
    return jax.make_jaxpr(jax.vmap(f, in_axes=1, out_axes=1))(_X)


def case_vmap_grad_save_only_these_names(jax, jnp):
    f = jax.checkpoint(lambda x: _named(jax, jnp, x).sum(),
                       policy=jax.checkpoint_policies.save_only_these_names("y"))
    return jax.make_jaxpr(jax.vmap(jax.grad(f)))(_X)


def case_prevent_cse_tuple(jax, jnp):
    f = jax.checkpoint(lambda x, y: jnp.sin(x) * y, prevent_cse=(True, False))
    return jax.make_jaxpr(jax.vmap(jax.grad(f, argnums=(0, 1)), in_axes=(0, None)))(
        _X[:, 0], 2.0)


def case_name_outside_checkpoint(jax, jnp):
    return jax.make_jaxpr(jax.vmap(lambda x: _named(jax, jnp, x), in_axes=1))(_X)


def case_checkpointed_max_pool(jax, jnp):
    pool = jax.checkpoint(lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2),
                                                          (2, 2), "SAME"))
    return jax.make_jaxpr(jax.vmap(jax.grad(lambda x: pool(x).sum()), in_axes=1))(_X[None])


# --- cases end ---

GOLDEN = {
    "checkpoint_name": """\
{ lambda ; a:f32[3,4]. let
    b:f32[4,3] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[3,4]. let
          d:f32[3,4] = sin c
          e:f32[3,4] = name[name=y] d
          f:f32[3,4] = cos e
          g:f32[3,4] = mul f e
          h:f32[4,3] = transpose[permutation=(1, 0)] g
        in (h,) }
      policy=SaveOnlyTheseNames(saveable_names=frozenset({'y'}))
      prevent_cse=False
    ] a
    i:f32[3,4] = transpose[permutation=(1, 0)] b
  in (i,) }""",
    "checkpointed_max_pool": """\
{ lambda ; a:f32[1,3,4]. let
    b:f32[1,3,2] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 1), (0, 0), (0, 0))
      window_dilation=(1, 1, 1)
      window_dimensions=(2, 1, 2)
      window_strides=(2, 1, 2)
    ] a
    _:f32[3] = reduce_sum[axes=(np.int64(0), np.int64(2)) out_sharding=None] b
    c:f32[1,2] = broadcast_in_dim 1.0:f32[]
    d:f32[3,1,4] = remat2[
      differentiated=True
      jaxpr={ lambda ; e:f32[1,3,4] f:f32[1,2]. let
          g:f32[3,1,2] = broadcast_in_dim[
            broadcast_dimensions=(np.int64(1), np.int64(2))
          ] f
          h:f32[3,1,4] = transpose[permutation=(1, 0, 2)] e
          i:f32[3,1,4] = select_and_scatter_add[
            padding=((0, 0), (0, 1), (0, 0))
            select_prim=ge
            window_dimensions=(1, 2, 2)
            window_strides=(1, 2, 2)
          ] g h
        in (i,) }
      policy=None
      prevent_cse=True
    ] a c
  in (d,) }""",
    "grad_vmap": """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = sin a
    c:f32[3,4] = sin b
    d:f32[3] = reduce_sum[axes=(np.int64(1),) out_sharding=None] c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3,4] = remat2[
      differentiated=True
      jaxpr={ lambda ; g:f32[3,4] h:f32[3]. let
          i:f32[3,4] = sin g
          j:f32[3,4] = cos g
          k:f32[3,4] = cos i
          l:f32[3,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(0),)] h
          m:f32[3,4] = mul l k
          n:f32[3,4] = mul m j
        in (n,) }
      policy=None
      prevent_cse=True
    ] a e
  in (f,) }""",
    "name_outside_checkpoint": """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = sin a
    c:f32[3,4] = name[name=y] b
    d:f32[3,4] = cos c
    e:f32[3,4] = mul d c
    f:f32[4,3] = transpose[permutation=(1, 0)] e
  in (f,) }""",
    "outputs_batched_first_inside_the_body": """\
{ lambda ; a:f32[3,4] b:f32[3,4]. let
    c:f32[4,4] d:f32[4,3] = remat2[
      differentiated=False
      jaxpr={ lambda ; e:f32[3,4] f:f32[3,4]. let
          g:f32[4,4] = dot_general[
            dimension_numbers=(([0], [0]), ([], []))
            preferred_element_type=float32
          ] e f
          h:f32[4,4] = tanh g
          i:f32[4,3] = transpose[permutation=(1, 0)] e
        in (h, i) }
      policy=DotsSaveable(only_if_no_batch_dims=False)
      prevent_cse=True
    ] a b
  in (c, d) }""",
    "prevent_cse_tuple": """\
{ lambda ; a:f32[3] b:f32[]. let
    c:f32[3] = sin a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    _:f32[3] = mul c d
    e:f32[3] f:f32[3] = remat2[
      differentiated=True
      jaxpr={ lambda ; g:f32[3] h:f32[] i:f32[]. let
          j:f32[3] = sin g
          k:f32[3] = cos g
          l:f32[] = convert_element_type[new_dtype=float32 weak_type=False] h
          m:f32[3] = mul j i
          n:f32[] = mul i l
          o:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] m
          p:f32[3] = mul n k
        in (p, o) }
      policy=None
      prevent_cse=(True, False, True)
    ] a b 1.0:f32[]
  in (e, f) }""",
    "unmapped_output_stays_unmapped": """\
{ lambda ; a:f32[4] b:f32[2,4,4]. let
    c:f32[2,4] d:f32[4] = remat2[
      differentiated=False
      jaxpr={ lambda ; e:f32[4] f:f32[2,4,4]. let
          g:f32[2,4] = dot_general[
            dimension_numbers=(([0], [1]), ([], []))
            preferred_element_type=float32
          ] e f
          h:f32[2,4] = tanh g
        in (h, e) }
      policy=None
      prevent_cse=True
    ] a b
    i:f32[2,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] d
  in (c, i) }""",
    "vmap": """\
{ lambda ; a:f32[3,4]. let
    b:f32[3] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[3,4]. let
          d:f32[3,4] = sin c
          e:f32[3,4] = sin d
          f:f32[3] = reduce_sum[axes=(np.int64(1),) out_sharding=None] e
        in (f,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }""",
    "vmap_grad": """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = sin a
    c:f32[3,4] = sin b
    _:f32[3] = reduce_sum[axes=(np.int64(1),) out_sharding=None] c
    d:f32[3,4] = remat2[
      differentiated=True
      jaxpr={ lambda ; e:f32[3,4] f:f32[]. let
          g:f32[3,4] = sin e
          h:f32[3,4] = cos e
          i:f32[3,4] = cos g
          j:f32[4] = broadcast_in_dim f
          k:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] j
          l:f32[3,4] = mul k i
          m:f32[3,4] = mul l h
        in (m,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (d,) }""",
    "vmap_grad_dots_saveable": """\
{ lambda ; a:f32[3,4] b:f32[4,4]. let
    c:f32[3,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    d:f32[3,4] = reduce_precision[exponent_bits=8 mantissa_bits=23] c
    e:f32[3,4] = tanh d
    _:f32[3] = reduce_sum[axes=(np.int64(1),) out_sharding=None] e
    f:f32[3,4,4] = remat2[
      differentiated=True
      jaxpr={ lambda ; g:f32[3,4] h:f32[3,4] i:f32[]. let
          j:f32[3,4] = tanh g
          k:f32[3,4] = sub 1.0:f32[] j
          l:f32[4] = broadcast_in_dim i
          m:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] l
          n:f32[3,4] = mul m k
          o:f32[3,4] = mul n j
          p:f32[3,4] = add_any n o
          q:f32[3,4,4] = dot_general[
            dimension_numbers=(([], []), ([0], [0]))
            preferred_element_type=float32
          ] p h
          r:f32[3,4,4] = transpose[permutation=(0, 2, 1)] q
        in (r,) }
      policy=DotsSaveable(only_if_no_batch_dims=False)
      prevent_cse=True
    ] d a 1.0:f32[]
  in (f,) }""",
    "vmap_grad_save_only_these_names": """\
let jaxpr = { lambda ; a:f32[3,4] b:f32[3,4] c:f32[]. let
    d:f32[3,4] = cos b
    e:f32[3,4] = cos a
    f:f32[3,4] = sin a
    g:f32[4] = broadcast_in_dim c
    h:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] g
    i:f32[3,4] = mul e h
    j:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] g
    k:f32[3,4] = mul j a
    l:f32[3,4] = neg k
    m:f32[3,4] = mul l f
    n:f32[3,4] = add_any i m
    o:f32[3,4] = mul n d
  in (o,) } in
{ lambda ; p:f32[3,4]. let
    q:f32[3,4] = sin p
    r:f32[3,4] = name[name=y] q
    s:f32[3,4] = reduce_precision[exponent_bits=8 mantissa_bits=23] r
    t:f32[3,4] = cos s
    u:f32[3,4] = mul t s
    _:f32[3] = reduce_sum[axes=(np.int64(1),) out_sharding=None] u
    v:f32[3,4] = remat2[
      differentiated=True
      jaxpr=jaxpr
      policy=SaveOnlyTheseNames(saveable_names=frozenset({'y'}))
      prevent_cse=True
    ] s p 1.0:f32[]
  in (v,) }""",
    "vmap_nested": """\
{ lambda ; a:f32[1,3,4]. let
    b:f32[4,1] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[1,3,4]. let
          d:f32[1,3,4] = sin c
          e:f32[1,3,4] = sin d
          f:f32[1,4] = reduce_sum[axes=(np.int64(1),) out_sharding=None] e
          g:f32[4,1] = transpose[permutation=(1, 0)] f
        in (g,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }""",
}

def _real_jax_modules() -> tuple:
    real_jax = pytest.importorskip("jax")
    import jax.ad_checkpoint  # noqa: F401 -- `jax.ad_checkpoint` is a lazily loaded submodule
    return real_jax, pytest.importorskip("jax.numpy")


CASES = golden_cases(globals())
test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, GOLDEN, (justjax, jnp_), _real_jax_modules)


# ---------------------------------------------------------------------------------------------
# Values: batched results equal the per-example results stacked, under every policy.

jax = justjax
jnp = jnp_
cp = justjax.checkpoint_policies

POLICIES = {
    "default": None,
    "everything": cp.everything_saveable,
    "dots": cp.dots_saveable,
    "only_h": cp.save_only_these_names("h"),
    "names_but_h": cp.save_any_names_but_these("h"),
}



def _layer(x, w):
    h = jax.ad_checkpoint.checkpoint_name(jnp.tanh(jnp.dot(w, x)), "h")
    return jnp.sum(jnp.sin(h) * h) + jnp.sum(jnp.dot(w, h) ** 2)


def _batch(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (5, 3)).astype(np.float32),
            rng.uniform(-.5, .5, (3, 3)).astype(np.float32))


def _close(got, want) -> None:
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("in_axes", [(0, None), (1, None), (None, 0), (0, 0)])
def test_vmap_of_checkpoint_and_of_its_gradient(policy: str, in_axes: tuple) -> None:
    f = jax.checkpoint(_layer, policy=POLICIES[policy])
    xs, w = _batch()
    ws = np.stack([w * (1 + i / 10) for i in range(5)])
    args = [xs if in_axes[0] == 0 else xs.T if in_axes[0] == 1 else xs[0],
            ws if in_axes[1] == 0 else w]
    _close(jax.vmap(f, in_axes=in_axes)(*args), stack_per_example(_layer, *args, in_axes=in_axes))
    grad = jax.grad(f, argnums=(0, 1))
    _close(jax.vmap(grad, in_axes=in_axes)(*args),
           stack_per_example(jax.grad(_layer, argnums=(0, 1)), *args, in_axes=in_axes))


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_grad_of_vmap_of_checkpoint(policy: str) -> None:
    f = jax.checkpoint(_layer, policy=POLICIES[policy])
    xs, w = _batch(1)
    got = jax.grad(lambda xs, w: jax.vmap(f, in_axes=(0, None))(xs, w).sum(),
                   argnums=(0, 1))(xs, w)
    want = jax.grad(lambda xs, w: jax.vmap(_layer, in_axes=(0, None))(xs, w).sum(),
                    argnums=(0, 1))(xs, w)
    _close(got, want)
    per_example = stack_per_example(jax.grad(_layer, argnums=(0, 1)), xs, w, in_axes=(0, None))
    _close(got, (per_example[0], per_example[1].sum(0)))


def test_nested_vmap_and_jacobians() -> None:
    f = jax.checkpoint(_layer, policy=cp.dots_saveable)
    xs, w = _batch(2)
    xss = np.stack([xs, -xs], axis=2)  # [5, 3, 2]
    got = jax.vmap(jax.vmap(f, in_axes=(1, None)), in_axes=(0, None))(xss, w)
    _close(got, stack_per_example(lambda x: stack_per_example(_layer, x, w, in_axes=(1, None)), xss))
    g = lambda x: jax.grad(f)(x, w)
    _close(jax.jacfwd(g)(xs[0]), jax.hessian(_layer)(xs[0], w))
    _close(jax.jacrev(g)(xs[0]), jax.hessian(_layer)(xs[0], w))
    _close(jax.vmap(jax.hessian(f), in_axes=(0, None))(xs, w),
           stack_per_example(jax.hessian(_layer), xs, w, in_axes=(0, None)))


def test_jvp_under_vmap() -> None:
    f = jax.checkpoint(_layer)
    xs, w = _batch(3)
    jvp = lambda x, t: jax.jvp(lambda x: f(x, w), (x,), (t,))
    _close(jax.vmap(jvp)(xs, np.cos(xs)), stack_per_example(jvp, xs, np.cos(xs)))


def test_static_argnums_and_pytrees_under_vmap() -> None:
    def f(params, x, square):
        y = params["w"] * x + params["b"]
        return {"y": y ** 2 if square else y, "x": x}

    g = jax.checkpoint(f, static_argnums=(2,))
    params = {"w": np.float32(0.5), "b": np.arange(3, dtype=np.float32)}
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = jax.vmap(lambda x: g(params, x, True))(xs)
    _close(got, stack_per_example(lambda x: f(params, x, True), xs))
    grads = jax.vmap(jax.grad(lambda p, x: g(p, x, True)["y"].sum()), in_axes=(None, 0))(
        params, xs)
    _close(grads, stack_per_example(jax.grad(lambda p, x: f(p, x, True)["y"].sum()), params, xs,
                        in_axes=(None, 0)))


def test_checkpoint_name_under_vmap_is_the_identity() -> None:
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    name = jax.ad_checkpoint.checkpoint_name
    np.testing.assert_array_equal(jax.vmap(lambda x: name(x, "a"), in_axes=1)(xs), xs.T)
    jaxpr = jax.make_jaxpr(jax.vmap(lambda x: name(x, "a"), in_axes=1, out_axes=1))(xs)
    assert str(jaxpr) == ("{ lambda ; a:f32[2,3]. let b:f32[2,3] = name[name=a] a in (b,) }")


def test_checkpointed_pooling_layer() -> None:
    # A convolution-free CNN-ish block: checkpointed max pool then mean, batched over images.
    def block(x):
        pooled = lax.reduce_window(jnp.tanh(x), -jnp.inf, lax.max, (2, 2, 1), (2, 2, 1),
                                   "SAME")
        return (pooled ** 2).mean()

    images = (np.random.default_rng(4).permutation(4 * 6 * 6 * 2).astype(np.float32)
              / 100).reshape(4, 6, 6, 2)
    f = jax.checkpoint(block)
    _close(jax.vmap(f)(images), stack_per_example(block, images))
    _close(jax.vmap(jax.grad(f))(images), stack_per_example(jax.grad(block), images))
    _close(jax.grad(lambda x: jax.vmap(f)(x).sum())(images), stack_per_example(jax.grad(block), images))


def test_values_recorded_from_jax() -> None:
    # From JAX 0.10.2: jax.vmap(jax.grad(jax.checkpoint(f, policy=dots_saveable), argnums=1),
    # in_axes=(0, None))(_X, _W)[2], f = sum(tanh(x @ w)).
    f = jax.checkpoint(lambda x, w: _dense(jnp, x, w)[0].sum(), policy=cp.dots_saveable)
    got = jax.vmap(jax.grad(f, argnums=1), in_axes=(0, None))(_X, _W)
    np.testing.assert_allclose(got[2], [
        [0.02212979, 0.01042637, 0.00489314, 0.00229213],
        [0.02489601, 0.01172967, 0.00550478, 0.00257865],
        [0.02766224, 0.01303297, 0.00611643, 0.00286517],
        [0.03042846, 0.01433626, 0.00672807, 0.00315168]], rtol=2e-5)
    g = jax.checkpoint(lambda x: _sin_sin(jnp, x))
    np.testing.assert_allclose(jax.vmap(jax.grad(g))(_X)[2],
                               [0.5250009, 0.44045407, 0.36003947, 0.28507304], rtol=1e-6)
