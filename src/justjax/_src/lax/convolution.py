"""Convolutions: the `conv_general_dilated` primitive and its wrappers (`conv`,
`conv_with_general_padding`, `conv_transpose`), dimension-number and padding helpers.

The eager implementation is im2col-style NumPy: one batched matmul per kernel tap over every
output position at once, with feature groups and batch groups as a leading group axis.
"""
from __future__ import annotations

import enum
import math
import operator
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from justjax._src.numerics import shapes
from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Value
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import dot as lax_dot
from justjax._src.lax import sharding_rules, slicing, structural
from justjax._src.lax import utils
from justjax._src.lax.dot import PrecisionLike
from justjax._src.lax.utils import standard_primitive

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "PaddingType",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
    "padtype_to_pads",
]


class ConvDimensionNumbers(NamedTuple):
    """Where the batch, feature and spatial dimensions are.

    lhs_spec: (batch, feature, spatial...) dimension numbers of the input.
    rhs_spec: (out feature, in feature, spatial...) dimension numbers of the kernel.
    out_spec: (batch, feature, spatial...) dimension numbers of the output.
    """

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


# -- padding -----------------------------------------------------------------------------------

class PaddingType(enum.Enum):
    """The padding strings `padtype_to_pads` understands."""

    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                     window_strides: Sequence[int], padding: str | PaddingType
                     ) -> list[tuple[int, int]]:
    """Explicit `(low, high)` pads for a padding string.

    'VALID' pads nothing; 'SAME' pads so the output has `ceil(in / stride)` elements, the odd
    element going at the end ('SAME_LOWER': at the start).
    """
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError as err:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.") from err
    if padding == PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    if padding not in (PaddingType.SAME, PaddingType.SAME_LOWER):
        raise TypeError(f"Unknown padding type: {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides, strict=True):
        out_size = -(-int(size) // int(stride))
        total = max((out_size - 1) * int(stride) + int(window) - int(size), 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if padding == PaddingType.SAME else (large, small))
    return pads


def _dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> tuple:
    if not all(d > 0 for d in dilation):
        raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(d if r == 1 else max(1 + r * (d - 1), 0)
                 for d, r in zip(shape, dilation, strict=True))


_stride_dim = shapes.stride_dim


# -- dimension numbers -------------------------------------------------------------------------

def conv_general_permutations(dimension_numbers: tuple[str, str, str]
                              ) -> tuple[tuple[int, ...], ...]:
    """The permutations of string dimension numbers relative to the canonical (N, C, spatial)
    and (O, I, spatial) orders; spatial dims are ordered as they appear in the kernel spec."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1])
            == set(out_spec) - set(charpairs[2])):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {dimension_numbers}.")

    def permutation(spec: str, charpair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in charpair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(charpair[0]), spec.index(charpair[1]), *spatial)

    return tuple(permutation(s, c) for s, c in zip(dimension_numbers, charpairs, strict=True))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: ConvGeneralDilatedDimensionNumbers
                           ) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three layout strings, or `ConvDimensionNumbers`) in
    canonical `ConvDimensionNumbers` form; None means ('NC...', 'OI...', 'NC...')."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(tuple(dimension_numbers)))


# -- shapes ------------------------------------------------------------------------------------

def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: str | Sequence[tuple[int, int]],
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """Output shape of a convolution whose operands are in canonical (N, C, spatial) and
    (O, I, spatial) order."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads, strict=True)]
    if any(d < 0 for d in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    out_space = tuple(_stride_dim(d, k, s)
                      for d, k, s in zip(padded, rhs_shape[2:], strides, strict=True))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return tuple(d if is_symbolic_dim(d) else int(d) for d in (batch, rhs_shape[0], *out_space))


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int],
                             padding: str | Sequence[tuple[int, int]],
                             dimension_numbers: tuple[str, str, str]) -> tuple[int, ...]:
    """Output shape of a convolution with string dimension numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(tuple(np.take(lhs_shape, lhs_perm)),
                           tuple(np.take(rhs_shape, rhs_perm)), window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """Before and after padding of one spatial dim of a transposed convolution."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(math.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a = pads[0]
        pad_len = sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               dimension_numbers: tuple[str, str, str]) -> tuple[int, ...]:
    """Output shape of `conv_transpose` with string dimension numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_trans = np.take(lhs_shape, lhs_perm)
    rhs_trans = np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_trans[2:], window_strides, strict=True)]
    totals = [sum(p) for p in padding]
    unpadded = [(i - 1) * s - k + 2
                for i, k, s in zip(lhs_trans[2:], rhs_trans[2:], window_strides, strict=True)]
    out_trans = (lhs_trans[0], rhs_trans[0],
                 *(u + p for u, p in zip(unpadded, totals, strict=True)))
    return tuple(d if is_symbolic_dim(d) else int(d)
                 for d in (out_trans[i] for i in np.argsort(out_perm)))


# -- the primitive -----------------------------------------------------------------------------

def _check_groups(lhs: ShapedArray, rhs: ShapedArray, dnums: ConvDimensionNumbers,
                  feature_group_count: int, batch_group_count: int) -> None:
    if not feature_group_count > 0:
        raise ValueError("conv_general_dilated feature_group_count must be a positive "
                         f"integer, got {feature_group_count}.")
    lhs_features = lhs.shape[dnums.lhs_spec[1]]
    quotient, remainder = divmod(lhs_features, feature_group_count)
    if remainder:
        raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_group_count} does not divide "
                         f"{lhs_features}.")
    rhs_in_features = rhs.shape[dnums.rhs_spec[1]]
    if quotient != rhs_in_features:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension "
                         f"size, but {lhs_features} // {feature_group_count} != "
                         f"{rhs_in_features}.")
    rhs_out_features = rhs.shape[dnums.rhs_spec[0]]
    if rhs_out_features % feature_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {rhs_out_features} is not a "
                         f"multiple of {feature_group_count}.")
    if not batch_group_count > 0:
        raise ValueError("conv_general_dilated batch_group_count must be a positive integer, "
                         f"got {batch_group_count}.")
    lhs_batch = lhs.shape[dnums.lhs_spec[0]]
    if batch_group_count > 1 and lhs_batch % batch_group_count:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_group_count} does not divide "
                         f"{lhs_batch}.")
    if rhs_out_features % batch_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {rhs_out_features} is not a "
                         f"multiple of {batch_group_count}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > 1, "
                         f"got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")


def _conv_shape_rule(lhs: ShapedArray, rhs: ShapedArray, *, window_strides: tuple,
                     padding: tuple, lhs_dilation: tuple, rhs_dilation: tuple,
                     dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                     batch_group_count: int, **_: Any) -> tuple[int, ...]:
    if lhs.ndim != rhs.ndim:
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs.shape} and {rhs.shape}.")
    _check_groups(lhs, rhs, dimension_numbers, feature_group_count, batch_group_count)
    num_spatial = len(dimension_numbers.rhs_spec) - 2
    if num_spatial != len(window_strides):
        raise ValueError("conv_general_dilated window and window_strides must have the same "
                         f"number of dimensions, but got {num_spatial} and "
                         f"{len(window_strides)}")
    lhs_perm, rhs_perm, out_perm = dimension_numbers
    lhs_trans = _dilate_shape(tuple(np.take(lhs.shape, lhs_perm)), lhs_dilation)
    rhs_trans = _dilate_shape(tuple(np.take(rhs.shape, rhs_perm)), rhs_dilation)
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding,
                                 batch_group_count)
    return tuple(d if is_symbolic_dim(d) else int(d)
                 for d in (out_trans[i] for i in np.argsort(out_perm)))


def validate_preferred_element_type(input_dtype: np.dtype, preferred: np.dtype) -> None:
    """JAX's compatibility rules for an explicit accumulation type of a convolution."""
    if not (dtypes.is_int(input_dtype) and dtypes.is_float(preferred)):
        kinds = (dtypes.is_int, dtypes.is_float, dtypes.is_complex)
        if any(kind(input_dtype) and not kind(preferred) for kind in kinds):
            raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                            "compatible combinations of (input_type, preferred_element_type) "
                            "are (integral, integral), (integral, floating), (floating, "
                            "floating), (complex, complex.")
        if dtypes.is_signed(input_dtype) and not dtypes.is_signed(preferred):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            "original type.")
    if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")


def _conv_dtype_rule(lhs: ShapedArray, rhs: ShapedArray, *, preferred_element_type: Any,
                     **_: Any) -> np.dtype:
    utils.check_same_dtypes("conv_general_dilated", lhs, rhs)
    if preferred_element_type is None:
        return lhs.dtype
    validate_preferred_element_type(lhs.dtype, preferred_element_type)
    return np.dtype(preferred_element_type)




def _conv_sharding_rule(specs: Sequence[Any], avals: Sequence[ShapedArray],
                        outs: Sequence[ShapedArray], *, dimension_numbers: Any,
                        **params: Any) -> list[Any]:
    """Split as the lhs is, position by position (JAX's rule), when the kernel is unsplit
    and the lhs's feature dimension too; otherwise `out_sharding` must say (JAX's error)."""
    lhs, rhs = avals
    if rhs._sharding is None and specs[0][dimension_numbers.lhs_spec[1]] is None:
        return sharding_rules.varying_shape("conv_general_dilated")(specs, avals, outs)
    raise core.ShardingTypeError("Please specify the output sharding via `out_sharding` "
                                 "parameter of `conv_general_dilated`")


conv_general_dilated_p = standard_primitive(
    "conv_general_dilated", _conv_shape_rule, _conv_dtype_rule,
    sharding_rule=_conv_sharding_rule, sharding_param="out_sharding")
dispatch.def_backend_impl(conv_general_dilated_p)


def _conv_general_dilated_lower(ctx: LoweringRuleContext, lhs: Value, rhs: Value, *,
                                window_strides: tuple, padding: tuple, lhs_dilation: tuple,
                                rhs_dilation: tuple, dimension_numbers: ConvDimensionNumbers,
                                feature_group_count: int, batch_group_count: int,
                                precision: Any, preferred_element_type: Any,
                                out_sharding: Any) -> Value:
    """`stablehlo.convolution`. Complex convolutions stay one convolution (JAX's CPU lowering
    expands them into three real ones; XLA runs both, and this one computes what the eager
    implementation does)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    dims = ir.ConvDimensionNumbers(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=tuple(lhs_spec[2:]),
        kernel_input_feature_dimension=rhs_spec[1], kernel_output_feature_dimension=rhs_spec[0],
        kernel_spatial_dimensions=tuple(rhs_spec[2:]), output_batch_dimension=out_spec[0],
        output_feature_dimension=out_spec[1], output_spatial_dimensions=tuple(out_spec[2:]))
    spatial = len(rhs_spec) - 2
    return ctx.builder.one(
        "stablehlo.convolution", [lhs, rhs], lowering.aval_to_type(ctx.avals_out[0]),
        window_strides=tuple(int(s) for s in window_strides),
        padding=np.array(padding, np.int64).reshape(spatial, 2),
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation),
        window_reversal=(False,) * spatial, dimension_numbers=dims,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision_config=lax_dot.precision_attr(precision))


lowering.register_lowering(conv_general_dilated_p, _conv_general_dilated_lower)


# -- differentiation ---------------------------------------------------------------------------
# Both transposes are convolutions again: the lhs cotangent convolves the output cotangent with
# the spatially reversed kernel (strides and input dilation exchange roles); the rhs cotangent
# convolves the input with the output cotangent, with groups exchanged for batch groups.

def _spec_transpose(spec: Sequence[int]) -> tuple[int, ...]:
    """A (batch, feature, spatial...) spec with its first two entries exchanged."""
    return (spec[1], spec[0], *spec[2:])


def _reshape_axis_out_of(src: int, size1: int, x: Any) -> Any:
    """Splits axis `src` of `x` into (size1, rest)."""
    shape = list(core.get_aval(x).shape)
    size2, ragged = divmod(shape[src], size1)
    assert not ragged
    shape[src:src + 1] = [size1, size2]
    return structural.reshape(x, shape)


def _reshape_axis_into(src: int, dst: int, x: Any) -> Any:
    """Merges axis `src` of `x` into axis `dst` (numbered after `src` is removed), as the
    major part of the merged axis."""
    shape = core.get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [d for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return structural.reshape(x, new_shape, perm)


def conv_general_vjp_lhs_padding(in_shape: Sequence[int], window_dimensions: Sequence[int],
                                 window_strides: Sequence[int], out_shape: Sequence[int],
                                 padding: Sequence[tuple[int, int]],
                                 lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]
                                 ) -> list[tuple[Any, Any]]:
    """Padding of the output cotangent that makes the transposed convolution (or windowed
    sum) give the input's shape. Values are NumPy integers, as JAX computes them."""
    lhs_dilated = _dilate_shape(in_shape, lhs_dilation)
    rhs_dilated = _dilate_shape(window_dimensions, rhs_dilation)
    out_dilated = _dilate_shape(out_shape, window_strides)
    pad_before = np.subtract(rhs_dilated, [lo for lo, _ in padding]) - 1
    pad_after = np.add(lhs_dilated, rhs_dilated) - 1 - np.asarray(out_dilated) - pad_before
    return list(zip(pad_before, pad_after, strict=True))


def _conv_general_vjp_rhs_padding(in_shape: Sequence[int], window_dimensions: Sequence[int],
                                  window_strides: Sequence[int], out_shape: Sequence[int],
                                  padding: Sequence[tuple[int, int]],
                                  lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]
                                  ) -> list[tuple[int, int]]:
    if len(in_shape) == 0:
        return []
    lhs_dilated = _dilate_shape(in_shape, lhs_dilation)
    rhs_dilated = _dilate_shape(window_dimensions, rhs_dilation)
    out_dilated = _dilate_shape(out_shape, window_strides)
    pads_lo = [lo for lo, _ in padding]
    pads_hi = [(o - i) + (r - lo - 1)
               for o, i, r, lo in zip(out_dilated, lhs_dilated, rhs_dilated, pads_lo, strict=True)]
    return list(zip(pads_lo, pads_hi, strict=True))


def _conv_transpose_lhs(ct: Any, lhs: Any, rhs: Any, *, window_strides: tuple, padding: tuple,
                        lhs_dilation: tuple, rhs_dilation: tuple,
                        dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                        batch_group_count: int, precision: Any, preferred_element_type: Any,
                        out_sharding: Any) -> Any:
    """Cotangent of the input: `ct` convolved with the reversed kernel, whose feature dims
    exchange roles (feature groups move into the kernel's new output-feature dim)."""
    assert batch_group_count == 1 or feature_group_count == 1
    rhs_shape = core.get_aval(rhs).shape
    lhs_shape = lhs.aval.shape
    ct_aval = core.get_aval(ct)
    ct_shape = ct_aval.shape
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_sdims, rhs_sdims, out_sdims = lhs_spec[2:], rhs_spec[2:], out_spec[2:]
    if feature_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif batch_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        feature_group_count = batch_group_count
    trans_dnums = ConvDimensionNumbers(out_spec, _spec_transpose(rhs_spec), lhs_spec)
    pads = conv_general_vjp_lhs_padding(
        np.take(lhs_shape, lhs_sdims), np.take(rhs_shape, rhs_sdims), window_strides,
        np.take(ct_shape, out_sdims), padding, lhs_dilation, rhs_dilation)
    reversed_rhs = slicing.rev(rhs, rhs_sdims)
    ct_dtype = core.get_aval(ct).dtype
    if ct_dtype != core.get_aval(reversed_rhs).dtype:
        reversed_rhs = structural.convert_element_type(reversed_rhs, ct_dtype)
    out = conv_general_dilated(
        ct, reversed_rhs, window_strides=lhs_dilation, padding=pads,
        lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=trans_dnums, feature_group_count=feature_group_count,
        batch_group_count=1, precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=_cotangent_sharding(lhs.aval, (ct_aval, core.get_aval(rhs)),
                                         feature_group_count * batch_group_count))
    if core.get_aval(out).dtype != lhs.aval.dtype:
        out = structural.convert_element_type(out, lhs.aval.dtype)
    if batch_group_count > 1:
        out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _cotangent_sharding(primal: ShapedArray, others: Sequence[ShapedArray],
                        groups: int) -> Any:
    """The transposed convolution's `out_sharding`: the primal's type, position by position
    (JAX's); grouped convolutions reshape their result afterwards, so they give none."""
    if groups > 1:
        return None
    return sharding_rules.cotangent_sharding(primal, others)


def _conv_transpose_rhs(ct: Any, lhs: Any, rhs: Any, *, window_strides: tuple, padding: tuple,
                        lhs_dilation: tuple, rhs_dilation: tuple,
                        dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                        batch_group_count: int, precision: Any, preferred_element_type: Any,
                        out_sharding: Any) -> Any:
    """Cotangent of the kernel: the input convolved with `ct`, batch and feature dims
    exchanging roles (so feature groups become batch groups and vice versa)."""
    ct_aval = core.get_aval(ct)
    if ct_aval.size == 0:
        # A degenerate convolution whose kernel would have spatial size 0.
        return ad.Zero(rhs.aval)
    lhs_shape = core.get_aval(lhs).shape
    rhs_shape = rhs.aval.shape
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_sdims, rhs_sdims, out_sdims = lhs_spec[2:], rhs_spec[2:], out_spec[2:]
    assert batch_group_count == 1 or feature_group_count == 1
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        feature_group_count, batch_group_count = 1, feature_group_count
    trans_dnums = ConvDimensionNumbers(_spec_transpose(lhs_spec), _spec_transpose(out_spec),
                                       _spec_transpose(rhs_spec))
    pads = _conv_general_vjp_rhs_padding(
        np.take(lhs_shape, lhs_sdims), np.take(rhs_shape, rhs_sdims), window_strides,
        np.take(ct_aval.shape, out_sdims), padding, lhs_dilation, rhs_dilation)
    if ct_aval.dtype != core.get_aval(lhs).dtype:
        lhs = structural.convert_element_type(lhs, ct_aval.dtype)
    out = conv_general_dilated(
        lhs, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides, dimension_numbers=trans_dnums,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        precision=precision, preferred_element_type=preferred_element_type,
        out_sharding=_cotangent_sharding(rhs.aval, (ct_aval, core.get_aval(lhs)), 1))
    if core.get_aval(out).dtype != rhs.aval.dtype:
        out = structural.convert_element_type(out, rhs.aval.dtype)
    return out


ad.defbilinear(conv_general_dilated_p, _conv_transpose_lhs, _conv_transpose_rhs)


# -- vectorization -----------------------------------------------------------------------------
# A batched convolution is one convolution: a batched input folds into the batch dim, a
# batched kernel into the output-feature dim, and both batched into feature (or batch) groups.

def _conv_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                     dims: Sequence[int | None], *, window_strides: tuple, padding: tuple,
                     lhs_dilation: tuple, rhs_dilation: tuple,
                     dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                     batch_group_count: int, precision: Any, preferred_element_type: Any,
                     out_sharding: Any) -> tuple[Any, int]:
    """vmap of `conv_general_dilated`."""
    lhs, rhs = vals
    lhs_bdim, rhs_bdim = dims
    assert batch_group_count == 1 or feature_group_count == 1
    conv = _partial_conv(window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                         precision, preferred_element_type)
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    if (lhs_bdim is not None and lhs_shape[lhs_bdim] == 0) or \
            (rhs_bdim is not None and rhs_shape[rhs_bdim] == 0):
        return _empty_batch_conv(lhs, rhs, lhs_bdim, rhs_bdim, window_strides, padding,
                                 lhs_dilation, rhs_dilation, dimension_numbers,
                                 feature_group_count, batch_group_count,
                                 preferred_element_type), 0
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if lhs_bdim is not None and rhs_bdim is not None:
        size = lhs_shape[lhs_bdim]
        if batch_group_count > 1:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            batch_group_count *= size
        else:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
            feature_group_count *= size
        new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lhs_bdim is not None:
        size = lhs_shape[lhs_bdim]
        if batch_group_count == 1:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
        else:
            # Batch groups are the major part of the batch dim: the vmapped axis goes inside
            # each group, so split the groups out, fold the axis in, then merge back.
            new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]),
                                           batch_group_count, lhs)
            new_lhs = _reshape_axis_into(lhs_bdim + int(lhs_spec[0] < lhs_bdim),
                                         lhs_spec[0] + 1, new_lhs)
            new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    size = rhs_shape[rhs_bdim]
    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # Groups are the major part of the output-feature dim: fold the vmapped axis inside each
    # group of the kernel, and undo that on the output.
    groups = feature_group_count if feature_group_count > 1 else batch_group_count
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1,
                                 new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


def _partial_conv(window_strides: tuple, padding: tuple, lhs_dilation: tuple,
                  rhs_dilation: tuple, dimension_numbers: ConvDimensionNumbers, precision: Any,
                  preferred_element_type: Any) -> Any:
    """`conv_general_dilated` with every param but the operands and group counts fixed."""
    def conv(lhs: Any, rhs: Any, feature_group_count: int, batch_group_count: int) -> Any:
        return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                    rhs_dilation, dimension_numbers,
                                    feature_group_count=feature_group_count,
                                    batch_group_count=batch_group_count, precision=precision,
                                    preferred_element_type=preferred_element_type)
    return conv


def _empty_batch_conv(lhs: Any, rhs: Any, lhs_bdim: int | None, rhs_bdim: int | None,
                      window_strides: tuple, padding: tuple, lhs_dilation: tuple,
                      rhs_dilation: tuple, dimension_numbers: ConvDimensionNumbers,
                      feature_group_count: int, batch_group_count: int,
                      preferred_element_type: Any) -> Any:
    """A batch of no convolutions: zeros of the batched result shape (reshaping a size-0
    axis into the batch or feature dims would lose the other dim's size)."""
    def unbatched(x: Any, bdim: int | None) -> ShapedArray:
        aval = core.get_aval(x)
        shape = list(aval.shape)
        if bdim is not None:
            del shape[bdim]
        return ShapedArray(tuple(shape), aval.dtype)

    shape = _conv_shape_rule(unbatched(lhs, lhs_bdim), unbatched(rhs, rhs_bdim),
                             window_strides=window_strides, padding=padding,
                             lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                             dimension_numbers=dimension_numbers,
                             feature_group_count=feature_group_count,
                             batch_group_count=batch_group_count)
    dtype = core.get_aval(lhs).dtype if preferred_element_type is None \
        else preferred_element_type
    zero = structural.convert_element_type(0, dtype, False)
    return structural.broadcast(zero, (0, *shape))


batching.primitive_batchers[conv_general_dilated_p] = _conv_batch_rule


# -- public functions --------------------------------------------------------------------------

def _explicit_padding(padding: Any) -> tuple[tuple[int, int], ...]:
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError) as err:
        raise ValueError("padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from err


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: PrecisionLike = None, preferred_element_type: Any = None,
                         out_sharding: Any = None) -> Any:
    """General n-dimensional convolution with dilations and groups (StableHLO `convolution`).

    Args:
      lhs: the rank n+2 input.
      rhs: the rank n+2 kernel.
      window_strides: n strides.
      padding: 'SAME', 'SAME_LOWER', 'VALID' or n `(low, high)` pairs (negative crops).
      lhs_dilation: n input dilations (transposed convolution); string padding needs none.
      rhs_dilation: n kernel dilations (atrous convolution).
      dimension_numbers: None (NC..., OI..., NC...), `ConvDimensionNumbers`, or three layout
        strings such as ('NHWC', 'HWIO', 'NHWC').
      feature_group_count, batch_group_count: grouped convolution (at most one above 1).
      precision: as for `dot_general`.
      preferred_element_type: the accumulation and result dtype.
      out_sharding: a NamedSharding or PartitionSpec: how the result's type is split over
        Explicit mesh axes.

    Returns:
      The convolution, laid out by `dimension_numbers`' output spec.
    """
    lhs_aval = lax_dot.operand_aval(lhs, "conv_general_dilated", 0)
    rhs_aval = lax_dot.operand_aval(rhs, "conv_general_dilated", 1)
    dnums = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    if lhs_dilation is None:
        lhs_dilation = (1,) * (lhs_aval.ndim - 2)
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution using "
                         "this op. Please either exactly specify the required padding or use "
                         "conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * (rhs_aval.ndim - 2)
    if isinstance(padding, str):
        kernel_space = np.take(rhs_aval.shape, dnums.rhs_spec)[2:]
        effective = [int(k) if r == 1 else max(1 + r * (int(k) - 1), 0)
                     for k, r in zip(kernel_space, rhs_dilation, strict=True)]
        padding = padtype_to_pads(np.take(lhs_aval.shape, dnums.lhs_spec)[2:], effective,
                                  window_strides, padding)
    padding = _explicit_padding(padding)
    if preferred_element_type is not None:
        preferred_element_type = lax_dot.canonicalize_user_dtype(preferred_element_type,
                                                                 "conv_general_dilated")
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(window_strides), padding=padding,
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=dnums, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=lax_dot.canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
        out_sharding=sharding_rules.user_out_sharding(out_sharding))


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: PrecisionLike = None, preferred_element_type: Any = None) -> Any:
    """`conv_general_dilated` in NC.../OI... layout without dilation or groups."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None,
                              precision: PrecisionLike = None,
                              preferred_element_type: Any = None) -> Any:
    """`conv_general_dilated` in NC.../OI... layout with explicit dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


_TRANSPOSE_DEFAULT_LAYOUTS = {
    2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def _flip_and_swap_kernel(rhs: Any, dnums: ConvDimensionNumbers) -> Any:
    """The kernel with spatial dims reversed and in/out feature dims exchanged."""
    rhs = slicing.rev(rhs, tuple(dnums.rhs_spec[2:]))
    permutation = list(range(len(dnums.rhs_spec)))
    out_dim, in_dim = dnums.rhs_spec[0], dnums.rhs_spec[1]
    permutation[out_dim], permutation[in_dim] = in_dim, out_dim
    return structural.transpose(rhs, permutation)


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None,
                   dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                   transpose_kernel: bool = False, precision: PrecisionLike = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """Transposed ("fractionally strided") convolution: `conv_general_dilated` with the input
    dilated by `strides`.

    Args:
      lhs, rhs: input and kernel of equal rank.
      strides: the fractional strides (the input dilation).
      padding: 'SAME' or 'VALID' (the padding of the forward convolution), or explicit pairs:
        for the transposed convolution itself, or of the forward convolution when
        `use_consistent_padding`.
      rhs_dilation: kernel dilation.
      dimension_numbers: defaults to the TensorFlow layout ('NHWC', 'HWIO', 'NHWC').
      transpose_kernel: flip the spatial dims and swap the feature dims of the kernel (the
        gradient-of-conv convention of Keras' Conv2DTranspose).

    Returns:
      The transposed convolution.
    """
    lhs_shape = lax_dot.operand_aval(lhs, "conv_general_dilated", 0).shape
    rhs_shape = lax_dot.operand_aval(rhs, "conv_general_dilated", 1).shape
    assert len(lhs_shape) == len(rhs_shape) and len(lhs_shape) >= 2
    ndims = len(lhs_shape)
    if dimension_numbers is None:
        if ndims not in _TRANSPOSE_DEFAULT_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULT_LAYOUTS[ndims]
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    kernel_space = [rhs_shape[d] for d in dnums.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndims - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        effective = [k if r == 1 else max(1 + r * (k - 1), 0)
                     for k, r in zip(kernel_space, rhs_dilation, strict=True)]
        per_dim = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = tuple(_conv_transpose_padding(k, s, tuple(p) if isinstance(p, list) else p)
                     for k, s, p in zip(effective, strides, per_dim, strict=True))
    else:
        pads = padding
    if transpose_kernel:
        rhs = _flip_and_swap_kernel(rhs, dnums)
    one = (1,) * (ndims - 2)
    return conv_general_dilated(lhs, rhs, one, pads, strides, rhs_dilation, dnums,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
