"""`justjax.nn`: neural-network functions. Re-exports only."""
# TEMPORARY star import while the module grows; replaced by explicit re-exports.
from justjax._src.nn.functions import *  # noqa: F401,F403
