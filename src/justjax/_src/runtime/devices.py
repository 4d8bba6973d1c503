"""Virtual CPU devices."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence
import os
import re

from justjax._src.backends.registry import check_platforms, get_backend
from justjax._src.config import config


class Device:
    """One CPU device (`jax.Device`): `CpuDevice(id=0)`. In a run of several processes
    (`jax.distributed`), every process sees every process's devices; only its own
    (`process_index` its index) can hold its data and run its programs."""

    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id: int, process_index: int, local_hardware_id: int | None) -> None:
        self.id = id
        self.process_index = process_index
        self.host_id = process_index
        # The device's number among its process's devices; None seen from another
        # process (as JAX's).
        self.local_hardware_id = local_hardware_id

    def memory_stats(self) -> None:
        """Allocator statistics; CPU devices have none (None, as in JAX)."""
        return None

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    def __str__(self) -> str:
        return f"cpu:{self.id}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("cpu", self.id))


@functools.lru_cache(maxsize=None)
def _devices(count: int) -> tuple[Device, ...]:
    """Every process's devices: this process's `count` alone, or, in a run of several
    processes, each one's local devices numbered as XLA's CPU client numbers them."""
    from justjax._src.runtime import processes  # processes reads the device count
    cluster = processes.cluster()
    if cluster is None:
        return tuple(Device(i, 0, i) for i in range(count))
    return tuple(Device(p * processes.MAX_LOCAL_DEVICES + i, p,
                        i if p == cluster.index else None)
                 for p, local in enumerate(cluster.local_device_counts) for i in range(local))


_FORCE_COUNT = re.compile(r"--xla_force_host_platform_device_count=(\d+)")


def device_count() -> int:
    """The number of this process's virtual CPU devices: config `jax_num_cpu_devices` when
    set, else `--xla_force_host_platform_device_count=N` in the environment's `XLA_FLAGS`
    (as JAX reads it), else 1."""
    count = config.read("jax_num_cpu_devices")
    if count is not None and count >= 1:
        return int(count)
    flags = _FORCE_COUNT.findall(os.environ.get("XLA_FLAGS", ""))
    return int(flags[-1]) if flags else 1


def devices(backend: str | None = None) -> list[Device]:
    """All devices, every process's (`jax.devices()`)."""
    check_platforms()
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend}; only 'cpu' is available")
    return list(_devices(device_count()))


def local_devices(process_index: int | None = None, backend: str | None = None
                  ) -> list[Device]:
    """The devices of process `process_index` (default this one's: `jax.local_devices()`)."""
    if process_index is None:
        process_index = this_process()
    return [d for d in devices(backend) if d.process_index == process_index]


def this_process() -> int:
    """This process's index among the processes of the run (0 when alone)."""
    from justjax._src.runtime import processes
    cluster = processes.cluster()
    return 0 if cluster is None else cluster.index


def is_local(device: Device) -> bool:
    """Whether `device` is one of this process's."""
    return device.process_index == this_process()


def initialized() -> bool:
    """Whether any device has been made yet (JAX's "backends initialized": libraries such as
    chex refuse to change the device count after that)."""
    return _devices.cache_info().currsize > 0


_backend_started = False


def start_backend() -> None:
    """Starts the selected backend (`Backend.start`) the first time it is called: when the
    first array is put on a device, as JAX starts its backends, so that the first compile
    does not pay for it. A platform that cannot be used is reported where it is used."""
    global _backend_started
    if _backend_started:
        return
    _backend_started = True
    try:
        backend = get_backend()
    except RuntimeError:
        return
    backend.start()


def default_device() -> Device:
    return local_devices()[0]


def default_device_override() -> Device | None:
    """The device `jax.default_device` (config `jax_default_device`) names in this thread,
    or None: where uncommitted arrays made now live."""
    value = config.read("jax_default_device")
    if value is None:
        return None
    if isinstance(value, str):
        return devices(value)[0]
    return value


def eager_arg_name(index: int, count: int) -> str:
    """How JAX's messages name argument `index` of `count` of an eager op (`jnp`'s: x, y, z)."""
    return "xyz"[index] if count <= 3 else f"args[{index}]"


def committed_device(args: Sequence[Any], arg_names: Sequence[str] | None,
                     fun_name: str) -> Device | None:
    """The device a computation on `args` runs on: that of its committed arrays, or None
    (the default device, results uncommitted) when none is committed.

    Raises:
      ValueError: committed arrays on different devices (JAX's message, naming the first
        argument on each device).
    """
    found: dict[Device, int] = {}
    for i, arg in enumerate(args):
        # Arrays (and anything else with `committed`); NumPy values and scalars are not. An
        # array over a mesh (a pmap's result, a sharded array) pins no one device: what is
        # computed from it runs partitioned over its mesh (`compilation/spmd.py`).
        if getattr(arg, "committed", False) is True and isinstance(arg.device, Device):
            found.setdefault(arg.device, i)
    if len(found) <= 1:
        return next(iter(found), None)
    raise incompatible_devices(
        args, {(device.id,): i for device, i in found.items()},
        lambda i: arg_names[i] if arg_names and i < len(arg_names)
        else eager_arg_name(i, len(args)), fun_name)


def incompatible_devices(args: Sequence[Any], first: dict[tuple[int, ...], int],
                         name_of: Callable[[int], str], fun_name: str) -> ValueError:
    """JAX's error for a computation on arrays on different devices: `first` gives, per
    device assignment (device ids), the index of the first argument on it; `name_of` names
    an argument."""
    parts = []
    for ids, i in first.items():
        aval = args[i].aval
        shape = f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"
        parts.append(f"argument {name_of(i)} of {fun_name} with shape {shape} and with "
                     f"device ids [{', '.join(map(str, ids))}] on platform CPU")
    return ValueError("Received incompatible devices for jitted computation. Got "
                      + " and ".join(parts))
