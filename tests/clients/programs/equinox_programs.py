"""Equinox as its documentation uses it (docs.kidger.site/equinox: the README's quick example,
"All of Equinox", the nn, filtered-transformation, error and internal APIs).

Each public function is one program for `tests/clients/run_programs.py`: written for JAX, it
returns a small dict of results. Run with real JAX they give
`tests/clients/records/equinox.json`; under `python -m justjax run` they must give the same.
"""
from __future__ import annotations

import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import optax


class Linear(eqx.Module):
    """The README's quick example: a module is a pytree of its fields."""
    weight: jax.Array
    bias: jax.Array

    def __init__(self, in_size: int, out_size: int, key: jax.Array):
        wkey, bkey = jax.random.split(key)
        self.weight = jax.random.normal(wkey, (out_size, in_size))
        self.bias = jax.random.normal(bkey, (out_size,))

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.weight @ x + self.bias


class Scaler(eqx.Module):
    """A module with a static field, a plain method and a property."""
    scale: jax.Array
    name: str = eqx.field(static=True)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.scale * x

    def inverse(self, y: jax.Array) -> jax.Array:
        return y / self.scale

    @property
    def squared(self) -> jax.Array:
        return self.scale ** 2


def readme_quick_example() -> dict:
    """The README's jit(grad(loss)) of a custom Linear module over a vmapped batch."""

    @jax.jit
    @jax.grad
    def loss_fn(model, x, y):
        pred_y = jax.vmap(model)(x)
        return jax.numpy.mean((y - pred_y) ** 2)

    batch_size, in_size, out_size = 32, 2, 3
    model = Linear(in_size, out_size, key=jax.random.PRNGKey(0))
    x = jnp.linspace(-1.0, 1.0, batch_size * in_size).reshape(batch_size, in_size)
    y = jnp.zeros((batch_size, out_size))
    grads = loss_fn(model, x, y)
    return {"weight": model.weight, "grad_weight": grads.weight, "grad_bias": grads.bias,
            "grads_type": type(grads).__name__}


def nn_layers() -> dict:
    """`eqx.nn.MLP`, `Linear`, `Conv2d` and `LayerNorm` built from fixed keys and applied."""
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(1), 3)
    mlp = eqx.nn.MLP(in_size=2, out_size=3, width_size=8, depth=2, key=k1)
    linear = eqx.nn.Linear(4, 2, key=k2)
    conv = eqx.nn.Conv2d(in_channels=1, out_channels=2, kernel_size=3, padding=1, key=k3)
    norm = eqx.nn.LayerNorm(4)
    x = jnp.array([[0.5, -1.0], [2.0, 0.25]])
    image = jnp.arange(25.0).reshape(1, 5, 5) / 25.0
    v = jnp.array([1.0, 2.0, 4.0, 8.0])
    return {"mlp": jax.vmap(mlp)(x), "mlp_first_weight": mlp.layers[0].weight[:2],
            "linear": linear(v), "linear_bias": linear.bias,
            "conv": conv(image)[:, 1:3, 1:3], "conv_shape": list(conv(image).shape),
            "layer_norm": norm(v), "num_params": sum(
                leaf.size for leaf in jax.tree_util.tree_leaves(eqx.filter(mlp, eqx.is_array)))}


def filtered_transformations() -> dict:
    """`filter_jit`, `filter_grad` and `filter_value_and_grad` on an MLP (its activation
    function is a non-array leaf the filters leave alone)."""
    model = eqx.nn.MLP(3, 1, width_size=4, depth=1, key=jax.random.PRNGKey(2))
    x = jnp.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
    y = jnp.array([[1.0], [-1.0]])

    @eqx.filter_jit
    def loss(model, x, y):
        return jnp.mean((jax.vmap(model)(x) - y) ** 2)

    grads = eqx.filter_grad(loss)(model, x, y)
    value, grads2 = eqx.filter_jit(eqx.filter_value_and_grad(loss))(model, x, y)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    rebuilt = eqx.combine(params, static)
    return {"loss": value, "grad_w0": grads.layers[0].weight,
            "grad_b1": grads2.layers[1].bias,
            "grad_activation_is_none": grads.activation is None,
            "rebuilt_equal": bool(jnp.all(rebuilt(x[0]) == model(x[0])))}


def filter_vmap_ensemble() -> dict:
    """`eqx.filter_vmap` builds an ensemble of models from a batch of keys, and applies it
    to one input (`in_axes=(eqx.if_array(0), None)`)."""

    @eqx.filter_vmap
    def make_ensemble(key):
        return eqx.nn.MLP(2, 2, width_size=3, depth=1, key=key)

    ensemble = make_ensemble(jax.random.split(jax.random.PRNGKey(3), 4))

    @eqx.filter_vmap(in_axes=(eqx.if_array(0), None))
    def evaluate(model, x):
        return model(x)

    out = evaluate(ensemble, jnp.array([1.0, -2.0]))
    return {"out": out, "stacked_weight_shape": list(ensemble.layers[0].weight.shape)}


def module_methods_and_tree_at() -> dict:
    """A module's methods and property; `eqx.tree_at` replaces a field, a layer's weight,
    and applies a function to a field; modules compare and hash as pytrees."""
    s = Scaler(scale=jnp.array(2.0), name="double")
    y = s(jnp.array([1.0, 3.0]))
    replaced = eqx.tree_at(lambda m: m.scale, s, jnp.array(4.0))
    mlp = eqx.nn.MLP(2, 2, width_size=2, depth=1, key=jax.random.PRNGKey(4))
    zeroed = eqx.tree_at(lambda m: m.layers[0].weight, mlp, jnp.zeros((2, 2)))
    shifted = eqx.tree_at(lambda m: m.layers[1].bias, mlp, replace_fn=lambda b: b + 1)
    leaves = jax.tree_util.tree_leaves(s)
    return {"call": y, "inverse": s.inverse(y), "squared": s.squared,
            "replaced_call": replaced(jnp.array([1.0, 3.0])), "name": replaced.name,
            "num_leaves": len(leaves), "original_scale": s.scale,
            "zeroed_out": zeroed(jnp.array([1.0, 1.0])),
            "shift": shifted.layers[1].bias - mlp.layers[1].bias,
            "jit_method": eqx.filter_jit(s.inverse)(jnp.array(8.0))}


def batch_norm_with_state() -> dict:
    """`eqx.nn.make_with_state` and `eqx.nn.BatchNorm` over a vmapped batch axis, its state
    threaded through calls; then inference mode."""
    model, state = eqx.nn.make_with_state(eqx.nn.BatchNorm)(3, axis_name="batch",
                                                            momentum=0.9, mode="ema")
    x = jnp.arange(12.0).reshape(4, 3) ** 1.5
    batched = jax.vmap(model, axis_name="batch", in_axes=(0, None), out_axes=(0, None))
    y, state = batched(x, state)
    y2, state = batched(x * 0.5, state)
    mean, var = state.get(model.ema_state_index)
    inference = eqx.nn.inference_mode(model)
    y_inf, _ = jax.vmap(inference, axis_name="batch", in_axes=(0, None),
                        out_axes=(0, None))(x, state)
    return {"y": y, "y2": y2, "running_mean": mean, "running_var": var, "y_inference": y_inf}


def dropout_and_checkpoint() -> dict:
    """`eqx.nn.Dropout` with a key and in inference mode; `eqx.filter_checkpoint` gives
    the same gradients as without."""
    dropout = eqx.nn.Dropout(p=0.5)
    x = jnp.arange(1.0, 9.0)
    dropped = dropout(x, key=jax.random.PRNGKey(5))
    off = dropout(x, inference=True)
    model = eqx.nn.MLP(2, 1, width_size=4, depth=2, activation=jnp.tanh,
                       key=jax.random.PRNGKey(6))

    def loss(model, x):
        return jnp.sum(model(x) ** 2)

    checkpointed = eqx.filter_checkpoint(loss)
    x2 = jnp.array([0.3, -0.7])
    g = eqx.filter_grad(loss)(model, x2)
    gc = eqx.filter_jit(eqx.filter_grad(checkpointed))(model, x2)
    return {"dropped": dropped, "inference": off, "grad": g.layers[1].weight,
            "checkpointed_grad": gc.layers[1].weight}


def error_if() -> dict:
    """`eqx.error_if` passes values through when the predicate is false; when it is true
    a `filter_jit`-ted call raises `eqx.EquinoxRuntimeError` with the message."""

    @eqx.filter_jit
    def safe_log(x):
        x = eqx.error_if(x, x <= 0, "safe_log needs positive inputs")
        return jnp.log(x)

    ok = safe_log(jnp.array([1.0, 2.0]))
    try:
        safe_log(jnp.array([1.0, -2.0]))
        raised, message_shown = "no error", False
    except Exception as error:  # noqa: BLE001 - the error is the result
        raised = type(error).__name__
        message_shown = "safe_log needs positive inputs" in str(error)
    nan_mode = eqx.error_if(jnp.array([1.0, 2.0]), jnp.array([False, True]), "bad",
                            on_error="nan")
    return {"ok": ok, "raised": raised, "message_shown": message_shown,
            "nan_mode": nan_mode}


def internal_unvmap() -> dict:
    """`eqxi.unvmap_any/all/max` reduce over the vmapped axes (the batch as a whole, under
    nested vmaps too); `eqxi.nondifferentiable_backward` passes tangents forward and
    refuses a cotangent."""

    def f(x):
        return eqxi.unvmap_any(x > 2), eqxi.unvmap_all(x > 0), eqxi.unvmap_max(x)

    xs = jnp.array([1, 2, 3, 1])
    any_, all_, max_ = jax.vmap(f)(xs)
    unbatched = f(jnp.array(5))
    nested = jax.vmap(jax.vmap(lambda x: eqxi.unvmap_max(x)))(jnp.arange(6).reshape(2, 3))
    v = jnp.array([1.0, 2.0])
    _, tangent = jax.jvp(lambda x: eqxi.nondifferentiable_backward(x) * x, (v,), (v,))
    try:
        jax.grad(lambda x: jnp.sum(eqxi.nondifferentiable_backward(x) * x))(v)
        grad_error = ["no error", ""]
    except Exception as error:  # noqa: BLE001 - the error is the result
        grad_error = [type(error).__name__, str(error).splitlines()[0]]
    return {"any": any_, "all": all_, "max": max_, "unbatched_any": unbatched[0],
            "nested_max": nested, "nondifferentiable_backward_jvp": tangent,
            "nondifferentiable_backward_grad": grad_error}


def internal_while_loop() -> dict:
    """`eqxi.while_loop`: the checkpointed kind is reverse-mode differentiable (its gradient
    matches the bounded kind's), with buffers written in place; its gradient under vmap
    (equinox's own primitives' batching rules)."""

    def run(x0, kind):
        def cond_fun(carry):
            i, _, _ = carry
            return i < 6

        def body_fun(carry):
            i, x, buf = carry
            x = jnp.sin(x) * 1.1 + 0.1
            return i + 1, x, buf.at[i].set(x)

        init = (0, x0, jnp.zeros(8))
        _, x, buf = eqxi.while_loop(cond_fun, body_fun, init, max_steps=8, kind=kind,
                                    buffers=lambda c: c[2],
                                    **({"checkpoints": 2} if kind == "checkpointed" else {}))
        return jnp.sum(buf) + x

    x0 = jnp.array(0.7)
    value = jax.jit(lambda x: run(x, "checkpointed"))(x0)
    grad_checkpointed = jax.jit(jax.grad(lambda x: run(x, "checkpointed")))(x0)
    grad_bounded = jax.grad(lambda x: run(x, "bounded"))(x0)
    lax_value = run(x0, "lax")
    batched = jax.vmap(jax.grad(lambda x: run(x, "checkpointed")))(jnp.array([0.1, 0.7, 1.3]))
    return {"value": value, "lax_value": lax_value, "grad_checkpointed": grad_checkpointed,
            "grad_bounded": grad_bounded, "vmapped_grad_checkpointed": batched}


def train_mlp_regression() -> dict:
    """The training loop of equinox's docs: an MLP fits sin with optax adam, a filter_jit
    step over `eqx.filter(model, eqx.is_array)` parameters; the loss falls."""
    key, data_key = jax.random.split(jax.random.PRNGKey(7))
    x = jax.random.uniform(data_key, (32, 1), minval=-2.0, maxval=2.0)
    y = jnp.sin(x)
    model = eqx.nn.MLP(1, 1, width_size=16, depth=2, key=key)
    optim = optax.adam(1e-2)
    opt_state = optim.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def make_step(model, opt_state, x, y):
        def loss_fn(model):
            return jnp.mean((jax.vmap(model)(x) - y) ** 2)

        loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
        updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        model = eqx.apply_updates(model, updates)
        return model, opt_state, loss

    losses = []
    for _ in range(20):
        model, opt_state, loss = make_step(model, opt_state, x, y)
        losses.append(float(loss))
    return {"losses": losses, "prediction": jax.vmap(model)(jnp.array([[0.5], [1.5]]))}
