"""`jax.image`: image resampling (re-exports only)."""
from justjax._src.image.resize import (
    ResizeMethod as ResizeMethod,
    resize as resize,
    scale_and_translate as scale_and_translate,
)
