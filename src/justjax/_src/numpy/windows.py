"""Window functions (`bartlett`, `blackman`, `hamming`, `hanning`, `kaiser`) and `i0`, the
Bessel function the Kaiser window is made of. Windows are float arrays of the default float
dtype; `M` is a concrete length."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.numpy import array_creation, ufuncs, util

__all__ = ["bartlett", "blackman", "hamming", "hanning", "i0", "kaiser"]


def _points(name: str, M: int) -> tuple[Any, int]:
    """`n = 1-M, 3-M, ..., M-1` (NumPy's symmetric sample points) and the concrete `M`."""
    M = core.concrete_or_error(int, M, f"M argument of jnp.{name}")
    dtype = dtypes.default_float_dtype()
    return array_creation.arange(1 - M, M, 2, dtype=dtype), M


def _cosine_window(name: str, M: int, *coefficients: float) -> Any:
    """`sum_k c_k cos(2 pi k n / (M-1))` for `n = 0 .. M-1` (1 for M == 1)."""
    M = core.concrete_or_error(int, M, f"M argument of jnp.{name}")
    dtype = dtypes.default_float_dtype()
    if M <= 1:
        return array_creation.ones(M, dtype=dtype)
    n = array_creation.arange(0, M, dtype=dtype)
    result = coefficients[0]
    for k, c in enumerate(coefficients[1:], start=1):
        result = result + c * ufuncs.cos(2 * k * np.pi * n / (M - 1))
    return result


def bartlett(M: int) -> Any:
    """The Bartlett (triangular) window of length `M`."""
    n, M = _points("bartlett", M)
    if M <= 1:
        return array_creation.ones(M, dtype=n.dtype)
    return 1 - ufuncs.abs(n) / (M - 1)


def blackman(M: int) -> Any:
    """The Blackman window of length `M`."""
    return _cosine_window("blackman", M, 0.42, -0.5, 0.08)


def hamming(M: int) -> Any:
    """The Hamming window of length `M`."""
    return _cosine_window("hamming", M, 0.54, -0.46)


def hanning(M: int) -> Any:
    """The Hann window of length `M`."""
    return _cosine_window("hanning", M, 0.5, -0.5)


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of length `M` and shape `beta`: `i0(beta sqrt(1 - (2n/(M-1) - 1)^2))
    / i0(beta)`."""
    M = core.concrete_or_error(int, M, "M argument of jnp.kaiser")
    dtype = dtypes.default_float_dtype()
    if M <= 1:
        return array_creation.ones(M, dtype=dtype)
    n = array_creation.arange(0, M, dtype=dtype)
    alpha = 0.5 * (M - 1)
    return i0(beta * ufuncs.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(array_creation.asarray(
        beta, dtype=dtype))


@custom_jvp
def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0, `exp(|x|) i0e(x)`.

    Args:
      x: real input (promoted to inexact).
    Returns:
      `I0(x)`.
    """
    [x] = util.promote_args_inexact("i0", x)
    if dtypes.is_complex(x.dtype):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    return lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i0e(x))


@i0.defjvp
def _i0_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # d/dx I0(x) = I1(x) = exp(|x|) i1e(x); finite at 0, where |x| is not differentiable.
    (x,), (t,) = primals, tangents
    [x] = util.promote_args_inexact("i0", x)
    i1 = lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i1e(x))
    return i0(x), i1 * t
