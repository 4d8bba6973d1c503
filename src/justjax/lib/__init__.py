"""`jax.lib`: the version of the jaxlib release justjax stands in for (JAX 0.10.2's jaxlib).

JAX 0.10.2's `jax.lib` holds only `__version__` (no `xla_extension`).
"""
from justjax._src.jax_alias import JAXLIB_VERSION as __version__
