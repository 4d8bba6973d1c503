"""jax.numpy: lax_numpy."""
from __future__ import annotations

__all__: list[str] = []
