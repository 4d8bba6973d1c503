"""The line search of `jax.scipy.optimize`: a step satisfying the strong Wolfe conditions.

Algorithms 3.5 (bracketing) and 3.6 (zoom) of Nocedal & Wright, "Numerical Optimization"
(1999, pp. 59-61), as JAX 0.10.2 runs them: the first trial step comes from the previous
decrease (capped at 1) and later ones double; zoom picks a cubic, then a quadratic, then a
bisection trial; every branch is a selection inside `while_loop`s (no `cond`), so the search
runs under jit and vmap. The same trials and counts as JAX's matter: BFGS's iteration
counts and results follow from them, including JAX's quirks (zoom fails at once when the
bracket is reversed, `a_hi < a_lo`; a failed zoom leaves the step at 1).
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from justjax._src.transformations.autodiff import value_and_grad
from justjax._src.core import dtypes
from justjax._src.lax.control_flow.while_loop import while_loop
from justjax._src.lax.dot import Precision
from justjax._src.numpy import array_creation, selection, tensor, ufuncs, util

# Zoom takes a cubic trial only this far (as a fraction of the bracket) inside the bracket,
# a quadratic one this far; otherwise it bisects.
_CUBIC_MARGIN = 0.2
_QUADRATIC_MARGIN = 0.1
# Zoom gives up after this many trials (SciPy: 10; JAX allows more).
_ZOOM_MAXITER = 30


def dot_highest(a: Any, b: Any) -> Any:
    """`jnp.dot` at HIGHEST precision, as every product in the optimizers is."""
    return tensor.dot(a, b, precision=Precision.HIGHEST)


def _cubic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimizer of the cubic through (a, fa) with slope fpa there, (b, fb) and (c, fc);
    NaN when it has none (then the bracket test rejects it)."""
    dtype = dtypes.result_type(a, fa, fpa, b, fb, c, fc)
    db = b - a
    dc = c - a
    denominator = (db * dc) ** 2 * (db - dc)
    basis = array_creation.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    rhs = array_creation.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    cubic, square = dot_highest(basis, rhs) / denominator
    radical = square * square - 3. * cubic * fpa
    return a + (-square + ufuncs.sqrt(radical)) / (3. * cubic)


def _quadratic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimizer of the parabola through (a, fa) with slope fpa there, and (b, fb)."""
    db = b - a
    square = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2. * square)


def _choose(pred: Any, state: Any, **new: Any) -> Any:
    """`state` with the fields `new` taken where `pred` holds."""
    return state._replace(**{name: selection.where(pred, value, getattr(state, name))
                             for name, value in new.items()})


class _Objective(NamedTuple):
    """The objective restricted to the search line: phi(t) = f(x + t p)."""
    fun: Callable[[Any], Any]
    xk: Any
    pk: Any
    phi_0: Any
    dphi_0: Any
    c1: float
    c2: float

    def __call__(self, t: Any) -> tuple[Any, Any, Any]:
        """(phi(t), phi'(t), the gradient of f at x + t p)."""
        t = array_creation.array(t, dtype=self.pk.dtype)
        phi, grad = value_and_grad(self.fun)(self.xk + t * self.pk)
        return phi, ufuncs.real(dot_highest(grad, self.pk)), grad

    def not_sufficient_decrease(self, a: Any, phi: Any) -> Any:
        """The first Wolfe condition fails at step `a`."""
        return phi > self.phi_0 + self.c1 * a * self.dphi_0

    def curvature_holds(self, dphi: Any) -> Any:
        """The (strong) second Wolfe condition holds for slope `dphi`."""
        return ufuncs.abs(dphi) <= -self.c2 * self.dphi_0


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any  # the previous a_hi or a_lo: the cubic's third point
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom_trial(state: _ZoomState) -> Any:
    """The next trial step in the bracket: cubic, else quadratic, else the midpoint."""
    span = state.a_hi - state.a_lo
    low = ufuncs.minimum(state.a_hi, state.a_lo)
    high = ufuncs.maximum(state.a_hi, state.a_lo)
    cubic_margin = _CUBIC_MARGIN * span
    quadratic_margin = _QUADRATIC_MARGIN * span
    cubic = _cubic_minimizer(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                             state.phi_hi, state.a_rec, state.phi_rec)
    use_cubic = (state.j > 0) & (cubic > low + cubic_margin) & (cubic < high - cubic_margin)
    quadratic = _quadratic_minimizer(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                                     state.phi_hi)
    use_quadratic = ((~use_cubic) & (quadratic > low + quadratic_margin)
                     & (quadratic < high - quadratic_margin))
    midpoint = (state.a_lo + state.a_hi) / 2.
    trial = selection.where(use_quadratic, quadratic, midpoint)
    return selection.where(use_cubic, cubic, trial)


def _zoom_step(objective: _Objective, state: _ZoomState) -> _ZoomState:
    """One zoom iteration: evaluate a trial step and shrink the bracket around it."""
    span = state.a_hi - state.a_lo
    # A bracket this narrow (or reversed) ends the search as failed.
    threshold = selection.where(dtypes.finfo(span.dtype).bits < 64, 1e-5, 1e-10)
    state = state._replace(failed=state.failed | (span <= threshold))
    a_j = _zoom_trial(state)
    phi_j, dphi_j, g_j = objective(a_j)
    phi_j = phi_j.astype(state.phi_lo.dtype)
    dphi_j = dphi_j.astype(state.dphi_lo.dtype)
    g_j = g_j.astype(state.g_star.dtype)
    state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
    # Exactly one of: the trial becomes the high end; it is the answer; it becomes the low
    # end (and the old low end the high end, when the slope points back past it). Each
    # update reads the state as the previous one left it: the values are the same as the
    # original's (the cases exclude each other), and so are the dtypes, which JAX's
    # weak-type promotion of the loop carry depends on.
    to_hi = objective.not_sufficient_decrease(a_j, phi_j) | (phi_j >= state.phi_lo)
    to_star = objective.curvature_holds(dphi_j) & (~to_hi)
    to_lo = (~to_hi) & (~to_star)
    lo_to_hi = (dphi_j * (state.a_hi - state.a_lo) >= 0.) & to_lo
    state = _choose(to_hi, state, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                    a_rec=state.a_hi, phi_rec=state.phi_hi)
    state = state._replace(done=to_star | state.done)
    state = _choose(to_star, state, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
    state = _choose(lo_to_hi, state, a_hi=state.a_lo, phi_hi=state.phi_lo,
                    dphi_hi=state.dphi_lo, a_rec=state.a_hi, phi_rec=state.phi_hi)
    state = _choose(to_lo & ~lo_to_hi, state, a_rec=state.a_lo, phi_rec=state.phi_lo)
    state = _choose(to_lo, state, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
    state = state._replace(j=state.j + 1)
    return state._replace(failed=state.failed | (state.j >= _ZOOM_MAXITER))


def _zoom(objective: _Objective, a_lo: Any, phi_lo: Any, dphi_lo: Any, a_hi: Any, phi_hi: Any,
          dphi_hi: Any, g_0: Any, skip: Any) -> _ZoomState:
    """Zoom into the bracket [a_lo, a_hi] for a strong-Wolfe step (none when `skip`)."""
    state = _ZoomState(
        done=False, failed=False, j=0,
        a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo,
        a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2., phi_rec=(phi_lo + phi_hi) / 2.,
        a_star=1., phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
        nfev=0, ngev=0)
    return while_loop(lambda s: (~s.done) & (~skip) & (~s.failed),
                      lambda s: _zoom_step(objective, s), state)


class _SearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any  # the previous trial step, its value and slope
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    """What a line search found.

    Attributes:
      failed: True when no strong-Wolfe step was found.
      nit: the number of bracketing iterations.
      nfev, ngev: the objective and gradient evaluations made.
      k: the bracketing iteration counter at the end (nit + 1).
      a_k: the step.
      f_k, g_k: the objective and its gradient at the step.
      status: 0 found, 1 zoom failed, 3 the iteration limit reached.
    """
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _take_zoom(taken: Any, zoom: _ZoomState, state: _SearchState) -> _SearchState:
    """`state` ended by the zoom's outcome where `taken`."""
    state = state._replace(done=taken | state.done, failed=(taken & zoom.failed) | state.failed)
    return _choose(taken, state, a_star=zoom.a_star, phi_star=zoom.phi_star,
                   dphi_star=zoom.dphi_star, g_star=zoom.g_star)


def _search_step(objective: _Objective, start: Any, gfk: Any,
                 state: _SearchState) -> _SearchState:
    """One bracketing iteration: try a step; stop there, or zoom into a bracket it makes."""
    a_i = selection.where(state.i == 1, start, state.a_i1 * 2.)
    phi_i, dphi_i, g_i = objective(a_i)
    state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
    from_previous_low = (objective.not_sufficient_decrease(a_i, phi_i)
                         | ((phi_i >= state.phi_i1) & (state.i > 1)))
    accept = objective.curvature_holds(dphi_i) & (~from_previous_low)
    from_trial_low = (dphi_i >= 0.) & (~from_previous_low) & (~accept)
    # The bracket is [a_{i-1}, a_i] either way; its low end (the lower objective) is the
    # previous step when this one decreased too little, else this step. Both zooms are
    # traced (only the chosen one iterates): no `cond` in the loop body.
    from_previous = _zoom(objective, state.a_i1, state.phi_i1, state.dphi_i1,
                          a_i, phi_i, dphi_i, gfk, ~from_previous_low)
    from_trial = _zoom(objective, a_i, phi_i, dphi_i,
                       state.a_i1, state.phi_i1, state.dphi_i1, gfk, ~from_trial_low)
    state = state._replace(nfev=state.nfev + from_previous.nfev + from_trial.nfev,
                           ngev=state.ngev + from_previous.ngev + from_trial.ngev)
    state = _take_zoom(from_previous_low, from_previous, state)
    state = state._replace(done=accept | state.done)
    state = _choose(accept, state, a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)
    state = _take_zoom(from_trial_low, from_trial, state)
    return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)


def line_search(f: Callable[[Any], Any], xk: Any, pk: Any, old_fval: Any = None,
                old_old_fval: Any = None, gfk: Any = None, c1: float = 1e-4, c2: float = 0.9,
                maxiter: int = 20) -> LineSearchResults:
    """A step along `pk` from `xk` that satisfies the strong Wolfe conditions.

    Args:
      f: the objective, a real scalar function of a 1-D array.
      xk: the start point.
      pk: the search direction (a descent direction).
      old_fval, gfk: f and its gradient at `xk`, when known (else evaluated).
      old_old_fval: f at the previous iterate: the first trial step is the one that would
        repeat the last decrease (at most 1); None starts at 1.
      c1, c2: the Wolfe constants (sufficient decrease, curvature).
      maxiter: the limit on bracketing iterations.
    Returns:
      `LineSearchResults`.
    """
    xk, pk = util.promote_dtypes_inexact(xk, pk)
    objective = _Objective(f, xk, pk, None, None, c1, c2)
    evaluated = old_fval is None or gfk is None
    if evaluated:
        phi_0, dphi_0, gfk = objective(0)
    else:
        phi_0 = old_fval
        dphi_0 = ufuncs.real(dot_highest(gfk, pk))
    objective = objective._replace(phi_0=phi_0, dphi_0=dphi_0)
    if old_old_fval is None:
        start = 1
    else:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = selection.where(candidate > 1, 1.0, candidate)
    state = _SearchState(
        done=array_creation.array(False, dtype=bool),
        failed=array_creation.array(False, dtype=bool),
        # Iterations count from 1, as in Nocedal & Wright (SciPy starts at 0).
        i=1, a_i1=0., phi_i1=phi_0, dphi_i1=dphi_0,
        nfev=1 if evaluated else 0, ngev=1 if evaluated else 0,
        a_star=0., phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)
    state = while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed),
                       lambda s: _search_step(objective, start, gfk, s), state)
    return _results(state, maxiter)


def _results(state: _SearchState, maxiter: int) -> LineSearchResults:
    status = selection.where(
        state.failed, array_creation.array(1),
        selection.where(state.i > maxiter, array_creation.array(3), array_creation.array(0)))
    step = array_creation.asarray(state.a_star)
    # Below 64 bits, a vanishing step would stall the optimizer: floor its size at 1e-8.
    tiny = (dtypes.finfo(step.dtype).bits != 64) & (ufuncs.abs(step) < 1e-8)
    step = selection.where(tiny, ufuncs.sign(step) * 1e-8, step)
    return LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1,
                             nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=step,
                             f_k=state.phi_star, g_k=state.g_star, status=status)
