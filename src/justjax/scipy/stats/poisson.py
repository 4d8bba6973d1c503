"""`justjax.scipy.stats.poisson`: the Poisson distribution. Re-exports only."""
from justjax._src.scipy.stats.poisson import (
    cdf as cdf,
    entropy as entropy,
    logpmf as logpmf,
    pmf as pmf,
)
