"""`jax.scipy.sparse`'s implementation: iterative solvers (`linalg`)."""
