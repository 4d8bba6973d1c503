"""Pytrees: flattening, tree definitions, their errors, and ravel_pytree."""
