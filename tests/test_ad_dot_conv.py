"""Derivatives of `dot_general`, `conv_general_dilated` and the windowed reductions
(`reduce_window_sum/max/min`, the generic `reduce_window`, `select_and_gather_add`,
`select_and_scatter_add`).

- Jaxprs of gradients print the same equations as JAX 0.10.2 (golden text read off real JAX).
- Gradient and tangent values match JAX's for convolutions with strides, dilations, feature
  and batch groups, and for pooling with ties (checksums read off real JAX in float64).
- Conventions: the first maximal element of a window takes the gradient; transposes keep
  the operand dtypes (`preferred_element_type`, complex/real mixes); reverse mode of the
  generic reduce_window and of a max with window dilation is refused, as in JAX.
The `needs_jax` tests at the end recompute every golden with real JAX.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import x64_mode

# ---------------------------------------------------------------------------------------------
# Golden jaxprs, as real JAX prints them.

GOLDEN_DENSE_W = """\
{ lambda a:f32[4,3]; b:f32[3,5]. let
    c:f32[4,5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,5] = broadcast_in_dim 1.0:f32[]
    e:f32[5,3] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] d a
    f:f32[3,5] = transpose[permutation=(1, 0)] e
  in (f,) }"""


GOLDEN_DENSE_X = """\
{ lambda a:f32[3,5]; b:f32[4,3]. let
    c:f32[4,5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] b a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,5] = broadcast_in_dim 1.0:f32[]
    e:f32[4,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] d a
  in (e,) }"""


GOLDEN_MLP = """\
{ lambda a:f32[4,3]; b:f32[3,5] c:f32[5]. let
    d:f32[4,5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    e:f32[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] c
    f:f32[4,5] = add d e
    g:f32[4,5] = tanh f
    h:f32[4,5] = sub 1.0:f32[] g
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] g
    i:f32[4,5] = broadcast_in_dim 1.0:f32[]
    j:f32[4,5] = mul i h
    k:f32[4,5] = mul j g
    l:f32[4,5] = add_any j k
    m:f32[5] = reduce_sum[axes=(0,) out_sharding=None] l
    n:f32[1,5] = reshape[dimensions=None new_sizes=(1, 5) sharding=None] m
    o:f32[5] = reduce_sum[axes=(0,) out_sharding=None] n
    p:f32[5,3] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] l a
    q:f32[3,5] = transpose[permutation=(1, 0)] p
  in (q, o) }"""


GOLDEN_DG_BATCH = """\
{ lambda ; a:f32[2,3,4] b:f32[2,5,3]. let
    c:f32[2,4,5] = dot_general[dimension_numbers=(([1], [2]), ([0], [0]))] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
    d:f32[2,4,5] = broadcast_in_dim 1.0:f32[]
    e:f32[2,5,3] = dot_general[dimension_numbers=(([1], [2]), ([0], [0]))] d a
    f:f32[2,4,3] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] d b
    g:f32[2,3,4] = transpose[permutation=(0, 2, 1)] f
  in (g, e) }"""


GOLDEN_BF16_PREF = """\
{ lambda a:f32[3,5]; b:bf16[4,3]. let
    c:bf16[3,5] = convert_element_type[new_dtype=bfloat16 weak_type=False] a
    d:f32[4,5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] b c
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    e:f32[4,5] = broadcast_in_dim 1.0:f32[]
    f:f32[4,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] e c
    g:bf16[4,3] = convert_element_type[new_dtype=bfloat16 weak_type=False] f
  in (g,) }"""


GOLDEN_DOT_INT_OPERAND = """\
{ lambda a:i32[3,4]; b:f32[2,3]. let
    c:f32[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] b a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[2,4] = broadcast_in_dim 1.0:f32[]
    e:f32[2,3] = dot_general[dimension_numbers=(([1], [1]), ([], []))] d a
  in (e,) }"""


GOLDEN_DOT_COMPLEX_VJP = """\
{ lambda ; a:c64[3,4] b:f32[4,2] c:c64[3,2]. let
    _:c64[3,2] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
    d:c64[2,4] = dot_general[dimension_numbers=(([0], [0]), ([], []))] c a
    e:c64[4,2] = transpose[permutation=(1, 0)] d
    f:f32[4,2] = convert_element_type[new_dtype=float32 weak_type=False] e
    g:c64[3,4] = dot_general[dimension_numbers=(([1], [1]), ([], []))] c b
  in (g, f) }"""


GOLDEN_CONV_FGC = """\
{ lambda ; a:f32[2,4,7,6] b:f32[6,2,3,2]. let
    c:f32[2,6,2,11] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=2
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, 0), (0, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] c
    d:f32[2,6,2,11] = broadcast_in_dim 1.0:f32[]
    e:f32[6,2,3,2] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(1, 0, 2, 3), rhs_spec=(1, 0, 2, 3), out_spec=(1, 0, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, -1), (0, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a d
    f:f32[2,3,2,3,2] = reshape[
      dimensions=None
      new_sizes=(2, 3, 2, 3, 2)
      sharding=None
    ] b
    g:f32[3,4,3,2] = reshape[
      dimensions=(1, 0, 2, 3, 4)
      new_sizes=(3, 4, 3, 2)
      sharding=None
    ] f
    h:f32[3,4,3,2] = rev[dimensions=(2, 3)] g
    i:f32[2,4,7,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(1, 0, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=2
      lhs_dilation=(2, 1)
      out_sharding=None
      padding=((3, 5), (1, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(1, 2)
    ] d h
  in (i, e) }"""


GOLDEN_CONV_BGC = """\
{ lambda ; a:f32[4,7,6,2] b:f32[3,2,2,6]. let
    c:f32[2,7,6,6] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (0, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] c
    d:f32[2,7,6,6] = broadcast_in_dim 1.0:f32[]
    e:f32[3,2,2,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(3, 0, 1, 2), rhs_spec=(3, 0, 1, 2), out_spec=(2, 3, 0, 1))
      feature_group_count=2
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (0, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a d
    f:f32[3,2,2,2,3] = reshape[
      dimensions=None
      new_sizes=(3, 2, 2, 2, 3)
      sharding=None
    ] b
    g:f32[3,2,4,3] = reshape[
      dimensions=(0, 1, 3, 2, 4)
      new_sizes=(3, 2, 4, 3)
      sharding=None
    ] f
    h:f32[3,2,4,3] = rev[dimensions=(0, 1)] g
    i:f32[2,7,6,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(2, 3, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=2
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] d h
    j:f32[2,7,6,2,2] = reshape[
      dimensions=None
      new_sizes=(2, 7, 6, 2, 2)
      sharding=None
    ] i
    k:f32[4,7,6,2] = reshape[
      dimensions=(3, 0, 1, 2, 4)
      new_sizes=(4, 7, 6, 2)
      sharding=None
    ] j
  in (k, e) }"""


GOLDEN_CONV_PREF = """\
{ lambda ; a:bf16[4,7,6,2] b:bf16[3,2,2,6]. let
    c:f32[4,7,6,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (0, 1))
      precision=None
      preferred_element_type=float32
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] c
    d:f32[4,7,6,6] = broadcast_in_dim 1.0:f32[]
    e:f32[4,7,6,2] = convert_element_type[new_dtype=float32 weak_type=False] a
    f:f32[3,2,2,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(3, 0, 1, 2), rhs_spec=(3, 0, 1, 2), out_spec=(2, 3, 0, 1))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (0, 1))
      precision=None
      preferred_element_type=float32
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] e d
    g:bf16[3,2,2,6] = convert_element_type[new_dtype=bfloat16 weak_type=False] f
    h:bf16[3,2,2,6] = rev[dimensions=(0, 1)] b
    i:f32[3,2,2,6] = convert_element_type[new_dtype=float32 weak_type=False] h
    j:f32[4,7,6,2] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(2, 3, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 0))
      precision=None
      preferred_element_type=float32
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] d i
    k:bf16[4,7,6,2] = convert_element_type[new_dtype=bfloat16 weak_type=False] j
  in (k, g) }"""


GOLDEN_CONV_EMPTY = """\
{ lambda a:f32[1,2,0]; b:f32[3,2,2]. let
    c:f32[1,3,0] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
      feature_group_count=1
      lhs_dilation=(1,)
      out_sharding=None
      padding=((0, 0),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(1,)
      window_strides=(1,)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
    _:f32[1,3,0] = broadcast_in_dim 1.0:f32[]
    d:f32[3,2,2] = broadcast_in_dim 0.0:f32[]
  in (d,) }"""


GOLDEN_MAXPOOL = """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,2,4] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 1), (0, 1))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] b
    c:f32[2,2,4] = broadcast_in_dim 1.0:f32[]
    d:f32[2,3,4] = select_and_scatter_add[
      padding=((0, 0), (0, 1), (0, 1))
      select_prim=ge
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] c a
  in (d,) }"""


GOLDEN_MAXPOOL_JVP = """\
{ lambda ; a:f32[2,3,4] b:f32[2,3,4]. let
    c:f32[2,2,4] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 1), (0, 1))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] a
    d:f32[2,2,4] = select_and_gather_add[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 1), (0, 1))
      select_prim=ge
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] b a
    e:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
    f:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] d
  in (e, f) }"""


GOLDEN_MAXPOOL_2ND = """\
{ lambda ; a:f32[2,3,4] b:f32[2,3,4]. let
    c:f32[2,2,4] = reduce_window_max[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 1), (0, 1))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] a
    d:f32[2,2,4] = select_and_gather_add[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 1), (0, 1))
      select_prim=ge
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] b a
    e:f32[2,2,4] = integer_pow[y=2] c
    f:f32[2,2,4] = mul 2.0:f32[] c
    g:f32[2,2,4] = mul d f
    h:f32[2,2,4] = mul 2.0:f32[] c
    i:f32[2,2,4] = mul 2.0:f32[] d
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] e
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] g
    j:f32[2,2,4] = broadcast_in_dim 1.0:f32[]
    k:f32[2,2,4] = mul j h
    l:f32[2,2,4] = mul j i
    m:f32[2,3,4] = select_and_scatter_add[
      padding=((0, 0), (0, 1), (0, 1))
      select_prim=ge
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] k a
    n:f32[2,3,4] = select_and_scatter_add[
      padding=((0, 0), (0, 1), (0, 1))
      select_prim=ge
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] l a
  in (m, n) }"""


GOLDEN_SUM_DIL = """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[3,3,5] = reduce_window_sum[
      base_dilation=(1, 2, 1)
      padding=((0, 1), (1, 0), (2, 1))
      window_dilation=(1, 1, 2)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] b
    c:f32[3,3,5] = broadcast_in_dim 1.0:f32[]
    d:f32[2,6,6] = pad[
      padding_config=((np.int64(0), np.int64(-1), 0), (np.int64(0), np.int64(1), 1), (np.int64(0), np.int64(1), 0))
    ] c 0.0:f32[]
    e:f32[2,3,4] = reduce_window_sum[
      base_dilation=(1, 1, 1)
      padding=((0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 2)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] d
  in (e,) }"""


GOLDEN_MIN_BD = """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,2,3] = reduce_window_min[
      base_dilation=(1, 2, 1)
      padding=((0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1)
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] b
    c:f32[2,2,3] = broadcast_in_dim 1.0:f32[]
    d:f32[2,5,4] = pad[padding_config=((0, 0, 0), (0, 0, 1), (0, 0, 0))] a inf:f32[]
    e:f32[2,5,4] = select_and_scatter_add[
      padding=((0, 0), (0, 0), (0, 0))
      select_prim=le
      window_dimensions=(1, 2, 2)
      window_strides=(1, 2, 1)
    ] c d
    f:f32[2,3,4] = slice[
      limit_indices=(2, 5, 4)
      start_indices=(0, 0, 0)
      strides=(1, 2, 1)
    ] e
  in (f,) }"""


GOLDEN_PROD_JVP = """\
{ lambda ; a:f32[2,3] b:f32[2,3]. let
    c:f32[2,2] d:f32[2,2] = reduce_window[
      base_dilation=(1, 1)
      consts=()
      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[] h:f32[]. let
          i:f32[] = mul e g
          j:f32[] = mul f g
          k:f32[] = mul e h
          l:f32[] = add_any j k
        in (i, l) }
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(1, 2)
      window_strides=(1, 1)
    ] a b 1.0:f32[] 0.0:f32[]
  in (c, d) }"""


GOLDEN_VARIADIC_JVP = """\
{ lambda ; a:f32[2,3] b:f32[2,3]. let
    c:f32[2,3] = mul a 2.0:f32[]
    d:f32[2,3] = mul b 2.0:f32[]
    e:f32[2,2] f:f32[2,2] g:f32[2,2] h:f32[2,2] = reduce_window[
      base_dilation=(1, 1)
      consts=()
      jaxpr={ lambda ; i:f32[] j:f32[] k:f32[] l:f32[] m:f32[] n:f32[] o:f32[] p:f32[]. let
          q:f32[] = add i m
          r:f32[] = add k o
          s:f32[] = mul j n
          t:f32[] = mul l n
          u:f32[] = mul j p
          v:f32[] = add_any t u
          w:f32[] = add s i
          x:f32[] = add v k
        in (q, w, r, x) }
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(1, 2)
      window_strides=(1, 1)
    ] a c b d 0.0:f32[] 0.0:f32[] 0.0:f32[] 0.0:f32[]
  in (e, f, g, h) }"""


# Programs: `prog(jx)` builds the function and arguments with the module `jx` (justjax, or
# real jax in the `needs_jax` tests).

def _dense_w(jx):
    x, w = jx.numpy.ones((4, 3)), jx.numpy.ones((3, 5))
    return jx.grad(lambda w: (x @ w).sum()), (w,)


def _dense_x(jx):
    x, w = jx.numpy.ones((4, 3)), jx.numpy.ones((3, 5))
    return jx.grad(lambda x: (x @ w).sum()), (x,)


def _mlp(jx):
    jnp = jx.numpy
    x, w, b = jnp.ones((4, 3)), jnp.ones((3, 5)), jnp.ones(5)
    return jx.grad(lambda w, b: jnp.tanh(x @ w + b).sum(), argnums=(0, 1)), (w, b)


def _dg_batch(jx):
    jnp = jx.numpy
    dims = (((1,), (2,)), ((0,), (0,)))
    return (jx.grad(lambda x, w: jx.lax.dot_general(x, w, dims).sum(), argnums=(0, 1)),
            (jnp.ones((2, 3, 4)), jnp.ones((2, 5, 3))))


def _bf16_pref(jx):
    jnp = jx.numpy
    w = jnp.ones((3, 5))
    fun = lambda x: jx.lax.dot(  # noqa: E731
        x, w.astype(jnp.bfloat16), preferred_element_type=jnp.float32).sum()
    return jx.grad(fun), (jnp.ones((4, 3), jnp.bfloat16),)


def _dot_int_operand(jx):
    jnp = jx.numpy
    w = jnp.ones((3, 4), jnp.int32)
    return jx.grad(lambda x: jx.lax.dot(x, w).sum()), (jnp.ones((2, 3)),)


def _dot_complex_vjp(jx):
    jnp = jx.numpy

    def pullback(a, b, ct):
        return jx.vjp(lambda a, b: jx.lax.dot(a, b), a, b)[1](ct)
    return pullback, (jnp.ones((3, 4), jnp.complex64), jnp.ones((4, 2)),
                      jnp.ones((3, 2), jnp.complex64))


def _conv_grad(jx, lhs, rhs, **params):
    fun = lambda x, w: jx.lax.conv_general_dilated(x, w, **params).sum()  # noqa: E731
    return jx.grad(fun, argnums=(0, 1)), (lhs, rhs)


def _conv_fgc(jx):
    jnp = jx.numpy
    return _conv_grad(jx, jnp.ones((2, 4, 7, 6)), jnp.ones((6, 2, 3, 2)), window_strides=(2, 1),
                      padding=((1, 0), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                      feature_group_count=2)


def _conv_bgc(jx):
    jnp = jx.numpy
    return _conv_grad(jx, jnp.ones((4, 7, 6, 2)), jnp.ones((3, 2, 2, 6)), window_strides=(1, 1),
                      padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                      batch_group_count=2)


def _conv_pref(jx):
    jnp = jx.numpy
    return _conv_grad(jx, jnp.ones((4, 7, 6, 2), jnp.bfloat16),
                      jnp.ones((3, 2, 2, 6), jnp.bfloat16), window_strides=(1, 1),
                      padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                      preferred_element_type=jnp.float32)


def _conv_empty(jx):
    jnp = jx.numpy
    x = jnp.ones((1, 2, 0))
    fun = lambda w: jx.lax.conv_general_dilated(x, w, (1,), "VALID").sum()  # noqa: E731
    return jx.grad(fun), (jnp.ones((3, 2, 2)),)


def _max_pool(jx, x):
    return jx.lax.reduce_window(x, -np.inf, jx.lax.max, (1, 2, 2), (1, 2, 1), "SAME")


def _maxpool(jx):
    return jx.grad(lambda x: _max_pool(jx, x).sum()), (jx.numpy.arange(24.).reshape(2, 3, 4),)


def _maxpool_jvp(jx):
    x = jx.numpy.arange(24.).reshape(2, 3, 4)
    return (lambda x, t: jx.jvp(lambda x: _max_pool(jx, x).sum(), (x,), (t,))), (x, x)


def _maxpool_2nd(jx):
    x = jx.numpy.arange(24.).reshape(2, 3, 4)
    grad = jx.grad(lambda x: (_max_pool(jx, x) ** 2).sum())
    return (lambda x, v: jx.jvp(grad, (x,), (v,))), (x, x)


def _sum_dil(jx):
    fun = lambda x: jx.lax.reduce_window(  # noqa: E731
        x, 0., jx.lax.add, (1, 2, 2), (1, 2, 1), ((0, 1), (1, 0), (2, 1)),
        base_dilation=(1, 2, 1), window_dilation=(1, 1, 2)).sum()
    return jx.grad(fun), (jx.numpy.arange(24.).reshape(2, 3, 4),)


def _min_bd(jx):
    fun = lambda x: jx.lax.reduce_window(  # noqa: E731
        x, np.inf, jx.lax.min, (1, 2, 2), (1, 2, 1), "VALID", base_dilation=(1, 2, 1)).sum()
    return jx.grad(fun), (jx.numpy.arange(24.).reshape(2, 3, 4),)


def _prod_jvp(jx):
    fun = lambda x: jx.lax.reduce_window(x, 1., jx.lax.mul, (1, 2), (1, 1), "VALID")  # noqa
    x = jx.numpy.ones((2, 3))
    return (lambda x, t: jx.jvp(fun, (x,), (t,))), (x, x)


def _variadic_jvp(jx):
    lax_ = jx.lax

    def fun(x):
        return lax_.reduce_window((x, x * 2), (0., 0.),
                                  lambda a, b: (a[0] + b[0], a[1] * b[1] + a[0]),
                                  (1, 2), (1, 1), "VALID")
    x = jx.numpy.ones((2, 3))
    return (lambda x, t: jx.jvp(fun, (x,), (t,))), (x, x)


JAXPR_CASES = [
    ("dense_w", _dense_w, GOLDEN_DENSE_W),
    ("dense_x", _dense_x, GOLDEN_DENSE_X),
    ("mlp", _mlp, GOLDEN_MLP),
    ("dot_general_batch", _dg_batch, GOLDEN_DG_BATCH),
    ("bf16_preferred_f32", _bf16_pref, GOLDEN_BF16_PREF),
    ("dot_int_operand", _dot_int_operand, GOLDEN_DOT_INT_OPERAND),
    ("dot_complex_vjp", _dot_complex_vjp, GOLDEN_DOT_COMPLEX_VJP),
    ("conv_feature_groups", _conv_fgc, GOLDEN_CONV_FGC),
    ("conv_batch_groups", _conv_bgc, GOLDEN_CONV_BGC),
    ("conv_bf16_preferred_f32", _conv_pref, GOLDEN_CONV_PREF),
    ("conv_empty_output", _conv_empty, GOLDEN_CONV_EMPTY),
    ("max_pool_grad", _maxpool, GOLDEN_MAXPOOL),
    ("max_pool_jvp", _maxpool_jvp, GOLDEN_MAXPOOL_JVP),
    ("max_pool_second_order", _maxpool_2nd, GOLDEN_MAXPOOL_2ND),
    ("sum_pool_dilations", _sum_dil, GOLDEN_SUM_DIL),
    ("min_pool_base_dilation", _min_bd, GOLDEN_MIN_BD),
    ("generic_prod_jvp", _prod_jvp, GOLDEN_PROD_JVP),
    ("generic_variadic_jvp", _variadic_jvp, GOLDEN_VARIADIC_JVP),
]


@pytest.mark.parametrize("name,prog,golden", JAXPR_CASES, ids=[c[0] for c in JAXPR_CASES])
def test_jaxpr_matches_jax(name: str, prog: Callable, golden: str) -> None:
    fun, args = prog(jax)
    assert str(jax.make_jaxpr(fun)(*args)) == golden


# ---------------------------------------------------------------------------------------------
# Values against JAX: cotangents (for cotangent `_weights(out)`) and tangents (along
# `_weights(arg) / 2`), summarized as [sum, weighted sum] per array; computed in float64.

def _inputs(*shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [np.sin(np.arange(int(np.prod(s))) * 0.7 + k).reshape(s) * 2.0
            for k, s in enumerate(shapes)]


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    return np.cos(np.arange(int(np.prod(shape))) * 1.3).reshape(shape)


def _checksum(g: Any) -> list[float]:
    g = np.asarray(g, np.float64)
    return [float(g.sum()), float((g * _weights(g.shape)).sum())]


BILINEAR_CASES = [
    ("conv_strided_padded", lambda l, x, w: l.conv_general_dilated(
        x, w, (2, 3), ((1, 2), (0, 1))), [(2, 3, 7, 8), (4, 3, 3, 2)]),
    ("conv_dilated", lambda l, x, w: l.conv_general_dilated(
        x, w, (2, 1), ((1, 0), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1)),
     [(2, 4, 7, 6), (6, 4, 3, 2)]),
    ("conv_feature_groups", lambda l, x, w: l.conv_general_dilated(
        x, w, (2, 1), ((1, 0), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
        feature_group_count=2), [(2, 4, 7, 6), (6, 2, 3, 2)]),
    ("conv_batch_groups_nhwc", lambda l, x, w: l.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        batch_group_count=2), [(4, 7, 6, 2), (3, 2, 2, 6)]),
    ("conv_batch_groups_strided", lambda l, x, w: l.conv_general_dilated(
        x, w, (2, 2), ((1, 1), (2, 0)), rhs_dilation=(1, 2), batch_group_count=3),
     [(6, 2, 7, 8), (6, 2, 3, 2)]),
    ("conv_depthwise_nhwc", lambda l, x, w: l.conv_general_dilated(
        x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=3), [(2, 8, 7, 3), (3, 3, 1, 6)]),
    ("conv_1d_negative_padding", lambda l, x, w: l.conv_general_dilated(
        x, w, (3,), ((-1, 2),), lhs_dilation=(2,), rhs_dilation=(2,)), [(2, 3, 9), (2, 3, 3)]),
    ("conv_transpose", lambda l, x, w: l.conv_transpose(x, w, (2, 2), "SAME"),
     [(1, 5, 4, 2), (3, 3, 2, 3)]),
    ("dot_general_batch", lambda l, x, w: l.dot_general(x, w, (((1,), (2,)), ((0,), (0,)))),
     [(2, 3, 4), (2, 5, 3)]),
    ("dot_general_multi", lambda l, x, w: l.dot_general(x, w, (((2, 0), (1, 3)), ((1,), (2,)))),
     [(3, 4, 5, 6), (7, 5, 4, 3)]),
]

# [lhs cotangent checksum, rhs cotangent checksum, tangent checksum] from JAX 0.10.2.
BILINEAR_GOLDEN = {
    "conv_strided_padded": [-0.0568921213607, 0.935774629233, 5.01299308218, -0.695800323791,
                            0.452714779824, 0.119987152721],
    "conv_dilated": [-3.22142903626, 4.10115718328, 0.511651898611, 4.37989399214,
                     -9.86653761566, 4.24052558771],
    "conv_feature_groups": [6.95905283271, -15.0380879817, 1.99856766174, 5.25140479585,
                            -1.19536430805, -4.89334159295],
    "conv_batch_groups_nhwc": [0.167158993757, 7.26586454656, 141.289638595, 15.7442676344,
                               -0.287645004212, 11.5050660905],
    "conv_batch_groups_strided": [83.2339514051, -6.30935205197, -1.65567052313,
                                  -4.34992163994, -2.42774969994, -5.32963684596],
    "conv_depthwise_nhwc": [27.6461049176, 3.16105399773, 0.0620755122788, 3.95927528173,
                            5.46484375806, 3.56016463973],
    "conv_1d_negative_padding": [-0.0615551617143, -1.2488527581, 21.9355722339,
                                 -1.52667296241, 2.1666217025, -1.38776286025],
    "conv_transpose": [-11.7023201386, -0.763818530089, -49.8444786351, 1.45486459474,
                       -6.6136959288, 0.345523032324],
    "dot_general_batch": [16.9215770112, -7.16467746059, 0.931687721392, -3.24941313338,
                          -2.30290626661, -5.20704529699],
    "dot_general_multi": [18.1199140181, 1.96799086193, -2.16674806328, 0.531735108018,
                          -3.13325357705, 1.24986298498],
}


def _bilinear_checksums(jx: Any, fun: Callable, shapes: list) -> list[float]:
    args = _inputs(*shapes)
    out, pullback = jx.vjp(lambda *a: fun(jx.lax, *a), *args)
    cts = pullback(_weights(np.shape(out)))
    _, tangent = jx.jvp(lambda *a: fun(jx.lax, *a), tuple(args),
                        tuple(_weights(a.shape) * 0.5 for a in args))
    return [*_checksum(cts[0]), *_checksum(cts[1]), *_checksum(tangent)]


@pytest.mark.parametrize("name,fun,shapes", BILINEAR_CASES, ids=[c[0] for c in BILINEAR_CASES])
def test_bilinear_values_match_jax(name: str, fun: Callable, shapes: list) -> None:
    with x64_mode(True):
        got = _bilinear_checksums(jax, fun, shapes)
    np.testing.assert_allclose(got, BILINEAR_GOLDEN[name], rtol=1e-9, atol=1e-9)


POOL_CASES = [
    ("max_pool_same", lambda l, x: l.reduce_window(
        x, -np.inf, l.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME"), (2, 5, 6, 3)),
    ("max_pool_overlapping", lambda l, x: l.reduce_window(
        x, -np.inf, l.max, (3, 3), (1, 2), ((1, 1), (0, 2))), (6, 7)),
    ("min_pool_same_lower", lambda l, x: l.reduce_window(
        x, np.inf, l.min, (2, 3), (2, 2), "SAME_LOWER"), (6, 5)),
    ("max_pool_base_dilation", lambda l, x: l.reduce_window(
        x, -np.inf, l.max, (3, 2), (2, 1), ((1, 1), (0, 1)), base_dilation=(2, 1)), (5, 4)),
    ("sum_pool_all_dilations", lambda l, x: l.reduce_window(
        x, 0.0, l.add, (2, 2), (1, 2), ((1, 0), (2, 1)), base_dilation=(2, 1),
        window_dilation=(1, 2)), (4, 5)),
]

# [cotangent checksum, tangent checksum] from JAX 0.10.2; the inputs are rounded to halves,
# so windows hold ties.
POOL_GOLDEN = {
    "max_pool_same": [0.848137030442, 0.912127715627, 1.82326249466, 0.912127715627],
    "max_pool_overlapping": [-0.129306869743, -5.21344869404, 2.1068074216, -5.21344869404],
    "min_pool_same_lower": [-0.324968370912, -0.267182653191, 1.2661760787, -0.267182653191],
    "max_pool_base_dilation": [0.678088640417, 7.07643709404, 0.498482631569, 7.07643709404],
    "sum_pool_all_dilations": [2.03399709017, 0.793110517616, 4.677203142, 0.793110517616],
}


def _pool_checksums(jx: Any, fun: Callable, shape: tuple) -> list[float]:
    x = np.round(_inputs(shape)[0] * 2) / 2
    out, pullback = jx.vjp(lambda a: fun(jx.lax, a), x)
    ct, = pullback(_weights(np.shape(out)))
    _, tangent = jx.jvp(lambda a: fun(jx.lax, a), (x,), (_weights(x.shape),))
    return [*_checksum(ct), *_checksum(tangent)]


@pytest.mark.parametrize("name,fun,shape", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pool_values_match_jax(name: str, fun: Callable, shape: tuple) -> None:
    with x64_mode(True):
        got = _pool_checksums(jax, fun, shape)
    np.testing.assert_allclose(got, POOL_GOLDEN[name], rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# Finite differences, in float64.

@pytest.mark.parametrize("name,fun,shapes", BILINEAR_CASES,
                         ids=[c[0] for c in BILINEAR_CASES])
def test_bilinear_check_grads(name: str, fun: Callable, shapes: list) -> None:
    rng = np.random.default_rng(0)
    with x64_mode(True):
        args = [rng.normal(size=s) for s in shapes]
        check_grads(lambda *a: fun(lax, *a), args, order=2, modes=("fwd", "rev"))


def _distinct(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Distinct values, at least 0.1 apart, so no window has a tie finite differences cross."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1


@pytest.mark.parametrize("name,fun,shape", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pool_check_grads(name: str, fun: Callable, shape: tuple) -> None:
    with x64_mode(True):
        x = _distinct(np.random.default_rng(1), shape)
        check_grads(lambda a: fun(lax, a), [x], order=2, modes=("fwd", "rev"))


FORWARD_ONLY_CASES = [
    ("prod", lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 3), (1, 2), "SAME")),
    ("nonidentity_init_sum", lambda x: lax.reduce_window(x, 1.0, lax.add, (2, 1), (1, 2),
                                                         ((1, 1), (0, 1)))),
    ("lambda_max_base_dilation", lambda x: lax.reduce_window(
        x, -np.inf, lambda a, b: lax.max(a, b), (2, 2), (2, 1), ((0, 1), (1, 1)),
        base_dilation=(1, 2))),
    ("variadic", lambda x: lax.reduce_window(
        (x, lax.exp(x)), (0.0, 1.0), lambda a, b: (a[0] + b[0], a[1] * b[1] + a[0]), (2, 2),
        (1, 1), "VALID")),
    ("max_window_dilation", lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (2, 3), (2, 1), ((1, 0), (0, 1)), window_dilation=(1, 2))),
]


@pytest.mark.parametrize("name,fun", FORWARD_ONLY_CASES, ids=[c[0] for c in FORWARD_ONLY_CASES])
def test_forward_only_check_grads(name: str, fun: Callable) -> None:
    with x64_mode(True):
        x = _distinct(np.random.default_rng(2), (3, 5)) - 1.0
        check_grads(fun, [x], order=2, modes=("fwd",))


# ---------------------------------------------------------------------------------------------
# Conventions and errors.

def test_max_pool_ties_pick_first_in_window() -> None:
    x = jax.numpy.array([[0., 1., 0., 1.], [1., 0., 1., 0.]])
    tangents = jax.numpy.array([[1., 2., 5., 6.], [3., 4., 7., 8.]])
    pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), "VALID")  # noqa
    _, out_tangent = jax.jvp(pool, (x,), (tangents,))
    np.testing.assert_array_equal(out_tangent, [[2., 6.]])
    grad = jax.grad(lambda x: pool(x).sum())(x)
    np.testing.assert_array_equal(grad, [[0., 1., 0., 1.], [0., 0., 0., 0.]])
    constant = jax.grad(lambda x: pool(x).sum())(jax.numpy.ones((2, 4)))
    np.testing.assert_array_equal(constant, [[1., 0., 1., 0.], [0., 0., 0., 0.]])


def test_min_pool_ties_pick_first_in_window() -> None:
    pool = lambda x: lax.reduce_window(x, np.inf, lax.min, (3,), (1,), ((1, 1),))  # noqa
    grad = jax.grad(lambda x: pool(x).sum())(jax.numpy.zeros(4))
    # Windows [pad, 0, 1], [0, 1, 2], [1, 2, 3], [2, 3, pad]: the padding never wins a tie.
    np.testing.assert_array_equal(grad, [2., 1., 1., 0.])


def test_select_and_scatter_add_transposes_select_and_gather_add() -> None:
    from justjax._src.lax import windowed
    rng = np.random.default_rng(3)
    with x64_mode(True):
        operand = _distinct(rng, (5, 7))
        tangent = rng.normal(size=(5, 7))
        params = dict(window_dimensions=(2, 3), window_strides=(2, 1),
                      padding=((1, 0), (1, 1)))
        ones = (1, 1)
        gathered = windowed._select_and_gather_add(tangent, operand, lax.ge_p,
                                                   base_dilation=ones, window_dilation=ones,
                                                   **params)
        ct = rng.normal(size=np.shape(gathered))
        scattered = windowed._select_and_scatter_add(ct, operand, lax.ge_p, **params)
        np.testing.assert_allclose(np.vdot(ct, gathered), np.vdot(scattered, tangent),
                                   rtol=1e-12)


def test_select_and_scatter_add_values() -> None:
    from justjax._src.lax import windowed
    operand = np.array([[1., 5., 2.], [4., 3., 6.]], np.float32)
    source = np.array([[10., 20.]], np.float32)
    # Windows (2, 2) at columns 0-1 and 1-2 (stride 1): maxima 5 and 6.
    out = windowed._select_and_scatter_add(source, operand, lax.ge_p, (2, 2), (1, 1),
                                           ((0, 0), (0, 0)))
    np.testing.assert_array_equal(out, [[0., 10., 0.], [0., 0., 20.]])
    low = windowed._select_and_scatter_add(source, operand, lax.le_p, (2, 2), (1, 1),
                                           ((0, 0), (0, 0)))
    np.testing.assert_array_equal(low, [[10., 0., 20.], [0., 0., 0.]])


def test_preferred_element_type_gradients_keep_operand_dtypes() -> None:
    x = np.arange(12., dtype=np.float32).reshape(4, 3) / 7
    w = np.cos(np.arange(15., dtype=np.float32)).reshape(3, 5)
    bf16 = jax.numpy.bfloat16
    gx, gw = jax.grad(lambda x, w: lax.dot(x, w, preferred_element_type=np.float32).sum(),
                      argnums=(0, 1))(x.astype(bf16), w.astype(bf16))
    assert gx.dtype == bf16 and gw.dtype == bf16
    xr, wr = x.astype(bf16).astype(np.float32), w.astype(bf16).astype(np.float32)
    np.testing.assert_allclose(np.asarray(gx, np.float32), np.ones((4, 5)) @ wr.T, rtol=1e-2)
    np.testing.assert_allclose(np.asarray(gw, np.float32), xr.T @ np.ones((4, 5)), rtol=1e-2)


def test_conv_preferred_element_type_gradients() -> None:
    rng = np.random.default_rng(4)
    x, w = rng.normal(size=(1, 3, 5, 5)), rng.normal(size=(2, 3, 3, 3))
    conv = lambda x, w, **kw: lax.conv_general_dilated(x, w, (1, 1), "SAME", **kw)  # noqa
    bf16 = jax.numpy.bfloat16
    got = jax.grad(lambda x, w: conv(x, w, preferred_element_type=np.float32).sum(),
                   argnums=(0, 1))(x.astype(bf16), w.astype(bf16))
    assert [g.dtype for g in got] == [bf16, bf16]
    rounded = [a.astype(bf16).astype(np.float32) for a in (x, w)]
    expected = jax.grad(lambda x, w: conv(x, w).sum(), argnums=(0, 1))(*rounded)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g, np.float32), e, rtol=2e-2, atol=2e-2)


def test_zero_size_contraction_gradients_are_zero() -> None:
    gx, gw = jax.grad(lambda x, w: (x @ w).sum(), argnums=(0, 1))(
        jax.numpy.ones((2, 0)), jax.numpy.ones((0, 3)))
    assert gx.shape == (2, 0) and gw.shape == (0, 3)
    gw = jax.grad(lambda w: lax.conv_general_dilated(
        jax.numpy.ones((1, 2, 0)), w, (1,), "VALID").sum())(jax.numpy.ones((3, 2, 2)))
    np.testing.assert_array_equal(gw, np.zeros((3, 2, 2)))


def test_max_pool_window_dilation_reverse_mode_is_refused() -> None:
    pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, (3,), (2,), ((1, 2),),  # noqa
                                       window_dilation=(2,))
    with pytest.raises(NotImplementedError, match=r"VJP not implemented for select_and_gather "
                       r"\(MaxPool\) with window dilation, got window_dilation=\(2,\)\."):
        jax.grad(lambda x: pool(x).sum())(jax.numpy.arange(10.))


def test_generic_reduce_window_init_tangent_is_refused() -> None:
    fun = lambda x, init: lax.reduce_window(x, init, lax.mul, (2,), (1,), "VALID")  # noqa
    with pytest.raises(TypeError, match="reduce_window jvp does not support non-zero "
                       "init_value_tangent."):
        jax.jvp(fun, (jax.numpy.ones(3), 1.0), (jax.numpy.ones(3), 1.0))


# ---------------------------------------------------------------------------------------------
# Against real JAX directly (skipped when jax is not installed).

@pytest.mark.needs_jax
@pytest.mark.parametrize("name,prog,golden", JAXPR_CASES, ids=[c[0] for c in JAXPR_CASES])
def test_golden_jaxprs_are_jax_s(name: str, prog: Callable, golden: str) -> None:
    real_jax = pytest.importorskip("jax")
    fun, args = prog(real_jax)
    assert str(real_jax.make_jaxpr(fun)(*args)) == golden


@pytest.mark.needs_jax
def test_golden_values_are_jax_s() -> None:
    real_jax = pytest.importorskip("jax")
    with real_jax.enable_x64(True):
        for name, fun, shapes in BILINEAR_CASES:
            np.testing.assert_allclose(_bilinear_checksums(real_jax, fun, shapes),
                                       BILINEAR_GOLDEN[name], rtol=1e-9, atol=1e-9)
        for name, fun, shape in POOL_CASES:
            np.testing.assert_allclose(_pool_checksums(real_jax, fun, shape),
                                       POOL_GOLDEN[name], rtol=1e-9, atol=1e-9)
