"""JAX's example libraries (`jax.example_libraries`), written against the public API."""
