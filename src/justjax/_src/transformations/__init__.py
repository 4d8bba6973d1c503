"""The user-facing transformations over the interpreters: grad/vjp, custom derivatives and
batching, checkpoint, saved residuals, pmap, shard_map, checkify.
"""
