"""`jax.example_libraries.stax`: neural network layers as `(init_fun, apply_fun)` pairs.

`init_fun(rng, input_shape) -> (output_shape, params)`; `apply_fun(params, inputs, **kwargs)
-> outputs` (`rng=` for layers that need randomness). Combinators (`serial`, `parallel`,
`FanOut` ...) build networks out of layers.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import justjax.numpy as jnp
from justjax import lax, random
from justjax.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                        softplus, standardize)
from justjax.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu", "gelu",
    "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones",
    "parallel", "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax",
    "softplus", "standardize", "zeros",
]

Layer = tuple[Callable, Callable]

# JAX's older names.
logsoftmax = log_softmax
glorot = glorot_normal
randn = normal


def Dense(out_dim: int, W_init: Callable = glorot_normal(), b_init: Callable = normal()
          ) -> Layer:
    """A fully connected layer: `inputs @ W + b`."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, Any]:
        k1, k2 = random.split(rng)
        params = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return input_shape[:-1] + (out_dim,), params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(specs: tuple[str, str, str], out_chan: int, filter_shape: tuple,
                  input_shape: tuple) -> list[int]:
    """The kernel's shape in its layout: output channels at 'O', input channels at 'I', the
    filter's spatial sizes in order elsewhere."""
    lhs_spec, rhs_spec, _ = specs
    spatial = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(spatial) for c in rhs_spec]


def _conv_layer(transpose: bool) -> Callable[..., Layer]:
    def layer(dimension_numbers: tuple[str, str, str], out_chan: int, filter_shape: tuple,
              strides: tuple | None = None, padding: Any = "VALID", W_init: Callable | None = None,
              b_init: Callable = normal(1e-6)) -> Layer:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        one = (1,) * len(filter_shape)
        strides = strides or one
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, Any]:
            kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
            shape_of = lax.conv_transpose_shape_tuple if transpose else \
                lax.conv_general_shape_tuple
            output_shape = shape_of(input_shape, kernel_shape, strides, padding,
                                    dimension_numbers)
            bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
            k1, k2 = random.split(rng)
            return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            W, b = params
            if transpose:
                out = lax.conv_transpose(inputs, W, strides, padding,
                                         dimension_numbers=dimension_numbers)
            else:
                out = lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                               dimension_numbers=dimension_numbers)
            return out + b

        return init_fun, apply_fun

    return layer


GeneralConv = _conv_layer(transpose=False)
GeneralConv.__name__ = GeneralConv.__qualname__ = "GeneralConv"
GeneralConv.__doc__ = "A general convolution layer (`lax.conv_general_dilated` plus a bias)."
Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
GeneralConvTranspose = _conv_layer(transpose=True)
GeneralConvTranspose.__name__ = GeneralConvTranspose.__qualname__ = "GeneralConvTranspose"
GeneralConvTranspose.__doc__ = "A transposed convolution layer (`lax.conv_transpose` plus a bias)."
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis: Any = (0, 1, 2), epsilon: float = 1e-5, center: bool = True,
              scale: bool = True, beta_init: Callable = zeros, gamma_init: Callable = ones
              ) -> Layer:
    """Batch normalization over `axis`, with a learned offset and scale per other index."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A layer applying `fun(inputs, **fun_kwargs)`, without parameters."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, tuple]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _window_sizes_rescaler(dims: tuple, strides: tuple, padding: Any) -> Callable:
    """Divides a window sum by the number of input entries each window covers (padding
    excluded): average pooling."""
    def rescale(outputs: Any, inputs: Any, spec: str | None) -> Any:
        other = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in other)
        counts = lax.reduce_window(jnp.ones(spatial, dtype=inputs.dtype), 0.0, lax.add, dims,
                                   strides, padding)
        for i in sorted(other):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts
    return rescale


def _pooling_layer(reducer: Callable, init_val: float, rescaler: Callable | None = None
                   ) -> Callable[..., Layer]:
    def PoolingLayer(window_shape: tuple, strides: tuple | None = None, padding: Any = "VALID",
                     spec: str | None = None) -> Layer:
        """A pooling layer over the spatial axes (`spec` names the layout; by default the
        batch axis first and the channels last)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        other = (0, len(window_shape) + 1) if spec is None else (spec.index("N"),
                                                                 spec.index("C"))
        for i in sorted(other):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, tuple]:
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            unit = (1,) * len(window_shape)
            return lax.reduce_window_shape_tuple(input_shape, window_shape, strides, pads,
                                                 unit, unit), ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _window_sizes_rescaler)


def Flatten() -> Layer:
    """Flattens all but the leading (batch) axis."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, tuple]:
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = Flatten()  # noqa: F811 -- the layer itself, as JAX exports it


def Identity() -> Layer:
    """The identity layer."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, tuple]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


Identity = Identity()  # noqa: F811


def FanOut(num: int) -> Layer:
    """Copies the input `num` times (for `parallel` branches)."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple[list, tuple]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> list[Any]:
        return [inputs] * num

    return init_fun, apply_fun


def FanInSum() -> Layer:
    """Sums a list of inputs."""
    def init_fun(rng: Any, input_shape: list) -> tuple[tuple, tuple]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = FanInSum()  # noqa: F811


def FanInConcat(axis: int = -1) -> Layer:
    """Concatenates a list of inputs along `axis`."""
    def init_fun(rng: Any, input_shape: list) -> tuple[tuple, tuple]:
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return input_shape[0][:ax] + (size,) + input_shape[0][ax + 1:], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Keeps each entry with probability `rate` (scaled by `1 / rate`) in `train` mode;
    the identity otherwise. `apply_fun` needs `rng=`."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple[tuple, tuple]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, "
                "inputs, rng)` where `rng` is a PRNG key (e.g. from `jax.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """The layers one after the other (each gets its own split of `rng`)."""
    count = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, list]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        for fun, param, layer_rng in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side, the i-th on the i-th of a list of inputs."""
    count = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng: Any, input_shape: Any) -> Any:
        rngs = random.split(rng, count)
        # (output shapes, params) as JAX returns them: an iterator of the two tuples.
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> list[Any]:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built from the input's shape each time (`make_layer(shape)`)."""
    def init_fun(rng: Any, input_shape: Any) -> Any:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
