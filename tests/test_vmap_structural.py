"""vmap of the structural primitives (broadcast_in_dim, reshape, squeeze, transpose,
select_n, clamp, concatenate, copy, stop_gradient, convert_element_type,
bitcast_convert_type, tile, stack, split, unstack) and of elementwise primitives whose
operands differ in rank: batched along any axis, mixed with unmapped operands, nested, and
composed with autodiff.

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


def _z(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def _bools(*shape):
    return np.zeros(shape, np.bool_)


def _small(jax, x, y):
    """One of each structural op; x: (3, 4), y: (4,)."""
    lax_ = jax.lax
    a = lax_.broadcast_in_dim(y, (3, 4), (1,))
    b = lax_.transpose(lax_.reshape(x * a, (4, 3), (1, 0)), (1, 0))
    c = lax_.select(b > 0, b, lax_.clamp(-1., b, 1.))
    d = lax_.concatenate([c, lax_.squeeze(lax_.reshape(y, (1, 4)), (0,))[None]], 0)
    first, second = lax_.split(d, (2, 2), 0)
    return lax_.tile(first, (1, 2)).sum() + lax_.stop_gradient(second).sum()


# --- cases begin (each returns the text of one jaxpr; run on justjax and on real JAX) ---


def case_broadcast_in_dim_axis_inside(jax):
    f = lambda x: jax.lax.broadcast_in_dim(x, (2, 3, 4), (0, 2))
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 4))


def case_broadcast_in_dim_scalar(jax):
    f = lambda x: jax.lax.broadcast_in_dim(x, (3,), ())
    return jax.make_jaxpr(jax.vmap(f))(_z(5))


def case_reshape_dimensions(jax):
    f = lambda x: jax.lax.reshape(x, (6,), (1, 0))
    return jax.make_jaxpr(jax.vmap(f, in_axes=2))(_z(2, 3, 5))


def case_squeeze_axis_inside(jax):
    f = lambda x: jax.lax.squeeze(x, (1,))
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 1))


def case_transpose_axis_inside(jax):
    f = lambda x: jax.lax.transpose(x, (1, 0))
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 3))


def case_select_unmapped_scalar_predicate(jax):
    f = lambda p, a, b: jax.lax.select(p, a, b)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(None, 0, 1)))(np.bool_(True), _z(5, 3),
                                                           _z(3, 5))


def case_select_unmapped_predicate_cases_alike(jax):
    f = lambda p, a, b: jax.lax.select(p, a, b)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(None, 1, 1)))(np.bool_(True), _z(3, 5),
                                                           _z(3, 5))


def case_select_batched_scalar_predicate(jax):
    f = lambda p, a, b: jax.lax.select(p, a, b)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(0, None, None)))(_bools(5), _z(3), _z(3))


def case_select_predicate_and_cases_alike(jax):
    f = lambda p, a, b: jax.lax.select(p, a, b)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(0, 0, 0)))(_bools(5), _z(5, 3), _z(5, 3))


def case_select_scalar_cases(jax):
    f = lambda p, a, b: jax.lax.select(p, a, b)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(0, None, None)))(_bools(5), _z(), _z())


def case_select_n_int_mixed(jax):
    f = lambda p, a, b, c: jax.lax.select_n(p, a, b, c)
    args = (np.zeros((5, 3), np.int32), _z(5, 3), _z(3), _z(3, 5))
    return jax.make_jaxpr(jax.vmap(f, in_axes=(0, 0, None, 1)))(*args)


def case_clamp_scalar_bounds(jax):
    f = lambda lo, x, hi: jax.lax.clamp(lo, x, hi)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(None, 1, None)))(_z(), _z(3, 5), _z())


def case_clamp_batched_scalar_bounds(jax):
    f = lambda lo, x, hi: jax.lax.clamp(lo, x, hi)
    return jax.make_jaxpr(jax.vmap(f))(_z(5), _z(5, 3), _z(5))


def case_clamp_mixed(jax):
    f = lambda lo, x, hi: jax.lax.clamp(lo, x, hi)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(0, 1, None)))(_z(5), _z(3, 5), _z())


def case_concatenate_unmapped_operand(jax):
    f = lambda a, b: jax.lax.concatenate([a, b], 0)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(1, None)))(_z(3, 5), _z(2))


def case_concatenate_different_axes(jax):
    f = lambda a, b: jax.lax.concatenate([a, b], 1)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(0, 2)))(_z(5, 2, 3), _z(2, 4, 5))


def case_convert_and_stop_gradient(jax):
    f = lambda x: jax.lax.convert_element_type(jax.lax.stop_gradient(x), np.int32)
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(3, 5))


def case_bitcast_narrowing(jax):
    f = lambda x: jax.lax.bitcast_convert_type(x, np.uint8)
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(3, 5))


def case_bitcast_widening(jax):
    f = lambda x: jax.lax.bitcast_convert_type(x, np.float32)
    return jax.make_jaxpr(jax.vmap(f))(_z(5, 3, 4, dtype=np.uint8))


def case_tile(jax):
    f = lambda x: jax.lax.tile(x, (2, 3))
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 3))


def case_stack_alike(jax):
    f = lambda a, b: jax.numpy.stack([a, b], axis=0)
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 3), _z(2, 5, 3))


def case_stack_unmapped_operand(jax):
    f = lambda a, b: jax.numpy.stack([a, b], axis=1)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(1, None)))(_z(2, 5, 3), _z(2, 3))


def case_split(jax):
    f = lambda x: jax.lax.split(x, (1, 2), 1)
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 3))


def case_unstack_axis_before_batch(jax):
    f = lambda x: jax.numpy.unstack(x, axis=0)
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 3))


def case_unstack_axis_after_batch(jax):
    f = lambda x: jax.numpy.unstack(x, axis=1)
    return jax.make_jaxpr(jax.vmap(f, in_axes=1))(_z(2, 5, 3))


def case_add_batched_scalar_and_matrix(jax):
    return jax.make_jaxpr(jax.vmap(jax.lax.add, in_axes=(0, 1)))(_z(5), _z(2, 5, 3))


def case_pow_unmapped_base_batched_exponent(jax):
    return jax.make_jaxpr(jax.vmap(jax.lax.pow, in_axes=(None, 0)))(
        _z(2, 3), np.zeros(5, np.int32))


def case_nested_small(jax):
    f = jax.vmap(jax.vmap(lambda x, y: _small(jax, x, y), in_axes=(0, None)),
                 in_axes=(None, 1))
    return jax.make_jaxpr(f)(_z(2, 3, 4), _z(4, 5))


def case_vmap_grad_small(jax):
    f = jax.vmap(jax.grad(lambda x, y: _small(jax, x, y), argnums=(0, 1)), in_axes=(2, 0))
    return jax.make_jaxpr(f)(_z(3, 4, 5), _z(5, 4))


def case_grad_vmap_small(jax):
    def f(x, y):
        return jax.vmap(lambda x, y: _small(jax, x, y), in_axes=(0, 1))(x, y).sum()
    return jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(_z(5, 3, 4), _z(4, 5))


# --- cases end ---

GOLDEN = {
    "add_batched_scalar_and_matrix": """\
{ lambda ; a:f32[5] b:f32[2,5,3]. let
    c:f32[5,2,3] = transpose[permutation=(1, 0, 2)] b
    d:f32[5,1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    e:f32[5,2,3] = add d c
  in (e,) }""",
    "bitcast_narrowing": """\
{ lambda ; a:f32[3,5]. let
    b:u8[3,5,4] = bitcast_convert_type[new_dtype=uint8] a
    c:u8[5,3,4] = transpose[permutation=(1, 0, 2)] b
  in (c,) }""",
    "bitcast_widening": """\
{ lambda ; a:u8[5,3,4]. let
    b:f32[5,3] = bitcast_convert_type[new_dtype=float32] a
  in (b,) }""",
    "broadcast_in_dim_axis_inside": """\
{ lambda ; a:f32[2,5,4]. let
    b:f32[5,2,4] = transpose[permutation=(1, 0, 2)] a
    c:f32[5,2,3,4] = broadcast_in_dim[
      broadcast_dimensions=(0, np.int64(1), np.int64(3))
    ] b
  in (c,) }""",
    "broadcast_in_dim_scalar": """\
{ lambda ; a:f32[5]. let
    b:f32[5,3] = broadcast_in_dim[broadcast_dimensions=(0,)] a
  in (b,) }""",
    "clamp_batched_scalar_bounds": """\
{ lambda ; a:f32[5] b:f32[5,3] c:f32[5]. let
    d:f32[5,3] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    e:f32[5,3] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    f:f32[5,3] = clamp d b e
  in (f,) }""",
    "clamp_mixed": """\
{ lambda ; a:f32[5] b:f32[3,5] c:f32[]. let
    d:f32[5,3] = transpose[permutation=(1, 0)] b
    e:f32[5,3] = broadcast_in_dim c
    f:f32[5,3] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    g:f32[5,3] = clamp f d e
  in (g,) }""",
    "clamp_scalar_bounds": """\
{ lambda ; a:f32[] b:f32[3,5] c:f32[]. let
    d:f32[3,5] = clamp a b c
    e:f32[5,3] = transpose[permutation=(1, 0)] d
  in (e,) }""",
    "concatenate_different_axes": """\
{ lambda ; a:f32[5,2,3] b:f32[2,4,5]. let
    c:f32[5,2,4] = transpose[permutation=(2, 0, 1)] b
    d:f32[5,2,7] = concatenate[dimension=2] a c
  in (d,) }""",
    "concatenate_unmapped_operand": """\
{ lambda ; a:f32[3,5] b:f32[2]. let
    c:f32[5,3] = transpose[permutation=(1, 0)] a
    d:f32[5,2] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    e:f32[5,5] = concatenate[dimension=1] c d
  in (e,) }""",
    "convert_and_stop_gradient": """\
{ lambda ; a:f32[3,5]. let
    b:f32[3,5] = stop_gradient a
    c:i32[3,5] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:i32[5,3] = transpose[permutation=(1, 0)] c
  in (d,) }""",
    "grad_vmap_small": """\
{ lambda ; a:f32[5,3,4] b:f32[4,5]. let
    c:f32[5,4] = transpose[permutation=(1, 0)] b
    d:f32[5,3,4] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] c
    e:f32[5,3,4] = mul a d
    f:f32[5,4,3] = reshape[
      dimensions=(0, 2, 1)
      new_sizes=(5, 4, 3)
      sharding=None
    ] e
    g:f32[5,3,4] = transpose[permutation=(0, 2, 1)] f
    h:bool[5,3,4] = gt g 0.0:f32[]
    i:f32[5,3,4] = clamp -1.0:f32[] g 1.0:f32[]
    j:bool[5,3,4] = gt g -1.0:f32[]
    k:bool[5,3,4] = lt g 1.0:f32[]
    l:bool[5,3,4] = and j k
    _:f32[5,3,4] = broadcast_in_dim 0.0:f32[]
    m:f32[5,3,4] = select_n h i g
    _:f32[5,3,4] = broadcast_in_dim 0.0:f32[]
    n:f32[5,4] = transpose[permutation=(1, 0)] b
    o:f32[5,1,4] = reshape[dimensions=None new_sizes=(5, 1, 4) sharding=None] n
    p:f32[5,4] = squeeze[dimensions=(1,)] o
    q:f32[5,1,4] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] p
    r:f32[5,4,4] = concatenate[dimension=1] m q
    s:f32[5,2,4] t:f32[5,2,4] = split[axis=1 sizes=(2, 2)] r
    u:f32[5,2,8] = tile[reps=(1, 1, 2)] s
    v:f32[5] = reduce_sum[axes=(np.int64(1), np.int64(2)) out_sharding=None] u
    w:f32[5,2,4] = stop_gradient t
    x:f32[5] = reduce_sum[axes=(np.int64(1), np.int64(2)) out_sharding=None] w
    y:f32[5] = add v x
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] y
    z:f32[5] = broadcast_in_dim 1.0:f32[]
    ba:f32[5,2,8] = broadcast_in_dim[broadcast_dimensions=(np.int64(0),)] z
    bb:f32[1,5,1,2,2,4] = reshape[
      dimensions=None
      new_sizes=(1, 5, 1, 2, 2, 4)
      sharding=None
    ] ba
    bc:f32[5,2,4] = reduce_sum[axes=(0, 2, 4) out_sharding=None] bb
    bd:f32[5,2,4] = broadcast_in_dim 0.0:f32[]
    be:f32[5,4,4] = concatenate[dimension=1] bc bd
    bf:f32[5,3,4] bg:f32[5,1,4] = split[axis=1 sizes=(3, 1)] be
    bh:f32[5,4] = reduce_sum[axes=(1,) out_sharding=None] bg
    bi:f32[5,1,4] = broadcast_in_dim[broadcast_dimensions=(0, 2)] bh
    bj:f32[5,4] = reshape[dimensions=None new_sizes=(5, 4) sharding=None] bi
    bk:f32[4,5] = transpose[permutation=(1, 0)] bj
    bl:f32[5,3,4] = broadcast_in_dim 0.0:f32[]
    bm:f32[5,3,4] = select_n h bf bl
    bn:f32[5,3,4] = select_n h bl bf
    bo:f32[5,3,4] = broadcast_in_dim 0.0:f32[]
    bp:f32[5,3,4] = select_n l bo bm
    bq:f32[5,3,4] = add_any bn bp
    br:f32[5,4,3] = transpose[permutation=(0, 2, 1)] bq
    bs:f32[5,3,4] = transpose[permutation=(0, 2, 1)] br
    bt:f32[5,3,4] = mul a bs
    bu:f32[5,3,4] = mul bs d
    bv:f32[5,4] = reduce_sum[axes=(1,) out_sharding=None] bt
    bw:f32[4,5] = transpose[permutation=(1, 0)] bv
    bx:f32[4,5] = add_any bk bw
  in (bu, bx) }""",
    "nested_small": """\
{ lambda ; a:f32[2,3,4] b:f32[4,5]. let
    c:f32[5,4] = transpose[permutation=(1, 0)] b
    d:f32[5,3,4] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] c
    e:f32[5,1,3,4] = broadcast_in_dim[
      broadcast_dimensions=(0, np.int64(2), np.int64(3))
    ] d
    f:f32[1,2,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2), np.int64(3))
    ] a
    g:f32[5,2,3,4] = mul f e
    h:f32[5,2,4,3] = reshape[
      dimensions=(0, 1, 3, 2)
      new_sizes=(5, 2, 4, 3)
      sharding=None
    ] g
    i:f32[5,2,3,4] = transpose[permutation=(0, 1, 3, 2)] h
    j:bool[5,2,3,4] = gt i 0.0:f32[]
    k:f32[5,2,3,4] = clamp -1.0:f32[] i 1.0:f32[]
    l:f32[5,2,3,4] = select_n j k i
    m:f32[5,4] = transpose[permutation=(1, 0)] b
    n:f32[5,1,4] = reshape[dimensions=None new_sizes=(5, 1, 4) sharding=None] m
    o:f32[5,4] = squeeze[dimensions=(1,)] n
    p:f32[5,1,4] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] o
    q:f32[5,2,1,4] = broadcast_in_dim[
      broadcast_dimensions=(0, np.int64(2), np.int64(3))
    ] p
    r:f32[5,2,4,4] = concatenate[dimension=2] l q
    s:f32[5,2,2,4] t:f32[5,2,2,4] = split[axis=2 sizes=(2, 2)] r
    u:f32[5,2,2,8] = tile[reps=(1, 1, 1, 2)] s
    v:f32[5,2] = reduce_sum[axes=(np.int64(2), np.int64(3)) out_sharding=None] u
    w:f32[5,2,2,4] = stop_gradient t
    x:f32[5,2] = reduce_sum[axes=(np.int64(2), np.int64(3)) out_sharding=None] w
    y:f32[5,2] = add v x
  in (y,) }""",
    "pow_unmapped_base_batched_exponent": """\
{ lambda ; a:f32[2,3] b:i32[5]. let
    c:f32[1,2,3] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] a
    d:i32[5,1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    e:f32[5,2,3] = pow c d
  in (e,) }""",
    "reshape_dimensions": """\
{ lambda ; a:f32[2,3,5]. let
    b:f32[5,2,3] = transpose[permutation=(2, 0, 1)] a
    c:f32[5,6] = reshape[dimensions=(0, 2, 1) new_sizes=(5, 6) sharding=None] b
  in (c,) }""",
    "select_batched_scalar_predicate": """\
{ lambda ; a:bool[5] b:f32[3] c:f32[3]. let
    d:f32[5,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    e:f32[5,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
    f:bool[5,3] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    g:f32[5,3] = select_n f d e
  in (g,) }""",
    "select_n_int_mixed": """\
{ lambda ; a:i32[5,3] b:f32[5,3] c:f32[3] d:f32[3,5]. let
    e:f32[5,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    f:f32[5,3] = transpose[permutation=(1, 0)] d
    g:f32[5,3] = select_n a b e f
  in (g,) }""",
    "select_predicate_and_cases_alike": """\
{ lambda ; a:bool[5] b:f32[5,3] c:f32[5,3]. let
    d:bool[5,3] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    e:f32[5,3] = select_n d c b
  in (e,) }""",
    "select_scalar_cases": """\
{ lambda ; a:bool[5] b:f32[] c:f32[]. let
    d:f32[5] = broadcast_in_dim c
    e:f32[5] = broadcast_in_dim b
    f:f32[5] = select_n a d e
  in (f,) }""",
    "select_unmapped_predicate_cases_alike": """\
{ lambda ; a:bool[] b:f32[3,5] c:f32[3,5]. let
    d:f32[3,5] = select_n a c b
    e:f32[5,3] = transpose[permutation=(1, 0)] d
  in (e,) }""",
    "select_unmapped_scalar_predicate": """\
{ lambda ; a:bool[] b:f32[5,3] c:f32[3,5]. let
    d:f32[5,3] = transpose[permutation=(1, 0)] c
    e:f32[5,3] = select_n a d b
  in (e,) }""",
    "split": """\
{ lambda ; a:f32[2,5,3]. let
    b:f32[2,5,1] c:f32[2,5,2] = split[axis=2 sizes=(1, 2)] a
    d:f32[5,2,1] = transpose[permutation=(1, 0, 2)] b
    e:f32[5,2,2] = transpose[permutation=(1, 0, 2)] c
  in (d, e) }""",
    "squeeze_axis_inside": """\
{ lambda ; a:f32[2,5,1]. let
    b:f32[5,2,1] = transpose[permutation=(1, 0, 2)] a
    c:f32[5,2] = squeeze[dimensions=(2,)] b
  in (c,) }""",
    "stack_alike": """\
{ lambda ; a:f32[2,5,3] b:f32[2,5,3]. let
    c:f32[2,2,5,3] = stack[axis=0] a b
    d:f32[5,2,2,3] = transpose[permutation=(2, 0, 1, 3)] c
  in (d,) }""",
    "stack_unmapped_operand": """\
{ lambda ; a:f32[2,5,3] b:f32[2,3]. let
    c:f32[5,2,3] = transpose[permutation=(1, 0, 2)] a
    d:f32[5,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] b
    e:f32[5,2,2,3] = stack[axis=2] c d
  in (e,) }""",
    "tile": """\
{ lambda ; a:f32[2,5,3]. let
    b:f32[4,5,9] = tile[reps=(2, 1, 3)] a
    c:f32[5,4,9] = transpose[permutation=(1, 0, 2)] b
  in (c,) }""",
    "transpose_axis_inside": """\
{ lambda ; a:f32[2,5,3]. let
    b:f32[5,3,2] = transpose[permutation=(1, 2, 0)] a
  in (b,) }""",
    "unstack_axis_after_batch": """\
{ lambda ; a:f32[2,5,3]. let
    b:f32[2,5] c:f32[2,5] d:f32[2,5] = unstack[axis=2] a
    e:f32[5,2] = transpose[permutation=(1, 0)] b
    f:f32[5,2] = transpose[permutation=(1, 0)] c
    g:f32[5,2] = transpose[permutation=(1, 0)] d
  in (e, f, g) }""",
    "unstack_axis_before_batch": """\
{ lambda ; a:f32[2,5,3]. let
    b:f32[5,3] c:f32[5,3] = unstack[axis=0] a
  in (b, c) }""",
    "vmap_grad_small": """\
{ lambda ; a:f32[3,4,5] b:f32[5,4]. let
    c:f32[5,3,4] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] b
    d:f32[5,3,4] = transpose[permutation=(2, 0, 1)] a
    e:f32[5,3,4] = mul d c
    f:f32[5,4,3] = reshape[
      dimensions=(0, 2, 1)
      new_sizes=(5, 4, 3)
      sharding=None
    ] e
    g:f32[5,3,4] = transpose[permutation=(0, 2, 1)] f
    h:bool[5,3,4] = gt g 0.0:f32[]
    i:f32[5,3,4] = clamp -1.0:f32[] g 1.0:f32[]
    j:bool[5,3,4] = gt g -1.0:f32[]
    k:bool[5,3,4] = lt g 1.0:f32[]
    l:bool[5,3,4] = and j k
    _:f32[3,4] = broadcast_in_dim 0.0:f32[]
    m:f32[5,3,4] = select_n h i g
    _:f32[3,4] = broadcast_in_dim 0.0:f32[]
    n:f32[5,1,4] = reshape[dimensions=None new_sizes=(5, 1, 4) sharding=None] b
    o:f32[5,4] = squeeze[dimensions=(1,)] n
    p:f32[5,1,4] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] o
    q:f32[5,4,4] = concatenate[dimension=1] m p
    r:f32[5,2,4] s:f32[5,2,4] = split[axis=1 sizes=(2, 2)] q
    t:f32[5,2,8] = tile[reps=(1, 1, 2)] r
    u:f32[5] = reduce_sum[axes=(np.int64(1), np.int64(2)) out_sharding=None] t
    v:f32[5,2,4] = stop_gradient s
    w:f32[5] = reduce_sum[axes=(np.int64(1), np.int64(2)) out_sharding=None] v
    _:f32[5] = add u w
    x:f32[2,8] = broadcast_in_dim 1.0:f32[]
    y:f32[1,2,2,4] = reshape[
      dimensions=None
      new_sizes=(1, 2, 2, 4)
      sharding=None
    ] x
    z:f32[2,4] = reduce_sum[axes=(0, 2) out_sharding=None] y
    ba:f32[2,4] = broadcast_in_dim 0.0:f32[]
    bb:f32[4,4] = concatenate[dimension=0] z ba
    bc:f32[3,4] bd:f32[1,4] = split[axis=0 sizes=(3, 1)] bb
    be:f32[4] = reduce_sum[axes=(0,) out_sharding=None] bd
    bf:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] be
    bg:f32[4] = reshape[dimensions=None new_sizes=(4,) sharding=None] bf
    bh:f32[3,4] = broadcast_in_dim 0.0:f32[]
    bi:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] bc
    bj:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] bh
    bk:f32[5,3,4] = select_n h bi bj
    bl:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] bh
    bm:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] bc
    bn:f32[5,3,4] = select_n h bl bm
    bo:f32[3,4] = broadcast_in_dim 0.0:f32[]
    bp:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] bo
    bq:f32[5,3,4] = select_n l bp bk
    br:f32[5,3,4] = add_any bn bq
    bs:f32[5,4,3] = transpose[permutation=(0, 2, 1)] br
    bt:f32[5,3,4] = transpose[permutation=(0, 2, 1)] bs
    bu:f32[5,3,4] = transpose[permutation=(2, 0, 1)] a
    bv:f32[5,3,4] = mul bu bt
    bw:f32[5,3,4] = mul bt c
    bx:f32[5,4] = reduce_sum[axes=(np.int64(1),) out_sharding=None] bv
    by:f32[5,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] bg
    bz:f32[5,4] = add_any by bx
  in (bw, bz) }""",
}

CASES = golden_cases(globals())
test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, GOLDEN, (justjax,), lambda: (pytest.importorskip("jax"),))


# ---------------------------------------------------------------------------------------------
# Values: batched results equal the per-example results stacked.

B = 5  # the batch size; 5 appears in no per-example shape, so a confused axis fails



def _assert_trees_equal(got, want) -> None:
    got_leaves = justjax.tree_util.tree_leaves(got)
    want_leaves = justjax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


def _rand(*shape, dtype=np.float32, seed=0):
    values = np.random.default_rng(seed + sum(shape)).normal(size=shape) * 2
    return values.astype(dtype)


def _rand_bools(*shape):
    return np.random.default_rng(sum(shape)).random(shape) < 0.5


def _rand_ints(*shape, high=3):
    return np.random.default_rng(sum(shape)).integers(-1, high + 1, shape).astype(np.int32)


def _select(p, a, b):
    return lax.select(p, a, b)


# (function, batched arguments, in_axes); the batched axis has size B.
VALUE_CASES = {
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)),
                         [_rand(2, B, 4)], 1),
    "broadcast_in_dim_unordered": (lambda x: lax.broadcast_in_dim(x, (4, 3, 2), (2, 0)),
                                   [_rand(2, 4, B)], 2),
    "broadcast_in_dim_unit_dim": (lambda x: lax.broadcast_in_dim(x, (3, 4), (0, 1)),
                                  [_rand(1, 4, B)], -1),
    "reshape": (lambda x: lax.reshape(x, (6,)), [_rand(2, B, 3)], 1),
    "reshape_dimensions": (lambda x: lax.reshape(x, (3, 2), (1, 0)), [_rand(2, 3, B)], 2),
    "reshape_scalar": (lambda x: lax.reshape(x, (1, 1)), [_rand(B)], 0),
    "squeeze": (lambda x: lax.squeeze(x, (0, 2)), [_rand(1, 3, B, 1)], 2),
    "transpose": (lambda x: lax.transpose(x, (2, 0, 1)), [_rand(2, 3, 4, B)], -1),
    "select_unmapped_scalar_predicate": (_select, [np.bool_(False), _rand(B, 3), _rand(3, B)],
                                         (None, 0, 1)),
    "select_unmapped_predicate_cases_alike": (
        _select, [np.bool_(True), _rand(3, B), _rand(3, B, seed=1)], (None, 1, 1)),
    # Batched cases of equal shapes along different axes: one is moved.
    "select_unmapped_predicate_square_cases": (
        _select, [np.bool_(True), _rand(B, B), _rand(B, B, seed=1)], (None, 0, 1)),
    "select_batched_scalar_predicate": (_select, [_rand_bools(B), _rand(3), _rand(3, seed=1)],
                                        (0, None, None)),
    "select_batched_scalar_predicate_cases_alike": (
        _select, [_rand_bools(B), _rand(3, B), _rand(3, B, seed=1)], (0, 1, 1)),
    "select_mixed": (_select, [_rand_bools(3, B), _rand(B, 3), _rand(3)], (1, 0, None)),
    "select_unmapped_predicate_array": (_select, [_rand_bools(3), _rand(B, 3), _rand(3, B)],
                                        (None, 0, 1)),
    "select_scalar_cases": (_select, [_rand_bools(B), np.float32(1.5), np.float32(-2)],
                            (0, None, None)),
    "select_n_int": (lambda p, a, b, c: lax.select_n(p, a, b, c),
                     [_rand_ints(B, 3), _rand(B, 3), _rand(3), _rand(3, B)], (0, 0, None, 1)),
    "clamp_alike": (lax.clamp, [_rand(B, 3) - 1, _rand(B, 3), _rand(B, 3) + 1], 0),
    "clamp_scalar_bounds": (lax.clamp, [np.float32(-1), _rand(3, B), np.float32(1)],
                            (None, 1, None)),
    "clamp_batched_scalar_bounds": (lax.clamp, [_rand(B) - 1, _rand(B, 3), _rand(B) + 1], 0),
    "clamp_batched_scalar_lower_bound": (lax.clamp, [_rand(B) - 1, _rand(3, B), np.float32(1)],
                                         (0, 1, None)),
    "clamp_unmapped_operand": (lax.clamp, [_rand(B, 3) - 1, _rand(3), _rand(3, B) + 1],
                               (0, None, 1)),
    "clamp_unmapped_scalar_operand_low": (lax.clamp, [_rand(B), np.float32(0.5),
                                                      np.float32(2)], (0, None, None)),
    "clamp_unmapped_scalar_operand_high": (lax.clamp, [np.float32(-2), np.float32(0.5),
                                                       _rand(B)], (None, None, 0)),
    "clamp_batched_scalars": (lax.clamp, [_rand(B) - 1, _rand(B), np.float32(1)],
                              (0, 0, None)),
    "concatenate_unmapped": (lambda a, b: lax.concatenate([a, b], 0), [_rand(3, B), _rand(2)],
                             (1, None)),
    "concatenate_three": (lambda a, b, c: lax.concatenate([a, b, c], 1),
                          [_rand(2, 1), _rand(B, 2, 3), _rand(2, 4, B)], (None, 0, 2)),
    "copy": (lax.copy, [_rand(3, B)], 1),
    "stop_gradient": (lax.stop_gradient, [_rand(3, B)], 1),
    "convert": (lambda x: lax.convert_element_type(x, np.int32), [_rand(3, B)], 1),
    "bitcast_same_width": (lambda x: lax.bitcast_convert_type(x, np.int32), [_rand(3, B)], -1),
    "bitcast_narrowing": (lambda x: lax.bitcast_convert_type(x, np.uint8), [_rand(3, B)], 1),
    "bitcast_narrowing_first": (lambda x: lax.bitcast_convert_type(x, np.int16),
                                [_rand(B, 3)], 0),
    "bitcast_widening": (lambda x: lax.bitcast_convert_type(x, np.float32),
                         [_rand_ints(3, B, 4).astype(np.uint8)], 1),
    # The widening bitcast consumes the last axis: a batch axis there is moved first (real
    # JAX fails here).
    "bitcast_widening_batch_last": (lambda x: lax.bitcast_convert_type(x, np.int32),
                                    [_rand_ints(3, 2, B).astype(np.int16)], -1),
    "tile_first": (lambda x: lax.tile(x, (2, 3)), [_rand(B, 2, 3)], 0),
    "tile_inside": (lambda x: lax.tile(x, (2, 3)), [_rand(2, B, 3)], 1),
    "tile_last": (lambda x: lax.tile(x, (2, 3)), [_rand(2, 3, B)], -1),
    "stack_alike_after": (lambda a, b: jnp.stack([a, b], axis=2), [_rand(B, 2, 3),
                                                                  _rand(B, 2, 3, seed=1)], 0),
    "stack_alike_before": (lambda a, b: jnp.stack([a, b], axis=0), [_rand(2, B, 3),
                                                                   _rand(2, B, 3, seed=1)], 1),
    "stack_mixed": (lambda a, b, c: jnp.stack([a, b, c], axis=1),
                    [_rand(2, B, 3), _rand(2, 3), _rand(2, 3, B)], (1, None, 2)),
    "split_after_batch": (lambda x: lax.split(x, (1, 2), 1), [_rand(2, B, 3)], 1),
    "split_before_batch": (lambda x: lax.split(x, (2, 1, 0), 0), [_rand(3, B, 2)], 1),
    "unstack_before_batch": (lambda x: jnp.unstack(x, axis=0), [_rand(2, B, 3)], 1),
    "unstack_after_batch": (lambda x: jnp.unstack(x, axis=1), [_rand(2, B, 3)], 1),
    "unstack_last": (lambda x: jnp.unstack(x, axis=-1), [_rand(B, 2, 3)], 0),
    "add_batched_scalar_and_matrix": (lax.add, [_rand(B), _rand(2, B, 3)], (0, 1)),
    "mul_unit_broadcast": (lax.mul, [_rand(1, 3, B), _rand(2, B, 3)], (2, 1)),
    "sub_unmapped_unit_operand": (lax.sub, [_rand(2, 1), _rand(2, 3, B)], (None, 2)),
    "pow_batched_int_exponent": (lax.pow, [np.abs(_rand(2, 3)) + 0.5, _rand_ints(B)],
                                 (None, 0)),
    "complex_both_mapped": (lax.complex, [_rand(2, B), _rand(B, 2)], (1, 0)),
    "integer_pow": (lambda x: lax.integer_pow(x, -2), [np.abs(_rand(2, 3, B)) + 0.5], 2),
    "reduce_precision": (lambda x: lax.reduce_precision(x, 5, 10), [_rand(2, B)], 1),
    "round_even": (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                   [_rand(2, B)], 1),
    "shift_unmapped_scalar": (lax.shift_right_arithmetic, [_rand_ints(2, B, high=9),
                                                           np.int32(1)], (1, None)),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_batched_equalsstack_per_example(name: str) -> None:
    fun, args, in_axes = VALUE_CASES[name]
    got = justjax.vmap(fun, in_axes=in_axes)(*args)
    _assert_trees_equal(got, stack_per_example(fun, *args, in_axes=in_axes))


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_nested_vmap_equalsstack_per_example(name: str) -> None:
    """The mapped arguments get a second batch axis (of size 2) in front; the outer vmap maps
    it, the inner one the original axis (shifted by the new one when negative)."""
    fun, args, in_axes = VALUE_CASES[name]
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    outer = tuple(None if ax is None else 0 for ax in axes)
    # The second outer example is the first with its examples rotated.
    stacked = [a if ax is None else np.stack([a, np.roll(a, 1, axis=ax)])
               for a, ax in zip(args, axes, strict=True)]
    got = justjax.vmap(justjax.vmap(fun, in_axes=in_axes), in_axes=outer)(*stacked)
    want = stack_per_example(lambda *xs: stack_per_example(fun, *xs, in_axes=in_axes), *stacked, in_axes=outer)
    _assert_trees_equal(got, want)


def test_out_axes_move_structural_results() -> None:
    x = _rand(2, B, 3)
    got = justjax.vmap(lambda x: lax.transpose(x, (1, 0)), in_axes=1, out_axes=2)(x)
    np.testing.assert_array_equal(got, np.transpose(x, (2, 0, 1)))
    pieces = justjax.vmap(lambda x: lax.split(x, (1, 2), 1), in_axes=1, out_axes=-1)(x)
    np.testing.assert_array_equal(pieces[1], np.transpose(x, (0, 2, 1))[:, 1:])


# ---------------------------------------------------------------------------------------------
# Composition with autodiff.

def _vec(x, y):
    """A vector built from every structural op; x: (3, 4), y: (4,)."""
    a = lax.broadcast_in_dim(y, (3, 4), (1,))
    b = lax.transpose(lax.reshape(x * a, (4, 3), (1, 0)), (1, 0))
    c = lax.select(b > 0, b, lax.clamp(-1., b, 1.) * 0.5)
    d = lax.concatenate([c, lax.squeeze(lax.reshape(y, (1, 4)), (0,))[None]], 0)
    first, second = lax.split(d, (2, 2), 0)
    stacked = jnp.stack([first, lax.stop_gradient(second) + second ** 2], axis=1)
    rows = jnp.unstack(stacked, axis=0)
    return lax.reshape(lax.tile(rows[0] * rows[1], (1, 2)), (16,)) + lax.copy(x).sum()


def _scalar(x, y):
    return jnp.sin(_vec(x, y)).sum()


_X = _rand(B, 3, 4, seed=3)
_Y = _rand(4, B, seed=4)


def test_vmap_of_grad() -> None:
    grad = justjax.grad(_scalar, argnums=(0, 1))
    got = justjax.vmap(grad, in_axes=(0, 1))(_X, _Y)
    _assert_trees_equal(got, stack_per_example(grad, _X, _Y, in_axes=(0, 1)))


def test_grad_of_vmap() -> None:
    total = lambda x, y: justjax.vmap(_scalar, in_axes=(0, 1))(x, y).sum()
    gx, gy = justjax.grad(total, argnums=(0, 1))(_X, _Y)
    want_x, want_y = stack_per_example(justjax.grad(_scalar, argnums=(0, 1)), _X, _Y, in_axes=(0, 1))
    np.testing.assert_allclose(gx, want_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gy, want_y.T, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jacobian", ["jacfwd", "jacrev"])
def test_vmap_of_jacobian(jacobian: str) -> None:
    jac = getattr(justjax, jacobian)(_vec, argnums=(0, 1))
    got = justjax.vmap(jac, in_axes=(0, 1))(_X, _Y)
    _assert_trees_equal(got, stack_per_example(jac, _X, _Y, in_axes=(0, 1)))


@pytest.mark.parametrize("jacobian", ["jacfwd", "jacrev"])
def test_jacobian_of_vmap_is_block_diagonal(jacobian: str) -> None:
    batched = justjax.vmap(_vec, in_axes=(0, None))
    y = _Y[:, 0]
    got = np.asarray(getattr(justjax, jacobian)(batched)(_X, y))  # [B, 16, B, 3, 4]
    blocks = stack_per_example(lambda x: justjax.jacfwd(_vec)(x, y), _X)
    for i in range(B):
        for j in range(B):
            want = blocks[i] if i == j else np.zeros_like(blocks[i])
            np.testing.assert_allclose(got[i, :, j], want, rtol=1e-5, atol=1e-6)


def test_stop_gradient_under_vmap_blocks_gradient() -> None:
    grad = justjax.grad(lambda x: (lax.stop_gradient(x) * x).sum())
    x = _rand(B, 3)
    np.testing.assert_allclose(justjax.vmap(grad)(x), x, rtol=1e-6)


@pytest.mark.parametrize("start,stop,shape", [
    # Shapes read off JAX 0.10.2's lax.collapse on a (2, 3, 4, 5) operand.
    (1, 3, (2, 12, 5)), (0, None, (120,)), (-2, None, (2, 3, 20)), (0, -1, (24, 5)),
    (2, 2, (2, 3, 1, 4, 5)),
])
def test_collapse(start, stop, shape):
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    out = lax.collapse(x, start, stop)
    assert out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), x.reshape(shape))
    batched = justjax.vmap(lambda v: lax.collapse(v, start, stop))(np.stack([x, x + 1]))
    np.testing.assert_array_equal(np.asarray(batched), np.stack([x, x + 1]).reshape(2, *shape))
