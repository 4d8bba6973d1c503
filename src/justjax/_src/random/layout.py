"""`out_sharding=` of the samplers: how a sample is laid out over a mesh.

The bits of JAX's partitionable threefry do not depend on where they are computed, so a
sample is drawn whole and then laid out (a traced one's type takes the sharding's split
over Explicit mesh axes), which gives JAX's values and layout.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from justjax._src.numpy import util

__all__ = ["lays_out"]


def lays_out(sampler: Callable) -> Callable:
    """`sampler` whose `out_sharding` keyword lays its result out (`jnp.zeros`'s rule)."""
    @functools.wraps(sampler)
    def sample(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        out = sampler(*args, **kwargs)
        return util.place(out, None, out_sharding, f"jax.random.{sampler.__name__}")
    return sample
