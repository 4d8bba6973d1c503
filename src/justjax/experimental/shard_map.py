"""`jax.experimental.shard_map`: the old home of `jax.shard_map`, deprecated since JAX 0.8.0
(importing it warns, as JAX 0.10.2 does)."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from justjax._src.transformations.shard_map_api import shard_map as _shard_map

__all__ = ["shard_map"]

warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead.",
              DeprecationWarning, stacklevel=2)


def shard_map(f: Callable, mesh: Any, in_specs: Any, out_specs: Any,
              check_rep: bool = True) -> Callable:
    """`jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
    check_vma=check_rep)`."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_rep)
