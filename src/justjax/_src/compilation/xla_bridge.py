"""JAX's `jax._src.xla_bridge`, as far as libraries read it: which platforms' backends are
initialized. chex's `set_n_cpu_devices` reads `_backends` and refuses to change the number
of CPU devices once the CPU backend is up, as JAX would ignore the change then.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from justjax._src.backends import get_backend
from justjax._src.runtime import devices


class _InitializedBackends(Mapping):
    """Platform name -> the backend serving it, for the platforms whose devices exist."""

    def __getitem__(self, platform: str) -> Any:
        if platform == "cpu" and devices.initialized():
            return get_backend()
        raise KeyError(platform)

    def __iter__(self) -> Iterator[str]:
        return iter(["cpu"] if devices.initialized() else [])

    def __len__(self) -> int:
        return int(devices.initialized())


_backends = _InitializedBackends()


def backends_are_initialized() -> bool:
    return devices.initialized()
