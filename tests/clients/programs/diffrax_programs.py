"""Diffrax as its documentation uses it (docs.kidger.site/diffrax: the README's example, the
"Getting started", stiff-ODE, neural-ODE and SDE examples, and the API pages of `SaveAt`,
`PIDController`, the adjoints and `Event`).

Each public function is one program for `tests/clients/run_programs.py`: written for JAX, it
returns a small dict of results. Run with real JAX they give
`tests/clients/records/diffrax.json`; under `python -m justjax run` they must give the same.
Diffrax's implicit solvers run lineax (linear solves) and optimistix (root finding).
"""
from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optax
import optimistix as optx


def _stats(sol: diffrax.Solution) -> dict:
    """The solve's step counts (the controller's decisions, which must match JAX's)."""
    return {name: sol.stats[name] for name in
            ("num_steps", "num_accepted_steps", "num_rejected_steps")}


def readme_dopri5() -> dict:
    """The README's example: dy/dt = -y with Dopri5 and a fixed step, saved at t1."""
    term = diffrax.ODETerm(lambda t, y, args: -y)
    solver = diffrax.Dopri5()
    sol = diffrax.diffeqsolve(term, solver, t0=0, t1=1, dt0=0.1, y0=1.0)
    return {"ts": sol.ts, "ys": sol.ys, "result_ok": bool(sol.result == diffrax.RESULTS.successful),
            **_stats(sol)}


def _lotka_volterra(t, y, args):
    alpha, beta, gamma, delta = args
    prey, predator = y
    return jnp.stack([alpha * prey - beta * prey * predator,
                      -gamma * predator + delta * prey * predator])


def tsit5_saveat_pid() -> dict:
    """"Getting started": Lotka-Volterra with Tsit5, `SaveAt(ts=...)` and a
    `PIDController` choosing the steps."""
    term = diffrax.ODETerm(_lotka_volterra)
    args = (0.1, 0.02, 0.4, 0.02)
    saveat = diffrax.SaveAt(ts=jnp.linspace(0.0, 30.0, 7))
    controller = diffrax.PIDController(rtol=1e-5, atol=1e-5)
    sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=30.0, dt0=0.1,
                              y0=jnp.array([10.0, 10.0]), args=args, saveat=saveat,
                              stepsize_controller=controller)
    return {"ts": sol.ts, "ys": sol.ys, **_stats(sol)}


def pid_controller_coefficients() -> dict:
    """`PIDController` with PID coefficients and a step-growth cap, inside a
    `ClipStepSizeController` that steps onto a jump at t=2.5, on Dopri5 (a pendulum);
    `SaveAt(t0=True, t1=True, steps=True)` saves every step (unused slots are inf)."""
    term = diffrax.ODETerm(lambda t, y, args: jnp.array([y[1], -jnp.sin(y[0])]))
    controller = diffrax.ClipStepSizeController(
        diffrax.PIDController(rtol=1e-4, atol=1e-4, pcoeff=0.3, icoeff=0.4, factormax=2.0),
        jump_ts=jnp.array([2.5]))
    sol = diffrax.diffeqsolve(term, diffrax.Dopri5(), t0=0.0, t1=5.0, dt0=0.5,
                              y0=jnp.array([2.5, 0.0]), stepsize_controller=controller,
                              saveat=diffrax.SaveAt(t0=True, t1=True, steps=True),
                              max_steps=64)
    n = int(sol.stats["num_accepted_steps"]) + 1
    return {"ts": sol.ts[:n], "ys": sol.ys[:n], "unused_ts_are_inf": bool(
        jnp.all(jnp.isinf(sol.ts[n + 1:]))), **_stats(sol)}


def _robertson(t, y, args):
    k1, k2, k3 = args
    y0, y1, y2 = y
    return jnp.stack([-k1 * y0 + k3 * y1 * y2,
                      k1 * y0 - k2 * y1 ** 2 - k3 * y1 * y2,
                      k2 * y1 ** 2])


def kvaerno5_stiff() -> dict:
    """The stiff-ODE example: Robertson's chemical reactions with the implicit Kvaerno5
    (a Newton root find through optimistix, linear solves through lineax) under a
    `PIDController`, saved at a few times; in 64-bit, as the example runs it (in float32
    the Newton iterations' last bits decide a few step acceptances)."""
    with jax.enable_x64(True):
        term = diffrax.ODETerm(_robertson)
        sol = diffrax.diffeqsolve(
            term, diffrax.Kvaerno5(), t0=0.0, t1=10.0, dt0=0.0002,
            y0=jnp.array([1.0, 0.0, 0.0]), args=(0.04, 3e7, 1e4),
            saveat=diffrax.SaveAt(ts=jnp.array([0.0, 0.1, 1.0, 10.0])),
            stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-9))
        return {"ys": sol.ys, "mass": jnp.sum(sol.ys, axis=1), **_stats(sol)}


def dense_output() -> dict:
    """`SaveAt(dense=True)`: the solution evaluated between steps, and its derivative."""
    term = diffrax.ODETerm(lambda t, y, args: jnp.cos(t) * y)
    sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=3.0, dt0=0.25,
                              y0=jnp.array([1.0, 2.0]), saveat=diffrax.SaveAt(dense=True))
    return {"at_1_3": sol.evaluate(1.3), "between": sol.evaluate(0.5, 2.0),
            "derivative": sol.derivative(2.2), "ys_is_none": sol.ys is None}


def _decay_loss(rate: jax.Array, adjoint: diffrax.AbstractAdjoint) -> jax.Array:
    term = diffrax.ODETerm(lambda t, y, args: -args * y + jnp.sin(t))
    sol = diffrax.diffeqsolve(term, diffrax.Dopri5(), t0=0.0, t1=2.0, dt0=0.1,
                              y0=jnp.array([1.0, -0.5]), args=rate, adjoint=adjoint,
                              saveat=diffrax.SaveAt(ts=jnp.array([0.5, 1.0, 2.0])),
                              stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-6))
    return jnp.sum(sol.ys ** 2)


def adjoint_gradients() -> dict:
    """`jax.grad` through a solve with `RecursiveCheckpointAdjoint` (the default:
    differentiating the solver's steps) and `BacksolveAdjoint` (solving the adjoint ODE
    backwards in time); both approximate the same gradient."""
    rate = jnp.array(0.7)
    value, grad_checkpoint = jax.jit(jax.value_and_grad(
        lambda r: _decay_loss(r, diffrax.RecursiveCheckpointAdjoint())))(rate)
    grad_backsolve = jax.jit(jax.grad(
        lambda r: _decay_loss(r, diffrax.BacksolveAdjoint())))(rate)
    grad_direct = jax.grad(lambda r: _decay_loss(r, diffrax.DirectAdjoint()))(rate)
    return {"value": value, "grad_checkpoint": grad_checkpoint,
            "grad_backsolve": grad_backsolve, "grad_direct": grad_direct}


def vmap_initial_conditions() -> dict:
    """`jax.vmap` of a jitted adaptive solve over a batch of initial conditions (each
    element takes its own steps), and the gradient of the final state with respect to each."""

    @jax.jit
    def solve(y0):
        term = diffrax.ODETerm(_lotka_volterra)
        sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=5.0, dt0=0.1, y0=y0,
                                  args=(0.1, 0.02, 0.4, 0.02),
                                  stepsize_controller=diffrax.PIDController(rtol=1e-5,
                                                                            atol=1e-5))
        return sol.ys[-1], sol.stats["num_steps"]

    y0s = jnp.array([[10.0, 10.0], [5.0, 20.0], [20.0, 2.0]])
    finals, steps = jax.vmap(solve)(y0s)
    jac = jax.vmap(jax.jacrev(lambda y0: solve(y0)[0]))(y0s)
    return {"finals": finals, "num_steps": steps, "jacobians": jac}


class _VectorField(eqx.Module):
    mlp: eqx.nn.MLP

    def __call__(self, t, y, args):
        return self.mlp(y)


def train_neural_ode() -> dict:
    """The neural-ODE example, shortened: an MLP vector field fitted with optax adam to a
    spiral's trajectory, gradients through `diffeqsolve` under `eqx.filter_jit`."""
    ts = jnp.linspace(0.0, 2.0, 9)
    true = diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, y, args: jnp.array([[-0.1, 1.0], [-1.0, -0.1]]) @ y),
        diffrax.Tsit5(), t0=0.0, t1=2.0, dt0=0.1, y0=jnp.array([2.0, 0.0]),
        saveat=diffrax.SaveAt(ts=ts)).ys
    model = _VectorField(eqx.nn.MLP(2, 2, width_size=16, depth=2, activation=jnp.tanh,
                                    key=jax.random.PRNGKey(0)))
    optim = optax.adam(3e-3)
    opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_value_and_grad
    def loss(model):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(model), diffrax.Tsit5(), t0=0.0, t1=2.0,
                                  dt0=0.1, y0=jnp.array([2.0, 0.0]),
                                  saveat=diffrax.SaveAt(ts=ts),
                                  stepsize_controller=diffrax.PIDController(rtol=1e-3,
                                                                            atol=1e-6))
        return jnp.mean((sol.ys - true) ** 2)

    @eqx.filter_jit
    def step(model, opt_state):
        value, grads = loss(model)
        updates, opt_state = optim.update(grads, opt_state)
        return value, eqx.apply_updates(model, updates), opt_state

    losses = []
    for _ in range(5):
        value, model, opt_state = step(model, opt_state)
        losses.append(value)
    return {"losses": jnp.stack(losses), "true_last": true[-1],
            "w0": model.mlp.layers[0].weight[:2]}


def sde_brownian() -> dict:
    """The SDE example: an Itô SDE as `MultiTerm(ODETerm, ControlTerm)` driven by a
    `VirtualBrownianTree` from a fixed key, solved with Euler and with Heun; the Brownian
    motion evaluated directly."""
    t0, t1 = 0.0, 1.0
    drift = lambda t, y, args: -y
    diffusion = lambda t, y, args: 0.1 * t
    brownian = diffrax.VirtualBrownianTree(t0, t1, tol=1e-3, shape=(),
                                           key=jax.random.PRNGKey(0))
    terms = diffrax.MultiTerm(diffrax.ODETerm(drift),
                              diffrax.ControlTerm(diffusion, brownian))
    saveat = diffrax.SaveAt(ts=jnp.array([0.25, 0.5, 1.0]))
    euler = diffrax.diffeqsolve(terms, diffrax.Euler(), t0, t1, dt0=0.05, y0=1.0,
                                saveat=saveat)
    heun = diffrax.diffeqsolve(terms, diffrax.Heun(), t0, t1, dt0=0.05, y0=1.0,
                               saveat=saveat)
    return {"euler": euler.ys, "heun": heun.ys, "w_0_5": brownian.evaluate(0.0, 0.5),
            "w_increment": brownian.evaluate(0.3, 0.7)}


def event_termination() -> dict:
    """An `Event`: a ball thrown up stops when its height crosses zero; optimistix's
    root finder locates the crossing."""
    term = diffrax.ODETerm(lambda t, y, args: jnp.array([y[1], -9.81]))
    event = diffrax.Event(lambda t, y, args, **kwargs: y[0],
                          root_finder=optx.Newton(rtol=1e-5, atol=1e-5, norm=optx.rms_norm))
    sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=5.0, dt0=0.05,
                              y0=jnp.array([1.0, 4.0]), event=event)
    return {"t_hit": sol.ts, "y_hit": sol.ys,
            "event_result": bool(sol.result == diffrax.RESULTS.event_occurred)}
