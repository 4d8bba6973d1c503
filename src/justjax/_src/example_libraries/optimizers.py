"""`jax.example_libraries.optimizers`: first-order optimizers as (init, update, get_params)
triples of pure functions over pytrees of parameters, step-size schedules and utilities.

An optimizer is written for one array (`init(x0) -> state`, `update(i, g, state) -> state`,
`get_params(state) -> x`, a state being any pytree of arrays); `optimizer` lifts it to
pytrees of parameters. Its state, an `OptimizerState`, keeps each parameter's state
flattened: `packed_state` (one list of leaves per parameter), the parameters' tree
definition and each state's tree definition. numpyro's `numpyro.optim` wraps these.
Written, as JAX's, against the public API.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import justjax.numpy as jnp
from justjax import tree_util

__all__ = ["Optimizer", "OptimizerState", "JoinPoint", "adagrad", "adam", "adamax",
           "clip_grads", "constant", "exponential_decay", "inverse_time_decay", "l2_norm",
           "make_schedule", "momentum", "nesterov", "optimizer", "pack_optimizer_state",
           "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd",
           "sm3", "unpack_optimizer_state", "Schedule", "Params", "State", "Updates",
           "Step", "InitFn", "UpdateFn", "ParamsFn"]

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], Any]
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """An optimizer's state over a pytree of parameters: per parameter,
the leaves of its state (`packed_state`) and their tree (`subtree_defs`); the parameters'
tree (`tree_def`). A pytree whose only child is `packed_state`."""

tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


class Optimizer(NamedTuple):
    """The three functions of an optimizer over pytrees."""
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_each(trees: list[Any]) -> tuple[list[list[Any]], list[Any]]:
    """Each tree's leaves and its tree definition."""
    flat = [tree_util.tree_flatten(tree) for tree in trees]
    return [leaves for leaves, _ in flat], [treedef for _, treedef in flat]


def _unflatten_each(treedefs: list[Any], leaves: list[list[Any]]) -> list[Any]:
    return [tree_util.tree_unflatten(treedef, l)
            for treedef, l in zip(treedefs, leaves, strict=True)]


def optimizer(opt_maker: Callable[..., tuple[Callable, Callable, Callable]]
              ) -> Callable[..., Optimizer]:
    """Lifts an optimizer written for single arrays to pytrees of parameters.

    Args:
      opt_maker: called with the optimizer's hyperparameters, returns
        `(init, update, get_params)` for one array.

    Returns:
      A function of the same hyperparameters returning an `Optimizer` whose functions take
      and return pytrees (`init_fn(params)`, `update_fn(i, grads, state)`,
      `params_fn(state)`).
    """

    @functools.wraps(opt_maker)
    def make(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def init_fn(params: Params) -> OptimizerState:
            leaves, treedef = tree_util.tree_flatten(params)
            packed, subtree_defs = _flatten_each([init(x) for x in leaves])
            return OptimizerState(packed, treedef, subtree_defs)

        @functools.wraps(update)
        def update_fn(i: Step, grads: Updates, state: OptimizerState) -> OptimizerState:
            packed, treedef, subtree_defs = state
            grad_leaves, grad_treedef = tree_util.tree_flatten(grads)
            if grad_treedef != treedef:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not "
                    "match the parameter tree structure with which it was initialized: "
                    f"parameter tree {treedef} and grad tree {grad_treedef}.")
            states = _unflatten_each(subtree_defs, packed)
            new_states = [update(i, g, s) for g, s in zip(grad_leaves, states, strict=True)]
            new_packed, new_defs = _flatten_each(new_states)
            for old, new in zip(subtree_defs, new_defs, strict=True):
                if old != new:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {old} and output {new}.")
            return OptimizerState(new_packed, treedef, subtree_defs)

        @functools.wraps(get_params)
        def params_fn(state: OptimizerState) -> Params:
            packed, treedef, subtree_defs = state
            params = [get_params(s) for s in _unflatten_each(subtree_defs, packed)]
            return tree_util.tree_unflatten(treedef, params)

        return Optimizer(init_fn, update_fn, params_fn)

    return make


# ---------------------------------------------------------------------------------------------
# Optimizers. Each update is written in the order JAX evaluates it (the same rounding).

def _first(state: tuple) -> Array:
    return state[0]


@optimizer
def sgd(step_size: float | Schedule) -> tuple[Callable, Callable, Callable]:
    """Stochastic gradient descent: `x - step_size(i) * g`.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    schedule = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - schedule(i) * g), (lambda x: x)


def _velocity_optimizer(step_size: float | Schedule, mass: float, nesterov: bool
                        ) -> tuple[Callable, Callable, Callable]:
    schedule = make_schedule(step_size)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        direction = mass * velocity + g if nesterov else velocity
        return x - schedule(i) * direction, velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    """Gradient descent with momentum: `v = mass * v + g; x -= step_size(i) * v`.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      mass: the momentum coefficient.

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    return _velocity_optimizer(step_size, mass, nesterov=False)


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    """Nesterov's accelerated gradient: `v = mass * v + g; x -= step_size(i) * (mass * v + g)`.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      mass: the momentum coefficient.

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    return _velocity_optimizer(step_size, mass, nesterov=True)


def _inverse_sqrt_or_zero(accumulated: Array, zero: Any) -> Array:
    return jnp.where(accumulated > 0, 1. / jnp.sqrt(accumulated), zero)


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9
            ) -> tuple[Callable, Callable, Callable]:
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      momentum: the momentum coefficient.

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    schedule = make_schedule(step_size)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1. - momentum) * (g * _inverse_sqrt_or_zero(g_sq, 0.0)) + momentum * m
        return x - schedule(i) * m, g_sq, m

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8
            ) -> tuple[Callable, Callable, Callable]:
    """RMSProp: the step divided by a running root mean square of the gradients.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      gamma: the decay of the mean square.
      eps: added to the mean square before its square root.

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    schedule = make_schedule(step_size)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1. - gamma)
        return x - schedule(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    """RMSProp with momentum on the scaled step.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      gamma: the decay of the mean square.
      eps: added to the mean square before its square root.
      momentum: the momentum coefficient.

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    schedule = make_schedule(step_size)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + schedule(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


def _bias_correction(beta: float, like: Array, i: Step) -> Array:
    """`1 - beta ** (i + 1)`, with beta in the moments' dtype."""
    return 1 - jnp.asarray(beta, like.dtype) ** (i + 1)


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
         ) -> tuple[Callable, Callable, Callable]:
    """Adam (Kingma and Ba 2015): bias-corrected first and second moment estimates.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      b1: the decay of the first moment (default 0.9).
      b2: the decay of the second moment (default 0.999).
      eps: added to the second moment's square root (default 1e-8).

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    schedule = make_schedule(step_size)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / _bias_correction(b1, m, i)
        v_hat = v / _bias_correction(b2, m, i)
        return x - schedule(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
           ) -> tuple[Callable, Callable, Callable]:
    """AdaMax: Adam with the infinity norm in place of the second moment.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      b1: the decay of the first moment (default 0.9).
      b2: the decay of the infinity norm (default 0.999).
      eps: added to the norm (default 1e-8).

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    schedule = make_schedule(step_size)

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (schedule(i) / _bias_correction(b1, m, i)) * m / (u + eps)
        return x, m, u

    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9
        ) -> tuple[Callable, Callable, Callable]:
    """SM3 (Anil et al. 2019): Adagrad with one accumulator per axis of each parameter.

    Args:
      step_size: a positive scalar, or a schedule mapping the step to one.
      momentum: the momentum coefficient.

    Returns:
      An (init_fun, update_fun, get_params) triple.
    """
    schedule = make_schedule(step_size)

    def along(ndim: int, v: Array, axis: int) -> Array:
        """`v`, the accumulator of `axis`, broadcastable against an ndim-array."""
        return v.reshape(tuple(-1 if d == axis else 1 for d in range(ndim)))

    def init(x0: Array) -> tuple:
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, m, accumulators, shape = state
        broadcast = [along(g.ndim, v, axis) for axis, v in enumerate(accumulators)]
        accum = functools.reduce(jnp.minimum, broadcast) + jnp.square(g)
        m = (1. - momentum) * (g * _inverse_sqrt_or_zero(accum, 0)) + momentum * m
        x = x - schedule(i) * m
        others = [tuple(d for d in range(x.ndim) if d != axis) for axis in range(x.ndim)]
        return x, m, [accum.max(axes) for axes in others], shape

    return init, update, lambda state: state[0].reshape(state[3])


# ---------------------------------------------------------------------------------------------
# Step-size schedules: functions of the step number.

def constant(step_size: Any) -> Schedule:
    """The schedule giving `step_size` at every step."""
    return lambda i: step_size


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """`step_size * decay_rate ** (i / decay_steps)`."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False) -> Schedule:
    """`step_size / (1 + decay_rate * i / decay_steps)`; with `staircase`, the ratio
    `i / decay_steps` floored."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: Any, decay_steps: Any, final_step_size: Any,
                     power: float = 1.0) -> Schedule:
    """From `step_size` to `final_step_size` over `decay_steps` steps as
    `(1 - i / decay_steps) ** power`, then constant."""

    def schedule(step_num: Any) -> Any:
        step_num = jnp.minimum(step_num, decay_steps)
        fraction = (1 - step_num / decay_steps) ** power
        return fraction * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """`values[k]` for steps past `k` of the `boundaries`.

    Raises:
      ValueError: the arguments are not sequences, or `values` is not one longer.
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as it is, a scalar as the constant schedule.

    Raises:
      TypeError: neither (the error's argument is the value's type).
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---------------------------------------------------------------------------------------------
# Utilities.

def l2_norm(tree: Any) -> Array:
    """The L2 norm of all the leaves of `tree` together."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """`grad_tree` scaled down to L2 norm `max_norm` where its norm is larger."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(
        lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """A parameter's state inside an unpacked optimizer state (a leaf of the parameters'
    tree holding the state's tree); iterates over that one subtree."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The parameters' pytree with a `JoinPoint` holding each parameter's state (for
    serialization).

    Args:
      opt_state: an `OptimizerState`.

    Returns:
      A pytree of `JoinPoint` leaves.
    """
    packed, treedef, subtree_defs = opt_state
    states = _unflatten_each(list(subtree_defs), list(packed))
    return tree_util.tree_unflatten(treedef, [JoinPoint(s) for s in states])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`.

    Args:
      marked_pytree: a pytree of `JoinPoint` leaves.

    Returns:
      The `OptimizerState`.
    """
    joins, treedef = tree_util.tree_flatten(marked_pytree)
    assert all(isinstance(j, JoinPoint) for j in joins)
    packed, subtree_defs = _flatten_each([j.subtree for j in joins])
    return OptimizerState(packed, treedef, subtree_defs)
