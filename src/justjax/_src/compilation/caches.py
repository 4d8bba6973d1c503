"""The registry of justjax's in-memory tracing and compilation caches, for `jax.clear_caches`.

Each cache registers how to empty itself where it is made; `clear_all_caches` empties them
all: traced jaxprs of jitted functions, transformed jaxprs, lowered and compiled programs
and eager operations' executables. The persistent (on-disk) compilation cache is not
touched, as in JAX.
"""
from __future__ import annotations

from typing import Callable

_clearers: list[Callable[[], None]] = []


def register_cache(clear: Callable[[], None]) -> Callable[[], None]:
    """Registers `clear`, which empties one cache; returns it."""
    _clearers.append(clear)
    return clear


def clear_all_caches() -> None:
    """Empties every registered cache."""
    for clear in list(_clearers):
        clear()


def cached_function(fun: Callable) -> Callable:
    """Registers a `functools.lru_cache`-decorated function's `cache_clear`; returns it."""
    register_cache(fun.cache_clear)
    return fun
