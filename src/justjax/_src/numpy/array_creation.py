"""jax.numpy: array_creation."""
from __future__ import annotations

__all__: list[str] = []
