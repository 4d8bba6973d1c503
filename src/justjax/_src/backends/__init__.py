"""Backends: `compile(module) -> Executable`, and an executable runs on NumPy buffers.

The interface is small and fixed, as tinygrad's: a backend takes a StableHLO `ir.Module`
and returns an object whose `execute(args)` maps input buffers to output buffers.
`reference` (a NumPy interpreter of the IR) is the oracle; `llvm` (native code) is the
default.
"""
from __future__ import annotations

from typing import Collection, Protocol, Sequence

import numpy as np

from justjax._src.config import check_platforms
from justjax._src.hlo import ir


class Executable(Protocol):
    def execute(self, args: Sequence[np.ndarray],
                donated: Collection[int] = ()) -> list[np.ndarray]:
        """Runs the module's `main` on `args` (one buffer per argument). `donated`: the
        arguments whose buffers the caller gives up; a donated argument among them
        (`tf.aliasing_output`) returns its output in that buffer, written in place. No
        other argument's buffer is ever written."""


class Backend(Protocol):
    """A backend. Optional hooks: `prepare_replica_thread()` (readies a device thread for
    one replica of an SPMD program) and `effects_barrier()` (waits for every program it
    started asynchronously)."""

    name: str
    platform: str  # the devices' platform its programs run on, as JAX names it ("cpu")

    def compile(self, module: ir.Module) -> Executable:
        """Compiles `module` (whose entry point is `main`)."""


# The backends handed out so far, by name.
_used: dict[str, Backend] = {}


def get_backend(name: str | None = None) -> Backend:
    """The backend called `name`: `llvm` (native, the default; also `cpu`) or `reference`
    (the NumPy interpreter). Without a name, the first of `jax_platforms` decides
    (`JAX_PLATFORMS=reference` selects the reference backend)."""
    if name is None:
        name = check_platforms()
    backend = _used.get(name)
    if backend is not None:
        return backend
    if name == "reference":
        from justjax._src.backends import reference
        backend = reference.BACKEND
    elif name in ("llvm", "cpu"):
        from justjax._src.backends import llvm
        backend = llvm.BACKEND
    else:
        raise RuntimeError(f"Unknown backend {name!r}")
    _used[name] = backend
    return backend


def effects_barrier() -> None:
    """Waits until every program started so far, on every backend used, has finished, so
    its effects (and results) are complete."""
    for backend in list(_used.values()):
        wait = getattr(backend, "effects_barrier", None)
        if wait is not None:
            wait()
