"""`jax.scipy.stats.dirichlet`: the Dirichlet distribution on the simplex with
concentrations `alpha` (the components run along `x`'s first axis)."""
from __future__ import annotations

from typing import Any

from justjax._src.core import core
from justjax._src.lax import elementwise as lax
from justjax._src.lax import structural
from justjax._src.numpy import joining, reductions, ufuncs, util
from justjax._src.scipy import special
from justjax._src.scipy.stats.common import NEG_INF, fill_where

__all__ = ["logpdf", "pdf"]


def _on_simplex(x: Any) -> Any:
    """Where every component is positive and the components sum to 1 (within 1e-6)."""
    positive = reductions.all(ufuncs.greater(x, 0), axis=0)
    total = reductions.sum(x, axis=0)
    return ufuncs.logical_and(positive, ufuncs.less(ufuncs.abs(ufuncs.subtract(total, 1)), 1e-6))


def _check_shapes(x_shape: tuple[int, ...], alpha_shape: tuple[int, ...]) -> None:
    if len(alpha_shape) != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha_shape}")
    if x_shape[0] not in (alpha_shape[0], alpha_shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x_shape}, alpha.shape={alpha_shape}")


def logpdf(x: Any, alpha: Any) -> Any:
    """The log density `sum((alpha - 1) log x) - (sum(gammaln(alpha)) -
    gammaln(sum(alpha)))`; `-inf` off the simplex.

    Args:
      x: points on the simplex, components along axis 0; with one component fewer than
        `alpha`, the last is `1 - sum(x)`.
      alpha: the concentrations, one-dimensional.
    Returns:
      An array of shape `x.shape[1:]`.
    Raises:
      ValueError: for an `alpha` that is not one-dimensional or an `x` of the wrong length.
    """
    x, alpha = util.promote_dtypes_inexact(x, alpha)
    x_shape = core.get_aval(x).shape
    alpha_shape = core.get_aval(alpha).shape
    _check_shapes(x_shape, alpha_shape)
    one = util.const(x, 1)
    if x_shape[0] != alpha_shape[0]:
        last = lax.sub(one, reductions.sum(x, axis=0, keepdims=True))
        x = joining.concatenate([x, last], axis=0)
    log_norm = ufuncs.subtract(reductions.sum(special.gammaln(alpha)),
                               special.gammaln(reductions.sum(alpha)))
    ndim = len(core.get_aval(x).shape)
    if ndim > 1:
        alpha = structural.broadcast_in_dim(alpha, alpha_shape + (1,) * (ndim - 1), (0,))
    log_kernel = reductions.sum(special.xlogy(lax.sub(alpha, one), x), axis=0)
    log_probs = lax.sub(log_kernel, log_norm)
    return fill_where(ufuncs.logical_not(_on_simplex(x)), NEG_INF, log_probs)


def pdf(x: Any, alpha: Any) -> Any:
    """The density, `exp(logpdf(x, alpha))`.

    Args:
      x: points on the simplex, components along axis 0.
      alpha: the concentrations, one-dimensional.
    Returns:
      An array of shape `x.shape[1:]`.
    """
    return lax.exp(logpdf(x, alpha))
