"""vmap of `dot_general` and `conv_general_dilated`: the batch axis folds into the
contraction's batch or free dims, and into the convolution's batch, output-feature or group
dims, as JAX's rules do.

- Jaxprs print the same equations as JAX 0.10.2 (golden texts printed by real JAX for the
  same case functions; each case takes the `jax` module, so the `needs_jax` test reruns them
  on real JAX and checks the golden texts are still what JAX prints).
- Values: batched results equal the per-example results stacked, for every operand batched
  along any axis or unmapped, nested vmaps, jax.numpy's products, and autodiff composed with
  vmap (checksums read off real JAX in float64).
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from tests.harness import golden_cases, golden_jaxpr_tests, stack_per_example, x64_mode

def _ones(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 5 - 2


_MM = (((1,), (0,)), ((), ()))
_BMM = (((2,), (1,)), ((0,), (0,)))
_MULTI = (((1, 3), (2, 0)), ((0,), (1,)))


def _dg(jax, dims, **params):
    return lambda a, b: jax.lax.dot_general(a, b, dims, **params)


def _conv(jax, **params):
    return lambda x, w: jax.lax.conv_general_dilated(x, w, **params)


_SAME = dict(window_strides=(1, 1), padding="SAME")
_NHWC = dict(window_strides=(1, 2), padding=((1, 0), (0, 1)), rhs_dilation=(2, 1),
             dimension_numbers=("NHWC", "HWIO", "NHWC"))


# --- cases begin (each returns the text of one jaxpr; run on justjax and on real JAX) ---


def case_matmul_lhs_batched_inside(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _MM), in_axes=(1, None)))(_ones(2, 5, 3),
                                                                      _ones(3, 4))


def case_matmul_rhs_batched_last(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _MM), in_axes=(None, 2)))(_ones(2, 3),
                                                                      _ones(3, 4, 5))


def case_matmul_both_batched(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _MM), in_axes=(1, 2)))(_ones(2, 5, 3),
                                                                   _ones(3, 4, 5))


def case_batch_matmul_both_batched(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _BMM), in_axes=(1, 0)))(_ones(2, 5, 3, 4),
                                                                    _ones(5, 2, 4, 6))


def case_batch_matmul_lhs_batched_last(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _BMM), in_axes=(3, None)))(_ones(2, 3, 4, 5),
                                                                       _ones(2, 4, 6))


def case_multi_contracting_lhs(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _MULTI), in_axes=(2, None)))(
        _ones(2, 3, 5, 4, 5), _ones(5, 2, 3, 6))


def case_multi_contracting_rhs(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _MULTI), in_axes=(None, 3)))(
        _ones(2, 3, 4, 5), _ones(5, 2, 3, 5, 6))


def case_multi_contracting_both(jax):
    return jax.make_jaxpr(jax.vmap(_dg(jax, _MULTI), in_axes=(4, 1)))(
        _ones(2, 3, 4, 5, 5), _ones(5, 5, 2, 3, 6))


def case_params_kept(jax):
    f = _dg(jax, _MM, precision=jax.lax.Precision.HIGHEST,
            preferred_element_type=jax.numpy.float32)
    return jax.make_jaxpr(jax.vmap(f))(_ones(5, 2, 3).astype(jax.numpy.bfloat16),
                                       _ones(5, 3, 4).astype(jax.numpy.bfloat16))


def case_dot_of_vectors(jax):
    return jax.make_jaxpr(jax.vmap(jax.numpy.dot))(_ones(5, 3), _ones(5, 3))


def case_vecmat(jax):
    return jax.make_jaxpr(jax.vmap(jax.numpy.dot, in_axes=(0, None)))(_ones(5, 3),
                                                                      _ones(3, 4))


def case_nested_dot(jax):
    f = jax.vmap(jax.vmap(jax.numpy.dot, in_axes=(0, None)), in_axes=(None, 0))
    return jax.make_jaxpr(f)(_ones(5, 2, 3), _ones(4, 3, 6))


def case_einsum(jax):
    f = lambda a, b: jax.numpy.einsum("ij,jk->ik", a, b)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(0, 1)))(_ones(5, 2, 3), _ones(3, 5, 4))


def case_vmap_grad_dot(jax):
    g = jax.grad(lambda a, b: jax.numpy.dot(a, b).sum())
    return jax.make_jaxpr(jax.vmap(g, in_axes=(0, None)))(_ones(5, 2, 3), _ones(3, 4))


def case_conv_lhs_batched(jax):
    return jax.make_jaxpr(jax.vmap(_conv(jax, **_SAME), in_axes=(2, None)))(
        _ones(2, 3, 5, 6, 6), _ones(4, 3, 3, 3))


def case_conv_rhs_batched(jax):
    return jax.make_jaxpr(jax.vmap(_conv(jax, **_SAME), in_axes=(None, 1)))(
        _ones(2, 3, 6, 6), _ones(4, 5, 3, 3, 3))


def case_conv_both_batched(jax):
    return jax.make_jaxpr(jax.vmap(_conv(jax, **_SAME)))(_ones(5, 2, 3, 6, 6),
                                                         _ones(5, 4, 3, 3, 3))


def case_conv_feature_groups_rhs(jax):
    f = _conv(jax, feature_group_count=3, **_SAME)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(None, 0)))(_ones(2, 6, 6, 6),
                                                          _ones(5, 9, 2, 3, 3))


def case_conv_feature_groups_both(jax):
    f = _conv(jax, feature_group_count=3, **_SAME)
    return jax.make_jaxpr(jax.vmap(f, in_axes=(1, 4)))(_ones(2, 5, 6, 6, 6),
                                                       _ones(9, 2, 3, 3, 5))


def case_conv_batch_groups_lhs(jax):
    f = _conv(jax, batch_group_count=2, window_strides=(1, 1), padding="VALID")
    return jax.make_jaxpr(jax.vmap(f, in_axes=(1, None)))(_ones(4, 5, 3, 5, 5),
                                                          _ones(6, 3, 2, 2))


def case_conv_batch_groups_rhs(jax):
    f = _conv(jax, batch_group_count=2, window_strides=(1, 1), padding="VALID")
    return jax.make_jaxpr(jax.vmap(f, in_axes=(None, 0)))(_ones(4, 3, 5, 5),
                                                          _ones(5, 6, 3, 2, 2))


def case_conv_batch_groups_both(jax):
    f = _conv(jax, batch_group_count=2, window_strides=(1, 1), padding="VALID")
    return jax.make_jaxpr(jax.vmap(f))(_ones(5, 4, 3, 5, 5), _ones(5, 6, 3, 2, 2))


def case_conv_nhwc_both(jax):
    return jax.make_jaxpr(jax.vmap(_conv(jax, **_NHWC), in_axes=(-1, 2)))(
        _ones(2, 6, 5, 3, 5), _ones(2, 2, 5, 3, 4))


def case_conv_empty_batch(jax):
    return jax.make_jaxpr(jax.vmap(_conv(jax, **_SAME), in_axes=(0, None)))(
        _ones(0, 2, 3, 6, 6), _ones(4, 3, 3, 3))


def case_vmap_grad_conv(jax):
    g = jax.grad(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME").sum(),
                 argnums=1)
    return jax.make_jaxpr(jax.vmap(g, in_axes=(0, None)))(_ones(5, 2, 3, 4, 4),
                                                          _ones(4, 3, 3, 3))


# --- cases end ---

GOLDEN = {
    "batch_matmul_both_batched": """\
{ lambda ; a:f32[2,5,3,4] b:f32[5,2,4,6]. let
    c:f32[5,2,3,6] = dot_general[
      dimension_numbers=(([3], [2]), ([1, 0], [0, 1]))
    ] a b
  in (c,) }""",
    "batch_matmul_lhs_batched_last": """\
{ lambda ; a:f32[2,3,4,5] b:f32[2,4,6]. let
    c:f32[2,3,5,6] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b
    d:f32[5,2,3,6] = transpose[permutation=(2, 0, 1, 3)] c
  in (d,) }""",
    "conv_batch_groups_both": """\
{ lambda ; a:f32[5,4,3,5,5] b:f32[5,6,3,2,2]. let
    c:f32[20,3,5,5] = reshape[
      dimensions=None
      new_sizes=(20, 3, 5, 5)
      sharding=None
    ] a
    d:f32[30,3,2,2] = reshape[
      dimensions=None
      new_sizes=(30, 3, 2, 2)
      sharding=None
    ] b
    e:f32[2,30,4,4] = conv_general_dilated[
      batch_group_count=10
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 0), (0, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] c d
    f:f32[2,5,6,4,4] = reshape[
      dimensions=None
      new_sizes=(2, 5, 6, 4, 4)
      sharding=None
    ] e
    g:f32[5,2,6,4,4] = transpose[permutation=(1, 0, 2, 3, 4)] f
  in (g,) }""",
    "conv_batch_groups_lhs": """\
{ lambda ; a:f32[4,5,3,5,5] b:f32[6,3,2,2]. let
    c:f32[2,2,5,3,5,5] = reshape[
      dimensions=None
      new_sizes=(2, 2, 5, 3, 5, 5)
      sharding=None
    ] a
    d:f32[2,10,3,5,5] = reshape[
      dimensions=(0, 2, 1, 3, 4, 5)
      new_sizes=(2, 10, 3, 5, 5)
      sharding=None
    ] c
    e:f32[20,3,5,5] = reshape[
      dimensions=None
      new_sizes=(20, 3, 5, 5)
      sharding=None
    ] d
    f:f32[10,6,4,4] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 0), (0, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] e b
    g:f32[5,2,6,4,4] = reshape[
      dimensions=None
      new_sizes=(5, 2, 6, 4, 4)
      sharding=None
    ] f
  in (g,) }""",
    "conv_batch_groups_rhs": """\
{ lambda ; a:f32[4,3,5,5] b:f32[5,6,3,2,2]. let
    c:f32[5,2,3,3,2,2] = reshape[
      dimensions=None
      new_sizes=(5, 2, 3, 3, 2, 2)
      sharding=None
    ] b
    d:f32[2,15,3,2,2] = reshape[
      dimensions=(1, 0, 2, 3, 4, 5)
      new_sizes=(2, 15, 3, 2, 2)
      sharding=None
    ] c
    e:f32[30,3,2,2] = reshape[
      dimensions=None
      new_sizes=(30, 3, 2, 2)
      sharding=None
    ] d
    f:f32[2,30,4,4] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 0), (0, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a e
    g:f32[2,2,15,4,4] = reshape[
      dimensions=None
      new_sizes=(2, 2, 15, 4, 4)
      sharding=None
    ] f
    h:f32[2,2,5,3,4,4] = reshape[
      dimensions=None
      new_sizes=(2, 2, 5, 3, 4, 4)
      sharding=None
    ] g
    i:f32[2,5,6,4,4] = reshape[
      dimensions=(0, 2, 1, 3, 4, 5)
      new_sizes=(2, 5, 6, 4, 4)
      sharding=None
    ] h
    j:f32[5,2,6,4,4] = transpose[permutation=(1, 0, 2, 3, 4)] i
  in (j,) }""",
    "conv_both_batched": """\
{ lambda ; a:f32[5,2,3,6,6] b:f32[5,4,3,3,3]. let
    c:f32[2,15,6,6] = reshape[
      dimensions=(1, 0, 2, 3, 4)
      new_sizes=(2, 15, 6, 6)
      sharding=None
    ] a
    d:f32[20,3,3,3] = reshape[
      dimensions=None
      new_sizes=(20, 3, 3, 3)
      sharding=None
    ] b
    e:f32[2,20,6,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=5
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] c d
    f:f32[2,5,4,6,6] = reshape[
      dimensions=None
      new_sizes=(2, 5, 4, 6, 6)
      sharding=None
    ] e
    g:f32[5,2,4,6,6] = transpose[permutation=(1, 0, 2, 3, 4)] f
  in (g,) }""",
    "conv_empty_batch": """\
{ lambda ; a:f32[0,2,3,6,6] b:f32[4,3,3,3]. let
    c:f32[0,2,4,6,6] = broadcast_in_dim 0.0:f32[]
  in (c,) }""",
    "conv_feature_groups_both": """\
{ lambda ; a:f32[2,5,6,6,6] b:f32[9,2,3,3,5]. let
    c:f32[2,30,6,6] = reshape[
      dimensions=None
      new_sizes=(2, 30, 6, 6)
      sharding=None
    ] a
    d:f32[45,2,3,3] = reshape[
      dimensions=(4, 0, 1, 2, 3)
      new_sizes=(45, 2, 3, 3)
      sharding=None
    ] b
    e:f32[2,45,6,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=15
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] c d
    f:f32[2,5,9,6,6] = reshape[
      dimensions=None
      new_sizes=(2, 5, 9, 6, 6)
      sharding=None
    ] e
    g:f32[5,2,9,6,6] = transpose[permutation=(1, 0, 2, 3, 4)] f
  in (g,) }""",
    "conv_feature_groups_rhs": """\
{ lambda ; a:f32[2,6,6,6] b:f32[5,9,2,3,3]. let
    c:f32[5,3,3,2,3,3] = reshape[
      dimensions=None
      new_sizes=(5, 3, 3, 2, 3, 3)
      sharding=None
    ] b
    d:f32[3,15,2,3,3] = reshape[
      dimensions=(1, 0, 2, 3, 4, 5)
      new_sizes=(3, 15, 2, 3, 3)
      sharding=None
    ] c
    e:f32[45,2,3,3] = reshape[
      dimensions=None
      new_sizes=(45, 2, 3, 3)
      sharding=None
    ] d
    f:f32[2,45,6,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=3
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a e
    g:f32[2,3,15,6,6] = reshape[
      dimensions=None
      new_sizes=(2, 3, 15, 6, 6)
      sharding=None
    ] f
    h:f32[2,3,5,3,6,6] = reshape[
      dimensions=None
      new_sizes=(2, 3, 5, 3, 6, 6)
      sharding=None
    ] g
    i:f32[2,5,9,6,6] = reshape[
      dimensions=(0, 2, 1, 3, 4, 5)
      new_sizes=(2, 5, 9, 6, 6)
      sharding=None
    ] h
    j:f32[5,2,9,6,6] = transpose[permutation=(1, 0, 2, 3, 4)] i
  in (j,) }""",
    "conv_lhs_batched": """\
{ lambda ; a:f32[2,3,5,6,6] b:f32[4,3,3,3]. let
    c:f32[10,3,6,6] = reshape[
      dimensions=(2, 0, 1, 3, 4)
      new_sizes=(10, 3, 6, 6)
      sharding=None
    ] a
    d:f32[10,4,6,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] c b
    e:f32[5,2,4,6,6] = reshape[
      dimensions=None
      new_sizes=(5, 2, 4, 6, 6)
      sharding=None
    ] d
  in (e,) }""",
    "conv_nhwc_both": """\
{ lambda ; a:f32[2,6,5,3,5] b:f32[2,2,5,3,4]. let
    c:f32[2,6,5,15] = reshape[
      dimensions=(0, 1, 2, 4, 3)
      new_sizes=(2, 6, 5, 15)
      sharding=None
    ] a
    d:f32[2,2,3,20] = reshape[
      dimensions=(0, 1, 3, 2, 4)
      new_sizes=(2, 2, 3, 20)
      sharding=None
    ] b
    e:f32[2,5,3,20] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=5
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 0), (0, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(1, 2)
    ] c d
    f:f32[2,5,3,5,4] = reshape[
      dimensions=None
      new_sizes=(2, 5, 3, 5, 4)
      sharding=None
    ] e
    g:f32[5,2,5,3,4] = transpose[permutation=(3, 0, 1, 2, 4)] f
  in (g,) }""",
    "conv_rhs_batched": """\
{ lambda ; a:f32[2,3,6,6] b:f32[4,5,3,3,3]. let
    c:f32[20,3,3,3] = reshape[
      dimensions=(1, 0, 2, 3, 4)
      new_sizes=(20, 3, 3, 3)
      sharding=None
    ] b
    d:f32[2,20,6,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a c
    e:f32[2,5,4,6,6] = reshape[
      dimensions=None
      new_sizes=(2, 5, 4, 6, 6)
      sharding=None
    ] d
    f:f32[5,2,4,6,6] = transpose[permutation=(1, 0, 2, 3, 4)] e
  in (f,) }""",
    "dot_of_vectors": """\
{ lambda ; a:f32[5,3] b:f32[5,3]. let
    c:f32[5] = dot_general[
      dimension_numbers=(([1], [1]), ([0], [0]))
      preferred_element_type=float32
    ] a b
  in (c,) }""",
    "einsum": """\
{ lambda ; a:f32[5,2,3] b:f32[3,5,4]. let
    c:f32[5,2,4] = dot_general[
      dimension_numbers=(([2], [0]), ([0], [1]))
      preferred_element_type=float32
    ] a b
  in (c,) }""",
    "matmul_both_batched": """\
{ lambda ; a:f32[2,5,3] b:f32[3,4,5]. let
    c:f32[5,2,4] = dot_general[dimension_numbers=(([2], [0]), ([1], [2]))] a b
  in (c,) }""",
    "matmul_lhs_batched_inside": """\
{ lambda ; a:f32[2,5,3] b:f32[3,4]. let
    c:f32[2,5,4] = dot_general[dimension_numbers=(([2], [0]), ([], []))] a b
    d:f32[5,2,4] = transpose[permutation=(1, 0, 2)] c
  in (d,) }""",
    "matmul_rhs_batched_last": """\
{ lambda ; a:f32[2,3] b:f32[3,4,5]. let
    c:f32[2,4,5] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
    d:f32[5,2,4] = transpose[permutation=(2, 0, 1)] c
  in (d,) }""",
    "multi_contracting_both": """\
{ lambda ; a:f32[2,3,4,5,5] b:f32[5,5,2,3,6]. let
    c:f32[5,2,4,6] = dot_general[
      dimension_numbers=(([1, 3], [3, 0]), ([4, 0], [1, 2]))
    ] a b
  in (c,) }""",
    "multi_contracting_lhs": """\
{ lambda ; a:f32[2,3,5,4,5] b:f32[5,2,3,6]. let
    c:f32[2,5,4,6] = dot_general[
      dimension_numbers=(([1, 4], [2, 0]), ([0], [1]))
    ] a b
    d:f32[5,2,4,6] = transpose[permutation=(1, 0, 2, 3)] c
  in (d,) }""",
    "multi_contracting_rhs": """\
{ lambda ; a:f32[2,3,4,5] b:f32[5,2,3,5,6]. let
    c:f32[2,4,5,6] = dot_general[
      dimension_numbers=(([1, 3], [2, 0]), ([0], [1]))
    ] a b
    d:f32[5,2,4,6] = transpose[permutation=(2, 0, 1, 3)] c
  in (d,) }""",
    "nested_dot": """\
{ lambda ; a:f32[5,2,3] b:f32[4,3,6]. let
    c:f32[5,2,4,6] = dot_general[
      dimension_numbers=(([2], [1]), ([], []))
      preferred_element_type=float32
    ] a b
    d:f32[4,5,2,6] = transpose[permutation=(2, 0, 1, 3)] c
  in (d,) }""",
    "params_kept": """\
{ lambda ; a:bf16[5,2,3] b:bf16[5,3,4]. let
    c:f32[5,2,4] = dot_general[
      dimension_numbers=(([2], [1]), ([0], [0]))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] a b
  in (c,) }""",
    "vecmat": """\
{ lambda ; a:f32[5,3] b:f32[3,4]. let
    c:f32[5,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }""",
    "vmap_grad_conv": """\
{ lambda ; a:f32[5,2,3,4,4] b:f32[4,3,3,3]. let
    c:f32[10,3,4,4] = reshape[
      dimensions=None
      new_sizes=(10, 3, 4, 4)
      sharding=None
    ] a
    d:f32[10,4,4,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] c b
    e:f32[5,2,4,4,4] = reshape[
      dimensions=None
      new_sizes=(5, 2, 4, 4, 4)
      sharding=None
    ] d
    _:f32[5] = reduce_sum[
      axes=(np.int64(1), np.int64(2), np.int64(3), np.int64(4))
      out_sharding=None
    ] e
    f:f32[2,4,4,4] = broadcast_in_dim 1.0:f32[]
    g:f32[2,15,4,4] = reshape[
      dimensions=(1, 0, 2, 3, 4)
      new_sizes=(2, 15, 4, 4)
      sharding=None
    ] a
    h:f32[4,15,3,3] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(1, 0, 2, 3), rhs_spec=(1, 0, 2, 3), out_spec=(1, 0, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] g f
    i:f32[4,5,3,3,3] = reshape[
      dimensions=None
      new_sizes=(4, 5, 3, 3, 3)
      sharding=None
    ] h
    j:f32[5,4,3,3,3] = transpose[permutation=(1, 0, 2, 3, 4)] i
  in (j,) }""",
    "vmap_grad_dot": """\
{ lambda ; a:f32[5,2,3] b:f32[3,4]. let
    c:f32[5,2,4] = dot_general[
      dimension_numbers=(([2], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    _:f32[5] = reduce_sum[axes=(np.int64(1), np.int64(2)) out_sharding=None] c
    d:f32[2,4] = broadcast_in_dim 1.0:f32[]
    e:f32[2,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] d b
    f:f32[5,2,3] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] e
  in (f,) }""",
}

CASES = golden_cases(globals())
test_jaxpr_matches_jax, test_every_case_has_golden_text, test_golden_texts_are_what_jax_prints = \
    golden_jaxpr_tests(CASES, GOLDEN, (justjax,), lambda: (pytest.importorskip("jax"),))


# ---------------------------------------------------------------------------------------------
# Values: batched results equal the per-example results stacked.

B = 3



def _rand(seed: int, *shape: int, dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _batched(seed: int, shape: tuple, axis: int | None) -> np.ndarray:
    """An operand with B examples along `axis` (or one example if `axis` is None)."""
    if axis is None:
        return _rand(seed, *shape)
    return np.moveaxis(_rand(seed, B, *shape), 0, axis)


DOT_CASES = {
    "matmul": ((((1,), (0,)), ((), ())), (2, 3), (3, 4)),
    "vecvec": ((((0,), (0,)), ((), ())), (3,), (3,)),
    "outer": ((((), ()), ((), ())), (2,), (3,)),
    "batch": ((((2,), (1,)), ((0,), (0,))), (2, 3, 4), (2, 4, 5)),
    "two_batch_dims": ((((3,), (2,)), ((0, 1), (1, 0))), (2, 3, 4, 5), (3, 2, 5, 4)),
    "multi": ((((1, 3), (2, 0)), ((0,), (1,))), (2, 3, 4, 5), (5, 2, 3, 6)),
    "batch_not_leading": ((((0,), (2,)), ((2,), (0,))), (3, 4, 2), (2, 5, 3)),
}
AXES = [(0, 0), (1, None), (None, 1), (-1, 0), (None, -1), (-1, None), (2, -1)]


@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("name", sorted(DOT_CASES))
def test_dot_general_batched_along_any_axis(name: str, axes: tuple) -> None:
    dims, lhs_shape, rhs_shape = DOT_CASES[name]
    lhs_axis, rhs_axis = [None if a is None else min(a, len(s)) if a >= 0 else a
                          for a, s in zip(axes, (lhs_shape, rhs_shape), strict=True)]
    lhs, rhs = _batched(0, lhs_shape, lhs_axis), _batched(1, rhs_shape, rhs_axis)
    fun = lambda a, b: lax.dot_general(a, b, dims)  # noqa: E731
    got = justjax.vmap(fun, in_axes=(lhs_axis, rhs_axis))(lhs, rhs)
    np.testing.assert_allclose(got, stack_per_example(fun, lhs, rhs, in_axes=(lhs_axis, rhs_axis)),
                               rtol=1e-5, atol=1e-5)


def test_dot_general_batched_keeps_dtypes_and_params() -> None:
    lhs, rhs = _rand(0, B, 2, 5, dtype=np.int8), _rand(1, 5, B, 3, dtype=np.int8)
    fun = lambda a, b: lax.dot(a, b, preferred_element_type=np.int32)  # noqa: E731
    got = justjax.vmap(fun, in_axes=(0, 1))(lhs, rhs)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, stack_per_example(fun, lhs, rhs, in_axes=(0, 1)))
    mixed = justjax.vmap(lax.dot, in_axes=(None, 0))(_rand(2, 2, 5), _rand(3, B, 5, 3,
                                                                           dtype=np.int32))
    assert mixed.dtype == np.float32 and mixed.shape == (B, 2, 3)


def test_nested_vmap_of_dot() -> None:
    x, y = _rand(0, 4, B, 6), _rand(1, 4, B, 6)
    got = justjax.vmap(justjax.vmap(jnp.dot))(x, y)
    np.testing.assert_allclose(got, np.einsum("abi,abi->ab", x, y), rtol=1e-5, atol=1e-5)
    # All pairs: the inner vmap maps x's rows, the outer y's rows.
    pairs = justjax.vmap(justjax.vmap(jnp.dot, in_axes=(0, None)), in_axes=(None, 0))
    np.testing.assert_allclose(pairs(x[0], y[0]), y[0] @ x[0].T, rtol=1e-5, atol=1e-5)
    triple = justjax.vmap(justjax.vmap(justjax.vmap(jnp.dot), in_axes=(1, None)),
                          in_axes=(None, 2))
    a, b = _rand(2, 2, 4, 6), _rand(3, 2, 6, 5)
    got = triple(a, b)
    want = np.stack([np.stack([np.einsum("ai,ai->a", a[:, j], b[:, :, k])
                               for j in range(4)]) for k in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_per_example_matmuls() -> None:
    # Per-example weights: each example has its own (3, 4) matrix and (2, 3) activations.
    x, w = _rand(0, 5, 2, 3), _rand(1, 5, 3, 4)
    np.testing.assert_allclose(justjax.vmap(jnp.matmul)(x, w), x @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(justjax.vmap(lambda a, b: a @ b, in_axes=(None, 0))(x[0], w),
                               x[0] @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(justjax.vmap(jnp.matmul, in_axes=(0, None))(x, w[0]),
                               x @ w[0], rtol=1e-5, atol=1e-5)
    # A batch of layers applied to a batch of vectors (matvec) and stacked-batch matmul.
    v = _rand(2, 5, 3)
    np.testing.assert_allclose(justjax.vmap(jnp.matmul)(v, w), np.einsum("bi,bij->bj", v, w),
                               rtol=1e-5, atol=1e-5)
    xb = _rand(3, 2, 5, 7, 3)
    np.testing.assert_allclose(justjax.vmap(jnp.matmul, in_axes=(1, 0))(xb, w),
                               np.einsum("cbni,bij->bcnj", xb, w), rtol=1e-5, atol=1e-5)


def test_einsum_and_tensordot_under_vmap() -> None:
    a, b = _rand(0, 5, 2, 3), _rand(1, 3, 5, 4)
    got = justjax.vmap(lambda x, y: jnp.einsum("ij,jk->ik", x, y), in_axes=(0, 1))(a, b)
    np.testing.assert_allclose(got, np.einsum("bij,jbk->bik", a, b), rtol=1e-5, atol=1e-5)
    d = np.swapaxes(b, 0, 1).swapaxes(1, 2)  # (5, 4, 3)
    got = justjax.vmap(lambda x, y: jnp.einsum("ij,kj->ki", x, y), in_axes=(None, 0))(a[0], d)
    np.testing.assert_allclose(got, np.einsum("ij,bkj->bki", a[0], d), rtol=1e-5, atol=1e-5)
    c = _rand(2, 5, 3, 4, 2)
    got = justjax.vmap(lambda x, y: jnp.tensordot(x, y, 1), in_axes=(None, 0))(a[0], c)
    np.testing.assert_allclose(got, np.einsum("ij,bjkl->bikl", a[0], c), rtol=1e-5, atol=1e-5)
    got = justjax.vmap(lambda x, y: jnp.tensordot(x, y, ([0, 1], [1, 0])))(
        _rand(3, 5, 2, 3), _rand(4, 5, 3, 2))
    np.testing.assert_allclose(got, np.einsum("bij,bji->b", _rand(3, 5, 2, 3),
                                              _rand(4, 5, 3, 2)), rtol=1e-5, atol=1e-5)


def _conv_fun(**params):
    return lambda x, w: lax.conv_general_dilated(x, w, **params)


CONV_CASES = {
    "plain": (dict(window_strides=(1, 1), padding="SAME"), (2, 3, 5, 4), (4, 3, 3, 2)),
    "strided_dilated": (dict(window_strides=(2, 1), padding=((1, 0), (0, 2)),
                             lhs_dilation=(1, 2), rhs_dilation=(2, 1)),
                        (2, 2, 6, 4), (3, 2, 2, 2)),
    "feature_groups": (dict(window_strides=(1, 1), padding="VALID", feature_group_count=2),
                       (2, 4, 5, 4), (6, 2, 2, 2)),
    "depthwise": (dict(window_strides=(1, 1), padding="SAME", feature_group_count=3),
                  (2, 3, 4, 4), (3, 1, 3, 3)),
    "batch_groups": (dict(window_strides=(1, 1), padding="VALID", batch_group_count=2),
                     (4, 3, 4, 4), (6, 3, 2, 2)),
    "nhwc_groups": (dict(window_strides=(1, 1), padding="SAME", feature_group_count=2,
                         dimension_numbers=("NHWC", "HWIO", "NHWC")),
                    (2, 4, 5, 4), (3, 2, 2, 6)),
    "nhwc_batch_groups": (dict(window_strides=(1, 2), padding="VALID", batch_group_count=3,
                               dimension_numbers=("NHWC", "HWIO", "NHWC")),
                          (6, 4, 5, 2), (2, 2, 2, 3)),
    "scrambled": (dict(window_strides=(1, 2), padding="VALID",
                       dimension_numbers=("WNCH", "OHWI", "CWHN")),
                  (5, 2, 6, 3), (3, 2, 2, 6)),
}
CONV_AXES = [(0, 0), (1, None), (None, 2), (-1, 1), (None, 0), (4, None), (2, -1)]


@pytest.mark.parametrize("axes", CONV_AXES, ids=str)
@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv_batched_along_any_axis(name: str, axes: tuple) -> None:
    params, lhs_shape, rhs_shape = CONV_CASES[name]
    lhs, rhs = _batched(0, lhs_shape, axes[0]), _batched(1, rhs_shape, axes[1])
    fun = _conv_fun(**params)
    got = justjax.vmap(fun, in_axes=axes)(lhs, rhs)
    np.testing.assert_allclose(got, stack_per_example(fun, lhs, rhs, in_axes=axes), rtol=1e-5, atol=1e-5)


def test_conv_batched_integers_and_preferred_type() -> None:
    fun = _conv_fun(window_strides=(1,), padding="SAME", feature_group_count=2,
                    preferred_element_type=np.int32)
    lhs, rhs = _rand(0, 2, B, 4, 6, dtype=np.int8), _rand(1, 4, 2, 3, B, dtype=np.int8)
    got = justjax.vmap(fun, in_axes=(1, 3))(lhs, rhs)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, stack_per_example(fun, lhs, rhs, in_axes=(1, 3)))


def test_conv_empty_batch() -> None:
    fun = _conv_fun(window_strides=(1, 1), padding="SAME")
    for axes, lhs, rhs in [((0, None), np.ones((0, 2, 3, 4, 4)), np.ones((5, 3, 3, 3))),
                           ((None, 1), np.ones((2, 3, 4, 4)), np.ones((5, 0, 3, 3, 3))),
                           ((1, 0), np.ones((2, 0, 3, 4, 4)), np.ones((0, 5, 3, 3, 3)))]:
        got = justjax.vmap(fun, in_axes=axes)(lhs.astype(np.float32), rhs.astype(np.float32))
        assert got.shape == (0, 2, 5, 4, 4) and got.dtype == np.float32


def test_nested_vmap_of_conv() -> None:
    fun = _conv_fun(window_strides=(1, 1), padding="SAME", feature_group_count=2)
    x, w = _rand(0, 3, 2, 4, 4, 4), _rand(1, 2, 6, 2, 2, 2)
    # Outer vmap over kernels, inner over inputs: all (kernel, input) pairs.
    got = justjax.vmap(justjax.vmap(fun, in_axes=(0, None)), in_axes=(None, 0))(x, w)
    want = np.stack([np.stack([np.asarray(fun(xi, wj)) for xi in x]) for wj in w])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    both = justjax.vmap(justjax.vmap(fun), in_axes=(1, 2))(
        np.broadcast_to(x, (2, 3, 2, 4, 4, 4)).swapaxes(0, 1),
        np.broadcast_to(w[:, None], (2, 3, 6, 2, 2, 2)).transpose(1, 2, 0, 3, 4, 5))
    want = np.stack([np.stack([np.asarray(fun(x[i], w[j])) for i in range(3)])
                     for j in range(2)])
    np.testing.assert_allclose(both, want, rtol=1e-5, atol=1e-5)


def test_vmap_of_grad_and_grad_of_vmap() -> None:
    conv = _conv_fun(window_strides=(2, 1), padding=((1, 0), (0, 1)), feature_group_count=2)
    loss = lambda x, w: (jnp.tanh(conv(x, w)) * 0.5).sum()  # noqa: E731
    x, w = _rand(0, 4, 2, 4, 5, 5), _rand(1, 6, 2, 2, 2)
    per_example = justjax.grad(loss, argnums=(0, 1))
    got = justjax.vmap(per_example, in_axes=(0, None))(x, w)
    want = stack_per_example(per_example, x, w, in_axes=(0, None))
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    summed = justjax.grad(lambda x, w: justjax.vmap(loss, in_axes=(0, None))(x, w).sum(),
                          argnums=1)(x, w)
    np.testing.assert_allclose(summed, want[1].sum(0), rtol=1e-4, atol=1e-5)
    mm = lambda a, b: jnp.sin(a @ b).sum()  # noqa: E731
    a, b = _rand(2, 5, 2, 3), _rand(3, 3, 4)
    got = justjax.vmap(justjax.grad(mm, argnums=1), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(got, stack_per_example(justjax.grad(mm, argnums=1), a, b,
                                          in_axes=(0, None)), rtol=1e-5, atol=1e-6)


def _checksum(x) -> list[float]:
    x = np.asarray(x, np.float64)
    weights = np.cos(np.arange(x.size) * 1.3).reshape(x.shape)
    return [float(x.sum()), float((x * weights).sum())]


def _inputs(*shape: int, k: int = 0) -> np.ndarray:
    return np.sin(np.arange(int(np.prod(shape))) * 0.7 + k).reshape(shape)


def _grouped_conv(x, w):
    return lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 1)), rhs_dilation=(1, 2),
                                    feature_group_count=2)


def test_values_recorded_from_jax() -> None:
    # Checksums [sum, cos-weighted sum] of the same programs run by JAX 0.10.2 in float64.
    with x64_mode(True):
        x, w = _inputs(2, 4, 5, 5), _inputs(6, 2, 2, 2, k=1)
        cases = {
            "jacfwd conv": (justjax.jacfwd(_grouped_conv, argnums=1)(x, w),
                            [6.8822944214, 12.8050049007]),
            "jacrev conv": (justjax.jacrev(_grouped_conv)(x, w),
                            [44.1293193858, -0.5633235946]),
            "jacfwd dot": (justjax.jacfwd(lambda a, b: jnp.tanh(jnp.einsum("ij,jk->ik", a, b)),
                                          argnums=1)(_inputs(3, 4), _inputs(4, 2, k=2)),
                           [1.5866456136, 0.8914751629]),
            "jacrev dot": (justjax.jacrev(lambda a, b: jnp.tanh(jnp.einsum("ij,jk->ik", a, b)))(
                _inputs(3, 4), _inputs(4, 2, k=2)), [-1.5721700724, 2.0205840131]),
            "hessian conv": (justjax.hessian(lambda w: jnp.tanh(_grouped_conv(x, w)).sum())(w),
                             [-20.6790754795, 29.6177100822]),
            "vmap grad conv": (justjax.vmap(justjax.grad(
                lambda x, w: jnp.sin(_grouped_conv(x, w)).sum(), argnums=1),
                in_axes=(1, None))(_inputs(2, 3, 4, 5, 5), w),
                [4.6378974473, 13.1148509928]),
            "grad vmap conv": (justjax.grad(lambda x, w: jnp.sin(justjax.vmap(
                _grouped_conv, in_axes=(None, 3))(x, w)).sum(), argnums=1)(
                x, _inputs(6, 2, 2, 3, 2)), [7.2076843126, 13.9147569394]),
            "batch groups nhwc": (justjax.vmap(lambda x, w: lax.conv_general_dilated(
                x, w, (1, 1), "VALID", batch_group_count=2,
                dimension_numbers=("NHWC", "HWIO", "NHWC")), in_axes=(2, 3))(
                _inputs(4, 5, 3, 5, 3), _inputs(2, 2, 3, 3, 6, k=3)),
                [-189.9859040936, -58.8745571601]),
        }
        for name, (got, want) in cases.items():
            np.testing.assert_allclose(_checksum(got), want, rtol=1e-9, atol=1e-9,
                                       err_msg=name)


def test_shape_errors_are_jax_s() -> None:
    mm = lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())))  # noqa: E731
    with pytest.raises(TypeError, match=r"dot_general requires contracting dimensions to have "
                       r"the same shape, got \(3,\) and \(4,\)\."):
        justjax.vmap(mm, in_axes=(None, 2))(np.ones((2, 3)), np.ones((4, 4, 5)))
    conv = lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID")  # noqa: E731
    with pytest.raises(ValueError, match=r"but 15 // 5 != 2\."):
        justjax.vmap(conv)(np.ones((5, 2, 3, 6)), np.ones((5, 4, 2, 3)))
