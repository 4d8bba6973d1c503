"""`justjax.scipy.stats.nbinom`: the negative binomial distribution. Re-exports only."""
from justjax._src.scipy.stats.nbinom import (
    logpmf as logpmf,
    pmf as pmf,
)
