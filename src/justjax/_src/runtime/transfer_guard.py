"""Transfer guards (`jax.transfer_guard`, `jax.transfer_guard_host_to_device`, ...): what
happens when data moves between the host and a device, or between devices.

Levels, per direction: "allow"; "log" / "disallow" implicit transfers (NumPy values or
Python scalars passed to a computation, `jnp.array` of host data, an uncommitted array
moved to another array's device), explicit ones (`device_put`) still allowed;
"log_explicit" / "disallow_explicit" every transfer. A disallowed transfer raises JAX's
`JaxRuntimeError` ("INVALID_ARGUMENT: Disallowed host-to-device transfer: ..."); a logged
one is a warning on the `jax` logger.

Device-to-host transfers are never guarded: on CPU, as in JAX, a device buffer is host
memory and reading it (`np.asarray`, `float`, printing) is no transfer.
"""
from __future__ import annotations

import logging
from typing import Any

from justjax._src import errors
from justjax._src.config import transfer_guard_level

_logger = logging.getLogger("jax")


def _describe(aval: Any) -> str:
    return f"aval={aval!r}"


def _apply(direction: str, detail: str, explicit: bool) -> None:
    level = transfer_guard_level(direction.replace("-", "_"))
    if level == "allow" or (explicit and not level.endswith("_explicit")):
        return
    message = f"{direction} transfer: {detail}"
    if level.startswith("log"):
        _logger.warning(message)
        return
    raise errors.JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {message}")


def host_to_device(aval: Any, dst_sharding: Any, explicit: bool = False) -> None:
    """Host data of `aval` becomes an array laid out as `dst_sharding`."""
    _apply("host-to-device", f"{_describe(aval)}, dst_sharding={dst_sharding!r}", explicit)


def device_to_device(aval: Any, src_sharding: Any, dst_sharding: Any,
                     explicit: bool = False) -> None:
    """An array of `aval` moves from `src_sharding`'s devices to `dst_sharding`'s (an
    explicit move names no source, as JAX's message)."""
    source = "" if explicit else f", sharding={src_sharding!r}"
    _apply("device-to-device", f"{_describe(aval)}{source}, dst_sharding={dst_sharding!r}",
           explicit)


def guarded(direction: str) -> bool:
    """Whether transfers in `direction` need checking at all (the fast path skips them)."""
    return transfer_guard_level(direction) != "allow"
