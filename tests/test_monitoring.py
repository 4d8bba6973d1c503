"""`jax.monitoring`: the listener registry and the events justjax records, named as JAX's.

The events of a first jit call (and of an eager operation, and of make_jaxpr) were recorded
from JAX 0.10.2 with the same listeners; JAX's compilation-cache events depend on its
persistent cache and are checked separately against justjax's cache.
"""
from __future__ import annotations

import logging
from typing import Iterator

import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import monitoring

TRACE = "/jax/core/compile/jaxpr_trace_duration"
LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE = "/jax/core/compile/backend_compile_duration"


@pytest.fixture
def events() -> Iterator[list]:
    seen: list = []
    listeners = [
        (monitoring.register_event_listener, monitoring.unregister_event_listener,
         lambda e, **kw: seen.append(("event", e, kw))),
        (monitoring.register_event_duration_secs_listener,
         monitoring.unregister_event_duration_listener,
         lambda e, d, **kw: seen.append(("dur", e, kw))),
        (monitoring.register_event_time_span_listener,
         monitoring.unregister_event_time_span_listener,
         lambda e, s, t, **kw: seen.append(("span", e, kw))),
        (monitoring.register_scalar_listener, monitoring.unregister_scalar_listener,
         lambda e, v, **kw: seen.append(("scalar", e, kw))),
    ]
    for register, _, listener in listeners:
        register(listener)
    yield seen
    for _, unregister, listener in listeners:
        unregister(listener)


def _phase(event: str, fun_name: str) -> list:
    kw = {"fun_name": fun_name}
    return [("scalar", event, kw), ("dur", event, kw), ("span", event, kw)]


def test_public_names_are_jaxs():
    assert sorted(n for n in dir(monitoring) if not n.startswith("_")) == [
        "clear_event_listeners", "record_event", "record_event_duration_secs",
        "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
        "register_event_listener", "register_event_time_span_listener",
        "register_scalar_listener", "unregister_event_duration_listener",
        "unregister_event_listener", "unregister_event_time_span_listener",
        "unregister_scalar_listener"]


def test_record_calls_listeners_with_metadata(events):
    monitoring.record_event("/my/event", step=3)
    monitoring.record_event_duration_secs("/my/duration", 1.5, phase="a")
    monitoring.record_event_time_span("/my/span", 1.0, 2.0)
    monitoring.record_scalar("/my/scalar", 7)
    assert events == [("event", "/my/event", {"step": 3}), ("dur", "/my/duration",
                                                            {"phase": "a"}),
                      ("span", "/my/span", {}), ("scalar", "/my/scalar", {})]


def test_duration_and_scalar_values_arrive():
    got = []
    listener = lambda event, value, **kw: got.append((event, value))  # noqa: E731
    monitoring.register_event_duration_secs_listener(listener)
    monitoring.register_scalar_listener(listener)
    try:
        monitoring.record_event_duration_secs("/d", 0.25)
        monitoring.record_scalar("/s", 4)
    finally:
        monitoring.unregister_event_duration_listener(listener)
        monitoring.unregister_scalar_listener(listener)
    assert got == [("/d", 0.25), ("/s", 4)]


def test_unregistering_an_unknown_listener_fails_as_jaxs():
    with pytest.raises(AssertionError):
        monitoring.unregister_event_listener(lambda e: None)


def test_clear_event_listeners(monkeypatch):
    from justjax._src import monitoring as impl
    for name in ("_event_listeners", "_event_duration_secs_listeners",
                 "_event_time_span_listeners", "_scalar_listeners"):
        monkeypatch.setattr(impl, name, [])
    got = []
    monitoring.register_event_listener(lambda e, **kw: got.append(e))
    monitoring.register_scalar_listener(lambda e, v, **kw: got.append(e))
    monitoring.clear_event_listeners()
    monitoring.record_event("/x")
    monitoring.record_scalar("/y", 1)
    assert got == []


def test_first_jit_call_records_the_compile_phases(events):
    def f(x):
        return x * 2

    x = jnp.ones(3)
    events.clear()
    jax.jit(f)(x)
    assert events == _phase(TRACE, "f") + _phase(LOWER, "jit(f)") + _phase(COMPILE, "jit(f)")
    events.clear()
    jax.jit(f)(x)
    assert events == []


def test_eager_operation_and_make_jaxpr_events(events):
    x = jnp.ones(7)
    jax.block_until_ready(x)
    jax.clear_caches()  # another test in this process may have run these already
    durations = []
    for op in (jnp.arccosh, jax.lax.acosh):
        events.clear()
        op(x)
        durations.append([(e, kw["fun_name"]) for kind, e, kw in events if kind == "dur"])
    # Recorded from JAX 0.10.2: jnp.arccosh is a jitted function, lax.acosh a primitive.
    assert durations == [[(TRACE, "arccosh"), (LOWER, "jit(arccosh)"),
                          (COMPILE, "jit(arccosh)")],
                         [(TRACE, "acosh"), (LOWER, "jit(acosh)"), (COMPILE, "jit(acosh)")]]
    events.clear()
    jax.make_jaxpr(lambda y: y + 1)(1.0)
    assert events == _phase(TRACE, "<lambda>")


def test_persistent_cache_events(events, tmp_path):
    from justjax.experimental.compilation_cache import compilation_cache as cc
    with jax.config.override("jax_compilation_cache_dir", str(tmp_path)), \
            jax.config.override("jax_persistent_cache_min_compile_time_secs", 0.0):
        cc.reset_cache()
        events.clear()
        jax.jit(lambda y: jnp.tanh(y) * 3 - 1)(jnp.ones(5))
        first = [e for kind, e, _ in events if kind == "event"]
        jax.clear_caches()
        events.clear()
        jax.jit(lambda y: jnp.tanh(y) * 3 - 1)(jnp.ones(5))
        second = [e for kind, e, _ in events if kind in ("event", "dur")]
    cc.reset_cache()
    assert "/jax/compilation_cache/compile_requests_use_cache" in first
    assert "/jax/compilation_cache/cache_misses" in first
    assert "/jax/compilation_cache/cache_hits" in second
    assert "/jax/compilation_cache/cache_retrieval_time_sec" in second


def test_log_compiles_on_jaxs_loggers(caplog):
    # optax's tests listen on the `jax` logger for "Finished .* compilation".
    x = jax.block_until_ready(jnp.ones(2))
    with jax.log_compiles(), caplog.at_level(logging.WARNING, logger="jax"):
        jax.jit(lambda y: y - 4)(x)
    records = [(r.name, r.getMessage().split(" in ")[0]) for r in caplog.records]
    assert records == [
        ("jax._src.dispatch", "Finished tracing <lambda> for jit"),
        ("jax._src.interpreters.pxla", "Compiling jit(<lambda>) with global shapes and types "
                                       "(ShapedArray(float32[2]),). Argument mapping: "
                                       "(UnspecifiedValue,)."),
        ("jax._src.dispatch", "Finished jaxpr to MLIR module conversion jit(<lambda>)"),
        ("jax._src.dispatch", "Finished XLA compilation of jit(<lambda>)"),
    ]
