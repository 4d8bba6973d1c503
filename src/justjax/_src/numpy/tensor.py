"""jax.numpy: tensor."""
from __future__ import annotations

__all__: list[str] = []
