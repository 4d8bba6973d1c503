"""Batching (vmap) of the reductions, argmax/argmin, the general `reduce`, the cumulative
reductions, sort and top_k (issue #4).

The printed jaxprs of vmapped programs are compared with golden text recorded from real JAX
0.10.2 (the `needs_jax` tests at the end recompute every golden with real JAX); values are
compared with the per-example results stacked, for every batch axis, nested vmaps and
compositions with grad. Each case takes the `jax` and `lax` modules, so the same code runs on
both.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import justjax
from justjax import lax
from justjax._src.core.jaxpr import eval_jaxpr

F32 = np.float32


def _sum_sq(a, b):
    return a + b * b


def golden_cases(jax, lax):
    """`make_jaxpr(fun)(*args)` must print exactly as JAX's."""
    x3 = np.zeros((2, 3, 4), F32)
    x2 = np.zeros((3, 4), F32)

    def reshaping_mul(a, b):
        return lax.reshape(lax.reshape(a, (1,)) * b, ())

    def two_reductions(x, y):
        return lax.reduce((x, y), (F32(0), F32(1)),
                          lambda a, b: (_sum_sq(a[0], b[0]), a[1] * b[1]), (0,))

    return {
        "reduce_sum": (jax.vmap(lambda x: lax.reduce_sum(x, (0, 2)), in_axes=1),
                       (np.zeros((2, 3, 4, 5), F32),)),
        "argmax": (jax.vmap(lambda x: lax.argmax(x, 1, np.int32), in_axes=1), (x3,)),
        "cumsum": (jax.vmap(lambda x: lax.cumsum(x, axis=1, reverse=True), in_axes=1), (x3,)),
        "sort": (jax.vmap(lambda a, b, c: lax.sort((a, b, c), num_keys=2), in_axes=(None, 0, 1)),
                 (x2, x3, np.zeros((3, 2, 4), F32))),
        "top_k": (jax.vmap(lambda x: lax.top_k(x, 2), in_axes=2), (x3,)),
        "reduce": (jax.vmap(two_reductions, in_axes=(1, None)), (x2, np.zeros(3, F32))),
        "grad_reduce": (jax.vmap(jax.grad(lambda x: lax.reduce(x, F32(1), reshaping_mul, (0,)))),
                        (np.zeros((2, 3), F32),)),
    }


GOLDEN_JAXPRS = {
    "reduce_sum": """\
{ lambda ; a:f32[2,3,4,5]. let
    b:f32[3,4] = reduce_sum[axes=(np.int64(0), np.int64(3)) out_sharding=None] a
  in (b,) }""",
    "argmax": """\
{ lambda ; a:f32[2,3,4]. let
    b:i32[2,3] = argmax[axes=(np.int64(2),) index_dtype=int32] a
    c:i32[3,2] = transpose[permutation=(1, 0)] b
  in (c,) }""",
    "cumsum": """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,3,4] = cumsum[axis=2 reverse=True] a
    c:f32[3,2,4] = transpose[permutation=(1, 0, 2)] b
  in (c,) }""",
    "sort": """\
{ lambda ; a:f32[3,4] b:f32[2,3,4] c:f32[3,2,4]. let
    d:f32[2,3,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a
    e:f32[2,3,4] = transpose[permutation=(1, 0, 2)] c
    f:f32[2,3,4] g:f32[2,3,4] h:f32[2,3,4] = sort[
      dimension=2
      is_stable=True
      num_keys=2
    ] d b e
  in (f, g, h) }""",
    "top_k": """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,2,4] c:i32[2,2,4] = top_k[axis=1 k=2] a
    d:f32[4,2,2] = transpose[permutation=(2, 0, 1)] b
    e:i32[4,2,2] = transpose[permutation=(2, 0, 1)] c
  in (d, e) }""",
    "reduce": """\
{ lambda ; a:f32[3,4] b:f32[3]. let
    c:f32[4,3] = transpose[permutation=(1, 0)] a
    d:f32[4,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
    e:f32[4] f:f32[4] = reduce[
      computation=<function golden_cases.<locals>.two_reductions.<locals>.<lambda> at 0xXXXXXXXXXXXX>
      dimensions=(1,)
      jaxpr={ lambda ; g:f32[] h:f32[] i:f32[] j:f32[]. let
          k:f32[] = mul i i
          l:f32[] = add g k
          m:f32[] = mul h j
        in (l, m) }
    ] c d 0.0:f32[] 1.0:f32[]
  in (e, f) }""",
    "grad_reduce": """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,2] = slice[limit_indices=(2, 2) start_indices=(0, 0) strides=(1, 1)] a
    c:f32[2,1] = slice[limit_indices=(2, 3) start_indices=(0, 2) strides=(1, 1)] a
    d:f32[2,2] = pad[padding_config=((0, 0, 0), (0, 1, 0))] c 1.0:f32[]
    e:f32[2,2,1] = reshape[dimensions=None new_sizes=(2, 2, 1) sharding=None] b
    f:f32[2,2,1] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(1))] d
    g:f32[2,2,1] = mul e f
    h:f32[2,2] = reshape[dimensions=None new_sizes=(2, 2) sharding=None] g
    i:f32[2,1] = slice[limit_indices=(2, 1) start_indices=(0, 0) strides=(1, 1)] h
    j:f32[2,1] = slice[limit_indices=(2, 2) start_indices=(0, 1) strides=(1, 1)] h
    k:f32[2,1,1] = reshape[dimensions=None new_sizes=(2, 1, 1) sharding=None] i
    l:f32[2,1,1] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(1))] j
    m:f32[2,1,1] = mul k l
    n:f32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] m
    _:f32[2] = squeeze[dimensions=(1,)] n
    o:f32[1] = broadcast_in_dim 1.0:f32[]
    p:f32[1,1] = reshape[dimensions=None new_sizes=(1, 1) sharding=None] o
    q:f32[1,1,1] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] p
    r:f32[2,1,1] = mul k q
    s:f32[1,1,1] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] p
    t:f32[2,1,1] = mul s l
    u:f32[2] = reduce_sum[axes=(np.int64(1), np.int64(2)) out_sharding=None] r
    v:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] u
    w:f32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] t
    x:f32[2,2] = pad[padding_config=((0, 0, 0), (1, np.int64(0), 0))] v 0.0:f32[]
    y:f32[2,2] = pad[padding_config=((0, 0, 0), (0, np.int64(1), 0))] w 0.0:f32[]
    z:f32[2,2] = add_any x y
    ba:f32[2,2,1] = reshape[dimensions=None new_sizes=(2, 2, 1) sharding=None] z
    bb:f32[2,2,1] = mul e ba
    bc:f32[2,2,1] = mul ba f
    bd:f32[2,2] = reduce_sum[axes=(np.int64(2),) out_sharding=None] bb
    be:f32[2,2] = reshape[dimensions=None new_sizes=(2, 2) sharding=None] bc
    bf:f32[2,1] = pad[
      padding_config=((0, 0, 0), (np.int64(0), np.int64(-1), np.int64(0)))
    ] bd 0.0:f32[]
    bg:f32[2,1] = slice[
      limit_indices=(2, 1)
      start_indices=(0, np.int64(0))
      strides=(1, np.int64(1))
    ] bf
    bh:f32[2,3] = pad[padding_config=((0, 0, 0), (2, np.int64(0), 0))] bg 0.0:f32[]
    bi:f32[2,3] = pad[padding_config=((0, 0, 0), (0, np.int64(1), 0))] be 0.0:f32[]
    bj:f32[2,3] = add_any bh bi
  in (bj,) }""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_JAXPRS))
def test_vmap_jaxpr_matches_jax(name):
    fun, args = golden_cases(justjax, lax)[name]
    assert str(justjax.make_jaxpr(fun)(*args)) == GOLDEN_JAXPRS[name]


# ---------------------------------------------------------------------------------------------
# Values: vmap equals the per-example results stacked, eagerly and staged.

def _example(x, axis, i):
    return x if axis is None else np.take(x, i, axis=axis)


def check_vmap(fun, args, in_axes, size=None):
    """`vmap(fun, in_axes)(*args)`, eager and through `make_jaxpr`, against a loop."""
    if size is None:
        size = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
    per_example = [fun(*[_example(a, d, i) for a, d in zip(args, in_axes, strict=True)])
                   for i in range(size)]
    per_example = [r if isinstance(r, (tuple, list)) else [r] for r in per_example]
    expected = [np.stack([np.asarray(r[k]) for r in per_example])
                for k in range(len(per_example[0]))]
    batched = justjax.vmap(fun, in_axes=in_axes)
    closed = justjax.make_jaxpr(batched)(*args)
    staged = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    for result in (batched(*args), staged):
        result = list(result) if isinstance(result, (tuple, list)) else [result]
        assert len(result) == len(expected)
        for got, want in zip(result, expected, strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


RNG = np.random.default_rng(4)
X3 = RNG.permutation(60).reshape(3, 4, 5).astype(F32) - 30  # distinct values: no ties
I3 = RNG.integers(-4, 5, (3, 4, 5)).astype(np.int32)  # many ties
B3 = RNG.random((3, 4, 5)) < 0.5

MONOIDS = [(lax.reduce_sum, X3), (lax.reduce_prod, X3 / 30), (lax.reduce_max, X3),
           (lax.reduce_min, I3), (lax.reduce_and, B3), (lax.reduce_or, B3),
           (lax.reduce_xor, I3)]


@pytest.mark.parametrize("reducer,x", MONOIDS, ids=[f.__name__ for f, _ in MONOIDS])
@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_monoid_reductions(reducer, x, in_axis):
    for axes in [(), (0,), (1,), (1, 0)]:
        check_vmap(lambda v: reducer(v, axes), (x,), (in_axis,))


@pytest.mark.parametrize("arg", [lax.argmax, lax.argmin])
@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_argminmax(arg, in_axis):
    for axis, index_dtype in itertools.product([0, 1], [np.int32, np.uint8]):
        for x in (X3, I3):
            check_vmap(lambda v: arg(v, axis, index_dtype), (x,), (in_axis,))


@pytest.mark.parametrize("cumulative", [lax.cumsum, lax.cumprod, lax.cummax, lax.cummin,
                                        lax.cumlogsumexp])
@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_cumulative(cumulative, in_axis):
    x = X3 / 30
    for axis, reverse in itertools.product([0, 1], [False, True]):
        check_vmap(lambda v: cumulative(v, axis=axis, reverse=reverse), (x,), (in_axis,))


def test_sort_operands_batched_differently():
    # Keys with ties (I3) so the second key and the stability matter.
    # Batch size 3 everywhere; per-example operands are (4, 5).
    unmapped = I3[0]
    for dimension, num_keys in itertools.product([0, 1], [1, 2, 3]):
        def fun(p, q, r, dimension=dimension, num_keys=num_keys):
            return lax.sort((p, q, r), dimension=dimension, num_keys=num_keys)
        check_vmap(fun, (unmapped, X3, np.moveaxis(I3, 0, 1)), (None, 0, 1))
        check_vmap(fun, (np.moveaxis(I3, 0, 2), unmapped, X3), (2, None, 0))
        check_vmap(fun, (I3, X3, np.moveaxis(I3, 0, 2)), (0, 0, 2))
    check_vmap(lambda v: lax.sort(v, dimension=0, is_stable=False), (X3,), (1,))
    check_vmap(lambda v: lax.sort(v), (X3,), (2,))


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_top_k(in_axis):
    # Batch axis 2 is the last axis of the batched operand, where the per-example search
    # axis (the last) would otherwise be.
    for x, axis in itertools.product((X3, I3), [0, 1, -1]):
        check_vmap(lambda v: lax.top_k(v, 2, axis=axis), (x,), (in_axis,))


def _argmax_pair(x, i):
    def comp(a, b):
        take_a = lax.bitwise_or(lax.gt(a[0], b[0]),
                                lax.bitwise_and(lax.eq(a[0], b[0]), lax.lt(a[1], b[1])))
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])
    return lax.reduce((x, i), (F32(-np.inf), np.int32(0)), comp, (1,))


def test_general_reduce():
    index = np.broadcast_to(np.arange(5, dtype=np.int32), (4, 5))
    check_vmap(_argmax_pair, (X3, index), (0, None))
    check_vmap(_argmax_pair, (np.moveaxis(X3, 0, 2), np.stack([index] * 3, 2)), (2, 2))
    check_vmap(_argmax_pair, (X3[0], np.stack([index] * 3, 1)), (None, 1))
    for dims in [(), (0,), (0, 1)]:
        def sum_sq(x, dims=dims):
            return lax.reduce(x, F32(0), _sum_sq, dims)
        check_vmap(sum_sq, (X3,), (1,))
    reshaping = lambda x: lax.reduce(x, F32(1), lambda a, b: lax.reshape(
        lax.reshape(a, (1,)) * b, ()), (1,))
    check_vmap(reshaping, (X3 / 30,), (2,))


def test_general_reduce_batched_init_is_unsupported_as_in_jax():
    fun = justjax.vmap(lambda x, init: lax.reduce(x, init, _sum_sq, (0,)))
    with pytest.raises(NotImplementedError):
        fun(X3, np.ones(3, F32))


def test_nested_vmaps():
    def fun(x, y):
        s, = lax.sort((x,), dimension=0)
        return (lax.argmax(x, 0, np.int32), lax.cumsum(y, axis=0, reverse=True),
                lax.top_k(x, 2)[0], lax.reduce_max(s * lax.expand_dims(y, (1,)), (0,)))
    # x: (4, 3, 5, 2), mapped along 3 inside and along 2 outside; y: (2, 4) mapped outside.
    inner = justjax.vmap(fun, in_axes=(1, None))
    outer = justjax.vmap(inner, in_axes=(3, 0))
    x = np.moveaxis(X3, 0, 1)[..., None] + np.array([0, 0.5], F32)
    y = I3[:2, :, 0].astype(F32)
    got = outer(x, y)
    for j in range(2):
        for i in range(3):
            want = fun(x[:, i, :, j], y[j])
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(np.asarray(g)[j, i], np.asarray(w))


def test_vmap_of_grad_and_grad_of_vmap():
    x = X3 / 30
    reducer = lambda v: lax.reduce(v, F32(1), lambda a, b: a * b * 1.0, (0,)).sum()
    losses = {
        "reduce": reducer,
        "reduce_max": lambda v: lax.reduce_max(v, (1,)).sum(),
        "cumprod": lambda v: lax.cumprod(v, axis=1, reverse=True).sum(),
        "cumlogsumexp": lambda v: lax.cumlogsumexp(v, axis=0).sum(),
        "sort": lambda v: (lax.sort(v, dimension=0) * np.arange(3, dtype=F32)[:, None]).sum(),
        "top_k": lambda v: (lax.top_k(v, 2)[0] * np.array([1, 3], F32)).sum(),
    }
    for name, loss in losses.items():
        per_example = np.stack([np.asarray(justjax.grad(loss)(x[:, i])) for i in range(4)], 1)
        got = justjax.vmap(justjax.grad(loss), in_axes=1, out_axes=1)(x)
        np.testing.assert_allclose(np.asarray(got), per_example, rtol=1e-5, err_msg=name)
        total = justjax.grad(lambda v: justjax.vmap(loss, in_axes=1)(v).sum())(x)
        np.testing.assert_allclose(np.asarray(total), per_example, rtol=1e-5, err_msg=name)


def test_jacobians():
    v = X3[0, 0] / 30
    for fun in (lambda u: lax.cumsum(u, reverse=True), lambda u: lax.cummax(u),
                lambda u: lax.sort(u), lambda u: lax.top_k(u, 3)[0],
                # An associative reducer that is no monoid primitive: the general reduce.
                lambda u: lax.reduce((u, u), (F32(0), F32(1)),
                                     lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,))):
        forward = np.asarray(justjax.jacfwd(fun)(v))
        reverse = np.asarray(justjax.jacrev(fun)(v))
        eps = 1e-3
        columns = [(np.asarray(fun(v + eps * e)) - np.asarray(fun(v - eps * e))) / (2 * eps)
                   for e in np.eye(5, dtype=F32)]
        numeric = np.stack(columns, -1)
        np.testing.assert_allclose(forward, numeric, rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(reverse, forward, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Directly against real JAX.

@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_JAXPRS))
def test_goldens_are_real_jax(name):
    real_jax = pytest.importorskip("jax")
    fun, args = golden_cases(real_jax, real_jax.lax)[name]
    assert str(real_jax.make_jaxpr(fun)(*args)) == GOLDEN_JAXPRS[name]
