"""Op records for `dot_general` and `conv_general_dilated`, against NumPy references written
here: an einsum for contractions and an explicit loop over output positions for convolutions."""
from __future__ import annotations

import itertools
import string

import numpy as np

from justjax import lax
from tests.harness import (BF16, BOOL, C64, F16, F32, I32, I8, U8, OpRecord, rand_default, widen)

# ---------------------------------------------------------------------------------------------
# References.


def _wide(x: np.ndarray) -> np.ndarray:
    return widen(x, integers_to=np.int64, bools_to=np.int64)

def dot_general_reference(lhs: np.ndarray, rhs: np.ndarray, dimension_numbers, **_) -> np.ndarray:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    letters = iter(string.ascii_letters)
    lhs_sub = [next(letters) for _ in range(lhs.ndim)]
    rhs_sub = [next(letters) for _ in range(rhs.ndim)]
    for l, r in zip(lhs_contract, rhs_contract):
        rhs_sub[r] = lhs_sub[l]
    for l, r in zip(lhs_batch, rhs_batch):
        rhs_sub[r] = lhs_sub[l]
    out = [lhs_sub[d] for d in lhs_batch]
    out += [c for d, c in enumerate(lhs_sub) if d not in lhs_contract and d not in lhs_batch]
    out += [c for d, c in enumerate(rhs_sub) if d not in rhs_contract and d not in rhs_batch]
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}"
    return np.einsum(spec, _wide(lhs), _wide(rhs))


def dot_reference(lhs: np.ndarray, rhs: np.ndarray, **_) -> np.ndarray:
    dims = (((lhs.ndim - 1,), (0,)), ((), ()))
    return dot_general_reference(lhs, rhs, dims)


def _perms(dimension_numbers, ndim: int):
    """(lhs, rhs, out) permutations to (N, C, spatial...) / (O, I, spatial...) order."""
    if dimension_numbers is None:
        iota = tuple(range(ndim))
        return iota, iota, iota
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    spatial = [c for c in rhs_spec if c not in "OI"]
    return ((lhs_spec.index("N"), lhs_spec.index("C"), *[lhs_spec.index(c) for c in spatial]),
            (rhs_spec.index("O"), rhs_spec.index("I"), *[rhs_spec.index(c) for c in spatial]),
            (out_spec.index("N"), out_spec.index("C"), *[out_spec.index(c) for c in spatial]))


def _string_pads(kind: str, sizes, windows, strides):
    if kind == "VALID":
        return [(0, 0)] * len(sizes)
    pads = []
    for n, k, s in zip(sizes, windows, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2) if kind == "SAME"
                    else (total - total // 2, total // 2))
    return pads


def conv_reference(lhs: np.ndarray, rhs: np.ndarray, window_strides, padding, lhs_dilation=None,
                   rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                   batch_group_count=1, **_) -> np.ndarray:
    """Convolution by definition: each output element sums input * kernel over its taps."""
    lhs_perm, rhs_perm, out_perm = _perms(dimension_numbers, lhs.ndim)
    x = _wide(np.transpose(lhs, lhs_perm))
    w = _wide(np.transpose(rhs, rhs_perm))
    spatial = lhs.ndim - 2
    lhs_dilation = lhs_dilation or (1,) * spatial
    rhs_dilation = rhs_dilation or (1,) * spatial
    dilated = [(n - 1) * d + 1 if n else 0 for n, d in zip(x.shape[2:], lhs_dilation)]
    windows = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dilation)]
    if isinstance(padding, str):
        padding = _string_pads(padding, dilated, windows, window_strides)
    out_space = [max((n + lo + hi - k) // s + 1, 0)
                 for n, (lo, hi), k, s in zip(dilated, padding, windows, window_strides)]
    groups = max(feature_group_count, batch_group_count)
    batch = x.shape[0] // batch_group_count
    out_features, in_features = w.shape[:2]
    out = np.zeros((batch, out_features, *out_space), x.dtype)
    for n, o in itertools.product(range(batch), range(out_features)):
        group = o // (out_features // groups)
        if batch_group_count > 1:
            source, channels = group * batch + n, slice(None)
        else:
            source, channels = n, slice(group * in_features, (group + 1) * in_features)
        for pos in np.ndindex(*out_space):
            total = 0
            for tap in np.ndindex(*w.shape[2:]):
                q = [p * s + t * rd - lo for p, s, t, rd, (lo, _) in
                     zip(pos, window_strides, tap, rhs_dilation, padding)]
                if all(0 <= qi < size and qi % d == 0
                       for qi, size, d in zip(q, dilated, lhs_dilation)):
                    index = tuple(qi // d for qi, d in zip(q, lhs_dilation))
                    total = total + np.sum(x[(source, channels, *index)] * w[(o, slice(None), *tap)])
            out[(n, o, *pos)] = total
    return np.transpose(out, np.argsort(out_perm))


# ---------------------------------------------------------------------------------------------
# Argument makers and expected dtypes.

def rand_int8_full(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """The whole int8 range, so sums overflow int8 (and show whether accumulation wraps)."""
    return rng.integers(-128, 128, shape).astype(dtype)


def _dtype(name):
    return lambda *dtypes: np.dtype(name)


# Result dtypes of mixed-dtype dots (XLA's "higher precision type"); operands are converted
# to it before the contraction.
_MIXED = {(F32, I32): F32, (BF16, F32): F32, (I32, F16): F16, (F16, BF16): BF16,
          (I8, U8): I8, (BOOL, I32): I32, (C64, F32): C64}


# ---------------------------------------------------------------------------------------------
# Records.

MATMUL_SHAPES = [[(2, 3), (3, 4)], [(3,), (3,)], [(2, 3), (3,)], [(3,), (3, 4)], [(2, 0), (0, 3)]]


def dot_general_record(name, dims, shapes, dtypes=(F32,), **kwargs) -> OpRecord:
    return OpRecord(name, lambda l, r: lax.dot_general(l, r, dims),
                    lambda l, r: dot_general_reference(l, r, dims), shapes, dtypes, **kwargs)


def conv_record(name, lhs_shape, rhs_shape, dtypes=(F32,), **params) -> OpRecord:
    return OpRecord(f"conv_{name}", lax.conv_general_dilated, conv_reference,
                    [[lhs_shape, rhs_shape]], dtypes, static=params)


RECORDS = [
    OpRecord("dot", lax.dot, dot_reference, MATMUL_SHAPES, (F32, F16, BF16, I32, I8, C64, BOOL)),
    OpRecord("dot_int8_wraps", lax.dot, dot_reference, [[(3, 40), (40, 2)]], (I8,),
             rand_int8_full, differentiable=False),
    OpRecord("dot_preferred_int32", lax.dot, dot_reference, [[(3, 40), (40, 2)]], (I8, U8),
             rand_int8_full, static={"preferred_element_type": np.int32},
             expected_dtype=_dtype(np.int32), differentiable=False),
    # Not gradient-checked here: the float64 checks would compute in the preferred float32,
    # too coarse for finite differences; tests/test_ad_dot_conv.py checks these gradients.
    OpRecord("dot_preferred_f32", lax.dot, dot_reference, [[(2, 5), (5, 3)]], (BF16, F16, I32),
             static={"preferred_element_type": np.float32}, expected_dtype=_dtype(np.float32),
             differentiable=False),
    OpRecord("dot_precision", lax.dot, dot_reference, [[(2, 5), (5, 3)]], (F32,),
             static={"precision": lax.Precision.HIGHEST}),
    OpRecord("dot_mixed", lax.dot,
             lambda l, r: dot_reference(*[x.astype(_MIXED[l.dtype, r.dtype]) for x in (l, r)]),
             [[(2, 5), (5, 3)]], list(_MIXED), expected_dtype=lambda l, r: _MIXED[l, r]),
    dot_general_record("dot_general_batch", (((2,), (1,)), ((0,), (0,))),
                       [[(2, 3, 4), (2, 4, 5)]], (F32, I32)),
    dot_general_record("dot_general_multi", (((1, 3), (2, 0)), ((0,), (1,))),
                       [[(2, 3, 4, 5), (5, 2, 3, 6)]], (F32, BF16)),
    dot_general_record("dot_general_outer", (((), ()), ((), ())),
                       [[(3,), (4,)], [(), ()], [(2, 3), (4,)]]),
    dot_general_record("dot_general_batch_only", (((), ()), ((0,), (0,))),
                       [[(3, 2), (3, 4)]]),
    dot_general_record("dot_general_lhs_transposed", (((0,), (0,)), ((), ())),
                       [[(4, 2), (4, 3)]], (F32, C64)),
    dot_general_record("dot_general_batch_not_leading", (((0,), (2,)), ((2,), (0,))),
                       [[(3, 4, 2), (2, 5, 3)]]),
    dot_general_record("dot_general_two_batch_dims", (((3,), (2,)), ((0, 1), (1, 0))),
                       [[(2, 3, 4, 5), (3, 2, 5, 4)]]),
    OpRecord("batch_matmul", lax.batch_matmul,
             lambda l, r: dot_general_reference(l, r, (((2,), (1,)), ((0,), (0,)))),
             [[(2, 3, 4), (2, 4, 5)]], (F32,)),

    conv_record("valid", (2, 3, 6, 5), (4, 3, 3, 2), (F32, F16, BF16, I32, C64),
                window_strides=(1, 1), padding="VALID"),
    conv_record("same_strided", (2, 3, 6, 5), (4, 3, 3, 2), (F32, I32),
                window_strides=(2, 1), padding="SAME"),
    conv_record("same_lower", (1, 2, 7, 6), (3, 2, 2, 3), window_strides=(2, 2),
                padding="SAME_LOWER"),
    conv_record("explicit_negative_padding", (1, 2, 7, 6), (3, 2, 2, 3), window_strides=(1, 2),
                padding=((-1, 2), (2, -1))),
    conv_record("lhs_dilation", (1, 2, 4, 5), (3, 2, 3, 2), window_strides=(1, 1),
                padding=((2, 2), (1, 1)), lhs_dilation=(2, 3)),
    conv_record("rhs_dilation", (2, 2, 9, 8), (3, 2, 3, 2), window_strides=(2, 1),
                padding=((1, 1), (0, 2)), rhs_dilation=(2, 3)),
    conv_record("both_dilations", (1, 1, 5, 5), (2, 1, 2, 2), window_strides=(2, 3),
                padding=((1, 0), (0, 1)), lhs_dilation=(2, 2), rhs_dilation=(2, 1)),
    conv_record("feature_groups", (2, 6, 5, 5), (8, 3, 3, 3), (F32, I32),
                window_strides=(1, 1), padding="SAME", feature_group_count=2),
    conv_record("depthwise", (2, 4, 5, 5), (8, 1, 3, 3), window_strides=(1, 1), padding="SAME",
                feature_group_count=4),
    conv_record("batch_groups", (4, 3, 5, 5), (6, 3, 2, 2), (F32, I32), window_strides=(1, 1),
                padding="VALID", batch_group_count=2),
    conv_record("batch_groups_3", (6, 2, 4, 3), (6, 2, 2, 2), window_strides=(1, 1),
                padding="VALID", batch_group_count=3),
    conv_record("nhwc", (2, 6, 5, 3), (3, 3, 3, 4), window_strides=(1, 1), padding="SAME",
                dimension_numbers=("NHWC", "HWIO", "NHWC")),
    conv_record("scrambled_layout", (5, 2, 6, 3), (3, 2, 2, 6), window_strides=(1, 2),
                padding="VALID", dimension_numbers=("WNCH", "OHWI", "CWHN")),
    # Groups with the feature dims last: vmap folds a batched kernel inside each group.
    conv_record("nhwc_feature_groups", (2, 5, 4, 4), (2, 2, 2, 6), window_strides=(1, 1),
                padding="SAME", feature_group_count=2,
                dimension_numbers=("NHWC", "HWIO", "NHWC")),
    conv_record("nhwc_batch_groups", (6, 4, 3, 2), (2, 2, 2, 3), window_strides=(1, 1),
                padding="VALID", batch_group_count=3,
                dimension_numbers=("NHWC", "HWIO", "NHWC")),
    conv_record("1d", (2, 3, 10), (4, 3, 3), window_strides=(2,), padding="SAME"),
    conv_record("3d", (1, 2, 4, 5, 6), (3, 2, 2, 3, 2), window_strides=(1, 2, 1), padding="SAME",
                rhs_dilation=(1, 1, 2)),
    conv_record("empty_output", (1, 1, 2, 2), (1, 1, 3, 3), window_strides=(1, 1),
                padding="VALID"),
    conv_record("stride_larger_than_window", (1, 1, 7, 7), (1, 1, 2, 2), window_strides=(3, 3),
                padding="VALID"),
    conv_record("bool", (1, 2, 4, 4), (2, 2, 2, 2), (BOOL,), window_strides=(1, 1),
                padding="VALID"),
    OpRecord("conv_int8_preferred_int32", lax.conv_general_dilated, conv_reference,
             [[(1, 3, 5, 5), (2, 3, 3, 3)]], (I8,), rand_int8_full,
             static=dict(window_strides=(1, 1), padding="SAME",
                         preferred_element_type=np.int32),
             expected_dtype=_dtype(np.int32), differentiable=False),
    # Not gradient-checked here: float32 is narrower than the float64 operands of the
    # gradient checks, which JAX rejects; tests/test_ad_dot_conv.py checks these gradients.
    OpRecord("conv_bf16_preferred_f32", lax.conv_general_dilated, conv_reference,
             [[(1, 3, 5, 5), (2, 3, 3, 3)]], (BF16,), rand_default,
             static=dict(window_strides=(1, 1), padding="SAME",
                         preferred_element_type=np.float32),
             expected_dtype=_dtype(np.float32), differentiable=False),
    OpRecord("conv", lax.conv, conv_reference, [[(2, 3, 5, 5), (4, 3, 3, 3)]], (F32,),
             static=dict(window_strides=(2, 2), padding="SAME")),
    OpRecord("conv_with_general_padding", lax.conv_with_general_padding, conv_reference,
             [[(2, 3, 5, 5), (4, 3, 3, 3)]], (F32,),
             static=dict(window_strides=(1, 2), padding=((1, 2), (0, 1)),
                         lhs_dilation=(2, 1), rhs_dilation=(1, 2))),
]
