"""Tests of `lax.conv_general_dilated_patches` and `lax.conv_general_dilated_local`
(`_src/lax/convolution_patches.py`): values against a NumPy loop, layouts, dilations,
gradients, vmap, and the jaxprs JAX 0.10.2 prints (golden texts read off JAX).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import x64_mode

RNG = np.random.RandomState(0)


def _patches_nchw(x, window, strides, padding, rhs_dilation):
    """NumPy: (N, C * prod(window), *out) patches of an NCHW input (no lhs dilation)."""
    n, c, *space = x.shape
    x = np.pad(x, [(0, 0), (0, 0), *padding])
    out_space = [(s + lo + hi - (d * (w - 1) + 1)) // st + 1 for s, (lo, hi), w, st, d in
                 zip(space, padding, window, strides, rhs_dilation, strict=True)]
    out = np.zeros((n, c, *window, *out_space), x.dtype)
    for k in itertools.product(*map(range, window)):
        for o in itertools.product(*map(range, out_space)):
            at = [oi * st + ki * d for oi, ki, st, d in zip(o, k, strides, rhs_dilation,
                                                            strict=True)]
            out[(slice(None), slice(None), *k, *o)] = x[(slice(None), slice(None), *at)]
    return out.reshape(n, c * int(np.prod(window)), *out_space)


@pytest.mark.parametrize("window,strides,padding,rhs_dilation", [
    ((2, 3), (1, 1), [(0, 0), (0, 0)], (1, 1)),
    ((2, 2), (2, 1), [(1, 0), (0, 2)], (1, 2)),
    ((3,), (2,), [(1, 1)], (1,)),
])
def test_patches_against_numpy(window, strides, padding, rhs_dilation) -> None:
    x = RNG.randn(2, 3, *([6] * len(window))).astype(np.float32)
    got = lax.conv_general_dilated_patches(x, window, strides, padding,
                                           rhs_dilation=rhs_dilation)
    want = _patches_nchw(x, window, strides, padding, rhs_dilation)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def test_patches_layouts_and_dtypes() -> None:
    x = RNG.randn(2, 3, 5, 4).astype(np.float32)
    nchw = lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "SAME")
    nhwc = lax.conv_general_dilated_patches(x.transpose(0, 2, 3, 1), (2, 2), (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "OIHW", "NHWC"))
    np.testing.assert_allclose(np.asarray(nhwc), np.asarray(nchw).transpose(0, 2, 3, 1))
    # Shapes read off JAX 0.10.2.
    assert lax.conv_general_dilated_patches(
        x.transpose(0, 2, 3, 1), (2, 2), (2, 1), "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC")).shape == (2, 3, 4, 12)
    assert lax.conv_general_dilated_patches(
        x, (2, 2), (1, 1), [(1, 0), (0, 1)], lhs_dilation=(2, 1),
        rhs_dilation=(1, 2)).shape == (2, 12, 9, 3)
    assert lax.conv_general_dilated_patches(x.astype(jnp.bfloat16), (2, 3), (1, 1),
                                            "VALID").dtype == jnp.bfloat16
    assert lax.conv_general_dilated_patches(x.astype(np.int32), (2, 3), (1, 1), "VALID",
                                            preferred_element_type=jnp.float32).dtype == np.float32


def _local_nhwc(lhs, rhs, window):
    """NumPy: unshared VALID convolution, NHWC input, (H', W', C * window, O) kernel."""
    patches = _patches_nchw(lhs.transpose(0, 3, 1, 2), window, (1, 1), [(0, 0), (0, 0)],
                            (1, 1))  # (N, C*k, H', W')
    return np.einsum("nkhw,hwko->nhwo", patches.astype(np.float64), rhs.astype(np.float64))


def test_local_against_numpy() -> None:
    lhs = RNG.randn(2, 5, 4, 3).astype(np.float32)
    rhs = RNG.randn(4, 3, 12, 6).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    got = lax.conv_general_dilated_local(lhs, rhs, (1, 1), "VALID", (2, 2),
                                         dimension_numbers=dn)
    np.testing.assert_allclose(np.asarray(got), _local_nhwc(lhs, rhs, (2, 2)), rtol=1e-5,
                               atol=1e-5)
    # The default layout (NCHW, OIHW, NCHW) computes the same thing.
    nchw = lax.conv_general_dilated_local(lhs.transpose(0, 3, 1, 2), rhs.transpose(3, 2, 0, 1),
                                          (1, 1), "VALID", (2, 2))
    np.testing.assert_allclose(np.asarray(nchw), np.asarray(got).transpose(0, 3, 1, 2),
                               rtol=1e-6, atol=1e-6)
    for precision in [lax.Precision.HIGHEST, (lax.Precision.HIGH, lax.Precision.DEFAULT),
                      "highest"]:
        same = lax.conv_general_dilated_local(lhs, rhs, (1, 1), "VALID", (2, 2),
                                              dimension_numbers=dn, precision=precision)
        np.testing.assert_allclose(np.asarray(same), np.asarray(got), rtol=1e-6)
    with pytest.raises(ValueError, match="^Unsupported precision for "
                                         "conv_general_dilated_local: F32_F32_F32$"):
        lax.conv_general_dilated_local(lhs, rhs, (1, 1), "VALID", (2, 2), dimension_numbers=dn,
                                       precision=lax.DotAlgorithmPreset.F32_F32_F32)
    ints = lax.conv_general_dilated_local(lhs.astype(np.int32), rhs.astype(np.int32), (1, 1),
                                          "VALID", (2, 2), dimension_numbers=dn)
    assert ints.dtype == np.int32


def test_local_gradients_and_vmap() -> None:
    lhs = RNG.randn(1, 4, 3, 2).astype(np.float32)
    rhs = RNG.randn(3, 2, 8, 2).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def local(l, r):
        return lax.conv_general_dilated_local(l, r, (1, 1), "VALID", (2, 2),
                                              dimension_numbers=dn)

    with x64_mode(True):
        check_grads(local, (lhs.astype(np.float64), rhs.astype(np.float64)), order=2,
                    modes=("fwd", "rev"))
    batched = jax.vmap(local, in_axes=(0, None))(lhs[:, None], rhs)
    np.testing.assert_allclose(np.asarray(batched)[:, 0], np.asarray(local(lhs, rhs)),
                               rtol=1e-6)


GOLDEN_PATCHES = """\
{ lambda ; a:f32[2,3,5,4]. let
    b:i32[6,6] = iota[dimension=0 dtype=int32 shape=(6, 6) sharding=None] 
    c:i32[6,6] = add b 0:i32[]
    d:i32[6,6] = iota[dimension=1 dtype=int32 shape=(6, 6) sharding=None] 
    e:bool[6,6] = eq c d
    f:f32[6,6] = convert_element_type[new_dtype=float32 weak_type=False] e
    g:f32[3,6,6] = broadcast_in_dim[broadcast_dimensions=(1, 2)] f
    h:f32[18,1,2,3] = reshape[
      dimensions=None
      new_sizes=(18, 1, 2, 3)
      sharding=None
    ] g
    i:f32[2,18,4,2] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=3
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 0), (0, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a h
  in (i,) }"""

GOLDEN_LOCAL = """\
{ lambda ; a:f32[2,5,4,3] b:f32[4,3,12,6]. let
    c:i32[4,4] = iota[dimension=0 dtype=int32 shape=(4, 4) sharding=None] 
    d:i32[4,4] = add c 0:i32[]
    e:i32[4,4] = iota[dimension=1 dtype=int32 shape=(4, 4) sharding=None] 
    f:bool[4,4] = eq d e
    g:f32[4,4] = convert_element_type[new_dtype=float32 weak_type=False] f
    h:f32[3,4,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] g
    i:f32[12,1,2,2] = reshape[
      dimensions=None
      new_sizes=(12, 1, 2, 2)
      sharding=None
    ] h
    j:f32[2,2,1,12] = transpose[permutation=(2, 3, 1, 0)] i
    k:f32[2,4,3,12] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=3
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((0, 0), (0, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a j
    l:f32[4,3,2,6] = dot_general[
      dimension_numbers=(([3], [2]), ([1, 2], [0, 1]))
    ] k b
    m:f32[2,4,3,6] = transpose[permutation=(2, 0, 1, 3)] l
  in (m,) }"""


def test_golden_jaxprs() -> None:
    x = np.ones((2, 3, 5, 4), np.float32)
    assert str(jax.make_jaxpr(lambda v: lax.conv_general_dilated_patches(
        v, (2, 3), (1, 1), "VALID"))(x)) == GOLDEN_PATCHES
    lhs, rhs = np.ones((2, 5, 4, 3), np.float32), np.ones((4, 3, 12, 6), np.float32)
    assert str(jax.make_jaxpr(lambda l, r: lax.conv_general_dilated_local(
        l, r, (1, 1), "VALID", (2, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")))(
            lhs, rhs)) == GOLDEN_LOCAL
