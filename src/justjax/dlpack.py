"""`jax.dlpack`: arrays from other libraries through DLPack (re-exports only)."""
from justjax._src.dlpack import from_dlpack as from_dlpack
from justjax._src.dlpack import is_supported_dtype as is_supported_dtype
