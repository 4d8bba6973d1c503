"""The registry of justjax's in-memory tracing and compilation caches, for `jax.clear_caches`.

Each cache registers how to empty itself where it is made; `clear_all_caches` empties them
all: traced jaxprs of jitted functions, transformed jaxprs, lowered and compiled programs
and eager operations' executables. The persistent (on-disk) compilation cache is not
touched, as in JAX.
"""
from __future__ import annotations

import ctypes
import gc
from typing import Callable

_clearers: list[Callable[[], None]] = []


def register_cache(clear: Callable[[], None]) -> Callable[[], None]:
    """Registers `clear`, which empties one cache; returns it."""
    _clearers.append(clear)
    return clear


def clear_all_caches() -> None:
    """Empties every registered cache, collects what referenced only them (compiled programs
    and their code are cycles of references), and gives the C allocator's free memory back to
    the system where it can (glibc's `malloc_trim`; Python's own small-object arenas it keeps
    while any object lives in them)."""
    for clear in list(_clearers):
        clear()
    gc.collect()
    _trim_malloc()


def _trim_malloc() -> None:
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return  # not glibc
    trim(0)


def cached_function(fun: Callable) -> Callable:
    """Registers a `functools.lru_cache`-decorated function's `cache_clear`; returns it."""
    register_cache(fun.cache_clear)
    return fun
