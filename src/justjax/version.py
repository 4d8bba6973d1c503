"""The JAX release justjax reproduces (`jax.version`): its version string and tuple.

`justjax.__version__` is justjax's own version; these are the JAX release's, which clients
compare against (`jax.version.__version_info__ > (0, 4, 25)`).
"""
from justjax._src.jax_alias import JAX_VERSION as __version__
from justjax._src.jax_alias import JAX_VERSION as _version
from justjax._src.jax_alias import JAX_VERSION as _release_version
from justjax._src.jax_alias import JAX_VERSION_INFO as __version_info__
from justjax._src.jax_alias import MINIMUM_JAXLIB_VERSION as _minimum_jaxlib_version
from justjax._src.jax_alias import MINIMUM_JAXLIB_VERSION_INFO as _minimum_jaxlib_version_info
