"""`jax.example_libraries.stax`: neural-network layers as (init_fun, apply_fun) pairs.

`init_fun(rng, input_shape) -> (output_shape, params)` and
`apply_fun(params, inputs, **kwargs) -> outputs`; combinators (`serial`, `parallel`,
`shape_dependent`) compose layers. numpyro builds its autoregressive flows with these.
This module has the dense, activation, fan-in/fan-out, flatten and dropout layers and the
combinators; JAX's convolution, pooling and batch-norm layers are not provided (reading
them is an AttributeError).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import justjax.numpy as jnp
from justjax import nn, random
from justjax.nn.initializers import glorot_normal, normal

__all__ = ["Dense", "Dropout", "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten",
           "Gelu", "Identity", "LeakyRelu", "LogSoftmax", "Relu", "Selu", "Sigmoid",
           "Softmax", "Softplus", "Tanh", "elementwise", "parallel", "serial",
           "shape_dependent"]

Layer = tuple[Callable[..., Any], Callable[..., Any]]


def Dense(out_dim: int, W_init: Callable = glorot_normal(), b_init: Callable = normal()
          ) -> Layer:
    """A dense (fully connected) layer: `inputs @ W + b`.

    Args:
      out_dim: the number of output features.
      W_init: the initializer of the (in_features, out_dim) weights.
      b_init: the initializer of the (out_dim,) bias.

    Returns:
      The layer's (init_fun, apply_fun).
    """

    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, tuple]:
        w_key, b_key = random.split(rng)
        weights = W_init(w_key, (input_shape[-1], out_dim))
        bias = b_init(b_key, (out_dim,))
        return input_shape[:-1] + (out_dim,), (weights, bias)

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        weights, bias = params
        return jnp.dot(inputs, weights) + bias

    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying `fun(inputs, **fun_kwargs)`."""
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(jnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Selu = elementwise(nn.selu)
Gelu = elementwise(nn.gelu)


def _flatten_layer() -> Layer:
    """Flattens every axis but the first (the batch)."""

    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, tuple]:
        return input_shape[:1] + (math.prod(input_shape[1:]),), ()

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten_layer()

# The identity layer.
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


def FanOut(num: int) -> Layer:
    """A layer giving `num` copies of its input (a list)."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


# A layer summing its list of inputs.
FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


def FanInConcat(axis: int = -1) -> Layer:
    """A layer concatenating its list of inputs along `axis`."""

    def init_fun(rng: Any, input_shape: Sequence[tuple]) -> tuple[tuple, tuple]:
        first = input_shape[0]
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (size,) + first[ax + 1:], ()

    return init_fun, lambda params, inputs, **kwargs: jnp.concatenate(inputs, axis)


_DROPOUT_NEEDS_RNG = (
    "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
    "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` "
    "where `rng` is a PRNG key (e.g. from `jax.random.key`).")


def Dropout(rate: float, mode: str = "train") -> Layer:
    """A dropout layer. As JAX's, `rate` is the probability of KEEPING an element (kept
    elements are divided by it); in any mode but "train" it is the identity.

    Raises (from apply_fun):
      ValueError: called without `rng=` in train mode.
    """

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(_DROPOUT_NEEDS_RNG)
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def _layer_keys(rng: Any, count: int) -> Sequence[Any]:
    """One key per layer for an apply (split from `rng`), or None for each without one."""
    return random.split(rng, count) if rng is not None else (None,) * count


def serial(*layers: Layer) -> Layer:
    """Layers applied one after the other.

    Args:
      *layers: (init_fun, apply_fun) pairs.

    Returns:
      The composed layer; its params are a list of the layers' params.
    """
    init_funs = [init for init, _ in layers]
    apply_funs = [apply for _, apply in layers]

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, list]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)  # one key at a time, as JAX splits them
            input_shape, layer_params = init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params: Sequence[Any], inputs: Any, **kwargs: Any) -> Any:
        keys = _layer_keys(kwargs.pop("rng", None), len(layers))
        for apply, layer_params, key in zip(apply_funs, params, keys, strict=True):
            inputs = apply(layer_params, inputs, rng=key, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Layers applied side by side, the i-th to the i-th of a sequence of inputs (often
    between `FanOut` and `FanInSum`).

    Args:
      *layers: (init_fun, apply_fun) pairs.

    Returns:
      The composed layer, taking and returning sequences as long as `layers`.
    """
    init_funs = [init for init, _ in layers]
    apply_funs = [apply for _, apply in layers]

    def init_fun(rng: Any, input_shape: Sequence[Any]) -> Any:
        keys = random.split(rng, len(layers))
        # As JAX's: an iterator of (output shapes, params), unpacked by the caller.
        return zip(*[init(key, shape) for init, key, shape
                     in zip(init_funs, keys, input_shape)])

    def apply_fun(params: Sequence[Any], inputs: Sequence[Any], **kwargs: Any) -> list:
        keys = _layer_keys(kwargs.pop("rng", None), len(layers))
        return [apply(p, x, rng=key, **kwargs)
                for apply, p, x, key in zip(apply_funs, params, inputs, keys)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[tuple], Layer]) -> Layer:
    """A layer built by `make_layer(input_shape)` once the input shape is known.

    Args:
      make_layer: from an input shape to an (init_fun, apply_fun) pair.

    Returns:
      The delayed layer.
    """

    def init_fun(rng: Any, input_shape: tuple) -> Any:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun


