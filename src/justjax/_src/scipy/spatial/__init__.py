"""`jax.scipy.spatial`: rotations (`transform`)."""
