"""`justjax.scipy.stats.binom`: the binomial distribution. Re-exports only."""
from justjax._src.scipy.stats.binom import (
    logpmf as logpmf,
    pmf as pmf,
)
