"""The fast path of cached calls (`compilation/jit.py`, `execution.fast_call`): a jitted
function called again on Arrays of a signature it has seen runs without the general
machinery, and every behaviour of the general path stays: weak types, donation, static
arguments, config changes (global or in a `with`), disabled jit, NaN checks, transfer
guards, deleted and committed Arrays, tracers, pytrees, unused arguments, and a compiled
tier swapped in on the call."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.compilation import execution
from justjax._src.runtime.array import Array


def _f32(*values: float) -> Array:
    return jnp.asarray(np.array(values, np.float32))


def _fast_calls(f) -> int:
    """How many signatures of `f` have a fast call that serves them."""
    return sum(call is not jax._src.compilation.jit._no_fast_call
               for call in f._cache.fast.values())


def test_second_call_takes_the_fast_path_and_agrees():
    traces = []

    @jax.jit
    def f(x, y, z):
        traces.append(1)
        return x * y + z

    a, b, c = _f32(1, 2), _f32(3, 4), _f32(5, 6)
    first = f(a, b, c)
    assert _fast_calls(f) == 1 and f._cache.last is not None
    second = f(a, b, c)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(second, [8, 14])
    assert len(traces) == 1
    assert type(second) is Array and second.dtype == np.float32 and not second.weak_type
    assert not second.committed and second.devices() == {jax.devices()[0]}
    # The result is a read-only, adopted buffer, usable as the next call's argument.
    with pytest.raises(ValueError):
        np.asarray(second)[0] = 1
    np.testing.assert_array_equal(f(second, second, second), [72, 210])


def test_signatures_alternate_and_shapes_differ():
    f = jax.jit(lambda x: x * 2)
    small, large = _f32(1), _f32(1, 2, 3)
    for _ in range(3):
        np.testing.assert_array_equal(f(small), [2])
        np.testing.assert_array_equal(f(large), [2, 4, 6])
    assert _fast_calls(f) == 2 and f._cache_size() == 2


def test_weak_types_key_the_fast_path():
    f = jax.jit(lambda x, y: x + y)
    half = jnp.ones(2, jnp.float16)
    weak = jnp.asarray(1.0)  # weakly typed float32
    strong = jnp.asarray(np.float32(1.0))
    assert weak.weak_type and not strong.weak_type
    for _ in range(2):
        assert f(half, weak).dtype == np.float16
        assert f(half, strong).dtype == np.float32
    out = f(weak, weak)
    out = f(weak, weak)
    assert out.weak_type and out.dtype == np.float32


def test_pytree_results_and_unused_arguments():
    f = jax.jit(lambda x, unused, y: {"sum": x + y, "pair": (x, y * 2)})
    x, u, y = _f32(1), _f32(7, 7), _f32(2)
    for _ in range(2):
        out = f(x, u, y)
        np.testing.assert_array_equal(out["sum"], [3])
        np.testing.assert_array_equal(out["pair"][1], [4])
        np.testing.assert_array_equal(out["pair"][0], [1])
    assert out["pair"][0] is not x  # an input passed through is a new Array
    assert jax.jit(lambda x: None)(x) is None and jax.jit(lambda x: None)(x) is None


def test_global_config_change_invalidates():
    f = jax.jit(lambda x: jnp.zeros(2) + x.sum())
    x = _f32(1, 2)
    assert f(x).dtype == np.float32 and f(x).dtype == np.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert f(x).dtype == np.float64 and f(x).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert f(x).dtype == np.float32


def test_thread_override_is_served_by_the_general_path():
    f = jax.jit(lambda x: jnp.zeros(2) + x.sum())
    x = _f32(1, 2)
    f(x), f(x)
    with jax.enable_x64(True):
        assert f(x).dtype == np.float64
    assert f(x).dtype == np.float32
    results = []

    def other_thread():
        with jax.enable_x64(True):
            results.append(f(x).dtype)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert results == [np.float64] and f(x).dtype == np.float32


def test_disable_jit_between_calls():
    calls = []

    @jax.jit
    def f(x):
        calls.append(type(x))
        return x + 1

    x = _f32(1)
    f(x), f(x)
    assert len(calls) == 1
    jax.config.update("jax_disable_jit", True)
    try:
        f(x)
    finally:
        jax.config.update("jax_disable_jit", False)
    with jax.disable_jit():
        f(x)
    assert calls[1:] == [Array, Array]
    f(x)
    assert len(calls) == 3


def test_debug_nans_and_no_execution_set_between_calls():
    f = jax.jit(lambda x: jnp.log(x))
    x = _f32(-1.0)
    f(x), f(x)  # NaN, unchecked
    jax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError):
            f(x)
    finally:
        jax.config.update("jax_debug_nans", False)
    f(x)
    jax.config.update("jax_no_execution", True)
    try:
        with pytest.raises(RuntimeError, match="no_execution"):
            f(x)
    finally:
        jax.config.update("jax_no_execution", False)
    assert np.isnan(f(x)[0])


def test_transfer_guard_set_between_calls():
    with jax.config.override("jax_num_cpu_devices", 2):
        devices = jax.devices()
        f = jax.jit(lambda a, b: a + b)
        x = jnp.ones(3)
        with jax.default_device(devices[1]):
            y = jnp.ones(3)  # uncommitted, on device 1
        committed = jax.device_put(jnp.ones(3), devices[0])
        f(y, committed), f(y, committed)
        jax.config.update("jax_transfer_guard", "disallow")
        try:
            with pytest.raises(jax.errors.JaxRuntimeError, match="device-to-device"):
                f(y, committed)
            np.testing.assert_array_equal(f(x, x), [2, 2, 2])
        finally:
            jax.config.update("jax_transfer_guard", None)
        f(y, committed)


def test_committed_arguments_commit_the_results():
    with jax.config.override("jax_num_cpu_devices", 2):
        devices = jax.devices()
        f = jax.jit(lambda a, b: a * b)
        a = jax.device_put(jnp.ones(2), devices[1])
        b = jnp.ones(2)
        for _ in range(2):
            out = f(a, b)
            assert out.committed and out.devices() == {devices[1]}
            out = f(b, b)
            assert not out.committed and out.devices() == {devices[0]}
        c = jax.device_put(jnp.ones(2), devices[0])
        with pytest.raises(ValueError, match="Received incompatible devices"):
            f(a, c)


def test_sharded_and_key_arguments_take_the_general_path():
    with jax.config.override("jax_num_cpu_devices", 2):
        mesh = jax.make_mesh((2,), ("i",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("i"))
        f = jax.jit(lambda a: a + 1)
        plain = jnp.arange(4.0)
        sharded = jax.device_put(plain, sharding)
        f(plain), f(plain)
        for _ in range(2):
            np.testing.assert_array_equal(f(sharded), [1, 2, 3, 4])
    g = jax.jit(lambda k: jax.random.uniform(k, (2,)))
    key = jax.random.key(0)
    np.testing.assert_array_equal(g(key), g(key))


def test_deleted_argument_raises_after_the_fast_path_is_built():
    f = jax.jit(lambda x: x + 1)
    x = _f32(1)
    f(x), f(x)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)


def test_donation_and_static_arguments_still_apply():
    f = jax.jit(lambda x: x + 1, donate_argnums=0)
    for _ in range(3):
        x = _f32(1, 2)
        out = f(x)
        assert x.is_deleted() and not out.is_deleted()
    g = jax.jit(lambda x, n: x * n, static_argnums=1)
    x = _f32(1)
    assert [float(g(x, n)[0]) for n in (2, 3, 2, 3)] == [2, 3, 2, 3]


def test_tracers_and_leaks_take_the_general_path():
    f = jax.jit(lambda x: (x * x).sum())
    x = _f32(1, 2)
    f(x), f(x)
    np.testing.assert_array_equal(jax.grad(f)(x), [2, 4])
    np.testing.assert_array_equal(jax.vmap(f)(jnp.ones((3, 2))), [2, 2, 2])
    leaked = []
    jax.jit(lambda y: leaked.append(y) or y)(x)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        f(leaked[0])


def test_other_arguments_take_the_general_path():
    f = jax.jit(lambda x: x * 2)
    x = _f32(1, 2)
    f(x), f(x)
    np.testing.assert_array_equal(f(np.ones(2, np.float32)), [2, 2])
    assert f(3.0).weak_type and float(f(3.0)) == 6.0
    np.testing.assert_array_equal(f(x=x), [2, 4])
    with pytest.raises(TypeError):
        f(x, x)


def test_clear_cache_empties_the_fast_path():
    traces = []
    f = jax.jit(lambda x: traces.append(1) or x + 1)
    x = _f32(1)
    f(x), f(x)
    f.clear_cache()
    assert f._cache.last is None and not f._cache.fast
    f(x)
    jax.clear_caches()
    f(x)
    assert len(traces) == 3


class _RecordingExecutable:
    """Stands for a compiled tier swapped in on a call: no inline runner, so calls go
    through its `execute_async`."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, 0

    def inline_runner(self):
        return None

    def execute_async(self, args, donated=()):
        self.calls += 1
        return self.inner.execute_async(args, donated)


def test_an_executable_swapped_in_is_used_by_the_fast_path():
    f = jax.jit(lambda x: x + 1)
    x = _f32(1)
    f(x), f(x)
    compiled = next(iter(f._cache.traced.values())).compiled
    swapped = compiled.executable = _RecordingExecutable(compiled.executable)
    np.testing.assert_array_equal(f(x), [2])
    np.testing.assert_array_equal(f(x), [2])
    assert swapped.calls == 2


def test_fast_call_refuses_what_it_cannot_serve():
    f = jax.jit(lambda x: x + 1, donate_argnums=0)
    x = _f32(1)
    f(x)
    compiled = next(iter(f._cache.traced.values())).compiled
    assert execution.fast_call(compiled, (x.aval,), True) is None
    g = jax.jit(lambda x: x + 1)
    x = _f32(1)
    g(x)
    compiled = next(iter(g._cache.traced.values())).compiled
    run = execution.fast_call(compiled, (x.aval,), True)
    assert run((np.ones(1, np.float32),)) is execution.MISS
    assert run((x, x)) is execution.MISS
    assert run((_f32(1, 2),)) is execution.MISS
    np.testing.assert_array_equal(run((x,)), [2])


def test_pytree_keyword_and_static_arguments_take_the_tree_fast_path():
    traces = []

    @jax.jit
    def f(params, x, scale=None):
        traces.append(1)
        out = {k: v * x for k, v in params.items()}
        return out if scale is None else {k: v * scale for k, v in out.items()}

    params = {"w": _f32(1, 2), "b": _f32(3, 4)}
    x = _f32(2, 2)
    for _ in range(3):
        out = f(params, x)
        np.testing.assert_array_equal(out["w"], [2, 4])
        out = f(params, x, scale=x)
        np.testing.assert_array_equal(out["b"], [12, 16])
    assert len(traces) == 2 and sum(map(len, f._cache.fast_trees.values())) == 2
    # Another structure, a None leaf, another shape: each its own signature.
    np.testing.assert_array_equal(f({"w": _f32(1)}, x)["w"], [2, 2])
    np.testing.assert_array_equal(f({"w": _f32(1, 1, 1)}, _f32(3))["w"], [3, 3, 3])
    assert len(traces) == 4


def test_static_arguments_key_the_tree_fast_path():
    traces = []

    @jax.jit
    def scale(x, n):
        traces.append(n)
        return x * n

    g = jax.jit(scale.__wrapped__, static_argnums=1)
    x = _f32(1, 2)
    for _ in range(2):
        assert g(x, 2).dtype == np.float32 and float(g(x, 2)[1]) == 4
        assert float(g(x, 3)[1]) == 6
        # Equal values of other types trace apart (1, 1.0, True).
        assert g(x, True).dtype == np.float32
        assert g(x, 1).dtype == np.float32 and g(x, 1.0).dtype == np.float32
    assert traces == [2, 3, True, 1, 1.0]
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        g(x, [1])
    h = jax.jit(lambda x, n: x * n, static_argnames="n")
    for _ in range(2):
        np.testing.assert_array_equal(h(x, n=3), [3, 6])
        np.testing.assert_array_equal(h(x, 4), [4, 8])


def test_tree_fast_path_invalidated_by_config():
    f = jax.jit(lambda p, n: jnp.zeros(2) + p["a"].sum() * n, static_argnums=1)
    p = {"a": _f32(1, 2)}
    assert f(p, 2).dtype == np.float32 and f(p, 2).dtype == np.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert f(p, 2).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert f(p, 2).dtype == np.float32
    with jax.disable_jit():
        assert type(f(p, 2)) is Array
    with jax.checking_leaks():
        np.testing.assert_array_equal(f(p, 2), [6, 6])


def test_partitioned_programs_have_a_fast_path_for_arrays_laid_out_as_they_read():
    with jax.config.override("jax_num_cpu_devices", 4):
        mesh = jax.sharding.Mesh(np.array(jax.devices()), ("i",))
        rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("i"))
        whole = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
        f = jax.jit(lambda a: a * 2 + 1)
        x = jax.device_put(jnp.arange(8.0), rows)
        f(x)
        compiled = next(iter(f._cache.traced.values())).compiled
        run = execution.fast_call(compiled, (x.aval,), True)
        assert run is not None and _fast_calls(f) == 1
        out = run((x,))
        assert out.sharding == rows
        np.testing.assert_array_equal(out, np.arange(8.0) * 2 + 1)
        # Anything laid out otherwise is the general path's: an array on one device, or
        # replicated over the mesh (the same aval), a NumPy value.
        assert run((jnp.arange(8.0),)) is execution.MISS
        assert run((jax.device_put(jnp.arange(8.0), whole),)) is execution.MISS
        assert run((np.arange(8.0, dtype=np.float32),)) is execution.MISS
        for y in (jax.device_put(jnp.arange(8.0) + 1, whole), jnp.arange(8.0) + 1, x):
            np.testing.assert_array_equal(f(y), np.asarray(y) * 2 + 1)
        # Donated programs are not served.
        g = jax.jit(lambda a: a * 2, donate_argnums=0)
        g(jax.device_put(jnp.arange(8.0), rows))
        compiled = next(iter(g._cache.traced.values())).compiled
        assert execution.fast_call(compiled, (x.aval,), True) is None
