"""`jax.scipy.stats.vonmises`: the von Mises (circular normal) distribution with
concentration `kappa`, centred at 0.

Arguments are promoted to a common inexact dtype and broadcast together."""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.lax import elementwise as lax
from justjax._src.lax import special as lax_special
from justjax._src.numpy import selection, util
from justjax._src.scipy.stats.common import NAN

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Any:
    """The log density `kappa (cos(x) - 1) - log(2 pi i0e(kappa))` (the exponentially
    scaled Bessel function keeps large `kappa` finite); NaN where `kappa <= 0`.

    Args:
      x: the angle.
      kappa: the concentration.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    x, kappa = util.promote_args_inexact("vonmises.logpdf", x, kappa)
    kernel = lax.mul(kappa, lax.sub(lax.cos(x), util.const(x, 1)))
    log_norm = lax.log(lax.mul(util.const(kappa, 2 * np.pi), lax_special.bessel_i0e(kappa)))
    return selection.where(lax.gt(kappa, util.const(kappa, 0)), lax.sub(kernel, log_norm), NAN)


def pdf(x: Any, kappa: Any) -> Any:
    """The density, `exp(logpdf(x, kappa))`.

    Args:
      x: the angle.
      kappa: the concentration.
    Returns:
      An array of the arguments' promoted inexact dtype and broadcast shape.
    """
    return lax.exp(logpdf(x, kappa))
