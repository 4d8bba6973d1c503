"""Buffer donation: a donated Array's memory holds the program's result, as JAX does on CPU.

`jax.jit(f, donate_argnums=...)` deletes the donated Arrays, and the output of the donated
type then lives in the very memory the Array had (`unsafe_buffer_pointer()` is the same), on
the native backend and on the reference backend alike. A buffer shared with anything else
(a NumPy array, a view, another Array) is never written: the program works on a copy. The
expected behaviours were read off real JAX 0.10.2 on CPU.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends
from justjax._src.backends.llvm.runtime import executable
from justjax._src.runtime.array import Array
from justjax.experimental.compilation_cache import compilation_cache


@pytest.fixture(params=["cpu", "reference"])
def platform(request):
    """Runs the test on the native backend and on the reference backend."""
    with jax.config.override("jax_platforms", request.param):
        yield request.param


def _pointer(x) -> int:
    return x.unsafe_buffer_pointer()


# Inputs are made with `jnp.array`, `jnp.ones` or `jnp.zeros`: fresh memory of their own on
# both backends (the reference backend's `jnp.arange` is a read-only view of a constant of
# its program, which a donation copies instead of writing).


# ---------------------------------------------------------------------------------------------
# The result lives in the donated memory.

@pytest.mark.parametrize("shape", [(1000,), (), (7, 3)])
def test_result_takes_the_donated_buffer(platform, shape):
    x = jnp.ones(shape)
    before = _pointer(x)
    y = jax.jit(lambda x: x * 2, donate_argnums=0)(x)
    assert x.is_deleted() and _pointer(y) == before
    np.testing.assert_array_equal(np.asarray(y), np.full(shape, 2.0, np.float32))


def test_donated_argument_after_the_first(platform):
    # equinox's donate="warn-except-first": only the second argument is donated.
    x, y = jnp.array(0.0), jnp.array(1.0)
    before = _pointer(y)
    out = jax.jit(lambda x, y: x + y, donate_argnums=1)(x, y)
    assert not x.is_deleted() and y.is_deleted()
    assert _pointer(out) == before and float(out) == 1.0


def test_donated_pytree_leaves_and_passed_through_leaves(platform):
    # As equinox's filter_jit(donate="all"): one donated dict of every array; the weights
    # come back unchanged, the buffer updated; each output keeps its donor's memory.
    state = {"w": jnp.arange(6.0).reshape(2, 3), "buffer": jnp.zeros(100)}
    before = {k: _pointer(v) for k, v in state.items()}

    @jax.jit
    def predict(state, x):
        return state["w"] @ x

    def step(state, x):
        new = dict(state, buffer=state["buffer"].at[0].add(1))
        return predict(state, x), new

    stepper = jax.jit(step, donate_argnums=0)
    for _ in range(3):
        y, new = stepper(state, jnp.ones(3))
        assert all(v.is_deleted() for v in state.values())
        state = new
    assert {k: _pointer(v) for k, v in state.items()} == before
    assert float(state["buffer"][0]) == 3.0
    np.testing.assert_array_equal(np.asarray(y), [3.0, 12.0])


def test_in_place_update_of_a_donated_array(platform):
    x = jnp.zeros(1000)
    before = _pointer(x)
    update = jax.jit(lambda x, i: x.at[i].set(5.0), donate_argnums=0)
    for i in range(3):
        x = update(x, i)
    assert _pointer(x) == before
    np.testing.assert_array_equal(np.asarray(x[:4]), [5.0, 5.0, 5.0, 0.0])


def test_donated_key_array(platform):
    key = jax.random.key(0)
    before = _pointer(key)
    new = jax.jit(lambda k: jax.random.fold_in(k, 1), donate_argnums=0)(key)
    assert key.is_deleted() and _pointer(new) == before
    # Real JAX 0.10.2: jax.random.key_data(jax.random.fold_in(jax.random.key(0), 1)).
    np.testing.assert_array_equal(np.asarray(jax.random.key_data(new)),
                                  np.array([928981903, 3453687069], np.uint32))


def test_donated_input_returned_as_it_is(platform):
    x = jnp.arange(5.0)
    before = _pointer(x)
    y = jax.jit(lambda x: x, donate_argnums=0)(x)
    assert x.is_deleted() and _pointer(y) == before


@pytest.mark.parametrize("fun, want", [
    (lambda a, b: (b, a), [[10, 11, 12], [0, 1, 2]]),
    (lambda a, b: (b[::-1], a), [[12, 11, 10], [0, 1, 2]]),
    (lambda a, b: (b, a, a + b), [[10, 11, 12], [0, 1, 2], [10, 12, 14]]),
])
def test_outputs_copied_between_donated_buffers(platform, fun, want):
    # Each output is written into the other's donated memory: neither copy may clobber
    # what the other still reads.
    a, b = jnp.array([0.0, 1.0, 2.0]), jnp.array([10.0, 11.0, 12.0])
    pointers = {_pointer(a), _pointer(b)}
    outs = jax.jit(fun, donate_argnums=(0, 1))(a, b)
    assert [np.asarray(o).tolist() for o in outs] == want
    assert {_pointer(outs[0]), _pointer(outs[1])} == pointers


def test_donated_input_read_by_a_copied_output(platform):
    x = jnp.arange(4.0)
    rev, same = jax.jit(lambda x: (x[::-1], x), donate_argnums=0)(x)
    assert np.asarray(rev).tolist() == [3.0, 2.0, 1.0, 0.0]
    assert np.asarray(same).tolist() == [0.0, 1.0, 2.0, 3.0]


# ---------------------------------------------------------------------------------------------
# Memory shared with anything else is never written.

def test_numpy_view_of_a_donated_array_keeps_its_values(platform):
    x = jnp.ones(1000)
    view = np.asarray(x)
    y = jax.jit(lambda x: x * 2, donate_argnums=0)(x)
    assert x.is_deleted() and float(y[0]) == 2.0
    assert _pointer(y) != view.ctypes.data and view[0] == 1.0


def test_array_over_a_read_only_numpy_array_is_not_written(platform):
    values = np.ones(1000, np.float32)
    values.setflags(write=False)
    x = Array(values)  # adopts the read-only array without a copy
    assert _pointer(x) == values.ctypes.data
    y = jax.jit(lambda x: x + 1, donate_argnums=0)(x)
    assert x.is_deleted() and float(y[0]) == 2.0
    assert _pointer(y) != values.ctypes.data and values[0] == 1.0
    # The user dropped their reference: the memory is still theirs, never the program's.
    x = Array(np.array(values))
    y = jax.jit(lambda x: x + 1, donate_argnums=0)(x)
    assert float(y[0]) == 2.0


def test_arrays_sharing_a_buffer_are_not_written(platform):
    x = jnp.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    rows = list(x)  # each row an Array over x's memory
    same = jax.device_put(x, jax.devices()[0])  # the same memory, another Array
    y = jax.jit(lambda x: x * 10, donate_argnums=0)(x)
    assert x.is_deleted() and np.asarray(y).tolist() == [[0, 10, 20], [30, 40, 50]]
    assert np.asarray(rows[1]).tolist() == [3.0, 4.0, 5.0]
    assert np.asarray(same).tolist() == [[0, 1, 2], [3, 4, 5]]
    # Once nothing else holds it, the other Array's donation takes the memory.
    del rows
    before = _pointer(same)
    z = jax.jit(lambda x: x * 10, donate_argnums=0)(same)
    assert same.is_deleted() and _pointer(z) == before


def test_numpy_arguments_are_never_written(platform):
    values = np.ones(1000, np.float32)
    y = jax.jit(lambda x: x * 2, donate_argnums=0)(values)
    assert values[0] == 1.0 and float(y[0]) == 2.0
    assert _pointer(y) != values.ctypes.data


# ---------------------------------------------------------------------------------------------
# Asynchronous dispatch.

def test_donating_an_array_still_being_computed():
    n = executable.ASYNC_ELEMENTS  # dispatched to the device thread
    x = jnp.ones(n) * 3
    before = _pointer(x)
    y = jax.jit(lambda x: x + 1, donate_argnums=0)(x)
    assert _pointer(y) == before and float(y[-1]) == 4.0
    x = jnp.ones(n) * 3
    y = jax.jit(lambda x: x + 1, donate_argnums=0)(x)  # without waiting for x first
    assert float(y[0]) == 4.0 and float(y[-1]) == 4.0


def test_donating_an_array_a_running_program_still_reads():
    n = executable.ASYNC_ELEMENTS
    x = jnp.ones(n)
    tripled = jax.jit(lambda x: jnp.cumsum(x * 3))(x)  # may still be running
    y = jax.jit(lambda x: x.at[0].set(-1.0), donate_argnums=0)(x)
    assert float(tripled[-1]) == 3.0 * n and float(tripled[0]) == 3.0
    assert float(y[0]) == -1.0


# ---------------------------------------------------------------------------------------------
# What JAX refuses or leaves alone.

@pytest.mark.parametrize("donate, message", [
    ((0, 1), r"Attempt to donate the same buffer twice in Execute\(\) \(flattened argument "
             r"1, replica 0, partition 0, first use: 0\). Toy example for this bug: "
             r"`f\(donate\(a\), donate\(a\)\)`."),
    ((0,), r"Attempt to use a buffer that was previously donated in the same call to "
           r"Execute\(\) \(flattened argument 1, replica 0, partition 0, first use: 0\). Toy "
           r"example for this bug: `f\(donate\(a\), a\)`."),
    ((1,), r"Attempt to donate a buffer which is also used by the same call to Execute\(\) "
           r"\(flattened argument 1, replica 0, partition 0, first use: 0\). Toy example for "
           r"this bug: `f\(a, donate\(a\)\)`."),
])
def test_an_array_donated_and_passed_again_is_refused(platform, donate, message):
    x = jnp.ones(10)
    f = jax.jit(lambda a, b: (a + b, a - b), donate_argnums=donate)
    with pytest.raises(jax.errors.JaxRuntimeError, match="INVALID_ARGUMENT: " + message):
        f(x, x)
    assert not x.is_deleted()


def test_unusable_and_unused_donations_keep_the_array(platform):
    x = jnp.ones(10)
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: "
                                         r"float32\[10\]"):
        total = jax.jit(lambda x: x.sum(), donate_argnums=0)(x)
    assert float(total) == 10.0 and not x.is_deleted()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = jax.jit(lambda a, b: b * 2, donate_argnums=0)(x, jnp.ones(10))
    assert float(y[0]) == 2.0 and not x.is_deleted()


def test_debug_nans_turns_donation_off(platform):
    x = jnp.ones(10)
    with jax.config.override("jax_debug_nans", True):
        f = jax.jit(lambda x: x * 2, donate_argnums=0)
        assert "donated_invars" not in str(jax.make_jaxpr(f)(x))
        y = f(x)
    assert not x.is_deleted() and float(y[0]) == 2.0


def test_persistent_cache_keeps_donation(tmp_path):
    compilation_cache.reset_cache()
    try:
        with jax.config.override("jax_compilation_cache_dir", str(tmp_path)), \
                jax.config.override("jax_persistent_cache_min_compile_time_secs", 0.0):
            for _ in range(2):  # compiled, then loaded from the cache
                x = jnp.ones(1000)
                before = _pointer(x)
                y = jax.jit(lambda x: jnp.sin(x) * 2, donate_argnums=0)(x)
                assert x.is_deleted() and _pointer(y) == before
                np.testing.assert_allclose(np.asarray(y), 2 * np.sin(1.0), rtol=1e-6)
    finally:
        compilation_cache.reset_cache()


# ---------------------------------------------------------------------------------------------
# pmap.

def test_pmap_on_one_device_reuses_the_donated_buffer(platform):
    x = jnp.ones((1, 1000))
    before = _pointer(x)
    y = jax.pmap(lambda x: x * 2, donate_argnums=0)(x)
    assert x.is_deleted() and _pointer(y) == before and float(y[0, 0]) == 2.0


def test_pmap_reuses_the_shards_of_a_donated_pmap_result(platform):
    with jax.config.override("jax_num_cpu_devices", 4):
        x = jax.pmap(lambda x: x)(jnp.arange(12.0).reshape(4, 3))
        shards = [_pointer(s.data) for s in x.addressable_shards]
        y = jax.pmap(lambda x: x + 1, donate_argnums=0)(x)
        assert x.is_deleted()
        assert [_pointer(s.data) for s in y.addressable_shards] == shards
        np.testing.assert_array_equal(np.asarray(y), np.arange(12.0).reshape(4, 3) + 1)
        # An array on one device is copied to the four: JAX donates the copies, keeps it.
        z = jnp.ones((4, 3))
        jax.pmap(lambda x: x + 1, donate_argnums=0)(z)
        assert not z.is_deleted()


# ---------------------------------------------------------------------------------------------
# The executables' contract: only a buffer given up is written.

@pytest.mark.parametrize("name", ["llvm", "reference"])
@pytest.mark.parametrize("fun", [lambda x, y: x * y, lambda x, y: (x * y)[::-1]],
                         ids=["elementwise", "program"])
def test_executable_writes_only_the_buffers_given_up(name, fun):
    module = jax.jit(fun, donate_argnums=0).lower(jnp.ones(8), jnp.ones(8)).compiler_ir()
    executable = backends.get_backend(name).compile(module)
    x, y = np.arange(8, dtype=np.float32), np.full(8, 2.0, np.float32)
    want = np.asarray(fun(x, y))
    out, = executable.execute([x, y])
    np.testing.assert_array_equal(out, want)
    assert x.tolist() == list(range(8)) and out is not x
    out, = executable.execute([x, y], donated={0})
    np.testing.assert_array_equal(out, want)
    assert out is x and y.tolist() == [2.0] * 8
