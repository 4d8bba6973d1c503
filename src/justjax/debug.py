"""Printing, callbacks and breakpoints from inside transformed functions (`jax.debug`)."""
from justjax._src.debug.debugger import breakpoint as breakpoint
from justjax._src.debug.callbacks import debug_callback as callback
from justjax._src.debug.callbacks import debug_print as print

__all__ = ["breakpoint", "callback", "print"]
