"""`jax.example_libraries`: the optimizers and stax example libraries."""
