"""jax.debug: host callbacks and printing from compiled code, the interactive debugger."""
