"""`jax.scipy.cluster`: clustering (`vq`)."""
