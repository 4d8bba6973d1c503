"""The user-facing transformations over the interpreters: grad/vjp, custom derivatives and batching, checkpoint, pmap, shard_map, checkify."""
