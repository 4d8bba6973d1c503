"""`jax.example_libraries`: JAX's example optimizers and layers (re-exports)."""
from justjax.example_libraries import optimizers as optimizers
from justjax.example_libraries import stax as stax
