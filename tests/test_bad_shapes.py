"""Bad shapes given to every public shape-taking function: negative, non-integer and huge
sizes raise JAX's classes while tracing (huge ones: XLA's RESOURCE_EXHAUSTED when the buffer
is allocated), never an error from inside NumPy, a crash or a hang. Exact messages are the
ones recorded from real JAX 0.10.2 (issue #27)."""
from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax.errors import JaxRuntimeError

X = jnp.arange(4.0)
KEY = jax.random.key(0)
ONE = jnp.float32(1.0)

# Each function of a shape (a tuple); those of one size take the shape's first entry.
SHAPE_FUNCTIONS = {
    "jnp.zeros": lambda s: jnp.zeros(s),
    "jnp.ones": lambda s: jnp.ones(s),
    "jnp.empty": lambda s: jnp.empty(s),
    "jnp.full": lambda s: jnp.full(s, 2.0),
    "jnp.zeros_like": lambda s: jnp.zeros_like(X, shape=s),
    "jnp.ones_like": lambda s: jnp.ones_like(X, shape=s),
    "jnp.full_like": lambda s: jnp.full_like(X, 2.0, shape=s),
    "jnp.empty_like": lambda s: jnp.empty_like(X, shape=s),
    "jnp.broadcast_to": lambda s: jnp.broadcast_to(ONE, s),
    "jnp.tile": lambda s: jnp.tile(X, s),
    "jnp.resize": lambda s: jnp.resize(X, s),
    "jnp.indices": lambda s: jnp.indices(s),
    "lax.full": lambda s: lax.full(s, 0.0),
    "lax.broadcast": lambda s: lax.broadcast(X, s),
    "lax.broadcasted_iota": lambda s: lax.broadcasted_iota(jnp.int32, s, 0),
    "random.normal": lambda s: jax.random.normal(KEY, s),
    "random.uniform": lambda s: jax.random.uniform(KEY, s),
    "random.randint": lambda s: jax.random.randint(KEY, s, 0, 3),
    "random.bernoulli": lambda s: jax.random.bernoulli(KEY, 0.5, s),
    "random.bits": lambda s: jax.random.bits(KEY, s),
    "random.gumbel": lambda s: jax.random.gumbel(KEY, s),
    "random.exponential": lambda s: jax.random.exponential(KEY, s),
    "random.truncated_normal": lambda s: jax.random.truncated_normal(KEY, -1.0, 1.0, s),
    "random.rademacher": lambda s: jax.random.rademacher(KEY, s),
    "random.choice": lambda s: jax.random.choice(KEY, 5, s),
    "jax.jit(jnp.zeros)": lambda s: jax.jit(lambda: jnp.zeros(s))(),
    "lax.iota": lambda s: lax.iota(jnp.int32, s[0]),
    "jnp.eye": lambda s: jnp.eye(s[0]),
    "jnp.identity": lambda s: jnp.identity(s[0]),
    "jnp.tri": lambda s: jnp.tri(s[0]),
    "jnp.linspace": lambda s: jnp.linspace(0.0, 1.0, s[0]),
    "jnp.repeat": lambda s: jnp.repeat(X, s[0]),
    "nn.one_hot": lambda s: jax.nn.one_hot(jnp.array([0, 2]), s[0]),
}

# What leaks from inside NumPy or LLVM when a shape is not checked.
_FOREIGN = ("ufunc", "array is too big", "Maximum allowed dimension",
            "maximum supported dimension", "cannot be safely coerced")
# NumPy's own message (JAX's `eye` says more: "..., got -1 and None").
_NUMPY_NEGATIVE = "negative dimensions are not allowed"


def _sizes(kind: str) -> st.SearchStrategy:
    if kind == "negative":
        return st.integers(-10**6, -1)
    if kind == "non-integer":
        return st.one_of(st.floats(0.5, 100.0).filter(lambda v: v != int(v)), st.just("a"),
                         st.just(2.0), st.just(None))
    return st.integers(2**40, 2**62)  # far beyond any machine's memory


def _bad_shapes(kind: str) -> st.SearchStrategy:
    """Shapes of one to three entries with at least one bad one (the others small)."""
    good = st.integers(1, 3)
    parts = st.tuples(st.lists(good, max_size=2), _sizes(kind), st.lists(good, max_size=1))
    return parts.map(lambda p: (*p[0], p[1], *p[2]))


def _check_raises_like_jax(fn, shape: tuple, kind: str) -> None:
    allowed = (JaxRuntimeError, TypeError, ValueError) if kind == "huge" else (TypeError,
                                                                              ValueError)
    with pytest.raises(allowed) as info:
        fn(shape)
    message = str(info.value)
    foreign = any(f in message for f in _FOREIGN) or message == _NUMPY_NEGATIVE
    assert not foreign, f"{shape}: {type(info.value)}: {message}"
    if isinstance(info.value, JaxRuntimeError):
        assert message.startswith("RESOURCE_EXHAUSTED: Out of memory allocating"), message


@pytest.mark.parametrize("kind", ["negative", "non-integer", "huge"])
@pytest.mark.parametrize("name", sorted(SHAPE_FUNCTIONS))
def test_bad_shapes_raise_jax_errors(name, kind):
    fn = SHAPE_FUNCTIONS[name]
    if kind == "huge" and name in ("jnp.linspace", "jnp.repeat", "lax.iota", "jnp.eye",
                                   "jnp.identity", "jnp.tri", "nn.one_hot", "random.choice"):
        # One size: its first entry is the huge one.
        shapes = st.integers(2**40, 2**62).map(lambda n: (n,))
    elif name in ("lax.iota", "jnp.eye", "jnp.identity", "jnp.tri", "jnp.linspace",
                  "jnp.repeat", "nn.one_hot"):
        shapes = _sizes(kind).map(lambda n: (n,))
    else:
        shapes = _bad_shapes(kind)

    @settings(max_examples=6, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(shapes)
    def check(shape):
        if kind == "non-integer" and name == "jnp.resize" and shape[-1] is None:
            return  # resize reads None as no shape given at all (NumPy's and JAX's)
        _check_raises_like_jax(fn, shape, kind)

    check()


# (call, JAX's class, JAX's message), read off real JAX 0.10.2.
JAX_MESSAGES = [
    (lambda: lax.iota(jnp.int32, -3), TypeError,
     "iota shape must have every element be nonnegative, got (-3,)."),
    (lambda: lax.iota(jnp.int32, 2.5), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got (2.5,)."),
    (lambda: jnp.repeat(X, -1), TypeError,
     "broadcast_in_dim shape must have every element be nonnegative, got (4, -1)."),
    (lambda: jax.nn.one_hot(jnp.array([0, 2]), -2), TypeError,
     "iota shape must have every element be nonnegative, got (1, -2)."),
    (lambda: jnp.zeros((2, -1)), TypeError,
     "broadcast_in_dim shape must have every element be nonnegative, got (2, -1)."),
    (lambda: jnp.ones((2.5,)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got (2.5,)."),
    (lambda: lax.full((-1,), 0.0), TypeError,
     "broadcast_in_dim shape must have every element be nonnegative, got (-1,)."),
    (lambda: lax.broadcast(X, (-1,)), TypeError,
     "broadcast_in_dim shape must have every element be nonnegative, got (-1, 4)."),
    (lambda: jnp.tri(-1), TypeError,
     "iota shape must have every element be nonnegative, got (-1, -1)."),
    (lambda: jnp.eye(-1), ValueError, "negative dimensions are not allowed, got -1 and None"),
    (lambda: jnp.linspace(0, 1, -1), ValueError,
     "Number of samples, -1, must be non-negative."),
    (lambda: jnp.resize(X, (-1,)), ValueError, "all elements of `new_shape` must be non-negative"),
    (lambda: jax.random.normal(KEY, (2.5,)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got (2.5,)."),
    (lambda: jax.random.randint(KEY, (-1,), 0, 3), TypeError,
     "Only non-negative indices are allowed when broadcasting static shapes, but got shape "
     "(-1,)."),
    (lambda: jnp.zeros((2**40,)), JaxRuntimeError,
     "RESOURCE_EXHAUSTED: Out of memory allocating 4398046511104 bytes."),
    (lambda: lax.reduce_precision(X, exponent_bits=0, mantissa_bits=-1), ValueError,
     "reduce_precision: exponent_bits must be positive; got 0"),
    (lambda: lax.reduce_precision(X, exponent_bits=5, mantissa_bits=-1), ValueError,
     "reduce_precision: mantissa_bits must be non-negative; got -1"),
    (lambda: jax.jit(lambda x: lax.reduce_precision(x, exponent_bits=-1, mantissa_bits=2))(X),
     ValueError, "reduce_precision: exponent_bits must be positive; got -1"),
    (lambda: lax.reduce_precision(X, exponent_bits=2.5, mantissa_bits=2), TypeError,
     "'float' object cannot be interpreted as an integer"),
    (lambda: jax.jit(lambda x: x, static_argnums=5), ValueError,
     "Jitted function has static_argnums=(5,), but only accepts 1 positional arguments."),
    (lambda: jax.jit(lambda x: x, static_argnums=-3), ValueError,
     "Jitted function has static_argnums=(-3,), but only accepts 1 positional arguments."),
    (lambda: jax.jit(lambda x: x, donate_argnums=5), ValueError,
     "Jitted function has donate_argnums=(5,), but only accepts 1 positional arguments."),
    (lambda: jax.jit(lambda x: x, static_argnames="y"), ValueError,
     "Jitted function has invalid argnames {'y'} in static_argnames. Function does not take "
     "these args."),
    (lambda: jax.device_put(X, "cpu:7"), ValueError,
     "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, `Format`, "
     "`jax.memory.Space` or a pytree of these values. Received invalid value: cpu:7"),
    (lambda: jax.device_put(X, 12345), ValueError,
     "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, `Format`, "
     "`jax.memory.Space` or a pytree of these values. Received invalid value: 12345"),
]


@pytest.mark.parametrize("case", range(len(JAX_MESSAGES)))
def test_jax_messages(case):
    call, kind, message = JAX_MESSAGES[case]
    with pytest.raises(kind) as info:
        call()
    assert type(info.value) is kind
    assert str(info.value).splitlines()[0] == message


def test_jit_argnums_that_the_function_can_take():
    def varargs(x, *rest):
        return x

    def defaults(x, y=1):
        return x * y

    def keywords(x, **rest):
        return x

    assert jax.jit(varargs, static_argnums=5)(X).shape == (4,)
    assert jax.jit(defaults, static_argnums=(1,))(X).shape == (4,)
    assert jax.jit(keywords, static_argnames="z")(X).shape == (4,)
    with pytest.raises(ValueError, match="These are positional-only"):
        jax.jit(lambda x, /, y: x, static_argnames="x")


def test_a_negative_dimension_is_caught_while_tracing():
    # Not at run time inside a kernel: the jaxpr is never made.
    with pytest.raises(TypeError, match="iota shape must have every element be nonnegative"):
        jax.make_jaxpr(lambda: lax.iota(jnp.int32, -3))()
    with pytest.raises(TypeError, match="random_bits shape must have every element"):
        jax.eval_shape(lambda k: jax.random.normal(k, (-2,)), KEY)


def test_an_array_too_large_for_memory_is_resource_exhausted_then_the_process_goes_on():
    for shape in [(2**40,), (2**62,), (2**63,)]:
        with pytest.raises(JaxRuntimeError, match="RESOURCE_EXHAUSTED: Out of memory"):
            jnp.zeros(shape)
        with pytest.raises(JaxRuntimeError, match="RESOURCE_EXHAUSTED: Out of memory"):
            jax.jit(lambda: jnp.ones(shape))()
    np.testing.assert_array_equal(jnp.zeros(3), np.zeros(3))
