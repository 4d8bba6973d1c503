"""`jax.interpreters`: the transformations' rule tables, for libraries that define their own
primitives (`ad`, `batching`, `mlir`, `partial_eval`)."""
