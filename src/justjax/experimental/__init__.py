"""Experimental APIs (`jax.experimental`)."""
from justjax._src.config import disable_x64 as disable_x64
from justjax._src.config import enable_x64 as enable_x64
from justjax._src.debug.callbacks import io_callback as io_callback
from justjax._src.state import MutableArray as MutableArray
