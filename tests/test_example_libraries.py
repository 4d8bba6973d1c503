"""jax.example_libraries: optimizers and stax against values JAX 0.10.2 gave for the same
programs (recorded with real JAX, written here as literals)."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.example_libraries import optimizers, stax

PARAMS = {"w": jnp.array([1.0, -2.0, 3.0]), "b": jnp.array(0.5)}

# Parameters after three updates with `_grads`, from JAX 0.10.2.
AFTER_THREE_STEPS = {
    "sgd": ([0.6156730055809021, -2.1223461627960205, 2.441019058227539], 0.6355000138282776),
    "momentum": ([0.4489929974079132, -2.058985948562622, 2.120979070663452],
                 0.7569999694824219),
    "nesterov": ([0.13069206476211548, -2.181894063949585, 1.6724159717559814],
                 0.83633953332901),
    "adagrad": ([0.9457420706748962, -1.992384910583496, 2.9476423263549805],
                0.546005129814148),
    "rmsprop": ([0.0996309220790863, -2.174154281616211, 2.138435125350952],
                0.9755646586418152),
    "rmsprop_momentum": ([-0.7153396010398865, -1.823274850845337, 1.3431568145751953],
                         1.4453084468841553),
    "adam": ([0.7228389382362366, -1.9417864084243774, 2.7084996700286865],
             0.7951258420944214),
    "adamax": ([0.7765567302703857, -1.9246920347213745, 2.7564122676849365],
               0.7690901160240173),
    "sm3": ([0.9457420706748962, -1.992384910583496, 2.9476423263549805], 0.546005129814148),
    "adam_schedule": ([0.7932518720626831, -1.9185911417007446, 2.784362316131592],
                      0.7184547185897827),
}

OPTIMIZERS = {
    "sgd": lambda: optimizers.sgd(0.1),
    "momentum": lambda: optimizers.momentum(0.1, 0.9),
    "nesterov": lambda: optimizers.nesterov(0.1, 0.9),
    "adagrad": lambda: optimizers.adagrad(0.1),
    "rmsprop": lambda: optimizers.rmsprop(0.1),
    "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.1),
    "adam": lambda: optimizers.adam(0.1),
    "adamax": lambda: optimizers.adamax(0.1),
    "sm3": lambda: optimizers.sm3(0.1),
    "adam_schedule": lambda: optimizers.adam(optimizers.exponential_decay(0.1, 2, 0.5)),
}


def _grads(params: dict, i: int) -> dict:
    return {"w": params["w"] * 0.3 + i, "b": params["b"] - 1.0}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizers_match_jax_bit_for_bit(name: str) -> None:
    init, update, get_params = OPTIMIZERS[name]()
    state = init(PARAMS)
    for i in range(3):
        state = update(i, _grads(get_params(state), i), state)
    params = get_params(state)
    want_w, want_b = AFTER_THREE_STEPS[name]
    np.testing.assert_array_equal(params["w"], np.float32(want_w))
    assert float(params["b"]) == np.float32(want_b)


def test_optimizer_state_is_a_pytree_and_jits() -> None:
    init, update, get_params = optimizers.adam(0.1)
    state = init(PARAMS)
    assert isinstance(state, optimizers.OptimizerState)
    assert len(jax.tree_util.tree_leaves(state)) == 6  # (x, m, v) per parameter
    step = jax.jit(lambda i, s: update(i, _grads(get_params(s), i), s))
    for i in range(3):
        state = step(i, state)
    # JAX 0.10.2's jitted steps (a traced step number: `b ** (i + 1)` is a general power,
    # not the eager integer power, so the values differ from eager ones in the last bits).
    np.testing.assert_allclose(get_params(state)["w"], [0.7228380441665649,
                               -1.9417868852615356, 2.708498477935791], rtol=1e-6)
    unpacked = optimizers.unpack_optimizer_state(state)
    assert isinstance(unpacked["w"], optimizers.JoinPoint)
    repacked = optimizers.pack_optimizer_state(unpacked)
    assert repacked.tree_def == state.tree_def
    np.testing.assert_array_equal(get_params(repacked)["b"], get_params(state)["b"])


def test_mismatched_gradient_tree_is_jax_error() -> None:
    opt = optimizers.sgd(0.1)
    with pytest.raises(TypeError, match=r"^optimizer update function was passed a gradient "
                       r"tree that did not match the parameter tree structure with which it "
                       r"was initialized: parameter tree PyTreeDef\(\{'a': \*\}\) and grad "
                       r"tree PyTreeDef\(\[\*\]\)\.$"):
        opt.update_fn(0, [1.0], opt.init_fn({"a": 1.0}))
    with pytest.raises(TypeError):
        optimizers.make_schedule(jnp.ones(2))


def test_schedules_and_utilities() -> None:
    # JAX 0.10.2's values at steps 0..5.
    expected = [
        (optimizers.inverse_time_decay(1.0, 2, 0.5),
         [1.0, 0.8, 0.6666666666666666, 0.5714285714285714, 0.5, 0.4444444444444444]),
        (optimizers.inverse_time_decay(1.0, 2, 0.5, staircase=True),
         [1.0, 1.0, 0.6666666865348816, 0.6666666865348816, 0.5, 0.5]),
        (optimizers.polynomial_decay(1.0, 4, 0.1, power=2.0),
         [1.0, 0.606249988079071, 0.32499998807907104, 0.15625, 0.10000000149011612,
          0.10000000149011612]),
        (optimizers.piecewise_constant([2, 4], [1.0, 0.5, 0.1]),
         [1.0, 1.0, 1.0, 0.5, 0.5, 0.10000000149011612]),
    ]
    for schedule, values in expected:
        assert [float(schedule(i)) for i in range(6)] == values
    assert float(optimizers.l2_norm(PARAMS)) == 3.7749171257019043
    clipped = optimizers.clip_grads(PARAMS, 1.0)
    np.testing.assert_array_equal(clipped["w"], np.float32(
        [0.26490646600723267, -0.5298129320144653, 0.794719398021698]))
    with pytest.raises(ValueError, match="boundaries length must be one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0])


def test_stax_serial_parallel_fan_layers() -> None:
    init_fun, apply_fun = stax.serial(
        stax.Dense(4), stax.Relu, stax.FanOut(2), stax.parallel(stax.Dense(2), stax.Identity),
        stax.FanInConcat(), stax.Elu, stax.Dense(1))
    shape, params = init_fun(jax.random.PRNGKey(0), (-1, 3))
    assert shape == (-1, 1)
    assert jax.tree_util.tree_map(jnp.shape, params) == [
        ((3, 4), (4,)), (), (), (((4, 2), (2,)), ()), (), (), ((6, 1), (1,))]
    np.testing.assert_array_equal(params[0][0][0], np.float32(
        [0.11530236154794693, -0.44237709045410156, -0.7077285051345825, -0.23753589391708374]))
    out = apply_fun(params, jnp.array([[1.0, 2.0, -1.0], [0.5, -0.5, 0.0]]))
    # JAX: [[-0.1901523768901825], [0.13662348687648773]] (elu's expm1 may round apart).
    np.testing.assert_allclose(out, [[-0.1901523768901825], [0.13662348687648773]], rtol=1e-6)


def test_stax_dropout() -> None:
    init_fun, apply_fun = stax.serial(stax.Dense(3), stax.Dropout(0.5))
    _, params = init_fun(jax.random.PRNGKey(1), (2,))
    out = apply_fun(params, jnp.array([1.0, 2.0]), rng=jax.random.PRNGKey(2))
    np.testing.assert_array_equal(out, np.float32([0.0, 0.0, 1.9272806644439697]))
    with pytest.raises(ValueError, match=r"^Dropout layer requires apply_fun to be called "
                                         r"with a PRNG key argument"):
        apply_fun(params, jnp.array([1.0, 2.0]))
