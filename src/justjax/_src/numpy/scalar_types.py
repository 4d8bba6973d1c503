"""jax.numpy: scalar_types."""
from __future__ import annotations

__all__: list[str] = []
