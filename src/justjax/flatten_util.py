"""`jax.flatten_util`: ravel a pytree of arrays into one vector (`ravel_pytree`)."""
from justjax._src.pytrees.flatten_util import ravel_pytree as ravel_pytree
