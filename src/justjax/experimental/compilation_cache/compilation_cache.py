"""The persistent compilation cache's public functions
(`jax.experimental.compilation_cache.compilation_cache`)."""
from __future__ import annotations

import os

from justjax._src.config import config

__all__ = ["set_cache_dir", "reset_cache"]


def set_cache_dir(path: str | os.PathLike[str] | None) -> None:
    """Sets the folder of the persistent compilation cache (`jax_compilation_cache_dir`):
    the native code of jitted programs is saved there, and later processes load it instead
    of compiling again. As in JAX, the folder is read at the first compile that finds it
    set; call `reset_cache()` to change it after that.

    Args:
      path: the folder (created if missing), or None to leave the cache off.

    The cache is trusted: a process loads and runs the code it finds there, so never share
    the folder with users you do not trust.
    """
    config.update("jax_compilation_cache_dir", None if path is None else os.fspath(path))


def reset_cache() -> None:
    """Returns the cache to its pristine, uninitialized state: the next compile reads
    `jax_compilation_cache_dir` again. Entries already on disk are kept."""
    from justjax._src.backends.llvm.runtime import object_cache
    object_cache.reset_cache()
