"""`jax.extend.source_info_util`: where user code is (re-exports only)."""
from justjax._src.source_info_util import register_exclusion as register_exclusion
