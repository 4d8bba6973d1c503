"""Bessel functions: the modified ones of order 0 and 1 (and their exponentially scaled
forms) and bessel_jn."""
from __future__ import annotations

import operator
from typing import Any

from justjax._src.core import core
from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.lax.control_flow.scan import scan
from justjax._src.numpy import array_creation, selection, ufuncs, util

__all__ = ["bessel_jn", "i0", "i0e", "i1", "i1e"]


def i0e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x)."""
    [x] = util.promote_args_inexact("i0e", x)
    return lax_special.bessel_i0e(x)


def i0(x: Any) -> Any:
    """The modified Bessel function of order 0, as exp(|x|) i0e(x)."""
    [x] = util.promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i0e(x))


def i1e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x)."""
    [x] = util.promote_args_inexact("i1e", x)
    return lax_special.bessel_i1e(x)


def i1(x: Any) -> Any:
    """The modified Bessel function of order 1, as exp(|x|) i1e(x)."""
    [x] = util.promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i1e(x))


def _miller_step(carry: tuple, k: Any) -> tuple[tuple, Any]:
    """One step down of J_k(z) = (2 (k + 1) / z) J_{k+1}(z) - J_{k+2}(z); the even orders
    are summed for the normalization 1 = J_0 + 2 sum_k J_2k."""
    f0, f1, norm, z = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0
    norm = norm + selection.where(ufuncs.remainder(k, 2) == 0, 2.0 * f, 0.0)
    return (f1, f, norm, z), f


@util.jitted_as_in_jax(static_argnames=("v", "n_iter"))
def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """The Bessel functions of the first kind J_0(z) .. J_v(z), by Miller's backward
    recurrence from order `n_iter`, normalized by J_0 + 2 sum J_2k = 1.

    Args:
      z: real array.
      v: the highest order, a concrete non-negative integer.
      n_iter: the order the recurrence starts from.
    Returns:
      An array of shape `(v + 1,) + z.shape`: row k holds J_k(z).
    """
    z = array_creation.asarray(z)
    [z] = util.promote_dtypes_inexact(z)
    # JAX means to reject complex z here but its check lets it through; it fails (a
    # TypeError) in the recurrence's `mod` instead, as this does.
    v = core.concrete_or_error(operator.index, v, "Argument v of bessel_jn.")
    n_iter = core.concrete_or_error(int, n_iter, "Argument n_iter of bessel_jn.")
    start = (array_creation.zeros_like(z), array_creation.full_like(z, 1e-16),
             array_creation.zeros_like(z), z)
    orders = array_creation.arange(n_iter + 1, dtype=z.dtype)
    (_, _, norm, _), values = scan(_miller_step, start, orders, reverse=True)
    return values[:v + 1] / (norm - values[0])
