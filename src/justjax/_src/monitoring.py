"""Instrumentation events (`jax.monitoring`): named events, durations, time spans and scalars
delivered to registered listeners.

justjax records the events JAX records where it does the same work: the duration of tracing
a function for jit (`/jax/core/compile/jaxpr_trace_duration`), of lowering its jaxpr
(`jaxpr_to_mlir_module_duration`) and of compiling the module (`backend_compile_duration`),
each with its start time as a scalar and its time span, and the persistent compilation
cache's requests, hits and misses (`/jax/compilation_cache/...`). Clients record their own
(flax: `/jax/flax/checkpoint/save`).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Protocol

from justjax._src.config import config

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class EventListenerWithMetadata(Protocol):
    def __call__(self, event: str, **kwargs: str | int) -> None: ...


class EventDurationListenerWithMetadata(Protocol):
    def __call__(self, event: str, duration_secs: float, **kwargs: str | int) -> None: ...


class EventTimeSpanListenerWithMetadata(Protocol):
    def __call__(self, event: str, start_time: float, end_time: float,
                 **kwargs: str | int) -> None: ...


class ScalarListenerWithMetadata(Protocol):
    def __call__(self, event: str, value: float | int, **kwargs: str | int) -> None: ...


_event_listeners: list[EventListenerWithMetadata] = []
_event_duration_secs_listeners: list[EventDurationListenerWithMetadata] = []
_event_time_span_listeners: list[EventTimeSpanListenerWithMetadata] = []
_scalar_listeners: list[ScalarListenerWithMetadata] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Records that `event` happened: calls every event listener with it and `kwargs`."""
    for listener in list(_event_listeners):
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Records that `event` took `duration` seconds."""
    for listener in list(_event_duration_secs_listeners):
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Records that `event` ran from `start_time` to `end_time` (seconds since the epoch)."""
    for listener in list(_event_time_span_listeners):
        listener(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Records a scalar value of `event`."""
    for listener in list(_scalar_listeners):
        listener(event, value, **kwargs)


def register_event_listener(callback: EventListenerWithMetadata) -> None:
    """Calls `callback(event, **kwargs)` at every `record_event`."""
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Calls `callback(event, duration, **kwargs)` at every `record_event_duration_secs`."""
    _event_duration_secs_listeners.append(callback)


def register_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Calls `callback(event, start, end, **kwargs)` at every `record_event_time_span`."""
    _event_time_span_listeners.append(callback)


def register_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Calls `callback(event, value, **kwargs)` at every `record_scalar`."""
    _scalar_listeners.append(callback)


def get_event_listeners() -> list[EventListenerWithMetadata]:
    return list(_event_listeners)


def get_event_duration_listeners() -> list[EventDurationListenerWithMetadata]:
    return list(_event_duration_secs_listeners)


def get_event_time_span_listeners() -> list[EventTimeSpanListenerWithMetadata]:
    return list(_event_time_span_listeners)


def get_scalar_listeners() -> list[ScalarListenerWithMetadata]:
    return list(_scalar_listeners)


def _unregister(listeners: list[Any], callback: Callable[..., None]) -> None:
    # JAX asserts the callback is registered.
    assert callback in listeners
    listeners.remove(callback)


def unregister_event_listener(callback: EventListenerWithMetadata) -> None:
    """Stops calling `callback` at `record_event`."""
    _unregister(_event_listeners, callback)


def unregister_event_duration_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Stops calling `callback` at `record_event_duration_secs`."""
    _unregister(_event_duration_secs_listeners, callback)


def unregister_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Stops calling `callback` at `record_event_time_span`."""
    _unregister(_event_time_span_listeners, callback)


def unregister_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Stops calling `callback` at `record_scalar`."""
    _unregister(_scalar_listeners, callback)


def clear_event_listeners() -> None:
    """Unregisters every listener of every kind."""
    for listeners in (_event_listeners, _event_duration_secs_listeners,
                      _event_time_span_listeners, _scalar_listeners):
        listeners.clear()


class log_elapsed_time:  # noqa: N801 (a context manager, named as JAX's)
    """Times a `with` body: logs `fmt` (with `fun_name` and `elapsed_time`) on `logger`, at
    WARNING under `jax_log_compiles` and DEBUG otherwise, and records `event` (if given):
    its start time as a scalar, then its duration and time span."""

    __slots__ = ("fmt", "fun_name", "event", "logger", "start_time")

    def __init__(self, fmt: str, fun_name: str, event: str | None = None,
                 logger: logging.Logger | None = None) -> None:
        self.fmt = fmt
        self.fun_name = fun_name
        self.event = event
        self.logger = logger or _dispatch_logger

    def __enter__(self) -> log_elapsed_time:
        self.start_time = time.time()
        if self.event is not None:
            record_scalar(self.event, self.start_time, fun_name=self.fun_name)
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is not None:
            return
        end_time = time.time()
        elapsed = end_time - self.start_time
        log_compile_event(self.logger, self.fmt.format(fun_name=self.fun_name,
                                                       elapsed_time=elapsed))
        if self.event is not None:
            record_event_duration_secs(self.event, elapsed, fun_name=self.fun_name)
            record_event_time_span(self.event, self.start_time, end_time,
                                   fun_name=self.fun_name)


# JAX's loggers for these messages, so handlers on `jax` (optax's tests) see them.
_dispatch_logger = logging.getLogger("jax._src.dispatch")


def log_compile_event(logger: logging.Logger, message: str, *args: Any) -> None:
    """Logs a tracing or compilation message: a warning under `jax_log_compiles`, else
    debug."""
    level = logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG
    if logger.isEnabledFor(level):
        logger.log(level, message, *args)
