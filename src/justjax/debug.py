"""Printing, callbacks and breakpoints from inside transformed functions (`jax.debug`)."""
from justjax._src.debug.debugger import breakpoint as breakpoint
from justjax._src.debug.callbacks import debug_callback as callback
from justjax._src.debug.callbacks import debug_print as print
from justjax._src.debug.visualize import visualize_array_sharding as visualize_array_sharding
from justjax._src.debug.visualize import visualize_sharding as visualize_sharding

__all__ = ["breakpoint", "callback", "print", "visualize_array_sharding", "visualize_sharding"]
