"""`jax.export`: exporting jitted functions as StableHLO, serializing and calling them."""
