"""jax.nn: activation functions and friends, written with jax.numpy and lax."""
from __future__ import annotations

import functools
import operator
import warnings
from typing import Any

import numpy as np

from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import parallel, structural
from justjax._src.lax import selection as lax_selection
from justjax._src.numpy import (array_creation, dtype_ops, joining, reductions, selection, ufuncs,
                                util)
from justjax._src.scipy.special import logsumexp

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp",
    "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign",
    "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize",
    "swish",
]


@util.jitted_as_in_jax
def identity(x: Any) -> Any:
    """Returns `x` as an array."""
    return util.ensure_arraylike("identity", x)


# As JAX: a custom_jvp function around a jitted body (a `jit[name=relu]` equation in the
# custom_jvp_call's call_jaxpr).
@custom_jvp
@util.jitted_as_in_jax
def relu(x: Any) -> Any:
    """`max(x, 0)` elementwise; its derivative at 0 is 0, as in JAX."""
    return ufuncs.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax_selection.select(
    ufuncs.greater(x, 0), g, array_creation.lax_full_like(g, 0)))


@custom_jvp
@util.jitted_as_in_jax
def relu6(x: Any) -> Any:
    """`min(max(x, 0), 6)` elementwise; its derivative is 0 at 0 and at 6, as in JAX."""
    return ufuncs.minimum(ufuncs.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax_selection.select(
    ufuncs.logical_and(ufuncs.greater(x, 0), ufuncs.less(x, 6)), g,
    array_creation.lax_full_like(g, 0)))


@util.jitted_as_in_jax
def squareplus(x: Any, b: Any = 4) -> Any:
    """`(x + sqrt(x**2 + b)) / 2`."""
    x = util.ensure_arraylike("squareplus", x)
    y = ufuncs.add(x, ufuncs.sqrt(ufuncs.add(ufuncs.square(x), b)))
    return ufuncs.true_divide(y, 2)


@util.jitted_as_in_jax
def softplus(x: Any) -> Any:
    """`log(1 + exp(x))`, computed stably as `logaddexp(x, 0)`."""
    return ufuncs.logaddexp(x, 0)


@util.jitted_as_in_jax
def sparse_plus(x: Any) -> Any:
    """0 below -1, x above 1, `(x + 1)**2 / 4` between."""
    x = util.ensure_arraylike("sparse_plus", x)
    # JAX's order: both comparisons, then the middle piece, squared with integer_pow.
    below = ufuncs.less_equal(x, -1.0)
    above = ufuncs.greater_equal(x, 1.0)
    middle = ufuncs.true_divide(ufuncs.power(ufuncs.add(x, 1.0), 2), 4)
    return selection.where(below, 0.0, selection.where(above, x, middle))


@util.jitted_as_in_jax
def soft_sign(x: Any) -> Any:
    """`x / (|x| + 1)`."""
    x = util.ensure_arraylike("soft_sign", x)
    return ufuncs.true_divide(x, ufuncs.add(ufuncs.absolute(x), 1))


@util.jitted_as_in_jax(inline=True)
def sigmoid(x: Any) -> Any:
    """The logistic function `1 / (1 + exp(-x))` (lax.logistic; integers are rejected, as
    in JAX)."""
    return lax.logistic(util.ensure_arraylike("sigmoid", x))


@util.jitted_as_in_jax
def sparse_sigmoid(x: Any) -> Any:
    """0 below -1, 1 above 1, `(x + 1) / 2` between: the derivative of `sparse_plus`."""
    return ufuncs.multiply(0.5, selection.clip(ufuncs.add(x, 1.0), 0.0, 2.0))


@util.jitted_as_in_jax
def silu(x: Any) -> Any:
    """`x * sigmoid(x)` (also called swish)."""
    x = util.ensure_arraylike("silu", x)
    return ufuncs.multiply(x, sigmoid(x))


swish = silu


@util.jitted_as_in_jax
def mish(x: Any) -> Any:
    """`x * tanh(softplus(x))`."""
    x = util.ensure_arraylike("mish", x)
    return ufuncs.multiply(x, ufuncs.tanh(softplus(x)))


@util.jitted_as_in_jax
def log_sigmoid(x: Any) -> Any:
    """`log(sigmoid(x))`, computed stably as `-softplus(-x)`."""
    x = util.ensure_arraylike("log_sigmoid", x)
    return ufuncs.negative(softplus(ufuncs.negative(x)))


@util.jitted_as_in_jax
def elu(x: Any, alpha: Any = 1.0) -> Any:
    """`x` for x > 0, `alpha * (exp(x) - 1)` otherwise."""
    x = util.ensure_arraylike("elu", x)
    # JAX evaluates `x > 0` twice (once per `where`), so the jaxpr holds two comparisons.
    positive = ufuncs.greater(x, 0)
    safe = selection.where(ufuncs.greater(x, 0), 0.0, x)
    return selection.where(positive, x, ufuncs.multiply(alpha, ufuncs.expm1(safe)))


@util.jitted_as_in_jax
def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """`x` for x >= 0, `negative_slope * x` otherwise."""
    x = util.ensure_arraylike("leaky_relu", x)
    return selection.where(ufuncs.greater_equal(x, 0), x, ufuncs.multiply(negative_slope, x))


@util.jitted_as_in_jax
def hard_tanh(x: Any) -> Any:
    """`x` clipped to [-1, 1]."""
    x = util.ensure_arraylike("hard_tanh", x)
    return selection.where(ufuncs.greater(x, 1), 1,
                           selection.where(ufuncs.less(x, -1), -1, x))


@util.jitted_as_in_jax
def celu(x: Any, alpha: Any = 1.0) -> Any:
    """`max(x, 0) + alpha * expm1(min(x, 0) / alpha)`."""
    positive_part = ufuncs.maximum(x, 0.0)
    scaled = ufuncs.true_divide(ufuncs.minimum(x, 0.0), alpha)
    return ufuncs.add(positive_part, ufuncs.multiply(alpha, ufuncs.expm1(scaled)))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@util.jitted_as_in_jax
def selu(x: Any) -> Any:
    """The scaled exponential linear unit."""
    return ufuncs.multiply(_SELU_SCALE, elu(x, _SELU_ALPHA))


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit: the tanh approximation, or the exact erfc form."""
    [x] = util.promote_args_inexact("gelu", x)
    dtype = x.dtype
    if approximate:
        sqrt_2_over_pi = np.asarray(np.sqrt(2 / np.pi)).astype(dtype)
        inner = ufuncs.multiply(sqrt_2_over_pi,
                                ufuncs.add(x, ufuncs.multiply(0.044715, ufuncs.power(x, 3))))
        cdf = ufuncs.multiply(0.5, ufuncs.add(1.0, ufuncs.tanh(inner)))
        return ufuncs.multiply(x, cdf)
    sqrt_half = np.asarray(np.sqrt(0.5)).astype(dtype)
    half_x = ufuncs.multiply(0.5, x)
    erfc = lax.erfc(ufuncs.multiply(ufuncs.negative(x), sqrt_half))
    # As JAX: the result goes through `jnp.array(..., dtype)`, which prints as a `copy`.
    return array_creation.array(ufuncs.multiply(half_x, erfc), dtype=dtype)


@util.jitted_as_in_jax(static_argnames=("axis",))
def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: splits `x` in two along `axis`, `first * sigmoid(second)`."""
    x = util.ensure_arraylike("glu", x)
    size = x.shape[axis]
    if size % 2:
        raise AssertionError("axis size must be divisible by 2")
    first, second = joining.split(x, 2, axis)
    return ufuncs.multiply(first, sigmoid(second))


@util.jitted_as_in_jax
def hard_sigmoid(x: Any) -> Any:
    """`relu6(x + 3) / 6`."""
    return ufuncs.true_divide(relu6(ufuncs.add(x, 3.0)), 6.0)


@util.jitted_as_in_jax
def hard_silu(x: Any) -> Any:
    """`x * hard_sigmoid(x)`."""
    x = util.ensure_arraylike("hard_silu", x)
    return ufuncs.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


@util.jitted_as_in_jax(static_argnames=("axis", "keepdims"))
def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """`log(mean(exp(x)))` along `axis`: `logsumexp(x)` minus the log of the count.

    Args:
      x: the values.
      axis: axis or axes to reduce (all when None).
      where: elements to include (the count is theirs).
      keepdims: keep the reduced axes as size 1.
    Returns:
      The reduction.
    """
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    count = reductions._count(x, axis, keepdims, where, lse.dtype)
    return ufuncs.subtract(lse, ufuncs.log(count))


@util.jitted_as_in_jax(static_argnames=("axis",))
def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """`x - logsumexp(x)` along `axis`; masked-out elements give -inf."""
    x = util.ensure_arraylike("log_softmax", x)
    x_max = reductions.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else selection.where(where, x, -np.inf)
    shifted = ufuncs.subtract(x_safe, structural.stop_gradient(x_max))
    total = reductions.sum(ufuncs.exp(shifted), axis, where=where, keepdims=True)
    result = ufuncs.subtract(shifted, ufuncs.log(total))
    if where is not None:
        return selection.where(where, result, -np.inf)
    return result


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """`exp(x) / sum(exp(x))` along `axis`, shifted by the max for stability.

    Args:
      x: the values.
      axis: axis or axes to normalize over (all when None).
      where: elements to include; the others give 0.
    Returns:
      An array of `x`'s shape.
    """
    if config.read("jax_softmax_custom_jvp"):
        return _softmax(x, axis, where)
    # JAX's default (jax_softmax_custom_jvp off) stops the gradient of the max.
    x = util.ensure_arraylike("softmax", x)
    return _softmax_body(x, axis, where, -np.inf, structural.stop_gradient)


def _softmax_body(x: Any, axis: Any, where: Any, initial: Any, shift: Any) -> Any:
    """The normalized exponentials, `shift` applied to the max subtracted."""
    x_max = reductions.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else selection.where(where, x, initial)
    unnormalized = ufuncs.exp(ufuncs.subtract(x_safe, shift(x_max)))
    total = reductions.sum(unnormalized, axis, where=where, keepdims=True)
    result = ufuncs.true_divide(unnormalized, total)
    if where is not None:
        result = selection.where(where, result, 0)
    return result


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x: Any, axis: Any = -1, where: Any = None, initial: Any = -np.inf) -> Any:
    """softmax with the derivative `y * (dx - sum(y * dx))` (jax_softmax_custom_jvp on)."""
    return _softmax_body(x, axis, where, initial, lambda x_max: x_max)


@_softmax.defjvp
def _softmax_jvp(axis: Any, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    weighted = reductions.sum(ufuncs.multiply(y, x_dot), axis, where=where, keepdims=True)
    return y, ufuncs.multiply(y, ufuncs.subtract(x_dot, weighted))


@util.jitted_as_in_jax(static_argnames=("axis", "algorithm"))
def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """`(x - mean) / sqrt(variance + epsilon)` along `axis`.

    With `algorithm="fast"` the variance is `mean(x**2) - mean(x)**2` clipped at zero (JAX's
    default); `"stable"` uses the two-pass `mean((x - mean)**2)`.
    """
    util.check_arraylike("standardize", x)
    if mean is None:
        mean = reductions.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = reductions.mean(ufuncs.square(ufuncs.subtract(x, mean)), axis,
                                       keepdims=True, where=where)
        elif algorithm == "fast":
            variance = ufuncs.subtract(
                reductions.mean(ufuncs.square(x), axis, keepdims=True, where=where),
                ufuncs.square(mean))
            variance = selection.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return ufuncs.multiply(ufuncs.subtract(x, mean), lax.rsqrt(ufuncs.add(variance, epsilon)))


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: Any = -1) -> Any:
    """One-hot encodes integer indices; out-of-range indices give all zeros.

    Args:
      x: the indices (float indices are accepted with JAX's DeprecationWarning).
      num_classes: the size of the one-hot axis (a static integer).
      dtype: the result dtype (the default float dtype when None).
      axis: where the new axis goes; or the name of a mapped axis (vmap's `axis_name`,
        a collective's axis) of size `num_classes`, over which the encoding is spread.
    Returns:
      An array with one more axis than `x` (the same shape for a named axis).
    """
    num_classes = core.concrete_dim(
        num_classes, "The error arose in jax.nn.one_hot argument `num_classes`. ")
    x = array_creation.asarray(x)
    if not dtypes.is_int(x.dtype):
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return _one_hot(x, num_classes, dtype=dtype, axis=axis)


@util.jitted_as_in_jax(static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x: Any, num_classes: int, *, dtype: Any, axis: int) -> Any:
    """`one_hot` on an array, jitted as JAX jits it."""
    dtype = dtypes.canonicalize_dtype(dtype)
    try:
        axis = operator.index(axis)
    except TypeError:
        return _one_hot_named(x, num_classes, dtype, axis)
    out_axis = util.canonicalize_axis(axis, x.ndim + 1)
    lhs = structural.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = structural.broadcasted_iota(x.dtype, rhs_shape, out_axis)
    return dtype_ops.astype(ufuncs.equal(lhs, rhs), dtype)


def _one_hot_named(x: Any, num_classes: int, dtype: np.dtype, axis_name: Any) -> Any:
    """One-hot along a named axis: each member holds whether `x` is its own index."""
    axis_size = parallel.axis_size(axis_name)
    if num_classes != axis_size:
        raise ValueError(f"Expected num_classes to match the size of axis {axis_name}, "
                         f"but {num_classes} != {axis_size}")
    return array_creation.asarray(ufuncs.equal(x, parallel.axis_index(axis_name)), dtype=dtype)


# As JAX: a custom_jvp function around a jitted body, so the derivative is `1 / expm1(x)`
# whichever branch the value took.
@custom_jvp
@util.jitted_as_in_jax
def log1mexp(x: Any) -> Any:
    """`log(1 - exp(-x))`, computed stably (Maechler's split at log 2); undefined for x < 0.

    Args:
      x: non-negative values.
    Returns:
      An array.
    """
    x = util.ensure_arraylike("log1mexp", x)
    c = ufuncs.log(2.0)
    return selection.where(ufuncs.less(x, c),
                           ufuncs.log(ufuncs.negative(ufuncs.expm1(ufuncs.negative(x)))),
                           ufuncs.log1p(ufuncs.negative(ufuncs.exp(ufuncs.negative(x)))))


log1mexp.defjvps(lambda g, ans, x: ufuncs.true_divide(g, ufuncs.expm1(x)))
