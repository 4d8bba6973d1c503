"""BFGS for `jax.scipy.optimize.minimize(method="BFGS")`.

Algorithm 6.1 of Nocedal & Wright, "Numerical Optimization" (1999, pp. 136-143): the
inverse Hessian estimate H is updated from each step s and gradient change y as
H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T with rho = 1 / (y . s), the step found
by the strong-Wolfe line search. One `while_loop`, so it runs under jit and vmap.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from justjax._src.transformations.autodiff import value_and_grad
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.lax.dot import Precision
from justjax._src.numpy import array_creation, linalg_extra, selection, tensor, ufuncs
from justjax._src.scipy.optimize.line_search import dot_highest, line_search


class _BFGSResults(NamedTuple):
    """The state of BFGS, and its result.

    Attributes:
      converged: the gradient's norm is below `gtol`.
      failed: the last line search failed.
      k: the iterations done.
      nfev, ngev, nhev: objective, gradient and Hessian evaluations.
      x_k, f_k, g_k: the iterate, the objective and its gradient there.
      H_k: the inverse Hessian estimate.
      old_old_fval: the objective at the previous iterate.
      status: 0 converged, 1 `maxiter` reached, 2 + the line search's status when it
        failed (3: its zoom failed, 5: its iteration limit), -1 otherwise.
      line_search_status: the last line search's status.
    """
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _updated_inverse_hessian(H: Any, s: Any, y: Any) -> Any:
    """The BFGS update of H from step `s` and gradient change `y` (H kept when y . s is 0
    or not finite)."""
    rho = ufuncs.reciprocal(dot_highest(y, s))
    outer = s[:, np.newaxis] * y[np.newaxis, :]
    w = array_creation.eye(s.shape[0], dtype=rho.dtype) - rho * outer
    updated = (tensor.einsum("ij,jk,lk", w, H, w, precision=Precision.HIGHEST)
               + rho * s[:, np.newaxis] * s[np.newaxis, :])
    return selection.where(ufuncs.isfinite(rho), updated, H)


def minimize_bfgs(fun: Callable[[Any], Any], x0: Any, maxiter: int | None = None,
                  norm: Any = np.inf, gtol: float = 1e-5,
                  line_search_maxiter: int = 10) -> _BFGSResults:
    """Minimizes `fun` from `x0` by BFGS.

    Args:
      fun: a real scalar function of a 1-D array, differentiable.
      x0: the start point, 1-D.
      maxiter: the iteration limit (default 200 per variable).
      norm: the order of the gradient norm tested against `gtol`.
      gtol: convergence when the gradient's norm is below this.
      line_search_maxiter: the line search's iteration limit.
    Returns:
      The final `_BFGSResults`.
    """
    if maxiter is None:
        maxiter = np.size(x0) * 200
    initial_H = array_creation.eye(x0.shape[0], dtype=x0.dtype)
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(
        converged=linalg_extra.norm(g_0, ord=norm) < gtol, failed=False,
        k=0, nfev=1, ngev=1, nhev=0,
        x_k=x0, f_k=f_0, g_k=g_0, H_k=initial_H,
        # As SciPy: a previous value that makes the first trial step about 1 / |g|.
        old_old_fval=f_0 + linalg_extra.norm(g_0) / 2,
        status=0, line_search_status=0)

    def keep_going(state: _BFGSResults) -> Any:
        return (ufuncs.logical_not(state.converged) & ufuncs.logical_not(state.failed)
                & (state.k < maxiter))

    def step(state: _BFGSResults) -> _BFGSResults:
        p_k = -dot_highest(state.H_k, state.g_k)
        found = line_search(fun, state.x_k, p_k, old_fval=state.f_k,
                            old_old_fval=state.old_old_fval, gfk=state.g_k,
                            maxiter=line_search_maxiter)
        s_k = found.a_k * p_k
        return state._replace(
            converged=linalg_extra.norm(found.g_k, ord=norm) < gtol,
            failed=found.failed, k=state.k + 1,
            nfev=state.nfev + found.nfev, ngev=state.ngev + found.ngev,
            x_k=state.x_k + s_k, f_k=found.f_k, g_k=found.g_k,
            H_k=_updated_inverse_hessian(state.H_k, s_k, found.g_k - state.g_k),
            old_old_fval=state.f_k, line_search_status=found.status)

    state = while_loop(keep_going, step, state)
    status = selection.where(
        state.converged, 0,
        selection.where(state.k == maxiter, 1,
                        selection.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)
