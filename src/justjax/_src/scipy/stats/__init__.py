"""`jax.scipy.stats`: probability distributions, one module per distribution."""
