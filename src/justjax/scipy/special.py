"""`justjax.scipy.special`. Re-exports only."""
# TEMPORARY star import while the module grows; replaced by explicit re-exports.
from justjax._src.scipy.special import *  # noqa: F401,F403
