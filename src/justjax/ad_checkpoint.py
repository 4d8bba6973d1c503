"""Checkpointing helpers (JAX's `jax.ad_checkpoint`): name values for checkpoint policies.

`checkpoint` and `remat` themselves live at the top level (`justjax.checkpoint`), as in JAX.
"""
from justjax._src.transformations.checkpoint import (
    Recompute as Recompute,
    Saveable as Saveable,
    checkpoint_name as checkpoint_name,
    checkpoint_policies as checkpoint_policies,
)
from justjax._src.transformations.saved_residuals import (
    print_saved_residuals as print_saved_residuals,
    saved_residuals as saved_residuals,
)
