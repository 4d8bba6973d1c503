"""`jax.api_util`: helpers for writing transformations (re-exports only)."""
from justjax._src.api_util import argnums_partial as argnums_partial
from justjax._src.api_util import debug_info as debug_info
from justjax._src.api_util import donation_vector as donation_vector
from justjax._src.api_util import flatten_axes as flatten_axes
from justjax._src.api_util import flatten_fun as flatten_fun
from justjax._src.api_util import flatten_fun_nokwargs as flatten_fun_nokwargs
from justjax._src.api_util import rebase_donate_argnums as rebase_donate_argnums
from justjax._src.api_util import safe_map as safe_map
from justjax._src.api_util import shaped_abstractify as shaped_abstractify
