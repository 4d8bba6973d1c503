"""JAX's example libraries (`jax.example_libraries`): `optimizers` and `stax`."""
