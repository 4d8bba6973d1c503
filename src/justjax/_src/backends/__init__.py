"""Backends: `compile(module) -> Executable`, and an executable runs on NumPy buffers.

The interface is small and fixed, as tinygrad's: a backend takes a StableHLO `ir.Module`
and returns an object whose `execute(args)` maps input buffers to output buffers.
`reference` (a NumPy interpreter of the IR) is the oracle; the native LLVM backend comes
later and becomes the default.
"""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from justjax._src.config import check_platforms
from justjax._src.hlo import ir


class Executable(Protocol):
    def execute(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Runs the module's `main` on `args` (one buffer per argument)."""


class Backend(Protocol):
    name: str

    def compile(self, module: ir.Module) -> Executable:
        """Compiles `module` (whose entry point is `main`)."""


def get_backend(name: str | None = None) -> Backend:
    """The backend called `name` (default: the default backend)."""
    from justjax._src.backends import reference
    check_platforms()
    if name in (None, "reference", "cpu"):
        return reference.BACKEND
    raise RuntimeError(f"Unknown backend {name!r}")
