"""`jax.random`: keys and distributions (issue #7)."""
from justjax._src.lax import prng as _prng
from justjax._src.numpy import array_methods as _array_methods

# Key arrays have the array methods (indexing, reshape, ...) that apply to any dtype.
_array_methods.install(_prng.PRNGKeyArray)
