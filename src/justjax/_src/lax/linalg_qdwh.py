"""`lax.linalg.qdwh`: the polar decomposition by the QR-based dynamically weighted Halley
iteration (Nakatsukasa, Bai and Gygi, "Optimizing Halley's iteration for computing the matrix
polar decomposition", SIAM J. Matrix Anal. Appl. 2010).

Each step maps the singular values of the iterate through the rational function
`x (a + b x^2) / (1 + c x^2)` whose weights (a, b, c) follow from a lower bound `l` on the
smallest singular value; the weights are computed in Python ahead of time. Steps with a large
`c` use the backward-stable QR form, the later ones the cheaper Cholesky form; once the
weights are (3, 1, 3) (Halley's), the iteration continues until the iterate stops moving.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.config import config
from justjax._src.core import dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise, reductions, selection, slicing, structural
from justjax._src.lax import linalg_common as lc
from justjax._src.lax.control_flow.library import fori_loop
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.lax.linalg import cholesky, qr
from justjax._src.lax.linalg_triangular import triangular_solve

__all__ = ["qdwh"]

# Above this weight c, a step uses the QR form (the Cholesky form's matrix would be badly
# conditioned).
_CHOLESKY_CUTOFF = 100


def _weights(l: float) -> tuple[float, float, float, float]:
    """The dynamic weights (a, b, c) for a lower bound `l` on the singular values, and the
    bound after the step."""
    l2 = l * l
    dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
    sqd = (1.0 + dd) ** 0.5
    a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
    b = (a - 1) ** 2 / 4
    c = a + b - 1
    return a, b, c, l * (a + b * l2) / (1 + c * l2)


def _schedule(eps: float, max_iterations: int) -> tuple[list, list]:
    """The (a, b, c) of the QR steps and of the Cholesky steps, until the bound on the
    smallest singular value reaches 1."""
    qr_steps, cholesky_steps = [], []
    l = eps
    tol_l = 10.0 * eps / 2.0
    while l + tol_l < 1 and len(qr_steps) + len(cholesky_steps) < max_iterations:
        a, b, c, l = _weights(l)
        (qr_steps if c > _CHOLESKY_CUTOFF else cholesky_steps).append((a, b, c))
    return qr_steps, cholesky_steps


def _mask(x: Any, m: Any, n: Any) -> Any:
    """`x` with the entries outside its leading `m x n` block zeroed (dynamic shapes)."""
    rows = structural.broadcasted_iota(np.int32, lc.shape(x), 0)
    cols = structural.broadcasted_iota(np.int32, lc.shape(x), 1)
    inside = elementwise.bitwise_and(elementwise.lt(rows, m), elementwise.lt(cols, n))
    return selection.select(inside, x, lc.full_like(x, 0))


def _qr_step(u: Any, weights: Any) -> Any:
    """`e u + (a - e) / sqrt(c) Q1 Q2^H`, [Q1; Q2] the thin Q of [sqrt(c) u; I]."""
    a, b, c = weights[0], weights[1], weights[2]
    m, n = lc.shape(u)
    e = b / c
    sqrt_c = elementwise.sqrt(c)
    stacked = structural.concatenate((sqrt_c * u, lc.eye(lc.dtype(u), n)), 0)
    q, _ = qr(stacked, full_matrices=False)
    q1 = q[:m, :]
    q2 = q[m:, :]
    return e * u + (a - e) / sqrt_c * lc.dot_highest(q1, lc.H(q2))


def _cholesky_step(u: Any, weights: Any) -> Any:
    """`e u + (a - e) u (I + c u^H u)^-1`, through the Cholesky factor of I + c u^H u."""
    a, b, c = weights[0], weights[1], weights[2]
    n = lc.shape(u)[1]
    e = b / c
    x = c * lc.dot_highest(lc.H(u), u) + lc.eye(lc.dtype(u), n)
    y = cholesky(x, symmetrize_input=False)
    # z = u (y y^H)^-1: solve y w = u^H, then y^H z^H = w.
    w = triangular_solve(y, lc.H(u), left_side=True, lower=True)
    z_h = triangular_solve(y, w, left_side=True, lower=True, transpose_a=True,
                           conjugate_a=True)
    return e * u + (a - e) * lc.H(z_h)


def _frobenius(x: Any) -> Any:
    absx = elementwise.abs(x)
    return elementwise.sqrt(reductions.reduce_sum(absx * absx, (0, 1)))


def _qdwh(x: Any, max_iterations: int, eps: float | None) -> tuple[Any, Any, Any, Any]:
    dt = lc.dtype(x)
    real = dtypes.real_dtype(dt) if dtypes.is_complex(dt) else np.dtype(dt)
    eps = float(dtypes.finfo(dt).eps) if eps is None else eps
    absx = elementwise.abs(x)
    one_norm = reductions.reduce_max(reductions.reduce_sum(absx, (0,)), (0,))
    inf_norm = reductions.reduce_max(reductions.reduce_sum(absx, (1,)), (0,))
    # Scaled so that the singular values are at most 1.
    scale = elementwise.rsqrt(one_norm) * elementwise.rsqrt(inf_norm)
    scale = selection.select(elementwise.eq(one_norm, np.array(0, real)),
                             np.array(1, real), scale)
    u = x * structural.convert_element_type(scale, dt)
    tol_norm = float(np.cbrt(10.0 * eps / 2.0))
    qr_steps, cholesky_steps = _schedule(eps, max_iterations)

    def run(u: Any, steps: list, step_fun: Any) -> tuple[Any, Any]:
        if not steps:
            return u, np.bool_(True)
        table = np.asarray(steps, dtype=dt)

        def body(k: Any, carry: tuple) -> tuple:
            u, _ = carry
            weights = slicing.dynamic_index_in_dim(table, k, keepdims=False)
            u_new = step_fun(u, weights)
            moving = elementwise.gt(_frobenius(u_new - u), np.array(tol_norm, real))
            return u_new, moving

        return fori_loop(0, len(steps), body, (u, np.bool_(True)))

    u, _ = run(u, qr_steps, _qr_step)
    u, moving = run(u, cholesky_steps, _cholesky_step)
    halley = np.asarray((3, 1, 3), dtype=dt)

    def cond_fun(state: tuple) -> Any:
        k, _, moving = state
        return elementwise.bitwise_and(moving, elementwise.lt(k, np.int32(max_iterations)))

    def body_fun(state: tuple) -> tuple:
        k, u, _ = state
        u_new = _cholesky_step(u, halley)
        moving = elementwise.gt(_frobenius(u_new - u), np.array(tol_norm, real))
        return k + np.int32(1), u_new, moving

    start = np.int32(len(qr_steps) + len(cholesky_steps))
    num_iters, u, moving = while_loop(cond_fun, body_fun, (start, u, moving))
    # One Newton-Schulz step polishes the orthogonality.
    u = 1.5 * u - 0.5 * lc.dot_highest(u, lc.dot_highest(lc.H(u), u))
    h = lc.dot_highest(lc.H(u), x)
    h = (h + lc.H(h)) / 2
    return u, h, num_iters, elementwise.bitwise_not(moving)


def _qdwh_impl(x: Any, *, is_hermitian: bool, max_iterations: int, eps: float | None,
               dynamic_shape: tuple[int, int] | None) -> tuple[Any, Any, Any, Any]:
    del is_hermitian  # The Hermitian iteration is the general one here.
    m_static, n_static = lc.shape(x)
    if m_static < n_static:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        x = _mask(x, *dynamic_shape)
    with config.override("jax_default_matmul_precision", "float32"):
        return _qdwh(x, max_iterations, eps)


_qdwh_jit = jit(_qdwh_impl, static_argnames=("is_hermitian", "max_iterations", "eps"))


def qdwh(x: Any, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None
         ) -> tuple[Any, Any, Any, Any]:
    """Polar decomposition `x = u h` by QDWH.

    Args:
      x: an `(M, N)` matrix, M >= N.
      is_hermitian: whether `x` is Hermitian (static; accepted for JAX's signature).
      max_iterations: the iteration cap (10 by default; static).
      eps: the convergence tolerance (the dtype's eps by default; static).
      dynamic_shape: `(m, n)`: only the leading `m x n` block of `x` is the matrix.
    Returns:
      `(u, h, num_iters, is_converged)`: `u` with orthonormal columns, Hermitian positive
      semi-definite `h`, the iterations taken and whether the iteration converged.
    """
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    return _qdwh_jit(x, is_hermitian=bool(is_hermitian), max_iterations=max_iterations,
                     eps=eps, dynamic_shape=dynamic_shape)

