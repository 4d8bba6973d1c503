"""`justjax.scipy.stats.gennorm`: the generalized normal distribution. Re-exports only."""
from justjax._src.scipy.stats.gennorm import (
    cdf as cdf,
    logpdf as logpdf,
    pdf as pdf,
)
