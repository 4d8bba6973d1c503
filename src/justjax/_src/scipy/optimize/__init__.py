"""`jax.scipy.optimize`: unconstrained minimization (BFGS, and JAX's experimental L-BFGS)."""
