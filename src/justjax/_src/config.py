"""Run-time configuration, as `jax.config`.

Flags are read through `config.<name>` or `config.read(name)` and set with
`config.update(name, value)`. Environment variables are read once, here, when
the flag is defined, never elsewhere: `JAX_<NAME>` as in JAX (`JAX_ENABLE_X64=1`), and
`JUSTJAX_<NAME>`, which wins when both are set.
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


_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")


def _parse_bool(text: str) -> bool:
    """A boolean environment value, as JAX's `bool_env` reads it."""
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"invalid truth value {text!r}")


def env_names(name: str) -> tuple[str, str]:
    """The environment variables of flag `name`, the winning one first:
    `jax_enable_x64` -> (`JUSTJAX_ENABLE_X64`, `JAX_ENABLE_X64`)."""
    upper = name.upper()
    return "JUSTJAX_" + upper.removeprefix("JAX_"), upper


class Config:
    """The process-wide flag store (`justjax.config`)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_listeners", [])

    def define(self, name: str, default: Any, help: str, *, affects_tracing: bool = False,
               parse: Callable[[str], Any] = str) -> None:
        """Defines flag `name`; its value comes from the environment if set there."""
        flag = Flag(name, default, help, affects_tracing, parse)
        self._flags[name] = flag
        self._values[name] = default
        for variable in env_names(name):
            text = os.environ.get(variable)
            if text is not None:
                try:
                    self._values[name] = parse(text)
                except ValueError as e:
                    raise ValueError(f"{e} for environment {variable!r}") from None
                break
        object.__setattr__(self, "_trace_context", None)

    def update(self, name: str, value: Any) -> None:
        """Sets flag `name` to `value` (as `jax.config.update`)."""
        if name not in self._flags:
            raise AttributeError(f"Unrecognized config option: {name}")
        self._values[name] = value
        object.__setattr__(self, "_trace_context", None)
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
        """The values of every flag that changes what tracing produces (a jit cache key part).
        Memoized until a flag changes: every jit call reads it."""
        context = self.__dict__.get("_trace_context")
        if context is None:
            context = tuple(self._values[f.name] for f in self._flags.values()
                            if f.affects_tracing)
            object.__setattr__(self, "_trace_context", context)
        return context

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
config.define("jax_default_prng_impl", "threefry2x32", "The PRNG implementation of new keys.",
              affects_tracing=True)
config.define("jax_legacy_prng_key", "allow", "Raw uint32 keys given to jax.random functions: "
              "allow, warn or error.", affects_tracing=True)
config.define("jax_high_dynamic_range_gumbel", False, "Gumbel noise from two uniforms (mode "
              "'high') by default, for low-probability events.", affects_tracing=True,
              parse=_parse_bool)
config.define("justjax_verify_passes", False, "Verify the IR after every optimization pass "
              "(environment JUSTJAX_VERIFY_PASSES=1).", parse=_parse_bool)
config.define("justjax_dump_ir_to", None, "A folder to write the IR to after every "
              "optimization pass.")
config.define("justjax_disable_passes", "", "Comma-separated names of optimization passes "
              "not to run.")
config.define("jax_numpy_rank_promotion", "allow", "Rank promotion in jax.numpy: allow, warn or raise.",
              affects_tracing=True)
config.define("jax_numpy_dtype_promotion", "standard", "Dtype promotion: standard or strict.",
              affects_tracing=True)
config.define("jax_default_matmul_precision", None, "Default precision of matmuls.",
              affects_tracing=True)
# The mesh contexts (`jax.set_mesh`, `jax.sharding.use_abstract_mesh`, the deprecated
# `with mesh:`): values of `runtime/mesh.py`'s classes, None when unset. They change what
# tracing produces (a bare PartitionSpec is read against them), so they key the jit caches;
# unlike JAX's they are process-wide, not per thread.
config.define("justjax_abstract_mesh", None, "The abstract mesh in context; set by "
              "jax.set_mesh and jax.sharding.use_abstract_mesh.", affects_tracing=True)
config.define("justjax_concrete_mesh", None, "The mesh in context; set by jax.set_mesh.",
              affects_tracing=True)
config.define("justjax_resource_mesh", None, "The mesh of the deprecated `with mesh:` "
              "context.", affects_tracing=True)
config.define("jax_num_cpu_devices", -1, "Number of virtual CPU devices; -1 takes "
              "XLA_FLAGS=--xla_force_host_platform_device_count=N, else 1.", parse=int)
config.define("jax_disable_jit", False, "Run jitted functions eagerly.", parse=_parse_bool)
config.define("jax_softmax_custom_jvp", False, "jax.nn.softmax differentiates through a "
              "custom JVP (the max subtracted for stability cancels exactly) instead of "
              "stopping the max's gradient.", parse=_parse_bool, affects_tracing=True)
config.define("jax_debug_nans", False, "Raise on NaN results.", parse=_parse_bool)
config.define("jax_debug_infs", False, "Raise on Inf results.", parse=_parse_bool)
# It changes how an unfunctionalized `checkify.check` lowers, so it keys the jit caches.
config.define("jax_experimental_unsafe_xla_runtime_errors", False, "Lower a checkify.check "
              "that was not functionalized to a host callback raising when it fails, instead "
              "of refusing to lower it.", affects_tracing=True, parse=_parse_bool)
config.define("jax_log_compiles", False, "Log each trace and compilation of a jitted function.",
              parse=_parse_bool)
config.define("jax_explain_cache_misses", False, "Log why a jitted function is traced again.",
              parse=_parse_bool)
# It keys the jit caches (`affects_tracing`): a program compiled by one backend is not
# handed out when another is selected.
config.define("jax_traceback_filtering", "auto", "Hide the frames of JAX's (and libraries' "
              "registered) files in tracebacks: off, auto, tracebackhide, remove_frames, ...")
config.define("jax_platforms", None, "Comma-separated platforms to use, in order of "
              "preference; None or '' picks the available one (cpu).", affects_tracing=True)
config.define("jax_compilation_cache_dir", None, "Folder of the persistent compilation cache "
              "(native object code); None: no cache. compilation_cache.set_cache_dir() sets it.")
config.define("jax_enable_compilation_cache", True, "False turns the persistent compilation "
              "cache off even when its folder is set.", parse=_parse_bool)
config.define("jax_persistent_cache_min_compile_time_secs", 1.0, "The minimum compile time "
              "of a program written to the persistent compilation cache.", parse=float)
config.define("jax_persistent_cache_min_entry_size_bytes", 0, "The minimum size (in bytes) "
              "of an entry written to the persistent compilation cache.", parse=int)
config.define("jax_raise_persistent_cache_errors", False, "Raise errors reading or writing "
              "the persistent compilation cache instead of warning.", parse=_parse_bool)


def check_platforms() -> str:
    """Checks `jax_platforms` before a backend is used and returns the backend to use:
    `cpu` (the native backend) or `reference` (justjax's NumPy interpreter, for checking).
    Any other platform asked for raises JAX's RuntimeError, as JAX does when it cannot
    initialize a backend."""
    requested = config.read("jax_platforms") or ""
    chosen = None
    for platform in (p.strip() for p in requested.split(",")):
        if platform in ("cpu", "reference"):
            chosen = chosen or platform
        elif platform:
            raise RuntimeError(
                f"Unable to initialize backend '{platform}': Backend '{platform}' is not in "
                "the list of known backends: ['cpu']. (set JAX_PLATFORMS='' to automatically "
                "choose an available backend)")
    return chosen or "cpu"


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Runs jitted functions as plain Python functions in the body (`jax.disable_jit`),
    so their values can be printed and inspected."""
    with config.override("jax_disable_jit", disable):
        yield


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Turns 64-bit types on (or off) for the body (`jax.experimental.enable_x64`)."""
    with config.override("jax_enable_x64", new_val):
        yield


@contextlib.contextmanager
def disable_x64() -> Iterator[None]:
    """Turns 64-bit types off for the body (`jax.experimental.disable_x64`)."""
    with config.override("jax_enable_x64", False):
        yield
