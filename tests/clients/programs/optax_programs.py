"""Optax as its documentation uses it (optax.readthedocs.io: "Getting started", the API pages).

Each public function is one program for `tests/clients/run_programs.py`: written for JAX (plain
`import jax`, `import optax`), it returns a small dict of results. Run with real JAX they give
the records in `tests/clients/records/optax.json`; run under `python -m justjax run` they must
give the same numbers.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _quadratic_problem() -> tuple[dict, jax.Array, jax.Array]:
    """A linear least-squares problem: parameters, inputs and targets (fixed keys)."""
    kx, kw, kp = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(kx, (16, 3))
    y = x @ jax.random.normal(kw, (3,)) + 0.5
    params = {"w": jax.random.normal(kp, (3,)) * 0.1, "b": jnp.zeros(())}
    return params, x, y


def _mse(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def _fit(optimizer: optax.GradientTransformation, steps: int, jit: bool = True
         ) -> tuple[dict, object, list[float]]:
    """The optax quick-start loop: init, grad, update, apply_updates; the loss per step."""
    params, x, y = _quadratic_problem()
    opt_state = optimizer.init(params)

    def step(params, opt_state):
        loss, grads = jax.value_and_grad(_mse)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    if jit:
        step = jax.jit(step)
    losses = []
    for _ in range(steps):
        params, opt_state, loss = step(params, opt_state)
        losses.append(float(loss))
    return params, opt_state, losses


def adam_quickstart() -> dict:
    """`optax.adam` on a least-squares fit, step by step outside jit; Adam's state."""
    params, state, losses = _fit(optax.adam(learning_rate=0.1), steps=5, jit=False)
    adam_state = state[0]
    return {"losses": losses, "w": params["w"], "b": params["b"],
            "count": adam_state.count, "mu_w": adam_state.mu["w"], "nu_b": adam_state.nu["b"]}


def adamw_weight_decay() -> dict:
    """`optax.adamw` (decoupled weight decay needs the params in `update`), jitted steps."""
    params, _, losses = _fit(optax.adamw(learning_rate=0.05, weight_decay=0.1), steps=8)
    return {"losses": losses, "w": params["w"], "b": params["b"]}


def sgd_momentum() -> dict:
    """`optax.sgd` with momentum, and with Nesterov momentum."""
    params, _, losses = _fit(optax.sgd(learning_rate=0.05, momentum=0.9), steps=8)
    nesterov, _, nesterov_losses = _fit(optax.sgd(0.05, momentum=0.9, nesterov=True), steps=8)
    return {"losses": losses, "w": params["w"], "nesterov_losses": nesterov_losses,
            "nesterov_w": nesterov["w"]}


def chain_clip_by_global_norm() -> dict:
    """`optax.chain(clip_by_global_norm, scale_by_adam, scale)`, and the clipping alone."""
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.scale_by_adam(),
                            optax.scale(-0.1))
    params, _, losses = _fit(optimizer, steps=6)
    grads = {"a": jnp.array([3.0, 4.0]), "b": jnp.array([[12.0]])}
    clip = optax.clip_by_global_norm(6.5)
    clipped, _ = clip.update(grads, clip.init(grads))
    return {"losses": losses, "w": params["w"], "global_norm": optax.global_norm(grads),
            "clipped_a": clipped["a"], "clipped_b": clipped["b"],
            "clipped_norm": optax.global_norm(clipped)}


def schedules() -> dict:
    """The schedule functions, evaluated at a range of steps (as arrays and as ints)."""
    steps = jnp.arange(0, 120, 7)
    warmup_cosine = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=1.0, warmup_steps=10, decay_steps=100, end_value=0.01)
    exponential = optax.exponential_decay(init_value=0.5, transition_steps=10,
                                          decay_rate=0.9, transition_begin=5)
    staircase = optax.exponential_decay(0.5, transition_steps=10, decay_rate=0.5,
                                        staircase=True)
    piecewise = optax.piecewise_constant_schedule(
        init_value=1.0, boundaries_and_scales={20: 0.5, 60: 0.1})
    linear = optax.linear_schedule(init_value=1.0, end_value=0.0, transition_steps=50)
    joined = optax.join_schedules([optax.constant_schedule(0.3), linear], boundaries=[30])
    cosine = optax.cosine_decay_schedule(init_value=2.0, decay_steps=80, alpha=0.1)
    return {"warmup_cosine": warmup_cosine(steps), "exponential": exponential(steps),
            "staircase": staircase(steps), "piecewise": piecewise(steps),
            "linear": linear(steps), "joined": joined(steps), "cosine": cosine(steps),
            "warmup_cosine_at_int": float(warmup_cosine(15)),
            "piecewise_at_int": float(piecewise(61))}


def adam_with_schedule() -> dict:
    """A schedule as Adam's learning rate (the step count lives in the optimizer state)."""
    schedule = optax.warmup_cosine_decay_schedule(0.0, 0.2, warmup_steps=3, decay_steps=10)
    params, state, losses = _fit(optax.adam(learning_rate=schedule), steps=6)
    return {"losses": losses, "w": params["w"], "count": state[0].count}


def inject_hyperparams() -> dict:
    """`optax.inject_hyperparams`: the learning rate is state, changed between steps."""
    optimizer = optax.inject_hyperparams(optax.adam)(learning_rate=0.1)
    params, x, y = _quadratic_problem()
    state = optimizer.init(params)
    losses = []
    for lr in (0.1, 0.1, 0.01, 0.01):
        state.hyperparams["learning_rate"] = jnp.asarray(lr)
        loss, grads = jax.value_and_grad(_mse)(params, x, y)
        updates, state = optimizer.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        losses.append(float(loss))
    return {"losses": losses, "w": params["w"],
            "learning_rate": state.hyperparams["learning_rate"]}


def losses() -> dict:
    """The loss functions on fixed logits and labels."""
    logits = jnp.array([[2.0, -1.0, 0.5, 0.0], [0.1, 0.2, 3.0, -2.0], [-1.0, -1.0, -1.0, 5.0]])
    labels = jnp.array([0, 2, 1])
    one_hot = jax.nn.one_hot(labels, 4)
    predictions = jnp.array([0.5, -1.5, 2.0, 4.0])
    targets = jnp.array([0.0, -1.0, 3.5, 0.0])
    return {
        "ce_integer_labels": optax.softmax_cross_entropy_with_integer_labels(logits, labels),
        "ce_one_hot": optax.softmax_cross_entropy(logits, one_hot),
        "ce_smoothed": optax.softmax_cross_entropy(logits,
                                                   optax.smooth_labels(one_hot, 0.1)),
        "sigmoid_bce": optax.sigmoid_binary_cross_entropy(predictions, targets > 0),
        "l2": optax.l2_loss(predictions, targets),
        "squared_error": optax.squared_error(predictions, targets),
        "huber": optax.huber_loss(predictions, targets, delta=1.0),
        "cosine_similarity": optax.cosine_similarity(logits, one_hot),
        "ce_grad": jax.grad(lambda z: optax.softmax_cross_entropy_with_integer_labels(
            z, labels).mean())(logits),
    }


def multi_steps() -> dict:
    """`optax.MultiSteps`: gradients accumulate over 3 calls; the inner Adam steps on the 3rd."""
    optimizer = optax.MultiSteps(optax.adam(0.1), every_k_schedule=3)
    params, x, y = _quadratic_problem()
    state = optimizer.init(params)
    update = jax.jit(optimizer.update)
    ws, updated = [], []
    for i in range(7):
        grads = jax.grad(_mse)(params, x[2 * i:2 * i + 4], y[2 * i:2 * i + 4])
        updates, state = update(grads, state, params)
        params = optax.apply_updates(params, updates)
        ws.append(params["w"])
        updated.append(bool(optimizer.has_updated(state)))
    return {"w_per_step": jnp.stack(ws), "has_updated": updated,
            "mini_step": state.mini_step, "gradient_step": state.gradient_step}


def masked_and_multi_transform() -> dict:
    """`optax.masked` (weight decay on weights only) and `optax.multi_transform`."""
    params, x, y = _quadratic_problem()
    mask = {"w": True, "b": False}
    decay = optax.chain(optax.masked(optax.add_decayed_weights(0.5), mask), optax.sgd(0.1))
    grads = jax.grad(_mse)(params, x, y)
    decayed, _ = decay.update(grads, decay.init(params), params)
    multi = optax.multi_transform({"fast": optax.sgd(1.0), "slow": optax.sgd(0.01)},
                                  {"w": "fast", "b": "slow"})
    split, _ = multi.update(grads, multi.init(params), params)
    return {"decayed_w": decayed["w"], "decayed_b": decayed["b"],
            "multi_w": split["w"], "multi_b": split["b"]}


def train_mlp_classifier() -> dict:
    """A two-layer perceptron learns a 3-class problem with adam and integer-label
    cross-entropy; a jitted train step; the loss falls."""
    k1, k2, kx = jax.random.split(jax.random.key(42), 3)
    x = jax.random.normal(kx, (64, 5))
    labels = jnp.argmax(x[:, :3] + 0.5 * x[:, 3:4], axis=1)
    params = {"w1": jax.random.normal(k1, (5, 16)) / np.sqrt(5), "b1": jnp.zeros(16),
              "w2": jax.random.normal(k2, (16, 3)) / 4.0, "b2": jnp.zeros(3)}

    def loss_fn(params):
        hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
        logits = hidden @ params["w2"] + params["b2"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    optimizer = optax.chain(optax.clip_by_global_norm(5.0), optax.adam(0.05))
    opt_state = optimizer.init(params)

    @jax.jit
    def train_step(params, opt_state):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for _ in range(15):
        params, opt_state, loss = train_step(params, opt_state)
        losses.append(float(loss))
    return {"losses": losses, "final_loss": float(loss_fn(params)),
            "b2": params["b2"]}
