"""The seed examples, as functions of arrays the pipeline explorer can call:

    python -m justjax explain examples.seeds:double_plus_one --arg 'f32[1000]'
    python -m justjax explain examples.seeds:grad_chain --arg 'f32[1000000]'
    python -m justjax explain examples.seeds:predict --arg 'f32[784,256]' --arg 'f32[256]' \\
        --arg 'f32[256,10]' --arg 'f32[10]' --arg 'f32[128,784]' --html predict.html
"""
import justjax as jax
import justjax.numpy as jnp


def double_plus_one(x):
    return x * 2 + 1


def _chain(y):
    for _ in range(10):
        y = jnp.sin(y) + 0.1 * jnp.cos(y ** 2) - jnp.tanh(y)
    return jnp.sum(y)


def grad_chain(y):
    """The gradient of ten steps of sin/cos/tanh, summed."""
    return jax.grad(_chain)(y)


def predict(w1, b1, w2, b2, x):
    """A relu MLP's class probabilities."""
    hidden = jax.nn.relu(x @ w1 + b1)
    return jax.nn.softmax(hidden @ w2 + b2)
