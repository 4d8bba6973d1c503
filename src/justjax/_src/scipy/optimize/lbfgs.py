"""L-BFGS for `minimize(method="l-bfgs-experimental-do-not-rely-on-this")`, as JAX's.

Algorithm 7.5 of Nocedal & Wright, "Numerical Optimization" (1999, pp. 176-185): the
search direction is the two-loop recursion over the last `maxcor` steps and gradient
changes, scaled by gamma = (s . y) / (y . y); complex variables as in Sorber, Van Barel &
De Lathauwer (SIAM J. Optim. 22(3), 2012). The history is a fixed-size buffer, newest last.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from justjax._src.transformations.autodiff import value_and_grad
from justjax._src.core import dtypes
from justjax._src.lax.control_flow.library import fori_loop
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.numpy import array_creation, linalg_extra, rearranging, selection, ufuncs
from justjax._src.scipy.optimize.line_search import dot_highest, line_search


class LBFGSResults(NamedTuple):
    """The state of L-BFGS, and its result.

    Attributes:
      converged: the gradient's norm is below `gtol`.
      failed: stopped for another reason (status > 0) without converging.
      k: the iterations done.
      nfev, ngev: objective and gradient evaluations.
      x_k, f_k, g_k: the iterate, the objective and its gradient there.
      s_history, y_history, rho_history: the last `maxcor` steps, gradient changes and
        1 / (y . s), newest last (zeros before they fill).
      gamma: the scale of the initial inverse Hessian.
      status: 0 converged, 1 `maxiter`, 2 `maxfun`, 3 `maxgrad` reached, 4 the decrease
        below `ftol`, 5 the line search failed.
      ls_status: the last line search's status.
    """
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _minimize_lbfgs(fun: Callable[[Any], Any], x0: Any, maxiter: float | None = None,
                    norm: Any = np.inf, maxcor: int = 10, ftol: float = 2.220446049250313e-09,
                    gtol: float = 1e-05, maxfun: float | None = None,
                    maxgrad: float | None = None, maxls: int = 20) -> LBFGSResults:
    """Minimizes `fun` from `x0` by L-BFGS.

    Args:
      fun: a real scalar function of a 1-D (real or complex) array, differentiable.
      x0: the start point, 1-D.
      maxiter: the iteration limit (200 per variable when no limit at all is given).
      norm: the order of the gradient norm tested against `gtol`.
      maxcor: how many past steps the inverse Hessian estimate keeps.
      ftol: stop when an iteration decreases the objective by less than this.
      gtol: convergence when the gradient's norm is below this.
      maxfun, maxgrad: limits on objective and gradient evaluations.
      maxls: the line search's iteration limit.
    Returns:
      The final `LBFGSResults`.
    """
    d = len(x0)
    dtype = dtypes.dtype(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    # An absent limit is infinite, so that the `>=` tests below hold never.
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad
    f_0, g_0 = value_and_grad(fun)(x0)
    state = LBFGSResults(
        converged=array_creation.array(False, dtype=bool),
        failed=array_creation.array(False, dtype=bool),
        k=0, nfev=1, ngev=1, x_k=x0, f_k=f_0, g_k=g_0,
        s_history=array_creation.zeros((maxcor, d), dtype=dtype),
        y_history=array_creation.zeros((maxcor, d), dtype=dtype),
        rho_history=array_creation.zeros((maxcor,), dtype=dtype),
        gamma=1., status=0, ls_status=0)

    def step(state: LBFGSResults) -> LBFGSResults:
        p_k = _two_loop_recursion(state)
        found = line_search(f=fun, xk=state.x_k, pk=p_k, old_fval=state.f_k, gfk=state.g_k,
                            maxiter=maxls)
        s_k = array_creation.asarray(found.a_k).astype(p_k.dtype) * p_k
        y_k = found.g_k - state.g_k
        curvature = ufuncs.real(dot_highest(y_k, s_k))
        status = array_creation.array(0)
        # Later tests take precedence: a failed line search is reported over a limit.
        status = selection.where(state.f_k - found.f_k < ftol, 4, status)
        status = selection.where(state.ngev >= maxgrad, 3, status)
        status = selection.where(state.nfev >= maxfun, 2, status)
        status = selection.where(state.k >= maxiter, 1, status)
        status = selection.where(found.failed, 5, status)
        converged = linalg_extra.norm(found.g_k, ord=norm) < gtol
        gamma = curvature / ufuncs.real(dot_highest(ufuncs.conj(y_k), y_k))
        return state._replace(
            converged=converged, failed=(status > 0) & (~converged), k=state.k + 1,
            nfev=state.nfev + found.nfev, ngev=state.ngev + found.ngev,
            x_k=(state.x_k + s_k).astype(state.x_k.dtype),
            f_k=found.f_k.astype(state.f_k.dtype), g_k=found.g_k.astype(state.g_k.dtype),
            s_history=_pushed(state.s_history, s_k),
            y_history=_pushed(state.y_history, y_k),
            rho_history=_pushed(state.rho_history,
                                ufuncs.reciprocal(curvature).astype(y_k.dtype)),
            gamma=gamma.astype(state.g_k.dtype),
            status=selection.where(converged, 0, status), ls_status=found.status)

    return while_loop(lambda s: (~s.converged) & (~s.failed), step, state)


def _two_loop_recursion(state: LBFGSResults) -> Any:
    """The search direction -H g, with H the L-BFGS inverse Hessian estimate."""
    dtype = state.rho_history.dtype
    size = len(state.rho_history)
    # Only the last min(k, size) history entries are filled.
    filled = selection.where(state.k < size, state.k, size)

    def newest_first(j: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        q, alphas = carry
        i = size - 1 - j
        alpha = state.rho_history[i] * dot_highest(ufuncs.conj(state.s_history[i]),
                                                   q).real.astype(dtype)
        return q - alpha * ufuncs.conj(state.y_history[i]), alphas.at[i].set(alpha)

    def oldest_first(j: Any, q: Any) -> Any:
        i = size - filled + j
        beta = state.rho_history[i] * dot_highest(state.y_history[i], q).real.astype(dtype)
        return q + (alphas[i] - beta) * state.s_history[i]

    q = -ufuncs.conj(state.g_k)
    q, alphas = fori_loop(0, filled, newest_first,
                          (q, array_creation.zeros_like(state.rho_history)))
    return fori_loop(0, filled, oldest_first, state.gamma * q)


def _pushed(history: Any, new: Any) -> Any:
    """`history` shifted one place toward the front, with `new` last."""
    return rearranging.roll(history, -1, axis=0).at[-1].set(new)
