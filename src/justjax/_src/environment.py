"""What the process sees of its environment: the deprecated `host_*` names of the process
functions, `process_indices`, `live_arrays` and `print_environment_info` (JAX's
`jax._src.xla_bridge` and `jax._src.environment_info`)."""
from __future__ import annotations

import gc
import platform
import sys
import warnings
from typing import Any

import numpy as np

from justjax._src import api
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime.array import Array


def _renamed(old: str, new: str) -> None:
    # JAX 0.10.2 words its warnings this way (naming the new function twice for
    # host_id/host_count, "process_indexs" for host_ids): kept as it prints them.
    warnings.warn(f"jax.{old} has been renamed to jax.{new}. This alias will eventually be "
                  "removed; please update your code.", UserWarning, stacklevel=3)


def process_indices(backend: Any = None) -> list[int]:
    """The indices of all processes (`jax.process_indices`): `[0, ..., process_count() - 1]`.

    Args:
      backend: a platform name ("cpu") or None.
    Returns:
      The list of process indices.
    """
    devices_lib.devices(backend)
    return list(range(api.process_count()))


def host_id(backend: Any = None) -> int:
    """Deprecated alias of `jax.process_index` (warns as JAX does)."""
    _renamed("process_index", "process_index")
    devices_lib.devices(backend)
    return api.process_index()


def host_count(backend: Any = None) -> int:
    """Deprecated alias of `jax.process_count` (warns as JAX does)."""
    _renamed("process_count", "process_count")
    devices_lib.devices(backend)
    return api.process_count()


def host_ids(backend: Any = None) -> list[int]:
    """Deprecated alias of `jax.process_indices` (warns as JAX does)."""
    _renamed("process_indexs", "process_indices")
    return process_indices(backend)


def live_arrays(platform: str | None = None) -> list[Array]:
    """Every Array alive in this process and not deleted, the newest first
    (`jax.live_arrays`).

    Args:
      platform: a platform name ("cpu") or None.
    Returns:
      A list of Arrays.
    Raises:
      RuntimeError: an unknown platform, with JAX's message.
    """
    if platform not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend: '{platform}' requested, but no platforms that "
                           f"are instances of {platform} are present. Platforms present "
                           "are: cpu")
    # Arrays are tracked by the garbage collector (a class with slots holding references),
    # so the debugging walk costs nothing on the array creation path.
    found = [obj for obj in gc.get_objects() if type(obj) is Array and not obj.is_deleted()]
    return found[::-1]


def print_environment_info(return_string: bool = False) -> str | None:
    """The versions, devices and platform in the form JAX prints them
    (`jax.print_environment_info`).

    Args:
      return_string: return the text instead of printing it.
    Returns:
      The text when `return_string`, else None.
    """
    from justjax._src.jax_alias import JAX_VERSION, JAXLIB_VERSION
    devices = devices_lib.devices()
    # The stray quote after the device count is in JAX 0.10.2's text.
    text = (f"jax:    {JAX_VERSION}\n"
            f"jaxlib: {JAXLIB_VERSION}\n"
            f"numpy:  {np.__version__}\n"
            f"python: {sys.version.replace(chr(10), ' ')}\n"
            f"device info: cpu-{len(devices)}, {len(devices)} local devices\"\n"
            f"process_count: {api.process_count()}\n"
            f"platform: {platform.uname()}")
    if return_string:
        return text
    print(text)
    return None
