"""Backends: `compile(module) -> Executable`, and an executable runs on NumPy buffers.

The interface (`interface.Backend`, `interface.Executable`, with their optional hooks) is
small and fixed, as tinygrad's; backends are found through a registry (`registry`) that
`jax_platforms` / `JAX_PLATFORMS` reads. Two are built in: `llvm` (native code, the default:
`cpu` selects it) and `reference` (a NumPy interpreter of the IR, the oracle of the others).
A new backend is one `register_backend` call:

    register_backend("mine", lambda: MyBackend(), platform="cpu")
    # then JAX_PLATFORMS=mine, or jax.config.update("jax_platforms", "mine")
"""
from __future__ import annotations

from justjax._src.backends.interface import Backend as Backend
from justjax._src.backends.interface import Executable as Executable
from justjax._src.backends.registry import effects_barrier as effects_barrier
from justjax._src.backends.registry import get_backend as get_backend
from justjax._src.backends.registry import register_backend as register_backend
from justjax._src.backends.registry import registered_backends as registered_backends


def _llvm() -> Backend:
    from justjax._src.backends import llvm
    return llvm.BACKEND


def _reference() -> Backend:
    from justjax._src.backends import reference
    return reference.BACKEND


# The first backend registered for a platform is the one its name selects.
register_backend("llvm", _llvm, platform="cpu")
register_backend("reference", _reference, platform="cpu")
