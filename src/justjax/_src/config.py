"""Run-time configuration, as `jax.config`.

Flags are read through `config.<name>` or `config.read(name)` and set with
`config.update(name, value)`. Environment variables are read once, here, when
the flag is defined, never elsewhere.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator


@dataclass(frozen=True)
class Flag:
    name: str
    default: Any
    help: str
    affects_tracing: bool
    parse: Callable[[str], Any]


def _parse_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


class Config:
    """The process-wide flag store (`justjax.config`)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_listeners", [])

    def define(self, name: str, default: Any, help: str, *, affects_tracing: bool = False,
               parse: Callable[[str], Any] = str) -> None:
        flag = Flag(name, default, help, affects_tracing, parse)
        self._flags[name] = flag
        env = os.environ.get(name.upper())
        self._values[name] = parse(env) if env is not None else default

    def update(self, name: str, value: Any) -> None:
        """Sets flag `name` to `value` (as `jax.config.update`)."""
        if name not in self._flags:
            raise AttributeError(f"Unrecognized config option: {name}")
        self._values[name] = value
        for listener in self._listeners:
            listener(name, value)

    def read(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value) to change a flag")

    def on_update(self, listener: Callable[[str, Any], None]) -> None:
        """Calls `listener(name, value)` after every update (caches use this)."""
        self._listeners.append(listener)

    def trace_context(self) -> tuple:
        """The values of every flag that changes what tracing produces (a jit cache key part)."""
        return tuple(self._values[f.name] for f in self._flags.values() if f.affects_tracing)

    @contextlib.contextmanager
    def override(self, name: str, value: Any) -> Iterator[None]:
        old = self.read(name)
        self.update(name, value)
        try:
            yield
        finally:
            self.update(name, old)

    @property
    def values(self) -> dict[str, Any]:
        return dict(self._values)


config = Config()
config.define("jax_enable_x64", False, "Enable 64-bit types (float64, int64, complex128).",
              affects_tracing=True, parse=_parse_bool)
config.define("jax_threefry_partitionable", True, "Partitionable threefry PRNG (JAX's default).",
              affects_tracing=True, parse=_parse_bool)
config.define("jax_numpy_rank_promotion", "allow", "Rank promotion in jax.numpy: allow, warn or raise.",
              affects_tracing=True)
config.define("jax_numpy_dtype_promotion", "standard", "Dtype promotion: standard or strict.",
              affects_tracing=True)
config.define("jax_default_matmul_precision", None, "Default precision of matmuls.",
              affects_tracing=True)
config.define("jax_num_cpu_devices", 1, "Number of virtual CPU devices.", parse=int)
config.define("jax_disable_jit", False, "Run jitted functions eagerly.", parse=_parse_bool)
config.define("jax_debug_nans", False, "Raise on NaN results.", parse=_parse_bool)
config.define("jax_log_compiles", False, "Log each trace and compilation of a jitted function.",
              parse=_parse_bool)
config.define("jax_explain_cache_misses", False, "Log why a jitted function is traced again.",
              parse=_parse_bool)
config.define("jax_platforms", "cpu", "Platforms to use.")


def enable_x64() -> bool:
    return config.read("jax_enable_x64")
