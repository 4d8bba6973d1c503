"""Virtual CPU devices."""
from __future__ import annotations

import functools

from justjax._src.config import check_platforms, config


class Device:
    """One CPU device: `CpuDevice(id=0)`."""

    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id: int) -> None:
        self.id = id
        self.process_index = 0
        self.host_id = 0

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    def __str__(self) -> str:
        return f"TFRT_CPU_{self.id}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("cpu", self.id))


@functools.lru_cache(maxsize=None)
def _devices(count: int) -> tuple[Device, ...]:
    return tuple(Device(i) for i in range(count))


def devices(backend: str | None = None) -> list[Device]:
    """All devices (`jax.devices()`)."""
    check_platforms()
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend}; only 'cpu' is available")
    return list(_devices(int(config.read("jax_num_cpu_devices"))))


def default_device() -> Device:
    return devices()[0]
