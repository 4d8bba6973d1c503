"""`justjax.scipy.fft`: the discrete cosine transform (`jax.scipy.fft`). Re-exports only."""
from justjax._src.scipy.fft import (
    dct as dct,
    dctn as dctn,
    idct as idct,
    idctn as idctn,
)
