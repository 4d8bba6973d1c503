"""`jax.scipy.cluster.vq`: vector quantization."""
from __future__ import annotations

from typing import Any

from justjax._src.numpy import linalg_extra, reductions, take, util

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Assigns each observation the nearest code (Euclidean distance) of `code_book`.

    JAX's `jax.scipy.cluster.vq.vq` (SciPy's `scipy.cluster.vq.vq`).

    Args:
      obs: observations, shape (M, N); 1-D observations are length-1 vectors.
      code_book: codes, shape (K, N) (or (K,) with 1-D `obs`).
      check_finite: unused, as in JAX.
    Returns:
      `(code, dist)`: the index (int) of each observation's nearest code, shape (M,), and
      the distance to it, of the promoted inexact dtype.
    Raises:
      TypeError: for a non-array argument. ValueError: for ranks that differ, or above 2.
    """
    del check_finite  # JAX ignores it: there is no data-dependent check under jit
    util.check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, book_arr = util.promote_dtypes_inexact(obs, code_book)
    if obs_arr.ndim != book_arr.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, book_arr = obs_arr[:, None], book_arr[:, None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    # (M, K) distances, each a norm over the feature axis.
    dist = linalg_extra.norm(obs_arr[:, None, :] - book_arr[None, :, :], axis=-1)
    code = reductions.argmin(dist, axis=-1)
    dist_min = take.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
    return code, dist_min
