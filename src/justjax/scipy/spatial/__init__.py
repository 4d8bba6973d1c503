"""`justjax.scipy.spatial`: as JAX's, its `transform` module is loaded by importing it."""
