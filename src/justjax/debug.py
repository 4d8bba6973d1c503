"""Printing, callbacks and breakpoints from inside transformed functions (`jax.debug`)."""
from justjax._src.debugger import breakpoint as breakpoint
from justjax._src.debugging import debug_callback as callback
from justjax._src.debugging import debug_print as print

__all__ = ["breakpoint", "callback", "print"]
