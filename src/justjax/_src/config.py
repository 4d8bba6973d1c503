"""Run-time configuration, as `jax.config`.

Flags are read through `config.<name>` or `config.read(name)` and set with
`config.update(name, value)`, which validates the value as JAX does (JAX's ValueError for an
enum value it does not know). Each flag is also a `State`: `jax.numpy_dtype_promotion("strict")`
is a context manager (and a decorator) that overrides the flag in the current thread only,
as JAX's context managers do; `state.value` reads it.

Environment variables are read once, here, when the flag is defined, never elsewhere:
`JAX_<NAME>` as in JAX (`JAX_ENABLE_X64=1`), and `JUSTJAX_<NAME>`, which wins when both are
set.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


no_default = _NoDefault()


@dataclass(frozen=True)
class Flag:
    """One flag: `parse` reads its environment text, `validate` checks (and normalizes) a
    value given to `update` or a context manager, `context_default` is what the flag's
    context manager sets when called without a value."""

    name: str
    default: Any
    help: str
    affects_tracing: bool
    parse: Callable[[str], Any]
    validate: Callable[[Any], Any]
    context_default: Any = no_default
    # For `config_with_absl`: bool, int, float, str or 'enum' (and its values).
    kind: Any = str
    enum_values: tuple[str, ...] = ()


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


def _any_value(value: Any) -> Any:
    return value


def _as_bool(value: Any) -> bool:
    # JAX's boolean flags store `bool(value)`: update('jax_enable_x64', 1) gives True.
    return bool(value)


def _typed(kind: type, label: str, period: str = "") -> Callable[[Any], Any]:
    """A validator accepting None or values of `kind`, with JAX's message otherwise."""
    accepted = (int, float) if kind is float else kind

    def validate(value: Any) -> Any:
        if value is not None and not isinstance(value, accepted):
            raise ValueError(f"new {label} config value must be None or of type "
                             f"{kind.__name__}, got {value} of type {type(value)}{period}")
        return value

    return validate


def _enum(values: Sequence[str], *, optional: bool = False, enum_class: str | None = None
          ) -> Callable[[Any], Any]:
    """A validator accepting one of `values` (or None if `optional`), with JAX's message:
    enum flags list the values; flags JAX keeps as an enum class name the class."""
    allowed = list(values)

    def validate(value: Any) -> Any:
        if value is None and optional:
            return None
        if isinstance(value, str) and value in allowed:
            return value
        if enum_class is not None:
            raise ValueError(f"{value!r} is not a valid {enum_class}")
        none = "None or " if optional else ""
        raise ValueError(f"new enum value must be {none}in {allowed}, got {value} of type "
                         f"{type(value)}.")

    return validate


def _only_false(name: str) -> Callable[[Any], bool]:
    """A boolean flag whose True asks for a check justjax does not make: refused."""
    def validate(value: Any) -> bool:
        if value:
            raise ValueError(f"{name}=True is not supported: justjax does not implement this "
                             "check")
        return False

    return validate


def env_names(name: str) -> tuple[str, str]:
    """The environment variables of flag `name`, the winning one first:
    `jax_enable_x64` -> (`JUSTJAX_ENABLE_X64`, `JAX_ENABLE_X64`)."""
    upper = name.upper()
    return "JUSTJAX_" + upper.removeprefix("JAX_"), upper


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


unset = _Unset()


class _LocalState(threading.local):
    """A thread's overrides (flag name -> value) and its memoized trace context."""

    def __init__(self) -> None:
        self.overrides: dict[str, Any] = {}
        self.trace_context: tuple | None = None
        self.generation = -1


class Config:
    """The process-wide flag store (`justjax.config`)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_listeners", [])
        object.__setattr__(self, "_states", {})
        object.__setattr__(self, "_local", _LocalState())
        object.__setattr__(self, "_lock", threading.Lock())
        # How many thread-local overrides are live in all threads: reads skip the
        # thread-local lookup while it is 0 (nearly always).
        object.__setattr__(self, "_local_count", 0)
        object.__setattr__(self, "_generation", 0)
        object.__setattr__(self, "_trace_context", None)
        object.__setattr__(self, "use_absl", False)

    # -- definitions ---------------------------------------------------------------------------
    def define(self, name: str, default: Any, help: str, *, affects_tracing: bool = False,
               parse: Callable[[str], Any] = str, validate: Callable[[Any], Any] = _any_value,
               context_default: Any = no_default, kind: Any = str,
               enum_values: Sequence[str] = ()) -> State:
        """Defines flag `name`; its value comes from the environment if set there.

        Returns:
          The flag's `State` (its context manager and `.value`).
        """
        if name in self._flags:
            raise Exception(f"Config option {name} already defined")
        flag = Flag(name, default, help, affects_tracing, parse, validate, context_default,
                    kind, tuple(enum_values))
        self._flags[name] = flag
        self._values[name] = default
        for variable in env_names(name):
            text = os.environ.get(variable)
            if text is not None:
                self._values[name] = _from_environment(flag, variable, text)
                break
        self._changed()
        state = State(self, flag)
        self._states[name] = state
        return state

    def _changed(self) -> None:
        object.__setattr__(self, "_trace_context", None)
        object.__setattr__(self, "_generation", self._generation + 1)

    # -- reading and writing -----------------------------------------------------------------
    def update(self, name: str, value: Any) -> None:
        """Sets flag `name` to `value` for every thread (as `jax.config.update`).

        Raises:
          AttributeError: no such flag ("Unrecognized config option").
          ValueError: a value the flag does not take (JAX's messages).
        """
        flag = self._flag(name)
        value = flag.validate(value)
        self._values[name] = value
        self._changed()
        for listener in self._listeners:
            listener(name, value)

    def _flag(self, name: str) -> Flag:
        try:
            return self._flags[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def read(self, name: str) -> Any:
        """The value of flag `name` in this thread (its context-manager override, if any)."""
        if self._local_count:
            overrides = self._local.overrides
            if name in overrides:
                return overrides[name]
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    _read = read

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value) to change a flag")

    @property
    def values(self) -> dict[str, Any]:
        """Every flag's value as this thread sees it."""
        return {name: self.read(name) for name in self._flags}

    def on_update(self, listener: Callable[[str, Any], None]) -> None:
        """Calls `listener(name, value)` after every global update."""
        self._listeners.append(listener)

    # -- thread-local overrides (the States' context managers) ----------------------------------
    def _swap_local(self, name: str, value: Any) -> Any:
        """Overrides `name` in this thread; returns the previous override (or `unset`)."""
        local = self._local
        previous = local.overrides.get(name, unset)
        self._set_local(name, value)
        return previous

    def _set_local(self, name: str, value: Any) -> None:
        local = self._local
        had = name in local.overrides
        if value is unset:
            local.overrides.pop(name, None)
        else:
            local.overrides[name] = value
        delta = (value is not unset) - had
        if delta:
            with self._lock:
                object.__setattr__(self, "_local_count", self._local_count + delta)
        local.trace_context = None

    def local_overrides(self) -> dict[str, Any]:
        """This thread's overrides, to carry into a worker thread (`in_overrides`)."""
        return dict(self._local.overrides) if self._local_count else {}

    @contextlib.contextmanager
    def in_overrides(self, overrides: dict[str, Any]) -> Iterator[None]:
        """Runs the body with `overrides` (from `local_overrides` in another thread) as this
        thread's own: work handed to a device thread sees the caller's context managers."""
        previous = {name: self._swap_local(name, value) for name, value in overrides.items()}
        try:
            yield
        finally:
            for name, value in previous.items():
                self._set_local(name, value)

    def trace_context(self) -> tuple:
        """The values of every flag that changes what tracing produces (a jit cache key part).
        Memoized until a flag changes: every jit call reads it."""
        if self._local_count and self._local.overrides:
            local = self._local
            if local.trace_context is None or local.generation != self._generation:
                local.trace_context = self._compute_trace_context()
                local.generation = self._generation
            return local.trace_context
        context = self._trace_context
        if context is None:
            context = self._compute_trace_context()
            object.__setattr__(self, "_trace_context", context)
        return context

    def _compute_trace_context(self) -> tuple:
        return tuple(self.read(f.name) for f in self._flags.values() if f.affects_tracing)

    @contextlib.contextmanager
    def override(self, name: str, value: Any) -> Iterator[None]:
        """Sets flag `name` for every thread for the body of the `with` (justjax's own)."""
        old = self._values[self._flag(name).name]
        self.update(name, value)
        try:
            yield
        finally:
            self.update(name, old)

    # -- absl ------------------------------------------------------------------------------
    def config_with_absl(self) -> None:
        """Defines an absl flag for every flag (`--jax_enable_x64` ...); once absl has
        parsed the command line, the flags given there are applied (as JAX's
        `config_with_absl`, for programs run with `absl.app.run`)."""
        from absl import app, flags as absl_flags
        object.__setattr__(self, "use_absl", True)
        _define_absl_flags(self, absl_flags)
        app.call_after_init(lambda: self.complete_absl_config(absl_flags))

    def complete_absl_config(self, absl_flags: Any) -> None:
        """Applies the flags absl parsed from the command line."""
        for name in self._flags:
            try:
                flag = absl_flags.FLAGS[name]
            except KeyError:
                continue
            if flag.present:
                self.update(name, flag.value)

    def parse_flags_with_absl(self) -> None:
        """Parses the command line's `--jax...` arguments (those before a `--`) with absl
        and applies them, once per process (`jax.config.parse_flags_with_absl`)."""
        global _configured_with_absl
        if _configured_with_absl:
            return
        argv = itertools.takewhile(lambda a: a != "--", sys.argv)
        jax_argv = ["", *(a for a in argv if a.startswith("--jax"))]
        import absl.flags
        self.config_with_absl()
        absl.flags.FLAGS(jax_argv, known_only=True)
        self.complete_absl_config(absl.flags)
        _configured_with_absl = True


_configured_with_absl = False


def _define_absl_flags(config: Config, absl_flags: Any) -> None:
    definers = {bool: absl_flags.DEFINE_bool, int: absl_flags.DEFINE_integer,
                float: absl_flags.DEFINE_float, str: absl_flags.DEFINE_string}
    for name, flag in config._flags.items():
        if name in absl_flags.FLAGS:
            continue
        value = config._values[name]
        if flag.kind == "enum":
            absl_flags.DEFINE_enum(name, value, list(flag.enum_values), flag.help)
        else:
            definers[flag.kind](name, value, flag.help)


def _from_environment(flag: Flag, variable: str, text: str) -> Any:
    try:
        value = flag.parse(text)
    except ValueError as e:
        raise ValueError(f"{e} for environment {variable!r}") from None
    try:
        return flag.validate(value)
    except ValueError:
        raise ValueError(f'Invalid value "{text}" for JAX flag {flag.name}') from None


class State:
    """A flag as a context manager (`with jax.numpy_dtype_promotion("strict"): ...`) and a
    decorator; `.value` reads the flag. The override holds in the current thread only."""

    def __init__(self, config: Config, flag: Flag) -> None:
        self._config = config
        self._flag = flag
        self.__name__ = flag.name.removeprefix("jax_")
        self.__doc__ = f"Context manager for `{flag.name}` config option.\n\n{flag.help}"

    @property
    def name(self) -> str:
        return self._flag.name

    @property
    def value(self) -> Any:
        return self._config.read(self._flag.name)

    def __bool__(self) -> bool:
        raise TypeError("bool() not supported for instances of type 'State' (did you mean to "
                        "use 'State.value' instead?)")

    def get_global(self) -> Any:
        return self._config._values[self._flag.name]

    def set_global(self, value: Any) -> None:
        self._config.update(self._flag.name, value)

    def get_local(self) -> Any:
        return self._config._local.overrides.get(self._flag.name, unset)

    def set_local(self, value: Any) -> None:
        self._config._set_local(self._flag.name, value)

    def swap_local(self, value: Any) -> Any:
        return self._config._swap_local(self._flag.name, value)

    def __call__(self, new_val: Any = no_default) -> StateContextManager:
        return StateContextManager(self, new_val)


class StateContextManager:
    """Overrides one flag in this thread for a `with` body (or a decorated function)."""

    __slots__ = ("state", "new_val", "prev")

    def __init__(self, state: State, new_val: Any) -> None:
        self.state = state
        flag = state._flag
        if new_val is no_default:
            if flag.context_default is no_default:
                raise TypeError(f"Context manager for {state.__name__} config option requires "
                                "an argument representing the new value for the config "
                                "option.")
            new_val = flag.context_default
        self.new_val = flag.validate(new_val)

    def __enter__(self) -> None:
        self.prev = self.state.swap_local(self.new_val)

    def __exit__(self, *exc: Any) -> None:
        self.state.set_local(self.prev)

    def __call__(self, fun: Callable) -> Callable:
        @functools.wraps(fun)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with StateContextManager(self.state, self.new_val):
                return fun(*args, **kwargs)
        return wrapper


config = Config()


def bool_flag(name: str, default: bool, help: str, *, affects_tracing: bool = False) -> State:
    """Defines a boolean flag; its context manager sets True when called without a value."""
    return config.define(name, default, help, affects_tracing=affects_tracing,
                         parse=_parse_bool, validate=_as_bool, context_default=True, kind=bool)


def enum_flag(name: str, default: str | None, values: Sequence[str], help: str, *,
              affects_tracing: bool = False, optional: bool = False,
              enum_class: str | None = None) -> State:
    """Defines a flag taking one of `values` (JAX's `enum_state` / `enum_class_state`)."""
    return config.define(name, default, help, affects_tracing=affects_tracing,
                         validate=_enum(values, optional=optional, enum_class=enum_class),
                         kind="enum", enum_values=values)


def typed_flag(name: str, default: Any, kind: type, help: str, *,
               affects_tracing: bool = False) -> State:
    """Defines an int, float or string flag (None allowed, as in JAX)."""
    label = {int: "int", float: "float", str: "string"}[kind]
    period = "." if kind is str else ""
    return config.define(name, default, help, affects_tracing=affects_tracing,
                         parse=kind, validate=_typed(kind, label, period), kind=kind)


# The PRNG implementations and matmul precisions JAX 0.10.2 names.
PRNG_IMPL_NAMES = ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32",
                   "philox4x32")
MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")
TRACEBACK_FILTERING_MODES = ("off", "tracebackhide", "remove_frames", "quiet_remove_frames",
                             "auto")

enable_x64 = bool_flag("jax_enable_x64", False, "Enable 64-bit types (float64, int64, "
                       "complex128).", affects_tracing=True)
threefry_partitionable = bool_flag("jax_threefry_partitionable", True, "Partitionable "
                                   "threefry PRNG (JAX's default).", affects_tracing=True)
default_prng_impl = enum_flag("jax_default_prng_impl", "threefry2x32", PRNG_IMPL_NAMES,
                              "The PRNG implementation of new keys.", affects_tracing=True)
legacy_prng_key = enum_flag("jax_legacy_prng_key", "allow", ("allow", "warn", "error"),
                            "Raw uint32 keys given to jax.random functions: allow, warn or "
                            "error.", affects_tracing=True, enum_class="LegacyPrngKeyState")
high_dynamic_range_gumbel = bool_flag(
    "jax_high_dynamic_range_gumbel", False, "Gumbel noise from two uniforms (mode 'high') by "
    "default, for low-probability events.", affects_tracing=True)
config.define("justjax_verify_passes", False, "Verify the IR after every optimization pass "
              "(environment JUSTJAX_VERIFY_PASSES=1).", parse=_parse_bool, validate=_as_bool,
              kind=bool)
typed_flag("justjax_dump_ir_to", None, str, "A folder to write the IR to after every "
           "optimization pass.")
typed_flag("justjax_disable_passes", "", str, "Comma-separated names of optimization passes "
           "not to run.")
numpy_rank_promotion = enum_flag("jax_numpy_rank_promotion", "allow", ("allow", "warn", "raise"),
                                 "Rank promotion in jax.numpy: allow, warn or raise.",
                                 affects_tracing=True)
numpy_dtype_promotion = enum_flag("jax_numpy_dtype_promotion", "standard",
                                  ("standard", "strict"), "Dtype promotion: standard (JAX's "
                                  "lattice) or strict (only weak types promote implicitly).",
                                  affects_tracing=True, enum_class="NumpyDtypePromotion")
default_matmul_precision = enum_flag("jax_default_matmul_precision", None, MATMUL_PRECISIONS,
                                     "Default precision of matmuls.", affects_tracing=True,
                                     optional=True)
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
typed_flag("jax_num_cpu_devices", -1, int, "Number of virtual CPU devices; -1 (or None) "
           "takes XLA_FLAGS=--xla_force_host_platform_device_count=N, else 1.")
# justjax's own: how long a collective between processes (`runtime/processes.py`) waits for
# the others before it raises.
typed_flag("justjax_collective_timeout", 300.0, float, "Seconds a collective between "
           "processes waits for the others (a process that failed, exited, or runs another "
           "program) before it raises.")
config.define("jax_disable_jit", False, "Run jitted functions eagerly.", parse=_parse_bool,
              validate=_as_bool, context_default=True, kind=bool)
bool_flag("jax_softmax_custom_jvp", False, "jax.nn.softmax differentiates through a "
          "custom JVP (the max subtracted for stability cancels exactly) instead of stopping "
          "the max's gradient.", affects_tracing=True)
debug_nans = bool_flag("jax_debug_nans", False, "Raise on NaN results.")
debug_infs = bool_flag("jax_debug_infs", False, "Raise on Inf results.")
# It changes how an unfunctionalized `checkify.check` lowers, so it keys the jit caches.
bool_flag("jax_experimental_unsafe_xla_runtime_errors", False, "Lower a checkify.check that "
          "was not functionalized to a host callback raising when it fails, instead of "
          "refusing to lower it.", affects_tracing=True)
log_compiles = bool_flag("jax_log_compiles", False, "Log each trace and compilation of a "
                         "jitted function.")
explain_cache_misses = bool_flag("jax_explain_cache_misses", False, "Log why a jitted function "
                                 "is traced again.")
enum_flag("jax_traceback_filtering", "auto", TRACEBACK_FILTERING_MODES, "Hide the frames of "
          "JAX's (and libraries' registered) files in tracebacks: off, auto, tracebackhide, "
          "remove_frames, quiet_remove_frames.")
# It keys the jit caches (`affects_tracing`): a program compiled by one backend is not
# handed out when another is selected.
typed_flag("jax_platforms", None, str, "Comma-separated platforms to use, in order of "
           "preference: a platform (cpu) or a registered backend (llvm, reference: "
           "backends.register_backend); None or '' picks the available one (cpu).",
           affects_tracing=True)
typed_flag("jax_compilation_cache_dir", None, str, "Folder of the persistent compilation "
           "cache (native object code); None: no cache. compilation_cache.set_cache_dir() "
           "sets it.")
bool_flag("jax_enable_compilation_cache", True, "False turns the persistent compilation "
          "cache off even when its folder is set.")
typed_flag("jax_persistent_cache_min_compile_time_secs", 1.0, float, "The minimum compile "
           "time of a program written to the persistent compilation cache.")
typed_flag("jax_persistent_cache_min_entry_size_bytes", 0, int, "The minimum size (in "
           "bytes) of an entry written to the persistent compilation cache.")
typed_flag("jax_compilation_cache_max_size", -1, int, "The maximum size (in bytes) allowed "
           "for the persistent compilation cache. When set, the least recently accessed "
           "cache entry(s) will be deleted once the total cache directory size exceeds the "
           "specified limit. Caching will be disabled if this value is set to 0. A special "
           "value of -1 indicates no limit, allowing the cache size to grow indefinitely.")
# A runtime library compiled once per machine (the native backend's math functions) is kept
# here, keyed by the host CPU and the library's sources, as an installed runtime would be.
typed_flag("justjax_runtime_cache_dir",
           os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                        "justjax"), str,
           "Folder where the native backend keeps the runtime code it compiles once per "
           "machine (its math library); None or '': compile it in every process.")
# llvmlite leaks about 90 KB per run of LLVM's O3 pipeline (`backends/llvm/runtime/optimizer.py`).
typed_flag("justjax_llvm_optimizations_in_process", 256, int, "Runs of LLVM's O3 pipeline "
           "done in this process; later ones run in a helper process, replaced every 256 "
           "runs, which takes llvmlite's leak (about 90 KB a run) with it. -1: all in this "
           "process.")
config.define("justjax_tiered_compilation", True, "Compile large programs first with the "
              "math library linked (quick), then, once called again, fully optimized on a "
              "background thread (the same results, bit for bit); False: fully optimized "
              "at once.", parse=_parse_bool, validate=_as_bool, kind=bool)
bool_flag("jax_raise_persistent_cache_errors", False, "Raise errors reading or writing the "
          "persistent compilation cache instead of warning.")
check_tracer_leaks = bool_flag(
    "jax_check_tracer_leaks", False, "After a jit trace (jit, make_jaxpr, eval_shape) or a "
    "vmap ends, raise if a tracer of it is still referenced (gc.collect and "
    "gc.get_referrers; slow).")
# JAX's name has no `jax_` prefix. `ensure_compile_time_eval` sets it.
eager_constant_folding = bool_flag(
    "eager_constant_folding", False, "While tracing for jit, evaluate operations on concrete "
    "values at once instead of staging them.")
enable_checks = bool_flag("jax_enable_checks", False, "Type-check every jaxpr traced for "
                          "jit, make_jaxpr and eval_shape (core.check_jaxpr).")
no_tracing = bool_flag("jax_no_tracing", False, "Raise instead of tracing a function for "
                       "jit (every call must hit the cache).")
no_execution = bool_flag("jax_no_execution", False, "Raise instead of running a compiled "
                         "function.")
debug_key_reuse = config.define(
    "jax_debug_key_reuse", False, "Check PRNG key reuse: justjax has no key-reuse checker, "
    "so only False is accepted.", parse=_parse_bool,
    validate=_only_false("jax_debug_key_reuse"), context_default=True, kind=bool)
checking_leaks = functools.partial(check_tracer_leaks, True)

# -- transfer guards and the default device ----------------------------------------------------

TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_transfer_guard = enum_flag("jax_transfer_guard", None, TRANSFER_GUARD_LEVELS,
                            "Select the transfer guard level for all transfers. This option "
                            "is set-only; the transfer guard level for a specific direction "
                            "should be read using the per-transfer direction option.",
                            optional=True)
transfer_guard_host_to_device = enum_flag(
    "jax_transfer_guard_host_to_device", None, TRANSFER_GUARD_LEVELS,
    "Select the transfer guard level for host-to-device transfers.", optional=True)
transfer_guard_device_to_device = enum_flag(
    "jax_transfer_guard_device_to_device", None, TRANSFER_GUARD_LEVELS,
    "Select the transfer guard level for device-to-device transfers.", optional=True)
transfer_guard_device_to_host = enum_flag(
    "jax_transfer_guard_device_to_host", None, TRANSFER_GUARD_LEVELS,
    "Select the transfer guard level for device-to-host transfers.", optional=True)


def transfer_guard_level(direction: str) -> str:
    """The guard level of transfers `direction` ("host_to_device", ...): its own flag, else
    `jax_transfer_guard`, else "allow"."""
    level = config.read(f"jax_transfer_guard_{direction}")
    if level is None:
        level = config.read("jax_transfer_guard")
    return level or "allow"


_GUARDED_TRANSFERS = ("jax_transfer_guard", "jax_transfer_guard_host_to_device",
                      "jax_transfer_guard_device_to_device")


def transfer_guards_unset() -> bool:
    """True when no host-to-device or device-to-device guard is set anywhere: the per-call
    fast path (a thread's override makes it False, even one back to None)."""
    if config._local_count:
        overrides = config._local.overrides
        if any(name in overrides for name in _GUARDED_TRANSFERS):
            return False
    values = config._values
    return (values["jax_transfer_guard"] is None
            and values["jax_transfer_guard_host_to_device"] is None
            and values["jax_transfer_guard_device_to_device"] is None)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Sets the guard level of every transfer direction for the body (`jax.transfer_guard`):
    "allow", "log" or "disallow" every transfer, or "log_explicit"/"disallow_explicit"
    to also catch explicit ones (`device_put`)."""
    with contextlib.ExitStack() as stack:
        for state in (transfer_guard_host_to_device, transfer_guard_device_to_device,
                      transfer_guard_device_to_host, _transfer_guard):
            stack.enter_context(state(new_val))
        yield


def _default_device_value(value: Any) -> Any:
    """None, a platform name, or a device (anything with a platform and an id: config sits
    below the runtime's Device)."""
    if value is None or isinstance(value, str) or (
            hasattr(value, "platform") and hasattr(value, "id")):
        return value
    raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                     "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                     f"'gpu', got: {value}")


default_device = config.define("jax_default_device", None,
                               "Configure the default device for JAX operations. Set to a "
                               "Device object (e.g. ``jax.devices(\"cpu\")[0]``) to use that "
                               "Device as the default device for JAX operations and jit'd "
                               "function calls (there is no effect on multi-device "
                               "computations, e.g. pmapped function calls). Set to None to use "
                               "the system default device.",
                               validate=_default_device_value)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Runs jitted functions as plain Python functions in the body (`jax.disable_jit`),
    so their values can be printed and inspected. It holds in the current thread."""
    with config._states["jax_disable_jit"](disable):
        yield


@contextlib.contextmanager
def disable_x64() -> Iterator[None]:
    """Turns 64-bit types off for the body (`jax.experimental.disable_x64` of older JAX)."""
    with enable_x64(False):
        yield
