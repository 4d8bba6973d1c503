"""The backends justjax knows, by name, and the one `jax_platforms` selects.

`register_backend(name, factory, platform=...)` makes a backend known: `jax_platforms`
(`JAX_PLATFORMS`) may then name it, and `get_backend(name)` builds it with `factory()` on
first use. A platform's name (`cpu`) selects the first backend registered for it (the native
`llvm` backend). This module sits at the bottom of the layers, with `config`: the devices
(`runtime`) check `jax_platforms` against it before any backend is built.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from justjax._src.compilation import caches
from justjax._src.config import config

if TYPE_CHECKING:
    from justjax._src.backends.interface import Backend

# The platforms justjax has devices for: every backend's programs run on them.
PLATFORMS = ("cpu",)


@dataclass(frozen=True)
class _Entry:
    factory: Callable[[], Backend]
    platform: str


# Registered backends by name, in registration order.
_registered: dict[str, _Entry] = {}
# The backends built so far, by their registered names.
_used: dict[str, Backend] = {}


def register_backend(name: str, factory: Callable[[], Backend], *,
                     platform: str = "cpu") -> None:
    """Makes a backend known under `name`.

    Args:
      name: what `jax_platforms` and `get_backend` call it; registering a name again
        replaces its backend. The programs compiled so far are dropped: the compile caches
        know a backend by the name `jax_platforms` gives it, which may now mean another.
      factory: builds the backend (an `interface.Backend`), called once, on first use.
      platform: the platform of the devices its programs run on (`cpu`, the only one).
    """
    if platform not in PLATFORMS:
        raise ValueError(f"A backend's platform must be one of {list(PLATFORMS)} (the "
                         f"platforms justjax has devices for), got {platform!r}")
    if name in PLATFORMS:
        raise ValueError(f"{name!r} is a platform's name, not a backend's")
    _registered[name] = _Entry(factory, platform)
    _used.pop(name, None)
    caches.clear_all_caches()


def registered_backends() -> dict[str, str]:
    """The registered backends' names and their platforms, in registration order."""
    return {name: entry.platform for name, entry in _registered.items()}


def _backend_name(name: str) -> str | None:
    """The registered backend that `name` (a backend's or a platform's) selects."""
    if name in _registered:
        return name
    return next((n for n, e in _registered.items() if e.platform == name), None)


def check_platforms() -> str:
    """Checks `jax_platforms` before a backend is used and returns the name of the backend
    to use: the first entry's, where each entry is a registered backend (`reference`, the
    NumPy interpreter) or a platform (`cpu`: the native backend); unset or empty: `cpu`.
    Any other entry raises JAX's RuntimeError, as JAX does when it cannot initialize a
    backend."""
    requested = config.read("jax_platforms") or ""
    chosen = None
    for platform in (p.strip() for p in requested.split(",")):
        if not platform:
            continue
        if _backend_name(platform) is None:
            raise RuntimeError(
                f"Unable to initialize backend '{platform}': Backend '{platform}' is not in "
                f"the list of known backends: {list(PLATFORMS)}. (set JAX_PLATFORMS='' to "
                "automatically choose an available backend)")
        chosen = chosen or platform
    return chosen or PLATFORMS[0]


def get_backend(name: str | None = None) -> Backend:
    """The backend called `name` (a registered backend's name, or a platform's: `cpu`
    selects the native `llvm` backend). Without a name, the first of `jax_platforms`
    decides (`JAX_PLATFORMS=reference` selects the reference backend)."""
    if name is None:
        name = check_platforms()
    backend = _used.get(name)
    if backend is not None:
        return backend
    selected = _backend_name(name)
    if selected is None:
        raise RuntimeError(f"Unknown backend {name!r}")
    backend = _used.get(selected)
    if backend is None:
        backend = _used[selected] = _registered[selected].factory()
    return backend


def effects_barrier() -> None:
    """Waits until every program started so far, on every backend used, has finished, so
    its effects (and results) are complete."""
    from justjax._src.runtime import replicas
    replicas.wait_for_runs()  # SPMD runs started on the devices' threads
    for backend in list(_used.values()):
        backend.effects_barrier()
