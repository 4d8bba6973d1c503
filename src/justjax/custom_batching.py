"""`jax.custom_batching`: functions with their own vmap rules (re-exports only)."""
from justjax._src.transformations.custom_batching import custom_vmap as custom_vmap
from justjax._src.transformations.custom_batching import sequential_vmap as sequential_vmap
