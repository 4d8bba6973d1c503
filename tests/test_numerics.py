"""The numerics shared by lax, the passes and both backends (`_src/numerics/`): identities,
monoid regions, the cumulative-window check, conversions and shape helpers."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from justjax._src.hlo import ir
from justjax._src.hlo.ir import TensorType
from justjax._src.numerics import conversions, monoids, shapes, windows


# Read off JAX 0.10.2: jax._src.lax.lax._get_max_identity / _get_min_identity /
# _get_bitwise_and_identity of each dtype.
@pytest.mark.parametrize("dtype,lowest,highest,all_ones", [
    (np.float32, -np.inf, np.inf, None),
    (ml_dtypes.bfloat16, -np.inf, np.inf, None),
    (ml_dtypes.float8_e4m3fn, -448, 448, None),
    (np.int8, -128, 127, -1),
    (np.uint16, 0, 65535, 65535),
    (np.bool_, False, True, True),
])
def test_identities_are_jaxs(dtype: Any, lowest: Any, highest: Any, all_ones: Any) -> None:
    dtype = np.dtype(dtype)
    for opcode, want in (("stablehlo.maximum", lowest), ("stablehlo.minimum", highest),
                         ("stablehlo.and", all_ones)):
        if want is None:
            continue
        got = monoids.identity(opcode, dtype)
        assert got.dtype == dtype and got.shape == ()
        assert got.astype(np.float64) == np.float64(want)
    assert monoids.identity("stablehlo.add", dtype) == 0
    assert monoids.identity("stablehlo.multiply", dtype) == 1


def _region(opcode: str, dtype: Any, operands: str = "xy") -> ir.Region:
    """`return opcode(a, b)` where "xy" reads (arg0, arg1), "yx" (arg1, arg0), "xx" (arg0,
    arg0)."""
    scalar = TensorType((), np.dtype(dtype))
    region, b = ir.new_region([scalar, scalar])
    args = {"x": region.block.args[0], "y": region.block.args[1]}
    b.ret([b.one(opcode, [args[c] for c in operands], scalar)])
    return region


@pytest.mark.parametrize("operands", ["xy", "yx"])
def test_a_one_op_region_of_both_arguments_is_a_monoid(operands: str) -> None:
    for opcode in monoids.MONOID_OPCODES:
        assert monoids.region_monoid(_region(opcode, np.int32, operands), np.int32) == opcode
    assert monoids.region_monoid(_region("stablehlo.maximum", np.float32), np.float32) == \
        "stablehlo.maximum"


def test_other_regions_are_not_monoids() -> None:
    assert monoids.region_monoid(_region("stablehlo.add", np.float32, "xx"), np.float32) is None
    assert monoids.region_monoid(_region("stablehlo.subtract", np.float32), np.float32) is None
    # Bitwise ops are monoids of integers and bools only.
    assert monoids.region_monoid(_region("stablehlo.or", np.float32), np.float32) is None
    assert monoids.region_monoid(_region("stablehlo.or", np.bool_), np.bool_) == "stablehlo.or"
    scalar = TensorType((), np.dtype(np.float32))
    region, b = ir.new_region([scalar, scalar])
    x, y = region.block.args
    b.ret([b.one("stablehlo.negate", [b.one("stablehlo.add", [x, y], scalar)], scalar)])
    assert monoids.region_monoid(region, np.float32) is None


@pytest.mark.parametrize("padding,want", [
    (((0, 0), (4, 0)), (1, False)),   # prefixes along axis 1: a cumulative reduction
    (((0, 0), (0, 4)), (1, True)),    # suffixes: a reverse one
    (((0, 0), (2, 2)), None),         # centred windows
])
def test_cumulative_axis(padding: Any, want: Any) -> None:
    params = dict(window_dimensions=(1, 5), window_strides=(1, 1), padding=padding,
                  base_dilation=(1, 1), window_dilation=(1, 1))
    assert windows.cumulative_axis((3, 5), **params) == want
    strided = dict(params, window_strides=(1, 2))
    assert windows.cumulative_axis((3, 5), **strided) is None


def test_conversions_follow_xla() -> None:
    x = np.array([np.nan, -3.7, 3.7, 1e10, -1e10], np.float32)
    np.testing.assert_array_equal(conversions.convert_values(x, np.dtype(np.int8)),
                                  np.array([0, -3, 3, 127, -128], np.int8))
    np.testing.assert_array_equal(conversions.convert_values(np.array([2 + 5j]),
                                                             np.dtype(np.float32)),
                                  np.array([2.0], np.float32))
    half = np.array([1.0, 2.5], ml_dtypes.bfloat16)
    widened = conversions.widen_low_precision(half)
    assert widened.dtype == np.float32
    back = conversions.round_from_float32(widened, np.dtype(ml_dtypes.bfloat16))
    assert back.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(back, half)


def test_shape_helpers() -> None:
    assert shapes.free_dims(4, (1,), (3,)) == [0, 2]
    assert shapes.stride_dim(10, 3, 2) == 4 and shapes.stride_dim(2, 3, 1) == 0
    assert shapes.gather_out_shape((5, 1), (1,), (0,), (), (1, 3)) == (5, 3)
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(shapes.to_last_axis(x, (0, 2)),
                                  np.transpose(x, (1, 0, 2)).reshape(3, 8))
