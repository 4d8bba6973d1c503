"""`justjax.random`: JAX's PRNG (threefry2x32), keys and distributions. Re-exports only."""
from justjax._src.random.keys import (
    PRNGKey as PRNGKey,
    bits as bits,
    clone as clone,
    fold_in as fold_in,
    key as key,
    key_data as key_data,
    key_dtype as key_dtype,
    key_impl as key_impl,
    split as split,
    wrap_key_data as wrap_key_data,
)
from justjax._src.random.distributions import (
    normal as normal,
    uniform as uniform,
)
