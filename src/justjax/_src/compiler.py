"""The one place a backend compiles an optimized module, as JAX's `jax._src.compiler`.

`stages` calls `backend_compile_and_load` through this module's attribute, so a library that
wraps it (chex's `restrict_backends` checks `backend.platform` there) sees every compile.
"""
from __future__ import annotations

from typing import Any, Sequence

from justjax._src.hlo import ir


def backend_compile_and_load(backend: Any, module: ir.Module, executable_devices: Any = None,
                             options: Any = None, host_callbacks: Sequence[Any] = ()) -> Any:
    """Compiles `module` with `backend` and returns its executable."""
    return backend.compile(module)
