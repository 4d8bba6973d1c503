"""Behaviour of the contraction, convolution and windowed-reduction primitives beyond the op
records: jaxprs printed exactly as JAX 0.10.2 prints them, JAX's error texts, XLA's integer
and mixed-dtype semantics, and the padding / dimension-number helpers.

Expected strings were read off real JAX; the `needs_jax` tests at the end compare directly.
"""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import justjax as jax
from justjax import lax
from tests.records.lax_dot_conv import conv_reference


def put(x, dtype=None):
    return jax.device_put(np.asarray(x, dtype=dtype))


def zeros(dtype, shape):
    return put(np.zeros(shape, ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype))


# ---------------------------------------------------------------------------------------------
# Golden jaxprs: (name, traced function source, argument (dtype, shape)s, what JAX printed).

GOLDEN = [
    ('dot', 'lambda x, y: lax.dot(x, y)',
     [('float32', (2, 3)), ('float32', (3, 4))], """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) }"""),
    ('dot_preferred', 'lambda x, y: lax.dot(x, y, preferred_element_type=np.float32)',
     [('float32', (2, 3)), ('float32', (3, 4))], """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""),
    ('dot_highest', 'lambda x, y: lax.dot(x, y, precision=lax.Precision.HIGHEST)',
     [('float32', (2, 3)), ('float32', (3, 4))], """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
    ] a b
  in (c,) }"""),
    ('dot_precision_pair', "lambda x, y: lax.dot(x, y, precision=('high', 'highest'))",
     [('float32', (2, 3)), ('float32', (3, 4))], """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGH, Precision.HIGHEST)
    ] a b
  in (c,) }"""),
    ('dot_algorithm', "lambda x, y: lax.dot(x, y, precision='F16_F16_F32')",
     [('float32', (2, 3)), ('float32', (3, 4))], """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=F16_F16_F32
    ] a b
  in (c,) }"""),
    ('dot_general_batch', 'lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))',
     [('float32', (2, 3, 4)), ('float32', (2, 4, 5))], """\
{ lambda ; a:f32[2,3,4] b:f32[2,4,5]. let
    c:f32[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b
  in (c,) }"""),
    ('dot_general_int8', 'lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)',
     [('int8', (2, 3)), ('int8', (3, 4))], """\
{ lambda ; a:i8[2,3] b:i8[3,4]. let
    c:i32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=int32
    ] a b
  in (c,) }"""),
    ('dot_general_mixed', 'lambda x, y: lax.dot_general(x, y, ((1, 0), ((), ())))',
     [('bfloat16', (2, 3)), ('float32', (3, 4))], """\
{ lambda ; a:bf16[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) }"""),
    ('dot_scalars', 'lambda x: lax.dot_general(x, 2.0, (((), ()), ((), ())))',
     [('float32', (3,))], """\
{ lambda ; a:f32[3]. let
    b:f32[3] = dot_general[dimension_numbers=(([], []), ([], []))] a 2.0:f32[]
  in (b,) }"""),
    ('batch_matmul', 'lambda x, y: lax.batch_matmul(x, y)',
     [('float32', (2, 3, 4)), ('float32', (2, 4, 5))], """\
{ lambda ; a:f32[2,3,4] b:f32[2,4,5]. let
    c:f32[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b
  in (c,) }"""),
    ('conv_same', "lambda x, w: lax.conv(x, w, (1, 1), 'SAME')",
     [('float32', (1, 2, 5, 5)), ('float32', (3, 2, 3, 3))], """\
{ lambda ; a:f32[1,2,5,5] b:f32[3,2,3,3]. let
    c:f32[1,3,5,5] = conv_general_dilated[
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
    ] a b
  in (c,) }"""),
    ('conv_valid', "lambda x, w: lax.conv(x, w, (1, 1), 'VALID')",
     [('float32', (1, 2, 5, 5)), ('float32', (3, 2, 3, 3))], """\
{ lambda ; a:f32[1,2,5,5] b:f32[3,2,3,3]. let
    c:f32[1,3,3,3] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 0), (0, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""),
    ('conv_dilated', 'lambda x, w: lax.conv_general_dilated(x, w, (2, 2), ((1, 1), (1, 1)), lhs_dilation=(1, 1), rhs_dilation=(2, 2))',
     [('float32', (1, 2, 5, 5)), ('float32', (3, 2, 3, 3))], """\
{ lambda ; a:f32[1,2,5,5] b:f32[3,2,3,3]. let
    c:f32[1,3,2,2] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 2)
      window_strides=(2, 2)
    ] a b
  in (c,) }"""),
    ('conv_nhwc', "lambda x, w: lax.conv_general_dilated(x, w, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))",
     [('float32', (1, 5, 5, 2)), ('float32', (3, 3, 2, 4))], """\
{ lambda ; a:f32[1,5,5,2] b:f32[3,3,2,4]. let
    c:f32[1,5,5,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""),
    ('conv_groups', "lambda x, w: lax.conv_general_dilated(x, w, (1, 1), 'SAME', feature_group_count=2)",
     [('float32', (1, 2, 5, 5)), ('float32', (4, 1, 3, 3))], """\
{ lambda ; a:f32[1,2,5,5] b:f32[4,1,3,3]. let
    c:f32[1,4,5,5] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=2
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""),
    ('conv_precision', "lambda x, w: lax.conv_general_dilated(x, w, (1, 1), 'VALID', precision='highest', preferred_element_type=np.float32)",
     [('float32', (1, 2, 5, 5)), ('float32', (3, 2, 3, 3))], """\
{ lambda ; a:f32[1,2,5,5] b:f32[3,2,3,3]. let
    c:f32[1,3,3,3] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 0), (0, 0))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""),
    ('conv_1d_batch_groups', "lambda x, w: lax.conv_general_dilated(x, w, (2,), 'SAME_LOWER', batch_group_count=2)",
     [('float32', (4, 3, 8)), ('float32', (6, 3, 3))], """\
{ lambda ; a:f32[4,3,8] b:f32[6,3,3]. let
    c:f32[2,6,4] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
      feature_group_count=1
      lhs_dilation=(1,)
      out_sharding=None
      padding=((1, 0),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(1,)
      window_strides=(2,)
    ] a b
  in (c,) }"""),
    ('conv_int8', 'lambda x, w: lax.conv_general_dilated(x, w, (1, 1), [(0, 1), (1, 0)], preferred_element_type=np.int32)',
     [('int8', (1, 2, 5, 5)), ('int8', (3, 2, 3, 3))], """\
{ lambda ; a:i8[1,2,5,5] b:i8[3,2,3,3]. let
    c:i32[1,3,4,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 1), (1, 0))
      precision=None
      preferred_element_type=int32
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""),
    ('conv_transpose_same', "lambda x, w: lax.conv_transpose(x, w, (2, 2), 'SAME')",
     [('float32', (2, 5, 5, 3)), ('float32', (3, 3, 3, 4))], """\
{ lambda ; a:f32[2,5,5,3] b:f32[3,3,3,4]. let
    c:f32[2,10,10,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(2, 2)
      out_sharding=None
      padding=((2, 1), (2, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""),
    ('conv_transpose_consistent', 'lambda x, w: lax.conv_transpose(x, w, (3, 2), ((1, 1), (0, 2)), use_consistent_padding=True)',
     [('float32', (2, 5, 5, 3)), ('float32', (3, 3, 3, 4))], """\
{ lambda ; a:f32[2,5,5,3] b:f32[3,3,3,4]. let
    c:f32[2,13,9,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(3, 2)
      out_sharding=None
      padding=((1, 1), (2, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""),
    ('reduce_window_sum', "lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), 'VALID')",
     [('float32', (4, 4))], """\
{ lambda ; a:f32[4,4]. let
    b:f32[3,3] = reduce_window_sum[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a
  in (b,) }"""),
    ('reduce_window_max', "lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), 'VALID')",
     [('float32', (4, 4))], """\
{ lambda ; a:f32[4,4]. let
    b:f32[2,2] = reduce_window_max[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] a
  in (b,) }"""),
    ('reduce_window_min_same', "lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 2), (1, 1), 'SAME')",
     [('float32', (4, 4))], """\
{ lambda ; a:f32[4,4]. let
    b:f32[4,4] = reduce_window_min[
      base_dilation=(1, 1)
      padding=((0, 1), (0, 1))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a
  in (b,) }"""),
    ('reduce_window_mul', "lambda x: lax.reduce_window(x, 1.0, lax.mul, (2,), (1,), 'VALID')",
     [('float32', (5,))], """\
{ lambda ; a:f32[5]. let
    b:f32[4] = reduce_window[
      base_dilation=(1,)
      consts=()
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = mul c d in (e,) }
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a 1.0:f32[]
  in (b,) }"""),
    ('reduce_window_lambda', "lambda x: lax.reduce_window(x, 0.0, lambda a, b: lax.add(a, lax.mul(2.0, b)), (2,), (1,), 'VALID')",
     [('float32', (5,))], """\
{ lambda ; a:f32[5]. let
    b:f32[4] = reduce_window[
      base_dilation=(1,)
      consts=()
      jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = mul 2.0:f32[] d
          f:f32[] = add c e
        in (f,) }
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a 0.0:f32[]
  in (b,) }"""),
    ('reduce_window_dilated', 'lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (1,), [(1, 0)], base_dilation=(2,), window_dilation=(1,))',
     [('float32', (5,))], """\
{ lambda ; a:f32[5]. let
    b:f32[9] = reduce_window_sum[
      base_dilation=(2,)
      padding=((1, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a
  in (b,) }"""),
    ('reduce_window_int', "lambda x: lax.reduce_window(x, 0, lax.add, (2,), (1,), 'VALID')",
     [('int32', (5,))], """\
{ lambda ; a:i32[5]. let
    b:i32[4] = reduce_window_sum[
      base_dilation=(1,)
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a
  in (b,) }"""),
    ('reduce_window_pool', "lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'SAME')",
     [('float32', (1, 4, 4, 2))], """\
{ lambda ; a:f32[1,4,4,2]. let
    b:f32[1,2,2,2] = reduce_window_max[
      base_dilation=(1, 1, 1, 1)
      padding=((0, 0), (0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1, 1)
      window_dimensions=(1, 2, 2, 1)
      window_strides=(1, 2, 2, 1)
    ] a
  in (b,) }"""),
    ('reduce_window_variadic', "lambda x, y: lax.reduce_window((x, y), (0.0, 1.0), lambda a, b: (lax.add(a[0], b[0]), lax.mul(a[1], b[1])), (2,), (1,), 'VALID')",
     [('float32', (5,)), ('float32', (5,))], """\
{ lambda ; a:f32[5] b:f32[5]. let
    c:f32[4] d:f32[4] = reduce_window[
      base_dilation=(1,)
      consts=()
      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[] h:f32[]. let
          i:f32[] = add e g
          j:f32[] = mul f h
        in (i, j) }
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a b 0.0:f32[] 1.0:f32[]
  in (c, d) }"""),
    ('reduce_window_traced_init', "lambda x, i: lax.reduce_window(x, i, lax.add, (2,), (1,), 'VALID')",
     [('float32', (5,)), ('float32', ())], """\
{ lambda ; a:f32[5] b:f32[]. let
    c:f32[4] = reduce_window[
      base_dilation=(1,)
      consts=()
      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add d e in (f,) }
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a b
  in (c,) }"""),
    ('reduce_window_int_max_int_init', "lambda x: lax.reduce_window(x, np.int32(-2**31), lax.max, (3,), (2,), 'SAME')",
     [('int32', (7,))], """\
{ lambda ; a:i32[7]. let
    b:i32[4] = reduce_window_max[
      base_dilation=(1,)
      padding=((1, 1),)
      window_dilation=(1,)
      window_dimensions=(3,)
      window_strides=(2,)
    ] a
  in (b,) }"""),
]


@pytest.mark.parametrize("name,source,specs,expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_jaxpr(name, source, specs, expected):
    fun = eval(source)  # noqa: S307 - the sources above, in the namespace JAX's were run in
    args = [zeros(dtype, shape) for dtype, shape in specs]
    assert str(jax.make_jaxpr(fun)(*args)) == expected


# ---------------------------------------------------------------------------------------------
# Errors: (name, failing call, exception class, JAX's message).

def f32(shape):
    return put(np.zeros(shape, np.float32))


def i32(shape):
    return put(np.zeros(shape, np.int32))


def i8(shape):
    return put(np.zeros(shape, np.int8))


ERRORS = [
    ('dot_contracting_mismatch', 'lambda: lax.dot_general(f32((2, 3)), f32((2, 3)), (((1,), (0,)), ((), ())))',
     TypeError, 'dot_general requires contracting dimensions to have the same shape, got (3,) and (2,).'),
    ('dot_matmul_mismatch', 'lambda: lax.dot(f32((2, 3)), f32((4, 5)))',
     ValueError, 'jax.lax.dot: dimension_numbers must be specified when not performing simple un-batched matrix-matrix, matrix-vector, or vector-vector products; got lhs_shape=(2, 3) rhs_shape=(4, 5)'),
    ('dot_needs_dims', 'lambda: lax.dot(f32((2, 3)), f32((2, 3, 4)))',
     ValueError, 'jax.lax.dot: dimension_numbers must be specified when not performing simple un-batched matrix-matrix, matrix-vector, or vector-vector products; got lhs_shape=(2, 3) rhs_shape=(2, 3, 4)'),
    ('dot_lhs_dim_range', 'lambda: lax.dot_general(f32((2, 3)), f32((2, 3)), (((3,), (1,)), ((), ())))',
     TypeError, 'dot_general requires lhs dimension numbers to be nonnegative and less than the number of axes of the lhs value, got lhs_batch of () and lhs_contracting of (3,) for lhs of rank 2'),
    ('dot_rhs_dim_range', 'lambda: lax.dot_general(f32((2, 3)), f32((2, 3)), (((1,), (-1,)), ((), ())))',
     TypeError, 'dot_general requires rhs dimension numbers to be nonnegative and less than the number of axes of the rhs value, got rhs_batch of () and rhs_contracting of (-1,) for rhs of rank 2'),
    ('dot_batch_count', 'lambda: lax.dot_general(f32((2, 3)), f32((2, 3)), (((1,), (1,)), ((0,), ())))',
     TypeError, 'dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch (0,) and rhs_batch ().'),
    ('dot_batch_contract_overlap', 'lambda: lax.dot_general(f32((2, 3)), f32((2, 3)), (((1,), (1,)), ((1,), (1,))))',
     TypeError, 'dot_general requires lhs batch dimensions to be disjoint from contracting dimensions, got lhs_batch (1,) and lhs_contracting (1,).'),
    ('dot_batch_shape', 'lambda: lax.dot_general(f32((2, 3)), f32((4, 3)), (((1,), (1,)), ((0,), (0,))))',
     TypeError, 'dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got (2,) and (4,).'),
    ('dot_repeated_contract', 'lambda: lax.dot_general(f32((3, 3)), f32((3, 3)), (((0, 0), (0, 1)), ((), ())))',
     TypeError, 'dot_general requires lhs contracting dimensions to be distinct, got lhs_contracting (0, 0).'),
    ('dot_repeated_batch', 'lambda: lax.dot_general(f32((3, 3)), f32((3, 3)), (((), ()), ((0, 0), (0, 1))))',
     TypeError, 'dot_general requires lhs batch dimensions to be distinct, got lhs_batch (0, 0).'),
    ('dot_preferred_narrower', 'lambda: lax.dot(i32((2, 3)), i32((3, 2)), preferred_element_type=np.int8)',
     TypeError, '`preferred_element_type` must not be narrower than the original type, got preferred_element_type of int8 for result type of int32.'),
    ('dot_bad_precision', "lambda: lax.dot(f32((2, 3)), f32((3, 2)), precision='bogus')",
     ValueError, "Precision argument must be one of:\n- None,\n- a string in ['highest', 'float32', 'high', 'bfloat16_3x', 'tensorfloat32', 'default', 'bfloat16', 'fastest', None],\n- a lax.Precision value,\n- a tuple of two lax.Precision values or strings,\n- a lax.DotAlgorithmPreset or the name of one of these presets, or\n- a lax.DotAlgorithm value;\nbut got bogus."),
    ('dot_cpu_algorithm', "lambda: lax.dot(f32((2, 3)), f32((3, 2)), precision='TF32_TF32_F32')",
     ValueError, "The precision 'TF32_TF32_F32' is not supported by dot_general on CPU"),
    ('dot_list_operand', 'lambda: lax.dot([1.0, 2.0], f32((2,)))',
     TypeError, "Error interpreting argument to dot_general as a JAX value. The problematic value is of type <class 'list'> and was passed to dot_general at position 0.\n"),
    ('batch_matmul_rank', 'lambda: lax.batch_matmul(f32((3, 4)), f32((2, 4, 5)))',
     ValueError, 'Arguments to batch_matmul must have same ndim, got 2, 3'),
    ('batch_matmul_1d', 'lambda: lax.batch_matmul(f32((3,)), f32((3,)))',
     ValueError, 'Arguments to batch_matmul must be at least 2D, got 1, 1'),
    ('conv_dtypes', "lambda: lax.conv(f32((1, 2, 5, 5)), i32((3, 2, 3, 3)), (1, 1), 'SAME')",
     TypeError, 'lax.conv_general_dilated requires arguments to have the same dtypes, got float32, int32.'),
    ('conv_in_features', "lambda: lax.conv(f32((1, 2, 5, 5)), f32((3, 1, 3, 3)), (1, 1), 'VALID')",
     ValueError, 'conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs input feature dimension size, but 2 // 1 != 1.'),
    ('conv_feature_group_divide', "lambda: lax.conv_general_dilated(f32((1, 3, 5, 5)), f32((4, 1, 3, 3)), (1, 1), 'VALID', feature_group_count=2)",
     ValueError, 'conv_general_dilated feature_group_count must divide lhs feature dimension size, but 2 does not divide 3.'),
    ('conv_feature_group_out', "lambda: lax.conv_general_dilated(f32((1, 4, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', feature_group_count=2)",
     ValueError, 'conv_general_dilated rhs output feature dimension size must be a multiple of feature_group_count, but 3 is not a multiple of 2.'),
    ('conv_batch_group_divide', "lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((2, 2, 3, 3)), (1, 1), 'VALID', batch_group_count=2)",
     ValueError, 'conv_general_dilated batch_group_count must divide lhs batch dimension size, but 2 does not divide 1.'),
    ('conv_both_groups', "lambda: lax.conv_general_dilated(f32((2, 2, 5, 5)), f32((2, 1, 3, 3)), (1, 1), 'VALID', feature_group_count=2, batch_group_count=2)",
     ValueError, 'At most one of batch_group_count and feature_group_count may be > 1, got batch_group_count=2 and feature_group_count=2'),
    ('conv_strides_rank', "lambda: lax.conv(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1,), 'VALID')",
     ValueError, 'conv_general_dilated window and window_strides must have the same number of dimensions, but got 2 and 1'),
    ('conv_rank', "lambda: lax.conv(f32((1, 2, 5, 5)), f32((3, 2, 3)), (1, 1), 'VALID')",
     TypeError, 'convolution requires lhs and rhs ndim to be equal, got 4 and 3.'),
    ('conv_string_padding_lhs_dilation', "lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'SAME', lhs_dilation=(2, 2))",
     ValueError, 'String padding is not implemented for transposed convolution using this op. Please either exactly specify the required padding or use conv_transpose.'),
    ('conv_pad_count', 'lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), [(1, 1)])',
     TypeError, 'Wrong number of explicit pads for convolution: expected 2, got 1.'),
    ('conv_pad_pairs', 'lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), [(1, 1), (1,)])',
     ValueError, 'padding argument to conv_general_dilated should be a string or a sequence of (low, high) pairs, got [(1, 1), (1,)]'),
    ('conv_negative_padding', 'lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), [(-3, -3), (0, 0)])',
     ValueError, 'Negative padding is larger than the size of the corresponding dimension: got padding=((-3, -3), (0, 0)) for lhs_shape[2:]=(np.int64(5), np.int64(5))'),
    ('conv_bad_padding_string', "lambda: lax.conv(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'FULL')",
     RuntimeError, "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FULL."),
    ('conv_dnums_length', "lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', dimension_numbers=('NCHW', 'OIHW'))",
     TypeError, 'convolution dimension_numbers list/tuple must be length 3, got 2.'),
    ('conv_dnums_spatial', "lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', dimension_numbers=('NCHW', 'OIHW', 'NCXW'))",
     TypeError, "convolution dimension_numbers elements must each have the same set of spatial characters, got ('NCHW', 'OIHW', 'NCXW')."),
    ('conv_dnums_chars', "lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', dimension_numbers=('NCHW', 'OIHW', 'NHWW'))",
     TypeError, "convolution dimension_numbers[2] must contain the characters 'N' and 'C' exactly once, got NHWW."),
    ('conv_dnums_len', "lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', dimension_numbers=('NCH', 'OIH', 'NCH'))",
     TypeError, 'convolution dimension_numbers[0] must have len equal to the ndim of lhs and rhs, got 3 for lhs and rhs shapes (1, 2, 5, 5) and (3, 2, 3, 3).'),
    ('conv_preferred_float_to_int', "lambda: lax.conv(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', preferred_element_type=np.int32)",
     TypeError, 'Input type is incompatible with `preferred_element_type`. The compatible combinations of (input_type, preferred_element_type) are (integral, integral), (integral, floating), (floating, floating), (complex, complex.'),
    ('conv_preferred_narrower', "lambda: lax.conv(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', preferred_element_type=np.float16)",
     TypeError, '`preferred_element_type` must not be narrower than the original type.'),
    ('conv_preferred_signedness', "lambda: lax.conv(i8((1, 2, 5, 5)), i8((3, 2, 3, 3)), (1, 1), 'VALID', preferred_element_type=np.uint32)",
     TypeError, '`preferred_element_type` must have the same signedness as the original type.'),
    ('conv_dilation_zero', "lambda: lax.conv_general_dilated(f32((1, 2, 5, 5)), f32((3, 2, 3, 3)), (1, 1), 'VALID', rhs_dilation=(0, 1))",
     TypeError, 'All dilations must be positive, got (0, 1).'),
    ('rw_init_dtype', "lambda: lax.reduce_window(f32((10,)), 0, lax.mul, (2,), (2,), 'VALID')",
     TypeError, "reduce_window got inconsistent dtypes for operands and init_values: got operand dtypes [dtype('float32')] and init_value dtypes [dtype('int32')]."),
    ('rw_bool_sum', "lambda: lax.reduce_window(put(np.ones(4, bool)), False, lax.add, (2,), (2,), 'VALID')",
     TypeError, 'operand to reduce_window_sum must have a number dtype, got bool'),
    ('rw_window_rank', "lambda: lax.reduce_window(f32((10,)), 0.0, lax.add, (2, 2), (2,), 'VALID')",
     TypeError, 'reduce_window got the wrong number of window_dimensions for operand: got operand shape (10,) with window_dimensions (2, 2).'),
    ('rw_strides_rank', "lambda: lax.reduce_window(f32((10,)), 0.0, lax.add, (2,), (2, 2), 'VALID')",
     TypeError, 'reduce_window got inconsistent window_strides and window_dimensions: got window_strides (2, 2) and window_dimensions (2,).'),
    ('rw_zero_window', "lambda: lax.reduce_window(f32((10,)), 0.0, lax.add, (0,), (2,), 'VALID')",
     TypeError, 'reduce_window window_dimensions must have every element be strictly positive, got (0,).'),
    ('rw_zero_stride', "lambda: lax.reduce_window(f32((10,)), 0.0, lax.add, (2,), (0,), 'VALID')",
     TypeError, 'reduce_window window_strides must have every element be strictly positive, got (0,).'),
    ('rw_zero_dilation', "lambda: lax.reduce_window(f32((10,)), 0.0, lax.add, (2,), (1,), 'VALID', base_dilation=(0,))",
     TypeError, 'All dilations must be positive, got (0,).'),
    ('rw_dilation_rank', "lambda: lax.reduce_window(f32((10,)), 0.0, lax.add, (2,), (1,), 'VALID', window_dilation=(2, 2))",
     ValueError, 'safe_map() argument 2 is longer than argument 1'),
    ('rw_tree_mismatch', "lambda: lax.reduce_window((f32((4,)), f32((4,))), (0.0,), lax.add, (2,), (1,), 'VALID')",
     ValueError, 'Operands must have the same tree structure as init_values: PyTreeDef((*, *)) vs. PyTreeDef((*,))'),
    ('rw_output_tree', "lambda: lax.reduce_window(f32((4,)), np.float32(1), lambda a, b: (a, b), (2,), (1,), 'VALID')",
     ValueError, 'reduce_window output must have the same tree structure as the operands PyTreeDef(*) vs. PyTreeDef((*, *))'),
    ('rw_init_shape', "lambda: lax.reduce_window(f32((4,)), np.ones(2, np.float32), lax.mul, (2,), (1,), 'VALID')",
     TypeError, 'reduce_window expected init_values to be scalars but init_values have shapes [(2,)].'),
    ('rw_bad_padding_string', "lambda: lax.reduce_window(f32((4,)), 0.0, lax.add, (2,), (1,), 'FULL')",
     RuntimeError, "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FULL."),
    ('rw_closes_over_tracer', "lambda: jax.make_jaxpr(lambda x, s: lax.reduce_window(x, 1.0, lambda a, b: lax.add(lax.mul(a, b), s), (2,), (1,), 'VALID'))(f32((4,)), f32(()))",
     NotImplementedError, "Reduction computations can't close over Tracers. Please open an issue at https://github.com/jax-ml/jax."),
]

# JAX fails these inside its own zip helpers; only the exception class is comparable.
_INTERNAL_MESSAGES = {"rw_dilation_rank"}


@pytest.mark.parametrize("name,source,exc_class,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_error(name, source, exc_class, message):
    with pytest.raises(exc_class) as info:
        eval(source)()  # noqa: S307 - the calls listed above
    if name not in _INTERNAL_MESSAGES:
        assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# XLA semantics (values read off JAX 0.10.2 on CPU).

def test_int8_dot_wraps():
    out = lax.dot(put(np.full((1, 40), 100, np.int8)), put(np.full((40, 1), 3, np.int8)))
    assert out.dtype == np.int8
    assert np.asarray(out).tolist() == [[-32]]


def test_int8_dot_accumulates_in_preferred_type():
    out = lax.dot(put(np.full((1, 40), 100, np.int8)), put(np.full((40, 1), 3, np.int8)),
                  preferred_element_type=np.int32)
    assert out.dtype == np.int32
    assert np.asarray(out).tolist() == [[12000]]


def test_float_dot_with_integer_result_converts_the_sum():
    lhs = put(np.array([[0.6, 0.7, -1.6], [2.7, -1.5, 0.0]], np.float32))
    out = lax.dot(lhs, put(np.ones((3, 1), np.float32)), preferred_element_type=np.int32)
    assert out.dtype == np.int32
    assert np.asarray(out).tolist() == [[0], [1]]


def test_mixed_integer_operands_convert_to_the_result_type():
    out = lax.dot(put(np.array([[200, 100]], np.uint8)), put(np.array([[1], [1]], np.int8)))
    assert out.dtype == np.int8
    assert np.asarray(out).tolist() == [[44]]
    out = lax.dot(put(np.array([[-1]], np.int8)), put(np.array([[1]], np.int8)),
                  preferred_element_type=np.uint32)
    assert out.dtype == np.uint32
    assert np.asarray(out).tolist() == [[4294967295]]


@pytest.mark.parametrize("lhs,rhs,expected", [
    ("float32", "int32", "float32"), ("bfloat16", "float32", "float32"),
    ("float16", "bfloat16", "bfloat16"), ("int8", "uint8", "int8"), ("bool", "int32", "int32"),
    ("complex64", "float32", "complex64"), ("bool", "bool", "bool"),
])
def test_mixed_dtype_result(lhs, rhs, expected):
    out = lax.dot(zeros(lhs, (2, 3)), zeros(rhs, (3, 2)))
    assert out.dtype == (ml_dtypes.bfloat16 if expected == "bfloat16" else np.dtype(expected))


def test_bool_dot_is_or_of_ands():
    rhs = put(np.array([[True], [True]]))
    assert np.asarray(lax.dot(put(np.array([[True, False]])), rhs)).tolist() == [[True]]
    assert np.asarray(lax.dot(put(np.array([[False, False]])), rhs)).tolist() == [[False]]


def test_dot_of_python_scalars_is_weak():
    out = lax.dot_general(2.0, 3.0, (((), ()), ((), ())))
    assert repr(out) == "Array(6., dtype=float32, weak_type=True)"
    assert not lax.dot_general(2.0, np.float32(3), (((), ()), ((), ()))).weak_type


def test_int_dimension_numbers_are_accepted():
    out = lax.dot_general(f32((2, 3)), f32((3, 4)), ((1, 0), ((), ())))
    assert out.shape == (2, 4)


def test_preferred_dtype_is_canonicalized():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = lax.dot(f32((2, 3)), f32((3, 2)), preferred_element_type=np.float64)
    assert out.dtype == np.float32
    assert lax.dot(f32((2, 3)), f32((3, 2)), preferred_element_type=float).dtype == np.float32


def test_int8_conv_wraps():
    out = lax.conv(put(np.full((1, 1, 3, 3), 100, np.int8)),
                   put(np.full((1, 1, 3, 3), 2, np.int8)), (1, 1), "VALID")
    assert out.dtype == np.int8
    assert np.asarray(out).tolist() == [[[[8]]]]


def test_int8_reduce_window_sum_wraps():
    out = lax.reduce_window(put(np.full(4, 100, np.int8)), 0, lax.add, (3,), (1,), "VALID")
    assert np.asarray(out).tolist() == [44, 44]


def test_reduce_window_holes_and_padding_hold_the_init_value():
    x = put(np.arange(10, dtype=np.float32))
    out = lax.reduce_window(x, -np.inf, lax.max, (3,), (2,), ((1, 2),), base_dilation=(2,))
    assert np.asarray(out).tolist() == list(range(10))
    out = lax.reduce_window(x, -np.inf, lax.max, (3,), (2,), ((1, 2),), window_dilation=(2,))
    assert np.asarray(out).tolist() == [3, 5, 7, 9, 9]
    out = lax.reduce_window(x, 1.0, lax.mul, (2,))
    assert np.asarray(out).tolist() == [0, 2, 6, 12, 20, 30, 42, 56, 72]


def test_reduce_window_sum_of_bfloat16_rounds_once():
    x = put(np.array([1, 2, 3, 4], ml_dtypes.bfloat16) * np.array(100.3, ml_dtypes.bfloat16))
    out = lax.reduce_window(x, 0.0, lax.add, (3,), (1,))
    assert out.dtype == ml_dtypes.bfloat16
    assert np.asarray(out).astype(np.float32).tolist() == [604.0, 904.0]


def test_reduce_window_monoid_choice():
    """add/max/min with their identity become dedicated primitives; anything else is generic."""
    x = f32((4,))

    def prim(*args):
        return jax.make_jaxpr(lambda v: lax.reduce_window(v, *args, (2,)))(x).eqns[0].primitive.name

    assert prim(0.0, lax.add) == "reduce_window_sum"
    assert prim(0, lax.add) == "reduce_window_sum"
    assert prim(1.0, lax.add) == "reduce_window"
    assert prim(-np.inf, lax.max) == "reduce_window_max"
    assert prim(0.0, lax.max) == "reduce_window"
    assert prim(np.inf, lax.min) == "reduce_window_min"
    assert prim(1.0, lax.mul) == "reduce_window"
    int_x = i32((4,))
    assert jax.make_jaxpr(lambda v: lax.reduce_window(
        v, np.int32(-2**31), lax.max, (2,)))(int_x).eqns[0].primitive.name == "reduce_window_max"


def test_reduce_window_weak_type_follows_operand():
    out = lax.reduce_window(put(np.ones(3, np.float32)), 0.0, lax.add, (2,), (1,))
    assert repr(out) == "Array([2., 2.], dtype=float32)"
    assert repr(lax.reduce_window(put(np.ones(3, np.float32)), 1.0, lax.mul, (2,), (1,))) == \
        "Array([1., 1.], dtype=float32)"


# Slices of conv_transpose results that JAX computed for x = arange / 10 and a ramp kernel.
_TRANSPOSE_X = np.arange(2 * 5 * 5 * 3, dtype=np.float32).reshape(2, 5, 5, 3) / 10
_TRANSPOSE_W = (np.arange(3 * 3 * 3 * 4, dtype=np.float32).reshape(3, 3, 3, 4) - 50) / 40


@pytest.mark.parametrize("kwargs,shape,total", [
    (dict(strides=(2, 2), padding="SAME"), (2, 10, 10, 4), 6928.89892578125),
    (dict(strides=(2, 1), padding="VALID"), (2, 11, 7, 4), 3556.1220703125),
    (dict(strides=(2, 2), padding=((1, 2), (0, 1))), (2, 10, 8, 4), 1703.0408935546875),
    (dict(strides=(3, 2), padding=((1, 1), (0, 2)), use_consistent_padding=True),
     (2, 13, 9, 4), 5076.56494140625),
    (dict(strides=(2, 2), padding="SAME", rhs_dilation=(2, 1)), (2, 10, 10, 4),
     5428.01025390625),
])
def test_conv_transpose(kwargs, shape, total):
    out = lax.conv_transpose(put(_TRANSPOSE_X), put(_TRANSPOSE_W), **kwargs)
    assert out.shape == shape
    np.testing.assert_allclose(float(np.asarray(out, np.float64).sum()), total, rtol=1e-5)


def test_conv_transpose_values():
    out = np.asarray(lax.conv_transpose(put(_TRANSPOSE_X), put(_TRANSPOSE_W), (2, 2), "SAME"))
    expected = [[3.174999713897705, 4.607500076293945, 6.039999961853027, 7.472499847412109],
                [14.899999618530273, 17.9899959564209, 21.080001831054688, 24.170001983642578],
                [3.625, 5.282500267028809, 6.940000057220459, 8.59749984741211]]
    np.testing.assert_allclose(out[1, 3:6, 4, :], expected, rtol=1e-5)
    # The same transposed convolution written out: the input dilated by the strides.
    reference = conv_reference(_TRANSPOSE_X, _TRANSPOSE_W, (1, 1), ((2, 1), (2, 1)),
                               lhs_dilation=(2, 2),
                               dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(out, reference, rtol=1e-5, atol=1e-5)


def test_traced_reduce_window_init_goes_generic():
    closed = jax.make_jaxpr(lambda x, i: lax.reduce_window(x, i, lax.add, (2,), (1,)))(
        f32((5,)), f32(()))
    args = [put(np.arange(5, dtype=np.float32)), put(np.float32(10))]
    from justjax._src.core.jaxpr import eval_jaxpr
    out, = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    assert np.asarray(out).tolist() == [11.0, 13.0, 15.0, 17.0]


# ---------------------------------------------------------------------------------------------
# Helpers and enums.

def test_precision_enum():
    assert repr(lax.Precision("highest")) == "Precision.HIGHEST"
    assert str(lax.Precision.HIGH) == "HIGH"
    assert lax.Precision(2) is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH


@pytest.mark.parametrize("precision,expected", [
    (None, None),
    ("highest", (lax.Precision.HIGHEST, lax.Precision.HIGHEST)),
    (lax.Precision.HIGH, (lax.Precision.HIGH, lax.Precision.HIGH)),
    (("fastest", "float32"), (lax.Precision.DEFAULT, lax.Precision.HIGHEST)),
    ([lax.Precision.HIGH, lax.Precision.DEFAULT], (lax.Precision.HIGH, lax.Precision.DEFAULT)),
    ("BF16_BF16_F32", lax.DotAlgorithmPreset.BF16_BF16_F32),
    (lax.DotAlgorithmPreset.F32_F32_F32, lax.DotAlgorithmPreset.F32_F32_F32),
])
def test_canonicalize_precision(precision, expected):
    assert lax.canonicalize_precision(precision) == expected


def test_default_matmul_precision_flag():
    def printed():
        return str(jax.make_jaxpr(lambda a, b: lax.dot(a, b))(f32((2, 2)), f32((2, 2))))

    with jax.config.override("jax_default_matmul_precision", "highest"):
        assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in printed()
    with jax.config.override("jax_default_matmul_precision", "BF16_BF16_F32"):
        assert "precision=BF16_BF16_F32" in printed()
    assert "precision" not in printed()


def test_algorithm_presets_compute_in_their_types():
    lhs = put(np.array([[1.0001, 2.0, 3.0]], np.float32))
    rhs = put(np.ones((3, 1), np.float32))
    out = lax.dot(lhs, rhs, precision="F32_F32_F32")
    np.testing.assert_allclose(np.asarray(out), [[6.0001]], rtol=1e-6)
    # F16 inputs are rounded to float16 (1.0001 -> 1.0) before multiplying.
    out = lax.dot(lhs, rhs, precision=lax.DotAlgorithmPreset.F16_F16_F16)
    assert out.dtype == np.float32
    assert np.asarray(out).tolist() == [[6.0]]


def test_padtype_to_pads():
    assert lax.padtype_to_pads((5, 6, 7), (3, 2, 4), (2, 1, 3), "SAME") == [(1, 1), (0, 1), (1, 2)]
    assert lax.padtype_to_pads((5, 6, 7), (3, 2, 4), (2, 1, 3), "same_lower") == \
        [(1, 1), (1, 0), (2, 1)]
    assert lax.padtype_to_pads((5, 6, 7), (3, 2, 4), (2, 1, 3), "VALID") == [(0, 0)] * 3
    assert lax.padtype_to_pads((4,), (2,), (2,), lax.PaddingType.SAME) == [(0, 0)]


def test_dimension_number_helpers():
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == \
        ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_general_permutations(("WNCH", "OHWI", "CWHN")) == \
        ((1, 2, 3, 0), (0, 3, 1, 2), (3, 0, 2, 1))
    dnums = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NCHW", "OIHW", "NCHW"))
    assert repr(dnums) == ("ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), "
                           "out_spec=(0, 1, 2, 3))")
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), dnums) is dnums


def test_shape_tuples():
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_transpose_shape_tuple((2, 5, 5, 3), (3, 3, 3, 4), (2, 2), "SAME", dn) == \
        (2, 10, 10, 4)
    assert lax.conv_general_shape_tuple((2, 5, 5, 3), (3, 3, 3, 4), (2, 2), "SAME", dn) == \
        (2, 3, 3, 4)
    assert lax.conv_shape_tuple((2, 3, 5, 5), (4, 3, 3, 3), (2, 2), "SAME") == (2, 4, 3, 3)
    assert lax.conv_shape_tuple((2, 3, 5, 5), (4, 3, 3, 3), (2, 2), ((1, 0), (2, 2))) == \
        (2, 4, 2, 4)
    assert lax.reduce_window_shape_tuple((10,), (2,), (1,), ((0, 0),)) == (9,)
    assert lax.reduce_window_shape_tuple((5, 4), (3, 2), (2, 1), ((1, 2), (0, 1)), (2, 3),
                                         (1, 2)) == (5, 9)


def test_public_names():
    for name in ["dot_general_p", "conv_general_dilated_p", "reduce_window_p",
                 "reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
                 "DotAlgorithm", "DotAlgorithmPreset", "ConvDimensionNumbers", "padtype_to_pads"]:
        assert hasattr(lax, name), name


# ---------------------------------------------------------------------------------------------
# Against real JAX.

def _random_args(rng, shapes, dtype):
    if np.dtype(dtype).kind in "iu":
        return [rng.integers(-20, 20, s).astype(dtype) for s in shapes]
    return [rng.normal(size=s).astype(dtype) for s in shapes]


_JAX_CASES = [
    ("dot_general", lambda l, a, b: l.dot_general(a, b, (((1, 3), (2, 0)), ((0,), (1,)))),
     [(2, 3, 4, 5), (5, 2, 3, 6)]),
    ("conv_groups", lambda l, a, b: l.conv_general_dilated(
        a, b, (2, 1), ((1, 2), (-1, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "OHWI", "NCHW"), feature_group_count=2),
     [(2, 7, 6, 4), (6, 2, 3, 2)]),
    ("conv_batch_groups", lambda l, a, b: l.conv_general_dilated(
        a, b, (1,), "SAME", batch_group_count=3), [(6, 2, 7), (9, 2, 3)]),
    ("reduce_window_generic", lambda l, a: l.reduce_window(
        a, np.zeros((), a.dtype), lambda x, y: l.max(x, l.abs(y)), (2, 3), (1, 2), "SAME",
        (2, 1), (1, 2)), [(4, 7)]),
    ("reduce_window_min", lambda l, a: l.reduce_window(
        a, np.array(np.inf, a.dtype), l.min, (3, 1), (2, 1), "SAME_LOWER", None, (2, 1)),
     [(7, 3)]),
]


@pytest.mark.needs_jax
@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("name,fun,shapes", _JAX_CASES, ids=[c[0] for c in _JAX_CASES])
def test_matches_jax(name, fun, shapes, dtype):
    real_jax = pytest.importorskip("jax")
    if name == "reduce_window_min" and dtype == "int32":
        pytest.skip("inf is not an int32 identity")
    args = _random_args(np.random.default_rng(0), shapes, dtype)
    expected = np.asarray(fun(real_jax.lax, *args))
    got = np.asarray(fun(lax, *[put(a) for a in args]))
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert str(jax.make_jaxpr(lambda *xs: fun(lax, *xs))(*[put(a) for a in args])) == \
        str(real_jax.make_jaxpr(lambda *xs: fun(real_jax.lax, *xs))(*args))
