"""Multiply-high: `mulhi_p` and its wrapper `lax.mulhi`, the upper N bits of the 2N-bit
product of two N-bit integers.

JAX lowers it to `chlo.mulhi`; here it lowers to that op's decomposition in N-bit arithmetic
(as JAX's lowering for jaxlibs without `chlo.mulhi` does), so both backends run it with the
ops they already have: each operand splits into N/2-bit halves, the four partial products
are summed with their carries, and a signed result subtracts the other operand wherever an
operand is negative (the two's-complement correction).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.interpreters import ad, lowering
from justjax._src.lax import creation, elementwise, selection, structural
from justjax._src.lax.utils import INT, broadcast_shapes

__all__ = ["mulhi", "mulhi_p"]

mulhi_p = elementwise.binop("mulhi", INT)
ad.defjvp_zero(mulhi_p)


def _unsigned_mulhi(x: Any, y: Any, bits: int) -> Any:
    """The high half of the product of two unsigned `bits`-bit values, in `bits`-bit
    arithmetic: schoolbook multiplication on half words."""
    dtype = core.get_aval(x).dtype
    half = np.array(bits // 2, dtype)
    mask = np.array((1 << (bits // 2)) - 1, dtype)
    x_lo, x_hi = elementwise.bitwise_and(x, mask), elementwise.shift_right_logical(x, half)
    y_lo, y_hi = elementwise.bitwise_and(y, mask), elementwise.shift_right_logical(y, half)
    lo_lo = elementwise.mul(x_lo, y_lo)
    hi_lo = elementwise.mul(x_hi, y_lo)
    lo_hi = elementwise.mul(x_lo, y_hi)
    hi_hi = elementwise.mul(x_hi, y_hi)
    # The middle column: each term is below 2^bits, and so is their sum (3 * (2^h - 1)^2 ...
    # keeps below 2^(2h) = 2^bits), so nothing is lost.
    cross = elementwise.add(elementwise.add(elementwise.shift_right_logical(lo_lo, half),
                                            elementwise.bitwise_and(hi_lo, mask)), lo_hi)
    high = elementwise.add(hi_hi, elementwise.shift_right_logical(hi_lo, half))
    return elementwise.add(high, elementwise.shift_right_logical(cross, half))


def _mulhi_decomposed(x: Any, y: Any) -> Any:
    """`mulhi` in ops of the operands' own width (the lowering's body)."""
    shape = broadcast_shapes(np.shape(x), np.shape(y))
    x, y = creation.broadcast_to(x, shape), creation.broadcast_to(y, shape)
    dtype = core.get_aval(x).dtype
    bits = dtypes.itemsize_bits(dtype)
    if dtypes.is_unsigned(dtype):
        return _unsigned_mulhi(x, y, bits)
    unsigned = np.dtype(f"uint{bits}")
    ux = structural.bitcast_convert_type(x, unsigned)
    uy = structural.bitcast_convert_type(y, unsigned)
    high = _unsigned_mulhi(ux, uy, bits)
    # Two's complement: x = ux - 2^bits when x < 0, so the signed high word is the unsigned
    # one minus y (and minus x when y < 0), modulo 2^bits.
    high = elementwise.sub(high, selection.select(elementwise.lt(x, np.array(0, dtype)),
                                                  uy, creation.full_like(uy, 0)))
    high = elementwise.sub(high, selection.select(elementwise.lt(y, np.array(0, dtype)),
                                                  ux, creation.full_like(ux, 0)))
    return structural.bitcast_convert_type(high, dtype)


lowering.register_lowering(mulhi_p, lowering.lower_fun(_mulhi_decomposed,
                                                       multiple_results=False))


def mulhi(x: Any, y: Any, /) -> Any:
    """Elementwise multiply-high: the upper N bits of the 2N-bit product of N-bit integers.

    Args:
      x, y: integer arrays of the same dtype (a scalar broadcasts).
    Returns:
      An array of that dtype (JAX lowers it to `chlo.mulhi`).
    """
    return mulhi_p.bind(x, y)
