"""The monoids of reductions: their identities, and which regions are monoids.

A reduction region `return op(acc, x)` whose op is add, multiply, maximum, minimum or a
bitwise and/or/xor is a monoid; reducing from its identity allows what a general region does
not (reassociation, vectorized NumPy reductions, dropping size-1 reductions). Every layer that
recognizes such a region (lax's eager rules, algebraic simplification, both backends) reads it
here, so they agree on what a monoid and its identity are.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.hlo import ir

__all__ = ["MONOID_OPCODES", "max_identity", "min_identity", "and_identity", "or_identity",
           "one", "identity", "region_monoid"]


def max_identity(dtype: Any) -> np.ndarray:
    """The identity of max: -inf for inexact types (their lowest value for the floats with no
    infinities, as in JAX), the minimum integer, False."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.array(-np.inf if dtypes.supports_inf(dtype) else dtypes.finfo(dtype).min,
                        dtype)
    if dtypes.is_int(dtype):
        return np.array(dtypes.iinfo(dtype).min, dtype)
    if dtypes.is_bool(dtype):
        return np.array(False)
    raise ValueError(f"Unsupported dtype for max: {dtype}")


def min_identity(dtype: Any) -> np.ndarray:
    """The identity of min: inf for inexact types (their largest value for the floats with no
    infinities, as in JAX), the maximum integer, True."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.array(np.inf if dtypes.supports_inf(dtype) else dtypes.finfo(dtype).max,
                        dtype)
    if dtypes.is_int(dtype):
        return np.array(dtypes.iinfo(dtype).max, dtype)
    if dtypes.is_bool(dtype):
        return np.array(True)
    raise ValueError(f"Unsupported dtype for min: {dtype}")


def and_identity(dtype: Any) -> np.ndarray:
    """The identity of bitwise and: all bits set (True for bool)."""
    return np.array(-1).astype(dtype)


def or_identity(dtype: Any) -> np.ndarray:
    """The identity of bitwise or and xor (and of addition): zero."""
    return np.zeros((), dtype)


def one(dtype: Any) -> np.ndarray:
    """The identity of multiplication."""
    return np.ones((), dtype)


# The monoid opcodes and their identities (a function of the dtype).
MONOID_OPCODES = {
    "stablehlo.add": or_identity, "stablehlo.multiply": one,
    "stablehlo.maximum": max_identity, "stablehlo.minimum": min_identity,
    "stablehlo.and": and_identity, "stablehlo.or": or_identity, "stablehlo.xor": or_identity,
}
_BITWISE = frozenset({"stablehlo.and", "stablehlo.or", "stablehlo.xor"})


def identity(opcode: str, dtype: Any) -> np.ndarray:
    """The identity of monoid `opcode` (a key of `MONOID_OPCODES`) over `dtype`, as a 0-d
    array of `dtype`.

    Raises:
      ValueError: when the monoid has no identity over `dtype`.
    """
    return MONOID_OPCODES[opcode](dtype)


def region_monoid(region: ir.Region | ir.Block, dtype: Any) -> str | None:
    """The opcode of a one-op monoid region `return op(arg0, arg1)` (either argument order)
    over `dtype`, or None: add, multiply, maximum and minimum, and bitwise and/or/xor of
    integers and bools.

    Args:
      region: the reduction's region (or its block).
      dtype: the element type it reduces.
    Returns:
      The op's opcode, a key of `MONOID_OPCODES`, or None for any other region.
    """
    block = region.block if isinstance(region, ir.Region) else region
    if len(block.args) != 2 or len(block.ops) != 2:
        return None
    op, ret = block.ops
    if op.opcode not in MONOID_OPCODES or op.regions or len(op.operands) != 2:
        return None
    if ret.operands != [op.result] or set(map(id, op.operands)) != set(map(id, block.args)):
        return None
    dtype = np.dtype(dtype)
    if op.opcode in _BITWISE and not (dtypes.is_int(dtype) or dtypes.is_bool(dtype)):
        return None
    try:
        identity(op.opcode, dtype)
    except ValueError:
        return None
    return op.opcode
