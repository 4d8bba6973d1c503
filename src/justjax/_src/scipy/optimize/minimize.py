"""`jax.scipy.optimize.minimize` and its `OptimizeResults`."""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

from justjax._src.numpy import ufuncs
from justjax._src.scipy.optimize.bfgs import minimize_bfgs
from justjax._src.scipy.optimize.lbfgs import _minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of `minimize`.

    Attributes:
      x: the solution found.
      success: whether the optimization converged.
      status: the solver's end state: 0 converged; for BFGS 1 `maxiter` reached, 3 zoom
        failed, 4 saddle point reached, 5 the line search's iteration limit reached, -1
        undefined; for L-BFGS 1 `maxiter`, 2 `maxfun`, 3 `maxgrad` reached, 4 too little
        progress (`ftol`), 5 the line search failed.
      fun: the objective at `x`.
      jac: its gradient at `x`.
      hess_inv: the inverse Hessian estimate (BFGS), or None (L-BFGS).
      nfev: the objective evaluations.
      njev: the gradient evaluations.
      nit: the iterations.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable[..., Any], x0: Any, args: tuple = (), *, method: str,
             tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimizes a scalar function of one or more variables.

    JAX's `jax.scipy.optimize.minimize` (SciPy's interface, with gradients by autodiff).
    Runs under jit and vmap. Not reverse-differentiable (its loops have no reverse-mode
    rule, as in JAX); forward mode goes through.

    Args:
      fun: the objective, `fun(x, *args)`, a real scalar for a 1-D array `x`.
      x0: the start point, shape (n,).
      args: further arguments of `fun` (a tuple).
      method: "BFGS", or "l-bfgs-experimental-do-not-rely-on-this" (case-insensitive).
      tol: unused, as in JAX (give the solver's own options instead).
      options: the solver's options: `maxiter` for both; BFGS: `norm`, `gtol`,
        `line_search_maxiter`; L-BFGS: `norm`, `maxcor`, `ftol`, `gtol`, `maxfun`,
        `maxgrad`, `maxls`.
    Returns:
      `OptimizeResults`.
    Raises:
      TypeError: when `args` is not a tuple, or an option is unknown to the solver.
      ValueError: for an unknown method.
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError("args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")

    def objective(x: Any) -> Any:
        return fun(x, *args)

    if method.lower() == "bfgs":
        bfgs = minimize_bfgs(objective, x0, **options)
        return OptimizeResults(
            x=bfgs.x_k, success=bfgs.converged & ufuncs.logical_not(bfgs.failed),
            status=bfgs.status, fun=bfgs.f_k, jac=bfgs.g_k, hess_inv=bfgs.H_k,
            nfev=bfgs.nfev, njev=bfgs.ngev, nit=bfgs.k)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        lbfgs = _minimize_lbfgs(objective, x0, **options)
        return OptimizeResults(
            x=lbfgs.x_k, success=lbfgs.converged & ufuncs.logical_not(lbfgs.failed),
            status=lbfgs.status, fun=lbfgs.f_k, jac=lbfgs.g_k, hess_inv=None,
            nfev=lbfgs.nfev, njev=lbfgs.ngev, nit=lbfgs.k)
    raise ValueError(f"Method {method} not recognized")
