"""`jax.experimental.ode.odeint`: adaptive Dormand-Prince (RK45) integration with the
adjoint method for reverse-mode derivatives, written, as in JAX, against the public API.

The forward pass integrates with Dormand-Prince 5(4) steps (FSAL), an error-per-step
controller (safety 0.9, growth at most 10x, shrink at most 5x) and Hairer's initial step,
and reads each requested time off the 4th-order polynomial that interpolates the step
around it (the step's ends, slopes and Dormand-Prince midpoint). Its derivative is a
`custom_vjp`: the cotangents run backwards through the augmented system (state, state
cotangent, time and parameter cotangents) between consecutive output times.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax.flatten_util import ravel_pytree
from justjax.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

# The Dormand-Prince tableau: nodes, stage weights (rows), 5th-order weights, and the
# difference of the 5th- and 4th-order weights (the error estimate).
_NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_STAGES = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
)
_FIFTH = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_ERROR = (35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
# Weights of the stages giving the state at the middle of a step (Shampine's dense output).
_MIDPOINT = tuple(w / 2 for w in (6025192743 / 30085553152, 0, 51252292925 / 65400821598,
                                  -2691868925 / 45128329728, 187940372067 / 1594534317056,
                                  -1776094331 / 19743644256, 11237099 / 235043384))


def _promote_inexact(*xs: Any) -> list[Any]:
    """The arrays in their common dtype, made inexact (integers become the default float)."""
    dtype = jnp.result_type(*xs)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.result_type(dtype, float)
    return [jnp.asarray(x, dtype) for x in xs]


def _rms_norm(x: Any) -> Any:
    return jnp.linalg.norm(x)


def initial_step_size(fun: Callable, t0: Any, y0: Any, order: int, rtol: float, atol: float,
                      f0: Any) -> Any:
    """Hairer, Norsett & Wanner's starting step (Solving ODEs I, II.4): from the sizes of
    the state, its slope and the slope's change over a trial Euler step."""
    y0, f0 = _promote_inexact(y0, f0)
    scale = atol + jnp.abs(y0) * rtol
    d0 = _rms_norm(y0 / scale.astype(y0.dtype))
    d1 = _rms_norm(f0 / scale.astype(f0.dtype))
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = _rms_norm((f1 - f0) / scale.astype(f0.dtype)) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def runge_kutta_step(func: Callable, y0: Any, f0: Any, t0: Any, dt: Any
                     ) -> tuple[Any, Any, Any, Any]:
    """One Dormand-Prince step from `(t0, y0)` with slope `f0`: the new state, its slope
    (the last stage), the error estimate and the seven stage slopes."""
    dtype = f0.dtype
    nodes = jnp.array(_NODES, dtype=dtype)
    stages = jnp.array(_STAGES, dtype=dtype)
    h = dt.astype(dtype)

    def stage(i: Any, k: Any) -> Any:
        y_i = y0 + h * jnp.dot(stages[i - 1, :], k)
        return k.at[i, :].set(func(y_i, t0 + dt * nodes[i - 1]))

    k = jnp.zeros((7, f0.shape[0]), dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, stage, k)
    y1 = h * jnp.dot(jnp.array(_FIFTH, dtype=dtype), k) + y0
    error = h * jnp.dot(jnp.array(_ERROR, dtype=dtype), k)
    return y1, k[-1], error, k


def mean_error_ratio(error_estimate: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    """The RMS of the error over the tolerance (mixed absolute/relative, by the larger of
    the step's end states)."""
    tolerance = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    ratio = error_estimate / tolerance.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(ratio ** 2))


def optimal_step_size(last_step: Any, mean_error_ratio: Any, safety: float = 0.9,
                      ifactor: float = 10.0, dfactor: float = 0.2, order: float = 5.0
                      ) -> Any:
    """The next step: `safety * ratio^(-1/order)` times the last, grown at most `ifactor`
    times and, after an accepted step, never shrunk (after a rejected one, at most by
    `dfactor`)."""
    floor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety,
                                              floor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def fit_4th_order_polynomial(y0: Any, y1: Any, y_mid: Any, dy0: Any, dy1: Any, dt: Any
                             ) -> tuple[Any, ...]:
    """The coefficients (highest first) of the quartic on [0, 1] through `y0`, `y_mid`
    and `y1` with slopes `dt * dy0`, `dt * dy1` at the ends."""
    h = dt.astype(y0.dtype)
    a = 2.0 * h * (dy1 - dy0) - 8.0 * (y0 + y1) + 16.0 * y_mid
    b = h * (5.0 * dy0 - 3.0 * dy1) + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = h * (dy1 - 4.0 * dy0) - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return a, b, c, h * dy0, y0


def interp_fit_dopri(y0: Any, y1: Any, k: Any, dt: Any) -> Any:
    """The interpolating quartic of a Dormand-Prince step, as a (5, n) coefficient array."""
    midpoint = jnp.array(_MIDPOINT, dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(midpoint, k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def _flat_state(func: Callable, unravel: Callable) -> Callable:
    """`func` on the flattened state (the solver works on one vector)."""
    def flat(y_flat: Any, *args: Any) -> Any:
        return ravel_pytree(func(unravel(y_flat), *args))[0]
    return flat


def odeint(func: Callable, y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = jnp.inf, hmax: float = jnp.inf) -> Any:
    """Integrates `dy/dt = func(y, t, *args)` from `y(t[0]) = y0`, returning `y` at every
    time of `t` (`jax.experimental.ode.odeint`).

    Args:
      func: the dynamics `(y, t, *args) -> dy/dt`, `y` a pytree like `y0`.
      y0: the initial state (a pytree of arrays).
      t: increasing float times; the first is the initial time.
      *args: extra arrays passed to `func` (differentiable).
      rtol, atol: the relative and absolute error tolerances.
      mxstep: the most steps between two output times.
      hmax: the largest step.
    Returns:
      The states, each leaf stacked along a new leading axis of length `len(t)`.
    Raises:
      TypeError: an argument that is not an array or scalar; non-float times.
    """
    for arg in tree_leaves(args):
        if not isinstance(arg, justjax.core.Tracer) and not _is_arraylike(arg):
            raise TypeError("The contents of odeint *args must be arrays or scalars, but got "
                            f"{arg}.")
    if not jnp.issubdtype(jnp.asarray(t).dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = justjax.closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _is_arraylike(x: Any) -> bool:
    return isinstance(x, (justjax.Array, np.ndarray, np.generic, bool, int, float, complex))


@functools.partial(justjax.jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_wrapper(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                    y0: Any, ts: Any, *args: Any) -> Any:
    y0_flat, unravel = ravel_pytree(y0)
    ys = _odeint(_flat_state(func, unravel), rtol, atol, mxstep, hmax, y0_flat, ts, *args)
    return justjax.vmap(unravel)(ys)


@functools.partial(justjax.custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float, y0: Any,
            ts: Any, *args: Any) -> Any:
    def dynamics(y: Any, t: Any) -> Any:
        return func(y, t, *args)

    def advance(carry: list[Any], target: Any) -> tuple[list[Any], Any]:
        """Steps until past `target`; `y(target)` off the last step's polynomial."""
        def more(state: list[Any]) -> Any:
            count, _, _, time, step, _, _ = state
            return (time < target) & (count < mxstep) & (step > 0)

        def attempt(state: list[Any]) -> list[Any]:
            count, y, f, time, step, last_time, coeffs = state
            y_new, f_new, error, k = runge_kutta_step(dynamics, y, f, time, step)
            ratio = mean_error_ratio(error, rtol, atol, y, y_new)
            next_step = jnp.clip(optimal_step_size(step, ratio), min=0.0, max=hmax)
            accepted = [count + 1, y_new, f_new, time + step, next_step, time,
                        interp_fit_dopri(y, y_new, k, step)]
            rejected = [count + 1, y, f, time, next_step, last_time, coeffs]
            return [jnp.where(ratio <= 1.0, a, r)
                    for a, r in zip(accepted, rejected, strict=True)]

        _, *carry = lax.while_loop(more, attempt, [0, *carry])
        _, _, time, _, last_time, coeffs = carry
        fraction = (target - last_time) / (time - last_time)
        return carry, jnp.polyval(coeffs, fraction.astype(coeffs.dtype))

    f0 = dynamics(y0, ts[0])
    step = jnp.clip(initial_step_size(dynamics, ts[0], y0, 4, rtol, atol, f0), min=0.0,
                    max=hmax)
    coeffs = jnp.array([y0] * 5)
    _, ys = lax.scan(advance, [y0, f0, ts[0], step, ts[0], coeffs], ts[1:])
    return jnp.concatenate((y0[None], ys))


def _odeint_fwd(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                y0: Any, ts: Any, *args: Any) -> tuple[Any, Any]:
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                residuals: Any, g: Any) -> tuple[Any, ...]:
    """The adjoint: between consecutive output times, the state runs backwards together
    with its cotangent and the time and argument cotangents (in negated time, so the
    solver's times increase)."""
    ys, ts, args = residuals

    def augmented(state: Any, minus_t: Any, *args: Any) -> Any:
        y, y_bar, *_ = state
        y_dot, pullback = justjax.vjp(func, y, -minus_t, *args)
        return (-y_dot, *pullback(y_bar))

    def back(carry: Any, i: Any) -> tuple[Any, Any]:
        y_bar, t0_bar, args_bar = carry
        # Moving an output time moves its output along the dynamics (a real quantity).
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            augmented, (ys[i], y_bar, t0_bar, args_bar), jnp.array([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(lambda x: x[1], (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], 0.0, tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), ts_bar_rev = lax.scan(back, init,
                                                     jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), ts_bar_rev[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
