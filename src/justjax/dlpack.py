"""`justjax.dlpack`: exchanging arrays with other libraries through DLPack (`jax.dlpack`)."""
from justjax._src.runtime.dlpack import from_dlpack as from_dlpack
from justjax._src.runtime.dlpack import is_supported_dtype as is_supported_dtype
