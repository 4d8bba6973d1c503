"""`jax.extend`: justjax's internals as JAX's extension API offers them to libraries
(re-exports only)."""
from justjax.extend import core as core
from justjax.extend import linear_util as linear_util
from justjax.extend import source_info_util as source_info_util
