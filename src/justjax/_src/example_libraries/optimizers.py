"""`jax.example_libraries.optimizers`: first-order optimizers as `(init, update,
get_params)` triples over pytrees of arrays.

An optimizer is written for one array (`optimizer`-decorated makers); the decorator lifts
it to pytrees: the state is an `OptimizerState` holding each leaf's state flattened, the
parameter tree's structure and each leaf state's structure (a pytree itself, so states
pass through `jit`). Step sizes are numbers or schedules `i -> step size`.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

import justjax.numpy as jnp
from justjax.tree_util import (register_pytree_node, tree_flatten, tree_map, tree_unflatten)

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], float]
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]

__all__ = [
    "Array", "InitFn", "JoinPoint", "Optimizer", "OptimizerState", "Params", "ParamsFn",
    "Schedule", "State", "Step", "UpdateFn", "Updates", "adagrad", "adam", "adamax",
    "clip_grads", "constant", "exponential_decay", "inverse_time_decay", "l2_norm",
    "make_schedule", "momentum", "nesterov", "optimizer", "pack_optimizer_state",
    "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3",
    "unpack_optimizer_state",
]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
# Only the packed leaf states are children: the structures are static.
register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


class Optimizer(NamedTuple):
    """An optimizer over pytrees: `init_fn(params)`, `update_fn(i, grads, state)`,
    `params_fn(state)`."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_states(states: list[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Each state's leaves and structure (tuples, as JAX packs them)."""
    flat = [tree_flatten(s) for s in states]
    return tuple(leaves for leaves, _ in flat), tuple(tree for _, tree in flat)


def optimizer(opt_maker: Callable[..., tuple[Callable, Callable, Callable]]
              ) -> Callable[..., Optimizer]:
    """Lifts a maker of a one-array optimizer `(init, update, get_params)` to pytrees.

    Args:
      opt_maker: `(*args, **kwargs) -> (init(x0), update(i, g, state), get_params(state))`
        for a single array.
    Returns:
      A maker of an `Optimizer` over pytrees of arrays.
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            states, subtrees = _flatten_states([init(x0) for x0 in x0_flat])
            return OptimizerState(states, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState
                        ) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError("optimizer update function was passed a gradient tree that "
                                "did not match the parameter tree structure with which it "
                                f"was initialized: parameter tree {tree} and grad tree "
                                f"{grad_tree_def}.")
            states = [tree_unflatten(s, leaves)
                      for s, leaves in zip(subtrees, states_flat, strict=True)]
            new_flat, new_subtrees = _flatten_states(
                [update(i, g, s) for g, s in zip(grad_flat, states, strict=True)])
            for before, after in zip(subtrees, new_subtrees, strict=True):
                if after != before:
                    raise TypeError("optimizer update function produced an output structure "
                                    "that did not match its input structure: input "
                                    f"{before} and output {after}.")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, tree, subtrees = opt_state
            return tree_unflatten(tree, [
                get_params(tree_unflatten(s, leaves))
                for s, leaves in zip(subtrees, states_flat, strict=True)])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# -- the optimizers -----------------------------------------------------------------------------

@optimizer
def sgd(step_size: float | Schedule) -> tuple[Callable, Callable, Callable]:
    """Stochastic gradient descent: `x - step_size(i) * g`."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> Array:
        return x0

    def update(i: Step, g: Array, x: Array) -> Array:
        return x - step_size(i) * g

    return init, update, lambda x: x


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    """Heavy-ball momentum: `v = mass * v + g; x - step_size(i) * v`."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, lambda state: state[0]


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    """Nesterov's accelerated gradient: the step looks ahead along the new velocity."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, lambda state: state[0]


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9
            ) -> tuple[Callable, Callable, Callable]:
    """Adagrad (Duchi et al.): the gradient scaled by the root of its summed squares, with
    momentum."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]
               ) -> tuple[Array, Array, Array]:
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8
            ) -> tuple[Callable, Callable, Callable]:
    """RMSProp: the gradient over the root of a moving average of its squares."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, lambda state: state[0]


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    """RMSProp with momentum on the scaled steps."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]
               ) -> tuple[Array, Array, Array]:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, lambda state: state[0]


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
         ) -> tuple[Callable, Callable, Callable]:
    """Adam (Kingma & Ba): bias-corrected moving averages of the gradient and its square."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]
               ) -> tuple[Array, Array, Array]:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, lambda state: state[0]


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
           ) -> tuple[Callable, Callable, Callable]:
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]
               ) -> tuple[Array, Array, Array]:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        corrected = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - corrected * m / (u + eps), m, u

    return init, update, lambda state: state[0]


def _without(seq: Any, index: int) -> list[Any]:
    items = list(seq)
    del items[index]
    return items


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9
        ) -> tuple[Callable, Callable, Callable]:
    """SM3 (Anil et al.): Adagrad with one accumulator per row, column ... of each array, the
    squares' bound being the smallest of the accumulators covering an entry."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, list[Array], tuple[int, ...]]:
        shape = jnp.shape(x0)
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def along(ndim: int, v: Array, axis: int) -> Array:
        """`v` (one entry per index of `axis`) shaped to broadcast over `ndim` axes."""
        return jnp.expand_dims(v, tuple(d for d in range(ndim) if d != axis))

    def update(i: Step, g: Array, state: tuple) -> tuple:
        x, m, vs, shape = state
        bounds = [along(jnp.ndim(g), v, axis) for axis, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, bounds) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(_without(range(x.ndim), axis))) for axis in range(x.ndim)]
        return x, m, vs, shape

    return init, update, lambda state: state[0].reshape(state[3])


# -- schedules -----------------------------------------------------------------------------------

def constant(step_size: float) -> Schedule:
    """The schedule `i -> step_size`."""
    def schedule(i: Step) -> float:
        return step_size
    return schedule


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """`step_size * decay_rate ** (i / decay_steps)`."""
    def schedule(i: Step) -> Any:
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size: float, decay_steps: float, decay_rate: float,
                       staircase: bool = False) -> Schedule:
    """`step_size / (1 + decay_rate * i / decay_steps)` (the quotient floored when
    `staircase`)."""
    def schedule(i: Step) -> Any:
        ratio = jnp.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * ratio)
    return schedule


def polynomial_decay(step_size: float, decay_steps: int, final_step_size: float,
                     power: float = 1.0) -> Schedule:
    """From `step_size` to `final_step_size` over `decay_steps` steps along
    `(1 - i / decay_steps) ** power`, then constant."""
    def schedule(step_num: Step) -> Any:
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """`values[j]` for steps past `j` of the `boundaries`.

    Raises:
      ValueError: not two sequences, or not one more value than boundaries.
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i: Step) -> Any:
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as it is; a scalar as a constant schedule.

    Raises:
      TypeError: anything else (the type as the message, as JAX).
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# -- utilities -----------------------------------------------------------------------------------

def l2_norm(tree: Any) -> Array:
    """The Euclidean norm of all the leaves together."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """The gradients scaled down to `max_norm` when their `l2_norm` exceeds it."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where an optimizer state's per-parameter subtree joins the parameter tree."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    # Iterating yields the subtree, as pickling and `tree_util` round trips expect.
    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as the parameter tree with a `JoinPoint` (holding that leaf's state) at
    each leaf: a plain pytree, e.g. to save it."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(s, leaves)
                for s, leaves in zip(subtree_defs, states_flat, strict=True)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state takes a pytree whose leaves are JoinPoints")
    states_flat, subtree_defs = _flatten_states([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
