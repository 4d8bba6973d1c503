"""jax.example_libraries.optimizers and .stax (_src/example_libraries/): a small network
trained with every optimizer, layers' shapes and outputs, schedules, state packing and
errors, against values recorded from JAX 0.10.2 (float32: agreement to rounding)."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.example_libraries import optimizers as O
from justjax.example_libraries import stax

TOL = dict(rtol=1e-5, atol=1e-6)


def _mlp():
    init, apply = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(8), stax.Tanh,
                              stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init(jax.random.PRNGKey(0), (-1, 4))
    x = jax.random.normal(jax.random.PRNGKey(1), (5, 4))
    y = jnp.array([0, 1, 2, 1, 0])
    return out_shape, params, lambda p: -jnp.mean(apply(p, x)[jnp.arange(5), y])


def test_serial_network_as_jax():
    out_shape, params, loss = _mlp()
    assert out_shape == (-1, 3)
    assert [tuple(p.shape for p in layer) for layer in params] == [
        ((4, 8), (8,)), (), ((8, 8), (8,)), (), ((8, 3), (3,)), ()]
    np.testing.assert_allclose(loss(params), 1.143793, **TOL)


@pytest.mark.parametrize("name, opt, want", [  # JAX 0.10.2: the loss after 5 steps
    ("sgd", O.sgd(0.1), 0.9288883209228516),
    ("momentum", O.momentum(0.1, 0.9), 0.6928918361663818),
    ("nesterov", O.nesterov(0.1, 0.9), 0.6139729022979736),
    ("adagrad", O.adagrad(0.1), 0.6846820116043091),
    ("rmsprop", O.rmsprop(0.01), 0.6220635175704956),
    ("rmsprop_momentum", O.rmsprop_momentum(0.01), 0.2318831980228424),
    ("adam", O.adam(O.exponential_decay(0.01, 10, 0.5)), 0.9060178995132446),
    ("adamax", O.adamax(0.01), 0.8922540545463562),
    ("sm3", O.sm3(0.1), 0.7211852073669434)])
def test_optimizers_as_jax(name, opt, want):
    _, params, loss = _mlp()
    init, update, get_params = opt
    state = init(params)

    def step(i, state):
        return update(i, jax.grad(loss)(get_params(state)), state)

    # sm3 keeps each array's shape (ints) in its state, so it is not jitted (as in JAX).
    step = step if name == "sm3" else jax.jit(step)
    for i in range(5):
        state = step(i, state)
    assert type(state.packed_state) is tuple
    np.testing.assert_allclose(float(loss(get_params(state))), want, rtol=1e-5)


def test_schedules_and_utilities_as_jax():
    _, params, _ = _mlp()
    np.testing.assert_allclose(O.l2_norm(params), 3.936215, **TOL)
    np.testing.assert_allclose(O.clip_grads({"a": jnp.ones(3) * 3}, 1.0)["a"], [0.57735] * 3,
                               rtol=1e-5)
    schedule = O.piecewise_constant([2, 5], [1.0, 0.5, 0.1])
    np.testing.assert_allclose([float(schedule(i)) for i in range(7)],
                               [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.1], rtol=1e-7)
    assert float(O.inverse_time_decay(1.0, 2, 0.5, staircase=True)(5)) == 0.5
    np.testing.assert_allclose(float(O.polynomial_decay(1.0, 10, 0.1, 2.0)(3)), 0.541, rtol=1e-6)
    np.testing.assert_allclose(float(O.inverse_time_decay(1.0, 2, 0.5)(5)), 0.4444444444444444)


def test_state_pytree_and_packing_as_jax():
    state = O.adam(0.1)[0]({"w": jnp.ones(2), "b": jnp.zeros(())})
    assert str(jax.tree_util.tree_structure(state)) == (
        "PyTreeDef(CustomNode(OptimizerState[(PyTreeDef({'b': *, 'w': *}), (PyTreeDef((*, *, "
        "*)), PyTreeDef((*, *, *))))], [([*, *, *], [*, *, *])]))")
    unpacked = O.unpack_optimizer_state(state)
    assert str(jax.tree_util.tree_structure(unpacked)) == "PyTreeDef({'b': *, 'w': *})"
    repacked = O.pack_optimizer_state(unpacked)
    assert jax.tree_util.tree_structure(repacked) == jax.tree_util.tree_structure(state)


def test_optimizer_errors_as_jax():
    with pytest.raises(TypeError):
        O.make_schedule(jnp.ones(2))
    with pytest.raises(ValueError, match="boundaries length must be one shorter than values "
                                         "length"):
        O.piecewise_constant([1, 2], [1.0])
    sgd = O.sgd(0.1)
    with pytest.raises(TypeError, match=r"parameter tree PyTreeDef\(\{'b': \*\}\) and grad "
                                        r"tree PyTreeDef\(\{'a': \*\}\)."):
        sgd.update_fn(0, {"a": 1.0}, sgd.init_fn({"b": 1.0}))


def test_conv_layers_as_jax():
    rng = jax.random.PRNGKey(0)
    init, apply = stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
                              stax.MaxPool((2, 2), strides=(2, 2)), stax.AvgPool((2, 2)),
                              stax.Flatten, stax.Dense(2))
    shape, params = init(rng, (2, 8, 8, 3))
    assert tuple(int(d) for d in shape) == (2, 2)
    x = jax.random.normal(jax.random.PRNGKey(2), (2, 8, 8, 3))
    np.testing.assert_allclose(apply(params, x), [[-2.23212, -0.58351], [-1.65067, -1.42193]],
                               rtol=1e-4, atol=1e-5)
    init, apply = stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME")
    shape, params = init(rng, (1, 4, 4, 1))
    assert tuple(int(d) for d in shape) == (1, 8, 8, 2)
    np.testing.assert_allclose(apply(params, jnp.ones((1, 4, 4, 1))).sum(), -6.996371, rtol=1e-5)
    init, apply = stax.Conv1DTranspose(2, (3,))
    shape, params = init(rng, (1, 5, 2))
    assert tuple(int(d) for d in shape) == (1, 7, 2)
    np.testing.assert_allclose(apply(params, jnp.ones((1, 5, 2))).sum(), -8.034866, rtol=1e-5)
    init, apply = stax.SumPool((2,), spec="NCH")
    assert init(rng, (1, 2, 5))[0] == (1, 2, 4)
    np.testing.assert_array_equal(apply((), jnp.arange(10.0).reshape(1, 2, 5)),
                                  [[[1, 3, 5, 7], [11, 13, 15, 17]]])


def test_combinators_and_dropout_as_jax():
    rng = jax.random.PRNGKey(0)
    init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
                              stax.FanInConcat())
    shape, params = init(rng, (2, 3))
    assert shape == (2, 6)
    np.testing.assert_allclose(apply(params, jnp.ones((2, 3)))[0],
                               [-0.22966, 1.9908, 1.18424, 1.0, 1.0, 1.0], rtol=1e-4)
    init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Dense(3)),
                              stax.FanInSum, stax.Dropout(0.5))
    shape, params = init(rng, (2, 3))
    np.testing.assert_allclose(apply(params, jnp.ones((2, 3)), rng=jax.random.PRNGKey(3)),
                               [[0.55725, 0.0, 4.48784], [0.0, 1.68487, 4.48784]], rtol=1e-4)
    with pytest.raises(ValueError, match="Dropout layer requires apply_fun to be called with "
                                         "a PRNG key argument"):
        apply(params, jnp.ones((2, 3)))
    init, apply = stax.BatchNorm(axis=0, center=False)
    _, params = init(rng, (3, 2))
    assert params[0] == ()
    np.testing.assert_allclose(apply(params, jnp.arange(6.0).reshape(3, 2))[:, 0],
                               [-1.22474, 0.0, 1.22474], rtol=1e-5)
