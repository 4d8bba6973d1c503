"""vmap of the windowed reductions (reduce_window_sum/max/min, the generic reduce_window,
select_and_gather_add, select_and_scatter_add): pooling patterns batched along any axis,
nested, and composed with autodiff.

The golden jaxpr texts were printed by real JAX 0.10.2 for the same case functions (each
case takes the `jax` module, so the `needs_jax` test reruns them on real JAX and checks the
golden texts are still what JAX prints).
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from tests.harness import golden_cases, golden_jaxpr_tests, stack_per_example

_X = np.arange(2 * 4 * 5, dtype=np.float32).reshape(2, 4, 5) % 7 - 3


def _max_pool(jax, x):
    return jax.lax.reduce_window(x, -np.inf, jax.lax.max, (2, 2), (1, 2), "SAME")


def _prod(jax, x):
    return jax.lax.reduce_window(x, 1., jax.lax.mul, (2, 2), (1, 1), "VALID")


def _avg_pool_nhwc(jax, x):
    """2x2 average pooling of an NHWC image batch."""
    total = jax.lax.reduce_window(x, 0., jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return total / 4.


# --- cases begin (each returns the text of one jaxpr; run on justjax and on real JAX) ---


def case_max_batch_axis_inside(jax):
    return jax.make_jaxpr(jax.vmap(lambda x: _max_pool(jax, x), in_axes=1))(_X)


def case_sum_batch_axis_last(jax):
    f = lambda x: jax.lax.reduce_window(x, 0., jax.lax.add, (2, 2), (1, 1), "VALID")
    return jax.make_jaxpr(jax.vmap(f, in_axes=2))(_X)


def case_min_nested(jax):
    f = lambda x: jax.lax.reduce_window(x, np.inf, jax.lax.min, (2,), (1,), "SAME")
    return jax.make_jaxpr(jax.vmap(jax.vmap(f), in_axes=1))(_X)


def case_generic_moves_axis_to_front(jax):
    return jax.make_jaxpr(jax.vmap(lambda x: _prod(jax, x), in_axes=1))(_X)


def case_variadic_unmapped_operand(jax):
    def f(x, y):
        return jax.lax.reduce_window((x, y), (np.float32(0), np.float32(1)),
                                     lambda a, b: (a[0] + b[0], a[1] * b[1]), (2, 2), (1, 1),
                                     "VALID")
    return jax.make_jaxpr(jax.vmap(f, in_axes=(1, None)))(_X, _X[0])


def case_avg_pool_out_axes(jax):
    x = np.zeros((2, 4, 4, 3, 5), np.float32)
    return jax.make_jaxpr(jax.vmap(lambda x: _avg_pool_nhwc(jax, x), in_axes=4,
                                   out_axes=1))(x)


def case_vmap_grad_max_pool(jax):
    g = jax.grad(lambda x: _max_pool(jax, x).sum())
    return jax.make_jaxpr(jax.vmap(g, in_axes=2))(_X)


def case_grad_vmap_max_pool(jax):
    return jax.make_jaxpr(jax.grad(
        lambda x: jax.vmap(lambda x: _max_pool(jax, x), in_axes=1)(x).sum()))(_X)


def case_vmap_jvp_max_pool(jax):
    f = lambda x: jax.jvp(lambda x: _max_pool(jax, x), (x,), (x * 2,))
    return jax.make_jaxpr(jax.vmap(f))(_X)


# --- cases end ---

GOLDEN = {
    "avg_pool_out_axes": """\
{ lambda ; a:f32[2,4,4,3,5]. let
    b:f32[2,2,2,3,5] = reduce_window_sum[
      base_dilation=(1, 1, 1, 1, 1)
      padding=((0, 0), (0, 0), (0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1, 1, 1)
      window_dimensions=(1, 2, 2, 1, 1)
      window_strides=(1, 2, 2, 1, 1)
    ] a
    c:f32[2,2,2,3,5] = div b 4.0:f32[]
    d:f32[2,5,2,2,3] = transpose[permutation=(0, 4, 1, 2, 3)] c
  in (d,) }""",
    "generic_moves_axis_to_front": """\
{ lambda ; a:f32[2,4,5]. let
    b:f32[4,2,5] = transpose[permutation=(1, 0, 2)] a
    c:f32[4,1,4] = reduce_window[
      base_dilation=(1, 1, 1)
      consts=()
      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = mul d e in (f,) }
      padding=((0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 1, 1)
    ] b 1.0:f32[]
  in (c,) }""",
    "grad_vmap_max_pool": """\
{ lambda ; a:f32[2,4,5]. let
    b:f32[2,4,3] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 1), (0, 0), (0, 1))
      window_dilation=(1, 1, 1)
      window_dimensions=(2, 1, 2)
      window_strides=(1, 1, 2)
    ] a
    c:f32[4,2,3] = transpose[permutation=(1, 0, 2)] b
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
    d:f32[4,2,3] = broadcast_in_dim 1.0:f32[]
    e:f32[2,4,3] = transpose[permutation=(1, 0, 2)] d
    f:f32[2,4,5] = select_and_scatter_add[
      padding=((0, 1), (0, 0), (0, 1))
      select_prim=ge
      window_dimensions=(2, 1, 2)
      window_strides=(1, 1, 2)
    ] e a
  in (f,) }""",
    "max_batch_axis_inside": """\
{ lambda ; a:f32[2,4,5]. let
    b:f32[2,4,3] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 1), (0, 0), (0, 1))
      window_dilation=(1, 1, 1)
      window_dimensions=(2, 1, 2)
      window_strides=(1, 1, 2)
    ] a
    c:f32[4,2,3] = transpose[permutation=(1, 0, 2)] b
  in (c,) }""",
    "min_nested": """\
{ lambda ; a:f32[2,4,5]. let
    b:f32[2,4,5] = reduce_window_min[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 0), (0, 1))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 1, 2)
      window_strides=(1, 1, 1)
    ] a
    c:f32[4,2,5] = transpose[permutation=(1, 0, 2)] b
  in (c,) }""",
    "sum_batch_axis_last": """\
{ lambda ; a:f32[2,4,5]. let
    b:f32[1,3,5] = reduce_window_sum[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1)
      window_dimensions=(2, 2, 1)
      window_strides=(1, 1, 1)
    ] a
    c:f32[5,1,3] = transpose[permutation=(2, 0, 1)] b
  in (c,) }""",
    "variadic_unmapped_operand": """\
{ lambda ; a:f32[2,4,5] b:f32[4,5]. let
    c:f32[4,2,5] = transpose[permutation=(1, 0, 2)] a
    d:f32[4,4,5] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] b
    e:f32[4,1,4] f:f32[4,1,4] = reduce_window[
      base_dilation=(1, 1, 1)
      consts=()
      jaxpr={ lambda ; g:f32[] h:f32[] i:f32[] j:f32[]. let
          k:f32[] = add g i
          l:f32[] = mul h j
        in (k, l) }
      padding=((0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 1, 1)
    ] c d 0.0:f32[] 1.0:f32[]
  in (e, f) }""",
    "vmap_grad_max_pool": """\
{ lambda ; a:f32[2,4,5]. let
    b:f32[2,2,5] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 1), (0, 0), (0, 0))
      window_dilation=(1, 1, 1)
      window_dimensions=(2, 2, 1)
      window_strides=(1, 2, 1)
    ] a
    _:f32[5] = reduce_sum[axes=(np.int64(0), np.int64(1)) out_sharding=None] b
    c:f32[2,2] = broadcast_in_dim 1.0:f32[]
    d:f32[5,2,2] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] c
    e:f32[5,2,4] = transpose[permutation=(2, 0, 1)] a
    f:f32[5,2,4] = select_and_scatter_add[
      padding=((0, 0), (0, 1), (0, 0))
      select_prim=ge
      window_dimensions=(1, 2, 2)
      window_strides=(1, 1, 2)
    ] d e
  in (f,) }""",
    "vmap_jvp_max_pool": """\
{ lambda ; a:f32[2,4,5]. let
    b:f32[2,4,5] = mul a 2.0:f32[]
    c:f32[2,4,3] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 1), (0, 1))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 1, 2)
    ] a
    d:f32[2,4,3] = select_and_gather_add[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 1), (0, 1))
      select_prim=ge
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 1, 2)
    ] b a
  in (c, d) }""",
}

CASES = golden_cases(globals())
test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, GOLDEN, (justjax,), lambda: (pytest.importorskip("jax"),))


# ---------------------------------------------------------------------------------------------
# Values: batched results equal the per-example results stacked.


def _images(seed: int = 0) -> np.ndarray:
    """Four NHWC batches of 2 images, 6x6 pixels, 3 channels (distinct values, so windowed
    maxima are unique and their derivatives well defined)."""
    values = np.random.default_rng(seed).permutation(4 * 2 * 6 * 6 * 3).astype(np.float32)
    return (values / values.size).reshape(4, 2, 6, 6, 3)


def _max_pool_nhwc(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")


def _min_pool_nhwc(x):
    return lax.reduce_window(x, jnp.inf, lax.min, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def _avg_pool_padded(x):
    # The average over the window's real pixels: sums of values over sums of ones.
    window, strides = (1, 3, 3, 1), (1, 2, 2, 1)
    total = lax.reduce_window(x, 0., lax.add, window, strides, "SAME")
    count = lax.reduce_window(jnp.ones_like(x), 0., lax.add, window, strides, "SAME")
    return total / count


def _lp_pool(x):
    # A generic reduction (not add/max/min): a product of shifted values.
    return lax.reduce_window(x + 1., 1., lax.mul, (1, 2, 2, 1), (1, 1, 1, 1), "VALID")


def _dilated_max(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 1, 2, 1),
                             ((0, 0), (1, 1), (0, 1), (0, 0)), base_dilation=(1, 2, 1, 1),
                             window_dilation=(1, 1, 2, 1))


POOLS = {"max": _max_pool_nhwc, "min": _min_pool_nhwc, "avg": _avg_pool_padded,
         "generic": _lp_pool, "dilated_max": _dilated_max}


@pytest.mark.parametrize("axis", [0, 2, 4, -1])
@pytest.mark.parametrize("pool", sorted(POOLS))
def test_pooling_batched_along_any_axis(pool: str, axis: int) -> None:
    x = np.moveaxis(_images(), 0, axis)
    got = justjax.vmap(POOLS[pool], in_axes=axis)(x)
    np.testing.assert_allclose(got, stack_per_example(POOLS[pool], x, in_axes=axis), rtol=1e-6)


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_nested_vmap(pool: str) -> None:
    x = np.stack([_images(1), _images(6)], axis=3)  # [4, 2, 6, 2, 6, 3]
    got = justjax.vmap(justjax.vmap(POOLS[pool], in_axes=2), in_axes=1, out_axes=2)(x)
    want = np.stack([stack_per_example(POOLS[pool], x[:, i], in_axes=2) for i in range(x.shape[1])], 2)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# (Reverse mode of a max with window dilation is not implemented, as in JAX.)
@pytest.mark.parametrize("pool", ["max", "min", "avg"])
def test_vmap_of_grad_and_grad_of_vmap(pool: str) -> None:
    fun = POOLS[pool]
    x = _images(2)
    per_example = justjax.grad(lambda x: (fun(x) ** 2).sum())
    want = stack_per_example(per_example, x, in_axes=2)
    got = justjax.vmap(per_example, in_axes=2)(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    summed = justjax.grad(lambda x: (justjax.vmap(fun, in_axes=2)(x) ** 2).sum())(x)
    np.testing.assert_allclose(np.moveaxis(summed, 2, 0), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("pool", ["max", "avg", "generic"])
def test_jacfwd_and_jvp_under_vmap(pool: str) -> None:
    fun = POOLS[pool]
    x = _images(3)[:, :1, :4, :4, :1]
    tangent = np.cos(x)
    jvp = lambda x, t: justjax.jvp(fun, (x,), (t,))
    got = justjax.vmap(jvp)(x, tangent)
    want = stack_per_example(jvp, x, tangent)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    if pool == "generic":
        return  # its batched jvp batches the primal output too: JAX's jacfwd fails on it
    jac = justjax.jacfwd(fun)(x[0])
    flat = np.asarray(jac).reshape(np.asarray(fun(x[0])).size, x[0].size)
    np.testing.assert_allclose(flat @ tangent[0].reshape(-1),
                               np.asarray(want[1][0]).reshape(-1), rtol=1e-5, atol=1e-7)


def test_jacrev_of_max_pool_is_one_hot() -> None:
    x = _images(4)[0, :1, :4, :4, :1]
    jac = np.asarray(justjax.jacrev(_max_pool_nhwc)(x))
    rows = jac.reshape(-1, x.size)
    assert np.all(rows.sum(axis=1) == 1) and set(np.unique(rows)) == {0., 1.}
    np.testing.assert_array_equal(rows @ x.reshape(-1),
                                  np.asarray(_max_pool_nhwc(x)).reshape(-1))


def test_select_and_scatter_add_with_unmapped_source() -> None:
    from justjax._src.lax import windowed
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    operands = _images(5)[:3, 0, :4, :6, 0]

    def f(s, x):
        return windowed._select_and_scatter_add(s, x, lax.ge_p, (2, 2), (2, 2), ((0, 0),) * 2)

    got = justjax.vmap(f, in_axes=(None, 0))(source, operands)
    want = stack_per_example(f, source, operands, in_axes=(None, 0))
    np.testing.assert_allclose(got, want)


def test_batched_initial_value_is_not_implemented_as_in_jax() -> None:
    f = lambda x, init: lax.reduce_window(x, init, lax.add, (2,), (1,), "VALID")
    with pytest.raises(NotImplementedError,
                       match="reduce_window batching is not implemented for initial values"):
        justjax.vmap(f)(np.ones((2, 5), np.float32), np.zeros(2, np.float32))
    with pytest.raises(NotImplementedError,
                       match="reduce_window batching is not implemented for initial values"):
        justjax.vmap(f, in_axes=(None, 0))(np.ones(5, np.float32), np.zeros(2, np.float32))


def test_values_recorded_from_jax() -> None:
    # jax.vmap(jax.grad(lambda x: (max_pool(x) ** 2).sum()), in_axes=2) on _X, summed over
    # the batch, and the max pool itself with the batch inside, from JAX 0.10.2.
    g = justjax.vmap(justjax.grad(lambda x: (_max_pool(justjax, x) ** 2).sum()), in_axes=2)
    np.testing.assert_array_equal(np.asarray(g(_X)).sum(0),
                                  [[2., 6., 12., 0.], [10., 16., 16., 0.]])
    pooled = justjax.vmap(lambda x: _max_pool(justjax, x), in_axes=1)(_X)
    np.testing.assert_array_equal(pooled[:, :, 1], [[0., -1.], [3., 3.], [3., 2.], [1., 0.]])
