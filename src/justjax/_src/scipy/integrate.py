"""`jax.scipy.integrate`: numerical integration of sampled data."""
from __future__ import annotations

from typing import Any

from justjax._src.compilation.jit import jit
from justjax._src.numpy import numeric

__all__ = ["trapezoid"]


# Jitted with `axis` static, as JAX's is (so a traced or unhashable axis is refused).
@jit(static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of `y` along `axis` by the composite trapezoidal rule.

    JAX's `jax.scipy.integrate.trapezoid` (SciPy's `scipy.integrate.trapezoid`).

    Args:
      y: the sampled values.
      x: the sample points (1-D along `axis`, or of `y`'s shape); None for evenly spaced
        samples `dx` apart.
      dx: the spacing when `x` is None.
      axis: the axis to integrate along (static).
    Returns:
      The integral, of `y`'s promoted inexact dtype, with `axis` removed.
    """
    return numeric.trapezoid(y, x, dx, axis)
