"""Printing and callbacks from inside transformed functions (`jax.debug`)."""
from justjax._src.debugging import debug_callback as callback
from justjax._src.debugging import debug_print as print

__all__ = ["callback", "print"]
