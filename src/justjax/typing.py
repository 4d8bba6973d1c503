"""Type annotations for JAX values (`jax.typing`)."""
from justjax._src.typing import ArrayLike as ArrayLike
from justjax._src.typing import DTypeLike as DTypeLike
