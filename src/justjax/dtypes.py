"""`jax.dtypes`: the dtype helpers."""
from justjax._src.core.dtypes import (
    TypePromotionError as TypePromotionError,
    bfloat16_scalar_type as bfloat16,
    extended as extended,
    prng_key as prng_key,
    canonicalize_dtype as canonicalize_dtype,
    finfo as finfo,
    float0 as float0,
    iinfo as iinfo,
    issubdtype as issubdtype,
    promote_types as promote_types,
)
from justjax._src.numpy.scalar_types import dtypes_result_type as result_type
